from __future__ import annotations

import libcst as cst

from tflint_leaks.analysis import keras
from tflint_leaks.analysis.nodes import descendants, dotted
from tflint_leaks.diagnostics import RelatedRole
from tflint_leaks.rulekit.context import FileContext
from tflint_leaks.rulekit.facts import Effect, EffectKind, Kind, Span
from tflint_leaks.rulekit.rule import Invalid, Rule, Valid
from tflint_leaks.rules._calls import (
    effects_through_calls,
    every_iteration,
    relate_loop,
    report_through,
)
from tflint_leaks.rules._models import assigned_by, builds_models, built_in_loop, method_call


class PredictInLoop(Rule):
    """
    ## What it does
    Flags `model.predict(...)` run on every iteration of a loop, when `model` is known to be a
    Keras model: built or loaded in this scope, a module global (a notebook's model), returned
    by a project factory (in this file or another), assigned to `self.model` (or
    `self.actor.model`, through any number of attributes) by the class, stored by the module on
    one of its globals (`app.model = load_model(...)` in a FastAPI route: any of the module's
    stores there), or passed in by every project call site. What the project does not show is
    left aside: a parameter that the project's calls give a model and a library's users may give
    anything, a name bound to a loaded model in one place and to a third-party factory's result
    in another (but not to a scikit-learn, XGBoost, LightGBM, CatBoost or PyTorch estimator).
    What a function or class the project cannot read makes is a model when the code compiles
    it (`model = sm.FPN(...)` then `model.compile(...)`: only a Keras model has `compile`); a
    `fit(..., epochs=...)` alone says nothing (alibi-detect's detectors take one too).
    The `predict` may sit in a method or function the loop calls (`act()` in a `while not done`
    loop), up to four calls deep, also on an object that call sites give as instances of
    different project classes (a random agent for warm-up, then the learning agent: each class's
    `act` may run; a base class's loop that calls `self.act()` runs the overrides of the
    subclasses that run that loop, those that inherit it or reach it through `super()`); the
    finding is then on the `predict` when it is in the same file, else on
    the call in the loop, and `related` lists every call between them. The `predict`s of other
    files that one call runs make one finding at the call, whose message counts them ("(and 2
    more `predict` calls)") and whose `related` points at each.

    ## Why is this bad?
    `predict` is made for large inputs: every call wraps its input in a new `tf.data` pipeline,
    builds a data handler and runs callbacks. Called per sample or per batch it is much slower
    than a direct call, and TensorFlow 2.0 to 2.3 leaked memory on every call; the Keras docs
    say `predict` is not meant for loops.

    Not flagged: `predict` on anything not known to be a Keras model (a scikit-learn estimator,
    a tracker, a parameter that is a model at one call site and something else at another), a
    project model class that overrides `predict`, `predict` over a whole dataset outside a
    loop, loops of a known small trip count (at most `max-loop-iterations`, default 10:
    `for horizon in range(10)`; a block that counts its runs, `shown += 1`, in a loop that
    ends with `if shown == 5: break`, runs five times), graph mode (a TensorFlow 1 project,
    or a file that turns eager execution off, or a `predict` in a module that does, whichever
    loop calls it: `predict` reuses one function), projects that pin multi-backend Keras
    (`keras<2.4`: `predict` slices its input into batches and runs the model's one
    `predict_function`, a `K.function` made on the first call, on each), and one `predict` per
    model in a loop that builds a new model each iteration (a view of an existing model's layers
    too, `Model(inputs=base.input, outputs=base.layers[i].output)`; or a search's objective that
    builds one each trial) or iterates models (`for model in ensemble: model.predict(data)`,
    when no other loop or framework repeats it), and a pass over a dataset that the loop does
    not change, split into batches (`model.predict(x_test, batch_size=1024)` once per round of
    training: one pipeline per pass, small beside the pass, and a direct call would push the
    whole dataset through in one batch; `batch_size=1` says the data is one sample). A call that
    leaves out a required parameter runs nothing (it raises `TypeError`), and a method's block
    that the call's receiver never takes is not followed: `agent = Agent(env, w_per=False)`
    makes an agent whose `if self.with_per:` is false, when `__init__` keeps that parameter as
    the attribute and nothing else assigns it. In a TensorFlow 1 project with eager execution
    turned on the message says only what every Keras `predict` does per call.

    A framework's repetition counts as a loop of unknown size: `predict` in a web route runs
    "every request", in a Keras callback's `on_train_batch_end` "every batch" (`self.model` is
    the model being trained), in an Optuna objective "every trial (100 in all)" when the study
    says `n_trials=100`; not in `on_train_end`, which runs once, nor directly in
    `on_epoch_end` (one pipeline per epoch, beside an epoch of training over the whole
    dataset: as TFL405 leaves one `fit` per epoch), or in a loop there of a known small
    trip count (a sample of the training and one of the validation data; a loop per image
    still counts),
    nor once per iteration of a loop of the program's own whose iterations each make such a
    pass too (another loop of the body over a `tf.data` dataset). A
    script or route that loads its model each time (a Streamlit rerun) is flagged for the load
    (TFL401) and for a `predict` of its own code too: each request still builds its pipeline.
    A helper it calls that loads the model and predicts is one finding at the call, TFL401:
    one fix (load once) leaves the `predict`, which is reported then. A periodic guard runs its body
    one time in `N`: `if step % 1000 == 0:` in a loop of 20,000 steps is "every 1000th
    iteration (20 in all)", as after an early exit (`if step % 1000 != 0: continue`, or `return`
    in a callback), and one whose count falls to `max-loop-iterations` or fewer is not
    flagged. A guard whose `N` is not known counts as every iteration.

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

    ## Guard it
    `tf_budget.iterations` (the pytest plugin's `tf_budget` fixture
    ([docs/budget.md](https://github.com/tflint-leaks/tflint-leaks/blob/main/docs/budget.md))) takes
    the frames and hands them to the scoring loop, sampling between frames: `predict` traces new
    `tf.data` functions on every call, and the test fails naming `traces of any tf.function`. The
    one score kept per frame is allowed with `live_tensors=1`.
    ```python
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(2)])


    def score(frames):
        return [model(frame[None], training=False) for frame in frames]


    def test_scoring_traces_nothing_per_frame(tf_budget):
        # one score is kept per frame: allow that one tensor
        score(tf_budget.iterations([tf.ones([4])] * 12, warmup=2, live_tensors=1))
    ```

    ## References
    - [Keras FAQ: predict vs `__call__`](https://keras.io/getting_started/faq/#whats-the-difference-between-model-methods-predict-and-call)
    - [tensorflow/tensorflow#33009](https://github.com/tensorflow/tensorflow/issues/33009)
    - [tensorflow/tensorflow#44711](https://github.com/tensorflow/tensorflow/issues/44711)
    """

    VALID = (
        # The base's `train` never runs on a `DeepAgent`, which overrides it without calling
        # `super().train()`: the base's loop only ever calls the base's `sample_action`
        # (Yishaiaz/DRL-A1-DQN-, set Z24 of stop 52).
        Valid("""
        import numpy as np
        import tensorflow as tf


        class Agent:
            def sample_action(self, state):
                return int(np.argmax(self.table[state]))

            def train(self, env, episodes):
                for episode in range(episodes):
                    state, done = env.reset(), False
                    while not done:
                        state, _, done, _ = env.step(self.sample_action(state))


        class DeepAgent(Agent):
            def __init__(self):
                self.model = tf.keras.models.load_model("q.keras")

            def sample_action(self, state):
                return int(np.argmax(self.model.predict(state[None])))

            def train(self, env, episodes):
                for episode in range(episodes):
                    self.model.fit(env.batch(), epochs=10)
        """),
        Valid("""
        import numpy as np
        import tensorflow as tf
        from boosting import make_classifier


        def build(x, y):
            model = make_classifier(depth=6)
            model.fit(x, y, epochs=10)
            return model


        def predict_rows(model, rows):
            for row in rows:
                model.predict(row[None])


        predict_rows(build(np.zeros((9, 3)), np.zeros(9)), np.zeros((500, 3)))
        """),
        # Five random test images shown: the block that predicts counts its runs and the loop
        # ends at five (TASM's examples, unseen set Z12 of stop 49).
        Valid("""
        import numpy as np
        import tensorflow as tf

        model = tf.keras.models.load_model("segmenter.keras")
        ids = np.random.choice(np.arange(101), size=5, replace=False)
        counter = 0
        shown = 0
        for image, mask in test_set:
            if counter in ids:
                output = model.predict(image)
                shown += 1
            counter += 1
            if shown == 5:
                break
        """),
        # A pass over the whole training set per round of growing a model, batched (TreeVAE's
        # growing loop, unseen set Z10 of stop 49): what `predict` is for.
        Valid("""
        import tensorflow as tf

        model = tf.keras.models.load_model("tree.keras")

        def grow(x_train, x_test, rounds):
            for _ in range(rounds):
                model.fit(x_train, epochs=150)
                leaves = model.predict(x_train, batch_size=256)
                scores = model.predict(x=x_test, batch_size=256)
        """),
        # Six images explained: the first three and the last three (the melanoma pipeline's
        # occlusion maps, unseen set Q of stop 43).
        Valid("""
        import tensorflow as tf

        model = tf.keras.models.load_model("m.h5")

        def occlusion(image):
            return model.predict(image)

        def explain(images):
            return [occlusion(image) for image in images[:3] + images[-3:]]
        """),
        # Handed the model's `predict`, the helper calls it once; handed a NumPy function,
        # the loop predicts nothing.
        Valid("""
        import numpy as np
        import tensorflow as tf

        def predict_all(batches, predict_fn):
            return predict_fn(np.concatenate(batches))

        def reduce_batches(batches, reduce_fn):
            return [reduce_fn(batch) for batch in batches]

        model = tf.keras.models.load_model("m.h5")
        predict_all(stream, model.predict)
        reduce_batches(stream, np.mean)
        """),
        # Deep Learning with Python's third edition: Keras 3 runs on JAX, where `predict`
        # reuses one compiled function and builds no `tf.data` pipeline.
        Valid("""
        import os

        os.environ["KERAS_BACKEND"] = "jax"
        import keras

        model = keras.models.load_model("mini_gpt.keras")
        for step in range(100):
            logits = model.predict(tokens, verbose=0)
            tokens = extend(tokens, logits)
        """),
        # A TF2 book's attention plots: the loop skips short sentences and counts the others;
        # nine are plotted, however many it reads.
        Valid("""
        import tensorflow as tf

        model = tf.keras.models.load_model("visualizer")
        i = 0
        j = 0
        while j < 9:
            text = sentences[i]
            i += 1
            if len(text.split()) > 10:
                j += 1
            else:
                continue
            model.predict([text])
        """),
        # A course's ensemble: each of its models predicts the test set once.
        Valid("""
        import tensorflow as tf


        def make_ensemble_preds(ensemble_models, data):
            preds = []
            for model in ensemble_models:
                preds.append(model.predict(data))
            return tf.stack(preds)


        models = [tf.keras.models.load_model(path) for path in paths]
        make_ensemble_preds(models, test_data)
        """),
        # alibi's linearity notebook: each layer's loop defines its own `predict_fn` and hands
        # it to the helper; the top-level `predict_fn` below, which predicts, runs once.
        Valid("""
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])


        def measure(predict_fn, batch):
            return predict_fn(batch)


        for batch in batches:
            def predict_fn(x):
                return model(x, training=False)
            measure(predict_fn, batch)


        def predict_fn(x):
            return model.predict(x)


        measure(predict_fn, big_batch)
        """),
        # gym-ddpg-keras's play.py: `make_action` needs `t`, so the first call raises TypeError.
        Valid("""
        import tensorflow as tf

        class Agent:
            def __init__(self):
                self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])

            def make_action(self, obs, t, noise=True):
                return self.model.predict(obs)

        agent = Agent()
        while True:
            action = agent.make_action(obs)
        """),
        # gym-ddpg-keras's train.py: the agent is made with `w_per=False`, so `memorize`
        # never takes its prioritised-replay block.
        Valid("""
        import tensorflow as tf

        class Agent:
            def __init__(self, env, w_per=True):
                self.actor = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                self.with_per = w_per

            def memorize(self, obs):
                if self.with_per:
                    return self.actor.predict(obs)
                return 0

        agent = Agent(env, w_per=False)
        for step in range(10_000):
            agent.memorize(env.reset())
        """),
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
        Valid(
            """
            import tensorflow as tf

            class Base:
                def infer(self, state):
                    return self.model.predict_on_batch(state)

            class Child(Base):
                def __init__(self, path):
                    self.model = tf.keras.models.load_model(path)

            child = Child("policy.keras")
            while True:
                state = child.infer(state)
            """
        ),
        Valid(
            """
            import tensorflow as tf

            class Agent:
                def __init__(self):
                    self.model = tf.keras.models.load_model("agent.keras")

                def act(self, state):
                    return self.model.predict(state)

            agents = [Agent() for _ in range(3)]
            for agent in agents:
                agent.act(state)
            """
        ),
        # cyclegan-cat's training loop (set Z37 of stop 54): an epoch over the dataset
        # through a progress bar, then samples predicted through a helper: one pipeline per
        # epoch. So with `enumerate` over the dataset.
        Valid(
            """
            import tensorflow as tf
            import tqdm

            class CycleGan:
                def __init__(self):
                    self.generator = tf.keras.models.load_model("generator.keras")

                def write_images(self, samples):
                    return self.generator.predict(samples, batch_size=1)

                def train(self, train_dataset: tf.data.Dataset, epochs, samples):
                    train_dataset = train_dataset.batch(4)
                    for epoch in range(epochs):
                        bar = tqdm.tqdm(train_dataset)
                        for images in bar:
                            self.train_step(images)
                        for step, images in enumerate(train_dataset):
                            self.train_step(images)
                        self.write_images(samples)
            """
        ),
        # Episignatures' feature extraction (set Z38 of stop 54): one view of the model per
        # chosen layer of each checkpoint, each predicting the whole matrix once.
        Valid(
            """
            import tensorflow as tf
            from tensorflow.keras.models import Model

            model = tf.keras.models.load_model("model.keras")
            for checkpoint in checkpoints:
                model.load_weights(checkpoint)
                for i in indices:
                    view = Model(inputs=model.input, outputs=model.layers[i].output)
                    save(view.predict(matrix), checkpoint, i)
            """
        ),
        # MultiPlanarUNet's image saver: five images predicted once per epoch.
        Valid(
            """
            import tensorflow as tf

            class SavePredictionImages(tf.keras.callbacks.Callback):
                def __init__(self, images):
                    super().__init__()
                    self.images = images

                def on_epoch_end(self, epoch, logs=None):
                    preds = self.model.predict(self.images)
                    save(preds, epoch)
            """
        ),
        # basic-pitch's visualisation callback (unseen set Z26): a sample of the training
        # and one of the validation data predicted each epoch, two pipelines per epoch.
        Valid(
            """
            import tensorflow as tf

            class VisualizeCallback(tf.keras.callbacks.Callback):
                def on_epoch_end(self, epoch, logs):
                    train_inputs = next(self.train_iter)[0]
                    validation_inputs = next(self.validation_iter)[0]
                    for stage, inputs in [
                        ("train", train_inputs),
                        ("validation", validation_inputs),
                    ]:
                        outputs = self.model.predict(inputs)
                        show(stage, outputs, epoch)
            """
        ),
        Valid(
            """
            import tensorflow as tf

            class FinalScores(tf.keras.callbacks.Callback):
                def __init__(self, x_val):
                    super().__init__()
                    self.x_val = x_val

                def on_train_end(self, logs=None):
                    self.scores = self.model.predict(self.x_val)
            """
        ),
        Valid(
            """
            import tensorflow as tf

            SAMPLE_EVERY = 25
            generator = tf.keras.models.load_model("generator.keras")
            for epoch in range(100):
                train_epoch()
                if epoch % SAMPLE_EVERY == 0:
                    samples = generator.predict(noise)
            """
        ),
        # A notebook's look at one batch: ``take(1)`` gives one element.
        Valid(
            """
            import tensorflow as tf

            model = tf.keras.models.load_model("potatoes.keras")
            test_ds = tf.keras.utils.image_dataset_from_directory("test", batch_size=32)
            for images, labels in test_ds.take(1):
                predictions = model.predict(images)
            """
        ),
        # A test's look at the first batch of an endless generator: the body ends with
        # `break`, so the loop runs once.
        Valid("""
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])


        def batches():
            while True:
                yield tf.ones([8, 4])


        for inputs in batches():
            predictions = model.predict(inputs)
            assert predictions.shape == (8, 1)
            break
        """),
        # A module constant decides the branch in the function: the `predict` never runs
        # (yolov5-tf2-keras's `new_model = True`, unseen set Z5 of stop 47).
        Valid("""
        import tensorflow as tf

        NEW_MODEL = True


        def detect(paths, weights):
            model = tf.keras.models.load_model(weights)
            for path in paths:
                image = tf.io.decode_image(tf.io.read_file(path))
                if not NEW_MODEL:
                    model.predict(image[None])
                else:
                    model(image[None], training=False)
        """),
        # GenerativeModels-tf2.0's VAE (set Z17): each epoch trains over the whole dataset,
        # then plots ten reconstructions through a helper: one pipeline per epoch.
        Valid("""
        import tensorflow as tf

        class VAE:
            def __init__(self):
                self.vae = tf.keras.models.load_model("vae.keras")

            def train(self, x, epochs):
                train_ds = tf.data.Dataset.from_tensor_slices(x).batch(32)
                for epoch in range(epochs):
                    for batch in train_ds:
                        self.train_step(batch)
                    self.plot(batch)

            def plot(self, images):
                return self.vae.predict(images[:10])
        """),
    )
    INVALID = (
        # A loop per image in `on_epoch_end`: as many pipelines per epoch as images.
        Invalid(
            """
            import tensorflow as tf


            class SaveEach(tf.keras.callbacks.Callback):
                def on_epoch_end(self, epoch, logs=None):
                    for image in self.images:
                        save(self.model.predict(image[None]), epoch)
            """,
            7,
            18,
            7,
            49,
            "`self.model.predict` every iteration builds a new `tf.data` pipeline each call; "
            "use `self.model(x, training=False)` or `predict_on_batch`",
        ),
        Invalid(
            """
            import numpy as np
            import tensorflow as tf


            class Agent:
                def sample_action(self, state):
                    return int(np.argmax(self.table[state]))

                def train(self, env, episodes):
                    for episode in range(episodes):
                        state, done = env.reset(), False
                        while not done:
                            state, _, done, _ = env.step(self.sample_action(state))


            class DeepAgent(Agent):
                def __init__(self):
                    self.model = tf.keras.models.load_model("q.keras")

                def sample_action(self, state):
                    return int(np.argmax(self.model.predict(state[None])))

                def train(self, env, episodes):
                    for episode in range(episodes):
                        super().train(env, 1)
            """,
            21,
            30,
            21,
            61,
            "`self.model.predict` through `sample_action` every iteration builds a new "
            "`tf.data` pipeline each call; use `self.model(x, training=False)` or "
            "`predict_on_batch`",
        ),
        Invalid(
            """
            import numpy as np
            import segmentation_models as sm
            import tensorflow as tf


            def build(backbone):
                model = sm.FPN(backbone, classes=6, activation="softmax")
                model.compile(optimizer="adam", loss="categorical_crossentropy")
                return model


            def predict_chips(model, chips):
                for chip in chips:
                    model.predict(np.expand_dims(chip, axis=0))


            predict_chips(build("resnet34"), np.zeros((500, 192, 192, 3)))
            """,
            14,
            9,
            14,
            52,
            "`model.predict` every iteration (500 per call of `predict_chips`) builds a new "
            "`tf.data` pipeline each call; use `model(x, training=False)` or `predict_on_batch`",
        ),
        # A view made once predicts per sample: a pipeline per sample.
        Invalid(
            """
            import tensorflow as tf
            from tensorflow.keras.models import Model

            model = tf.keras.models.load_model("model.keras")
            view = Model(inputs=model.input, outputs=model.layers[3].output)
            for sample in samples:
                save(view.predict(sample[None]))
            """,
            7,
            10,
            7,
            36,
            "`view.predict` every iteration builds a new `tf.data` pipeline each call; use "
            "`view(x, training=False)` or `predict_on_batch`",
        ),
        # A list of batches is no pass over a dataset the loop makes beside the `predict`:
        # each iteration predicts per batch.
        Invalid(
            """
            import tensorflow as tf

            model = tf.keras.models.load_model("model.keras")
            for epoch in range(100):
                for batch in batches:
                    train_step(batch)
                    samples = model.predict(batch)
            """,
            7,
            19,
            7,
            39,
            "`model.predict` every iteration builds a new `tf.data` pipeline each call; use "
            "`model(x, training=False)` or `predict_on_batch`",
        ),
        Invalid(
            """
            import tensorflow as tf

            model = tf.keras.models.load_model("segmenter.keras")
            shown = 0
            for image, mask in test_set:
                if mask.any():
                    output = model.predict(image)
                    shown += 1
                if shown == 5:
                    continue
            """,
            7,
            18,
            7,
            38,
            "`model.predict` every iteration builds a new `tf.data` pipeline each call; use "
            "`model(x, training=False)` or `predict_on_batch`",
        ),
        Invalid(
            """
            import tensorflow as tf

            model = tf.keras.models.load_model("q.keras")
            for step in range(1000):
                batch = memory.sample()
                targets = model.predict(batch, batch_size=64)
            """,
            6,
            15,
            6,
            50,
            "`model.predict` every iteration (1000 in all) builds a new `tf.data` pipeline each "
            "call; use `model(x, training=False)` or `predict_on_batch`",
        ),
        Invalid(
            """
            import tensorflow as tf

            model = tf.keras.models.load_model("model.keras")
            for image in images:
                model.predict(image[None], batch_size=32)
            """,
            5,
            5,
            5,
            46,
            "`model.predict` every iteration builds a new `tf.data` pipeline each call; use "
            "`model(x, training=False)` or `predict_on_batch`",
        ),
        Invalid(
            """
            import tensorflow as tf

            model = tf.keras.models.load_model("model.keras")
            for _ in range(100):
                model.predict(sample, batch_size=1)
            """,
            5,
            5,
            5,
            40,
            "`model.predict` every iteration (100 in all) builds a new `tf.data` pipeline each "
            "call; use `model(x, training=False)` or `predict_on_batch`",
        ),
        # A name the function binds twice is no constant: the first iteration predicts, and
        # nothing tells how many do.
        Invalid(
            """
            import tensorflow as tf


            def detect(paths, weights):
                fast = True
                model = tf.keras.models.load_model(weights)
                for path in paths:
                    image = tf.io.decode_image(tf.io.read_file(path))
                    if not fast:
                        model.predict(image[None])
                    fast = False
            """,
            10,
            13,
            10,
            39,
            "`model.predict` every iteration builds a new `tf.data` pipeline each call; use "
            "`model(x, training=False)` or `predict_on_batch`",
        ),
        # alpha-zero-general's MCTS: a memo keyed by the board the call is given runs its
        # block for every new board, not once.
        Invalid(
            """
            import numpy as np
            import tensorflow as tf


            class MCTS:
                def __init__(self, model):
                    self.model = model
                    self.priors = {}

                def search(self, board):
                    key = board.tobytes()
                    if key not in self.priors:
                        self.priors[key] = self.model.predict(board[None])
                    return self.priors[key]


            mcts = MCTS(tf.keras.models.load_model("net.h5"))
            board = np.zeros((8, 8))
            for move in range(1000):
                mcts.search(board)
                board = np.random.rand(8, 8)
            """,
            13,
            32,
            13,
            63,
            "`self.model.predict` through `search` every iteration (1000 in all) builds a new "
            "`tf.data` pipeline each call; use `self.model(x, training=False)` or "
            "`predict_on_batch`",
        ),
        # DDQN-Keras: the agent takes its model through `*args` (`args[0]`), what its one
        # construction passes first.
        Invalid(
            """
            import tensorflow as tf

            class Agent:
                def __init__(self, *args):
                    self.model = args[0]

                def act(self, state):
                    return self.model.predict(state)

            agent = Agent(tf.keras.models.load_model("q.h5"))
            while True:
                agent.act(env.reset())
            """,
            8,
            16,
            8,
            41,
            "`self.model.predict` through `act` every iteration builds a new `tf.data` "
            "pipeline each call; use `self.model(x, training=False)` or `predict_on_batch`",
        ),
        # elephas's partition predictor (unseen set M of stop 43): the helper is handed the
        # model's `predict` and calls it for each batch.
        Invalid(
            """
            import tensorflow as tf

            def predict_batches(batches, predict_fn):
                return [predict_fn(batch) for batch in batches]

            model = tf.keras.models.load_model("m.h5")
            predict_batches(stream, model.predict)
            """,
            4,
            13,
            4,
            30,
            "`predict_fn` (a model's `predict`) every iteration builds a new `tf.data` "
            "pipeline each call; call the model itself (`model(x, training=False)`) or "
            "`predict_on_batch`",
        ),
        # The counter is not added to before the call when the sentence is short: every
        # iteration may predict, and how many there are is not known.
        Invalid(
            """
            import tensorflow as tf

            model = tf.keras.models.load_model("visualizer")
            i = 0
            j = 0
            while j < 9:
                text = sentences[i]
                i += 1
                if len(text.split()) > 10:
                    j += 1
                model.predict([text])
            """,
            11,
            5,
            11,
            26,
            "`model.predict` every iteration builds a new `tf.data` pipeline each call; use "
            "`model(x, training=False)` or `predict_on_batch`",
        ),
        # The same models predict again every step of the forecast.
        Invalid(
            """
            import tensorflow as tf


            def forecast(models, window, steps):
                out = []
                for _ in range(steps):
                    for model in models:
                        out.append(model.predict(window[None]))
                        window = tf.concat([window[1:], out[-1][0]], 0)
                return out


            models = [tf.keras.models.load_model(path) for path in paths]
            forecast(models, last_window, 30)
            """,
            8,
            24,
            8,
            51,
            "`model.predict` every iteration builds a new `tf.data` pipeline each call; use "
            "`model(x, training=False)` or `predict_on_batch`",
        ),
        # A helper called with a function that predicts, in the second loop: that call is the
        # repetition (the first loop passes another function).
        Invalid(
            """
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])


            def measure(predict_fn, batch):
                return predict_fn(batch)


            def quiet(x):
                return model(x, training=False)


            def predict_fn(x):
                return model.predict(x)


            for batch in batches:
                measure(quiet, batch)

            for batch in batches:
                measure(predict_fn, batch)
            """,
            15,
            12,
            15,
            28,
            "`model.predict` through `measure` every iteration builds a new `tf.data` pipeline "
            "each call; use `model(x, training=False)` or `predict_on_batch`",
        ),
        # textgenrnn's decoding loop: `model` is a model wherever the project shows where it
        # comes from (the view made here); what a library's user passes is left aside.
        Invalid(
            """
            import tensorflow as tf


            def generate(model, max_length=300):
                text = []
                if len(model.inputs) > 1:
                    model = tf.keras.Model(model.inputs[0], model.outputs[1])
                while len(text) < max_length:
                    text.append(model.predict(tf.constant([text[-1:]]))[0])
                return text
            """,
            9,
            21,
            9,
            60,
            "`model.predict` every iteration builds a new `tf.data` pipeline each call; use "
            "`model(x, training=False)` or `predict_on_batch`",
        ),
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
        Invalid(
            """
            import tensorflow as tf

            class Base:
                def infer(self, state):
                    return self.model.predict(state)

            class Child(Base):
                def __init__(self, path):
                    self.model = tf.keras.models.load_model(path)

            child = Child("policy.keras")
            while True:
                state = child.infer(state)
            """,
            5,
            16,
            5,
            41,
            "`self.model.predict` through `infer` every iteration builds a new `tf.data` "
            "pipeline each call; use `self.model(x, training=False)` or `predict_on_batch`",
        ),
        Invalid(
            """
            import tensorflow as tf

            class Agent:
                def __init__(self):
                    self.model = tf.keras.models.load_model("agent.keras")

                def act(self, state):
                    return self.model.predict(state)

            agents = [Agent() for _ in range(3)]
            while not done:
                for agent in agents:
                    state = agent.act(state)
            """,
            8,
            16,
            8,
            41,
            "`self.model.predict` through `act` every iteration builds a new `tf.data` "
            "pipeline each call; use `self.model(x, training=False)` or `predict_on_batch`",
        ),
        Invalid(
            """
            from keras.models import load_model

            classifier = load_model("digits.h5")
            for image in stream:
                label = classifier.predict_classes(image)
            """,
            5,
            13,
            5,
            46,
            "`classifier.predict_classes` every iteration builds a new `tf.data` pipeline "
            "each call; use `classifier(x, training=False)` or `predict_on_batch`",
        ),
        Invalid(
            """
            import tensorflow as tf

            class ValidationScores(tf.keras.callbacks.Callback):
                def __init__(self, x_val):
                    super().__init__()
                    self.x_val = x_val
                    self.scores = []

                def on_train_batch_end(self, batch, logs=None):
                    self.scores.append(self.model.predict(self.x_val))
            """,
            10,
            28,
            10,
            58,
            "`self.model.predict` every batch builds a new `tf.data` pipeline each call; "
            "use `self.model(x, training=False)` or `predict_on_batch`",
        ),
        Invalid(
            """
            import tensorflow as tf

            generator = tf.keras.models.load_model("generator.keras")
            for step in range(20_000):
                train_step()
                if step % 1000 == 0:
                    samples = generator.predict(noise)
            """,
            7,
            19,
            7,
            43,
            "`generator.predict` every 1000th iteration (20 in all) builds a new `tf.data` "
            "pipeline each call; use `generator(x, training=False)` or `predict_on_batch`",
        ),
        # A FastAPI service that keeps its model on the app object: each request predicts.
        Invalid(
            """
            import fastapi
            import tensorflow as tf

            app = fastapi.FastAPI()

            @app.on_event("startup")
            def load():
                app.model = tf.keras.models.load_model("model.keras")

            @app.post("/predict")
            def predict(x):
                return app.model.predict(x)
            """,
            12,
            12,
            12,
            32,
            "`app.model.predict` every request builds a new `tf.data` pipeline each call; use "
            "`app.model(x, training=False)` or `predict_on_batch`",
        ),
        # A function's own loop: its count is per call (the function runs 100 times here),
        # and at most 32 (a slice of a list of unknown length).
        Invalid(
            """
            import tensorflow as tf

            model = tf.keras.models.load_model("model.keras")

            def score_all(items):
                for item in items[:32]:
                    model.predict(item)

            for epoch in range(100):
                score_all(batches)
            """,
            7,
            9,
            7,
            28,
            "`model.predict` every iteration (up to 32 per call of `score_all`) builds a new "
            "`tf.data` pipeline each call; use `model(x, training=False)` or `predict_on_batch`",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        if not context.repeated or context.in_tf_function:
            return
        if context.bounded(context.options.max_loop_iterations):
            return
        if _per_epoch(context) and (
            not context.loops or context.bounded(context.options.max_loop_iterations, context.loops)
        ):
            return
        receiver = method_call(node, keras.PREDICT_METHODS)
        found = context.type_of(receiver) if receiver is not None else None
        if receiver is not None and found is not None and found.where_known(Kind.MODEL):
            assert isinstance(node.func, cst.Attribute)
            method = node.func.attr.value
            if context.defines(found, method):
                return
            if (context.loops or _per_trial(context)) and (
                built_in_loop(context, receiver) or _viewed_in_loop(context, receiver)
            ):
                # A model built each iteration (or each trial of a search) predicts with it
                # once or a few times: that model is the finding (TFL401). A framework's entry
                # point that loads its model each time (a Streamlit rerun) still predicts per
                # request.
                return
            if _each_model_once(context, receiver) or _dataset_pass(context, node):
                return
            if _beside_a_pass(context):
                return
            name = dotted(receiver) or "model"
            report = self.report(node, _message(context, name, method, every_iteration(context)))
            relate_loop(report, context)
            return
        if receiver is None:
            held = [
                e for e in context.effects(node) if e.kind is EffectKind.PREDICT and not e.chain
            ]
            if held and context.runs_eagerly(held[0]):
                if _beside_a_pass(context):
                    return
                # ``predict_fn(x)``, handed ``model.predict``: the call is the ``predict``.
                name = dotted(node.func) or held[0].text
                report = self.report(node, _message(context, name, "", every_iteration(context)))
                relate_loop(report, context)
                return
        predicts = [
            effect
            for effect in effects_through_calls(context, node, EffectKind.PREDICT)
            if context.runs_eagerly(effect)
        ]
        if not predicts or builds_models(context, context.repeated_calls()):
            return
        if _beside_a_pass(context):
            return
        if isinstance(node.func, cst.Attribute) and _each_model_once(context, node.func.value):
            return  # each item's own method, once: `for net in nets: net.predict(x)`
        # Each `predict` of this file has a finding at its own place. Those of other files
        # are reported at the call, all in one finding (its message counts them).
        places: dict[tuple[str, Span], Effect] = {}
        for effect in predicts:
            if effect.path != context.path:
                places.setdefault((effect.path, effect.span), effect)  # one per place
        elsewhere = list(places.values())
        for effect in [e for e in predicts if e.path == context.path] + elsewhere[:1]:
            callee = effect.chain[0].callee.rpartition(".")[2]
            how_often = f"through `{callee}` {every_iteration(context)}"
            others = elsewhere[1:] if effect.path != context.path else []
            if others:
                calls = "call" if len(others) == 1 else "calls"
                how_often = f"(and {len(others)} more `predict` {calls}) {how_often}"
            message = _message(context, effect.text, effect.method, how_often)
            where = f"`{effect.method}` is called here"
            report_through(self, node, effect, message, RelatedRole.MODEL, where, others)


def _viewed_in_loop(context: FileContext, receiver: cst.BaseExpression) -> bool:
    """``receiver`` is a name that the innermost loop around the node assigns a Keras
    ``Model(...)`` it constructs, a view of an existing model's layers included
    (``Model(inputs=base.input, outputs=base.layers[i].output)``, one per layer whose features
    are wanted): a new model each iteration, whose one ``predict`` is its own, as a model
    built anew is (no new layers: TFL401 leaves it alone)."""
    if not context.loops:
        return False
    loop = context.loops[-1]

    def constructs(call: cst.Call) -> bool:
        return context.resolve(call.func) in keras.MODEL_CLASSES

    return any(loop in a.loops for a in assigned_by(context, receiver, constructs))


def _per_epoch(context: FileContext) -> bool:
    """The node is in a Keras callback's method that runs once per epoch of training."""
    entry = context.entry_point
    return entry is not None and entry.unit == "epoch"


def _beside_a_pass(context: FileContext) -> bool:
    """The loop that repeats the current node also makes, each iteration, a pass over a
    dataset that the node is not part of: another loop of its body iterates a `tf.data`
    dataset (an epoch of training), directly, through ``enumerate(dataset)`` or through a
    progress bar over it (``tqdm(dataset)``: the dataset's value). A `predict` per epoch beside an
    epoch of training is one pipeline per pass, as in a callback's `on_epoch_end`. (A `fit` of
    one batch per iteration is no such pass: the loop is the pass, one batch per step.)"""
    loops = context.loops
    if not loops:
        return False
    around = {id(node) for node in context.ancestors}
    for inner in context.iteration_nodes(loops[-1]):
        if id(inner) in around or not isinstance(inner, cst.For):
            continue
        iterated = inner.iter
        while _enumerates(context, iterated):
            assert isinstance(iterated, cst.Call)
            iterated = iterated.args[0].value
        if context.type_of(iterated).where_known(Kind.DATASET):
            return True
    return False


def _enumerates(context: FileContext, node: cst.BaseExpression) -> bool:
    """``node`` is a call of the builtin ``enumerate``: it iterates its argument's items."""
    return (
        isinstance(node, cst.Call)
        and bool(node.args)
        and dotted(node.func) == "enumerate"
        and context.resolve(node.func) is None
    )


def _per_trial(context: FileContext) -> bool:
    """The node is in a search's objective, which the framework calls once per trial (Optuna,
    hyperopt, Ray Tune, Keras Tuner): each trial's model is its own, evaluated once."""
    entry = context.entry_point
    return entry is not None and entry.unit == "trial"


def _dataset_pass(context: FileContext, node: cst.Call) -> bool:
    """``node`` predicts, in a loop, on the same data every iteration and splits it into
    batches (``model.predict(x_test, batch_size=1024)``, ``x_test`` not changed by the loops):
    a pass over a dataset, what ``predict`` is for, whose one pipeline per pass is small beside
    the pass (a direct call would push the whole dataset through in one batch). A batch size
    of 1 says the data is one sample."""
    batch_size = next(
        (arg.value for arg in node.args if arg.keyword and arg.keyword.value == "batch_size"),
        None,
    )
    if batch_size is None or context.type_of(batch_size).ints == frozenset({1}):
        return False
    data = [arg.value for arg in node.args if arg.keyword is None or arg.keyword.value == "x"]
    return bool(data) and all(context.unchanged_by_loops(value) for value in data)


def _each_model_once(context: FileContext, receiver: cst.BaseExpression) -> bool:
    """The one loop around the call iterates models (or objects that hold one) and
    ``receiver`` is its item (``for model in ensemble: preds.append(model.predict(data))``):
    each model predicts once, as one built anew each iteration does. Another loop around it,
    or a framework that repeats the body, repeats the same models' predictions."""
    if len(context.loops) != 1 or context.entry_point is not None:
        return False
    (loop,) = context.loops
    name = dotted(receiver)
    return (
        isinstance(loop, cst.For)
        and name is not None
        and any(isinstance(n, cst.Name) and n.value == name for n in descendants(loop.target))
    )


def _message(context: FileContext, name: str, method: str, how_often: str) -> str:
    """What ``predict`` costs per call: in TensorFlow 2 and Keras 3, a new ``tf.data``
    pipeline; in a TensorFlow 1 project with eager execution turned on (in graph mode the rule
    does not run), only what every Keras ``predict`` does per call, whatever the 1.x release."""
    if context.frameworks.tensorflow_major == 1:
        cost = "checks and batches its input and runs its callbacks anew each call"
    else:
        cost = "builds a new `tf.data` pipeline each call"
    if not method:  # a model's ``predict`` held in ``name`` (``predict_fn(x)``)
        use = "call the model itself (`model(x, training=False)`) or `predict_on_batch`"
        return f"`{name}` (a model's `predict`) {how_often} {cost}; {use}"
    use = f"use `{name}(x, training=False)` or `predict_on_batch`"
    return f"`{name}.{method}` {how_often} {cost}; {use}"
