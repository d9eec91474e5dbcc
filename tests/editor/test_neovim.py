"""`grpo lsp` in headless Neovim: a small init.lua attaches the server to real buffers (a GRPO config with a
`# grpo: --world-size 8` comment, a GitHub workflow) and writes what Neovim holds as diagnostics; the config gets
what `grpo validate` says at world size 8, the workflow nothing. Skipped without nvim (scripts/test.sh installs
Debian's, 0.7)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from grpo_schema.engine.validate import check_text
from tests.conftest import REPO

pytestmark = pytest.mark.skipif(shutil.which("nvim") is None, reason="nvim is not installed (apt-get install neovim)")
pytest.importorskip("pygls", reason="grpo lsp needs the lsp extra")

CONFIG = (
    "# grpo: --world-size 8\nmodel_name_or_path: Qwen/Qwen2.5-0.5B-Instruct\n"
    "dataset_name: trl-lib/DeepMath-103K\nreward_funcs: [accuracy_reward]\nper_device_train_batch_size: 4\n"
    "num_generations: 6\n"
)
WORKFLOW = "name: CI\non:\n  push:\njobs:\n  test:\n    runs-on: ubuntu-latest\n"

INIT = r"""
vim.g.do_filetype_lua = 1  -- Neovim 0.7: use filetype.lua (the default from 0.8)
vim.cmd("filetype on")
vim.filetype.add({ pattern = { [".*%.grpo%.ya?ml"] = "yaml.grpo" } })
local out, published = {}, {}
local handlers = { ["textDocument/publishDiagnostics"] = function(err, result, ctx, config)
  published[vim.uri_to_fname(result.uri)] = #result.diagnostics
  vim.lsp.diagnostic.on_publish_diagnostics(err, result, ctx, config)
end }
local id = vim.lsp.start_client({ name = "grpo", cmd = { PYTHON, "-m", "grpo_schema", "lsp" }, root_dir = ROOT,
  cmd_env = { PYTHONPATH = REPO }, init_options = { grpo = {} }, handlers = handlers })
for _, name in ipairs(FILES) do
  vim.cmd("edit " .. name)
  local buf = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(buf, id)
  vim.wait(30000, function() return published[vim.api.nvim_buf_get_name(buf)] ~= nil end, 50)
  local codes = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do table.insert(codes, { d.code, d.lnum }) end
  out[name] = { filetype = vim.bo[buf].filetype, published = published[vim.api.nvim_buf_get_name(buf)],
                codes = codes }
end
vim.fn.writefile({ vim.fn.json_encode(out) }, OUT)
vim.cmd("qa!")
"""


def test_neovim_shows_the_configs_diagnostics_and_nothing_for_a_workflow(tmp_path):
    config = tmp_path / "run.grpo.yaml"
    config.write_text(CONFIG)
    workflow = tmp_path / ".github" / "workflows" / "ci.yml"
    workflow.parent.mkdir(parents=True)
    workflow.write_text(WORKFLOW)
    out = tmp_path / "out.json"
    init = tmp_path / "init.lua"
    header = (
        f"PYTHON = {json.dumps(sys.executable)}\nREPO = {json.dumps(str(REPO))}\n"
        f"ROOT = {json.dumps(str(tmp_path))}\nOUT = {json.dumps(str(out))}\n"
        f"FILES = {{ {json.dumps(str(config))}, {json.dumps(str(workflow))} }}\n"
    )
    init.write_text(header + INIT)
    done = subprocess.run(
        ["nvim", "--headless", "-n", "-i", "NONE", "-u", str(init)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert out.exists(), (done.stdout, done.stderr)
    found = json.loads(out.read_text())
    expected = [[d.code, d.line - 1] for d in check_text(CONFIG).diagnostics]
    assert found[str(config)]["filetype"] == "yaml.grpo"
    assert found[str(config)]["codes"] == expected and ["GRPO-B001", 5] in expected  # at world size 8
    assert found[str(workflow)]["published"] == 0 and found[str(workflow)]["codes"] == []
