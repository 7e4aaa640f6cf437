"""The TensorFlow and Keras a project runs, read from its pins, as Ruff reads ``target-version``
from ``requires-python``.

:func:`project_root` is the directory whose pin files count for a linted file: the nearest
directory at or above it holding one of :data:`PIN_FILES` (``pyproject.toml``, ``setup.py``,
``setup.cfg``, ``Pipfile``, ``environment.yml``), a ``requirements*.txt`` /
``constraints*.txt`` or a conda environment file by another name (``treevae.yml``); the
search stops at a repository's root (a directory with ``.git`` or
``.hg``), so a stray file above the repository never counts. :func:`read_pins` reads every pin
file in that directory -- statically: TOML with ``tomllib``, ``setup.cfg`` with
``configparser``, ``setup.py`` with ``ast`` (only literal lists, never executed), requirements
files line by line (``-r``/``-c`` includes, relative to the including file, cycles and missing
files noted) and conda environment files as the small YAML subset conda files use (a YAML library
would be a new dependency of the static linter for three constructs) -- into a
:class:`Frameworks`: for TensorFlow (every distribution: ``tensorflow``, ``tensorflow-gpu``,
``tf-nightly``...), the standalone ``keras`` and ``tf-keras``, the versions allowed and the
places that say so.

:func:`read_documented` reads what the nearest README states (requirement lines and install
commands, never prose) and what the Dockerfiles beside it install (``pip install`` and ``conda
install`` commands, wheels, TensorFlow's images), which narrows what the pins and the code
allow (they decide where it contradicts them); a project that installs Theano and
multi-backend Keras, not TensorFlow, runs its Keras on Theano
(:attr:`Frameworks.keras_on_theano`).

Every requirement found is a constraint on the one environment the project runs in, so the
versions allowed are the intersection of what each file (and each extra, each dependency group)
allows; lines with an environment marker are alternatives (a marker cannot be evaluated here:
the Python that runs the linter is not the one that runs the project), and count as the
smallest range holding them all. Pins that contradict each other allow the smallest range
holding them all too: the project runs one of the versions its files name (a note says so).
A ``target-tensorflow`` / ``target-keras`` setting replaces what the files say.

:class:`Versions` is what a rule declares about where its reason holds (the registry's
``versions``); :meth:`Versions.applies` decides it for one file.
"""

from __future__ import annotations

import ast
import codecs
import configparser
import enum
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

Release = tuple[int, ...]

#: Pin files by name (``requirements*.txt`` and ``constraints*.txt`` count too).
PIN_FILES = (
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "Pipfile",
    "environment.yml",
    "environment.yaml",
)
_REPOSITORY_MARKERS = (".git", ".hg")

#: The distributions (PEP 503 normalised names) of each framework.
TENSORFLOW = frozenset(
    {
        "tensorflow",
        "tensorflow-cpu",
        "tensorflow-gpu",
        "tensorflow-base",
        "tensorflow-mkl",
        "tensorflow-eigen",
        "tensorflow-macos",
        "tensorflow-intel",
        "tensorflow-aarch64",
        "tensorflow-rocm",
        "intel-tensorflow",
        "tf-nightly",
        "tf-nightly-cpu",
        "tf-nightly-gpu",
    }
)
KERAS = frozenset({"keras", "keras-gpu", "keras-nightly"})
TF_KERAS = frozenset({"tf-keras", "tf-keras-nightly"})
#: Theano: multi-backend Keras (before 2.4) runs on it instead of TensorFlow when a project
#: installs it and not TensorFlow.
THEANO = frozenset({"theano", "theano-pymc"})

#: Each framework read from pins: its family, its label in messages, its distributions.
_FAMILIES = (
    ("tensorflow", "TensorFlow", TENSORFLOW),
    ("keras", "keras", KERAS),
    ("tf-keras", "tf-keras", TF_KERAS),
    ("theano", "Theano", THEANO),
)

#: What an unpinned nightly is at least: newer than every release, and every release since
#: 2019 is TensorFlow 2 (and every ``keras-nightly`` since 2023 is Keras 3).
_NIGHTLY_FLOOR: dict[str, Release] = {
    "tf-nightly": (2,),
    "tf-nightly-cpu": (2,),
    "tf-nightly-gpu": (2,),
    "keras-nightly": (3,),
}


def _normalised(release: Release) -> Release:
    """``(1, 14, 0)`` -> ``(1, 14)``: trailing zeros do not change a version."""
    end = len(release)
    while end > 1 and release[end - 1] == 0:
        end -= 1
    return release[:end]


def _successor(release: Release) -> Release:
    """The first release after every ``release.*``: ``(1, 14)`` -> ``(1, 15)``."""
    return (*release[:-1], release[-1] + 1)


_VERSION = re.compile(
    r"v?(?:\d+!)?(?P<release>\d+(?:\.\d+)*)(?P<suffix>[-_.]?[A-Za-z][A-Za-z0-9.]*|[-_.]\d+)?"
    r"(?:\+[A-Za-z0-9.]+)?",
    re.IGNORECASE,
)


def parse_release(text: str) -> Release | None:
    """The release numbers of a PEP 440 version (``1.14.0rc1`` -> ``(1, 14, 0)``; a pre-release
    counts as its release), or None when ``text`` is not a version."""
    match = _VERSION.fullmatch(text.strip())
    if match is None:
        return None
    return tuple(int(part) for part in match.group("release").split("."))


def _text(release: Release) -> str:
    return ".".join(str(part) for part in release)


@dataclass(frozen=True)
class Bound:
    release: Release
    inclusive: bool


@dataclass(frozen=True)
class VersionRange:
    """The versions between ``low`` and ``high`` (None: unbounded). ``VersionRange()`` is every
    version."""

    low: Bound | None = None
    high: Bound | None = None

    @staticmethod
    def series(release: Release) -> VersionRange:
        """``1.14.*``: every version whose release starts with ``release``."""
        return VersionRange(
            Bound(_normalised(release), True), Bound(_normalised(_successor(release)), False)
        )

    @property
    def empty(self) -> bool:
        if self.low is None or self.high is None:
            return False
        if self.low.release != self.high.release:
            return self.low.release > self.high.release
        return not (self.low.inclusive and self.high.inclusive)

    def intersect(self, other: VersionRange) -> VersionRange:
        low = max(
            (b for b in (self.low, other.low) if b is not None),
            key=lambda b: (b.release, not b.inclusive),
            default=None,
        )
        high = min(
            (b for b in (self.high, other.high) if b is not None),
            key=lambda b: (b.release, b.inclusive),
            default=None,
        )
        return VersionRange(low, high)

    def hull(self, other: VersionRange) -> VersionRange:
        """The smallest range holding both."""
        low = (
            None
            if self.low is None or other.low is None
            else min(self.low, other.low, key=lambda b: (b.release, not b.inclusive))
        )
        high = (
            None
            if self.high is None or other.high is None
            else max(self.high, other.high, key=lambda b: (b.release, b.inclusive))
        )
        return VersionRange(low, high)

    def meets(self, other: VersionRange) -> bool:
        """Some version is in both."""
        return not self.intersect(other).empty

    def below(self, release: Release) -> bool:
        """Every version in the range is before ``release``."""
        limit = _normalised(release)
        high = self.high
        return high is not None and (
            high.release < limit or (high.release == limit and not high.inclusive)
        )

    def at_least(self, release: Release) -> bool:
        """Every version in the range is ``release`` or later."""
        return self.low is not None and self.low.release >= _normalised(release)

    def __str__(self) -> str:
        low, high = self.low, self.high
        if low is None and high is None:
            return "any version"
        if low is not None and high is not None and low == high:
            return f"=={_text(low.release)}"
        parts = []
        if low is not None:
            parts.append(f"{'>=' if low.inclusive else '>'}{_text(low.release)}")
        if high is not None:
            parts.append(f"{'<=' if high.inclusive else '<'}{_text(high.release)}")
        return ",".join(parts)


