"""Whole-program facts: the kind of every value, what every call does each time it runs.

Built on the local facts the ``ast`` pass keeps for every body (:mod:`.facts`), across the
files of the project, lazily and memoised for one run:

* **Types** (:meth:`Program.type_of`): a small lattice -- Keras model, ``tf.function``, gradient
  tape, ``tf.data`` dataset, tensor, NumPy array, Python number / bool / str / container, an
  instance of a project class, a tuple of those, or unknown. Sources: constructors and loaders
  (:mod:`.keras`), the return types of project functions and methods (recursion included),
  ``self.x = ...`` in any method of a class or its project bases, class bodies, module globals
  (notebook cells included), annotations, and for parameters the types every project call site
  passes.
* **Calls** (:meth:`Program.resolve`): ``f()``, ``module.f()``, ``self.m()``,
  ``self.actor.m()``, ``obj.m()`` and ``Class()`` resolve through those types, across files.
* **Summaries** (:meth:`Program.summary`): what a function does each time it runs -- builds,
  fits or predicts with a model, clears the session, creates a ``tf.function`` or a persistent
  tape, builds a dataset, passes one of its parameters to a ``tf.function`` -- directly or
  through the calls it makes, to :data:`MAX_DEPTH` hops, each effect with the chain of calls
  that leads to it.

Precision comes first: when the sources disagree (a parameter that is sometimes a model and
sometimes not), the type is unknown, and an unknown receiver is never a model.
"""

from __future__ import annotations

import enum
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import astuple, dataclass, field, replace

from tflint_leaks.analysis import keras
from tflint_leaks.analysis.facts import Body, Site, Span
from tflint_leaks.analysis.graph import (
    GRAPH_METHODS,
    RUN_IN_SESSION_METHODS,
    SESSION_RUN_METHODS,
    builds_graph,
    is_graph_code,
    is_session_source,
)
from tflint_leaks.analysis.index import ClassFacts, FunctionFacts, ModuleIndex, TfFunctionFacts
from tflint_leaks.analysis.names import (
    CONTAINER_TYPES,
    GRADIENT_TAPE,
    TF_FUNCTION,
    is_keras,
    is_numpy,
    is_tensorflow,
    resolve_dotted,
)
from tflint_leaks.analysis.project import ProjectIndex
from tflint_leaks.analysis.symbolic import Expr, Op

#: How many calls deep a summary follows (``loop -> a() -> b() -> c() -> model.predict``).
MAX_DEPTH = 4


class Kind(enum.Enum):
    #: No information (a cycle being evaluated, nothing assigned): neutral in a join.
    BOTTOM = "bottom"
    UNKNOWN = "unknown"
    NONE = "None"
    NUMBER = "Python number"
    BOOL = "bool"
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
    TUPLE = "tuple"


@dataclass(frozen=True)
class ClassRef:
    """A project class: the file that defines it and its name there."""

    path: str
    name: str


@dataclass(frozen=True)
class Type:
    kind: Kind
    #: For an instance (and a model of a project class): its class.
    klass: ClassRef | None = None
    #: For an instance of one of several project classes (a parameter that call sites pass
    #: different classes, ``klass`` None): those classes. Only method calls read it: each
    #: class's method may be the one that runs.
    choices: tuple[ClassRef, ...] = ()
    #: For a tuple: the types of its elements.
    elements: tuple[Type, ...] = ()
    #: For a tape: ``persistent=True``.
    persistent: bool = False
    #: Made by the expression itself (a constructor or loader call, a factory that returns what
    #: it built, or a local holding one): a model that is new every time the code runs.
    fresh: bool = False

    def stale(self) -> Type:
        """The same value seen through a name that outlives the code (a global, an attribute,
        a parameter): not new each time."""
        return replace(self, fresh=False) if self.fresh else self


BOTTOM = Type(Kind.BOTTOM)
UNKNOWN = Type(Kind.UNKNOWN)
_LITERAL_KINDS = {
    "number": Kind.NUMBER,
    "str": Kind.STR,
    "true": Kind.BOOL,
    "false": Kind.BOOL,
    "none": Kind.NONE,
    "container": Kind.CONTAINER,
}


def join(types: Iterable[Type]) -> Type:
    """The type of something that is one of ``types`` (``None`` and no-information are
    neutral: ``self.model = None`` in ``__init__`` and a model later is a model)."""
    found = [t for t in types if t.kind is not Kind.BOTTOM]
    if not found:
        return BOTTOM
    informative = [t for t in found if t.kind is not Kind.NONE] or found
    first = informative[0]
    if all(t == first for t in informative):
        return first
    fresh = all(t.fresh for t in informative)
    if all(replace(t, fresh=first.fresh) == first for t in informative):
        return replace(first, fresh=fresh)
    kinds = {t.kind for t in informative}
    if kinds == {Kind.INSTANCE} and all(t.klass or t.choices for t in informative):
        # Instances of different project classes: each one's methods may run.
        classes = {ref for t in informative for ref in ((t.klass,) if t.klass else t.choices)}
        return Type(Kind.INSTANCE, choices=tuple(sorted(classes, key=astuple)))
    if kinds == {Kind.MODEL}:
        return Type(Kind.MODEL, fresh=fresh)
    if kinds == {Kind.TAPE}:
        return Type(Kind.TAPE, persistent=any(t.persistent for t in informative))
    if kinds == {Kind.TUPLE} and len({len(t.elements) for t in informative}) == 1:
        columns = zip(*(t.elements for t in informative), strict=True)
        return Type(Kind.TUPLE, elements=tuple(join(column) for column in columns))
    return UNKNOWN


