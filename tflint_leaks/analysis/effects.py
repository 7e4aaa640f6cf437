"""What a call does each time it runs: the effect equations.

An effect is something a rule looks for in a loop: a model built, fitted or predicted with, the
session cleared, a ``tf.function`` or a persistent tape created, a dataset built, a parameter
passed on to a ``tf.function``, a TF1 graph grown or run. The unknown
``("summary", path, qualname)`` is what a function does each time it runs: its own effects and
those of the project code it calls, each with the chain of calls that leads to it (at most
:data:`MAX_CHAIN` calls long: the length of a chain a finding can show).

Effects are computed from the values of :mod:`.inference` (a receiver is a Keras model only
when every value it may hold is one), and values never depend on effects: the value unknowns
are solved before an effect reads them, so a summary reads final values.
"""

from __future__ import annotations

import itertools
from collections.abc import Generator, Iterator
from dataclasses import dataclass, replace
from typing import Any

from tflint_leaks.analysis import keras
from tflint_leaks.analysis.facts import Site, Span, within
from tflint_leaks.analysis.graph import (
    GRAPH_METHODS,
    RUN_IN_SESSION_METHODS,
    SESSION_RUN_METHODS,
    builds_graph,
    is_graph_code,
    resets_graph,
)
from tflint_leaks.analysis.index import FunctionFacts, TfFunctionFacts
from tflint_leaks.analysis.inference import (
    Inference,
    SiteId,
    Target,
    TargetKind,
    Where,
    callee_name,
)
from tflint_leaks.analysis.lattice import ClassRef, FunctionRef, Kind, Value
from tflint_leaks.analysis.names import GRADIENT_TAPE, resolve_dotted
from tflint_leaks.analysis.singletons import Singletons
from tflint_leaks.analysis.symbolic import Expr, Op, ref

Query = tuple[Any, ...]

#: How many calls long a chain from a call to an effect may be
#: (``loop -> a() -> b() -> c() -> model.predict``).
MAX_CHAIN = 4


class EffectKind(Singletons):
    PREDICT = "predict"
    BUILD_MODEL = "build-model"
    FIT = "fit"
    CLEAR_SESSION = "clear-session"
    CREATE_TF_FUNCTION = "create-tf-function"
    PERSISTENT_TAPE = "persistent-tape"
    DATASET = "dataset"
    #: A parameter of the function (``parameter``) is passed to a ``tf.function``.
    PARAMETER_TO_TF_FUNCTION = "parameter-to-tf-function"
    #: Nodes are added to the default graph (in graph code: a TensorFlow op, ``v.assign``).
    GRAPH_OP = "graph-op"
    #: The graph runs in a session (``sess.run``, ``x.eval(session=sess)``).
    RUN_GRAPH = "run-graph"
    #: The default graph is dropped (``tf.compat.v1.reset_default_graph()``).
    RESET_GRAPH = "reset-graph"


#: What graph code does: it builds ops everywhere, so only the functions that run the graph are
#: interesting, and only to the rules that ask.
GRAPH_EFFECTS = frozenset({EffectKind.GRAPH_OP, EffectKind.RUN_GRAPH, EffectKind.RESET_GRAPH})


@dataclass(frozen=True, order=True)
class Hop:
    """One call on the way to an effect: the call site and the function it runs."""

    path: str
    span: Span
    callee: str


@dataclass(frozen=True)
class TfFunctionTarget:
    """The ``tf.function`` a call invokes: how it was made, the function it wraps (when it is a
    decorated project function, for its parameters), and the file that defines it."""

    facts: TfFunctionFacts
    function: FunctionFacts | None
    path: str


