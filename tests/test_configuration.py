"""Configuration per file, as Ruff does it: each file uses the nearest ``pyproject.toml`` with a
``[tool.tflint-leaks]`` table, whatever the order of the paths given, in CI and in the editor;
``exclude`` and ``per-file-ignores`` take gitignore-style globs."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from tflint_leaks.cli import main
from tflint_leaks.config import Configuration, glob_to_regex
from tflint_leaks.engine.discovery import discover, skipped
from tflint_leaks.engine.runner import lint_paths, lint_source

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
FINDING = "TFL101 Python number `i` changes every iteration; each value retraces `step`"


@pytest.fixture
def monorepo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository whose sub-project ``sub`` ignores TFL101 and excludes its ``generated``
    directory; ``src`` uses the root's settings."""
    (tmp_path / "pyproject.toml").write_text('[tool.tflint-leaks]\nextend-exclude = ["build"]\n')
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pyproject.toml").write_text(
        '[project]\nname = "sub"\n\n[tool.tflint-leaks]\nignore = ["TFL101"]\n'
        'extend-exclude = ["generated/"]\n'
    )
    (tmp_path / "sub" / "generated").mkdir()
    (tmp_path / "src").mkdir()
    for path in ("sub/a.py", "sub/generated/g.py", "src/b.py"):
        (tmp_path / path).write_text(RETRACING)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _out(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    code = main(["--no-cache", *argv])
    return code, capsys.readouterr().out.splitlines()


def test_the_order_of_the_paths_does_not_matter(
    monorepo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Failed before: the settings of the first path applied to every file, so ``sub/a.py
    src/b.py`` found nothing (sub ignores TFL101) and ``src/b.py sub/a.py`` found two."""
    expected = (1, [f"src/b.py:8:24: {FINDING}", "Found 1 warning."])
    assert _out(capsys, "sub/a.py", "src/b.py") == expected
    assert _out(capsys, "src/b.py", "sub/a.py") == expected
    assert _out(capsys, ".") == expected


def test_the_editor_and_the_command_line_agree(
    monorepo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the server lints a document with (its settings and whether it is skipped) is what
    the command line uses for that file."""
    configuration = Configuration()
    linted = {str(path) for path in discover([Path()], configuration).files}
    assert linted == {"sub/a.py", "src/b.py"}
    for name in ("sub/a.py", "src/b.py", "sub/generated/g.py"):
        path = monorepo / name
        assert skipped(path, configuration) == (name not in linted)
        from_editor = lint_source(RETRACING, path, configuration.for_path(path)).diagnostics
        from_cli = lint_paths([path], configuration).diagnostics
        assert [(d.code, d.start) for d in from_editor] == [(d.code, d.start) for d in from_cli]


@pytest.mark.parametrize(
    ("pattern", "ignored"),
    [
        ("tests/**/*.py", True),
        ("./tests/*", True),
        ("tests/", True),
        ("/tests", True),
        ("tests/*.py", True),
        ("test_*.py", True),
        ("*/test_x.py", True),
        ("*/*/test_x.py", False),  # `*` is one directory level
        ("test?x.py", True),
        ("src/tests/*", False),
    ],
)
def test_per_file_ignores_take_gitignore_globs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], pattern: str, ignored: bool
) -> None:
    """Failed before for ``tests/**/*.py`` and ``./tests/*`` (``fnmatch`` needed a directory
    for ``**/`` and matched nothing against ``./``)."""
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.tflint-leaks.per-file-ignores]\n"{pattern}" = ["TFL1"]\n'
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(RETRACING)
    code, out = _out(capsys, str(tmp_path))
    assert code == (0 if ignored else 1), out


def test_excludes_take_the_same_globs(monorepo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (monorepo / "src" / "tests" / "unit").mkdir(parents=True)
    (monorepo / "src" / "tests" / "unit" / "test_y.py").write_text(RETRACING)
    assert _out(capsys, ".", "--extend-exclude", "src/**/test_*.py")[1] == [
        f"src/b.py:8:24: {FINDING}",
        "Found 1 warning.",
    ]


def test_glob_translation() -> None:
    def matches(pattern: str, path: str) -> bool:
        return re.fullmatch(glob_to_regex(pattern), path) is not None

    assert matches("*_pb2.py", "proto/a_pb2.py")
    assert not matches("gen/*", "src/gen/a.py")  # a pattern with `/` starts at the root
    assert matches("src/gen/*", "src/gen/deeper/a.py")  # what a directory match covers
    assert matches("a/**", "a/b/c.py")
    assert matches("[!x]b.py", "ab.py")
    assert not matches("[!a]b.py", "ab.py")


def test_a_symlink_to_a_directory_of_the_tree_is_linted_at_its_own_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pkmital/tensorflow_tutorials: ``notebooks/libs`` links to ``python/libs``. Its files are
    linted once, under their own paths, and nothing is said (it is no loop); a link to a
    directory outside the tree walked is followed."""
    for name in ("python/libs/a.py", "elsewhere/b.py"):
        (tmp_path / name).parent.mkdir(parents=True)
        (tmp_path / name).write_text("x = 1\n", encoding="utf-8")
    for link, target in (("notebooks/libs", "../python/libs"), ("tree/outside", "../elsewhere")):
        (tmp_path / link).parent.mkdir()
        (tmp_path / link).symlink_to(target)
    monkeypatch.chdir(tmp_path)
    whole = discover([Path()], Configuration())
    assert ([str(path) for path in whole.files], whole.warnings) == (
        ["elsewhere/b.py", "python/libs/a.py"],
        [],
    )
    tree = discover([Path("tree")], Configuration())
    assert ([str(path) for path in tree.files], tree.warnings) == (["tree/outside/b.py"], [])
