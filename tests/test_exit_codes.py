"""Honest exit codes and well-formed output: 0 clean, 1 findings, 2 for any failure of the tool
itself (one line on stderr, never a traceback), in every command and format; the user's files
change only under ``--fix``/``--add-noqa``, and a file that cannot be written is left alone
with a warning."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from xml.dom import minidom

import jsonschema
import pytest

from tflint_leaks.cli import OUTPUT_FORMATS, main
from tflint_leaks.diagnostics import Diagnostic, Location, Severity
from tflint_leaks.reporters import junit

ROOT = Path(__file__).resolve().parent.parent
SARIF_SCHEMA = json.loads((ROOT / "tests/data/sarif-schema-2.1.0.json").read_text())
FIXABLE = (
    "import tensorflow as tf\n\n@tf.function\ndef encode(tokens):\n    return tokens\n\n"
    "x = tf.ones([100])\nfor n in range(1, 100):\n    encode(x[:n])\n"
)


def _parsed(output_format: str, out: bytes) -> object:
    """The output read back by a strict reader of its format."""
    if output_format in {"json", "sarif"}:
        data = json.loads(out)
        if output_format == "sarif":
            jsonschema.validate(data, SARIF_SCHEMA)
        return data
    if output_format == "json-lines":
        return [json.loads(line) for line in out.splitlines()]
    if output_format == "junit":
        return minidom.parseString(out)
    return out.decode("utf-8", "surrogateescape")


@pytest.mark.parametrize("output_format", OUTPUT_FORMATS)
def test_a_file_name_that_is_not_utf8_in_every_format(tmp_path: Path, output_format: str) -> None:
    """Failed before: SARIF raised ``UnicodeEncodeError`` (a traceback, exit 1, no report) and
    JUnit was not well-formed XML."""
    (tmp_path / os.fsdecode(b"caf\xe9.py")).write_text(FIXABLE)
    run = subprocess.run(
        [sys.executable, "-m", "tflint_leaks", "--no-cache", "--output-format", output_format, "."],
        cwd=tmp_path,
        capture_output=True,
        check=False,
    )
    assert (run.returncode, run.stderr) == (1, b"")
    output = _parsed(output_format, run.stdout)
    if output_format == "sarif":
        assert isinstance(output, dict)
        (result,) = output["runs"][0]["results"]
        uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert uri == "caf%E9.py"
    if output_format == "junit":
        assert isinstance(output, minidom.Document)
        (suite,) = output.getElementsByTagName("testsuite")
        assert suite.getAttribute("name") == "caf\\xe9.py"


def test_junit_is_well_formed_with_control_characters_in_a_message() -> None:
    """Failed before: a form feed in a message made the XML not well-formed."""
    start = Location(1, 1)
    diagnostic = Diagnostic(
        "TFL001", "syntax-error", "bad \x0c and \x00 here", Severity.ERROR, "a.py", start, start
    )
    document = minidom.parseString(junit.render([diagnostic]))
    (failure,) = document.getElementsByTagName("failure")
    assert failure.getAttribute("message") == "bad \\x0c and \\x00 here"


def test_fix_leaves_a_read_only_file_alone_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Failed before: ``--fix`` replaced a ``chmod 444`` file (as root, or in a writable
    directory), taking away nothing but the user's intent."""
    path = tmp_path / "encode.py"
    path.write_text(FIXABLE)
    path.chmod(0o444)
    assert main(["--fix", "--no-cache", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.err.splitlines()[0] == f"warning: {path}: left unchanged: the file is read-only"
    assert "TFL105" in captured.out
    assert path.read_text() == FIXABLE
    assert stat.S_IMODE(path.stat().st_mode) == 0o444
    assert main(["--add-noqa", "--no-cache", str(path)]) == 0
    assert capsys.readouterr().err.splitlines() == [
        f"warning: {path}: left unchanged: the file is read-only",
        "Added a noqa comment for 0 findings.",
    ]
    assert path.read_text() == FIXABLE


@contextlib.contextmanager
def _read_only_directory(directory: Path) -> Iterator[None]:
    """``directory`` made read-only for whoever runs the tests: ``chmod 555``, or for root
    (who writes anyway) the immutable attribute; skipped where neither holds."""
    if os.geteuid() != 0:
        directory.chmod(0o555)
        try:
            yield
        finally:
            directory.chmod(0o755)
        return
    made = subprocess.run(["chattr", "+i", str(directory)], capture_output=True, check=False)
    if made.returncode != 0:
        pytest.skip("root cannot make a directory read-only here (chattr +i failed)")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(directory)], check=True)


def test_fix_in_a_read_only_directory_warns_and_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Failed before: a ``PermissionError`` traceback from the temporary file, exit 1."""
    directory = tmp_path / "locked"
    directory.mkdir()
    path = directory / "encode.py"
    path.write_text(FIXABLE)
    with _read_only_directory(directory):
        code = main(["--fix", "--no-cache", str(path)])
    captured = capsys.readouterr()
    assert code == 1
    warning, *rest = captured.err.splitlines()
    assert warning.startswith(f"warning: {path}: left unchanged: ")
    assert rest == ["Fixed 0 findings."]
    assert path.read_text() == FIXABLE
    assert [p.name for p in directory.iterdir()] == ["encode.py"]


@pytest.mark.parametrize("output_format", OUTPUT_FORMATS)
def test_an_internal_error_is_one_line_and_exit_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    output_format: str,
) -> None:
    """Failed before: an unexpected exception was a traceback (exit 1, read as "findings")."""
    from tflint_leaks.engine import runner

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(runner, "lint_paths", broken)
    (tmp_path / "a.py").write_text("x = 1\n")
    assert main(["--output-format", output_format, str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", "error: internal error: RuntimeError: boom\n")


def test_an_internal_error_in_another_command(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tflint_leaks import registry

    def broken(code: str) -> None:
        raise KeyError(code)

    monkeypatch.setattr(registry, "find", broken)
    assert main(["rule", "TFL101"]) == 2
    assert capsys.readouterr().err == "error: internal error: KeyError: 'TFL101'\n"
