"""Where a script ends: the first module-level statement that never hands control to the next.

What follows it never runs (a scratch file's code below its ``exit()``, a demo's code below its
endless loop), so it is not linted. Read from the ``ast`` tree by the index, which never loads
libcst: a run with no TensorFlow code in sight parses nothing with it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

#: Calls that end the program: what follows them never runs (``exit`` and ``quit`` are the
#: builtins ``site`` adds, when the module binds no name of its own so).
EXITS = frozenset({"sys.exit", "os._exit", "os.abort"})
_EXIT_BUILTINS = frozenset({"exit", "quit"})


def end_of_script(
    tree: ast.Module, resolve: Callable[[ast.expr], str | None], bound: frozenset[str]
) -> int | None:
    """The last line of the first module-level statement of ``tree`` that never hands control
    to the next one, if any: what follows it never runs. It raises or calls what ends the
    program (``exit()``, ``sys.exit(main())``, ``os._exit(0)``; ``resolve`` gives a callee's
    canonical name, ``bound`` the names the module binds itself), or it is a ``while True:``
    (``while 1:``) with no ``break`` of its own (a server's or a demo's endless loop)."""
    for statement in tree.body:
        if _never_completes(statement, resolve, bound):
            return statement.end_lineno or statement.lineno
    return None


def _never_completes(
    statement: ast.stmt, resolve: Callable[[ast.expr], str | None], bound: frozenset[str]
) -> bool:
    if isinstance(statement, ast.Raise):
        return True
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        func = statement.value.func
        if isinstance(func, ast.Name) and func.id in _EXIT_BUILTINS:
            return func.id not in bound
        return resolve(func) in EXITS
    if isinstance(statement, ast.While) and _always(statement.test):
        return not _breaks(statement)
    return False


def _always(test: ast.expr) -> bool:
    """``True`` or a nonzero number."""
    return isinstance(test, ast.Constant) and test.value is not None and bool(test.value)


def _breaks(loop: ast.While) -> bool:
    """A ``break`` in ``loop``'s body that leaves it (not one of an inner loop's body, nor of
    a function or class defined in it)."""
    todo: list[ast.AST] = list(loop.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Break):
            return True
        if isinstance(node, ast.For | ast.AsyncFor | ast.While):
            todo.extend(node.orelse)  # a break there leaves ``loop``
        elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            todo.extend(ast.iter_child_nodes(node))
    return False
