"""Which names a loop mentions lead to project code a loop rule looks for.

The relevance prefilter (:mod:`.relevance`) keeps a function with a loop for the libcst pass
when one of the identifiers it mentions names something a loop rule cares about: a
``tf.function``, a model class or a class with ``tf.function`` methods, or a function or method
that does something each time it runs (builds, fits or predicts with a model, creates a
``tf.function``...), defined in the module or in any module it imports, directly or through
others (a method inherited from a base class two imports away counts). With ``runs_graph``:
the functions and methods that run a TF1 graph each time they run.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator

from tflint_leaks.analysis.effects import GRAPH_EFFECTS, EffectKind
from tflint_leaks.analysis.index import ModuleIndex
from tflint_leaks.analysis.lattice import FunctionRef
from tflint_leaks.analysis.program import Program, program_of
from tflint_leaks.analysis.project import ProjectIndex


class Prefilter:
    """The answers for one program, cached per module and name."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self._defined: dict[str, frozenset[str]] = {}
        self._visible: dict[str, frozenset[str]] = {}
        self._reachable: dict[str, list[ModuleIndex]] = {}
        self._interesting: dict[tuple[str, str, bool], bool] = {}

    def interesting_names(
        self, module: ModuleIndex, candidates: frozenset[str], *, runs_graph: bool = False
    ) -> frozenset[str]:
        """Which of ``candidates`` lead from ``module`` to project code a loop rule looks for
        (under their local import names too)."""
        visible = self._visible_from(module)
        local_targets = {
            local: target.rpartition(".")[2] for local, target in module.imports.items()
        }
        found: set[str] = set()
        for name in candidates:
            for defined in (name, local_targets.get(name)):
                if defined in visible and self._leads(module, defined, runs_graph):
                    found.add(name)
                    break
        return frozenset(found)

    def _reachable_from(self, module: ModuleIndex) -> list[ModuleIndex]:
        """The module and every project module its imports reach, sorted by path."""
        found = self._reachable.get(module.path)
        if found is None:
            project = self.program.project
            seen = {module.path: module}
            todo = [module]
            while todo:
                for dependency in project.dependencies(todo.pop()):
                    if dependency.path not in seen:
                        seen[dependency.path] = dependency
                        todo.append(dependency)
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
                for effect in program.summary(ref)
            )
        if name in source.tf_function_names:
            return True
        for ref in self._named(source, name):
            function = source.functions[ref.qualname]
            if function.tf_function is not None or function.local_tf_functions:
                return True
            if any(e.kind not in GRAPH_EFFECTS for e in program.summary(ref)):
                return True
            if program.is_factory(ref):
                return True
        klass = source.classes.get(name)
        if klass is not None and (
            project.class_tf_functions(source, klass) or project.is_model_class(source, klass)
        ):
            return True
        return any(
            name in project.class_tf_functions(source, klass) for klass in source.classes.values()
        )

    @staticmethod
    def _named(source: ModuleIndex, name: str) -> Iterator[FunctionRef]:
        """The functions and methods of ``source`` called ``name`` (or defining a local
        ``tf.function`` called so)."""
        for qualname, function in source.functions.items():
            if qualname.rpartition(".")[2] == name or name in function.local_tf_functions:
                yield FunctionRef(source.path, qualname)


_PREFILTERS: weakref.WeakKeyDictionary[ProjectIndex, Prefilter] = weakref.WeakKeyDictionary()


def prefilter_of(project: ProjectIndex) -> Prefilter:
    """The one :class:`Prefilter` of a project's program."""
    found = _PREFILTERS.get(project)
    if found is None:
        found = _PREFILTERS[project] = Prefilter(program_of(project))
    return found
