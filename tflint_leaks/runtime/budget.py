"""The ``tf_budget`` fixture of the pytest plugin (``tflint_leaks.runtime.plugin``): a fixed
leak stays fixed because a test fails when it comes back.

``tf_budget.traces(fn, at_most=N)`` fails the test when ``fn`` traced more than N distinct
graphs inside the block, saying what changed between the traces (as ``tflint-leaks confirm``
does), the values seen, the call sites and the rule. ``tf_budget.iterations(n, warmup=k)``
yields ``n`` times (or the items of an iterable) and fails when, after the warm-up, a counter
the runtime mode measures grows per iteration beyond its limit. TensorFlow is imported and
instrumented (the hooks of the ``confirm`` child, in this process) on the first use of the
fixture, once per process. ``docs/budget.md`` documents the API, the defaults, the noise and
every failure message.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterable, Iterator, Sized
from itertools import pairwise
from typing import Any, TypeVar

import pytest

from tflint_leaks.registry import BY_CODE
from tflint_leaks.runtime import child, protocol, verdicts
from tflint_leaks.runtime.observations import (
    CodeKey,
    Observations,
    Sample,
    Site,
    Trace,
    apply_lines,
)
from tflint_leaks.runtime.places import Sources, place_name
from tflint_leaks.runtime.series import CHART_TITLES

T = TypeVar("T")

#: Device memory in use (``tf.config.experimental.get_memory_info("GPU:0")["current"]``), in
#: MB: sampled only when TensorFlow sees a GPU.
DEVICE_MB = "device_mb"
LABELS = {**CHART_TITLES, DEVICE_MB: "device memory (GPU:0, MB)"}
#: ``iterations`` needs this many measured iterations after the warm-up: the growth thresholds
#: of the runtime mode (at least 4 steps after the warm-up sample).
MIN_MEASURED = verdicts.MIN_GROWTH_STEPS


class Sink:
    """Where the recorder's records go: every block listening gets each of them; the
    ``degraded`` ones (a private TensorFlow name missing) are kept."""

    def __init__(self) -> None:
        self.listeners: list[Observations] = []
        self.degraded: list[str] = []

    def write(self, kind: str, **fields: Any) -> None:
        if kind == protocol.RECORD_DEGRADED:
            self.degraded.append(str(fields.get("what")))
        if self.listeners:
            line = protocol.encode({"k": kind, **fields})
            for observations in self.listeners:
                apply_lines(observations, line)

    @contextlib.contextmanager
    def listening(self, observations: Observations) -> Iterator[None]:
        self.listeners.append(observations)
        try:
            yield
        finally:
            self.listeners.remove(observations)


class Instruments:
    """TensorFlow with the ``confirm`` child's hooks and counters, installed once per process.

    Calls are attributed to the innermost frame under ``root`` (the pytest root directory)
    outside Python, the installed packages and tflint-leaks: a line of a test or of the
    project it tests."""

    def __init__(self, root: str) -> None:
        import tensorflow as tf

        self.sink = Sink()
        self.recorder = child.Recorder(self.sink, child.UserFiles([root]))
        child.install_hooks(self.recorder, plugin=True)
        self.gpu = bool(tf.config.list_physical_devices("GPU"))

    def sample(self) -> dict[str, float | None]:
        """Every counter the runtime mode samples (after ``gc.collect()``), and the device
        memory when there is a GPU."""
        gc.collect()
        counters: dict[str, float | None] = {}
        for _, read in self.recorder.counters:
            counters.update(read())
        if self.gpu:
            counters[DEVICE_MB] = device_mb()
        return counters

    def calls(self, key: CodeKey) -> dict[Site, int]:
        """Calls of the code object ``key`` so far, per call site."""
        return {
            site: count
            for (called, site), count in self.recorder.site_calls.items()
            if called == key and site is not None
        }


def device_mb() -> float:
    import tensorflow as tf

    current: int = tf.config.experimental.get_memory_info("GPU:0")["current"]
    return round(current / 2**20, 3)


_INSTRUMENTS: dict[str, Instruments] = {}


def instruments(root: str) -> Instruments:
    """The process's instruments (installed on first use; ``root`` is only read then)."""
    if not _INSTRUMENTS:
        _INSTRUMENTS["process"] = Instruments(root)
    return _INSTRUMENTS["process"]


def _is_method(key: CodeKey) -> bool:
    return "." in key[2].rsplit("<locals>.", 1)[-1]


