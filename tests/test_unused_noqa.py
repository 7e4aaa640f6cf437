"""``TFL003 unused-noqa``: a ``noqa`` code that suppresses nothing is reported, and ``--fix``
removes it. Only codes of rules that ran on the file are judged (not selected, ignored and
``per-file-ignores`` codes are left alone, as are bare ``# noqa`` and whole-file exemptions).
Every test here failed before: stale ``noqa`` comments were never reported."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import nbformat
import pytest

from tflint_leaks.cli import main

HEADER = "import tensorflow as tf\n\n@tf.function\ndef step(x, i):\n    return x\n\n"
LEAK = "    step(tf.ones([1]), i)"
CLEAN = "    step(tf.ones([1]), tf.constant(i))"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], list[str]]:
    code = main(["--no-cache", *argv])
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err.splitlines()


def write(tmp_path: Path, *loop: str, header: str = HEADER) -> Path:
    path = tmp_path / "train.py"
    path.write_text(header + "for i in range(100):\n" + "".join(f"{line}\n" for line in loop))
    return path


@pytest.mark.parametrize(
    ("comment", "column", "end", "after"),
    [
        ("  # noqa: TFL101", 41, 55, ""),
        ("  # noqa: E501, TFL101", 41, 61, "  # noqa: E501"),
        ("  # noqa: tfl101, e501", 41, 61, "  # noqa: e501"),
        ("  # type: ignore  # noqa: TFL101", 57, 71, "  # type: ignore"),
        ("  # noqa: TFL101  # counted by hand", 41, 55, "  # counted by hand"),
    ],
)
def test_an_unused_line_code_is_reported_and_fixed(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    comment: str,
    column: int,
    end: int,
    after: str,
) -> None:
    path = write(tmp_path, CLEAN + comment, LEAK + "  # noqa: TFL101")
    code, out, err = run(capsys, "--output-format", "json", str(path))
    assert (code, err) == (1, [])
    (finding,) = json.loads(out and "\n".join(out))
    assert finding["code"] == "TFL003"
    assert finding["name"] == "unused-noqa"
    assert finding["location"] == {"row": 8, "column": column}
    assert finding["end_location"] == {"row": 8, "column": end}
    assert finding["fix"]["applicability"] == "safe"
    assert finding["message"] == "unused `noqa`: no `TFL101` finding on this line"
    assert run(capsys, "--fix", str(path))[0] == 0
    assert path.read_text() == HEADER + (
        f"for i in range(100):\n{CLEAN}{after}\n{LEAK}  # noqa: TFL101\n"
    )


def test_a_directive_alone_on_its_line_goes_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path, "    # noqa: TFL101", CLEAN, header=f"# tflint-leaks: noqa: TFL105\n{HEADER}"
    )
    code, out, _ = run(capsys, str(path))
    assert (code, out) == (
        1,
        [
            f"{path}:1:1: TFL003 [*] unused `noqa`: no `TFL105` finding in this file",
            f"{path}:9:5: TFL003 [*] unused `noqa`: no `TFL101` finding on this line",
            "Found 2 warnings.",
            "[*] 2 fixable with the `--fix` option.",
        ],
    )
    assert run(capsys, "--fix", str(path))[:2] == (0, ["All checks passed!"])
    assert path.read_text() == f"{HEADER}for i in range(100):\n{CLEAN}\n"


def test_codes_of_rules_that_did_not_run_are_not_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A `--select TFL1` run cannot tell whether `# noqa: TFL401` is needed; a `per-file-ignores`
    code is turned off for the file; an unknown code keeps its own warning; bare and whole-file
    exemptions are shared with other tools or are a decision about the file."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.tflint-leaks]\nper-file-ignores = {"train.py" = ["TFL105"]}\n'
    )
    path = write(
        tmp_path,
        CLEAN + "  # noqa: TFL401",
        CLEAN + "  # noqa: TFL105",
        CLEAN + "  # noqa: TFL999",
        CLEAN + "  # noqa",
        header=f"# tflint-leaks: noqa: TFL304\n{HEADER}",
    )
    code, out, err = run(capsys, "--select", "TFL1,TFL003", str(path))
    assert (code, out) == (0, ["All checks passed!"])
    assert err == [f"warning: {path}:11: unknown rule code `TFL999` in a noqa comment"]
    # With every rule selected, TFL401 and TFL304 ran: their codes are judged.
    code, out, _ = run(capsys, "--select", "ALL", str(path))
    assert out == [
        f"{path}:1:1: TFL003 [*] unused `noqa`: no `TFL304` finding in this file",
        f"{path}:9:41: TFL003 [*] unused `noqa`: no `TFL401` finding on this line",
        "Found 2 warnings.",
        "[*] 2 fixable with the `--fix` option.",
    ]


def test_tfl003_is_selected_ignored_and_suppressed_like_a_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, CLEAN + "  # noqa: TFL101", CLEAN + "  # noqa: TFL101, TFL003")
    finding = f"{path}:8:41: TFL003 [*] unused `noqa`: no `TFL101` finding on this line"
    assert run(capsys, str(path))[1][0] == finding
    assert run(capsys, str(path))[1][1] == "Found 1 warning."
    assert run(capsys, "--ignore", "TFL003", str(path))[:2] == (0, ["All checks passed!"])
    assert run(capsys, "--select", "TFL101", str(path))[:2] == (0, ["All checks passed!"])
    # Selected alone, TFL003 judges nothing: no rule ran.
    assert run(capsys, "--select", "TFL0", str(path))[:2] == (0, ["All checks passed!"])
    assert run(capsys, "--select", "TFL0,TFL101", str(path))[1][0] == finding


def test_a_whole_file_exemption_is_not_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, CLEAN, header=f"# tflint-leaks: noqa\n{HEADER}")
    assert run(capsys, "--select", "ALL", str(path))[:2] == (0, ["All checks passed!"])


def test_a_finding_under_a_line_and_a_file_directive_uses_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Removing either alone keeps the finding suppressed; removing both would bring it back:
    neither is reported."""
    path = write(
        tmp_path, LEAK + "  # noqa: TFL101", header=f"# tflint-leaks: noqa: TFL101\n{HEADER}"
    )
    assert run(capsys, str(path))[:2] == (0, ["All checks passed!"])


