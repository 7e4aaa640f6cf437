"""GitHub Actions workflow commands: one ``::warning``/``::error`` annotation per finding.

GitHub shows each annotation on the pull request's diff at ``file``/``line``. A notebook finding
has a cell-relative line that GitHub cannot place, so it is annotated on the file only and its
message starts with ``path:cell N:line:col``. The calls through which a loop runs the code a
finding is about follow on lines of their own, and a finding judged by ``tflint-leaks confirm``
has its verdict on the last line of the message.
"""

from __future__ import annotations

from collections.abc import Sequence

from tflint_leaks.diagnostics import Diagnostic
from tflint_leaks.reporters.text import chain_lines, location, runtime


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(diagnostic: Diagnostic) -> str:
    properties = [("title", f"tflint-leaks ({diagnostic.code} {diagnostic.name})")]
    properties.append(("file", diagnostic.file))
    if diagnostic.cell is None:
        properties += [
            ("line", str(diagnostic.start.line)),
            ("endLine", str(diagnostic.end.line)),
            ("col", str(diagnostic.start.column)),
        ]
        if diagnostic.start.line == diagnostic.end.line:
            properties.append(("endColumn", str(diagnostic.end.column)))
    fields = ",".join(f"{key}={_escape_property(value)}" for key, value in properties)
    message = f"{location(diagnostic)}: {diagnostic.code} {diagnostic.message}"
    for step in chain_lines(diagnostic):
        message += f"\n{step}"
    if diagnostic.confirmation is not None:
        message += f"\n{runtime(diagnostic.confirmation)}"
    return f"::{diagnostic.severity.value} {fields}::{_escape_data(message)}"


def render(diagnostics: Sequence[Diagnostic]) -> str:
    return "".join(annotation(d) + "\n" for d in diagnostics)
