"""The units a file can be checked in: top-level functions, methods, and the rest.

For each unit the cheap ``ast`` pass records the identifiers it mentions and whether it has a
Python loop. Rules declare which identifiers they need (:meth:`Rule.triggers`), so the engine
can leave a unit that mentions none of them out of the libcst parse altogether: most of a large
TensorFlow code base cannot produce a finding, and parsing is the dominant cost.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

_LOOPS = frozenset({ast.For, ast.AsyncFor, ast.While, ast.comprehension})
#: Nodes whose bodies are scopes of their own.
_NESTED = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda})


@dataclass(frozen=True)
class Unit:
    """A top-level function, or a method of a top-level class."""

    qualname: str
    #: First line (the first decorator's) and last line, 1-based.
    start: int
    end: int
    names: frozenset[str]
    has_loop: bool
    #: The deepest expression nesting, as libcst would build it.
    depth: int


@dataclass(frozen=True)
class ClassUnits:
    """A top-level class: its lines and its methods (the rest of its body always stays)."""

    start: int
    end: int
    methods: tuple[Unit, ...]


@dataclass(frozen=True)
class FileUnits:
    functions: tuple[Unit, ...]
    classes: tuple[ClassUnits, ...]
    #: Everything else at module level, taken together (never left out when the file is parsed).
    module: Unit

    @property
    def all(self) -> list[Unit]:
        """Every unit: the module's own code, its functions and its methods."""
        return [self.module, *self.functions, *(m for c in self.classes for m in c.methods)]

    @property
    def depth(self) -> int:
        """The deepest nesting anywhere in the file."""
        return max(unit.depth for unit in self.all)


#: Fields that never hold a node the index reads: expression contexts and operators (``ast``
#: singletons such as ``Load()`` and ``Add()``, one under every name) and identifiers.
_SKIPPED_FIELDS = frozenset(
    {"ctx", "op", "ops", "id", "attr", "type_comment", "kind", "level", "module", "conversion"}
    | {"simple", "is_async", "tag", "lineno"}
)
#: The same for one node type: the ``str`` fields whose names other types use for nodes. (A
#: list holds nodes or ``None`` once these are left out; a single field is still checked.)
_SKIPPED_BY_TYPE: dict[type[ast.AST], frozenset[str]] = {
    ast.Constant: frozenset({"value"}),
    ast.keyword: frozenset({"arg"}),
    ast.arg: frozenset({"arg"}),
    ast.alias: frozenset({"name", "asname"}),
    ast.FunctionDef: frozenset({"name"}),
    ast.AsyncFunctionDef: frozenset({"name"}),
    ast.ClassDef: frozenset({"name"}),
    ast.ExceptHandler: frozenset({"name"}),
    ast.Global: frozenset({"names"}),
    ast.Nonlocal: frozenset({"names"}),
    ast.MatchAs: frozenset({"name"}),
    ast.MatchStar: frozenset({"name"}),
    ast.MatchMapping: frozenset({"rest"}),
    ast.MatchClass: frozenset({"kwd_attrs"}),
    ast.MatchSingleton: frozenset({"value"}),
}
_CHILD_FIELDS: dict[type[ast.AST], tuple[str, ...]] = {}


def _child_fields(kind: type[ast.AST]) -> tuple[str, ...]:
    skipped = _SKIPPED_FIELDS | _SKIPPED_BY_TYPE.get(kind, frozenset())
    found = _CHILD_FIELDS[kind] = tuple(f for f in kind._fields if f not in skipped)
    return found


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """The child nodes of ``node`` that carry code, in field order: ``ast.iter_child_nodes``
    without its generators and without contexts and operators (the index's hot path)."""
    kind = type(node)
    fields = _CHILD_FIELDS[kind] if kind in _CHILD_FIELDS else _child_fields(kind)
    found: list[ast.AST] = []
    for name in fields:
        value = getattr(node, name, None)
        if type(value) is list:
            found.extend([item for item in value if item is not None])
        elif isinstance(value, ast.AST):
            found.append(value)
    return found


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk`` (breadth first, ``node`` itself first) without expression contexts and
    operators, the singletons under every name and operation that no fact reads: what the
    index's few whole-subtree walks need, at half the cost."""
    todo = deque([node])
    while todo:
        current = todo.popleft()
        todo.extend(child_nodes(current))
        yield current


