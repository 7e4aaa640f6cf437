"""Expressions as plain data, so the whole-program facts can be computed once per module,
cached, and read back for any file.

An :class:`Expr` keeps what the solver needs of an expression: dotted names, calls (callee,
positional and keyword arguments), attributes and subscripts of other expressions, displays
(tuples, lists, sets, dicts: their first :data:`MAX_DISPLAYED` elements and their length),
comprehensions, arithmetic, the kind of a literal (and an integer's value), and "something
else". Both parsers feed it: the ``ast`` index (:func:`from_ast`, here) and the libcst rules
(:func:`tflint_leaks.analysis.symbolic_cst.from_cst`); ``tests/test_symbolic.py`` checks that
the two agree on every expression of every rule example and fixture.

Where positions stop being known (an argument after ``*args``, an element after ``*rest``), the
expression keeps only what comes before and says so (``text`` ``"*"``), so no argument is ever
matched to the wrong parameter. Expressions nested deeper than :data:`MAX_DEPTH` are "something
else": generated code, whose values no rule needs.
"""

from __future__ import annotations

import ast
import functools
import re
from typing import NamedTuple

from tflint_leaks.analysis.singletons import Singletons


class Op(Singletons):
    #: A dotted name, ``text``: ``model``, ``self.actor.model``, ``tf.keras.Sequential``.
    REF = "ref"
    #: ``parts[0](*parts[1:])``; the last ``len(keywords)`` arguments are keyword arguments;
    #: ``text`` ``"*"`` when ``*args`` or ``**kwargs`` hide the rest.
    CALL = "call"
    #: ``parts[0].text`` where ``parts[0]`` is not a dotted name (``build()[0].model``).
    ATTR = "attr"
    #: ``parts[0][number]``; ``number`` is -1 for an index that is not an integer literal,
    #: ``text`` ``"slice"`` for a slice (``number``: at most how many items it takes,
    #: ``[:3]`` or ``[-3:]``, -1 when not known).
    ITEM = "item"
    #: A literal; ``text`` is its kind: ``number``, ``str``, ``true``, ``false``, ``none``;
    #: a non-negative integer's value is in ``number``.
    LITERAL = "literal"
    #: A display: ``text`` is ``tuple``, ``list``, ``set`` or ``dict``; ``parts`` its first
    #: elements (a dict's keys and values, alternating); ``number`` its length (-1 when a
    #: ``*`` or ``**`` element makes it unknown).
    DISPLAY = "display"
    #: A comprehension: ``text`` is ``list``, ``set``, ``dict`` or ``generator``; ``parts`` are
    #: the element (a dict's key and value) then each ``for`` clause's iterable; ``keywords``
    #: the names each clause binds (:func:`target_names`); ``number`` is 1 when it has an
    #: ``if``.
    COMPREHENSION = "comprehension"
    #: ``parts[0] <text> parts[1]`` for ``+ - * / // % ** @ << >> & | ^``.
    BINARY = "binary"
    #: ``<text> parts[0]`` for ``-``, ``+``, ``~`` and ``not``.
    UNARY = "unary"
    #: The items of an iterable, ``parts[0]`` (what a ``for`` target is bound to).
    ITERATE = "iterate"
    #: Anything else, with its operands in ``parts`` and a word in ``text``: ``if`` (a
    #: conditional expression: one of its two values), ``or``/``and`` (one of its operands),
    #: ``compare`` (a bool: ``parts`` the operands, ``keywords`` the operators between them,
    #: :data:`COMPARE_OPERATORS`), ``format`` (an f-string whose every replacement field is a
    #: plain ``{value}``: ``parts`` its pieces in order, a string literal or the value),
    #: ``lambda`` (:data:`LAMBDA`), ``""``.
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
        """A call's positional arguments (those before a ``*args``)."""
        return self.parts[1 : len(self.parts) - len(self.keywords)]

    @property
    def open(self) -> bool:
        """A call whose ``*args`` or ``**kwargs`` may fill any other parameter."""
        return self.text in {"*", SPREAD}

    @property
    def starred(self) -> bool:
        """A call with a ``*args`` (its positions from there on are not known)."""
        return self.text == "*"

    @property
    def keyword_values(self) -> tuple[Expr, ...]:
        """A call's keyword arguments' values, in the order of ``keywords``."""
        return self.parts[len(self.parts) - len(self.keywords) :]

    def keyword(self, name: str) -> Expr | None:
        """A call's keyword argument ``name``."""
        if name not in self.keywords:
            return None
        return self.keyword_values[self.keywords.index(name)]

    def argument(self, position: int, name: str) -> Expr | None:
        """The argument a call passes for the parameter at ``position`` called ``name`` (by
        keyword or by position; not through a ``**mapping``, :data:`SPREAD`)."""
        found = self.keyword(name)
        if found is None and 0 <= position < len(self.positional):
            found = self.positional[position]
        return found

    @property
    def method(self) -> tuple[Expr, str] | None:
        """For ``receiver.method(...)``: the receiver and the method's name."""
        if self.op is not Op.CALL:
            return None
        func = self.func
        if func.op is Op.REF and "." in func.text:
            return _split_method(func.text)
        if func.op is Op.ATTR:
            return func.parts[0], func.text
        return None


