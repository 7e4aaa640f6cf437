"""A small abstract interpreter: what kind of value an expression is, and how much it varies.

For an expression evaluated at a call site inside one or more Python loops, :class:`Evaluator`
answers two questions the retracing rules need:

* the *kind* of the value: a Python number, a bool, a string, a tensor (or NumPy array), a
  Python container, a new callable or instance, or something unknown;
* its *cardinality* across the loop iterations: ``0`` when it does not change, ``k`` when it
  takes at most ``k`` distinct values (a loop over a short literal list, ``range(3)``),
  :data:`UNBOUNDED` otherwise; plus whether a tensor's *shape* (or a container's length)
  changes.

Unknown things stay unknown: a value returned by a call the interpreter cannot see is never
assumed to be a Python number. That is what keeps the rules precise.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import libcst as cst

from tflint_leaks.analysis.loops import LoopNode
from tflint_leaks.analysis.names import is_numpy, is_tensorflow
from tflint_leaks.analysis.nodes import children, descendants, dotted, own_nodes
from tflint_leaks.analysis.scope import Assignment, ScopeFacts

#: Resolves a dotted expression to a canonical qualified name through the file's imports.
ResolveFn = Callable[[cst.BaseExpression], str | None]


def callee_of(node: cst.Call, resolve: ResolveFn) -> str | None:
    """The canonical name of what ``node`` calls through the file's imports, or the bare name
    of a builtin (``range``, ``enumerate``: nothing imports them)."""
    resolved = resolve(node.func)
    if resolved is not None:
        return resolved
    return node.func.value if isinstance(node.func, cst.Name) else None


UNBOUNDED = 1 << 30


class Form(enum.Enum):
    """The form of a value the loop-variation questions need (not the whole-program value:
    that is :mod:`.lattice`'s)."""

    NUMBER = "Python number"
    BOOL = "bool"
    STR = "string"
    NONE = "None"
    TENSOR = "tensor"
    CONTAINER = "Python container"
    CALLABLE = "new function object"
    INSTANCE = "new object"
    #: A parameter, global or attribute: nothing known, but arithmetic with numbers stays numeric.
    UNKNOWN = "unknown"
    #: The result of a call or an element of an iterable the interpreter cannot see.
    OPAQUE = "opaque"


@dataclass(frozen=True)
class Variation:
    """How a value varies across the enclosing loops' iterations, and its form."""

    kind: Form
    #: Distinct values across the enclosing loops' iterations (0: constant).
    card: int = 0
    #: For a tensor: its shape changes; for a container: its length changes.
    size_varies: bool = False
    #: For a container: a Python number inside it changes.
    content_varies: bool = False

    @property
    def varies(self) -> bool:
        return self.card > 0


CONSTANT_UNKNOWN = Variation(Form.UNKNOWN)
OPAQUE = Variation(Form.OPAQUE)

# Calls whose result is a Python number derived from their arguments.
_PY_NUMBER_BUILTINS = frozenset({"float", "int", "round", "abs", "min", "max", "pow", "sum"})
_NUMPY_SCALARS = frozenset(
    f"numpy.{name}"
    for name in [
        "float16",
        "float32",
        "float64",
        "float_",
        "double",
        "single",
        "half",
        "int8",
        "int16",
        "int32",
        "int64",
        "int_",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "intc",
        "longlong",
    ]
)
# NumPy calls that build arrays, with the positional index of their shape argument
# (None: every numeric argument shapes the result, as in ``arange``).
_NUMPY_ARRAYS: dict[str, int | None] = {
    "numpy.zeros": 0,
    "numpy.ones": 0,
    "numpy.empty": 0,
    "numpy.full": 0,
    "numpy.arange": None,
    "numpy.random.rand": None,
    "numpy.random.randn": None,
    "numpy.random.random": 0,
    "numpy.random.normal": 2,
    "numpy.random.uniform": 2,
    "numpy.eye": None,
}
# TensorFlow ops whose output shape is given by an argument: (positional index, keyword).
_TF_SHAPED: dict[str, tuple[int | None, str]] = {
    "tensorflow.zeros": (0, "shape"),
    "tensorflow.ones": (0, "shape"),
    "tensorflow.fill": (0, "dims"),
    "tensorflow.eye": (None, "num_rows"),
    "tensorflow.range": (None, "limit"),
    "tensorflow.reshape": (1, "shape"),
    "tensorflow.broadcast_to": (1, "shape"),
    "tensorflow.slice": (2, "size"),
    "tensorflow.random.normal": (0, "shape"),
    "tensorflow.random.uniform": (0, "shape"),
    "tensorflow.random.truncated_normal": (0, "shape"),
    "tensorflow.random.stateless_normal": (0, "shape"),
    "tensorflow.random.stateless_uniform": (0, "shape"),
    "tensorflow.linspace": (2, "num"),
    "tensorflow.one_hot": (1, "depth"),
}
# Ops that convert their first argument to a tensor of the same shape.
_TF_CONVERSIONS = frozenset(
    {
        "tensorflow.constant",
        "tensorflow.convert_to_tensor",
        "tensorflow.cast",
        "tensorflow.Variable",
        "tensorflow.identity",
        "tensorflow.zeros_like",
        "tensorflow.ones_like",
        "numpy.array",
        "numpy.asarray",
        "numpy.zeros_like",
        "numpy.ones_like",
    }
)
# Ops that keep a shape change of any tensor argument (elementwise maths, joining).
_TF_SHAPE_PRESERVING = frozenset(
    {"tensorflow.concat", "tensorflow.stack", "tensorflow.pad", "numpy.concatenate", "numpy.stack"}
)
# Iterables whose items are Python numbers, with the index of the argument bounding the count.
_NUMBER_ITERABLES = frozenset(
    {"range", "numpy.arange", "numpy.linspace", "numpy.logspace", "numpy.geomspace"}
)


def _join(values: list[Variation]) -> Variation:
    """The value of something that is one of ``values``."""
    kinds = {v.kind for v in values}
    kind = kinds.pop() if len(kinds) == 1 else Form.OPAQUE
    return Variation(
        kind,
        max(v.card for v in values),
        any(v.size_varies for v in values),
        any(v.content_varies for v in values),
    )


def _combine(cards: list[int]) -> int:
    result = 0
    for card in cards:
        if card:
            result = card if result == 0 else min(UNBOUNDED, result * card)
    return result


class Evaluator:
    """Evaluates expressions of one scope relative to the loops enclosing one call site."""

    def __init__(
        self,
        scope: ScopeFacts,
        loops: frozenset[LoopNode],
        resolve: ResolveFn,
        items: Callable[[cst.BaseExpression], int | None],
        returns_number: Callable[[cst.Call], bool],
        runs: int | None = None,
        reshaped: Callable[[cst.BaseExpression], bool] | None = None,
    ) -> None:
        self._scope = scope
        self._loops = loops
        self._resolve = resolve
        #: How many items iterating an expression gives, when known (the whole-program facts).
        self._items = items
        #: Whether a call runs project code that returns a Python number.
        self._returns_number = returns_number
        #: How many times the loops run the call site at most, when known: no value there
        #: takes more distinct values than that (``n *= 2`` in a loop over three masks).
        self._runs = runs
        #: Whether iterating an expression gives tensors whose shapes change from one item to
        #: the next (a ``tf.data`` pipeline of padded batches: the whole-program facts).
        self._reshaped = reshaped
        self._visiting: set[str] = set()
        self._memo: dict[cst.BaseExpression, Variation] = {}

    # -- entry point ---------------------------------------------------------------------------

    def value(self, node: cst.BaseExpression) -> Variation:
        cached = self._memo.get(node)
        if cached is None:
            cached = self._evaluate(node)
            if self._runs is not None and cached.card > self._runs:
                cached = replace(cached, card=self._runs)
            self._memo[node] = cached
        return cached

    # -- expressions ---------------------------------------------------------------------------

    def _evaluate(self, node: cst.BaseExpression) -> Variation:
        if isinstance(node, cst.Integer | cst.Float | cst.Imaginary):
            return Variation(Form.NUMBER)
        if isinstance(node, cst.SimpleString | cst.ConcatenatedString | cst.FormattedString):
            return Variation(Form.STR)
        if isinstance(node, cst.Name) and node.value in {"True", "False"}:
            return Variation(Form.BOOL)
        if isinstance(node, cst.Name) and node.value == "None":
            return Variation(Form.NONE)
        if isinstance(node, cst.Name | cst.Attribute):
            return self._name(node)
        if isinstance(node, cst.UnaryOperation):
            inner = self.value(node.expression)
            if isinstance(node.operator, cst.Not):
                return Variation(Form.BOOL, min(inner.card, 2))
            return inner
        if isinstance(node, cst.BinaryOperation):
            return self._arithmetic([self.value(node.left), self.value(node.right)])
        if isinstance(node, cst.Comparison | cst.BooleanOperation):
            return Variation(Form.BOOL, 2 if self._any_varies(node) else 0)
        if isinstance(node, cst.IfExp):
            return _join([self.value(node.body), self.value(node.orelse)])
        if isinstance(node, cst.Lambda):
            return Variation(Form.CALLABLE, UNBOUNDED)
        if isinstance(node, cst.List | cst.Tuple | cst.Set):
            return self._display([e.value for e in node.elements], node.elements)
        if isinstance(node, cst.Dict):
            values = [e.value for e in node.elements if isinstance(e, cst.DictElement)]
            return self._display(values, node.elements)
        if isinstance(node, cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp):
            return self._comprehension(node)
        if isinstance(node, cst.Subscript):
            return self._subscript(node)
        if isinstance(node, cst.Call):
            return self._call(node)
        if isinstance(node, cst.NamedExpr):
            return self.value(node.value)
        return OPAQUE

    def _any_varies(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Name | cst.Attribute):
            return self.value(node).varies
        return any(self._any_varies(child) for child in children(node))

    def _arithmetic(self, operands: list[Variation]) -> Variation:
        kinds = {v.kind for v in operands}
        card = _combine([v.card for v in operands])
        if Form.TENSOR in kinds:
            return Variation(Form.TENSOR, card, any(v.size_varies for v in operands))
        if Form.CONTAINER in kinds:
            # list + list, [x] * n: the length changes when any operand does.
            return Variation(Form.CONTAINER, card, size_varies=card > 0, content_varies=card > 0)
        if Form.NUMBER in kinds and kinds <= {Form.NUMBER, Form.UNKNOWN, Form.BOOL}:
            return Variation(Form.NUMBER, card)
        if kinds <= {Form.UNKNOWN}:
            return Variation(Form.UNKNOWN, card)
        if Form.STR in kinds and kinds <= {Form.STR, Form.UNKNOWN}:
            return Variation(Form.STR, card)
        return Variation(Form.OPAQUE, card)

    def _display(
        self, values: list[cst.BaseExpression], elements: Sequence[cst.CSTNode]
    ) -> Variation:
        items = [self.value(v) for v in values]
        starred = any(isinstance(e, cst.StarredElement | cst.StarredDictElement) for e in elements)
        size_varies = starred and any(item.varies for item in items)
        content_varies = any(
            (item.kind is Form.NUMBER and item.varies) or item.content_varies for item in items
        )
        return Variation(
            Form.CONTAINER,
            _combine([item.card for item in items]),
            size_varies,
            content_varies,
        )

    def _comprehension(
        self, node: cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp
    ) -> Variation:
        # The number of items is the number of items of the iterables; it changes when one does.
        iterables: list[Variation] = []
        comp: cst.CompFor | None = node.for_in
        while comp is not None:
            iterables.append(self._iterable_size(comp.iter))
            comp = comp.inner_for_in
        card = _combine([v.card for v in iterables])
        return Variation(Form.CONTAINER, card, size_varies=card > 0, content_varies=card > 0)

    def _iterable_size(self, node: cst.BaseExpression) -> Variation:
        if isinstance(node, cst.Call) and callee_of(node, self._resolve) in _NUMBER_ITERABLES:
            return Variation(Form.NUMBER, _combine([self.value(a.value).card for a in node.args]))
        return self.value(node)

    def _subscript(self, node: cst.Subscript) -> Variation:
        base = self.value(node.value)
        slices = [e.slice for e in node.slice]
        bounds: list[Variation] = []
        for item in slices:
            if isinstance(item, cst.Slice) and not self._steady(item):
                for part in (item.lower, item.upper, item.step):
                    if part is not None:
                        bounds.append(self.value(part))
        shape_card = _combine([b.card for b in bounds if b.kind in {Form.NUMBER, Form.UNKNOWN}])
        if shape_card:
            # x[:i] with i changing: the slice's length changes with i.
            if base.kind is Form.CONTAINER:
                return Variation(Form.CONTAINER, shape_card, size_varies=True, content_varies=True)
            return Variation(Form.TENSOR, shape_card, size_varies=True)
        if base.kind is Form.TENSOR and all(isinstance(s, cst.Index) for s in slices):
            indices = [self.value(s.value) for s in slices if isinstance(s, cst.Index)]
            return Variation(Form.TENSOR, _combine([base.card, *[i.card for i in indices]]))
        if base.kind is Form.TENSOR:
            return Variation(Form.TENSOR, base.card, base.size_varies)
        return Variation(Form.OPAQUE, base.card)

    def _steady(self, item: cst.Slice) -> bool:
        """A slice whose length is the same every iteration: ``x[i * k:(i + 1) * k]``,
        ``x[start:start + k]``, whose ``upper - lower`` (a polynomial of the names it reads)
        is loop-invariant, and whose step is (only the last slice of the data may be shorter)."""
        if item.upper is None or (item.step is not None and self.value(item.step).card):
            return False
        atoms: dict[str, cst.BaseExpression] = {}
        upper = _polynomial(item.upper, atoms)
        lower = {} if item.lower is None else _polynomial(item.lower, atoms)
        if upper is None or lower is None:
            return False
        length = _sum(upper, lower, -1)
        return all(self.value(atoms[name]).card == 0 for term in length for name in term)

    # -- names -------------------------------------------------------------------------------

    def _name(self, node: cst.Name | cst.Attribute) -> Variation:
        key = dotted(node)
        if key is None:
            assert isinstance(node, cst.Attribute)
            return Variation(Form.OPAQUE, self.value(node.value).card)
        assignments = self._scope.assignments.get(key)
        if not assignments:
            return CONSTANT_UNKNOWN
        if key in self._visiting:
            # A name defined in terms of itself (``step = step + 1``): neutral here; the
            # assignment that closes the cycle decides whether it varies.
            return CONSTANT_UNKNOWN
        self._visiting.add(key)
        try:
            return _join([self._assignment(a) for a in assignments])
        finally:
            self._visiting.discard(key)

    def _assignment(self, assignment: Assignment) -> Variation:
        inside = bool(assignment.loops & self._loops)
        if assignment.target is not None:
            item = self._loop_item(assignment.target.iterable, assignment.target.path)
            return item if inside else replace(item, card=0)
        if assignment.value is None:
            return Variation(Form.OPAQUE, UNBOUNDED if inside else 0)
        value = self.value(assignment.value)
        if not assignment.augmented and inside and _recurrence(assignment):
            # ``step = step + 1``, ``lr = lr * 0.95``, ``(i := i + 1)``: a new value on every
            # iteration, like the augmented spelling.
            return replace(value, card=UNBOUNDED)
        if assignment.augmented:
            key = dotted(assignment.node.target)  # type: ignore[attr-defined]
            previous = [
                self._assignment(a)
                for a in self._scope.assignments.get(key or "", [])
                if not a.augmented and a is not assignment
            ]
            combined = self._arithmetic([*previous, value]) if previous else value
            # ``step += 1`` in a loop takes a new value on every iteration.
            return replace(combined, card=UNBOUNDED) if inside else replace(combined, card=0)
        return value if inside else replace(value, card=0)

    def _loop_item(self, iterable: cst.BaseExpression, path: tuple[int, ...]) -> Variation:
        """The value of element ``path`` of one item of ``iterable``."""
        if isinstance(iterable, cst.Call):
            callee = callee_of(iterable, self._resolve)
            args = [a.value for a in iterable.args if a.keyword is None and not a.star]
            if callee in _NUMBER_ITERABLES and not path:
                return Variation(Form.NUMBER, self._items(iterable) or UNBOUNDED)
            if callee == "enumerate" and args:
                if path[:1] == (0,):
                    return Variation(Form.NUMBER, self._items(args[0]) or UNBOUNDED)
                if path[:1] == (1,):
                    return self._loop_item(args[0], path[1:])
            if callee == "zip" and path and path[0] < len(args):
                return self._loop_item(args[path[0]], path[1:])
            if callee == "itertools.count" and not path:
                return Variation(Form.NUMBER, UNBOUNDED)
            if (
                isinstance(iterable.func, cst.Attribute)
                and iterable.func.attr.value == "enumerate"
                and path[:1] == (1,)
            ):
                # ``Dataset.enumerate()``: a tensor counter, then the dataset's element.
                return self._loop_item(iterable.func.value, path[1:])
            if callee is not None and (is_tensorflow(callee) or callee.endswith(".enumerate")):
                # tf.range, Dataset.enumerate(): the counters are tensors.
                return Variation(Form.TENSOR, UNBOUNDED)
            if isinstance(iterable.func, cst.Attribute) and iterable.func.attr.value == "enumerate":
                return Variation(Form.TENSOR, UNBOUNDED)
        if self._reshaped is not None and self._reshaped(iterable):
            # An element of a pipeline of padded batches, or any part of one.
            return Variation(Form.TENSOR, UNBOUNDED, size_varies=True)
        if isinstance(iterable, cst.List | cst.Tuple | cst.Set) and not any(
            isinstance(e, cst.StarredElement) for e in iterable.elements
        ):
            items = [self._element(e.value, path) for e in iterable.elements]
            if items:
                joined = _join(items)
                return replace(joined, card=max(len(set(map(_literal_text, iterable.elements))), 1))
        return Variation(Form.OPAQUE, UNBOUNDED)

    def _element(self, node: cst.BaseExpression, path: tuple[int, ...]) -> Variation:
        for position in path:
            if isinstance(node, cst.Tuple | cst.List) and position < len(node.elements):
                node = node.elements[position].value
            else:
                return OPAQUE
        return self.value(node)

    # -- calls -------------------------------------------------------------------------------

    def _call(self, node: cst.Call) -> Variation:
        callee = callee_of(node, self._resolve)
        args = [self.value(a.value) for a in node.args]
        card = _combine([a.card for a in args])
        if callee in _PY_NUMBER_BUILTINS or callee in _NUMPY_SCALARS:
            if callee in {"min", "max", "sum"} and any(a.kind is Form.TENSOR for a in args):
                return Variation(Form.TENSOR, card)
            if callee == "min" and card and self._chunk(node):
                return Variation(Form.NUMBER, 2)
            return Variation(Form.NUMBER, card)
        if callee == "len":
            first = args[0] if args else OPAQUE
            sized = first.kind is Form.CONTAINER and first.size_varies
            return Variation(Form.NUMBER, first.card if sized else 0)
        if callee == "bool":
            return Variation(Form.BOOL, min(card, 2))
        if callee in {"str", "repr", "format"}:
            return Variation(Form.STR, card)
        if callee in {"list", "tuple", "dict", "set", "sorted"}:
            return Variation(Form.CONTAINER, card, size_varies=card > 0, content_varies=card > 0)
        if callee is not None and callee.startswith("math."):
            return Variation(Form.NUMBER, card)
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "item" and not args:
            return Variation(Form.NUMBER, self.value(node.func.value).card)
        if card and self._resolve(node.func) is None and self._returns_number(node):
            # A project function computing a number from arguments that vary (``schedule(epoch)``).
            return Variation(Form.NUMBER, card)
        if callee is None:
            return Variation(Form.OPAQUE, card)
        if callee in _TF_CONVERSIONS:
            first = args[0] if args else OPAQUE
            size_varies = first.size_varies or (first.kind is Form.CONTAINER and first.size_varies)
            return Variation(Form.TENSOR, card, size_varies)
        if callee in _TF_SHAPED:
            return Variation(Form.TENSOR, card, self._shape_argument_varies(node, callee))
        if callee in _NUMPY_ARRAYS:
            return Variation(Form.TENSOR, card, self._numpy_shape_varies(node, callee))
        if callee in _TF_SHAPE_PRESERVING:
            return Variation(Form.TENSOR, card, any(a.size_varies for a in args))
        if is_tensorflow(callee) and callee.rpartition(".")[2][:1].islower():
            if callee.startswith(("tensorflow.data.", "tensorflow.io.", "tensorflow.summary.")):
                return Variation(Form.OPAQUE, card)
            return Variation(Form.TENSOR, card)
        if is_numpy(callee) and args and all(a.kind is Form.NUMBER for a in args):
            return Variation(Form.NUMBER, card)
        return Variation(Form.OPAQUE, card)

    def _chunk(self, node: cst.Call) -> bool:
        """``min(size, total - done)`` where ``size`` and ``total`` do not change in the loops
        and ``done`` grows by ``size`` on each iteration (``done += size``, ``done += n`` with
        ``n = min(...)`` this very call, ``for done in range(0, total, size)``), reset to a
        value that does not change either: a chunk of the data, every one ``size`` long but
        the last, so two values in all, not one per iteration."""
        if len(node.args) != 2 or any(a.keyword is not None or a.star for a in node.args):
            return False
        first, second = (a.value for a in node.args)
        for size, rest in ((first, second), (second, first)):
            measure = _polynomial(size, {})
            atoms: dict[str, cst.BaseExpression] = {}
            remaining = _polynomial(rest, atoms)
            if measure is None or remaining is None or self.value(size).card:
                continue
            for term, coefficient in remaining.items():
                if coefficient != -1 or len(term) != 1:
                    continue
                others = [name for t in remaining if t != term for name in t]
                if not any(self.value(atoms[name]).card for name in others) and self._advances(
                    term[0], measure, node
                ):
                    return True
        return False

    def _advances(self, name: str, size: Polynomial, chunk: cst.Call) -> bool:
        """Every assignment of ``name`` inside the loops adds ``size`` (or the value of
        ``chunk``, through a name bound to it alone) or resets it to a value that does not
        change, and at least one adds."""
        adds = False
        for assignment in self._scope.assignments.get(name, []):
            if not assignment.loops & self._loops:
                continue
            node, value = assignment.node, assignment.value
            if assignment.target is not None:
                iterable = assignment.target.iterable
                if assignment.target.path or not (
                    isinstance(iterable, cst.Call)
                    and callee_of(iterable, self._resolve) == "range"
                    and len(iterable.args) == 3
                    and _polynomial(iterable.args[2].value, {}) == size
                ):
                    return False
                adds = True
            elif isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.AddAssign):
                if not (value is not None and self._is_size(value, size, chunk)):
                    return False
                adds = True
            elif assignment.augmented or value is None or self.value(value).card:
                return False
        return adds

    def _is_size(self, value: cst.BaseExpression, size: Polynomial, chunk: cst.Call) -> bool:
        if _polynomial(value, {}) == size:
            return True
        bound = self._scope.assignments.get(value.value, []) if isinstance(value, cst.Name) else []
        return (
            bool(bound)
            and all(a.value is chunk for a in bound if a.loops & self._loops)
            and any(a.value is chunk for a in bound)
        )

    def _shape_argument_varies(self, node: cst.Call, callee: str) -> bool:
        position, keyword = _TF_SHAPED[callee]
        candidates: list[cst.BaseExpression] = []
        for index, arg in enumerate(node.args):
            if arg.keyword is not None:
                if arg.keyword.value == keyword:
                    candidates.append(arg.value)
            elif position is None or index == position:
                candidates.append(arg.value)
        return any(self._shape_varies(c) for c in candidates)

    def _numpy_shape_varies(self, node: cst.Call, callee: str) -> bool:
        position = _NUMPY_ARRAYS[callee]
        for index, arg in enumerate(node.args):
            keyword = arg.keyword.value if arg.keyword is not None else None
            shapes = keyword in {"shape", "size"} or (
                keyword is None and (position is None or index == position)
            )
            if shapes and self._shape_varies(arg.value):
                return True
        return False

    def _shape_varies(self, node: cst.BaseExpression) -> bool:
        value = self.value(node)
        if value.kind is Form.CONTAINER:
            return value.content_varies or value.size_varies
        return value.kind in {Form.NUMBER, Form.UNKNOWN} and value.varies


