"""``tflint-leaks confirm``: run a target under instrumentation and give each finding a verdict.

This is the parent side: it never imports TensorFlow. See ``tflint_leaks.runtime`` for the API
and ``docs/runtime.md`` for what is measured and how verdicts are decided.
"""

from __future__ import annotations

import dataclasses
import re
import signal
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TextIO

from tflint_leaks.diagnostics import CallSite, Diagnostic, Verdict
from tflint_leaks.engine.notebook import read_notebook
from tflint_leaks.registry import RUNTIME_RETRACING, Judgement
from tflint_leaks.runtime import protocol, series, verdicts
from tflint_leaks.runtime.launcher import ProcessOutcome, launch
from tflint_leaks.runtime.observations import CodeStats, Observations, read_observations
from tflint_leaks.runtime.places import Place, Site, Sources, display_path, place_name
from tflint_leaks.runtime.progress import Progress
from tflint_leaks.runtime.series import Series
from tflint_leaks.source import split_lines

TargetKind = Literal["script", "notebook", "module", "pytest"]


@dataclass(frozen=True)
class Target:
    """What to run: a script or a notebook with its arguments, a module (``-m``) or a pytest
    selection."""

    kind: TargetKind
    path: str | None = None  # the script or the notebook
    module: str | None = None  # the dotted module name, for kind="module"
    args: tuple[str, ...] = ()  # the script's or module's arguments, or pytest's arguments

    @property
    def name(self) -> str:
        """The target as the user named it."""
        if self.kind == "module":
            return f"-m {self.module}"
        if self.kind == "pytest":
            return f"pytest {' '.join(self.args)}"
        return self.path or ""

    def default_paths(self) -> list[str]:
        """What the static pass covers when no PATHS are given: the target's own file or package."""
        if self.kind in ("script", "notebook") and self.path:
            return [self.path]
        if self.kind == "module" and self.module:
            found = find_module_path(self.module)
            return [found] if found else []
        selected = [arg.split("::", 1)[0] for arg in self.args]
        return [path for path in selected if Path(path).exists()]


@dataclass(frozen=True)
class RunSummary:
    """How the child run went, for the report header and for tests."""

    status: str  # completed, raised, exited, os-exit, timeout, memory-limit, crashed, fatal
    description: str
    #: Why the target failed, in one line (None when it ran, timed out or hit the memory limit).
    failure: str | None
    exit_code: int | None
    duration_s: float
    pid: int
    tensorflow: str | None
    traceback: str | None
    notes: tuple[str, ...]
    stdout_tail: str
    stderr_tail: str


@dataclass(frozen=True)
class ConfirmResult:
    """Every static finding with its confirmation, plus runtime-only findings (``TFL900``),
    and for each what the report charts."""

    diagnostics: list[Diagnostic]
    run: RunSummary
    charts: list[tuple[Series, ...]]


def find_module_path(module: str) -> str | None:
    """The file or package directory of ``module``, found on disk without importing anything."""
    relative = Path(*module.split("."))
    for entry in ["", *sys.path]:
        base = (Path(entry) if entry else Path.cwd()) / relative
        if base.is_dir() and (base / "__init__.py").exists():
            return str(base)
        if base.with_suffix(".py").is_file():
            return str(base.with_suffix(".py"))
    return None


_CRASH_SIGNALS = frozenset({signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS, signal.SIGKILL})


#: pytest's exit codes that mean it could not run the selection (``pytest.ExitCode``); 1 means
#: that tests ran and some failed, which is a run like any other.
_PYTEST_FAILURES = {
    2: "was interrupted",
    3: "hit an internal error",
    4: "could not use the selection (usage error)",
    5: "collected no tests",
}