@functools.lru_cache(maxsize=1 << 16)  # the facts ask each call for it again and again
def _split_method(dotted: str) -> tuple[Expr, str]:
    """``(ref("a.b"), "c")`` for ``a.b.c``: a call's receiver and method name."""
    head, _, name = dotted.rpartition(".")
    return ref(head), name


UNKNOWN = Expr(Op.OTHER)
#: The keyword a call's first ``**mapping`` argument is kept under (a call's other
#: keywords are identifiers, never this).
SPREAD = "**"
#: Displays keep this many elements (and their length); comprehensions and long literal tables
#: need no more to be known.
MAX_DISPLAYED = 8
#: Expressions nested deeper are "something else".
MAX_DEPTH = 40


def ref(name: str) -> Expr:
    return Expr(Op.REF, name)


def is_super(expr: Expr) -> bool:
    """``super()`` or ``super(Class, self)``: a call of the builtin ``super``."""
    return expr.op is Op.CALL and expr.func == ref("super")


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


#: A string literal's text is kept up to this many characters: keys and names, not docstrings.
MAX_KEPT_STRING = 64


def _taken(lower: ast.expr | None, upper: ast.expr | None, step: ast.expr | None) -> int:
    """At most how many items a slice takes: ``N`` of ``[:N]`` and ``[-N:]``; -1 otherwise."""
    if step is not None:
        return -1
    if lower is None and isinstance(upper, ast.Constant) and type(upper.value) is int:
        return max(upper.value, 0) if upper.value >= 0 else -1
    if (
        upper is None
        and isinstance(lower, ast.UnaryOp)
        and isinstance(lower.op, ast.USub)
        and isinstance(lower.operand, ast.Constant)
        and type(lower.operand.value) is int
    ):
        return lower.operand.value
    return -1


def string(text: str | None) -> Expr:
    """A string literal; its text (None: not known, an f-string) is kept, as the one keyword,
    when it is short (a dict's key: ``config["modes"]``)."""
    if text is not None and len(text) <= MAX_KEPT_STRING:
        return Expr(Op.LITERAL, "str", keywords=(text,))
    return literal("str")


def formatted(pieces: list[Expr] | None) -> Expr:
    """An f-string of ``pieces`` (:data:`Op.OTHER` ``format``); a string of unknown text for
    None (a replacement field with a conversion or a format spec)."""
    return literal("str") if pieces is None else Expr(Op.OTHER, "format", tuple(pieces))


#: Text pieces of an f-string kept: what the two parsers give alike (no escape, brace or quote).
_PLAIN_PIECE = re.compile(r"[^\\{}'\"\x00-\x1f\x7f]*")


def plain_piece(text: str) -> bool:
    """An f-string's text piece that reads the same in the source and in its value."""
    return _PLAIN_PIECE.fullmatch(text) is not None


def string_text(expr: Expr) -> str | None:
    """The text of a string literal whose text is kept."""
    if expr.op is Op.LITERAL and expr.text == "str" and expr.keywords:
        return expr.keywords[0]
    return None


