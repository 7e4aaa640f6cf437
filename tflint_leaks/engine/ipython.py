"""A notebook cell as IPython runs it, without IPython: the Python it becomes, and where each
character of that Python came from in the cell.

IPython (``IPython.core.inputtransformer2.TransformerManager.transform_cell``) turns a cell into
Python in three stages, each reproduced here step by step:

1. clean-up: leading blank lines dropped, the common indentation removed (``textwrap.dedent``),
   ``>>>`` and ``In [1]:`` prompts stripped;
2. a cell magic (``%%name``) makes the whole cell one call; for the magics that run their body
   as Python in the user's namespace (``%%time``, ``%%capture``...) the body is the Python;
3. token by token, the first special syntax of the cell is replaced, and the cell tokenized
   again: ``x = %magic``, ``x = !cmd``, ``%magic``, ``!cmd``, ``!!cmd``, ``?obj``, ``obj?``,
   ``obj??`` and the auto-call escapes ``/f a``, ``,f a``, ``;f a`` -- only at the start of a
   logical line (so ``% (a, b)`` continuing a bracket is Python's ``%``), and continued over
   lines that end in a backslash.

Where IPython writes ``get_ipython().system('ls')``, the text here has ``...``: an expression
wherever IPython's call is one, so a cell is valid Python exactly when IPython's is, and no rule
looks into a shell command. The tests check this against IPython itself. Every edit keeps a map
from the Python back to the cell (:class:`Mapped`), so findings are reported where they are in
the cell, and a fix is applied only to text that was copied from the cell unchanged.
"""

from __future__ import annotations

import ast
import bisect
import re
import sys
import textwrap
import tokenize
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

#: Cell magics that run their body as Python in the notebook's namespace.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
#: What a standard IPython call (a magic, a shell command, help) becomes.
PLACEHOLDER = "..."
#: IPython gives up after this many token transformations.
_TRANSFORM_LIMIT = 500


class CellError(Exception):
    """IPython cannot turn the cell into Python (it would raise before running it)."""


