from __future__ import annotations

import libcst as cst

from tflint_leaks.diagnostics import RelatedRole
from tflint_leaks.rulekit.context import FileContext
from tflint_leaks.rulekit.facts import Effect, EffectKind
from tflint_leaks.rulekit.rule import Invalid, Rule, Valid
from tflint_leaks.rules._calls import (
    arguments,
    effects_through_calls,
    every_iteration,
    relate_chain,
    relate_loop,
)
from tflint_leaks.rules._models import (
    building_loop,
    built_in_loop,
    in_repetition,
    method_call,
    per_call,
    per_call_note,
    repeated_unbounded,
)

_FIT = frozenset({"fit"})

_ADVICE = (
    "since TensorFlow 2.11 each `fit` registers gradient functions globally that keep its graphs "
    "alive even after `clear_session()` (tensorflow/tensorflow#61791); run each trial in a fresh "
    "process"
)


class FitInLoop(Rule):
    """
    ## What it does
    Flags `model.fit(...)` on a model built anew in every iteration of the same loop (a
    hyperparameter search, cross-validation, repeated trials), directly or through project code
    called in the loop that builds and fits a model (up to four calls deep, in any file), or
    that fits the model the loop builds and hands it (`train(net, x, y)`, whose `model.fit`
    fits its parameter: the finding is on the call). Loops
    with a known small trip count (at most `max-loop-iterations`, default 10, in all: a 5-fold
    split, `range(2)`) are not flagged; "in all" counts the loops of the code the loop calls
    too (a 5-fold `run_cv` called for 7 networks fits 35 models).

    ## Why is this bad?
    In TensorFlow 2.11 to 2.21 every `fit` registers gradient functions in a global registry,
    and they keep the graphs of that model alive. The memory is never returned, not even by
    `tf.keras.backend.clear_session()`, `del model` or `gc.collect()`
    (tensorflow/tensorflow#61791, keras-team/keras#17458): a long search runs out of memory.
    Only ending the process releases it.

    Not flagged: one model fitted repeatedly (`for epoch in ...: model.fit(..., epochs=1)`),
    models built in a loop but not fitted there, projects that pin TensorFlow before 2.11
    (`clear_session()` frees the models there: TFL401 asks for it), and graph mode (a TensorFlow
    1 project, or a file that turns eager execution off, or a `fit` in a module that does,
    whichever loop calls it: `fit` registers no gradient functions
    there, and `clear_session()` frees the graph).

    A search objective is a loop of its own: an Optuna, Ray Tune or Hyperopt objective that
    builds and fits a model runs once per trial, and is flagged (with `n_trials=N`, only above
    `max-loop-iterations`) even when it calls `clear_session()` first: that is what this rule's
    reason is about, from TensorFlow 2.11 on (TFL401 is quiet for it). The same applies to a
    web route or a Keras callback that builds and fits a model per call, and to a KerasTuner
    `HyperModel.fit(hp, model, ...)`, which fits the model its `build(hp)` has just made, once
    per trial.

    ## Example
    ```python
    import tensorflow as tf

    def build_model(lr):
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.compile(tf.keras.optimizers.Adam(lr), "mse")
        return model

    for lr in learning_rates:
        model = build_model(lr)
        model.fit(x, y)
        tf.keras.backend.clear_session()
    ```

    ## Use instead
    Run each trial in a fresh process:
    ```python
    import multiprocessing

    import tensorflow as tf

    def build_model(lr):
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.compile(tf.keras.optimizers.Adam(lr), "mse")
        return model

    def trial(lr):
        model = build_model(lr)
        return model.fit(x, y).history["loss"][-1]

    with multiprocessing.get_context("spawn").Pool(1, maxtasksperchild=1) as pool:
        losses = pool.map(trial, learning_rates)
    ```

    ## Options
    - `max-loop-iterations`

    ## Guard it
    `tf_budget.iterations` (the pytest plugin's `tf_budget` fixture
    ([docs/budget.md](https://github.com/tflint-leaks/tflint-leaks/blob/main/docs/budget.md))) takes
    the learning rates and hands them to the search, sampling between trials: with each trial in its
    own process nothing grows in the test's process; a model fit here again fails the test (traces,
    live FuncGraphs, Keras names and live tensors grow per trial).
    ```python
    import multiprocessing

    import tensorflow as tf


    def trial(lr):
        model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
        model.compile(optimizer=tf.keras.optimizers.SGD(lr), loss="mse")
        history = model.fit(tf.ones([8, 4]), tf.ones([8, 1]), epochs=1, verbose=0)
        return history.history["loss"][-1]


    def search(rates):
        context = multiprocessing.get_context("spawn")
        with context.Pool(1, maxtasksperchild=1) as pool:
            return [pool.apply(trial, (lr,)) for lr in rates]


    def test_trials_leave_nothing_in_this_process(tf_budget):
        search(tf_budget.iterations([1e-2, 3e-3, 1e-3, 3e-4], warmup=0))
    ```

    ## References
    - [tensorflow/tensorflow#61791](https://github.com/tensorflow/tensorflow/issues/61791)
    - [keras-team/keras#17458](https://github.com/keras-team/keras/issues/17458)
    - [`multiprocessing.Pool(maxtasksperchild=...)`](https://docs.python.org/3/library/multiprocessing.html#multiprocessing.pool.Pool)
    """

    VALID = (
        # The helper fits its other parameter: the student, built once; each teacher only
        # predicts.
        Valid("""
        import tensorflow as tf

        def distill(teacher, student, x):
            student.fit(x, teacher.predict(x), epochs=1)

        student = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        for units in range(8, 200):
            tf.keras.backend.clear_session()
            teacher = tf.keras.Sequential([tf.keras.layers.Dense(units)])
            distill(teacher, student, x)
        """),
        # One model, built before the loop, fitted by the helper every round.
        Valid("""
        import tensorflow as tf

        def train(model, x, y):
            model.fit(x, y, epochs=1)

        net = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        for round in range(200):
            train(net, x, y)
        """),
        Valid("""
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        for epoch in range(10):
            model.fit(x, y, epochs=1)
        """),
        Valid("""
        import multiprocessing
        import tensorflow as tf

        def trial(lr):
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            return model.fit(x, y).history["loss"][-1]

        with multiprocessing.get_context("spawn").Pool(1, maxtasksperchild=1) as pool:
            losses = pool.map(trial, [1e-2, 1e-3])
        """),
        Valid("""
        from sklearn.svm import SVC

        for c in [0.1, 1.0, 10.0]:
            clf = SVC(C=c)
            clf.fit(x, y)
        """),
        Valid("""
        import tensorflow as tf

        for path in paths:
            model = tf.keras.models.load_model(path)
            model.evaluate(x, y)
            tf.keras.backend.clear_session()
        """),
        Valid("""
        import tensorflow as tf

        def train(model, folds):
            for x, y in folds:
                model.fit(x, y)
        """),
        Valid("""
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.compile("adam", "mse")
        for x_batch, y_batch in batches:
            model.train_on_batch(x_batch, y_batch)
        """),
        Valid(
            """
            import tensorflow as tf
            from sklearn.model_selection import StratifiedKFold

            def train_fold(train, test):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile("adam", "mse")
                model.fit(x[train], y[train])

            for train, test in StratifiedKFold(n_splits=5).split(x, y):
                train_fold(train, test)
            """
        ),
        Valid(
            """
            import tensorflow as tf

            for trial in range(2):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.fit(x, y)
            tf.keras.backend.clear_session()
            """
        ),
        Valid("""
        import tensorflow as tf

        tf.compat.v1.disable_eager_execution()

        for lr in learning_rates:
            tf.keras.backend.clear_session()
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile(tf.keras.optimizers.Adam(lr), "mse")
            model.fit(x, y)
        """),
        Valid(
            """
            import optuna
            import tensorflow as tf

            def objective(trial):
                tf.keras.backend.clear_session()
                units = trial.suggest_int("units", 8, 128)
                model = tf.keras.Sequential([tf.keras.layers.Dense(units)])
                model.compile("adam", "mse")
                model.fit(x, y, epochs=5)
                return model.evaluate(x, y)

            study = optuna.create_study()
            study.optimize(objective, n_trials=8)
            """
        ),
    )
    INVALID = (
        # KerasTuner calls a HyperModel's `fit` once per trial with the model its `build` has
        # just made (deep-pmsm's Hyperband search, set Z28 of stop 53).
        Invalid(
            """
            import keras_tuner
            import tensorflow as tf


            class Search(keras_tuner.HyperModel):
                def build(self, hp):
                    model = tf.keras.Sequential([tf.keras.layers.Dense(hp.Int("units", 1, 8))])
                    model.compile("adam", "mse")
                    return model

                def fit(self, hp, model, x, y, **kwargs):
                    return model.fit(x, y, **kwargs)


            tuner = keras_tuner.Hyperband(Search(), objective="val_loss", max_epochs=100)
            tuner.search(x, y, validation_split=0.2)
            """,
            12,
            16,
            12,
            41,
            "a model built every trial is `fit` here; " + _ADVICE,
        ),
        # TrainMyModel's training route, as a loop: each model is built here and handed to a
        # helper that fits the parameter it gets it as.
        Invalid(
            """
            import tensorflow as tf

            def train(model, x, y):
                model.fit(x, y, epochs=3)

            for units in range(8, 200):
                tf.keras.backend.clear_session()
                net = tf.keras.Sequential([tf.keras.layers.Dense(units)])
                net.compile("adam", "mse")
                train(net, x, y)
            """,
            10,
            5,
            10,
            21,
            "a model built every iteration is `fit` by `train` here; since TensorFlow 2.11 each "
            "`fit` registers gradient functions globally that keep its graphs alive even after "
            "`clear_session()` (tensorflow/tensorflow#61791); run each trial in a fresh process",
        ),
        # GridSearchTF: the model factory is the caller's; what it makes is fitted with
        # `validation_split`, which only a Keras model's `fit` takes.
        Invalid(
            """
            import tensorflow as tf

            def search(build_model, grid, x, y):
                for params in grid:
                    tf.keras.backend.clear_session()
                    model = build_model(**params)
                    model.fit(x, y, validation_split=0.2)
            """,
            7,
            9,
            7,
            46,
            "a model built every iteration is `fit` here; since TensorFlow 2.11 each `fit` "
            "registers gradient functions globally that keep its graphs alive even after "
            "`clear_session()` (tensorflow/tensorflow#61791); run each trial in a fresh process",
        ),
        # The same through a method: its parameters are counted after `self`.
        Invalid(
            """
            import tensorflow as tf

            class Trainer:
                def train(self, model, x, y):
                    model.fit(x, y, epochs=3)

            trainer = Trainer()
            for units in range(8, 200):
                tf.keras.backend.clear_session()
                net = tf.keras.Sequential([tf.keras.layers.Dense(units)])
                net.compile("adam", "mse")
                trainer.train(net, x, y)
            """,
            12,
            5,
            12,
            29,
            "a model built every iteration is `fit` by `Trainer.train` here; since TensorFlow 2.11 "
            "each `fit` registers gradient functions globally that keep its graphs alive even "
            "after `clear_session()` (tensorflow/tensorflow#61791); run each trial in a fresh "
            "process",
        ),
        # A 5-fold cross-validation of each of 7 networks: 35 models fitted in one process.
        Invalid(
            """
            import tensorflow as tf


            def run_cv(name, folds):
                for fold in range(folds):
                    tf.keras.backend.clear_session()
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.fit(x, y)


            for name in ["vgg", "resnet", "inception", "densenet", "xception", "mobile", "nas"]:
                run_cv(name, 5)
            """,
            12,
            5,
            12,
            20,
            "`run_cv` builds and fits a model (5 per call) and is called every iteration (7 "
            "in all); since TensorFlow 2.11 each `fit` registers gradient functions globally "
            "that keep its graphs alive even after `clear_session()` "
            "(tensorflow/tensorflow#61791); run each trial in a fresh process",
        ),
        Invalid(
            """
            import tensorflow as tf

            for lr in learning_rates:
                tf.keras.backend.clear_session()
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(tf.keras.optimizers.Adam(lr), "mse")
                model.fit(x, y)
            """,
            7,
            5,
            7,
            20,
            "a model built every iteration is `fit` here; since TensorFlow 2.11 each `fit` "
            "registers gradient functions globally that keep its graphs alive even after "
            "`clear_session()` (tensorflow/tensorflow#61791); run each trial in a fresh process",
        ),
        Invalid(
            """
            from keras import models
            from keras.backend import clear_session

            def build(units):
                return models.Sequential()

            for fold, (train, val) in enumerate(splits):
                clear_session()
                net = build(fold)
                history = net.fit(x[train], y[train])
            """,
            10,
            15,
            10,
            42,
            "a model built every iteration is `fit` here; since TensorFlow 2.11 each `fit` "
            "registers gradient functions globally that keep its graphs alive even after "
            "`clear_session()` (tensorflow/tensorflow#61791); run each trial in a fresh process",
        ),
        Invalid(
            """
            import tensorflow as tf

            def train_one(units):
                tf.keras.backend.clear_session()
                model = tf.keras.Sequential([tf.keras.layers.Dense(units)])
                model.fit(x, y)
                return model.evaluate(x, y)

            scores = {}
            for units in range(8, 257, 8):
                scores[units] = train_one(units)
            """,
            11,
            21,
            11,
            37,
            "`train_one` builds and fits a model and is called every iteration (32 in all); "
            "since TensorFlow 2.11 each `fit` registers gradient functions globally that "
            "keep its graphs alive even after `clear_session()` "
            "(tensorflow/tensorflow#61791); run each trial in a fresh process",
        ),
        Invalid(
            """
            from tensorflow.keras.models import load_model

            trial = 0
            while trial < 20:
                load_model("base.keras").fit(x, y)
                trial += 1
            """,
            5,
            5,
            5,
            39,
            "a model built every iteration is `fit` here; since TensorFlow 2.11 each `fit` "
            "registers gradient functions globally that keep its graphs alive even after "
            "`clear_session()` (tensorflow/tensorflow#61791); run each trial in a fresh process",
        ),
        Invalid(
            """
            import tensorflow as tf

            def train_fold(fold):
                tf.keras.backend.clear_session()
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile("adam", "mse")
                model.fit(x[fold], y[fold])

            for experiment in range(10):
                for fold in range(10):
                    train_fold(fold)
            """,
            11,
            9,
            11,
            25,
            "`train_fold` builds and fits a model and is called every iteration (100 in "
            "all); since TensorFlow 2.11 each `fit` registers gradient functions globally "
            "that keep its graphs alive even after `clear_session()` "
            "(tensorflow/tensorflow#61791); run each trial in a fresh process",
        ),
        Invalid(
            """
            import tensorflow as tf

            for experiment in experiments:
                for trial in range(2):
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.fit(x, y)
                tf.keras.backend.clear_session()
            """,
            6,
            9,
            6,
            24,
            "a model built every iteration is `fit` here; since TensorFlow 2.11 each `fit` "
            "registers gradient functions globally that keep its graphs alive even after "
            "`clear_session()` (tensorflow/tensorflow#61791); run each trial in a fresh "
            "process",
        ),
        Invalid(
            """
            import optuna
            import tensorflow as tf

            def objective(trial):
                tf.keras.backend.clear_session()
                units = trial.suggest_int("units", 8, 128)
                model = tf.keras.Sequential([tf.keras.layers.Dense(units)])
                model.compile("adam", "mse")
                model.fit(x, y, epochs=5)
                return model.evaluate(x, y)

            study = optuna.create_study()
            study.optimize(objective, n_trials=50)
            """,
            9,
            5,
            9,
            30,
            "a model built every trial is `fit` here; since TensorFlow 2.11 each `fit` "
            "registers gradient functions globally that keep its graphs alive even after "
            "`clear_session()` (tensorflow/tensorflow#61791); run each trial in a fresh "
            "process",
        ),
        # A project class's own `fit` (arnon3339/emoji-model's tuner): it builds a Hugging Face
        # model and fits it, every trial.
        Invalid(
            """
            import optuna
            import tensorflow as tf
            from transformers import TFAutoModelForSequenceClassification


            class AiModel:
                def __init__(self, learning_rate):
                    self.learning_rate = learning_rate

                def fit(self):
                    model = TFAutoModelForSequenceClassification.from_pretrained("bert-base")
                    model.compile(optimizer=tf.keras.optimizers.Adam(self.learning_rate))
                    return model.fit(train_dataset, epochs=3)


            def objective(trial):
                tf.keras.backend.clear_session()
                model = AiModel(trial.suggest_float("learning_rate", 1e-5, 1e-3))
                return model.fit()


            study = optuna.create_study()
            study.optimize(objective, 32)
            """,
            19,
            12,
            19,
            23,
            "`AiModel.fit` builds and fits a model and is called every trial (32 in all); since "
            "TensorFlow 2.11 each `fit` registers gradient functions globally that keep its "
            "graphs alive even after `clear_session()` (tensorflow/tensorflow#61791); run each "
            "trial in a fresh process",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        if not in_repetition(context):
            return
        receiver = method_call(node, _FIT)
        if receiver is not None and not context.calls_project_code(node, constructors=False):
            if repeated_unbounded(context) and built_in_loop(context, receiver):
                built = every_iteration(context, counted=False)
                report = self.report(node, f"a model built {built} is `fit` here; {_ADVICE}")
                # The loop that builds the model, not an inner one that fits it each epoch.
                relate_loop(report, context, building_loop(context, receiver))
            return
        fits = [
            effect
            for effect in effects_through_calls(context, node, EffectKind.FIT)
            if context.runs_eagerly(effect)
        ]
        effects = context.effects(node)
        if not fits:
            return
        if not any(effect.kind is EffectKind.BUILD_MODEL for effect in effects):
            self._fits_what_it_is_given(node, fits)
            return
        fitted = fits[0]
        times = per_call(context, fitted)
        if not repeated_unbounded(context, times):
            return
        report = self.report(
            node,
            f"`{fitted.chain[0].callee}` builds and fits a model{per_call_note(times)} and is "
            f"called {every_iteration(context)}; {_ADVICE}",
        )
        relate_chain(report, fitted)
        report.relate(RelatedRole.MODEL, "the model is fitted here", fitted.span, fitted.path)
        relate_loop(report, context)

    def _fits_what_it_is_given(self, node: cst.Call, fits: list[Effect]) -> None:
        """``node`` hands a model built anew in this repetition to a function that fits the
        parameter it gets it as (a route that builds ``app.model``, then
        ``train_model(app.model, ...)``, whose ``model.fit``)."""
        context = self.context
        for fitted in fits:
            argument = _argument_fitted(context, node, fitted)
            if argument is None or not built_in_loop(context, argument):
                continue
            if not repeated_unbounded(context):
                return
            callee = fitted.chain[0].callee
            built = every_iteration(context, counted=False)
            report = self.report(
                node, f"a model built {built} is `fit` by `{callee}` here; {_ADVICE}"
            )
            report.relate(RelatedRole.MODEL, "the model is fitted here", fitted.span, fitted.path)
            relate_loop(report, context, building_loop(context, argument))
            return


def _argument_fitted(
    context: FileContext, node: cst.Call, fitted: Effect
) -> cst.BaseExpression | None:
    """The argument of ``node`` that the function it calls fits: that function's own ``fit``
    of one of its parameters (``def train_model(model, ...): model.fit(...)``)."""
    if len(fitted.chain) != 1:
        return None
    module = context.project.module_at(fitted.path)
    function = module.functions.get(fitted.chain[0].callee) if module is not None else None
    if function is None or fitted.text not in function.params:
        return None
    position = function.params.index(fitted.text)
    given = arguments(node, function.params)
    return next((a.value for a in given if a.position == position), None)
