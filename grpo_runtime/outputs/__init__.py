"""What a run writes: checkpoints and resume, the best checkpoint, metrics and their sinks, the Hub, run_info."""
