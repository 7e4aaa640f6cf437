"""What calls into Python, TensorFlow, Keras, NumPy and scikit-learn return, as lattice values.

The meaning of library code, by canonical name (:mod:`.names`), read from each API's
reference: builtins over containers and integers (``range(a, b, step)``, ``len``, ``zip``,
``enumerate``, ``min``...), ``itertools``, the Keras constructors and loaders of every
namespace (:mod:`.keras`), gradient tapes, ``tf.function``, sessions, ``tf.data`` sources,
TensorFlow ops, NumPy's constructors (with their shape) and loaders, dataset loaders, and
scikit-learn's cross-validators (with how many splits they make). Methods of such values are
here too: a model's ``predict``, a dataset's ``batch``, a splitter's ``split``, a dict's
``items``, an array's ``astype``.

Each function is a generator (see :mod:`.solver`): it evaluates the call's arguments it needs
with the ``evaluate`` it is given, which yields the solver's queries.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Iterable
from typing import Any

from tflint_leaks.analysis import keras
from tflint_leaks.analysis.graph import DEVICE_LISTS, VARIABLE_COLLECTIONS, is_session_source
from tflint_leaks.analysis.lattice import (
    BOOL,
    NONE,
    NUMBER,
    SOME_OBJECT,
    STR,
    TENSOR,
    UNKNOWN,
    ArrayOrigin,
    Atom,
    Ints,
    Kind,
    Value,
    arithmetic,
    atom,
    container,
    integers,
    join,
    map_atoms,
    number,
    strings,
)
from tflint_leaks.analysis.names import (
    CALLABLE_WRAPPERS,
    CONTAINER_TYPES,
    GRADIENT_TAPE,
    PROGRESS_BARS,
    PROGRESS_RANGES,
    TF_FUNCTION,
    is_keras,
    is_numpy,
    is_tensorflow,
)
from tflint_leaks.analysis.symbolic import Expr, Op, string_text

Computation = Generator[Any, Any, Value]
Evaluate = Callable[[Expr], Computation]

#: Arrays with a literal shape of fewer elements are small (256 KiB of float32).
SMALL_ARRAY_ELEMENTS = 65_536

ARGUMENT_PARSER = "argparse.ArgumentParser"
#: absl's flag values, also under TensorFlow 1's names: ``FLAGS.num_classes`` is the default of
#: ``flags.DEFINE_integer("num_classes", 10, ...)``.
FLAG_VALUES = frozenset(
    {
        "absl.flags.FLAGS",
        "tensorflow.app.flags.FLAGS",
        "tensorflow.flags.FLAGS",
        "tensorflow.compat.v1.app.flags.FLAGS",
        "tensorflow.compat.v1.flags.FLAGS",
        "tensorflow.python.platform.flags.FLAGS",  # what ``tf.app.flags`` is
    }
)
#: What ``ArgumentParser.parse_args()`` returns: a CONTAINER atom with this ``ref`` and one
#: ``keyed`` value per destination (:func:`command_line`).
NAMESPACE = "argparse.Namespace"
#: An instance of a namedtuple class: a CONTAINER atom with this ``ref`` and one ``keyed``
#: value per field (:func:`_made_record`).
RECORD = "collections.namedtuple"

# -- NumPy ---------------------------------------------------------------------------------------

_NUMPY_LOADERS = frozenset(
    {"load", "loadtxt", "genfromtxt", "fromfile", "fromregex", "frombuffer", "memmap"}
)
#: NumPy calls whose result is a scalar: scalar types and reductions.
_NUMPY_SCALARS = frozenset(
    {
        "float16", "float32", "float64", "float_", "double", "single", "half", "longdouble",
        "int8", "int16", "int32", "int64", "int_", "intc", "intp", "uint", "uint8", "uint16",
        "uint32", "uint64", "bool_", "complex64", "complex128", "str_", "bytes_",
        "sum", "mean", "std", "var", "max", "min", "amax", "amin", "argmax", "argmin",
        "median", "percentile", "quantile", "prod", "average", "nanmean", "nansum", "nanmax",
        "nanmin", "nanstd", "nanvar", "count_nonzero", "any", "all", "ptp", "norm", "det",
        "trace", "isscalar", "ndim", "size", "shape", "iinfo", "finfo", "seed", "shuffle",
    }
)  # fmt: skip
#: Constructors whose first argument (or ``shape``) is the shape.
_SHAPED = frozenset({"zeros", "ones", "empty", "full"})
#: ``numpy.random`` functions whose positional arguments are the dimensions.
_DIMENSIONS = frozenset({"rand", "randn"})
#: ``numpy.random`` functions: the position of their ``size`` argument (no size: a scalar).
_SIZE_POSITION = {
    "random": 0, "random_sample": 0, "ranf": 0, "sample": 0, "standard_normal": 0,
    "uniform": 2, "normal": 2, "randint": 2, "choice": 1, "binomial": 2, "poisson": 1,
    "exponential": 1, "beta": 2, "gamma": 2, "laplace": 2, "logistic": 2, "lognormal": 2,
    "multinomial": 2,
}  # fmt: skip
#: Constructors of an array from a sequence's items (one row per item).
_FROM_ITEMS = frozenset({"array", "asarray"})
#: ``*_like`` constructors: the shape of their first argument.
_LIKE = frozenset({"zeros_like", "ones_like", "empty_like", "full_like"})
#: NumPy sequences of numbers that loops iterate (``for lr in np.linspace(...)``): how many.
_NUMPY_SEQUENCES = frozenset({"arange", "linspace", "logspace", "geomspace"})
#: Array methods (and attributes) whose result has the data of the array.
SAME_DATA = frozenset(
    {"astype", "reshape", "copy", "transpose", "flatten", "ravel", "squeeze", "clip", "T",
     "swapaxes", "view", "real", "imag"}
)  # fmt: skip
#: Attributes of what a dataset loader returns (scikit-learn's ``Bunch``) that are its data.
DATASET_FIELDS = frozenset({"data", "target", "images"})

# -- builtins ------------------------------------------------------------------------------------

#: Builtins that make a container of the items of their first argument.
_SEQUENCES = frozenset({"list", "tuple", "sorted", "set", "frozenset"})
_BOOLS = frozenset({"isinstance", "issubclass", "hasattr", "callable", "bool", "all", "any"})
_STRINGS = frozenset({"str", "repr", "format", "ascii", "chr", "input"})
_NUMBERS = frozenset({"float", "complex", "ord", "hash", "id", "divmod", "pow", "sum"})
_NONE = frozenset({"print", "setattr", "delattr", "exec"})
#: TensorFlow namespaces whose lower-case functions do not make tensors.
_TF_NOT_TENSORS = ("tensorflow.data.", "tensorflow.io.", "tensorflow.summary.")


def evaluate_all(evaluate: Evaluate, exprs: Iterable[Expr]) -> Generator[Any, Any, list[Value]]:
    """The values of several expressions."""
    found: list[Value] = []
    for expr in exprs:
        found.append((yield from evaluate(expr)))
    return found


def array(
    call: str,
    *,
    dataset: bool = False,
    shape: tuple[int, ...] | None = None,
    rows: Ints = None,
) -> Value:
    """An array made by ``call``; ``rows``: the sizes its first dimension may have."""
    return atom(Kind.ARRAY, origins=(ArrayOrigin(call, dataset, shape),), length=rows)


def _sized_array(call: str, shape: tuple[int | None, ...] | None) -> Value:
    """A constructed array: a plain value (no origin worth a finding) when its literal shape
    is small (a scalar has shape ``()``); its rows counted when the first dimension is known
    (``np.random.choice(n, size=5)`` gives five, whatever ``n``)."""
    rows = frozenset({shape[0]}) if shape and shape[0] is not None else None
    if shape is None or any(n is None for n in shape):
        return array(call, rows=rows)
    known = tuple(n for n in shape if n is not None)
    if math.prod(known) < SMALL_ARRAY_ELEMENTS:
        return atom(Kind.ARRAY, length=rows)
    return array(call, shape=known, rows=rows)


def dataset_loader(qualified: str) -> bool:
    """Keras' ``load_data`` and scikit-learn's ``load_*``/``fetch_*``/``make_*``: arrays the
    size of a dataset."""
    if qualified.startswith("keras.datasets.") and qualified.endswith(".load_data"):
        return True
    module, _, name = qualified.rpartition(".")
    return module == "sklearn.datasets" and name.startswith(("load_", "fetch_", "make_"))


def _one_int(value: Value) -> int | None:
    found = value.ints
    return max(found) if found else None


def elements(value: Value) -> Value:
    """What iterating ``value`` gives, item by item."""
    return map_atoms(value, _element)


def _element(found: Atom) -> Value:
    kind = found.kind
    if kind in {Kind.CONTAINER, Kind.ITERATOR}:
        return found.element if found.element is not None else UNKNOWN
    if kind is Kind.DATASET or kind is Kind.TENSOR:
        return TENSOR
    if kind is Kind.ARRAY:
        return atom(Kind.ARRAY)
    if kind is Kind.STR:
        return STR
    return UNKNOWN


def _structural(found: Atom) -> Value:
    """``found`` counting, or iterating, a model's or a graph's variables or layers."""
    return Value((found._replace(structural=True),))


def _sequence(value: Value, *, exact: bool = True) -> Value:
    """A container of the items of ``value``: as many (at most as many when not ``exact``)."""
    lengths = value.lengths if exact else None
    return container(
        length=lengths, bound=value.bound, element=elements(value), structural=value.structural
    )


#: ``range``, and Python 2's ``xrange`` (also what ``six.moves`` names so), which counts alike.
RANGES = frozenset({"range", "xrange"})


def builtin(name: str, call: Expr, evaluate: Evaluate, klass: Any) -> Computation:
    """A call of the builtin ``name``."""
    positional = call.positional
    if name in RANGES:
        values = yield from evaluate_all(evaluate, positional[:3])
        if call.open or not values:
            return container(element=NUMBER)
        made = _range([v.ints for v in values])
        # ``range(len(model.layers))``: once per layer, as many as the model has.
        stop = values[0] if len(values) == 1 else values[1]
        return map_atoms(made, _structural) if stop.structural else made
    if name == "len":
        if not positional:
            return NUMBER
        sized = yield from evaluate(positional[0])
        lengths = sized.lengths
        most = sized.bound if lengths is None else None
        if most is not None and sized.kind in {Kind.CONTAINER, Kind.ITERATOR}:
            lengths = integers(range(most + 1))  # ``len(augs[:n + 1])``: at most ten
        found = number(lengths)
        return map_atoms(found, _structural) if sized.structural else found
    if name in _ITERATING:
        return (yield from _iterating(name, call, evaluate))
    if name in _SEQUENCES:
        if not positional:
            return container(length=frozenset({0}))
        inner = yield from evaluate(positional[0])
        return _sequence(inner, exact=name not in {"set", "frozenset"})
    if name == "iter":
        if not positional:
            return UNKNOWN
        inner = yield from evaluate(positional[0])
        return map_atoms(inner, _iterator)
    if name == "next":
        if not positional:
            return UNKNOWN
        return elements((yield from evaluate(positional[0])))
    if name == "dict":
        names = call.keywords
        if positional or call.open or not names:
            return container(mapped=UNKNOWN)
        # ``dict(p_val=0.05, backend=backend)``: a dict with those string keys.
        values = yield from evaluate_all(evaluate, call.keyword_values)
        keyed = tuple(sorted(zip(names, values, strict=True)))
        return container(
            length=frozenset({len(names)}),
            element=strings(names),
            mapped=join(values),
            keyed=keyed,
        )
    if name in {"min", "max"}:
        values = yield from evaluate_all(evaluate, positional)
        if len(values) == 1:
            values = [elements(values[0])]
        if any(v.may_be(Kind.TENSOR) for v in values):
            return TENSOR
        extremes = _pairwise(min if name == "min" else max, [v.ints for v in values])
        return number(extremes) if values and extremes is not None else NUMBER
    if name in {"abs", "int", "round"}:
        if not positional:
            return number({0}) if name == "int" else NUMBER
        inner = yield from evaluate(positional[0])
        if inner.may_be(Kind.TENSOR):
            return TENSOR
        known = inner.ints
        if known is None or (name == "round" and len(positional) > 1):
            return NUMBER
        return number({abs(i) for i in known} if name == "abs" else known)
    if name == "super":
        return atom(Kind.SUPER, ref=klass) if klass is not None else UNKNOWN
    if name in _BOOLS:
        return BOOL
    if name in _STRINGS:
        return STR
    if name in _NUMBERS:
        return NUMBER
    if name in _NONE:
        return NONE
    return UNKNOWN


def iterator(
    element: Value | None = None,
    length: Ints = None,
    bound: int | None = None,
    *,
    generator: bool = False,
    structural: bool = False,
) -> Value:
    """A Python iterator (a generator with ``generator``) of ``length`` items (or at most
    ``bound``); over a model's variables or layers, ``structural``."""
    return atom(
        Kind.ITERATOR,
        element=element if element is not None else UNKNOWN,
        length=length,
        bound=None if length is not None else bound,
        flag=generator,
        structural=structural,
    )


