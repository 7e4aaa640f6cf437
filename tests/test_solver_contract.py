"""What the whole-program engine must guarantee, whatever computes it (issue 17): one answer
whatever the order of the questions, and an end on every input.

Black-box: these tests lint files through :func:`lint_paths` and the command line only. A
project of 16 files or more is linted with workers, so a project small enough to read is padded
with files that define nothing (``pad/``) when ``--jobs 2`` must mean two processes.

- A property test generates small multi-file projects (a package whose ``__init__`` re-exports
  its modules, import cycles, call cycles, inheritance cycles and chains, ``tf.function``\\s
  called and Keras models built in loops through helpers) and checks that the findings are the
  same with one and two processes, in any order of the paths, and from a warm cache.
- The two reproductions of issue 17, exactly.
- A 5,000-module re-export chain, a 2,000-class hierarchy and a 2,000-function call cycle end
  with the findings their short versions give.
"""

from __future__ import annotations

import os
import re
import tempfile
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tflint_leaks.cli import main
from tflint_leaks.config import Settings
from tflint_leaks.engine.runner import RunResult, lint_paths

EVERY_RULE = Settings(select=("ALL",))
#: Enough files for the runner to use workers.
PADDING = 16
EXAMPLES = int(os.environ.get("TFLINT_FUZZ_EXAMPLES", "0"))
TFL401 = (
    "TFL401 `{name}` builds a new Keras model every iteration and the loop never calls "
    "`clear_session()`; Keras' global state grows with each model (`del` and `gc.collect()` do "
    "not release it)"
)
TFL403 = (
    "TFL403 a model built every iteration is `fit` here; since TensorFlow 2.11 each `fit` "
    "registers gradient functions globally that keep its graphs alive even after "
    "`clear_session()` (tensorflow/tensorflow#61791); run each trial in a fresh process"
)
BUILD = "tf.keras.Sequential([tf.keras.layers.Dense(1)])"

#: A script's loop that makes ``model`` with ``call`` and fits it (lines 5 to 8 after two imports).
LOOP = "\n\ndef train(data):\n    for x in data:\n        model = {call}\n        model.fit(x)\n"

Key = tuple[str, str, int, int, str]


def _key(result: RunResult) -> list[Key]:
    return [(d.code, d.file, d.start.line, d.start.column, d.message) for d in result.diagnostics]


def _write(root: Path, files: dict[str, str], *, padded: bool = False) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    if padded:
        for number in range(PADDING):
            _write(root, {f"pad/p{number}.py": f"VALUE = {number}\n"})
    (root / "pyproject.toml").write_text("[tool.tflint-leaks]\n")


def _built_and_fitted(train: Path, name: str) -> list[str]:
    """The output for a ``LOOP`` in ``train`` whose ``call`` builds a new Keras model."""
    return [
        f"{train}:7:17: {TFL401.format(name=name)}",
        f"{train}:8:9: {TFL403}",
        "Found 2 warnings.",
    ]


def _lines(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, list[str]]:
    code = main(["--no-cache", "--select", "ALL", *argv])
    return code, capsys.readouterr().out.splitlines()


# -- generated projects ----------------------------------------------------------------------


#: A name imported round the package's re-exports and defined nowhere (issue 17's ``Dense``).
GHOST = "Ghost"


