"""Processes and sharding: accelerate settings and launch flags, FSDP2 / DeepSpeed, full weights from shards,
precision. Above common.py only."""
