"""``# noqa`` comments: one syntax family for a line and for a whole file.

* ``# noqa`` or ``# noqa: TFL101, TFL105`` on the reported line (the finding's first line);
* ``# tflint-leaks: noqa`` or ``# tflint-leaks: noqa: TFL101`` anywhere: the whole file.

Only comments count (``"# noqa"`` inside a string is text). A line that cannot end in a comment
-- inside a multi-line string, or continued with a backslash -- takes its ``noqa`` from the line
that ends that string or statement, as in Ruff; :func:`noqa_edits` (``--add-noqa`` and the
editor's quick fix) writes the comment there.

Codes of other tools (``# noqa: E501``) are left alone. A ``TFL`` code that no rule has is
reported as a warning, so a typo does not silently suppress nothing.
"""

from __future__ import annotations

import re
import tokenize
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from tflint_leaks.config import Settings
from tflint_leaks.diagnostics import Diagnostic, Edit, Location
from tflint_leaks.registry import BY_CODE, ENGINE_CODES
from tflint_leaks.source import split_lines

_CODES = r"(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*)"
_FILE = re.compile(r"#\s*tflint-leaks\s*:\s*noqa\b(?:\s*:\s*" + _CODES + ")?", re.IGNORECASE)
_LINE = re.compile(r"#\s*noqa\b(?:\s*:\s*" + _CODES + ")?", re.IGNORECASE)

#: Suppress every code.
ALL: frozenset[str] = frozenset({"*"})


@dataclass(frozen=True)
class Layout:
    """Where comments are in a text, and which line takes the comment of each line."""

    #: 1-based line -> (0-based column, text) of the comment on it.
    comments: dict[int, tuple[int, str]]
    #: 1-based line -> the line whose comment applies to it, for lines that cannot hold one.
    targets: dict[int, int]

    def target(self, line: int) -> int:
        return self.targets.get(line, line)


def layout(text: str) -> Layout:
    """The comments and comment lines of ``text`` (a line's ``#`` when it does not tokenize:
    such a file has nothing to suppress but its syntax error)."""
    try:
        return _tokenized_layout(text)
    except (tokenize.TokenError, SyntaxError):
        comments = {
            number: (line.index("#"), line[line.index("#") :])
            for number, line in enumerate(split_lines(text), start=1)
            if "#" in line
        }
        return Layout(comments, {})


def _tokenized_layout(text: str) -> Layout:
    comments: dict[int, tuple[int, str]] = {}
    moves: dict[int, int] = {}
    opened: list[int] = []  # rows where f-strings (3.12: several tokens) start
    previous_end = 0
    line_ended = True
    # The tokenize module reads a lone "\r" as an error token, not a line end: give it "\n".
    lines = [
        f"{line[:-1]}\n" if line.endswith("\r") else line
        for line in split_lines(text, keepends=True)
    ]
    for token in tokenize.generate_tokens(iter(lines).__next__):
        kind, (row, column), (end_row, _) = token.type, token.start, token.end
        if kind in {tokenize.DEDENT, tokenize.INDENT}:
            continue
        if not line_ended and row > previous_end:  # continued with a backslash
            moves.update((line, line + 1) for line in range(previous_end, row))
        if kind == tokenize.COMMENT:
            comments[row] = (column, token.string)
        if kind == getattr(tokenize, "FSTRING_START", None):
            opened.append(row)
        elif kind == getattr(tokenize, "FSTRING_END", None) and opened:
            start = opened.pop()
            moves.update((line, end_row) for line in range(start, end_row))
        elif end_row > row and kind == tokenize.STRING:
            moves.update((line, end_row) for line in range(row, end_row))
        line_ended = kind in {tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER}
        previous_end = end_row
    targets: dict[int, int] = {}
    for line in sorted(moves, reverse=True):
        targets[line] = targets.get(moves[line], moves[line])
    return Layout(comments, targets)


@dataclass
class Suppressions:
    lines: dict[int, frozenset[str]] = field(default_factory=dict)
    file: frozenset[str] = frozenset()
    #: (line, code) of ``TFL`` codes that no rule has.
    unknown: list[tuple[int, str]] = field(default_factory=list)
    layout: Layout = field(default_factory=lambda: Layout({}, {}))

    def suppresses(self, code: str, line: int) -> bool:
        for codes in (self.file, self.lines.get(self.layout.target(line), frozenset())):
            if codes is ALL or code in codes:
                return True
        return False


