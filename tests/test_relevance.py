"""Leaving units out of the libcst parse must never change the findings."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tflint_leaks.analysis.index import index_source
from tflint_leaks.analysis.project import ProjectIndex
from tflint_leaks.analysis.triggers import Triggers
from tflint_leaks.config import Settings
from tflint_leaks.engine.relevance import blanked_source, combine
from tflint_leaks.engine.runner import lint_paths
from tflint_leaks.registry import RULES, Code

ROOT = Path(__file__).resolve().parent.parent
EVERY_RULE = Settings(select=("ALL",))


def _findings(paths: list[Path], *, prefilter: bool) -> list[tuple[str, str, int, int]]:
    result = lint_paths(paths, EVERY_RULE, prefilter=prefilter)
    return [(d.file, d.code, d.start.line, d.start.column) for d in result.diagnostics]


def test_fixtures_give_the_same_findings_with_and_without_the_prefilter() -> None:
    paths = [ROOT / "fixtures"]
    with_prefilter = _findings(paths, prefilter=True)
    assert with_prefilter  # the fixtures do have findings
    assert with_prefilter == _findings(paths, prefilter=False)


@pytest.mark.parametrize("code", RULES, ids=lambda code: code.code)
def test_examples_give_the_same_findings_with_and_without_the_prefilter(
    tmp_path: Path, code: Code
) -> None:
    rule = code.load()
    sources = [example.source for example in (*rule.INVALID, *rule.VALID)]
    for number, source in enumerate(sources):
        path = tmp_path / f"example_{number}.py"
        path.write_text(source)
    paths = sorted(tmp_path.glob("*.py"))
    assert _findings(paths, prefilter=True) == _findings(paths, prefilter=False)


SOURCE = textwrap.dedent(
    """\
    import tensorflow as tf

    def helper(x):
        return [x for _ in range(3)]

    class Model:
        size = 3

        @property
        def name(self):
            return "m"

        def run(self, data):
            for batch in data:
                self.step(batch)

    def untouched():
        pass
    """
)


def test_unneeded_units_are_blanked_keeping_every_position(tmp_path: Path) -> None:
    path = tmp_path / "module.py"
    path.write_text(SOURCE)
    module = index_source(SOURCE, path)
    needs = combine([Triggers(loop_names=frozenset({"step"}))], module, ProjectIndex([module]))
    blanked = blanked_source(SOURCE, module, needs)
    assert blanked is not None
    assert blanked.splitlines() == [
        "import tensorflow as tf",
        "",
        "",
        "",
        "",
        "class Model:",
        "    size = 3",
        "",
        "",
        "",
        "",
        "",
        "    def run(self, data):",
        "        for batch in data:",
        "            self.step(batch)",
        "",
        "",
        "",
    ]


def test_a_file_nothing_needs_is_not_parsed(tmp_path: Path) -> None:
    path = tmp_path / "module.py"
    path.write_text(SOURCE)
    module = index_source(SOURCE, path)
    needs = combine([Triggers(names=frozenset({"GradientTape"}))], module, ProjectIndex([module]))
    assert blanked_source(SOURCE, module, needs) is None
    assert blanked_source(SOURCE, module, combine([None], module, ProjectIndex([module]))) == SOURCE


def _generated(rows: int, loop_at_module_level: bool) -> str:
    """A generated module: a table of constants, a module-level list a ``tf.function``
    appends to, and a training loop (in a function, or at module level)."""
    table = "".join(f"VALUE_{i} = {i}\n" for i in range(rows))
    loop = "for i in range(100):\n    step(tf.ones([1]), i)\n"
    if not loop_at_module_level:
        loop = "def train():\n" + textwrap.indent(loop, "    ")
    return (
        "import tensorflow as tf\n\nhistory = []\n\n@tf.function\ndef step(x, i):\n"
        "    history.append(x)\n    return x\n\n" + table + "\n" + loop
    )


@pytest.mark.parametrize("loop_at_module_level", [False, True])
def test_module_level_code_no_rule_needs_is_not_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loop_at_module_level: bool
) -> None:
    """Failed before: every module-level statement went to libcst (a 200,000-row generated
    module took minutes). Now the table is one blank string; ``history = []`` (which the
    ``tf.function`` needs) and the imports stay; the findings are those of the full parse."""
    import libcst

    source = _generated(2_000, loop_at_module_level)
    path = tmp_path / "generated.py"
    path.write_text(source)
    parsed: list[str] = []
    original = libcst.parse_module

    def recording(text: str) -> libcst.Module:
        parsed.append(text)
        return original(text)

    monkeypatch.setattr(libcst, "parse_module", recording)
    with_prefilter = _findings([path], prefilter=True)
    (text,) = parsed
    assert len(text.splitlines()) == len(source.splitlines())
    kept = [line for line in text.splitlines() if line.strip()]
    table_start = source.splitlines().index("VALUE_0 = 0") + 1
    table_end = table_start + 2_000 - 1
    assert kept == [
        "import tensorflow as tf",
        "history = []",
        "@tf.function",
        "def step(x, i):",
        "    history.append(x)",
        "    return x",
        '"""',
        '"""',
        *source.splitlines()[table_end + 1 :],
    ]
    assert text.splitlines()[table_start - 1] == '"""'
    assert text.splitlines()[table_end - 1] == '"""'
    assert with_prefilter == _findings([path], prefilter=False)
    assert [(code, line) for _, code, line, _ in with_prefilter] == [
        ("TFL301", 7),
        ("TFL101", table_end + 3 if loop_at_module_level else table_end + 4),
    ]