#: Builtins that make an iterator over their arguments' items.
_ITERATING = frozenset({"enumerate", "zip", "map", "filter", "reversed"})


def _iterating(name: str, call: Expr, evaluate: Evaluate) -> Computation:
    """``enumerate``, ``zip``, ``map``, ``filter`` and ``reversed``: iterators with as many
    items as their arguments (``zip``: the shortest's)."""
    positional = call.positional
    if name == "enumerate":
        if not positional:
            return iterator()
        inner = yield from evaluate(positional[0])
        pair = container(length=frozenset({2}), items=(NUMBER, elements(inner)))
        return iterator(pair, inner.lengths, inner.bound, structural=inner.structural)
    if name == "zip":
        if call.open or not positional:
            return iterator()
        inners = yield from evaluate_all(evaluate, positional)
        lengths: list[Ints] = [v.lengths for v in inners]
        exact = None if any(n is None for n in lengths) else _pairwise(min, lengths)
        most = [b for v in inners if (b := v.bound) is not None]
        items = tuple(elements(v) for v in inners)
        row = container(length=frozenset({len(items)}), items=items)
        shortest = min(most) if most else None
        # As many rows as the shortest: no more than a model has variables, if one is its.
        return iterator(row, exact, shortest, structural=any(v.structural for v in inners))
    if name in {"map", "filter"}:
        if call.open or len(positional) < 2:
            return iterator()
        inner = yield from evaluate(positional[1])
        kept = inner.lengths if name == "map" else None
        element = UNKNOWN if name == "map" else elements(inner)
        return iterator(element, kept, inner.bound, structural=inner.structural)
    if name == "reversed":
        if not positional:
            return iterator()
        return _items_of((yield from evaluate(positional[0])))
    return iterator()


