"""The pipeline: discover -> read -> index (ast, every file) -> rules (libcst) -> suppressions.

:func:`lint_paths` is the library entry point the command line, the runtime mode and the tests
call. :func:`check_file` lints one file against a project index and is what a worker process
runs.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from tflint_leaks.analysis.index import ModuleIndex, Span, index_source, text_digest
from tflint_leaks.analysis.project import ProjectIndex
from tflint_leaks.config import Settings, expand_selectors
from tflint_leaks.diagnostics import Diagnostic, Edit, Fix, Location, Related, Severity
from tflint_leaks.engine.cache import Cache
from tflint_leaks.engine.context import FileContext, InsertStatement, Replacement, Report, Target
from tflint_leaks.engine.deep import MAX_NESTING, call_with_deep_stack
from tflint_leaks.engine.discovery import discover, matches
from tflint_leaks.engine.notebook import Notebook, NotebookError, is_notebook, read_notebook
from tflint_leaks.engine.parallel import Phase
from tflint_leaks.engine.relevance import blanked_source, combine
from tflint_leaks.engine.source import SourceError, read_source
from tflint_leaks.engine.suppression import parse_suppressions
from tflint_leaks.engine.walker import Walker
from tflint_leaks.rules import ALL_RULES, RULES_BY_CODE, Rule

SYNTAX_ERROR = ("TFL001", "syntax-error")
INTERNAL_ERROR = ("TFL002", "internal-error")
#: Codes the engine reports itself; they cannot be deselected.
ENGINE_CODES = frozenset({SYNTAX_ERROR[0], INTERNAL_ERROR[0]})
#: Below this many files, worker processes cost more than they save.
_PARALLEL_MIN_FILES = 16


@dataclass
class RunResult:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files: int = 0
    #: Problems with the run itself (a path that does not exist): exit 2.
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: Full tracebacks of internal errors, for ``--show-traceback``.
    tracebacks: list[str] = field(default_factory=list)
    #: The run was interrupted (Ctrl-C); the findings are those of the files finished.
    interrupted: bool = False


def engine_diagnostic(
    code: tuple[str, str], path: str, message: str, line: int = 1, column: int = 1
) -> Diagnostic:
    start = Location(max(line, 1), max(column, 1))
    return Diagnostic(code[0], code[1], message, Severity.ERROR, path, start, start)


@dataclass
class ParsedFile:
    path: str
    text: str
    index: ModuleIndex
    #: For a notebook: where each code cell sits in ``text`` (the joined cells).
    notebook: Notebook | None = None


def _unreadable(path: str, error: SourceError) -> Diagnostic:
    return engine_diagnostic(SYNTAX_ERROR, path, error.message, error.line, error.column)


def index_file(path: Path, text: str | None = None) -> ParsedFile | Diagnostic:
    """Read and index one file, or say why it cannot be linted. ``text`` is the file's content
    when it is not read from disk (an editor's unsaved buffer)."""
    shown = str(path)
    cells = None
    try:
        if text is None:
            text = read_source(path)
        if is_notebook(path):
            cells = read_notebook(path, text)
            text = cells.text
        tree = ast.parse(text, filename=shown)
    except NotebookError as error:
        return engine_diagnostic(SYNTAX_ERROR, shown, str(error))
    except SourceError as error:
        return _unreadable(shown, error)
    except SyntaxError as error:
        return engine_diagnostic(
            SYNTAX_ERROR,
            shown,
            f"invalid syntax: {error.msg}",
            error.lineno or 1,
            error.offset or 1,
        )
    except (RecursionError, MemoryError):
        return engine_diagnostic(SYNTAX_ERROR, shown, "too deeply nested to parse")
    return ParsedFile(shown, text, index_source(text, path, tree), cells)


def is_relevant(parsed: ParsedFile, project: ProjectIndex) -> bool:
    """Whether any rule can fire: the file uses TensorFlow or imports project code that does."""
    if parsed.index.uses_tensorflow:
        return True
    return any(dep.uses_tensorflow for dep in project.dependencies(parsed.index))


def check_file(
    parsed: ParsedFile,
    project: ProjectIndex,
    settings: Settings,
    codes: frozenset[str],
    *,
    prefilter: bool = True,
) -> tuple[list[Diagnostic], list[str]]:
    """Lint one indexed file: its diagnostics and the tracebacks of rules that failed on it.

    With ``prefilter`` (the default), functions and methods that no enabled rule can fire in
    are left out of the libcst parse (:mod:`tflint_leaks.engine.relevance`); without it every
    line is parsed and walked, which tests use to prove the prefilter loses nothing."""
    if not is_relevant(parsed, project):
        return [], []
    rules = [rule for rule in ALL_RULES if rule.code in codes]
    text = parsed.text
    if prefilter:
        needs = combine((rule.TRIGGERS for rule in rules), parsed.index, project)
        blanked = blanked_source(parsed.text, parsed.index, needs)
        if blanked is None:
            return [], []
        text = blanked
    depth = parsed.index.units.depth
    if depth > MAX_NESTING:
        message = f"too deeply nested to parse ({depth} levels; the limit is {MAX_NESTING})"
        return [engine_diagnostic(SYNTAX_ERROR, parsed.path, message)], []
    return call_with_deep_stack(lambda: _parse_and_walk(parsed, text, project, settings, rules))


def _parse_and_walk(
    parsed: ParsedFile,
    text: str,
    project: ProjectIndex,
    settings: Settings,
    rules: list[type[Rule]],
) -> tuple[list[Diagnostic], list[str]]:
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        return [
            engine_diagnostic(
                SYNTAX_ERROR,
                parsed.path,
                f"invalid syntax: {error.message}",
                error.raw_line,
                error.raw_column + 1,
            )
        ], []
    except RecursionError:
        return [engine_diagnostic(SYNTAX_ERROR, parsed.path, "too deeply nested to parse")], []
    context = FileContext(parsed.path, parsed.index, project, settings.options)
    walker = Walker(context, rules)
    tracebacks: list[str] = []
    diagnostics: list[Diagnostic] = []
    try:
        walker.walk_module(module)
    except RecursionError:
        diagnostics.append(
            engine_diagnostic(INTERNAL_ERROR, parsed.path, "too deeply nested to analyse")
        )
    for failure in walker.failures:
        diagnostics.append(
            engine_diagnostic(
                INTERNAL_ERROR,
                parsed.path,
                f"rule {failure.rule.code} ({failure.rule.name}) failed on this file: "
                f"{failure.error}",
            )
        )
        tracebacks.append(f"{parsed.path}: {failure.rule.code}\n{failure.traceback}")
    if context.reports:
        positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        diagnostics.extend(
            _diagnostic(parsed.path, module, r, positions, parsed.text) for r in context.reports
        )
    return diagnostics, tracebacks


Positions = Mapping[cst.CSTNode, CodeRange]
_LINE_BREAK = re.compile(r"\r\n?|\n")


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
    line = _LINE_BREAK.split(text, code_range.start.line)[code_range.start.line - 1]
    indent = line[: code_range.start.column]
    at = Location(code_range.end.line + 1 if replacement.after else code_range.start.line, 1)
    return Edit(at, at, f"{indent}{replacement.code}{module.default_newline}")


def _diagnostic(
    path: str, module: cst.Module, report: Report, positions: Positions, text: str
) -> Diagnostic:
    start, end = _range(report.target, positions)
    related = tuple(
        Related(r.role, r.message, r.path or path, *_range(r.target, positions))
        for r in report.related
    )
    fix = None
    if report.fix is not None:
        edits = tuple(
            _edit(node, replacement, module, positions, text)
            for node, replacement in report.fix.replacements
        )
        fix = Fix(report.fix.message, report.fix.applicability, edits)
    rule = report.rule
    return Diagnostic(
        rule.code, rule.name, report.message, rule.severity, path, start, end, fix, related
    )


def _suppressed(
    path: str, diagnostics: list[Diagnostic], text: str, settings: Settings, result: RunResult
) -> list[Diagnostic]:
    """Drop what ``noqa`` comments and ``per-file-ignores`` suppress (never engine errors)."""
    suppressions = parse_suppressions(text, frozenset(RULES_BY_CODE) | ENGINE_CODES)
    for line, code in suppressions.unknown:
        result.warnings.append(f"{path}:{line}: unknown rule code `{code}` in a noqa comment")
    ignored = per_file_ignored(path, settings)
    return [
        d
        for d in diagnostics
        if d.code in ENGINE_CODES
        or not (d.code in ignored or suppressions.suppresses(d.code, d.start.line))
    ]


def per_file_ignored(path: str, settings: Settings) -> frozenset[str]:
    """Codes that ``per-file-ignores`` turns off for ``path``."""
    codes: set[str] = set()
    for pattern, selectors in settings.per_file_ignores:
        if matches(Path(path), pattern, settings.root):
            codes.update(expand_selectors(selectors, include_opt_in=True))
    return frozenset(codes)


def _in_cells(notebook: Notebook, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """A notebook's findings with cell-relative lines, and a ``TFL001`` per skipped cell."""
    skipped = [
        replace(
            engine_diagnostic(
                SYNTAX_ERROR,
                notebook.path,
                f"invalid syntax: {error.msg}; the cell is skipped",
                error.lineno or 1,
                error.offset or 1,
            ),
            cell=cell,
        )
        for cell, error in notebook.bad_cells
    ]
    return skipped + [notebook.to_cells(d) for d in diagnostics]


def lint_paths(
    paths: Sequence[Path | str],
    settings: Settings,
    *,
    prefilter: bool = True,
    jobs: int = 1,
    cache_dir: Path | None = None,
) -> RunResult:
    """Lint files and directories; never raises for a problem with the user's files.

    ``jobs`` worker processes index and check files in parallel (one process when there are few
    files). With ``cache_dir``, unchanged files are neither parsed nor checked again. An
    interrupt (Ctrl-C) stops the workers and returns what was finished, marked ``interrupted``.
    """
    result = RunResult()
    found = discover([Path(p) for p in paths], settings)
    result.errors.extend(found.errors)
    result.warnings.extend(found.warnings)
    result.files = len(found.files)
    cache = Cache(cache_dir, settings, result.warnings) if cache_dir is not None else None
    jobs = jobs if len(found.files) >= _PARALLEL_MIN_FILES else 1
    phases: list[Phase[Any, Any, Any]] = []
    try:
        indexed: list[tuple[str, ParsedFile]] = []
        unchanged, changed = _cached_index(found.files, cache, result)
        indexed.extend(unchanged)
        phases.append(Phase(_index_path, None, jobs))
        for outcome in phases[-1].run(changed):
            if isinstance(outcome, Diagnostic):
                result.diagnostics.append(outcome)
            else:
                indexed.append(outcome)
        project = ProjectIndex(parsed.index for _, parsed in indexed)
        todo: list[tuple[str, ParsedFile, str]] = []
        for digest, parsed in indexed:
            key = cache.result_key(parsed, project) if cache is not None else ""
            cached = cache.results(parsed.path, key) if cache is not None else None
            if cached is not None:
                _keep(parsed, *cached, settings, result)
            else:
                todo.append((digest, parsed, key))
        shared = (project, settings, settings.enabled_codes(), prefilter)
        phases.append(Phase(_check, shared, jobs))
        checks = phases[-1].run([parsed for _, parsed, _ in todo])
        for (digest, parsed, key), (diagnostics, tracebacks) in zip(todo, checks, strict=True):
            _keep(parsed, diagnostics, tracebacks, settings, result)
            if cache is not None:
                cache.store(digest, parsed, key, diagnostics, tracebacks)
        if cache is not None:
            cache.forget_missing({str(path) for path in found.files})
            cache.save()
    except KeyboardInterrupt:
        result.interrupted = True
    finally:
        for phase in phases:
            phase.close()
    result.diagnostics.sort(key=Diagnostic.sort_key)
    return result


def _cached_index(
    paths: list[Path], cache: Cache | None, result: RunResult
) -> tuple[list[tuple[str, ParsedFile]], list[Path]]:
    """The files whose text the cache has indexed already, and the paths left to index. Done
    here, not in workers: reading and hashing is cheap, shipping indexed files back is not."""
    if cache is None:
        return [], paths
    unchanged: list[tuple[str, ParsedFile]] = []
    changed: list[Path] = []
    for path in paths:
        try:
            text = read_source(path)
        except SourceError as error:
            result.diagnostics.append(_unreadable(str(path), error))
            continue
        digest = text_digest(text)
        cached = cache.parsed(str(path), digest)
        if cached is None:
            changed.append(path)
        else:
            unchanged.append((digest, cached))
    return unchanged, changed


def _index_path(path: Path, _: None) -> tuple[str, ParsedFile] | Diagnostic:
    """Read and index one file, with the digest of its text."""
    try:
        text = read_source(path)
    except SourceError as error:
        return _unreadable(str(path), error)
    parsed = index_file(path, text)
    return parsed if isinstance(parsed, Diagnostic) else (text_digest(text), parsed)


def _check(
    parsed: ParsedFile, shared: tuple[ProjectIndex, Settings, frozenset[str], bool]
) -> tuple[list[Diagnostic], list[str]]:
    project, settings, codes, prefilter = shared
    return check_file(parsed, project, settings, codes, prefilter=prefilter)


def _keep(
    parsed: ParsedFile,
    diagnostics: list[Diagnostic],
    tracebacks: list[str],
    settings: Settings,
    result: RunResult,
) -> None:
    """Add what ``parsed``'s suppressions keep of its findings to ``result``."""
    result.tracebacks.extend(tracebacks)
    kept = _suppressed(parsed.path, diagnostics, parsed.text, settings, result)
    if parsed.notebook is not None:
        kept = _in_cells(parsed.notebook, kept)
    result.diagnostics.extend(kept)


def lint_source(
    text: str, path: Path, settings: Settings, project: ProjectIndex | None = None
) -> RunResult:
    """Lint ``text`` as the content of ``path`` (an editor's buffer) without reading or writing
    ``path``. ``project`` indexes the other files, for cross-file lookups; an entry it has for
    ``path`` itself is replaced by the buffer's."""
    result = RunResult(files=1)
    parsed = index_file(path, text)
    if isinstance(parsed, Diagnostic):
        result.diagnostics.append(parsed)
        return result
    others = project.modules() if project is not None else []
    project = ProjectIndex([*(m for m in others if m.path != parsed.path), parsed.index])
    diagnostics, tracebacks = check_file(parsed, project, settings, settings.enabled_codes())
    _keep(parsed, diagnostics, tracebacks, settings, result)
    result.diagnostics.sort(key=Diagnostic.sort_key)
    return result