def rule_of(key: CodeKey, traces: list[Trace]) -> str | None:
    """The rule whose pattern made these traces, read from what changed between them: new
    ``tf.function`` objects (TFL103, or TFL104 for a method: new instances), a Python number
    (TFL101), a tensor's shape or dtype (TFL105), any other Python value (TFL102)."""
    change = verdicts.retrace_change(traces)
    if change is None:
        return None
    if change.parameter is None:
        return "TFL104" if _is_method(key) else "TFL103"
    params = [param for trace in traces if (param := trace.param(change.parameter))]
    if all(param.kind == "Literal" and param.type in ("int", "float") for param in params):
        return "TFL101"
    if all(param.kind == "TensorSpec" for param in params):
        return "TFL105"
    return "TFL102"


class TFBudget:
    """The ``tf_budget`` fixture: retracing and leak budgets for one test."""

    def __init__(self, instruments: Instruments) -> None:
        self._instruments = instruments
        self._show = Sources().show
        #: The samples of the last ``iterations`` loop that ended: ``(iterations completed,
        #: counters)``, the first one at the end of the warm-up.
        self.samples: list[tuple[int, dict[str, float | None]]] = []

    # -- traces --------------------------------------------------------------------------------

    @contextlib.contextmanager
    def traces(self, fn: Any, at_most: int = 1) -> Iterator[None]:
        """Fail the test when ``fn`` (a ``tf.function``, or a bound ``tf.function`` method)
        traced more than ``at_most`` distinct graphs inside the block.

        Every ``tf.function`` object made from ``fn``'s Python function counts (a bound method
        on another instance, the function wrapped again by ``tf.function``): each of their
        traces is a graph TensorFlow keeps. A function that creates variables traces twice on
        its first call with the same signature; that counts once.
        """
        found = child.code_key(getattr(fn, "_python_function", None))
        if found is None:
            raise TypeError(
                f"tf_budget.traces() takes a tf.function or a bound tf.function method, not {fn!r}"
            )
        missing = [what for what in self._instruments.sink.degraded if "tracing" in what]
        if missing:
            pytest.fail(
                f"tf_budget.traces() cannot count traces in this TensorFlow release: "
                f"{', '.join(missing)} is missing",
                pytrace=False,
            )
        key = found[0]
        observations = Observations()
        before = self._instruments.calls(key)
        with self._instruments.sink.listening(observations):
            yield
        stats = observations.code.get(key)
        traces = stats.traces if stats is not None else []
        if len({(trace.serial, trace.signature()) for trace in traces}) <= at_most:
            return
        after = self._instruments.calls(key)
        calls = {
            site: n - before.get(site, 0) for site, n in after.items() if n > before.get(site, 0)
        }
        pytest.fail(self._traced(key, traces, calls, at_most, observations), pytrace=False)

    def _traced(
        self,
        key: CodeKey,
        traces: list[Trace],
        calls: dict[Site, int],
        at_most: int,
        observations: Observations,
    ) -> str:
        context = verdicts.Context(observations, verdicts.RunEnding(True, ""), at_most, self._show)
        cause = verdicts.retrace_cause(traces, context)
        distinct = len({(trace.serial, trace.signature()) for trace in traces})
        counted = (
            f"`{key[2]}` traced {distinct} times in {sum(calls.values())} calls inside "
            f"tf_budget.traces(at_most={at_most})"
        )
        lines = [f"{counted}: {cause}" if cause else counted]
        sites = []
        for site, count in sorted(calls.items()):
            made = len({(t.serial, t.signature()) for t in traces if t.site == site})
            sites.append(f"{place_name(self._show(*site))} ({count} calls, {made} traces)")
        if sites:
            lines.append(f"call sites: {', '.join(sites)}")
        code = BY_CODE.get(rule_of(key, traces) or "")
        if code is not None:
            lines.append(f"{code.code} {code.name}: {code.summary}; see {code.url}")
        return "\n".join(lines)

    # -- iterations ----------------------------------------------------------------------------

    def iterations(
        self,
        n: int | Iterable[T],
        warmup: int = 5,
        *,
        live_tensors: float | None = 0,
        live_graphs: float | None = 0,
        graph_functions: float | None = 0,
        traces: float | None = 0,
        live_tapes: float | None = 0,
        tape_tensors: float | None = 0,
        keras_names: float | None = 0,
        graph_nodes: float | None = 0,
        tensor_mb: float | None = None,
        tape_mb: float | None = None,
        rss_mb: float | None = None,
        device_mb: float | None = None,
    ) -> Iterator[int] | Iterator[T]:
        """Yield ``n`` times (``0`` to ``n - 1``), or each item of the iterable ``n``, and fail
        the test when, after ``warmup`` iterations, a counter grows per iteration beyond its
        limit (the keyword of the same name; None: not checked). The defaults allow no growth
        of live tensors, graphs, traces, tapes and Keras names beyond noise, and check no size
        in MB. A loop left early (``break``, an exception) is not judged."""
        limits = {
            protocol.COUNTER_LIVE_TENSORS: live_tensors,
            protocol.COUNTER_LIVE_GRAPHS: live_graphs,
            protocol.COUNTER_GRAPH_FUNCTIONS: graph_functions,
            protocol.COUNTER_TRACES: traces,
            protocol.COUNTER_LIVE_TAPES: live_tapes,
            protocol.COUNTER_TAPE_TENSORS: tape_tensors,
            protocol.COUNTER_KERAS_NAMES: keras_names,
            protocol.COUNTER_GRAPH_NODES: graph_nodes,
            protocol.COUNTER_TENSOR_MB: tensor_mb,
            protocol.COUNTER_TAPE_MB: tape_mb,
            protocol.COUNTER_RSS_MB: rss_mb,
            DEVICE_MB: device_mb,
        }
        total = n if isinstance(n, int) else len(n) if isinstance(n, Sized) else None
        called = f"tf_budget.iterations({n if isinstance(n, int) else '...'}, warmup={warmup})"
        if warmup < 0:
            raise ValueError(f"{called}: warmup must be 0 or more")
        if total is not None:
            _enough(called, total - warmup)
        items: Iterable[Any] = range(n) if isinstance(n, int) else n
        return self._iterate(items, warmup, limits, called)

    def _iterate(
        self, items: Iterable[Any], warmup: int, limits: dict[str, float | None], called: str
    ) -> Iterator[Any]:
        samples: list[Sample] = []
        done = 0
        for item in items:
            if done == warmup or (done > warmup and protocol.scheduled(done - warmup)):
                samples.append(Sample(done, self._instruments.sample()))
            yield item
            done += 1
        _enough(called, done - warmup)
        if samples[-1].hit != done:
            samples.append(Sample(done, self._instruments.sample()))
        self.samples = [(sample.hit, sample.counters) for sample in samples]
        failures = [
            failure
            for counter, limit in limits.items()
            if limit is not None and (failure := _grew(samples, counter, limit))
        ]
        if failures:
            if self._instruments.gpu and limits[DEVICE_MB] is None:
                failures.append(f"{LABELS[DEVICE_MB]}: {_listed(samples, DEVICE_MB)}")
            pytest.fail("\n".join([f"{called}:", *failures]), pytrace=False)


