"""Fixes: every rule's fixed examples, one-pass application, re-parsing, atomic writes, --diff."""

from __future__ import annotations

import ast
import stat
from pathlib import Path

import pytest

from tflint_leaks.cli import main
from tflint_leaks.config import Settings
from tflint_leaks.diagnostics import Applicability, Diagnostic, Edit, Fix, Location, Severity
from tflint_leaks.engine import fixes
from tflint_leaks.engine.atomic import write_atomic
from tflint_leaks.engine.runner import lint_paths
from tflint_leaks.registry import RULES, Code
from tflint_leaks.rulekit.rule import Invalid, Valid

FIXED_CASES = [
    pytest.param(code, example, id=f"{code.code}-invalid-{number}")
    for code in RULES
    for number, example in enumerate(code.load().INVALID)
    if example.fixed is not None
]


def valid_source(code: str) -> str:
    return Valid(code).source


SCALAR = valid_source(
    """
    import tensorflow as tf

    @tf.function
    def step(x, i):
        return x

    @tf.function
    def encode(tokens):
        return tokens

    for i in range(100):
        step(tf.ones([1]), i)
        encode(tf.zeros([i]))
    """
)


def codes(path: Path) -> list[str]:
    return [d.code for d in lint_paths([path], Settings(select=("ALL",))).diagnostics]


def fix_flags(code: Code) -> list[str]:
    unsafe = code.fix is Applicability.UNSAFE
    return ["--fix", "--unsafe-fixes"] if unsafe else ["--fix"]


@pytest.mark.parametrize(("rule", "example"), FIXED_CASES)
def test_fixed_example(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rule: Code, example: Invalid
) -> None:
    assert example.fixed is not None
    path = tmp_path / "example.py"
    path.write_text(example.source, encoding="utf-8")
    main(["--select", "ALL", *fix_flags(rule), str(path)])
    fixed = path.read_text(encoding="utf-8")
    assert fixed == valid_source(example.fixed)
    ast.parse(fixed)
    assert rule.code not in codes(path)
    # Idempotent: a second run changes nothing.
    main(["--select", "ALL", *fix_flags(rule), str(path)])
    assert path.read_text(encoding="utf-8") == fixed
    capsys.readouterr()


def test_an_array_changed_in_place_is_not_made_a_constant(tmp_path: Path) -> None:
    # `tf.constant(np.load(...))` would break `np.random.shuffle(X_train)`: no fix offered.
    path = tmp_path / "train.py"
    path.write_text(
        valid_source(
            """
            import numpy as np
            import tensorflow as tf

            X_train = np.load("windows.npy")

            @tf.function
            def train_on_batch(ids):
                return model(tf.gather(X_train, ids))

            for ids in batches:
                X_train[ids] *= 0.5
                train_on_batch(ids)
            """
        ),
        encoding="utf-8",
    )
    found = lint_paths([path], Settings(select=("TFL501",))).diagnostics
    assert [(d.code, d.start.line, d.start.column, d.fix) for d in found] == [
        ("TFL501", 8, 28, None)
    ]
    path.write_text(path.read_text().replace("X_train[ids] *= 0.5", "print(ids)"))
    found = lint_paths([path], Settings(select=("TFL501",))).diagnostics
    assert [(d.code, d.start.line, d.start.column, d.fix is None) for d in found] == [
        ("TFL501", 8, 28, False)
    ]


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.code)
def test_a_rule_with_a_fix_has_a_fixed_example(rule: Code) -> None:
    with_fixed = [example for example in rule.load().INVALID if example.fixed is not None]
    assert bool(with_fixed) == (rule.fix is not None)


def test_safe_fixes_only_without_unsafe_fixes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "train.py"
    path.write_text(SCALAR, encoding="utf-8")
    assert main(["--fix", str(path)]) == 1
    captured = capsys.readouterr()
    assert path.read_text() == SCALAR.replace(
        "@tf.function\ndef encode", "@tf.function(reduce_retracing=True)\ndef encode"
    )
    assert captured.err == "Fixed 1 finding.\n1 more can be fixed with `--fix --unsafe-fixes`.\n"
    assert captured.out.splitlines()[0].endswith(
        "TFL101 Python number `i` changes every iteration; each value retraces `step`"
    )
    assert main(["--fix", "--unsafe-fixes", str(path)]) == 0
    assert "step(tf.ones([1]), tf.constant(i))" in path.read_text()
    assert codes(path) == []


