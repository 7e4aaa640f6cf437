"""The facts a rule reads from :class:`~tflint_leaks.rulekit.context.FileContext`'s answers.

Rules import these names from here, never from the solver's modules (``lint-imports`` checks
it): what a value may be (:class:`Value`, whose ``kind`` is a :class:`Kind`), what a call does
(:class:`Effect`, :class:`EffectKind`, the :class:`Hop`\\ s of its chain), where a NumPy array
comes from (:class:`ArrayOrigin`), which framework calls a function many times
(:class:`EntryPoint`), how a loop's values vary (:class:`Form`), the dtypes a value is used
with (:func:`shown_dtype`), and where a piece of state is assigned (:class:`Write`).
"""

from __future__ import annotations

from tflint_leaks.analysis.dtypes import resolver, shown_dtype
from tflint_leaks.analysis.effects import Effect, EffectKind, Hop
from tflint_leaks.analysis.facts import Span
from tflint_leaks.analysis.lattice import ArrayOrigin, ClassRef, Kind, Value
from tflint_leaks.analysis.library import SMALL_ARRAY_ELEMENTS
from tflint_leaks.analysis.repetition import EntryPoint
from tflint_leaks.analysis.values import Form, Variation
from tflint_leaks.analysis.writes import Write

__all__ = [
    "SMALL_ARRAY_ELEMENTS",
    "ArrayOrigin",
    "ClassRef",
    "Effect",
    "EffectKind",
    "EntryPoint",
    "Form",
    "Hop",
    "Kind",
    "Span",
    "Value",
    "Variation",
    "Write",
    "resolver",
    "shown_dtype",
]
