"""The loop table: which parts of a Python loop run once, once per iteration, and after it.

Written once, read by everything that asks "does this run every iteration?": the walker that
drives the rules (:mod:`tflint_leaks.engine.walker`), the per-scope assignment collector
(:mod:`.scope`) and the rule kit's questions about a loop's calls. For the record:

- ``for target in iterable: body else: orelse``: ``iterable`` once; ``target`` and ``body``
  every iteration; ``orelse`` after.
- ``while test: body else: orelse``: ``test`` and ``body`` every iteration; ``orelse`` after.
- ``[element for t1 in i1 if c1 for t2 in i2 if c2]``: ``i1`` once (it is evaluated outside the
  comprehension's scope); ``t1``, ``c1`` and the inner loop every iteration of the first; ``i2``
  once per iteration of the first, and ``t2``, ``c2`` and ``element`` every iteration of the
  inner loop. Each ``for`` clause (a :class:`libcst.CompFor`) is a loop of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import libcst as cst

from tflint_leaks.analysis.nodes import SCOPE_TYPES, own_nodes

Comprehension = cst.ListComp | cst.SetComp | cst.GeneratorExp | cst.DictComp
LoopNode = cst.For | cst.While | cst.CompFor


@dataclass(frozen=True)
class LoopParts:
    """One loop: what runs before its first iteration, on every iteration (a nested
    comprehension loop is a :class:`LoopParts` of its own, run every iteration), and after."""

    loop: LoopNode
    before: tuple[cst.CSTNode, ...]
    each: tuple[cst.CSTNode | LoopParts, ...]
    after: tuple[cst.CSTNode, ...] = ()

    def iteration_nodes(self) -> Iterator[cst.CSTNode]:
        """Every node evaluated on each iteration, in source order, nested functions, classes
        and lambdas excluded (their definitions are yielded, not their bodies)."""
        for part in self.each:
            if isinstance(part, LoopParts):
                for node in (*part.before, *part.after):
                    yield from _own(node)
                yield from part.iteration_nodes()
            else:
                yield from _own(part)


#: The node types :func:`loop_parts` answers for (a quick test before the isinstance checks,
#: which are slow on libcst's abstract node classes).
LOOP_NODE_TYPES = frozenset(
    {cst.For, cst.While, cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp}
)


def loop_parts(node: cst.CSTNode) -> LoopParts | None:
    """The parts of ``node`` when it is a ``for`` or ``while`` statement or a comprehension
    (whose outermost ``for`` clause is the loop); None for anything else."""
    if type(node) not in LOOP_NODE_TYPES:
        return None
    if isinstance(node, cst.For):
        after = (node.orelse,) if node.orelse is not None else ()
        return LoopParts(node, (node.iter,), (node.target, node.body), after)
    if isinstance(node, cst.While):
        after = (node.orelse,) if node.orelse is not None else ()
        return LoopParts(node, (), (node.test, node.body), after)
    if isinstance(node, cst.DictComp):
        return _clause(node.for_in, (node.key, node.value))
    if isinstance(node, cst.ListComp | cst.SetComp | cst.GeneratorExp):
        return _clause(node.for_in, (node.elt,))
    return None


def _clause(clause: cst.CompFor, elements: tuple[cst.CSTNode, ...]) -> LoopParts:
    inner = clause.inner_for_in
    rest: tuple[cst.CSTNode | LoopParts, ...] = (
        (_clause(inner, elements),) if inner is not None else elements
    )
    conditions = tuple(condition.test for condition in clause.ifs)
    return LoopParts(clause, (clause.iter,), (clause.target, *conditions, *rest))


def walk_loop(
    parts: LoopParts,
    walk: Callable[[cst.CSTNode], None],
    enter: Callable[[LoopParts], None],
    leave: Callable[[LoopParts], None],
) -> None:
    """Walk a loop's parts in evaluation order: ``walk`` each part, with ``enter``/``leave``
    called around the parts that run every iteration (the loop is "on the stack" then)."""
    for node in parts.before:
        walk(node)
    enter(parts)
    for part in parts.each:
        if isinstance(part, LoopParts):
            walk_loop(part, walk, enter, leave)
        else:
            walk(part)
    leave(parts)
    for node in parts.after:
        walk(node)


def _own(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield node
    if not isinstance(node, SCOPE_TYPES):
        yield from own_nodes(node)