EVERY_VERSION = VersionRange()

_CLAUSE = re.compile(r"\s*(?P<op>~=|===|==|!=|<=|>=|<|>)\s*(?P<version>[^\s,]+)\s*")


def specifier_range(text: str) -> VersionRange | None:
    """The versions a PEP 440 specifier set allows (``>=1.13,<2``, ``==1.14.*``, ``~=2.4``);
    ``!=`` clauses are ignored (they never change which major version runs). None when
    ``text`` is not a specifier set. An empty ``text`` allows every version."""
    allowed = EVERY_VERSION
    for clause in text.split(","):
        if not clause.strip():
            if text.strip():
                return None
            continue
        match = _CLAUSE.fullmatch(clause)
        if match is None:
            return None
        found = _clause_range(match.group("op"), match.group("version"))
        if found is None:
            return None
        allowed = allowed.intersect(found)
    return allowed


def _clause_range(op: str, version: str) -> VersionRange | None:
    wildcard = version.endswith(".*")
    release = parse_release(version[:-2] if wildcard else version)
    if release is None or (wildcard and op not in {"==", "!="}):
        return None
    point = Bound(_normalised(release), True)
    if op == "!=":
        return EVERY_VERSION
    if op in {"==", "==="}:
        return VersionRange.series(release) if wildcard else VersionRange(point, point)
    if op == "~=":
        prefix = release[:-1] if len(release) > 1 else release
        return VersionRange(point, Bound(_normalised(_successor(prefix)), False))
    if op == ">=":
        return VersionRange(low=point)
    if op == ">":
        return VersionRange(low=Bound(point.release, False))
    if op == "<=":
        return VersionRange(high=point)
    return VersionRange(high=Bound(point.release, False))  # "<"


def poetry_range(text: str) -> VersionRange | None:
    """The versions a Poetry constraint allows: ``^1.15``, ``~1.15``, ``1.15.*``, ``*``, a
    bare version (exact), PEP 440 clauses, ``,`` for and, ``||`` for or (the range holding
    every alternative)."""
    found: VersionRange | None = None
    for alternative in text.split("||"):
        allowed = EVERY_VERSION
        tight = re.sub(r"([<>=!~^]+)\s+", r"\1", alternative.strip())
        for clause in re.split(r"[,\s]+", tight):
            one = _poetry_clause(clause.strip())
            if one is None:
                return None
            allowed = allowed.intersect(one)
        found = allowed if found is None else found.hull(allowed)
    return found


def _poetry_clause(clause: str) -> VersionRange | None:
    if clause in {"", "*"}:
        return EVERY_VERSION
    if clause[0] in "^~" and not clause.startswith("~="):
        release = parse_release(clause[1:])
        if release is None:
            return None
        if clause[0] == "^":
            first = next((i for i, part in enumerate(release) if part), len(release) - 1)
            upper = _successor(release[: first + 1])
        else:
            upper = _successor(release[:2] if len(release) > 1 else release)
        return VersionRange(Bound(_normalised(release), True), Bound(_normalised(upper), False))
    if clause[0].isdigit():
        clause = f"=={clause}"
    return specifier_range(clause)


def conda_range(rest: str) -> VersionRange | None:
    """The versions a conda match spec allows, from what follows the package name: ``=1.14``
    and ``1.14`` (fuzzy: ``1.14.*``), ``==1.14.0`` (exact), ``>=1.13,<2``, ``|`` for or; a
    build string after the version (``=1.14.0=gpu_py36``, `` 1.14 py36_0``) is ignored."""
    if not rest.strip():
        return EVERY_VERSION
    if rest[0].isspace():
        expression = rest.split(maxsplit=1)[0]
    elif rest.startswith("=") and not rest.startswith("=="):
        expression = rest[1:].split("=", 1)[0]
    else:
        expression = rest.strip()
    found: VersionRange | None = None
    for alternative in expression.split("|"):
        allowed = EVERY_VERSION
        for written in alternative.split(","):
            clause = written.strip()
            if clause[:1].isdigit():  # a bare version: fuzzy
                clause = f"=={clause.removesuffix('.*')}.*"
            one = specifier_range(clause)
            if one is None:
                return None
            allowed = allowed.intersect(one)
        found = allowed if found is None else found.hull(allowed)
    return found


def _name(text: str) -> str:
    """A distribution name, PEP 503 normalised (``TensorFlow_GPU`` -> ``tensorflow-gpu``)."""
    return re.sub(r"[-_.]+", "-", text).lower()


def _family(distribution: str) -> str | None:
    return next((family for family, _, names in _FAMILIES if distribution in names), None)


@dataclass(frozen=True)
class _Found:
    """One requirement on a framework, as one file states it."""

    distribution: str
    versions: VersionRange
    #: Where: ``path:line``, or ``path: table.key`` for files read as tables.
    where: str
    #: The list it belongs to (a file, an extra, a dependency group): its lines combine first.
    group: str
    #: It has an environment marker: an alternative of the group's other marked lines.
    marked: bool


