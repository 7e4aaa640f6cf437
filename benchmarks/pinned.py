"""Public repositories pinned by commit, and tflint-leaks run on them as a subprocess.

Shared by ``realcode/score.py`` (labelled files) and ``whole.py`` (whole trees). A repository is
extracted at its commit from its ``fetch`` mirror (``<mirror root>/<owner>+<name>/repo[/.git]``)
into a cache directory: the listed files only, or the whole tree, as a checkout has them. It is
read with ``git ls-tree`` and ``git cat-file --batch``, not ``git archive``, which fails on the
first blob the mirror lacks (a fetch snapshot leaves out files of 4 MiB and more; those are
skipped and counted) and leaves out the paths ``.gitattributes`` marks ``export-ignore``. A
marker file records what was extracted, so a later run reuses the tree; with no mirror an
extracted tree is reused and said to be unverified.

The linter runs as ``python -P -m tflint_leaks`` (``-P``: the working directory, a repository's
root, is not put on ``sys.path``, so no module of the repository can shadow one the linter
imports). Nothing here imports tflint_leaks or runs repository code.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

DEFAULT_MIRROR_ROOT = Path("/work/.mirror")
MARKER = ".tflint-bench.json"
#: An empty table makes the repository root the linter's project root (only written when the
#: repository has no ``pyproject.toml`` of its own).
PROJECT_CONFIG = "[tool.tflint-leaks]\n"

Json = dict[str, Any]


class MaterialiseError(Exception):
    """A repository could not be put in the cache."""


def dirname(name: str) -> str:
    """``owner+name``: the directory of ``owner/name`` in a mirror root and in a cache."""
    return name.replace("/", "+")


def mirror_git_dir(mirror_root: Path | None, name: str) -> Path | None:
    """The git directory of ``name``'s fetch mirror (``<root>/<owner>+<name>/repo[/.git]``)."""
    if mirror_root is None:
        return None
    base = mirror_root / dirname(name) / "repo"
    for candidate in (base / ".git", base):
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate
    return None


def _git(git_dir: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["git", "--git-dir", str(git_dir), *args], capture_output=True, check=False
    )


def _tree(git_dir: Path, commit: str, paths: Sequence[str]) -> list[tuple[str, str]]:
    """(blob id, path) of every regular file of ``commit`` (under ``paths``, or all); links and
    submodules are left out."""
    listing = _git(git_dir, "ls-tree", "-r", "-z", commit, "--", *paths)
    if listing.returncode != 0:
        message = listing.stderr.decode(errors="replace").strip().splitlines()
        raise MaterialiseError(f"git ls-tree failed: {message[-1] if message else '?'}")
    files = []
    for entry in listing.stdout.decode("utf-8", errors="surrogateescape").split("\0"):
        header, _, path = entry.partition("\t")
        fields = header.split()
        if len(fields) != 3:  # the end of the listing
            continue
        mode, kind, blob = fields
        name = PurePosixPath(path)
        inside = not name.is_absolute() and ".." not in name.parts
        if kind == "blob" and mode in _REGULAR and inside:
            files.append((blob, path))
    return files


#: The modes of regular files in a git tree (not links, not submodules).
_REGULAR = frozenset({"100644", "100755", "100664"})


def _write_blobs(git_dir: Path, files: Sequence[tuple[str, str]], target: Path) -> list[str]:
    """Write each file's blob under ``target`` (one ``git cat-file --batch``); the paths whose
    blob the mirror lacks (a fetch snapshot leaves out files of 4 MiB and more)."""
    absent = []
    request = "".join(f"{blob}\n" for blob, _ in files).encode()
    done = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
        input=request,
        capture_output=True,
        check=False,
    )
    output, position = done.stdout, 0
    for _, path in files:
        end = output.index(b"\n", position)
        header = output[position:end].split()
        position = end + 1
        if len(header) != 3:  # "<id> missing"
            absent.append(path)
            continue
        size = int(header[2])
        destination = target / path
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(output[position : position + size])
        position += size + 1
    return absent


def materialise(
    name: str,
    commit: str,
    paths: Sequence[str] | None,
    cache_dir: Path,
    mirror_root: Path | None,
) -> tuple[Path, str | None]:
    """The directory holding ``name`` at ``commit`` (the files ``paths``, or the whole tree when
    None), and a note when it was not verified against a mirror."""
    target = cache_dir / dirname(name)
    marker = target / MARKER
    wanted = {"name": name, "commit": commit, "paths": sorted(paths) if paths else "whole"}
    present = paths is None or all((target / path).is_file() for path in paths)
    if marker.is_file() and present:
        try:
            extracted = json.loads(marker.read_text(encoding="utf-8"))
            absent = extracted.pop("absent", [])
            if extracted == wanted:
                _write_project_config(target)
                return target, _absent_note(absent)
        except (OSError, ValueError, AttributeError):
            pass
    git_dir = mirror_git_dir(mirror_root, name)
    if git_dir is None:
        if present and (paths is not None or marker.is_file()):
            _write_project_config(target)
            return target, "extracted tree reused without a mirror (commit not verified)"
        where = "no mirror (offline)" if mirror_root is None else f"no mirror under {mirror_root}"
        raise MaterialiseError(f"{where} and no extracted tree at {target}")
    if _git(git_dir, "cat-file", "-e", f"{commit}^{{commit}}").returncode != 0:
        raise MaterialiseError(f"commit {commit} is not in the mirror {git_dir}")
    if paths is None and target.exists():
        shutil.rmtree(target)  # a whole tree of another commit: no file of it may stay
    target.mkdir(parents=True, exist_ok=True)
    files = _tree(git_dir, commit, paths or [])
    absent = _write_blobs(git_dir, files, target)
    missing = [path for path in paths or [] if not (target / path).is_file()]
    if missing:
        raise MaterialiseError(f"not in commit {commit[:12]}: {', '.join(missing)}")
    _write_project_config(target)
    marker.write_text(json.dumps({**wanted, "absent": absent}, indent=1) + "\n", "utf-8")
    return target, _absent_note(absent)


