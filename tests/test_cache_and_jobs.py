"""Cold, warm and parallel runs give the same findings; the cache invalidates correctly and
never breaks a run."""

from __future__ import annotations

import random
import textwrap
from pathlib import Path

import pytest

from tflint_leaks.cli import main
from tflint_leaks.config import Settings
from tflint_leaks.engine.cache import FORMAT
from tflint_leaks.engine.runner import RunResult, lint_paths

ROOT = Path(__file__).resolve().parent.parent
EVERY_RULE = Settings(select=("ALL",))

STEPS = textwrap.dedent(
    """\
    import tensorflow as tf

    @tf.function
    def rollout(x, horizon):
        return x * tf.cast(horizon, tf.float32)
    """
)
TRAIN = textwrap.dedent(
    """\
    import tensorflow as tf
    from steps import rollout

    for horizon in range(100):
        rollout(tf.ones([1]), horizon)
    """
)


def _key(result: RunResult) -> list[tuple[str, str, int, int, str]]:
    return [(d.file, d.code, d.start.line, d.start.column, d.message) for d in result.diagnostics]


def _generated_tree(root: Path, files: int = 40) -> Path:
    """A tree of modules mixing the fixtures' code, some importing each other."""
    fixtures = sorted((ROOT / "fixtures").rglob("*.py"))
    chooser = random.Random(7)
    for number in range(files):
        package = root / f"pkg{number % 4}"
        package.mkdir(parents=True, exist_ok=True)
        (package / "__init__.py").touch()
        source = chooser.choice(fixtures).read_text()
        (package / f"module{number}.py").write_text(source)
    (root / "steps.py").write_text(STEPS)
    (root / "train.py").write_text(TRAIN)
    return root


@pytest.mark.parametrize("tree", ["fixtures", "generated"])
def test_cold_warm_and_parallel_runs_agree(tmp_path: Path, tree: str) -> None:
    paths = [ROOT / "fixtures"] if tree == "fixtures" else [_generated_tree(tmp_path / "tree")]
    cache = tmp_path / "cache"
    cold = _key(lint_paths(paths, EVERY_RULE))
    assert cold
    parallel = _key(lint_paths(paths, EVERY_RULE, jobs=2))
    first = _key(lint_paths(paths, EVERY_RULE, cache_dir=cache))
    warm = _key(lint_paths(paths, EVERY_RULE, cache_dir=cache))
    warm_parallel = _key(lint_paths(paths, EVERY_RULE, jobs=2, cache_dir=cache))
    assert parallel == cold
    assert first == cold
    assert warm == cold
    assert warm_parallel == cold
    assert (
        (cache / "CACHEDIR.TAG")
        .read_text()
        .startswith("Signature: 8a477f597d28d172789f06886806bc55")
    )


def test_changing_an_imported_module_rechecks_its_importers(tmp_path: Path) -> None:
    (tmp_path / "steps.py").write_text(STEPS)
    (tmp_path / "train.py").write_text(TRAIN)
    cache = tmp_path / ".cache"
    assert [d.code for d in lint_paths([tmp_path], EVERY_RULE, cache_dir=cache).diagnostics] == [
        "TFL101"
    ]
    # rollout gains an input_signature: train.py did not change, but its finding must go.
    (tmp_path / "steps.py").write_text(
        STEPS.replace(
            "@tf.function",
            "@tf.function(input_signature=[tf.TensorSpec([1]), tf.TensorSpec([], tf.int32)])",
        )
    )
    assert lint_paths([tmp_path], EVERY_RULE, cache_dir=cache).diagnostics == []
    (tmp_path / "steps.py").write_text(STEPS)
    assert len(lint_paths([tmp_path], EVERY_RULE, cache_dir=cache).diagnostics) == 1


LIB = textwrap.dedent(
    """\
    import tensorflow as tf


    def train(n):
        for _ in range(n):
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile("sgd", "mse")
    """
)