class _Reader:
    """Collects the framework requirements of every pin file of one project root."""

    def __init__(self) -> None:
        self.found: list[_Found] = []
        self.notes: list[str] = []
        self._seen: set[str] = set()

    def add(
        self,
        distribution: str,
        versions: VersionRange | None,
        where: str,
        group: str,
        *,
        marked: bool = False,
        text: str = "",
    ) -> None:
        name = _name(distribution)
        if _family(name) is None:
            return
        if versions is None:
            self.notes.append(f"{where}: cannot read the version in `{text}`; taken as any")
            versions = EVERY_VERSION
        if versions == EVERY_VERSION and name in _NIGHTLY_FLOOR:
            versions = VersionRange(low=Bound(_NIGHTLY_FLOOR[name], True))
        self.found.append(_Found(name, versions, where, group, marked))

    def requirement(self, text: str, where: str, group: str) -> None:
        """A PEP 508 requirement: ``name[extras] specifiers ; marker`` (or ``name @ url``)."""
        requirement, _, marker = text.partition(";")
        match = _REQUIREMENT.fullmatch(requirement.strip())
        if match is None:
            return
        rest = match.group("rest").strip()
        if rest.startswith("@"):
            versions: VersionRange | None = EVERY_VERSION  # a direct URL: no version to read
        else:
            versions = specifier_range(rest.removeprefix("(").removesuffix(")"))
        self.add(
            match.group("name"), versions, where, group, marked=bool(marker.strip()), text=text
        )

    def read(self, path: Path) -> str | None:
        try:
            return decoded(path.read_bytes())
        except OSError as error:
            self.notes.append(f"{path}: cannot read: {error.strerror}")
        except UnicodeDecodeError:
            self.notes.append(f"{path}: cannot read: not UTF-8 or UTF-16 with a byte order mark")
        return None

    # -- requirements files ----------------------------------------------------------------

    def requirements_file(self, path: Path) -> None:
        """A pip requirements file; ``-r``/``-c`` files are read too, relative to it, each
        once (an include cycle ends where it closes)."""
        key = os.path.realpath(path)
        if key in self._seen:
            return
        self._seen.add(key)
        text = self.read(path)
        if text is not None:
            self.requirement_lines(_logical_lines(text), path, str(path))

    def requirement_lines(self, lines: Iterable[tuple[int, str]], path: Path, group: str) -> None:
        for number, line in lines:
            include = _INCLUDE.fullmatch(line)
            if include is not None:
                target = path.parent / include.group("file")
                if target.is_file():
                    self.requirements_file(target)
                else:
                    self.notes.append(f"{path}:{number}: `{line}`: no such file")
            elif not line.startswith("-"):  # other options: -e, --index-url, -f, ...
                self.requirement(_PER_REQUIREMENT_OPTIONS.split(line)[0], f"{path}:{number}", group)

    # -- tables: pyproject.toml, Pipfile, setup.cfg --------------------------------------------

    def toml(self, path: Path) -> dict[str, Any] | None:
        text = self.read(path)
        if text is None:
            return None
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            self.notes.append(f"{path}: invalid TOML: {error}")
            return None

    def pyproject(self, path: Path) -> None:
        data = self.toml(path)
        if data is None:
            return
        project = _table(data.get("project"))
        lists: list[tuple[str, object]] = [("project.dependencies", project.get("dependencies"))]
        for section, table in (
            ("project.optional-dependencies", _table(project.get("optional-dependencies"))),
            ("dependency-groups", _table(data.get("dependency-groups"))),
            ("tool.pdm.dev-dependencies", _table(_nested(data, "tool", "pdm", "dev-dependencies"))),
        ):
            lists.extend((f"{section}.{name}", value) for name, value in table.items())
        for key, value in lists:
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, str):
                        self.requirement(item, f"{path}: {key}", f"{path}: {key}")
        poetry = _table(_nested(data, "tool", "poetry"))
        tables = [("tool.poetry.dependencies", _table(poetry.get("dependencies")))]
        for name, group in _table(poetry.get("group")).items():
            key = f"tool.poetry.group.{name}.dependencies"
            tables.append((key, _table(_table(group).get("dependencies"))))
        for key, table in tables:
            self.versions_table(table, f"{path}: {key}", poetry_range)

    def pipfile(self, path: Path) -> None:
        data = self.toml(path)
        if data is not None:
            for key in ("packages", "dev-packages"):
                self.versions_table(_table(data.get(key)), f"{path}: {key}", _pipfile_range)

    def versions_table(
        self, table: Mapping[str, object], where: str, parse: Callable[[str], VersionRange | None]
    ) -> None:
        """``name = "constraint"``, ``name = {version = ..., markers = ...}`` or a list of
        such tables (alternatives), as Poetry and Pipfile write them."""
        for name, value in table.items():
            entries = value if isinstance(value, list) else [value]
            for entry in entries:
                if isinstance(entry, str):
                    self.add(name, parse(entry), where, where, text=f"{name} = {entry!r}")
                elif isinstance(entry, dict):
                    version = entry.get("version", "*")
                    marked = isinstance(value, list) or any(
                        key in entry for key in ("markers", "python", "platform", "sys_platform")
                    )
                    versions = parse(version) if isinstance(version, str) else None
                    self.add(name, versions, where, where, marked=marked, text=f"{name}")

    def setup_cfg(self, path: Path) -> None:
        text = self.read(path)
        if text is None:
            return
        parser = configparser.RawConfigParser(strict=False)
        try:
            parser.read_string(text, str(path))
        except configparser.Error as error:
            self.notes.append(f"{path}: invalid setup.cfg: {error}".splitlines()[0])
            return
        lists: list[tuple[str, str]] = []
        if parser.has_option("options", "install_requires"):
            lists.append(("options.install_requires", parser.get("options", "install_requires")))
        if parser.has_section("options.extras_require"):
            lists.extend(
                (f"options.extras_require.{extra}", value)
                for extra, value in parser.items("options.extras_require")
            )
        for key, value in lists:
            for written in value.splitlines():
                line = _COMMENT.sub("", written).strip()
                if line:
                    self.requirement(line, f"{path}: {key}", f"{path}: {key}")

    # -- setup.py, environment.yml ---------------------------------------------------------------

    def setup_py(self, path: Path) -> None:
        """``setup(install_requires=[...], extras_require={...})`` with literal lists (or a
        module-level name bound to one), read with ``ast``: never run."""
        text = self.read(path)
        if text is None:
            return
        try:
            tree = ast.parse(text, str(path))
        except (SyntaxError, ValueError) as error:
            self.notes.append(f"{path}: cannot parse: {error}".splitlines()[0])
            return
        names: dict[str, ast.expr] = {}
        for statement in tree.body:
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target = statement.targets[0]
                if isinstance(target, ast.Name):
                    names[target.id] = statement.value
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and _is_setup(node.func)):
                continue
            for keyword in node.keywords:
                value = _bound(keyword.value, names)
                if keyword.arg == "install_requires":
                    self._literal_list(value, path, "install_requires")
                elif keyword.arg == "extras_require" and isinstance(value, ast.Dict):
                    for extra, requirements in zip(value.keys, value.values, strict=True):
                        label = extra.value if isinstance(extra, ast.Constant) else "?"
                        items = _bound(requirements, names)
                        self._literal_list(items, path, f"extras_require[{label!r}]")

    def _literal_list(self, node: ast.expr, path: Path, key: str) -> None:
        if isinstance(node, ast.List | ast.Tuple):
            for item in node.elts:
                if isinstance(item, ast.Constant) and isinstance(item.value, str):
                    self.requirement(item.value, f"{path}:{item.lineno}", f"{path}: {key}")

    def environment(self, path: Path) -> None:
        """The conda packages and the ``pip:`` section of the top-level ``dependencies``."""
        text = self.read(path)
        if text is None:
            return
        pip: list[tuple[int, str]] = []
        for number, spec, under_pip in _environment_items(text):
            if under_pip:
                pip.append((number, spec))
            else:
                self._conda(spec, f"{path}:{number}", str(path))
        self.requirement_lines(pip, path, f"{path}: pip")

    def _conda(self, spec: str, where: str, group: str) -> None:
        match = _CONDA.fullmatch(spec.rpartition("::")[2])
        if match is not None:
            rest = match.group("rest") or ""
            self.add(match.group("name"), conda_range(rest), where, group, text=spec)

    # -- the result ------------------------------------------------------------------------

    def frameworks(self, root: str) -> Frameworks:
        return Frameworks(
            tensorflow=self._pin("tensorflow"),
            keras=self._pin("keras"),
            tf_keras=self._pin("tf-keras"),
            theano=self._pin("theano"),
            root=root,
            notes=tuple(self.notes),
        )

    def documented(self) -> tuple[Documented, ...]:
        """What the statements read (a README's) say of each framework, with where."""
        found = []
        for family, _, _ in _FAMILIES:
            pin = self._pin(family)
            if pin is not None:
                found.append(Documented(family, pin.versions, ", ".join(pin.sources)))
        return tuple(found)

    # -- a README's statements -------------------------------------------------------------

    def readme(self, path: Path) -> None:
        """The versions a README states: each list item or line that is nothing but
        requirements (``- Keras==2.0.8``, ``* Tensorflow 0.12.0 / 1.2.1``, ``- Known
        dependencies: Python (3.5.4), tensorflow (1.8.0)``, ``python 2.7 + tensorflow 1.8 +
        keras 2.2.4``; names of one or two words, versions bare, with an operator, in
        parentheses, or followed by ``+`` or "or later"), and each ``pip install`` or ``conda
        install`` command. A line with anything else (prose, a heading, a table, a link to a
        section of the README) states nothing; the alternatives one line gives (``/``, "or")
        count as one range, and every line constrains. A program's output that multi-backend
        Keras printed when imported, a line of its own (``Using TensorFlow backend.``, Keras
        2.0 to 2.3; the ``tf.keras`` redirect of 2.4 and later prints nothing), states Keras
        before 2.4."""
        text = self.read(path)
        if text is None:
            return
        fenced = False
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.strip()
            if line.startswith(("```", "~~~")):
                fenced = not fenced
                continue
            where = f"{path}:{number}"
            if _BACKEND_BANNER.fullmatch(line) is not None:
                self.add("keras", _MULTI_BACKEND_KERAS, where, where)
                continue
            install = _INSTALL.search(line)
            if install is not None:
                conda = install.group("tool") in {"conda", "mamba"}
                for spec in _install_arguments(install.group("args")):
                    if conda:
                        self._conda(spec, where, where)
                    else:
                        self.requirement(spec, where, where)
                continue
            if fenced or line.startswith(("#", "|", ">")) or "](#" in line:
                continue
            clauses = _stated(_LIST_MARKER.sub("", line, count=1)) or []
            for name, versions in clauses:
                self.add(name, versions, where, where, marked=len(clauses) > 1)

    def dockerfile(self, path: Path) -> None:
        """The versions a Dockerfile installs: each ``pip install`` and ``conda install`` of
        its commands (a ``\\`` continues a line; ``&&`` and ``;`` separate commands), a wheel
        named by its file (``tensorflow-1.8.0-cp36-...-linux_x86_64.whl``: version 1.8.0), and
        TensorFlow's own images (``FROM tensorflow/tensorflow:1.15.0-gpu-py3``)."""
        text = self.read(path)
        if text is None:
            return
        for number, line in _logical_lines(text):
            where = f"{path}:{number}"
            image = _TENSORFLOW_IMAGE.match(line)
            if image is not None:
                self.requirement(f"tensorflow=={image.group('version')}", where, where)
                continue
            for command in re.split(r"&&|;|\|\|", line):
                install = _INSTALL.search(command)
                if install is None:
                    continue
                conda = install.group("tool") in {"conda", "mamba"}
                for spec in _install_arguments(install.group("args")):
                    wheel = _WHEEL.fullmatch(spec.rpartition("/")[2])
                    if wheel is not None:
                        name = wheel.group("name").replace("_", "-")
                        self.requirement(f"{name}=={wheel.group('version')}", where, where)
                    elif conda:
                        self._conda(spec, where, where)
                    else:
                        self.requirement(spec, where, where)

    def _pin(self, family: str) -> Pin | None:
        label = next(label for name, label, _ in _FAMILIES if name == family)
        mine = [found for found in self.found if _family(found.distribution) == family]
        if not mine:
            return None
        groups: dict[str, list[_Found]] = {}
        for found in mine:
            groups.setdefault(found.group, []).append(found)
        allowed = EVERY_VERSION
        for items in groups.values():
            marked: VersionRange | None = None
            for item in items:
                if item.marked:
                    marked = item.versions if marked is None else marked.hull(item.versions)
                else:
                    allowed = allowed.intersect(item.versions)
            if marked is not None:
                allowed = allowed.intersect(marked)
        sources = tuple(dict.fromkeys(found.where for found in mine))
        if allowed.empty:
            # The project runs one of the versions its files name (a conda export's
            # ``tensorflow-base=2.10.0`` beside its pip section's ``tensorflow==2.10.1``).
            allowed = mine[0].versions
            for found in mine[1:]:
                allowed = allowed.hull(found.versions)
            said = "; ".join(f"{found.versions} at {found.where}" for found in mine)
            self.notes.append(
                f"the {label} pins contradict each other ({said}): one of them, {allowed}"
            )
        return Pin(allowed, sources)


