"""Which units of a file the libcst pass needs, decided from the ``ast`` pass.

Each rule's registry entry declares its :class:`~tflint_leaks.analysis.triggers.Triggers`. Units
no enabled rule needs are blanked out of the text before the
libcst parse -- replaced by empty lines, so every position in the rest stays exact -- and a file
with no unit left is not parsed at all. When no rule needs the module-level code itself, its
statements are left out too, except those that bind a name a kept unit mentions (``history =
[]`` for a ``tf.function`` that appends to it): a generated table of 200,000 constants next to
one ``tf.function`` costs no libcst parse.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tflint_leaks.analysis.index import LOCALS, ModuleIndex
from tflint_leaks.analysis.project import ProjectIndex
from tflint_leaks.analysis.symbolic import Op
from tflint_leaks.analysis.triggers import Triggers
from tflint_leaks.analysis.units import Unit, walk
from tflint_leaks.source import split_lines

if TYPE_CHECKING:
    from tflint_leaks.engine.prefilter import Prefilter


@dataclass(frozen=True)
class Needs:
    """What the enabled rules need in one file."""

    everything: bool
    names: frozenset[str]
    loop_names: frozenset[str]
    traced: frozenset[str]
    #: Functions a framework calls many times (:mod:`tflint_leaks.analysis.repetition`): the
    #: loop rules look at them as at a loop.
    repeated: frozenset[str] = frozenset()

    def wants(self, unit: Unit) -> bool:
        if self.everything or unit.qualname in self.traced or unit.names & self.names:
            return True
        looped = unit.has_loop or unit.qualname in self.repeated
        return looped and bool(unit.names & self.loop_names)


def combine(
    triggers: Iterable[Triggers | None],
    module: ModuleIndex,
    project: ProjectIndex,
    statements: Sequence[Statement] | None = None,
) -> Needs:
    """What the enabled rules (their ``triggers``) need in ``module``; with its module-level
    ``statements``, what each of them needs too."""
    names: set[str] = set()
    loop_names: set[str] = set()
    traced: frozenset[str] = frozenset()
    project_names = False
    graph_runners = False
    for trigger in triggers:
        if trigger is None:
            return Needs(True, frozenset(), frozenset(), frozenset())
        names |= trigger.names
        loop_names |= trigger.loop_names
        project_names = project_names or trigger.project_loop_names
        graph_runners = graph_runners or trigger.project_graph_runners
        if trigger.traced:
            traced = frozenset(module.traced) | frozenset(module.keras_steps)
    # A trigger imported under another name (`from tensorflow import GradientTape as Tape`)
    # is mentioned by that name.
    for local, target in module.imports.items():
        imported = target.rpartition(".")[2]
        if imported in names:
            names.add(local)
        if imported in loop_names:
            loop_names.add(local)
    repeated: frozenset[str] = frozenset()
    if project_names or graph_runners:
        # Imported here: a run whose files never get this far (no TensorFlow in sight) does
        # not pay for loading the whole-program facts.
        from tflint_leaks.analysis.program import program_of
        from tflint_leaks.analysis.repetition import entry_functions
        from tflint_leaks.engine.prefilter import prefilter_of

        repeated = entry_functions(program_of(project), module)
        # A unit holding a function that is one (``def main(): def trial(params): ...``,
        # ``fmin(fn=trial, ...)``) is kept whole, like the entry point itself.
        repeated |= {qualname.partition(LOCALS)[0] for qualname in repeated if LOCALS in qualname}
        units = module.units
        static = Needs(False, frozenset(names), frozenset(loop_names), traced, repeated)
        prefilter = prefilter_of(project)
        modes = [
            runs_graph for runs_graph, on in ((False, project_names), (True, graph_runners)) if on
        ]
        binders = _binders(statements or ())
        for unit in (
            units.module,
            *units.functions,
            *(m for c in units.classes for m in c.methods),
            *(s.unit for s in statements or ()),
        ):
            # A unit is kept when one name it mentions leads somewhere: found one, the others
            # need not be decided (the units kept are the same as deciding every name).
            if static.wants(unit) or not (unit.has_loop or unit.qualname in repeated):
                continue
            if unit.names & loop_names:
                continue
            found = _called_parameter(module, unit.qualname)
            if found is None:
                found = _leading(prefilter, module, unit.names, modes)
            if found is None:
                # A module-level name is what the statements binding it make of the names they
                # mention (``metrics = [Deletion(), Randomization()]``, then ``metric(x)`` for
                # each): the name leads where those do.
                found = next(
                    (
                        name
                        for name in sorted(unit.names & binders.keys())
                        if _leading(prefilter, module, _bound_from(name, binders), modes)
                    ),
                    None,
                )
            if found is not None:
                loop_names.add(found)
    return Needs(False, frozenset(names), frozenset(loop_names), traced, repeated)


def _called_parameter(module: ModuleIndex, qualname: str) -> str | None:
    """A parameter whose callable the function calls (``predict_fn(batch)``, handed
    ``model.predict``): what it runs is what the callers give, which no name here says, so
    the unit is kept."""
    function = module.functions.get(qualname)
    if function is None:
        return None
    assigned = {a.target for a in function.body.assigns}
    return next(
        (
            site.call.func.text
            for site in function.body.calls
            if site.call.func.op is Op.REF
            and site.call.func.text in function.params
            and site.call.func.text not in assigned
        ),
        None,
    )


def _leading(
    prefilter: Prefilter, module: ModuleIndex, names: frozenset[str], modes: list[bool]
) -> str | None:
    for runs_graph in modes:
        found = prefilter.first_interesting(module, names, runs_graph=runs_graph)
        if found is not None:
            return found
    return None


def _binders(statements: Iterable[Statement]) -> dict[str, list[Statement]]:
    """The module-level statements that bind each name."""
    found: dict[str, list[Statement]] = {}
    for statement in statements:
        for name in statement.binds:
            found.setdefault(name, []).append(statement)
    return found


def _bound_from(name: str, binders: dict[str, list[Statement]]) -> frozenset[str]:
    """The names the module-level statements binding ``name`` mention, and those the
    statements binding them mention, and so on (a worklist: each statement read once)."""
    seen: set[int] = set()
    found: set[str] = set()
    todo = [name]
    while todo:
        for statement in binders.get(todo.pop(), ()):
            if id(statement) in seen:
                continue
            seen.add(id(statement))
            fresh = statement.unit.names - found
            found |= fresh
            todo.extend(fresh)
    return frozenset(found)


@dataclass(frozen=True)
class Statement:
    """A module-level statement other than a function or class, as a unit of its own (its
    lines, the names it mentions, whether it loops) with the names it binds."""

    unit: Unit
    binds: frozenset[str]


_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.comprehension)


def module_statements(tree: ast.Module) -> tuple[Statement, ...]:
    """The module-level statements of ``tree`` other than functions and classes."""
    found = []
    for statement in tree.body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        binds: set[str] = set()
        names: set[str] = set()
        has_loop = False
        for node in walk(statement):
            if isinstance(node, ast.Name):
                names.add(node.id)
                if isinstance(node.ctx, ast.Store):
                    binds.add(node.id)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.alias):
                bound = (node.asname or node.name).partition(".")[0]
                binds.add(bound)
                names.add(bound)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                binds.add(node.name)
            has_loop = has_loop or isinstance(node, _LOOPS)
        end = statement.end_lineno or statement.lineno
        unit = Unit("", statement.lineno, end, frozenset(names), has_loop, 0)
        found.append(Statement(unit, frozenset(binds)))
    return tuple(found)


def blanked_source(
    text: str, module: ModuleIndex, needs: Needs, statements: Sequence[Statement] | None = None
) -> str | None:
    """``text`` with the units nobody needs replaced by empty lines; None when no unit (and no
    module-level code) is needed, so the file need not be parsed. With the module-level
    ``statements`` (from the ``ast`` pass), those that neither a rule nor the kept code needs
    are blanked too."""
    units = module.units
    drop: list[tuple[int, int]] = []
    kept: list[Unit] = []
    for function in units.functions:
        if needs.wants(function):
            kept.append(function)
        else:
            drop.append((function.start, function.end))
    for klass in units.classes:
        methods = [method for method in klass.methods if needs.wants(method)]
        if not methods:
            drop.append((klass.start, klass.end))
            continue
        kept.extend(methods)
        drop.extend((m.start, m.end) for m in klass.methods if m not in methods)
    module_wanted = needs.wants(units.module)
    if not module_wanted and not kept:
        return None
    if statements is not None:
        drop.extend(_unneeded(statements, kept, needs))
    if module.ends is not None:
        # Below the script's end the text is blank already (:func:`reached_source`): blanking
        # a unit there again would put a string's quotes inside that blank string.
        drop = [(start, end) for start, end in drop if start <= module.ends]
    if not drop:
        return text
    lines = split_lines(text, keepends=True)
    blank = [False] * len(lines)
    for start, end in drop:
        for index in range(start - 1, min(end, len(lines))):
            blank[index] = True
    index = 0
    while index < len(lines):
        if not blank[index]:
            index += 1
            continue
        end = index
        while end < len(lines) and blank[end]:
            end += 1
        _blank(lines, index, end)
        index = end
    return "".join(lines)


#: A run of at least this many blanked lines becomes one string statement: libcst parses a
#: 200,000-line string in milliseconds, and as many empty lines in seconds (on tf-keras's
#: sources, 16 instead of 64 saves a sixth of the libcst parse).
_LONG_RUN = 16


def _blank(lines: list[str], start: int, end: int, indent: str | None = None) -> None:
    """Blank ``lines[start:end]`` (whole statements) keeping the number of lines: empty lines,
    or for a long run a triple-quoted string at ``indent`` (by default the indentation of its
    first line)."""
    if end - start < _LONG_RUN:
        lines[start:end] = ["\n"] * (end - start)
        return
    if indent is None:
        indent = lines[start][: len(lines[start]) - len(lines[start].lstrip(" \t"))]
    lines[start:end] = [f'{indent}"""\n', *["\n"] * (end - start - 2), '"""\n']


def reached_source(text: str, module: ModuleIndex) -> str:
    """``text`` without what follows the statement that ends the script (:attr:`ModuleIndex.
    ends`: ``exit()``, an endless loop), which never runs: blanked, so every position of the
    rest stays exact."""
    if module.ends is None:
        return text
    lines = split_lines(text, keepends=True)
    if module.ends < len(lines):
        # Whole module-level statements (and comments) follow: a string at column 0 holds them.
        _blank(lines, module.ends, len(lines), indent="")
    return "".join(lines)


def _unneeded(
    statements: Sequence[Statement], kept: list[Unit], needs: Needs
) -> list[tuple[int, int]]:
    """The lines of the module-level statements nothing needs: no rule (:meth:`Needs.wants`),
    they read no name that a statement a rule wants binds (what becomes of the tape a `with`
    makes: ``t1.gradient(dy_dx, x)`` after the block), and they bind no name that a kept unit
    or a needed statement mentions (and share no line with a needed statement)."""
    needed = [needs.wants(statement.unit) for statement in statements]
    made = frozenset().union(*(s.binds for s, w in zip(statements, needed, strict=True) if w))
    needed = [
        wanted or not made.isdisjoint(statement.unit.names)
        for statement, wanted in zip(statements, needed, strict=True)
    ]
    binders: dict[str, list[int]] = {}
    for index, statement in enumerate(statements):
        for name in statement.binds:
            binders.setdefault(name, []).append(index)
    pending = [name for unit in kept for name in unit.names]
    pending += [
        name
        for s, wanted in zip(statements, needed, strict=True)
        if wanted
        for name in s.unit.names
    ]
    seen: set[str] = set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        for index in binders.get(name, ()):
            if not needed[index]:
                needed[index] = True
                pending.extend(statements[index].unit.names)
    lines = {
        line
        for statement, wanted in zip(statements, needed, strict=True)
        if wanted
        for line in range(statement.unit.start, statement.unit.end + 1)
    }
    return [
        (s.unit.start, s.unit.end)
        for s, wanted in zip(statements, needed, strict=True)
        if not wanted and lines.isdisjoint(range(s.unit.start, s.unit.end + 1))
    ]
