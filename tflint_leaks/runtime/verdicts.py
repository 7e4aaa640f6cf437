"""Turn observations into a verdict per finding, with thresholds chosen to survive a rerun.

Each rule's registry line says how its findings are judged. Retracing findings (``traces``:
``TFL101``-``TFL105``) are judged on the traces of the code object of the ``tf.function`` they
name:

- ``confirmed``: at least ``MIN_TRACES`` distinct traces and at least ``MIN_RETRACE_RATIO`` traces
  per call. The cause names what changed between consecutive traces: an argument (a Python value,
  a tensor shape or dtype, a Python object) or a new ``tf.function`` object.
- ``not-reproduced``: called, but below those thresholds (the summary says when fewer than
  ``MIN_CALLS`` calls make that weak evidence). A function that creates variables traces twice on
  its first call with one signature; distinct (object, signature) pairs are counted, so its
  baseline is 1 like any other function's.

Python side effects in a ``tf.function`` (``TFL3xx``) are confirmed when the function was called
at least twice: its Python body (and so the side effect) then ran on fewer calls than it was
called, or ran on every call with symbolic tensors because the function retraced.

Every other finding (tapes ``TFL2xx``, models, ``predict``, datasets ``TFL4xx``) is judged on
counters sampled where its loop header (or, with no loop, its own line) runs. The first
``WARMUP_SAMPLES`` samples are dropped; with at least ``MIN_GROWTH_STEPS`` steps left, an exact
counter grows when it rose by ``MIN_GROWTH_PER_ITERATION`` per iteration or more, rising on at
least ``MIN_RISE_FRACTION`` of the steps. Process memory (RSS) is only supporting evidence.

A finding whose code never ran is ``not-executed`` when the target finished on its own, and
``error`` when the run stopped early (timeout, crash, memory limit): it might have run later.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from tflint_leaks.diagnostics import Confirmation, Diagnostic, RelatedRole, Verdict
from tflint_leaks.registry import BY_CODE, Judgement
from tflint_leaks.runtime import protocol
from tflint_leaks.runtime.observations import CodeStats, Observations, Param, Site

MIN_TRACES = 3
MIN_RETRACE_RATIO = 0.5
MIN_CALLS = 3
MIN_SIDE_EFFECT_CALLS = 2
WARMUP_SAMPLES = 2
MIN_GROWTH_STEPS = 4
MIN_GROWTH_PER_ITERATION = 0.5
MIN_RISE_FRACTION = 0.5


_COUNTER_LABELS = {
    protocol.COUNTER_TRACES: "traces of any tf.function",
    protocol.COUNTER_GRAPH_FUNCTIONS: "graph functions registered",
    protocol.COUNTER_LIVE_GRAPHS: "live FuncGraphs",
    protocol.COUNTER_KERAS_NAMES: "Keras layer/model names",
    protocol.COUNTER_LIVE_TAPES: "live GradientTapes",
}
_EXACT_COUNTERS = tuple(_COUNTER_LABELS)
_COUNTERS_BY_FAMILY = {
    "TFL2": (protocol.COUNTER_LIVE_TAPES,),
    "TFL4": (
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


def judgement(diagnostic: Diagnostic) -> Judgement:
    """How a finding is judged: its rule's registry line says (growth for anything else)."""
    code = BY_CODE.get(diagnostic.code)
    return code.judgement if code is not None and code.judgement else Judgement.GROWTH


# -- matching findings to what ran ---------------------------------------------------------------


def _abs_site(file: str, line: int) -> Site:
    return (protocol.absolute(file), line)


def loop_site(diagnostic: Diagnostic) -> Site | None:
    """The header of the loop that repeats the finding, if the finding names one."""
    for related in diagnostic.related:
        if related.role is RelatedRole.LOOP:
            return _abs_site(related.file, related.start.line)
    return None


def judged_on_traces(diagnostic: Diagnostic) -> bool:
    """Whether a finding is judged on traces and calls rather than on counters sampled in a loop."""
    return judgement(diagnostic) in {Judgement.TRACES, Judgement.SIDE_EFFECT}


def watched_sites(diagnostic: Diagnostic) -> list[tuple[Site, bool]]:
    """The lines the child watches for a finding, and whether each is sampled with counters.

    Counters (each sample costs a ``gc.collect()``) are sampled only for growth findings: at
    their loop header, or at their own line when they name no loop.
    """
    loop = loop_site(diagnostic)
    own = _abs_site(diagnostic.file, diagnostic.start.line)
    sample = not judged_on_traces(diagnostic)
    if loop is None:
        return [(own, sample)]
    return [(own, False), (loop, sample)]


