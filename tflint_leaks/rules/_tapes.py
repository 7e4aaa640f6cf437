"""What the tape rules (TFL201-TFL204) share: references to a tape's name."""

from __future__ import annotations

import libcst as cst

from tflint_leaks.analysis.nodes import dotted, own_nodes


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
