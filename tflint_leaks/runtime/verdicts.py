"""Turn observations into a verdict per finding, decided by what was measured about the finding.

Never by how long the target ran: a run that lasts ten times longer must not change a verdict
unless it measured something new about the finding. Every threshold is in ``docs/runtime.md``
with its reason.

Retracing findings (``TFL101``-``TFL105``) are judged on the calls made at the finding's call site
(the user line that called the ``tf.function``) and the traces those calls made: ``confirmed``
when the flagged argument took more distinct values in traces than ``max-python-values`` (the
static rules accept at most that many: a bounded sweep), however many calls there were. A
re-created ``tf.function`` (judgement ``new-functions``: ``TFL103``) or a method on new instances
(``new-instances``: ``TFL104``) counts the new ``tf.function`` objects that traced. The summary
says whether the traces were still growing at the end of the run or stopped (bounded) and the
values seen.

Python side effects in a ``tf.function`` (``TFL301``-``TFL304``) are confirmed when the function
was called at least twice: its Python body (and so the side effect) then ran on fewer calls than
it was called, or ran on every call with symbolic tensors because the function retraced. A read
of Python state frozen at trace time (``TFL305``, judgement ``frozen-read``) is confirmed when
the body ran on fewer calls than the function was called (the other calls used the value read
while tracing); a function that traced on every call read the current value each time.

A NumPy array captured by a ``tf.function`` (``TFL501``, judgement ``constants``) is judged on
the bytes of the constants in each trace of the function it is in.

Tape findings are judged by what each claims: ``TFL201`` by what its persistent tape still holds
when the work after its last use starts, per run of the statement that creates it; ``TFL202``
by what a recording tape adds while the flagged statement runs; ``TFL204`` by what tapes from
earlier iterations hold at the loop header. Every other finding (a tape around a loop
``TFL203``, models, ``predict``, datasets ``TFL4xx``, per-step tensors ``TFL502``, graph-mode
ops ``TFL503``) is judged on the growth of counters sampled where its loop header (or, with no
loop, its own line) runs.

A finding whose code never ran is ``not-executed`` when the target finished on its own, and
``error`` when the run stopped early (timeout, crash, memory limit): it might have run later.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import NamedTuple, TypeVar

from tflint_leaks.analysis.library import SMALL_ARRAY_ELEMENTS
from tflint_leaks.diagnostics import CallSite, Confirmation, Diagnostic, Verdict
from tflint_leaks.registry import BY_CODE, Judgement
from tflint_leaks.runtime import protocol
from tflint_leaks.runtime.observations import (
    CodeStats,
    Held,
    Observations,
    Param,
    Sample,
    Site,
    TapeKeptRun,
    TapeRecordsRun,
    Trace,
    position,
)
from tflint_leaks.runtime.places import CallAt, Place, Span, place_name

MIN_SIDE_EFFECT_CALLS = 2
WARMUP_SAMPLES = 2
MIN_GROWTH_STEPS = 4
MIN_GROWTH_PER_ITERATION = 0.5
MIN_RISE_FRACTION = 0.5
#: Tape findings judged on process memory (when no exact counter sees what tapes hold): at
#: least this many samples after warm-up, a straight-line fit this tight, and growth over the
#: sampled iterations this many times the RSS noise measured in the child's warm-up.
MIN_MEMORY_SAMPLES = 8
MIN_MEMORY_R2 = 0.9
MEMORY_NOISE_FACTOR = 10
#: RSS is read in pages; noise below this is taken as this.
RSS_RESOLUTION_MB = 0.1
#: A graph constant this large confirms that a captured array was copied into the graph: the
#: size from which the static rule (TFL501) flags an array with a literal shape (65,536
#: float32 elements), so the linter and the run agree on what "large" is.
LARGE_CONSTANT_BYTES = SMALL_ARRAY_ELEMENTS * 4

COUNTER_LABELS = {
    protocol.COUNTER_TRACES: "traces of any tf.function",
    protocol.COUNTER_GRAPH_FUNCTIONS: "graph functions registered",
    protocol.COUNTER_LIVE_GRAPHS: "live FuncGraphs",
    protocol.COUNTER_KERAS_NAMES: "Keras layer/model names",
    protocol.COUNTER_LIVE_TAPES: "live GradientTapes",
    protocol.COUNTER_TAPE_TENSORS: "tensors held by gradient tapes",
    protocol.COUNTER_LIVE_TENSORS: "live eager tensors",
    protocol.COUNTER_GRAPH_NODES: "nodes in the default graph",
}
_EXACT_COUNTERS = tuple(COUNTER_LABELS)
_TAPE_HOLDINGS = (protocol.COUNTER_TAPE_TENSORS, protocol.COUNTER_TAPE_MB)
#: The chart keys of what a tape probe measured (beside the sampled counters' names).
CHART_TAPE_KEPT = "tape_kept"
CHART_TAPE_RECORDS = "tape_records"
CHART_TRACES = "traces_at_site"
_UNCOUNTED = "the tensors held by tapes could not be counted"
#: Tensor counters and the counter of their size in MB, shown beside them.
_SIZES = {
    protocol.COUNTER_TAPE_TENSORS: protocol.COUNTER_TAPE_MB,
    protocol.COUNTER_LIVE_TENSORS: protocol.COUNTER_TENSOR_MB,
}
#: The counters that can confirm a finding, by its rule's judgement.
_COUNTERS_BY_JUDGEMENT = {
    Judgement.TAPES: (protocol.COUNTER_TAPE_TENSORS,),
    Judgement.TAPES_KEPT: (protocol.COUNTER_TAPE_TENSORS, protocol.COUNTER_LIVE_TAPES),
    Judgement.TENSORS: (protocol.COUNTER_LIVE_TENSORS,),
    Judgement.GRAPH_NODES: (protocol.COUNTER_GRAPH_NODES,),
    Judgement.GROWTH: (
        protocol.COUNTER_TRACES,
        protocol.COUNTER_KERAS_NAMES,
        protocol.COUNTER_GRAPH_FUNCTIONS,
        protocol.COUNTER_LIVE_GRAPHS,
    ),
}
_MAX_LISTED = 4


@dataclass(frozen=True)
class RunEnding:
    """How the run ended: ``normal`` when the target finished on its own (even by raising)."""

    normal: bool
    description: str


def _no_source(file: str, line: int) -> str:
    return ""


@dataclass(frozen=True)
class Context:
    """What every verdict reads: the observations, how the run ended, the static threshold,
    how to show a line of the code the child ran (a notebook's as ``cell N:line``) and what
    that line says."""

    observations: Observations
    run: RunEnding
    max_python_values: int
    show: Callable[[str, int], CallSite]
    source: Callable[[str, int], str] = _no_source


class Judged(NamedTuple):
    """A verdict and the key of the chart that carries its evidence (a sampled counter, or
    ``CHART_*``), which the report shows first."""

    confirmation: Confirmation
    evidence: str | None = None


class Watched(NamedTuple):
    """A line the child watches for a finding: its sampling level, and its statement."""

    site: Site
    level: int
    statement: Span


def judgement(diagnostic: Diagnostic) -> Judgement:
    """How a finding is judged: its rule's registry line says (growth for anything else)."""
    code = BY_CODE.get(diagnostic.code)
    return code.judgement if code is not None and code.judgement else Judgement.GROWTH


# -- matching findings to what ran ---------------------------------------------------------------


def watched_sites(diagnostic: Diagnostic, place: Place) -> list[Watched]:
    """The lines the child watches for a finding, and the sampling level of each.

    Every exact counter (each sample costs a ``gc.collect()``) is sampled for growth findings
    only, at their loop header or at their own line when they name no loop; tape findings
    judged at a loop add the tensors tapes hold. A retracing or side-effect finding's loop
    header samples the counters that cost nothing (traces, graph functions, RSS), for the
    report's charts. The tape probes (``probes``) count the runs of their statements and
    measure what tapes hold themselves.
    """
    kind = judgement(diagnostic)
    own = Watched(place.site, protocol.SAMPLE_NONE, place.statement or Span.line(place.line))
    if kind is Judgement.TAPE_AFTER_GRADIENT and place.tape_site is not None:
        work = place.tape_statement or Span.line(place.tape_site[1])
        return [own, Watched(place.tape_site, protocol.SAMPLE_NONE, work)]
    if kind in (Judgement.TAPE_AFTER_GRADIENT, Judgement.TAPE_RECORDS):
        return [own]
    level = {
        Judgement.TRACES: protocol.SAMPLE_LIGHT,
        Judgement.NEW_FUNCTIONS: protocol.SAMPLE_LIGHT,
        Judgement.NEW_INSTANCES: protocol.SAMPLE_LIGHT,
        Judgement.SIDE_EFFECT: protocol.SAMPLE_LIGHT,
        Judgement.FROZEN_READ: protocol.SAMPLE_LIGHT,
        Judgement.TAPES: protocol.SAMPLE_TAPES,
        Judgement.TAPES_KEPT: protocol.SAMPLE_TAPES,
        Judgement.TENSORS: protocol.SAMPLE_TENSORS,
        Judgement.CONSTANTS: protocol.SAMPLE_NONE,
    }.get(kind, protocol.SAMPLE_FULL)
    loop = place.loop_site
    if loop is None:
        return [own._replace(level=level)]
    return [own, Watched(loop, level, place.loop_statement or Span.line(loop[1]))]


def probes(diagnostic: Diagnostic, place: Place) -> list[dict[str, object]]:
    """What the child measures in the runs of a tape finding's statements (``protocol``'s
    ``RECORD_TAPE_*``)."""
    kind = judgement(diagnostic)
    site = {"file": place.file, "line": place.line}
    if kind is Judgement.TAPE_AFTER_GRADIENT and place.tape is not None:
        return [{"kind": "tape-kept", **site, "alive": place.tape}]
    if kind is Judgement.TAPE_RECORDS:
        return [{"kind": "tape-records", **site}]
    return []


def find_code(place: Place, observations: Observations) -> CodeStats | None:
    """The code object a finding is about.

    Tried in order: the code object whose first line is the ``tf-function`` related location (a
    decorated function's code starts at its first decorator); the code objects created at the
    finding's line; the innermost code object that contains the finding's line.
    """
    candidates: list[CodeStats] = []
    if place.tf_function is not None:
        site = place.tf_function
        candidates = [s for s in observations.code.values() if s.key[:2] == site]
        candidates += [s for s in observations.code.values() if site in s.creation_sites]
    if not candidates:
        candidates = [s for s in observations.code.values() if place.site in s.creation_sites]
    if not candidates:
        containing = [s for s in observations.code.values() if s.traces and s.contains(*place.site)]
        innermost = max((s.key[1] for s in containing), default=None)
        candidates = [s for s in containing if s.key[1] == innermost]
    return max(candidates, key=lambda s: (len(s.traces), s.calls), default=None)


def _iterations(observations: Observations, loop: Site) -> int:
    """Iterations a loop completed: its header runs once more, to find the loop is over."""
    return max(observations.hits.get(loop, 0) - 1, 0)


def _line_hits(diagnostic: Diagnostic, place: Place, observations: Observations) -> int:
    return sum(
        observations.hits.get(watched.site, 0) for watched in watched_sites(diagnostic, place)
    )


def sampled_at(place: Place) -> tuple[Site, bool]:
    """Where a finding's counters are sampled: its loop header, or its own line when it names
    no loop; and whether that line is a loop header (its samples then count iterations)."""
    if place.loop_site is not None:
        return place.loop_site, True
    return place.site, place.statement is not None and place.statement.loop


def runs_of(observations: Observations, site: Site, loop: bool) -> int:
    """The iterations of a loop (its header runs once more, to find the loop is over), or the
    runs of a statement."""
    return _iterations(observations, site) if loop else observations.hits.get(site, 0)


# -- causes --------------------------------------------------------------------------------------


def listed(values: Sequence[str]) -> str:
    """The first few values and the last: ``0, 1, 2, 3, ..., 39``."""
    if len(values) <= _MAX_LISTED + 1:
        return ", ".join(values)
    return ", ".join([*values[:_MAX_LISTED], "...", values[-1]])


def describe_argument(name: str, params: list[Param]) -> str:
    """``argument `step` took 12 distinct Python int values: 0, 1, ...`` and the like."""
    distinct = list(dict.fromkeys(param.repr for param in params))
    kinds = {param.kind for param in params}
    types = sorted({param.type for param in params if param.type})
    if kinds == {"Literal"}:
        values = list(dict.fromkeys(param.shown() for param in params))
        return (
            f"argument `{name}` took {len(distinct)} distinct Python {'/'.join(types)} values: "
            f"{listed(values)}"
        )
    if kinds == {"Weakref"}:
        kind = f" of type `{'/'.join(types)}`" if types else ""
        return f"argument `{name}` took {len(distinct)} distinct Python objects{kind}"
    shapes = list(dict.fromkeys(param.shape for param in params if param.shape))
    if len(shapes) > 1:
        return f"argument `{name}` took {len(shapes)} distinct shapes: {listed(shapes)}"
    dtypes = list(dict.fromkeys(param.dtype for param in params if param.dtype))
    if len(dtypes) > 1:
        return f"argument `{name}` took {len(dtypes)} distinct dtypes: {listed(dtypes)}"
    return f"argument `{name}` took {len(distinct)} distinct values ({listed(sorted(kinds))})"


def _creation_sites(observations: Observations, traces: Sequence[Trace], context: Context) -> str:
    sites = sorted(
        {observations.created[t.serial] for t in traces if t.serial in observations.created}
    )
    shown = [context.show(*site) for site in sites]
    return listed([place_name(dataclasses.replace(s, file=Path(s.file).name)) for s in shown])


@dataclass(frozen=True)
class Change:
    """What changed most often between consecutive traces: the ``tf.function`` object (how
    many times), or else one parameter's trace type."""

    new_objects: int
    parameter: str | None


def retrace_change(traces: Sequence[Trace]) -> Change | None:
    """What changed between consecutive traces, most frequent first (None: nothing did)."""
    changed: dict[str, int] = {}
    new_objects = 0
    for previous, current in pairwise(traces):
        if current.serial != previous.serial:
            new_objects += 1
            continue
        before = {param.name: param.repr for param in previous.params}
        for param in current.params:
            if before.get(param.name) != param.repr:
                changed[param.name] = changed.get(param.name, 0) + 1
    top = max(changed.values(), default=0)
    if new_objects and new_objects >= top:
        return Change(new_objects, None)
    if not top:
        return None
    return Change(0, next(name for name, count in changed.items() if count == top))


def retrace_cause(traces: Sequence[Trace], context: Context) -> str | None:
    """What changed between consecutive traces, in words."""
    change = retrace_change(traces)
    if change is None:
        return None
    if change.parameter is not None:
        return _argument_cause(traces, change.parameter)
    objects = len({trace.serial for trace in traces})
    sites = _creation_sites(context.observations, traces, context)
    where = f" at {sites}" if sites else ""
    return (
        f"{change.new_objects} retraces came from new tf.function objects "
        f"({objects} created{where})"
    )


def _argument_cause(traces: Sequence[Trace], name: str) -> str:
    return describe_argument(name, [p for trace in traces if (p := trace.param(name))])


# -- retracing -----------------------------------------------------------------------------------


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


@dataclass(frozen=True)
class Retraces:
    """The traces a retracing finding is judged on: those its call site (or the ``tf.function``
    objects created at its line) made, and what tells them apart."""

    stats: CodeStats
    traces: list[Trace]
    calls: int
    #: The flagged argument's parameter: its distinct values are counted. None: count new
    #: ``tf.function`` objects (``by_object``) or distinct signatures.
    parameter: str | None = None
    by_object: bool = False
    #: Number calls by the code object rather than by one call site (several sites).
    by_code: bool = False
    #: No call came from the finding's lines: every call of the function is judged.
    every_site: bool = False

    def key(self, trace: Trace) -> object:
        if self.parameter is not None:
            param = trace.param(self.parameter)
            return param.repr if param else None
        if self.by_object:
            return trace.serial
        return (trace.serial, trace.signature())

    def distinct(self) -> list[Trace]:
        """The first trace of each distinct value (object, signature), in order."""
        first: dict[object, Trace] = {}
        for trace in self.traces:
            first.setdefault(self.key(trace), trace)
        return list(first.values())

    def values(self) -> tuple[str, ...]:
        if self.parameter is None:
            return ()
        return tuple(p.shown() for t in self.distinct() if (p := t.param(self.parameter)))


def _parameter(call: CallAt | None, traces: Sequence[Trace]) -> str | None:
    """The parameter the flagged argument binds to (``self`` is not among a method's)."""
    if call is None or not traces:
        return None
    names = [param.name for param in traces[0].params]
    if call.keyword is not None:
        return call.keyword if call.keyword in names else None
    if call.position is not None and call.position < len(names):
        return names[call.position]
    return None


def retraces_of(
    diagnostic: Diagnostic, place: Place, stats: CodeStats, observations: Observations
) -> Retraces:
    """Select the traces and calls that ``diagnostic`` is judged on."""
    kind = judgement(diagnostic)
    if kind is Judgement.NEW_FUNCTIONS:
        created = {s for s, site in observations.created.items() if site == place.site}
        traces = [t for t in stats.traces if t.serial in created]
        if traces:
            return Retraces(stats, traces, stats.calls, by_object=True, by_code=True)
    lines = place.call_lines()
    sites = {s: n for s, n in stats.site_calls.items() if s[0] == place.file and s[1] in lines}
    if not sites:
        return Retraces(stats, list(stats.traces), stats.calls, by_code=True, every_site=True)
    traces = [t for t in stats.traces if t.site in sites]
    if kind is Judgement.NEW_INSTANCES:
        return Retraces(stats, traces, sum(sites.values()), by_object=True, by_code=len(sites) > 1)
    return Retraces(
        stats,
        traces,
        sum(sites.values()),
        parameter=_parameter(place.call, traces),
        by_code=len(sites) > 1,
    )


def _growth(retraces: Retraces, distinct: list[Trace]) -> tuple[bool, str]:
    """Whether the distinct traces stopped (bounded), and how that reads.

    Bounded when, after the last new trace, at least as many calls were made as there are
    distinct traces: every value seen could have come back without making a new graph.
    """
    last = max(t.ncall if retraces.by_code else t.call for t in distinct)
    after = retraces.calls - last
    count = len(distinct)
    if after >= count:
        return True, f"bounded: no new trace in the last {after} calls ({count} graphs kept alive)"
    return (
        False,
        f"unbounded: still tracing new graphs at the end of the run "
        f"(a new trace at call {last} of {retraces.calls})",
    )


def measure_retracing(retraces: Retraces, context: Context) -> Confirmation:
    """The retracing verdict for what the finding's call site (or creation site) measured."""
    distinct = retraces.distinct()
    count = len(distinct)
    name, calls = retraces.stats.key[2], retraces.calls
    signatures = len({(t.serial, t.signature()) for t in retraces.traces})
    if retraces.parameter is not None and count > 1:
        cause: str | None = _argument_cause(retraces.traces, retraces.parameter)
    else:
        cause = retrace_cause(retraces.traces, context)
    counted = f"`{name}` traced {_times(signatures)} in {calls} calls"
    if retraces.every_site:
        counted += " (no call came from the finding's line: every call site counted)"
    summary = f"{counted}: {cause}" if cause else counted
    limit = context.max_python_values
    verdict, bounded = Verdict.NOT_REPRODUCED, None
    if count > limit:
        verdict, (bounded, growth) = Verdict.CONFIRMED, _growth(retraces, distinct)
        summary += f"; {growth}"
    elif count > 1:
        summary += f" (the rule accepts at most {limit}: max-python-values)"
    elif calls <= limit:
        summary += f" (only {calls} calls: more than {limit} distinct traces need more calls)"
    return Confirmation(
        verdict,
        summary,
        traces=count,
        calls=calls,
        cause=cause,
        bounded=bounded,
        values=retraces.values(),
        sites=_sites(retraces, context),
    )


def _sites(retraces: Retraces, context: Context) -> tuple[CallSite, ...]:
    """Every call site of the code object with its calls and distinct traces, the judged first."""
    judged = {t.site for t in retraces.traces}
    sites = []
    for site, calls in retraces.stats.site_calls.items():
        traces = [t for t in retraces.stats.traces if t.site == site]
        shown = context.show(*site)
        distinct = len({(t.serial, t.signature()) for t in traces})
        sites.append(
            (site not in judged, site, dataclasses.replace(shown, calls=calls, traces=distinct))
        )
    return tuple(entry for _, _, entry in sorted(sites, key=lambda item: item[:2]))


def not_run(diagnostic: Diagnostic, place: Place, context: Context) -> Confirmation:
    """The verdict for a finding whose code never ran."""
    loop = place.loop_site
    hits = context.observations.hits.get(loop, 0) if loop else 0
    evidence = (f"its loop header ran {hits} times, the flagged code never",) if hits else ()
    if context.run.normal:
        summary = "the code never ran while the target ran to its end"
        return Confirmation(Verdict.NOT_EXECUTED, summary, evidence=evidence)
    return Confirmation(
        Verdict.ERROR, f"the run {context.run.description} before this code ran", evidence=evidence
    )


def judge_retracing(diagnostic: Diagnostic, place: Place, context: Context) -> Confirmation:
    observations = context.observations
    stats = find_code(place, observations)
    if stats is None or not (stats.traces or stats.calls) or not observations.hits.get(place.site):
        if observations.eager:
            summary = "tf.config.run_functions_eagerly(True) disabled tracing: nothing to count"
            return Confirmation(Verdict.ERROR, summary)
        return not_run(diagnostic, place, context)
    loop = place.loop_site
    iterations = _iterations(observations, loop) if loop else None
    retraces = retraces_of(diagnostic, place, stats, observations)
    return dataclasses.replace(measure_retracing(retraces, context), iterations=iterations)


def judge_side_effect(diagnostic: Diagnostic, place: Place, context: Context) -> Confirmation:
    found = _body_runs(
        diagnostic, place, context, "its Python side effects ran as they would eagerly"
    )
    if isinstance(found, Confirmation):
        return found
    traces, calls, name = found
    if traces < calls:
        cause = _traced_only(name, traces, calls)
    else:
        cause = f"`{name}` retraced on every call: each trace redid the side effect symbolically"
    summary = f"this side effect ran {_times(traces)} for {calls} calls of `{name}`"
    return Confirmation(Verdict.CONFIRMED, summary, traces=traces, calls=calls, cause=cause)


def judge_frozen_read(diagnostic: Diagnostic, place: Place, context: Context) -> Confirmation:
    """A read of Python state (``TFL305``): confirmed when the function ran its Python body,
    and so the read, on fewer calls than it was called. Whether the state's value changed in
    between is not watched."""
    found = _body_runs(diagnostic, place, context, "the state was read as it would be eagerly")
    if isinstance(found, Confirmation):
        return found
    traces, calls, name = found
    if traces >= calls:
        summary = f"`{name}` traced on each of its {calls} calls: each trace read the current value"
        return Confirmation(Verdict.NOT_REPRODUCED, summary, traces=traces, calls=calls)
    summary = (
        f"the state was read on {traces} of {calls} calls of `{name}`: the other calls used "
        "the value read while tracing"
    )
    cause = _traced_only(name, traces, calls)
    return Confirmation(Verdict.CONFIRMED, summary, traces=traces, calls=calls, cause=cause)


def _body_runs(
    diagnostic: Diagnostic, place: Place, context: Context, once: str
) -> tuple[int, int, str] | Confirmation:
    """The distinct traces and the calls of the ``tf.function`` a finding is in, and its name;
    or the verdict when it never ran, or was called once (``once`` says what happened then)."""
    stats = find_code(place, context.observations)
    if stats is None or not stats.calls:
        return not_run(diagnostic, place, context)
    traces, calls, name = stats.distinct_traces(), stats.calls, stats.key[2]
    if calls < MIN_SIDE_EFFECT_CALLS:
        summary = f"`{name}` was called once: {once}"
        return Confirmation(Verdict.NOT_REPRODUCED, summary, traces=traces, calls=calls)
    return traces, calls, name


def _traced_only(name: str, traces: int, calls: int) -> str:
    return f"the Python body of `{name}` ran on {traces} of {calls} calls (only while tracing)"


def growth_window(values: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """The samples up to the last one at which the counter rose: how long it grew is decided
    by the samples, so a counter that grew and then stopped is not diluted by a long run."""
    rises = [index for index in range(1, len(values)) if values[index][1] > values[index - 1][1]]
    return values[: max(rises, default=len(values) - 1) + 1]


def counter_growth(values: list[tuple[int, float]]) -> tuple[float, float]:
    """Per-iteration growth and the fraction of steps that rose, for ``(hit, value)`` pairs."""
    (first_hit, first), (last_hit, last) = values[0], values[-1]
    per_iteration = (last - first) / max(last_hit - first_hit, 1)
    rises = sum(1 for (_, a), (_, b) in pairwise(values) if b > a)
    return per_iteration, rises / max(len(values) - 1, 1)


def fit_line(values: list[tuple[int, float]]) -> tuple[float, float]:
    """The least-squares slope of ``(hit, value)`` pairs and the fit's R² (1 for a flat line)."""
    count = len(values)
    mean_x = sum(x for x, _ in values) / count
    mean_y = sum(y for _, y in values) / count
    sxx = sum((x - mean_x) ** 2 for x, _ in values)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in values)
    syy = sum((y - mean_y) ** 2 for _, y in values)
    slope = sxy / sxx if sxx else 0.0
    r2 = (sxy * sxy / (sxx * syy)) if sxx and syy else 1.0
    return slope, r2


def points(samples: Sequence[Sample], counter: str, loop: bool) -> list[tuple[int, float]]:
    """``(position, value)`` of a counter in ``samples`` (see ``observations.position``)."""
    return [
        (position(s.hit, loop), v) for s in samples if (v := s.counters.get(counter)) is not None
    ]


def judge_memory(
    samples: Sequence[Sample], context: Context, iterations: int, steps: str, loop: bool
) -> Judged:
    """A tape finding judged on process memory, when no exact counter sees what tapes hold."""
    values = points(samples, protocol.COUNTER_RSS_MB, loop)
    noise = max(context.observations.rss_noise_mb or 0.0, RSS_RESOLUTION_MB)
    evidence = protocol.COUNTER_RSS_MB
    if len(values) < MIN_MEMORY_SAMPLES:
        summary = (
            f"memory-based: only {len(values)} samples after {WARMUP_SAMPLES} warm-up "
            f"iterations; a memory slope needs {MIN_MEMORY_SAMPLES}"
        )
        return Judged(
            Confirmation(Verdict.NOT_REPRODUCED, summary, iterations=iterations), evidence
        )
    slope, r2 = fit_line(values)
    grown = slope * (values[-1][0] - values[0][0])
    fitted = f"{slope:+.2f} MB per iteration (R² {r2:.2f}) {steps}, warm-up noise {noise:.2f} MB"
    growth = ((protocol.COUNTER_RSS_MB, round(slope, 3)),)
    if r2 >= MIN_MEMORY_R2 and grown >= MEMORY_NOISE_FACTOR * noise:
        confirmation = Confirmation(
            Verdict.CONFIRMED,
            f"memory-based: process memory grew steadily, {fitted}",
            iterations=iterations,
            cause=f"process memory grew {slope:+.2f} MB per iteration",
            growth=growth,
        )
        return Judged(confirmation, evidence)
    confirmation = Confirmation(
        Verdict.NOT_REPRODUCED,
        f"memory-based: no steady growth of process memory, {fitted}",
        iterations=iterations,
        growth=growth,
    )
    return Judged(confirmation, evidence)


def _growth_of(
    samples: Sequence[Sample], loop: bool, relevant: Sequence[str]
) -> tuple[dict[str, float], list[str], list[int]]:
    """Per-iteration growth of every sampled counter, the relevant ones that grew (by the
    thresholds above), and for those the last position at which each rose if it stopped."""
    growth: dict[str, float] = {}
    grew: list[str] = []
    stopped: list[int] = []
    for counter in (*_EXACT_COUNTERS, *_SIZES.values(), protocol.COUNTER_RSS_MB):
        values = points(samples, counter, loop)
        window = growth_window(values) if counter != protocol.COUNTER_RSS_MB else values
        if len(window) < 2:
            continue
        per_iteration, rose = counter_growth(window)
        growth[counter] = round(per_iteration, 3)
        if (
            counter in relevant
            and len(window) > MIN_GROWTH_STEPS
            and per_iteration >= MIN_GROWTH_PER_ITERATION
            and rose >= MIN_RISE_FRACTION
        ):
            grew.append(counter)
            if len(window) < len(values):
                stopped.append(window[-1][0])
    return growth, grew, stopped


def _per_iteration(growth: dict[str, float], counter: str) -> str:
    size = _SIZES.get(counter)
    sized = f" ({growth.get(size, 0.0):+g} MB)" if size else ""
    return f"+{growth[counter]:g} {COUNTER_LABELS[counter]} per iteration{sized}"


def _rss_evidence(growth: dict[str, float]) -> tuple[str, ...]:
    rss = growth.get(protocol.COUNTER_RSS_MB)
    if rss is None:
        return ()
    return (f"process memory (RSS, supporting only): {rss:+.2f} MB per iteration",)


def judge_growth(diagnostic: Diagnostic, place: Place, context: Context) -> Judged:
    observations = context.observations
    site, loop = sampled_at(place)
    iterations = runs_of(observations, site, loop)
    if not _line_hits(diagnostic, place, observations):
        return Judged(not_run(diagnostic, place, context))
    taken = observations.samples.get(site, [])
    samples = taken[WARMUP_SAMPLES:]
    steps = f"over {len(samples)} samples after {WARMUP_SAMPLES} warm-up iterations"
    kind = judgement(diagnostic)
    relevant = _COUNTERS_BY_JUDGEMENT.get(kind, _EXACT_COUNTERS)
    tapes = kind in (Judgement.TAPES, Judgement.TAPES_KEPT)
    if tapes and not any(points(taken, counter, loop) for counter in _TAPE_HOLDINGS):
        return judge_memory(samples, context, iterations, steps, loop)
    if len(samples) < MIN_GROWTH_STEPS + 1:
        needed = WARMUP_SAMPLES + MIN_GROWTH_STEPS + 1
        summary = f"only {len(taken)} samples ({iterations} iterations): {needed} measure growth"
        return Judged(Confirmation(Verdict.NOT_REPRODUCED, summary, iterations=iterations))
    growth, grew, stopped = _growth_of(samples, loop, relevant)
    if kind is Judgement.TAPES_KEPT:
        return judge_tapes_kept(samples, loop, growth, grew, iterations, steps)
    growing = [_per_iteration(growth, counter) for counter in grew]
    evidence = _rss_evidence(growth)
    if growing:
        bounded = len(stopped) == len(growing)
        until = f"; bounded: stopped growing at iteration {max(stopped)}" if bounded else ""
        confirmation = Confirmation(
            Verdict.CONFIRMED,
            f"{'; '.join(growing)} {steps}{until}",
            iterations=iterations,
            cause=growing[0],
            growth=tuple(growth.items()),
            evidence=evidence,
            bounded=bounded,
        )
        return Judged(confirmation, grew[0])
    watched = ", ".join(COUNTER_LABELS[c] for c in relevant)
    confirmation = Confirmation(
        Verdict.NOT_REPRODUCED,
        f"no growth of {watched} {steps}",
        iterations=iterations,
        growth=tuple(growth.items()),
        evidence=evidence,
    )
    return Judged(confirmation, relevant[0])


def judge_tapes_kept(
    samples: Sequence[Sample],
    loop: bool,
    growth: dict[str, float],
    grew: list[str],
    iterations: int,
    steps: str,
) -> Judged:
    """TFL204: a tape stored past its iteration keeps what it recorded alive, so tapes hold
    tensors when the next iteration starts. Confirmed when they do at least at half of the
    loop-header samples after warm-up; the summary adds how that grows per iteration."""
    held = points(samples, protocol.COUNTER_TAPE_TENSORS, loop)
    sizes = dict(points(samples, protocol.COUNTER_TAPE_MB, loop))
    holding = [(at, value) for at, value in held if value > 0]
    counter = protocol.COUNTER_TAPE_TENSORS
    evidence = _rss_evidence(growth)
    if holding and len(holding) >= MIN_RISE_FRACTION * len(held):
        at, most = max(holding, key=lambda point: (point[1], point[0]))
        peak = _held((most, sizes.get(at, 0.0)))
        summary = (
            f"tapes from earlier iterations held tensors at {len(holding)} of {len(held)} "
            f"iteration starts after {WARMUP_SAMPLES} warm-up iterations: up to {peak} after "
            f"iteration {at}"
        )
        growing = [_per_iteration(growth, grown) for grown in grew]
        confirmation = Confirmation(
            Verdict.CONFIRMED,
            "; ".join([summary, *growing]),
            iterations=iterations,
            cause=f"tapes stored past their iteration held {peak} after iteration {at}",
            growth=tuple(growth.items()),
            evidence=evidence,
        )
        return Judged(confirmation, counter)
    confirmation = Confirmation(
        Verdict.NOT_REPRODUCED,
        f"no tape held a tensor at the start of an iteration {steps}",
        iterations=iterations,
        growth=tuple(growth.items()),
        evidence=evidence,
    )
    return Judged(confirmation, counter)


def _held(held: Held) -> str:
    return f"{held[0]:g} tensors ({held[1]:.3f} MB)"


_Run = TypeVar("_Run", TapeKeptRun, TapeRecordsRun)


def _peak(
    measured: Sequence[tuple[_Run, Held]], runs: int, every: str
) -> tuple[_Run, Held, str, bool]:
    """Of the measured runs of a tape probe, each with its measure: the run with the peak (of
    those that measured a tensor or more, if any), how many did of how many measured, and
    whether that is at least half of them (a one-off is not the pattern)."""
    positive = [(run, held) for run, held in measured if held[0] > 0]
    share = f"{len(positive)} of {len(measured)} measured {every}s ({runs} {every}s)"
    run, peak = max(positive or measured, key=lambda item: (item[1][1], item[1][0]))
    return run, peak, share, bool(positive) and len(positive) >= MIN_RISE_FRACTION * len(measured)


def _line_name(context: Context, file: str, line: int) -> str:
    """A line of the finding's own file: ``line 12``, or ``cell 3:4`` in a notebook."""
    shown = context.show(file, line)
    return f"cell {shown.cell}:{shown.line}" if shown.cell is not None else f"line {shown.line}"


def _statement_at(context: Context, file: str, line: int) -> str:
    code = context.source(file, line)
    where = _line_name(context, file, line)
    return f"`{code}` ({where})" if code else where


def _through(run: TapeKeptRun, place: Place, context: Context) -> str:
    """The lines a tape's frame ran while the tape stayed alive after its last use, and what
    ended that: ``through `opt.apply_gradients(...)` (line 10), `return y` (line 11), until
    `step` returned``."""
    lines = listed([_statement_at(context, place.file, line) for line in run.lines])
    if run.returned == "<module>":
        until = "until the end of its module"
    elif run.returned:
        until = f"until `{run.returned}` returned"
    elif run.released is not None:
        until = f"until {_line_name(context, *run.released)} released it"
    else:
        until = "until the end of the run"
    return f"through {lines}, {until}" if lines else until


def judge_tape_kept(diagnostic: Diagnostic, place: Place, context: Context) -> Judged:
    """TFL201, on each measured run of the statement that creates the tape: what the tape
    still holds when the work after its last use starts (what tapes hold then, less what they
    held once the tape existed), through which lines of its frame it stays alive, and where it
    is released. Confirmed when it holds something at least at half of the measured runs;
    the peak is the figure."""
    observations = context.observations
    every = "iteration" if place.loop is not None else "call"
    runs = observations.hits.get(place.site, 0)
    if not runs:
        return Judged(not_run(diagnostic, place, context))
    work = place.tape_site
    measured = [
        (run, kept)
        for run in observations.tape_kept.get(place.site, [])
        if (kept := run.kept()) is not None
    ]
    if work is None or not measured:
        why = (
            "the finding names no statement after the tape's last use"
            if work is None
            else _UNCOUNTED
        )
        summary = f"{why}: nothing measured in {runs} {every}s"
        return Judged(Confirmation(Verdict.NOT_REPRODUCED, summary, iterations=runs))
    run, peak, share, real = _peak(measured, runs, every)
    growth = (("tape_tensors_kept", peak[0]), ("tape_mb_kept", peak[1]))
    at = _statement_at(context, *work)
    if real:
        summary = (
            f"peak {_held(peak)} kept alive by the tape after its last use, "
            f"{_through(run, place, context)}; held in {share}"
        )
        cause = f"what the tape recorded ({peak[1]:.3f} MB) stays alive while {at} runs"
        confirmation = Confirmation(
            Verdict.CONFIRMED, summary, iterations=runs, cause=cause, growth=growth
        )
        return Judged(confirmation, CHART_TAPE_KEPT)
    released = next((r.released for r, _ in measured if r.held is None and r.released), None)
    before = f", released at {_line_name(context, *released)}" if released else ""
    summary = f"the tape held nothing when {at} ran{before}: it held tensors in {share}"
    confirmation = Confirmation(Verdict.NOT_REPRODUCED, summary, iterations=runs, growth=growth)
    return Judged(confirmation, CHART_TAPE_KEPT)


def judge_tape_records(diagnostic: Diagnostic, place: Place, context: Context) -> Judged:
    """TFL202, on each measured run of the flagged statement: what tapes hold when it ends
    less what they held when it started (a tape still recording records the backward pass or
    the update). Confirmed when that is more than nothing at least at half of the measured
    runs; the largest is the figure."""
    observations = context.observations
    runs = observations.hits.get(place.site, 0)
    if not runs:
        return Judged(not_run(diagnostic, place, context))
    measured = [
        (run, added)
        for run in observations.tape_records.get(place.site, [])
        if (added := run.added()) is not None
    ]
    if not measured:
        summary = f"{_UNCOUNTED}: nothing measured in {runs} runs"
        return Judged(Confirmation(Verdict.NOT_REPRODUCED, summary, iterations=runs))
    run, most, share, real = _peak(measured, runs, "run")
    growth = (("tape_tensors_recorded", most[0]), ("tape_mb_recorded", most[1]))
    if real and run.before and run.after:
        summary = (
            f"a recording tape took {_held(most)} more while this statement ran inside its "
            f"block: from {_held(run.before)} to {_held(run.after)}; in {share}"
        )
        cause = f"the tape recorded what this statement computes: +{most[1]:.3f} MB per run"
        confirmation = Confirmation(
            Verdict.CONFIRMED, summary, iterations=runs, cause=cause, growth=growth
        )
        return Judged(confirmation, CHART_TAPE_RECORDS)
    summary = f"no tape recorded anything while this statement ran: +0 tensors in {share}"
    confirmation = Confirmation(Verdict.NOT_REPRODUCED, summary, iterations=runs, growth=growth)
    return Judged(confirmation, CHART_TAPE_RECORDS)


def _mb(size: float) -> str:
    return f"{size / 2**20:.1f} MB"


def judge_constants(diagnostic: Diagnostic, place: Place, context: Context) -> Confirmation:
    """A captured array (TFL501), judged on the constants of every trace of the
    ``tf.function`` the finding is in: confirmed when a trace holds a constant of at least
    ``LARGE_CONSTANT_BYTES``; the summary gives the bytes per trace and how they add up."""
    stats = find_code(place, context.observations)
    if stats is None or not stats.traces:
        return not_run(diagnostic, place, context)
    name = stats.key[2]
    measured = [t for t in stats.traces if t.constant_bytes is not None]
    if not measured:
        summary = f"`{name}` traced, but the constants of its graphs could not be read"
        return Confirmation(Verdict.NOT_REPRODUCED, summary, traces=len(stats.traces))
    sizes = [t.constant_bytes or 0 for t in measured]
    largest = max(t.largest_constant or 0 for t in measured)
    count = len(measured)
    held = f"{_times(count)}; each trace holds up to {_mb(max(sizes))} of graph constants"
    summary = f"`{name}` traced {held} (the largest {largest:,} bytes)"
    evidence = [f"graph constants per trace: {listed([_mb(size) for size in sizes])}"]
    growth: list[tuple[str, float]] = [("constant_mb_per_trace", round(max(sizes) / 2**20, 3))]
    memory = [t.rss_mb for t in measured if t.rss_mb is not None]
    if memory:
        per_trace = sum(memory) / len(memory)
        growth.append(("rss_mb_per_trace", round(per_trace, 1)))
        taken = listed([f"{m:+.0f} MB" for m in memory])
        evidence.append(f"process memory (RSS, supporting only) taken by each trace: {taken}")
    if largest < LARGE_CONSTANT_BYTES:
        summary += f": no constant reaches {_mb(LARGE_CONSTANT_BYTES)}"
        return Confirmation(
            Verdict.NOT_REPRODUCED,
            summary,
            traces=count,
            calls=stats.calls,
            growth=tuple(growth),
            evidence=tuple(evidence),
        )
    summary += f": {_mb(sum(sizes))} of constants kept alive by its {count} graphs"
    return Confirmation(
        Verdict.CONFIRMED,
        summary,
        traces=count,
        calls=stats.calls,
        cause=f"a {_mb(largest)} constant ({largest:,} bytes) copied into each trace's graph",
        growth=tuple(growth),
        evidence=tuple(evidence),
    )


def judged(diagnostic: Diagnostic, place: Place, context: Context) -> Judged:
    """The verdict for one static finding, and the chart that carries its evidence."""
    kind = judgement(diagnostic)
    if kind.retracing:
        return Judged(judge_retracing(diagnostic, place, context), CHART_TRACES)
    if kind is Judgement.CONSTANTS:
        return Judged(judge_constants(diagnostic, place, context))
    if kind is Judgement.SIDE_EFFECT:
        return Judged(judge_side_effect(diagnostic, place, context))
    if kind is Judgement.FROZEN_READ:
        return Judged(judge_frozen_read(diagnostic, place, context))
    if kind is Judgement.TAPE_AFTER_GRADIENT:
        return judge_tape_kept(diagnostic, place, context)
    if kind is Judgement.TAPE_RECORDS:
        return judge_tape_records(diagnostic, place, context)
    return judge_growth(diagnostic, place, context)


def judge(diagnostic: Diagnostic, place: Place, context: Context) -> Confirmation:
    """The verdict for one static finding."""
    return judged(diagnostic, place, context).confirmation