class _Project:
    """The names of a generated project, where each is defined, and how they are imported."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw
        self.count = draw(st.integers(2, 4))
        self.functions = {m: [f"f{m}{j}" for j in range(draw(st.integers(1, 3)))] for m in self}
        self.classes = {m: [f"C{m}{j}" for j in range(draw(st.integers(0, 2)))] for m in self}
        self.steps = {m: [f"step{m}"] if draw(st.booleans()) else [] for m in self}
        self.home = {
            name: m for m in self for name in self.functions[m] + self.classes[m] + self.steps[m]
        }
        self.every_function = sorted(n for names in self.functions.values() for n in names)
        self.every_class = sorted(n for names in self.classes.values() for n in names)
        self.every_step = sorted(n for names in self.steps.values() for n in names)
        #: ``pkg/__init__.py`` imports its submodules (``from pkg import m0``), and code may call
        #: ``pkg.m0.f00()``.
        self.submodules = draw(st.booleans())
        if draw(st.booleans()):  # imported by its "home" from the package, which imports it back
            self.home[GHOST] = draw(st.sampled_from(range(self.count)))
        #: The names some module imports from ``pkg``: its ``__init__`` must re-export them.
        self.through_package: set[str] = set()

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.count))

    def pick(self, names: list[str]) -> str:
        return self.draw(st.sampled_from(names))

    def call(self, name: str) -> str:
        """How code refers to ``name``: by its imported name, or through the package's
        submodule (``pkg.m0.f00``)."""
        if self.submodules and self.draw(st.booleans()):
            return f"pkg.m{self.home[name]}.{name}"
        return name

    def function_body(self) -> str:
        callee = self.call(self.pick(self.every_function))
        choices = [
            f"return {BUILD}",
            f"return {callee}(c)",
            f"return {callee}(c)",
            f"if c:\n    return {callee}(c - 1)\nreturn {BUILD}",
            "return c + 1",
        ]
        if self.every_step:
            step = self.pick(self.every_step)
            choices.append(f"for i in range(100):\n    {step}(tf.ones([1]), i)\nreturn i")
        if self.every_class:
            choices.append(f"return {self.call(self.pick(self.every_class))}()")
        return self.pick(choices)

    def class_body(self) -> str:
        callee = self.call(self.pick(self.every_function))
        return self.pick(
            [
                "pass",
                f"def rollout(self, data):\n    for x in data:\n        self.predict(x)\n"
                f"    return {callee}(0)",
                f"def call(self, x):\n    return {callee}(x)",
            ]
        )

    def training(self, name: str) -> str:
        """A function whose loop builds and fits models, calls ``tf.function``\\s and agents."""
        loop = [f"model = {self.call(self.pick(self.every_function))}(0)", "model.fit(x)"]
        if self.every_step:
            loop.append(f"{self.call(self.pick(self.every_step))}(tf.ones([1]), step)")
        if self.every_class:
            loop += [f"agent = {self.call(self.pick(self.every_class))}()", "agent.predict(x)"]
        if GHOST in self.home:
            loop.append(f"{GHOST}.fit(x)")
        body = textwrap.indent("\n".join(self.draw(st.permutations(loop))), " " * 8)
        return f"def {name}(data):\n    for step, x in enumerate(data):\n{body}"

    def used(self, code: str) -> set[str]:
        return {name for name in self.home if re.search(rf"\b{name}\b", code)}

    def imports(self, module: int | None, code: str) -> str:
        """``import tensorflow`` and an import of each name ``code`` uses from elsewhere (the
        ghost from the package, in its "home" too)."""
        lines = ["import tensorflow as tf"]
        if "pkg." in code:
            lines.append("import pkg")
        for name in sorted(self.used(code)):
            home = self.home[name]
            if home == module and name != GHOST:
                continue
            style = "package"
            if module is not None and home != module:
                style = self.pick(["module", "relative", "package"])
            if style == "package":
                self.through_package.add(name)
                lines.append(f"from pkg import {name}")
            else:
                where = f".m{home}" if style == "relative" else f"pkg.m{home}"
                lines.append(f"from {where} import {name}")
        return "\n".join(lines)

    def module(self, m: int) -> str:
        blocks = [f"@tf.function\ndef {name}(x, n):\n    return x * n" for name in self.steps[m]]
        for name in self.functions[m]:
            blocks.append(f"def {name}(c):\n{textwrap.indent(self.function_body(), '    ')}")
        for name in self.classes[m]:
            base = self.pick(["tf.keras.Model", "object", *self.every_class])
            blocks.append(f"class {name}({base}):\n{textwrap.indent(self.class_body(), '    ')}")
        if self.draw(st.booleans()):
            blocks.append(self.training(f"train{m}"))
        code = "\n\n\n".join(blocks)
        return f"{self.imports(m, code)}\n\n\n{code}\n"

    def script(self) -> str:
        code = "\n\n\n".join(
            self.training(f"train_{n}") for n in range(self.draw(st.integers(1, 2)))
        )
        return f"{self.imports(None, code)}\n\n\n{code}\n"

    def package(self) -> str:
        """``pkg/__init__.py``: every name imported through it, star re-exports, and the
        submodules."""
        lines = [f"from pkg.m{self.home[n]} import {n}" for n in sorted(self.through_package)]
        lines += [f"from .m{m} import *" for m in self if self.draw(st.booleans())]
        if self.submodules:
            lines += [self.pick([f"from pkg import m{m}", f"from . import m{m}"]) for m in self]
        return "".join(f"{line}\n" for line in self.draw(st.permutations(lines)))


@st.composite
def projects(draw: st.DrawFn) -> dict[str, str]:
    """A package ``pkg`` of 2 to 4 modules and a script ``main.py``: functions that build Keras
    models and call each other (cycles across modules included), classes whose bases are Keras
    models or each other (chains and cycles), ``tf.function``\\s, and loops that call them;
    names imported from their module or through the package's re-exports, which import from the
    modules back, or reached through the package's submodules; sometimes a name imported round
    the re-exports and defined nowhere."""
    project = _Project(draw)
    files = {f"pkg/m{m}.py": project.module(m) for m in project}
    files["main.py"] = project.script()
    files["pkg/__init__.py"] = project.package()
    return files


@pytest.mark.fuzz
@settings(
    max_examples=EXAMPLES or 10,
    deadline=None,
    derandomize=not EXAMPLES,
    # Each example lints six times; without TFLINT_FUZZ_EXAMPLES a failure is reported as found
    # (Hypothesis prints the project), not shrunk for minutes.
    phases=tuple(Phase) if EXAMPLES else (Phase.explicit, Phase.reuse, Phase.generate),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(project=projects(), data=st.data())
def test_findings_do_not_depend_on_processes_order_or_cache(
    project: dict[str, str], data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "project"
        _write(root, project, padded=True)
        files = sorted(str(path) for path in root.rglob("*.py"))
        order = data.draw(st.permutations(files), label="order")
        cold = _key(lint_paths([root], EVERY_RULE))
        assert not [key for key in cold if key[0] == "TFL002"], cold
        cache = Path(scratch) / "cache"
        runs = {
            "--jobs 2": lint_paths([root], EVERY_RULE, jobs=2),
            "paths in another order": lint_paths(order, EVERY_RULE),
            "another order, --jobs 2": lint_paths(order, EVERY_RULE, jobs=2),
            "cache written": lint_paths([root], EVERY_RULE, cache_dir=cache),
            "warm cache, --jobs 2": lint_paths([root], EVERY_RULE, jobs=2, cache_dir=cache),
        }
        for name, result in runs.items():
            assert _key(result) == cold, name


# -- the reproductions of issue 17 -----------------------------------------------------------

REEXPORT_CYCLE = {
    "pkg/__init__.py": "from pkg.layers import Dense\n",
    "pkg/layers.py": "from pkg import Dense\n",
    "train.py": textwrap.dedent(
        """\
        import tensorflow as tf
        from pkg import Dense


        @tf.function
        def step(x, layer):
            return layer(x)


        def train(data):
            for i, x in enumerate(data):
                layer = Dense
                layer.fit(x)
                step(x, Dense)
        """
    ),
}


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_reexport_cycle_resolves_to_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], jobs: str
) -> None:
    """Issue 17's reproduction: ``Dense`` is imported round a cycle and defined nowhere, so it is
    unknown, as an undefined name is. Failed before: eight TFL002 ``RecursionError`` on
    ``train.py`` and exit 2."""
    _write(tmp_path, REEXPORT_CYCLE, padded=True)
    assert _lines(capsys, ["--jobs", jobs, str(tmp_path)]) == (0, ["All checks passed!"])


def test_a_reexport_cycle_keeps_what_it_does_define(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The package's other name, defined in the module of the cycle, is still a model builder
    (what ``build`` gives without the cycle)."""
    files = {
        "pkg/__init__.py": "from pkg.layers import Dense, build\n",
        "pkg/layers.py": f"import tensorflow as tf\nfrom pkg import Dense\n\n\n"
        f"def build():\n    return {BUILD}\n",
        "train.py": "import tensorflow as tf\nfrom pkg import Dense, build\n"
        + LOOP.format(call="build()")
        + "        Dense.fit(x)\n",
    }
    _write(tmp_path, files)
    train = tmp_path / "train.py"
    assert _lines(capsys, [str(train)]) == (1, _built_and_fitted(train, "build"))


