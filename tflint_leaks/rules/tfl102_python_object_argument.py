from __future__ import annotations

import libcst as cst

from tflint_leaks.analysis.nodes import dotted
from tflint_leaks.rulekit.facts import Form
from tflint_leaks.rulekit.rule import Invalid, Rule, Valid
from tflint_leaks.rules._calls import (
    relate_call,
    repeated_call_arguments,
    varies_unboundedly,
)


class PythonObjectArgument(Rule):
    """
    ## What it does
    Flags a `tf.function` called, once per loop iteration, with a Python object that is
    different on every call: a list, tuple or dict holding a Python number that changes (or
    whose length changes), a lambda, a bound method such as `self.loss`, or a freshly
    constructed instance of a project class.

    ## Why is this bad?
    `tf.function` keys traces on Python containers element by element and on other Python
    objects by identity. A container whose numbers change, or an object that is new on every
    call, never matches a cached trace: every call traces and compiles a new graph, and the
    graphs accumulate.

    Not flagged: containers of tensors or of unchanging values, an object or function created
    once before the loop, and calls made while another `tf.function` traces.

    ## Example
    ```python
    import tensorflow as tf

    @tf.function
    def train_step(x, hparams):
        ...

    for epoch in range(epochs):
        train_step(x, {"lr": base_lr * 0.5 ** epoch, "epoch": epoch})
    ```

    ## Use instead
    ```python
    import tensorflow as tf

    @tf.function
    def train_step(x, lr):
        ...

    lr = tf.Variable(base_lr)
    for epoch in range(epochs):
        lr.assign(base_lr * 0.5 ** epoch)
        train_step(x, lr)
    ```
    Create callables and configuration objects once, outside the loop.

    ## Guard it
    `tf_budget.traces` (the pytest plugin's `tf_budget` fixture
    ([docs/budget.md](https://github.com/tflint-leaks/tflint-leaks/blob/main/docs/budget.md))) fails
    the test when `train_step` traces more than once, saying which argument made the traces and what
    it took (distinct objects of a type, or distinct values) and naming this rule. It fails as soon
    as a new object or container reaches `train_step` on every call again.
    ```python
    import tensorflow as tf

    lr = tf.Variable(0.1)


    @tf.function
    def train_step(x, lr):
        return x * lr


    def train(x, epochs):
        for epoch in range(epochs):
            lr.assign(0.1 * 0.5**epoch)
            train_step(x, lr)


    def test_train_step_traces_once(tf_budget):
        with tf_budget.traces(train_step, at_most=1):
            train(tf.ones([4]), epochs=10)
    ```

    ## References
    - [tf.function guide: rules of tracing](https://www.tensorflow.org/guide/function#rules_of_tracing)
    - [tensorflow/tensorflow#31175](https://github.com/tensorflow/tensorflow/issues/31175)
    """

    VALID = (
        Valid("""
        import tensorflow as tf

        @tf.function
        def train_step(inputs):
            return inputs[0] + inputs[1]

        for x, y in tf.data.Dataset.from_tensor_slices(([1.0], [2.0])):
            train_step([x, y])
            train_step((x, tf.constant(0.5)))
        """),
        Valid("""
        import tensorflow as tf

        @tf.function
        def apply(fn, x):
            return fn(x)

        square = lambda v: v * v
        for x in tf.data.Dataset.range(10):
            apply(square, x)
        """),
        Valid("""
        import tensorflow as tf

        @tf.function
        def train_step(x, config):
            return x * config["scale"]

        config = {"scale": 2.0, "name": "run"}
        for step in range(100):
            train_step(tf.ones([2]), config)
        """),
        Valid("""
        import tensorflow as tf

        @tf.function
        def train_step(x, shape):
            return tf.reshape(x, shape)

        for step in range(100):
            train_step(tf.ones([4]), [2, 2])
        """),
        Valid("""
        import tensorflow as tf

        @tf.function
        def outer(xs):
            @tf.function
            def inner(pair):
                return pair[0]
            for i in range(3):
                inner([xs, i])
            return xs
        """),
        Valid("""
        import tensorflow as tf

        class Trainer:
            def loss(self, x):
                return x

            @tf.function
            def step(self, fn, x):
                return fn(x)

            def run(self, data):
                loss = self.loss
                for x in data:
                    self.step(loss, x)
        """),
        Valid("""
        import tensorflow as tf

        @tf.function
        def train_step(x, options):
            return x

        for lr in [0.1, 0.01]:
            train_step(tf.ones([1]), {"lr": lr})
        """),
    )
    INVALID = (
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def train_step(x, hparams):
                return x * hparams["lr"]

            for epoch in range(50):
                train_step(tf.ones([2]), {"lr": 0.1 * 0.5 ** epoch})
            """,
            8,
            30,
            8,
            56,
            '`{"lr": 0.1 * 0.5 ** epoch}` (parameter `hparams`) is a Python container whose '
            "contents change on every iteration; each one retraces `train_step`",
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def apply(fn, x):
                return fn(x)

            for step in range(100):
                apply(lambda v: v * 2, tf.ones([2]))
            """,
            8,
            11,
            8,
            26,
            "`lambda v: v * 2` (parameter `fn`) is a new lambda on every iteration; each one "
            "retraces `apply`",
        ),
        Invalid(
            """
            import tensorflow as tf

            class Trainer:
                def loss(self, x):
                    return x

                @tf.function
                def step(self, fn, x):
                    return fn(x)

                def run(self, data):
                    for x in data:
                        self.step(self.loss, x)
            """,
            13,
            23,
            13,
            32,
            "`self.loss` (parameter `fn`) is a new bound method on every iteration; each one "
            "retraces `self.step`",
        ),
        Invalid(
            """
            import tensorflow as tf

            class Schedule:
                def __init__(self, step):
                    self.step = step

            @tf.function
            def train_step(x, schedule):
                return x

            for step in range(100):
                train_step(tf.ones([1]), Schedule(step))
            """,
            12,
            30,
            12,
            44,
            "`Schedule(step)` (parameter `schedule`) is a new instance on every iteration; each "
            "one retraces `train_step`",
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def pad_all(x, lengths):
                return x

            lengths = []
            for step in range(100):
                lengths.append(step)
                pad_all(tf.ones([1]), lengths[:step])
            """,
            10,
            27,
            10,
            41,
            "`lengths[:step]` (parameter `lengths`) is a Python container whose contents change "
            "on every iteration; each one retraces `pad_all`",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        for callee, argument, value in repeated_call_arguments(self.context, node):
            what = self._new_object(argument.value)
            if what is None:
                changes = value.content_varies or value.size_varies
                if value.kind is not Form.CONTAINER or not changes:
                    continue
                if not varies_unboundedly(self.context, value):
                    continue
                what = "Python container whose contents change"
            report = self.report(
                argument.value,
                f"{argument.shown} is a {what} on every iteration; each one retraces "
                f"`{callee.display}`",
            )
            relate_call(report, self.context, callee)

    def _new_object(self, value: cst.BaseExpression) -> str | None:
        """What makes ``value`` a new object on each evaluation, if it is one."""
        if isinstance(value, cst.Lambda):
            return "new lambda"
        if isinstance(value, cst.Call) and self.context.project_class(value.func) is not None:
            return "new instance"
        name = dotted(value)
        if isinstance(value, cst.Attribute) and name is not None and name.count(".") == 1:
            receiver, _, attribute = name.partition(".")
            if self._is_plain_method(receiver, attribute):
                return "new bound method"
        return None

    def _is_plain_method(self, receiver: str, attribute: str) -> bool:
        """``receiver.attribute`` makes a new bound-method object each time it is evaluated."""
        context = self.context
        if receiver == "self":
            frame = context.enclosing_class()
            klass = (
                context.module_index.classes.get(frame.class_name)
                if frame is not None and frame.class_name is not None
                else None
            )
            module = context.module_index
        else:
            found = context.instance_class(receiver)
            module, klass = found if found is not None else (context.module_index, None)
        if klass is None or attribute not in klass.methods:
            return False
        # A tf.function method is cached per instance: the same object on every access.
        if attribute in context.tf_function_attributes(module, klass):
            return False
        facts = module.functions.get(f"{klass.name}.{attribute}")
        return facts is not None and facts.is_method