def test_diff_prints_and_does_not_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "train.py"
    path.write_text(SCALAR, encoding="utf-8")
    assert main(["--diff", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == (
        f"--- {path}\n+++ {path}\n@@ -4,7 +4,7 @@\n"
        " def step(x, i):\n     return x\n \n"
        "-@tf.function\n+@tf.function(reduce_retracing=True)\n"
        " def encode(tokens):\n     return tokens\n \n"
    )
    assert captured.err == "Would fix 1 finding.\n"
    assert path.read_text() == SCALAR
    main(["--fix", str(path)])
    capsys.readouterr()
    assert main(["--diff", str(path)]) == 0
    assert capsys.readouterr().out == ""


def finding(line: int, column: int, end: int, content: str, code: str = "TFL101") -> Diagnostic:
    start, stop = Location(line, column), Location(line, end)
    fix = Fix("fix", Applicability.SAFE, (Edit(start, stop, content),))
    return Diagnostic(code, "name", "message", Severity.WARNING, "f.py", start, stop, fix)


def test_overlapping_fixes_are_left_for_the_next_round() -> None:
    text = "x = f(a, b)\n"
    first, second = finding(1, 5, 12, "g(a, b)"), finding(1, 7, 8, "c")
    fixed, applied, skipped = fixes.fix_text(text, [second, first])
    assert fixed == "x = g(a, b)\n"
    assert applied == [first]
    assert skipped == [(second, fixes.OVERLAPS)]


def test_identical_edits_are_made_once() -> None:
    text = "@tf.function\ndef f(x):\n    return x\n"
    one, two = (
        finding(1, 2, 13, "tf.function(reduce_retracing=True)"),
        finding(1, 2, 13, "tf.function(reduce_retracing=True)", "TFL105"),
    )
    fixed, applied, skipped = fixes.fix_text(text, [one, two])
    assert fixed == "@tf.function(reduce_retracing=True)\ndef f(x):\n    return x\n"
    assert (applied, skipped) == ([one, two], [])


def test_a_fix_that_breaks_the_code_is_dropped_and_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = "x = f(a)\ny = g(b)\n"
    good, bad = finding(1, 7, 8, "c"), finding(2, 7, 8, "b,,")
    fixed, applied, skipped = fixes.fix_text(text, [good, bad])
    assert fixed == "x = f(c)\ny = g(b)\n"
    assert applied == [good]
    assert skipped == [(bad, fixes.DOES_NOT_PARSE)]


def test_write_keeps_permissions_line_endings_and_bom(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    source = SCALAR.replace("\n", "\r\n")
    path.write_bytes(b"\xef\xbb\xbf" + source.encode())
    path.chmod(0o750)
    assert main(["--fix", str(path)]) == 1
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbfimport tensorflow as tf\r\n")
    assert b"@tf.function(reduce_retracing=True)\r\ndef encode" in data
    assert data.count(b"\r\n") == source.count("\r\n")
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert stat.S_IMODE(path.stat().st_mode) == 0o750
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.py"]


def test_latin1_file_keeps_its_encoding(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    source = "# -*- coding: latin-1 -*-\n# caf\xe9\n" + SCALAR
    path.write_bytes(source.encode("latin-1"))
    main(["--fix", str(path)])
    assert path.read_bytes().decode("latin-1").startswith("# -*- coding: latin-1 -*-\n# caf\xe9")


def test_a_failed_write_leaves_the_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "train.py"
    path.write_text(SCALAR, encoding="utf-8")

    def refuse(self: Path, target: Path) -> Path:
        raise OSError("disk full")

    monkeypatch.setattr(Path, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        write_atomic(path, "changed\n")
    assert path.read_text() == SCALAR
    assert [p.name for p in tmp_path.iterdir()] == ["train.py"]


def test_a_symlink_is_fixed_through(tmp_path: Path) -> None:
    target = tmp_path / "real.py"
    target.write_text(SCALAR, encoding="utf-8")
    link = tmp_path / "link.py"
    link.symlink_to(target)
    write_atomic(link, "changed\n")
    assert link.is_symlink()
    assert target.read_text() == "changed\n"


def test_inserted_statements_keep_the_indentation_and_line_endings(tmp_path: Path) -> None:
    """TFL201's and TFL401's fixes insert a statement at the indentation of the statement they
    follow or precede: tabs and CRLF line endings are kept."""
    path = tmp_path / "search.py"
    source = (
        "import tensorflow as tf\r\n"
        "def step(x):\r\n"
        "\twith tf.GradientTape(persistent=True) as tape:\r\n"
        "\t\ty = x * x\r\n"
        "\tdy = tape.gradient(y, x)\r\n"
        "\tx.assign_sub(dy)\r\n"
        "for units in widths:\r\n"
        "\tif units:\r\n"
        "\t\tmodel = tf.keras.Sequential([])\r\n"
    )
    path.write_bytes(source.encode())
    assert main(["--fix", "--unsafe-fixes", "--no-cache", str(path)]) == 0
    assert path.read_bytes().decode() == (
        source.replace(
            "\tdy = tape.gradient(y, x)\r\n", "\tdy = tape.gradient(y, x)\r\n\tdel tape\r\n"
        ).replace("\tif units:", "\ttf.keras.backend.clear_session()\r\n\tif units:")
    )


def test_add_noqa_suppresses_every_finding_and_merges(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "train.py"
    source = SCALAR.replace("encode(tf.zeros([i]))", "encode(tf.zeros([i]))  # noqa: E501")
    path.write_bytes(source.replace("\n", "\r\n").encode())
    assert main(["--add-noqa", str(path)]) == 0
    assert capsys.readouterr().err == "Added a noqa comment for 2 findings.\n"
    assert path.read_bytes().decode() == (
        source.replace("step(tf.ones([1]), i)", "step(tf.ones([1]), i)  # noqa: TFL101")
        .replace("# noqa: E501", "# noqa: E501, TFL105")
        .replace("\n", "\r\n")
    )
    assert main([str(path)]) == 0
    before = path.read_bytes()
    assert main(["--add-noqa", str(path)]) == 0
    assert path.read_bytes() == before


def _tfl101_fix(tmp_path: Path, body: str, call: str) -> Fix | None:
    source = valid_source(
        f"""
        import tensorflow as tf

        @tf.function
        def step(x, i):
            {body}

        for i in range(100):
            {call}
        """
    )
    path = tmp_path / "example.py"
    path.write_text(source, encoding="utf-8")
    (finding,) = lint_paths([path], Settings(select=("TFL101",))).diagnostics
    return finding.fix


@pytest.mark.parametrize(
    ("body", "call", "content"),
    [
        # The dtype of `x` is shown at the call: tf.ones is float32.
        ("return x * i", "step(tf.ones([2]), i)", "tf.constant(i, tf.float32)"),
        ("return x + i", "step(tf.zeros([2], dtype=tf.int64), i)", "tf.constant(i, tf.int64)"),
        ("return tf.maximum(x, i)", "step(tf.constant([1.5]), i)", "tf.constant(i, tf.float32)"),
        # Shown in the body: a float literal, a cast.
        ("return x if i < 0.5 else -x", "step(batch, i)", "tf.constant(i, tf.float32)"),
        ("return i * tf.cast(x, tf.float64)", "step(batch, i)", "tf.constant(i, tf.float64)"),
        # Only int literals and calls: any dtype does, tf.constant's own is kept.
        ("return tf.ones([i % 4 + 1]) * x", "step(batch, i)", "tf.constant(i)"),
        ("return x", "step(batch, i)", "tf.constant(i)"),
    ],
)
def test_tfl101_fix_keeps_the_dtype_the_value_is_used_with(
    tmp_path: Path, body: str, call: str, content: str
) -> None:
    """Failed before: every fix was `tf.constant(i)` (int32), which `x * i` with a float32 `x`
    rejects with TypeError."""
    fix = _tfl101_fix(tmp_path, body, call)
    assert fix is not None
    assert [edit.content for edit in fix.edits] == [content]


@pytest.mark.parametrize(
    ("body", "call"),
    [
        # `batch`'s dtype is not shown anywhere.
        ("return x * i", "step(batch, i)"),
        # Two dtypes: no single tensor does.
        ("return tf.cast(x, tf.float16) * i + tf.cast(x, tf.float64) * i", "step(batch, i)"),
        # A local whose dtype is not shown.
        ("y = x[0]\n    return y * i", "step(tf.ones([2]), i)"),
    ],
)
def test_tfl101_has_no_fix_where_the_dtype_is_not_shown(
    tmp_path: Path, body: str, call: str
) -> None:
    assert _tfl101_fix(tmp_path, body, call) is None
