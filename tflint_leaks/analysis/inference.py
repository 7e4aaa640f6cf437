"""The value equations: what every name, attribute, parameter, call and return may be.

Each unknown of the solver (:mod:`.solver`) that this module answers is one equation over the
lattice (:mod:`.lattice`):

* ``("local", path, qualname, name)``: a name a function assigns, the join of every value it
  is assigned (flow-insensitively) and of what is appended to it;
* ``("global", path, name)``: a module-level name: its assignments, else its annotation, the
  function, class or ``tf.function`` it defines, or what it is imported as (a project module's
  global, followed through re-exports by the solver, or a library name);
* ``("attribute", path, class, name)``: an attribute of an instance of a project class, from
  the class bodies and every ``self.name = ...`` of its whole method resolution order;
* ``("param", path, qualname, name)``: a parameter: its annotation, else what every project
  call site passes (its default where a call leaves it out), and "unknown" for a function the
  project cannot see all the callers of (one no call names, or one passed around as a value);
* ``("returns", path, qualname)``: what a function returns; with a fourth item, the structure
  one call passes it (:meth:`Inference._structure_passed`), what it returns to that call;
* ``("callers", path, qualname)``: the call sites that may run a function.

:meth:`Inference.evaluate` gives any expression's value in a :class:`Where`, and
:meth:`Inference.targets` what a call may run; both are generators run by the solver. Every
equation is monotone (the join of distributive transfers over the atoms), so the solver's
answers are the least solution, whichever question comes first.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any, NamedTuple

from tflint_leaks.analysis import branches, keras, library
from tflint_leaks.analysis.facts import (
    Assign,
    Body,
    Branch,
    Span,
    state_read,
    within,
)
from tflint_leaks.analysis.index import LOCALS, ClassFacts, FunctionFacts, ModuleIndex
from tflint_leaks.analysis.lattice import (
    BOOL,
    BOTTOM,
    FALSE,
    NONE,
    NUMBER,
    SOME_OBJECT,
    STR,
    TENSOR,
    TOP,
    TRUE,
    UNKNOWN,
    Atom,
    ClassRef,
    FunctionRef,
    Ints,
    Kind,
    Value,
    arithmetic,
    atom,
    concatenated,
    container,
    join,
    map_atoms,
    number,
    strings,
    text_of,
)
from tflint_leaks.analysis.names import IMPORT_MODULE, canonical, resolve_dotted
from tflint_leaks.analysis.project import ProjectIndex
from tflint_leaks.analysis.singletons import Singletons
from tflint_leaks.analysis.symbolic import (
    LAMBDA,
    SPREAD,
    Expr,
    Op,
    is_super,
    ref,
    string,
    string_text,
)
from tflint_leaks.analysis.symbolic import UNKNOWN as UNKNOWN_EXPR

Query = tuple[Any, ...]
Computation = Generator[Query, Any, Value]

#: ``X[key] = value``, as what the body puts into ``X`` (:meth:`Inference._stores`): an
#: ``Op.OTHER`` of this text whose parts are the key and the value.
ITEM_STORE = "item-store"

#: Builtins a bare name means when nothing in its module binds it.
BUILTINS = frozenset(
    {
        "range", "len", "enumerate", "zip", "list", "tuple", "sorted", "reversed", "set",
        "frozenset", "iter", "next", "dict", "min", "max", "abs", "int", "round", "float",
        "complex", "bool", "str", "repr", "format", "sum", "isinstance", "issubclass", "hasattr",
        "callable", "all", "any", "print", "super", "ord", "chr", "hash", "id", "divmod", "pow",
        "setattr", "delattr", "getattr", "open", "map", "filter", "type", "vars", "object",
        "input", "ascii", "exec",
        # Python 2's lazy ``range``.
        "xrange",
    }
)  # fmt: skip
#: How many project subclasses ``self`` of a class may stand for (each one's attributes and
#: overrides are looked up); a class with more, a framework's base class (a ``Layer`` with
#: hundreds of subclasses), stands for itself.
MAX_CONE = 8
#: How many subclasses' overrides an abstract method called on ``self`` of a class with more
#: subclasses than that may stand for (:meth:`Inference._overrides`).
MAX_OVERRIDES = 32
#: Calls that put their argument into the container they are called on.
STORE_METHODS = frozenset({"append", "extend", "insert", "add", "appendleft", "put"})
#: The methods that change which keys a dict holds or their values (``kwargs.update(lr=0.1)``,
#: ``config.pop("seed")``): what they store, as item stores.
DICT_CHANGES = frozenset({"update", "setdefault", "pop", "popitem", "clear"})
_LITERALS = {"number": NUMBER, "str": STR, "true": TRUE, "false": FALSE, "none": NONE}
_ANNOTATIONS = {
    "int": NUMBER, "float": NUMBER, "bool": BOOL, "str": STR, "list": atom(Kind.CONTAINER),
    "dict": atom(Kind.CONTAINER), "tuple": atom(Kind.CONTAINER),
}  # fmt: skip
#: TensorFlow's classes an annotation names by their canonical names (``train_dataset:
#: tf.data.Dataset``, ``x: tf.Tensor``), with what their instances are.
_LIBRARY_ANNOTATIONS = {"tensorflow.data.Dataset": atom(Kind.DATASET), "tensorflow.Tensor": TENSOR}


#: What one call passes for the parameters its callee tests (:mod:`.branches`), sorted by name:
#: the function evaluated for that call takes only the branches those values allow.
Given = tuple[tuple[str, Value], ...]


#: The bases that make a class an enum, and those that make its members strings.
_ENUM_BASES = frozenset({"Enum", "IntEnum", "Flag", "IntFlag"})
_STRING_BASES = frozenset({"str", "builtins.str", "enum.StrEnum", "StrEnum"})


class Where(NamedTuple):
    """Where an expression is evaluated: a module's own code, a class body, or a function (a
    method of ``klass``). Names in ``shadowed`` are bound in a nested scope (unknown); names
    in ``bound`` by an enclosing comprehension; parameters in ``given`` by the one call the
    function is evaluated for (:data:`Given`)."""

    module: ModuleIndex
    function: FunctionFacts | None = None
    klass: ClassFacts | None = None
    shadowed: frozenset[str] = frozenset()
    bound: tuple[tuple[str, Value], ...] = ()
    given: Given = ()

    @property
    def body(self) -> Body:
        if self.function is not None:
            return self.function.body
        return self.klass.body if self.klass is not None else self.module.body

    @property
    def qualname(self) -> str:
        return self.function.qualname if self.function is not None else ""


class TargetKind(Singletons):
    #: A project function or method (``ref``), found on ``klass`` when it is a method.
    FUNCTION = "function"
    #: A project class constructed: ``klass``, and its ``__init__`` (``ref``) if it has one.
    CONSTRUCTOR = "constructor"
    #: A library callable, ``name`` canonical.
    LIBRARY = "library"
    #: A method ``name`` of a value that is not project code (``model.predict``).
    METHOD = "method"
    #: Calling a value that is not a function (a ``tf.function``, a model, a layer).
    VALUE = "value"
    UNKNOWN = "unknown"


class Target(NamedTuple):
    """Something a call may run."""

    kind: TargetKind
    ref: FunctionRef | None = None
    klass: ClassRef | None = None
    name: str = ""
    receiver: Atom | None = None


_UNKNOWN_TARGET = Target(TargetKind.UNKNOWN)
#: Assignments and expressions with where each is evaluated: the assignments, the values stored.
Placed = tuple[list[tuple[Assign, Where]], list[tuple[Expr, Where]]]
#: A call site: the file, the qualified name of the function making it ("" for module code),
#: and its index among that body's calls.
SiteId = tuple[str, str, int]


class Inference:
    """The value equations of one project (registered with a :class:`~.solver.Solver` by
    :class:`~tflint_leaks.analysis.program.Program`)."""

    def __init__(self, project: ProjectIndex) -> None:
        self.project = project
        self._locals: dict[int, dict[str, list[Assign]]] = {}
        self._stored: dict[int, dict[str, list[Expr]]] = {}
        self._attribute_values: dict[tuple[str, str, str], Placed] = {}
        self._class_places: dict[tuple[str, str], dict[str, Placed]] = {}
        self._calls_named: dict[str, list[SiteId]] | None = None
        #: :meth:`_components`'s, built once.
        self._cycles: dict[tuple[str, str], int] | None = None
        self._flag_table: dict[str, list[tuple[Expr, Where]]] | None = None
        self._argument_calls: dict[str, list[tuple[Expr, library.Evaluate]]] = {}
        self._handed: tuple[dict[str, set[str]], frozenset[str]] | None = None
        self._outside: dict[str, list[tuple[Assign, Where]]] | None = None
        #: Per module: its ``g.name = ...`` stores on its globals (:meth:`global_stores`).
        self._global_stores: dict[str, dict[str, list[tuple[Assign, Where]]]] = {}
        #: The parameters each function's returns may be computed from (by path, qualname).
        self._returned: dict[tuple[str, str], tuple[str, ...]] = {}

    def equations(self) -> dict[str, tuple[Any, Value | tuple[()] | frozenset[str]]]:
        return {
            "local": (self._local, BOTTOM),
            "global": (self._global, BOTTOM),
            "global attribute": (self._global_attribute, BOTTOM),
            "attribute": (self._attribute, BOTTOM),
            "param": (self._param, BOTTOM),
            "star": (self._star, BOTTOM),
            "returns": (self._returns, BOTTOM),
            "callers": (self._callers, ()),
            "dead": (self._dead, ()),
            "state switches": (self._state_switches, frozenset()),
            "called parameters": (self._called_parameters, frozenset()),
        }

    # -- what the equations read -------------------------------------------------------------

    def module(self, path: str) -> ModuleIndex:
        found = self.project.module_at(path)
        assert found is not None, path
        return found

    def where_of(self, module: ModuleIndex, qualname: str) -> Where:
        """The place of a function (or of the module's own code, ``qualname`` "")."""
        if not qualname:
            return Where(module)
        function = module.functions[qualname]
        owner = qualname.partition(".")[0] if "." in qualname else None
        return Where(module, function, module.classes.get(owner) if owner else None)

    def klass(self, ref: ClassRef) -> tuple[ModuleIndex, ClassFacts] | None:
        module = self.project.module_at(ref.path)
        if module is None or ref.name not in module.classes:
            return None
        return module, module.classes[ref.name]

    def assigned(self, where: Where) -> dict[str, list[Assign]]:
        """A body's assignments by target (names, and ``self.x``)."""
        key = id(where.body)  # the body lives as long as the project index
        found = self._locals.get(key)
        if found is None:
            found = self._locals[key] = {}
            for assign in where.body.assigns:
                found.setdefault(assign.target, []).append(assign)
        return found

    def _stores(self, where: Where) -> dict[str, list[Expr]]:
        """What a body puts into the containers it names (``agents.append(agent)``, ``X[k] =
        v`` as an :data:`ITEM_STORE`), by the container's name."""
        key = id(where.body)
        found = self._stored.get(key)
        if found is None:
            found = self._stored[key] = {}
            for site in where.body.calls:
                method = site.call.method
                if method is None or method[0].op is not Op.REF:
                    continue
                receiver = method[0].text
                if method[1] in STORE_METHODS and site.call.positional:
                    value = site.call.positional[-1]
                    if method[1] == "extend":
                        value = Expr(Op.ITERATE, "", (value,))
                    found.setdefault(receiver, []).append(value)
                elif method[1] in DICT_CHANGES:
                    found.setdefault(receiver, []).extend(_dict_change(site.call, method[1]))
            for container, item, value in where.body.item_stores:
                found.setdefault(container, []).append(Expr(Op.OTHER, ITEM_STORE, (item, value)))
        return found

    def cone(self, module: ModuleIndex, klass: ClassFacts) -> Value:
        """An instance of ``klass`` or of one of its project subclasses (``self``)."""
        kind = Kind.MODEL if self.project.is_model_class(module, klass) else Kind.INSTANCE
        return atom(kind, ref=ClassRef(module.path, klass.name), cone=True)

    def instance(self, ref: ClassRef, *, fresh: bool) -> Value:
        """A new instance of a project class (a model if it derives from one)."""
        found = self.klass(ref)
        model = found is not None and self.project.is_model_class(*found)
        return atom(Kind.MODEL if model else Kind.INSTANCE, ref=ref, flag=fresh)

    def classes(self, found: Atom) -> list[ClassRef]:
        """The project classes an instance atom may be of (a cone: the class and its
        subclasses)."""
        ref = found.ref
        if not isinstance(ref, ClassRef):
            return []
        if not found.cone:
            return [ref]
        definition = self.klass(ref)
        subclasses = self.project.subclasses(*definition) if definition is not None else ()
        if len(subclasses) > MAX_CONE:
            return [ref]  # a framework's base class: its own methods and attributes
        return [ref, *(ClassRef(m.path, k.name) for m, k in subclasses)]

    def _overrides(
        self,
        ref: ClassRef,
        method: FunctionRef,
        name: str,
        running: Callable[[ClassRef], bool],
    ) -> list[Target]:
        """What ``self.name()`` in a method of ``ref`` runs on an instance of ``ref`` or of any
        of its subclasses, more than a cone holds (:data:`MAX_CONE`), when the method it
        finds, ``method``, is abstract: the overrides of the subclasses that run the calling
        method (``running``), each once (MetaLearning-TF2.0's ``BaseModel`` and its thirty
        models: a template method); none when it is not abstract or they are too many. Only
        ``self`` in the class's own method: a call on an agent handed in (``agent.learn()``
        of yarll's thirty agents) would stand for every agent at once, TensorFlow 1's among
        TensorFlow 2's."""
        module = self.module(method.path)
        if not module.functions[method.qualname].abstract:
            return []
        definition = self.klass(ref)
        assert definition is not None
        found: dict[FunctionRef, Target] = {}
        for owner_module, owner in self.project.subclasses(*definition):
            klass = ClassRef(owner_module.path, owner.name)
            if not running(klass):
                continue
            override = self.method_of(klass, name)
            if override is not None and override != method and override not in found:
                found[override] = Target(TargetKind.FUNCTION, override, klass)
        return list(found.values()) if len(found) <= MAX_OVERRIDES else []

    def _running(self, each: Atom, where: Where) -> Callable[[ClassRef], bool] | None:
        """For ``self`` in a method of its own class (``each`` the cone of ``where``'s class),
        which of the cone's classes run that method on their instances: those that inherit
        it, and those whose override reaches it through ``super()``. A subclass that overrides
        ``train`` without calling ``super().train()`` never runs the base's ``train``, so
        ``self.sample_action()`` there is never its ``sample_action`` (Yishaiaz/DRL-A1-DQN-,
        set Z24 of stop 52). None where that does not apply."""
        function, klass = where.function, where.klass
        if not each.cone or function is None or klass is None:
            return None
        if each.ref != ClassRef(where.module.path, klass.name):
            return None
        owner, _, method = function.qualname.rpartition(".")
        if owner != klass.name:
            return None  # a function nested in a method
        current = FunctionRef(where.module.path, function.qualname)

        def runs(candidate: ClassRef) -> bool:
            definition = self.klass(candidate)
            if definition is None:
                return True
            for module, owner_class in self.project.mro(*definition):
                qualname = f"{owner_class.name}.{method}"
                found = module.functions.get(qualname)
                if found is None:
                    continue
                if FunctionRef(module.path, qualname) == current:
                    return True
                if not _calls_super(found, method):
                    return False
            return False

        return runs

    def method_of(self, ref: ClassRef, name: str, *, after: bool = False) -> FunctionRef | None:
        """The method ``name`` of a project class, through its method resolution order
        (after the class itself with ``after``, as ``super()`` looks)."""
        definition = self.klass(ref)
        if definition is None:
            return None
        order = self.project.mro(*definition)
        for module, owner in order[1:] if after else order:
            qualname = f"{owner.name}.{name}"
            if qualname in module.functions:
                return FunctionRef(module.path, qualname)
        return None

    # -- expressions ---------------------------------------------------------------------------

    def evaluate(self, expr: Expr, where: Where) -> Computation:
        """What ``expr`` may be, evaluated in ``where``."""
        op = expr.op
        if op is Op.REF:
            head, _, rest = expr.text.partition(".")
            if rest and head == SELF.text and where.given:
                attribute, _, tail = rest.partition(".")
                held = dict(where.given).get(f"{head}.{attribute}")
                if held is not None:  # what the instance the call runs on holds (given_for)
                    for name in tail.split(".") if tail else ():
                        held = yield from self.attribute_of(held, name, where.module)
                    return held
            value = yield from self._name(head, where)
            owner: Value | None = None
            names = rest.split(".") if rest else []
            last, target = self._stored_target(head, names, value, where)
            for index, name in enumerate(names, 1):
                enum = name == "value" and owner is not None and any(map(self._enum, owner.atoms))
                if not enum:  # ``Parameters.n_trials.value``: the literal the member is made of
                    owner, value = value, (yield from self.attribute_of(value, name, where.module))
                if index == last:
                    # What the module stores there, joined: a read may run before any store.
                    stored = yield ("global attribute", where.module.path, target)
                    value = join([value, stored])
            return value
        if op is Op.CALL:
            return (yield from self._call(expr, where))
        if op is Op.LITERAL:
            if expr.text == "number" and expr.number >= 0:
                return number({expr.number})
            text = string_text(expr)
            if text is not None:
                return strings((text,))
            return _LITERALS.get(expr.text, UNKNOWN)
        if op is Op.ATTR:
            base = yield from self.evaluate(expr.parts[0], where)
            return (yield from self.attribute_of(base, expr.text, where.module))
        if op is Op.ITEM:
            base = yield from self.evaluate(expr.parts[0], where)
            return _item(base, expr)
        if op is Op.DISPLAY:
            return (yield from self._display(expr, where))
        if op is Op.COMPREHENSION:
            return (yield from self._comprehension(expr, where))
        if op is Op.BINARY:
            left = yield from self.evaluate(expr.parts[0], where)
            right = yield from self.evaluate(expr.parts[1], where)
            return _binary(expr.text, left, right)
        if op is Op.UNARY:
            operand = yield from self.evaluate(expr.parts[0], where)
            return _unary(expr.text, operand)
        if op is Op.ITERATE:
            return library.elements((yield from self.evaluate(expr.parts[0], where)))
        if expr.text in {"if", "or", "and"}:
            return join((yield from self.evaluate_all(expr.parts, where)))
        if expr.text == "format":
            return concatenated((yield from self.evaluate_all(expr.parts, where)))
        if expr.text == ITEM_STORE:
            key, value = yield from self.evaluate_all(expr.parts, where)
            return atom(Kind.CONTAINER, element=key, mapped=value, ref=ITEM_STORE)
        if expr.text == "compare":
            return BOOL
        if expr.text == LAMBDA:
            if expr.keywords and expr.keywords[0] in where.module.functions:
                return atom(Kind.FUNCTION, ref=FunctionRef(where.module.path, expr.keywords[0]))
            return SOME_OBJECT  # a function, whatever it does: ``if parse is None:`` is False
        return UNKNOWN

    def evaluate_all(
        self, exprs: Iterable[Expr], where: Where
    ) -> Generator[Query, Any, list[Value]]:
        """The values of several expressions."""
        found: list[Value] = []
        for expr in exprs:
            found.append((yield from self.evaluate(expr, where)))
        return found

    def _name(self, name: str, where: Where) -> Computation:
        for bound, value in where.bound:
            if bound == name:
                return value
        if name in where.shadowed:
            return UNKNOWN
        function = where.function
        module = where.module
        while function is not None and name not in function.body.globals:
            if name in self.assigned(where):
                query = ("local", module.path, function.qualname, name)
                local: Value = yield (*query, where.given) if where.given else query
                return local
            for parameter_name, given in where.given:
                if parameter_name == name:
                    return given.stale()
            if name in function.params:
                parameter: Value = yield ("param", module.path, function.qualname, name)
                return parameter.stale()
            if name == function.star:
                spread: Value = yield ("star", module.path, function.qualname)
                return spread.stale()
            if name == "self" and function.is_method and where.klass is not None:
                return self.cone(module, where.klass)
            nested = f"{function.qualname}{LOCALS}{name}"
            if nested in module.functions:
                return atom(Kind.FUNCTION, ref=FunctionRef(module.path, nested))
            # A function defined inside another reads what it does not bind from the one
            # around it (a closure), then from the module.
            outer, found, _ = function.qualname.rpartition(LOCALS)
            if not found:
                break
            where = self.where_of(module, outer)
            function = where.function
        global_value: Value = yield ("global", module.path, name)
        return global_value.stale()

    def attribute_of(self, value: Value, name: str, reader: ModuleIndex) -> Computation:
        """``value.name``, read in the module ``reader`` (a flag's default is that of the
        programs it runs in)."""
        if value.top:
            return TOP
        found: list[Value] = []
        for each in value.atoms:
            kind = each.kind
            if kind in {Kind.INSTANCE, Kind.MODEL, Kind.CLASS} and isinstance(each.ref, ClassRef):
                having = [ref for ref in self.classes(each) if self.has_attribute(ref, name)]
                if not having:
                    # A project model class that does not define it: Keras' own method.
                    inherited = kind is Kind.MODEL and name in keras.PREDICT_METHODS
                    found.append(library.model_method(name) if inherited else UNKNOWN)
                for ref in having:
                    attribute = yield ("attribute", ref.path, ref.name, name)
                    found.append(attribute.stale())
            elif kind is Kind.MODULE:
                found.append((yield from self._module_attribute(str(each.ref), name)))
            elif kind is Kind.LIBRARY and each.ref in library.FLAG_VALUES:
                found.append((yield from self._flag(name, reader)))
            else:
                found.append(library.attribute(each, name))
        return join(found)

    def _flag(self, name: str, reader: ModuleIndex) -> Computation:
        """``FLAGS.name`` (absl's, or ``tf.app.flags``) read in ``reader``: the default of
        every ``DEFINE_*("name", default, ...)`` of the programs ``reader`` runs in (:meth:`~.
        project.ProjectIndex.program_of`; two scripts each defining the flag are two programs),
        joined (the program as it runs with its defaults); unknown when none defines it."""
        if self._flag_table is None:
            table: dict[str, list[tuple[Expr, Where]]] = {}
            defines = self.method_calls(self.bodies(), lambda name: name.startswith("DEFINE_"))
            for call, where in defines:
                flag = string_text(call.positional[0]) if call.positional else None
                if flag:
                    table.setdefault(flag, []).append((call, where))
            self._flag_table = table
        found: list[Value] = []
        program = self.project.program_of(reader)
        for call, where in self._flag_table.get(name, ()):
            if where.module.path not in program:
                continue
            default = call.argument(1, "default")
            found.append(UNKNOWN if default is None else (yield from self.evaluate(default, where)))
        return join(found) if found else UNKNOWN

    def _module_attribute(self, path: str, name: str) -> Computation:
        """``module.name``: a global of the module, or a submodule of a package."""
        module = self.module(path)
        submodule = self.project.find_module(f"{module.module}.{name}", module)
        if submodule is not None and name not in self.project.bound_names(module):
            return atom(Kind.MODULE, ref=submodule.path)
        found: Value = yield ("global", path, name)
        return found

    def _display(self, expr: Expr, where: Where) -> Computation:
        values = yield from self.evaluate_all(expr.parts, where)
        length = frozenset({expr.number}) if expr.number >= 0 else None
        if expr.text == "dict":
            keys, mapped = values[0::2], values[1::2]
            texts = [string_text(key) for key in expr.parts[0::2]]
            keyed = None
            if None not in texts and (expr.number >= 0 or not texts):
                # the entries kept, by their string keys (a long dict keeps its first ones; a
                # key not among them is looked up as any of its values)
                by_key = {str(text): value for text, value in zip(texts, mapped, strict=True)}
                keyed = tuple(sorted(by_key.items()))  # the last of a key given twice
            if expr.number != len(texts):  # ``**other`` in it, or more entries than are kept
                keys, mapped = [*keys, UNKNOWN], [*mapped, UNKNOWN]
                keyed = keyed if expr.number >= 0 else None
            return container(length=length, element=join(keys), mapped=join(mapped), keyed=keyed)
        complete = expr.number == len(values)
        items = tuple(values) if complete and expr.text != "set" else None
        return container(length=length, element=join(values), items=items)

    def _comprehension(self, expr: Expr, where: Where) -> Computation:
        names = expr.keywords
        elements_count = 2 if expr.text == "dict" else 1
        iterables = expr.parts[elements_count:]
        bound = list(where.bound)
        lengths: frozenset[int] | None = frozenset({1})
        most: int | None = 1
        structural = True  # over a model's variables only: as many items as it has, at most
        for clause, iterable in zip(names, iterables, strict=True):
            inner = where._replace(bound=tuple(bound))
            value = yield from self.evaluate(iterable, inner)
            structural = structural and value.structural
            lengths = arithmetic("*", lengths, value.lengths)
            most = None if most is None or value.bound is None else most * value.bound
            item = library.elements(value)
            bound[:0] = _bind(clause, item)
        if expr.number:
            lengths = None  # an ``if`` keeps some of them
        inner = where._replace(bound=tuple(bound))
        element = yield from self.evaluate(expr.parts[0], inner)
        if expr.text == "generator":
            return library.iterator(element, lengths, most, generator=True, structural=structural)
        if expr.text == "dict":
            mapped = yield from self.evaluate(expr.parts[1], inner)
            return container(
                length=lengths, element=element, mapped=mapped, bound=most, structural=structural
            )
        return container(length=lengths, element=element, bound=most, structural=structural)

    # -- calls -------------------------------------------------------------------------------

    def targets(self, call: Expr, where: Where) -> Generator[Query, Any, tuple[Target, ...]]:
        """What a call may run."""
        found: list[Target] = []
        method = call.method
        if method is not None:
            receiver, name = method
            value = yield from self.evaluate(receiver, where)
            if value.top:
                return (_UNKNOWN_TARGET,)
            for each in value.atoms:
                made = yield from self._method_targets(each, name, where)
                if each.kind in {Kind.INSTANCE, Kind.MODEL}:
                    made = [t for t in made if self._binds(t, call, bound=True)]
                found.extend(made)
        else:
            value = yield from self.evaluate(call.func, where)
            if value.top:
                return (_UNKNOWN_TARGET,)
            for each in value.atoms:
                made = self._call_targets(each)
                if each.kind is Kind.CLASS or (
                    each.kind is Kind.FUNCTION
                    and isinstance(each.ref, FunctionRef)
                    and "." not in each.ref.qualname.rpartition(LOCALS)[2]
                ):
                    made = [t for t in made if self._binds(t, call, bound=each.kind is Kind.CLASS)]
                found.extend(made)
        return tuple(dict.fromkeys(found))

    def _binds(self, target: Target, call: Expr, *, bound: bool) -> bool:
        """A project function a call may run binds the call's arguments: a call that leaves
        out a required parameter raises ``TypeError`` and runs nothing
        (:meth:`~tflint_leaks.analysis.index.FunctionFacts.binds`)."""
        ref = target.ref
        if target.kind not in {TargetKind.FUNCTION, TargetKind.CONSTRUCTOR} or ref is None:
            return True
        function = self.module(ref.path).functions.get(ref.qualname)
        if function is None or function.is_property:
            return True
        return function.binds(call, bound=bound and function.is_method)

    def _call_targets(self, each: Atom) -> list[Target]:
        kind, ref = each.kind, each.ref
        if kind is Kind.FUNCTION and isinstance(ref, FunctionRef):
            owner = ref.qualname.partition(".")[0] if "." in ref.qualname else None
            return [Target(TargetKind.FUNCTION, ref, ClassRef(ref.path, owner) if owner else None)]
        if kind is Kind.CLASS and isinstance(ref, ClassRef):
            return [Target(TargetKind.CONSTRUCTOR, self.method_of(ref, "__init__"), ref)]
        if kind is Kind.LIBRARY:
            return [Target(TargetKind.LIBRARY, name=canonical(str(ref)))]
        if kind is Kind.INSTANCE and isinstance(ref, ClassRef):
            return [
                Target(TargetKind.FUNCTION, method, klass)
                if (method := self.method_of(klass, "__call__")) is not None
                else Target(TargetKind.VALUE, receiver=each)
                for klass in self.classes(each)
            ]
        if kind is Kind.UNKNOWN:
            return [_UNKNOWN_TARGET]
        return [Target(TargetKind.VALUE, receiver=each)]

    def _method_targets(
        self, each: Atom, name: str, where: Where
    ) -> Generator[Query, Any, list[Target]]:
        kind, ref = each.kind, each.ref
        if kind is Kind.MODULE:
            value = yield from self._module_attribute(str(ref), name)
            return [t for found in value.atoms for t in self._call_targets(found)]
        if kind is Kind.LIBRARY:
            return [Target(TargetKind.LIBRARY, name=canonical(f"{ref}.{name}"))]
        if kind is Kind.SUPER and isinstance(ref, ClassRef):
            method = self.method_of(ref, name, after=True)
            if method is not None:
                return [Target(TargetKind.FUNCTION, method, ref)]
            return [Target(TargetKind.METHOD, name=name, receiver=each)]
        if kind in {Kind.INSTANCE, Kind.MODEL, Kind.CLASS} and isinstance(ref, ClassRef):
            found: list[Target] = []
            classes = self.classes(each)
            running = self._running(each, where)
            if running is not None:
                classes = [klass for klass in classes if running(klass)]
            for klass in classes:
                method = self.method_of(klass, name)
                if method is not None and running is not None and len(classes) == 1:
                    overrides = self._overrides(klass, method, name, running)
                    if overrides:
                        found.extend(overrides)  # ``self.name()`` on an abstract ``name``
                        continue
                if method is not None:
                    found.append(Target(TargetKind.FUNCTION, method, klass))
                    continue
                attribute = yield ("attribute", klass.path, klass.name, name)
                callable_atoms = [a for a in attribute.atoms if a.kind is not Kind.UNKNOWN]
                if callable_atoms:
                    found.extend(t for a in callable_atoms for t in self._call_targets(a))
                elif kind is Kind.INSTANCE:
                    found.append(_UNKNOWN_TARGET)
                else:
                    found.append(Target(TargetKind.METHOD, name=name, receiver=each))
            return found
        if kind is Kind.UNKNOWN and ref != library.ARGUMENT_PARSER:
            return [_UNKNOWN_TARGET]
        return [Target(TargetKind.METHOD, name=name, receiver=each)]

    def _call(self, call: Expr, where: Where) -> Computation:
        targets = yield from self.targets(call, where)
        if self.makes_model(call, targets, where):
            return atom(Kind.MODEL, flag=True)
        values: list[Value] = []
        for target in targets:
            values.append((yield from self.target_value(target, call, where)))
        made = join(values)
        if call in where.body.compiled_calls and _unknown_object(made) and _named(call, where):
            # ``model = FPN(...)`` then ``model.compile(optimizer=..., loss=...)``: what a
            # factory the project cannot read makes is a Keras model when the body compiles
            # it; new each time when the factory is named as a class is (``FPN``,
            # ``beit.BeitLargePatch16``: a constructor, or an application's builder as
            # ``keras.applications.ResNet50`` is), else not known to be new (``get_model()``
            # may hand out one it keeps). Not a method of an object of unknown kind
            # (``cls.from_config(...)`` of a class with its own ``predict``).
            return atom(Kind.MODEL, flag=_class_like(call.func.text))
        return made

    def makes_model(self, call: Expr, targets: tuple[Target, ...], where: Where) -> bool:
        """``call`` calls a callable held in a variable, an attribute of ``self`` or a
        container (a factory the caller passes in: ``build_fn(...)``, ``self.hypermodel(...)``,
        ``builders[name](...)``; not a method of an object of unknown kind,
        ``cls.from_config(...)``, nor a name nothing binds), of which the project shows
        nothing, and its body uses what it returns as a Keras model (:attr:`~tflint_leaks.
        analysis.facts.Body.model_calls`): it makes a new one, as a model factory does."""
        if call not in where.body.model_calls:  # most bodies have none: asked first
            return False
        if not all(t.kind is TargetKind.UNKNOWN for t in targets):
            return False
        func = call.func
        if func.op is not Op.REF:
            return func.op is Op.ITEM
        head, _, rest = func.text.partition(".")
        if rest:
            return head == SELF.text and "." not in rest
        return self._variable(head, where)

    def _variable(self, name: str, where: Where) -> bool:
        """``name`` is a variable of the code at ``where``: a parameter of its function, or
        bound by it or by the module's own code."""
        function = where.function
        if function is not None and (
            name in function.params or name == function.star or name in self.assigned(where)
        ):
            return True
        return any(a.target == name for a in where.module.body.assigns)

    def target_value(self, target: Target, call: Expr, where: Where) -> Computation:
        """What running ``target`` for ``call`` returns."""
        kind = target.kind
        if kind is TargetKind.FUNCTION and target.ref is not None:
            query: Query = ("returns", target.ref.path, target.ref.qualname)
            returned = yield query
            if not where.given and _unstructured(returned):
                structure = yield from self._structure_passed(target.ref, call, where)
                if structure:
                    returned = yield (*query, structure)
            return _made_in(returned, target.ref.qualname)
        if kind is TargetKind.CONSTRUCTOR and target.klass is not None:
            return self.instance(target.klass, fresh=True)

        def evaluate(expr: Expr) -> Computation:
            return self.evaluate(expr, where)

        if kind is TargetKind.LIBRARY:
            name = target.name
            if name.startswith("builtins."):
                owner = where.klass
                klass = ClassRef(where.module.path, owner.name) if owner is not None else None
                return (yield from library.builtin(name[9:], call, evaluate, klass))
            if name == IMPORT_MODULE and call.positional:
                return self._imported_by_name((yield from evaluate(call.positional[0])), where)
            return (yield from library.library(name, call, evaluate))
        receiver = target.receiver
        if kind is TargetKind.METHOD and receiver is not None:
            if receiver.kind is Kind.CLASS and target.name == keras.FROM_CONFIG:
                assert isinstance(receiver.ref, ClassRef)
                value = self.instance(receiver.ref, fresh=True)
                return value if value.kind is Kind.MODEL else UNKNOWN
            if receiver.kind is Kind.DATASET and target.name == "take" and call.positional:
                # ``ds.take(n)`` gives at most ``n`` elements (at most the dataset's own).
                count = (yield from self.evaluate(call.positional[0], where)).ints
                taken = max(count) if count else None
                most = receiver.most
                if taken is not None and most is not None:
                    taken = min(taken, most)
                bound = taken if taken is not None else most
                return atom(Kind.DATASET, bound=bound, flag=receiver.flag)
            if receiver.kind is Kind.DATASET and target.name in keras.PADDED_BATCHES:
                return atom(Kind.DATASET, flag=keras.pads_to_each_batch(target.name, call))
            if receiver.ref == library.ARGUMENT_PARSER and target.name == "parse_args":
                return (yield from library.command_line(self._arguments(where.module)))
            if receiver.kind is Kind.STR and target.name == "split" and len(call.positional) == 1:
                separator = yield from self.evaluate(call.positional[0], where)
                return library.split(receiver, separator)
            return library.method(receiver, target.name)
        if kind is TargetKind.VALUE and receiver is not None:
            if receiver.kind in {Kind.TF_FUNCTION, Kind.MODEL}:
                return TENSOR
            if receiver.kind is Kind.INSTANCE and isinstance(receiver.ref, ClassRef):
                definition = self.klass(receiver.ref)
                keras_layer = definition is not None and any(
                    k.is_keras_subclass for _, k in self.project.mro(*definition)
                )
                return TENSOR if keras_layer else UNKNOWN
        return UNKNOWN

    # -- the equations -------------------------------------------------------------------------

    def _local(self, query: Query) -> Computation:
        path, qualname, name = query[1:4]
        where = self.where_of(self.module(path), qualname)
        assigns = self.assigned(where)[name]
        where, dead = yield from self.ruled_out(where, query[4] if len(query) > 4 else None)
        if dead:
            assigns = [a for a in assigns if a.span is None or not within(a.span, dead)]
        computed = [a for a in assigns if a.span is None or not within(a.span, where.body.restores)]
        if computed:
            assigns = computed  # a disk cache restores what its other block computed
        values = yield from self.evaluate_all(_values(assigns), where)
        function = where.function
        if function is not None and name in function.params and name not in where.body.rebound:
            # A parameter the body also rebinds (``if isinstance(texts, str): texts =
            # [texts]``) may still hold what it was given, unless its top level rebinds it.
            given = dict(where.given).get(name)
            if given is None:
                given = yield ("param", path, qualname, name)
            for sort in dict(where.body.narrowed).get(name, ()):
                for kind in _SORTS[sort]:
                    given = given.without(kind)
            values.append(given.stale())
        stored = yield from self.evaluate_all(self._stores(where).get(name, ()), where)
        counting = yield from self._counted_length(where, name, assigns, len(stored))
        return _filled(join(values), stored, counting)

    def _counted_length(
        self, where: Where, name: str, assigns: list[Assign], stores: int
    ) -> Generator[Query, Any, Counting | None]:
        """The length of a list that starts empty and gains one item per iteration of one
        loop (``folds = []`` then ``for s in splits: folds.append(...)``, :class:`~tflint_leaks.
        analysis.facts.Counted`): the loop's trip count, when the body assigns the name only
        that once, before the loop and outside any loop, and puts nothing else into it; at
        most the trip count when an iteration may add nothing (``if e not in out:
        out.append(e)``); a model's or graph's variables, iterated, make a list of as many of
        them as it has at most: structure (cleverhans's ``ordered_union`` of two collections)."""
        counted = [c for c in where.body.counted if c.container == name]
        if not counted and len(assigns) == 1:
            return _appended_once_each(where.body, name, assigns[0], stores)
        if stores != 1 or len(counted) != 1 or len(assigns) != 1:
            return None
        (assign,), (append,) = assigns, counted
        if (
            _displayed_list(where.body, assign) != 0
            or assign.span is None
            or not assign.span < append.loop
            or (append.block is not None and not append.block.contains(assign.span))
        ):
            return None
        iterable = yield from self.evaluate(append.iterable, where)
        if append.exact:
            return Counting(iterable.lengths, iterable.bound, iterable.structural)
        return Counting(None, iterable.bound, iterable.structural)

    def _global(self, query: Query) -> Computation:
        _, path, name = query
        module = self.module(path)
        where = Where(module)
        placed = self.global_assignments(module, name)
        if placed:
            values: list[Value] = []
            for assign, place in placed:
                values.append((yield from self.evaluate(assign.value, place)))
            stored = yield from self.evaluate_all(self._stores(where).get(name, ()), where)
            assigns = [assign for assign, _ in placed]
            counting = yield from self._counted_length(where, name, assigns, len(stored))
            if counting is not None and any(
                name in self._stores(self.where_of(module, q)) for q in module.functions
            ):
                counting = None  # a function appends to it too
            return _filled(join(values), stored, counting)
        annotation = next((a.value for a in module.body.annotations if a.target == name), None)
        if annotation is not None:
            return self._annotation(annotation, where)
        if name in module.tf_function_names:
            return atom(Kind.TF_FUNCTION)
        if name in module.functions:
            return atom(Kind.FUNCTION, ref=FunctionRef(path, name))
        if name in module.classes:
            return atom(Kind.CLASS, ref=ClassRef(path, name))
        target = module.imports.get(name)
        if target is not None:
            return (yield from self._imported(target, module))
        if name in BUILTINS:
            return atom(Kind.LIBRARY, ref=f"builtins.{name}")
        return UNKNOWN

    def _imported(self, target: str, importer: ModuleIndex) -> Computation:
        """What an import binds: a project module, a global of one, or a library name."""
        parts = target.split(".")
        for split in range(len(parts), 0, -1):
            module = self.project.find_module(".".join(parts[:split]), importer)
            if module is None or (module.path == importer.path and split == len(parts)):
                continue
            if split == len(parts) > 1:
                # ``from pkg.sac import sac`` where ``pkg/sac/__init__.py`` binds ``sac`` (``from
                # pkg.sac.sac import sac``): the package's name, as Python's attribute lookup
                # finds it, not its submodule of the same name.
                package = self.project.find_module(".".join(parts[:-1]), importer)
                if (
                    package is not None
                    and package.is_package
                    and package.path != importer.path
                    and package.imports.get(parts[-1]) != target
                    and parts[-1] in self.project.bound_names(package)
                ):
                    bound: Value = yield ("global", package.path, parts[-1])
                    return bound
            value = atom(Kind.MODULE, ref=module.path)
            for name in parts[split:]:
                value = yield from self.attribute_of(value, name, importer)
            return value
        return atom(Kind.LIBRARY, ref=canonical(target))

    def _arguments(self, module: ModuleIndex) -> list[tuple[Expr, library.Evaluate]]:
        """Every ``add_argument`` call of ``module`` (its own code and its functions), each
        with the evaluation of its place: a parser's options, wherever they are added."""
        found = self._argument_calls.get(module.path)
        if found is None:
            found = self._argument_calls[module.path] = [
                (call, functools.partial(self.evaluate, where=where))
                for call, where in self.method_calls(
                    self.module_bodies(module), lambda name: name == "add_argument"
                )
            ]
        return found

    def _imported_by_name(self, name: Value, where: Where) -> Value:
        """``importlib.import_module(name)``: the project modules ``name``'s texts name (read
        from the index, never imported); unknown when one of them names none."""
        texts = text_of(name)
        if not texts:
            return UNKNOWN
        found: list[Value] = []
        for text in sorted(texts):
            module = self.project.find_module(text, where.module)
            if module is None:
                return UNKNOWN
            found.append(atom(Kind.MODULE, ref=module.path))
        return join(found)

    def _annotation(self, annotation: Expr, where: Where) -> Value:
        """The value an annotation names: a Keras model class, a ``tf.data`` dataset, a
        tensor, a project class, a builtin."""
        if annotation.op is not Op.REF:
            return UNKNOWN
        qualified = resolve_dotted(annotation.text, where.module.imports)
        if qualified in keras.MODEL_CLASSES:
            return atom(Kind.MODEL)
        if qualified in _LIBRARY_ANNOTATIONS:
            return _LIBRARY_ANNOTATIONS[qualified]
        if "." not in annotation.text and annotation.text in _ANNOTATIONS:
            return _ANNOTATIONS[annotation.text]
        module = where.module
        definition = (
            self.project.local(module, annotation.text)
            if annotation.text.partition(".")[0] in module.imports or "." not in annotation.text
            else None
        )
        if definition is None or definition.klass is None or definition.function is not None:
            return UNKNOWN
        return self.cone(definition.module, definition.klass)

    def _assignments(self, ref: ClassRef, name: str) -> Placed:
        """Every assignment of the attribute ``name`` of an instance of a project class (in the
        class bodies and ``self.name = ...`` in every method, through the MRO), and every value
        those methods put into it (``self.name.append(...)``)."""
        key = (ref.path, ref.name, name)
        found = self._attribute_values.get(key)
        if found is not None:
            return found
        found = self._attribute_values[key] = ([], [])
        definition = self.klass(ref)
        if definition is None:
            return found
        assigned, stored = found
        for owner_module, owner in self.project.mro(*definition):
            own = self._class_attributes(owner_module, owner).get(name)
            if own is not None:
                assigned.extend(own[0])
                stored.extend(own[1])
        return found

    def _class_attributes(self, module: ModuleIndex, owner: ClassFacts) -> dict[str, Placed]:
        """:meth:`_assignments` of one class alone (not its bases), for every attribute at
        once: its body's assignments, then its methods' ``self.name = ...`` and what they put
        into ``self.name``, in the order of its methods. Built once per class: a class's
        attributes are asked for one by one, and a framework's base class has hundreds of
        methods to read for each."""
        key = (module.path, owner.name)
        found = self._class_places.get(key)
        if found is not None:
            return found
        found = self._class_places[key] = {}
        in_body = Where(module, klass=owner)
        for target, assigns in self.assigned(in_body).items():
            found.setdefault(target, ([], []))[0].extend((a, in_body) for a in assigns)
        for method_name in owner.methods:
            function = module.functions.get(f"{owner.name}.{method_name}")
            if function is None:
                continue
            inside = Where(module, function, owner)
            for target, assigns in self.assigned(inside).items():
                if target.startswith("self."):
                    found.setdefault(target[5:], ([], []))[0].extend((a, inside) for a in assigns)
            for target, values in self._stores(inside).items():
                if target.startswith("self."):
                    found.setdefault(target[5:], ([], []))[1].extend((v, inside) for v in values)
        return found

    def attribute_assignments(self, ref: ClassRef, name: str) -> list[tuple[Assign, Where]]:
        """Where the attribute ``name`` of an instance of a project class is assigned by the
        class itself (its bodies and its methods' ``self.name = ...``, through the MRO)."""
        return self._assignments(ref, name)[0]

    def global_assignments(self, module: ModuleIndex, name: str) -> list[tuple[Assign, Where]]:
        """Where a module's global ``name`` is assigned: by the module's own code, and by its
        functions that declare it ``global``."""
        found = [(a, Where(module)) for a in self.assigned(Where(module)).get(name, ())]
        for qualname, function in module.functions.items():
            if name in function.body.globals:
                where = self.where_of(module, qualname)
                found.extend((a, where) for a in self.assigned(where).get(name, ()))
        return found

    def global_stores(self, module: ModuleIndex) -> dict[str, list[tuple[Assign, Where]]]:
        """A module's stores to attributes of its globals (``app.model = ...``,
        ``app.state.model = ...``) by target, from every body of the module where the head
        name is the global; built once per module."""
        found = self._global_stores.get(module.path)
        if found is None:
            found = {}
            for where in self.module_bodies(module):
                for assign in where.body.assigns:
                    head, dot, _ = assign.target.partition(".")
                    if dot and head != "self" and self._reads_global(head, where):
                        found.setdefault(assign.target, []).append((assign, where))
            self._global_stores[module.path] = found
        return found

    def _reads_global(self, name: str, where: Where) -> bool:
        """``name`` in ``where`` is the module's global of that name: assigned at the
        module's top level, and not bound by the function (or a function around it)."""
        if name in where.shadowed or any(bound == name for bound, _ in where.bound):
            return False
        if not any(a.target == name for a in where.module.body.assigns):
            return False
        function = where.function
        if function is None or name in function.body.globals:
            return True
        qualname = function.qualname
        while True:
            function = where.module.functions[qualname]
            if name in function.params or name == function.star:
                return False
            if any(a.target == name for a in function.body.assigns):
                return False
            qualname, found, _ = qualname.rpartition(LOCALS)
            if not found:
                return True

    def _stored_target(
        self, head: str, names: list[str], value: Value, where: Where
    ) -> tuple[int, str]:
        """For ``head.names...`` read in ``where``, where ``head`` is a global of library code
        (not a project instance) the module stores attributes on (``app.model = load_model(
        ...)`` in a route): how many of ``names`` lead to the longest such stored attribute,
        and its target (``app.model``); ``(0, "")`` when none does."""
        stores = self.global_stores(where.module) if names else {}
        if not stores or value.top or any(isinstance(a.ref, ClassRef) for a in value.atoms):
            return 0, ""
        for last in range(len(names), 0, -1):
            target = ".".join([head, *names[:last]])
            if target in stores:
                return (last, target) if self._reads_global(head, where) else (0, "")
        return 0, ""

    def _global_attribute(self, query: Query) -> Computation:
        """What the module's code stores to ``g.name`` of a global ``g`` (joined: any of
        them may have run before a read)."""
        _, path, target = query
        placed = self.global_stores(self.module(path)).get(target, [])
        values: list[Value] = []
        for assign, where in placed:
            values.append((yield from self.evaluate(assign.value, where)))
        return join(values)

    def outside_stores(self) -> dict[str, list[tuple[Assign, Where]]]:
        """Every ``x.name = ...`` of the project whose receiver is not ``self`` itself, by
        ``name``; built once."""
        if self._outside is None:
            table: dict[str, list[tuple[Assign, Where]]] = {}
            for where in self.bodies():
                for assign in where.body.assigns:
                    receiver, _, name = assign.target.rpartition(".")
                    if receiver and receiver != "self":
                        table.setdefault(name, []).append((assign, where))
            self._outside = table
        return self._outside

    def instance_state(self, expr: Expr, where: Where) -> Computation:
        """``self.name`` read in a method, as a test's operand: what every assignment of the
        attribute in the classes ``self`` may be of makes it (``self.norm_grads``, set only
        from ``__init__``'s ``norm_grads=False`` by every construction), when no code outside
        them assigns an attribute so named and the class is not one a distributed package
        offers (:meth:`~.project.ProjectIndex.distributed`); its item at a literal key likewise
        (``self.params["eig_type"]``, of the dictionaries every construction passes); a
        literal (what the state is compared with) is itself; UNKNOWN for anything else."""
        if expr.op is Op.LITERAL:
            return (yield from self.evaluate(expr, where))
        function = where.function
        read = state_read(expr)
        name = read.text.partition(".")[2] if read is not None else ""
        if (
            not name
            or function is None
            or not function.is_method
            or where.klass is None
            or name in self.outside_stores()
            or self.project.distributed(where.module)  # users build it as they please
        ):
            return UNKNOWN
        return (yield from self.evaluate(expr, where))

    def has_attribute(self, ref: ClassRef, name: str) -> bool:
        """Whether instances of a project class have ``name`` as far as the code shows: it is
        assigned, or it is a method or a ``tf.function`` of the class (through its MRO)."""
        if self._assignments(ref, name)[0]:
            return True
        definition = self.klass(ref)
        return definition is not None and (
            self.method_of(ref, name) is not None
            or name in self.project.class_tf_functions(*definition)
            or self._set_by_keras(ref, name)
        )

    def _attribute(self, query: Query) -> Computation:
        _, path, class_name, name = query
        ref = ClassRef(path, class_name)
        assigned, stored = self._assignments(ref, name)
        if assigned:
            values: list[Value] = []
            for assign, where in assigned:
                values.append((yield from self.evaluate(assign.value, where)))
            items: list[Value] = []
            for value, where in stored:
                items.append((yield from self.evaluate(value, where)))
            return _filled(join(values), items)
        method = self.method_of(ref, name)
        if method is not None:
            if self.module(method.path).functions[method.qualname].is_property:
                returned: Value = yield ("returns", method.path, method.qualname)
                return returned  # read as an attribute: what the property returns
            return atom(Kind.FUNCTION, ref=method)
        definition = self.klass(ref)
        if definition is not None and name in self.project.class_tf_functions(*definition):
            return atom(Kind.TF_FUNCTION)
        if self._set_by_keras(ref, name):
            return atom(Kind.MODEL)
        return UNKNOWN

    def _set_by_keras(self, ref: ClassRef, name: str) -> bool:
        """``name`` is a Keras callback's ``model``: the model being trained, which Keras sets
        (``Callback.set_model``) before ``fit`` calls any hook."""
        definition = self.klass(ref)
        return (
            name == "model"
            and definition is not None
            and any(keras.is_callback_class(k.bases) for _, k in self.project.mro(*definition))
        )

    def _returns(self, query: Query) -> Computation:
        path, qualname = query[1:3]
        where = self.where_of(self.module(path), qualname)
        if len(query) > 3:
            where = where._replace(given=query[3])
        function = where.function
        assert function is not None
        if function.generator:
            return library.iterator(generator=True)
        if not function.body.returns:
            return NONE
        returned = join((yield from self.evaluate_all(function.body.returns, where)))
        # A memoized function returns what its first call made to every later call.
        return returned.stale() if function.memoized else returned

    def _param(self, query: Query) -> Computation:
        _, path, qualname, name = query
        module = self.module(path)
        where = self.where_of(module, qualname)
        function = where.function
        assert function is not None
        annotation = next((a.value for a in function.body.annotations if a.target == name), None)
        declared = self._annotation(annotation, where) if annotation is not None else UNKNOWN
        if declared.kind not in {Kind.UNKNOWN, Kind.STR, Kind.NUMBER}:
            return declared
        given = yield from self._given_values(module, where, name)
        # ``backend: str``: the strings (or integers) the call sites pass, when they agree.
        return given if declared.kind in {Kind.UNKNOWN, given.kind} else declared

    def _given_values(self, module: ModuleIndex, where: Where, name: str) -> Computation:
        """What a parameter is given: at every call site (or its default), anything when the
        function is called from where the project cannot see."""
        function = where.function
        assert function is not None
        path, qualname = module.path, function.qualname
        default = function.body.default(name)
        values: list[Value] = []
        parametrized = _parametrized(function, module, name)
        if parametrized is not None:
            # pytest calls it once with each value its ``parametrize`` lists for the name.
            values.extend((yield from self.evaluate_all(parametrized, Where(module))))
        elif self.is_open(module, function):
            # Called from where the project cannot see: its default, or anything.
            values.append(
                (yield from self.evaluate(default, Where(module))) if default else UNKNOWN
            )
        sites = yield ("callers", path, qualname)
        for site in sites:
            call, caller = self.site(site)
            if caller.body.calls[site[2]].raises:
                continue  # a test expects it to raise: what it refuses, not what it works on
            passed = yield from self._passed(module, function, call, name, caller, self.evaluate)
            values.append(UNKNOWN if passed is None else passed)
        return join(values)

    def _star(self, query: Query) -> Computation:
        """What a function's ``*args`` holds: at every call site, a tuple of the positional
        arguments after those its other parameters take; anything when a call spreads
        ``*args`` or ``**kwargs``, or the function is called from where the project cannot
        see."""
        _, path, qualname = query
        module = self.module(path)
        function = module.functions[qualname]
        if self.is_open(module, function):
            return UNKNOWN
        named = len(function.positional) - (1 if function.is_method else 0)
        values: list[Value] = []
        for site in (yield ("callers", path, qualname)):
            call, caller = self.site(site)
            if call.open:
                values.append(UNKNOWN)
                continue
            extra = call.positional[named + (1 if _unbound_init(call) else 0) :]
            items = tuple((yield from self.evaluate_all(extra, caller)))
            values.append(container(length=frozenset({len(items)}), items=items))
        return join(values)

    def ruled_out(
        self, where: Where, given: Given | None
    ) -> Generator[Query, Any, tuple[Where, tuple[Span, ...]]]:
        """A function's place evaluated for a call passing ``given`` (None: for any call),
        and the blocks that do not run there: those the values given rule out, and those its
        tests on module state rule out for every call (:meth:`_dead`)."""
        function = where.function
        assert function is not None
        if given is None and not function.body.fixed and not _reads_state(function.body):
            return where, ()
        where = where._replace(given=given or ())
        dead: tuple[Span, ...] = yield (
            "dead",
            where.module.path,
            function.qualname,
            where.given,
        )
        return where, dead

    def _dead(self, query: Query) -> Generator[Query, Any, tuple[Span, ...]]:
        """The blocks of a function that do not run for a call passing ``given``: those of
        the ``if`` statements whose test the values given, or the module's state (for every
        call, :attr:`Body.fixed`), decide the other way."""
        _, path, qualname, given = query
        where = self.where_of(self.module(path), qualname)._replace(given=given)
        function = where.function
        assert function is not None

        dead: list[Span] = []
        for branch in (*function.body.branches, *function.body.fixed):

            def operand(expr: Expr, branch: Branch = branch) -> Computation:
                return self._switch_operand(expr, where, branch)

            holds = yield from branches.decide(branch.test, operand)
            if holds is False:
                dead.append(branch.then)
            elif holds is True and branch.orelse is not None:
                dead.append(branch.orelse)
        return tuple(dead)

    def _switch_operand(self, expr: Expr, where: Where, branch: Branch) -> Computation:
        """An operand of a branch's test, for :meth:`_dead`: a parameter given by the call
        (through ``p = p.lower()``, or rebound only after the test), or a constant of the
        module (a literal, a global, a ``str`` enum's member); anything else the function
        binds itself is not known, but for its literal constants (``keras = False``)."""
        function = where.function
        assert function is not None
        given = dict(where.given)
        if expr.op is Op.REF and expr.text in given:
            value = given[expr.text]
            for assign in self.assigned(where).get(expr.text, ()):
                if assign.span is not None and _after(assign.span, branch, where.body):
                    continue  # ``if model is None: model = build()``
                method = assign.value.method
                if (
                    assign.value.op is not Op.CALL
                    or assign.value.parts[1:]
                    or method is None
                    or method[0] != expr
                ):
                    return UNKNOWN  # rebound to something else before the test
                value = _string_method(value, method[1])
            return value
        if state_read(expr) is not None:
            return (yield from self.instance_state(expr, where))
        constants = dict(where.body.constants)
        if expr.op is Op.REF and expr.text in constants:
            return (yield from self.evaluate(constants[expr.text], Where(where.module)))
        local = set(function.params) | set(self.assigned(where)) | {"self", "cls"}
        if branches.heads(expr) & local:
            return UNKNOWN
        return (yield from self.constant(expr, Where(where.module)))

    def constant(self, expr: Expr, where: Where) -> Computation:
        """``expr``'s value as a call's argument or a test's operand: a member of an enum that
        does not derive from ``str`` is not its value (``Color.RED != "red"``)."""
        if (expr.op is Op.REF and "." in expr.text) or expr.op is Op.ATTR:
            owner = ref(expr.text.rpartition(".")[0]) if expr.op is Op.REF else expr.parts[0]
            classes = yield from self.evaluate(owner, where)
            if any(self._plain_enum(each) for each in classes.atoms):
                return UNKNOWN
        return (yield from self.evaluate(expr, where))

    def _plain_enum(self, found: Atom) -> bool:
        return self._enum(found) and not self._bases(found) & _STRING_BASES

    def _enum(self, found: Atom) -> bool:
        """``found`` is a project class derived from ``enum.Enum`` (its members are read as
        the literals they are made of)."""
        return any(base.rpartition(".")[2] in _ENUM_BASES for base in self._bases(found))

    def _bases(self, found: Atom) -> set[str]:
        """The bases, as written, of a project class and of its project bases."""
        if found.kind is not Kind.CLASS or not isinstance(found.ref, ClassRef):
            return set()
        definition = self.klass(found.ref)
        if definition is None:
            return set()
        return {base for _, klass in self.project.mro(*definition) for base in klass.bases}

    def given_for(self, ref: FunctionRef, call: Expr, where: Where) -> Generator[Query, Any, Given]:
        """What ``call`` (made in ``where``) passes for the parameters ``ref`` tests, and what
        the instance it is made on holds in the attributes ``ref`` tests, or the methods it
        calls on ``self`` test (:meth:`_state_switches`): from the one construction that made
        a named receiver (:meth:`_constructed`), or, for a call on ``self``, what the caller
        was given of it. () when nothing of that rules out a block, and for a call that a
        function evaluated for one call makes on a cycle of the call graph (:meth:`recursive`)
        passing a number, a string or a container (:func:`_computed`) it was not given itself:
        on a cycle, a value computed anew on every turn (``n_step_grads(model, n_step - 1,
        x)`` in ``n_step_grads``) would make a summary of its own for each, without end;
        values handed on as they were given, and instances, classes, functions and flags
        (the instance a method is called on) are finitely many."""
        given = yield from self._given_for(ref, call, where)
        if given and where.given and where.function is not None:
            known = {value for _, value in where.given}
            new = [value for _, value in given if value not in known and _computed(value)]
            if new and self.recursive(FunctionRef(where.module.path, where.function.qualname), ref):
                return ()
        return given

    def _given_for(
        self, ref: FunctionRef, call: Expr, where: Where
    ) -> Generator[Query, Any, Given]:
        module = self.module(ref.path)
        function = module.functions[ref.qualname]
        found: list[tuple[str, Value]] = []
        for name in function.body.switches:
            if name in function.params:
                value = yield from self._passed(module, function, call, name, where, self.constant)
                if value is not None and branches.decisive(value):
                    found.append((name, value))
        state: frozenset[str] = frozenset()
        if function.is_method:
            state = yield ("state switches", ref.path, ref.qualname)
        receiver = call.method[0] if call.method is not None else None
        held = dict(where.given) if receiver == SELF else {}
        for name in sorted(state):
            if receiver == SELF:
                value = held.get(name)
            else:
                value = yield from self._constructed(ref, call, name[len("self.") :], where)
            if value is not None and branches.decisive(value):
                found.append((name, value))
        if function.is_method and receiver != SELF:
            for name in _dispatched(function.body):
                if name in state:
                    continue
                value = yield from self._constructed(ref, call, name[len("self.") :], where)
                if value is not None and not value.top and value.kind is not Kind.UNKNOWN:
                    found.append((name, value))  # what runs ``self._detector.predict(x)``
            if receiver is None and ref.qualname.endswith(".__call__"):
                receiver = call.func  # ``metric(x)``: the object called is ``self``
            if receiver is not None:
                holder = yield from self._inheriting(ref, receiver, where)
                if holder is not None:
                    found.append((SELF.text, holder))
        called: list[tuple[str, Value]] = []
        callables: frozenset[str] = yield ("called parameters", ref.path, ref.qualname)
        for name in sorted(callables):
            value = yield from self._passed(module, function, call, name, where, self.evaluate)
            if value is not None and not value.top:
                called.append((name, value))  # ``predict_fn(x)``: what this call passes
        if not found and not called:
            return ()
        given = tuple(sorted([*found, *called], key=lambda item: item[0]))
        if called or any(name.partition(".")[0] == SELF.text for name, _ in given):
            # The blocks it rules out may be those of a method it calls; a callable it is
            # passed is this call's, not what other calls pass.
            return given
        dead: tuple[Span, ...] = yield ("dead", ref.path, ref.qualname, given)
        return given if dead else ()

    def _inheriting(
        self, ref: FunctionRef, receiver: Expr, where: Where
    ) -> Generator[Query, Any, Value | None]:
        """What a call runs the method ``ref`` on, when that is instances of known classes
        (each exactly that class, not "it or a subclass": what a construction makes, and what
        a name, an attribute or a container's item holds of such) of subclasses of the
        method's class, and the method calls methods on ``self``: those calls then run the
        subclasses' own (``BaseDrift.predict`` calling ``self.score(x)`` on the
        ``DriftTorch`` a ``Drift``'s ``__init__`` made; a base's ``__call__`` calling
        ``self.evaluate(x)`` for each metric of a list of them), as a method the call names
        runs the receiver's own. None otherwise."""
        function = self.module(ref.path).functions[ref.qualname]
        if not any(
            site.call.method is not None and site.call.method[0] == SELF
            for site in function.body.calls
        ):
            return None
        value = yield from self.evaluate(receiver, where)
        owner = ref.qualname.partition(".")[0]
        if value.top or not value.atoms:
            return None
        classes: set[tuple[str, str]] = set()
        for each in value.atoms:
            if each.kind not in {Kind.INSTANCE, Kind.MODEL} or each.cone:
                return None
            if not isinstance(each.ref, ClassRef):
                return None
            classes.add((each.ref.path, each.ref.name))
        if classes == {(ref.path, owner)}:
            return None  # its own class: ``self`` is what the method's body says already
        return value

    def _structure_passed(
        self, ref: FunctionRef, call: Expr, where: Where
    ) -> Generator[Query, Any, Given]:
        """The parameters of the function ``ref`` that ``call`` (made in ``where``) passes
        structure for (a model's or graph's variables: :attr:`~.lattice.Value.structural`)
        and that what it returns may be computed from, with what it passes. What the function
        returns to this call is evaluated with them (``ordered_union(trainable, moving)`` of
        two collections of a graph's variables is structure, whatever other callers pass the
        helper). Only structure is passed on, so the calls evaluated apart are few, and each
        is evaluated one call deep (not again for the calls it makes). Only arguments that are
        the caller's own names are read (what such a name holds is solved once; a call would
        be evaluated again for every call made with it, and a parameter of the caller would
        ask for every call site of the caller)."""
        module = self.module(ref.path)
        function = module.functions[ref.qualname]
        if function.generator or function.memoized or not function.body.returns:
            return ()
        found: list[tuple[str, Value]] = []
        caller = where.function.params if where.function is not None else ()
        for name in self._returned_from(self.where_of(module, ref.qualname)):
            argument = call.argument(function.params.index(name), name)
            if (
                argument is None
                or argument.op is not Op.REF
                or argument.text.partition(".")[0] in caller
            ):
                continue
            value = yield from self.evaluate(argument, where)
            if value.structural:
                found.append((name, value))
        return tuple(found)

    def _returned_from(self, where: Where) -> tuple[str, ...]:
        """The parameters what a function returns may be computed from: those its returned
        expressions read, through the names they read and what those are assigned, stored
        and filled from (flow-insensitively), and those its branches test; in the order of
        the parameters."""
        function = where.function
        assert function is not None
        key = (where.module.path, function.qualname)
        found = self._returned.get(key)
        if found is None:
            assigned = self.assigned(where)
            stored = self._stores(where)
            filled: dict[str, list[Expr]] = {}
            for counted in function.body.counted:
                filled.setdefault(counted.container, []).append(counted.iterable)
            todo = [name for expr in function.body.returns for name in branches.heads(expr)]
            read: set[str] = set(function.body.switches)
            while todo:
                name = todo.pop()
                if name in read:
                    continue
                read.add(name)
                sources = (
                    *_values(assigned.get(name, ())),
                    *stored.get(name, ()),
                    *filled.get(name, ()),
                )
                todo.extend(head for expr in sources for head in branches.heads(expr))
            found = self._returned[key] = tuple(p for p in function.params if p in read)
        return found

    def _state_switches(self, query: Query) -> Generator[Query, Any, frozenset[str]]:
        """The instance's attributes a method tests (``if self.compile_cache_size > 0:``), and
        those the methods it calls on ``self`` test, through any depth of such calls."""
        _, path, qualname = query
        where = self.where_of(self.module(path), qualname)
        function = where.function
        assert function is not None
        found = {name for name in function.body.switches if name.startswith("self.")}
        for site in function.body.calls:
            if site.call.method is None or site.call.method[0] != SELF:
                continue
            targets = yield from self.targets(site.call, where)
            for target in targets:
                if target.kind is TargetKind.FUNCTION and target.ref is not None:
                    found |= yield ("state switches", target.ref.path, target.ref.qualname)
        return frozenset(found)

    def _called_parameters(self, query: Query) -> Generator[Query, Any, frozenset[str]]:
        """The parameters a function calls (``predict_fn(x)``), or passes on to a project
        function that calls them, through any depth of such calls (alibi's
        ``linearity_measure`` hands ``predict_fn`` to the helper that calls it)."""
        _, path, qualname = query
        where = self.where_of(self.module(path), qualname)
        function = where.function
        assert function is not None
        params = set(function.params)
        found: set[str] = set()
        for site in function.body.calls:
            call = site.call
            if call.func.op is Op.REF and call.func.text in params:
                found.add(call.func.text)
            passed = {a.text for a in call.parts[1:] if a.op is Op.REF and a.text in params}
            if not passed - found:
                continue
            targets = yield from self.targets(call, where)
            for target in targets:
                if target.kind is not TargetKind.FUNCTION or target.ref is None:
                    continue
                callee = self.module(target.ref.path).functions[target.ref.qualname]
                called: frozenset[str] = yield (
                    "called parameters",
                    target.ref.path,
                    target.ref.qualname,
                )
                for name in called:
                    position = callee.params.index(name) + (1 if _unbound_init(call) else 0)
                    argument = call.argument(position, name)
                    if argument is not None and argument.op is Op.REF and argument.text in params:
                        found.add(argument.text)
        return frozenset(found)

    def _passed(
        self,
        module: ModuleIndex,
        function: FunctionFacts,
        call: Expr,
        name: str,
        where: Where,
        evaluate: Callable[[Expr, Where], Computation],
    ) -> Generator[Query, Any, Value | None]:
        """What ``call`` (made in ``where``) binds the parameter ``name`` of ``function`` (of
        ``module``) to, each expression read with ``evaluate``: its argument, what a
        ``**mapping`` holds under the name (``f(**args)`` with ``args = {"data_aug": 1}``), or
        the default; None when a ``*args`` or ``**kwargs`` may pass it, or it has no
        default."""
        position = function.params.index(name)
        if _unbound_init(call):
            position += 1  # ``Base.__init__(self, units)`` passes the instance first
        argument = call.argument(position, name)
        if argument is not None:
            return (yield from evaluate(argument, where))
        passed = yield from self._spread(call, name, where)
        if passed is None:
            return None  # ``*args`` or ``**kwargs`` may pass it
        if passed is not BOTTOM:
            return passed
        default = function.body.default(name)
        if default is None:
            return None
        return (yield from evaluate(default, Where(module)))

    def _constructed(
        self, method: FunctionRef, call: Expr, attribute: str, where: Where
    ) -> Generator[Query, Any, Value | None]:
        """What the instance that ``call`` (``agent.memorize(...)``, made in ``where``) runs
        ``method`` on holds in ``attribute``, from the one construction that made it: when
        the receiver is a construction (``Agent(env).memorize(...)``) or a name bound to
        constructions only, of which one makes a class with ``method``, to a call of a project
        class whose ``__init__`` assigns ``self.attribute`` and nothing else does: the value
        that construction passes for the parameter it is set from (``agent = Agent(env,
        w_per=False)``), or what ``__init__`` assigns it outside the blocks the construction
        rules out (:meth:`_initialized`). None when not known."""
        receiver = call.method[0] if call.method is not None else None
        if receiver is not None and receiver.op is Op.CALL:
            bound = [(Assign("", receiver, None), where)]
            name = ""
        elif receiver is not None and receiver.op is Op.REF and "." not in receiver.text:
            name = receiver.text
            bound = self._bound(name, where)
        else:
            return None
        made: list[tuple[Expr, Where, ClassRef, FunctionRef]] = []
        for assign, place in bound:
            if assign.value.op is not Op.CALL or (
                name and self.assigned(place).get(f"{name}.{attribute}")
            ):
                return None  # not a construction, or ``agent.attribute = ...`` written outside
            targets = yield from self.targets(assign.value, place)
            if len(targets) != 1 or targets[0].kind is not TargetKind.CONSTRUCTOR:
                return None
            klass, init = targets[0].klass, targets[0].ref
            if klass is None:
                return None
            if self.method_of(klass, method.qualname.rpartition(".")[2]) != method:
                continue  # an instance whose ``method`` is another
            if init is None:
                return None
            made.append((assign.value, place, klass, init))
        if len(made) != 1:
            return None  # ``dd = MMDDrift(...)`` or ``dd = LearnedKernelDrift(...)``: the one
        construction, place, klass, init = made[0]  # whose class has the method called
        assigned, stored = self._assignments(klass, attribute)
        if not assigned or stored:
            return None
        inside = assigned[0][1]
        initializer = inside.function
        if initializer is None or any(
            (w.module.path, w.qualname) != (init.path, init.qualname) for _, w in assigned
        ):
            return None  # assigned outside its ``__init__``
        value = assigned[0][0].value
        if (
            len(assigned) == 1
            and value.op is Op.REF
            and value.text in initializer.params
            and value.text not in self.assigned(inside)
        ):
            return (
                yield from self._passed(
                    inside.module, initializer, construction, value.text, place, self.constant
                )
            )
        return (yield from self._initialized(init, construction, place, assigned))

    def _bound(self, name: str, where: Where) -> list[tuple[Assign, Where]]:
        """The assignments of the name ``name`` read in ``where``: the function's own when it
        assigns it, else the module's; none for a parameter or a name of a nested scope."""
        function = where.function
        if name in where.shadowed or (function is not None and name in function.params):
            return []
        local = function is not None and name not in function.body.globals
        if local and name in self.assigned(where):
            return [(a, where) for a in self.assigned(where)[name]]
        return self.global_assignments(where.module, name)

    def _initialized(
        self,
        init: FunctionRef,
        construction: Expr,
        place: Where,
        assigned: list[tuple[Assign, Where]],
    ) -> Generator[Query, Any, Value | None]:
        """What ``__init__`` assigns an attribute (``assigned``) when ``construction`` (made
        in ``place``) runs it, when what that call passes rules out some of ``__init__``'s
        blocks: its assignments outside them, evaluated with what the call passes
        (``self._detector = detector(...)`` with ``detector`` chosen by ``backend``). None
        when the call rules out nothing."""
        given = yield from self.given_for(init, construction, place)
        if not given:
            return None
        inside, dead = yield from self.ruled_out(assigned[0][1], given)
        values: list[Value] = []
        for assign, _ in assigned:
            if assign.span is None or not within(assign.span, dead):
                values.append((yield from self.evaluate(assign.value, inside)))
        return join(values)

    def _spread(self, call: Expr, name: str, where: Where) -> Generator[Query, Any, Value | None]:
        """What ``call`` passes for ``name`` beyond its own arguments: BOTTOM when it passes
        nothing more (no ``*args``, and a ``**mapping`` with known keys, none of them
        ``name``), the key's value when every dict it may be has it, None when not known."""
        if not call.open:
            return BOTTOM
        spread = call.keyword(SPREAD)
        if spread is None or call.starred:
            return None  # a ``*args``, or a second ``**mapping``
        mapping = yield from self.evaluate(spread, where)
        if mapping.top or not mapping.atoms:
            return None
        if _stored_under(
            self._stores(where).get(spread.text, ()) if spread.op is Op.REF else (), name
        ):
            return None  # ``args[name] = ...`` somewhere: passed or not, here, is not known
        if spread.op is not Op.REF and any(a.length is None for a in mapping.atoms):
            return None  # a dict stored into elsewhere: which keys it holds here is not known
        if any(
            a.element is not None and any(k.kind is Kind.UNKNOWN for k in a.element.atoms)
            for a in mapping.atoms
        ):
            return None  # a long dict whose later keys are not kept
        keyed = [each.keyed for each in mapping.atoms]
        if any(known is None for known in keyed):
            return None
        values = [dict(known).get(name) for known in keyed if known is not None]
        if all(value is None for value in values):
            return BOTTOM
        if any(value is None for value in values):
            return None
        return join(value for value in values if value is not None)

    def _callers(self, query: Query) -> Generator[Query, Any, tuple[SiteId, ...]]:
        _, path, qualname = query
        wanted = FunctionRef(path, qualname)
        found: list[SiteId] = []
        for site in self.candidates(self.module(path), qualname):
            call, where = self.site(site)
            targets = yield from self.targets(call, where)
            if any(t.ref == wanted for t in targets):
                found.append(site)
        return tuple(found)

    # -- the call graph's static part ----------------------------------------------------------

    def site(self, site: SiteId) -> tuple[Expr, Where]:
        path, qualname, index = site
        where = self.where_of(self.module(path), qualname)
        return where.body.calls[index].call, where

    def bodies(self) -> Iterator[Where]:
        """Every body of the project: each module's own code, functions and methods."""
        for module in self.project.modules():
            yield from self.module_bodies(module)

    def module_bodies(self, module: ModuleIndex) -> Iterator[Where]:
        """A module's own code, its functions and its methods."""
        yield Where(module)
        for qualname in module.functions:
            yield self.where_of(module, qualname)

    @staticmethod
    def method_calls(
        bodies: Iterable[Where], wanted: Callable[[str], bool]
    ) -> Iterator[tuple[Expr, Where]]:
        """The calls of ``bodies`` of a method whose name is ``wanted`` (``x.add_argument(...)``),
        each with its place."""
        for where in bodies:
            for site in where.body.calls:
                method = site.call.method
                if method is not None and wanted(method[1]):
                    yield site.call, where

    def calls_named(self) -> dict[str, list[SiteId]]:
        """Every call of the project by the last identifier of its callee (``__init__`` is
        called by its class's name), built once."""
        if self._calls_named is None:
            table: dict[str, list[SiteId]] = {}
            for where in self.bodies():
                for index, site in enumerate(where.body.calls):
                    name = callee_name(site.call)
                    if name is not None:
                        table.setdefault(name, []).append(
                            (where.module.path, where.qualname, index)
                        )
            self._calls_named = table
        return self._calls_named

    def candidates(self, module: ModuleIndex, qualname: str) -> list[SiteId]:
        """The call sites that may run a function: those that call it by its name, and those
        that call a name it is handed to (``decoder=beam_search`` ... ``decoder(model, x)``,
        ``fn = build`` ... ``fn()``), and for a constructor of ``module``, the calls of
        ``__init__`` in its subclasses."""
        short = short_name(qualname)
        last = qualname.rpartition(".")[2]
        receivers = self._flows()[0]
        names = {short, *receivers.get(short, ()), *receivers.get(last, ())}
        table = self.calls_named()
        found = [site for name in names for site in table.get(name, ())]
        klass = module.classes.get(short) if last == "__init__" else None
        if klass is not None:
            # ``super().__init__(...)`` (or ``Base.__init__(self, ...)``) in a subclass.
            below = {(m.path, k.name) for m, k in self.project.subclasses(module, klass)}
            found += [
                site
                for site in table.get("__init__", ())
                if (site[0], site[1].partition(".")[0]) in below
            ]
        return sorted(found)

    def recursive(self, caller: FunctionRef, callee: FunctionRef) -> bool:
        """The two functions are on one cycle of the call graph as :meth:`candidates` reads
        it (every call site that may run a function, by names): each may, through the other,
        call itself. An over-approximation, built once."""
        components = self._components()
        found = components.get((caller.path, caller.qualname))
        return found is not None and found == components.get((callee.path, callee.qualname))

    def _components(self) -> dict[tuple[str, str], int]:
        """The strongly connected components of the call graph (Tarjan's algorithm, with an
        explicit stack: a call chain of any length uses no recursion), each function to its
        component's number; a function on no cycle has none."""
        if self._cycles is not None:
            return self._cycles
        calls: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for module in self.project.modules():
            for qualname in sorted(module.functions):
                for path, caller, _ in self.candidates(module, qualname):
                    if caller:
                        calls.setdefault((path, caller), []).append((module.path, qualname))
        index: dict[tuple[str, str], int] = {}
        low: dict[tuple[str, str], int] = {}
        on_stack: set[tuple[str, str]] = set()
        stack: list[tuple[str, str]] = []
        found: dict[tuple[str, str], int] = {}
        for root in sorted(calls):
            if root in index:
                continue
            work = [(root, iter(sorted(set(calls.get(root, ())))))]
            index[root] = low[root] = len(index)
            stack.append(root)
            on_stack.add(root)
            while work:
                node, edges = work[-1]
                step = next(edges, None)
                if step is not None:
                    if step not in index:
                        index[step] = low[step] = len(index)
                        stack.append(step)
                        on_stack.add(step)
                        work.append((step, iter(sorted(set(calls.get(step, ()))))))
                    elif step in on_stack:
                        low[node] = min(low[node], index[step])
                    continue
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    members = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        members.append(member)
                        if member == node:
                            break
                    if len(members) > 1 or node in calls.get(node, ()):
                        found.update((member, index[node]) for member in members)
        self._cycles = found
        return found

    def is_open(self, module: ModuleIndex, function: FunctionFacts) -> bool:
        """Whether the project cannot see every call of ``function``: no call names it, it
        is handed to code the project cannot follow (a library: ``Thread(target=...)``,
        ``tf.function(fn)``; stored in a container, returned), or it is a special method
        Python calls itself."""
        last = function.qualname.rpartition(".")[2]
        if last.startswith("__") and last.endswith("__") and last != "__init__":
            return True
        escaped = self._flows()[1]
        short = short_name(function.qualname)
        return short in escaped or last in escaped or not self.candidates(module, function.qualname)

    def handed(self) -> dict[str, set[str]]:
        """The names each function (by its last identifier) is handed to."""
        return self._flows()[0]

    def _flows(self) -> tuple[dict[str, set[str]], frozenset[str]]:
        """Where the project hands functions around, by their last identifier: the names each
        is handed to (a keyword or parameter of a project function, a variable, an
        attribute), and the names handed to code the project cannot follow."""
        if self._handed is not None:
            return self._handed
        receivers: dict[str, set[str]] = {}
        escaped: set[str] = set()
        parameters: dict[str, list[tuple[str, ...]]] = {}
        for module in self.project.modules():
            for qualname, function in module.functions.items():
                parameters.setdefault(short_name(qualname), []).append(function.params)

        for where in self.bodies():
            # A name the body binds itself is a variable there, not a function.
            variables = set(self.assigned(where))
            if where.function is not None:
                variables.update(where.function.params)
            for value, receiver in _handed_values(where.body, parameters):
                _hand(value, receiver, variables, receivers, escaped)
        self._handed = (receivers, frozenset(escaped))
        return self._handed


#: The kinds of value a test of :attr:`~tflint_leaks.analysis.facts.Body.narrowed` holds for:
#: ``isinstance(x, str)`` for strings, ``callable(x)`` for functions, classes, library
#: callables, ``tf.function``\ s and Keras models, ``not isinstance(x, list)`` for all that
#: is no Python container (an instance of a project class may subclass one).
_SORTS: dict[str, tuple[Kind, ...]] = {
    "str": (Kind.STR,),
    "callable": (Kind.FUNCTION, Kind.CLASS, Kind.LIBRARY, Kind.TF_FUNCTION, Kind.MODEL),
    "not container": tuple(
        kind
        for kind in Kind
        if kind not in {Kind.CONTAINER, Kind.INSTANCE, Kind.UNKNOWN, Kind.SUPER}
    ),
}


def _calls_super(function: FunctionFacts, name: str) -> bool:
    """``function`` calls ``super().name(...)`` (or ``super(Class, self).name(...)``)."""
    for site in function.body.calls:
        method = site.call.method
        if method is not None and method[1] == name and is_super(method[0]):
            return True
    return False


def _named(call: Expr, where: Where) -> bool:
    """``call`` calls a function by its name, or by a module's it imports (``FPN(...)``,
    ``sm.FPN(...)``)."""
    func = call.func
    if func.op is not Op.REF:
        return False
    head, _, rest = func.text.partition(".")
    return not rest or head in where.module.imports


def _class_like(name: str) -> bool:
    """The last part of a dotted name is written as Python writes class names (CapWords, or
    an acronym): ``BeitLargePatch16``, ``FPN``, not ``get_model`` nor ``MODEL_FN``."""
    last = name.rpartition(".")[2]
    return last[:1].isupper() and "_" not in last


def _unknown_object(value: Value) -> bool:
    """Nothing is known of ``value`` but that it may be some object (a library class's, or
    what code the project cannot read returns)."""
    atoms = value.informative
    return not value.top and bool(atoms) and all(a.kind is Kind.UNKNOWN for a in atoms)


def _reads_state(body: Body) -> bool:
    """Some ``if`` of the body tests an attribute of ``self`` (:meth:`Inference.
    instance_state`)."""
    return any(name.startswith("self.") for name in body.switches)


def _string_method(value: Value, name: str) -> Value:
    """``value.name()`` for a value that is not project code (``backend.lower()``)."""
    return map_atoms(value, lambda each: library.method(each, name))


def _after(span: Span, branch: Branch, body: Body) -> bool:
    """The assignment at ``span`` runs only after ``branch``'s test (no loop brings it back
    before the test)."""
    if (span.line, span.column) < (branch.then.line, branch.then.column):
        return False
    return not any(
        loop.body.contains(span) and loop.body.contains(branch.then) for loop in body.loops
    )


def _computed(value: Value) -> bool:
    """``value`` says which number, string or container it is (its integers, its texts, its
    length or items), or is a library object named by the attributes taken on the way
    (``node.next.next``): arithmetic, concatenation or attributes can make new ones without
    end."""
    return any(
        a.kind is Kind.LIBRARY
        or a.ints is not None
        or a.texts is not None
        or a.length is not None
        or a.bound is not None
        or a.items is not None
        or a.keyed is not None
        or a.element is not None
        or a.mapped is not None
        for a in value.atoms
    )


def _values(assigns: Iterable[Assign]) -> Iterator[Expr]:
    return (assign.value for assign in assigns)


class Counting(NamedTuple):
    """How many items a list filled by a loop gets (:meth:`Inference._counted_length`)."""

    length: Ints
    bound: int | None
    structural: bool


def _appended_once_each(body: Body, name: str, assign: Assign, stores: int) -> Counting | None:
    """A list displayed with its items and then only appended to, by calls outside every loop
    of the body (``optimizers = [RAdam]``, then ``if TF_KERAS: optimizers.append(...)``):
    each append runs once at most, so it holds as many items as the display, and at most one
    more for each. None otherwise."""
    first = _displayed_list(body, assign)
    if first is None or assign.span is None:
        return None
    appends = [
        site
        for site in body.calls
        if site.call.method is not None
        and site.call.method[0].op is Op.REF
        and site.call.method[0].text == name
        and site.call.method[1] == "append"
    ]
    if len(appends) != stores or any(
        site.span < assign.span or body.loop_around(site.span) is not None for site in appends
    ):
        return None
    return Counting(frozenset(range(first, first + len(appends) + 1)), None, False)


def _displayed_list(body: Body, assign: Assign) -> int | None:
    """How many items ``assign`` displays, when it assigns a list or dict display outside
    every loop of the body (``folds = []``, ``optimizers = [RAdam]``, ``results = {}``; an
    empty ``list()`` or ``dict()`` too); None otherwise."""
    value = assign.value
    if assign.span is None or body.loop_around(assign.span) is not None:
        return None
    if value.op is Op.DISPLAY and value.text in {"list", "dict"} and value.number >= 0:
        return value.number
    if (
        value.op is Op.CALL
        and len(value.parts) == 1
        and not value.open
        and value.func.op is Op.REF
        and value.func.text in {"list", "dict"}
    ):
        return 0
    return None


def _filled(value: Value, stored: list[Value], counting: Counting | None = None) -> Value:
    """``value`` with what the code puts into it: its containers may also hold the stored
    values (and their length, bound and structure are then ``counting``'s, else not known);
    ``X[key] = v``
    (:data:`ITEM_STORE`, a one-entry container of ``key`` and ``v``) puts ``v`` in a dict
    under ``key``, and in a list; a Keras ``Sequential``'s ``add`` is no container's."""
    if not stored or value.top:
        return value
    items = [v for v in stored if not _item_store(v)]
    keyed = [a for v in stored if _item_store(v) for a in v.atoms]
    keys = join(a.element or BOTTOM for a in keyed)
    mapped = join(a.mapped or BOTTOM for a in keyed)
    by_key = _stored_by_key(keyed) if not items else None

    def filled(a: Atom) -> Atom:
        if a.mapped is not None:  # a dict: its keys and values
            return a._replace(
                element=join([a.element or BOTTOM, keys, *items]),
                mapped=join([a.mapped, mapped]),
                length=counting.length if counting is not None else None,
                bound=counting.bound if counting is not None else None,
                items=None,
                keyed=_keyed_after(a.keyed, by_key),
            )
        return a._replace(
            element=join([a.element or BOTTOM, mapped, *items]),
            length=counting.length if counting is not None else None,
            bound=counting.bound if counting is not None else None,
            structural=counting is not None and counting.structural,
            items=None,
            keyed=None,
        )

    return join([Value(tuple(filled(a) if a.kind is Kind.CONTAINER else a for a in value.atoms))])


def _stored_by_key(stores: list[Atom]) -> dict[str, Value] | None:
    """What item stores put under each key, when every key is a known string (None when one
    is not: the dict's keys are then not known)."""
    found: dict[str, list[Value]] = {}
    for store in stores:
        key = store.element
        texts = key.atoms[0].texts if key is not None and len(key.atoms) == 1 else None
        if texts is None:
            return None
        for text in texts:
            found.setdefault(text, []).append(store.mapped or UNKNOWN)
    return {key: join(values) for key, values in found.items()}


#: ``self``, as an expression.
SELF = ref("self")
#: pytest's decorator that calls a test once per value it lists, and a row of its table.
PARAMETRIZE = "pytest.mark.parametrize"
PARAM = "pytest.param"


def _parametrized(function: FunctionFacts, module: ModuleIndex, name: str) -> list[Expr] | None:
    """The values ``@pytest.mark.parametrize`` lists for the parameter ``name`` of a test
    (``("size", [1, 2, 3])``, ``("a, b", [(1, 2), (3, 4)])``, ``pytest.param(1, id="x")``); None
    when no such decorator names it or its values are not written out."""
    for decorator in function.decorators:
        if decorator.op is not Op.CALL or decorator.func.op is not Op.REF:
            continue
        if resolve_dotted(decorator.func.text, module.imports) != PARAMETRIZE:
            continue
        arguments = decorator.positional
        names = _parameter_names(arguments[0]) if arguments else None
        if names is None or name not in names or len(arguments) < 2:
            continue
        # One name written as a string: each row is the value (pytest's ``force_tuple``).
        whole = len(names) == 1 and string_text(arguments[0]) is not None
        table = arguments[1]
        if table.op is not Op.DISPLAY and whole:
            return [Expr(Op.ITERATE, "", (table,))]  # ``("size", SIZES)``: its items
        if table.op is not Op.DISPLAY or table.number != len(table.parts):
            return None
        index = names.index(name)
        values: list[Expr] = []
        for row in table.parts:
            if row.op is Op.CALL and row.func.op is Op.REF:
                if resolve_dotted(row.func.text, module.imports) != PARAM:
                    return None  # a call that makes the row: not written out
                items = row.positional  # ``pytest.param(1, 2, id="x")``
            elif whole:
                items = (row,)  # the row itself, a tuple or not
            elif row.op is Op.DISPLAY and row.number == len(row.parts):
                items = row.parts
            else:
                return None
            if len(items) != len(names):
                return None
            values.append(items[index])
        return values
    return None


def _parameter_names(expr: Expr) -> list[str] | None:
    """``"a, b"`` or ``("a", "b")`` as parameter names."""
    text = string_text(expr)
    if text is not None:
        return [part.strip() for part in text.split(",") if part.strip()]
    if expr.op is Op.DISPLAY and expr.number == len(expr.parts):
        names = [string_text(part) for part in expr.parts]
        return [str(n) for n in names] if None not in names else None
    return None


def _stored_under(stores: Iterable[Expr], key: str) -> bool:
    """One of a container's item stores (:data:`ITEM_STORE`) may put something under ``key``:
    its key is ``key`` or not a known string."""
    for store in stores:
        if store.op is Op.OTHER and store.text == ITEM_STORE:
            text = string_text(store.parts[0])
            if text is None or text == key:
                return True
    return False


def _keyed_after(
    keyed: tuple[tuple[str, Value], ...] | None, stored: dict[str, Value] | None
) -> tuple[tuple[str, Value], ...] | None:
    """A dict's value by key once the code stores into it under known keys (anywhere, in any
    order): a key it had may also hold what is stored under it, a key only a store gives holds
    that (whether it is there at a given point is not known: :meth:`Inference._spread` asks
    the stores)."""
    if keyed is None or stored is None:
        return None
    merged = dict(keyed)
    for key, value in stored.items():
        merged[key] = join([merged[key], value]) if key in merged else value
    return tuple(sorted(merged.items()))


def _dict_change(call: Expr, method: str) -> list[Expr]:
    """What a dict method puts into the dict, as item stores (:data:`ITEM_STORE`):
    ``update(lr=0.1)`` and ``update({"lr": 0.1})`` store 0.1 under ``"lr"``,
    ``setdefault(key, value)`` ``value`` under ``key``; an ``update`` with a mapping whose keys
    are not known, or a key taken out, is an unknown key with an unknown value (the keys the
    dict holds are no longer known)."""
    entries = list(zip(call.keywords, call.keyword_values, strict=True))
    given = _literal_entries(call.positional[0]) if len(call.positional) == 1 else []
    if method == "update" and SPREAD not in call.keywords and given is not None:
        return [Expr(Op.OTHER, ITEM_STORE, (string(key), value)) for key, value in entries + given]
    if method == "setdefault" and call.positional:
        value = call.positional[1] if len(call.positional) > 1 else UNKNOWN_EXPR
        return [Expr(Op.OTHER, ITEM_STORE, (call.positional[0], value))]
    return [Expr(Op.OTHER, ITEM_STORE, (UNKNOWN_EXPR, UNKNOWN_EXPR))]


def _literal_entries(mapping: Expr) -> list[tuple[str, Expr]] | None:
    """The entries of a dict written with known string keys (``{"lr": 0.1}``, ``dict(lr=0.1)``),
    else None."""
    if mapping.op is Op.DISPLAY and mapping.text == "dict":
        keys = [string_text(key) for key in mapping.parts[0::2]]
        if mapping.number != len(keys) or None in keys:
            return None
        return [(str(key), value) for key, value in zip(keys, mapping.parts[1::2], strict=True)]
    if (
        mapping.op is Op.CALL
        and mapping.func.op is Op.REF
        and mapping.func.text == "dict"
        and not mapping.positional
        and SPREAD not in mapping.keywords
    ):
        return list(zip(mapping.keywords, mapping.keyword_values, strict=True))
    return None


def _item_store(value: Value) -> bool:
    """A value made by evaluating an :data:`ITEM_STORE` (its atoms carry the marker)."""
    return bool(value.atoms) and all(a.ref == ITEM_STORE for a in value.atoms)


def _made_in(value: Value, qualname: str) -> Value:
    """What a project function returns, seen by its caller: the arrays it makes are made
    "in" it (``np.empty`` in ``prepare``)."""
    if not any(o.via is None for a in value.atoms_of(Kind.ARRAY) for o in a.origins):
        return value
    return Value(
        tuple(
            a._replace(origins=tuple(o if o.via else o._replace(via=qualname) for o in a.origins))
            if a.kind is Kind.ARRAY
            else a
            for a in value.atoms
        ),
        value.top,
    )


def _handed_values(
    body: Body, parameters: dict[str, list[tuple[str, ...]]]
) -> Iterator[tuple[Expr, set[str] | None]]:
    """Every value a body hands on, with the names it is handed to (None: to code that is not
    the project's, or into something other than a name)."""
    for assign in body.assigns:
        yield assign.value, {assign.target.rpartition(".")[2]}
    for default in body.defaults:
        yield default.value, {default.target}
    for returned in body.returns:
        yield returned, None
    for site in body.calls:
        call = site.call
        name = callee_name(call)
        known = parameters.get(name) if name is not None else None
        for position, argument in enumerate(call.positional):
            names = {p[position] for p in known or () if position < len(p)}
            yield argument, names or None
        for keyword, value in zip(call.keywords, call.keyword_values, strict=True):
            yield value, {keyword} if known else None


def _hand(
    value: Expr,
    receiver: set[str] | None,
    variables: set[str],
    receivers: dict[str, set[str]],
    escaped: set[str],
) -> None:
    """Record where a value is handed: a name handed on directly to ``receiver`` names, any
    other use of a name (in a container, to a library) as escaped. ``variables``: the names
    the body binds itself (variables, not functions)."""
    if value.op is Op.REF and receiver is not None:
        if value.text not in variables:
            receivers.setdefault(value.text.rpartition(".")[2], set()).update(receiver)
        return
    used: set[str] = set()
    _names_in(value, used)
    escaped.update(used - variables)


def _names_in(expr: Expr, found: set[str]) -> None:
    """The last identifiers of the names ``expr`` uses as values (not calls' callees)."""
    stack = [expr]
    while stack:
        current = stack.pop()
        if current.op is Op.REF:
            found.add(current.text.rpartition(".")[2])
        elif current.op is Op.ATTR:
            found.add(current.text)
            stack.append(current.parts[0])
        elif current.op is Op.CALL:
            stack.extend(current.parts[1:])
            func = current.func
            if func.op is not Op.REF:
                stack.append(func)
        else:
            stack.extend(current.parts)


def short_name(qualname: str) -> str:
    """The name a call of a function uses: its last name (a constructor: its class's)."""
    owner, _, short = qualname.rpartition(".")
    return owner if short == "__init__" and owner else short


def _unstructured(value: Value) -> bool:
    """A collection that is not only structure (:attr:`~.lattice.Value.structural`): what a
    helper returns to a call that passes it structure may be."""
    return not value.structural and any(
        a.kind in {Kind.CONTAINER, Kind.ITERATOR} for a in value.atoms
    )


def _dispatched(body: Body) -> list[str]:
    """The attributes of ``self`` whose methods a method's body calls (``self._detector`` of
    ``self._detector.predict(x)``), sorted."""
    found = set()
    for site in body.calls:
        method = site.call.method
        if method is not None and method[0].op is Op.REF:
            head, _, rest = method[0].text.partition(".")
            if head == SELF.text and rest and "." not in rest:
                found.add(method[0].text)
    return sorted(found)


def _unbound_init(call: Expr) -> bool:
    """``Base.__init__(self, ...)``: a constructor called on its class, not through
    ``super()``."""
    method = call.method
    if method is None or method[1] != "__init__":
        return False
    return not is_super(method[0])


def callee_name(call: Expr) -> str | None:
    """The last identifier of a call's callee (``self.model.predict`` -> ``predict``)."""
    func = call.func
    if func.op is Op.REF:
        return func.text.rpartition(".")[2]
    if func.op is Op.ATTR:
        return func.text
    return None


def _bind(names: str, value: Value) -> list[tuple[str, Value]]:
    """The bindings a comprehension clause makes of ``value`` (see ``target_names``)."""
    if names.startswith("?"):
        return [(name, UNKNOWN) for name in names[1:].split(",") if name]
    split = names.split(",")
    if len(split) == 1:
        return [(names, value)]
    return [(name, _item(value, Expr(Op.ITEM, number=i))) for i, name in enumerate(split)]


def _item(base: Value, expr: Expr) -> Value:
    """``base[index]`` (``expr`` is the ITEM expression: its number, or a slice)."""
    if base.top:
        return TOP
    found: list[Value] = []
    index = expr.number
    for each in base.atoms:
        kind = each.kind
        if kind is Kind.CONTAINER:
            if expr.text == "slice":
                taken = [m for m in (each.most, expr.number) if m is not None and m >= 0]
                most = min(taken) if taken else None
                found.append(Value((each._replace(length=None, items=None, bound=most),)))
            elif each.items is not None and 0 <= index < len(each.items):
                found.append(each.items[index])
            elif each.keyed is not None and expr.keywords and _has_key(each.keyed, expr.keywords):
                found.append(dict(each.keyed)[expr.keywords[0]])
            elif each.mapped is not None:
                found.append(each.mapped)
            else:
                found.append(each.element if each.element is not None else UNKNOWN)
        elif kind is Kind.ARRAY:
            found.append(Value((each,)))
        elif kind in {Kind.TENSOR, Kind.STR}:
            found.append(Value((Atom(kind),)))
        elif kind is Kind.UNKNOWN and expr.text == "slice" and expr.number >= 0:
            found.append(container(element=UNKNOWN, bound=expr.number))  # ``xs[:3]``
        else:
            found.append(UNKNOWN)
    return join(found)


def _has_key(keyed: tuple[tuple[str, Value], ...], key: tuple[str, ...]) -> bool:
    """``keyed`` (a dict's values by key) has the key of an ITEM's ``keywords``."""
    return any(known == key[0] for known, _ in keyed)


_NUMERIC = frozenset({Kind.NUMBER, Kind.BOOL})


def _binary(operator: str, left: Value, right: Value) -> Value:
    if left.top or right.top:
        return TOP
    found: list[Value] = []
    for a in left.atoms:
        for b in right.atoms:
            found.append(_pair(operator, a, b))
    return join(found)


def _pair(operator: str, a: Atom, b: Atom) -> Value:
    kinds = {a.kind, b.kind}
    if kinds <= _NUMERIC:
        if operator == "/":
            return NUMBER
        ints = arithmetic(operator, a.ints, b.ints) if kinds == {Kind.NUMBER} else None
        return number(ints)
    if Kind.UNKNOWN in kinds:
        return UNKNOWN
    if Kind.TENSOR in kinds:
        return TENSOR
    if Kind.ARRAY in kinds and kinds <= {Kind.ARRAY, *_NUMERIC}:
        arrays = [x for x in (a, b) if x.kind is Kind.ARRAY]
        return join(Value((x,)) for x in arrays)
    if kinds == {Kind.CONTAINER} and operator == "+":
        most = a.most + b.most if a.most is not None and b.most is not None else None
        return container(
            length=arithmetic("+", a.length, b.length),
            bound=most,
            element=join(v for v in (a.element, b.element) if v is not None),
            structural=a.structural and b.structural,  # two collections of a graph's variables
        )
    if kinds == {Kind.CONTAINER, Kind.NUMBER} and operator == "*":
        sequence, times = (a, b) if a.kind is Kind.CONTAINER else (b, a)
        return container(
            length=arithmetic("*", sequence.length, times.ints), element=sequence.element
        )
    if kinds == {Kind.STR} and operator == "+":
        return concatenated((Value((a,)), Value((b,))))
    if Kind.STR in kinds and operator in {"+", "%", "*"}:
        return STR
    return UNKNOWN


def _unary(operator: str, operand: Value) -> Value:
    if operator == "not":
        return BOOL
    if operand.top:
        return TOP
    found: list[Value] = []
    for each in operand.atoms:
        if each.kind in _NUMERIC:
            ints = each.ints if each.kind is Kind.NUMBER else None
            if operator == "-" and ints is not None:
                found.append(number({-i for i in ints}))
            elif operator == "+" and ints is not None:
                found.append(number(ints))
            else:
                found.append(NUMBER)
        elif each.kind in {Kind.TENSOR, Kind.ARRAY}:
            found.append(Value((each,)))
        else:
            found.append(UNKNOWN)
    return join(found)