_REQUIREMENT = re.compile(
    r"(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[[^\]]*\])?\s*(?P<rest>.*)"
)
_INCLUDE = re.compile(r"(?:-[rc]\s*|--(?:requirement|constraint)(?:\s*=\s*|\s+))(?P<file>\S.*?)")
#: ``--hash=...`` and the other options pip allows after a requirement on its line.
_PER_REQUIREMENT_OPTIONS = re.compile(r"\s+--")
#: pip's comment: ``#`` at the start of a line or after whitespace.
_COMMENT = re.compile(r"(?:^|\s+)#.*$")
_CONDA = re.compile(r"\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*?)(?P<rest>(?:\s|[=<>!~]).*)?")

#: README file names (compared lower-cased).
README_NAMES = frozenset({"readme", "readme.md", "readme.markdown", "readme.rst", "readme.txt"})
_LIST_MARKER = re.compile(r"^(?:[-*+\u2022]|\d{1,2}[.)])\s+")
_INSTALL = re.compile(
    r"(?:^|[\s`$>!])(?P<tool>pip3?|python3?\s+-m\s+pip|conda|mamba)\s+install\s+(?P<args>.*)"
)
#: A Dockerfile's name (lower-cased): ``Dockerfile``, ``Dockerfile.gpu``, ``Dockerfile-cpu``,
#: ``Dockerfile_gpu``, ``serve.dockerfile`` (``docker build -f`` takes any), not a document about
#: one (``Dockerfile.md``).
_DOCKERFILE = re.compile(
    r"(?!.*\.(?:md|rst|txt)$)(?:dockerfile(?:[._-][\w.-]+)?|[\w.-]+\.dockerfile)"
)
#: A wheel's file name: its distribution and version.
_WHEEL = re.compile(r"(?P<name>[A-Za-z0-9_.]+?)-(?P<version>\d[\w.]*?)-[^/]*\.whl")
#: A Dockerfile built on TensorFlow's image of one release.
_TENSORFLOW_IMAGE = re.compile(
    r"FROM\s+(?:--platform=\S+\s+)?(?:docker\.io/)?tensorflow/tensorflow:(?P<version>\d+\.\d+(?:\.\d+)?)",
    re.IGNORECASE,
)
#: What multi-backend Keras writes to stderr when imported (``keras/backend/__init__.py``,
#: 2.0 to 2.3), in a README's copy of a program's output; and the versions that print it.
_BACKEND_BANNER = re.compile(r"Using (?:TensorFlow|Theano|CNTK) backend\.")
_MULTI_BACKEND_KERAS = VersionRange(high=Bound((2, 4), False))
#: Options of ``pip install`` and ``conda install`` that take a value.
_INSTALL_VALUES = frozenset(
    {"-r", "-c", "-e", "-i", "-f", "-t", "-n", "-p", "--requirement", "--constraint",
     "--editable", "--index-url", "--extra-index-url", "--find-links", "--target", "--name",
     "--prefix", "--channel"}
)  # fmt: skip
#: Markdown and reStructuredText decoration around a statement: links (their text kept),
#: emphasis, inline code, HTML tags.
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_DECORATION = re.compile(r"</?[A-Za-z][^>]*>|\*\*|__|[`*]")
#: What separates the statements of one line: ``,`` ``;`` `` + `` `` / `` "or" "and" ``&``.
_SEPARATOR = re.compile(
    r"\s*(?:[,;&]|\s\+\s|\s/\s|\s(?:or|and)\s(?!(?:later|newer|higher|above)\b))\s*",
    re.IGNORECASE,
)
_WORD = r"[A-Za-z][A-Za-z0-9_-]*(?:\.[A-Za-z][A-Za-z0-9_-]*)*"
_BARE = r"[vVrR]?\d+(?:\.\d+)*(?:\.[xX*])?"
_STATEMENT = re.compile(
    rf"(?P<name>{_WORD}(?:\s(?![vVrR]?\d){_WORD})?)?\s*"
    r"(?:(?P<op>~=|==|!=|<=|>=|<|>|=)\s*(?P<operand>v?\d[\w.*]*)"
    rf"|\(\s*(?:tested\s+(?:on|with)\s+)?(?P<parenthesised>{_BARE})\s*\)"
    rf"|(?P<bare>{_BARE}(?:/{_BARE})*))?"
    r"(?P<later>\+|\s+(?:or|and)\s+(?:later|newer|higher|above))?"
)


