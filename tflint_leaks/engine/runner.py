"""The pipeline: discover -> read -> index (ast, every file) -> check (libcst) -> suppressions.

:func:`lint_paths` is the library entry point the command line, the runtime mode and the tests
call; :func:`lint_source` lints an editor's buffer. Each stage lives in its own module:
:mod:`.discovery`, :mod:`.indexing`, :mod:`.check` (and :mod:`.walker` for the libcst pass),
:mod:`.suppression`, :mod:`.notebook`, :mod:`.cache` and :mod:`.parallel`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tflint_leaks.analysis.index import ModuleIndex, text_digest
from tflint_leaks.analysis.project import ProjectIndex
from tflint_leaks.config import Configuration, Settings
from tflint_leaks.diagnostics import Diagnostic
from tflint_leaks.engine.check import check_file
from tflint_leaks.engine.discovery import discover
from tflint_leaks.engine.indexing import (
    Indexes,
    ParsedFile,
    index_file,
    unreadable,
    with_library_aliases,
)
from tflint_leaks.engine.notebook import in_cells
from tflint_leaks.engine.parallel import Death, Phase, fewer_collections, settle
from tflint_leaks.engine.suppression import unsuppressed
from tflint_leaks.registry import INTERNAL_ERROR
from tflint_leaks.source import SourceError, read_source

if TYPE_CHECKING:
    from tflint_leaks.engine.cache import Cache, Entry

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


@fewer_collections()
def lint_paths(
    paths: Sequence[Path | str],
    settings: Settings | Configuration,
    *,
    prefilter: bool = True,
    jobs: int = 1,
    cache_dir: Path | None = None,
) -> RunResult:
    """Lint files and directories; never raises for a problem with the user's files (a broken
    configuration raises :class:`~tflint_leaks.config.ConfigError` before any file is read).

    ``settings`` applies to every file; a :class:`~tflint_leaks.config.Configuration` gives
    each file the settings of its nearest ``pyproject.toml`` (the command line, the editor).

    ``jobs`` worker processes index and check files in parallel (one process when there are few
    files). With ``cache_dir``, files whose findings are cached (their text and the modules they
    import unchanged) are neither parsed nor checked again, and when nothing changed no file is
    parsed at all. An interrupt (Ctrl-C) stops the workers and returns what was finished,
    marked ``interrupted``.
    """
    result = RunResult()
    configuration = (
        settings if isinstance(settings, Configuration) else Configuration(fixed=settings)
    )
    found = discover([Path(p) for p in paths], configuration)
    result.errors.extend(found.errors)
    result.warnings.extend(found.warnings)
    result.files = len(found.files)
    per_file = {str(path): configuration.for_path(path) for path in found.files}
    jobs = jobs if len(found.files) >= _PARALLEL_MIN_FILES else 1
    phases: list[Phase[Any, Any, Any]] = []
    try:
        if cache_dir is None:
            _lint(found.files, {}, None, per_file, prefilter, jobs, phases, result)
        else:
            from tflint_leaks.engine.cache import Cache  # hashing and JSON, only when caching

            names = [str(path) for path in found.files]
            keys = sorted({settings.cache_key() for settings in per_file.values()})
            cache = Cache(cache_dir, "\0".join(keys), names, result.warnings)
            texts = _read_all(found.files, result)
            digests = {path: digest for path, (_, digest) in texts.items()}
            todo = []
            for path in found.files:
                known = texts.get(str(path))
                entry = cache.result(str(path), known[1], digests) if known else None
                if entry is not None:
                    _take(entry, result)
                elif known is not None:
                    todo.append(path)
            if todo:
                _lint(todo, texts, cache, per_file, prefilter, jobs, phases, result)
            cache.save({path: digests[path] for path in names if path in digests})
    except KeyboardInterrupt:
        result.interrupted = True
    finally:
        for phase in phases:
            phase.close()
    result.diagnostics.sort(key=Diagnostic.sort_key)
    return result


def _lint(
    todo: list[Path],
    texts: dict[str, tuple[str, str]],
    cache: Cache | None,
    per_file: dict[str, Settings],
    prefilter: bool,
    jobs: int,
    phases: list[Phase[Any, Any, Any]],
    result: RunResult,
) -> None:
    """Index every file (``texts``: those read already; from the cache when unchanged), then
    check the files in ``todo`` against the whole project, each with its ``per_file``
    settings."""
    indexed: dict[str, ParsedFile] = {}
    to_index: list[Path] = []
    for path, (text, digest) in texts.items():
        index = cache.index(path, digest) if cache is not None else None
        if index is not None:
            indexed[path] = ParsedFile(path, text, index)
        else:
            to_index.append(Path(path))
    if not texts:
        to_index = todo
    checked = {str(path) for path in todo}
    phases.append(Phase(_index_path, None, jobs, _lost_index, _file_size))
    for file, outcome in zip(to_index, phases[-1].run(to_index), strict=True):
        if isinstance(outcome, Diagnostic):
            if outcome.file in checked:
                result.diagnostics.append(outcome)
                if cache is not None and not _given_up(phases[-1].deaths, file):
                    _store(cache, outcome.file, texts, (outcome,), [], [], None)
        else:
            indexed[outcome.path] = outcome
    _report_deaths(phases[-1].deaths, str, result)
    settle()
    # The cache keeps each file's own index: what another file re-exports is read each run.
    own = {path: parsed.index for path, parsed in indexed.items()}
    own_project = ProjectIndex(own.values())
    indexed, project = with_library_aliases(indexed, own_project)
    work = [indexed[str(path)] for path in todo if str(path) in indexed]
    phases.append(Phase(_check, (project, per_file, prefilter), jobs, _lost_check, _text_size))
    for parsed, (diagnostics, tracebacks) in zip(work, phases[-1].run(work), strict=True):
        warnings: list[str] = []
        kept = _kept(parsed, diagnostics, per_file[parsed.path], warnings)
        result.diagnostics.extend(kept)
        result.warnings.extend(warnings)
        result.tracebacks.extend(tracebacks)
        if cache is not None and not _given_up(phases[-1].deaths, parsed):
            index = own[parsed.path] if parsed.notebook is None else None
            _store(cache, parsed.path, texts, kept, warnings, tracebacks, index)
    _report_deaths(phases[-1].deaths, lambda parsed: parsed.path, result)
    if cache is not None:
        outside = [m for m in own_project.close().modules() if m.path not in texts]
        cache.checked_in(tuple((m.path, m.digest) for m in outside))
        for path, parsed in indexed.items():
            if path not in checked and parsed.notebook is None:
                cache.store_index(path, own[path])


def _file_size(path: Path) -> int:
    """How much indexing ``path`` costs, about (its size; 0 when it cannot be read)."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _text_size(parsed: ParsedFile) -> int:
    return len(parsed.text)


