"""Where a static finding sits in the code the child runs, read from the finding and its source.

A finding names a file, a line and a column (cell-relative in a notebook) and related locations
(the ``tf-function`` it retraces, the ``loop`` that repeats it, the ``caller`` of a method). The
child sees absolute file names and, for a notebook, the lines of its code cells joined in order.
:class:`Sources` turns a finding into a :class:`Place` in those terms, and reads the call
expression that holds a flagged argument (its lines, and which argument it is), so that the
runtime can count the calls made at that call site and the values of that argument.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import tokenize
from dataclasses import dataclass
from pathlib import Path

from tflint_leaks.diagnostics import CallSite, Diagnostic, Related, RelatedRole
from tflint_leaks.engine.notebook import Notebook, NotebookError, is_notebook, read_notebook
from tflint_leaks.runtime import protocol

Site = tuple[str, int]


@dataclass(frozen=True)
class CallAt:
    """The call expression holding a finding: its lines, and the flagged argument in it."""

    first: int
    last: int
    position: int | None = None  # the flagged positional argument's index
    keyword: str | None = None  # or the flagged keyword argument's name


@dataclass(frozen=True)
class Span:
    """The lines of a statement: its head (the lines before its body; every line of a simple
    statement), the whole statement, and the body of a compound statement. The child counts a
    run of a statement when a line of its head runs coming from outside the statement (a
    ``with`` line runs again on exit from its body, and that is not a run), and a run of a
    loop header at every return to it; the body tells the final check of a loop from the start
    of an iteration."""

    head: tuple[int, int]
    whole: tuple[int, int]
    body: tuple[int, int] | None = None
    loop: bool = False

    @classmethod
    def line(cls, line: int) -> Span:
        """A one-line simple statement: all there is to know when the source cannot be read."""
        return cls((line, line), (line, line))


@dataclass(frozen=True)
class Place:
    """A finding located in the code as the child runs it (absolute file, joined lines)."""

    file: str
    line: int
    loop: int | None = None
    tf_function: Site | None = None
    caller: CallAt | None = None  # the call of a method (TFL104's ``caller``)
    call: CallAt | None = None  # the call whose argument is flagged
    #: The line of the ``tape`` related location (TFL201: the work that runs while the tape is
    #: still alive after its last use).
    tape: int | None = None
    #: The statements at the finding's line, its loop header and its ``tape`` line.
    statement: Span | None = None
    loop_statement: Span | None = None
    tape_statement: Span | None = None

    @property
    def site(self) -> Site:
        return (self.file, self.line)

    @property
    def loop_site(self) -> Site | None:
        return None if self.loop is None else (self.file, self.loop)

    @property
    def tape_site(self) -> Site | None:
        return None if self.tape is None else (self.file, self.tape)

    def call_lines(self) -> range:
        """The lines of the call the finding is about: a call site on any of them is the
        finding's (a call spanning lines reports the line Python executes it on)."""
        call = self.caller or self.call
        return range(call.first, call.last + 1) if call else range(self.line, self.line + 1)


