"""Which files a run lints: directories recursively, explicit files always, minus excludes."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tflint_leaks.config import Configuration

#: Python files, and Jupyter notebooks (see ``engine/notebook.py``).
EXTENSIONS = (".py", ".pyi", ".ipynb")


@dataclass
class Discovery:
    files: list[Path] = field(default_factory=list)
    #: Problems with the paths given (missing path, symlink loop); each is one line.
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def discover(paths: Sequence[Path], configuration: Configuration) -> Discovery:
    """The files to lint under ``paths``, each file once however it was named (``t.py``,
    ``./t.py``, its absolute path), in the order given. Raises
    :class:`~tflint_leaks.config.ConfigError` for a broken configuration of a path."""
    found = Discovery()
    seen: set[str] = set()

    def add(path: Path) -> None:
        key = os.path.normcase(os.path.abspath(path))  # noqa: PTH100
        if key not in seen:
            seen.add(key)
            found.files.append(path)

    for path in paths:
        if not path.exists() and not path.is_symlink():
            found.errors.append(f"{path}: no such file or directory")
            continue
        settings = configuration.for_path(path)
        if settings.force_exclude and settings.excluded(path):
            continue
        if path.is_dir():
            _walk(path, configuration, found, add)
        else:
            add(path)
    return found


def skipped(path: Path, configuration: Configuration) -> bool:
    """Whether a walk leaves ``path`` out: its settings' excludes name it or a directory it is
    in. The one notion of "is this file linted" of the command line (with ``--force-exclude``)
    and the editor server."""
    return configuration.for_path(path).excluded(path)


def _walk(
    top: Path, configuration: Configuration, found: Discovery, add: Callable[[Path], None]
) -> None:
    visited: set[tuple[int, int]] = set()
    root = top.resolve()
    for directory, dirnames, filenames in os.walk(top, followlinks=True, onerror=None):
        current = Path(directory)
        try:
            stat = current.stat()
        except OSError as error:
            found.warnings.append(f"{current}: cannot read directory: {error.strerror}")
            dirnames[:] = []
            continue
        key = (stat.st_dev, stat.st_ino)
        if key in visited:
            found.warnings.append(f"{current}: skipped, a symlink loop leads back here")
            dirnames[:] = []
            continue
        visited.add(key)
        dirnames[:] = sorted(
            d
            for d in dirnames
            if not _aliased(current / d, root) and not skipped(current / d, configuration)
        )
        for name in sorted(filenames):
            path = current / name
            if name.endswith(EXTENSIONS) and not skipped(path, configuration):
                add(path)


def _aliased(path: Path, root: Path) -> bool:
    """A symlink to a directory elsewhere in the tree being walked (``notebooks/libs ->
    ../python/libs``), not to one it is in (a loop, warned about when reached): the walk
    lints that directory at its own place, once, under its own paths."""
    if not path.is_symlink():
        return False
    try:
        target = path.resolve(strict=True)
        parent = path.parent.resolve(strict=True)
    except (OSError, RuntimeError):
        return False
    inside = target == root or root in target.parents
    return inside and target != parent and target not in parent.parents
