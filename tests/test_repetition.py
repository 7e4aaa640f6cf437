"""Repetition that is not a loop (the entry points of ``analysis/entry_points.py``) and how often a
guarded call runs (``if step % N == 0``): one test per row of the table, then the edges."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from tflint_leaks.analysis.entry_points import ENTRY_POINTS, Form, Row
from tflint_leaks.config import Settings
from tflint_leaks.engine.runner import lint_paths


def _lint(
    tmp_path: Path, source: str, name: str = "app.py", select: str = "ALL"
) -> list[tuple[str, int, str]]:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
    result = lint_paths([path], Settings(select=(select,)))
    assert not result.errors
    return [(d.code, d.start.line, d.message) for d in result.diagnostics]


def _row_id(row: Row) -> str:
    return f"{row.framework}-{row.form.value}-{row.unit}-{row.names[0] if row.names else ''}"


@pytest.mark.parametrize("row", ENTRY_POINTS, ids=_row_id)
def test_each_entry_point_repeats_its_body(tmp_path: Path, row: Row) -> None:
    """Each row's example predicts with a module-level model in the entry point's body: the
    only finding is TFL402 there, counted in the row's unit (and the registration's count, or
    the count of the loop that registers it: ``for i in range(20):`` around a thread)."""
    name = "views.py" if row.form is Form.VIEWS else "app.py"
    example = row.example
    if row.unit == "epoch":
        # One `predict` per epoch is left alone (TFL402's page); a model loaded per epoch is
        # not, and shows the repetition as well.
        assert _lint(tmp_path, example, name) == []
        example = example.replace("MODEL.predict(x)", 'MODEL = tf.keras.models.load_model("m")')
    findings = _lint(tmp_path, example, name)
    expected = "TFL401" if row.unit == "epoch" else "TFL402"
    marker = 'load_model("m")' if expected == "TFL401" else "MODEL.predict"
    line = next(n for n, text in enumerate(example.splitlines(), 1) if marker in text)
    assert len(findings) == 1, findings
    code, found_line, message = findings[0]
    assert (code, found_line) == (expected, line)
    looped = re.search(r"^for \w+ in range\(\d+\):$", example, re.MULTILINE)
    counted = r" \(\d+ in all\)" if row.count or looped else ""
    what = r"`MODEL\.predict`"
    if expected == "TFL401":
        what = r"`tf\.keras\.models\.load_model` builds a new Keras model"
    assert re.match(rf"{what} every {re.escape(row.unit)}{counted} ", message), message


FLASK = """
import tensorflow as tf
from flask import Flask

app = Flask(__name__)
MODEL = tf.keras.models.load_model("model.keras")

@app.route("/predict", methods=["POST"])
def predict():
    model = tf.keras.models.load_model("model.keras")
    return model(x, training=False)

@app.route("/score", methods=["POST"])
def score():
    return MODEL(x, training=False)
"""


def test_flask_route_loading_a_model_is_flagged_and_a_module_level_model_is_not(
    tmp_path: Path,
) -> None:
    assert _lint(tmp_path, FLASK) == [
        (
            "TFL401",
            9,
            "`tf.keras.models.load_model` builds a new Keras model every request and the Flask "
            "route never calls `clear_session()`; Keras' global state grows with each model "
            "(`del` and `gc.collect()` do not release it)",
        )
    ]


APP_FACTORY = """
import functools

import tensorflow as tf
from flask import Flask


def create_app(path):
    app = Flask(__name__)
    model = tf.keras.models.load_model(path)

    @app.route("/predict", methods=["POST"])
    def predict():
        fresh = tf.keras.models.load_model(path)
        return fresh(x, training=False)

    @app.route("/score", methods=["POST"])
    def score():
        return model(x, training=False)

    return app


def logged(f):
    @functools.wraps(f)
    def wrapper(*args):
        return f(tf.keras.models.load_model("m.keras"), *args)

    return wrapper
"""


def test_routes_an_app_factory_registers_are_entry_points(tmp_path: Path) -> None:
    """Failed before: a function defined in another was indexed only when called or stored
    there, so the routes of an app factory (``create_app``'s ``@app.route``, with ``app`` a
    local of the factory) ran once. The model the factory loads is loaded once; a wrapper
    that ``functools.wraps`` returns is no route."""
    assert _lint(tmp_path, APP_FACTORY) == [
        (
            "TFL401",
            13,
            "`tf.keras.models.load_model` builds a new Keras model every request and the Flask "
            "route never calls `clear_session()`; Keras' global state grows with each model "
            "(`del` and `gc.collect()` do not release it)",
        )
    ]


STREAMLIT_LOADS_EACH_RERUN = """
import streamlit as st
import tensorflow as tf

