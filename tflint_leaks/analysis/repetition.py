"""Which project functions a framework calls many times: the table of
:mod:`.entry_points` matched against the project.

:func:`entry_point` answers for one function (its decorators, its class's bases, its module,
or a call anywhere in the project that hands it to a framework, with the count the call gives:
``n_trials=100``); :func:`entry_functions` for a whole module (the relevance filter keeps them
for the loop rules). Nothing here runs or imports project code: names are canonical
(:mod:`.names`), values the solver's.
"""

from __future__ import annotations

import ast
import weakref
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING

from tflint_leaks.analysis.effects import EffectKind
from tflint_leaks.analysis.entry_points import ENTRY_POINTS, Form, Row
from tflint_leaks.analysis.facts import Body, Span
from tflint_leaks.analysis.index import LOCALS
from tflint_leaks.analysis.lattice import FunctionRef, Kind
from tflint_leaks.analysis.names import CALLABLE_WRAPPERS, resolve_dotted
from tflint_leaks.analysis.symbolic import Expr, Op, from_ast
from tflint_leaks.source import NOTEBOOK_SUFFIX, SourceError, read_source

if TYPE_CHECKING:
    from tflint_leaks.analysis.effects import Effect
    from tflint_leaks.analysis.index import ClassFacts, ModuleIndex
    from tflint_leaks.analysis.inference import Where
    from tflint_leaks.analysis.program import Program
    from tflint_leaks.analysis.project import ProjectIndex


@dataclass(frozen=True)
class EntryPoint:
    """A function a framework calls many times."""

    row: Row
    #: How many calls, when the registration says (``n_trials=100``).
    count: int | None = None
    #: Where the framework is told: the registering call or the class (None with
    #: ``decorator``), in ``path``.
    place: Span | None = None
    path: str | None = None
    #: DECORATOR: the index of the decorator among the function's.
    decorator: int | None = None
    #: ARGUMENT: the registering call is in its module's own code, not in a function: it
    #: hands over the definition of the name made last before it.
    module_code: bool = False
    #: ARGUMENT: the calls of module code (path, place) that pass the function to the
    #: function that registers it, handing over the definition made last before each.
    passed_at: tuple[tuple[str, Span], ...] = ()
    #: ARGUMENT: the registration hands the framework a callable it calls after each call
    #: that calls ``clear_session()`` (:attr:`Row.after_each`: ``callbacks=[lambda study,
    #: trial: clear_session()]``).
    cleared: bool = False

    @property
    def framework(self) -> str:
        return self.row.framework

    @property
    def unit(self) -> str:
        return self.row.unit

    @property
    def what(self) -> str:
        return self.row.what

    @property
    def clears_session(self) -> bool:
        return self.row.clears_session or self.cleared


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatchcase(name, pattern) for pattern in patterns)


# -- the function the walker is in ---------------------------------------------------------------


def entry_point(
    program: Program, module: ModuleIndex, qualname: str, line: int | None = None
) -> EntryPoint | None:
    """The framework that calls the project function ``qualname`` of ``module`` many times,
    if one does: by its decorators, its class's bases, its module (a Django view), or a call
    anywhere in the project that hands it to a framework. ``line``: which definition, when the
    module defines the name more than once (a notebook's ``objective`` of each study): a call
    in the module's own code hands over the one made last before it."""
    function = module.functions.get(qualname)
    if function is None:
        return None
    project = program.project
    for index, decorator in enumerate(function.decorators):
        callee = decorator.func if decorator.op is Op.CALL else decorator
        if callee.op is not Op.REF:
            continue
        name = canonical_name(callee.text, module, project, _enclosing(module, qualname))
        for row in ENTRY_POINTS:
            if row.form is Form.DECORATOR and _matches(name, row.names):
                return EntryPoint(row, decorator=index)
    owner, _, method = qualname.rpartition(".")
    klass = module.classes.get(owner) if owner else None
    if klass is not None:
        found = _method_entry(project, module, klass, method)
        if found is not None:
            return found
    if (
        not owner
        and function.params[:1] == ("request",)
        and (Path(module.path).name == "views.py" or Path(module.path).parent.name == "views")
    ):
        return EntryPoint(next(r for r in ENTRY_POINTS if r.form is Form.VIEWS))
    handed = registrations(program).get(FunctionRef(module.path, qualname), ())
    return next((entry for entry in handed if _hands(entry, module, qualname, line)), None)


