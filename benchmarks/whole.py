"""Lint whole public repositories as a user does, once with ``--jobs 1`` and once with
``--jobs 2``, and report how each run ended (issue 17: runs that always end, one answer).

    .venv/bin/python benchmarks/whole.py                       # the libraries (libraries.toml)
    .venv/bin/python benchmarks/whole.py --realcode            # realcode/labels.toml's repos
    .venv/bin/python benchmarks/whole.py --libraries --realcode --json whole.json
    .venv/bin/python benchmarks/whole.py --pythonpath /path/to/other/checkout --repos larq/larq
    .venv/bin/python benchmarks/whole.py --libraries --realcode \
        --labels benchmarks/breadth/labels-a.toml --labels benchmarks/breadth/labels-b.toml

Each repository's whole tree is extracted at its pinned commit (from the
``fetch`` mirror) into ``benchmarks/.cache/whole/<owner>+<name>/`` and linted from its root:
``python -P -m tflint_leaks check --select ALL --no-cache --output-format json --jobs N .``,
each run in a session of its own, killed with its workers past ``--timeout``. Reported per
repository: both exit codes, timeouts, the TFL002 internal errors (with the exception or cause
each names, e.g. ``RecursionError``), TFL001 parse errors, findings per rule, and whether the two
runs gave identical findings (code, file, cell, line, column, message) with the first
differences. ``--json`` writes all of it, every finding included.

Never imports tflint_leaks and never runs repository code. Exit status: 0 every run ended with
0 or 1 and both runs agreed; 1 otherwise (or a repository could not be extracted); 2 usage.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pinned
import tomllib
from pinned import CHECK, DEFAULT_MIRROR_ROOT, Linter, MaterialiseError

HERE = Path(__file__).resolve().parent
LIBRARIES = HERE / "libraries.toml"
REALCODE = HERE / "realcode" / "labels.toml"
#: The breadth benchmark's list kept for independent checks: never linted by these scripts.
HOLDOUT = "labels-holdout.toml"
DEFAULT_CACHE = HERE / ".cache" / "whole"
JOBS = (1, 2)
COMMIT = re.compile(r"^[0-9a-f]{40}$")
PARSE_ERROR = "TFL001"
INTERNAL_ERROR = "TFL002"
#: How a TFL002 message names what went wrong: the exception a rule raised, or a worker's death.
_RULE_FAILED = re.compile(r"failed on this file: ([A-Za-z_][\w.]*)")
_WORKERS_DIED = re.compile(r"worker processes died linting this file \((.*)\)")
_INTERNAL_LINE = re.compile(r"internal error: ([A-Za-z_][\w.]*)")
#: Differences listed in the text report (all of them go to --json).
SHOWN_DIFFERENCES = 3

Json = dict[str, Any]
#: A finding as compared between runs: code, file, cell, line, column, message.
Key = tuple[str, str, int, int, int, str]


class ListError(Exception):
    """A repository list is malformed."""


@dataclass(frozen=True)
class Target:
    name: str
    commit: str
    kind: str
    source: str  # the list it comes from


def load_targets(path: Path, source: str) -> list[Target]:
    """The ``[[repo]]`` tables of ``path`` (libraries.toml, or a labels file: same keys)."""
    try:
        with path.open("rb") as handle:
            tables = tomllib.load(handle).get("repo", [])
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ListError(f"{path}: {error}") from None
    targets = []
    for index, table in enumerate(tables if isinstance(tables, list) else [None]):
        if not isinstance(table, dict) or not all(
            isinstance(table.get(key), str) for key in ("name", "commit", "kind")
        ):
            raise ListError(f"{path}: repo #{index + 1} needs `name`, `commit` and `kind`")
        if not COMMIT.match(table["commit"]):
            raise ListError(f"{path}: {table['name']}: `commit` must be 40 lowercase hex digits")
        targets.append(Target(table["name"], table["commit"], table["kind"], source))
    names = Counter(target.name for target in targets)
    twice = sorted(name for name, n in names.items() if n > 1)
    if twice:
        raise ListError(f"{path}: listed twice: {', '.join(twice)}")
    return targets


def cause(message: str) -> str:
    """What a TFL002 finding names: the exception, or how the workers died."""
    failed = _RULE_FAILED.search(message)
    if failed:
        return failed.group(1)
    died = _WORKERS_DIED.search(message)
    if died:
        return f"workers died ({died.group(1)})"
    return message.split(";", maxsplit=1)[0][:60]


@dataclass
class Run:
    jobs: int
    returncode: int | None
    seconds: float
    #: The findings printed, or None when the run printed no JSON list.
    findings: list[Key] | None
    last_error_line: str

    @property
    def timed_out(self) -> bool:
        return self.returncode is None

    def of(self, code: str) -> list[Key]:
        return [key for key in self.findings or [] if key[0] == code]

    def internal(self) -> Counter[str]:
        """The internal errors: TFL002 findings by cause, and a one-line crash of the run."""
        causes = Counter(cause(key[5]) for key in self.of(INTERNAL_ERROR))
        if self.returncode == 2 and not causes:
            crash = _INTERNAL_LINE.search(self.last_error_line)
            causes[crash.group(1) if crash else self.last_error_line[:60]] += 1
        return causes

    def per_rule(self) -> Counter[str]:
        return Counter(key[0] for key in self.findings or [] if not key[0].startswith("TFL00"))

    def ended(self) -> str:
        return "timeout" if self.timed_out else str(self.returncode)

    def to_json(self) -> Json:
        return {
            "jobs": self.jobs,
            "exit": self.returncode,
            "timed_out": self.timed_out,
            "seconds": round(self.seconds, 2),
            "last_error_line": self.last_error_line,
            "internal_errors": dict(self.internal()),
            "parse_errors": len(self.of(PARSE_ERROR)),
            "per_rule": dict(sorted(self.per_rule().items())),
            "findings": None if self.findings is None else [list(k) for k in self.findings],
        }


@dataclass
class Result:
    target: Target
    files: int = 0
    error: str | None = None
    note: str | None = None
    runs: list[Run] = field(default_factory=list)

    def differences(self) -> tuple[list[Key], list[Key]]:
        """Findings only the first run gave, and only the second."""
        if len(self.runs) < 2:
            return [], []
        first, second = (set(run.findings or []) for run in self.runs[:2])
        return sorted(first - second), sorted(second - first)

    def identical(self) -> bool | None:
        if len(self.runs) < 2 or any(run.findings is None for run in self.runs):
            return None
        return self.runs[0].findings == self.runs[1].findings

    def failed(self) -> bool:
        return (
            self.error is not None
            or any(run.returncode not in (0, 1) for run in self.runs)
            or self.identical() is not True
        )

    def to_json(self) -> Json:
        only_first, only_second = self.differences()
        return {
            "name": self.target.name,
            "commit": self.target.commit,
            "kind": self.target.kind,
            "list": self.target.source,
            "files": self.files,
            "error": self.error,
            "note": self.note,
            "identical": self.identical(),
            "only_first": [list(key) for key in only_first],
            "only_second": [list(key) for key in only_second],
            "runs": [run.to_json() for run in self.runs],
        }


def _key(item: Json, root: Path) -> Key:
    location = item.get("location") or {}
    cell = item.get("cell")
    return (
        str(item.get("code", "")),
        pinned.relative_to_root(str(item.get("filename", "")), root),
        cell if isinstance(cell, int) else 0,
        int(location.get("row", 0)),
        int(location.get("column", 0)),
        str(item.get("message", "")),
    )


def lint_whole(linter: Linter, root: Path, jobs: int) -> Run:
    outcome = pinned.run(linter, [*CHECK, "--jobs", str(jobs), "."], root)
    items = pinned.findings(outcome)
    keys = None if items is None else sorted(_key(item, root) for item in items)
    return Run(jobs, outcome.returncode, outcome.seconds, keys, outcome.last_error_line())


def _python_files(root: Path) -> int:
    return sum(1 for path in root.rglob("*") if path.suffix in (".py", ".ipynb"))


def measure(
    targets: Sequence[Target], linter: Linter, cache_dir: Path, mirror_root: Path | None
) -> list[Result]:
    results = []
    for target in targets:
        result = Result(target)
        try:
            root, result.note = pinned.materialise(
                target.name, target.commit, None, cache_dir, mirror_root
            )
        except (MaterialiseError, OSError) as error:
            result.error = f"{type(error).__name__}: {error}"
        else:
            result.files = _python_files(root)
            result.runs = [lint_whole(linter, root, jobs) for jobs in JOBS]
        print(_line(result), file=sys.stderr, flush=True)
        results.append(result)
    return results


def _counter(counter: Counter[str]) -> str:
    return ", ".join(f"{name} {n}" for name, n in sorted(counter.items())) or "-"


def _line(result: Result) -> str:
    """One row of the table."""
    if result.error is not None:
        return f"| {result.target.name} | | error: {result.error} | | | | | |"
    first, second = result.runs
    internal = first.internal() + second.internal()
    same = {None: "no JSON", True: "yes", False: "**no**"}[result.identical()]
    return (
        f"| {result.target.name} | {result.files} | {first.ended()} | {second.ended()} "
        f"| {_counter(internal)} | {len(first.of(PARSE_ERROR))} "
        f"| {sum(first.per_rule().values())} | {same} "
        f"| {first.seconds:.1f} / {second.seconds:.1f} |"
    )


def _render(key: Key) -> str:
    code, path, cell, line, column, message = key
    where = f"{path}:cell {cell}" if cell else path
    return f"{where}:{line}:{column}: {code} {message}"


def report(results: Sequence[Result]) -> str:
    out = [
        "| repository | files | exit j1 | exit j2 | TFL002 (j1 + j2) | TFL001 | findings j1 "
        "| j1 = j2 | seconds j1 / j2 |",
        "| --- | ---: | --- | --- | --- | ---: | ---: | --- | --- |",
    ]
    out += [_line(result) for result in results]
    ran = [result for result in results if result.error is None]
    exit_2 = [r for r in ran if any(run.returncode == 2 for run in r.runs)]
    timed_out = [r for r in ran if any(run.timed_out for run in r.runs)]
    differ = [r for r in ran if r.identical() is False]
    out.append("")
    out.append(
        f"{len(ran)} repositories linted; exit 2: {len(exit_2)}; timed out: {len(timed_out)}; "
        f"--jobs 1 and 2 differ: {len(differ)}; not extracted: {len(results) - len(ran)}"
    )
    out += [f"- {r.target.name}: {r.note}" for r in results if r.note is not None]
    for result in exit_2 + timed_out:
        for run in result.runs:
            if run.returncode != 2 and not run.timed_out:
                continue
            why = _counter(run.internal()) if run.returncode == 2 else "timed out"
            out.append(f"- {result.target.name} --jobs {run.jobs}: {run.ended()}: {why}")
            out.append(f"  last line on stderr: {run.last_error_line}")
    for result in differ:
        only_first, only_second = result.differences()
        out.append(
            f"- {result.target.name}: {len(only_first)} findings only with --jobs 1, "
            f"{len(only_second)} only with --jobs 2"
        )
        out += [f"  j1 only: {_render(key)}" for key in only_first[:SHOWN_DIFFERENCES]]
        out += [f"  j2 only: {_render(key)}" for key in only_second[:SHOWN_DIFFERENCES]]
    out.append("")
    out.append("Findings per rule (--jobs 1)")
    out += [
        f"- {result.target.name}: {_counter(result.runs[0].per_rule())}"
        for result in ran
        if result.runs[0].per_rule()
    ]
    return "\n".join(out)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--libraries", action="store_true", help="libraries.toml (the default)")
    parser.add_argument("--realcode", action="store_true", help="realcode/labels.toml's repos")
    parser.add_argument(
        "--labels",
        action="append",
        type=Path,
        default=[],
        help="the repositories of this labels file too (breadth/labels-*.toml; not the holdout)",
    )
    parser.add_argument("--repos", action="append", default=[], help="only these repositories")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--mirror-root", type=Path, default=DEFAULT_MIRROR_ROOT)
    parser.add_argument("--offline", action="store_true", help="never read the mirrors")
    parser.add_argument("--python", help="interpreter that runs tflint_leaks")
    parser.add_argument(
        "--pythonpath", action="append", default=[], help="prepend to PYTHONPATH (a checkout)"
    )
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per linter run")
    parser.add_argument("--json", type=Path, help="write everything to this file")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        targets = []
        if args.libraries or not (args.realcode or args.labels):
            targets += load_targets(LIBRARIES, "libraries")
        if args.realcode:
            targets += load_targets(REALCODE, "realcode")
        for path in args.labels:
            if path.name == HOLDOUT:
                raise ListError(f"{path}: kept for independent checks, never read here")
            targets += load_targets(path, path.stem)
    except ListError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        wanted = set(pinned.chosen(args.repos, [target.name for target in targets]))
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    listed: dict[str, Target] = {}
    for target in targets:  # a repository of several lists is linted once, as the first has it
        if target.name in wanted:
            listed.setdefault(target.name, target)
    targets = list(listed.values())
    linter = pinned.make_linter(args.python, args.pythonpath, args.timeout)
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    module = pinned.linter_module(linter, args.cache_dir)
    mirror_root = None if args.offline or not args.mirror_root.is_dir() else args.mirror_root
    results = measure(targets, linter, args.cache_dir, mirror_root)
    print(f"tflint_leaks: {module}")
    print(report(results))
    if args.json is not None:
        data = {
            "linter": {**linter.describe(), "module": module},
            "jobs": list(JOBS),
            "timeout": args.timeout,
            "repos": [result.to_json() for result in results],
        }
        args.json.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return 1 if any(result.failed() for result in results) else 0


if __name__ == "__main__":
    sys.exit(main())
