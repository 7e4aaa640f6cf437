"""What the retracing rules share: ``tf.function`` calls made once per loop iteration."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import libcst as cst

from tflint_leaks.analysis.loops import LoopNode
from tflint_leaks.diagnostics import RelatedRole
from tflint_leaks.rulekit.context import Callee, FileContext, Report
from tflint_leaks.rulekit.facts import Effect, EffectKind, Variation
from tflint_leaks.rulekit.rule import Rule


@dataclass(frozen=True)
class Argument:
    value: cst.BaseExpression
    #: The parameter's 0-based position (``self`` excluded), when known.
    position: int | None
    #: The parameter's name when known, else the argument's source text.
    label: str

    @property
    def shown(self) -> str:
        """How a message names the argument: its source text, and the parameter it binds."""
        source = source_of(self.value)
        if len(source) > 40:
            return f"`{self.label}`"
        return f"`{source}`" if source == self.label else f"`{source}` (parameter `{self.label}`)"


def repeated_tf_function_call(context: FileContext, node: cst.Call) -> Callee | None:
    """The ``tf.function`` that ``node`` calls when the call runs once per iteration of a Python
    loop. Calls made while another ``tf.function`` traces are inlined into its graph: None."""
    if not context.loops or context.in_tf_function or _made_each_iteration(context, node):
        return None
    return context.tf_function_callee(node)


def _made_each_iteration(context: FileContext, node: cst.Call) -> bool:
    """``f(x)`` where a loop around the call binds ``f``, and nothing else does, to a new
    ``tf.function`` each iteration (``f = tf.function(models[res])``): every call is the
    first of its function, whose one trace is TFL103's concern, not a retrace."""
    if not isinstance(node.func, cst.Name):
        return False
    loops = set(context.loops)
    bound = context.scope_facts().assignments.get(node.func.value, ())
    return bool(bound) and all(
        a.loops & loops and isinstance(a.value, cst.Call) and context.is_tf_function_call(a.value)
        for a in bound
    )


def repeated_call_arguments(
    context: FileContext, node: cst.Call
) -> Iterator[tuple[Callee, Argument, Variation]]:
    """For a ``tf.function`` call repeated by a loop: each argument that ``input_signature``
    does not cover, with its value across the loop's iterations."""
    callee = repeated_tf_function_call(context, node)
    if callee is None:
        return
    evaluator = context.evaluator()
    for argument in arguments(node, callee.params):
        if not callee.facts.covers(argument.position):
            yield callee, argument, evaluator.value(argument.value)


def varies_unboundedly(context: FileContext, value: Variation) -> bool:
    """Takes more distinct values over the loop than ``max-python-values`` allows."""
    return value.card > context.options.max_python_values


def arguments(node: cst.Call, params: Sequence[str]) -> Iterator[Argument]:
    """The call's arguments matched to the called function's parameters (``self``
    excluded) where possible."""
    for index, arg in enumerate(node.args):
        if arg.star:
            return
        if arg.keyword is None:
            label = params[index] if index < len(params) else source_of(arg.value)
            yield Argument(arg.value, index, label)
        else:
            name = arg.keyword.value
            position = params.index(name) if name in params else None
            yield Argument(arg.value, position, name)


def relate_call(report: Report, context: FileContext, callee: Callee) -> Report:
    """Point a finding at the ``tf.function`` definition and the loop that repeats the call."""
    report.relate(
        RelatedRole.TF_FUNCTION,
        f"`{callee.display}` is defined here",
        callee.facts.span,
        callee.path,
    )
    return relate_loop(report, context)


def effects_through_calls(context: FileContext, node: cst.Call, kind: EffectKind) -> list[Effect]:
    """The effects of ``kind`` that ``node`` has through the project code it runs (a model
    predicted with inside a method the loop calls, a ``tf.function`` made by a helper)."""
    return [e for e in context.effects(node) if e.kind is kind and e.chain]


def report_through(
    rule: Rule,
    node: cst.Call,
    effect: Effect,
    message: str,
    role: RelatedRole,
    where: str,
    others: Sequence[Effect] = (),
) -> Report:
    """Report an effect that ``node``, in a loop, runs through project code. The finding is
    where the user can act: at the effect when it is in this file (the call in the loop is
    then a ``caller``), else at the call; ``related`` lists every call of the chain (``call``),
    the effect's own place (``role``, ``where`` says what it is), those of ``others`` (more
    effects of other files that the call runs, reported in this one finding) and the loop."""
    context = rule.context
    here = effect.path == context.path
    report = rule.report(effect.span if here else node, message)
    if here:
        report.relate(
            RelatedRole.CALLER, f"`{_short(effect.chain[0].callee)}` is called here", node
        )
    relate_chain(report, effect)
    if not here:
        report.relate(role, where, effect.span, effect.path)
        for other in others:
            relate_chain(report, other)
            report.relate(role, where, other.span, other.path)
    return relate_loop(report, context)


def relate_chain(report: Report, effect: Effect) -> Report:
    """One ``call`` location per call between the call in the loop and the effect."""
    for hop in effect.chain[1:]:
        report.relate(RelatedRole.CALL, f"calls `{_short(hop.callee)}`", hop.span, hop.path)
    return report


def every_iteration(context: FileContext, *, counted: bool = True) -> str:
    """How often the repetition runs the current node, for messages: "every iteration", an
    entry point's unit ("every request"), one in a guard's period ("every 100th iteration"),
    with the count when it is known and ``counted`` ("every trial (100 in all)"; in a
    function, of its own loops: "every iteration (32 per call of `score_all`)")."""
    entry = context.entry_point
    unit = entry.unit if entry is not None and not context.loops else "iteration"
    period = context.period()
    text = f"every {unit}" if period == 1 else f"every {_ordinal(period)} {unit}"
    count = context.iterations() if counted else None
    if count is None:
        return text
    most = "" if context.exact() else "up to "
    frame = context.frame.node
    if entry is None and isinstance(frame, cst.FunctionDef):
        # A function's own loops run that many times on each call, however many calls there are.
        return f"{text} ({most}{count} per call of `{frame.name.value}`)"
    return f"{text} ({most}{count} in all)"


def repeater(context: FileContext) -> str:
    """What repeats the current node, for messages: "the loop", "the Flask route"."""
    entry = context.entry_point
    return entry.what if entry is not None and not context.loops else "the loop"


def _ordinal(number: int) -> str:
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10)
    return f"{number}{suffix or 'th'}"


def _short(qualname: str) -> str:
    return qualname.rpartition(".")[2]


def relate_loop(report: Report, context: FileContext, loop: LoopNode | None = None) -> Report:
    """Point a finding at what repeats it: ``loop``, else the innermost loop, or where the
    framework is told to call the entry point it is in."""
    entry = context.entry_point
    if context.loops:
        report.relate(RelatedRole.LOOP, "repeated by this loop", loop or context.loops[-1])
    elif entry is not None:
        target, path = context.entry_place()
        message = f"repeated by {entry.framework}: {entry.what} runs every {entry.unit}"
        report.relate(RelatedRole.LOOP, message, target, path)
    return report


def source_of(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)