@dataclass(frozen=True)
class Mapped:
    """A text made from a cell, and where each of its characters came from: ``runs`` are
    ``(start in text, origin in the cell, copied)``, sorted by start. A copied run maps
    character by character; every character of an inserted run maps to its origin (the start
    of the cell text it replaced)."""

    text: str
    runs: tuple[tuple[int, int, bool], ...]

    @classmethod
    def of(cls, text: str) -> Mapped:
        return cls(text, ((0, 0, True),))

    def _run(self, offset: int) -> tuple[int, int, int, bool]:
        """The run holding ``offset``: its start, end, origin and whether it is copied."""
        index = max(bisect.bisect_right(self.runs, (offset, sys.maxsize, True)) - 1, 0)
        start, origin, copied = self.runs[index]
        end = self.runs[index + 1][0] if index + 1 < len(self.runs) else len(self.text)
        return start, end, origin, copied

    def origin(self, offset: int) -> int:
        """Where the character at ``offset`` (or the end, at ``len(text)``) came from."""
        start, _, origin, copied = self._run(offset)
        return origin + (offset - start) if copied else origin

    def offset_of(self, origin: int) -> int | None:
        """Where the cell's character at ``origin`` is in the text, if it was copied."""
        for index, (start, run_origin, copied) in enumerate(self.runs):
            end = self.runs[index + 1][0] if index + 1 < len(self.runs) else len(self.text)
            if copied and run_origin <= origin < run_origin + end - start:
                return start + origin - run_origin
        return None

    def first_from(self, start: int, end: int) -> int | None:
        """Where the first character that came from the cell's ``start:end`` is in the text
        (copied, or text inserted in its place)."""
        for index, (run_start, origin, copied) in enumerate(self.runs):
            run_end = self.runs[index + 1][0] if index + 1 < len(self.runs) else len(self.text)
            if copied and origin < end and start < origin + run_end - run_start:
                return run_start + max(start - origin, 0)
            if not copied and start <= origin < end:
                return run_start
        return None

    def copied(self, start: int, end: int) -> bool:
        """Whether ``text[start:end]`` is one piece of the cell copied unchanged."""
        _, run_end, _, copied = self._run(start)
        return copied and end <= run_end

    def _pieces(self, start: int, end: int) -> Iterator[tuple[int, int, int, bool]]:
        """``text[start:end]`` as ``(start, end, origin, copied)`` pieces of runs."""
        position = start
        while position < end:
            run_start, run_end, origin, copied = self._run(position)
            stop = min(end, run_end)
            yield position, stop, origin + (position - run_start) if copied else origin, copied
            position = stop

    def edit(self, edits: Sequence[tuple[int, int, str]]) -> Mapped:
        """Replace each ``text[start:end]`` (sorted, not overlapping) with new text, which
        maps to the origin of ``start``."""
        builder = _Builder()
        position = 0
        for start, end, new in edits:
            for piece in self._pieces(position, start):
                builder.add(self.text[piece[0] : piece[1]], piece[2], piece[3])
            builder.add(new, self.origin(start), False)
            position = end
        for piece in self._pieces(position, len(self.text)):
            builder.add(self.text[piece[0] : piece[1]], piece[2], piece[3])
        return builder.build()

    def through(self, outer: Mapped) -> Mapped:
        """This text, made from ``outer.text``, mapped to where ``outer`` came from."""
        builder = _Builder()
        for start, end, origin, copied in self._pieces(0, len(self.text)):
            if not copied:
                builder.add(self.text[start:end], outer.origin(origin), False)
                continue
            for piece in outer._pieces(origin, origin + end - start):
                text = self.text[start + piece[0] - origin : start + piece[1] - origin]
                builder.add(text, piece[2], piece[3])
        return builder.build()

    def removing(self, shorter: str) -> Mapped:
        """This text after a clean-up that removed characters from the start of its lines
        (``shorter``): each ``\\n``-line of ``shorter`` is aligned with its line here from
        the right, so every character it kept maps exactly."""
        before = self.text.split("\n")
        after = shorter.split("\n")
        if len(before) != len(after):
            raise CellError("clean-up changed the number of lines")
        edits: list[tuple[int, int, str]] = []
        offset = 0
        for old, new in zip(before, after, strict=True):
            kept = len(old) - 1
            removed_to = len(old)
            for char in reversed(new):
                while kept >= 0 and old[kept] != char:
                    kept -= 1
                if kept < 0:
                    raise CellError("clean-up added characters")
                if kept + 1 < removed_to:
                    edits.append((offset + kept + 1, offset + removed_to, ""))
                removed_to = kept
                kept -= 1
            if removed_to > 0:
                edits.append((offset, offset + removed_to, ""))
            offset += len(old) + 1
        return self.edit(sorted(edits))


class _Builder:
    """Collects the pieces of a :class:`Mapped`, merging runs that continue each other."""

    def __init__(self) -> None:
        self._pieces: list[str] = []
        self._runs: list[tuple[int, int, bool]] = []
        self._length = 0

    def add(self, text: str, origin: int, copied: bool) -> None:
        if not text:
            return
        if self._runs:
            start, last_origin, last_copied = self._runs[-1]
            follows = last_origin + (self._length - start) == origin
            if copied and last_copied and follows:
                self._pieces.append(text)
                self._length += len(text)
                return
        self._runs.append((self._length, origin, copied))
        self._pieces.append(text)
        self._length += len(text)

    def build(self) -> Mapped:
        return Mapped("".join(self._pieces), tuple(self._runs) or ((0, 0, False),))


def _lines(text: str) -> list[str]:
    """Lines as IPython splits a cell (``str.splitlines``: also at form feeds and U+2028)."""
    return text.splitlines(keepends=True)


def _offsets(lines: Sequence[str]) -> list[int]:
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    return offsets