model = tf.keras.models.load_model("model.keras")
image = st.file_uploader("image")
if image is not None:
    st.write(model.predict(image))
"""


def test_a_script_loading_its_model_each_rerun_also_predicts_each_rerun(tmp_path: Path) -> None:
    """Failed before: a model loaded in the entry point's own body exempted its ``predict``
    (as a model built in a loop does); a rerun still builds a predict pipeline each time."""
    assert _lint(tmp_path, STREAMLIT_LOADS_EACH_RERUN) == [
        (
            "TFL401",
            4,
            "`tf.keras.models.load_model` builds a new Keras model every rerun and the "
            "Streamlit script never calls `clear_session()`; Keras' global state grows with "
            "each model (`del` and `gc.collect()` do not release it)",
        ),
        (
            "TFL402",
            7,
            "`model.predict` every rerun builds a new `tf.data` pipeline each call; use "
            "`model(x, training=False)` or `predict_on_batch`",
        ),
    ]


def test_a_model_loaded_on_first_request_only_is_quiet(tmp_path: Path) -> None:
    source = """
    import tensorflow as tf
    from flask import Flask

    app = Flask(__name__)
    model = None

    @app.route("/predict")
    def predict():
        global model
        if model is None:
            model = tf.keras.models.load_model("model.keras")
        return model(x, training=False)
    """
    assert _lint(tmp_path, source) == []


def test_a_helper_the_route_calls_is_found_through_its_chain(tmp_path: Path) -> None:
    (tmp_path / "models.py").write_text(
        "import tensorflow as tf\n\n"
        "def classify(x):\n"
        '    model = tf.keras.models.load_model("model.keras")\n'
        "    return model(x, training=False)\n",
        encoding="utf-8",
    )
    source = """
    from fastapi import FastAPI
    from models import classify

    app = FastAPI()

    @app.post("/predict")
    def predict(x: list[float]):
        return classify(x)
    """
    findings = _lint(tmp_path, source, select="TFL401")
    assert [(code, line) for code, line, _ in findings] == [("TFL401", 8)]
    assert findings[0][2].startswith(
        "`classify` builds a Keras model every request and the FastAPI route never calls"
    )


OPTUNA = """
import optuna
import tensorflow as tf

def objective(trial):
    {clear}model = tf.keras.Sequential([tf.keras.layers.Dense(trial.suggest_int("units", 1, 9))])
    model.compile("adam", "mse")
    return model.evaluate(x, y)

study = optuna.create_study()
study.optimize(objective, n_trials=100)
"""


def test_optuna_objective_without_clear_session_is_flagged_per_trial(tmp_path: Path) -> None:
    findings = _lint(tmp_path, OPTUNA.format(clear=""))
    assert [(code, line) for code, line, _ in findings] == [("TFL401", 5)]
    assert "every trial (100 in all) and the Optuna objective never calls" in findings[0][2]


def test_optuna_objective_with_clear_session_is_quiet(tmp_path: Path) -> None:
    source = OPTUNA.format(clear="tf.keras.backend.clear_session()\n    ")
    assert _lint(tmp_path, source) == []


def test_few_trials_are_bounded(tmp_path: Path) -> None:
    source = OPTUNA.format(clear="").replace("n_trials=100", "n_trials=5")
    assert _lint(tmp_path, source) == []


@pytest.mark.parametrize(
    "callbacks",
    [
        "[lambda study, trial: tf.keras.backend.clear_session()]",
        "[report, reset]",
        "(reset,)",
    ],
)
def test_optuna_callbacks_that_clear_the_session_clear_it_after_each_trial(
    tmp_path: Path, callbacks: str
) -> None:
    """Optuna calls every function of ``callbacks`` at the end of each trial (its
    ``Study.optimize`` docs): one that clears the session clears it per trial."""
    source = OPTUNA.format(clear="").replace("n_trials=100", f"n_trials=100, callbacks={callbacks}")
    helpers = (
        "def reset(study, trial):\n    tf.keras.backend.clear_session()\n\n"
        "def report(study, trial):\n    print(trial.value)\n\n"
    )
    assert _lint(tmp_path, source.replace("study = optuna", helpers + "study = optuna")) == []


def test_optuna_callbacks_that_do_not_clear_the_session_do_not_count(tmp_path: Path) -> None:
    helpers = "def report(study, trial):\n    print(trial.value)\n\n"
    source = OPTUNA.format(clear="").replace("n_trials=100", "n_trials=100, callbacks=[report]")
    findings = _lint(tmp_path, source.replace("study = optuna", helpers + "study = optuna"))
    assert [(code, line) for code, line, _ in findings] == [("TFL401", 5)]


@pytest.mark.parametrize(("trials", "expected"), [(5, []), (50, [("TFL401", 5)])])
def test_the_trials_an_enum_members_value_gives(
    tmp_path: Path, trials: int, expected: list[tuple[str, int]]
) -> None:
    """Orthostatic-Hypotension-detector: ``n_trials=Parameters.n_trials.value``."""
    source = OPTUNA.format(clear="").replace("n_trials=100", "n_trials=Parameters.n_trials.value")
    enum = f"import enum\n\nclass Parameters(enum.Enum):\n    n_trials = {trials}\n\n"
    findings = _lint(tmp_path, source.replace("study = optuna", enum + "study = optuna"))
    assert [(code, line) for code, line, _ in findings] == expected


RAY_TUNE = """
import argparse

