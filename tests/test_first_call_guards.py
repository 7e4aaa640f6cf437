"""The state a first-call guard tests: its block runs until the block sets it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tflint_leaks.analysis.facts import first_run_state
from tflint_leaks.analysis.index import index_source
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


@pytest.mark.parametrize(
    ("body", "keyed"),
    [
        # alpha-zero-general's MCTS: the key is computed from the board the call is given.
        (
            "s = game.key(board)\n    if s not in self.Ps:\n        self.Ps[s] = predict(board)",
            [(6, ("board",))],
        ),
        # the other block of a presence test, keyed by two parameters; whether it runs per
        # call is the solver's question (what they hold: a name is no data)
        (
            "if (name, size) in cache:\n        pass\n    else:\n        cache[name] = load(name)",
            [(7, ("name", "size"))],
        ),
        # a key of the function's own making, or the instance's
        ("if 'model' not in CACHE:\n        CACHE['model'] = load()", []),
        ("if self.name not in CACHE:\n        CACHE[self.name] = load()", []),
    ],
)
def test_a_lookup_keyed_by_what_the_call_is_given(
    body: str, keyed: list[tuple[int, tuple[str, ...]]]
) -> None:
    source = f"CACHE = {{}}\n\ndef search(self, board, name, size, cache):\n    {body}\n"
    module = index_source(source, Path("m.py"))
    found = module.functions["search"].body.keyed
    assert [(span.line, names) for span, names in found] == keyed


FID = """\
import tensorflow as tf

class Trainer:
    def fid(self, images, noise):
        @tf.function
        def inception(x):
            return self.inception(x)

        @tf.function
        def real(x):
            return self.strategy.run(inception, args=(x,))

        @tf.function
        def fake(z):
            return self.strategy.run(inception, args=(self.generator(z),))

        @tf.function
        def unused(x):
            return x

        {first}
        {every}
"""


@pytest.mark.parametrize(
    ("first", "every", "lines"),
    [
        # `fake` runs `inception`: both trace on every call
        ("", "return fake(noise)", [5, 13]),
        # used only while the guard's block runs, until it sets its state
        (
            "if not self.ready:\n            self.mu = real(images)\n            self.ready = True",
            "return self.mu",
            [],
        ),
        ("if not self.ready:\n            self.ready = True", "return real(images)", [5, 9]),
        # handed on, it may be called anywhere
        ("", "return [real, unused]", [5, 9, 17]),
    ],
)
def test_a_nested_tf_function_is_made_anew_where_it_is_used(
    first: str, every: str, lines: list[int]
) -> None:
    """A ``tf.function`` defined in a method traces where it is used: never, when nothing
    uses it, and once, when only the first call uses it (directly, or through another one
    that runs it); each call's new one is then no new trace."""
    module = index_source(FID.format(first=first, every=every), Path("m.py"))
    created = module.functions["Trainer.fid"].creates_tf_function
    assert sorted(span.line for span in created) == lines
