from __future__ import annotations

import libcst as cst

from tflint_leaks.analysis.scope import own_nodes
from tflint_leaks.analysis.tapes import Tape
from tflint_leaks.rules._calls import relate_loop
from tflint_leaks.rules._models import STORE_METHODS, method_call
from tflint_leaks.rules._tapes import bare_references
from tflint_leaks.rules.base import Invalid, Rule


class PersistentTapeNotReleased(Rule):
    """
    ## What it does
    Flags a `tf.GradientTape(persistent=True)` created on every call of a function or every
    iteration of a loop that is never released with `del tape` after its last use.

    ## Why is this bad?
    A persistent tape keeps every intermediate tensor it recorded (activations, the inputs of
    every op) so that `gradient` can be called more than once. All of that stays alive until the
    tape object is garbage collected: through the optimizer step, the next forward pass, and
    longer when a traceback, a closure or a reference cycle holds the frame. TensorFlow's guide
    ends every persistent-tape example with `del tape`.

    Not flagged: non-persistent tapes (their resources are released by the first `gradient`
    call), a tape that is returned or stored for the caller, tapes inside a `tf.function` (they
    exist only while it traces), and a single tape created once at module level.

    ## Example
    ```python
    def train_step(x, y):
        with tf.GradientTape(persistent=True) as tape:
            loss_a, loss_b = model(x)
        grads_a = tape.gradient(loss_a, model.trainable_variables)
        grads_b = tape.gradient(loss_b, model.trainable_variables)
        optimizer.apply_gradients(zip(grads_a + grads_b, variables))
    ```

    ## Use instead
    ```python
        grads_a = tape.gradient(loss_a, model.trainable_variables)
        grads_b = tape.gradient(loss_b, model.trainable_variables)
        del tape
    ```

    ## References
    - [`tf.GradientTape`: persistent tapes](https://www.tensorflow.org/api_docs/python/tf/GradientTape)
    - [tensorflow/tensorflow#32276](https://github.com/tensorflow/tensorflow/issues/32276)
    - [GPflow/GPflow#1142](https://github.com/GPflow/GPflow/issues/1142)
    """

    code = "TFL201"
    name = "persistent-tape-not-released"
    summary = "A persistent `GradientTape` created per call or iteration is never deleted"

    VALID = (
        """
        import tensorflow as tf

        def train_step(x):
            with tf.GradientTape(persistent=True) as tape:
                y = x * x
            dx = tape.gradient(y, x)
            del tape
            return dx
        """,
        """
        import tensorflow as tf

        def train_step(x):
            with tf.GradientTape() as tape:
                y = x * x
            return tape.gradient(y, x)
        """,
        """
        import tensorflow as tf

        @tf.function
        def train_step(x):
            with tf.GradientTape(persistent=True) as tape:
                y = x * x
            return tape.gradient(y, x), tape.gradient(y * y, x)
        """,
        """
        import tensorflow as tf

        def record(x):
            with tf.GradientTape(persistent=True) as tape:
                tape.watch(x)
                y = x * x
            return tape, y
        """,
        """
        import tensorflow as tf

        tape = tf.GradientTape(persistent=True)
        with tape:
            y = x * x
        print(tape.gradient(y, x))
        """,
        """
        import tensorflow as tf

        for batch in batches:
            tape = tf.GradientTape(persistent=True)
            with tape:
                loss = model(batch)
            grads = tape.gradient(loss, model.trainable_variables)
            del tape
        """,
        """
        import tensorflow as tf

        def step(x, persistent):
            with tf.GradientTape(persistent=persistent) as tape:
                y = x * x
            return tape.gradient(y, x)
        """,
    )
    INVALID = (
        Invalid(
            """
            import tensorflow as tf

            def train_step(model, x, y):
                with tf.GradientTape(persistent=True) as tape:
                    loss_a, loss_b = model(x)
                grads_a = tape.gradient(loss_a, model.trainable_variables)
                grads_b = tape.gradient(loss_b, model.trainable_variables)
                return grads_a, grads_b
            """,
            4,
            10,
        ),
        Invalid(
            """
            import tensorflow as tf

            for x in batches:
                with tf.GradientTape(persistent=True) as g:
                    g.watch(x)
                    y = x * x
                dy = g.gradient(y, x)
            """,
            4,
            10,
        ),
        Invalid(
            """
            from tensorflow import GradientTape

            class Trainer:
                def step(self, x):
                    tape = GradientTape(persistent=True)
                    with tape:
                        y = self.model(x)
                    return [tape.gradient(y, v) for v in self.model.trainable_variables]
            """,
            5,
            16,
        ),
        Invalid(
            """
            import tensorflow as tf

            def pinn_residual(model, t, x):
                with tf.GradientTape(persistent=True) as tape:
                    tape.watch([t, x])
                    u = model(tf.stack([t, x], axis=1))
                u_t = tape.gradient(u, t)
                u_x = tape.gradient(u, x)
                return u_t - u_x
            """,
            4,
            10,
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        if context.in_tf_function or not (context.loops or context.enclosing_function()):
            return
        tape = next((t for t in context.tapes() if t.creation is node), None)
        if tape is None or not tape.persistent or tape.name is None or "." in tape.name:
            return
        if tape.name in context.scope_facts().deleted or self._escapes(tape):
            return
        where = "iteration" if context.loops else "call"
        report = self.report(
            node,
            f"persistent tape `{tape.name}` is created every {where} and never released; "
            f"`del {tape.name}` after its last `gradient` so the recorded tensors are freed",
        )
        relate_loop(report, context)

    def _escapes(self, tape: Tape) -> bool:
        """The tape is returned, yielded or stored for later: its owner releases it."""
        name = tape.name or ""
        for node in own_nodes(self.context.frame.node):
            if isinstance(node, cst.Return | cst.Yield | cst.Assign | cst.AugAssign):
                value = node.value
            elif isinstance(node, cst.Call) and method_call(node, STORE_METHODS) is not None:
                value = node
            else:
                continue
            if value is not None and bare_references(value, name):
                return True
        return False
