"""``[tool.tflint-leaks]`` in the ``pyproject.toml`` nearest each file (:class:`Configuration`),
merged with the command line (:class:`Overrides`). ``exclude`` and ``per-file-ignores`` take
gitignore-style globs (:func:`glob_to_regex`).

Every key is validated: an unknown key, a value of the wrong type or an unknown rule code raises
:class:`ConfigError` naming the key and the file, which the command line turns into exit 2.

Each file's settings also carry the TensorFlow and Keras its project runs
(``options.frameworks``, :mod:`tflint_leaks.frameworks`): what the pin files of its project root
say, or ``target-tensorflow`` / ``target-keras`` when they are set.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from tflint_leaks.frameworks import (
    Documented,
    Frameworks,
    beside_evidence,
    parse_target,
    project_root,
    read_documented,
    read_pins,
)
from tflint_leaks.registry import SELECTABLE
from tflint_leaks.rulekit.options import RuleOptions

TABLE = "tflint-leaks"
#: Where the cache lives, below the project root, unless ``--cache-dir`` says otherwise.
CACHE_DIRECTORY = ".tflint-leaks-cache"

DEFAULT_EXCLUDE: tuple[str, ...] = (
    ".git",
    ".hg",
    ".svn",
    ".tox",
    ".nox",
    ".venv",
    "venv",
    ".eggs",
    "__pypackages__",
    "_build",
    "build",
    "dist",
    "site-packages",
    "node_modules",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    CACHE_DIRECTORY,
)


class ConfigError(Exception):
    """A configuration problem the user must fix; the message names the key and the file."""


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    force_exclude: bool = False
    options: RuleOptions = field(default_factory=RuleOptions)
    #: ``target-tensorflow`` / ``target-keras``: the release the project runs (``"1.15"``), in
    #: place of what its pin files say (the result is ``options.frameworks``).
    target_tensorflow: str | None = None
    target_keras: str | None = None
    #: The directory patterns and per-file globs are relative to.
    root: Path = field(default_factory=Path.cwd)
    #: The file the settings came from, if any.
    source: Path | None = None

    def enabled_codes(self) -> frozenset[str]:
        """The codes this run checks: rules, and ``TFL003`` (unused ``noqa``)."""
        if self.select is None:
            chosen = {code.code for code in SELECTABLE if code.default_enabled}
        else:
            chosen = set(expand_selectors(self.select, include_opt_in=True))
        chosen |= set(expand_selectors(self.extend_select, include_opt_in=True))
        chosen -= set(expand_selectors(self.ignore, include_opt_in=True))
        return frozenset(chosen)

    def cache_key(self) -> str:
        """Everything in the settings that changes what a file's findings are."""
        return repr(
            (sorted(self.enabled_codes()), self.per_file_ignores, self.options, str(self.root))
        )

    def excluded(self, path: Path | str) -> bool:
        """Whether ``exclude``/``extend-exclude`` leave ``path`` (a file or a directory, or a
        directory containing it below :attr:`root`) out."""
        return _globs((*self.exclude, *self.extend_exclude), str(self.root)).match(path)

    def ignored_codes(self, path: Path | str) -> frozenset[str]:
        """The codes ``per-file-ignores`` turns off for ``path``."""
        codes: set[str] = set()
        for pattern, selectors in self.per_file_ignores:
            if _globs((pattern,), str(self.root)).match(path):
                codes.update(expand_selectors(selectors, include_opt_in=True))
        return frozenset(codes)


def glob_to_regex(pattern: str) -> str:
    """A gitignore-style glob as a regular expression over a ``/``-separated path relative to
    the root, as Ruff and git read them: a pattern without ``/`` (``.venv``, ``*_pb2.py``)
    matches a name at any depth; one with ``/`` is relative to the root (a leading ``./`` or
    ``/`` changes nothing); ``*`` and ``?`` stay within a name; ``**/`` is any number of
    directories (none too: ``tests/**/*.py`` matches ``tests/test_x.py``), ``/**`` everything
    inside. A match on a directory covers everything in it."""
    body = pattern.rstrip("/")
    while body.startswith("./"):
        body = body[2:]
    anchored = "/" in body
    body = body.lstrip("/")
    out: list[str] = []
    index = 0
    while index < len(body):
        char = body[index]
        if body.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
            continue
        if body.startswith("**", index):
            out.append(".*")
            index += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and "]" in body[index + 2 :]:
            end = body.index("]", index + 2)
            inner = body[index + 1 : end]
            if inner.startswith("!"):
                inner = "^" + inner[1:]
            out.append("[" + inner.replace("\\", "\\\\") + "]")
            index = end
        else:
            out.append(re.escape(char))
        index += 1
    prefix = "" if anchored else "(?:.*/)?"
    return f"{prefix}{''.join(out)}(?:/.*)?"


