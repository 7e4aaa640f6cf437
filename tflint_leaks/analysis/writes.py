"""Where a piece of Python state is assigned, and what repeats each assignment.

The state is what an expression reads: an attribute of the instances of project classes
(``self.pl_mean``, ``agent.epsilon``: every class ``self`` or ``agent`` may be an instance of)
or a module's global (``LEARNING_RATE``, ``config.LR`` of a project module ``config``). Its
writes are, across the whole project:

* for an attribute: the class bodies and ``self.name = ...`` in the methods of those classes
  (through their MRO), and ``x.name = ...`` anywhere else where ``x`` may be one of their
  instances (``agent.epsilon = 0.05`` in a runner script);
* for a global: the module's own code, and its functions that declare the name ``global``.

Each :class:`Write` says where it is, whether it is *set-up code* (a class body, ``__init__``
or ``build``, a method only those call; for any state, a module's own code outside its loops:
code that runs once, before the state is used), whether it runs only while a ``tf.function``
traces, whether the function making it creates a new ``tf.function`` each time it runs, and the
loop that repeats it: a loop of its own body, or a loop of a caller through at most
:data:`~.effects.MAX_CHAIN` calls (with the chain), never through set-up code. A loop that
makes the instance anew each iteration (``agent = Agent()`` in it, then ``agent.epsilon = e``
or ``agent.train()``) assigns a new instance's state each time, which repeats nothing: the
assignment is that instance's set-up.

An assignment that every path assigns again before any code that could look at the state runs
(``self.c = centers()``, then ``self.c = tf.concat(self.c, 0)``; the same state set in both
branches of an ``if`` and cast after it: :attr:`~.facts.Body.overwritten`) is not a write of
its own: only its own body sees its value; and a new value computed from one the same run
assigned before (:attr:`~.facts.Body.renewed`) is no update of the state. Subscript
stores (``self.config["lr"] = x``), ``setattr`` and ``nonlocal`` rebindings are not writes here.
"""

from __future__ import annotations

import itertools
from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from tflint_leaks.analysis.effects import MAX_CHAIN, EffectKind, Hop
from tflint_leaks.analysis.facts import Assign, Body, Loop, Span, within
from tflint_leaks.analysis.index import ModuleIndex
from tflint_leaks.analysis.inference import Inference, SiteId, Where
from tflint_leaks.analysis.lattice import ClassRef, FunctionRef, Kind
from tflint_leaks.analysis.symbolic import Expr, Op, ref

Query = tuple[Any, ...]
#: Methods that run once for an instance, before it is used: the constructor, and Keras'
#: ``build`` (called once, before the first call of a layer or model).
SETUP_METHODS = frozenset({"__init__", "build"})


@dataclass(frozen=True, order=True)
class Write:
    """One assignment of a piece of state."""

    path: str
    #: The assignment statement.
    span: Span
    #: The function or method making it (its qualified name), "" for a module's own code, the
    #: class name for a class body.
    function: str
    #: Set-up code: a class body, ``__init__`` or ``build`` (or a method only they call), a
    #: module's own code outside its loops, or a block that runs only while the state is unset
    #: (``if self.hessian is None: self.hessian = ...``: it fills the state once, lazily).
    setup: bool
    #: In a ``tf.function`` (it runs only while the function traces).
    traced: bool
    #: The function making it creates a new ``tf.function`` each time it runs (itself, or in
    #: the project code it calls).
    rebuilds: bool
    #: The header of the loop that repeats it (in ``loop_path``); None when no loop does.
    loop: Span | None = None
    loop_path: str = ""
    #: The calls from that loop down to the function making the write, outermost first (empty
    #: when the loop is in the write's own body).
    chain: tuple[Hop, ...] = ()
    #: The new value is computed from the state's own, as the last run left it (``self.c +=
    #: 1 / 1440``, ``self.k = self.k * 2``, ``self.eps = max(self.eps * decay, floor)``; not
    #: from a value the same run assigned before): an update, which means something only when
    #: it runs again and again (an annealed or adaptive coefficient).
    accumulates: bool = False


