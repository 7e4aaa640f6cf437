"""Standard input (``check - --stdin-filename PATH``, what editor plugins pipe), and
``--show-settings`` / ``--show-files``. Every test here failed before: ``-`` was "no such file
or directory", and the options did not exist."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

from tflint_leaks.cli import main
from tflint_leaks.config import DEFAULT_EXCLUDE

LEAKY = textwrap.dedent(
    """\
    import tensorflow as tf

    @tf.function
    def step(x, i):
        return x * i

    for i in range(100):
        step(tf.ones([1]), i)
    """
)
FIXED = LEAKY.replace("step(tf.ones([1]), i)", "step(tf.ones([1]), tf.constant(i, tf.float32))")
MESSAGE = "TFL101 Python number `i` changes every iteration; each value retraces `step`"


def run(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    stdin: str | bytes,
    *argv: str,
) -> tuple[int, str, str]:
    data = stdin.encode() if isinstance(stdin, str) else stdin
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    code = main([*argv, "--no-cache"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose settings raise `max-python-values` for `src/` only, and exclude
    `generated/`."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.tflint-leaks]\nextend-exclude = ["generated"]\n'
    )
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "pyproject.toml").write_text("[tool.tflint-leaks]\nmax-python-values = 200\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_stdin_is_linted_as_the_named_file(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = run(capsys, monkeypatch, LEAKY, "check", "-", "--stdin-filename", "src/t.py")
    assert (code, out, err) == (1, f"src/t.py:8:24: {MESSAGE}\nFound 1 warning.\n", "")
    # The path's own configuration: sub/ allows 200 values.
    code, out, _ = run(capsys, monkeypatch, LEAKY, "-", "--stdin-filename", "sub/t.py")
    assert (code, out) == (0, "All checks passed!\n")
    # Without a name: `-`, with the settings of the current directory.
    code, out, _ = run(capsys, monkeypatch, LEAKY, "-")
    assert (code, out) == (1, f"-:8:24: {MESSAGE}\nFound 1 warning.\n")
    # Nothing is read from or written to the named path.
    assert not (project / "src").exists()


def test_stdin_excludes_apply_with_force_exclude(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    name = "generated/t.py"
    assert run(capsys, monkeypatch, LEAKY, "-", "--stdin-filename", name)[0] == 1
    code, out, err = run(
        capsys, monkeypatch, LEAKY, "-", "--stdin-filename", name, "--force-exclude"
    )
    assert (code, err) == (0, f"warning: {name}: excluded by the configuration; not linted\n")
    # --fix of an excluded buffer gives it back unchanged.
    code, out, _ = run(
        capsys, monkeypatch, LEAKY, "-", "--stdin-filename", name, "--force-exclude", "--fix"
    )
    assert (code, out) == (0, LEAKY)


def test_fix_with_stdin_writes_the_fixed_text_to_stdout(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = run(
        capsys, monkeypatch, LEAKY, "-", "--stdin-filename", "t.py", "--fix", "--unsafe-fixes"
    )
    assert (code, out) == (0, FIXED)
    assert err == "Fixed 1 finding.\nAll checks passed!\n"
    # Only safe fixes: the text comes back unchanged, the finding is reported on stderr.
    code, out, err = run(capsys, monkeypatch, LEAKY, "-", "--stdin-filename", "t.py", "--fix")
    assert (code, out) == (1, LEAKY)
    assert err.splitlines() == [
        "Fixed 0 findings.",
        "1 more can be fixed with `--fix --unsafe-fixes`.",
        f"t.py:8:24: {MESSAGE}",
        "Found 1 warning.",
    ]
    code, out, _ = run(capsys, monkeypatch, LEAKY, "-", "--diff", "--unsafe-fixes")
    assert code == 1
    assert out.splitlines()[:2] == ["--- -", "+++ -"]
    assert "+    step(tf.ones([1]), tf.constant(i, tf.float32))" in out.splitlines()
    assert not list(project.glob("*.py"))


def test_stdin_notebook_and_bad_input(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    document = nbformat.v4.new_notebook()
    document.cells = [nbformat.v4.new_code_cell("%matplotlib inline\n" + LEAKY)]
    code, out, _ = run(
        capsys, monkeypatch, nbformat.writes(document), "-", "--stdin-filename", "nb.ipynb"
    )
    assert (code, out) == (1, f"nb.ipynb:cell 1:9:24: {MESSAGE}\nFound 1 warning.\n")
    code, out, _ = run(capsys, monkeypatch, b"x = '\xe9'\n", "-", "--stdin-filename", "t.py")
    assert code == 1
    assert out.startswith("t.py:1:1: TFL001 not valid utf-8: byte 0xe9 cannot be decoded")
    assert run(capsys, monkeypatch, LEAKY, "-", "t.py")[:3:2] == (
        2,
        "error: `-` (standard input) cannot be combined with other paths\n",
    )
    assert run(capsys, monkeypatch, LEAKY, "-", "--add-noqa")[0] == 2


def test_a_real_pipe(project: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "tflint_leaks", "-", "--stdin-filename", "train.py"],
        input=LEAKY,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert (completed.returncode, completed.stdout) == (
        1,
        f"train.py:8:24: {MESSAGE}\nFound 1 warning.\n",
    )


def test_show_settings_prints_every_field_of_the_resolved_settings(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--show-settings", "--ignore", "TFL2", "sub/train.py"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == [
        "Resolved settings for: sub/train.py",
        f"Settings file: {project / 'sub' / 'pyproject.toml'}",
    ]
    assert "options.max-python-values = 200" in lines
    assert "options.max-loop-iterations = 10" in lines
    assert 'ignore = ["TFL2"]' in lines
    assert f"root = {json.dumps(str(project / 'sub'))}" in lines
    enabled = json.loads(next(line for line in lines if line.startswith("enabled = "))[10:])
    assert "TFL101" in enabled and "TFL003" in enabled
    assert not [code for code in enabled if code.startswith("TFL2")]
    assert main(["--show-settings", "--output-format", "json", "train.py"]) == 0
    (shown,) = json.loads(capsys.readouterr().out)
    assert shown["path"] == "train.py"
    assert shown["settings"]["source"] == str(project / "pyproject.toml")
    assert shown["settings"]["exclude"] == list(DEFAULT_EXCLUDE)
    assert shown["settings"]["extend-exclude"] == ["generated"]
    options = shown["settings"]["options"]
    assert (options["max-python-values"], options["max-loop-iterations"]) == (5, 10)
    assert options["frameworks"]["tensorflow"] is None  # nothing pinned here


def test_show_settings_names_every_field_without_knowing_them(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A field added to Settings (or RuleOptions) appears without changing the command."""
    from dataclasses import fields

    from tflint_leaks.config import Settings
    from tflint_leaks.rulekit.options import RuleOptions

    assert main(["--show-settings", "--output-format", "json", "."]) == 0
    (shown,) = json.loads(capsys.readouterr().out)
    names = {f.name.replace("_", "-") for f in fields(Settings)} | {"enabled"}
    assert set(shown["settings"]) == names
    options = {f.name.replace("_", "-") for f in fields(RuleOptions)}
    assert set(shown["settings"]["options"]) == options


def test_show_files_lists_what_a_run_lints(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("a.py", "sub/b.py", "generated/c.py", "nb.ipynb", "notes.txt"):
        (project / name).parent.mkdir(exist_ok=True)
        (project / name).write_text("x = 1\n")
    assert main(["--show-files", "."]) == 0
    assert capsys.readouterr().out.splitlines() == ["a.py", "nb.ipynb", "sub/b.py"]
    assert main(["--show-files", "missing.py"]) == 2
    assert capsys.readouterr().err == "error: missing.py: no such file or directory\n"


def test_show_settings_says_which_tensorflow_the_project_pins_and_where(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".git").mkdir()  # the project's root: no pin file above it counts
    (tmp_path / "requirements.txt").write_text("tensorflow==1.15\nkeras==2.2.4\n")
    (tmp_path / "train.py").write_text("import tensorflow as tf\n")
    monkeypatch.chdir(tmp_path)
    assert main(["--show-settings", "train.py"]) == 0
    requirements = tmp_path / "requirements.txt"
    assert (
        "options.frameworks = "
        f'"TensorFlow 1: ==1.15 ({requirements}:1); Keras: keras 2; keras: ==2.2.4 '
        f'({requirements}:2)"'
    ) in capsys.readouterr().out.splitlines()