ALIASED = textwrap.dedent(
    """\
    from tensorflow import GradientTape as Tape
    from tensorflow.data import Dataset as D


    def train_step(model, optimizer, x):
        with Tape(persistent=True) as tape:
            loss_a, loss_b = model(x)
        grads_a = tape.gradient(loss_a, model.trainable_variables)
        grads_b = tape.gradient(loss_b, model.trainable_variables)
        optimizer.apply_gradients(zip(grads_a + grads_b, model.trainable_variables * 2))


    def train(model, x, y, epochs):
        for epoch in range(epochs):
            model.fit(D.from_tensor_slices((x, y)).batch(32), epochs=1)
    """
)


def test_a_trigger_imported_under_another_name_keeps_its_unit(tmp_path: Path) -> None:
    """Failed before: the units mention `Tape` and `D`, not `GradientTape` and `Dataset`, so
    the prefilter left them out and the two findings were lost."""
    path = tmp_path / "aliased.py"
    path.write_text(ALIASED)
    findings = _findings([path], prefilter=True)
    assert [(code, line, column) for _, code, line, column in findings] == [
        ("TFL201", 6, 10),
        ("TFL404", 15, 19),
    ]
    assert findings == _findings([path], prefilter=False)


def test_a_builtin_range_or_zip_in_a_loop_does_not_need_the_dataset_rule(tmp_path: Path) -> None:
    """`tf.data.Dataset.range` and `.zip` are reached through `Dataset`: a loop over the
    builtins is left out of the libcst parse (it was parsed for TFL404 before)."""
    source = "def total(xs, ys):\n    return sum(x * y for x, y in zip(xs, range(len(ys))))\n"
    path = tmp_path / "plain.py"
    path.write_text(source)
    module = index_source(source, path)
    code = next(code for code in RULES if code.code == "TFL404")
    needs = combine([code.triggers], module, ProjectIndex([module]))
    assert blanked_source(source, module, needs) is None


AGENT = """\
import tensorflow as tf


class Agent:
    def __init__(self, size):
        self.policy = tf.keras.Sequential([tf.keras.layers.Dense(size)])
"""
EPISODES = """\
from agent import Agent

for episode in range(300):
    agent = Agent(64)
"""


@pytest.mark.parametrize("select", [("TFL401",), ("ALL",)])
def test_a_loop_constructing_a_class_whose_init_builds_a_model_is_kept(
    tmp_path: Path, select: tuple[str, ...]
) -> None:
    """Failed before: the loop names only `Agent`, a class whose `__init__` builds a model;
    the prefilter judged the class by its `tf.function`s and model bases alone and left the
    loop out, so the finding came only when another rule's trigger (`predict`) was there."""
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "episodes.py").write_text(EPISODES)
    result = lint_paths([tmp_path], Settings(select=select), jobs=1)
    found = [(Path(d.file).name, d.code, d.start.line, d.start.column) for d in result.diagnostics]
    assert found == [("episodes.py", "TFL401", 4, 13)]


