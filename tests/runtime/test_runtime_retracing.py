"""Retracing and side-effect findings confirmed by running real TensorFlow in a child."""

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
            finding(
                "TFL101", script, "tensor-call", tf_function="step-tensor-def", loop="tensor-loop"
            ),
            finding("TFL101", script, "dead-call", tf_function="step-def", loop="dead-loop"),
        ],
    )


def test_python_int_counter_is_confirmed_and_names_the_argument(
    python_scalar: ConfirmResult,
) -> None:
    confirmation = verdict_of(python_scalar, "TFL101 at int-call").confirmation
    assert confirmation is not None
    assert confirmation.verdict is Verdict.CONFIRMED
    assert (confirmation.traces, confirmation.calls) == (10, 10)
    assert (
        confirmation.cause == "argument `i` took 10 distinct Python int values: 0, 1, 2, 3, ..., 9"
    )
    assert confirmation.summary == (
        "`step` traced 10 times in 10 calls: argument `i` took 10 distinct Python int values: "
        "0, 1, 2, 3, ..., 9; unbounded: still tracing new graphs at the end of the run "
        "(a new trace at call 10 of 10)"
    )
    assert any("triggered tf.function retracing" in line for line in confirmation.evidence)


def test_tensor_argument_is_not_reproduced(python_scalar: ConfirmResult) -> None:
    confirmation = verdict_of(python_scalar, "TFL101 at tensor-call").confirmation
    assert confirmation is not None
    assert confirmation.verdict is Verdict.NOT_REPRODUCED
    assert (confirmation.traces, confirmation.calls, confirmation.cause) == (1, 10, None)
    assert confirmation.summary == "`step_tensor` traced once in 10 calls"


def test_code_that_never_runs_is_not_executed(python_scalar: ConfirmResult) -> None:
    confirmation = verdict_of(python_scalar, "TFL101 at dead-call").confirmation
    assert confirmation is not None
    assert confirmation.verdict is Verdict.NOT_EXECUTED
    assert confirmation.summary == "the code never ran while the target ran to its end"
    assert python_scalar.run.status == "completed"


@pytest.fixture(scope="module")
def recreated() -> ConfirmResult:
    """The real static pass's findings, plus one it rightly leaves out (a variable baseline)."""
    script = "recreated.py"
    extra = finding(
        "TFL101", script, "variable-call", tf_function="variable-def", loop="recreate-loop"
    )
    return confirm(script, [*static_findings(script), extra])


def test_static_pass_flags_what_the_tests_expect() -> None:
    found = {(d.code, d.start.line) for d in static_findings("recreated.py")}
    expected = [
        ("TFL103", "recreate-def"),
        ("TFL103", "lambda-call"),
        ("TFL102", "object-call"),
        ("TFL104", "method-call"),
    ]
    assert found == {(code, line_of("recreated.py", marker)) for code, marker in expected}


@pytest.mark.parametrize("marker", ["recreate-def", "lambda-call"])
def test_function_created_in_a_loop_is_confirmed(recreated: ConfirmResult, marker: str) -> None:
    confirmation = confirmation_at(recreated, "TFL103", "recreated.py", marker)
    assert confirmation.verdict is Verdict.CONFIRMED
    assert (confirmation.traces, confirmation.calls, confirmation.iterations) == (10, 10, 10)
    line = line_of("recreated.py", marker)
    assert confirmation.cause == (
        f"9 retraces came from new tf.function objects (10 created at recreated.py:{line})"
    )


def test_python_object_argument_is_confirmed(recreated: ConfirmResult) -> None:
    confirmation = confirmation_at(recreated, "TFL102", "recreated.py", "object-call")
    assert confirmation.verdict is Verdict.CONFIRMED
    assert confirmation.cause == (
        "argument `config` took 10 distinct Python objects of type `Config`"
    )


def test_method_on_short_lived_instances_is_confirmed(recreated: ConfirmResult) -> None:
    confirmation = confirmation_at(recreated, "TFL104", "recreated.py", "method-call")
    assert confirmation.verdict is Verdict.CONFIRMED
    assert (confirmation.traces, confirmation.calls) == (10, 10)
    # one Function per instance, created where `forward` is looked up on it
    line = line_of("recreated.py", "method-call")
    assert confirmation.cause == (
        f"9 retraces came from new tf.function objects (10 created at recreated.py:{line})"
    )


def test_variable_creating_function_has_a_baseline_of_one(recreated: ConfirmResult) -> None:
    confirmation = confirmation_at(recreated, "TFL101", "recreated.py", "variable-call")
    assert confirmation.verdict is Verdict.NOT_REPRODUCED
    assert confirmation.summary == "`Counter.__call__` traced once in 10 calls"
    assert confirmation.bounded is None


