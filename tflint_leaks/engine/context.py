"""The shared facts of one file, positioned at the node the walker is visiting.

Rules ask the context rather than computing facts themselves: what a name resolves to, whether
the code runs inside a ``tf.function`` (trace time only) or inside Python loops, what value an
expression has across loop iterations, and which ``tf.function`` a call invokes. Expensive facts
(per-scope assignments) are computed on first use only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from tflint_leaks.analysis import keras
from tflint_leaks.analysis.index import (
    ClassFacts,
    FunctionFacts,
    ModuleIndex,
    Span,
    TfFunctionFacts,
)
from tflint_leaks.analysis.names import TF_FUNCTION, resolve_dotted
from tflint_leaks.analysis.project import ProjectIndex
from tflint_leaks.analysis.scope import ScopeFacts, collect_scope, dotted, own_nodes
from tflint_leaks.analysis.tapes import Tape, collect_tapes
from tflint_leaks.analysis.values import Evaluator
from tflint_leaks.diagnostics import Applicability

if TYPE_CHECKING:
    from tflint_leaks.config import RuleOptions
    from tflint_leaks.rules.base import Rule

Target = cst.CSTNode | Span


@dataclass
class Frame:
    """A scope the walker is inside: the module, a class, a function or a lambda."""

    kind: str
    node: cst.CSTNode
    #: Index facts of the function (top-level functions and methods only).
    facts: FunctionFacts | None = None
    #: The body runs only while a ``tf.function`` traces.
    traced: bool = False
    class_name: str | None = None
    #: Python loops of this scope enclosing the current node, outermost first.
    loops: list[cst.CSTNode] = field(default_factory=list)


@dataclass(frozen=True)
class Callee:
    """The ``tf.function`` a call invokes."""

    display: str
    facts: TfFunctionFacts
    function: FunctionFacts | None
    path: str
    #: For ``obj.method(...)``: the receiver's class, when the receiver is a known instance.
    klass: ClassFacts | None = None


@dataclass
class RelatedTarget:
    role: str
    message: str
    target: Target
    path: str | None


@dataclass(frozen=True)
class InsertStatement:
    """A fix replacement that keeps the target statement and inserts ``code`` (one simple
    statement) on its own line before it, or after it with ``after=True``, at the target's
    indentation: ``(loop.body.body[0], InsertStatement("tf.keras.backend.clear_session()"))``
    or ``(last_use, InsertStatement("del tape", after=True))``."""

    code: str
    after: bool = False


#: What a fix puts in place of a node: a node, source code, or an inserted statement.
Replacement = cst.CSTNode | str | InsertStatement


@dataclass
class FixTarget:
    message: str
    applicability: Applicability
    #: (node to replace, replacement).
    replacements: list[tuple[cst.CSTNode, Replacement]]


@dataclass
class Report:
    rule: type[Rule]
    target: Target
    message: str
    related: list[RelatedTarget] = field(default_factory=list)
    fix: FixTarget | None = None

    def relate(self, role: str, message: str, target: Target, path: str | None = None) -> Report:
        self.related.append(RelatedTarget(role, message, target, path))
        return self

    def with_fix(
        self,
        message: str,
        applicability: Applicability,
        replacements: list[tuple[cst.CSTNode, Replacement]],
    ) -> Report:
        self.fix = FixTarget(message, applicability, replacements)
        return self


class FileContext:
    def __init__(
        self,
        path: str,
        module_index: ModuleIndex,
        project: ProjectIndex,
        options: RuleOptions,
    ) -> None:
        self.path = path
        self.module_index = module_index
        self.project = project
        self.options = options
        self.frames: list[Frame] = []
        self.reports: list[Report] = []
        self._scopes: dict[int, ScopeFacts] = {}
        self._tapes: dict[int, list[Tape]] = {}
        self._loop_calls: dict[int, list[cst.Call]] = {}

    # -- where we are --------------------------------------------------------------------------

    @property
    def frame(self) -> Frame:
        return self.frames[-1]

    @property
    def loops(self) -> list[cst.CSTNode]:
        """Python loops enclosing the current node in the current scope, outermost first."""
        return self.frame.loops

    @property
    def in_tf_function(self) -> bool:
        """Whether the current code runs only while some ``tf.function`` traces."""
        return any(frame.traced for frame in self.frames)

    def enclosing_function(self) -> Frame | None:
        for frame in reversed(self.frames):
            if frame.kind == "function":
                return frame
        return None

    def enclosing_class(self) -> Frame | None:
        for frame in reversed(self.frames):
            if frame.kind == "class":
                return frame
        return None

    # -- names ---------------------------------------------------------------------------------

    def resolve(self, node: cst.BaseExpression) -> str | None:
        """The canonical qualified name of a dotted expression through this file's imports."""
        name = dotted(node)
        return resolve_dotted(name, self.module_index.imports) if name is not None else None

    def tensorflow_alias(self) -> str | None:
        """The name this file imports TensorFlow as (``tf``), for fixes that insert code."""
        for local, target in self.module_index.imports.items():
            if target == "tensorflow":
                return local
        return None

    def is_tf_function_call(self, node: cst.Call) -> bool:
        """``tf.function(fn, ...)`` (not the bare decorator factory ``tf.function(...)``)."""
        return (
            bool(node.args)
            and node.args[0].keyword is None
            and (self.resolve(node.func) == TF_FUNCTION)
        )

    def is_tf_function_decorator(self, decorator: cst.Decorator) -> bool:
        expression = decorator.decorator
        if isinstance(expression, cst.Call):
            expression = expression.func
        return self.resolve(expression) == TF_FUNCTION

    # -- values --------------------------------------------------------------------------------

    def scope_facts(self, frame: Frame | None = None) -> ScopeFacts:
        frame = frame or self.frame
        facts = self._scopes.get(id(frame.node))
        if facts is None:
            node = frame.node
            assert isinstance(node, cst.Module | cst.ClassDef | cst.FunctionDef | cst.Lambda)
            facts = self._scopes[id(node)] = collect_scope(node)
        return facts

    def evaluator(self) -> Evaluator:
        """Evaluates expressions of the current scope relative to the enclosing loops."""
        return Evaluator(
            self.scope_facts(),
            frozenset(id(loop) for loop in self.loops),
            self.resolve,
            self.module_index.int_constants,
        )

    # -- tf.functions --------------------------------------------------------------------------

    def tf_function_callee(self, node: cst.Call) -> Callee | None:
        """The ``tf.function`` that ``node`` calls, if the project index knows it."""
        name = dotted(node.func)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        if not rest:
            return self._callee_by_name(head)
        if head == "self":
            klass = self._own_class()
            if klass is not None and "." not in rest:
                return self._method_callee(self.module_index, klass, rest, name)
            return None
        receiver_class = self.instance_class(head)
        if receiver_class is not None and "." not in rest:
            module, klass = receiver_class
            return self._method_callee(module, klass, rest, name, instance=True)
        qualified = resolve_dotted(name, self.module_index.imports)
        if qualified is None:
            return None
        definition = self.project.lookup(qualified, self.module_index)
        if definition is None or definition.tf_function is None:
            return None
        return Callee(name, definition.tf_function, definition.function, definition.module.path)

    def _callee_by_name(self, name: str) -> Callee | None:
        for frame in reversed(self.frames):
            if frame.facts is not None and name in frame.facts.local_tf_functions:
                return Callee(name, frame.facts.local_tf_functions[name], None, self.path)
        module = self.module_index
        if name in module.tf_function_names:
            return Callee(name, module.tf_function_names[name], None, self.path)
        function = module.functions.get(name)
        if function is not None:
            if function.tf_function is None:
                return None
            return Callee(name, function.tf_function, function, self.path)
        qualified = module.imports.get(name)
        if qualified is None:
            return None
        definition = self.project.lookup(qualified, module)
        if definition is None or definition.tf_function is None:
            return None
        return Callee(name, definition.tf_function, definition.function, definition.module.path)

    def _own_class(self) -> ClassFacts | None:
        frame = self.enclosing_class()
        if frame is None or frame.class_name is None:
            return None
        return self.module_index.classes.get(frame.class_name)

    def _method_callee(
        self,
        module: ModuleIndex,
        klass: ClassFacts,
        attribute: str,
        display: str,
        *,
        instance: bool = False,
    ) -> Callee | None:
        facts = self.project.class_tf_functions(module, klass).get(attribute)
        if facts is None:
            return None
        function = module.functions.get(f"{klass.name}.{attribute}")
        return Callee(display, facts, function, module.path, klass if instance else None)

    def project_function(self, node: cst.Call) -> tuple[ModuleIndex, FunctionFacts] | None:
        """The project function or method (``self.method``) that ``node`` calls, if any."""
        name = dotted(node.func)
        if name is None:
            return None
        module = self.module_index
        head, _, rest = name.partition(".")
        if head == "self":
            klass = self._own_class()
            facts = module.functions.get(f"{klass.name}.{rest}") if klass is not None else None
            return (module, facts) if facts is not None else None
        if not rest and name in module.functions:
            return module, module.functions[name]
        qualified = resolve_dotted(name, module.imports)
        if qualified is None:
            return None
        definition = self.project.lookup(qualified, module)
        if definition is None or definition.function is None:
            return None
        return definition.module, definition.function

    def project_class(self, node: cst.BaseExpression) -> tuple[ModuleIndex, ClassFacts] | None:
        """The project class that ``node`` (a callee expression) names, if any."""
        name = dotted(node)
        if name is None:
            return None
        module = self.module_index
        if "." not in name and name in module.classes:
            return module, module.classes[name]
        qualified = resolve_dotted(name, module.imports)
        if qualified is None:
            return None
        definition = self.project.lookup(qualified, module)
        if definition is None or definition.klass is None or definition.function is not None:
            return None
        return definition.module, definition.klass

    def instance_class(self, name: str) -> tuple[ModuleIndex, ClassFacts] | None:
        """The class of local variable ``name`` when every assignment constructs one project
        class (``trainer = Trainer(...)``)."""
        assignments = self.scope_facts().assignments.get(name)
        if not assignments:
            return None
        found: tuple[ModuleIndex, ClassFacts] | None = None
        for assignment in assignments:
            value = assignment.value
            if not isinstance(value, cst.Call):
                return None
            klass = self.project_class(value.func)
            if klass is None or (found is not None and found[1] is not klass[1]):
                return None
            found = klass
        return found

    # -- Keras models, cleanup, tapes -------------------------------------------------------------

    def builds_model(self, node: cst.Call) -> bool:
        """``node`` constructs or loads a Keras model: a Keras constructor or loader, a project
        model class, or a project factory that returns a model."""
        resolved = self.resolve(node.func)
        if resolved is not None and keras.builds_model(resolved):
            return True
        klass = self.project_class(node.func)
        if klass is not None:
            return self.project.is_model_class(*klass)
        function = self.project_function(node)
        return function is not None and function[1].returns_model

    def is_model(self, node: cst.BaseExpression) -> bool:
        """``node`` is known to be a Keras model: a call that builds one, a name of this scope
        that only ever holds one, or ``self.x`` where the class assigns a model to ``x``."""
        if isinstance(node, cst.Call):
            return self.builds_model(node)
        if isinstance(node, cst.Name):
            assignments = self.scope_facts().assignments.get(node.value)
            return bool(assignments) and all(
                isinstance(a.value, cst.Call) and self.builds_model(a.value)
                for a in assignments or ()
            )
        name = dotted(node)
        klass = self._own_class()
        if name is None or klass is None or not name.startswith("self."):
            return False
        return name.removeprefix("self.") in klass.model_attributes

    def cleans_up(self, node: cst.Call) -> bool:
        """``node`` calls ``clear_session()``, directly or through a project function."""
        if self.resolve(node.func) in keras.CLEAR_SESSION:
            return True
        function = self.project_function(node)
        return function is not None and function[1].cleans_up

    def loop_calls(self, loop: cst.CSTNode) -> list[cst.Call]:
        """Every call a loop makes per iteration (its body, a ``while`` test, a comprehension's
        element and conditions), nested functions excluded."""
        calls = self._loop_calls.get(id(loop))
        if calls is None:
            if isinstance(loop, cst.CompFor):
                parts: list[cst.CSTNode] = [c.test for c in loop.ifs]
            elif isinstance(loop, cst.While):
                parts = [loop.test, loop.body]
            else:
                assert isinstance(loop, cst.For)
                parts = [loop.body]
            calls = [
                n for part in parts for n in (part, *own_nodes(part)) if isinstance(n, cst.Call)
            ]
            self._loop_calls[id(loop)] = calls
        return calls

    def tapes(self) -> list[Tape]:
        """The gradient tapes the current scope creates."""
        node = self.frame.node
        tapes = self._tapes.get(id(node))
        if tapes is None:
            assert isinstance(node, cst.Module | cst.ClassDef | cst.FunctionDef | cst.Lambda)
            tapes = self._tapes[id(node)] = collect_tapes(node, self.resolve)
        return tapes

    # -- reporting -----------------------------------------------------------------------------

    def report(self, rule: Rule, target: Target, message: str) -> Report:
        report = Report(type(rule), target, message)
        self.reports.append(report)
        return report