NETWORKS = """\
import tensorflow as tf


class ActorNetwork(tf.keras.Model):
    def __init__(self, units):
        super().__init__()
        self.dense = tf.keras.layers.Dense(units)
"""

AGENTS = """\
from networks import ActorNetwork


class Agent:
    def __init__(self, units):
        self.actor = ActorNetwork(units)
"""


def test_a_loop_constructing_a_class_whose_init_makes_a_project_model_is_kept(
    tmp_path: Path,
) -> None:
    """Failed before (MADDPG, unseen set L of stop 43): `Agent.__init__` constructs
    `ActorNetwork`, a project subclass of `keras.Model`, whose own `__init__` builds no model
    by what it calls; the prefilter's by-name check followed the constructor into that
    `__init__` and said "nothing", so the loop was left out and the finding lost (it came back
    only when the loop's scope named `evaluate`, another rule's trigger)."""
    (tmp_path / "networks.py").write_text(NETWORKS)
    (tmp_path / "agents.py").write_text(AGENTS)
    (tmp_path / "main.py").write_text(
        "from agents import Agent\n\nfor name in names:\n    agent = Agent(5)\n"
    )
    for prefilter in (True, False):
        result = lint_paths([tmp_path], Settings(select=("ALL",)), jobs=1, prefilter=prefilter)
        found = [
            (Path(d.file).name, d.code, d.start.line, d.start.column) for d in result.diagnostics
        ]
        assert found == [("main.py", "TFL401", 4, 13)]


METRICS = """\
import tensorflow as tf


class Metric:
    def __call__(self, x):
        return self.evaluate(x)


class Randomization(Metric):
    def evaluate(self, x):
        randomized = tf.keras.models.clone_model(x)
        return randomized.count_params()
"""


@pytest.mark.parametrize(
    ("loop", "line"),
    [
        # The loop names only what the statements before it bound from the class.
        (
            "metrics = [Randomization()]\nfor step in range(100):\n    for m in metrics:\n"
            "        m(step)\n",
            6,
        ),
        # A function naming the class, whose instance it calls (`__call__` inherited).
        (
            "def run(data):\n    metric = Randomization()\n    for x in data:\n        metric(x)\n",
            6,
        ),
    ],
)
def test_a_loop_calling_instances_of_a_class_whose_call_builds_a_model_is_kept(
    tmp_path: Path, loop: str, line: int
) -> None:
    """Failed before: the prefilter left the loop out (it names `metrics` or `metric`, bound
    from `Randomization`, whose inherited `__call__` clones a model), so nothing was found;
    without the prefilter the finding is there."""
    (tmp_path / "metrics.py").write_text(METRICS)
    (tmp_path / "run.py").write_text("from metrics import Randomization\n\n" + loop)
    for prefilter in (True, False):
        result = lint_paths([tmp_path], Settings(select=("ALL",)), jobs=1, prefilter=prefilter)
        found = [(Path(d.file).name, d.code, d.start.line) for d in result.diagnostics]
        assert found == [("run.py", "TFL401", line)]


NAS_ENV = """\
import tensorflow as tf


class DenseEnv:
    def get_rewards(self, actions):
        model = tf.keras.Sequential([tf.keras.layers.Dense(units) for units in actions])
        model.compile(loss="mse")
        model.fit(x, y, epochs=5)
        return model.evaluate(x, y)
"""

NAS_CONTROLLER = """\
import tensorflow as tf


def train_controller(controller, env, optimizer, steps):
    for step in range(steps):
        with tf.GradientTape() as tape:
            actions = controller(None, training=True)
            with tape.stop_recording():
                reward = env.get_rewards(actions)
            loss = -tf.reduce_sum(actions) * reward
        grads = tape.gradient(loss, controller.trainable_variables)
        optimizer.apply_gradients(zip(grads, controller.trainable_variables))
"""

