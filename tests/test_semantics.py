"""The meaning of library code, one test per row of each table: what builds or loads a model in
every namespace, every predict variant, every splitter (old and new API), and the builtins that
make loop trip counts (``range`` in every form, ``len``, ``zip``, ``enumerate``...)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from tflint_leaks.analysis import keras
from tflint_leaks.analysis.branches import literals
from tflint_leaks.analysis.effects import EffectKind
from tflint_leaks.analysis.index import index_source
from tflint_leaks.analysis.lattice import ClassRef, FunctionRef, Kind, Value
from tflint_leaks.analysis.program import Program
from tflint_leaks.analysis.project import ProjectIndex
from tflint_leaks.analysis.symbolic import from_ast


def value_of(tmp_path: Path, source: str, expression: str, function: str = "") -> Value:
    path = tmp_path / "snippet.py"
    text = textwrap.dedent(source)
    path.write_text(text)
    module = index_source(text, path)
    program = Program(ProjectIndex([module]))
    where = program.inference.where_of(module, function)
    return program.value(from_ast(ast.parse(expression, mode="eval").body), where)


@pytest.mark.parametrize("name", sorted(keras.MODEL_LOADERS | keras.MODEL_CLASSES))
def test_every_model_builder_and_loader_makes_a_new_model(tmp_path: Path, name: str) -> None:
    module, _, last = name.rpartition(".")
    found = value_of(tmp_path, f"import {module} as lib", f"lib.{last}(1)")
    assert found.kind is Kind.MODEL and found.fresh


@pytest.mark.parametrize("name", sorted(keras.DATASET_SOURCES))
def test_every_dataset_source_makes_a_dataset(tmp_path: Path, name: str) -> None:
    module, _, last = name.rpartition(".")
    # tfds.load without a split gives a dict of datasets by split name
    split = ", split='train'" if name == "tensorflow_datasets.load" else ""
    made = value_of(tmp_path, f"import {module} as lib", f"lib.{last}(x{split})")
    assert made.kind is Kind.DATASET


@pytest.mark.parametrize(
    ("imports", "call"),
    [
        ("import tensorflow as tf", "tf.keras.Model.from_config({})"),
        ("from tensorflow import keras", "keras.Sequential.from_config({})"),
        ("from tensorflow.keras.models import model_from_json", "model_from_json('{}')"),
        ("import tensorflow as tf", "tf.keras.models.clone_model(base)"),
        ("import keras", "keras.saving.load_model('m.keras')"),
        # AlexOmarov/ml_snippets (set Z21 of stop 52) imports it from where Keras 2 defines it.
        ("from keras.saving.save import load_model", "load_model('m.h5')"),
        ("from keras.saving.legacy.save import load_model", "load_model('m.h5')"),
        ("import tf_keras", "tf_keras.models.load_model('m.h5')"),
        ("from keras.applications import ResNet50", "ResNet50()"),
        ("from tensorflow.keras.applications.resnet import ResNet50", "ResNet50()"),
        ("import tensorflow as tf", "tf.saved_model.load('export')"),
        ("import tensorflow as tf\nclass Net(tf.keras.Model):\n    pass", "Net.from_config({})"),
        # Hugging Face's TensorFlow models are Keras models (emoji-model, unseen set S).
        (
            "from transformers import TFAutoModelForSequenceClassification",
            "TFAutoModelForSequenceClassification.from_pretrained('bert-base-uncased')",
        ),
        ("import transformers", "transformers.TFBertModel.from_config(config)"),
    ],
)
def test_models_made_by_meaning(tmp_path: Path, imports: str, call: str) -> None:
    found = value_of(tmp_path, imports, call)
    assert found.kind is Kind.MODEL and found.fresh


@pytest.mark.parametrize(
    ("imports", "call"),
    [
        ("import transformers", "transformers.AutoModel.from_pretrained('bert-base-uncased')"),
        ("import transformers", "transformers.TFTrainer(model=m)"),
    ],
)
def test_not_keras_models(tmp_path: Path, imports: str, call: str) -> None:
    """Hugging Face's PyTorch models and its trainer build no Keras model."""
    assert value_of(tmp_path, imports, call).kind is not Kind.MODEL


@pytest.mark.parametrize("method", sorted(keras.PREDICT_METHODS | keras.PREDICT_REMEDIES))
def test_every_predict_variant_is_known(tmp_path: Path, method: str) -> None:
    source = f"import tensorflow as tf\nm = tf.keras.Sequential()\nout = m.{method}(x)\n"
    found = value_of(tmp_path, source, "out")
    expected = Kind.ARRAY if method in keras.PREDICT_METHODS else Kind.TENSOR
    assert found.kind is expected


def _splitter_call(name: str, splitter: keras.Splitter, counts: dict[str, int]) -> str:
    module, _, last = name.rpartition(".")
    arguments = [f"{keyword}={counts[keyword]}" for keyword, _, _ in splitter.counts]
    made = f"{last}({', '.join(arguments)})"
    iterated = made if splitter.iterable else f"{made}.split(x, y)"
    return f"from {module} import {last}\nfolds = {iterated}\n"


@pytest.mark.parametrize("name", sorted(keras.SPLITTERS))
def test_every_splitter_makes_its_number_of_splits(tmp_path: Path, name: str) -> None:
    splitter = keras.SPLITTERS[name]
    counts = {keyword: 3 + i for i, (keyword, _, _) in enumerate(splitter.counts)}
    source = _splitter_call(name, splitter, counts)
    found = value_of(tmp_path, source, "folds")
    expected = 1
    for count in counts.values():
        expected *= count
    assert found.bound == (expected if splitter.counts else None), source


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (name, s.counts[0][2] * (s.counts[1][2] if len(s.counts) > 1 else 1))
        for name, s in sorted(keras.SPLITTERS.items())
        if s.counts
    ],
)
def test_every_splitter_has_its_default_number_of_splits(
    tmp_path: Path, name: str, expected: int
) -> None:
    splitter = keras.SPLITTERS[name]
    module, _, last = name.rpartition(".")
    positional = "len(y)" if splitter.iterable else ""
    made = f"{last}({positional})"
    iterated = made if splitter.iterable else f"{made}.split(x)"
    found = value_of(tmp_path, f"from {module} import {last}\nfolds = {iterated}\n", "folds")
    assert found.bound == expected


