"""`grpo lsp`: the validator as a language server (stdio), for any editor with an LSP client.

The server is a thin layer over the one engine: diagnostics come from `grpo_schema.engine.validate.check_text` (as in
`grpo validate`), quick fixes from the diagnostics' own `Fix` objects applied by `grpo_schema.engine.yamledit`, "migrate
this file" from `grpo_schema.commands.migrate`, and the hover schedule from the check's `RunPlan`. Modules:
`settings` (world size, profiles and hardware from the file's `# grpo:` comment or the client), `analysis`
(text -> check result -> LSP diagnostics with ranges), `edits` (fixes -> minimal text edits), `info` (hover and
completion) and `server` (the pygls wiring: debounced, off-loop validation). Needs the `lsp` extra.
"""
