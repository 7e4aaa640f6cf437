"""Per-scope loop facts, computed lazily on the libcst tree.

For one function (or the module's top level) :class:`ScopeFacts` records every assignment to a
name or dotted attribute (``step``, ``self.step``) together with the Python loops that enclose
it. A value then *changes between iterations* of a loop when it is assigned inside that loop:
a loop target, an augmented assignment, or a plain assignment whose right-hand side itself
changes. Facts are collected only for scopes in which a rule asks a question.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import libcst as cst

from tflint_leaks.analysis.loops import LOOP_NODE_TYPES, LoopNode, LoopParts, loop_parts, walk_loop
from tflint_leaks.analysis.nodes import SCOPE_TYPES, children, dotted, header_parts, own_nodes


@dataclass(frozen=True)
class LoopTarget:
    """A name bound by a loop header: element ``path`` (tuple indices) of ``iterable``'s items."""

    iterable: cst.BaseExpression
    path: tuple[int, ...]


@dataclass(frozen=True)
class Assignment:
    node: cst.CSTNode
    #: The assigned value for ``=`` and ``:=``; the right operand for augmented assignments.
    value: cst.BaseExpression | None
    augmented: bool
    target: LoopTarget | None
    #: Every loop (``For``/``While``/``CompFor``) of the scope that encloses the assignment.
    loops: frozenset[LoopNode]


@dataclass
class ScopeFacts:
    node: cst.CSTNode
    parameters: set[str] = field(default_factory=set)
    assignments: dict[str, list[Assignment]] = field(default_factory=dict)
    deleted: dict[str, list[frozenset[LoopNode]]] = field(default_factory=dict)
    #: The loops of the scope that enclose each call (the loop table's answer, kept so that
    #: tests can compare it with the walker's).
    call_loops: dict[cst.Call, frozenset[LoopNode]] = field(default_factory=dict)

    def add(self, key: str, assignment: Assignment) -> None:
        self.assignments.setdefault(key, []).append(assignment)


def loop_target_names(
    target: cst.BaseExpression, path: tuple[int, ...] = ()
) -> Iterator[tuple[str, tuple[int, ...]]]:
    """The dotted names a loop's target binds, each with its place in an item (tuple
    indices: ``(0,)`` for ``i`` of ``for i, x in ...``)."""
    if isinstance(target, cst.Tuple | cst.List):
        for position, element in enumerate(target.elements):
            yield from loop_target_names(element.value, (*path, position))
        return
    key = dotted(target)
    if key is not None:
        yield key, path


#: The node types the collector does more with than walk their children (a quick test before
#: the isinstance checks, which are slow on libcst's abstract node classes).
_COLLECTED = frozenset(
    {
        *SCOPE_TYPES,
        *LOOP_NODE_TYPES,
        cst.Assign,
        cst.AnnAssign,
        cst.AugAssign,
        cst.NamedExpr,
        cst.Del,
        cst.WithItem,
        cst.Call,
    }
)


class _Collector:
    def __init__(self, facts: ScopeFacts) -> None:
        self.facts = facts
        self.loops: list[LoopNode] = []

    def assign(
        self, target: cst.BaseExpression, node: cst.CSTNode, value: cst.BaseExpression
    ) -> None:
        if isinstance(target, cst.Tuple | cst.List):
            for element in target.elements:
                # Unpacking: the element's value is unknown; record an opaque assignment.
                self.assign(element.value, node, element.value)
            return
        if isinstance(target, cst.StarredElement):
            self.assign(target.value, node, target.value)
            return
        key = dotted(target)
        if key is not None:
            opaque = value is target
            self.facts.add(
                key,
                Assignment(node, None if opaque else value, False, None, frozenset(self.loops)),
            )

    def loop_targets(
        self, target: cst.BaseExpression, iterable: cst.BaseExpression, node: cst.CSTNode
    ) -> None:
        for key, path in loop_target_names(target):
            self.facts.add(
                key,
                Assignment(node, None, False, LoopTarget(iterable, path), frozenset(self.loops)),
            )

    def walk_all(self, nodes: Sequence[cst.CSTNode]) -> None:
        for node in nodes:
            self.walk(node)

    def walk(self, node: cst.CSTNode) -> None:
        kind = type(node)
        if kind not in _COLLECTED:
            for child in children(node):
                self.walk(child)
            return
        if isinstance(node, SCOPE_TYPES):
            self.walk_all(header_parts(node))  # the body is a scope of its own
            return
        parts = loop_parts(node)
        if parts is not None:
            walk_loop(parts, self.walk, self._enter, self._leave)
            return
        if isinstance(node, cst.Assign):
            for target in node.targets:
                self.assign(target.target, node, node.value)
        elif isinstance(node, cst.AnnAssign) and node.value is not None:
            self.assign(node.target, node, node.value)
        elif isinstance(node, cst.AugAssign):
            key = dotted(node.target)
            if key is not None:
                self.facts.add(key, Assignment(node, node.value, True, None, frozenset(self.loops)))
        elif isinstance(node, cst.NamedExpr):
            self.assign(node.target, node, node.value)
        elif isinstance(node, cst.Del):
            for key in _deleted_names(node.target):
                self.facts.deleted.setdefault(key, []).append(frozenset(self.loops))
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            self.assign(node.asname.name, node, node.asname.name)
        elif isinstance(node, cst.Call):
            self.facts.call_loops[node] = frozenset(self.loops)
        for child in children(node):
            self.walk(child)

    def _enter(self, parts: LoopParts) -> None:
        loop = parts.loop
        self.loops.append(loop)
        if not isinstance(loop, cst.While):
            self.loop_targets(loop.target, loop.iter, loop)

    def _leave(self, parts: LoopParts) -> None:
        self.loops.pop()


