"""Where a piece of state is assigned (``analysis/writes.py``, asked by TFL305 through
``FileContext.writes``): attributes through classes, instances and files, globals, set-up code,
and the loop that repeats each assignment, with the chain of calls."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from tflint_leaks.analysis.facts import Loop, Span
from tflint_leaks.analysis.index import ModuleIndex, index_source
from tflint_leaks.analysis.inference import Where
from tflint_leaks.analysis.program import Program
from tflint_leaks.analysis.project import ProjectIndex
from tflint_leaks.analysis.symbolic import from_ast
from tflint_leaks.analysis.writes import Write


def _project(tmp_path: Path, **files: str) -> tuple[Program, dict[str, ModuleIndex]]:
    modules = {}
    for name, source in files.items():
        path = tmp_path / f"{name}.py"
        text = textwrap.dedent(source).lstrip("\n")
        path.write_text(text)
        modules[name] = index_source(text, path)
    return Program(ProjectIndex(modules.values())), modules


def _writes(program: Program, where: Where, expression: str) -> list[tuple[object, ...]]:
    """Each write as (file stem, function, line, setup, traced, rebuilds, loop line, loop
    file stem, callees of the chain)."""
    found = program.writes_of(from_ast(ast.parse(expression, mode="eval").body), where)
    return [_shown(write) for write in found]


def _shown(write: Write) -> tuple[object, ...]:
    return (
        Path(write.path).stem,
        write.function,
        write.span.line,
        write.setup,
        write.traced,
        write.rebuilds,
        write.loop.line if write.loop is not None else None,
        Path(write.loop_path).stem if write.loop_path else None,
        tuple(hop.callee for hop in write.chain),
    )


def _method(module: ModuleIndex, qualname: str) -> Where:
    return Where(module, module.functions[qualname], module.classes[qualname.partition(".")[0]])


AGENT = """
import tensorflow as tf

class Agent:
    epsilon = 1.0

    def __init__(self):
        self.epsilon = 1.0
        self._configure()

    def _configure(self):
        self.epsilon = 0.9

    def set_epsilon(self, value):
        self.epsilon = value

    @tf.function
    def act(self, q):
        self.epsilon = 0.5
        return q * self.epsilon

    def decay(self, steps):
        for _ in range(steps):
            self.epsilon *= 0.99
            self.act(1.0)
