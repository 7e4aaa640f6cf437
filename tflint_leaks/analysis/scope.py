"""Per-scope loop facts, computed lazily on the libcst tree.

For one function (or the module's top level) :class:`ScopeFacts` records every assignment to a
name or dotted attribute (``step``, ``self.step``) together with the Python loops that enclose
it. A value then *changes between iterations* of a loop when it is assigned inside that loop:
a loop target, an augmented assignment, or a plain assignment whose right-hand side itself
changes. Facts are collected only for scopes in which a rule asks a question.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import libcst as cst

LOOP_TYPES = (cst.For, cst.While, cst.CompFor)
SCOPE_TYPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def dotted(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a chain of names and attributes, else None."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


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
    #: ``id()`` of every loop (``For``/``While``/``CompFor``) that encloses the assignment.
    loops: frozenset[int]


@dataclass
class ScopeFacts:
    node: cst.CSTNode
    parameters: set[str] = field(default_factory=set)
    assignments: dict[str, list[Assignment]] = field(default_factory=dict)
    deleted: dict[str, list[frozenset[int]]] = field(default_factory=dict)

    def add(self, key: str, assignment: Assignment) -> None:
        self.assignments.setdefault(key, []).append(assignment)


def _loop_target_names(
    target: cst.BaseExpression, path: tuple[int, ...] = ()
) -> Iterator[tuple[str, tuple[int, ...]]]:
    if isinstance(target, cst.Tuple | cst.List):
        for position, element in enumerate(target.elements):
            yield from _loop_target_names(element.value, (*path, position))
        return
    key = dotted(target)
    if key is not None:
        yield key, path


class _Collector:
    def __init__(self, facts: ScopeFacts) -> None:
        self.facts = facts
        self.loops: list[int] = []

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
        for key, path in _loop_target_names(target):
            self.facts.add(
                key,
                Assignment(node, None, False, LoopTarget(iterable, path), frozenset(self.loops)),
            )

    def walk_all(self, nodes: Sequence[cst.CSTNode]) -> None:
        for node in nodes:
            self.walk(node)

    def walk(self, node: cst.CSTNode) -> None:
        if isinstance(node, SCOPE_TYPES):
            return
        if isinstance(node, cst.For):
            self.walk(node.iter)
            self.loops.append(id(node))
            self.loop_targets(node.target, node.iter, node)
            self.walk(node.body)
            self.loops.pop()
            if node.orelse is not None:
                self.walk(node.orelse)
            return
        if isinstance(node, cst.While):
            self.loops.append(id(node))
            self.walk(node.test)
            self.walk(node.body)
            self.loops.pop()
            if node.orelse is not None:
                self.walk(node.orelse)
            return
        if isinstance(node, cst.ListComp | cst.SetComp | cst.GeneratorExp | cst.DictComp):
            self._comprehension(node)
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
        for child in children(node):
            self.walk(child)

    def _comprehension(
        self, node: cst.ListComp | cst.SetComp | cst.GeneratorExp | cst.DictComp
    ) -> None:
        depth = len(self.loops)
        comp: cst.CompFor | None = node.for_in
        while comp is not None:
            self.walk(comp.iter)
            self.loops.append(id(comp))
            self.loop_targets(comp.target, comp.iter, comp)
            for condition in comp.ifs:
                self.walk(condition.test)
            comp = comp.inner_for_in
        if isinstance(node, cst.DictComp):
            self.walk(node.key)
            self.walk(node.value)
        else:
            self.walk(node.elt)
        del self.loops[depth:]


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


# -- a fast generic child iterator ------------------------------------------------------------
#
# libcst's own visitor rebuilds every node it visits (its cost is about that of the parse). The
# rules only need the semantic children, so these are read straight from the dataclass fields,
# skipping whitespace, commas, parentheses and other trivia.

_TRIVIA_PREFIXES = ("whitespace", "lpar", "rpar", "lbrace", "rbrace", "lbracket", "rbracket")
_TRIVIA = frozenset(
    {
        "colon",
        "comma",
        "comment",
        "default_indent",
        "default_newline",
        "dot",
        "empty_lines",
        "encoding",
        "equal",
        "first_colon",
        "second_colon",
        "footer",
        "has_trailing_newline",
        "header",
        "indent",
        "leading_lines",
        "lines_after_decorators",
        "newline",
        "semicolon",
        "trailing_whitespace",
        "asynchronous",
        "star",
        "conversion",
        "relative",
        "posonly_ind",
    }
)
_FIELDS: dict[type[cst.CSTNode], tuple[str, ...]] = {}


def _fields(node_type: type[cst.CSTNode]) -> tuple[str, ...]:
    names = tuple(
        f.name
        for f in dataclasses.fields(node_type)
        if f.name not in _TRIVIA and not f.name.startswith(_TRIVIA_PREFIXES)
    )
    _FIELDS[node_type] = names
    return names


def children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The semantic children of ``node`` in source order."""
    node_type = type(node)
    names = _FIELDS[node_type] if node_type in _FIELDS else _fields(node_type)
    for name in names:
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            yield value
        elif isinstance(value, tuple | list):
            for item in value:
                if isinstance(item, cst.CSTNode):
                    yield item


def own_nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """``node``'s descendants in source order, without entering nested functions, classes or
    lambdas (their definitions are yielded, not their bodies)."""
    for child in children(node):
        yield child
        if not isinstance(child, SCOPE_TYPES):
            yield from own_nodes(child)


def descendants(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """``node`` and all its descendants, nested scopes included."""
    yield node
    for child in children(node):
        yield from descendants(child)
