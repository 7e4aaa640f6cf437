from __future__ import annotations

import libcst as cst

from tflint_leaks.analysis.keras import GRADIENT_METHODS
from tflint_leaks.analysis.scope import dotted, own_nodes
from tflint_leaks.engine.relevance import Triggers
from tflint_leaks.rules._models import method_call
from tflint_leaks.rules._tapes import TapeBlocks, mentions
from tflint_leaks.rules.base import Invalid, Rule

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

    code = "TFL202"
    name = "gradient-inside-persistent-tape"
    summary = "`gradient` is called inside a persistent tape's `with` block"
    TRIGGERS = Triggers(names=frozenset({"GradientTape"}))

    VALID = (
        """
        import tensorflow as tf

        def step(x):
            with tf.GradientTape(persistent=True) as tape:
                y = x * x
            dy = tape.gradient(y, x)
            del tape
            return dy
        """,
        """
        import tensorflow as tf

        def step(x):
            with tf.GradientTape() as tape:
                y = x * x
                dy = tape.gradient(y, x)
            return dy
        """,
        """
        import tensorflow as tf

        def second_derivative(x):
            with tf.GradientTape() as outer:
                with tf.GradientTape() as inner:
                    y = x * x * x
                dy = inner.gradient(y, x)
            return outer.gradient(dy, x)
        """,
        """
        import tensorflow as tf

        def hessian_diag(x):
            with tf.GradientTape(persistent=True) as tape:
                y = tf.reduce_sum(x ** 3)
                dy = tape.gradient(y, x)
            d2y = tape.gradient(dy, x)
            del tape
            return d2y
        """,
        """
        import tensorflow as tf

        def step(x):
            with tf.GradientTape(persistent=True) as tape:
                y = x * x
                with tape.stop_recording():
                    dy = tape.gradient(y, x)
            del tape
            return dy
        """,
        """
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
        """,
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
        ),
    )

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._blocks = TapeBlocks(self.context)
        self._stopped: list[str | None] = []
        #: Result names of calls (``dy = tape.gradient(...)``), by ``id`` of the call.
        self._targets: dict[int, str] = {}
        #: Gradient calls passed straight into another gradient call.
        self._nested: set[int] = set()

    def visit_With(self, node: cst.With) -> None:
        self._blocks.enter(node)
        stopped = None
        for item in node.items:
            receiver = (
                method_call(item.item, _STOP_RECORDING) if isinstance(item.item, cst.Call) else None
            )
            if receiver is not None:
                stopped = dotted(receiver)
        self._stopped.append(stopped)

    def leave_With(self, original_node: cst.With) -> None:
        self._blocks.leave()
        self._stopped.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1:
            name = dotted(node.targets[0].target)
            if name is not None:
                self._targets[id(node.value)] = name

    def visit_Call(self, node: cst.Call) -> None:
        receiver = method_call(node, GRADIENT_METHODS)
        if receiver is None:
            return
        for arg in node.args:
            if isinstance(arg.value, cst.Call):
                self._nested.add(id(arg.value))
        name = dotted(receiver)
        block = self._blocks.recording(name) if name is not None else None
        if block is None or not block.tape.persistent or name in self._stopped:
            return
        if id(node) in self._nested or self._differentiated_again(node):
            return
        report = self.report(
            node,
            f"`{name}.{_method(node)}` inside the persistent tape's `with` block is recorded on "
            "the tape itself; call it after the block",
        )
        report.relate("tape", f"`{name}` records in this block", block.node)

    def _differentiated_again(self, node: cst.Call) -> bool:
        """The result is differentiated by a later gradient call (a higher-order derivative)."""
        result = self._targets.get(id(node))
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
