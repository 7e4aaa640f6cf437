"""Start the child in its own process group, enforce the timeout, leave no process behind."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tflint_leaks.runtime import protocol

#: Seconds the child gets after SIGTERM to write its last results before the group is killed.
GRACE_S = 5.0
#: Seconds between two calls of a launch's ``watch`` (progress on a terminal).
WATCH_PERIOD_S = 0.25
Watch = Callable[[float], None]
_TAIL_LINES = 20
#: The directory holding the ``tflint_leaks`` package, so the child finds it even when it is not
#: installed; the child then points ``sys.path[0]`` at the target as Python would.
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])
_BOOTSTRAP = (
    "import sys; sys.path[0] = sys.argv.pop(1); "
    "from tflint_leaks.runtime.child import main; sys.exit(main(sys.argv[1:]))"
)


@dataclass(frozen=True)
class ProcessOutcome:
    """How the child process ended, seen from outside."""

    pid: int
    returncode: int
    timed_out: bool
    duration_s: float
    results: str
    stdout_tail: str
    stderr_tail: str

    @property
    def signal(self) -> int | None:
        """The signal that killed the child, if one did."""
        return -self.returncode if self.returncode < 0 else None


def child_environment(config: dict[str, Any]) -> dict[str, str]:
    """The parent's environment with TensorFlow's C++ logs silenced (and, for a profile, CPU
    allocations recorded)."""
    profile = protocol.PROFILE_ENV if config.get("profile_dir") else {}
    return {**os.environ, **protocol.QUIET_ENV, **profile}


def kill_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def wait_group_gone(pgid: int) -> None:
    """Give killed members of the group (forks of the target) up to ``GRACE_S`` to disappear."""
    deadline = time.monotonic() + GRACE_S
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.02)


def tail(path: Path) -> str:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(lines[-_TAIL_LINES:])


def wait(process: subprocess.Popen[bytes], timeout: float, watch: Watch | None) -> int:
    """``process.wait(timeout)``, calling ``watch(elapsed)`` every ``WATCH_PERIOD_S`` meanwhile."""
    if watch is None:
        return process.wait(timeout)
    started = time.monotonic()
    while True:
        elapsed = time.monotonic() - started
        try:
            return process.wait(min(WATCH_PERIOD_S, max(timeout - elapsed, 0.0)))
        except subprocess.TimeoutExpired:
            if time.monotonic() - started >= timeout:
                raise
            watch(time.monotonic() - started)


def launch(
    config: dict[str, Any],
    workdir: Path,
    timeout: float,
    watch: Callable[[Path, float], None] | None = None,
) -> ProcessOutcome:
    """Run the child bootstrap on ``config`` and wait for it, at most ``timeout`` seconds.

    While it runs, ``watch`` (if given) is called every ``WATCH_PERIOD_S`` with the results file
    and the seconds elapsed (for progress on a terminal).

    The child's stdout and stderr go to files in ``workdir`` (never to a pipe, so a chatty target
    cannot block on a full pipe). On timeout the whole process group gets SIGTERM, then SIGKILL
    after ``GRACE_S``; at the end the group is killed in any case, so forked children of the
    target are gone when this returns.
    """
    results = workdir / "results.jsonl"
    config_path = workdir / "config.json"
    config_path.write_text(json.dumps({**config, "results": str(results)}), encoding="utf-8")
    stdout_path, stderr_path = workdir / "stdout.txt", workdir / "stderr.txt"
    command = [sys.executable, "-c", _BOOTSTRAP, _PACKAGE_ROOT, str(config_path)]
    started = time.monotonic()
    timed_out = False
    with stdout_path.open("wb") as stdout, stderr_path.open("wb") as stderr:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            env=child_environment(config),
            start_new_session=True,
        )
        try:
            try:
                seen = None if watch is None else functools.partial(watch, results)
                returncode = wait(process, timeout, seen)
            except subprocess.TimeoutExpired:
                timed_out = True
                kill_group(process.pid, signal.SIGTERM)
                try:
                    returncode = process.wait(GRACE_S)
                except subprocess.TimeoutExpired:
                    kill_group(process.pid, signal.SIGKILL)
                    returncode = process.wait()
        finally:
            kill_group(process.pid, signal.SIGKILL)
            process.wait()
            wait_group_gone(process.pid)
    return ProcessOutcome(
        pid=process.pid,
        returncode=returncode,
        timed_out=timed_out,
        duration_s=round(time.monotonic() - started, 2),
        results=results.read_text(encoding="utf-8") if results.exists() else "",
        stdout_tail=tail(stdout_path),
        stderr_tail=tail(stderr_path),
    )
