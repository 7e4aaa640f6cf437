"""Jupyter notebooks: linted as the Python of their code cells, reported per cell.

:func:`read_notebook` reads each code cell as IPython runs it (:mod:`.ipython`: magics, shell
escapes and help become ``...``, a ``%%time`` cell is its body, a ``%%bash`` cell is nothing,
the common indentation is removed) and joins the cells in order into one text. A cell IPython
would not run is reported (``TFL001`` with the cell) and left out. :meth:`Notebook.to_cells`
maps a finding back to where it is in its cell. A notebook whose kernel runs another language
(``metadata.language_info.name`` or ``metadata.kernelspec.language``: R, Julia) is not linted;
the run says so.

The notebook's own JSON is never re-serialised: ``--fix`` replaces the ``source`` of the cells it
changes and nothing else, in the file's own style (:func:`replace_sources`), and
:class:`RawNotebook` maps a cell position to the line and column of the ``.ipynb`` file (for
SARIF, whose readers show the file as it is).
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tflint_leaks.analysis.eras import CodePin, banner_pin
from tflint_leaks.diagnostics import Diagnostic, Edit, Fix, Location, Related
from tflint_leaks.engine.ipython import Mapped, python_of_cell
from tflint_leaks.registry import SYNTAX_ERROR
from tflint_leaks.source import NOTEBOOK_SUFFIX, invalid_syntax, split_lines

SUFFIX = NOTEBOOK_SUFFIX
#: The notebook format version read (Jupyter's since 2015).
NBFORMAT = 4


class NotebookError(Exception):
    """The file is not a notebook this tool can read."""


def is_notebook(path: Path | str) -> bool:
    return str(path).endswith(SUFFIX)


def cell_source(cell: Mapping[str, Any]) -> str:
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


def kernel_language(notebook: Mapping[str, Any]) -> str | None:
    """The language the notebook's kernel runs, if its metadata says."""
    metadata = notebook.get("metadata")
    if not isinstance(metadata, dict):
        return None
    for section, key in (("language_info", "name"), ("kernelspec", "language")):
        value = metadata.get(section)
        if isinstance(value, dict) and isinstance(value.get(key), str):
            return str(value[key])
    return None


@dataclass(frozen=True)
class CellCode:
    """One code cell as linted: where its Python starts in the joined text, the Python
    (mapped to the cell's source) and the source."""

    cell: int
    first_line: int
    code: Mapped
    source: str

    @property
    def lines(self) -> int:
        return len(split_lines(self.code.text, keepends=True))

    def _offset(self, text: str, location: Location, first_line: int) -> int:
        lines = split_lines(text, keepends=True)
        line = location.line - first_line
        if not 0 <= line < len(lines):
            return len(text) if line >= 0 else 0
        before = sum(len(piece) for piece in lines[:line])
        return min(before + max(location.column - 1, 0), len(text))

    def _location(self, origin: int) -> Location:
        before = split_lines(self.source[:origin])
        return Location(len(before), len(before[-1]) + 1)

    def start(self, location: Location) -> Location:
        """Where a start position (in the joined text) is in the cell."""
        return self._location(
            self.code.origin(self._offset(self.code.text, location, self.first_line))
        )

    def end(self, location: Location) -> Location:
        """Where an end position (exclusive) is in the cell."""
        offset = self._offset(self.code.text, location, self.first_line)
        if offset > 0 and self.code.copied(offset - 1, offset):
            return self._location(self.code.origin(offset - 1) + 1)
        return self._location(self.code.origin(offset))

    def edit(self, edit: Edit) -> Edit | None:
        """The edit in the cell's coordinates; None when it touches text IPython syntax
        became (it has no place in the cell). An insertion goes before the character it is
        at, or after the one before it."""
        text = self.code.text
        start = self._offset(text, edit.start, self.first_line)
        end = self._offset(text, edit.end, self.first_line)
        if start == end and start < len(text) and self.code.copied(start, start + 1):
            at = self.code.origin(start)
        elif start == end and start > 0 and self.code.copied(start - 1, start):
            at = self.code.origin(start - 1) + 1
        elif start < end and self.code.copied(start, end):
            at = self.code.origin(start)
        else:
            return None
        return Edit(self._location(at), self._location(at + end - start), edit.content)

    def joined_line(self, line: int) -> int:
        """The line of the joined text where the cell's line ``line`` is (for a line IPython
        syntax became ``...``, the line of the ``...``)."""
        lines = split_lines(self.source, keepends=True)
        start = sum(len(text) for text in lines[: line - 1])
        end = start + max(len(lines[line - 1]) if 0 < line <= len(lines) else 0, 1)
        offset = self.code.first_from(start, end)
        if offset is None:
            return self.first_line
        return self.first_line + len(split_lines(self.code.text[:offset])) - 1

    def cell_line(self, line: int) -> int:
        """The cell's line that line ``line`` of the joined text came from."""
        return self.start(Location(line, 1)).line

    def replaced_lines(self, *, partly: bool = False) -> list[int]:
        """The cell's lines IPython syntax took the place of (magics, shell escapes, help):
        lines with text of which nothing is in the cell's Python (with ``partly``, also lines
        of which some is not: ``files = !ls``)."""
        copied = [False] * (len(self.source) + 1)
        for index, (start, origin, is_copied) in enumerate(self.code.runs):
            end = self.code.runs[index + 1][0] if index + 1 < len(self.code.runs) else None
            if is_copied:
                length = (end if end is not None else len(self.code.text)) - start
                copied[origin : origin + length] = [True] * length
        replaced = []
        offset = 0
        for number, text in enumerate(split_lines(self.source, keepends=True), start=1):
            marks = [copied[offset + i] for i, char in enumerate(text) if not char.isspace()]
            if marks and not (all(marks) if partly else any(marks)):
                replaced.append(number)
            offset += len(text)
        return replaced

    def python_line(self, location: Location) -> int | None:
        """The line of the cell's Python (counted from :attr:`first_line`) that a position in
        the cell is on; None when IPython syntax is there."""
        lines = split_lines(self.source, keepends=True)
        origin = sum(len(line) for line in lines[: location.line - 1]) + location.column - 1
        offset = self.code.offset_of(origin)
        if offset is None:
            return None
        return self.first_line + len(split_lines(self.code.text[:offset])) - 1