@pytest.mark.parametrize(
    ("source", "expression", "expected"),
    [
        ("FOLDS = 5", "range(1, FOLDS + 1)", 5),
        ("CONFIGS = [1, 2, 3, 4]", "range(len(CONFIGS))", 4),
        ("", "range(8, 257, 8)", 32),
        ("", "range(10, 0, -2)", 5),
        # Python 2's `xrange`, and `six.moves`' names for it.
        ("", "xrange(6)", 6),
        ("from six.moves import xrange", "xrange(1, 7)", 6),
        ("from six.moves import range", "range(3)", 3),
        ("def xrange(n):\n    return [n]", "xrange(6)", 1),  # the module's own
        ("N = 10 * 10", "range(N)", 100),
        ("", "range(2 ** 3)", 8),
        ("", "enumerate(['a', 'b', 'c'])", 3),
        ("", "zip(range(15), flow)", 15),
        ("", "reversed(range(4))", 4),
        ("", "sorted({1, 2, 3})", 3),
        ("", "list(range(6))", 6),
        ("import itertools", "itertools.product([1, 2], [3, 4, 5])", 6),
        ("import itertools", "itertools.product(range(3), repeat=2)", 9),
        ("GRID = {'lr': [0.1, 0.01], 'units': [32, 64]}", "GRID.items()", 2),
        ("C = {'model': int, 'modes': [0, 1, 2], 'dense': True}", "C['modes']", 3),
        ("C = {'folds': 5, 'name': 'k' 'fold'}", "range(C['folds'])", 5),
        ("C = {'modes': [0, 1, 2], 'widths': list(range(40))}", "C['widths']", 40),
        ("C = {'modes': [0, 1, 2], **base}", "C['modes']", None),
        ("C = {'modes': [0, 1, 2], 'dense': True}", "C[key]", None),
        ("import numpy as np", "np.linspace(0.001, 0.1, 10)", 10),
        # a list displayed, then appended to outside loops: one more item at most per append
        ("OPTIMIZERS = [1]\nif FAST:\n    OPTIMIZERS.append(2)", "OPTIMIZERS", 2),
        ("OPTIMIZERS = [1, 2]\nOPTIMIZERS.append(3)\nOPTIMIZERS.append(4)", "OPTIMIZERS", 4),
        ("OPTIMIZERS = [1]\nwhile more():\n    OPTIMIZERS.append(2)", "OPTIMIZERS", None),
        ("OPTIMIZERS = [1]\nOPTIMIZERS.extend(others)", "OPTIMIZERS", None),
        # an array's rows, when its making gives its first dimension
        ("import numpy as np", "np.random.choice(len(folds), size=5, replace=False)", 5),
        ("import numpy as np", "np.random.randint(0, 10_000, 40)", 40),
        ("import numpy as np", "np.random.permutation(np.arange(7))", 7),
        ("import numpy as np", "np.random.permutation(12)", 12),
        ("import numpy as np", "np.random.permutation(len(x))", None),
        ("import numpy as np", "np.zeros((3, n))", 3),
        ("import numpy as np", "np.zeros((n, 3))", None),
        ("import numpy as np", "np.array([0.1, 0.01, 0.001])", 3),
        ("import numpy as np", "np.asarray(lrs)", None),
        ("import numpy as np", "np.random.choice(population, n)", None),
        ("import numpy as np", "np.random.choice(population)", None),
        ("", "[x for x in range(4) if x]", 4),
        (
            "from sklearn.model_selection import StratifiedKFold",
            "enumerate(list(StratifiedKFold(n_splits=4).split(x, y)))",
            4,
        ),
        ("import tensorflow as tf", "tf.data.Dataset.from_tensor_slices(x).take(2)", 2),
        ("import tensorflow as tf", "tf.data.Dataset.from_tensor_slices(x).take(n)", None),
        ("import tensorflow as tf", "tf.data.Dataset.from_tensor_slices(x).skip(2)", None),
        # tfds.load: one dataset per split of a list, paired with the info for with_info=True
        ("import tensorflow_datasets as tfds", "tfds.load('mnist', split=['train', 'test'])", 2),
        ("import tensorflow_datasets as tfds", "tfds.load('mnist', with_info=True)", 2),
        (
            "import tensorflow_datasets as tfds\n"
            "[test], info = tfds.load('coco/2017', split=['validation'], with_info=True)",
            "test.take(5)",
            5,
        ),
        (
            "import tensorflow_datasets as tfds\nds = tfds.load('mnist', split='test')",
            "ds.take(5)",
            5,
        ),
        # without a split, a dict of datasets by split name (TASM's fourth example)
        (
            "import tensorflow_datasets as tfds\n"
            "dataset, info = tfds.load('caltech_birds2010', with_info=True)\n"
            "test = dataset['test'].map(load)",
            "test.take(5)",
            5,
        ),
        ("", "range(n)", None),
        ("import itertools", "itertools.count()", None),
        # `k` items of a population, whatever its size
        ("import random", "random.sample(sentences, 10)", 10),
        ("import random", "random.sample(population=sentences, k=3)", 3),
        ("import random", "random.choices(sentences, k=4)", 4),
        ("import random", "random.choices(sentences)", 1),
        ("import random", "random.sample(sentences, n)", None),
        # a progress bar iterates what it is given
        ("from tqdm import tqdm", "tqdm(range(2, 12))", 10),
        ("from tqdm.auto import tqdm", "tqdm(iterable=[1, 2, 3], total=3)", 3),
        ("import tqdm", "tqdm.tqdm(enumerate(range(4)))", 4),
        ("from tqdm.notebook import trange", "trange(1, 6)", 5),
        ("from tqdm import tqdm", "tqdm(loader)", None),
    ],
)
def test_trip_counts_by_meaning(
    tmp_path: Path, source: str, expression: str, expected: int | None
) -> None:
    assert value_of(tmp_path, source, expression).bound == expected


EVALUATE = """
def evaluate(metrics):
    if isinstance(metrics, str):
        metrics = [metrics]
    elif callable(metrics):
        metrics = [metrics]
    elif not isinstance(metrics, list):
        raise TypeError("metrics must be a string, a list or callable")
    return metrics

evaluate("mean_squared_error")
evaluate(["mean_squared_error", "mean_absolute_error"])
"""


def test_a_string_made_a_list_is_no_string_after(tmp_path: Path) -> None:
    """Edward's ``evaluate``: a metric's name becomes a list of one; what falls through the
    chain from the call sites is a list of two at most."""
    assert value_of(tmp_path, EVALUATE, "metrics", "evaluate").bound == 2
    assert value_of(tmp_path, EVALUATE, "metrics", "evaluate").kind is Kind.CONTAINER


@pytest.mark.parametrize(
    "changed",
    [
        # a block that neither binds the name nor leaves lets the string through
        ("    raise TypeError(", "    print("),
        # a test of something else
        ("isinstance(metrics, str)", "isinstance(other, str)"),
        # not a string type
        ("isinstance(metrics, str)", "isinstance(metrics, tuple)"),
    ],
)
def test_a_string_may_still_fall_through(tmp_path: Path, changed: tuple[str, str]) -> None:
    # what is not a list raises, strings included: that test is made one of a project class
    source = EVALUATE.replace(*changed).replace("(metrics, list)", "(metrics, MetricList)")
    assert value_of(tmp_path, source, "metrics", "evaluate").bound is None


EVALUATE_TESTED = (
    EVALUATE
    + """
import unittest

class EvaluateTest(unittest.TestCase):
    def test_custom_metric(self):
        def logcosh(y_true, y_pred):
            return y_pred - y_true

        evaluate(logcosh)
        evaluate(["mean_squared_error", logcosh])
        evaluate(3)
        self.assertRaises(TypeError, evaluate, load_metrics())
"""
)


def test_what_a_chain_rules_out_does_not_fall_through(tmp_path: Path) -> None:
    """Edward's tests: a nested function is callable and made a list of one, the number
    raises, and the call a test expects to raise gives no value the function works on."""
    found = value_of(tmp_path, EVALUATE_TESTED, "metrics", "evaluate")
    assert (found.kind, found.bound) == (Kind.CONTAINER, 2)


@pytest.mark.parametrize(
    "changed",
    [
        # a callable falls through when its block neither binds the name nor leaves
        ("metrics = [metrics]\n    elif not", "print(metrics)\n    elif not"),
        # a test of a project class, which may subclass list, lets the number through
        ("not isinstance(metrics, list)", "not isinstance(metrics, MetricList)"),
        # a call nobody expects to raise passes what it loads
        ("self.assertRaises(TypeError, evaluate, load_metrics())", "evaluate(load_metrics())"),
        # the context-manager form calls nothing itself: the call in its block is a call
        (
            "self.assertRaises(TypeError, evaluate, load_metrics())",
            "with self.assertRaises(TypeError):\n            evaluate(load_metrics())",
        ),
    ],
)
def test_what_the_chain_does_not_rule_out_falls_through(
    tmp_path: Path, changed: tuple[str, str]
) -> None:
    source = EVALUATE_TESTED.replace(*changed)
    assert source != EVALUATE_TESTED
    assert value_of(tmp_path, source, "metrics", "evaluate").bound is None


