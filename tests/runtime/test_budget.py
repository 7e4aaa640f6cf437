"""The pytest plugin's ``tf_budget`` fixture, each budget both ways, in suites run by pytest in
a fresh Python (the plugin loaded through its ``pytest11`` entry point) with real TensorFlow.
Each test's outcome and exact failure message are read from the run's JUnit XML.

The TensorFlow suites run once per module (``python -m pytest`` in a temporary directory, what
pytester's ``runpytest_subprocess`` runs; pytester itself is per test and would start
TensorFlow once per assertion); the suites without TensorFlow use pytester."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from itertools import pairwise
from pathlib import Path

import pytest

from tests.runtime.conftest import requires_tensorflow
from tflint_leaks import DOCS_URL

pytest_plugins = ["pytester"]
pytestmark = [pytest.mark.runtime]

#: One outcome per test: ``passed`` with None, or ``failed``/``error`` with its message.
Outcomes = dict[str, tuple[str, str | None]]


def outcomes_of(report: Path) -> Outcomes:
    """Each test's outcome in a JUnit XML report, by ``module::name``."""
    outcomes: Outcomes = {}
    for case in ET.parse(report).iter("testcase"):
        failed = [f for f in case if f.tag in ("failure", "error")]
        name = f"{case.get('classname')}::{case.get('name')}"
        if failed:
            outcomes[name] = (failed[0].tag, failed[0].text or failed[0].get("message"))
        else:
            outcomes[name] = ("passed", None)
    return outcomes


def run_suite(directory: Path) -> Outcomes:
    """Run the test modules in ``directory`` in a new Python process."""
    report = directory / "report.xml"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--junitxml={report}"],
        cwd=directory,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
        capture_output=True,
        check=False,
        timeout=600,
    )
    return outcomes_of(report)


def run(pytester: pytest.Pytester, *args: str) -> Outcomes:
    """Run the suite written in ``pytester.path`` in a new Python process."""
    report = pytester.path / "report.xml"
    pytester.runpytest_subprocess("-p", "no:cacheprovider", f"--junitxml={report}", *args)
    return outcomes_of(report)


def rule_line(code: str, name: str, summary: str) -> str:
    return f"{code} {name}: {summary}; see {DOCS_URL}/rules/{code}.md"


TRACES = """
import tensorflow as tf


@tf.function
def train_step(x, step):
    return x * tf.cast(step, tf.float32)


class Config:
    def __init__(self, scale):
        self.scale = scale


@tf.function
def scaled(x, config):
    return x * config.scale


class Model(tf.Module):
    @tf.function
    def forward(self, x):
        return x + 1.0


x = tf.ones([4])


def test_python_int_step(tf_budget):
    with tf_budget.traces(train_step, at_most=1):
        for step in range(20):
            train_step(x, step)


def test_tensor_step(tf_budget):
    with tf_budget.traces(train_step, at_most=1):
        for step in range(20):
            train_step(x, tf.constant(step))


def test_new_config_per_call(tf_budget):
    with tf_budget.traces(scaled, at_most=1):
        for _ in range(10):
            scaled(x, Config(2.0))


def test_one_config(tf_budget):
    config = Config(2.0)
    with tf_budget.traces(scaled, at_most=1):
        for _ in range(10):
            scaled(x, config)


def test_new_model_per_call(tf_budget):
    model = Model()
    with tf_budget.traces(model.forward, at_most=1):
        for _ in range(10):
            Model().forward(x)


def test_one_model(tf_budget):
    model = Model()
    with tf_budget.traces(model.forward, at_most=1):
        for _ in range(10):
            model.forward(x)


def test_a_plain_function(tf_budget):
    with tf_budget.traces(len):
        pass
"""


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> Outcomes:
    directory = tmp_path_factory.mktemp("traces")
    (directory / "test_traces.py").write_text(TRACES)
    return {name.split("::")[1]: outcome for name, outcome in run_suite(directory).items()}


def line_in(source: str, text: str) -> int:
    [line] = [n for n, code in enumerate(source.splitlines(), 1) if code.strip() == text]
    return line


@requires_tensorflow
def test_traces_fail_on_a_python_int_step_and_pass_with_a_tensor(traces: Outcomes) -> None:
    call = line_in(TRACES, "train_step(x, step)")
    assert traces["test_python_int_step"] == (
        "failure",
        "`train_step` traced 20 times in 20 calls inside tf_budget.traces(at_most=1): "
        "argument `step` took 20 distinct Python int values: 0, 1, 2, 3, ..., 19\n"
        f"call sites: test_traces.py:{call} (20 calls, 20 traces)\n"
        + rule_line(
            "TFL101",
            "python-scalar-argument",
            "A Python number that changes every iteration is passed to a `tf.function`",
        ),
    )
    assert traces["test_tensor_step"] == ("passed", None)


