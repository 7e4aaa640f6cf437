"""Positions of reported nodes, computed one function at a time (engine/positions.py), are
libcst's own, for every node of every function and method of every example and fixture, and in
the layouts that could move them (decorators, tabs, CRLF, comments, a class header over lines);
a node outside the functions, or a function whose lines disagree with the index, falls back to
positioning the whole module."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from _pytest.mark import ParameterSet
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider

from tflint_leaks.analysis.index import index_source
from tflint_leaks.analysis.nodes import descendants
from tflint_leaks.engine.positions import node_positions
from tflint_leaks.registry import RULES

ROOT = Path(__file__).resolve().parent.parent

LAYOUTS = {
    "decorators": "import x\n\n\n@a\n@b(\n    1)\ndef f(y):\n    return [y,\n  y]  # c\n",
    "class header over lines": (
        "# header\nclass A(B,\n        C):\n    '''doc'''\n    x = 1\n\n    @property\n"
        "    def g(self):\n        # comment\n        return self.x\n    # trailing\n"
    ),
    "tabs": "class A:\n\tdef f(self):\n\t\tif self:\n\t\t\treturn (1,\n  2)\n",
    "crlf": "def f():\r\n    x = 1\r\n\r\n    return x\r\nclass K:\r\n    def m(self): pass\r\n",
    "two spaces": "class A:\n  def f(self):\n    for i in range(3):\n      print(i)\n",
    "nested": "def f():\n    def g():\n        class C:\n            def h(self): return 1\n",
}


def _sources() -> list[ParameterSet]:
    found = [pytest.param(text, id=name) for name, text in LAYOUTS.items()]
    for code in RULES:
        rule = code.load()
        for number, invalid in enumerate(rule.INVALID):
            found.append(pytest.param(invalid.source, id=f"{code.code}-invalid-{number}"))
        for number, valid in enumerate(rule.VALID):
            found.append(pytest.param(valid.source, id=f"{code.code}-valid-{number}"))
    for path in sorted((ROOT / "fixtures").rglob("*.py")):
        found.append(pytest.param(path.read_text(encoding="utf-8"), id=path.name))
    return found


def _function_nodes(module: cst.Module) -> list[cst.CSTNode]:
    """Every node inside a top-level function or a method of a top-level class."""
    nodes: list[cst.CSTNode] = []
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef):
            nodes.extend(descendants(statement))
        elif isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
            for inner in statement.body.body:
                if isinstance(inner, cst.FunctionDef):
                    nodes.extend(descendants(inner))
    return nodes


@pytest.mark.parametrize("text", _sources())
def test_positions_of_function_nodes_are_libcsts(text: str) -> None:
    module = cst.parse_module(text)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    units = index_source(text, Path("example.py")).units
    nodes = _function_nodes(module)
    found = node_positions(module, nodes, units)
    assert [found[node] for node in nodes] == [expected[node] for node in nodes]


def test_functions_are_positioned_alone() -> None:
    """The fast path is taken: the mapping holds only the node asked for, where libcst puts it."""
    text = LAYOUTS["class header over lines"]
    module = cst.parse_module(text)
    klass = module.body[0]
    assert isinstance(klass, cst.ClassDef) and isinstance(klass.body, cst.IndentedBlock)
    method = klass.body.body[2]
    assert isinstance(method, cst.FunctionDef)
    found = node_positions(module, [method.name], index_source(text, Path("a.py")).units)
    assert list(found) == [method.name]
    assert found[method.name] == CodeRange(CodePosition(8, 8), CodePosition(8, 9))


@pytest.mark.parametrize(
    ("text", "pick"),
    [
        pytest.param("import x\ny = x.f(\n  1)\n", lambda m: m.body[1], id="module-level code"),
        pytest.param(
            "class A(B):\n    x = 1\n", lambda m: m.body[0].body.body[0], id="class statement"
        ),
        pytest.param(
            "@ \\\n  dec\ndef f():\n    pass\n",
            lambda m: m.body[0].body,
            id="decorator over a backslash",
        ),
        pytest.param(
            "def f():\n    pass\ndef f():\n    return 1\n",
            lambda m: m.body[1].body,
            id="a name defined twice",
        ),
    ],
)
def test_other_nodes_fall_back_to_the_whole_module(text: str, pick: object) -> None:
    module = cst.parse_module(text)
    node = pick(module)  # type: ignore[operator]
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    found = node_positions(module, [node], index_source(text, Path("a.py")).units)
    assert found[node] == expected[node]
    assert len(found) == len(expected)


@pytest.mark.parametrize("text", list(LAYOUTS.values()), ids=list(LAYOUTS))
def test_layouts_take_the_fast_path(text: str) -> None:
    module = cst.parse_module(text)
    nodes = _function_nodes(module)
    found = node_positions(module, nodes, index_source(text, Path("a.py")).units)
    assert len(found) == len(set(nodes))