def run_ending(
    target: Target,
    outcome: ProcessOutcome,
    observations: Observations,
    timeout: float,
    memory_limit: int | None,
    show: Callable[[str, int], CallSite],
) -> tuple[str, verdicts.RunEnding, str | None]:
    """The run's status, how the verdicts should read its end, and why the target failed (a
    one-line message) when it did: it raised, crashed, exited with an error status, or could
    not start. A timeout or the memory limit stops a run without failing it: the user asked."""
    end = observations.end or {}
    status = str(end.get("status", ""))
    code = end.get("exit_code")
    where = end.get("where")
    at = f" at {place_name(show(str(where[0]), int(where[1])))}" if isinstance(where, list) else ""
    if status == protocol.STATUS_COMPLETED:
        return status, verdicts.RunEnding(True, "ran to its end"), None
    if status in (protocol.STATUS_EXITED, protocol.STATUS_OS_EXIT):
        call = "sys.exit" if status == protocol.STATUS_EXITED else "os._exit"
        description = f"stopped with {call}({code}){at}"
        if target.kind == "pytest" and status == protocol.STATUS_EXITED:
            failure = _PYTEST_FAILURES.get(code) if isinstance(code, int) else None
            output = (outcome.stderr_tail + "\n" + outcome.stdout_tail).splitlines()
            errors = [line for line in output if line.startswith("ERROR:")]
            detail = errors[-1] if errors else f"pytest {' '.join(target.args)}"
            message = f"pytest {failure} (exit {code}): {detail}" if failure else None
            return status, verdicts.RunEnding(code in (0, 1), description), message
        failed = None if code == 0 else f"the target {description}"
        return status, verdicts.RunEnding(code == 0, description), failed
    if status == protocol.STATUS_RAISED:
        exception = str(end.get("exception", ""))
        if memory_limit and exception.startswith("MemoryError"):
            description = f"exceeded --memory-limit {memory_limit} MB"
            return "memory-limit", verdicts.RunEnding(False, description), None
        failed = "could not import" if end.get("import_error") else "raised"
        return (
            status,
            verdicts.RunEnding(False, f"raised {exception}"),
            f"the target {failed}{at}: {exception}",
        )
    if outcome.timed_out:
        description = f"timed out after {timeout:g} s{at}"
        return "timeout", verdicts.RunEnding(False, description), None
    if status == protocol.STATUS_FATAL:
        description = f"could not start: {end.get('exception')}"
        return status, verdicts.RunEnding(False, description), f"the target {description}"
    signum = outcome.signal
    if memory_limit and signum in _CRASH_SIGNALS:
        name = signal.Signals(signum).name
        description = f"was killed by {name} over --memory-limit {memory_limit} MB"
        return "memory-limit", verdicts.RunEnding(False, description), None
    if signum is not None:
        description = f"was killed by {signal.Signals(signum).name}"
    else:
        description = f"ended with exit code {outcome.returncode} unrecorded"
    return "crashed", verdicts.RunEnding(False, description), f"the target {description}"


def child_config(
    target: Target,
    places: Sequence[tuple[Diagnostic, Place]],
    memory_limit_mb: int | None,
    user_paths: Sequence[str] = (),
    profile_dir: str | None = None,
) -> dict[str, object]:
    """What the child needs: the target, the lines to watch (each with its statement's lines)
    and what to measure in their runs, the user's directories."""
    sites: dict[Site, verdicts.Watched] = {}
    probes: list[dict[str, object]] = []
    for diagnostic, place in places:
        for watched in verdicts.watched_sites(diagnostic, place):
            known = sites.get(watched.site, watched)
            sites[watched.site] = known._replace(level=max(known.level, watched.level))
        probes += [p for p in verdicts.probes(diagnostic, place) if p not in probes]
    files = [place.file for _, place in places] + target.default_paths()
    roots = {str(Path.cwd()), *(str(Path(protocol.absolute(file)).parent) for file in files)}
    roots.update(protocol.absolute(path) for path in user_paths if Path(path).is_dir())
    return {
        "kind": target.kind,
        "path": target.path,
        "cells": notebook_cells(target.path) if target.kind == "notebook" and target.path else [],
        "module": target.module,
        "args": list(target.args),
        "sites": [_site_spec(watched) for _, watched in sorted(sites.items())],
        "probes": probes,
        "roots": sorted(roots),
        "memory_limit_mb": memory_limit_mb,
        "profile_dir": protocol.absolute(profile_dir) if profile_dir else None,
        "constants": any(
            verdicts.judgement(diagnostic) is Judgement.CONSTANTS for diagnostic, _ in places
        ),
    }


