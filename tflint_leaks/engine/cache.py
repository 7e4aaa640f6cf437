"""The results cache: a warm run with nothing changed re-reads files but parses none.

One file per project root and settings, in a directory marked with ``CACHEDIR.TAG``. For every
linted file it keeps the indexed file (so an unchanged file is not parsed again) and the file's
findings before suppressions, under a key made of the tool version, the settings, the file's
content and the content of every project module it imports -- so editing ``steps.py``
re-checks ``train.py``, which imports a ``tf.function`` from it. A cache that cannot be read
is reported and ignored; one that cannot be written is reported and the run goes on.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tflint_leaks import __version__
from tflint_leaks.analysis.index import text_digest
from tflint_leaks.analysis.project import ProjectIndex
from tflint_leaks.config import Settings
from tflint_leaks.diagnostics import Diagnostic
from tflint_leaks.engine.fixes import write_bytes_atomic

if TYPE_CHECKING:
    from tflint_leaks.engine.indexing import ParsedFile

DEFAULT_DIRECTORY = ".tflint-leaks-cache"
_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by tflint-leaks.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)
_MAGIC = b"tflint-leaks-cache-1\n"


def _digest(*parts: str) -> str:
    return text_digest("\0".join(parts))


@dataclass
class Entry:
    """What is kept for one file."""

    #: The digest of the file's text as read, and the file indexed from it.
    source_digest: str
    parsed: ParsedFile
    #: The key the findings were computed under, and the findings (before suppressions).
    result_key: str = ""
    diagnostics: list[Diagnostic] = field(default_factory=list)
    tracebacks: list[str] = field(default_factory=list)


class Cache:
    def __init__(self, directory: Path, settings: Settings, warnings: list[str]) -> None:
        self.directory = directory
        self._settings_key = _digest(__version__, settings.cache_key())
        self._path = directory / f"{__version__}-{self._settings_key}.pickle"
        self._warnings = warnings
        self._entries: dict[str, Entry] = {}
        self._changed = False
        self._load()

    def _load(self) -> None:
        try:
            data = self._path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return  # nothing cached yet (saving will say why if it cannot be written)
        except OSError as error:
            self._warnings.append(f"cache {self._path} cannot be read ({error.strerror}); ignored")
            return
        try:
            if not data.startswith(_MAGIC):
                raise ValueError("not a tflint-leaks cache")
            entries = pickle.loads(data[len(_MAGIC) :])
            if not isinstance(entries, dict):
                raise ValueError("unexpected content")
        except Exception as error:
            self._warnings.append(f"cache {self._path} is corrupt ({error}); ignored")
            return
        self._entries = entries

    # -- lookups -------------------------------------------------------------------------------

    def parsed(self, path: str, source_digest: str) -> ParsedFile | None:
        """The indexed file, if its text has not changed since it was cached."""
        entry = self._entries.get(path)
        return entry.parsed if entry is not None and entry.source_digest == source_digest else None

    def result_key(self, parsed: ParsedFile, project: ProjectIndex) -> str:
        """What the file's findings depend on: the settings, its text, and the text of every
        project module it imports."""
        dependencies = project.dependencies(parsed.index)
        return _digest(
            self._settings_key, parsed.index.digest, *(f"{m.path}={m.digest}" for m in dependencies)
        )

    def results(self, path: str, key: str) -> tuple[list[Diagnostic], list[str]] | None:
        entry = self._entries.get(path)
        if entry is None or entry.result_key != key:
            return None
        return entry.diagnostics, entry.tracebacks

    # -- updates -------------------------------------------------------------------------------

    def store(
        self,
        source_digest: str,
        parsed: ParsedFile,
        key: str,
        diagnostics: list[Diagnostic],
        tracebacks: list[str],
    ) -> None:
        self._entries[parsed.path] = Entry(source_digest, parsed, key, diagnostics, tracebacks)
        self._changed = True

    def forget_missing(self, paths: set[str]) -> None:
        """Drop entries of files this run did not see (deleted or excluded)."""
        kept = {p: e for p, e in self._entries.items() if p in paths}
        self._changed = self._changed or len(kept) != len(self._entries)
        self._entries = kept

    def save(self) -> None:
        """Write the cache if this run changed it."""
        if not self._changed:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            tag = self.directory / "CACHEDIR.TAG"
            if not tag.exists():
                tag.write_text(_TAG, encoding="utf-8")
            gitignore = self.directory / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text("*\n", encoding="utf-8")
            payload = _MAGIC + pickle.dumps(self._entries, protocol=pickle.HIGHEST_PROTOCOL)
            write_bytes_atomic(self._path, payload)
        except OSError as error:
            self._warnings.append(
                f"cache {self.directory} cannot be written ({error.strerror or error}); "
                "results were not cached"
            )