class _Globs:
    """Several gitignore-style globs relative to ``root``, compiled once. A path outside the
    root is matched by its name only."""

    def __init__(self, patterns: Sequence[str], root: str) -> None:
        self._root = root
        self._anchored = _compile([p for p in patterns if "/" in p.rstrip("/")])
        self._names = _compile([p for p in patterns if "/" not in p.rstrip("/")])

    def match(self, path: Path | str) -> bool:
        # String operations, not pathlib: this runs for every file and directory walked.
        absolute = os.path.abspath(path)  # noqa: PTH100 - symlinks are kept, as given
        if absolute.startswith(self._root.rstrip(os.sep) + os.sep):
            relative = absolute[len(self._root.rstrip(os.sep)) + 1 :].replace(os.sep, "/")
            return any(
                p is not None and p.fullmatch(relative) for p in (self._anchored, self._names)
            )
        name = os.path.basename(absolute)  # noqa: PTH119
        return self._names is not None and self._names.fullmatch(name) is not None


def _compile(patterns: Sequence[str]) -> re.Pattern[str] | None:
    if not patterns:
        return None
    return re.compile("|".join(f"(?:{glob_to_regex(p)})" for p in patterns), re.DOTALL)


@functools.lru_cache(maxsize=256)
def _globs(patterns: tuple[str, ...], root: str) -> _Globs:
    return _Globs(patterns, root)


def expand_selectors(selectors: Iterable[str], *, include_opt_in: bool) -> list[str]:
    """Codes matched by each selector: a code, a prefix (``TFL1``) or ``ALL``."""
    codes: list[str] = []
    for raw in selectors:
        selector = raw.strip().upper()
        matched = [
            code.code
            for code in SELECTABLE
            if (selector == "ALL" or code.code.startswith(selector))
            and (include_opt_in or code.default_enabled)
        ]
        if not matched:
            raise ConfigError(f"unknown rule selector `{selector}`")
        codes.extend(matched)
    return codes


def _has_table(path: Path) -> bool:
    return path.is_file() and TABLE in _tool_table(_read_toml(path), path)


def _tool_table(data: dict[str, Any], path: Path) -> dict[str, Any]:
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: `tool` must be a table")
    return tool


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: invalid TOML: not UTF-8") from None


def _string_list(table: Mapping[str, Any], key: str, path: Path) -> tuple[str, ...]:
    value = table[key]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{path}: `tool.{TABLE}.{key}` must be a list of strings")
    return tuple(value)


def _codes(table: Mapping[str, Any], key: str, path: Path) -> tuple[str, ...]:
    codes = _string_list(table, key, path)
    try:
        expand_selectors(codes, include_opt_in=True)
    except ConfigError as error:
        raise ConfigError(f"{path}: {error} in `tool.{TABLE}.{key}`") from None
    return codes


def load_settings(path: Path) -> Settings:
    """Settings from the ``[tool.tflint-leaks]`` table of ``path``."""
    data = _tool_table(_read_toml(path), path).get(TABLE, {})
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: `tool.{TABLE}` must be a table")
    root = Path(os.path.abspath(path.parent))  # noqa: PTH100 - symlinks are kept, as given
    settings = Settings(root=root, source=path)
    changes: dict[str, Any] = {}
    options: dict[str, Any] = {}
    for key in data:
        if key in {"select", "extend-select", "ignore"}:
            changes[key.replace("-", "_")] = _codes(data, key, path)
        elif key in {"exclude", "extend-exclude"}:
            changes[key.replace("-", "_")] = _string_list(data, key, path)
        elif key == "force-exclude":
            if not isinstance(data[key], bool):
                raise ConfigError(f"{path}: `tool.{TABLE}.{key}` must be true or false")
            changes["force_exclude"] = data[key]
        elif key == "per-file-ignores":
            changes["per_file_ignores"] = _per_file_ignores(data[key], path)
        elif key in {"target-tensorflow", "target-keras"}:
            value = data[key]
            if not isinstance(value, str) or parse_target(value) is None:
                raise ConfigError(
                    f'{path}: `tool.{TABLE}.{key}` must be a release such as "1.15" or "2.16"'
                )
            changes[key.replace("-", "_")] = value.strip()
        elif key in {"max-python-values", "max-loop-iterations"}:
            value = data[key]
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError(f"{path}: `tool.{TABLE}.{key}` must be a non-negative integer")
            options[key.replace("-", "_")] = value
        else:
            raise ConfigError(f"{path}: unknown key `tool.{TABLE}.{key}`")
    return replace(settings, options=RuleOptions(**options), **changes)


def _per_file_ignores(value: Any, path: Path) -> tuple[tuple[str, tuple[str, ...]], ...]:
    key = f"tool.{TABLE}.per-file-ignores"
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: `{key}` must be a table of glob = [codes]")
    entries: list[tuple[str, tuple[str, ...]]] = []
    for pattern, codes in value.items():
        if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
            raise ConfigError(f'{path}: `{key}."{pattern}"` must be a list of strings')
        try:
            expand_selectors(codes, include_opt_in=True)
        except ConfigError as error:
            raise ConfigError(f'{path}: {error} in `{key}."{pattern}"`') from None
        entries.append((pattern, tuple(codes)))
    return tuple(entries)


