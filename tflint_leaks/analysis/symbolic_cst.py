"""libcst expressions as :class:`~tflint_leaks.analysis.symbolic.Expr`, so the rules ask the
whole-program facts the same questions the ``ast`` index answers (the same :class:`Expr` for
the same code: ``tests/test_symbolic.py``)."""

from __future__ import annotations

import libcst as cst

from tflint_leaks.analysis.nodes import descendants
from tflint_leaks.analysis.symbolic import (
    LAMBDA,
    MAX_DEPTH,
    MAX_DISPLAYED,
    SPREAD,
    UNKNOWN,
    Expr,
    Op,
    attribute,
    call,
    display,
    formatted,
    integer,
    item,
    literal,
    plain_piece,
    ref,
    string,
)

_BINARY: dict[type, str] = {
    cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*", cst.Divide: "/", cst.FloorDivide: "//",
    cst.Modulo: "%", cst.Power: "**", cst.MatrixMultiply: "@", cst.LeftShift: "<<",
    cst.RightShift: ">>", cst.BitAnd: "&", cst.BitOr: "|", cst.BitXor: "^",
}  # fmt: skip
_COMPARE: dict[type, str] = {
    cst.Equal: "==", cst.NotEqual: "!=", cst.LessThan: "<", cst.LessThanEqual: "<=",
    cst.GreaterThan: ">", cst.GreaterThanEqual: ">=", cst.Is: "is", cst.IsNot: "is not",
    cst.In: "in", cst.NotIn: "not in",
}  # fmt: skip
_UNARY: dict[type, str] = {cst.Minus: "-", cst.Plus: "+", cst.BitInvert: "~", cst.Not: "not"}
_DISPLAYS: dict[type, str] = {cst.Tuple: "tuple", cst.List: "list", cst.Set: "set"}
_COMPREHENSIONS: dict[type, str] = {
    cst.ListComp: "list", cst.SetComp: "set", cst.DictComp: "dict", cst.GeneratorExp: "generator"
}  # fmt: skip
_LITERAL_NAMES = {"True": "true", "False": "false", "None": "none"}


def from_cst(node: cst.BaseExpression, depth: int = 0) -> Expr:
    """The :class:`Expr` of a libcst expression (the same as ``from_ast`` of the same code)."""
    if depth > MAX_DEPTH:
        return UNKNOWN
    inner = depth + 1
    if isinstance(node, cst.Name):
        kind = _LITERAL_NAMES.get(node.value)
        return literal(kind) if kind is not None else ref(node.value)
    if isinstance(node, cst.Attribute):
        return attribute(from_cst(node.value, inner), node.attr.value)
    if isinstance(node, cst.Call):
        return _call(node, inner)
    if isinstance(node, cst.Integer):
        value = node.evaluated_value
        return integer(value) if isinstance(value, int) else literal("number")
    if isinstance(node, cst.Float | cst.Imaginary):
        return literal("number")
    if isinstance(node, cst.FormattedString):
        return formatted(_pieces(node, inner))
    if isinstance(node, cst.SimpleString | cst.ConcatenatedString):
        text = _string_text(node)
        return string(text) if isinstance(text, str) else literal("str")
    if type(node) in _DISPLAYS or isinstance(node, cst.Dict):
        assert isinstance(node, cst.Tuple | cst.List | cst.Set | cst.Dict)
        return _display(node, inner)
    if type(node) in _COMPREHENSIONS:
        assert isinstance(node, cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp)
        return _comprehension(node, inner)
    if isinstance(node, cst.Subscript):
        return _subscript(node, inner)
    if isinstance(node, cst.BinaryOperation):
        return Expr(
            Op.BINARY,
            _BINARY[type(node.operator)],
            (from_cst(node.left, inner), from_cst(node.right, inner)),
        )
    if isinstance(node, cst.UnaryOperation):
        return Expr(Op.UNARY, _UNARY[type(node.operator)], (from_cst(node.expression, inner),))
    if isinstance(node, cst.BooleanOperation):
        word = "and" if isinstance(node.operator, cst.And) else "or"
        return Expr(Op.OTHER, word, tuple(from_cst(v, inner) for v in _operands(node, word)))
    if isinstance(node, cst.Comparison):
        operands = (
            from_cst(node.left, inner),
            *(from_cst(c.comparator, inner) for c in node.comparisons),
        )
        operators = tuple(_COMPARE[type(c.operator)] for c in node.comparisons)
        return Expr(Op.OTHER, "compare", operands, operators)
    if isinstance(node, cst.Lambda):
        return Expr(Op.OTHER, LAMBDA)  # not named: only the index's lambdas are functions
    if isinstance(node, cst.Await):
        return from_cst(node.expression, inner)
    if isinstance(node, cst.NamedExpr):
        return from_cst(node.value, inner)
    if isinstance(node, cst.IfExp):
        return Expr(Op.OTHER, "if", (from_cst(node.body, inner), from_cst(node.orelse, inner)))
    return UNKNOWN


def _call(node: cst.Call, inner: int) -> Expr:
    positional: list[Expr] = []
    keywords: list[tuple[str, Expr]] = []
    hidden = ""
    for argument in node.args:
        if argument.keyword is not None:
            keywords.append((argument.keyword.value, from_cst(argument.value, inner)))
        elif argument.star == "*":
            hidden = "*"
        elif argument.star:
            if any(name == SPREAD for name, _ in keywords):
                hidden = "*"  # a second mapping: the first is not all it passes
            else:
                hidden = hidden or SPREAD
                keywords.append((SPREAD, from_cst(argument.value, inner)))
        elif not hidden:
            positional.append(from_cst(argument.value, inner))
    return call(from_cst(node.func, inner), positional, keywords, hidden)


