"""The results cache: a warm run with nothing changed reads and hashes files and nothing else.

Two JSON files per project root and settings, in a directory marked with ``CACHEDIR.TAG``:
``results-*.json`` keeps, for every linted file, the digest of its text and its findings after
suppressions, and for the whole run the digest of the project: every linted file and every
project module they import (:class:`Results`); ``index-*.json`` keeps the ``ast`` index of every
file, read only when some file has to be checked again. Findings are reused while the project
is unchanged: the whole-program facts make a file's findings depend on modules it does not
import (the values its callers pass, what a function returns to every caller), so editing any
module re-checks every file, from the cached indexes of those that did not change. The
settings, the tool's version and its own source files, and the set of files linted are part of
the key, so a file added or removed re-checks everything too.

Nothing in the cache can run code (no pickle: :mod:`.codec` rebuilds only this tool's
dataclasses, checked against their types), and nothing is trusted that this tool did not write:
each file carries a keyed digest (HMAC) made with a secret kept in the user's cache directory
(``$XDG_CACHE_HOME/tflint-leaks/secret``, mode 0600), so a cache committed to a repository or
copied from another machine is ignored. A cache that cannot be read, or fails either check, is
reported and ignored; one that cannot be written is reported and the run goes on.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tflint_leaks import __version__
from tflint_leaks.analysis.index import ModuleIndex, text_digest
from tflint_leaks.diagnostics import Diagnostic
from tflint_leaks.engine.atomic import write_bytes_atomic
from tflint_leaks.engine.codec import CodecError, from_json, to_json

FORMAT = "tflint-leaks-cache-3"
_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by tflint-leaks.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)
_SECRET_BYTES = 32


@dataclass(frozen=True)
class Entry:
    """What is kept for one file."""

    #: The digest of the file's text as read.
    digest: str
    #: The findings after suppressions, the warnings the file gave, the rules' tracebacks.
    diagnostics: tuple[Diagnostic, ...]
    warnings: tuple[str, ...]
    tracebacks: tuple[str, ...]


@dataclass(frozen=True)
class Results:
    """What ``results-*.json`` holds."""

    #: The digest of the project the entries were checked in (:func:`project_digest`).
    project: str
    #: (path, digest) of the project modules that were not linted but are imported.
    outside: tuple[tuple[str, str], ...]
    entries: dict[str, Entry]


def project_digest(linted: dict[str, str], outside: tuple[tuple[str, str], ...]) -> str:
    """One digest of every module of a run's project: the linted files and the modules they
    import that were not linted, each by path and digest."""
    modules = sorted({**linted, **dict(outside)}.items())
    return text_digest("\n".join(f"{path}\0{digest}" for path, digest in modules))


def _tool_fingerprint() -> str:
    """The version and the size and time of every source file of the tool: a development
    checkout that changes a rule invalidates the cache without a version bump."""
    package = Path(__file__).resolve().parent.parent
    stamps = []
    for directory, subdirectories, files in os.walk(package):
        subdirectories[:] = sorted(d for d in subdirectories if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                stat = (Path(directory) / name).stat()
                stamps.append(f"{directory}/{name}:{stat.st_size}:{stat.st_mtime_ns}")
    return text_digest("\n".join([__version__, FORMAT, *stamps]))


def secret_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tflint-leaks" / "secret"


def _secret(warnings: list[str]) -> bytes | None:
    """The key that signs caches this user's runs write, created on first use."""
    path = secret_path()
    try:
        data = path.read_bytes()
        if len(data) == _SECRET_BYTES:
            return data
    except FileNotFoundError:
        pass
    except OSError as error:
        warnings.append(f"cache key {path} cannot be read ({error.strerror}); caching is off")
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        key = secrets.token_bytes(_SECRET_BYTES)
        write_bytes_atomic(path, key, 0o600)
        return key
    except OSError as error:
        warnings.append(f"cache key {path} cannot be written ({error.strerror}); caching is off")
        return None


