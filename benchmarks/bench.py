"""Performance of tflint-leaks beside its peers on the real-code corpus, in one run (issue 6).

    .venv/bin/python benchmarks/bench.py [--packages tf-keras ...] [--no-peers] [--timeout S]

Every measurement is one child process: CPU time (user + system, its waited-for children
included), wall time and peak RSS (of the largest single process) come from ``os.wait4``. Linux
carries a forked child's parent's peak across ``exec``, so a peak at or below this script's own is
not the child's: it is left blank (the small-file rows, where every tool is below it). Ratios
are to the libcst floor: ``libcst.parse_module`` of every file, once, in one process. The table
goes to stdout and a JSON record to ``benchmarks/results/<timestamp>.json``. It reports; a slow
time never fails it. Peers are installed on first use into ``benchmarks/.cache/peers-venv`` and
``benchmarks/.cache/dslinter-venv``; a peer that cannot install or run is reported and skipped.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from corpus import (
    CACHE,
    PINNED,
    REPO,
    CorpusError,
    add_packages_argument,
    compile_checkout,
    corpus_root,
    count_lines,
    source_files,
    tflint_command,
    tflint_env,
)

RESULTS = Path(__file__).resolve().parent / "results"
PEERS_VENV = CACHE / "peers-venv"
#: dslinter pins pylint 2.12 and astroid 2.9, which neither build nor run on Python 3.11+.
DSLINTER_VENV = CACHE / "dslinter-venv"
THIS_PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"
FLOOR = "libcst parse_module, 1 process"

#: Parse every ``.py`` file under ``argv[1]`` with ``parse`` (bytes in); print the failure count.
_PARSE_ALL = """
import sys
from pathlib import Path
from {module} import {function} as parse
failed = 0
for path in sorted(Path(sys.argv[1]).rglob("*.py")):
    try:
        parse(path.read_bytes())
    except Exception:
        failed += 1
