"""A call decides the branches of its callee that test what it passes: the three-valued tests
of :mod:`tflint_leaks.analysis.branches`, and what a call does without the blocks it rules out
(a backend chosen by a string or a ``str`` enum member, a ``None`` default not taken), across
files, with ``--jobs 1`` and ``2``."""

from __future__ import annotations

import ast
import json
import textwrap
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from tflint_leaks.analysis import branches
from tflint_leaks.analysis.lattice import (
    FALSE,
    NONE,
    NUMBER,
    STR,
    TRUE,
    UNKNOWN,
    Kind,
    Value,
    atom,
    container,
    number,
    strings,
)
from tflint_leaks.analysis.symbolic import Expr, from_ast
from tflint_leaks.config import Settings
from tflint_leaks.engine.runner import lint_paths

NAMES: dict[str, Value] = {
    "backend": strings(["pytorch"]),
    "either": strings(["keops", "pytorch"]),
    "model": atom(Kind.MODEL),
    "nothing": NONE,
    "text": STR,
    "anything": UNKNOWN,
    "empty": strings([""]),
    "scales": number({9}),
    "classes": number({-1, 10}),
    "count": NUMBER,
    "off": FALSE,
    "on": TRUE,
}


def _evaluate(expr: Expr) -> Generator[tuple[Any, ...], Any, Value]:
    if expr.op.name == "REF" and expr.text in NAMES:
        return NAMES[expr.text]
    if expr.op.name == "LITERAL":
        if expr.text == "none":
            return NONE
        if expr.keywords:
            return strings(expr.keywords)
        if expr.text == "number" and expr.number >= 0:
            return number({expr.number})
    if expr.op.name == "DISPLAY":
        items = []
        for part in expr.parts:
            items.append((yield from _evaluate(part)))
        return container(items=tuple(items))
    return UNKNOWN
    yield  # a generator, as the solver's evaluations are


def _decide(test: str) -> bool | None:
    computation = branches.decide(from_ast(ast.parse(test, mode="eval").body), _evaluate)
    try:
        next(computation)
    except StopIteration as stop:
        result: bool | None = stop.value
        return result
    raise AssertionError("the test evaluation asked the solver")


@pytest.mark.parametrize(
    ("test", "holds"),
    [
        ("backend == 'pytorch'", True),
        ("backend == 'tensorflow'", False),
        ("backend != 'tensorflow'", True),
        ("'tensorflow' == backend", False),
        ("either == 'pytorch'", None),  # one of two strings
        ("either == 'tensorflow'", False),
        ("either in ('keops', 'pytorch')", True),
        ("either in ['tensorflow', 'keops']", None),
        ("backend not in ('tensorflow', 'jax')", True),
        ("model is None", False),
        ("model is not None", True),
        ("nothing is None", True),
        ("text is None", False),
        ("text == 'pytorch'", None),  # a string whose text is not known
        ("model == 'pytorch'", None),  # ``__eq__`` of an object: not known
        ("backend is 'pytorch'", None),  # identity of strings: not decided
        ("anything == 'pytorch'", None),
        ("not model", None),
        ("not nothing", True),
        ("empty", False),
        ("backend", True),
        ("backend == 'pytorch' and model is None", False),
        ("backend == 'tensorflow' or model is not None", True),
        ("backend == 'pytorch' and anything == 1", None),
        ("backend < 'z'", None),
        ("'a' < backend < 'z'", None),
        ("scales == 9", True),
        ("scales != 9", False),
        ("scales > 0", True),
        ("scales <= 8", False),
        ("classes > 0", None),  # -1 or 10
        ("classes < 11", True),
        ("count > 0", None),  # a number not known
        ("scales == '9'", False),  # an integer is no string
        ("not scales", False),
        ("off", False),  # ``False``: a bool whose truth is known
        ("not off", True),
        ("on and backend == 'pytorch'", True),
        ("off or count > 0", None),
        ("off == 0", True),  # ``False == 0``, as in Python
        ("on is None", False),
    ],
)
def test_a_test_is_decided_only_when_every_value_agrees(test: str, holds: bool | None) -> None:
    assert _decide(test) is holds


