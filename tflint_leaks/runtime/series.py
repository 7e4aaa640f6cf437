"""What the report charts for a finding: each counter sampled at its loop against iterations,
for a retracing finding its distinct traces against the calls made at its call site, and for a
tape finding what its tape held, run by run. The chart that carries the finding's evidence
comes first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tflint_leaks.runtime import protocol
from tflint_leaks.runtime.observations import Held, Observations, Site
from tflint_leaks.runtime.places import Place
from tflint_leaks.runtime.verdicts import (
    CHART_TAPE_KEPT,
    CHART_TAPE_RECORDS,
    CHART_TRACES,
    COUNTER_LABELS,
    Retraces,
    points,
    runs_of,
)

#: Every sampled counter, in the order charted, with its title.
CHART_TITLES = {
    **COUNTER_LABELS,
    protocol.COUNTER_TAPE_MB: "MB held by gradient tapes",
    protocol.COUNTER_TENSOR_MB: "MB of live eager tensors",
    protocol.COUNTER_RSS_MB: "process memory (RSS, MB)",
}


@dataclass(frozen=True)
class Series:
    """One chart: ``(x, y)`` points, x counting loop iterations, runs or calls; ``extent`` is
    the last x the axis covers (the last iteration or run, which a sample may not have hit)."""

    title: str
    x_label: str
    points: tuple[tuple[int, float], ...]
    key: str = ""
    extent: int | None = None


def sampled(observations: Observations, site: Site, loop: bool) -> list[Series]:
    """Each counter sampled at ``site`` (a loop header, or a finding's own line): at a loop
    header against the iterations completed (0 to the last), else against the line's runs."""
    samples = observations.samples.get(site, [])
    label = "iterations completed" if loop else "run"
    extent = runs_of(observations, site, loop)
    charts = []
    for counter, title in CHART_TITLES.items():
        found = tuple(points(samples, counter, loop))
        if found:
            charts.append(Series(title, label, found, counter, extent))
    return charts


def _runs(
    title: str, label: str, key: str, measured: Sequence[tuple[int, Held | None]], extent: int
) -> list[Series]:
    found = tuple((run, held[1]) for run, held in measured if held is not None)
    return [Series(title, label, found, key, extent)] if found else []


def tapes(observations: Observations, place: Place) -> list[Series]:
    """What a tape probe measured at the finding's line, per measured run: the MB a tape kept
    alive after its last use (TFL201), or the MB a tape recorded while the line ran (TFL202)."""
    runs = observations.hits.get(place.site, 0)
    label = "iteration" if place.loop is not None else "call"
    kept = [(run.run, run.kept()) for run in observations.tape_kept.get(place.site, [])]
    added = [(run.run, run.added()) for run in observations.tape_records.get(place.site, [])]
    return [
        *_runs("MB a tape kept alive after its last use", label, CHART_TAPE_KEPT, kept, runs),
        *_runs("MB recorded by tapes while the line ran", "run", CHART_TAPE_RECORDS, added, runs),
    ]


def traced(retraces: Retraces) -> Series:
    """Distinct traces (of the flagged argument's values, or objects) against calls: a step up
    at each call that traced something new, flat to the last call."""
    by_code = retraces.by_code
    calls = sorted(trace.ncall if by_code else trace.call for trace in retraces.distinct())
    points = [(0, 0.0), *((call, float(count)) for count, call in enumerate(calls, start=1))]
    if retraces.calls > points[-1][0]:
        points.append((retraces.calls, float(len(calls))))
    title = f"distinct traces of `{retraces.stats.key[2]}`"
    return Series(title, "call", tuple(points), CHART_TRACES)


def evidence_first(charts: Sequence[Series], evidence: str | None) -> tuple[Series, ...]:
    """``charts`` with the one that carries the finding's evidence first."""
    return tuple(sorted(charts, key=lambda chart: chart.key != evidence))
