"""`grpo serve [--host 127.0.0.1] [--port 8000]`: the service and its web form, under uvicorn."""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from web.settings import Settings


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="grpo serve", description="Start the validation service and web form.")
    parser.add_argument("--host", help="address to bind (default 127.0.0.1, or GRPO_WEB_HOST)")
    parser.add_argument("--port", type=int, help="TCP port (default 8000, or GRPO_WEB_PORT)")
    parser.add_argument("--log-level", choices=("critical", "error", "warning", "info", "debug"))
    return parser


def settings_from(args: argparse.Namespace) -> Settings:
    """Environment first (GRPO_WEB_*), then the command line wins."""
    given = {k: v for k, v in vars(args).items() if v is not None}
    return Settings(**given)


def exposure_warning(settings: Settings) -> str | None:
    if settings.is_loopback:
        return None
    return (f"warning: binding to {settings.host}: the service is reachable from other machines and speaks "
            "plain HTTP; put it behind TLS and access control, or bind 127.0.0.1")


def serve_command(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    try:
        settings = settings_from(args)
    except ValueError as exc:
        print(f"grpo serve: error: {exc}", file=sys.stderr)
        return 2
    import uvicorn

    from web.app import create_app

    warning = exposure_warning(settings)
    if warning:
        print(warning, file=sys.stderr)
    shown = f"[{settings.host}]" if ":" in settings.host else settings.host
    print(f"grpo-config form and API on http://{shown}:{settings.port}/  (OpenAPI: /docs)", file=sys.stderr)
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_level=settings.log_level)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(serve_command(sys.argv[1:]))
