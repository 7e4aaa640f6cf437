"""Options rules read (``[tool.tflint-leaks]`` keys that change what a rule reports)."""

from __future__ import annotations

from dataclasses import dataclass, field

from tflint_leaks.frameworks import Frameworks


@dataclass(frozen=True)
class RuleOptions:
    #: A Python value taking at most this many distinct values over a loop (a short literal
    #: list of hyperparameters, ``range(3)``) retraces a bounded number of times: not flagged.
    max_python_values: int = 5
    #: A loop with a known trip count of at most this many iterations (``range(10)``, a 5-fold
    #: split, a literal list) builds, fits or predicts a bounded number of times: the model
    #: rules (TFL401-TFL404) stay quiet about it. Recreated ``tf.function``s (TFL103, TFL104)
    #: retrace once per iteration and use ``max_python_values``.
    max_loop_iterations: int = 10
    #: The TensorFlow and Keras the file's project runs (its pins, or ``target-tensorflow``):
    #: which rules apply (the registry's ``versions``) and what their messages say.
    frameworks: Frameworks = field(default_factory=Frameworks)
