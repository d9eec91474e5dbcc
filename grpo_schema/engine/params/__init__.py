"""Fields of the `trl grpo` surface, one module per parameter area.

Each module holds one field-only class (no validators; cross-field rules live in `grpo_schema.engine.rules`). The classes
are composed into the flat `grpo_schema.api.config.GRPORunConfig`. A class's `area` and `title` name the section the
JSON Schema export and the web form put its fields in.
"""
