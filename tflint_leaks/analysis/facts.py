"""What one function body (or a module's or class's own code) does, as plain data.

Collected in the ``ast`` pass for every function, method, class body and module, and kept in the
:class:`~tflint_leaks.analysis.index.ModuleIndex` (so the cache keeps it too): the assignments
(to names and to ``self.x``, each with its span), what is returned, the calls made (with their
spans), the ``for`` and ``while`` loops and the annotations. :mod:`tflint_leaks.analysis.program`
turns these local facts into whole-program ones: the kind of every value, the return kind of
every function, what a call does every time it runs, and where a piece of state is assigned.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from tflint_leaks.analysis import keras
from tflint_leaks.analysis.branches import heads
from tflint_leaks.analysis.dtypes import dotted_ast
from tflint_leaks.analysis.entry_points import REGISTERING_CALLS
from tflint_leaks.analysis.graph import (
    AS_DEFAULT,
    EAGER_MODE_SWITCHES,
    FUNCTIONS_EAGERLY_SWITCHES,
    GRAPH,
    GRAPH_MODE_SWITCHES,
    builds_graph,
    enters_graph,
    resets_graph,
    v1,
)
from tflint_leaks.analysis.names import (
    GRADIENT_TAPE,
    TF_FUNCTION,
    is_keras,
    is_numpy,
    is_tensorflow,
)
from tflint_leaks.analysis.overwrites import PLAIN_BUILTINS, flow
from tflint_leaks.analysis.symbolic import (
    BINARY_OPERATORS,
    UNKNOWN,
    Expr,
    Op,
    from_ast,
    item,
    iterate,
    string_text,
)
from tflint_leaks.analysis.units import walk


@dataclass(frozen=True, order=True)
class Span:
    """A range of a file: 1-based lines, 1-based character columns, exclusive end."""

    line: int
    column: int
    end_line: int
    end_column: int

    def contains(self, other: Span) -> bool:
        """``other`` lies within this range."""
        return (self.line, self.column) <= (other.line, other.column) and (
            other.end_line,
            other.end_column,
        ) <= (self.end_line, self.end_column)


@dataclass(frozen=True)
class Assign:
    """``target = value`` (``target`` a name or ``self.x``); also loop targets, ``with ... as``
    names and unpacked tuple elements (``value`` then an :data:`ITEM` of the whole)."""

    target: str
    value: Expr
    #: The statement (or loop target, ``with`` item) that assigns; None for annotations and
    #: parameter defaults.
    span: Span | None = None


@dataclass(frozen=True)
class Loop:
    """A ``for`` or ``while`` statement of a body."""

    #: ``for x in xs`` up to the end of the iterable, ``while test`` up to the end of the test.
    header: Span
    #: From the first statement of the loop's body to the end of its last: what runs every
    #: iteration (the ``else`` block is not part of it).
    body: Span


@dataclass(frozen=True)
class Branch:
    """An ``if`` statement or a conditional expression whose test reads a parameter of the
    body (``if backend == "tensorflow":``): which of its blocks runs can depend on what a call
    passes."""

    test: Expr
    #: The block that runs when the test holds, and the ``else`` block (an ``elif`` is an
    #: ``if`` of its own, inside it).
    then: Span
    orelse: Span | None


@dataclass(frozen=True)
class Counted:
    """``container.append(item)`` (or ``container[key] = item``) in a ``for`` loop that no
    other loop holds, outside any loop nested in it:
    the container gains at most one item per iteration of the loop; exactly one when the
    append is a statement of the loop's own block and the loop never leaves an iteration early
    (no ``break``, ``continue``, ``return`` or ``raise`` in it)."""

    container: str
    #: The loop's iterable: the container gains (at most) one item per item of it.
    iterable: Expr
    #: The whole ``for`` statement.
    loop: Span
    #: One item per iteration, not at most one.
    exact: bool = True
    #: The block of an ``if``, ``with`` or ``try`` the loop is a statement of (None: the
    #: body's own top level): the container's count is the loop's only when the container is
    #: made in that block too.
    block: Span | None = None


@dataclass(frozen=True)
class Site:
    """A call the body makes, where."""

    call: Expr
    span: Span
    #: A test expects the call to raise (``self.assertRaises(TypeError, f, 3)`` calls
    #: ``f(3)``): its arguments are ones the function refuses.
    raises: bool = False


@dataclass(frozen=True)
class Body:
    assigns: tuple[Assign, ...] = ()
    returns: tuple[Expr, ...] = ()
    calls: tuple[Site, ...] = ()
    #: ``name: annotation`` for parameters and annotated variables.
    annotations: tuple[Assign, ...] = ()
    #: Names the body declares ``global``.
    globals: tuple[str, ...] = ()
    #: ``parameter = default`` for parameters with a default value.
    defaults: tuple[Assign, ...] = ()
    #: Names a statement of the body's own top level binds anew, from a value that does not
    #: read them (``model = build()``): a parameter so bound no longer holds what it was given.
    rebound: tuple[str, ...] = ()
    #: The ``for`` and ``while`` statements of the body (comprehensions are not among them).
    loops: tuple[Loop, ...] = ()
    #: Code that runs on the first call only: the block of an ``if`` guarding state that
    #: outlives the call and that the block sets (``if self.model is None: self.model =
    #: load()``, ``global model`` ... ``if model is None:``, ``if key not in CACHE:``, ``if
    #: len(tf.get_collection("k")) == 0:`` with the block adding to collection ``"k"``), and
    #: what follows ``if model is not None: return model`` at the top level.
    once: tuple[Span, ...] = ()
    #: The blocks of ``with graph.as_default():`` for a graph the body makes itself
    #: (``self.graph = tf.Graph()``, ``tf.Graph().as_default()``): the ops built there go into
    #: that graph, not into the default graph of whoever calls the body; and the block of
    #: ``if tf.executing_eagerly():`` (the ``else`` of ``if not ...``), whose ops run eagerly
    #: and go into no graph.
    own_graph: tuple[Span, ...] = ()
    #: The blocks of every ``with`` that makes a graph the default (:func:`~tflint_leaks.
    #: analysis.graph.enters_graph`: a session made there, ``g.as_default()`` for a graph):
    #: TensorFlow calls there build graph nodes even where eager execution is on.
    graph_blocks: tuple[Span, ...] = ()
    #: The ``if`` statements whose test reads a parameter or an attribute of ``self``
    #: (:class:`Branch`), and the parameters and ``self.attribute`` names they read, sorted.
    branches: tuple[Branch, ...] = ()
    switches: tuple[str, ...] = ()
    #: ``X[key] = value`` into a container named by a dotted name (``self.var_gen[str(i)] =
    #: [...]``): the container's name, the key and the value.
    item_stores: tuple[tuple[str, Expr, Expr], ...] = ()
    #: The ``if`` statements (and conditional expressions) whose test compares only module
    #: state (names neither a parameter nor the body's own: ``if FLAGS.adv_class == -1:``) or
    #: the body's literal constants (:attr:`constants`): decided alike for every call.
    fixed: tuple[Branch, ...] = ()
    #: The appends that add one item per iteration of a top-level ``for`` loop.
    counted: tuple[Counted, ...] = ()
    #: The values the body changes in place, by the dotted name that holds them, and where:
    #: an item or slice stored (``x[i] = v``, ``x[:] += 1``), an in-place method
    #: (``x.sort()``, ``x.fill(0)``), an in-place NumPy function (``np.random.shuffle(x)``,
    #: ``np.copyto(x, y)``, ``rng.shuffle(x)``) or ``out=x``.
    changed: tuple[tuple[str, Span], ...] = ()
    #: The two blocks of every ``if`` with an ``else``: one run of the body runs code of one
    #: of them at most, never of both.
    exclusive: tuple[tuple[Span, Span], ...] = ()
    #: The assignments (target and statement) that every path from them assigns again
    #: before any code that could look at the target from elsewhere runs, and those to a
    #: target the same run has certainly assigned before (:mod:`.overwrites`).
    overwritten: tuple[tuple[str, Span], ...] = ()
    renewed: tuple[tuple[str, Span], ...] = ()
    #: Names that the top level holds no value of some sorts any more after an ``if
    #: isinstance(name, str): name = [name]`` (an ``if``/``elif`` chain of which every block
    #: binds the name anew at its top level or leaves the body), each with those sorts:
    #: ``"str"`` (``isinstance(name, str)``), ``"callable"`` (``callable(name)``). What
    #: reaches the code after the chain from before is of none of them.
    narrowed: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: The blocks that restore from a file what the other block of the same ``if`` computed
    #: and saved to it (``if not os.path.isfile(path): ret = split(); save(ret, path)`` /
    #: ``else: ret = load(path)``): a disk cache, whose restored values are the computed ones.
    restores: tuple[Span, ...] = ()
    #: The calls of a ``tf.data`` source (:data:`~tflint_leaks.analysis.keras.
    #: DATASET_SOURCES`) whose pipeline the body only iterates in its ``for`` loops, with
    #: data-free steps alone (:func:`_iterated_pipelines`), by their expressions.
    iterated_pipelines: tuple[Expr, ...] = ()
    #: The calls whose result the body binds to a name that it then uses as a Keras model
    #: (:func:`~tflint_leaks.analysis.keras.model_use`: ``model = build_fn(**params)`` then
    #: ``model.compile(...)``), by their expressions: what such a call makes is a model even
    #: where what it calls is not known (a factory the caller passes in).
    model_calls: tuple[Expr, ...] = ()
    #: Those of :attr:`model_calls` whose result the body compiles (``model.compile(...)``):
    #: only a Keras model has ``compile``, where other estimators also take ``fit(...,
    #: epochs=...)`` (alibi-detect's ``OutlierAE``).
    compiled_calls: tuple[Expr, ...] = ()
    #: The blocks of the guards that look a key up (``if s not in self.Ps:``, ``if k in cache:
    #: ... else:``) that the body computes from its parameters, with those parameters (``s =
    #: game.stringRepresentation(board)``: ``board``). Among :attr:`once` when the block sets
    #: the state, they run once per distinct key: per call, when the key is data the call is
    #: given (:meth:`~tflint_leaks.analysis.effects.Effects.runs_per_key`).
    keyed: tuple[tuple[Span, tuple[str, ...]], ...] = ()
    #: The names the body binds once, to a literal, and in no other way (not a parameter, not
    #: ``global``; no other assignment, augmented assignment, loop target or ``with`` name),
    #: with their literal: ``keras = False`` above ``load(w) if keras else restore(w)``. Each
    #: holds its literal wherever the body reads it (before the assignment, a read raises).
    constants: tuple[tuple[str, Expr], ...] = ()

    def apart(self, first: Span, second: Span) -> bool:
        """The code at ``first`` and at ``second`` never both run in one run of the body:
        they lie in the two blocks of one ``if``/``else``."""
        return any(
            (then.contains(first) and orelse.contains(second))
            or (then.contains(second) and orelse.contains(first))
            for then, orelse in self.exclusive
        )

    def in_graph_block(self, span: Span) -> bool:
        """The code at ``span`` runs with a graph made the default (:attr:`graph_blocks`)."""
        return within(span, self.graph_blocks)

    def in_own_graph(self, span: Span) -> bool:
        """The code at ``span`` builds into a graph of the body's own (:attr:`own_graph`)."""
        return within(span, self.own_graph)

    def default(self, name: str) -> Expr | None:
        """The default value of the parameter ``name`` (None: it has none)."""
        return next((a.value for a in self.defaults if a.target == name), None)

    def runs_once(self, span: Span) -> bool:
        """The code at ``span`` runs on the body's first call only (:attr:`once`)."""
        return within(span, self.once)

    def keyed_by(self, span: Span) -> tuple[str, ...]:
        """The parameters the key of the lookups guarding the code at ``span`` is computed from
        (:attr:`keyed`)."""
        return tuple(
            sorted({name for block, names in self.keyed if block.contains(span) for name in names})
        )

    def loop_around(self, span: Span) -> Loop | None:
        """The innermost loop of the body whose every iteration runs the code at ``span``."""
        around = [loop for loop in self.loops if loop.body.contains(span)]
        return max(around, key=lambda loop: loop.header) if around else None


