"""Score tflint-leaks against the labelled real-code benchmark (``labels.toml``).

    .venv/bin/python benchmarks/realcode/score.py                      # this checkout
    .venv/bin/python benchmarks/realcode/score.py --pythonpath ../old  # another checkout
    .venv/bin/python benchmarks/realcode/score.py --rules TFL4 --json out.json
    .venv/bin/python benchmarks/realcode/score.py --labels a.toml --labels b.toml --whole

Each pinned repository is materialised into ``benchmarks/.cache/realcode/<owner>+<name>/``
(only the files its ``paths`` list) from a ``fetch`` mirror when one is present
(``--mirror-root``, default ``/work/.mirror``), or an already extracted tree is reused
(``../pinned.py``). The linter then runs once per repository, as a subprocess, on all of that
repository's files (``python -P -m tflint_leaks check --select ALL --output-format json
--no-cache``, with the repository's root as the working directory and project root), so
cross-file facts are seen. With ``--whole`` the whole tree is extracted (into
``benchmarks/.cache/whole/``) and linted from its root as ``.``, as a user does; findings
outside the labelled files are counted per repository and kept in ``--json``.

Several ``--labels`` files are read together; results are also given per ``kind`` of
repository. A positive label's verdict is ``leak``, ``retrace`` or ``wrong-result`` (the planned
TFL305).

A finding matches a label when it is in the label's file (and notebook cell), on one of its
lines (``line``, ``lines``, or a place in ``also``), and has the label's code. Counted per rule:

* TP: a positive label with a matching finding; FN: a positive label without one;
* FP: a finding of the resembled code on a ``none`` label, or a finding at a positive label's
  place whose code no label there expects (wrong code);
* unlabelled: findings in labelled files that match no label. They are listed for a human to
  judge and label; precision is reported both ignoring and counting them.

Rules the linter does not implement (asked with ``tflint_leaks rules``) are reported in their
own section and not counted. This script never imports tflint_leaks and never runs repository
code. Exit status: 0 scored, 1 scored with some repositories unavailable or failing, 2 bad
labels or usage.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import tomllib

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import pinned  # noqa: E402 - benchmarks/pinned.py, shared with whole.py
from pinned import (  # noqa: E402
    CHECK,
    DEFAULT_MIRROR_ROOT,
    Linter,
    MaterialiseError,
    implemented_rules,
    linter_module,
    make_linter,
    materialise,
    relative_to_root,
)

DEFAULT_LABELS = HERE / "labels.toml"
DEFAULT_CACHE = HERE.parent / ".cache" / "realcode"
#: Whole trees: the same as ``whole.py``'s, so that both extract a repository once.
WHOLE_CACHE = HERE.parent / ".cache" / "whole"
PARSE_ERROR = "TFL001"
INTERNAL_ERROR = "TFL002"
PROBLEM_CODES = frozenset({PARSE_ERROR, INTERNAL_ERROR})
CODE = re.compile(r"^TFL\d{3}$")
COMMIT = re.compile(r"^[0-9a-f]{40}$")
#: A positive label's verdict: memory that grows, functions traced again, or (for the planned
#: TFL305) a result that is silently wrong.
POSITIVE_VERDICTS = frozenset({"leak", "retrace", "wrong-result"})
QUIET = "quiet"
NONE = "none"

Json = dict[str, Any]


class LabelError(Exception):
    """labels.toml is malformed."""


class LintError(Exception):
    """tflint-leaks did not produce a JSON report."""


@dataclass(frozen=True, order=True)
class Place:
    path: str
    cell: int | None
    line: int

    def render(self) -> str:
        cell = f":cell {self.cell}" if self.cell is not None else ""
        return f"{self.path}{cell}:{self.line}"


@dataclass(frozen=True)
class Repo:
    name: str
    commit: str
    kind: str
    why: str
    paths: tuple[str, ...]


@dataclass(frozen=True)
class Label:
    id: str
    repo: str
    primary: tuple[Place, ...]
    also: tuple[Place, ...]
    expected: str | None  # None for a look-alike that must stay quiet
    resembles: str
    verdict: str
    shape: tuple[str, ...]
    reason: str
    origin: str

    @property
    def code(self) -> str:
        """The rule this label is judged under."""
        return self.expected or self.resembles

    @property
    def positive(self) -> bool:
        return self.expected is not None

    @property
    def places(self) -> tuple[Place, ...]:
        return self.primary + self.also

    def where(self) -> str:
        return f"{self.repo} {self.primary[0].render()}"


@dataclass(frozen=True)
class Finding:
    repo: str
    place: Place
    column: int
    code: str
    message: str

    def render(self) -> str:
        return f"{self.repo} {self.place.render()}:{self.column}: {self.code} {self.message}"

    def to_json(self) -> Json:
        return {
            "repo": self.repo,
            "path": self.place.path,
            "cell": self.place.cell,
            "line": self.place.line,
            "column": self.column,
            "code": self.code,
            "message": self.message,
        }


@dataclass
class RepoRun:
    repo: Repo
    root: Path | None = None
    findings: list[Finding] = field(default_factory=list)
    problems: list[Finding] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0
    note: str | None = None


# -- labels ------------------------------------------------------------------------------


def _str(table: Mapping[str, Any], key: str, where: str, *, required: bool = True) -> str:
    value = table.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not value:
        raise LabelError(f"{where}: `{key}` must be a non-empty string")
    return value


def _int(value: Any, key: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise LabelError(f"{where}: `{key}` must be a positive integer")
    return value


def _strings(table: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise LabelError(f"{where}: `{key}` must be a list of strings")
    return tuple(value)


def _relative(path: str, where: str) -> str:
    posix = PurePosixPath(path)
    if posix.is_absolute() or ".." in posix.parts:
        raise LabelError(f"{where}: path `{path}` must stay inside the repository")
    return posix.as_posix()


def _parse_repo(table: Mapping[str, Any], index: int) -> Repo:
    where = f"repo #{index + 1}"
    name = _str(table, "name", where)
    where = f"repo {name}"
    commit = _str(table, "commit", where)
    if not COMMIT.match(commit):
        raise LabelError(f"{where}: `commit` must be 40 lowercase hex digits")
    paths = tuple(_relative(path, where) for path in _strings(table, "paths", where))
    if not paths:
        raise LabelError(f"{where}: `paths` is empty")
    return Repo(name, commit, _str(table, "kind", where), _str(table, "why", where), paths)


def _parse_place(table: Mapping[str, Any], where: str) -> Place:
    path = _relative(_str(table, "path", where), where)
    cell = table.get("cell")
    return Place(
        path,
        None if cell is None else _int(cell, "cell", where),
        _int(table.get("line"), "line", where),
    )


def _parse_label(table: Mapping[str, Any], repos: Mapping[str, Repo]) -> Label:
    ident = _str(table, "id", "label")
    where = f"label {ident}"
    repo = _str(table, "repo", where)
    if repo not in repos:
        raise LabelError(f"{where}: unknown repo `{repo}`")
    first = _parse_place(table, where)
    lines = table.get("lines", [first.line])
    if not isinstance(lines, list) or first.line not in lines:
        raise LabelError(f"{where}: `lines` must be a list that contains `line`")
    primary = tuple(Place(first.path, first.cell, _int(n, "lines", where)) for n in lines)
    also_tables = table.get("also", [])
    if not isinstance(also_tables, list):
        raise LabelError(f"{where}: `also` must be a list of tables")
    also = tuple(_parse_place(item, where) for item in also_tables)
    expected_text = _str(table, "expected", where)
    resembles = _str(table, "resembles", where)
    verdict = _str(table, "verdict", where)
    expected = None if expected_text == NONE else expected_text
    for code in filter(None, (expected, resembles)):
        if not CODE.match(code):
            raise LabelError(f"{where}: `{code}` is not a rule code")
    if expected is None and verdict != QUIET:
        raise LabelError(f"{where}: a `none` label must have verdict `quiet`")
    if expected is not None and verdict not in POSITIVE_VERDICTS:
        verdicts = ", ".join(f"`{verdict}`" for verdict in sorted(POSITIVE_VERDICTS))
        raise LabelError(f"{where}: a positive label's verdict must be one of {verdicts}")
    if expected is not None and resembles != expected:
        raise LabelError(f"{where}: a positive label resembles its own code")
    known = set(repos[repo].paths)
    for place in (first, *also):
        if place.path not in known:
            raise LabelError(f"{where}: `{place.path}` is not in the repo's `paths`")
    return Label(
        ident,
        repo,
        primary,
        also,
        expected,
        resembles,
        verdict,
        _strings(table, "shape", where),
        _str(table, "reason", where),
        _str(table, "origin", where, required=False),
    )


def _tables(path: Path, data: Mapping[str, Any], key: str) -> list[Any]:
    tables = data.get(key, [])
    if not isinstance(tables, list):
        raise LabelError(f"{path}: `{key}` must be an array of tables")
    return tables


def _read(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise LabelError(f"{path}: {error}") from None


def load_labels(paths: Sequence[Path]) -> tuple[list[Repo], list[Label], Counter[str]]:
    """The repositories and labels of every labels file (a label may name a repository of any
    of them; names and ids are unique across all), and the places read and deliberately not
    labelled (``[[skipped]]``), counted per category."""
    files = [(path, _read(path)) for path in paths]
    repos: list[Repo] = []
    by_name: dict[str, Repo] = {}
    for path, data in files:
        for index, table in enumerate(_tables(path, data, "repo")):
            repo = _parse_repo(table, index)
            if repo.name in by_name:
                raise LabelError(f"{path}: repository {repo.name} is listed twice")
            by_name[repo.name] = repo
            repos.append(repo)
    labels = [
        _parse_label(table, by_name)
        for path, data in files
        for table in _tables(path, data, "label")
    ]
    duplicates = [ident for ident, n in Counter(label.id for label in labels).items() if n > 1]
    if duplicates:
        raise LabelError(f"duplicate label ids: {', '.join(sorted(duplicates))}")
    skipped: Counter[str] = Counter()
    for path, data in files:
        for index, table in enumerate(_tables(path, data, "skipped")):
            where = f"{path.name}: skipped #{index + 1}"
            _str(table, "repo", where)
            _str(table, "reason", where)
            skipped[_str(table, "category", where)] += 1
    return repos, labels, skipped


# -- running the linter ------------------------------------------------------------------


def _finding(repo: Repo, item: Mapping[str, Any], root: Path) -> Finding:
    location = item.get("location") or {}
    cell = item.get("cell")
    return Finding(
        repo.name,
        Place(
            relative_to_root(str(item.get("filename", "")), root),
            cell if isinstance(cell, int) else None,
            int(location.get("row", 0)),
        ),
        int(location.get("column", 0)),
        str(item.get("code", "")),
        str(item.get("message", "")),
    )


def lint(
    linter: Linter, jobs: int | None, repo: Repo, root: Path, *, whole: bool
) -> tuple[list[Finding], float]:
    """Lint ``repo``'s listed files, or (``whole``) its whole tree as a user does: ``.`` from
    its root."""
    targets = ["."] if whole else ["--", *repo.paths]
    args = [*CHECK, *(["--jobs", str(jobs)] if jobs is not None else []), *targets]
    outcome = pinned.run(linter, args, root)
    if outcome.timed_out:
        raise LintError(f"timed out after {linter.timeout:.0f} s")
    if outcome.returncode not in (0, 1):
        raise LintError(f"exit {outcome.returncode}: {outcome.last_error_line()}")
    items = pinned.findings(outcome)
    if items is None:
        raise LintError("the output is not a JSON list of findings")
    return [_finding(repo, item, root) for item in items], outcome.seconds


# -- matching and counting ---------------------------------------------------------------


@dataclass
class Match:
    """What happened to each label and finding."""

    true_positives: dict[str, Finding] = field(default_factory=dict)
    false_positives: list[tuple[Label, Finding, str]] = field(default_factory=list)
    duplicates: list[tuple[Label, Finding]] = field(default_factory=list)
    unlabelled: list[Finding] = field(default_factory=list)
    context: list[Finding] = field(default_factory=list)

    def only(self, repos: set[str]) -> Match:
        """What happened in these repositories."""
        return Match(
            {ident: f for ident, f in self.true_positives.items() if f.repo in repos},
            [item for item in self.false_positives if item[1].repo in repos],
            [item for item in self.duplicates if item[1].repo in repos],
            [finding for finding in self.unlabelled if finding.repo in repos],
            [finding for finding in self.context if finding.repo in repos],
        )


def match(labels: Sequence[Label], findings: Iterable[Finding]) -> Match:
    at: dict[tuple[str, Place], list[Label]] = defaultdict(list)
    labelled_files: set[tuple[str, str]] = set()
    for label in labels:
        for place in label.places:
            at[(label.repo, place)].append(label)
            labelled_files.add((label.repo, place.path))
    result = Match()
    for finding in sorted(findings, key=lambda f: (f.repo, f.place, f.column, f.code)):
        here = at.get((finding.repo, finding.place), [])
        expected = [label for label in here if label.expected == finding.code]
        quiet = [label for label in here if not label.positive and label.resembles == finding.code]
        positive = [label for label in here if label.positive]
        if expected:
            label = expected[0]
            if label.id in result.true_positives:
                result.duplicates.append((label, finding))
            else:
                result.true_positives[label.id] = finding
        elif quiet:
            result.false_positives.append((quiet[0], finding, "finding on a `none` label"))
        elif positive:
            result.false_positives.append((positive[0], finding, "wrong code"))
        elif (finding.repo, finding.place.path) in labelled_files:
            result.unlabelled.append(finding)
        else:
            result.context.append(finding)
    return result


@dataclass
class Counts:
    tp: int = 0
    fn: int = 0
    fp: int = 0
    unlabelled: int = 0
    positives: int = 0
    negatives: int = 0

    def add(self, other: Counts) -> None:
        self.tp += other.tp
        self.fn += other.fn
        self.fp += other.fp
        self.unlabelled += other.unlabelled
        self.positives += other.positives
        self.negatives += other.negatives

    def precision(self, *, with_unlabelled: bool = False) -> float | None:
        denominator = self.tp + self.fp + (self.unlabelled if with_unlabelled else 0)
        return self.tp / denominator if denominator else None

    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    def to_json(self) -> Json:
        return {
            "positives": self.positives,
            "negatives": self.negatives,
            "tp": self.tp,
            "fn": self.fn,
            "fp": self.fp,
            "unlabelled": self.unlabelled,
            "precision": self.precision(),
            "precision_with_unlabelled": self.precision(with_unlabelled=True),
            "recall": self.recall(),
        }


def count(labels: Sequence[Label], result: Match) -> dict[str, Counts]:
    per_rule: dict[str, Counts] = defaultdict(Counts)
    for label in labels:
        counts = per_rule[label.code]
        if label.positive:
            counts.positives += 1
            if label.id in result.true_positives:
                counts.tp += 1
            else:
                counts.fn += 1
        else:
            counts.negatives += 1
    for _, finding, _ in result.false_positives:
        per_rule[finding.code].fp += 1
    for finding in result.unlabelled:
        per_rule[finding.code].unlabelled += 1
    return dict(per_rule)


def families(per_rule: Mapping[str, Counts]) -> dict[str, Counts]:
    grouped: dict[str, Counts] = defaultdict(Counts)
    for code, counts in per_rule.items():
        grouped[code[:4] + "xx"].add(counts)
    return dict(grouped)


def total(per_rule: Mapping[str, Counts]) -> Counts:
    overall = Counts()
    for counts in per_rule.values():
        overall.add(counts)
    return overall


# -- report ------------------------------------------------------------------------------


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _table(rows: Mapping[str, Counts], title: str) -> list[str]:
    width = max([8, *map(len, rows)])
    out = [
        title,
        f"  {'':{width}} {'pos':>4} {'neg':>4} {'TP':>4} {'FN':>4} {'FP':>4} {'unlab':>5}"
        f" {'prec':>5} {'prec+u':>6} {'recall':>6}",
    ]
    for name in sorted(rows):
        c = rows[name]
        out.append(
            f"  {name:{width}} {c.positives:4} {c.negatives:4} {c.tp:4} {c.fn:4} {c.fp:4}"
            f" {c.unlabelled:5} {_ratio(c.precision()):>5}"
            f" {_ratio(c.precision(with_unlabelled=True)):>6} {_ratio(c.recall()):>6}"
        )
    return out


def _causes(labels: Iterable[Label]) -> Counter[str]:
    return Counter(tag for label in labels for tag in label.shape)


def _primary_causes(labels: Iterable[Label]) -> Counter[str]:
    """The first shape tag of each label: its main cause."""
    return Counter(label.shape[0] if label.shape else "-" for label in labels)


@dataclass
class Score:
    labels: list[Label]
    scored: list[Label]
    pending: list[Label]
    result: Match
    per_rule: dict[str, Counts]
    implemented: set[str] | None
    runs: list[RepoRun]
    #: The overall counts of the repositories of each kind.
    per_kind: dict[str, Counts] = field(default_factory=dict)

    def misses(self) -> list[Label]:
        return [
            label
            for label in self.scored
            if label.positive and label.id not in self.result.true_positives
        ]

    def false_positive_labels(self) -> list[Label]:
        return [label for label, _, _ in self.result.false_positives]


def score(
    labels: Sequence[Label],
    runs: Sequence[RepoRun],
    implemented: set[str] | None,
    prefixes: Sequence[str],
) -> Score:
    def selected(code: str) -> bool:
        return not prefixes or any(code.startswith(prefix) for prefix in prefixes)

    ok = {run.repo.name for run in runs if run.error is None}
    chosen = [label for label in labels if label.repo in ok and selected(label.code)]
    findings = [
        finding
        for run in runs
        for finding in run.findings
        if selected(finding.code) and finding.code not in PROBLEM_CODES
    ]
    result = match(chosen, findings)
    scored = [label for label in chosen if implemented is None or label.code in implemented]
    pending = [label for label in chosen if label not in scored]

    def counted(labels: Sequence[Label], result: Match) -> dict[str, Counts]:
        per_rule = count(labels, result)
        return {
            code: counts
            for code, counts in per_rule.items()
            if implemented is None or code in implemented
        }

    kinds: dict[str, set[str]] = defaultdict(set)
    for run in runs:
        kinds[run.repo.kind].add(run.repo.name)
    per_kind = {
        kind: total(counted([label for label in scored if label.repo in names], result.only(names)))
        for kind, names in kinds.items()
    }
    per_rule = counted(scored, result)
    return Score(list(labels), scored, pending, result, per_rule, implemented, list(runs), per_kind)


def _label_line(label: Label) -> str:
    return f"    [{label.id}] {label.where()} ({', '.join(label.shape)}): {label.reason}"


def _unmatched(outcome: Score, *, whole: bool) -> list[str]:
    """Findings no label counts, and the linter's own problems."""
    result = outcome.result
    out = [f"Unlabelled findings in labelled files ({len(result.unlabelled)}): judge and label"]
    out += [f"  {finding.render()}" for finding in result.unlabelled]
    if result.context and whole:
        out.append(
            f"Findings outside labelled files, not counted ({len(result.context)}; "
            "every one is in --json, for an audit)"
        )
        per_repo = Counter(finding.repo for finding in result.context)
        out += [f"  {name}: {n}" for name, n in sorted(per_repo.items())]
    elif result.context:
        out.append(f"Findings in context files (not labelled, not counted) ({len(result.context)})")
        out += [f"  {finding.render()}" for finding in result.context]
    if result.duplicates:
        out.append(f"Duplicate findings for one label ({len(result.duplicates)})")
        out += [f"  {finding.render()} [{label.id}]" for label, finding in result.duplicates]
    problems = [problem for run in outcome.runs for problem in run.problems]
    out.append("")
    out.append(f"Linter problems: parse and internal errors ({len(problems)})")
    out += [f"  {problem.render()}" for problem in problems]
    return out