@dataclass(frozen=True)
class SkippedCell:
    """A code cell left out because IPython would not run it, and why: plain data, so that
    it keeps its position when the notebook is sent from a worker (a ``SyntaxError`` made by
    hand loses its line and column when pickled)."""

    cell: int
    message: str
    line: int
    column: int


@dataclass
class Notebook:
    """The joined code of a notebook, where each cell sits in it, and cells that do not run."""

    path: str
    text: str
    cells: list[CellCode]
    #: The cells left out, with their syntax error (a position in the cell).
    bad_cells: list[SkippedCell] = field(default_factory=list)
    #: A warning for the run: why the notebook is not linted at all (another kernel's
    #: language), or the IPython lines of a script exported from one.
    note: str | None = None
    #: Positions name their cell (a notebook); a script exported from one has one "cell",
    #: the file, and positions are the file's.
    numbered: bool = True
    #: What a cell printed that says which Keras the notebook ran (:func:`~tflint_leaks.
    #: analysis.eras.banner_pin`), on the cell's first line.
    banner: CodePin | None = None

    def _cell_at(self, line: int) -> CellCode | None:
        index = bisect.bisect_right([c.first_line for c in self.cells], line) - 1
        if index < 0:
            return None
        cell = self.cells[index]
        return cell if line < cell.first_line + cell.lines else None

    def to_cells(self, diagnostic: Diagnostic) -> Diagnostic:
        """The finding with cell-relative positions. A fix with an edit in another cell, or in
        text that IPython syntax became, is dropped (``--fix`` edits one cell per finding);
        related locations in other cells say which."""
        cell = self._cell_at(diagnostic.start.line)
        if cell is None:
            return diagnostic
        fix = diagnostic.fix
        if fix is not None:
            edits = [
                cell.edit(e) if self._cell_at(e.start.line) is cell else None for e in fix.edits
            ]
            fix = Fix(fix.message, fix.applicability, tuple(e for e in edits if e is not None))
            fix = fix if len(fix.edits) == len(edits) else None
        related = []
        for item in diagnostic.related:
            other = self._cell_at(item.start.line) if item.file == self.path else None
            if other is None:
                related.append(item)
                continue
            related.append(
                Related(
                    item.role,
                    f"cell {other.cell}: {item.message}" if self.numbered else item.message,
                    item.file,
                    other.start(item.start),
                    other.end(item.end),
                    other.cell if self.numbered else None,
                )
            )
        return replace(
            diagnostic,
            start=cell.start(diagnostic.start),
            end=cell.end(diagnostic.end),
            fix=fix,
            related=tuple(related),
            cell=cell.cell if self.numbered else None,
        )