@pytest.mark.parametrize(
    "source",
    [
        "from joblib import delayed",
        "from sklearn.utils.parallel import delayed",
        "from dask import delayed",
    ],
)
def test_a_deferred_call_is_a_call_of_its_function(tmp_path: Path, source: str) -> None:
    """``delayed(f)(x)`` runs ``f(x)``: ``delayed(f)`` is ``f``."""
    found = value_of(
        tmp_path, f"{source}\n\ndef fit_one(seed):\n    return seed\n", "delayed(fit_one)"
    )
    assert [(a.kind, a.ref) for a in found.atoms] == [
        (Kind.FUNCTION, FunctionRef(str(tmp_path / "snippet.py"), "fit_one"))
    ]


CLOSURE = """
import tensorflow as tf

def run_training(model, epochs):
    def checkpoint_model():
        return model

    for epoch in range(epochs):
        checkpoint_model()

run_training(tf.keras.Sequential(), 10)
"""


def test_a_function_defined_in_another_is_a_function_of_its_own(tmp_path: Path) -> None:
    """rnnt-speech-recognition: the training loop calls a helper it defines; the helper
    reads the enclosing function's parameter (a closure)."""
    path = str(tmp_path / "snippet.py")
    nested = "run_training.<locals>.checkpoint_model"
    helper = value_of(tmp_path, CLOSURE, "checkpoint_model", "run_training")
    assert [(a.kind, a.ref) for a in helper.atoms] == [(Kind.FUNCTION, FunctionRef(path, nested))]
    assert value_of(tmp_path, CLOSURE, "model", nested).kind is Kind.MODEL
    assert value_of(tmp_path, CLOSURE, "checkpoint_model()", "run_training").kind is Kind.MODEL


def test_only_a_closure_called_or_kept_is_a_function_of_its_own(tmp_path: Path) -> None:
    """A nested function the enclosing one calls or stores (``self.save = save``) is followed;
    one it only returns or hands on (a library's ``make_train_function``) is not."""
    source = textwrap.dedent(
        """
        def make(self):
            def called():
                return 1

            def kept():
                return 2

            def returned():
                return 3

            called()
            self.save = kept
            return returned
        """
    )
    module = index_source(source, tmp_path / "snippet.py")
    nested = sorted(q for q in module.functions if "<locals>" in q)
    assert nested == ["make.<locals>.called", "make.<locals>.kept"]


def test_a_parameter_takes_the_values_of_every_call_site(tmp_path: Path) -> None:
    source = """
    def search(trials):
        return range(trials)

    search(20)
    search(trials=100)
    """
    assert value_of(tmp_path, source, "range(trials)", "search").bound == 100


def test_an_annotated_parameter_takes_what_its_call_sites_pass(tmp_path: Path) -> None:
    """``backend: str`` and ``runs: int`` are the strings and integers the call sites pass
    when those are of the declared type; the annotation alone when they are not known."""
    source = """
    def experiment(backend: str, runs: int, data: str):
        return backend

    for backend in ["keops", "pytorch"]:
        experiment(backend, 2, load())
    experiment("PyTorch".lower(), runs=3, data=load())
    """
    backend = value_of(tmp_path, source, "backend", "experiment")
    assert backend.kind is Kind.STR
    assert backend.atoms[0].texts == frozenset({"keops", "pytorch"})
    assert value_of(tmp_path, source, "runs", "experiment").ints == frozenset({2, 3})
    data = value_of(tmp_path, source, "data", "experiment")
    assert data.kind is Kind.STR and data.atoms[0].texts is None


def test_star_args_hold_the_positional_arguments_after_the_named_ones(tmp_path: Path) -> None:
    """``*args`` is a tuple of what every call passes by position after the other
    parameters: ``args[0]`` of ``Agent(setup, 5)`` on a method is ``setup``."""
    source = """
    class Setup:
        pass

    class Agent:
        def __init__(self, name, *args):
            self.setup = args[0]

    Agent("a", Setup(), 5)
    Agent("b", Setup(), 6)
    """
    args = value_of(tmp_path, source, "args", "Agent.__init__")
    assert args.kind is Kind.CONTAINER and args.lengths == frozenset({2})
    first = value_of(tmp_path, source, "args[0]", "Agent.__init__")
    assert first.kind is Kind.INSTANCE and first.klass == ClassRef(
        str(tmp_path / "snippet.py"), "Setup"
    )


@pytest.mark.parametrize(
    "calls",
    [
        "run(*values)",  # what a spread passes is not known
        "handlers = [run]",  # called from where the project cannot see
    ],
)
def test_star_args_are_not_known_where_a_call_is_not(tmp_path: Path, calls: str) -> None:
    source = f"""
    def run(*args):
        return args

    {calls}
    """
    assert value_of(tmp_path, source, "args", "run").kind is Kind.UNKNOWN


def test_a_parameter_left_out_takes_its_default(tmp_path: Path) -> None:
    source = """
    def search(trials=30):
        return trials

    search()
    """
    assert value_of(tmp_path, source, "trials", "search").ints == frozenset({30})


def test_a_parameter_passed_in_a_mapping_takes_the_keys_value(tmp_path: Path) -> None:
    """``search(**args)`` with ``args = {"trials": 5}`` passes 5, and the default for a key
    it does not hold. Stores into the dict count wherever they are in the body: one under
    another key (``update(seed=2)``) leaves the key as it was; one under the key, or under a
    key not known (``update(other)``, ``pop``, ``clear``), makes what is passed not known."""
    source = """
    def search(trials=30, seed=0):
        return trials

    def study(other):
        args = {"trials": 5}
        search(**args)

    def tune():
        args = {"seed": 1}
        search(**args)
    """
    assert value_of(tmp_path, source, "trials", "search").ints == frozenset({5, 30})
    for change, expected in (
        ("args.update(trials=500)", None),
        ("args.update(dict(trials=500))", None),
        ("args.update({'trials': 500})", None),
        ("args.setdefault('trials', 500)", None),
        ("args['trials'] = 500", None),
        ("args.update(seed=2)", {5, 30}),
        ("args.update(dict(seed=2))", {5, 30}),
        ("args.update(other)", None),
        ("args.pop('trials')", None),
        ("args.clear()", None),
    ):
        changed = source.replace(
            "        search(**args)\n\n    def tune",
            f"        search(**args)\n        {change}\n\n    def tune",
        )
        assert change in changed
        found = value_of(tmp_path, changed, "trials", "search").ints
        assert found == (None if expected is None else frozenset(expected)), change


def test_a_test_parametrized_by_pytest_takes_the_values_it_lists(tmp_path: Path) -> None:
    """pytest calls the test once per row of each ``parametrize``: one name written as a
    string takes each row (a tuple too), names written as a tuple or ``"a, b"`` each take
    their item of every row or ``pytest.param``; a table that is a name is its items; a row
    not written out leaves the parameter unknown."""
    source = """
    import pytest
    from pytest import mark

    SIZES = [4, 8]

    @pytest.mark.parametrize("size", [1, 2, 3])
    @pytest.mark.parametrize("a, b", [(10, 20), pytest.param(30, 40, id="big")])
    @mark.parametrize(("shape",), [((5, 6),), ((7, 8),)])
    @pytest.mark.parametrize("pair", [(1, 2)])
    @pytest.mark.parametrize("width", SIZES)
    @pytest.mark.parametrize("depth", [1, make_depth()])
    def test_cache(size, a, b, shape, pair, width, depth, seed=0):
        return size
    """
    for name, expected in (("size", {1, 2, 3}), ("a", {10, 30}), ("b", {20, 40})):
        assert value_of(tmp_path, source, name, "test_cache").ints == frozenset(expected), name
    assert value_of(tmp_path, source, "shape", "test_cache").lengths == frozenset({2})
    assert value_of(tmp_path, source, "pair", "test_cache").lengths == frozenset({2})
    assert value_of(tmp_path, source, "width", "test_cache").ints == frozenset({4, 8})
    assert value_of(tmp_path, source, "depth", "test_cache").ints is None
    assert value_of(tmp_path, source, "seed", "test_cache").ints == frozenset({0})