class Sources:
    """Reads each finding's file once: its text (a notebook's joined cells) and syntax tree."""

    def __init__(self) -> None:
        self._texts: dict[str, str | None] = {}
        self._trees: dict[str, ast.Module | None] = {}
        self._notebooks: dict[str, Notebook | None] = {}
        self._comments: dict[str, dict[int, int]] = {}

    def notebook(self, file: str) -> Notebook | None:
        """The notebook at ``file`` (None for a Python file or an unreadable notebook)."""
        if is_notebook(file) and file not in self._notebooks:
            try:
                text = Path(file).read_text(encoding="utf-8")
                self._notebooks[file] = read_notebook(Path(file), text)
            except (OSError, UnicodeDecodeError, NotebookError):
                self._notebooks[file] = None
        return self._notebooks.get(file)

    def text(self, file: str) -> str | None:
        """The code of ``file`` with the lines the child runs (a notebook's cells joined)."""
        if file not in self._texts:
            notebook = self.notebook(file)
            try:
                self._texts[file] = (
                    notebook.text if notebook else Path(file).read_text(encoding="utf-8")
                )
            except (OSError, UnicodeDecodeError):
                self._texts[file] = None
        return self._texts[file]

    def source_line(self, file: str, line: int) -> str:
        """The code at ``line`` of ``file`` as the child runs it, without its comment and
        stripped ("" if unknown)."""
        text = self.text(file)
        lines = text.splitlines() if text is not None else []
        if not 0 < line <= len(lines):
            return ""
        if file not in self._comments:
            self._comments[file] = _comments(text or "")
        column = self._comments[file].get(line)
        return lines[line - 1][:column].strip()

    def tree(self, file: str) -> ast.Module | None:
        if file not in self._trees:
            text = self.text(file)
            try:
                self._trees[file] = None if text is None else ast.parse(text)
            except (SyntaxError, ValueError):
                self._trees[file] = None
        return self._trees[file]

    def line(self, file: str, cell: int | None, line: int) -> int:
        """A line as the child sees it: a notebook's cell-relative line made absolute."""
        notebook = self.notebook(file)
        if notebook is None or cell is None:
            return line
        span = next((s for s in notebook.cells if s.cell == cell), None)
        return line if span is None else span.joined_line(line)

    def show(self, file: str, line: int) -> CallSite:
        """A line the child ran, as the user reads it: a relative path when under the current
        directory, and in a notebook the cell and the line in it."""
        shown = display_path(file)
        notebook = self.notebook(file)
        span = (
            next((s for s in notebook.cells if s.first_line <= line < s.first_line + s.lines), None)
            if notebook
            else None
        )
        if span is None:
            return CallSite(shown, line, 0, 0)
        return CallSite(shown, span.cell_line(line), 0, 0, cell=span.cell)

    def _related_line(self, diagnostic: Diagnostic, related: Related) -> int:
        # in a notebook, a related location's message starts with its cell: "cell 3: ..."
        cell = diagnostic.cell
        head = related.message.split(":", 1)[0]
        if head.startswith("cell ") and head[5:].isdigit():
            cell = int(head[5:])
        return self.line(related.file, cell, related.start.line)

    def place(self, diagnostic: Diagnostic) -> Place:
        line = self.line(diagnostic.file, diagnostic.cell, diagnostic.start.line)
        loop = tf_function = caller = tape = None
        for related in diagnostic.related:
            related_line = self._related_line(diagnostic, related)
            if related.role is RelatedRole.LOOP and loop is None:
                loop = related_line
            elif related.role is RelatedRole.TF_FUNCTION and tf_function is None:
                tf_function = (protocol.absolute(related.file), related_line)
            elif related.role is RelatedRole.CALLER and caller is None:
                caller = self.call_at(related.file, related_line, related.start.column)
            elif (
                related.role is RelatedRole.TAPE
                and tape is None
                and related.file == diagnostic.file
            ):
                tape = related_line
        file = diagnostic.file
        return Place(
            file=protocol.absolute(file),
            line=line,
            loop=loop,
            tf_function=tf_function,
            caller=caller,
            call=self.call_at(file, line, diagnostic.start.column),
            tape=tape,
            statement=self.statement(file, line),
            loop_statement=None if loop is None else self.statement(file, loop),
            tape_statement=None if tape is None else self.statement(file, tape),
        )

    def statement(self, file: str, line: int) -> Span:
        """The innermost statement whose head holds ``line`` (a one-line statement when the
        file cannot be parsed or no statement starts there)."""
        tree = self.tree(file)
        found: tuple[tuple[int, int], Span] | None = None
        for node in ast.walk(tree) if tree is not None else ():
            if not isinstance(node, ast.stmt):
                continue
            first, last = _first_line(node), node.end_lineno or node.lineno
            body = getattr(node, "body", None)
            span = Span((first, last), (first, last))
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                start = _first_line(body[0])
                head = (first, max(node.lineno, start - 1))
                inside = (start, body[-1].end_lineno or body[-1].lineno)
                loop = isinstance(node, ast.For | ast.AsyncFor | ast.While)
                span = Span(head, (first, last), inside, loop)
            at = (first, node.col_offset)
            if span.head[0] <= line <= span.head[1] and (found is None or at > found[0]):
                found = (at, span)
        return found[1] if found else Span.line(line)

    def call_at(self, file: str, line: int, column: int) -> CallAt | None:
        """The innermost call that starts at ``line``/``column`` (1-based, in characters), or
        of which an argument does (a finding on an argument)."""
        tree, text = self.tree(file), self.text(file)
        if tree is None or text is None:
            return None
        lines = text.splitlines()
        # ``ast`` counts columns in UTF-8 bytes
        offset = len(lines[line - 1][: column - 1].encode("utf-8")) if line <= len(lines) else -1

        def starts_here(node: ast.expr) -> bool:
            return node.lineno == line and node.col_offset == offset

        arguments: list[CallAt] = []  # calls of which an argument starts here, outermost first
        calls: list[CallAt] = []  # calls that start here, outermost first
        for node in ast.walk(tree):
            last = (node.end_lineno or 0) if isinstance(node, ast.Call) else 0
            if not isinstance(node, ast.Call) or not node.lineno <= line <= last:
                continue
            if starts_here(node):
                calls.append(CallAt(node.lineno, last))
            for index, argument in enumerate(node.args):
                if isinstance(argument, ast.Starred):
                    break
                if starts_here(argument):
                    arguments.append(CallAt(node.lineno, last, position=index))
            arguments += [
                CallAt(node.lineno, last, keyword=keyword.arg)
                for keyword in node.keywords
                if keyword.arg and starts_here(keyword.value)
            ]
        # a flagged argument belongs to the innermost call that takes it; a call named by its
        # start (``Model().forward(x)``, which ``Model()`` also starts) is the outermost
        return arguments[-1] if arguments else (calls[0] if calls else None)


def _comments(text: str) -> dict[int, int]:
    """The column where each line's comment starts (lines without one are absent)."""
    found: dict[int, int] = {}
    with contextlib.suppress(tokenize.TokenError, SyntaxError):
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                found[token.start[0]] = token.start[1]
    return found


def _first_line(statement: ast.stmt) -> int:
    """Where a statement starts: at its first decorator when it is a decorated definition."""
    decorators: list[ast.expr] = getattr(statement, "decorator_list", [])
    return min([statement.lineno, *(decorator.lineno for decorator in decorators)])


def display_path(path: str) -> str:
    """``path`` relative to the current directory when it is below it, else as it is."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def place_name(site: CallSite) -> str:
    """``train.py:12``, or ``train.ipynb:cell 3:4`` in a notebook."""
    cell = f"cell {site.cell}:" if site.cell is not None else ""
    return f"{site.file}:{cell}{site.line}"
