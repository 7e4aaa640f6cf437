"""``tf.config.run_functions_eagerly(True)`` in a program's module-level code: every
``tf.function`` runs its Python code eagerly on each call and nothing traces (TensorFlow 2.21:
three calls with three ints run the body three times, trace count 0), so the rules about
tracing (retracing, Python state frozen or run at trace time, constants captured by a trace)
are quiet there; the others are not."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tflint_leaks.config import Settings
from tflint_leaks.engine.runner import lint_paths
from tflint_leaks.frameworks import Frameworks, Versions
from tflint_leaks.registry import RULES

#: A retrace per epoch (TFL101) and a tape spanning the loop kept (TFL202 is not about
#: tracing: it holds either way).
TRAIN = """\
import tensorflow as tf

{switch}


@tf.function
def step(x, lr):
    return x * lr


def train(model, optimizer, x):
    for epoch in range(1000):
        step(x, 0.1 * epoch)
        with tf.GradientTape(persistent=True) as tape:
            loss = model(x)
            grads = tape.gradient(loss, model.trainable_variables)
"""


def _codes(root: Path, files: dict[str, str]) -> list[tuple[str, str, int]]:
    (root / ".git").mkdir(exist_ok=True)
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text), encoding="utf-8")
    result = lint_paths(sorted(root.glob("*.py")), Settings(select=("ALL",)))
    assert not result.errors
    return [(Path(d.file).name, d.code, d.start.line) for d in result.diagnostics]


@pytest.mark.parametrize(
    "switch",
    [
        "tf.config.run_functions_eagerly(True)",
        "tf.config.experimental_run_functions_eagerly(True)",
    ],
)
def test_a_program_that_runs_functions_eagerly_has_no_trace_findings(
    tmp_path: Path, switch: str
) -> None:
    found = _codes(tmp_path, {"train.py": TRAIN.format(switch=switch)})
    assert found == [("train.py", "TFL202", 16)]


@pytest.mark.parametrize(
    "switch",
    [
        "tf.config.run_functions_eagerly(False)",
        # a debugging option a function turns on, when it is called
        "def debug():\n    tf.config.run_functions_eagerly(True)",
        "",
    ],
)
def test_tracing_rules_run_where_functions_still_trace(tmp_path: Path, switch: str) -> None:
    found = _codes(tmp_path, {"train.py": TRAIN.format(switch=switch)})
    line = 14 if switch.startswith("def") else 13
    assert found == [("train.py", "TFL101", line), ("train.py", "TFL202", line + 3)]


def test_a_module_imported_that_runs_functions_eagerly_decides_for_the_importer(
    tmp_path: Path,
) -> None:
    files = {
        "debugging.py": "import tensorflow as tf\n\ntf.config.run_functions_eagerly(True)\n",
        "train.py": TRAIN.format(switch="import debugging"),
    }
    assert _codes(tmp_path, files) == [("train.py", "TFL202", 16)]


def test_the_trace_rules_are_the_ones_that_declare_it() -> None:
    traced = sorted(code.code for code in RULES if code.versions.traced_only)
    assert traced == [
        "TFL101",
        "TFL102",
        "TFL103",
        "TFL104",
        "TFL105",
        "TFL301",
        "TFL302",
        "TFL303",
        "TFL304",
        "TFL305",
        "TFL501",
    ]


def test_a_traced_only_rule_applies_unless_functions_run_eagerly() -> None:
    versions = Versions(traced_only=True)
    world = Frameworks()
    assert versions.applies(world, graph_mode=False)
    assert not versions.applies(world, graph_mode=False, functions_eagerly=True)
    assert "run_functions_eagerly(True)" in versions.describe()


KERAS_STEP = """\
import tensorflow as tf


class Classifier(tf.keras.Model):
    def train_step(self, data):
        x, y = data
        with tf.GradientTape(persistent=True) as tape:
            loss = self.compiled_loss(y, self(x))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {{"loss": loss}}
{compile}
"""


@pytest.mark.parametrize(
    ("compile_line", "train", "found"),
    [
        # `fit` runs the step in the tf.function it makes: the tape lives while it traces
        ('\nmodel = Classifier()\nmodel.compile("adam", "mse")\n', "", []),
        # compiled to run eagerly: the step runs as Python on every batch
        ('\nmodel = Classifier()\nmodel.compile("adam", "mse", run_eagerly=True)\n', "", [7]),
        # ... in the training script, which imports the model (nvae-tf's train.py)
        ("", 'model.compile("adam", "mse", run_eagerly=True)\n', [7]),
    ],
)
def test_a_keras_models_train_step_runs_while_fits_function_traces(
    tmp_path: Path, compile_line: str, train: str, found: list[int]
) -> None:
    path = tmp_path / "model.py"
    path.write_text(KERAS_STEP.format(compile=compile_line))
    script = "from model import Classifier\n\nmodel = Classifier()\n" + train
    (tmp_path / "train.py").write_text(script)
    result = lint_paths([tmp_path], Settings(select=("TFL201",)))
    assert [(d.code, Path(d.file).name, d.start.line) for d in result.diagnostics] == [
        ("TFL201", "model.py", line) for line in found
    ]
