"""Retracing judged on what the finding's own call site measured, whatever the number of calls."""

from __future__ import annotations

import pytest

from tests.runtime.conftest import (
    confirm,
    confirmation_at,
    line_of,
    requires_tensorflow,
    static_findings,
    target_path,
)
from tflint_leaks.diagnostics import CallSite, Verdict
from tflint_leaks.runtime.confirm import ConfirmResult

pytestmark = [pytest.mark.runtime, requires_tensorflow]

SCRIPT = "sites.py"


@pytest.fixture(scope="module")
def sites() -> ConfirmResult:
    return confirm(SCRIPT, static_findings(SCRIPT))


def test_counter_modulo_40_is_confirmed_and_bounded_at_40(sites: ConfirmResult) -> None:
    confirmation = confirmation_at(sites, "TFL101", SCRIPT, "modulo-call")
    assert confirmation.verdict is Verdict.CONFIRMED
    assert (confirmation.traces, confirmation.calls, confirmation.bounded) == (40, 2000, True)
    assert confirmation.values == tuple(str(value) for value in range(40))
    assert confirmation.summary == (
        "`bump` traced 40 times in 2000 calls: argument `i` took 40 distinct Python int values: "
        "0, 1, 2, 3, ..., 39; bounded: no new trace in the last 1960 calls "
        "(40 graphs kept alive)"
    )


def test_epochs_times_steps_is_confirmed_and_bounded(sites: ConfirmResult) -> None:
    confirmation = confirmation_at(sites, "TFL101", SCRIPT, "steps-call")
    assert confirmation.verdict is Verdict.CONFIRMED
    assert (confirmation.traces, confirmation.calls, confirmation.bounded) == (20, 60, True)
    assert confirmation.summary.endswith(
        "; bounded: no new trace in the last 40 calls (20 graphs kept alive)"
    )


def test_counter_that_never_repeats_is_unbounded(sites: ConfirmResult) -> None:
    confirmation = confirmation_at(sites, "TFL101", SCRIPT, "grow-call")
    assert confirmation.verdict is Verdict.CONFIRMED
    assert (confirmation.traces, confirmation.calls, confirmation.bounded) == (30, 30, False)
    assert confirmation.summary == (
        "`grow` traced 30 times in 30 calls: argument `n` took 30 distinct Python int values: "
        "0, 1, 2, 3, ..., 29; unbounded: still tracing new graphs at the end of the run "
        "(a new trace at call 30 of 30)"
    )


def test_each_call_site_is_judged_on_its_own_calls(sites: ConfirmResult) -> None:
    retracing = confirmation_at(sites, "TFL101", SCRIPT, "shared-retracing")
    parity = confirmation_at(sites, "TFL101", SCRIPT, "shared-parity")
    assert retracing.verdict is Verdict.CONFIRMED
    # the parity site traced 0 and 1 first: the retracing site's own calls traced 2 to 11
    assert (retracing.traces, retracing.calls, retracing.bounded) == (10, 12, False)
    assert retracing.values == tuple(str(value) for value in range(2, 12))
    assert parity.verdict is Verdict.NOT_REPRODUCED
    assert (parity.traces, parity.calls, parity.bounded) == (2, 12, None)
    assert parity.summary == (
        "`shared` traced 2 times in 12 calls: argument `k` took 2 distinct Python int values: 0, 1 "
        "(the rule accepts at most 5: max-python-values)"
    )
    path = target_path(SCRIPT)
    lines = [line_of(SCRIPT, marker) for marker in ("shared-parity", "shared-retracing")]
    assert parity.sites == (
        CallSite(path, lines[0], calls=12, traces=2),
        CallSite(path, lines[1], calls=12, traces=10),
    )
    assert retracing.sites == tuple(reversed(parity.sites))
    assert [d for d in sites.diagnostics if d.code == "TFL900"] == []