import tensorflow as tf
from ray import tune

parser = argparse.ArgumentParser()
parser.add_argument("--num_trials", type=int, default={default})
args = parser.parse_args()

def train(config):
    model = tf.keras.Sequential([tf.keras.layers.Dense(config["units"])])
    model.compile("adam", "mse")
    return model.evaluate(x, y)

tune.run(train, {arguments})
"""


@pytest.mark.parametrize(
    ("default", "arguments", "expected"),
    [
        # prism-samplernn's ray_tune.py (set Z18): `--num_trials` defaults to one trial
        (1, "num_samples=args.num_trials", []),
        (1, "config={}", []),  # `num_samples` defaults to 1
        (50, "num_samples=args.num_trials", ["every trial (50 in all) and the Ray Tune"]),
        # each point of a grid runs `num_samples` times: the count is the grid's size times 1
        (1, 'config={"units": tune.grid_search([8, 16, 32])}', ["every trial and the Ray Tune"]),
        (1, "num_samples=-1", ["every trial and the Ray Tune"]),  # samples without end
    ],
)
def test_ray_tune_runs_its_trainable_num_samples_times(
    tmp_path: Path, default: int, arguments: str, expected: list[str]
) -> None:
    source = RAY_TUNE.format(default=default, arguments=arguments)
    findings = _lint(tmp_path, source, select="TFL401")
    assert [(code, line) for code, line, _ in findings] == [("TFL401", 11)] * len(expected)
    for (_, _, message), words in zip(findings, expected, strict=True):
        assert message.startswith(f"`tf.keras.Sequential` builds a new Keras model {words}")


def test_keras_tuner_clears_the_session_before_each_build(tmp_path: Path) -> None:
    source = """
    import keras_tuner
    import tensorflow as tf

    def build_model(hp):
        return tf.keras.Sequential([tf.keras.layers.Dense(hp.Int("units", 8, 64))])

    tuner = keras_tuner.RandomSearch(build_model, objective="val_loss", max_trials=50)
    """
    assert _lint(tmp_path, source) == []


CALLBACK = """
import tensorflow as tf

class Monitor(tf.keras.callbacks.Callback):
    def {hook}(self, batch, logs=None):
        self.history.append(self.model.predict(x_val))
"""


def test_per_batch_callback_predict_is_flagged(tmp_path: Path) -> None:
    findings = _lint(tmp_path, CALLBACK.format(hook="on_train_batch_end"))
    assert [(code, line) for code, line, _ in findings] == [("TFL402", 5)]
    assert findings[0][2].startswith("`self.model.predict` every batch builds")


def test_on_train_end_runs_once_and_is_quiet(tmp_path: Path) -> None:
    assert _lint(tmp_path, CALLBACK.format(hook="on_train_end")) == []


def test_a_thread_started_once_is_not_repeated(tmp_path: Path) -> None:
    source = """
    import threading
    import tensorflow as tf

    MODEL = tf.keras.models.load_model("model.keras")

    def worker():
        MODEL.predict(x)

    threading.Thread(target=worker).start()
    """
    assert _lint(tmp_path, source) == []


def test_a_dataset_map_function_is_traced_once_and_is_quiet(tmp_path: Path) -> None:
    """``Dataset.map`` traces its function once (TF 2.21: one Python call for 20 elements);
    only a ``tf.py_function`` inside runs per element."""
    source = """
    import tensorflow as tf

    def preprocess(x):
        model = tf.keras.models.load_model("encoder.keras")
        return model(x)

    ds = tf.data.Dataset.range(100).map(preprocess)
    """
    assert _lint(tmp_path, source) == []


def test_a_py_function_in_a_map_builds_a_model_per_element(tmp_path: Path) -> None:
    source = """
    import tensorflow as tf

    def classify(x):
        model = tf.keras.models.load_model("classifier.keras")
        return model(x[None], training=False)

    def wrapper(x):
        return tf.py_function(classify, [x], tf.float32)

    ds = tf.data.Dataset.range(100).map(wrapper)
    """
    findings = _lint(tmp_path, source)
    assert [(code, line) for code, line, _ in findings] == [("TFL401", 4)]
    assert "every element and the TensorFlow py_function never calls" in findings[0][2]


# -- frequency: guards that run their body one time in N -------------------------------------------

GUARDED = """
import tensorflow as tf

