"""What a rule is: visitor hooks, its documentation, and its examples.

A rule subclasses :class:`Rule` and writes hooks named ``visit_<Node>`` / ``leave_<Node>`` after
libcst node classes (``visit_Call``). The engine walks each file once and calls every enabled
rule's hooks with the shared :class:`~tflint_leaks.rulekit.context.FileContext` positioned at the
node. What the rule is called, its summary, default, fix and triggers are its line in
:mod:`tflint_leaks.registry`; its docstring is its documentation, and its ``VALID``/``INVALID``
examples run as tests and render into its docs page.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import libcst as cst

if TYPE_CHECKING:
    from tflint_leaks.analysis.facts import Span
    from tflint_leaks.rulekit.context import FileContext, Report


def _dedented(code: str) -> str:
    return textwrap.dedent(code).lstrip("\n")


@dataclass(frozen=True)
class Valid:
    """An example the rule must accept: linted with every rule selected, nothing is reported."""

    code: str

    @property
    def source(self) -> str:
        return _dedented(self.code)


@dataclass(frozen=True)
class Invalid:
    """An example the rule must flag exactly once (with every rule selected, nothing else is
    reported), from 1-based ``line``:``column`` to ``end_line``:``end_column``, with
    ``message``."""

    code: str
    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    #: The source after ``--fix`` (``--unsafe-fixes`` when the rule's fix is unsafe).
    fixed: str | None = None

    @property
    def source(self) -> str:
        return _dedented(self.code)


class Rule:
    VALID: ClassVar[tuple[Valid, ...]] = ()
    INVALID: ClassVar[tuple[Invalid, ...]] = ()

    def __init__(self, context: FileContext, code: str) -> None:
        self.context = context
        #: The rule's code, from its registry line.
        self.code = code
        self.setup()

    def setup(self) -> None:
        """Create the rule's state for one file (called once per file, before the walk)."""

    def report(self, node: cst.CSTNode | Span, message: str) -> Report:
        """Report ``node``; the returned report can be given related locations and a fix."""
        return self.context.report(self.code, node, message)
