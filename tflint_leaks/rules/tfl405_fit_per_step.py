from __future__ import annotations

import libcst as cst

from tflint_leaks.diagnostics import RelatedRole
from tflint_leaks.rulekit.context import FileContext
from tflint_leaks.rulekit.facts import Effect, EffectKind
from tflint_leaks.rulekit.rule import Invalid, Rule, Valid
from tflint_leaks.rules._calls import every_iteration, relate_loop, report_through
from tflint_leaks.rules._models import builds_models, built_in_loop, repeated_unbounded


class FitPerStep(Rule):
    """
    ## What it does
    Flags `model.fit(...)` of one epoch (`epochs` left out or `1`) that runs per step: in a
    loop inside another loop (or inside a framework's repetition: a route, a callback), on a
    model known to be a Keras model that the loops do not build anew. The inner repetition
    may be in project code the outer loop calls, up to four calls deep: a DQN agent's
    `replay()`, called once per episode, fits ten sampled minibatches
    (`for _ in range(10): self.model.train(states, targets)`, the wrapper calling `fit`). The
    finding is on the `fit` when it is in the same file, else on the call in the loop.

    ## Why is this bad?
    `fit` is made to train over a dataset: every call wraps its input in a new `tf.data`
    pipeline, builds a data handler, a callback list and a `History`, and traces new
    functions for them (three per call in TensorFlow 2.21). Called once per minibatch it
    costs about 70 ms against 1 ms for `train_on_batch` on a small model, and the process
    grows by about 12 KB per call (measured on TensorFlow 2.21 and Keras 3: 1,500 calls, 18 MB):
    a replay loop of a million steps spends hours building pipelines and gigabytes keeping
    what they leave behind.

    Not flagged: one `fit` per epoch or per episode in a single loop (`for epoch in ...:
    model.fit(x, y, epochs=1)`: one pipeline per pass over the data; also a step loop's block
    that runs on its last step, `if done:` in `while not done:` or a block ending with
    `break`), a `fit` of several
    epochs or of an unknown number of them (a federated round's local training), loops of a
    known small trip count (at most `max-loop-iterations`, default 10, in all), models built
    anew in the loop (TFL401 and TFL403 speak of those), a project model class that overrides
    `fit`, and graph mode (a TensorFlow 1 project, or a file that turns eager execution off, or
    a `fit` in a module that does, whichever loop calls it).

    ## Example
    ```python
    import random
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    model.compile("adam", "mse")

    def replay(memory):
        for state, target in random.sample(memory, 32):
            model.fit(state, target, epochs=1, verbose=0)

    for episode in range(1000):
        play(episode)
        replay(memory)
    ```

    ## Use instead
    ```python
    import random
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    model.compile("adam", "mse")

    def replay(memory):
        for state, target in random.sample(memory, 32):
            model.train_on_batch(state, target)

    for episode in range(1000):
        play(episode)
        replay(memory)
    ```
    or stack the minibatch and call `train_on_batch` once, or write the step as a
    `tf.function` with a `tf.GradientTape`.

    ## Options
    - `max-loop-iterations`

    ## Guard it
    `tf_budget.iterations` (the pytest plugin's `tf_budget` fixture
    ([docs/budget.md](https://github.com/tflint-leaks/tflint-leaks/blob/main/docs/budget.md))) takes
    the minibatches and hands them to the training step, sampling between steps: `fit` traces
    three new functions on every call, and the test fails naming `traces of any tf.function`.
    ```python
    import numpy as np
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(2)])
    model.compile("adam", "mse")


    def train(minibatches):
        for states, targets in minibatches:
            model.train_on_batch(states, targets)


    def test_training_traces_nothing_per_step(tf_budget):
        batch = (np.ones((32, 4), "float32"), np.zeros((32, 2), "float32"))
        train(tf_budget.iterations([batch] * 12, warmup=2))
    ```

    ## References
    - [Keras FAQ: `fit` and `train_on_batch`](https://keras.io/getting_started/faq/)
    - [tensorflow/tensorflow#33030](https://github.com/tensorflow/tensorflow/issues/33030)
    """

    VALID = (
        # One `fit` per epoch: one pipeline per pass over the data.
        Valid("""
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.compile("adam", "mse")
        for epoch in range(100):
            model.fit(x_train, y_train, epochs=1, verbose=0)
            for layer in model.layers:
                print(layer.name)
        """),
        # A federated simulation: each client trains several local epochs each round.
        Valid("""
        import tensorflow as tf

        LOCAL_EPOCHS = 5
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.compile("adam", "mse")
        for round_number in range(100):
            for client_x, client_y in clients:
                model.set_weights(server_weights)
                model.fit(client_x, client_y, epochs=LOCAL_EPOCHS, verbose=0)
        """),
        # A short schedule: 2 episodes of 3 replays, 6 calls in all.
        Valid("""
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.compile("adam", "mse")
        for episode in range(2):
            for step in range(3):
                model.fit(states[step], targets[step], verbose=0)
        """),
        # The step itself: `train_on_batch` builds no pipeline.
        Valid("""
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.compile("adam", "mse")


        def replay(batches):
            for states, targets in batches:
                model.train_on_batch(states, targets)


        while True:
            replay(sample(memory))
        """),
        # A cross-entropy method's epochs: one `fit` on each epoch's elite experience; the
        # inner loop collects rollouts and fits nothing.
        Valid("""
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.compile("adam", "categorical_crossentropy")
        for epoch in range(200):
            trajectories = [rollout(model) for _ in range(70)]
            obs, actions = elite(trajectories)
            model.fit(obs, actions, epochs=1, verbose=0)
        """),
        # pythonlessons' policy gradient: `if done:` in `while not done:` runs on the last
        # step of each episode, so the episode's memory is fitted once per episode.
        Valid("""
        import numpy as np
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
        model.compile("adam", "categorical_crossentropy")


        def replay(states, actions):
            model.fit(np.vstack(states), np.vstack(actions), epochs=1, verbose=0)


        for episode in range(1000):
            states, actions, done = [], [], False
            while not done:
                state, action, done = play(model)
                states.append(state)
                actions.append(action)
                if done:
                    replay(states, actions)
        """),
        # The same with a step limit: the block that fits ends the step loop.
        Valid("""
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
        model.compile("adam", "mse")
        for episode in range(1000):
            for step in range(500):
                memory, done = play(model, memory)
                if done or step == 499:
                    model.fit(*memory, verbose=0)
                    break
        """),
        # A project model whose own `fit` takes one step.
        Valid("""
        import tensorflow as tf

        class QNetwork(tf.keras.Model):
            def fit(self, states, targets, epochs=1):
                return self.train_on_batch(states, targets)

        network = QNetwork()
        for episode in range(1000):
            while not done:
                done = act(network)
                network.fit(*sample(memory))
        """),
        # A course's grid of runs: how many epochs each `fit` trains is the command line's.
        Valid("""
        import argparse
        import tensorflow as tf

        parser = argparse.ArgumentParser()
        parser.add_argument("--epochs", type=int)
        args = parser.parse_args()
        model = tf.keras.models.load_model("base.keras")
        for dataset in datasets:
            for fraction in fractions:
                model.fit(dataset.take(fraction), epochs=args.epochs)
        """),
    )
    INVALID = (
        # A DQN agent in the style of keon/deep-q-learning: `replay` fits one sample at a
        # time, and the episode loop calls it every step.
        Invalid(
            """
            import random
            import tensorflow as tf

            class Agent:
                def __init__(self):
                    self.model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                    self.model.compile("adam", "mse")

                def replay(self, memory):
                    for state, target in random.sample(memory, 32):
                        self.model.fit(state, target, epochs=1, verbose=0)

            agent = Agent()
            for episode in range(1000):
                while not done:
                    done = step(agent)
                agent.replay(memory)
            """,
            11,
            13,
            11,
            63,
            "`self.model.fit` through `replay` every iteration (1000 in all), in a loop of "
            "the code it runs, trains one epoch per call and builds a new `tf.data` pipeline "
            "each time; use `self.model.train_on_batch(x, y)`",
        ),
        # marload/DeepRL-TensorFlow2's DQN: the wrapper `train` fits; `replay` calls it ten
        # times and the agent's episode loop calls `replay`.
        Invalid(
            """
            import tensorflow as tf

            class ActionStateModel:
                def __init__(self):
                    self.model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                    self.model.compile("adam", "mse")

                def train(self, states, targets):
                    self.model.fit(states, targets, epochs=1, verbose=0)

            class Agent:
                def __init__(self):
                    self.model = ActionStateModel()

                def replay(self):
                    for _ in range(10):
                        states, targets = self.buffer.sample()
                        self.model.train(states, targets)

                def train(self, max_episodes=1000):
                    for ep in range(max_episodes):
                        self.play_episode()
                        self.replay()
            """,
            9,
            9,
            9,
            61,
            "`self.model.fit` through `replay` every iteration, in a loop of the code it runs, "
            "trains one epoch per call and builds a new `tf.data` pipeline each time; use "
            "`self.model.train_on_batch(x, y)`",
        ),
        # Both loops in one function: a fit per step of every episode.
        Invalid(
            """
            import tensorflow as tf

            model = tf.keras.models.load_model("policy.keras")
            for episode in range(500):
                state = env.reset()
                done = False
                while not done:
                    state, target, done = play(model, state)
                    model.fit(state, target, verbose=0)
            """,
            9,
            9,
            9,
            44,
            "`model.fit` every iteration trains one epoch per call and builds a new `tf.data` "
            "pipeline each time; use `model.train_on_batch(x, y)`",
        ),
        # A GAN trained with `fit` per batch: the discriminator's pipeline is rebuilt for
        # every batch of every epoch.
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            discriminator = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            discriminator.compile("adam", "binary_crossentropy")
            for epoch in range(EPOCHS):
                for real in np.array_split(images, len(images) // 64):
                    fake = generate(len(real))
                    discriminator.fit(np.concatenate([real, fake]), labels, verbose=0)
            """,
            9,
            9,
            9,
            75,
            "`discriminator.fit` every iteration trains one epoch per call and builds a new "
            "`tf.data` pipeline each time; use `discriminator.train_on_batch(x, y)`",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        if not repeated_unbounded(context):
            return
        fits = [
            effect
            for effect in context.effects(node)
            if effect.kind is EffectKind.FIT and effect.one_epoch and context.runs_eagerly(effect)
        ]
        if not fits:
            return
        levels = _levels(context)
        for effect in fits:
            if not effect.chain:  # `model.fit` itself
                receiver = node.func.value if isinstance(node.func, cst.Attribute) else None
                if levels < 2 or receiver is None or built_in_loop(context, receiver):
                    continue
                report = self.report(node, _message(effect, every_iteration(context)))
                relate_loop(report, context)
                continue
            inside = context.repeats_inside(effect)
            if levels + inside >= 2:
                if builds_models(context, context.repeated_calls()):
                    return  # a model built each iteration: TFL401 and TFL403
                callee = effect.chain[0].callee.rpartition(".")[2]
                how_often = f"through `{callee}` {every_iteration(context)}"
                if inside:
                    how_often += ", in a loop of the code it runs,"
                where = f"`{effect.method}` is called here"
                report_through(
                    self, node, effect, _message(effect, how_often), RelatedRole.MODEL, where
                )


def _levels(context: FileContext) -> int:
    """How many repetitions run the current node: its loops that may run more than once, and
    the framework's when it is in an entry point."""
    loops = sum(context.trip_count(loop) != 1 for loop in context.loops)
    return loops + (context.entry_point is not None)


def _message(effect: Effect, how_often: str) -> str:
    name = effect.text
    return (
        f"`{name}.{effect.method}` {how_often} trains one epoch per call and builds a new "
        f"`tf.data` pipeline each time; use `{name}.train_on_batch(x, y)`"
    )