# -- 1. clean-up ---------------------------------------------------------------------------


def _leading_empty_lines(cell: Mapped) -> Mapped:
    lines = _lines(cell.text)
    for index, line in enumerate(lines):
        if line and not line.isspace():
            return cell.edit([(0, _offsets(lines)[index], "")]) if index else cell
    return cell


def _leading_indent(cell: Mapped) -> Mapped:
    if not cell.text:
        return cell
    dedented = "".join(_lines(textwrap.dedent(cell.text)))
    return cell if dedented == cell.text else cell.removing(dedented)


_CLASSIC_FIRST = re.compile(r"^>>>( |$)")
_CLASSIC = re.compile(r"^(>>>|\.\.\.)( |$)")
_DOCTEST_FIRST = re.compile(r"^\s*>>>")
_DOCTEST_PS1 = re.compile(r"^\s*>>>[ \t]?")
_DOCTEST_PS2 = re.compile(r"^\s*\.\.\.[ \t]?")
_TRIPLE_QUOTE = re.compile(r"(?<!\\)(\"\"\"|''')")
_STRING_PREFIX = re.compile(r"(?i)^[rubf]*$")
_IPYTHON_PROMPT = re.compile(
    r"^(((\[nav\]|\[ins\])?\ )?In\ \[\d+\]:\ |\s*\.{3,}:\ ?)",
)


def _triple_quoted(lines: Sequence[str]) -> list[bool]:
    """Which lines IPython considers inside a triple-quoted string (its heuristic)."""
    mask: list[bool] = []
    quote: str | None = None
    preserve = seen_prompt = False
    for line in lines:
        mask.append(quote is not None and preserve)
        for match in _TRIPLE_QUOTE.finditer(line):
            if quote is None:
                quote = match.group(1)
                before = line[: match.start()]
                stripped = _DOCTEST_PS2.sub("", _DOCTEST_PS1.sub("", before, count=1), count=1)
                prompted = stripped != before and seen_prompt
                preserve = bool(not prompted and _STRING_PREFIX.match(stripped.strip()))
                mask[-1] = preserve
            elif quote == match.group(1):
                quote, preserve = None, False
        seen_prompt = seen_prompt or bool(_DOCTEST_FIRST.match(line))
    return mask


def _doctest_prompts(lines: list[str]) -> list[str]:
    """IPython's classic-prompt stripper (``>>>``/``...`` pasted from a doctest)."""
    inside = _triple_quoted(lines)
    if not any(
        not quoted and _DOCTEST_FIRST.match(line)
        for line, quoted in zip(lines, inside, strict=True)
    ):
        return lines
    out: list[str] = []
    stripped: list[bool] = []
    for line, quoted in zip(lines, inside, strict=True):
        new = line
        if not quoted:
            for prompt in (_DOCTEST_PS1, _DOCTEST_PS2):
                if prompt.match(line):
                    new = prompt.sub("", line, count=1)
                    break
        out.append(new)
        stripped.append(new != line)
    result: list[str] = []
    start = 0
    while start < len(out):
        end = start
        while end < len(out) and inside[end] == inside[start]:
            end += 1
        segment = out[start:end]
        if not inside[start] and any(stripped[start:end]):
            segment = _lines(textwrap.dedent("".join(segment)))
        result.extend(segment)
        start = end
    return result


def _ipython_prompts(lines: list[str]) -> list[str]:
    if _IPYTHON_PROMPT.match(lines[0]) or (len(lines) > 1 and _IPYTHON_PROMPT.match(lines[1])):
        return [_IPYTHON_PROMPT.sub("", line, count=1) for line in lines]
    return lines


def _prompts(cell: Mapped, strip: Callable[[list[str]], list[str]]) -> Mapped:
    lines = _lines(cell.text)
    if not lines:
        return cell
    stripped = "".join(strip(lines))
    return cell if stripped == cell.text else cell.removing(stripped)


# -- 3. token transformations ----------------------------------------------------------------

