"""The pygls wiring of `grpo lsp`.

Validation never runs on the message loop: a change (re)starts a short debounce timer per document when changes come
in a burst (see `schedule`), then the check runs in a worker thread, and its diagnostics are published only if the
document has not changed meanwhile (a stale result is dropped, the newer edit has its own check on the way). Hover, completion and code actions reuse the last
check of the current text, or run one off the loop when there is none. Every check is `grpo validate`'s, fix search
included: the editor shows the CLI's hints word for word.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams
from pygls.io_ import StdinAsyncReader, StdoutWriter, run_async
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.workspace import TextDocument, Workspace

from grpo_schema import __version__
from grpo_schema.engine.lines import split_lines
from grpo_schema.lsp import edits, info, python
from grpo_schema.lsp.analysis import Analysis, check_document, from_utf16
from grpo_schema.lsp.settings import Settings, from_client


@dataclass
class DocumentState:
    version: int = 0  # bumped on every change we see, whatever the client's own numbering
    pending: asyncio.Task | None = None
    analysis: Analysis | None = None
    analysed_version: int = -1
    changed_at: float = float("-inf")  # time.monotonic() of the last change


@dataclass
class State:
    settings: Settings = field(default_factory=Settings)
    documents: dict[str, DocumentState] = field(default_factory=dict)


class _Unanswerable:
    """What a request whose parameters could not be read becomes once its error is sent: pygls drops it."""

    jsonrpc = None


@dataclass(frozen=True)
class _InvalidRequest:
    """A JSON-RPC object that is neither a request, a notification nor a response (only an id, say)."""

    id: int | str | None
    why: str
    jsonrpc = None


def _id_of(data: object) -> int | str | None:
    value = data.get("id") if isinstance(data, dict) else None
    return value if isinstance(value, (int, str)) and not isinstance(value, bool) else None


class EditorLinesDocument(TextDocument):
    """pygls splits a document with str.splitlines, which also breaks at U+2028, U+2029, U+0085 and form feeds
    where the client does not: every edit after such a character would land on the wrong line of our copy.
    Lines here are the protocol's: \n, \r\n or \r."""

    @property
    def lines(self) -> list[str]:
        return split_lines(self.source, keepends=True)


class EditorLinesWorkspace(Workspace):
    def _create_text_document(self, doc_uri, source=None, version=None, language_id=None) -> TextDocument:
        return EditorLinesDocument(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=self._sync_kind,
            position_codec=self._position_codec,
        )


# The longest message body read: a config is at most 1 MB (the loader's limit), sent as JSON with escapes.
MAX_BODY_BYTES = 64 * 1024 * 1024
_OVERSIZED = "grpo/oversizedBody"


class BoundedReader(StdinAsyncReader):
    """A Content-Length past MAX_BODY_BYTES is not read (reading 10**12 bytes ends the process): the reader answers
    a marker body instead, the protocol answers it with an error, and the loop reads on, skipping what follows
    until the next message's header."""

    def readexactly(self, n: int):
        if n <= MAX_BODY_BYTES:
            return super().readexactly(n)
        marker = asyncio.get_running_loop().create_future()
        marker.set_result(json.dumps({"jsonrpc": "2.0", _OVERSIZED: n}).encode())
        return marker


class GrpoProtocol(LanguageServerProtocol):
    def send_error(self, msg_id: int | str | None, code: int, message: str) -> None:
        """A JSON-RPC 2.0 error response, written as a plain object so that an unknown id is `"id": null`."""
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})

    def handle_message(self, message) -> None:  # type: ignore[override]
        """pygls drops what is not a request, notification or response with a log line, and the client waits: answer
        Invalid Request (-32600), as JSON-RPC 2.0 says, and go on serving."""
        if isinstance(message, _InvalidRequest):
            self.send_error(message.id, -32600, f"Invalid Request: {message.why}")
        elif isinstance(message, _Unanswerable):
            return  # its InvalidParams error is sent
        elif not hasattr(message, "jsonrpc"):  # a JSON value that is no object with "jsonrpc", e.g. [] or 5
            self.send_error(
                _id_of(message),
                -32600,
                'Invalid Request: not a JSON-RPC 2.0 object ("jsonrpc": "2.0" with a method, a result or an error)',
            )
        else:
            super().handle_message(message)

    def structure_message(self, data: dict):  # type: ignore[override]
        """pygls raises on a request whose params do not fit the method's type, and the request is then never
        answered (the client waits forever): answer it with InvalidParams (-32602), as JSON-RPC says. (Called by
        json.loads for every object of a message, innermost first: only the envelope has "jsonrpc".)"""
        if _OVERSIZED in data:
            return _InvalidRequest(
                None,
                f"a Content-Length of {data[_OVERSIZED]} bytes is over the limit of "
                f"{MAX_BODY_BYTES}; the message was skipped",
            )
        if "jsonrpc" in data and not {"method", "result", "error"} & data.keys():
            return _InvalidRequest(
                _id_of(data),
                "a message needs a method (a request or notification), or a result or an error (a response)",
            )
        if data.get("jsonrpc", "2.0") != "2.0":
            return _InvalidRequest(_id_of(data), f'"jsonrpc" must be "2.0", not {data["jsonrpc"]!r}')
        try:
            return super().structure_message(data)
        except (JsonRpcInvalidParams, JsonRpcInternalError) as exc:
            if not (isinstance(data, dict) and "id" in data and "method" in data and "error" not in data):
                raise  # a notification or a response: there is no one to answer
            detail = exc.__cause__ if exc.__cause__ is not None else exc
            error = JsonRpcInvalidParams(f"invalid params for {data['method']}: {detail}")
            self._send_response(data["id"], error=error.to_response_error())
            return _Unanswerable()


class GrpoLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "grpo-lsp",
            __version__,
            text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
            protocol_cls=GrpoProtocol,
        )
        self.state = State()
        # One worker: checks of one file are sequential anyway, and a second thread only fights for the GIL.
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="grpo-check")

    def report_server_error(self, error: Exception, source) -> None:  # type: ignore[override]
        """A body that is not JSON (or not UTF-8) reaches here from pygls' reader: answer Parse error (-32700) with
        a null id, as JSON-RPC 2.0 says (the id cannot be read), instead of a pop-up and no answer."""
        if isinstance(error, (json.JSONDecodeError, UnicodeDecodeError)):
            self.protocol.send_error(None, -32700, f"Parse error: {error}")
            return
        super().report_server_error(error, source)

    def _start_io_async(self, stdin=None, stdout=None) -> None:  # type: ignore[override]
        """pygls' own, with a reader that refuses an oversized Content-Length instead of trying to read it."""
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        reader = BoundedReader(stdin or sys.stdin.buffer, self.thread_pool)
        try:
            asyncio.run(
                run_async(
                    stop_event=self._stop_event,
                    reader=reader,
                    protocol=self.protocol,
                    error_handler=self.report_server_error,
                )
            )
        except BrokenPipeError:
            pass  # the client went away
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    def doc(self, uri: str) -> DocumentState:
        return self.state.documents.setdefault(uri, DocumentState())

    def schedule(self, uri: str, delay: float | None = None) -> None:
        """Check the document again. A change that follows the previous one within the debounce interval (fast
        typing, a paste arriving in pieces) waits for that much quiet first; a change after a pause, as in normal
        typing, is checked at once. Either way a newer change supersedes the pending check."""
        state = self.doc(uri)
        state.version += 1
        now = time.monotonic()
        quiet = self.state.settings.debounce_ms / 1000
        burst = now - state.changed_at < quiet
        state.changed_at = now
        if state.pending is not None and not state.pending.done():
            state.pending.cancel()
            burst = True
        wait = (quiet if burst else 0.0) if delay is None else delay
        state.pending = asyncio.get_running_loop().create_task(self._validate(uri, state.version, wait))

    async def _validate(self, uri: str, version: int, wait: float) -> None:
        if wait:
            await asyncio.sleep(wait)
        try:
            analysis = await self.analyse(uri, version)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug in a rule must not take the server down: say so, keep serving
            self.window_log_message(
                lsp.LogMessageParams(type=lsp.MessageType.Error, message=f"grpo: checking {uri} failed: {exc!r}")
            )
            return
        state = self.state.documents.get(uri)
        if analysis is None or state is None or state.version != version:
            return  # stale: a newer edit (or a close) superseded this check
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=uri, diagnostics=analysis.diagnostics, version=self._client_version(uri))
        )

    async def analyse(self, uri: str, version: int | None = None, with_fixes: bool = True) -> Analysis | None:
        """The check of the document's current text (cached per version), computed in the worker thread. It has
        searched for the batch rules' smallest edits, as `grpo validate` does, so that a published diagnostic's
        hint is the CLI's text ("smallest edits: ..."), not a shorter one of the editor's own (the search costs
        about 1.5 ms on a file with a batch error, nothing on one without)."""
        state = self.state.documents.get(uri)
        if state is None:
            return None
        version = state.version if version is None else version
        cached = state.analysis
        if state.analysed_version == version and cached is not None and (cached.with_fixes or not with_fixes):
            return cached
        text = self.workspace.get_text_document(uri).source
        settings = self.state.settings
        loop = asyncio.get_running_loop()
        if python.is_python(uri):  # GRPOConfig(...) calls in a script or notebook
            analysis = await loop.run_in_executor(self.executor, python.check_python_document, text, settings, uri)
        else:
            analysis = await loop.run_in_executor(self.executor, check_document, text, settings, with_fixes, uri)
        if state.version == version:
            state.analysis, state.analysed_version = analysis, version
        return analysis

    def _client_version(self, uri: str) -> int | None:
        return self.workspace.get_text_document(uri).version

    def revalidate_all(self) -> None:
        for uri in list(self.state.documents):
            self.schedule(uri, delay=0)


server = GrpoLanguageServer()


@server.feature(lsp.INITIALIZE)
def initialize(ls: GrpoLanguageServer, params: lsp.InitializeParams) -> None:
    ls.protocol._workspace.__class__ = EditorLinesWorkspace  # made by pygls just before: its documents, our lines
    ls.state.settings = from_client(params.initialization_options, ls.state.settings)


