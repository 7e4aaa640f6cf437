"""Growth findings (models, predict, tapes) judged on exact counters sampled at loop headers."""

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
from tflint_leaks.diagnostics import Confirmation, Verdict
from tflint_leaks.runtime.confirm import ConfirmResult

pytestmark = [pytest.mark.runtime, requires_tensorflow]


def confirmation_of(result: ConfirmResult, message: str) -> Confirmation:
    confirmation = by_message(result)[message].confirmation
    assert confirmation is not None
    return confirmation


@pytest.fixture(scope="module")
def models() -> ConfirmResult:
    script = "models.py"
    return confirm(
        script,
        [
            finding("TFL401", script, "leak-build", loop="leak-loop"),
            finding("TFL401", script, "clear-build", loop="clear-loop"),
            finding("TFL402", script, "predict", loop="predict-loop"),
        ],
    )


def test_model_built_in_a_loop_is_confirmed(models: ConfirmResult) -> None:
    confirmation = confirmation_of(models, "TFL401 at leak-build")
    assert confirmation.verdict is Verdict.CONFIRMED
    growth = dict(confirmation.growth)
    assert growth["keras_names"] >= 2
    assert confirmation.cause == f"+{growth['keras_names']:g} Keras layer/model names per iteration"
    assert confirmation.iterations == 9


def test_model_built_with_clear_session_is_not_reproduced(models: ConfirmResult) -> None:
    confirmation = confirmation_of(models, "TFL401 at clear-build")
    assert confirmation.verdict is Verdict.NOT_REPRODUCED
    assert dict(confirmation.growth)["keras_names"] == 0
    assert confirmation.summary == (
        "no growth of traces of any tf.function, Keras layer/model names, graph functions "
        "registered, live FuncGraphs over 8 samples after 2 warm-up iterations"
    )


def test_predict_in_a_loop_is_confirmed(models: ConfirmResult) -> None:
    confirmation = confirmation_of(models, "TFL402 at predict")
    assert confirmation.verdict is Verdict.CONFIRMED
    growth = dict(confirmation.growth)
    # Keras 3.15 keeps its predict function but traces a new tf.data pipeline on every call
    assert (growth["traces"], growth["graph_functions"]) == (3, 0)
    assert confirmation.cause == "+3 traces of any tf.function per iteration"
    assert any(line.startswith("process memory (RSS") for line in confirmation.evidence)


@pytest.fixture(scope="module")
def tapes() -> ConfirmResult:
    """The real static pass's findings, plus the tape dropped each step (which it rightly
    leaves alone) flagged by hand."""
    script = "tapes.py"
    fresh = finding("TFL201", script, "fresh-tape", loop="fresh-loop", tape="fresh-work")
    return confirm(script, [*static_findings(script), fresh])


def test_persistent_tapes_kept_across_iterations_are_confirmed(tapes: ConfirmResult) -> None:
    """TFL204 claims the stored tapes keep what they recorded alive past their iteration."""
    confirmation = confirmation_at(tapes, "TFL204", "tapes.py", "kept-append")
    assert confirmation.verdict is Verdict.CONFIRMED
    growth = dict(confirmation.growth)
    # each tape keeps its matmul's two inputs and its relu's output: 3 tensors of 16 KB (`x`,
    # in every tape's records, is counted once)
    assert (growth["live_tapes"], growth["tape_tensors"], growth["tape_mb"]) == (1, 3, 0.031)
    assert confirmation.cause == (
        "tapes stored past their iteration held 37 tensors (0.391 MB) after iteration 12"
    )
    assert confirmation.summary == (
        "tapes from earlier iterations held tensors at 11 of 11 iteration starts after 2 "
        "warm-up iterations: up to 37 tensors (0.391 MB) after iteration 12; +1 live "
        "GradientTapes per iteration; +3 tensors held by gradient tapes per iteration "
        "(+0.031 MB)"
    )
    assert confirmation.iterations == 12


def test_tape_spanning_the_loop_is_confirmed_by_what_it_holds(tapes: ConfirmResult) -> None:
    confirmation = confirmation_at(tapes, "TFL203", "tapes.py", "span-tape")
    assert confirmation.verdict is Verdict.CONFIRMED
    growth = dict(confirmation.growth)
    # one tape that grows: 47 KB per iteration, below what process memory can show
    assert (growth["live_tapes"], growth["tape_tensors"], growth["tape_mb"]) == (0, 6, 0.047)
    # 13 samples: the header's 12 iterations and its final check
    assert confirmation.summary == (
        "+6 tensors held by gradient tapes per iteration (+0.047 MB) over 11 samples after 2 "
        "warm-up iterations"
    )
    assert confirmation.iterations == 12


def test_tape_findings_chart_their_evidence_first(tapes: ConfirmResult) -> None:
    for marker in ("kept-append", "span-tape"):
        line = line_of("tapes.py", marker)
        [charts] = [
            charts
            for d, charts in zip(tapes.diagnostics, tapes.charts, strict=True)
            if d.start.line == line
        ]
        assert charts[0].title == "tensors held by gradient tapes"
        # against the iterations completed, up to the last of the 12
        assert (charts[0].points[0][0], charts[0].points[-1][0], charts[0].extent) == (0, 12, 12)


def test_tape_dropped_each_step_is_not_reproduced(tapes: ConfirmResult) -> None:
    """A tape that is not persistent releases what it recorded at its `gradient`."""
    confirmation = confirmation_of(tapes, "TFL201 at fresh-tape")
    assert confirmation.verdict is Verdict.NOT_REPRODUCED
    assert dict(confirmation.growth) == {"tape_tensors_kept": 0, "tape_mb_kept": 0}
    work = line_of("tapes.py", "fresh-work")
    assert confirmation.summary == (
        f"the tape held nothing when `w.assign_sub(0.001 * grad)` (line {work}) ran: it held "
        "tensors in 0 of 12 measured iterations (12 iterations)"
    )
