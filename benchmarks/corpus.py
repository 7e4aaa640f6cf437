"""The real-code corpus: Python sources of pinned TensorFlow-heavy packages from the registry.

Each package's wheel is downloaded once with pip into ``benchmarks/.cache/wheels/``, checked
against the sha256 that pip's installation report gives for it, and its ``.py`` files are unpacked
into ``benchmarks/.cache/src/<name>-<version>/``. Everything already there is reused without
touching the network, so a cached corpus works offline.

    python benchmarks/corpus.py [--packages tf-keras keras ...]

prints the number of files and lines per package (all pinned packages by default).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

BENCHMARKS = Path(__file__).resolve().parent
REPO = BENCHMARKS.parent
CACHE = BENCHMARKS / ".cache"
WHEELS = CACHE / "wheels"
SOURCES = CACHE / "src"
SELECTIONS = CACHE / "corpus"

#: The corpus: registry name -> pinned version. Pure-Python wheels, so one file fits every machine.
PINNED: dict[str, str] = {
    "tf-keras": "2.21.0",
    "keras": "3.15.1",
    "tensorflow-probability": "0.25.0",
    "tf-agents": "0.19.0",
    "dm-sonnet": "2.0.2",
}

#: Written into every corpus root: a project root of its own, so that tools which honour the
#: repository's ``.gitignore`` (it ignores ``benchmarks/.cache/``) or configuration do not skip it.
_ROOT_MARKER = (
    "# Written by benchmarks/corpus.py: this directory is a project root of its own, so the\n"
    "# repository's .gitignore and configuration do not apply to the corpus below it.\n"
)

#: Fragments of pip's output that mean the registry could not be reached at all.
_NETWORK_FAILURES = (
    "connection error:",
    "Failed to establish a new connection",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Network is unreachable",
    "No route to host",
    "Connection refused",
    "ConnectTimeoutError",
    "ReadTimeoutError",
    "ProxyError",
)


class CorpusError(Exception):
    """The corpus could not be fetched or does not match what the registry published."""


class RegistryUnreachable(CorpusError):
    """pip could not reach the package registry (offline, DNS, proxy)."""


def package_root(name: str) -> Path:
    """Return the directory of the ``.py`` files of pinned package ``name``, fetching it once."""
    if name not in PINNED:
        raise CorpusError(f"{name!r} is not in the pinned corpus ({', '.join(PINNED)})")
    version = PINNED[name]
    dest = SOURCES / f"{name}-{version}"
    if dest.is_dir():
        return dest
    wheel = download_wheel(name, version, WHEELS)
    SOURCES.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=SOURCES))
    try:
        _unpack_sources(wheel, staging)
        (staging / "pyproject.toml").write_text(_ROOT_MARKER, encoding="utf-8")
        staging.rename(dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return dest


def corpus_root(packages: Sequence[str]) -> Path:
    """Return one directory holding the sources of ``packages``, fetching each once.

    A single package is its own root; several are hard-linked side by side into
    ``.cache/corpus/<a>+<b>/<name>-<version>/`` so every tool sees one plain tree.
    """
    names = sorted(set(packages))
    if not names:
        raise CorpusError("no package selected")
    roots = [package_root(name) for name in names]
    if len(roots) == 1:
        return roots[0]
    dest = SELECTIONS / "+".join(names)
    if dest.is_dir():
        return dest
    SELECTIONS.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".selection-", dir=SELECTIONS))
    try:
        for root in roots:
            shutil.copytree(root, staging / root.name, copy_function=os.link)
        (staging / "pyproject.toml").write_text(_ROOT_MARKER, encoding="utf-8")
        staging.rename(dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return dest


def source_files(root: Path) -> list[Path]:
    """Every ``.py`` file under ``root``, sorted by path."""
    return sorted(root.rglob("*.py"))


def count_lines(path: Path) -> int:
    return len(path.read_bytes().splitlines())


def tflint_command(*args: str) -> list[str]:
    """The tflint-leaks command line, run by this interpreter (the project's venv)."""
    return [sys.executable, "-m", "tflint_leaks", *args]


#: Where the checkout's bytecode is kept for the measured runs (:func:`tflint_env`).
PYCACHE = CACHE / "pycache"


def tflint_env() -> dict[str, str]:
    """The environment for :func:`tflint_command`: this checkout importable, installed or not,
    with its bytecode kept (in :data:`PYCACHE`) as an installed package's is, even where the
    environment says not to write it (``PYTHONDONTWRITEBYTECODE``): compiling the checkout's
    modules on every start would be counted in every row."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    return env


def compile_checkout() -> None:
    """Compile the checkout's modules into :data:`PYCACHE` before anything is measured, as
    pip does when it installs a package."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(REPO / "tflint_leaks")],
        env=tflint_env(),
        check=True,
    )


