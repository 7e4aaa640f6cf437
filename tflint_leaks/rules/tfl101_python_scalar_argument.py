from __future__ import annotations

import ast

import libcst as cst

from tflint_leaks.diagnostics import RelatedRole
from tflint_leaks.rulekit.context import Callee, FileContext
from tflint_leaks.rulekit.facts import EffectKind, Form, resolver, shown_dtype
from tflint_leaks.rulekit.rule import Invalid, Rule, Valid
from tflint_leaks.rules._calls import (
    Argument,
    arguments,
    effects_through_calls,
    relate_call,
    relate_chain,
    relate_loop,
    repeated_call_arguments,
    source_of,
    varies_unboundedly,
)


class PythonScalarArgument(Rule):
    """
    ## What it does
    Flags a Python number passed to a `tf.function` when the number changes from one call to
    the next: a loop counter (`for step in range(n)`), a name reassigned or augmented in the
    loop (`step += 1`, `step = step + 1`, `lr = lr * 0.95`, a walrus counter), or a value derived
    from one (`i * 2`, `float(i)`, `np.float32(step)`) -- also when the loop passes it to
    project code that passes it on to the `tf.function` as a Python value (`run_step(x, step)`
    calling `train_step(x, step)`, up to four calls deep; `related` lists the calls). Also a
    recursive `tf.function` that calls itself with one of its parameters changed by a number
    (`power(x, n - 1)`): each depth is a new Python value.

    ## Why is this bad?
    A `tf.function` keys its traces on the *value* of every Python argument. Each new number
    traces and compiles a new graph: the step becomes as slow as eager mode plus the tracing
    cost, and every graph stays cached, so memory grows for as long as the loop runs.
    TensorFlow only warns after the fact ("triggered tf.function retracing").

    Not flagged: literals and names that do not change in the loop, bools, strings, values
    wrapped in `tf.constant`/`tf.convert_to_tensor`/`tf.cast`/`tf.Variable`, tensor counters
    (`Dataset.enumerate()`, `tf.range`), parameters covered by `input_signature`, and a loop
    over a few literal values (at most `max-python-values`, default 5: a bounded number of
    traces, such as a sweep over learning rates). A number changed on each iteration of loops
    that run at most that many times in all takes no more values than that (`grid_size *= 2`
    in a loop over the three anchor masks every call passes). Nor the size of a chunk,
    `min(size, total - done)` where `done` grows by `size` each iteration (`done += n` after
    `n = min(...)`, `for done in range(0, total, size)`): every chunk is `size` long but the
    last, two traces in all.

    ## Example
    ```python
    import tensorflow as tf

    @tf.function
    def train_step(x, step):
        ...

    for step in range(1000):
        train_step(x, step)
    ```

    ## Use instead
    ```python
    import tensorflow as tf

    @tf.function
    def train_step(x, step):
        ...

    for step in range(1000):
        train_step(x, tf.constant(step))
    ```
    or iterate `dataset.enumerate()`, whose counter is already a tensor.

    ## Fix safety
    The fix wraps the argument in `tf.constant(...)`, with the dtype the function uses it with
    where the code shows one. A Python number combined with a tensor takes the tensor's dtype
    (`x * step` with a float32 `x`), but `tf.constant(step)` of an int is int32, and
    `x * tf.constant(step)` raises `TypeError`. So when the body combines the parameter
    (`+`, `*`, a comparison, `tf.maximum`...) with a float literal, a tensor whose dtype it
    spells out (`tf.cast(v, tf.float16)`), or another parameter whose argument at the call
    shows its dtype (`tf.ones([2])`: float32), the fix is `tf.constant(step, tf.float32)`;
    when it combines it with something whose dtype neither shows, or with two dtypes, the
    finding has no fix. A parameter the body only passes on (`tf.cast(step, ...)`,
    `tf.ones([step])`, a call) gets `tf.constant(step)`: int32 for an int, float32 for a
    float.

    It is unsafe all the same: inside the function the value becomes a tensor, so Python
    control flow on it (`if step % 100 == 0:`) is converted by AutoGraph or fails, Python
    arithmetic on it becomes graph arithmetic (in the dtype chosen: an int counter made
    float32 is exact only up to 2**24), and a function the parameter is passed to may expect
    a Python number, or a dtype the body does not show.

    ## Options
    - `max-python-values`

    ## Guard it
    `tf_budget.traces` (the pytest plugin's `tf_budget` fixture
    ([docs/budget.md](https://github.com/tflint-leaks/tflint-leaks/blob/main/docs/budget.md))) fails
    the test when `train_step` traces more than once, saying which argument made the traces and its
    values and naming this rule. It fails as soon as a Python number reaches `train_step` again.
    ```python
    import tensorflow as tf


    @tf.function
    def train_step(x, step):
        return x * tf.cast(step, tf.float32)


    def train(x, steps):
        for step in range(steps):
            train_step(x, tf.constant(step))


    def test_train_step_traces_once(tf_budget):
        with tf_budget.traces(train_step, at_most=1):
            train(tf.ones([4]), steps=20)
    ```

    ## References
    - [tf.function guide: rules of tracing](https://www.tensorflow.org/guide/function#rules_of_tracing)
    - [Controlling retracing](https://www.tensorflow.org/guide/function#controlling_retracing)
    """

    VALID = (
        Valid("""
        import tensorflow as tf

        @tf.function
        def perturb(x, n):
            return tf.repeat(x, n, 0)

        def explain(inputs, nb_samples, batch_size):
            for x in inputs:
                done = 0
                while done < nb_samples:
                    n = min(batch_size, nb_samples - done)
                    done += n
                    perturb(x, n)
            for start in range(0, nb_samples, batch_size):
                perturb(x, min(batch_size, nb_samples - start))
        """),
        Valid("""
        import tensorflow as tf

        @tf.function
        def train_step(x, step):
            return x * tf.cast(step, tf.float32)

        for step in range(100):
            train_step(tf.ones([2]), tf.constant(step))
        """),
        Valid("""
        import tensorflow as tf

        @tf.function
        def train_step(x, lr, training):
            return x * lr

        lr = 0.01
        for batch in tf.data.Dataset.range(10):
            train_step(batch, lr, training=True)
            train_step(batch, 0.5, True)
        """),
        Valid("""
        import tensorflow as tf

        @tf.function
        def train_step(x, step):
            return x + step

        dataset = tf.data.Dataset.range(100)
        for step, x in dataset.enumerate():
            train_step(x, step)
        for step in tf.range(100):
            train_step(x, step)
        """),
        Valid("""
        import tensorflow as tf

        @tf.function(input_signature=[tf.TensorSpec([], tf.float32), tf.TensorSpec([], tf.int64)])
        def train_step(x, step):
            return x

        for step in range(100):
            train_step(1.0, step)
        """),
        Valid("""
        import tensorflow as tf

        @tf.function
        def train(x, learning_rate):
            return x * learning_rate

        for learning_rate in [0.1, 0.01, 0.001]:
            train(tf.ones([3]), learning_rate)
        """),
        Valid("""
        import tensorflow as tf

        MASKS = [[6, 7, 8], [3, 4, 5], [0, 1, 2]]

        @tf.function
        def targets_for_output(y, grid_size, mask):
            return y * grid_size

        def transform_targets(y, masks, size):
            grid_size = size // 32
            outputs = []
            for mask in masks:
                outputs.append(targets_for_output(y, grid_size, mask))
                grid_size *= 2
            return outputs

        transform_targets(tf.ones([4]), MASKS, 416)
        """),
        Valid("""
        import numpy as np

        def function(f):
            return f

        @function
        def step(x, i):
            return x + i

        for i in range(100):
            step(np.ones(3), i)
        """),
        Valid("""
        import tensorflow as tf

        @tf.function
        def outer(x):
            @tf.function
            def inner(y, i):
                return y + i
            for i in range(10):
                x = inner(x, i)
            return x
        """),
        Valid("""
        import tensorflow as tf

        @tf.function
        def log_step(x, name):
            return x

        for i in range(10):
            log_step(tf.ones([1]), f"step-{i}")
            log_step(tf.ones([1]), i % 2 == 0)
        """),
        Valid(
            """
            import tensorflow as tf

            @tf.function(input_signature=[tf.TensorSpec([None]), tf.TensorSpec([], tf.int64)])
            def train_step(x, step):
                return x * 2

            def run_step(x, step):
                return train_step(x, step)

            for i in range(1000):
                run_step(tf.ones([2]), i)
            """
        ),
        Valid(
            """
            import tensorflow as tf

            @tf.function
            def train_step(x, step):
                return x * 2

            def run_step(x, step):
                return train_step(x, tf.constant(step))

            for i in range(1000):
                run_step(tf.ones([2]), i)
            """
        ),
        Valid(
            """
            import tensorflow as tf

            def _power(x, n):
                return tf.ones_like(x) if n == 0 else x * _power(x, n - 1)

            @tf.function
            def power(x, n):
                return _power(x, n)
            """
        ),
        Valid(
            """
            import tensorflow as tf

            def schedule(epoch):
                return 0.1 * 0.95 ** epoch

            @tf.function
            def step(x, lr):
                return x * lr

            for epoch in range(1000):
                step(x, tf.constant(schedule(epoch)))
            """
        ),
    )
    INVALID = (
        # rl_algos (set Z34 of stop 54) types its tf.function methods with `typing.cast`,
        # which returns the decorator unchanged.
        Invalid(
            """
            from typing import Callable, cast

            import tensorflow as tf

            Function = Callable[..., tf.Tensor]


            class Agent:
                @cast(Function, tf.function)
                def step(self, lr):
                    return lr * 2


            agent = Agent()
            for epoch in range(1000):
                agent.step(0.1 * epoch)
            """,
            16,
            16,
            16,
            27,
            "Python number `0.1 * epoch` (parameter `lr`) changes every iteration; each value "
            "retraces `agent.step`",
        ),
        Invalid(
            """
            import tensorflow as tf

            SCALES = [1, 2, 3, 4, 5, 6, 7, 8]

            @tf.function
            def targets_for_output(y, grid_size, scale):
                return y * grid_size

            def transform_targets(y, scales, size):
                grid_size = size // 32
                for scale in scales:
                    targets_for_output(y, grid_size, scale)
                    grid_size *= 2

            transform_targets(tf.ones([4]), SCALES, 416)
            """,
            12,
            31,
            12,
            40,
            "Python number `grid_size` changes every iteration; each value retraces "
            "`targets_for_output`",
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def perturb(x, n):
                return tf.repeat(x, n, 0)

            def explain(x, total, size):
                for start in range(total):
                    perturb(x, min(size, total - start))
            """,
            9,
            20,
            9,
            44,
            "Python number `min(size, total - start)` (parameter `n`) changes every iteration; "
            "each value retraces `perturb`",
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def train_step(x, step):
                return x * tf.cast(step, tf.float32)

            for step in range(1000):
                train_step(tf.ones([2]), step)
            """,
            8,
            30,
            8,
            34,
            "Python number `step` changes every iteration; each value retraces `train_step`",
            fixed="""
            import tensorflow as tf

            @tf.function
            def train_step(x, step):
                return x * tf.cast(step, tf.float32)

            for step in range(1000):
                train_step(tf.ones([2]), tf.constant(step))
            """,
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def train_step(x, i):
                return x * i

            for i in range(1000):
                train_step(tf.ones([2]), i)
            """,
            8,
            30,
            8,
            31,
            "Python number `i` changes every iteration; each value retraces `train_step`",
            fixed="""
            import tensorflow as tf

            @tf.function
            def train_step(x, i):
                return x * i

            for i in range(1000):
                train_step(tf.ones([2]), tf.constant(i, tf.float32))
            """,
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def decay(x, epoch):
                rate = 0.5 ** epoch
                return x * tf.cast(rate, tf.float16)

            for epoch in range(100):
                decay(tf.ones([2], tf.float16), epoch)
            """,
            9,
            37,
            9,
            42,
            "Python number `epoch` changes every iteration; each value retraces `decay`",
            fixed="""
            import tensorflow as tf

            @tf.function
            def decay(x, epoch):
                rate = 0.5 ** epoch
                return x * tf.cast(rate, tf.float16)

            for epoch in range(100):
                decay(tf.ones([2], tf.float16), tf.constant(epoch, tf.float32))
            """,
        ),
        Invalid(
            """
            import tensorflow as tf2

            @tf2.function
            def update(x, lr):
                return x * lr

            def fit(x, epochs):
                base = 0.1
                for epoch in range(epochs):
                    lr = base * 0.9 ** epoch
                    update(x, lr=lr)
            """,
            11,
            22,
            11,
            24,
            "Python number `lr` changes every iteration; each value retraces `update`",
        ),
        Invalid(
            """
            from tensorflow import function
            import numpy as np

            @function(reduce_retracing=True)
            def rollout(state, horizon):
                return state

            step = 0
            while step < 500:
                rollout(np.zeros(4), np.float32(step))
                step += 1
            """,
            10,
            26,
            10,
            42,
            "Python number `np.float32(step)` (parameter `horizon`) changes every iteration; each "
            "value retraces `rollout`",
        ),
        Invalid(
            """
            import tensorflow as tf

            class Agent:
                @tf.function
                def act(self, obs, t):
                    return obs

                def run(self, env):
                    for t in range(10_000):
                        self.act(env.observe(), t * 2)
            """,
            10,
            37,
            10,
            42,
            "Python number `t * 2` (parameter `t`) changes every iteration; each value retraces "
            "`self.act`",
        ),
        Invalid(
            """
            import tensorflow as tf

            def _step(x, noise):
                return x + noise

            step = tf.function(_step)
            losses = [step(tf.ones([1]), float(i)) for i in range(64)]
            """,
            7,
            30,
            7,
            38,
            "Python number `float(i)` changes every iteration; each value retraces `step`",
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def train_step(x, step):
                return x * 2

            def run_step(x, step):
                return train_step(x, step)

            for i in range(1000):
                run_step(tf.ones([2]), i)
            """,
            11,
            28,
            11,
            29,
            "Python number `i` changes every iteration; `run_step` passes it on to "
            "`train_step`, and each value retraces it",
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def train_step(x, lr):
                return x * lr

            lr = 0.1
            for epoch in range(100):
                lr = lr * 0.95
                train_step(tf.ones([2]), lr)
            """,
            10,
            30,
            10,
            32,
            "Python number `lr` changes every iteration; each value retraces `train_step`",
        ),
        Invalid(
            """
            import tensorflow as tf

            def impl(x, step):
                return x * 2

            train_step = tf.function(func=impl)
            for step in range(1000):
                train_step(tf.ones([2]), step)
            """,
            8,
            30,
            8,
            34,
            "Python number `step` changes every iteration; each value retraces `train_step`",
        ),
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def power(x, n):
                if n == 0:
                    return tf.ones_like(x)
                return x * power(x, n - 1)
            """,
            7,
            25,
            7,
            30,
            "`power` calls itself with the Python number `n - 1` (parameter `n`): each depth "
            "traces it again; recurse in a plain Python helper that the `tf.function` calls",
        ),
        Invalid(
            """
            import tensorflow as tf

            def schedule(epoch):
                return 0.1 * 0.95 ** epoch

            @tf.function
            def step(x, lr):
                return x * lr

            for epoch in range(1000):
                lr = schedule(epoch)
                step(x, lr)
            """,
            12,
            13,
            12,
            15,
            "Python number `lr` changes every iteration; each value retraces `step`",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        self._through_helpers(node)
        self._recursion(node)
        for callee, argument, value in repeated_call_arguments(self.context, node):
            if value.kind is not Form.NUMBER or not varies_unboundedly(self.context, value):
                continue
            report = self.report(
                argument.value,
                f"Python number {argument.shown} changes every iteration; each value "
                f"retraces `{callee.display}`",
            )
            relate_call(report, self.context, callee)
            alias = self.context.alias("tensorflow")
            dtype = _fix_dtype(self.context, node, callee, argument)
            if alias is None or dtype is None:
                continue
            constant = cst.Attribute(cst.Name(alias), cst.Name("constant"))
            args = [cst.Arg(argument.value)]
            shown = "..."
            if dtype:
                args.append(cst.Arg(cst.Attribute(cst.Name(alias), cst.Name(dtype))))
                shown = f"..., {alias}.{dtype}"
            report.with_fix(
                f"Wrap `{argument.label}` in `{alias}.constant({shown})`",
                [(argument.value, cst.Call(constant, args))],
            )

    def _recursion(self, node: cst.Call) -> None:
        """A ``tf.function`` that calls itself with a Python number derived from one of its
        parameters (``power(x, n - 1)``): one trace per depth."""
        context = self.context
        frame = context.frames[-1]
        function = frame.node
        if not (frame.traced and isinstance(function, cst.FunctionDef)):
            return
        callee = context.tf_function_callee(node)
        if callee is None or callee.path != context.path or frame.facts is None:
            return
        if callee.facts != frame.facts.tf_function:
            return
        parameters = context.scope_facts().parameters
        for argument in arguments(node, callee.params):
            if callee.facts.covers(argument.position) or not _changed_number(
                argument.value, parameters
            ):
                continue
            report = self.report(
                argument.value,
                f"`{callee.display}` calls itself with the Python number {argument.shown}: "
                "each depth traces it again; recurse in a plain Python helper that the "
                "`tf.function` calls",
            )
            report.relate(
                RelatedRole.TF_FUNCTION,
                f"`{callee.display}` is defined here",
                callee.facts.span,
                callee.path,
            )

    def _through_helpers(self, node: cst.Call) -> None:
        """A loop counter passed to project code that passes it on, as a Python value, to a
        ``tf.function`` (``run_step(x, step)`` where ``run_step`` calls ``train_step(x, step)``)."""
        context = self.context
        if not context.loops or context.in_tf_function or context.tf_function_callee(node):
            return
        positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
        effects = effects_through_calls(context, node, EffectKind.PARAMETER_TO_TF_FUNCTION)
        for effect in effects:
            if effect.parameter >= len(positional) or effect.tf_function is None:
                continue
            argument = positional[effect.parameter]
            value = context.evaluator().value(argument)
            if value.kind is not Form.NUMBER or not varies_unboundedly(context, value):
                continue
            helper = effect.chain[0].callee.rpartition(".")[2]
            report = self.report(
                argument,
                f"Python number `{source_of(argument)}` changes every iteration; `{helper}` "
                f"passes it on to `{effect.text}`, and each value retraces it",
            )
            relate_chain(report, effect)
            report.relate(
                RelatedRole.CALL, f"`{effect.text}` is called here", effect.span, effect.path
            )
            target = effect.tf_function
            report.relate(
                RelatedRole.TF_FUNCTION,
                f"`{effect.text}` is defined here",
                target.facts.span,
                target.path,
            )
            relate_loop(report, context)


def _changed_number(value: cst.BaseExpression, parameters: set[str]) -> bool:
    """``n - 1``, ``depth + 1``, ``size // 2``: a parameter changed by a number literal."""
    if not isinstance(value, cst.BinaryOperation):
        return False
    operands = (value.left, value.right)
    return any(isinstance(o, cst.Name) and o.value in parameters for o in operands) and any(
        isinstance(o, cst.Integer | cst.Float) for o in operands
    )


def _fix_dtype(
    context: FileContext, node: cst.Call, callee: Callee, argument: Argument
) -> str | None:
    """The dtype the fix's ``tf.constant`` needs: ``""`` when the ``tf.function``'s body
    combines the parameter with nothing whose dtype matters, the one dtype it shows (a float
    literal, ``tf.cast(v, tf.float16)``, another parameter whose argument here shows one:
    ``tf.ones([2])``), or None (no fix) when it shows none, several, or the body is unseen."""
    function = callee.function
    if function is None or argument.position is None or argument.position >= len(function.params):
        return None
    use = function.dtype_uses.get(function.params[argument.position])
    if use is None:
        return ""
    if use.unknown:
        return None
    dtypes = set(use.dtypes)
    given = {a.position: a.value for a in arguments(node, callee.params) if a.position is not None}
    resolve = resolver(context.module_index.imports)
    for other in use.params:
        value = given.get(function.params.index(other))
        shown = None if value is None else shown_dtype(_expression(context, value), resolve)
        if shown is None:
            return None
        dtypes.add(shown)
    return dtypes.pop() if len(dtypes) == 1 else None


def _expression(context: FileContext, value: cst.BaseExpression) -> ast.expr:
    """An argument as an ``ast`` expression (parsed from its source, in parentheses): for a
    name the scope assigns once (``x = tf.ones([2])``), the value assigned."""
    if isinstance(value, cst.Name):
        assigned = context.scope_facts().assignments.get(value.value, [])
        if len(assigned) == 1 and not assigned[0].augmented and assigned[0].value is not None:
            value = assigned[0].value
    return ast.parse(f"({source_of(value)})", mode="eval").body
