"""Which canonical names add nodes to a TF1 graph, and which make a session."""

from __future__ import annotations

import pytest

from tflint_leaks.analysis.graph import builds_graph, is_session_source


@pytest.mark.parametrize(
    "name",
    [
        "tensorflow.assign",
        "tensorflow.compat.v1.assign",
        "tensorflow.round",
        "tensorflow.nn.softmax",
        "tensorflow.compat.v1.layers.dense",
        "tensorflow.summary.scalar",
        "tensorflow.Variable",
        "tensorflow.compat.v1.train.Saver",
        "tensorflow.compat.v1.global_variables_initializer",
        "tensorflow.train.import_meta_graph",
        "keras.backend.gradients",
        "keras.backend.function",
        "keras.backend.mean",
        "tensorflow.python.ops.state_ops.assign",
    ],
)
def test_builds_graph(name: str) -> None:
    assert builds_graph(name)


@pytest.mark.parametrize(
    "name",
    [
        "tensorflow",
        "tensorflow.Session",
        "tensorflow.Summary",
        "tensorflow.compat.v1.trainable_variables",
        "tensorflow.get_variable",
        "tensorflow.compat.v1.get_default_graph",
        "tensorflow.random_normal_initializer",
        "tensorflow.train.latest_checkpoint",
        "tensorflow.io.gfile.exists",
        "tensorflow.data.Dataset.from_tensor_slices",
        "tensorflow.function",
        "keras.backend.get_session",
        "keras.backend.set_value",
        # Keras 1 and 2.0's name for `image_data_format`: "th" or "tf" (Keras-frcnn calls it
        # per image, also through `keras.backend.common`).
        "keras.backend.image_dim_ordering",
        "keras.backend.common.image_dim_ordering",
        "keras.backend.set_image_dim_ordering",
        "keras.layers.Dense",
        "numpy.round",
        "tensorflow.python.platform.tf_logging.warning",
        "tensorflow.compat.v1.logging.info",
        # A string attribute's method (tensorrec: `tf.__version__.split(".")`).
        "tensorflow.__version__.split",
        # TensorBoard's projector: a protocol buffer, and a config file written to the logdir
        # (Tacotron-2 calls it every `embedding_interval` steps).
        "tensorflow.contrib.tensorboard.plugins.projector.visualize_embeddings",
        "tensorflow.compat.v1.contrib.tensorboard.plugins.projector.visualize_embeddings",
    ],
)
def test_adds_no_node(name: str) -> None:
    assert not builds_graph(name)


def test_session_sources() -> None:
    assert is_session_source("tensorflow.compat.v1.Session")
    assert is_session_source("keras.backend.get_session")
    assert not is_session_source("tensorflow.Graph")
