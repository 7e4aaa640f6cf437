"""What a rule needs a unit to mention before the libcst pass is worth running on it.

A rule declares :class:`Triggers` in its registry entry: identifiers at least one of which a unit
(a top-level function or a method) must mention for the rule to fire in it, either anywhere
(``names``) or together with a Python loop (``loop_names``), optionally extended by the project's
own interesting definitions (``project_loop_names``: ``tf.function``s, classes with
``tf.function`` methods, functions that create ``tf.function``s or build models; or
``project_graph_runners``: functions that run a TF1 graph). A rule without
triggers needs every unit. Plain data, so the registry can describe every rule without importing
its module (or libcst).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


def identifiers(qualified: Iterable[str]) -> frozenset[str]:
    """The last component of each qualified name (what a unit's ``ast`` mentions)."""
    return frozenset(name.rpartition(".")[2] for name in qualified)


@dataclass(frozen=True)
class Triggers:
    names: frozenset[str] = frozenset()
    loop_names: frozenset[str] = frozenset()
    project_loop_names: bool = False
    #: Units whose body runs only while a ``tf.function`` traces (wrapped by ``tf.function(f)``).
    traced: bool = False
    #: ``loop_names`` extended by the project's functions that run a TF1 graph each time they
    #: are called (``learn()`` calling ``self.sess.run``).
    project_graph_runners: bool = False
