"""What the tape rules (TFL201-TFL204) share: the tape ``with`` blocks enclosing the node."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tflint_leaks.analysis.scope import dotted, own_nodes
from tflint_leaks.analysis.tapes import Tape
from tflint_leaks.engine.context import FileContext, Frame


@dataclass(frozen=True)
class Block:
    node: cst.With
    tape: Tape
    frame: Frame


class TapeBlocks:
    """The stack of tape ``with`` blocks around the current node; a rule feeds it from its
    ``visit_With``/``leave_With`` hooks."""

    def __init__(self, context: FileContext) -> None:
        self.context = context
        self._open: list[Block | None] = []

    def enter(self, node: cst.With) -> None:
        tape = next((t for t in self.context.tapes() if node in t.blocks), None)
        self._open.append(Block(node, tape, self.context.frame) if tape is not None else None)

    def leave(self) -> None:
        self._open.pop()

    def current(self) -> list[Block]:
        """Blocks of the current scope enclosing the current node, outermost first (a nested
        function's body runs later, outside them)."""
        frame = self.context.frame
        return [block for block in self._open if block is not None and block.frame is frame]

    def recording(self, name: str) -> Block | None:
        """The innermost enclosing block recording on the tape named ``name``."""
        return next((b for b in reversed(self.current()) if b.tape.name == name), None)


def mentions(node: cst.CSTNode, name: str) -> bool:
    """``node`` is, or contains, a reference to the dotted ``name``."""
    if isinstance(node, cst.Name | cst.Attribute) and dotted(node) == name:
        return True
    return any(
        isinstance(n, cst.Name | cst.Attribute) and dotted(n) == name for n in own_nodes(node)
    )


def bare_references(node: cst.CSTNode, name: str) -> int:
    """How often ``node`` refers to the plain name ``name`` other than as the receiver of an
    attribute (``name.gradient(...)`` does not count; ``return name`` does)."""
    nodes = (node, *own_nodes(node))
    names = sum(1 for n in nodes if isinstance(n, cst.Name) and n.value == name)
    receivers = sum(
        1
        for n in nodes
        if isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name) and n.value.value == name
    )
    return names - receivers
