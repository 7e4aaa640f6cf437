from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise

import libcst as cst

from tflint_leaks.analysis.keras import GRADIENT_METHODS
from tflint_leaks.analysis.nodes import dotted, own_nodes
from tflint_leaks.analysis.scope import Assignment
from tflint_leaks.diagnostics import RelatedRole
from tflint_leaks.rulekit.context import TapeBlock
from tflint_leaks.rulekit.rule import Invalid, Rule, Valid
from tflint_leaks.rules._models import method_call

_STOP_RECORDING = frozenset({"stop_recording"})
#: Optimizer calls that update variables from gradients.
_UPDATES = frozenset({"apply_gradients"})


class GradientInsidePersistentTape(Rule):
    """
    ## What it does
    Flags `tape.gradient(...)`, `tape.jacobian(...)` or `tape.batch_jacobian(...)` called inside
    the `with` block of the same persistent tape, and a `gradient` (or jacobian) or an
    `optimizer.apply_gradients(...)` that runs while another tape is still recording: inside
    the block of a persistent tape, or of a non-persistent one that has not taken its own
    gradient yet (the GAN step with the generator's and the discriminator's tapes opened in one
    `with`, whose first `gradient` is recorded by the other tape).

    ## Why is this bad?
    A tape records every operation on watched tensors while its block runs, so a tape still
    recording records the gradient computation (or the optimizer update) too: every backward op
    and its intermediate tensors are kept on the tape, roughly doubling its memory and slowing
    its own `gradient` call, on every training step. For its own persistent tape TensorFlow logs
    a warning ("Calling GradientTape.gradient on a persistent tape inside its context is
    significantly less efficient than calling it outside the context"); for another tape
    nothing warns.

    Not flagged: a non-persistent tape's own gradient (TensorFlow stops the tape before
    computing it, and the tape records nothing after that), higher-order derivatives and
    gradient penalties (a result that the recording tape differentiates later, directly or
    through the values computed from it, unpacked or item by item in a comprehension: nested
    tapes, Hessians, WGAN-GP), calls inside
    `with tape.stop_recording():`, gradients taken after the block, code inside a `tf.function`,
    and files that turn eager execution off. In graph mode a tape records only while the graph
    is built, and the graph is the same whichever tape recorded the backward pass (measured with
    TensorFlow 2.21: a `tf.function` taking a persistent tape's gradient inside its block and
    one taking it after the block trace to graphs of the same 35 operations).

    ## Example
    ```python
    import tensorflow as tf

    with tf.GradientTape(persistent=True) as tape:
        loss = model(x)
        grads = tape.gradient(loss, model.trainable_variables)
    ```

    ## Use instead
    ```python
    import tensorflow as tf

    with tf.GradientTape(persistent=True) as tape:
        loss = model(x)
    grads = tape.gradient(loss, model.trainable_variables)
    ```

    ## Guard it
    What this costs happens inside each step (the tape records the backward pass too, and releases
    it all when the step ends), so a test around the step sees nothing grow. `tflint-leaks confirm`
    measures it: what a recording tape adds while the flagged call runs. In the test suite, keep the
    rule itself as the guard:
    ```python
    from tflint_leaks.cli import main


    def test_gradients_are_taken_after_the_tape_block():
        assert main(["src/", "--select", "TFL202"]) == 0
    ```

    ## References
    - [`tf.GradientTape.gradient`](https://www.tensorflow.org/api_docs/python/tf/GradientTape#gradient)
    - [`tf.GradientTape.stop_recording`](https://www.tensorflow.org/api_docs/python/tf/GradientTape#stop_recording)
    """

    VALID = (
        # A tutorial notebook's second derivative, at the top level: the outer tape
        # differentiates the inner gradient after its block.
        Valid("""
        import tensorflow as tf

        x = tf.Variable(1.0)

        with tf.GradientTape() as t1:
            with tf.GradientTape() as t2:
                y = x * x * x
            dy_dx = t2.gradient(y, x)
        d2y_d2x = t1.gradient(dy_dx, x)
        """),
        Valid("""
        import tensorflow as tf

        def step(x):
            with tf.GradientTape(persistent=True) as tape:
                y = x * x
            dy = tape.gradient(y, x)
            del tape
            return dy
        """),
        # Hands-On ML's Hessians: the outer tape differentiates each item of the inner
        # tape's gradients, one at a time in a comprehension.
        Valid("""
        import tensorflow as tf

        w1, w2 = tf.Variable(5.0), tf.Variable(3.0)
        with tf.GradientTape(persistent=True) as hessian_tape:
            with tf.GradientTape() as jacobian_tape:
                z = 3 * w1 ** 2 + 2 * w1 * w2
            jacobians = jacobian_tape.gradient(z, [w1, w2])
        hessians = [hessian_tape.gradient(jacobian, [w1, w2]) for jacobian in jacobians]
        del hessian_tape
        """),
        # Its second derivatives with one persistent tape: the gradients taken inside the
        # block, unpacked into two names, are differentiated after it.
        Valid("""
        import tensorflow as tf

        x, y = tf.Variable(3.0), tf.Variable(4.0)
        with tf.GradientTape(persistent=True) as tape:
            f = x * x * y + y + 2
            df_dx, df_dy = tape.gradient(f, [x, y])
        d2f_d2x, d2f_dydx = tape.gradient(df_dx, [x, y])
        d2f_dxdy, d2f_d2y = tape.gradient(df_dy, [x, y])
        del tape
        """),
        # PINN_TF2's Navier-Stokes residual (set Z38 of stop 54): the same, two statements to
        # a line.
        Valid("""
        import tensorflow as tf

        def pde(model, x, y):
            with tf.GradientTape(persistent=True) as tp:
                tp.watch(x)
                tp.watch(y)
                u = model(tf.concat([x, y], 1))
                u_x = tp.gradient(u, x); u_y = tp.gradient(u, y)
            u_xx = tp.gradient(u_x, x); u_yy = tp.gradient(u_y, y)
            del tp
            return u_xx + u_yy
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
        Valid("""
        import tensorflow as tf

        def train_step(images, noise):
            with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
                fake = generator(noise, training=True)
                gen_loss = generator_loss(discriminator(fake, training=True))
                disc_loss = discriminator_loss(discriminator(images), discriminator(fake))
            gen_grads = gen_tape.gradient(gen_loss, generator.trainable_variables)
            disc_grads = disc_tape.gradient(disc_loss, discriminator.trainable_variables)
            gen_opt.apply_gradients(zip(gen_grads, generator.trainable_variables))
            disc_opt.apply_gradients(zip(disc_grads, discriminator.trainable_variables))
        """),
        # Both tapes of the `with` differentiate the loss the penalty flows into.
        Valid("""
        import tensorflow as tf

        def joint_step(latent):
            with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
                images = generator(latent)
                with tf.GradientTape() as inner:
                    inner.watch(images)
                    critique = discriminator(images)
                objective = tf.reduce_mean(critique) + tf.norm(inner.gradient(critique, images))
            g_grads = g_tape.gradient(objective, generator.trainable_variables)
            d_grads = d_tape.gradient(objective, discriminator.trainable_variables)
        """),
        Valid("""
        import tensorflow as tf

        def critic_step(real, fake):
            with tf.GradientTape() as critic_tape:
                alpha = tf.random.uniform([tf.shape(real)[0], 1])
                mixed = alpha * real + (1.0 - alpha) * fake
                with tf.GradientTape() as penalty_tape:
                    penalty_tape.watch(mixed)
                    mixed_scores = critic(mixed, training=True)
                grads = penalty_tape.gradient(mixed_scores, mixed)
                penalty = tf.reduce_mean((tf.norm(grads, axis=1) - 1.0) ** 2)
                loss = tf.reduce_mean(critic(fake)) - tf.reduce_mean(critic(real)) + 10 * penalty
            critic_grads = critic_tape.gradient(loss, critic.trainable_variables)
            optimizer.apply_gradients(zip(critic_grads, critic.trainable_variables))
        """),
        Valid("""
        import tensorflow as tf

        def discriminator_step(real, fake):
            alpha = tf.random.uniform([tf.shape(real)[0], 1, 1, 1], 0.0, 1.0)
            mixed = alpha * real + (1 - alpha) * fake
            with tf.GradientTape() as tape:
                d_loss = tf.reduce_mean(critic(fake)) - tf.reduce_mean(critic(real))
                with tf.GradientTape() as gp_tape:
                    gp_tape.watch(mixed)
                    mixed_output = critic(mixed, training=True)
                grads = gp_tape.gradient(mixed_output, [mixed])[0]
                norm = tf.sqrt(tf.reduce_sum(tf.square(grads), axis=[1, 2, 3]))
                d_loss += 10.0 * tf.reduce_mean((norm - 1.0) ** 2)
            d_grads = tape.gradient(d_loss, critic.trainable_weights)
            optimizer.apply_gradients(zip(d_grads, critic.trainable_weights))
        """),
        Valid("""
        import tensorflow as tf

        def step(x, y):
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
        """),
        Valid("""
        import tensorflow as tf

        def train_step(images, noise):
            with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
                fake = generator(noise, training=True)
                gen_loss = generator_loss(discriminator(fake, training=True))
                disc_loss = discriminator_loss(discriminator(images), discriminator(fake))
                with disc_tape.stop_recording():
                    gen_grads = gen_tape.gradient(gen_loss, generator.trainable_variables)
                disc_grads = disc_tape.gradient(disc_loss, discriminator.trainable_variables)
            gen_opt.apply_gradients(zip(gen_grads, generator.trainable_variables))
            disc_opt.apply_gradients(zip(disc_grads, discriminator.trainable_variables))
        """),
        Valid("""
        import tensorflow as tf

        def meta_step(model, tasks, meta_optimizer):
            with tf.GradientTape() as outer:
                meta_loss = 0.0
                for x, y in tasks:
                    with tf.GradientTape() as inner:
                        loss = loss_fn(y, model(x))
                    grads = inner.gradient(loss, model.trainable_variables)
                    fast = [w - 0.01 * g for w, g in zip(model.trainable_variables, grads)]
                    meta_loss += loss_fn(y, model.call_with(fast, x))
            meta_grads = outer.gradient(meta_loss, model.trainable_variables)
            meta_optimizer.apply_gradients(zip(meta_grads, model.trainable_variables))
        """),
        Valid("""
        import tensorflow as tf

        @tf.function
        def train_step(images, noise):
            with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
                fake = generator(noise, training=True)
                gen_loss = generator_loss(discriminator(fake, training=True))
                disc_loss = discriminator_loss(discriminator(images), discriminator(fake))
                gen_grads = gen_tape.gradient(gen_loss, generator.trainable_variables)
                disc_grads = disc_tape.gradient(disc_loss, discriminator.trainable_variables)
            gen_opt.apply_gradients(zip(gen_grads, generator.trainable_variables))
            disc_opt.apply_gradients(zip(disc_grads, discriminator.trainable_variables))
        """),
        Valid("""
        import tensorflow as tf

        tf.compat.v1.disable_eager_execution()

        def step(model, x):
            with tf.GradientTape(persistent=True) as tape:
                loss = model(x)
                grads = tape.gradient(loss, model.trainable_variables)
            del tape
            return grads
        """),
    )
    INVALID = (
        # PGGAN's step (unseen set Z2): the penalty is the discriminator tape's on purpose,
        # but the generator tape, opened in the same `with`, records its backward pass for
        # nothing (it differentiates only the generator loss).
        Invalid(
            """
            import tensorflow as tf

            def train_step(real, noise):
                with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
                    fake = generator(noise)
                    with tf.GradientTape() as gp_tape:
                        gp_tape.watch(fake)
                        scores = discriminator(fake)
                    penalty = gp_tape.gradient(scores, fake)
                    disc_loss = tf.reduce_mean(discriminator(real)) + tf.reduce_mean(penalty)
                    gen_loss = -tf.reduce_mean(scores)
                gen_grads = gen_tape.gradient(gen_loss, generator.trainable_variables)
                disc_grads = disc_tape.gradient(disc_loss, discriminator.trainable_variables)
            """,
            9,
            19,
            9,
            49,
            "`gp_tape.gradient` runs while `gen_tape` is still recording (inside its `with` "
            "block): `gen_tape` records the backward pass too; call it after the block",
        ),
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
        Invalid(
            """
            import tensorflow as tf

            def train_step(images, noise):
                with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
                    fake = generator(noise, training=True)
                    gen_loss = generator_loss(discriminator(fake, training=True))
                    disc_loss = discriminator_loss(discriminator(images), discriminator(fake))
                    gen_grads = gen_tape.gradient(gen_loss, generator.trainable_variables)
                    disc_grads = disc_tape.gradient(disc_loss, discriminator.trainable_variables)
                gen_opt.apply_gradients(zip(gen_grads, generator.trainable_variables))
                disc_opt.apply_gradients(zip(disc_grads, discriminator.trainable_variables))
            """,
            8,
            21,
            8,
            79,
            "`gen_tape.gradient` runs while `disc_tape` is still recording (inside its `with` "
            "block): `disc_tape` records the backward pass too; call it after the block",
        ),
        Invalid(
            """
            import tensorflow as tf

            def train(dataset):
                for x, y in dataset:
                    with tf.GradientTape(persistent=True) as tape:
                        loss = loss_fn(y, model(x, training=True))
                        with tape.stop_recording():
                            grads = tape.gradient(loss, model.trainable_variables)
                        optimizer.apply_gradients(zip(grads, model.trainable_variables))
                    del tape
            """,
            9,
            13,
            9,
            77,
            "`optimizer.apply_gradients` runs while `tape` is still recording (inside its `with` "
            "block): `tape` records the update too; call it after the block",
        ),
        Invalid(
            """
            import tensorflow as tf

            def actor_critic_step(states, returns):
                with tf.GradientTape() as critic_tape:
                    values = critic(states)
                    with tf.GradientTape() as actor_tape:
                        log_probs = actor(states)
                        actor_loss = -tf.reduce_mean(log_probs * (returns - values))
                    actor_grads = actor_tape.gradient(actor_loss, actor.trainable_variables)
                    critic_loss = tf.reduce_mean((returns - values) ** 2)
                actor_opt.apply_gradients(zip(actor_grads, actor.trainable_variables))
                critic_grads = critic_tape.gradient(critic_loss, critic.trainable_variables)
                critic_opt.apply_gradients(zip(critic_grads, critic.trainable_variables))
            """,
            9,
            23,
            9,
            81,
            "`actor_tape.gradient` runs while `critic_tape` is still recording (inside its "
            "`with` block): `critic_tape` records the backward pass too; call it after the block",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        receiver = method_call(node, GRADIENT_METHODS)
        name = dotted(receiver) if receiver is not None else None
        if receiver is None and method_call(node, _UPDATES) is None:
            return
        if self.context.in_tf_function:
            return  # graph mode: the tape records while tracing, into the same graph
        if self._passed_to_gradient() or self._own_persistent_tape(node, name):
            return
        stopped = self._stopped()
        for block in reversed(self.context.tape_blocks()):
            other = block.tape.name
            if other is None or other == name or other in stopped:
                continue
            if not block.tape.persistent and self._gradient_taken_before(block, other):
                continue  # a non-persistent tape stops recording at its own gradient
            if self._differentiated_by(node, other):
                continue  # recorded on purpose by this tape; another may record it for nothing
            what = "the backward pass" if receiver is not None else "the update"
            report = self.report(
                node,
                f"`{_callee(node)}` runs while `{other}` is still recording (inside its `with` "
                f"block): `{other}` records {what} too; call it after the block",
            )
            report.relate(RelatedRole.TAPE, f"`{other}` records in this block", block.node)
            return

    def _own_persistent_tape(self, node: cst.Call, name: str | None) -> bool:
        """Report a gradient taken inside its own persistent tape's block (True when the call
        is one, reported or not: the other tapes are not considered then)."""
        context = self.context
        block = context.recording(name) if name is not None else None
        if block is None or not block.tape.persistent or name in self._stopped():
            return False
        if self._differentiated_by(node, None):
            return True
        report = self.report(
            node,
            f"`{name}.{_method(node)}` inside the persistent tape's `with` block is recorded on "
            "the tape itself; call it after the block",
        )
        report.relate(RelatedRole.TAPE, f"`{name}` records in this block", block.node)
        return True

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

    def _gradient_taken_before(self, block: TapeBlock, tape: str) -> bool:
        """``tape.gradient(...)`` (or a jacobian) runs in the block before the current
        statement."""
        ancestors = self.context.ancestors
        inside = ancestors[ancestors.index(block.node) :]
        for parent, child in pairwise(inside):
            if not isinstance(parent, cst.IndentedBlock):
                continue
            for statement in parent.body:
                if statement is child:
                    break
                if any(_takes_gradient(n, tape) for n in (statement, *own_nodes(statement))):
                    return True
        return False

    def _differentiated_by(self, node: cst.Call, tape: str | None) -> bool:
        """The result flows into what ``tape`` (any tape for None) differentiates later: a
        higher-order derivative or a gradient penalty, recorded on purpose."""
        # The statement assigning the result, or what is computed from it on the same line
        # (``grads = penalty_tape.gradient(out, [x])[0]``), one of several small statements
        # of a line too (``u_x = tp.gradient(u, x); u_y = tp.gradient(u, y)``).
        statement = next(
            (
                a
                for a in reversed(self.context.ancestors)
                if isinstance(a, cst.BaseSmallStatement | cst.BaseCompoundStatement)
            ),
            None,
        )
        if not (isinstance(statement, cst.Assign) and len(statement.targets) == 1):
            return False
        # ``grads = ...``, or each name of ``df_dx, df_dy = tape.gradient(f, [x, y])``.
        target = statement.targets[0].target
        results = {dotted(target)} if dotted(target) is not None else _names(target)
        if not results:
            return False
        sources = _sources(self.context.frame.node, self.context.scope_facts().assignments)
        for other in own_nodes(self.context.frame.node):
            if other is node or not isinstance(other, cst.Call) or not other.args:
                continue
            receiver = method_call(other, GRADIENT_METHODS)
            if receiver is None or (tape is not None and dotted(receiver) != tape):
                continue
            if results & _depends_on(other.args[0].value, sources):
                return True
        return False


def _names(target: cst.BaseExpression) -> set[str | None]:
    """The names a tuple or list target binds (``df_dx, df_dy``)."""
    if not isinstance(target, cst.Tuple | cst.List):
        return set()
    return {dotted(element.value) for element in target.elements} - {None}


def _sources(
    scope: cst.CSTNode, assignments: Mapping[str, Sequence[Assignment]]
) -> dict[str, list[cst.BaseExpression]]:
    """What each name of the scope is computed from: the values assigned to it, and for the
    target of a comprehension's ``for`` the iterable (``for jacobian in jacobians``)."""
    found = {
        name: [a.value for a in assigned if a.value is not None]
        for name, assigned in assignments.items()
    }
    for node in own_nodes(scope):
        if isinstance(node, cst.CompFor):
            for name in {dotted(node.target)} | _names(node.target):
                if name is not None:
                    found.setdefault(name, []).append(node.iter)
    return found


def _takes_gradient(node: cst.CSTNode, tape: str) -> bool:
    if not isinstance(node, cst.Call):
        return False
    receiver = method_call(node, GRADIENT_METHODS)
    return receiver is not None and dotted(receiver) == tape


def _depends_on(
    expression: cst.BaseExpression, sources: Mapping[str, Sequence[cst.BaseExpression]]
) -> set[str]:
    """The names ``expression`` is computed from, through what the scope computes them from."""
    found: set[str] = set()
    pending = [expression]
    while pending:
        current = pending.pop()
        for n in (current, *own_nodes(current)):
            if isinstance(n, cst.Name) and n.value not in found:
                found.add(n.value)
                pending.extend(sources.get(n.value, ()))
    return found


def _callee(node: cst.Call) -> str:
    return dotted(node.func) or _method(node)


def _method(node: cst.Call) -> str:
    assert isinstance(node.func, cst.Attribute)
    return node.func.attr.value
