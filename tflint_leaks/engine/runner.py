"""The pipeline: discover -> read -> index (ast, every file) -> check (libcst) -> suppressions.

:func:`lint_paths` is the library entry point the command line, the runtime mode and the tests
call; :func:`lint_source` lints an editor's buffer. Each stage lives in its own module:
:mod:`.discovery`, :mod:`.indexing`, :mod:`.check` (and :mod:`.walker` for the libcst pass),
:mod:`.suppression`, :mod:`.notebook`, :mod:`.cache` and :mod:`.parallel`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tflint_leaks.analysis.index import text_digest
from tflint_leaks.analysis.project import ProjectIndex
from tflint_leaks.config import Settings
from tflint_leaks.diagnostics import Diagnostic
from tflint_leaks.engine.cache import Cache
from tflint_leaks.engine.check import check_file
from tflint_leaks.engine.discovery import discover
from tflint_leaks.engine.indexing import ParsedFile, index_file, unreadable
from tflint_leaks.engine.notebook import in_cells
from tflint_leaks.engine.parallel import Phase
from tflint_leaks.engine.suppression import unsuppressed
from tflint_leaks.source import SourceError, read_source

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
            result.diagnostics.append(unreadable(str(path), error))
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
        return unreadable(str(path), error)
    parsed = index_file(path, text)
    return parsed if isinstance(parsed, Diagnostic) else (text_digest(text), parsed)


def _check(
    parsed: ParsedFile, shared: tuple[ProjectIndex, Settings, frozenset[str], bool]
) -> tuple[list[Diagnostic], list[str]]:
    project, settings, codes, prefilter = shared
    return check_file(parsed, project, settings.options, codes, prefilter=prefilter)


def _keep(
    parsed: ParsedFile,
    diagnostics: list[Diagnostic],
    tracebacks: list[str],
    settings: Settings,
    result: RunResult,
) -> None:
    """Add what ``parsed``'s suppressions keep of its findings to ``result``."""
    result.tracebacks.extend(tracebacks)
    kept = unsuppressed(parsed.path, diagnostics, parsed.text, settings, result.warnings)
    if parsed.notebook is not None:
        kept = in_cells(parsed.notebook, kept)
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
    diagnostics, tracebacks = check_file(
        parsed, project, settings.options, settings.enabled_codes()
    )
    _keep(parsed, diagnostics, tracebacks, settings, result)
    result.diagnostics.sort(key=Diagnostic.sort_key)
    return result
