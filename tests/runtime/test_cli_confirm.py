"""``tflint-leaks confirm`` end to end: the static pass, the child run and the report."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

import tflint_leaks.runtime
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
    assert "pip install 'tflint-leaks[runtime]'" in captured.err


def test_confirm_needs_exactly_one_target(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["confirm"]) == 2
    assert main(["confirm", "--pytest", "tests", "-m", "pkg.mod"]) == 2
    assert "exactly one target" in capsys.readouterr().err
