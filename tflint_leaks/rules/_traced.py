"""What the ``tf.function`` state rules (TFL301-TFL305, TFL501) share: where a name lives
relative to the traced function, and which nested functions run eagerly on every call."""

from __future__ import annotations

import libcst as cst

from tflint_leaks.analysis.graph import EAGER_CALLBACKS
from tflint_leaks.analysis.names import CONTAINER_BUILTINS, CONTAINER_TYPES
from tflint_leaks.analysis.nodes import descendants, dotted, own_nodes
from tflint_leaks.rulekit.context import FileContext, Frame, FrameKind
from tflint_leaks.rulekit.facts import Kind


def first_traced(context: FileContext) -> int | None:
    """The index in ``context.frames`` of the outermost frame that runs only while tracing."""
    return next((i for i, frame in enumerate(context.frames) if frame.traced), None)


def traced_once(context: FileContext) -> bool:
    """Every call of the current node's ``tf.function`` is its first, and every loop around
    the node in it is one that tracing unrolls (over a Python value, not a dataset or a
    tensor, which AutoGraph turns into a graph loop): its Python code runs once per trace as
    it would once per call, as often as written. The first holds for a ``tf.function``
    defined in a function that calls it once (not in a loop) and hands it nowhere else
    (``return _train()``), and for a class's ``__init__`` made a ``tf.function``: a method
    keeps one trace cache per instance, and ``__init__`` runs once per instance."""
    index = first_traced(context)
    frames = context.frames
    if not index:
        return False
    defined = frames[index].node
    if not isinstance(defined, cst.FunctionDef):
        return False
    outer = frames[index - 1]
    if outer.kind is FrameKind.CLASS:
        if defined.name.value != "__init__":
            return False
    elif outer.kind is not FrameKind.FUNCTION or not _called_once(outer.node, defined.name.value):
        return False
    return all(_unrolled(context, loop) for frame in frames[index:] for loop in frame.loops)


def asserted(context: FileContext, name: str) -> bool:
    """An ``assert`` of a scope around the current ``tf.function`` (outside it) reads
    ``name``: a trace counter the code checks (a test asserting how often a function traced),
    for which counting only while tracing is the point."""
    index = first_traced(context)
    for frame in context.frames[:index]:
        for node in own_nodes(frame.node):
            if isinstance(node, cst.Assert) and any(
                isinstance(n, cst.Name) and n.value == name for n in descendants(node.test)
            ):
                return True
    return False


def _called_once(scope: cst.CSTNode, name: str) -> bool:
    """``scope``'s own code mentions ``name`` once, calling it, outside any loop."""
    nodes = list(own_nodes(scope))
    mentions = [n for n in nodes if isinstance(n, cst.Name) and n.value == name]
    calls = [
        n
        for n in nodes
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value == name
    ]
    if len(mentions) != 1 or len(calls) != 1:
        return False
    loops = (n for n in nodes if isinstance(n, cst.For | cst.While))
    return not any(n is calls[0] for loop in loops for n in descendants(loop))


def _unrolled(context: FileContext, loop: cst.CSTNode) -> bool:
    """A loop in a ``tf.function`` that tracing runs as Python (a comprehension, a ``for``
    over a Python value); a ``while`` or a ``for`` over a dataset, a tensor or anything not
    known may be a graph loop."""
    if isinstance(loop, cst.CompFor):
        return True
    if not isinstance(loop, cst.For):
        return False
    value = context.type_of(loop.iter)
    return not value.top and value.kind in {Kind.CONTAINER, Kind.ITERATOR}


def defining_frame(context: FileContext, name: str) -> int | None:
    """The index of the frame whose scope binds ``name`` (Python's lookup: enclosing functions,
    then the module; class bodies are skipped), or None when nothing in the file binds it."""
    frames = context.frames
    for index in range(len(frames) - 1, -1, -1):
        frame = frames[index]
        if frame.kind is FrameKind.CLASS:
            continue
        facts = context.scope_facts(frame)
        if name in facts.assignments or name in facts.parameters:
            return index
    return None


def is_builtin(context: FileContext, func: cst.BaseExpression, name: str) -> bool:
    """``func`` is the builtin ``name`` (not a name the file imports or binds)."""
    return (
        isinstance(func, cst.Name)
        and func.value == name
        and name not in context.module_index.imports
        and defining_frame(context, name) is None
    )


