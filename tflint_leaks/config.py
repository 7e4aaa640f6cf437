"""``[tool.tflint-leaks]`` in the nearest ``pyproject.toml``, merged with the command line.

Every key is validated: an unknown key, a value of the wrong type or an unknown rule code raises
:class:`ConfigError` naming the key and the file, which the command line turns into exit 2.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from tflint_leaks.registry import RULES
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
    #: The directory patterns and per-file globs are relative to.
    root: Path = field(default_factory=Path.cwd)
    #: The file the settings came from, if any.
    source: Path | None = None

    def enabled_codes(self) -> frozenset[str]:
        """The rule codes this run checks."""
        if self.select is None:
            chosen = {rule.code for rule in RULES if rule.default_enabled}
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


def expand_selectors(selectors: Iterable[str], *, include_opt_in: bool) -> list[str]:
    """Codes matched by each selector: a code, a prefix (``TFL1``) or ``ALL``."""
    codes: list[str] = []
    for raw in selectors:
        selector = raw.strip().upper()
        matched = [
            rule.code
            for rule in RULES
            if (selector == "ALL" or rule.code.startswith(selector))
            and (include_opt_in or rule.default_enabled)
        ]
        if not matched:
            raise ConfigError(f"unknown rule selector `{selector}`")
        codes.extend(matched)
    return codes


def find_config(start: Path) -> Path | None:
    """The nearest ``pyproject.toml`` at or above ``start`` with a ``[tool.tflint-leaks]``
    table."""
    directory = start.resolve()
    if not directory.is_dir():
        directory = directory.parent
    for candidate in (directory, *directory.parents):
        path = candidate / "pyproject.toml"
        if path.is_file() and TABLE in _read_toml(path).get("tool", {}):
            return path
    return None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from None


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
    data = _read_toml(path).get("tool", {}).get(TABLE, {})
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: `tool.{TABLE}` must be a table")
    settings = Settings(root=path.parent.resolve(), source=path)
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


def resolve_settings(
    paths: Sequence[Path],
    config: Path | None,
    *,
    select: Sequence[str] | None = None,
    extend_select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    exclude: Sequence[str] | None = None,
    extend_exclude: Sequence[str] = (),
    force_exclude: bool | None = None,
) -> Settings:
    """The file's settings (``config`` or the nearest one) overridden by the command line."""
    if config is None:
        config = find_config(paths[0] if paths else Path.cwd())
    settings = load_settings(config) if config is not None else Settings()
    try:
        for group in (select or (), extend_select, ignore):
            expand_selectors(group, include_opt_in=True)
    except ConfigError as error:
        raise ConfigError(f"{error} on the command line") from None
    return replace(
        settings,
        select=tuple(select) if select else settings.select,
        extend_select=settings.extend_select + tuple(extend_select),
        ignore=settings.ignore + tuple(ignore),
        exclude=tuple(exclude) if exclude is not None else settings.exclude,
        extend_exclude=settings.extend_exclude + tuple(extend_exclude),
        force_exclude=settings.force_exclude if force_exclude is None else force_exclude,
    )
