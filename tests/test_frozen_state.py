"""TFL305 across files: the read in one file, the assignment and the loop that repeats it in
others; what ``related`` and the text output show; instances made anew per iteration."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tflint_leaks.analysis.index import index_source
from tflint_leaks.cli import main

AGENT = """\
import tensorflow as tf


class Agent:
    def __init__(self):
        self.epsilon = 1.0

    def set_epsilon(self, value):
        self.epsilon = value

    @tf.function
    def explore(self, q_values):
        return tf.random.uniform(tf.shape(q_values)) < self.epsilon
"""


def _run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], files: dict[str, str], *argv: str
) -> tuple[int, str]:
    """Write ``files`` into ``tmp_path`` and lint it with TFL305 alone: the exit code, the
    output."""
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    (tmp_path / "pyproject.toml").write_text("[tool.tflint-leaks]\n")
    code = main(["--no-cache", "--select", "TFL305", *argv, str(tmp_path)])
    return code, capsys.readouterr().out


def _first_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], files: dict[str, str]
) -> tuple[int, str]:
    """:func:`_run`'s exit code and the first line it printed (the first finding)."""
    code, out = _run(tmp_path, capsys, files)
    return code, out.splitlines()[0]


def test_a_setter_called_from_a_loop_in_another_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = """\
    from agent import Agent


    def episode(agent, step):
        agent.set_epsilon(max(0.05, 1.0 - step / 100))
        agent.explore([0.0, 1.0])


    agent = Agent()
    for step in range(1000):
        episode(agent, step)
    """
    code, out = _run(
        tmp_path, capsys, {"agent.py": AGENT, "run.py": run}, "--output-format", "json"
    )
    assert code == 1
    [finding] = json.loads(out)
    agent, runner = str(tmp_path / "agent.py"), str(tmp_path / "run.py")
    assert (finding["code"], finding["filename"], finding["location"]) == (
        "TFL305",
        agent,
        {"row": 13, "column": 56},
    )
    assert finding["message"] == (
        "`self.epsilon` is read while `explore` traces: later calls keep the value it had "
        "then, though `set_epsilon` assigns it again every iteration of a loop that calls it "
        "through `episode`; keep it in a `tf.Variable` and `assign` it, or pass it in as an "
        "argument"
    )
    related = [
        (r["role"], r["message"], r["filename"], r["location"]["row"], r["location"]["column"])
        for r in finding["related"]
    ]
    assert related == [
        ("call", "calls `episode`", runner, 11, 5),
        ("call", "calls `set_epsilon`", runner, 5, 5),
        ("assignment", "assigned again here", agent, 9, 9),
        ("loop", "repeated by this loop", runner, 10, 1),
    ]
    code, out = _run(tmp_path, capsys, {})
    assert out.splitlines()[1:4] == [
        f"    {runner}:11:5: calls `episode`",
        f"    {runner}:5:5: calls `set_epsilon`",
        f"    {agent}:9:9: assigned again here",
    ]


def test_an_instance_attribute_assigned_in_a_loop_of_another_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = """\
    from agent import Agent

    agent = Agent()
    for episode in range(500):
        agent.epsilon = max(0.05, agent.epsilon * 0.99)
        agent.explore([0.0, 1.0])
    """
    assert _first_line(tmp_path, capsys, {"agent.py": AGENT, "run.py": run}) == (
        1,
        f"{tmp_path / 'agent.py'}:13:56: TFL305 `self.epsilon` is read while `explore` traces: "
        "later calls keep the value it had then, though module-level code of `run.py` assigns "
        "it again every iteration of a loop; keep it in a `tf.Variable` and `assign` it, or "
        "pass it in as an argument",
    )


def test_an_instance_made_anew_each_iteration_is_quiet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each fold's agent traces its own ``explore`` (one trace cache per instance): the value
    each one reads is the one assigned to it."""
    folds = """\
    from agent import Agent


    def fold(k):
        for step in range(100):
            agent = Agent()
            agent.epsilon = k / 10
            agent.set_epsilon(step / 100)
            agent.explore([0.0, 1.0])
    """
    assert _run(tmp_path, capsys, {"agent.py": AGENT, "folds.py": folds}) == (
        0,
        "All checks passed!\n",
    )


LEARNER = """\
import tensorflow as tf


class Learner:
    def __init__(self):
        self.kl_coef = 0.5

    def forward_fn(self, x):
        return x * self.kl_coef

    @tf.function
    def learn(self, x):
        return self.forward_fn(x)

    def update(self, x):
        kl = self.learn(x)
        if kl > 1.0:
            self.kl_coef = self.kl_coef * 2.0
        return kl
