"""The project index: what every module defines and imports, built with the standard ``ast``.

This is the cheap first pass. ``ast`` parses about ten times faster than libcst, so every file
of the project is indexed before any rule runs; the libcst pass then asks the index which
names are ``tf.function``s, which classes carry ``tf.function`` methods, and which project
functions create a ``tf.function`` on every call -- across files, through absolute and
relative imports.

A :class:`ModuleIndex` holds plain values only, so it can be cached and shipped to worker
processes. Columns are 1-based character columns (``ast`` counts UTF-8 bytes; converted here).
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from tflint_leaks.analysis import keras
from tflint_leaks.analysis.dtypes import DtypeUse, dotted_ast, parameter_dtypes, resolve_ast
from tflint_leaks.analysis.endings import end_of_script
from tflint_leaks.analysis.entry_points import MEMOIZERS, SCRIPT_PACKAGES
from tflint_leaks.analysis.eras import CodePin, code_pins
from tflint_leaks.analysis.facts import Body, Span, collect_body
from tflint_leaks.analysis.graph import (
    EAGER_CALLBACKS,
    EAGER_MODE_SWITCHES,
    FUNCTIONS_EAGERLY_SWITCHES,
    GRAPH_MODE_SWITCHES,
    is_graph_code,
    is_tf1_only,
)
from tflint_leaks.analysis.names import (
    GRADIENT_TAPE,
    IMPORT_MODULE,
    TF_FUNCTION,
    TYPING_CAST,
    canonical,
    is_keras,
    is_tensorflow,
    resolve_dotted,
)
from tflint_leaks.analysis.symbolic import (
    Expr,
    Op,
    from_ast,
    is_comprehension,
    lambda_name,
    literal,
    string_text,
)
from tflint_leaks.analysis.units import FileUnits, ImportNode, child_nodes, collect_units, walk
from tflint_leaks.source import NOTEBOOK_SUFFIX, split_lines


@dataclass(frozen=True)
class TfFunctionFacts:
    """How a ``tf.function`` was made and which retracing controls it has."""

    #: The ``@tf.function`` decorator (or the ``tf.function(...)`` call) that makes it.
    span: Span
    #: Number of parameters covered by ``input_signature``; -1 when the signature is present
    #: but not a literal list (then every parameter counts as covered); None without one.
    signature_size: int | None
    reduce_retracing: bool

    def covers(self, position: int | None) -> bool:
        """Whether ``input_signature`` covers the parameter at ``position`` (0-based)."""
        if self.signature_size is None:
            return False
        if self.signature_size < 0 or position is None:
            return True
        return position < self.signature_size


@dataclass(frozen=True)
class FunctionFacts:
    qualname: str
    #: The ``def`` line and the first decorator's line (equal when undecorated).
    span: Span
    first_line: int
    params: tuple[str, ...]
    #: Bound to an instance or class when accessed (static methods are not).
    is_method: bool
    tf_function: TfFunctionFacts | None
    #: ``tf.function``s this function creates each time it runs (nested decorated defs or
    #: ``tf.function(...)`` calls outside any nested ``tf.function``).
    creates_tf_function: tuple[Span, ...]
    #: Names bound in the body to a ``tf.function``: nested decorated defs, ``f = tf.function(g)``.
    local_tf_functions: dict[str, TfFunctionFacts]
    #: What the body assigns, returns and calls (see :mod:`.facts`).
    body: Body
    #: The body yields: a call makes a Python generator.
    generator: bool
    #: A method read as an attribute (``@property``, ``@functools.cached_property``).
    is_property: bool = False
    #: What the body combines each parameter with, for the dtype a tensor of it needs.
    dtype_uses: dict[str, DtypeUse] = field(default_factory=dict)
    #: The decorators, as written (``app.route("/")``): a framework's entry point
    #: (:mod:`.repetition`).
    decorators: tuple[Expr, ...] = ()
    #: A decorator memoizes it (``@st.cache_resource``, ``@functools.lru_cache``): its body
    #: runs once per distinct arguments.
    memoized: bool = False
    #: The parameters a call may pass by position, in order (``self`` first for a method).
    positional: tuple[str, ...] = ()
    #: The parameters without a default value, which every call must bind.
    required: tuple[str, ...] = ()
    #: The ``*args`` parameter's name: a tuple of the positional arguments a call passes
    #: after those the other parameters take.
    star: str | None = None
    #: An abstract method (``@abc.abstractmethod``, or a body that only raises
    #: ``NotImplementedError``): what runs for ``self.name()`` is a subclass's override.
    abstract: bool = False

    def binds(self, call: Expr, *, bound: bool) -> bool:
        """Whether ``call`` binds every required parameter (``bound``: called on an instance,
        which binds the first) and passes no more arguments by position than the function
        takes; a call that leaves one out, or passes one too many, raises ``TypeError`` before
        the body runs. Not known, so True, for a call that spreads ``*args`` or ``**kwargs``
        and for a decorated function (its decorator may take other arguments)."""
        if call.open or self.decorators:
            return True
        positional = self.positional[1:] if bound else self.positional
        if self.star is None and len(call.positional) > len(positional):
            return False
        given = {*positional[: len(call.positional)], *call.keywords}
        first = self.positional[:1] if bound else ()
        return all(name in given for name in self.required if name not in first)


@dataclass(frozen=True)
class ClassFacts:
    name: str
    span: Span
    bases: tuple[str, ...]
    methods: tuple[str, ...]
    #: Attributes that are ``tf.function``s: decorated methods and ``self.x = tf.function(...)``.
    tf_functions: dict[str, TfFunctionFacts]
    #: What the class body itself (not its methods) assigns and calls.
    body: Body

    @property
    def is_keras_subclass(self) -> bool:
        return any(is_keras(base) for base in self.bases)

    @property
    def is_keras_model(self) -> bool:
        """Derives directly from ``keras.Model`` or ``keras.Sequential``."""
        return keras.is_model_class(self.bases)


@dataclass(frozen=True)
class ModuleIndex:
    path: str
    module: str
    is_package: bool
    #: The directory that would be on ``sys.path`` for ``module`` to import.
    root: str
    imports: dict[str, str]
    int_constants: dict[str, int]
    functions: dict[str, FunctionFacts]
    classes: dict[str, ClassFacts]
    #: Module-level ``name = tf.function(fn, ...)``.
    tf_function_names: dict[str, TfFunctionFacts]
    #: Qualnames of this module's functions whose bodies run only while a ``tf.function``
    #: traces: those a ``tf.function(...)`` call wraps (like decorated ones), and those only
    #: such functions call; each with the ``tf.function``s whose traces run it (empty for a
    #: wrapped one, which is itself such a function).
    traced: dict[str, tuple[str, ...]]
    #: Whether the module mentions TensorFlow or Keras at all (a cheap relevance test).
    uses_tensorflow: bool
    #: What each top-level function and method mentions, for leaving units out of the parse.
    units: FileUnits
    #: What the module's own code (every cell of a notebook) assigns and calls.
    body: Body
    #: The module turns eager execution off (``tf.compat.v1.disable_eager_execution()``,
    #: ``disable_v2_behavior()``): TF1-style graph mode.
    graph_mode: bool
    #: The module calls what only TensorFlow 1 has (``tf.placeholder``, ``tf.contrib``...)
    #: without turning eager execution on: written for TensorFlow 1's graph mode, unless the
    #: project runs TensorFlow 2 (:meth:`~.project.ProjectIndex.graph_mode`).
    tf1_only: bool
    #: The module turns eager execution on (``tf.enable_eager_execution()``,
    #: ``enable_v2_behavior()``): eager even where TensorFlow 1 runs it.
    eager_mode: bool
    #: The module's own code builds a placeholder where no graph is the default
    #: (:func:`_placeholders_at_import`): what runs after that line runs in graph mode.
    placeholders_at_import: bool
    #: The module's own code makes every ``tf.function`` run eagerly
    #: (``tf.config.run_functions_eagerly(True)``, :func:`_functions_eagerly`): nothing is
    #: traced, so nothing retraces and no Python state is frozen by a trace.
    functions_eagerly: bool = False
    #: The ``train_step``, ``test_step`` and ``predict_step`` of its Keras models, which
    #: ``fit``, ``evaluate`` and ``predict`` run inside the ``tf.function`` they make
    #: (:data:`~.keras.TRACED_STEPS`), unless the program compiles them to run eagerly.
    keras_steps: tuple[str, ...] = ()
    #: It says ``run_eagerly`` (``compile(..., run_eagerly=True)``, ``model.run_eagerly =
    #: True``): a program with such a module may run its models' steps eagerly.
    run_eagerly: bool = False
    #: It imports or calls ``tf.compat.v1`` (:func:`_uses_compat`).
    uses_compat: bool = False
    #: What its calls say of the versions it runs on (:mod:`.eras`).
    code_pins: tuple[CodePin, ...] = ()
    #: The module-level import of a framework that reruns the module as a script
    #: (``import streamlit as st``; :mod:`.repetition`).
    script_import: Span | None = None
    #: The modules ``importlib.import_module`` may import here, by the constant start of the
    #: name it is given: ``("agents.", False)`` for ``f"agents.{name}"``, ``("agents.dqn",
    #: True)`` for the whole name.
    imported_by_name: tuple[tuple[str, bool], ...] = ()
    #: The modules ``from module import *`` imports every public name of, in order (absolute).
    star_imports: tuple[str, ...] = ()
    #: A script's last line that may run: the end of its first module-level statement that
    #: never completes (``exit()``, ``while True:`` with no ``break``:
    #: :func:`~.endings.end_of_script`); None when there is none, and for a notebook, whose
    #: reader may run any cell.
    ends: int | None = None
    digest: str = field(default="", compare=False)


#: What separates a function's qualified name from a function defined inside it.
LOCALS = ".<locals>."


class IndexBuilder(ast.NodeVisitor):
    """Collects a :class:`ModuleIndex` from one ``ast`` tree."""

    def __init__(
        self, source_lines: list[str], module: str, is_package: bool, graph_code: bool
    ) -> None:
        self._lines = source_lines
        self._module = module
        self._is_package = is_package
        self.imports: dict[str, str] = {}
        self.star_imports: list[str] = []
        self.int_constants: dict[str, int] = {}
        self.functions: dict[str, FunctionFacts] = {}
        self.classes: dict[str, ClassFacts] = {}
        self.tf_function_names: dict[str, TfFunctionFacts] = {}
        #: Module-level ``functools.partial(tf.function, ...)`` aliases and their keywords.
        self.partials: dict[str, list[ast.keyword]] = {}
        self.traced: set[str] = set()
        self.keras_steps: list[str] = []
        #: The nodes of each function's body outside nested scopes.
        self.own: dict[ast.AST, list[ast.AST]] = {}
        #: TF1 graph code (sessions, placeholders, or what only TensorFlow 1 has): bodies keep
        #: the calls that add nodes to the graph.
        self.graph_code = graph_code
        #: What :meth:`resolve` gave each node, once the imports are all read (the facts of a
        #: call resolve its callee four times).
        self._resolved: dict[ast.expr, str | None] | None = None

    def own_nodes(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST]:
        """:func:`_own_nodes` of a function, walked once however many facts read them (the
        units pass lists them for top-level functions and methods while it walks them)."""
        found = self.own.get(node)
        if found is None:
            found = self.own[node] = _own_nodes(node)
        return found

    # -- positions -------------------------------------------------------------------------

    def _column(self, line: int, byte_offset: int) -> int:
        text = self._lines[line - 1] if 0 < line <= len(self._lines) else ""
        if text.isascii():
            return byte_offset + 1  # one byte per character
        return len(text.encode("utf-8")[:byte_offset].decode("utf-8", errors="replace")) + 1

    def span(self, node: ast.expr | ast.stmt) -> Span:
        end_line = node.end_lineno or node.lineno
        return Span(
            node.lineno,
            self._column(node.lineno, node.col_offset),
            end_line,
            self._column(end_line, node.end_col_offset or node.col_offset),
        )

    # -- names -----------------------------------------------------------------------------

    def resolve(self, node: ast.expr) -> str | None:
        """The canonical qualified name of a dotted expression, through this module's imports."""
        known = self._resolved
        if known is None:
            return resolve_ast(node, self.imports)
        if node in known:
            return known[node]
        found = known[node] = resolve_ast(node, self.imports)
        return found

    def _absolute(self, module: str | None, level: int) -> str:
        if level == 0:
            return module or ""
        package = self._module if self._is_package else self._module.rpartition(".")[0]
        for _ in range(level - 1):
            package = package.rpartition(".")[0]
        return f"{package}.{module}" if module and package else (module or package)

    def _star_library_names(self, tree: ast.Module) -> None:
        """What ``from keras.models import *`` binds of the names the rules know
        (:data:`_STAR_KNOWN`: ``load_model``, ``Model``...), unless the module binds them
        itself: a library's star import brings its public names, and these are among them."""
        libraries = [base for base in self.star_imports if is_tensorflow(base) or is_keras(base)]
        if not libraries:
            return
        own: set[str] = set()
        for stmt in tree.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                own.add(stmt.name)
            elif isinstance(stmt, ast.Assign):
                own.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
        for base in libraries:
            for known in _STAR_KNOWN:
                name = known.rpartition(".")[2]
                target = f"{base}.{name}"
                if name not in own and name not in self.imports and canonical(target) == known:
                    self.imports[name] = target

    def collect_imports(
        self, tree: ast.Module, import_nodes: list[ImportNode], aliases: dict[str, str]
    ) -> None:
        for node in import_nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.imports[alias.asname] = alias.name
                    else:
                        head = alias.name.partition(".")[0]
                        self.imports.setdefault(head, head)
            elif isinstance(node, ast.ImportFrom):
                base = self._absolute(node.module, node.level)
                for alias in node.names:
                    if alias.name != "*":
                        target = f"{base}.{alias.name}" if base else alias.name
                        self.imports[alias.asname or alias.name] = target
                    elif base and base not in self.star_imports:
                        self.star_imports.append(base)
        self._star_library_names(tree)
        self.imports.update(aliases)
        # Module-level aliases: ``tf_function = tf.function``, ``EPOCHS = 10``.
        for stmt in tree.body:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
                continue
            name = stmt.targets[0]
            if not isinstance(name, ast.Name):
                continue
            value = stmt.value
            if isinstance(value, ast.Constant) and type(value.value) is int:
                self.int_constants[name.id] = value.value
            elif isinstance(value, ast.Attribute | ast.Name):
                resolved = self.resolve(value)
                if resolved is not None:
                    self.imports[name.id] = resolved
            elif self._partial_tf_function(value) is not None:
                # ``tff = functools.partial(tf.function, reduce_retracing=True)``: a tf.function
                # decorator with preset keywords.
                self.imports[name.id] = TF_FUNCTION
                self.partials[name.id] = self._partial_tf_function(value) or []
        self._resolved = {}  # the imports are final: each node resolves the same from here on

    def _partial_tf_function(self, node: ast.expr) -> list[ast.keyword] | None:
        """The keywords of ``functools.partial(tf.function, **keywords)``; None otherwise."""
        if not (isinstance(node, ast.Call) and node.args):
            return None
        if self.resolve(node.func) != "functools.partial":
            return None
        return node.keywords if self.resolve(node.args[0]) == TF_FUNCTION else None

    # -- tf.function facts -----------------------------------------------------------------

    def tf_function_of_decorator(self, decorator: ast.expr) -> TfFunctionFacts | None:
        written = decorator
        decorator = self._cast_away(decorator)
        call = decorator if isinstance(decorator, ast.Call) else None
        func = call.func if call is not None else decorator
        keywords = call.keywords if call is not None else []
        partial = self._partial_tf_function(decorator)
        if partial is not None:
            keywords = partial
        elif self.resolve(func) != TF_FUNCTION:
            return None
        if isinstance(func, ast.Name) and call is None:
            keywords = self.partials.get(func.id, keywords)
        facts = self._tf_function_facts(written, keywords)
        # Report decorators at their ``@``, as libcst does.
        at = self._lines[decorator.lineno - 1].rfind("@", 0, facts.span.column - 1)
        span = replace(facts.span, column=at + 1) if at >= 0 else facts.span
        return replace(facts, span=span)

    def _cast_away(self, node: ast.expr) -> ast.expr:
        """The value ``typing.cast(T, value)`` returns: ``value`` itself (a decorator
        ``@cast(Function, tf.function)`` is ``tf.function`` for a type checker's sake)."""
        while (
            isinstance(node, ast.Call)
            and len(node.args) == 2
            and self.resolve(node.func) == TYPING_CAST
        ):
            node = node.args[1]
        return node

    def tf_function_of_call(self, node: ast.expr) -> TfFunctionFacts | None:
        """Facts for ``tf.function(fn, ...)`` (or ``func=fn``); None for anything else
        (including a bare decorator factory call ``tf.function(input_signature=...)``)."""
        if not isinstance(node, ast.Call) or _wrapped(node) is None:
            return None
        if self.resolve(node.func) != TF_FUNCTION:
            return None
        keywords = node.keywords
        if isinstance(node.func, ast.Name):
            keywords = [*self.partials.get(node.func.id, []), *keywords]
        return self._tf_function_facts(node, keywords)

    def _tf_function_facts(self, node: ast.expr, keywords: list[ast.keyword]) -> TfFunctionFacts:
        signature_size: int | None = None
        reduce_retracing = False
        for keyword in keywords:
            if keyword.arg == "input_signature":
                value = keyword.value
                if isinstance(value, ast.Constant) and value.value is None:
                    continue
                if isinstance(value, ast.List | ast.Tuple) and not any(
                    isinstance(element, ast.Starred) for element in value.elts
                ):
                    signature_size = len(value.elts)
                else:
                    signature_size = -1
            elif keyword.arg in {"reduce_retracing", "experimental_relax_shapes"}:
                value = keyword.value
                reduce_retracing = not (isinstance(value, ast.Constant) and not value.value)
        return TfFunctionFacts(self.span(node), signature_size, reduce_retracing)

    def function_facts(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, prefix: str, is_method: bool
    ) -> FunctionFacts:
        tf_function = self._decorated_tf_function(node)
        params = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
        is_static = any(_name_of(d) == "staticmethod" for d in node.decorator_list)
        if is_method and params and not is_static:
            params = params[1:]
        params += [a.arg for a in node.args.kwonlyargs]
        creates: list[Span] = []
        defined: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        local: dict[str, TfFunctionFacts] = {}
        generator = False
        own = self.own_nodes(node)
        kept = _called_or_stored(own)
        for inner in own:
            if isinstance(inner, ast.Yield | ast.YieldFrom):
                generator = True
            elif isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef):
                nested = self._decorated_tf_function(inner)
                if nested is not None:
                    local[inner.name] = nested
                    creates.append(nested.span)
                    defined[inner.name] = inner
                elif tf_function is None and (inner.name in kept or self._registered(inner)):
                    # A helper defined inside the function and called or kept there (a
                    # closure), or handed to a decorator (an app factory's ``@app.route``): a
                    # function of its own, ``outer.<locals>.inner`` as Python names it. One
                    # only returned or handed on is not followed (most of a library's nested
                    # functions, which would cost the solver for little), nor one only wrapped
                    # (``@functools.wraps(f)``: the decorator returns it, to be returned).
                    facts = self.function_facts(inner, f"{prefix}{node.name}{LOCALS}", False)
                    self.functions.setdefault(facts.qualname, facts)
            elif isinstance(inner, ast.Call):
                made = self.tf_function_of_call(inner)
                wrapped = _wrapped(inner)
                if made is not None and wrapped is not None:
                    creates.append(made.span)
                    self._note_traced(wrapped, prefix)
            elif isinstance(inner, ast.Assign) and len(inner.targets) == 1:
                made = self.tf_function_of_call(inner.value)
                if made is not None and isinstance(inner.targets[0], ast.Name):
                    local[inner.targets[0].id] = made
        if tf_function is not None:
            # Inside a tf.function, nested ones are created only while it traces.
            creates.clear()
        body = collect_body(
            own, self.resolve, self.span, node.args, graph_code=self.graph_code, top=node.body
        )
        if defined:
            # A nested ``@tf.function`` traces where it is used: one never used, or used only
            # on the first call, makes no new trace per call.
            uses = _traced_uses(node, defined)
            traced_per_call = {
                local[name].span
                for name, places in uses.items()
                if any(not body.runs_once(self.span(place)) for place in places)
            }
            defined_spans = {local[name].span for name in defined}
            creates = [c for c in creates if c not in defined_spans or c in traced_per_call]
        first_line = node.decorator_list[0].lineno if node.decorator_list else node.lineno
        return FunctionFacts(
            qualname=f"{prefix}{node.name}",
            span=self.span(node),
            first_line=first_line,
            params=tuple(params),
            star=node.args.vararg.arg if node.args.vararg else None,
            is_method=is_method and not is_static,
            is_property=any(_name_of(d) in _PROPERTIES for d in node.decorator_list),
            tf_function=tf_function,
            creates_tf_function=tuple(creates),
            local_tf_functions=local,
            body=body,
            generator=generator,
            dtype_uses=parameter_dtypes(own, params, self.resolve) if params else {},
            decorators=tuple(from_ast(d) for d in node.decorator_list),
            memoized=any(
                self.resolve(d.func if isinstance(d, ast.Call) else d) in MEMOIZERS
                for d in node.decorator_list
            ),
            positional=tuple(a.arg for a in (*node.args.posonlyargs, *node.args.args)),
            required=_required(node.args),
            abstract=_abstract(node),
        )

    def _registered(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """Whether a decorator hands ``node`` to something other than ``functools.wraps``."""
        return any(
            self.resolve(d.func if isinstance(d, ast.Call) else d) != _WRAPS
            for d in node.decorator_list
        )

    def _decorated_tf_function(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef
    ) -> TfFunctionFacts | None:
        for decorator in node.decorator_list:
            facts = self.tf_function_of_decorator(decorator)
            if facts is not None:
                return facts
        return None

    def _note_traced(self, wrapped: ast.expr, class_prefix: str) -> None:
        """Remember that ``tf.function(wrapped)`` traces a function of this module."""
        if isinstance(wrapped, ast.Name):
            self.traced.add(wrapped.id)
        elif (
            isinstance(wrapped, ast.Attribute)
            and isinstance(wrapped.value, ast.Name)
            and wrapped.value.id == "self"
        ):
            self.traced.add(f"{class_prefix}{wrapped.attr}")

    def collect_definitions(self, tree: ast.Module) -> None:
        for stmt in tree.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                facts = self.function_facts(stmt, "", is_method=False)
                self.functions[facts.qualname] = facts
            elif isinstance(stmt, ast.ClassDef):
                self._collect_class(stmt)
            elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target = stmt.targets[0]
                made = self.tf_function_of_call(stmt.value)
                wrapped = _wrapped(stmt.value) if isinstance(stmt.value, ast.Call) else None
                if isinstance(target, ast.Name) and made is not None and wrapped is not None:
                    self.tf_function_names[target.id] = made
                    self._note_traced(wrapped, "")
        for node in _module_lambdas(tree):
            facts = self.function_facts(_as_function(node), "", is_method=False)
            self.functions[facts.qualname] = facts

    def _collect_class(self, node: ast.ClassDef) -> None:
        bases = tuple(self.resolve(base) or _name_of(base) or "" for base in node.bases)
        methods: list[str] = []
        tf_functions: dict[str, TfFunctionFacts] = {}
        for stmt in node.body:
            if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            facts = self.function_facts(stmt, f"{node.name}.", is_method=True)
            self.functions[facts.qualname] = facts
            methods.append(stmt.name)
            if stmt.name in keras.TRACED_STEPS and keras.is_model_class(bases):
                self.keras_steps.append(facts.qualname)  # ``fit`` runs it in its tf.function
            if facts.tf_function is not None:
                tf_functions[stmt.name] = facts.tf_function
            for inner in self.own_nodes(stmt):
                if not (isinstance(inner, ast.Assign) and len(inner.targets) == 1):
                    continue
                target = inner.targets[0]
                made = self.tf_function_of_call(inner.value)
                if (
                    made is not None
                    and isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "self"
                ):
                    tf_functions[target.attr] = made
        own = [
            inner
            for stmt in node.body
            if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef)
            for inner in (stmt, *_own_nodes(stmt))
        ]
        self.classes[node.name] = ClassFacts(
            node.name,
            self.span(node),
            bases,
            tuple(methods),
            tf_functions,
            collect_body(own, self.resolve, self.span, graph_code=self.graph_code),
        )


