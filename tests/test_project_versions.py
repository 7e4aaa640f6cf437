"""The TensorFlow a project pins, end to end (issue 18, part 1): what the rules report in a
TensorFlow 1 project, a Keras 3 project and an unpinned one; ``target-tensorflow`` over the pin
files; in-file signals over both; bad settings; the cache."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest

from tflint_leaks.analysis.index import index_source
from tflint_leaks.analysis.project import ProjectIndex
from tflint_leaks.cli import main
from tflint_leaks.config import Configuration, Overrides, Settings
from tflint_leaks.engine.runner import lint_paths
from tflint_leaks.frameworks import Frameworks, read_documented

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

#: A GAN book's script: `predict` in a training loop, and ops built in a session loop.
GAN = textwrap.dedent(
    """\
    import numpy as np
    import tensorflow as tf
    from keras.models import load_model

    generator = load_model("generator.h5")
    for epoch in range(10000):
        noise = np.random.normal(0, 1, (32, 100))
        images = generator.predict(noise)

    sess = tf.Session()
    x = tf.placeholder(tf.float32, [None, 4])
    logits = tf.layers.dense(x, 1)
    for sample in samples:
        prediction = sess.run(tf.round(tf.sigmoid(logits)), {x: sample})
    """
)
#: The same script through ``tf.compat.v1``: it runs on either major version.
GAN_COMPAT = (
    GAN.replace("tf.Session", "tf.compat.v1.Session")
    .replace("tf.placeholder", "tf.compat.v1.placeholder")
    .replace("tf.layers.dense", "tf.compat.v1.layers.dense")
)
PREDICT_TF2 = (
    "TFL402",
    8,
    14,
    "`generator.predict` every iteration (10000 in all) builds a new `tf.data` pipeline each "
    "call; use `generator(x, training=False)` or `predict_on_batch`",
)
PREDICT_TF1_EAGER = (
    "TFL402",
    9,
    14,
    "`generator.predict` every iteration (10000 in all) checks and batches its input and runs "
    "its callbacks anew each call; use `generator(x, training=False)` or `predict_on_batch`",
)
SESSION_LOOP = (
    "TFL503",
    14,
    27,
    "`tf.round(...)` every iteration adds nodes to the default graph of a loop that runs it "
    "(`sess.run`): the graph grows for as long as the loop runs; build it once before the loop "
    "(`graph.finalize()` catches this)",
)

#: Grad-CAM per image with Keras: `predict` runs the graph only where TensorFlow 1 runs it.
GRAD_CAM = textwrap.dedent(
    """\
    from keras import backend as K
    from keras.models import load_model

    model = load_model("vgg.h5")
    for image in images:
        preds = model.predict(image)
        grads = K.gradients(model.output, model.input)[0]
    """
)

KERAS_3 = textwrap.dedent(
    """\
    import keras

    model = keras.models.load_model("model.keras")
    for frame in frames:
        scores = model.predict(frame[None])

    for lr in learning_rates:
        trial = keras.Sequential([keras.layers.Dense(1)])
        trial.fit(x, y)
        keras.backend.clear_session()
    """
)
KERAS_PREDICT = (
    "TFL402",
    5,
    14,
    "`model.predict` every iteration builds a new `tf.data` pipeline each call; use "
    "`model(x, training=False)` or `predict_on_batch`",
)
KERAS_FIT = (
    "TFL403",
    9,
    5,
    "a model built every iteration is `fit` here; since TensorFlow 2.11 each `fit` registers "
    "gradient functions globally that keep its graphs alive even after `clear_session()` "
    "(tensorflow/tensorflow#61791); run each trial in a fresh process",
)

Finding = tuple[str, int, int, str]


#: A Keras agent predicting per frame, with room (``{}``) for a line that says its world.
AGENT = (
    "import tensorflow as tf\n{}\nfrom keras.models import load_model\n\n"
    'model = load_model("m.h5")\n'
    "for frame in frames:\n    q = model.predict(frame)\n"
)


def _project(root: Path, files: dict[str, str]) -> Path:
    """A project (a repository: the pin search stops at its root) with ``files``."""
    (root / ".git").mkdir(exist_ok=True)
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def _findings(path: Path, cache_dir: Path | None = None) -> list[Finding]:
    result = lint_paths([path], Configuration(Overrides(select=("ALL",))), cache_dir=cache_dir)
    assert not result.errors
    return [(d.code, d.start.line, d.start.column, d.message) for d in result.diagnostics]


TF1_PINS = {
    "requirements": {"requirements.txt": "tensorflow==1.14\nkeras==2.2.4\n"},
    "pyproject": {
        "pyproject.toml": (
            '[project]\nname = "gan"\nversion = "1"\n'
            'dependencies = ["tensorflow-gpu>=1.13,<2", "keras==2.2.4"]\n'
        )
    },
}


@pytest.mark.parametrize("form", TF1_PINS)
def test_tf1_project_predict_is_quiet_and_the_session_loop_flagged(
    tmp_path: Path, form: str
) -> None:
    _project(tmp_path, {**TF1_PINS[form], "gan.py": GAN})
    assert _findings(tmp_path / "gan.py") == [SESSION_LOOP]


def test_the_same_script_unpinned_is_tf1_code_by_what_it_calls(tmp_path: Path) -> None:
    """``tf.placeholder`` and ``tf.layers`` exist only in TensorFlow 1 (TensorFlow 2 has them
    under ``tf.compat.v1``): the script runs there, in graph mode, pins or not."""
    _project(tmp_path, {"gan.py": GAN})
    assert _findings(tmp_path / "gan.py") == [SESSION_LOOP]


@pytest.mark.parametrize(
    "setup",
    [
        "sess = tf.Session()\nK.set_session(sess)",
        "config = tf.ConfigProto()\nconfig.gpu_options.allow_growth = True",
        "tf.set_random_seed(0)",
        "graph = tf.get_default_graph()",
    ],
)
def test_a_keras_script_that_calls_what_only_tensorflow_1_has_runs_in_graph_mode(
    tmp_path: Path, setup: str
) -> None:
    script = AGENT.replace("{}", "from keras import backend as K\n\n{}", 1)
    _project(tmp_path, {"agent.py": script.format(setup)})
    assert _findings(tmp_path / "agent.py") == []
    compat = setup.replace("tf.", "tf.compat.v1.").replace(
        "tf.compat.v1.set_random_seed", "tf.random.set_seed"
    )
    (tmp_path / "agent.py").write_text(script.format(compat), encoding="utf-8")
    assert [code for code, *_ in _findings(tmp_path / "agent.py")] == ["TFL402"]


@pytest.mark.parametrize(
    "imported",
    [
        "from tensorflow.contrib.distributions import Beta",
        "import tensorflow.contrib.slim as slim",
        "from tensorflow.contrib import rnn",
    ],
)
def test_a_script_that_imports_what_only_tensorflow_1_has_runs_in_graph_mode(
    tmp_path: Path, imported: str
) -> None:
    """An unconditional import of ``tf.contrib`` fails on TensorFlow 2: the script runs on
    TensorFlow 1 (faceswap-GAN's legacy notebooks); the same import inside a ``try`` that falls
    back pins nothing."""
    _project(tmp_path, {"agent.py": AGENT.format(imported)})
    assert _findings(tmp_path / "agent.py") == []
    guarded = f"try:\n    {imported}\nexcept ImportError:\n    pass"
    (tmp_path / "agent.py").write_text(AGENT.format(guarded), encoding="utf-8")
    assert [(code, line) for code, line, *_ in _findings(tmp_path / "agent.py")] == [("TFL402", 10)]


#: A DDPG script of the same directory, written for TensorFlow 1.
TF1_SIBLING = (
    "import tensorflow as tf\nfrom keras import backend as K\n\n"
    "sess = tf.InteractiveSession()\nK.set_session(sess)\n"
)


@pytest.mark.parametrize(
    ("sibling", "own", "found"),
    [
        # the agent runs where its neighbour does: on TensorFlow 1, in graph mode
        ("ddpg.py", "", []),
        # a directory of its own, a tf.function of its own: no such evidence
        ("other/ddpg.py", "", [("TFL402", 7)]),
        ("ddpg.py", "@tf.function\ndef act(x):\n    return x", [("TFL402", 9)]),
        # a directory ported to TensorFlow 2 (`tf.compat.v1` here) keeps a stale script
        ("ddpg.py", "config = tf.compat.v1.ConfigProto()", [("TFL402", 7)]),
    ],
)
def test_a_keras_script_beside_tensorflow_1_code_runs_in_graph_mode(
    tmp_path: Path, sibling: str, own: str, found: list[tuple[str, int]]
) -> None:
    """The scripts of one directory of an unpinned repository run on one install: a Keras
    agent beside a script that calls what only TensorFlow 1 has (xiaochus's DQN beside its
    DDPG, set Z27 of stop 53), linted with it, runs in graph mode, where ``predict`` reuses
    one function."""
    (tmp_path / "other").mkdir()
    _project(tmp_path, {"agent.py": AGENT.format(own), sibling: TF1_SIBLING})
    result = lint_paths([tmp_path], Configuration(Overrides(select=("ALL",))))
    assert [(Path(d.file).name, d.code, d.start.line) for d in result.diagnostics] == [
        ("agent.py", code, line) for code, line in found
    ]


def test_the_same_script_through_compat_v1_unpinned_is_tf2_code(tmp_path: Path) -> None:
    _project(tmp_path, {"gan.py": GAN_COMPAT})
    assert [code for code, *_ in _findings(tmp_path / "gan.py")] == ["TFL402", "TFL503"]


@pytest.mark.parametrize("form", TF1_PINS)
def test_tf1_project_keras_predict_runs_the_graph_so_ops_built_per_image_grow_it(
    tmp_path: Path, form: str
) -> None:
    _project(tmp_path, {**TF1_PINS[form], "gradcam.py": GRAD_CAM})
    assert _findings(tmp_path / "gradcam.py") == [
        (
            "TFL503",
            7,
            13,
            "`K.gradients(...)` every iteration adds nodes to the default graph of a loop that "
            "runs it (`model.predict`): the graph grows for as long as the loop runs; build it "
            "once before the loop (`graph.finalize()` catches this)",
        )
    ]


def test_grad_cam_unpinned_is_eager_code_as_today(tmp_path: Path) -> None:
    _project(tmp_path, {"gradcam.py": GRAD_CAM})
    assert _findings(tmp_path / "gradcam.py") == [
        (
            "TFL402",
            6,
            13,
            "`model.predict` every iteration builds a new `tf.data` pipeline each call; use "
            "`model(x, training=False)` or `predict_on_batch`",
        )
    ]


def test_keras_3_project(tmp_path: Path) -> None:
    pyproject = (
        '[project]\nname = "x"\nversion = "1"\ndependencies = ["keras>=3.0", "tensorflow"]\n'
    )
    _project(tmp_path, {"pyproject.toml": pyproject, "search.py": KERAS_3})
    assert _findings(tmp_path / "search.py") == [KERAS_PREDICT, KERAS_FIT]


def test_before_tensorflow_2_11_fit_in_a_loop_with_clear_session_is_fine(tmp_path: Path) -> None:
    _project(tmp_path, {"requirements.txt": "tensorflow==2.10.1\n", "search.py": KERAS_3})
    assert _findings(tmp_path / "search.py") == [KERAS_PREDICT]


def test_multi_backend_keras_predict_runs_one_cached_function(tmp_path: Path) -> None:
    """Keras 2.3.1, the last multi-backend Keras: one cached predict function, and a
    TensorFlow of before 2.11 (it supports up to 2.0): no `fit` registry either."""
    _project(tmp_path, {"requirements.txt": "keras==2.3.1\n", "search.py": KERAS_3})
    assert _findings(tmp_path / "search.py") == []


def test_an_unpinned_project_is_linted_as_before(tmp_path: Path) -> None:
    """Every fixture, in a repository with no pin file: the findings of the fixed default
    settings (what the linter reported before it read pins), finding for finding."""
    shutil.copytree(FIXTURES, tmp_path / "fixtures")
    _project(tmp_path, {})
    before = lint_paths([tmp_path / "fixtures"], Settings(select=("ALL",))).diagnostics
    assert before
    assert _findings(tmp_path / "fixtures") == [
        (d.code, d.start.line, d.start.column, d.message) for d in before
    ]


# -- precedence ----------------------------------------------------------------------------------


def test_the_setting_beats_the_pin_files(tmp_path: Path) -> None:
    settings = '[tool.tflint-leaks]\ntarget-tensorflow = "1.15"\n'
    files = {
        "requirements.txt": "tensorflow==2.15\n",
        "pyproject.toml": settings,
        "gan.py": GAN_COMPAT,
    }
    _project(tmp_path, files)
    assert _findings(tmp_path / "gan.py") == [SESSION_LOOP]
    (tmp_path / "pyproject.toml").write_text('[tool.tflint-leaks]\ntarget-tensorflow = "2.15"\n')
    (tmp_path / "requirements.txt").write_text("tensorflow==1.14\n")
    assert _findings(tmp_path / "gan.py") == [PREDICT_TF2, SESSION_LOOP]


@pytest.mark.parametrize(
    "files",
    [
        {"requirements.txt": "tensorflow==1.14\n"},
        {
            "requirements.txt": "tensorflow==2.3\n",
            "pyproject.toml": ('[tool.tflint-leaks]\ntarget-tensorflow = "1.15"\n'),
        },
    ],
    ids=["pins", "setting"],
)
def test_eager_execution_turned_on_in_the_file_beats_tf1(
    tmp_path: Path, files: dict[str, str]
) -> None:
    source = GAN.replace(
        "import tensorflow as tf\n", "import tensorflow as tf\ntf.enable_eager_execution()\n", 1
    )
    _project(tmp_path, {**files, "gan.py": source})
    assert _findings(tmp_path / "gan.py") == [
        PREDICT_TF1_EAGER,
        (*SESSION_LOOP[:1], SESSION_LOOP[1] + 1, *SESSION_LOOP[2:]),
    ]


def test_eager_execution_turned_off_in_a_module_imported_beats_tf2(tmp_path: Path) -> None:
    files = {
        "requirements.txt": "tensorflow==2.15\n",
        "compat.py": "import tensorflow as tf\n\ntf.compat.v1.disable_eager_execution()\n",
        "gan.py": "import compat\n" + GAN,
    }
    _project(tmp_path, files)
    assert _findings(tmp_path / "gan.py") == [
        (*SESSION_LOOP[:1], SESSION_LOOP[1] + 1, *SESSION_LOOP[2:])
    ]


AGENT_BASE = """\
import tensorflow as tf


class AgentBase:
    def play_episode(self):
        for step in range(1000):
            self.get_action(step)

    def train(self, n_episodes=10000):
        for ep in range(n_episodes):
            self.play_episode()
"""

REINFORCE_AGENT = """\
import tensorflow as tf

from agent_base import AgentBase

tf.compat.v1.disable_eager_execution()


class ReinforceAgent(AgentBase):
    def __init__(self):
        self._model = tf.keras.Sequential([tf.keras.layers.Dense(2)])

    def get_action(self, s):
        return self._model.predict(s)
"""


def test_code_in_a_module_that_turns_eager_off_runs_in_graph_mode_whoever_calls_it(
    tmp_path: Path,
) -> None:
    """reinforcement-learning-keras: the episode loop of the base class (a module that
    imports no agent) calls the subclass's ``predict``, in a module that calls
    ``disable_eager_execution()`` when imported, before any agent exists: that ``predict``
    runs Keras' one graph function, not a new ``tf.data`` pipeline. The same module without
    the call is eager, and both loops' ``predict`` are reported: the episode's steps (which
    the relevance prefilter left out until 76dace8, as `agent_base.py` imports no agent) and
    the episodes."""
    files = {"agent_base.py": AGENT_BASE, "reinforce_agent.py": REINFORCE_AGENT}
    _project(tmp_path, {**files, "run.py": "from reinforce_agent import ReinforceAgent\n"})
    assert _findings(tmp_path) == []
    eager = REINFORCE_AGENT.replace("tf.compat.v1.disable_eager_execution()\n", "")
    (tmp_path / "reinforce_agent.py").write_text(eager, encoding="utf-8")
    assert _findings(tmp_path) == [
        (
            "TFL402",
            7,
            13,
            "`self._model.predict` through `get_action` every iteration (1000 per call of "
            "`play_episode`) builds a new `tf.data` pipeline each call; use `self._model(x, "
            "training=False)` or `predict_on_batch`",
        ),
        (
            "TFL402",
            11,
            13,
            "`self._model.predict` through `play_episode` every iteration (10000 per call of "
            "`train`) builds a new `tf.data` pipeline each call; use `self._model(x, "
            "training=False)` or `predict_on_batch`",
        ),
    ]


def test_the_resolved_settings_say_what_was_found_and_where(tmp_path: Path) -> None:
    _project(tmp_path, {"requirements.txt": "tensorflow==1.14\nkeras==2.2.4\n"})
    (tmp_path / "src").mkdir()
    frameworks = Configuration().for_path(tmp_path / "src" / "gan.py").options.frameworks
    assert str(frameworks) == (
        f"TensorFlow 1: ==1.14 ({tmp_path}/requirements.txt:1); Keras: keras 2; "
        f"keras: ==2.2.4 ({tmp_path}/requirements.txt:2)"
    )
    assert frameworks.root == str(tmp_path)


def test_the_resolved_settings_name_the_setting(tmp_path: Path) -> None:
    settings = '[tool.tflint-leaks]\ntarget-tensorflow = "1.15"\n'
    _project(tmp_path, {"requirements.txt": "tensorflow==2.15\n", "pyproject.toml": settings})
    resolved = Configuration().for_path(tmp_path / "gan.py")
    assert (resolved.target_tensorflow, str(resolved.options.frameworks.tensorflow)) == (
        "1.15",
        f">=1.15,<1.16 ({tmp_path}/pyproject.toml: tool.tflint-leaks.target-tensorflow)",
    )


@pytest.mark.parametrize(
    ("value", "key"),
    [
        ("1.15", "target-tensorflow"),
        ('"one"', "target-tensorflow"),
        ('"2.x"', "target-keras"),
    ],
)
def test_a_bad_target_exits_2_naming_the_key_and_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, key: str
) -> None:
    _project(tmp_path, {"pyproject.toml": f"[tool.tflint-leaks]\n{key} = {value}\n", "gan.py": GAN})
    code = main(["--no-cache", str(tmp_path / "gan.py")])
    captured = capsys.readouterr()
    assert (code, captured.out, captured.err.splitlines()) == (
        2,
        "",
        [
            f"error: {tmp_path}/pyproject.toml: `tool.tflint-leaks.{key}` must be a release "
            'such as "1.15" or "2.16"'
        ],
    )


def test_a_changed_pin_is_not_answered_from_the_cache(tmp_path: Path) -> None:
    _project(tmp_path, {"requirements.txt": "tensorflow==1.14\n", "gan.py": GAN_COMPAT})
    cache = tmp_path / "cache"
    assert _findings(tmp_path / "gan.py", cache) == [SESSION_LOOP]
    (tmp_path / "requirements.txt").write_text("tensorflow==2.15\n")
    assert _findings(tmp_path / "gan.py", cache) == [PREDICT_TF2, SESSION_LOOP]


# -- what the code says of its versions (analysis/eras.py) ------------------------------------

#: Keras-FlappyBird's network: Keras 1's argument names, which only Keras before 2.4 takes.
KERAS_1_AGENT = textwrap.dedent(
    """\
    from keras.models import Sequential
    from keras.layers import Convolution2D, Embedding

    def build():
        model = Sequential()
        model.add(Convolution2D(32, 8, 8, subsample=(4, 4), border_mode="same"))
        return model
    """
)
FRAME_LOOP = textwrap.dedent(
    """\
    from agent import build

    model = build()
    while True:
        q = model.predict(frame)
    """
)
FRAME_PREDICT = (
    "TFL402",
    5,
    9,
    "`model.predict` every iteration builds a new `tf.data` pipeline each call; use "
    "`model(x, training=False)` or `predict_on_batch`",
)


def test_keras_1_arguments_in_an_imported_module_pin_keras_before_2_4(tmp_path: Path) -> None:
    root = _project(tmp_path, {"agent.py": KERAS_1_AGENT, "train.py": FRAME_LOOP})
    assert _findings(root) == []
    # The same network through tf.keras: its versions are TensorFlow's, not standalone Keras'.
    tf_keras = KERAS_1_AGENT.replace("from keras.", "from tensorflow.keras.")
    (root / "agent.py").write_text(tf_keras, encoding="utf-8")
    assert _findings(root / "train.py") == [FRAME_PREDICT]


def test_embedding_keeps_output_dim_and_pins_nothing(tmp_path: Path) -> None:
    agent = KERAS_1_AGENT.replace(
        'Convolution2D(32, 8, 8, subsample=(4, 4), border_mode="same")',
        "Embedding(input_dim=100, output_dim=8)",
    )
    root = _project(tmp_path, {"agent.py": agent, "train.py": FRAME_LOOP})
    assert _findings(root / "train.py") == [FRAME_PREDICT]


def test_python_2_builtins_anywhere_the_program_imports_pin_keras(tmp_path: Path) -> None:
    # dqn-multi-agent-rl: the loop's module calls `xrange`; Keras is imported two modules away.
    agent = KERAS_1_AGENT.replace(', subsample=(4, 4), border_mode="same"', "")
    loop = FRAME_LOOP.replace("while True:", "for step in xrange(1000):")
    root = _project(tmp_path, {"agent.py": agent, "train.py": loop})
    assert _findings(root / "train.py") == []
    # `xrange` from six is Python 3 code too.
    six = "from six.moves import xrange\n" + loop
    (root / "train.py").write_text(six, encoding="utf-8")
    counted = FRAME_PREDICT[3].replace("every iteration", "every iteration (1000 in all)")
    assert _findings(root / "train.py") == [("TFL402", 6, 9, counted)]


@pytest.mark.parametrize(
    ("agent", "pinned"),
    [
        # Multi-backend Keras' Theano channel order (tdeboissiere's InfoGAN).
        ('from keras import backend as K\n\nif K.image_dim_ordering() == "th":\n    A = 1\n', True),
        ("import keras.backend as K\n\nK.set_image_dim_ordering('tf')\n", True),
        # keras-contrib's layers (Lornatang's CycleGAN) and Keras' legacy interfaces.
        ("import keras\nfrom keras_contrib.layers import InstanceNormalization\n", True),
        ("import keras\nfrom keras.legacy import interfaces\n", True),
        # Multi-backend Keras's module of `Layer` (KazukiOnodera/Toxic-Comment's callbacks).
        ("from keras.engine.topology import Layer\n", True),
        ("from keras.engine import topology\n", True),
        # cuDNN layers, gone from TensorFlow 2's Keras (Azure's time-series tuning scripts).
        ("from keras.layers import Dense, CuDNNGRU\n", True),
        ("from keras.layers import CuDNNLSTM as LSTM\n", True),
        ("from tensorflow.keras.layers import GRU\nimport keras\n", False),
        # multi_gpu_model, gone from Keras 2.4 (dsgissin's active learning, set Z31).
        ("from keras.utils import to_categorical, multi_gpu_model\n", True),
        ("from keras.utils import to_categorical\n", False),
        # Keras 1's Merge layer, gone from Keras 2.2 (chen0040's text summarisers).
        ("from keras.layers import Embedding, concatenate, Merge, add\n", True),
        ("from keras.layers import merge\n", False),
        # lazyprogrammer's courses: the cuDNN layers where the GPU and the Keras have them,
        # the plain ones else: runs on either Keras, pins neither.
        (
            "import keras\ntry:\n    from keras.layers import CuDNNLSTM as LSTM\n"
            "except ImportError:\n    from keras.layers import LSTM\n",
            False,
        ),
        # Theano's environment set for Keras (Grzego/async-rl), or the backend named.
        ("import os\nimport keras\nos.environ['THEANO_FLAGS'] = 'floatX=float32'\n", True),
        ("import os\nimport keras\nos.environ.setdefault('THEANO_FLAGS', 'device=cpu')\n", True),
        ('import os\nos.environ["KERAS_BACKEND"] = "theano"\nimport keras\n', True),
        # A flag read and not set, a string that only names it.
        ("import os\nimport keras\nFLAGS = os.environ.get('THEANO_FLAGS')\n", False),
        # What every Keras has, or keras-contrib's name in a comment and a string only.
        ('from keras import backend as K\n\nK.set_image_data_format("channels_first")\n', False),
        ("import keras\n# ported from keras_contrib\nNAME = 'keras_contrib'\n", False),
        # Through tf.keras: TensorFlow's versions, not standalone Keras'.
        ("from tensorflow.keras import backend as K\n\nK.image_dim_ordering()\n", False),
    ],
)
def test_multi_backend_keras_only_apis_pin_keras_before_2_4(
    tmp_path: Path, agent: str, pinned: bool
) -> None:
    network = "from keras.models import Sequential\n\n\ndef build():\n    return Sequential()\n"
    root = _project(tmp_path, {"agent.py": agent + network, "train.py": FRAME_LOOP})
    assert _findings(root / "train.py") == ([] if pinned else [FRAME_PREDICT])


@pytest.mark.parametrize(
    ("setting", "backend"),
    [
        # Deep Learning with Python's third edition sets it before importing Keras.
        ('import os\nos.environ["KERAS_BACKEND"] = "jax"\nimport keras\n', "jax"),
        ("from os import environ\nenviron['KERAS_BACKEND'] = 'torch'\nimport keras\n", "torch"),
        # TensorFlow itself, Theano (multi-backend Keras: see above), a value read, not set.
        ('import os\nos.environ["KERAS_BACKEND"] = "tensorflow"\nimport keras\n', None),
        ("import os\nimport keras\nBACKEND = os.environ.get('KERAS_BACKEND', 'jax')\n", None),
    ],
)
def test_a_keras_3_backend_other_than_tensorflow_builds_no_pipeline_per_predict(
    tmp_path: Path, setting: str, backend: str | None
) -> None:
    """On JAX or PyTorch, Keras 3's ``predict`` reuses one compiled function and builds no
    ``tf.data`` pipeline; the rules whose reason is Keras on TensorFlow (TFL402, TFL403,
    TFL405) are quiet there, and the world says where the backend is chosen."""
    network = "from keras.models import Sequential\n\n\ndef build():\n    return Sequential()\n"
    root = _project(tmp_path, {"agent.py": setting + network, "train.py": FRAME_LOOP})
    assert _findings(root / "train.py") == ([] if backend else [FRAME_PREDICT])
    modules = [index_source((root / n).read_text(), root / n) for n in ("agent.py", "train.py")]
    project = ProjectIndex(modules).close()
    world = project.world(modules[1], Frameworks())
    assert world.keras_backend == (None if backend is None else f"{backend} ({root}/agent.py:2)")


#: brethvoice/optuna_demo_MNIST: a trial loop fitting a new model with a per-trial
#: `clear_session()`, compiled with an optimizer of ``optimizers.py`` (``{}``: its import).
TRIALS = (
    "import tensorflow as tf\n"
    "from optimizers import make_optimizer\n\n"
    "for trial in range(500):\n"
    "    tf.keras.backend.clear_session()\n"
    "    model = tf.keras.Sequential([tf.keras.layers.Dense(10)])\n"
    "    model.compile(make_optimizer(), 'mse')\n"
    "    model.fit(x, y)\n"
)
TRIALS_FIT = (
    "TFL403",
    8,
    5,
    "a model built every iteration is `fit` here; since TensorFlow 2.11 each `fit` registers "
    "gradient functions globally that keep its graphs alive even after `clear_session()` "
    "(tensorflow/tensorflow#61791); run each trial in a fresh process",
)


@pytest.mark.parametrize(
    ("optimizer", "pinned"),
    [
        # AdaBelief's optimizer calls `_set_hyper`, which TensorFlow 2.11's optimizer lacks.
        ("from adabelief_tf import AdaBeliefOptimizer\n", True),
        ("import adabelief_tf\n\nAdaBeliefOptimizer = adabelief_tf.AdaBeliefOptimizer\n", True),
        # tf.keras's multi_gpu_model, gone from TensorFlow 2.4; CleverHans 3's attacks, for
        # TensorFlow 1 only (dsgissin's active learning, set Z31).
        ("from tensorflow.keras.utils import multi_gpu_model\n", True),
        ("from cleverhans.attacks import DeepFool\n", True),
        ("from cleverhans.utils_keras import KerasModelWrapper\n", True),
        # CleverHans 4's attacks for TensorFlow 2.
        ("from cleverhans.tf2.attacks.fast_gradient_method import fast_gradient_method\n", False),
        # tf.keras's own optimizer, and AdaBelief named in a comment only.
        (
            "# like adabelief_tf\n"
            "from tensorflow.keras.optimizers import Adam as AdaBeliefOptimizer\n",
            False,
        ),
    ],
)
def test_what_only_tensorflow_before_2_11_has_pins_tensorflow_before_2_11(
    tmp_path: Path, optimizer: str, pinned: bool
) -> None:
    maker = "\n\ndef make_optimizer():\n    return AdaBeliefOptimizer(learning_rate=1e-3)\n"
    root = _project(tmp_path, {"optimizers.py": optimizer + maker, "trials.py": TRIALS})
    assert _findings(root / "trials.py") == ([] if pinned else [TRIALS_FIT])


@pytest.mark.parametrize(
    ("pins", "expected"),
    [
        # ZFTurbo's Kaggle scripts: Keras 1.2.2, TensorFlow not named. Multi-backend Keras
        # (before 2.4) never ran on TensorFlow 2.11, whose registry TFL403 is about.
        ("keras==1.2.2\n", []),
        ("keras==2.2.4\n", []),
        ("keras>=2.4\n", [TRIALS_FIT]),
        ("tensorflow==2.15\n", [TRIALS_FIT]),
    ],
)
def test_multi_backend_keras_pinned_runs_no_fit_registry(
    tmp_path: Path, pins: str, expected: list[Finding]
) -> None:
    root = _project(tmp_path, {"requirements.txt": pins, "trials.py": TRIALS})
    assert _findings(root / "trials.py") == expected


def test_pins_that_the_code_contradicts_decide(tmp_path: Path) -> None:
    files = {"agent.py": KERAS_1_AGENT, "train.py": FRAME_LOOP}
    root = _project(tmp_path, {**files, "requirements.txt": "tensorflow==2.12\nkeras==2.12\n"})
    assert _findings(root / "train.py") == [FRAME_PREDICT]


#: A Keras script of the Python 2 era: standalone Keras, `predict` in a plotting loop.
VAE = (
    "from keras.models import load_model\n\n"
    'decoder = load_model("decoder.h5")\n'
    "for x in grid:\n"
    "    image = decoder.predict(x)\n"
)
PYTHON_2 = 'import numpy as np\n\nfor epoch in range(10):\n    print "epoch", epoch\n'


def test_python_2_code_beside_a_script_says_its_world(tmp_path: Path) -> None:
    """bojone/vae: `vae_shi.py` prints with Python 2's statement beside `vae_keras.py`, so the
    scripts run TensorFlow before 2.2 and, with standalone Keras, Keras before 2.4, whose
    `predict` runs one cached function: quiet. Without it, the same script is flagged."""
    _project(tmp_path, {"vae_keras.py": VAE})
    assert [(code, line) for code, line, *_ in _findings(tmp_path / "vae_keras.py")] == [
        ("TFL402", 5)
    ]
    (tmp_path / "vae_shi.py").write_text(PYTHON_2, encoding="utf-8")
    assert _findings(tmp_path / "vae_keras.py") == []
    frameworks = Configuration().for_path(tmp_path / "vae_keras.py").options.frameworks
    assert str(frameworks).endswith(f"; Python 2 code beside it: {tmp_path}/vae_shi.py:4")


@pytest.mark.parametrize(
    ("settings", "quiet"),
    [
        # Grzego/async-rl: the training script beside the player sets Theano's flags.
        ("import os\nos.environ['THEANO_FLAGS'] = 'floatX=float32'\n", True),
        ("from os import environ as env\nenv['KERAS_BACKEND'] = 'theano'\n", True),
        # Keras 3's backend, or a flag only read.
        ("import os\nos.environ['KERAS_BACKEND'] = 'torch'\n", False),
        ("import os\nprint(os.environ.get('THEANO_FLAGS'))\n", False),
    ],
)
def test_theano_settings_beside_a_script_say_its_world(
    tmp_path: Path, settings: str, quiet: bool
) -> None:
    _project(tmp_path, {"vae_keras.py": VAE})
    (tmp_path / "train.py").write_text(settings, encoding="utf-8")
    found = [(code, line) for code, line, *_ in _findings(tmp_path / "vae_keras.py")]
    assert found == ([] if quiet else [("TFL402", 5)])
    frameworks = str(Configuration().for_path(tmp_path / "vae_keras.py").options.frameworks)
    assert frameworks.endswith(f"; Theano's settings beside it: {tmp_path}/train.py:2") == quiet


@pytest.mark.parametrize(
    "layout",
    ["below", "parenthesized print", "a print function call"],
)
def test_python_3_code_or_python_2_elsewhere_says_nothing(tmp_path: Path, layout: str) -> None:
    _project(tmp_path, {"vae_keras.py": VAE})
    if layout == "below":
        (tmp_path / "old").mkdir()
        (tmp_path / "old" / "vae_shi.py").write_text(PYTHON_2, encoding="utf-8")
    elif layout == "parenthesized print":
        (tmp_path / "util.py").write_text('print ("epoch", 1)\nprint\n', encoding="utf-8")
    else:
        (tmp_path / "util.py").write_text("print = log\nprint(1)\n", encoding="utf-8")
    assert [(code, line) for code, line, *_ in _findings(tmp_path / "vae_keras.py")] == [
        ("TFL402", 5)
    ]


def _notebook(*cells: str) -> str:
    return json.dumps(
        {
            "cells": [
                {"cell_type": "code", "source": c, "metadata": {}, "outputs": []} for c in cells
            ],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 4,
        }
    )


@pytest.mark.parametrize(
    ("magic", "expected"),
    [
        # Colab's TensorFlow 1: Keras runs one cached predict function, no eager gradient
        # registry.
        ("%tensorflow_version 1.x", []),
        ("%tensorflow_version 1.x  # TF1 for this course", []),
        ("%tensorflow_version 2.x", [KERAS_PREDICT[1:], KERAS_FIT[1:]]),
        ("%tensorflow_version", [KERAS_PREDICT[1:], KERAS_FIT[1:]]),  # no version: says nothing
        ("%matplotlib inline", [KERAS_PREDICT[1:], KERAS_FIT[1:]]),
    ],
)
def test_colab_tensorflow_version_magic_says_the_notebooks_world(
    tmp_path: Path, magic: str, expected: list[tuple[int, int, str]]
) -> None:
    """A Colab notebook written for TensorFlow 1 says so with `%tensorflow_version 1.x`
    (optkeras's example): its fits and predicts are TensorFlow 1's, whatever is unpinned."""
    _project(tmp_path, {"search.ipynb": _notebook(magic + "\n", KERAS_3)})
    result = lint_paths([tmp_path / "search.ipynb"], Configuration(Overrides(select=("ALL",))))
    assert not result.errors
    assert [(d.cell, d.start.line, d.start.column, d.message) for d in result.diagnostics] == [
        (2, line, column, message) for line, column, message in expected
    ]


@pytest.mark.parametrize(
    ("printed", "expected"),
    [
        # What multi-backend Keras writes when imported: the notebook ran Keras before 2.4,
        # whose predict runs one cached function and whose fit registers nothing globally.
        ("Using TensorFlow backend.\n", []),
        ("Using Theano backend.\n", []),
        (
            "/usr/lib/python3.6/importlib/_bootstrap.py:219: RuntimeWarning\n"
            "Using TensorFlow backend.\n",
            [],
        ),
        # Other outputs say nothing (a training log, the banner quoted inside a line).
        ("Epoch 1/10\n", [KERAS_PREDICT[1:], KERAS_FIT[1:]]),
        ("print('Using TensorFlow backend.')\n", [KERAS_PREDICT[1:], KERAS_FIT[1:]]),
    ],
)
def test_a_notebooks_saved_output_says_which_keras_it_ran(
    tmp_path: Path, printed: str, expected: list[tuple[int, int, str]]
) -> None:
    """A notebook whose saved outputs hold multi-backend Keras's import banner ran Keras
    before 2.4 (dipanjanS/hands-on-transfer-learning-with-python, set Z21), pins or not."""
    stream = {"output_type": "stream", "name": "stderr", "text": [printed]}
    cells = [
        {"cell_type": "code", "source": "import keras\n", "metadata": {}, "outputs": [stream]},
        {"cell_type": "code", "source": KERAS_3, "metadata": {}, "outputs": []},
    ]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 4}
    _project(tmp_path, {"search.ipynb": json.dumps(notebook)})
    result = lint_paths([tmp_path / "search.ipynb"], Configuration(Overrides(select=("ALL",))))
    assert not result.errors
    assert [(d.cell, d.start.line, d.start.column, d.message) for d in result.diagnostics] == [
        (2, line, column, message) for line, column, message in expected
    ]


@pytest.mark.parametrize(
    ("helper", "expected"),
    [
        ("cnn_utils.py", []),
        # a directory of its own: the notebook's Keras is not known there
        ("utils/cnn_utils.py", [("TFL402", 5), ("TFL403", 9)]),
    ],
)
def test_a_helper_beside_notebooks_runs_on_their_keras(
    tmp_path: Path, helper: str, expected: list[tuple[str, int]]
) -> None:
    """A helper module kept beside notebooks whose saved outputs say they ran multi-backend
    Keras runs on that Keras too, imported or not (hands-on-transfer-learning-with-python's
    `cnn_utils.py`, set Z21 of stop 52): scripts side by side run in one environment."""
    stream = {"output_type": "stream", "name": "stderr", "text": ["Using TensorFlow backend.\n"]}
    cells = [{"cell_type": "code", "source": "import keras\n", "metadata": {}, "outputs": [stream]}]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 4}
    (tmp_path / "utils").mkdir()
    _project(tmp_path, {"classifier.ipynb": json.dumps(notebook), helper: KERAS_3})
    result = lint_paths([tmp_path], Configuration(Overrides(select=("ALL",))))
    assert not result.errors
    assert [(d.code, d.start.line) for d in result.diagnostics] == expected


#: A README's requirement lines in the forms research repositories write them, each with the
#: range the line states for TensorFlow ("" for none stated): a bare version is its series
#: (``1.6.0``: ``1.6.0.*``; ``2.x``: ``2.*``).
README_LINES = [
    ("- tensorflow==1.14.0", "==1.14"),
    ("* Tensorflow 1.6.0 ", ">=1.6,<1.6.1"),
    ("- Tensorflow v1.14.0", ">=1.14,<1.14.1"),
    ("* Tensorflow r0.10", ">=0.10,<0.11"),
    ("- tensorflow-gpu == 1.4.0", "==1.4"),
    ("* Tensorflow 0.12.0 / 1.2.1", ">=0.12,<1.2.2"),
    (
        "- Known dependencies: Python (3.5.4), OpenAI gym (0.10.5), tensorflow (1.8.0)",
        ">=1.8,<1.8.1",
    ),
    ("python 2.7 + tensorflow 1.8/1.13 + keras 2.2.4", ">=1.8,<1.14"),
    ("- [Tensorflow 1.0](http://www.tensorflow.org)", ">=1,<1.1"),
    ("* `Keras >= 2.2.0` / `TensorFlow >= 1.12.0`", ">=1.12"),
    ("2) keras >= 2.2.0 or tensorflow >= 1.13", ">=1.13"),
    ("- TensorFlow 2.x", ">=2,<3"),
    ("* [TensorFlow >= 2.0](https://www.tensorflow.org/versions/r2.0)", ">=2"),
    ("- TensorFlow 2.5+", ">=2.5"),
    ("- TensorFlow 1.13 or later", ">=1.13"),
    ("- tensorflow >= 1.13, < 2", ">=1.13,<2"),
    ("    pip install tensorflow-gpu==1.14 # if you have a CUDA-compatible gpu", "==1.14"),
    ("$ pip install -U 'tensorflow>=2.4,<2.6' numpy", ">=2.4,<2.6"),
    ("conda install -c conda-forge tensorflow=1.15", ">=1.15,<1.16"),
    # Prose, titles, tables and links to sections state nothing.
    ("Originally implemented in tensorflow 1.14 by OpenAI.", ""),
    ("# Deep Reinforcement Learning with TensorFlow 2.1", ""),
    ("- Switch to TensorFlow 2.x and tf.keras by default", ""),
    ("* [TensorFlow 1.x and GPflow 1.x](#tensorflow-1x-and-gpflow-1x)", ""),
    ("| TensorFlow 1.14+ | `kashgari<2.0.0` |", ""),
    ("- TensorFlow", ""),
    ("The code is tested under Linux with TensorFlow 1.12 and Python 2.", ""),
]


@pytest.mark.parametrize(("line", "expected"), README_LINES)
def test_what_a_readme_line_states(tmp_path: Path, line: str, expected: str) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "README.md").write_text(f"# A project\n\n{line}\n", encoding="utf-8")
    stated = {d.family: str(d.versions) for d in read_documented(str(tmp_path), None)}
    assert stated.get("tensorflow", "") == expected


def test_the_nearest_readme_that_states_a_version_counts(tmp_path: Path) -> None:
    """Looking up from the file's directory to the repository's root: a README that states
    nothing is passed over, a nearer one that states something wins; never above the root."""
    _project(tmp_path, {"README.md": "- tensorflow==2.4\n"})
    (tmp_path / "gan").mkdir()
    (tmp_path / "gan" / "README.md").write_text("A GAN.\n\n- Keras==2.0.8\n", encoding="utf-8")
    (tmp_path / "gan" / "src").mkdir()
    (tmp_path / "gan" / "src" / "README").write_text("Run train.py.\n", encoding="utf-8")
    stated = read_documented(str(tmp_path / "gan" / "src"), None)
    assert [(d.family, str(d.versions), d.where) for d in stated] == [
        ("keras", "==2.0.8", f"{tmp_path}/gan/README.md:3")
    ]
    assert read_documented(str(tmp_path / "gan" / "src"), str(tmp_path / "gan" / "src")) == ()
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / ".git").mkdir()
    (tmp_path / "README.md").write_text("- tensorflow==1.4\n", encoding="utf-8")
    assert read_documented(str(inner), None) == ()


def test_a_readme_that_states_tensorflow_1_makes_the_project_tf1(tmp_path: Path) -> None:
    """faceswap-GAN, keras-yolo3: no pin file, the README's requirements: TensorFlow 1 with
    standalone Keras 2, whose `predict` runs one cached function (quiet), and a session loop
    that builds ops (flagged); the same script without the README is TF2 code."""
    readme = "# A GAN\n\n## Requirements\n\n* keras 2.1.5\n* Tensorflow 1.6.0\n"
    script = GAN_COMPAT
    _project(tmp_path, {"gan.py": script})
    assert [code for code, *_ in _findings(tmp_path / "gan.py")] == ["TFL402", "TFL503"]
    (tmp_path / "README.md").write_text(readme, encoding="utf-8")
    assert _findings(tmp_path / "gan.py") == [SESSION_LOOP]
    frameworks = Configuration().for_path(tmp_path / "gan.py").options.frameworks
    assert str(frameworks).endswith(
        f"stated: tensorflow >=1.6,<1.6.1 ({tmp_path}/README.md:6); "
        f"stated: keras >=2.1.5,<2.1.6 ({tmp_path}/README.md:5)"
    )


#: jrosebr1/simple-keras-rest-api: standalone Keras serving ResNet50 from a Flask route, and
#: its README's copy of the server's output.
KERAS_SERVER = textwrap.dedent(
    """\
    import flask
    from keras.applications import ResNet50

    app = flask.Flask(__name__)
    model = ResNet50(weights="imagenet")

    @app.route("/predict", methods=["POST"])
    def predict():
        return flask.jsonify(model.predict(flask.request.files["image"].read()).tolist())
    """
)
SERVER_OUTPUT = (
    "# A Keras REST API\n\n```sh\n$ python run_keras_server.py\nUsing TensorFlow backend.\n"
    " * Loading Keras model and Flask starting server...\n```\n"
)


def test_a_readme_showing_multi_backend_keras_output_states_keras_before_2_4(
    tmp_path: Path,
) -> None:
    """Multi-backend Keras (2.0 to 2.3) writes ``Using TensorFlow backend.`` when imported; a
    README that shows it shows the program ran that Keras, whose ``predict`` runs one cached
    function (no ``tf.data`` pipeline per call): TFL402 is quiet on the route. Without the
    README the route's ``predict`` per request is flagged; prose that names a backend states
    nothing."""
    _project(tmp_path, {"run_keras_server.py": KERAS_SERVER})
    flagged = [code for code, *_ in _findings(tmp_path / "run_keras_server.py")]
    assert flagged == ["TFL402"]
    (tmp_path / "README.md").write_text(SERVER_OUTPUT, encoding="utf-8")
    assert _findings(tmp_path / "run_keras_server.py") == []
    stated = read_documented(str(tmp_path), None)
    assert [(d.family, str(d.versions), d.where) for d in stated] == [
        ("keras", "<2.4", f"{tmp_path}/README.md:5")
    ]
    prose = "Keras prints `Using TensorFlow backend.` when it starts.\n"
    (tmp_path / "README.md").write_text(prose, encoding="utf-8")
    assert read_documented(str(tmp_path), None) == ()


def test_pins_and_code_decide_over_a_readme(tmp_path: Path) -> None:
    """A README narrows what a pin file allows; where they contradict, the pin file decides
    (a README left behind by an upgrade), and so does the code's own evidence."""
    _project(tmp_path, {"gan.py": GAN_COMPAT, "requirements.txt": "tensorflow>=1.6\n"})
    (tmp_path / "README.md").write_text("- tensorflow 1.6.0\n", encoding="utf-8")
    assert _findings(tmp_path / "gan.py") == [SESSION_LOOP]
    (tmp_path / "requirements.txt").write_text("tensorflow>=2.4\n", encoding="utf-8")
    assert [code for code, *_ in _findings(tmp_path / "gan.py")] == ["TFL402", "TFL503"]
    files = {"agent.py": KERAS_1_AGENT, "train.py": FRAME_LOOP, "README.md": "- Keras 2.12\n"}
    (tmp_path / "agent").mkdir()
    root = _project(tmp_path / "agent", files)
    assert _findings(root / "train.py") == []  # Keras 1 arguments: before 2.4, as the code says


#: Eve (tdeboissiere/DeepLearningImplementations): Keras 2.0.8 on Theano 0.9, a model built
#: and fit per optimizer named on the command line.
THEANO_README = "## Requirements\n\n- numpy==1.13.3\n- Keras==2.0.8\n- Theano==0.9.0\n"
EXPERIMENTS = textwrap.dedent(
    """\
    import sys
    from keras.models import Sequential
    from keras.layers import Dense
    from keras import backend as K

    for name in sys.argv[1:]:
        model = Sequential([Dense(1, input_shape=(4,))])
        model.compile(name, "mse")
        model.fit(x, y)
        f = K.function([model.input], [model.output])
        f([x])
    """
)


def test_keras_on_theano_runs_no_tensorflow(tmp_path: Path) -> None:
    """A project that installs Theano and multi-backend Keras, and not TensorFlow, runs its
    Keras on Theano: no rule about TensorFlow speaks, unless the program imports TensorFlow
    itself; with TensorFlow stated beside Theano, it is linted as before."""
    _project(tmp_path, {"main.py": EXPERIMENTS})
    everything = ["TFL401", "TFL403", "TFL503"]
    assert [code for code, *_ in _findings(tmp_path / "main.py")] == everything
    (tmp_path / "README.md").write_text(THEANO_README, encoding="utf-8")
    assert _findings(tmp_path / "main.py") == []
    frameworks = Configuration().for_path(tmp_path / "main.py").options.frameworks
    assert frameworks.keras_on_theano == f"{tmp_path}/README.md:5"
    (tmp_path / "main.py").write_text("import tensorflow as tf\n" + EXPERIMENTS, encoding="utf-8")
    # On TensorFlow, but Keras 2.0.8's: no TensorFlow that has the `fit` registry (2.11 on).
    assert [code for code, *_ in _findings(tmp_path / "main.py")] == ["TFL401", "TFL503"]
    (tmp_path / "main.py").write_text(EXPERIMENTS, encoding="utf-8")
    both = THEANO_README.replace("- Theano==0.9.0", "- tensorflow==1.3.0 or theano==0.9.0")
    (tmp_path / "README.md").write_text(both, encoding="utf-8")
    # TensorFlow 1.3 where it runs on TensorFlow: graph mode, no `fit` registry.
    assert [code for code, *_ in _findings(tmp_path / "main.py")] == ["TFL401", "TFL503"]
    (tmp_path / "README.md").unlink()
    (tmp_path / "requirements.txt").write_text("keras==2.0.8\ntheano==0.9.0\n", encoding="utf-8")
    assert _findings(tmp_path / "main.py") == []


@pytest.mark.parametrize(
    ("dockerfile", "expected"),
    [
        # deep-learning-illustrated: a wheel by URL, then a continued `pip install` line
        (
            "FROM jupyter/scipy-notebook\nRUN \\\n  pip install --upgrade pip==19.0.3 && \\\n"
            "  pip install --upgrade https://storage.googleapis.com/tensorflow/linux/cpu/"
            "tensorflow-1.8.0-cp36-cp36m-linux_x86_64.whl && \\\n"
            "  pip install tflearn==0.3.2 \\\n    keras==2.2.0 \\\n    nltk==3.3\n",
            [("tensorflow", "==1.8", 2), ("keras", "==2.2", 2)],
        ),
        # TensorFlow's own image
        (
            "FROM tensorflow/tensorflow:1.15.0-gpu-py3\nRUN pip install keras\n",
            [("tensorflow", "==1.15", 1), ("keras", "any version", 2)],
        ),
        (
            "FROM tensorflow/tensorflow:latest-gpu\nRUN pip install 'tensorflow>=2.4'\n",
            [("tensorflow", ">=2.4", 2)],
        ),
        (
            "RUN conda install -y tensorflow=1.14 && echo done\n",
            [("tensorflow", ">=1.14,<1.15", 1)],
        ),
        # a comment installs nothing
        ("# RUN pip install tensorflow==1.4\nFROM python:3.8\n", []),
    ],
)
def test_what_a_dockerfile_installs(
    tmp_path: Path, dockerfile: str, expected: list[tuple[str, str, int]]
) -> None:
    (tmp_path / "Dockerfile").write_text(dockerfile, encoding="utf-8")
    stated = read_documented(str(tmp_path), str(tmp_path))
    found = sorted((d.family, str(d.versions), d.where) for d in stated)
    assert found == sorted(
        (family, versions, f"{tmp_path}/Dockerfile:{line}") for family, versions, line in expected
    )


@pytest.mark.parametrize(
    ("name", "read"),
    [
        ("Dockerfile", True),
        ("Dockerfile.gpu", True),
        # face-api's services: one image per device, `docker build -f Dockerfile-cpu`
        ("Dockerfile-cpu", True),
        ("Dockerfile_gpu", True),
        ("serve.Dockerfile", True),
        ("dockerfile", True),
        ("Dockerfiles", False),
        ("Dockerfile-cpu.md", False),
        ("notes.txt", False),
    ],
)
def test_every_dockerfile_name_is_read(tmp_path: Path, name: str, read: bool) -> None:
    (tmp_path / name).write_text("FROM tensorflow/tensorflow:1.11.0-py3\n", encoding="utf-8")
    stated = read_documented(str(tmp_path), str(tmp_path))
    expected = [("tensorflow", "==1.11", f"{tmp_path}/{name}:1")] if read else []
    assert [(d.family, str(d.versions), d.where) for d in stated] == expected


@pytest.mark.parametrize(
    ("directory", "read"),
    [
        # matech96/cifar10: `Docker/Dockerfile`, FROM tensorflow/tensorflow:1.14.0-gpu-py3
        ("Docker", True),
        ("docker", True),
        # any other directory, or one below `docker/`, is not the project's image
        ("deploy", False),
        ("docker/gpu", False),
    ],
)
def test_the_dockerfile_of_a_docker_directory_is_read(
    tmp_path: Path, directory: str, read: bool
) -> None:
    (tmp_path / directory).mkdir(parents=True)
    dockerfile = tmp_path / directory / "Dockerfile"
    dockerfile.write_text("FROM tensorflow/tensorflow:1.14.0-gpu-py3\n", encoding="utf-8")
    stated = read_documented(str(tmp_path), str(tmp_path))
    expected = [("tensorflow", "==1.14", f"{dockerfile}:1")] if read else []
    assert [(d.family, str(d.versions), d.where) for d in stated] == expected


def test_a_dockerfile_that_installs_multi_backend_keras_quiets_predict(tmp_path: Path) -> None:
    """deep-learning-illustrated: notebooks with no pin file, a Dockerfile that installs
    TensorFlow 1.8 and Keras 2.2.0; `predict` in a GAN's training loop runs Keras 2.2's one
    cached predict function."""
    _project(tmp_path, {"gan.py": GAN_COMPAT})
    assert [code for code, *_ in _findings(tmp_path / "gan.py")] == ["TFL402", "TFL503"]
    (tmp_path / "Dockerfile").write_text(
        "FROM python:3.6\nRUN pip install tensorflow==1.8.0 keras==2.2.0\n", encoding="utf-8"
    )
    assert _findings(tmp_path / "gan.py") == [SESSION_LOOP]


SPINNINGUP_LOGGER = """\
import tensorflow as tf


class Logger:
    def setup_tf_saver(self, sess, inputs, outputs):
        self.tf_saver_elements = dict(session=sess, inputs=inputs, outputs=outputs)

    def save_state(self):
        graph = tf.get_default_graph()
        tf.saved_model.simple_save(export_dir="model", **self.tf_saver_elements)
"""

SPINNINGUP_DDPG = """\
import tensorflow as tf
from logx import Logger


def ddpg(epochs=100):
    sess = tf.Session()
    x = tf.placeholder(tf.float32)
    logger = Logger()
    logger.setup_tf_saver(sess, inputs={"x": x}, outputs={"y": x})
    for t in range(epochs * 4000):
        sess.run(x, {x: 1.0})
        if (t + 1) % 4000 == 0:
            logger.save_state()
"""


VALIDATOR = """\
import numpy as np
import tensorflow as tf


class EmbeddingValidator:
    def __init__(self):
        self.plot_array_var = tf.get_variable("plot", shape=[200, 784])

    def validate(self, sess, samples):
        sess.run(self.plot_array_var.assign(np.array(samples)))
"""

TRAINER = """\
import tensorflow as tf
from validator import EmbeddingValidator


def train(batches):
    sess = tf.Session()
    validator = EmbeddingValidator()
    for step, batch in enumerate(batches):
        sess.run(batch)
        validator.validate(sess, batch)
"""


def test_a_variable_assigned_in_a_module_of_tensorflow_1_code_grows_the_graph(
    tmp_path: Path,
) -> None:
    """VAE-GAN's embedding validator: a module that names no session nor placeholder, but
    calls what only TensorFlow 1 has (``tf.get_variable``), is graph code: its ``assign``
    adds an op each time the trainer's session loop validates."""
    root = _project(tmp_path, {"validator.py": VALIDATOR, "trainer.py": TRAINER})
    assert _findings(root) == [
        (
            "TFL503",
            10,
            9,
            "`self.plot_array_var.assign(...)` through `validate` every iteration adds nodes "
            "to the default graph of a loop that runs it (`sess.run`): the graph grows for as "
            "long as the loop runs; build it once before the loop (`graph.finalize()` catches "
            "this)",
        )
    ]


def test_a_module_written_for_tensorflow_1_builds_ops_for_a_loop_in_another(
    tmp_path: Path,
) -> None:
    """spinningup: ``logx.py`` opens no session, but what it calls exists only in TensorFlow 1
    (``tf.get_default_graph``, ``tf.saved_model.simple_save``), so it runs in graph mode, and
    each ``simple_save`` adds a saver to the graph of the loop in ``ddpg.py`` that calls it.
    Written for TensorFlow 2 (``tf.compat.v1`` and an eager module), nothing is said."""
    root = _project(tmp_path, {"logx.py": SPINNINGUP_LOGGER, "ddpg.py": SPINNINGUP_DDPG})
    assert _findings(root) == [
        (
            "TFL503",
            13,
            13,
            "`tf.saved_model.simple_save(...)` through `save_state` every 4000th iteration (100 "
            "per call of `ddpg`) adds nodes to the default graph of a loop that runs it "
            "(`sess.run`): the graph grows for as long as the loop runs; build it once before "
            "the loop (`graph.finalize()` catches this)",
        )
    ]
    (root / "logx.py").write_text(
        SPINNINGUP_LOGGER.replace("tf.get_default_graph", "tf.compat.v1.get_default_graph").replace(
            "tf.saved_model.simple_save", "tf.compat.v1.saved_model.simple_save"
        ),
        encoding="utf-8",
    )
    assert _findings(root) == []


NETWORK_OPS = (
    "import tensorflow as tf\n\n\ndef linear(x, size):\n"
    '    w = tf.get_variable("w", [x.shape[1], size])\n    return tf.matmul(x, w)\n'
)
HELPER_USER = (
    "import tensorflow as tf\n\nfrom network_ops import linear\n\n"
    'model = tf.keras.models.load_model("q.keras")\nfor step in range(1000):\n'
    "    action = model.predict(env.state()[None])\n    env.step(action)\n"
    "    print(tf.reduce_mean(env.rewards()))\n"
)


@pytest.mark.parametrize(
    ("pins", "expected"),
    [
        # TensorFlow 2: a helper that only TensorFlow 1 could run is one nothing calls.
        (
            {"requirements.txt": "tensorflow>=2.2\n"},
            [
                (
                    "TFL402",
                    7,
                    14,
                    "`model.predict` every iteration (1000 in all) builds a new `tf.data` "
                    "pipeline each call; use `model(x, training=False)` or `predict_on_batch`",
                )
            ],
        ),
        # No pin: code written for TensorFlow 1 runs in its graph mode.
        (
            {},
            [
                (
                    "TFL503",
                    9,
                    11,
                    "`tf.reduce_mean(...)` every iteration (1000 in all) adds nodes to the "
                    "default graph of a loop that runs it (`model.predict`): the graph grows "
                    "for as long as the loop runs; build it once before the loop "
                    "(`graph.finalize()` catches this)",
                )
            ],
        ),
    ],
)
def test_a_tensorflow_1_helper_in_a_tensorflow_2_project_is_no_graph_mode(
    tmp_path: Path, pins: dict[str, str], expected: list[Finding]
) -> None:
    """arnomoonens/yarll pins TensorFlow >= 2.2; its ``network_ops.py`` keeps a
    ``tf.get_variable`` helper beside the Keras layers its TF2 agents import."""
    _project(tmp_path, {"network_ops.py": NETWORK_OPS, "agent.py": HELPER_USER, **pins})
    assert _findings(tmp_path / "agent.py") == expected