class Cache:
    def __init__(
        self, directory: Path, settings_key: str, paths: list[str], warnings: list[str]
    ) -> None:
        """``settings_key``: the :meth:`~tflint_leaks.config.Settings.cache_key` of every
        settings the files are linted with."""
        self.directory = directory
        key = text_digest("\0".join([_tool_fingerprint(), settings_key, *sorted(paths)]))
        self._results_path = directory / f"results-{key}.json"
        self._index_path = directory / f"index-{key}.json"
        self._warnings = warnings
        self._secret = _secret(warnings)
        self._stored = Results("", (), {})
        self._fresh: bool | None = None
        self._entries: dict[str, Entry] = {}
        self._outside: tuple[tuple[str, str], ...] = ()
        self._indexes: dict[str, ModuleIndex] | None = None
        self._new_indexes: dict[str, ModuleIndex] = {}
        self._changed = False
        if self._secret is not None:
            warned = len(warnings)
            self._stored = self._load(self._results_path, Results) or self._stored
            self._entries = dict(self._stored.entries)
            self._outside = self._stored.outside
            if len(warnings) > warned:
                self._indexes = {}  # one warning is enough: the index is not read either

    # -- files ---------------------------------------------------------------------------------

    def _sign(self, body: bytes) -> str:
        assert self._secret is not None
        return hmac.new(self._secret, body, hashlib.blake2b).hexdigest()

    def _load(self, path: Path, kind: Any) -> Any:
        try:
            data = path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None  # nothing cached yet (saving will say why if it cannot be written)
        except OSError as error:
            self._warnings.append(f"cache {path} cannot be read ({error.strerror}); ignored")
            return None
        header, newline, body = data.partition(b"\n")
        fields = header.decode("ascii", "replace").split(" ")
        if not newline or len(fields) != 2 or fields[0] != FORMAT:
            self._warnings.append(f"cache {path} is not a tflint-leaks cache; ignored")
            return None
        if not hmac.compare_digest(fields[1], self._sign(body)):
            self._warnings.append(
                f"cache {path} was not written by this user's tflint-leaks; ignored"
            )
            return None
        try:
            return from_json(kind, json.loads(body))
        except (CodecError, ValueError, RecursionError) as error:
            self._warnings.append(f"cache {path} is corrupt ({error}); ignored")
            return None

    def _dump(self, path: Path, value: object) -> None:
        body = json.dumps(to_json(value), separators=(",", ":")).encode()
        write_bytes_atomic(path, f"{FORMAT} {self._sign(body)}\n".encode() + body)

    # -- lookups -------------------------------------------------------------------------------

    def result(self, path: str, digest: str, digests: dict[str, str]) -> Entry | None:
        """The cached findings of ``path`` if the project they were checked in is unchanged:
        ``digests`` gives the current digest of every linted file, and the modules the last
        run imported from outside them are read again (once per run)."""
        if self._fresh is None:
            outside = tuple((p, _digest_on_disk(p)) for p, _ in self._stored.outside)
            self._fresh = bool(self._stored.project) and (
                project_digest(digests, outside) == self._stored.project
            )
        entry = self._entries.get(path)
        if not self._fresh or entry is None or entry.digest != digest:
            return None
        return entry

    def checked_in(self, outside: tuple[tuple[str, str], ...]) -> None:
        """The project modules, outside the linted files, that this run's files import (each
        with its digest): part of the project whose digest the saved entries carry."""
        self._outside = outside
        self._changed = True

    def index(self, path: str, digest: str) -> ModuleIndex | None:
        """The ``ast`` index of ``path`` if its text has not changed since it was cached."""
        if self._indexes is None:
            self._indexes = {}
            if self._secret is not None:
                self._indexes = self._load(self._index_path, dict[str, ModuleIndex]) or {}
        found = self._indexes.get(path)
        return found if found is not None and found.digest == digest else None

    # -- updates -------------------------------------------------------------------------------

    def store(self, path: str, entry: Entry, index: ModuleIndex | None) -> None:
        self._entries[path] = entry
        if index is not None:
            self._new_indexes[path] = index
        self._changed = True

    def store_index(self, path: str, index: ModuleIndex) -> None:
        """Keep a file's index (its findings came from the cache, its index did not)."""
        if self._indexes is None or self._indexes.get(path) is not index:
            self._new_indexes[path] = index
            self._changed = True

    def save(self, digests: dict[str, str]) -> None:
        """Write the cache if this run changed it (entries of files not linted are dropped):
        ``digests``, of every linted file, with the modules outside them, are its project."""
        if not self._changed or self._secret is None:
            return
        paths = set(digests)
        entries = {p: e for p, e in self._entries.items() if p in paths}
        results = Results(project_digest(digests, self._outside), self._outside, entries)
        indexes = {
            p: i for p, i in {**(self._indexes or {}), **self._new_indexes}.items() if p in paths
        }
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            tag = self.directory / "CACHEDIR.TAG"
            if not tag.exists():
                tag.write_text(_TAG, encoding="utf-8")
            gitignore = self.directory / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text("*\n", encoding="utf-8")
            self._dump(self._results_path, results)
            self._dump(self._index_path, indexes)
        except OSError as error:
            self._warnings.append(
                f"cache {self.directory} cannot be written ({error.strerror or error}); "
                "results were not cached"
            )


def _digest_on_disk(path: str) -> str:
    """The digest of a module that was not linted but is imported (read as Python would)."""
    from tflint_leaks.source import SourceError, read_source

    try:
        return text_digest(read_source(Path(path)))
    except SourceError:
        return ""