_PROPERTIES = frozenset({"property", "cached_property"})
#: The decorator of a wrapper: it copies the wrapped function's name onto it, and returns it.
_WRAPS = "functools.wraps"

#: What a module that may compile its models to run eagerly says (``compile(...,
#: run_eagerly=True)``, ``model.run_eagerly = True``).
_RUN_EAGERLY = "run_eagerly"


def _called_or_stored(nodes: list[ast.AST]) -> frozenset[str]:
    """The names a function's own code calls (``inner()``), passes to a call (``fmin(fn=trial,
    ...)``) or stores in an attribute or an item (``self.save = save``)."""
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name):
                found.add(node.func.id)
            found.update(a.id for a in node.args if isinstance(a, ast.Name))
            found.update(k.value.id for k in node.keywords if isinstance(k.value, ast.Name))
        elif (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Name)
            and any(isinstance(t, ast.Attribute | ast.Subscript) for t in node.targets)
        ):
            found.add(node.value.id)
    return frozenset(found)


def _traced_uses(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    defined: dict[str, ast.FunctionDef | ast.AsyncFunctionDef],
) -> dict[str, list[ast.Name]]:
    """Where each of the ``@tf.function`` functions ``defined`` in ``node`` is used, and so
    may trace: its name read in ``node``'s code outside them, or wherever one of them that
    reads it is used (``get_real_features`` runs ``get_inception_features``: it traces when
    the other traces)."""
    outside: dict[str, list[ast.Name]] = {name: [] for name in defined}
    readers: dict[str, set[str]] = {name: set() for name in defined}
    todo: list[tuple[ast.AST, str | None]] = [(statement, None) for statement in node.body]
    while todo:
        current, within_def = todo.pop()
        if isinstance(current, ast.Name) and current.id in defined:
            if within_def is None:
                outside[current.id].append(current)
            elif within_def != current.id:
                readers[current.id].add(within_def)
        if (
            within_def is None
            and isinstance(current, ast.FunctionDef | ast.AsyncFunctionDef)
            and defined.get(current.name) is current
        ):
            within_def = current.name
        todo.extend((child, within_def) for child in ast.iter_child_nodes(current))
    uses: dict[str, list[ast.Name]] = {}
    for name in sorted(defined):
        seen = {name}
        work = [name]
        places: list[ast.Name] = []
        while work:
            current_name = work.pop()
            places += outside[current_name]
            for reader in sorted(readers[current_name] - seen):
                seen.add(reader)
                work.append(reader)
        uses[name] = places
    return uses


