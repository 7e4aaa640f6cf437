"""The one lattice of abstract values: what a Python expression may be, as a set of atoms.

A :class:`Value` is a set of :class:`Atom`\\ s, each one thing the expression may evaluate to: a
Keras model, a ``tf.function``, a gradient tape, a ``tf.data`` dataset, a tensor, a NumPy array
(with where it comes from and its shape), a Python number (with the integers it may be), a bool,
a string, ``None``, a container (with its length and what it holds), an instance of a project
class, a project function or class itself, a library callable, a scikit-learn splitter, a Python
iterator, or something unknown. Atoms of the same kind and the same class are merged (their
integers, lengths and elements joined), so a value holds few atoms.

Two ways to read a value:

* *must* questions (is this a Keras model?) look at every atom: ``None`` atoms aside, all of
  them must agree, and an ``UNKNOWN`` atom answers "unknown" (:attr:`Value.kind`). This is
  what keeps the rules precise: a parameter that is sometimes a model and sometimes not is not a
  model.
* *may* questions (can this hold a loaded NumPy array?) look for one atom
  (:meth:`Value.atoms_of`).

The order is set inclusion (atoms compared by their own parts); :func:`join` is the least upper
bound, written once. The lattice has finite height, so the solver's iteration always ends:
integers are sets of at most :data:`MAX_INTEGERS` values (more is "some integer"), a value of
more than :data:`MAX_ATOMS` atoms is :data:`TOP`, and values nested deeper than
:data:`MAX_NESTING` (a list of tuples of lists...) are :data:`TOP` inside. Each of these
closures is monotone, so the least fixpoint is unique: whatever order the solver meets the
equations in, the answers are the same.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple

from tflint_leaks.analysis.singletons import Singletons

#: Integers (and a string's texts) kept exactly; a set of more is "some integer" (``None``).
MAX_INTEGERS = 16
#: Atoms kept in one value; a value of more is :data:`TOP`.
MAX_ATOMS = 8
#: How deep values nest inside containers before the inner ones are :data:`TOP`.
MAX_NESTING = 3
#: Integers larger in magnitude are "some integer" (keeps ``2 ** n`` from growing without end).
MAX_MAGNITUDE = 10**12


class Kind(Singletons):
    """What an atom is."""

    NONE = "None"
    BOOL = "bool"
    NUMBER = "Python number"
    STR = "string"
    CONTAINER = "Python container"
    TENSOR = "tensor"
    ARRAY = "NumPy array"
    MODEL = "Keras model"
    TF_FUNCTION = "tf.function"
    TAPE = "gradient tape"
    DATASET = "tf.data dataset"
    SESSION = "tf.Session"
    INSTANCE = "instance"
    #: A project function itself (``build = make_model``), called later.
    FUNCTION = "function"
    #: A project class itself (``cls = Agent``).
    CLASS = "class"
    #: A library callable named by its canonical name (``tf.keras.Sequential`` uncalled).
    LIBRARY = "library callable"
    #: A scikit-learn cross-validator: ``length`` is how many splits it makes.
    SPLITTER = "cross-validator"
    #: An estimator of a machine-learning library that is not Keras (scikit-learn, XGBoost,
    #: LightGBM, CatBoost, PyTorch): it has ``fit`` and ``predict``, and is no Keras model.
    ESTIMATOR = "estimator of another library"
    #: A Python iterator or generator (``next()`` on it runs in Python).
    ITERATOR = "Python iterator"
    #: ``super()`` inside a method of ``ref``'s class.
    SUPER = "super()"
    #: A project module (``import models``): ``ref`` is its path.
    MODULE = "module"
    UNKNOWN = "unknown"


class ClassRef(NamedTuple):
    """A project class: the file that defines it and its name there."""

    path: str
    name: str


class FunctionRef(NamedTuple):
    """A project function or method: the file and its qualified name there."""

    path: str
    qualname: str


class ArrayOrigin(NamedTuple):
    """How a NumPy array is made."""

    #: The call that makes it, as written: ``np.load``, ``mnist.load_data``.
    call: str
    #: It comes from a dataset loader (Keras ``load_data``, scikit-learn ``load_*``).
    dataset: bool = False
    #: Its shape, when the call gives it literally.
    shape: tuple[int, ...] | None = None
    #: The project function that makes and returns it.
    via: str | None = None

    @property
    def order(self) -> tuple[str, bool, tuple[int, ...], str]:
        """A total order over origins (``shape`` and ``via`` may be None)."""
        return self.call, self.dataset, self.shape or (), self.via or ""

    def describe(self) -> str:
        """For messages: "`np.zeros` with shape (5000, 5000)", "a dataset loader
        (`mnist.load_data`)", "`np.empty` in `prepare`"."""
        text = f"a dataset loader (`{self.call}`)" if self.dataset else f"`{self.call}`"
        if self.shape is not None:
            text += f" with shape {self.shape}"
        return f"{text} in `{self.via}`" if self.via else text


