"""The Pydantic API: GRPORunConfig (config), its engine hook (modelcheck), YAML out and TRL's own objects.

Loaded on first use of `grpo_schema.GRPORunConfig`, never by `grpo validate`.
"""