@dataclass(frozen=True)
class Where:
    """Where an expression is evaluated: a module's own code, or a function (a method of
    ``klass``). Names in ``shadowed`` are bound in a nested scope: unknown."""

    module: ModuleIndex
    function: FunctionFacts | None = None
    klass: ClassFacts | None = None
    shadowed: frozenset[str] = frozenset()

    @property
    def body(self) -> Body:
        return self.function.body if self.function is not None else self.module.body


class EffectKind(enum.Enum):
    PREDICT = "predict"
    BUILD_MODEL = "build-model"
    FIT = "fit"
    CLEAR_SESSION = "clear-session"
    CREATE_TF_FUNCTION = "create-tf-function"
    PERSISTENT_TAPE = "persistent-tape"
    DATASET = "dataset"
    #: A parameter of the function (``parameter``) is passed to a ``tf.function``.
    PARAMETER_TO_TF_FUNCTION = "parameter-to-tf-function"
    #: Nodes are added to the default graph (in graph code: a TensorFlow op, ``v.assign``).
    GRAPH_OP = "graph-op"
    #: The graph runs in a session (``sess.run``, ``x.eval(session=sess)``).
    RUN_GRAPH = "run-graph"


#: What graph code does: it builds ops everywhere, so only the functions that run the graph are
#: interesting, and only to the rules that ask (``interesting_names(..., runs_graph=True)``).
GRAPH_EFFECTS = frozenset({EffectKind.GRAPH_OP, EffectKind.RUN_GRAPH})


@dataclass(frozen=True)
class Hop:
    """One call on the way to an effect: the call site and the function it runs."""

    path: str
    span: Span
    callee: str


@dataclass(frozen=True)
class TfFunctionTarget:
    """The ``tf.function`` a call invokes: how it was made, the function it wraps (when it is a
    decorated project function, for its parameters), and the file that defines it."""

    facts: TfFunctionFacts
    function: FunctionFacts | None
    path: str


@dataclass(frozen=True)
class Effect:
    kind: EffectKind
    path: str
    span: Span
    #: What a message names: the model (``self.model``), the builder (``build_model``).
    text: str
    #: The calls from the summarised function down to the effect, outermost first.
    chain: tuple[Hop, ...] = ()
    #: For :data:`EffectKind.PARAMETER_TO_TF_FUNCTION`: the parameter's position.
    parameter: int = -1
    #: For :data:`EffectKind.PARAMETER_TO_TF_FUNCTION`: the ``tf.function`` called.
    tf_function: TfFunctionTarget | None = None


@dataclass(frozen=True)
class Callee:
    """What a call runs: a project function or method, or a project class's constructor."""

    module: ModuleIndex
    #: The function (for a class: its ``__init__``, if it has one).
    function: FunctionFacts | None
    #: The method's class, or the class constructed.
    klass: ClassFacts | None = None
    constructs: bool = False

    @property
    def name(self) -> str:
        if self.function is not None:
            return self.function.qualname
        return self.klass.name if self.klass is not None else "?"


@dataclass
class _Memo:
    types: dict[tuple[object, ...], Type] = field(default_factory=dict)
    summaries: dict[tuple[str, str, int], tuple[Effect, ...]] = field(default_factory=dict)
    callers: dict[tuple[str, str], list[tuple[Expr, Where]]] = field(default_factory=dict)
    interesting: dict[tuple[str, str, bool], bool] = field(default_factory=dict)
    named: dict[str, dict[str, list[tuple[str, FunctionFacts]]]] = field(default_factory=dict)
    tf_attributes: dict[str, frozenset[str]] = field(default_factory=dict)
    defined: dict[str, frozenset[str]] = field(default_factory=dict)
    visible: dict[str, frozenset[str]] = field(default_factory=dict)
    ints: dict[tuple[str, ...], int | None] = field(default_factory=dict)
    calls_by_name: dict[str, list[tuple[Expr, Where]]] | None = None
    active: set[tuple[object, ...]] = field(default_factory=set)


