"""Where a NumPy array comes from: the call that makes it, and its shape when that is literal.

A ``tf.function`` that reads a NumPy array from an enclosing scope embeds it as a constant in
every graph it traces, so the question a rule asks is not only "is this a NumPy array?" but
"which one, how big, made where?". :func:`array_origin` answers it over the whole-program facts:
a name's bindings (:meth:`Program.bindings`: its function's, its module's, or those of the
module it is imported from), what project functions return, tuple elements, slices, and
``astype``/``reshape``-style methods. It is a *may* analysis: a name bound to a loaded array
once and to unknown things elsewhere still holds that array, but a name also bound to a tensor
is not an array. Scalars (``np.float32(x)``, ``np.mean(x)``, ``np.random.rand()``) and arrays
with a literal shape under :data:`SMALL_ARRAY_ELEMENTS` elements (``np.zeros(3)``,
``np.array([1, 2, 3])``) are not arrays worth a finding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tflint_leaks.analysis.names import TF_VARIABLE, is_numpy
from tflint_leaks.analysis.program import MAX_DEPTH, Kind, Program, Where
from tflint_leaks.analysis.symbolic import Expr, Op, item

#: Arrays with a literal shape of fewer elements are small (256 KiB of float32).
SMALL_ARRAY_ELEMENTS = 65_536

_LOADERS = frozenset(
    {"load", "loadtxt", "genfromtxt", "fromfile", "fromregex", "frombuffer", "memmap"}
)
#: NumPy calls whose result is a scalar: scalar types and reductions.
_SCALARS = frozenset(
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
#: ``*_like`` constructors: the shape of their first argument.
_LIKE = frozenset({"zeros_like", "ones_like", "empty_like", "full_like"})
#: Array methods (and attributes) whose result has the data of the array.
_SAME_DATA = frozenset(
    {"astype", "reshape", "copy", "transpose", "flatten", "ravel", "squeeze", "clip", "T",
     "swapaxes", "view", "real", "imag"}
)  # fmt: skip
#: Attributes of what a dataset loader returns (scikit-learn's ``Bunch``) that are its data.
_DATASET_FIELDS = frozenset({"data", "target", "images"})


@dataclass(frozen=True)
class ArrayOrigin:
    """How a NumPy array is made."""

    #: The call that makes it, as written: ``np.load``, ``mnist.load_data``.
    call: str
    #: It comes from a dataset loader (Keras ``load_data``, scikit-learn ``load_*``).
    dataset: bool = False
    #: Its shape, when the call gives it literally.
    shape: tuple[int, ...] | None = None
    #: The project function that makes and returns it.
    via: str | None = None

    def describe(self) -> str:
        """For messages: "`np.zeros` with shape (5000, 5000)", "a dataset loader
        (`mnist.load_data`)", "`np.empty` in `prepare`"."""
        text = f"a dataset loader (`{self.call}`)" if self.dataset else f"`{self.call}`"
        if self.shape is not None:
            text += f" with shape {self.shape}"
        return f"{text} in `{self.via}`" if self.via else text


def array_origin(program: Program, expr: Expr, where: Where) -> ArrayOrigin | None:
    """The origin of the NumPy array ``expr`` holds in ``where``, unless it is not known to be
    an array, or is a scalar or a small literal array."""
    return _Origins(program).of(expr, where, 0)


