"""One notion of a line everywhere: the tokenizer's (``\\n``, ``\\r\\n``, ``\\r``).

A form feed, a vertical tab, ``\\x1c``, U+0085 or U+2028 inside a line does not end it for
Python, but does for :meth:`str.splitlines`. Before, each place that split with ``splitlines``
(blanking of unneeded functions, ``noqa`` parsing, fix offsets, ``--diff``, the ``ast`` index's
columns) disagreed with the parsers, so a valid file became TFL001 at a wrong position, a
``noqa`` applied to the wrong line, and fixes and diffs were cut in the middle of a line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tflint_leaks.cli import main
from tflint_leaks.config import Settings
from tflint_leaks.engine.runner import lint_paths
from tflint_leaks.source import split_lines

#: Characters ``str.splitlines`` splits at and Python's tokenizer does not.
ODD = {
    "form-feed": "\x0c",
    "vertical-tab": "\x0b",
    "file-separator": "\x1c",
    "next-line": "\x85",
    "line-separator": "\u2028",
}

TEMPLATE = """\
import tensorflow as tf


def helper():
    \"\"\"Page one.{docstring}Page two.\"\"\"
    return 1  # comment{comment}in a function no rule looks at


class Steps:
    def first(self):
        return 1
{code}
    def second(self):
        return 2


@tf.function
def step(x, i):
    return x


for i in range(100):
    label = "a{string}b"  # and a comment{comment}in the loop
    step(tf.ones([1]), i)
