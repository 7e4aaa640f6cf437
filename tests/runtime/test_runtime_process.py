"""The child process: timeouts, crashes, exits, forks, chatty output and the memory limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runtime.conftest import by_message, confirm, finding, line_of, requires_tensorflow
from tflint_leaks.diagnostics import Confirmation, Diagnostic, Verdict
from tflint_leaks.runtime.confirm import ConfirmResult

pytestmark = [pytest.mark.runtime, requires_tensorflow]

HELPERS = "helpers.py"


def helper_findings() -> list[Diagnostic]:
    """The retracing call that runs before each failure, and the one only reached after it."""
    return [
        finding("TFL101", HELPERS, "helper-call", tf_function="helper-def", loop="helper-loop"),
        finding("TFL101", HELPERS, "more-call", tf_function="more-def", loop="more-loop"),
    ]


def confirmation_of(result: ConfirmResult, marker: str) -> Confirmation:
    confirmation = by_message(result)[f"TFL101 at {marker}"].confirmation
    assert confirmation is not None
    return confirmation


def assert_measured_before_the_end(result: ConfirmResult) -> None:
    """``helpers.retrace(6)`` ran: 6 values, one more than ``max-python-values`` accepts."""
    confirmation = confirmation_of(result, "helper-call")
    assert confirmation.verdict is Verdict.CONFIRMED
    assert (confirmation.traces, confirmation.calls) == (6, 6)
    assert (
        confirmation.cause == "argument `i` took 6 distinct Python int values: 0, 1, 2, 3, ..., 5"
    )


def live_members(pgid: int) -> list[str]:
    """Processes (zombies aside) still in the process group ``pgid``."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(stat.parent.name)
    return members


def test_hanging_target_times_out_with_partial_results() -> None:
    line = line_of("hangs.py", "hang")
    timeout = 12.0
    result = confirm("hangs.py", helper_findings(), timeout=timeout)
    # On a busy machine the deadline may pass before the target reaches its hang, in
    # TensorFlow's import (the run then stops at no line of the target): give it the time a
    # user would, until the state the test is about (stopped at the hang) is reached.
    while result.run.description == f"timed out after {timeout:g} s" and timeout < 200:
        timeout *= 2
        result = confirm("hangs.py", helper_findings(), timeout=timeout)
    assert result.run.status == "timeout"
    assert result.run.description == (
        f"timed out after {timeout:g} s at tests/runtime/targets/hangs.py:{line}"
    )
    assert_measured_before_the_end(result)
    after = confirmation_of(result, "more-call")
    assert after.verdict is Verdict.ERROR
    assert after.summary == f"the run {result.run.description} before this code ran"
    assert live_members(result.run.pid) == []


def test_raising_target_reports_its_traceback() -> None:
    result = confirm("raises.py", helper_findings())
    assert result.run.status == "raised"
    assert result.run.description == "raised FileNotFoundError: no checkpoint at /nonexistent/ckpt"
    assert result.run.traceback is not None
    assert f'raises.py", line {line_of("raises.py", "raise")}, in load_checkpoint' in (
        result.run.traceback
    )
    assert_measured_before_the_end(result)
    assert confirmation_of(result, "more-call").verdict is Verdict.ERROR


def test_sys_exit_with_an_error_code_stops_the_run() -> None:
    result = confirm("exits.py", helper_findings(), "3")
    line = line_of("exits.py", "sys-exit")
    assert result.run.status == "exited"
    assert (
        result.run.description
        == f"stopped with sys.exit(3) at tests/runtime/targets/exits.py:{line}"
    )
    assert result.run.exit_code == 3
    assert_measured_before_the_end(result)
    assert confirmation_of(result, "more-call").verdict is Verdict.ERROR


def test_os_exit_keeps_every_count() -> None:
    result = confirm("exits.py", helper_findings(), "0", "os")
    assert result.run.status == "os-exit"
    assert result.run.exit_code == 0
    assert_measured_before_the_end(result)
    assert confirmation_of(result, "more-call").verdict is Verdict.NOT_EXECUTED


def test_forked_children_are_killed_and_do_not_write_results() -> None:
    result = confirm("forks.py", helper_findings())
    assert result.run.status == "completed"
    assert_measured_before_the_end(result)
    assert live_members(result.run.pid) == []


def test_heavy_output_does_not_block() -> None:
    result = confirm("chatty.py", helper_findings())
    assert result.run.status == "completed"
    assert result.run.stdout_tail.endswith("49999 " + "x" * 120)
    assert_measured_before_the_end(result)


def test_memory_limit_stops_the_target() -> None:
    result = confirm("memory.py", helper_findings(), memory_limit_mb=400)
    assert result.run.status == "memory-limit"
    assert result.run.description == "exceeded --memory-limit 400 MB"
    assert_measured_before_the_end(result)
    assert confirmation_of(result, "more-call").verdict is Verdict.ERROR
    assert any(note.startswith("memory limit counted above") for note in result.run.notes)


def test_the_child_dies_with_the_confirm_process(tmp_path: Path) -> None:
    """SIGKILL on ``tflint-leaks confirm`` (a CI job cancelled, an OOM kill) skips its clean-up;
    the TensorFlow child must not be left running (it was: orphans kept a core busy). The test
    waits for states, not for time: the child's start record, then the child's exit."""
    import json
    import os
    import signal
    import subprocess
    import sys
    import tempfile
    import time

    target = Path(__file__).parent / "targets" / "hangs.py"
    parent = subprocess.Popen(
        [sys.executable, "-m", "tflint_leaks", "confirm", str(target), "--timeout", "600"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    child_pid = None
    deadline = time.monotonic() + 300  # a bound for a broken run, not a timing assumption
    while child_pid is None and time.monotonic() < deadline and parent.poll() is None:
        for results in Path(tempfile.gettempdir()).glob("tflint-leaks-*/results.jsonl"):
            for line in results.read_text(encoding="utf-8").splitlines():
                record = json.loads(line)
                if record.get("k") == "start" and record.get("pid"):
                    pid = int(record["pid"])
                    if _parent_of(pid) == parent.pid:
                        child_pid = pid
        time.sleep(0.05)
    assert child_pid is not None, "the child never started"
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    while time.monotonic() < deadline and _alive(child_pid):
        time.sleep(0.05)
    assert not _alive(child_pid)


def _parent_of(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"
