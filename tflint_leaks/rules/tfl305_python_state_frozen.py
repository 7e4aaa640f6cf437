from __future__ import annotations

from pathlib import Path

import libcst as cst

from tflint_leaks.analysis.nodes import dotted
from tflint_leaks.diagnostics import RelatedRole
from tflint_leaks.rulekit.context import FileContext, Frame, Report
from tflint_leaks.rulekit.facts import EntryPoint, Kind, Write
from tflint_leaks.rulekit.rule import Invalid, Rule, Valid
from tflint_leaks.rules._traced import defining_frame, eager_callback, first_traced

#: What a read of these kinds of values is not about: code (a function, a class, a module, a
#: ``tf.function``, a library callable), not state.
_CODE_KINDS = frozenset(
    {Kind.FUNCTION, Kind.CLASS, Kind.MODULE, Kind.TF_FUNCTION, Kind.LIBRARY, Kind.SUPER}
)
_REMEDY = "keep it in a `tf.Variable` and `assign` it, or pass it in as an argument"
#: For a model or another object: a variable cannot hold it.
_REMEDY_OBJECT = "pass it in as an argument, or make the `tf.function` again when it changes"
_OBJECT_KINDS = frozenset({Kind.MODEL, Kind.INSTANCE, Kind.DATASET, Kind.SESSION})


