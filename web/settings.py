"""Service settings: from the environment (GRPO_WEB_*), overridable by `grpo serve` options and by tests.

Routes read settings through the `current_settings` dependency, never from a module global, so one process can
host several apps with different settings (the tests do) and later features (runs) add fields here.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache

from fastapi import Request
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from grpo_schema.engine.loader import MAX_BYTES
from grpo_web.runs.settings import RunsSettings


class Settings(RunsSettings, BaseSettings):
    """The service's settings; the runs fields (GRPO_WEB_RUNS*, GRPO_WEB_TOKEN) come from RunsSettings."""

    model_config = SettingsConfigDict(env_prefix="GRPO_WEB_", extra="ignore")

    host: str = Field("127.0.0.1", description="address to bind; anything but loopback is reachable from outside")
    port: int = Field(8000, ge=0, le=65535, description="TCP port (0: any free port)")
    # The YAML loader refuses files over MAX_BYTES anyway; a larger body is refused before it is read.
    max_body_bytes: int = Field(MAX_BYTES, ge=1024, description="largest request body accepted (413 above)")
    body_timeout_s: float = Field(30.0, gt=0, description="seconds a request body may take to arrive (408 after)")
    max_world_size: int = Field(4096, ge=1, description="largest world_size query value accepted")
    cors_origins: list[str] = Field(default_factory=list, description="origins allowed by CORS (none by default)")
    schema_url: str | None = Field(
        None,
        description="schema URL for the modeline of exported YAML (default: "
        "the schema file for the active profiles by its name, a "
        "reference relative to the YAML file that resolves offline "
        "beside `grpo schema --write DIR`)",
    )
    log_level: str = Field("info", description="uvicorn log level")
    validate_cache_mib: float = Field(
        32.0,
        ge=0,
        description="MiB of POST /api/v1/validate answers kept for bodies "
        "sent again (0: every request is checked anew)",
    )
    trl_version: str | None = Field(
        None,
        description="the TRL release configs are judged against unless a request "
        "or the file's `# grpo: --trl-version` comment names one "
        "(default: the trl installed beside the service, else 1.16)",
    )

    @property
    def is_loopback(self) -> bool:
        return is_loopback_host(self.host)

    def judged_trl(self) -> tuple[str, str]:
        """(version, source) the service judges configs against when a request does not say."""
        return _judged_trl(self.trl_version)


@lru_cache(maxsize=8)
def _judged_trl(flag: str | None) -> tuple[str, str]:
    """`grpo serve --trl-version` is the service's standing default, as the editor's trlVersion is the editor's: a
    file's `# grpo: --trl-version` comment outranks it, a request's ?trl_version= outranks both
    (grpo_schema.engine.infile.judged_release)."""
    from grpo_schema.versions import default_version

    if flag is not None:
        return default_version(None, flag).version, "service settings"  # default_version refuses a bad one
    found = default_version(None)  # reads the installed trl's metadata once per process
    return found.version, found.source


def is_loopback_host(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@lru_cache
def get_settings() -> Settings:
    """The settings of this process's environment (read once)."""
    return Settings()


async def current_settings(request: Request) -> Settings:
    """Dependency: the settings of the app that serves this request."""
    return request.app.state.settings