def within(span: Span, blocks: Iterable[Span]) -> bool:
    """The code at ``span`` lies in one of ``blocks``."""
    return any(block.contains(span) for block in blocks)


Resolve = Callable[[ast.expr], str | None]
SpanOf = Callable[[ast.expr | ast.stmt], Span]


def _kept(call: ast.Call, resolve: Resolve, graph_code: bool) -> bool:
    func = call.func
    if isinstance(func, ast.Name) and func.id in PLAIN_BUILTINS:
        return False
    resolved = resolve(func)
    if resolved is None:
        return True
    if is_tensorflow(resolved) or is_keras(resolved) or is_numpy(resolved):
        return (
            keras.builds_model(resolved)
            or resolved in keras.CLEAR_SESSION
            or resets_graph(resolved)
            or resolved in keras.DATASET_SOURCES
            or resolved in {GRADIENT_TAPE, TF_FUNCTION, keras.GRAPH_FUNCTION}
            or resolved in REGISTERING_CALLS
            or resolved.rpartition(".")[2]
            in GRAPH_MODE_SWITCHES | EAGER_MODE_SWITCHES | FUNCTIONS_EAGERLY_SWITCHES
            or resolved.rpartition(".")[2].startswith("DEFINE_")  # ``tf.app.flags``' flags
            or (graph_code and builds_graph(resolved))
        )
    return True


#: Test helpers that call the callable they are given, at this position, with the arguments
#: after it, and expect it to raise: ``self.assertRaises(TypeError, evaluate, 3, data)``
#: calls ``evaluate(3, data)`` (``unittest.TestCase``'s methods, on ``self``; pytest's).
_RAISES_METHODS = {
    "assertRaises": 1,
    "assertWarns": 1,
    "assertRaisesRegex": 2,
    "assertRaisesRegexp": 2,
    "assertWarnsRegex": 2,
}
_RAISES_FUNCTIONS = {"pytest.raises": 1, "pytest.warns": 1}


def _add_call(
    call: ast.Call,
    resolve: Resolve,
    span_of: SpanOf,
    graph_code: bool,
    calls: list[Site],
    sources: list[ast.Call],
) -> None:
    """Keep ``call`` among the body's sites (:func:`_kept`), and among its ``tf.data``
    sources (every dataset source is kept, so ``resolve`` answers from its memo)."""
    if _kept(call, resolve, graph_code):
        calls.append(_site(call, resolve, span_of))
        if resolve(call.func) in keras.DATASET_SOURCES:
            sources.append(call)


