"""docs/editors.md followed word for word: each editor snippet, cut from the page as it stands, is the whole init
file of a real editor (Neovim 0.7 and 0.11, Emacs with eglot and with lsp-mode) that opens a GRPO config and must
show `grpo lsp`'s diagnostics, the ones `grpo validate` reports. Skipped for an editor (or a Neovim release) that is
not installed; GRPO_TEST_NVIM names more Neovim binaries (colon separated), e.g. a 0.11 beside Debian's 0.7."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grpo_schema.engine.validate import check_text
from tests.conftest import REPO
from tests.support.lsp import snippet

pytest.importorskip("pygls", reason="grpo lsp needs the lsp extra")

PAGE = REPO / "docs" / "editors.md"
BIN = Path(sys.executable).parent  # where `grpo` is installed beside this Python: the snippets run `grpo lsp`
CONFIG = (
    "model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct\ndataset_name: trl-lib/DeepMath-103K\n"
    "reward_funcs: [accuracy_reward]\nper_device_train_batch_size: 4\nnum_generations: 6\n"
)
EXPECTED = sorted([d.code, d.line] for d in check_text(CONFIG).diagnostics)  # [["GRPO-B001", 5]]


def editor_env(tmp_path: Path) -> dict[str, str]:
    if shutil.which("grpo", path=str(BIN)) is None:
        pytest.skip("grpo is not installed beside this Python")
    home = tmp_path / "home"  # no user configuration or plugins of the machine's
    return {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_STATE_HOME": str(home / "state"),
    }


def neovims() -> list[tuple[tuple[int, int], str]]:
    found = {}
    for binary in [shutil.which("nvim"), *filter(None, os.environ.get("GRPO_TEST_NVIM", "").split(os.pathsep))]:
        if binary and os.access(binary, os.X_OK):
            version = re.search(
                r"NVIM v(\d+)\.(\d+)",
                subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30).stdout,
            )
            found[(int(version[1]), int(version[2]))] = binary
    return sorted(found.items())


DRIVE_NVIM = r"""
vim.cmd("edit " .. FILE)
local buf = vim.api.nvim_get_current_buf()
vim.wait(30000, function() return #vim.diagnostic.get(buf) > 0 end, 50)
local codes, clients = {}, {}
for _, d in ipairs(vim.diagnostic.get(buf)) do table.insert(codes, { d.code, d.lnum + 1, d.source }) end
for _, c in pairs((vim.lsp.get_clients or vim.lsp.get_active_clients)({ bufnr = buf })) do
  table.insert(clients, c.name)
end
vim.fn.writefile({ vim.fn.json_encode({ filetype = vim.bo[buf].filetype, codes = codes, clients = clients }) }, OUT)
vim.cmd("qa!")
"""


def run_neovim(binary: str, init: str, tmp_path: Path, text: str = CONFIG, env: dict | None = None) -> dict:
    tmp_path.mkdir(parents=True, exist_ok=True)
    config, out = tmp_path / "run.grpo.yaml", tmp_path / "out.json"
    config.write_text(text)
    (tmp_path / "init.lua").write_text(init)  # the page's snippet, nothing else
    (tmp_path / "drive.lua").write_text(
        f"FILE = {json.dumps(str(config))}\nOUT = {json.dumps(str(out))}\n" + DRIVE_NVIM
    )
    done = subprocess.run(
        [binary, "--headless", "-n", "-i", "NONE", "-u", "init.lua", "-c", "luafile drive.lua"],
        capture_output=True,
        text=True,
        timeout=90,
        cwd=tmp_path,
        env=env or editor_env(tmp_path),
    )
    assert out.exists(), (done.stdout, done.stderr)
    return json.loads(out.read_text())


@pytest.mark.parametrize(("marker", "oldest"), [("neovim-0.7", (0, 7)), ("neovim-0.11", (0, 11))])
def test_the_neovim_snippet_shows_grpo_lsp_s_diagnostics(tmp_path, marker, oldest):
    able = [(version, binary) for version, binary in neovims() if version >= oldest]
    if not able:
        pytest.skip(f"no Neovim {oldest[0]}.{oldest[1]} or later (set GRPO_TEST_NVIM to one)")
    for version, binary in able:  # the 0.7 snippet runs on every newer release too
        found = run_neovim(binary, snippet(marker), tmp_path / f"{version[0]}.{version[1]}")
        assert found["filetype"] == "yaml.grpo" and found["clients"] == ["grpo"], (version, found)
        assert sorted(c[:2] for c in found["codes"]) == EXPECTED, (version, found)


def test_the_neovim_0_11_yaml_language_server_lines_start_it(tmp_path):
    able = [binary for version, binary in neovims() if version >= (0, 11)]
    server = shutil.which(
        "yaml-language-server", path=str(REPO / "tests" / "lsp" / "node_modules" / ".bin")
    ) or shutil.which("yaml-language-server")
    if not able or server is None:
        pytest.skip("needs Neovim 0.11 (GRPO_TEST_NVIM) and yaml-language-server (tests/lsp: npm ci)")
    (tmp_path / "schemas").mkdir()
    shutil.copy(REPO / "schemas" / "grpo-config.schema.json", tmp_path / "schemas")
    env = editor_env(tmp_path)
    env["PATH"] = f"{Path(server).parent}{os.pathsep}{env['PATH']}"
    init = 'vim.filetype.add({ pattern = { [".*%.grpo%.ya?ml"] = "yaml.grpo" } })\n' + snippet("neovim-0.11-yamlls")
    found = run_neovim(able[-1], init, tmp_path, CONFIG + "loss_type: bogus\n", env)
    assert found["clients"] == ["yamlls"], found
    assert any(line == 6 for _, line, _ in found["codes"]), found  # the schema's enum, on loss_type's line


DRIVE_EMACS = r"""
(find-file FILE)
(run-hooks 'post-command-hook)  ; what an interactive Emacs runs after the command that opened the file
(mapc #'timer-event-handler (copy-sequence timer-idle-list))  ; ... and once it is idle (lsp-deferred)
(defun grpo-test-codes ()
  (if (featurep 'lsp-mode)
      (let (out) (maphash (lambda (_ v) (dolist (d v) (push (list (lsp-get d :code)
                                                                (1+ (lsp-get (lsp-get (lsp-get d :range) :start) :line))) out)))
                          (lsp-diagnostics t)) out)
    (mapcar (lambda (d) (list (and (string-match "\\[\\(GRPO-[A-Z][0-9]+\\)\\]" (flymake-diagnostic-text d))
                                   (match-string 1 (flymake-diagnostic-text d)))
                              (line-number-at-pos (flymake-diagnostic-beg d))))
            (flymake-diagnostics))))
(let ((deadline (+ (float-time) 30)))
  (while (and (< (float-time) deadline) (null (grpo-test-codes)))
    (accept-process-output nil 0.1)))
(let ((found (json-encode (list (cons 'mode (symbol-name major-mode)) (cons 'codes (vconcat (mapcar #'vconcat (grpo-test-codes))))))))
  (with-temp-file OUT (insert found)))
(kill-emacs 0)
"""


@pytest.mark.parametrize(("marker", "package"), [("emacs-eglot", "eglot"), ("emacs-lsp-mode", "lsp-mode")])
def test_the_emacs_snippet_shows_grpo_lsp_s_diagnostics(tmp_path, marker, package):
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.skip("emacs is not installed (apt-get install emacs-nox elpa-eglot elpa-lsp-mode)")
    env = editor_env(tmp_path)
    has = subprocess.run(
        [emacs, "--batch", "--eval", f"(kill-emacs (if (require '{package} nil t) 0 1))"],
        capture_output=True,
        timeout=60,
        env=env,
    )
    if has.returncode != 0:
        pytest.skip(f"{package} is not installed for this Emacs")
    config, out = tmp_path / "run.grpo.yaml", tmp_path / "out.json"
    config.write_text(CONFIG)
    (tmp_path / "init.el").write_text(snippet(marker))
    setup = "(setq lsp-auto-guess-root t lsp-enable-snippet nil)\n" if package == "lsp-mode" else ""  # no prompts
    (tmp_path / "drive.el").write_text(
        f"(setq FILE {json.dumps(str(config))} OUT {json.dumps(str(out))})\n" + setup + DRIVE_EMACS
    )
    done = subprocess.run(
        [emacs, "--batch", "-l", "init.el", "-l", "drive.el"],
        capture_output=True,
        text=True,
        timeout=90,
        cwd=tmp_path,
        env=env,
    )
    assert out.exists(), (done.stdout, done.stderr)
    found = json.loads(out.read_text())
    assert found["mode"] == "grpo-yaml-mode" and sorted(found["codes"]) == EXPECTED, (found, done.stderr[-2000:])


# K and <C-x><C-o> pressed as a user presses them, in the buffer the snippet attached: a hover window opens with the
# key's text, and the completion menu offers keys.
DRIVE_KEYS = r"""
vim.cmd("edit " .. FILE)
local buf = vim.api.nvim_get_current_buf()
vim.wait(30000, function() return #vim.diagnostic.get(buf) > 0 end, 50)
vim.api.nvim_win_set_cursor(0, { 5, 3 })  -- on num_generations
vim.api.nvim_feedkeys("K", "x", false)
local hover = ""
vim.wait(10000, function()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= "" then
      hover = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false), "\n")
      return true
    end
  end
  return false
end, 50)
vim.cmd("only")
vim.api.nvim_buf_set_lines(buf, -1, -1, false, { "" })
vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(buf), 0 })
local function finish(items)
  vim.fn.writefile({ vim.fn.json_encode({ hover = hover, items = items, omnifunc = vim.bo[buf].omnifunc }) }, OUT)
  vim.cmd("qa!")
end
-- the keys are typed once this script returns, as the editor's main loop reads them; the menu's items end the run
vim.api.nvim_create_autocmd("CompleteChanged", { callback = function()
  local items = {}
  for _, item in ipairs(vim.fn.complete_info({ "items" }).items) do table.insert(items, item.word) end
  vim.schedule(function() finish(items) end)
end })
vim.defer_fn(function() finish({}) end, 15000)
vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("A<C-x><C-o>", true, false, true), "t", false)
"""


def test_the_neovim_0_7_snippet_gives_hover_on_k_and_completion(tmp_path):
    able = [binary for version, binary in neovims() if version >= (0, 7)]
    if not able:
        pytest.skip("no Neovim 0.7 or later")
    binary = able[0]  # the oldest: the release the snippet is for
    config, out = tmp_path / "run.grpo.yaml", tmp_path / "out.json"
    config.write_text(CONFIG)
    (tmp_path / "init.lua").write_text(snippet("neovim-0.7"))
    (tmp_path / "drive.lua").write_text(
        f"FILE = {json.dumps(str(config))}\nOUT = {json.dumps(str(out))}\n" + DRIVE_KEYS
    )
    done = subprocess.run(
        [binary, "--headless", "-n", "-i", "NONE", "-u", "init.lua", "-c", "luafile drive.lua"],
        capture_output=True,
        text=True,
        timeout=90,
        cwd=tmp_path,
        env=editor_env(tmp_path),
    )
    assert out.exists(), (done.stdout, done.stderr)
    found = json.loads(out.read_text())
    assert "num_generations" in found["hover"], found  # the server's hover, not :Man
    assert "learning_rate: " in found["items"] and "num_generations: " not in found["items"], found  # unwritten keys


DRIVE_BOTH = r"""
(find-file FILE)
(run-hooks 'post-command-hook)
(mapc #'timer-event-handler (copy-sequence timer-idle-list))
(defun grpo-test-servers ()
  (sort (mapcar (lambda (w) (symbol-name (lsp--client-server-id (lsp--workspace-client w)))) (lsp-workspaces)) #'string<))
(defun grpo-test-sources ()
  (let (out) (maphash (lambda (_ v) (dolist (d v) (push (lsp-get d :source) out))) (lsp-diagnostics t)) out))
(let ((deadline (+ (float-time) 40)))
  (while (and (< (float-time) deadline)
              (not (and (member "grpo" (grpo-test-sources))
                        (seq-some (lambda (s) (and s (string-prefix-p "yaml-schema" s))) (grpo-test-sources)))))
    (accept-process-output nil 0.1)))
(let ((found (json-encode (list (cons 'servers (vconcat (grpo-test-servers)))
                                (cons 'sources (vconcat (delete-dups (delq nil (grpo-test-sources)))))))))
  (with-temp-file OUT (insert found)))
(kill-emacs 0)
"""


@pytest.mark.slow
def test_the_lsp_mode_snippet_lets_yaml_language_server_serve_the_buffer_too(tmp_path):
    emacs = shutil.which("emacs")
    server = shutil.which(
        "yaml-language-server", path=str(REPO / "tests" / "lsp" / "node_modules" / ".bin")
    ) or shutil.which("yaml-language-server")
    env = editor_env(tmp_path)
    if (
        emacs is None
        or server is None
        or subprocess.run(
            [emacs, "--batch", "--eval", "(kill-emacs (if (require 'lsp-mode nil t) 0 1))"],
            capture_output=True,
            timeout=60,
            env=env,
        ).returncode
        != 0
    ):
        pytest.skip("needs Emacs with lsp-mode and yaml-language-server (tests/lsp: npm ci)")
    env["PATH"] = f"{Path(server).parent}{os.pathsep}{env['PATH']}"
    (tmp_path / "schemas").mkdir()
    shutil.copy(REPO / "schemas" / "grpo-config.schema.json", tmp_path / "schemas")
    config, out = tmp_path / "run.grpo.yaml", tmp_path / "out.json"
    config.write_text(
        "# yaml-language-server: $schema=schemas/grpo-config.schema.json\n" + CONFIG + "loss_type: bogus\n"
    )
    (tmp_path / "init.el").write_text(snippet("emacs-lsp-mode"))
    (tmp_path / "drive.el").write_text(
        f"(setq FILE {json.dumps(str(config))} OUT {json.dumps(str(out))})\n"
        "(setq lsp-auto-guess-root t lsp-enable-snippet nil)\n" + DRIVE_BOTH
    )
    done = subprocess.run(
        [emacs, "--batch", "-l", "init.el", "-l", "drive.el"],
        capture_output=True,
        text=True,
        timeout=90,
        cwd=tmp_path,
        env=env,
    )
    assert out.exists(), (done.stdout, done.stderr[-2000:])
    found = json.loads(out.read_text())
    assert found["servers"] == ["grpo", "yamlls"], (found, done.stderr[-2000:])
    assert "grpo" in found["sources"] and any(s.startswith("yaml-schema") for s in found["sources"]), found
