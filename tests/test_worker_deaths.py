"""Runs that always end: a worker process that dies is noticed at once, the file it was on is
linted again in another worker or, when that worker dies too, reported as TFL002; a signal ends
a run whatever its workers are doing. Nothing leaves a process behind.

No test waits for a time. The command line runs inside a wrapper that replaces one phase's task
with one that, on one file, dies (``os._exit``, a real segfault) or writes its process id to a
pipe and then blocks; the test reads the pipe and then kills the worker or signals the command.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.test_cache_and_jobs import _generated_tree
from tests.test_signals import finish, start
from tflint_leaks.config import Configuration, Settings
from tflint_leaks.diagnostics import Diagnostic
from tflint_leaks.engine.discovery import discover
from tflint_leaks.engine.runner import lint_paths
from tflint_leaks.registry import INTERNAL_ERROR
from tflint_leaks.reporters import render

#: Runs ``tflint-leaks ARGS`` with the task of phase argv[2] (``index`` or ``check``) replaced:
#: on the file argv[3], the task does argv[4] -- ``exit`` (``os._exit(3)``), ``segfault`` (reads
#: address 0), ``raise`` (a ``RuntimeError``), ``block`` (writes its pid to the pipe argv[1] and
#: waits forever) or ``block-once`` (the same in the first worker to reach the file, whose marker
#: file is argv[5]; the task runs normally in the next).
WRAPPER = """\
import ctypes, os, resource, signal, sys
from tflint_leaks.engine import runner
from tflint_leaks.cli import main

pipe, phase, target, action, marker = int(sys.argv[1]), *sys.argv[2:6]
task = runner._index_path if phase == "index" else runner._check


def block():
    os.write(pipe, f"{os.getpid()}\\n".encode())
    os.close(pipe)
    while True:
        signal.pause()


def hooked(item, shared):
    if str(getattr(item, "path", item)) == target:
        if action == "exit":
            os._exit(3)
        if action == "raise":
            raise RuntimeError(f"raised on {target}")
        if action == "segfault":
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            ctypes.string_at(0)
        if action == "block":
            block()
        if action == "block-once":
            try:
                os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                pass
            else:
                block()
    return task(item, shared)


setattr(runner, "_index_path" if phase == "index" else "_check", hooked)
if action in ("exit", "segfault", "raise"):
    os.close(pipe)
sys.exit(main(sys.argv[6:]))
"""


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _generated_tree(tmp_path_factory.mktemp("deaths") / "tree", files=40)


def _start(tree: Path, phase: str, target: Path, action: str) -> tuple[subprocess.Popen[str], int]:
    """Start the wrapped command line on ``tree`` with two workers; return it and the read end
    of its pipe."""
    marker = tree.parent / f"marker-{os.getpid()}-{phase}-{action}"
    marker.unlink(missing_ok=True)
    args = [phase, str(target), action, str(marker), "--no-cache", "--select", "ALL"]
    return start(WRAPPER, [*args, "--jobs", "2", str(tree)])


def _blocked_worker(read: int) -> int:
    with os.fdopen(read) as pipe:
        return int(pipe.readline())


def _findings(tree: Path) -> list[Diagnostic]:
    """What an undisturbed run finds, with every rule selected, as the commands run here."""
    return lint_paths([tree], Settings(select=("ALL",))).diagnostics


def _files(tree: Path) -> list[Path]:
    return discover([tree], Configuration()).files


def test_a_worker_killed_mid_run_is_replaced_and_its_file_linted_again(tree: Path) -> None:
    """Failed before: the pool replaced the dead worker but never gave its task to another, so
    the command waited for the file's result forever."""
    target = tree / "train.py"
    process, read = _start(tree, "check", target, "block-once")
    worker = _blocked_worker(read)
    assert worker != process.pid
    os.kill(worker, signal.SIGKILL)
    assert finish(process) == (
        1,
        render("text", _findings(tree)),
        f"warning: a worker process died (killed by SIGKILL) linting {target}; linted again\n",
    )


@pytest.mark.parametrize(
    ("phase", "action", "cause"),
    [
        ("check", "exit", "exit status 3"),
        ("check", "segfault", "killed by SIGSEGV"),
        ("index", "exit", "exit status 3"),
    ],
)
def test_a_file_that_kills_its_workers_is_reported_and_the_run_goes_on(
    tree: Path, phase: str, action: str, cause: str
) -> None:
    """Failed before: the command waited forever for the file's result."""
    target = tree / "train.py"  # no module imports it: the others' findings stay the same
    process, read = _start(tree, phase, target, action)
    os.close(read)
    lost = INTERNAL_ERROR.at(str(target), f"two worker processes died linting this file ({cause})")
    expected = [d for d in _findings(tree) if d.file != str(target)]
    assert len(expected) < len(_findings(tree))  # the file had findings of its own
    assert finish(process) == (
        2,
        render("text", sorted([*expected, lost], key=Diagnostic.sort_key)),
        f"warning: a worker process died ({cause}) linting {target}; linted again\n",
    )


@pytest.mark.parametrize(
    ("number", "code", "word"),
    [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")],
    ids=["SIGTERM", "SIGINT"],
)
@pytest.mark.parametrize("phase", ["index", "check"])
def test_a_signal_ends_a_run_whose_worker_is_stuck(
    tree: Path, phase: str, number: int, code: int, word: str
) -> None:
    """The worker on the first file never returns: nothing is finished, nothing is printed,
    and the signal ends the run and its workers."""
    process, read = _start(tree, phase, _files(tree)[0], "block")
    _blocked_worker(read)
    process.send_signal(number)
    assert finish(process) == (
        code,
        "",
        f"error: {word}; the findings above are from the files finished\n",
    )


@pytest.mark.parametrize("phase", ["index", "check"])
def test_an_exception_in_a_worker_ends_the_run_with_one_line(tree: Path, phase: str) -> None:
    """A bug that raises in a worker ends the run as it does in one process: exit 2, one line,
    no worker left."""
    target = _files(tree)[0]
    process, read = _start(tree, phase, target, "raise")
    os.close(read)
    assert finish(process) == (2, "", f"error: internal error: RuntimeError: raised on {target}\n")
