"""Every rule's "Guard it" section holds a real test: each snippet runs as a test module, all in
one pytest process with real TensorFlow and the plugin loaded through its entry point, and
passes. The guards that lint the project (TFL201, TFL202) pass on the rule's own fixed or
valid example and fail on its flagged one."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from tests.runtime.conftest import requires_tensorflow
from tests.runtime.test_budget import Outcomes, run_suite
from tflint_leaks.docs import sections
from tflint_leaks.registry import BY_CODE, RULES, Code

pytestmark = [pytest.mark.runtime]

#: The guards that run the linter over ``src/`` instead of tf_budget.
LINTING = ("TFL201", "TFL202")
_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def guard(code: Code) -> str:
    [snippet] = _BLOCK.findall(sections(code.docs())["Guard it"])
    return str(snippet)


def write_guards(directory: Path) -> None:
    for code in RULES:
        (directory / f"test_guard_{code.code.lower()}.py").write_text(guard(code))


def write_sources(directory: Path, flagged: bool) -> None:
    """``src/`` with TFL201's fixed example and TFL202's first valid one, or (``flagged``)
    with each rule's first flagged example."""
    source = directory / "src"
    source.mkdir(exist_ok=True)
    for code in LINTING:
        rule = BY_CODE[code].load()
        example = rule.INVALID[0]
        if flagged:
            text = example.source
        elif example.fixed is not None:
            text = textwrap.dedent(example.fixed).lstrip("\n")
        else:
            text = rule.VALID[0].source
        (source / f"{code.lower()}.py").write_text(text)


@pytest.fixture(scope="module")
def guards(tmp_path_factory: pytest.TempPathFactory) -> Outcomes:
    directory = tmp_path_factory.mktemp("guards")
    write_guards(directory)
    write_sources(directory, flagged=False)
    return run_suite(directory)


@pytest.mark.parametrize("code", RULES, ids=lambda code: code.code)
def test_every_rule_shows_the_test_that_guards_its_fix(code: Code) -> None:
    assert "def test_" in guard(code)


@requires_tensorflow
@pytest.mark.parametrize("code", RULES, ids=lambda code: code.code)
def test_the_guard_passes_on_fixed_code(guards: Outcomes, code: Code) -> None:
    [name] = re.findall(r"^def (test_\w+)\(", guard(code), re.MULTILINE)
    assert guards[f"test_guard_{code.code.lower()}::{name}"] == ("passed", None)


def test_linting_guards_fail_on_the_pattern(tmp_path: Path) -> None:
    write_sources(tmp_path, flagged=True)
    for code in LINTING:
        (tmp_path / f"test_guard_{code.lower()}.py").write_text(guard(BY_CODE[code]))
    outcomes = run_suite(tmp_path)
    assert {name: outcome for name, (outcome, _) in outcomes.items()} == {
        "test_guard_tfl201::test_persistent_tapes_are_released": "failure",
        "test_guard_tfl202::test_gradients_are_taken_after_the_tape_block": "failure",
    }
    # the linter's exit code: 1, findings
    assert all("assert 1 == 0" in (message or "") for _, message in outcomes.values())
