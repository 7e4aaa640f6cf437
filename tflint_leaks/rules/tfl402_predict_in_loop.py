from __future__ import annotations

import libcst as cst

from tflint_leaks.analysis.nodes import dotted
from tflint_leaks.analysis.program import EffectKind
from tflint_leaks.analysis.program import Kind as TypeKind
from tflint_leaks.diagnostics import RelatedRole
from tflint_leaks.rulekit.rule import Invalid, Rule, Valid
from tflint_leaks.rules._calls import (
    effects_through_calls,
    every_iteration,
    relate_loop,
    report_through,
)
from tflint_leaks.rules._graph import in_graph_mode
from tflint_leaks.rules._models import builds_models, built_in_loop, method_call

_PREDICT = frozenset({"predict"})


class PredictInLoop(Rule):
    """
    ## What it does
    Flags `model.predict(...)` run on every iteration of a loop, when `model` is known to be a
    Keras model: built or loaded in this scope, a module global (a notebook's model), returned
    by a project factory (in this file or another), assigned to `self.model` (or
    `self.actor.model`, through any number of attributes) by the class, or passed in by every
    project call site. The `predict` may sit in a method or function the loop calls (`act()`
    in a `while not done` loop), up to four calls deep, also on an object that call sites
    give as instances of different project classes (a random agent for warm-up, then the
    learning agent: each class's `act` may run); the finding is then on the `predict`
    when it is in the same file, else on the call in the loop, and `related` lists every call
    between them.

    ## Why is this bad?
    `predict` is made for large inputs: every call wraps its input in a new `tf.data` pipeline,
    builds a data handler and runs callbacks. Called per sample or per batch it is much slower
    than a direct call, and TensorFlow 2.0 to 2.3 leaked memory on every call; the Keras docs
    say `predict` is not meant for loops.

    Not flagged: `predict` on anything not known to be a Keras model (a scikit-learn estimator,
    a tracker, a parameter that is a model at one call site and something else at another), a
    project model class that overrides `predict`, `predict` over a whole dataset outside a
    loop, loops of a known small trip count (at most `max-loop-iterations`, default 10:
    `for horizon in range(10)`), files that turn eager execution off (graph mode: `predict`
    reuses one function), and one `predict` per model in a loop that builds a new model each
    iteration.

    ## Example
    ```python
    import tensorflow as tf

    model = tf.keras.models.load_model("model.keras")
    for frame in frames:
        scores = model.predict(frame[None])
    ```

    ## Use instead
    ```python
    import tensorflow as tf

    model = tf.keras.models.load_model("model.keras")
    for frame in frames:
        scores = model(frame[None], training=False)
    ```
    or `model.predict_on_batch(...)`, or one `model.predict(all_frames)` outside the loop.

    ## Options
    - `max-loop-iterations`

    ## References
    - [Keras FAQ: predict vs `__call__`](https://keras.io/getting_started/faq/#whats-the-difference-between-model-methods-predict-and-call)
    - [tensorflow/tensorflow#33009](https://github.com/tensorflow/tensorflow/issues/33009)
    - [tensorflow/tensorflow#44711](https://github.com/tensorflow/tensorflow/issues/44711)
    """

    VALID = (
        Valid("""
        import random

        class RandomAgent:
            def act(self, state):
                return random.randrange(2)

        class Scripted:
            def predict(self, state):
                return 0

            def act(self, state):
                return self.predict(state)

        def run(env, agent):
            state = env.reset()
            while True:
                state, done = env.step(agent.act(state))

        run(env, RandomAgent())
        run(env, Scripted())
        """),
        Valid("""
        import tensorflow as tf

        model = tf.keras.models.load_model("model.keras")
        for frame in frames:
            scores = model(frame[None], training=False)
        """),
        Valid("""
        import tensorflow as tf

        model = tf.keras.models.load_model("model.keras")
        scores = model.predict(dataset)
        """),
        Valid("""
        from sklearn.ensemble import RandomForestClassifier

        forest = RandomForestClassifier().fit(x, y)
        for row in rows:
            forest.predict([row])
        """),
        Valid("""
        def evaluate(model, batches):
            for batch in batches:
                model.predict(batch)
        """),
        Valid("""
        import tensorflow as tf

        model = tf.keras.models.load_model("model.keras")
        for batch in batches:
            model.predict_on_batch(batch)
        """),
        Valid("""
        import tensorflow as tf

        predictions = {}
        for path in checkpoints:
            model = tf.keras.models.load_model(path)
            predictions[path] = model.predict(x_test)
            tf.keras.backend.clear_session()
        """),
        Valid("""
        class Tracker:
            def predict(self, x):
                return x

        tracker = Tracker()
        for detection in detections:
            tracker.predict(detection)
        """),
        Valid(
            """
            import tensorflow as tf
            from sklearn.ensemble import RandomForestClassifier

            def score_all(estimator, rows):
                for row in rows:
                    estimator.predict(row)

            score_all(tf.keras.models.load_model("model.keras"), rows)
            score_all(RandomForestClassifier().fit(x, y), rows)
            """
        ),
        Valid(
            """
            import numpy as np
            from tensorflow import keras

            class DQN:
                def __init__(self):
                    self.model = keras.Sequential([keras.layers.Dense(2)])

                def act(self, state):
                    return np.argmax(self.model.predict(state[None]))

                def first_move(self, env):
                    return self.act(env.reset())
            """
        ),
        Valid(
            """
            import tensorflow as tf

            tf.compat.v1.disable_eager_execution()
            model = tf.keras.models.load_model("model.keras")
            for frame in frames:
                scores = model.predict(frame[None])
            """
        ),
        Valid(
            """
            import tensorflow as tf

            model = tf.keras.models.load_model("forecaster.keras")
            for horizon in range(10):
                forecast = model.predict(window)
            """
        ),
        Valid(
            """
            import tensorflow as tf

            class Encoder(tf.keras.Model):
                def call(self, x):
                    return x

                def predict(self, x):
                    return self(x, training=False)

            encoder = Encoder()
            for batch in batches:
                codes = encoder.predict(batch)
            """
        ),
    )
    INVALID = (
        Invalid(
            """
            import tensorflow as tf

            model = tf.keras.models.load_model("model.keras")
            for frame in frames:
                scores = model.predict(frame[None])
            """,
            5,
            14,
            5,
            40,
            "`model.predict` every iteration builds a new `tf.data` pipeline each call; use "
            "`model(x, training=False)` or `predict_on_batch`",
        ),
        Invalid(
            """
            from tensorflow import keras

            class Agent:
                def __init__(self):
                    self.model = keras.Sequential([keras.layers.Dense(4)])

                def run(self, env):
                    state = env.reset()
                    while True:
                        action = self.model.predict(state)
                        state = env.step(action)
            """,
            10,
            22,
            10,
            47,
            "`self.model.predict` every iteration builds a new `tf.data` pipeline each call; use "
            "`self.model(x, training=False)` or `predict_on_batch`",
        ),
        Invalid(
            """
            import keras

            def build():
                return keras.Sequential([keras.layers.Dense(1)])

            model = build()
            predictions = [model.predict(x) for x in chunks]
            """,
            7,
            16,
            7,
            32,
            "`model.predict` every iteration builds a new `tf.data` pipeline each call; use "
            "`model(x, training=False)` or `predict_on_batch`",
        ),
        Invalid(
            """
            import tensorflow as tf

            def serve(inputs):
                model = tf.keras.applications.ResNet50(weights=None)
                results = []
                for image in inputs:
                    results.append(model.predict(image))
                return results
            """,
            7,
            24,
            7,
            44,
            "`model.predict` every iteration builds a new `tf.data` pipeline each call; use "
            "`model(x, training=False)` or `predict_on_batch`",
        ),
        Invalid(
            """
            import numpy as np
            from tensorflow import keras

            class DQN:
                def __init__(self):
                    self.model = self.build_model()

                def build_model(self):
                    model = keras.Sequential([keras.layers.Dense(2)])
                    model.compile("adam", "mse")
                    return model

                def act(self, state):
                    return np.argmax(self.model.predict(state[None]))

                def run(self, env):
                    state = env.reset()
                    while True:
                        state, reward, done, _ = env.step(self.act(state))
            """,
            14,
            26,
            14,
            57,
            "`self.model.predict` through `act` every iteration builds a new `tf.data` "
            "pipeline each call; use `self.model(x, training=False)` or `predict_on_batch`",
        ),
        Invalid(
            """
            import random
            from tensorflow import keras

            class RandomAgent:
                def act(self, state):
                    return random.randrange(2)

            class Agent:
                def __init__(self):
                    self.model = keras.Sequential([keras.layers.Dense(2)])

                def act(self, state):
                    return self.model.predict(state[None]).argmax()

            def run(env, agent):
                state = env.reset()
                while True:
                    state, done = env.step(agent.act(state))

            run(env, RandomAgent())  # warm-up
            run(env, Agent())
            """,
            13,
            16,
            13,
            47,
            "`self.model.predict` through `act` every iteration builds a new `tf.data` "
            "pipeline each call; use `self.model(x, training=False)` or `predict_on_batch`",
        ),
        Invalid(
            """
            from tensorflow import keras

            class Actor:
                def __init__(self):
                    self.model = self.build()

                def build(self):
                    return keras.Sequential([keras.layers.Dense(2)])

            class Agent:
                def __init__(self, env):
                    self.env = env
                    self.actor = Actor()

                def train(self):
                    for episode in range(1000):
                        state, done = self.env.reset(), False
                        while not done:
                            probs = self.actor.model.predict(state[None])
                            state, reward, done, _ = self.env.step(probs.argmax())
            """,
            19,
            25,
            19,
            62,
            "`self.actor.model.predict` every iteration builds a new `tf.data` pipeline each "
            "call; use `self.actor.model(x, training=False)` or `predict_on_batch`",
        ),
        Invalid(
            """
            import tensorflow as tf

            policy = tf.keras.models.load_model("policy.keras")

            def play(env):
                state, done = env.reset(), False
                while not done:
                    q = policy.predict(state[None])
                    state, reward, done, _ = env.step(q.argmax())
            """,
            8,
            13,
            8,
            40,
            "`policy.predict` every iteration builds a new `tf.data` pipeline each call; use "
            "`policy(x, training=False)` or `predict_on_batch`",
        ),
        Invalid(
            """
            import tensorflow as tf

            def decode(model, tokens):
                while tokens[-1] != 0:
                    tokens.append(model.predict(tokens).argmax())
                return tokens

            translator = tf.keras.models.load_model("seq2seq.keras")
            decode(translator, [1])
            """,
            5,
            23,
            5,
            44,
            "`model.predict` every iteration builds a new `tf.data` pipeline each call; use "
            "`model(x, training=False)` or `predict_on_batch`",
        ),
        Invalid(
            """
            import tensorflow as tf

            class Agent:
                def __init__(self, path):
                    self.actor = tf.keras.models.load_model(path)

                def predict(self, state):
                    return self.actor.predict(state[None])

            agent = Agent("ppo.keras")
            while not done:
                action = agent.predict(state)
                state, done = step(action)
            """,
            8,
            16,
            8,
            47,
            "`self.actor.predict` through `predict` every iteration builds a new `tf.data` "
            "pipeline each call; use `self.actor(x, training=False)` or `predict_on_batch`",
        ),
        Invalid(
            """
            import tensorflow as tf

            def serve(model: tf.keras.Model, frames):
                for frame in frames:
                    yield model.predict(frame[None])
            """,
            5,
            15,
            5,
            41,
            "`model.predict` every iteration builds a new `tf.data` pipeline each call; use "
            "`model(x, training=False)` or `predict_on_batch`",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        if not context.loops or context.in_tf_function or in_graph_mode(context):
            return
        if context.bounded(context.options.max_loop_iterations):
            return
        receiver = method_call(node, _PREDICT)
        found = context.type_of(receiver) if receiver is not None else None
        if receiver is not None and found is not None and found.kind is TypeKind.MODEL:
            if context.program.defines(found.klass, "predict") or built_in_loop(context, receiver):
                return
            name = dotted(receiver) or "model"
            report = self.report(node, _message(name, every_iteration(context)))
            relate_loop(report, context)
            return
        predicts = effects_through_calls(context, node, EffectKind.PREDICT)
        if not predicts or any(builds_models(context, loop) for loop in context.loops):
            return
        for effect in predicts:  # each `predict` the call runs (one finding per place)
            callee = effect.chain[0].callee.rpartition(".")[2]
            message = _message(effect.text, f"through `{callee}` {every_iteration(context)}")
            where = "`predict` is called here"
            report_through(self, node, effect, message, RelatedRole.MODEL, where)


def _message(name: str, how_often: str) -> str:
    return (
        f"`{name}.predict` {how_often} builds a new `tf.data` pipeline each call; use "
        f"`{name}(x, training=False)` or `predict_on_batch`"
    )
