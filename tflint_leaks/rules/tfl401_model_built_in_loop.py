from __future__ import annotations

import libcst as cst

from tflint_leaks.analysis.nodes import dotted
from tflint_leaks.diagnostics import RelatedRole
from tflint_leaks.rulekit.context import FileContext, InsertStatement, Report
from tflint_leaks.rulekit.facts import EffectKind
from tflint_leaks.rulekit.rule import Invalid, Rule, Valid
from tflint_leaks.rules._calls import (
    effects_through_calls,
    every_iteration,
    relate_chain,
    relate_loop,
    repeater,
    source_of,
)
from tflint_leaks.rules._models import (
    STORE_METHODS,
    assigned_names,
    in_repetition,
    kept_element,
    kept_in_loop,
    loop_cleans_up,
    method_call,
    per_call,
    per_call_note,
    repeated_unbounded,
    stored_on_item,
)

#: alibi-detect's drift detectors, reduced: the class users build picks the backend's
#: detector in ``__init__``, and the backends' detectors share a base whose ``predict`` calls
#: their own ``score``; only the TensorFlow one clones a Keras model each time.
_DETECTORS = """\
import tensorflow as tf

class BaseDrift:
    def predict(self, x):
        return self.score(x)

class DriftTF(BaseDrift):
    def __init__(self, model):
        self.model = model

    def score(self, x):
        return tf.keras.models.clone_model(self.model)(x)

class DriftTorch(BaseDrift):
    def score(self, x):
        return x

class Drift:
    def __init__(self, model, backend="tensorflow"):
        backend = backend.lower()
        if backend == "tensorflow":
            detector = DriftTF
        else:
            detector = DriftTorch
        self._detector = detector(model)

    def predict(self, x):
        return self._detector.predict(x)

"""


