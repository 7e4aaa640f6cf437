"""A model factory the caller passes in: what calling it makes is a Keras model when the code
uses the result as only a Keras model is used (``Body.model_calls``, ``keras.model_use``),
though no code of the project shows what the factory is."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tflint_leaks.analysis.index import index_source
from tflint_leaks.config import Settings
from tflint_leaks.engine.runner import lint_paths


def _lint(tmp_path: Path, source: str, select: str = "ALL") -> list[tuple[str, int, int]]:
    path = tmp_path / "search.py"
    path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
    result = lint_paths([path], Settings(select=(select,)))
    assert not result.errors
    return [(d.code, d.start.line, d.start.column) for d in result.diagnostics]


def _model_calls(source: str) -> list[str]:
    module = index_source(textwrap.dedent(source), Path("m.py"))
    return sorted(call.func.text for f in module.functions.values() for call in f.body.model_calls)


@pytest.mark.parametrize(
    ("use", "expected"),
    [
        ('model.compile("adam", "mse")', ["build_fn"]),
        ("model.fit(x, y, epochs=3)", ["build_fn"]),
        ("model.fit(x, y, validation_split=0.1)", ["build_fn"]),
        ("model.train_on_batch(x, y)", ["build_fn"]),
        ('model.save_weights("w.h5")', ["build_fn"]),
        # what scikit-learn's estimators (and Keras models) do alike tells nothing
        ("model.fit(x, y)", []),
        ("model.predict(x)", []),
        ("model.get_weights()", []),
        ("other.compile()", []),
    ],
)
def test_a_call_is_a_model_call_by_what_is_done_with_its_result(
    use: str, expected: list[str]
) -> None:
    source = f"""
    def train(build_fn, x, y, other):
        model = build_fn()
        {use}
    """
    assert _model_calls(source) == expected


def test_a_passed_factory_called_in_a_helper_per_grid_point_is_flagged_at_the_loop(
    tmp_path: Path,
) -> None:
    # GridSearchTF: the helper builds and fits what the caller's factory makes.
    source = """
    import tensorflow as tf

    def build_and_evaluate(build_model, params, data):
        model = build_model(**params)
        model.fit(data, epochs=100, callbacks=[tf.keras.callbacks.EarlyStopping()])
        return model.evaluate(data)

    class Experiment:
        def __init__(self, model_builder):
            self.model_builder = model_builder

        def run(self, grid, data):
            for params in grid:
                build_and_evaluate(self.model_builder, params, data)
    """
    assert _lint(tmp_path, source) == [("TFL401", 14, 13), ("TFL403", 14, 13)]


def test_only_tfl401_selected_still_sees_a_compiled_factory_model(tmp_path: Path) -> None:
    source = """
    import tensorflow as tf

    def search(hypermodel, grid):
        for params in grid:
            model = hypermodel(params)
            model.compile("adam", "mse")
    """
    assert _lint(tmp_path, source, select="TFL401") == [("TFL401", 5, 17)]


def test_a_factory_the_project_shows_is_judged_by_what_it_returns(tmp_path: Path) -> None:
    # The call site passes a function that returns a model kept in a global: no new model.
    source = """
    import tensorflow as tf

    MODEL = tf.keras.Sequential([tf.keras.layers.Dense(1)])

    def cached():
        return MODEL

    def search(hypermodel, grid):
        for params in grid:
            model = hypermodel()
            model.compile("adam", "mse")

    search(cached, range(100))
    """
    assert _lint(tmp_path, source) == []


def test_a_method_of_an_object_of_unknown_kind_is_no_passed_factory(tmp_path: Path) -> None:
    # TransformerTTS: `cls.from_config(...)` in a class method of a model class with its own
    # `predict`; what it makes is that class's instance, not a model of unknown class.
    source = """
    import tensorflow as tf

    class Speaker(tf.keras.Model):
        def predict(self, text):
            return self.call(text)

        @classmethod
        def load(cls, path):
            model = cls.from_config(read(path))
            model.load_weights(path)
            return model

    model = Speaker.load("m")
    for line in lines:
        model.predict(line)
    """
    assert _lint(tmp_path, source) == []


def test_a_factory_held_in_a_container_is_one(tmp_path: Path) -> None:
    # image-segmentation-keras: `model_from_name[name](...)` then `model.load_weights(...)`.
    source = """
    import tensorflow as tf

    def search(builders, names, path):
        for name in names:
            model = builders[name](n_classes=2)
            model.load_weights(path)
    """
    path = tmp_path / "search.py"
    path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
    result = lint_paths([path], Settings(select=("ALL",)))
    assert [(d.code, d.start.line, d.start.column, d.message) for d in result.diagnostics] == [
        (
            "TFL401",
            5,
            17,
            "`builders[name]` builds a new Keras model every iteration and the loop never "
            "calls `clear_session()`; Keras' global state grows with each model (`del` and "
            "`gc.collect()` do not release it)",
        )
    ]
