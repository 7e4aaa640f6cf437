"""Large persistent tensors (TFL501, TFL502) and graphs that grow in graph mode (TFL503), on the
real static findings of each target, with real TensorFlow."""

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
from tflint_leaks.diagnostics import Verdict
from tflint_leaks.runtime.confirm import ConfirmResult

pytestmark = [pytest.mark.runtime, requires_tensorflow]


@pytest.fixture(scope="module")
def captured() -> ConfirmResult:
    """The issue's 100 MB NumPy array read by a tf.function traced for three input shapes."""
    script = "captured.py"
    return confirm(script, static_findings(script), timeout=600)


def test_captured_100_mb_array_is_confirmed_with_its_size_per_trace(
    captured: ConfirmResult,
) -> None:
    confirmation = confirmation_at(captured, "TFL501", "captured.py", "big-read")
    assert confirmation.verdict is Verdict.CONFIRMED
    assert (confirmation.traces, confirmation.calls) == (3, 3)
    # `tf.reduce_sum` converts the array twice (for its `Rank` and for `Sum`): two 100 MB
    # constants in every trace's graph
    assert confirmation.summary == (
        "`f` traced 3 times; each trace holds up to 190.7 MB of graph constants (the largest "
        "100,000,000 bytes): 572.2 MB of constants kept alive by its 3 graphs"
    )
    assert confirmation.cause == (
        "a 95.4 MB constant (100,000,000 bytes) copied into each trace's graph"
    )
    assert confirmation.evidence[0] == "graph constants per trace: 190.7 MB, 190.7 MB, 190.7 MB"
    growth = dict(confirmation.growth)
    assert growth["constant_mb_per_trace"] == 190.735
    # supporting only: each trace takes at least the memory of its constants
    assert growth["rss_mb_per_trace"] >= 190


def test_small_captured_array_is_not_reproduced(captured: ConfirmResult) -> None:
    confirmation = confirmation_at(captured, "TFL501", "captured.py", "small-read")
    assert confirmation.verdict is Verdict.NOT_REPRODUCED
    assert confirmation.summary == (
        "`g` traced 3 times; each trace holds up to 0.0 MB of graph constants (the largest "
        "400 bytes): no constant reaches 0.2 MB"
    )


@pytest.fixture(scope="module")
def step_tensors() -> ConfirmResult:
    """The real static finding (gradients kept every step), and the loop that keeps only
    numbers, flagged by hand."""
    script = "step_tensors.py"
    numbers = finding("TFL502", script, "norm-append", loop="norm-loop")
    return confirm(script, [*static_findings(script), numbers])


def test_gradients_kept_every_step_are_confirmed(step_tensors: ConfirmResult) -> None:
    confirmation = confirmation_at(step_tensors, "TFL502", "step_tensors.py", "kept-append")
    assert confirmation.verdict is Verdict.CONFIRMED
    growth = dict(confirmation.growth)
    # one gradient per trainable variable (two kernels, two biases)
    assert (growth["live_tensors"], growth["tensor_mb"]) == (4, 0.002)
    assert confirmation.summary == (
        "+4 live eager tensors per iteration (+0.002 MB) over 11 samples after 2 warm-up iterations"
    )
    assert confirmation.iterations == 12


def test_numbers_kept_every_step_are_not_reproduced(step_tensors: ConfirmResult) -> None:
    confirmation = by_message(step_tensors)["TFL502 at norm-append"].confirmation
    assert confirmation is not None
    assert confirmation.verdict is Verdict.NOT_REPRODUCED
    assert dict(confirmation.growth)["live_tensors"] == 0
    assert confirmation.summary == (
        "no growth of live eager tensors over 11 samples after 2 warm-up iterations"
    )


@pytest.fixture(scope="module")
def session_loop() -> ConfirmResult:
    """The real static finding (ops built inside `sess.run` every iteration), and the loop that
    runs ops built once, flagged by hand."""
    script = "session_loop.py"
    prebuilt = finding("TFL503", script, "prebuilt-run", loop="prebuilt-loop")
    return confirm(script, [*static_findings(script), prebuilt])


def test_ops_built_in_a_session_loop_are_confirmed(session_loop: ConfirmResult) -> None:
    confirmation = confirmation_at(session_loop, "TFL503", "session_loop.py", "built-op")
    assert confirmation.verdict is Verdict.CONFIRMED
    # `tf.round` and `tf.sigmoid`: two nodes per evaluated sample
    assert dict(confirmation.growth)["graph_nodes"] == 2
    assert confirmation.summary == (
        "+2 nodes in the default graph per iteration over 11 samples after 2 warm-up iterations"
    )
    assert confirmation.iterations == 12


def test_prebuilt_ops_run_in_a_session_loop_are_not_reproduced(
    session_loop: ConfirmResult,
) -> None:
    confirmation = by_message(session_loop)["TFL503 at prebuilt-run"].confirmation
    assert confirmation is not None
    assert confirmation.verdict is Verdict.NOT_REPRODUCED
    assert dict(confirmation.growth)["graph_nodes"] == 0
    assert confirmation.summary == (
        "no growth of nodes in the default graph over 11 samples after 2 warm-up iterations"
    )
