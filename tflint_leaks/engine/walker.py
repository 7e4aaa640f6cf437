"""One traversal of a libcst module that drives every enabled rule.

The walker keeps the scope and loop stacks in the :class:`FileContext` and calls each rule's
``visit_<Node>``/``leave_<Node>`` hooks. It reads children straight from the node fields instead
of using libcst's visitor, which rebuilds every node it visits and would double the cost of the
parse. Statements that run once per loop iteration are exactly those walked while the loop is
on the stack: a ``for`` loop's body (not its iterable, evaluated once), a ``while`` loop's test
and body, a comprehension's element, conditions and inner iterables.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import libcst as cst

from tflint_leaks.analysis.scope import children
from tflint_leaks.engine.context import FileContext, Frame
from tflint_leaks.rules.base import Rule

Hook = Callable[[cst.CSTNode], None]


@dataclass(frozen=True)
class RuleFailure:
    """A rule raised on this file; it is disabled for the rest of the file."""

    rule: type[Rule]
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
    def __init__(self, context: FileContext, rules: Iterable[type[Rule]]) -> None:
        self.context = context
        self.failures: list[RuleFailure] = []
        self._visit: dict[type[cst.CSTNode], list[tuple[Rule, Hook]]] = {}
        self._leave: dict[type[cst.CSTNode], list[tuple[Rule, Hook]]] = {}
        self._failed: set[type[Rule]] = set()
        for rule_class in rules:
            rule = rule_class(context)
            for prefix, node_type, attribute in _hook_names(rule_class):
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
            if type(rule) in self._failed:
                continue
            try:
                hook(node)
            except Exception as error:
                self._failed.add(type(rule))
                self.failures.append(
                    RuleFailure(
                        type(rule), f"{type(error).__name__}: {error}", traceback.format_exc()
                    )
                )

    # -- traversal -----------------------------------------------------------------------------

    def walk_module(self, module: cst.Module) -> None:
        self.context.frames.append(Frame("module", module))
        self.walk(module)
        self.context.frames.pop()

    def walk(self, node: cst.CSTNode) -> None:
        self._dispatch(self._visit, node)
        handler = _HANDLERS.get(type(node))
        if handler is not None:
            handler(self, node)
        else:
            for child in children(node):
                self.walk(child)
        self._dispatch(self._leave, node)

    def _walk_all(self, nodes: Iterable[cst.CSTNode | None]) -> None:
        for node in nodes:
            if node is not None:
                self.walk(node)

    def _function(self, node: cst.CSTNode) -> None:
        assert isinstance(node, cst.FunctionDef)
        context = self.context
        self._walk_all(node.decorators)
        self.walk(node.params)
        if node.returns is not None:
            self.walk(node.returns)
        outer = context.frame
        facts = None
        traced = any(context.is_tf_function_decorator(d) for d in node.decorators)
        qualname = node.name.value
        if outer.kind == "class" and outer.class_name is not None:
            qualname = f"{outer.class_name}.{qualname}"
        if outer.kind in {"module", "class"} and len(context.frames) <= 2:
            facts = context.module_index.functions.get(qualname)
            traced = traced or qualname in context.module_index.traced
        context.frames.append(Frame("function", node, facts, traced))
        self.walk(node.body)
        context.frames.pop()

    def _class(self, node: cst.CSTNode) -> None:
        assert isinstance(node, cst.ClassDef)
        self._walk_all(node.decorators)
        self._walk_all(arg.value for arg in node.bases)
        self._walk_all(arg.value for arg in node.keywords)
        self.context.frames.append(Frame("class", node, class_name=node.name.value))
        self.walk(node.body)
        self.context.frames.pop()

    def _lambda(self, node: cst.CSTNode) -> None:
        assert isinstance(node, cst.Lambda)
        self.walk(node.params)
        self.context.frames.append(Frame("lambda", node))
        self.walk(node.body)
        self.context.frames.pop()

    def _for(self, node: cst.CSTNode) -> None:
        assert isinstance(node, cst.For)
        self.walk(node.target)
        self.walk(node.iter)
        loops = self.context.loops
        loops.append(node)
        self.walk(node.body)
        loops.pop()
        if node.orelse is not None:
            self.walk(node.orelse)

    def _while(self, node: cst.CSTNode) -> None:
        assert isinstance(node, cst.While)
        loops = self.context.loops
        loops.append(node)
        self.walk(node.test)
        self.walk(node.body)
        loops.pop()
        if node.orelse is not None:
            self.walk(node.orelse)

    def _comprehension(self, node: cst.CSTNode) -> None:
        assert isinstance(node, cst.ListComp | cst.SetComp | cst.GeneratorExp | cst.DictComp)
        loops = self.context.loops
        depth = len(loops)
        comp: cst.CompFor | None = node.for_in
        while comp is not None:
            self._dispatch(self._visit, comp)
            # The first iterable is evaluated once, outside; each inner one once per item.
            self.walk(comp.iter)
            loops.append(comp)
            self.walk(comp.target)
            self._walk_all(condition.test for condition in comp.ifs)
            self._dispatch(self._leave, comp)
            comp = comp.inner_for_in
        if isinstance(node, cst.DictComp):
            self.walk(node.key)
            self.walk(node.value)
        else:
            self.walk(node.elt)
        del loops[depth:]


_HANDLERS: dict[type[cst.CSTNode], Callable[[Walker, cst.CSTNode], None]] = {
    cst.FunctionDef: Walker._function,
    cst.ClassDef: Walker._class,
    cst.Lambda: Walker._lambda,
    cst.For: Walker._for,
    cst.While: Walker._while,
    cst.ListComp: Walker._comprehension,
    cst.SetComp: Walker._comprehension,
    cst.GeneratorExp: Walker._comprehension,
    cst.DictComp: Walker._comprehension,
}