def _site(call: ast.Call, resolve: Resolve, span_of: SpanOf) -> Site:
    called = _called_by_test(call, resolve)
    if called is None:
        return Site(from_ast(call), span_of(call))
    return Site(from_ast(called), span_of(call), raises=True)


def _called_by_test(call: ast.Call, resolve: Resolve) -> ast.Call | None:
    """The call of the callable a test helper is given, with the arguments after it
    (``self.assertRaises(E, f, 3)`` is ``f(3)``: ``f`` is called there, not handed on), or
    None when ``call`` is no such helper's (its context-manager form included)."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        position = _RAISES_METHODS.get(func.attr) if func.value.id == "self" else None
    else:
        resolved = resolve(func)
        position = None if resolved is None else _RAISES_FUNCTIONS.get(resolved)
    if position is None or len(call.args) <= position:
        return None
    if any(isinstance(argument, ast.Starred) for argument in call.args[: position + 1]):
        return None
    called = ast.Call(call.args[position], call.args[position + 1 :], call.keywords)
    return ast.copy_location(called, call)


def _targets(target: ast.expr, value: Expr, span: Span) -> Iterable[Assign]:
    if isinstance(target, ast.Tuple | ast.List):
        known = True  # positions after a ``*rest`` count from the end: not known
        for position, element in enumerate(target.elts):
            if isinstance(element, ast.Starred):
                known = False
                yield from _targets(element.value, UNKNOWN, span)
            else:
                yield from _targets(element, item(value, position) if known else UNKNOWN, span)
        return
    name = from_ast(target)
    if name.op is Op.REF:
        yield Assign(name.text, value, span)


#: The node types :func:`collect_body` reads (every other node is skipped at once).
_COLLECTED = frozenset(
    {
        ast.Assign,
        ast.AnnAssign,
        ast.AugAssign,
        ast.NamedExpr,
        ast.For,
        ast.AsyncFor,
        ast.While,
        ast.With,
        ast.withitem,
        ast.Return,
        ast.Global,
        ast.Call,
        ast.If,
        ast.IfExp,
        ast.BoolOp,
    }
)


def collect_body(
    nodes: Iterable[ast.AST],
    resolve: Resolve,
    span_of: SpanOf,
    arguments: ast.arguments | None = None,
    *,
    graph_code: bool = False,
    top: Iterable[ast.stmt] = (),
    statements: Iterable[ast.stmt] | None = None,
) -> Body:
    """The facts of one body, from its own nodes (nested functions and classes excluded). In
    graph code (:func:`~tflint_leaks.analysis.graph.is_graph_code`) the calls that add nodes
    to the default graph are kept too. ``top`` is a function's own block; ``statements`` the
    body's top-level statements when they are not ``top`` (a module's)."""
    assigns: list[Assign] = []
    returns: list[Expr] = []
    calls: list[Site] = []
    annotations: list[Assign] = []
    declared: list[str] = []
    defaults: list[Assign] = []
    loops: list[Loop] = []
    withs: list[ast.With] = []
    made: dict[str, str] = {}  # names bound to a new graph or to a graph collection
    conditions: _Conditions = ([], [], [], [], [])
    guards, branches, alternatives, exclusive, restores = conditions
    item_stores: list[tuple[str, Expr, Expr]] = []
    changed: list[tuple[str, Span]] = []
    params = set(_parameters(arguments, defaults, annotations) if arguments else ())
    nodes = nodes if isinstance(nodes, list) else list(nodes)
    sources: list[ast.Call] = []  # ``tf.data`` sources, for _iterated_pipelines
    for node in nodes:
        if type(node) not in _COLLECTED:
            continue
        changed.extend(_changed_in_place(node, resolve, span_of))
        if isinstance(node, ast.Call):  # the most common by far: tested first
            _add_call(node, resolve, span_of, graph_code, calls, sources)
        elif isinstance(node, ast.Assign):
            value = from_ast(node.value)
            assigns.extend(a for t in node.targets for a in _targets(t, value, span_of(node)))
            item_stores.extend(_items_stored(node.targets, value))
            made.update(_graph_names(node, resolve))
        elif isinstance(node, ast.With):
            withs.append(node)
        elif isinstance(node, ast.AnnAssign):
            _annotated(node, annotations, assigns, span_of)
        elif isinstance(node, ast.AugAssign):
            assigns.extend(_targets(node.target, _augmented(node), span_of(node)))
        elif isinstance(node, ast.NamedExpr):
            assigns.extend(_targets(node.target, from_ast(node.value), span_of(node)))
        elif isinstance(node, ast.For | ast.AsyncFor):
            loops.append(_loop(node, node.iter, span_of))
            assigns.extend(
                _targets(node.target, iterate(from_ast(node.iter)), span_of(node.target))
            )
        elif isinstance(node, ast.While):
            loops.append(_loop(node, node.test, span_of))
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            assigns.extend(
                _targets(
                    node.optional_vars, from_ast(node.context_expr), span_of(node.optional_vars)
                )
            )
        elif isinstance(node, ast.Return) and node.value is not None:
            returns.append(from_ast(node.value))
        elif isinstance(node, ast.Global):
            declared.extend(node.names)
        elif isinstance(node, ast.If | ast.IfExp | ast.BoolOp):
            _condition(node, params, conditions, span_of, resolve)
    local = (params | {a.target for a in assigns}) - set(declared)
    branches, fixed, constants = _split(branches, params, local, assigns, params | {*declared})
    return Body(
        tuple(assigns),
        tuple(returns),
        tuple(calls),
        tuple(annotations),
        tuple(declared),
        tuple(defaults),
        _rebound(top),
        tuple(sorted(loops, key=lambda loop: loop.header)),
        _once(guards, alternatives, list(top), local, span_of, made, resolve),
        (
            *(_block(w.body, span_of) for w in withs if _own_graph(w, made, resolve)),
            *(_block(b, span_of) for n in nodes if (b := _eager_block(n, resolve))),
        ),
        tuple(_block(w.body, span_of) for w in withs if _enters_graph(w, made, resolve)),
        tuple(branches),
        tuple(sorted({name for b in branches for name in _switches(b.test, params)})),
        tuple(item_stores),
        fixed,
        tuple(_counted(block := list(top if statements is None else statements), span_of)),
        tuple(sorted(changed, key=lambda found: found[1])),
        tuple(exclusive),
        *_flow(block, assigns, resolve, span_of),
        _narrowed(top),
        tuple(restores),
        _iterated_pipelines(nodes, sources, local=arguments is not None, shared=set(declared)),
        _model_calls(calls, assigns),
        _model_calls(calls, assigns, compiled=True),
        _keyed(guards, params, assigns, span_of),
        tuple(constants.items()),
    )


def _keyed(
    guards: list[tuple[tuple[str, ...], list[ast.stmt], Expr]],
    params: set[str],
    assigns: list[Assign],
    span_of: SpanOf,
) -> tuple[tuple[Span, tuple[str, ...]], ...]:
    """:attr:`Body.keyed`: the guards' blocks whose test looks a key up (``k not in X``, ``k
    in X``) that the body computes from its parameters, with those parameters."""
    lookups = [(block, keys) for _, block, test in guards if (keys := _membership_keys(test))]
    if not lookups:
        return ()
    values: dict[str, list[Expr]] = {}
    for assign in assigns:
        values.setdefault(assign.target, []).append(assign.value)
    found = []
    for block, keys in lookups:
        inputs: set[str] = set()
        seen: set[str] = set()
        todo = [name for key in keys for name in heads(key)]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            if name in params and name not in {"self", "cls"}:
                inputs.add(name)
            elif name not in params:
                todo.extend(head for value in values.get(name, ()) for head in heads(value))
        if inputs:
            found.append((_block(block, span_of), tuple(sorted(inputs))))
    return tuple(found)


def _membership_keys(test: Expr) -> list[Expr]:
    """The keys ``k`` of a test's ``k in X`` and ``k not in X`` (through ``and``, ``or``,
    ``not``)."""
    if test.op is Op.OTHER and test.text in {"and", "or"}:
        return [key for part in test.parts for key in _membership_keys(part)]
    if test.op is Op.UNARY and test.text == "not":
        return _membership_keys(test.parts[0])
    if test.op is Op.OTHER and test.text == "compare":
        pairs = zip(test.parts, test.keywords, test.parts[1:], strict=False)
        return [left for left, operator, _ in pairs if operator in {"in", "not in"}]
    return []


def _model_calls(
    calls: list[Site], assigns: list[Assign], *, compiled: bool = False
) -> tuple[Expr, ...]:
    """:attr:`Body.model_calls` (:attr:`Body.compiled_calls` with ``compiled``: only the
    assignment made last before the ``compile`` call, in the order of the code: a notebook's
    ``model = ARIMA(...)`` is not what its later ``model = tf.keras.Sequential(...)`` compiles)."""
    used = set()
    compiled_at: list[tuple[str, Span]] = []
    for site in calls:
        receiver = keras.model_use(site.call)
        if compiled and (site.call.method is None or site.call.method[1] != "compile"):
            continue
        if receiver is not None and receiver.op is Op.REF:
            used.add(receiver.text)
            compiled_at.append((receiver.text, site.span))
    if not used:
        return ()
    if compiled:
        reaching = []
        for name, span in compiled_at:
            before = [a for a in assigns if a.target == name and a.span and a.span < span]
            if before:
                reaching.append(max(before, key=lambda a: a.span or span).value)
        found = (value for value in reaching if value.op is Op.CALL)
    else:
        found = (a.value for a in assigns if a.target in used and a.value.op is Op.CALL)
    return tuple(dict.fromkeys(found))


def _flow(
    block: list[ast.stmt], assigns: list[Assign], resolve: Resolve, span_of: SpanOf
) -> tuple[tuple[tuple[str, Span], ...], tuple[tuple[str, Span], ...]]:
    """:attr:`Body.overwritten` and :attr:`Body.renewed`: :func:`~.overwrites.flow` of the
    targets a body assigns more than once: only those may be overwritten or renewed (most
    bodies have none, and the flow walks what may run code)."""
    seen: set[str] = set()
    twice: set[str] = set()
    for assign in assigns:
        (twice if assign.target in seen else seen).add(assign.target)
    if not twice:
        return (), ()
    overwritten, renewed = flow(block, resolve, frozenset(twice))
    return _placed(overwritten, span_of), _placed(renewed, span_of)


def _placed(found: Iterable[tuple[str, ast.stmt]], span_of: SpanOf) -> tuple[tuple[str, Span], ...]:
    """(target, span) pairs in the order of their statements."""
    placed = ((target, span_of(node)) for target, node in found)
    return tuple(sorted(placed, key=lambda pair: (pair[1], pair[0])))


#: NumPy's and the standard library's functions that change their first argument in place
#: (the NumPy API reference: "in-place", "modifies its argument").
_IN_PLACE_FUNCTIONS = frozenset(
    {
        "numpy.random.shuffle",
        "numpy.copyto",
        "numpy.put",
        "numpy.put_along_axis",
        "numpy.place",
        "numpy.putmask",
        "numpy.fill_diagonal",
        "random.shuffle",
    }
)
#: ``ndarray`` (and ``list``) methods that change the receiver in place.
_IN_PLACE_METHODS = frozenset({"sort", "fill", "resize", "put", "itemset", "partition", "setfield"})


#: The node types that may change a value in place (:func:`_changed_in_place`).
_CHANGING = frozenset({ast.Assign, ast.AugAssign, ast.Call})


def _changed_in_place(node: ast.AST, resolve: Resolve, span_of: SpanOf) -> list[tuple[str, Span]]:
    """The dotted names of the values ``node`` changes in place, with its span
    (:attr:`Body.changed`). A ``shuffle`` method of an object nothing resolves
    (``rng.shuffle(x)``, a NumPy ``Generator``) counts; one that resolves elsewhere
    (``tf.random.shuffle``, ``sklearn.utils.shuffle``) returns a new value and does not."""
    if type(node) not in _CHANGING:
        return []  # most nodes: answered without building anything
    names: list[str | None] = []
    if isinstance(node, ast.Assign | ast.AugAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = [dotted_ast(t.value) for t in targets if isinstance(t, ast.Subscript)]
    elif isinstance(node, ast.Call):
        func = node.func
        method = func.attr if isinstance(func, ast.Attribute) else None
        if isinstance(func, ast.Attribute) and method in _IN_PLACE_METHODS:
            names.append(dotted_ast(func.value))
        names += [dotted_ast(k.value) for k in node.keywords if k.arg == "out"]
        if node.args and (
            (resolved := resolve(func)) in _IN_PLACE_FUNCTIONS
            or (resolved is None and method == "shuffle")
        ):
            names.append(dotted_ast(node.args[0]))
    if names and isinstance(node, ast.expr | ast.stmt):
        return [(name, span_of(node)) for name in names if name is not None]
    return []


def _counted(
    statements: Iterable[ast.stmt], span_of: SpanOf, block: Span | None = None
) -> Iterator[Counted]:
    """:class:`Counted` appends of the ``for`` loops among ``statements`` and in the blocks of
    their ``if``, ``with`` and ``try`` statements, outside any other loop (each with the
    block it is a statement of, None for ``statements`` themselves): the statements of each
    loop's block and of the ``if`` blocks in it (``if e not in out: out.append(e)``: at most
    one per iteration)."""
    for loop in statements:
        if isinstance(loop, ast.If | ast.With | ast.Try):
            for inner in _blocks_of(loop):
                if inner:
                    yield from _counted(inner, span_of, _block(inner, span_of))
            continue
        if not isinstance(loop, ast.For):
            continue
        leaves = any(_leaves(node) for node in loop.body)
        blocks: list[tuple[list[ast.stmt], bool]] = [(loop.body, not leaves)]
        while blocks:
            body, exact = blocks.pop()
            for statement in body:
                if isinstance(statement, ast.If):
                    blocks.extend(((statement.body, False), (statement.orelse, False)))
                    continue
                added = _appended(statement)
                if added is not None:
                    container, one = added
                    iterable = from_ast(loop.iter)
                    yield Counted(container, iterable, span_of(loop), exact and one, block)


def _blocks_of(statement: ast.If | ast.With | ast.Try) -> list[list[ast.stmt]]:
    if isinstance(statement, ast.If):
        return [statement.body, statement.orelse]
    if isinstance(statement, ast.With):
        return [statement.body]
    return [statement.body, *(h.body for h in statement.handlers), statement.orelse]


def _appended(statement: ast.stmt) -> tuple[str, bool] | None:
    """The container ``statement`` adds one item to, if it does, and whether the item is
    always a new one: ``out.append(e)`` adds one, ``out[key] = v`` one at most (a key already
    there is replaced)."""
    if (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Subscript)
        and not isinstance(statement.targets[0].slice, ast.Slice)
    ):
        name = dotted_ast(statement.targets[0].value)
        return None if name is None else (name, False)
    call = statement.value if isinstance(statement, ast.Expr) else None
    if (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "append"
        and len(call.args) == 1
        and not call.keywords
    ):
        name = dotted_ast(call.func.value)
        return None if name is None else (name, True)
    return None


def _leaves(statement: ast.stmt) -> bool:
    """``statement`` may end an iteration of the loop it is in early (a nested function's
    code aside)."""
    stack: list[ast.AST] = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Break | ast.Continue | ast.Return | ast.Raise):
            return True
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            stack.extend(ast.iter_child_nodes(node))
    return False


def _augmented(node: ast.AugAssign) -> Expr:
    """The value ``n += 1`` assigns: ``n + 1`` (a list's ``+=`` extends it: still a list)."""
    operator = BINARY_OPERATORS[type(node.op)]
    return Expr(Op.BINARY, operator, (from_ast(node.target), from_ast(node.value)))


def _items_stored(targets: Iterable[ast.expr], value: Expr) -> Iterator[tuple[str, Expr, Expr]]:
    """``X[key] = value`` for each target that stores into a container a dotted name names."""
    for target in targets:
        if isinstance(target, ast.Subscript):
            container = from_ast(target.value)
            if container.op is Op.REF:
                yield container.text, from_ast(target.slice), value


def _annotated(
    node: ast.AnnAssign, annotations: list[Assign], assigns: list[Assign], span_of: SpanOf
) -> None:
    """``name: annotation = value``: its annotation, and its assignment when it has a value."""
    name = from_ast(node.target)
    if name.op is Op.REF:
        annotations.append(Assign(name.text, from_ast(node.annotation)))
        if node.value is not None:
            assigns.append(Assign(name.text, from_ast(node.value), span_of(node)))


def _graph_names(node: ast.Assign, resolve: Resolve) -> dict[str, str]:
    """The names ``node`` binds to a new graph (``self.graph = tf.Graph()``: :data:`GRAPH`)
    or to a collection of the default graph (``coll = tf.get_collection("is_training")``:
    the collection's state name, :func:`_collection`)."""
    value = node.value
    if not isinstance(value, ast.Call):
        return {}
    callee = resolve(value.func)
    made = GRAPH if callee == GRAPH else _collection(value, callee, COLLECTION_READS)
    if made is None:
        return {}
    return {name: made for target in node.targets if (name := dotted_ast(target)) is not None}


#: What reads and what adds to a collection of the default graph, by canonical name.
COLLECTION_READS = frozenset({"tensorflow.get_collection", "tensorflow.get_collection_ref"})
COLLECTION_WRITES = frozenset({"tensorflow.add_to_collection", "tensorflow.add_to_collections"})


def _collection(call: ast.Call, callee: str | None, names: frozenset[str]) -> str | None:
    """``graph collection "k"`` for a call of one of ``names`` on the literal key ``k``: state
    of the default graph, which outlives every call."""
    if callee is None or v1(callee) not in names or not call.args:
        return None
    key = call.args[0]
    if isinstance(key, ast.Constant) and isinstance(key.value, str):
        return f"{_COLLECTION} {key.value!r}"
    return None


#: How :func:`_graph_names` names a collection of the default graph, as state.
_COLLECTION = "graph collection"


def _iterated_pipelines(
    nodes: list[ast.AST], sources: list[ast.Call], *, local: bool, shared: set[str]
) -> tuple[Expr, ...]:
    """The pipelines the body only iterates: each call of a source of
    :data:`~tflint_leaks.analysis.keras.DATASET_SOURCES` whose pipeline (the source with
    data-free steps on it, ``.batch(n)``, through the names the body binds it to, ``ds =
    ds.shuffle(k)``) nothing uses but the iterable of a ``for`` loop, eagerly. Passed to a
    call (``model.fit(ds)``, ``step(ds)``, ``iter(ds)``), returned, yielded, stored or mapped
    over, it may be traced or kept. Only a function's own names count (``local``, and not
    those it declares ``global``: ``shared``): other code may read the module's. Each by its
    call's expression, when every call of the body with that expression is so. ``sources``:
    the body's calls of those sources, in order."""
    if not sources:
        return ()
    fine: set[int] = set()  # the source calls and name loads a loop or a step uses
    flows: list[tuple[ast.expr, str]] = []  # ``name = <pipeline of root>``
    loads: list[ast.Name] = []
    for node in nodes:
        if isinstance(node, ast.For | ast.AsyncFor):
            fine.add(id(_pipeline_root(node.iter)))
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if local and isinstance(target, ast.Name) and target.id not in shared:
                root = _pipeline_root(node.value)
                fine.add(id(root))
                flows.append((root, target.id))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            loads.append(node)
    escaped = {load.id for load in loads if id(load) not in fine}
    grown = True
    while grown:  # what flows into an escaping name escapes with it
        before = len(escaped)
        escaped.update(
            root.id for root, name in flows if name in escaped and isinstance(root, ast.Name)
        )
        grown = len(escaped) > before
    bound = {id(root): name for root, name in flows}
    iterated = {
        id(call) for call in sources if id(call) in fine and bound.get(id(call)) not in escaped
    }
    kinds: dict[Expr, bool] = {}
    for call in sources:
        expr = from_ast(call)
        kinds[expr] = kinds.get(expr, True) and id(call) in iterated
    return tuple(expr for expr, only in kinds.items() if only)


def _pipeline_root(expr: ast.expr) -> ast.expr:
    """What a pipeline expression steps from: ``tf.data.Dataset.range(n)`` for
    ``tf.data.Dataset.range(n).batch(b).prefetch(1)``, ``ds`` for ``ds.shuffle(k)``."""
    while (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr in keras.DATA_FREE_STEPS
    ):
        expr = expr.func.value
    return expr


#: ``tf.executing_eagerly``, under both its names.
_EXECUTING_EAGERLY = frozenset(
    {"tensorflow.executing_eagerly", "tensorflow.compat.v1.executing_eagerly"}
)


def _eager_block(node: ast.AST, resolve: Resolve) -> list[ast.stmt] | None:
    """The block of an ``if`` that runs only where eager execution is on: the body of ``if
    tf.executing_eagerly():``, the ``else`` of ``if not tf.executing_eagerly():``."""
    if not isinstance(node, ast.If):
        return None
    test = node.test
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    call = test.operand if isinstance(test, ast.UnaryOp) and negated else test
    if not (isinstance(call, ast.Call) and resolve(call.func) in _EXECUTING_EAGERLY):
        return None
    block = node.orelse if negated else node.body
    return block or None


def _own_graph(node: ast.With, graphs: dict[str, str], resolve: Resolve) -> bool:
    """``with tf.Graph().as_default():``, or ``with g.as_default():`` for a name the body binds
    to a new graph (``graphs``)."""
    return any(
        method == AS_DEFAULT and receiver == GRAPH
        for _, method, receiver in _entered(node, graphs, resolve)
    )


def _enters_graph(node: ast.With, graphs: dict[str, str], resolve: Resolve) -> bool:
    """One of the ``with``'s items makes a graph the default (:func:`~tflint_leaks.analysis.
    graph.enters_graph`)."""
    return any(enters_graph(*item) for item in _entered(node, graphs, resolve))


def _entered(
    node: ast.With, graphs: dict[str, str], resolve: Resolve
) -> Iterator[tuple[str | None, str | None, str | None]]:
    """For each call a ``with`` enters, what :func:`~tflint_leaks.analysis.graph.enters_graph`
    asks: its canonical name, and for ``x.as_default()`` the method's name and what ``x`` is
    (the canonical name of the call that made it, here or bound to a name of ``graphs``, or
    ``.graph``)."""
    for entry in node.items:
        call = entry.context_expr
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == AS_DEFAULT):
            yield resolve(func), None, None
            continue
        made = func.value
        receiver = resolve(made.func) if isinstance(made, ast.Call) else None
        receiver = receiver or graphs.get(dotted_ast(made) or "")
        if receiver is None and isinstance(made, ast.Attribute):
            receiver = f".{made.attr}"  # ``sess.graph``
        yield resolve(func), func.attr, receiver


