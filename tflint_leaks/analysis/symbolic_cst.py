"""libcst expressions as :class:`~tflint_leaks.analysis.symbolic.Expr`, so the rules ask the
whole-program facts the same questions the ``ast`` index answers."""

from __future__ import annotations

import libcst as cst

from tflint_leaks.analysis.symbolic import (
    GENERATOR,
    UNKNOWN,
    Expr,
    Op,
    attribute,
    integer,
    item,
    literal,
    ref,
)

_CONTAINERS = (cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp)


def from_cst(node: cst.BaseExpression) -> Expr:
    """The :class:`Expr` of a libcst expression (the same as ``from_ast`` of the same code)."""
    if isinstance(node, cst.Name):
        if node.value in {"True", "False"}:
            return literal(node.value.lower())
        if node.value == "None":
            return literal("none")
        return ref(node.value)
    if isinstance(node, cst.Attribute):
        return attribute(from_cst(node.value), node.attr.value)
    if isinstance(node, cst.Call):
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        keywords = [a for a in node.args if a.keyword is not None]
        return Expr(
            Op.CALL,
            "",
            (
                from_cst(node.func),
                *(from_cst(value) for value in positional),
                *(from_cst(a.value) for a in keywords),
            ),
            tuple(a.keyword.value for a in keywords if a.keyword is not None),
        )
    if isinstance(node, cst.Integer):
        value = node.evaluated_value
        return integer(value) if isinstance(value, int) else literal("number")
    if isinstance(node, cst.Float | cst.Imaginary):
        return literal("number")
    if isinstance(node, cst.SimpleString | cst.ConcatenatedString | cst.FormattedString):
        return literal("str")
    if isinstance(node, _CONTAINERS):
        return literal("container")
    if isinstance(node, cst.Tuple):
        return Expr(Op.TUPLE, "", tuple(from_cst(e.value) for e in node.elements))
    if isinstance(node, cst.Subscript):
        number = -1
        if len(node.slice) == 1:
            index = node.slice[0].slice
            if isinstance(index, cst.Index) and isinstance(index.value, cst.Integer):
                number = int(index.value.evaluated_value)
        return item(from_cst(node.value), number)
    if isinstance(node, cst.Await):
        return from_cst(node.expression)
    if isinstance(node, cst.NamedExpr):
        return from_cst(node.value)
    if isinstance(node, cst.IfExp):
        return Expr(Op.OTHER, "if", (from_cst(node.body), from_cst(node.orelse)))
    if isinstance(node, cst.GeneratorExp):
        return GENERATOR
    return UNKNOWN
