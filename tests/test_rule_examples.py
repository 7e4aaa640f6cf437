"""Every rule's VALID and INVALID examples, run as tests (exact code, line and column)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tflint_leaks.config import Settings
from tflint_leaks.engine.runner import lint_paths
from tflint_leaks.rules import ALL_RULES, Invalid, Rule
from tflint_leaks.rules.base import valid_source

MIN_INVALID, MIN_VALID = 4, 6


def _lint(tmp_path: Path, source: str) -> list[tuple[str, int, int]]:
    path = tmp_path / "example.py"
    path.write_text(source, encoding="utf-8")
    result = lint_paths([path], Settings(select=("ALL",)))
    assert not result.errors
    return [(d.code, d.start.line, d.start.column) for d in result.diagnostics]


INVALID_CASES = [
    pytest.param(rule, example, id=f"{rule.code}-invalid-{number}")
    for rule in ALL_RULES
    for number, example in enumerate(rule.INVALID)
]
VALID_CASES = [
    pytest.param(rule, example, id=f"{rule.code}-valid-{number}")
    for rule in ALL_RULES
    for number, example in enumerate(rule.VALID)
]


@pytest.mark.parametrize(("rule", "example"), INVALID_CASES)
def test_invalid_example_is_reported_exactly(
    tmp_path: Path, rule: type[Rule], example: Invalid
) -> None:
    findings = _lint(tmp_path, example.source)
    assert findings == [(rule.code, example.line, example.column)]


@pytest.mark.parametrize(("rule", "example"), VALID_CASES)
def test_valid_example_is_clean(tmp_path: Path, rule: type[Rule], example: str) -> None:
    assert _lint(tmp_path, valid_source(example)) == []


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda rule: rule.code)
def test_rule_has_enough_examples(rule: type[Rule]) -> None:
    assert len(rule.INVALID) >= MIN_INVALID
    assert len(rule.VALID) >= MIN_VALID


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda rule: rule.code)
def test_rule_docs_have_every_section(rule: type[Rule]) -> None:
    docs = rule.docs()
    for section in (
        "## What it does",
        "## Why is this bad?",
        "## Example",
        "## Use instead",
        "## References",
    ):
        assert section in docs
    if rule.fix_applicability is not None:
        assert "## Fix safety" in docs


def test_codes_and_names_are_unique_and_well_formed() -> None:
    codes = [rule.code for rule in ALL_RULES]
    names = [rule.name for rule in ALL_RULES]
    assert len(set(codes)) == len(codes)
    assert len(set(names)) == len(names)
    assert codes == sorted(codes)
    for rule in ALL_RULES:
        assert rule.code[:3] == "TFL" and rule.code[3:].isdigit()
        assert rule.name == rule.name.lower() and " " not in rule.name
