"""Gradient tapes of one scope: where each is created, whether it is persistent, the ``with``
block that records, and what the scope does with the tape's name afterwards."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from tflint_leaks.analysis.names import GRADIENT_TAPE
from tflint_leaks.analysis.nodes import dotted, own_nodes

ResolveFn = Callable[[cst.BaseExpression], str | None]


@dataclass
class Tape:
    #: The name the tape is bound to (``with ... as tape``, ``tape = tf.GradientTape()``).
    name: str | None
    creation: cst.Call
    persistent: bool
    #: The statement that creates it: the ``with`` or the assignment.
    statement: cst.CSTNode
    #: The ``with`` blocks that record on it.
    blocks: list[cst.With] = field(default_factory=list)


def is_persistent(call: cst.Call) -> bool:
    """``persistent=True`` literally (an unknown value is not assumed persistent)."""
    return any(
        arg.keyword is not None
        and arg.keyword.value == "persistent"
        and isinstance(arg.value, cst.Name)
        and arg.value.value == "True"
        for arg in call.args
    )


def collect_tapes(
    scope: cst.Module | cst.ClassDef | cst.FunctionDef | cst.Lambda, resolve: ResolveFn
) -> list[Tape]:
    """Every tape the scope's own code creates, in source order."""

    def is_tape(node: cst.BaseExpression) -> bool:
        return isinstance(node, cst.Call) and resolve(node.func) == GRADIENT_TAPE

    tapes: list[Tape] = []
    by_name: dict[str, Tape] = {}
    for node in own_nodes(scope if isinstance(scope, cst.Module) else scope.body):
        if isinstance(node, cst.With):
            for item in node.items:
                name = dotted(item.asname.name) if item.asname is not None else None
                if isinstance(item.item, cst.Call) and is_tape(item.item):
                    tape = Tape(name, item.item, is_persistent(item.item), node, [node])
                    tapes.append(tape)
                    if name is not None:
                        by_name[name] = tape
                else:
                    known = by_name.get(dotted(item.item) or "")
                    if known is not None:
                        known.blocks.append(node)
        elif (
            isinstance(node, cst.Assign)
            and isinstance(node.value, cst.Call)
            and is_tape(node.value)
            and len(node.targets) == 1
        ):
            name = dotted(node.targets[0].target)
            tape = Tape(name, node.value, is_persistent(node.value), node)
            tapes.append(tape)
            if name is not None:
                by_name[name] = tape
    return tapes
