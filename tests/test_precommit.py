"""The pre-commit hook, run by the real pre-commit framework against this checkout."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_hook_reports_findings_and_honours_excludes(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".venv").mkdir(parents=True)
    leaky = textwrap.dedent(
        """\
        import tensorflow as tf

        @tf.function
        def step(x, i):
            return x + i

        for i in range(100):
            step(tf.ones([1]), i)
        """
    )
    (repo / "train.py").write_text(leaky)
    (repo / ".venv" / "vendored.py").write_text(leaky)
    (repo / "clean.py").write_text("import tensorflow as tf\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    completed = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "tflint-leaks", "--all-files"],
        cwd=repo,
        capture_output=True,
        text=True,
        env={
            "PRE_COMMIT_HOME": str(tmp_path / "cache"),
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
        },
        check=False,
        timeout=600,
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode == 1, output
    assert "train.py:8:24: TFL101 Python number `i` changes every iteration" in output
    assert "vendored.py" not in output
    assert "Found 1 error." in output
