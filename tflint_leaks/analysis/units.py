"""The units a file can be checked in: top-level functions, methods, and the rest.

For each unit the cheap ``ast`` pass records the identifiers it mentions and whether it has a
Python loop. Rules declare which identifiers they need (:meth:`Rule.triggers`), so the engine
can leave a unit that mentions none of them out of the libcst parse altogether: most of a large
TensorFlow code base cannot produce a finding, and parsing is the dominant cost.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.comprehension)


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
    def depth(self) -> int:
        """The deepest nesting anywhere in the file."""
        units = [self.module, *self.functions, *(m for c in self.classes for m in c.methods)]
        return max(unit.depth for unit in units)


def _first_line(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> int:
    return min([node.lineno, *(d.lineno for d in node.decorator_list)])


def _features(nodes: list[ast.AST]) -> tuple[frozenset[str], bool, int]:
    """The identifiers mentioned, whether there is a loop, and the deepest nesting (counted as
    libcst nests: ``a and b and c`` is one ``ast`` node but two levels in libcst)."""
    names: set[str] = set()
    has_loop = False
    deepest = 0
    stack: list[tuple[ast.AST, int]] = [(node, 1) for node in nodes]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, _LOOPS):
            has_loop = True
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).partition(".")[0])
        elif isinstance(node, ast.BoolOp):
            depth += len(node.values) - 1
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return frozenset(names), has_loop, deepest


def _unit(node: ast.FunctionDef | ast.AsyncFunctionDef, prefix: str) -> Unit:
    names, has_loop, depth = _features([node])
    end = node.end_lineno or node.lineno
    return Unit(f"{prefix}{node.name}", _first_line(node), end, names, has_loop, depth)


def collect_units(tree: ast.Module) -> FileUnits:
    functions: list[Unit] = []
    classes: list[ClassUnits] = []
    rest: list[ast.AST] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            functions.append(_unit(stmt, ""))
        elif isinstance(stmt, ast.ClassDef):
            methods = []
            for inner in stmt.body:
                if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef):
                    methods.append(_unit(inner, f"{stmt.name}."))
                else:
                    rest.append(inner)
            rest.extend([*stmt.bases, *stmt.keywords, *stmt.decorator_list])
            classes.append(
                ClassUnits(_first_line(stmt), stmt.end_lineno or stmt.lineno, tuple(methods))
            )
        else:
            rest.append(stmt)
    names, has_loop, depth = _features(rest)
    end = max((getattr(n, "end_lineno", 0) or 0 for n in tree.body), default=0)
    return FileUnits(tuple(functions), tuple(classes), Unit("", 1, end, names, has_loop, depth))
