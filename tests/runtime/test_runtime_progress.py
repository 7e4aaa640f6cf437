"""Progress on a terminal: what the run is doing, shown while it runs, synchronised on the text
printed to a pseudo-terminal (never on time); nothing of it off a terminal or beside JSON."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.runtime.conftest import requires_tensorflow

pytestmark = [pytest.mark.runtime, requires_tensorflow]

ROOT = Path(__file__).resolve().parents[2]
TARGET = """\
import sys
from pathlib import Path

import tensorflow as tf


@tf.function
def step(x, i):
    return x + 1.0


stop = Path(sys.argv[1])
x = tf.zeros([1])
i = 0
while not stop.exists():
    x = step(x, i % 10)
    i += 1
"""


class Terminal:
    """The reading end of a pseudo-terminal that a ``tflint-leaks`` process writes to."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.text = ""

    def _more(self) -> bool:
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:  # EIO: every writer closed the terminal
            chunk = b""
        self.text += chunk.decode("utf-8", errors="replace")
        return bool(chunk)

    def wait_for(self, pattern: str) -> re.Match[str]:
        """Read until ``pattern`` appears in what was printed."""
        while (match := re.search(pattern, self.text)) is None:
            assert self._more(), f"{pattern!r} was never printed; printed: {self.text!r}"
        return match

    def read_to_end(self) -> str:
        while self._more():
            pass
        return self.text


def start(
    args: list[str], cwd: Path, stdout_on_terminal: bool
) -> tuple[subprocess.Popen[bytes], Terminal]:
    """``tflint-leaks ARGS`` with stderr (and stdout if asked) on a pseudo-terminal."""
    main_fd, terminal_fd = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "tflint_leaks", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=terminal_fd if stdout_on_terminal else subprocess.PIPE,
        stderr=terminal_fd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    os.close(terminal_fd)
    return process, Terminal(main_fd)


def test_progress_shows_on_a_terminal_and_goes_away(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(TARGET)
    stop = tmp_path / "stop"
    process, terminal = start(
        ["confirm", "train.py", "--timeout", "300", "--", str(stop)], tmp_path, True
    )
    try:
        terminal.wait_for(r"confirm: starting TensorFlow · \d+ s of 300 s")
        # the ten values of `i % 10` traced, and the loop went round again after them
        match = terminal.wait_for(
            r"confirm: running train\.py · \d+ s of 300 s · \d{2,} loop iterations · 10 traces"
        )
    finally:
        stop.touch()  # the target's loop ends: whatever happened above, the run finishes
        output = terminal.read_to_end()
        process.wait()
        os.close(terminal.fd)
    assert process.returncode == 1
    after = output[match.end() :]
    # the status line is cleared before the report
    assert "\r\x1b[K" in after
    report = after.rpartition("\r\x1b[K")[2]
    assert report.replace("\r\n", "\n").startswith("target completed: ran to its end\n")
    assert "runtime: confirmed: `step` traced 10 times in " in report


def test_no_progress_beside_a_machine_readable_format(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(TARGET)
    (tmp_path / "stop").touch()  # the loop ends at once
    process, terminal = start(
        ["confirm", "train.py", "--timeout", "300", "--output-format", "json", "--", "stop"],
        tmp_path,
        False,
    )
    stdout, _ = process.communicate()
    stderr = terminal.read_to_end()
    os.close(terminal.fd)
    assert process.returncode == 0, stderr
    assert "confirm:" not in stderr
    assert "\x1b[K" not in stderr
    (finding,) = json.loads(stdout)
    assert finding["confirmation"]["verdict"] == "not-executed"