class PythonStateFrozen(Rule):
    """
    ## What it does
    Flags a read, inside a `tf.function` (or a function or method of its module that only
    `tf.function`s call: it runs only while they trace), of Python state that the program
    assigns again after the function has traced: an attribute of a project class (`self.pl_mean`,
    `self._deterministic`, `agent.epsilon`) or a module global (`LEARNING_RATE`), with a new
    value assigned

    - every iteration of a loop: in the loop's own body, or in a function or method that a
      loop calls (through at most four calls; `related` shows the chain and the loop), unless
      the loop makes the instance anew each iteration (`agent = Agent()` in it) or its call
      rules out the block that assigns (`preprocess_image(path)` never runs `if load_dims:`);
      or
    - in two or more places outside set-up code that may both run (a toggle:
      `self._deterministic = True` for the evaluation rollouts, `False` after them; the two
      blocks of one `if`/`else` set one value per call, and two scripts that no module
      imports, `main.py` and `main_taxi.py`, are two programs); or
    - in a function a framework calls again and again (a Keras callback's
      `on_train_batch_end`, every batch: the entry points of
      `tflint_leaks/analysis/entry_points.py`); or
    - from its own old value, outside set-up code (`self.kl_coef = self.kl_coef * 2`,
      `self.capacity += 1 / 1440`): an update means something only when it runs again and
      again (an annealed or adaptive coefficient), whoever repeats it.

    The finding is the first read of each piece of state in a `tf.function` (a read in a
    function that runs only while it traces counts as its own: one finding per value frozen);
    `related` points at the calls from the loop, the assignment that comes after the trace, and
    the loop.

    Not flagged: state set only in set-up code (a class body, `__init__`, Keras' `build`, a
    method only those call, a module's own code outside its loops, a block that runs only while
    the state is unset: `if self.hessian is None:`) or in a single place that
    nothing repeats (`self.batch_size = 16` once in `train()`, before its loop); an assignment
    that every path assigns again before any code that could read the state runs (`self.y`
    set in both branches of an `if`, then `self.y = tf.cast(self.y, tf.float32)`: only calls
    that run none of the program's code, such as `tf.cast`, come between), and a new value
    computed from one the same call assigned before (that cast is no update); a `tf.Variable`
    updated with `assign` (the graph reads the variable each call); an assignment whose
    function also makes a new `tf.function` (`self.r = r` and then
    `self.step = tf.function(self._step)`: the new function traces with the new value); reads
    outside `tf.function`s, in a `tf.py_function`/`tf.numpy_function` callback (it runs
    eagerly on every call) or under a first-call guard; assignments inside a `tf.function`
    (TFL303's); items stored into a container (`self.config["lr"] = x`), `setattr`, and
    `nonlocal` rebindings (not followed); code Keras traces for you (a model's `call` or
    `train_step`, a loss given to `compile`), which freezes state the same way but is not a
    `tf.function` the linter sees.

    ## Why is this bad?
    A `tf.function` runs its Python body only while it traces. A Python attribute or global it
    reads is looked up then, and its value goes into the graph; the later calls run the graph
    and never look again. Nothing warns: the program runs, with the old learning rate, the old
    path-length mean, the exploration noise of training in the evaluation rollouts.

    Measured with TensorFlow 2.21 (Keras 3.15), a `tf.function` reading `self.x` called three
    times, with `self.x` set to 1, 2, 3 before each call:

    | what `self.x` holds, and how it changes | results | traces |
    | --- | --- | --- |
    | a Python float, rebound | 1, 1, 1 | 1 |
    | the same with `reduce_retracing=True` | 1, 1, 1 | 1 |
    | a Python bool, toggled | the first value's branch, three times | 1 |
    | a `tf.Variable`, `assign`ed | 1, 2, 3 | 1 |
    | a `tf.Variable`, rebound to a new `tf.Variable` | 1, 1, 1 | 1 |
    | an eager tensor, rebound (`tf.constant(s)`, or the result of an op) | 1, 1, 1 | 1 |
    | a NumPy scalar or array, rebound | 1, 1, 1 | 1 |
    | a module global (a float, a tensor, a variable), rebound | 1, 1, 1 | 1 |
    | an item of a list or dict attribute, stored into | 1, 1, 1 | 1 |
    | the value passed as an argument instead | 1, 2, 3 | 3 |
    | the attribute rebound, then a new `tf.function` made | 1, 2, 3 | 1 each |

    A Keras model is state like any other: a `train_step` that reads a global `model`, with
    `model = build()` for each of three folds, trained the first fold's model all along (its
    kernel kept moving) and left the later folds' models at their initial weights, tracing
    once.

    Rebinding a tensor is no different from rebinding a float: the trace captures the tensor
    object it saw (by reference), and a new object bound to the attribute is never seen. Only
    an object changed in place, a `tf.Variable` through `assign`, reaches the graph. A trace
    made later for another reason (a new input shape) reads the current value, so different
    calls of one function can even use different values. Keras traces the same way: a loss
    passed to `compile` that reads a global, or a model's `call` that reads `self.alpha`,
    keeps the first value through `train_on_batch`, `fit`, `evaluate` and `predict` until the
    model is compiled again.

    `tflint-leaks confirm` confirms a finding when the function ran its Python body (and so the
    read) on fewer calls than it was called: the other calls used the value read while
    tracing. It does not watch the state itself, so whether the value really changed between
    calls is what the static finding shows (the assignment in `related`), not a measurement; a
    function that traced on every call read the current value each time (not reproduced).

    ## Example
    ```python
    import tensorflow as tf

    class Agent:
        def __init__(self):
            self.epsilon = 1.0

        @tf.function
        def act(self, q_values):
            explore = tf.random.uniform([]) < self.epsilon
            return tf.where(explore, tf.random.uniform([], 0, 4, tf.int64), tf.argmax(q_values))

        def run(self, env, episodes):
            for episode in range(episodes):
                self.epsilon = max(0.05, self.epsilon * 0.99)
                env.step(self.act(env.observe()))
    ```

    ## Use instead
    ```python
    import tensorflow as tf

    class Agent:
        def __init__(self):
            self.epsilon = tf.Variable(1.0, trainable=False)

        @tf.function
        def act(self, q_values):
            explore = tf.random.uniform([]) < self.epsilon
            return tf.where(explore, tf.random.uniform([], 0, 4, tf.int64), tf.argmax(q_values))

        def run(self, env, episodes):
            for episode in range(episodes):
                self.epsilon.assign(tf.maximum(0.05, self.epsilon * 0.99))
                env.step(self.act(env.observe()))
    ```
    or pass the value in as a tensor argument (`self.act(q_values, tf.constant(epsilon))`:
    a Python number argument would trace once per value instead, TFL101). A model or another
    object cannot live in a variable: pass it in as an argument (a new object traces once more,
    which a new model needs), or make the `tf.function` again when it changes (one per fold).

    ## Guard it
    A test that changes the state between calls and checks what each call computed fails when
    the state is a Python value again (every call then returns the first result);
    `tf_budget.traces` checks that the function still traces once.
    ```python
    import tensorflow as tf


    class Scaler:
        def __init__(self):
            self.scale = tf.Variable(1.0, trainable=False)

        @tf.function
        def __call__(self, x):
            return x * self.scale


    def test_every_call_uses_the_current_scale(tf_budget):
        scaler = Scaler()
        results = []
        with tf_budget.traces(scaler.__call__, at_most=1):
            for scale in [1.0, 2.0, 3.0]:
                scaler.scale.assign(scale)
                results.append(float(scaler(tf.constant(1.0))))
        assert results == [1.0, 2.0, 3.0]
    ```

    ## References
    - [tf.function guide: depending on Python global and free variables](https://www.tensorflow.org/guide/function#depending_on_python_global_and_free_variables)
    - [tf.function guide: rules of tracing](https://www.tensorflow.org/guide/function#rules_of_tracing)
    - [tf.Variable](https://www.tensorflow.org/api_docs/python/tf/Variable)
    """

    VALID = (
        # Keras calls `on_train_end` once: the traced function is not called after it.
        Valid("""
        import tensorflow as tf

        class MovingAverage(tf.keras.callbacks.Callback):
            def __init__(self, tau=0.99):
                super().__init__()
                self.tau = tau

            def on_train_batch_end(self, batch, logs=None):
                self.update_weights()

            def on_train_end(self, logs=None):
                self.tau = 1.0

            @tf.function
            def update_weights(self):
                for w in self.model.weights:
                    w.assign(self.tau * w)
        """),
        # Neural-Style-Transfer: the loop's calls leave out `load_dims`, so they never run the
        # block that sets the size; the one call that does runs before the first trace.
        Valid("""
        import tensorflow as tf

        img_width = img_height = 0
        keep_ratio = True


        def preprocess_image(path, load_dims=False):
            global img_width, img_height
            image = tf.io.decode_image(tf.io.read_file(path))
            if load_dims:
                img_width = 400
                if keep_ratio:
                    img_height = int(img_width * image.shape[1] / image.shape[0])
                else:
                    img_height = 400
            return tf.image.resize(image, [img_width, img_height])


        @tf.function
        def style_loss(style, combination):
            size = img_width * img_height
            return tf.reduce_sum(tf.square(style - combination)) / size


        base = preprocess_image(base_path, True)
        styles = []
        for path in style_paths:
            styles.append(preprocess_image(path))
        for step in range(100):
            loss = style_loss(styles[0], base)
        """),
        # The two blocks of one `if`/`else` set the value once per call: no toggle.
        Valid("""
        import tensorflow as tf

        scale = 1.0


        def configure(args):
            global scale
            if args.fast:
                scale = 0.5
            else:
                scale = 2.0


        @tf.function
        def step(x):
            return x * scale


        configure(parse_args())
        for batch in batches:
            step(batch)
        """),
        Valid("""
        import tensorflow as tf

        class Agent:
            def __init__(self, gamma):
                self.gamma = gamma
                self._setup()

            def _setup(self):
                self.scale = 2.0

            @tf.function
            def target(self, reward, value):
                return reward * self.scale + self.gamma * value

            def learn(self, batches):
                for reward, value in batches:
                    self.target(reward, value)
        """),
        Valid("""
        import tensorflow as tf

        class Agent:
            def __init__(self):
                self.epsilon = tf.Variable(1.0, trainable=False)

            @tf.function
            def act(self, q_values):
                return tf.where(tf.random.uniform([]) < self.epsilon, 0, tf.argmax(q_values))

            def run(self, observations):
                for q_values in observations:
                    self.epsilon.assign(self.epsilon * 0.99)
                    self.act(q_values)
        """),
        Valid("""
        import tensorflow as tf

        class Decoder:
            def __init__(self, r):
                self.set_r(r)

            def set_r(self, r):
                self.r = r
                self.step = tf.function(self._step)

            def _step(self, mel):
                return mel[:, :: self.r]

            def train(self, batches):
                for r in [10, 5, 2, 1]:
                    self.set_r(r)
                    for mel in batches:
                        self.step(mel)
        """),
        Valid("""
        import tensorflow as tf

        class StyleGAN:
            def __init__(self):
                self.pl_mean = tf.zeros([])

            @tf.function
            def train_step(self, images, pl_mean):
                return tf.reduce_mean(images) - pl_mean

            def train(self, batches):
                for images in batches:
                    penalty = self.train_step(images, self.pl_mean)
                    self.pl_mean = 0.99 * self.pl_mean + 0.01 * penalty
        """),
        Valid("""
        import tensorflow as tf

        LEARNING_RATE = 1e-3
        if tf.config.list_physical_devices("GPU"):
            LEARNING_RATE = 1e-2

        @tf.function
        def train_step(x):
            return x * LEARNING_RATE

        for batch in tf.data.Dataset.range(10):
            train_step(tf.cast(batch, tf.float32))
        """),
        Valid("""
        import tensorflow as tf

        class GAN:
            def __init__(self):
                self.batch_size = 8

            @tf.function
            def train_step(self, images):
                return tf.zeros((self.batch_size, 4)) + images

            def train(self, batches):
                self.batch_size = 16
                for images in batches:
                    self.train_step(images)
        """),
        Valid("""
        import tensorflow as tf

        class Detector:
            def __init__(self):
                self.centers = None

            @tf.function
            def loss(self, boxes):
                return tf.reduce_sum(boxes - self.centers)

            def train(self, batches):
                self.centers = tf.split(tf.range(8.0), 2)
                self.centers = tf.concat(self.centers, axis=0)
                for boxes in batches:
                    self.loss(boxes)
        """),
        # spektral's GNNExplainer: `explain_node` sets `self.y_pred` in each branch and casts
        # it at once, before any code that could read it runs; one write, nothing repeats it.
        Valid("""
        import tensorflow as tf

        class Explainer:
            def __init__(self, model):
                self.model = model
                self.y_pred = None

            @tf.function
            def loss(self, mask):
                return tf.reduce_sum(mask * self.y_pred)

            def explain(self, x, a, graph_level, epochs):
                if graph_level:
                    self.y_pred = tf.argmax(self.model([x, a]), axis=1)
                else:
                    self.y_pred = tf.argmax(self.model([x, a[0]]), axis=1)
                self.node_pred = self.y_pred[0]
                self.y_pred = tf.cast(self.y_pred, tf.float32)
                mask = tf.Variable(tf.ones([4]))
                for _ in range(epochs):
                    self.loss(mask)
        """),
        Valid("""
        import tensorflow as tf

        class Noise:
            def __init__(self):
                self.sigma = 0.1

            @tf.function
            def perturb(self, x):
                def scale(values):
                    return values * self.sigma

                return x + tf.numpy_function(scale, [x], tf.float32)

            def anneal(self, batches):
                for x in batches:
                    self.sigma *= 0.99
                    self.perturb(x)
        """),
        Valid("""
        import tensorflow as tf

        class Logger:
            def __init__(self):
                self.iterations = 0

            @tf.function
            def train_step(self, x):
                return tf.reduce_sum(x)

            def train(self, batches):
                for x in batches:
                    loss = self.train_step(x)
                    self.iterations += 1
                    if self.iterations % 100 == 0:
                        tf.print(self.iterations, loss)
        """),
        # An update from the state's own value in set-up code runs once per learner; the
        # update in `observe` is of state the traced function does not read.
        Valid("""
        import tensorflow as tf

        class Learner:
            def __init__(self, base):
                self.kl_coef = base
                self.kl_coef = min(self.kl_coef * 2, 20.0)
                self.seen = 0

            @tf.function
            def learn(self, x):
                return x * self.kl_coef

            def observe(self, x):
                self.seen = self.seen + 1
                return self.learn(x)
        """),
    )
    INVALID = (
        # BYOL's moving-average callback (unseen set L of stop 43): Keras runs
        # `on_train_batch_end` every batch; the traced update keeps the first tau.
        Invalid(
            """
            import tensorflow as tf

            class MovingAverage(tf.keras.callbacks.Callback):
                def __init__(self, tau=0.99):
                    super().__init__()
                    self.tau = tau
                    self.step = 0

                def on_train_batch_end(self, batch, logs=None):
                    self.update_weights()
                    self.tau = 1.0 - 0.01 / (1 + self.step)
                    self.step += 1

                @tf.function
                def update_weights(self):
                    for w in self.model.weights:
                        w.assign(self.tau * w)
            """,
            17,
            22,
            17,
            30,
            "`self.tau` is read while `update_weights` traces: later calls keep the value it "
            "had then, though `on_train_batch_end` assigns it again every batch (Keras calls "
            "it); " + _REMEDY,
        ),
        Invalid(
            """
            import tensorflow as tf

            class StyleGAN:
                def __init__(self):
                    self.pl_mean = 0.0

                @tf.function
                def train_step(self, images):
                    penalty = tf.reduce_mean(images) - self.pl_mean
                    return penalty

                def train(self, batches):
                    for images in batches:
                        penalty = self.train_step(images)
                        self.pl_mean = 0.99 * self.pl_mean + 0.01 * float(penalty)
            """,
            9,
            44,
            9,
            56,
            "`self.pl_mean` is read while `train_step` traces: later calls keep the value it "
            "had then, though `train` assigns it again every iteration of a loop; " + _REMEDY,
        ),
        Invalid(
            """
            import tensorflow as tf

            class Policy:
                def __init__(self):
                    self._deterministic = False

                @tf.function
                def act(self, mean, std):
                    if self._deterministic:
                        return mean
                    return mean + std * tf.random.normal(tf.shape(mean))

                def evaluate(self, env, episodes):
                    self._deterministic = True
                    returns = [env.rollout(self.act) for _ in range(episodes)]
                    self._deterministic = False
                    return returns
            """,
            9,
            12,
            9,
            31,
            "`self._deterministic` is read while `act` traces: later calls keep the value it "
            "had then, though `evaluate` assigns it again in 2 places; " + _REMEDY,
        ),
        Invalid(
            """
            import tensorflow as tf

            LEARNING_RATE = 0.1

            @tf.function
            def train_step(w, grad):
                return w - LEARNING_RATE * grad

            w = tf.ones([3])
            for epoch in range(100):
                LEARNING_RATE = 0.1 * 0.95**epoch
                w = train_step(w, tf.ones([3]))
            """,
            7,
            16,
            7,
            29,
            "`LEARNING_RATE` is read while `train_step` traces: later calls keep the value it "
            "had then, though module-level code assigns it again every iteration of a loop; "
            + _REMEDY,
        ),
        Invalid(
            """
            import tensorflow as tf

            class Learner:
                def __init__(self):
                    self.beta = 0.4

                def set_beta(self, beta):
                    self.beta = beta

                @tf.function
                def weights(self, priorities):
                    return priorities ** -self.beta

            learner = Learner()
            for step in range(1000):
                learner.set_beta(min(1.0, 0.4 + step / 1000))
                learner.weights(tf.ones([32]))
            """,
            12,
            31,
            12,
            40,
            "`self.beta` is read while `weights` traces: later calls keep the value it had "
            "then, though `set_beta` assigns it again every iteration of a loop that calls it; "
            + _REMEDY,
        ),
        Invalid(
            """
            import tensorflow as tf

            class Agent:
                def __init__(self):
                    self.epsilon = 1.0

                @tf.function
                def explore(self, q_values):
                    return tf.random.uniform(tf.shape(q_values)) < self.epsilon

            agent = Agent()
            for episode in range(500):
                agent.epsilon = max(0.05, agent.epsilon * 0.99)
                agent.explore(tf.zeros([4]))
            """,
            9,
            56,
            9,
            68,
            "`self.epsilon` is read while `explore` traces: later calls keep the value it had "
            "then, though module-level code assigns it again every iteration of a loop; " + _REMEDY,
        ),
        Invalid(
            """
            import tensorflow as tf

            temperature = 1.0

            def anneal():
                global temperature
                temperature = max(0.1, temperature * 0.9)

            @tf.function
            def sample(logits):
                return tf.random.categorical(logits / temperature, 1)

            for step in range(100):
                anneal()
                sample(tf.zeros([1, 10]))
            """,
            11,
            43,
            11,
            54,
            "`temperature` is read while `sample` traces: later calls keep the value it had "
            "then, though `anneal` assigns it again every iteration of a loop that calls it; "
            + _REMEDY,
        ),
        Invalid(
            """
            import tensorflow as tf

            class Normalizer:
                def __init__(self):
                    self.mean = tf.zeros([3])

                @tf.function
                def normalize(self, x):
                    return x - self.mean

                def fit(self, batches):
                    for x in batches:
                        self.mean = 0.9 * self.mean + 0.1 * tf.reduce_mean(x, axis=0)
                        self.normalize(x)
            """,
            9,
            20,
            9,
            29,
            "`self.mean` is read while `normalize` traces: later calls keep the value it had "
            "then, though `fit` assigns it again every iteration of a loop; " + _REMEDY,
        ),
        Invalid(
            """
            import tensorflow as tf

            def build():
                return tf.keras.Sequential([tf.keras.layers.Dense(1)])

            model = build()
            optimizer = tf.keras.optimizers.SGD(0.1)

            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))

            for fold in range(5):
                tf.keras.backend.clear_session()
                model = build()
                for x, y in folds[fold]:
                    train_step(x, y)
            """,
            12,
            32,
            12,
            37,
            "`model` is read while `train_step` traces: later calls keep the value it had then, "
            "though module-level code assigns it again every iteration of a loop; "
            + _REMEDY_OBJECT,
        ),
        # A helper that only the `tf.function` calls reads the same state: the same value,
        # frozen by the same trace, is one finding (spektral's GNNExplainer reads
        # `self.comp_graph` in `_train_step` and in the loss it calls).
        Invalid(
            """
            import tensorflow as tf

            class Explainer:
                def __init__(self):
                    self.graph = tf.ones([4])

                @tf.function
                def step(self, mask):
                    return self.loss(mask * self.graph)

                def loss(self, masked):
                    return tf.reduce_sum(masked - self.graph)

                def explain(self, graphs, mask):
                    for graph in graphs:
                        self.graph = graph
                        self.step(mask)
            """,
            9,
            33,
            9,
            43,
            "`self.graph` is read while `step` traces: later calls keep the value it had then, "
            "though `explain` assigns it again every iteration of a loop; " + _REMEDY,
        ),
        # PPO's adaptive KL penalty (xuance): `update` doubles or halves the coefficient after
        # each learning step, with no loop in sight: an update from its own value is meant
        # to run again and again, and the traced `learn` kept the first value.
        Invalid(
            """
            import tensorflow as tf

            class PPOKLLearner:
                def __init__(self, target_kl):
                    self.kl_coef = 0.5
                    self.target_kl = target_kl

                @tf.function
                def learn(self, ratio, advantage, kl):
                    return -tf.reduce_mean(ratio * advantage) + self.kl_coef * kl

                def update(self, ratio, advantage, kl):
                    loss = self.learn(ratio, advantage, kl)
                    if kl > self.target_kl * 1.5:
                        self.kl_coef = self.kl_coef * 2.0
                    return loss
            """,
            10,
            53,
            10,
            65,
            "`self.kl_coef` is read while `learn` traces: later calls keep the value it had "
            "then, though `update` computes a new value from its old one, an update meant to "
            "run again and again; " + _REMEDY,
        ),
    )

    def setup(self) -> None:
        #: (traced function, state) pairs already reported: the ``tf.function``'s qualname (or
        #: node, for a nested one) and the state's text.
        self._seen: set[tuple[object, str]] = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name | cst.Attribute):
            self._check(node)

    def visit_Name(self, node: cst.Name) -> None:
        context = self.context
        index = defining_frame(context, node.value)
        if index != 0 or node.value in context.module_index.imports:
            return  # not a global the module binds (a local, a builtin, an import)
        self._check(node)

    def _check(self, node: cst.Name | cst.Attribute) -> None:
        context = self.context
        traced = first_traced(context)
        if traced is None or context.guarded or not _read(context, node):
            return
        text = dotted(node)
        frame = context.frames[traced]
        function = frame.node
        traces = _traces(frame)
        if text is None or eager_callback(context, traced):
            return
        if all((trace, text) in self._seen for trace in traces):
            return  # the same value, frozen by the same traces, is reported already
        kind = context.type_of(node).kind
        if kind in _CODE_KINDS:
            return
        writes = [w for w in context.writes(node) if not (w.setup or w.traced or w.rebuilds)]
        repeated = next((w for w in writes if w.loop is not None), None)
        framework: EntryPoint | None = None
        if repeated is None:
            # A function a framework calls again and again (Keras, per batch) is a loop's body.
            repeated, framework = next(
                (
                    (w, entry)
                    for w in writes
                    if w.function and (entry := context.framework_calls(w.path, w.function))
                ),
                (None, None),
            )
        if repeated is None:
            repeated = next((w for w in writes if w.accumulates), None)
        if repeated is None and not context.toggled(writes):
            return
        self._seen.update((trace, text) for trace in traces)
        assert isinstance(function, cst.FunctionDef)
        shown = [repeated] if repeated is not None else writes
        report = self.report(
            node,
            f"`{text}` is read while `{function.name.value}` traces: later calls keep the "
            f"value it had then, though {_assigned(context, shown, framework)}; "
            + (_REMEDY_OBJECT if kind in _OBJECT_KINDS else _REMEDY),
        )
        for write in shown:
            _relate(report, write)


