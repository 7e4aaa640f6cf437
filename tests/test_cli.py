"""The command line: exit codes, outputs, configuration errors, suppressions."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import jsonschema
import pytest

from tflint_leaks.cli import main

RETRACING = textwrap.dedent(
    """\
    import tensorflow as tf

    @tf.function
    def step(x, i):
        return x + i

    for i in range(100):
        step(tf.ones([1]), i)
    """
)
SCHEMA = json.loads(
    (Path(__file__).parent.parent / "tflint_leaks" / "schemas" / "output.schema.json").read_text()
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "train.py").write_text(RETRACING)
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_findings_exit_1_with_concise_text(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, str(project))
    assert code == 1
    assert out.splitlines() == [
        f"{project / 'train.py'}:8:24: TFL101 Python number `i` changes every iteration; "
        "each value retraces `step`",
        "Found 1 warning.",
    ]


def test_check_is_the_default_command(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "check", str(project))[1] == run(capsys, str(project))[1]


def test_exit_zero_and_clean(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "--exit-zero", str(project))[0] == 0
    (project / "train.py").write_text("import tensorflow as tf\n")
    code, out, _ = run(capsys, str(project))
    assert (code, out) == (0, "All checks passed!\n")


def test_json_output_matches_the_schema(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--output-format", "json", str(project))
    assert code == 1
    data = json.loads(out)
    jsonschema.validate(data, SCHEMA)
    (finding,) = data
    assert finding["code"] == "TFL101"
    assert finding["name"] == "python-scalar-argument"
    assert finding["location"] == {"row": 8, "column": 24}
    assert finding["end_location"] == {"row": 8, "column": 25}
    assert finding["url"].endswith("/docs/rules/TFL101.md")
    assert finding["confirmation"] is None
    assert finding["fix"]["applicability"] == "unsafe"
    assert finding["fix"]["edits"] == [
        {
            # `x + i` with a float32 `x` (tf.ones): the tensor must be float32 too
            "content": "tf.constant(i, tf.float32)",
            "location": {"row": 8, "column": 24},
            "end_location": {"row": 8, "column": 25},
        }
    ]
    assert [(r["role"], r["location"]["row"]) for r in finding["related"]] == [
        ("tf-function", 3),
        ("loop", 7),
    ]


def test_select_and_ignore_take_codes_and_prefixes(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "--select", "TFL105", str(project))[0] == 0
    assert run(capsys, "--select", "TFL1", "--ignore", "TFL101", str(project))[0] == 0
    assert run(capsys, "--select", "ALL", str(project))[0] == 1
    assert run(capsys, "--ignore", "tfl10", str(project))[0] == 0


def test_unknown_code_on_the_command_line_exits_2(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "--select", "TFL999", str(project))
    assert (code, out) == (2, "")
    assert err == "error: unknown rule selector `TFL999` on the command line\n"


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("selekt = ['TFL101']", "unknown key `tool.tflint-leaks.selekt`"),
        ("select = 'TFL101'", "`tool.tflint-leaks.select` must be a list of strings"),
        ("ignore = ['TFL777']", "unknown rule selector `TFL777` in `tool.tflint-leaks.ignore`"),
        (
            "max-python-values = 'five'",
            "`tool.tflint-leaks.max-python-values` must be a non-negative integer",
        ),
        (
            "max-loop-iterations = -1",
            "`tool.tflint-leaks.max-loop-iterations` must be a non-negative integer",
        ),
        ("per-file-ignores = ['x']", "`tool.tflint-leaks.per-file-ignores` must be a table"),
    ],
)
def test_bad_config_names_key_and_file(
    project: Path, capsys: pytest.CaptureFixture[str], table: str, message: str
) -> None:
    config = project / "pyproject.toml"
    config.write_text(f"[tool.tflint-leaks]\n{table}\n")
    code, out, err = run(capsys, str(project))
    assert (code, out) == (2, "")
    assert err.startswith(f"error: {config.resolve()}: {message}")
    assert "Traceback" not in err


def test_invalid_toml_exits_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pyproject.toml").write_text("[tool.tflint-leaks\nselect = [")
    code, _, err = run(capsys, str(project))
    assert code == 2
    assert "invalid TOML" in err


def test_config_is_discovered_and_the_command_line_wins(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "pyproject.toml").write_text('[tool.tflint-leaks]\nignore = ["TFL101"]\n')
    assert run(capsys, str(project / "train.py"))[0] == 0
    assert run(capsys, "--extend-select", "TFL101", str(project))[0] == 0  # ignore still applies
    assert run(capsys, "--select", "TFL101", str(project))[0] == 0
    (project / "pyproject.toml").write_text('[tool.tflint-leaks]\nselect = ["TFL105"]\n')
    assert run(capsys, "--select", "TFL101", str(project))[0] == 1


def test_per_file_ignores(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.tflint-leaks.per-file-ignores]\n"train.py" = ["TFL1"]\n'
    )
    assert run(capsys, str(project))[0] == 0


def test_max_python_values_option(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pyproject.toml").write_text("[tool.tflint-leaks]\nmax-python-values = 100\n")
    assert run(capsys, str(project))[0] == 0


def test_max_loop_iterations_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Twenty predicts are a finding by default (more than 10), not with a limit of 20."""
    (tmp_path / "serve.py").write_text(
        "import tensorflow as tf\n"
        "model = tf.keras.models.load_model('m.keras')\n"
        "for i in range(20):\n"
        "    model.predict(x)\n"
    )
    code, out, _ = run(capsys, "--no-cache", str(tmp_path))
    assert code == 1 and "every iteration (20 in all)" in out
    (tmp_path / "pyproject.toml").write_text("[tool.tflint-leaks]\nmax-loop-iterations = 20\n")
    assert run(capsys, "--no-cache", str(tmp_path))[:2] == (0, "All checks passed!\n")


