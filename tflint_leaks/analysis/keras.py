"""What the model, tape and dataset rules share: which canonical names build a Keras model,
clean up Keras' global state, create a ``tf.data`` pipeline or run a training step.

One source of truth for both passes: the ``ast`` project index (:mod:`.index`) asks these
predicates about the names a function calls, and the libcst rules ask them about call sites.
Every name here is canonical (see :func:`~tflint_leaks.analysis.names.canonical`).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from tflint_leaks.analysis.symbolic import Expr, Op

#: Classes whose instances are Keras models (a project class deriving from one is a model too).
MODEL_CLASSES = frozenset({"keras.Model", "keras.Sequential"})

#: Classes whose instances own variables of their own (a model or layer, a ``tf.Module`` such
#: as a GPflow model): a ``tf.function`` traced for one must trace again for another.
VARIABLE_OWNERS = frozenset({"tensorflow.Module", "keras.layers.Layer", "keras.Layer"})

#: A model's (or layer's) attributes that hold tensors it already has.
MODEL_TENSORS = frozenset({"input", "inputs", "output", "outputs"})
#: A layer's methods that return tensors it already has: its input or output at one of the
#: nodes where it was called (``layer.get_output_at(0)``).
LAYER_TENSOR_METHODS = frozenset({"get_input_at", "get_output_at"})

#: Functions that return a new Keras model (every namespace canonicalises to ``keras.``: tf.keras,
#: standalone Keras 2, Keras 3, tf_keras), and TensorFlow's SavedModel loader. Not
#: ``deserialize_keras_object`` or ``layers.deserialize``: they build whatever the configuration
#: names, most often a layer, a callback or an optimizer.
MODEL_LOADERS = frozenset(
    {
        "keras.models.load_model",
        "keras.models.clone_model",
        "keras.models.model_from_json",
        "keras.models.model_from_yaml",
        "keras.models.model_from_config",
        "tensorflow.saved_model.load",
        "keras.experimental.load_from_saved_model",
    }
)

#: The class method that builds a model from its configuration (``Model.from_config(cfg)``,
#: ``Sequential.from_config``, a project model class's).
FROM_CONFIG = "from_config"

#: Model methods that run inference through ``predict``'s machinery (in TF2 a new ``tf.data``
#: pipeline and function traces every call); the Keras 2 spellings included.
PREDICT_METHODS = frozenset({"predict", "predict_classes", "predict_proba", "predict_generator"})
#: ``K.function(inputs, outputs)``: it adds the graph's nodes, and returns a callable that runs
#: them (:data:`GRAPH_FUNCTION_MADE`, a value's canonical name: calling it runs the graph).
GRAPH_FUNCTION = "keras.backend.function"
GRAPH_FUNCTION_MADE = "keras.backend.function()"
#: The canonical owner of a model's methods held as values (``predict_fn = model.predict``):
#: ``keras.Model.predict``, called later, predicts with the model it was taken from.
MODEL_METHODS_OWNER = "keras.Model"
#: What a loop should call instead: one step, no pipeline.
PREDICT_REMEDIES = frozenset({"predict_on_batch", "__call__"})
#: Model methods that fit the model.
FIT_METHODS = frozenset({"fit", "fit_generator"})
#: Where each fit method takes ``epochs`` (its position; left out, it is 1).
FIT_EPOCHS = {"fit": 3, "fit_generator": 2}
#: ``Model`` methods that return the loss and the metrics' values: numbers.
EVALUATE_METHODS = frozenset({"evaluate", "evaluate_generator", "test_on_batch"})
#: What only a Keras model does (a layer, an estimator or a regex has none of it): code that
#: calls one of these methods on a value, or ``fit`` with one of these keywords, uses it as a
#: model. It tells what a callable the caller passes in makes (``model =
#: self.hypermodel(params)`` then ``model.fit(x, y, validation_split=0.2)``).
MODEL_ONLY_METHODS = frozenset(
    {
        "compile",
        "fit_generator",
        "predict_generator",
        "evaluate_generator",
        "train_on_batch",
        "test_on_batch",
        "predict_on_batch",
        "save_weights",
        "load_weights",
    }
)
MODEL_ONLY_FIT_KEYWORDS = frozenset(
    {
        "epochs",
        "initial_epoch",
        "steps_per_epoch",
        "validation_split",
        "validation_steps",
        "validation_freq",
        "validation_batch_size",
    }
)

_APPLICATIONS = "keras.applications."
#: Hugging Face's TensorFlow models (``TFAutoModelForSequenceClassification``,
#: ``TFBertModel``) are ``tf.keras.Model`` subclasses (its docs: "This model is also a
#: tf.keras.Model subclass"); ``from_pretrained`` and ``from_config`` build one.
_HUGGING_FACE = re.compile(r"transformers(?:\.\w+)*\.TF[A-Z]\w*\.from_(?:pretrained|config)")
FROM_PRETRAINED = "from_pretrained"

#: Calls that reset Keras' global state (graphs, layer-name counters): real cleanup.
CLEAR_SESSION = frozenset({"keras.backend.clear_session"})

#: A Keras model's attributes that list its own variables, weights or layers.
MODEL_STRUCTURE = frozenset(
    {
        "variables",
        "trainable_variables",
        "non_trainable_variables",
        "weights",
        "trainable_weights",
        "non_trainable_weights",
        "layers",
        "submodules",
    }
)

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
        # Keras' loaders: each returns a new ``tf.data.Dataset`` (with the TensorFlow backend).
        "keras.utils.image_dataset_from_directory",
        "keras.utils.text_dataset_from_directory",
        "keras.utils.audio_dataset_from_directory",
        "keras.utils.timeseries_dataset_from_array",
        "keras.preprocessing.image_dataset_from_directory",
        "keras.preprocessing.text_dataset_from_directory",
        "keras.preprocessing.timeseries_dataset_from_array",
        # TensorFlow Datasets: a split read into a new ``tf.data.Dataset``.
        "tensorflow_datasets.load",
    }
)

#: Sources whose pipeline holds none of the program's data and runs none of its code: a range
#: of integers, or records read from files by name. Rebuilt and iterated eagerly, such a
#: pipeline copies no array into a constant and traces no function; TensorFlow 2.21, 800
#: pipelines ``Dataset.range(1100).batch(256)`` made and iterated in turn: 0.2 MB in all. A
#: ``zip`` of pipelines holds only them (each is judged where it is made): 1000 epochs of
#: ``Dataset.zip((a, b))`` over two cached, mapped pipelines made once, 0.2 MB in all.
DATA_FREE_SOURCES = frozenset(
    {
        "tensorflow.data.Dataset.range",
        "tensorflow.data.Dataset.zip",
        "tensorflow.data.Dataset.list_files",
        "tensorflow.data.TFRecordDataset",
        "tensorflow.data.TextLineDataset",
        "tensorflow.data.FixedLengthRecordDataset",
    }
)
#: Methods of a pipeline that make another one of its elements, running no function of the
#: program (``map``, ``filter``, ``flat_map``, ``interleave`` trace theirs anew for every
#: pipeline).
DATA_FREE_STEPS = frozenset(
    {
        "batch",
        "cache",
        "enumerate",
        "padded_batch",
        "prefetch",
        "rebatch",
        "repeat",
        "shard",
        "shuffle",
        "skip",
        "take",
        "unbatch",
    }
)

#: Dataset methods that batch elements of different lengths by padding them: each batch to its
#: own longest element unless ``padded_shapes`` fixes every dimension (``padded_batch``), or
#: each bucket to its own (``bucket_by_sequence_length``, a method since TensorFlow 2.6).
PADDED_BATCHES = frozenset({"padded_batch", "bucket_by_sequence_length"})


def pads_to_each_batch(name: str, call: Expr) -> bool:
    """The batches a :data:`PADDED_BATCHES` call makes may each have their own shape: no
    ``padded_shapes``, or one with an unknown dimension (``-1``, ``None``, ``[None]``), unless
    ``pad_to_bucket_boundary=True`` (each bucket then pads to its boundary: a few shapes)."""
    if name == "bucket_by_sequence_length":
        fixed = call.keyword("pad_to_bucket_boundary")
        return fixed is None or fixed.op is not Op.LITERAL or fixed.text != "true"
    shapes = call.argument(1, "padded_shapes")
    if shapes is None:
        return True
    todo = [shapes]
    while todo:
        current = todo.pop()
        if (current.op is Op.LITERAL and current.text == "none") or (
            current.op is Op.UNARY and current.text == "-"  # ``-1``
        ):
            return True
        todo.extend(current.parts)
    return False


#: Methods of a ``tf.data.Dataset`` that return another dataset (a pipeline chain): the
#: data-free steps and those that run a function of the program.
DATASET_METHODS = DATA_FREE_STEPS | frozenset(
    {"bucket_by_sequence_length", "filter", "flat_map", "interleave", "map"}
)

#: Model methods that run training or inference on the model.
TRAINING_METHODS = frozenset(
    {"train_on_batch", "evaluate", "test_on_batch", "predict_on_batch", "evaluate_generator"}
    | FIT_METHODS
    | PREDICT_METHODS
)

#: Calls that take a training step by hand (a custom training loop).
STEP_METHODS = frozenset({"gradient", "apply_gradients", "minimize"})
#: Calls that take a training step, by hand or through Keras.
TRAINING_STEPS = STEP_METHODS | frozenset({"fit", "train_on_batch"})


#: The packages of machine-learning libraries that are not Keras, whose classes make
#: estimators with ``fit`` and ``predict`` (none of them a Keras model; scikit-learn's
#: ``fit`` returns the estimator itself).
OTHER_ESTIMATOR_PACKAGES = frozenset({"sklearn", "xgboost", "lightgbm", "catboost", "torch"})


def model_use(call: Expr) -> Expr | None:
    """The receiver that ``call`` uses as a Keras model (:data:`MODEL_ONLY_METHODS`,
    :data:`MODEL_ONLY_FIT_KEYWORDS`), or None."""
    method = call.method
    if method is None:
        return None
    receiver, name = method
    if name in MODEL_ONLY_METHODS or (
        name == "fit" and not MODEL_ONLY_FIT_KEYWORDS.isdisjoint(call.keywords)
    ):
        return receiver
    return None


def makes_other_estimator(name: str) -> bool:
    """``name`` (canonical) is a class of a machine-learning library that is not Keras."""
    package, _, rest = name.partition(".")
    return package in OTHER_ESTIMATOR_PACKAGES and rest.rpartition(".")[2][:1].isupper()


def builds_model(name: str) -> bool:
    """Whether calling the canonical ``name`` constructs or loads a Keras model."""
    if name in MODEL_CLASSES or name in MODEL_LOADERS or _HUGGING_FACE.fullmatch(name):
        return True
    owner, _, last = name.rpartition(".")
    if last == FROM_CONFIG and owner in MODEL_CLASSES:
        return True
    if name.startswith(_APPLICATIONS):
        # ``keras.applications.ResNet50`` / ``keras.applications.resnet.ResNet50``, not the
        # ``preprocess_input`` helpers.
        return name.rpartition(".")[2][:1].isupper()
    return False


def views_model(name: str, call: Expr) -> bool:
    """The call of the canonical ``name`` is a functional ``Model(inputs, outputs)`` whose
    outputs are tensors an existing model or layer already has (``model.outputs[1]``,
    ``base.get_layer("fc").output``, ``layer.get_output_at(0)``): a view of that model, which
    builds no layer. Measured
    (TF 2.21, Keras 3 and tf_keras): the process grew by 50 KB from the 500th to the 1,500th
    such model, and by 140 MB from the 500th to the 1,500th new two-layer model."""
    if name != "keras.Model":
        return False
    outputs = call.argument(1, "outputs")
    return outputs is not None and _existing_tensors(outputs)


def _existing_tensors(expr: Expr) -> bool:
    if expr.op is Op.DISPLAY:
        return expr.number == len(expr.parts) > 0 and all(map(_existing_tensors, expr.parts))
    if expr.op is Op.ITEM:
        return _existing_tensors(expr.parts[0])
    if expr.op is Op.CALL:
        method = expr.func.text.rpartition(".")[2] if expr.func.op is Op.REF else expr.func.text
        return expr.func.op in {Op.REF, Op.ATTR} and method in LAYER_TENSOR_METHODS
    if expr.op is Op.REF:
        owner, _, last = expr.text.rpartition(".")
        return bool(owner) and last in MODEL_TENSORS
    return expr.op is Op.ATTR and expr.text in MODEL_TENSORS


#: Keras callbacks (canonical names): ``self.model`` is the model being trained, which Keras
#: sets with ``Callback.set_model`` before ``fit`` calls any hook.
CALLBACKS = "keras.callbacks."


def is_callback_class(bases: tuple[str, ...]) -> bool:
    """Whether a class with these canonical bases is a Keras callback."""
    return any(base.startswith(CALLBACKS) for base in bases)


#: The methods of a Keras model that ``fit``, ``evaluate`` and ``predict`` call inside the
#: ``tf.function`` they make (``make_train_function`` in tf.keras 2.2+ and Keras 3's TensorFlow
#: trainer), unless the model is compiled with ``run_eagerly=True``: an override's body runs
#: while that function traces.
TRACED_STEPS = frozenset({"train_step", "test_step", "predict_step"})


def is_model_class(bases: tuple[str, ...]) -> bool:
    """Whether a class with these canonical bases is a Keras model."""
    return any(base in MODEL_CLASSES for base in bases)


def is_layer_or_model_class(bases: tuple[str, ...]) -> bool:
    """Whether a class with these canonical bases is a Keras layer or model (or a
    ``tf.Module``): what composes sub-models, unlike a callback or an optimizer."""
    return is_model_class(bases) or any(
        base in VARIABLE_OWNERS or base.startswith("keras.layers.") for base in bases
    )


#: Tape methods that compute a gradient from what the tape recorded.
GRADIENT_METHODS = frozenset({"gradient", "jacobian", "batch_jacobian"})


class Splitter(NamedTuple):
    """A scikit-learn cross-validator: how many splits it makes, from which arguments."""

    #: The arguments whose product is the number of splits: (keyword, position or -1 when
    #: keyword-only, default); empty for a splitter whose count is the data's size.
    counts: tuple[tuple[str, int, int], ...]
    #: The object itself is iterated (the old ``sklearn.cross_validation`` API), rather than
    #: its ``split(X, y)``.
    iterable: bool = False


_NEW = "sklearn.model_selection."
_OLD = "sklearn.cross_validation."

#: Every scikit-learn splitter, old and new API, with its defaults (scikit-learn's reference).
SPLITTERS: dict[str, Splitter] = {
    f"{_NEW}KFold": Splitter((("n_splits", 0, 5),)),
    f"{_NEW}StratifiedKFold": Splitter((("n_splits", 0, 5),)),
    f"{_NEW}GroupKFold": Splitter((("n_splits", 0, 5),)),
    f"{_NEW}StratifiedGroupKFold": Splitter((("n_splits", 0, 5),)),
    f"{_NEW}TimeSeriesSplit": Splitter((("n_splits", 0, 5),)),
    f"{_NEW}RepeatedKFold": Splitter((("n_splits", -1, 5), ("n_repeats", -1, 10))),
    f"{_NEW}RepeatedStratifiedKFold": Splitter((("n_splits", -1, 5), ("n_repeats", -1, 10))),
    f"{_NEW}ShuffleSplit": Splitter((("n_splits", 0, 10),)),
    f"{_NEW}StratifiedShuffleSplit": Splitter((("n_splits", 0, 10),)),
    f"{_NEW}GroupShuffleSplit": Splitter((("n_splits", 0, 5),)),
    f"{_NEW}LeaveOneOut": Splitter(()),
    f"{_NEW}LeavePOut": Splitter(()),
    f"{_NEW}LeaveOneGroupOut": Splitter(()),
    f"{_NEW}LeavePGroupsOut": Splitter(()),
    f"{_NEW}PredefinedSplit": Splitter(()),
    f"{_OLD}KFold": Splitter((("n_folds", 1, 3),), iterable=True),
    f"{_OLD}StratifiedKFold": Splitter((("n_folds", 1, 3),), iterable=True),
    f"{_OLD}LabelKFold": Splitter((("n_folds", 1, 3),), iterable=True),
    f"{_OLD}ShuffleSplit": Splitter((("n_iter", 1, 10),), iterable=True),
    f"{_OLD}StratifiedShuffleSplit": Splitter((("n_iter", 1, 10),), iterable=True),
    f"{_OLD}LeaveOneOut": Splitter((), iterable=True),
    f"{_OLD}LeaveOneLabelOut": Splitter((), iterable=True),
}

#: The methods of a splitter: the iterable of splits, and the number of splits.
SPLIT_METHOD = "split"
