from __future__ import annotations

import libcst as cst

from tflint_leaks.analysis.values import Kind
from tflint_leaks.rules._calls import arguments, relate_call, repeated_tf_function_call
from tflint_leaks.rules.base import Invalid, Rule


class VaryingShapeArgument(Rule):
    """
    ## What it does
    Flags a `tf.function` without `input_signature` and without `reduce_retracing=True` that is
    called in a loop with a tensor (or NumPy array) whose shape depends on the loop: a slice
    such as `x[:i]`, or `tf.zeros([n])`, `tf.range(n)`, `np.ones(n)` with a loop-variant `n`.

    ## Why is this bad?
    A tensor argument is traced by dtype and shape. Each new shape traces a new graph, so a
    loop that grows or shrinks a tensor retraces on every iteration and keeps every graph.

    Not flagged: a function with `input_signature` or `reduce_retracing=True`, and tensors whose
    shape does not change (indexing `x[i]`, a full batch).

    ## Example
    ```python
    @tf.function
    def encode(tokens):
        ...

    for length in range(1, max_len):
        encode(tokens[:length])
    ```

    ## Use instead
    ```python
    @tf.function(input_signature=[tf.TensorSpec([None], tf.int32)])
    def encode(tokens):
        ...
    ```
    or `@tf.function(reduce_retracing=True)`, which generalises to `None` dimensions after the
    first retrace.

    ## References
    - [tf.function guide: controlling retracing](https://www.tensorflow.org/guide/function#controlling_retracing)
    - [tensorflow/tensorflow#26311](https://github.com/tensorflow/tensorflow/issues/26311)
    """

    code = "TFL105"
    name = "varying-shape-argument"
    summary = "A tensor whose shape changes every iteration is passed to a `tf.function`"

    VALID = (
        """
        import tensorflow as tf

        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def encode(tokens):
            return tokens

        x = tf.ones([100])
        for length in range(1, 100):
            encode(x[:length])
        """,
        """
        import tensorflow as tf

        @tf.function(reduce_retracing=True)
        def encode(tokens):
            return tokens

        x = tf.ones([100])
        for length in range(1, 100):
            encode(x[:length])
        """,
        """
        import tensorflow as tf

        @tf.function
        def encode(token):
            return token

        x = tf.ones([100])
        for i in range(100):
            encode(x[i])
            encode(x[:10])
        """,
        """
        import tensorflow as tf

        @tf.function
        def encode(tokens):
            return tokens

        for i in range(100):
            encode(tf.zeros([8, 16]))
        """,
        """
        import tensorflow as tf

        @tf.function
        def encode(tokens):
            return tokens

        for size in [16, 32]:
            encode(tf.zeros([size]))
        """,
        """
        import tensorflow as tf

        @tf.function
        def encode(tokens):
            return tokens

        for batch in tf.data.Dataset.range(100).batch(10):
            encode(batch)
        """,
    )
    INVALID = (
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def encode(tokens):
                return tokens

            x = tf.ones([100])
            for length in range(1, 100):
                encode(x[:length])
            """,
            9,
            12,
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def fill(buffer):
                return buffer

            n = 1
            while n < 4096:
                fill(tf.zeros([n, 3]))
                n *= 2
            """,
            9,
            10,
        ),
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            @tf.function(reduce_retracing=False)
            def score(values):
                return tf.reduce_sum(values)

            def run(steps):
                for t in range(steps):
                    score(np.ones(t + 1))
            """,
            10,
            15,
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def decode(prefix, step):
                return prefix

            def generate(tokens, steps):
                for step in range(steps):
                    prefix = tokens[:, : step + 1]
                    decode(prefix, tf.constant(step))
            """,
            10,
            16,
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        callee = repeated_tf_function_call(self.context, node)
        if callee is None or callee.facts.reduce_retracing:
            return
        evaluator = self.context.evaluator()
        limit = self.context.options.max_python_values
        for argument in arguments(node, callee):
            if callee.facts.covers(argument.position):
                continue
            value = evaluator.value(argument.value)
            if value.kind is not Kind.TENSOR or not value.size_varies or value.card <= limit:
                continue
            report = self.report(
                argument.value,
                f"the shape of {argument.shown} changes every iteration; each shape retraces "
                f"`{callee.display}` (add an `input_signature` with `None` dimensions or "
                "`reduce_retracing=True`)",
            )
            relate_call(report, self.context, callee)
