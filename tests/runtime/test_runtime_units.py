"""The parent side without TensorFlow: the install hint, the results format, verdict thresholds."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from dataclasses import replace
from typing import Any

import pytest

from tflint_leaks.diagnostics import (
    CallSite,
    Diagnostic,
    Location,
    Related,
    RelatedRole,
    Severity,
    Verdict,
)
from tflint_leaks.runtime import INSTALL_HINT, protocol, tensorflow_available
from tflint_leaks.runtime.confirm import Target, child_config
from tflint_leaks.runtime.observations import (
    CodeStats,
    Observations,
    Param,
    Sample,
    TapeKeptRun,
    Trace,
    read_observations,
)
from tflint_leaks.runtime.places import Place, Sources, Span
from tflint_leaks.runtime.verdicts import Context, Retraces, RunEnding, judge, measure_retracing

FILE = "/project/train.py"
KEY = (FILE, 10, "step")


def test_without_tensorflow_confirm_explains_how_to_install(monkeypatch: Any) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert tensorflow_available() is False
    assert "install the runtime extra (`pip install '.[runtime]'`" in INSTALL_HINT


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


def context(observations: Observations, normal: bool = True) -> Context:
    ending = RunEnding(normal, "ran to its end" if normal else "timed out after 5 s")
    return Context(observations, ending, 5, lambda file, line: CallSite(file, line, 0, 0))


def literal(value: int) -> Param:
    return Param("i", "Literal", f"Literal[{value}]", type="int", value=str(value))


def retraces(values: list[int], calls: int) -> Retraces:
    """A call site whose ``i`` took ``values`` (one trace each, on consecutive calls), then
    ``calls`` calls in all."""
    made = [
        Trace(KEY, 12, 1, True, (literal(value),), (FILE, 20), call, call)
        for call, value in enumerate(values, 1)
    ]
    return Retraces(CodeStats(KEY, 12, made, calls, 1), made, calls, parameter="i")


@pytest.mark.parametrize(
    ("values", "calls", "verdict", "bounded"),
    [
        # more distinct values than max-python-values (5): confirmed, however many calls
        ([0, 1, 2, 3, 4, 5], 6, Verdict.CONFIRMED, False),  # the last call traced: growing
        ([0, 1, 2, 3, 4, 5], 11, Verdict.CONFIRMED, False),  # 5 calls after: not a full cycle
        ([0, 1, 2, 3, 4, 5], 12, Verdict.CONFIRMED, True),  # 6 calls after with no new trace
        ([0, 1, 2, 3, 4, 5], 1_000_000, Verdict.CONFIRMED, True),
        ([0, 1, 2, 3, 4], 5, Verdict.NOT_REPRODUCED, None),
        ([0, 1, 2, 3, 4], 1_000_000, Verdict.NOT_REPRODUCED, None),
        ([0], 100, Verdict.NOT_REPRODUCED, None),
    ],
)
def test_retracing_verdict_depends_on_distinct_values_not_on_calls(
    values: list[int], calls: int, verdict: Verdict, bounded: bool | None
) -> None:
    confirmation = measure_retracing(retraces(values, calls), context(Observations()))
    assert (confirmation.verdict, confirmation.bounded) == (verdict, bounded)
    assert confirmation.traces == len(values)


def test_a_finding_whose_line_made_no_call_is_judged_on_every_call() -> None:
    """Calls seen from no user line (a site the child could not attribute) still count."""
    values = list(range(6))
    made = [
        Trace(KEY, 12, 1, True, (literal(value),), None, 0, call)
        for call, value in enumerate(values, 1)
    ]
    observations = Observations()
    observations.code[KEY] = CodeStats(KEY, 12, made, 6, 1)
    observations.hits = {(FILE, 20): 6}
    definition = Location(KEY[1], 1)
    related = Related(RelatedRole.TF_FUNCTION, "", FILE, definition, definition)
    call = replace(finding("TFL101", 20), related=(related,))
    confirmation = judge(call, place(call), context(observations))
    assert confirmation.verdict is Verdict.CONFIRMED
    assert confirmation.summary.startswith(
        "`step` traced 6 times in 6 calls (no call came from the finding's line: every call "
        "site counted): "
    )


def finding(code: str, line: int, loop: int | None = None) -> Diagnostic:
    location = Location(loop or 1, 1)
    related = (Related(RelatedRole.LOOP, "", FILE, location, location),) if loop else ()
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


def place(diagnostic: Diagnostic) -> Place:
    return Sources().place(diagnostic)


def test_code_never_reached_is_not_executed_only_after_a_normal_end() -> None:
    observations = Observations()
    never = finding("TFL101", 20, 19)
    normal = judge(never, place(never), context(observations))
    stopped = judge(never, place(never), context(observations, normal=False))
    assert normal.verdict is Verdict.NOT_EXECUTED
    assert stopped.verdict is Verdict.ERROR
    assert stopped.summary == "the run timed out after 5 s before this code ran"


def growth_observations(counter: str, values: list[float]) -> Observations:
    observations = Observations()
    observations.hits = {(FILE, 19): len(values), (FILE, 20): len(values)}
    observations.samples[(FILE, 19)] = [
        Sample(hit, {counter: value}) for hit, value in enumerate(values, 1)
    ]
    return observations


@pytest.mark.parametrize(
    ("values", "verdict"),
    [
        ([1, 2, 3, 4, 5, 6, 7, 8], Verdict.CONFIRMED),
        ([1, 1, 1, 1, 1, 1, 1, 1], Verdict.NOT_REPRODUCED),
        ([1, 2, 1, 2, 1, 2, 1, 2], Verdict.NOT_REPRODUCED),
        ([1, 2, 3, 4, 5, 6], Verdict.NOT_REPRODUCED),  # too few samples after warm-up
        # grew for 5 steps, then stopped: a longer run adds flat samples, not another verdict
        ([1, 2, 3, 4, 5, 6, 7, 8, *[8] * 40], Verdict.CONFIRMED),
        ([1, 2, 3, 4, 5, 6, *[6] * 40], Verdict.NOT_REPRODUCED),  # 3 steps of growth only
    ],
)
def test_growth_thresholds(values: list[float], verdict: Verdict) -> None:
    tape = finding("TFL203", 20, 19)
    observations = growth_observations(protocol.COUNTER_TAPE_TENSORS, values)
    confirmation = judge(tape, place(tape), context(observations))
    assert confirmation.verdict is verdict
    if verdict is Verdict.CONFIRMED:
        assert confirmation.bounded is (values[-1] == values[-2])


STEADY = [600.0 + 2.0 * hit for hit in range(1, 13)]


@pytest.mark.parametrize(
    ("rss", "noise", "verdict"),
    [
        (STEADY, 0.3, Verdict.CONFIRMED),  # +2 MB every iteration: 18 MB over 9, noise 0.3
        (STEADY, 2.0, Verdict.NOT_REPRODUCED),  # 18 MB is not 10 times the noise
        ([600.0 + (5.0 if hit % 2 else 0.0) for hit in range(1, 13)], 0.3, Verdict.NOT_REPRODUCED),
        (STEADY[:9], 0.3, Verdict.NOT_REPRODUCED),  # 7 samples after warm-up: too few for a fit
    ],
)
def test_tape_findings_fall_back_to_a_memory_slope(
    rss: list[float], noise: float, verdict: Verdict
) -> None:
    """Without the tensors held by tapes (a TensorFlow release without ``EagerTensor``)."""
    tape = finding("TFL203", 20, 19)
    observations = growth_observations(protocol.COUNTER_RSS_MB, rss)
    observations.rss_noise_mb = noise
    confirmation = judge(tape, place(tape), context(observations))
    assert confirmation.verdict is verdict
    assert confirmation.summary.startswith("memory-based: ")


def test_constants_belong_to_the_latest_trace_of_their_code_object() -> None:
    def trace(line: int) -> str:
        return protocol.encode(
            {"k": protocol.RECORD_TRACE, "key": KEY, "last": line, "params": [], "user": True}
        )

    def constants(size: int, rss: float | None) -> str:
        return protocol.encode(
            {
                "k": protocol.RECORD_CONSTANTS,
                "key": KEY,
                "bytes": size,
                "largest": size,
                "rss_mb": rss,
            }
        )

    observations = read_observations(
        trace(12) + constants(400, 0.0) + trace(12) + constants(2**20, None)
    )
    first, second = observations.code[KEY].traces
    assert (first.constant_bytes, first.rss_mb) == (400, 0.0)
    assert (second.constant_bytes, second.largest_constant, second.rss_mb) == (2**20, 2**20, None)


@pytest.mark.parametrize(
    ("sizes", "verdict"),
    [
        ([2**18, 2**18], Verdict.CONFIRMED),  # 256 KiB: the static rule's 65,536 float32 elements
        ([2**18 - 4], Verdict.NOT_REPRODUCED),
        ([], Verdict.NOT_EXECUTED),  # the function never traced
    ],
)
def test_constant_threshold(sizes: list[int], verdict: Verdict) -> None:
    captured = finding("TFL501", 11)
    observations = Observations()
    observations.code[KEY] = CodeStats(
        KEY,
        12,
        [replace(Trace(KEY, 12, 1, True, ()), constant_bytes=s, largest_constant=s) for s in sizes],
        len(sizes),
        1,
    )
    confirmation = judge(captured, place(captured), context(observations))
    assert confirmation.verdict is verdict


SPANS = """\
import contextlib

