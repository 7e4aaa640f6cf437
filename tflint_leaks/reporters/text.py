"""Concise text output, like Ruff's: ``path:line:col: CODE [*] message``, then a summary."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from tflint_leaks.diagnostics import (
    Applicability,
    Confirmation,
    Diagnostic,
    Related,
    RelatedRole,
    Severity,
)

#: Related locations the text output shows under a finding: the calls through which a loop runs
#: the code the finding is about, and where the state it reads is assigned again (the other roles
#: are in JSON and SARIF).
CHAIN_ROLES = frozenset({RelatedRole.CALLER, RelatedRole.CALL, RelatedRole.ASSIGNMENT})


def _safe_fix(diagnostic: Diagnostic) -> bool:
    return diagnostic.fix is not None and diagnostic.fix.applicability is Applicability.SAFE


def location(diagnostic: Diagnostic) -> str:
    cell = f"cell {diagnostic.cell}:" if diagnostic.cell is not None else ""
    return f"{diagnostic.file}:{cell}{diagnostic.start.line}:{diagnostic.start.column}"


def chain(diagnostic: Diagnostic) -> list[Related]:
    """The calls from the loop to the finding, outermost first (and the assignments)."""
    return [related for related in diagnostic.related if related.role in CHAIN_ROLES]


def chain_lines(diagnostic: Diagnostic) -> list[str]:
    """The chain of calls as ``path:line:col: message`` lines (the text, GitHub and JUnit
    outputs show them under the finding)."""
    lines = []
    for related in chain(diagnostic):
        cell = f"cell {related.cell}:" if related.cell is not None else ""
        where = f"{related.file}:{cell}{related.start.line}:{related.start.column}"
        lines.append(f"{where}: {related.message}")
    return lines


def runtime(confirmation: Confirmation) -> str:
    """What ``tflint-leaks confirm`` measured, in one line: ``runtime: confirmed: ...``."""
    return f"runtime: {confirmation.verdict.value}: {confirmation.summary}"


def render(diagnostics: Sequence[Diagnostic]) -> str:
    lines = []
    for diagnostic in diagnostics:
        marker = " [*]" if _safe_fix(diagnostic) else ""
        line = f"{location(diagnostic)}: {diagnostic.code}{marker} {diagnostic.message}"
        for step in chain_lines(diagnostic):
            line += f"\n    {step}"
        if diagnostic.confirmation is not None:
            line += f"\n    {runtime(diagnostic.confirmation)}"
        lines.append(line)
    count = len(diagnostics)
    if count == 0:
        lines.append("All checks passed!")
    else:
        lines.append(f"Found {summary(diagnostics)}.")
        fixable = sum(1 for d in diagnostics if _safe_fix(d))
        if fixable:
            lines.append(f"[*] {fixable} fixable with the `--fix` option.")
    return "\n".join(lines) + "\n"


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def summary(diagnostics: Sequence[Diagnostic]) -> str:
    """How many findings of each severity: ``1 error and 3 warnings``, ``4 warnings``."""
    counts = Counter(d.severity for d in diagnostics)
    parts = [
        _counted(counts[severity], severity.value)
        for severity in (Severity.ERROR, Severity.WARNING)
        if counts[severity]
    ]
    return " and ".join(parts)


def statistics(diagnostics: Sequence[Diagnostic]) -> str:
    counts = Counter((d.code, d.name) for d in diagnostics)
    fixable = Counter(d.code for d in diagnostics if _safe_fix(d))
    rows = [
        f"{count:>5}\t{code}\t{'[*] ' if fixable[code] else ''}{name}"
        for (code, name), count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]
    return "\n".join(rows) + ("\n" if rows else "")
