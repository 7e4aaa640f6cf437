"""One module per output format, named after it (``json-lines`` -> ``json_lines.py``), each with
a ``render(diagnostics) -> str``. Modules are imported when used, so that ``--version`` and
``--help`` do not pay for them."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tflint_leaks.diagnostics import Diagnostic

FORMATS = ("text", "json", "json-lines", "sarif", "github", "junit")


def render(output_format: str, diagnostics: Sequence[Diagnostic]) -> str:
    """``diagnostics`` in ``output_format`` (one of :data:`FORMATS`)."""
    if output_format not in FORMATS:
        raise ValueError(f"unknown output format {output_format!r}")
    module = importlib.import_module(f"tflint_leaks.reporters.{output_format.replace('-', '_')}")
    text: str = module.render(diagnostics)
    return text
