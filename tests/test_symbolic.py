"""The two converters agree: ``from_ast(e) == from_cst(e)`` for every expression of every rule
example and fixture, and for the forms where positions stop being known."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from tflint_leaks.analysis.symbolic import LAMBDA, MAX_DEPTH, UNKNOWN, Expr, Op, from_ast
from tflint_leaks.analysis.symbolic_cst import from_cst
from tflint_leaks.registry import RULES

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

#: ``ast`` nodes the converters do not see as expressions of their own.
_NOT_CONVERTED = (ast.Starred, ast.Slice, ast.FormattedValue)

Range = tuple[int, int, int, int]


def _sources() -> list[tuple[str, str]]:
    found = [
        (f"{code.code}-{kind}-{n}", example.source)
        for code in RULES
        for kind, examples in (("invalid", code.load().INVALID), ("valid", code.load().VALID))
        for n, example in enumerate(examples)
    ]
    found += [(str(p.relative_to(FIXTURES)), p.read_text()) for p in sorted(FIXTURES.rglob("*.py"))]
    return found


def _column(lines: list[str], line: int, offset: int) -> int:
    return len(lines[line - 1].encode("utf-8")[:offset].decode("utf-8"))


def _ast_expressions(source: str) -> dict[Range, ast.expr]:
    tree = ast.parse(source)
    lines = source.splitlines()
    inside_fstrings = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.JoinedStr)
        for inner in ast.walk(node)
        if inner is not node
    }
    found: dict[Range, ast.expr] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.expr) or isinstance(node, _NOT_CONVERTED):
            continue
        if id(node) in inside_fstrings or node.end_lineno is None or node.end_col_offset is None:
            continue
        key = (
            node.lineno,
            _column(lines, node.lineno, node.col_offset),
            node.end_lineno,
            _column(lines, node.end_lineno, node.end_col_offset),
        )
        found.setdefault(key, node)  # the outermost of nodes sharing a range
    return found


def _cst_expressions(source: str) -> dict[Range, cst.BaseExpression]:
    wrapper = MetadataWrapper(cst.parse_module(source))
    found: dict[Range, cst.BaseExpression] = {}
    for node, where in wrapper.resolve(PositionProvider).items():
        if isinstance(node, cst.BaseExpression):
            key = (where.start.line, where.start.column, where.end.line, where.end.column)
            previous = found.get(key)
            # The outermost node of a range, as ``ast.walk`` meets it first.
            if previous is None or node.deep_equals(previous) or _contains(node, previous):
                found[key] = node
    return found


def _contains(outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
    return any(child is inner or _contains(child, inner) for child in outer.children)


def _unnamed(expr: Expr) -> Expr:
    """``expr`` without the names of its ``lambda``s: the index names each by its place, which
    libcst's converter does not know (a ``lambda`` it converts is not the index's)."""
    keywords = () if expr.op is Op.OTHER and expr.text == LAMBDA else expr.keywords
    return expr._replace(parts=tuple(_unnamed(p) for p in expr.parts), keywords=keywords)


SOURCES = _sources()


@pytest.mark.parametrize(("name", "source"), SOURCES, ids=[n for n, _ in SOURCES])
def test_both_converters_give_the_same_expression(name: str, source: str) -> None:
    in_ast = _ast_expressions(source)
    in_cst = _cst_expressions(source)
    compared = 0
    for key, node in in_ast.items():
        other = in_cst.get(key)
        if other is None:
            continue
        assert _unnamed(from_ast(node)) == from_cst(other), (name, key, ast.unparse(node))
        compared += 1
    assert compared >= len(in_ast) * 0.9, (name, compared, len(in_ast))


def _both(code: str) -> tuple[Expr, Expr]:
    code = textwrap.dedent(code).strip()
    parsed_ast = ast.parse(code, mode="eval").body
    parsed_cst = cst.parse_expression(code)
    return from_ast(parsed_ast), from_cst(parsed_cst)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        # Arguments after ``*args`` are not matched to the following parameters.
        ("f(a, *rest, b)", Expr(Op.CALL, "*", (Expr(Op.REF, "f"), Expr(Op.REF, "a")))),
        (
            "f(a, **options)",
            Expr(
                Op.CALL,
                "**",
                (Expr(Op.REF, "f"), Expr(Op.REF, "a"), Expr(Op.REF, "options")),
                ("**",),
            ),
        ),
        # The first ``**mapping`` is kept (what it passes can be read from a known dict); a
        # second one, or a ``*args``, makes what the call passes unknown.
        (
            "f(**a, **b)",
            Expr(Op.CALL, "*", (Expr(Op.REF, "f"), Expr(Op.REF, "a")), ("**",)),
        ),
        (
            "f(*args, key=1, **a)",
            Expr(
                Op.CALL,
                "*",
                (Expr(Op.REF, "f"), Expr(Op.LITERAL, "number", number=1), Expr(Op.REF, "a")),
                ("key", "**"),
            ),
        ),
        # A display with a ``*`` element has no known length; only what comes before is kept.
        ("(a, *b)", Expr(Op.DISPLAY, "tuple", (Expr(Op.REF, "a"),), number=-1)),
        ("[*a, b]", Expr(Op.DISPLAY, "list", (), number=-1)),
        ("...", UNKNOWN),
        ("-1", Expr(Op.UNARY, "-", (Expr(Op.LITERAL, "number", number=1),))),
        ("a or b or c", Expr(Op.OTHER, "or", tuple(Expr(Op.REF, n) for n in "abc"))),
        (
            "x[1:2]",
            Expr(Op.ITEM, "slice", (Expr(Op.REF, "x"),)),
        ),
        # At most how many items a slice takes, where it says (the melanoma pipeline's
        # `images[:3] + images[-3:]`, unseen set Q of stop 43).
        ("x[:3]", Expr(Op.ITEM, "slice", (Expr(Op.REF, "x"),), number=3)),
        ("x[-3:]", Expr(Op.ITEM, "slice", (Expr(Op.REF, "x"),), number=3)),
        ("x[:-3]", Expr(Op.ITEM, "slice", (Expr(Op.REF, "x"),))),
        ("x[:3:2]", Expr(Op.ITEM, "slice", (Expr(Op.REF, "x"),))),
        (
            "[v for i, v in pairs if v]",
            Expr(
                Op.COMPREHENSION,
                "list",
                (Expr(Op.REF, "v"), Expr(Op.REF, "pairs")),
                ("i,v",),
                1,
            ),
        ),
    ],
)
def test_forms_where_positions_stop_being_known(code: str, expected: Expr) -> None:
    from_the_ast, from_the_cst = _both(code)
    assert from_the_ast == expected
    assert from_the_cst == expected


def test_expressions_nested_too_deep_are_unknown_in_both() -> None:
    code = "1" + " + 1" * (MAX_DEPTH + 5)
    from_the_ast, from_the_cst = _both(code)
    assert from_the_ast == from_the_cst
    depth, current = 0, from_the_ast
    while current.op is Op.BINARY:
        current, depth = current.parts[0], depth + 1
    assert current == UNKNOWN and depth == MAX_DEPTH + 1