class Writes:
    """The writes questions of one project, over its value equations."""

    def __init__(self, inference: Inference) -> None:
        self.inference = inference

    def of(self, expr: Expr, where: Where) -> Generator[Query, Any, tuple[Write, ...]]:
        """Every write of the state ``expr`` reads in ``where`` (a name or an attribute; none
        for a local, a parameter, or an attribute of something that is not project code)."""
        places = yield from self._places(expr, where)
        found: list[Write] = []
        for assign, place in places:
            if (assign.target, assign.span) not in place.body.overwritten:
                found.append((yield from self._write(assign, place)))
        return tuple(sorted(set(found)))

    def toggled(self, writes: Sequence[Write]) -> bool:
        """Two of ``writes`` may both run in one run of the program: they are in different
        functions, or in one function but not in the two blocks of one ``if``/``else``
        (``img_height = int(img_width * ratio)`` in one, ``img_height = size`` in the other
        is one value set per call, not a toggle), unless they are in two programs: two
        modules no project module imports (``main`` of ``main.py`` and ``main`` of
        ``main_taxi.py``, each run as a script of its own)."""
        project = self.inference.project
        for first, second in itertools.combinations(writes, 2):
            if first.path != second.path and not any(
                project.imported(self.inference.module(w.path)) for w in (first, second)
            ):
                continue
            if (first.path, first.function) != (second.path, second.function):
                return True
            module = self.inference.module(first.path)
            if first.function and first.function not in module.functions:
                return True  # a class body's
            body = self.inference.where_of(module, first.function).body
            if not body.apart(first.span, second.span):
                return True
        return False

    # -- where the state is assigned -----------------------------------------------------------

    def _places(
        self, expr: Expr, where: Where
    ) -> Generator[Query, Any, list[tuple[Assign, Where]]]:
        inference = self.inference
        if expr.op is Op.REF and "." not in expr.text:
            name = expr.text
            if _local(name, where, inference.assigned(where)):
                return []
            return inference.global_assignments(where.module, name)
        if expr.op is Op.REF:
            head, _, name = expr.text.rpartition(".")
            receiver = ref(head)
        elif expr.op is Op.ATTR:
            receiver, name = expr.parts[0], expr.text
        else:
            return []
        value = yield from inference.evaluate(receiver, where)
        if value.top:
            return []
        classes: set[ClassRef] = set()
        places: list[tuple[Assign, Where]] = []
        for each in value.atoms:
            if each.kind in {Kind.INSTANCE, Kind.MODEL} and isinstance(each.ref, ClassRef):
                classes.update(inference.classes(each))
            elif each.kind is Kind.MODULE:
                places.extend(inference.global_assignments(inference.module(str(each.ref)), name))
        for klass in sorted(classes):
            places.extend(inference.attribute_assignments(klass, name))
        if classes:
            places.extend((yield from self._through_instances(classes, name)))
        return places

    def _through_instances(
        self, classes: set[ClassRef], name: str
    ) -> Generator[Query, Any, list[tuple[Assign, Where]]]:
        """``x.name = ...`` anywhere in the project where ``x`` (not ``self``) may be an
        instance of one of ``classes``."""
        found: list[tuple[Assign, Where]] = []
        for assign, where in self.inference.outside_stores().get(name, ()):
            receiver = ref(assign.target.rpartition(".")[0])
            value = yield from self.inference.evaluate(receiver, where)
            if value.top:
                continue
            if any(
                klass in classes
                for each in value.atoms
                if each.kind in {Kind.INSTANCE, Kind.MODEL}
                for klass in self.inference.classes(each)
            ):
                found.append((assign, where))
        return found

    # -- what each assignment is ---------------------------------------------------------------

    def _write(self, assign: Assign, where: Where) -> Generator[Query, Any, Write]:
        """The write ``assign`` makes in ``where``."""
        module = where.module
        span = assign.span or Span(1, 1, 1, 1)
        function = where.function
        loop = where.body.loop_around(span) if where.klass is None or function else None
        # A loop that makes the instance anew assigns each new instance's state once: set-up.
        fresh = loop is not None and _fresh(assign.target, where.body, loop)
        if fresh:
            loop = None
        if function is None:
            owner = where.klass.name if where.klass is not None else ""
            place = (loop.header, module.path) if loop is not None else None
            return _made(module, span, owner, setup=loop is None, place=place)
        qualname = function.qualname
        renewed = (assign.target, assign.span) in where.body.renewed
        accumulates = not renewed and _reads(assign.value, assign.target)
        traced = function.tf_function is not None or self.inference.project.traced(module, qualname)
        setup = fresh or where.body.runs_once(span) or (yield from self._setup(module, qualname))
        summary = yield ("summary", module.path, qualname)
        rebuilds = bool(function.creates_tf_function) or any(
            effect.kind is EffectKind.CREATE_TF_FUNCTION for effect in summary
        )
        repeated: tuple[Span, str, tuple[Hop, ...]] | None = None
        if loop is not None:
            repeated = (loop.header, module.path, ())
        elif not setup and not traced:
            repeated = yield from self._repeating_caller(module, qualname, span)
        header, path, chain = repeated if repeated is not None else (None, "", ())
        return Write(
            module.path, span, qualname, setup, traced, rebuilds, header, path, chain, accumulates
        )

    def _setup(self, module: ModuleIndex, qualname: str) -> Generator[Query, Any, bool]:
        """Whether a function is set-up code: ``__init__`` or ``build``, or a function every
        call of which is in set-up code (through at most ``MAX_CHAIN`` calls)."""
        frontier = [(module.path, qualname)]
        seen: set[tuple[str, str]] = set()
        for _ in range(MAX_CHAIN + 1):
            following: list[tuple[str, str]] = []
            for path, name in frontier:
                if name.rpartition(".")[2] in SETUP_METHODS or (path, name) in seen:
                    continue
                seen.add((path, name))
                sites: tuple[SiteId, ...] = yield ("callers", path, name)
                if not sites or any(not caller for _, caller, _ in sites):
                    return False  # called by nothing the project shows, or by module code
                following.extend((caller_path, caller) for caller_path, caller, _ in sites)
            if not following:
                return True
            frontier = following
        return False

    def _repeating_caller(
        self, module: ModuleIndex, qualname: str, span: Span
    ) -> Generator[Query, Any, tuple[Span, str, tuple[Hop, ...]] | None]:
        """The first loop (breadth first, through at most ``MAX_CHAIN`` calls, never through
        set-up code) that calls the function and runs the assignment at ``span``, with its
        header's file and the chain of calls. A call whose arguments rule out the block that
        makes the assignment, or the call of the next hop, does not run it
        (``preprocess_image(path)`` leaves out ``if load_dims:``'s block)."""
        inference = self.inference
        frontier: list[tuple[str, str, tuple[Hop, ...], Span]] = [(module.path, qualname, (), span)]
        seen = {(module.path, qualname)}
        for _ in range(MAX_CHAIN):
            following: list[tuple[str, str, tuple[Hop, ...], Span]] = []
            for path, name, chain, needed in frontier:
                sites: tuple[SiteId, ...] = yield ("callers", path, name)
                for site in sorted(sites):
                    caller_path, caller, index = site
                    call, where = inference.site(site)
                    if (yield from self._rules_out(FunctionRef(path, name), call, where, needed)):
                        continue
                    call_span = where.body.calls[index].span
                    hops = (Hop(caller_path, call_span, name), *chain)
                    loop = where.body.loop_around(call_span)
                    if loop is not None and not _fresh_receiver(call, where.body, loop):
                        return loop.header, caller_path, hops
                    onward = caller and caller.rpartition(".")[2] not in SETUP_METHODS
                    if onward and (caller_path, caller) not in seen:
                        seen.add((caller_path, caller))
                        following.append((caller_path, caller, hops, call_span))
            frontier = following
        return None

    def _rules_out(
        self, ref: FunctionRef, call: Expr, where: Where, span: Span
    ) -> Generator[Query, Any, bool]:
        """``call`` (made in ``where``) never runs the code of ``ref`` at ``span``: a block
        its arguments rule out holds it."""
        inference = self.inference
        given = yield from inference.given_for(ref, call, where)
        if not given:
            return False
        callee = inference.where_of(inference.module(ref.path), ref.qualname)
        _, dead = yield from inference.ruled_out(callee, given)
        return within(span, dead)


