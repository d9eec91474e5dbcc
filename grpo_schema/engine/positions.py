"""Where each key and value of a loaded document is: 1-based (line, column) by key path."""

from __future__ import annotations

from dataclasses import dataclass, field

Path = tuple[str | int, ...]


@dataclass
class Positions:
    """1-based (line, column) of keys and values, by key path: ('datasets', 0, 'path')."""

    keys: dict[Path, tuple[int, int]] = field(default_factory=dict)
    values: dict[Path, tuple[int, int]] = field(default_factory=dict)

    def of(self, path: Path) -> tuple[int, int] | None:
        """Position of the key at `path`, else of the nearest enclosing key or value that has one."""
        for end in range(len(path), 0, -1):
            prefix = path[:end]
            if prefix in self.keys:
                return self.keys[prefix]
            if prefix in self.values:
                return self.values[prefix]
        return None


def _dotted(path: Path) -> str:
    """('datasets', 0, 'path') -> 'datasets[0].path'; ('env', 'HF_HOME') -> 'env.HF_HOME'."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


dotted = _dotted