def _items_of(value: Value) -> Value:
    """An iterator over ``value``'s items, as many as it has (``reversed(x)``, a progress bar
    over ``x``)."""
    return iterator(elements(value), value.lengths, value.bound, structural=value.structural)


def _iterator(found: Atom) -> Value:
    """``iter(x)`` of one thing ``x`` may be."""
    if found.kind is Kind.ITERATOR:
        return Value((found,))
    if found.kind in {Kind.CONTAINER, Kind.STR, Kind.ARRAY}:
        return iterator(_element(found), found.length, found.most)
    return UNKNOWN  # a tf.data iterator (next() on it is a graph op), or not known


def _pairwise(pick: Callable[[int, int], int], sets: list[Ints]) -> Ints:
    """``pick`` (min or max) over one integer of each set, every combination; None when a
    set is not known (or there are none)."""
    if not sets or sets[0] is None:
        return None
    results: Ints = sets[0]
    for other in sets[1:]:
        if other is None or results is None:
            return None
        results = integers(pick(a, b) for a in results for b in other)
    return results


def _range(bounds: list[Ints]) -> Value:
    """``range(stop)``, ``range(start, stop)``, ``range(start, stop, step)``."""
    starts: Ints = frozenset({0})
    steps: Ints = frozenset({1})
    if len(bounds) == 1:
        stops = bounds[0]
    else:
        starts, stops = bounds[0], bounds[1]
        if len(bounds) > 2:
            steps = bounds[2]
    if starts is None or stops is None or steps is None:
        return container(element=NUMBER)
    lengths: set[int] = set()
    values: set[int] = set()
    for start in starts:
        for stop in stops:
            for step in steps:
                if step == 0:
                    continue
                count = max(0, math.ceil((stop - start) / step))
                lengths.add(count)
                if len(values) <= 16 and count <= 16:
                    values.update(range(start, stop, step))
                else:
                    values.add(-(1 << 62))  # too many to keep
    element = number(values) if all(abs(v) < 1 << 61 for v in values) else NUMBER
    return container(length=integers(lengths), element=element)