"""


def test_an_attribute_is_assigned_by_its_class_by_instances_and_through_callers(
    tmp_path: Path,
) -> None:
    program, modules = _project(
        tmp_path,
        agent=AGENT,
        run="""
        from agent import Agent

        def episode(agent, value):
            agent.set_epsilon(value)

        agent = Agent()
        agent.epsilon = 0.3
        for step in range(10):
            agent.epsilon = 0.2
            episode(agent, 0.1)
        """,
    )
    act = _method(modules["agent"], "Agent.act")
    assert _writes(program, act, "self.epsilon") == [
        ("agent", "Agent", 4, True, False, False, None, None, ()),
        ("agent", "Agent.__init__", 7, True, False, False, None, None, ()),
        ("agent", "Agent._configure", 11, True, False, False, None, None, ()),
        (
            "agent",
            "Agent.set_epsilon",
            14,
            False,
            False,
            False,
            8,
            "run",
            ("episode", "Agent.set_epsilon"),
        ),
        ("agent", "Agent.act", 18, False, True, False, None, None, ()),
        ("agent", "Agent.decay", 23, False, False, False, 22, "agent", ()),
        ("run", "", 7, True, False, False, None, None, ()),
        ("run", "", 9, False, False, False, 8, "run", ()),
    ]


def test_a_loop_that_makes_the_instance_anew_repeats_nothing(tmp_path: Path) -> None:
    """``agent = Agent()`` in the loop: each iteration assigns a new instance's state, and a
    method called on it there (``fold.fit()``) is not repeated on one instance either."""
    program, modules = _project(
        tmp_path,
        agent=AGENT,
        folds="""
        from agent import Agent

        class Fold:
            def __init__(self):
                self.scale = 1.0

            def fit(self):
                self.scale = 2.0

        for k in range(5):
            agent = Agent()
            agent.epsilon = k / 5
            fold = Fold()
            fold.fit()
        for agent in [Agent(), Agent()]:
            agent.epsilon = 0.0
        """,
    )
    act = _method(modules["agent"], "Agent.act")
    external = [w for w in _writes(program, act, "self.epsilon") if w[0] == "folds"]
    assert external == [
        ("folds", "", 12, True, False, False, None, None, ()),
        ("folds", "", 16, True, False, False, None, None, ()),
    ]
    fit = _method(modules["folds"], "Fold.fit")
    assert _writes(program, fit, "self.scale") == [
        ("folds", "Fold.__init__", 5, True, False, False, None, None, ()),
        ("folds", "Fold.fit", 8, False, False, False, None, None, ()),
    ]


def test_a_global_is_assigned_by_its_module_and_by_functions_declaring_it(
    tmp_path: Path,
) -> None:
    program, modules = _project(
        tmp_path,
        config="""
        LR = 0.1
        if True:
            LR = 0.2

        def decay():
            global LR
            LR = LR * 0.5

        def shadow():
            LR = 3
            return LR

        for epoch in range(3):
            decay()
        while LR > 0.01:
            LR = LR / 2
        """,
        train="""
        import config

        def step(x, LR=1.0):
            return x * config.LR * LR
        """,
    )
    expected = [
        ("config", "", 1, True, False, False, None, None, ()),
        ("config", "", 3, True, False, False, None, None, ()),
        ("config", "decay", 7, False, False, False, 13, "config", ("decay",)),
        ("config", "", 16, False, False, False, 15, "config", ()),
    ]
    assert _writes(program, Where(modules["config"]), "LR") == expected
    step = Where(modules["train"], modules["train"].functions["step"])
    assert _writes(program, step, "config.LR") == expected
    assert _writes(program, step, "LR") == []  # the parameter
    shadow = Where(modules["config"], modules["config"].functions["shadow"])
    assert _writes(program, shadow, "LR") == []  # the local


def test_setup_is_code_only_set_up_code_calls(tmp_path: Path) -> None:
    """A method called from ``__init__`` and from elsewhere is not set-up code; one that
    nothing calls is not either (a framework may call it any time)."""
    program, modules = _project(
        tmp_path,
        model="""
        import tensorflow as tf

        class Model(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.reset()
                self.helper()

            def build(self, shape):
                self.width = shape[-1]

            def reset(self):
                self.width = 0

            def helper(self):
                self.width = 1

            def on_epoch_end(self):
                self.width = 2

            def train(self):
                self.helper()
        """,
    )
    where = _method(modules["model"], "Model.train")
    assert [(w[1], w[3]) for w in _writes(program, where, "self.width")] == [
        ("Model.build", True),
        ("Model.reset", True),
        ("Model.helper", False),
        ("Model.on_epoch_end", False),
    ]


def test_an_assignment_whose_function_makes_a_tf_function_rebuilds(tmp_path: Path) -> None:
    program, modules = _project(
        tmp_path,
        decoder="""
        import tensorflow as tf

        class Decoder:
            def set_r(self, r):
                self.r = r
                self._compile()

            def _compile(self):
                self.step = tf.function(self._step)

            def _step(self, x):
                return x[:: self.r]
        """,
    )
    step = _method(modules["decoder"], "Decoder._step")
    assert [(w[1], w[4], w[5]) for w in _writes(program, step, "self.r")] == [
        ("Decoder.set_r", False, True)
    ]


def test_attributes_of_library_objects_have_no_writes(tmp_path: Path) -> None:
    program, modules = _project(
        tmp_path,
        train="""
        import tensorflow as tf

        optimizer = tf.keras.optimizers.Adam()
        for epoch in range(3):
            optimizer.learning_rate = 0.1 / (epoch + 1)
        """,
    )
    assert _writes(program, Where(modules["train"]), "optimizer.learning_rate") == []


def test_the_index_keeps_each_assignment_span_and_each_loop(tmp_path: Path) -> None:
    """``Body.loops``: a loop's header and the part that runs every iteration (``else`` is not
    in it); ``loop_around`` is the innermost loop repeating a span."""
    source = textwrap.dedent(
        """
        def f(xs):
            total = 0
            for x in xs:
                while total < x:
                    total += 1
            else:
                total = -1
            return total
        """
    ).lstrip("\n")
    function = index_source(source, tmp_path / "f.py").functions["f"]
    body = function.body
    assert body.loops == (
        Loop(Span(3, 5, 3, 16), Span(4, 9, 5, 23)),
        Loop(Span(4, 9, 4, 24), Span(5, 13, 5, 23)),
    )
    spans = {a.span: a.target for a in body.assigns}
    assert spans == {
        Span(2, 5, 2, 14): "total",
        Span(3, 9, 3, 10): "x",
        Span(5, 13, 5, 23): "total",
        Span(7, 9, 7, 19): "total",
    }
    assert body.loop_around(Span(5, 13, 5, 23)) == body.loops[1]
    assert body.loop_around(Span(7, 9, 7, 19)) is None
    assert body.loop_around(Span(2, 5, 2, 14)) is None


def test_an_assignment_every_path_assigns_again_before_code_that_could_look_is_no_write(
    tmp_path: Path,
) -> None:
    """Only the body sees such a value: assigned again in both branches of an ``if``, or
    after calls that run no code of the program (``tf.argmax``, ``tf.cast``). A call that may
    (a method, the model), a ``return``, the end of a loop's body or of the function, a
    ``try`` and a branch that does not assign again each let the value be seen."""
    program, modules = _project(
        tmp_path,
        explainer="""
        import tensorflow as tf

        class Explainer:
            def explain(self, x, a, graph_level):
                if graph_level:
                    self.y = tf.argmax(self.model([x, a]), axis=1)
                else:
                    self.y = tf.argmax(self.model([x]), axis=1)
                self.node = self.y[0]
                self.y = tf.cast(self.y, tf.float32)
                self.z = tf.zeros([8])
                self.fit(x)
                self.z = tf.ones([8])
                if a:
                    self.z = self.z * 2
                for batch in x:
                    self.w = tf.zeros([8])
                    self.w = tf.ones([8])
                    if batch:
                        return self.w
                    self.w = tf.cast(self.w, tf.int32)
                self.v = 1
                try:
                    self.v = 2
                except ValueError:
                    pass
        """,
    )
    where = _method(modules["explainer"], "Explainer.explain")
    assert [w[2] for w in _writes(program, where, "self.y")] == [10]
    assert [w[2] for w in _writes(program, where, "self.z")] == [11, 13, 15]
    assert [w[2] for w in _writes(program, where, "self.w")] == [18, 21]
    assert [w[2] for w in _writes(program, where, "self.v")] == [22, 24]
    body = modules["explainer"].functions["Explainer.explain"].body
    assert [(target, span.line) for target, span in body.overwritten] == [
        ("self.y", 6),
        ("self.y", 8),
        ("self.w", 17),
    ]


def test_a_value_computed_from_one_the_same_run_assigned_is_no_update(tmp_path: Path) -> None:
    """``self.y = tf.cast(self.y, ...)`` after ``self.y`` is set on every path before it is
    renewed, not an update of the last run's value; after a branch or a loop that may not
    have set it, or once ``self`` is bound anew, it is an update."""
    _, modules = _project(
        tmp_path,
        learner="""
        class Learner:
            def learn(self, flag, xs):
                if flag:
                    self.y = 1
                    self.k = 1
                else:
                    self.y = 2
                self.y = self.y * 2
                self.k = self.k * 2
                for x in xs:
                    self.j = x
                self.j += 1
                self.m = 0
                self = Learner()
                self.m += 1
                self.n = 0
                self.n += 1
                self.n += 1
        """,
    )
    body = modules["learner"].functions["Learner.learn"].body
    assert [(target, span.line) for target, span in body.renewed] == [
        ("self.y", 8),
        ("self.n", 17),
        ("self.n", 18),
    ]


def test_values_changed_in_place_are_a_fact_of_the_body(tmp_path: Path) -> None:
    _, modules = _project(
        tmp_path,
        train="""
        import random
        import numpy as np
        import tensorflow as tf
        from sklearn.utils import shuffle

        X = np.load("x.npy")
        X[X < 0] = 0
        rng = np.random.default_rng(0)
        for epoch in range(3):
            np.random.shuffle(X)
            rng.shuffle(data.y)
            X.sort(axis=0)
            np.add(X, 1, out=buffer)
            random.shuffle(items)
            weights[:, 0] += 1.0
            Y = tf.random.shuffle(Y)
            Z = shuffle(Z)
            ds = ds.shuffle(1000)
        """,
    )
    changed = [(name, span.line, span.column) for name, span in modules["train"].body.changed]
    assert changed == [
        ("X", 7, 1),
        ("X", 10, 5),
        ("data.y", 11, 5),
        ("X", 12, 5),
        ("buffer", 13, 5),
        ("items", 14, 5),
        ("weights", 15, 5),
    ]
