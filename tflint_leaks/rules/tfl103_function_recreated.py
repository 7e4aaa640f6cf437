from __future__ import annotations

import libcst as cst

from tflint_leaks.analysis.names import TF_FUNCTION
from tflint_leaks.diagnostics import RelatedRole
from tflint_leaks.rulekit.facts import EffectKind, Kind
from tflint_leaks.rulekit.rule import Invalid, Rule, Valid
from tflint_leaks.rules._calls import every_iteration, relate_loop, report_through
from tflint_leaks.rules._models import kept_element, passes_new_variables, replaces_models

#: Methods that keep their argument in a container (``fns.append(tf.function(f))``).
_KEEPING_METHODS = frozenset({"append", "add", "insert", "setdefault", "extend"})


#: GPflow's ``Scipy`` optimizer, reduced: ``eval_func`` keeps the ``tf.function`` it makes in
#: a cache unless the optimizer is built without one; one optimizer of each kind.
_OPTIMIZERS = """\
import tensorflow as tf

class Scipy:
    def __init__(self, compile_cache_size=2):
        self.compile_cache_size = compile_cache_size
        self.compile_cache = {}

    def eval_func(self, closure):
        if self.compile_cache_size > 0:
            if closure not in self.compile_cache:
                self.compile_cache[closure] = tf.function(closure)
            compiled = self.compile_cache[closure]
        else:
            compiled = tf.function(closure)
        return compiled

    def minimize(self, closure, x):
        return self.eval_func(closure)(x)

cached = Scipy()
plain = Scipy(compile_cache_size=0)
plain.minimize(loss, x)
"""