def find_code(diagnostic: Diagnostic, observations: Observations) -> CodeStats | None:
    """The code object a finding is about.

    Tried in order: the code object whose first line is the ``tf-function`` related location (a
    decorated function's code starts at its first decorator); the code objects created at the
    finding's line; the innermost code object that contains the finding's line.
    """
    candidates: list[CodeStats] = []
    for related in diagnostic.related:
        if related.role is RelatedRole.TF_FUNCTION:
            file, line = _abs_site(related.file, related.start.line)
            candidates = [s for s in observations.code.values() if s.key[:2] == (file, line)]
            candidates += [
                s for s in observations.code.values() if (file, line) in s.creation_sites
            ]
    own = _abs_site(diagnostic.file, diagnostic.start.line)
    if not candidates:
        candidates = [s for s in observations.code.values() if own in s.creation_sites]
    if not candidates:
        containing = [s for s in observations.code.values() if s.traces and s.contains(*own)]
        innermost = max((s.key[1] for s in containing), default=None)
        candidates = [s for s in containing if s.key[1] == innermost]
    return max(candidates, key=lambda s: (len(s.traces), s.calls), default=None)


def _iterations(observations: Observations, loop: Site) -> int:
    """Iterations a loop completed: its header runs once more, to find the loop is over."""
    return max(observations.hits.get(loop, 0) - 1, 0)


def _line_hits(diagnostic: Diagnostic, observations: Observations) -> int:
    return sum(observations.hits.get(site, 0) for site, _ in watched_sites(diagnostic))


# -- causes --------------------------------------------------------------------------------------


def _listed(values: list[str]) -> str:
    shown = ", ".join(values[:_MAX_LISTED])
    return shown + (", ..." if len(values) > _MAX_LISTED else "")


def describe_argument(name: str, params: list[Param]) -> str:
    """``argument `step` took 12 distinct Python int values`` and the like."""
    distinct = list(dict.fromkeys(param.repr for param in params))
    kinds = {param.kind for param in params}
    types = sorted({param.type for param in params if param.type})
    if kinds == {"Literal"}:
        return f"argument `{name}` took {len(distinct)} distinct Python {'/'.join(types)} values"
    if kinds == {"Weakref"}:
        kind = f" of type `{'/'.join(types)}`" if types else ""
        return f"argument `{name}` took {len(distinct)} distinct Python objects{kind}"
    shapes = list(dict.fromkeys(param.shape for param in params if param.shape))
    if len(shapes) > 1:
        return f"argument `{name}` took {len(shapes)} distinct shapes: {_listed(shapes)}"
    dtypes = list(dict.fromkeys(param.dtype for param in params if param.dtype))
    if len(dtypes) > 1:
        return f"argument `{name}` took {len(dtypes)} distinct dtypes: {_listed(dtypes)}"
    return f"argument `{name}` took {len(distinct)} distinct values ({_listed(sorted(kinds))})"


def _site_names(stats: CodeStats) -> str:
    sites = sorted(stats.creation_sites)
    return _listed([f"{Path(file).name}:{line}" for file, line in sites])


def retrace_cause(stats: CodeStats) -> str | None:
    """What changed between consecutive traces of one code object, most frequent first."""
    changed: dict[str, int] = {}
    new_objects = 0
    for previous, current in pairwise(stats.traces):
        if current.serial != previous.serial:
            new_objects += 1
            continue
        before = {param.name: param.repr for param in previous.params}
        for param in current.params:
            if before.get(param.name) != param.repr:
                changed[param.name] = changed.get(param.name, 0) + 1
    top = max(changed.values(), default=0)
    if new_objects and new_objects >= top:
        where = f" at {_site_names(stats)}" if stats.creation_sites else ""
        objects = max(stats.objects, new_objects + 1)
        return (
            f"{new_objects} retraces came from new tf.function objects ({objects} created{where})"
        )
    if not top:
        return None
    name = next(name for name, count in changed.items() if count == top)
    params = [param for trace in stats.traces for param in trace.params if param.name == name]
    return describe_argument(name, params)


# -- verdicts ------------------------------------------------------------------------------------


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


def _name(stats: CodeStats) -> str:
    return stats.key[2]


def not_run(diagnostic: Diagnostic, observations: Observations, run: RunEnding) -> Confirmation:
    """The verdict for a finding whose code never ran."""
    loop = loop_site(diagnostic)
    hits = observations.hits.get(loop, 0) if loop else 0
    evidence = (f"its loop header ran {hits} times, the flagged code never",) if hits else ()
    if run.normal:
        summary = "the code never ran while the target ran to its end"
        return Confirmation(Verdict.NOT_EXECUTED, summary, evidence=evidence)
    return Confirmation(
        Verdict.ERROR, f"the run {run.description} before this code ran", evidence=evidence
    )


def measure_retracing(stats: CodeStats) -> Confirmation:
    """The retracing verdict for one code object that ran."""
    traces, calls = stats.distinct_traces(), stats.calls
    cause = retrace_cause(stats)
    counted = f"`{_name(stats)}` traced {_times(traces)} in {calls} calls"
    if traces >= MIN_TRACES and traces >= MIN_RETRACE_RATIO * calls:
        summary = f"{counted}: {cause}" if cause else counted
        return Confirmation(Verdict.CONFIRMED, summary, traces=traces, calls=calls, cause=cause)
    if calls < MIN_CALLS:
        counted += f" (at least {MIN_CALLS} calls are needed to see retracing)"
    return Confirmation(Verdict.NOT_REPRODUCED, counted, traces=traces, calls=calls, cause=cause)


