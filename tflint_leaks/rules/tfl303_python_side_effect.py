from __future__ import annotations

import libcst as cst

from tflint_leaks.analysis.names import TF_VARIABLE
from tflint_leaks.analysis.nodes import descendants, dotted
from tflint_leaks.rulekit.context import FileContext
from tflint_leaks.rulekit.facts import Kind
from tflint_leaks.rulekit.rule import Invalid, Rule, Valid
from tflint_leaks.rules._traced import asserted, defining_frame, first_traced, traced_once

#: Modules whose calls return a different value (or act) every time: frozen at trace time.
_IMPURE_PREFIXES = ("random.", "numpy.random.", "time.", "datetime.datetime.now")


class PythonSideEffect(Rule):
    """
    ## What it does
    Flags Python-side effects inside a `tf.function`: Python state updated on `self`
    (`self.count += 1`, `self.last_loss = loss`), assignment to a `global` or `nonlocal` name,
    impure Python calls (`random.*`, `np.random.*`, `time.*`, `datetime.now()`), and `next(it)`
    on a Python iterator or generator made outside the function (`iter(batches)` over a list,
    a generator expression, a generator function's result, `itertools.cycle(...)`, `zip(...)`);
    also in the functions and methods of the module that run only while a `tf.function`
    traces (a helper only `tf.function`s call, the method a subclass implements for its base
    class's `tf.function`).

    ## Why is this bad?
    Python code in a `tf.function` runs only while it traces. The counter is incremented once
    per trace instead of once per call; the random number or timestamp is computed once and
    baked into the graph as a constant, so every call sees the same value; an attribute or global
    set to a tensor holds a symbolic tensor (and its graph) that cannot be used outside; `next`
    takes one element while tracing and every call reuses it (three calls return the first
    value three times), while the iterator silently advances once per trace.

    Not flagged: `tf.random.*`, `tf.print`, `variable.assign(...)` (also bound to the variable's
    own name, `self.lam = self.lam.assign_add(step)`: the update returns the variable, and runs
    on every call), an attribute set to a model's own variables or layers (`self.variables =
    self.model.trainable_variables`: the same on every call), state set under a first-call guard
    (`if self.v is None:`), `next` on a `tf.data` iterator (a graph op: the usual distributed
    training step) or on an iterator made inside the function, or on one whose kind is not
    known, code in a `tf.function` that the function defining it calls once (`return _train()`)
    or in a class's `__init__` made a `tf.function` (a method traces once per instance, and
    `__init__` runs once per instance), outside loops over a dataset or a tensor (its one trace
    runs the code as often as one call would: a Python `range` loop is unrolled), a global or
    nonlocal counter that an `assert` around the function reads (a test counting traces), a
    random value or timestamp bound to a name the function never reads (nothing frozen reaches
    the graph), and code outside `tf.function`s. `print` is the opt-in rule TFL304.

    ## Example
    ```python
    import numpy as np
    import tensorflow as tf

    @tf.function
    def augment(x):
        if np.random.rand() < 0.5:
            x = tf.image.flip_left_right(x)
        return x
    ```

    ## Use instead
    ```python
    import tensorflow as tf

    @tf.function
    def augment(x):
        if tf.random.uniform([]) < 0.5:
            x = tf.image.flip_left_right(x)
        return x
    ```
    and keep counters in a `tf.Variable` updated with `assign_add`.

    ## Guard it
    A test over many calls fails when the random draw is a Python one again: `np.random` runs once,
    while tracing, so every call flips or none does.
    ```python
    import tensorflow as tf


    @tf.function
    def augment(x):
        if tf.random.uniform([]) < 0.5:
            x = tf.image.flip_left_right(x)
        return x


    def test_augment_flips_some_images_and_not_others(tf_budget):
        image = tf.reshape(tf.range(4.0), [1, 2, 2, 1])
        tf.random.set_seed(0)
        with tf_budget.traces(augment, at_most=1):
            flipped = [bool(tf.reduce_any(augment(image) != image)) for _ in range(40)]
        assert 0 < sum(flipped) < 40
    ```

    ## References
    - [tf.function guide: Python side effects](https://www.tensorflow.org/guide/function#executing_python_side_effects)
    - [tf.function guide: depending on Python global and free variables](https://www.tensorflow.org/guide/function#depending_on_python_global_and_free_variables)
    """

    VALID = (
        # BayesFlow's `MCMCSurrogateLikelihood`: a `tf.function` `__init__` traces once per
        # instance (a method's traces are per instance), and each instance runs it once: every
        # call is a trace, and its assignments run on every call.
        Valid("""
        import tensorflow as tf

        class Surrogate:
            @tf.function
            def __init__(self, network, configurator=None):
                self.network = network
                self.configurator = configurator
                if self.configurator is None:
                    self.configurator = self._default

            def _default(self, inputs):
                return inputs
        """),
        # evidential-deep-learning's Lagrange multiplier: the update returns the variable.
        Valid("""
        import tensorflow as tf

        class Trainer:
            def __init__(self):
                self.lam = tf.Variable(0.0)

            @tf.function
            def step(self, reg_loss):
                self.lam = self.lam.assign_add(0.01 * reg_loss)
                return self.lam * reg_loss
        """),
        # AVAE's `forward`: a NumPy sample bound to a name nothing reads: nothing is frozen.
        Valid("""
        import numpy as np
        import tensorflow as tf


        class AVAE(tf.keras.Model):
            @tf.function
            def forward(self, x_real):
                batch_size = x_real.shape.as_list()[0]
                z_sample = np.random.randn(batch_size, 16).astype(np.float32)
                eps = tf.random.normal([batch_size, 16])
                return self.dec(self.enc(x_real) + eps)
        """),
        # A `tf.function` its method calls once: the one trace runs the epoch loop (a Python
        # `range`, unrolled) as a call would, so `self.epoch` counts every epoch
        # (srihari-humbarwadi/tensorflow_fcos).
        Valid("""
        import tensorflow as tf

        class Trainer:
            def train(self):
                @tf.function
                def _train():
                    self.epoch = 0
                    for _ in range(self.epochs):
                        self.step()
                        self.epoch += 1
                return _train()
        """),
        Valid("""
        import tensorflow as tf

        @tf.function
        def augment(x):
            if tf.random.uniform([]) < 0.5:
                x = tf.image.flip_left_right(x)
            tf.print("augmented", tf.shape(x))
            return x
        """),
        Valid("""
        import tensorflow as tf

        class Counter(tf.Module):
            def __init__(self):
                self.calls = tf.Variable(0)

            @tf.function
            def __call__(self, x):
                self.calls.assign_add(1)
                return x
        """),
        Valid("""
        import random

        import tensorflow as tf

        seed = random.randint(0, 100)

        @tf.function
        def step(x):
            return x + seed
        """),
        Valid("""
        import tensorflow as tf

        class Lazy(tf.Module):
            @tf.function
            def __call__(self, x):
                if self.w is None:
                    self.w = tf.Variable(1.0)
                return x * self.w
        """),
        Valid("""
        import time

        import tensorflow as tf

        class Trainer:
            def fit(self, batches):
                for batch in batches:
                    start = time.time()
                    self.steps += 1
        """),
        Valid("""
        import tensorflow as tf

        @tf.function
        def step(x):
            total = 0
            for i in range(3):
                total += i
            return x * total
        """),
        Valid("""
        import tensorflow as tf

        dataset = tf.data.Dataset.range(100).batch(10)
        iterator = iter(dataset)
        dist_iterator = iter(strategy.experimental_distribute_dataset(dataset))

        @tf.function
        def step():
            x = next(iterator)
            y = next(dist_iterator)
            schedule = iter([0.1, 0.01])
            return x, y, next(schedule)
        """),
        # zfit's caching test: the counter is how the test sees that a call did not retrace.
        Valid("""
        import tensorflow as tf

        def test_parameters_do_not_retrace():
            traces = 0

            @tf.function
            def f(x):
                nonlocal traces
                traces += 1
                return x * 2

            f(tf.constant(1.0))
            after_first = traces
            f(tf.constant(2.0))
            assert traces == after_first == 1
        """),
        # The subclass's method runs eagerly too, called on an object outside the class.
        Valid("""
        import numpy as np
        import tensorflow as tf

        class Policy(tf.Module):
            @tf.function
            def sample(self, x):
                return self._noise(x)

            def _noise(self, x):
                raise NotImplementedError

        class Gaussian(Policy):
            def _noise(self, x):
                return x + np.random.randn(3)

        print(Gaussian()._noise(np.zeros(3)))
        """),
    )
    INVALID = (
        # GAIL_TF2 (set Z17): the base class's `tf.function` calls the method a subclass
        # implements, which runs only while it traces: the noise is drawn once.
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            class Policy(tf.Module):
                @tf.function
                def sample(self, x):
                    return self._noise(x)

                def _noise(self, x):
                    raise NotImplementedError

            class Gaussian(Policy):
                def _noise(self, x):
                    return x + np.random.randn(3)
            """,
            14,
            9,
            14,
            38,
            "`np.random.randn()` runs once while the `tf.function` traces; its result is frozen "
            "into the graph (use `tf.random` or pass the value in as a tensor)",
        ),
        # Called once, but the counter is in a loop over a dataset, which AutoGraph turns into
        # a graph loop: it runs once while tracing, not once per batch.
        Invalid(
            """
            import tensorflow as tf

            class Trainer:
                def train(self):
                    @tf.function
                    def _train():
                        for batch in tf.data.Dataset.range(10):
                            self.step(batch)
                            self.iterations += 1
                    return _train()
            """,
            9,
            17,
            9,
            37,
            "`self.iterations` is updated only while the `tf.function` traces, not on every "
            "call; keep state in a `tf.Variable` and `assign` it",
        ),
        # The same function called twice: the second call does not trace, and counts nothing.
        Invalid(
            """
            import tensorflow as tf

            class Trainer:
                def train(self):
                    @tf.function
                    def _train():
                        self.epoch += 1
                    _train()
                    return _train()
            """,
            7,
            13,
            7,
            28,
            "`self.epoch` is updated only while the `tf.function` traces, not on every call; "
            "keep state in a `tf.Variable` and `assign` it",
        ),
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            @tf.function
            def augment(x):
                if np.random.rand() < 0.5:
                    x = tf.image.flip_left_right(x)
                return x
            """,
            6,
            8,
            6,
            24,
            "`np.random.rand()` runs once while the `tf.function` traces; its result is frozen "
            "into the graph (use `tf.random` or pass the value in as a tensor)",
        ),
        Invalid(
            """
            import tensorflow as tf

            class Trainer(tf.Module):
                @tf.function
                def step(self, x):
                    self.count += 1
                    return x
            """,
            6,
            9,
            6,
            24,
            "`self.count` is updated only while the `tf.function` traces, not on every call; keep "
            "state in a `tf.Variable` and `assign` it",
        ),
        Invalid(
            """
            import tensorflow as tf

            step_count = 0

            @tf.function
            def train_step(x):
                global step_count
                step_count = step_count + 1
                return x
            """,
            8,
            5,
            8,
            32,
            "`step_count` is a global/nonlocal updated only while the `tf.function` traces, not "
            "on every call; keep state in a `tf.Variable`",
        ),
        Invalid(
            """
            import time
            import tensorflow as tf

            @tf.function
            def timed(x):
                start = time.perf_counter()
                return x * 2, start
            """,
            6,
            5,
            6,
            32,
            "`time.perf_counter()` runs once while the `tf.function` traces; its result is frozen "
            "into the graph (use `tf.random` or pass the value in as a tensor)",
        ),
        Invalid(
            """
            import tensorflow as tf

            class Model(tf.keras.Model):
                @tf.function
                def train_step(self, data):
                    loss = self.compiled_loss(data[1], self(data[0]))
                    self.last_loss = loss
                    return {"loss": loss}
            """,
            7,
            9,
            7,
            30,
            "`self.last_loss` is updated only while the `tf.function` traces, not on every call; "
            "keep state in a `tf.Variable` and `assign` it",
        ),
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            batches = iter([np.ones((8, 4)), np.zeros((8, 4))])

            @tf.function
            def train_step():
                x = next(batches)
                return tf.reduce_sum(x)
            """,
            8,
            9,
            8,
            22,
            "`next(batches)` on a Python iterator runs once, while the `tf.function` traces: "
            "every call reuses the element it returned then; iterate a `tf.data` dataset "
            "(`next` on its iterator is a graph op) or pass the element in",
        ),
        Invalid(
            """
            import tensorflow as tf

            def read_batches(paths):
                for path in paths:
                    yield load(path)

            def train(paths, model):
                batches = read_batches(paths)

                @tf.function
                def step():
                    return model(next(batches))

                for _ in paths:
                    step()
            """,
            12,
            22,
            12,
            35,
            "`next(batches)` on a Python generator runs once, while the `tf.function` traces: "
            "every call reuses the element it returned then; iterate a `tf.data` dataset "
            "(`next` on its iterator is a graph op) or pass the element in",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not self.context.in_tf_function:
            return
        if self._next_on_python_iterator(node):
            return
        resolved = self.context.resolve(node.func)
        if resolved is None or not resolved.startswith(_IMPURE_PREFIXES):
            return
        if traced_once(self.context) or _discarded(self.context, node):
            return
        self.report(
            self.context.statement_around(node),
            f"`{dotted(node.func)}()` runs once while the `tf.function` traces; its result is "
            "frozen into the graph (use `tf.random` or pass the value in as a tensor)",
        )

    def _next_on_python_iterator(self, node: cst.Call) -> bool:
        """Report ``next(it)`` on a Python iterator or generator bound outside the traced
        function (True when the call is ``next``)."""
        context = self.context
        func = node.func
        if not (isinstance(func, cst.Name) and func.value == "next" and node.args):
            return False
        if func.value in context.module_index.imports or defining_frame(context, "next"):
            return False
        argument = node.args[0].value
        traced = first_traced(context)
        if not isinstance(argument, cst.Name) or traced is None:
            return True
        index = defining_frame(context, argument.value)
        if index is not None and index >= traced:
            return True  # made inside the traced function: consumed afresh by each trace
        what = _python_iterator(context, argument.value)
        if what is not None:
            self.report(
                node,
                f"`next({argument.value})` on {what} runs once, while the `tf.function` "
                "traces: every call reuses the element it returned then; iterate a `tf.data` "
                "dataset (`next` on its iterator is a graph op) or pass the element in",
            )
        return True

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._assigned(node, node.target)

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        if isinstance(value, cst.Call) and self.context.resolve(value.func) == TF_VARIABLE:
            return  # TFL302's concern
        if self.context.in_tf_function and self.context.type_of(value).structural:
            return  # a model's own variables or layers: the same on every call
        for target in node.targets:
            if not _reassigns_itself(value, target.target):
                self._assigned(node, target.target)

    def _assigned(self, node: cst.CSTNode, target: cst.BaseExpression) -> None:
        context = self.context
        if not context.in_tf_function or context.guarded:
            return
        name = dotted(target)
        if name is None:
            return
        state = name.startswith("self.") and name.count(".") == 1
        shared = not state and "." not in name and name in context.global_names()
        if not (state or shared) or traced_once(context):
            return
        if shared and asserted(context, name):
            return  # a trace counter that the code checks
        if state:
            self.report(
                node,
                f"`{name}` is updated only while the `tf.function` traces, not on every call; "
                "keep state in a `tf.Variable` and `assign` it",
            )
        else:
            self.report(
                node,
                f"`{name}` is a global/nonlocal updated only while the `tf.function` traces, "
                "not on every call; keep state in a `tf.Variable`",
            )


#: The methods of a ``tf.Variable`` that update it in place and return it.
_ASSIGN_METHODS = frozenset({"assign", "assign_add", "assign_sub"})


def _reassigns_itself(value: cst.BaseExpression, target: cst.BaseExpression) -> bool:
    """``self.lam = self.lam.assign_add(step)``: the variable's update returns the variable
    (TensorFlow 2.21: an ``_UnreadVariable`` over the same handle, whose reads see every later
    update), so the name still holds the state; the update runs on every call."""
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value in _ASSIGN_METHODS
        and (variable := dotted(value.func.value)) is not None
        and variable == dotted(target)
    )


def _python_iterator(context: FileContext, name: str) -> str | None:
    """What ``name`` holds when everything it may hold is a Python iterator or generator: "a
    Python iterator", "a Python generator"; None otherwise (a ``tf.data`` iterator, unknown)."""
    value = context.type_of(name)
    if value.kind is not Kind.ITERATOR:
        return None
    generator = all(each.flag for each in value.informative)
    return "a Python generator" if generator else "a Python iterator"


def _discarded(context: FileContext, node: cst.Call) -> bool:
    """The call's value goes to a name that nothing in the traced function reads
    (``z_sample = np.random.randn(n, 16).astype(np.float32)``, never used): no frozen value
    reaches the graph."""
    frame = context.frames[first_traced(context) or 0]
    statement = context.statement_around(node)
    if not (isinstance(statement, cst.Assign) and len(statement.targets) == 1):
        return False
    target = statement.targets[0].target
    value = statement.value
    while isinstance(value, cst.Call) and value is not node:  # ``.astype(...)`` on the value
        if not isinstance(value.func, cst.Attribute):
            return False
        value = value.func.value
    if value is not node or not isinstance(target, cst.Name):
        return False
    return not any(
        isinstance(found, cst.Name) and found.value == target.value and found is not target
        for found in descendants(frame.node)
    )
