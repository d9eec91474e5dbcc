"""What pip installs with the packages a requirements file lists: what trl itself requires (and the extras the line
asks for), and in turn what those and the file's own packages require. Listed without a version unless a pinned
package pins it exactly."""

from __future__ import annotations

import json

from .packages import Environment, Package, canonical

# vLLM serves through fastapi and uvicorn itself: what `trl vllm-serve` needs beside it is there with it.
PULLS_IN = {
    "accelerate": ("torch",),
    "peft": ("torch", "transformers", "accelerate"),
    "vllm": ("torch", "transformers", "fastapi", "pydantic", "requests", "uvicorn"),
    "deepspeed": ("torch",),
    "bitsandbytes": ("torch",),
    "liger-kernel": ("torch",),
}


def implied(env: Environment) -> None:
    """What pip installs with a pinned trl (its install_requires, and the extras the line asks for), and in turn
    with those and the file's own packages (PULLS_IN): listed without a version, so they count as present but are
    never judged by a version the file does not pin."""
    _implied_by_trl(env)
    pending = [name for name in env.packages if name in PULLS_IN]
    while pending:
        name = pending.pop()
        by = env.packages[name]
        for needed in PULLS_IN[name]:
            if needed not in env.packages:
                said = f"{name} {by.version}" if by.version else f"{name} ({by.extra.get('implied_by', 'listed')})"
                env.packages[needed] = Package(needed, None, extra={"implied_by": said})
                pending += [needed] if needed in PULLS_IN else []


def _implied_by_trl(env: Environment) -> None:
    trl = env.get("trl")
    if trl is None or trl.version is None:
        return
    from packaging.requirements import InvalidRequirement, Requirement

    from grpo_schema.versions.tables import RELEASES_DIR, parse_release

    with open(RELEASES_DIR / "requirements.json", encoding="utf-8") as fh:
        table = json.load(fh)["releases"]
    try:
        minor = parse_release(trl.version)[:2]
    except ValueError:
        return
    release = next((v for v in table if parse_release(v)[:2] == minor), None)
    if release is None:
        return
    data = table[release]
    lines = list(data["requires"]) + [r for extra in trl.extra.get("extras", ()) for r in data["extras"].get(extra, [])]
    for text in lines:
        try:
            name = canonical(Requirement(text).name)
        except InvalidRequirement:
            continue
        if name not in env.packages:
            env.packages[name] = Package(name, None, extra={"implied_by": f"trl {trl.version}"})
