"""Options rules read (``[tool.tflint-leaks]`` keys that change what a rule reports)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RuleOptions:
    #: A Python value taking at most this many distinct values over a loop (a short literal
    #: list of hyperparameters, ``range(3)``) retraces a bounded number of times: not flagged.
    max_python_values: int = 5