Ints = frozenset[int] | None
Ref = ClassRef | FunctionRef | str | None


class Atom(NamedTuple):
    """One thing a value may be. Which fields mean something depends on ``kind``."""

    kind: Kind
    #: The class (INSTANCE, MODEL of a project class, CLASS, SUPER), the function (FUNCTION),
    #: or the canonical name (LIBRARY).
    ref: Ref = None
    #: NUMBER: the integers it may be (None: not known, or not an integer).
    ints: Ints = None
    #: CONTAINER: how many items it may have (exactly); SPLITTER: how many splits it makes;
    #: ARRAY: how many rows (the size of its first dimension), when its making says.
    length: Ints = None
    #: CONTAINER, ITERATOR: at most how many items it has, when ``length`` is not known
    #: exactly (``zip`` of a known and an unknown iterable, a filtered comprehension).
    bound: int | None = None
    #: CONTAINER displayed with known positions (a tuple or list display): one value each.
    items: tuple[Value, ...] | None = None
    #: CONTAINER, ITERATOR: what its items may be (for a dict: its keys).
    element: Value | None = None
    #: CONTAINER that is a dict: what its values may be.
    mapped: Value | None = None
    #: MODEL and INSTANCE: made by the expression itself (new every time the code runs); TAPE:
    #: ``persistent=True``; SPLITTER: iterated directly (the old ``cross_validation`` API);
    #: UNKNOWN: an object certainly not ``None`` (:data:`SOME_OBJECT`); DATASET: its elements'
    #: shapes change from one to the next (batches padded to their own longest element).
    flag: bool = False
    #: ARRAY: where it may come from (at most two, sorted).
    origins: tuple[ArrayOrigin, ...] = ()
    #: INSTANCE and MODEL of a project class: an instance of ``ref`` *or of a project
    #: subclass* (``self`` in a method of ``ref``).
    cone: bool = False
    #: CONTAINER that is a dict displayed with string literal keys (``{"modes": [...]}``): the
    #: value of each key, sorted by key (``mapped`` is their join).
    keyed: tuple[tuple[str, Value], ...] | None = None
    #: CONTAINER, ITERATOR: the variables, weights or layers of a model or a graph
    #: (``tf.trainable_variables()``, ``model.layers``), or the machine's devices
    #: (``tf.config.list_physical_devices()``): as many as it has, a number the model or the
    #: hardware fixes, not the data or the time a program runs; NUMBER: how many they are
    #: (``len(model.layers)``, whose ``range`` iterates them too).
    structural: bool = False
    #: STR: the strings it may be (None: not known, an f-string or a computed one).
    texts: frozenset[str] | None = None

    @property
    def most(self) -> int | None:
        """At most how many items a container or iterator has (None: not known)."""
        if self.length is not None:
            return max(self.length, default=0)
        return self.bound

    @property
    def key(self) -> tuple[Kind, Ref]:
        """Atoms with the same key merge into one."""
        return self.kind, self.ref


#: The kinds whose iteration :attr:`Value.bound` can count: a container's, an iterator's or an
#: array's items (an array's rows), a cross-validator's splits, a dataset's elements.
_ITERATED = frozenset({Kind.CONTAINER, Kind.ITERATOR, Kind.SPLITTER, Kind.DATASET, Kind.ARRAY})


