"""The parent side without TensorFlow: the install hint, the results format, verdict thresholds."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from typing import Any

import pytest

from tflint_leaks.diagnostics import Diagnostic, Location, Related, RelatedRole, Severity, Verdict
from tflint_leaks.runtime import INSTALL_HINT, protocol, tensorflow_available
from tflint_leaks.runtime.observations import (
    CodeStats,
    Observations,
    Sample,
    Trace,
    read_observations,
)
from tflint_leaks.runtime.verdicts import RunEnding, judge, measure_retracing

FILE = "/project/train.py"
KEY = (FILE, 10, "step")


def test_without_tensorflow_confirm_explains_how_to_install(monkeypatch: Any) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert tensorflow_available() is False
    assert "pip install 'tflint-leaks[runtime]'" in INSTALL_HINT


def test_the_parent_never_imports_tensorflow() -> None:
    code = (
        "import sys, tflint_leaks.runtime.confirm, tflint_leaks.runtime;"
        "tflint_leaks.runtime.tensorflow_available();"
        "assert 'tensorflow' not in sys.modules and 'libcst' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_line_cut_short_by_a_killed_child_is_skipped() -> None:
    text = protocol.encode({"k": protocol.RECORD_START, "tensorflow": "2.21.0"}) + '{"k": "tra'
    observations = read_observations(text)
    assert observations.started
    assert observations.tensorflow == "2.21.0"
    assert observations.end is None


def stats(traces: int, calls: int) -> CodeStats:
    # distinct traces: a new object each time, as for a tf.function re-created in a loop
    made = [Trace(KEY, 12, serial, True, ()) for serial in range(traces)]
    return CodeStats(KEY, 12, made, calls, traces)


@pytest.mark.parametrize(
    ("traces", "calls", "verdict"),
    [
        (3, 6, Verdict.CONFIRMED),
        (3, 7, Verdict.NOT_REPRODUCED),
        (2, 2, Verdict.NOT_REPRODUCED),
        (1, 100, Verdict.NOT_REPRODUCED),
    ],
)
def test_retracing_thresholds(traces: int, calls: int, verdict: Verdict) -> None:
    assert measure_retracing(stats(traces, calls)).verdict is verdict


def finding(code: str, line: int, loop: int | None = None) -> Diagnostic:
    related = (
        (Related(RelatedRole.LOOP, "", FILE, Location(loop, 1), Location(loop, 1)),) if loop else ()
    )
    return Diagnostic(
        code,
        code,
        code,
        Severity.WARNING,
        FILE,
        Location(line, 1),
        Location(line, 1),
        None,
        related,
    )


def test_code_never_reached_is_not_executed_only_after_a_normal_end() -> None:
    observations = Observations()
    normal = judge(finding("TFL101", 20, 19), observations, RunEnding(True, "ran to its end"))
    stopped = judge(
        finding("TFL101", 20, 19), observations, RunEnding(False, "timed out after 5 s")
    )
    assert normal.verdict is Verdict.NOT_EXECUTED
    assert stopped.verdict is Verdict.ERROR
    assert stopped.summary == "the run timed out after 5 s before this code ran"


def growth_observations(values: list[int]) -> Observations:
    observations = Observations()
    observations.hits = {(FILE, 19): len(values), (FILE, 20): len(values)}
    observations.samples[(FILE, 19)] = [
        Sample(hit, {protocol.COUNTER_LIVE_TAPES: value}) for hit, value in enumerate(values, 1)
    ]
    return observations


@pytest.mark.parametrize(
    ("values", "verdict"),
    [
        ([1, 2, 3, 4, 5, 6, 7, 8], Verdict.CONFIRMED),
        ([1, 1, 1, 1, 1, 1, 1, 1], Verdict.NOT_REPRODUCED),
        ([1, 2, 1, 2, 1, 2, 1, 2], Verdict.NOT_REPRODUCED),
        ([1, 2, 3, 4, 5, 6], Verdict.NOT_REPRODUCED),  # too few samples after warm-up
    ],
)
def test_growth_thresholds(values: list[int], verdict: Verdict) -> None:
    ending = RunEnding(True, "ran to its end")
    assert judge(finding("TFL201", 20, 19), growth_observations(values), ending).verdict is verdict