DETECTORS = """\
import enum
import tensorflow as tf


class Framework({bases}):
    PYTORCH = "pytorch"
    TENSORFLOW = "tensorflow"


class KernelTF:
    def __init__(self):
        self.kernel = tf.keras.Sequential([tf.keras.layers.Dense(8)])


class KernelTorch:
    def __init__(self):
        self.kernel = None


class Detector:
    def __init__(self, x, backend="tensorflow"):
        backend = backend.lower()
        if backend == Framework.TENSORFLOW:
            kernel = KernelTF
        elif backend == Framework.PYTORCH:
            kernel = KernelTorch
        else:
            raise ValueError(backend)
        self.kernel = kernel()

    def predict(self, x):
        return x
"""

NOTEBOOK = """\
import tensorflow as tf
from lib.detectors import Detector


def experiment(backend, runs):
    for run in range(runs):
        detector = Detector(run, backend=backend)
        detector.predict(run)


for backend in ["pytorch", "PyTorch"]:
    experiment(backend, 300)

for run in range(300):
    Detector(run, backend="pytorch").predict(run)

for run in range(300):
    Detector(run).predict(run)

for run in range(300):
    Detector(run, "tensorflow").predict(run)
"""
#: What the notebook's loops report when nothing rules the TensorFlow branch out: line 7
#: (``experiment``'s own loop), lines 15, 18 and 21; ``experiment(...)`` at line 12 is quiet
#: however the branch goes, its loop being the one reported.
EVERY = [7, 15, 18, 21]


def _lines(root: Path, jobs: int) -> list[int]:
    result = lint_paths([root], Settings(select=("TFL401",)), jobs=jobs)
    assert not result.errors
    assert {d.code for d in result.diagnostics} <= {"TFL401"}
    return sorted(d.start.line for d in result.diagnostics)


def _project(root: Path, bases: str) -> Path:
    (root / "lib").mkdir()
    (root / "lib" / "__init__.py").write_text("")
    (root / "lib" / "detectors.py").write_text(DETECTORS.format(bases=bases))
    (root / "run.py").write_text(NOTEBOOK)
    return root


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_backend_chosen_by_a_string_rules_the_other_branch_out(tmp_path: Path, jobs: int) -> None:
    """``backend="pytorch"`` (or a loop over such strings, lowered by the callee) never
    builds the Keras kernel; the default and ``"tensorflow"`` do."""
    assert _lines(_project(tmp_path, "str, enum.Enum"), jobs) == [18, 21]


def test_a_plain_enum_member_is_not_its_value(tmp_path: Path) -> None:
    """``Framework.TENSORFLOW`` of an enum that does not derive from ``str`` never equals
    ``"tensorflow"``: the test is not decided (nothing is ruled out)."""
    assert _lines(_project(tmp_path, "enum.Enum"), 1) == EVERY


def test_a_class_constant_compares_as_its_string(tmp_path: Path) -> None:
    assert _lines(_project(tmp_path, "object"), 1) == [18, 21]


def test_a_parameter_rebound_before_the_test_is_not_what_the_call_passed(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path, "str, enum.Enum")
    detectors = root / "lib" / "detectors.py"
    detectors.write_text(
        detectors.read_text().replace("backend = backend.lower()", "backend = choose(backend)")
    )
    assert _lines(root, 1) == EVERY


NONE_DEFAULT = """\
import tensorflow as tf


def build():
    return tf.keras.Sequential([tf.keras.layers.Dense(1)])


def evaluate(x, model=None):
    if model is None:
        model = build()
    return model.evaluate(x, x)


shared = build()
for fold in range(100):
    evaluate(fold, shared)

for fold in range(100):
    evaluate(fold)

for fold in range(100):
    evaluate(fold, model=None)
"""


def test_a_none_default_not_taken_when_a_model_is_passed(tmp_path: Path) -> None:
    (tmp_path / "evaluate.py").write_text(textwrap.dedent(NONE_DEFAULT))
    assert _lines(tmp_path, 1) == [19, 22]


