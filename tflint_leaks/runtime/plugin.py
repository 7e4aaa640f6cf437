"""The pytest plugin (entry point ``pytest11``: ``tflint_leaks``; ``-p no:tflint_leaks`` turns
it off): the ``tf_budget`` fixture, whose retracing and leak budgets make a test fail when a
fixed leak comes back. See ``docs/budget.md``.

This module is imported by pytest in every run where tflint-leaks is installed: it imports
neither TensorFlow nor the fixture's implementation (``budget``) until a test asks for
``tf_budget``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tflint_leaks.runtime.budget import TFBudget

MISSING = "tf_budget needs TensorFlow: pip install 'tflint-leaks[runtime]'"


@pytest.fixture
def tf_budget(request: pytest.FixtureRequest) -> TFBudget:
    """Retracing and leak budgets: ``tf_budget.traces(fn, at_most=1)`` and
    ``tf_budget.iterations(n, warmup=5)`` (``docs/budget.md``)."""
    from tflint_leaks.runtime import tensorflow_available

    if not tensorflow_available():
        pytest.fail(MISSING, pytrace=False)
    from tflint_leaks.runtime import budget

    return budget.TFBudget(budget.instruments(str(request.config.rootpath)))
