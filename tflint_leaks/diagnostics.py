"""The data every stage exchanges: diagnostics, their locations, fixes and runtime verdicts.

Everything here is a frozen dataclass of plain values, so a diagnostic can cross a process
boundary, be cached as JSON and be compared in tests.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any


class Severity(str, enum.Enum):
    """How loudly a diagnostic should be shown; every finding fails the run alike."""

    ERROR = "error"
    WARNING = "warning"


class Applicability(str, enum.Enum):
    """Whether a fix keeps the program's meaning (``safe``) or may change it (``unsafe``)."""

    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True, order=True)
class Location:
    """A position in a file: 1-based line, 1-based column (in characters)."""

    line: int
    column: int


@dataclass(frozen=True)
class Edit:
    """Replace the text between ``start`` and ``end`` with ``content``."""

    start: Location
    end: Location
    content: str


@dataclass(frozen=True)
class Fix:
    message: str
    applicability: Applicability
    edits: tuple[Edit, ...]


class RelatedRole(str, enum.Enum):
    """What a related location is, for tools (the ``role`` of JSON's ``related``)."""

    #: The definition a call retraces: its first decorator, or the ``tf.function(...)`` call.
    TF_FUNCTION = "tf-function"
    #: The header of the loop that repeats the finding.
    LOOP = "loop"
    #: The tape whose block records.
    TAPE = "tape"
    #: Where the model is built.
    MODEL = "model"
    #: The call that runs the code the finding is in.
    CALLER = "caller"
    #: One call of the chain through which a loop runs the code the finding is about.
    CALL = "call"
    #: Where the state a finding reads is assigned again.
    ASSIGNMENT = "assignment"


@dataclass(frozen=True)
class Related:
    """A second location that explains a finding, such as the ``tf.function`` a call retraces."""

    role: RelatedRole
    message: str
    file: str
    start: Location
    end: Location
    #: For a place in a notebook: its 1-based cell; ``start``/``end`` are then in the cell.
    cell: int | None = None


class Verdict(str, enum.Enum):
    CONFIRMED = "confirmed"
    NOT_REPRODUCED = "not-reproduced"
    NOT_EXECUTED = "not-executed"
    ERROR = "error"


@dataclass(frozen=True)
class CallSite:
    """Calls a ``tf.function`` received from one line of user code, and the traces they made."""

    file: str
    line: int
    calls: int
    traces: int
    cell: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "filename": self.file,
            "cell": self.cell,
            "line": self.line,
            "calls": self.calls,
            "traces": self.traces,
        }


@dataclass(frozen=True)
class Confirmation:
    """What the runtime mode measured for one finding."""

    verdict: Verdict
    summary: str
    traces: int | None = None
    calls: int | None = None
    cause: str | None = None
    iterations: int | None = None
    growth: tuple[tuple[str, float], ...] = ()
    evidence: tuple[str, ...] = ()
    #: Retracing: whether the traces stopped (True: bounded), were still growing at the end
    #: of the run (False), or neither was measured (None); the values the flagged argument took.
    bounded: bool | None = None
    values: tuple[str, ...] = ()
    #: Retracing: every call site of the ``tf.function``, the finding's own first.
    sites: tuple[CallSite, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict.value,
            "summary": self.summary,
            "traces": self.traces,
            "calls": self.calls,
            "cause": self.cause,
            "iterations": self.iterations,
            "growth": dict(self.growth),
            "evidence": list(self.evidence),
            "bounded": self.bounded,
            "values": list(self.values),
            "sites": [site.to_json() for site in self.sites],
        }


@dataclass(frozen=True)
class Diagnostic:
    code: str
    name: str
    message: str
    severity: Severity
    file: str
    start: Location
    end: Location
    fix: Fix | None = None
    related: tuple[Related, ...] = ()
    confirmation: Confirmation | None = None
    #: For notebooks: the 1-based cell number; ``start``/``end`` are then relative to the cell.
    cell: int | None = None

    def sort_key(self) -> tuple[str, int, int, int, str]:
        return (self.file, self.cell or 0, self.start.line, self.start.column, self.code)