def _wrapped(call: ast.Call) -> ast.expr | None:
    """The function ``tf.function(fn)`` or ``tf.function(func=fn)`` wraps."""
    if call.args:
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg == "func"), None)


def _abstract(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """:attr:`FunctionFacts.abstract`."""
    if any(_name_of(d) == "abstractmethod" for d in node.decorator_list):
        return True
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    raised = body[0].exc
    return (
        _name_of(raised.func if isinstance(raised, ast.Call) else raised) == "NotImplementedError"
    )


def _name_of(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _module_lambdas(tree: ast.Module) -> list[ast.Lambda]:
    """The ``lambda``s of the module's own code whose every free name is a global: not inside
    a function, class, comprehension or other ``lambda`` (whose names they may read)."""
    found: list[ast.Lambda] = []
    stack: list[ast.AST] = [s for s in reversed(tree.body) if not isinstance(s, _SCOPES)]
    while stack:
        node = stack.pop()
        if type(node) is ast.Lambda:
            found.append(node)
        elif type(node) not in _NESTED and not is_comprehension(node):
            stack.extend(reversed(child_nodes(node)))
    return found


def _as_function(node: ast.Lambda) -> ast.FunctionDef:
    """``lambda args: value`` as the function it is, ``def <name>(args): return value``, named
    by :func:`~tflint_leaks.analysis.symbolic.lambda_name` and placed where the ``lambda`` is
    (only the index reads it: it is never compiled or unparsed)."""
    returned = ast.copy_location(ast.Return(value=node.body), node.body)
    function = ast.FunctionDef(
        name=lambda_name(node),
        args=node.args,
        body=[returned],
        decorator_list=[],
        returns=None,
        type_comment=None,
    )
    return ast.copy_location(function, node)


def _own_nodes(node: ast.AST) -> list[ast.AST]:
    """The nodes below ``node`` (a function's or class's body), in a fixed order, without
    descending into nested functions, lambdas or classes (their own nodes are listed so
    callers can look at the definitions themselves). A list, built in one loop: this is the
    index's hot path."""
    found: list[ast.AST] = []
    stack: list[ast.AST] = list(node.body if isinstance(node, _SCOPES) else child_nodes(node))
    append, extend, pop = found.append, stack.extend, stack.pop
    while stack:
        current = pop()
        append(current)
        if type(current) not in _NESTED:
            extend(child_nodes(current))
    return found


_SCOPES = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
_NESTED = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda})