class _Origins:
    def __init__(self, program: Program) -> None:
        self.program = program
        self.active: set[tuple[str, str, Expr]] = set()

    def of(self, expr: Expr, where: Where, depth: int) -> ArrayOrigin | None:
        key = (where.module.path, where.function.qualname if where.function else "", expr)
        if key in self.active or depth > MAX_DEPTH:
            return None
        self.active.add(key)
        try:
            return self._of(expr, where, depth)
        finally:
            self.active.discard(key)

    def _of(self, expr: Expr, where: Where, depth: int) -> ArrayOrigin | None:
        op = expr.op
        if op is Op.CALL:
            return self._call(expr, where, depth)
        if op is Op.ITEM:
            return self._item(expr.parts[0], expr.number, where, depth)
        if op is Op.ATTR:
            return self._attribute(self.of(expr.parts[0], where, depth), expr.text)
        if op is Op.REF:
            head, _, rest = expr.text.partition(".")
            if head in where.module.imports and not self.program.bindings(head, where):
                return None  # a module: ``np.pi``
            found = self._name(head, where, depth)
            for attribute in rest.split(".") if rest else ():
                found = self._attribute(found, attribute)
            return found
        return None

    def _item(self, base: Expr, number: int, where: Where, depth: int) -> ArrayOrigin | None:
        """``base[number]``: an element of a tuple (displayed, bound to a name or returned by
        a project function), or a slice of an array."""
        if base.op is Op.TUPLE:
            inside = 0 <= number < len(base.parts)
            return self.of(base.parts[number], where, depth) if inside else None
        if base.op is Op.REF and "." not in base.text:
            return self._name(base.text, where, depth, number)
        if base.op is Op.CALL:
            return self._call(base, where, depth, number)
        return self.of(base, where, depth)

    def _name(
        self, name: str, where: Where, depth: int, number: int | None = None
    ) -> ArrayOrigin | None:
        """What the name holds (``name[number]`` when ``number`` is given)."""
        found: ArrayOrigin | None = None
        for value, scope in self.program.bindings(name, where):
            if self._is_tensor(value, scope):
                return None  # also bound to a tensor: not (only) an array
            read = value if number is None else item(value, number)
            found = found or self.of(read, scope, depth)
        return found

    def _is_tensor(self, value: Expr, where: Where) -> bool:
        program = self.program
        func = value.func if value.op is Op.CALL else None
        if (
            func is not None
            and func.op is Op.REF
            and (program.canonical(func.text, where) == TF_VARIABLE)
        ):
            return True
        return program.type_of(value, where).kind is Kind.TENSOR

    @staticmethod
    def _attribute(found: ArrayOrigin | None, name: str) -> ArrayOrigin | None:
        if found is None:
            return None
        return found if name in _SAME_DATA or (found.dataset and name in _DATASET_FIELDS) else None

    def _call(
        self, call: Expr, where: Where, depth: int, number: int | None = None
    ) -> ArrayOrigin | None:
        """What a call returns (element ``number`` of it when given): a library array, or what
        the project function returns."""
        program = self.program
        func = call.func
        qualified = program.canonical(func.text, where) if func.op is Op.REF else None
        if qualified is not None and (is_numpy(qualified) or _dataset_loader(qualified)):
            return self._library(call, qualified, where, depth)
        method = call.method
        if method is not None and method[1] in _SAME_DATA:
            return self.of(method[0], where, depth)
        callee = program.resolve(call, where)
        if callee is None or callee.function is None or callee.constructs:
            return None
        inner = Where(callee.module, callee.function, callee.klass)
        for returned in callee.function.body.returns:
            read = returned if number is None else item(returned, number)
            found = self.of(read, inner, depth + 1)
            if found is not None:
                return found if found.via else _via(found, callee.function.qualname)
        return None

    def _library(self, call: Expr, qualified: str, where: Where, depth: int) -> ArrayOrigin | None:
        last = qualified.rpartition(".")[2]
        written = call.func.text
        if _dataset_loader(qualified):
            return ArrayOrigin(written, dataset=True)
        if last in _SCALARS:
            return None
        if last in _LOADERS:
            return ArrayOrigin(written)
        positional = call.positional
        if last in _LIKE:
            return self.of(positional[0], where, depth) if positional else None
        shape: tuple[int | None, ...] | None = None
        if qualified.startswith("numpy.random."):
            if last in _DIMENSIONS:
                shape = tuple(self._int(p, where) for p in positional)
            elif last in _SIZE_POSITION:
                size = call.keyword("size")
                position = _SIZE_POSITION[last]
                if size is None and position < len(positional):
                    size = positional[position]
                shape = self._shape(size, where) if size is not None else ()
            else:
                return None
        elif last in _SHAPED:
            given = call.keyword("shape") or (positional[0] if positional else None)
            shape = self._shape(given, where) if given is not None else None
        elif last in {"eye", "identity"} and positional:
            side = self._int(positional[0], where)
            shape = (side, side)
        else:
            # Anything else (``np.sqrt``, ``np.array``, ``np.concatenate``): the data of its
            # first argument, when that is a known array.
            return self.of(positional[0], where, depth) if positional else None
        return _sized(written, shape)

    def _shape(self, expr: Expr, where: Where) -> tuple[int | None, ...]:
        if expr.op is Op.TUPLE:
            return tuple(self._int(part, where) for part in expr.parts)
        return (self._int(expr, where),)

    def _int(self, expr: Expr, where: Where) -> int | None:
        return self.program.int_value(expr, where)


def _sized(call: str, shape: tuple[int | None, ...] | None) -> ArrayOrigin | None:
    """A constructed array: None when its literal shape is small (a scalar has shape ``()``)."""
    if shape is None or any(n is None for n in shape):
        return ArrayOrigin(call)
    known = tuple(n for n in shape if n is not None)
    if math.prod(known) < SMALL_ARRAY_ELEMENTS:
        return None
    return ArrayOrigin(call, shape=known)


def _via(found: ArrayOrigin, qualname: str) -> ArrayOrigin:
    return ArrayOrigin(found.call, found.dataset, found.shape, qualname)


def _dataset_loader(qualified: str) -> bool:
    """Keras' ``load_data`` and scikit-learn's ``load_*``/``fetch_*``/``make_*``: arrays the
    size of a dataset."""
    if qualified.startswith("keras.datasets.") and qualified.endswith(".load_data"):
        return True
    module, _, name = qualified.rpartition(".")
    return module == "sklearn.datasets" and name.startswith(("load_", "fetch_", "make_"))
