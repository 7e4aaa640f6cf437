"""Where the reported nodes are, without positioning the whole module.

libcst's ``PositionProvider`` generates the code of the whole module to position every node:
on tf-keras's sources that was a fifth of the libcst pass, for a handful of findings. The nodes a
file's findings point at sit, nearly always, in a few top-level functions and methods, and the
``ast`` index knows the lines of each (its units). So each function (or method, inside a copy of
its class that holds only it, so that its indentation is the file's) is positioned alone, and its
lines are moved to where the unit says the function starts. A node anywhere else (module-level
code, a class's own statements), or a function whose first and last lines do not both agree with
its unit, is positioned the way libcst does it, over the whole module.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider

from tflint_leaks.analysis.nodes import descendants
from tflint_leaks.analysis.units import FileUnits
from tflint_leaks.source import split_lines

Positions = Mapping[cst.CSTNode, CodeRange]


def node_positions(
    module: cst.Module, nodes: Collection[cst.CSTNode], units: FileUnits
) -> Positions:
    """The positions of ``nodes`` (nodes of ``module``, whose lines ``units`` describes; a
    mapping that may hold other nodes too)."""
    wanted = set(nodes)
    spans = _unique_spans(units)
    found: dict[cst.CSTNode, CodeRange] = {}
    for part, qualname, holder in _parts(module):
        if not wanted:
            break
        inside = [node for node in descendants(part) if node in wanted]
        if not inside:
            continue
        span = spans.get(qualname) if qualname is not None else None
        if span is None or not isinstance(part, cst.FunctionDef):
            break
        moved = _moved(_alone(module, part, holder), part, span)
        if moved is None:
            break
        for node in inside:
            found[node] = moved(node)
            wanted.discard(node)
    if wanted:
        return MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return found


def _unique_spans(units: FileUnits) -> dict[str, tuple[int, int]]:
    """The first and last line of each top-level function and method whose name is defined once."""
    counts: dict[str, int] = {}
    spans: dict[str, tuple[int, int]] = {}
    for unit in (*units.functions, *(m for klass in units.classes for m in klass.methods)):
        counts[unit.qualname] = counts.get(unit.qualname, 0) + 1
        spans[unit.qualname] = (unit.start, unit.end)
    return {name: span for name, span in spans.items() if counts[name] == 1}


def _parts(module: cst.Module) -> Iterator[tuple[cst.CSTNode, str | None, cst.ClassDef | None]]:
    """The module in pieces: each top-level function and each method of a top-level class, with
    its qualified name (and its class); everything else with no name (a class's header and
    decorators are not among the pieces)."""
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef):
            yield statement, statement.name.value, None
        elif isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
            for inner in statement.body.body:
                if isinstance(inner, cst.FunctionDef):
                    yield inner, f"{statement.name.value}.{inner.name.value}", statement
                else:
                    yield inner, None, None
        else:
            yield statement, None, None


def _alone(
    module: cst.Module, function: cst.FunctionDef, holder: cst.ClassDef | None
) -> cst.Module:
    """A module that holds only ``function`` (in a copy of its class ``holder`` that holds only
    it), with the file's indentation and newlines."""
    statement: cst.BaseStatement = function
    if holder is not None:
        assert isinstance(holder.body, cst.IndentedBlock)
        statement = holder.with_changes(body=holder.body.with_changes(body=[function]))
    return module.with_changes(header=(), body=[statement], footer=())


def _moved(alone: cst.Module, function: cst.FunctionDef, span: tuple[int, int]) -> _Moved | None:
    """Positions in ``alone`` moved to the file's lines, when both ends of ``function`` agree
    with its unit's ``span`` (a decorator continued over a backslash would not: then None)."""
    positions = MetadataWrapper(alone, unsafe_skip_copy=True).resolve(PositionProvider)
    first = function.decorators[0] if function.decorators else function
    offset = span[1] - positions[function].end.line
    if positions[first].start.line + offset != span[0]:
        return None
    return _Moved(positions, offset)


class _Moved:
    def __init__(self, positions: Positions, offset: int) -> None:
        self._positions = positions
        self._offset = offset

    def __call__(self, node: cst.CSTNode) -> CodeRange:
        found = self._positions[node]
        return CodeRange(self._line(found.start), self._line(found.end))

    def _line(self, position: CodePosition) -> CodePosition:
        return CodePosition(position.line + self._offset, position.column)


def expanded_indentation(text: str) -> tuple[str, dict[int, tuple[int, int]]] | None:
    """``text`` with the tabs of each line's indentation expanded to spaces, to the next
    multiple of 8 columns as Python reads them, and for each line so changed, the length of its
    indentation before and after; None when no line's indentation has a tab. libcst's
    tokenizer rejects an indentation of a tab then spaces that Python accepts ("no matching
    outer block for dedent": LibCST#829): this is the same program, with the same lines."""
    lines = split_lines(text, keepends=True)
    changed: dict[int, tuple[int, int]] = {}
    for number, line in enumerate(lines, start=1):
        indentation = line[: len(line) - len(line.lstrip(" \t\f"))]
        if "\t" in indentation:
            expanded = indentation.expandtabs(8)
            lines[number - 1] = expanded + line[len(indentation) :]
            changed[number] = (len(indentation), len(expanded))
    return ("".join(lines), changed) if changed else None


def unexpanded(positions: Positions, changed: Mapping[int, tuple[int, int]]) -> Positions:
    """``positions`` in a text whose indentation :func:`expanded_indentation` expanded, moved
    back to the original text's columns."""

    def back(position: CodePosition) -> CodePosition:
        found = changed.get(position.line)
        if found is None:
            return position
        before, after = found
        column = position.column - (after - before) if position.column >= after else before
        return CodePosition(position.line, min(column, position.column))

    return {node: CodeRange(back(r.start), back(r.end)) for node, r in positions.items()}
