"""The lattice of values: one join, its must and may readings, and the closures that keep its
height finite."""

from __future__ import annotations

import pytest

from tflint_leaks.analysis.lattice import (
    BOTTOM,
    MAX_ATOMS,
    MAX_INTEGERS,
    NONE,
    NUMBER,
    TOP,
    UNKNOWN,
    ArrayOrigin,
    ClassRef,
    Kind,
    Value,
    arithmetic,
    atom,
    container,
    join,
    number,
)

MODEL = atom(Kind.MODEL)
FRESH = atom(Kind.MODEL, flag=True)
AGENT, SCRIPTED = ClassRef("a.py", "Agent"), ClassRef("b.py", "Scripted")


def test_none_is_neutral_and_bottom_is_the_identity() -> None:
    assert join([NONE, MODEL]).kind is Kind.MODEL
    assert join([BOTTOM, FRESH]) == FRESH
    assert join([]) == BOTTOM
    assert BOTTOM.kind is Kind.UNKNOWN  # nothing known


def test_freshness_is_kept_only_when_every_side_is_fresh() -> None:
    assert join([MODEL, FRESH]).fresh is False
    assert join([FRESH, FRESH]).fresh is True
    assert join([FRESH, atom(Kind.MODEL, flag=True)]) == FRESH
    assert FRESH.stale() == MODEL


def test_must_questions_need_every_atom_to_agree_may_questions_need_one() -> None:
    both = join([MODEL, atom(Kind.TENSOR)])
    assert both.kind is Kind.UNKNOWN
    assert both.may_be(Kind.MODEL) and both.may_be(Kind.TENSOR)
    loaded = atom(Kind.ARRAY, origins=(ArrayOrigin("np.load"),))
    assert join([loaded, UNKNOWN]).atoms_of(Kind.ARRAY) == loaded.atoms


def test_a_model_where_known_leaves_unknowns_aside_but_not_other_estimators() -> None:
    assert join([MODEL, UNKNOWN]).where_known(Kind.MODEL)
    assert join([NONE, FRESH, UNKNOWN]).where_known(Kind.MODEL)
    assert not join([MODEL, atom(Kind.ESTIMATOR)]).where_known(Kind.MODEL)
    assert not join([MODEL, atom(Kind.TENSOR)]).where_known(Kind.MODEL)
    assert not UNKNOWN.where_known(Kind.MODEL)
    assert not TOP.where_known(Kind.MODEL)


def test_a_session_where_known_leaves_a_setters_unknown_aside() -> None:
    """``self.sess = tf.compat.v1.Session()`` and, in a setter nothing calls, ``self.sess =
    sess``: a session wherever the program shows one; beside a model it is neither."""
    session = atom(Kind.SESSION)
    assert join([session, UNKNOWN]).where_known(Kind.SESSION)
    assert not join([session, UNKNOWN]).where_known(Kind.MODEL)
    assert not join([session, MODEL]).where_known(Kind.SESSION)


def test_instances_of_different_classes_are_the_choice_of_both() -> None:
    one, other = atom(Kind.INSTANCE, ref=AGENT), atom(Kind.INSTANCE, ref=SCRIPTED)
    both = join([one, other])
    assert both.kind is Kind.INSTANCE and both.klass is None
    assert both.classes == (AGENT, SCRIPTED)
    assert join([other, one, one]) == both
    assert join([one, atom(Kind.MODEL)]).kind is Kind.UNKNOWN


def test_integers_join_as_sets_until_too_many() -> None:
    assert join([number({1}), number({3})]).ints == frozenset({1, 3})
    many = join(number({i}) for i in range(MAX_INTEGERS + 1))
    assert many.kind is Kind.NUMBER and many.ints is None
    assert join([number({2}), NUMBER]).ints is None


@pytest.mark.parametrize(
    ("operator", "left", "right", "expected"),
    [
        ("+", {1}, {5}, {6}),
        ("-", {10}, {3, 4}, {7, 6}),
        ("*", {5}, {3}, {15}),
        ("//", {7}, {2}, {3}),
        ("%", {7}, {2}, {1}),
        ("**", {2}, {10}, {1024}),
        ("//", {1}, {0}, None),
        ("**", {10}, {100}, None),
    ],
)
def test_arithmetic_on_integer_sets(
    operator: str, left: set[int], right: set[int], expected: set[int] | None
) -> None:
    found = arithmetic(operator, frozenset(left), frozenset(right))
    assert found == (frozenset(expected) if expected is not None else None)


def test_containers_keep_their_lengths_and_elements() -> None:
    pair = container(length=frozenset({2}), items=(MODEL, NUMBER))
    three = container(length=frozenset({3}), element=NUMBER)
    joined = join([pair, three])
    assert joined.lengths == frozenset({2, 3})
    assert joined.bound == 3
    (merged,) = joined.atoms
    assert merged.element is not None and merged.element.kind is Kind.UNKNOWN  # model or number
    assert container(bound=15).bound == 15 and container(bound=15).lengths is None


def test_too_many_atoms_is_top_and_top_absorbs() -> None:
    kinds = [k for k in Kind if k is not Kind.UNKNOWN][: MAX_ATOMS + 1]
    assert join(atom(k) for k in kinds) == TOP
    assert join([TOP, MODEL]) == TOP
    assert TOP.kind is Kind.UNKNOWN and TOP.bound is None


def test_nesting_deeper_than_the_limit_is_top_inside() -> None:
    value: Value = NUMBER
    for _ in range(6):
        value = container(length=frozenset({1}), element=value)
    deep = join([value])
    depth = 0
    current: Value | None = deep
    while current is not None and not current.top and current.atoms:
        current = current.atoms[0].element
        depth += 1
    assert current is not None and current.top
    assert depth <= 4