"""
#: Where TEMPLATE's finding is: TFL101 on `i` in the last line.
FINDING = [("TFL101", 24, 24)]
Found = list[tuple[str, int, int, list[tuple[str, int, int, int, int]]]]


def _source(character: str, place: str) -> str:
    values = {"docstring": "", "comment": "", "code": "", "string": ""}
    values[place] = character if place != "code" else f"{character}\n"
    return TEMPLATE.format(**values)


def _cases() -> list[tuple[str, str]]:
    cases = [(name, place) for name in ODD for place in ("docstring", "comment", "string")]
    # Outside strings and comments, a form feed is the only one Python accepts (a page break).
    return [*cases, ("form-feed", "code")]


def _found(path: Path, *, prefilter: bool = True) -> list[tuple[str, int, int]]:
    return [(code, line, column) for code, line, column, _ in _related(path, prefilter)]


def _related(path: Path, prefilter: bool = True) -> Found:
    result = lint_paths([path], Settings(select=("ALL",)), prefilter=prefilter)
    return [
        (
            d.code,
            d.start.line,
            d.start.column,
            [
                (r.role.value, r.start.line, r.start.column, r.end.line, r.end.column)
                for r in d.related
            ],
        )
        for d in result.diagnostics
    ]


@pytest.mark.parametrize(("name", "place"), _cases(), ids=[f"{n}-{p}" for n, p in _cases()])
def test_a_valid_file_keeps_its_findings_and_positions(
    tmp_path: Path, name: str, place: str
) -> None:
    """Failed before for every character in a docstring or comment of ``helper`` (which no rule
    needs, so it is blanked): ``TFL001 invalid syntax`` at line 8, and the finding lost; and
    without the blanking, the ``tf.function`` it names ended at column 1 (the ``ast`` index
    measured columns on the wrong line). A string in the loop (parsed whole) passed before too;
    those cases guard it."""
    source = _source(ODD[name], place)
    compile(source, "t.py", "exec")  # valid Python
    path = tmp_path / "t.py"
    path.write_bytes(source.encode("utf-8"))
    shift = 1 if place == "code" else 0
    expected = [
        (
            "TFL101",
            24 + shift,
            24,
            [
                ("tf-function", 17 + shift, 1, 17 + shift, 13),
                ("loop", 22 + shift, 1, 22 + shift, 20),
            ],
        )
    ]
    assert _related(path) == expected
    assert _related(path, prefilter=False) == expected


@pytest.mark.parametrize("name", list(ODD))
def test_noqa_applies_to_its_own_line(tmp_path: Path, name: str) -> None:
    """Failed before: a noqa comment after such a character was counted on a later line, so it
    suppressed nothing (and one on an earlier line suppressed the finding)."""
    path = tmp_path / "t.py"
    source = _source(ODD[name], "comment")
    path.write_text(source.replace("), i)\n", "), i)  # noqa: TFL101\n"), encoding="utf-8")
    assert _found(path) == []
    shifted = source.replace('label = "ab"', 'label = "ab"  # noqa: TFL101')
    path.write_text(shifted, encoding="utf-8")
    # The finding stays, and the comment on the line before is unused.
    assert _found(path) == [("TFL003", 23, 19), *FINDING]


@pytest.mark.parametrize("name", list(ODD))
def test_fix_and_diff_keep_whole_lines(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Failed before: fix offsets and diff lines were counted with ``splitlines``, so the edit
    landed on the wrong line (the result did not parse and the fix was dropped) and the diff
    hunk was cut inside a line."""
    character = ODD[name]
    source = _source(character, "comment")
    path = tmp_path / "t.py"
    path.write_text(source, encoding="utf-8")
    assert main(["--diff", "--unsafe-fixes", "--no-cache", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.err == "Would fix 1 finding.\n"
    assert captured.out == (
        f"--- {path}\n+++ {path}\n@@ -21,4 +21,4 @@\n"
        " \n"
        " for i in range(100):\n"
        f'     label = "ab"  # and a comment{character}in the loop\n'
        "-    step(tf.ones([1]), i)\n"
        "+    step(tf.ones([1]), tf.constant(i))\n"
    )
    assert main(["--fix", "--unsafe-fixes", "--no-cache", str(path)]) == 0
    assert path.read_text(encoding="utf-8") == source.replace("), i)", "), tf.constant(i))")


def test_split_lines_is_the_tokenizers_notion() -> None:
    text = "a\x0cb\u2028c\x85d\x0be\x1cf\r\ng\rh\ni"
    assert split_lines(text) == ["a\x0cb\u2028c\x85d\x0be\x1cf", "g", "h", "i"]
    assert split_lines(text, keepends=True) == [
        "a\x0cb\u2028c\x85d\x0be\x1cf\r\n",
        "g\r",
        "h\n",
        "i",
    ]
    assert split_lines("a\n") == ["a", ""]
    assert split_lines("a\n", keepends=True) == ["a\n"]


#: A function whose block is indented with two spaces, then with a tab and two spaces: Python
#: reads the tab as eight columns (ten in all, a deeper block), libcst's tokenizer rejects it
#: ("no matching outer block for dedent", LibCST#829). ``{indent}`` is the inner indentation.
TAPE = """\
import tensorflow as tf


def train_step(model, x, y):
  if model is not None:
{indent}with tf.GradientTape(persistent=True) as tape:
{indent}    loss_a, loss_b = model(x)
{indent}grads_a = tape.gradient(loss_a, model.trainable_variables)
{indent}grads_b = tape.gradient(loss_b, model.trainable_variables)
{indent}optimizer.apply_gradients(zip(grads_a + grads_b, model.trainable_variables))
  return x
"""


@pytest.mark.parametrize(("indent", "column", "fixed"), [("\t  ", 9, False), (" " * 10, 16, True)])
def test_an_indentation_of_a_tab_then_spaces_is_read_as_python_reads_it(
    tmp_path: Path, indent: str, column: int, fixed: bool
) -> None:
    """The whole file was TFL001 at 1:1 and its findings lost (kamalkraj/ALBERT-TF2.0's
    ``run_classifer.py``). The finding keeps the file's own columns; its fix, code written
    for the expanded indentation, is not offered in such a file."""
    source = TAPE.format(indent=indent)
    compile(source, "t.py", "exec")  # valid Python
    path = tmp_path / "t.py"
    path.write_text(source, encoding="utf-8")
    (found,) = lint_paths([path], Settings(select=("ALL",))).diagnostics
    assert (found.code, found.start.line, found.start.column) == ("TFL201", 6, column)
    assert found.end.column == column + 32  # `tf.GradientTape(persistent=True)`
    assert (found.fix is not None) is fixed