def _display(node: cst.Tuple | cst.List | cst.Set | cst.Dict, inner: int) -> Expr:
    elements: list[Expr] = []
    length = len(node.elements)
    if isinstance(node, cst.Dict):
        for entry in node.elements:
            if not isinstance(entry, cst.DictElement):
                length = -1
                break
            if len(elements) < MAX_DISPLAYED * 2:
                elements.extend((from_cst(entry.key, inner), from_cst(entry.value, inner)))
        return display("dict", elements, length)
    for element in node.elements:
        if isinstance(element, cst.StarredElement):
            length = -1
            break
        if len(elements) < MAX_DISPLAYED:
            elements.append(from_cst(element.value, inner))
    return display(_DISPLAYS[type(node)], elements, length)


def _comprehension(
    node: cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp, inner: int
) -> Expr:
    produced = (
        [from_cst(node.key, inner), from_cst(node.value, inner)]
        if isinstance(node, cst.DictComp)
        else [from_cst(node.elt, inner)]
    )
    clauses: list[cst.CompFor] = []
    clause: cst.CompFor | None = node.for_in
    while clause is not None:
        clauses.append(clause)
        clause = clause.inner_for_in
    return Expr(
        Op.COMPREHENSION,
        _COMPREHENSIONS[type(node)],
        (*produced, *(from_cst(c.iter, inner) for c in clauses)),
        tuple(_target_names(c.target) for c in clauses),
        int(any(c.ifs for c in clauses)),
    )


def _taken(index: cst.Slice) -> int:
    """At most how many items a slice takes: ``N`` of ``[:N]`` and ``[-N:]``; -1 otherwise
    (as :func:`~.symbolic.from_ast` reads it)."""
    lower, upper = index.lower, index.upper
    if index.step is not None:
        return -1
    if lower is None and isinstance(upper, cst.Integer):
        value = upper.evaluated_value
        return value if isinstance(value, int) else -1
    if (
        upper is None
        and isinstance(lower, cst.UnaryOperation)
        and isinstance(lower.operator, cst.Minus)
        and isinstance(lower.expression, cst.Integer)
    ):
        value = lower.expression.evaluated_value
        return value if isinstance(value, int) else -1
    return -1


def _subscript(node: cst.Subscript, inner: int) -> Expr:
    subscripted = from_cst(node.value, inner)
    if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice):
        return Expr(Op.ITEM, "slice", (subscripted,), number=_taken(node.slice[0].slice))
    number = -1
    key = None
    if len(node.slice) == 1:
        index = node.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.Integer):
            evaluated = index.value.evaluated_value
            number = evaluated if isinstance(evaluated, int) else -1
        elif isinstance(index, cst.Index) and isinstance(
            index.value, cst.SimpleString | cst.ConcatenatedString
        ):
            key = from_cst(index.value, inner)
    return item(subscripted, number, key)


def _pieces(node: cst.FormattedString, depth: int) -> list[Expr] | None:
    """As :func:`~tflint_leaks.analysis.symbolic._pieces` (``ast`` drops empty text pieces)."""
    pieces: list[Expr] = []
    for part in node.parts:
        if isinstance(part, cst.FormattedStringText):
            if not plain_piece(part.value):
                return None
            if part.value:
                pieces.append(string(part.value))
        elif _plain_field(part):
            assert isinstance(part, cst.FormattedStringExpression)
            pieces.append(from_cst(part.expression, depth))
        else:
            return None
    return pieces


def _plain_field(part: cst.BaseFormattedStringContent) -> bool:
    """A replacement field ``{value}``: no conversion, format spec or ``=``."""
    return (
        isinstance(part, cst.FormattedStringExpression)
        and part.conversion is None
        and part.format_spec is None
        and part.equal is None
    )


def _string_text(node: cst.BaseExpression) -> str | bytes | None:
    """The value of a string literal, implicit concatenations included (None: an f-string),
    as ``ast`` folds it."""
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value
    if isinstance(node, cst.ConcatenatedString):
        left, right = _string_text(node.left), _string_text(node.right)
        if isinstance(left, str) and isinstance(right, str):
            return left + right
        if isinstance(left, bytes) and isinstance(right, bytes):
            return left + right
    return None


def _target_names(node: cst.BaseExpression) -> str:
    """As :func:`~tflint_leaks.analysis.symbolic.target_names`."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Tuple | cst.List) and all(
        isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in node.elements
    ):
        return ",".join(e.value.value for e in node.elements if isinstance(e.value, cst.Name))
    names = {n.value for n in descendants(node) if isinstance(n, cst.Name)}
    return "?" + ",".join(sorted(names))


def _operands(node: cst.BooleanOperation, word: str) -> list[cst.BaseExpression]:
    """The operands of ``a or b or c`` as ``ast`` lists them (libcst nests them to the left;
    parentheses make an operand of their own, as in ``ast``)."""
    found: list[cst.BaseExpression] = []
    current: cst.BaseExpression = node
    while (
        isinstance(current, cst.BooleanOperation)
        and (("and" if isinstance(current.operator, cst.And) else "or") == word)
        and (current is node or not current.lpar)
    ):
        found.append(current.right)
        current = current.left
    found.append(current)
    return found[::-1]