def _parameters(
    arguments: ast.arguments, defaults: list[Assign], annotations: list[Assign]
) -> list[str]:
    """The parameters' names; their defaults and annotations added to the lists given."""
    positional = [*arguments.posonlyargs, *arguments.args]
    with_defaults = positional[len(positional) - len(arguments.defaults) :]
    pairs: list[tuple[ast.arg, ast.expr | None]] = [
        *zip(with_defaults, arguments.defaults, strict=True),
        *zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True),
    ]
    defaults.extend(Assign(a.arg, from_ast(d)) for a, d in pairs if d is not None)
    names: list[str] = []
    for arg in (
        *arguments.posonlyargs,
        *arguments.args,
        *arguments.kwonlyargs,
        *([arguments.vararg] if arguments.vararg else []),
        *([arguments.kwarg] if arguments.kwarg else []),
    ):
        names.append(arg.arg)
        if arg.annotation is not None:
            annotations.append(Assign(arg.arg, from_ast(arg.annotation)))
    return names


def _once(
    guards: list[tuple[tuple[str, ...], list[ast.stmt], Expr]],
    alternatives: list[tuple[str, list[ast.expr]]],
    top: list[ast.stmt],
    local: set[str],
    span_of: SpanOf,
    made: dict[str, str],
    resolve: Resolve,
) -> tuple[Span, ...]:
    """The blocks of :attr:`Body.once`: those of ``guards`` (each block of an ``if`` with the
    state whose absence it runs on) that set state outliving the call, the operands after such a
    state in an ``or`` (``self.model or self.setup_model()``, :func:`_condition`) that set
    it, and the rest of ``top`` after an early return on the state's presence. ``local``: the
    body's own names;
    ``made``: the locals that stand for a graph collection (:func:`_graph_names`), which
    outlives the call and which the block sets by adding to it."""

    def outlives(state: str) -> bool:
        head = state.partition(".")[0]
        if head not in local and resolve(ast.Name(head, ast.Load())) in REQUEST_SCOPED:
            return False  # ``flask.g`` is made anew for each request
        return "." in state or state not in local  # an attribute, a global, a closure's

    def sets(block: Sequence[ast.AST], state: str) -> bool:
        collection = made.get(state, "")
        if collection.startswith(_COLLECTION):
            return any(
                isinstance(node, ast.Call)
                and _collection(node, resolve(node.func), COLLECTION_WRITES) == collection
                for statement in block
                for node in walk(statement)
            )
        return outlives(state) and _sets(block, state)

    once = [
        _block(block, span_of) for state, block, _ in guards if any(sets(block, s) for s in state)
    ]
    once.extend(_block(rest, span_of) for state, rest in alternatives if sets(rest, state))
    for position, statement in enumerate(top[:-1]):
        if (
            isinstance(statement, ast.If)
            and not statement.orelse
            and isinstance(statement.body[-1], ast.Return)
        ):
            rest = top[position + 1 :]
            state = _present_state(from_ast(statement.test))
            if any(sets(rest, s) for s in state):
                once.append(_block(rest, span_of))
                break
    return tuple(once)


