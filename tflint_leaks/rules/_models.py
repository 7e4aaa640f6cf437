"""What the model-in-loop rules (TFL401-TFL404) share: which models a loop builds, whether the
loop cleans up, and whether it trains."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import libcst as cst

from tflint_leaks.analysis import keras
from tflint_leaks.analysis.loops import LoopNode
from tflint_leaks.analysis.nodes import descendants, dotted
from tflint_leaks.analysis.scope import Assignment, loop_target_names
from tflint_leaks.rulekit.context import FileContext
from tflint_leaks.rulekit.facts import Effect, EffectKind

#: Calls that keep their argument: a model passed to one is kept on purpose (an ensemble).
STORE_METHODS = frozenset({"append", "extend", "insert", "add", "setdefault", "put"})


def loop_cleans_up(context: FileContext) -> bool:
    """The current node's repetition calls ``clear_session()`` each time: some enclosing loop
    each iteration, or the entry point's body (directly or through a project function), or
    the framework itself before each call (KerasTuner)."""
    entry = context.entry_point
    if entry is not None and entry.clears_session:
        return True
    return any(context.cleans_up(call) for call in context.repeated_calls())


def in_repetition(context: FileContext) -> bool:
    """A loop or a framework repeats the current node, outside a ``tf.function`` and outside
    the code of a Keras class (a layer or model composing sub-models)."""
    return context.repeated and not context.in_tf_function and not context.in_keras_class()


def repeated_unbounded(context: FileContext, times: int = 1) -> bool:
    """The model rules' question of the current node: :func:`in_repetition`, more than
    ``max-loop-iterations`` times (or a number not known) in all, where each run does what
    the rule looks for ``times`` times (a called function that builds a model per fold)."""
    return in_repetition(context) and not context.bounded(
        context.options.max_loop_iterations // times
    )


def per_call_note(times: int) -> str:
    """For messages: " (5 per call)" when a call does it more than once."""
    return f" ({times} per call)" if times > 1 else ""


def per_call(context: FileContext, effect: Effect) -> int:
    """How many times ``effect`` happens each time the call made here runs, when a loop of
    the code it runs repeats it a few times (at most ``max-loop-iterations``: ``run_cv`` over
    5 folds); else 1: that loop, of a count not known or larger, has its own finding."""
    count = context.runs_inside(effect)
    return count if count is not None and count <= context.options.max_loop_iterations else 1


def kept_in_loop(context: FileContext, name: str) -> bool:
    """The repetition stores ``name`` where it outlives the iteration (or the entry point's
    call): passed to ``append``/``add`` and friends, or assigned into a subscript
    (``models[k] = model``); also through the names it is assigned or unpacked to
    (``train_est, test_est = estimators``, then ``self.train_estimators[i] = train_est``)
    that may hold a model (not a score: ``fit, model = evaluate(...)``, ``fits[i] = fit``)."""
    names = {name}
    pending = [name]
    nodes = list(context.repeated_nodes())
    while pending:
        current = pending.pop()
        for node in nodes:
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
                if node.func.attr.value in STORE_METHODS and any(
                    dotted(arg.value) == current for arg in node.args
                ):
                    return True
            elif isinstance(node, cst.Assign) and dotted(node.value) == current:
                if any(isinstance(t.target, cst.Subscript) for t in node.targets):
                    return True
                for alias in assigned_names(node):
                    if alias not in names and not context.plain_data(alias):
                        names.add(alias)
                        pending.append(alias)
    return False


def kept_element(context: FileContext) -> bool:
    """The current node is the element of a list or set comprehension, or the value of a dict
    comprehension, whose result is kept (not a statement of its own): one per item, each
    outliving the iteration that makes it (``[get_tf_model(m) for m in models]``)."""
    ancestors = context.ancestors
    node = ancestors[-1]
    # the walker visits a comprehension's element inside its ``for`` clause
    at = next(
        (
            i
            for i in range(len(ancestors) - 2, -1, -1)
            if not isinstance(ancestors[i], cst.CompFor | cst.CompIf)
        ),
        None,
    )
    if at is None or at == 0 or isinstance(ancestors[at - 1], cst.Expr):
        return False
    comprehension = ancestors[at]
    if isinstance(comprehension, cst.ListComp | cst.SetComp):
        return comprehension.elt is node
    return isinstance(comprehension, cst.DictComp) and comprehension.value is node


def assigned_names(node: cst.Assign) -> list[str]:
    """The dotted names an assignment binds, unpacked ones included (``a, (b, c) = ...``)."""
    return [found for target in node.targets for found, _ in loop_target_names(target.target)]


def stored_on_item(context: FileContext, target: cst.BaseExpression) -> bool:
    """``target`` is an attribute of an item an enclosing ``for`` loop iterates (``for mi in
    infos: mi.model = load_model(mi.path)``): each item keeps its own model, as a list of
    models does."""
    if not isinstance(target, cst.Attribute):
        return False
    base = dotted(target.value)
    return base is not None and any(
        isinstance(loop, cst.For)
        and any(name == base for name, _ in loop_target_names(loop.target))
        for loop in context.loops
    )


def built_in_loop(context: FileContext, receiver: cst.BaseExpression) -> bool:
    """``receiver`` holds a model built anew in the current node's repetition: a builder call
    itself, or a name that a loop of this scope (or, in an entry point, its body) assigns a
    built model to, or to which the framework passes one built for the call."""
    if isinstance(receiver, cst.Call):
        return context.builds_model(receiver)
    if context.entry_point is not None:
        return bool(_builds(context, receiver)) or context.framework_builds(receiver)
    return building_loop(context, receiver) is not None


def building_loop(context: FileContext, receiver: cst.BaseExpression) -> LoopNode | None:
    """The innermost enclosing loop every iteration of which assigns ``receiver`` a model
    built anew (``for trial in study:`` around an inner epoch loop that fits it)."""
    built = _builds(context, receiver)
    return next(
        (loop for loop in reversed(context.loops) if any(loop in a.loops for a in built)), None
    )


def _builds(context: FileContext, receiver: cst.BaseExpression) -> list[Assignment]:
    """The assignments of the name ``receiver`` in this scope that build a model (and may
    run: not in a block a decided test rules out)."""
    return assigned_by(context, receiver, context.builds_model)


def assigned_by(
    context: FileContext, receiver: cst.BaseExpression, makes: Callable[[cst.Call], bool]
) -> list[Assignment]:
    """The assignments of the name ``receiver`` in this scope whose value is a call ``makes``
    accepts, and that may run (not in a block a decided test rules out)."""
    name = dotted(receiver)
    if name is None:
        return []
    return [
        a
        for a in context.scope_facts().assignments.get(name, ())
        if isinstance(a.value, cst.Call)
        and makes(a.value)
        and id(a.node) not in context.unreached()
    ]


def passes_new_variables(context: FileContext, node: cst.Call) -> bool:
    """An argument of ``node`` reads a name the enclosing loops bind anew each iteration (their
    target, or an assignment in them) to something that owns variables (a model, a layer, a
    ``tf.Module`` such as a GPflow model: :meth:`FileContext.owns_variables`), or owns
    variables itself and is chosen by such a name (``tf.function(models[res])`` for each
    resolution ``res``): a function traced for one of them must trace again for the next."""
    loops = set(context.loops)
    if not loops:
        return False
    assignments = context.scope_facts().assignments
    for arg in node.args:
        fresh = [
            name
            for name in sorted({n.value for n in descendants(arg.value) if isinstance(n, cst.Name)})
            if any(a.loops & loops or a.node in loops for a in assignments.get(name, ()))
        ]
        if any(context.owns_variables(name) for name in fresh):
            return True
        if fresh and context.owns_variables(arg.value):
            return True  # one chosen by what the loop binds: ``models[res]``, ``make(res)``
    return False


def replaces_models(context: FileContext) -> bool:
    """The block of the current node's repetition that runs it (the body of its loop, or of an
    ``if`` in it) also binds a name, each time it runs, to something that owns variables of
    its own (:meth:`FileContext.owns_variables`: ``gen = Generator(depth)`` per depth of a
    progressive GAN, ``generator = _gen`` when a stage grows): a ``tf.function`` made there is
    made for the new variables, which a function made once would trace again (handed the new
    model) or never see (keeping the one it captured)."""
    loops = context.loops
    if not loops:
        return False
    ancestors = context.ancestors
    inner = ancestors.index(loops[-1])  # the innermost: loops are outermost first
    block = next(
        (a for a in reversed(ancestors[inner + 1 :]) if isinstance(a, cst.IndentedBlock)), None
    )
    if block is None:
        return False
    return any(
        isinstance(small, cst.Assign) and context.owns_variables(small.value)
        for statement in block.body
        if isinstance(statement, cst.SimpleStatementLine)
        for small in statement.body
    )


def method_call(node: cst.Call, methods: frozenset[str]) -> cst.BaseExpression | None:
    """The receiver of ``receiver.method(...)`` when ``method`` is one of ``methods``."""
    func = node.func
    if isinstance(func, cst.Attribute) and func.attr.value in methods:
        return func.value
    return None


def trains(context: FileContext, calls: Iterable[cst.Call]) -> bool:
    """The calls of a repetition train or run a model (``fit``, ``train_on_batch``,
    ``predict``, ``tape.gradient``, ``apply_gradients``, or a ``tf.function`` step)."""
    return any(
        method_call(call, keras.TRAINING_METHODS | keras.STEP_METHODS) is not None
        or context.tf_function_callee(call) is not None
        for call in calls
    )


def builds_models(context: FileContext, calls: Iterable[cst.Call]) -> bool:
    """The calls of a repetition build a model (a trial or fold loop, an objective), directly
    or through project code."""
    return any(
        effect.kind is EffectKind.BUILD_MODEL for call in calls for effect in context.effects(call)
    )
