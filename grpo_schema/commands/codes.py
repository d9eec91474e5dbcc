"""`grpo codes [CODE]`: the diagnostic codes, or one code explained."""

from __future__ import annotations

import argparse

from grpo_schema.commands.options import EXIT_OK, UsageError


def add_arguments(codes: argparse.ArgumentParser) -> None:
    codes.add_argument("code", nargs="?")


def cmd_codes(args: argparse.Namespace, rest: list[str]) -> int:
    from grpo_schema.catalogue import all_codes
    from grpo_schema.engine.rules import describe_code

    catalogue = all_codes()
    if args.code:
        code = args.code.upper() if args.code.upper().startswith("GRPO-") else "GRPO-" + args.code.upper()
        if code not in catalogue:
            raise UsageError(f"unknown code {args.code}; `grpo codes` lists them all")
        print(describe_code(code))
        return EXIT_OK
    for code, info in catalogue.items():
        print(f"{code}  {info.severity:<7}  {info.title}")
    return EXIT_OK