@requires_tensorflow
def test_traces_fail_on_a_new_object_per_call(traces: Outcomes) -> None:
    call = line_in(TRACES, "scaled(x, Config(2.0))")
    assert traces["test_new_config_per_call"] == (
        "failure",
        "`scaled` traced 10 times in 10 calls inside tf_budget.traces(at_most=1): "
        "argument `config` took 10 distinct Python objects of type `Config`\n"
        f"call sites: test_traces.py:{call} (10 calls, 10 traces)\n"
        + rule_line(
            "TFL102",
            "python-object-argument",
            "A Python object that is new or different every iteration is passed to a `tf.function`",
        ),
    )
    assert traces["test_one_config"] == ("passed", None)


@requires_tensorflow
def test_traces_of_a_bound_method_count_every_instance(traces: Outcomes) -> None:
    call = line_in(TRACES, "Model().forward(x)")
    assert traces["test_new_model_per_call"] == (
        "failure",
        "`Model.forward` traced 10 times in 10 calls inside tf_budget.traces(at_most=1): "
        f"9 retraces came from new tf.function objects (10 created at test_traces.py:{call})\n"
        f"call sites: test_traces.py:{call} (10 calls, 10 traces)\n"
        + rule_line(
            "TFL104",
            "function-method-per-instance",
            "A class with `tf.function` methods is instantiated and used in every iteration",
        ),
    )
    assert traces["test_one_model"] == ("passed", None)


@requires_tensorflow
def test_traces_of_something_else_is_a_type_error(traces: Outcomes) -> None:
    outcome, message = traces["test_a_plain_function"]
    assert outcome == "failure"
    assert message is not None
    assert (
        "TypeError: tf_budget.traces() takes a tf.function or a bound tf.function method, "
        "not <built-in function len>"
    ) in message


ITERATIONS = """
import tensorflow as tf


@tf.function
def train_step(x, step):
    return x * tf.cast(step, tf.float32)


x = tf.ones([4])


def test_step_tensors_kept(tf_budget):
    losses = []
    for step in tf_budget.iterations(30, warmup=3):
        losses.append(train_step(x, tf.constant(step)))


def test_step_numbers_kept(tf_budget):
    losses = []
    for step in tf_budget.iterations(30, warmup=3):
        losses.append(float(train_step(x, tf.constant(step))[0]))
    # sampled at the end of the warm-up, after each of the next 12 iterations, after 16
    # measured iterations and at the end; no GPU here, so no device memory
    assert [done for done, _ in tf_budget.samples] == [*range(3, 16), 19, 30]
    assert all("device_mb" not in counters for _, counters in tf_budget.samples)


def build():
    return tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(2)])


def test_models_without_clear_session(tf_budget):
    for _ in tf_budget.iterations(10, warmup=2):
        model = build()
        model(tf.ones([1, 4]))


def test_models_with_clear_session(tf_budget):
    for _ in tf_budget.iterations(10, warmup=2):
        tf.keras.backend.clear_session()
        model = build()
        model(tf.ones([1, 4]))


w = tf.Variable(tf.ones((8, 8)))


def step(x):
    with tf.GradientTape(persistent=True) as tape:
        y = tf.reduce_sum(tf.matmul(x, w) ** 2)
    g = tape.gradient(y, [w])
    w.assign_sub(0.001 * g[0])
    return y


def test_persistent_tape_per_step(tf_budget):
    for _ in tf_budget.iterations(20, warmup=2):
        step(tf.ones((8, 8)))


def test_persistent_tapes_kept(tf_budget):
    tapes = []
    for _ in tf_budget.iterations(20, warmup=2):
        with tf.GradientTape(persistent=True) as tape:
            tf.reduce_sum(tf.matmul(tf.ones((8, 8)), w) ** 2)
        tapes.append(tape)


def test_batches_of_a_dataset(tf_budget):
    dataset = tf.data.Dataset.from_tensor_slices(tf.ones([8, 4])).batch(1)
    seen = [batch.shape[0] for batch in tf_budget.iterations(dataset, warmup=2)]
    assert seen == [1] * 8


def test_too_few_iterations(tf_budget):
    tf_budget.iterations(5, warmup=3)
"""


@pytest.fixture(scope="module")
def iterations(tmp_path_factory: pytest.TempPathFactory) -> Outcomes:
    directory = tmp_path_factory.mktemp("iterations")
    (directory / "test_iterations.py").write_text(ITERATIONS)
    return {name.split("::")[1]: outcome for name, outcome in run_suite(directory).items()}


