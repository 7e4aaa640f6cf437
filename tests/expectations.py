"""Inline expectations: a line ending in ``# TFL101:30`` (code:column, several separated by
spaces) must produce exactly those findings; every other line must produce none."""

from __future__ import annotations

import re
from pathlib import Path

from tflint_leaks.config import Settings
from tflint_leaks.engine.runner import lint_paths

_EXPECTATION = re.compile(r"#\s*((?:TFL\d{3}:\d+\s*)+)$")

Finding = tuple[str, int, int]


def expected_findings(path: Path) -> set[Finding]:
    found: set[Finding] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = _EXPECTATION.search(line)
        if match is None:
            continue
        for item in match.group(1).split():
            code, column = item.split(":")
            found.add((code, number, int(column)))
    return found


def actual_findings(paths: list[Path], settings: Settings | None = None) -> dict[str, set[Finding]]:
    result = lint_paths(paths, settings or Settings(select=("ALL",)))
    found: dict[str, set[Finding]] = {}
    for diagnostic in result.diagnostics:
        found.setdefault(diagnostic.file, set()).add(
            (diagnostic.code, diagnostic.start.line, diagnostic.start.column)
        )
    return found
