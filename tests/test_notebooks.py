"""Notebooks: code cells joined, IPython syntax masked, findings per cell, --fix keeps outputs."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from tflint_leaks.cli import main
from tflint_leaks.config import Settings
from tflint_leaks.engine.ipython import python_of_cell
from tflint_leaks.engine.runner import lint_paths

SETUP = "%pip install tensorflow\nimport tensorflow as tf\n!nvidia-smi"
DEFINITIONS = (
    "@tf.function\ndef encode(tokens):\n    return tokens\n\n"
    "@tf.function\ndef step(x, i):\n    return x"
)
LOOP = (
    "x = tf.ones([100])\nfor i in range(100):\n    %time step(x, i)\n"
    "    step(x, i)\n    encode(x[:i])"
)


@pytest.fixture
def notebook(tmp_path: Path) -> Path:
    document = nbformat.v4.new_notebook()
    document.cells = [
        nbformat.v4.new_markdown_cell("# Training"),
        nbformat.v4.new_code_cell(SETUP),
        nbformat.v4.new_code_cell(DEFINITIONS),
        nbformat.v4.new_code_cell("%%bash\necho $HOME"),
        nbformat.v4.new_code_cell("def broken(:\n    pass"),
        nbformat.v4.new_code_cell(
            LOOP,
            execution_count=3,
            outputs=[nbformat.v4.new_output("stream", text="CPU times: 1 ms\n")],
        ),
    ]
    path = tmp_path / "train.ipynb"
    nbformat.write(document, str(path))
    return path


def test_findings_name_the_cell_and_the_line_in_it(
    notebook: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = notebook.read_bytes()
    assert main([str(notebook)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{notebook}:cell 5:1:12: TFL001 invalid syntax; the cell is skipped",
        f"{notebook}:cell 6:4:13: TFL101 Python number `i` changes every iteration; each value "
        "retraces `step`",
        f"{notebook}:cell 6:5:12: TFL105 the shape of `x[:i]` (parameter `tokens`) changes every "
        "iteration; each shape retraces `encode` (add an `input_signature` with `None` "
        "dimensions or `reduce_retracing=True`)",
        "Found 1 error and 2 warnings.",
    ]
    assert notebook.read_bytes() == before


def test_json_has_the_cell_and_cell_relative_locations(
    notebook: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main([str(notebook), "--output-format", "json"])
    findings = json.loads(capsys.readouterr().out)
    scalar = next(f for f in findings if f["code"] == "TFL101")
    assert scalar["cell"] == 6
    assert (scalar["location"], scalar["end_location"]) == (
        {"row": 4, "column": 13},
        {"row": 4, "column": 14},
    )
    assert scalar["fix"]["edits"][0]["location"] == {"row": 4, "column": 13}
    assert [(r["message"], r["location"]["row"]) for r in scalar["related"]] == [
        ("cell 3: `step` is defined here", 5),
        ("cell 6: repeated by this loop", 2),
    ]
    # The decorator it would change is in another cell: the fix is not offered.
    shape = next(f for f in findings if f["code"] == "TFL105")
    assert shape["fix"] is None


def test_fix_writes_valid_nbformat_and_keeps_outputs(
    notebook: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = nbformat.read(str(notebook), as_version=4)
    assert main(["--fix", "--unsafe-fixes", str(notebook)]) == 1
    after = nbformat.read(str(notebook), as_version=4)
    nbformat.validate(after)
    assert after.cells[5].source == LOOP.replace(
        "    step(x, i)\n", "    step(x, tf.constant(i))\n"
    )
    assert after.cells[5].outputs == before.cells[5].outputs
    assert after.cells[5].execution_count == 3
    assert [c.source for c in after.cells[:5]] == [c.source for c in before.cells[:5]]
    fixed = notebook.read_bytes()
    capsys.readouterr()
    main(["--fix", "--unsafe-fixes", str(notebook)])
    assert notebook.read_bytes() == fixed


def test_a_file_that_is_not_a_notebook(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "broken.ipynb"
    path.write_text("{not json")
    assert main([str(path)]) == 1
    assert capsys.readouterr().out.splitlines()[0] == (
        f"{path}:1:1: TFL001 not a valid notebook: Expecting property name enclosed in double "
        "quotes at line 1"
    )


@pytest.mark.parametrize(
    ("source", "python"),
    [
        ("%time f()\nx = 1\n", "...\nx = 1\n"),
        ("if a:\n    !ls\n    y = 2", "if a:\n    ...\n    y = 2\n"),
        ("%%bash\necho 1\n", ""),
        ("%%time\nf(1)\n", "f(1)\n"),
        ("?tf.function\n", "...\n"),
    ],
)
def test_ipython_syntax_becomes_an_ellipsis(source: str, python: str) -> None:
    assert python_of_cell(source).text == python


def test_fix_keeps_the_files_own_formatting(tmp_path: Path) -> None:
    """Failed before: ``--fix`` re-serialised the whole notebook (sorted keys, one-space indent,
    lists of lines) for a one-token change. Now the changed line is the only change: two-space
    indent, key order, a source written as one string, escaped non-ASCII text and the missing
    final newline all stay."""
    cells = [
        {
            "cell_type": "code",
            "source": "import tensorflow as tf\n# caf\u00e9\n@tf.function\ndef step(x, i):\n"
            "    return x\n",
            "metadata": {},
            "outputs": [],
            "execution_count": None,
        },
        {
            "source": ["for i in range(100):\n", "    step(tf.ones([1]), i)\n", "print('done')"],
            "cell_type": "code",
            "outputs": [{"output_type": "stream", "name": "stdout", "text": ["done\n"]}],
            "execution_count": 2,
            "metadata": {"tags": ["\u00e9t\u00e9"]},
        },
    ]
    document = {"nbformat_minor": 5, "cells": cells, "metadata": {}, "nbformat": 4}
    path = tmp_path / "train.ipynb"
    original = json.dumps(document, indent=2, ensure_ascii=True)
    path.write_text(original, encoding="utf-8")
    assert main(["--fix", "--unsafe-fixes", "--no-cache", str(path)]) == 0
    assert path.read_text(encoding="utf-8") == original.replace(
        '"    step(tf.ones([1]), i)\\n"', '"    step(tf.ones([1]), tf.constant(i))\\n"'
    )


def _offset(text: str, line: int, column: int) -> int:
    """The offset of a 1-based line and column (characters) in ``text``."""
    return sum(len(piece) for piece in text.splitlines(keepends=True)[: line - 1]) + column - 1


def test_sarif_places_notebook_findings_in_the_file_and_its_fixes_keep_the_json_valid(
    notebook: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Failed before: the region was the cell-relative line (line 4 of the JSON file is
    metadata), and applying the fix there corrupted the notebook."""
    raw = notebook.read_text(encoding="utf-8")
    main(["--no-cache", "--output-format", "sarif", str(notebook)])
    results = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    scalar = next(r for r in results if r["ruleId"] == "TFL101")
    assert scalar["properties"]["cell"] == 6
    region = scalar["locations"][0]["physicalLocation"]["region"]
    start = _offset(raw, region["startLine"], region["startColumn"])
    end = _offset(raw, region["endLine"], region["endColumn"])
    line = raw.splitlines()[region["startLine"] - 1]
    assert (raw[start:end], line.strip()) == ("i", '"    step(x, i)\\n",')
    related = scalar["relatedLocations"][0]["physicalLocation"]["region"]
    assert raw.splitlines()[related["startLine"] - 1].strip() == '"@tf.function\\n",'
    (change,) = scalar["fixes"][0]["artifactChanges"]
    fixed = raw
    for replacement in reversed(change["replacements"]):
        deleted = replacement["deletedRegion"]
        first = _offset(fixed, deleted["startLine"], deleted["startColumn"])
        last = _offset(fixed, deleted["endLine"], deleted["endColumn"])
        fixed = fixed[:first] + replacement["insertedContent"]["text"] + fixed[last:]
    document = nbformat.reads(fixed, as_version=4)
    nbformat.validate(document)
    assert document.cells[5].source == LOOP.replace(
        "    step(x, i)\n", "    step(x, tf.constant(i))\n"
    )