def samples_of(message: str, label: str) -> list[tuple[int, float]]:
    [listed] = re.findall(rf"  samples \(iterations completed: {re.escape(label)}\): (.*)", message)
    return [(int(at), float(value)) for at, value in re.findall(r"(\d+): ([\d.]+)", listed)]


@requires_tensorflow
def test_iterations_fail_when_step_tensors_are_kept_and_pass_when_numbers_are(
    iterations: Outcomes,
) -> None:
    outcome, message = iterations["test_step_tensors_kept"]
    assert outcome == "failure"
    assert message is not None
    head, counter, _ = message.split("\n")
    assert head == "tf_budget.iterations(30, warmup=3):"
    assert counter == (
        "live eager tensors grew +1 per iteration (limit 0; fitted over iterations 3 to 30, "
        "rose on 14 of 14 steps, noise 0)"
    )
    found = samples_of(message, "live eager tensors")
    assert [at for at, _ in found] == [*range(3, 16), 19, 30]
    # one more output kept per iteration
    assert [b - a for (_, a), (_, b) in pairwise(found)] == [
        *[1.0] * 12,
        4.0,
        11.0,
    ]
    assert iterations["test_step_numbers_kept"] == ("passed", None)


@requires_tensorflow
def test_iterations_fail_on_a_model_per_iteration_without_clear_session(
    iterations: Outcomes,
) -> None:
    # three names per model: `sequential`, `input_layer` and `dense` (and their counters)
    assert iterations["test_models_without_clear_session"] == (
        "failure",
        "tf_budget.iterations(10, warmup=2):\n"
        "Keras layer/model names grew +6 per iteration (limit 0; fitted over iterations 2 to "
        "10, rose on 8 of 8 steps, noise 0)\n"
        "  samples (iterations completed: Keras layer/model names): 2: 12, 3: 18, 4: 24, "
        "5: 30, 6: 36, 7: 42, 8: 48, 9: 54, 10: 60",
    )
    assert iterations["test_models_with_clear_session"] == ("passed", None)


@requires_tensorflow
def test_iterations_pass_a_persistent_tape_per_step_and_fail_tapes_kept(
    iterations: Outcomes,
) -> None:
    """As ``docs/budget.md`` says: a persistent tape released when its step returns does not
    grow (what it costs is a peak inside the step, which ``confirm`` measures for TFL201);
    persistent tapes kept across iterations do."""
    assert iterations["test_persistent_tape_per_step"] == ("passed", None)
    outcome, message = iterations["test_persistent_tapes_kept"]
    assert outcome == "failure"
    assert message is not None
    grew = [line for line in message.split("\n") if not line.startswith("  ")]
    # each tape kept keeps the 5 tensors its step's ops recorded alive
    assert grew == [
        "tf_budget.iterations(20, warmup=2):",
        "live eager tensors grew +5 per iteration (limit 0; fitted over iterations 2 to 20, "
        "rose on 14 of 14 steps, noise 0)",
        "live GradientTapes grew +1 per iteration (limit 0; fitted over iterations 2 to 20, "
        "rose on 14 of 14 steps, noise 0)",
        "tensors held by gradient tapes grew +5 per iteration (limit 0; fitted over "
        "iterations 2 to 20, rose on 14 of 14 steps, noise 0)",
    ]
    assert samples_of(message, "live GradientTapes")[-1] == (20, 20.0)


@requires_tensorflow
def test_iterations_take_an_iterable_and_check_their_count(iterations: Outcomes) -> None:
    assert iterations["test_batches_of_a_dataset"] == ("passed", None)
    outcome, message = iterations["test_too_few_iterations"]
    assert outcome == "failure"
    assert message is not None
    assert (
        "ValueError: tf_budget.iterations(5, warmup=3) measures 2 iterations after the warm-up; "
        "growth needs at least 4"
    ) in message


def test_a_suite_without_tf_budget_never_imports_tensorflow(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        import sys
        from pathlib import Path

        def pytest_sessionfinish(session):
            Path("imported.txt").write_text(str("tensorflow" in sys.modules))
        """
    )
    pytester.makepyfile(
        test_plain="""
        def test_plugin_is_active(pytestconfig):
            assert pytestconfig.pluginmanager.has_plugin("tflint_leaks")
        """
    )
    assert run(pytester) == {"test_plain::test_plugin_is_active": ("passed", None)}
    assert (pytester.path / "imported.txt").read_text() == "False"


def test_no_tflint_leaks_turns_the_plugin_off(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_off="""
        def test_uses_the_fixture(tf_budget):
            pass
        """
    )
    [(outcome, message)] = run(pytester, "-p", "no:tflint_leaks").values()
    assert outcome == "error"
    assert message is not None
    assert "fixture 'tf_budget' not found" in message