def _module_nodes(tree: ast.Module) -> Iterator[ast.AST]:
    """The module's own code in source order: every statement outside functions and classes."""
    for stmt in tree.body:
        yield stmt
        if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield from _own_nodes(stmt)


def _switches(builder: IndexBuilder, body: Body, switches: frozenset[str]) -> bool:
    """The module's code (its functions' too) calls one of TensorFlow's ``switches``."""
    return any(
        calls_tensorflow(builder.imports, site.call, switches)
        for facts in (body, *(f.body for f in builder.functions.values()))
        for site in facts.calls
    )


#: The library names a star import of their module binds, for the rules (canonical names).
_STAR_KNOWN = tuple(
    sorted(
        keras.MODEL_CLASSES
        | keras.MODEL_LOADERS
        | keras.DATASET_SOURCES
        | keras.CLEAR_SESSION
        | {TF_FUNCTION, GRADIENT_TAPE}
    )
)


def _functions_eagerly(builder: IndexBuilder, body: Body) -> bool:
    """The module's own code (not its functions': a switch there is a debugging option
    someone turns on) calls ``tf.config.run_functions_eagerly(True)`` (or its experimental
    name) with the literal ``True``."""
    return any(
        calls_tensorflow(builder.imports, site.call, FUNCTIONS_EAGERLY_SWITCHES)
        and len(site.call.positional) == 1
        and site.call.positional[0] == literal("true")
        for site in body.calls
    )


