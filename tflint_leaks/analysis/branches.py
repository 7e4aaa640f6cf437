"""Which blocks of a function a call rules out: the branches it never takes.

A call that passes a string (``MMDDrift(x, backend="pytorch")``), an integer, ``None``, or
something that is certainly not ``None`` decides the ``if`` statements of the callee that test
that parameter (``if backend == Framework.TENSORFLOW:``, ``if model is None:``, ``if mode in
("a", "b"):``).
:func:`decide` answers a test in three values (``True``, ``False``, ``None``: not known) from
what each operand may be, as sets of :data:`Literals`; the blocks a test rules out are dead for
that call, and :mod:`.effects` summarises the call without them.

Comparisons are decided only when the answer holds for every value each side may be: ``==``
and ``!=`` between strings, integers and ``None``, ``<``, ``<=``, ``>``, ``>=`` between integers,
``is``/``is not`` against ``None``, ``in``/``not in`` a tuple or list of such literals, ``not``,
``and``, ``or`` and a name's truth.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Generator
from typing import Any

from tflint_leaks.analysis.lattice import Kind, Value
from tflint_leaks.analysis.symbolic import Expr, Op

Query = tuple[Any, ...]
Evaluate = Callable[[Expr], Generator[Query, Any, Value]]


class _Marker(enum.Enum):
    #: A value that is certainly not ``None`` but not a known string or integer.
    SOMETHING = "something"


SOMETHING = _Marker.SOMETHING
#: One thing a value may be: a string, an integer, :data:`SOMETHING` or ``None``.
Literal = str | int | _Marker | None
#: What a value may be, as literals.
Literals = frozenset[Literal]


def literals(value: Value) -> Literals | None:
    """What ``value`` may be as literals; None when some atom is not known."""
    if value.top or not value.atoms:
        return None
    found: set[Literal] = set()
    for each in value.atoms:
        if each.kind is Kind.NONE:
            found.add(None)
        elif each.kind is Kind.STR and each.texts is not None:
            found |= each.texts
        elif each.kind in {Kind.NUMBER, Kind.BOOL} and each.ints is not None:
            found |= each.ints  # ``False == 0``, as in Python
        elif each.kind is Kind.UNKNOWN and not each.flag:
            return None
        else:
            found.add(SOMETHING)
    return frozenset(found)


def decisive(value: Value) -> bool:
    """A call passing ``value`` may decide a test of the parameter it is passed for."""
    return literals(value) is not None


def heads(expr: Expr) -> set[str]:
    """The names an expression reads (the first identifier of each dotted name)."""
    found: set[str] = set()
    stack = [expr]
    while stack:
        current = stack.pop()
        if current.op is Op.REF:
            found.add(current.text.partition(".")[0])
        stack.extend(current.parts)
    return found


def decide(test: Expr, evaluate: Evaluate) -> Generator[Query, Any, bool | None]:
    """Whether ``test`` holds, with each operand's value from ``evaluate``."""
    if test.op is Op.UNARY and test.text == "not":
        inner = yield from decide(test.parts[0], evaluate)
        return None if inner is None else not inner
    if test.op is Op.OTHER and test.text in {"and", "or"}:
        results: list[bool | None] = []
        for part in test.parts:
            results.append((yield from decide(part, evaluate)))
        return _combine(test.text, results)
    if test.op is Op.OTHER and test.text == "compare":
        if len(test.keywords) != 1:
            return None
        operator = test.keywords[0]
        left_value = yield from evaluate(test.parts[0])
        right_value = yield from evaluate(test.parts[1])
        if operator in _ORDER:
            return _compare_integers(operator, left_value, right_value)
        left = literals(left_value)
        if left is None:
            return None
        if operator in {"in", "not in"}:
            held = _contains(left, right_value)
        elif operator in {"==", "!=", "is", "is not"}:
            right = literals(right_value)
            held = None if right is None else _equal(left, right, identity=operator[:2] == "is")
        else:
            return None
        if held is None:
            return None
        return held if operator in {"in", "==", "is"} else not held
    return _truth(literals((yield from evaluate(test))))


_ORDER: dict[str, Callable[[int, int], bool]] = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def integers(value: Value) -> frozenset[int] | None:
    """The integers ``value`` may be, when it is certainly one of them."""
    if value.top or not value.atoms:
        return None
    found: set[int] = set()
    for each in value.atoms:
        if each.kind is not Kind.NUMBER or each.ints is None:
            return None
        found |= each.ints
    return frozenset(found)


def _compare_integers(operator: str, left: Value, right: Value) -> bool | None:
    """``left < right`` (or another order) for every pair of integers they may be."""
    a, b = integers(left), integers(right)
    if not a or not b:
        return None
    held = {_ORDER[operator](x, y) for x in a for y in b}
    return held.pop() if len(held) == 1 else None


def _combine(word: str, results: list[bool | None]) -> bool | None:
    decisive_value = word == "or"  # ``or`` holds when one part does, ``and`` fails when one does
    if decisive_value in results:
        return decisive_value
    return (not decisive_value) if all(r is not None for r in results) else None


def _equal(left: Literals, right: Literals, *, identity: bool) -> bool | None:
    """``left == right`` (``is`` with ``identity``: decided only against ``None``)."""
    if identity and left != {None} and right != {None}:
        return None
    if len(left) == 1 and left == right and SOMETHING not in left:
        return True
    if left.isdisjoint(right) and (
        SOMETHING not in left | right or left == {None} or right == {None}
    ):
        return False
    return None


def _contains(left: Literals, container: Value) -> bool | None:
    """``left in container`` for a tuple or list display of literals."""
    if SOMETHING in left or container.top or len(container.atoms) != 1:
        return None
    items = container.atoms[0].items
    if container.atoms[0].kind is not Kind.CONTAINER or items is None:
        return None
    known: set[Literal] = set()
    for item in items:
        found = literals(item)
        if found is None or SOMETHING in found:
            return None
        known |= found
    if left <= known:
        return True
    return False if left.isdisjoint(known) else None


def _truth(found: Literals | None) -> bool | None:
    if found is None or SOMETHING in found:
        return None
    truths = {bool(each) for each in found}
    return truths.pop() if len(truths) == 1 else None