def _lost_index(path: Path, cause: str) -> Diagnostic:
    return INTERNAL_ERROR.at(str(path), _lost_message(cause))


def _lost_check(parsed: ParsedFile, cause: str) -> tuple[list[Diagnostic], list[str]]:
    return [INTERNAL_ERROR.at(parsed.path, _lost_message(cause))], []


def _lost_message(cause: str) -> str:
    return f"two worker processes died linting this file ({cause})"


def _given_up(deaths: list[Death[Any]], item: object) -> bool:
    """Whether the workers that ran ``item`` died: that is not cached, so the next run tries
    again (a worker killed from outside, or out of memory, says nothing about the file)."""
    return any(death.item is item and death.final for death in deaths)


def _report_deaths(deaths: list[Death[Any]], name: Callable[[Any], str], result: RunResult) -> None:
    for death in deaths:
        if not death.final:
            where = name(death.item)
            result.warnings.append(
                f"a worker process died ({death.cause}) linting {where}; linted again"
            )


def _store(
    cache: Cache,
    path: str,
    texts: dict[str, tuple[str, str]],
    diagnostics: Sequence[Diagnostic],
    warnings: list[str],
    tracebacks: list[str],
    index: ModuleIndex | None,
) -> None:
    from tflint_leaks.engine.cache import Entry

    entry = Entry(
        texts[path][1],
        tuple(diagnostics),
        tuple(warnings),
        tuple(tracebacks),
    )
    cache.store(path, entry, index)


def _take(entry: Entry, result: RunResult) -> None:
    result.diagnostics.extend(entry.diagnostics)
    result.warnings.extend(entry.warnings)
    result.tracebacks.extend(entry.tracebacks)


def _read_all(paths: list[Path], result: RunResult) -> dict[str, tuple[str, str]]:
    """The text and digest of every readable file. Done here, not in workers: reading and
    hashing is cheap, shipping indexed files back is not."""
    texts: dict[str, tuple[str, str]] = {}
    for path in paths:
        try:
            text = read_source(path)
        except SourceError as error:
            result.diagnostics.append(unreadable(str(path), error))
            continue
        texts[str(path)] = (text, text_digest(text))
    return texts


def _index_path(path: Path, _: None) -> ParsedFile | Diagnostic:
    """Read and index one file."""
    try:
        text = read_source(path)
    except SourceError as error:
        return unreadable(str(path), error)
    return index_file(path, text)


def _check(
    parsed: ParsedFile, shared: tuple[ProjectIndex, dict[str, Settings], bool]
) -> tuple[list[Diagnostic], list[str]]:
    project, per_file, prefilter = shared
    settings = per_file[parsed.path]
    return check_file(
        parsed, project, settings.options, settings.enabled_codes(), prefilter=prefilter
    )


def _kept(
    parsed: ParsedFile, diagnostics: list[Diagnostic], settings: Settings, warnings: list[str]
) -> list[Diagnostic]:
    """What ``parsed``'s suppressions keep of its findings (cell-relative in a notebook)."""
    kept = unsuppressed(parsed.path, diagnostics, parsed.text, settings, warnings)
    if parsed.notebook is not None:
        kept = in_cells(parsed.notebook, kept, warnings)
    return kept


def lint_source(
    text: str,
    path: Path,
    settings: Settings,
    project: ProjectIndex | None = None,
    indexes: Indexes | None = None,
) -> RunResult:
    """Lint ``text`` as the content of ``path`` (an editor's buffer) without reading or writing
    ``path``. ``project`` indexes the other files, for cross-file lookups; an entry it has for
    ``path`` itself is replaced by the buffer's. ``indexes`` keeps the buffer's index for the
    next lint."""
    result = RunResult(files=1)
    parsed = index_file(path, text) if indexes is None else indexes.parsed(path, text)
    if isinstance(parsed, Diagnostic):
        result.diagnostics.append(parsed)
        return result
    others = project.modules() if project is not None else []
    project = ProjectIndex([*(m for m in others if m.path != parsed.path), parsed.index])
    aliased, project = with_library_aliases({parsed.path: parsed}, project)
    parsed = aliased[parsed.path]
    diagnostics, tracebacks = check_file(
        parsed, project, settings.options, settings.enabled_codes()
    )
    result.diagnostics.extend(_kept(parsed, diagnostics, settings, result.warnings))
    result.tracebacks.extend(tracebacks)
    result.diagnostics.sort(key=Diagnostic.sort_key)
    return result