def test_a_parameter_nothing_calls_is_its_default_or_unknown(tmp_path: Path) -> None:
    source = """
    def search(trials=30, data=None):
        return trials
    """
    assert value_of(tmp_path, source, "trials", "search").ints == frozenset({30})
    assert value_of(tmp_path, source, "data", "search").kind is Kind.NONE


def test_a_dict_with_string_keys_keeps_each_keys_value(tmp_path: Path) -> None:
    """``config["modes"]`` is the value of that key, not the join of every value; two dicts
    with the same keys join key by key; dicts with other keys are any of their values."""
    source = """
    SMALL = {"modes": [0, 1], "epochs": 2, "sparse": True}
    LARGE = {"modes": [0, 1, 2, 3], "epochs": 100, "sparse": False}
    OTHER = {"units": [8, 16, 32]}

    def run(config):
        return config

    def pick(config):
        return config

    run(SMALL)
    run(LARGE)
    pick(SMALL)
    pick(OTHER)
    """
    assert value_of(tmp_path, source, "config['modes']", "run").lengths == frozenset({2, 4})
    assert value_of(tmp_path, source, "config['epochs']", "run").ints == frozenset({2, 100})
    assert value_of(tmp_path, source, "OTHER['modes']").lengths == frozenset({3})
    either = value_of(tmp_path, source, "config['modes']", "pick")
    assert either.bound is None  # a list, a number or a bool: the keys differ


def test_a_long_dict_keeps_the_values_of_its_first_keys(tmp_path: Path) -> None:
    """A configuration of twenty entries (Histogram_loss's time-series ``configs``): the
    entries the index keeps are known by key; a key past them is any of its values; a call
    given the dict as ``**configs`` may be passed any of its later keys."""
    entries = ", ".join(f'"k{i}": {i}' for i in range(20))
    source = f"""
    CONFIGS = {{"datasets": ["ETTh1", "ETTh2", "ETTm1", "ETTm2"], {entries}}}

    def run(k19=0, datasets=()):
        return k19

    run(**CONFIGS)
    """
    assert value_of(tmp_path, source, "CONFIGS['datasets']").lengths == frozenset({4})
    assert value_of(tmp_path, source, "CONFIGS['k19']").ints is None
    assert value_of(tmp_path, source, "k19", "run").ints is None


def test_elements_of_containers_are_known(tmp_path: Path) -> None:
    source = """
    class Agent:
        def act(self, state):
            return state

    agents = [Agent() for _ in range(3)]
    workers = []
    workers.append(Agent())
    """
    assert value_of(tmp_path, source, "agents[0]").kind is Kind.INSTANCE
    assert value_of(tmp_path, source, "[a for a in agents][1]").kind is Kind.INSTANCE
    assert value_of(tmp_path, source, "workers[0]").kind is Kind.INSTANCE


def test_methods_and_attributes_follow_the_whole_mro(tmp_path: Path) -> None:
    source = """
    import tensorflow as tf

    class Base:
        def infer(self, x):
            return self.model.predict(x)

    class Child(Base):
        def __init__(self):
            self.model = tf.keras.models.load_model("m.keras")

    class GrandChild(Child):
        def infer(self, x):
            return super().infer(x)
    """
    assert value_of(tmp_path, source, "Child().infer(1)").kind is Kind.ARRAY
    assert value_of(tmp_path, source, "GrandChild().infer(1)").kind is Kind.ARRAY
    assert value_of(tmp_path, source, "self.model", "Base.infer").kind is Kind.MODEL


def test_values_through_calls(tmp_path: Path) -> None:
    source = """
    def schedule(epoch):
        return 0.1 * 0.95 ** epoch

    def steps(n):
        return n * 10

    for epoch in range(100):
        schedule(epoch)
        steps(epoch)
    """
    assert value_of(tmp_path, source, "schedule(3)").kind is Kind.NUMBER
    assert value_of(tmp_path, source, "steps(4)").kind is Kind.NUMBER


@pytest.mark.parametrize(
    ("expression", "structural"),
    [
        ("tf.compat.v1.trainable_variables()", True),
        ("tf.compat.v1.get_collection('update_ops')", True),
        ("[v for v in tf.compat.v1.global_variables() if 'gen' in v.name]", True),
        ("zip(model.trainable_variables, grads)", True),
        ("enumerate(model.layers)", True),
        ("list(reversed(model.weights))", True),
        ("tf.config.list_physical_devices('GPU')", True),
        ("[d.name for d in device_lib.list_local_devices() if d.device_type == 'GPU']", True),
        ("tf.config.list_physical_devices('GPU') + batches", False),
        ("model.trainable_variables + batches", False),
        ("batches", False),
        ("[v for v in batches]", False),
    ],
)
def test_a_models_own_variables_layers_and_the_devices_are_structure(
    tmp_path: Path, expression: str, structural: bool
) -> None:
    """What lists a model's or a graph's variables, weights or layers (and what only filters,
    zips, enumerates or reverses them) holds as many items as the model has: a loop over it
    is counted as one run of what encloses it; so does what lists the machine's devices, as
    many as the hardware has. Joined with data, it is data."""
    source = (
        "import tensorflow as tf\nfrom tensorflow.python.client import device_lib\n"
        "model = tf.keras.Sequential([])\nbatches = load()\n"
    )
    assert value_of(tmp_path, source, expression).structural is structural


@pytest.mark.parametrize(
    ("source", "expression", "texts"),
    [
        ('name = "DQN"', 'f"agents.{name}"', {"agents.DQN"}),
        ('name = "DQN"', '"agents." + name', {"agents.DQN"}),
        ("n = 3", 'f"run{n}_"', {"run3_"}),
        ('name = "a" if x else "b"', 'f"m.{name}"', {"m.a", "m.b"}),
        ('name = "DQN"', 'f"{name!r}"', None),  # a conversion: not known
        ('name = "DQN"', 'f"{name:>8}"', None),  # a format spec: not known
        ("", 'f"agents.{name}"', None),  # a piece not known
        # A split of known texts by a known separator: its pieces.
        ('model = "DQN_ep10"', 'model.split("_")[0]', {"DQN"}),
        ('model = "a-b" if x else "c-d"', 'model.split("-")[0]', {"a", "c"}),
        ('model = "DQN_ep10"', 'f"agents.{model.split(chr(95))[0]}"', None),  # separator?
    ],
)
def test_strings_joined_by_meaning(
    tmp_path: Path, source: str, expression: str, texts: set[str] | None
) -> None:
    found = value_of(tmp_path, source, expression)
    assert found.kind is Kind.STR
    assert found.atoms[0].texts == (frozenset(texts) if texts is not None else None)


ARGPARSE = """
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--model_name", default="DQN")
parser.add_argument("--num-episodes", type=int, default=1000)
parser.add_argument("--algo", default="dqn", choices=["dqn", "ddqn"])
parser.add_argument("--render", action="store_true")
parser.add_argument("--seed", type=int)
parser.add_argument("--mode", choices=["train", "display"])
parser.add_argument("--out", dest="output", default="runs")
parser.add_argument("--env", required=True)
parser.add_argument("data")
args = parser.parse_args()
"""


