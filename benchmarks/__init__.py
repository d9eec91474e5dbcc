"""Side-by-side benchmarks of grpo-config against TRL 1.16 and against the floor. Run: python benchmarks/run.py"""
