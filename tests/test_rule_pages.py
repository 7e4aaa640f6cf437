"""Every rule page agrees with its rule: each Python block of *Example* is flagged by the code
the page is about, and each block of *Use instead* is not (the docs are what a user copies).

Failed before: no example was flagged (they named ``tf`` without importing it, and called
project functions they did not define), and TFL401's and TFL403's loops of three models were
under ``max-loop-iterations``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tflint_leaks.config import Settings
from tflint_leaks.docs import sections
from tflint_leaks.engine.runner import lint_source
from tflint_leaks.registry import CODES, ENGINE_CODES, Code, Kind

_PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)

#: The runtime's code is judged on a run (``tflint-leaks confirm``), not on the text.
STATIC = [code for code in CODES if code.kind is not Kind.RUNTIME]


def _blocks(code: Code, section: str) -> list[str]:
    return _PYTHON_BLOCK.findall(sections(code.docs()).get(section, ""))


def _codes(code: Code, source: str, tmp_path: Path) -> list[str]:
    """The codes reported for ``source`` with only ``code`` selected, or every code for one
    of the engine's (an unused ``noqa`` needs the rules to run)."""
    selected = (code.code,) if code.is_rule else ("ALL",)
    settings = Settings(select=selected, root=tmp_path)
    result = lint_source(source, tmp_path / "example.py", settings)
    return [diagnostic.code for diagnostic in result.diagnostics]


@pytest.mark.parametrize("code", STATIC, ids=[code.code for code in STATIC])
def test_example_is_flagged_and_use_instead_is_not(code: Code, tmp_path: Path) -> None:
    examples = _blocks(code, "Example")
    if code.is_rule:
        assert examples, f"{code.code}: no Python block under *Example*"
        assert _blocks(code, "Use instead"), f"{code.code}: no Python block under *Use instead*"
    for source in examples:
        assert code.code in _codes(code, source, tmp_path), source
    for source in _blocks(code, "Use instead"):
        found = _codes(code, source, tmp_path)
        assert code.code not in found, source
        assert not set(found) & ENGINE_CODES, (found, source)