def _hands(entry: EntryPoint, module: ModuleIndex, qualname: str, line: int | None) -> bool:
    """Whether the registration ``entry`` hands over the definition of ``qualname`` on
    ``line`` (any definition: None): the one made last before a call of module code that
    registers it or passes it on."""
    places = [p for path, p in entry.passed_at if path == module.path]
    if entry.module_code and entry.path == module.path and entry.place is not None:
        places.append(entry.place)
    if line is None or not places:
        return True
    starts = [u.start for u in module.units.functions if u.qualname == qualname]
    for place in places:
        before = [start for start in starts if start < place.line]
        if not before or max(before) == line:
            return True
    return False


def script_entry(program: Program, module: ModuleIndex) -> EntryPoint | None:
    """The framework that runs ``module``'s own code again and again (a Streamlit script),
    if one does: the module imports the row's package and no project module imports it. A
    notebook is not such a script: ``streamlit run`` takes ".py" files only ("Streamlit
    requires raw Python (.py) files, not .ipynb": streamlit/streamlit#671); its cells run when
    its reader runs them."""
    place = module.script_import
    if place is None or module.path.endswith(NOTEBOOK_SUFFIX) or program.project.imported(module):
        return None
    row = next(row for row in ENTRY_POINTS if row.form is Form.SCRIPT and _imported_in(row, module))
    return EntryPoint(row, place=place, path=module.path)


def _imported_in(row: Row, module: ModuleIndex) -> bool:
    return any(target.split(".")[0] in row.names for target in module.imports.values())


def entry_functions(program: Program, module: ModuleIndex) -> frozenset[str]:
    """The qualified names of ``module``'s functions and methods that are entry points, and
    ``""`` when its module-level code is one (:func:`script_entry`)."""
    found = {q for q in module.functions if entry_point(program, module, q) is not None}
    if script_entry(program, module) is not None:
        found.add("")
    return frozenset(found)


def _method_entry(
    project: ProjectIndex, module: ModuleIndex, klass: ClassFacts, method: str
) -> EntryPoint | None:
    bases = [base for _, owner in project.mro(module, klass) for base in owner.bases]
    for row in ENTRY_POINTS:
        if row.form is not Form.METHOD:
            continue
        public = "*" in row.methods and not method.startswith("_")
        if (public or method in row.methods) and any(_matches(b, row.names) for b in bases):
            return EntryPoint(row, place=klass.span, path=module.path)
    return None


def _enclosing(module: ModuleIndex, qualname: str) -> tuple[Body, ...]:
    """The bodies of the functions ``qualname`` is nested in, innermost first (an app
    factory's ``create_app`` for its routes: ``create_app.<locals>.predict``)."""
    bodies: list[Body] = []
    outer, found, _ = qualname.rpartition(LOCALS)
    while found:
        function = module.functions.get(outer)
        if function is not None:
            bodies.append(function.body)
        outer, found, _ = outer.rpartition(LOCALS)
    return tuple(bodies)


def canonical_name(
    text: str, module: ModuleIndex, project: ProjectIndex, scopes: tuple[Body, ...] = ()
) -> str:
    """The canonical name of a dotted expression of ``module``, where a name bound to a call
    stands for an instance of what it calls (``app = Flask(__name__)``: ``app.route`` is
    ``flask.Flask.route``), through the project's imports. The name is looked up in
    ``scopes`` (the bodies of the functions the expression is in, innermost first) before the
    module's own code."""
    for _ in range(4):  # project modules re-exporting an instance; deeper is not followed
        head, dot, rest = text.partition(".")
        local = next((a.value for body in scopes for a in body.assigns if a.target == head), None)
        if local is not None:
            if local.op is not Op.CALL or local.func.op is not Op.REF:
                break
            text, scopes = local.func.text + dot + rest, ()
            continue
        if head in module.imports:
            found = project.global_of(head, module)
            if found is None:
                break
            module, text = found.module, ".".join([found.name, *found.attributes]) + dot + rest
            continue
        value = next((a.value for a in module.body.assigns if a.target == head), None)
        if value is None or value.op is not Op.CALL or value.func.op is not Op.REF:
            break
        text = value.func.text + dot + rest
    return resolve_dotted(text, module.imports) or text


