"""The file's own statements of its release (a `# grpo: --trl-version` comment, a schema modeline), moved to the
release a migration targets."""

from __future__ import annotations

import re

from grpo_schema.engine.lines import split_lines

_TRL_VERSION_OPTION = re.compile(r"(--trl-version(?:=|\s+))(\S+)")
_SCHEMA_NAME = re.compile(r"(?:trl-\d+\.\d+\.\d+/)?(grpo-config(?:\.[\w-]+)*\.schema\.json)")


def _same_table(version: str, target: str) -> bool:
    """Whether `version` is judged by the same table as `target` (then a comment naming it stays as written)."""
    import warnings

    from grpo_schema.versions import VersionError, surface

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return surface(version).release == surface(target).release
        except VersionError:
            return False


def retarget_comments(text: str, target: str) -> str:
    """The file's own statements of its release, moved to `target`: `--trl-version A` in a `# grpo:` comment, and
    a yaml-language-server modeline naming grpo-config's schema, which then names `target`'s schema
    (schemas/trl-X.Y.Z/grpo-config.schema.json for an older release, the main schema for 1.16)."""
    from grpo_schema.api.modeline import MODELINE_PREFIX, SCHEMA_FILE
    from grpo_schema.commands.export import release_schema_name
    from grpo_schema.engine.infile import COMMENT, comment_lines

    schema = release_schema_name(target)
    directives = {number for number, line in comment_lines(text) if COMMENT.match(line)}  # not a script's text
    out = []
    for number, line in enumerate(split_lines(text, keepends=True), start=1):
        if number in directives:
            line = _TRL_VERSION_OPTION.sub(
                lambda m: m.group(0) if _same_table(m.group(2), target) else m.group(1) + target, line
            )
        elif line.lstrip().startswith(MODELINE_PREFIX) and SCHEMA_FILE.removesuffix(".schema.json") in line:
            # only the strict main schema has a per-release copy; a variant (lenient, open-r1, draft-07) stays
            line = _SCHEMA_NAME.sub(lambda m: schema if m.group(1) == SCHEMA_FILE else m.group(0), line)
        out.append(line)
    return "".join(out)
