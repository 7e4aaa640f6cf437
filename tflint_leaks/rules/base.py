"""What a rule is: a code, a name, a message, docs, examples, and visitor hooks.

A rule subclasses :class:`Rule`, declares its metadata as class attributes and writes hooks
named ``visit_<Node>`` / ``leave_<Node>`` after libcst node classes (``visit_Call``). The engine
walks each file once and calls every enabled rule's hooks with the shared
:class:`~tflint_leaks.engine.context.FileContext` positioned at the node. Examples in
``VALID``/``INVALID`` run as tests and render into the rule's docs.
"""

from __future__ import annotations

import inspect
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import libcst as cst

from tflint_leaks.diagnostics import Applicability, Severity
from tflint_leaks.engine.relevance import Triggers

if TYPE_CHECKING:
    from tflint_leaks.analysis.index import Span
    from tflint_leaks.engine.context import FileContext, Report


@dataclass(frozen=True)
class Invalid:
    """An example the rule must flag, at 1-based ``line`` and ``column`` of ``code``."""

    code: str
    line: int
    column: int
    #: The source after ``--fix`` (``--unsafe-fixes`` when the rule's fix is unsafe).
    fixed: str | None = None

    @property
    def source(self) -> str:
        return textwrap.dedent(self.code).lstrip("\n")


def valid_source(code: str) -> str:
    return textwrap.dedent(code).lstrip("\n")


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    #: A one-line summary (the short description in ``rules`` and SARIF).
    summary: ClassVar[str]
    severity: ClassVar[Severity] = Severity.WARNING
    #: Opinionated rules are off unless selected explicitly.
    default_enabled: ClassVar[bool] = True
    #: The fix this rule offers, if any; the docs' *Fix safety* section explains it.
    fix_applicability: ClassVar[Applicability | None] = None
    #: What a function or method must mention for this rule to fire in it (see
    #: :mod:`tflint_leaks.engine.relevance`); None: the rule needs every unit.
    TRIGGERS: ClassVar[Triggers | None] = None
    VALID: ClassVar[tuple[str, ...]] = ()
    INVALID: ClassVar[tuple[Invalid, ...]] = ()

    def __init__(self, context: FileContext) -> None:
        self.context = context

    @classmethod
    def docs(cls) -> str:
        """The rule's documentation (Markdown), from its docstring."""
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def url(cls) -> str:
        from tflint_leaks import DOCS_URL

        return f"{DOCS_URL}/rules/{cls.code}.md"

    def report(self, node: cst.CSTNode | Span, message: str) -> Report:
        """Report ``node``; the returned report can be given related locations and a fix."""
        return self.context.report(self, node, message)