def test_sarif_notebook_fix_content_is_escaped_for_json(tmp_path: Path) -> None:
    """An edit that inserts quotes, a backslash and a line break across two lines of a cell."""
    from tflint_leaks.diagnostics import Applicability, Diagnostic, Edit, Fix, Location, Severity
    from tflint_leaks.reporters import sarif

    path = tmp_path / "n.ipynb"
    document = nbformat.v4.new_notebook()
    document.cells = [nbformat.v4.new_code_cell("x = 1\ny = 2\nw = 4\n")]
    nbformat.write(document, str(path))
    raw = path.read_text(encoding="utf-8")
    edit = Edit(Location(2, 5), Location(3, 2), 'f("a\\\\")\nz')
    diagnostic = Diagnostic(
        "TFL101",
        "python-scalar-argument",
        "m",
        Severity.WARNING,
        str(path),
        Location(2, 5),
        Location(2, 6),
        Fix("f", Applicability.SAFE, (edit,)),
        cell=1,
    )
    (result,) = sarif.to_sarif([diagnostic])["runs"][0]["results"]
    (replacement,) = result["fixes"][0]["artifactChanges"][0]["replacements"]
    deleted = replacement["deletedRegion"]
    first = _offset(raw, deleted["startLine"], deleted["startColumn"])
    last = _offset(raw, deleted["endLine"], deleted["endColumn"])
    fixed = raw[:first] + replacement["insertedContent"]["text"] + raw[last:]
    assert nbformat.reads(fixed, as_version=4).cells[0].source == 'x = 1\ny = f("a\\\\")\nz = 4\n'