class FunctionRecreated(Rule):
    """
    ## What it does
    Flags code that makes a new `tf.function` object again and again: `tf.function(...)`
    applied inside a loop, a `@tf.function` def or lambda inside a loop, and a `@tf.function`
    made by a function or method that a loop calls (up to four calls deep, in this file --
    the finding is then on the inner decorator -- or in another module of the project -- then
    on the call in the loop), and the same in a function a framework calls many times (a Keras
    callback's `on_train_batch_end` every batch, a web route every request, a search objective
    every trial: the entry points of `tflint_leaks/analysis/entry_points.py`).

    ## Why is this bad?
    Traces are cached on the `tf.function` object. A new object starts with an empty cache, so
    every iteration traces and compiles the graph again; TensorFlow counts these as retraces of
    the same Python function and warns about "creating @tf.function repeatedly in a loop".
    Graphs are registered globally, so memory grows with each one.

    Not flagged: a `tf.function` nested inside another `tf.function` (it runs only while the
    outer one traces), a factory that is called once, one `tf.function` per item stored in a
    container (`functions[device] = tf.function(impl)`, `fns.append(tf.function(f))`, the
    elements of a comprehension, `[get_tf_model(m) for m in models]`: each is made once and
    kept), loops of a known small trip count (at most `max-python-values`,
    default 5: one function per model of a two-model loop), and code that also builds a new
    model every time it runs, or is passed one the loop makes or takes anew each iteration, or
    that runs in a block which binds a name to a new one each time (a Keras model or layer, a
    `tf.Module` such as a GPflow model; a progressive GAN's models for the next resolution and
    the step made for them): the new function is needed then, as the new variables must be
    traced, and a function made once would keep the model it captured.

    ## Example
    ```python
    import tensorflow as tf

    for epoch in range(epochs):
        @tf.function
        def train_step(x):
            ...
        train_step(x)
    ```

    ## Use instead
    ```python
    import tensorflow as tf

    @tf.function
    def train_step(x):
        ...

    for epoch in range(epochs):
        train_step(x)
    ```

    ## Options
    - `max-python-values`

    ## Guard it
    `tf_budget.traces` (the pytest plugin's `tf_budget` fixture
    ([docs/budget.md](https://github.com/tflint-leaks/tflint-leaks/blob/main/docs/budget.md))) fails
    the test when `train_step` traces more than once, saying that the traces came from new
    `tf.function` objects and naming this rule. Every `tf.function` made from the same Python
    function counts, so one re-created inside the loop fails the test.
    ```python
    import tensorflow as tf


    def step(x):
        return x * 2.0


    train_step = tf.function(step)


    def train(x, epochs):
        for _ in range(epochs):
            train_step(x)


    def test_train_step_traces_once(tf_budget):
        # every tf.function made from `step` counts: one re-created in the loop fails
        with tf_budget.traces(train_step, at_most=1):
            train(tf.ones([4]), epochs=10)
    ```

    ## References
    - [tf.function guide: creating tf.function in a loop](https://www.tensorflow.org/guide/function#depending_on_python_global_and_free_variables)
    - [tensorflow/tensorflow#34905](https://github.com/tensorflow/tensorflow/issues/34905)
    """

    VALID = (
        # A StyleGAN2 trainer's FID (set Z25 of stop 53): the real images' features are
        # computed on the first call only, so the functions that compute them trace once,
        # and one function made there is never called, so it never traces. (The fake
        # images' function, used on every call, is the INVALID twin.)
        Valid("""
        import tensorflow as tf


        class Trainer:
            def __init__(self):
                self.real_cache = False

            def calculate_fid(self, images):
                @tf.function
                def get_inception_features(img):
                    return self.inception(img)

                @tf.function
                def get_real_features(img):
                    return self.strategy.run(get_inception_features, args=(img,))

                @tf.function
                def convert_per_replica_image(images, strategy):
                    return tf.concat(strategy.experimental_local_results(images), axis=0)

                if not self.real_cache:
                    self.real_mu = [get_real_features(img) for img in images]
                    self.real_cache = True
                return self.real_mu

            def train(self, images, iterations):
                for step in range(iterations):
                    self.train_step()
                    if step % 1000 == 0:
                        print(self.calculate_fid(images))
        """),
        # Every call passes its own parse function: the branch that makes one never runs
        # (MetaLearning-TF2.0's cross-domain loaders, set Z22 of stop 52).
        Valid("""
        import tensorflow as tf


        class Loader:
            def parse_function(self):
                @tf.function
                def parse(path):
                    return tf.io.read_file(path)

                return parse

            def dataset(self, paths, parse=None):
                if parse is None:
                    parse = self.parse_function()
                return tf.data.Dataset.from_tensor_slices(paths).map(parse)


        class CrossDomain:
            def __init__(self):
                self.loader = Loader()

            def datasets(self, databases):
                return [self.loader.dataset(db, parse=lambda x: x) for db in databases]

            def train(self, databases):
                for database in databases:
                    self.loader.dataset(database, parse=lambda x: x)
        """),
        # TensorDiffEq's Neumann boundary: one function per derivative model, kept in a list.
        Valid("""
        import tensorflow as tf

        def get_tf_model(model):
            return tf.function(model)

        def derivatives(models):
            return [get_tf_model(model) for model in models]
        """),
        # One function per model, each traced for its own variables (stylegan-tf2's export of
        # a generator per resolution, unseen set P of stop 43).
        Valid("""
        import tensorflow as tf

        def export(models, resolutions):
            for res in resolutions:
                graph = tf.function(models[res])
                graph(tf.zeros([1, 2**res, 2**res, 3]))

        export([tf.keras.Sequential([tf.keras.layers.Dense(4)]) for _ in range(11)], range(2, 11))
        """),
        # A layer that compiles its own `call`, made anew by a helper for each layer of the
        # network being built: each instance's function is its own (TFL104's concern).
        Valid("""
        import tensorflow as tf

        class Scale(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.call = tf.function(self.call)

            def call(self, x):
                return x * 2

        def scale_layer(x):
            return Scale()(x)

        def build(x, n_layers):
            for i in range(n_layers):
                x = scale_layer(x)
            return x
        """),
        # GPflow's Scipy optimizer: `minimize` calls `eval_func`, which keeps the
        # tf.function it makes in a cache unless the optimizer was built without one; this
        # optimizer has one, so the loop traces once (what a construction passes decides the
        # tests of the methods its method calls on `self`).
        Valid(_OPTIMIZERS + "for _ in range(50):\n    cached.minimize(loss, x)\n"),
        Valid("""
        import tensorflow as tf

        def specialize(implementations):
            functions = {}
            compiled = []
            for device, implementation in implementations.items():
                functions[device] = tf.function(implementation, jit_compile=True)
                compiled.append(tf.function(implementation))
            return functions, compiled
        """),
        Valid("""
        import tensorflow as tf

        @tf.function
        def train_step(x):
            return x * 2

        for epoch in range(10):
            train_step(tf.ones([2]))
        """),
        Valid("""
        import tensorflow as tf

        @tf.function
        def outer(x):
            for i in range(3):
                inner = tf.function(lambda y: y + 1)
                x = inner(x)
            return x
        """),
        Valid("""
        import tensorflow as tf

        def make_step(model):
            @tf.function
            def step(x):
                return model(x)
            return step

        step = make_step(lambda x: x)
        for batch in range(100):
            step(tf.ones([1]))
        """),
        Valid("""
        import tensorflow as tf

        def compile_all(fns):
            return [f for f in fns]

        for name in ["a", "b"]:
            print(name)
        compiled = tf.function(compile_all)
        """),
        Valid("""
        def function(fn):
            return fn

        for i in range(10):
            @function
            def step(x):
                return x
        """),
        Valid("""
        import tensorflow as tf

        class Model(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.step = tf.function(self._step)

            def _step(self, x):
                return x
        """),
        Valid(
            """
            import tensorflow as tf

            for name, net in [("small", small), ("large", large)]:
                f = tf.function(net)
                print(name, f(x))
            """
        ),
        Valid(
            """
            import tensorflow as tf

            def evaluate(config):
                model = tf.keras.Sequential([tf.keras.layers.Dense(config)])
                predict = tf.function(model)
                return predict(x)

            for config in configs:
                tf.keras.backend.clear_session()
                evaluate(config)
            """
        ),
        Valid(
            """
            import tensorflow as tf

            class Export(tf.keras.callbacks.Callback):
                def on_train_end(self, logs=None):
                    serve = tf.function(lambda x: self.model(x, training=False))
                    concrete = serve.get_concrete_function(spec)
                    tf.saved_model.save(self.model, "export", signatures=concrete)
            """
        ),
        # A graph trace written once (retinanet's executor): the early return on the state the
        # rest sets makes the `tf.function` on the first call only.
        Valid("""
        import tensorflow as tf


        class Executor:
            def __init__(self, model):
                self.model = model
                self.trace_written = False

            def add_graph_trace(self):
                if self.trace_written:
                    return

                @tf.function
                def forward(image):
                    return self.model(image, training=False)

                tf.summary.graph(forward.get_concrete_function(tf.TensorSpec([1, 8])).graph)
                self.trace_written = True

            def train(self, trials):
                for trial in range(trials):
                    self.add_graph_trace()
                    self.fit_one()
        """),
        # GPflow's notebooks: each iteration optimizes another model (a `tf.Module`) through
        # `Scipy().minimize`, which makes its `tf.function` per call.
        Valid("""
        import tensorflow as tf


        class Model(tf.Module):
            def __init__(self, width):
                self.w = tf.Variable(tf.zeros([width]))

            def loss(self):
                return tf.reduce_sum(self.w ** 2)


        def minimize(loss, variables):
            step = tf.function(lambda: tf.gradients(loss(), variables))
            return step()


        for width in range(4, 20):
            model = Model(width)
            minimize(model.loss, [model.w])

        for model in [Model(2), Model(3), Model(4), Model(5), Model(6), Model(7)]:
            minimize(model.loss, [model.w])
        """),
        # pro_gan_tf2 (set Z17): each depth of a progressive GAN builds new models and makes
        # the training step for them; a step kept across depths would trace for the new
        # models anyway.
        Valid("""
        import tensorflow as tf

        class Generator(tf.keras.Model):
            def __init__(self, depth):
                super().__init__()
                self.blocks = [tf.keras.layers.Dense(8) for _ in range(depth)]

        def make_step():
            @tf.function
            def step(gen, noise):
                return gen(noise)
            return step

        for depth in range(1, 10):
            gen = Generator(depth)
            step = make_step()
            for batch in data:
                step(gen, batch)
        """),
        # progressive_growing_of_gans_tensorflow_2: a new stage replaces the generator and
        # makes the step again, in the same block.
        Valid("""
        import tensorflow as tf

        def train_step(model, batch):
            return model(batch)

        generator = tf.keras.Sequential([tf.keras.layers.Dense(8)])
        step_fn = tf.function(train_step)
        for epoch in range(1000):
            step_fn(generator, batch)
            if (epoch + 1) % 100 == 0:
                generator = tf.keras.Sequential([tf.keras.layers.Dense(8)])
                step_fn = tf.function(train_step)
        """),
    )
    INVALID = (
        # The same trainer's fake images' features: the function is used on every call.
        Invalid(
            """
            import tensorflow as tf


            class Trainer:
                def calculate_fid(self, noise):
                    @tf.function
                    def gen_samples_feats(z):
                        return self.inception(self.generator(z))

                    return [self.strategy.run(gen_samples_feats, args=(z,)) for z in noise]

                def train(self, noise, iterations):
                    for step in range(iterations):
                        self.train_step()
                        if step % 1000 == 0:
                            print(self.calculate_fid(noise))
            """,
            6,
            9,
            6,
            21,
            "`calculate_fid` makes a new `tf.function` on every call and is called in a loop; "
            "each one traces again",
        ),
        Invalid(
            """
            import tensorflow as tf


            class Loader:
                def parse_function(self):
                    @tf.function
                    def parse(path):
                        return tf.io.read_file(path)

                    return parse

                def dataset(self, paths, parse=None):
                    if parse is None:
                        parse = self.parse_function()
                    return tf.data.Dataset.from_tensor_slices(paths).map(parse)


            class CrossDomain:
                def __init__(self):
                    self.loader = Loader()

                def datasets(self, databases):
                    return [self.loader.dataset(db) for db in databases]

                def train(self, databases):
                    for database in databases:
                        self.loader.dataset(database)
            """,
            6,
            9,
            6,
            21,
            "`parse_function` makes a new `tf.function` on every call and is called in a loop; "
            "each one traces again",
        ),
        # The model is replaced on some iterations, the function made on every one.
        Invalid(
            """
            import tensorflow as tf

            def train_step(model, batch):
                return model(batch)

            generator = tf.keras.Sequential([tf.keras.layers.Dense(8)])
            for epoch in range(1000):
                if (epoch + 1) % 100 == 0:
                    generator = tf.keras.Sequential([tf.keras.layers.Dense(8)])
                step_fn = tf.function(train_step)
                step_fn(generator, batch)
            """,
            10,
            15,
            10,
            38,
            "`tf.function(...)` inside a loop makes a new function every iteration; "
            "each one traces again",
        ),
        # rnnt-speech-recognition: the training loop evaluates through a closure it defines.
        Invalid(
            """
            import tensorflow as tf


            def run_evaluate(model, dataset):
                @tf.function
                def eval_step(x):
                    return model(x)

                for x in dataset:
                    eval_step(x)


            def run_training(model, dataset, epochs):
                def checkpoint_model():
                    run_evaluate(model, dataset)

                for epoch in range(epochs):
                    checkpoint_model()
            """,
            5,
            5,
            5,
            17,
            "`run_evaluate` makes a new `tf.function` on every call and is called in a loop; "
            "each one traces again",
        ),
        # The same optimizer built without a cache: a new tf.function per call.
        Invalid(
            _OPTIMIZERS + "for _ in range(50):\n    plain.minimize(loss, x)\n",
            14,
            24,
            14,
            44,
            "`eval_func` makes a new `tf.function` on every call and is called in a loop; each "
            "one traces again",
        ),
        # The same model every iteration: one function would do.
        Invalid(
            """
            import tensorflow as tf


            class Model(tf.Module):
                def __init__(self, width):
                    self.w = tf.Variable(tf.zeros([width]))

                def loss(self):
                    return tf.reduce_sum(self.w ** 2)


            def minimize(loss, variables):
                step = tf.function(lambda: tf.gradients(loss(), variables))
                return step()


            model = Model(3)
            for step in range(100):
                minimize(model.loss, [model.w])
            """,
            13,
            12,
            13,
            64,
            "`minimize` makes a new `tf.function` on every call and is called in a loop; "
            "each one traces again",
        ),
        Invalid(
            """
            import tensorflow as tf

            for epoch in range(10):
                @tf.function
                def train_step(x):
                    return x * 2
                train_step(tf.ones([2]))
            """,
            4,
            5,
            4,
            17,
            "`@tf.function` inside a loop makes a new `train_step` every iteration; each one "
            "traces again",
        ),
        Invalid(
            """
            import tensorflow as tf

            def evaluate(fns, x):
                results = []
                for fn in fns:
                    results.append(tf.function(fn)(x))
                return results
            """,
            6,
            24,
            6,
            39,
            "`tf.function(...)` inside a loop makes a new function every iteration; each one "
            "traces again",
        ),
        Invalid(
            """
            import tensorflow as tf

            def make_step(scale):
                @tf.function(reduce_retracing=True)
                def step(x):
                    return x * scale
                return step

            for trial in range(20):
                step = make_step(trial)
                step(tf.ones([1]))
            """,
            4,
            5,
            4,
            40,
            "`make_step` makes a new `tf.function` on every call and is called in a loop; each "
            "one traces again",
        ),
        Invalid(
            """
            import tensorflow as tf

            class Logger(tf.keras.callbacks.Callback):
                def on_train_batch_end(self, batch, logs=None):
                    summarize = tf.function(lambda x: tf.reduce_mean(x))
                    summarize(tf.ones([3]))
            """,
            5,
            21,
            5,
            61,
            "the Keras callback `on_train_batch_end` runs every batch; the `tf.function` made "
            "here is new each time and traces again",
        ),
        Invalid(
            """
            import tensorflow as tf

            scores = [tf.function(lambda x: x * k)(1.0) for k in range(8)]
            """,
            3,
            11,
            3,
            39,
            "`tf.function(...)` inside a loop makes a new function every iteration; each one "
            "traces again",
        ),
        Invalid(
            """
            import tensorflow as tf

            class Evaluator:
                def __init__(self, model):
                    self.model = model

                def evaluate(self, batch):
                    @tf.function
                    def step(x):
                        return self.model(x, training=False)

                    return step(batch)

                def run(self, batches):
                    return [self.evaluate(batch) for batch in batches]
            """,
            8,
            9,
            8,
            21,
            "`evaluate` makes a new `tf.function` on every call and is called in a loop; "
            "each one traces again",
        ),
        Invalid(
            """
            import tensorflow as tf
            from fastapi import FastAPI

            app = FastAPI()
            MODEL = tf.keras.models.load_model("model.keras")

            @app.post("/embed")
            def embed(x: list[float]):
                encode = tf.function(lambda t: MODEL(t, training=False))
                return encode(tf.constant([x])).numpy().tolist()
            """,
            9,
            14,
            9,
            61,
            "the FastAPI route `embed` runs every request; the `tf.function` made here is "
            "new each time and traces again",
        ),
    )

    def _repeated(self) -> bool:
        """The node's repetition (loops of this scope, or an entry point) runs it more than
        ``max-python-values`` times (a loop over two models makes two functions: two traces,
        nothing grows)."""
        context = self.context
        return context.repeated and not context.bounded(context.options.max_python_values)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        context = self.context
        if context.in_tf_function:
            return
        decorator = next((d for d in node.decorators if context.is_tf_function_decorator(d)), None)
        if decorator is None:
            return
        if self._repeated() and context.loops:
            if replaces_models(context):
                return  # a function for the models this iteration makes
            report = self.report(
                decorator,
                f"`@tf.function` inside a loop makes a new `{node.name.value}` every iteration; "
                "each one traces again",
            )
            relate_loop(report, context)
        elif self._repeated():
            relate_loop(self.report(decorator, self._entry_message()), context)

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        if context.in_tf_function:
            return
        creates = context.is_tf_function_call(node) or self._is_decorator_factory_call(node)
        if creates and self._kept():
            return
        if creates and not self._repeated():
            return
        if creates and (passes_new_variables(context, node) or replaces_models(context)):
            return  # ``tf.function(models[res])``: each model needs its own trace
        if creates and context.loops:
            report = self.report(
                node,
                "`tf.function(...)` inside a loop makes a new function every iteration; "
                "each one traces again",
            )
            relate_loop(report, context)
        elif creates:
            relate_loop(self.report(node, self._entry_message()), context)
        elif self._repeated() and not (self._kept() and self._returns_function(node)):
            self._factory_call(node)

    def _kept(self) -> bool:
        """The call's result is stored, one per item, where it outlives the iteration:
        ``functions[device] = tf.function(impl)``, ``fns.append(tf.function(f))``, the element
        of a list, set or dict comprehension (``[get_tf_model(m) for m in models]``)."""
        ancestors = self.context.ancestors
        parent = ancestors[-2] if len(ancestors) > 1 else None
        if kept_element(self.context):
            return True
        if isinstance(parent, cst.Assign):
            return any(isinstance(target.target, cst.Subscript) for target in parent.targets)
        keeper = ancestors[-3] if len(ancestors) > 2 else None
        return (
            isinstance(parent, cst.Arg)
            and isinstance(keeper, cst.Call)
            and isinstance(keeper.func, cst.Attribute)
            and keeper.func.attr.value in _KEEPING_METHODS
        )

    def _returns_function(self, node: cst.Call) -> bool:
        """The call returns the ``tf.function`` it makes (``get_tf_model(model)``), not what
        calling it gives."""
        return self.context.type_of(node).where_known(Kind.TF_FUNCTION)

    def _is_decorator_factory_call(self, node: cst.Call) -> bool:
        """``tf.function(input_signature=...)(fn)``."""
        inner = node.func
        return (
            isinstance(inner, cst.Call)
            and all(arg.keyword is not None for arg in inner.args)
            and self.context.resolve(inner.func) == TF_FUNCTION
        )

    def _factory_call(self, node: cst.Call) -> None:
        """A call in a loop to project code that creates a ``tf.function`` each time it runs
        (a factory, a method that defines one, through up to four calls, in any file). Not when
        that code also builds a new model every time: the new function is needed then."""
        if not self.context.calls_project_code(node, constructors=False):
            return  # a class that makes tf.functions per instance is TFL104's
        effects = self.context.effects(node)
        if any(effect.kind is EffectKind.BUILD_MODEL for effect in effects):
            return
        if passes_new_variables(self.context, node) or replaces_models(self.context):
            return  # a new model (or `tf.Module`) each iteration: a new trace is needed
        for effect in effects:
            if effect.kind is not EffectKind.CREATE_TF_FUNCTION or not effect.chain:
                continue
            if any(hop.callee.endswith(".__init__") for hop in effect.chain):
                continue  # each new instance's own function, through a helper too: TFL104's
            name = effect.text.rpartition(".")[2]
            where = "in a loop" if self.context.loops else every_iteration(self.context)
            message = (
                f"`{name}` makes a new `tf.function` on every call and is called {where}; "
                "each one traces again"
            )
            if effect.path != self.context.path:
                message = (
                    f"`{name}` makes a new `tf.function` on every call; calling it {where} "
                    f"traces again {every_iteration(self.context, counted=False)}"
                )
            report_through(self, node, effect, message, RelatedRole.TF_FUNCTION, "created here")

    def _entry_message(self) -> str:
        """A ``tf.function`` made in the body of an entry point a framework calls many times."""
        context = self.context
        entry = context.entry_point
        frame = context.enclosing_function()
        assert entry is not None and frame is not None and isinstance(frame.node, cst.FunctionDef)
        return (
            f"{entry.what} `{frame.node.name.value}` runs {every_iteration(context)}; the "
            "`tf.function` made here is new each time and traces again"
        )
