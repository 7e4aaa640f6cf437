"""Replacing a file atomically: the user's file is never left half-written."""

from __future__ import annotations

import errno
import io
import os
import stat
import tempfile
import tokenize
from pathlib import Path


def encoding_of(data: bytes) -> str:
    """The encoding Python reads ``data`` in (a BOM or a declaration, else UTF-8)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        return "utf-8"
    return encoding


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path``'s content with ``text`` in its own encoding (and BOM), atomically,
    keeping its permissions; through a symlink, the target is replaced. A read-only file (no
    write permission, whoever runs this: root too) is left alone: :class:`PermissionError`."""
    target = path.resolve()
    mode = stat.S_IMODE(target.stat().st_mode)
    if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(target, os.W_OK):
        raise PermissionError(errno.EACCES, "the file is read-only", str(path))
    data = target.read_bytes()
    write_bytes_atomic(target, text.encode(encoding_of(data)), mode)


def write_bytes_atomic(target: Path, data: bytes, mode: int | None = None) -> None:
    """Write ``data`` to a temporary file beside ``target`` and rename it over ``target``: a
    crash or an interrupt leaves either the old content or the new, never a mix."""
    handle, temporary = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        if mode is not None:
            Path(temporary).chmod(mode)
        Path(temporary).replace(target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
