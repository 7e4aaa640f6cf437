"""The bad-input table: every odd file a linter meets in CI, one row each.

Each row puts one bad input next to ``good.py`` (a file with one known finding) and asserts the
exact output lines (stdout and stderr), the documented exit code, and that ``good.py`` was still
linted. Configuration rows are the exception: a broken ``pyproject.toml`` stops the run before
any file is read (exit 2, nothing on stdout), as in Ruff.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tflint_leaks.cli import main
from tflint_leaks.registry import BY_CODE

GOOD = """\
import tensorflow as tf

@tf.function
def step(x, i):
    return x + i

for i in range(100):
    step(tf.ones([1]), i)
"""
GOOD_FINDING = (
    "good.py:8:24: TFL101 Python number `i` changes every iteration; each value retraces `step`"
)
TFL101 = "TFL101 Python number `i` changes every iteration; each value retraces `step`"
TFL103 = (
    "TFL103 `tf.function(...)` inside a loop makes a new function every iteration; "
    "each one traces again"
)


def found(errors: int, warnings: int) -> str:
    """The text summary: engine codes (TFL001, TFL002) are errors, the rules' warnings."""
    counts = [(errors, "error"), (warnings, "warning")]
    said = [f"{n} {noun}{'' if n == 1 else 's'}" for n, noun in counts if n]
    return f"Found {' and '.join(said)}."


@dataclass(frozen=True)
class Row:
    """One bad input: ``setup`` writes it into the project directory and returns extra
    command-line arguments; the run is ``tflint-leaks . ARGS`` from that directory."""

    id: str
    setup: Callable[[Path], list[str]]
    out: list[str]
    err: list[str]
    code: int


def write(name: str, data: bytes | str) -> Callable[[Path], list[str]]:
    def setup(root: Path) -> list[str]:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, str):
            path.write_text(data, encoding="utf-8")
        else:
            path.write_bytes(data)
        return []

    return setup


def symlink(name: str, target: str) -> Callable[[Path], list[str]]:
    def setup(root: Path) -> list[str]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).symlink_to(target)
        return []

    return setup


def generated_5mb() -> str:
    """A generated module (a ``_pb2.py``-like table of serialized blobs) of over 5 MB, with a
    finding in the middle."""
    rows = [f"BLOB_{i} = b'{'%02x' % (i % 256) * 500}'\n" for i in range(5_200)]
    middle = len(rows) // 2
    rows[middle:middle] = [
        "for i in range(100):\n",
        "    step(tf.ones([1]), i)\n",
    ]
    return GOOD + "".join(rows)


def deep_loop(operator: str, terms: int) -> str:
    """A ``tf.function`` called in a loop next to one long flat expression (so the libcst pass
    does look at it)."""
    chain = operator.join(["step(x, i)"] * terms)
    return GOOD.replace("    step(tf.ones([1]), i)", f"    y = {chain}")


GENERATED_FINDING_LINE = len(GOOD.splitlines()) + 2_600 + 2
LONG = "a" * 1_000_000
LATIN1 = (
    "# -*- coding: latin-1 -*-\nimport tensorflow as tf\n\n@tf.function\ndef step(x, i):\n"
    '    return x + i\n\nfor i in range(100):\n    step(tf.constant("\xe9t\xe9"), i)\n'
).encode("latin-1")
NOT_NBFORMAT_4 = {
    "nbformat": 3,
    "nbformat_minor": 0,
    "worksheets": [{"cells": [{"cell_type": "code", "input": "import tensorflow as tf"}]}],
}