@dataclass(frozen=True)
class Overrides:
    """What the command line says, on top of every file's settings: ``--select`` replaces
    ``select``; ``--extend-select``, ``--ignore`` and ``--extend-exclude`` add to the lists;
    ``--exclude`` replaces ``exclude``."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    force_exclude: bool | None = None

    def check(self) -> None:
        """Raise :class:`ConfigError` for an unknown rule selector."""
        try:
            for group in (self.select or (), self.extend_select, self.ignore):
                expand_selectors(group, include_opt_in=True)
        except ConfigError as error:
            raise ConfigError(f"{error} on the command line") from None

    def apply(self, settings: Settings) -> Settings:
        return replace(
            settings,
            select=self.select or settings.select,
            extend_select=settings.extend_select + self.extend_select,
            ignore=settings.ignore + self.ignore,
            exclude=self.exclude if self.exclude is not None else settings.exclude,
            extend_exclude=settings.extend_exclude + self.extend_exclude,
            force_exclude=settings.force_exclude
            if self.force_exclude is None
            else self.force_exclude,
        )


class Configuration:
    """The settings of each file, as Ruff finds them: the nearest ``pyproject.toml`` at or above
    the file with a ``[tool.tflint-leaks]`` table (so the order of the paths given does not
    matter, and a file in a sub-project uses the sub-project's settings), with the command
    line's :class:`Overrides` on top. ``config`` (``--config``) gives one file for every path;
    ``fixed`` gives the same settings to every path (the library's callers and the tests).

    Except with ``fixed``, each directory's settings carry the frameworks of its project
    (:func:`~tflint_leaks.frameworks.project_root`; its pin files are read once per run), with
    the settings' ``target-tensorflow`` / ``target-keras`` in place of the pins they name.

    A broken ``pyproject.toml`` raises :class:`ConfigError` when a path below it is asked for.
    """

    def __init__(
        self,
        overrides: Overrides | None = None,
        config: Path | None = None,
        *,
        fixed: Settings | None = None,
    ) -> None:
        self._overrides = overrides or Overrides()
        self._overrides.check()
        self._fixed = fixed
        self._config = None if config is None else self._overrides.apply(load_settings(config))
        self._default: Settings | None = None
        self._tables: dict[str, Settings] = {}
        self._directories: dict[str, Settings] = {}
        self._pins: dict[str | None, Frameworks] = {None: Frameworks()}
        self._readmes: dict[str, tuple[Documented, ...]] = {}

    def for_path(self, path: Path | str) -> Settings:
        """The settings of a file or directory."""
        if self._fixed is not None:
            return self._fixed
        absolute = os.path.abspath(path)  # noqa: PTH100 - symlinks are kept, as given
        if not os.path.isdir(absolute):  # noqa: PTH112 - a string: this runs per file
            absolute = os.path.dirname(absolute)  # noqa: PTH120
        return self._directory(absolute)

    def _directory(self, directory: str) -> Settings:
        """The settings of ``directory`` with the frameworks of its project."""
        found = self._directories.get(directory)
        if found is None:
            settings = self._config if self._config is not None else self._table(directory)
            root = project_root(directory)
            pins = self._pins.get(root)
            if pins is None:
                pins = self._pins[root] = read_pins(root) if root is not None else Frameworks()
            python2, theano = beside_evidence(directory)
            if python2 is not None:
                pins = replace(pins, python2=python2)
            if theano is not None:
                pins = replace(pins, theano_beside=theano)
            readme = read_documented(directory, root, self._readmes)
            if readme:
                pins = replace(pins, readme=readme)
            where = f"{settings.source}: tool.{TABLE}"
            frameworks = pins.with_targets(settings.target_tensorflow, settings.target_keras, where)
            options = replace(settings.options, frameworks=frameworks)
            found = self._directories[directory] = replace(settings, options=options)
        return found

    def _table(self, directory: str) -> Settings:
        """The settings of the nearest ``[tool.tflint-leaks]`` table at or above ``directory``."""
        found = self._tables.get(directory)
        if found is not None:
            return found
        candidate = Path(directory) / "pyproject.toml"
        parent = os.path.dirname(directory)  # noqa: PTH120
        if _has_table(candidate):
            found = self._overrides.apply(load_settings(candidate))
        elif parent == directory:
            if self._default is None:
                self._default = self._overrides.apply(Settings())
            found = self._default
        else:
            found = self._table(parent)
        self._tables[directory] = found
        return found

    def common(self, paths: Sequence[Path]) -> Settings:
        """The settings of the deepest directory containing every path (the current directory
        when none is given), whatever their order: where the cache lives by default, and the
        runtime mode's options."""
        absolute = [os.path.abspath(path) for path in paths] or [os.getcwd()]  # noqa: PTH100, PTH109
        return self.for_path(os.path.commonpath(absolute))
