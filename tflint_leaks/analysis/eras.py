"""What a module's own code says of the versions it runs on: it calls what only some of them
have.

A project without pins still says which Keras it runs when it calls
``Convolution2D(32, 3, 3, border_mode="same")``: that argument is Keras 1's, which multi-backend
Keras 2 (before 2.4) still took through its legacy interfaces and which Keras 2.4 (``tf.keras``
under another name) and Keras 3 reject. A module that calls ``xrange`` runs on Python 2, whose
last TensorFlow is 2.1 and whose last Keras is 2.3. Each such call is a :class:`CodePin`, with
the line that says so; :meth:`~tflint_leaks.analysis.project.ProjectIndex.world` adds them to
what the pin files say (:meth:`~tflint_leaks.frameworks.Frameworks.constrained`).

Read from the libraries' own history:

- Keras 2.0 to 2.3 convert Keras 1's argument names with a warning (``keras/legacy/
  interfaces.py``: ``border_mode`` -> ``padding``, ``subsample`` -> ``strides``, ``init`` ->
  ``kernel_initializer``, ``W_regularizer`` -> ``kernel_regularizer``, ``nb_epoch`` ->
  ``epochs``, ``output_dim`` -> ``units`` for ``Dense`` and the recurrent layers, whose
  ``Embedding`` keeps ``output_dim``); Keras 2.4 removed the legacy interfaces with the other
  backends.
- ``keras.engine.topology`` is multi-backend Keras's module of ``Layer``, ``InputSpec`` and
  ``Container`` (a shim of ``base_layer`` and ``network`` from 2.2); Keras 2.4 and later have
  none ("No module named 'keras.engine.topology'": CrockettLab/outrage_classifier#2, fixed by
  importing ``Layer`` from ``keras.layers``).
- ``Model._make_predict_function`` is a method of multi-backend Keras and of TensorFlow 1's
  ``tf.keras``; Keras 2.4 has none.
- ``keras.backend.image_dim_ordering()`` and ``set_image_dim_ordering()`` are Keras 1's names
  that multi-backend Keras 2 kept for Theano's channel order; ``tf.keras`` never had them, so
  neither has Keras 2.4 (``tf.keras`` under another name) nor Keras 3 (neither the installed
  ``tf_keras`` 2.21 nor Keras 3.15 defines them).
- The ``Merge`` layer (Keras 1's, kept by Keras 2.0 and 2.1 as a deprecated legacy layer) is
  gone from Keras 2.2 ("Simplify implementation of Sequential and remove legacy Merge
  support": keras-team/keras#10077; "ImportError: cannot import name 'Merge'" with 2.2.0:
  keras-team/keras#10409).
- ``keras.legacy`` is gone from Keras 2.4 ("No module named 'keras.legacy'" with 2.4.3:
  keras-team/keras#14665), and ``keras_contrib`` is keras-contrib, built for multi-backend
  Keras ("Install keras_contrib for keras-team/keras"; its last snapshot is of 2019-12, before
  Keras 2.4 dropped the other backends; it was then deprecated for TensorFlow Addons).
- ``multi_gpu_model`` left ``tf.keras.utils`` with TensorFlow 2.4, and so Keras 2.4's
  ``keras.utils`` (keras-team/keras#14397, #14440). CleverHans 3.1 and before run on
  TensorFlow 1; 4.0 has no ``cleverhans.attacks``, ``utils_tf``, ``utils_keras`` nor ``model``
  (cleverhans-lab/cleverhans#1216, #1244).
- ``adabelief_tf``'s ``AdaBeliefOptimizer`` subclasses ``tf.keras.optimizers.Optimizer`` and calls
  its ``_set_hyper`` in ``__init__``; TensorFlow 2.11 made that class the new optimizer, which has
  no ``_set_hyper`` ("'AdaBeliefOptimizer' object has no attribute '_set_hyper'" with TensorFlow
  2.15: juntang-zhuang/Adabelief-Optimizer#66; the port to 2.11, #68, was never merged), so a
  program that uses it runs TensorFlow before 2.11.
- TensorFlow 2.1 is the last release for Python 2 (its release notes), Keras 2.3 the last
  multi-backend release; ``xrange``, ``raw_input``, ``unichr`` and ``execfile`` are builtins of
  Python 2 only.
- Multi-backend Keras writes "Using TensorFlow backend." (or Theano's, CNTK's) to stderr when
  it is imported (``keras/backend/__init__.py`` up to 2.3); Keras 2.4 is ``tf.keras`` under
  another name and writes nothing. A notebook whose saved outputs hold that line ran on
  multi-backend Keras (:func:`banner_pin`).
- Colab's line magic ``%tensorflow_version 1.x`` made the notebook import TensorFlow 1.15
  (``2.x``: TensorFlow 2) until Colab dropped TensorFlow 1 in 2022: it says which TensorFlow
  the notebook was written for, as a pin does (:func:`magic_pin`; the notebook reader keeps
  the line, which IPython runs instead of Python).

Only calls through the standalone ``keras`` package pin Keras; nothing here runs project code.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass

from tflint_leaks.analysis.dtypes import dotted_ast
from tflint_leaks.frameworks import (
    KERAS_3_BACKENDS,
    THEANO_SETTING,
    keras_backends,
    theano_settings,
)

#: Keras 1's argument names that Keras 2 (before 2.4) still took.
KERAS_1_ARGUMENTS = frozenset(
    {
        "border_mode",
        "subsample",
        "nb_filter",
        "nb_row",
        "nb_col",
        "init",
        "W_regularizer",
        "b_regularizer",
        "W_constraint",
        "b_constraint",
        "dim_ordering",
        "nb_epoch",
        "samples_per_epoch",
        "nb_val_samples",
        "nb_worker",
    }
)
#: Keras 1's ``output_dim`` is ``units`` from Keras 2 on, except for these layers.
_OUTPUT_DIM_KEPT = frozenset({"Embedding"})
#: Methods that only multi-backend Keras has (and TensorFlow 1's ``tf.keras``).
MULTI_BACKEND_METHODS = frozenset({"_make_predict_function", "_make_train_function"})
#: Functions of multi-backend Keras's ``keras.backend`` only.
MULTI_BACKEND_FUNCTIONS = frozenset({"image_dim_ordering", "set_image_dim_ordering"})
KERAS_BEFORE_2_4 = "<2.4"
#: Keras 3, the first with backends other than TensorFlow, Theano and CNTK.
KERAS_3 = ">=3"
#: The family of a code pin that chooses Keras' backend (its specifier is the backend).
KERAS_BACKEND = "keras-backend"
TENSORFLOW_BEFORE_2_11 = "<2.11"
#: Modules (or names of a module) whose import says which versions the program runs: the
#: family and its specifier, and what the module is, for messages. A module of the
#: ``"keras"`` family pins the standalone Keras of a program that imports it.
VERSIONED_MODULES: dict[str, tuple[str, str, str]] = {
    "keras.legacy": ("keras", KERAS_BEFORE_2_4, "a module for multi-backend Keras only"),
    "keras_contrib": ("keras", KERAS_BEFORE_2_4, "a module for multi-backend Keras only"),
    "keras.engine.topology": ("keras", KERAS_BEFORE_2_4, "a module of multi-backend Keras only"),
    # TensorFlow 2's Keras has no cuDNN layers (its GRU and LSTM choose cuDNN themselves).
    "keras.layers.CuDNNGRU": ("keras", KERAS_BEFORE_2_4, "a layer of multi-backend Keras only"),
    "keras.layers.CuDNNLSTM": ("keras", KERAS_BEFORE_2_4, "a layer of multi-backend Keras only"),
    "keras.layers.Merge": ("keras", "<2.2", "a layer Keras 2.2 removed"),
    # Removed from tf.keras in TensorFlow 2.4 (tensorflow/tensorflow@29372ca, "Did 2.4 version
    # tf.keras remove the multi_gpu_model method?": keras-team/keras#14397), and so from Keras
    # 2.4, tf.keras under another name ("cannot import name 'multi_gpu_model'" with Keras 2.4.3
    # and TensorFlow 2.4.1: keras-team/keras#14440).
    "keras.utils.multi_gpu_model": ("keras", KERAS_BEFORE_2_4, "a function Keras 2.4 removed"),
    "tensorflow.keras.utils.multi_gpu_model": (
        "tensorflow",
        "<2.4",
        "a function TensorFlow 2.4 removed",
    ),
    # CleverHans 3.1 and before run on TensorFlow 1 (``tf.GraphKeys``: cleverhans-lab/
    # cleverhans#1244); 4.0, the first for TensorFlow 2, has none of these modules ("No module
    # named 'cleverhans.attacks'", likewise ``utils_tf``, ``utils_keras``, ``model``: #1216).
    **{
        f"cleverhans.{module}": ("tensorflow", "<2", "a module of CleverHans for TensorFlow 1")
        for module in ("attacks", "attacks_tf", "utils_tf", "utils_keras", "model")
    },
    "adabelief_tf": (
        "tensorflow",
        TENSORFLOW_BEFORE_2_11,
        "an optimizer on `tf.keras`'s optimizer of before TensorFlow 2.11",
    ),
}
PYTHON_2_BUILTINS = frozenset({"xrange", "raw_input", "unichr", "execfile"})
#: Where the source may say its versions, for :func:`code_pins` to look at the calls of those
#: lines only: one of the arguments passed (``name=``, not ``name==``) or one of the calls
#: made; in a module that does not import standalone Keras, the Python 2 builtins alone.
_MENTIONS = re.compile(
    r"\b(?:{})\s*=(?!=)|\b(?:{})\s*\(".format(
        "|".join(sorted({*KERAS_1_ARGUMENTS, "output_dim"})),
        "|".join(sorted(MULTI_BACKEND_METHODS | MULTI_BACKEND_FUNCTIONS | PYTHON_2_BUILTINS)),
    )
)
#: An import statement of one of :data:`VERSIONED_MODULES`: the module itself, or a submodule
#: from its package (``from keras.engine import topology``).
_VERSIONED_IMPORT = re.compile(
    r"^[ \t]*(?:from|import)[ \t]+(?P<module>{})\b"
    r"|^[ \t]*from[ \t]+(?P<package>{})[ \t]+import[ \t]+[^\n#]*?\b(?P<last>{})\b".format(
        "|".join(re.escape(m) for m in VERSIONED_MODULES),
        "|".join(sorted({re.escape(m.rpartition(".")[0]) for m in VERSIONED_MODULES if "." in m})),
        "|".join(sorted({re.escape(m.rpartition(".")[2]) for m in VERSIONED_MODULES if "." in m})),
    ),
    re.MULTILINE,
)
_PYTHON_2_MENTIONS = re.compile(r"\b(?:{})\s*\(".format("|".join(sorted(PYTHON_2_BUILTINS))))

#: Colab's selector, a whole line: ``%tensorflow_version 1.x`` (a comment may follow).
_TENSORFLOW_MAGIC = re.compile(r"\s*%tensorflow_version\s+([12])(?:\.(?:x|\d+))*\s*(?:#.*)?")
_MAGIC_VERSIONS = {"1": "<2", "2": ">=2,<3"}

TENSORFLOW_FOR_PYTHON_2 = "<2.2"


@dataclass(frozen=True)
class CodePin:
    """A call that exists only in some versions of a framework."""

    #: ``"keras"`` (the standalone package), ``"tensorflow"`` or ``"python"``.
    family: str
    #: The versions that have it, as a specifier (``"<2.4"``).
    specifier: str
    #: What says so, for messages: "`border_mode=` (Keras 1's name for `padding`)".
    evidence: str
    line: int


def code_pins(
    tree: ast.Module, source: str, imports: dict[str, str], defined: frozenset[str]
) -> tuple[CodePin, ...]:
    """The first call of each kind in ``tree`` that pins a version: of ``"python"`` (a
    builtin of Python 2 only) or of the standalone ``"keras"``. ``imports``: the module's
    import bindings; ``defined``: the names the module binds itself (a module that defines or
    imports ``xrange`` does not say it runs on Python 2)."""
    standalone = imports_standalone_keras(imports)
    mentions = _MENTIONS if standalone else _PYTHON_2_MENTIONS
    lines: set[int] = set()
    line, counted = 1, 0
    for match in mentions.finditer(source):  # in order: count each stretch of text once
        line += source.count("\n", counted, match.start())
        counted = match.start()
        lines.add(line)
    found: dict[str, CodePin] = {}
    for node in _calls_on(tree, lines) if lines else ():
        func = node.func
        if isinstance(func, ast.Name) and func.id in PYTHON_2_BUILTINS:
            if func.id not in defined and func.id not in imports:
                evidence = f"`{func.id}` (a builtin of Python 2 only)"
                _keep(found, "python", CodePin("python", "<3", evidence, node.lineno))
            continue
        if not standalone:
            continue
        if isinstance(func, ast.Attribute) and func.attr in MULTI_BACKEND_METHODS:
            evidence = f"`{func.attr}()` (a method of multi-backend Keras only)"
            _keep(found, "keras", CodePin("keras", KERAS_BEFORE_2_4, evidence, node.lineno))
            continue
        backend = _backend_function(func, imports)
        if backend is not None:
            evidence = f"`{backend}()` (a function of multi-backend Keras only)"
            _keep(found, "keras", CodePin("keras", KERAS_BEFORE_2_4, evidence, node.lineno))
            continue
        argument = _keras_1_argument(node, imports)
        if argument is not None:
            evidence = f"`{argument}=` (Keras 1's name, gone from Keras 2.4)"
            _keep(found, "keras", CodePin("keras", KERAS_BEFORE_2_4, evidence, node.lineno))
    if standalone and THEANO_SETTING.search(source):
        for line_number, what in theano_settings(tree):
            evidence = f"`{what}` (Theano's settings: Keras on Theano, before 2.4)"
            _keep(found, "keras", CodePin("keras", KERAS_BEFORE_2_4, evidence, line_number))
        for line_number, backend in keras_backends(tree):
            if backend in KERAS_3_BACKENDS:
                evidence = f"`os.environ['KERAS_BACKEND'] = {backend!r}` (Keras 3 on {backend})"
                _keep(found, KERAS_BACKEND, CodePin(KERAS_BACKEND, backend, evidence, line_number))
    imported = {
        module
        for module, (family, _, _) in VERSIONED_MODULES.items()
        if (standalone or family != "keras") and any(_within(t, module) for t in imports.values())
    }
    tried = _tried_imports(tree) if imported else frozenset()
    for match in _VERSIONED_IMPORT.finditer(source) if imported else ():  # the first of each
        module = match["module"] or f"{match['package']}.{match['last']}"
        line = source.count("\n", 0, match.start()) + 1
        if module in imported and line not in tried:
            family, specifier, what = VERSIONED_MODULES[module]
            _keep(found, family, CodePin(family, specifier, f"`import {module}` ({what})", line))
    return tuple(found[key] for key in sorted(found))


def _tried_imports(tree: ast.Module) -> frozenset[int]:
    """The lines of the import statements inside a ``try`` statement (its body or its
    handlers): code that imports there runs with or without what it imports
    (``try: from keras.layers import CuDNNLSTM as LSTM`` ``except: pass``), so the import
    pins nothing."""
    return frozenset(
        inner.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Try)
        for inner in ast.walk(node)
        if isinstance(inner, ast.Import | ast.ImportFrom)
    )


def _within(name: str, module: str) -> bool:
    return name == module or name.startswith(module + ".")


def _backend_function(func: ast.expr, imports: dict[str, str]) -> str | None:
    """The multi-backend Keras function a call's ``func`` names through the module's imports
    (``K.image_dim_ordering`` with ``import keras.backend as K``)."""
    owner, _, last = (_as_imported(func, imports) or "").rpartition(".")
    return last if owner == "keras.backend" and last in MULTI_BACKEND_FUNCTIONS else None


def _as_imported(func: ast.expr, imports: dict[str, str]) -> str | None:
    """The dotted name ``func`` is, its first identifier replaced by what the module imports
    under it, as written (not canonical: ``tensorflow.keras`` is not standalone Keras)."""
    head, _, rest = (dotted_ast(func) or "").partition(".")
    target = imports.get(head)
    if target is None:
        return None
    return f"{target}.{rest}" if rest else target


def magic_pin(text: str, line: int) -> CodePin | None:
    """The TensorFlow a notebook's IPython line ``text`` (on ``line``) selects: Colab's
    ``%tensorflow_version 1.x``; None for any other line."""
    match = _TENSORFLOW_MAGIC.fullmatch(text)
    if match is None:
        return None
    major = match.group(1)
    evidence = f"`%tensorflow_version {major}.x` (Colab's TensorFlow {major} selector)"
    return CodePin("tensorflow", _MAGIC_VERSIONS[major], evidence, line)


#: What multi-backend Keras (2.3 and before) writes to stderr when it is imported
#: (``keras/backend/__init__.py``: ``sys.stderr.write('Using TensorFlow backend.\\n')``);
#: Keras 2.4, ``tf.keras`` under another name, writes nothing.
_BACKEND_BANNER = re.compile(r"^Using (TensorFlow|Theano|CNTK) backend\.\s*$", re.MULTILINE)


def banner_pin(printed: str, line: int) -> CodePin | None:
    """The Keras a notebook ran, from what one of its cells printed (``printed``, its stream
    outputs as saved, the cell on ``line``): multi-backend Keras's "Using TensorFlow
    backend." says Keras before 2.4, as a pin does. None for any other output."""
    match = _BACKEND_BANNER.search(printed)
    if match is None:
        return None
    evidence = f"the output `{match.group(0).strip()}` (multi-backend Keras, before 2.4)"
    return CodePin("keras", KERAS_BEFORE_2_4, evidence, line)


