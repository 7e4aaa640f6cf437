from __future__ import annotations

import libcst as cst

from tflint_leaks.analysis import keras
from tflint_leaks.analysis.loops import LoopNode
from tflint_leaks.analysis.names import TF_VARIABLE
from tflint_leaks.analysis.nodes import dotted, own_nodes
from tflint_leaks.rulekit.context import FileContext
from tflint_leaks.rulekit.facts import Kind
from tflint_leaks.rulekit.rule import Invalid, Rule, Valid
from tflint_leaks.rules._calls import relate_loop, source_of
from tflint_leaks.rules._models import method_call
from tflint_leaks.rules._tapes import mentions

#: List methods that keep their argument.
_KEEPS = frozenset({"append", "extend", "insert"})
#: Methods of a Keras model that Keras runs inside a ``tf.function`` (their loops unroll while
#: it traces).
_KERAS_TRACED = frozenset({"train_step", "test_step", "predict_step", "call"})


class StepTensorsKept(Rule):
    """
    ## What it does
    Flags a training loop that keeps tensors of every step in a container that outlives the
    loop: the gradients (`tape.gradient(...)`, `jacobian`), a Keras model's outputs
    (`model(x)`), or a new `tf.Variable`, appended (`append`, `extend`, `insert`, `+= [...]`)
    to a list, or stored under a key that changes every iteration, when the list is made before
    the loop (or is an attribute, a parameter or a global) and is not made anew inside it. A
    training loop is one that takes a step every iteration (`tape.gradient`,
    `apply_gradients`, `minimize`, `fit`, `train_on_batch`) with no known small trip count.

    ## Why is this bad?
    An eager tensor holds its memory (on the GPU, for a GPU run) for as long as something
    refers to it. Gradients are the size of the model, and a batch's outputs the size of the
    batch: keeping them for every step makes the memory grow with the number of steps until
    the run dies (an out-of-memory error hours in), although only a number (a norm, a loss
    value) was needed.

    Where the line is drawn: only values known to hold a model's or a batch's worth of memory
    are flagged. Not flagged: losses and metrics (a scalar per step is small, and appending one
    per epoch is a loss curve), values converted before they are kept (`.numpy()`, `float()`,
    `.item()`, `np.array(...)`), a metric's `update_state(...)`, values stored under a fixed
    key or attribute (overwritten each step: one alive at a time), lists made anew each
    iteration (per episode, per epoch), loops of a known small trip count (at most
    `max-loop-iterations`, default 10), loops that take no training step (collecting
    predictions is what an inference loop is for), values returned by a function or a
    `tf.function` (their size is not known), code that runs only while a `tf.function` traces
    (including a Keras model's `train_step`), and graph mode (a session returns NumPy values).

    ## Example
    ```python
    import tensorflow as tf

    grad_history = []
    for x, y in dataset:
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        grad_history.append(grads)
    ```

    ## Use instead
    ```python
    import tensorflow as tf

    grad_norms = []
    for x, y in dataset:
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        grad_norms.append(float(tf.linalg.global_norm(grads)))
    ```

    ## Options
    - `max-loop-iterations`

    ## Guard it
    `tf_budget.iterations` (the pytest plugin's `tf_budget` fixture
    ([docs/budget.md](https://github.com/tflint-leaks/tflint-leaks/blob/main/docs/budget.md))) takes
    the batches and hands them to the training loop, sampling between steps: keeping each step's
    gradients fails the test, naming `live eager tensors` and their growth per step.
    ```python
    import tensorflow as tf

    w = tf.Variable(tf.ones([4, 1]))
    opt = tf.keras.optimizers.SGD(0.01)


    def train(batches):
        grad_norms = []
        for x in batches:
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.matmul(x, w) ** 2)
            grads = tape.gradient(loss, [w])
            opt.apply_gradients(zip(grads, [w]))
            grad_norms.append(float(tf.linalg.global_norm(grads)))
        return grad_norms


    def test_training_keeps_no_step_tensors(tf_budget):
        train(tf_budget.iterations([tf.ones([8, 4])] * 20, warmup=3))
    ```

    ## References
    - [Writing a training loop from scratch](https://www.tensorflow.org/guide/keras/writing_a_training_loop_from_scratch)
    - [tf.keras.metrics.Mean: accumulate a value over steps](https://www.tensorflow.org/api_docs/python/tf/keras/metrics/Mean)
    """

    VALID = (
        Valid("""
        import tensorflow as tf

        losses = []
        for x, y in dataset:
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            losses.append(loss)
        """),
        Valid("""
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        norms, outputs = [], []
        for x, y in dataset:
            with tf.GradientTape() as tape:
                logits = model(x, training=True)
                loss = loss_fn(y, logits)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            norms.append(float(tf.linalg.global_norm(grads)))
            outputs.append(logits.numpy())
            mean_grad.update_state(grads[0])
        """),
        Valid("""
        import tensorflow as tf

        class Trainer:
            def fit(self, dataset):
                logs = {}
                for x, y in dataset:
                    with tf.GradientTape() as tape:
                        loss = self.loss(y, self.model(x))
                    grads = tape.gradient(loss, self.model.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
                    logs["grads"] = grads
                    self.last_grads = grads
        """),
        Valid("""
        import tensorflow as tf

        for episode in range(1000):
            episode_grads = []
            for k in range(4):
                with tf.GradientTape() as tape:
                    loss = heads[k](batch)
                episode_grads.append(tape.gradient(loss, variables))
            optimizer.apply_gradients(zip(average(episode_grads), variables))
        """),
        Valid("""
        import tensorflow as tf

        model = tf.keras.models.load_model("model.keras")
        predictions = []
        for x in test_dataset:
            predictions.append(model(x, training=False))
        result = tf.concat(predictions, axis=0)
        """),
        Valid("""
        import tensorflow as tf

        tf.compat.v1.disable_eager_execution()
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        history = []
        for x, y in batches:
            model.train_on_batch(x, y)
            history.append(model(x))
        """),
        Valid("""
        import tensorflow as tf

        accumulated = None
        for x, y in dataset:
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x))
            grads = tape.gradient(loss, model.trainable_variables)
            if accumulated is None:
                accumulated = grads
            else:
                accumulated = [a + g for a, g in zip(accumulated, grads)]
        optimizer.apply_gradients(zip(accumulated, model.trainable_variables))
        """),
        Valid("""
        import tensorflow as tf

        class SharpnessAware(tf.keras.Model):
            def train_step(self, data):
                x, y = data
                predictions = []
                for x_part, y_part in zip(tf.split(x, 4), tf.split(y, 4)):
                    with tf.GradientTape() as tape:
                        pred = self(x_part, training=True)
                        loss = self.compiled_loss(y_part, pred)
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    predictions.append(pred)
                self.compiled_metrics.update_state(y, tf.concat(predictions, 0))
                return {m.name: m.result() for m in self.metrics}
        """),
        Valid("""
        import tensorflow as tf

        frames = []
        window = env.reset()
        while True:
            with tf.GradientTape() as tape:
                loss = agent.loss(window)
            grads = tape.gradient(loss, agent.trainable_variables)
            optimizer.apply_gradients(zip(grads, agent.trainable_variables))
            window = window[1:]
            frames.append(window)
        """),
        Valid(
            """
            import tensorflow as tf

            def gradients(model, dataset, optimizer):
                collected = []
                for x, y in dataset:
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(model(x) - y)
                    grads = tape.gradient(loss, model.trainable_variables)
                    optimizer.apply_gradients(zip(grads, model.trainable_variables))
                    collected.append(grads)
                return collected
            """
        ),
        Valid(
            """
            import tensorflow as tf

            def outputs(model, dataset):
                found = []
                for x, y in dataset:
                    model.train_on_batch(x, y)
                    found.append(model(x))
                return tf.concat(found, axis=0)
            """
        ),
    )
    INVALID = (
        Invalid(
            """
            import tensorflow as tf

            grad_history = []
            for epoch in range(100):
                for x, y in dataset:
                    with tf.GradientTape() as tape:
                        loss = loss_fn(y, model(x, training=True))
                    grads = tape.gradient(loss, model.trainable_variables)
                    optimizer.apply_gradients(zip(grads, model.trainable_variables))
                    grad_history.append(grads)
            """,
            10,
            9,
            10,
            35,
            "`grad_history.append(grads)` keeps the gradients of every training step alive "
            "in `grad_history`, which outlives the loop: memory grows with every iteration; "
            "keep `.numpy()` or a reduced value (`float(...)`), or update a metric",
        ),
        Invalid(
            """
            import tensorflow as tf

            class Trainer:
                def __init__(self):
                    self.model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                    self.outputs = []

                def train(self, dataset):
                    for x, y in dataset:
                        with tf.GradientTape() as tape:
                            logits = self.model(x, training=True)
                            loss = self.loss(y, logits)
                        grads = tape.gradient(loss, self.model.trainable_variables)
                        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
                        self.outputs.append(logits)
            """,
            15,
            13,
            15,
            40,
            "`self.outputs.append(logits)` keeps the model's outputs of every training step "
            "alive in `self.outputs`, which outlives the loop: memory grows with every "
            "iteration; keep `.numpy()` or a reduced value (`float(...)`), or update a metric",
        ),
        Invalid(
            """
            import tensorflow as tf

            def train(model, dataset, log):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                for step, (x, y) in enumerate(dataset):
                    model.train_on_batch(x, y)
                    log[step] = model(x)
            """,
            7,
            9,
            7,
            29,
            "`log[step] = ...` keeps the model's outputs of every training step alive in "
            "`log`, which outlives the loop: memory grows with every iteration; keep `.numpy()` "
            "or a reduced value (`float(...)`), or update a metric",
        ),
        Invalid(
            """
            import tensorflow as tf

            slots = []
            while not done:
                with tf.GradientTape() as tape:
                    loss = compute_loss()
                grads = tape.gradient(loss, variables)
                slots += [tf.Variable(tf.zeros_like(g)) for g in grads]
                optimizer.apply_gradients(zip(grads, variables))
            """,
            8,
            5,
            8,
            60,
            "`slots += ...` keeps a new `tf.Variable` of every training step alive in "
            "`slots`, which outlives the loop: memory grows with every iteration; keep "
            "`.numpy()` or a reduced value (`float(...)`), or update a metric",
        ),
        Invalid(
            """
            import tensorflow as tf

            def serve(model, stream, optimizer):
                history = []
                while True:
                    x, y = next(stream)
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(model(x) - y)
                    grads = tape.gradient(loss, model.trainable_variables)
                    optimizer.apply_gradients(zip(grads, model.trainable_variables))
                    history.append(grads)
                return history
            """,
            11,
            9,
            11,
            30,
            "`history.append(grads)` keeps the gradients of every training step alive in "
            "`history`, which outlives the loop: memory grows with every iteration; keep "
            "`.numpy()` or a reduced value (`float(...)`), or update a metric",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        receiver = method_call(node, _KEEPS)
        if receiver is None or not node.args:
            return
        kept = node.args[-1].value
        self._kept(node, receiver, kept, f"`{source_of(node)}`")

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, cst.AddAssign):
            self._kept(node, node.target, node.value, f"`{source_of(node.target)} += ...`")

    def visit_Assign(self, node: cst.Assign) -> None:
        context = self.context
        if len(node.targets) != 1 or not context.loops:
            return
        target = node.targets[0].target
        if not isinstance(target, cst.Subscript) or len(target.slice) != 1:
            return
        key = target.slice[0].slice
        if isinstance(key, cst.Index) and context.evaluator().value(key.value).varies:
            shown = f"`{source_of(target.value)}[{source_of(key.value)}] = ...`"
            self._kept(node, target.value, node.value, shown)

    def _kept(
        self,
        node: cst.CSTNode,
        container: cst.BaseExpression,
        value: cst.BaseExpression,
        shown: str,
    ) -> None:
        context = self.context
        name = dotted(container)
        if name is None or not context.loops or context.in_tf_function or _keras_traced(context):
            return
        loops = _accumulating(context, name)
        if not loops or context.bounded(context.options.max_loop_iterations, loops):
            return
        if _consumed_after(context, name, loops[0]) and not _endless(loops[0]):
            return  # the results are what the function is for: returned or joined afterwards
        what = _holds(context, value, loops[-1])
        if what is None or not _trains(context, loops[-1]):
            return
        report = self.report(
            node,
            f"{shown} keeps {what} of every training step alive in `{name}`, which outlives "
            "the loop: memory grows with every iteration; keep `.numpy()` or a reduced value "
            "(`float(...)`), or update a metric",
        )
        relate_loop(report, context)


def _keras_traced(context: FileContext) -> bool:
    """The code is a Keras model's ``train_step`` (or ``call``...), which Keras traces."""
    function = context.enclosing_function()
    return (
        function is not None
        and isinstance(function.node, cst.FunctionDef)
        and function.node.name.value in _KERAS_TRACED
        and context.in_keras_class()
    )


def _accumulating(context: FileContext, name: str) -> list[LoopNode]:
    """The enclosing loops across whose iterations ``name`` lives on: those that do not make
    it anew (an assignment that does not read it, inside the loop), outermost first."""
    resets = [
        a
        for a in context.scope_facts().assignments.get(name, ())
        if not a.augmented and not (a.value is not None and mentions(a.value, name))
    ]
    return [loop for loop in context.loops if not any(loop in a.loops for a in resets)]


#: Calls that join a list of tensors into one value: the list was collected for them.
_JOINS = frozenset(
    {
        "tensorflow.concat",
        "tensorflow.stack",
        "tensorflow.add_n",
        "tensorflow.reduce_mean",
        "tensorflow.reduce_sum",
        "numpy.concatenate",
        "numpy.stack",
        "numpy.vstack",
        "numpy.hstack",
        "numpy.mean",
        "numpy.array",
    }
)


def _consumed_after(context: FileContext, name: str, loop: LoopNode) -> bool:
    """The function returns the list, or joins it into one value (``tf.concat(outputs)``),
    outside the loop: the results are wanted, and memory for them is what the caller asked."""
    scope = context.frame.node
    inside = {id(node) for node in own_nodes(loop)}
    for node in own_nodes(scope):
        if id(node) in inside:
            continue
        if isinstance(node, cst.Return) and node.value is not None and mentions(node.value, name):
            return True
        if (
            isinstance(node, cst.Call)
            and context.resolve(node.func) in _JOINS
            and any(dotted(arg.value) == name for arg in node.args)
        ):
            return True
    return False


def _endless(loop: LoopNode) -> bool:
    """``while True:`` with no ``break`` of its own: nothing after it ever runs."""
    if not isinstance(loop, cst.While):
        return False
    test = loop.test
    constant = (isinstance(test, cst.Name) and test.value == "True") or (
        isinstance(test, cst.Integer) and test.value != "0"
    )
    return constant and not any(isinstance(node, cst.Break) for node in _own_statements(loop))


def _own_statements(loop: cst.While) -> list[cst.CSTNode]:
    """The nodes of a loop's body that belong to it, not to a nested loop (a ``break`` there
    ends only the nested loop)."""
    found: list[cst.CSTNode] = []
    stack: list[cst.CSTNode] = [loop.body]
    while stack:
        node = stack.pop()
        found.append(node)
        if not isinstance(node, cst.For | cst.While | cst.FunctionDef | cst.ClassDef):
            stack.extend(node.children)
    return found


def _trains(context: FileContext, loop: LoopNode) -> bool:
    """The loop takes a training step every iteration."""
    return any(
        method_call(call, keras.TRAINING_STEPS) is not None for call in context.loop_calls(loop)
    )


def _holds(
    context: FileContext,
    value: cst.BaseExpression,
    loop: LoopNode,
    seen: frozenset[str] = frozenset(),
) -> str | None:
    """What step-sized tensors ``value`` holds, when it is known to: "the gradients", "the
    model's outputs", "a new `tf.Variable`"; None otherwise (a loss, a converted value, an
    unknown call's result). ``seen``: the names being followed (``x = x[0]`` ends there)."""
    if isinstance(value, cst.Subscript):
        return _holds(context, value.value, loop, seen)
    if isinstance(value, cst.Tuple | cst.List):
        return next(
            (w for e in value.elements if (w := _holds(context, e.value, loop, seen)) is not None),
            None,
        )
    if isinstance(value, cst.ListComp):
        return _holds(context, value.elt, loop, seen)
    if isinstance(value, cst.Name):
        if value.value in seen:
            return None
        # Every value the loop binds the name to must hold step-sized tensors.
        inner = seen | {value.value}
        found = [
            _holds(context, bound, loop, inner)
            for a in context.scope_facts().assignments.get(value.value, ())
            if loop in a.loops and (bound := a.value) is not None and bound is not value
        ]
        return found[0] if found and all(found) else None
    if not isinstance(value, cst.Call):
        return None
    receiver = method_call(value, keras.GRADIENT_METHODS)
    if receiver is not None and context.type_of(receiver).kind is Kind.TAPE:
        return "the gradients"
    if context.is_model(value.func):
        return "the model's outputs"
    if context.resolve(value.func) == TF_VARIABLE:
        return "a new `tf.Variable`"
    return None
