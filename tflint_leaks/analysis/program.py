"""The whole-program facts of one project: one solver, its value and effect equations.

:class:`Program` is what the rule kit's :class:`~tflint_leaks.rulekit.context.FileContext`
asks (rules never come here themselves): the value of an expression in a place
(:mod:`.inference`, over the lattice of :mod:`.lattice`), what a call runs, what it does each
time it runs (:mod:`.effects`), the ``tf.function`` it invokes, an integer's value, a NumPy
array's origin, and where a piece of state is assigned (:mod:`.writes`). Every question is
answered by the one :class:`~.solver.Solver`, whose answers are cached for the run and do not
depend on the order they are asked in.
"""

from __future__ import annotations

import weakref
from collections.abc import Generator, Sequence
from typing import Any

from tflint_leaks.analysis.branches import decide
from tflint_leaks.analysis.effects import Effect, Effects, TfFunctionTarget
from tflint_leaks.analysis.facts import Site, Span
from tflint_leaks.analysis.inference import Inference, SiteId, Target, Where
from tflint_leaks.analysis.lattice import ArrayOrigin, FunctionRef, Kind, Value
from tflint_leaks.analysis.project import ProjectIndex
from tflint_leaks.analysis.solver import Solver
from tflint_leaks.analysis.symbolic import Expr
from tflint_leaks.analysis.writes import Write, Writes


class Program:
    def __init__(self, project: ProjectIndex) -> None:
        self.project = project.close()
        self.inference = Inference(project)
        self.effects = Effects(self.inference)
        self.writes = Writes(self.inference)
        self.solver = Solver({**self.inference.equations(), **self.effects.equations()})

    def _run(self, computation: Generator[Any, Any, Any]) -> Any:
        return self.solver.run(computation)

    def value(self, expr: Expr, where: Where) -> Value:
        """What ``expr`` may be, evaluated in ``where``."""
        found: Value = self._run(self.inference.evaluate(expr, where))
        return found

    def decide(self, test: Expr, where: Where) -> bool | None:
        """Whether the ``if`` test ``test`` holds in ``where`` for every value its operands
        may be (None: it depends; :func:`~.branches.decide`)."""
        found: bool | None = self._run(
            decide(test, lambda expr: self.inference.evaluate(expr, where))
        )
        return found

    def decide_on_state(self, test: Expr, where: Where) -> bool | None:
        """Whether a method's ``if`` test on its instance's attributes holds on every call:
        each ``self.name`` it reads as :meth:`~.inference.Inference.instance_state` has it,
        anything else not known."""
        found: bool | None = self._run(
            decide(test, lambda expr: self.inference.instance_state(expr, where))
        )
        return found

    def targets(self, call: Expr, where: Where) -> tuple[Target, ...]:
        """What a call may run."""
        found: tuple[Target, ...] = self._run(self.inference.targets(call, where))
        return found

    def effects_of_call(self, call: Expr, span: Span, where: Where) -> tuple[Effect, ...]:
        """What one call does each time it runs (the call itself, and the summary of the
        project code it runs, each effect with its chain). A parameter the callee passes to a
        ``tf.function`` is given by its position in this call."""
        found = self._run(self.effects.site_effects(Site(call, span), where, nested=False))
        return tuple(found)

    def summary(self, ref: FunctionRef) -> tuple[Effect, ...]:
        """What running a project function does each time."""
        found: tuple[Effect, ...] = self.solver.value(("summary", ref.path, ref.qualname))
        return found

    def callers(self, ref: FunctionRef) -> tuple[SiteId, ...]:
        """The call sites that may run a project function."""
        found: tuple[SiteId, ...] = self.solver.value(("callers", ref.path, ref.qualname))
        return found

    def runs_in_graph(self, ref: FunctionRef) -> bool:
        """Whether a project function may run with a graph made the default, by a caller in a
        ``with tf.compat.v1.Session():`` block or one of ``g.as_default()`` (directly or
        through other callers)."""
        found: bool = self.solver.value(("in graph", ref.path, ref.qualname))
        return found

    def site_span(self, site: SiteId) -> Span:
        """Where a call site is."""
        _, where = self.inference.site(site)
        return where.body.calls[site[2]].span

    def is_factory(self, ref: FunctionRef) -> bool:
        found: bool = self._run(self.effects.is_factory(ref))
        return found

    def tf_function(self, call: Expr, where: Where) -> TfFunctionTarget | None:
        """The ``tf.function`` a call invokes, if the project index knows it."""
        found: TfFunctionTarget | None = self._run(self.effects.tf_function(call, where))
        return found

    def writes_of(self, expr: Expr, where: Where) -> tuple[Write, ...]:
        """Every assignment of the state ``expr`` reads in ``where`` (:mod:`.writes`)."""
        found: tuple[Write, ...] = self._run(self.writes.of(expr, where))
        return found

    def toggled(self, writes: Sequence[Write]) -> bool:
        """Two of ``writes`` may both run in one run of the program (:meth:`.writes.Writes.
        toggled`)."""
        return self.writes.toggled(writes)

    def defines(self, value: Value, method: str) -> bool:
        """Whether one of the project classes ``value`` may be of defines ``method``."""
        return self.effects.defines(value, method)

    def repeats_inside(self, effect: Effect) -> bool:
        """``effect`` runs many times for each run of its chain's first call: a call of the
        chain below the first, or the effect itself, sits in a loop of the function making it
        (``replay()`` fitting in ``for _ in range(10):``)."""
        for path, span, qualname in effect.places:
            function = self.inference.module(path).functions.get(qualname)
            if function is not None and function.body.loop_around(span) is not None:
                return True
        return False

    def array_origin(self, expr: Expr, where: Where) -> ArrayOrigin | None:
        """Where the NumPy array ``expr`` may hold comes from, unless it may also be a tensor,
        or is a scalar or a small literal array."""
        value = self.value(expr, where)
        if value.top or value.may_be(Kind.TENSOR):
            return None
        origins = [o for a in value.atoms_of(Kind.ARRAY) for o in a.origins]
        return min(origins, key=lambda origin: origin.order) if origins else None


_PROGRAMS: weakref.WeakKeyDictionary[ProjectIndex, Program] = weakref.WeakKeyDictionary()


def program_of(project: ProjectIndex) -> Program:
    """The one :class:`Program` of a project index (its facts are cached for the run)."""
    found = _PROGRAMS.get(project)
    if found is None:
        found = _PROGRAMS[project] = Program(project)
    return found
