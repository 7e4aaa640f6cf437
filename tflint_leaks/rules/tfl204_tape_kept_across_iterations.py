from __future__ import annotations

import libcst as cst

from tflint_leaks.analysis.nodes import dotted, own_nodes
from tflint_leaks.analysis.tapes import Tape
from tflint_leaks.diagnostics import RelatedRole
from tflint_leaks.rulekit.rule import Invalid, Rule, Valid
from tflint_leaks.rules._calls import relate_loop
from tflint_leaks.rules._models import STORE_METHODS, method_call


class TapeKeptAcrossIterations(Rule):
    """
    ## What it does
    Flags a gradient tape created in a loop iteration and stored where it outlives the
    iteration: appended to a list (`tapes.append(tape)`), put in a dict, assigned to an attribute
    (`self.tape = tape`, or at once: `with tf.GradientTape() as self.tape:`), or assigned to
    a name that is used after the loop.

    ## Why is this bad?
    A tape holds every tensor it recorded until the tape itself is freed. Kept in a list, every
    step's activations stay alive and memory grows with the number of steps; kept in an
    attribute or an outer name, at least one step's worth stays alive for no reason.

    Not flagged: a tape used and dropped within its iteration, gradients (not tapes) kept
    across iterations (keeping every step's gradients is TFL502's), and files that turn eager
    execution off (graph mode: tapes record symbolic tensors while the graph is built).

    ## Example
    ```python
    import tensorflow as tf

    tapes = []
    for x in batches:
        with tf.GradientTape() as tape:
            loss = model(x)
        tapes.append(tape)
    ```

    ## Use instead
    ```python
    import tensorflow as tf

    total = None
    for x in batches:
        with tf.GradientTape() as tape:
            loss = model(x)
        grads = tape.gradient(loss, model.trainable_variables)
        total = grads if total is None else [t + g for t, g in zip(total, grads)]
    ```

    ## Guard it
    `tf_budget.iterations` (the pytest plugin's `tf_budget` fixture
    ([docs/budget.md](https://github.com/tflint-leaks/tflint-leaks/blob/main/docs/budget.md))) takes
    the batches and hands them to the loop, sampling between batches: a tape kept past its batch
    fails the test, naming `live GradientTapes` with their growth per batch (and `tensors held by
    gradient tapes`, while the kept tapes still hold what they recorded).
    ```python
    import tensorflow as tf

    w = tf.Variable(tf.ones([4, 1]))


    def summed_gradients(batches):
        total = None
        for x in batches:
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.matmul(x, w) ** 2)
            grads = tape.gradient(loss, [w])
            total = grads if total is None else [t + g for t, g in zip(total, grads)]
        return total


    def test_no_tape_outlives_its_batch(tf_budget):
        summed_gradients(tf_budget.iterations([tf.ones([8, 4])] * 20, warmup=3))
    ```

    ## References
    - [`tf.GradientTape`](https://www.tensorflow.org/api_docs/python/tf/GradientTape)
    - [sql-machine-learning/elasticdl#1144](https://github.com/sql-machine-learning/elasticdl/issues/1144)
    """

    VALID = (
        Valid("""
        import tensorflow as tf

        total = None
        for x in batches:
            with tf.GradientTape() as tape:
                loss = model(x)
            grads = tape.gradient(loss, model.trainable_variables)
            total = grads if total is None else [t + g for t, g in zip(total, grads)]
        """),
        Valid("""
        import tensorflow as tf

        for x in batches:
            with tf.GradientTape() as tape:
                loss = model(x)
            g = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(g, model.trainable_variables))
        """),
        Valid("""
        import tensorflow as tf

        class Trainer:
            def step(self, x):
                with tf.GradientTape() as tape:
                    loss = self.model(x)
                self.last_loss = loss
                return tape.gradient(loss, self.model.trainable_variables)
        """),
        Valid("""
        import tensorflow as tf

        for x in batches:
            with tf.GradientTape() as tape:
                y = model(x)
            current = tape
            print(current.gradient(y, model.trainable_variables))
        """),
        Valid("""
        import tensorflow as tf

        tapes = []
        with tf.GradientTape() as tape:
            y = model(x)
        tapes.append(tape)
        """),
        Valid("""
        import tensorflow as tf

        history = {}
        for step, x in enumerate(batches):
            with tf.GradientTape() as tape:
                loss = model(x)
            history[step] = float(loss)
        """),
        Valid("""
        import tensorflow as tf

        tf.compat.v1.disable_eager_execution()

        tapes = []
        for x in batches:
            with tf.GradientTape() as tape:
                loss = model(x)
            tapes.append(tape)
        """),
    )
    INVALID = (
        Invalid(
            """
            import tensorflow as tf

            tapes = []
            for x in batches:
                with tf.GradientTape() as tape:
                    loss = model(x)
                tapes.append(tape)
            """,
            7,
            5,
            7,
            23,
            "the tape `tape` made in this iteration is stored past it and keeps every tensor it "
            "recorded alive; store its gradients instead",
        ),
        Invalid(
            """
            import tensorflow as tf

            class Trainer:
                def fit(self, batches):
                    for x in batches:
                        with tf.GradientTape() as tape:
                            loss = self.model(x)
                        self.tape = tape
            """,
            8,
            13,
            8,
            29,
            "the tape `tape` made in this iteration is stored past it and keeps every tensor it "
            "recorded alive; store its gradients instead",
        ),
        Invalid(
            """
            import tensorflow as tf

            by_step = {}
            for step, x in enumerate(batches):
                tape = tf.GradientTape()
                with tape:
                    loss = model(x)
                by_step[step] = tape
            """,
            8,
            5,
            8,
            25,
            "the tape `tape` made in this iteration is stored past it and keeps every tensor it "
            "recorded alive; store its gradients instead",
        ),
        # reinforcement-learning-keras's actor-critic: the tape is an attribute from the start.
        Invalid(
            """
            import tensorflow as tf


            class Agent:
                def train(self, model, batches):
                    for x in batches:
                        with tf.GradientTape() as self._last_tape:
                            loss = model(x)
                        grads = self._last_tape.gradient(loss, model.trainable_variables)
            """,
            7,
            18,
            7,
            54,
            "the tape `self._last_tape` made in this iteration is stored past it and keeps "
            "every tensor it recorded alive; store its gradients instead",
        ),
        Invalid(
            """
            import tensorflow as tf

            def train(model, batches):
                for x in batches:
                    with tf.GradientTape() as tape:
                        loss = model(x)
                    last_tape = tape
                return last_tape.gradient(loss, model.trainable_variables)
            """,
            7,
            9,
            7,
            25,
            "the tape `tape` made in this iteration is stored past it and keeps every tensor it "
            "recorded alive; store its gradients instead",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not self.context.loops or method_call(node, STORE_METHODS) is None:
            return
        for arg in node.args:
            tape = self._loop_tape(dotted(arg.value))
            if tape is not None:
                self._report(node, tape)
                return

    def visit_WithItem(self, node: cst.WithItem) -> None:
        """``with tf.GradientTape() as self.tape:``: made in the iteration and stored on an
        object (or in a container) at once."""
        target = node.asname.name if node.asname is not None else None
        if not self.context.loops or not isinstance(target, cst.Attribute | cst.Subscript):
            return
        tape = self._loop_tape(dotted(target))
        if tape is not None:
            self._report(node, tape)

    def visit_Assign(self, node: cst.Assign) -> None:
        context = self.context
        if not context.loops or len(node.targets) != 1:
            return
        tape = self._loop_tape(dotted(node.value))
        if tape is None:
            return
        target = node.targets[0].target
        if isinstance(target, cst.Attribute | cst.Subscript) or (
            isinstance(target, cst.Name) and self._used_after_loop(target.value)
        ):
            self._report(node, tape)

    def _loop_tape(self, name: str | None) -> Tape | None:
        """The tape called ``name`` if an enclosing loop creates it, once per iteration (the
        rule runs in eager code only: in graph mode a tape records symbolic tensors while the
        graph is built)."""
        context = self.context
        if name is None:
            return None
        inside = {n for loop in context.loops for n in context.iteration_nodes(loop)}
        return next((t for t in context.tapes() if t.name == name and t.statement in inside), None)

    def _used_after_loop(self, name: str) -> bool:
        context = self.context
        inside = set(context.iteration_nodes(context.loops[0]))
        return any(
            isinstance(n, cst.Name) and n.value == name and n not in inside
            for n in own_nodes(context.frame.node)
        )

    def _report(self, node: cst.CSTNode, tape: Tape) -> None:
        report = self.report(
            node,
            f"the tape `{tape.name}` made in this iteration is stored past it and keeps every "
            "tensor it recorded alive; store its gradients instead",
        )
        report.relate(RelatedRole.TAPE, "created here", tape.statement)
        relate_loop(report, self.context)