def item(value: Expr, number: int, key: Expr | None = None) -> Expr:
    """``value[number]`` (``number`` -1: not a known integer), or ``value[key]`` with a string
    literal ``key`` (its text kept, as the one keyword)."""
    text = string_text(key) if key is not None else None
    return Expr(Op.ITEM, "", (value,), keywords=(text,) if text is not None else (), number=number)


def iterate(value: Expr) -> Expr:
    return Expr(Op.ITERATE, "", (value,))


def display(kind: str, elements: list[Expr], length: int) -> Expr:
    """A display of ``length`` elements (-1: unknown, a ``*`` element), the first of which are
    ``elements`` (for a dict: keys and values alternating)."""
    limit = MAX_DISPLAYED * 2 if kind == "dict" else MAX_DISPLAYED
    return Expr(Op.DISPLAY, kind, tuple(elements[:limit]), number=length)


def call(func: Expr, positional: list[Expr], keywords: list[tuple[str, Expr]], hidden: str) -> Expr:
    """A call; ``hidden`` is ``"*"`` when it has a ``*args``, else :data:`SPREAD` when it has
    a ``**mapping``, else ``""``."""
    return Expr(
        Op.CALL,
        hidden,
        (func, *positional, *(value for _, value in keywords)),
        tuple(name for name, _ in keywords),
    )


#: Operator spellings, shared by both converters.
BINARY_OPERATORS: dict[type, str] = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
    ast.Pow: "**", ast.MatMult: "@", ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&",
    ast.BitOr: "|", ast.BitXor: "^",
}  # fmt: skip
#: The words of a comparison's operators (``keywords`` of a ``compare``).
COMPARE_OPERATORS: dict[type, str] = {
    ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
    ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in",
}  # fmt: skip
_UNARY: dict[type, str] = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~", ast.Not: "not"}
_DISPLAYS: dict[type, str] = {ast.Tuple: "tuple", ast.List: "list", ast.Set: "set"}
_COMPREHENSIONS: dict[type, str] = {
    ast.ListComp: "list", ast.SetComp: "set", ast.DictComp: "dict", ast.GeneratorExp: "generator"
}  # fmt: skip


def _literal(value: object) -> Expr:
    if type(value) is bool:
        return literal("true" if value else "false")
    if type(value) is int:
        return integer(value)
    if isinstance(value, int | float | complex):
        return literal("number")
    if isinstance(value, str):
        return string(value)
    if isinstance(value, bytes):
        return literal("str")
    if value is None:
        return literal("none")
    return UNKNOWN  # Ellipsis