def is_container(context: FileContext, node: cst.BaseExpression | None) -> bool:
    """A list, dict or set display, comprehension or constructor call."""
    if isinstance(node, cst.List | cst.Dict | cst.Set | cst.ListComp | cst.DictComp | cst.SetComp):
        return True
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    if isinstance(func, cst.Name) and func.value not in context.module_index.imports:
        return func.value in CONTAINER_BUILTINS
    return (context.resolve(func) or "") in CONTAINER_TYPES


def _annotated_container(context: FileContext, frame: Frame, name: str) -> bool:
    node = frame.node
    if not isinstance(node, cst.FunctionDef):
        return False
    params = node.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        if param.name.value != name:
            continue
        if param.default is not None and is_container(context, param.default):
            return True
        if param.annotation is None:
            return False
        annotation = param.annotation.annotation
        if isinstance(annotation, cst.Subscript):
            annotation = annotation.value
        local = dotted(annotation)
        return local in CONTAINER_BUILTINS or (context.resolve(annotation) or "") in CONTAINER_TYPES
    return False


def outliving_container(context: FileContext, receiver: cst.BaseExpression) -> str | None:
    """What ``receiver`` is when it is a Python container that outlives the traced call: "a
    global", "a closure variable", "a parameter" or "an attribute of `self`"; else None."""
    traced = first_traced(context)
    if traced is None:
        return None
    name = dotted(receiver)
    if name is None:
        return None
    if name.startswith("self.") and name.count(".") == 1:
        if context.type_of(receiver).kind is Kind.CONTAINER and not _rebound_first(
            context, traced, name
        ):
            return "an attribute of `self`"
        return None
    if "." in name:
        return None
    index = defining_frame(context, name)
    if index is None:
        return None
    frame = context.frames[index]
    facts = context.scope_facts(frame)
    if index >= traced:
        # Bound in the traced function: only a parameter can come from outside.
        if index == traced and name in facts.parameters and name not in facts.assignments:
            return "a parameter" if _annotated_container(context, frame, name) else None
        return None
    assignments = facts.assignments.get(name, [])
    if not assignments or not all(is_container(context, a.value) for a in assignments):
        return None
    return "a global" if frame.kind is FrameKind.MODULE else "a closure variable"


def _rebound_first(context: FileContext, traced: int, name: str) -> bool:
    """The traced function binds ``name`` anew before the current node, in a statement of a
    block that holds the node (``self.variables = model.trainable_variables``, then
    ``self.variables.extend(...)``): what the node changes is what this trace made."""
    function = context.frames[traced].node
    if not isinstance(function, cst.FunctionDef):
        return False
    ancestors = context.ancestors
    inside = next((i for i, node in enumerate(ancestors) if node is function.body), None)
    if inside is None:
        return False
    for block, child in zip(ancestors[inside:], ancestors[inside + 1 :], strict=False):
        if not isinstance(block, cst.IndentedBlock):
            continue
        for statement in block.body:
            if statement is child:
                break
            if isinstance(statement, cst.SimpleStatementLine) and any(
                isinstance(small, cst.Assign)
                and any(dotted(target.target) == name for target in small.targets)
                for small in statement.body
            ):
                return True
    return False


def eager_callback(context: FileContext, traced: int) -> bool:
    """The read is in a function nested in the ``tf.function`` that ``tf.numpy_function`` or
    ``tf.py_function`` runs eagerly."""
    outer = context.frames[traced].node
    for frame in context.frames[traced + 1 :]:
        if frame.kind is FrameKind.LAMBDA:
            if any(_is_callback_call(context, n, frame.node) for n in context.ancestors):
                return True
        elif isinstance(frame.node, cst.FunctionDef):
            name = frame.node.name.value
            if any(_is_callback_call(context, n, cst.Name(name)) for n in own_nodes(outer)):
                return True
    return False


def _is_callback_call(context: FileContext, node: cst.CSTNode, callback: cst.CSTNode) -> bool:
    if not (isinstance(node, cst.Call) and node.args):
        return False
    first = node.args[0].value
    same = first is callback or (
        isinstance(first, cst.Name)
        and isinstance(callback, cst.Name)
        and first.value == callback.value
    )
    return same and context.resolve(node.func) in EAGER_CALLBACKS