model = tf.keras.models.load_model("model.keras")
for step in range({steps}):
    if {guard}:
        model.predict(x)
"""


@pytest.mark.parametrize(
    ("steps", "guard", "expected"),
    [
        (5000, "step % 100 == 0", "every 100th iteration (50 in all)"),
        (1000, "step % 50 == 0", "every 50th iteration (20 in all)"),
        (1000, "(step + 1) % 50 == 0", "every 50th iteration (20 in all)"),
        (1000, "step % 50 == 49", "every 50th iteration (20 in all)"),
        (1000, "not step % 50", "every 50th iteration (20 in all)"),
        (1000, "step > 0 and step % 50 == 0", "every 50th iteration (20 in all)"),
        # A period that does not divide the count: 34 runs or 33, by the offset (set Z36).
        (10000, "(step + 1) % 300 == 0", "every 300th iteration (up to 34 in all)"),
        (10000, "step % 300 == 0", "every 300th iteration (up to 34 in all)"),
        (1000, "step % 2 != 0", "every iteration (1000 in all)"),
        (1000, "step % PERIOD == 0", "every iteration (1000 in all)"),
    ],
)
def test_a_periodic_guard_divides_the_count(
    tmp_path: Path, steps: int, guard: str, expected: str
) -> None:
    findings = _lint(tmp_path, GUARDED.format(steps=steps, guard=guard), select="TFL402")
    assert [(code, line) for code, line, _ in findings] == [("TFL402", 6)]
    assert findings[0][2].startswith(f"`model.predict` {expected} builds")


def test_a_periodic_guard_with_a_known_large_n_is_quiet(tmp_path: Path) -> None:
    source = GUARDED.format(steps=1000, guard="step % EVERY == 0").replace(
        "for step", "EVERY = 200\nfor step"
    )
    assert _lint(tmp_path, source, select="TFL402") == []


# A guard that compares a loop's counter with a value the loop does not change holds on one
# iteration of that loop at most, however many it has.
ONCE = """
import sys

import tensorflow as tf

model = tf.keras.models.load_model("model.keras")
warmup = int(sys.argv[1])