def _traces(frame: Frame) -> tuple[object, ...]:
    """The ``tf.function``s whose traces run ``frame``'s body: those calling it, for a function
    that runs only because they do (a read there and one in the ``tf.function`` itself freeze
    the same value in the same trace: one finding); else the frame's own function."""
    if frame.traced_by:
        return frame.traced_by
    return (frame.facts.qualname if frame.facts is not None else frame.node,)


def _read(context: FileContext, node: cst.Name | cst.Attribute) -> bool:
    """``node`` reads a value: not a name being bound, defined or imported, an attribute's
    name or a keyword. A callee is read too (``self.model(x)`` with a model built anew)."""
    parent = context.parent
    if isinstance(parent, cst.Attribute):
        return parent.value is node
    if isinstance(parent, cst.Arg):
        return parent.keyword is not node
    if isinstance(parent, cst.AssignTarget | cst.AugAssign | cst.AnnAssign | cst.Del):
        return parent.target is not node
    if isinstance(parent, cst.For | cst.CompFor):
        return parent.target is not node
    return not isinstance(
        parent,
        cst.FunctionDef | cst.ClassDef | cst.Param | cst.ImportAlias | cst.AsName | cst.NameItem,
    )


def _assigned(context: FileContext, writes: list[Write], framework: EntryPoint | None) -> str:
    """Who assigns the state again, for the message (the places are the finding's related
    locations): "`train` assigns it again every iteration of a loop", "`set_beta` assigns it
    again every iteration of a loop that calls it", "`on_train_batch_end` assigns it again
    every batch (Keras calls it)" (``framework``: the one that calls the writer), "`evaluate`
    assigns it again in 2 places", "`train_mode` and `eval_mode` assign it again"."""
    writers = list(dict.fromkeys(_writer(context, write) for write in writes))
    if len(writers) > 1:
        return f"{', '.join(writers[:-1])} and {writers[-1]} assign it again"
    if len(writes) > 1:
        return f"{writers[0]} assigns it again in {len(writes)} places"
    (write,) = writes
    if framework is not None:
        return (
            f"{writers[0]} assigns it again every {framework.unit} ({framework.framework} calls it)"
        )
    if write.loop is None:  # an update from its own value (``self.c += 1 / 1440``)
        return (
            f"{writers[0]} computes a new value from its old one, an update meant to run "
            "again and again"
        )
    text = f"{writers[0]} assigns it again every iteration of a loop"
    if write.chain:
        through = [f"`{_short(hop.callee)}`" for hop in write.chain[:-1]]
        text += " that calls it" + (f" through {', '.join(through)}" if through else "")
    return text


def _writer(context: FileContext, write: Write) -> str:
    """The function making a write (`` `update` ``, "module-level code"), with its file's name
    when it is not the finding's file."""
    shown = f"`{_short(write.function)}`" if write.function else "module-level code"
    if write.path == context.path:
        return shown
    return f"{shown} of `{Path(write.path).name}`"


def _relate(report: Report, write: Write) -> None:
    """The calls from the loop to the write's function, the write, and the loop."""
    for hop in write.chain:
        report.relate(RelatedRole.CALL, f"calls `{_short(hop.callee)}`", hop.span, hop.path)
    report.relate(RelatedRole.ASSIGNMENT, "assigned again here", write.span, write.path)
    if write.loop is not None:
        report.relate(RelatedRole.LOOP, "repeated by this loop", write.loop, write.loop_path)


def _short(qualname: str) -> str:
    return qualname.rpartition(".")[2]
