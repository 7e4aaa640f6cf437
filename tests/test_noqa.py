"""``# noqa`` per finding: only comments count, and ``--add-noqa`` (and the editor's quick fix)
puts each comment on the line that can take it -- after the string or the backslash-continued
statement the finding starts in -- in Python files and notebooks alike."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from tflint_leaks.cli import main
from tflint_leaks.config import Settings
from tflint_leaks.engine.runner import lint_paths

HEADER = "import tensorflow as tf\n\n@tf.function\ndef step(x, i, note=''):\n    return x\n\n"
MESSAGE = "TFL101 Python number `i` changes every iteration; each value retraces `step`"


def _codes(path: Path) -> list[tuple[str, int]]:
    return [(d.code, d.start.line) for d in lint_paths([path], Settings()).diagnostics]


def _add_noqa(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["--add-noqa", "--no-cache", str(path)])
    return code, capsys.readouterr().err


def test_a_finding_on_a_backslash_line_is_suppressed_after_the_statement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Failed before: one finding on a backslash line made ``--add-noqa`` refuse every finding
    of the file ("a comment on this line would break the code")."""
    path = tmp_path / "train.py"
    source = HEADER + (
        "for i in range(100):\n"
        "    y = step(tf.ones([1]), i) \\\n"
        "        + 1\n"
        "    step(tf.ones([2]), i)\n"
    )
    path.write_text(source)
    assert _codes(path) == [("TFL101", 8), ("TFL101", 10)]
    assert _add_noqa(path, capsys) == (0, "Added a noqa comment for 2 findings.\n")
    assert path.read_text() == source.replace("+ 1\n", "+ 1  # noqa: TFL101\n").replace(
        "([2]), i)\n", "([2]), i)  # noqa: TFL101\n"
    )
    assert _codes(path) == []


def test_the_comment_never_goes_inside_a_string(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Failed before: ``# noqa: TFL101`` was written after the opening ``\"\"\"``, inside the
    string (changing the program), and then counted as a suppression."""
    path = tmp_path / "train.py"
    source = HEADER + 'for i in range(100):\n    step(tf.ones([1]), i, """\n    a note""")\n'
    path.write_text(source)
    assert _codes(path) == [("TFL101", 8)]
    assert _add_noqa(path, capsys) == (0, "Added a noqa comment for 1 finding.\n")
    assert path.read_text() == source.replace('a note""")\n', 'a note""")  # noqa: TFL101\n')
    assert _codes(path) == []


def test_noqa_inside_a_string_suppresses_nothing(tmp_path: Path) -> None:
    """Failed before: the text ``# noqa`` in a string on the finding's line suppressed it."""
    path = tmp_path / "train.py"
    path.write_text(HEADER + 'for i in range(100):\n    step(tf.ones([1]), i, "# noqa")\n')
    assert _codes(path) == [("TFL101", 8)]


def test_a_noqa_comment_merges_and_a_bare_one_covers_everything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "train.py"
    source = HEADER + (
        "for i in range(100):\n"
        "    step(tf.ones([1]), i)  # explained  # noqa: E501\n"
        "    step(tf.ones([2]), i)  # noqa\n"
    )
    path.write_text(source)
    assert _add_noqa(path, capsys) == (0, "Added a noqa comment for 1 finding.\n")
    assert path.read_text() == source.replace("# noqa: E501", "# noqa: E501, TFL101")


def test_add_noqa_edits_notebooks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Failed before: notebooks were skipped ("--add-noqa does not edit notebooks"). The
    comment goes in the cell (here after a shell escape and in a dedented cell), and nothing
    else in the file changes."""
    document = nbformat.v4.new_notebook()
    document.cells = [
        nbformat.v4.new_code_cell(HEADER),
        nbformat.v4.new_code_cell("!nvidia-smi\nfor i in range(9):\n    step(tf.ones([1]), i)"),
        nbformat.v4.new_code_cell("  for i in range(9):\n      step(tf.ones([1]), i)\n"),
    ]
    path = tmp_path / "train.ipynb"
    nbformat.write(document, str(path))
    before = path.read_text(encoding="utf-8")
    assert main(["--no-cache", str(path)]) == 1
    capsys.readouterr()
    assert _add_noqa(path, capsys) == (0, "Added a noqa comment for 2 findings.\n")
    after = path.read_text(encoding="utf-8")
    assert after == before.replace(
        '"    step(tf.ones([1]), i)"', '"    step(tf.ones([1]), i)  # noqa: TFL101"'
    ).replace(
        '"      step(tf.ones([1]), i)\\n"', '"      step(tf.ones([1]), i)  # noqa: TFL101\\n"'
    )
    assert json.loads(after)["cells"][0] == json.loads(before)["cells"][0]
    assert main(["--no-cache", str(path)]) == 0


@pytest.mark.parametrize("flag", ["--fix", "--diff"])
def test_add_noqa_refuses_flags_it_cannot_honour(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    """Failed before: ``--add-noqa --diff`` wrote the file, ``--add-noqa --fix`` ignored
    ``--fix``."""
    path = tmp_path / "train.py"
    source = HEADER + "for i in range(100):\n    step(tf.ones([1]), i)\n"
    path.write_text(source)
    assert main(["--add-noqa", flag, str(path)]) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == (
        "",
        "error: --add-noqa cannot be combined with --fix or --diff\n",
    )
    assert path.read_text() == source


@pytest.mark.parametrize(
    ("comment", "left"),
    [
        ("# noqa: E501", [("TFL101", 8)]),
        ("# noqa: E501,W291", [("TFL101", 8)]),
        ("# noqa", []),
        ("# NOQA", []),
        ("# noqa: E501, tfl101", []),
        ("# noqa:TFL101", []),
        # TFL102 suppresses nothing there: TFL003 says so
        ("# noqa: TFL102", [("TFL101", 8), ("TFL003", 9)]),
    ],
)
def test_only_blanket_or_tfl_noqa_comments_suppress(
    tmp_path: Path, comment: str, left: list[tuple[str, int]]
) -> None:
    """Other tools' codes leave the finding (such files are not even tokenized); a blanket
    ``noqa`` or one naming the code suppresses it, on a line that takes the comment of the
    string the finding starts in."""
    path = tmp_path / "train.py"
    path.write_text(
        HEADER + f'for i in range(100):\n    step(tf.ones([1]), i, """\n    a note""")  {comment}\n'
    )
    assert _codes(path) == left


@pytest.mark.parametrize(("comment", "left"), [("# noqa: E501", [("TFL101", 8)]), ("# noqa", [])])
@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_noqa_lines_end_where_the_tokenizer_ends_them(
    tmp_path: Path, comment: str, left: list[tuple[str, int]], newline: str
) -> None:
    path = tmp_path / "train.py"
    source = HEADER + f"for i in range(100):\n    step(tf.ones([1]), i)  {comment}\nx = 1\n"
    path.write_bytes(source.replace("\n", newline).encode())
    assert _codes(path) == left