#: ``random`` functions that pick ``k`` items of a population: the position of ``k`` (-1:
#: keyword only) and its default (None: it has none).
_RANDOM_PICKS: dict[str, tuple[int, int | None]] = {
    "random.sample": (1, None),
    "random.choices": (-1, 1),
}


def _picked(name: str, call: Expr, evaluate: Evaluate) -> Computation:
    """``random.sample(population, k)``, ``random.choices(population, k=k)``: ``k`` items of
    the population (``for s in random.sample(sentences, 10)`` runs 10 times)."""
    position, default = _RANDOM_PICKS[name]
    given_population = call.argument(0, "population")
    population = UNKNOWN if given_population is None else (yield from evaluate(given_population))
    given = call.argument(position, "k") if position >= 0 else call.keyword("k")
    if given is not None:
        lengths = (yield from evaluate(given)).ints
    elif call.open:
        lengths = None
    else:
        lengths = None if default is None else frozenset({default})
    return container(length=lengths, element=elements(population))


def library(name: str, call: Expr, evaluate: Evaluate) -> Computation:
    """A call of the library callable with the canonical ``name``."""
    positional = call.positional
    if name == NAMEDTUPLE:
        fields = _fields(positional[1] if len(positional) > 1 else call.keyword("field_names"))
        return UNKNOWN if fields is None else atom(Kind.LIBRARY, ref=_record(fields))
    if name.startswith(_RECORD):
        return (yield from _made_record(name[len(_RECORD) :].split(","), call, evaluate))
    if keras.builds_model(name):
        return atom(Kind.MODEL, flag=not keras.views_model(name, call))
    if name == GRADIENT_TAPE:
        flag = call.keyword("persistent")
        persistent = flag is not None and flag.op is Op.LITERAL and flag.text == "true"
        return atom(Kind.TAPE, flag=persistent)
    if name == TF_FUNCTION:
        return atom(Kind.TF_FUNCTION)
    if name == keras.GRAPH_FUNCTION:
        return atom(Kind.LIBRARY, ref=keras.GRAPH_FUNCTION_MADE)
    if name in keras.CLEAR_SESSION:
        return NONE
    if is_session_source(name):
        return atom(Kind.SESSION)
    if name == TFDS_LOAD:
        return (yield from _tfds_load(call, evaluate))
    if name in keras.DATASET_SOURCES:
        return atom(Kind.DATASET)
    if name in keras.SPLITTERS:
        return (yield from _splitter(keras.SPLITTERS[name], call, evaluate))
    if keras.makes_other_estimator(name):
        return atom(Kind.ESTIMATOR)
    if name in CONTAINER_TYPES:
        return container()
    if is_tensorflow(name) and name.rpartition(".")[2] in VARIABLE_COLLECTIONS:
        return container(element=TENSOR, structural=True)
    if name in DEVICE_LISTS:  # as many as the machine has: counted as one, like the above
        return container(element=UNKNOWN, structural=True)
    if dataset_loader(name):
        return array(call.func.text if call.func.op is Op.REF else name, dataset=True)
    if is_numpy(name):
        return (yield from _numpy(name, call, evaluate))
    if name.startswith("itertools."):
        return (yield from _itertools(name.rpartition(".")[2], call, evaluate))
    if name.startswith("math."):
        return NUMBER
    if name in {"random.random", "random.uniform", "random.randint", "random.gauss"}:
        return NUMBER
    if name == "random.choice" and positional:
        return elements((yield from evaluate(positional[0])))
    if name in _RANDOM_PICKS:
        return (yield from _picked(name, call, evaluate))
    if name in CALLABLE_WRAPPERS and positional:
        return (yield from evaluate(positional[0]))  # calling it calls the function
    if name in PROGRESS_BARS:
        given = call.argument(0, "iterable")
        if given is None:
            return iterator()
        shown = yield from evaluate(given)
        if shown.kind is Kind.DATASET:
            # A bar over a dataset iterates the dataset: a pass over it, batch by batch.
            return shown
        return _items_of(shown)
    if name in PROGRESS_RANGES:
        values = yield from evaluate_all(evaluate, call.positional[:3])
        if call.open or not values:
            return container(element=NUMBER)
        return _range([v.ints for v in values])
    last = name.rpartition(".")[2]
    if is_tensorflow(name) and last[:1].islower():
        return UNKNOWN if name.startswith(_TF_NOT_TENSORS) else TENSOR
    if name == "tensorflow.Variable":
        return TENSOR
    if name == ARGUMENT_PARSER:
        return atom(Kind.UNKNOWN, flag=True, ref=ARGUMENT_PARSER)
    if (is_tensorflow(name) or is_keras(name)) and last[:1].isupper():
        return SOME_OBJECT  # ``tf.train.Saver()``: their classes' names are CapWords
    return UNKNOWN


