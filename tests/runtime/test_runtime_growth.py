"""Growth findings (models, predict, tapes) judged on exact counters sampled at loop headers."""

from __future__ import annotations

import pytest

from tests.runtime.conftest import (
    by_message,
    confirm,
    confirmation_at,
    finding,
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
    fresh = finding("TFL201", script, "fresh-tape", loop="fresh-loop")
    return confirm(script, [*static_findings(script), fresh])


def test_persistent_tapes_kept_across_iterations_are_confirmed(tapes: ConfirmResult) -> None:
    confirmation = confirmation_at(tapes, "TFL204", "tapes.py", "kept-append")
    assert confirmation.verdict is Verdict.CONFIRMED
    growth = dict(confirmation.growth)
    # each tape keeps its matmul's two inputs and its relu's output: 3 tensors of 16 KB
    assert (growth["live_tapes"], growth["tape_tensors"], growth["tape_mb"]) == (1, 3, 0.031)
    assert confirmation.cause == "+1 live GradientTapes per iteration"
    assert confirmation.summary == (
        "+1 live GradientTapes per iteration; +3 tensors held by gradient tapes per iteration "
        "(+0.031 MB) over 10 samples after 2 warm-up iterations"
    )


def test_tape_spanning_the_loop_is_confirmed_by_what_it_holds(tapes: ConfirmResult) -> None:
    confirmation = confirmation_at(tapes, "TFL203", "tapes.py", "span-tape")
    assert confirmation.verdict is Verdict.CONFIRMED
    growth = dict(confirmation.growth)
    # one tape that grows: 47 KB per iteration, below what process memory can show
    assert (growth["live_tapes"], growth["tape_tensors"], growth["tape_mb"]) == (0, 6, 0.047)
    assert confirmation.summary == (
        "+6 tensors held by gradient tapes per iteration (+0.047 MB) over 10 samples after 2 "
        "warm-up iterations"
    )
    assert confirmation.iterations == 12


def test_tape_dropped_each_step_is_not_reproduced(tapes: ConfirmResult) -> None:
    confirmation = confirmation_of(tapes, "TFL201 at fresh-tape")
    assert confirmation.verdict is Verdict.NOT_REPRODUCED
    growth = dict(confirmation.growth)
    assert (growth["live_tapes"], growth["tape_tensors"], growth["tape_mb"]) == (0, 0, 0)
    assert confirmation.summary == (
        "no growth of live GradientTapes, tensors held by gradient tapes over 10 samples after 2 "
        "warm-up iterations"
    )
