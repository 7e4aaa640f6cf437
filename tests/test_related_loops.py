"""The loop a finding names as what repeats it is the one that does."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tflint_leaks.config import Settings
from tflint_leaks.engine.runner import lint_paths

SEARCH = textwrap.dedent(
    """\
    import tensorflow as tf

    for trial in study:
        model = tf.keras.Sequential([tf.keras.layers.Dense(trial.units)])
        model.compile("adam", "mse")
        for epoch in range(epochs):
            model.fit(x, y, epochs=1)
    """
)


def test_tfl403_names_the_loop_that_builds_the_model(tmp_path: Path) -> None:
    """Failed before (sherpa's notebooks, unseen set M of stop 43): the model is made anew
    each trial and fitted once per epoch of an inner loop; the finding named the epoch loop
    (line 6), which makes no model, as the loop repeating it."""
    (tmp_path / "search.py").write_text(SEARCH)
    result = lint_paths([tmp_path], Settings(select=("TFL403",)), jobs=1)
    [finding] = result.diagnostics
    assert (finding.code, finding.start.line, finding.start.column) == ("TFL403", 7, 9)
    loops = [(r.message, r.start.line, r.start.column) for r in finding.related]
    assert loops == [("repeated by this loop", 3, 1)]