#: ``collections.namedtuple("Config", ["folds", "lr"])``: a class, whose instances hold the
#: values their construction gives each field (``Config(folds=5).folds`` is 5).
NAMEDTUPLE = "collections.namedtuple"
TFDS_LOAD = "tensorflow_datasets.load"
#: The canonical name of such a class as a value: the prefix, then its fields, comma-separated.
_RECORD = "collections.namedtuple:"


def _record(fields: list[str]) -> str:
    return _RECORD + ",".join(fields)


def _fields(expr: Expr | None) -> list[str] | None:
    """A namedtuple's field names: a list or tuple of strings (its first names, when the
    index keeps only those), or one string of names separated by spaces or commas; None when
    they are not known."""
    if expr is None:
        return None
    text = string_text(expr)
    if text is not None:
        names = text.replace(",", " ").split()
    elif expr.op is Op.DISPLAY:
        # Of a long list only the first names are kept: the positions they fill (a keyword
        # argument names its field itself, :func:`_made_record`).
        found = [string_text(part) for part in expr.parts]
        if any(name is None for name in found):
            return None
        names = [name for name in found if name is not None]
    else:
        return None
    return names if all(name.isidentifier() for name in names) else None


def _made_record(fields: list[str], call: Expr, evaluate: Evaluate) -> Computation:
    """An instance of a namedtuple class: each field what the call passes for it (by
    position, then by keyword); not known when ``*args`` or ``**kwargs`` may fill it."""
    keyed: dict[str, Value] = {}
    for field, argument in zip(fields, call.positional, strict=False):
        keyed[field] = yield from evaluate(argument)
    for field in [*fields, *(k for k in call.keywords if k.isidentifier())]:
        given = call.keyword(field)
        if given is not None:
            keyed[field] = yield from evaluate(given)
        elif field not in keyed:
            keyed[field] = UNKNOWN
    return _namespace(keyed, RECORD)


