"""Which files a run lints: directories recursively, explicit files always, minus excludes."""

from __future__ import annotations

import fnmatch
import os
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


def matches(path: Path, pattern: str, root: Path) -> bool:
    """Whether ``pattern`` (a glob) matches ``path`` or a directory containing it: by name
    (``.venv``, ``*_pb2.py``) or by path relative to ``root`` (``src/gen/*``)."""
    try:
        relative = path.absolute().relative_to(root)
    except ValueError:
        # Outside the project root only the name counts (the walk checks each directory).
        relative = Path(path.name)
    if "/" not in pattern.rstrip("/"):
        return any(fnmatch.fnmatchcase(part, pattern.rstrip("/")) for part in relative.parts)
    text = relative.as_posix()
    return fnmatch.fnmatchcase(text, pattern) or fnmatch.fnmatchcase(
        text, pattern.rstrip("/") + "/*"
    )


def _excluded(path: Path, patterns: Sequence[str], root: Path) -> bool:
    return any(matches(path, pattern, root) for pattern in patterns)


def discover(paths: Sequence[Path], settings: Settings) -> Discovery:
    found = Discovery()
    patterns = (*settings.exclude, *settings.extend_exclude)
    root = settings.root.resolve()
    seen: set[Path] = set()

    def add(path: Path) -> None:
        if path not in seen:
            seen.add(path)
            found.files.append(path)

    for path in paths:
        if not path.exists() and not path.is_symlink():
            found.errors.append(f"{path}: no such file or directory")
        elif path.is_dir():
            if settings.force_exclude and _excluded(path, patterns, root):
                continue
            _walk(path, patterns, root, found, add)
        elif not (settings.force_exclude and _excluded(path, patterns, root)):
            add(path)
    return found


def _walk(
    top: Path, patterns: Sequence[str], root: Path, found: Discovery, add: Callable[[Path], None]
) -> None:
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
        dirnames[:] = sorted(d for d in dirnames if not _excluded(current / d, patterns, root))
        for name in sorted(filenames):
            path = current / name
            if name.endswith(EXTENSIONS) and not _excluded(path, patterns, root):
                add(path)