def _recurrence(assignment: Assignment) -> bool:
    """The assignment computes the name's new value from its old one (``x = x * 0.9``)."""
    node = assignment.node
    targets: list[cst.BaseExpression] = []
    if isinstance(node, cst.Assign):
        targets = [target.target for target in node.targets]
    elif isinstance(node, cst.AnnAssign | cst.NamedExpr):
        targets = [node.target]
    names = {dotted(target) for target in targets} - {None}
    value = assignment.value
    if not names or value is None:
        return False
    return any(
        isinstance(n, cst.Name | cst.Attribute) and dotted(n) in names
        for n in (value, *descendants(value))
    )


def _literal_text(element: cst.BaseElement) -> str:
    return cst.Module([]).code_for_node(element.value)


_BREAK_OPERATORS: dict[type[cst.BaseCompOp], str] = {
    cst.GreaterThan: ">",
    cst.GreaterThanEqual: ">=",
    cst.Equal: "==",
}


IntValue = Callable[[cst.BaseExpression], int | None]


def break_bound(loop: cst.For | cst.While, scope: ScopeFacts, int_value: IntValue) -> int | None:
    """How many iterations a loop starts at most when a counter ends it: ``if n > 10:
    break`` and ``n += 1``, both directly in the body, ``n`` set once before the loop to a
    known integer and nowhere else, and no ``continue`` that could skip the increment
    (``int_value`` gives the value of the start and of the limit); one when the body ends
    with a ``break``, ``return`` or ``raise`` that no ``continue`` can skip (a test's look
    at the first batch of an endless generator)."""
    if not isinstance(loop.body, cst.IndentedBlock):
        return None
    statements = list(loop.body.body)
    continues = any(isinstance(node, cst.Continue) for node in own_nodes(loop.body))
    if statements and _leaves(statements[-1]) and not continues:
        return 1  # every iteration that reaches the end of the body leaves the loop
    increments = {name: index for index, name in enumerate(map(_increment, statements)) if name}
    if not increments or continues:
        return None
    bounds = []
    for index, statement in enumerate(statements):
        check = _break_check(statement)
        if check is None or check[0] not in increments:
            continue
        name, operator, limit_node = check
        first_value = _counter_start(name, loop, scope)
        start = int_value(first_value) if first_value is not None else None
        limit = int_value(limit_node)
        if start is None or limit is None:
            continue
        # The counter's value at the check in iteration k (k = 1, 2, ...).
        offset = 0 if increments[name] < index else -1
        first = {">": limit + 1, ">=": limit, "==": limit}[operator] - start - offset
        if operator == "==" and first < 1:
            continue  # counted past the limit before the first check: never equal
        bounds.append(max(first, 1))
    return min(bounds, default=None)


