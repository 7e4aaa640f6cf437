"""Canonical spellings of the TensorFlow and Keras names the rules care about.

Every dotted name a file refers to is resolved through that file's imports to a fully
qualified name (``tf2.function`` -> ``tensorflow.function``) and then canonicalised, so that
the many public paths to one object compare equal: ``tensorflow.compat.v2.function``,
``tensorflow.python.eager.def_function.function`` and ``tensorflow.function`` are one name;
``tf.keras``, ``tensorflow.keras``, ``tf_keras`` and ``keras`` are one package.
"""

from __future__ import annotations

import functools

_PREFIX_ALIASES: tuple[tuple[str, str], ...] = (
    ("tensorflow.compat.v2.", "tensorflow."),
    ("tensorflow.python.eager.polymorphic_function.polymorphic_function.", "tensorflow."),
    ("tensorflow.python.eager.def_function.", "tensorflow."),
    ("tensorflow.python.eager.backprop.", "tensorflow."),
    ("tensorflow.python.keras.", "keras."),
    # TensorFlow 2.0 and 2.1 shipped their code as the package ``tensorflow_core``.
    ("tensorflow_core.python.keras.", "keras."),
    ("tensorflow_core.", "tensorflow."),
    ("tensorflow.compat.v1.keras.", "keras."),
    ("tensorflow.keras.", "keras."),
    ("tf_keras.src.", "keras."),
    ("tf_keras.", "keras."),
    ("keras.src.", "keras."),
    ("keras.api.", "keras."),
    ("keras._tf_keras.keras.", "keras."),
    ("tensorflow.python.data.ops.dataset_ops.DatasetV2", "tensorflow.data.Dataset"),
    ("tensorflow.python.data.ops.dataset_ops.", "tensorflow.data."),
    ("tensorflow.python.ops.variables.", "tensorflow."),
)

_EXACT_ALIASES: dict[str, str] = {
    # ``six.moves``' names for the builtins of Python 3 (Python 2's ``xrange`` is ``range``).
    "six.moves.xrange": "builtins.range",
    "six.moves.range": "builtins.range",
    "six.moves.zip": "builtins.zip",
    "six.moves.map": "builtins.map",
    "tensorflow.compat.v2": "tensorflow",
    "tensorflow.keras": "keras",
    "tf_keras": "keras",
    "tensorflow.python.keras": "keras",
    "keras.src": "keras",
    # Keras moved things around between releases; one spelling for each.
    "keras.engine.training.Model": "keras.Model",
    "keras.engine.sequential.Sequential": "keras.Sequential",
    "keras.models.Model": "keras.Model",
    "keras.models.Sequential": "keras.Sequential",
    "keras.models.sequential.Sequential": "keras.Sequential",
    "keras.models.model.Model": "keras.Model",
    "keras.models.functional.Functional": "keras.Model",
    "keras.saving.load_model": "keras.models.load_model",
    "keras.saving.saving_api.load_model": "keras.models.load_model",
    # Where Keras 2 defines it (``keras/saving/save.py``, 2.6 to 2.12; ``saving/legacy/`` after).
    "keras.saving.save.load_model": "keras.models.load_model",
    "keras.saving.legacy.save.load_model": "keras.models.load_model",
    "keras.utils.clear_session": "keras.backend.clear_session",
    "tensorflow.data.experimental.enumerate_dataset": "tensorflow.data.Dataset.enumerate",
    "tensorflow.python.ops.variables.Variable": "tensorflow.Variable",
    "tensorflow.autodiff.GradientTape": "tensorflow.GradientTape",
    # The one class, exported under both (its page's "Compat aliases for migration").
    "tensorflow.compat.v1.GradientTape": "tensorflow.GradientTape",
    "keras.backend.tensorflow_backend.clear_session": "keras.backend.clear_session",
}

TF_FUNCTION = "tensorflow.function"
#: ``typing.cast(T, value)``: returns ``value`` unchanged.
TYPING_CAST = "typing.cast"
GRADIENT_TAPE = "tensorflow.GradientTape"
TF_VARIABLE = "tensorflow.Variable"

#: Builtins and ``collections`` types whose instances are mutable Python containers.
CONTAINER_BUILTINS = frozenset({"list", "dict", "set"})
CONTAINER_TYPES = frozenset(
    {
        *CONTAINER_BUILTINS,
        "collections.defaultdict",
        "collections.OrderedDict",
        "collections.deque",
        "collections.Counter",
        "typing.List",
        "typing.Dict",
        "typing.Set",
    }
)


@functools.lru_cache(maxsize=1 << 16)  # the index and the facts ask for the same names often
def canonical(name: str) -> str:
    """Return the one spelling the rules compare against for a fully qualified ``name``."""
    for prefix, replacement in _PREFIX_ALIASES:
        if name.startswith(prefix):
            name = replacement + name[len(prefix) :]
            break
    # The longest dotted head with one spelling keeps what follows it: a class's attribute
    # (``keras.engine.training.Model.from_config`` is ``keras.Model.from_config``).
    head, rest = name, ""
    while True:
        found = _EXACT_ALIASES.get(head)
        if found is not None:
            return found + rest
        head, dot, last = head.rpartition(".")
        if not dot:
            return name
        rest = f".{last}{rest}"


def resolve_dotted(dotted: str, imports: dict[str, str]) -> str | None:
    """Resolve ``tf2.keras.Model`` through ``imports`` (local name -> qualified name) to its
    canonical qualified name; None when the first part was not imported."""
    head, dot, rest = dotted.partition(".")
    target = imports.get(head)
    if target is None:
        return None
    return canonical(f"{target}{dot}{rest}")


#: Imports a module by its name as a string (``importlib.import_module(f"agents.{name}")``).
IMPORT_MODULE = "importlib.import_module"


def is_tensorflow(name: str) -> bool:
    """True for names inside the TensorFlow package (after canonicalisation)."""
    return name == "tensorflow" or name.startswith("tensorflow.")


def is_keras(name: str) -> bool:
    return name == "keras" or name.startswith("keras.")


def is_numpy(name: str) -> bool:
    return name == "numpy" or name.startswith("numpy.")


#: Calls that make a callable running the function they are given: with more arguments
#: (``functools.partial(f, a)``, Ray Tune's ``with_parameters(f, data=d)``), with resources
#: (``with_resources(f, {"cpu": 2})``), or deferred (``delayed(f)(x)`` is ``f(x)``, run by
#: joblib's ``Parallel``, scikit-learn's re-export, or Dask's ``compute()``).
CALLABLE_WRAPPERS = frozenset(
    {"functools.partial", "ray.tune.with_parameters", "ray.tune.with_resources"}
    | {"joblib.delayed", "sklearn.utils.fixes.delayed", "sklearn.utils.parallel.delayed"}
    | {"dask.delayed"}
)
#: tqdm's progress bars: each iterates its ``iterable`` (``for x in tqdm(range(10))`` runs 10
#: times), in every module that offers one.
_TQDM_MODULES = ("", "auto.", "autonotebook.", "notebook.", "std.", "rich.")
PROGRESS_BARS = frozenset(f"tqdm.{module}tqdm" for module in _TQDM_MODULES) | {"tqdm.tqdm_notebook"}
#: tqdm's ``trange(...)``: ``tqdm(range(...))``.
PROGRESS_RANGES = frozenset(f"tqdm.{module}trange" for module in _TQDM_MODULES) | {"tqdm.tnrange"}
