"""Growth findings (models, predict, tapes) judged on exact counters sampled at loop headers."""

from __future__ import annotations

import pytest

from tests.runtime.conftest import by_message, confirm, finding, requires_tensorflow
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
    script = "tapes.py"
    return confirm(
        script,
        [
            finding("TFL201", script, "kept-tape", loop="kept-loop"),
            finding("TFL201", script, "fresh-tape", loop="fresh-loop"),
        ],
    )


def test_persistent_tapes_kept_across_iterations_are_confirmed(tapes: ConfirmResult) -> None:
    confirmation = confirmation_of(tapes, "TFL201 at kept-tape")
    assert confirmation.verdict is Verdict.CONFIRMED
    assert dict(confirmation.growth)["live_tapes"] == 1
    assert confirmation.cause == "+1 live GradientTapes per iteration"


def test_tape_dropped_each_step_is_not_reproduced(tapes: ConfirmResult) -> None:
    confirmation = confirmation_of(tapes, "TFL201 at fresh-tape")
    assert confirmation.verdict is Verdict.NOT_REPRODUCED
    assert dict(confirmation.growth)["live_tapes"] == 0
    assert confirmation.summary == (
        "no growth of live GradientTapes over 8 samples after 2 warm-up iterations"
    )
