"""Which assignments of a body no other code can see, and which follow one of the same run.

Two passes over a body's own statements (a function's block, a module's code), both over the
structure of the code (``if`` and its branches, loops, ``with``, ``try``), not its lines:

* backwards, the targets each statement *kills*: those that every path from it assigns again
  before anything that could look at them from elsewhere. What may look is a call that may run
  code of the program (anything but a plain builtin or a TensorFlow, NumPy or Keras function
  given no callback: ``tf.cast`` runs none, ``tf.map_fn``, ``tf.py_function`` or a method of the
  program's own may), a ``yield`` or ``await``, an ``import``, leaving the body (``return``,
  ``raise``, its end), ``break`` and ``continue``, the end of a loop's body (the next iteration
  may look first), a ``try`` (an exception may leave anywhere), a ``with`` on a context that
  is not such a call, and a class body. An assignment whose target the statement after it
  kills is *overwritten*: nothing ever reads its value but the body itself (``self.y =
  tf.argmax(p)`` in each branch of an ``if``, then ``self.y = tf.cast(self.y, tf.float32)``).
* forwards, the targets the same run of the body has certainly assigned (on every path: both
  branches of an ``if``, not a loop that may run no iteration, not a handler of a ``try``). An
  assignment to one of them is *renewed*: a value it computes from the target's own
  (``self.y = tf.cast(self.y, tf.float32)``) comes from this run's, not from the last run's.

Assigning ``x`` also ends what is known of ``x.attr``: another object holds it now.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Sequence

from tflint_leaks.analysis.names import is_keras, is_numpy, is_tensorflow
from tflint_leaks.analysis.symbolic import Op, from_ast

#: Builtins whose calls say nothing about models, tapes or functions.
PLAIN_BUILTINS = frozenset(
    {"print", "len", "range", "isinstance", "str", "int", "float", "bool", "list", "dict",
     "tuple", "set", "enumerate", "zip", "min", "max", "sum", "abs", "round", "sorted",
     "hasattr", "getattr", "setattr", "super", "type", "format", "repr", "open", "iter",
     "next", "map", "filter", "any", "all", "reversed"}
)  # fmt: skip
#: Of those, the ones that may run code of the program: the next item of a generator, an
#: attribute that is a property, a method looked up through ``super``.
_RUNNING_BUILTINS = frozenset({"next", "iter", "getattr", "setattr", "super", "map", "filter"})
#: TensorFlow and NumPy functions that call a function they are given (or make one).
_CALLING = frozenset(
    {"map_fn", "py_function", "numpy_function", "py_func", "vectorized_map", "scan", "foldl",
     "foldr", "while_loop", "cond", "case", "switch_case", "function", "custom_gradient",
     "vectorize", "apply_along_axis", "apply_over_axes", "frompyfunc", "piecewise",
     "fromfunction"}
)  # fmt: skip

Resolve = Callable[[ast.expr], str | None]
Targets = frozenset[str]
#: Unreachable (after a ``return``): every target is certainly assigned there.
_NOWHERE = None
_NONE: Targets = frozenset()


def runs_no_code(call: ast.Call, resolve: Resolve) -> bool:
    """``call`` runs no code of the program: a plain builtin, or a TensorFlow, NumPy or Keras
    function that calls nothing it is given, with no ``lambda`` among its arguments."""
    if any(isinstance(a, ast.Lambda) for a in (*call.args, *(k.value for k in call.keywords))):
        return False
    func = call.func
    if isinstance(func, ast.Name) and func.id in PLAIN_BUILTINS - _RUNNING_BUILTINS:
        return True
    resolved = resolve(func)
    if resolved is None or resolved.rpartition(".")[2] in _CALLING:
        return False
    return is_tensorflow(resolved) or is_numpy(resolved) or is_keras(resolved)


def flow(
    statements: Sequence[ast.stmt], resolve: Resolve, tracked: Targets
) -> tuple[list[tuple[str, ast.stmt]], list[tuple[str, ast.stmt]]]:
    """The overwritten and the renewed assignments of a body, each as (target, statement),
    for the ``tracked`` targets (those it assigns more than once: no other can be either)."""
    found = _Flow(resolve, tracked)
    found.backward(statements, _NONE)
    found.forward(statements, _NONE)
    return found.overwritten, found.renewed


class _Flow:
    def __init__(self, resolve: Resolve, tracked: Targets) -> None:
        self.resolve = resolve
        self.tracked = tracked
        self.overwritten: list[tuple[str, ast.stmt]] = []
        self.renewed: list[tuple[str, ast.stmt]] = []

    # -- backwards: what every path assigns again before anything may look ----------------

    def backward(self, block: Sequence[ast.stmt], after: Targets) -> Targets:
        """The targets killed before ``block`` runs, given those killed after it."""
        for statement in reversed(block):
            after = self._killed(statement, after)
        return after

    def _killed(self, node: ast.stmt, after: Targets) -> Targets:
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = _bound(_targets(node))
            self.overwritten.extend((t, node) for t in targets if t in after)
            if isinstance(node, ast.AnnAssign) and node.value is None:
                return after  # ``x: int`` assigns nothing
            return self._through(node, _bind(after, targets, self.tracked))
        if isinstance(node, ast.If):
            joined = self.backward(node.body, after) & self.backward(node.orelse, after)
            return self._through(node.test, joined)
        if isinstance(node, ast.With):
            if after and not all(self._plain_context(item.context_expr) for item in node.items):
                after = _NONE  # its context may look: nothing after it counts inside
            inner = self.backward(node.body, after)
            if not inner or not all(self._plain_context(i.context_expr) for i in node.items):
                return _NONE
            return inner - _under(inner, _bound(i.optional_vars for i in node.items))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            header = (*node.decorator_list, *node.args.defaults, *node.args.kw_defaults)
            return self._through_all(header, _bind(after, {node.name}, self.tracked))
        if isinstance(node, ast.Expr | ast.Assert | ast.Delete):
            return self._through(node, after - _under(after, _deleted(node)))
        if isinstance(node, ast.Pass | ast.Global | ast.Nonlocal):
            return after
        for block in _blocks(node):  # loops, ``try``, ``match``, a class: what may look
            self.backward(block, _NONE)
        return _NONE

    def _plain_context(self, context: ast.expr) -> bool:
        """A ``with`` context that runs no code of the program on entry or exit
        (``tf.GradientTape()``, ``tf.name_scope("x")``)."""
        return isinstance(context, ast.Call) and not _looks(context, self.resolve)

    def _through(self, node: ast.AST, after: Targets) -> Targets:
        """What is killed before ``node`` runs: nothing when it may look."""
        return _NONE if after and _looks(node, self.resolve) else after

    def _through_all(self, nodes: Iterable[ast.AST | None], after: Targets) -> Targets:
        looks = after and any(node is not None and _looks(node, self.resolve) for node in nodes)
        return _NONE if looks else after

    # -- forwards: what this run has certainly assigned -----------------------------------

    def forward(self, block: Sequence[ast.stmt], before: Targets | None) -> Targets | None:
        """The targets certainly assigned after ``block``, given those before it (None:
        the code is not reached)."""
        for statement in block:
            if before is _NOWHERE:
                return _NOWHERE
            before = self._assigns(statement, before)
        return before

    def _assigns(self, node: ast.stmt, before: Targets) -> Targets | None:
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            if isinstance(node, ast.AnnAssign) and node.value is None:
                return before
            targets = _bound(_targets(node))
            self.renewed.extend((t, node) for t in targets if t in before)
            return _bind(before, targets, self.tracked)
        if isinstance(node, ast.If):
            return _meet(self.forward(node.body, before), self.forward(node.orelse, before))
        if isinstance(node, ast.With):
            after = self.forward(node.body, before)
            return before if after is _NOWHERE else after  # a context may swallow a raise
        if isinstance(node, ast.Try | ast.TryStar):
            normal = self.forward(node.orelse, self.forward(node.body, before))
            for handler in node.handlers:
                normal = _meet(normal, self.forward(handler.body, before))
            if node.finalbody:
                return self.forward(node.finalbody, before if normal is _NOWHERE else normal)
            return normal
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return _bind(before, {node.name}, self.tracked)
        if isinstance(node, ast.Return | ast.Raise | ast.Break | ast.Continue):
            return _NOWHERE
        if isinstance(node, ast.Delete):
            return before - _under(before, _deleted(node))
        for block in _blocks(node):  # loops and ``match``: no block certainly runs
            self.forward(block, before)
        return before


def _looks(node: ast.AST, resolve: Resolve) -> bool:
    """``node`` (a statement's own expressions, not the bodies of its functions) may run code
    that looks at the program's state: a call that may run the program's code, a ``yield``,
    an ``await``."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Yield | ast.YieldFrom | ast.Await):
            return True
        if isinstance(current, ast.Call) and not runs_no_code(current, resolve):
            return True
        if isinstance(current, ast.Lambda):
            stack.extend(current.args.defaults)
            continue
        stack.extend(ast.iter_child_nodes(current))
    return False


def _targets(node: ast.Assign | ast.AugAssign | ast.AnnAssign) -> list[ast.expr]:
    return node.targets if isinstance(node, ast.Assign) else [node.target]


def _bound(targets: Iterable[ast.expr | None]) -> set[str]:
    """The dotted names ``targets`` bind (``self.y``, ``a`` and ``b`` of ``a, b = f()``)."""
    found: set[str] = set()
    stack = [target for target in targets if target is not None]
    while stack:
        target = stack.pop()
        if isinstance(target, ast.Tuple | ast.List):
            stack.extend(target.elts)
        elif isinstance(target, ast.Starred):
            stack.append(target.value)
        elif isinstance(target, ast.Name | ast.Attribute):
            name = from_ast(target)
            if name.op is Op.REF:
                found.add(name.text)
    return found


def _deleted(node: ast.stmt) -> set[str]:
    return _bound(node.targets) if isinstance(node, ast.Delete) else set()


def _under(known: Targets, names: set[str]) -> Targets:
    """The names of ``known`` that are ``names`` or attributes of them."""
    return frozenset(
        each for each in known if any(each == name or each.startswith(f"{name}.") for name in names)
    )


def _bind(known: Targets, names: set[str], tracked: Targets) -> Targets:
    """``known`` (of the ``tracked`` targets) once ``names`` are bound: they are, their old
    attributes are not."""
    kept = known - _under(known, names) if known else known
    return kept | (names & tracked)


def _meet(first: Targets | None, second: Targets | None) -> Targets | None:
    if first is _NOWHERE:
        return second
    if second is _NOWHERE:
        return first
    return first & second


def _blocks(node: ast.stmt) -> list[list[ast.stmt]]:
    """The blocks of a compound statement (not a class's body: its own facts)."""
    if isinstance(node, ast.If | ast.For | ast.AsyncFor | ast.While):
        return [node.body, node.orelse]
    if isinstance(node, ast.Try | ast.TryStar):
        return [node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody]
    if isinstance(node, ast.With | ast.AsyncWith):
        return [node.body]
    if isinstance(node, ast.Match):
        return [case.body for case in node.cases]
    return []
