from __future__ import annotations

import libcst as cst

from tflint_leaks.analysis.loops import LoopNode
from tflint_leaks.analysis.nodes import dotted
from tflint_leaks.diagnostics import RelatedRole
from tflint_leaks.rulekit.rule import Invalid, Rule, Valid
from tflint_leaks.rules._calls import relate_loop


class FunctionMethodPerInstance(Rule):
    """
    ## What it does
    Flags a class whose methods are `tf.function`s (decorated methods, or
    `self.step = tf.function(...)` in `__init__`) when it is instantiated inside a loop and a
    `tf.function` method is called on the new instance in the same loop.

    ## Why is this bad?
    A `tf.function` method keeps one trace cache per instance. Every new instance traces its
    methods from scratch, so the loop pays the tracing cost on every iteration and each
    instance's graphs stay alive as long as the instance (or anything it captured) does.

    Not flagged: an instance created once before the loop; a class without `tf.function`
    methods; an instance created in a loop whose `tf.function` methods are not called there;
    loops that make at most `max-python-values` instances in all (default 5: a few instances,
    a few traces), whatever an inner loop then does with each (`for batch in data:
    calculator.step(batch)` calls one instance's traces again).

    ## Example
    ```python
    import tensorflow as tf

    class Trainer:
        def __init__(self, config):
            self.config = config

        @tf.function
        def train_step(self, x):
            ...

    for fold in range(10):
        trainer = Trainer(config)
        trainer.train_step(x)
    ```

    ## Use instead
    ```python
    import tensorflow as tf

    class Trainer:
        def __init__(self, config):
            self.config = config

        def reset(self, config):
            self.config = config

        @tf.function
        def train_step(self, x):
            ...

    trainer = Trainer(config)
    for fold in range(10):
        trainer.reset(config)
        trainer.train_step(x)
    ```
    or make the `tf.function` a module-level function that takes the state as arguments.

    ## Options
    - `max-python-values`

    ## Guard it
    `tf_budget.traces` (the pytest plugin's `tf_budget` fixture
    ([docs/budget.md](https://github.com/tflint-leaks/tflint-leaks/blob/main/docs/budget.md))) fails
    the test when `Trainer.train_step` traces more than once, saying that the traces came from new
    `tf.function` objects and naming this rule. The method on every instance counts, so a `Trainer`
    per fold fails the test.
    ```python
    import tensorflow as tf


    class Trainer(tf.Module):
        def __init__(self):
            super().__init__()
            self.scale = tf.Variable(1.0)

        def reset(self):
            self.scale.assign(1.0)

        @tf.function
        def train_step(self, x):
            return x * self.scale


    def cross_validate(x, folds):
        trainer = Trainer()
        for _ in range(folds):
            trainer.reset()
            trainer.train_step(x)


    def test_train_step_traces_once(tf_budget):
        # every Trainer's train_step counts: a Trainer per fold fails
        with tf_budget.traces(Trainer.train_step, at_most=1):
            cross_validate(tf.ones([4]), folds=10)
    ```

    ## References
    - [tf.function guide: rules of tracing](https://www.tensorflow.org/guide/function#rules_of_tracing)
    - [tensorflow/tensorflow#31175](https://github.com/tensorflow/tensorflow/issues/31175)
    """

    VALID = (
        Valid("""
        import tensorflow as tf

        class Trainer:
            @tf.function
            def step(self, x):
                return x

        trainer = Trainer()
        for i in range(100):
            trainer.step(tf.ones([1]))
        """),
        Valid("""
        import tensorflow as tf

        class Config:
            def __init__(self, lr):
                self.lr = lr

        for lr in range(100):
            config = Config(lr)
            print(config.lr)
        """),
        Valid("""
        import tensorflow as tf

        class Trainer:
            @tf.function
            def step(self, x):
                return x

            def describe(self):
                return "trainer"

        for i in range(100):
            print(Trainer().describe())
        """),
        Valid("""
        import tensorflow as tf

        class Trainer:
            @tf.function
            def step(self, x):
                return x

        @tf.function
        def run(x):
            for i in range(3):
                x = Trainer().step(x)
            return x
        """),
        Valid("""
        import tensorflow as tf

        class Trainer:
            @tf.function
            def step(self, x):
                return x

        trainers = [Trainer() for _ in range(4)]
        """),
        Valid("""
        import tensorflow as tf

        class Trainer:
            def step(self, x):
                return x

        for i in range(100):
            Trainer().step(tf.ones([1]))
        """),
        Valid(
            """
            import tensorflow as tf

            class Scorer:
                @tf.function
                def score(self, x):
                    return x * 2

            for seed in range(3):
                Scorer().score(tf.ones([2]))
            """
        ),
        # influenciae's tests: four calculators (two lists of two settings), each traced once
        # and then called per batch.
        Valid(
            """
            import tensorflow as tf

            class Calculator:
                def __init__(self, normalize):
                    self.normalize = normalize

                @tf.function
                def step(self, x):
                    return x / tf.norm(x) if self.normalize else x

            for model in ["a", "b"]:
                for normalize in [True, False]:
                    calculator = Calculator(normalize)
                    for batch in dataset:
                        calculator.step(batch)
            """
        ),
    )
    INVALID = (
        Invalid(
            """
            import tensorflow as tf

            class Trainer:
                @tf.function
                def step(self, x):
                    return x

            for fold in range(10):
                trainer = Trainer()
                trainer.step(tf.ones([1]))
            """,
            9,
            15,
            9,
            24,
            "a new `Trainer` every iteration traces its `tf.function` method `step` again for "
            "each instance",
        ),
        Invalid(
            """
            import tensorflow as tf

            class Evaluator:
                def __init__(self):
                    self.score = tf.function(self._score)

                def _score(self, x):
                    return tf.reduce_sum(x)

            def sweep(configs, x):
                for config in configs:
                    Evaluator().score(x)
            """,
            12,
            9,
            12,
            20,
            "a new `Evaluator` every iteration traces its `tf.function` method `score` again for "
            "each instance",
        ),
        Invalid(
            """
            import tensorflow as tf

            class Base:
                @tf.function
                def step(self, x):
                    return x

            class Child(Base):
                pass

            epoch = 0
            while epoch < 500:
                model = Child()
                model.step(tf.zeros([2]))
                epoch += 1
            """,
            13,
            13,
            13,
            20,
            "a new `Child` every iteration traces its `tf.function` method `step` again for each "
            "instance",
        ),
        Invalid(
            """
            import tensorflow as tf

            class Policy:
                @tf.function
                def __call__(self, obs):
                    return obs

            for episode in range(1000):
                policy = Policy()
                policy(tf.zeros([4]))
            """,
            9,
            14,
            9,
            22,
            "a new `Policy` every iteration traces its `tf.function` method `__call__` again for "
            "each instance",
        ),
    )

    def setup(self) -> None:
        #: Instantiations already reported (for the first method call they are used for).
        self._reported: set[cst.Call] = set()

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        if not context.loops or context.in_tf_function:
            return
        if context.bounded(context.options.max_python_values):
            return  # a few instances: a few traces, nothing grows
        receiver, method = self._receiver_and_method(node)
        if receiver is None:
            return
        if isinstance(receiver, cst.Call):
            instantiations = [(receiver, context.loops)]
        else:
            instantiations = self._instantiations_in_loop(receiver)
        for instantiation, loops in instantiations:
            found = context.project_class(instantiation.func)
            if found is None or instantiation in self._reported:
                continue
            if self._few(loops):
                continue  # the loops that make the instances make a few
            module, klass = found
            if method not in context.tf_function_attributes(module, klass):
                continue
            self._reported.add(instantiation)
            report = self.report(
                instantiation,
                f"a new `{klass.name}` every iteration traces its `tf.function` method "
                f"`{method}` again for each instance",
            )
            report.relate(RelatedRole.CALLER, f"`{method}` is called here", node)
            relate_loop(report, context)

    @staticmethod
    def _receiver_and_method(node: cst.Call) -> tuple[cst.BaseExpression | None, str]:
        """``obj.method(...)`` -> (obj, "method"); ``obj(...)`` -> (obj, "__call__")."""
        func = node.func
        if isinstance(func, cst.Attribute):
            return func.value, func.attr.value
        if isinstance(func, cst.Name):
            return func, "__call__"
        return None, ""

    def _instantiations_in_loop(
        self, receiver: cst.BaseExpression
    ) -> list[tuple[cst.Call, list[LoopNode]]]:
        """The calls assigned to ``receiver`` in the enclosing loops, each with the enclosing
        loops that repeat it."""
        name = dotted(receiver)
        if name is None or "." in name:
            return []
        loops = self.context.loops
        enclosing = set(loops)
        return [
            (assignment.value, [loop for loop in loops if loop in assignment.loops])
            for assignment in self.context.scope_facts().assignments.get(name, [])
            if isinstance(assignment.value, cst.Call) and assignment.loops & enclosing
        ]

    def _few(self, loops: list[LoopNode]) -> bool:
        """``loops`` run what they enclose at most ``max-python-values`` times in all (the
        product of their trip counts: a guard around the method's call, inside them, does not
        make fewer instances)."""
        total = 1
        for loop in loops:
            count = self.context.trip_count(loop)
            if count is None:
                return False
            total *= count
        return total <= self.context.options.max_python_values
