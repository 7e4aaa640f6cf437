"""One module per output format; ``RENDERERS`` maps each ``--output-format`` name to it."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tflint_leaks.diagnostics import Diagnostic
from tflint_leaks.reporters import github, json, json_lines, junit, sarif, text

Renderer = Callable[[Sequence[Diagnostic]], str]

RENDERERS: dict[str, Renderer] = {
    "text": text.render,
    "json": json.render,
    "json-lines": json_lines.render,
    "sarif": sarif.render,
    "github": github.render,
    "junit": junit.render,
}