@dataclass(frozen=True)
class Effect:
    kind: EffectKind
    path: str
    span: Span
    #: What a message names: the model (``self.model``), the builder (``build_model``).
    text: str
    #: The calls from the summarised function down to the effect, outermost first.
    chain: tuple[Hop, ...] = ()
    #: For :data:`EffectKind.PARAMETER_TO_TF_FUNCTION`: the parameter's position.
    parameter: int = -1
    #: For :data:`EffectKind.PARAMETER_TO_TF_FUNCTION`: the ``tf.function`` called.
    tf_function: TfFunctionTarget | None = None
    #: For :data:`EffectKind.PREDICT` and :data:`EffectKind.FIT`: the method called
    #: (``predict``, ``predict_classes``, ``fit_generator``...); empty for a model's method
    #: held in a variable and called by its name (``predict_fn(x)``, ``text``).
    method: str = ""
    #: For :data:`EffectKind.FIT`: the call trains one epoch (``epochs`` left out or 1).
    one_epoch: bool = False
    #: For :data:`EffectKind.GRAPH_OP`: a call of the chain, or the op itself, is made in a
    #: block that makes a graph the default (:attr:`~tflint_leaks.analysis.facts.Body.
    #: graph_blocks`), so the op builds graph nodes even where eager execution is on.
    in_graph: bool = False

    @property
    def identity(self) -> tuple[str, str, Span, str, int, bool]:
        """What the effect is, whatever chain reaches it (an op built in a graph by one chain
        and eagerly by another is two effects)."""
        return self.kind.value, self.path, self.span, self.text, self.parameter, self.in_graph

    @property
    def places(self) -> list[tuple[str, Span, str]]:
        """Below the chain's first call, each call of the chain and then the effect itself,
        with the function making it: (file, place, qualified name)."""
        chain = self.chain
        found = [(hop.path, hop.span, caller.callee) for caller, hop in itertools.pairwise(chain)]
        if chain:
            found.append((self.path, self.span, chain[-1].callee))
        return found


def _built_in_graph(effect: Effect) -> Effect:
    """``effect`` made in a block that makes a graph the default: an op builds graph nodes."""
    if effect.kind is EffectKind.GRAPH_OP and not effect.in_graph:
        return replace(effect, in_graph=True)
    return effect


def _canonical(effects: Iterator[Effect] | list[Effect]) -> tuple[Effect, ...]:
    """One effect per identity, reached by its shortest chain (the first of those in order),
    sorted: the same tuple whatever order the effects were found in."""
    best: dict[tuple[str, str, Span, str, int, bool], Effect] = {}
    for effect in effects:
        key = effect.identity
        known = best.get(key)
        if known is None or (len(effect.chain), effect.chain) < (len(known.chain), known.chain):
            best[key] = effect
    return tuple(best[key] for key in sorted(best))


