"""The form's "keys that predate the release" offer reads grpo migrate's own list of codes from the service
(GET /api/v1/trl-versions), and no script of the page keeps a copy that could drift from it."""

from __future__ import annotations

import re

from grpo_schema.commands.migrate import MIGRATION_CODES
from tests.conftest import REPO


def test_the_service_sends_migrate_s_codes(live_server):
    with live_server.client() as client:
        answer = client.get("/api/v1/trl-versions")
    assert answer.status_code == 200, answer.text
    assert answer.json()["migration_codes"] == list(MIGRATION_CODES)


def test_no_page_script_lists_the_codes_itself():
    copies = [
        path.name
        for path in sorted((REPO / "web" / "static" / "js").glob("*.js"))
        if re.search(r"['\"]GRPO-K00[238]['\"]", path.read_text(encoding="utf-8"))
    ]
    assert copies == []
