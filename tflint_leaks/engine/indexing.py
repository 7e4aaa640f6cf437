"""Read and index one file with the standard ``ast`` (the cheap first pass over every file)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from pathlib import Path

from tflint_leaks.analysis.eras import CodePin, magic_pin
from tflint_leaks.analysis.index import ModuleIndex, index_source, text_digest, with_imports
from tflint_leaks.analysis.project import ProjectIndex
from tflint_leaks.diagnostics import Diagnostic
from tflint_leaks.engine.notebook import (
    Notebook,
    NotebookError,
    is_notebook,
    read_ipython_script,
    read_notebook,
)
from tflint_leaks.engine.relevance import Statement, module_statements
from tflint_leaks.registry import SYNTAX_ERROR
from tflint_leaks.source import SourceError, invalid_syntax, read_source, split_lines


@dataclass
class ParsedFile:
    path: str
    text: str
    index: ModuleIndex
    #: For a notebook: where each code cell sits in ``text`` (the joined cells).
    notebook: Notebook | None = None
    #: The module-level statements, when the file was parsed here (not read from the cache).
    statements: tuple[Statement, ...] | None = None


def unreadable(path: str, error: SourceError) -> Diagnostic:
    return SYNTAX_ERROR.at(path, error.message, error.line, error.column)


def index_file(path: Path, text: str | None = None) -> ParsedFile | Diagnostic:
    """Read and index one file, or say why it cannot be linted. ``text`` is the file's content
    when it is not read from disk (an editor's unsaved buffer)."""
    shown = str(path)
    cells = None
    try:
        if text is None:
            text = read_source(path)
        if is_notebook(path):
            cells = read_notebook(path, text)
            text = cells.text
        try:
            tree = ast.parse(text, filename=shown)
        except SyntaxError:
            # A script exported from a notebook: its IPython lines as IPython runs them.
            cells = None if cells is not None else read_ipython_script(path, text)
            if cells is None:
                raise
            text = cells.text
            tree = ast.parse(text, filename=shown)
    except NotebookError as error:
        return SYNTAX_ERROR.at(shown, str(error))
    except SourceError as error:
        return unreadable(shown, error)
    except SyntaxError as error:
        return SYNTAX_ERROR.at(
            shown, invalid_syntax(error.msg), error.lineno or 1, error.offset or 1
        )
    except UnicodeEncodeError as error:  # a lone surrogate (an editor's buffer, not a file)
        assert text is not None
        before = split_lines(text[: error.start])
        character = f"U+{ord(text[error.start]):04X}"
        message = f"not valid Unicode: a lone surrogate {character}"
        return SYNTAX_ERROR.at(shown, message, len(before), len(before[-1]) + 1)
    except (RecursionError, MemoryError):
        return SYNTAX_ERROR.at(shown, "too deeply nested to parse")
    index = index_source(text, path, tree, said=said_in(cells))
    return ParsedFile(shown, text, index, cells, module_statements(tree))


def said_in(notebook: Notebook | None) -> tuple[CodePin, ...]:
    """The versions a notebook's IPython lines select (:func:`~tflint_leaks.analysis.eras.
    magic_pin`), each on its line of the joined text, and the Keras its saved outputs say it
    ran (:func:`~tflint_leaks.analysis.eras.banner_pin`)."""
    if notebook is None:
        return ()
    found = [] if notebook.banner is None else [notebook.banner]
    for cell in notebook.cells:
        lines = split_lines(cell.source)
        for number in cell.replaced_lines():
            pin = magic_pin(lines[number - 1], cell.joined_line(number))
            if pin is not None:
                found.append(pin)
    return tuple(found)


def with_library_aliases(
    parsed: dict[str, ParsedFile], project: ProjectIndex
) -> tuple[dict[str, ParsedFile], ProjectIndex]:
    """``parsed`` with each file that imports a library's name through the project's
    re-exports (``from xuance.tensorflow import tf``) indexed again reading that name as the
    library's, and ``project`` (which holds them) with those files' new indexes.
    The facts read from the names of calls (``@tf.function``, ``tf.keras.Sequential``) are then
    the same as with ``import tensorflow as tf``."""
    changed: dict[str, ParsedFile] = {}
    for path in sorted(parsed):
        known = parsed[path]
        aliases = project.library_aliases(known.index)
        if not aliases:
            continue
        index = known.index
        if any(_namespace(target) for target in aliases.values()):
            index = index_source(
                known.text, Path(path), aliases=aliases, said=said_in(known.notebook)
            )
        # The questions asked later read the imports too, whatever the index's own facts do.
        changed[path] = replace(known, index=with_imports(index, aliases))
    if not changed:
        return parsed, project
    modules = [changed[m.path].index if m.path in changed else m for m in project.modules()]
    return {**parsed, **changed}, ProjectIndex(modules)


#: The packages whose namespaces the index reads names from (``tf.function``, ``K.function``).
_FRAMEWORKS = frozenset({"tensorflow", "keras", "tf_keras"})


def _namespace(target: str) -> bool:
    """An alias worth indexing a file again for: a TensorFlow or Keras namespace (``tensorflow``,
    ``tensorflow.compat.v1``, ``tensorflow.keras.backend``), whose members the index's own facts
    are about. A deeper name (``tensorflow.python.saved_model...KerasModeKeys``, tf-keras's
    re-exported ``dtensor``, FastAPI's ``APIRouter`` through a project module) changes none of
    them, and indexing a file again costs as much as indexing it (tf-keras: 13 large files,
    0.25 s): such an alias only replaces the import the later questions read."""
    parts = target.split(".")
    return parts[0] in _FRAMEWORKS and len(parts) <= 3


class Indexes:
    """One ``ast`` index per file, kept while its text is unchanged: a caller that asks again
    and again (the editor server, on every lint) parses a file only when its text changed,
    whether the text comes from the disk or from an editor's buffer."""

    def __init__(self) -> None:
        self._known: dict[str, tuple[str, ParsedFile | Diagnostic]] = {}

    def parsed(self, path: Path, text: str) -> ParsedFile | Diagnostic:
        """:func:`index_file` of ``path`` with content ``text``, done once per text."""
        digest = text_digest(text)
        known = self._known.get(str(path))
        if known is None or known[0] != digest:
            known = (digest, index_file(path, text))
            self._known[str(path)] = known
        return known[1]

    def index(self, path: Path, text: str) -> ModuleIndex | None:
        """The index of ``path`` with content ``text``; None when it cannot be indexed (it
        does not parse: linting it says why)."""
        return _index_of(self.parsed(path, text))

    def known(self, path: Path) -> ModuleIndex | None:
        """The index of ``path``'s text as last given."""
        known = self._known.get(str(path))
        return _index_of(known[1]) if known is not None else None

    def forget(self, path: Path) -> None:
        self._known.pop(str(path), None)


def _index_of(parsed: ParsedFile | Diagnostic) -> ModuleIndex | None:
    return None if isinstance(parsed, Diagnostic) else parsed.index