def test_a_test_inside_the_loop_that_rebinds_it_is_not_decided(tmp_path: Path) -> None:
    """``model`` is rebound inside the loop around the test: from the second iteration on it
    is no longer what the call passed."""
    source = NONE_DEFAULT.replace(
        "    if model is None:\n        model = build()\n    return model.evaluate(x, x)\n",
        "    for step in range(3):\n        if model is None:\n            model = build()\n"
        "        model = None\n    return 0\n",
    )
    (tmp_path / "evaluate.py").write_text(source)
    assert _lines(tmp_path, 1) == [18, 21, 24]


SPREAD = """\
import tensorflow as tf
from lib.detectors import Detector


def experiment(backend, options, runs=300):
    for run in range(runs):
        settings = dict(p_val=0.05, backend=backend)
        Detector(run, **settings).predict(run)  # line 8: what ``backend`` is
        Detector(run, **{"backend": "pytorch"}).predict(run)  # quiet
        Detector(run, **{"p_val": 0.05}).predict(run)  # line 10: the default backend
        Detector(run, **options).predict(run)  # line 11: an empty dict, the default


for backend in ["pytorch", "keops"]:
    experiment(backend, {})
experiment("tensorflow", {})
"""


def test_arguments_passed_through_a_known_dict(tmp_path: Path) -> None:
    """``**settings`` with ``settings = dict(..., backend=backend)`` passes ``backend``; a
    dict display without the key (or an empty one) leaves the default."""
    root = _project(tmp_path, "str, enum.Enum")
    (root / "run.py").write_text(SPREAD)
    assert _lines(root, 1) == [8, 10, 11]
    (root / "run.py").write_text(SPREAD.replace('experiment("tensorflow", {})\n', ""))
    assert _lines(root, 1) == [10, 11]


#: A script that picks its algorithm by a command-line option.
SCRIPT = """\
import argparse
import tensorflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("--algo", default="dqn")
args = parser.parse_args()
model = tf.keras.models.load_model("q.keras")

{loop}
    if args.algo == "ddpg":
        action = model.predict(state)
    else:
        action = model.predict(state[None])

if args.algo != "dqn":
    for state in states:
        model.predict(state)
"""


def test_module_code_a_run_with_the_defaults_never_reaches_is_not_linted(tmp_path: Path) -> None:
    """With the default ``--algo dqn`` only the ``else`` block runs, and the last loop never."""
    (tmp_path / "play.py").write_text(SCRIPT.format(loop="for state in states:"))
    result = lint_paths([tmp_path / "play.py"], Settings(select=("TFL402",)))
    assert [(d.code, d.start.line, d.start.column) for d in result.diagnostics] == [
        ("TFL402", 13, 18)
    ]


def test_a_functions_tests_are_not_decided_for_its_own_body(tmp_path: Path) -> None:
    """A function's parameters may come from callers the project does not see (a library's
    users): the walker lints both blocks of its ``if``."""
    source = """\
import tensorflow as tf

model = tf.keras.models.load_model("q.keras")


def play(states, algo="dqn"):
    for state in states:
        if algo == "ddpg":
            action = model.predict(state)
        else:
            action = model.predict(state[None])
"""
    (tmp_path / "play.py").write_text(source)
    result = lint_paths([tmp_path / "play.py"], Settings(select=("TFL402",)))
    assert [(d.code, d.start.line) for d in result.diagnostics] == [("TFL402", 9), ("TFL402", 11)]


AGENT = """\
import numpy as np
import tensorflow as tf


class Agent:
    def __init__(self, env, batch_size=100, w_per=True):
        self.actor = tf.keras.Sequential([tf.keras.layers.Dense(2)])
        self.with_per = w_per
        self.batch_size = batch_size
{more}
    def memorize(self, obs):
        if self.with_per:
            return self.actor.predict(obs)
        return 0
"""

TRAIN = """\
from agent import Agent


def train(env, steps):
    agent = Agent(env, batch_size=128, w_per=False)
    for step in range(steps):
        agent.memorize(env.reset())


def play(env, steps):
    agent = Agent(env)
    for step in range(steps):
        agent.memorize(env.reset())


def replay(env, steps, per):
    agent = Agent(env, 64, per)
    for step in range(steps):
        agent.memorize(env.reset())


agent = Agent(None, 128, False)
for step in range(1000):
    agent.memorize(step)
"""


