"""``tflint-leaks confirm`` end to end: the static pass, the child run and the report."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import jsonschema
import pytest

import tflint_leaks.runtime
from tests.runtime.conftest import line_of
from tests.test_reporters import sarif_schema
from tflint_leaks.cli import main

TARGETS = Path(__file__).parent / "targets"


@pytest.mark.runtime
def test_confirm_script_reports_verdicts_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "confirm",
            str(TARGETS / "python_scalar.py"),
            "--timeout",
            "300",
            "--output-format",
            "json",
        ]
    )
    captured = capsys.readouterr()
    assert code == 1, captured.err
    (finding,) = json.loads(captured.out)
    assert (finding["code"], finding["location"]["row"]) == ("TFL101", 26)
    confirmation = finding["confirmation"]
    assert confirmation["verdict"] == "confirmed"
    assert (confirmation["traces"], confirmation["calls"]) == (10, 10)
    assert "argument `i` took 10 distinct Python int values" in confirmation["cause"]
    assert captured.err.startswith("target completed: ran to its end")


@pytest.mark.runtime
def test_confirm_passes_arguments_after_the_separator(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "train.py"
    script.write_text(
        textwrap.dedent(
            """\
            import sys
            import tensorflow as tf

            @tf.function
            def step(x, i):
                return x + tf.cast(i, tf.float32)

            steps = int(sys.argv[2])
            assert sys.argv[1] == "--steps" and sys.path[0] == __file__.rpartition("/")[0]
            for i in range(steps):
                step(tf.ones([1]), tf.constant(i))
            for i in range(steps):
                step(tf.ones([1]), i)
            """
        )
    )
    code = main(["confirm", str(script), "--timeout", "300", "--", "--steps", "7"])
    captured = capsys.readouterr()
    assert code == 1, captured.err
    assert "train.py:13:24: TFL101 " in captured.out
    # judged on the calls of line 13 alone: line 11's tensor calls made the eighth trace
    assert (
        "runtime: confirmed: `step` traced 7 times in 7 calls: argument `i` took 7 distinct "
        "Python int values: 0, 1, 2, 3, ..., 6; unbounded: still tracing new graphs at the end "
        "of the run (a new trace at call 7 of 7)\n"
    ) in captured.out


def test_confirm_without_tensorflow_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(tflint_leaks.runtime, "tensorflow_available", lambda: False)
    code = main(["confirm", str(TARGETS / "python_scalar.py")])
    captured = capsys.readouterr()
    assert code == 2
    assert "install the runtime extra (`pip install '.[runtime]'`" in captured.err


def test_confirm_needs_exactly_one_target(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["confirm"]) == 2
    assert main(["confirm", "--pytest", "tests", "-m", "pkg.mod"]) == 2
    assert "exactly one target" in capsys.readouterr().err


def test_missing_module_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["confirm", "-m", "missing.module"]) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        "error: no module named `missing.module` (looked in the current directory and on "
        "sys.path)\n"
    )
    assert captured.out == ""


LIBRARY = """\
import tensorflow as tf


@tf.function
def step(x, i):
    return x + 1.0


def train(steps):
    x = tf.zeros([1])
    for i in range(steps):
        x = step(x, i)
    return x
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A library with a retracing loop, and a test that runs it."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "__init__.py").write_text("")
    (tmp_path / "lib" / "model.py").write_text(LIBRARY)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_train.py").write_text(
        "from lib.model import train\n\n\ndef test_train():\n    train(8)\n"
    )
    (tmp_path / "tests" / "test_nothing.py").write_text("VALUE = 1\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.runtime
@pytest.mark.usefixtures("project")
def test_pytest_selection_with_paths_judges_the_library_finding(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["confirm", "--pytest", "tests/test_train.py", "lib", "--timeout", "300"])
    captured = capsys.readouterr()
    assert code == 1, captured.err
    assert captured.out.splitlines() == [
        "lib/model.py:12:21: TFL101 Python number `i` changes every iteration; each value "
        "retraces `step`",
        "    runtime: confirmed: `step` traced 8 times in 8 calls: argument `i` took 8 distinct "
        "Python int values: 0, 1, 2, 3, ..., 7; unbounded: still tracing new graphs at the end "
        "of the run (a new trace at call 8 of 8)",
        "Found 1 warning.",
    ]
    assert captured.err.startswith("target exited: stopped with sys.exit(0)")


@pytest.mark.runtime
@pytest.mark.usefixtures("project")
@pytest.mark.parametrize(
    ("selection", "message"),
    [
        (
            "tests/nope.py",
            "error: pytest could not use the selection (usage error) (exit 4): "
            "ERROR: file or directory not found: tests/nope.py",
        ),
        (
            "tests/test_nothing.py",
            "error: pytest collected no tests (exit 5): pytest tests/test_nothing.py",
        ),
    ],
)
def test_pytest_selection_that_runs_nothing_is_an_error(
    capsys: pytest.CaptureFixture[str], selection: str, message: str
) -> None:
    assert main(["confirm", "--pytest", selection, "lib", "--timeout", "300"]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines()[-1] == message
    assert "All checks passed!" not in captured.out


@pytest.mark.runtime
def test_target_dying_on_a_missing_import_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "train.py"
    script.write_text("import tensorflow as tf\nimport not_installed_anywhere\n")
    assert main(["confirm", str(script), "--timeout", "300"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "Traceback" not in captured.err
    assert captured.err.splitlines()[-1] == (
        f"error: the target could not import at {script}:2: "
        "ModuleNotFoundError: No module named 'not_installed_anywhere'"
    )


@pytest.mark.runtime
def test_confirm_sarif_with_a_runtime_only_finding_is_valid(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(
        ["confirm", str(TARGETS / "unflagged.py"), "--timeout", "300", "--output-format", "sarif"]
    )
    captured = capsys.readouterr()
    assert code == 1, captured.err
    log = json.loads(captured.out)
    jsonschema.validate(log, sarif_schema(), format_checker=jsonschema.FormatChecker())
    run = log["runs"][0]
    (runtime_only,) = run["results"]
    assert runtime_only["ruleId"] == "TFL900"
    assert run["tool"]["driver"]["rules"][runtime_only["ruleIndex"]]["id"] == "TFL900"
    assert runtime_only["properties"]["confirmation"]["verdict"] == "confirmed"
    assert runtime_only["message"]["text"].endswith(
        "\nruntime: confirmed: `scale` traced 10 times in 10 calls: argument `factor` took 10 "
        "distinct Python float values: 0.0, 1.0, 2.0, 3.0, ..., 9.0; unbounded: still tracing "
        "new graphs at the end of the run (a new trace at call 10 of 10)"
    )
    region = runtime_only["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] == line_of("unflagged.py", "hidden-def")
