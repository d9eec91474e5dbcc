"""The engine: everything that turns a config into diagnostics, a plan and estimates, with no user interface.

Bottom to top: diagnostics and codes; the YAML loader and editor, migrations, coercion and field types; the
parameter models (params/) and their compiled validators; profiles/; the cross-field rules (rules/); key sorting
and the env section; the checker (check); the batch fix search (fixes) and the hardware estimate (hardware/);
validate, which combines the checker with the fix search. The surfaces (cli, api/, commands/, render/,
schema_export/, lsp/) are built on it; nothing here imports them (pyproject.toml's import contracts).
"""