class Value(NamedTuple):
    """What an expression may be: a set of atoms, sorted by key, or :data:`TOP`."""

    atoms: tuple[Atom, ...] = ()
    #: Anything at all (more atoms than :data:`MAX_ATOMS`, or nested too deep).
    top: bool = False

    # -- must questions ----------------------------------------------------------------------

    @property
    def informative(self) -> tuple[Atom, ...]:
        """The atoms that say something: ``None`` is neutral beside others
        (``self.model = None`` in ``__init__`` and a model later is a model)."""
        atoms = self.atoms
        if len(atoms) > 1 and any(a.kind is Kind.NONE for a in atoms):
            return tuple(a for a in atoms if a.kind is not Kind.NONE)
        return atoms

    @property
    def kind(self) -> Kind:
        """The kind every informative atom has; UNKNOWN when they differ, when one is unknown,
        or when nothing is known."""
        atoms = self.informative
        if self.top or not atoms:
            return Kind.UNKNOWN
        first = atoms[0].kind
        return first if all(a.kind is first for a in atoms) else Kind.UNKNOWN

    def where_known(self, kind: Kind) -> bool:
        """Of ``kind`` wherever the program shows where it comes from: every informative atom
        is of ``kind`` or unknown, and one is of ``kind`` (``model`` given a model by the
        project's call sites and something the project does not show by a library's user;
        ``model = load_model(...)`` in one branch and a third-party factory in the other;
        ``self.sess = init_sess()`` in ``__init__`` and a setter's parameter nothing passes)."""
        kinds = {a.kind for a in self.informative}
        return not self.top and kind in kinds and kinds <= {kind, Kind.UNKNOWN}

    @property
    def klass(self) -> ClassRef | None:
        """The one project class of an instance or model value."""
        refs = {a.ref for a in self.informative}
        if self.kind in {Kind.INSTANCE, Kind.MODEL} and len(refs) == 1:
            (ref,) = refs
            return ref if isinstance(ref, ClassRef) else None
        return None

    @property
    def classes(self) -> tuple[ClassRef, ...]:
        """Every project class an instance (or model) value may be of, sorted."""
        if self.kind not in {Kind.INSTANCE, Kind.MODEL}:
            return ()
        return tuple(sorted(a.ref for a in self.informative if isinstance(a.ref, ClassRef)))

    @property
    def fresh(self) -> bool:
        """A model or instance made anew by the expression itself, every time it runs."""
        atoms = self.informative
        return self.kind in {Kind.MODEL, Kind.INSTANCE} and all(a.flag for a in atoms)

    @property
    def structural(self) -> bool:
        """The variables, weights or layers of a model or graph, or the machine's devices, and
        only them (a loop over them runs once per variable or device: :attr:`Atom.structural`)."""
        atoms = self.informative
        return not self.top and bool(atoms) and all(a.structural for a in atoms)

    @property
    def persistent(self) -> bool:
        """A tape that may be ``persistent=True``."""
        return self.kind is Kind.TAPE and any(a.flag for a in self.atoms)

    @property
    def ints(self) -> frozenset[int] | None:
        """The integers a Python number may be, when all of them are known."""
        if self.kind is not Kind.NUMBER:
            return None
        found: set[int] = set()
        for atom in self.informative:
            if atom.ints is None:
                return None
            found |= atom.ints
        return frozenset(found)

    @property
    def lengths(self) -> frozenset[int] | None:
        """The lengths a container or an array (or the numbers of splits a cross-validator)
        may have, when all of them are known."""
        if self.kind not in {Kind.CONTAINER, Kind.ITERATOR, Kind.SPLITTER, Kind.ARRAY}:
            return None
        found: set[int] = set()
        for atom in self.informative:
            if atom.length is None:
                return None
            found |= atom.length
        return frozenset(found)

    @property
    def bound(self) -> int | None:
        """At most how many items iterating this value gives, when that is known: a
        container's, an iterator's, an array's whose making gives its first dimension (its
        rows: ``np.random.choice(100, size=5)``), an old-style cross-validator's (iterated
        directly), or a dataset's whose elements are counted (``ds.take(1)``)."""
        atoms = self.informative
        if self.top or not atoms:
            return None
        most = 0
        for atom in atoms:
            if atom.kind is Kind.SPLITTER and not atom.flag:
                return None
            if atom.kind not in _ITERATED:
                return None
            found = atom.most
            if found is None:
                return None
            most = max(most, found)
        return most

    # -- may questions -----------------------------------------------------------------------

    def atoms_of(self, kind: Kind) -> tuple[Atom, ...]:
        """The atoms of ``kind`` this value may be."""
        return () if self.top else tuple(a for a in self.atoms if a.kind is kind)

    def may_be(self, kind: Kind) -> bool:
        return any(a.kind is kind for a in self.atoms)

    def without(self, kind: Kind) -> Value:
        """This value but what it may be of ``kind`` (what a test has ruled out)."""
        if self.top or not any(a.kind is kind for a in self.atoms):
            return self
        return Value(tuple(a for a in self.atoms if a.kind is not kind))

    # -- maps ----------------------------------------------------------------------------------

    def stale(self) -> Value:
        """The same value seen through a name that outlives the code (a global, an attribute,
        a parameter): not new each time, nor is anything it holds (a cache's models,
        ``self.models[res]``, were made when they were stored)."""
        if not self.fresh_inside:
            return self
        return Value(tuple(_stale(a) for a in self.atoms), self.top)

    @property
    def fresh_inside(self) -> bool:
        """Something the value is or holds is new each time the code runs."""
        return any(_fresh_inside(a) for a in self.atoms)