def test_cell_lines_and_joined_lines_map_both_ways() -> None:
    """What the runtime mode runs is the cell's Python (leading blank lines dropped, a
    continued shell escape one ``...`` line): a cell line maps to its line in the joined text
    and back, and the lines IPython syntax replaced are known."""
    from tflint_leaks.engine.notebook import CellCode

    source = "\n\n!pip install \\\n  x\nfor i in range(3):\n    step(x, i)\n"
    cell = CellCode(4, 10, python_of_cell(source), source)
    assert cell.code.text == "...\nfor i in range(3):\n    step(x, i)\n"
    assert [cell.joined_line(line) for line in (3, 4, 5, 6)] == [10, 10, 11, 12]
    assert [cell.cell_line(line) for line in (10, 11, 12)] == [3, 5, 6]
    assert cell.replaced_lines() == [3, 4]


def test_a_skipped_cell_keeps_its_position_under_two_workers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Failed before: with workers the notebook came back from the index phase pickled, and a
    ``SyntaxError`` made by hand loses its line and column when pickled, so the skipped cell was
    reported at ``cell 2:1:1`` under ``--jobs 2`` and at ``cell 2:3:4`` under ``--jobs 1``."""
    document = nbformat.v4.new_notebook()
    broken = "import tensorflow as tf\nx = 1\nif x = 2:\n    pass"
    document.cells = [nbformat.v4.new_code_cell("y = 0"), nbformat.v4.new_code_cell(broken)]
    notebook = tmp_path / "a.ipynb"
    nbformat.write(document, str(notebook))
    for number in range(20):  # enough files for workers to be used
        (tmp_path / f"m{number}.py").write_text("import tensorflow as tf\n")
    expected = [
        f"{notebook}:cell 2:3:4: TFL001 invalid syntax. Maybe you meant '==' or "
        "':=' instead of '='?; the cell is skipped",
        "Found 1 error.",
    ]
    for jobs in ("1", "2"):
        assert main(["--no-cache", "--jobs", jobs, str(tmp_path)]) == 1
        assert capsys.readouterr().out.splitlines() == expected, jobs


#: A notebook's definitions, one cell each after the first; the same code as a module.
UNREACHED = (
    "import tensorflow as tf\n\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n",
    # Never called.
    "def evaluate(batches):\n    for x in batches:\n        model.predict(x)\n",
    # Called.
    "def score(batches):\n    for x in batches:\n        model.predict(x)\n\nscore(data)\n",
    # A method of a class whose instances stay in the notebook, never called (`tf.train` is
    # the module's attribute, and `setattr` calls no method).
    "class Trainer:\n"
    "    def __init__(self, config):\n"
    "        setattr(self, 'config', config)\n"
    "        self.manager = tf.train.CheckpointManager\n\n"
    "    def train(self, batches):\n"
    "        for x in batches:\n"
    "            model.predict(x)\n\n"
    "trainer = Trainer({})\n"
    "print(trainer.manager)\n",
    # An instance handed to a library, which may call any of its methods.
    "class Agent:\n"
    "    def act(self, states):\n"
    "        for s in states:\n"
    "            model.predict(s)\n\n"
    "agent = Agent()\n"
    "run_episodes(agent)\n",
    # A base that is not the notebook's own: the framework calls its methods.
    "class Probe(tf.keras.callbacks.Callback):\n"
    "    def report(self, batches):\n"
    "        for x in batches:\n"
    "            model.predict(x)\n",
    # Decorated: the decorator may register it.
    "@register\ndef sweep(batches):\n    for x in batches:\n        model.predict(x)\n",
)


def test_what_a_notebook_never_calls_is_not_linted(tmp_path: Path) -> None:
    """No module imports a notebook: a function or method it never refers to never runs. A
    module's are linted, as another module may call them."""
    document = nbformat.v4.new_notebook()
    document.cells = [nbformat.v4.new_code_cell(source) for source in UNREACHED]
    nbformat.write(document, str(tmp_path / "explore.ipynb"))
    (tmp_path / "explore.py").write_text("\n\n".join(UNREACHED))
    for jobs in (1, 2):
        result = lint_paths([tmp_path], Settings(select=("TFL402",)), jobs=jobs)
        found = [
            (Path(d.file).name, d.cell, d.start.line, d.start.column) for d in result.diagnostics
        ]
        assert found == [
            ("explore.ipynb", 3, 3, 9),
            ("explore.ipynb", 5, 4, 13),
            ("explore.ipynb", 6, 4, 13),
            ("explore.ipynb", 7, 4, 9),
            ("explore.py", None, 8, 9),
            ("explore.py", None, 13, 9),
            ("explore.py", None, 25, 13),
            ("explore.py", None, 34, 13),
            ("explore.py", None, 43, 13),
            ("explore.py", None, 49, 9),
        ]