@pytest.mark.parametrize(
    ("comment", "exit_code", "without_tfl003"),
    [
        ("  # noqa: TFL101", 0, 0),
        ("  # noqa", 0, 0),
        ("  # NOQA:TFL101,TFL105", 1, 0),  # TFL105 suppresses nothing: TFL003
        ("  # noqa: TFL102", 1, 1),
        ("  # noqa: E501", 1, 1),
    ],
)
def test_line_noqa(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    comment: str,
    exit_code: int,
    without_tfl003: int,
) -> None:
    (project / "train.py").write_text(
        RETRACING.replace("step(tf.ones([1]), i)", "step(tf.ones([1]), i)" + comment)
    )
    assert run(capsys, str(project))[0] == exit_code
    assert run(capsys, "--ignore", "TFL003", str(project))[0] == without_tfl003


@pytest.mark.parametrize(
    ("header", "exit_code"),
    [
        ("# tflint-leaks: noqa\n", 0),
        ("# tflint-leaks: noqa: TFL101\n", 0),
        ("# tflint-leaks: noqa: TFL105\n", 1),
    ],
)
def test_file_noqa(
    project: Path, capsys: pytest.CaptureFixture[str], header: str, exit_code: int
) -> None:
    (project / "train.py").write_text(header + RETRACING)
    assert run(capsys, str(project))[0] == exit_code


def test_unknown_code_in_noqa_is_a_warning(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "train.py").write_text(RETRACING.replace("i)\n", "i)  # noqa: TFL101, TFL199\n"))
    code, _, err = run(capsys, str(project))
    assert code == 0
    assert (
        err == f"warning: {project / 'train.py'}:8: unknown rule code `TFL199` in a noqa comment\n"
    )


def test_unparsable_file_is_reported_and_the_run_goes_on(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "broken.py").write_text("import tensorflow as tf\ndef f(:\n    pass\n")
    code, out, _ = run(capsys, str(project))
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == f"{project / 'broken.py'}:2:7: TFL001 invalid syntax"
    assert lines[1].startswith(f"{project / 'train.py'}:8:24: TFL101 ")


def test_directory_without_python_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("nothing here")
    code, out, err = run(capsys, str(tmp_path))
    assert (code, out) == (0, "All checks passed!\n")
    assert err == "warning: no Python files found under the given paths\n"


