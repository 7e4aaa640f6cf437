from __future__ import annotations

import libcst as cst

from tflint_leaks.analysis.nodes import dotted
from tflint_leaks.rulekit.rule import Invalid, Rule, Valid
from tflint_leaks.rules._models import method_call
from tflint_leaks.rules._traced import outliving_container

_MUTATORS = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "pop"})


class PythonContainerMutation(Rule):
    """
    ## What it does
    Flags a Python list, dict or set that outlives a `tf.function` call (a module global, a
    closure variable, an attribute of `self` initialised to a container, a parameter annotated
    as one) mutated inside the function: `append`, `extend`, `insert`, `add`, `update`,
    `setdefault`, `pop`, or item assignment.

    ## Why is this bad?
    Python code in a `tf.function` runs only while it traces. The mutation happens once per
    trace, not once per call, so the container silently stops changing after the first call; what
    it collects are symbolic graph tensors that keep their graph alive, and it grows again with
    every retrace.

    Not flagged: a container local to the function body (created in the body and consumed
    there), an attribute the function binds anew before it changes it (`self.variables =
    model.trainable_variables`, then `self.variables.extend(...)`: the list this trace made),
    lazy initialisation under a first-call guard (`if not cache[0]: cache[0] = ...`, `if key
    not in self.cache:`), and mutations outside `tf.function`s.

    ## Example
    ```python
    import tensorflow as tf

    losses = []

    @tf.function
    def train_step(x):
        loss = model(x)
        losses.append(loss)
        return loss
    ```

    ## Use instead
    ```python
    import tensorflow as tf

    @tf.function
    def train_step(x):
        return model(x)

    losses = [train_step(x) for x in batches]
    ```
    or collect inside the function with a `tf.TensorArray` and return it.

    ## Guard it
    A test of what the function returns fails when the list is mutated inside it again (the list
    then holds one symbolic tensor from the trace); `tf_budget.traces` (the pytest plugin's
    `tf_budget` fixture
    ([docs/budget.md](https://github.com/tflint-leaks/tflint-leaks/blob/main/docs/budget.md))) also
    checks it traces once.
    ```python
    import tensorflow as tf


    @tf.function
    def train_step(x):
        return tf.reduce_sum(x * x)


    def train(batches):
        return [train_step(x) for x in batches]


    def test_every_step_returns_its_loss(tf_budget):
        batches = [tf.ones([4]) * i for i in range(5)]
        with tf_budget.traces(train_step, at_most=1):
            losses = train(batches)
        assert [float(loss) for loss in losses] == [0.0, 4.0, 16.0, 36.0, 64.0]
    ```

    ## References
    - [tf.function guide: Python side effects](https://www.tensorflow.org/guide/function#executing_python_side_effects)
    - [tf.function guide: changing Python global and free variables](https://www.tensorflow.org/guide/function#changing_python_global_and_free_variables)
    - [tensorflow/tensorflow#31362](https://github.com/tensorflow/tensorflow/issues/31362)
    """

    VALID = (
        # TensorDiffEq's discovery model: the list it extends is the one this trace just made
        # (`trainable_variables` gives a new list), not one that outlives the call unchanged.
        Valid("""
        import tensorflow as tf

        class DiscoveryModel(tf.Module):
            def __init__(self, extra):
                self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                self.extra = extra
                self.variables = []

            @tf.function
            def train_op(self):
                self.variables = self.model.trainable_variables
                if self.extra:
                    self.variables.extend(self.extra)
                return self.grad()
        """),
        Valid("""
        import tensorflow as tf

        @tf.function
        def step(xs):
            outputs = []
            for x in xs:
                outputs.append(x * 2)
            return tf.stack(outputs)
        """),
        Valid("""
        import tensorflow as tf

        losses = []

        def step(x):
            loss = x * 2
            losses.append(loss)
            return loss
        """),
        Valid("""
        import tensorflow as tf

        @tf.function
        def step(x, n):
            ta = tf.TensorArray(tf.float32, size=n)
            for i in tf.range(n):
                ta = ta.write(i, x)
            return ta.stack()
        """),
        Valid("""
        import tensorflow as tf

        class Model(tf.Module):
            def __init__(self):
                self.optimizer = make_optimizer()

            @tf.function
            def step(self, grads):
                self.optimizer.update(grads)
        """),
        Valid("""
        import tensorflow as tf

        @tf.function
        def step(x, queue):
            queue.append(x)
        """),
        Valid("""
        import tensorflow as tf

        def make_step(module_fn):
            module = [None]

            @tf.function
            def step(x):
                if not module[0]:
                    module[0] = module_fn()
                return module[0](x)

            return step
        """),
        Valid("""
        import tensorflow as tf

        @tf.function
        def step(features):
            out = {}
            for key in ("a", "b"):
                out[key] = features[key] * 2
            return out
        """),
    )
    INVALID = (
        Invalid(
            """
            import tensorflow as tf

            losses = []

            @tf.function
            def train_step(x):
                loss = tf.reduce_sum(x)
                losses.append(loss)
                return loss
            """,
            8,
            5,
            8,
            24,
            "`losses` is a global that outlives the `tf.function` call; this mutation runs only "
            "while tracing and stores symbolic tensors",
        ),
        Invalid(
            """
            import tensorflow as tf

            class Trainer(tf.Module):
                def __init__(self):
                    self.history = {}

                @tf.function
                def step(self, x):
                    self.history["loss"] = tf.reduce_mean(x)
                    return x
            """,
            9,
            9,
            9,
            49,
            "`self.history` is an attribute of `self` that outlives the `tf.function` call; this "
            "mutation runs only while tracing and stores symbolic tensors",
        ),
        Invalid(
            """
            import tensorflow as tf

            def make_step():
                seen = set()

                @tf.function
                def step(x):
                    seen.add(x.ref())
                    return x

                return step
            """,
            8,
            9,
            8,
            26,
            "`seen` is a closure variable that outlives the `tf.function` call; this mutation "
            "runs only while tracing and stores symbolic tensors",
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def step(x, log: list[tf.Tensor]):
                log.extend([x, x * 2])
                return x
            """,
            5,
            5,
            5,
            27,
            "`log` is a parameter that outlives the `tf.function` call; this mutation runs only "
            "while tracing and stores symbolic tensors",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not self.context.in_tf_function:
            return
        receiver = method_call(node, _MUTATORS)
        if receiver is not None:
            self._check(node, receiver)

    def visit_Assign(self, node: cst.Assign) -> None:
        if self.context.in_tf_function:
            for target in node.targets:
                if isinstance(target.target, cst.Subscript):
                    self._check(node, target.target.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if self.context.in_tf_function and isinstance(node.target, cst.Subscript):
            self._check(node, node.target.value)

    def _check(self, node: cst.CSTNode, receiver: cst.BaseExpression) -> None:
        if self.context.guarded:
            return
        what = outliving_container(self.context, receiver)
        if what is None:
            return
        self.report(
            node,
            f"`{dotted(receiver)}` is {what} that outlives the `tf.function` call; this mutation "
            "runs only while tracing and stores symbolic tensors",
        )
