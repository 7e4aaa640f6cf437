from __future__ import annotations

import libcst as cst

from tflint_leaks.analysis.scope import dotted
from tflint_leaks.engine.relevance import Triggers
from tflint_leaks.rules._calls import relate_loop
from tflint_leaks.rules.base import Invalid, Rule


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
    methods; an instance created in a loop whose `tf.function` methods are not called there.

    ## Example
    ```python
    for fold in range(10):
        trainer = Trainer(config)
        trainer.train_step(x)
    ```

    ## Use instead
    ```python
    trainer = Trainer(config)
    for fold in range(10):
        trainer.reset(config)
        trainer.train_step(x)
    ```
    or make the `tf.function` a module-level function that takes the state as arguments.

    ## References
    - [tf.function guide: rules of tracing](https://www.tensorflow.org/guide/function#rules_of_tracing)
    - [tensorflow/tensorflow#31175](https://github.com/tensorflow/tensorflow/issues/31175)
    """

    code = "TFL104"
    name = "function-method-per-instance"
    summary = "A class with `tf.function` methods is instantiated and used in every iteration"
    TRIGGERS = Triggers(project_loop_names=True)

    VALID = (
        """
        import tensorflow as tf

        class Trainer:
            @tf.function
            def step(self, x):
                return x

        trainer = Trainer()
        for i in range(100):
            trainer.step(tf.ones([1]))
        """,
        """
        import tensorflow as tf

        class Config:
            def __init__(self, lr):
                self.lr = lr

        for lr in range(100):
            config = Config(lr)
            print(config.lr)
        """,
        """
        import tensorflow as tf

        class Trainer:
            @tf.function
            def step(self, x):
                return x

            def describe(self):
                return "trainer"

        for i in range(100):
            print(Trainer().describe())
        """,
        """
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
        """,
        """
        import tensorflow as tf

        class Trainer:
            @tf.function
            def step(self, x):
                return x

        trainers = [Trainer() for _ in range(4)]
        """,
        """
        import tensorflow as tf

        class Trainer:
            def step(self, x):
                return x

        for i in range(100):
            Trainer().step(tf.ones([1]))
        """,
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
            while epoch < 5:
                model = Child()
                model.step(tf.zeros([2]))
                epoch += 1
            """,
            13,
            13,
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
        ),
    )

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._reported: set[int] = set()

    def visit_Call(self, node: cst.Call) -> None:
        context = self.context
        if not context.loops or context.in_tf_function:
            return
        receiver, method = self._receiver_and_method(node)
        if receiver is None:
            return
        if isinstance(receiver, cst.Call):
            instantiations = [receiver]
        else:
            instantiations = self._instantiations_in_loop(receiver)
        for instantiation in instantiations:
            found = context.project_class(instantiation.func)
            if found is None or id(instantiation) in self._reported:
                continue
            module, klass = found
            if method not in context.project.class_tf_functions(module, klass):
                continue
            self._reported.add(id(instantiation))
            report = self.report(
                instantiation,
                f"a new `{klass.name}` every iteration traces its `tf.function` method "
                f"`{method}` again for each instance",
            )
            report.relate("caller", f"`{method}` is called here", node)
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

    def _instantiations_in_loop(self, receiver: cst.BaseExpression) -> list[cst.Call]:
        name = dotted(receiver)
        if name is None or "." in name:
            return []
        loops = {id(loop) for loop in self.context.loops}
        return [
            assignment.value
            for assignment in self.context.scope_facts().assignments.get(name, [])
            if isinstance(assignment.value, cst.Call) and assignment.loops & loops
        ]