@pytest.mark.parametrize(
    ("attribute", "kind", "known"),
    [
        ("model_name", Kind.STR, frozenset({"DQN"})),
        ("num_episodes", Kind.NUMBER, frozenset({1000})),
        ("algo", Kind.STR, frozenset({"dqn", "ddqn"})),
        ("render", Kind.BOOL, None),
        ("seed", Kind.UNKNOWN, None),  # no default: an option to give
        ("output", Kind.STR, frozenset({"runs"})),
        ("env", Kind.UNKNOWN, None),  # required: what the user passes
        ("data", Kind.UNKNOWN, None),  # positional: what the user passes
        ("missing", Kind.UNKNOWN, None),
    ],
)
def test_command_line_options_are_their_defaults(
    tmp_path: Path, attribute: str, kind: Kind, known: frozenset[object] | None
) -> None:
    """A program is linted as it runs with its defaults (and an option's ``choices``)."""
    found = value_of(tmp_path, ARGPARSE, f"args.{attribute}")
    assert found.kind is kind
    atom = found.atoms[0]
    assert (atom.texts if kind is Kind.STR else atom.ints) == known


def test_an_option_with_choices_and_no_default_is_none_or_one_of_them(tmp_path: Path) -> None:
    found = value_of(tmp_path, ARGPARSE, "args.mode")
    assert literals(found) == {None, "train", "display"}


MANY_VALUES = """
import argparse
NETS = {"lenet": 1, "resnet": 2, "capsnet": 3}
parser = argparse.ArgumentParser()
parser.add_argument("--models", nargs="+", choices=NETS.keys(), default=NETS.keys())
parser.add_argument("--pair", nargs=2, choices=["a", "b"])
parser.add_argument("--net", choices=NETS.keys(), default="lenet")
parser.add_argument("--any", nargs="*", choices=["a", "b"])
parser.add_argument("--opt", nargs="?", choices=["a", "b"], default="a")
args = parser.parse_args()
"""


@pytest.mark.parametrize(
    ("attribute", "lengths", "texts"),
    [
        # Lists of any length are not what the program lists: the default stands.
        ("models", {3}, {"lenet", "resnet", "capsnet"}),
        ("pair", {2}, {"a", "b"}),  # or None: not given
        ("any", None, None),  # no default: an option to give
        # One value: the default or one of the choices, a display or not.
        ("net", None, {"lenet", "resnet", "capsnet"}),
        ("opt", None, {"a", "b"}),
    ],
)
def test_an_option_of_many_values_is_a_list_of_its_choices(
    tmp_path: Path, attribute: str, lengths: set[int] | None, texts: set[str] | None
) -> None:
    found = value_of(tmp_path, MANY_VALUES, f"args.{attribute}")
    kept = [a for a in found.atoms if a.kind is not Kind.NONE]
    assert len(kept) == 1
    (atom,) = kept
    if texts is None:
        assert atom.kind is Kind.UNKNOWN
        return
    if lengths is None:
        assert (atom.kind, atom.texts) == (Kind.STR, frozenset(texts))
        return
    assert (atom.kind, atom.length) == (Kind.CONTAINER, frozenset(lengths))
    assert atom.element is not None
    assert atom.element.atoms[0].texts == frozenset(texts)


def test_a_module_imported_by_a_computed_name(tmp_path: Path) -> None:
    """``importlib.import_module(f"agents.{name}")`` is the project module the name names (read
    from the index, never imported; the name a split of a known text, as Albert-Z-Guo's
    evaluation script picks its agent); a name that names none, or is not known, is unknown."""
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "__init__.py").write_text("")
    agent = tmp_path / "agents" / "dqn.py"
    agent.write_text("class Agent:\n    pass\n")
    main = tmp_path / "main.py"
    text = textwrap.dedent(
        """\
        import importlib
        name = "dqn_ep10".split("_")[0]
        found = importlib.import_module(f"agents.{name}")
        agent = found.Agent()
        absent = importlib.import_module("agents.ppo")
        unknown = importlib.import_module(f"agents.{other}")
        """
    )
    main.write_text(text)
    modules = [
        index_source(text, main),
        index_source("", tmp_path / "agents" / "__init__.py"),
        index_source(agent.read_text(), agent),
    ]
    program = Program(ProjectIndex(modules))
    where = program.inference.where_of(modules[0], "")
    value = program.value(from_ast(ast.parse("agent", mode="eval").body), where)
    assert value.kind is Kind.INSTANCE and value.atoms[0].ref.path == str(agent)
    for name in ("absent", "unknown"):
        found = program.value(from_ast(ast.parse(name, mode="eval").body), where)
        assert found.kind is Kind.UNKNOWN
    assert modules[0].imported_by_name == (("agents.", False), ("agents.ppo", True))


@pytest.mark.parametrize(
    ("imports", "flags"),
    [
        ("import tensorflow as tf", "tf.app.flags"),
        ("import tensorflow as tf", "tf.compat.v1.flags"),
        ("from absl import flags", "flags"),
        # What tf.app.flags is (cleverhans.compat imports it so).
        ("from tensorflow.python.platform import flags", "flags"),
    ],
)
def test_flags_are_their_defaults(tmp_path: Path, imports: str, flags: str) -> None:
    source = f"""
{imports}
FLAGS = {flags}.FLAGS
{flags}.DEFINE_integer("num_classes", 10, "How many classes")
{flags}.DEFINE_string("model", default="cnn", help="Which model")
"""
    classes = value_of(tmp_path, source, "FLAGS.num_classes")
    assert classes.kind is Kind.NUMBER and classes.atoms[0].ints == frozenset({10})
    model = value_of(tmp_path, source, "FLAGS.model")
    assert model.kind is Kind.STR and model.atoms[0].texts == frozenset({"cnn"})
    assert value_of(tmp_path, source, "FLAGS.other").kind is Kind.UNKNOWN


#: moonshot (set Z39 of stop 54): each run script defines its own flags; a library module they
#: both import reads one.
FLAG_SCRIPT = """\
from absl import flags
import library

FLAGS = flags.FLAGS
flags.DEFINE_integer("fine_tune_steps", {default}, "gradient steps")
"""


def test_a_flag_is_the_default_of_the_programs_that_read_it(tmp_path: Path) -> None:
    """Failed before: a flag's value joined every definition of the project, so a script's
    ``if FLAGS.fine_tune_steps is not None:`` with its own default ``None`` was undecided
    because another script defines the flag as 10. A module both scripts import runs in
    both programs: it reads either."""
    texts = {
        "davenet.py": FLAG_SCRIPT.format(default="None"),
        "maml.py": FLAG_SCRIPT.format(default="10"),
        "library.py": "from absl import flags\n\nFLAGS = flags.FLAGS\n",
    }
    modules = []
    for name, text in texts.items():
        (tmp_path / name).write_text(text)
        modules.append(index_source(text, tmp_path / name))
    program = Program(ProjectIndex(modules).close())
    read = from_ast(ast.parse("FLAGS.fine_tune_steps", mode="eval").body)
    by_name = {Path(m.path).name: m for m in modules}

    def flag(name: str) -> Value:
        return program.value(read, program.inference.where_of(by_name[name], ""))

    assert flag("davenet.py").kind is Kind.NONE
    assert flag("maml.py").atoms[0].ints == frozenset({10})
    assert {a.kind for a in flag("library.py").atoms} == {Kind.NONE, Kind.NUMBER}


