"""Lint the real-code corpus: findings per rule, internal and parse errors (issues 3 and 7).

    .venv/bin/python benchmarks/precision.py [--packages tf-keras ...] [--reduced]

For each package (all pinned packages by default) it prints the findings per rule and per
thousand lines and counts internal errors (``TFL002``) and parse errors (``TFL001``). Every
finding, with three lines of context, goes to ``benchmarks/results/findings-<package>.md`` for a
human to judge. ``--reduced`` lints a fixed sample of 40 tf-keras files, for CI.

Exit status: 0 no internal error, 1 some internal error, 2 the corpus or the linter could not run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from corpus import (
    PINNED,
    CorpusError,
    add_packages_argument,
    count_lines,
    package_root,
    source_files,
    tflint_command,
    tflint_env,
)

RESULTS = Path(__file__).resolve().parent / "results"
INTERNAL_ERROR = "TFL002"
PARSE_ERROR = "TFL001"
CONTEXT = 3
REDUCED_PACKAGE = "tf-keras"
REDUCED_SIZE = 40

Finding = dict[str, Any]


class LintFailed(Exception):
    """tflint-leaks did not produce a JSON report."""


@dataclass(frozen=True)
class Report:
    label: str  # the package, with its version
    root: Path
    files: int
    lines: int
    findings: list[Finding]

    def count(self, code: str) -> int:
        return sum(1 for finding in self.findings if finding["code"] == code)


def reduced_files(root: Path) -> list[Path]:
    """A fixed sample of the files under ``root``: every n-th by sorted path, 40 in all."""
    files = source_files(root)
    return files[:: max(1, len(files) // REDUCED_SIZE)][:REDUCED_SIZE]


def lint(paths: Sequence[Path], root: Path) -> list[Finding]:
    """Lint ``paths`` (under ``root``, the working directory) and return the JSON findings."""
    argv = tflint_command(
        "--no-cache", "--select", "ALL", "--output-format", "json", "--exit-zero", *map(str, paths)
    )
    result = subprocess.run(
        argv, cwd=root, env=tflint_env(), capture_output=True, text=True, check=False
    )
    if result.stderr.strip():
        print("tflint-leaks said:\n" + "\n".join(result.stderr.splitlines()[-20:]))
    try:
        findings = json.loads(result.stdout)
    except json.JSONDecodeError:
        findings = None
    if not isinstance(findings, list):
        said = (result.stderr.strip().splitlines() or ["no output"])[-1]
        raise LintFailed(f"exit {result.returncode}, no JSON list on stdout: {said}")
    # With --exit-zero only an internal error may fail the run, and it must be reported.
    if result.returncode != 0 and not any(f["code"] == INTERNAL_ERROR for f in findings):
        raise LintFailed(f"exit {result.returncode} without an internal-error diagnostic")
    return findings


def check(label: str, root: Path, paths: Sequence[Path]) -> Report:
    findings = lint(paths, root)
    lines = sum(count_lines(path) for path in paths)
    return Report(label, root, len(paths), lines, findings)


def summary(report: Report) -> str:
    per_kloc = 1000 / report.lines if report.lines else 0.0
    out = [
        f"{report.label}: {report.files} files, {report.lines} lines, "
        f"{len(report.findings)} findings ({len(report.findings) * per_kloc:.3f} per 1000 lines), "
        f"{report.count(INTERNAL_ERROR)} internal errors, {report.count(PARSE_ERROR)} parse errors"
    ]
    rules = Counter((finding["code"], finding["name"]) for finding in report.findings)
    for (code, name), count in sorted(rules.items()):
        out.append(f"  {code} {name:<36} {count:>5}  {count * per_kloc:.3f} per 1000 lines")
    return "\n".join(out)


def relative(finding: Finding, root: Path) -> Path:
    path: Path = root / finding["filename"]  # an absolute filename stays absolute
    return path.relative_to(root) if path.is_relative_to(root) else path


def findings_markdown(report: Report) -> str:
    """Every finding with its context, grouped by rule, with a verdict line to fill in."""
    out = [
        f"# tflint-leaks findings in {report.label}",
        "",
        f"{date.today().isoformat()}: {report.files} files, {report.lines} lines, "
        f"{len(report.findings)} findings. Judge each one: tick true or false positive.",
    ]
    sources: dict[Path, list[str]] = {}
    ordered = sorted(
        report.findings,
        key=lambda f: (f["code"], f["filename"], f["location"]["row"], f["location"]["column"]),
    )
    rule = None
    for finding in ordered:
        if finding["code"] != rule:
            rule = finding["code"]
            total = report.count(rule)
            out += ["", f"## {rule} {finding['name']} ({total})"]
        path = relative(finding, report.root)
        row, column = finding["location"]["row"], finding["location"]["column"]
        out += ["", f"### {path}:{row}:{column}", "", finding["message"], "", "```python"]
        if path not in sources:
            text = (report.root / path).read_bytes().decode("utf-8", errors="replace")
            sources[path] = text.splitlines()
        lines = sources[path]
        for number in range(max(1, row - CONTEXT), min(len(lines), row + CONTEXT) + 1):
            marker = ">" if number == row else " "
            out.append(f"{number:>5} {marker} {lines[number - 1]}")
        out.append("```")
        if rule not in (INTERNAL_ERROR, PARSE_ERROR):  # those are the engine's, not a rule's
            out += ["", "Verdict: [ ] true positive  [ ] false positive"]
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_packages_argument(parser, list(PINNED), "lint")
    parser.add_argument(
        "--reduced",
        action="store_true",
        help=f"lint {REDUCED_SIZE} fixed {REDUCED_PACKAGE} files only (for CI)",
    )
    parser.add_argument("--results-dir", type=Path, default=RESULTS, help="where the .md go")
    args = parser.parse_args(argv)
    packages = [REDUCED_PACKAGE] if args.reduced else args.packages
    reports = []
    for name in packages:
        label = f"{name} {PINNED[name]}" + (" (reduced sample)" if args.reduced else "")
        try:
            root = package_root(name)
            paths = reduced_files(root) if args.reduced else source_files(root)
            report = check(label, root, paths)
        except (CorpusError, LintFailed) as exc:
            print(f"error: {label}: {exc}", file=sys.stderr)
            return 2
        print(summary(report), flush=True)
        args.results_dir.mkdir(parents=True, exist_ok=True)
        out = args.results_dir / f"findings-{name}{'-reduced' if args.reduced else ''}.md"
        out.write_text(findings_markdown(report), encoding="utf-8")
        print(f"  every finding: {out}")
        reports.append(report)
    internal = sum(report.count(INTERNAL_ERROR) for report in reports)
    files = sum(report.files for report in reports)
    lines = sum(report.lines for report in reports)
    findings = sum(len(report.findings) for report in reports)
    parse_errors = sum(report.count(PARSE_ERROR) for report in reports)
    print(
        f"total: {files} files, {lines} lines, {findings} findings, "
        f"{internal} internal errors, {parse_errors} parse errors"
    )
    return 1 if internal else 0


if __name__ == "__main__":
    sys.exit(main())
