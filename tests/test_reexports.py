"""A library's name imported through the project's re-exports (``from xuance.tensorflow import
tf``, whose ``__init__`` does ``import tensorflow as tf``) is that library's name: the facts read
from call names (``@tf.function``, ``tf.GradientTape``) are the same as with the direct import;
with the cache too, and the cache never keeps what another file re-exports."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tflint_leaks.analysis.index import index_source
from tflint_leaks.analysis.project import ProjectIndex
from tflint_leaks.config import Settings
from tflint_leaks.engine.runner import lint_paths

TRAIN = """\
from pkg import tf


@tf.function
def step(x, i):
    return x * i


for i in range(1000):
    step(x, i)
"""
FINDING = ("TFL101", 10, 13)


def _project(root: Path, init: str) -> Path:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text(textwrap.dedent(init))
    (root / "train.py").write_text(TRAIN)
    return root


def _found(root: Path, cache: Path | None = None, jobs: int = 1) -> list[tuple[str, int, int]]:
    result = lint_paths([root], Settings(select=("ALL",)), jobs=jobs, cache_dir=cache)
    assert not result.errors
    return [(d.code, d.start.line, d.start.column) for d in result.diagnostics]


def test_a_re_exported_tensorflow_is_tensorflow(tmp_path: Path) -> None:
    _project(tmp_path, "import tensorflow as tf\n")
    assert _found(tmp_path) == [FINDING]


def test_through_two_re_exports_and_a_submodule(tmp_path: Path) -> None:
    _project(tmp_path, "from pkg.backend import tf\n")
    (tmp_path / "pkg" / "backend.py").write_text("import tensorflow.compat.v2 as tf\n")
    assert _found(tmp_path) == [FINDING]


def test_a_project_name_of_the_same_spelling_is_not_a_library(tmp_path: Path) -> None:
    """``pkg.tf`` defined by the project (a class here) stays the project's."""
    _project(tmp_path, "class tf:\n    @staticmethod\n    def function(f):\n        return f\n")
    assert _found(tmp_path) == []


def test_a_re_export_cycle_ends(tmp_path: Path) -> None:
    _project(tmp_path, "from pkg.layers import tf\n")
    (tmp_path / "pkg" / "layers.py").write_text("from pkg import tf\n")
    modules = [index_source(path.read_text(), path) for path in sorted(tmp_path.rglob("*.py"))]
    project = ProjectIndex(modules)
    train = next(m for m in modules if m.path.endswith("train.py"))
    assert project.library_aliases(train) == {}
    assert _found(tmp_path) == []


def test_the_cache_keeps_each_files_own_index(tmp_path: Path) -> None:
    root = (
        _project(tmp_path / "repo", "import tensorflow as tf\n")
        if (tmp_path / "repo").mkdir() is None
        else tmp_path
    )
    cache = tmp_path / "cache"
    assert _found(root, cache) == [FINDING]
    assert _found(root, cache) == [FINDING]  # from the cache
    (root / "pkg" / "__init__.py").write_text("tf = None\n")
    assert _found(root, cache) == []  # train.py unchanged: its cached index was its own
    assert _found(root, cache, jobs=2) == []


def test_a_re_exported_framework_name_is_the_frameworks_for_later_questions(
    tmp_path: Path,
) -> None:
    """FastAPI's `APIRouter` passed on by a project module (baby_cry_analyzer's `services`)
    still makes a route: the alias is read by the questions asked while checking, not only by
    the index's own facts."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "services.py").write_text("from fastapi import APIRouter\n")
    (tmp_path / "app.py").write_text(
        "import tensorflow as tf\n"
        "from pkg.services import APIRouter\n\n"
        "router = APIRouter()\n"
        'model = tf.keras.models.load_model("m.keras")\n\n\n'
        '@router.post("/predict")\n'
        "def predict(x):\n"
        "    return model.predict(x)\n"
    )
    assert _found(tmp_path) == [("TFL402", 10, 12)]


ZOO = """\
import tensorflow as tf
from tensorflow.keras.applications import VGG16

EPOCHS = 3


def get_pretrained_model(name):
    return VGG16(weights=None)


def _private():
    return VGG16(weights=None)
"""

CERVICAL = """\
from zoo import *


def run(names, x, y):
    for name in names:
        model = get_pretrained_model(name)
        model.fit(x, y, epochs=EPOCHS)
        print(tf.reduce_sum(model(x)))
