"""What the retracing rules share: ``tf.function`` calls made once per loop iteration."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from tflint_leaks.analysis.values import Value
from tflint_leaks.diagnostics import RelatedRole
from tflint_leaks.rulekit.context import Callee, FileContext, Report


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
        source = _source(self.value)
        if len(source) > 40:
            return f"`{self.label}`"
        return f"`{source}`" if source == self.label else f"`{source}` (parameter `{self.label}`)"


def repeated_tf_function_call(context: FileContext, node: cst.Call) -> Callee | None:
    """The ``tf.function`` that ``node`` calls when the call runs once per iteration of a Python
    loop. Calls made while another ``tf.function`` traces are inlined into its graph: None."""
    if not context.loops or context.in_tf_function:
        return None
    return context.tf_function_callee(node)


def repeated_call_arguments(
    context: FileContext, node: cst.Call
) -> Iterator[tuple[Callee, Argument, Value]]:
    """For a ``tf.function`` call repeated by a loop: each argument that ``input_signature``
    does not cover, with its value across the loop's iterations."""
    callee = repeated_tf_function_call(context, node)
    if callee is None:
        return
    evaluator = context.evaluator()
    for argument in arguments(node, callee):
        if not callee.facts.covers(argument.position):
            yield callee, argument, evaluator.value(argument.value)


def varies_unboundedly(context: FileContext, value: Value) -> bool:
    """Takes more distinct values over the loop than ``max-python-values`` allows."""
    return value.card > context.options.max_python_values


def arguments(node: cst.Call, callee: Callee) -> Iterator[Argument]:
    """The call's arguments matched to the ``tf.function``'s parameters where possible."""
    params = callee.function.params if callee.function is not None else ()
    for index, arg in enumerate(node.args):
        if arg.star:
            return
        if arg.keyword is None:
            label = params[index] if index < len(params) else _source(arg.value)
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


def relate_loop(report: Report, context: FileContext) -> Report:
    if context.loops:
        report.relate(RelatedRole.LOOP, "repeated by this loop", context.loops[-1])
    return report


def _source(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)
