"""Helpers for the runtime tests: findings built by hand at marked lines of the target scripts.

A target line ends with ``# marker: NAME``; findings point at such lines, so the tests do not
depend on line numbers.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tflint_leaks.config import RuleOptions
from tflint_leaks.diagnostics import (
    Confirmation,
    Diagnostic,
    Location,
    Related,
    RelatedRole,
    Severity,
)
from tflint_leaks.runtime import tensorflow_available
from tflint_leaks.runtime.confirm import ConfirmResult, Target, run_confirm

TARGETS = Path(__file__).parent / "targets"

requires_tensorflow = pytest.mark.skipif(
    not tensorflow_available(), reason="needs the runtime extra (TensorFlow)"
)


def target_path(script: str) -> str:
    """The script's path as a user would give it on the command line (relative when possible)."""
    return os.path.relpath(TARGETS / script)


def line_of(script: str, marker: str) -> int:
    lines = (TARGETS / script).read_text(encoding="utf-8").splitlines()
    matches = [n for n, text in enumerate(lines, 1) if text.endswith(f"# marker: {marker}")]
    assert len(matches) == 1, f"marker {marker!r} in {script}: {matches}"
    return matches[0]


def _related(role: RelatedRole, script: str, marker: str) -> Related:
    location = Location(line_of(script, marker), 1)
    return Related(role, role.value, target_path(script), location, location)


def finding(
    code: str,
    script: str,
    marker: str,
    *,
    tf_function: str | None = None,
    loop: str | None = None,
    tape: str | None = None,
) -> Diagnostic:
    """A static finding as the engine would report it, with its ``tf-function``, ``loop`` and
    ``tape`` related locations."""
    related = []
    if tf_function:
        related.append(_related(RelatedRole.TF_FUNCTION, script, tf_function))
    if loop:
        related.append(_related(RelatedRole.LOOP, script, loop))
    if tape:
        related.append(_related(RelatedRole.TAPE, script, tape))
    start = Location(line_of(script, marker), 5)
    return Diagnostic(
        code=code,
        name=code.lower(),
        message=f"{code} at {marker}",
        severity=Severity.WARNING,
        file=target_path(script),
        start=start,
        end=start,
        related=tuple(related),
    )


def confirm(
    script: str,
    findings: list[Diagnostic],
    *args: str,
    timeout: float = 90.0,
    memory_limit_mb: int | None = None,
) -> ConfirmResult:
    target = Target(kind="script", path=target_path(script), args=args)
    return run_confirm(
        target,
        findings,
        timeout=timeout,
        memory_limit_mb=memory_limit_mb,
        max_python_values=RuleOptions().max_python_values,
    )


def by_message(result: ConfirmResult) -> dict[str, Diagnostic]:
    """The confirmed findings keyed by their message (``CODE at MARKER``)."""
    return {d.message: d for d in result.diagnostics if d.code != "TFL900"}


def static_findings(script: str) -> list[Diagnostic]:
    """The real static pass's findings on a target script."""
    from tflint_leaks.config import Settings
    from tflint_leaks.engine.runner import lint_paths

    return list(lint_paths([target_path(script)], Settings()).diagnostics)


def confirmation_at(result: ConfirmResult, code: str, script: str, marker: str) -> Confirmation:
    """The confirmation of the one finding with ``code`` at the marked line."""
    line = line_of(script, marker)
    [diagnostic] = [
        d
        for d in result.diagnostics
        if d.code == code and d.start.line == line and d.file == target_path(script)
    ]
    assert diagnostic.confirmation is not None
    return diagnostic.confirmation
