"""The one spelling of a qualified name that the rules compare against."""

from __future__ import annotations

import pytest

from tflint_leaks.analysis.names import canonical


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("tensorflow.keras.layers.Dense", "keras.layers.Dense"),
        ("keras.engine.training.Model", "keras.Model"),
        # A class's attribute keeps the class's one spelling (chess-alpha-zero's Keras 2.0.8).
        ("keras.engine.training.Model.from_config", "keras.Model.from_config"),
        ("keras.models.Model.from_config", "keras.Model.from_config"),
        ("tensorflow.python.keras.engine.training.Model.fit", "keras.Model.fit"),
        ("six.moves.range", "builtins.range"),
        ("tf_keras", "keras"),
        ("tensorflow.compat.v2.function", "tensorflow.function"),
        ("numpy.random.rand", "numpy.random.rand"),
        ("keras.saving.load_model", "keras.models.load_model"),
        # TimeGAN (unseen set P of stop 43): `import tensorflow.compat.v1 as tf` in TF 2.
        ("tensorflow.compat.v1.GradientTape", "tensorflow.GradientTape"),
        # TensorFlow 2.0/2.1's own package (kaggle-bengali-ai, unseen set Q of stop 43).
        ("tensorflow_core.python.keras.models.Sequential", "keras.Sequential"),
        ("tensorflow_core.GradientTape", "tensorflow.GradientTape"),
    ],
)
def test_canonical(name: str, expected: str) -> None:
    assert canonical(name) == expected