_FRESH_KINDS = frozenset({Kind.MODEL, Kind.INSTANCE})


def _fresh_inside(found: Atom) -> bool:
    if found.kind in _FRESH_KINDS:
        return found.flag
    if found.element is None and found.mapped is None and not found.items and not found.keyed:
        return False  # holds nothing (most atoms): no walk
    return any(value.fresh_inside for value in _held(found))


def _held(found: Atom) -> Iterator[Value]:
    """The values a container or an iterator holds."""
    if found.element is not None:
        yield found.element
    if found.mapped is not None:
        yield found.mapped
    yield from found.items or ()
    yield from (value for _, value in found.keyed or ())


def _stale(found: Atom) -> Atom:
    if found.kind in _FRESH_KINDS:
        return found._replace(flag=False)
    if not _fresh_inside(found):
        return found
    return found._replace(
        element=found.element.stale() if found.element is not None else None,
        mapped=found.mapped.stale() if found.mapped is not None else None,
        items=tuple(v.stale() for v in found.items) if found.items is not None else None,
        keyed=tuple((k, v.stale()) for k, v in found.keyed) if found.keyed is not None else None,
    )


BOTTOM = Value()
TOP = Value((), top=True)


def atom(kind: Kind, **parts: object) -> Value:
    """A value of one atom."""
    return Value((Atom(kind, **parts),))  # type: ignore[arg-type]


UNKNOWN = atom(Kind.UNKNOWN)
#: An object of no kind the lattice knows, but certainly not ``None``: one a library class
#: made (``tf.train.Saver()``), a function a ``lambda`` the index does not name makes.
SOME_OBJECT = atom(Kind.UNKNOWN, flag=True)
NUMBER = atom(Kind.NUMBER)
BOOL = atom(Kind.BOOL)
#: The literals ``True`` and ``False``: a bool whose truth is known (as the integer it equals).
TRUE = atom(Kind.BOOL, ints=frozenset({1}))
FALSE = atom(Kind.BOOL, ints=frozenset({0}))
STR = atom(Kind.STR)
NONE = atom(Kind.NONE)
TENSOR = atom(Kind.TENSOR)


def integers(values: Iterable[int]) -> Ints:
    """A set of integers as an atom keeps it: None when there are too many or too large."""
    found = frozenset(values)
    if len(found) > MAX_INTEGERS or any(abs(v) > MAX_MAGNITUDE for v in found):
        return None
    return found


