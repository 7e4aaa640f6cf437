"""The package builds and installs the way the README's install section says: an sdist and a
wheel from ``python -m build`` that ``twine check`` accepts, installed into a fresh virtual
environment from the wheel, and from a clone's git URL with an extra. Failed before: the README
said ``pip install tflint-leaks``, which finds no distribution (it is not published)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import textwrap
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from tflint_leaks import __version__

ROOT = Path(__file__).resolve().parent.parent
LEAKY = textwrap.dedent(
    """\
    import tensorflow as tf

    @tf.function
    def step(x, i):
        return x

    for i in range(100):
        step(tf.ones([1]), i)
    """
)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _run(*argv: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    completed = subprocess.run(
        [str(arg) for arg in argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=540,  # a hang guard, below pytest-timeout's 600 s
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    assert completed.returncode == 0, (completed.stdout + completed.stderr)[-3000:]
    return completed


def _source_tree(tmp_path: Path) -> Path:
    """The project's files as a checkout has them (tracked, and new files not ignored)."""
    listed = _run("git", "ls-files", "-co", "--exclude-standard", cwd=ROOT).stdout.splitlines()
    tree = tmp_path / "src"
    for name in listed:
        source = ROOT / name
        if source.is_file():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, tree / name)
    return tree


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp_path = tmp_path_factory.mktemp("build")
    out = tmp_path / "dist"
    _run(sys.executable, "-m", "build", "--outdir", out, _source_tree(tmp_path))
    return out


def test_build_makes_an_sdist_and_a_wheel_that_twine_accepts(dist: Path) -> None:
    names = sorted(path.name for path in dist.iterdir())
    assert names == [
        f"tflint_leaks-{__version__}-py3-none-any.whl",
        f"tflint_leaks-{__version__}.tar.gz",
    ]
    checked = _run(sys.executable, "-m", "twine", "check", "--strict", *sorted(dist.iterdir()))
    assert checked.stdout.count("PASSED") == 2, checked.stdout


def test_the_wheel_holds_the_package_its_data_and_its_metadata(dist: Path) -> None:
    (wheel,) = dist.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        files = set(archive.namelist())
        metadata = Parser().parsestr(
            archive.read(f"tflint_leaks-{__version__}.dist-info/METADATA").decode()
        )
        entry_points = archive.read(f"tflint_leaks-{__version__}.dist-info/entry_points.txt")
    assert {
        "tflint_leaks/__init__.py",
        "tflint_leaks/py.typed",
        "tflint_leaks/schemas/output.schema.json",
        "tflint_leaks/rules/tfl101_python_scalar_argument.py",
    } <= files
    assert not [name for name in files if name.startswith(("tests/", "fixtures/"))]
    assert b"tflint-leaks = tflint_leaks.cli:entry_point" in entry_points
    assert set(metadata.get_all("Provides-Extra") or []) >= {"runtime", "server", "profile"}
    assert metadata["Description-Content-Type"] == "text/markdown"
    (sdist,) = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        members = {member.name.partition("/")[2] for member in archive.getmembers()}
    assert {"pyproject.toml", "README.md", "tflint_leaks/py.typed"} <= members


def _venv(path: Path) -> Path:
    _run(sys.executable, "-m", "venv", path)
    return path / "bin"


def _lints(bin_dir: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / "train.py").write_text(LEAKY)
    completed = subprocess.run(
        [str(bin_dir / "tflint-leaks"), "--no-cache", "train.py"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert completed.returncode == 1, completed.stderr
    assert completed.stdout.splitlines()[0].startswith("train.py:8:24: TFL101 ")


def test_the_wheel_installs_and_runs_in_a_fresh_environment(dist: Path, tmp_path: Path) -> None:
    bin_dir = _venv(tmp_path / "venv")
    (wheel,) = dist.glob("*.whl")
    _run(bin_dir / "pip", "install", "--quiet", wheel)
    assert _run(bin_dir / "tflint-leaks", "--version").stdout == (
        f"tflint-leaks, version {__version__}\n"
    )
    _lints(bin_dir, tmp_path)


def test_the_readme_git_url_with_an_extra_installs_from_a_clone(tmp_path: Path) -> None:
    """The README's `pip install "tflint-leaks[server] @ git+https://..."`, pointed at a local
    clone (the tests have no network): the package and the extra's pygls install."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (line,) = [line for line in readme.splitlines() if "[server] @ git+https://" in line]
    url = line.split('"')[1].split(" @ ")[1].split("@")[0]
    clone = tmp_path / "clone"
    _run("git", "clone", "--quiet", ROOT, clone)
    bin_dir = _venv(tmp_path / "venv")
    # `file://localhost/...`: the pip that `venv` bundles rejects an empty host (`file:///`).
    requirement = line.split('"')[1].replace(url, f"git+file://localhost{clone}")
    _run(bin_dir / "pip", "install", "--quiet", requirement)
    _run(bin_dir / "python", "-c", "import pygls, tflint_leaks.server")
    _lints(bin_dir, tmp_path)


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_the_makefile_installs_without_printing_warnings(tmp_path: Path) -> None:
    """`make demo`'s environment (what `make test` builds first, with fewer extras) is made
    without a line of output: pip prints only errors. Failed before: every `make` printed
    pip's warnings about the machine's index settings and setuptools' notes, which a newcomer
    reads as failures."""
    venv = tmp_path / "venv"
    completed = subprocess.run(
        ["make", "-s", f"VENV={venv}", f"{venv}/.demo-installed"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=540,
    )
    assert (completed.returncode, completed.stdout, completed.stderr) == (0, "", "")
    assert (venv / "bin" / "tflint-leaks").exists()
