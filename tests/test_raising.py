"""A notebook's statement that reads a name no cell binds never completes: what follows it in its
block is not linted (GenText's generation loop, set Z8: `max_sequence_len` is defined in no
cell)."""

from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from tflint_leaks.analysis.endings import end_of_script
from tflint_leaks.analysis.raising import raises, unbound_names
from tflint_leaks.config import Settings
from tflint_leaks.engine.runner import lint_paths

GENERATE = """\
import numpy as np
import tensorflow as tf

model = tf.keras.models.load_model("rnn.h5")
seed = [1, 2, 3]
for _ in range(100):
    tokens = np.array(seed[-max_sequence_len:])
    predicted = model.predict(tokens[None], verbose=0)
    seed.append(int(np.argmax(predicted)))
"""


def _lint(tmp_path: Path) -> list[tuple[str, int | None, str, int]]:
    result = lint_paths([tmp_path], Settings(select=("TFL402",)), jobs=1)
    return [(Path(d.file).name, d.cell, d.code, d.start.line) for d in result.diagnostics]


def _notebook(tmp_path: Path, *sources: str) -> None:
    cells = [
        {"cell_type": "code", "source": source, "metadata": {}, "outputs": []} for source in sources
    ]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 4}
    (tmp_path / "generate.ipynb").write_text(json.dumps(notebook))


HEAD, _, LOOP = GENERATE.partition("seed = ")
LOOP = "seed = " + LOOP


def test_a_loop_that_reads_a_name_no_cell_binds_never_reaches_its_predict(
    tmp_path: Path,
) -> None:
    _notebook(tmp_path, HEAD, LOOP)
    assert _lint(tmp_path) == []


@pytest.mark.parametrize(
    "binding",
    [
        "max_sequence_len = 40\n",  # in a later cell: a notebook's cells run in any order
        "def setup():\n    global max_sequence_len\n    max_sequence_len = 40\n",
        "from settings import *\n",
        "globals()['max_sequence_len'] = 40\n",
        "exec(open('settings.py').read())\n",
        "%run settings.py\n",  # a magic may bind any name
    ],
)
def test_a_name_the_notebook_may_bind_is_read_as_bound(tmp_path: Path, binding: str) -> None:
    _notebook(tmp_path, HEAD, LOOP, binding)
    assert _lint(tmp_path) == [("generate.ipynb", 2, "TFL402", 4)]


def test_only_the_rest_of_the_block_is_left_out(tmp_path: Path) -> None:
    loop = LOOP.replace(
        "    tokens = np.array(seed[-max_sequence_len:])\n",
        "    if seed[-1] == 0:\n        tokens = np.array(seed[-max_sequence_len:])\n"
        "        model.predict(tokens[None])\n",
    )
    _notebook(tmp_path, HEAD, loop)
    assert _lint(tmp_path) == [("generate.ipynb", 2, "TFL402", 6)]


def test_a_script_may_run_in_a_namespace_made_elsewhere(tmp_path: Path) -> None:
    """``%run -i generate.py``, ``runpy.run_path(path, init_globals)``: a ``.py`` file's free
    names are not known to be unbound (and snippets read placeholders)."""
    (tmp_path / "generate.py").write_text(GENERATE)
    assert _lint(tmp_path) == [("generate.py", None, "TFL402", 8)]


def _statement(source: str) -> cst.BaseStatement:
    return cst.parse_module(textwrap.dedent(source)).body[0]


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("x = f(missing)", True),
        ("missing.attribute()", True),
        ("x += missing", True),
        ("if missing > 0:\n    pass", True),
        ("for x in missing:\n    pass", True),
        ("with open(missing):\n    pass", True),
        ("return missing", True),
        ("x = present.missing", False),  # an attribute is no name
        ("f(missing=1)", False),  # nor a keyword
        ("x = present or missing", False),
        ("x = missing if present else 0", False),
        ("x = 0 if missing else 1", True),
        ("x = present < 1 < missing", False),
        ("x = [missing for _ in present]", False),
        ("f = lambda: missing", False),
        ("break; missing", False),
        ("while present:\n    missing", False),
        ("try:\n    missing\nexcept NameError:\n    pass", False),
    ],
)
def test_what_a_statement_reads_on_every_way_through_it(statement: str, expected: bool) -> None:
    assert raises(_statement(statement), frozenset({"missing"})) is expected