"""


def test_a_method_only_a_tf_function_calls_runs_only_while_it_traces(tmp_path: Path) -> None:
    traced = index_source(LEARNER, tmp_path / "learner.py").traced
    assert traced == {"Learner.forward_fn": ("Learner.learn",)}
    eager = LEARNER + "\n\ndef evaluate(learner, x):\n    return learner.forward_fn(x)\n"
    assert index_source(eager, tmp_path / "learner.py").traced == {}
    also = LEARNER.replace("        kl = self.learn(x)", "        kl = self.forward_fn(x)")
    assert index_source(also, tmp_path / "learner.py").traced == {}
    # Handed to tf.py_function, it runs eagerly on every call of the tf.function.
    callback = LEARNER.replace(
        "return self.forward_fn(x)", "return tf.py_function(self.forward_fn, [x], tf.float32)"
    )
    assert index_source(callback, tmp_path / "learner.py").traced == {}


def test_a_traced_helper_knows_the_tf_functions_whose_traces_run_it(tmp_path: Path) -> None:
    """Through helpers that call each other (a cycle too), up to the ``tf.function``s; a
    function that a ``tf.function(...)`` call wraps is one itself."""
    source = """\
import tensorflow as tf


def scale(x):
    return shift(x) if x is None else x


def shift(x):
    return scale(x)


@tf.function
def first(x):
    return scale(x)


def second(x):
    return shift(x)


second_fn = tf.function(second)
"""
    assert index_source(source, tmp_path / "helpers.py").traced == {
        "scale": ("first", "second"),
        "second": (),
        "shift": ("first", "second"),
    }


def test_a_read_in_a_method_a_tf_function_calls_is_frozen_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _run(tmp_path, capsys, {"learner.py": LEARNER})
    assert code == 1
    assert out.splitlines()[0] == (
        f"{tmp_path / 'learner.py'}:9:20: TFL305 `self.kl_coef` is read while `forward_fn` "
        "traces: later calls keep the value it had then, though `update` computes a new value "
        "from its old one, an update meant to run again and again; keep it in a `tf.Variable` "
        "and `assign` it, or pass it in as an argument"
    )
    eager = LEARNER.replace("        kl = self.learn(x)", "        kl = self.forward_fn(x)")
    code, out = _run(tmp_path, capsys, {"learner.py": eager})
    assert (code, out.strip()) == (0, "All checks passed!")


EXACT = """\
import tensorflow as tf


class Exact:
    def __init__(self, inv_hessian=None, hessian=None):
        self.inv_hessian = inv_hessian
        self.hessian = hessian

    @tf.function
    def single(self, batch):
        return tf.matmul(self.hessian, batch)

    def compute(self, batches):
        if self.hessian is None:
            self.hessian = tf.linalg.pinv(self.inv_hessian)
        return [self.single(batch) for batch in batches]
"""


def test_a_state_filled_while_unset_is_set_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """influenciae: ``compute`` fills ``self.hessian`` only while it is unset (``if
    self.hessian is None:``), lazily, before the first trace; a test sets it on a new instance
    before its first call. Nothing is set after a trace. The same state changed every call of
    ``compute`` is flagged, with the test's assignment quiet beside it."""
    test = """\
    import tensorflow as tf
    from exact import Exact


    def test_single(batches):
        exact = Exact(inv_hessian=tf.eye(2))
        exact.hessian = tf.linalg.pinv(exact.inv_hessian)
        for batch in batches:
            exact.single(batch)
    """
    files = {"exact.py": EXACT, "test_exact.py": test}
    assert _run(tmp_path, capsys, files) == (0, "All checks passed!\n")
    files["exact.py"] = EXACT.replace("        if self.hessian is None:\n    ", "")
    assert _first_line(tmp_path, capsys, files) == (
        1,
        f"{tmp_path / 'exact.py'}:11:26: TFL305 `self.hessian` is read while `single` traces: "
        "later calls keep the value it had then, though `compute` and `test_single` of "
        "`test_exact.py` assign it again; keep it in a `tf.Variable` and `assign` it, or pass "
        "it in as an argument",
    )


CONFIGURED = """\
import tensorflow as tf


class Config:
    base_line = False


class Agent:
    def __init__(self, config):
        self.config = config

    @tf.function
    def train_step(self, x):
        if self.config.base_line:
            x = x - tf.reduce_mean(x)
        return x
"""

SCRIPT = """\
from agent import Agent, Config


def main():
    config = Config()
    config.base_line = {value}
    agent = Agent(config)
    for episode in range(500):
        agent.train_step([0.0, 1.0])


if __name__ == "__main__":
    main()
"""


def test_two_scripts_each_setting_the_state_once_are_two_programs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """rl_algos (set Z34 of stop 54): ``main.py`` and ``main_taxi.py`` each set the agent's
    configuration once before their loop; no module imports either, so the two never run in
    one program and the value is no toggle. Failed before: writes in two functions counted as
    a toggle wherever they were. When one script imports the other, both may run in one."""
    files = {
        "agent.py": CONFIGURED,
        "main.py": SCRIPT.format(value="True"),
        "main_taxi.py": SCRIPT.format(value="False"),
    }
    assert _run(tmp_path, capsys, files) == (0, "All checks passed!\n")
    files["main.py"] = "import main_taxi\n" + files["main.py"]
    assert _first_line(tmp_path, capsys, files) == (
        1,
        f"{tmp_path / 'agent.py'}:14:12: TFL305 `self.config.base_line` is read while "
        "`train_step` traces: later calls keep the value it had then, though `main` of "
        "`main.py` and `main` of `main_taxi.py` assign it again; keep it in a `tf.Variable` "
        "and `assign` it, or pass it in as an argument",
    )
