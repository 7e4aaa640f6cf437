from __future__ import annotations

import libcst as cst

from tflint_leaks.analysis.names import TF_VARIABLE
from tflint_leaks.rulekit.rule import Invalid, Rule, Valid


class VariableCreatedPerCall(Rule):
    """
    ## What it does
    Flags `tf.Variable(...)` created inside a `tf.function` body without a first-call guard
    (`if self.v is None:`, `if not self.built:`, `if not hasattr(self, "v"):`).

    ## Why is this bad?
    A `tf.function` may create variables only on its first trace. An unguarded `tf.Variable`
    runs again on every retrace and raises `ValueError: tf.function only supports singleton
    tf.Variables created on the first call`; before that, the code reads as if a fresh variable
    (reset state) were made on every call, which never happens in graph mode.

    Not flagged: variables created once outside the function (in `__init__` or `build`), and
    creation under a guard that makes it run once.

    ## Example
    ```python
    import tensorflow as tf

    @tf.function
    def accumulate(x):
        total = tf.Variable(0.0)
        total.assign_add(tf.reduce_sum(x))
        return total
    ```

    ## Use instead
    ```python
    import tensorflow as tf

    total = tf.Variable(0.0)

    @tf.function
    def accumulate(x):
        total.assign_add(tf.reduce_sum(x))
        return total
    ```

    ## Guard it
    A test that calls the function more than once fails when the variable is created inside it again
    (TensorFlow raises on the call that would create a second one); `tf_budget.traces` (the pytest
    plugin's `tf_budget` fixture
    ([docs/budget.md](https://github.com/tflint-leaks/tflint-leaks/blob/main/docs/budget.md)))
    checks the one trace.
    ```python
    import tensorflow as tf

    total = tf.Variable(0.0)


    @tf.function
    def accumulate(x):
        total.assign_add(tf.reduce_sum(x))
        return total


    def test_accumulate_counts_every_call(tf_budget):
        with tf_budget.traces(accumulate, at_most=1):
            for _ in range(3):
                accumulate(tf.ones([2]))
        assert float(total) == 6.0
    ```

    ## References
    - [tf.function guide: creating tf.Variables](https://www.tensorflow.org/guide/function#creating_tfvariables)
    """

    VALID = (
        Valid("""
        import tensorflow as tf

        class Counter(tf.Module):
            def __init__(self):
                self.v = None

            @tf.function
            def __call__(self, x):
                if self.v is None:
                    self.v = tf.Variable(0.0)
                return self.v.assign_add(x)
        """),
        Valid("""
        import tensorflow as tf

        total = tf.Variable(0.0)

        @tf.function
        def accumulate(x):
            return total.assign_add(tf.reduce_sum(x))
        """),
        Valid("""
        import tensorflow as tf

        class Scale(tf.Module):
            @tf.function
            def __call__(self, x):
                if not hasattr(self, "w"):
                    self.w = tf.Variable(tf.ones_like(x))
                return x * self.w
        """),
        Valid("""
        import tensorflow as tf

        def make_counter():
            return tf.Variable(0)
        """),
        Valid("""
        import tensorflow as tf

        class Dense(tf.keras.layers.Layer):
            def build(self, shape):
                self.kernel = tf.Variable(tf.zeros([shape[-1], 4]))
        """),
        Valid("""
        import tensorflow as tf

        class Lazy(tf.Module):
            @tf.function
            def __call__(self, x):
                if not self.built:
                    self.w = tf.Variable(1.0)
                    self.built = True
                return x * self.w
        """),
    )
    INVALID = (
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def accumulate(x):
                total = tf.Variable(0.0)
                total.assign_add(tf.reduce_sum(x))
                return total
            """,
            5,
            13,
            5,
            29,
            "`tf.Variable` created in a `tf.function` body runs again on every trace (a "
            "`ValueError` on retrace); create it once outside, or guard with `if self.v is None:`",
        ),
        Invalid(
            """
            import tensorflow as tf

            class Model(tf.Module):
                @tf.function
                def __call__(self, x):
                    self.w = tf.Variable(tf.ones([3]))
                    return x * self.w
            """,
            6,
            18,
            6,
            43,
            "`tf.Variable` created in a `tf.function` body runs again on every trace (a "
            "`ValueError` on retrace); create it once outside, or guard with `if self.v is None:`",
        ),
        Invalid(
            """
            from tensorflow import Variable, function

            @function(reduce_retracing=True)
            def step(x):
                state = Variable(initial_value=x)
                return state * 2
            """,
            5,
            13,
            5,
            38,
            "`tf.Variable` created in a `tf.function` body runs again on every trace (a "
            "`ValueError` on retrace); create it once outside, or guard with `if self.v is None:`",
        ),
        Invalid(
            """
            import tensorflow as tf

            def body(x):
                counter = tf.Variable(0, trainable=False)
                return counter.assign_add(1) + x

            step = tf.function(body)
            """,
            4,
            15,
            4,
            46,
            "`tf.Variable` created in a `tf.function` body runs again on every trace (a "
            "`ValueError` on retrace); create it once outside, or guard with `if self.v is None:`",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        if not context.in_tf_function or context.guarded:
            return
        if context.resolve(node.func) != TF_VARIABLE:
            return
        self.report(
            node,
            "`tf.Variable` created in a `tf.function` body runs again on every trace (a "
            "`ValueError` on retrace); create it once outside, or guard with "
            "`if self.v is None:`",
        )
