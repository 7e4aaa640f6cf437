"""The generated rule docs and README table are current, and every url points at a page."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tflint_leaks import DOCS_URL, docs
from tflint_leaks.registry import CODES, RULES

ROOT = Path(__file__).resolve().parent.parent


def test_generated_docs_are_current() -> None:
    assert docs.stale(ROOT) == [], "run `python -m tflint_leaks.docs` and commit the result"


def test_every_code_url_points_at_its_generated_page() -> None:
    for rule in CODES:
        assert rule.url == f"{DOCS_URL}/rules/{rule.code}.md"
        page = ROOT / "docs" / "rules" / f"{rule.code}.md"
        assert page.read_text(encoding="utf-8").startswith(docs.GENERATED)
    assert DOCS_URL.endswith("/blob/main/docs")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    shutil.copytree(ROOT / "docs" / "rules", tmp_path / "docs" / "rules")
    return tmp_path


def test_check_names_stale_missing_and_orphaned_files(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = RULES[0].code
    (repo / "docs" / "rules" / f"{first}.md").write_text("edited\n")
    (repo / "docs" / "rules" / f"{RULES[-1].code}.md").unlink()
    (repo / "docs" / "rules" / "TFL999.md").write_text("a removed rule\n")
    readme = repo / "README.md"
    readme.write_text(readme.read_text().replace("| Code |", "| code |"))
    assert docs.main(["--check", "--root", str(repo)]) == 1
    stale = {line.split()[1] for line in capsys.readouterr().out.splitlines()}
    assert stale == {
        str(repo / "docs" / "rules" / f"{first}.md"),
        str(repo / "docs" / "rules" / f"{RULES[-1].code}.md"),
        str(repo / "docs" / "rules" / "TFL999.md"),
        str(readme),
    }
    assert docs.main(["--root", str(repo)]) == 0
    assert docs.main(["--check", "--root", str(repo)]) == 0
    assert not (repo / "docs" / "rules" / "TFL999.md").exists()


def test_readme_table_lists_every_rule_between_the_markers() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start, end = docs.MARKERS
    table = text.split(start)[1].split(end)[0]
    for rule in RULES:
        assert f"| [{rule.code}](docs/rules/{rule.code}.md) | {rule.name} |" in table


def test_readme_without_markers_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# no table\n")
    with pytest.raises(ValueError, match="lacks the markers"):
        docs.expected(tmp_path)


def test_pages_say_whether_there_is_a_fix() -> None:
    for rule in RULES:
        page = docs.rule_page(rule)
        if rule.fix is None:
            assert "**Fix:** none; this rule has no automatic fix." in page
        else:
            assert f"**Fix:** {rule.fix.value}" in page
            assert "## Fix safety" in page
            assert "After the fix:" in page