# -- functions handed to a framework -------------------------------------------------------------


_REGISTRATIONS: weakref.WeakKeyDictionary[Program, dict[FunctionRef, tuple[EntryPoint, ...]]] = (
    weakref.WeakKeyDictionary()
)


def registrations(program: Program) -> dict[FunctionRef, tuple[EntryPoint, ...]]:
    """Every project function that some call of the project hands to a framework (an
    ARGUMENT row), with those calls in the order of their places; computed once per
    program."""
    found = _REGISTRATIONS.get(program)
    if found is None:
        found = _REGISTRATIONS[program] = _registrations(program)
    return found


def _registrations(program: Program) -> dict[FunctionRef, tuple[EntryPoint, ...]]:
    inference = program.inference
    table = inference.calls_named()
    rows: dict[str, list[Row]] = {}
    for row in ENTRY_POINTS:
        if row.form is Form.ARGUMENT:
            for pattern in row.names:
                rows.setdefault(pattern.rpartition(".")[2], []).append(row)
    found: dict[FunctionRef, list[EntryPoint]] = {}
    for last, candidates in sorted(rows.items()):
        for site in table.get(last, ()):
            call, where = inference.site(site)
            name = _callee(call.func, where.module, program.project)
            for row in candidates:
                if name is None or not _matches(name, row.names):
                    continue
                if not _registers(row, call, where, program.project):
                    continue
                span = where.body.calls[site[2]].span
                argument = _handed_argument(call, row, where)
                passed = _passed_at(program, argument, where)
                for function in _handed(program, argument, where):
                    loops = _loops_around(program, where.module.path, span)
                    registrations = _runs(program, loops, where)
                    repeats = _repeats(row, call, where, function)
                    if row.once and registrations == 1 and not repeats:
                        continue
                    per = 1 if row.once and not repeats else _count(program, call, row, where)
                    # Registered again by a loop: the total is the registrations' count times
                    # each one's (None when either is not known).
                    count = None if registrations is None or per is None else registrations * per
                    entry = EntryPoint(
                        row,
                        count,
                        span,
                        where.module.path,
                        module_code=where.function is None,
                        passed_at=passed,
                        cleared=_clears_after(program, call, row, where),
                    )
                    found.setdefault(function, []).append(entry)
    return {function: tuple(sorted(entries, key=_place_of)) for function, entries in found.items()}


def _place_of(entry: EntryPoint) -> tuple[str, int, int]:
    place = entry.place
    return (entry.path or "", place.line if place else 0, place.column if place else 0)


def _callee(func: Expr, module: ModuleIndex, project: ProjectIndex) -> str | None:
    """A callee's canonical name; a chain of calls reads ``schedule.every().minutes.do``."""
    parts: list[str] = []
    while func.op is not Op.REF:
        if func.op not in {Op.ATTR, Op.CALL}:
            return None
        parts.append("()" if func.op is Op.CALL else f".{func.text}")
        func = func.parts[0]
    return canonical_name(func.text, module, project) + "".join(reversed(parts))


def _registers(row: Row, call: Expr, where: Where, project: ProjectIndex) -> bool:
    module = where.module
    if row.package and not _made_by(row.package, call, where, project):
        return False
    if row.with_call:
        return _calls_one_of(module, row.with_call)
    return True


def _calls_one_of(module: ModuleIndex, patterns: tuple[str, ...]) -> bool:
    """``module`` calls, anywhere, a library function named by one of ``patterns``."""
    return any(
        site.call.func.op is Op.REF
        and _matches(resolve_dotted(site.call.func.text, module.imports) or "", patterns)
        for body in _bodies(module)
        for site in body.calls
    )


