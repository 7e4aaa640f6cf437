"""Cross-file lookups over every :class:`ModuleIndex` of the project: the static facts.

Modules are found by dotted name. A module that is imported but was not given on the command
line (pre-commit passes only the changed files) is looked up on disk next to the importer and
indexed. :meth:`ProjectIndex.close` does that for every import of every module, once, before
any question is asked, and freezes the project: from then on the set of modules is fixed, so
every question has the same answer whichever file asks it first and in whichever process.

Everything here follows chains with explicit worklists and visited sets: a re-export cycle
between a package's ``__init__`` and its modules, a class hierarchy thousands deep or a base
class that is its own ancestor end like any other lookup, without recursion.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from tflint_leaks.analysis import keras
from tflint_leaks.analysis.eras import (
    KERAS_BACKEND,
    KERAS_BEFORE_2_4,
    CodePin,
    framework_pins,
    imports_standalone_keras,
    imports_tensorflow,
)
from tflint_leaks.analysis.graph import GRAPH_MODE_SWITCHES
from tflint_leaks.analysis.index import (
    ClassFacts,
    FunctionFacts,
    ModuleIndex,
    TfFunctionFacts,
    calls_tensorflow,
    index_source,
)
from tflint_leaks.analysis.names import is_keras, is_numpy, is_tensorflow, resolve_dotted
from tflint_leaks.analysis.symbolic import Op, string_text
from tflint_leaks.frameworks import Frameworks, declared, distributes, project_root
from tflint_leaks.source import NOTEBOOK_SUFFIX, SourceError, read_source


@dataclass(frozen=True)
class Definition:
    """A project definition found by qualified name."""

    module: ModuleIndex
    function: FunctionFacts | None = None
    klass: ClassFacts | None = None
    #: The ``tf.function`` this name is, if it is one.
    tf_function: TfFunctionFacts | None = None


@dataclass(frozen=True)
class Global:
    """A module-level name of the project that a dotted name refers to: the module, the name
    there, and the attributes read from it (``models.policy.net``: ``models``, ``policy``,
    ``("net",)``)."""

    module: ModuleIndex
    name: str
    attributes: tuple[str, ...]


ClassDef = tuple[ModuleIndex, ClassFacts]


class ProjectIndex:
    def __init__(self, modules: Iterable[ModuleIndex] = ()) -> None:
        self._by_name: dict[str, list[ModuleIndex]] = {}
        self._by_path: dict[str, ModuleIndex] = {}
        self._missing: set[Path] = set()
        self._found: dict[tuple[str, str], ModuleIndex | None] = {}
        #: (name, the importer's package): :meth:`_in_package`'s answers.
        self._inside: dict[tuple[str, str], ModuleIndex | None] = {}
        self._dependencies: dict[str, list[ModuleIndex]] = {}
        #: (root, top-level name) pairs with neither a module nor a package on disk.
        self._absent: set[tuple[str, str]] = set()
        self._frozen = False
        self._mro: dict[tuple[str, str], tuple[ClassDef, ...]] = {}
        self._tensorflow: dict[str, bool] = {}
        #: The modules of a TensorFlow program (:meth:`in_tensorflow_program`; None: not
        #: asked yet).
        self._tensorflow_program: frozenset[str] | None = None
        self._eager_off: dict[str, bool] = {}
        self._bound: dict[str, frozenset[str]] = {}
        #: Whether any module's code pins a version (None: not asked yet).
        self._code_pins: bool | None = None
        #: Whether any module imports ``argparse`` (None: not asked yet).
        self._argparse: bool | None = None
        self._worlds: dict[tuple[str, Frameworks], Frameworks] = {}
        self._subclasses: dict[tuple[str, str], tuple[ClassDef, ...]] | None = None
        self._distributed: dict[str, bool] = {}
        #: The modules of each directory, sorted by path (None: not asked yet).
        self._directories: dict[str, list[ModuleIndex]] | None = None
        #: Whether any module says ``run_eagerly`` (None: not asked yet).
        self._run_eagerly: bool | None = None
        #: The paths of the modules another project module imports (None: not asked yet).
        self._imported: frozenset[str] | None = None
        #: :meth:`program_of`'s answers, by path, and what each script reaches (None: not
        #: asked yet).
        self._programs: dict[str, frozenset[str]] = {}
        self._scripts: list[frozenset[str]] | None = None
        for module in modules:
            self.add(module)

    def add(self, module: ModuleIndex) -> None:
        for name in _names_of(module):
            self._by_name.setdefault(name, []).append(module)
        self._by_path[module.path] = module
        self._found.clear()
        self._inside.clear()
        self._dependencies.clear()
        self._mro.clear()
        self._tensorflow.clear()
        self._tensorflow_program = None
        self._code_pins = None
        self._argparse = None
        self._directories = None
        self._run_eagerly = None
        self._imported = None
        self._programs.clear()
        self._scripts = None
        self._worlds.clear()
        self._subclasses = None

    def module_at(self, path: str) -> ModuleIndex | None:
        """The indexed module of a file."""
        return self._by_path.get(path)

    def modules(self) -> list[ModuleIndex]:
        """Every module, sorted by path."""
        return [self._by_path[path] for path in sorted(self._by_path)]

    def close(self) -> ProjectIndex:
        """Index every project module an indexed module imports (found on disk next to the
        importer), until none is left, then freeze the set of modules. Returns ``self``."""
        if self._frozen:
            return self
        done: set[str] = set()
        while True:
            todo = [path for path in sorted(self._by_path) if path not in done]
            if not todo:
                break
            for path in todo:
                done.add(path)
                self.dependencies(self._by_path[path])
        self._frozen = True
        return self

    def imports_argparse(self) -> bool:
        """Whether any module imports ``argparse``: without that, no value of the program is
        what ``ArgumentParser.parse_args()`` returns (a project module that re-exports it
        imports it itself)."""
        if self._argparse is None:
            self._argparse = any(
                target == "argparse" or target.startswith("argparse.")
                for module in self._by_path.values()
                for target in module.imports.values()
            )
        return self._argparse

    # -- modules -------------------------------------------------------------------------------

    def find_module(self, name: str, importer: ModuleIndex) -> ModuleIndex | None:
        key = (name, importer.root)
        if key not in self._found:
            self._found[key] = self._find_module(name, importer)
        found = self._found[key]
        if found is None and "." in importer.module:
            package = importer.module.rpartition(".")[0]
            inside = (name, package)
            if inside not in self._inside:
                self._inside[inside] = self._in_package(name, package, importer.root)
            found = self._inside[inside]
        return found

    def _in_package(self, name: str, package: str, root: str) -> ModuleIndex | None:
        """An absolute import naming no top-level module of the project, found inside one of
        the importer's enclosing packages, its own first: the program runs with that package's
        directory on its path (a script's own directory, or ``src/`` that a launcher appends:
        ``from chess_zero.agent import model`` in ``src/chess_zero/worker/evaluate.py``, where
        ``src`` has an ``__init__.py``). Never a TensorFlow, Keras or NumPy name."""
        head = name.partition(".")[0]
        if is_tensorflow(head) or is_keras(head) or is_numpy(head):
            return None
        while package:
            for candidate in self._by_name.get(f"{package}.{name}", ()):
                if candidate.root == root:
                    return candidate
            package = package.rpartition(".")[0]
        return None

    def _find_module(self, name: str, importer: ModuleIndex) -> ModuleIndex | None:
        candidates = self._by_name.get(name, [])
        for candidate in candidates:
            if candidate.root == importer.root:
                return candidate
        if len(candidates) == 1:
            return candidates[0]
        # Several (``Yolov2/model/model.py`` and ``Yolov3/model/model.py``): the one whose
        # directory that ``name`` is imported from holds the importer too, the nearest
        # (``Yolov3/predict/predict.py`` runs from ``Yolov3``), as a run from inside that
        # project imports it.
        importer_root = Path(importer.root)
        enclosing = [
            (base, c) for c in candidates if importer_root.is_relative_to(base := _base(c, name))
        ]
        if enclosing:
            return max(enclosing, key=lambda found: len(found[0].parts))[1]
        if self._frozen:
            return None
        return self._load_from_disk(name, Path(importer.root))

    def _load_from_disk(self, name: str, root: Path) -> ModuleIndex | None:
        head = name.partition(".")[0]
        if (str(root), head) in self._absent:
            return None
        if not ((root / head).is_dir() or (root / f"{head}.py").is_file()):
            # Nothing named like the top-level package here: an installed library.
            self._absent.add((str(root), head))
            return None
        relative = Path(*name.split("."))
        for path in (root / relative.with_suffix(".py"), root / relative / "__init__.py"):
            if path in self._missing or str(path) in self._by_path:
                continue
            try:
                source = read_source(path)
                module = index_source(source, path, ast.parse(source))
            except (SourceError, SyntaxError, ValueError, RecursionError, MemoryError):
                self._missing.add(path)
                continue
            self.add(module)
            return module
        return None

    # -- definitions ---------------------------------------------------------------------------

    def lookup(self, qualified: str, importer: ModuleIndex) -> Definition | None:
        """Find the project definition a fully qualified name refers to: a function, a class, a
        method (``pkg.mod.Class.method``), or a module-level ``name = tf.function(fn)``,
        following re-exports (``from .layers import Dense`` in a package ``__init__``)."""
        seen: set[tuple[str, str]] = set()
        while (qualified, importer.path) not in seen:
            seen.add((qualified, importer.path))
            found = self._split(qualified, importer)
            if found is None:
                return None
            module, rest = found
            definition = self._defined(module, rest)
            if definition is not None:
                return definition
            reexported = module.imports.get(rest[0])
            if reexported is None:
                return None
            qualified, importer = ".".join([reexported, *rest[1:]]), module
        return None  # a re-export cycle

    def local(self, module: ModuleIndex, dotted: str) -> Definition | None:
        """A definition of ``module`` itself (``step`` or ``Trainer.step``), or one it imports."""
        rest = dotted.split(".")
        definition = self._defined(module, rest)
        if definition is not None:
            return definition
        reexported = module.imports.get(rest[0])
        if reexported is None:
            return None
        return self.lookup(".".join([reexported, *rest[1:]]), module)

    def library_aliases(self, module: ModuleIndex) -> dict[str, str]:
        """The names ``module`` imports from project modules that only pass on a library's
        name (``from xuance.tensorflow import tf``, where that package's ``__init__`` does
        ``import tensorflow as tf``), each with the library name it ends at: ``{"tf":
        "tensorflow"}``. Followed through re-exports, at most :data:`MAX_REEXPORTS` of them,
        never round a cycle."""
        found: dict[str, str] = {}
        starred = self.star_names(module)
        for local, target in sorted({**starred, **module.imports}.items()):
            importer, name, seen = module, target, set()
            for _ in range(MAX_REEXPORTS):
                split = self._split(name, importer)
                if split is None or (split[0].path, name) in seen:
                    break
                seen.add((split[0].path, name))
                owner, rest = split
                passed = owner.imports.get(rest[0])
                if passed is None or self._defined(owner, rest[:1]) is not None:
                    break
                importer, name = owner, ".".join([passed, *rest[1:]])
            if name != target and self._split(name, importer) is None:
                found[local] = name
            elif local not in module.imports:
                found[local] = name  # a project name that a star import binds here
        return found

    def star_names(self, module: ModuleIndex) -> dict[str, str]:
        """The names ``from m import *`` binds in ``module`` for the project modules ``m`` it
        star-imports, each with what it names there (``{"get_model": "zoo.get_model", "tf":
        "zoo.tf"}``): a module's ``__all__`` when it lists literal strings, else its public
        names (its functions, classes, module-level assignments and imports, and what its own
        star imports bind, at most :data:`MAX_REEXPORTS` deep, never round a cycle). A later
        star import wins; what ``module`` defines or imports by name is its own."""
        own = self.bound_names(module)
        found: dict[str, str] = {}
        todo = [(name, module, 0) for name in module.star_imports]
        seen: set[str] = set()
        while todo:
            name, importer, depth = todo.pop(0)
            source = self.find_module(name, importer)
            if source is None or source.path in seen or source.path == module.path:
                continue
            seen.add(source.path)
            for exported in self._exported(source):
                if exported not in own:
                    found[exported] = f"{source.module}.{exported}"
            if depth + 1 < MAX_REEXPORTS:
                todo.extend((inner, source, depth + 1) for inner in source.star_imports)
        return found

    def bound_names(self, module: ModuleIndex) -> frozenset[str]:
        """The names the module's own code binds at its top level: its functions, classes and
        ``tf.function``\\ s, what it imports and what it assigns."""
        found = self._bound.get(module.path)
        if found is None:
            found = self._bound[module.path] = frozenset(
                {
                    *(q for q in module.functions if "." not in q),
                    *module.classes,
                    *module.tf_function_names,
                    *module.imports,
                    *(a.target for a in module.body.assigns if "." not in a.target),
                }
            )
        return found

    def _exported(self, module: ModuleIndex) -> list[str]:
        """The names ``from module import *`` binds (its own star imports aside): the literal
        strings of its ``__all__``, else every public name it binds at its top level."""
        listed = next((a.value for a in module.body.assigns if a.target == "__all__"), None)
        if listed is not None and listed.op is Op.DISPLAY and listed.text in {"list", "tuple"}:
            names = [string_text(part) for part in listed.parts]
            if all(name is not None for name in names):
                return [name for name in names if name is not None]
        return sorted(name for name in self.bound_names(module) if not name.startswith("_"))

    def _split(self, qualified: str, importer: ModuleIndex) -> tuple[ModuleIndex, list[str]] | None:
        """The project module a qualified name starts with (the longest that exists) and the
        rest of the name."""
        parts = qualified.split(".")
        for split in range(len(parts) - 1, 0, -1):
            module = self.find_module(".".join(parts[:split]), importer)
            if module is not None:
                return module, parts[split:]
        return None

    def _defined(self, module: ModuleIndex, rest: list[str]) -> Definition | None:
        head = rest[0]
        if len(rest) == 1:
            if head in module.tf_function_names:
                return Definition(module, tf_function=module.tf_function_names[head])
            function = module.functions.get(head)
            if function is not None:
                return Definition(module, function=function, tf_function=function.tf_function)
            klass = module.classes.get(head)
            if klass is not None:
                return Definition(module, klass=klass)
        elif len(rest) == 2 and head in module.classes:
            klass = module.classes[head]
            method = module.functions.get(f"{head}.{rest[1]}")
            tf_function = self.class_tf_functions(module, klass).get(rest[1])
            if method is not None or tf_function is not None:
                return Definition(module, function=method, klass=klass, tf_function=tf_function)
        return None

    def global_of(self, text: str, module: ModuleIndex) -> Global | None:
        """The project module-level name an imported dotted name (``models.policy.net``)
        refers to, following re-exports; None for a library or a cycle."""
        qualified = resolve_dotted(text, module.imports)
        seen: set[tuple[str, str]] = set()
        while qualified is not None and (qualified, module.path) not in seen:
            seen.add((qualified, module.path))
            found = self._split(qualified, module)
            if found is None:
                return None
            target, rest = found
            head = rest[0]
            bound = (
                head in target.functions
                or head in target.classes
                or head in target.tf_function_names
                or any(a.target == head for a in target.body.assigns)
                or any(a.target == head for a in target.body.annotations)
            )
            if bound or head not in target.imports:
                return Global(target, head, tuple(rest[1:]))
            qualified = resolve_dotted(".".join(rest), target.imports)
            module = target
        return None

    # -- classes -------------------------------------------------------------------------------

    def bases(self, module: ModuleIndex, klass: ClassFacts) -> list[ClassDef]:
        """The project classes a class names as its bases, in order."""
        found: list[ClassDef] = []
        for base in klass.bases:
            definition = self.lookup(base, module) if "." in base else self.local(module, base)
            if definition is not None and definition.klass is not None and not definition.function:
                found.append((definition.module, definition.klass))
        return found

    def mro(self, module: ModuleIndex, klass: ClassFacts) -> tuple[ClassDef, ...]:
        """The class and its project ancestors in Python's method resolution order (C3; where
        the bases admit none, depth first), the class first. A base that is its own ancestor
        is left out where it closes the cycle."""
        key = (module.path, klass.name)
        cached = self._mro.get(key)
        if cached is not None:
            return cached
        # Linearise every ancestor first, deepest first, with an explicit stack.
        on_path: set[tuple[str, str]] = {key}
        stack: list[tuple[ClassDef, Iterator[ClassDef]]] = [
            ((module, klass), iter(self.bases(module, klass)))
        ]
        while stack:
            current, bases = stack[-1]
            base = next(bases, None)
            if base is not None:
                base_key = (base[0].path, base[1].name)
                if base_key not in self._mro and base_key not in on_path:
                    on_path.add(base_key)
                    stack.append((base, iter(self.bases(*base))))
                continue
            stack.pop()
            current_key = (current[0].path, current[1].name)
            on_path.discard(current_key)
            parents = [self._mro[_key(b)] for b in self.bases(*current) if _key(b) in self._mro]
            if len(parents) == 1:
                self._mro[current_key] = (current, *parents[0])  # single inheritance
            else:
                self._mro[current_key] = (current, *_c3([list(p) for p in parents]))
        return self._mro[key]

    def subclasses(self, module: ModuleIndex, klass: ClassFacts) -> tuple[ClassDef, ...]:
        """The project classes that have ``klass`` among their ancestors (not itself), sorted."""
        if self._subclasses is None:
            table: dict[tuple[str, str], list[ClassDef]] = {}
            for owner in self.modules():
                for candidate in owner.classes.values():
                    for ancestor in self.mro(owner, candidate)[1:]:
                        table.setdefault(_key(ancestor), []).append((owner, candidate))
            self._subclasses = {key: tuple(found) for key, found in table.items()}
        return self._subclasses.get((module.path, klass.name), ())

    def class_tf_functions(
        self, module: ModuleIndex, klass: ClassFacts
    ) -> dict[str, TfFunctionFacts]:
        """``tf.function`` attributes of a class, including those inherited from project bases."""
        found: dict[str, TfFunctionFacts] = {}
        for _, owner in reversed(self.mro(module, klass)):
            found.update(owner.tf_functions)
        return found

    def is_model_class(self, module: ModuleIndex, klass: ClassFacts) -> bool:
        """Whether ``klass`` is a Keras model: it derives from ``keras.Model`` or
        ``keras.Sequential``, directly or through project bases."""
        return any(owner.is_keras_model for _, owner in self.mro(module, klass))

    def is_keras_class(self, module: ModuleIndex, klass: ClassFacts) -> bool:
        """Whether ``klass`` is a Keras layer or model: it derives from one, directly or
        through project bases (a callback is neither)."""
        return any(
            keras.is_layer_or_model_class(owner.bases) for _, owner in self.mro(module, klass)
        )

    def owns_variables(self, module: ModuleIndex, klass: ClassFacts) -> bool:
        """Whether instances of ``klass`` own variables: it is a Keras model or layer or a
        ``tf.Module``, directly or through project bases (:data:`~tflint_leaks.analysis.keras.
        VARIABLE_OWNERS`)."""
        return any(
            owner.is_keras_model or not keras.VARIABLE_OWNERS.isdisjoint(owner.bases)
            for _, owner in self.mro(module, klass)
        )

    def world(self, module: ModuleIndex, frameworks: Frameworks) -> Frameworks:
        """The TensorFlow and Keras a module runs: what its project's pin files say
        (``frameworks``) and what its own calls and those of the modules it imports, directly
        or through others, say (``Convolution2D(border_mode=...)``: Keras before 2.4; a call
        of ``xrange``: Python 2; :mod:`.eras`), and those of the modules of its directory: a
        helper beside notebooks whose saved output says "Using TensorFlow backend." runs on
        their Keras."""
        if self._code_pins is None:
            self._code_pins = any(found.code_pins for found in self._by_path.values())
        theano = frameworks.keras_on_theano
        beside = frameworks.python2 is not None or frameworks.theano_beside is not None
        if not self._code_pins and not beside and theano is None:
            return frameworks.documented()
        key = (module.path, frameworks)
        known = self._worlds.get(key)
        if known is not None:
            return known
        world = frameworks
        modules = sorted(self._reachable(module), key=lambda found: found.path)
        standalone = any(imports_standalone_keras(found.imports) for found in modules)
        pins = [
            (f"{found.path}:{pin.line}: {pin.evidence}", pin)
            for found in modules
            for pin in found.code_pins
        ]
        reached = {found.path for found in modules}
        pins += [
            (f"{found.path}:{pin.line}: {pin.evidence} (beside it)", pin)
            for found in self.beside(module)
            if found.path not in reached
            for pin in found.code_pins
            if pin.family != KERAS_BACKEND
        ]
        if frameworks.python2 is not None:
            python2 = CodePin("python", "<3", "Python 2 code beside it", 0)
            pins.append((f"{frameworks.python2}: {python2.evidence}", python2))
        if frameworks.theano_beside is not None:
            settings = CodePin("keras", KERAS_BEFORE_2_4, "Theano's settings beside it", 0)
            pins.append((f"{frameworks.theano_beside}: {settings.evidence}", settings))
        for where, pin in pins:
            for family, specifier in framework_pins(pin, standalone):
                world = world.constrained(family, declared(specifier), where)
        world = world.documented()
        if theano is not None and not any(imports_tensorflow(found.imports) for found in modules):
            world = replace(world, no_tensorflow=f"its Keras runs on Theano ({theano})")
        backend = next(
            (
                f"{pin.specifier} ({found.path}:{pin.line})"
                for found in modules
                for pin in found.code_pins
                if pin.family == KERAS_BACKEND
            ),
            None,
        )
        if backend is not None:
            world = replace(world, keras_backend=backend)
        self._worlds[key] = world
        return world

    def distributed(self, module: ModuleIndex) -> bool:
        """Whether a module belongs to a package its project distributes: its project's root
        (the one its pins are read from, :func:`~tflint_leaks.frameworks.project_root`) builds
        a distribution (:func:`~tflint_leaks.frameworks.distributes`). Code outside the project
        then calls its functions and builds its classes with values this project does not
        show."""
        directory = str(Path(module.path).parent)
        known = self._distributed.get(directory)
        if known is None:
            root = project_root(directory)
            known = self._distributed[directory] = root is not None and distributes(root)
        return known

    def graph_mode(self, module: ModuleIndex, frameworks: Frameworks) -> bool:
        """Whether a module runs in graph mode: eager execution turned off
        (``tf.compat.v1.disable_eager_execution()``, ``disable_v2_behavior()``) in it or in a
        module it imports; or, when neither of them turns it on
        (``tf.enable_eager_execution()``), a project that runs TensorFlow 1 (``frameworks``),
        where graph mode is the default, or one whose TensorFlow is not known to be 2 and that
        calls what only TensorFlow 1 has there. In a project that runs TensorFlow 2, such a
        call is a helper nothing calls or a path that fails, not graph mode (yarll's
        ``network_ops.py`` keeps a ``tf.get_variable`` helper beside its Keras layers).
        A module of such a project without a ``tf.function`` of its own runs in graph mode
        too when a module of its directory calls what only TensorFlow 1 has: the scripts of
        one directory run on one install, and that one is TensorFlow 1 (a DQN script's Keras
        ``predict`` beside the DDPG script's ``tf.InteractiveSession``).
        TensorFlow calls build graph nodes instead of running, Keras runs one cached function
        per model, and tensors hold no memory between ``session.run`` calls: the registry's
        eager-only rules do not run there."""
        modules = (module, *self.dependencies(module))
        if any(found.graph_mode for found in modules):
            return True
        if any(found.eager_mode for found in modules):
            return False
        major = self.world(module, frameworks).tensorflow_major
        if major == 1:
            return True
        if major == 2:
            return False
        own_tf_functions = module.tf_function_names or any(
            function.tf_function is not None for function in module.functions.values()
        )
        return any(found.tf1_only for found in modules) or (
            not own_tf_functions and self._tf1_in(module)
        )

    def _tf1_in(self, module: ModuleIndex) -> bool:
        """Some module of ``module``'s directory calls what only TensorFlow 1 has, and none
        imports or calls ``tf.compat.v1``: a directory whose code was ported to TensorFlow 2
        keeps a stale TensorFlow 1 script now and then (MMGD's ``s6_evaluate.py`` beside the
        ``tf.compat.v1`` of its ``fid.py``)."""
        beside = self.beside(module)
        return any(found.tf1_only for found in beside) and not any(
            found.uses_compat for found in beside
        )

    def beside(self, module: ModuleIndex) -> list[ModuleIndex]:
        """The modules of ``module``'s directory (itself included), sorted by path: scripts
        kept side by side run in one environment."""
        if self._directories is None:
            self._directories = {}
            for path in sorted(self._by_path):
                directory = str(Path(path).parent)
                self._directories.setdefault(directory, []).append(self._by_path[path])
        return self._directories.get(str(Path(module.path).parent), [])

    def traced(self, module: ModuleIndex, qualname: str) -> bool:
        """The function ``qualname`` of ``module`` runs only while a ``tf.function`` traces:
        one that only ``tf.function``s of its module call (:attr:`ModuleIndex.traced`), or a
        Keras model's ``train_step`` (or ``test_step``, ``predict_step``), which ``fit`` runs
        inside the ``tf.function`` it makes, when no module of the program says
        ``run_eagerly`` (the model may be compiled to run eagerly anywhere)."""
        if qualname in module.traced:
            return True
        if qualname not in module.keras_steps:
            return False
        if self._run_eagerly is None:
            self._run_eagerly = any(found.run_eagerly for found in self._by_path.values())
        return not self._run_eagerly

    def functions_eagerly(self, module: ModuleIndex) -> bool:
        """Whether every ``tf.function`` runs eagerly where ``module`` runs: its module-level
        code, or that of a project module it imports, calls
        ``tf.config.run_functions_eagerly(True)`` (:attr:`~.index.ModuleIndex.
        functions_eagerly`). Then nothing traces: the registry's trace-only rules do not run."""
        return any(found.functions_eagerly for found in (module, *self.dependencies(module)))

    def turns_eager_off(self, module: ModuleIndex) -> bool:
        """Whether importing ``module`` turns eager execution off: the module-level code of
        the module, or of a project module it imports (directly or through others), calls
        ``disable_eager_execution()`` or ``disable_v2_behavior()``. Then none of its code runs
        eagerly, whichever module calls it."""
        found = self._eager_off.get(module.path)
        if found is None:
            found = self._eager_off[module.path] = any(
                _switches_eager_off(current) for current in self._reachable(module)
            )
        return found

    def uses_tensorflow(self, module: ModuleIndex) -> bool:
        """Whether the module, or a project module it imports directly or through others
        (or by a computed name, :meth:`imported_by_name`), mentions TensorFlow or Keras
        (``train.py`` importing an agent whose network module builds the model)."""
        found = self._tensorflow.get(module.path)
        if found is None:
            found = any(
                current.uses_tensorflow
                or any(m.uses_tensorflow for m in self.imported_by_name(current))
                for current in self._reachable(module)
            )
            self._tensorflow[module.path] = found
        return found

    def in_tensorflow_program(self, module: ModuleIndex) -> bool:
        """Whether the module's code may run in a TensorFlow program and be handed its values:
        it uses TensorFlow (:meth:`uses_tensorflow`), or a module that does imports it,
        directly or through others (alpha-zero-general's ``Coach`` and ``MCTS`` import no
        TensorFlow; ``main.py`` imports them with the Keras network it hands them)."""
        found = self._tensorflow_program
        if found is None:
            todo = [m for m in self.modules() if self.uses_tensorflow(m)]
            seen = {m.path for m in todo}
            while todo:
                for dependency in self.dependencies(todo.pop()):
                    if dependency.path not in seen:
                        seen.add(dependency.path)
                        todo.append(dependency)
            found = self._tensorflow_program = frozenset(seen)
        return module.path in found

    def imported(self, module: ModuleIndex) -> bool:
        """Whether another project module imports ``module`` (an import statement, a star
        import or ``importlib.import_module``): if none does, its code runs only as a program
        of its own (a script, a notebook), never in the same run as another such program's."""
        if self._imported is None:
            self._imported = frozenset(
                found.path
                for each in self.modules()
                for found in (*self.dependencies(each), *self.imported_by_name(each))
            )
        return module.path in self._imported

    def imported_by_name(self, module: ModuleIndex) -> list[ModuleIndex]:
        """The project modules ``module``'s ``importlib.import_module`` calls may import: those
        the constant start of the name names (``f"agents.{name}"``: every ``agents.*``)."""
        if not module.imported_by_name:
            return []
        return [
            found
            for found in self.modules()
            if found.path != module.path
            and any(
                dotted == name if exact else dotted.startswith(name)
                for name, exact in module.imported_by_name
                for dotted in _names_of(found)
            )
        ]

    def program_of(self, module: ModuleIndex) -> frozenset[str]:
        """The paths of the modules that may run in one process with ``module``: those the
        scripts reaching it import (a script is a module no project module imports; a module
        is in every program whose script imports it, directly or through others), or, when no
        script reaches it (a cycle of imports), every module."""
        found = self._programs.get(module.path)
        if found is None:
            if self._scripts is None:
                self._scripts = [
                    frozenset(current.path for current in self._reachable(script))
                    for script in self.modules()
                    if not self.imported(script)
                ]
            reached = frozenset().union(*(p for p in self._scripts if module.path in p))
            found = self._programs[module.path] = reached or frozenset(self._by_path)
        return found

    def _reachable(self, module: ModuleIndex) -> Iterator[ModuleIndex]:
        """The module and every project module it imports, directly or through others."""
        seen = {module.path}
        todo = [module]
        while todo:
            current = todo.pop()
            yield current
            for dependency in self.dependencies(current):
                if dependency.path not in seen:
                    seen.add(dependency.path)
                    todo.append(dependency)

    def dependencies(self, module: ModuleIndex) -> list[ModuleIndex]:
        """The project modules this module's imports resolve to (for cache invalidation)."""
        cached = self._dependencies.get(module.path)
        if cached is None:
            cached = self._dependencies[module.path] = self._resolve_dependencies(module)
        return cached

    def _resolve_dependencies(self, module: ModuleIndex) -> list[ModuleIndex]:
        found: dict[str, ModuleIndex] = {}
        for target in [*module.imports.values(), *module.star_imports]:
            parts = target.split(".")
            for split in range(len(parts), 0, -1):
                dependency = self.find_module(".".join(parts[:split]), module)
                if dependency is not None:
                    found[dependency.path] = dependency
                    break
        found.pop(module.path, None)
        return sorted(found.values(), key=lambda m: m.path)


#: How many re-exports a name imported from the project is followed through to the library
#: name it stands for (``from pkg import tf`` -> ``pkg/__init__.py`` -> ``tensorflow``).
MAX_REEXPORTS = 8


def _switches_eager_off(module: ModuleIndex) -> bool:
    """The module's own code (not its functions') calls one of :data:`GRAPH_MODE_SWITCHES`."""
    return any(
        calls_tensorflow(module.imports, site.call, GRAPH_MODE_SWITCHES)
        for site in module.body.calls
    )


#: How many directories without an ``__init__.py`` above a module still name it (namespace
#: packages: ``from model.unet import Unet`` run from the directory above ``model/``; a service
#: importing ``business.image.classification.mnist.mnist`` from the directory above
#: ``business/``).
MAX_NAMESPACE_LEVELS = 8


def _base(module: ModuleIndex, name: str) -> Path:
    """The directory ``name``, one of :func:`_names_of` ``module``, is imported from: its root,
    or a directory above it for a name through namespace packages."""
    base = Path(module.root)
    for _ in range(name.count(".") - module.module.count(".")):
        base = base.parent
    return base


def _names_of(module: ModuleIndex) -> list[str]:
    """The dotted names a module is imported by: its own, and those through the directories
    without ``__init__.py`` above its root (PEP 420 namespace packages). None for a notebook:
    ``import`` never reads one (``data_process/dataset.ipynb`` beside the ``dataset.py`` that
    ``from data_process.dataset import get_dataset`` imports)."""
    if module.path.endswith(NOTEBOOK_SUFFIX):
        return []
    names = [module.module]
    directory = Path(module.root)
    current = module.module
    for _ in range(MAX_NAMESPACE_LEVELS):
        if directory.parent == directory or not directory.name.isidentifier() or not current:
            break
        current = f"{directory.name}.{current}"
        names.append(current)
        directory = directory.parent
    return names


def _key(definition: ClassDef) -> tuple[str, str]:
    return definition[0].path, definition[1].name


def _c3(linearizations: list[list[ClassDef]]) -> list[ClassDef]:
    """C3's merge of the bases' linearisations (each starting with its base); depth first
    where there is no consistent order."""
    sequences = [list(s) for s in linearizations if s]
    merged: list[ClassDef] = []
    while sequences:
        head = None
        tails = {_key(d) for sequence in sequences for d in sequence[1:]}
        for sequence in sequences:
            if _key(sequence[0]) not in tails:
                head = sequence[0]
                break
        if head is None:
            # No consistent order (Python would refuse the class): depth first, each once.
            seen = {_key(m) for m in merged}
            for sequence in sequences:
                for definition in sequence:
                    if _key(definition) not in seen:
                        seen.add(_key(definition))
                        merged.append(definition)
            return merged
        merged.append(head)
        chosen = _key(head)
        sequences = [
            rest for sequence in sequences if (rest := [d for d in sequence if _key(d) != chosen])
        ]
    return merged