class ModelBuiltInLoop(Rule):
    """
    ## What it does
    Flags a Keras model built or loaded on every iteration of a loop (`for`, `while`, a
    comprehension) when nothing in the loop calls `clear_session()`: a constructor
    (`Sequential(...)`, `Model(inputs, outputs)`, a project subclass of `keras.Model`), a loader
    (`load_model`, `clone_model`, `keras.applications.*`, Hugging Face's
    `TF*.from_pretrained`), a project factory that returns a model
    (`model = build_model(config)`), or project code that builds one internally, up to four
    calls deep and in any file (`train_one(fold)`, `Network(...).train()`, a class whose
    `__init__` builds its model), also as a deferred call (joblib's `Parallel(...)(delayed(
    train_one)(fold) for fold in folds)` runs `train_one(fold)`, in worker processes it reuses).
    The message gives the number of models when the loops' trip counts are known; `related`
    lists the calls down to the build.

    ## Why is this bad?
    Keras keeps global state for every model it creates (the layer-name counters, the graph and
    its ops). Dropping the Python reference (`del model`, `gc.collect()`) does not release it, so
    a hyperparameter search or cross-validation loop grows in memory with every trial; the Keras
    docs say to call `clear_session()` when creating models in a loop.

    Not flagged: a loop that calls `clear_session()` (directly, or through a project function such
    as `reset()`, or inside the factory itself), models kept on purpose (`models.append(...)`,
    `models[name] = ...`, `info.model = ...` on the item the loop iterates, the element of a
    comprehension: an ensemble; keeping what a call returns counts only when that may hold
    the model, as a trial's dict of results with its model does, not a score), sub-models
    composed inside a Keras layer or model class (directly or through project bases), project
    layers made of sub-models (composing one model), a view
    of an existing model (`Model(base.input,
    base.get_layer("fc").output)`, `Model(base.inputs, layer.get_output_at(0))`: its tensors
    exist, no layer is built), a function returning a
    model it did not build (a cached global), and loops that build a known small number of
    models (at most `max-loop-iterations`, default 10, in all: `range(3)`, a literal grid, a
    5-fold split, a list or dict filled once per split, a `folds=5` parameter every call site
    leaves or sets small, a counter that `break`s the loop after 10 iterations, a body that
    ends with `break`, `return` or `raise`), and a model made on the first iteration only
    (`if not player: player = get_player(config)` inside the loop). "In all" counts the loops of the
    code the loop calls too: 7 networks each cross-validated over 5 folds by a called
    `run_cv` build 35 models, and the call in the outer loop is flagged.

    The same holds where the repetition is a framework's (the entry points of
    `tflint_leaks/analysis/entry_points.py`): a Flask, FastAPI, Django, aiohttp, Starlette,
    Tornado or gRPC handler runs per request, a Celery task per task, an Optuna, Ray Tune or
    Hyperopt objective per trial (`n_trials=100` gives the count, as Ray Tune's `num_samples`
    does, default 1, unless the project's `grid_search` repeats it per point), a Keras callback's
    `on_train_batch_end` per batch and `on_epoch_end` per epoch, a `tf.py_function` per
    element, a Gym `step` per step, a scheduled job per run; also a function defined inside
    another that hands it to the framework (`def main(): def trial(params): ...`, then
    `fmin(fn=trial, ...)`, or an app factory's routes: `def create_app(): app = Flask(...)`,
    then `@app.route(...)` on a function defined in it). A model loaded in a route is
    reported "every request"; a model loaded once at module level and used by the route is
    not, nor one loaded under a first-call guard (`if model is None:`, `if name not in
    cache:`; a lookup keyed by an array or tensor the call is given, `if board.tobytes() not in
    memo:`, runs for every new one and counts as every call; a guard on Flask's `g`, made
    anew for each request, counts as every request), nor a KerasTuner
    model-building function (`Tuner._try_build` calls `clear_session()` before every
    `build(hp)`), nor an Optuna objective whose `study.optimize(..., callbacks=[...])` hands
    Optuna a function that calls `clear_session()` (Optuna calls each after every trial),
    nor a `Dataset.map` function (traced once, not run per element), nor `on_train_end`
    (once). A loop under a periodic guard (`if step % 100 == 0:`, or after an
    early exit `if step % 100: continue`) runs its body one time in 100: the count is divided
    (see `max-loop-iterations`).

    ## Example
    ```python
    import tensorflow as tf

    def build_model(units):
        return tf.keras.Sequential([tf.keras.layers.Dense(units), tf.keras.layers.Dense(1)])

    for units in range(16, 528, 16):  # 32 models
        model = build_model(units)
        model.fit(x, y)
    ```

    ## Use instead
    ```python
    import tensorflow as tf

    def build_model(units):
        return tf.keras.Sequential([tf.keras.layers.Dense(units), tf.keras.layers.Dense(1)])

    for units in range(16, 528, 16):
        tf.keras.backend.clear_session()
        model = build_model(units)
        model.fit(x, y)
    ```

    ## Fix safety
    The fix inserts `tf.keras.backend.clear_session()` (or `keras.backend.clear_session()`,
    through the file's own import) as the first statement of the innermost `for` or `while`
    loop; a comprehension gets no fix. It is unsafe: `clear_session()` resets all of Keras'
    global state, so a model built before the loop and used inside it gets new layer names and,
    with TF1-style graphs, loses its graph; metrics and optimizers created outside the loop may
    need rebuilding.

    ## Options
    - `max-loop-iterations`

    ## Guard it
    `tf_budget.iterations` (the pytest plugin's `tf_budget` fixture
    ([docs/budget.md](https://github.com/tflint-leaks/tflint-leaks/blob/main/docs/budget.md))) takes
    the configurations and hands them to the search, sampling between models: without
    `clear_session()` the test fails naming `Keras layer/model names` and their growth per model.
    ```python
    import tensorflow as tf


    def build_model(units):
        return tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(units)])


    def search(widths):
        for units in widths:
            tf.keras.backend.clear_session()
            model = build_model(units)
            model(tf.ones([1, 4]))


    def test_search_does_not_grow(tf_budget):
        search(tf_budget.iterations([2, 4, 8, 16, 32, 64], warmup=2))
    ```

    ## References
    - [`tf.keras.backend.clear_session`](https://www.tensorflow.org/api_docs/python/tf/keras/backend/clear_session)
    - [tensorflow/tensorflow#30324](https://github.com/tensorflow/tensorflow/issues/30324)
    - [keras-team/keras#2102](https://github.com/keras-team/keras/issues/2102)
    """

    VALID = (
        # deepgrp's training notebook: six models trained in one cell, their six checkpoints
        # (a dict with one entry per run) converted in another.
        Valid("""
        import tensorflow as tf

        MODELS_TO_TRAIN = 6
        results = dict()
        for _ in range(MODELS_TO_TRAIN):
            logdir, runtime = train_model()
            results[logdir] = runtime

        def weights_to_model(logdir):
            model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
            model.load_weights(logdir)
            model.save(logdir + ".h5")

        for logdir in results:
            weights_to_model(logdir)
        """),
        # chess-alpha-zero's UCI loop: the player (and its model) is made on the first
        # "isready" or "go" command only; the block sets what its test asks for.
        Valid("""
        import tensorflow as tf


        def get_player(path):
            return tf.keras.models.load_model(path)


        def start(path):
            me_player = None
            while True:
                words = input().split()
                if words[0] == "go":
                    if not me_player:
                        me_player = get_player(path)
                    print(me_player.name)
                elif words[0] == "quit":
                    break
        """),
        # xplique's metric tests: calling a metric runs its class's own `evaluate`; none of
        # those in the list clones the model, as `Randomization`'s does.
        Valid("""
        import tensorflow as tf


        class Metric:
            def __call__(self, x):
                return self.evaluate(x)


        class Deletion(Metric):
            def evaluate(self, x):
                return x * 0


        class Insertion(Metric):
            def evaluate(self, x):
                return x


        class Randomization(Metric):
            def evaluate(self, x):
                randomized = tf.keras.models.clone_model(x)
                return randomized.count_params()


        metrics = [Deletion(), Insertion()]
        for step in range(100):
            for metric in metrics:
                metric(step)
        """),
        # The detector the loop builds runs on PyTorch: no Keras model is cloned.
        Valid(
            _DETECTORS
            + "for backend in ['pytorch', 'keops']:\n"
            + "    for _ in range(100):\n"
            + "        Drift(model, backend=backend).predict(x)\n"
        ),
        # The name is bound to one of two detectors; the one whose `predict` this is was built
        # for PyTorch.
        Valid(
            _DETECTORS
            + "def experiment(backend, runs):\n"
            + "    for _ in range(runs):\n"
            + "        if backend == 'torch-base':\n"
            + "            detector = DriftTorch()\n"
            + "        else:\n"
            + "            detector = Drift(model, **dict(backend=backend))\n"
            + "        detector.predict(x)\n"
            + "experiment('pytorch', 100)\n"
        ),
        # A test that pytest runs with 1, 2 and 3 members: at most 3 models per run.
        Valid("""
        import pytest
        import tensorflow as tf

        @pytest.mark.parametrize("members", [1, 2, 3])
        def test_ensemble(members, x, y):
            for _ in range(members):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile("sgd", "mse")
        """),
        Valid("""
        import tensorflow as tf

        for units in [32, 64]:
            tf.keras.backend.clear_session()
            model = tf.keras.Sequential([tf.keras.layers.Dense(units)])
            model.compile("adam", "mse")
            print(model.evaluate(x, y))
        """),
        Valid("""
        from tensorflow import keras
        from keras import backend as K

        def reset():
            K.clear_session()

        for fold in range(5):
            model = keras.models.load_model(f"fold-{fold}.keras")
            print(model.evaluate(x, y))
            reset()
        """),
        Valid("""
        import tensorflow as tf

        def generate(model, length):
            if len(model.inputs) > 1:
                model = tf.keras.Model(inputs=model.inputs[0], outputs=model.outputs[1])
            return [model(seed) for seed in range(length)]

        def features(base):
            return tf.keras.Model(base.input, [base.get_layer("fc").output, base.output])

        # keras-surgeon's APoZ (set Z40 of stop 54): a view of each node's output.
        def apoz(model, layer, x):
            for node in range(len(layer.inbound_nodes)):
                view = tf.keras.Model(model.inputs, layer.get_output_at(node))
                yield view(x)

        for epoch in range(100):
            texts = generate(trained, 300)
            extractor = features(trained)
            list(apoz(trained, trained.layers[3], x))
        """),
        Valid("""
        import tensorflow as tf

        def kfolds(split_index=[0.5, 0.6, 0.7, 0.8, 0.9]):
            folds = []
            for split in split_index:
                end = int(split * len(data))
                folds.append((data[:end], data[end:]))
            return folds

        for train, test in kfolds():
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.fit(train, epochs=10)
        """),
        # eo-flow's U-Net: layers made of a `Sequential` each, composed into one model, in a
        # model class deriving from Keras' through a project base, or in a plain function.
        Valid("""
        import tensorflow as tf


        class ConvBlock(tf.keras.layers.Layer):
            def __init__(self, filters):
                super().__init__()
                self.block = tf.keras.Sequential([tf.keras.layers.Conv2D(filters, 3)])


        class BaseModel(tf.keras.Model):
            pass


        class UNet(BaseModel):
            def build(self, input_shape):
                net = x = tf.keras.layers.Input(input_shape[1:])
                for level in range(self.n_layers):
                    net = ConvBlock(2 ** level * 16)(net)
                self.net = tf.keras.Model(x, net)


        def build_unet(x, n_layers):
            net = x
            for level in range(n_layers):
                net = ConvBlock(2 ** level * 16)(net)
            return tf.keras.Model(x, net)
        """),
        # DeepTables: each model info keeps the model it loads, as a list of models does.
        Valid("""
        import tensorflow as tf


        def restore(infos):
            for info in infos:
                if isinstance(info.model, str):
                    info.model = tf.keras.models.load_model(info.model)
        """),
        # Three models, in three worker processes, once.
        Valid("""
        import tensorflow as tf
        from joblib import Parallel, delayed


        def fit_one(seed):
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            return model.count_params()


        sizes = Parallel(n_jobs=3)(delayed(fit_one)(i) for i in range(3))
        """),
        # Two networks, five folds each: ten models, and ten fits (TFL403), in all.
        Valid("""
        import tensorflow as tf


        def run_cv(name, folds):
            for fold in range(folds):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.fit(x, y)


        for name in ["vgg", "resnet"]:
            run_cv(name, 5)
        """),
        # A bagging ensemble over five random seeds: an array's rows are counted too.
        Valid("""
        import numpy as np
        import tensorflow as tf

        for seed in np.random.randint(0, 10_000, size=5):
            tf.random.set_seed(seed)
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.fit(x, y)
        """),
        Valid("""
        import tensorflow as tf

        models = []
        for seed in range(5):
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            models.append(model)
        """),
        Valid("""
        import tensorflow as tf

        def build_model():
            tf.keras.backend.clear_session()
            return tf.keras.Sequential([tf.keras.layers.Dense(1)])

        for trial in range(10):
            model = build_model()
        """),
        Valid("""
        import tensorflow as tf

        ensemble = [tf.keras.Sequential([tf.keras.layers.Dense(1)]) for _ in range(3)]
        """),
        Valid("""
        import tensorflow as tf

        class Tower(tf.keras.Model):
            def __init__(self, depth):
                super().__init__()
                self.blocks = []
                for i in range(depth):
                    block = tf.keras.Sequential([tf.keras.layers.Dense(8)])
                    self.blocks.append(block)
        """),
        Valid("""
        from sklearn.linear_model import Ridge

        for alpha in [0.1, 1.0]:
            model = Ridge(alpha=alpha)
        """),
        Valid("""
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        for epoch in range(10):
            model.fit(x, y, epochs=1)
        """),
        Valid(
            """
            import tensorflow as tf
            from sklearn.model_selection import KFold

            for train, test in KFold(n_splits=5).split(x):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.fit(x[train], y[train])
            """
        ),
        Valid(
            """
            import tensorflow as tf
            from sklearn.model_selection import KFold

            fold = 1
            for train, test in KFold(n_splits=15).split(x):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.fit(x[train], y[train])
                fold += 1
                if fold > 10:
                    break
            """
        ),
        Valid(
            """
            import tensorflow as tf

            def cross_validate(folds=5):
                for fold in range(folds):
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.fit(x[fold], y[fold])

            cross_validate()
            cross_validate(folds=3)
            """
        ),
        Valid(
            """
            import tensorflow as tf

            MODEL = tf.keras.models.load_model("model.keras")

            def get_model():
                return MODEL

            for batch in batches:
                model = get_model()
                model.evaluate(batch)
            """
        ),
        Valid(
            """
            import tensorflow as tf

            FOLDS = 5

            def build():
                return tf.keras.Sequential([tf.keras.layers.Dense(1)])

            for fold in range(1, FOLDS + 1):
                model = build()
                model.evaluate(x, y)
            """
        ),
        Valid(
            """
            import tensorflow as tf

            CONFIGS = [16, 32, 64, 128]

            for i in range(len(CONFIGS)):
                model = tf.keras.Sequential([tf.keras.layers.Dense(CONFIGS[i])])
                model.evaluate(x, y)
            """
        ),
        Valid(
            """
            import tensorflow as tf
            from sklearn.model_selection import StratifiedKFold

            for k, (train, test) in enumerate(list(StratifiedKFold(n_splits=4).split(x, y))):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.evaluate(x[test], y[test])
            """
        ),
        Valid(
            """
            import tensorflow as tf
            from sklearn.cross_validation import KFold

            for train, test in KFold(len(y), n_folds=5):
                model = tf.keras.models.load_model("fold.keras")
                model.evaluate(x[test], y[test])
            """
        ),
        Valid(
            """
            import tensorflow as tf
            from flask import Flask, request

            app = Flask(__name__)
            MODEL = tf.keras.models.load_model("model.keras")

            @app.route("/predict", methods=["POST"])
            def predict():
                return MODEL(request.json["x"], training=False).numpy().tolist()
            """
        ),
        Valid(
            """
            import optuna
            import tensorflow as tf

            def objective(trial):
                tf.keras.backend.clear_session()
                units = trial.suggest_int("units", 8, 128)
                model = tf.keras.Sequential([tf.keras.layers.Dense(units)])
                model.compile("adam", "mse")
                return model.evaluate(x, y)

            study = optuna.create_study()
            study.optimize(objective, n_trials=100)
            """
        ),
        Valid(
            """
            import keras_tuner
            import tensorflow as tf

            def build_model(hp):
                units = hp.Int("units", 8, 128)
                return tf.keras.Sequential([tf.keras.layers.Dense(units), tf.keras.layers.Dense(1)])

            tuner = keras_tuner.RandomSearch(build_model, objective="val_loss", max_trials=50)
            tuner.search(x, y, validation_split=0.2)
            """
        ),
        Valid(
            """
            import tensorflow as tf

            def preprocess(image):
                augment = tf.keras.Sequential([tf.keras.layers.RandomFlip()])
                return augment(image)

            images = tf.data.Dataset.from_tensor_slices(x).map(preprocess)
            """
        ),
        # A test's configuration dict: its "modes" key holds three modes, whatever its other
        # keys hold (spektral's model tests).
        Valid("""
        import tensorflow as tf

        class GCN(tf.keras.Model):
            def call(self, inputs):
                return inputs

        CONFIG = {"model": GCN, "modes": ["single", "batch", "mixed"], "sparse": True}

        def run_model(config):
            for mode in config["modes"]:
                model = tf.keras.Sequential([config["model"]()])
                model.evaluate(x[mode], y[mode])

        def test_model():
            run_model(CONFIG)
        """),
        # One agent (and its Keras brain) per predator, kept together on purpose
        # (dqn-multi-agent-rl); an agent made and dropped each episode is flagged.
        Valid("""
        from tensorflow import keras

        class Agent:
            def __init__(self, size):
                self.brain = keras.Sequential([keras.layers.Dense(size)])
                self.brain.compile("adam", "mse")

        agents = []
        for index in range(agents_number):
            agents.append(Agent(64))
            agents[-1].brain.evaluate(x, y)
        """),
        # The model is built on the first call only: the module's namespace holds it after
        # (retinaface's `build_model`, unseen set M of stop 43).
        Valid("""
        import tensorflow as tf

        def build_model():
            global model
            if "model" not in globals():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            return model

        def detect(x):
            return build_model()(x)

        for x in batches:
            detect(x)
        """),
        # A cache of models by resolution: each is built on its first request only, and
        # what the factory returns is the cached one (stylegan-tf2, unseen set P of stop 43).
        Valid("""
        import tensorflow as tf

        class Generators:
            def __init__(self):
                self.models = {}

            def create(self, res):
                if res not in self.models:
                    inputs = tf.keras.Input([4])
                    self.models[res] = tf.keras.Model(inputs, tf.keras.layers.Dense(res)(inputs))
                return self.models[res]

        generators = Generators()
        for step in range(100000):
            model = generators.create(4)
        """),
        # The detector made for KeOps never clones a Keras model, though its `predict` and
        # the wrapper's call each other by name (alibi-detect's learned-kernel drift): the
        # instance is handed on as it was given, through what looks like a cycle.
        Valid("""
        import tensorflow as tf

        class Base:
            def predict(self, x):
                if self.preprocessor is not None:
                    x = self.preprocessor.predict(x)
                return self.score(x)

        class KeopsDrift(Base):
            preprocessor = None

            def score(self, x):
                return x

        class TensorFlowDrift(Base):
            preprocessor = None

            def score(self, x):
                return tf.keras.models.clone_model(self.model)(x)

        class Drift:
            def __init__(self, backend):
                if backend == "tensorflow":
                    detector = TensorFlowDrift
                else:
                    detector = KeopsDrift
                self._detector = detector()

            def predict(self, x):
                return self._detector.predict(x)

        for _ in range(100):
            Drift(backend="keops").predict(x)
        """),
        # Four folds, from a namedtuple of settings (the melanoma TPU pipeline, unseen set Q
        # of stop 43).
        Valid("""
        from collections import namedtuple

        import tensorflow as tf

        config = namedtuple("config", ["nfolds", "lr"])
        CONFIG = config(nfolds=4, lr=0.1)
        for fold in range(CONFIG.nfolds):
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.fit(x, y, epochs=10)
        """),
        # The same, each agent stored under its name (MADDPG, unseen set L of stop 43).
        Valid("""
        from tensorflow import keras

        class Agent:
            def __init__(self, size):
                self.brain = keras.Sequential([keras.layers.Dense(size)])

        agents = {}
        for name in env.possible_agents:
            agents[name] = Agent(64)
        """),
        # A call decides the callee's branches: a detector made with ``backend="pytorch"``
        # never takes the branch that builds the Keras kernel (alibi-detect's notebooks), and
        # a helper handed a model never takes its ``if model is None:`` branch.
        Valid("""
        import enum
        import tensorflow as tf

        class Framework(str, enum.Enum):
            PYTORCH = "pytorch"
            TENSORFLOW = "tensorflow"

        class KernelTF:
            def __init__(self):
                self.kernel = tf.keras.Sequential([tf.keras.layers.Dense(8)])

        class KernelTorch:
            def __init__(self):
                self.kernel = None

        class Detector:
            def __init__(self, backend="tensorflow"):
                backend = backend.lower()
                if backend == Framework.TENSORFLOW:
                    kernel = KernelTF
                else:
                    kernel = KernelTorch
                self.kernel = kernel()

            def predict(self, x):
                return x

        for run in range(300):
            detector = Detector(backend="PyTorch")
            detector.predict(x)
        """),
        Valid("""
        import tensorflow as tf

        def build():
            return tf.keras.Sequential([tf.keras.layers.Dense(1)])

        def evaluate(x, model=None):
            if model is None:
                model = build()
            return model.evaluate(x, y)

        shared = build()
        for fold in range(100):
            evaluate(fold, shared)
        """),
        # ``if epoch == 0:`` inside ``for epoch in ...`` runs once per run of that loop: a
        # model per scale, 8 in all (SinGAN's per-scale set-up).
        Valid("""
        import tensorflow as tf

        for scale in range(8):
            for epoch in range(2000):
                if epoch == 0:
                    model = tf.keras.Sequential([tf.keras.layers.Dense(scale + 1)])
                model.train_on_batch(x, y)
        """),
        # ``if fold == 0:`` on the index ``enumerate`` gives holds on one iteration however
        # many folds there are: one model in all (trieste's lowest fidelity).
        Valid("""
        import tensorflow as tf

        def cross_validate(folds):
            for fold, (x, y) in enumerate(folds):
                if fold == 0:
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile("adam", "mse")
                model.train_on_batch(x, y)
        """),
        # ``self.model or self.setup()``: ``setup`` sets ``self.model``, so it runs on the
        # first call only (tflearn's seq2seq example).
        Valid("""
        import tensorflow as tf

        class Translator:
            def __init__(self):
                self.model = None

            def setup(self):
                self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                return self.model

            def predict(self, x):
                model = self.model or self.setup()
                return model(x)

        translator = Translator()
        for x in batches:
            translator.predict(x)
        """),
        # A factory the caller passes in, whose result is used as no Keras model is: an
        # estimator fitted as scikit-learn's are, not a model.
        Valid("""
        import tensorflow as tf

        def search(make_estimator, grid, x, y):
            for params in grid:
                estimator = make_estimator(**params)
                estimator.fit(x, y)
        """),
        # A module constant decides the branch for every call: the loop runs over one name
        # (Orthostatic-Hypotension-detector's `LoopModels = False`).
        Valid("""
        import tensorflow as tf

        LOOP_MODELS = False

        def main(kinds, name):
            if LOOP_MODELS:
                names = kinds
            else:
                names = [name]
            for each in names:
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)], name=each)
                model.compile("adam", "mse")
        """),
        # The nested function takes no argument: calling it with one raises `TypeError`
        # before it builds anything (which-whale-is-this's `base_network(input_a)`).
        Valid("""
        import tensorflow as tf

        def objective(params):
            def tower():
                return tf.keras.Sequential([tf.keras.layers.Dense(params["units"])])
            return tower(params)

        for params in grid:
            objective(params)
        """),
        # A cache of models by name: loaded once per name, and the loop asks for one.
        Valid("""
        import tensorflow as tf

        MODELS = {}


        def model_for(name):
            if name not in MODELS:
                MODELS[name] = tf.keras.models.load_model(f"{name}.h5")
            return MODELS[name]


        for image in images:
            model_for("resnet")(image)
        """),
        # A passed factory's model per fold of a 5-fold split: five models in all.
        Valid("""
        import tensorflow as tf

        def cross_validate(build_fn, folds):
            for fold in range(5):
                model = build_fn()
                model.compile("adam", "mse")
                model.fit(folds[fold], epochs=10)
        """),
        # A literal constant of the function decides the conditional expression: the Keras
        # loader never runs (yolov5-tf2-keras's `keras = False` in `DetectMultiBackend`,
        # unseen set Z5 of stop 47).
        Valid("""
        import tensorflow as tf


        class Backend:
            def __init__(self, path):
                keras = False  # the SavedModel is a TensorFlow 1 one
                self.model = (
                    tf.keras.models.load_model(path) if keras else tf.lite.Interpreter(path)
                )


        def evaluate(checkpoints):
            for weights in checkpoints:
                Backend(weights)
        """),
        # A block that a literal constant rules out builds nothing; the model built before
        # the loop is fitted in it.
        Valid("""
        import tensorflow as tf


        def train(configs, x, y):
            reuse = True
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            for config in configs:
                if not reuse:
                    model = tf.keras.Sequential([tf.keras.layers.Dense(config)])
                model.compile("adam", "mse")
                model.fit(x, y, epochs=1)
        """),
        # An ensemble whose members a factory makes in pairs, kept through the names they are
        # unpacked to (keras-uncertainty's `DeepEnsemble`, unseen set Z6 of stop 47).
        Valid("""
        import tensorflow as tf


        def build_pair():
            train = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            test = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            return train, test


        class DeepEnsemble:
            def __init__(self, num_estimators):
                self.train_estimators = [None] * num_estimators
                self.test_estimators = [None] * num_estimators
                for i in range(num_estimators):
                    estimators = build_pair()
                    train_est, test_est = estimators
                    self.train_estimators[i] = train_est
                    self.test_estimators[i] = test_est
                for i in range(num_estimators):
                    trunk_task, test_network = build_pair()
                    self.test_estimators[i] = test_network
        """),
        # A script's options as `parse_args()` gives them with their defaults, passed to its
        # `main`, decide the function's tests as the module's own would: no evolution with
        # `--evolve 0` (yolov5-tf2-keras's `main(opt)`, unseen set Z5 of stop 47).
        Valid("""
        import argparse

        import tensorflow as tf


        def parse_opt():
            parser = argparse.ArgumentParser()
            parser.add_argument("--evolve", type=int, default=0, help="0: train once")
            return parser.parse_args()


        def main(opt, generations):
            if opt.evolve:
                for _ in range(generations):
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile("adam", "mse")
            else:
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile("adam", "mse")


        main(parse_opt(), 300)
        """),
        # keras-hypetune (set Z18): each trial's result keeps its model, to pick the best.
        Valid("""
        import tensorflow as tf

        class Search:
            def _fit(self, params):
                model = tf.keras.Sequential([tf.keras.layers.Dense(params["units"])])
                model.compile("adam", "mse")
                return {"params": params, "loss": model.evaluate(x, y), "model": model}

            def search(self, grid):
                results = [self._fit(params) for params in grid]
                return min(results, key=lambda r: r["loss"])["model"]
        """),
    )
    INVALID = (
        # Flask's `g` is made anew for each request: a guard on it loads the model every
        # request (AlexOmarov/ml_snippets' `get_audio_model`, set Z21 of stop 52).
        Invalid(
            """
            from flask import Flask, g, jsonify, request
            from tensorflow.keras.models import load_model

            app = Flask(__name__)


            def get_model(path):
                if "model" not in g:
                    g.model = load_model(path)
                return g.model


            @app.route("/predict", methods=["POST"])
            def predict():
                model = get_model("model.h5")
                return jsonify(model(request.get_json()["x"]).numpy().tolist())
            """,
            15,
            13,
            15,
            34,
            "`get_model` builds a Keras model every request and the Flask route never calls "
            "`clear_session()`; Keras' global state grows with each model (`del` and "
            "`gc.collect()` do not release it)",
        ),
        # ECON_428_Final_Project's genetic search: each generation's comprehension keeps its
        # `(loss, model)` pairs until the next generation makes new ones.
        Invalid(
            """
            import tensorflow as tf

            def evaluate(genome):
                model = tf.keras.Sequential([tf.keras.layers.Dense(genome)])
                model.compile("adam", "mse")
                return model.evaluate(x, y), model

            def evolve(population, generations):
                for generation in range(generations):
                    scored = [evaluate(genome) for genome in population]
                    population = breed(scored)
            """,
            10,
            19,
            10,
            35,
            "`evaluate` builds a Keras model every iteration and the loop never calls "
            "`clear_session()`; Keras' global state grows with each model (`del` and "
            "`gc.collect()` do not release it)",
        ),
        # Histogram_loss: each run's metrics, read from what `evaluate` returns, are kept; its
        # model is not.
        Invalid(
            """
            import tensorflow as tf

            def run_model(units):
                model = tf.keras.Sequential([tf.keras.layers.Dense(units)])
                model.compile("adam", "mse")
                outputs = model.evaluate(x, y, return_dict=True)
                return {"loss": outputs["loss"], "mse": outputs["mse"]}

            results = {}
            for units in range(1, 100):
                results[units] = run_model(units)
            """,
            11,
            22,
            11,
            38,
            "`run_model` builds a Keras model every iteration (99 in all) and the loop never "
            "calls `clear_session()`; Keras' global state grows with each model (`del` and "
            "`gc.collect()` do not release it)",
        ),
        # The same results without their models: only scores are kept.
        Invalid(
            """
            import tensorflow as tf

            class Search:
                def _fit(self, params):
                    model = tf.keras.Sequential([tf.keras.layers.Dense(params["units"])])
                    model.compile("adam", "mse")
                    return {"loss": model.evaluate(x, y)}

                def search(self, grid):
                    results = [self._fit(params) for params in grid]
                    return min(results, key=lambda r: r["loss"])
            """,
            10,
            20,
            10,
            37,
            "`Search._fit` builds a Keras model every iteration and the loop never calls "
            "`clear_session()`; Keras' global state grows with each model (`del` and "
            "`gc.collect()` do not release it)",
        ),
        # Any other value a call passes is a switch its author flips: the search is reported.
        Invalid(
            """
            import tensorflow as tf


            def world(mode, trials):
                if mode == "search":
                    for _ in range(trials):
                        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                        model.compile("adam", "mse")


            world("test", 300)
            """,
            7,
            21,
            7,
            68,
            "`tf.keras.Sequential` builds a new Keras model every iteration (300 per call of "
            "`world`) and the loop never calls `clear_session()`; Keras' global state grows with "
            "each model (`del` and `gc.collect()` do not release it)",
        ),
        # So is a namedtuple of options: a switch too, not a command line's defaults.
        Invalid(
            """
            import collections

            import tensorflow as tf

            Options = collections.namedtuple("Options", ["evolve"])


            def main(opt, generations):
                if opt.evolve:
                    for _ in range(generations):
                        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                        model.compile("adam", "mse")


            main(Options(evolve=0), 300)
            """,
            11,
            21,
            11,
            68,
            "`tf.keras.Sequential` builds a new Keras model every iteration (300 per call of "
            "`main`) and the loop never calls `clear_session()`; Keras' global state grows with "
            "each model (`del` and `gc.collect()` do not release it)",
        ),
        # The same pairs unpacked and dropped after each configuration.
        Invalid(
            """
            import tensorflow as tf


            def build_pair():
                train = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                test = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                return train, test


            def evaluate(configs, x, y):
                for config in configs:
                    train, test = build_pair()
                    train.fit(x, y)
                    print(config, test.evaluate(x, y))
            """,
            12,
            23,
            12,
            35,
            "`build_pair` builds a Keras model every iteration and the loop never calls "
            "`clear_session()`; Keras' global state grows with each model (`del` and "
            "`gc.collect()` do not release it)",
        ),
        # The same loader with the constant `True`: the model is loaded per checkpoint.
        Invalid(
            """
            import tensorflow as tf


            class Backend:
                def __init__(self, path):
                    keras = True
                    self.model = (
                        tf.keras.models.load_model(path) if keras else tf.lite.Interpreter(path)
                    )


            def evaluate(checkpoints):
                for weights in checkpoints:
                    Backend(weights)
            """,
            14,
            9,
            14,
            25,
            "`Backend.__init__` builds a Keras model every iteration and the loop never calls "
            "`clear_session()`; Keras' global state grows with each model (`del` and "
            "`gc.collect()` do not release it)",
        ),
        # chaitun-keras's grid search: the model factory is the user's (`hypermodel`), and
        # what it makes is compiled, as only a Keras model is.
        Invalid(
            """
            import itertools
            import tensorflow as tf

            class GridSearch:
                def __init__(self, hypermodel, grid):
                    self.hypermodel = hypermodel
                    self.grid = grid

                def search(self, x, y):
                    for values in itertools.product(*self.grid.values()):
                        model = self.hypermodel(dict(zip(self.grid, values)))
                        model.compile("adam", "mse")
            """,
            11,
            21,
            11,
            66,
            "`self.hypermodel` builds a new Keras model every iteration and the loop never "
            "calls `clear_session()`; Keras' global state grows with each model (`del` and "
            "`gc.collect()` do not release it)",
        ),
        # A Hugging Face TensorFlow model is a Keras model (emoji-model's Optuna search,
        # unseen set S of stop 43).
        Invalid(
            """
            import optuna
            import tensorflow as tf
            from transformers import TFAutoModelForSequenceClassification

            def objective(trial):
                model = TFAutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
                model.compile(optimizer="adam")
                return model.evaluate(ds)

            optuna.create_study().optimize(objective, n_trials=32)
            """,
            6,
            13,
            6,
            86,
            "`TFAutoModelForSequenceClassification.from_pretrained` builds a new Keras model "
            "every trial (32 in all) and the Optuna objective never calls `clear_session()`; "
            "Keras' global state grows with each model (`del` and `gc.collect()` do not "
            "release it)",
        ),
        # PNAS's search: each trial's score is kept, the model it built is dropped.
        Invalid(
            """
            import tensorflow as tf


            def evaluate(units, x, y):
                model = tf.keras.Sequential([tf.keras.layers.Dense(units)])
                model.compile("adam", "mse")
                return model.evaluate(x, y)


            scores = []
            for units in range(16, 1600, 16):
                score = evaluate(units, x, y)
                scores.append(score)
            """,
            12,
            13,
            12,
            34,
            "`evaluate` builds a Keras model every iteration (99 in all) and the loop never "
            "calls `clear_session()`; Keras' global state grows with each model (`del` and "
            "`gc.collect()` do not release it)",
        ),
        # ZFTurbo's cervical-cancer scripts: a 5-fold cross-validation of each of 7 networks
        # builds 35 models, though neither loop alone passes `max-loop-iterations`.
        Invalid(
            """
            import tensorflow as tf


            def run_cv(name, folds):
                for fold in range(folds):
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    print(model.evaluate(x, y))


            for name in ["vgg", "resnet", "inception", "densenet", "xception", "mobile", "nas"]:
                run_cv(name, 5)
            """,
            11,
            5,
            11,
            20,
            "`run_cv` builds a Keras model (5 per call) every iteration (7 in all) and the loop "
            "never calls `clear_session()`; Keras' global state grows with each model (`del` "
            "and `gc.collect()` do not release it)",
        ),
        # joblib runs `delayed(fit_one)(i)` as `fit_one(i)`, in worker processes it reuses.
        Invalid(
            """
            import tensorflow as tf
            from joblib import Parallel, delayed


            def fit_one(seed):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                return model.count_params()


            for step in range(100):
                Parallel(n_jobs=3)(delayed(fit_one)(i) for i in range(3))
            """,
            11,
            24,
            11,
            43,
            "`fit_one` builds a Keras model every iteration (300 in all) and the loop never "
            "calls `clear_session()`; Keras' global state grows with each model (`del` and "
            "`gc.collect()` do not release it)",
        ),
        # A factory called for what it does, its model dropped at once.
        Invalid(
            """
            import tensorflow as tf


            def build_and_train(units):
                model = tf.keras.Sequential([tf.keras.layers.Dense(units)])
                model.compile("adam", "mse")
                return model


            for units in range(16, 1600, 16):
                build_and_train(units)
            """,
            11,
            5,
            11,
            27,
            "`build_and_train` builds a new Keras model every iteration (99 in all) and the "
            "loop never calls `clear_session()`; Keras' global state grows with each model "
            "(`del` and `gc.collect()` do not release it)",
        ),
        # stable-learning-control: the trainable handed to Ray Tune with its resources.
        Invalid(
            """
            import tensorflow as tf
            from ray import tune


            def train_fn(config):
                model = tf.keras.Sequential([tf.keras.layers.Dense(config["units"])])
                model.compile("adam", "mse")
                return {"loss": model.evaluate(x, y)}


            trainable = tune.with_resources(train_fn, {"cpu": 2})
            tune.Tuner(trainable, tune_config=tune.TuneConfig(num_samples=20)).fit()
            """,
            6,
            13,
            6,
            74,
            "`tf.keras.Sequential` builds a new Keras model every trial and the Ray Tune "
            "trainable never calls `clear_session()`; Keras' global state grows with each "
            "model (`del` and `gc.collect()` do not release it)",
        ),
        # Forty seeds: the array's rows give the count.
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            for seed in np.random.randint(0, 10_000, size=40):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            """,
            5,
            13,
            5,
            60,
            "`tf.keras.Sequential` builds a new Keras model every iteration (40 in all) and the "
            "loop never calls `clear_session()`; Keras' global state grows with each model "
            "(`del` and `gc.collect()` do not release it)",
        ),
        # The same call, with a metric that clones the model in the list.
        Invalid(
            """
            import tensorflow as tf


            class Metric:
                def __call__(self, x):
                    return self.evaluate(x)


            class Deletion(Metric):
                def evaluate(self, x):
                    return x * 0


            class Insertion(Metric):
                def evaluate(self, x):
                    return x


            class Randomization(Metric):
                def evaluate(self, x):
                    randomized = tf.keras.models.clone_model(x)
                    return randomized.count_params()


            metrics = [Deletion(), Randomization()]
            for step in range(100):
                for metric in metrics:
                    metric(step)
            """,
            28,
            9,
            28,
            21,
            "`Metric.__call__` builds a Keras model every iteration (200 in all) and the loop "
            "never calls `clear_session()`; Keras' global state grows with each model (`del` "
            "and `gc.collect()` do not release it)",
        ),
        Invalid(
            _DETECTORS
            + "for _ in range(100):\n    Drift(model, backend='TensorFlow').predict(x)\n",
            31,
            5,
            31,
            50,
            "`Drift.predict` builds a Keras model every iteration (100 in all) and the "
            "loop never calls `clear_session()`; Keras' global state grows with each model "
            "(`del` and `gc.collect()` do not release it)",
        ),
        # The same test with a 50-member case: up to 50 models per run (1 or 50).
        Invalid(
            """
            import pytest
            import tensorflow as tf

            @pytest.mark.parametrize("members", [1, 50])
            def test_ensemble(members, x, y):
                for _ in range(members):
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile("sgd", "mse")
            """,
            7,
            17,
            7,
            64,
            "`tf.keras.Sequential` builds a new Keras model every iteration (up to 50 per call "
            "of `test_ensemble`) and the loop never calls `clear_session()`; Keras' global "
            "state grows with each model (`del` and `gc.collect()` do not release it)",
        ),
        Invalid(
            """
            import tensorflow as tf

            for units in widths:
                model = tf.keras.Sequential([tf.keras.layers.Dense(units)])
                model.load_weights(f"weights-{units}.h5")
                print(units, model.evaluate(x, y))
            """,
            4,
            13,
            4,
            64,
            "`tf.keras.Sequential` builds a new Keras model every iteration and the loop never "
            "calls `clear_session()`; Keras' global state grows with each model (`del` and "
            "`gc.collect()` do not release it)",
            fixed="""
            import tensorflow as tf

            for units in widths:
                tf.keras.backend.clear_session()
                model = tf.keras.Sequential([tf.keras.layers.Dense(units)])
                model.load_weights(f"weights-{units}.h5")
                print(units, model.evaluate(x, y))
            """,
        ),
        Invalid(
            """
            import tensorflow as tf

            def head(base, classes):
                return tf.keras.Model(base.input, tf.keras.layers.Dense(classes)(base.output))

            for classes in range(2, 50):
                model = head(trained, classes)
            """,
            7,
            13,
            7,
            35,
            "`head` builds a new Keras model every iteration (48 in all) and the loop never "
            "calls `clear_session()`; Keras' global state grows with each model (`del` and "
            "`gc.collect()` do not release it)",
            fixed="""
            import tensorflow as tf

            def head(base, classes):
                return tf.keras.Model(base.input, tf.keras.layers.Dense(classes)(base.output))

            for classes in range(2, 50):
                tf.keras.backend.clear_session()
                model = head(trained, classes)
            """,
        ),
        Invalid(
            """
            import tensorflow as tf

            trial = 0
            while True:
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                print(model.evaluate(x, y))
                trial += 1
                if trial >= 50:
                    break
            """,
            5,
            13,
            5,
            60,
            "`tf.keras.Sequential` builds a new Keras model every iteration (50 in all) and the "
            "loop never calls `clear_session()`; Keras' global state grows with each model "
            "(`del` and `gc.collect()` do not release it)",
        ),
        Invalid(
            """
            from tensorflow.keras.models import load_model

            scores = []
            while len(scores) < 10:
                model = load_model("checkpoint.keras")
                scores.append(model.evaluate(x, y))
            """,
            5,
            13,
            5,
            43,
            "`load_model` builds a new Keras model every iteration and the loop never calls "
            "`clear_session()`; Keras' global state grows with each model (`del` and "
            "`gc.collect()` do not release it)",
        ),
        Invalid(
            """
            import keras

            def build_model(units):
                inputs = keras.Input((4,))
                outputs = keras.layers.Dense(units)(inputs)
                return keras.Model(inputs, outputs)

            def search(grid):
                for units in grid:
                    model = build_model(units)
                    model.compile("adam", "mse")
                    print(model.count_params())
            """,
            10,
            17,
            10,
            35,
            "`build_model` builds a new Keras model every iteration and the loop never calls "
            "`clear_session()`; Keras' global state grows with each model (`del` and "
            "`gc.collect()` do not release it)",
            fixed="""
            import keras

            def build_model(units):
                inputs = keras.Input((4,))
                outputs = keras.layers.Dense(units)(inputs)
                return keras.Model(inputs, outputs)

            def search(grid):
                for units in grid:
                    keras.backend.clear_session()
                    model = build_model(units)
                    model.compile("adam", "mse")
                    print(model.count_params())
            """,
        ),
        Invalid(
            """
            import tf_keras

            def train_one(fold):
                model = tf_keras.applications.MobileNetV2(weights=None)
                return model.evaluate(x, y)

            for fold in range(50):
                train_one(fold)
            """,
            8,
            5,
            8,
            20,
            "`train_one` builds a Keras model every iteration (50 in all) and the loop never "
            "calls `clear_session()`; Keras' global state grows with each model (`del` and "
            "`gc.collect()` do not release it)",
        ),
        Invalid(
            """
            import tensorflow as tf

            def score(model):
                return model.evaluate(x, y)

            scores = [score(tf.keras.models.clone_model(base)) for _ in range(100)]
            """,
            6,
            17,
            6,
            50,
            "`tf.keras.models.clone_model` builds a Keras model every iteration (100 in all) "
            "and the loop never calls `clear_session()`; Keras' global state grows with each "
            "model (`del` and `gc.collect()` do not release it)",
        ),
        Invalid(
            """
            import tensorflow as tf

            def train_fold(fold):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile("adam", "mse")
                model.evaluate(x[fold], y[fold])

            for experiment in range(10):
                for fold in range(10):
                    train_fold(fold)
            """,
            10,
            9,
            10,
            25,
            "`train_fold` builds a Keras model every iteration (100 in all) and the loop "
            "never calls `clear_session()`; Keras' global state grows with each model (`del` "
            "and `gc.collect()` do not release it)",
        ),
        Invalid(
            """
            from tensorflow import keras

            class Agent:
                def __init__(self, size):
                    self.policy = keras.Sequential([keras.layers.Dense(size)])

            for episode in range(episodes):
                agent = Agent(64)
                agent.policy.evaluate(x, y)
            """,
            8,
            13,
            8,
            22,
            "`Agent.__init__` builds a Keras model every iteration and the loop never calls "
            "`clear_session()`; Keras' global state grows with each model (`del` and "
            "`gc.collect()` do not release it)",
        ),
        Invalid(
            """
            import keras

            def compile_model(units):
                model = keras.Sequential([keras.layers.Dense(units)])
                model.compile("adam", "mse")
                return model

            class Network:
                def __init__(self, units):
                    self.units = units

                def train(self):
                    model = compile_model(self.units)
                    return model.evaluate(x, y)

            def search(generations):
                for generation in range(generations):
                    Network(generation % 64 + 1).train()
            """,
            18,
            9,
            18,
            45,
            "`Network.train` builds a Keras model every iteration and the loop never calls "
            "`clear_session()`; Keras' global state grows with each model (`del` and "
            "`gc.collect()` do not release it)",
        ),
        Invalid(
            """
            import tensorflow as tf

            N_TRIALS = 10 * 10

            for trial in range(N_TRIALS):
                model = tf.keras.Sequential([tf.keras.layers.Dense(trial + 1)])
                model.evaluate(x, y)
            """,
            6,
            13,
            6,
            68,
            "`tf.keras.Sequential` builds a new Keras model every iteration (100 in all) and "
            "the loop never calls `clear_session()`; Keras' global state grows with each "
            "model (`del` and `gc.collect()` do not release it)",
        ),
        Invalid(
            """
            import tensorflow as tf
            from sklearn.model_selection import RepeatedKFold

            for train, test in RepeatedKFold(n_splits=5, n_repeats=3).split(x):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.evaluate(x[test], y[test])
            """,
            5,
            13,
            5,
            60,
            "`tf.keras.Sequential` builds a new Keras model every iteration (15 in all) and "
            "the loop never calls `clear_session()`; Keras' global state grows with each "
            "model (`del` and `gc.collect()` do not release it)",
        ),
        Invalid(
            """
            import tensorflow as tf

            for config in configs:
                model = tf.keras.Model.from_config(config)
                model.evaluate(x, y)
            """,
            4,
            13,
            4,
            47,
            "`tf.keras.Model.from_config` builds a new Keras model every iteration and the "
            "loop never calls `clear_session()`; Keras' global state grows with each model "
            "(`del` and `gc.collect()` do not release it)",
        ),
        Invalid(
            """
            from tensorflow.keras.models import model_from_json

            for spec in specs:
                model = model_from_json(spec)
                model.evaluate(x, y)
            """,
            4,
            13,
            4,
            34,
            "`model_from_json` builds a new Keras model every iteration and the loop never "
            "calls `clear_session()`; Keras' global state grows with each model (`del` and "
            "`gc.collect()` do not release it)",
        ),
        Invalid(
            """
            import tensorflow as tf
            from flask import Flask, request

            app = Flask(__name__)

            @app.route("/predict", methods=["POST"])
            def predict():
                model = tf.keras.models.load_model("model.keras")
                return model(request.json["x"], training=False).numpy().tolist()
            """,
            8,
            13,
            8,
            54,
            "`tf.keras.models.load_model` builds a new Keras model every request and the "
            "Flask route never calls `clear_session()`; Keras' global state grows with each "
            "model (`del` and `gc.collect()` do not release it)",
        ),
        # A hyperopt search (which-whale-is-this): each trial's model predicts once, which
        # is this finding's and not TFL402's.
        Invalid(
            """
            import tensorflow as tf
            from hyperopt import fmin, hp, tpe

            def objective(params):
                model = tf.keras.Sequential([tf.keras.layers.Dense(int(params["units"]))])
                model.compile("adam", "mse")
                return float(model.predict(x_val).mean())

            fmin(fn=objective, space={"units": hp.uniform("units", 8, 64)}, algo=tpe.suggest,
                 max_evals=50)
            """,
            5,
            13,
            5,
            79,
            "`tf.keras.Sequential` builds a new Keras model every trial (50 in all) and "
            "the Hyperopt objective never calls `clear_session()`; Keras' global state grows "
            "with each model (`del` and `gc.collect()` do not release it)",
        ),
        # The objective defined inside `main` (char-rnn-text-generation, set Z29 of stop 53).
        Invalid(
            """
            import tensorflow as tf
            from hyperopt import fmin, tpe

            def main():
                def trial(params):
                    model = tf.keras.Sequential([tf.keras.layers.Dense(params["units"])])
                    model.compile("adam", "mse")
                    return float(model.predict(x_val).mean())

                fmin(fn=trial, space=SPACE, algo=tpe.suggest, max_evals=40)

            main()
            """,
            6,
            17,
            6,
            78,
            "`tf.keras.Sequential` builds a new Keras model every trial (40 in all) and "
            "the Hyperopt objective never calls `clear_session()`; Keras' global state grows "
            "with each model (`del` and `gc.collect()` do not release it)",
        ),
        Invalid(
            """
            import optuna
            import tensorflow as tf

            def objective(trial):
                units = trial.suggest_int("units", 8, 128)
                model = tf.keras.Sequential([tf.keras.layers.Dense(units)])
                model.compile("adam", "mse")
                return model.evaluate(x, y)

            study = optuna.create_study()
            study.optimize(objective, n_trials=100)
            """,
            6,
            13,
            6,
            64,
            "`tf.keras.Sequential` builds a new Keras model every trial (100 in all) and "
            "the Optuna objective never calls `clear_session()`; Keras' global state grows "
            "with each model (`del` and `gc.collect()` do not release it)",
        ),
        Invalid(
            """
            import tensorflow as tf

            def classify(path):
                model = tf.keras.models.load_model("classifier.keras")
                return model(load_image(path), training=False)

            def label(path):
                return tf.py_function(classify, [path], tf.float32)

            labels = tf.data.Dataset.list_files("images/*.png").map(label)
            """,
            4,
            13,
            4,
            59,
            "`tf.keras.models.load_model` builds a new Keras model every element and the "
            "TensorFlow py_function never calls `clear_session()`; Keras' global state "
            "grows with each model (`del` and `gc.collect()` do not release it)",
        ),
        Invalid(
            """
            import tensorflow as tf

            SEARCH = {"name": "widths", "widths": list(range(8, 400, 8)), "epochs": 3}

            def search(config):
                for width in config["widths"]:
                    model = tf.keras.Sequential([tf.keras.layers.Dense(width)])
                    model.evaluate(x, y)

            search(SEARCH)
            """,
            7,
            17,
            7,
            68,
            "`tf.keras.Sequential` builds a new Keras model every iteration (49 per call of "
            "`search`) and the loop never calls `clear_session()`; Keras' global state grows with "
            "each model (`del` and `gc.collect()` do not release it)",
        ),
        Invalid(
            """
            import enum
            import tensorflow as tf

            class Framework(str, enum.Enum):
                PYTORCH = "pytorch"
                TENSORFLOW = "tensorflow"

            class KernelTF:
                def __init__(self):
                    self.kernel = tf.keras.Sequential([tf.keras.layers.Dense(8)])

            class KernelTorch:
                def __init__(self):
                    self.kernel = None

            class Detector:
                def __init__(self, backend="tensorflow"):
                    if backend == Framework.TENSORFLOW:
                        kernel = KernelTF
                    else:
                        kernel = KernelTorch
                    self.kernel = kernel()

                def predict(self, x):
                    return x

            for run in range(300):
                detector = Detector()
                detector.predict(x)
            """,
            28,
            16,
            28,
            26,
            "`Detector.__init__` builds a Keras model every iteration (300 in all) and the loop "
            "never calls `clear_session()`; Keras' global state grows with each model (`del` and "
            "`gc.collect()` do not release it)",
        ),
        Invalid(
            """
            import tensorflow as tf

            def build():
                return tf.keras.Sequential([tf.keras.layers.Dense(1)])

            def evaluate(x, model=None):
                if model is None:
                    model = build()
                return model.evaluate(x, y)

            for fold in range(100):
                evaluate(fold)
            """,
            12,
            5,
            12,
            19,
            "`evaluate` builds a Keras model every iteration (100 in all) and the loop never "
            "calls `clear_session()`; Keras' global state grows with each model (`del` and "
            "`gc.collect()` do not release it)",
        ),
        Invalid(
            """
            import tensorflow as tf

            for scale in range(50):
                for epoch in range(2000):
                    if epoch == 0:
                        model = tf.keras.Sequential([tf.keras.layers.Dense(scale + 1)])
                    model.train_on_batch(x, y)
            """,
            6,
            21,
            6,
            76,
            "`tf.keras.Sequential` builds a new Keras model every 2000th iteration (50 in all) "
            "and the loop never calls `clear_session()`; Keras' global state grows with each "
            "model (`del` and `gc.collect()` do not release it)",
        ),
        Invalid(
            """
            import tensorflow as tf

            def predict(x, model=None):
                model = model or tf.keras.Sequential([tf.keras.layers.Dense(1)])
                return model(x)

            for x in range(100):
                predict(x)
            """,
            8,
            5,
            8,
            15,
            "`predict` builds a Keras model every iteration (100 in all) and the loop never "
            "calls `clear_session()`; Keras' global state grows with each model (`del` and "
            "`gc.collect()` do not release it)",
        ),
    )

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1:
            self._assigned(node.targets[0].target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._assigned(node.target, node.value)

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        if not in_repetition(context):
            return
        if context.makes_keras_layer(node):
            return  # a layer (with the sub-models it is made of) for the model being composed
        builds = effects_through_calls(context, node, EffectKind.BUILD_MODEL)
        times = per_call(context, builds[0]) if builds else 1
        if not repeated_unbounded(context, times):
            return
        if builds and self._kept(node):
            return  # ``agents.append(Agent(...))``: an ensemble kept on purpose
        if builds:
            effect = builds[0]
            what = f"`{effect.chain[0].callee}` builds a Keras model{per_call_note(times)}"
            report = self._check(node, what)
            if report is not None:
                relate_chain(report, effect)
                report.relate(
                    RelatedRole.MODEL, "the model is built here", effect.span, effect.path
                )
        elif isinstance(context.parent, cst.Expr) and context.builds_model(node):
            # A model built and dropped at once: ``build_and_train(config)`` for its effect.
            self._check(node, f"`{_callee(node)}` builds a new Keras model")
        elif method_call(node, STORE_METHODS) is None and context.calls_project_code(node):
            # A model built only to be passed on, then dropped: ``score(build_model())``.
            for arg in node.args:
                value = arg.value
                if isinstance(value, cst.Call) and context.builds_model(value):
                    self._check(value, f"`{_callee(value)}` builds a Keras model")

    def _assigned(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        context = self.context
        if not (isinstance(value, cst.Call) and repeated_unbounded(self.context)):
            return
        name = dotted(target)
        if name is None or not context.builds_model(value):
            return
        if kept_in_loop(context, name) or stored_on_item(context, target):
            return
        self._check(value, f"`{_callee(value)}` builds a new Keras model")

    def _kept(self, node: cst.Call) -> bool:
        """The object ``node`` makes (whose models it builds) is kept where it outlives the
        iteration: stored directly (``agents.append(Agent(...))``, ``agents[name] =
        Agent(...)``, on the loop's item), or through the name it is assigned to (``agent =
        Agent(...)``, then ``agents.append(agent)``)."""
        context = self.context
        if context.plain_data(node):
            return False  # a score: the models it built are dropped
        if kept_element(context) and _only_the_comprehension_repeats(context):
            return True  # ``[self._fit(params) for params in grid]``, each result with its model
        parent = context.parent
        if isinstance(parent, cst.Arg):
            holder = context.ancestors[-3]  # the call the argument is given to
            return isinstance(holder, cst.Call) and method_call(holder, STORE_METHODS) is not None
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            target = parent.targets[0].target
            if isinstance(target, cst.Subscript) or stored_on_item(context, target):
                return True  # ``agents[name] = Agent(...)``, ``info.agent = Agent(...)``
            # ``trunk_task, test_network = self.combine()``, then ``nets[i] = test_network``;
            # unpacked, a model, not a score (``fit, model = evaluate(...)``, ``fits[i] = fit``)
            names = assigned_names(parent)
            return any(
                kept_in_loop(context, name)
                for name in names
                if len(names) == 1 or context.is_model(name)
            )
        return False

    def _check(self, node: cst.Call, what: str) -> Report | None:
        context = self.context
        if context.cleans_up(node) or loop_cleans_up(context):
            return None
        report = self.report(
            node,
            f"{what} {every_iteration(context)} and {repeater(context)} never calls "
            "`clear_session()`; Keras' global state grows with each model (`del` and "
            "`gc.collect()` do not release it)",
        )
        self._fix(report)
        return relate_loop(report, context)

    def _fix(self, report: Report) -> None:
        """Insert ``clear_session()`` as the first statement of the innermost ``for`` or
        ``while`` loop, through this file's TensorFlow or Keras import."""
        context = self.context
        loop = context.loops[-1] if context.loops else None
        if not isinstance(loop, cst.For | cst.While) or not isinstance(
            loop.body, cst.IndentedBlock
        ):
            return
        tensorflow = context.alias("tensorflow")
        keras = context.alias("keras")
        if tensorflow is not None:
            call = f"{tensorflow}.keras.backend.clear_session()"
        elif keras is not None:
            call = f"{keras}.backend.clear_session()"
        else:
            return
        first = loop.body.body[0]
        report.with_fix(
            f"Call `{call}` at the start of every iteration", [(first, InsertStatement(call))]
        )


def _only_the_comprehension_repeats(context: FileContext) -> bool:
    """The comprehension around the current node is all that repeats it: its results, kept
    beside each other, live on; a loop (or a framework) that runs the comprehension again drops
    them each time (a genetic search's population of `(loss, model)` pairs, one generation
    after another)."""
    return context.entry_point is None and all(
        isinstance(loop, cst.CompFor) for loop in context.loops
    )


def _callee(node: cst.Call) -> str:
    """The callee as written: a dotted name, or the code of any other expression
    (``builders[name]``)."""
    return dotted(node.func) or source_of(node.func)