ROWS = [
    Row(
        "syntax-error",
        write("bad.py", "import tensorflow as tf\n\ndef f(:\n    pass\n"),
        ["bad.py:3:7: TFL001 invalid syntax", GOOD_FINDING, found(1, 1)],
        [],
        1,
    ),
    Row(
        # Decoded as declared: the finding after the accented string is at its character column.
        "pep263-latin-1-declared",
        write("latin.py", LATIN1),
        [GOOD_FINDING, f"latin.py:9:30: {TFL101}", found(0, 2)],
        [],
        1,
    ),
    Row(
        "latin-1-undeclared",
        write("bad.py", b"import tensorflow as tf\nname = '\xe9t\xe9'\n"),
        [
            "bad.py:2:1: TFL001 not valid utf-8: byte 0xe9 cannot be decoded "
            "(declare the encoding with a `# -*- coding: ... -*-` line)",
            GOOD_FINDING,
            found(1, 1),
        ],
        [],
        1,
    ),
    Row(
        # Failed before: an undeclared Latin-1 byte on the first two lines (where a
        # declaration would be) was reported as an "invalid encoding declaration".
        "latin-1-undeclared-first-line",
        write("bad.py", b"name = '\xe9t\xe9'\nimport tensorflow as tf\n"),
        [
            "bad.py:1:1: TFL001 not valid utf-8: byte 0xe9 cannot be decoded "
            "(declare the encoding with a `# -*- coding: ... -*-` line)",
            GOOD_FINDING,
            found(1, 1),
        ],
        [],
        1,
    ),
    Row(
        "unknown-encoding-declared",
        write("bad.py", b"# -*- coding: klingon -*-\nx = 1\n"),
        [
            "bad.py:1:1: TFL001 invalid encoding declaration: unknown encoding: klingon",
            GOOD_FINDING,
            found(1, 1),
        ],
        [],
        1,
    ),
    Row(
        # The BOM is not a column: `tf` on line 1 is at column 27, as without the BOM.
        "utf-8-bom",
        write(
            "bom.py",
            b"\xef\xbb\xbfimport tensorflow as tf; [tf.function(lambda x: x) for i in range(9)]\n",
        ),
        [f"bom.py:1:27: {TFL103}", GOOD_FINDING, found(0, 2)],
        [],
        1,
    ),
    Row(
        "nul-byte",
        write("bad.py", b"import tensorflow as tf\nx = 1\0\n"),
        ["bad.py:2:6: TFL001 source contains a NUL byte", GOOD_FINDING, found(1, 1)],
        [],
        1,
    ),
    Row("empty-file", write("empty.py", b""), [GOOD_FINDING, found(0, 1)], [], 1),
    Row(
        "generated-5mb",
        write("generated_pb2.py", generated_5mb()),
        [
            f"generated_pb2.py:8:24: {TFL101}",
            f"generated_pb2.py:{GENERATED_FINDING_LINE}:24: {TFL101}",
            GOOD_FINDING,
            found(0, 3),
        ],
        [],
        1,
    ),
    Row(
        "10000-nested-brackets",
        write("bad.py", "x = " + "[" * 10_000 + "]" * 10_000 + "\n"),
        [
            "bad.py:1:205: TFL001 invalid syntax: too many nested parentheses",
            GOOD_FINDING,
            found(1, 1),
        ],
        [],
        1,
    ),
    Row(
        "1000-nested-parentheses",
        write("bad.py", "x = " + "(" * 1_000 + "1" + ")" * 1_000 + "\n"),
        [
            "bad.py:1:205: TFL001 invalid syntax: too many nested parentheses",
            GOOD_FINDING,
            found(1, 1),
        ],
        [],
        1,
    ),
    Row(
        # 100,000 terms: Python's own parser runs out of recursion building the tree.
        "100000-term-sum",
        write("bad.py", "import tensorflow as tf\nx = " + " + ".join(["1"] * 100_000) + "\n"),
        ["bad.py:1:1: TFL001 too deeply nested to parse", GOOD_FINDING, found(1, 1)],
        [],
        1,
    ),
    Row(
        # Deeper than the limit: refused before libcst, whose parse time grows with the square
        # of the nesting (and whose native parser overflows the C stack a few levels further).
        "2000-term-sum",
        write("deep.py", deep_loop(" + ", 2_000)),
        [
            "deep.py:1:1: TFL001 too deeply nested to parse (2003 levels; the limit is 1000)",
            GOOD_FINDING,
            found(1, 1),
        ],
        [],
        1,
    ),
    Row(
        # 900 levels: past Python's default recursion limit, linted on the engine's deep stack
        # (the finding in the loop around the chain is still reported).
        "900-term-sum",
        write(
            "deep.py",
            GOOD.replace(
                "step(tf.ones([1]), i)", "step(tf.ones([1]), i + " + " + ".join(["1"] * 900) + ")"
            ),
        ),
        [
            "deep.py:8:24: TFL101 Python number `i` changes every iteration; "
            "each value retraces `step`",
            GOOD_FINDING,
            found(0, 2),
        ],
        [],
        1,
    ),
    Row(
        # A 1 MB line: the finding after it on the same line has its exact column.
        "1mb-line",
        write(
            "long.py",
            GOOD.replace("    step(tf.ones([1]), i)", f"    s = '{LONG}'; step(tf.ones([1]), i)"),
        ),
        [GOOD_FINDING, f"long.py:8:{len(LONG) + 32}: {TFL101}", found(0, 2)],
        [],
        1,
    ),
    Row(
        "python-2",
        write("bad.py", 'import tensorflow as tf\nprint "x"\n'),
        [
            "bad.py:2:1: TFL001 invalid syntax: Missing parentheses in call to 'print'. "
            "Did you mean print(...)?",
            GOOD_FINDING,
            found(1, 1),
        ],
        [],
        1,
    ),
    Row(
        "notebook-not-json",
        write("nb.ipynb", "{not json"),
        [
            GOOD_FINDING,
            "nb.ipynb:1:1: TFL001 not a valid notebook: Expecting property name enclosed in "
            "double quotes at line 1",
            found(1, 1),
        ],
        [],
        1,
    ),
    Row(
        "notebook-nbformat-3",
        write("nb.ipynb", json.dumps(NOT_NBFORMAT_4)),
        [
            GOOD_FINDING,
            "nb.ipynb:1:1: TFL001 not a valid notebook: nbformat 3 is not supported "
            "(save it as nbformat 4)",
            found(1, 1),
        ],
        [],
        1,
    ),
    Row(
        "notebook-without-cells",
        write("nb.ipynb", json.dumps({"nbformat": 4, "metadata": {}})),
        [GOOD_FINDING, "nb.ipynb:1:1: TFL001 not a valid notebook: no `cells` list", found(1, 1)],
        [],
        1,
    ),
    Row(
        "directory-symlink-loop",
        symlink("sub/loop", ".."),
        [GOOD_FINDING, found(0, 1)],
        ["warning: sub/loop: skipped, a symlink loop leads back here"],
        1,
    ),
    Row(
        # A read error that root gets too: the name is listed, its target is gone.
        "unreadable-file-dangling-symlink",
        symlink("gone.py", "missing.py"),
        [
            "gone.py:1:1: TFL001 cannot read file: No such file or directory",
            GOOD_FINDING,
            found(1, 1),
        ],
        [],
        1,
    ),
    Row(
        "path-does-not-exist",
        lambda root: ["missing.py"],
        [GOOD_FINDING, found(0, 1)],
        ["error: missing.py: no such file or directory"],
        2,
    ),
    Row(
        "pyproject-invalid-toml",
        write("pyproject.toml", "[tool.tflint-leaks\nselect = ['TFL1']\n"),
        [],
        [
            "error: {root}/pyproject.toml: invalid TOML: Expected ']' at the end of a table "
            "declaration (at line 1, column 19)"
        ],
        2,
    ),
    Row(
        "pyproject-wrong-type",
        write("pyproject.toml", "[tool.tflint-leaks]\nselect = 'TFL1'\n"),
        [],
        ["error: {root}/pyproject.toml: `tool.tflint-leaks.select` must be a list of strings"],
        2,
    ),
    Row(
        "pyproject-wrong-type-number",
        write("pyproject.toml", "[tool.tflint-leaks]\nmax-python-values = '5'\n"),
        [],
        [
            "error: {root}/pyproject.toml: `tool.tflint-leaks.max-python-values` must be a "
            "non-negative integer"
        ],
        2,
    ),
    Row(
        # Failed before: AttributeError traceback, exit 1.
        "pyproject-tool-is-a-number",
        write("pyproject.toml", "tool = 5\n"),
        [],
        ["error: {root}/pyproject.toml: `tool` must be a table"],
        2,
    ),
    Row(
        # Failed before: AttributeError traceback, exit 1.
        "pyproject-tool-is-a-string",
        write("pyproject.toml", 'tool = "x"\n'),
        [],
        ["error: {root}/pyproject.toml: `tool` must be a table"],
        2,
    ),
    Row(
        "pyproject-not-utf8",
        write("pyproject.toml", b"[tool.tflint-leaks]\n# caf\xe9\n"),
        [],
        ["error: {root}/pyproject.toml: invalid TOML: not UTF-8"],
        2,
    ),
    Row(
        # Failed before: the finding was reported three times.
        "one-file-three-spellings",
        lambda root: ["good.py", "./good.py", str(root / "good.py")],
        [GOOD_FINDING, found(0, 1)],
        [],
        1,
    ),
    Row(
        "noqa-unknown-code",
        write("noqa.py", "x = 1  # noqa: TFL999\n"),
        [GOOD_FINDING, found(0, 1)],
        ["warning: noqa.py:1: unknown rule code `TFL999` in a noqa comment"],
        1,
    ),
]

