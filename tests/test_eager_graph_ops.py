"""TFL503 where eager execution is on: a project pinned to TensorFlow 2 that never turns it off
builds graph nodes only with a graph made the default (TensorFlow 2.21: ``tf.executing_eagerly()``
is False inside ``with tf.compat.v1.Session():`` and ``with g.as_default():``, True inside ``with
sess.as_default():``, ``with writer.as_default():`` and everywhere else). Elsewhere an op in a loop
runs at once and keeps nothing, even when the loop reaches a session further on (nvae-tf's
evaluation: eager metrics per batch, an FID computed in a session after them)."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest

from tflint_leaks.config import Configuration, Overrides
from tflint_leaks.engine.runner import lint_paths

#: nvae-tf's ``evaluate_model``: eager ops per batch, and per temperature an FID computed in a
#: session of its own, whose block builds into the process's global graph on every call.
EVALUATE = """\
import tensorflow as tf


def evaluate_model(model, test_data, temperatures):
    for temperature in temperatures:
        for test_batch in test_data:
            for microbatch in tf.split(test_batch, 2):
                model.sample(n_samples=tf.shape(microbatch)[0])
        evaluate_fid(model, temperature)


def evaluate_fid(model, temperature):
    with tf.compat.v1.Session() as sess:
        return sess.run(tf.reduce_mean(model.sample(temperature)))
"""


def _found(root: Path, source: str, pins: str | None, jobs: int = 1) -> list[tuple[int, int]]:
    if pins is not None:
        (root / "requirements.txt").write_text(pins)
    (root / "evaluate.py").write_text(source)
    result = lint_paths([root], Configuration(Overrides(select=("TFL503",))), jobs=jobs)
    return [(d.start.line, d.start.column) for d in result.diagnostics]


@pytest.mark.parametrize("jobs", [1, 2])
def test_eager_ops_before_a_session_build_nothing(tmp_path: Path, jobs: int) -> None:
    """Only the op built in the session's block grows a graph (the global one, once per
    temperature: TensorFlow 2.21 counts 1, 2, 3 operations in ``sess.graph`` after three
    calls); ``tf.split`` and ``tf.shape`` run eagerly."""
    assert _found(tmp_path, EVALUATE, "tensorflow==2.3.0\n", jobs) == [(14, 25)]


def test_without_a_pin_every_op_may_build_nodes(tmp_path: Path) -> None:
    """A project that pins no TensorFlow may run TensorFlow 1, where every op is a node."""
    assert _found(tmp_path, EVALUATE, None) == [(7, 31), (8, 40), (14, 25)]


def test_eager_execution_turned_off_makes_every_op_a_node(tmp_path: Path) -> None:
    off = "import tensorflow as tf\n\ntf.compat.v1.disable_eager_execution()\n"
    source = EVALUATE.replace("import tensorflow as tf\n", off)
    assert _found(tmp_path, source, "tensorflow==2.3.0\n") == [(9, 31), (10, 40), (16, 25)]


#: A training loop run by its caller inside a session's block: the graph is the default there.
CALLED_IN_SESSION = """\
import tensorflow as tf


def train(sess, batches, logits, x):
    for batch in batches:
        sess.run(tf.round(tf.sigmoid(logits)), {x: batch})


def main(batches):
    x = tf.compat.v1.placeholder(tf.float32, [None])
    logits = tf.compat.v1.layers.dense(x, 1)
    with tf.compat.v1.Session() as sess:
        train(sess, batches, logits, x)
"""


@pytest.mark.parametrize(
    ("source", "found"),
    [
        (CALLED_IN_SESSION, [(6, 18)]),
        # The loop in the session's own block.
        (
            """\
            import tensorflow as tf

            with tf.compat.v1.Session() as sess:
                for batch in batches:
                    sess.run(tf.round(batch))
            """,
            [(5, 18)],
        ),
        # A graph made once and entered around the loop: it keeps every iteration's op.
        (
            """\
            import tensorflow as tf

            graph = tf.Graph()
            sess = tf.compat.v1.Session(graph=graph)
            with graph.as_default():
                for batch in batches:
                    sess.run(tf.round(batch))
            """,
            [(7, 18)],
        ),
        # The same through the session's graph.
        (
            """\
            import tensorflow as tf

            sess = tf.compat.v1.Session()
            with sess.graph.as_default():
                for batch in batches:
                    sess.run(tf.round(batch))
            """,
            [(6, 18)],
        ),
        # Neither a session made default nor a summary writer enters a graph.
        (
            """\
            import tensorflow as tf

            sess = tf.compat.v1.Session()
            writer = tf.summary.create_file_writer("logs")
            with sess.as_default(), writer.as_default():
                for step, batch in enumerate(batches):
                    tf.summary.scalar("mean", tf.reduce_mean(batch), step=step)
                    sess.run(fetches)
            """,
            [],
        ),
    ],
)
def test_a_graph_made_the_default_around_the_loop(
    tmp_path: Path, source: str, found: list[tuple[int, int]]
) -> None:
    assert _found(tmp_path, dedent(source), "tensorflow==2.3.0\n") == found


#: A placeholder built when the file is imported: with eager execution on, that line raises
#: (TensorFlow 2.21: "tf.placeholder() is not compatible with eager execution"), so whatever runs
#: after it runs in graph mode, wherever eager execution was turned off.
PLACEHOLDER_AT_IMPORT = """\
import tensorflow as tf

x = tf.compat.v1.placeholder(tf.float32, [None, 4])
logits = tf.compat.v1.layers.dense(x, 1)
sess = tf.compat.v1.Session()


def predict_all(samples):
    for sample in samples:
        yield sess.run(tf.round(tf.sigmoid(logits)), {x: sample})
"""


@pytest.mark.parametrize(
    ("source", "found"),
    [
        (PLACEHOLDER_AT_IMPORT, [(10, 24)]),
        # Built in a graph of its own, the placeholder says nothing of the default: the loop's
        # op runs eagerly.
        (
            PLACEHOLDER_AT_IMPORT.replace(
                "x = tf.compat.v1.placeholder(tf.float32, [None, 4])\n",
                "with tf.Graph().as_default():\n"
                "    x = tf.compat.v1.placeholder(tf.float32, [None, 4])\n",
            ),
            [],
        ),
    ],
)
def test_a_placeholder_built_at_import_means_graph_mode(
    tmp_path: Path, source: str, found: list[tuple[int, int]]
) -> None:
    assert _found(tmp_path, source, "tensorflow==2.15.0\n") == found