def _made_by(package: str, call: Expr, where: Where, project: ProjectIndex) -> bool:
    """A method call (``study.optimize(...)``) whose receiver is made by ``package``: bound,
    in the function, in its class's ``self.x = ...`` or at module level, to a call of it
    (``study = optuna.create_study()``), or such a call itself. A receiver of unknown origin,
    or a project object (a wrapper with its own ``optimize``), is not the framework's."""
    method = call.method
    if method is None:
        return False
    receiver: Expr | None = method[0]
    for _ in range(4):  # ``app.router`` is bound through ``app``; deeper is not followed
        if receiver is None:
            return False
        if receiver.op is Op.CALL:
            made = _callee(receiver.func, where.module, project) or ""
            return made == package or made.startswith(f"{package}.")
        if receiver.op is not Op.REF:
            return False
        receiver = _binding(receiver.text, where)
    return False


def _binding(text: str, where: Where) -> Expr | None:
    """What the dotted name ``text`` (its head, or ``self.x``) is assigned where it is read."""
    head, _, rest = text.partition(".")
    name = f"self.{rest.partition('.')[0]}" if head == "self" else head
    bodies = [where.body]
    klass = where.klass
    if name.startswith("self.") and klass is not None:
        bodies = [
            function.body
            for method in klass.methods
            if (function := where.module.functions.get(f"{klass.name}.{method}")) is not None
        ]
    elif where.function is not None:
        bodies.append(where.module.body)
    return next((a.value for body in bodies for a in body.assigns if a.target == name), None)


def _bodies(module: ModuleIndex) -> list[Body]:
    return [module.body, *(f.body for f in module.functions.values())]


def _handed_argument(call: Expr, row: Row, where: Where) -> Expr | None:
    """What a registering call hands over (the function inside a ``functools.partial``, Ray
    Tune's ``with_parameters`` and ``with_resources``: :data:`~.names.CALLABLE_WRAPPERS`,
    however deep)."""
    position, keyword = row.argument
    argument = call.keyword(keyword) if position < 0 else call.argument(position, keyword)
    while argument is not None and argument.op is Op.CALL and argument.func.op is Op.REF:
        wrapper = resolve_dotted(argument.func.text, where.module.imports)
        if wrapper not in CALLABLE_WRAPPERS or not argument.positional:
            break
        argument = argument.positional[0]
    return argument


def _handed(program: Program, argument: Expr | None, where: Where) -> list[FunctionRef]:
    """The project functions a registering call hands over."""
    if argument is None:
        return []
    value = program.value(argument, where)
    return sorted(a.ref for a in value.atoms_of(Kind.FUNCTION) if isinstance(a.ref, FunctionRef))


def _clears_after(program: Program, call: Expr, row: Row, where: Where) -> bool:
    """The registering call hands the framework, to call after each call, a project function
    (a lambda among them) that calls ``clear_session()`` (:attr:`Row.after_each`)."""
    if row.after_each is None:
        return False
    argument = call.argument(*row.after_each)
    if argument is None:
        return False
    handed = argument.parts if argument.op is Op.DISPLAY else (argument,)
    return any(
        effect.kind is EffectKind.CLEAR_SESSION
        for item in handed
        for function in _handed(program, item, where)
        for effect in program.summary(function)
    )


def _passed_at(
    program: Program, argument: Expr | None, where: Where
) -> tuple[tuple[str, Span], ...]:
    """Where module code passes the function a registering call hands over as its function's
    parameter (``self.study.optimize(func)`` in a wrapper that a notebook calls with its
    ``objective``): the file and place of each such call."""
    function = where.function
    if argument is None or argument.op is not Op.REF or function is None:
        return ()
    if argument.text not in function.params:
        return ()
    return tuple(
        (site[0], program.site_span(site))
        for site in program.callers(FunctionRef(where.module.path, function.qualname))
        if not site[1]  # in module code
    )