_ESCAPES = frozenset({"!", "?", "%", ",", ";", "/"})
_CAUGHT = (
    "unterminated string literal",
    "invalid non-printable character",
    "after line continuation character",
    "invalid decimal literal",
    "invalid binary literal",
    "invalid octal literal",
    "invalid hexadecimal literal",
    "in binary literal",
    "in octal literal",
    "expected EOF",
)
_HELP_END = re.compile(
    r"(%{0,2}(?!\d)[\w*]+(\.(?!\d)[\w*]+|\[-?[0-9]+\])*)(\?\??)$",
)
Token = tokenize.TokenInfo


def _tokens(lines: list[str]) -> Iterator[Token]:
    """``tokenize`` over the lines, an error becoming one last error token, as IPython
    reads them."""
    seen: list[Token] = []
    try:
        for token in tokenize.generate_tokens(iter(lines).__next__):
            seen.append(token)
            yield token
    except tokenize.TokenError as error:
        if not any(caught in error.args[0] for caught in _CAUGHT):
            return
        if seen:
            start = (seen[-1].start[0], seen[-1].end[0])
            line = seen[-1].line
        else:
            start, line = (1, 0), ""
        yield Token(tokenize.ERRORTOKEN, "", start, start, line)


def _logical_lines(lines: list[str]) -> list[list[Token]]:
    grouped: list[list[Token]] = [[]]
    depth = 0
    for token in _tokens(lines):
        grouped[-1].append(token)
        if token.type == tokenize.NEWLINE or (token.type == tokenize.NL and depth <= 0):
            grouped.append([])
        elif token.type == tokenize.OP and token.string in {"(", "[", "{"}:
            depth += 1
        elif token.type == tokenize.OP and token.string in {")", "]", "}"} and depth > 0:
            depth -= 1
    if not grouped[-1]:
        grouped.pop()
    return grouped


def _assignment(line: list[Token]) -> int | None:
    depth = 0
    for index, token in enumerate(line):
        if token.string == "=" and depth == 0:
            return index
        if token.string in {"(", "[", "{"}:
            depth += 1
        elif token.string in {")", "]", "}"} and depth > 0:
            depth -= 1
    return None


@dataclass(frozen=True)
class _Found:
    """One piece of special syntax: where it starts, its priority, and how to replace it."""

    line: int
    column: int
    priority: int
    kind: str
    #: For ``obj?``: where the question mark is.
    end: tuple[int, int] = (0, 0)


def _find(grouped: list[list[Token]]) -> list[_Found]:
    found: list[_Found] = []
    for kind in ("magic-assign", "system-assign"):
        for line in grouped:
            at = _assignment(line)
            if at is None or len(line) < at + 2:
                continue
            following = line[at + 1]
            if kind == "magic-assign":
                if following.string == "%" and line[at + 2].type == tokenize.NAME:
                    found.append(_Found(following.start[0] - 1, following.start[1], 10, kind))
                    break
            elif not line[at].line.strip().startswith("="):
                start = _system_assign(line, at)
                if start is not None:
                    found.append(_Found(start[0] - 1, start[1], 10, kind))
                    break
    for line in grouped:
        index = 0
        while index < len(line) and line[index].type in {tokenize.INDENT, tokenize.DEDENT}:
            index += 1
        if line and index < len(line) and line[index].string in _ESCAPES:
            start = line[index].start
            found.append(_Found(start[0] - 1, start[1], 10, "escape"))
            break
    for line in grouped:
        if len(line) > 2 and line[-2].string == "?":
            index = 0
            while line[index].type in {tokenize.INDENT, tokenize.DEDENT}:
                index += 1
            start = line[index].start
            found.append(_Found(start[0] - 1, start[1], 5, "help-end", line[-2].start))
            break
    return sorted(found, key=lambda f: (f.line, f.column, f.priority))