def _reads(value: Expr, target: str) -> bool:
    """``value`` reads the state ``target`` names (``self.k`` in ``self.k * 2``), not through
    a call's callee (``self.k.numpy()`` reads it; ``self.scale(x)`` calls a method)."""
    stack = [value]
    while stack:
        current = stack.pop()
        if current.op is Op.REF and current.text == target:
            return True
        parts = current.parts[1:] if current.op is Op.CALL else current.parts
        if current.op is Op.CALL and current.func.op is Op.ATTR:
            parts = (current.func.parts[0], *parts)  # the receiver of a method is read
        elif current.op is Op.CALL and current.func.op is Op.REF:
            head, _, method = current.func.text.rpartition(".")
            if head == target and method:
                return True  # ``self.k.numpy()``
        stack.extend(parts)
    return False


def _made(
    module: ModuleIndex, span: Span, owner: str, *, setup: bool, place: tuple[Span, str] | None
) -> Write:
    """A write by a module's own code or a class body."""
    if place is None:
        return Write(module.path, span, owner, setup, traced=False, rebuilds=False)
    return Write(module.path, span, owner, setup, False, False, place[0], place[1])


def _local(name: str, where: Where, assigned: dict[str, list[Assign]]) -> bool:
    """``name`` is bound in the function of ``where`` (or a nested scope), not global
    (``assigned``: what the function's body assigns)."""
    if name in where.shadowed or any(bound == name for bound, _ in where.bound):
        return True
    function = where.function
    if function is None or name in function.body.globals:
        return False
    return name in function.params or name in assigned


def _fresh(target: str, body: Body, loop: Loop) -> bool:
    """``target`` (``agent.epsilon``) is an attribute of something its body binds anew every
    iteration of ``loop`` (``agent = Agent()`` in it)."""
    root = target.partition(".")[0]
    return "." in target and root != "self" and _bound_in(root, body.assigns, loop)


def _fresh_receiver(call: Expr, body: Body, loop: Loop) -> bool:
    """The method call's receiver is bound anew every iteration of ``loop``."""
    method = call.method
    if method is None or method[0].op is not Op.REF:
        return False
    root = method[0].text.partition(".")[0]
    return root != "self" and _bound_in(root, body.assigns, loop)


def _bound_in(name: str, assigns: Iterable[Assign], loop: Loop) -> bool:
    """``name`` is bound every iteration of ``loop``: in its body, or as its target."""
    return any(
        a.target == name
        and a.span is not None
        and (loop.body.contains(a.span) or loop.header.contains(a.span))
        for a in assigns
    )