def test_no_runtime_only_finding_when_the_static_pass_saw_everything(
    recreated: ConfirmResult,
) -> None:
    assert [d for d in recreated.diagnostics if d.code == "TFL900"] == []


@pytest.fixture(scope="module")
def shapes() -> ConfirmResult:
    """The real static pass flags the plain function only; the relaxed one is added by hand."""
    script = "shapes.py"
    relaxed = finding("TFL105", script, "relaxed-call", tf_function="relaxed-def", loop="loop")
    return confirm(script, [*static_findings(script), relaxed])


def test_varying_shapes_are_confirmed(shapes: ConfirmResult) -> None:
    confirmation = confirmation_at(shapes, "TFL105", "shapes.py", "plain-call")
    assert confirmation.verdict is Verdict.CONFIRMED
    assert (confirmation.traces, confirmation.calls) == (10, 10)
    assert confirmation.cause == (
        "argument `x` took 10 distinct shapes: (1,), (2,), (3,), (4,), ..., (10,)"
    )


def test_reduce_retracing_is_not_reproduced(shapes: ConfirmResult) -> None:
    confirmation = confirmation_at(shapes, "TFL105", "shapes.py", "relaxed-call")
    assert confirmation.verdict is Verdict.NOT_REPRODUCED
    assert (confirmation.traces, confirmation.calls) == (2, 10)
    assert confirmation.cause == "argument `x` took 2 distinct shapes: (1,), (None,)"


@pytest.fixture(scope="module")
def side_effect() -> ConfirmResult:
    script = "side_effect.py"
    return confirm(
        script, [finding("TFL301", script, "append", tf_function="append-def", loop="loop")]
    )


def test_outer_list_append_is_confirmed(side_effect: ConfirmResult) -> None:
    confirmation = verdict_of(side_effect, "TFL301 at append").confirmation
    assert confirmation is not None
    assert confirmation.verdict is Verdict.CONFIRMED
    assert confirmation.summary == "this side effect ran once for 10 calls of `train_step`"
    assert confirmation.cause == (
        "the Python body of `train_step` ran on 1 of 10 calls (only while tracing)"
    )


def test_unflagged_retracing_is_a_runtime_finding(side_effect: ConfirmResult) -> None:
    [extra] = [d for d in side_effect.diagnostics if d.code == "TFL900"]
    assert extra.name == "runtime-retracing"
    assert extra.start.line == line_of("side_effect.py", "unflagged-def")
    assert extra.message == (
        "`scale` retraced at run time (10 traces in 10 calls): "
        "argument `factor` took 10 distinct Python float values: 0.0, 1.0, 2.0, 3.0, ..., 9.0"
    )
    assert extra.confirmation is not None
    assert extra.confirmation.verdict is Verdict.CONFIRMED


@pytest.fixture(scope="module")
def frozen_state() -> ConfirmResult:
    """The real static pass's TFL305 findings on ``frozen_state.py``."""
    script = "frozen_state.py"
    return confirm(script, [d for d in static_findings(script) if d.code == "TFL305"])


def test_frozen_state_is_found_at_both_reads(frozen_state: ConfirmResult) -> None:
    found = {d.start.line for d in frozen_state.diagnostics if d.code == "TFL305"}
    assert found == {line_of("frozen_state.py", m) for m in ("frozen-read", "retraced-read")}


def test_a_read_of_state_assigned_after_the_trace_is_confirmed(
    frozen_state: ConfirmResult,
) -> None:
    confirmation = confirmation_at(frozen_state, "TFL305", "frozen_state.py", "frozen-read")
    assert confirmation.verdict is Verdict.CONFIRMED
    assert (confirmation.traces, confirmation.calls) == (1, 10)
    assert confirmation.summary == (
        "the state was read on 1 of 10 calls of `Scaler.__call__`: the other calls used the value "
        "read while tracing"
    )
    assert confirmation.cause == (
        "the Python body of `Scaler.__call__` ran on 1 of 10 calls (only while tracing)"
    )


def test_a_read_in_a_function_that_traces_on_every_call_is_not_reproduced(
    frozen_state: ConfirmResult,
) -> None:
    """Each new input shape traces again, and each trace reads the current value."""
    confirmation = confirmation_at(frozen_state, "TFL305", "frozen_state.py", "retraced-read")
    assert confirmation.verdict is Verdict.NOT_REPRODUCED
    assert (confirmation.traces, confirmation.calls) == (10, 10)
    assert confirmation.summary == (
        "`shift` traced on each of its 10 calls: each trace read the current value"
    )