class Effects:
    """The effect equations of one project, over its value equations."""

    def __init__(self, inference: Inference) -> None:
        self.inference = inference

    def equations(self) -> dict[str, tuple[Any, tuple[Effect, ...] | bool]]:
        return {"summary": (self._summary, ()), "in graph": (self._runs_in_graph, False)}

    # -- summaries -----------------------------------------------------------------------------

    def _summary(self, query: Query) -> Generator[Query, Any, tuple[Effect, ...]]:
        """``("summary", path, qualname)``, or ``("summary", path, qualname, given)``: what
        the function does for a call passing ``given`` (:meth:`Inference.given_for`), without
        the blocks those values rule out."""
        path, qualname = query[1:3]
        module = self.inference.module(path)
        function_facts = module.functions[qualname]
        if function_facts.tf_function or self.inference.project.traced(module, qualname):
            return ()  # a tf.function's Python body runs only while it traces
        if function_facts.memoized:
            return ()  # ``@st.cache_resource``: the body runs once per distinct arguments
        where = self.inference.where_of(module, qualname)
        given = query[3] if len(query) > 3 else None
        where, dead = yield from self.inference.ruled_out(where, given)
        function = where.function
        assert function is not None
        effects = [
            Effect(EffectKind.CREATE_TF_FUNCTION, path, span, qualname)
            for span in function.creates_tf_function
            if not function.body.runs_once(span)  # behind a first-call guard
            and not within(span, dead)
        ]
        for site in function.body.calls:
            if within(site.span, dead):
                continue  # a branch this call never takes
            if function.body.runs_once(site.span) and not (
                yield from self.runs_per_key(site.span, where)
            ):
                continue  # ``if self.model is None: self.model = load()``: the first call's
            found = yield from self.site_effects(site, where, nested=True)
            if function.body.in_own_graph(site.span):
                # Built into a graph the function makes itself, not into the caller's default.
                found = [e for e in found if e.kind is not EffectKind.GRAPH_OP]
            elif function.body.in_graph_block(site.span):
                found = [_built_in_graph(e) for e in found]
            if site.call in function.body.iterated_pipelines:
                # A data-free pipeline the function only iterates: nothing traced or copied.
                found = [e for e in found if e.kind is not EffectKind.DATASET]
            effects.extend(e for e in found if len(e.chain) < MAX_CHAIN)
        return _canonical(effects)

    def runs_per_key(self, span: Span, where: Where) -> Generator[Query, Any, bool]:
        """The code at ``span`` of ``where``'s function, in a block that runs once per key
        (:attr:`~tflint_leaks.analysis.facts.Body.keyed`), runs on every call: the key is
        computed from data the call is given, a NumPy array (alpha-zero-general's ``if s not
        in self.Ps:`` with ``s`` the board's bytes), not from a name or a number (a cache of
        models by name: once per name) nor from a tensor (hashable only in graph mode, where it
        is a node of the graph, the same on every call: cleverhans's ``model_eval`` keeps its
        accuracy op by ``(y, predictions)``)."""
        for name in where.body.keyed_by(span):
            given = yield from self.inference.evaluate(ref(name), where)
            if given.atoms_of(Kind.ARRAY):
                return True
        return False

    def _runs_in_graph(self, query: Query) -> Generator[Query, Any, bool]:
        """``("in graph", path, qualname)``: the function may run with a graph made the
        default: a call site that may run it is in a block that makes one the default
        (:attr:`~tflint_leaks.analysis.facts.Body.graph_blocks`), or in a function that may
        itself run so."""
        _, path, qualname = query
        sites: tuple[SiteId, ...] = yield ("callers", path, qualname)
        for caller_path, caller, index in sites:
            body = self.inference.where_of(self.inference.module(caller_path), caller).body
            if body.in_graph_block(body.calls[index].span):
                return True
            if caller and (yield ("in graph", caller_path, caller)):
                return True
        return False

    def site_effects(
        self, site: Site, where: Where, *, nested: bool
    ) -> Generator[Query, Any, list[Effect]]:
        """What one call site does each time it runs. ``nested``: seen from the summary of
        the function making it (a parameter passed to a ``tf.function`` is then translated
        to the caller's parameters)."""
        call, path = site.call, where.module.path
        inference = self.inference
        effects: list[Effect] = []
        method = call.method
        if method is not None and (
            method[1] in keras.PREDICT_METHODS or method[1] in keras.FIT_METHODS
        ):
            receiver = yield from inference.evaluate(method[0], where)
            if receiver.where_known(Kind.MODEL) and not self.defines(receiver, method[1]):
                text = _text(method[0])
                if method[1] in keras.PREDICT_METHODS:
                    return [Effect(EffectKind.PREDICT, path, site.span, text, method=method[1])]
                epochs = call.argument(keras.FIT_EPOCHS[method[1]], "epochs")
                given = None if epochs is None else (yield from inference.evaluate(epochs, where))
                once = given is None or given.ints == frozenset({1})
                return [
                    Effect(EffectKind.FIT, path, site.span, text, method=method[1], one_epoch=once)
                ]
        if where.function is not None:
            traced = yield from self.tf_function(call, where)
            if traced is not None:
                return list(self._to_tf_function(call, site, where, traced))
        targets = yield from inference.targets(call, where)
        if inference.makes_model(call, targets, where):
            return [Effect(EffectKind.BUILD_MODEL, path, site.span, _text(call.func))]
        # A value that may be a class or an object already made from one (``self.kernel =
        # kernel(sigma) if kernel is RBF else kernel``) makes nothing certain when called.
        made_already = any(_calls_object(target) for target in targets)
        project = False
        for target in targets:
            if made_already and target.kind is TargetKind.CONSTRUCTOR:
                project = True
                continue
            if target.kind is TargetKind.LIBRARY:
                made = library_effect(target.name, call)
                if made is not None:
                    # A graph op is named in full (``tf.assign``), the others by their last name.
                    text = _text(call.func)
                    text = text if made is EffectKind.GRAPH_OP else text.rpartition(".")[2]
                    effects.append(Effect(made, path, site.span, text))
            elif target.kind in {TargetKind.FUNCTION, TargetKind.CONSTRUCTOR}:
                project = True
                found = yield from self._callee_effects(target, site, where, nested=nested)
                effects.extend(found)
        if not project:
            effects.extend((yield from self._graph_effects(site, where)))
        return effects

    def _to_tf_function(
        self, call: Expr, site: Site, where: Where, target: TfFunctionTarget
    ) -> Iterator[Effect]:
        function = where.function
        assert function is not None
        for position, argument in enumerate(call.positional):
            if target.facts.covers(position):
                continue  # input_signature: a tensor of the declared spec, not a Python value
            if argument.op is Op.REF and argument.text in function.params:
                yield Effect(
                    EffectKind.PARAMETER_TO_TF_FUNCTION,
                    where.module.path,
                    site.span,
                    callee_name(call) or "?",
                    parameter=function.params.index(argument.text),
                    tf_function=target,
                )

    def _callee_effects(
        self, target: Target, site: Site, where: Where, *, nested: bool
    ) -> Generator[Query, Any, list[Effect]]:
        inference = self.inference
        path = where.module.path
        klass = target.klass
        if target.kind is TargetKind.CONSTRUCTOR and klass is not None:
            definition = inference.klass(klass)
            if definition is not None and inference.project.is_model_class(*definition):
                return [Effect(EffectKind.BUILD_MODEL, path, site.span, klass.name)]
        ref = target.ref
        if ref is None:
            return []
        effects: list[Effect] = []
        factory = yield from self.is_factory(ref)
        if factory:
            effects.append(Effect(EffectKind.BUILD_MODEL, path, site.span, ref.qualname))
        hop = Hop(path, site.span, ref.qualname)
        given = yield from inference.given_for(ref, site.call, where)
        query = ("summary", ref.path, ref.qualname)
        summary = yield (*query, given) if given else query
        for effect in summary:
            if effect.kind is EffectKind.BUILD_MODEL and factory:
                continue  # the model is returned: the caller's assignment is the effect
            translated = self._through(effect, site.call, where) if nested else effect
            if translated is not None:
                effects.append(replace(translated, chain=(hop, *translated.chain)))
        return effects

    def is_factory(self, ref: FunctionRef) -> Generator[Query, Any, bool]:
        """The function returns a new model it built (a model factory)."""
        returned: Value = yield ("returns", ref.path, ref.qualname)
        return returned.kind is Kind.MODEL and returned.fresh

    def _graph_effects(self, site: Site, where: Where) -> Generator[Query, Any, list[Effect]]:
        """A method call on something that is not project code that runs the graph (a
        session's ``run``, ``x.eval(sess)``) or, in graph code, adds to it (``v.assign(x)``)."""
        call = site.call
        method = call.method
        if method is None:
            return []
        receiver, name = method
        path = where.module.path
        text = f"{_text(receiver)}.{name}"
        if name in SESSION_RUN_METHODS:
            value = yield from self.inference.evaluate(receiver, where)
            if value.where_known(Kind.SESSION):
                return [Effect(EffectKind.RUN_GRAPH, path, site.span, text)]
        if name in RUN_IN_SESSION_METHODS:
            for argument in (*call.positional[:1], call.keyword("session")):
                if argument is None:
                    continue
                value = yield from self.inference.evaluate(argument, where)
                if value.where_known(Kind.SESSION):
                    return [Effect(EffectKind.RUN_GRAPH, path, site.span, text)]
        module = where.module
        if name in GRAPH_METHODS and (
            is_graph_code(module.units) or module.graph_mode or module.tf1_only
        ):
            return [Effect(EffectKind.GRAPH_OP, path, site.span, text)]
        return []

    def _through(self, effect: Effect, call: Expr, where: Where) -> Effect | None:
        """An effect of the callee seen from the caller: a parameter passed on to a
        ``tf.function`` stays an effect only when the caller passes its own parameter."""
        if effect.kind is not EffectKind.PARAMETER_TO_TF_FUNCTION:
            return effect
        positional = call.positional
        if effect.parameter >= len(positional) or where.function is None:
            return None
        argument = positional[effect.parameter]
        if argument.op is Op.REF and argument.text in where.function.params:
            return replace(effect, parameter=where.function.params.index(argument.text))
        return None

    def defines(self, value: Value, method: str) -> bool:
        """Whether one of the project classes a value may be of defines ``method``."""
        inference = self.inference
        return any(
            inference.method_of(ref, method) is not None
            for each in value.informative
            for ref in inference.classes(each)
        )

    # -- tf.function targets -------------------------------------------------------------------

    def tf_function(
        self, call: Expr, where: Where
    ) -> Generator[Query, Any, TfFunctionTarget | None]:
        """The ``tf.function`` a call invokes, if the project index knows it."""
        inference = self.inference
        module = where.module
        func = call.func
        if func.op is Op.REF and "." not in func.text and func.text not in where.shadowed:
            name = func.text
            if where.function is not None and name in where.function.local_tf_functions:
                facts = where.function.local_tf_functions[name]
                return TfFunctionTarget(facts, None, module.path)
            if name in module.tf_function_names and name not in module.imports:
                return TfFunctionTarget(module.tf_function_names[name], None, module.path)
        method = call.method
        if method is not None:
            receiver = yield from inference.evaluate(method[0], where)
            for each in receiver.informative:
                for klass in inference.classes(each):
                    found = self._tf_method(klass, method[1])
                    if found is not None:
                        return found
        targets = yield from inference.targets(call, where)
        for target in targets:
            ref = target.ref
            if target.kind is TargetKind.FUNCTION and ref is not None:
                function = inference.module(ref.path).functions[ref.qualname]
                if function.tf_function is not None:
                    return TfFunctionTarget(function.tf_function, function, ref.path)
        if func.op is Op.REF and func.text.partition(".")[0] in module.imports:
            qualified = resolve_dotted(func.text, module.imports)
            imported = inference.project.lookup(qualified, module) if qualified else None
            if imported is not None and imported.tf_function is not None:
                return TfFunctionTarget(
                    imported.tf_function, imported.function, imported.module.path
                )
        return None

    def _tf_method(self, klass: ClassRef, name: str) -> TfFunctionTarget | None:
        """The ``tf.function`` attribute ``name`` of a project class (a decorated method, or
        ``self.name = tf.function(...)``), through its bases."""
        inference = self.inference
        definition = inference.klass(klass)
        if definition is None:
            return None
        facts = inference.project.class_tf_functions(*definition).get(name)
        if facts is None:
            return None
        method = inference.method_of(klass, name)
        if method is None:
            return TfFunctionTarget(facts, None, definition[0].path)
        return TfFunctionTarget(
            facts, inference.module(method.path).functions[method.qualname], method.path
        )