#: Objects a web framework makes anew for each request, whose state a guard cannot keep from
#: one request to the next: Flask's ``g`` lives as long as the application context Flask
#: pushes per request ("g is a good place to store resources during a request"; its
#: ``get_db`` example guards ``if 'db' not in g:``).
REQUEST_SCOPED = frozenset({"flask.g"})


#: Where :func:`_condition` records what it finds: first-call guards, branches on a parameter,
#: ``state or make()`` alternatives, the two blocks of each ``if``/``else``, and the blocks that
#: restore a disk cache.
_Conditions = tuple[
    list[tuple[tuple[str, ...], list[ast.stmt], Expr]],
    list[Branch],
    list[tuple[str, list[ast.expr]]],
    list[tuple[Span, Span]],
    list[Span],
]


def _condition(
    node: ast.If | ast.IfExp | ast.BoolOp,
    params: set[str],
    found: _Conditions,
    span_of: SpanOf,
    resolve: Resolve,
) -> None:
    """An ``if``: a first-call guard (:func:`first_run_state`; or the ``else`` of a test of
    the state's presence: ``if key in cache: ... else: cache[key] = build()``), a branch on a
    parameter, a disk cache (:func:`_restores`). A ``state or make()``: ``make()`` runs only
    while ``state`` is not set (falsy). A conditional expression (``load(w) if keras else
    restore(w)``) is a branch as an ``if`` is, its two values the blocks."""
    guards, branches, alternatives, exclusive, restores = found
    if isinstance(node, ast.IfExp):
        test = from_ast(node.test)
        if _switches(test, params) or _read_names(test):
            branches.append(Branch(test, span_of(node.body), span_of(node.orelse)))
        return
    if isinstance(node, ast.BoolOp):
        first = from_ast(node.values[0])
        if isinstance(node.op, ast.Or) and first.op is Op.REF:
            alternatives.append((first.text, node.values[1:]))
        return
    if node.orelse:
        exclusive.append((_block(node.body, span_of), _block(node.orelse, span_of)))
        restore = _restores(node, resolve)
        if restore:
            restores.append(_block(restore, span_of))
    test = from_ast(node.test)
    state = first_run_state(test)
    if state:
        guards.append((state, node.body, test))
    elif node.orelse and (present := _present_state(test)):
        guards.append((present, node.orelse, test))
    if _switches(test, params) or _read_names(test):
        # On a parameter (decided per call), or reading names the body may not bind (module
        # state: ``if FLAGS.adv_class == -1:``, kept as :attr:`Body.fixed` once the body's
        # own names are known).
        orelse = _block(node.orelse, span_of) if node.orelse else None
        branches.append(Branch(test, _block(node.body, span_of), orelse))


