"""Checking a config before a run starts, for every way of starting one (`grpo train`, `grpo launch`, Slurm):
validate at the run's world size, print the diagnostics as `grpo validate` does, then ask the field table what
grpo_runtime would refuse. Exit codes are the runtime's (see launch/cli.py).
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace

from grpo_schema.engine.words import noun, plural

EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_CANNOT_RUN, EXIT_FAILED = 0, 1, 2, 3, 4


def report(result, diagnostics=None) -> None:
    """Print diagnostics (the result's own by default) with the schema's text renderer, as `grpo validate` does;
    errors go to stderr."""
    from pathlib import Path

    from grpo_schema.render.text import render

    shown = result if diagnostics is None else replace(result, diagnostics=list(diagnostics))
    stream = sys.stdout if not any(d.severity == "error" for d in shown.diagnostics) else sys.stderr
    try:
        source = Path(result.path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        source = ""
    stream.write(render([shown], {result.path: source}, stream))


def check(
    path: str,
    overrides: list[str],
    world_size: int | None,
    allow_env: list[str] = (),
    profiles: list[str] = (),
    dry_run: bool = False,
    release: dict | None = None,
):
    """Validate `path` at `world_size` (None: the file's num_processes, else 1) and print its diagnostics.
    Returns the CheckResult, or an exit code: 1 when the config is invalid, 2 when it cannot be read.
    With `dry_run`, a file that declares no world size and whose batch only fits other world sizes is checked at
    the smallest one that fits (recipes are written for N GPUs without saying so): the answer names it.
    `release`: {trl_version, trl_version_source} to judge the file as (default: the file's comment, else 1.16)."""
    from grpo_schema import check_file

    def checked(size, active=None):
        return check_file(
            path,
            world_size=size,
            overrides=overrides or None,
            allow_env=allow_env,
            profiles=list(profiles if active is None else active),
            allow_profile_import=True,
            **(release or {}),
        )

    try:
        result = checked(world_size)
        if not profiles and not result.valid:
            result, profiles = written_for_a_profile(result, checked, path)
        sizes = world_sizes_that_fit(result) if dry_run and world_size is None else []
        if sizes and (refit := checked(sizes[0])).valid:
            shown = ", ".join(map(str, sizes[:8])) + (", ..." if len(sizes) > 8 else "")
            print(
                f"grpo: {path} declares no world size (num_processes, --num-processes) and its batch does not fit "
                f"{plural(result.world_size, 'process')}; checked at {sizes[0]}, the smallest world size it fits "
                f"(fits {shown})"
            )
            result = refit
    except OSError as error:
        print(f"grpo: cannot read {path}: {error}", file=sys.stderr)
        return EXIT_USAGE
    except (KeyError, ImportError, AttributeError) as error:
        print(f"grpo: unknown profile {error}", file=sys.stderr)
        return EXIT_USAGE
    if result.diagnostics or not result.valid:
        report(result)
    if not result.valid or result.plan is None:
        print(
            f"grpo: {path} is not a valid config for {plural(result.world_size, 'process')}; nothing was run"
            + another_trainer(result),
            file=sys.stderr,
        )
        return EXIT_INVALID
    return result


def release_of(path: str, prog: str) -> dict | int:
    """The TRL release the file is judged and run as, as `grpo validate` and `grpo smoke` find it (the file's
    `# grpo: --trl-version` comment, the installed trl, a pin in the repository, else 1.16): a file written for
    TRL 0.19 keeps 0.19's meaning (its defaults stand for the keys it leaves out). Exit 2 for one that cannot be
    judged."""
    from grpo_schema.commands.trl_release import judged_release

    try:
        return judged_release(None, path)
    except ValueError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


def warn_release_behaviour(path: str, release: dict, profiles, prog: str) -> None:
    """A file written for another TRL release runs in grpo_runtime, which follows TRL 1.16: what that release did
    and 1.16 cannot keep (max_prompt_length's truncation, say) is said once, as `grpo migrate --from` and
    `grpo smoke` say it, rather than dropped without a word."""
    from grpo_schema.commands.migrate import migrate_config
    from grpo_schema.engine.release import release_surface

    if release_surface(release["trl_version"]) is None:  # TRL 1.16 itself: the file runs as written
        return
    try:
        with open(path, encoding="utf-8") as handle:
            migrated = migrate_config(handle.read(), path, list(profiles), release["trl_version"])
    except (OSError, UnicodeDecodeError, ValueError):
        return  # the check has already reported a file it cannot read
    for line in migrated.cannot_keep + migrated.failed:
        print(
            f"{prog}: warning: written for TRL {release['trl_version']}; grpo_runtime follows TRL 1.16 and cannot "
            f"keep: {line}",
            file=sys.stderr,
        )


def written_for_a_profile(result, checked, path: str):
    """A file written for a known training script (open-r1's keys or reward names) and not valid without it is
    run under that script's profile, as `--profile NAME` would: grpo_runtime honours the script's arguments.
    Returns (result, profiles): the profiled check when it has fewer errors, else the result unchanged."""
    from grpo_schema.engine.profiles import suggest_profiles

    suggested = suggest_profiles(result.raw) if isinstance(result.raw, dict) else []
    if not suggested:
        return result, []
    best = suggested[0]
    profiled = checked(result.world_size if "num_processes" in result.launch else None, [best["name"]])
    if errors(profiled) >= errors(result):
        return result, []
    gave_away = ", ".join([*best["keys"][:4], *(f"reward {r}" for r in best["reward_funcs"][:2])])
    print(
        f"grpo: {path} is written for {best['name']}'s training script ({gave_away}); checked and run with "
        f"--profile {best['name']}"
    )
    return profiled, [best["name"]]


def another_trainer(result) -> str:
    """Why a file with keys and reward names nobody here knows cannot run: it was written for another trainer."""
    keys = [d.fields[0] for d in result.diagnostics if d.code == "GRPO-K001" and d.fields]
    listed = result.raw.get("reward_funcs") if isinstance(result.raw, dict) else None
    items = [d.fields[0] for d in result.diagnostics if d.code in ("GRPO-R002", "GRPO-R007") and d.fields]
    rewards = [
        str(listed[int(item[13:-1])])
        for item in items  # "reward_funcs[3]": the finding's entry
        if isinstance(listed, list) and item.startswith("reward_funcs[")
    ]
    if not keys and not rewards:
        return ""
    more = ", ..." if len(keys) > 3 else ""
    named = [f"{plural(len(keys), 'key')} ({', '.join(keys[:3])}{more})"] if keys else []
    named += [f"{noun(len(rewards), 'reward function')} {', '.join(rewards[:3])}"] if rewards else []
    belong = "belongs" if len(keys) + len(rewards) == 1 else "belong"
    return (
        f".\n{' and '.join(named)} {belong} to no TRL 1.16 field and no known training script's arguments: "
        "the file looks written for another trainer, whose code grpo_runtime does not have (a known script's "
        "profile: --profile NAME or MODULE:ATTR)"
    )


def errors(result) -> int:
    return sum(d.severity == "error" for d in result.diagnostics)


def world_sizes_that_fit(result) -> list[int]:
    """The world sizes whose batch schedule holds whole groups, when the file declares none and only the world size
    makes it invalid (every error is a batch-geometry one); [] otherwise."""
    from grpo_schema.engine.plan import Geometry, valid_world_sizes

    codes = {d.code for d in result.diagnostics if d.severity == "error"}
    if result.valid or result.config is None or "num_processes" in result.launch or not codes <= WORLD_SIZE_RULES:
        return []
    return valid_world_sizes(Geometry.of(result.migrated or result.config))


# The batch rules whose verdict depends on the world size alone (whole groups per generation / eval batch).
WORLD_SIZE_RULES = {"GRPO-B001", "GRPO-B004"}


def runnable(result, command: str, prog: str, dry_run: bool, launch_with: list[str] = ()) -> int | None:
    """What grpo_runtime does with the checked config's fields (grpo_runtime.support): print its refusals and
    warnings. Returns an exit code when the command stops here (a refusal, or --dry-run), else None.
    `launch_with`: the arguments to repeat in the `grpo launch` command suggested for a multi-process file."""
    import shlex

    from grpo_runtime.support import assess
    from grpo_schema.engine.codes import U_PROCESSES

    found = assess(result, command)
    several = any(d.code == U_PROCESSES for d in found) or (command == "train" and result.world_size > 1)
    if dry_run:  # the question is the config's: that this command starts one process only changes the command
        found = [d for d in found if d.code != U_PROCESSES]
    if found:
        report(result, found)
    refusals = [d for d in found if d.severity == "error"]
    launch = "grpo launch " + shlex.join(
        [result.path, *launch_with]
        + (
            []
            if "num_processes" in result.launch or result.world_size == 1
            else ["--num-processes", str(result.world_size)]
        )
    )
    if several and not dry_run:
        print(f"{prog}: start it with:  {launch}", file=sys.stderr)
    if refusals:
        print(
            f"{prog}: grpo_runtime cannot run {result.path} as written ({plural(len(refusals), 'refused setting')}); "
            "nothing was run",
            file=sys.stderr,
        )
        return EXIT_CANNOT_RUN
    if dry_run:
        warned = f" ({plural(len(found), 'warning')} above)" if found else ""
        started = f", started with:  {launch}" if several else ""
        print(
            f"{prog}: grpo_runtime can run {result.path} as written at {plural(result.world_size, 'process')}"
            f"{started}{warned}; nothing was loaded (--dry-run)"
        )
        return EXIT_OK
    return None


def apply_env(env: dict[str, str]) -> None:
    """The validated `env:` section, exported before anything reads it (overwrites the shell, like TRL)."""
    for name, value in env.items():
        os.environ[name] = str(value)