#: What only graph mode can build: with eager execution on, ``tf.compat.v1.placeholder``
#: raises (TensorFlow 2.21: "tf.placeholder() is not compatible with eager execution").
_GRAPH_ONLY = frozenset({"placeholder"})


def _placeholders_at_import(builder: IndexBuilder, body: Body) -> bool:
    """The module's own code builds a placeholder where no graph is the default (outside its
    :attr:`~.facts.Body.graph_blocks`): importing it gets past that line only with eager
    execution off, so what runs after it (its functions, its later loops) runs in graph mode,
    whatever TensorFlow the project pins."""
    return any(
        calls_tensorflow(builder.imports, site.call, _GRAPH_ONLY)
        and not body.in_graph_block(site.span)
        for site in body.calls
    )


def _bound(builder: IndexBuilder, body: Body) -> frozenset[str]:
    """The names the module binds itself: its functions, classes and module-level targets."""
    return frozenset([*builder.functions, *builder.classes, *(a.target for a in body.assigns)])


def _uses_compat(builder: IndexBuilder, tree: ast.Module) -> bool:
    """The module's code imports or calls ``tf.compat.v1`` (or ``v2``): code that TensorFlow 2
    runs, written or ported to run there."""
    if any(target.startswith(_COMPAT) for target in builder.imports.values()):
        return True
    return any(name.startswith(_COMPAT) for name in _tensorflow_calls(builder, tree))