def _codes(
    match: re.Match[str], line: int, known: frozenset[str], found: Suppressions
) -> frozenset[str]:
    text = match.group("codes")
    if not text:
        return ALL
    codes = {code.upper() for code in re.split(r"[\s,]+", text) if code}
    ours = {code for code in codes if code.startswith("TFL")}
    found.unknown.extend((line, code) for code in sorted(ours - known))
    return frozenset(ours)


def _may_suppress_ours(text: str) -> bool:
    """Whether a line of ``text`` has a ``noqa`` that is blanket or names a ``TFL`` code: the
    other files (none, or only ``# noqa: E501``: every flake8-clean codebase) need no
    tokenizing. Reading lines rather than comments can only say yes more often."""
    if "noqa" not in text.lower():
        return False
    for line in split_lines(text):
        match = _FILE.search(line) or _LINE.search(line)
        if match is not None and (not match.group("codes") or "TFL" in match["codes"].upper()):
            return True
    return False


def parse_suppressions(text: str, known: frozenset[str]) -> Suppressions:
    if not _may_suppress_ours(text):
        return Suppressions()
    found = Suppressions(layout=layout(text))
    file_codes: set[str] = set()
    for number, (_, comment) in sorted(found.layout.comments.items()):
        match = _FILE.search(comment)
        if match is not None:
            codes = _codes(match, number, known, found)
            if codes is ALL:
                found.file = ALL
            elif found.file is not ALL:
                file_codes |= codes
            continue
        match = _LINE.search(comment)
        if match is not None:
            found.lines[number] = _codes(match, number, known, found)
    if found.file is not ALL:
        found.file = frozenset(file_codes)
    return found


def noqa_edits(text: str, codes_by_line: Mapping[int, Iterable[str]]) -> list[Edit]:
    """The edits that suppress findings with ``# noqa: CODES``: for each given 1-based line,
    on the line its comment goes on (:class:`Layout`), appended after the code or merged into
    the ``noqa`` comment there (a bare ``# noqa`` already covers everything)."""
    found = layout(text)
    lines = split_lines(text)
    wanted: dict[int, set[str]] = {}
    for line, codes in codes_by_line.items():
        wanted.setdefault(found.target(line), set()).update(codes)
    edits: list[Edit] = []
    for line, codes in sorted(wanted.items()):
        if not 0 < line <= len(lines):
            continue
        column, comment = found.comments.get(line, (0, ""))
        match = _LINE.search(comment)
        if match is None:
            body = lines[line - 1]
            code_end = len(body.rstrip(" \t"))
            new = f"  # noqa: {', '.join(sorted(codes))}"
            edits.append(Edit(Location(line, code_end + 1), Location(line, len(body) + 1), new))
            continue
        if not match.group("codes"):
            continue
        present = re.split(r"[\s,]+", match.group("codes"))
        merged = list(dict.fromkeys([*present, *sorted(codes - set(present))]))
        if merged != present:
            start = Location(line, column + match.start() + 1)
            end = Location(line, column + match.end() + 1)
            edits.append(Edit(start, end, f"# noqa: {', '.join(merged)}"))
    return edits


def unsuppressed(
    path: str, diagnostics: list[Diagnostic], text: str, settings: Settings, warnings: list[str]
) -> list[Diagnostic]:
    """What ``noqa`` comments and ``per-file-ignores`` leave of ``diagnostics`` (engine errors
    are never suppressed); ``noqa`` codes that the tool does not know are added to
    ``warnings``."""
    if not diagnostics and "tfl" not in text.lower():
        return []  # nothing to suppress, and no code of ours to check (most files: no tokenizing)
    suppressions = parse_suppressions(text, frozenset(BY_CODE))
    for line, code in suppressions.unknown:
        warnings.append(f"{path}:{line}: unknown rule code `{code}` in a noqa comment")
    ignored = settings.ignored_codes(path)
    return [
        d
        for d in diagnostics
        if d.code in ENGINE_CODES
        or not (d.code in ignored or suppressions.suppresses(d.code, d.start.line))
    ]
