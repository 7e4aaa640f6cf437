"""``confirm --report report.html``: one self-contained HTML file to look at.

Per finding: where it is, its verdict, summary and cause, and a small chart of each counter
sampled at its loop (and RSS) against loop iterations; a retracing finding adds its distinct
traces against the calls made at its call site. Charts are inline SVG drawn here, so the page
runs no JavaScript and loads nothing: its Content-Security-Policy forbids every fetch.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from tflint_leaks.diagnostics import Diagnostic, Verdict
from tflint_leaks.reporters.text import location
from tflint_leaks.runtime.confirm import ConfirmResult
from tflint_leaks.runtime.series import Series

#: Chart geometry (px): the plot sits inside the margins of a WIDTH x HEIGHT box.
WIDTH, HEIGHT = 300, 150
LEFT, RIGHT, TOP, BOTTOM = 44, 10, 22, 30
#: The colour of each chart's line, in turn; tests look for these pixels in a screenshot.
LINE_COLOURS = ("#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf")
VERDICT_COLOURS = {
    Verdict.CONFIRMED: "#b3261e",
    Verdict.NOT_REPRODUCED: "#1b6e3a",
    Verdict.NOT_EXECUTED: "#5f6368",
    Verdict.ERROR: "#8a5a00",
}

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1000px;
       color: #202124; }
h1 { font-size: 20px; margin: 0 0 4px; }
.run { color: #5f6368; margin-bottom: 20px; }
.finding { border: 1px solid #dadce0; border-radius: 6px; padding: 12px 16px; margin: 0 0 16px; }
.where { font-family: ui-monospace, monospace; font-size: 13px; }
.verdict { color: #fff; border-radius: 4px; padding: 1px 8px; font-weight: 600; }
.charts { display: flex; flex-wrap: wrap; gap: 8px; margin-top: 8px; }
svg { background: #fff; border: 1px solid #eee; }
ul { margin: 4px 0; padding-left: 20px; color: #5f6368; }
"""


def _number(value: float) -> str:
    return f"{value:.3g}" if isinstance(value, float) and not value.is_integer() else f"{value:g}"


def chart(series: Series, colour: str) -> str:
    """An SVG line chart of ``series``, with its first and last x and its y range labelled."""
    xs = [x for x, _ in series.points]
    ys = [y for _, y in series.points]
    x0, x1 = min(xs), max(*xs, series.extent or 0)
    y0, y1 = min(ys), max(ys)
    span_x, span_y = (x1 - x0) or 1, (y1 - y0) or 1
    inner_w, inner_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def at(x: float, y: float) -> tuple[str, str]:
        px = LEFT + (x - x0) / span_x * inner_w
        py = TOP + inner_h - (y - y0) / span_y * inner_h
        return f"{px:.1f}", f"{py:.1f}"

    placed = [at(x, y) for x, y in series.points]
    points = " ".join(f"{px},{py}" for px, py in placed)
    dots = "".join(f'<circle cx="{px}" cy="{py}" r="2.5" fill="{colour}"/>' for px, py in placed)
    bottom = TOP + inner_h
    return (
        f'<svg class="chart" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'role="img" aria-label="{escape(series.title)}">'
        f'<text x="{LEFT}" y="14" font-size="12">{escape(series.title)}</text>'
        f'<line x1="{LEFT}" y1="{bottom}" x2="{WIDTH - RIGHT}" y2="{bottom}" stroke="#999"/>'
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{bottom}" stroke="#999"/>'
        f'<text x="{LEFT - 4}" y="{TOP + 4}" font-size="10" text-anchor="end">{_number(y1)}</text>'
        f'<text x="{LEFT - 4}" y="{bottom}" font-size="10" text-anchor="end">{_number(y0)}</text>'
        f'<text x="{LEFT}" y="{bottom + 12}" font-size="10">{x0}</text>'
        f'<text x="{WIDTH - RIGHT}" y="{bottom + 12}" font-size="10" text-anchor="end">{x1}</text>'
        f'<text x="{LEFT + inner_w / 2:.0f}" y="{HEIGHT - 4}" font-size="10" '
        f'text-anchor="middle">{escape(series.x_label)}</text>'
        f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>'
        f"{dots}</svg>"
    )


def _finding(diagnostic: Diagnostic, charts: Sequence[Series]) -> str:
    confirmation = diagnostic.confirmation
    parts = [
        '<section class="finding">',
        f'<div class="where">{escape(location(diagnostic))} <b>{escape(diagnostic.code)}</b> '
        f"{escape(diagnostic.name)}</div>",
        f"<p>{escape(diagnostic.message)}</p>",
    ]
    if confirmation is not None:
        colour = VERDICT_COLOURS[confirmation.verdict]
        parts.append(
            f'<p><span class="verdict" style="background:{colour}">'
            f"{escape(confirmation.verdict.value)}</span> {escape(confirmation.summary)}</p>"
        )
        if confirmation.cause:
            parts.append(f"<p>Cause: {escape(confirmation.cause)}</p>")
        if confirmation.evidence:
            items = "".join(f"<li>{escape(line)}</li>" for line in confirmation.evidence)
            parts.append(f"<ul>{items}</ul>")
    if charts:
        drawn = "".join(
            chart(series, LINE_COLOURS[index % len(LINE_COLOURS)])
            for index, series in enumerate(charts)
        )
        parts.append(f'<div class="charts">{drawn}</div>')
    parts.append("</section>")
    return "".join(parts)


def render(result: ConfirmResult, target: str) -> str:
    """The whole report for ``result``, a run of ``target``."""
    run = result.run
    notes = "".join(f"<li>{escape(note)}</li>" for note in run.notes)
    findings = "".join(
        _finding(diagnostic, charts)
        for diagnostic, charts in zip(result.diagnostics, result.charts, strict=True)
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>tflint-leaks confirm: {escape(target)}</title>"
        f"<style>{_STYLE}</style></head><body>"
        f"<h1>tflint-leaks confirm {escape(target)}</h1>"
        f'<div class="run">target {escape(run.status)}: {escape(run.description)} · '
        f"{run.duration_s:g} s · TensorFlow {escape(run.tensorflow or 'not started')}"
        f"{f'<ul>{notes}</ul>' if notes else ''}</div>"
        f"{findings or '<p>No findings.</p>'}"
        "</body></html>\n"
    )