#: What tells whether a file exists.
_EXISTS = frozenset({"os.path.isfile", "os.path.exists"})


def _restores(node: ast.If, resolve: Resolve) -> list[ast.stmt] | None:
    """The block of a disk cache's ``if`` that restores: ``if not os.path.isfile(P):`` (or
    ``exists``) whose block passes ``P`` to a call (it saves) and whose ``else`` passes it to
    a call too (it loads), or the same with the blocks swapped for ``if os.path.isfile(P):``."""
    test, negated = node.test, False
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, negated = test.operand, True
    if not (
        node.orelse
        and isinstance(test, ast.Call)
        and len(test.args) == 1
        and resolve(test.func) in _EXISTS
    ):
        return None
    path = from_ast(test.args[0])
    computes, restores = (node.body, node.orelse) if negated else (node.orelse, node.body)
    if _passes(computes, path) and _passes(restores, path):
        return restores
    return None


def _passes(block: Sequence[ast.stmt], path: Expr) -> bool:
    """A call of ``block`` takes ``path`` as an argument."""
    return any(
        isinstance(node, ast.Call) and any(from_ast(argument) == path for argument in node.args)
        for statement in block
        for node in walk(statement)
    )


def _literal_constants(assigns: Iterable[Assign], skipped: set[str]) -> dict[str, Expr]:
    """:attr:`Body.constants`; ``skipped`` are the body's parameters and ``global``
    names."""
    found: dict[str, list[Expr]] = {}
    for assign in assigns:
        found.setdefault(assign.target, []).append(assign.value)
    return {
        name: values[0]
        for name, values in found.items()
        if len(values) == 1
        and values[0].op is Op.LITERAL
        and name not in skipped
        and "." not in name
    }