"""


def _messages(root: Path) -> list[tuple[str, int, int, str]]:
    result = lint_paths([root], Settings(select=("ALL",)))
    assert not result.errors
    return [(d.code, d.start.line, d.start.column, d.message) for d in result.diagnostics]


STAR_FINDINGS = [
    (
        "TFL401",
        6,
        17,
        "`get_pretrained_model` builds a new Keras model every iteration and the loop never "
        "calls `clear_session()`; Keras' global state grows with each model (`del` and "
        "`gc.collect()` do not release it)",
    ),
    (
        "TFL403",
        7,
        9,
        "a model built every iteration is `fit` here; since TensorFlow 2.11 each `fit` "
        "registers gradient functions globally that keep its graphs alive even after "
        "`clear_session()` (tensorflow/tensorflow#61791); run each trial in a fresh process",
    ),
]


def test_a_star_import_binds_the_project_modules_names(tmp_path: Path) -> None:
    """ZFTurbo's Kaggle cervical-cancer scripts: ``from a02_zoo import *`` brings the model
    factory (and ``tf``, which the module imports) into the training script."""
    (tmp_path / "zoo.py").write_text(ZOO)
    (tmp_path / "train.py").write_text(CERVICAL)
    assert _messages(tmp_path) == STAR_FINDINGS
    modules = [index_source(path.read_text(), path) for path in sorted(tmp_path.glob("*.py"))]
    train = next(m for m in modules if m.path.endswith("train.py"))
    assert ProjectIndex(modules).library_aliases(train) == {
        "EPOCHS": "zoo.EPOCHS",
        "VGG16": "tensorflow.keras.applications.VGG16",
        "get_pretrained_model": "zoo.get_pretrained_model",
        "tf": "tensorflow",
    }


def test_a_star_import_binds_only_what_all_lists(tmp_path: Path) -> None:
    (tmp_path / "zoo.py").write_text(ZOO + '\n__all__ = ["EPOCHS"]\n')
    (tmp_path / "train.py").write_text(CERVICAL)
    assert _messages(tmp_path) == []


def test_a_name_the_module_defines_itself_is_its_own(tmp_path: Path) -> None:
    (tmp_path / "zoo.py").write_text(ZOO)
    own = "def get_pretrained_model(name):\n    return name\n\n\n"
    (tmp_path / "train.py").write_text(
        CERVICAL.replace("\n\n\ndef run", "\n\n\n" + own + "def run")
    )
    assert _messages(tmp_path) == []


def test_star_imports_through_a_cycle_end(tmp_path: Path) -> None:
    """``common`` and ``zoo`` star-import each other; the names of both reach ``train``."""
    (tmp_path / "zoo.py").write_text("from common import *\n" + ZOO)
    (tmp_path / "common.py").write_text("from zoo import *\nBATCH = 32\n")
    (tmp_path / "train.py").write_text(
        CERVICAL.replace("from zoo import *", "from common import *")
    )
    modules = [index_source(path.read_text(), path) for path in sorted(tmp_path.glob("*.py"))]
    train = next(m for m in modules if m.path.endswith("train.py"))
    aliases = ProjectIndex(modules).library_aliases(train)
    assert aliases["get_pretrained_model"] == "zoo.get_pretrained_model"
    assert aliases["BATCH"] == "common.BATCH"
    assert _messages(tmp_path) == STAR_FINDINGS


def test_a_packages_name_beats_its_submodule_of_the_same_name(tmp_path: Path) -> None:
    """stable-learning-control: ``sac/__init__.py`` does ``from pkg.sac.sac import sac``, so
    ``from pkg.sac import sac`` is the function, as Python's attribute lookup finds it, not
    the submodule ``pkg/sac/sac.py``."""
    (tmp_path / "pkg" / "sac").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "sac" / "__init__.py").write_text("from pkg.sac.sac import sac\n")
    (tmp_path / "pkg" / "sac" / "sac.py").write_text(
        "import tensorflow as tf\n\n\ndef sac(units):\n"
        "    return tf.keras.Sequential([tf.keras.layers.Dense(units)])\n"
    )
    (tmp_path / "run.py").write_text(
        "from pkg.sac import sac\n\nfor trial in range(100):\n    model = sac(trial)\n"
    )
    assert _messages(tmp_path) == [
        (
            "TFL401",
            4,
            13,
            "`sac` builds a new Keras model every iteration (100 in all) and the loop never "
            "calls `clear_session()`; Keras' global state grows with each model (`del` and "
            "`gc.collect()` do not release it)",
        )
    ]


def test_a_checkout_whose_name_is_no_identifier_is_no_package(tmp_path: Path) -> None:
    """A repository with an ``__init__.py`` at its root, checked out as
    ``TensorFlow-Advanced-Segmentation-Models``: its packages are imported from the checkout,
    by their own names (``import tensorflow_advanced_segmentation_models as tasm`` in its
    examples), as the import statement cannot name the checkout."""
    root = tmp_path / "Segmentation-Models"
    (root / "tasm").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "tasm" / "__init__.py").write_text("from .nets import Net\n")
    (root / "tasm" / "nets.py").write_text(
        "import tensorflow as tf\n\n\nclass Net(tf.keras.Model):\n"
        "    def call(self, x):\n        return x\n"
    )
    (root / "examples").mkdir()
    (root / "examples" / "evaluate.py").write_text(
        "import tasm\n\nmodel = tasm.Net()\nfor image in images:\n    model.predict(image)\n"
    )
    assert _found(root) == [("TFL402", 5, 5)]