def _tensorflow_calls(builder: IndexBuilder, tree: ast.Module) -> Iterator[str]:
    """What every call of the module's own code and of its functions' bodies calls, by its
    canonical name, when the module imports TensorFlow (nothing else can name a TensorFlow
    function): read from the nodes themselves, as the calls the facts keep leave most
    TensorFlow calls out."""
    if not any(target.split(".")[0] == "tensorflow" for target in builder.imports.values()):
        return
    for nodes in (_module_nodes(tree), *builder.own.values()):
        for node in nodes:
            if isinstance(node, ast.Call):
                yield builder.resolve(node.func) or ""


_COMPAT = "tensorflow.compat."


def _uses_tf1_only(builder: IndexBuilder, tree: ast.Module) -> bool:
    """The module's code calls what only TensorFlow 1 has at that name (not through
    ``tf.compat.v1``): read from every call of its own code and of its functions' bodies
    (:func:`_tensorflow_calls`); or it imports such a module unconditionally (``from
    tensorflow.contrib import slim`` at the top level, not inside a ``try`` that falls back),
    which fails on TensorFlow 2."""
    if not any(target.split(".")[0] == "tensorflow" for target in builder.imports.values()):
        return False
    if any(is_tf1_only(name) or is_tf1_only(f"{name}.") for name in _imported_modules(tree)):
        return True
    return any(is_tf1_only(name) for name in _tensorflow_calls(builder, tree))


def _traced_callees(
    builder: IndexBuilder, tree: ast.Module, source: str
) -> dict[str, tuple[str, ...]]:
    """The module's functions and methods that run only while a ``tf.function`` traces: each
    one that the module names somewhere (``self.forward_fn(...)`` in a method of its class, a
    function by its name), and only inside ``tf.function``s or functions that are themselves
    such (xuance's traced ``learn`` calls ``self.forward_fn``, whose reads are frozen too). A
    name used anywhere else (module-level code, a class body, ``obj.name`` of an object that
    may not be ``self``) runs eagerly there. Each with the ``tf.function``s whose traces run
    it, through such functions."""
    functions = builder.functions
    traced = {q for q, f in functions.items() if f.tf_function is not None} | builder.traced
    if not traced:
        return {}
    methods: dict[str, list[str]] = {}
    for qualname in functions:
        owner, _, name = qualname.rpartition(".")
        if owner:
            methods.setdefault(name, []).append(qualname)
    users: dict[str, set[str]] = {}
    if any(name.rpartition(".")[2] in source for name in EAGER_CALLBACKS):
        _note_callbacks(tree, builder, methods, users)
    below = _subclasses(tree)
    for statement in tree.body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            _note_users(statement, statement.name, (), functions, methods, users)
        elif isinstance(statement, ast.ClassDef):
            classes = (statement.name, *below.get(statement.name, ()))
            for inner in statement.body:
                user = _EAGER
                if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef):
                    user = f"{statement.name}.{inner.name}"
                _note_users(inner, user, classes, functions, methods, users)
        else:
            _note_users(statement, _EAGER, (), functions, methods, users)
    # The largest set of functions used only by ``tf.function``s and by each other (helpers
    # that call each other in a cycle included), then those a ``tf.function`` reaches.
    found = set(users) - traced
    changed = True
    while changed:
        changed = False
        for callee in sorted(found):
            if not users[callee] <= traced | found:
                found.discard(callee)
                changed = True
    roots = _roots(found, users)
    return {callee: reached for callee, reached in roots.items() if reached}


