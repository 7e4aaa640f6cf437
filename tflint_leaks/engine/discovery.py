"""Which files a run lints: directories recursively, explicit files always, minus excludes."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tflint_leaks.config import Settings

#: Python files, and Jupyter notebooks (see ``engine/notebook.py``).
EXTENSIONS = (".py", ".pyi", ".ipynb")


@dataclass
class Discovery:
    files: list[Path] = field(default_factory=list)
    #: Problems with the paths given (missing path, symlink loop); each is one line.
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class Patterns:
    """Glob patterns matched against a path or any directory containing it: by name (``.venv``,
    ``*_pb2.py``) or by path relative to ``root`` (``src/gen/*``). Outside ``root`` only the
    name counts (a walk checks each directory on its way down)."""

    def __init__(self, patterns: Sequence[str], root: Path) -> None:
        self._root = str(root)
        names = [p.rstrip("/") for p in patterns if "/" not in p.rstrip("/")]
        paths = [p for p in patterns if "/" in p.rstrip("/")]
        paths += [p.rstrip("/") + "/*" for p in paths]
        self._names = re.compile("|".join(map(fnmatch.translate, names))) if names else None
        self._paths = re.compile("|".join(map(fnmatch.translate, paths))) if paths else None

    def match(self, path: Path) -> bool:
        # String operations, not pathlib: this runs for every file and directory walked.
        absolute = os.path.abspath(path)  # noqa: PTH100
        inside = absolute.startswith(self._root + os.sep)
        relative = absolute[len(self._root) + 1 :] if inside else os.path.basename(absolute)  # noqa: PTH119
        if self._names is not None and any(
            self._names.match(part)
            for part in relative.split(os.sep)  # noqa: PTH206
        ):
            return True
        posix = relative.replace(os.sep, "/")
        return self._paths is not None and self._paths.match(posix) is not None


def matches(path: Path, pattern: str, root: Path) -> bool:
    """Whether one ``pattern`` matches ``path`` (see :class:`Patterns`)."""
    return Patterns([pattern], root).match(path)


def discover(paths: Sequence[Path], settings: Settings) -> Discovery:
    found = Discovery()
    excludes = Patterns((*settings.exclude, *settings.extend_exclude), settings.root.resolve())
    seen: set[Path] = set()

    def add(path: Path) -> None:
        if path not in seen:
            seen.add(path)
            found.files.append(path)

    for path in paths:
        if not path.exists() and not path.is_symlink():
            found.errors.append(f"{path}: no such file or directory")
        elif path.is_dir():
            if settings.force_exclude and excludes.match(path):
                continue
            _walk(path, excludes, found, add)
        elif not (settings.force_exclude and excludes.match(path)):
            add(path)
    return found


def _walk(top: Path, excludes: Patterns, found: Discovery, add: Callable[[Path], None]) -> None:
    visited: set[tuple[int, int]] = set()
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
        dirnames[:] = sorted(d for d in dirnames if not excludes.match(current / d))
        for name in sorted(filenames):
            path = current / name
            if name.endswith(EXTENSIONS) and not excludes.match(path):
                add(path)