def _site_spec(watched: verdicts.Watched) -> dict[str, object]:
    (file, line), statement = watched.site, watched.statement
    return {
        "file": file,
        "line": line,
        "level": watched.level,
        "loop": statement.loop,
        "head": list(statement.head),
        "whole": list(statement.whole),
        "body": list(statement.body) if statement.body else None,
    }


def notebook_cells(path: str) -> list[list[object]]:
    """The notebook's code cells as the child runs them: ``[cell, first line, Python]``, the
    Python each cell is as IPython reads it and as the static pass lints it (its magics and
    shell escapes as ``...``), so lines agree."""
    text = Path(path).read_text(encoding="utf-8")
    return [[c.cell, c.first_line, c.code.text] for c in read_notebook(Path(path), text).cells]


def skipped_syntax(path: str) -> list[str]:
    """The IPython syntax that the run of a notebook skips: ``cell 2:1 `!pip install x```, or
    a whole cell under a cell magic (``%%bash``)."""
    skipped = []
    for cell in read_notebook(Path(path), Path(path).read_text(encoding="utf-8")).cells:
        lines = split_lines(cell.source)
        if lines[0].startswith("%%") and not cell.code.text:
            skipped.append(f"cell {cell.cell} `{lines[0].strip()}` (the whole cell)")
            continue
        skipped += [f"cell {cell.cell}:{n} `{lines[n - 1].strip()}`" for n in cell.replaced_lines()]
    return skipped


def runtime_findings(
    context: verdicts.Context, claimed: set[int]
) -> list[tuple[Diagnostic, tuple[Series, ...]]]:
    """``TFL900`` for user code that retraced more than the static rules accept, in calls that
    no static finding was judged on (``claimed`` holds the ids of the traces judged)."""
    found: list[tuple[Diagnostic, tuple[Series, ...]]] = []
    for stats in context.observations.user_code():
        traces = [trace for trace in stats.traces if id(trace) not in claimed]
        if not traces:
            continue
        sites = {trace.site for trace in traces}
        calls = sum(n for site, n in stats.site_calls.items() if site in sites) or stats.calls
        retraces = verdicts.Retraces(stats, traces, calls, by_code=True)
        confirmation = verdicts.measure_retracing(retraces, context)
        if confirmation.verdict is not Verdict.CONFIRMED:
            continue
        file, line, name = stats.key
        cause = f": {confirmation.cause}" if confirmation.cause else ""
        shown = context.show(file, line)
        counts = f"{confirmation.traces} traces in {confirmation.calls} calls"
        message = f"`{name}` retraced at run time ({counts}){cause}"
        finding = RUNTIME_RETRACING.at(shown.file, message, shown.line)
        finding = dataclasses.replace(finding, confirmation=confirmation, cell=shown.cell)
        found.append((finding, (series.traced(retraces),)))
    return found


def _evidence(
    stats: CodeStats | None, observations: Observations, partial: str | None
) -> tuple[str, ...]:
    evidence: list[str] = []
    if stats is not None:
        pattern = re.compile(rf"(?<![\w.]){re.escape(stats.key[2])} ")
        warnings = [
            log.split(" retracing.", 1)[0] for log in observations.logs if pattern.search(log)
        ]
        evidence += [f"TensorFlow warned: {warnings[-1]} retracing."] if warnings else []
    evidence += [f"degraded: {note}" for note in observations.degraded]
    if partial:
        evidence.append(f"partial results: the run {partial}")
    return tuple(evidence)


