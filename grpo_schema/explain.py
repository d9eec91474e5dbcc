"""Kept at this path for `grpo_schema.explain.explain_result`: the module is grpo_schema.commands.explain."""

from grpo_schema.commands.explain import build_parser, declared_prompt_length, explain_command, explain_result, notes

__all__ = ["build_parser", "declared_prompt_length", "explain_command", "explain_result", "notes"]
