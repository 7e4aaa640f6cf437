"""Facts with one home: the loop table, the code registry, source reading (issue 10)."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import jsonschema
import libcst as cst
import pytest

from tflint_leaks.analysis.index import index_source
from tflint_leaks.analysis.loops import LoopNode
from tflint_leaks.analysis.project import ProjectIndex
from tflint_leaks.analysis.scope import ScopeFacts, collect_scope
from tflint_leaks.cli import main
from tflint_leaks.config import Settings
from tflint_leaks.diagnostics import Confirmation, Verdict
from tflint_leaks.engine.runner import lint_paths
from tflint_leaks.engine.walker import Walker
from tflint_leaks.registry import RULES, RUNTIME_RETRACING
from tflint_leaks.reporters import render
from tflint_leaks.rulekit.context import FileContext, ScopeNode
from tflint_leaks.rulekit.options import RuleOptions
from tflint_leaks.rulekit.rule import Rule

ROOT = Path(__file__).resolve().parent.parent
SARIF_SCHEMA = ROOT / "tests" / "data" / "sarif-schema-2.1.0.json"


class _LoopProbe(Rule):
    """Records, for every call, its scope and the loops the walker has on its stack."""

    def setup(self) -> None:
        self.seen: dict[cst.Call, tuple[ScopeNode, frozenset[LoopNode]]] = {}

    def visit_Call(self, node: cst.Call) -> None:
        self.seen[node] = (self.context.frame.node, frozenset(self.context.frame.loops))


def _walk(source: str, name: str) -> tuple[FileContext, _LoopProbe]:
    module = cst.parse_module(source)
    index = index_source(source, Path(name))
    context = FileContext(name, index, ProjectIndex([index]), RuleOptions())
    probe = _LoopProbe(context, "TEST")
    Walker(context, [probe]).walk_module(module)
    return context, probe


def _sources() -> list[tuple[str, str]]:
    examples = [
        (f"{code.code}-{number}", example.source)
        for code in RULES
        for number, example in enumerate((*code.load().INVALID, *code.load().VALID))
    ]
    fixtures = [
        (str(path.relative_to(ROOT)), path.read_text(encoding="utf-8"))
        for path in sorted((ROOT / "fixtures").rglob("*.py"))
    ]
    return examples + fixtures


@pytest.mark.parametrize(("name", "source"), _sources(), ids=[name for name, _ in _sources()])
def test_walker_collector_and_loop_calls_agree_on_every_call(name: str, source: str) -> None:
    """For every call in every rule example and fixture, the loops that enclose it are the same
    whether the walker, the per-scope assignment collector or ``loop_calls`` is asked."""
    context, probe = _walk(source, name)
    collected: dict[ScopeNode, ScopeFacts] = {}
    for call, (scope, walker_loops) in probe.seen.items():
        facts = collected.get(scope) or collected.setdefault(scope, collect_scope(scope))
        by_loop_calls = {loop for loop in context.loop_table if call in context.loop_calls(loop)}
        shown = cst.Module([]).code_for_node(call)
        assert facts.call_loops[call] == walker_loops, shown
        assert by_loop_calls == walker_loops, shown


def test_loops_of_each_part_of_a_loop() -> None:
    source = (
        "for a in f(1):\n"
        "    g(a)\n"
        "    [h(x) for x in k(a) if p(x) for y in q(x)]\n"
        "else:\n"
        "    e()\n"
        "while w():\n"
        "    pass\n"
    )
    _, probe = _walk(source, "m.py")
    depth = {
        cst.Module([]).code_for_node(call.func): len(loops)
        for call, (_, loops) in probe.seen.items()
    }
    # f() and the else clause run once; g, k and w every iteration of their loop; p and q every
    # iteration of the comprehension's first clause too; h every iteration of the inner clause.
    assert depth == {"f": 0, "g": 1, "k": 1, "p": 2, "q": 2, "h": 3, "e": 0, "w": 1}


def test_comprehension_element_runs_every_iteration(tmp_path: Path) -> None:
    """Failed before: the loop statement was TFL404, the same comprehension was silent."""
    path = tmp_path / "folds.py"
    path.write_text(
        "import tensorflow as tf\n"
        "for x in folds:\n"
        "    model.fit(tf.data.Dataset.from_tensor_slices(x).batch(32))\n"
        "[model.fit(tf.data.Dataset.from_tensor_slices(x).batch(32)) for x in folds]\n"
    )
    found = lint_paths([path], Settings(select=("ALL",))).diagnostics
    assert [(d.code, d.start.line, d.start.column) for d in found] == [
        ("TFL404", 3, 15),
        ("TFL404", 4, 12),
    ]


def test_cross_file_lookup_reads_a_pep263_latin1_module(tmp_path: Path) -> None:
    """Failed before: the project index re-read imported files as UTF-8, so a declared latin-1
    ``steps.py`` lost the cross-file finding when only ``train.py`` was linted (pre-commit)."""
    (tmp_path / "steps.py").write_bytes(
        b"# -*- coding: latin-1 -*-\n"
        b"import tensorflow as tf\n"
        b"# \xe9tape d'entra\xeenement\n"
        b"@tf.function\n"
        b"def train_step(x, i):\n"
        b"    return x\n"
    )
    train = tmp_path / "train.py"
    train.write_text(
        "import tensorflow as tf\n"
        "from steps import train_step\n"
        "for i in range(100):\n"
        "    train_step(tf.ones([1]), i)\n"
    )
    found = lint_paths([train], Settings()).diagnostics
    assert [(d.code, d.start.line, d.start.column) for d in found] == [("TFL101", 4, 30)]
    assert found[0].related[0].file == str(tmp_path / "steps.py")
    assert found[0].related[0].start.line == 4


def _runtime_finding() -> list[object]:
    confirmation = Confirmation(Verdict.CONFIRMED, "`step` retraced", traces=9, calls=10)
    finding = RUNTIME_RETRACING.at("train.py", "`step` retraced at run time", 12)
    from dataclasses import replace

    return [replace(finding, confirmation=confirmation)]


def test_sarif_renders_a_runtime_only_finding() -> None:
    """Failed before: ``KeyError: 'TFL900'`` (the SARIF rule table knew only the rules)."""
    log = json.loads(render("sarif", _runtime_finding()))  # type: ignore[arg-type]
    jsonschema.validate(log, json.loads(SARIF_SCHEMA.read_text(encoding="utf-8")))
    (result,) = log["runs"][0]["results"]
    descriptor = log["runs"][0]["tool"]["driver"]["rules"][result["ruleIndex"]]
    assert (result["ruleId"], descriptor["id"], descriptor["name"]) == (
        "TFL900",
        "TFL900",
        "runtime-retracing",
    )


def test_json_url_of_engine_and_runtime_codes() -> None:
    """Failed before: JSON ``url`` was null for TFL001, TFL002 and TFL900."""
    (entry,) = json.loads(render("json", _runtime_finding()))  # type: ignore[arg-type]
    assert entry["url"].endswith("/docs/rules/TFL900.md")
    assert (ROOT / "docs" / "rules" / "TFL900.md").is_file()


def test_noqa_knows_the_runtime_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Failed before: ``# noqa: TFL900`` warned "unknown rule code"."""
    path = tmp_path / "train.py"
    path.write_text("import tensorflow as tf\nx = 1  # noqa: TFL900\ny = 2  # noqa: TFL999\n")
    assert main(["--no-cache", str(path)]) == 0
    assert capsys.readouterr().err == (
        f"warning: {path}:3: unknown rule code `TFL999` in a noqa comment\n"
    )


