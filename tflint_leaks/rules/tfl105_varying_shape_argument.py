from __future__ import annotations

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from tflint_leaks.rulekit.context import Report
from tflint_leaks.rulekit.facts import Form, Span
from tflint_leaks.rulekit.rule import Invalid, Rule, Valid
from tflint_leaks.rules._calls import (
    relate_call,
    repeated_call_arguments,
    varies_unboundedly,
)

_RETRACING_KEYWORDS = frozenset({"reduce_retracing", "experimental_relax_shapes"})


class VaryingShapeArgument(Rule):
    """
    ## What it does
    Flags a `tf.function` without `input_signature` and without `reduce_retracing=True` that is
    called in a loop with a tensor (or NumPy array) whose shape depends on the loop: a slice
    such as `x[:i]`, or `tf.zeros([n])`, `tf.range(n)`, `np.ones(n)` with a loop-variant `n`;
    or with the batches of a `tf.data` pipeline that pads each batch to its own longest element
    (`padded_batch` without `padded_shapes`, or with `-1`/`None` in them;
    `bucket_by_sequence_length` without `pad_to_bucket_boundary=True`), through data-free steps
    (`shuffle`, `prefetch`, `cache`...; a `map` after it may pad to one length and is not
    followed).

    ## Why is this bad?
    A tensor argument is traced by dtype and shape. Each new shape traces a new graph, so a
    loop that grows or shrinks a tensor retraces on every iteration and keeps every graph.

    Not flagged: a function with `input_signature` or `reduce_retracing=True`, and tensors whose
    shape does not change (indexing `x[i]`, a full batch, a window whose `upper - lower` does
    not change: `x[i * k:(i + 1) * k]`, `x[i:i + k]`; only the last window of the data may be
    shorter, one more trace).

    ## Example
    ```python
    import tensorflow as tf

    @tf.function
    def encode(tokens):
        ...

    for length in range(1, max_len):
        encode(tokens[:length])
    ```

    ## Use instead
    ```python
    import tensorflow as tf

    @tf.function(input_signature=[tf.TensorSpec([None], tf.int32)])
    def encode(tokens):
        ...

    for length in range(1, max_len):
        encode(tokens[:length])
    ```
    or `@tf.function(reduce_retracing=True)`, which generalises to `None` dimensions after the
    first retrace.

    ## Fix safety
    The fix adds `reduce_retracing=True` to the `tf.function` decorator (or sets an existing
    `reduce_retracing=False` to `True`). It is safe: the function computes the same values, it
    only traces fewer, more general graphs. It is offered when the `tf.function` is made in the
    same file as the call; otherwise the finding points at the definition to change by hand.

    ## Guard it
    `tf_budget.traces` (the pytest plugin's `tf_budget` fixture
    ([docs/budget.md](https://github.com/tflint-leaks/tflint-leaks/blob/main/docs/budget.md))) fails
    the test when `encode` traces more than once, saying the shapes that made the traces and naming
    this rule. (With `reduce_retracing=True`, allow `at_most=2`: the first shape, then the
    generalised one.)
    ```python
    import tensorflow as tf


    @tf.function(input_signature=[tf.TensorSpec([None], tf.int32)])
    def encode(tokens):
        return tf.reduce_sum(tokens)


    def encode_prefixes(tokens):
        return [encode(tokens[:length]) for length in range(1, len(tokens) + 1)]


    def test_encode_traces_once(tf_budget):
        with tf_budget.traces(encode, at_most=1):
            encode_prefixes(tf.range(20))
    ```

    ## References
    - [tf.function guide: controlling retracing](https://www.tensorflow.org/guide/function#controlling_retracing)
    - [tensorflow/tensorflow#26311](https://github.com/tensorflow/tensorflow/issues/26311)
    """

    VALID = (
        # Batches padded to a length every one shares; a pipeline of plain batches.
        Valid("""
        import tensorflow as tf


        @tf.function
        def train_step(batch):
            return tf.reduce_sum(batch)


        def make_dataset(sentences, max_length):
            dataset = tf.data.Dataset.from_generator(lambda: sentences, tf.int64)
            return dataset.shuffle(20000).padded_batch(64, padded_shapes=[max_length])


        dataset = make_dataset(load_sentences(), 40)
        for epoch in range(20):
            for step, batch in enumerate(dataset):
                train_step(batch)
            for batch in tf.data.Dataset.range(1000).batch(64):
                train_step(batch)
        """),
        # A new function each iteration, one per model, called once: its first trace, no
        # retrace (stylegan-tf2, unseen set P of stop 43).
        Valid("""
        import tensorflow as tf

        def export(generators):
            for level in range(9):
                traced = tf.function(generators[level])
                traced(tf.zeros([1, 4 * 2**level, 4 * 2**level, 3]))

        export([tf.keras.Sequential([tf.keras.layers.Dense(3)]) for _ in range(9)])
        """),
        # TensorFlow-Examples' multi-GPU notebook: each tower's slice is `gpu_batch_size` long,
        # whatever `i` is; so is a window that starts anywhere.
        Valid("""
        import tensorflow as tf

        @tf.function
        def backprop(batch_x, batch_y):
            return batch_x, batch_y

        def run_optimization(x, y):
            for i in range(num_gpus):
                gpu_batch_size = int(batch_size / num_gpus)
                batch_x = x[i * gpu_batch_size: (i + 1) * gpu_batch_size]
                batch_y = y[i * gpu_batch_size: (i + 1) * gpu_batch_size]
                backprop(batch_x, batch_y)
                backprop(x[i:i + 32], y[i:i + 32])
        """),
        Valid("""
        import tensorflow as tf

        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def encode(tokens):
            return tokens

        x = tf.ones([100])
        for length in range(1, 100):
            encode(x[:length])
        """),
        Valid("""
        import tensorflow as tf

        @tf.function(reduce_retracing=True)
        def encode(tokens):
            return tokens

        x = tf.ones([100])
        for length in range(1, 100):
            encode(x[:length])
        """),
        Valid("""
        import tensorflow as tf

        @tf.function
        def encode(token):
            return token

        x = tf.ones([100])
        for i in range(100):
            encode(x[i])
            encode(x[:10])
        """),
        Valid("""
        import tensorflow as tf

        @tf.function
        def encode(tokens):
            return tokens

        for i in range(100):
            encode(tf.zeros([8, 16]))
        """),
        Valid("""
        import tensorflow as tf

        @tf.function
        def encode(tokens):
            return tokens

        for size in [16, 32]:
            encode(tf.zeros([size]))
        """),
        Valid("""
        import tensorflow as tf

        @tf.function
        def encode(tokens):
            return tokens

        for batch in tf.data.Dataset.range(100).batch(10):
            encode(batch)
        """),
        Valid(
            """
            import functools
            import tensorflow as tf

            relaxed = functools.partial(tf.function, reduce_retracing=True)

            @relaxed
            def encode(tokens):
                return tokens

            for length in range(1, 512):
                encode(tf.zeros([length]))
            """
        ),
    )
    INVALID = (
        # Batches padded to their own longest sentence (TensorFlow's transformer tutorial
        # gives `train_step` an `input_signature` for this; PanXiebit/transformer-tf2.0 and
        # Lornatang/TensorFlow2-tutorials do not).
        Invalid(
            """
            import tensorflow as tf


            @tf.function
            def train_step(batch):
                return tf.reduce_sum(batch)


            def make_dataset(sentences):
                dataset = tf.data.Dataset.from_generator(lambda: sentences, tf.int64)
                return dataset.shuffle(20000).padded_batch(64, padded_shapes=[-1]).prefetch(2)


            dataset = make_dataset(load_sentences())
            for epoch in range(20):
                for step, batch in enumerate(dataset):
                    train_step(batch)
            """,
            17,
            20,
            17,
            25,
            "the shape of `batch` changes every iteration; each shape retraces `train_step` "
            "(add an `input_signature` with `None` dimensions or `reduce_retracing=True`)",
        ),
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
            9,
            22,
            "the shape of `x[:length]` (parameter `tokens`) changes every iteration; each shape "
            "retraces `encode` (add an `input_signature` with `None` dimensions or "
            "`reduce_retracing=True`)",
            fixed="""
            import tensorflow as tf

            @tf.function(reduce_retracing=True)
            def encode(tokens):
                return tokens

            x = tf.ones([100])
            for length in range(1, 100):
                encode(x[:length])
            """,
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
            9,
            26,
            "the shape of `tf.zeros([n, 3])` (parameter `buffer`) changes every iteration; each "
            "shape retraces `fill` (add an `input_signature` with `None` dimensions or "
            "`reduce_retracing=True`)",
            fixed="""
            import tensorflow as tf

            @tf.function(reduce_retracing=True)
            def fill(buffer):
                return buffer

            n = 1
            while n < 4096:
                fill(tf.zeros([n, 3]))
                n *= 2
            """,
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
            10,
            29,
            "the shape of `np.ones(t + 1)` (parameter `values`) changes every iteration; each "
            "shape retraces `score` (add an `input_signature` with `None` dimensions or "
            "`reduce_retracing=True`)",
            fixed="""
            import numpy as np
            import tensorflow as tf

            @tf.function(reduce_retracing=True)
            def score(values):
                return tf.reduce_sum(values)

            def run(steps):
                for t in range(steps):
                    score(np.ones(t + 1))
            """,
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
            10,
            22,
            "the shape of `prefix` changes every iteration; each shape retraces `decode` (add an "
            "`input_signature` with `None` dimensions or `reduce_retracing=True`)",
            fixed="""
            import tensorflow as tf

            @tf.function(reduce_retracing=True)
            def decode(prefix, step):
                return prefix

            def generate(tokens, steps):
                for step in range(steps):
                    prefix = tokens[:, : step + 1]
                    decode(prefix, tf.constant(step))
            """,
        ),
        Invalid(
            """
            import tensorflow as tf

            def _pad(x):
                return x

            pad = tf.function(_pad, jit_compile=False,)
            for n in range(1, 64):
                pad(tf.zeros([n]))
            """,
            8,
            9,
            8,
            22,
            "the shape of `tf.zeros([n])` changes every iteration; each shape retraces `pad` (add "
            "an `input_signature` with `None` dimensions or `reduce_retracing=True`)",
            fixed="""
            import tensorflow as tf

            def _pad(x):
                return x

            pad = tf.function(_pad, jit_compile=False, reduce_retracing=True)
            for n in range(1, 64):
                pad(tf.zeros([n]))
            """,
        ),
        Invalid(
            """
            import functools
            import tensorflow as tf

            @functools.partial(tf.function, jit_compile=True)
            def encode(tokens):
                return tokens

            for length in range(1, 512):
                encode(tf.zeros([length]))
            """,
            9,
            12,
            9,
            30,
            "the shape of `tf.zeros([length])` (parameter `tokens`) changes every iteration; "
            "each shape retraces `encode` (add an `input_signature` with `None` dimensions "
            "or `reduce_retracing=True`)",
            fixed="""
            import functools
            import tensorflow as tf

            @functools.partial(tf.function, jit_compile=True, reduce_retracing=True)
            def encode(tokens):
                return tokens

            for length in range(1, 512):
                encode(tf.zeros([length]))
            """,
        ),
    )

    def setup(self) -> None:
        #: ``tf.function`` decorators and ``tf.function(fn)`` calls of this file, and the
        #: findings whose fix changes one of them (matched by position once the walk is done).
        self._makers: list[cst.Decorator | cst.Call] = []
        self._pending: list[tuple[Report, Span]] = []

    def visit_Decorator(self, node: cst.Decorator) -> None:
        if self.context.is_tf_function_decorator(node):
            self._makers.append(node)

    def visit_Call(self, node: cst.Call) -> None:
        for callee, argument, value in repeated_call_arguments(self.context, node):
            if callee.facts.reduce_retracing or value.kind is not Form.TENSOR:
                continue
            if not value.size_varies or not varies_unboundedly(self.context, value):
                continue
            report = self.report(
                argument.value,
                f"the shape of {argument.shown} changes every iteration; each shape retraces "
                f"`{callee.display}` (add an `input_signature` with `None` dimensions or "
                "`reduce_retracing=True`)",
            )
            relate_call(report, self.context, callee)
            if callee.path == self.context.path:
                self._pending.append((report, callee.facts.span))

    def leave_Call(self, node: cst.Call) -> None:
        if self.context.is_tf_function_call(node):
            self._makers.append(node)

    def leave_Module(self, node: cst.Module) -> None:
        if not self._pending:
            return
        positions = MetadataWrapper(node, unsafe_skip_copy=True).resolve(PositionProvider)
        by_start: dict[tuple[int, int], cst.Decorator | cst.Call] = {}
        for maker in self._makers:
            start = positions[maker].start
            by_start[(start.line, start.column + 1)] = maker
        for report, span in self._pending:
            found = by_start.get((span.line, span.column))
            fixed = _with_reduce_retracing(found) if found is not None else None
            if fixed is not None:
                report.with_fix(
                    "Add `reduce_retracing=True` to the `tf.function`",
                    [fixed],
                )


def _with_reduce_retracing(
    maker: cst.Decorator | cst.Call,
) -> tuple[cst.CSTNode, cst.CSTNode] | None:
    """(node to replace, replacement) that makes ``maker`` pass ``reduce_retracing=True``."""
    call = maker.decorator if isinstance(maker, cst.Decorator) else maker
    keyword = cst.Arg(
        cst.Name("True"),
        keyword=cst.Name("reduce_retracing"),
        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
    )
    if not isinstance(call, cst.Call):
        return call, cst.Call(call, [keyword])
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is not None and arg.keyword.value in _RETRACING_KEYWORDS:
            return arg.value, cst.Name("True")
    args = list(call.args)
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call, call.with_changes(args=[*args, keyword])