def test_changing_a_caller_or_what_it_imports_rechecks_the_callee(tmp_path: Path) -> None:
    """``lib.py`` imports nothing of the project, but how often its loop runs is what its
    callers pass: editing ``main.py`` (or a module it imports that is not linted itself)
    changes ``lib.py``'s findings, warm as cold."""
    (tmp_path / "lib.py").write_text(LIB)
    (tmp_path / "settings").mkdir()
    (tmp_path / "settings" / "__init__.py").write_text("")
    (tmp_path / "settings" / "sizes.py").write_text("N = 5\n")
    main_py = tmp_path / "main.py"
    main_py.write_text("from lib import train\nfrom settings.sizes import N\n\ntrain(N)\n")
    paths = [tmp_path / "lib.py", main_py]
    cache = tmp_path / ".cache"

    def findings() -> list[tuple[str, int]]:
        warm = lint_paths(paths, EVERY_RULE, cache_dir=cache)
        cold = lint_paths(paths, EVERY_RULE)
        assert _key(warm) == _key(cold)
        return [(Path(d.file).name, d.start.line) for d in warm.diagnostics]

    assert findings() == []
    (tmp_path / "settings" / "sizes.py").write_text("N = 500\n")
    assert findings() == [("lib.py", 6)]
    main_py.write_text("from lib import train\n\ntrain(3)\n")
    assert findings() == []
    assert findings() == []  # warm again, nothing changed


#: A trading script that picks its agent module by a command-line option (Albert-Z-Guo's
#: Deep-Reinforcement-Stock-Trading): ``importlib.import_module(f"agents.{name}")``.
PICKS_ITS_AGENT = textwrap.dedent(
    """\
    import argparse
    import importlib

    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name", default="dqn")
    inputs = parser.parse_args()
    agent = importlib.import_module(f"agents.{inputs.model_name}").Agent()
    for day in days:
        actions = agent.model.predict(day)
    """
)
AGENT = textwrap.dedent(
    """\
    import tensorflow as tf


    class Agent:
        def __init__(self):
            self.model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
    """
)
PREDICT_PER_DAY = (
    "train.py",
    "TFL402",
    9,
    15,
    "`agent.model.predict` every iteration builds a new `tf.data` pipeline each call; use "
    "`agent.model(x, training=False)` or `predict_on_batch`",
)


def test_a_module_imported_by_a_computed_name_is_followed_and_rechecks_its_importer(
    tmp_path: Path,
) -> None:
    """The script is linted though it imports nothing of the project by a statement (the agent
    module is what says it uses TensorFlow), with the default option's agent; changing that
    module rechecks the script."""
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "__init__.py").write_text("")
    (tmp_path / "agents" / "dqn.py").write_text(AGENT)
    (tmp_path / "train.py").write_text(PICKS_ITS_AGENT)
    cache = tmp_path / ".cache"

    def findings() -> list[tuple[str, str, int, int, str]]:
        result = lint_paths([tmp_path], EVERY_RULE, cache_dir=cache)
        return [(Path(f).name, *rest) for f, *rest in _key(result)]

    assert findings() == [PREDICT_PER_DAY]
    (tmp_path / "agents" / "dqn.py").write_text(AGENT.replace("tf.keras.Sequential", "make"))
    assert findings() == []
    (tmp_path / "agents" / "dqn.py").write_text(AGENT)
    assert findings() == [PREDICT_PER_DAY]


def test_noqa_added_to_a_cached_file_applies(tmp_path: Path) -> None:
    (tmp_path / "steps.py").write_text(STEPS)
    (tmp_path / "train.py").write_text(TRAIN)
    cache = tmp_path / ".cache"
    assert lint_paths([tmp_path], EVERY_RULE, cache_dir=cache).diagnostics
    (tmp_path / "train.py").write_text(TRAIN.replace("horizon)\n", "horizon)  # noqa: TFL101\n"))
    assert lint_paths([tmp_path], EVERY_RULE, cache_dir=cache).diagnostics == []


def test_settings_are_part_of_the_key(tmp_path: Path) -> None:
    (tmp_path / "steps.py").write_text(STEPS)
    (tmp_path / "train.py").write_text(TRAIN)
    cache = tmp_path / ".cache"
    assert lint_paths([tmp_path], EVERY_RULE, cache_dir=cache).diagnostics
    only_tapes = Settings(select=("TFL2",))
    assert lint_paths([tmp_path], only_tapes, cache_dir=cache).diagnostics == []


