"""The one solver of the whole-program facts: a demand-driven fixpoint of equations.

Every whole-program question is an *unknown* of one equation system: the value of a name in a
scope, what a function returns, the values a parameter is given at its call sites, the call
sites that run a function, what a function does each time it runs. An unknown is a query, a
tuple whose first item names its equation (``("returns", path, qualname)``); the equation is a
generator that *yields* the queries it needs and is sent back their current values, and returns
the unknown's value. Equations never call each other: the solver runs them, so the depth of a
chain of questions (an import chain, a class hierarchy, a call chain of thousands of functions)
is a length of the solver's own list, never of Python's stack, and no input can raise
``RecursionError`` here.

The algorithm is the top-down solver (TD) of Le Charlier and Van Hentenryck, as described by
Seidl et al. ("Three improvements to the top-down solver", 2018): an unknown is evaluated on
demand, starting from its kind's bottom; every value read records who read it; when a value
changes, its readers are destabilised and evaluated again, until nothing changes. A query that
meets itself (a cycle) reads the current, provisional value, and the cycle is iterated until its
values stop changing. Provided every equation is monotone over a lattice of finite height
(:mod:`tflint_leaks.analysis.lattice` is one), the values are the least solution of the system,
so they are the same whatever order the questions come in: one process or several, paths in any
order, a warm cache or a cold one.

Once an unknown is stable it never changes again (nothing it depends on can), so answers are
cached for the run. As a safety net against an equation that is not monotone (a bug), an unknown
whose value changes more than :data:`MAX_CHANGES` times keeps its last value.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Mapping
from typing import Any

#: A query: the equation's name, then its key.
Query = tuple[Any, ...]
#: What an equation is: a generator yielding the queries it reads, returning the value.
Computation = Generator[Query, Any, Any]
Equation = Callable[[Query], Computation]

#: How many times one unknown's value may change before it is kept as it is (a monotone
#: equation over the lattice changes a value a few times at most; this bounds a buggy one).
MAX_CHANGES = 128

_EVAL, _WORK, _ROOT = 0, 1, 2


class _Frame:
    __slots__ = ("computation", "items", "kind", "query")

    def __init__(
        self,
        kind: int,
        query: Query | None,
        computation: Computation | None = None,
        items: Iterator[Query] | None = None,
    ) -> None:
        self.kind = kind
        self.query = query
        self.computation = computation
        self.items = items


class Solver:
    """The unknowns of one run, solved on demand."""

    def __init__(self, equations: Mapping[str, tuple[Equation, Any]]) -> None:
        #: For each equation name: the equation and its unknowns' bottom value.
        self._equations = equations
        self._values: dict[Query, Any] = {}
        self._stable: set[Query] = set()
        self._called: set[Query] = set()
        #: For each unknown, the unknowns whose evaluation read it (a dict as an ordered set).
        self._influence: dict[Query, dict[Query, None]] = {}
        self._changes: dict[Query, int] = {}
        self.evaluations = 0

    def _bottom(self, query: Query) -> Any:
        return self._equations[query[0]][1]

    def value(self, query: Query) -> Any:
        """The value of one unknown, solved."""
        if query in self._stable and query not in self._called:
            return self._values.get(query, self._bottom(query))
        return self.run(_ask(query))

    def run(self, computation: Computation) -> Any:
        """Run a computation that is not an unknown (a rule's question about one expression):
        every query it yields is solved before its value is sent back."""
        stack: list[_Frame] = [_Frame(_ROOT, None, computation)]
        values, stable, called = self._values, self._stable, self._called
        send: Any = None
        while True:
            frame = stack[-1]
            if frame.kind == _WORK:
                assert frame.items is not None
                item = next(frame.items, None)
                if item is None:
                    stack.pop()
                    send = self._deliver(stack, frame.query)
                elif item not in stable and item not in called:
                    stack.append(self._start(item))
                    send = None
                continue
            assert frame.computation is not None
            try:
                request = frame.computation.send(send)
            except StopIteration as stop:
                stack.pop()
                if frame.kind == _ROOT:
                    return stop.value
                query = frame.query
                assert query is not None
                called.discard(query)
                work = self._finish(query, stop.value)
                if work:
                    stack.append(_Frame(_WORK, query, items=iter(work)))
                    send = None
                else:
                    send = self._deliver(stack, query)
                continue
            if request in stable or request in called:
                if frame.kind == _EVAL:
                    assert frame.query is not None
                    self._influence.setdefault(request, {})[frame.query] = None
                send = values.get(request, self._bottom(request))
                continue
            stack.append(self._start(request))
            send = None

    def _start(self, query: Query) -> _Frame:
        self._stable.add(query)
        self._called.add(query)
        self.evaluations += 1
        equation = self._equations[query[0]][0]
        return _Frame(_EVAL, query, equation(query))

    def _finish(self, query: Query, value: Any) -> list[Query]:
        """Store an unknown's new value; the unknowns to solve again (its readers, and itself
        when something it read changed while it was being evaluated)."""
        work: list[Query] = []
        if value != self._values.get(query, self._bottom(query)):
            changes = self._changes.get(query, 0) + 1
            self._changes[query] = changes
            if changes > MAX_CHANGES:
                self._stable.add(query)  # kept as it is: see MAX_CHANGES
                return work
            self._values[query] = value
            readers = self._influence.pop(query, None)
            if readers:
                work.extend(readers)
                self._stable.difference_update(readers)
        if query not in self._stable and query not in work:
            work.append(query)
        return work

    def _deliver(self, stack: list[_Frame], query: Query | None) -> Any:
        """``query`` is solved: what the frame that asked for it is sent."""
        assert query is not None
        parent = stack[-1]
        if parent.kind == _WORK:
            return None
        if parent.kind == _EVAL:
            assert parent.query is not None
            self._influence.setdefault(query, {})[parent.query] = None
        return self._values.get(query, self._bottom(query))


def _ask(query: Query) -> Computation:
    found = yield query
    return found