NAS_TRAIN = """\
from controller import train_controller
from dense_env import DenseEnv

train_controller(make_controller(), DenseEnv(), optimizer, 100)
"""


@pytest.mark.parametrize("select", ["TFL403", "TFL4", "TFL401,TFL403"])
def test_a_rules_findings_do_not_depend_on_the_others_selected(tmp_path: Path, select: str) -> None:
    """yaogood/NAS-tensorflow2: the controller's loop fits a model through ``env``, an object
    its caller in another module passes in; the loop is kept for the libcst pass because its
    tape is TFL201's. TFL403 finds the same there whichever other rules are selected."""
    files = {"dense_env.py": NAS_ENV, "controller.py": NAS_CONTROLLER, "train.py": NAS_TRAIN}
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    everything = lint_paths([tmp_path], Settings(select=("ALL",))).diagnostics
    selected = lint_paths([tmp_path], Settings(select=tuple(select.split(",")))).diagnostics
    expected = [d for d in everything if d.code == "TFL403"]
    assert [(d.code, Path(d.file).name, d.start.line) for d in expected] == [
        ("TFL403", "controller.py", 9)
    ]
    assert [d for d in selected if d.code == "TFL403"] == expected


#: alpha-zero-general's shape: the search and the coach import no TensorFlow; the entry point
#: imports them with the Keras network it hands them.
HANDED_IN = {
    "nnet.py": """\
        import tensorflow as tf


        class NNet:
            def __init__(self):
                self.model = tf.keras.Sequential([tf.keras.layers.Dense(4)])

            def predict(self, board):
                return self.model.predict(board, verbose=False)
        """,
    "mcts.py": """\
        class MCTS:
            def __init__(self, nnet):
                self.nnet = nnet

            def search(self, board):
                return self.nnet.predict(board)
        """,
    "coach.py": """\
        from mcts import MCTS


        class Coach:
            def __init__(self, nnet):
                self.mcts = MCTS(nnet)

            def learn(self, boards):
                for board in boards:
                    self.mcts.search(board)
        """,
    "main.py": """\
        from coach import Coach
        from nnet import NNet

        Coach(NNet()).learn(boards)
        """,
}


@pytest.mark.parametrize("prefilter", [True, False])
def test_a_module_handed_tensorflow_values_by_its_importer_is_linted(
    tmp_path: Path, prefilter: bool
) -> None:
    """Failed before: ``coach.py`` uses no TensorFlow and imports nothing that does, so it was
    not linted at all, though ``main.py`` hands it the Keras network."""
    for name, source in HANDED_IN.items():
        (tmp_path / name).write_text(textwrap.dedent(source))
    assert _findings([tmp_path], prefilter=prefilter) == [
        (str(tmp_path / "coach.py"), "TFL402", 10, 13)
    ]


HANDED_AGENT = """\
import numpy as np
import tensorflow as tf


class Agent:
    def __init__(self):
        self.model = tf.keras.models.load_model("q.keras")

    def act(self, state):
        return self.model.predict(np.array([state]))[0]
"""

SIMULATION = """\
class Simulation:
    def __init__(self, agent):
        self.agent = agent

    def test(self, env, max_steps):
        state = env.reset()
        for step in range(max_steps):
            state = env.step(self.agent.act(state))
"""

RUN = """\
from agent import Agent
from simulation import Simulation

Simulation(Agent()).test(env, max_steps=1000)
"""


def test_a_loop_calling_a_method_of_an_object_handed_in_is_kept(tmp_path: Path) -> None:
    """Failed before (huskarl, set Z20): `simulation.py` imports no agent; the prefilter knew
    `act` only from the modules it imports and left the loop out, while the analysis, told
    by `run.py` which agent the simulation holds, finds the `predict` it runs per step."""
    for name, source in (("agent.py", HANDED_AGENT), ("simulation.py", SIMULATION)):
        (tmp_path / name).write_text(source)
    (tmp_path / "run.py").write_text(RUN)
    paths = sorted(tmp_path.glob("*.py"))
    expected = [(str(tmp_path / "simulation.py"), "TFL402", 8, 30)]
    assert _findings(paths, prefilter=False) == expected
    assert _findings(paths, prefilter=True) == expected