def test_corrupt_cache_is_reported_and_ignored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "steps.py").write_text(STEPS)
    (tmp_path / "train.py").write_text(TRAIN)
    cache = tmp_path / ".cache"
    assert main(["--cache-dir", str(cache), str(tmp_path)]) == 1
    capsys.readouterr()
    (stored,) = cache.glob("results-*.json")
    stored.write_bytes(f"{FORMAT} 0123\n".encode() + b"\x80garbage")
    assert main(["--cache-dir", str(cache), str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert "TFL101" in captured.out
    assert captured.err == (
        f"warning: cache {stored} was not written by this user's tflint-leaks; ignored\n"
    )
    assert main(["--cache-dir", str(cache), str(tmp_path)]) == 1  # rewritten, warm again
    assert capsys.readouterr().err == ""


PAYLOAD = b"cposix\nsystem\n(Vtouch %s\ntR."


def test_a_crafted_cache_never_runs_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pull request can commit files into the cache directory. Nothing in it is unpickled or
    trusted: a pickle where the old cache lived is never read, and a results file with a forged
    or missing signature is ignored before it is parsed."""
    (tmp_path / "steps.py").write_text(STEPS)
    (tmp_path / "train.py").write_text(TRAIN)
    cache = tmp_path / ".tflint-leaks-cache"
    cache.mkdir()
    marker = tmp_path / "pwned"
    payload = PAYLOAD % str(marker).encode()
    (cache / "0.1.0-0123456789abcdef.pickle").write_bytes(b"tflint-leaks-cache-1\n" + payload)
    monkeypatch.chdir(tmp_path)
    assert main(["."]) == 1
    assert "TFL101" in capsys.readouterr().out
    (results,) = cache.glob("results-*.json")
    for forged in (f"{FORMAT} ".encode() + b"0" * 128 + b"\n[]", payload):
        results.write_bytes(forged)
        assert main(["."]) == 1
        captured = capsys.readouterr()
        assert "TFL101" in captured.out
        reason = "was not written by this user's tflint-leaks" if forged != payload else "is not"
        shown = results
        assert captured.err.startswith(f"warning: cache {shown} {reason}"), captured.err
    assert not marker.exists()


def test_a_signed_cache_of_the_wrong_shape_is_rejected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Even with a valid signature, the data must have the declared types."""
    from tflint_leaks.engine import cache as cache_module

    (tmp_path / "steps.py").write_text(STEPS)
    (tmp_path / "train.py").write_text(TRAIN)
    directory = tmp_path / ".cache"
    assert main(["--cache-dir", str(directory), str(tmp_path)]) == 1
    capsys.readouterr()
    (stored,) = directory.glob("results-*.json")
    key = cache_module.secret_path().read_bytes()
    body = b'["", [], {"train.py": [1, [], [], []]}]'
    signature = cache_module.hmac.new(key, body, cache_module.hashlib.blake2b).hexdigest()
    stored.write_bytes(f"{cache_module.FORMAT} {signature}\n".encode() + body)
    assert main(["--cache-dir", str(directory), str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert "TFL101" in captured.out
    assert captured.err.startswith(f"warning: cache {stored} is corrupt (expected str, got int)")


def test_unwritable_cache_is_reported_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "steps.py").write_text(STEPS)
    (tmp_path / "train.py").write_text(TRAIN)
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the cache directory should be")
    assert main(["--cache-dir", str(blocker / "cache"), str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert "TFL101" in captured.out
    assert f"warning: cache {blocker / 'cache'} cannot be written" in captured.err


def test_no_cache_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "steps.py").write_text(STEPS)
    (tmp_path / "train.py").write_text(TRAIN)
    monkeypatch.chdir(tmp_path)
    assert main(["--no-cache", "."]) == 1
    assert not (tmp_path / ".tflint-leaks-cache").exists()
    assert main(["."]) == 1
    assert (tmp_path / ".tflint-leaks-cache" / "CACHEDIR.TAG").is_file()
