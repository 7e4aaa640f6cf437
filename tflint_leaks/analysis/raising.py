"""Statements of a notebook that certainly raise: a name read that no cell binds.

``NameError`` is the one exception a linter can be sure of without running anything, in a
notebook: it runs from a new kernel, cell by cell, so a name that no cell binds, in any scope,
that is no builtin and that nothing could add to the namespace in a way the cells do not show (a
star import, ``exec``, ``globals()``, a magic such as ``%run``) is unbound wherever it is read. A
statement that reads one on every way through it never completes, and what follows it in its
block never runs (a generation loop whose first statement reads a name no cell defines: the
``predict`` below it never runs, however many iterations the loop was written for). A ``.py``
file is not read so (see :meth:`~tflint_leaks.rulekit.context.FileContext.raises`)."""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator

import libcst as cst

from tflint_leaks.analysis.nodes import children

#: Names every module can read without binding them: this Python's builtins, those of Python 2
#: and of other platforms (code written for them runs there), the module attributes Python
#: sets, the names IPython, Jupyter and Databricks put in a notebook's namespace, and ``_``
#: (``gettext.install`` adds it to the builtins).
ALWAYS_BOUND = frozenset(dir(builtins)) | frozenset(
    {
        # Python 2
        "xrange", "unicode", "basestring", "long", "raw_input", "reduce", "file", "execfile",
        "unichr", "cmp", "reload", "buffer", "apply", "intern", "coerce", "StandardError",
        # other platforms
        "WindowsError",
        # set by Python on modules, classes and methods
        "__file__", "__path__", "__cached__", "__annotations__", "__builtins__", "__class__",
        "__module__", "__qualname__",
        # IPython, Jupyter, Databricks
        "display", "get_ipython", "In", "Out", "exit", "quit", "_i", "_ii", "_iii", "_oh",
        "_dh", "__", "___", "spark", "sc", "sqlContext", "dbutils", "displayHTML",
        "_",
    }
)  # fmt: skip
#: Names whose use may bind any name in the module's namespace where the file does not show it.
_DYNAMIC = frozenset(
    {"globals", "locals", "vars", "exec", "execfile", "get_ipython", "builtins", "__builtin__",
     "__builtins__", "setattr"}
)  # fmt: skip
#: Attributes through which a module's namespace may be written (``sys.modules[__name__]``,
#: ``module.__dict__``).
_DYNAMIC_ATTRIBUTES = frozenset({"modules", "__dict__"})
_DEFERRED = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def unbound_names(source: str) -> frozenset[str]:
    """The names the notebook's Python ``source`` (its cells joined) reads that nothing in it
    binds, in any scope, and that are not :data:`ALWAYS_BOUND`; empty when the notebook may
    bind names it does not show: a star import, any use of ``exec``, ``globals()``,
    ``setattr``, ``sys.modules``..., a magic (IPython's call, here ``...``, may be ``%run`` or
    ``%store -r``). The whole file is read with ``ast``: the libcst pass may see only part of
    it."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    bound: set[str] = set()
    read: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif _hides_bindings(node):
            return frozenset()
        else:
            bound.update(_binds(node))
    if read & _DYNAMIC:
        return frozenset()
    return frozenset(read - bound - ALWAYS_BOUND)


def _hides_bindings(node: ast.AST) -> bool:
    """``node`` may bind names the cells do not show: ``sys.modules[...]``, ``x.__dict__``, a
    star import, a magic."""
    if isinstance(node, ast.Attribute):
        return node.attr in _DYNAMIC_ATTRIBUTES
    if isinstance(node, ast.ImportFrom):
        return any(alias.name == "*" for alias in node.names)
    return isinstance(node, ast.Constant) and node.value is Ellipsis


def _binds(node: ast.AST) -> Iterator[str]:
    """The names ``node`` itself binds, other than a ``Name`` stored to."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        yield node.name
    elif isinstance(node, ast.arg):
        yield node.arg
    elif isinstance(node, ast.alias):
        yield (node.asname or node.name).partition(".")[0]
    elif isinstance(node, ast.ExceptHandler) and node.name:
        yield node.name
    elif isinstance(node, ast.Global | ast.Nonlocal):
        yield from node.names
    elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
        yield node.name
    elif isinstance(node, ast.MatchMapping) and node.rest:
        yield node.rest


def raises(statement: cst.BaseStatement, unbound: frozenset[str]) -> bool:
    """Running ``statement`` reads one of ``unbound`` on every way through it, so it never
    completes: in an expression statement, an assignment's value, a ``return``, ``raise`` or
    ``assert``, the test of an ``if`` or ``while``, the iterable of a ``for``, the items of a
    ``with``; not behind a short circuit, a conditional expression, a later comparison of a
    chain, a lambda or a comprehension, nor after a small statement that jumps."""
    if not unbound:
        return False
    return any(name.value in unbound for name in _evaluated(statement))


def _evaluated(statement: cst.BaseStatement) -> Iterator[cst.Name]:
    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            if isinstance(small, cst.Expr | cst.Assign | cst.AnnAssign | cst.Return):
                if small.value is not None:
                    yield from _read_first(small.value)
            elif isinstance(small, cst.AugAssign):
                yield from _read_first(small.value)
                if isinstance(small.target, cst.Name):
                    yield small.target
            elif isinstance(small, cst.Raise) and small.exc is not None:
                yield from _read_first(small.exc)
            elif isinstance(small, cst.Assert):
                yield from _read_first(small.test)
            if isinstance(small, cst.Return | cst.Raise | cst.Break | cst.Continue):
                return
    elif isinstance(statement, cst.If | cst.While):
        yield from _read_first(statement.test)
    elif isinstance(statement, cst.For):
        yield from _read_first(statement.iter)
    elif isinstance(statement, cst.With):
        for item in statement.items:
            yield from _read_first(item.item)


def _read_first(node: cst.CSTNode) -> Iterator[cst.Name]:
    """The names an expression reads whenever it is evaluated."""
    if isinstance(node, cst.Name):
        yield node
    elif isinstance(node, cst.Attribute):
        yield from _read_first(node.value)
    elif isinstance(node, cst.BooleanOperation):
        yield from _read_first(node.left)
    elif isinstance(node, cst.IfExp):
        yield from _read_first(node.test)
    elif isinstance(node, cst.Comparison):
        yield from _read_first(node.left)
        if node.comparisons:
            yield from _read_first(node.comparisons[0].comparator)
    elif isinstance(node, cst.Call):
        yield from _read_first(node.func)
        for arg in node.args:
            yield from _read_first(arg.value)
    elif isinstance(node, cst.NamedExpr):
        yield from _read_first(node.value)
    elif not isinstance(node, _DEFERRED):
        for child in children(node):
            yield from _read_first(child)
