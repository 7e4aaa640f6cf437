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


def _first_line(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> int:
    return min([node.lineno, *(d.lineno for d in node.decorator_list)])


def _features(nodes: list[ast.AST]) -> tuple[frozenset[str], bool]:
    names: set[str] = set()
    has_loop = False
    for top in nodes:
        for node in ast.walk(top):
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, _LOOPS):
                has_loop = True
            elif isinstance(node, ast.alias):
                names.add((node.asname or node.name).partition(".")[0])
    return frozenset(names), has_loop


def _unit(node: ast.FunctionDef | ast.AsyncFunctionDef, prefix: str) -> Unit:
    names, has_loop = _features([node])
    return Unit(
        f"{prefix}{node.name}", _first_line(node), node.end_lineno or node.lineno, names, has_loop
    )


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
    names, has_loop = _features(rest)
    end = max((getattr(n, "end_lineno", 0) or 0 for n in tree.body), default=0)
    return FileUnits(tuple(functions), tuple(classes), Unit("", 1, end, names, has_loop))
