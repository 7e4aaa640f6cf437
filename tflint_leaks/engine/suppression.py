"""``# noqa`` comments: one syntax family for a line and for a whole file.

* ``# noqa`` or ``# noqa: TFL101, TFL105`` on the reported line (the finding's first line);
* ``# tflint-leaks: noqa`` or ``# tflint-leaks: noqa: TFL101`` anywhere: the whole file.

Only comments count (``"# noqa"`` inside a string is text). A line that cannot end in a comment
-- inside a multi-line string, or continued with a backslash -- takes its ``noqa`` from the line
that ends that string or statement, as in Ruff; :func:`noqa_edits` (``--add-noqa`` and the
editor's quick fix) writes the comment there.

Codes of other tools (``# noqa: E501``) are left alone. A ``TFL`` code that no rule has is
reported as a warning, so a typo does not silently suppress nothing. A code of a rule that ran
on the file and suppresses none of its findings is reported as ``TFL003 unused-noqa``
(:func:`unused_directives`), with a fix that removes it.
"""

from __future__ import annotations

import re
import tokenize
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from tflint_leaks.config import Settings
from tflint_leaks.diagnostics import Applicability, Diagnostic, Edit, Fix, Location
from tflint_leaks.registry import BY_CODE, ENGINE_CODES, RULES, UNUSED_NOQA
from tflint_leaks.source import split_lines

_CODES = r"(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*)"
_FILE = re.compile(r"#\s*tflint-leaks\s*:\s*noqa\b(?:\s*:\s*" + _CODES + ")?", re.IGNORECASE)
_LINE = re.compile(r"#\s*noqa\b(?:\s*:\s*" + _CODES + ")?", re.IGNORECASE)

#: Suppress every code.
ALL: frozenset[str] = frozenset({"*"})
_RULE_CODES = frozenset(rule.code for rule in RULES)


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


@dataclass(frozen=True)
class Directive:
    """A ``noqa`` comment that names codes: where it is, and the codes as written."""

    line: int
    #: 0-based columns in the line: the directive (from its ``#``), its codes, the comment.
    start: int
    codes_start: int
    end: int
    comment: int
    #: The codes as written, in order (other tools' codes too).
    codes: tuple[str, ...]
    #: A whole-file directive (``tflint-leaks: noqa: CODES``) rather than a line's.
    file_level: bool


@dataclass
class Suppressions:
    lines: dict[int, frozenset[str]] = field(default_factory=dict)
    file: frozenset[str] = frozenset()
    #: (line, code) of ``TFL`` codes that no rule has.
    unknown: list[tuple[int, str]] = field(default_factory=list)
    layout: Layout = field(default_factory=lambda: Layout({}, {}))
    #: Every directive that names codes, for :func:`unused_directives`.
    directives: list[Directive] = field(default_factory=list)

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
    for number, (column, comment) in sorted(found.layout.comments.items()):
        match = _FILE.search(comment)
        file_level = match is not None
        match = match or _LINE.search(comment)
        if match is None:
            continue
        codes = _codes(match, number, known, found)
        if codes is not ALL:
            found.directives.append(
                Directive(
                    number,
                    column + match.start(),
                    column + match.start("codes"),
                    column + match.end(),
                    column,
                    tuple(re.split(r"[\s,]+", match["codes"])),
                    file_level,
                )
            )
        if not file_level:
            found.lines[number] = codes
        elif codes is ALL:
            found.file = ALL
        elif found.file is not ALL:
            file_codes |= codes
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
    are never suppressed), with a ``TFL003`` for each directive with unused codes when that
    code is enabled; ``noqa`` codes that the tool does not know are added to ``warnings``."""
    if not diagnostics and "tfl" not in text.lower():
        return []  # nothing to suppress, and no code of ours to check (most files: no tokenizing)
    suppressions = parse_suppressions(text, frozenset(BY_CODE))
    for line, code in suppressions.unknown:
        warnings.append(f"{path}:{line}: unknown rule code `{code}` in a noqa comment")
    ignored = settings.ignored_codes(path)
    enabled = settings.enabled_codes() - ignored
    if UNUSED_NOQA.code in enabled:
        judged = frozenset(enabled & _RULE_CODES)
        found = unused_directives(path, text, suppressions, diagnostics, judged)
        diagnostics = [*diagnostics, *found]
    return [
        d
        for d in diagnostics
        if d.code in ENGINE_CODES
        or not (d.code in ignored or suppressions.suppresses(d.code, d.start.line))
    ]


def unused_directives(
    path: str,
    text: str,
    suppressions: Suppressions,
    diagnostics: Iterable[Diagnostic],
    judged: frozenset[str],
) -> list[Diagnostic]:
    """A ``TFL003`` for each directive naming a code in ``judged`` (the rules that ran on the
    file) that suppresses none of ``diagnostics`` (the findings before suppression): on its
    line, or in the file for a file-level one. Its fix removes those codes, or the directive
    when none is left."""
    on_line: dict[int, set[str]] = {}
    in_file: set[str] = set()
    for diagnostic in diagnostics:
        in_file.add(diagnostic.code)
        on_line.setdefault(suppressions.layout.target(diagnostic.start.line), set()).add(
            diagnostic.code
        )
    lines = split_lines(text)
    found: list[Diagnostic] = []
    for directive in suppressions.directives:
        seen = in_file if directive.file_level else on_line.get(directive.line, set())
        unused = [
            code for code in directive.codes if code.upper() in judged and code.upper() not in seen
        ]
        if not unused:
            continue
        where = "in this file" if directive.file_level else "on this line"
        named = " or ".join(f"`{code.upper()}`" for code in unused)
        diagnostic = UNUSED_NOQA.at(
            path, f"unused `noqa`: no {named} finding {where}", directive.line, directive.start + 1
        )
        kept = [code for code in directive.codes if code not in unused]
        message = (
            f"Remove {named} from the `noqa` directive" if kept else "Remove the `noqa` directive"
        )
        edit = _without(lines, directive, kept)
        found.append(
            replace(
                diagnostic,
                end=Location(directive.line, directive.end + 1),
                fix=Fix(message, Applicability.SAFE, (edit,)),
            )
        )
    return found


def _without(lines: list[str], directive: Directive, kept: list[str]) -> Edit:
    """The edit that leaves only ``kept`` in ``directive`` (none: the directive goes; so does
    its comment when nothing else is in it, and its line when nothing else is on it)."""
    line = directive.line
    body = lines[line - 1]
    if kept:
        start, end = Location(line, directive.codes_start + 1), Location(line, directive.end + 1)
        return Edit(start, end, ", ".join(kept))
    before = body[directive.comment : directive.start].rstrip()
    after = body[directive.end :].strip()
    code_end = len(body[: directive.comment].rstrip())
    start, end = Location(line, directive.comment + 1), Location(line, len(body) + 1)
    if before:  # a comment before the directive (`type: ignore`) stays
        return Edit(start, end, f"{before}  {after}".rstrip())
    if after:  # text after it (another comment, or words) stays, as a comment
        return Edit(start, end, after if after.startswith("#") else f"# {after}")
    if code_end == 0 and line < len(lines):  # the comment is alone on its line
        return Edit(Location(line, 1), Location(line + 1, 1), "")
    return Edit(Location(line, code_end + 1), end, "")
