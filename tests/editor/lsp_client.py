"""A small Language Server Protocol client over a server's stdio, used by the editor and `grpo lsp` tests.

It speaks JSON-RPC over the server's stdio (Content-Length framed messages), answers the requests the server makes
of an editor (its `workspace/configuration` pull, capability registration, progress tokens) so the server never
waits on us, and keeps the last `textDocument/publishDiagnostics` per document (and every publish, timed, for the
latency benchmark). One server serves many requests. `StdioLspClient` starts any server command (`grpo lsp`);
`YamlLanguageServer` is Red Hat's yaml-language-server, whose schema association comes from each document's own
`# yaml-language-server: $schema=...` modeline, as in an editor, with SchemaStore switched off so the server never
touches the network.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

LSP_DIR = Path(__file__).resolve().parents[1] / "lsp"
SERVER_BIN = LSP_DIR / "node_modules" / "yaml-language-server" / "bin" / "yaml-language-server"

YAML_SETTINGS = {
    "validate": True,
    "hover": True,
    "completion": True,
    "format": {"enable": False},
    "schemaStore": {"enable": False},
    "kubernetesCRDStore": {"enable": False},
    "schemas": {},
}


def missing_reason() -> str | None:
    """Why the server cannot run here, or None when it can."""
    if shutil.which("node") is None:
        return "node is not installed (yaml-language-server needs Node.js)"
    if not SERVER_BIN.exists():
        return f"yaml-language-server is not installed: run `npm ci` in {LSP_DIR}"
    return None


class LspError(RuntimeError):
    pass


class StdioLspClient:
    """A language server started as a subprocess and spoken to over its stdio, as an editor does."""

    def __init__(
        self,
        command: list[str],
        root: Path,
        timeout: float = 20.0,
        env: dict[str, str] | None = None,
        initialization_options: Any = None,
    ):
        self.timeout = timeout
        self._proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=root,
            env={**os.environ, **(env or {})},
        )
        self._next_id = 0
        self._lock = threading.Lock()
        self._responses: dict[int, dict[str, Any]] = {}
        self._arrived = threading.Condition()
        self.diagnostics: dict[str, list[dict[str, Any]]] = {}
        # Every publish per document, with its arrival time (time.perf_counter) and the version it was for.
        self.published: dict[str, list[tuple[float, int | None, list[dict[str, Any]]]]] = {}
        self.stderr: list[bytes] = []
        self._versions: dict[str, int] = {}
        self.last_sent = 0.0
        threading.Thread(target=self._read_loop, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        root_uri = root.resolve().as_uri()
        self.capabilities = self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root_uri,
                "workspaceFolders": [{"uri": root_uri, "name": root.name}],
                "initializationOptions": initialization_options,
                "capabilities": {
                    "workspace": {"configuration": True},
                    "textDocument": {
                        "completion": {
                            "completionItem": {"snippetSupport": True, "documentationFormat": ["markdown", "plaintext"]}
                        },
                        "hover": {"contentFormat": ["markdown", "plaintext"]},
                        "codeAction": {
                            "codeActionLiteralSupport": {
                                "codeActionKind": {"valueSet": ["quickfix", "source", "source.fixAll"]}
                            }
                        },
                        "publishDiagnostics": {"versionSupport": True},
                    },
                },
            },
        )
        self.notify("initialized", {})

    # --- requests -----------------------------------------------------------------------------------------------
    def open(self, path: Path, text: str | None = None) -> str:
        """Open a document (its text from disk unless given); returns its URI."""
        uri = path.resolve().as_uri()
        if uri in self._versions:  # opened before: close it first, as an editor would
            self.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        self._versions[uri] = 1
        self.diagnostics.pop(uri, None)
        self.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": uri,
                    "languageId": "yaml",
                    "version": 1,
                    "text": path.read_text(encoding="utf-8") if text is None else text,
                }
            },
        )
        return uri

    def change(self, uri: str, text: str, range_: dict[str, Any] | None = None) -> int:
        """Send one edit (the whole text, or `text` replacing `range_`); returns the new version."""
        self._versions[uri] += 1
        change: dict[str, Any] = {"text": text} if range_ is None else {"range": range_, "text": text}
        self.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": self._versions[uri]}, "contentChanges": [change]},
        )
        return self._versions[uri]

    def wait_publish(self, uri: str, version: int | None = None, after: int = 0) -> list[dict[str, Any]]:
        """The first publish for `uri` past the first `after` ones (and, when given, for `version`)."""
        deadline = time.monotonic() + self.timeout
        with self._arrived:
            while True:
                for _, published_version, diagnostics in self.published.get(uri, [])[after:]:
                    if version is None or published_version == version:
                        return diagnostics
                if not self._arrived.wait(timeout=max(0.0, deadline - time.monotonic())):
                    raise LspError(f"no diagnostics for {uri} (version {version}) within {self.timeout}s")

    def code_actions(
        self, uri: str, start: tuple[int, int], end: tuple[int, int], only: list[str] | None = None
    ) -> list[dict[str, Any]]:
        context: dict[str, Any] = {"diagnostics": self.diagnostics.get(uri, [])}
        if only:
            context["only"] = only
        return (
            self.request(
                "textDocument/codeAction",
                {
                    "textDocument": {"uri": uri},
                    "context": context,
                    "range": {
                        "start": {"line": start[0], "character": start[1]},
                        "end": {"line": end[0], "character": end[1]},
                    },
                },
            )
            or []
        )

    def complete(self, uri: str, line: int, character: int) -> list[dict[str, Any]]:
        """Completion items at a 0-based position."""
        result = self.request("textDocument/completion", self._position(uri, line, character))
        return result.get("items", []) if isinstance(result, dict) else list(result or [])

    def hover(self, uri: str, line: int, character: int) -> str:
        result = self.request("textDocument/hover", self._position(uri, line, character)) or {}
        contents = result.get("contents", "")
        if isinstance(contents, dict):
            return contents.get("value", "")
        if isinstance(contents, list):
            return "\n".join(c if isinstance(c, str) else c.get("value", "") for c in contents)
        return contents

    def wait_diagnostics(self, uri: str, settle: float = 0.4) -> list[dict[str, Any]]:
        """The diagnostics published for a document, once the server has stopped revising them."""
        deadline = time.monotonic() + self.timeout
        with self._arrived:
            while uri not in self.diagnostics:
                if not self._arrived.wait(timeout=max(0.0, deadline - time.monotonic())):
                    raise LspError(f"no diagnostics for {uri} within {self.timeout}s")
        seen = None
        while seen is not self.diagnostics[uri]:  # publishes may come again after the first one
            seen = self.diagnostics[uri]
            time.sleep(settle)
        return seen

    def schemas_applied(self, uri: str) -> list[str]:
        """The schemas the server associates with a document (its own `yaml/get/jsonSchema` answer)."""
        return [entry.get("uri", "") for entry in self.request("yaml/get/jsonSchema", uri) or []]

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=5)
            self.notify("exit", None)
            self._proc.wait(timeout=5)
        except (LspError, OSError, subprocess.TimeoutExpired):
            self._proc.kill()
            self._proc.wait()

    # --- JSON-RPC -----------------------------------------------------------------------------------------------
    def request(self, method: str, params: Any, timeout: float | None = None) -> Any:
        with self._lock:
            self._next_id += 1
            msg_id = self._next_id
        self._send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        deadline = time.monotonic() + (timeout or self.timeout)
        with self._arrived:
            while msg_id not in self._responses:
                if self._proc.poll() is not None:
                    raise LspError(f"yaml-language-server exited with {self._proc.returncode} during {method}")
                if not self._arrived.wait(timeout=max(0.0, deadline - time.monotonic())):
                    raise LspError(f"{method}: no answer within {timeout or self.timeout}s")
            response = self._responses.pop(msg_id)
        if "error" in response:
            raise LspError(f"{method}: {response['error']}")
        return response.get("result")

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def send_raw(self, body: bytes, answer_id: Any = None) -> dict[str, Any]:
        """Send `body` as one message whatever it holds (not JSON, say) and return the response with `answer_id`
        (None: the JSON-RPC error answer to a message whose id cannot be read)."""
        return self.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body, answer_id)

    def send_bytes(self, data: bytes, answer_id: Any = None) -> dict[str, Any]:
        """Write `data` as it is (headers included) and return the response with `answer_id`."""
        with self._lock:
            self._proc.stdin.write(data)
            self._proc.stdin.flush()
        deadline = time.monotonic() + self.timeout
        with self._arrived:
            while answer_id not in self._responses:
                if not self._arrived.wait(timeout=max(0.0, deadline - time.monotonic())):
                    raise LspError(f"no answer with id {answer_id!r} to {data[:60]!r} within {self.timeout}s")
            return self._responses.pop(answer_id)

    def _position(self, uri: str, line: int, character: int) -> dict[str, Any]:
        return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode("utf-8")
        with self._lock:
            self._proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self._proc.stdin.flush()
            self.last_sent = time.perf_counter()  # when the last message left (for latency measurements)

    def _read_loop(self) -> None:
        stream = self._proc.stdout
        while True:
            length = None
            while True:
                header = stream.readline()
                if not header:
                    return  # the server closed its output
                header = header.strip()
                if not header:
                    break
                name, _, value = header.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if length is not None:
                self._dispatch(json.loads(stream.read(length)))

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "id" in message and "method" in message:
            self._send(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "result": self._answer(message["method"], message.get("params")),
                }
            )
            return
        with self._arrived:
            if "id" in message:
                self._responses[message["id"]] = message
            elif message.get("method") == "textDocument/publishDiagnostics":
                params = message["params"]
                self.diagnostics[params["uri"]] = params["diagnostics"]
                self.published.setdefault(params["uri"], []).append(
                    (time.perf_counter(), params.get("version"), params["diagnostics"])
                )
            self._arrived.notify_all()

    def _answer(self, method: str, params: Any) -> Any:
        """What an editor answers to the server's own requests."""
        return None

    def _drain_stderr(self) -> None:
        for line in self._proc.stderr:
            self.stderr.append(line)


class YamlLanguageServer(StdioLspClient):
    """Red Hat's yaml-language-server (npm), with SchemaStore off."""

    def __init__(self, root: Path, timeout: float = 20.0, schemas: dict[str, list[str]] | None = None):
        """`schemas`: an editor's `yaml.schemas` association (schema -> file globs), else none but the modelines."""
        self.settings = {**YAML_SETTINGS, "schemas": dict(schemas or {})}
        super().__init__(["node", str(SERVER_BIN), "--stdio"], root, timeout, env={"NODE_NO_WARNINGS": "1"})
        self.notify("workspace/didChangeConfiguration", {"settings": {"yaml": self.settings}})

    def _answer(self, method: str, params: Any) -> Any:
        if method == "workspace/configuration":
            return [self.settings if item.get("section") == "yaml" else None for item in params.get("items", [])]
        return None