def _enough(called: str, measured: int) -> None:
    if measured < MIN_MEASURED:
        raise ValueError(
            f"{called} measures {measured} iterations after the warm-up; growth needs at "
            f"least {MIN_MEASURED}"
        )


def _listed(samples: list[Sample], counter: str) -> str:
    return ", ".join(
        f"{sample.hit}: {value:g}"
        for sample in samples
        if (value := sample.counters.get(counter)) is not None
    )


def _grew(samples: list[Sample], counter: str, limit: float) -> str | None:
    """How ``counter`` grew beyond ``limit`` per iteration, or None when it did not.

    It grew when its fitted (least-squares) growth per iteration is above the limit, it rose
    on at least half of the sampled steps (a counter that rose once, a cache filled lazily,
    does not), and its net rise is larger than its noise: the largest fall between two
    consecutive samples (a counter that only goes up has none)."""
    values = [(s.hit, v) for s in samples if (v := s.counters.get(counter)) is not None]
    if len(values) < 2:
        return None
    slope, _ = verdicts.fit_line(values)
    _, rose = verdicts.counter_growth(values)
    noise = max([0.0, *(a - b for (_, a), (_, b) in pairwise(values))])
    net = values[-1][1] - values[0][1]
    if slope <= limit or rose < verdicts.MIN_RISE_FRACTION or net <= noise:
        return None
    steps = len(values) - 1
    return (
        f"{LABELS[counter]} grew {slope:+.3g} per iteration (limit {limit:g}; fitted over "
        f"iterations {values[0][0]} to {values[-1][0]}, rose on {round(rose * steps)} of {steps} "
        f"steps, noise {noise:g})\n"
        f"  samples (iterations completed: {LABELS[counter]}): {_listed(samples, counter)}"
    )