def target_names(node: ast.expr) -> str:
    """The names a comprehension clause binds: ``x``, ``a,b`` (a flat tuple: one name per
    position), or ``?`` and every name it binds, sorted (their values unknown)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Tuple | ast.List) and all(isinstance(e, ast.Name) for e in node.elts):
        return ",".join(e.id for e in node.elts if isinstance(e, ast.Name))
    return "?" + ",".join(sorted({n.id for n in ast.walk(node) if isinstance(n, ast.Name)}))


#: ``Op.OTHER`` of this text is a ``lambda``; ``keywords`` holds its :func:`lambda_name`.
LAMBDA = "lambda"


def lambda_name(node: ast.Lambda) -> str:
    """The name the index gives a ``lambda`` of a module's own code, by its place
    (``<lambda>:12:17``, line and byte offset): no identifier can be it."""
    return f"<lambda>:{node.lineno}:{node.col_offset}"


def is_comprehension(node: ast.AST) -> bool:
    return type(node) in _COMPREHENSIONS


def from_ast(node: ast.expr, depth: int = 0) -> Expr:
    """The :class:`Expr` of an ``ast`` expression."""
    if depth > MAX_DEPTH:
        return UNKNOWN
    inner = depth + 1
    if isinstance(node, ast.Name):
        return ref(node.id)
    if isinstance(node, ast.Attribute):
        return attribute(from_ast(node.value, inner), node.attr)
    if isinstance(node, ast.Call):
        return _call(node, inner)
    if isinstance(node, ast.Constant):
        return _literal(node.value)
    if isinstance(node, ast.JoinedStr):
        return formatted(_pieces(node, inner))
    if isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Dict):
        return _display(node, inner)
    if type(node) in _COMPREHENSIONS:
        assert isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp)
        return _comprehension(node, inner)
    if isinstance(node, ast.Subscript):
        index = node.slice
        if isinstance(index, ast.Slice):
            taken = _taken(index.lower, index.upper, index.step)
            return Expr(Op.ITEM, "slice", (from_ast(node.value, inner),), number=taken)
        number = index.value if isinstance(index, ast.Constant) and type(index.value) is int else -1
        key = _literal(index.value) if isinstance(index, ast.Constant) else None
        return item(from_ast(node.value, inner), number, key)
    if isinstance(node, ast.BinOp):
        return Expr(
            Op.BINARY,
            BINARY_OPERATORS[type(node.op)],
            (from_ast(node.left, inner), from_ast(node.right, inner)),
        )
    if isinstance(node, ast.UnaryOp):
        return Expr(Op.UNARY, _UNARY[type(node.op)], (from_ast(node.operand, inner),))
    if isinstance(node, ast.BoolOp):
        word = "and" if isinstance(node.op, ast.And) else "or"
        return Expr(Op.OTHER, word, tuple(from_ast(v, inner) for v in node.values))
    if isinstance(node, ast.Compare):
        operands = (from_ast(node.left, inner), *(from_ast(c, inner) for c in node.comparators))
        operators = tuple(COMPARE_OPERATORS[type(op)] for op in node.ops)
        return Expr(Op.OTHER, "compare", operands, operators)
    if isinstance(node, ast.Lambda):
        return Expr(Op.OTHER, LAMBDA, keywords=(lambda_name(node),))
    if isinstance(node, ast.Await):
        return from_ast(node.value, inner)
    if isinstance(node, ast.NamedExpr):
        return from_ast(node.value, inner)
    if isinstance(node, ast.IfExp):
        return Expr(Op.OTHER, "if", (from_ast(node.body, inner), from_ast(node.orelse, inner)))
    return UNKNOWN


def _pieces(node: ast.JoinedStr, depth: int) -> list[Expr] | None:
    pieces: list[Expr] = []
    for value in node.values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            if not plain_piece(value.value):
                return None
            pieces.append(string(value.value))
        elif isinstance(value, ast.FormattedValue):
            if value.conversion != -1 or value.format_spec is not None:
                return None
            pieces.append(from_ast(value.value, depth))
        else:
            return None
    return pieces


def _call(node: ast.Call, inner: int) -> Expr:
    positional: list[Expr] = []
    hidden = ""
    for argument in node.args:
        if isinstance(argument, ast.Starred):
            hidden = "*"
            break
        positional.append(from_ast(argument, inner))
    keywords: list[tuple[str, Expr]] = []
    for keyword in node.keywords:
        if keyword.arg is None:
            if any(name == SPREAD for name, _ in keywords):
                hidden = "*"  # a second mapping: the first is not all it passes
            else:
                hidden = hidden or SPREAD
                keywords.append((SPREAD, from_ast(keyword.value, inner)))
        else:
            keywords.append((keyword.arg, from_ast(keyword.value, inner)))
    return call(from_ast(node.func, inner), positional, keywords, hidden)


def _display(node: ast.Tuple | ast.List | ast.Set | ast.Dict, inner: int) -> Expr:
    elements: list[Expr] = []
    if isinstance(node, ast.Dict):
        length = len(node.keys)
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:
                length = -1
                break
            if len(elements) < MAX_DISPLAYED * 2:
                elements.extend((from_ast(key, inner), from_ast(value, inner)))
        return display("dict", elements, length)
    length = len(node.elts)
    for element in node.elts:
        if isinstance(element, ast.Starred):
            length = -1
            break
        if len(elements) < MAX_DISPLAYED:
            elements.append(from_ast(element, inner))
    return display(_DISPLAYS[type(node)], elements, length)


def _comprehension(
    node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp, inner: int
) -> Expr:
    produced = (
        [from_ast(node.key, inner), from_ast(node.value, inner)]
        if isinstance(node, ast.DictComp)
        else [from_ast(node.elt, inner)]
    )
    return Expr(
        Op.COMPREHENSION,
        _COMPREHENSIONS[type(node)],
        (*produced, *(from_ast(clause.iter, inner) for clause in node.generators)),
        tuple(target_names(clause.target) for clause in node.generators),
        int(any(clause.ifs for clause in node.generators)),
    )
