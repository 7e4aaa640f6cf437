"""Retracing and side-effect findings confirmed by running real TensorFlow in a child."""

from __future__ import annotations

import pytest

from tests.runtime.conftest import by_message, confirm, finding, requires_tensorflow
from tflint_leaks.diagnostics import Diagnostic, Verdict
from tflint_leaks.runtime.confirm import ConfirmResult

pytestmark = [pytest.mark.runtime, requires_tensorflow]


def verdict_of(result: ConfirmResult, message: str) -> Diagnostic:
    diagnostic = by_message(result)[message]
    assert diagnostic.confirmation is not None
    return diagnostic


@pytest.fixture(scope="module")
def python_scalar() -> ConfirmResult:
    script = "python_scalar.py"
    return confirm(
        script,
        [
            finding("TFL101", script, "int-call", tf_function="step-def", loop="int-loop"),
            finding("TFL101", script, "tensor-call", tf_function="step-tensor-def", loop="tensor-loop"),
            finding("TFL101", script, "dead-call", tf_function="step-def", loop="dead-loop"),
        ],
    )


def test_python_int_counter_is_confirmed_and_names_the_argument(python_scalar: ConfirmResult) -> None:
    confirmation = verdict_of(python_scalar, "TFL101 at int-call").confirmation
    assert confirmation is not None
    assert confirmation.verdict is Verdict.CONFIRMED
    assert (confirmation.traces, confirmation.calls) == (10, 10)
    assert confirmation.cause == "argument `i` took 10 distinct Python int values"
    assert confirmation.summary == (
        "`step` traced 10 times in 10 calls: argument `i` took 10 distinct Python int values"
    )
    assert any("triggered tf.function retracing" in line for line in confirmation.evidence)