for step in range(
    10
):
    @contextlib.contextmanager
    def managed():
        yield

    with contextlib.nullcontext() as c:
        value = [c for _ in range(3)]
"""


def test_statement_spans_split_head_body_and_whole(tmp_path: Any) -> None:
    path = tmp_path / "spans.py"
    path.write_text(SPANS)
    sources = Sources()
    # a multi-line loop header; its body starts at the decorator of its first statement
    assert sources.statement(str(path), 3) == Span((3, 5), (3, 11), (6, 11), loop=True)
    # a decorated definition starts at its decorator
    assert sources.statement(str(path), 6) == Span((6, 7), (6, 8), (8, 8))
    # a `with` line: its head alone, and the whole statement it runs again on exit from
    assert sources.statement(str(path), 10) == Span((10, 10), (10, 11), (11, 11))
    assert sources.statement(str(path), 11) == Span((11, 11), (11, 11))
    # no statement starts on a blank line
    assert sources.statement(str(path), 9) == Span.line(9)


def kept_run(run: int, held: float) -> TapeKeptRun:
    return TapeKeptRun(run, (1.0, 0.01), (1.0 + held, 0.01 + held / 100), (21,), None, "step")


@pytest.mark.parametrize(
    ("held", "verdict"),
    [
        ([6, 6, 6, 6], Verdict.CONFIRMED),
        ([6, 6, 0, 0], Verdict.CONFIRMED),  # held at half of the measured runs
        ([6, 0, 0, 0], Verdict.NOT_REPRODUCED),  # a one-off
        ([0, 0, 0, 0], Verdict.NOT_REPRODUCED),
    ],
)
def test_tape_kept_after_its_last_use_threshold(held: list[float], verdict: Verdict) -> None:
    tape = replace(
        finding("TFL201", 20),
        related=(Related(RelatedRole.TAPE, "", FILE, Location(21, 1), Location(21, 1)),),
    )
    observations = Observations()
    observations.hits = {(FILE, 20): 40}
    observations.tape_kept[(FILE, 20)] = [kept_run(n, h) for n, h in enumerate(held, 1)]
    confirmation = judge(tape, place(tape), context(observations))
    assert confirmation.verdict is verdict
    assert confirmation.iterations == 40
    assert dict(confirmation.growth)["tape_tensors_kept"] == max(held)


def test_the_child_watches_the_statements_and_probes_of_tape_findings(tmp_path: Any) -> None:
    path = tmp_path / "step.py"
    path.write_text(
        "def step(x):\n"
        "    with tf.GradientTape(persistent=True) as tape:\n"
        "        y = x * x\n"
        "        g = tape.gradient(y, x)\n"
        "    apply(g)\n"
    )
    file = str(path)
    work = Location(5, 5)
    kept = Diagnostic(
        "TFL201",
        "",
        "",
        Severity.WARNING,
        file,
        Location(2, 10),
        Location(2, 10),
        None,
        (Related(RelatedRole.TAPE, "", file, work, work),),
    )
    recorded = Diagnostic(
        "TFL202", "", "", Severity.WARNING, file, Location(4, 13), Location(4, 13)
    )
    target = Target(kind="script", path=file)
    sources = Sources()
    config = child_config(target, [(d, sources.place(d)) for d in (kept, recorded)], None)
    assert config["sites"] == [
        {
            "file": file,
            "line": 2,
            "level": 0,
            "loop": False,
            "head": [2, 2],
            "whole": [2, 4],
            "body": [3, 4],
        },
        {
            "file": file,
            "line": 4,
            "level": 0,
            "loop": False,
            "head": [4, 4],
            "whole": [4, 4],
            "body": None,
        },
        {
            "file": file,
            "line": 5,
            "level": 0,
            "loop": False,
            "head": [5, 5],
            "whole": [5, 5],
            "body": None,
        },
    ]
    assert config["probes"] == [
        {"kind": "tape-kept", "file": file, "line": 2, "alive": 5},
        {"kind": "tape-records", "file": file, "line": 4},
    ]
