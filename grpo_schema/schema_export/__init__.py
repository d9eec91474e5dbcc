"""The pieces of the JSON Schema export (grpo_schema.commands.export): each step post-processes pydantic's output.

properties  pydantic's property schemas -> standard keywords, defaults and examples
docs        per-value docs (enumDescriptions) and the markdownDescription shown on hover and completion
legacy      deprecated, renamed and removed keys as properties that editors flag
conditionals  the cross-field errors JSON Schema can express (if/then, not/required)
layout      groups, order and "advanced" hints for the web form (kept out of the field definitions)
drafts      the draft-07 variant

Imported only by grpo_schema.commands.export, never by `import grpo_schema`.
"""