def download_wheel(name: str, version: str, directory: Path) -> Path:
    """Download the wheel of ``name==version`` into ``directory`` and check its sha256.

    The expected digest comes from pip's installation report (``--dry-run --report``), which
    takes it from the registry's index; a wheel already in ``directory`` with that digest is
    reused.
    """
    requirement = f"{name}=={version}"
    # -vv: pip then names a connection error even when it does not retry (PIP_RETRIES=0).
    selection = ["--no-deps", "--only-binary", ":all:", "-vv", requirement]
    with tempfile.TemporaryDirectory() as scratch:
        report_path = Path(scratch) / "report.json"
        _pip(
            requirement,
            "install",
            "--dry-run",
            "--ignore-installed",
            "--report",
            str(report_path),
            *selection,
        )
        report = json.loads(report_path.read_text(encoding="utf-8"))
    try:
        info = report["install"][0]["download_info"]
        url: str = info["url"]
        expected: str = info["archive_info"]["hashes"]["sha256"]
    except (KeyError, IndexError) as exc:
        raise CorpusError(f"pip reported no sha256 for {requirement}: {report!r:.300}") from exc
    wheel = directory / unquote(PurePosixPath(urlsplit(url).path).name)
    if wheel.is_file() and _sha256(wheel) == expected:
        return wheel
    directory.mkdir(parents=True, exist_ok=True)
    _pip(requirement, "download", "--dest", str(directory), *selection)
    if not wheel.is_file():
        raise CorpusError(f"pip downloaded {requirement} but {wheel} is not there")
    actual = _sha256(wheel)
    if actual != expected:
        wheel.unlink()
        raise CorpusError(
            f"sha256 mismatch for {wheel.name}: registry says {expected}, got {actual}; deleted"
        )
    return wheel


def _pip(requirement: str, *args: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pip", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode == 0:
        return
    lines = (result.stderr + result.stdout).splitlines()
    unreachable = [line for line in lines if any(m in line for m in _NETWORK_FAILURES)]
    if unreachable:
        raise RegistryUnreachable(
            f"cannot fetch {requirement}: the package registry is unreachable (offline?); "
            f"pip said: {unreachable[-1].strip()}. Packages already in {CACHE} work offline."
        )
    said = ([line for line in lines if line.startswith("ERROR")] or lines or ["no output"])[-1]
    raise CorpusError(f"pip could not fetch {requirement}: {said.strip()}")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _unpack_sources(wheel: Path, dest: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            path = PurePosixPath(member)
            if path.suffix != ".py" or path.parts[0].endswith(".dist-info"):
                continue
            if path.is_absolute() or ".." in path.parts:
                raise CorpusError(f"{wheel.name} holds an unsafe path: {member}")
            target = dest.joinpath(*path.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(archive.read(member))


def add_packages_argument(
    parser: argparse.ArgumentParser, default: Sequence[str], verb: str
) -> None:
    """The ``--packages`` option every benchmark script takes."""
    shown = "all of " + ", ".join(PINNED) if list(default) == list(PINNED) else ", ".join(default)
    parser.add_argument(
        "--packages",
        nargs="+",
        choices=list(PINNED),
        default=list(default),
        metavar="NAME",
        help=f"packages to {verb} (default: {shown})",
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_packages_argument(parser, list(PINNED), "fetch")
    args = parser.parse_args(argv)
    print(f"{'package':<24} {'version':<9} {'files':>6} {'lines':>9}  path")
    total_files = total_lines = 0
    for name in args.packages:
        try:
            root = package_root(name)
        except CorpusError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        files = source_files(root)
        lines = sum(count_lines(path) for path in files)
        total_files += len(files)
        total_lines += lines
        shown = root.relative_to(REPO)
        print(f"{name:<24} {PINNED[name]:<9} {len(files):>6} {lines:>9}  {shown}")
    print(f"{'total':<24} {'':<9} {total_files:>6} {total_lines:>9}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
