"""``# noqa`` comments: one syntax family for a line and for a whole file.

* ``# noqa`` or ``# noqa: TFL101, TFL105`` on the reported line (the finding's first line);
* ``# tflint-leaks: noqa`` or ``# tflint-leaks: noqa: TFL101`` anywhere: the whole file.

Codes of other tools (``# noqa: E501``) are left alone. A ``TFL`` code that no rule has is
reported as a warning, so a typo does not silently suppress nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from tflint_leaks.config import Settings
from tflint_leaks.diagnostics import Diagnostic
from tflint_leaks.registry import BY_CODE, ENGINE_CODES
from tflint_leaks.source import split_lines

_CODES = r"(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*)"
_FILE = re.compile(r"#\s*tflint-leaks\s*:\s*noqa\b(?:\s*:\s*" + _CODES + ")?", re.IGNORECASE)
_LINE = re.compile(r"#\s*noqa\b(?:\s*:\s*" + _CODES + ")?", re.IGNORECASE)

#: Suppress every code.
ALL: frozenset[str] = frozenset({"*"})


@dataclass
class Suppressions:
    lines: dict[int, frozenset[str]] = field(default_factory=dict)
    file: frozenset[str] = frozenset()
    #: (line, code) of ``TFL`` codes that no rule has.
    unknown: list[tuple[int, str]] = field(default_factory=list)

    def suppresses(self, code: str, line: int) -> bool:
        for codes in (self.file, self.lines.get(line, frozenset())):
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


def parse_suppressions(text: str, known: frozenset[str]) -> Suppressions:
    found = Suppressions()
    if "noqa" not in text.lower():
        return found
    file_codes: set[str] = set()
    for number, line in enumerate(split_lines(text), start=1):
        if "#" not in line or "noqa" not in line.lower():
            continue
        match = _FILE.search(line)
        if match is not None:
            codes = _codes(match, number, known, found)
            if codes is ALL:
                found.file = ALL
            elif found.file is not ALL:
                file_codes |= codes
            continue
        match = _LINE.search(line)
        if match is not None:
            found.lines[number] = _codes(match, number, known, found)
    if found.file is not ALL:
        found.file = frozenset(file_codes)
    return found


def add_noqa(text: str, codes_by_line: Mapping[int, Iterable[str]]) -> tuple[str, int]:
    """``text`` with ``# noqa: CODES`` on each given 1-based line, merged into a ``# noqa``
    comment already there (a bare ``# noqa`` already covers everything); and how many lines
    changed. Line endings are kept."""
    lines = split_lines(text, keepends=True)
    changed = 0
    for number, codes in codes_by_line.items():
        if not 0 < number <= len(lines):
            continue
        line = lines[number - 1]
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        match = _LINE.search(body) if "#" in body else None
        if match is None:
            new = f"{body}  # noqa: {', '.join(sorted(set(codes)))}"
        elif not match.group("codes"):
            continue
        else:
            present = re.split(r"[\s,]+", match.group("codes"))
            merged = list(dict.fromkeys([*present, *sorted(set(codes) - set(present))]))
            new = f"{body[: match.start()]}# noqa: {', '.join(merged)}{body[match.end() :]}"
        if new != body:
            lines[number - 1] = new + ending
            changed += 1
    return "".join(lines), changed


def unsuppressed(
    path: str, diagnostics: list[Diagnostic], text: str, settings: Settings, warnings: list[str]
) -> list[Diagnostic]:
    """What ``noqa`` comments and ``per-file-ignores`` leave of ``diagnostics`` (engine errors
    are never suppressed); ``noqa`` codes that the tool does not know are added to
    ``warnings``."""
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