def number(values: Iterable[int] | None = None) -> Value:
    """A Python number; with ``values``, an integer that is one of them."""
    return NUMBER if values is None else atom(Kind.NUMBER, ints=integers(values))


def container(
    length: Ints = None,
    element: Value | None = None,
    items: tuple[Value, ...] | None = None,
    mapped: Value | None = None,
    bound: int | None = None,
    keyed: tuple[tuple[str, Value], ...] | None = None,
    *,
    structural: bool = False,
) -> Value:
    """A Python container of ``length`` items (or at most ``bound``); a dict's values by its
    string keys, ``keyed``; a model's or graph's variables, weights or layers, ``structural``."""
    if items is not None and element is None:
        element = join(items)
    if length is not None:
        bound = None
    return Value(
        (
            Atom(
                Kind.CONTAINER,
                None,
                None,
                length,
                bound,
                items,
                element,
                mapped,
                keyed=keyed,
                structural=structural,
            ),
        )
    )


def _join_ints(a: Ints, b: Ints) -> Ints:
    if a is None or b is None:
        return None
    return integers(a | b)


def _texts(found: frozenset[str]) -> frozenset[str] | None:
    """A string's texts as an atom keeps them: None when there are too many."""
    return found if len(found) <= MAX_INTEGERS else None


