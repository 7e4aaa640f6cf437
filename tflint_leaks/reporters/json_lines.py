"""JSON Lines output: one finding per line, the same objects as the ``json`` format."""

from __future__ import annotations

import json
from collections.abc import Sequence

from tflint_leaks.diagnostics import Diagnostic
from tflint_leaks.reporters.json import diagnostic_to_json


def render(diagnostics: Sequence[Diagnostic]) -> str:
    return "".join(json.dumps(diagnostic_to_json(d)) + "\n" for d in diagnostics)
