"""Tape verdicts by what each finding claims (TFL201: what a persistent tape still holds while
the work after its last use runs; TFL202: what a recording tape adds while the flagged line
runs), and watched lines sampled once per run: a `with` line (which Python runs again on exit
from its block) counts its entries, a loop header its iterations, up to the last one. Real
static findings where the linter has them, hand-made ones for the fixed code; real TensorFlow."""

from __future__ import annotations

import pytest

from tests.runtime.conftest import (
    by_message,
    confirm,
    confirmation_at,
    finding,
    line_of,
    requires_tensorflow,
    static_findings,
)
from tflint_leaks.diagnostics import Diagnostic, Verdict
from tflint_leaks.runtime import protocol, verdicts
from tflint_leaks.runtime.confirm import ConfirmResult
from tflint_leaks.runtime.report import render
from tflint_leaks.runtime.series import Series

pytestmark = [pytest.mark.runtime, requires_tensorflow]

SCRIPT = "tape_peak.py"


@pytest.fixture(scope="module")
def tape_peak() -> ConfirmResult:
    """The issue's example (its real TFL201 finding) and the real TFL202 finding, plus the
    same step releasing its tape and the gradient taken after the block, flagged by hand."""
    released = finding("TFL201", SCRIPT, "released-tape", tape="released-work")
    outside = finding("TFL202", SCRIPT, "outside-gradient")
    return confirm(SCRIPT, [*static_findings(SCRIPT), released, outside], timeout=600)


def charts_of(result: ConfirmResult, diagnostic: Diagnostic) -> tuple[Series, ...]:
    [charts] = [
        c for d, c in zip(result.diagnostics, result.charts, strict=True) if d == diagnostic
    ]
    return charts


def diagnostic_at(result: ConfirmResult, code: str, marker: str) -> Diagnostic:
    line = line_of(SCRIPT, marker)
    [found] = [d for d in result.diagnostics if d.code == code and d.start.line == line]
    return found


def test_issue_example_is_confirmed_by_the_peak_its_tape_keeps(tape_peak: ConfirmResult) -> None:
    confirmation = confirmation_at(tape_peak, "TFL201", SCRIPT, "kept-tape")
    assert confirmation.verdict is Verdict.CONFIRMED
    work = line_of(SCRIPT, "kept-work")
    # the tape's records (x, w, the matmul, the power: 6 tensors of 16 KB) are still alive
    # while the optimizer updates, on every measured call: 1..12, 16, 32, 64 and 128
    assert confirmation.summary == (
        "peak 6 tensors (0.063 MB) kept alive by the tape after its last use, through "
        f"`opt.apply_gradients(zip(g, [w], strict=True))` (line {work}), `return y` "
        f"(line {work + 1}), until `step` returned; held in 16 of 16 measured calls (200 calls)"
    )
    assert confirmation.cause == (
        "what the tape recorded (0.063 MB) stays alive while "
        f"`opt.apply_gradients(zip(g, [w], strict=True))` (line {work}) runs"
    )
    assert dict(confirmation.growth) == {"tape_tensors_kept": 6, "tape_mb_kept": 0.063}


def test_issue_example_counts_its_200_calls(tape_peak: ConfirmResult) -> None:
    """The `with` line runs on entry and again on exit: 400 line events, 200 calls."""
    confirmation = confirmation_at(tape_peak, "TFL201", SCRIPT, "kept-tape")
    assert confirmation.iterations == 200


def test_issue_example_chart_covers_all_200_calls(tape_peak: ConfirmResult) -> None:
    [chart] = charts_of(tape_peak, diagnostic_at(tape_peak, "TFL201", "kept-tape"))
    assert chart.key == verdicts.CHART_TAPE_KEPT
    assert chart.points == tuple((run, 0.063) for run in [*range(1, 13), 16, 32, 64, 128])
    assert chart.extent == 200
    page = render(tape_peak, SCRIPT)
    # the x axis is labelled from the first measured call to the 200th
    assert '<text x="290" y="132" font-size="10" text-anchor="end">200</text>' in page


def test_a_tape_released_before_the_work_is_not_reproduced(tape_peak: ConfirmResult) -> None:
    confirmation = by_message(tape_peak)["TFL201 at released-tape"].confirmation
    assert confirmation is not None
    assert confirmation.verdict is Verdict.NOT_REPRODUCED
    work, deleted = line_of(SCRIPT, "released-work"), line_of(SCRIPT, "released-del")
    assert confirmation.summary == (
        "the tape held nothing when `opt.apply_gradients(zip(g, [w], strict=True))` "
        f"(line {work}) ran, released at line {deleted}: it held tensors in 0 of 13 measured "
        "calls (20 calls)"
    )
    assert confirmation.iterations == 20


def test_gradient_recorded_by_its_own_persistent_tape_is_confirmed(
    tape_peak: ConfirmResult,
) -> None:
    confirmation = confirmation_at(tape_peak, "TFL202", SCRIPT, "inside-gradient")
    assert confirmation.verdict is Verdict.CONFIRMED
    # the backward pass of the matmul and the power: 4 more tensors on the tape
    assert confirmation.summary == (
        "a recording tape took 4 tensors (0.046 MB) more while this statement ran inside its "
        "block: from 6 tensors (0.063 MB) to 10 tensors (0.109 MB); in 13 of 13 measured runs "
        "(20 runs)"
    )
    assert dict(confirmation.growth) == {"tape_tensors_recorded": 4, "tape_mb_recorded": 0.046}
    [chart] = charts_of(tape_peak, diagnostic_at(tape_peak, "TFL202", "inside-gradient"))
    assert (chart.key, chart.extent) == (verdicts.CHART_TAPE_RECORDS, 20)


def test_gradient_after_the_block_is_not_reproduced(tape_peak: ConfirmResult) -> None:
    confirmation = by_message(tape_peak)["TFL202 at outside-gradient"].confirmation
    assert confirmation is not None
    assert confirmation.verdict is Verdict.NOT_REPRODUCED
    assert confirmation.summary == (
        "no tape recorded anything while this statement ran: +0 tensors in 0 of 13 measured "
        "runs (20 runs)"
    )


@pytest.fixture(scope="module")
def lines() -> ConfirmResult:
    script = "lines.py"
    return confirm(
        script,
        [
            finding("TFL401", script, "with-line"),
            finding("TFL401", script, "decorated", loop="loop"),
        ],
    )


def test_with_line_is_sampled_once_per_run(lines: ConfirmResult) -> None:
    confirmation = by_message(lines)["TFL401 at with-line"].confirmation
    assert confirmation is not None
    assert confirmation.iterations == 20
    [diagnostic] = [d for d in lines.diagnostics if d.message == "TFL401 at with-line"]
    charts = charts_of(lines, diagnostic)
    assert charts[0].x_label == "run"
    assert [x for x, _ in charts[0].points] == [*range(1, 13), 16]
    assert charts[0].extent == 20


def test_loop_samples_reach_its_last_iteration(lines: ConfirmResult) -> None:
    """A decorated definition's decorator line runs twice per iteration; the header once, and
    once more for its final check, where the last sample is taken."""
    confirmation = by_message(lines)["TFL401 at decorated"].confirmation
    assert confirmation is not None
    assert confirmation.iterations == 20
    [diagnostic] = [d for d in lines.diagnostics if d.message == "TFL401 at decorated"]
    charts = charts_of(lines, diagnostic)
    assert charts[0].x_label == "iterations completed"
    assert [x for x, _ in charts[0].points] == [*range(12), 15, 20]
    # the first chart is the one the verdict reads
    assert charts[0].key == protocol.COUNTER_TRACES
