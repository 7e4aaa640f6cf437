"""What the model, tape and dataset rules share: which canonical names build a Keras model,
clean up Keras' global state, create a ``tf.data`` pipeline or run a training step.

One source of truth for both passes: the ``ast`` project index (:mod:`.index`) asks these
predicates about the names a function calls, and the libcst rules ask them about call sites.
Every name here is canonical (see :func:`~tflint_leaks.analysis.names.canonical`).
"""

from __future__ import annotations

#: Classes whose instances are Keras models (a project class deriving from one is a model too).
MODEL_CLASSES = frozenset({"keras.Model", "keras.Sequential"})

#: Functions that return a new Keras model.
MODEL_LOADERS = frozenset(
    {
        "keras.models.load_model",
        "keras.models.clone_model",
        "keras.models.model_from_json",
        "keras.models.model_from_yaml",
        "keras.models.model_from_config",
        "keras.saving.deserialize_keras_object",
    }
)

_APPLICATIONS = "keras.applications."

#: Calls that reset Keras' global state (graphs, layer-name counters): real cleanup.
CLEAR_SESSION = frozenset({"keras.backend.clear_session"})

#: ``tf.data`` sources: each call makes a new pipeline (and, for in-memory data, embeds it).
DATASET_SOURCES = frozenset(
    {
        "tensorflow.data.Dataset.from_tensor_slices",
        "tensorflow.data.Dataset.from_tensors",
        "tensorflow.data.Dataset.from_generator",
        "tensorflow.data.Dataset.range",
        "tensorflow.data.Dataset.zip",
        "tensorflow.data.Dataset.list_files",
        "tensorflow.data.Dataset.load",
        "tensorflow.data.TFRecordDataset",
        "tensorflow.data.TextLineDataset",
        "tensorflow.data.FixedLengthRecordDataset",
        "tensorflow.data.experimental.make_csv_dataset",
    }
)

#: Methods of a ``tf.data.Dataset`` that return another dataset (a pipeline chain).
DATASET_METHODS = frozenset(
    {
        "batch",
        "cache",
        "filter",
        "map",
        "padded_batch",
        "prefetch",
        "repeat",
        "shard",
        "shuffle",
        "skip",
        "take",
        "unbatch",
        "interleave",
        "flat_map",
    }
)

#: Model methods that run training or inference on the model.
TRAINING_METHODS = frozenset(
    {"fit", "train_on_batch", "evaluate", "test_on_batch", "predict", "predict_on_batch"}
)

#: Calls that take a training step by hand (a custom training loop).
STEP_METHODS = frozenset({"gradient", "apply_gradients", "minimize"})
#: Calls that take a training step, by hand or through Keras.
TRAINING_STEPS = STEP_METHODS | frozenset({"fit", "train_on_batch"})


def builds_model(name: str) -> bool:
    """Whether calling the canonical ``name`` constructs or loads a Keras model."""
    if name in MODEL_CLASSES or name in MODEL_LOADERS:
        return True
    if name.startswith(_APPLICATIONS):
        # ``keras.applications.ResNet50`` / ``keras.applications.resnet.ResNet50``, not the
        # ``preprocess_input`` helpers.
        return name.rpartition(".")[2][:1].isupper()
    return False


def is_model_class(bases: tuple[str, ...]) -> bool:
    """Whether a class with these canonical bases is a Keras model."""
    return any(base in MODEL_CLASSES for base in bases)


#: Tape methods that compute a gradient from what the tape recorded.
GRADIENT_METHODS = frozenset({"gradient", "jacobian", "batch_jacobian"})
