from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

from tflint_leaks.analysis.nodes import descendants, own_nodes
from tflint_leaks.analysis.tapes import Tape
from tflint_leaks.diagnostics import RelatedRole
from tflint_leaks.rulekit.context import InsertStatement
from tflint_leaks.rulekit.rule import Invalid, Rule, Valid
from tflint_leaks.rules._calls import relate_loop
from tflint_leaks.rules._models import STORE_METHODS, method_call
from tflint_leaks.rules._tapes import bare_references, mentions
from tflint_leaks.rules._traced import is_builtin


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
    call), a tape whose last use is the last thing its function or iteration does but for a
    test's checks (`assert`, `np.testing.assert_allclose(...)`, `self.assertEqual(...)`) and
    `print`s (`if verbose: print(...)`): it is released right after, a tape that is returned,
    stored or captured by a nested function (whoever holds it releases it), tapes inside a
    `tf.function` (they exist only while it traces), a single tape created once at module
    level, and files that turn eager execution off (graph mode: the tape records symbolic
    tensors once, while the graph is built).

    ## Example
    ```python
    import tensorflow as tf

    def train_step(x, y):
        with tf.GradientTape(persistent=True) as tape:
            loss_a, loss_b = model(x)
        grads_a = tape.gradient(loss_a, model.trainable_variables)
        grads_b = tape.gradient(loss_b, model.trainable_variables)
        optimizer.apply_gradients(zip(grads_a + grads_b, variables))
    ```

    ## Use instead
    ```python
    import tensorflow as tf

    def train_step(x, y):
        with tf.GradientTape(persistent=True) as tape:
            loss_a, loss_b = model(x)
        grads_a = tape.gradient(loss_a, model.trainable_variables)
        grads_b = tape.gradient(loss_b, model.trainable_variables)
        del tape
        optimizer.apply_gradients(zip(grads_a + grads_b, variables))
    ```

    ## Fix safety
    The fix inserts `del tape` right after the statement that holds the tape's last use in the
    block that creates it. It is unsafe: a use the linter cannot see (in a later block of the
    function, through `locals()` or `eval`, or a debugger) would then fail with `NameError`.

    ## Guard it
    What this costs is a peak inside each step: the step releases the tape when it returns, so a
    test around the step sees nothing grow with or without `del tape` (`tf_budget.iterations` passes
    both, as [docs/budget.md](https://github.com/tflint-leaks/tflint-leaks/blob/main/docs/budget.md)
    says). `tflint-leaks confirm` measures that peak: the bytes the tape still holds when the work
    after its last use starts, and through which lines. In the test suite, keep the rule itself as
    the guard:
    ```python
    from tflint_leaks.cli import main


    def test_persistent_tapes_are_released():
        assert main(["src/", "--select", "TFL201"]) == 0
    ```

    ## References
    - [`tf.GradientTape`: persistent tapes](https://www.tensorflow.org/api_docs/python/tf/GradientTape)
    - [tensorflow/tensorflow#32276](https://github.com/tensorflow/tensorflow/issues/32276)
    - [GPflow/GPflow#1142](https://github.com/GPflow/GPflow/issues/1142)
    """

    VALID = (
        # A Keras model's `train_step` runs inside the `tf.function` that `fit` makes: the
        # tape exists while it traces (GovindSuresh/CycleGan-tf, set Z30 of stop 53).
        Valid("""
        import tensorflow as tf


        class CycleGAN(tf.keras.Model):
            def train_step(self, data):
                real_x, real_y = data
                with tf.GradientTape(persistent=True) as tape:
                    fake_y = self.gen_g(real_x, training=True)
                    loss = self.loss_fn(real_y, fake_y)
                grads = tape.gradient(loss, self.gen_g.trainable_variables)
                self.opt.apply_gradients(zip(grads, self.gen_g.trainable_variables))
                return {"loss": loss}
        """),
        # xplique's gradient check: after the probes only a report, then the return.
        Valid("""
        import tensorflow as tf

        def gradients_flow(func, x, verbose=False):
            with tf.GradientTape(persistent=True) as tape:
                tape.watch(x)
                outputs = func(x)
            for output in outputs:
                if tape.gradient(output, x) is not None:
                    return True
            if verbose:
                print("no gradient reaches the input")
            return False
        """),
        # zfit's gradient test: after the tape's last use only the test's checks run.
        Valid("""
        import numpy as np
        import tensorflow as tf

        def test_gradients(f, x, expected):
            with tf.GradientTape(persistent=True) as tape:
                tape.watch(x)
                real, imag = f(x)
            grad_real = tape.gradient(real, x)
            grad_imag = tape.gradient(imag, x)
            assert np.all(np.isfinite(grad_real))
            np.testing.assert_allclose(grad_real, expected.real)
            np.testing.assert_allclose(grad_imag, expected.imag)
        """),
        Valid("""
        import tensorflow as tf

        def train_step(x, fine_tune):
            with tf.GradientTape(persistent=True) as tape:
                y = model(x)
            if fine_tune:
                grads = tape.gradient(y, head.trainable_variables)
            else:
                print("frozen")
                log_batch(x)
            return y
        """),
        Valid("""
        import tensorflow as tf

        def train_step(x, steps):
            with tf.GradientTape(persistent=True) as tape:
                y = model(x)
            for i in range(steps):
                grads = tape.gradient(y[i], model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
        """),
        Valid("""
        import tensorflow as tf

        def train_step(x):
            with tf.GradientTape(persistent=True) as tape:
                y = x * x
            dx = tape.gradient(y, x)
            del tape
            return dx
        """),
        Valid("""
        import tensorflow as tf

        def train_step(x):
            with tf.GradientTape() as tape:
                y = x * x
            return tape.gradient(y, x)
        """),
        Valid("""
        import tensorflow as tf

        @tf.function
        def train_step(x):
            with tf.GradientTape(persistent=True) as tape:
                y = x * x
            return tape.gradient(y, x), tape.gradient(y * y, x)
        """),
        Valid("""
        import tensorflow as tf

        def record(x):
            with tf.GradientTape(persistent=True) as tape:
                tape.watch(x)
                y = x * x
            return tape, y
        """),
        Valid("""
        import tensorflow as tf

        tape = tf.GradientTape(persistent=True)
        with tape:
            y = x * x
        print(tape.gradient(y, x))
        """),
        Valid("""
        import tensorflow as tf

        for batch in batches:
            tape = tf.GradientTape(persistent=True)
            with tape:
                loss = model(batch)
            grads = tape.gradient(loss, model.trainable_variables)
            del tape
        """),
        Valid("""
        import tensorflow as tf

        def jacobians(f, xs):
            with tf.GradientTape(persistent=True) as tape:
                y = f()
            return y, [tape.jacobian(y, x) for x in xs]
        """),
        Valid("""
        import tensorflow as tf

        def trace_estimate(ode_fn, state, samples):
            with tf.GradientTape(persistent=True) as tape:
                tape.watch(state)
                derivative = ode_fn(state)

            def estimate(sample):
                return sample * tape.gradient(derivative, state, sample)

            return tf.reduce_mean(tf.vectorized_map(estimate, samples), axis=0)
        """),
        Valid("""
        import tensorflow as tf

        def step(x, persistent):
            with tf.GradientTape(persistent=persistent) as tape:
                y = x * x
            return tape.gradient(y, x)
        """),
        Valid("""
        import tensorflow as tf

        tf.compat.v1.disable_eager_execution()

        def train_step(model, x, y):
            with tf.GradientTape(persistent=True) as tape:
                loss_a, loss_b = model(x)
            grads_a = tape.gradient(loss_a, model.trainable_variables)
            grads_b = tape.gradient(loss_b, model.trainable_variables)
            optimizer.apply_gradients(zip(grads_a + grads_b, model.trainable_variables * 2))
            return loss_a + loss_b
        """),
    )
    INVALID = (
        Invalid(
            """
            import tensorflow as tf

            def train_step(model, x):
                with tf.GradientTape(persistent=True) as tape:
                    loss_a, loss_b = model(x)
                grads = tape.gradient(loss_a, model.trainable_variables)
                grads += tape.gradient(loss_b, model.trainable_variables)
                print("step done")
                model.optimizer.apply_gradients(zip(grads, model.trainable_variables * 2))
            """,
            4,
            10,
            4,
            42,
            "persistent tape `tape` is created every call and stays alive after its last use "
            "while more work runs; `del tape` after its last `gradient`",
        ),
        # zfit's gradient test: a check, then the slow numerical gradient runs while the tape
        # still holds the recorded computation.
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            def test_gradients(f, x, numeric_gradient):
                with tf.GradientTape(persistent=True) as tape:
                    tape.watch(x)
                    y = f(x)
                grad = tape.gradient(y, x)
                assert np.all(np.isfinite(grad))
                expected = numeric_gradient(f, x)
                np.testing.assert_allclose(grad, expected)
            """,
            5,
            10,
            5,
            42,
            "persistent tape `tape` is created every call and stays alive after its last use "
            "while more work runs; `del tape` after its last `gradient`",
        ),
        Invalid(
            """
            import tensorflow as tf

            def train_step(model, x, y):
                with tf.GradientTape(persistent=True) as tape:
                    loss_a, loss_b = model(x)
                grads_a = tape.gradient(loss_a, model.trainable_variables)
                grads_b = tape.gradient(loss_b, model.trainable_variables)
                optimizer.apply_gradients(zip(grads_a + grads_b, model.trainable_variables * 2))
                return loss_a + loss_b
            """,
            4,
            10,
            4,
            42,
            "persistent tape `tape` is created every call and stays alive after its last use "
            "while more work runs; `del tape` after its last `gradient`",
            fixed="""
            import tensorflow as tf

            def train_step(model, x, y):
                with tf.GradientTape(persistent=True) as tape:
                    loss_a, loss_b = model(x)
                grads_a = tape.gradient(loss_a, model.trainable_variables)
                grads_b = tape.gradient(loss_b, model.trainable_variables)
                del tape
                optimizer.apply_gradients(zip(grads_a + grads_b, model.trainable_variables * 2))
                return loss_a + loss_b
            """,
        ),
        Invalid(
            """
            import tensorflow as tf

            for x in batches:
                with tf.GradientTape(persistent=True) as g:
                    g.watch(x)
                    y = x * x
                dy = g.gradient(y, x)
                updates.append(dy * learning_rate)
            """,
            4,
            10,
            4,
            42,
            "persistent tape `g` is created every iteration and stays alive after its last use "
            "while more work runs; `del g` after its last `gradient`",
        ),
        Invalid(
            """
            from tensorflow import GradientTape

            class Trainer:
                def step(self, x):
                    tape = GradientTape(persistent=True)
                    with tape:
                        y = self.model(x)
                    grads = [tape.gradient(y, v) for v in self.model.trainable_variables]
                    self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
            """,
            5,
            16,
            5,
            45,
            "persistent tape `tape` is created every call and stays alive after its last use "
            "while more work runs; `del tape` after its last `gradient`",
            fixed="""
            from tensorflow import GradientTape

            class Trainer:
                def step(self, x):
                    tape = GradientTape(persistent=True)
                    with tape:
                        y = self.model(x)
                    grads = [tape.gradient(y, v) for v in self.model.trainable_variables]
                    del tape
                    self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
            """,
        ),
        Invalid(
            """
            import tensorflow as tf

            def replay(batch):
                with tf.GradientTape(persistent=True) as tape:
                    critic_loss = critic_objective(batch)
                    alpha_loss = alpha_objective(batch)
                grads = tape.gradient(critic_loss, critic.trainable_variables)
                critic_optimizer.apply_gradients(zip(grads, critic.trainable_variables))
                if auto_alpha:
                    alpha_grads = tape.gradient(alpha_loss, [log_alpha])
                    alpha_optimizer.apply_gradients(zip(alpha_grads, [log_alpha]))
            """,
            4,
            10,
            4,
            42,
            "persistent tape `tape` is created every call and stays alive after its last use "
            "while more work runs; `del tape` after its last `gradient`",
            fixed="""
            import tensorflow as tf

            def replay(batch):
                with tf.GradientTape(persistent=True) as tape:
                    critic_loss = critic_objective(batch)
                    alpha_loss = alpha_objective(batch)
                grads = tape.gradient(critic_loss, critic.trainable_variables)
                critic_optimizer.apply_gradients(zip(grads, critic.trainable_variables))
                if auto_alpha:
                    alpha_grads = tape.gradient(alpha_loss, [log_alpha])
                    del tape
                    alpha_optimizer.apply_gradients(zip(alpha_grads, [log_alpha]))
            """,
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
                return tf.reduce_mean(tf.square(u_t - u_x))
            """,
            4,
            10,
            4,
            42,
            "persistent tape `tape` is created every call and stays alive after its last use "
            "while more work runs; `del tape` after its last `gradient`",
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
        found = self._work_after_last_use(tape)
        if found is None:
            return
        last_use, work = found
        where = "iteration" if context.loops else "call"
        report = self.report(
            node,
            f"persistent tape `{tape.name}` is created every {where} and stays alive after its "
            f"last use while more work runs; `del {tape.name}` after its last `gradient`",
        )
        report.relate(RelatedRole.TAPE, "still alive here", work)
        report.with_fix(
            f"Delete `{tape.name}` after its last use",
            [(last_use, InsertStatement(f"del {tape.name}", after=True))],
        )
        relate_loop(report, context)

    def _escapes(self, tape: Tape) -> bool:
        """The tape is returned, yielded, stored for later or captured by a nested function:
        whoever holds it decides when it is released."""
        name = tape.name or ""
        for node in own_nodes(self.context.frame.node):
            if isinstance(node, cst.FunctionDef | cst.Lambda | cst.ClassDef):
                if any(isinstance(n, cst.Name) and n.value == name for n in descendants(node)):
                    return True
                continue
            if isinstance(node, cst.Return | cst.Yield | cst.Assign | cst.AugAssign):
                value = node.value
            elif isinstance(node, cst.Call) and method_call(node, STORE_METHODS) is not None:
                value = node
            else:
                continue
            if value is not None and bare_references(value, name):
                return True
        return False

    def _work_after_last_use(self, tape: Tape) -> tuple[cst.CSTNode, cst.CSTNode] | None:
        """The statement holding the tape's last use in the block that creates the tape, and
        the first statement after it that calls something: the tape and everything it recorded
        are still alive while that runs."""
        found = _block_of(self.context.frame.node, tape.statement)
        if found is None:
            return None
        body, start = found
        return _work_after(body, start, tape.name or "", self._reports)

    def _reports(self, call: cst.Call) -> bool:
        """The call only reports: the builtin ``print``, which holds nothing of what the tape
        recorded while it runs (``if verbose: print("no finite gradients")``)."""
        return is_builtin(self.context, call.func, "print")


def _work_after(
    body: Sequence[cst.BaseStatement],
    start: int,
    name: str,
    reports: Callable[[cst.Call], bool],
    *,
    opening: bool = True,
) -> tuple[cst.CSTNode, cst.CSTNode] | None:
    """In ``body`` from ``start``: the statement holding the last use of ``name`` and the first
    statement after it that calls something that does more than report (``reports``). When
    nothing follows, the last use may sit in a
    branch (an ``if``, ``with`` or ``try`` block) with work after it there, as in ``if
    auto_alpha: grad = tape.gradient(...); optimizer.apply_gradients(...)``; a loop's body is not
    entered (its next iteration may use the tape again)."""
    # A statement that binds the name again ends this tape's life: it is the last that runs
    # while the tape is alive (``with tf.GradientTape(...) as tape:`` again records anew).
    end = next((i for i in range(start + 1, len(body)) if _binds(body[i], name)), len(body))
    uses = [index for index in range(start, end) if mentions(body[index], name)]
    if not uses and not opening:
        return None
    last = uses[-1] if uses else start
    for stmt in body[last + 1 : end + 1]:
        if isinstance(stmt, cst.SimpleStatementLine) and all(
            isinstance(small, cst.Del | cst.Pass) or _check(small) for small in stmt.body
        ):
            continue
        if any(isinstance(n, cst.Call) and not reports(n) for n in own_nodes(stmt)):
            return body[last], stmt
    if opening and last == start:
        return None  # the block that opens the tape: its uses are recorded, not released
    for block in _branches(body[last]):
        inner = [s for s in block if isinstance(s, cst.BaseStatement)]
        found = _work_after(inner, 0, name, reports, opening=False)
        if found is not None:
            return found
    return None


def _binds(statement: cst.BaseStatement, name: str) -> bool:
    """``statement`` binds ``name`` (``name = ...``, ``with ... as name:``, ``for name in``)."""
    for node in own_nodes(statement):
        target = None
        if isinstance(node, cst.AssignTarget | cst.AnnAssign | cst.AugAssign | cst.For):
            target = node.target
        elif isinstance(node, cst.AsName):
            target = node.name
        if isinstance(target, cst.Name) and target.value == name:
            return True
    return False


def _check(statement: cst.BaseSmallStatement) -> bool:
    """An ``assert`` or a call of an assertion (``np.testing.assert_allclose(...)``,
    ``self.assertEqual(...)``, ``tf.debugging.assert_near(...)``): a test's checks, which end
    it, not work that runs while the tape holds what it recorded."""
    if isinstance(statement, cst.Assert):
        return True
    if not (isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call)):
        return False
    func = statement.value.func
    name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
    return isinstance(name, str) and name.startswith("assert")


def _branches(
    statement: cst.BaseStatement,
) -> list[Sequence[cst.BaseStatement | cst.BaseSmallStatement]]:
    """The statement blocks of an ``if`` (its ``elif`` and ``else`` too), ``with`` or ``try``."""
    blocks: list[Sequence[cst.BaseStatement | cst.BaseSmallStatement]] = []
    node: cst.CSTNode | None = statement
    while isinstance(node, cst.If):
        blocks.append(node.body.body)
        node = node.orelse
    if isinstance(node, cst.Else | cst.With):
        blocks.append(node.body.body)
    elif isinstance(node, cst.Try):
        blocks.append(node.body.body)
        blocks.extend(handler.body.body for handler in node.handlers)
        if node.orelse is not None:
            blocks.append(node.orelse.body.body)
        if node.finalbody is not None:
            blocks.append(node.finalbody.body.body)
    return blocks


def _block_of(
    scope: cst.CSTNode, statement: cst.CSTNode
) -> tuple[Sequence[cst.BaseStatement], int] | None:
    """The statement list (a function, loop, ``if`` or ``with`` body) holding ``statement``
    (a ``with``, or an assignment within a line), and the statement's index in it."""
    for node in (scope, *own_nodes(scope)):
        body = getattr(node, "body", None)
        if not isinstance(body, tuple | list):
            continue
        for index, stmt in enumerate(body):
            if stmt is statement or (
                isinstance(stmt, cst.SimpleStatementLine)
                and any(small is statement for small in stmt.body)
            ):
                return [s for s in body if isinstance(s, cst.BaseStatement)], index
    return None
