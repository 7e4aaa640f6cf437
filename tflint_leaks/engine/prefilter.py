"""Which names a loop mentions lead to project code a loop rule looks for.

The relevance prefilter (:mod:`.relevance`) keeps a function with a loop for the libcst pass
when one of the identifiers it mentions names something a loop rule cares about: a
``tf.function``, a model class or a class with ``tf.function`` methods, or a function or method
that does something each time it runs (builds, fits or predicts with a model, creates a
``tf.function``...), defined in the module, in a module it imports, or in a module that
defines a base of their classes (a method inherited from a base class two imports away
counts); and a method so named of any project class (the object a loop calls it on may be
handed in by a module this one never imports). With ``runs_graph``: the functions and methods
that run a TF1 graph each time.
"""

from __future__ import annotations

import weakref

from tflint_leaks.analysis import keras
from tflint_leaks.analysis.effects import GRAPH_EFFECTS, MAX_CHAIN, EffectKind, library_effect
from tflint_leaks.analysis.graph import RUN_IN_SESSION_METHODS, SESSION_RUN_METHODS
from tflint_leaks.analysis.index import ClassFacts, ModuleIndex
from tflint_leaks.analysis.inference import BUILTINS, callee_name, short_name
from tflint_leaks.analysis.lattice import FunctionRef
from tflint_leaks.analysis.names import resolve_dotted
from tflint_leaks.analysis.program import Program, program_of
from tflint_leaks.analysis.project import Definition, ProjectIndex
from tflint_leaks.analysis.symbolic import Expr, Op, is_super