def command_line(arguments: Iterable[tuple[Expr, Evaluate]]) -> Computation:
    """What ``parser.parse_args()`` gives when the program runs with the defaults of the
    ``add_argument`` calls ``arguments`` (each with the evaluation of its place; their
    ``choices`` too): an ``argparse.Namespace``
    with one attribute per destination. An option with no default is one the user gives: not
    known (``None`` or one of its ``choices`` with choices; a ``store_true`` flag a bool), as
    a positional or required argument is."""
    keyed: dict[str, Value] = {}
    for call, evaluate in arguments:
        options = [string_text(each) for each in call.positional]
        given = call.keyword("dest")
        dest = string_text(given) if given is not None else None
        if dest is None:
            named = [o for o in options if o is not None and o.startswith("-")]
            long = [o for o in named if o.startswith("--")]
            chosen = (long or named)[:1]
            dest = chosen[0].lstrip("-").replace("-", "_") if chosen else None
        if dest is None or not dest.isidentifier():
            continue
        keyed[dest] = yield from _default(call, options, evaluate)
    return _namespace(keyed)


def _namespace(keyed: dict[str, Value], ref: str = NAMESPACE) -> Value:
    """An object with one attribute per key (an ``argparse.Namespace``, a namedtuple's
    :data:`RECORD`)."""
    return atom(Kind.CONTAINER, ref=ref, keyed=tuple(sorted(keyed.items())))


def _default(call: Expr, options: list[str | None], evaluate: Evaluate) -> Computation:
    """The value of one ``add_argument`` in a run with the defaults. An option whose values
    the program lists (``choices``) may be any of them too: one choice, or a list of ``nargs``
    choices when ``nargs`` is a number. A list of any length (``nargs="+"``) is not a set the
    program lists, so the default stands for it, as for an option without choices."""
    required = call.keyword("required")
    positional = not any(o is not None and o.startswith("-") for o in options)
    if positional or (required is not None and required.text != "false"):
        return UNKNOWN
    default = call.keyword("default")
    choices = call.keyword("choices")
    action = call.keyword("action")
    nargs = call.keyword("nargs")
    single = nargs is None or string_text(nargs) == "?"
    counts = None if single or nargs is None else (yield from evaluate(nargs)).ints
    listed = choices is not None and (single or counts is not None)
    if default is not None:
        value = yield from evaluate(default)
    elif action is not None and string_text(action) in {"store_true", "store_false"}:
        value = BOOL
    elif listed:
        value = NONE  # not given: ``None``; given: one of the choices
    else:
        return UNKNOWN  # an option with no default is one to give (``--mode train``)
    if not listed or choices is None:
        return value
    if choices.op is Op.DISPLAY:
        chosen = join((yield from evaluate_all(evaluate, choices.parts)))
    else:
        chosen = elements((yield from evaluate(choices)))
    return join([value, chosen if single else container(counts, chosen)])


def _tfds_load(call: Expr, evaluate: Evaluate) -> Computation:
    """``tfds.load(...)``: a dataset, one per split for a list of splits (``split=["train",
    "test"]``), a dict of them by split name without ``split``, paired with the dataset's info
    for ``with_info=True`` (``[test], info = tfds.load(name, split=["validation"],
    with_info=True)``)."""
    loaded = atom(Kind.DATASET)
    split = call.keyword("split")
    if split is None and len(call.positional) < 2 and not call.open:
        loaded = container(element=UNKNOWN, mapped=loaded)
    elif split is not None:
        splits = yield from evaluate(split)
        count = splits.lengths if splits.kind is Kind.CONTAINER else None
        if count is not None and len(count) == 1:
            loaded = container(count, items=(loaded,) * next(iter(count)))
    info = call.keyword("with_info")
    if info is not None and info.op is Op.LITERAL and info.text == "true":
        return container(frozenset({2}), items=(loaded, UNKNOWN))
    return loaded


def _splitter(splitter: keras.Splitter, call: Expr, evaluate: Evaluate) -> Computation:
    if not splitter.counts:
        return atom(Kind.SPLITTER, flag=splitter.iterable)  # as many splits as samples
    total: Ints = frozenset({1})
    for keyword, position, default in splitter.counts:
        given = call.keyword(keyword)
        if given is None and position >= 0 and position < len(call.positional):
            given = call.positional[position]
        if given is None and call.open:
            total = None
            break
        count = frozenset({default}) if given is None else (yield from evaluate(given)).ints
        total = arithmetic("*", total, count)
    return atom(Kind.SPLITTER, length=total, flag=splitter.iterable)


