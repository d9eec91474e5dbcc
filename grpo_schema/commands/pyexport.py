"""`grpo export FILE.py|FILE.ipynb [--call N] [-o OUT.yaml]`: a GRPOConfig(...) call as a flat YAML config.

The YAML carries the release (and Unsloth's profile) the call was judged with in its `# grpo:` comment, so
`grpo validate OUT.yaml` gives the same findings; values known only at run time are listed in comments to fill in.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grpo_schema.commands.options import (
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    add_trl_version,
    add_world_size,
    read_config,
    trl_options,
)
from grpo_schema.commands.pycalls import add_call, chosen_calls, listed


def build_parser() -> argparse.ArgumentParser:

    parser = argparse.ArgumentParser(
        prog="grpo export",
        description="Write a GRPOConfig(...) call of a Python script "
        "or notebook as the flat YAML config `trl grpo` and `grpo validate` read.",
    )
    parser.add_argument("path", metavar="FILE", help="a .py script or an .ipynb notebook")
    add_call(parser, help="which GRPOConfig(...) call, counting from 1 (needed when the file has several)")
    parser.add_argument("--output", "-o", metavar="PATH", help="write the YAML there (default: standard output)")
    add_world_size(parser, help="the world size to record in the YAML")
    add_trl_version(parser)
    return parser


def export_command(argv: list[str]) -> int:
    from grpo_schema.dialects.python import check_python
    from grpo_schema.dialects.python.export import export_yaml

    args = build_parser().parse_args(argv)
    try:
        if not args.path.endswith((".py", ".ipynb")):
            raise UsageError(f"{args.path}: give a .py script or an .ipynb notebook (a YAML config needs no export)")
        data = read_config(args.path)
        options = trl_options(args.trl_version, args.path)
        if args.world_size:
            options.update(world_size=args.world_size, world_size_source="command line")
        checked = check_python(data, args.path, **options)
        count = len(checked.calls)
        if count == 0:
            problems = "; ".join(d.message for r in checked.results for d in r.diagnostics) or "nothing found"
            raise UsageError(f"{args.path}: no GRPOConfig(...) call to export ({problems})")
        if args.call is None and count > 1:
            raise UsageError(
                f"{args.path} has {count} GRPOConfig(...) calls ({listed(checked)}); choose one with --call N"
            )
        (index,) = chosen_calls(checked, args.call or 1, args.path)
    except UsageError as exc:
        print(f"grpo export: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    text = export_yaml(checked, index)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return EXIT_OK
