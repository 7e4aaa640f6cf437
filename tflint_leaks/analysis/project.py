"""Cross-file lookups over every :class:`ModuleIndex` of the project.

Modules are found by dotted name. A module that is imported but was not given on the command
line (pre-commit passes only the changed files) is looked up on disk next to the importer and
indexed on demand, so ``from steps import train_step`` still resolves.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tflint_leaks.analysis.index import (
    ClassFacts,
    FunctionFacts,
    ModuleIndex,
    TfFunctionFacts,
    index_source,
)
from tflint_leaks.source import SourceError, read_source

_MAX_REEXPORT_DEPTH = 4


@dataclass(frozen=True)
class Definition:
    """A project definition found by qualified name."""

    module: ModuleIndex
    function: FunctionFacts | None = None
    klass: ClassFacts | None = None
    #: The ``tf.function`` this name is, if it is one.
    tf_function: TfFunctionFacts | None = None


class ProjectIndex:
    def __init__(self, modules: Iterable[ModuleIndex] = ()) -> None:
        self._by_name: dict[str, list[ModuleIndex]] = {}
        self._by_path: dict[str, ModuleIndex] = {}
        self._missing: set[Path] = set()
        self._found: dict[tuple[str, str], ModuleIndex | None] = {}
        self._dependencies: dict[str, list[ModuleIndex]] = {}
        #: (root, top-level name) pairs with neither a module nor a package on disk.
        self._absent: set[tuple[str, str]] = set()
        for module in modules:
            self.add(module)

    def add(self, module: ModuleIndex) -> None:
        self._by_name.setdefault(module.module, []).append(module)
        self._by_path[module.path] = module
        for key in [key for key in self._found if key[0] == module.module]:
            del self._found[key]
        self._dependencies.clear()

    def module_at(self, path: str) -> ModuleIndex | None:
        """The indexed module of a file."""
        return self._by_path.get(path)

    def modules(self) -> list[ModuleIndex]:
        return list(self._by_path.values())

    # -- modules -------------------------------------------------------------------------------

    def find_module(self, name: str, importer: ModuleIndex) -> ModuleIndex | None:
        key = (name, importer.root)
        if key not in self._found:
            self._found[key] = self._find_module(name, importer)
        return self._found[key]

    def _find_module(self, name: str, importer: ModuleIndex) -> ModuleIndex | None:
        candidates = self._by_name.get(name, [])
        for candidate in candidates:
            if candidate.root == importer.root:
                return candidate
        if len(candidates) == 1:
            return candidates[0]
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
            except (SourceError, SyntaxError, ValueError, RecursionError):
                self._missing.add(path)
                continue
            self.add(module)
            return module
        return None

    # -- definitions ---------------------------------------------------------------------------

    def lookup(self, qualified: str, importer: ModuleIndex, depth: int = 0) -> Definition | None:
        """Find the project definition a fully qualified name refers to: a function, a class, a
        method (``pkg.mod.Class.method``), or a module-level ``name = tf.function(fn)``."""
        if depth > _MAX_REEXPORT_DEPTH:
            return None
        parts = qualified.split(".")
        for split in range(len(parts) - 1, 0, -1):
            module = self.find_module(".".join(parts[:split]), importer)
            if module is not None:
                return self._in_module(module, parts[split:], depth)
        return None

    def local(self, module: ModuleIndex, dotted: str) -> Definition | None:
        """A definition of ``module`` itself (``step`` or ``Trainer.step``)."""
        return self._in_module(module, dotted.split("."), 0)

    def _in_module(self, module: ModuleIndex, rest: list[str], depth: int) -> Definition | None:
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
        reexported = module.imports.get(head)
        if reexported is not None:
            return self.lookup(".".join([reexported, *rest[1:]]), module, depth + 1)
        return None

    def class_tf_functions(
        self, module: ModuleIndex, klass: ClassFacts, depth: int = 0
    ) -> dict[str, TfFunctionFacts]:
        """``tf.function`` attributes of a class, including those inherited from project bases."""
        found: dict[str, TfFunctionFacts] = {}
        if depth <= _MAX_REEXPORT_DEPTH:
            for base in klass.bases:
                definition = self.lookup(base, module) if "." in base else self.local(module, base)
                if definition is not None and definition.klass is not None:
                    found.update(
                        self.class_tf_functions(definition.module, definition.klass, depth + 1)
                    )
        found.update(klass.tf_functions)
        return found

    def is_model_class(self, module: ModuleIndex, klass: ClassFacts, depth: int = 0) -> bool:
        """Whether ``klass`` is a Keras model: it derives from ``keras.Model`` or
        ``keras.Sequential``, directly or through project bases."""
        if klass.is_keras_model:
            return True
        if depth > _MAX_REEXPORT_DEPTH:
            return False
        for base in klass.bases:
            definition = self.lookup(base, module) if "." in base else self.local(module, base)
            if (
                definition is not None
                and definition.klass is not None
                and self.is_model_class(definition.module, definition.klass, depth + 1)
            ):
                return True
        return False

    def dependencies(self, module: ModuleIndex) -> list[ModuleIndex]:
        """The project modules this module's imports resolve to (for cache invalidation)."""
        cached = self._dependencies.get(module.path)
        if cached is None:
            cached = self._dependencies[module.path] = self._resolve_dependencies(module)
        return cached

    def _resolve_dependencies(self, module: ModuleIndex) -> list[ModuleIndex]:
        found: dict[str, ModuleIndex] = {}
        for target in module.imports.values():
            parts = target.split(".")
            for split in range(len(parts), 0, -1):
                dependency = self.find_module(".".join(parts[:split]), module)
                if dependency is not None:
                    found[dependency.path] = dependency
                    break
        found.pop(module.path, None)
        return sorted(found.values(), key=lambda m: m.path)