def _absent_note(absent: Sequence[str]) -> str | None:
    return f"{len(absent)} files not in the mirror (4 MiB or more)" if absent else None


def _write_project_config(target: Path) -> None:
    """Make the repository root the linter's project root, whatever lies above the cache."""
    config = target / "pyproject.toml"
    if not config.exists():
        config.write_text(PROJECT_CONFIG, encoding="utf-8")


def chosen(values: Sequence[str], names: Sequence[str]) -> list[str]:
    """The names ``--repos`` asks for (comma-separated, repeatable) in the order of ``names``,
    or all of them; raises ValueError naming those that are not there."""
    wanted = {part.strip() for value in values for part in value.split(",") if part.strip()}
    unknown = wanted - set(names)
    if unknown:
        raise ValueError(f"unknown repositories: {', '.join(sorted(unknown))}")
    return [name for name in names if name in wanted or not wanted]


# -- running the linter ------------------------------------------------------------------

#: What every run asks: every rule, JSON, nothing cached.
CHECK = ("check", "--select", "ALL", "--output-format", "json", "--no-cache")


@dataclass(frozen=True)
class Linter:
    python: str
    env: Mapping[str, str]
    timeout: float

    def command(self, *args: str) -> list[str]:
        return [self.python, "-P", "-m", "tflint_leaks", *args]

    def describe(self) -> Json:
        return {
            "python": self.python,
            "pythonpath": self.env.get("PYTHONPATH", ""),
            "command": " ".join(self.command(*CHECK)),
        }


def make_linter(python: str | None, pythonpath: Sequence[str], timeout: float) -> Linter:
    """The interpreter ``python`` (or ``$TFLINT_LEAKS_PYTHON``, or this one) with ``pythonpath``
    (and ``$TFLINT_LEAKS_PYTHONPATH``) before ``PYTHONPATH``: which checkout is measured."""
    env = dict(os.environ)
    extra = [str(Path(entry).resolve()) for entry in pythonpath]
    env_path = os.environ.get("TFLINT_LEAKS_PYTHONPATH")
    if env_path:
        extra.append(env_path)
    if extra:
        env["PYTHONPATH"] = os.pathsep.join([*extra, *filter(None, [env.get("PYTHONPATH")])])
    interpreter = python or os.environ.get("TFLINT_LEAKS_PYTHON") or sys.executable
    return Linter(interpreter, env, timeout)


@dataclass(frozen=True)
class Outcome:
    """One run of the linter."""

    returncode: int | None  # None: timed out (the run and its workers were killed)
    stdout: str
    stderr: str
    seconds: float

    @property
    def timed_out(self) -> bool:
        return self.returncode is None

    def last_error_line(self) -> str:
        return (self.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]


def run(linter: Linter, args: Sequence[str], cwd: Path) -> Outcome:
    """Run ``tflint_leaks ARGS`` in ``cwd`` in a session of its own; past the timeout the whole
    session (the command and its workers) is killed."""
    start = time.monotonic()
    with subprocess.Popen(
        linter.command(*args),
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(linter.env),
        start_new_session=True,
    ) as process:
        try:
            out, err = process.communicate(timeout=linter.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate()
            return Outcome(None, out, err, time.monotonic() - start)
        finally:
            with contextlib.suppress(ProcessLookupError):  # workers a dead command left
                os.killpg(process.pid, signal.SIGKILL)
    return Outcome(process.returncode, out, err, time.monotonic() - start)


def findings(outcome: Outcome) -> list[Json] | None:
    """The JSON findings a run printed; None when it printed no JSON list."""
    try:
        items = json.loads(outcome.stdout or "null")
    except ValueError:
        return None
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else None


def linter_module(linter: Linter, cwd: Path) -> str:
    """Which ``tflint_leaks`` the interpreter imports (file and version)."""
    probe = "import tflint_leaks as t; print(t.__file__, getattr(t, '__version__', '?'))"
    try:
        done = subprocess.run(
            [linter.python, "-P", "-c", probe],
            cwd=cwd,
            capture_output=True,
            text=True,
            env=dict(linter.env),
            timeout=linter.timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"unknown ({error})"
    return done.stdout.strip() or f"unknown ({done.stderr.strip()[-200:]})"


def implemented_rules(linter: Linter, cwd: Path) -> set[str] | None:
    """The rule codes the linter knows."""
    try:
        outcome = run(linter, ["rules", "--output-format", "json"], cwd)
        return {str(rule["code"]) for rule in json.loads(outcome.stdout)}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def relative_to_root(filename: str, root: Path) -> str:
    """A finding's file name relative to the repository root, ``/``-separated."""
    path = Path(filename)
    if path.is_absolute():
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            return path.as_posix()
    return PurePosixPath(path.as_posix()).as_posix()