def report(outcome: Score, *, whole: bool = False) -> str:
    out: list[str] = []
    result = outcome.result
    out.append("Repositories")
    for run in outcome.runs:
        status = run.error or f"{len(run.findings)} findings, {run.seconds:.1f} s"
        note = f" ({run.note})" if run.note else ""
        out.append(f"  {run.repo.name} @ {run.repo.commit[:12]}: {status}{note}")
    out.append("")
    out += _table(outcome.per_rule, "Per rule")
    out.append("")
    out += _table(families(outcome.per_rule), "Per family")
    overall = total(outcome.per_rule)
    out += _table({"overall": overall}, "")
    out.append("")
    out += _table(outcome.per_kind, "Per kind of repository")
    out.append("")
    out.append(f"False positives ({len(result.false_positives)})")
    for label, finding, why in result.false_positives:
        out.append(f"  {finding.render()}  [{why}]")
        out.append(_label_line(label))
    out.append("")
    misses = outcome.misses()
    out.append(f"Misses ({len(misses)})")
    out += [_label_line(label) + f" [{label.code}]" for label in misses]
    out.append("")
    false_positives = outcome.false_positive_labels()
    out.append("Main causes of misses: " + _format_counter(_primary_causes(misses)))
    out.append(
        "Main causes of false positives: " + _format_counter(_primary_causes(false_positives))
    )
    out.append("All shape tags of misses: " + _format_counter(_causes(misses)))
    out.append("All shape tags of false positives: " + _format_counter(_causes(false_positives)))
    out.append("")
    out += _unmatched(outcome, whole=whole)
    if outcome.pending:
        out.append("")
        out.append(f"Not yet implemented rules ({len(outcome.pending)} labels, not counted)")
        by_code: dict[str, list[Label]] = defaultdict(list)
        for label in outcome.pending:
            by_code[label.code].append(label)
        for code in sorted(by_code):
            group = by_code[code]
            positives = sum(label.positive for label in group)
            hits = [label for label in group if label.id in result.true_positives]
            out.append(f"  {code}: {positives} positive, {len(group) - positives} none")
            out += [_label_line(label) for label in group if label.positive and label not in hits]
    return "\n".join(out)