def _deleted_names(target: cst.BaseExpression) -> Iterator[str]:
    if isinstance(target, cst.Tuple | cst.List):
        for element in target.elements:
            yield from _deleted_names(element.value)
        return
    key = dotted(target)
    if key is not None:
        yield key


def collect_scope(node: cst.Module | cst.ClassDef | cst.FunctionDef | cst.Lambda) -> ScopeFacts:
    """Assignments of one scope: a function's body, a class body or a module's top level
    (nested functions and classes excluded: they are scopes of their own)."""
    facts = ScopeFacts(node)
    collector = _Collector(facts)
    if isinstance(node, cst.FunctionDef | cst.Lambda):
        params = node.params
        for param in (
            *params.posonly_params,
            *params.params,
            *params.kwonly_params,
            *(p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)),
        ):
            facts.parameters.add(param.name.value)
        body = node.body
        collector.walk(body)
    elif isinstance(node, cst.ClassDef):
        collector.walk(node.body)
    else:
        collector.walk_all(node.body)
    return facts


def _target_names(target: cst.BaseExpression) -> Iterator[str]:
    """The names an assignment target binds (``a``, ``a, *b``; not ``a.b`` nor ``a[0]``)."""
    return (key for key, _ in loop_target_names(target) if "." not in key)


def bound_names(node: cst.CSTNode) -> frozenset[str]:
    """The names ``node`` (a statement, or any part of one) binds in its scope: assignment,
    loop, ``with`` and ``except`` targets, ``:=``, imports, ``del``, and the names of the
    functions and classes it defines (not what their bodies bind)."""
    found: set[str] = set()
    for each in (node, *own_nodes(node)):
        if isinstance(each, cst.FunctionDef | cst.ClassDef):
            found.add(each.name.value)
        elif isinstance(
            each,
            cst.AssignTarget | cst.AnnAssign | cst.AugAssign | cst.NamedExpr | cst.For | cst.Del,
        ):
            found.update(_target_names(each.target))
        elif isinstance(each, cst.AsName):
            found.update(_target_names(each.name))
        elif isinstance(each, cst.ImportAlias) and each.asname is None:
            dotted_name = dotted(each.name)
            if dotted_name is not None:
                found.add(dotted_name.partition(".")[0])
    return frozenset(found)


def nested_definitions(module: cst.Module) -> frozenset[str]:
    """The names a module's top level binds with a ``def`` or ``class`` inside a block (a
    loop's body, an ``if``'s): definitions the index does not keep (it keeps the top-level
    ones), read where they are the binding that reaches a node (:func:`defined_in_block`)."""
    found: set[str] = set()
    for statement in module.body:
        if isinstance(statement, cst.BaseCompoundStatement) and not isinstance(
            statement, cst.FunctionDef | cst.ClassDef
        ):
            found.update(
                node.name.value
                for node in own_nodes(statement)
                if isinstance(node, cst.FunctionDef | cst.ClassDef)
            )
    return frozenset(found)


def defined_in_block(
    ancestors: Sequence[cst.CSTNode],
    candidates: frozenset[str],
    bound: Callable[[cst.CSTNode], frozenset[str]],
) -> frozenset[str]:
    """Which of ``candidates`` reach the last of ``ancestors`` (the module down to a node of
    its own top-level code) from a ``def`` or ``class`` inside a block: the statement before
    it in its block, or in a block around it, that last binds the name is that definition
    (``def predict_fn`` above the call in one loop's body, while a top-level ``def
    predict_fn`` further down is another function). A name also bound by a statement around
    the node (a loop's later statements run before it on the next iteration) or by one part
    of a compound statement it is in stays undecided. ``bound``: :func:`bound_names`,
    cached."""
    decided: dict[str, bool] = {}
    for depth in range(len(ancestors) - 2, -1, -1):
        block, child = ancestors[depth], ancestors[depth + 1]
        body = block.body if isinstance(block, cst.Module | cst.IndentedBlock) else ()
        position = next((i for i, statement in enumerate(body) if statement is child), None)
        if position is not None:
            for statement in reversed(body[:position]):
                if isinstance(statement, cst.FunctionDef | cst.ClassDef):
                    name = statement.name.value
                    if name in candidates:
                        decided.setdefault(name, isinstance(block, cst.IndentedBlock))
                    continue
                for name in bound(statement) & candidates:
                    decided.setdefault(name, False)
        else:
            for name in bound(block) & candidates:
                decided.setdefault(name, False)
    return frozenset(name for name, nested in decided.items() if nested)