def _roots(found: set[str], users: dict[str, set[str]]) -> dict[str, tuple[str, ...]]:
    """For each function of ``found``, the ``tf.function``s whose traces run it: its callers
    that are not in ``found``, and theirs for those that are (sets that only grow, so the
    iteration ends, also around a cycle of helpers)."""
    roots: dict[str, set[str]] = {callee: set() for callee in found}
    changed = True
    while changed:
        changed = False
        for callee in sorted(found):
            reached = roots[callee].union(
                *(roots[caller] if caller in found else {caller} for caller in users[callee])
            )
            if reached != roots[callee]:
                roots[callee] = reached
                changed = True
    return {callee: tuple(sorted(reached)) for callee, reached in roots.items()}


#: The user of a name in code that runs eagerly (module-level code, a class body).
_EAGER = "<eager>"


def _note_callbacks(
    tree: ast.Module,
    builder: IndexBuilder,
    methods: dict[str, list[str]],
    users: dict[str, set[str]],
) -> None:
    """A function handed to ``tf.py_function`` or ``tf.numpy_function`` (its first argument,
    ``helper``, or ``self.helper``: a method of that name) runs eagerly on every call, even
    from a ``tf.function``."""
    for node in walk(tree):
        if not (isinstance(node, ast.Call) and builder.resolve(node.func) in EAGER_CALLBACKS):
            continue
        handed = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "func")]
        for callback in handed:
            name = dotted_ast(callback) or ""
            if name.startswith("self."):
                handed_functions = methods.get(name[5:], [])
            else:
                handed_functions = [name] if name in builder.functions else []
            for qualname in handed_functions:
                users.setdefault(qualname, set()).add(_EAGER)


def _note_users(
    node: ast.AST,
    user: str,
    classes: tuple[str, ...],
    functions: dict[str, FunctionFacts],
    methods: dict[str, list[str]],
    users: dict[str, set[str]],
) -> None:
    """Record ``user`` as a user of each module function ``node`` names, and of each method
    it names as ``self.name`` when its class (the first of ``classes``) defines one: that
    method and its overrides in the module's subclasses (the rest of ``classes``: ``self``
    may be one of theirs, as a base's ``tf.function`` calls the ``_sample`` a subclass
    implements); a method named through anything else (``agent.name``) may be any class's,
    used by code that may run eagerly."""
    for inner in walk(node):
        if isinstance(inner, ast.Name) and inner.id in functions:
            users.setdefault(inner.id, set()).add(user)
        elif isinstance(inner, ast.Attribute) and inner.attr in methods:
            own = [f"{klass}.{inner.attr}" for klass in classes]
            if (
                isinstance(inner.value, ast.Name)
                and inner.value.id == "self"
                and own
                and own[0] in functions
            ):
                for qualname in own:
                    if qualname in functions:
                        users.setdefault(qualname, set()).add(user)
            else:
                for qualname in methods[inner.attr]:
                    users.setdefault(qualname, set()).add(_EAGER)


def _subclasses(tree: ast.Module) -> dict[str, tuple[str, ...]]:
    """For each top-level class, the module's top-level classes that derive from it, directly
    or through one another (bases named by a plain name), sorted."""
    bases = {
        statement.name: {b.id for b in statement.bases if isinstance(b, ast.Name)}
        for statement in tree.body
        if isinstance(statement, ast.ClassDef)
    }
    below: dict[str, set[str]] = {name: set() for name in bases}
    changed = True
    while changed:
        changed = False
        for name, direct in bases.items():
            for base in direct & below.keys():
                found = {name} | below[name]
                if not found <= below[base]:
                    below[base] |= found
                    changed = True
    return {name: tuple(sorted(found - {name})) for name, found in below.items() if found}


def _imported_modules(tree: ast.Module) -> Iterator[str]:
    """What the module's top-level import statements import: ``a.b`` of ``import a.b``, ``a.b``
    and ``a.b.c`` of ``from a.b import c``."""
    for statement in tree.body:
        if isinstance(statement, ast.Import):
            yield from (alias.name for alias in statement.names)
        elif isinstance(statement, ast.ImportFrom) and statement.level == 0 and statement.module:
            yield statement.module
            yield from (f"{statement.module}.{alias.name}" for alias in statement.names)


def _imported_by_name(builder: IndexBuilder, body: Body) -> tuple[tuple[str, bool], ...]:
    """The names (or their constant starts) the module's ``importlib.import_module`` calls
    are given (:attr:`ModuleIndex.imported_by_name`)."""
    found: set[tuple[str, bool]] = set()
    for each in (body, *(f.body for f in builder.functions.values())):
        for site in each.calls:
            call = site.call
            func = call.func
            if func.op is not Op.REF or not call.positional:
                continue
            if resolve_dotted(func.text, builder.imports) != IMPORT_MODULE:
                continue
            name = call.positional[0]
            whole = string_text(name)
            if whole is not None:
                found.add((whole, True))
                continue
            first = name.parts[0] if name.parts else None
            joined = (name.op is Op.BINARY and name.text == "+") or (
                name.op is Op.OTHER and name.text == "format"
            )
            if joined:
                start = string_text(first) if first is not None else None
                if start:
                    found.add((start, False))
    return tuple(sorted(found))