def read_notebook(path: Path, text: str) -> Notebook:
    """Join the code cells of the notebook ``text`` (read from ``path``) as IPython runs them."""
    notebook = load(text)
    shown = str(path)
    language = kernel_language(notebook)
    if language is not None and language.lower() != "python":
        note = f"{shown}: not linted: the notebook's kernel runs {language}, not Python"
        return Notebook(shown, "", [], note=note)
    pieces: list[str] = []
    cells: list[CellCode] = []
    bad_cells: list[SkippedCell] = []
    banner: CodePin | None = None
    line = 1
    for number, cell in enumerate(notebook["cells"], start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell_source(cell)
        try:
            code = python_of_cell(source)
        except SyntaxError as error:
            bad_cells.append(SkippedCell(number, error.msg, error.lineno or 1, error.offset or 1))
            continue
        found = CellCode(number, line, code, source)
        pieces.append(code.text)
        cells.append(found)
        if banner is None:
            banner = banner_pin(_printed(cell), line)
        line += found.lines
    return Notebook(shown, "".join(pieces), cells, bad_cells, banner=banner)


def _printed(cell: Mapping[str, Any]) -> str:
    """What a code cell wrote to stdout and stderr, as its saved outputs hold it."""
    outputs = cell.get("outputs")
    if not isinstance(outputs, list):
        return ""
    texts = []
    for output in outputs:
        if isinstance(output, dict) and output.get("output_type") == "stream":
            text = output.get("text", "")
            texts.append("".join(text) if isinstance(text, list) else str(text))
    return "".join(texts)


#: How many IPython lines of a script the warning quotes.
_QUOTED_LINES = 5


def read_ipython_script(path: Path, text: str) -> Notebook | None:
    """A ``.py`` file whose only syntax errors are IPython lines (``%matplotlib inline``,
    ``!pip install ...``: a notebook exported by Kaggle or Colab), read as IPython runs it, with
    a note naming those lines; None when IPython would not run it either."""
    try:
        code = python_of_cell(text)
    except SyntaxError:
        return None
    cell = CellCode(1, 1, code, text)
    replaced = cell.replaced_lines(partly=True)
    if not replaced:
        return None
    lines = split_lines(text)
    quoted = [f"{n} `{lines[n - 1].strip()}`" for n in replaced[:_QUOTED_LINES]]
    if len(replaced) > _QUOTED_LINES:
        quoted.append(f"{len(replaced) - _QUOTED_LINES} more")
    which = "line" if len(replaced) == 1 else "lines"
    note = (
        f"{path}: IPython syntax skipped on {which} {', '.join(quoted)}; "
        "the rest is linted as IPython runs it"
    )
    return Notebook(str(path), code.text, [cell], note=note, numbered=False)


def in_cells(
    notebook: Notebook, diagnostics: list[Diagnostic], warnings: list[str]
) -> list[Diagnostic]:
    """A notebook's findings with cell-relative positions, and a ``TFL001`` per cell left out;
    why a notebook is not linted at all goes to ``warnings``."""
    if notebook.note is not None:
        warnings.append(notebook.note)
    skipped = [
        replace(
            SYNTAX_ERROR.at(
                notebook.path,
                f"{invalid_syntax(bad.message)}; the cell is skipped",
                bad.line,
                bad.column,
            ),
            cell=bad.cell,
        )
        for bad in notebook.bad_cells
    ]
    return skipped + [notebook.to_cells(d) for d in diagnostics]


# -- the raw JSON ----------------------------------------------------------------------------

_SPACE = re.compile(r"[ \t\r\n]*")
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_SCALAR = re.compile(r"[^\s,\]}]+")


class _Json:
    """Just enough of a JSON reader to find where values are in a notebook's text (the text
    was already read by :func:`json.loads`, so it is valid)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def skip_space(self, position: int) -> int:
        match = _SPACE.match(self.text, position)
        return match.end() if match else position

    def value_end(self, position: int) -> int:
        """The end of the value starting at ``position``."""
        char = self.text[position]
        if char == '"':
            match = _STRING.match(self.text, position)
            assert match is not None
            return match.end()
        if char in "[{":
            depth = 0
            index = position
            while True:
                char = self.text[index]
                if char == '"':
                    index = self.value_end(index)
                    continue
                if char in "[{":
                    depth += 1
                elif char in "]}":
                    depth -= 1
                    if depth == 0:
                        return index + 1
                index += 1
        match = _SCALAR.match(self.text, position)
        assert match is not None
        return match.end()

    def items(self, position: int) -> Iterator[tuple[int, int]]:
        """``(start, end)`` of each element of the array at ``position``."""
        index = self.skip_space(position + 1)
        while self.text[index] != "]":
            end = self.value_end(index)
            yield index, end
            index = self.skip_space(end)
            if self.text[index] == ",":
                index = self.skip_space(index + 1)

    def members(self, position: int) -> Iterator[tuple[str, int]]:
        """``(key, value start)`` of each member of the object at ``position``."""
        index = self.skip_space(position + 1)
        while self.text[index] != "}":
            key_end = self.value_end(index)
            key = json.loads(self.text[index:key_end])
            start = self.skip_space(self.skip_space(key_end) + 1)
            yield key, start
            index = self.skip_space(self.value_end(start))
            if self.text[index] == ",":
                index = self.skip_space(index + 1)

    def member(self, position: int, name: str) -> int | None:
        return next((start for key, start in self.members(position) if key == name), None)


@dataclass(frozen=True)
class RawSource:
    """Where one code cell's ``source`` is in the notebook's text: the value's span, and the
    span of each string it is made of (one string, or a list of lines)."""

    start: int
    end: int
    strings: tuple[tuple[int, int], ...]
    is_list: bool


class RawNotebook:
    """A notebook's text and where each cell's source is in it."""

    def __init__(self, text: str) -> None:
        load(text)
        self.text = text
        reader = _Json(text)
        self.sources: dict[int, RawSource] = {}
        top = reader.skip_space(0)
        cells = reader.member(top, "cells")
        assert cells is not None
        for number, (start, _) in enumerate(reader.items(cells), start=1):
            if text[start] != "{":
                continue
            source = reader.member(start, "source")
            if source is None:
                continue
            end = reader.value_end(source)
            if text[source] == "[":
                strings = tuple(reader.items(source))
                self.sources[number] = RawSource(source, end, strings, True)
            else:
                self.sources[number] = RawSource(source, end, ((source, end),), False)
        self._line_starts = [0]
        for line in split_lines(text, keepends=True):
            self._line_starts.append(self._line_starts[-1] + len(line))

    def _raw_offset(self, cell: int, location: Location) -> int | None:
        """Where the character at ``location`` of cell ``cell`` is in the text."""
        raw = self.sources.get(cell)
        if raw is None:
            return None
        source = "".join(json.loads(self.text[s:e]) for s, e in raw.strings)
        lines = split_lines(source, keepends=True)
        if not 0 < location.line <= max(len(lines), 1):
            return None
        wanted = sum(len(line) for line in lines[: location.line - 1]) + location.column - 1
        seen = 0
        for start, end in raw.strings:
            index = start + 1
            while index < end - 1:
                if seen == wanted:
                    return index
                index += _escape_length(self.text, index)
                seen += 1
            if seen == wanted and (start, end) == raw.strings[-1]:
                return end - 1
        return None

    def location(self, cell: int, location: Location) -> Location | None:
        """The line and column (1-based, in characters) of the text where a cell position is;
        None when the cell or the position is not there."""
        offset = self._raw_offset(cell, location)
        if offset is None:
            return None
        line = bisect.bisect_right(self._line_starts, offset) - 1
        return Location(line + 1, offset - self._line_starts[line] + 1)


def _escape_length(text: str, index: int) -> int:
    """How many characters of JSON text at ``index`` make one character of the string."""
    if text[index] != "\\":
        return 1
    if text[index + 1] != "u":
        return 2
    high = int(text[index + 2 : index + 6], 16)
    if 0xD800 <= high < 0xDC00 and text[index + 6 : index + 8] == "\\u":
        return 12
    return 6


def json_string_content(text: str, ascii_only: bool) -> str:
    """``text`` as it goes between the quotes of a JSON string."""
    return json.dumps(text, ensure_ascii=ascii_only)[1:-1]


def ascii_only(text: str) -> bool:
    """Whether a notebook's text escapes every non-ASCII character (``ensure_ascii``)."""
    return text.isascii() and "\\u" in text


def replace_sources(text: str, sources: Mapping[int, str]) -> str:
    """The notebook ``text`` with the ``source`` of each given cell replaced, written as the
    file writes it (a list of lines or one string; its indentation and separators; escaped
    non-ASCII characters or not). Lines that did not change keep their exact text."""
    raw_notebook = RawNotebook(text)
    escape = ascii_only(text)
    pieces: list[str] = []
    position = 0
    for cell, new in sorted(sources.items()):
        raw = raw_notebook.sources[cell]
        if not raw.is_list:
            value = f'"{json_string_content(new, escape)}"'
        else:
            value = _list_like(text, raw, new, escape)
        pieces += [text[position : raw.start], value]
        position = raw.end
    pieces.append(text[position:])
    return "".join(pieces)


def _list_like(text: str, raw: RawSource, new: str, escape: bool) -> str:
    """``new`` as a JSON list of lines (as nbformat splits them: ``str.splitlines``) in the
    style of the list at ``raw``."""
    old = {json.loads(text[s:e]): text[s:e] for s, e in raw.strings}
    elements = [
        old.get(line, f'"{json_string_content(line, escape)}"') for line in new.splitlines(True)
    ]
    if not raw.strings:
        return "[" + ", ".join(elements) + "]"
    opening = text[raw.start + 1 : raw.strings[0][0]]
    closing = text[raw.strings[-1][1] : raw.end - 1]
    if len(raw.strings) > 1:
        separator = text[raw.strings[0][1] : raw.strings[1][0]]
    else:
        separator = "," + (opening if opening.strip() == "" else " ")
    if not elements:
        return "[]"
    return "[" + opening + separator.join(elements) + closing + "]"
