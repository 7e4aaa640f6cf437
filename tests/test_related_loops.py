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


AGENT = textwrap.dedent(
    """\
    import tensorflow as tf


    class Agent:
        def __init__(self):
            self.actor = tf.keras.models.load_model("actor.keras")
            self.critic = tf.keras.models.load_model("critic.keras")

        def replay(self, batch):
            actions = self.actor.predict(batch)
            return self.critic.predict([batch, actions])
    """
)

TRAIN = textwrap.dedent(
    """\
    from agent import Agent

    agent = Agent()
    for step in range(10000):
        agent.replay(sample())
    """
)


def test_tfl402_names_every_predict_a_call_runs_in_other_files(tmp_path: Path) -> None:
    """Failed before (gym-ddpg-keras, breadth set b): a call in the loop runs two `predict`s
    of another module, and the finding at the call named only the first (one finding per
    place, the second dropped); now its message counts the other and `related` points at
    both."""
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "train.py").write_text(TRAIN)
    result = lint_paths([tmp_path], Settings(select=("TFL402",)), jobs=1)
    [finding] = result.diagnostics
    assert (finding.file, finding.start.line, finding.start.column) == (
        str(tmp_path / "train.py"),
        5,
        5,
    )
    assert finding.message == (
        "`self.actor.predict` (and 1 more `predict` call) through `replay` every iteration "
        "(10000 in all) builds a new `tf.data` pipeline each call; use "
        "`self.actor(x, training=False)` or `predict_on_batch`"
    )
    related = [(r.message, Path(r.file).name, r.start.line) for r in finding.related]
    assert related == [
        ("`predict` is called here", "agent.py", 10),
        ("`predict` is called here", "agent.py", 11),
        ("repeated by this loop", "train.py", 4),
    ]