AGENT = """\
import numpy as np
from tensorflow import keras


class Agent:
    def __init__(self):
        self.model = keras.Sequential([keras.layers.Dense(2)])

    def act(self, state):
        return np.argmax(self.model.predict(state[None]))

    def step(self, env, state):
        return env.step(self.act(state))
"""
PLAY = """\
from agent import Agent

agent = Agent()
while True:
    state = agent.step(env, state)
"""


@pytest.fixture
def two_files(tmp_path: Path) -> Path:
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "play.py").write_text(PLAY)
    return tmp_path


def test_a_chain_of_calls_in_every_format(
    two_files: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop in play.py runs ``agent.step`` -> ``Agent.act`` -> ``self.model.predict`` in
    agent.py: the finding is on the call in the loop, and every hop is a ``call`` location."""
    monkeypatch.chdir(two_files)
    assert main(["--no-cache", "play.py"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "play.py:5:13: TFL402 `self.model.predict` through `step` every iteration builds a new "
        "`tf.data` pipeline each call; use `self.model(x, training=False)` or `predict_on_batch`",
        "    agent.py:13:25: calls `act`",
        "Found 1 warning.",
    ]
    assert main(["--no-cache", "--output-format", "json", "play.py"]) == 1
    (finding,) = json.loads(capsys.readouterr().out)
    assert [(r["role"], r["filename"], r["location"]["row"]) for r in finding["related"]] == [
        ("call", "agent.py", 13),
        ("model", "agent.py", 10),
        ("loop", "play.py", 4),
    ]
    assert main(["--no-cache", "--output-format", "sarif", "play.py"]) == 1
    log = json.loads(capsys.readouterr().out)
    jsonschema.validate(log, json.loads(SARIF_SCHEMA.read_text(encoding="utf-8")))
    (result,) = log["runs"][0]["results"]
    flow = result["codeFlows"][0]["threadFlows"][0]["locations"]
    assert [
        (
            step["location"]["physicalLocation"]["artifactLocation"]["uri"],
            step["location"]["physicalLocation"]["region"]["startLine"],
        )
        for step in flow
    ] == [("agent.py", 13), ("play.py", 5)]
    assert main(["--no-cache", "--output-format", "github", "play.py"]) == 1
    annotation = capsys.readouterr().out
    assert annotation.endswith("or `predict_on_batch`%0Aagent.py:13:25: calls `act`\n")
    assert main(["--no-cache", "--output-format", "junit", "play.py"]) == 1
    failure = ElementTree.fromstring(capsys.readouterr().out).find(".//failure")
    assert failure is not None and failure.text is not None
    assert failure.text.splitlines()[1:] == ["agent.py:13:25: calls `act`"]


def test_a_chain_in_one_file_is_reported_at_the_effect(
    two_files: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop in the same file: the finding is on the ``predict`` (where the fix goes), with
    the call in the loop as its ``caller``."""
    (two_files / "agent.py").write_text(
        AGENT + "\n\ndef play(env, state):\n"
        "    agent = Agent()\n    while True:\n"
        "        state = agent.step(env, state)\n"
    )
    monkeypatch.chdir(two_files)
    assert main(["--no-cache", "agent.py"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "agent.py:10:26: TFL402 `self.model.predict` through `step` every iteration builds a new "
        "`tf.data` pipeline each call; use `self.model(x, training=False)` or `predict_on_batch`",
        "    agent.py:19:17: `step` is called here",
        "    agent.py:13:25: calls `act`",
        "Found 1 warning.",
    ]


def test_no_import_cycle_in_the_package() -> None:
    """Layers point down (``lint-imports``), and within a layer no two modules import each
    other, directly or through others (failed before: config -> rules -> engine -> config, and
    engine.cache <-> engine.runner)."""
    import grimp

    graph = grimp.build_graph("tflint_leaks")
    modules = sorted(graph.modules)
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        path.append(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if state.get(imported) == 1:
                cycle = path[path.index(imported) :]
                pytest.fail(f"import cycle: {' -> '.join([*cycle, imported])}")
            if imported not in state:
                visit(imported)
        path.pop()
        state[module] = 2

    for module in modules:
        if module not in state:
            visit(module)


def test_an_absolute_import_inside_a_src_package_finds_the_project_module(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Zeta36/chess-alpha-zero: ``src`` has an ``__init__.py`` and a launcher appends it to
    ``sys.path``, so ``from chess_zero.agent.model_chess import ChessModel`` in
    ``src/chess_zero/worker/evaluate.py`` is ``src.chess_zero.agent.model_chess``; and
    ``Model`` from ``keras.engine.training`` is ``keras.Model`` with its ``from_config``. Failed
    before on both counts: the endless loop's model was not seen."""
    package = tmp_path / "src" / "chess_zero"
    for directory in (tmp_path / "src", package, package / "agent", package / "worker"):
        directory.mkdir(exist_ok=True)
        (directory / "__init__.py").write_text("")
    (package / "agent" / "model_chess.py").write_text(
        "import json\n"
        "from keras.engine.training import Model\n"
        "\n"
        "\n"
        "class ChessModel:\n"
        "    def load(self, config_path):\n"
        "        with open(config_path) as f:\n"
        "            self.model = Model.from_config(json.load(f))\n"
    )
    (package / "worker" / "evaluate.py").write_text(
        "from chess_zero.agent.model_chess import ChessModel\n"
        "\n"
        "\n"
        "def load_next(path):\n"
        "    model = ChessModel()\n"
        "    model.load(path)\n"
        "    return model\n"
        "\n"
        "\n"
        "def start(paths):\n"
        "    while True:\n"
        "        model = load_next(paths.pop())\n"
    )
    monkeypatch.chdir(tmp_path)
    assert main(["--no-cache", "--select", "TFL401", "."]) == 1
    assert capsys.readouterr().out.splitlines()[0] == (
        "src/chess_zero/worker/evaluate.py:12:17: TFL401 `load_next` builds a Keras model every "
        "iteration and the loop never calls `clear_session()`; Keras' global state grows with "
        "each model (`del` and `gc.collect()` do not release it)"
    )
