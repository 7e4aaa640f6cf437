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


def _readme_config(containing: str = "repo: local") -> str:
    """The README's ``.pre-commit-config.yaml`` block that contains ``containing``."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### As a pre-commit hook") :].split("\n### ", 1)[0]
    blocks = [block.split("```", 1)[0] for block in section.split("```yaml\n")[1:]]
    (block,) = [block for block in blocks if containing in block]
    return block


def _pre_commit(repo: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args],
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


def test_the_readme_remote_hook_installs_from_a_clone(tmp_path: Path) -> None:
    """The README's remote form (`repo:` URL, `rev: main`, `language: python`) as written, with
    the URL pointing at a local clone (the tests have no network): pre-commit clones it,
    installs tflint-leaks in its own environment and blocks the leak. Failed before: the
    README's only working form was `repo: local`."""
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "--quiet", str(ROOT), str(clone))
    _git(clone, "checkout", "-q", "-B", "main")
    config = _readme_config("rev: main")
    assert "repo: https://github.com/tflint-leaks/tflint-leaks\n" in config
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".pre-commit-config.yaml").write_text(
        config.replace("https://github.com/tflint-leaks/tflint-leaks", str(clone))
    )
    (repo / "train.py").write_text(LEAKY)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    completed = _pre_commit(repo, tmp_path, "run", "--all-files")
    output = completed.stdout + completed.stderr
    assert completed.returncode == 1, output
    assert "train.py:8:24: TFL101 Python number `i` changes every iteration" in output
    # `pre-commit try-repo` on the clone finds the same hook.
    completed = _pre_commit(repo, tmp_path, "try-repo", str(clone), "tflint-leaks", "--all-files")
    output = completed.stdout + completed.stderr
    assert completed.returncode == 1, output
    assert "Found 1 warning." in output


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
    completed = _pre_commit(repo, tmp_path, "try-repo", str(ROOT), "tflint-leaks", "--all-files")
    output = completed.stdout + completed.stderr
    assert completed.returncode == 1, output
    assert "train.py:8:24: TFL101 Python number `i` changes every iteration" in output
    assert "vendored.py" not in output
    assert "Found 1 warning." in output
