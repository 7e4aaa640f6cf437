"""What a notebook defines and never runs: the functions and methods nothing in it refers to.

A notebook is a program of its own: no module imports it, so what it defines runs only when its
own cells call it. A top-level function whose name the notebook never reads (no call, no
reference handed on) never runs; nor does a method whose name it never reads as an attribute,
when the method's class keeps its instances to the notebook's own code: the class and its bases
are the notebook's own (no framework's base calls ``call`` or ``on_epoch_end``), its instances
are only bound to names whose attributes are read (``fcos = FCOS(config)``, then ``fcos.x``),
and its methods read ``self`` only for attributes or hand it to ``setattr``, ``hasattr`` or
``isinstance`` (``self`` handed to a library, as ``callbacks=[self]``, lets the library call
any method). What such a body would do is not reported, as a block under a decided ``if`` is
not. Kept: decorated functions (a decorator may register them: ``@app.route``, ``@interact``)
and dunder methods (Python calls them). An
attribute read on an imported name (``tf.train``) refers to that module's attribute, not to a
method ``train``. A module is not a notebook: another module may import it and call what it
defines. (A file a notebook runs in its namespace with ``%run`` may call any of its functions:
the walker then takes none as unreached.)
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tflint_leaks.analysis.index import ModuleIndex
from tflint_leaks.source import NOTEBOOK_SUFFIX


def never_called(index: ModuleIndex, text: str) -> frozenset[str]:
    """The qualnames of a notebook's top-level functions and methods that it never calls
    (empty for a module that is not a notebook). ``text`` is the notebook's code, its cells
    joined, as the index read it."""
    if not index.path.endswith(NOTEBOOK_SUFFIX):
        return frozenset()
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return frozenset()
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    read = _read_names(tree, frozenset(index.imports))
    found: set[str] = set()
    kept: dict[str, bool] = {}
    for qualname, facts in index.functions.items():
        owner, _, name = qualname.rpartition(".")
        if facts.decorators or name in read or (name.startswith("__") and name.endswith("__")):
            continue
        if owner and owner not in kept:
            kept[owner] = _kept_inside(tree, parents, index, owner)
        if not owner or kept[owner]:
            found.add(qualname)
    return frozenset(found)


def _read_names(tree: ast.Module, imported: frozenset[str]) -> set[str]:
    """Every name read (``f``) and every attribute read (``x.f``), except the attributes of
    an imported name (``tf.train``)."""
    read: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store | ast.Del):
            read.add(node.id)
        elif isinstance(node, ast.Attribute):
            value = node.value
            if not (isinstance(value, ast.Name) and value.id in imported):
                read.add(node.attr)
    return read


def _kept_inside(
    tree: ast.Module, parents: dict[ast.AST, ast.AST], index: ModuleIndex, name: str
) -> bool:
    """Only the notebook's own code can call the methods of the class ``name``: it and its
    bases are the notebook's own, and no instance of it leaves the notebook's code."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        if current in seen or current == "object":
            continue
        seen.add(current)
        klass = index.classes.get(current)
        if klass is None:
            return False
        todo.extend(klass.bases)
    holders: set[str] = set()
    for use in _loads(tree, name):
        call = parents.get(use)
        if not (isinstance(call, ast.Call) and call.func is use):
            return False  # a base of another class, handed on, stored
        bound = parents.get(call)
        if isinstance(bound, ast.Attribute) and bound.value is call:
            continue  # ``FCOS(config).train()``
        if not (
            isinstance(bound, ast.Assign)
            and len(bound.targets) == 1
            and isinstance(bound.targets[0], ast.Name)
        ):
            return False
        holders.add(bound.targets[0].id)
    definitions = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name]
    if not definitions:
        return False
    inside = [*_loads(tree, *holders), *(u for d in definitions for u in _loads(d, "self"))]
    return all(_attribute_read(use, parents) for use in inside)


#: Builtins that take an object without calling any method of it by name.
_INSPECTING = frozenset({"setattr", "hasattr", "isinstance"})


def _attribute_read(use: ast.Name, parents: dict[ast.AST, ast.AST]) -> bool:
    """``use`` is read for one of its attributes (``self.model``), or inspected by a builtin
    that calls none of its methods (``setattr(self, name, value)``)."""
    parent = parents.get(use)
    if isinstance(parent, ast.Attribute):
        return parent.value is use
    return (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Name)
        and parent.func.id in _INSPECTING
        and parent.args[:1] == [use]
    )


def _loads(tree: ast.AST, *names: str) -> Iterator[ast.Name]:
    """The reads of ``names`` in ``tree``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load):
            yield node