def run(batches, epochs):
{body}
"""


@pytest.mark.parametrize(
    "body",
    [
        # the target of a ``for`` over ``range`` of unknown length
        "    for epoch in range(epochs):\n        if epoch == 0:\n            model.predict(x)",
        # the index of ``enumerate``, against a name the loop never assigns
        "    for i, batch in enumerate(batches):\n"
        "        if warmup == i:\n            model.predict(batch)",
        # a ``while`` counter every iteration adds to
        "    step = 0\n    while True:\n        if step == warmup:\n"
        "            model.predict(x)\n        step += 1",
        # joined by ``and`` with a test that says nothing about how often
        "    for epoch in range(epochs):\n"
        "        if epoch == 3 and batches:\n            model.predict(x)",
        # the last iteration: a value computed from names the loop never changes
        "    for i in range(len(batches)):\n"
        "        if i == len(batches) - 1:\n            model.predict(batches[i])",
        "    step = 0\n    while True:\n        if step == 2 * warmup + 1:\n"
        "            model.predict(x)\n        step += 1",
        # two values of the counter: two iterations at most
        "    for step in range(epochs):\n"
        "        if step == 50 or step == 100:\n            model.predict(x)",
    ],
    ids=["range", "enumerate", "while", "and", "last", "arithmetic", "or"],
)
def test_a_guard_on_one_iteration_of_a_loop_runs_once(tmp_path: Path, body: str) -> None:
    assert _lint(tmp_path, ONCE.format(body=body), select="TFL402") == []


@pytest.mark.parametrize(
    "body",
    [
        # the items of a list may repeat: ``x == 0`` may hold on every iteration
        "    for batch in batches:\n        if batch == 0:\n            model.predict(x)",
        # a ``continue`` can skip the increment: the counter may keep its value
        "    step = 0\n    while True:\n        if step == warmup:\n            model.predict(x)\n"
        "        if not batches:\n            continue\n        step += 1",
        # the value moves with the counter
        "    target = 0\n    for epoch in range(epochs):\n        if epoch == target:\n"
        "            model.predict(x)\n            target = epoch + 1",
        # the list grows in the loop: its last index moves with the counter
        "    for i in range(epochs):\n        batches.append(i)\n"
        "        if i == len(batches) - 1:\n            model.predict(x)",
        # a method of the object that holds the value may change it
        "    for i in range(epochs):\n        run.state.advance()\n"
        "        if i == run.state.warmup:\n            model.predict(x)",
        # a value the loop computes anew: ``warmup`` is assigned in the loop
        "    for i in range(epochs):\n        warmup = i\n"
        "        if i == warmup + 0:\n            model.predict(x)",
        # joined by ``or`` with a test that may hold on every iteration
        "    for step in range(epochs):\n"
        "        if step == 50 or batches:\n            model.predict(x)",
        # the counter is assigned again inside the loop
        "    for epoch in range(epochs):\n        epoch = epoch // 2\n"
        "        if epoch == 0:\n            model.predict(x)",
        # once per run of the inner loop, and the outer one runs it again and again
        "    for epoch in range(epochs):\n        for i, batch in enumerate(batches):\n"
        "            if i == 0:\n                model.predict(batch)",
    ],
    ids=[
        "items",
        "continue",
        "moving-value",
        "growing",
        "holder-changed",
        "computed",
        "or-anything",
        "reassigned",
        "outer-loop",
    ],
)
def test_a_guard_a_counter_may_pass_more_than_once_is_not_once(tmp_path: Path, body: str) -> None:
    findings = _lint(tmp_path, ONCE.format(body=body), select="TFL402")
    predict = ONCE.format(body=body).lstrip("\n").splitlines()
    line = next(n for n, text in enumerate(predict, 1) if "model.predict" in text)
    assert [(code, found) for code, found, _ in findings] == [("TFL402", line)]
    assert findings[0][2].startswith("`model.predict` every iteration builds")


def test_the_orelse_of_a_periodic_guard_runs_every_iteration(tmp_path: Path) -> None:
    source = """
    import tensorflow as tf

    model = tf.keras.models.load_model("model.keras")
    for step in range(1000):
        if step % 100 == 0:
            print(step)
        else:
            model.predict(x)
    """
    findings = _lint(tmp_path, source, select="TFL402")
    assert findings[0][2].startswith("`model.predict` every iteration (1000 in all) builds")


def test_a_project_method_named_optimize_is_not_optunas(tmp_path: Path) -> None:
    """A wrapper class of the project (which may clear the session itself) is not Optuna."""
    source = """
    import optuna
    import tensorflow as tf

    class Search:
        def __init__(self):
            self.study = optuna.create_study()

        def optimize(self, objective, trials):
            def wrapped(trial):
                tf.keras.backend.clear_session()
                return objective(trial)
            self.study.optimize(wrapped, n_trials=trials)

    def objective(trial):
        model = tf.keras.Sequential([tf.keras.layers.Dense(trial.suggest_int("u", 1, 9))])
        return model.evaluate(x, y)

    Search().optimize(objective, 100)
    """
    assert _lint(tmp_path, source) == []


def test_a_registration_repeated_by_a_loop_has_no_known_count(tmp_path: Path) -> None:
    source = OPTUNA.format(clear="").replace(
        "study.optimize(objective, n_trials=100)",
        "while True:\n    study.optimize(objective, n_trials=1)",
    )
    findings = _lint(tmp_path, source)
    assert [(code, line) for code, line, _ in findings] == [("TFL401", 5)]
    assert "every trial and the Optuna objective never calls" in findings[0][2]


def test_an_optimize_on_an_object_of_unknown_origin_is_not_optunas(tmp_path: Path) -> None:
    """``ok.optimize(objective)`` on an object of a library the project cannot see (a wrapper
    that may clear the session itself) is not taken for Optuna's, even in a file that imports
    optuna; ``self.study = optuna.create_study()`` is followed."""
    source = """
    import optuna
    import tensorflow as tf
    from wrappers import Search

    def objective(trial):
        model = tf.keras.Sequential([tf.keras.layers.Dense(trial.suggest_int("u", 1, 9))])
        return model.evaluate(x, y)

    class Runner:
        def __init__(self):
            self.study = optuna.create_study()

        def run(self, function):
            self.study.optimize(function, n_trials=50)

    Search().optimize(objective, n_trials=100)
    Runner().run(objective)
    """
    findings = _lint(tmp_path, source)
    assert [(code, line) for code, line, _ in findings] == [("TFL401", 6)]
    assert "every trial (50 in all)" in findings[0][2]


def test_a_registration_in_module_code_hands_over_the_definition_made_before_it(
    tmp_path: Path,
) -> None:
    """A notebook redefines ``objective`` for each study: the study that runs a definition is
    the next ``optimize`` after it in the module's own code. The one that builds a model
    without clearing the session is flagged once, with its study's count; the redefinition
    no study runs (a later one replaces it first) is quiet."""
    source = """
    import optuna
    import tensorflow as tf

    def objective(trial):
        model = tf.keras.Sequential([tf.keras.layers.Dense(trial.suggest_int("u", 1, 9))])
        return model.evaluate(x, y)

    study = optuna.create_study()
    study.optimize(objective, n_trials=100)

    def objective(trial):
        model = tf.keras.Sequential([tf.keras.layers.Dense(trial.suggest_int("u", 1, 9))])
        return model.evaluate(x, y)

    def objective(trial):
        tf.keras.backend.clear_session()
        model = tf.keras.Sequential([tf.keras.layers.Dense(trial.suggest_int("u", 1, 9))])
        return model.evaluate(x, y)

    study.optimize(objective, n_trials=30)
    """
    findings = _lint(tmp_path, source)
    assert [(code, line) for code, line, _ in findings] == [("TFL401", 5)]
    assert "every trial (100 in all)" in findings[0][2]


def test_a_function_passed_to_a_wrapper_that_registers_it_is_the_one_defined_before(
    tmp_path: Path,
) -> None:
    """optkeras's notebook: each study's ``objective`` goes through a wrapper that registers
    its parameter (``self.study.optimize(func, n_trials=1)``, 50 times: ``for _ in
    range(n_trials)`` with the 50 its call passes); the wrapper's call in the
    notebook's own code hands over the definition made last before it."""
    source = """
    import optuna
    import tensorflow as tf

    class Search:
        def __init__(self):
            self.study = optuna.create_study()

        def run(self, func, n_trials):
            for _ in range(n_trials):
                self.study.optimize(func, n_trials=1)

    search = Search()

    def objective(trial):
        model = tf.keras.Sequential([tf.keras.layers.Dense(trial.suggest_int("u", 1, 9))])
        return model.evaluate(x, y)

    def objective(trial):
        tf.keras.backend.clear_session()
        model = tf.keras.Sequential([tf.keras.layers.Dense(trial.suggest_int("u", 1, 9))])
        return model.evaluate(x, y)

    search.run(objective, 50)

    def objective(trial):
        model = tf.keras.Sequential([tf.keras.layers.Dense(trial.suggest_int("u", 1, 9))])
        return model.evaluate(x, y)

    search.run(objective, 50)
    """
    findings = _lint(tmp_path, source)
    assert [(code, line) for code, line, _ in findings] == [("TFL401", 26)]
    assert "every trial (50 in all) and the Optuna objective never calls" in findings[0][2]


