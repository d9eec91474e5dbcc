"""Sampling completions behind one small interface (backend.py; backends.py picks one per config): transformers
generate and its fast paths, continuous batching, vLLM colocate and a vLLM server."""