def _itertools(last: str, call: Expr, evaluate: Evaluate) -> Computation:
    positional = call.positional
    if last in {"count", "cycle"}:
        return iterator(NUMBER if last == "count" else UNKNOWN)
    if last == "product":
        if call.open:
            return container()
        inners = yield from evaluate_all(evaluate, positional)
        repeat = call.keyword("repeat")
        times = 1 if repeat is None else _one_int((yield from evaluate(repeat)))
        lengths: Ints = frozenset({1})
        bound: int | None = 1
        for inner in inners:
            lengths = arithmetic("*", lengths, inner.lengths)
            bound = None if bound is None or inner.bound is None else bound * inner.bound
        if times is None:
            return container(element=UNKNOWN)
        lengths = arithmetic("**", lengths, frozenset({times}))
        items = tuple(elements(v) for v in inners) * times
        return container(
            length=lengths,
            bound=None if bound is None else bound**times,
            element=container(length=frozenset({len(items)}), items=items),
        )
    if last == "repeat" and len(positional) > 1:
        counts = (yield from evaluate(positional[1])).ints
        return container(length=counts, element=(yield from evaluate(positional[0])))
    if last == "chain" and not call.open:
        inners = yield from evaluate_all(evaluate, positional)
        total: Ints = frozenset({0})
        for inner in inners:
            total = arithmetic("+", total, inner.lengths)
        return container(length=total, element=join(elements(v) for v in inners))
    return UNKNOWN


def _numpy(name: str, call: Expr, evaluate: Evaluate) -> Computation:
    last = name.rpartition(".")[2]
    written = call.func.text if call.func.op is Op.REF else name
    positional = call.positional
    if last in _NUMPY_SCALARS:
        return NUMBER
    if last in _NUMPY_LOADERS:
        return array(written)
    if last in _NUMPY_SEQUENCES and name.count(".") == 1:
        return (yield from _numpy_sequence(last, call, evaluate))
    if last in _LIKE:
        return (yield from evaluate(positional[0])) if positional else atom(Kind.ARRAY)
    shape: tuple[int | None, ...] | None = None
    if name.startswith("numpy.random."):
        if last in _DIMENSIONS:
            shape = tuple(_one_int(v) for v in (yield from evaluate_all(evaluate, positional)))
        elif last in _SIZE_POSITION:
            size = call.keyword("size")
            position = _SIZE_POSITION[last]
            if size is None and position < len(positional):
                size = positional[position]
            if size is None:
                return NUMBER  # no size: one number
            shape = yield from _shape(size, evaluate)
        elif last == "permutation" and positional:
            # ``permutation(n)``: the numbers below ``n``; ``permutation(x)``: ``x``'s rows.
            permuted = yield from evaluate(positional[0])
            rows = permuted.ints if permuted.kind is Kind.NUMBER else permuted.lengths
            return atom(Kind.ARRAY, length=rows)
        else:
            return UNKNOWN
    elif last in _SHAPED:
        given = call.keyword("shape") or (positional[0] if positional else None)
        shape = (yield from _shape(given, evaluate)) if given is not None else None
    elif last in {"eye", "identity"} and positional:
        side = _one_int((yield from evaluate(positional[0])))
        shape = (side, side)
    else:
        # Anything else (``np.sqrt``, ``np.array``, ``np.concatenate``): the data of its first
        # argument when that is an array, else an array of no known origin.
        if not positional:
            return atom(Kind.ARRAY)
        first = yield from evaluate(positional[0])
        arrays = first.atoms_of(Kind.ARRAY)
        if arrays:
            return Value(arrays)
        # ``np.array([0.1, 0.01, 0.001])``: a row per item of the container it is made of.
        return atom(Kind.ARRAY, length=first.lengths if last in _FROM_ITEMS else None)
    return _sized_array(written, shape)


def _numpy_sequence(last: str, call: Expr, evaluate: Evaluate) -> Computation:
    positional = call.positional
    if last == "arange":
        bounds = [v.ints for v in (yield from evaluate_all(evaluate, positional[:3]))]
        if call.open or not bounds:
            return container(element=NUMBER)
        ranged = _range(bounds)
        return container(length=ranged.lengths, element=NUMBER)
    num = call.keyword("num") or (positional[2] if len(positional) > 2 else None)
    count = frozenset({50}) if num is None else (yield from evaluate(num)).ints
    return container(length=count, element=NUMBER)


def _shape(expr: Expr, evaluate: Evaluate) -> Generator[Any, Any, tuple[int | None, ...]]:
    if expr.op is Op.DISPLAY and expr.text in {"tuple", "list"} and expr.number >= 0:
        return tuple(_one_int(v) for v in (yield from evaluate_all(evaluate, expr.parts)))
    return (_one_int((yield from evaluate(expr))),)


