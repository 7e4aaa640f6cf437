"""What a confirm run is doing, on one line of a terminal, while it runs.

The child writes its results file as it goes; :class:`Progress` reads what was added since its
last look and redraws the line: TensorFlow starting, then the target running with the seconds
elapsed of the timeout, the loop iterations seen at the watched loops and the traces so far.
The command line shows it only on a terminal and only for the text format.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from tflint_leaks.runtime.observations import Observations, apply_lines

_CLEAR = "\r\x1b[K"


class Progress:
    """Redraws one status line on ``stream`` from the results file of a running child."""

    def __init__(self, stream: TextIO, target: str, timeout: float, loops: set[tuple[str, int]]):
        self._stream = stream
        self._target = target
        self._timeout = timeout
        self._loops = loops
        self._observations = Observations()
        self._offset = 0
        self._pending = ""

    def _read(self, results: Path) -> None:
        try:
            with results.open(encoding="utf-8") as file:
                file.seek(self._offset)
                added = file.read()
                self._offset = file.tell()
        except OSError:
            return
        complete, _, self._pending = (self._pending + added).rpartition("\n")
        apply_lines(self._observations, complete)

    def line(self, elapsed: float) -> str:
        """The status line for what was read so far."""
        observations = self._observations
        clock = f"{elapsed:.0f} s of {self._timeout:g} s"
        if not observations.started:
            return f"confirm: starting TensorFlow · {clock}"
        hits = [observations.hits.get(loop, 0) for loop in self._loops]
        iterations = max([hit - 1 for hit in hits if hit], default=0)
        traces = sum(len(stats.traces) for stats in observations.user_code())
        return (
            f"confirm: running {self._target} · {clock} · {iterations} loop iterations · "
            f"{traces} traces"
        )

    def __call__(self, results: Path, elapsed: float) -> None:
        self._read(results)
        self._stream.write(_CLEAR + self.line(elapsed))
        self._stream.flush()

    def close(self) -> None:
        """Take the status line off the terminal."""
        self._stream.write(_CLEAR)
        self._stream.flush()
