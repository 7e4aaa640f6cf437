"""Applying fixes: one pass of non-overlapping edits per file, checked, written atomically.

A finding's fix is a set of text edits (node replacements made into text by the runner). For
each file the fixes are taken in source order; a fix that overlaps one already taken is left
for the next round (the command line lints and fixes again until nothing is left over). The
result must parse (libcst and Python's own parser) or the fix that breaks it is dropped and
reported. Files are replaced atomically: a temporary file in the same directory, with the
original's permissions, encoding, byte-order mark and line endings, then ``os.replace``.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tflint_leaks.diagnostics import Applicability, Diagnostic, Edit, Location
from tflint_leaks.engine import notebook
from tflint_leaks.engine.ipython import python_of_cell
from tflint_leaks.engine.suppression import noqa_edits
from tflint_leaks.source import SourceError, decode_source, split_lines

OVERLAPS = "overlaps another fix; it is applied on the next round"
DOES_NOT_PARSE = "fix dropped: the fixed code would not parse"
NOQA_DOES_NOT_PARSE = "not suppressed: a comment on this line would break the code"
NOQA_NO_LINE = "not suppressed: the finding is not on a line of the cell's Python"


@dataclass
class FileFix:
    """What fixing one file does: the text before and after, and what was left out."""

    path: str
    original: str
    fixed: str
    applied: list[Diagnostic] = field(default_factory=list)
    #: (finding, why its fix was not applied).
    skipped: list[tuple[Diagnostic, str]] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.fixed != self.original


def applies(diagnostic: Diagnostic, unsafe: bool) -> bool:
    """Whether ``--fix`` (``unsafe=False``) or ``--fix --unsafe-fixes`` applies the fix."""
    fix = diagnostic.fix
    if fix is None or not fix.edits:
        return False
    return unsafe or fix.applicability is Applicability.SAFE


class _Offsets:
    """Character offsets of 1-based (line, column) locations in a text."""

    def __init__(self, text: str) -> None:
        self._starts = [0]
        for line in split_lines(text, keepends=True):
            self._starts.append(self._starts[-1] + len(line))
        self._length = len(text)

    def __call__(self, location: Location) -> int:
        index = min(max(location.line - 1, 0), len(self._starts) - 1)
        return min(self._starts[index] + location.column - 1, self._length)


def parses(text: str) -> bool:
    """Whether ``text`` parses with libcst and with Python's own parser (libcst is imported
    here, only when a fix is applied)."""
    import libcst as cst

    try:
        cst.parse_module(text)
        ast.parse(text)
    except (cst.ParserSyntaxError, SyntaxError, ValueError, RecursionError):
        return False
    return True


def _apply(text: str, edits: Iterable[tuple[int, int, str]]) -> str:
    pieces: list[str] = []
    position = 0
    for start, end, content in sorted(edits):
        pieces += [text[position:start], content]
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def fix_text(
    text: str, diagnostics: Sequence[Diagnostic], valid: Callable[[str], bool] = parses
) -> tuple[str, list[Diagnostic], list[tuple[Diagnostic, str]]]:
    """Apply the fixes of ``diagnostics`` to ``text`` in one pass.

    Returns the new text, the findings whose fix was applied and the skipped ones with the
    reason. Identical edits from several findings (two calls that ask for the same decorator
    change) are made once. ``valid`` says whether a result may be kept (it parses).
    """
    offsets = _Offsets(text)
    taken: dict[tuple[int, int], str] = {}
    candidates: list[tuple[Diagnostic, list[tuple[int, int, str]]]] = []
    skipped: list[tuple[Diagnostic, str]] = []

    def ranges(diagnostic: Diagnostic) -> list[tuple[int, int, str]]:
        assert diagnostic.fix is not None
        return sorted((offsets(e.start), offsets(e.end), e.content) for e in diagnostic.fix.edits)

    def conflicts(start: int, end: int, content: str) -> bool:
        """Whether an edit clashes with a taken one: the same range with other content, an
        overlap, or an insertion at the start of the other (the order would be ambiguous)."""
        for (other_start, other_end), other in taken.items():
            if (start, end) == (other_start, other_end):
                if content != other:
                    return True
            elif (
                (start < other_end and other_start < end)
                or start == end == other_start
                or other_start == other_end == start
            ):
                return True
        return False

    for diagnostic in sorted(diagnostics, key=lambda d: ranges(d)[0][:2]):
        edits = ranges(diagnostic)
        if any(conflicts(*edit) for edit in edits):
            skipped.append((diagnostic, OVERLAPS))
            continue
        taken.update(((start, end), content) for start, end, content in edits)
        candidates.append((diagnostic, edits))

    def combined(chosen: Sequence[tuple[Diagnostic, list[tuple[int, int, str]]]]) -> str:
        return _apply(text, {edit for _, edits in chosen for edit in edits})

    fixed = combined(candidates)
    if candidates and not valid(fixed):
        kept = [candidate for candidate in candidates if valid(combined([candidate]))]
        kept_ids = {id(diagnostic) for diagnostic, _ in kept}
        skipped += [(d, DOES_NOT_PARSE) for d, _ in candidates if id(d) not in kept_ids]
        fixed = combined(kept)
        if kept and not valid(fixed):
            skipped += [(d, DOES_NOT_PARSE) for d, _ in kept]
            kept, fixed = [], text
        candidates = kept
    return fixed, [d for d, _ in candidates], skipped


def plan(
    diagnostics: Iterable[Diagnostic], unsafe: bool, texts: Mapping[str, str] | None = None
) -> list[FileFix]:
    """Read every file that has an applicable fix and compute its fixed text (nothing is
    written); ``texts`` gives the text of files that are not on disk (standard input). Files
    that cannot be read or decoded any more are left alone."""
    by_file: dict[str, list[Diagnostic]] = {}
    for diagnostic in diagnostics:
        if applies(diagnostic, unsafe):
            by_file.setdefault(diagnostic.file, []).append(diagnostic)
    plans = []
    for path, found in by_file.items():
        try:
            given = (texts or {}).get(path)
            original = decode_source(Path(path).read_bytes()) if given is None else given
            if notebook.is_notebook(path):
                fixed, applied, skipped = _fix_notebook(original, found)
            else:
                fixed, applied, skipped = fix_text(original, found, _validator(original))
        except (OSError, SourceError, notebook.NotebookError):
            continue
        plans.append(FileFix(path, original, fixed, applied, skipped))
    return plans


def _fix_notebook(
    text: str, diagnostics: list[Diagnostic]
) -> tuple[str, list[Diagnostic], list[tuple[Diagnostic, str]]]:
    """Apply cell-relative fixes to each code cell's source; the rest of the file (outputs,
    metadata, its formatting) is kept byte for byte."""
    document = notebook.load(text)
    by_cell: dict[int, list[Diagnostic]] = {}
    for diagnostic in diagnostics:
        if diagnostic.cell is not None:
            by_cell.setdefault(diagnostic.cell, []).append(diagnostic)
    applied: list[Diagnostic] = []
    skipped: list[tuple[Diagnostic, str]] = []
    sources: dict[int, str] = {}
    for number, found in sorted(by_cell.items()):
        source = notebook.cell_source(document["cells"][number - 1])
        fixed, cell_applied, cell_skipped = fix_text(source, found, _cell_parses)
        applied += cell_applied
        skipped += cell_skipped
        if fixed != source:
            sources[number] = fixed
    return (notebook.replace_sources(text, sources) if sources else text), applied, skipped


def _validator(original: str) -> Callable[[str], bool]:
    """How a fixed file is checked: it parses, or, for a script exported from a notebook
    (whose IPython lines Python cannot parse), IPython still runs it."""
    try:
        ast.parse(original)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _cell_parses
    return parses


def _cell_parses(source: str) -> bool:
    """Whether a fixed cell still runs in IPython and parses with libcst."""
    try:
        return parses(python_of_cell(source).text)
    except SyntaxError:
        return False


def unified_diff(file_fix: FileFix) -> str:
    lines = difflib.unified_diff(
        split_lines(file_fix.original, keepends=True),
        split_lines(file_fix.fixed, keepends=True),
        fromfile=file_fix.path,
        tofile=file_fix.path,
    )
    return "".join(
        line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n"
        for line in lines
    )


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """``text`` with non-overlapping edits made (their locations are in ``text``)."""
    offsets = _Offsets(text)
    return _apply(text, [(offsets(e.start), offsets(e.end), e.content) for e in edits])


def plan_noqa(diagnostics: Iterable[Diagnostic], never: frozenset[str]) -> list[FileFix]:
    """``--add-noqa``: each file with findings, with ``# noqa: CODE`` for every finding, on the
    line its comment goes on (:func:`~tflint_leaks.engine.suppression.noqa_edits`); in a
    notebook, in the finding's cell. Codes in ``never`` are left alone (syntax errors are not
    suppressible; an unused ``noqa`` is removed by its fix, not suppressed). A
    file that cannot be read any more is left alone; one that would no longer parse is not
    changed and its findings are listed as skipped."""
    by_file: dict[str, list[Diagnostic]] = {}
    for diagnostic in diagnostics:
        if diagnostic.code not in never:
            by_file.setdefault(diagnostic.file, []).append(diagnostic)
    plans = []
    for path, found in by_file.items():
        try:
            original = decode_source(Path(path).read_bytes())
            if notebook.is_notebook(path):
                plans.append(_noqa_notebook(path, original, found))
                continue
        except (OSError, SourceError, notebook.NotebookError):
            continue
        codes: dict[int, list[str]] = {}
        for diagnostic in found:
            codes.setdefault(diagnostic.start.line, []).append(diagnostic.code)
        fixed = apply_edits(original, noqa_edits(original, codes))
        if not _validator(original)(fixed):
            skipped = [(d, NOQA_DOES_NOT_PARSE) for d in found]
            plans.append(FileFix(path, original, original, [], skipped))
            continue
        plans.append(FileFix(path, original, fixed, found))
    return plans


def _noqa_notebook(path: str, text: str, diagnostics: list[Diagnostic]) -> FileFix:
    """``--add-noqa`` in a notebook: each cell's comments go in its source, where the line of
    its Python that takes the comment came from."""
    document = notebook.load(text)
    by_cell: dict[int, list[Diagnostic]] = {}
    for diagnostic in diagnostics:
        by_cell.setdefault(diagnostic.cell or 0, []).append(diagnostic)
    applied: list[Diagnostic] = []
    skipped: list[tuple[Diagnostic, str]] = []
    sources: dict[int, str] = {}
    for number, found in sorted(by_cell.items()):
        cells = document["cells"]
        source = notebook.cell_source(cells[number - 1]) if 0 < number <= len(cells) else ""
        try:
            cell = notebook.CellCode(number, 1, python_of_cell(source), source)
        except SyntaxError:
            skipped += [(d, NOQA_DOES_NOT_PARSE) for d in found]
            continue
        codes: dict[int, list[str]] = {}
        placed: list[Diagnostic] = []
        for diagnostic in found:
            line = cell.python_line(diagnostic.start)
            if line is None:
                skipped.append((diagnostic, NOQA_NO_LINE))
                continue
            codes.setdefault(line, []).append(diagnostic.code)
            placed.append(diagnostic)
        edits = [cell.edit(edit) for edit in noqa_edits(cell.code.text, codes)]
        fixed = apply_edits(source, [edit for edit in edits if edit is not None])
        if None in edits or not _cell_parses(fixed):
            skipped += [(d, NOQA_DOES_NOT_PARSE) for d in placed]
            continue
        applied += placed
        if fixed != source:
            sources[number] = fixed
    fixed_text = notebook.replace_sources(text, sources) if sources else text
    return FileFix(path, text, fixed_text, applied, skipped)
