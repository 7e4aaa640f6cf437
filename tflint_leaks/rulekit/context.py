"""The shared facts of one file, positioned at the node the walker is visiting.

Rules ask the context rather than computing facts themselves: what a name resolves to, whether
the code runs inside a ``tf.function`` (trace time only) or inside Python loops, what value an
expression has across loop iterations, which ``tf.function`` a call invokes, the statement, the
first-call guards and the tape blocks around the node. The walker keeps the stacks (frames,
loops, ancestors); expensive facts (per-scope assignments, tapes) are computed on first use.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import TYPE_CHECKING

import libcst as cst

from tflint_leaks.analysis.branches import heads
from tflint_leaks.analysis.effects import Effect, EffectKind, TfFunctionTarget
from tflint_leaks.analysis.facts import Span, first_run_state, within
from tflint_leaks.analysis.index import ClassFacts, FunctionFacts, ModuleIndex, TfFunctionFacts
from tflint_leaks.analysis.inference import TargetKind, Where
from tflint_leaks.analysis.lattice import ArrayOrigin, ClassRef, FunctionRef, Kind, Value
from tflint_leaks.analysis.library import NAMESPACE, RANGES
from tflint_leaks.analysis.loops import LoopNode, LoopParts
from tflint_leaks.analysis.names import TF_FUNCTION, TYPING_CAST, resolve_dotted
from tflint_leaks.analysis.nodes import descendants, dotted, own_nodes
from tflint_leaks.analysis.program import Program, program_of
from tflint_leaks.analysis.project import ProjectIndex
from tflint_leaks.analysis.raising import raises, unbound_names
from tflint_leaks.analysis.repetition import EntryPoint, runs_inside, script_entry
from tflint_leaks.analysis.repetition import entry_point as find_entry_point
from tflint_leaks.analysis.scope import (
    ScopeFacts,
    bound_names,
    collect_scope,
    defined_in_block,
    loop_target_names,
    nested_definitions,
)
from tflint_leaks.analysis.singletons import Singletons
from tflint_leaks.analysis.symbolic import Expr, ref
from tflint_leaks.analysis.symbolic_cst import from_cst
from tflint_leaks.analysis.tapes import Tape, collect_tapes
from tflint_leaks.analysis.values import (
    Evaluator,
    break_bound,
    callee_of,
    counted_breaks,
    counted_runs,
    steadily_counts,
)
from tflint_leaks.analysis.writes import Write
from tflint_leaks.diagnostics import RelatedRole
from tflint_leaks.frameworks import Frameworks
from tflint_leaks.source import NOTEBOOK_SUFFIX

if TYPE_CHECKING:
    from tflint_leaks.rulekit.options import RuleOptions

Target = cst.CSTNode | Span
#: The span given to the call a rule asks about (its effects with no chain are the call itself).
_HERE = Span(0, 0, 0, 0)
ScopeNode = cst.Module | cst.ClassDef | cst.FunctionDef | cst.Lambda
#: How many times a guard ``if step % N == 0:`` divides the runs of what it guards when ``N``
#: is not known: 1, the guard is not counted (the loop's count stays an upper bound). A guess
#: such as 10 would let a loop of 100 iterations look like 10 runs, below
#: ``max-loop-iterations``, for an ``N`` that may well be 1 (see DEVELOPING.md, "Frequency").
UNKNOWN_PERIOD = 1
#: What a guard says of how often its block runs: one time in ``N`` (its period), or on a few
#: iterations of one loop at most, with how many (the period is then that loop's count over
#: them, 0 when the count is not known).
Guard = tuple[int, tuple[LoopNode, int] | None]


class FrameKind(Singletons):
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
    #: For a function that runs only because ``tf.function``s of its module call it: their
    #: qualnames (empty for a ``tf.function`` itself, or code that is not traced).
    traced_by: tuple[str, ...] = ()
    class_name: str | None = None
    #: Python loops of this scope enclosing the current node, outermost first.
    loops: list[LoopNode] = field(default_factory=list)
    #: The first line of a top-level function whose name its module defines more than once
    #: (which of the definitions this is); None otherwise.
    line: int | None = None


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

    @property
    def params(self) -> tuple[str, ...]:
        """The function's parameters (``self`` excluded), when the index knows it."""
        return self.function.params if self.function is not None else ()


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


#: Kinds of values that hold no model (:meth:`FileContext.plain_data`).
_PLAIN_DATA = frozenset({Kind.NONE, Kind.BOOL, Kind.NUMBER, Kind.STR, Kind.TENSOR, Kind.ARRAY})


#: What a dict's value may be for the dict to hold a model.
_HOLDERS = frozenset({Kind.MODEL, Kind.INSTANCE})


def _plain(value: Value) -> bool:
    """``value`` is plain data: of :data:`_PLAIN_DATA` kinds, or a container of such items
    (a list of scores; a dict of such keys whose values hold no model or instance: not
    ``{"model": model}``, but metrics read from a ``History``, whatever they are)."""
    atoms = value.informative
    return (
        not value.top
        and bool(atoms)
        and all(
            a.kind in _PLAIN_DATA
            or (
                a.kind is Kind.CONTAINER
                and a.element is not None
                and _plain(a.element)
                and (a.mapped is None or not _HOLDERS & {m.kind for m in a.mapped.informative})
            )
            for a in atoms
        )
    )