def test_a_notebook_that_runs_a_file_in_its_namespace_may_call_anything(tmp_path: Path) -> None:
    """`%run driver.py` runs the file with the notebook's names: it may call what the notebook
    defines and never calls itself."""
    document = nbformat.v4.new_notebook()
    document.cells = [
        nbformat.v4.new_code_cell(source) for source in (*UNREACHED[:2], "%run driver.py")
    ]
    nbformat.write(document, str(tmp_path / "explore.ipynb"))
    result = lint_paths([tmp_path], Settings(select=("TFL402",)), jobs=1)
    assert [(d.cell, d.start.line, d.start.column) for d in result.diagnostics] == [(2, 3, 9)]


def test_a_class_defined_again_is_judged_by_every_definition(tmp_path: Path) -> None:
    """The cell run again with an edit: its second definition hands `self` to a library, which
    may call the method the notebook never names."""
    first = (
        "class Agent:\n"
        "    def act(self, states):\n"
        "        for s in states:\n"
        "            model.predict(s)\n"
    )
    second = first + "\n    def start(self):\n        register(self)\n"
    document = nbformat.v4.new_notebook()
    document.cells = [
        nbformat.v4.new_code_cell(source)
        for source in (UNREACHED[0], first, second, "agent = Agent()\nagent.start()\n")
    ]
    nbformat.write(document, str(tmp_path / "explore.ipynb"))
    result = lint_paths([tmp_path], Settings(select=("TFL402",)), jobs=1)
    assert [(d.cell, d.start.line, d.start.column) for d in result.diagnostics] == [
        (2, 4, 13),
        (3, 4, 13),
    ]
