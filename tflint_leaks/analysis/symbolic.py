"""Expressions as plain data, so the whole-program facts can be computed once per module,
cached, and read back for any file.

An :class:`Expr` keeps what the facts need of an expression and nothing else: dotted names,
calls (callee, positional and keyword arguments), attributes and constant subscripts of other
expressions, tuples, the kind of a literal, and "something else". Both parsers feed it: the
``ast`` index (:func:`from_ast`, here) and the libcst rules
(:func:`tflint_leaks.analysis.symbolic_cst.from_cst`), so one evaluator
(:mod:`tflint_leaks.analysis.program`) answers for both.
"""

from __future__ import annotations

import ast
import enum
from typing import NamedTuple


class Op(enum.Enum):
    #: A dotted name, ``text``: ``model``, ``self.actor.model``, ``tf.keras.Sequential``.
    REF = "ref"
    #: ``parts[0](*parts[1:])``; the last ``len(keywords)`` arguments are keyword arguments.
    CALL = "call"
    #: ``parts[0].text`` where ``parts[0]`` is not a dotted name (``build()[0].model``).
    ATTR = "attr"
    #: ``parts[0][number]``; ``number`` is -1 for an index that is not an integer literal.
    ITEM = "item"
    #: A literal; ``text`` is its kind: ``number``, ``str``, ``true``, ``false``, ``none``,
    #: ``container``; an integer's value is in ``number``.
    LITERAL = "literal"
    #: A tuple display: ``parts`` are its elements.
    TUPLE = "tuple"
    #: Anything else (arithmetic, comparisons, lambdas, ...), with its operands in ``parts``.
    OTHER = "other"


class Expr(NamedTuple):
    """An expression (a named tuple: the index builds hundreds of thousands of them, and tuples
    are made several times faster than frozen dataclasses)."""

    op: Op
    text: str = ""
    parts: tuple[Expr, ...] = ()
    keywords: tuple[str, ...] = ()
    number: int = -1

    @property
    def func(self) -> Expr:
        """The callee of a call."""
        return self.parts[0]

    @property
    def positional(self) -> tuple[Expr, ...]:
        """A call's positional arguments."""
        return self.parts[1 : len(self.parts) - len(self.keywords)]

    def keyword(self, name: str) -> Expr | None:
        """A call's keyword argument ``name``."""
        if name not in self.keywords:
            return None
        return self.parts[len(self.parts) - len(self.keywords) + self.keywords.index(name)]

    @property
    def method(self) -> tuple[Expr, str] | None:
        """For ``receiver.method(...)``: the receiver and the method's name."""
        if self.op is not Op.CALL:
            return None
        func = self.func
        if func.op is Op.REF and "." in func.text:
            head, _, name = func.text.rpartition(".")
            return ref(head), name
        if func.op is Op.ATTR:
            return func.parts[0], func.text
        return None


UNKNOWN = Expr(Op.OTHER)
#: A generator expression (``(x for x in xs)``): a Python generator, nothing else known.
GENERATOR = Expr(Op.OTHER, "generator")


def ref(name: str) -> Expr:
    return Expr(Op.REF, name)


def literal(kind: str) -> Expr:
    return Expr(Op.LITERAL, kind)


def integer(value: int) -> Expr:
    """An integer literal; its value is kept (as ``number``) when it is not negative."""
    return Expr(Op.LITERAL, "number", number=value if value >= 0 else -1)


def attribute(value: Expr, name: str) -> Expr:
    """``value.name``, folded into one dotted name when ``value`` is one."""
    if value.op is Op.REF:
        return ref(f"{value.text}.{name}")
    return Expr(Op.ATTR, name, (value,))


def item(value: Expr, number: int) -> Expr:
    return Expr(Op.ITEM, "", (value,), number=number)


_LITERALS: dict[type, str] = {
    int: "number",
    float: "number",
    complex: "number",
    str: "str",
    bytes: "str",
    type(None): "none",
    type(Ellipsis): "none",
}
_CONTAINERS = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)


def from_ast(node: ast.expr) -> Expr:
    """The :class:`Expr` of an ``ast`` expression."""
    if isinstance(node, ast.Name):
        return ref(node.id)
    if isinstance(node, ast.Attribute):
        return attribute(from_ast(node.value), node.attr)
    if isinstance(node, ast.Call):
        keywords = [k for k in node.keywords if k.arg is not None]
        positional = [a for a in node.args if not isinstance(a, ast.Starred)]
        return Expr(
            Op.CALL,
            "",
            (
                from_ast(node.func),
                *(from_ast(a) for a in positional),
                *(from_ast(k.value) for k in keywords),
            ),
            tuple(k.arg for k in keywords if k.arg is not None),
        )
    if isinstance(node, ast.Constant):
        if type(node.value) is bool:
            return literal("true" if node.value else "false")
        if type(node.value) is int:
            return integer(node.value)
        return literal(_LITERALS.get(type(node.value), "other"))
    if isinstance(node, _CONTAINERS):
        return literal("container")
    if isinstance(node, ast.JoinedStr):
        return literal("str")
    if isinstance(node, ast.Tuple):
        return Expr(Op.TUPLE, "", tuple(from_ast(e) for e in node.elts))
    if isinstance(node, ast.Subscript):
        index = node.slice
        number = index.value if isinstance(index, ast.Constant) and type(index.value) is int else -1
        return item(from_ast(node.value), number)
    if isinstance(node, ast.Await):
        return from_ast(node.value)
    if isinstance(node, ast.NamedExpr):
        return from_ast(node.value)
    if isinstance(node, ast.IfExp):
        return Expr(Op.OTHER, "if", (from_ast(node.body), from_ast(node.orelse)))
    if isinstance(node, ast.GeneratorExp):
        return GENERATOR
    return UNKNOWN