class Prefilter:
    """The answers for one program, cached per module and name."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self._defined: dict[str, frozenset[str]] = {}
        self._visible: dict[str, frozenset[str]] = {}
        self._reachable: dict[str, list[ModuleIndex]] = {}
        self._interesting: dict[tuple[str, str, bool], bool] = {}
        #: :meth:`_answer`'s, by importing module, name and ``runs_graph``.
        self._answers: dict[tuple[str, str, bool], bool] = {}
        self._maybe: dict[tuple[str, str, bool, int], bool] = {}
        self._names: dict[str, dict[str, list[FunctionRef]]] = {}
        self._by_name: (
            tuple[
                dict[str, list[tuple[ModuleIndex, str]]], dict[str, list[tuple[ModuleIndex, str]]]
            ]
            | None
        ) = None
        self._traced_names: frozenset[str] | None = None
        self._model_classes: frozenset[str] | None = None

    def interesting_names(
        self, module: ModuleIndex, candidates: frozenset[str], *, runs_graph: bool = False
    ) -> frozenset[str]:
        """Which of ``candidates`` lead from ``module`` to project code a loop rule looks for
        (under their local import names too)."""
        return frozenset(name for name in candidates if self._answer(module, name, runs_graph))

    def first_interesting(
        self, module: ModuleIndex, names: frozenset[str], *, runs_graph: bool = False
    ) -> str | None:
        """One of ``names`` that :meth:`interesting_names` keeps, if any: a name answered
        already first, then the others in sorted order, stopping at the first that leads
        somewhere (a unit is kept for one such name; deciding the rest would only cost)."""
        answered = [
            name for name in names if self._answers.get((module.path, name, runs_graph)) is True
        ]
        if answered:
            return min(answered)
        for name in sorted(names):
            if self._answer(module, name, runs_graph):
                return name
        return None

    def _answer(self, module: ModuleIndex, name: str, runs_graph: bool) -> bool:
        key = (module.path, name, runs_graph)
        found = self._answers.get(key)
        if found is None:
            visible = self._visible_from(module)
            target = module.imports.get(name)
            local_target = target.rpartition(".")[2] if target is not None else None
            found = self._answers[key] = any(
                defined in visible and self._leads(module, defined, runs_graph)
                for defined in (name, local_target)
            ) or self._method_anywhere(name, runs_graph)
        return found

    def _method_anywhere(self, name: str, runs_graph: bool) -> bool:
        """A method called ``name`` of any project class leads somewhere: the object a loop
        calls it on may be one the module never imports the class of (huskarl's
        ``self.agent.act(state)``, the agent built by an example script and handed in)."""
        return any(
            "." in qualname and self._interesting_in(module, name, runs_graph)
            for module, qualname in self._tables()[0].get(name, ())
        )

    def _reachable_from(self, module: ModuleIndex) -> list[ModuleIndex]:
        """The module, the project modules it imports, and the modules that define the
        project bases of their classes (a method a class inherits from a base two imports
        away is its method too), sorted by path."""
        found = self._reachable.get(module.path)
        if found is None:
            project = self.program.project
            seen = {module.path: module}
            for source in [module, *project.dependencies(module)]:
                seen[source.path] = source
                for klass in source.classes.values():
                    for owner, _ in project.mro(source, klass)[1:]:
                        seen[owner.path] = owner
            found = self._reachable[module.path] = [seen[path] for path in sorted(seen)]
        return found

    def _visible_from(self, module: ModuleIndex) -> frozenset[str]:
        found = self._visible.get(module.path)
        if found is None:
            found = self._visible[module.path] = frozenset().union(
                *(self._defined_in(source) for source in self._reachable_from(module))
            )
        return found

    def _leads(self, module: ModuleIndex, name: str, runs_graph: bool) -> bool:
        return any(
            self._interesting_in(source, name, runs_graph)
            for source in self._reachable_from(module)
            if name in self._defined_in(source)
        )

    def _defined_in(self, source: ModuleIndex) -> frozenset[str]:
        """Every name :meth:`_interesting_in` can answer yes for in ``source``."""
        found = self._defined.get(source.path)
        if found is None:
            project = self.program.project
            found = self._defined[source.path] = frozenset(
                [
                    *source.tf_function_names,
                    *(qualname.rpartition(".")[2] for qualname in source.functions),
                    *(local for f in source.functions.values() for local in f.local_tf_functions),
                    *source.classes,
                    *(
                        attribute
                        for klass in source.classes.values()
                        for attribute in project.class_tf_functions(source, klass)
                    ),
                ]
            )
        return found

    def _interesting_in(self, source: ModuleIndex, name: str, runs_graph: bool) -> bool:
        """Whether ``source`` defines something called ``name`` that a loop rule cares about."""
        key = (source.path, name, runs_graph)
        found = self._interesting.get(key)
        if found is None:
            found = self._interesting[key] = self._decide(source, name, runs_graph)
        return found

    def _decide(self, source: ModuleIndex, name: str, runs_graph: bool) -> bool:
        program, project = self.program, self.program.project
        if runs_graph:
            return any(
                effect.kind is EffectKind.RUN_GRAPH
                for ref in self._named(source, name)
                if self._may(source, ref.qualname, runs_graph=True, hops=MAX_CHAIN - 1)
                for effect in program.summary(ref)
            )
        if name in source.tf_function_names:
            return True
        for ref in self._named(source, name):
            function = source.functions[ref.qualname]
            if function.tf_function is not None or function.local_tf_functions:
                return True
            if not self._may(source, ref.qualname, runs_graph=False, hops=MAX_CHAIN - 1):
                continue  # nothing it calls can do anything a rule looks for
            if any(e.kind not in GRAPH_EFFECTS for e in program.summary(ref)):
                return True
            if program.is_factory(ref):
                return True
        klass = source.classes.get(name)
        if klass is not None and (
            project.class_tf_functions(source, klass) or project.is_model_class(source, klass)
        ):
            return True
        for module, qualname in self._made_or_called(source, klass):
            if not self._may(module, qualname, runs_graph=False, hops=MAX_CHAIN - 1):
                continue
            ref = FunctionRef(module.path, qualname)
            if any(e.kind not in GRAPH_EFFECTS for e in program.summary(ref)):
                return True
        return any(
            name in project.class_tf_functions(source, klass) for klass in source.classes.values()
        )

    def _made_or_called(
        self, source: ModuleIndex, klass: ClassFacts | None
    ) -> list[tuple[ModuleIndex, str]]:
        """What making an instance of ``klass`` and calling one runs when the class inherits
        it: the first ``__init__`` and ``__call__`` of its bases (its own are among the
        functions its name leads to already)."""
        if klass is None:
            return []
        found = []
        for method in ("__init__", "__call__"):
            for module, owner in self.program.project.mro(source, klass):
                qualname = f"{owner.name}.{method}"
                if qualname in module.functions:
                    if owner is not klass:
                        found.append((module, qualname))
                    break
        return found

    def _may(self, source: ModuleIndex, qualname: str, *, runs_graph: bool, hops: int) -> bool:
        """Whether a function *may* do, through at most ``hops`` calls, what a loop rule looks
        for (with ``runs_graph``: run a TF1 graph), read from what its body calls by name
        alone: a cheap over-approximation of its summary, which is asked only when this says
        yes. A call by a name that no project function has and that no function is handed to
        is library code (its effect is known by its name) or a method of something that is
        not the project's; a call of anything else (a variable's callable, ``f()()``) may do
        anything."""
        key = (source.path, qualname, runs_graph, hops)
        found = self._maybe.get(key)
        if found is None:
            found = self._maybe[key] = self._may_body(source, qualname, runs_graph, hops)
        return found

    def _may_body(self, source: ModuleIndex, qualname: str, runs_graph: bool, hops: int) -> bool:
        function = source.functions[qualname]
        if function.tf_function is not None or self.program.project.traced(source, qualname):
            return False  # a tf.function's Python body runs only while it traces
        if not runs_graph and function.creates_tf_function:
            return True
        variables = {a.target for a in function.body.assigns} | set(function.params)
        wanted = _RUNS if runs_graph else _MODEL_METHODS
        for site in function.body.calls:
            call = site.call
            func = call.func
            method = call.method
            if method is not None and method[1] in wanted:
                return True
            if func.op is Op.REF:
                head = func.text.partition(".")[0]
                if head in variables and "." not in func.text:
                    return True  # a callable held in a variable
                qualified = resolve_dotted(func.text, source.imports)
                effect = _effect_of(qualified, call) if qualified is not None else None
                if not runs_graph and effect is not None:
                    return True
            elif func.op is not Op.ATTR:
                return True  # ``make()()``, ``builders[k]()``: anything
            name = callee_name(call)
            if name is None or name in self._tf_function_names():
                return True  # anything, or a parameter handed to a tf.function
            if name in self._model_class_names():
                return True  # constructs a project model class (``ActorNetwork(64)``)
            if hops > 0 and any(
                self._may(module, other, runs_graph=runs_graph, hops=hops - 1)
                for module, other in self._runs(source, qualname, call, name)
            ):
                return True
        return False

    def _runs(
        self, source: ModuleIndex, qualname: str, call: Expr, name: str
    ) -> list[tuple[ModuleIndex, str]]:
        """The project functions a call may run, found without values: a module's own or
        imported function or class by its name (through re-exports), ``self.m()`` and
        ``super().m()`` through the method resolution order of the class making the call (and
        its subclasses), and anything else by its last name (every project function so named,
        and those handed to a name so called)."""
        project = self.program.project
        func = call.func
        owner = source.classes.get(qualname.partition(".")[0]) if "." in qualname else None
        if func.op is Op.REF:
            head, _, rest = func.text.partition(".")
            if head == "self" and owner is not None and "." not in rest:
                return self._methods(source, owner, rest, after=False)
            if head != "self" and (head in source.imports or not rest):
                definition = project.local(source, func.text)
                if definition is None:
                    # Library code (its effect was judged by its name), or nothing known.
                    return (
                        [] if head in source.imports or head in BUILTINS else self._callable(name)
                    )
                return self._definition(definition.module, definition)
        elif owner is not None and is_super(func.parts[0]):
            return self._methods(source, owner, func.text, after=True)
        return self._callable(name)

    def _methods(
        self, module: ModuleIndex, klass: ClassFacts, name: str, *, after: bool
    ) -> list[tuple[ModuleIndex, str]]:
        """The methods ``name`` that ``self.name()`` may run in a method of ``klass`` (after
        ``klass`` in its MRO for ``super()``), overrides in its subclasses included; the
        callables handed to an attribute so named."""
        project = self.program.project
        found = list(self._handed_to(name))
        classes = (
            [(module, klass)] if after else [(module, klass), *project.subclasses(module, klass)]
        )
        for owner_module, owner in classes:
            order = project.mro(owner_module, owner)
            for mro_module, mro_class in order[1:] if after else order:
                qualname = f"{mro_class.name}.{name}"
                if qualname in mro_module.functions:
                    found.append((mro_module, qualname))
                    break
        return found

    def _definition(
        self, module: ModuleIndex, definition: Definition
    ) -> list[tuple[ModuleIndex, str]]:
        if definition.function is not None:
            return [(definition.module, definition.function.qualname)]
        if definition.klass is not None:
            init = [
                (owner_module, f"{owner.name}.__init__")
                for owner_module, owner in self.program.project.mro(
                    definition.module, definition.klass
                )
                if f"{owner.name}.__init__" in owner_module.functions
            ]
            return init[:1]
        return []

    def _tf_function_names(self) -> frozenset[str]:
        """The name of every ``tf.function`` of the project: decorated functions and methods,
        ``f = tf.function(g)`` at module level or in a body, ``self.f = tf.function(...)``."""
        if self._traced_names is None:
            found: set[str] = set()
            for module in self.program.project.modules():
                found.update(module.tf_function_names)
                for qualname, function in module.functions.items():
                    found.update(function.local_tf_functions)
                    if function.tf_function is not None:
                        found.add(qualname.rpartition(".")[2])
                for klass in module.classes.values():
                    found.update(klass.tf_functions)
            self._traced_names = frozenset(found)
        return self._traced_names

    def _model_class_names(self) -> frozenset[str]:
        """The name of every project class that is a Keras model (through project bases
        too): calling one by that name builds a model, whatever its ``__init__`` calls."""
        if self._model_classes is None:
            project = self.program.project
            self._model_classes = frozenset(
                name
                for module in project.modules()
                for name, klass in module.classes.items()
                if project.is_model_class(module, klass)
            )
        return self._model_classes

    def _callable(self, name: str) -> list[tuple[ModuleIndex, str]]:
        """The project functions a call by ``name`` may run: those so named (a class: its
        ``__init__``), and those handed to a parameter or a variable so named."""
        return [*self._tables()[0].get(name, ()), *self._handed_to(name)]

    def _handed_to(self, name: str) -> list[tuple[ModuleIndex, str]]:
        """The project functions handed to a parameter, variable or attribute ``name``."""
        return self._tables()[1].get(name, [])

    def _tables(self) -> tuple[Named, Named]:
        """Every project function by the name its calls use, and by the names it is handed
        to; built once."""
        if self._by_name is None:
            table: Named = {}
            for module in self.program.project.modules():
                for qualname in module.functions:
                    table.setdefault(short_name(qualname), []).append((module, qualname))
            handed: Named = {}
            for function, receivers in self.program.inference.handed().items():
                for receiver in receivers:
                    handed.setdefault(receiver, []).extend(table.get(function, ()))
            self._by_name = (table, handed)
        return self._by_name

    def _named(self, source: ModuleIndex, name: str) -> list[FunctionRef]:
        """The functions and methods of ``source`` called ``name`` (or defining a local
        ``tf.function`` called so), and the ``__init__`` and ``__call__`` of its class so
        called (``Agent()`` runs the one, ``metric(x)`` of an instance the other)."""
        table = self._names.get(source.path)
        if table is None:
            table = self._names[source.path] = {}
            for qualname, function in source.functions.items():
                found = FunctionRef(source.path, qualname)
                owner, _, short = qualname.rpartition(".")
                table.setdefault(short, []).append(found)
                if short in {"__init__", "__call__"} and owner in source.classes:
                    table.setdefault(owner, []).append(found)
                for local in function.local_tf_functions:
                    table.setdefault(local, []).append(found)
        return table.get(name, [])


#: Project functions by a name: (module, qualified name).
Named = dict[str, list[tuple[ModuleIndex, str]]]
_RUNS = SESSION_RUN_METHODS | RUN_IN_SESSION_METHODS
_MODEL_METHODS = keras.PREDICT_METHODS | keras.FIT_METHODS


def _effect_of(qualified: str, call: Expr) -> EffectKind | None:
    """A library call's effect a loop rule looks for (graph ops aside)."""
    found = library_effect(qualified, call)
    return None if found is None or found in GRAPH_EFFECTS else found


_PREFILTERS: weakref.WeakKeyDictionary[ProjectIndex, Prefilter] = weakref.WeakKeyDictionary()


def prefilter_of(project: ProjectIndex) -> Prefilter:
    """The one :class:`Prefilter` of a project's program."""
    found = _PREFILTERS.get(project)
    if found is None:
        found = _PREFILTERS[project] = Prefilter(program_of(project))
    return found