def _stated(line: str) -> list[tuple[str, VersionRange]] | None:
    """The framework versions a README line states, when it is nothing but requirements (see
    :meth:`_Reader.readme`); None when it is anything else."""
    text = _DECORATION.sub("", _LINK.sub(r"\1", line)).strip()
    label, colon, rest = text.partition(":")
    if colon and rest.strip() and len(label.split()) <= 3 and not any(c.isdigit() for c in label):
        text = rest.strip()  # ``Known dependencies: ...``
    found: list[tuple[str, VersionRange]] = []
    name: str | None = None
    for clause in _SEPARATOR.split(text):
        match = _STATEMENT.fullmatch(clause)
        if not clause or match is None or not any(match.groupdict().values()):
            return None
        own = match.group("name")
        name = own or name
        versions = _statement_range(match)
        if name is None or (versions is None and match.group("later")):
            return None
        if versions is None:
            continue
        distribution = name.replace(" ", "-")
        if own is None and match.group("op") and found and found[-1][0] == distribution:
            found[-1] = (distribution, found[-1][1].intersect(versions))  # ``>=1.13, <2``
        else:
            found.append((distribution, versions))
    return found or None


def _statement_range(match: re.Match[str]) -> VersionRange | None:
    """The versions one statement allows (None: it names no version)."""
    if match.group("op") is not None:
        op, operand = match.group("op"), match.group("operand").lstrip("v")
        return specifier_range(f"{'==' if op == '=' else op}{operand}")
    written = match.group("parenthesised") or match.group("bare")
    if written is None:
        return None
    found: VersionRange | None = None
    for version in written.split("/"):
        digits = version.lstrip("vVrR").rstrip("*").removesuffix(".x").removesuffix(".X")
        release = parse_release(digits.rstrip("."))
        if release is None:
            return None
        one = (
            VersionRange(low=Bound(_normalised(release), True))
            if match.group("later")
            else VersionRange.series(release)
        )
        found = one if found is None else found.hull(one)
    return found


def _install_arguments(arguments: str) -> Iterator[str]:
    """The requirements of a ``pip install`` or ``conda install`` command line: its words up
    to the end of the command (``#``, ``&&``, ``;``, ``|``), unquoted, without its options."""
    words = re.split(r"\s+", re.split(r"\s#|&&|;|\|", arguments)[0].strip())
    skip = False
    for word in words:
        written = word.strip("'\"`")
        if skip:
            skip = False
        elif written.startswith("-"):
            skip = written in _INSTALL_VALUES
        elif written and written[0].isalpha():
            yield written


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """A requirements file's lines as pip reads them: a line ending in ``\\`` continues on the
    next, comments are dropped, blank lines skipped; each with its first line's number."""
    pending: list[str] = []
    start = 0
    for number, physical in enumerate([*text.splitlines(), ""], start=1):
        if not pending:
            start = number
        pending.append(physical.removesuffix("\\"))
        if physical.endswith("\\"):
            continue
        line = _COMMENT.sub("", " ".join(pending)).strip()
        pending = []
        if line:
            yield start, line


def _environment_items(text: str) -> Iterator[tuple[int, str, bool]]:
    """The items of the top-level ``dependencies`` sequence of a conda environment file, each
    with its line number and whether it is in the ``pip:`` section: the YAML these files use
    (block sequences, one nested ``pip:`` block, ``#`` comments, quoted items, a one-line
    ``[a, b]`` flow sequence)."""
    inside = False
    pip_indent: int | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = re.sub(r"(?:^|\s)#.*$", "", raw).rstrip()
        stripped = line.strip()
        if not stripped:
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0 and not stripped.startswith("-"):
            key = re.fullmatch(r"dependencies\s*:\s*(?P<flow>\[.*\])?", stripped)
            inside = key is not None
            pip_indent = None
            if key is not None and key.group("flow"):
                for item in re.split(r",\s*(?=[A-Za-z'\"])", key.group("flow")[1:-1]):
                    if item.strip():
                        yield number, _unquoted(item.strip()), False
            continue
        item = re.fullmatch(r"-\s*(?P<value>.*)", stripped)
        if not inside or item is None:
            continue
        value = _unquoted(item.group("value").strip())
        if pip_indent is not None and indent > pip_indent:
            yield number, value, True
            continue
        pip_indent = indent if re.fullmatch(r"pip\s*:", value) else None
        if pip_indent is None and value:
            yield number, value, False