def _format_counter(counter: Counter[str]) -> str:
    return ", ".join(f"{tag} {n}" for tag, n in counter.most_common()) or "-"


def to_json(outcome: Score, linter: Linter, labels_paths: Sequence[Path], *, whole: bool) -> Json:
    result = outcome.result

    def label_json(label: Label) -> Json:
        return {
            "id": label.id,
            "repo": label.repo,
            "place": label.primary[0].render(),
            "code": label.code,
            "expected": label.expected or NONE,
            "shape": list(label.shape),
            "reason": label.reason,
        }

    return {
        "labels": {
            "files": [
                {"file": path.name, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
                for path in labels_paths
            ],
            "count": len(outcome.labels),
        },
        "whole": whole,
        "linter": linter.describe(),
        "implemented_rules": sorted(outcome.implemented or []),
        "repos": [
            {
                "name": run.repo.name,
                "commit": run.repo.commit,
                "kind": run.repo.kind,
                "findings": len(run.findings),
                "outside_labelled_files": sum(f.repo == run.repo.name for f in result.context),
                "seconds": round(run.seconds, 2),
                "error": run.error,
                "note": run.note,
            }
            for run in outcome.runs
        ],
        "overall": total(outcome.per_rule).to_json(),
        "families": {name: c.to_json() for name, c in sorted(families(outcome.per_rule).items())},
        "rules": {code: c.to_json() for code, c in sorted(outcome.per_rule.items())},
        "kinds": {kind: c.to_json() for kind, c in sorted(outcome.per_kind.items())},
        "true_positives": sorted(result.true_positives),
        "false_positives": [
            {"label": label_json(label), "finding": finding.to_json(), "why": why}
            for label, finding, why in result.false_positives
        ],
        "misses": [label_json(label) for label in outcome.misses()],
        "causes": {
            "misses": dict(_primary_causes(outcome.misses())),
            "false_positives": dict(_primary_causes(outcome.false_positive_labels())),
            "misses_all_tags": dict(_causes(outcome.misses())),
            "false_positives_all_tags": dict(_causes(outcome.false_positive_labels())),
        },
        "unlabelled": [finding.to_json() for finding in result.unlabelled],
        "context_findings": [finding.to_json() for finding in result.context],
        "duplicates": [
            {"label": label.id, "finding": finding.to_json()}
            for label, finding in result.duplicates
        ],
        "problems": [problem.to_json() for run in outcome.runs for problem in run.problems],
        "not_implemented": [
            {**label_json(label), "hit": label.id in result.true_positives}
            for label in outcome.pending
        ],
    }


# -- command line ------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--labels",
        type=Path,
        action="append",
        help="labels file; give it again for several (default: labels.toml here)",
    )
    parser.add_argument(
        "--whole",
        action="store_true",
        help="extract whole trees and lint each from its root (`.`), as a user does",
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        help="where repositories are extracted (default: benchmarks/.cache/realcode, "
        "or benchmarks/.cache/whole with --whole)",
    )
    parser.add_argument(
        "--mirror-root",
        type=Path,
        default=DEFAULT_MIRROR_ROOT,
        help="fetch mirrors (<root>/<owner>+<name>/repo); an absent root reuses extracted trees",
    )
    parser.add_argument("--offline", action="store_true", help="never read the mirrors")
    parser.add_argument(
        "--python",
        help="interpreter that runs tflint_leaks (default: $TFLINT_LEAKS_PYTHON or this)",
    )
    parser.add_argument(
        "--pythonpath",
        action="append",
        default=[],
        help="prepend to PYTHONPATH (e.g. an older checkout); also $TFLINT_LEAKS_PYTHONPATH",
    )
    parser.add_argument(
        "--rules", action="append", default=[], help="only these codes or prefixes (TFL4)"
    )
    parser.add_argument("--repos", action="append", default=[], help="only these repositories")
    parser.add_argument("--jobs", type=int, help="--jobs passed to the linter")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per linter run")
    parser.add_argument("--json", type=Path, help="write the results to this file")
    return parser.parse_args(argv)