def test_add_noqa_never_writes_tfl003(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, CLEAN + "  # noqa: TFL101", LEAK)
    code, _, err = run(capsys, "--add-noqa", str(path))
    assert (code, err) == (0, ["Added a noqa comment for 1 finding."])
    assert path.read_text() == HEADER + (
        f"for i in range(100):\n{CLEAN}  # noqa: TFL101\n{LEAK}  # noqa: TFL101\n"
    )
    # The stale one is still reported; --fix removes it.
    assert run(capsys, str(path))[1][-2:] == [
        "Found 1 warning.",
        "[*] 1 fixable with the `--fix` option.",
    ]


def test_the_cache_sees_a_finding_go_away_in_an_imported_module(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The noqa in train.py is used while lib.py makes `step` a tf.function; once it does not,
    the cached result of train.py (whose text did not change) must not be reused."""
    lib = tmp_path / "lib.py"
    lib.write_text(HEADER)
    train = tmp_path / "train.py"
    train.write_text(
        "import tensorflow as tf\nfrom lib import step\n\n"
        "for i in range(100):\n    step(tf.ones([1]), i)  # noqa: TFL101\n"
    )
    cache = ["--cache-dir", str(tmp_path / "cache")]
    assert main([*cache, str(tmp_path)]) == 0
    lib.write_text(HEADER.replace("@tf.function\n", ""))
    assert main([*cache, str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == [
        "All checks passed!",
        f"{train}:5:28: TFL003 [*] unused `noqa`: no `TFL101` finding on this line",
    ]


def test_an_unused_code_in_a_notebook_cell(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = nbformat.v4.new_notebook()
    document.metadata["language_info"] = {"name": "python"}
    document.cells = [
        nbformat.v4.new_code_cell(HEADER),
        nbformat.v4.new_code_cell(
            textwrap.dedent(f"%matplotlib inline\nfor i in range(100):\n{CLEAN}  # noqa: TFL101\n")
        ),
    ]
    path = tmp_path / "train.ipynb"
    nbformat.write(document, str(path))
    code, out, _ = run(capsys, str(path))
    assert (code, out[0]) == (
        1,
        f"{path}:cell 2:3:41: TFL003 [*] unused `noqa`: no `TFL101` finding on this line",
    )
    assert run(capsys, "--fix", str(path))[0] == 0
    fixed = nbformat.read(str(path), as_version=4)
    assert fixed.cells[1].source == f"%matplotlib inline\nfor i in range(100):\n{CLEAN}\n"
