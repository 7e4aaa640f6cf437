"""``tflint-leaks server``: the linter as a Language Server Protocol server over stdio.

A Python document is linted when it is opened, changed (debounced) and saved, from the editor's
in-memory text (nothing is written to disk), against an index of the workspace's other files
(read from disk, or from the editor when they are open) so that ``tf.function``s defined in
another file resolve. Settings come from the nearest ``pyproject.toml`` above the document.
Fixes and ``noqa`` suppressions are offered as quick fixes; hovering a line with a finding shows
the rule's docs.

pygls and lsprotocol are the optional ``server`` extra: only this module imports them, and the
command line imports this module only for ``tflint-leaks server``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import PositionCodec, TextDocument

from tflint_leaks import __version__
from tflint_leaks.analysis.index import ModuleIndex
from tflint_leaks.analysis.project import ProjectIndex
from tflint_leaks.config import ConfigError, Configuration
from tflint_leaks.diagnostics import Applicability, Diagnostic, Edit, Location, Severity
from tflint_leaks.engine.discovery import EXTENSIONS, discover, skipped
from tflint_leaks.engine.indexing import Indexes
from tflint_leaks.engine.notebook import is_notebook
from tflint_leaks.engine.runner import lint_source
from tflint_leaks.engine.suppression import noqa_edits
from tflint_leaks.registry import BY_CODE, NEVER_NOQA
from tflint_leaks.source import SourceError, read_source, split_lines

SOURCE = "tflint-leaks"
#: Seconds of quiet after a change before the document is linted again; a client may set
#: another with the ``debounce`` initialization option.
DEBOUNCE = 0.3
_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
}


class Lines:
    """A text's lines, to turn 1-based line/column (characters) into LSP positions (0-based,
    in the code units the client negotiated, UTF-16 by default)."""

    def __init__(self, text: str, codec: PositionCodec) -> None:
        self.text = text
        self.lines = split_lines(text)
        self.codec = codec

    def position(self, location: Location) -> types.Position:
        line = max(location.line - 1, 0)
        prefix = self.lines[line][: location.column - 1] if line < len(self.lines) else ""
        return types.Position(line=line, character=int(self.codec.client_num_units(prefix)))

    def range(self, start: Location, end: Location) -> types.Range:
        return types.Range(start=self.position(start), end=self.position(end))


@dataclass(frozen=True)
class Finding:
    """A diagnostic as linted and as sent to the client."""

    diagnostic: Diagnostic
    lsp: types.Diagnostic


@dataclass(frozen=True)
class Linted:
    """The last lint of an open document: the text and version its findings refer to."""

    version: int | None
    lines: Lines
    findings: tuple[Finding, ...] = ()
    #: Diagnostics about the set-up rather than the code (a broken configuration).
    problems: tuple[types.Diagnostic, ...] = ()

    def diagnostics(self) -> list[types.Diagnostic]:
        return [*self.problems, *(finding.lsp for finding in self.findings)]


def lintable(path: Path) -> bool:
    return path.suffix in EXTENSIONS and not is_notebook(path)


class ProjectFiles:
    """The workspace folders' files, found as the command line finds them (each file's
    configuration, its excludes) and indexed by the engine, one index per file kept while its
    text is unchanged. A file is read again when its size or time changes; open documents are
    indexed from the editor's text instead."""

    def __init__(self) -> None:
        self._files: list[Path] | None = None
        self._stamps: dict[Path, tuple[int, int]] = {}
        self.indexes = Indexes()

    def scan(self, roots: Iterable[Path]) -> None:
        """List the workspace's files (minus their excludes), once."""
        if self._files is not None:
            return
        self._files = []
        for root in roots:
            try:
                self._files.extend(discover([root], Configuration()).files)
            except ConfigError:
                continue  # Reported on the documents that use this configuration.

    def add(self, path: Path) -> None:
        """A file saved from the editor: indexed from disk from now on."""
        if self._files is not None and path not in self._files:
            self._files.append(path)

    def _from_disk(self, path: Path) -> ModuleIndex | None:
        try:
            stat = path.stat()
            stamp = (stat.st_mtime_ns, stat.st_size)
            if self._stamps.get(path) != stamp:
                self.indexes.index(path, read_source(path))
                self._stamps[path] = stamp
        except (OSError, SourceError):
            self._stamps.pop(path, None)
            self.indexes.forget(path)
        return self.indexes.known(path)

    def forget(self, path: Path) -> None:
        """A document closed: its file is read from disk again."""
        self._stamps.pop(path, None)

    def project(self, documents: Iterable[TextDocument]) -> ProjectIndex:
        """Every indexed file, open documents as the editor has them."""
        buffers = {
            path: document
            for document in documents
            if (path := document_path(document)) is not None and lintable(path)
        }
        modules = [self._from_disk(p) for p in self._files or () if p not in buffers]
        modules += [self.indexes.index(p, d.source) for p, d in buffers.items()]
        return ProjectIndex(m for m in modules if m is not None)


