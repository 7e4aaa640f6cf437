"""The fixtures are their own truth table: each expectation comment must be reported exactly,
nothing else may be, and files under ``fixtures/clean`` must stay clean."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.expectations import actual_findings, expected_findings

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
FILES = sorted(FIXTURES.rglob("*.py"))


@pytest.fixture(scope="module")
def findings() -> dict[str, set[tuple[str, int, int]]]:
    return actual_findings([FIXTURES])


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_matches_its_expectations(
    path: Path, findings: dict[str, set[tuple[str, int, int]]]
) -> None:
    assert findings.get(str(path), set()) == expected_findings(path)


def test_clean_fixtures_have_no_expectations() -> None:
    for path in (FIXTURES / "clean").rglob("*.py"):
        assert expected_findings(path) == set(), path


def test_every_shipped_rule_appears_in_a_fixture() -> None:
    from tflint_leaks.registry import RULES

    expected_codes = {code for path in FILES for code, _, _ in expected_findings(path)}
    missing = {rule.code for rule in RULES if rule.default_enabled} - expected_codes
    assert not missing
