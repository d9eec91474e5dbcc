"""Dialects: configs written in another form than a flat `trl grpo` YAML file, read into the engine's terms.

A dialect reads its own kind of file (never importing or running it) into the mapping and key positions the
engine judges, so every rule, code and fix is the engine's own: one engine behind every kind of file.
"""