def test_a_function_another_module_passes_on_is_any_of_its_definitions(tmp_path: Path) -> None:
    """Passed from another module, a redefined function is whatever its module left bound:
    the definitions made before the other module's call do not decide which (both kept)."""
    (tmp_path / "objectives.py").write_text(
        textwrap.dedent(
            """
            import tensorflow as tf

            def objective(trial):
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                return model.evaluate(x, y)

            def objective(trial):
                model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                return model.evaluate(x, y)
            """
        ).lstrip("\n"),
        encoding="utf-8",
    )
    source = """
    import optuna
    import objectives

    def run(func, n_trials):
        study = optuna.create_study()
        for _ in range(n_trials):
            study.optimize(func, n_trials=1)

    run(objectives.objective, 50)
    """
    (tmp_path / "app.py").write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
    result = lint_paths([tmp_path], Settings(select=("TFL401",)))
    assert [(Path(d.file).name, d.start.line) for d in result.diagnostics] == [
        ("objectives.py", 4),
        ("objectives.py", 8),
    ]


def test_developing_md_lists_every_framework_and_unit() -> None:
    """The table in DEVELOPING.md says what the code's table holds (each framework with its
    units), so the docs cannot drift from ENTRY_POINTS."""
    text = (Path(__file__).resolve().parent.parent / "DEVELOPING.md").read_text(encoding="utf-8")
    section = text.split("## Repetition that is not a loop", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|") for line in section.splitlines() if line.startswith("| ")]
    documented = {(cells[1].strip(), cells[3].strip()) for cells in rows[2:]}
    for row in ENTRY_POINTS:
        assert any(
            framework == row.framework and row.unit in units.split(" / ")
            for framework, units in documented
        ), (row.framework, row.unit)


STREAMLIT = """
import streamlit as st
import tensorflow as tf

model = tf.keras.models.load_model("model.keras")
image = st.file_uploader("Upload an image")
if image is not None:
    st.write(model(image, training=False))
"""


def test_a_streamlit_script_loads_its_model_again_on_every_rerun(tmp_path: Path) -> None:
    path = tmp_path / "app.py"
    path.write_text(textwrap.dedent(STREAMLIT).lstrip("\n"), encoding="utf-8")
    result = lint_paths([path], Settings(select=("ALL",)))
    assert [(d.code, d.start.line, d.start.column, d.message) for d in result.diagnostics] == [
        (
            "TFL401",
            4,
            9,
            "`tf.keras.models.load_model` builds a new Keras model every rerun and the "
            "Streamlit script never calls `clear_session()`; Keras' global state grows with "
            "each model (`del` and `gc.collect()` do not release it)",
        )
    ]
    [related] = [r for r in result.diagnostics[0].related if r.role.value == "loop"]
    assert (related.start.line, related.message) == (
        1,
        "repeated by Streamlit: the Streamlit script runs every rerun",
    )


def test_a_notebook_that_imports_streamlit_is_no_streamlit_script(tmp_path: Path) -> None:
    """``streamlit run`` takes ".py" files only (streamlit/streamlit#671): a notebook's cells
    run when its reader runs them, once each (DAT255's Gradio and Streamlit notebook, unseen
    set Z6 of stop 47), while a Gradio click handler in it predicts on every event."""
    cells = [
        STREAMLIT,
        """
        import gradio as gr

        def classify(image):
            return model.predict(image, verbose=0)

        with gr.Blocks() as demo:
            image = gr.Image()
            label = gr.Label()
            gr.Button("Classify").click(fn=classify, inputs=image, outputs=label)
        """,
    ]
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "metadata": {},
                "outputs": [],
                "execution_count": None,
                "source": textwrap.dedent(cell).strip("\n").splitlines(keepends=True),
            }
            for cell in cells
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / "demo.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    result = lint_paths([path], Settings(select=("ALL",)))
    assert [(d.code, d.cell, d.start.line, d.message) for d in result.diagnostics] == [
        (
            "TFL402",
            2,
            4,
            "`model.predict` every event builds a new `tf.data` pipeline each call; use "
            "`model(x, training=False)` or `predict_on_batch`",
        )
    ]


