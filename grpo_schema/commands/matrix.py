"""`grpo validate --world-sizes 1-64`: at which world sizes a config is valid.

Every file is checked in full at each listed world size (about a millisecond each). Errors that do not depend
on the world size (a removed key, a typo) are listed once; the table groups the world sizes by the
world-size-dependent errors they get. Exit 1 when any listed world size has an error, so CI can assert
`--world-sizes 4,8` for the machines a recipe must run on.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

MAX_WORLD_SIZES = 1024


def parse_world_sizes(spec: str) -> list[int]:
    """'1-64', '8', '1,2,4,8' or '1-8,16' -> sorted distinct sizes; ValueError with a readable message."""
    sizes: set[int] = set()
    for part in spec.split(","):
        low, dash, high = part.strip().partition("-")
        try:
            first, last = int(low), int(high) if dash else int(low)
        except ValueError:
            raise ValueError(f"--world-sizes: expected sizes like 1-64 or 1,2,4,8, got {spec!r}") from None
        if first < 1 or last < first:
            raise ValueError(f"--world-sizes: {part.strip()!r} is not a range of sizes of at least 1")
        if last - first >= MAX_WORLD_SIZES:  # checked before the range is built: 1-10000000000 is one token
            raise ValueError(f"--world-sizes: at most {MAX_WORLD_SIZES} world sizes at once")
        sizes.update(range(first, last + 1))
        if len(sizes) > MAX_WORLD_SIZES:
            raise ValueError(f"--world-sizes: at most {MAX_WORLD_SIZES} world sizes at once")
    return sorted(sizes)


def world_size_matrix(data: bytes, path: str, options: dict[str, Any], sizes: list[int]) -> dict[str, Any]:
    from grpo_schema.engine.validate import check_text

    by_size: dict[int, list[str]] = {}
    for size in sizes:
        result = check_text(data, path=path, **{**options, "world_size": size, "suggest_fixes": False})
        by_size[size] = sorted(d.code for d in result.diagnostics if d.severity == "error")
    everywhere = Counter(by_size[sizes[0]])
    for codes in by_size.values():
        everywhere &= Counter(codes)
    return {
        "checked": sizes,
        "valid": [n for n in sizes if not by_size[n]],
        "errors_at_every_size": sorted(everywhere.elements()),
        "by_world_size": {str(n): codes for n, codes in by_size.items()},
    }


def compress(sizes: list[int]) -> str:
    """[1, 2, 3, 7, 14, 15] -> '1-3, 7, 14-15'."""
    runs: list[list[int]] = []
    for n in sizes:
        if runs and runs[-1][1] + 1 == n:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)


def render_matrix(path: str, matrix: dict[str, Any]) -> str:
    everywhere = Counter(matrix["errors_at_every_size"])
    groups: dict[tuple[str, ...], list[int]] = {}
    for size, codes in matrix["by_world_size"].items():
        remaining = tuple(sorted((Counter(codes) - everywhere).elements()))
        groups.setdefault(remaining, []).append(int(size))
    checked = matrix["checked"]
    lines = [
        f"{path}: valid at {len(matrix['valid'])} of {len(checked)} world sizes"
        + (f": {compress(matrix['valid'])}" if matrix["valid"] else "")
    ]
    if everywhere:
        lines.append(f"  errors at every world size (fix these first): {', '.join(sorted(set(everywhere)))}")
    lines.append("  world sizes              world-size-dependent errors")
    for codes, members in sorted(groups.items(), key=lambda item: item[1][0]):
        lines.append(f"  {compress(members):<24} {', '.join(sorted(set(codes))) or 'none'}")
    return "\n".join(lines)


def emit_matrix(
    files: list[tuple[str, bytes]], results: list[Any], options: dict[str, Any], spec: str, fmt: str
) -> int:
    """Print the matrix of every file (text, or the usual JSON document with a `world_sizes` object per file)."""
    sizes = parse_world_sizes(spec)
    matrices = [world_size_matrix(data, shown, options, sizes) for shown, data in files]
    if fmt == "json":
        documents = [{**result.to_dict(), "world_sizes": matrix} for result, matrix in zip(results, matrices)]
        from grpo_schema.render.machine import dumps

        print(dumps({"version": 1, "files": documents}, indent=2))
    else:
        print("\n\n".join(render_matrix(shown, matrix) for (shown, _), matrix in zip(files, matrices)))
    return 1 if any(len(m["valid"]) < len(m["checked"]) for m in matrices) else 0
