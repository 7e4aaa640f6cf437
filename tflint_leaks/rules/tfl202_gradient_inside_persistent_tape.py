from __future__ import annotations

import libcst as cst

from tflint_leaks.analysis.keras import GRADIENT_METHODS
from tflint_leaks.analysis.nodes import dotted, own_nodes
from tflint_leaks.diagnostics import RelatedRole
from tflint_leaks.rulekit.rule import Invalid, Rule, Valid
from tflint_leaks.rules._models import method_call
from tflint_leaks.rules._tapes import mentions

_STOP_RECORDING = frozenset({"stop_recording"})


class GradientInsidePersistentTape(Rule):
    """
    ## What it does
    Flags `tape.gradient(...)`, `tape.jacobian(...)` or `tape.batch_jacobian(...)` called inside
    the `with` block of the same persistent tape.

    ## Why is this bad?
    A persistent tape keeps recording inside its block, so it records the gradient computation
    itself: every backward op and its intermediate tensors are kept on the tape, roughly doubling
    its memory and slowing each later `gradient` call. TensorFlow logs a warning ("Calling
    GradientTape.gradient on a persistent tape inside its context is significantly less efficient
    than calling it outside the context").

    Not flagged: a non-persistent tape (TensorFlow stops recording before computing the
    gradient), higher-order derivatives (a gradient that the same or another tape differentiates
    again, nested tapes), and calls inside `with tape.stop_recording():`.

    ## Example
    ```python
    with tf.GradientTape(persistent=True) as tape:
        loss = model(x)
        grads = tape.gradient(loss, model.trainable_variables)
    ```

    ## Use instead
    ```python
    with tf.GradientTape(persistent=True) as tape:
        loss = model(x)
    grads = tape.gradient(loss, model.trainable_variables)
    ```

    ## References
    - [`tf.GradientTape.gradient`](https://www.tensorflow.org/api_docs/python/tf/GradientTape#gradient)
    - [`tf.GradientTape.stop_recording`](https://www.tensorflow.org/api_docs/python/tf/GradientTape#stop_recording)
    """

    VALID = (
        Valid("""
        import tensorflow as tf

        def step(x):
            with tf.GradientTape(persistent=True) as tape:
                y = x * x
            dy = tape.gradient(y, x)
            del tape
            return dy
        """),
        Valid("""
        import tensorflow as tf

        def step(x):
            with tf.GradientTape() as tape:
                y = x * x
                dy = tape.gradient(y, x)
            return dy
        """),
        Valid("""
        import tensorflow as tf

        def second_derivative(x):
            with tf.GradientTape() as outer:
                with tf.GradientTape() as inner:
                    y = x * x * x
                dy = inner.gradient(y, x)
            return outer.gradient(dy, x)
        """),
        Valid("""
        import tensorflow as tf

        def hessian_diag(x):
            with tf.GradientTape(persistent=True) as tape:
                y = tf.reduce_sum(x ** 3)
                dy = tape.gradient(y, x)
            d2y = tape.gradient(dy, x)
            del tape
            return d2y
        """),
        Valid("""
        import tensorflow as tf

        def step(x):
            with tf.GradientTape(persistent=True) as tape:
                y = x * x
                with tape.stop_recording():
                    dy = tape.gradient(y, x)
            del tape
            return dy
        """),
        Valid("""
        import tensorflow as tf

        def laplacian(model, x):
            with tf.GradientTape() as outer:
                outer.watch(x)
                with tf.GradientTape(persistent=True) as inner:
                    inner.watch(x)
                    u = model(x)
                    u_x = inner.gradient(u, x)
                del inner
            return outer.gradient(u_x, x)
        """),
    )
    INVALID = (
        Invalid(
            """
            import tensorflow as tf

            def step(model, x):
                with tf.GradientTape(persistent=True) as tape:
                    loss = model(x)
                    grads = tape.gradient(loss, model.trainable_variables)
                del tape
                return grads
            """,
            6,
            17,
            6,
            63,
            "`tape.gradient` inside the persistent tape's `with` block is recorded on the tape "
            "itself; call it after the block",
        ),
        Invalid(
            """
            import tensorflow as tf

            def jac(f, x):
                tape = tf.GradientTape(persistent=True)
                with tape:
                    y = f(x)
                    j = tape.jacobian(y, x)
                del tape
                return j
            """,
            7,
            13,
            7,
            32,
            "`tape.jacobian` inside the persistent tape's `with` block is recorded on the tape "
            "itself; call it after the block",
        ),
        Invalid(
            """
            from tensorflow import GradientTape

            def losses(model, x, y):
                with GradientTape(persistent=True) as g:
                    pred = model(x)
                    for loss_fn in (mse, mae):
                        print(g.gradient(loss_fn(y, pred), model.trainable_variables))
                del g
            """,
            7,
            19,
            7,
            74,
            "`g.gradient` inside the persistent tape's `with` block is recorded on the tape "
            "itself; call it after the block",
        ),
        Invalid(
            """
            import tensorflow as tf

            def per_example(x):
                with tf.GradientTape(persistent=True) as tape:
                    tape.watch(x)
                    y = tf.sin(x)
                    out = tape.batch_jacobian(y, x)
                    print(out.shape)
                del tape
                return out
            """,
            7,
            15,
            7,
            40,
            "`tape.batch_jacobian` inside the persistent tape's `with` block is recorded on the "
            "tape itself; call it after the block",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        receiver = method_call(node, GRADIENT_METHODS)
        if receiver is None:
            return
        name = dotted(receiver)
        block = context.recording(name) if name is not None else None
        if block is None or not block.tape.persistent or name in self._stopped():
            return
        if self._passed_to_gradient() or self._differentiated_again(node):
            return
        report = self.report(
            node,
            f"`{name}.{_method(node)}` inside the persistent tape's `with` block is recorded on "
            "the tape itself; call it after the block",
        )
        report.relate(RelatedRole.TAPE, f"`{name}` records in this block", block.node)

    def _stopped(self) -> set[str | None]:
        """Tapes whose recording an enclosing ``with tape.stop_recording():`` pauses."""
        return {
            dotted(receiver)
            for block in self.context.open_withs()
            for item in block.items
            if isinstance(item.item, cst.Call)
            and (receiver := method_call(item.item, _STOP_RECORDING)) is not None
        }

    def _passed_to_gradient(self) -> bool:
        """The call is an argument of another gradient call (``tape.gradient(t.gradient(...))``)."""
        ancestors = self.context.ancestors
        return (
            len(ancestors) > 2
            and isinstance(ancestors[-2], cst.Arg)
            and isinstance(ancestors[-3], cst.Call)
            and method_call(ancestors[-3], GRADIENT_METHODS) is not None
        )

    def _differentiated_again(self, node: cst.Call) -> bool:
        """The result is differentiated by a later gradient call (a higher-order derivative)."""
        parent = self.context.parent
        if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1):
            return False
        result = dotted(parent.targets[0].target)
        if result is None:
            return False
        return any(
            isinstance(other, cst.Call)
            and other is not node
            and method_call(other, GRADIENT_METHODS) is not None
            and bool(other.args)
            and mentions(other.args[0].value, result)
            for other in own_nodes(self.context.frame.node)
        )


def _method(node: cst.Call) -> str:
    assert isinstance(node.func, cst.Attribute)
    return node.func.attr.value
