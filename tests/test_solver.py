"""The solver: cycles iterated to their least fixpoint, answers independent of the order of the
questions, chains of any length without Python recursion."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator

import pytest

from tflint_leaks.analysis.solver import MAX_CHANGES, Computation, Query, Solver

# A small equation system over sets of integers: x_i = {i % 3} | x_(next(i)) for a ring, plus
# a tail that reads the ring.


def _ring(size: int) -> Solver:
    def equation(query: Query) -> Computation:
        index = query[1]
        following = yield ("x", (index + 1) % size)
        return frozenset(following | {index % 3})

    def tail(query: Query) -> Computation:
        found = yield ("x", query[1])
        return len(found)

    return Solver({"x": (equation, frozenset()), "tail": (tail, 0)})


def test_a_cycle_is_iterated_to_its_least_fixpoint() -> None:
    solver = _ring(7)
    assert solver.value(("x", 0)) == frozenset({0, 1, 2})
    # Every member of the cycle is stable and final, asked later or not.
    assert all(solver.value(("x", i)) == frozenset({0, 1, 2}) for i in range(7))
    assert solver.value(("tail", 3)) == 3


@pytest.mark.parametrize("order", list(itertools.permutations(range(4))))
def test_answers_do_not_depend_on_the_order_of_the_questions(order: tuple[int, ...]) -> None:
    solver = _ring(4)
    answers = {i: solver.value(("x", i)) for i in order}
    assert answers == {i: frozenset({0, 1, 2}) for i in range(4)}


def test_a_chain_of_thousands_of_unknowns_uses_no_recursion() -> None:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)
    try:
        solver = _ring(5_000)
        assert solver.value(("x", 2_500)) == frozenset({0, 1, 2})
    finally:
        sys.setrecursionlimit(limit)


def test_an_unknown_that_reads_itself_converges() -> None:
    def count(query: Query) -> Computation:
        previous = yield query
        return min(previous + 1, 10)

    solver = Solver({"n": (count, 0)})
    assert solver.value(("n",)) == 10


def test_a_value_that_never_settles_is_kept_after_max_changes() -> None:
    """A buggy (non-monotone) equation: the solver still ends."""

    def flip(query: Query) -> Computation:
        other = yield ("b",)
        return not other

    def same(query: Query) -> Computation:
        found = yield ("a",)
        return found

    solver = Solver({"a": (flip, False), "b": (same, False)})
    assert solver.value(("a",)) in {True, False}
    assert solver.evaluations <= 4 * (MAX_CHANGES + 2)


def test_run_solves_what_an_ad_hoc_computation_asks() -> None:
    solver = _ring(3)

    def question() -> Iterator[Query]:
        first = yield ("x", 0)
        second = yield ("tail", 1)
        return (sorted(first), second)

    assert solver.run(question()) == ([0, 1, 2], 3)  # type: ignore[arg-type]
