"""``tflint-leaks confirm``: run a target under instrumentation and give each finding a verdict.

This is the parent side: it never imports TensorFlow. See ``tflint_leaks.runtime`` for the API
and ``docs/runtime.md`` for what is measured and how verdicts are decided.
"""

from __future__ import annotations

import dataclasses
import os
import re
import signal
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tflint_leaks.diagnostics import Diagnostic, Verdict
from tflint_leaks.registry import RUNTIME_RETRACING, Judgement
from tflint_leaks.runtime import protocol, verdicts
from tflint_leaks.runtime.launcher import ProcessOutcome, launch
from tflint_leaks.runtime.observations import CodeStats, Observations, read_observations

TargetKind = Literal["script", "module", "pytest"]


@dataclass(frozen=True)
class Target:
    """What to run: a script with its arguments, a module (``-m``) or a pytest selection."""

    kind: TargetKind
    path: str | None = None  # the script, for kind="script"
    module: str | None = None  # the dotted module name, for kind="module"
    args: tuple[str, ...] = ()  # the script's or module's arguments, or pytest's arguments

    def default_paths(self) -> list[str]:
        """What the static pass covers when no PATHS are given: the target's own file or package."""
        if self.kind == "script" and self.path:
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
    """Every static finding with its confirmation, plus runtime-only findings (``TFL900``)."""

    diagnostics: list[Diagnostic]
    run: RunSummary


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


def _where(end: dict[str, object]) -> str:
    where = end.get("where")
    if isinstance(where, list) and len(where) == 2:
        return f" at {os.path.relpath(str(where[0]))}:{where[1]}"
    return ""


def run_ending(
    outcome: ProcessOutcome, observations: Observations, timeout: float, memory_limit: int | None
) -> tuple[str, verdicts.RunEnding]:
    """The run's status and how the verdicts should read its end."""
    end = observations.end or {}
    status = str(end.get("status", ""))
    code = end.get("exit_code")
    if status == protocol.STATUS_COMPLETED:
        return status, verdicts.RunEnding(True, "ran to its end")
    if status in (protocol.STATUS_EXITED, protocol.STATUS_OS_EXIT):
        call = "sys.exit" if status == protocol.STATUS_EXITED else "os._exit"
        return status, verdicts.RunEnding(code == 0, f"stopped with {call}({code}){_where(end)}")
    if status == protocol.STATUS_RAISED:
        exception = str(end.get("exception", ""))
        if memory_limit and exception.startswith("MemoryError"):
            return "memory-limit", verdicts.RunEnding(
                False, f"exceeded --memory-limit {memory_limit} MB"
            )
        return status, verdicts.RunEnding(False, f"raised {exception}")
    if outcome.timed_out:
        return "timeout", verdicts.RunEnding(False, f"timed out after {timeout:g} s{_where(end)}")
    if status == protocol.STATUS_FATAL:
        return status, verdicts.RunEnding(False, f"could not start: {end.get('exception')}")
    signum = outcome.signal
    if memory_limit and signum in _CRASH_SIGNALS:
        name = signal.Signals(signum).name
        description = f"was killed by {name} over --memory-limit {memory_limit} MB"
        return "memory-limit", verdicts.RunEnding(False, description)
    if signum is not None:
        return "crashed", verdicts.RunEnding(False, f"was killed by {signal.Signals(signum).name}")
    return "crashed", verdicts.RunEnding(
        False, f"ended with exit code {outcome.returncode} unrecorded"
    )


def child_config(
    target: Target, diagnostics: Sequence[Diagnostic], memory_limit_mb: int | None
) -> dict[str, object]:
    """What the child needs: the target, the lines to watch, the user's directories."""
    sites = {
        (file, line): sample
        for diagnostic in diagnostics
        for (file, line), sample in verdicts.watched_sites(diagnostic)
    }
    files = [d.file for d in diagnostics] + target.default_paths()
    roots = {str(Path.cwd()), *(str(Path(protocol.absolute(file)).parent) for file in files)}
    return {
        "kind": target.kind,
        "path": target.path,
        "module": target.module,
        "args": list(target.args),
        "sites": [[file, line, sample] for (file, line), sample in sorted(sites.items())],
        "roots": sorted(roots),
        "memory_limit_mb": memory_limit_mb,
    }


def _display_path(path: str) -> str:
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def runtime_findings(
    observations: Observations, matched: set[tuple[str, int, str]]
) -> list[Diagnostic]:
    """``TFL900`` for user code that retraced on most calls and that no static finding names."""
    found: list[Diagnostic] = []
    for stats in observations.user_code():
        if stats.key in matched:
            continue
        confirmation = verdicts.measure_retracing(stats)
        if confirmation.verdict is not Verdict.CONFIRMED:
            continue
        file, line, name = stats.key
        cause = f": {confirmation.cause}" if confirmation.cause else ""
        counts = f"{confirmation.traces} traces in {confirmation.calls} calls"
        message = f"`{name}` retraced at run time ({counts}){cause}"
        finding = RUNTIME_RETRACING.at(_display_path(file), message, line)
        found.append(dataclasses.replace(finding, confirmation=confirmation))
    return found


def _evidence(
    diagnostic: Diagnostic, stats: CodeStats | None, observations: Observations, partial: str | None
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
    diagnostics: Sequence[Diagnostic], observations: Observations, ending: verdicts.RunEnding
) -> list[Diagnostic]:
    """Every finding with its confirmation, then the runtime-only findings."""
    confirmed: list[Diagnostic] = []
    matched: set[tuple[str, int, str]] = set()
    partial = None if ending.normal else ending.description
    for diagnostic in diagnostics:
        confirmation = verdicts.judge(diagnostic, observations, ending)
        stats = verdicts.find_code(diagnostic, observations)
        if stats is not None and verdicts.judgement(diagnostic) is Judgement.TRACES:
            matched.add(stats.key)
        extra = _evidence(diagnostic, stats, observations, partial)
        confirmation = dataclasses.replace(confirmation, evidence=confirmation.evidence + extra)
        confirmed.append(dataclasses.replace(diagnostic, confirmation=confirmation))
    return confirmed + runtime_findings(observations, matched)


def _notes(observations: Observations) -> tuple[str, ...]:
    notes = [f"degraded: {note}" for note in observations.degraded]
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
) -> ConfirmResult:
    """Run ``target`` in an instrumented child process and confirm each of ``diagnostics``."""
    with tempfile.TemporaryDirectory(prefix="tflint-leaks-") as workdir:
        config = child_config(target, diagnostics, memory_limit_mb)
        outcome = launch(config, Path(workdir), timeout)
    observations = read_observations(outcome.results)
    status, ending = run_ending(outcome, observations, timeout, memory_limit_mb)
    end = observations.end or {}
    summary = RunSummary(
        status=status,
        description=ending.description,
        exit_code=outcome.returncode,
        duration_s=outcome.duration_s,
        pid=outcome.pid,
        tensorflow=observations.tensorflow,
        traceback=str(end["traceback"]) if end.get("traceback") else None,
        notes=_notes(observations),
        stdout_tail=outcome.stdout_tail,
        stderr_tail=outcome.stderr_tail,
    )
    return ConfirmResult(confirm_all(diagnostics, observations, ending), summary)