def test_unbound_names_are_those_no_scope_binds_and_no_builtin_is() -> None:
    source = textwrap.dedent(
        """
        import os.path
        from a import b as c
        def f(p, *args, **kwargs):
            global g
            q = [i for i in p]
            with open(p) as h:
                pass
            try:
                pass
            except OSError as e:
                pass
            return xrange(len(q)), undefined, os.sep, c, g, h, e, args, kwargs, __file__
        class K:
            pass
        """
    )
    assert unbound_names(source) == {"undefined"}
    assert unbound_names(source + "sys.modules[__name__].x = 1\n") == set()
    assert unbound_names(source + "exec(code)\n") == frozenset()
    assert unbound_names(source + "...\n") == frozenset()
    assert unbound_names("x = (") == frozenset()


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("exit()", 1),
        ("sys.exit(main())", 1),
        ("os._exit(1)", 1),
        ("raise SystemExit", 1),
        ("x = 1\nwhile True:\n    serve()", 3),
        ("while 1:\n    for x in y:\n        break", 3),  # the inner loop's break
        ("while 1:\n    def f():\n        pass\n    step()", 4),
        ("while True:\n    if done:\n        break", None),
        ("while 1:\n    for x in y:\n        pass\n    else:\n        break", None),
        ("while running:\n    serve()", None),
        ("x = exit", None),
        ("def exit():\n    pass\n\nexit()", None),  # the module's own
        ("if done:\n    exit()", None),
        ("print('done')", None),
    ],
)
def test_where_a_script_ends(source: str, expected: int | None) -> None:
    tree = ast.parse(textwrap.dedent(source))
    bound = frozenset(n.name for n in tree.body if isinstance(n, ast.FunctionDef))

    def resolve(node: ast.expr) -> str | None:
        return {"sys.exit": "sys.exit", "os._exit": "os._exit"}.get(ast.unparse(node))

    assert end_of_script(tree, resolve, bound) == expected


#: pannous's generate_sound.py (set Z36 of stop 54): a sound demo's endless loops, then
#: ``exit()``, above TensorFlow code that never runs.
SCRATCH = """import tensorflow as tf

model = tf.keras.models.load_model("m.keras")
while 1:
    play()
exit()

for x in data:
    model.predict(x)
"""


@pytest.mark.parametrize(
    ("stop", "expected"),
    [
        ("while 1:\n    play()\nexit()\n", []),
        ("exit()\n", []),
        ("while 1:\n    if play():\n        break\n", [("scratch.py", None, "TFL402", 9)]),
        ("", [("scratch.py", None, "TFL402", 6)]),
    ],
)
def test_a_script_below_what_ends_it_never_runs(
    tmp_path: Path, stop: str, expected: list[tuple[str, int | None, str, int]]
) -> None:
    source = SCRATCH.replace("while 1:\n    play()\nexit()\n", stop)
    (tmp_path / "scratch.py").write_text(source)
    assert _lint(tmp_path) == expected


def test_a_notebook_cell_that_exits_leaves_the_cells_below_to_its_reader(tmp_path: Path) -> None:
    """A reader may run a cell below one that calls ``exit()``: nothing is cut from a
    notebook."""
    _notebook(tmp_path, HEAD + "exit()\n", "max_sequence_len = 40\n" + LOOP)
    assert _lint(tmp_path) == [("generate.ipynb", 2, "TFL402", 5)]


def test_units_below_the_end_are_not_blanked_twice(tmp_path: Path) -> None:
    """sciann's example (whole run of stop 54): a module-level ``raise`` above a long tail whose
    functions the prefilter leaves out. Failed before: the tail, blanked into one string, was
    blanked again unit by unit, and the quotes put inside it made the file TFL001."""
    steps = "".join(f"    x = x + {i}\n" for i in range(20))
    helpers = f"\n\ndef helper(x):\n{steps}    return x\n"
    source = (
        "import tensorflow as tf\n\n"
        'model = tf.keras.models.load_model("m.keras")\n'
        "for x in data:\n    model.predict(x)\n"
        "raise ValueError\n" + helpers + "".join(f"y_{i} = helper({i})\n" for i in range(20))
    )
    (tmp_path / "example.py").write_text(source)
    result = lint_paths([tmp_path], Settings(select=("ALL",)), jobs=1)
    assert [(d.code, d.start.line) for d in result.diagnostics] == [("TFL402", 5)]
