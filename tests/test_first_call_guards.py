"""The state a first-call guard tests: its block runs until the block sets it."""

from __future__ import annotations

import ast

import pytest

from tflint_leaks.analysis.facts import first_run_state
from tflint_leaks.analysis.symbolic import from_ast


@pytest.mark.parametrize(
    ("test", "state"),
    [
        ("model is None", ("model",)),
        ("not self.model", ("self.model",)),
        ("key not in cache", ("cache",)),
        ("not key in cache", ("cache",)),
        # stylegan-tf2's model cache (unseen set P of stop 43).
        ("key not in self.models.keys()", ("self.models",)),
        ('not hasattr(self, "model")', ("self.*",)),
        # retinaface's `build_model` (unseen set M of stop 43): the module's namespace
        # holds the global once the block binds it.
        ('"model" not in globals()', ("model",)),
        ('not "model" in globals()', ("model",)),
        ("model is None or not ready", ("model", "ready")),
        # Not a first-call test: a namespace other than the module's, a key not known.
        ('"model" not in locals()', ()),
        ("name not in globals()", ()),
        ("model is not None", ()),
        ("key not in self.models.values()", ()),
    ],
)
def test_first_run_state(test: str, state: tuple[str, ...]) -> None:
    expression = ast.parse(test, mode="eval").body
    assert first_run_state(from_ast(expression)) == state