def confirm_all(
    places: Sequence[tuple[Diagnostic, Place]], context: verdicts.Context
) -> list[tuple[Diagnostic, tuple[Series, ...]]]:
    """Every finding with its confirmation and charts, then the runtime-only findings."""
    confirmed: list[tuple[Diagnostic, tuple[Series, ...]]] = []
    claimed: set[int] = set()
    observations = context.observations
    partial = None if context.run.normal else context.run.description
    for diagnostic, place in places:
        confirmation, evidence = verdicts.judged(diagnostic, place, context)
        stats = verdicts.find_code(place, observations)
        charts = [
            *series.tapes(observations, place),
            *series.sampled(observations, *verdicts.sampled_at(place)),
        ]
        if stats is not None and verdicts.judgement(diagnostic).retracing:
            judged = verdicts.retraces_of(diagnostic, place, stats, observations)
            claimed.update(id(trace) for trace in judged.traces)
            if judged.traces:
                charts.append(series.traced(judged))
        extra = _evidence(stats, observations, partial)
        confirmation = dataclasses.replace(confirmation, evidence=confirmation.evidence + extra)
        confirmed.append(
            (
                dataclasses.replace(diagnostic, confirmation=confirmation),
                series.evidence_first(charts, evidence),
            )
        )
    return confirmed + runtime_findings(context, claimed)


def _notes(target: Target, observations: Observations, sources: Sources) -> tuple[str, ...]:
    notes = [f"degraded: {note}" for note in observations.degraded]
    profile = observations.profile
    if profile:
        loop = place_name(sources.show(*profile["site"]))
        logdir = display_path(profile["logdir"])
        notes.append(
            f"TensorFlow Profiler trace of {profile['steps']} runs of the loop at {loop} in "
            f"{logdir} (tensorboard --logdir {logdir})"
        )
    if target.kind == "notebook" and target.path:
        skipped = skipped_syntax(target.path)
        if skipped:
            notes.append(f"skipped IPython syntax: {', '.join(skipped)}")
    if observations.eager:
        notes.append("tf.config.run_functions_eagerly(True) was on: tf.functions did not trace")
    if observations.memory_limit:
        baseline = observations.memory_limit.get("baseline_mb")
        notes.append(
            f"memory limit counted above {baseline} MB of address space after TensorFlow warm-up"
        )
    if observations.logs:
        notes.append(f"{len(observations.logs)} TensorFlow retracing/AutoGraph warnings captured")
    return tuple(notes)


def run_confirm(
    target: Target,
    diagnostics: list[Diagnostic],
    timeout: float,
    memory_limit_mb: int | None,
    max_python_values: int,
    user_paths: Sequence[str] = (),
    progress: TextIO | None = None,
    profile_dir: str | None = None,
) -> ConfirmResult:
    """Run ``target`` in an instrumented child process and confirm each of ``diagnostics``.

    ``max_python_values`` is the static rules' threshold (``max-python-values``): a retracing
    finding is confirmed when its argument made more distinct traces than that. ``user_paths``
    (the paths linted) count as the user's code, like the target's own directory. On
    ``progress`` (a terminal), a status line says what the run is doing while it runs. With
    ``profile_dir``, a TensorFlow Profiler trace of the first measured loop's sampled iterations
    is written there (for TensorBoard).
    """
    sources = Sources()
    places = [(diagnostic, sources.place(diagnostic)) for diagnostic in diagnostics]
    with tempfile.TemporaryDirectory(prefix="tflint-leaks-") as workdir:
        config = child_config(target, places, memory_limit_mb, user_paths, profile_dir)
        loops = {place.loop_site for _, place in places if place.loop_site}
        shown = None if progress is None else Progress(progress, target.name, timeout, loops)
        try:
            outcome = launch(config, Path(workdir), timeout, shown)
        finally:
            if shown is not None:
                shown.close()
    observations = read_observations(outcome.results)
    status, ending, failure = run_ending(
        target, outcome, observations, timeout, memory_limit_mb, sources.show
    )
    end = observations.end or {}
    summary = RunSummary(
        status=status,
        description=ending.description,
        failure=failure,
        exit_code=outcome.returncode,
        duration_s=outcome.duration_s,
        pid=outcome.pid,
        tensorflow=observations.tensorflow,
        traceback=str(end["traceback"]) if end.get("traceback") else None,
        notes=_notes(target, observations, sources),
        stdout_tail=outcome.stdout_tail,
        stderr_tail=outcome.stderr_tail,
    )
    context = verdicts.Context(
        observations, ending, max_python_values, sources.show, sources.source_line
    )
    found = confirm_all(places, context)
    return ConfirmResult([d for d, _ in found], summary, [charts for _, charts in found])
