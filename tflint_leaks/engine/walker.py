"""One traversal of a libcst module that drives every enabled rule.

The walker keeps the scope, loop and ancestor stacks in the :class:`FileContext` and calls each
rule's ``visit_<Node>``/``leave_<Node>`` hooks. It reads children straight from the node fields
instead of using libcst's visitor, which rebuilds every node it visits and would double the cost
of the parse. What runs once per loop iteration is the loop table's answer
(:mod:`tflint_leaks.analysis.loops`): exactly the parts walked while the loop is on the stack.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

import libcst as cst

from tflint_leaks.analysis.index import LOCALS
from tflint_leaks.analysis.loops import LOOP_NODE_TYPES, LoopParts, loop_parts, walk_loop
from tflint_leaks.analysis.nodes import children, header_parts
from tflint_leaks.analysis.project import ProjectIndex
from tflint_leaks.analysis.units import FileUnits
from tflint_leaks.analysis.unreached import never_called
from tflint_leaks.diagnostics import Diagnostic, Location
from tflint_leaks.engine.indexing import ParsedFile
from tflint_leaks.engine.positions import expanded_indentation, node_positions, unexpanded
from tflint_leaks.engine.reports import diagnostic, placed_nodes
from tflint_leaks.registry import BY_CODE, INTERNAL_ERROR, SYNTAX_ERROR, Code
from tflint_leaks.rulekit.context import FileContext, Frame, FrameKind
from tflint_leaks.rulekit.options import RuleOptions
from tflint_leaks.rulekit.rule import Rule
from tflint_leaks.source import invalid_syntax, split_lines

Hook = Callable[[cst.CSTNode], None]


@dataclass(frozen=True)
class RuleFailure:
    """A rule raised on this file; it is disabled for the rest of the file."""

    code: str
    error: str
    traceback: str


HookName = tuple[str, type[cst.CSTNode], str]
_HOOK_NAMES: dict[type[Rule], tuple[HookName, ...]] = {}


def _hook_names(rule_class: type[Rule]) -> tuple[HookName, ...]:
    """``(visit|leave, node type, method name)`` of a rule's hooks, found once per rule class
    rather than once per file."""
    found = _HOOK_NAMES.get(rule_class)
    if found is None:
        hooks = []
        for attribute in dir(rule_class):
            prefix, _, node_name = attribute.partition("_")
            if prefix in {"visit", "leave"} and node_name:
                hooks.append((prefix, getattr(cst, node_name), attribute))
        found = _HOOK_NAMES[rule_class] = tuple(hooks)
    return found


class Walker:
    def __init__(
        self,
        context: FileContext,
        rules: Iterable[Rule],
        redefined: dict[str, list[int]] | None = None,
        unreached: frozenset[str] = frozenset(),
    ) -> None:
        self.context = context
        #: A notebook's functions and methods that it never calls (:mod:`tflint_leaks.analysis.
        #: unreached`): their bodies are not linted.
        self._unreached = unreached
        self.failures: list[RuleFailure] = []
        #: The first lines of the module's top-level functions defined more than once, by name,
        #: in order (those the libcst pass kept): which definition each ``def`` is.
        self._redefined = redefined or {}
        self._definitions: dict[str, int] = {}
        self._top: set[int] = set()
        self._visit: dict[type[cst.CSTNode], list[tuple[Rule, Hook]]] = {}
        self._leave: dict[type[cst.CSTNode], list[tuple[Rule, Hook]]] = {}
        self._failed: set[str] = set()
        for rule in rules:
            for prefix, node_type, attribute in _hook_names(type(rule)):
                table = self._visit if prefix == "visit" else self._leave
                table.setdefault(node_type, []).append((rule, getattr(rule, attribute)))

    # -- dispatch ------------------------------------------------------------------------------

    def _dispatch(
        self, table: dict[type[cst.CSTNode], list[tuple[Rule, Hook]]], node: cst.CSTNode
    ) -> None:
        hooks = table.get(type(node))
        if not hooks:
            return
        for rule, hook in hooks:
            if rule.code in self._failed:
                continue
            try:
                hook(node)
            except Exception as error:
                self._failed.add(rule.code)
                self.failures.append(
                    RuleFailure(
                        rule.code, f"{type(error).__name__}: {error}", traceback.format_exc()
                    )
                )

    # -- traversal -----------------------------------------------------------------------------

    def walk_module(self, module: cst.Module) -> None:
        self._top = {id(statement) for statement in module.body}
        self.context.frames.append(Frame(FrameKind.MODULE, module))
        self.walk(module)
        self.context.frames.pop()

    def walk(self, node: cst.CSTNode) -> None:
        ancestors = self.context.ancestors
        ancestors.append(node)
        self._dispatch(self._visit, node)
        kind = type(node)
        handler = _HANDLERS.get(kind)
        parts = loop_parts(node) if kind in LOOP_NODE_TYPES else None
        if handler is not None:
            handler(self, node)
        elif parts is not None and self.context.never_runs(parts.loop):
            self._walk_all((*parts.before, *parts.after))  # ``for k in range(1, 1):``
        elif parts is not None:
            walk_loop(parts, self.walk, self._enter_loop, self._leave_loop)
        else:
            for child in children(node):
                self.walk(child)
        self._dispatch(self._leave, node)
        ancestors.pop()

    def _walk_all(self, nodes: Iterable[cst.CSTNode | None]) -> None:
        for node in nodes:
            if node is not None:
                self.walk(node)

    def _enter_loop(self, parts: LoopParts) -> None:
        context = self.context
        context.loop_table[parts.loop] = parts
        context.frame.loops.append(parts.loop)
        if isinstance(parts.loop, cst.CompFor):
            # A comprehension's clause is not walked as a node of its own: say where it is.
            context.ancestors.append(parts.loop)
            self._dispatch(self._visit, parts.loop)

    def _leave_loop(self, parts: LoopParts) -> None:
        context = self.context
        if isinstance(parts.loop, cst.CompFor):
            self._dispatch(self._leave, parts.loop)
            context.ancestors.pop()
        context.frame.loops.pop()

    def _function(self, node: cst.CSTNode) -> None:
        assert isinstance(node, cst.FunctionDef)
        context = self.context
        self._walk_all(header_parts(node))
        outer = context.frame
        facts = None
        traced = any(context.is_tf_function_decorator(d) for d in node.decorators)
        qualname = node.name.value
        if outer.kind is FrameKind.CLASS and outer.class_name is not None:
            qualname = f"{outer.class_name}.{qualname}"
        line = None
        traced_by: tuple[str, ...] = ()
        if outer.kind in {FrameKind.MODULE, FrameKind.CLASS} and len(context.frames) <= 2:
            facts = context.module_index.functions.get(qualname)
            traced_by = context.module_index.traced.get(qualname, ())
            traced = traced or context.project.traced(context.module_index, qualname)
            lines = self._redefined.get(qualname)
            if lines and id(node) in self._top:
                seen = self._definitions.get(qualname, 0)
                self._definitions[qualname] = seen + 1
                line = lines[seen] if seen < len(lines) else None
        elif outer.kind is FrameKind.FUNCTION and outer.facts is not None:
            # A function defined in one (``def main(): def trial(params): ...``) that the
            # index follows: one it calls, passes on or stores.
            qualname = f"{outer.facts.qualname}{LOCALS}{qualname}"
            facts = context.module_index.functions.get(qualname)
        if facts is not None and qualname in self._unreached:
            return  # a notebook's function that nothing calls: its body never runs
        frame = Frame(FrameKind.FUNCTION, node, facts, traced, traced_by, line=line)
        context.frames.append(frame)
        self.walk(node.body)
        context.frames.pop()

    def _if(self, node: cst.CSTNode) -> None:
        """An ``if`` of the module's own code whose test is decided (:meth:`FileContext.
        decided`): the block that never runs is not linted."""
        assert isinstance(node, cst.If)
        decided = self.context.decided(node.test)
        self.walk(node.test)
        if decided is not False:
            self.walk(node.body)
        if node.orelse is not None and decided is not True:
            self.walk(node.orelse)

    def _if_expression(self, node: cst.CSTNode) -> None:
        """A conditional expression whose test is decided: the value never computed is not
        linted (``load_model(w) if keras else saved_model.load(w)`` below ``keras =
        False``)."""
        assert isinstance(node, cst.IfExp)
        decided = self.context.decided(node.test)
        if decided is not False:
            self.walk(node.body)
        self.walk(node.test)
        if decided is not True:
            self.walk(node.orelse)

    def _block(self, node: cst.CSTNode) -> None:
        """A block's statements up to the first that certainly raises (:meth:`FileContext.
        raises`: it reads a name nothing binds): those after it never run."""
        assert isinstance(node, cst.IndentedBlock)
        for statement in node.body:
            self.walk(statement)
            if self.context.raises(statement):
                break

    def _class(self, node: cst.CSTNode) -> None:
        assert isinstance(node, cst.ClassDef)
        self._walk_all(header_parts(node))
        self.context.frames.append(Frame(FrameKind.CLASS, node, class_name=node.name.value))
        self.walk(node.body)
        self.context.frames.pop()

    def _lambda(self, node: cst.CSTNode) -> None:
        assert isinstance(node, cst.Lambda)
        self._walk_all(header_parts(node))
        self.context.frames.append(Frame(FrameKind.LAMBDA, node))
        self.walk(node.body)
        self.context.frames.pop()


_HANDLERS: dict[type[cst.CSTNode], Callable[[Walker, cst.CSTNode], None]] = {
    cst.FunctionDef: Walker._function,
    cst.ClassDef: Walker._class,
    cst.Lambda: Walker._lambda,
    cst.If: Walker._if,
    cst.IfExp: Walker._if_expression,
    cst.IndentedBlock: Walker._block,
}


def lint_module(
    parsed: ParsedFile,
    text: str,
    project: ProjectIndex,
    options: RuleOptions,
    rules: Iterable[Code],
) -> tuple[list[Diagnostic], list[str]]:
    """Parse ``text`` (``parsed``'s text, perhaps with units blanked out) with libcst, walk it
    once with every rule, and position what they reported: the diagnostics and the tracebacks of
    rules that failed."""
    try:
        module, changed = _parse(text)
    except cst.ParserSyntaxError as error:
        message = invalid_syntax(error.message)
        return [SYNTAX_ERROR.at(parsed.path, message, error.raw_line, error.raw_column + 1)], []
    except RecursionError:
        return [SYNTAX_ERROR.at(parsed.path, "too deeply nested to parse")], []
    context = FileContext(parsed.path, parsed.index, project, options, parsed.text)
    walker = Walker(
        context,
        [code.load()(context, code.code) for code in rules],
        _redefined(parsed.index.units, text),
        _never_called(parsed),
    )
    tracebacks: list[str] = []
    diagnostics: list[Diagnostic] = []
    try:
        walker.walk_module(module)
    except RecursionError:
        diagnostics.append(INTERNAL_ERROR.at(parsed.path, "too deeply nested to analyse"))
    for failure in walker.failures:
        rule = BY_CODE[failure.code]
        message = f"rule {rule.code} ({rule.name}) failed on this file: {failure.error}"
        diagnostics.append(INTERNAL_ERROR.at(parsed.path, message))
        tracebacks.append(f"{parsed.path}: {rule.code}\n{failure.traceback}")
    if context.reports:
        placed = [node for report in context.reports for node in placed_nodes(report)]
        positions = node_positions(module, placed, parsed.index.units)
        if changed:
            positions = unexpanded(positions, changed)
        seen: set[tuple[str, Location, Location]] = set()
        for report in context.reports:
            found = diagnostic(parsed.path, module, report, positions, parsed.text)
            if changed and found.fix is not None:
                # A fix is code of the expanded text: its indentation is not the file's.
                found = replace(found, fix=None)
            key = (found.code, found.start, found.end)
            if key not in seen:  # one finding per place: reached through two callers, say
                seen.add(key)
                diagnostics.append(found)
    return diagnostics, tracebacks


def _parse(text: str) -> tuple[cst.Module, dict[int, tuple[int, int]]]:
    """libcst's module for ``text``, which Python parses (the index did); when libcst rejects
    its indentation, the module of the text with the indentation's tabs expanded, and the
    lines that changed (:func:`~tflint_leaks.engine.positions.expanded_indentation`). The
    first error is raised when that does not help."""
    try:
        return cst.parse_module(text), {}
    except cst.ParserSyntaxError:
        expanded = expanded_indentation(text)
        if expanded is None:
            raise
        try:
            return cst.parse_module(expanded[0]), expanded[1]
        except cst.ParserSyntaxError:
            pass
        raise


#: IPython's ``%run`` line magic, at the start of a line.
_RUN = re.compile(r"^\s*%run\b", re.MULTILINE)


def _never_called(parsed: ParsedFile) -> frozenset[str]:
    """A notebook's functions and methods it never calls; none when a cell runs a file in the
    notebook's namespace (``%run driver.py``), which may call any of them."""
    notebook = parsed.notebook
    if notebook is not None and any(_RUN.search(cell.source) for cell in notebook.cells):
        return frozenset()
    return never_called(parsed.index, parsed.text)


def _redefined(units: FileUnits, text: str) -> dict[str, list[int]]:
    """The first lines of the top-level functions ``text`` keeps (the others are blanked out)
    whose name the module defines more than once, by name, in order."""
    counts: dict[str, int] = {}
    for unit in units.functions:
        counts[unit.qualname] = counts.get(unit.qualname, 0) + 1
    if all(count == 1 for count in counts.values()):
        return {}
    lines = split_lines(text)
    found: dict[str, list[int]] = {}
    for unit in units.functions:
        if counts[unit.qualname] > 1 and lines[unit.start - 1].strip():
            found.setdefault(unit.qualname, []).append(unit.start)
    return found