def _agent(root: Path, more: str = "", train: str = TRAIN) -> list[int]:
    (root / "agent.py").write_text(AGENT.format(more=more))
    (root / "train.py").write_text(train)
    result = lint_paths([root], Settings(select=("TFL402",)), jobs=1)
    assert not result.errors
    return sorted(d.start.line for d in result.diagnostics if Path(d.file).name == "train.py")


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_attribute_its_construction_sets_decides_a_method_call(
    tmp_path: Path, jobs: int
) -> None:
    """``agent = Agent(env, w_per=False)`` makes an agent whose ``memorize`` never takes the
    ``if self.with_per:`` block: the loops of ``train`` and of the module are quiet; the
    default (``True``) and a value not known (``per``) are reported."""
    (tmp_path / "agent.py").write_text(AGENT.format(more=""))
    (tmp_path / "train.py").write_text(TRAIN)
    result = lint_paths([tmp_path], Settings(select=("TFL402",)), jobs=jobs)
    assert [(Path(d.file).name, d.start.line, d.start.column) for d in result.diagnostics] == [
        ("train.py", 13, 9),
        ("train.py", 19, 9),
    ]


@pytest.mark.parametrize(
    "more",
    [
        # Another method sets the attribute: what the construction passed may not hold.
        "\n    def enable(self):\n        self.with_per = True\n",
        # ``__init__`` rebinds its parameter (wherever it does: not followed).
        "        w_per = bool(w_per) or env is None\n",
    ],
)
def test_an_attribute_set_elsewhere_is_not_what_the_construction_passed(
    tmp_path: Path, more: str
) -> None:
    assert _agent(tmp_path, more) == [7, 13, 19, 24]


FIRST = "    agent = Agent(env, batch_size=128, w_per=False)\n"


@pytest.mark.parametrize(
    ("written", "lines"),
    [
        # The attribute is written from outside the class.
        ("    agent.with_per = True\n", [8, 14, 20]),
        # The name is bound twice: which construction made the receiver is not known.
        ("    if steps:\n        agent = Agent(env)\n", [9, 15, 21]),
    ],
)
def test_a_receiver_whose_construction_is_not_certain_is_not_decided(
    tmp_path: Path, written: str, lines: list[int]
) -> None:
    """``train``'s loop is reported again; the module's agent is still made with ``False``."""
    train = TRAIN.replace(FIRST, FIRST + written)
    assert _agent(tmp_path, train=train) == lines


TRAINER = """\
import numpy as np
import tensorflow as tf


class Trainer:
    def __init__(self, net, norm_grads=False):
        self.net = net
        self.norm_grads = norm_grads

    def train(self, steps):
        with tf.Session() as sess:
            for step in range(steps):
                loss = sess.run(self.net.cost)
                if self.net.summaries and self.norm_grads:
                    self.node.assign(np.zeros(3)).eval()


class Toggled:
    def __init__(self, net, norm_grads=False):
        self.norm_grads = norm_grads

    def enable(self):
        self.norm_grads = True

    def train(self, steps):
        with tf.Session() as sess:
            for step in range(steps):
                loss = sess.run(self.net.cost)
                if self.norm_grads:
                    self.node.assign(np.zeros(3)).eval()


trainer = Trainer(None)
other = Trainer(None, norm_grads=False)
"""


@pytest.mark.parametrize(
    ("written", "lines"),
    [
        ("", [30]),
        # Written from outside the class: the attribute may be anything.
        ("trainer.norm_grads = True\n", [15, 30]),
    ],
)
def test_a_methods_test_on_an_attribute_every_assignment_agrees_on(
    tmp_path: Path, written: str, lines: list[int]
) -> None:
    """``Trainer``'s only assignment of ``norm_grads`` keeps ``__init__``'s parameter, which
    every construction leaves ``False``: the block under ``if self.net.summaries and
    self.norm_grads:`` never runs. ``Toggled.enable`` sets it to ``True``."""
    (tmp_path / "requirements.txt").write_text("tensorflow==1.15\n")
    (tmp_path / "unet.py").write_text(TRAINER + written)
    result = lint_paths([tmp_path], Settings(select=("TFL503",)), jobs=1)
    assert [(d.code, d.start.line, d.start.column) for d in result.diagnostics] == [
        ("TFL503", line, 21) for line in lines
    ]


