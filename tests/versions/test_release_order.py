"""One order for the release a file is judged by, on every surface (docs/trl-versions.md): a flag for the check >
the file's `# grpo: --trl-version` comment > the editor's or the service's standing default > the installed trl >
a repository pin > 1.16. Checked on `grpo validate`, a real `grpo lsp` (its trlVersion setting and its own
--trl-version) and the service (`grpo serve --trl-version` and ?trl_version=)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from grpo_schema.engine.infile import judged_release
from tests.conftest import REPO
from tests.editor.lsp_client import StdioLspClient
from tests.support.old_recipe import OLD_RECIPE, file_object

COMMENTED = "# grpo: --trl-version 0.19\n" + OLD_RECIPE  # valid for 0.19; 1.16 reads none of its old names
OLD_NAMES = {"GRPO-K002", "GRPO-K003"}


def test_the_engine_orders_every_source(tmp_path):
    assert judged_release("0.19", "1.16", "flag") == {"trl_version": "1.16", "trl_version_source": "flag"}
    assert judged_release("0.19", "1.16", "context")["trl_version_source"] == "context"
    for standing in ("editor settings", "service settings", "installed", "requirements", "default", None):
        assert judged_release("0.19", "1.16", standing) == {"trl_version": "0.19", "trl_version_source": "comment"}
        assert judged_release(None, "1.16", standing)["trl_version"] == "1.16"
    (tmp_path / "requirements.txt").write_text("trl==0.23.1\n")
    (tmp_path / ".git").mkdir()
    found = judged_release(None, path=str(tmp_path / "run.yaml"))  # this interpreter's trl, if any, outranks the pin
    assert found["trl_version_source"] in ("installed", "requirements")
    assert judged_release("0.19", path=str(tmp_path / "run.yaml"))["trl_version_source"] == "comment"


def test_the_cli_puts_the_comment_under_the_flag_and_over_installed_and_pinned(tmp_path):
    recipe = tmp_path / "repo" / "recipe.yaml"
    recipe.parent.mkdir()
    (recipe.parent / ".git").mkdir()
    (recipe.parent / "requirements.txt").write_text("trl==1.16.0\n")
    recipe.write_text(COMMENTED)
    found = file_object(str(recipe))
    assert (found["trl_version"], found["trl_version_source"], found["valid"]) == ("0.19", "comment", True)
    flagged = file_object(str(recipe), "--trl-version", "1.16")
    assert flagged["trl_version_source"] == "flag" and OLD_NAMES <= {d["code"] for d in flagged["diagnostics"]}
    site = tmp_path / "site"  # an installed trl 1.16 (its metadata): still under the comment
    (site / "trl-1.16.0.dist-info").mkdir(parents=True)
    (site / "trl-1.16.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: trl\nVersion: 1.16.0\n")
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from grpo_schema.cli import main; "
        "sys.exit(main(['validate', '--format', 'json', sys.argv[2]]))"
    )
    for text, source in ((COMMENTED, "comment"), (OLD_RECIPE, "installed")):
        recipe.write_text(text)
        done = subprocess.run(
            [sys.executable, "-c", code, str(site), str(recipe)], capture_output=True, text=True, timeout=60, cwd=REPO
        )
        assert json.loads(done.stdout)["files"][0]["trl_version_source"] == source, done.stderr


def _server(*args: str, options=None) -> StdioLspClient:
    pytest.importorskip("pygls", reason="grpo lsp needs the lsp extra")
    return StdioLspClient(
        [sys.executable, "-m", "grpo_schema", "lsp", *args],
        REPO,
        timeout=30.0,
        env={"PYTHONPATH": str(REPO)},
        initialization_options=options,
    )


@pytest.mark.parametrize(
    ("args", "options"),
    [((), {"grpo": {"trlVersion": "1.16"}}), (("--trl-version", "1.16"), None)],
    ids=["trlVersion-setting", "grpo-lsp-flag"],
)
def test_the_language_server_puts_its_release_under_the_file_s_comment(tmp_path, args, options):
    commented, plain = tmp_path / "commented.grpo.yaml", tmp_path / "plain.grpo.yaml"
    commented.write_text(COMMENTED)
    plain.write_text(OLD_RECIPE)
    client = _server(*args, options=options)
    try:
        assert not client.wait_publish(client.open(commented))  # judged as 0.19, as `grpo validate` judges it
        assert OLD_NAMES <= {d["code"] for d in client.wait_publish(client.open(plain))}  # the editor's 1.16
    finally:
        client.close()
    assert file_object(str(commented), "--trl-version", "0.19")["diagnostics"] == []


def test_the_service_puts_its_release_under_the_comment_and_a_request_s_over_it():
    pytest.importorskip("fastapi", reason="the service needs the web extra (pip install -e '.[web]')")
    from fastapi.testclient import TestClient

    from grpo_web.app import create_app
    from grpo_web.settings import Settings

    client = TestClient(create_app(Settings(trl_version="1.16")))
    yaml_type = {"content-type": "application/yaml"}
    found = client.post("/api/v1/validate", content=COMMENTED, headers=yaml_type).json()
    assert (found["trl_version"], found["trl_version_source"], found["valid"]) == ("0.19", "comment", True)
    plain = client.post("/api/v1/validate", content=OLD_RECIPE, headers=yaml_type).json()
    assert (plain["trl_version"], plain["trl_version_source"], plain["valid"]) == ("1.16", "service settings", False)
    asked = client.post("/api/v1/validate?trl_version=1.16", content=COMMENTED, headers=yaml_type).json()
    assert asked["trl_version_source"] == "flag" and not asked["valid"]
    assert client.get("/api/v1/trl-versions").json()["default"] == {
        "version": "1.16",
        "source": "service settings",
        "says": "the service's --trl-version",
    }