def _system_assign(line: list[Token], at: int) -> tuple[int, int] | None:
    """Where ``!`` starts a system assignment (``x = !ls``), as the running Python tokenizes
    it (an error token before 3.12, an operator after)."""
    if sys.version_info >= (3, 12):
        following = line[at + 1]
        ok = following.type == tokenize.OP and following.string == "!"
        return following.start if ok else None
    index = at + 1
    while index < len(line) and line[index].type == tokenize.ERRORTOKEN:
        if line[index].string == "!":
            return line[index].start
        if not line[index].string.isspace():
            return None
        index += 1
    return None


def _continued_to(lines: list[str], start: int) -> int:
    end = start
    while lines[end].endswith("\\\n"):
        end += 1
        if end >= len(lines):
            break
    return end


def _assembled(lines: list[str], line: int, column: int, end: int) -> str:
    parts = [lines[line][column:], *lines[line + 1 : end + 1]]
    return " ".join([part.rstrip()[:-1] for part in parts[:-1]] + [parts[-1].rstrip()])


def _escaped(text: str) -> str | None:
    """What IPython writes for an escaped line: ``None`` for a standard call (a magic, a
    shell command, help), the call's text for the auto-call escapes (which call the user's
    code), or :class:`SyntaxError` when IPython refuses the line."""
    escape = text[:2] if text[:2] in {"!!", "??"} else text[:1]
    content = text[len(escape) :]
    name, _, args = content.partition(" ")
    if escape == ",":
        return '{}("{}")'.format(name, '", "'.join(args.split()))
    if escape == ";":
        return f'{name}("{args}")'
    if escape == "/":
        if not name:
            raise SyntaxError('"!" must be followed by a callable name')
        return "{}({})".format(name, ", ".join(args.split()))
    return None


def _transform(cell: Mapped, found: _Found) -> Mapped:
    """Replace one piece of special syntax, as IPython does: from its start to the end of its
    (backslash-continued) line becomes one line."""
    lines = _lines(cell.text)
    offsets = _offsets(lines)
    if found.kind == "help-end":
        piece = "".join(lines[found.line : found.end[0]])
        if not _HELP_END.search(piece[found.column :]):
            raise SyntaxError(piece)
        last = found.end[0] - 1
        call = None
    else:
        last = _continued_to(lines, found.line)
        text = _assembled(lines, found.line, found.column, last)
        call = _escaped(text) if found.kind == "escape" else None
    start = offsets[found.line] + found.column
    return cell.edit([(start, offsets[last + 1], (call or PLACEHOLDER) + "\n")])


def _token_transforms(cell: Mapped) -> Mapped:
    for _ in range(_TRANSFORM_LIMIT):
        candidates = _find(_logical_lines(_lines(cell.text)))
        for found in candidates:
            try:
                cell = _transform(cell, found)
            except SyntaxError:
                continue
            break
        else:
            return cell
    raise CellError(f"IPython gives up after {_TRANSFORM_LIMIT} transformations")


# -- the whole cell --------------------------------------------------------------------------


def transform(source: str) -> Mapped:
    """The Python IPython runs for the cell ``source`` (see the module's docs), mapped to
    ``source``. Raises :class:`CellError` when IPython would not run it; the Python may still
    not parse (:func:`python_of_cell` checks)."""
    cell = Mapped.of(source)
    if not source.endswith("\n"):
        cell = cell.edit([(len(source), len(source), "\n")])
    cell = _leading_empty_lines(cell)
    cell = _leading_indent(cell)
    cell = _prompts(cell, _doctest_prompts)
    cell = _prompts(cell, _ipython_prompts)
    lines = _lines(cell.text)
    if lines and lines[0].startswith("%%") and not re.match(r"%%\w+\?", lines[0]):
        name = lines[0][2:].rstrip().partition(" ")[0]
        if name not in PYTHON_CELL_MAGICS:
            return cell.edit([(0, len(cell.text), "")])
        body = cell.edit([(0, len(lines[0]), "")])
        return transform(body.text).through(body)
    return _token_transforms(cell)