def counted_breaks(
    loop: cst.For | cst.While,
    path: Sequence[cst.CSTNode],
    scope: ScopeFacts,
    int_value: IntValue,
) -> int | None:
    """In how many iterations of ``loop`` the node at the end of ``path`` (the nodes from the
    loop down to it) runs at most, when a block on the way to it counts its own runs and the
    loop ends at a limit of that count: the block (the body of an ``if`` inside the loop, say)
    holds ``n += 1`` among its own statements and nothing that leaves it early, ``n`` is set
    once before the loop to a known integer and changed nowhere else, and the loop's own body
    holds ``if n == limit: break`` (or ``>=``, ``>``) with no ``continue`` anywhere in the
    loop to skip it: the block runs until ``n`` reaches the limit, then the loop ends
    (TASM's examples show five random test images: ``if counter in ids:`` ... ``shown += 1``,
    then ``if shown == n: break``)."""
    if not isinstance(loop.body, cst.IndentedBlock):
        return None
    # The loop's own statements first: most loops have no such check, and the walk is long.
    checks = [c for c in map(_break_check, loop.body.body) if c is not None]
    if not checks or any(isinstance(node, cst.Continue) for node in own_nodes(loop.body)):
        return None
    bounds = []
    for block in path:
        if not isinstance(block, cst.IndentedBlock) or block is loop.body:
            continue
        if any(isinstance(n, cst.Break | cst.Return | cst.Raise) for n in own_nodes(block)):
            continue
        counted = {name for name in map(_increment, block.body) if name}
        for name, operator, limit_node in checks:
            if name not in counted:
                continue
            start_node = _counter_start(name, loop, scope)
            start = int_value(start_node) if start_node is not None else None
            limit = int_value(limit_node)
            if start is None or limit is None or start >= limit + (operator == ">"):
                continue
            bounds.append(limit - start + (1 if operator == ">" else 0))
    return min(bounds, default=None)


