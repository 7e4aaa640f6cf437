"""Every rule's VALID and INVALID examples, run as tests: the exact code, start and end position
and message of the one finding, with every rule selected."""

from __future__ import annotations

from pathlib import Path

import pytest

from tflint_leaks.config import Settings
from tflint_leaks.docs import REQUIRED_SECTIONS, sections
from tflint_leaks.engine.runner import lint_paths
from tflint_leaks.registry import CODES, RULES, Code
from tflint_leaks.rulekit.rule import Invalid, Valid

MIN_INVALID, MIN_VALID = 4, 6


def _lint(tmp_path: Path, source: str) -> list[tuple[str, int, int, int, int, str]]:
    path = tmp_path / "example.py"
    path.write_text(source, encoding="utf-8")
    result = lint_paths([path], Settings(select=("ALL",)))
    assert not result.errors
    return [
        (d.code, d.start.line, d.start.column, d.end.line, d.end.column, d.message)
        for d in result.diagnostics
    ]


INVALID_CASES = [
    pytest.param(code, example, id=f"{code.code}-invalid-{number}")
    for code in RULES
    for number, example in enumerate(code.load().INVALID)
]
VALID_CASES = [
    pytest.param(code, example, id=f"{code.code}-valid-{number}")
    for code in RULES
    for number, example in enumerate(code.load().VALID)
]


@pytest.mark.parametrize(("code", "example"), INVALID_CASES)
def test_invalid_example_is_reported_exactly(tmp_path: Path, code: Code, example: Invalid) -> None:
    expected = (
        code.code,
        example.line,
        example.column,
        example.end_line,
        example.end_column,
        example.message,
    )
    assert _lint(tmp_path, example.source) == [expected]


@pytest.mark.parametrize(("code", "example"), VALID_CASES)
def test_valid_example_is_clean(tmp_path: Path, code: Code, example: Valid) -> None:
    assert _lint(tmp_path, example.source) == []


@pytest.mark.parametrize("code", RULES, ids=lambda code: code.code)
def test_rule_has_enough_examples(code: Code) -> None:
    rule = code.load()
    assert len(rule.INVALID) >= MIN_INVALID
    assert len(rule.VALID) >= MIN_VALID


@pytest.mark.parametrize("code", CODES, ids=lambda code: code.code)
def test_docs_have_every_section(code: Code) -> None:
    found = sections(code.docs())
    for section in REQUIRED_SECTIONS:
        assert found.get(section), f"{code.code} lacks ## {section}"
    assert ("Fix safety" in found) == (code.fix is not None)


def test_codes_and_names_are_unique_and_well_formed() -> None:
    codes = [code.code for code in CODES]
    names = [code.name for code in CODES]
    assert len(set(codes)) == len(codes)
    assert len(set(names)) == len(names)
    assert codes == sorted(codes)
    for code in CODES:
        assert code.code[:3] == "TFL" and code.code[3:].isdigit() and len(code.code) == 6
        assert code.name == code.name.lower() and " " not in code.name
        assert not code.summary.endswith(".")
        assert bool(code.implementation) == code.is_rule
        assert bool(code.text) != code.is_rule
        assert (code.judgement is not None) == code.is_rule
