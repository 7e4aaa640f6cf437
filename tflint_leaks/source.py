"""Reading a Python file the way Python would: BOM, PEP 263 encoding declaration, no NUL bytes."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path


class SourceError(Exception):
    """The file cannot be read as Python source; ``line``/``column`` are 1-based."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


#: Line breaks as the tokenizer sees them, in text and in bytes.
#: A Jupyter notebook's file name ends so: its cells are linted, but ``import`` never reads it.
NOTEBOOK_SUFFIX = ".ipynb"

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_BYTE_LINES = re.compile(rb"\r\n|\r|\n")
#: A PEP 263 encoding declaration (the tokenizer's own pattern).
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


def decode_source(data: bytes) -> str:
    """Decode ``data`` as Python does (a BOM or an encoding declaration, else UTF-8)."""
    nul = data.find(b"\0")
    if nul >= 0:
        before = _BYTE_LINES.split(data[:nul])
        column = len(before[-1].decode("utf-8", "replace")) + 1
        raise SourceError("source contains a NUL byte", len(before), column)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        if any(_COOKIE.match(line) for line in _BYTE_LINES.split(data, maxsplit=2)[:2]):
            raise SourceError(
                f"invalid encoding declaration: {error.msg}", error.lineno or 1
            ) from None
        # No declaration: the first lines are not UTF-8, which Python reads by default.
        encoding = "utf-8"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        line = len(_BYTE_LINES.split(data[: error.start]))
        raise SourceError(
            f"not valid {encoding}: byte 0x{data[error.start]:02x} cannot be decoded "
            "(declare the encoding with a `# -*- coding: ... -*-` line)",
            line,
        ) from None
    except LookupError:
        raise SourceError(f"unknown encoding `{encoding}`") from None
    return text[1:] if text.startswith("\ufeff") else text


def read_source(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise SourceError(f"cannot read file: {error.strerror or error}") from None
    return decode_source(data)


def split_lines(text: str, *, keepends: bool = False) -> list[str]:
    """``text`` split into lines as Python's tokenizer does: at ``\\r\\n``, ``\\r`` and ``\\n``
    only. Unlike :meth:`str.splitlines`, a form feed, a vertical tab, U+0085 or U+2028 inside a
    line does not end it, so line numbers agree with the parsers'. The last line is kept even
    when empty (``"a\\n"`` -> ``["a", ""]``) unless ``keepends``."""
    if not keepends:
        return _LINE_BREAK.split(text)
    lines: list[str] = []
    start = 0
    for match in _LINE_BREAK.finditer(text):
        lines.append(text[start : match.end()])
        start = match.end()
    if start < len(text):
        lines.append(text[start:])
    return lines


def invalid_syntax(reason: str) -> str:
    """A ``TFL001`` message for a parser's ``reason``: ``invalid syntax: '(' was never
    closed``, and Python's own ``invalid syntax`` (or ``invalid syntax. Perhaps you forgot a
    comma?``) as it is, not ``invalid syntax: invalid syntax``."""
    return reason if reason.startswith("invalid syntax") else f"invalid syntax: {reason}"