if sys.version_info < (3, 12):
    ROWS.append(
        Row(
            # PEP 695 needs Python 3.12: `ast` of the running Python rejects it.
            "syntax-newer-than-python",
            write("new.py", "import tensorflow as tf\ntype X = int\ndef f[T](x: T) -> T:\n"),
            [GOOD_FINDING, "new.py:2:6: TFL001 invalid syntax", found(1, 1)],
            [],
            1,
        )
    )


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "good.py").write_text(GOOD)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], list[str]]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err.splitlines()


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_bad_input(row: Row, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    extra = row.setup(project)
    code, out, err = run(capsys, ".", *extra)
    assert (out, err, code) == (
        row.out,
        [line.format(root=project) for line in row.err],
        row.code,
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a chmod 000 file; see the symlink row")
def test_unreadable_file_permission_denied(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = project / "secret.py"
    secret.write_text("x = 1\n")
    secret.chmod(0)
    try:
        code, out, err = run(capsys, ".")
    finally:
        secret.chmod(0o644)
    assert (out, err, code) == (
        [GOOD_FINDING, "secret.py:1:1: TFL001 cannot read file: Permission denied", found(1, 1)],
        [],
        1,
    )


def test_long_boolean_chain_does_not_kill_the_process(project: Path) -> None:
    # `ast` keeps `x and x and ...` flat; libcst nests it, one level per operand.
    (project / "chain.py").write_text(deep_loop(" and ", 20_000))
    run_ = subprocess.run(
        [sys.executable, "-m", "tflint_leaks", "."],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=540,  # a hang guard, below pytest-timeout's 600 s
        check=False,
    )
    # Refused before the parse (TFL001, exit 1) or parsed and found too deep to walk (TFL002,
    # exit 2): either way one line for the file, and the process lives to report good.py.
    out = run_.stdout.splitlines()
    assert run_.returncode in {1, 2}, run_.stderr[-2000:]
    assert out[1:] == [GOOD_FINDING, found(1, 1)]
    assert re.fullmatch(
        r"chain\.py:1:1: TFL001 too deeply nested to parse \(200\d\d levels; the limit is 1000\)",
        out[0],
    )


def failing_hook(self: object, node: object) -> None:
    raise RuntimeError("boom")


def test_internal_error_in_one_rule(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """TFL101 fails on every file: each becomes a TFL002 naming the rule and the file, exit 2;
    TFL103 still reports; ``--show-traceback`` prints where it failed."""
    rule = BY_CODE["TFL101"].load()
    hook = next(name for name in dir(rule) if name.startswith("visit_"))
    monkeypatch.setattr(rule, hook, failing_hook)
    write("other.py", "import tensorflow as tf\nfor i in range(9): tf.function(lambda x: x)(i)\n")(
        project
    )
    failed = "TFL002 rule TFL101 (python-scalar-argument) failed on this file: RuntimeError: boom"
    expected = [f"good.py:1:1: {failed}", f"other.py:1:1: {failed}", f"other.py:2:20: {TFL103}"]
    code, out, err = run(capsys, ".")
    assert (out, err, code) == ([*expected, found(2, 1)], [], 2)

    code, out, err = run(capsys, "--show-traceback", ".")
    assert (out, code) == ([*expected, found(2, 1)], 2)
    assert err[0] == "good.py: TFL101"
    assert err[1] == "Traceback (most recent call last):"
    assert err.count("RuntimeError: boom") == 2
    assert any(f"in {failing_hook.__name__}" in line for line in err)


def test_cache_dir_that_cannot_be_written(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A regular file above the cache directory: it cannot be created, even by root (for whom
    # a read-only directory is writable).
    (project / "blocker").write_text("not a directory\n")
    code, out, err = run(capsys, "--cache-dir", "blocker/cache", ".")
    assert (out, code) == ([GOOD_FINDING, found(0, 1)], 1)
    # Every warning is about the cache, and one says why nothing is cached.
    assert all(line.startswith("warning: cache blocker/cache") for line in err)
    assert any("cannot be written" in line for line in err)


def test_corrupt_cache_is_reported_and_ignored(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, ".")[:2] == (1, [GOOD_FINDING, found(0, 1)])
    cache = project / ".tflint-leaks-cache"
    entries = [path for path in cache.rglob("*") if path.is_file()]
    assert entries
    for path in entries:
        path.write_bytes(b"\x00garbage\xff" * 7)
    code, out, err = run(capsys, ".")
    assert (out, code) == ([GOOD_FINDING, found(0, 1)], 1)
    assert len(err) == 1
    assert err[0].startswith("warning: ")
    assert "cache" in err[0]
