"""Generic helpers over libcst nodes that every analysis and rule shares.

libcst's own visitor rebuilds every node it visits (its cost is about that of the parse). The
analyses only need the semantic children, so these are read straight from the dataclass fields,
skipping whitespace, commas, parentheses and other trivia.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Iterator

import libcst as cst

#: Nodes that open a scope of their own.
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


#: Every concrete libcst node class: ``type(x) in NODE_TYPES`` is much faster than
#: ``isinstance(x, cst.CSTNode)`` (libcst's node classes are abstract base classes).
NODE_TYPES = frozenset(
    kind
    for kind in vars(cst).values()
    if isinstance(kind, type) and issubclass(kind, cst.CSTNode) and not inspect.isabstract(kind)
)
_SCOPE_TYPE_SET = frozenset(SCOPE_TYPES)


def children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The semantic children of ``node`` in source order."""
    node_type = type(node)
    names = _FIELDS[node_type] if node_type in _FIELDS else _fields(node_type)
    for name in names:
        value = getattr(node, name)
        kind = type(value)
        if kind in NODE_TYPES:
            yield value
        elif kind is tuple or kind is list:
            for item in value:
                if type(item) in NODE_TYPES:
                    yield item


def own_nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """``node``'s descendants in source order, without entering nested functions, classes or
    lambdas (their definitions are yielded, not their bodies)."""
    # A stack of iterators, not nested generators: as fast for any depth (a chain of nested
    # generators costs each yielded node one resumption per level), and no recursion.
    stack = [children(node)]
    while stack:
        for child in stack[-1]:
            yield child
            if type(child) not in _SCOPE_TYPE_SET:
                stack.append(children(child))
                break
        else:
            stack.pop()


def descendants(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """``node`` and all its descendants, nested scopes included."""
    yield node
    stack = [children(node)]
    while stack:
        for child in stack[-1]:
            yield child
            stack.append(children(child))
            break
        else:
            stack.pop()


def header_parts(node: cst.FunctionDef | cst.ClassDef | cst.Lambda) -> list[cst.CSTNode]:
    """What a ``def``, ``class`` or ``lambda`` evaluates where it is defined, in the enclosing
    scope (decorators, parameter defaults and annotations, bases): not its body."""
    if isinstance(node, cst.FunctionDef):
        returns = [node.returns] if node.returns is not None else []
        return [*node.decorators, node.params, *returns]
    if isinstance(node, cst.ClassDef):
        return [
            *node.decorators,
            *(arg.value for arg in node.bases),
            *(arg.value for arg in node.keywords),
        ]
    return [node.params]
