from __future__ import annotations

import libcst as cst

from tflint_leaks.rulekit.rule import Invalid, Rule, Valid


class PrintInFunction(Rule):
    """
    ## What it does
    Flags the builtin `print(...)` inside a `tf.function`. Opt-in (select `TFL304`): printing
    while tracing is often deliberate, to see when a function retraces.

    ## Why is this bad?
    Python's `print` runs only while the function traces, not on every call, and prints
    symbolic tensors (`Tensor("add:0", shape=(), dtype=float32)`) rather than values. Code that
    relies on it for logging goes silent after the first call.

    A Keras model's `train_step`, `test_step` and `predict_step` run inside the `tf.function`
    that `fit`, `evaluate` and `predict` make, so they count as `tf.function`s (not in a
    module that says `run_eagerly`).

    Not flagged: `tf.print` (a graph op that runs on every call), `print` outside
    `tf.function`s, and a local function named `print`.

    ## Example
    ```python
    import tensorflow as tf

    @tf.function
    def train_step(x):
        loss = model(x)
        print("loss", loss)
        return loss
    ```

    ## Use instead
    ```python
    import tensorflow as tf

    @tf.function
    def train_step(x):
        loss = model(x)
        tf.print("loss", loss)
        return loss
    ```

    ## Guard it
    A test that captures the output (pytest's `capfd`: `tf.print` writes to the process's stderr)
    fails when `print` is back: it prints once, while tracing, and shows a symbolic tensor.
    ```python
    import tensorflow as tf


    @tf.function
    def train_step(x):
        loss = tf.reduce_sum(x)
        tf.print("loss", loss)
        return loss


    def test_every_step_prints_its_loss(capfd):
        for _ in range(3):
            train_step(tf.ones([2]))
        assert capfd.readouterr().err.count("loss 2") == 3
    ```

    ## References
    - [tf.function guide: Python side effects](https://www.tensorflow.org/guide/function#executing_python_side_effects)
    - [`tf.print`](https://www.tensorflow.org/api_docs/python/tf/print)
    """

    VALID = (
        Valid("""
        import tensorflow as tf

        @tf.function
        def step(x):
            tf.print("x", x)
            return x
        """),
        Valid("""
        import tensorflow as tf

        def step(x):
            print("x", x)
            return x
        """),
        Valid("""
        import tensorflow as tf

        @tf.function
        def step(x):
            return x

        for i in range(3):
            print(step(tf.constant(i)))
        """),
        Valid("""
        from rich import print
        import tensorflow as tf

        @tf.function
        def step(x):
            return x
        """),
        Valid("""
        import tensorflow as tf

        def log(*args):
            pass

        @tf.function
        def step(x):
            log("tracing", x)
            return x
        """),
        Valid("""
        import tensorflow as tf

        @tf.function
        def step(x):
            message = "tracing with %s" % x.shape
            return x, message
        """),
    )
    INVALID = (
        # `fit` runs a Keras model's `train_step` inside the `tf.function` it makes.
        Invalid(
            """
            import tensorflow as tf

            class Classifier(tf.keras.Model):
                def train_step(self, data):
                    x, y = data
                    print("batch", x)
                    return {"loss": self.compiled_loss(y, self(x))}
            """,
            6,
            9,
            6,
            26,
            "`print` runs only while the `tf.function` traces and shows symbolic tensors; use "
            "`tf.print`",
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def train_step(x):
                loss = tf.reduce_sum(x)
                print("loss", loss)
                return loss
            """,
            6,
            5,
            6,
            24,
            "`print` runs only while the `tf.function` traces and shows symbolic tensors; use "
            "`tf.print`",
        ),
        Invalid(
            """
            import tensorflow as tf

            class Model(tf.Module):
                @tf.function
                def __call__(self, x):
                    print(f"tracing for shape {x.shape}")
                    return x
            """,
            6,
            9,
            6,
            46,
            "`print` runs only while the `tf.function` traces and shows symbolic tensors; use "
            "`tf.print`",
        ),
        Invalid(
            """
            import tensorflow as tf

            def body(x):
                if x.shape[0] > 2:
                    print("big batch")
                return x

            step = tf.function(body)
            """,
            5,
            9,
            5,
            27,
            "`print` runs only while the `tf.function` traces and shows symbolic tensors; use "
            "`tf.print`",
        ),
        Invalid(
            """
            from tensorflow import function

            @function
            def step(xs):
                for x in xs:
                    y = x + 1; print(y)
                return xs
            """,
            6,
            20,
            6,
            28,
            "`print` runs only while the `tf.function` traces and shows symbolic tensors; use "
            "`tf.print`",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        func = node.func
        if not (context.in_tf_function and isinstance(func, cst.Name) and func.value == "print"):
            return
        if "print" in context.module_index.imports or "print" in context.module_index.functions:
            return
        self.report(
            node,
            "`print` runs only while the `tf.function` traces and shows symbolic tensors; use "
            "`tf.print`",
        )