def calls_tensorflow(imports: dict[str, str], call: Expr, names: frozenset[str]) -> bool:
    """``call`` calls one of TensorFlow's functions ``names`` (by their last name), through a
    module's ``imports``."""
    func = call.func
    if func.op is not Op.REF:
        return False
    resolved = resolve_dotted(func.text, imports) or ""
    return is_tensorflow(resolved) and resolved.rpartition(".")[2] in names


def module_name_for(path: Path) -> tuple[str, bool, Path]:
    """The dotted module name of ``path``, whether it is a package ``__init__``, and the
    directory that would be on ``sys.path`` for that name to import. A directory whose name
    is no identifier is no package, whatever it holds (a checkout named
    ``TensorFlow-Advanced-Segmentation-Models`` with an ``__init__.py`` of its own): the
    import statement cannot name it, so it is where the names start."""
    path = path.resolve()
    is_package = path.name == "__init__.py"
    parts: list[str] = [] if is_package else [path.stem]
    directory = path.parent
    while (
        (directory / "__init__.py").is_file()
        and directory.parent != directory
        and directory.name.isidentifier()
    ):
        parts.append(directory.name)
        directory = directory.parent
    return ".".join(reversed(parts)), is_package, directory


_TENSORFLOW_MARKERS = ("tensorflow", "keras", "tf_keras")


def text_digest(text: str) -> str:
    """A short digest of a text (file contents, cache keys)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _required(arguments: ast.arguments) -> tuple[str, ...]:
    """The parameters that have no default value (positional ones, then keyword-only)."""
    positional = [*arguments.posonlyargs, *arguments.args]
    without = positional[: len(positional) - len(arguments.defaults)]
    keyword = [
        a for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True) if d is None
    ]
    return tuple(a.arg for a in (*without, *keyword))


def index_source(
    source: str,
    path: Path,
    tree: ast.Module | None = None,
    aliases: dict[str, str] | None = None,
    said: tuple[CodePin, ...] = (),
) -> ModuleIndex:
    """Index one module. Raises ``SyntaxError``/``ValueError``/``RecursionError`` when the
    source does not parse (the caller reports that). ``aliases``: imported names that stand
    for a library's (:meth:`~.project.ProjectIndex.library_aliases`), read as that name;
    ``said``: the versions the file says outside its Python (a notebook's
    ``%tensorflow_version 1.x``, :func:`~.eras.magic_pin`)."""
    module, is_package, root = module_name_for(path)
    if tree is None:
        tree = ast.parse(source, filename=str(path))
    units, import_nodes, owns = collect_units(tree)
    builder = IndexBuilder(split_lines(source), module, is_package, is_graph_code(units))
    builder.own.update(owns)
    builder.collect_imports(tree, import_nodes, aliases or {})
    tf1_only = _uses_tf1_only(builder, tree)
    # What only TensorFlow 1 has runs in graph mode too: the ops its functions build are kept
    # (spinningup's ``logx.py`` saves with ``tf.saved_model.simple_save`` for a loop elsewhere).
    builder.graph_code = builder.graph_code or tf1_only
    builder.collect_definitions(tree)
    body = collect_body(
        _module_nodes(tree),
        builder.resolve,
        builder.span,
        graph_code=builder.graph_code,
        statements=tree.body,
    )
    return ModuleIndex(
        path=str(path),
        module=module,
        is_package=is_package,
        root=str(root),
        imports=builder.imports,
        int_constants=builder.int_constants,
        functions=builder.functions,
        classes=builder.classes,
        tf_function_names=builder.tf_function_names,
        traced=dict(
            sorted(
                {
                    **dict.fromkeys(builder.traced, ()),
                    **_traced_callees(builder, tree, source),
                }.items()
            )
        ),
        uses_tensorflow=any(marker in source for marker in _TENSORFLOW_MARKERS),
        units=units,
        body=body,
        graph_mode=_switches(builder, body, GRAPH_MODE_SWITCHES),
        tf1_only=tf1_only and not _switches(builder, body, EAGER_MODE_SWITCHES),
        placeholders_at_import=_placeholders_at_import(builder, body),
        functions_eagerly=_functions_eagerly(builder, body),
        keras_steps=tuple(builder.keras_steps),
        run_eagerly=_RUN_EAGERLY in source,
        uses_compat=_uses_compat(builder, tree),
        ends=None
        if str(path).endswith(NOTEBOOK_SUFFIX)
        else end_of_script(tree, builder.resolve, _bound(builder, body)),
        eager_mode=_switches(builder, body, EAGER_MODE_SWITCHES),
        code_pins=code_pins(tree, source, builder.imports, _bound(builder, body)) + said,
        script_import=next(
            (
                builder.span(node)
                for node in tree.body
                if isinstance(node, ast.Import | ast.ImportFrom) and _imports(node, SCRIPT_PACKAGES)
            ),
            None,
        ),
        imported_by_name=_imported_by_name(builder, body),
        star_imports=tuple(builder.star_imports),
        digest=text_digest(source),
    )


def with_imports(module: ModuleIndex, aliases: dict[str, str]) -> ModuleIndex:
    """``module`` with the imported names ``aliases`` gives read as those names (library names
    passed on by project re-exports), for the facts computed from imports when asked."""
    uses = module.uses_tensorflow or any(
        marker in target for target in aliases.values() for marker in _TENSORFLOW_MARKERS
    )
    return replace(module, imports={**module.imports, **aliases}, uses_tensorflow=uses)


def _imports(node: ast.Import | ast.ImportFrom, packages: frozenset[str]) -> bool:
    """The statement imports one of ``packages`` (or a module of one)."""
    if isinstance(node, ast.Import):
        return any(alias.name.split(".")[0] in packages for alias in node.names)
    return node.level == 0 and (node.module or "").split(".")[0] in packages