def _calls_object(target: Target) -> bool:
    """The target is calling an object (its ``__call__``), not making one."""
    receiver = target.receiver
    if target.kind is TargetKind.VALUE and receiver is not None:
        return receiver.kind in {Kind.MODEL, Kind.INSTANCE}
    ref = target.ref
    return (
        target.kind is TargetKind.FUNCTION
        and ref is not None
        and ref.qualname.endswith(".__call__")
    )


def library_effect(qualified: str, call: Expr) -> EffectKind | None:
    """What a call of the library callable ``qualified`` does that a loop rule looks for."""
    if keras.builds_model(qualified):
        return None if keras.views_model(qualified, call) else EffectKind.BUILD_MODEL
    if qualified in keras.CLEAR_SESSION:
        return EffectKind.CLEAR_SESSION
    if qualified == GRADIENT_TAPE:
        flag = call.keyword("persistent")
        if flag is not None and flag.op is Op.LITERAL and flag.text == "true":
            return EffectKind.PERSISTENT_TAPE
        return None
    if qualified in keras.DATASET_SOURCES:
        return EffectKind.DATASET
    owner, _, method = qualified.rpartition(".")
    if owner == keras.MODEL_METHODS_OWNER and method in keras.PREDICT_METHODS:
        return EffectKind.PREDICT  # ``predict_fn(x)`` with ``predict_fn = model.predict``
    if qualified == keras.GRAPH_FUNCTION_MADE:
        return EffectKind.RUN_GRAPH  # ``get_output([x])`` with ``get_output = K.function(...)``
    if resets_graph(qualified):
        return EffectKind.RESET_GRAPH
    if builds_graph(qualified):
        return EffectKind.GRAPH_OP
    return None


def _text(expr: Expr) -> str:
    if expr.op is Op.REF:
        return expr.text
    if expr.op is Op.ATTR:
        return f"{_text(expr.parts[0])}.{expr.text}"
    if expr.op is Op.CALL:
        return f"{_text(expr.func)}(...)"
    if expr.op is Op.ITEM:
        return f"{_text(expr.parts[0])}[{expr.number if expr.number >= 0 else '...'}]"
    return "..."