class FileContext:
    def __init__(
        self,
        path: str,
        module_index: ModuleIndex,
        project: ProjectIndex,
        options: RuleOptions,
        source: str | None = None,
    ) -> None:
        self.path = path
        #: The whole file's text (the libcst pass may parse only part of it), when given.
        self.source = source
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
        self._unreached: dict[cst.CSTNode, frozenset[int]] = {}
        #: Each loop's trip count, asked once (a loop's count does not depend on who asks).
        self._trips: dict[LoopNode, int | None] = {}
        #: Loops whose count is the most items of an iterable of several (or unknown) lengths.
        self._most: set[LoopNode] = set()
        self._tapes: dict[ScopeNode, list[Tape]] = {}
        self._loop_calls: dict[LoopNode, list[cst.Call]] = {}
        #: The whole-program answers already given, by question, node and scope (rules ask
        #: several times about one call).
        self._answers: dict[tuple[str, int | str, int], object] = {}
        self._guards: dict[cst.If, bool] = {}
        #: Each guard's period, and the loop whose counter it tests (``if j == 0:``), if any.
        self._periods: dict[cst.If, Guard] = {}
        #: The same for the ``if`` statements that leave early (``if ...: continue``).
        self._exits: dict[cst.If, Guard | None] = {}
        #: :meth:`framework_calls`'s, by file and function.
        self._frameworks: dict[tuple[str, str], EntryPoint | None] = {}
        self._body_nodes: dict[ScopeNode, list[cst.CSTNode]] = {}
        self._globals: dict[ScopeNode, frozenset[str]] = {}
        #: The module's definitions inside blocks (:func:`~tflint_leaks.analysis.scope.
        #: nested_definitions`), and what each statement binds, once asked.
        self._nested: frozenset[str] | None = None
        self._bound: dict[cst.CSTNode, frozenset[str]] = {}
        #: The names the module reads and nothing in it binds (:func:`~tflint_leaks.analysis.
        #: raising.unbound_names`), once asked.
        self._unbound: frozenset[str] | None = None

    # -- where we are --------------------------------------------------------------------------

    @property
    def frame(self) -> Frame:
        return self.frames[-1]

    @property
    def loops(self) -> list[LoopNode]:
        """The Python loops of the current scope that repeat the current node, outermost
        first: those enclosing it, except a loop in which it runs on one iteration at most
        (:meth:`_once_in`)."""
        lexical = self.frame.loops
        if not lexical:
            return lexical
        key = ("loops", id(self.ancestors[-1]), id(lexical[-1]))
        found = self._answers.get(key)
        if found is None:
            found = self._answers[key] = self._repeating(lexical)
        assert isinstance(found, list)
        return found

    def _repeating(self, lexical: list[LoopNode]) -> list[LoopNode]:
        # A comprehension's ``for`` is not an ancestor of its element: no guard between them.
        position = {id(node): index for index, node in enumerate(self.ancestors)}
        kept: list[LoopNode] = []
        for index, loop in enumerate(lexical):
            start = position.get(id(loop))
            if start is None or not isinstance(loop, cst.For | cst.While):
                kept.append(loop)
                continue
            stop = next(
                (position[id(inner)] for inner in lexical[index + 1 :] if id(inner) in position),
                len(self.ancestors),
            )
            if not self._once_in(loop, self.ancestors[start + 1 : stop + 1]):
                kept.append(loop)
        return kept

    def _once_in(self, loop: LoopNode, below: list[cst.CSTNode]) -> bool:
        """What ``below`` leads to (the nodes from ``loop`` down to the next loop or the current
        node) runs on one iteration of ``loop`` at most: it is in the block of an ``if`` that
        tests that some state is not set yet and sets it (``if not player: player =
        get_player()``: the first iteration), that ends by leaving the loop (``break``,
        ``return``, ``raise``), or that tests what ends a ``while not done:`` loop (``if done:``,
        with nothing setting ``done`` from there on: the last iteration)."""
        for node, child in pairwise(below):
            if not isinstance(node, cst.If) or child is not node.body:
                continue
            states = set(first_run_state(from_cst(node.test)))
            if states and any(
                isinstance(each, cst.AssignTarget) and dotted(each.target) in states
                for each in own_nodes(node.body)
            ):
                return True
            last = node.body.body[-1] if node.body.body else None
            if isinstance(last, cst.SimpleStatementLine) and isinstance(
                last.body[-1], cst.Break | cst.Return | cst.Raise
            ):
                return True
            if _ends_while(loop, node):
                return True
        return False

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
                    found = self._guards[node] = bool(first_run_state(from_cst(node.test)))
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
    def frameworks(self) -> Frameworks:
        """The TensorFlow and Keras this file runs: its project's pins and what its code says
        (see :meth:`tflint_leaks.analysis.project.ProjectIndex.world`)."""
        return self.project.world(self.module_index, self.options.frameworks)

    @property
    def graph_mode(self) -> bool:
        """Whether this file runs in TF1-style graph mode (see
        :meth:`tflint_leaks.analysis.project.ProjectIndex.graph_mode`)."""
        return self.project.graph_mode(self.module_index, self.options.frameworks)

    def runs_eagerly(self, effect: Effect) -> bool:
        """Whether the code at ``effect`` runs eagerly as far as its own module says: importing
        it does not turn eager execution off (:meth:`~tflint_leaks.analysis.project.
        ProjectIndex.turns_eager_off`). A module that does has done so before any of its code
        runs, whichever module's loop calls it (reinforcement-learning-keras: the base class's
        episode loop calls a subclass's ``predict`` in a module that calls
        ``disable_eager_execution()``)."""
        module = self.project.module_at(effect.path)
        return module is None or not self.project.turns_eager_off(module)

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

    def makes_keras_layer(self, node: cst.Call) -> bool:
        """``node`` makes an instance of a project Keras layer (a class deriving from a Keras
        class, directly or through project bases, that is no model): what its constructor
        builds (a ``Sequential`` of its sub-layers) is part of the layer."""
        value = self.type_of(node)
        classes = value.classes if value.kind is Kind.INSTANCE else ()
        program = self.program
        for made in classes:
            found = program.inference.klass(made)
            if found is None or not self.project.is_keras_class(*found):
                return False
            if self.project.is_model_class(*found):
                return False
        return bool(classes)

    def in_keras_class(self) -> bool:
        """The current code is part of a Keras class (a layer or a model), directly or through
        project bases (``class UNet(BaseModel)`` with ``class BaseModel(tf.keras.Model)``)."""
        frame = self.enclosing_class()
        klass = self.module_index.classes.get(frame.class_name or "") if frame else None
        return klass is not None and self.project.is_keras_class(self.module_index, klass)

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
        """``tf.function(fn, ...)`` or ``tf.function(func=fn)`` (not the bare decorator
        factory ``tf.function(input_signature=...)``)."""
        wraps = (bool(node.args) and node.args[0].keyword is None) or any(
            arg.keyword is not None and arg.keyword.value == "func" for arg in node.args
        )
        return wraps and self.resolve(node.func) == TF_FUNCTION

    def is_tf_function_decorator(self, decorator: cst.Decorator) -> bool:
        """``@tf.function``, ``@tf.function(...)``, an alias of either (``tff =
        functools.partial(tf.function, ...)``), or ``@functools.partial(tf.function, ...)``, also
        given through ``typing.cast(T, ...)``, which returns it."""
        expression = decorator.decorator
        while (
            isinstance(expression, cst.Call)
            and len(expression.args) == 2
            and self.resolve(expression.func) == TYPING_CAST
        ):
            expression = expression.args[1].value
        if isinstance(expression, cst.Call):
            if self.resolve(expression.func) == "functools.partial":
                first = expression.args[0].value if expression.args else None
                return first is not None and self.resolve(first) == TF_FUNCTION
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
        """Evaluates how expressions of the current scope vary across the enclosing loops."""
        return Evaluator(
            self.scope_facts(),
            frozenset(self.loops),
            self.resolve,
            self.items,
            self.returns_number,
            self._runs_at_most(),
            self._reshaped,
        )

    def _reshaped(self, iterable: cst.BaseExpression) -> bool:
        """Iterating ``iterable`` gives batches whose shapes change from one to the next: a
        ``tf.data`` pipeline of batches padded to their own longest element."""
        value = self.value(from_cst(iterable))
        atoms = value.informative
        return (
            bool(atoms) and not value.top and all(a.kind is Kind.DATASET and a.flag for a in atoms)
        )

    def _runs_at_most(self) -> int | None:
        """How many times the loops of the current scope run the current node at most: the
        product of their trip counts, when each is known. A loop over a model's variables or
        the machine's devices, which :meth:`trip_count` counts as one, bounds nothing here."""
        total = 1
        for loop in self.loops:
            count = self.trip_count(loop)
            if count is None:
                return None
            over = loop.iter if isinstance(loop, cst.For | cst.CompFor) else None
            if over is not None and self.value(from_cst(over)).structural:
                return None
            total *= count
        return total

    def trip_count(self, loop: LoopNode) -> int | None:
        """How many times a loop of the current scope runs at most, when that is known: the
        items of what it iterates (``range(1, FOLDS + 1)``, a literal list, ``zip`` and
        ``enumerate`` of those, a K-fold split, ``dict.items()``...), a counter that
        ``break``s it after a known number, or one that every iteration adds to and the
        ``while`` test keeps below a known limit (``while n < 20:`` ... ``n += 1``). A loop
        over a model's or graph's own variables, weights or layers (``for var in
        tf.trainable_variables()``), or over the machine's devices (``for gpu in
        tf.config.list_physical_devices("GPU")``), counts as one: it runs as many times as the
        model or the machine has them, a number the model or the hardware fixes, not the data
        or the time the program runs; what repeats it is what encloses it."""
        if loop in self._trips:
            return self._trips[loop]
        counts: list[int | None] = []
        items: int | None = None
        if isinstance(loop, cst.For | cst.CompFor):
            iterated = self.value(from_cst(loop.iter))
            # Once per variable or layer of a model: as many as the model has, whatever the
            # data; counted as one run of what encloses it.
            items = 1 if iterated.structural else iterated.bound
            counts.append(items)
            if not iterated.structural and iterated.lengths != frozenset({items}):
                items = None  # the most items of several lengths, or of an unknown one
        if not isinstance(loop, cst.CompFor):
            counts.append(break_bound(loop, self.scope_facts(), self.int_value))
        if isinstance(loop, cst.While):
            counts.append(counted_runs(loop, None, self.scope_facts(), self._integers))
        count = self._trips[loop] = min((c for c in counts if c is not None), default=None)
        if items is None and isinstance(loop, cst.For | cst.CompFor) and count == counts[0]:
            self._most.add(loop)  # the count is the iterable's largest length
        return count

    def exact(self, loops: Iterable[LoopNode] | None = None) -> bool:
        """The count :meth:`iterations` gives is how many times the node runs, not only at
        most how many: no loop's count is the largest of the lengths its iterable may have
        (``models`` a list of 4 on the first pass and of 1 on the others: "up to"), and the
        guards' period divides the runs."""
        chosen = self.loops if loops is None else list(loops)
        for loop in chosen:
            self.trip_count(loop)
        if any(loop in self._most for loop in chosen):
            return False
        # A period that does not divide the runs: ``(i + 1) % 9000 == 0`` holds 11 times in
        # ``range(100000)``, ``i % 9000 == 0`` 12 times; the count is the larger.
        total, every = self._runs(loops)
        return total is None or total % every == 0

    def never_runs(self, loop: LoopNode) -> bool:
        """A ``for`` statement over ``range(...)`` that is empty for every value its bounds
        may have here (``for k in range(1, self.batch_size):`` where every construction
        passes ``batch_size=1``): its body never runs."""
        if not isinstance(loop, cst.For) or not isinstance(loop.iter, cst.Call):
            return False
        name = dotted(loop.iter.func)
        if name is None or name.rpartition(".")[2] not in RANGES:
            return False  # the emptiness of a list is less certain than that of a range
        return self.value(from_cst(loop.iter)).lengths == frozenset({0})

    def items(self, iterable: cst.BaseExpression) -> int | None:
        """At most how many items iterating ``iterable`` here gives, when that is known."""
        return self.value(from_cst(iterable)).bound

    def iterations(self, loops: Iterable[LoopNode] | None = None) -> int | None:
        """How many times the current node runs through its repetition (or through ``loops``,
        some of the enclosing loops): the product of the loops' trip counts and, in an entry
        point, of the framework's calls (``n_trials=100``), divided by the periods of the
        ``if step % N == 0:`` guards around the node inside them (:meth:`period`), when every
        count is known; None otherwise. In a ``while`` loop that ``continue``s past what it
        does not count, the node counts the iterations that reach it after adding to the
        counter the test keeps below a limit (:func:`~tflint_leaks.analysis.values.
        counted_runs`)."""
        total, every = self._runs(loops)
        return None if total is None else -(-total // every)

    def _runs(self, loops: Iterable[LoopNode] | None) -> tuple[int | None, int]:
        """:meth:`iterations` before the division by the guards' period, and that period."""
        chosen, every, once = self._guarded_by(loops)
        total = 1
        for loop in chosen:
            if loop in once:
                # a guard lets the node run on that many of its iterations at most
                total *= min(once[loop], self.trip_count(loop) or once[loop])
                continue
            count = self.trip_count(loop)
            if count is None and isinstance(loop, cst.While):
                count = counted_runs(loop, self._below(loop), self.scope_facts(), self._integers)
            if count is None and isinstance(loop, cst.For | cst.While):
                below = self._below(loop)
                count = counted_breaks(loop, below, self.scope_facts(), self.int_value)
            if count is None:
                return None, every
            total *= count
        entry = self.entry_point if loops is None else None
        if entry is not None:
            if entry.count is None:
                return None, every
            total *= entry.count
        return total, every

    def _below(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """The ancestors of the current node from ``node`` down, the current node last."""
        return self.ancestors[next(i for i, a in enumerate(self.ancestors) if a is node) :]

    def _integers(self, node: cst.BaseExpression) -> frozenset[int] | None:
        return self.type_of(node).ints

    def bounded(self, limit: int, loops: Iterable[LoopNode] | None = None) -> bool:
        """The current node's repetition (or ``loops``, some of the enclosing loops) runs it
        at most ``limit`` times in all."""
        count = self.iterations(loops)
        return count is not None and count <= limit

    def period(self, loops: Iterable[LoopNode] | None = None) -> int:
        """How many repetitions pass between two runs of the current node: the product of the
        ``N`` of the guards around it inside its repetition (or inside ``loops``) that run
        their body one time in ``N`` (``if step % N == 0:``, ``if (i + 1) % N == 0``,
        ``if i % N == N - 1``, ``if not step % N``, such a test joined by ``and``), and of
        the counts of the loops a guard lets it run on one iteration of (``if j == 0:``,
        :meth:`_counter_test`). ``N`` is the solver's integer (its smallest value); when it,
        or such a loop's count, is not known the guard counts :data:`UNKNOWN_PERIOD`."""
        _, every, once = self._guarded_by(loops)
        for loop, times in once.items():
            count = self.trip_count(loop)
            every *= max(1, count // times) if count else UNKNOWN_PERIOD
        return every

    def _guarded_by(
        self, loops: Iterable[LoopNode] | None
    ) -> tuple[list[LoopNode], int, dict[LoopNode, int]]:
        """The loops of the current node's repetition (or ``loops``), the product of the
        periods of the ``if step % N == 0:`` guards around the node inside them, and those of
        them that a guard lets run the node on a few iterations at most, with how many (``if j
        == 0:``, one; ``if step == 50 or step == 100:``, two)."""
        chosen = self.loops if loops is None else list(loops)
        if chosen:
            stop: cst.CSTNode = chosen[0]
        elif loops is None and self.entry_point is not None:
            stop = self.frame.node
        else:
            return chosen, 1, {}
        every = 1
        once: dict[LoopNode, int] = {}
        child: cst.CSTNode | None = None
        for node in reversed(self.ancestors):
            if node is stop or node is self.frame.node:
                break
            guards: list[Guard] = []
            if isinstance(node, cst.If) and child is node.body:
                found = self._periods.get(node)
                if found is None:
                    found = self._periods[node] = self._guard(node.test, node.body)
                guards.append(found)
            elif isinstance(node, cst.IndentedBlock) and child is not None:
                guards.extend(self._exit_guards(node, child))
            for period, counted in guards:
                if counted is None:
                    every *= period
                elif counted[0] in chosen:
                    loop, times = counted
                    once[loop] = min(times, once.get(loop, times))
            child = node
        return chosen, every, once

    def _exit_guards(self, block: cst.IndentedBlock, child: cst.CSTNode) -> list[Guard]:
        """The guards that the early exits of ``block`` before ``child`` put on it: after ``if
        step % 100 != 0: continue`` (or ``return``) the rest of the block runs when ``step %
        100 == 0``, one time in 100."""
        found: list[Guard] = []
        for statement in block.body:
            if statement is child:
                break
            if not (isinstance(statement, cst.If) and statement.orelse is None):
                continue
            if not _only_exits(statement.body):
                continue
            if statement not in self._exits:
                negated = _negated(statement.test)
                self._exits[statement] = None if negated is None else self._guard(negated)
            guard = self._exits[statement]
            if guard is not None:
                found.append(guard)
        return found

    def _guard(self, test: cst.BaseExpression, body: cst.BaseSuite | None = None) -> Guard:
        """A guard's period: one run in ``N`` (:meth:`_guard_period`), or a few runs per run
        of the enclosing loop whose counter it compares with values that loop does not change
        (``if j == 0:`` inside ``for j in range(2000)``: once in 2000, with the loop's count,
        0 when it is not known; ``if step == 50 or step == 100:`` twice; ``if epoch in (30,
        60, 90):`` three times), a test joined by ``and`` by its rarest part (such a loop of
        unknown count the rarest). ``body`` is the block the test guards, when it is an
        ``if``'s (:meth:`_counter_test`)."""
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return max(
                self._guard(test.left, body),
                self._guard(test.right, body),
                key=lambda g: g[0] if g[0] or g[1] is None else math.inf,
            )
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
            return self._either(self._guard(test.left, body), self._guard(test.right, body))
        counted = self._counter_test(test, body)
        if counted is not None:
            return self.trip_count(counted[0]) or 0, counted
        return self._guard_period(test), None

    def _either(self, left: Guard, right: Guard) -> Guard:
        """The guard of ``a or b``: counter tests on one loop add their iterations (``step ==
        50 or step == 100``, two); a periodic test and a counter test add the counter's to the
        period's runs when the loop's count is known (``update % 10 == 0 or update == 1`` in
        375 updates: 38 runs), else keep the period; anything else holds on every iteration."""
        if left[1] is None and right[1] is not None:
            left, right = right, left
        counted, other = left[1], right[1]
        if counted is None:
            return 1, None
        loop, times = counted
        count = self.trip_count(loop)
        if other is not None:
            if other[0] is not loop:
                return 1, None
            times += other[1]
        elif right[0] > 1:
            if not count:
                return right
            times += count // right[0]
        else:
            return 1, None
        return (max(1, count // times) if count else 0), (loop, times)

    def _counter_test(
        self, test: cst.BaseExpression, body: cst.BaseSuite | None = None
    ) -> tuple[LoopNode, int] | None:
        """The enclosing loop on a few iterations of which at most ``test`` holds, and on how
        many: it compares for equality the loop's counter with a value the loop does not
        change (one). A counter takes a new value on every iteration: the target of a ``for``
        over ``range(...)``, the index of ``enumerate(...)`` (``for fidelity, data in
        enumerate(splits):``), or a name to which every iteration of a ``while`` loop adds a
        positive constant (``step += 1``) and nothing else in the loop assigns; the value is
        one known integer or a name the loop never assigns (``if epoch == warmup:``), or a
        value computed from such names and integers (``if i == len(batches) - 1:``, the last
        iteration, when the loop neither assigns ``batches`` nor calls a method of it). The
        target of a ``for`` over anything else of known length counts too when the value is
        one integer. Two more tests hold on as many iterations as a container the loop does
        not grow has items (one when that number is not known): the counter's membership of
        a container the loop does not change (``if epoch in milestones:``, ``if step in
        (100, 200):``), and its equality with names that only ``body`` assigns, each time with
        the next item taken out of such a container (``if it == next_step + 1: ...;
        next_step = steps.pop()``: a learning-rate schedule's milestones)."""
        membership = _membership(test)
        equality = _equality(test)
        if membership is not None:
            orders = [membership]
        elif equality is not None:
            orders = [equality, equality[::-1]]
        else:
            return None
        facts = self.scope_facts()
        for counter, other in orders:
            if not isinstance(counter, cst.Name):
                continue
            name = counter.value
            found = self._counter_loop(name, facts)
            if found is None:
                continue
            loop, steps = found
            if membership is not None:
                if steps and _invariant(other, name, loop, facts):
                    return loop, self.items(other) or 1
                continue
            ints = self.type_of(other).ints
            constant = ints is not None and len(ints) == 1
            if steps and (constant or _invariant(other, name, loop, facts)):
                return loop, 1
            if steps and body is not None:
                drawn = _drawn_in(other, body, loop, facts)
                if drawn is not None and _invariant(other, name, loop, facts, drawn):
                    return loop, 1
            if (
                not steps
                and constant
                and isinstance(loop, cst.For)
                and isinstance(loop.target, cst.Name)
                and self.trip_count(loop) is not None
            ):
                return loop, 1
        return None

    def _counter_loop(self, name: str, facts: ScopeFacts) -> tuple[LoopNode, bool] | None:
        """The innermost enclosing loop that binds or counts ``name``, and whether ``name``
        takes a new value on every iteration of it (see :meth:`_counter_test`)."""
        for loop in reversed(self.loops):
            if isinstance(loop, cst.While):
                if steadily_counts(name, loop, facts):
                    return loop, True
                continue
            path = next((p for key, p in loop_target_names(loop.target) if key == name), None)
            if path is None:
                continue
            if any(loop in a.loops and a.node is not loop for a in facts.assignments.get(name, [])):
                return loop, False  # assigned again inside the loop
            iterable = loop.iter
            callee = callee_of(iterable, self.resolve) if isinstance(iterable, cst.Call) else None
            # ``range``'s items, ``enumerate``'s index: a new value every iteration
            return loop, (callee in RANGES and not path) or (callee == "enumerate" and path == (0,))
        return None

    def _guard_period(self, test: cst.BaseExpression) -> int:
        """The ``N`` of a test that holds one time in ``N`` (``step % N == 0``, ``not step %
        N``; 1 for any other), for :meth:`_guard`, which splits ``and``."""
        modulo: cst.BaseExpression | None = None
        sides = _equality(test)
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            modulo = test.expression
        elif sides is not None:
            modulo = sides[0] if _is_modulo(sides[0]) else sides[1]
        if modulo is None or not _is_modulo(modulo):
            return 1
        assert isinstance(modulo, cst.BinaryOperation)
        ints = self.type_of(modulo.right).ints
        smallest = min(ints) if ints else 0
        return smallest if smallest > 0 else UNKNOWN_PERIOD

    # -- repetition that is not a loop ---------------------------------------------------------

    @property
    def entry_point(self) -> EntryPoint | None:
        """The framework that calls the current function many times (a Flask route, an
        Optuna objective, a Keras callback's ``on_train_batch_end``: the table of
        :mod:`tflint_leaks.analysis.entry_points`), when the node is in that function's own
        body and not under a first-call guard (``if model is None:``)."""
        frame = self.frame
        if frame.kind is FrameKind.MODULE:
            key = ("entry", id(frame.node), 0)
            if key not in self._answers:
                self._answers[key] = script_entry(self.program, self.module_index)
        elif frame.kind is not FrameKind.FUNCTION or frame.facts is None or frame.traced:
            return None
        else:
            key = ("entry", id(frame.node), 0)
            if key not in self._answers:
                self._answers[key] = find_entry_point(
                    self.program, self.module_index, frame.facts.qualname, frame.line
                )
        found = self._answers[key]
        if found is None or self.guarded:
            return None
        assert isinstance(found, EntryPoint)
        return found

    def only_iterated(self, node: cst.Call) -> bool:
        """``node`` makes a ``tf.data`` pipeline that its body only iterates in ``for``
        loops, with data-free steps alone (:attr:`~tflint_leaks.analysis.facts.Body.
        iterated_pipelines`)."""
        return from_cst(node) in self.where().body.iterated_pipelines

    def runs_in_graph(self) -> bool:
        """The function around the current node (the top-level one) may run with a graph
        made the default by a caller (:meth:`~tflint_leaks.analysis.program.Program.
        runs_in_graph`); module-level code never does."""
        where = self.where()
        function = where.function
        return function is not None and self.program.runs_in_graph(
            FunctionRef(where.module.path, function.qualname)
        )

    def framework_calls(self, path: str, qualname: str) -> EntryPoint | None:
        """The framework that calls the project function ``qualname`` of ``path`` many times
        (a Keras callback's ``on_train_batch_end``), wherever it is defined: the same table
        as :attr:`entry_point`."""
        key = (path, qualname)
        if key not in self._frameworks:
            module = self.program.inference.module(path)
            self._frameworks[key] = find_entry_point(self.program, module, qualname)
        return self._frameworks[key]

    def framework_builds(self, receiver: cst.BaseExpression) -> bool:
        """``receiver`` is the parameter to which the framework calling the current function
        passes a model built anew for each call (KerasTuner's ``HyperModel.fit(hp, model)``),
        and the function never rebinds it."""
        entry = self.entry_point
        facts = self.frame.facts
        if entry is None or facts is None or not isinstance(receiver, cst.Name):
            return False
        method = facts.qualname.rpartition(".")[2]
        name = receiver.value
        return any(
            method == new_method and position < len(facts.params) and facts.params[position] == name
            for new_method, position in entry.row.new_models
        ) and not self.scope_facts().assignments.get(name)

    @property
    def repeated(self) -> bool:
        """The current node runs many times: in a Python loop of its scope, or in the body of
        an entry point (:attr:`entry_point`)."""
        return bool(self.loops) or self.entry_point is not None

    def entry_place(self) -> tuple[Target, str | None]:
        """Where the framework is told to call the current function: the decorator, the
        class deriving from the framework's base, or the registering call (and its file)."""
        entry = self.entry_point
        node = self.frame.node
        assert entry is not None and isinstance(node, cst.FunctionDef | cst.Module)
        if entry.decorator is not None:
            assert isinstance(node, cst.FunctionDef)
            return node.decorators[entry.decorator], None
        if entry.place is None:
            assert isinstance(node, cst.FunctionDef)
            return node.name, None
        return entry.place, None if entry.path == self.path else entry.path

    def repeated_nodes(self) -> Iterator[cst.CSTNode]:
        """Every node evaluated each time the current node's repetition repeats: each
        iteration of the enclosing loops and, in an entry point, the whole function body
        (nested functions excluded)."""
        for loop in self.loops:
            yield from self.iteration_nodes(loop)
        if self.entry_point is not None:
            yield from self._function_nodes()

    def repeated_calls(self) -> list[cst.Call]:
        """Every call made each time the current node's repetition repeats (see
        :meth:`repeated_nodes`)."""
        calls = [call for loop in self.loops for call in self.loop_calls(loop)]
        if self.entry_point is not None:
            calls.extend(n for n in self._function_nodes() if isinstance(n, cst.Call))
        return calls

    def _function_nodes(self) -> list[cst.CSTNode]:
        node = self.frame.node
        found = self._body_nodes.get(node)
        if found is None:
            assert isinstance(node, cst.FunctionDef | cst.Module)
            body = node if isinstance(node, cst.Module) else node.body
            found = self._body_nodes[node] = list(own_nodes(body))
        return found

    # -- whole-program facts -------------------------------------------------------------------

    @property
    def program(self) -> Program:
        return program_of(self.project)

    def where(self) -> Where:
        """Where the current node is evaluated, for the whole-program facts: the top-level
        function or method around it (names bound in nested functions are unknown)."""
        shadowed: set[str] = set()
        module = self.module_index
        for frame in reversed(self.frames):
            facts = frame.facts
            if facts is not None:
                owner = facts.qualname.partition(".")[0] if "." in facts.qualname else None
                klass = module.classes.get(owner) if owner is not None else None
                return Where(module, facts, klass, frozenset(shadowed))
            if frame.kind in {FrameKind.FUNCTION, FrameKind.LAMBDA}:
                scope = self.scope_facts(frame)
                shadowed.update(scope.parameters)
                shadowed.update(name for name in scope.assignments if "." not in name)
        if self.frame.kind is FrameKind.MODULE:
            # The module's own code: a function defined in a block before the node (one
            # loop's own ``def predict_fn``) is not the top-level one the index knows.
            shadowed.update(self._defined_in_block())
        return Where(module, shadowed=frozenset(shadowed))

    def _defined_in_block(self) -> frozenset[str]:
        """:func:`~tflint_leaks.analysis.scope.defined_in_block` at the current node."""
        module = self.frames[0].node
        assert isinstance(module, cst.Module)
        if self._nested is None:
            self._nested = nested_definitions(module)
        if not self._nested:
            return frozenset()
        return defined_in_block(self.ancestors, self._nested, self._bound_names)

    def _bound_names(self, node: cst.CSTNode) -> frozenset[str]:
        found = self._bound.get(node)
        if found is None:
            found = self._bound[node] = bound_names(node)
        return found

    def decided(self, test: cst.BaseExpression) -> bool | None:
        """Whether an ``if`` test (or a conditional expression's) holds on every run: at the
        module's top level, with its globals' values and a command line's defaults (``if
        args.algo == "ddpg":``); in a function, a test of module state, of the function's
        literal constants (``if not NEW_MODEL:``, ``keras = False`` above ``if keras:``) and of
        parameters that hold the script's options (:meth:`_parsed_options`), or a method's
        test of its instance's attributes alone (``if self.norm_grads:``, with every assignment
        of it ``False``); None when it depends (on another parameter: callers the project may
        not see pass it). A notebook's own switches decide
        nothing: a global it sets to ``True`` or ``False`` is a setting its reader flips and
        runs the cells again (``training = False`` above ``if training == True:``, "set it to
        True to train")."""
        converted = from_cst(test)
        names = heads(converted)
        if self.in_notebook and any(map(self._module_switch, names)):
            return None
        if self.frame.kind is FrameKind.MODULE:
            return self.program.decide(converted, self.where())
        facts = self.frame.facts
        if self.frame.kind is not FrameKind.FUNCTION or facts is None:
            return None
        if names == {"self"}:
            return self.program.decide_on_state(converted, self.where())
        body = facts.body
        own = {*(a.target for a in body.assigns), "self", "cls"}
        if not names or names & (own - {n for n, _ in body.constants} - set(body.globals)):
            return None
        if not all(map(self._parsed_options, names & set(facts.params))):
            return None
        return self.program.decide(converted, self.where())

    def _parsed_options(self, name: str) -> bool:
        """The parameter ``name`` holds a script's options as ``parse_args()`` gives them in
        a run with their defaults, at every call (``main(parse_opt())``, then ``if
        opt.evolve:``): decided as the module's own ``if args.algo == "ddpg":`` is. Any other
        value a call passes (``World(train_test="test")``) is a switch its author flips."""
        if not self.project.imports_argparse():
            return False  # no module parses options: no caller can pass them
        value = self.type_of(name)
        return bool(value.atoms) and not value.top and all(a.ref == NAMESPACE for a in value.atoms)

    def unreached(self) -> frozenset[int]:
        """The ``id`` of every node of the current scope that a decided test keeps from
        running (:meth:`decided`: the block of ``if not reuse:`` below ``reuse = True``, the
        value of a conditional expression never computed), as the walker leaves them out."""
        scope = self.frame.node
        found = self._unreached.get(scope)
        if found is None:
            dead: set[int] = set()
            for node in own_nodes(scope):
                if not isinstance(node, cst.If | cst.IfExp):
                    continue
                decided = self.decided(node.test)
                never = node.body if decided is False else node.orelse if decided else None
                if never is not None:
                    dead.update(id(each) for each in descendants(never))
            found = self._unreached[scope] = frozenset(dead)
        return found

    @property
    def in_notebook(self) -> bool:
        """The file is a notebook (its cells joined as one module)."""
        return self.module_index.path.endswith(NOTEBOOK_SUFFIX)

    def raises(self, statement: cst.BaseStatement) -> bool:
        """Running a notebook's ``statement`` certainly raises ``NameError``: it reads, on
        every way through it, a name no cell binds (:mod:`~tflint_leaks.analysis.raising`), so
        what follows it in its block never runs. A notebook runs from a new kernel, cell by
        cell; a ``.py`` file may run in a namespace prepared elsewhere (``%run -i``,
        ``runpy.run_path(path, init_globals)``, ``exec`` in a console), and snippets read
        placeholders (``model``, ``optimizer``): its free names are not known to be unbound."""
        if self._unbound is None:
            source = self.source if self.in_notebook else None
            self._unbound = frozenset() if source is None else unbound_names(source)
        return raises(statement, self._unbound)

    def _module_switch(self, name: str) -> bool:
        """``name`` is a global of this module assigned ``True`` or ``False``."""
        return any(
            isinstance(a.value, cst.Name) and a.value.value in {"True", "False"}
            for a in self.scope_facts(self.frames[0]).assignments.get(name, ())
        )

    def value(self, expr: Expr) -> Value:
        """What an expression (already converted) may be here."""
        return self.program.value(expr, self.where())

    def type_of(self, node: cst.BaseExpression | str) -> Value:
        """What an expression (or the name) may be here, across the whole program: a Keras
        model, a tape, an instance of a project class, a number with its integers, a container
        with its length... (see :mod:`tflint_leaks.analysis.lattice`: ``.kind`` answers "is
        it certainly a ...?")."""
        key = ("value", node if isinstance(node, str) else id(node), id(self.frame.node))
        found = self._answers.get(key)
        if found is None:
            expr = ref(node) if isinstance(node, str) else from_cst(node)
            found = self._answers[key] = self.value(expr)
        assert isinstance(found, Value)
        return found

    def int_value(self, node: cst.BaseExpression | str) -> int | None:
        """The largest integer an expression (or the name) may be here, when every value it
        may be is a known integer: a literal, arithmetic on constants, a module or class
        constant, a parameter every call site gives a known value."""
        found = self.type_of(node).ints
        return max(found) if found else None

    def returns_number(self, node: cst.Call) -> bool:
        """The call runs project code that returns a Python number (``schedule(epoch)``)."""
        value = self.type_of(node)
        return value.kind is Kind.NUMBER and self.calls_project_code(node, constructors=False)

    def array_origin(self, name: str) -> ArrayOrigin | None:
        """Where the NumPy array ``name`` holds here may come from (its function's, its
        module's or the module it is imported from), unless it may also be a tensor or is a
        scalar or a small literal array."""
        return self.program.array_origin(ref(name), self.where())

    def unchanged_by_loops(self, value: cst.BaseExpression) -> bool:
        """``value`` is the same on every iteration of every enclosing loop: names (dotted)
        that no loop assigns or calls a method of, integers, and arithmetic on them."""
        facts = self.scope_facts()
        return bool(self.loops) and all(_invariant(value, "", loop, facts) for loop in self.loops)

    def changed_in_place(self, name: str, since: int = 0) -> bool:
        """Code of this module may change the value the module global ``name`` holds in
        place (:attr:`~tflint_leaks.analysis.facts.Body.changed`): a function of it (one that
        does not bind ``name`` itself), or its own code in a loop or from line ``since`` on."""
        module = self.module_index
        loops = [loop.body for loop in module.body.loops]
        if any(
            changed == name and (span.line >= since or within(span, loops))
            for changed, span in module.body.changed
        ):
            return True
        return any(
            changed == name and not _binds(function, name)
            for function in module.functions.values()
            for changed, _ in function.body.changed
        )

    def calls_project_code(self, node: cst.Call, *, constructors: bool = True) -> bool:
        """``node`` may run a project function or method (or, with ``constructors``,
        construct an instance of a project class)."""
        kinds = (
            {TargetKind.FUNCTION, TargetKind.CONSTRUCTOR} if constructors else {TargetKind.FUNCTION}
        )
        return any(t.kind in kinds for t in self.program.targets(from_cst(node), self.where()))

    def effects(self, node: cst.Call) -> tuple[Effect, ...]:
        """What ``node`` does each time it runs: the call itself (an effect with no chain) and
        what the project code it runs does, each with the chain of calls that leads to it."""
        key = ("effects", id(node), id(self.frame.node))
        found = self._answers.get(key)
        if found is None:
            found = self.program.effects_of_call(from_cst(node), _HERE, self.where())
            self._answers[key] = found
        assert isinstance(found, tuple)
        return found

    def repeats_inside(self, effect: Effect) -> bool:
        """The effect of a call made here runs many times each time the call runs: a loop of
        the project code the call runs repeats it (:meth:`~tflint_leaks.analysis.program.
        Program.repeats_inside`)."""
        return self.program.repeats_inside(effect)

    def runs_inside(self, effect: Effect) -> int | None:
        """How many times the effect of a call made here runs each time the call runs: 1, the
        product of the counts of the loops of the project code that repeat it, or None when one
        of those counts is not known (:func:`~tflint_leaks.analysis.repetition.runs_inside`)."""
        return runs_inside(self.program, effect)

    def tf_function_callee(self, node: cst.Call) -> Callee | None:
        """The ``tf.function`` that ``node`` calls, if the project index knows it."""
        name = dotted(node.func)
        if name is None:
            return None
        if "." not in name:
            for frame in reversed(self.frames):
                if frame.facts is not None and name in frame.facts.local_tf_functions:
                    facts = frame.facts.local_tf_functions[name]
                    return Callee(name, facts, None, self.path)
        key = ("tf.function", id(node), id(self.frame.node))
        if key not in self._answers:
            self._answers[key] = self.program.tf_function(from_cst(node), self.where())
        target = self._answers[key]
        if not isinstance(target, TfFunctionTarget):
            return None
        return Callee(name, target.facts, target.function, target.path)

    def project_class(self, node: cst.BaseExpression) -> tuple[ModuleIndex, ClassFacts] | None:
        """The project class that ``node`` (a callee expression) names, if it is one."""
        found = self.type_of(node)
        atoms = found.atoms_of(Kind.CLASS)
        if len(atoms) != 1 or len(found.informative) != 1:
            return None
        return self.program.inference.klass(atoms[0].ref)  # type: ignore[arg-type]

    def tf_function_attributes(
        self, module: ModuleIndex, klass: ClassFacts
    ) -> dict[str, TfFunctionFacts]:
        """The ``tf.function`` attributes of a project class (decorated methods and
        ``self.x = tf.function(...)``), its bases' included."""
        return self.project.class_tf_functions(module, klass)

    def instance_class(self, name: str) -> tuple[ModuleIndex, ClassFacts] | None:
        """The project class of the value ``name`` holds here, when it is known."""
        klass = self.value(ref(name)).klass
        return self.program.inference.klass(klass) if klass is not None else None

    def writes(self, node: cst.Name | cst.Attribute) -> tuple[Write, ...]:
        """Where the project assigns the state ``node`` reads here: the attribute of every
        project class its receiver may be an instance of (``self.pl_mean``,
        ``agent.epsilon``), or the module global it names (``LEARNING_RATE``, ``config.LR``),
        each :class:`~tflint_leaks.analysis.writes.Write` with its function, whether it is
        set-up code, and the loop that repeats it (through callers, with the chain). Nothing
        for a local, a parameter, or an attribute of a library object."""
        key = ("writes", id(node), id(self.frame.node))
        found = self._answers.get(key)
        if found is None:
            found = self._answers[key] = self.program.writes_of(from_cst(node), self.where())
        assert isinstance(found, tuple)
        return found

    def toggled(self, writes: Sequence[Write]) -> bool:
        """Two of ``writes`` may both run in one run of the program: not only the two
        blocks of one ``if``/``else`` of a function."""
        return self.program.toggled(writes)

    def defines(self, value: Value, method: str) -> bool:
        """Whether one of the project classes ``value`` may be of defines ``method`` (an
        override of a Keras model's ``predict``)."""
        return self.program.defines(value, method)

    # -- Keras models, cleanup, tapes -------------------------------------------------------------

    def builds_model(self, node: cst.Call) -> bool:
        """``node`` constructs or loads a new Keras model: a Keras constructor or loader, a
        project model class, or a project factory that returns a model it builds."""
        found = self.type_of(node)
        return found.kind is Kind.MODEL and found.fresh

    def owns_variables(self, node: cst.BaseExpression | str) -> bool:
        """``node`` (or the name) is certainly something that owns variables of its own: a
        Keras model, or an instance of a project class that is a Keras model or layer or a
        ``tf.Module`` (a GPflow model)."""
        value = self.type_of(node)
        if value.kind is Kind.MODEL:
            return True
        if value.kind is not Kind.INSTANCE:
            return False
        for atom in value.informative:
            found = (
                self.program.inference.klass(atom.ref) if isinstance(atom.ref, ClassRef) else None
            )
            if found is None or not self.project.owns_variables(*found):
                return False
        return True

    def plain_data(self, node: cst.BaseExpression | str) -> bool:
        """``node`` (or the name) is known to be plain data, which holds no model: a number, a
        string, a boolean, ``None``, a tensor or a NumPy array (what ``model.evaluate(x, y)``
        returns)."""
        return _plain(self.type_of(node))

    def is_model(self, node: cst.BaseExpression | str) -> bool:
        """``node`` (or the name) is known to be a Keras model (its type, across the
        project)."""
        return self.type_of(node).kind is Kind.MODEL

    def cleans_up(self, node: cst.Call) -> bool:
        """``node`` calls ``clear_session()``, directly or through project code."""
        return any(effect.kind is EffectKind.CLEAR_SESSION for effect in self.effects(node))

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
        """The tape ``with`` blocks of the current scope around the node, outermost first, one
        per tape (``with tf.GradientTape() as g, tf.GradientTape() as d:`` records on two; a
        nested function's body runs later, outside them)."""
        return [
            TapeBlock(node, tape)
            for node in self.open_withs()
            for tape in self.tapes()
            if node in tape.blocks
        ]

    def recording(self, name: str) -> TapeBlock | None:
        """The innermost enclosing block recording on the tape named ``name``."""
        return next((b for b in reversed(self.tape_blocks()) if b.tape.name == name), None)

    # -- reporting -----------------------------------------------------------------------------

    def report(self, code: str, target: Target, message: str) -> Report:
        report = Report(code, target, message)
        self.reports.append(report)
        return report


def _binds(function: FunctionFacts, name: str) -> bool:
    """``name`` is local to ``function``: a parameter, or assigned without ``global``."""
    body = function.body
    assigned = name in function.params or any(a.target == name for a in body.assigns)
    return assigned and name not in body.globals


#: Builtins whose result depends only on their arguments (``len(batches) - 1``).
_PURE_BUILTINS = frozenset({"len", "abs", "min", "max", "int", "round"})


def _invariant(
    value: cst.BaseExpression,
    counter: str,
    loop: LoopNode,
    facts: ScopeFacts,
    drawn: frozenset[str] = frozenset(),
) -> bool:
    """``value`` is the same on every iteration of ``loop``: integers, and names (dotted:
    ``self.warmup``) other than ``counter`` that the loop neither assigns nor calls a
    method of (``batches.append(...)`` changes ``len(batches)``), combined by arithmetic,
    :data:`_PURE_BUILTINS` and literal lists, tuples and sets; ``drawn``, names the caller
    knows change only as :func:`_drawn_in` says, count as such names."""
    names: list[str] = []
    todo = [value]
    while todo:
        node = todo.pop()
        if isinstance(node, cst.Integer) or (isinstance(node, cst.Name) and node.value in drawn):
            continue
        if isinstance(node, cst.BinaryOperation):
            todo += [node.left, node.right]
        elif isinstance(node, cst.UnaryOperation):
            todo.append(node.expression)
        elif isinstance(node, cst.List | cst.Tuple | cst.Set):
            if any(not isinstance(element, cst.Element) for element in node.elements):
                return False  # ``*rest``
            todo += [element.value for element in node.elements]
        elif isinstance(node, cst.Call):
            if not (
                isinstance(node.func, cst.Name)
                and node.func.value in _PURE_BUILTINS
                and all(not argument.star and argument.keyword is None for argument in node.args)
            ):
                return False
            todo += [argument.value for argument in node.args]
        else:
            name = dotted(node)
            if name is None or name == counter:
                return False
            names.append(name)
    changed = {
        key
        for key, assignments in facts.assignments.items()
        if any(loop in a.loops for a in assignments)
    }
    return not any(
        name in changed or any(key.startswith(f"{name}.") for key in changed) for name in names
    ) and not _calls_methods_of(loop, set(names))


def _drawn_in(
    value: cst.BaseExpression, body: cst.BaseSuite, loop: LoopNode, facts: ScopeFacts
) -> frozenset[str] | None:
    """The names of ``value`` that ``loop`` assigns, when each assignment of them in the loop
    is in ``body`` and takes the next item out of a container that the loop only takes from
    (``next_step = steps.pop()``, ``milestones.popleft()``, ``next(schedule)``): they change
    only when ``body`` runs, and at most as many times as the container has items. None
    when another assignment changes one of them, or when the loop assigns none."""
    drawn: set[str] = set()
    inside = set(descendants(body))
    for node in [value, *descendants(value)]:
        if not isinstance(node, cst.Name):
            continue
        assignments = [a for a in facts.assignments.get(node.value, []) if loop in a.loops]
        if not assignments:
            continue
        for assignment in assignments:
            source = _taken_from(assignment.value)
            if (
                assignment.node not in inside
                or assignment.augmented
                or source is None
                or _grows(loop, source, facts)
            ):
                return None
        drawn.add(node.value)
    return frozenset(drawn) or None


#: The methods that take an item out of a container (``steps.pop()``, ``queue.popleft()``).
_TAKING_METHODS = frozenset({"pop", "popleft"})


def _taken_from(value: cst.BaseExpression | None) -> str | None:
    """The container an item of which ``value`` takes out: ``steps.pop()``, ``next(it)``."""
    if not isinstance(value, cst.Call):
        return None
    func = value.func
    if isinstance(func, cst.Attribute) and func.attr.value in _TAKING_METHODS:
        return dotted(func.value)
    if isinstance(func, cst.Name) and func.value == "next" and len(value.args) == 1:
        return dotted(value.args[0].value)
    return None


def _grows(loop: LoopNode, container: str, facts: ScopeFacts) -> bool:
    """``loop`` may give ``container`` new items: it assigns it, or calls a method of it
    other than one that takes an item out."""
    if any(loop in a.loops for a in facts.assignments.get(container, [])):
        return True
    return any(
        receiver == container and method not in _TAKING_METHODS
        for receiver, method in _method_calls(loop)
    )


def _calls_methods_of(loop: LoopNode, names: set[str]) -> bool:
    """Some call in ``loop`` is a method call on one of ``names`` or on what holds it
    (``batches.append(x)``; ``self.advance()`` may assign ``self.warmup``)."""
    holders = {
        ".".join(parts[:end])
        for name in names
        for parts in [name.split(".")]
        for end in range(1, len(parts) + 1)
    }
    return any(receiver in holders for receiver, _ in _method_calls(loop))


def _method_calls(loop: LoopNode) -> Iterator[tuple[str | None, str]]:
    """The receiver (its dotted name) and the method of every method call in ``loop``."""
    for node in descendants(loop):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            yield dotted(node.func.value), node.func.attr.value


def _only_exits(body: cst.BaseSuite) -> bool:
    """``body`` is one ``continue`` or ``return`` (``if ...: continue``)."""
    line: cst.BaseSuite | cst.BaseStatement = body
    if isinstance(body, cst.IndentedBlock):
        if len(body.body) != 1:
            return False
        line = body.body[0]
    if not isinstance(line, cst.SimpleStatementLine | cst.SimpleStatementSuite):
        return False
    return len(line.body) == 1 and isinstance(line.body[0], cst.Continue | cst.Return)


def _negated(test: cst.BaseExpression) -> cst.BaseExpression | None:
    """A test that holds where ``test`` does not, for the tests guards are made of: ``not
    t`` is ``t``, ``a != b`` is ``a == b``, ``step % N`` (a number) is ``step % N == 0``."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return test.expression
    if (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.NotEqual)
    ):
        return cst.Comparison(
            test.left, [cst.ComparisonTarget(cst.Equal(), test.comparisons[0].comparator)]
        )
    if _is_modulo(test):
        return cst.Comparison(test, [cst.ComparisonTarget(cst.Equal(), cst.Integer("0"))])
    return None


def _equality(
    test: cst.BaseExpression,
) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """The two sides of ``a == b`` (one comparison)."""
    return _compared(test, cst.Equal)


def _membership(
    test: cst.BaseExpression,
) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """The item and the container of ``a in b`` (one comparison)."""
    return _compared(test, cst.In)


def _compared(
    test: cst.BaseExpression, operator: type[cst.BaseCompOp]
) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """The two sides of one comparison by ``operator``."""
    if (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, operator)
    ):
        return test.left, test.comparisons[0].comparator
    return None


def _is_modulo(node: cst.BaseExpression) -> bool:
    """``x % n`` (not a string's ``%`` formatting)."""
    return (
        isinstance(node, cst.BinaryOperation)
        and isinstance(node.operator, cst.Modulo)
        and not isinstance(
            node.left, cst.SimpleString | cst.ConcatenatedString | cst.FormattedString
        )
    )


def _ends_while(loop: LoopNode, guard: cst.If) -> bool:
    """``guard`` tests the name whose truth ends ``loop`` (``if done:`` in ``while not
    done:``), and nothing in the loop sets that name after the guard begins: when its block
    runs, the loop's test fails next."""
    if not (
        isinstance(loop, cst.While)
        and isinstance(loop.test, cst.UnaryOperation)
        and isinstance(loop.test.operator, cst.Not)
        and isinstance(loop.test.expression, cst.Name)
        and isinstance(guard.test, cst.Name)
        and guard.test.value == loop.test.expression.value
    ):
        return False
    name = guard.test.value
    after = False
    for each in own_nodes(loop.body):
        after = after or each is guard
        if after and _binds_name(each, name):
            return False
    return True


def _binds_name(node: cst.CSTNode, name: str) -> bool:
    """``node`` binds ``name``: an assignment's target (plain or inside a tuple), a ``for``
    target, an augmented assignment or a ``with ... as``."""
    target: cst.CSTNode | None = None
    if isinstance(node, cst.AssignTarget | cst.AugAssign | cst.AnnAssign | cst.For):
        target = node.target
    elif isinstance(node, cst.AsName):
        target = node.name
    if target is None:
        return False
    return any(isinstance(n, cst.Name) and n.value == name for n in descendants(target))