def test_a_package_that_imports_its_own_submodule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``from pkg import layers`` in ``pkg/__init__.py`` names the submodule ``pkg/layers.py``,
    not the package's own global: ``pkg.layers.dense()`` is the builder, as with ``import
    pkg.layers``. Failed before: RecursionError (``global_type`` of ``pkg.layers`` asked
    ``pkg/__init__.py`` again), the crash of 15 of the 38 libraries of
    ``benchmarks/libraries.toml`` (``larq/__init__.py``: ``from larq import layers``)."""
    files = {
        "pkg/__init__.py": "from pkg import layers\n",
        "pkg/layers.py": f"import tensorflow as tf\n\n\ndef dense():\n    return {BUILD}\n",
        "train.py": "import tensorflow as tf\nimport pkg\n"
        + LOOP.format(call="pkg.layers.dense()"),
    }
    _write(tmp_path, files)
    train = tmp_path / "train.py"
    assert _lines(capsys, [str(tmp_path)]) == (1, _built_and_fitted(train, "pkg.layers.dense"))


CALL_CYCLE = {
    "lib.py": textwrap.dedent(
        f"""\
        import tensorflow as tf


        def f(c):
            return g(c)


        def g(c):
            if c:
                return f(c)
            return {BUILD}
        """
    ),
    "a.py": "from lib import g\n\n\ndef train(data):\n    for x in data:\n"
    "        model = g(0)\n        model.fit(x)\n",
    "b.py": "from lib import f\n\n\ndef train(data):\n    for x in data:\n"
    "        model = f(0)\n        model.fit(x)\n",
}


@pytest.mark.parametrize(
    "paths",
    [["."], ["b.py", "a.py", "lib.py"], ["b.py"], ["--jobs", "2", "."]],
    ids=["directory", "b first", "b alone", "two processes"],
)
def test_a_call_cycle_has_one_answer_whatever_is_asked_first(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    paths: list[str],
) -> None:
    """Issue 17's second reproduction: ``f`` and ``g`` call each other and ``g`` builds a model,
    so both return a new Keras model every call: the answer of the same code without the cycle.
    Failed before: asked first about ``f`` (``b.py`` first, alone, or in its own worker), the cut
    cycle made ``f`` build "a Keras model" (not a new one) and TFL403 was lost."""
    _write(tmp_path, CALL_CYCLE, padded=True)
    monkeypatch.chdir(tmp_path)
    a = [f"a.py:6:17: {TFL401.format(name='g')}", f"a.py:7:9: {TFL403}"]
    b = [f"b.py:6:17: {TFL401.format(name='f')}", f"b.py:7:9: {TFL403}"]
    expected = (b, "Found 2 warnings.") if paths == ["b.py"] else (a + b, "Found 4 warnings.")
    assert _lines(capsys, paths) == (1, [*expected[0], expected[1]])


# -- inputs as deep as real code can be -------------------------------------------------------


def _reexport_chain() -> dict[str, str]:
    """``pkg`` re-exports ``build`` from ``m0``, which imports it from ``m1``, ... to ``m4999``,
    which defines it."""
    files = {"pkg/__init__.py": "from pkg.m0 import build\n"}
    for number in range(4999):
        files[f"pkg/m{number}.py"] = f"from pkg.m{number + 1} import build\n"
    files["pkg/m4999.py"] = f"import tensorflow as tf\n\n\ndef build():\n    return {BUILD}\n"
    return files


def _class_hierarchy() -> dict[str, str]:
    """``C1999`` derives from ``C1998`` ... from ``C0``, a ``tf.keras.Model``."""
    classes = ["class C0(tf.keras.Model):\n    pass\n"]
    classes += [f"class C{n}(C{n - 1}):\n    pass\n" for n in range(1, 2000)]
    return {"models.py": "import tensorflow as tf\n\n\n" + "\n\n".join(classes)}


def _call_cycle() -> dict[str, str]:
    """``f0`` builds a model or calls ``f1``, which calls ``f2`` ... ``f1999``, which calls
    ``f0``: every function of the cycle returns a new Keras model."""
    functions = [f"def f0(c):\n    if c:\n        return f1(c - 1)\n    return {BUILD}\n"]
    functions += [f"def f{n}(c):\n    return f{(n + 1) % 2000}(c)\n" for n in range(1, 2000)]
    return {"chain.py": "import tensorflow as tf\n\n\n" + "\n\n".join(functions)}


@pytest.mark.parametrize(
    ("project", "imported", "call"),
    [
        (_reexport_chain, "from pkg import build", "build"),
        (_class_hierarchy, "from models import C1999", "C1999"),
        (_call_cycle, "from chain import f1000", "f1000"),
    ],
    ids=["5000-module re-export chain", "2000-class hierarchy", "2000-function call cycle"],
)
def test_deep_code_gives_what_its_short_version_gives(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    project: Callable[[], dict[str, str]],
    imported: str,
    call: str,
) -> None:
    """Each builds a new Keras model in a loop: what three modules, classes or functions give
    (no depth of imports, bases or calls is a limit). Failed before: no finding with 6
    re-exports (3 are found) or 50 bases (6 are found); the cycle crashed the run with a
    RecursionError (with 3 functions it gave TFL401 "builds a Keras model" and no TFL403)."""
    arguments = "0" if call.startswith("f") else ""
    files = project()
    files["train.py"] = f"import tensorflow as tf\n{imported}\n" + LOOP.format(
        call=f"{call}({arguments})"
    )
    _write(tmp_path, files)
    train = tmp_path / "train.py"
    assert _lines(capsys, [str(tmp_path)]) == (1, _built_and_fitted(train, call))


# -- specialization that could go on without end ----------------------------------------------

#: The unknowns a run of the projects below may solve at most: a few hundred are needed; a
#: run that specializes a recursive function for every value it computes never stops.
MAX_EVALUATIONS = 20_000

RECURSIVE = {
    # tensorflow-fewshot's second-order MAML gradients (unseen set R of stop 43): each call
    # passes `n_step - 1`, whose value decides the `if` of the call it makes.
    "direct.py": textwrap.dedent(
        """\
        import tensorflow as tf


        def n_step_grads(model, n_step, data):
            if n_step == 1:
                with tf.GradientTape() as tape:
                    loss = model(data)
                return tape.gradient(loss, model.variables)
            with tf.GradientTape() as tape:
                grads = n_step_grads(model, n_step - 1, data)
                loss = model(data)
            return tape.gradient(loss, model.variables)


        def meta_train(model, tasks, n_episode, n_step=1):
            for i in range(n_episode):
                for x in tasks():
                    n_step_grads(model, n_step, x)
        """
    ),
    # The same through two functions that call each other.
    "mutual.py": textwrap.dedent(
        """\
        import tensorflow as tf


        def even(model, depth, data):
            if depth == 1:
                with tf.GradientTape() as tape:
                    loss = model(data)
                return tape.gradient(loss, model.variables)
            with tf.GradientTape() as tape:
                grads = odd(model, depth - 1, data)
                loss = model(data)
            return tape.gradient(loss, model.variables)


        def odd(model, depth, data):
            if depth == 1:
                return model(data)
            with tf.GradientTape() as tape:
                grads = even(model, depth - 1, data)
                loss = model(data)
            return tape.gradient(loss, model.variables)


        def train(model, batches, depth=1):
            for x in batches():
                even(model, depth, x)
        """
    ),
}


@pytest.mark.parametrize("name", sorted(RECURSIVE))
def test_a_recursive_call_on_a_computed_value_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Failed before: a summary specialized for what a call passes asked for the summary of
    the recursive call specialized for what it passes (`n_step - 1`: 0, -1, -2 ...), each a
    new unknown, without end (TFL101 never finished on tensorflow-fewshot). A call within a
    cycle of the call graph now asks for the summary every call shares."""
    from tflint_leaks.analysis import solver

    start = solver.Solver._start

    def bounded(self: solver.Solver, query: tuple[object, ...]) -> object:
        assert self.evaluations < MAX_EVALUATIONS, f"no end in sight: {query!r:.200}"
        return start(self, query)

    monkeypatch.setattr(solver.Solver, "_start", bounded)
    _write(tmp_path, {name: RECURSIVE[name]})
    result = lint_paths([tmp_path], EVERY_RULE, jobs=1, prefilter=False)
    assert not [d for d in result.diagnostics if d.code in {"TFL001", "TFL002"}]
