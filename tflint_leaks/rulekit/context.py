"""The shared facts of one file, positioned at the node the walker is visiting.

Rules ask the context rather than computing facts themselves: what a name resolves to, whether
the code runs inside a ``tf.function`` (trace time only) or inside Python loops, what value an
expression has across loop iterations, which ``tf.function`` a call invokes, the statement, the
first-call guards and the tape blocks around the node. The walker keeps the stacks (frames,
loops, ancestors); expensive facts (per-scope assignments, tapes) are computed on first use.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
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
from tflint_leaks.analysis.loops import LoopNode, LoopParts
from tflint_leaks.analysis.names import TF_FUNCTION, resolve_dotted
from tflint_leaks.analysis.nodes import dotted, own_nodes
from tflint_leaks.analysis.project import ProjectIndex
from tflint_leaks.analysis.scope import ScopeFacts, collect_scope
from tflint_leaks.analysis.tapes import Tape, collect_tapes
from tflint_leaks.analysis.values import Evaluator
from tflint_leaks.diagnostics import RelatedRole

if TYPE_CHECKING:
    from tflint_leaks.rulekit.options import RuleOptions

Target = cst.CSTNode | Span
ScopeNode = cst.Module | cst.ClassDef | cst.FunctionDef | cst.Lambda


class FrameKind(enum.Enum):
    MODULE = "module"
    CLASS = "class"
    FUNCTION = "function"
    LAMBDA = "lambda"


@dataclass
class Frame:
    """A scope the walker is inside: the module, a class, a function or a lambda."""

    kind: FrameKind
    node: ScopeNode
    #: Index facts of the function (top-level functions and methods only).
    facts: FunctionFacts | None = None
    #: The body runs only while a ``tf.function`` traces.
    traced: bool = False
    class_name: str | None = None
    #: Python loops of this scope enclosing the current node, outermost first.
    loops: list[LoopNode] = field(default_factory=list)


@dataclass(frozen=True)
class TapeBlock:
    """A ``with`` block that records on a tape."""

    node: cst.With
    tape: Tape


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
    role: RelatedRole
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
    #: (node to replace, replacement).
    replacements: list[tuple[cst.CSTNode, Replacement]]


@dataclass
class Report:
    code: str
    target: Target
    message: str
    related: list[RelatedTarget] = field(default_factory=list)
    fix: FixTarget | None = None

    def relate(
        self, role: RelatedRole, message: str, target: Target, path: str | None = None
    ) -> Report:
        self.related.append(RelatedTarget(role, message, target, path))
        return self

    def with_fix(self, message: str, replacements: list[tuple[cst.CSTNode, Replacement]]) -> Report:
        """Offer a fix; whether it is safe is the rule's registry line (``fix``)."""
        self.fix = FixTarget(message, replacements)
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
        #: The nodes from the module down to the one being visited (the walker keeps it).
        self.ancestors: list[cst.CSTNode] = []
        #: The loop table's parts of every loop the walker has entered.
        self.loop_table: dict[LoopNode, LoopParts] = {}
        self.reports: list[Report] = []
        self._scopes: dict[ScopeNode, ScopeFacts] = {}
        self._tapes: dict[ScopeNode, list[Tape]] = {}
        self._loop_calls: dict[LoopNode, list[cst.Call]] = {}
        self._guards: dict[cst.If, bool] = {}
        self._globals: dict[ScopeNode, frozenset[str]] = {}

    # -- where we are --------------------------------------------------------------------------

    @property
    def frame(self) -> Frame:
        return self.frames[-1]

    @property
    def loops(self) -> list[LoopNode]:
        """Python loops enclosing the current node in the current scope, outermost first."""
        return self.frame.loops

    @property
    def parent(self) -> cst.CSTNode | None:
        """The parent of the node being visited."""
        return self.ancestors[-2] if len(self.ancestors) > 1 else None

    def _scope_ancestors(self) -> Iterator[cst.CSTNode]:
        """Ancestors of the current node inside the current scope, innermost first."""
        scope = self.frame.node
        for node in reversed(self.ancestors):
            if node is scope:
                return
            yield node

    @property
    def guarded(self) -> bool:
        """The node sits under an ``if`` that guards a first call (``if self.v is None:``,
        ``if not self.built:``, ``if not hasattr(self, "v"):``, ``if key not in cache:``)."""
        for node in self.ancestors:
            if isinstance(node, cst.If):
                found = self._guards.get(node)
                if found is None:
                    found = self._guards[node] = is_first_call_guard(node.test)
                if found:
                    return True
        return False

    def statement_around(self, node: cst.CSTNode) -> cst.CSTNode:
        """The simple statement containing ``node`` when it is the only one on its line, else
        ``node`` (a call in an ``if`` or ``while`` header is reported itself)."""
        for ancestor in self._scope_ancestors():
            if isinstance(ancestor, cst.SimpleStatementLine):
                return ancestor.body[0] if len(ancestor.body) == 1 else node
            if isinstance(ancestor, cst.BaseCompoundStatement):
                return node
        return node

    def open_withs(self) -> list[cst.With]:
        """The ``with`` blocks of the current scope around the node, outermost first."""
        return [n for n in reversed(list(self._scope_ancestors())) if isinstance(n, cst.With)]

    def global_names(self) -> frozenset[str]:
        """Names the current function declares ``global`` or ``nonlocal``."""
        node = self.frame.node
        names = self._globals.get(node)
        if names is None:
            names = self._globals[node] = frozenset(
                item.name.value
                for n in own_nodes(node)
                if isinstance(n, cst.Global | cst.Nonlocal)
                for item in n.names
            )
        return names

    @property
    def in_tf_function(self) -> bool:
        """Whether the current code runs only while some ``tf.function`` traces."""
        return any(frame.traced for frame in self.frames)

    def enclosing_function(self) -> Frame | None:
        for frame in reversed(self.frames):
            if frame.kind is FrameKind.FUNCTION:
                return frame
        return None

    def enclosing_class(self) -> Frame | None:
        for frame in reversed(self.frames):
            if frame.kind is FrameKind.CLASS:
                return frame
        return None

    # -- names ---------------------------------------------------------------------------------

    def resolve(self, node: cst.BaseExpression) -> str | None:
        """The canonical qualified name of a dotted expression through this file's imports."""
        name = dotted(node)
        return resolve_dotted(name, self.module_index.imports) if name is not None else None

    def alias(self, package: str) -> str | None:
        """A name this file imports ``package`` (canonical: ``tensorflow``, ``keras``) as, for
        fixes that insert code: ``tf`` for ``import tensorflow as tf``."""
        for local in self.module_index.imports:
            if resolve_dotted(local, self.module_index.imports) == package:
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
        node = (frame or self.frame).node
        facts = self._scopes.get(node)
        if facts is None:
            facts = self._scopes[node] = collect_scope(node)
        return facts

    def evaluator(self) -> Evaluator:
        """Evaluates expressions of the current scope relative to the enclosing loops."""
        return Evaluator(
            self.scope_facts(),
            frozenset(self.loops),
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

    def loop_calls(self, loop: LoopNode) -> list[cst.Call]:
        """Every call an enclosing loop makes per iteration (the loop table's parts that run
        each iteration), nested functions excluded."""
        calls = self._loop_calls.get(loop)
        if calls is None:
            parts = self.loop_table[loop]
            calls = [n for n in parts.iteration_nodes() if isinstance(n, cst.Call)]
            self._loop_calls[loop] = calls
        return calls

    def iteration_nodes(self, loop: LoopNode) -> Iterator[cst.CSTNode]:
        """Every node an enclosing loop evaluates per iteration, nested functions excluded."""
        return self.loop_table[loop].iteration_nodes()

    def tapes(self) -> list[Tape]:
        """The gradient tapes the current scope creates."""
        node = self.frame.node
        tapes = self._tapes.get(node)
        if tapes is None:
            tapes = self._tapes[node] = collect_tapes(node, self.resolve)
        return tapes

    def tape_blocks(self) -> list[TapeBlock]:
        """The tape ``with`` blocks of the current scope around the node, outermost first (a
        nested function's body runs later, outside them)."""
        blocks = []
        for node in self.open_withs():
            tape = next((t for t in self.tapes() if node in t.blocks), None)
            if tape is not None:
                blocks.append(TapeBlock(node, tape))
        return blocks

    def recording(self, name: str) -> TapeBlock | None:
        """The innermost enclosing block recording on the tape named ``name``."""
        return next((b for b in reversed(self.tape_blocks()) if b.tape.name == name), None)

    # -- reporting -----------------------------------------------------------------------------

    def report(self, code: str, target: Target, message: str) -> Report:
        report = Report(code, target, message)
        self.reports.append(report)
        return report


def is_first_call_guard(test: cst.BaseExpression) -> bool:
    """``test`` guards code that should run on the first call only: a comparison with ``None``,
    a ``not in`` test, ``hasattr``, or ``not <name or attribute>``."""
    for node in (test, *own_nodes(test)):
        if isinstance(node, cst.Comparison) and any(
            isinstance(c.comparator, cst.Name) and c.comparator.value == "None"
            for c in node.comparisons
        ):
            return True
        if isinstance(node, cst.Comparison) and any(
            isinstance(c.operator, cst.NotIn) for c in node.comparisons
        ):
            return True
        if isinstance(node, cst.Call) and dotted(node.func) == "hasattr":
            return True
        if (
            isinstance(node, cst.UnaryOperation)
            and isinstance(node.operator, cst.Not)
            and isinstance(node.expression, cst.Attribute | cst.Name | cst.Subscript)
        ):
            return True
    return False
