"""Loops that a counter ends: ``n += 1`` and ``if n > limit: break`` in the body bound the
loop's trip count, which the loop rules weigh against ``max-loop-iterations`` (default 10) and
say when they speak. Each row is a loop that builds a Keras model per iteration (TFL401)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tflint_leaks.config import Settings
from tflint_leaks.engine.runner import lint_paths

BUILD = "    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"
FOUND = (
    "`tf.keras.Sequential` builds a new Keras model every iteration{count} and the loop never "
    "calls `clear_session()`; Keras' global state grows with each model (`del` and "
    "`gc.collect()` do not release it)"
)


def _loop(init: str, header: str, *body: str) -> str:
    lines = "".join(f"    {line}\n" for line in body)
    return f"import tensorflow as tf\n\n{init}\n{header}\n{BUILD}{lines}"


@pytest.mark.parametrize(
    ("source", "count"),
    [
        # increment before the check: n is 1..11 at the checks, the 11th iteration breaks
        (_loop("n = 0", "while True:", "n += 1", "if n > 11:", "    break"), " (12 in all)"),
        (_loop("n = 0", "while True:", "n += 1", "if n >= 11:", "    break"), " (11 in all)"),
        (_loop("n = 0", "while True:", "n += 1", "if n > 10:", "    break"), " (11 in all)"),
        (_loop("n = 0", "while True:", "n += 1", "if n >= 10:", "    break"), None),
        (_loop("n = 0", "while True:", "n += 1", "if n >= 11: break"), " (11 in all)"),
        # check before the increment: one iteration more
        (_loop("n = 0", "while True:", "if n >= 11:", "    break", "n += 1"), " (12 in all)"),
        (_loop("n = 0", "while True:", "if n >= 10:", "    break", "n += 1"), " (11 in all)"),
        (_loop("n = 5", "while True:", "n += 1", "if n == 20:", "    break"), " (15 in all)"),
        # a body that ends by leaving the loop runs once, unless a `continue` skips the end
        (_loop("", "while True:", "model.fit(x)", "break"), None),
        (_loop("", "for x in data:", "model.fit(x)", "raise StopIteration"), None),
        (_loop("", "for x in data:", "if bad(x):", "    continue", "break"), ""),
        (_loop("", "while True:", "if done():", "    break"), ""),
        # a slice of a literal list holds at most its items, whatever it keeps
        (_loop("AUGS = [1, 2, 3, 4, 5, 6, 7, 8]", "for i in range(len(AUGS[: n + 1])):"), None),
        (
            _loop("AUGS = list(range(12))", "for i in range(len(AUGS[: n + 1])):"),
            " (up to 12 in all)",
        ),
        # the smaller of the iterable's length and the counter's bound
        (_loop("n = 0", "for x in range(3):", "n += 1", "if n > 50:", "    break"), None),
        (_loop("n = 0", "for x in data:", "n += 1", "if n > 50:", "    break"), " (51 in all)"),
        # no bound: equality already passed, a `continue` that can skip the increment, a counter
        # set twice before, an increment inside an `if`, a step other than 1, a non-constant limit
        (_loop("n = 5", "while True:", "n += 1", "if n == 3:", "    break"), ""),
        (
            _loop(
                "n = 0",
                "while True:",
                "if skip():",
                "    continue",
                "n += 1",
                "if n > 3:",
                "    break",
            ),
            "",
        ),
        (_loop("n = 0\nn = 1", "while True:", "n += 1", "if n > 3:", "    break"), ""),
        # set once for all the runs of an inner loop: it does not start again
        (
            "import tensorflow as tf\n\nn = 0\nfor epoch in range(3):\n    while True:\n"
            "        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"
            "        n += 1\n        if n == 2:\n            break\n",
            "",
        ),
        (_loop("n = 0", "while True:", "if ok():", "    n += 1", "if n > 3:", "    break"), ""),
        (_loop("n = 0", "while True:", "n += 2", "if n > 3:", "    break"), ""),
        (_loop("n = 0", "while True:", "n += 1", "if n > limit():", "    break"), ""),
        (_loop("n = 0", "while True:", "n += 1", "if n > 3:", "    print(n)"), ""),
    ],
)
def test_a_counter_that_breaks_the_loop_bounds_it(
    tmp_path: Path, source: str, count: str | None
) -> None:
    path = tmp_path / "search.py"
    path.write_text(textwrap.dedent(source))
    found = [
        (d.code, d.start.line, d.start.column, d.message)
        for d in lint_paths([path], Settings(select=("TFL401",))).diagnostics
    ]
    line, column = next(
        (number, text.index("tf.keras") + 1)
        for number, text in enumerate(source.split("\n"), start=1)
        if "Sequential" in text
    )
    assert found == ([] if count is None else [("TFL401", line, column, FOUND.format(count=count))])


def _counted(init: str, header: str, *body: str) -> str:
    lines = "".join(f"    {line}\n" for line in body)
    return f"import tensorflow as tf\n\n{init}\n{header}\n{lines}{BUILD}"


@pytest.mark.parametrize(
    ("source", "count"),
    [
        # every iteration adds to the counter the test keeps below the limit
        (_counted("n = 0", "while n < 12:", "n += 1"), " (12 in all)"),
        (_loop("n = 0", "while n < 12:", "n += 1"), " (12 in all)"),  # built before adding
        (_counted("n = 0", "while n <= 12:", "n += 1"), " (13 in all)"),
        (_counted("n = 0", "while 30 > n:", "n += 3"), None),  # 10 iterations
        (_counted("n = 5", "while n < 45 and alive():", "n += 2"), " (20 in all)"),
        (_counted("n = 0", "while n < 30:", "if ok():", "    break", "n += 1"), " (30 in all)"),
        # what a `continue` skips before adding is not counted: the built ones are
        (
            _counted("n = 2", "while n < 9:", "if ok():", "    n += 1", "else:", "    continue"),
            None,
        ),
        (
            _counted(
                "n = 0",
                "while n < 50:",
                "if a():",
                "    n += 1",
                "elif b():",
                "    break",
                "else:",
                "    continue",
            ),
            " (50 in all)",
        ),
        # no bound: an iteration that does not add, a counter that also goes down, one set
        # twice before, a limit not known, a `continue` that may skip adding
        (_counted("n = 0", "while n < 5:", "if ok():", "    n += 1"), ""),
        (_counted("n = 0", "while n < 5:", "n += 1", "if bad():", "    n -= 1"), ""),
        (_counted("n = 0\nn = 1", "while n < 5:", "n += 1"), ""),
        (_counted("n = 0", "while n < limit():", "n += 1"), ""),
        (_loop("n = 0", "while n < 5:", "if ok():", "    continue", "n += 1"), ""),
    ],
)
def test_a_counter_that_the_while_test_keeps_below_a_limit_bounds_it(
    tmp_path: Path, source: str, count: str | None
) -> None:
    test_a_counter_that_breaks_the_loop_bounds_it(tmp_path, source, count)


BUFFER = """\
import tensorflow as tf


