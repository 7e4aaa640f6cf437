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


LEAKY = textwrap.dedent(
    """\
    import tensorflow as tf

    @tf.function
    def step(x, i):
        return x + i

    for i in range(100):
        step(tf.ones([1]), i)
    """
)


def _readme_config() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### As a pre-commit hook") :]
    return section.split("```yaml\n", 1)[1].split("```", 1)[0]


def test_the_readme_snippet_runs_without_a_release(tmp_path: Path) -> None:
    """The README's ``.pre-commit-config.yaml``, as is, in a fresh repository. Failed before:
    it named ``rev: v0.1.0``, a tag that does not exist, so pre-commit could not install it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".pre-commit-config.yaml").write_text(_readme_config())
    (repo / "train.py").write_text(LEAKY)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    completed = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files"],
        cwd=repo,
        capture_output=True,
        text=True,
        env={
            "PRE_COMMIT_HOME": str(tmp_path / "cache"),
            "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
            "HOME": str(tmp_path),
        },
        check=False,
        timeout=600,
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode == 1, output
    assert "train.py:8:24: TFL101 Python number `i` changes every iteration" in output


def test_hook_reports_findings_and_honours_excludes(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".venv").mkdir(parents=True)
    (repo / "train.py").write_text(LEAKY)
    (repo / ".venv" / "vendored.py").write_text(LEAKY)
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
    assert "Found 1 warning." in output
