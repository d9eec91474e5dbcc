"""verl's dialect: its launch scripts and YAML read with positions, judged by verl's own checks and the ones verl
runs only on the cluster, explained in verl's units and converted to and from TRL's."""


def declare_codes() -> None:
    """Declare every GRPO-F code (the reading codes and the rules'), for `grpo codes` and the code catalogues."""
    from grpo_schema.dialects.verl import codes  # noqa: F401
    from grpo_schema.dialects.verl.rules import load_verl_rules

    load_verl_rules()
