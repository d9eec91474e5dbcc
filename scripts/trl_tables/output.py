"""How the files scripts/trl_releases.py writes are serialised. Deterministic: sorted keys, no timestamps other
than the wheels' own build dates."""

from __future__ import annotations

import json
from typing import Any


def dump(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


def comparable(table: dict[str, Any]) -> str:
    return dump({"fields": table["fields"], "front_end": table["front_end"], "transformers": table["transformers"]})
