from __future__ import annotations

import libcst as cst

from tflint_leaks.analysis.keras import DATASET_METHODS, DATASET_SOURCES
from tflint_leaks.analysis.names import PROGRESS_BARS
from tflint_leaks.analysis.nodes import dotted, own_nodes
from tflint_leaks.diagnostics import RelatedRole
from tflint_leaks.rulekit.rule import Invalid, Rule, Valid
from tflint_leaks.rules._models import method_call

#: Wrappers whose items come from their argument (``enumerate(dataset)``).
_WRAPPERS = frozenset({"enumerate", "zip", "iter", "tqdm"}) | PROGRESS_BARS
#: Names that say "a stream of batches" (a Python name is all there is to go on for a parameter).
_BATCH_WORDS = ("dataset", "loader", "batches")
_MAX_DEPTH = 4


class TapeSpansLoop(Rule):
    """
    ## What it does
    Flags a `tf.GradientTape` whose `with` block contains a Python `for` loop over a dataset or
    a stream of batches (`for x, y in dataset:`, `for batch in train_loader:`,
    `enumerate(ds.take(100))`) that calls something each iteration.

    ## Why is this bad?
    The tape records every op of every iteration and keeps each iteration's intermediate
    tensors alive until `gradient` is called: memory grows with the number of batches, and the
    one gradient at the end averages the whole epoch instead of taking a step per batch.

    Not flagged: a loop that is one forward pass, such as unrolling an RNN over time steps
    (`for t in range(steps)`) or applying a fixed list of layers (`for layer in self.layers`),
    and files that turn eager execution off (graph mode: the loop builds the graph once).

    ## Example
    ```python
    import tensorflow as tf

    with tf.GradientTape() as tape:
        for x, y in dataset:
            loss = loss_fn(y, model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    ```

    ## Use instead
    ```python
    import tensorflow as tf

    for x, y in dataset:
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    ```

    ## Guard it
    `tf_budget.iterations` (the pytest plugin's `tf_budget` fixture
    ([docs/budget.md](https://github.com/tflint-leaks/tflint-leaks/blob/main/docs/budget.md))) takes
    the batches and hands them to the epoch, sampling between batches inside its loop: a tape around
    the loop holds more tensors at every batch, and the test fails naming `tensors held by gradient
    tapes` with its growth per batch.
    ```python
    import tensorflow as tf

    w = tf.Variable(tf.ones([4, 1]))
    opt = tf.keras.optimizers.SGD(0.01)


    def train_epoch(batches):
        for x in batches:
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.matmul(x, w) ** 2)
            grads = tape.gradient(loss, [w])
            opt.apply_gradients(zip(grads, [w]))


    def test_an_epoch_holds_no_more_per_batch(tf_budget):
        # sampled between batches, inside train_epoch's loop
        train_epoch(tf_budget.iterations([tf.ones([8, 4])] * 20, warmup=3))
    ```

    ## References
    - [Writing a training loop from scratch](https://www.tensorflow.org/guide/keras/writing_a_training_loop_from_scratch)
    - [tensorflow/tensorflow#45016](https://github.com/tensorflow/tensorflow/issues/45016)
    """

    VALID = (
        Valid("""
        import tensorflow as tf

        for x, y in dataset:
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x))
            grads = tape.gradient(loss, model.trainable_variables)
        """),
        Valid("""
        import tensorflow as tf

        def unroll(cell, inputs, state):
            with tf.GradientTape() as tape:
                for t in range(inputs.shape[1]):
                    out, state = cell(inputs[:, t], state)
            return tape.gradient(out, cell.trainable_variables)
        """),
        Valid("""
        import tensorflow as tf

        class Net(tf.keras.Model):
            def train_step(self, data):
                x, y = data
                with tf.GradientTape() as tape:
                    h = x
                    for layer in self.blocks:
                        h = layer(h)
                    loss = self.compiled_loss(y, h)
                return tape.gradient(loss, self.trainable_variables)
        """),
        Valid("""
        import tensorflow as tf

        def step(model, x):
            with tf.GradientTape() as tape:
                losses = [fn(model(x)) for fn in loss_fns]
                total = tf.add_n(losses)
            return tape.gradient(total, model.trainable_variables)
        """),
        Valid("""
        import tensorflow as tf

        with tf.GradientTape() as tape:
            y = model(x)

        for batch in dataset:
            print(batch)
        """),
        Valid("""
        import tensorflow as tf

        def fit(model, dataset):
            for batch in dataset:
                with tf.GradientTape() as tape:
                    loss = model(batch)
                    for w in model.trainable_weights:
                        loss += 1e-4 * tf.nn.l2_loss(w)
                tape.gradient(loss, model.trainable_weights)
        """),
        Valid("""
        import tensorflow as tf

        tf.compat.v1.disable_eager_execution()

        with tf.GradientTape() as tape:
            for x, y in dataset:
                loss = loss_fn(y, model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        """),
    )
    INVALID = (
        Invalid(
            """
            import tensorflow as tf

            with tf.GradientTape() as tape:
                for x, y in dataset:
                    loss = loss_fn(y, model(x))
            grads = tape.gradient(loss, model.trainable_variables)
            """,
            3,
            1,
            5,
            36,
            "this tape records every iteration of the loop over batches and keeps all their "
            "tensors until `gradient`; open one tape per batch inside the loop",
        ),
        Invalid(
            """
            import tensorflow as tf

            def epoch(model, x_all, y_all):
                ds = tf.data.Dataset.from_tensor_slices((x_all, y_all)).batch(32)
                total = 0.0
                with tf.GradientTape() as tape:
                    for step, (x, y) in enumerate(ds):
                        total += tf.reduce_mean(model(x) - y)
                return tape.gradient(total, model.trainable_variables)
            """,
            6,
            5,
            8,
            50,
            "this tape records every iteration of the loop over batches and keeps all their "
            "tensors until `gradient`; open one tape per batch inside the loop",
        ),
        Invalid(
            """
            import tensorflow as tf

            def train(model, train_loader, optimizer):
                tape = tf.GradientTape()
                with tape:
                    losses = []
                    for batch in train_loader:
                        losses.append(model(batch))
                    loss = tf.add_n(losses)
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            """,
            5,
            5,
            9,
            32,
            "this tape records every iteration of the loop over batches and keeps all their "
            "tensors until `gradient`; open one tape per batch inside the loop",
        ),
        Invalid(
            """
            from tensorflow import GradientTape

            class Trainer:
                def run(self):
                    with GradientTape() as tape:
                        loss = 0.0
                        for images, labels in self.train_dataset.take(100):
                            loss += self.loss(labels, self.model(images))
                    return tape.gradient(loss, self.model.trainable_variables)
            """,
            5,
            9,
            8,
            62,
            "this tape records every iteration of the loop over batches and keeps all their "
            "tensors until `gradient`; open one tape per batch inside the loop",
        ),
    )

    def setup(self) -> None:
        #: Tape blocks already reported (for their first loop over batches).
        self._reported: set[cst.With] = set()

    def visit_For(self, node: cst.For) -> None:
        blocks = [b for b in self.context.tape_blocks() if b.node not in self._reported]
        if not blocks or not self._dataset_like(node.iter, 0):
            return
        if not any(isinstance(n, cst.Call) for n in own_nodes(node.body)):
            return
        block = blocks[0]
        self._reported.add(block.node)
        report = self.report(
            block.node,
            "this tape records every iteration of the loop over batches and keeps all their "
            "tensors until `gradient`; open one tape per batch inside the loop",
        )
        report.relate(RelatedRole.LOOP, "the loop over batches", node)

    def _dataset_like(self, node: cst.BaseExpression, depth: int) -> bool:
        """``node`` yields batches: a ``tf.data`` pipeline, a name for one, or a wrapper of one."""
        context = self.context
        if depth > _MAX_DEPTH:
            return False
        if isinstance(node, cst.Call):
            callee = dotted(node.func)
            if callee in _WRAPPERS or context.resolve(node.func) in _WRAPPERS:
                return any(self._dataset_like(arg.value, depth + 1) for arg in node.args)
            if context.resolve(node.func) in DATASET_SOURCES:
                return True
            receiver = method_call(node, DATASET_METHODS)
            return receiver is not None and self._dataset_like(receiver, depth + 1)
        name = dotted(node)
        if name is None:
            return False
        last = name.rpartition(".")[2].lower()
        if any(word in last for word in _BATCH_WORDS) or last == "ds" or last.endswith("_ds"):
            return True
        assignments = context.scope_facts().assignments.get(name, [])
        return bool(assignments) and all(
            a.value is not None and self._dataset_like(a.value, depth + 1) for a in assignments
        )