def _keep(found: dict[str, CodePin], key: str, pin: CodePin) -> None:
    """Keep the pin of ``key`` on the first line."""
    if key not in found or pin.line < found[key].line:
        found[key] = pin


def _calls_on(tree: ast.Module, lines: set[int]) -> Iterator[ast.Call]:
    """The calls of ``tree`` whose lines hold one of ``lines``, in no particular order; the
    subtrees that hold none of them are not entered."""
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        start = getattr(node, "lineno", None)
        if start is not None:
            end = getattr(node, "end_lineno", None) or start
            if not any(start <= line <= end for line in lines):
                continue
            if isinstance(node, ast.Call):
                yield node
        todo.extend(ast.iter_child_nodes(node))


def imports_standalone_keras(imports: dict[str, str]) -> bool:
    """The module imports the standalone ``keras`` package (not ``tensorflow.keras``)."""
    return any(target.split(".")[0] == "keras" for target in imports.values())


def imports_tensorflow(imports: dict[str, str]) -> bool:
    """The module imports TensorFlow (``tensorflow`` or anything in it)."""
    return any(target.split(".")[0] == "tensorflow" for target in imports.values())


def framework_pins(pin: CodePin, standalone: bool) -> list[tuple[str, str]]:
    """What one code pin says of TensorFlow and the standalone Keras (each a family and a
    specifier), in a program that imports standalone Keras or not: Python 2 runs TensorFlow
    before 2.2 and Keras before 2.4."""
    if pin.family == "python":
        found = [("tensorflow", TENSORFLOW_FOR_PYTHON_2)]
        return [*found, ("keras", KERAS_BEFORE_2_4)] if standalone else found
    if pin.family == KERAS_BACKEND:
        return [("keras", KERAS_3)]  # the backends other than TensorFlow came with Keras 3
    return [(pin.family, pin.specifier)]


def _keras_1_argument(node: ast.Call, imports: dict[str, str]) -> str | None:
    """The Keras 1 argument a call of standalone Keras passes (``fit(nb_epoch=...)`` on any
    receiver: ``fit`` of a Keras model is the only ``fit`` that takes it)."""
    names = [k.arg for k in node.keywords if k.arg is not None]
    if not names:
        return None
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in {"fit", "fit_generator"}:
        return next((n for n in names if n in KERAS_1_ARGUMENTS), None)
    called = _as_imported(func, imports) or ""
    if called.split(".")[0] != "keras":
        return None
    layer = called.rpartition(".")[2]
    for name in names:
        if name in KERAS_1_ARGUMENTS:
            return name
        if name == "output_dim" and layer not in _OUTPUT_DIM_KEPT:
            return name
    return None