OPTIMIZATION = """\
import tensorflow as tf


class Optimization:
    def __init__(self, sess, params):
        self.sess = sess
        self.params = params

    def run(self, steps):
        for step in range(steps):
            if self.params["eig_type"] == "SCIPY":
                self.sess.run(tf.cast(self.vector, tf.float32))
            self.sess.run(self.train_step)


SESSION = tf.Session()


def certify(eig_type="LZS"):
    Optimization(SESSION, {"eig_type": eig_type, "steps": 10}).run(1000)


Optimization(SESSION, {"eig_type": "TF"}).run(1000)
"""


@pytest.mark.parametrize(
    ("written", "lines"),
    [
        ("", []),
        # A construction passes the key's other value, or a dictionary not known.
        ('Optimization(SESSION, {"eig_type": "SCIPY"}).run(5000)\n', [12]),
        ("Optimization(SESSION, load_params()).run(5000)\n", [12]),
    ],
)
def test_a_methods_test_on_an_item_of_an_attribute_every_construction_decides(
    tmp_path: Path, written: str, lines: list[int]
) -> None:
    """cleverhans's certification: ``self.params["eig_type"]`` is the key of the dictionary
    every construction passes, "LZS" or "TF": the ``"SCIPY"`` block never runs."""
    (tmp_path / "requirements.txt").write_text("tensorflow==1.15\n")
    (tmp_path / "optimization.py").write_text(OPTIMIZATION + written)
    for jobs in (1, 2):
        result = lint_paths([tmp_path], Settings(select=("TFL503",)), jobs=jobs)
        assert [(d.code, d.start.line, d.start.column) for d in result.diagnostics] == [
            ("TFL503", line, 31) for line in lines
        ]


@pytest.mark.parametrize(
    ("packaging", "text"),
    [
        ("setup.py", "from setuptools import setup\n\nsetup(name='unet')\n"),
        ("pyproject.toml", '[project]\nname = "unet"\nversion = "1"\n'),
        ("setup.cfg", "[metadata]\nname = unet\n"),
    ],
)
def test_a_distributed_packages_classes_are_built_by_code_not_in_view(
    tmp_path: Path, packaging: str, text: str
) -> None:
    """tf_unet is a package users install: their `Trainer(norm_grads=True)` is not in the
    repository, so its own constructions decide nothing of `self.norm_grads`."""
    (tmp_path / "requirements.txt").write_text("tensorflow==1.15\n")
    (tmp_path / packaging).write_text(text)
    (tmp_path / "unet.py").write_text(TRAINER)
    result = lint_paths([tmp_path], Settings(select=("TFL503",)), jobs=1)
    assert [(d.code, d.start.line, d.start.column) for d in result.diagnostics] == [
        ("TFL503", 15, 21),
        ("TFL503", 30, 21),
    ]


SETTING = "training = False  # set it to True to train\n"
TRAINING = (
    "import tensorflow as tf\n\n"
    "sess = tf.compat.v1.Session()\n"
    "if training == True:\n"
    "    for episode in range(5000):\n"
    "        sess.run(tf.compat.v1.assign(v, episode))\n"
)


def test_a_notebooks_switch_is_a_setting_its_reader_flips(tmp_path: Path) -> None:
    """The Doom notebook's `training = False` guards its training loop: a script that says so
    never runs the block, a notebook is run again with the cell edited."""
    (tmp_path / "requirements.txt").write_text("tensorflow==1.15\n")
    cells = [
        {"cell_type": "code", "source": source, "metadata": {}, "outputs": []}
        for source in (SETTING, TRAINING)
    ]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 4}
    (tmp_path / "doom.ipynb").write_text(json.dumps(notebook))
    (tmp_path / "doom.py").write_text(SETTING + TRAINING)
    result = lint_paths([tmp_path], Settings(select=("TFL503",)), jobs=1)
    assert [(Path(d.file).name, d.cell, d.code, d.start.line) for d in result.diagnostics] == [
        ("doom.ipynb", 2, "TFL503", 6)
    ]
