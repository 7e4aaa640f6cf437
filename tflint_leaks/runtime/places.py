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
import os
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
class Place:
    """A finding located in the code as the child runs it (absolute file, joined lines)."""

    file: str
    line: int
    loop: int | None = None
    tf_function: Site | None = None
    caller: CallAt | None = None  # the call of a method (TFL104's ``caller``)
    call: CallAt | None = None  # the call whose argument is flagged

    @property
    def site(self) -> Site:
        return (self.file, self.line)

    @property
    def loop_site(self) -> Site | None:
        return None if self.loop is None else (self.file, self.loop)

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
        loop = tf_function = caller = None
        for related in diagnostic.related:
            related_line = self._related_line(diagnostic, related)
            if related.role is RelatedRole.LOOP and loop is None:
                loop = related_line
            elif related.role is RelatedRole.TF_FUNCTION and tf_function is None:
                tf_function = (protocol.absolute(related.file), related_line)
            elif related.role is RelatedRole.CALLER and caller is None:
                caller = self.call_at(related.file, related_line, related.start.column)
        return Place(
            file=protocol.absolute(diagnostic.file),
            line=line,
            loop=loop,
            tf_function=tf_function,
            caller=caller,
            call=self.call_at(diagnostic.file, line, diagnostic.start.column),
        )

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


def display_path(path: str) -> str:
    """``path`` relative to the current directory when it is below it, else as it is."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def place_name(site: CallSite) -> str:
    """``train.py:12``, or ``train.ipynb:cell 3:4`` in a notebook."""
    cell = f"cell {site.cell}:" if site.cell is not None else ""
    return f"{site.file}:{cell}{site.line}"
