"""Kept at this path for `python -m grpo_schema.export` and `from grpo_schema.export import with_modeline`:
the module is grpo_schema.commands.export."""

import sys

from grpo_schema.commands.export import (
    BASE_URL_VARIABLE,
    CATALOG_FILE,
    COMMITTED,
    DESCRIPTION,
    FILE_MATCH,
    MODELINE,
    MODELINE_PREFIX,
    SCHEMA_FILE,
    TITLE,
    base_url,
    catalog_text,
    committed_texts,
    export_schema,
    main,
    modeline,
    schema_filename,
    schema_text,
    schema_url,
    stale_files,
    with_modeline,
    write_schemas,
)

__all__ = [
    "BASE_URL_VARIABLE",
    "CATALOG_FILE",
    "COMMITTED",
    "DESCRIPTION",
    "FILE_MATCH",
    "MODELINE",
    "MODELINE_PREFIX",
    "SCHEMA_FILE",
    "TITLE",
    "base_url",
    "catalog_text",
    "committed_texts",
    "export_schema",
    "main",
    "modeline",
    "schema_filename",
    "schema_text",
    "schema_url",
    "stale_files",
    "with_modeline",
    "write_schemas",
]

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