class Program:
    def __init__(self, project: ProjectIndex) -> None:
        self.project = project
        self._memo = _Memo()

    # -- names -------------------------------------------------------------------------------

    def canonical(self, text: str, where: Where) -> str | None:
        """The canonical qualified name of a dotted name through the module's imports."""
        return resolve_dotted(text, where.module.imports)

    def _memoised(self, key: tuple[object, ...], compute: Callable[[], Type]) -> Type:
        """``compute()`` once per run; a cycle (``key`` being computed) yields no information."""
        memo = self._memo
        if key in memo.types:
            return memo.types[key]
        if key in memo.active:
            return BOTTOM
        memo.active.add(key)
        try:
            found = compute()
        finally:
            memo.active.discard(key)
        memo.types[key] = found
        return found

    # -- types -------------------------------------------------------------------------------

    def type_of(self, expr: Expr, where: Where) -> Type:
        """The type of ``expr`` evaluated in ``where``; never bottom."""
        found = self._type(expr, where)
        return UNKNOWN if found.kind is Kind.BOTTOM else found

    def _type(self, expr: Expr, where: Where) -> Type:
        op = expr.op
        if op is Op.LITERAL:
            return Type(_LITERAL_KINDS.get(expr.text, Kind.UNKNOWN))
        if op is Op.REF:
            return self._ref(expr.text, where)
        if op is Op.CALL:
            return self._call_type(expr, where)
        if op is Op.ATTR:
            return self._attribute_of(self._type(expr.parts[0], where), expr.text)
        if op is Op.ITEM:
            base = self._type(expr.parts[0], where)
            if base.kind is Kind.TUPLE and 0 <= expr.number < len(base.elements):
                return base.elements[expr.number]
            return BOTTOM if base.kind is Kind.BOTTOM else UNKNOWN
        if op is Op.TUPLE:
            return Type(Kind.TUPLE, elements=tuple(self._type(p, where) for p in expr.parts))
        if op is Op.OTHER and expr.text == "if":
            return join(self._type(p, where) for p in expr.parts)
        return UNKNOWN

    def _ref(self, text: str, where: Where) -> Type:
        head, _, rest = text.partition(".")
        if head in where.shadowed:
            return UNKNOWN
        found = self._name(head, where)
        if found.kind is Kind.UNKNOWN and rest and head in where.module.imports:
            return self._imported(text, where)
        for name in rest.split(".") if rest else ():
            found = self._attribute_of(found, name)
        return found

    def _name(self, name: str, where: Where) -> Type:
        function = where.function
        if function is not None:
            values = [a.value for a in function.body.assigns if a.target == name]
            if values:
                key = ("local", where.module.path, function.qualname, name)
                inner = replace(where, shadowed=frozenset())
                return self._memoised(key, lambda: join(self._type(v, inner) for v in values))
            if name in function.params:
                return self.parameter(where.module, function, name, where.klass).stale()
            if name == "self" and where.klass is not None and function.is_method:
                return self.instance(where.module, where.klass)
        return self.global_type(where.module, name).stale()

    def global_type(self, module: ModuleIndex, name: str) -> Type:
        """The type of a module-level name: its assignments in the module's own code, or what
        it is imported as."""
        values = [a.value for a in module.body.assigns if a.target == name]
        if values:
            where = Where(module)
            key = ("global", module.path, name)
            return self._memoised(key, lambda: join(self._type(v, where) for v in values))
        annotation = next((a.value for a in module.body.annotations if a.target == name), None)
        if annotation is not None:
            return self._annotation(annotation, Where(module))
        if name in module.imports:
            return self._imported(name, Where(module))
        return UNKNOWN

    def _imported(self, text: str, where: Where) -> Type:
        """A name imported from a project module (``from models import policy``)."""
        found = self._project_global(text, where)
        if found is None:
            return UNKNOWN
        module, name, attributes = found
        result = self.global_type(module, name)
        for attribute in attributes:
            result = self._attribute_of(result, attribute)
        return result

    def _project_global(self, text: str, where: Where) -> tuple[ModuleIndex, str, list[str]] | None:
        """The project module an imported dotted name comes from, the global it names there,
        and the attributes read from that global (``models.policy.net``: ``models``,
        ``policy``, ``[net]``)."""
        qualified = self.canonical(text, where)
        if qualified is None:
            return None
        parts = qualified.split(".")
        for split in range(len(parts) - 1, 0, -1):
            module = self.project.find_module(".".join(parts[:split]), where.module)
            if module is not None:
                return module, parts[split], parts[split + 1 :]
        return None

    def bindings(self, name: str, where: Where, depth: int = 0) -> list[tuple[Expr, Where]]:
        """The values bound to the plain ``name`` read in ``where``, each with where it is
        evaluated: the function's own assignments, else the module's, else those of the project
        module it is imported from. Empty for a parameter, a name bound in a nested scope, or
        a name nothing in the project binds (or that is imported more than :data:`MAX_DEPTH`
        times over)."""
        if name in where.shadowed or depth > MAX_DEPTH:
            return []
        function = where.function
        if function is not None:
            values = [a.value for a in function.body.assigns if a.target == name]
            if values:
                inner = replace(where, shadowed=frozenset())
                return [(value, inner) for value in values]
            if name in function.params:
                return []
        module = where.module
        values = [a.value for a in module.body.assigns if a.target == name]
        if values:
            return [(value, Where(module)) for value in values]
        found = self._project_global(name, where) if name in module.imports else None
        if found is None or found[2]:
            return []
        return self.bindings(found[1], Where(found[0]), depth + 1)

    def instance(self, module: ModuleIndex, klass: ClassFacts, *, fresh: bool = False) -> Type:
        """The type of an instance of a project class (a model if it derives from one)."""
        ref = ClassRef(module.path, klass.name)
        kind = Kind.MODEL if self.project.is_model_class(module, klass) else Kind.INSTANCE
        return Type(kind, ref, fresh=fresh and kind is Kind.MODEL)

    def _attribute_of(self, owner: Type, name: str) -> Type:
        if owner.kind is Kind.BOTTOM:
            return BOTTOM
        if owner.klass is None or owner.kind not in {Kind.INSTANCE, Kind.MODEL}:
            return UNKNOWN
        key = ("attribute", owner.klass.path, owner.klass.name, name)
        return self._memoised(key, lambda: self._class_attribute(owner.klass, name)).stale()

    def _class_attribute(self, ref: ClassRef | None, name: str) -> Type:
        found = self._class(ref)
        if found is None:
            return UNKNOWN
        module, klass = found
        types: list[Type] = []
        for owner_module, owner in self._mro(module, klass):
            inner = Where(owner_module, klass=owner)
            types.extend(self._type(a.value, inner) for a in owner.body.assigns if a.target == name)
            for method in owner.methods:
                function = owner_module.functions.get(f"{owner.name}.{method}")
                if function is None:
                    continue
                where = Where(owner_module, function, owner)
                target = f"self.{name}"
                types.extend(
                    self._type(a.value, where) for a in function.body.assigns if a.target == target
                )
        return join(types) if types else UNKNOWN

    def class_of(self, ref: ClassRef | None) -> tuple[ModuleIndex, ClassFacts] | None:
        """The definition of a project class."""
        return self._class(ref)

    def _class(self, ref: ClassRef | None) -> tuple[ModuleIndex, ClassFacts] | None:
        module = self.project.module_at(ref.path) if ref is not None else None
        if module is None or ref is None or ref.name not in module.classes:
            return None
        return module, module.classes[ref.name]

    def _mro(
        self, module: ModuleIndex, klass: ClassFacts, depth: int = 0
    ) -> Iterator[tuple[ModuleIndex, ClassFacts]]:
        """The class and its project bases, own class first."""
        yield module, klass
        if depth > MAX_DEPTH:
            return
        project = self.project
        for base in klass.bases:
            definition = (
                project.lookup(base, module) if "." in base else project.local(module, base)
            )
            if definition is not None and definition.klass is not None and not definition.function:
                yield from self._mro(definition.module, definition.klass, depth + 1)

    def defines(self, ref: ClassRef | None, method: str) -> bool:
        """Whether a project class (or one of its project bases) defines ``method``."""
        found = self._class(ref)
        return found is not None and any(method in k.methods for _, k in self._mro(*found))

    def _annotation(self, annotation: Expr, where: Where) -> Type:
        """The type an annotation names: a Keras model class, a project class."""
        if annotation.op is not Op.REF:
            return UNKNOWN
        qualified = self.canonical(annotation.text, where)
        if qualified is not None and qualified in keras.MODEL_CLASSES:
            return Type(Kind.MODEL)
        klass = self._project_class(annotation.text, where)
        return self.instance(*klass) if klass is not None else UNKNOWN

    def project_class(self, text: str, where: Where) -> tuple[ModuleIndex, ClassFacts] | None:
        """The project class a dotted name refers to."""
        return self._project_class(text, where)

    def _project_class(self, text: str, where: Where) -> tuple[ModuleIndex, ClassFacts] | None:
        module = where.module
        if "." not in text and text in module.classes and text not in module.imports:
            return module, module.classes[text]
        qualified = self.canonical(text, where)
        if qualified is None:
            return None
        definition = self.project.lookup(qualified, module)
        if definition is None or definition.klass is None or definition.function is not None:
            return None
        return definition.module, definition.klass

    # -- parameters ----------------------------------------------------------------------------

    def parameter(
        self,
        module: ModuleIndex,
        function: FunctionFacts,
        name: str,
        klass: ClassFacts | None = None,
    ) -> Type:
        """A parameter's type: its annotation, else the type every project call site passes
        (unknown when there is no call site or when they disagree)."""
        annotation = next((a.value for a in function.body.annotations if a.target == name), None)
        where = Where(module, function, klass)
        if annotation is not None:
            return self._annotation(annotation, where)
        key = ("parameter", module.path, function.qualname, name)
        return self._memoised(key, lambda: self._passed(module, function, name))

    def _passed(self, module: ModuleIndex, function: FunctionFacts, name: str) -> Type:
        position = function.params.index(name)
        default = next((a.value for a in function.body.defaults if a.target == name), None)
        types: list[Type] = []
        for call, where in self.callers(module, function):
            argument, scope = call.keyword(name), where
            if argument is None:
                positional = call.positional
                if position < len(positional):
                    argument = positional[position]
                elif default is not None:
                    # Left out: the default, evaluated where the function is defined.
                    argument, scope = default, Where(module)
                else:
                    return UNKNOWN
            found = self._type(argument, scope)
            if found.kind is Kind.UNKNOWN:
                return UNKNOWN
            types.append(found)
        return join(types) if types else UNKNOWN

    def int_value(self, expr: Expr, where: Where) -> int | None:
        """The value of a non-negative integer expression when it is known here: a literal, a
        module constant, or a parameter every call site gives a known value."""
        if expr.op is Op.LITERAL and expr.text == "number" and expr.number >= 0:
            return expr.number
        if expr.op is not Op.REF or "." in expr.text:
            return None
        name, function = expr.text, where.function
        if function is not None:
            if any(a.target == name for a in function.body.assigns):
                return None
            if name in function.params:
                return self.int_parameter(where.module, function, name)
        return where.module.int_constants.get(name)

    def int_parameter(self, module: ModuleIndex, function: FunctionFacts, name: str) -> int | None:
        """The largest value a parameter is given (a loop bound passed in): the value at every
        project call site, or its default where a call leaves it out (or when there is no
        call site); None when one of them is not a known integer."""
        key = ("int", module.path, function.qualname, name)
        memo = self._memo.ints
        if key in memo:
            return memo[key]
        memo[key] = None  # a cycle gives no bound
        default = next((a.value for a in function.body.defaults if a.target == name), None)
        where = Where(module, function)
        position = function.params.index(name)
        values: list[int | None] = []
        for call, caller in self.callers(module, function):
            argument = call.keyword(name)
            positional = call.positional
            if argument is None and position < len(positional):
                argument = positional[position]
            if argument is None:
                argument = default
            values.append(None if argument is None else self.int_value(argument, caller))
        if not values and default is not None:
            values.append(self.int_value(default, where))
        known = [value for value in values if value is not None]
        found = max(known) if known and len(known) == len(values) else None
        memo[key] = found
        return found

    def callers(self, module: ModuleIndex, function: FunctionFacts) -> list[tuple[Expr, Where]]:
        """Every project call site that runs ``function``."""
        key = (module.path, function.qualname)
        found = self._memo.callers.get(key)
        if found is not None:
            return found
        found = self._memo.callers[key] = []
        owner, _, short = function.qualname.rpartition(".")
        if short == "__init__" and owner:
            short = owner  # a constructor runs on ``Class(...)``
        for call, where in self._calls_named().get(short, ()):
            callee = self.resolve(call, where)
            if (
                callee is not None
                and callee.module.path == module.path
                and callee.function is not None
                and callee.function.qualname == function.qualname
            ):
                found.append((call, where))
        return found

    def _calls_named(self) -> dict[str, list[tuple[Expr, Where]]]:
        """Every call of the project by the last identifier of its callee, built once."""
        found = self._memo.calls_by_name
        if found is not None:
            return found
        found = self._memo.calls_by_name = {}
        for module in self.project.modules():
            for where in _bodies(module):
                for site in where.body.calls:
                    name = _callee_name(site.call)
                    if name is not None:
                        found.setdefault(name, []).append((site.call, where))
        return found

    # -- calls -------------------------------------------------------------------------------

    def resolve(self, call: Expr, where: Where) -> Callee | None:
        """The project function, method or class a call runs, if it can be known."""
        func = call.func
        method = call.method
        if func.op is Op.REF and "." not in func.text:
            return self._resolve_name(func.text, where)
        if method is None:
            return None
        receiver, name = method
        if receiver.op is Op.REF and receiver.text.partition(".")[0] in where.module.imports:
            head = receiver.text.partition(".")[0]
            if self._name(head, where).kind is Kind.UNKNOWN:
                return self._resolve_qualified(f"{receiver.text}.{name}", where)
        owner = self._type(receiver, where)
        if owner.kind not in {Kind.INSTANCE, Kind.MODEL}:
            return None
        return self._method_of(owner.klass, name)

    def _method_of(self, ref: ClassRef | None, name: str) -> Callee | None:
        """The method ``name`` of a project class, through the MRO."""
        found = self._class(ref)
        if found is None:
            return None
        for module, klass in self._mro(*found):
            function = module.functions.get(f"{klass.name}.{name}")
            if function is not None:
                return Callee(module, function, klass)
        return None

    def _resolve_name(self, name: str, where: Where) -> Callee | None:
        module = where.module
        if name in where.shadowed or (
            where.function is not None
            and (name in where.function.params or any(a.target == name for a in where.body.assigns))
        ):
            return None
        if name in module.functions and name not in module.imports:
            return Callee(module, module.functions[name])
        if name in module.classes and name not in module.imports:
            return self._constructor(module, module.classes[name])
        if name in module.imports:
            return self._resolve_qualified(name, where)
        return None

    def _resolve_qualified(self, text: str, where: Where) -> Callee | None:
        qualified = self.canonical(text, where)
        if qualified is None:
            return None
        definition = self.project.lookup(qualified, where.module)
        if definition is None:
            return None
        if definition.function is not None:
            return Callee(definition.module, definition.function, definition.klass)
        if definition.klass is not None:
            return self._constructor(definition.module, definition.klass)
        return None

    def _constructor(self, module: ModuleIndex, klass: ClassFacts) -> Callee:
        for owner_module, owner in self._mro(module, klass):
            init = owner_module.functions.get(f"{owner.name}.__init__")
            if init is not None:
                return Callee(owner_module, init, klass, constructs=True)
        return Callee(module, None, klass, constructs=True)

    def returns(
        self, module: ModuleIndex, function: FunctionFacts, klass: ClassFacts | None
    ) -> Type:
        """The type a project function returns (a model factory returns a model)."""
        key = ("returns", module.path, function.qualname)
        where = Where(module, function, klass)
        return self._memoised(
            key, lambda: join(self._type(value, where) for value in function.body.returns)
        )

    def _call_type(self, call: Expr, where: Where) -> Type:
        func = call.func
        qualified = self.canonical(func.text, where) if func.op is Op.REF else None
        if qualified is not None:
            library = _library_call_type(qualified, call)
            if library is not None:
                return library
        method = call.method
        if method is not None:
            receiver, name = method
            if name in keras.DATASET_METHODS and self._type(receiver, where).kind is Kind.DATASET:
                return Type(Kind.DATASET)
        callee = self.resolve(call, where)
        if callee is None:
            return UNKNOWN
        if callee.constructs:
            assert callee.klass is not None
            return self.instance(callee.module, callee.klass, fresh=True)
        assert callee.function is not None
        return self.returns(callee.module, callee.function, callee.klass)

    def tf_function(
        self, call: Expr, where: Where, callee: Callee | bool | None = True
    ) -> TfFunctionTarget | None:
        """The ``tf.function`` a call invokes, if the project index knows it (``callee``: what
        :meth:`resolve` gives for the call, when the caller has it already)."""
        func = call.func
        module = where.module
        if func.op is Op.REF and "." not in func.text and func.text not in module.imports:
            name = func.text
            if where.function is not None and name in where.function.local_tf_functions:
                return TfFunctionTarget(where.function.local_tf_functions[name], None, module.path)
            if name in module.tf_function_names:
                return TfFunctionTarget(module.tf_function_names[name], None, module.path)
        if callee is True:
            callee = self.resolve(call, where)
        if isinstance(callee, Callee) and callee.function and callee.function.tf_function:
            return TfFunctionTarget(
                callee.function.tf_function, callee.function, callee.module.path
            )
        method = call.method
        if method is not None:
            owner = self._type(method[0], where)
            found = self._class(owner.klass) if owner.kind in {Kind.INSTANCE, Kind.MODEL} else None
            if found is not None:
                owner_module, klass = found
                facts = self.project.class_tf_functions(owner_module, klass).get(method[1])
                if facts is not None:
                    function = owner_module.functions.get(f"{klass.name}.{method[1]}")
                    return TfFunctionTarget(facts, function, owner_module.path)
        if func.op is Op.REF and func.text.partition(".")[0] in module.imports:
            qualified = self.canonical(func.text, where)
            definition = self.project.lookup(qualified, module) if qualified else None
            if definition is not None and definition.tf_function is not None:
                return TfFunctionTarget(
                    definition.tf_function, definition.function, definition.module.path
                )
        return None

    # -- summaries -----------------------------------------------------------------------------

    def interesting_names(
        self, module: ModuleIndex, candidates: frozenset[str], *, runs_graph: bool = False
    ) -> frozenset[str]:
        """Which of ``candidates`` (identifiers that code with a loop mentions) lead from
        ``module`` to project code a rule looks for in loops: ``tf.function``s, model classes
        and classes with ``tf.function`` methods, and functions and methods that do something
        each time they run (build, fit or predict with a model, create a ``tf.function``, ...)
        -- defined in the module or in the modules it imports (under their local names too).
        With ``runs_graph``: the functions and methods that run a TF1 graph each time they run
        (graph code builds ops everywhere; only a loop that also runs the graph matters)."""
        visible = self._visible(module)
        local_targets = {
            local: target.rpartition(".")[2] for local, target in module.imports.items()
        }
        return frozenset(
            name
            for name in candidates
            if (name in visible and self._interesting(module, name, runs_graph))
            or (
                local_targets.get(name) in visible
                and self._interesting(module, local_targets[name], runs_graph)
            )
        )

    def _visible(self, module: ModuleIndex) -> frozenset[str]:
        """:meth:`_defined` of ``module`` and of every module it imports, together."""
        found = self._memo.visible.get(module.path)
        if found is None:
            found = self._memo.visible[module.path] = frozenset().union(
                *(self._defined(source) for source in [module, *self.project.dependencies(module)])
            )
        return found

    def _interesting(self, module: ModuleIndex, name: str, runs_graph: bool) -> bool:
        key = (module.path, name, runs_graph)
        found = self._memo.interesting.get(key)
        if found is None:
            found = self._memo.interesting[key] = any(
                self._interesting_definition(source, name, runs_graph)
                for source in [module, *self.project.dependencies(module)]
                if name in self._defined(source)
            )
        return found

    def _interesting_definition(self, source: ModuleIndex, name: str, runs_graph: bool) -> bool:
        """Whether ``source`` defines something called ``name`` that a loop rule cares about
        (memoised per module and name: every module that imports ``source`` asks)."""
        key = (source.path, f"#{name}", runs_graph)
        found = self._memo.interesting.get(key)
        if found is not None:
            return found
        if runs_graph:
            found = self._memo.interesting[key] = any(
                effect.kind is EffectKind.RUN_GRAPH
                for _, callee in self._named_callees(source, name)
                for effect in self.summary(callee)
            )
            return found
        found = name in source.tf_function_names
        for function, callee in self._named_callees(source, name):
            if found:
                break
            found = bool(
                function.tf_function is not None
                or function.local_tf_functions
                or any(e.kind not in GRAPH_EFFECTS for e in self.summary(callee))
                or self.is_factory(callee)
            )
        klass = source.classes.get(name)
        if not found and klass is not None:
            found = bool(self.project.class_tf_functions(source, klass)) or (
                self.project.is_model_class(source, klass)
            )
        if not found:
            found = name in self._tf_function_attributes(source)
        self._memo.interesting[key] = found
        return found

    def _defined(self, source: ModuleIndex) -> frozenset[str]:
        """Every name :meth:`_interesting_definition` can answer yes for in ``source``: its
        ``tf.function``s, functions, methods, classes and ``tf.function`` attributes (most
        names a loop mentions are defined in none of the modules it can see)."""
        found = self._memo.defined.get(source.path)
        if found is None:
            found = self._memo.defined[source.path] = frozenset(
                [
                    *source.tf_function_names,
                    *self._named(source),
                    *source.classes,
                    *self._tf_function_attributes(source),
                ]
            )
        return found

    def _named_callees(
        self, source: ModuleIndex, name: str
    ) -> Iterator[tuple[FunctionFacts, Callee]]:
        """The functions and methods of ``source`` called ``name``."""
        for qualname, function in self._named(source).get(name, ()):
            owner = source.classes.get(qualname.partition(".")[0]) if "." in qualname else None
            yield function, Callee(source, function, owner)

    def _tf_function_attributes(self, source: ModuleIndex) -> frozenset[str]:
        """The names of every ``tf.function`` attribute of every class of a module."""
        found = self._memo.tf_attributes.get(source.path)
        if found is None:
            found = self._memo.tf_attributes[source.path] = frozenset(
                name
                for klass in source.classes.values()
                for name in self.project.class_tf_functions(source, klass)
            )
        return found

    def _named(self, source: ModuleIndex) -> dict[str, list[tuple[str, FunctionFacts]]]:
        """A module's functions and methods by their last name (and their local tf.functions)."""
        found = self._memo.named.get(source.path)
        if found is None:
            found = self._memo.named[source.path] = {}
            for qualname, function in source.functions.items():
                found.setdefault(qualname.rpartition(".")[2], []).append((qualname, function))
                for local in function.local_tf_functions:
                    found.setdefault(local, []).append((qualname, function))
        return found

    def summary(self, callee: Callee) -> tuple[Effect, ...]:
        """What running ``callee`` does each time: its own effects and those of the calls it
        makes, to :data:`MAX_DEPTH` calls deep."""
        return self._summary(callee, 0)

    def _summary(self, callee: Callee, depth: int) -> tuple[Effect, ...]:
        function = callee.function
        if function is None or function.tf_function or function.qualname in callee.module.traced:
            return ()  # a tf.function's Python body runs only while it traces
        key = (callee.module.path, function.qualname, depth)
        memo = self._memo
        if key in memo.summaries:
            return memo.summaries[key]
        if ("summary", *key[:2]) in memo.active or depth > MAX_DEPTH:
            return ()
        memo.active.add(("summary", *key[:2]))
        try:
            where = Where(callee.module, function, callee.klass)
            effects: list[Effect] = [
                Effect(EffectKind.CREATE_TF_FUNCTION, callee.module.path, span, function.qualname)
                for span in function.creates_tf_function
            ]
            for site in function.body.calls:
                effects.extend(self._site_effects(site, where, depth, nested=True))
            found = tuple(effects)
        finally:
            memo.active.discard(("summary", *key[:2]))
        memo.summaries[key] = found
        return found

    def effects_of_call(self, call: Expr, span: Span, where: Where) -> tuple[Effect, ...]:
        """What one call does each time it runs (the call itself, and the callee's summary).
        A parameter the callee passes to a ``tf.function`` is given by its position in this
        call."""
        return tuple(self._site_effects(Site(call, span), where, 0, nested=False))

    def _site_effects(
        self, site: Site, where: Where, depth: int, *, nested: bool
    ) -> Iterator[Effect]:
        call, path = site.call, where.module.path
        func = call.func
        qualified = self.canonical(func.text, where) if func.op is Op.REF else None
        if qualified is not None:
            kind = _library_effect(qualified, call)
            if kind is not None:
                # A graph op is named in full (``tf.assign``), the others by their last name.
                text = func.text if kind is EffectKind.GRAPH_OP else func.text.rpartition(".")[2]
                yield Effect(kind, path, site.span, text)
                return
        method = call.method
        if method is not None and method[1] in {"predict", "fit"}:
            receiver = self._type(method[0], where)
            if receiver.kind is Kind.MODEL and not self.defines(receiver.klass, method[1]):
                kind = EffectKind.PREDICT if method[1] == "predict" else EffectKind.FIT
                yield Effect(kind, path, site.span, _text(method[0]))
                return
        callee = self.resolve(call, where)
        target = self.tf_function(call, where, callee) if where.function is not None else None
        if target is not None and where.function is not None:
            for position, argument in enumerate(call.positional):
                if target.facts.covers(position):
                    continue  # input_signature: a tensor of the declared spec, not a Python value
                if argument.op is Op.REF and argument.text in where.function.params:
                    yield Effect(
                        EffectKind.PARAMETER_TO_TF_FUNCTION,
                        path,
                        site.span,
                        _callee_name(call) or "?",
                        parameter=where.function.params.index(argument.text),
                        tf_function=target,
                    )
            return
        if callee is None:
            alternatives = self._alternatives(call, where)
            if not alternatives:
                yield from self._graph_effects(site, where)
            for alternative in alternatives:
                yield from self._callee_effects(alternative, site, where, depth, nested=nested)
            return
        yield from self._callee_effects(callee, site, where, depth, nested=nested)

    def _alternatives(self, call: Expr, where: Where) -> list[Callee]:
        """For a method called on an instance of one of several project classes, the method of
        each class that has it."""
        method = call.method
        if method is None:
            return []
        choices = self._type(method[0], where).choices
        return [c for ref in choices if (c := self._method_of(ref, method[1])) is not None]

    def _callee_effects(
        self, callee: Callee, site: Site, where: Where, depth: int, *, nested: bool
    ) -> Iterator[Effect]:
        call, path = site.call, where.module.path
        klass = callee.klass
        if callee.constructs and klass and self.project.is_model_class(callee.module, klass):
            yield Effect(EffectKind.BUILD_MODEL, path, site.span, klass.name)
            return
        if depth >= MAX_DEPTH:
            return
        if self.is_factory(callee):
            yield Effect(EffectKind.BUILD_MODEL, path, site.span, callee.name)
        hop = Hop(path, site.span, callee.name)
        factory = self.is_factory(callee)
        for effect in self._summary(callee, depth + 1):
            if effect.kind is EffectKind.BUILD_MODEL and factory:
                continue  # the model is returned: the caller's assignment is the effect
            translated = self._through(effect, call, where) if nested else effect
            if translated is not None:
                yield replace(translated, chain=(hop, *translated.chain))

    def _graph_effects(self, site: Site, where: Where) -> Iterator[Effect]:
        """A method call on something that is not project code that runs the graph (a
        session's ``run``, ``x.eval(sess)``) or, in graph code, adds to it (``v.assign(x)``)."""
        call = site.call
        method = call.method
        if method is None:
            return
        receiver, name = method
        path = where.module.path
        if self._runs_graph(call, receiver, name, where):
            yield Effect(EffectKind.RUN_GRAPH, path, site.span, f"{_text(receiver)}.{name}")
        elif name in GRAPH_METHODS and is_graph_code(where.module.units):
            yield Effect(EffectKind.GRAPH_OP, path, site.span, f"{_text(receiver)}.{name}")

    def _runs_graph(self, call: Expr, receiver: Expr, name: str, where: Where) -> bool:
        """``sess.run(...)`` on a session, or ``x.eval(sess)`` / ``op.run(session=sess)``."""
        if name in SESSION_RUN_METHODS and self._type(receiver, where).kind is Kind.SESSION:
            return True
        arguments = (*call.positional[:1], call.keyword("session"))
        return name in RUN_IN_SESSION_METHODS and any(
            self._type(argument, where).kind is Kind.SESSION
            for argument in arguments
            if argument is not None
        )

    def is_factory(self, callee: Callee) -> bool:
        """The callee returns a new model it built (a model factory)."""
        if callee.constructs or callee.function is None:
            return False
        returned = self.returns(callee.module, callee.function, callee.klass)
        return returned.kind is Kind.MODEL and returned.fresh

    def _through(self, effect: Effect, call: Expr, where: Where) -> Effect | None:
        """An effect of the callee seen from the caller: a parameter passed on to a
        ``tf.function`` stays an effect only when the caller passes its own parameter."""
        if effect.kind is not EffectKind.PARAMETER_TO_TF_FUNCTION:
            return effect
        positional = call.positional
        if effect.parameter >= len(positional) or where.function is None:
            return None
        argument = positional[effect.parameter]
        if argument.op is Op.REF and argument.text in where.function.params:
            return replace(effect, parameter=where.function.params.index(argument.text))
        return None