def _first_line(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> int:
    return min([node.lineno, *(d.lineno for d in node.decorator_list)])


ImportNode = ast.Import | ast.ImportFrom


def _features(
    nodes: list[ast.AST],
    imports: list[tuple[int, ImportNode]],
    own: list[ast.AST] | None = None,
) -> tuple[frozenset[str], bool, int]:
    """The identifiers mentioned, whether there is a loop, and the deepest nesting (counted as
    libcst nests: ``a and b and c`` is one ``ast`` node but two levels in libcst); the import
    statements met are added to ``imports`` with their depth. With ``own`` (for one function),
    the nodes of its body outside nested functions, lambdas and classes are added to it, so the
    index need not walk the function again. One walk serves all of it (this is the hot loop
    of the index)."""
    names: set[str] = set()
    has_loop = False
    deepest = 0
    body = {s for node in nodes for s in getattr(node, "body", ())} if own is not None else set()
    stack: list[tuple[ast.AST, int, bool]] = [(node, 1, False) for node in nodes]
    while stack:
        node, depth, is_own = stack.pop()
        kind = type(node)
        if is_own:
            own.append(node)  # type: ignore[union-attr]
        if kind is ast.Name:
            names.add(node.id)  # type: ignore[attr-defined]
        elif kind is ast.Attribute:
            names.add(node.attr)  # type: ignore[attr-defined]
        elif kind in _LOOPS:
            has_loop = True
        elif kind is ast.alias:
            names.add((node.asname or node.name).partition(".")[0])  # type: ignore[attr-defined]
        elif kind is ast.BoolOp:
            depth += len(node.values) - 1  # type: ignore[attr-defined]
        elif kind is ast.Import or kind is ast.ImportFrom:
            imports.append((depth, node))  # type: ignore[arg-type]
        deepest = max(deepest, depth)
        children = child_nodes(node)
        if not children:
            continue
        if depth == 1 and body:
            stack.extend([(child, 2, child in body) for child in children])
        else:
            inner = is_own and kind not in _NESTED
            stack.extend([(child, depth + 1, inner) for child in children])
    return frozenset(names), has_loop, deepest


def _unit(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    prefix: str,
    imports: list[tuple[int, ImportNode]],
    owns: dict[ast.AST, list[ast.AST]],
) -> Unit:
    own: list[ast.AST] = []
    names, has_loop, depth = _features([node], imports, own)
    owns[node] = own
    end = node.end_lineno or node.lineno
    return Unit(f"{prefix}{node.name}", _first_line(node), end, names, has_loop, depth)


def collect_units(
    tree: ast.Module,
) -> tuple[FileUnits, list[ImportNode], dict[ast.AST, list[ast.AST]]]:
    """The file's units; every import statement in it, outermost first (as ``ast.walk`` would
    meet them: a nested import of the same name is read last and wins); and for every top-level
    function and method, the nodes of its body outside nested scopes."""
    imports: list[tuple[int, ImportNode]] = []
    owns: dict[ast.AST, list[ast.AST]] = {}
    functions: list[Unit] = []
    classes: list[ClassUnits] = []
    rest: list[ast.AST] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            functions.append(_unit(stmt, "", imports, owns))
        elif isinstance(stmt, ast.ClassDef):
            methods = []
            for inner in stmt.body:
                if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef):
                    methods.append(_unit(inner, f"{stmt.name}.", imports, owns))
                else:
                    rest.append(inner)
            rest.extend([*stmt.bases, *stmt.keywords, *stmt.decorator_list])
            classes.append(
                ClassUnits(_first_line(stmt), stmt.end_lineno or stmt.lineno, tuple(methods))
            )
        else:
            rest.append(stmt)
    names, has_loop, depth = _features(rest, imports)
    end = max((getattr(n, "end_lineno", 0) or 0 for n in tree.body), default=0)
    module = Unit("", 1, end, names, has_loop, depth)
    imports.sort(key=lambda item: (item[0], item[1].lineno, item[1].col_offset))
    units = FileUnits(tuple(functions), tuple(classes), module)
    return units, [node for _, node in imports], owns