def _split(
    found: list[Branch], params: set[str], local: set[str], assigns: list[Assign], skipped: set[str]
) -> tuple[list[Branch], tuple[Branch, ...], dict[str, Expr]]:
    """The branches on a parameter (:attr:`Body.branches`), those on module state or on the
    body's literal constants only (:attr:`Body.fixed`), and those constants (``skipped``: the
    parameters and ``global`` names)."""
    constants = _literal_constants(assigns, skipped)
    own = (local - set(constants)) | {"self", "cls"}
    fixed = tuple(b for b in found if _read_names(b.test) and not heads(b.test) & own)
    return [b for b in found if _switches(b.test, params)], fixed, constants


def _read_names(test: Expr) -> set[str]:
    """The first identifiers of the dotted names a comparison's operands are (``FLAGS`` of
    ``FLAGS.adv_class == -1``), or whose truth the test takes (``LOOP_MODELS`` of ``if
    LOOP_MODELS:`` and of ``if not LOOP_MODELS:``)."""
    if test.op is Op.OTHER and test.text in {"and", "or"}:
        return set().union(*(_read_names(part) for part in test.parts))
    if test.op is Op.OTHER and test.text == "compare":
        return {p.text.partition(".")[0] for p in test.parts if p.op is Op.REF}
    if test.op is Op.REF:
        return {test.text.partition(".")[0]}
    if test.op is Op.UNARY and test.text == "not":
        return _read_names(test.parts[0])
    return set()


def tested(test: Expr) -> set[str]:
    """The plain names a test compares or takes the truth of (``backend`` of ``backend ==
    "tf" or not backend``), and the attributes of ``self`` it so reads (``self.with_per``:
    decided for a call on an instance whose construction sets them, :mod:`.inference`)."""
    found: set[str] = set()
    stack = [test]
    while stack:
        current = stack.pop()
        if current.op is Op.REF and _switch_name(current.text):
            found.add(current.text)
        elif _keyed_state(current):
            found.add(current.parts[0].text)  # ``self.params["eig_type"]``
        elif (current.op is Op.UNARY and current.text == "not") or (
            current.op is Op.OTHER and current.text in {"and", "or", "compare"}
        ):
            stack.extend(current.parts)
    return found


def _keyed_state(expr: Expr) -> bool:
    """``self.name["key"]``: an item of an attribute of ``self`` at a literal key."""
    return (
        expr.op is Op.ITEM
        and bool(expr.keywords)
        and expr.parts[0].op is Op.REF
        and expr.parts[0].text.startswith("self.")
        and "." not in expr.parts[0].text[len("self.") :]
    )


def state_read(expr: Expr) -> Expr | None:
    """The attribute of ``self`` that a test's operand reads: ``self.name`` itself, or the
    attribute of ``self.name["key"]``; None for any other operand."""
    if expr.op is Op.REF and _switch_name(expr.text) and expr.text.startswith("self."):
        return expr
    return expr.parts[0] if _keyed_state(expr) else None


def _switch_name(text: str) -> bool:
    """A name a test may be decided on per call: a plain name, or ``self.attribute``."""
    head, dot, rest = text.partition(".")
    return not dot or (head == "self" and "." not in rest)


def _switches(test: Expr, params: set[str]) -> set[str]:
    """What of ``test`` a call may decide: the parameters it reads and the attributes of
    ``self`` (a method's instance) it reads."""
    return {name for name in tested(test) if name in params or name.startswith("self.")}


def first_run_state(test: Expr) -> tuple[str, ...]:
    """The state whose absence ``test`` tests, so that its block runs until the block sets
    it: ``X`` of ``X is None``, ``X == None``, ``not X``, ``len(X) == 0``, ``k not in X`` (``not
    k in X``, ``k not in X.keys()``), the global ``X`` of ``"X" not in globals()``, and
    ``X.a`` of ``not hasattr(X, "a")``, through ``and`` and ``or``; () for any other test."""
    if test.op is Op.OTHER and test.text in {"and", "or"}:
        return tuple(found for part in test.parts for found in first_run_state(part))
    if test.op is Op.OTHER and test.text == "compare":
        found: list[str] = []
        for left, operator, right in zip(test.parts, test.keywords, test.parts[1:], strict=False):
            if operator in {"is", "=="} and right == _NONE and left.op is Op.REF:
                found.append(left.text)
            elif operator == "not in" and (container := _container(right)) is not None:
                found.append(container)  # ``k not in X``, ``k not in X.keys()``
            elif operator == "not in" and (name := _global_name(left, right)) is not None:
                found.append(name)  # ``"model" not in globals()``
            elif _empty(left, operator, right):  # ``len(X) == 0``: ``not X``
                found.append(left.positional[0].text)
        return tuple(found)
    if test.op is Op.UNARY and test.text == "not":
        operand = test.parts[0]
        if operand.op is Op.REF:
            return (operand.text,)
        if operand.op is Op.ITEM and operand.parts[0].op is Op.REF:
            return (operand.parts[0].text,)
        if (
            operand.op is Op.CALL
            and operand.func == _HASATTR
            and len(operand.positional) == 2
            and operand.positional[0].op is Op.REF
            and operand.positional[1].op is Op.LITERAL
            and operand.positional[1].text == "str"
        ):
            return (f"{operand.positional[0].text}.*",)
        if operand.op is Op.OTHER and operand.text == "compare":
            return _present_state(operand)  # ``not k in X``: ``k not in X``
    return ()


def _present_state(test: Expr) -> tuple[str, ...]:
    """The state whose presence ``test`` tests: ``X`` of ``X is not None``, ``X != None``,
    ``X``, ``k in X``, ``"X" in globals()``, ``hasattr(X, "a")``."""
    if test.op is Op.REF:
        return (test.text,)
    if test.op is Op.OTHER and test.text == "compare" and len(test.keywords) == 1:
        left, right = test.parts
        operator = test.keywords[0]
        if operator in {"is not", "!="} and right == _NONE and left.op is Op.REF:
            return (left.text,)
        if operator == "in" and (container := _container(right)) is not None:
            return (container,)
        name = _global_name(left, right) if operator == "in" else None
        if name is not None:
            return (name,)
    if test.op is Op.CALL:
        return first_run_state(Expr(Op.UNARY, "not", (test,)))  # ``hasattr(X, "a")``
    return ()


