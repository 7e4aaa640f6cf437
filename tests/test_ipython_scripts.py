"""A ``.py`` file exported from a notebook (Kaggle, Colab) keeps its IPython lines: it is linted
as IPython runs it, with one warning naming those lines, instead of being skipped whole as
``TFL001``. Failed before: `kaggle.py:3:1: TFL001 invalid syntax`, and no other finding."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tflint_leaks.cli import main

SCRIPT = textwrap.dedent(
    """\
    #!/usr/bin/env python
    # coding: utf-8
    !pip install -q tensorflow-addons \\
        keras-tuner
    %matplotlib inline
    import tensorflow as tf

    @tf.function
    def step(x, i):
        return x * i

    files = !ls
    for i in range(100):
        step(tf.ones([1]), i)
    """
)
MESSAGE = "TFL101 Python number `i` changes every iteration; each value retraces `step`"
WARNING = (
    "warning: {path}: IPython syntax skipped on lines 3 `!pip install -q tensorflow-addons \\`, "
    "4 `keras-tuner`, 5 `%matplotlib inline`, 12 `files = !ls`; the rest is linted as IPython "
    "runs it"
)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], list[str]]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err.splitlines()


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "kaggle.py"
    path.write_text(SCRIPT)
    return path


def test_findings_at_the_files_positions_and_one_warning(
    script: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = (
        1,
        [f"{script}:14:24: {MESSAGE}", "Found 1 warning."],
        [WARNING.format(path=script)],
    )
    cache = ["--cache-dir", str(tmp_path / "cache")]
    assert run(capsys, *cache, str(script)) == expected
    # From the cache: the same findings and the same one warning.
    assert run(capsys, *cache, str(script)) == expected


def test_fix_and_add_noqa_keep_the_ipython_lines(
    script: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "--no-cache", "--fix", "--unsafe-fixes", str(script))[0] == 0
    assert script.read_text() == SCRIPT.replace(
        "step(tf.ones([1]), i)", "step(tf.ones([1]), tf.constant(i, tf.float32))"
    )
    script.write_text(SCRIPT)
    code, _, err = run(capsys, "--no-cache", "--add-noqa", str(script))
    assert (code, err[-1]) == (0, "Added a noqa comment for 1 finding.")
    assert script.read_text() == SCRIPT.replace(
        "step(tf.ones([1]), i)", "step(tf.ones([1]), i)  # noqa: TFL101"
    )
    assert run(capsys, "--no-cache", str(script))[:2] == (0, ["All checks passed!"])


def test_a_script_ipython_would_not_run_either_is_still_tfl001(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "broken.py"
    path.write_text("%matplotlib inline\ndef f(:\n    pass\n")
    assert run(capsys, "--no-cache", str(path)) == (
        1,
        [f"{path}:1:1: TFL001 invalid syntax", "Found 1 error."],
        [],
    )
