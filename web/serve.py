"""`grpo serve [--host 127.0.0.1] [--port 8000] [--workers N]`: the service and its web form, under uvicorn.

uvicorn uses httptools and uvloop when they are installed (the web extra installs them where they have wheels):
they halve the server's own CPU time per request against h11 and asyncio."""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from pathlib import Path
from typing import Sequence

from grpo_web.settings import Settings


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="grpo serve", description="Start the validation service and web form.")
    parser.add_argument("--host", help="address to bind (default 127.0.0.1, or GRPO_WEB_HOST)")
    parser.add_argument("--port", type=int, help="TCP port (default 8000, or GRPO_WEB_PORT)")
    parser.add_argument("--log-level", choices=("critical", "error", "warning", "info", "debug"))
    parser.add_argument(
        "--enable-runs",
        dest="runs",
        action="store_const",
        const=True,
        help="allow starting training runs over HTTP (or GRPO_WEB_RUNS=1); see docs/runs.md",
    )
    parser.add_argument("--runs-dir", help="where runs, their outputs and database live (or GRPO_WEB_RUNS_DIR)")
    parser.add_argument(
        "--trl-version",
        dest="trl_version",
        metavar="X.Y[.Z]",
        help="judge configs against this TRL release unless a request names one (or "
        "GRPO_WEB_TRL_VERSION; default: the trl installed beside the service, else 1.16)",
    )
    parser.add_argument(
        "--validate-cache-mib",
        dest="validate_cache_mib",
        type=float,
        metavar="MIB",
        help="MiB of validation answers kept for bodies sent again (default 32, or "
        "GRPO_WEB_VALIDATE_CACHE_MIB; 0 checks every request anew)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="server processes sharing the port (default 1); validation is CPU-bound, so one per core "
        "serves more requests; not with --enable-runs (runs need one supervising process)",
    )
    return parser


def settings_from(args: argparse.Namespace) -> Settings:
    """Environment first (GRPO_WEB_*), then the command line wins."""
    return Settings(**given_settings(args))


def given_settings(args: argparse.Namespace) -> dict:
    return {k: v for k, v in vars(args).items() if v is not None and k != "workers"}


def check_trl_version(settings: Settings) -> None:
    """A release the tables cannot judge stops the start (ValueError, exit 2), naming the supported range."""
    if settings.trl_version is not None:
        from grpo_schema.versions import VersionError, parse_version

        try:
            parse_version(settings.trl_version)
        except VersionError as exc:  # as every command says it
            raise ValueError(f"--trl-version: {exc}") from None


def exposure_warning(settings: Settings) -> str | None:
    if settings.is_loopback:
        return None
    return (
        f"warning: binding to {settings.host}: the service is reachable from other machines and speaks "
        "plain HTTP; put it behind TLS and access control, or bind 127.0.0.1"
    )


TOKEN_FILE = "token"  # in the runs directory: the generated token, kept for the next start


def kept_token(runs_dir: Path) -> tuple[str, str]:
    """The token in RUNS_DIR/token, else a new random one written there (mode 0600, only this user reads it), so a
    restart keeps the token every open tab and script holds. A file others could read is not trusted: a new token
    replaces it. Returns the token and what was done."""
    path = runs_dir.expanduser() / TOKEN_FILE
    note = f"new, kept in {path}"
    try:
        if (path.stat().st_mode & 0o077) != 0:
            note = f"new: the one in {path} could be read by other users"
        elif len(token := path.read_text(encoding="utf-8").strip()) >= 32:
            return token, f"kept in {path}"
    except (OSError, UnicodeDecodeError):
        pass
    token = secrets.token_urlsafe(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(token + "\n")
    return token, note


def with_runs_token(settings: Settings, url: str) -> Settings:
    """Runs are on: use GRPO_WEB_TOKEN, or the token kept in the runs directory (made at the first start), and print
    it with links that hand it to the form and the runs page in the URL fragment, which browsers never send to the
    server."""
    from pydantic import SecretStr

    if settings.token is None or not settings.token.get_secret_value():
        token, where = kept_token(settings.runs_dir)
        settings = settings.model_copy(update={"token": SecretStr(token)})
        print(
            f"runs are on; bearer token: {token} ({where}: a restart keeps it; delete the file for a new one)",
            file=sys.stderr,
        )
        print(f"form, with the token for Launch: {url}/#token={token}", file=sys.stderr)
        print(f"runs page: {url}/runs#token={token}", file=sys.stderr)
    else:
        print(f"runs are on (token from GRPO_WEB_TOKEN); runs page: {url}/runs", file=sys.stderr)
    if not settings.is_loopback:
        print(
            "warning: runs start processes for anyone holding the token, and plain HTTP shows it to the "
            "network; serve runs behind TLS",
            file=sys.stderr,
        )
    return settings


def announce_demo(settings: Settings) -> None:
    """Say where the service writes the Demo recipe's model and prompts (grpo_web.runs.demo_assets)."""
    from grpo_web.runs import demo_assets

    base = Path.cwd().resolve()  # where the runs manager reads relative paths from
    if settings.runs_prepare_demo and demo_assets.missing(base):
        print(
            f"runs are on: writing the Demo recipe's model and prompts in {base / demo_assets.DEMO_DIR} "
            "(grpo demo demo; GRPO_WEB_RUNS_PREPARE_DEMO=0 turns this off)",
            file=sys.stderr,
        )


def serve_command(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    try:
        settings = settings_from(args)
        check_workers(args.workers, settings)
        check_trl_version(settings)
    except ValueError as exc:
        print(f"grpo serve: error: {exc}", file=sys.stderr)
        return 2
    import uvicorn

    from grpo_web.app import create_app

    warning = exposure_warning(settings)
    if warning:
        print(warning, file=sys.stderr)
    shown = f"[{settings.host}]" if ":" in settings.host else settings.host
    print(f"grpo-config form and API on http://{shown}:{settings.port}/  (OpenAPI: /docs)", file=sys.stderr)
    if settings.runs:
        settings = with_runs_token(settings, f"http://{shown}:{settings.port}")
        announce_demo(settings)
    # A log follower (GET /api/v1/runs/{id}/logs?follow=true) must not hold a shutdown open for minutes.
    options = dict(host=settings.host, port=settings.port, log_level=settings.log_level, timeout_graceful_shutdown=5)
    if args.workers == 1:
        uvicorn.run(create_app(settings), **options)
    else:
        # Worker processes import the app by name and read their settings from the environment, where the command
        # line's values are put (runs are off here, so no token travels that way).
        os.environ.update({f"GRPO_WEB_{name.upper()}": str(value) for name, value in given_settings(args).items()})
        uvicorn.run("grpo_web.app:create_app", factory=True, workers=args.workers, **options)
    return 0


def check_workers(workers: int, settings: Settings) -> None:
    if workers < 1:
        raise ValueError("--workers must be at least 1")
    if workers > 1 and settings.runs:
        raise ValueError("--workers above 1 cannot serve runs: each process would supervise the same runs")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(serve_command(sys.argv[1:]))