STORED = """
import tensorflow as tf

class Net:
    def __init__(self, scales):
        self.variables = tf.compat.v1.trainable_variables()
        self.by_scale = {}
        self.steps = []
        for i in range(scales):
            self.by_scale[str(i)] = [v for v in self.variables if str(i) in v.name]
        self.steps.append(3)

net = Net(9)
counts = {}
counts["a"] = 5
"""


@pytest.mark.parametrize(
    ("expression", "kind", "ints", "structural"),
    [
        # ``X[key] = value`` puts the value in: a dict's values are what is stored under keys.
        ("net.by_scale['0']", Kind.CONTAINER, None, True),
        ("counts['a']", Kind.NUMBER, frozenset({5}), False),
        # How many variables, and a ``range`` over that: the model's structure, not the data.
        ("len(net.by_scale['0'])", Kind.NUMBER, None, True),
        ("range(len(net.variables))", Kind.CONTAINER, None, True),
        ("range(1, len(net.variables))", Kind.CONTAINER, None, True),
        ("range(len(net.steps))", Kind.CONTAINER, None, False),
    ],
)
def test_items_stored_and_structural_counts(
    tmp_path: Path, expression: str, kind: Kind, ints: frozenset[int] | None, structural: bool
) -> None:
    found = value_of(tmp_path, STORED, expression)
    assert found.kind is kind
    assert found.structural is structural
    if kind is Kind.NUMBER:
        assert found.ints == ints


APPENDED = """
def folds(split_index=[0.5, 0.6, 0.7, 0.8, 0.9]):
    found = []
    for split in split_index:
        train = int(split * 100)
        found.append((train, split))
    return found

def {name}(xs):
    found = []
    for x in range(8):
        {statement}
    return found
"""


@pytest.mark.parametrize(
    ("statement", "expected", "most"),
    [
        # One item per iteration: the loop's trip count.
        ("found.append(x)", frozenset({8}), 8),
        # At most one per iteration: under a test, after a `break` or a `continue`: at
        # most the trip count.
        ("if x:\n            found.append(x)", None, 8),
        ("found.append(x)\n        if x > 3:\n            break", None, 8),
        ("if x in xs:\n            continue\n        found.append(x)", None, 8),
        # Not known: twice per iteration, emptied again in the loop, extended.
        ("found.append(x)\n        found.append(-x)", None, None),
        ("found.append(x)\n        found = []", None, None),
        ("found.append(x)\n        found.extend(xs)", None, None),
        ("for y in xs:\n            found.append(y)", None, None),
    ],
)
def test_a_list_filled_once_per_iteration_has_the_loops_length(
    tmp_path: Path, statement: str, expected: frozenset[int] | None, most: int | None
) -> None:
    source = APPENDED.format(name="grow", statement=statement)
    found = value_of(tmp_path, source, "found", "grow")
    assert (found.lengths, found.bound) == (expected, most)
    # Through a call: the default list of five splits makes five folds.
    assert value_of(tmp_path, source, "folds()").lengths == frozenset({5})


@pytest.mark.parametrize(
    ("made", "statement", "expected", "most"),
    [
        # A dict gains at most one entry per iteration (a key may come again).
        ("{}", "found[name()] = x", None, 6),
        ("dict()", "found[name()] = x", None, 6),
        ("list()", "found.append(x)", frozenset({6}), 6),
        # Not counted: a dict that starts with entries, one filled by a slice, twice a turn.
        ("{'a': 1}", "found[name()] = x", None, None),
        ("[]", "found[1:] = [x]", None, None),
        ("{}", "found[x] = 1\n    found[-x] = 2", None, None),
    ],
)
def test_a_container_filled_once_per_iteration_at_module_level(
    tmp_path: Path, made: str, statement: str, expected: frozenset[int] | None, most: int | None
) -> None:
    """A notebook's cells: ``results = dict()``, then ``for _ in range(MODELS_TO_TRAIN):
    results[name] = runtime`` in the next cell (deepgrp's training notebook, unseen set Z9)."""
    source = f"MODELS = 6\nfound = {made}\nfor x in range(MODELS):\n    {statement}\n"
    found = value_of(tmp_path, source, "found")
    assert (found.lengths, found.bound) == (expected, most)


def test_a_list_of_a_graphs_variables_is_structure(tmp_path: Path) -> None:
    """cleverhans's ``ordered_union`` of two collections of the graph's variables: the sum of
    the two, and the list it fills from it (at most one item per variable), hold as many
    items as the graph has variables."""
    source = """
    import tensorflow as tf

    def ordered_union(l1, l2):
        out = []
        for e in l1 + l2:
            if e not in out:
                out.append(e)
        return out

    both = tf.compat.v1.trainable_variables() + tf.compat.v1.global_variables()
    union = ordered_union(tf.compat.v1.trainable_variables(), tf.compat.v1.model_variables())
    mixed = tf.compat.v1.trainable_variables() + [1, 2]
    """
    assert value_of(tmp_path, source, "both").structural
    assert value_of(tmp_path, source, "union").structural
    assert not value_of(tmp_path, source, "mixed").structural


CERTIFY = """
import tensorflow as tf
flags = tf.compat.v1.flags
FLAGS = flags.FLAGS
flags.DEFINE_integer("adv_class", {default}, "all classes if -1")

def main(num_classes=10):
    if FLAGS.adv_class == -1:
        end = num_classes
    else:
        end = FLAGS.adv_class + 1
    return end
"""


@pytest.mark.parametrize(("default", "ends"), [(-1, {10}), (3, {4})])
def test_a_test_on_module_state_rules_its_block_out_for_every_call(
    tmp_path: Path, default: int, ends: set[int]
) -> None:
    """cleverhans's certify: ``if FLAGS.adv_class == -1:`` reads no parameter; with the flag's
    default it is decided for every call, and the other block's assignment does not count."""
    found = value_of(tmp_path, CERTIFY.format(default=default), "end", function="main")
    assert found.kind is Kind.NUMBER and found.ints == frozenset(ends)


@pytest.mark.parametrize(
    ("source", "kind"),
    [
        ("from keras.models import *", Kind.MODEL),
        ("from tensorflow.keras.models import *", Kind.MODEL),
        # the module's own definition is what the name is
        ("from keras.models import *\n\ndef load_model(path):\n    return 3", Kind.NUMBER),
        # a star import of anything else binds nothing the rules know
        ("from helpers import *", Kind.UNKNOWN),
    ],
)
def test_a_star_import_of_keras_binds_the_names_the_rules_know(
    tmp_path: Path, source: str, kind: Kind
) -> None:
    """AttCRISPR's ``from keras.models import *`` then ``load_model(path)``."""
    assert value_of(tmp_path, source, 'load_model("m.h5")').kind is kind


ENUMS = """
import enum

class Parameters(enum.Enum):
    n_trials = 5
    study = "orthostatic"

class Color(str, enum.Enum):
    RED = "red"

class Plain:
    value = 3
    n_trials = 7
"""


@pytest.mark.parametrize(
    ("expression", "ints", "texts"),
    [
        ("Parameters.n_trials.value", {5}, None),
        ("Parameters.study.value", None, {"orthostatic"}),
        ("Color.RED.value", None, {"red"}),
        ("Plain.value", {3}, None),  # a class attribute named value, not a member's
    ],
)
def test_an_enum_members_value_is_the_literal_it_is_made_of(
    tmp_path: Path, expression: str, ints: set[int] | None, texts: set[str] | None
) -> None:
    found = value_of(tmp_path, ENUMS, expression)
    assert found.ints == (frozenset(ints) if ints else None)
    assert (found.atoms[0].texts if texts else None) == (frozenset(texts) if texts else None)


LOOP_MODELS = """
LOOP_MODELS = {flag}

def main(model, kinds):
    if {test}:
        models = kinds
    else:
        models = [model]
    return models
"""