class Buffer:
    def __init__(self, batch_size=64):
        self.batch_size = batch_size

    def learn(self, x, w):
        for k in range(1, self.batch_size):
            with tf.GradientTape(persistent=True) as tape:
                y = x[k] * w
            first = tape.gradient(y, w)
            second = tape.gradient(first, w)
            w.assign_sub(second)
            evaluate(w)


buffer = Buffer({size})
"""


@pytest.mark.parametrize(
    ("source", "lines"),
    [
        (BUFFER.format(size=1), []),  # ``range(1, 1)``: the tape is never made
        (BUFFER.format(size=32), [10]),
        # The emptiness of a list is not trusted: what fills it may not be seen.
        (BUFFER.format(size=1).replace("range(1, self.batch_size)", "[]"), [10]),
    ],
)
def test_the_body_of_a_loop_over_an_empty_range_is_not_linted(
    tmp_path: Path, source: str, lines: list[int]
) -> None:
    """Every construction passes ``batch_size=1``: ``for k in range(1, self.batch_size):``
    never runs its body, so nothing in it is reported."""
    (tmp_path / "buffer.py").write_text(source)
    result = lint_paths([tmp_path], Settings(select=("TFL201",)), jobs=1)
    assert [(d.code, d.start.line, d.start.column) for d in result.diagnostics] == [
        ("TFL201", line, 18) for line in lines
    ]


MILESTONES = """\
import tensorflow as tf

milestones = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120]
for epoch in range(1000):
    if {test}:
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
{more}"""


@pytest.mark.parametrize(
    ("test", "more", "count"),
    [
        # a literal's items, a name's twelve
        ("epoch in (100, 200, 300)", "", None),
        ("epoch in milestones", "", "every 83rd iteration (12 in all)"),
        ("epoch in milestones or epoch == 0", "", "every 76th iteration (13 in all)"),
        # a container the loop adds to, an item that is not the loop's counter
        (
            "epoch in milestones",
            "    milestones.append(epoch + 5)\n",
            "every iteration (1000 in all)",
        ),
        ("model_id in milestones", "", "every iteration (1000 in all)"),
    ],
)
def test_a_milestone_test_runs_its_block_once_per_milestone(
    tmp_path: Path, test: str, more: str, count: str | None
) -> None:
    """``if epoch in milestones:`` holds on one iteration per item of a container the loop
    does not change, whatever else the loop does."""
    path = tmp_path / "schedule.py"
    path.write_text(MILESTONES.format(test=test, more=more))
    found = [
        (d.code, d.start.line, d.start.column, d.message)
        for d in lint_paths([path], Settings(select=("TFL401",))).diagnostics
    ]
    message = FOUND.format(count="").replace("every iteration", count or "")
    assert found == ([] if count is None else [("TFL401", 6, 17, message)])
