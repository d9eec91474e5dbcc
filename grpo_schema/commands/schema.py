"""`grpo schema`: the JSON Schema of the config, one release's, or every variant written into a folder."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grpo_schema.commands.options import (
    EXIT_INVALID,
    EXIT_OK,
    UsageError,
    add_profiles,
    add_trl_version,
    chosen_profiles,
    trl_options,
)


def add_arguments(schema: argparse.ArgumentParser) -> None:
    schema.add_argument("--output", "-o", metavar="PATH")
    schema.add_argument("--draft", choices=("2020-12", "07"), default="2020-12")
    add_profiles(schema, help="also accept and type a downstream project's script keys (e.g. open-r1)")
    schema.add_argument(
        "--lenient", action="store_true", help="accept unknown keys (the SchemaStore variant); the default refuses them"
    )
    schema.add_argument("--check", action="store_true", help="exit 1 if --output PATH is not up to date")
    schema.add_argument("--dialect", choices=("trl", "verl"), default="trl", help="verl: the schema of verl YAML")
    add_trl_version(schema)
    schema.add_argument(
        "--write",
        metavar="DIR",
        help="write every schema variant and a SchemaStore catalog into DIR (configs there whose "
        "modeline names grpo-config.schema.json then get completion offline)",
    )
    schema.add_argument(
        "--base-url",
        metavar="URL",
        help="with --write: the public folder the files will be served from, for the catalog",
    )


def cmd_schema(args: argparse.Namespace, rest: list[str]) -> int:
    from grpo_schema.commands.export import (
        modeline,
        release_schema_name,
        release_schema_text,
        schema_text,
        write_schemas,
    )

    if args.write:  # every variant and the catalog, the local copy that modelines point at
        base = args.base_url if args.base_url is None or args.base_url.endswith("/") else args.base_url + "/"
        for path in write_schemas(Path(args.write), base or ""):
            print(f"wrote {path}")
        return EXIT_OK
    if args.trl_version is not None:
        trl_options(args.trl_version, None)  # a release the tables cannot judge: usage error
        text = release_schema_text(args.trl_version)
        print(
            f"grpo schema: configs for TRL {args.trl_version} name it in their modeline (relative to a copy of "
            f"schemas/): {modeline(release_schema_name(args.trl_version))}",
            file=sys.stderr,
        )
    elif args.dialect == "verl":  # verl's YAML, from the dialect's field table
        from grpo_schema.commands.verl import verl_schema_text

        text = verl_schema_text()
    else:
        text = schema_text(draft=args.draft, profiles=chosen_profiles(args.profile), lenient=args.lenient)
    if args.check:  # for pre-commit: is the schema written at --output up to date?
        if not args.output:
            raise UsageError("--check needs --output PATH (the schema file to compare)")
        current = Path(args.output).read_text(encoding="utf-8") if Path(args.output).is_file() else None
        if current != text:
            print(f"{args.output} is stale; regenerate it with the same command without --check", file=sys.stderr)
            return EXIT_INVALID
        return EXIT_OK
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return EXIT_OK