def python_of_cell(source: str) -> Mapped:
    """The cell as Python, mapped to ``source``; raises :class:`SyntaxError` (with a position
    in ``source``) when IPython would not run it."""
    try:
        code = transform(source)
    except CellError as error:
        raise SyntaxError(str(error)) from None
    except SyntaxError as error:  # the tokenizer's (an unindent that matches nothing)
        raise SyntaxError(f"IPython cannot read the cell: {error.msg}") from None
    except (IndexError, ValueError, RecursionError) as error:  # IPython fails alike
        raise SyntaxError(f"IPython cannot read the cell: {error}") from None
    try:
        ast.parse(code.text)
    except SyntaxError as error:
        if _automagic(code.text):
            return code.edit([(0, len(code.text), PLACEHOLDER + "\n")])
        raise _in_source(error, code, source) from None
    except (ValueError, RecursionError, MemoryError) as error:
        raise SyntaxError(str(error)) from None
    return code


#: IPython's line magics (9.19: ``InteractiveShell().magics_manager.lsmagic()["line"]``, its
#: aliases for shell commands among them): with ``automagic`` on, as it is by default, a cell
#: of one line that starts with one of their names runs the magic
#: (``InteractiveShell.transform_cell`` hands one-line cells to the prefilter, whose
#: ``AutoMagicChecker`` makes ``cd C:\\data`` ``%cd C:\\data``), unless the line assigns to the
#: name (``cd = 3``) or the user's namespace binds it.
AUTOMAGICS = frozenset(
    {
        "alias", "alias_magic", "autoawait", "autocall", "automagic", "bookmark", "cat", "cd",
        "code_wrap", "colors", "conda", "config", "cp", "debug", "dhist", "dirs",
        "doctest_mode", "ed", "edit", "env", "gui", "hist", "history", "killbgscripts", "ldir",
        "lf", "lk", "ll", "load", "load_ext", "loadpy", "logoff", "logon", "logstart",
        "logstate", "logstop", "ls", "lsmagic", "lx", "macro", "magic", "mamba", "matplotlib",
        "micromamba", "mkdir", "mv", "notebook", "page", "pastebin", "pdb", "pdef", "pdoc",
        "pfile", "pinfo", "pinfo2", "pip", "popd", "pprint", "precision", "prun", "psearch",
        "psource", "pushd", "pwd", "pycat", "pylab", "quickref", "recall", "rehashx",
        "reload_ext", "rep", "rerun", "reset", "reset_selective", "rm", "rmdir", "run", "save",
        "sc", "set_env", "sx", "system", "tb", "time", "timeit", "unalias", "unload_ext", "uv",
        "who", "who_ls", "whos", "xdel", "xmode",
    }
)  # fmt: skip


def _automagic(python: str) -> bool:
    """``python``, which does not parse, is one line that IPython runs as a line magic by
    its name alone (:data:`AUTOMAGICS`): ``cd C:\\Users\\me``. A line that parses is left as
    Python (a name the user bound runs as Python too, and no rule looks into a magic)."""
    lines = python.splitlines()
    if len(lines) != 1:
        return False
    name, _, rest = lines[0].partition(" ")
    return name in AUTOMAGICS and not rest.lstrip().startswith(("=", ","))


def _in_source(error: SyntaxError, code: Mapped, source: str) -> SyntaxError:
    """``error`` (a position in the Python) moved to where it is in the cell."""
    from tflint_leaks.source import split_lines

    lines = split_lines(code.text, keepends=True)
    line = min(max((error.lineno or 1) - 1, 0), max(len(lines) - 1, 0))
    offset = sum(len(text) for text in lines[:line]) + max((error.offset or 1) - 1, 0)
    origin = code.origin(min(offset, len(code.text)))
    before = split_lines(source[:origin])
    moved = SyntaxError(error.msg)
    moved.lineno, moved.offset = len(before), len(before[-1]) + 1
    return moved