def test_missing_path_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Failed before: "All checks passed!" was printed above the error."""
    assert run(capsys, str(tmp_path / "nope.py")) == (
        2,
        "",
        f"error: {tmp_path / 'nope.py'}: no such file or directory\n",
    )


def test_excludes_and_force_exclude(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)  # as pre-commit runs hooks from the repository root
    venv = project / ".venv"
    venv.mkdir()
    (venv / "lib.py").write_text(RETRACING)
    (project / "train.py").unlink()
    assert run(capsys, str(project))[0] == 0
    assert run(capsys, str(venv / "lib.py"))[0] == 1  # explicit files are always linted ...
    assert run(capsys, "--force-exclude", str(venv / "lib.py"))[0] == 0  # ... unless forced
    (project / "gen").mkdir()
    (project / "gen" / "model.py").write_text(RETRACING)
    assert run(capsys, str(project))[0] == 1
    assert run(capsys, "--extend-exclude", "gen", str(project))[0] == 0


def test_statistics(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--statistics", str(project))
    assert code == 1
    assert out == "    1\tTFL101\tpython-scalar-argument\n"


def test_rule_docs_and_rule_list(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "rule", "TFL101")
    assert code == 0
    assert out.startswith("# python-scalar-argument (TFL101)\n\n## What it does\n")
    assert run(capsys, "rule", "python-scalar-argument")[1] == out
    code, _, err = run(capsys, "rule", "TFL999")
    assert (code, err) == (2, "error: unknown code `TFL999`; `tflint-leaks rules` lists them\n")
    code, out, _ = run(capsys, "rules", "--output-format", "json")
    entries = {entry["code"]: entry for entry in json.loads(out)}
    assert code == 0
    assert entries["TFL101"]["fix"] == "unsafe" and entries["TFL101"]["kind"] == "rule"
    assert (entries["TFL001"]["kind"], entries["TFL900"]["kind"]) == ("engine", "runtime")
    code, out, _ = run(capsys, "rules")
    assert code == 0
    assert out.splitlines()[0] == "TFL001  syntax-error" + " " * 23 + (
        "The file cannot be read or parsed as Python; it is skipped (engine)"
    )


@pytest.mark.parametrize(
    ("code", "heading"),
    [
        ("TFL001", "# syntax-error (TFL001)"),
        ("tfl002", "# internal-error (TFL002)"),
        ("runtime-retracing", "# runtime-retracing (TFL900)"),
    ],
)
def test_rule_documents_engine_and_runtime_codes(
    capsys: pytest.CaptureFixture[str], code: str, heading: str
) -> None:
    """Every code the tool emits has docs, not only the rules (failed before: "unknown rule")."""
    exit_code, out, _ = run(capsys, "rule", code)
    assert exit_code == 0
    assert out.splitlines()[:3] == [heading, "", "## What it does"]


def test_usage_error_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "--output-format", "xml", ".")[0] == 2


def test_a_run_without_tensorflow_code_loads_neither_libcst_nor_rules(tmp_path: Path) -> None:
    """Start-up for a pre-commit hook: a file no rule can fire in is read with ``ast`` only,
    so libcst, the rule modules and the whole-program facts are never imported."""
    (tmp_path / "util.py").write_text(
        "import os\n\ndef f(x):\n    for i in range(3):\n        print(os.path.join(x, str(i)))\n"
    )
    script = (
        "import sys; from tflint_leaks.cli import main; code = main(['--no-cache', sys.argv[1]]);"
        "print(sorted(m for m in sys.modules if m == 'libcst' or m.startswith("
        "('tflint_leaks.rules.', 'tflint_leaks.analysis.program', 'tflint_leaks.engine.walker'))));"
        "sys.exit(code)"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "util.py")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (completed.returncode, completed.stdout.splitlines()[-1]) == (0, "[]"), completed.stderr


def test_module_entry_point_and_no_tensorflow_import(project: Path) -> None:
    script = (
        "import sys; from tflint_leaks.cli import main; code = main([sys.argv[1]]);"
        "assert 'tensorflow' not in sys.modules, 'static path imported TensorFlow';"
        "sys.exit(code)"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script, str(project)], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 1, completed.stderr
    version = subprocess.run(
        [sys.executable, "-m", "tflint_leaks", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert version.stdout.startswith("tflint-leaks, version ")
