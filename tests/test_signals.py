"""Ctrl-C and SIGTERM: the workers stop, the findings of the files finished are printed, the exit
code says which signal it was (130, 143), and no process is left behind.

No test here waits for a time: the child (the command line with two workers) is wrapped so that
it writes which phase it is in to a pipe and then waits for a signal in that phase. The test reads
the marker, sends the signal, and knows exactly which files were finished.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_cache_and_jobs import _generated_tree
from tflint_leaks.config import Configuration
from tflint_leaks.engine.discovery import discover
from tflint_leaks.engine.runner import lint_paths
from tflint_leaks.reporters import render

#: Runs ``tflint-leaks ARGS`` and, in the phase named by argv[2], writes that phase's name to
#: the pipe argv[1] and waits for a signal. ``check:N`` waits after N files were checked and
#: kept; ``index`` once every file is indexed, before any is checked.
WRAPPER = """\
import os, signal, sys
from tflint_leaks.engine import runner
from tflint_leaks.cli import main

pipe, phase = int(sys.argv[1]), sys.argv[2]


def reached():
    os.write(pipe, phase.encode() + b"\\n")
    os.close(pipe)
    while True:
        signal.pause()


if phase == "index":
    project = runner.ProjectIndex

    def indexed(*args):
        reached()

    runner.ProjectIndex = indexed
else:
    kept, count = runner._kept, int(phase.partition(":")[2])
    checked = []

    def keep(*args):
        if len(checked) == count:
            reached()
        checked.append(1)
        return kept(*args)

    runner._kept = keep
sys.exit(main(sys.argv[3:]))
"""
FINISHED = 9


def start(wrapper: str, args: list[str]) -> tuple[subprocess.Popen[str], int]:
    """Run ``python -c WRAPPER PIPE ARGS...`` in a session of its own, ``PIPE`` being the write
    end of a pipe; return the process and the read end."""
    read, write = os.pipe()
    process = subprocess.Popen(
        [sys.executable, "-c", wrapper, str(write), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        pass_fds=(write,),
    )
    os.close(write)
    return process, read


def finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    """Wait for ``process``; its exit code and output, once no process of its session is left
    (its workers were stopped and reaped before it exited)."""
    out, err = process.communicate()
    with pytest.raises(ProcessLookupError):
        os.killpg(process.pid, 0)
    return process.returncode, out, err


def _run_until(phase: str, tree: Path, signal_number: int) -> subprocess.CompletedProcess[str]:
    """Run the wrapped command line on ``tree`` with two workers, wait for it to reach
    ``phase``, send ``signal_number`` to it alone, and collect what it printed."""
    process, read = start(WRAPPER, [phase, "--no-cache", "--jobs", "2", str(tree)])
    with os.fdopen(read) as marker:
        reached = marker.readline()
    assert reached == f"{phase}\n", process.communicate()
    process.send_signal(signal_number)
    return subprocess.CompletedProcess(process.args, *finish(process))


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _generated_tree(tmp_path_factory.mktemp("signals") / "tree", files=60)


def _finished_output(tree: Path, count: int) -> str:
    """The text output of the findings of the first ``count`` files checked (in the order the
    files are found, which is the order they are checked in)."""
    first = {str(path) for path in discover([tree], Configuration()).files[:count]}
    every = lint_paths([tree], Configuration()).diagnostics
    found = [d for d in every if d.file in first]
    assert 0 < len(found) < len(every)  # some findings are printed, not all
    return render("text", found)


@pytest.mark.parametrize(
    ("number", "code", "word"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")],
    ids=["SIGINT", "SIGTERM"],
)
def test_a_signal_in_the_check_phase_prints_what_was_finished(
    tree: Path, number: int, code: int, word: str
) -> None:
    """Failed before: the Ctrl-C test slept for 0.8 times an earlier run's duration, so on a
    loaded machine the signal landed in another phase ("Aborted."); SIGTERM killed the command
    (exit -15, nothing printed) and left the workers printing ``BrokenPipeError`` tracebacks."""
    run = _run_until(f"check:{FINISHED}", tree, number)
    assert (run.returncode, run.stdout, run.stderr) == (
        code,
        _finished_output(tree, FINISHED),
        f"error: {word}; the findings above are from the files finished\n",
    )


def test_an_interrupt_before_any_file_is_checked_claims_nothing(tree: Path) -> None:
    """Failed before: "All checks passed!" was printed although nothing had been checked."""
    run = _run_until("index", tree, signal.SIGINT)
    assert (run.returncode, run.stdout, run.stderr) == (
        130,
        "",
        "error: interrupted; the findings above are from the files finished\n",
    )
