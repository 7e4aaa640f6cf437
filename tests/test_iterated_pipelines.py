"""Which data-free ``tf.data`` pipelines a body only iterates (``Body.iterated_pipelines``):
TFL404 leaves those alone, since made and iterated eagerly they copy and trace nothing."""

from __future__ import annotations

import ast
from pathlib import Path
from textwrap import dedent

import pytest

from tflint_leaks.analysis.index import index_source
from tflint_leaks.analysis.symbolic import from_ast


def _iterated(tmp_path: Path, source: str) -> dict[str, list[str]]:
    """Per body with any (the module's is ""), each source called, with its argument count."""
    path = tmp_path / "pipelines.py"
    path.write_text(dedent(source))
    module = index_source(path.read_text(), path)
    bodies = {"": module.body, **{name: f.body for name, f in module.functions.items()}}
    return {
        name: sorted(f"{e.func.text}/{len(e.positional)}" for e in body.iterated_pipelines)
        for name, body in bodies.items()
        if body.iterated_pipelines
    }


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # Stepped through names, then iterated: the only use.
        (
            """
            import tensorflow as tf

            def passes(n, shuffle):
                ds = tf.data.Dataset.range(n)
                if shuffle:
                    ds = ds.shuffle(100)
                ds = ds.batch(8).prefetch(1)
                for index in ds:
                    print(index)
            """,
            {"passes": ["tf.data.Dataset.range/1"]},
        ),
        # Returned, passed on through another name, mapped over: each may be traced or kept.
        (
            """
            import tensorflow as tf

            def made(n):
                return tf.data.Dataset.range(n).batch(8)

            def handed(model, n):
                ds = tf.data.Dataset.range(n)
                batches = ds.batch(8)
                model.evaluate(batches)

            def mapped(n):
                for x in tf.data.Dataset.range(n).map(load):
                    print(x)
            """,
            {},
        ),
        # The same expression twice in one body, one of them handed to Keras: neither.
        (
            """
            import tensorflow as tf

            def twice(model, n):
                for index in tf.data.Dataset.range(n):
                    print(index)
                model.predict(tf.data.Dataset.range(n))
            """,
            {},
        ),
        # A module's names and a function's globals are read by other code; a loop's
        # iterable at the module's top level is not.
        (
            """
            import tensorflow as tf

            shared = tf.data.TFRecordDataset(files).batch(4)
            for record in tf.data.TFRecordDataset(["a.tfrecord"]).batch(4):
                print(record)

            def refill(n):
                global pool
                pool = tf.data.Dataset.range(n)
                for index in pool:
                    print(index)
            """,
            {"": ["tf.data.TFRecordDataset/1"]},
        ),
    ],
)
def test_only_a_pipeline_nothing_else_reads_is_iterated(
    tmp_path: Path, source: str, expected: dict[str, list[str]]
) -> None:
    assert _iterated(tmp_path, source) == expected


def test_the_expression_is_the_call_of_the_source(tmp_path: Path) -> None:
    call = ast.parse("tf.data.Dataset.range(n)", mode="eval").body
    found = _iterated(
        tmp_path, "import tensorflow as tf\nfor i in tf.data.Dataset.range(n):\n    pass\n"
    )
    assert found == {"": ["tf.data.Dataset.range/1"]}
    path = tmp_path / "pipelines.py"
    assert index_source(path.read_text(), path).body.iterated_pipelines == (from_ast(call),)
