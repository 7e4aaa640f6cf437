"""Jupyter notebooks: linted as the Python of their code cells, reported per cell.

:func:`read_notebook` joins the code cells in order into one text. IPython syntax at the start
of a line (line magics ``%time``, shell escapes ``!pip``, help ``?``) becomes ``pass`` at the same
indentation, so no other position moves; a cell magic (``%%bash``) hides its whole cell unless
its body is Python (``%%time``). A cell that does not parse even so is reported (``TFL001`` with
the cell) and left out as blank lines. :meth:`Notebook.to_cells` maps a finding's lines back to
its cell; ``--fix`` edits the cells' sources in the notebook's JSON and nothing else.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tflint_leaks.diagnostics import Diagnostic, Edit, Fix, Location, Related
from tflint_leaks.registry import SYNTAX_ERROR

SUFFIX = ".ipynb"
#: The notebook format version read and written (Jupyter's since 2015).
NBFORMAT = 4
_MAGIC = re.compile(r"^(?P<indent>[ \t]*)(?:%|!|\?)")
#: Cell magics whose body is Python.
_PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})


class NotebookError(Exception):
    """The file is not a notebook this tool can read."""


def is_notebook(path: Path | str) -> bool:
    return str(path).endswith(SUFFIX)


def mask(source: str) -> str:
    """``source`` (one cell) with IPython syntax replaced by ``pass``; same lines, and the same
    columns on every line that is Python."""
    lines = source.splitlines(keepends=True)
    if lines and lines[0].startswith("%%"):
        name = lines[0][2:].split(maxsplit=1)[0] if lines[0][2:].strip() else ""
        if name not in _PYTHON_CELL_MAGICS:
            return "".join("\n" if line.endswith("\n") else "" for line in lines)
    masked = []
    for line in lines:
        match = _MAGIC.match(line)
        if match is None:
            masked.append(line)
        else:
            ending = line[len(line.rstrip("\r\n")) :]
            masked.append(f"{match.group('indent')}pass{ending}")
    return "".join(masked)


def cell_source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def load(text: str) -> dict[str, Any]:
    try:
        notebook = json.loads(text)
    except json.JSONDecodeError as error:
        raise NotebookError(f"not a valid notebook: {error.msg} at line {error.lineno}") from None
    version = notebook.get("nbformat") if isinstance(notebook, dict) else None
    if version is not None and version != NBFORMAT:
        raise NotebookError(
            f"not a valid notebook: nbformat {version} is not supported "
            f"(save it as nbformat {NBFORMAT})"
        )
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise NotebookError("not a valid notebook: no `cells` list")
    return notebook


def dump(notebook: dict[str, Any]) -> str:
    """As nbformat writes a notebook (sorted keys, one-space indent, a final newline)."""
    return json.dumps(notebook, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class CellSpan:
    cell: int
    #: The cell's first line in the joined text (1-based) and its number of lines.
    first_line: int
    lines: int


@dataclass
class Notebook:
    """The joined code of a notebook, where each cell sits in it, and cells that do not parse."""

    path: str
    text: str
    cells: list[CellSpan]
    #: (cell number, its syntax error) for each cell that does not parse and is left out.
    bad_cells: list[tuple[int, SyntaxError]] = field(default_factory=list)

    def _cell_at(self, line: int) -> CellSpan | None:
        for span in self.cells:
            if span.first_line <= line < span.first_line + span.lines:
                return span
        return None

    def to_cells(self, diagnostic: Diagnostic) -> Diagnostic:
        """The finding with cell-relative lines. A fix with an edit in another cell is dropped
        (``--fix`` edits one cell per finding); related locations in other cells say which."""
        span = self._cell_at(diagnostic.start.line)
        if span is None:
            return diagnostic

        def local(location: Location) -> Location:
            return Location(location.line - span.first_line + 1, location.column)

        fix = diagnostic.fix
        if fix is not None:
            inside = all(self._cell_at(e.start.line) == span for e in fix.edits)
            fix = (
                Fix(
                    fix.message,
                    fix.applicability,
                    tuple(Edit(local(e.start), local(e.end), e.content) for e in fix.edits),
                )
                if inside
                else None
            )
        related = []
        for item in diagnostic.related:
            other = self._cell_at(item.start.line) if item.file == self.path else None
            if other is None:
                related.append(item)
                continue
            start = Location(item.start.line - other.first_line + 1, item.start.column)
            end = Location(item.end.line - other.first_line + 1, item.end.column)
            related.append(
                Related(item.role, f"cell {other.cell}: {item.message}", item.file, start, end)
            )
        return replace(
            diagnostic,
            start=local(diagnostic.start),
            end=local(diagnostic.end),
            fix=fix,
            related=tuple(related),
            cell=span.cell,
        )


def read_notebook(path: Path, text: str) -> Notebook:
    """Join the code cells of the notebook ``text`` (read from ``path``)."""
    notebook = load(text)
    shown = str(path)
    pieces: list[str] = []
    cells: list[CellSpan] = []
    bad_cells: list[tuple[int, SyntaxError]] = []
    line = 1
    for number, cell in enumerate(notebook["cells"], start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = mask(cell_source(cell))
        if source and not source.endswith("\n"):
            source += "\n"
        count = source.count("\n")
        try:
            ast.parse(source)
        except SyntaxError as error:
            bad_cells.append((number, error))
            source = "\n" * count
        pieces.append(source)
        cells.append(CellSpan(number, line, count))
        line += count
    return Notebook(shown, "".join(pieces), cells, bad_cells)


def in_cells(notebook: Notebook, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """A notebook's findings with cell-relative lines, and a ``TFL001`` per skipped cell."""
    skipped = [
        replace(
            SYNTAX_ERROR.at(
                notebook.path,
                f"invalid syntax: {error.msg}; the cell is skipped",
                error.lineno or 1,
                error.offset or 1,
            ),
            cell=cell,
        )
        for cell, error in notebook.bad_cells
    ]
    return skipped + [notebook.to_cells(d) for d in diagnostics]