def _join_texts(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    return None if a is None or b is None else _texts(a | b)


def strings(texts: Iterable[str]) -> Value:
    """A string that is one of ``texts``."""
    return atom(Kind.STR, texts=_texts(frozenset(texts)))


def text_of(value: Value) -> frozenset[str] | None:
    """The texts ``str(value)`` may be: of a string or an integer known exactly (None: not
    known)."""
    if value.top or not value.atoms:
        return None
    found: set[str] = set()
    for each in value.atoms:
        if each.kind is Kind.STR and each.texts is not None:
            found |= each.texts
        elif each.kind is Kind.NUMBER and each.ints is not None:
            found |= {str(i) for i in each.ints}
        else:
            return None
    return frozenset(found)


def concatenated(values: Iterable[Value]) -> Value:
    """The string made of ``str()`` of each of ``values`` in order (an f-string, ``a + b``):
    its texts when every piece's are known and there are not too many."""
    found: frozenset[str] | None = frozenset({""})
    for value in values:
        texts = text_of(value)
        if found is None or texts is None:
            return STR
        found = _texts(frozenset(a + b for a in found for b in texts))
    return STR if found is None else strings(found)


def _join_optional(a: Value | None, b: Value | None) -> Value | None:
    if a is None:
        return b
    if b is None:
        return a
    return join((a, b))


def _join_keyed(
    a: tuple[tuple[str, Value], ...] | None, b: tuple[tuple[str, Value], ...] | None
) -> tuple[tuple[str, Value], ...] | None:
    """Two dicts' values by key, joined key by key when they have the same keys."""
    if a is None or b is None or [key for key, _ in a] != [key for key, _ in b]:
        return None
    return tuple((key, join((x, y))) for (key, x), (_, y) in zip(a, b, strict=True))


def _merge(a: Atom, b: Atom) -> Atom:
    """Two atoms of one key as one: the least atom above both."""
    if a == b:
        return a
    items: tuple[Value, ...] | None = None
    if a.items is not None and b.items is not None and len(a.items) == len(b.items):
        items = tuple(join(pair) for pair in zip(a.items, b.items, strict=True))
    kind = a.kind
    # Freshness is kept only when both are fresh; persistence when either may be.
    flag = (a.flag and b.flag) if kind in _FRESH_KINDS else (a.flag or b.flag)
    length = _join_ints(a.length, b.length)
    most_a, most_b = a.most, b.most
    bound = None if length is not None or most_a is None or most_b is None else max(most_a, most_b)
    return Atom(
        kind,
        a.ref,
        _join_ints(a.ints, b.ints),
        length,
        bound,
        items,
        _join_optional(a.element, b.element),
        _join_optional(a.mapped, b.mapped),
        flag,
        tuple(sorted(set(a.origins) | set(b.origins), key=_origin_order))[:2],
        a.cone or b.cone,
        _join_keyed(a.keyed, b.keyed),
        a.structural and b.structural,
        _join_texts(a.texts, b.texts),
    )


def _origin_order(origin: ArrayOrigin) -> tuple[str, bool, tuple[int, ...], str]:
    return origin.order


def _depth(value: Value) -> int:
    most = 0
    for found in value.atoms:
        inner = [v for v in (found.element, found.mapped, *(found.items or ())) if v is not None]
        inner.extend(value for _, value in found.keyed or ())
        if inner:
            most = max(most, 1 + max(_depth(v) for v in inner))
    return most


def _truncated(found: Atom, depth: int) -> Atom:
    """An atom whose nested values below ``depth`` levels are :data:`TOP`."""
    if depth <= 0:
        return found._replace(
            items=None if found.items is None else tuple(TOP for _ in found.items),
            element=None if found.element is None else TOP,
            mapped=None if found.mapped is None else TOP,
            keyed=None,
        )

    def inner(value: Value | None) -> Value | None:
        if value is None or value.top:
            return value
        return Value(tuple(_truncated(a, depth - 1) for a in value.atoms))

    return found._replace(
        items=None if found.items is None else tuple(inner(v) or TOP for v in found.items),
        element=inner(found.element),
        mapped=inner(found.mapped),
        keyed=None
        if found.keyed is None
        else tuple((key, inner(value) or TOP) for key, value in found.keyed),
    )


def join(values: Iterable[Value]) -> Value:
    """The least value above every one of ``values`` (:data:`BOTTOM` for none)."""
    if isinstance(values, list | tuple) and len(values) == 1:
        only: Value = values[0]
        if only.top or all(
            a.element is None and a.items is None and a.mapped is None for a in only.atoms
        ):
            return only  # one flat value: already sorted and merged
    merged: dict[tuple[Kind, Ref], Atom] = {}
    for value in values:
        if value.top:
            return TOP
        for found in value.atoms:
            key = found.key
            previous = merged.get(key)
            merged[key] = found if previous is None else _merge(previous, found)
    if len(merged) > MAX_ATOMS:
        return TOP
    atoms = tuple(merged[key] for key in sorted(merged, key=_sort_key))
    result = Value(atoms)
    if any(a.element is not None or a.items or a.mapped is not None for a in atoms) and (
        _depth(result) > MAX_NESTING
    ):
        result = Value(tuple(_truncated(a, MAX_NESTING) for a in atoms))
    return result


def _sort_key(key: tuple[Kind, Ref]) -> tuple[str, tuple[str, ...]]:
    kind, ref = key
    if ref is None:
        return kind.value, ()
    return kind.value, (ref,) if isinstance(ref, str) else tuple(ref)


def map_atoms(value: Value, each: Callable[[Atom], Value]) -> Value:
    """The join of ``each(atom)`` over the atoms of ``value`` (a distributive, hence monotone,
    transfer)."""
    if value.top:
        return TOP
    return join(each(a) for a in value.atoms)


def arithmetic(operator: str, left: Ints, right: Ints) -> Ints:
    """The integers ``left <operator> right`` may be (None when not known)."""
    if left is None or right is None:
        return None
    results: set[int] = set()
    for a in left:
        for b in right:
            found = _apply(operator, a, b)
            if found is None:
                return None
            results.add(found)
            if len(results) > MAX_INTEGERS:
                return None
    return integers(results)


def _apply(operator: str, a: int, b: int) -> int | None:
    if operator == "+":
        return a + b
    if operator == "-":
        return a - b
    if operator == "*":
        return a * b
    if operator in {"//", "%"}:
        if b == 0:
            return None
        return a // b if operator == "//" else a % b
    if operator == "**":
        if b < 0 or (abs(a) > 1 and b * math.log2(abs(a)) > 40):
            return None
        return int(a**b)
    return None