#: The comparisons of a ``while`` test that keep a counter below a limit, by how they read:
#: ``n < limit`` (the counter left), or ``limit > n`` (right); and whether the limit is reached.
_BELOW: dict[type[cst.BaseCompOp], tuple[bool, bool]] = {
    cst.LessThan: (True, False),
    cst.LessThanEqual: (True, True),
    cst.GreaterThan: (False, False),
    cst.GreaterThanEqual: (False, True),
}

Integers = Callable[[cst.BaseExpression], frozenset[int] | None]


def counted_runs(
    loop: cst.While, path: Sequence[cst.CSTNode] | None, scope: ScopeFacts, integers: Integers
) -> int | None:
    """In how many iterations of ``while n < limit:`` the node at the end of ``path`` (the
    nodes from the loop down to it) runs at most, when every way to it in an iteration first
    adds a positive constant to ``n``: ``n`` is set once before the loop to a known integer
    and only increased inside it (``n += 1`` in the loop's own body, not in a loop within), so
    each iteration that adds starts below the limit. A loop that ``continue``s past the items
    it does not count (``while j < 9:`` ... ``if long: j += 1`` ``else: continue``) runs the
    rest nine times, however many iterations it takes. Without ``path``, how many times the
    loop runs: when every iteration that goes on adds (a statement of the loop's body that no
    ``continue`` can skip), each starts below the limit. ``integers`` gives an expression's
    possible integers."""
    bounds = []
    for name, limit_node, reached in _counters_below(loop.test):
        start_node = _counter_start(name, loop, scope)
        added = _added(name, loop, scope)
        if start_node is None or added is None:
            continue
        if not (
            _every_iteration_adds(loop, added[0]) if path is None else _adds_first(path, added[0])
        ):
            continue
        starts, limits = integers(start_node), integers(limit_node)
        if not starts or not limits:
            continue
        room = max(limits) - min(starts) + (1 if reached else 0)
        bounds.append(max(-(-room // added[1]), 0))
    return min(bounds, default=None)


def _counters_below(test: cst.BaseExpression) -> list[tuple[str, cst.BaseExpression, bool]]:
    """``(n, limit, reached)`` for each comparison ``n < limit`` (or ``<=``, or the other way
    round) that ``test`` needs true, alone or joined by ``and``."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return [*_counters_below(test.left), *_counters_below(test.right)]
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return []
    (comparison,) = test.comparisons
    reading = _BELOW.get(type(comparison.operator))
    if reading is None:
        return []
    left, reached = reading
    counter, limit = (test.left, comparison.comparator)[:: 1 if left else -1]
    if not isinstance(counter, cst.Name):
        return []
    return [(counter.value, limit, reached)]


def steadily_counts(name: str, loop: cst.While, scope: ScopeFacts) -> bool:
    """``name`` takes a new, larger value on every iteration of ``loop``: the one statement of
    the loop that changes it adds a positive constant (``step += 1``) on every way through an
    iteration (no ``continue`` can skip it), so no two iterations see the same value."""
    added = _added(name, loop, scope)
    return added is not None and _every_iteration_adds(loop, added[0])


def _added(name: str, loop: cst.While, scope: ScopeFacts) -> tuple[cst.AugAssign, int] | None:
    """The one statement of ``loop`` that changes ``name``, ``name += step``, and its positive
    integer ``step``."""
    inside = [a for a in scope.assignments.get(name, []) if loop in a.loops]
    if len(inside) != 1:
        return None
    node = inside[0].node
    if not (
        isinstance(node, cst.AugAssign)
        and isinstance(node.operator, cst.AddAssign)
        and isinstance(node.value, cst.Integer)
    ):
        return None
    step = node.value.evaluated_value
    return (node, step) if isinstance(step, int) and step > 0 else None


def _every_iteration_adds(loop: cst.While, added: cst.AugAssign) -> bool:
    """``added`` is a statement of ``loop``'s own body, and no ``continue`` can skip it."""
    if not isinstance(loop.body, cst.IndentedBlock):
        return False
    if any(isinstance(node, cst.Continue) for node in own_nodes(loop.body)):
        return False
    return _block_adds(loop.body.body, added)


def _adds_first(path: Sequence[cst.CSTNode], added: cst.AugAssign) -> bool:
    """Every way down ``path`` runs ``added`` first: at some level, a statement before the
    one on the path runs it on every way through it that goes on."""
    for parent, child in itertools.pairwise(path):
        if isinstance(parent, cst.IndentedBlock):
            before: Sequence[cst.CSTNode] = parent.body[: parent.body.index(child)]
        elif isinstance(parent, cst.SimpleStatementLine | cst.SimpleStatementSuite):
            before = parent.body[: parent.body.index(child)]
        else:
            continue
        if _block_adds(before, added):
            return True
    return False


def _block_adds(statements: Sequence[cst.CSTNode], added: cst.AugAssign) -> bool:
    """Every way through ``statements`` that reaches their end runs ``added``."""
    for statement in statements:
        if statement is added or _ends_iteration(statement):
            return True
        if isinstance(statement, cst.SimpleStatementLine):
            if any(small is added for small in statement.body):
                return True
        elif isinstance(statement, cst.If) and _if_adds(statement, added):
            return True
    return False


def _if_adds(statement: cst.If, added: cst.AugAssign) -> bool:
    """Both ways through an ``if`` (an ``else`` is needed) that go on run ``added``."""
    if not isinstance(statement.body, cst.IndentedBlock):
        return False
    other = statement.orelse
    if isinstance(other, cst.If):
        rest = _if_adds(other, added)
    elif isinstance(other, cst.Else) and isinstance(other.body, cst.IndentedBlock):
        rest = _block_adds(other.body.body, added)
    else:
        return False
    return rest and _block_adds(statement.body.body, added)


def _ends_iteration(statement: cst.CSTNode) -> bool:
    """``continue``, ``break``, ``return`` or ``raise``: nothing after it runs this iteration."""
    if isinstance(statement, cst.SimpleStatementLine):
        return any(_ends_iteration(small) for small in statement.body)
    return isinstance(statement, cst.Continue | cst.Break | cst.Return | cst.Raise)


def _leaves(statement: cst.BaseStatement) -> bool:
    """``statement`` is a ``break``, ``return`` or ``raise``: running it leaves the loop."""
    return isinstance(statement, cst.SimpleStatementLine) and any(
        isinstance(small, cst.Break | cst.Return | cst.Raise) for small in statement.body
    )


def _counter_start(
    name: str, loop: cst.For | cst.While, scope: ScopeFacts
) -> cst.BaseExpression | None:
    """What ``name`` starts the loop with: one augmented assignment inside the loop, and one
    assignment outside it, inside the same enclosing loops (so that it starts again each time
    the loop does)."""
    assignments = scope.assignments.get(name, [])
    inside = [a for a in assignments if loop in a.loops]
    outside = [a for a in assignments if loop not in a.loops]
    if len(inside) != 1 or not inside[0].augmented or len(outside) != 1:
        return None
    (first,) = outside
    if first.loops != inside[0].loops - {loop}:
        return None
    if first.augmented or first.target is not None or first.value is None:
        return None
    return first.value


def _increment(statement: cst.BaseStatement) -> str | None:
    """``n`` for the statement ``n += 1``."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    (small,) = statement.body
    if (
        isinstance(small, cst.AugAssign)
        and isinstance(small.operator, cst.AddAssign)
        and isinstance(small.target, cst.Name)
        and isinstance(small.value, cst.Integer)
        and small.value.evaluated_value == 1
    ):
        return small.target.value
    return None


def _break_check(statement: cst.BaseStatement) -> tuple[str, str, cst.BaseExpression] | None:
    """``(n, ">", limit)`` for the statement ``if n > limit: break`` (no ``else``)."""
    if not isinstance(statement, cst.If) or statement.orelse is not None:
        return None
    block = statement.body
    lines = [block] if isinstance(block, cst.SimpleStatementSuite) else list(block.body)
    if not (
        len(lines) == 1
        and isinstance(lines[0], cst.SimpleStatementLine | cst.SimpleStatementSuite)
        and len(lines[0].body) == 1
        and isinstance(lines[0].body[0], cst.Break)
    ):
        return None
    test = statement.test
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    (comparison,) = test.comparisons
    operator = _BREAK_OPERATORS.get(type(comparison.operator))
    if operator is None or not isinstance(test.left, cst.Name):
        return None
    return test.left.value, operator, comparison.comparator


#: A polynomial with integer coefficients: each term is the sorted names it multiplies (``()``
#: for the constant term).
Polynomial = dict[tuple[str, ...], int]


def _polynomial(
    node: cst.BaseExpression, atoms: dict[str, cst.BaseExpression]
) -> Polynomial | None:
    """``node`` as a polynomial of the names (and dotted attributes) it reads, recorded in
    ``atoms``; None for anything else (a call may give another value each time)."""
    if isinstance(node, cst.Integer):
        value = int(node.value.replace("_", ""), 0)
        return {(): value} if value else {}
    name = dotted(node) if isinstance(node, cst.Name | cst.Attribute) else None
    if name is not None:
        atoms[name] = node
        return {(name,): 1}
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus | cst.Plus):
        inner = _polynomial(node.expression, atoms)
        sign = -1 if isinstance(node.operator, cst.Minus) else 1
        return None if inner is None else {term: sign * c for term, c in inner.items()}
    if isinstance(node, cst.BinaryOperation):
        left = _polynomial(node.left, atoms)
        right = _polynomial(node.right, atoms)
        if left is None or right is None:
            return None
        if isinstance(node.operator, cst.Add | cst.Subtract):
            return _sum(left, right, 1 if isinstance(node.operator, cst.Add) else -1)
        if isinstance(node.operator, cst.Multiply):
            product: Polynomial = {}
            for (a, x), (b, y) in itertools.product(left.items(), right.items()):
                product = _sum(product, {tuple(sorted(a + b)): x * y}, 1)
            return product
    return None


def _sum(left: Polynomial, right: Polynomial, sign: int) -> Polynomial:
    """``left + sign * right``, without zero terms."""
    found = dict(left)
    for term, coefficient in right.items():
        found[term] = found.get(term, 0) + sign * coefficient
    return {term: c for term, c in found.items() if c}