def _container(expr: Expr) -> str | None:
    """The dotted name of the container a membership test looks in: ``X`` of ``X`` and of
    ``X.keys()`` (a dict's keys are what ``k in X`` tests)."""
    if expr.op is Op.REF:
        return expr.text
    if expr.op is Op.CALL and not expr.parts[1:] and expr.func.op is Op.REF:
        owner, _, method = expr.func.text.rpartition(".")
        return owner if owner and method == "keys" else None
    return None


def _global_name(key: Expr, namespace: Expr) -> str | None:
    """The module global ``key in namespace`` tests: ``"model"`` of ``"model" in
    globals()`` (the module's namespace holds the name once something binds it)."""
    if namespace == _GLOBALS:
        return string_text(key)
    return None


def _empty(left: Expr, operator: str, right: Expr) -> bool:
    """``len(X) == 0`` or ``len(X) < 1``: ``X`` is empty."""
    return (
        left.op is Op.CALL
        and left.func == _LEN
        and len(left.positional) == 1
        and left.positional[0].op is Op.REF
        and right.op is Op.LITERAL
        and (operator, right.number) in {("==", 0), ("<", 1), ("<=", 0)}
    )


_NONE = Expr(Op.LITERAL, "none")
_LEN = Expr(Op.REF, "len")
_HASATTR = Expr(Op.REF, "hasattr")
_GLOBALS = Expr(Op.CALL, "", (Expr(Op.REF, "globals"),))


def _sets(block: Sequence[ast.AST], state: str) -> bool:
    """The block sets ``state``: it assigns or stores into it, or calls a method of the object
    that holds it (``if key not in self.graphs: self.construct_graph(key)``)."""
    if state in _set_in(block):
        return True
    owner, dot, _ = state.rpartition(".")
    if not dot or owner.endswith(".*"):
        return False
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and dotted_ast(node.func.value) == owner
        for statement in block
        for node in walk(statement)
    )


def _set_in(block: Sequence[ast.AST]) -> set[str]:
    """What a block assigns or stores into: names, ``self.x``, the containers of ``X[k] =
    ...`` and of ``X.a = ...``; ``X.*`` for every ``X.a`` it assigns (what ``not hasattr(X,
    "a")`` tests)."""
    found: set[str] = set()
    for statement in block:
        for node in walk(statement):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, ast.AnnAssign | ast.AugAssign):
                targets = [node.target]
            for target in targets:
                stored = target.value if isinstance(target, ast.Subscript) else target
                name = from_ast(stored)
                if name.op is Op.REF:
                    found.add(name.text)
                    head, dot, _ = name.text.rpartition(".")
                    if dot:  # ``st.session_state.model = ...`` stores into st.session_state
                        found.update((head, f"{head}.*"))
    return found


def _block(block: Sequence[ast.stmt] | Sequence[ast.expr], span_of: SpanOf) -> Span:
    """From the first statement to the end of the last; a decorated definition from the start
    of its first decorator's line (its ``@`` comes first on that line)."""
    head = block[0]
    decorators = getattr(head, "decorator_list", None)
    last = span_of(block[-1])
    if decorators:
        return Span(span_of(decorators[0]).line, 1, last.end_line, last.end_column)
    first = span_of(head)
    return Span(first.line, first.column, last.end_line, last.end_column)


def _loop(node: ast.For | ast.AsyncFor | ast.While, head: ast.expr, span_of: SpanOf) -> Loop:
    """A loop statement whose header ends with ``head`` (the iterable, the test)."""
    start, end = span_of(node), span_of(head)
    return Loop(
        Span(start.line, start.column, end.end_line, end.end_column), _block(node.body, span_of)
    )


#: What ``isinstance(x, ...)`` names a string by: ``str``, Python 2's ``basestring`` and
#: ``six.string_types``.
_STRING_TYPES = frozenset({"str", "basestring", "string_types", "six.string_types"})
#: Python's containers, as ``isinstance`` names them.
_CONTAINER_TYPES = frozenset({"list", "tuple", "dict", "set", "frozenset"})


def _narrowed(top: Iterable[ast.stmt]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """:attr:`Body.narrowed`: for each top-level ``if``/``elif`` chain whose every block
    binds the names it tests at its top level or leaves the body (``raise``, ``return``),
    the sorts of value that cannot fall through it, by name: ``if isinstance(metrics, str):
    metrics = [metrics] elif callable(metrics): metrics = [metrics] elif not
    isinstance(metrics, list): raise TypeError(...)`` lets neither a string nor a callable
    nor anything but a container of ``metrics`` reach the code after it."""
    found: dict[str, set[str]] = {}
    for statement in top:
        if not isinstance(statement, ast.If):
            continue
        tested: dict[str, set[str]] = {}
        chain: ast.If | None = statement
        blocks: list[list[ast.stmt]] = []
        while chain is not None:
            test = _sort_of(chain.test)
            if test is not None:
                tested.setdefault(test[0], set()).add(test[1])
            blocks.append(chain.body)
            orelse = chain.orelse
            if len(orelse) == 1 and isinstance(orelse[0], ast.If):
                chain = orelse[0]
            else:
                if orelse:
                    blocks.append(orelse)
                chain = None
        for name, sorts in tested.items():
            if all(_binds_or_leaves(block, name) for block in blocks):
                found.setdefault(name, set()).update(sorts)
    return tuple((name, tuple(sorted(sorts))) for name, sorts in sorted(found.items()))


def _sort_test(test: ast.expr) -> tuple[str, str] | None:
    """``(name, "str")`` for ``isinstance(name, str)`` (or a tuple of string types),
    ``(name, "callable")`` for ``callable(name)``."""
    if not (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and test.args
        and isinstance(test.args[0], ast.Name)
    ):
        return None
    name = test.args[0].id
    if test.func.id == "callable" and len(test.args) == 1:
        return name, "callable"
    if test.func.id != "isinstance" or len(test.args) != 2:
        return None
    kinds = test.args[1]
    names = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
    texts = [from_ast(kind).text for kind in names]
    return (name, "str") if texts and all(t in _STRING_TYPES for t in texts) else None


def _sort_of(test: ast.expr) -> tuple[str, str] | None:
    """:func:`_sort_test`, and ``(name, "not container")`` for ``not isinstance(name,
    list)`` (or a tuple of Python's container types): the block runs for what is none."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = test.operand
        if (
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Name)
            and inner.func.id == "isinstance"
            and len(inner.args) == 2
            and isinstance(inner.args[0], ast.Name)
        ):
            kinds = inner.args[1]
            names = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
            if names and all(from_ast(k).text in _CONTAINER_TYPES for k in names):
                return inner.args[0].id, "not container"
        return None
    return _sort_test(test)


def _binds_or_leaves(block: list[ast.stmt], name: str) -> bool:
    """A statement of ``block``'s top level binds ``name`` (``name = ...``), or it ends by
    leaving the body."""
    if block and isinstance(block[-1], ast.Raise | ast.Return):
        return True
    return any(
        isinstance(statement, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == name for t in statement.targets)
        for statement in block
    )


def _rebound(top: Iterable[ast.stmt]) -> tuple[str, ...]:
    """The names a top-level ``name = value`` binds, ``value`` not reading ``name``."""
    found: list[str] = []
    for statement in top:
        if isinstance(statement, ast.Assign):
            read = {n.id for n in walk(statement.value) if isinstance(n, ast.Name)}
            found.extend(
                target.id
                for target in statement.targets
                if isinstance(target, ast.Name) and target.id not in read
            )
    return tuple(found)