print(failed)
"""


@dataclass(frozen=True)
class Run:
    """What one child process cost and printed."""

    returncode: int
    cpu: float
    wall: float
    peak_mb: float | None  # None: at or below the harness's own peak, so not measured
    stdout: str
    stderr: str
    timed_out: bool


@dataclass(frozen=True)
class Setting:
    root: Path  # the corpus
    scratch: Path  # the working directory of every child, and the cache of the warm run
    timeout: float  # seconds one child may run before its process group is killed


@dataclass
class Row:
    tool: str
    command: list[str]
    status: str  # ok, unsupported, failed, timed out, not installed
    cpu_s: float | None = None
    wall_s: float | None = None
    peak_mb: float | None = None
    cpu_ratio: float | None = None
    wall_ratio: float | None = None
    returncode: int | None = None
    findings: int | None = None
    note: str = ""


@dataclass(frozen=True)
class Peer:
    tool: str
    venv: Path
    python: str  # the major.minor version of the venv's interpreter
    requirements: tuple[str, ...]
    command: Callable[[Path, Path], list[str]]  # (venv bin directory, corpus root) -> argv
    ok_codes: frozenset[int] = frozenset({0})


def import_roots(directory: Path) -> list[Path]:
    """Top-level packages and modules under ``directory`` (pylint < 2.13 cannot recurse)."""
    roots: list[Path] = []
    for child in sorted(directory.iterdir()):
        if child.is_dir():
            roots.extend([child] if (child / "__init__.py").is_file() else import_roots(child))
        elif child.suffix == ".py":
            roots.append(child)
    return roots


PEERS = (
    Peer(
        "Fixit 2.2.1, default rules",
        PEERS_VENV,
        THIS_PYTHON,
        ("fixit==2.2.1",),
        lambda bin_dir, root: [str(bin_dir / "fixit"), "lint", str(root)],
        # 1: violations found, 2: some file failed to parse or a rule raised.
        frozenset({0, 1, 2}),
    ),
    Peer(
        "pylint 2.12.2 + dslinter 2.0.9 (Py 3.10)",
        DSLINTER_VENV,
        "3.10",
        ("dslinter==2.0.9",),
        lambda bin_dir, root: [
            str(bin_dir / "pylint"),
            "--load-plugins=dslinter",
            "--exit-zero",
            *map(str, import_roots(root)),
        ],
    ),
    Peer(
        "flake8 7.5.0",
        PEERS_VENV,
        THIS_PYTHON,
        ("flake8==7.5.0",),
        lambda bin_dir, root: [str(bin_dir / "flake8"), "--exit-zero", str(root)],
    ),
    Peer(
        "Ruff 0.17.6, --select ALL",
        PEERS_VENV,
        THIS_PYTHON,
        ("ruff==0.17.6",),
        lambda bin_dir, root: [
            str(bin_dir / "ruff"),
            "check",
            "--isolated",
            "--select",
            "ALL",
            "--no-cache",
            "--exit-zero",
            str(root),
        ],
    ),
)


def measure(argv: Sequence[str], setting: Setting, env: dict[str, str] | None = None) -> Run:
    """Run ``argv`` to completion (or the timeout) and return its resource usage from ``wait4``."""
    own_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            cwd=setting.scratch,
            env=env,
            start_new_session=True,  # its own process group, workers included, to kill at once
        )
        expired = threading.Event()

        def kill() -> None:
            expired.set()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)

        timer = threading.Timer(setting.timeout, kill)
        timer.start()
        try:
            _, status, usage = os.wait4(process.pid, 0)
        except BaseException:  # Ctrl-C: take the child's process group down too
            kill()
            raise
        finally:
            timer.cancel()
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Run(
            returncode=process.returncode,
            cpu=usage.ru_utime + usage.ru_stime,
            wall=wall,
            peak_mb=usage.ru_maxrss / 1024 if usage.ru_maxrss > own_peak else None,  # kB
            stdout=out.read().decode(errors="replace"),
            stderr=err.read().decode(errors="replace"),
            timed_out=expired.is_set(),
        )


def to_row(tool: str, argv: Sequence[str], run: Run, ok_codes: frozenset[int]) -> Row:
    row = Row(tool, list(argv), "ok", run.cpu, run.wall, run.peak_mb, returncode=run.returncode)
    if run.timed_out:
        row.status, row.note = "timed out", f"killed after {run.wall:.0f} s"
        row.cpu_s = row.wall_s = row.peak_mb = None
    elif run.returncode not in ok_codes:
        said = _last_line(run.stderr) or _last_line(run.stdout)
        usage_error = run.returncode == 2 and "Usage:" in run.stderr
        row.status = "unsupported" if usage_error else "failed"
        row.note = f"exit {run.returncode}: {said}"
        row.cpu_s = row.wall_s = row.peak_mb = None
    return row


def bench_tflint(setting: Setting) -> list[Row]:
    common = ("--select", "ALL", "--exit-zero", "--output-format", "json", str(setting.root))
    cache_dir = setting.scratch / "tflint-cache"
    runs = [
        ("tflint-leaks --version", ("--version",)),
        ("tflint-leaks cold, default --jobs", ("--no-cache", *common)),
        ("tflint-leaks cold, 1 process", ("--no-cache", "--jobs", "1", *common)),
        ("tflint-leaks cold, 2 processes", ("--no-cache", "--jobs", "2", *common)),
        ("tflint-leaks cache fill (1st run)", ("--cache-dir", str(cache_dir), *common)),
        ("tflint-leaks warm (2nd run)", ("--cache-dir", str(cache_dir), *common)),
    ]
    rows = []
    for tool, args in runs:
        print(f"measuring {tool} ...", file=sys.stderr, flush=True)
        argv = tflint_command(*args)
        run = measure(argv, setting, tflint_env())
        row = to_row(tool, argv, run, frozenset({0}))
        if row.status == "ok" and "--output-format" in args:
            try:
                findings = json.loads(run.stdout)
            except json.JSONDecodeError:
                findings = None
            if isinstance(findings, list):
                row.findings = len(findings)
            else:
                row.status, row.note = "failed", "its output is not a JSON list"
        rows.append(row)
    return rows


#: The small files of the start-up rows: a training script (it needs the libcst pass) and a
#: module that does not use TensorFlow (it needs neither libcst nor the rules).
SMALL_FILES = {
    "train.py": (
        "import tensorflow as tf\n\n\n@tf.function\ndef step(x, i):\n    return x * 2\n\n\n"
        "for i in range(1000):\n    step(tf.ones([2]), i)\n"
    ),
    "util.py": "import os\n\n\ndef here():\n    return os.getcwd()\n",
}
STARTUP_REPEATS = 7


def bench_startup(setting: Setting, peers: bool) -> list[Row]:
    """One small file, the pre-commit case: the median of several runs of each command."""
    directory = setting.scratch / "small"
    directory.mkdir()
    for name, text in SMALL_FILES.items():
        (directory / name).write_text(text, encoding="utf-8")
    cache_dir = setting.scratch / "small-cache"
    commands = [
        (f"tflint-leaks, one small {name}", tflint_command("--no-cache", str(directory / name)))
        for name in SMALL_FILES
    ]
    commands.append(
        (
            "tflint-leaks, one small train.py, warm cache",
            tflint_command("--cache-dir", str(cache_dir), str(directory / "train.py")),
        )
    )
    if peers:
        for peer in PEERS:
            if peer.tool.startswith(("Ruff", "flake8")) and not _install(peer):
                argv = peer.command(peer.venv / "bin", directory / "train.py")
                commands.append((f"{peer.tool}, one small train.py", argv))
    rows = []
    for tool, argv in commands:
        print(f"measuring {tool} ({STARTUP_REPEATS} runs) ...", file=sys.stderr, flush=True)
        runs = [measure(argv, setting, tflint_env()) for _ in range(STARTUP_REPEATS)]
        runs.sort(key=lambda run: run.wall)
        median = runs[len(runs) // 2]
        rows.append(to_row(tool, argv, median, frozenset({0, 1})))
    return rows


def bench_parsers(setting: Setting) -> list[Row]:
    rows = []
    for tool, module, function in (
        ("ast.parse, 1 process", "ast", "parse"),
        (FLOOR, "libcst", "parse_module"),
    ):
        print(f"measuring {tool} ...", file=sys.stderr, flush=True)
        program = _PARSE_ALL.format(module=module, function=function)
        argv = [sys.executable, "-c", program, str(setting.root)]
        run = measure(argv, setting)
        shown = [*argv[:2], f"<parse every file with {module}.{function}>", *argv[3:]]
        row = to_row(tool, shown, run, frozenset({0}))
        if row.status == "ok":
            row.note = f"{run.stdout.strip()} files failed to parse"
        rows.append(row)
    return rows


def bench_peer(peer: Peer, setting: Setting) -> Row:
    print(f"installing and measuring {peer.tool} ...", file=sys.stderr, flush=True)
    problem = _install(peer)
    if problem:
        return Row(peer.tool, [], "not installed", note=problem)
    argv = peer.command(peer.venv / "bin", setting.root)
    return to_row(peer.tool, argv, measure(argv, setting), peer.ok_codes)


def _install(peer: Peer) -> str:
    """Install ``peer`` into its venv (a no-op when present); return why not, or ``""``."""
    python = peer.venv / "bin" / "python"
    if not python.exists():
        creator = find_python(peer.python)
        if creator is None:
            return f"no Python {peer.python} found (needed for {' '.join(peer.requirements)})"
        created = subprocess.run(
            [creator, "-m", "venv", str(peer.venv)], capture_output=True, text=True, check=False
        )
        if created.returncode != 0:
            return f"cannot create {peer.venv}: {_last_line(created.stderr)}"
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", *peer.requirements],
        capture_output=True,
        text=True,
        check=False,
    )
    if installed.returncode != 0:
        errors = [line for line in installed.stderr.splitlines() if line.startswith("ERROR")]
        return f"pip install failed: {errors[-1] if errors else _last_line(installed.stderr)}"
    return ""


def find_python(version: str) -> str | None:
    """An interpreter of ``version`` (major.minor): this one, one on PATH, or one under pyenv."""
    if version == THIS_PYTHON:
        return sys.executable
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates = [
        shutil.which(f"python{version}"),
        *map(str, sorted(pyenv.glob(f"versions/{version}.*/bin/python{version}"))),
    ]
    for candidate in filter(None, candidates):  # a pyenv shim may exist and still refuse to run
        if subprocess.run([candidate, "-c", ""], capture_output=True, check=False).returncode == 0:
            return candidate
    return None


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def add_ratios(rows: list[Row]) -> None:
    floor = next((row for row in rows if row.tool == FLOOR and row.status == "ok"), None)
    if floor is None or not floor.cpu_s or not floor.wall_s:
        return
    for row in rows:
        if row.cpu_s is not None and row.wall_s is not None:
            row.cpu_ratio = row.cpu_s / floor.cpu_s
            row.wall_ratio = row.wall_s / floor.wall_s


def render(rows: list[Row]) -> str:
    """The rows as a Markdown table: tool and note left-aligned, numbers right-aligned."""

    def number(value: float | None, digits: int) -> str:
        return "" if value is None else f"{value:.{digits}f}"

    header = ["tool", "CPU s", "wall s", "peak MB", "CPU x", "wall x", "note"]
    table = [header]
    for row in rows:
        note = row.note if row.status == "ok" else f"{row.status}: {row.note}"
        if row.findings is not None:
            note = f"{row.findings} findings"
        table.append(
            [
                row.tool,
                number(row.cpu_s, 2),
                number(row.wall_s, 2),
                number(row.peak_mb, 0),
                number(row.cpu_ratio, 2),
                number(row.wall_ratio, 2),
                note,
            ]
        )
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    left = (0, len(header) - 1)

    def cells(line: list[str]) -> str:
        aligned = [
            cell.ljust(width) if i in left else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(line, widths, strict=True))
        ]
        return "| " + " | ".join(aligned) + " |"

    rule = "|".join(
        "-" * (w + 2) if i in left else "-" * (w + 1) + ":" for i, w in enumerate(widths)
    )
    return "\n".join([cells(header), f"|{rule}|", *map(cells, table[1:])])


def _git_describe() -> str:
    result = subprocess.run(
        ["git", "describe", "--always", "--dirty"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    return result.stdout.strip() or "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_packages_argument(parser, ["tf-keras"], "measure")
    parser.add_argument("--no-peers", action="store_true", help="measure tflint-leaks only")
    parser.add_argument(
        "--timeout",
        type=float,
        default=3600,
        metavar="SECONDS",
        help="kill a measured process after this long (default: 3600)",
    )
    args = parser.parse_args(argv)
    try:
        root = corpus_root(args.packages)
    except CorpusError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    files = source_files(root)
    lines = sum(count_lines(path) for path in files)  # also warms the page cache
    print(f"corpus: {', '.join(args.packages)}: {len(files)} files, {lines} lines", flush=True)
    load_before = os.getloadavg()
    commit = _git_describe()  # before the run: the engine may be committed to while it runs
    compile_checkout()
    with tempfile.TemporaryDirectory(prefix="tflint-bench-") as scratch_name:
        setting = Setting(root, Path(scratch_name), args.timeout)
        rows = bench_parsers(setting) + bench_tflint(setting)
        if not args.no_peers:
            rows += [bench_peer(peer, setting) for peer in PEERS]
        startup = bench_startup(setting, peers=not args.no_peers)
    add_ratios(rows)
    counts = {row.findings for row in rows if row.findings is not None}
    if len(counts) > 1:
        print(f"warning: tflint-leaks runs disagree on the findings: {sorted(counts)}")
    now = datetime.now(timezone.utc)
    record = {
        "timestamp": now.isoformat(timespec="seconds"),
        "machine": {
            "cpus": os.cpu_count(),
            "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30),
            "platform": platform.platform(),
            "python": platform.python_version(),
            # Other work on the machine inflates wall times (and CPU times, less so).
            "load_average_before": load_before,
            "load_average_after": os.getloadavg(),
        },
        "tflint_leaks_commit": commit,
        "corpus": {
            "packages": {name: PINNED[name] for name in sorted(args.packages)},
            "files": len(files),
            "lines": lines,
        },
        "floor": FLOOR,
        "rows": [asdict(row) for row in rows],
        "startup_rows": [asdict(row) for row in startup],
    }
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"{now.strftime('%Y%m%dT%H%M%SZ')}.json"
    out.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print(render(rows))
    print(f"\nOne small file (median of {STARTUP_REPEATS} runs):\n")
    print(render(startup))
    before, after = (" ".join(f"{x:.2f}" for x in load) for load in (load_before, os.getloadavg()))
    print(f"load average (1, 5, 15 min): {before} before, {after} after")
    print(f"record: {out.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