def _split(values: Sequence[str]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def run_repos(
    repos: Sequence[Repo],
    linter: Linter,
    jobs: int | None,
    cache_dir: Path,
    mirror_root: Path | None,
    *,
    whole: bool,
) -> list[RepoRun]:
    runs = []
    for repo in repos:
        run = RepoRun(repo)
        try:
            run.root, run.note = materialise(
                repo.name, repo.commit, None if whole else repo.paths, cache_dir, mirror_root
            )
            missing = [path for path in repo.paths if not (run.root / path).is_file()]
            if missing:
                raise MaterialiseError(f"not in the tree: {', '.join(missing)}")
            findings, run.seconds = lint(linter, jobs, repo, run.root, whole=whole)
        except (MaterialiseError, LintError, OSError) as error:
            run.error = f"{type(error).__name__}: {error}"
        else:
            run.findings = [f for f in findings if f.code not in PROBLEM_CODES]
            run.problems = [f for f in findings if f.code in PROBLEM_CODES]
        runs.append(run)
    return runs


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    labels_paths = args.labels or [DEFAULT_LABELS]
    cache_dir = args.cache_dir or (WHOLE_CACHE if args.whole else DEFAULT_CACHE)
    try:
        repos, labels, skipped = load_labels(labels_paths)
    except LabelError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        wanted = set(pinned.chosen(args.repos, [repo.name for repo in repos]))
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    repos = [repo for repo in repos if repo.name in wanted]
    labels = [label for label in labels if label.repo in wanted]
    linter = make_linter(args.python, args.pythonpath, args.timeout)
    cache_dir.mkdir(parents=True, exist_ok=True)
    implemented = implemented_rules(linter, cache_dir)
    if implemented is None:
        print("warning: `tflint_leaks rules` failed; counting every rule", file=sys.stderr)
    mirror_root = None if args.offline or not args.mirror_root.is_dir() else args.mirror_root
    runs = run_repos(repos, linter, args.jobs, cache_dir, mirror_root, whole=args.whole)
    outcome = score(labels, runs, implemented, _split(args.rules))
    module = linter_module(linter, cache_dir)
    try:
        print(f"tflint_leaks: {module}")
        print(f"labels: {len(labels)}; places read and skipped: {sum(skipped.values())}", end="")
        print(f" ({_format_counter(skipped)})")
        print(report(outcome, whole=args.whole))
    except BrokenPipeError:  # `score.py | head`: silence the flush at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    if args.json is not None:
        data = to_json(outcome, linter, labels_paths, whole=args.whole)
        data["linter"]["module"] = module
        data["skipped"] = dict(skipped)
        args.json.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return 1 if any(run.error for run in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
