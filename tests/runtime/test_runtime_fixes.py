"""A fixed file still runs: TFL101's fix, applied by ``--fix --unsafe-fixes``, then the file run
with TensorFlow in a child process."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.runtime.conftest import requires_tensorflow
from tflint_leaks.cli import main

pytestmark = [pytest.mark.runtime, requires_tensorflow]

SCRIPT = textwrap.dedent(
    """\
    import tensorflow as tf

    @tf.function
    def train_step(x, i):
        return x * i

    for i in range(50):
        y = train_step(tf.ones([2]), i)
    print(train_step.experimental_get_tracing_count(), y.dtype.name, float(y[0]))
    """
)


def test_tfl101_fix_runs_with_the_dtype_the_function_uses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Failed before: the fix wrote `tf.constant(i)`, an int32 tensor, and the fixed script
    raised `TypeError: ... 'Mul' Op has type int32 that does not match type float32`."""
    script = tmp_path / "train.py"
    script.write_text(SCRIPT, encoding="utf-8")
    assert main(["--no-cache", "--fix", "--unsafe-fixes", str(script)]) == 0
    capsys.readouterr()
    assert "train_step(tf.ones([2]), tf.constant(i, tf.float32))" in script.read_text()
    completed = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=540,
        check=False,
        env={"TF_CPP_MIN_LOG_LEVEL": "3", "PATH": "/usr/bin:/bin"},
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    # One trace for every value, the multiplication in float32.
    assert completed.stdout == "1 float32 49.0\n"