def _count(program: Program, call: Expr, row: Row, where: Where) -> int | None:
    if row.count_unknown_with and any(
        _calls_one_of(module, row.count_unknown_with) for module in program.project.modules()
    ):
        return None
    total = 1
    for position, keyword, default in row.count:
        argument = call.keyword(keyword) if position < 0 else call.argument(position, keyword)
        if argument is None:
            if default is None:
                return None
            total *= default
            continue
        ints = program.value(argument, where).ints
        if not ints or min(ints) < 0:
            return None  # Ray Tune's ``num_samples=-1``: trials without end
        total *= max(ints)
    return total if row.count else None


def _repeats(row: Row, call: Expr, where: Where, function: FunctionRef) -> bool:
    """A ``once`` registration outside a loop runs its function more than once: it passes the
    argument that makes it repeat, or is made by the function itself (a ``sched`` action
    scheduling itself again)."""
    if row.repeats_with is not None:
        position, keyword = row.repeats_with
        if call.argument(position, keyword) is not None:
            return True
    return function == FunctionRef(where.module.path, where.qualname)


#: The iterables of the loops of its own scope around a call, outermost first (None for a
#: ``while`` loop).
_Loops = tuple["Expr | None", ...]


#: For each program, the calls of each file that loops repeat (:func:`_calls_in_loops`).
_LOOPED: weakref.WeakKeyDictionary[Program, dict[str, dict[tuple[int, int], _Loops]]] = (
    weakref.WeakKeyDictionary()
)


def _loops_around(program: Program, path: str, span: Span) -> _Loops:
    """The loops of its own function that repeat the call at ``span`` (each file read once
    per program)."""
    looped = _LOOPED.setdefault(program, {})
    if path not in looped:
        looped[path] = _calls_in_loops(path)
    return looped[path].get((span.line, span.column), ())


def runs_inside(program: Program, effect: Effect) -> int | None:
    """How many times ``effect`` runs each time the first call of its chain runs: the product
    of the counts of the loops that repeat, in each function of the chain, the next call of
    the chain or the effect itself (``run_cv(cnn, 5)`` fitting a model in ``for fold in
    range(nfolds)``: 5); 1 when no loop does; None when a loop's count is not known."""
    total = 1
    for path, span, qualname in effect.places:
        module = program.inference.module(path)
        loops = _loops_around(program, path, span) if qualname in module.functions else ()
        if loops:
            count = _runs(program, loops, program.inference.where_of(module, qualname))
            if count is None:
                return None
            total *= count
    return total


def _runs(program: Program, loops: _Loops, where: Where) -> int | None:
    """How many times ``loops`` run what they enclose, at most: the product of their items'
    counts, a loop over what the model or the machine fixes (its variables, the devices:
    :attr:`~.lattice.Value.structural`) counted as one; None when one is not known."""
    total = 1
    for iterable in loops:
        if iterable is None:
            return None  # a ``while`` loop
        value = program.value(iterable, where)
        count = 1 if value.structural else value.bound
        if count is None:
            return None
        total *= count
    return total


def _calls_in_loops(path: str) -> dict[tuple[int, int], _Loops]:
    """The positions (line, 1-based column) of the calls of a Python file that a loop of their
    own scope repeats, with those loops (read with ``ast``; a notebook or an unreadable file
    has none)."""
    if not path.endswith(".py"):
        return {}
    try:
        tree = ast.parse(read_source(Path(path)))
    except (SourceError, SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    found: dict[tuple[int, int], _Loops] = {}
    stack: list[tuple[ast.AST, _Loops]] = [(tree, ())]
    while stack:
        node, loops = stack.pop()
        if isinstance(node, ast.Call) and loops:
            found[(node.lineno, node.col_offset + 1)] = loops
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            inner: _Loops = ()
        elif isinstance(node, ast.For | ast.AsyncFor):
            inner = (*loops, from_ast(node.iter))
        elif isinstance(node, ast.While):
            inner = (*loops, None)
        elif isinstance(node, _COMPREHENSIONS):
            inner = (*loops, *(from_ast(g.iter) for g in node.generators))
        else:
            inner = loops
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))
    return found


_COMPREHENSIONS = (
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