@pytest.mark.parametrize(
    ("flag", "test", "lengths"),
    [
        ("False", "LOOP_MODELS", {1}),
        ("True", "not LOOP_MODELS", {1}),
        ("True", "LOOP_MODELS", {3}),
        ("0", "not not LOOP_MODELS", {1}),
    ],
)
def test_the_truth_of_module_state_rules_a_block_out_for_every_call(
    tmp_path: Path, flag: str, test: str, lengths: set[int]
) -> None:
    """Orthostatic-Hypotension-detector's ``if LoopModels:`` with ``LoopModels = False``:
    the loop runs over the one model of the other block."""
    source = LOOP_MODELS.format(flag=flag, test=test) + 'main("mlp", ["a", "b", "c"])\n'
    found = value_of(tmp_path, source, "models", function="main")
    assert found.kind is Kind.CONTAINER and found.lengths == frozenset(lengths)


BINDING = """
class Agent:
    def act(self, obs, t, noise=True, *, mode):
        return obs

def plain(a, b=1, *rest, **options):
    return a

def closure():
    return None
"""


@pytest.mark.parametrize(
    ("function", "call", "bound", "binds"),
    [
        ("Agent.act", "agent.act(obs, 3, mode=1)", True, True),
        ("Agent.act", "agent.act(obs, t=3, mode=1)", True, True),
        ("Agent.act", "agent.act(obs, mode=1)", True, False),  # `t` left out
        ("Agent.act", "agent.act(obs, 3)", True, False),  # keyword-only `mode` left out
        ("Agent.act", "agent.act(*args)", True, True),  # not known
        ("Agent.act", "Agent.act(agent, obs, 3, mode=1)", False, True),
        ("Agent.act", "Agent.act(obs, 3, mode=1)", False, False),
        ("plain", "plain(1)", False, True),
        ("plain", "plain(b=2)", False, False),
        ("plain", "plain(**options)", False, True),
        ("plain", "plain(1, 2, 3, 4)", False, True),  # `*rest` takes the others
        ("Agent.act", "agent.act(obs, 3, False, 4, mode=1)", True, False),  # one too many
        ("closure", "closure(x)", False, False),  # which-whale's `base_network(input_a)`
        ("closure", "closure()", False, True),
    ],
)
def test_a_call_binds_the_required_parameters(
    tmp_path: Path, function: str, call: str, bound: bool, binds: bool
) -> None:
    module = index_source(BINDING, tmp_path / "agent.py")
    expr = from_ast(ast.parse(call, mode="eval").body)
    assert module.functions[function].binds(expr, bound=bound) is binds


@pytest.mark.parametrize(
    ("imports", "call"),
    [
        ("from sklearn.ensemble import RandomForestClassifier", "RandomForestClassifier()"),
        ("from sklearn.linear_model import Ridge", "Ridge(alpha=1.0).fit(x, y)"),
        ("import xgboost as xgb", "xgb.XGBClassifier(n_estimators=100)"),
        ("import lightgbm", "lightgbm.LGBMRegressor()"),
        ("from catboost import CatBoostClassifier", "CatBoostClassifier().fit(x, y)"),
        ("import torch", "torch.nn.Linear(4, 1)"),
    ],
)
def test_other_libraries_estimators_are_no_keras_models(
    tmp_path: Path, imports: str, call: str
) -> None:
    """One row per package of `keras.OTHER_ESTIMATOR_PACKAGES`: what their classes make (and
    scikit-learn's `fit`, which returns the estimator) is known not to be a Keras model."""
    assert imports.split()[1].partition(".")[0] in keras.OTHER_ESTIMATOR_PACKAGES
    found = value_of(tmp_path, imports, call)
    assert found.kind is Kind.ESTIMATOR and not found.where_known(Kind.MODEL)


@pytest.mark.parametrize(
    ("imports", "call"),
    [
        ("from sklearn.model_selection import train_test_split", "train_test_split(x, y)"),
        ("import torch", "torch.zeros(3)"),
    ],
)
def test_other_libraries_functions_make_no_estimator(
    tmp_path: Path, imports: str, call: str
) -> None:
    assert value_of(tmp_path, imports, call).kind is not Kind.ESTIMATOR


def test_a_callable_parameter_is_what_each_call_passes(tmp_path: Path) -> None:
    """A helper that calls what it is given runs, for each call, the function that call
    passes: the loop that hands it the predicting function is reported, not the loop that
    hands it another, nor a loop whose own ``def`` shadows the top-level one."""
    from tflint_leaks.config import Settings
    from tflint_leaks.engine.runner import lint_paths

    (tmp_path / "helpers.py").write_text("def measure(fn, batch):\n    return fn(batch)\n")
    path = tmp_path / "main.py"
    path.write_text(
        textwrap.dedent(
            """
            import tensorflow as tf
            from helpers import measure

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])


            def quiet(x):
                return model(x, training=False)


            def predict_fn(x):
                return model.predict(x)


            for batch in batches:
                measure(quiet, batch)

            for batch in batches:
                def predict_fn(x):
                    return model(x, training=False)
                measure(predict_fn, batch)

            def predict_fn(x):
                return model.predict(x)

            for batch in batches:
                measure(predict_fn, batch)
            """
        ).lstrip("\n")
    )
    result = lint_paths([tmp_path], Settings(select=("ALL",)))
    found = [
        (
            d.code,
            Path(d.file).name,
            d.start.line,
            [(Path(r.file).name, r.start.line) for r in d.related],
        )
        for d in result.diagnostics
    ]
    assert found == [
        ("TFL402", "main.py", 24, [("main.py", 27), ("helpers.py", 2), ("main.py", 26)]),
    ]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # the loop's own def, above the call in its body
        ("def f(): pass\nfor b in bs:\n    def f(): pass\n    use(f)\n", {"f"}),
        # the loop's own def below the call: the previous iteration's, or the top-level one
        ("def f(): pass\nfor b in bs:\n    use(f)\n    def f(): pass\n", set()),
        # bound again between the def and the call, or in the block's other branch
        ("for b in bs:\n    def f(): pass\n    f = wrap(f)\n    use(f)\n", set()),
        ("if c:\n    def f(): pass\nelse:\n    def f(): pass\nuse(f)\n", set()),
        # inside an `if` in the loop: the def above the `if` still reaches
        ("for b in bs:\n    def f(): pass\n    if b:\n        use(f)\n", {"f"}),
    ],
)
def test_a_def_inside_a_block_reaches_the_statements_after_it(
    source: str, expected: set[str]
) -> None:
    import libcst as cst

    from tflint_leaks.analysis.nodes import children
    from tflint_leaks.analysis.scope import bound_names, defined_in_block, nested_definitions

    module = cst.parse_module(source)

    def path_to_use(node: cst.CSTNode) -> list[cst.CSTNode] | None:
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Name)
            and node.func.value == "use"
        ):
            return [node]
        for child in children(node):
            found = path_to_use(child)
            if found is not None:
                return [node, *found]
        return None

    ancestors = path_to_use(module)
    assert ancestors is not None
    assert defined_in_block(ancestors, nested_definitions(module), bound_names) == expected