def document_path(document: TextDocument) -> Path | None:
    """The file a document is, if it is one (not an untitled buffer or a notebook cell)."""
    path = to_fs_path(document.uri) if document.uri.startswith("file:") else None
    return Path(path).absolute() if path else None


class Session:
    """What the server knows between requests: open documents, their last lint, the index."""

    def __init__(self, server: LanguageServer) -> None:
        self.server = server
        self.files = ProjectFiles()
        self.open: set[str] = set()
        self.linted: dict[str, Linted] = {}
        self._pending: dict[str, asyncio.TimerHandle] = {}
        self.debounce = DEBOUNCE

    def configure(self, options: object) -> None:
        """The client's initialization options: ``{"debounce": seconds}``."""
        value = options.get("debounce", DEBOUNCE) if isinstance(options, dict) else DEBOUNCE
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            self.log(f"initialization option `debounce` must be a number of seconds: {value!r}")
            return
        self.debounce = float(value)

    def log(self, message: str) -> None:
        self.server.window_log_message(
            types.LogMessageParams(type=types.MessageType.Warning, message=message)
        )

    def roots(self) -> list[Path]:
        workspace = self.server.workspace
        uris = [folder.uri for folder in workspace.folders.values()] or [workspace.root_uri]
        paths = (to_fs_path(uri) for uri in uris if uri and uri.startswith("file:"))
        return [Path(path) for path in paths if path]

    def codec(self) -> PositionCodec:
        return PositionCodec(self.server.workspace.position_encoding)

    def schedule(self, uri: str) -> None:
        """Lint ``uri`` once the user has stopped typing for :attr:`debounce` seconds."""
        self.cancel(uri)
        loop = asyncio.get_running_loop()
        self._pending[uri] = loop.call_later(self.debounce, self.publish, uri)

    def cancel(self, uri: str) -> None:
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()

    def publish(self, uri: str) -> None:
        """Lint an open document and send its diagnostics."""
        self._pending.pop(uri, None)
        if uri not in self.open:
            return
        document = self.server.workspace.get_text_document(uri)
        linted = self.lint(document)
        self.linted[uri] = linted
        self.server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri, version=document.version, diagnostics=linted.diagnostics()
            )
        )

    def close(self, uri: str) -> None:
        self.cancel(uri)
        self.open.discard(uri)
        self.linted.pop(uri, None)
        path = document_path(self.server.workspace.get_text_document(uri))
        if path is not None:
            self.files.forget(path)
        self.server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
        )

    def lint(self, document: TextDocument) -> Linted:
        lines = Lines(document.source, self.codec())
        path = document_path(document)
        if path is None or not lintable(path):
            return Linted(document.version, lines)
        configuration = Configuration()
        try:
            settings = configuration.for_path(path)
            excluded = skipped(path, configuration)
        except ConfigError as error:
            problem = types.Diagnostic(
                range=types.Range(start=types.Position(0, 0), end=types.Position(0, 0)),
                message=f"configuration error: {error}",
                severity=types.DiagnosticSeverity.Error,
                source=SOURCE,
            )
            return Linted(document.version, lines, problems=(problem,))
        if excluded:
            return Linted(document.version, lines)
        self.files.scan(self.roots())
        others = (
            self.server.workspace.get_text_document(uri) for uri in self.open - {document.uri}
        )
        project = self.files.project(others)
        result = lint_source(document.source, path, settings, project, self.files.indexes)
        for message in [*result.warnings, *result.tracebacks]:
            self.log(message)
        findings = tuple(
            Finding(d, self._to_lsp(d, path, lines)) for d in result.diagnostics if d.cell is None
        )
        return Linted(document.version, lines, findings)

    def _to_lsp(self, diagnostic: Diagnostic, path: Path, lines: Lines) -> types.Diagnostic:
        code = BY_CODE.get(diagnostic.code)
        related = []
        for other in diagnostic.related:
            other_path = Path(other.file).absolute()
            where = lines if other_path == path else self._lines_of(other_path)
            related.append(
                types.DiagnosticRelatedInformation(
                    location=types.Location(
                        uri=from_fs_path(str(other_path)) or other.file,
                        range=where.range(other.start, other.end),
                    ),
                    message=other.message,
                )
            )
        return types.Diagnostic(
            range=lines.range(diagnostic.start, diagnostic.end),
            message=diagnostic.message,
            severity=_SEVERITY[diagnostic.severity],
            code=diagnostic.code,
            code_description=types.CodeDescription(href=code.url) if code else None,
            source=SOURCE,
            related_information=related or None,
        )

    def _lines_of(self, path: Path) -> Lines:
        """Another file's lines: the editor's text if it is open, else the file on disk."""
        uri = from_fs_path(str(path))
        if uri in self.open:
            return Lines(self.server.workspace.get_text_document(uri).source, self.codec())
        try:
            return Lines(read_source(path), self.codec())
        except SourceError:
            return Lines("", self.codec())

    def on_lines(self, uri: str, first: int, last: int) -> Iterator[Finding]:
        """The findings of the last lint of ``uri`` on lines ``first``..``last`` (0-based)."""
        linted = self.linted.get(uri)
        for finding in linted.findings if linted else ():
            found = finding.lsp.range
            if found.start.line <= last and first <= found.end.line:
                yield finding

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        linted = self.linted.get(uri)
        only = params.context.only
        if linted is None or (
            only and not any(types.CodeActionKind.QuickFix.value.startswith(k) for k in only)
        ):
            return []
        document = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=linted.version)

        def action(
            title: str, finding: Finding, edits: list[types.TextEdit], preferred: bool = False
        ) -> types.CodeAction:
            change = types.TextDocumentEdit(text_document=document, edits=list(edits))
            return types.CodeAction(
                title=title,
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[finding.lsp],
                edit=types.WorkspaceEdit(document_changes=[change]),
                is_preferred=preferred or None,
            )

        fixes: list[types.CodeAction] = []
        suppressions: dict[tuple[int, str], types.CodeAction] = {}
        for finding in self.on_lines(uri, params.range.start.line, params.range.end.line):
            diagnostic = finding.diagnostic
            fix = diagnostic.fix
            if fix is not None:
                safe = fix.applicability is Applicability.SAFE
                title = f"{fix.message}{'' if safe else ' (unsafe)'}"
                edits = [_text_edit(edit, linted.lines) for edit in fix.edits]
                fixes.append(action(title, finding, edits, preferred=safe))
            key = (diagnostic.start.line, diagnostic.code)
            if diagnostic.code not in NEVER_NOQA and key not in suppressions:
                noqa = noqa_edits(linted.lines.text, {diagnostic.start.line: [diagnostic.code]})
                if noqa:
                    title = f"Suppress {diagnostic.code} with noqa"
                    edits = [_text_edit(edit, linted.lines) for edit in noqa]
                    suppressions[key] = action(title, finding, edits)
        return [*fixes, *suppressions.values()]

    def hover(self, params: types.HoverParams) -> types.Hover | None:
        line = params.position.line
        findings = list(self.on_lines(params.text_document.uri, line, line))
        sections: dict[str, str] = {}
        for finding in findings:
            diagnostic = finding.diagnostic
            code = BY_CODE.get(diagnostic.code)
            if code is not None and code.code not in sections:
                title = f"**{code.code}** `{code.name}`: {diagnostic.message}"
                sections[code.code] = f"{title}\n\n{code.docs()}"
        if not sections:
            return None
        return types.Hover(
            contents=types.MarkupContent(
                kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(sections.values())
            ),
            range=findings[0].lsp.range,
        )


def _text_edit(edit: Edit, lines: Lines) -> types.TextEdit:
    return types.TextEdit(range=lines.range(edit.start, edit.end), new_text=edit.content)


def create_server() -> LanguageServer:
    server = LanguageServer(SOURCE, __version__)
    session = Session(server)

    @server.feature(types.INITIALIZE)
    def initialize(params: types.InitializeParams) -> None:
        session.configure(params.initialization_options)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        session.open.add(params.text_document.uri)
        session.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(params: types.DidChangeTextDocumentParams) -> None:
        session.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        path = document_path(server.workspace.get_text_document(uri))
        if path is not None:
            session.files.add(path)
        session.cancel(uri)
        session.publish(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        session.close(params.text_document.uri)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    def code_action(params: types.CodeActionParams) -> list[types.CodeAction]:
        return session.code_actions(params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(params: types.HoverParams) -> types.Hover | None:
        return session.hover(params)

    return server


def serve() -> None:
    """Serve over stdin/stdout until the client says exit."""
    create_server().start_io()