def method(found: Atom, name: str) -> Value:
    """``receiver.name(...)`` for a receiver that is not project code."""
    kind = found.kind
    if kind is Kind.MODEL:
        if name in keras.PREDICT_METHODS or name in keras.PREDICT_REMEDIES:
            return atom(Kind.ARRAY) if name in keras.PREDICT_METHODS else TENSOR
        if name in keras.EVALUATE_METHODS:
            # The loss, or the loss and each metric: numbers (a dict of them by name with
            # ``return_dict=True``).
            return join((NUMBER, container(element=NUMBER)))
        return NONE if name in {"compile", "summary", "save", "save_weights"} else UNKNOWN
    if kind is Kind.DATASET:
        if name not in keras.DATASET_METHODS:
            return UNKNOWN
        # A data-free step keeps the elements' shapes; a function of the program may change
        # them (``map`` that pads to a fixed length).
        return atom(Kind.DATASET, flag=found.flag and name in keras.DATA_FREE_STEPS)
    if kind is Kind.ESTIMATOR:
        return Value((found,)) if name == "fit" else UNKNOWN
    if kind is Kind.SPLITTER:
        if name == keras.SPLIT_METHOD:
            return container(length=found.length, element=UNKNOWN)
        return number(found.length) if name == "get_n_splits" else UNKNOWN
    if kind is Kind.CONTAINER:
        return _container_method(found, name)
    if kind is Kind.ARRAY:
        if name in SAME_DATA:
            return Value((found,))
        return container(element=UNKNOWN) if name == "tolist" else UNKNOWN
    if kind is Kind.TENSOR:
        return atom(Kind.ARRAY) if name == "numpy" else TENSOR
    if kind is Kind.STR:
        if name in {"split", "splitlines"}:
            return container(element=STR)
        change = _SAME_STRING.get(name)
        if change is not None and found.texts is not None:
            return strings(change(text) for text in found.texts)
        return STR
    return UNKNOWN


def split(found: Atom, separator: Value) -> Value:
    """``text.split(sep)``: the pieces of each text it may be, when the texts and the one
    separator are known (``"DQN_ep10".split("_")`` is ``["DQN", "ep10"]``), else a list of
    strings."""
    one = separator.kind is Kind.STR and len(separator.atoms) == 1
    separators = separator.atoms[0].texts if one else None
    if found.texts is None or separators is None or len(separators) != 1 or "" in separators:
        return container(element=STR)
    (sep,) = separators
    lists = []
    for text in sorted(found.texts):
        pieces = tuple(strings([piece]) for piece in text.split(sep))
        lists.append(container(length=frozenset({len(pieces)}), element=join(pieces), items=pieces))
    return join(lists)


#: The methods of ``str`` that give a string computed from the receiver alone.
_SAME_STRING: dict[str, Callable[[str], str]] = {
    "lower": str.lower,
    "upper": str.upper,
    "casefold": str.casefold,
    "strip": str.strip,
}


def _container_method(found: Atom, name: str) -> Value:
    element = found.element if found.element is not None else UNKNOWN
    mapped = found.mapped if found.mapped is not None else UNKNOWN
    if name == "items":
        pair = container(length=frozenset({2}), items=(element, mapped))
        return container(length=found.length, bound=found.bound, element=pair)
    if name == "keys":
        return container(length=found.length, bound=found.bound, element=element)
    if name == "values":
        return container(length=found.length, bound=found.bound, element=mapped)
    if name == "copy":
        return Value((found,))
    if name in {"get", "pop", "setdefault", "popitem", "popleft"}:
        return mapped if found.mapped is not None else element
    if name in {"index", "count"}:
        return NUMBER
    if name in {"append", "extend", "insert", "add", "update", "clear", "remove", "sort"}:
        return NONE
    return UNKNOWN


def attribute(found: Atom, name: str) -> Value:
    """``value.name`` for a value that is not project code."""
    kind = found.kind
    if kind is Kind.CONTAINER and found.ref in {NAMESPACE, RECORD} and found.keyed is not None:
        return dict(found.keyed).get(name, UNKNOWN)
    if kind is Kind.LIBRARY:
        return atom(Kind.LIBRARY, ref=f"{found.ref}.{name}")
    if kind is Kind.ARRAY:
        if name in SAME_DATA:
            return Value((found,))
        if any(o.dataset for o in found.origins) and name in DATASET_FIELDS:
            return Value((found,))
        return container(element=NUMBER) if name == "shape" else UNKNOWN
    if kind in {Kind.TENSOR, Kind.DATASET} and name == "shape":
        return container(element=NUMBER)
    if kind is Kind.MODEL and name in keras.MODEL_STRUCTURE:
        return container(element=UNKNOWN, structural=True)
    if kind is Kind.MODEL and name in keras.PREDICT_METHODS:
        return model_method(name)
    return UNKNOWN


def model_method(name: str) -> Value:
    """A Keras model's method ``name`` taken as a value (``predict_fn = model.predict``)."""
    return atom(Kind.LIBRARY, ref=f"{keras.MODEL_METHODS_OWNER}.{name}")
