"""Turn the rules' reports (libcst nodes or index spans) into positioned diagnostics."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import libcst as cst

from tflint_leaks.analysis.facts import Span
from tflint_leaks.diagnostics import Diagnostic, Edit, Fix, Location, Related
from tflint_leaks.engine.positions import Positions
from tflint_leaks.registry import BY_CODE
from tflint_leaks.rulekit.context import InsertStatement, Replacement, Report, Target
from tflint_leaks.source import split_lines


def placed_nodes(report: Report) -> Iterator[cst.CSTNode]:
    """The nodes whose positions :func:`diagnostic` reads for ``report``."""
    fixed = [node for node, _ in report.fix.replacements] if report.fix is not None else []
    for target in (report.target, *(r.target for r in report.related), *fixed):
        if isinstance(target, cst.CSTNode):
            yield target
            end = _loop_header_end(target)
            if end is not None:
                yield end


def _range(target: Target, positions: Positions) -> tuple[Location, Location]:
    if isinstance(target, Span):
        return Location(target.line, target.column), Location(target.end_line, target.end_column)
    header_end = _loop_header_end(target)
    code_range = positions[target]
    end = code_range.end
    if header_end is not None:
        end = positions[header_end].end
    return (
        Location(code_range.start.line, code_range.start.column + 1),
        Location(end.line, end.column + 1),
    )


def _loop_header_end(node: cst.CSTNode) -> cst.CSTNode | None:
    """A loop is shown by its header: ``for x in xs`` up to the iterable, ``while test``."""
    if isinstance(node, cst.For | cst.CompFor):
        return node.iter
    if isinstance(node, cst.While):
        return node.test
    return None


def _edit(
    node: cst.CSTNode, replacement: Replacement, module: cst.Module, positions: Positions, text: str
) -> Edit:
    if not isinstance(replacement, InsertStatement):
        start, end = _range(node, positions)
        content = replacement if isinstance(replacement, str) else module.code_for_node(replacement)
        return Edit(start, end, content)
    code_range = positions[node]
    line = split_lines(text)[code_range.start.line - 1]
    indent = line[: code_range.start.column]
    at = Location(code_range.end.line + 1 if replacement.after else code_range.start.line, 1)
    return Edit(at, at, f"{indent}{replacement.code}{module.default_newline}")


def _shown(other: str | None, path: str) -> str:
    """Another file named the way the finding's own file is: relative to the working directory
    when the finding's path is relative (and the other file is below it), else as given."""
    if other is None:
        return path
    if Path(path).is_absolute() or not Path(other).is_absolute():
        return other
    try:
        return str(Path(other).relative_to(Path.cwd()))
    except ValueError:
        return other


def diagnostic(
    path: str, module: cst.Module, report: Report, positions: Positions, text: str
) -> Diagnostic:
    """The diagnostic for one report; name, severity and fix safety come from the registry."""
    code = BY_CODE[report.code]
    start, end = _range(report.target, positions)
    related = tuple(
        Related(r.role, r.message, _shown(r.path, path), *_range(r.target, positions))
        for r in report.related
    )
    fix = None
    if report.fix is not None:
        assert code.fix is not None, f"{code.code} reports a fix but its registry line has none"
        edits = tuple(
            _edit(node, replacement, module, positions, text)
            for node, replacement in report.fix.replacements
        )
        fix = Fix(report.fix.message, code.fix, edits)
    return Diagnostic(
        code.code, code.name, report.message, code.severity, path, start, end, fix, related
    )