def _bodies(module: ModuleIndex) -> Iterator[Where]:
    """Every body of a module: its own code, its functions and its methods."""
    yield Where(module)
    for qualname, function in module.functions.items():
        owner = module.classes.get(qualname.partition(".")[0]) if "." in qualname else None
        yield Where(module, function, owner)


def _callee_name(call: Expr) -> str | None:
    """The last identifier of a call's callee (``self.model.predict`` -> ``predict``)."""
    func = call.func
    if func.op is Op.REF:
        return func.text.rpartition(".")[2]
    if func.op is Op.ATTR:
        return func.text
    return None


def _text(expr: Expr) -> str:
    if expr.op is Op.REF:
        return expr.text
    if expr.op is Op.ATTR:
        return f"{_text(expr.parts[0])}.{expr.text}"
    if expr.op is Op.CALL:
        return f"{_text(expr.func)}(...)"
    if expr.op is Op.ITEM:
        return f"{_text(expr.parts[0])}[{expr.number if expr.number >= 0 else '...'}]"
    return "..."


def _persistent(call: Expr) -> bool:
    flag = call.keyword("persistent")
    return flag is not None and flag.op is Op.LITERAL and flag.text == "true"


def _library_call_type(qualified: str, call: Expr) -> Type | None:
    """The type of a call into TensorFlow, Keras or NumPy."""
    if keras.builds_model(qualified):
        return Type(Kind.MODEL, fresh=True)
    if qualified == GRADIENT_TAPE:
        return Type(Kind.TAPE, persistent=_persistent(call))
    if qualified == TF_FUNCTION:
        return Type(Kind.TF_FUNCTION)
    if is_session_source(qualified):
        return Type(Kind.SESSION)
    if qualified in keras.DATASET_SOURCES:
        return Type(Kind.DATASET)
    if qualified in CONTAINER_TYPES:
        return Type(Kind.CONTAINER)
    if is_numpy(qualified):
        return Type(Kind.ARRAY)
    if is_tensorflow(qualified) and qualified.rpartition(".")[2][:1].islower():
        return Type(Kind.TENSOR)
    if is_tensorflow(qualified) or is_keras(qualified):
        return UNKNOWN
    return None


def _library_effect(qualified: str, call: Expr) -> EffectKind | None:
    if keras.builds_model(qualified):
        return EffectKind.BUILD_MODEL
    if qualified in keras.CLEAR_SESSION:
        return EffectKind.CLEAR_SESSION
    if qualified == GRADIENT_TAPE and _persistent(call):
        return EffectKind.PERSISTENT_TAPE
    if qualified in keras.DATASET_SOURCES:
        return EffectKind.DATASET
    if builds_graph(qualified):
        return EffectKind.GRAPH_OP
    return None


_PROGRAMS: weakref.WeakKeyDictionary[ProjectIndex, Program] = weakref.WeakKeyDictionary()


def program_of(project: ProjectIndex) -> Program:
    """The one :class:`Program` of a project index (its facts are memoised for the run)."""
    found = _PROGRAMS.get(project)
    if found is None:
        found = _PROGRAMS[project] = Program(project)
    return found
