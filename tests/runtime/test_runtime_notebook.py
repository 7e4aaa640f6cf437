"""A notebook as the target: code cells run in order, IPython syntax skipped and listed, every
position mapped back to ``cell:line``."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from tests.runtime.conftest import requires_tensorflow
from tflint_leaks.cli import main

pytestmark = [pytest.mark.runtime, requires_tensorflow]

CELLS = [
    ("markdown", "# Training"),
    ("code", "%matplotlib inline\nimport tensorflow as tf"),
    ("code", "!pip install nothing\n\n@tf.function\ndef step(x, i):\n    return x + 1.0"),
    ("code", "x = tf.zeros([1])\nfor i in range(8):\n    x = step(x, i)"),
    ("code", "%%bash\necho never runs"),
    (
        "code",
        "@tf.function\ndef scale(x, f):\n    return x * f\n\n"
        "OPS = {'scale': scale}\nfor k in range(7):\n    OPS['scale'](x, float(k))",
    ),
]


@pytest.fixture
def notebook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    book = nbformat.v4.new_notebook()
    for kind, source in CELLS:
        make = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
        book.cells.append(make(source))
    path = tmp_path / "train.ipynb"
    nbformat.write(book, path)
    monkeypatch.chdir(tmp_path)
    return path


@pytest.mark.usefixtures("notebook")
def test_notebook_target_maps_findings_to_cells(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["confirm", "train.ipynb", "--timeout", "300", "--output-format", "json"])
    captured = capsys.readouterr()
    assert code == 1, captured.err
    static, runtime_only = json.loads(captured.out)
    assert (static["code"], static["cell"], static["location"]["row"]) == ("TFL101", 4, 3)
    confirmation = static["confirmation"]
    assert confirmation["verdict"] == "confirmed"
    assert (confirmation["traces"], confirmation["calls"]) == (8, 8)
    assert confirmation["sites"] == [
        {"filename": "train.ipynb", "cell": 4, "line": 3, "calls": 8, "traces": 8}
    ]
    assert (runtime_only["code"], runtime_only["cell"], runtime_only["location"]["row"]) == (
        "TFL900",
        6,
        1,
    )
    assert runtime_only["confirmation"]["sites"] == [
        {"filename": "train.ipynb", "cell": 6, "line": 7, "calls": 7, "traces": 7}
    ]
    assert (
        "note: skipped IPython syntax: cell 2:1 `%matplotlib inline`, cell 3:1 "
        "`!pip install nothing`, cell 5 `%%bash` (the whole cell)\n"
    ) in captured.err
    assert captured.err.startswith("target completed: ran to its end\n")


def test_notebook_cell_that_raises_is_reported_at_its_cell(
    notebook: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    book = nbformat.read(notebook, as_version=4)
    book.cells.insert(3, nbformat.v4.new_code_cell("x = 1\nraise RuntimeError('stop here')"))
    nbformat.write(book, notebook)
    assert main(["confirm", "train.ipynb", "--timeout", "300"]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines()[-1] == (
        "error: the target raised at train.ipynb:cell 4:2: RuntimeError: stop here"
    )
    # the finding after the failing cell never ran
    assert "runtime: error: the run raised RuntimeError: stop here before this code ran" in (
        captured.out
    )
