"""Which units of a file the libcst pass needs, decided from the ``ast`` pass.

Each rule's registry entry declares its :class:`~tflint_leaks.analysis.triggers.Triggers`. Units
no enabled rule needs are blanked out of the text before the
libcst parse -- replaced by empty lines, so every position in the rest stays exact -- and a file
with no unit left is not parsed at all.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tflint_leaks.analysis.index import ModuleIndex
from tflint_leaks.analysis.program import program_of
from tflint_leaks.analysis.project import ProjectIndex
from tflint_leaks.analysis.triggers import Triggers
from tflint_leaks.analysis.units import Unit
from tflint_leaks.source import split_lines


@dataclass(frozen=True)
class Needs:
    """What the enabled rules need in one file."""

    everything: bool
    names: frozenset[str]
    loop_names: frozenset[str]
    traced: frozenset[str]

    def wants(self, unit: Unit) -> bool:
        if self.everything or unit.qualname in self.traced or unit.names & self.names:
            return True
        return unit.has_loop and bool(unit.names & self.loop_names)


def combine(
    triggers: Iterable[Triggers | None], module: ModuleIndex, project: ProjectIndex
) -> Needs:
    names: set[str] = set()
    loop_names: set[str] = set()
    traced: frozenset[str] = frozenset()
    project_names = False
    for trigger in triggers:
        if trigger is None:
            return Needs(True, frozenset(), frozenset(), frozenset())
        names |= trigger.names
        loop_names |= trigger.loop_names
        project_names = project_names or trigger.project_loop_names
        if trigger.traced:
            traced = frozenset(module.traced)
    if project_names:
        units = module.units
        looped = [
            unit
            for unit in (
                units.module,
                *units.functions,
                *(m for c in units.classes for m in c.methods),
            )
            if unit.has_loop
        ]
        candidates = frozenset().union(*(unit.names for unit in looped))
        loop_names |= program_of(project).interesting_names(module, candidates)
    return Needs(False, frozenset(names), frozenset(loop_names), traced)


def blanked_source(text: str, module: ModuleIndex, needs: Needs) -> str | None:
    """``text`` with the units nobody needs replaced by empty lines; None when no unit (and no
    module-level code) is needed, so the file need not be parsed."""
    units = module.units
    drop: list[tuple[int, int]] = []
    wanted = needs.wants(units.module)
    for function in units.functions:
        if needs.wants(function):
            wanted = True
        else:
            drop.append((function.start, function.end))
    for klass in units.classes:
        kept = [method for method in klass.methods if needs.wants(method)]
        if not kept:
            drop.append((klass.start, klass.end))
            continue
        wanted = True
        drop.extend((m.start, m.end) for m in klass.methods if m not in kept)
    if not wanted:
        return None
    if not drop:
        return text
    lines = split_lines(text, keepends=True)
    for start, end in drop:
        for index in range(start - 1, min(end, len(lines))):
            lines[index] = "\n"
    return "".join(lines)