def test_a_model_kept_in_session_state_or_a_cached_function_is_loaded_once(
    tmp_path: Path,
) -> None:
    source = """
    import streamlit as st
    import tensorflow as tf

    @st.cache_resource(show_spinner=False)
    def load():
        return tf.keras.models.load_model("model.keras")

    def classifier():
        if "classifier" not in st.session_state:
            st.session_state.classifier = tf.keras.models.load_model("classifier.keras")
        return st.session_state.classifier

    if "model" not in st.session_state:
        st.session_state.model = tf.keras.models.load_model("model.keras")
    cached = load()
    kept = classifier()
    """
    assert _lint(tmp_path, source) == []


def test_a_helper_the_script_calls_loads_on_every_rerun(tmp_path: Path) -> None:
    # Face-Mask-Detection's app.py: `mask_image()` at the top level loads the model.
    source = """
    import streamlit as st
    from tensorflow.keras.models import load_model

    def mask_image():
        model = load_model("mask_detector.model")
        return model(image, training=False)

    mask_image()
    """
    findings = _lint(tmp_path, source, select="TFL401")
    assert [(code, line) for code, line, _ in findings] == [("TFL401", 8)]
    assert findings[0][2].startswith("`mask_image` builds a Keras model every rerun")


def test_a_helper_that_loads_and_predicts_on_every_rerun_is_one_finding(tmp_path: Path) -> None:
    """pcolonna/MNIST_streamlit's "Predict" button: the helper loads the model and predicts
    with it, every rerun. One place, one cause: TFL401 at the call (loading once is the fix,
    after which TFL402 reports the `predict` per rerun, as the page says). Two readers of the
    frozen breadth sets judged a second finding there a wrong code."""
    source = """
    import streamlit as st
    from tensorflow.keras.models import load_model

    def predict_digit(image):
        model = load_model("best_model.h5")
        return model.predict(image.reshape(1, 784))

    if st.button("Predict"):
        st.write(predict_digit(canvas))
    """
    assert [(code, line) for code, line, _ in _lint(tmp_path, source)] == [("TFL401", 9)]
    fixed = source.replace(
        '    def predict_digit(image):\n        model = load_model("best_model.h5")\n',
        '    @st.cache_resource\n    def cached():\n        return load_model("best_model.h5")\n\n'
        "    def predict_digit(image):\n        model = cached()\n",
    )
    assert [(code, line) for code, line, _ in _lint(tmp_path, fixed)] == [("TFL402", 10)]


