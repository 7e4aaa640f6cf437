"""Do the linter and IPython agree on which notebook cells are Python?

For every code cell of every notebook under ROOT (default: the real-code corpus extracted into
``benchmarks/.cache/realcode/``, see ``realcode/README.md``), IPython is the oracle: a cell runs
when ``TransformerManager().transform_cell`` turns it into Python that parses (for a cell magic
that runs its body as Python, ``%%time``, when the body does). The linter agrees when it lints
exactly the cells IPython runs and reports the others as TFL001. Notebooks of other kernels (R,
Julia) are skipped by the linter and counted apart.

    python benchmarks/notebooks.py [ROOT] [--list]

IPython is a development dependency (the ``dev`` extra); the linter itself never imports it.
"""

from __future__ import annotations

import ast
import functools
import json
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from tflint_leaks.engine.notebook import NotebookError, cell_source, read_notebook

DEFAULT_ROOT = Path(__file__).resolve().parent / ".cache" / "realcode"
#: Cell magics whose body IPython runs as Python in the notebook's namespace.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})


@functools.cache
def ipython_runs(source: str) -> bool:
    """Whether IPython turns the cell into Python that parses: the oracle."""
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        with warnings.catch_warnings():  # IPython warns about lines it splits oddly
            warnings.simplefilter("ignore")
            code = TransformerManager().transform_cell(source)
        tree = ast.parse(code)
    except Exception:  # IPython refuses the cell, however it says so
        return False
    body = _python_cell_magic_body(tree)
    return body is None or ipython_runs(body)


def _python_cell_magic_body(tree: ast.Module) -> str | None:
    """The body of ``get_ipython().run_cell_magic('time', '', BODY)`` when the magic runs its
    body as Python (IPython transforms and compiles it when the cell runs)."""
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return None
    call = tree.body[0].value
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "run_cell_magic"
        and len(call.args) == 3
        and all(isinstance(arg, ast.Constant) for arg in call.args)
    ):
        return None
    name, _, body = (arg.value for arg in call.args if isinstance(arg, ast.Constant))
    return body if name in PYTHON_CELL_MAGICS and isinstance(body, str) else None


@dataclass
class Counts:
    notebooks: int = 0
    unreadable: int = 0
    other_kernels: int = 0
    cells: int = 0
    ipython_runs: int = 0
    ipython_rejects: int = 0
    #: (notebook, cell number, what IPython does, what the linter does)
    disagreements: list[tuple[str, int, str, str]] = field(default_factory=list)


def measure(root: Path) -> Counts:
    counts = Counts()
    for path in sorted(root.rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        counts.notebooks += 1
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            notebook = read_notebook(path, text)
        except NotebookError:
            counts.unreadable += 1
            continue
        if getattr(notebook, "note", None):
            counts.other_kernels += 1
            continue
        rejected = {bad.cell for bad in notebook.bad_cells}
        for number, cell in enumerate(json.loads(text)["cells"], start=1):
            if not isinstance(cell, dict) or cell.get("cell_type") != "code":
                continue
            counts.cells += 1
            runs = ipython_runs(cell_source(cell))
            counts.ipython_runs += runs
            counts.ipython_rejects += not runs
            if runs == (number in rejected):
                ipython = "runs" if runs else "rejects"
                linter = "TFL001" if number in rejected else "lints"
                counts.disagreements.append((str(path.relative_to(root)), number, ipython, linter))
    return counts


def main(argv: list[str]) -> int:
    listing = "--list" in argv
    arguments = [a for a in argv if a != "--list"]
    root = Path(arguments[0]) if arguments else DEFAULT_ROOT
    counts = measure(root)
    print(
        f"{counts.notebooks} notebooks ({counts.unreadable} unreadable, "
        f"{counts.other_kernels} of other kernels skipped), {counts.cells} code cells: "
        f"IPython runs {counts.ipython_runs}, rejects {counts.ipython_rejects}; "
        f"the linter disagrees on {len(counts.disagreements)}"
    )
    if listing:
        for notebook, cell, ipython, linter in counts.disagreements:
            print(f"  {notebook}: cell {cell}: IPython {ipython}, the linter {linter}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