@pytest.mark.parametrize(
    ("source", "expression", "kind"),
    [
        # tensorflow/similarity's benchmark: a registry of lambdas, filled by item stores.
        (
            'ARCH = {}\nARCH["effnet"] = lambda p: tf.keras.Sequential([p])',
            "ARCH[name](params)",
            Kind.MODEL,
        ),
        ('ARCH = {"effnet": lambda: tf.keras.Sequential()}', "ARCH['effnet']()", Kind.MODEL),
        ("make = lambda: tf.keras.models.load_model('m.keras')", "make()", Kind.MODEL),
        ("make = (lambda: lambda: tf.keras.Sequential())()", "make()", Kind.UNKNOWN),
        # A lambda in a comprehension reads the comprehension's names: not followed.
        ("makers = [lambda: m for m in models]", "makers[0]()", Kind.UNKNOWN),
    ],
)
def test_a_module_level_lambda_is_the_function_it_defines(
    tmp_path: Path, source: str, expression: str, kind: Kind
) -> None:
    found = value_of(tmp_path, f"import tensorflow as tf\n{source}\n", expression)
    assert found.kind is kind


@pytest.mark.parametrize(
    "name",
    [
        "keras.saving.deserialize_keras_object",
        "keras.utils.deserialize_keras_object",
        "keras.layers.deserialize",
    ],
)
def test_a_deserialized_object_is_not_known_to_be_a_model(tmp_path: Path, name: str) -> None:
    """kgcnn's `HyperParameter.fit()` deserializes its callbacks: what a configuration names
    is most often a layer, a callback or an optimizer (TFL401 called each one a model)."""
    module, _, last = name.rpartition(".")
    found = value_of(tmp_path, f"import {module} as lib", f"lib.{last}(config)")
    assert found.kind is not Kind.MODEL


@pytest.mark.parametrize(
    ("source", "ints"),
    [
        # The melanoma TPU pipeline's configuration (unseen set Q of stop 43).
        ('config = namedtuple("config", ["nfolds", "lr"])\nC = config(nfolds=4, lr=0.1)', {4}),
        ('config = namedtuple("config", "lr nfolds")\nC = config(0.1, 5)', {5}),
        ('config = namedtuple("config", "lr, nfolds")\nC = config(0.1, nfolds=6)', {6}),
        ('config = namedtuple("config", ["nfolds"])\nC = config(*given)', None),
        # More fields than the index keeps of a list: the keyword names its field.
        (
            'config = namedtuple("config", ["a", "b", "c", "d", "e", "f", "g", "h", "nfolds"])\n'
            "C = config(a=1, nfolds=4)",
            {4},
        ),
        ("config = namedtuple('config', names)\nC = config(nfolds=4)", None),
    ],
)
def test_a_namedtuple_holds_what_its_construction_gives(
    tmp_path: Path, source: str, ints: set[int] | None
) -> None:
    found = value_of(tmp_path, "from collections import namedtuple\n" + source, "C.nfolds")
    assert found.ints == (frozenset(ints) if ints is not None else None)


#: A FastAPI service that keeps its model on the app object, as routes set it.
APP_STATE = """
import fastapi
import tensorflow as tf

app = fastapi.FastAPI()


@app.on_event("startup")
def startup():
    app.model = None
    app.state.model = None


@app.get("/load")
def load():
    app.model = tf.keras.models.load_model("model.keras")
    app.state.model = tf.keras.models.load_model("model.keras")


@app.post("/predict")
def predict(x):
    return x


def other(app):
    return app
"""


@pytest.mark.parametrize(
    ("expression", "function", "kinds"),
    [
        # what the module's code stores on its global, joined over every store and with
        # what the object has before any (here not known: a FastAPI app's own attribute)
        ("app.model", "predict", {Kind.MODEL, Kind.NONE, Kind.UNKNOWN}),
        ("app.state.model", "predict", {Kind.MODEL, Kind.NONE, Kind.UNKNOWN}),
        ("app.model", "", {Kind.MODEL, Kind.NONE, Kind.UNKNOWN}),
        # a parameter named like the global is another object
        ("app.model", "other", {Kind.UNKNOWN}),
        # an attribute the module never stores is the library's
        ("app.title", "predict", {Kind.UNKNOWN}),
    ],
)
def test_an_attribute_stored_on_a_global_is_what_the_module_stores(
    tmp_path: Path, expression: str, function: str, kinds: set[Kind]
) -> None:
    found = value_of(tmp_path, APP_STATE, expression, function)
    assert {each.kind for each in found.atoms} == kinds


def test_an_option_stored_again_is_its_default_or_what_is_stored(tmp_path: Path) -> None:
    """A read may run before the store: ``args.epochs`` is the command line's default or 1."""
    source = """
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=100)
    args = parser.parse_args()


    def quick():
        args.epochs = 1
    """
    assert value_of(tmp_path, source, "args.epochs").ints == frozenset({1, 100})


@pytest.mark.parametrize(
    ("expression", "most"),
    [
        ("images[:3] + images[-3:]", 6),
        ("list(range(10))[:3]", 3),
        ("list(range(2))[:3]", 2),
        ("images[2:]", None),
    ],
)
def test_a_slice_takes_at_most_what_it_says(
    tmp_path: Path, expression: str, most: int | None
) -> None:
    found = value_of(tmp_path, "def f(images):\n    pass\n", expression, "f")
    assert found.kind is Kind.CONTAINER or most is None
    assert (found.atoms[0].most if found.atoms else None) == most


CONSTANTS = """
import tensorflow as tf

FLAG = True

def load(weights, given=False):
    global shared
    keras = False
    twice = False
    counted = 0
    shared = False
    counted += 1
    twice = True
    return tf.keras.models.load_model(weights) if {test} else tf.lite.Interpreter(weights)
"""


@pytest.mark.parametrize(
    ("test", "fixed", "loads"),
    [
        ("keras", True, False),  # bound once, to a literal: the loader never runs
        ("not keras", True, True),
        ("FLAG", True, True),  # module state
        ("not FLAG", True, False),
        ("twice", False, True),  # bound twice
        ("counted", False, True),  # augmented
        ("given", False, True),  # a parameter: the caller decides
        ("shared", True, True),  # module state that a function sets: not known
    ],
)
def test_a_literal_constant_of_the_function_decides_its_conditional_expressions(
    tmp_path: Path, test: str, fixed: bool, loads: bool
) -> None:
    """yolov5-tf2-keras's ``keras = False`` above ``load_model(w) if keras else ...``: the
    value never computed is a branch of :attr:`Body.fixed`, and the summary leaves it out."""
    path = tmp_path / "m.py"
    text = textwrap.dedent(CONSTANTS.format(test=test))
    path.write_text(text)
    module = index_source(text, path)
    function = module.functions["load"]
    loader = next(s for s in function.body.calls if s.call.parts[0].text.endswith("load_model"))
    effects = Program(ProjectIndex([module])).summary(FunctionRef(module.path, "load"))
    built = {e.span for e in effects if e.kind is EffectKind.BUILD_MODEL}
    assert (loader.span in built) is loads
    assert [b.then for b in function.body.fixed] == ([loader.span] if fixed else [])


@pytest.mark.parametrize(
    ("call", "varies"),
    [
        ("ds.padded_batch(64)", True),  # each batch padded to its own longest element
        ("ds.padded_batch(64, padded_shapes=([-1], [-1]))", True),
        ("ds.padded_batch(64, [None])", True),
        ("ds.padded_batch(64, padded_shapes=tf.TensorShape([None]))", True),
        ("ds.padded_batch(64, padded_shapes=([40], [40]))", False),
        ("ds.padded_batch(64, padded_shapes=shapes)", False),  # not known: not said
        ("ds.bucket_by_sequence_length(length, [10, 20], [8, 8, 8])", True),
        ("ds.bucket_by_sequence_length(length, [10], [8, 8], pad_to_bucket_boundary=True)", False),
    ],
)
def test_padded_batches_whose_shapes_vary(call: str, varies: bool) -> None:
    expr = from_ast(ast.parse(call, mode="eval").body)
    assert expr.method is not None
    assert keras.pads_to_each_batch(expr.method[1], expr) is varies