def test_a_module_the_script_imports_runs_once(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("import streamlit as st\nimport widgets\n", encoding="utf-8")
    (tmp_path / "widgets.py").write_text(textwrap.dedent(STREAMLIT), encoding="utf-8")
    assert lint_paths([tmp_path], Settings(select=("ALL",))).diagnostics == []


DEVICE_THREADS = """
import threading
import tensorflow as tf
from tensorflow.python.client import device_lib

gpus = [d.name for d in device_lib.list_local_devices() if d.device_type == "GPU"]

def predictor(gpu):
    with tf.device(gpu):
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    return model.predict_on_batch(x)

for gpu in gpus:
    threading.Thread(target=predictor, args=(gpu,)).start()
"""


def test_a_thread_started_per_device_runs_its_target_once_per_device(tmp_path: Path) -> None:
    """kaggle-carvana-2017's ensembler: one thread per GPU (``for gpu in gpus``, the machine's
    devices) builds one model each, as many as the machine has, not a growing number. The same
    thread started per name of a file is repeated as often as the file has names."""
    assert _lint(tmp_path, DEVICE_THREADS) == []
    per_name = DEVICE_THREADS.replace("in gpus:", "in open('names.txt').read().split():")
    assert _lint(tmp_path, per_name) == [
        (
            "TFL401",
            9,
            "`tf.keras.Sequential` builds a new Keras model every thread and the threading thread "
            "target never calls `clear_session()`; Keras' global state grows with each model "
            "(`del` and `gc.collect()` do not release it)",
        )
    ]


EARLY_EXIT = """
import tensorflow as tf

model = tf.keras.models.load_model("model.keras")


def run(batches):
    for step in range(20000):
        model.fit(batches[step])
{exit}
        model.predict(batches[step])
"""


@pytest.mark.parametrize(
    ("exit", "message"),
    [
        # what follows an early ``continue`` runs where its test does not hold
        (
            "        if step % 1000 != 0:\n            continue",
            "every 1000th iteration (20 per call of `run`)",
        ),
        (
            "        if step % 1000:\n            continue",
            "every 1000th iteration (20 per call of `run`)",
        ),
        (
            "        if not step % 1000 == 0: continue",
            "every 1000th iteration (20 per call of `run`)",
        ),
        # the other way round: the rest runs on 999 iterations in 1000
        (
            "        if step % 1000 == 0:\n            continue",
            "every iteration (20000 per call of `run`)",
        ),
        # an exit that may not be taken (it prints too) guards nothing
        (
            "        if step % 1000 != 0:\n            print(step)\n            continue",
            "every iteration (20000 per call of `run`)",
        ),
    ],
    ids=["not-equal", "remainder", "not", "complement", "two-statements"],
)
def test_an_early_exit_guards_what_follows_it(tmp_path: Path, exit: str, message: str) -> None:
    source = EARLY_EXIT.format(exit=exit)
    findings = _lint(tmp_path, source, select="TFL402")
    line = next(
        n for n, text in enumerate(source.lstrip("\n").splitlines(), 1) if ".predict" in text
    )
    assert [(code, found) for code, found, _ in findings] == [("TFL402", line)]
    assert findings[0][2].startswith(f"`model.predict` {message} builds")


def test_a_callback_that_returns_early_runs_the_rest_one_time_in_n(tmp_path: Path) -> None:
    """``if batch % 100 != 0: return`` in ``on_train_batch_end``: the rest runs every 100th
    batch the framework calls it on."""
    source = """
    import tensorflow as tf

    class Preview(tf.keras.callbacks.Callback):
        def __init__(self, images):
            self.images = images

        def on_train_batch_end(self, batch, logs=None):
            if batch % 100 != 0:
                return
            self.model.predict(self.images)
    """
    findings = _lint(tmp_path, source, select="TFL402")
    assert [(code, line) for code, line, _ in findings] == [("TFL402", 10)]
    assert findings[0][2].startswith("`self.model.predict` every 100th batch builds")


@pytest.mark.parametrize(
    ("test", "expected"),
    [
        # every 10th update and the first: 37 + 1 of 375
        ("update % 10 == 0 or update == 1", "(38 in all)"),
        # every 100th and the first: 3 + 1, within max-loop-iterations
        ("update % 100 == 0 or update == 1", None),
        # the first, or a test that may hold on any iteration
        ("update == 1 or batches", "every iteration (375 in all)"),
    ],
    ids=["periodic-or-first", "few", "or-anything"],
)
def test_a_periodic_or_counter_guard_adds_their_runs(
    tmp_path: Path, test: str, expected: str | None
) -> None:
    source = f"""
    import tensorflow as tf

    model = tf.keras.models.load_model("model.keras")
    for update in range(1, 376):
        model.fit(batches[update])
        if {test}:
            model.predict(batches[update])
    """
    findings = _lint(tmp_path, source, select="TFL402")
    if expected is None:
        assert findings == []
    else:
        assert [(code, line) for code, line, _ in findings] == [("TFL402", 7)]
        assert expected in findings[0][2]