@server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
def did_change_configuration(ls: GrpoLanguageServer, params: lsp.DidChangeConfigurationParams) -> None:
    ls.state.settings = from_client(params.settings, ls.state.settings)
    ls.revalidate_all()


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: GrpoLanguageServer, params: lsp.DidOpenTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, delay=0)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: GrpoLanguageServer, params: lsp.DidChangeTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: GrpoLanguageServer, params: lsp.DidSaveTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, delay=0)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: GrpoLanguageServer, params: lsp.DidCloseTextDocumentParams) -> None:
    state = ls.state.documents.pop(params.text_document.uri, None)
    if state is not None and state.pending is not None:
        state.pending.cancel()
    ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))


@server.feature(
    lsp.TEXT_DOCUMENT_CODE_ACTION,
    lsp.CodeActionOptions(
        code_action_kinds=[lsp.CodeActionKind.QuickFix, edits.FIX_ALL_SAFE, edits.MIGRATE, edits.MIGRATE_IN_RELEASE]
    ),
)
async def code_action(ls: GrpoLanguageServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    uri = params.text_document.uri
    analysis = await ls.analyse(uri)
    if analysis is None or not analysis.is_config:
        return []
    version = ls._client_version(uri)
    only = [str(kind) for kind in params.context.only] if params.context.only else None
    actions: list[lsp.CodeAction] = []
    if analysis.python is not None:  # a script: fixes edit the keyword where it is written
        near = [d for d in analysis.diagnostics if edits.in_range(d, params.range)]
        return python.quick_fixes(uri, version, analysis, near)
    if not only or any(str(k).startswith(lsp.CodeActionKind.QuickFix) for k in only):
        near = [d for d in analysis.diagnostics if edits.in_range(d, params.range)]
        actions += edits.quick_fixes(uri, version, analysis.text, near)
    actions += edits.source_actions(
        uri, version, analysis.text, analysis.result.diagnostics, only, analysis.result.trl_version, analysis.profiles
    )
    return actions


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
async def hover(ls: GrpoLanguageServer, params: lsp.HoverParams) -> lsp.Hover | None:
    uri = params.text_document.uri
    analysis = await ls.analyse(uri)
    if analysis is None or not analysis.is_config:
        return None
    lines = split_lines(analysis.text)
    line = params.position.line
    if analysis.python is not None:  # a keyword's facts, or on the call its schedule
        column = from_utf16(lines[line], params.position.character) if line < len(lines) else 0
        shown = python.hover(analysis, line, column) if line < len(lines) else None
        return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=shown)) if shown else None
    key = info.key_at(lines[line], from_utf16(lines[line], params.position.character)) if line < len(lines) else None
    if key is None:
        return None
    text = info.hover_text(key, analysis.result, analysis.profiles, analysis.world_size_from)
    if text is None:
        return None
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text))


@server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=[":", " ", "-"]))
async def completion(ls: GrpoLanguageServer, params: lsp.CompletionParams) -> lsp.CompletionList | None:
    uri = params.text_document.uri
    if uri not in ls.workspace.text_documents:
        return None  # a file the client never opened: nothing to complete, as hover answers (not a read from disk)
    text = ls.workspace.get_text_document(uri).source
    analysis = await ls.analyse(uri)  # for the active profiles, which may come from a `# grpo:` comment
    if analysis is not None and (not analysis.is_config or analysis.python is not None):  # no YAML keys to offer
        return lsp.CompletionList(is_incomplete=False, items=[])
    profiles = analysis.profiles if analysis is not None else ()
    lines = split_lines(text)
    line = params.position.line
    character = from_utf16(lines[line], params.position.character) if line < len(lines) else 0
    release = info.judged_as(analysis.result) if analysis is not None else None
    items = info.completions(text, line, character, profiles, release)
    return lsp.CompletionList(is_incomplete=False, items=items)


def lsp_command(argv: list[str]) -> int:
    """`grpo lsp`: serve over stdio until the client says exit."""
    import argparse

    parser = argparse.ArgumentParser(prog="grpo lsp", description="Language server for GRPO configs (stdio).")
    parser.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default and only mode)")
    parser.add_argument(
        "--trl-version",
        metavar="X.Y[.Z]",
        help="judge documents against this TRL release unless "
        "the editor's trlVersion setting or a file's `# grpo: --trl-version` comment names another "
        "(default: the trl installed beside this Python, else a repository pin, else 1.16)",
    )
    args = parser.parse_args(argv)
    if args.trl_version:
        from dataclasses import replace

        from grpo_schema.versions import VersionError, parse_version

        try:
            parse_version(args.trl_version)
        except VersionError as exc:  # as every command says it (exit 2)
            print(f"grpo lsp: error: --trl-version: {exc}", file=sys.stderr)
            return 2
        server.state.settings = replace(server.state.settings, trl_version=args.trl_version)
    server.start_io(sys.stdin.buffer, sys.stdout.buffer)
    return 0