def judge_retracing(
    diagnostic: Diagnostic, observations: Observations, run: RunEnding
) -> Confirmation:
    stats = find_code(diagnostic, observations)
    own = _abs_site(diagnostic.file, diagnostic.start.line)
    if stats is None or not (stats.traces or stats.calls) or not observations.hits.get(own):
        if observations.eager:
            summary = "tf.config.run_functions_eagerly(True) disabled tracing: nothing to count"
            return Confirmation(Verdict.ERROR, summary)
        return not_run(diagnostic, observations, run)
    loop = loop_site(diagnostic)
    iterations = _iterations(observations, loop) if loop else None
    return dataclasses.replace(measure_retracing(stats), iterations=iterations)


def judge_side_effect(
    diagnostic: Diagnostic, observations: Observations, run: RunEnding
) -> Confirmation:
    stats = find_code(diagnostic, observations)
    if stats is None or not stats.calls:
        return not_run(diagnostic, observations, run)
    traces, calls, name = stats.distinct_traces(), stats.calls, _name(stats)
    if calls < MIN_SIDE_EFFECT_CALLS:
        summary = f"`{name}` was called once: its Python side effects ran as they would eagerly"
        return Confirmation(Verdict.NOT_REPRODUCED, summary, traces=traces, calls=calls)
    if traces < calls:
        cause = f"the Python body of `{name}` ran on {traces} of {calls} calls (only while tracing)"
    else:
        cause = f"`{name}` retraced on every call: each trace redid the side effect symbolically"
    summary = f"this side effect ran {_times(traces)} for {calls} calls of `{name}`"
    return Confirmation(Verdict.CONFIRMED, summary, traces=traces, calls=calls, cause=cause)


def counter_growth(values: list[tuple[int, float]]) -> tuple[float, float]:
    """Per-iteration growth and the fraction of steps that rose, for ``(hit, value)`` pairs."""
    (first_hit, first), (last_hit, last) = values[0], values[-1]
    per_iteration = (last - first) / max(last_hit - first_hit, 1)
    rises = sum(1 for (_, a), (_, b) in pairwise(values) if b > a)
    return per_iteration, rises / max(len(values) - 1, 1)


def judge_growth(
    diagnostic: Diagnostic, observations: Observations, run: RunEnding
) -> Confirmation:
    loop = loop_site(diagnostic)
    site = loop or _abs_site(diagnostic.file, diagnostic.start.line)
    iterations = _iterations(observations, site) if loop else observations.hits.get(site, 0)
    if not _line_hits(diagnostic, observations):
        return not_run(diagnostic, observations, run)
    taken = observations.samples.get(site, [])
    samples = taken[WARMUP_SAMPLES:]
    if len(samples) < MIN_GROWTH_STEPS + 1:
        needed = WARMUP_SAMPLES + MIN_GROWTH_STEPS + 1
        summary = f"only {len(taken)} samples ({iterations} iterations): {needed} measure growth"
        return Confirmation(Verdict.NOT_REPRODUCED, summary, iterations=iterations)
    growth: list[tuple[str, float]] = []
    growing: list[str] = []
    relevant = _COUNTERS_BY_FAMILY.get(diagnostic.code[:4], _EXACT_COUNTERS)
    for counter in (*_EXACT_COUNTERS, protocol.COUNTER_RSS_MB):
        values = [(s.hit, v) for s in samples if (v := s.counters.get(counter)) is not None]
        if len(values) < 2:
            continue
        per_iteration, rose = counter_growth(values)
        growth.append((counter, round(per_iteration, 3)))
        if (
            counter in relevant
            and per_iteration >= MIN_GROWTH_PER_ITERATION
            and rose >= MIN_RISE_FRACTION
        ):
            growing.append(f"+{per_iteration:g} {_COUNTER_LABELS[counter]} per iteration")
    rss = dict(growth).get(protocol.COUNTER_RSS_MB)
    evidence = (
        (f"process memory (RSS, supporting only): {rss:+.2f} MB per iteration",)
        if rss is not None
        else ()
    )
    steps = f"over {len(samples)} samples after {WARMUP_SAMPLES} warm-up iterations"
    if growing:
        summary = f"{'; '.join(growing)} {steps}"
        return Confirmation(
            Verdict.CONFIRMED,
            summary,
            iterations=iterations,
            cause=growing[0],
            growth=tuple(growth),
            evidence=evidence,
        )
    watched = ", ".join(_COUNTER_LABELS[c] for c in relevant)
    summary = f"no growth of {watched} {steps}"
    return Confirmation(
        Verdict.NOT_REPRODUCED,
        summary,
        iterations=iterations,
        growth=tuple(growth),
        evidence=evidence,
    )


def judge(diagnostic: Diagnostic, observations: Observations, run: RunEnding) -> Confirmation:
    """The verdict for one static finding."""
    kind = judgement(diagnostic)
    if kind is Judgement.TRACES:
        return judge_retracing(diagnostic, observations, run)
    if kind is Judgement.SIDE_EFFECT:
        return judge_side_effect(diagnostic, observations, run)
    return judge_growth(diagnostic, observations, run)
