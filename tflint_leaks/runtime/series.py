"""What the report charts for a finding: each counter sampled at its loop against iterations,
and for a retracing finding its distinct traces against the calls made at its call site."""

from __future__ import annotations

from dataclasses import dataclass

from tflint_leaks.runtime import protocol
from tflint_leaks.runtime.observations import Observations, Site
from tflint_leaks.runtime.verdicts import COUNTER_LABELS, Retraces

#: Every sampled counter, in the order charted, with its title.
CHART_TITLES = {
    **COUNTER_LABELS,
    protocol.COUNTER_TAPE_MB: "MB held by gradient tapes",
    protocol.COUNTER_TENSOR_MB: "MB of live eager tensors",
    protocol.COUNTER_RSS_MB: "process memory (RSS, MB)",
}


@dataclass(frozen=True)
class Series:
    """One chart: ``(x, y)`` points, x counting loop iterations or calls."""

    title: str
    x_label: str
    points: tuple[tuple[int, float], ...]


def sampled(observations: Observations, site: Site) -> list[Series]:
    """Each counter sampled at ``site`` (a loop header, or a finding's own line)."""
    samples = observations.samples.get(site, [])
    charts = []
    for counter, title in CHART_TITLES.items():
        points = tuple(
            (sample.hit, value)
            for sample in samples
            if (value := sample.counters.get(counter)) is not None
        )
        if points:
            charts.append(Series(title, "loop iteration", points))
    return charts


def traced(retraces: Retraces) -> Series:
    """Distinct traces (of the flagged argument's values, or objects) against calls: a step up
    at each call that traced something new, flat to the last call."""
    by_code = retraces.by_code
    calls = sorted(trace.ncall if by_code else trace.call for trace in retraces.distinct())
    points = [(0, 0.0), *((call, float(count)) for count, call in enumerate(calls, start=1))]
    if retraces.calls > points[-1][0]:
        points.append((retraces.calls, float(len(calls))))
    return Series(f"distinct traces of `{retraces.stats.key[2]}`", "call", tuple(points))