def _unquoted(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _pipfile_range(text: str) -> VersionRange | None:
    if text.strip() == "*":
        return EVERY_VERSION
    return specifier_range(f"=={text.strip()}" if text.strip()[:1].isdigit() else text)


def _table(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _nested(data: Mapping[str, Any], *keys: str) -> object:
    value: object = data
    for key in keys:
        value = _table(value).get(key)
    return value


def _is_setup(func: ast.expr) -> bool:
    """``setup(...)``, ``setuptools.setup(...)``, ``distutils.core.setup(...)``."""
    return (isinstance(func, ast.Name) and func.id == "setup") or (
        isinstance(func, ast.Attribute) and func.attr == "setup"
    )


def _bound(node: ast.expr, names: Mapping[str, ast.expr]) -> ast.expr:
    """What a module-level name is bound to (``install_requires=REQUIRED``), else ``node``."""
    return names.get(node.id, node) if isinstance(node, ast.Name) else node


def _is_pin_file(name: str, directory: str) -> bool:
    """One of :data:`PIN_FILES`, a requirements or constraints file, whatever its case
    (``Requirements.txt``: pip reads what it is given), or a conda environment file by another
    name (:func:`_is_conda_environment`)."""
    lower = name.lower()
    return (
        name in PIN_FILES
        or (lower.startswith(("requirements", "constraints")) and lower.endswith(".txt"))
        or (
            lower.endswith((".yml", ".yaml"))
            and _is_conda_environment(os.path.join(directory, name))  # noqa: PTH118
        )
    )


#: What makes a YAML file a conda environment (``conda env create -f treevae.yml`` takes any
#: name): a top-level ``dependencies`` key and a top-level ``name`` or ``channels`` key.
_CONDA_KEYS = (
    re.compile(r"^dependencies\s*:", re.MULTILINE),
    re.compile(r"^(?:name|channels)\s*:", re.MULTILINE),
)
#: A conda environment file is short; a larger YAML file is data, not read.
_CONDA_MAX_BYTES = 64 * 1024


def _is_conda_environment(path: str) -> bool:
    """Whether the YAML file at ``path`` is a conda environment (:data:`_CONDA_KEYS`)."""
    try:
        with open(path, "rb") as file:  # noqa: PTH123 - a string: this runs per directory
            data = file.read(2 * _CONDA_MAX_BYTES + 1)  # UTF-16 takes two bytes a character
    except OSError:
        return False
    try:
        text = decoded(data)
    except UnicodeDecodeError:
        return False
    if len(text) > _CONDA_MAX_BYTES:
        return False
    return all(key.search(text) for key in _CONDA_KEYS)


#: The byte order marks a pin file may start with, and their encodings: PowerShell's ``>``
#: writes UTF-16 (``pip freeze > requirements.txt``, ``conda env export > env.yml`` on
#: Windows), Notepad may write UTF-8 with a mark.
_MARKS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def decoded(data: bytes) -> str:
    """A pin file's text: UTF-8, or UTF-16 or UTF-8 after a byte order mark.

    Raises:
        UnicodeDecodeError: it is none of them.
    """
    for mark, encoding in _MARKS:
        if data.startswith(mark):
            return data.decode(encoding)
    return data.decode("utf-8")


def project_root(directory: str) -> str | None:
    """The directory whose pin files count for code in ``directory``: the nearest one at or
    above it that holds a pin file, not looking above a repository's root (``.git``,
    ``.hg``). None when there is none."""
    current = os.path.abspath(directory)  # noqa: PTH100 - symlinks are kept, as given
    while True:
        try:
            names = os.listdir(current)  # noqa: PTH208 - strings: this runs per directory
        except OSError:
            names = []
        if any(_is_pin_file(name, current) for name in names):
            return current
        parent = os.path.dirname(current)  # noqa: PTH120
        if parent == current or any(marker in names for marker in _REPOSITORY_MARKERS):
            return None
        current = parent


#: A line that may be a Python 2 statement: ``print "x"``, ``print x, y``, ``print >>f, x``,
#: ``print x % y``, a bare ``print``, ``exec code in ns``; not prose that starts with the word
#: (``print operation is not...`` in a docstring). Each is confirmed by Python's own parser.
_PYTHON_2_STATEMENT = re.compile(
    rb"^[ \t]*(?:print(?:[ \t]*$|[ \t]+(?:[\"'>]|[A-Za-z_][\w.]*(?:\[[^\]\n]*\])?[ \t]*"
    rb"(?:$|[,%+*/#(-])))|exec[ \t]+[\"'A-Za-z_])",
    re.MULTILINE,
)
#: Substrings without which no line can match (a cheap test before the expression's).
_PYTHON_2_WORDS = (b"print ", b"print\t", b"print\n", b"print\r", b"exec ")
#: The messages Python's parser gives for those statements.
_PYTHON_2_MESSAGES = (
    "Missing parentheses in call to 'print'",
    "Missing parentheses in call to 'exec'",
)


def beside_evidence(directory: str) -> tuple[str | None, str | None]:
    """What the Python files of ``directory`` (itself, not below; each read once) say of the
    environment they share, as ``path:line``: where one is Python 2 code (its first ``print``
    or ``exec`` statement), and where one sets Theano's environment for Keras
    (:func:`theano_settings`); None for what none does. Scripts kept side by side run in one
    environment: one that only Python 2 parses says TensorFlow before 2.2 (the last to
    support it was 2.1) and standalone Keras before 2.4; a training script that sets
    ``THEANO_FLAGS`` says that the script beside it that plays its agent runs Keras on Theano
    too. Read, never run."""
    try:
        names = sorted(os.listdir(directory))  # noqa: PTH208 - strings: this runs per directory
    except OSError:
        return None, None
    python2: str | None = None
    theano: str | None = None
    for name in names:
        if not name.endswith(".py"):
            continue
        path = os.path.join(directory, name)  # noqa: PTH118
        try:
            with open(path, "rb") as file:  # noqa: PTH123
                data = file.read()
        except OSError:
            continue
        python2 = python2 or _python2_line(path, data)
        theano = theano or _theano_line(path, data)
        if python2 and theano:
            break
    return python2, theano


def _python2_line(path: str, data: bytes) -> str | None:
    """The first ``print`` or ``exec`` statement of Python 2 in ``data``, as ``path:line``."""
    if not any(word in data for word in _PYTHON_2_WORDS):
        return None
    if _PYTHON_2_STATEMENT.search(data) is None:
        return None
    try:
        ast.parse(data)
    except SyntaxError as error:
        if (error.msg or "").startswith(_PYTHON_2_MESSAGES):
            return f"{path}:{error.lineno}"
    except (ValueError, RecursionError, MemoryError):
        pass
    return None


def _theano_line(path: str, data: bytes) -> str | None:
    """The first place ``data`` sets Theano's environment, as ``path:line``."""
    if not any(word in data for word in _THEANO_WORDS):  # most files: no decoding at all
        return None
    if THEANO_SETTING.search(data.decode("utf-8", "replace")) is None:
        return None
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return next((f"{path}:{line}" for line, _ in theano_settings(tree)), None)


#: Where a source may set Theano's environment (:func:`theano_settings`).
THEANO_SETTING = re.compile(r"\b(?:THEANO_FLAGS|KERAS_BACKEND)\b")
#: The names :data:`THEANO_SETTING` looks for, as bytes (a cheap test before decoding).
_THEANO_WORDS = (b"THEANO_FLAGS", b"KERAS_BACKEND")


#: The backends only Keras 3 has (``KERAS_BACKEND``): its Keras does not run on TensorFlow.
KERAS_3_BACKENDS = frozenset({"jax", "torch", "numpy", "openvino"})


def keras_backends(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """The places that choose Keras' backend, with the backend: ``os.environ["KERAS_BACKEND"]
    = "jax"`` (``environ`` imported from ``os`` counts too)."""
    environ = _environ_names(tree)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
            and any(_environ_key(t, environ) == "KERAS_BACKEND" for t in node.targets)
        ):
            yield node.lineno, node.value.value


def theano_settings(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """The places that set Theano's environment for Keras, with the text that does it:
    ``os.environ["THEANO_FLAGS"] = ...`` (or ``setdefault``), ``os.environ["KERAS_BACKEND"] =
    "theano"`` (or ``"cntk"``, the other backend only multi-backend Keras has); ``environ``
    imported from ``os`` counts too."""
    for line, backend in keras_backends(tree):
        if backend in {"theano", "cntk"}:
            yield line, "os.environ['KERAS_BACKEND'] = ..."
    environ = _environ_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if _environ_key(target, environ) == "THEANO_FLAGS":
                    yield node.lineno, "os.environ['THEANO_FLAGS'] = ..."
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "setdefault"
            and _written(node.func.value) in environ
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value == "THEANO_FLAGS"
        ):
            yield node.lineno, "os.environ.setdefault('THEANO_FLAGS', ...)"


def _environ_names(tree: ast.Module) -> frozenset[str]:
    """How the module writes ``os.environ``: ``os.environ`` under each name it imports ``os``
    as, and each name it imports ``environ`` from ``os`` as."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(f"{a.asname or a.name}.environ" for a in node.names if a.name == "os")
        elif isinstance(node, ast.ImportFrom) and node.module == "os" and not node.level:
            found.update(a.asname or a.name for a in node.names if a.name == "environ")
    return frozenset(found)


def _written(node: ast.expr) -> str | None:
    """A dotted name as written (``os.environ``)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        owner = _written(node.value)
        return f"{owner}.{node.attr}" if owner is not None else None
    return None


def _environ_key(target: ast.expr, environ: frozenset[str]) -> str | None:
    """``"KEY"`` of a store into ``os.environ["KEY"]``."""
    if (
        isinstance(target, ast.Subscript)
        and _written(target.value) in environ
        and isinstance(target.slice, ast.Constant)
        and isinstance(target.slice.value, str)
    ):
        return target.slice.value
    return None


def distributes(root: str) -> bool:
    """Whether the project at ``root`` builds a distribution that others install: it holds
    ``setup.py``, a ``pyproject.toml`` with a ``[project]`` or ``[tool.poetry]`` table, or a
    ``setup.cfg`` with ``[metadata]`` (each read, as its pins are, without running anything)."""
    directory = Path(root)
    if (directory / "setup.py").is_file():
        return True
    reader = _Reader()
    pyproject = directory / "pyproject.toml"
    data = reader.toml(pyproject) if pyproject.is_file() else None
    if data is not None and ("project" in data or _nested(data, "tool", "poetry") is not None):
        return True
    setup_cfg = directory / "setup.cfg"
    text = reader.read(setup_cfg) if setup_cfg.is_file() else None
    if text is None:
        return False
    parser = configparser.RawConfigParser(strict=False)
    try:
        parser.read_string(text, str(setup_cfg))
    except configparser.Error:
        return False
    return parser.has_section("metadata")


def read_pins(root: str) -> Frameworks:
    """What the pin files of ``root`` (a :func:`project_root`) say about the frameworks."""
    reader = _Reader()
    for path in sorted(Path(root).iterdir()):
        name = path.name
        if not path.is_file() or not _is_pin_file(name, root):
            continue
        if name == "pyproject.toml":
            reader.pyproject(path)
        elif name == "Pipfile":
            reader.pipfile(path)
        elif name == "setup.cfg":
            reader.setup_cfg(path)
        elif name == "setup.py":
            reader.setup_py(path)
        elif name.lower().endswith((".yml", ".yaml")):
            reader.environment(path)
        else:
            reader.requirements_file(path)
    return reader.frameworks(root)


def read_documented(
    directory: str, stop: str | None, read: dict[str, tuple[Documented, ...]] | None = None
) -> tuple[Documented, ...]:
    """What the nearest README at or above ``directory`` that states a framework's version
    says (:meth:`_Reader.readme`), with what the Dockerfiles of its directory install
    (:meth:`_Reader.dockerfile`): looking no higher than ``stop`` (the project root whose pins
    count) or, without one, a repository's root (``.git``, ``.hg``). Read, never run; ``read``
    keeps what each directory's README says, for the directories of one run."""
    read = {} if read is None else read
    current = os.path.abspath(directory)  # noqa: PTH100 - symlinks are kept, as given
    while True:
        try:
            names = sorted(os.listdir(current))  # noqa: PTH208 - strings: this runs per directory
        except OSError:
            names = []
        found = read.get(current)
        if found is None:
            found = read[current] = _readme_statements(current, names)
        if found:
            return found
        parent = os.path.dirname(current)  # noqa: PTH120
        if current in (stop, parent):
            return ()
        if stop is None and any(marker in names for marker in _REPOSITORY_MARKERS):
            return ()
        current = parent


def _readme_statements(directory: str, names: list[str]) -> tuple[Documented, ...]:
    """What the first README of ``directory`` that states a version says, with what its
    Dockerfiles install, and those of its ``docker/`` directory (``Docker/Dockerfile``: the
    image the project is built in, kept aside) (``()``: none)."""
    reader = _Reader()
    paths = [Path(directory) / name for name in names]
    for docker in [p for p in paths if p.name.lower() == "docker" and p.is_dir()]:
        try:
            paths.extend(sorted(docker.iterdir()))
        except OSError:
            continue
    for path in paths:
        if _DOCKERFILE.fullmatch(path.name.lower()) and path.is_file():
            reader.dockerfile(path)
    for name in names:
        path = Path(directory) / name
        if name.lower() in README_NAMES and path.is_file():
            readme = _Reader()
            readme.readme(path)
            if readme.documented():
                reader.found.extend(readme.found)
                break
    return reader.documented()


class Keras(str, enum.Enum):
    """Which Keras a project runs."""

    #: The Keras 2 that TensorFlow ships as ``tf.keras`` (before 2.16), or ``tf-keras``.
    TF_KERAS = "tf.keras"
    #: The standalone ``keras`` package, 2.x (multi-backend before 2.4, ``tf.keras`` after).
    KERAS_2 = "keras 2"
    KERAS_3 = "keras 3"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Documented:
    """What a README states of one framework's version (:func:`read_documented`): weaker than
    a pin file or the code, so it only narrows what they allow."""

    family: str
    versions: VersionRange
    where: str


@dataclass(frozen=True)
class Pin:
    """What a project pins of one framework: the versions allowed and where that is said."""

    versions: VersionRange
    sources: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.versions} ({', '.join(self.sources)})"


#: The first TensorFlow whose ``tf.keras`` is Keras 3.
_KERAS_3_IN_TENSORFLOW: Release = (2, 16)


@dataclass(frozen=True)
class Frameworks:
    """The TensorFlow and Keras a project runs, with where each was read (nothing known: every
    field None, which keeps every rule as it is without pins)."""

    tensorflow: Pin | None = None
    #: The standalone ``keras`` package.
    keras: Pin | None = None
    tf_keras: Pin | None = None
    theano: Pin | None = None
    #: The project root whose files were read (None: no pin file was found).
    root: str | None = None
    #: What could not be read or decided (a missing include, pins that contradict each other).
    notes: tuple[str, ...] = ()
    #: Where Python 2 code sits beside the file (``path:line``, :func:`beside_evidence`): read
    #: as a code pin of Python 2 (:mod:`tflint_leaks.analysis.eras`).
    python2: str | None = None
    #: Where a script beside the file sets Theano's environment for Keras (``path:line``,
    #: :func:`beside_evidence`): read as a code pin of Keras before 2.4.
    theano_beside: str | None = None
    #: What the nearest README states (:func:`read_documented`); applied by :meth:`documented`
    #: after the code's own evidence.
    readme: tuple[Documented, ...] = ()
    #: Why the program runs no TensorFlow at all (its Keras runs on Theano), or None.
    no_tensorflow: str | None = None
    #: The backend other than TensorFlow that the program's Keras 3 runs on, with where it is
    #: chosen (``jax (notebook.ipynb:3)``), or None.
    keras_backend: str | None = None

    @property
    def tensorflow_versions(self) -> VersionRange:
        return self.tensorflow.versions if self.tensorflow is not None else EVERY_VERSION

    @property
    def tensorflow_major(self) -> int | None:
        """1 when every version allowed is before 2.0 (graph mode by default), 2 when every one
        is 2.0 or later, None when unknown or both."""
        versions = self.tensorflow_versions
        if versions.below((2,)):
            return 1
        if versions.at_least((2,)):
            return 2
        return None

    @property
    def keras_flavour(self) -> Keras:
        """A pinned ``keras`` decides (2 or 3), then ``tf-keras``, then what TensorFlow ships
        as ``tf.keras`` (Keras 2 before 2.16, Keras 3 from 2.16)."""
        if self.keras is not None:
            if self.keras.versions.at_least((3,)):
                return Keras.KERAS_3
            return Keras.KERAS_2 if self.keras.versions.below((3,)) else Keras.UNKNOWN
        if self.tf_keras is not None:
            return Keras.TF_KERAS
        versions = self.tensorflow_versions
        if self.tensorflow is not None and versions.below(_KERAS_3_IN_TENSORFLOW):
            return Keras.TF_KERAS
        if self.tensorflow is not None and versions.at_least(_KERAS_3_IN_TENSORFLOW):
            return Keras.KERAS_3
        return Keras.UNKNOWN

    def with_targets(self, tensorflow: str | None, keras: str | None, where: str) -> Frameworks:
        """The settings ``target-tensorflow`` / ``target-keras`` (a release such as ``1.15``:
        the ``1.15.*`` series) in place of what the pin files say; ``where`` names the table
        they are in."""

        def pin(name: str, target: str | None, pinned: Pin | None) -> Pin | None:
            release = parse_target(target) if target is not None else None
            if release is None:
                return pinned
            return Pin(VersionRange.series(release), (f"{where}.target-{name}",))

        return replace(
            self,
            tensorflow=pin("tensorflow", tensorflow, self.tensorflow),
            keras=pin("keras", keras, self.keras),
        )

    def constrained(self, family: str, allowed: VersionRange, where: str) -> Frameworks:
        """What the project's code (the versions of :mod:`tflint_leaks.analysis.eras`) or its
        README says of a framework (``family``: ``"tensorflow"``, ``"keras"``, ``"tf-keras"``
        or ``"theano"``) added to what is known: the known range narrowed, or the range
        itself where nothing is. What is known decides where they contradict (a note says
        so)."""
        pins = {
            "tensorflow": self.tensorflow,
            "keras": self.keras,
            "tf-keras": self.tf_keras,
            "theano": self.theano,
        }
        current = pins[family]
        if current is None:
            pin = Pin(allowed, (where,))
        elif current.versions.intersect(allowed).empty:
            note = f"{where} says {family} {allowed}, which {current} excludes: that decides"
            return replace(self, notes=(*self.notes, note))
        else:
            pin = Pin(current.versions.intersect(allowed), (*current.sources, where))
        pins[family] = pin
        return replace(
            self,
            tensorflow=pins["tensorflow"],
            keras=pins["keras"],
            tf_keras=pins["tf-keras"],
            theano=pins["theano"],
        )

    def documented(self) -> Frameworks:
        """With what the README states, where the pins and the code allow it."""
        found = self
        for statement in self.readme:
            found = found.constrained(statement.family, statement.versions, statement.where)
        return found

    @property
    def keras_on_theano(self) -> str | None:
        """Where it is said that the project's Keras runs on Theano (None when it is not): it
        installs Theano (a pin file or the README), not TensorFlow, and no Keras that has no
        Theano backend (2.4 and later)."""
        stated = self.documented()
        keras = stated.keras
        if (
            stated.theano is None
            or stated.tensorflow is not None
            or stated.tf_keras is not None
            or (keras is not None and keras.versions.at_least((2, 4)))
        ):
            return None
        return stated.theano.sources[0]

    def __str__(self) -> str:
        major = self.tensorflow_major
        tensorflow = f"TensorFlow {major}" if major is not None else "TensorFlow unknown"
        parts = [f"{tensorflow}: {self.tensorflow or 'not pinned'}"]
        parts.append(f"Keras: {self.keras_flavour.value}")
        parts.extend(
            f"{label}: {pin}"
            for label, pin in (("keras", self.keras), ("tf-keras", self.tf_keras))
            if pin is not None
        )
        if self.theano is not None:
            parts.append(f"Theano: {self.theano}")
        if self.python2 is not None:
            parts.append(f"Python 2 code beside it: {self.python2}")
        if self.theano_beside is not None:
            parts.append(f"Theano's settings beside it: {self.theano_beside}")
        parts.extend(
            f"stated: {statement.family} {statement.versions} ({statement.where})"
            for statement in self.readme
        )
        if self.no_tensorflow is not None:
            parts.append(f"no TensorFlow: {self.no_tensorflow}")
        if self.keras_backend is not None:
            parts.append(f"Keras runs on {self.keras_backend}")
        parts.extend(f"note: {note}" for note in self.notes)
        return "; ".join(parts)


_TARGET = re.compile(r"\d+(?:\.\d+){0,2}")


def parse_target(text: str) -> Release | None:
    """A ``target-tensorflow`` / ``target-keras`` value: ``MAJOR[.MINOR[.PATCH]]``."""
    text = text.strip()
    return tuple(int(part) for part in text.split(".")) if _TARGET.fullmatch(text) else None


def declared(text: str) -> VersionRange:
    found = specifier_range(text)
    if found is None:
        raise ValueError(f"not a version specifier: {text!r}")
    return found


@dataclass(frozen=True)
class Versions:
    """Where a rule's reason holds (its registry line's ``versions``); elsewhere the rule does
    not run. Nothing known about a project (no pins) means every version: the rule runs."""

    #: The TensorFlow versions, as a PEP 440 specifier set ("" for every version).
    tensorflow: str = ""
    #: The versions of the standalone ``keras`` package, when the project pins it.
    keras: str = ""
    #: Only in eager execution: quiet in graph mode (see ``rules._graph.graph_mode``).
    eager_only: bool = False
    #: Only where Keras runs on TensorFlow: quiet where the program chooses another backend of
    #: Keras 3 (``os.environ["KERAS_BACKEND"] = "jax"``).
    keras_on_tensorflow: bool = False
    #: Only where ``tf.function`` traces: quiet in a file whose program makes every
    #: ``tf.function`` run eagerly (``tf.config.run_functions_eagerly(True)``).
    traced_only: bool = False

    def __post_init__(self) -> None:
        declared(self.tensorflow)
        declared(self.keras)

    def applies(
        self, frameworks: Frameworks, *, graph_mode: bool, functions_eagerly: bool = False
    ) -> bool:
        """Whether the rule runs on a file of a project that runs ``frameworks``, in graph mode
        or not, with every ``tf.function`` run eagerly or not: the program runs TensorFlow,
        and the versions the project allows meet the rule's."""
        if frameworks.no_tensorflow is not None or (self.eager_only and graph_mode):
            return False
        if self.traced_only and functions_eagerly:
            return False
        if self.keras_on_tensorflow and frameworks.keras_backend is not None:
            return False
        if not frameworks.tensorflow_versions.meets(declared(self.tensorflow)):
            return False
        keras = frameworks.keras
        return keras is None or keras.versions.meets(declared(self.keras))

    def describe(self) -> str:
        """One sentence for the rule's docs."""
        tensorflow = (
            f"TensorFlow {self.tensorflow} (quiet in a project whose pins allow none of them)"
            if self.tensorflow
            else "every TensorFlow version"
        )
        parts = [tensorflow]
        if self.keras:
            parts.append(
                f"the standalone `keras` package {self.keras} (quiet in a project whose pins of "
                "it allow none of them)"
            )
        if self.eager_only:
            parts.append(
                "eager execution only: quiet in graph mode (a project that pins TensorFlow 1 "
                "and does not call `enable_eager_execution()`, or a file that calls "
                "`tf.compat.v1.disable_eager_execution()` or `disable_v2_behavior()` or imports "
                "a module that does)"
            )
        else:
            parts.append("eager and graph mode")
        if self.keras_on_tensorflow:
            parts.append(
                "Keras on TensorFlow only: quiet where the program chooses another backend of "
                'Keras 3 (`os.environ["KERAS_BACKEND"] = "jax"`, `"torch"`)'
            )
        if self.traced_only:
            parts.append(
                "only where `tf.function` traces: quiet in a file whose module-level code, or "
                "that of a module it imports, calls `tf.config.run_functions_eagerly(True)` "
                "(every `tf.function` then runs its Python code eagerly on each call)"
            )
        return "; ".join(parts) + "."
