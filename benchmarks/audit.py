"""Audit the precision of tflint-leaks on whole real repositories: lint every repository of the
population, draw a seeded random sample of its findings to judge by hand, and score the judged
sample with Wilson 95% intervals.

    .venv/bin/python benchmarks/audit.py sample                 # lint, sample, write the sheet
    .venv/bin/python benchmarks/audit.py sample --reuse         # sample again from the last lint
    .venv/bin/python benchmarks/audit.py score                  # precision of the judged sheet
    .venv/bin/python benchmarks/audit.py score --json benchmarks/results/audit.json
    .venv/bin/python benchmarks/audit.py census --population benchmarks/results/audit-now.json \
        --out benchmarks/results/audit-census.toml    # every finding, judged ones carried over

The population is every finding (codes TFL1xx to TFL5xx; the engine's TFL0xx codes are left
out) of a whole-repository run, from the repository's root with the default rule selection
(``python -P -m tflint_leaks check --no-cache --output-format json .``), on each repository of
``libraries.toml`` (kind "library") and of ``breadth/labels-a.toml`` and ``labels-b.toml``
(kind "script/app"). ``breadth/labels-holdout.toml`` is never read. The trees are the ones
``whole.py`` extracted under ``benchmarks/.cache/whole/<owner>+<name>/``.

Sampling is simple random sampling without replacement over the whole population (every
finding has the same chance, ``random.Random(seed).sample``), so the sample's proportion of
true positives estimates the population's precision without weights, and each rule's,
repository's and kind's sub-sample is a simple random sample of that domain. ``sample``
writes the sheet ``results/audit-sample.toml`` (one ``[[finding]]`` per sampled finding, with
empty ``verdict`` and ``reason`` to fill in: ``tp``, ``fp`` or ``unsure``) and the whole
population with every run's outcome to ``results/audit-population.json``.

``score`` counts ``tp`` and ``fp`` (``unsure`` counts neither way and is reported apart) and
gives precision = tp / (tp + fp) with its Wilson score interval, overall, per rule, per
repository and per kind. Standard library only; never imports tflint_leaks and never runs
repository code.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pinned
import tomllib
import whole

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parent
BREADTH = (HERE / "breadth" / "labels-a.toml", HERE / "breadth" / "labels-b.toml")
DEFAULT_CACHE = HERE / ".cache" / "whole"
RESULTS = HERE / "results"
DEFAULT_SHEET = RESULTS / "audit-sample.toml"
DEFAULT_POPULATION = RESULTS / "audit-population.json"
DEFAULT_SEED = 20261201
DEFAULT_SIZE = 120
DEFAULT_TIMEOUT = 1800.0
#: The rule codes of the population: TFL101 to TFL599 (the engine's TFL0xx are left out).
RULE_CODE = re.compile(r"^TFL[1-5]\d\d$")
INTERNAL_ERROR = "TFL002"
VERDICTS = ("tp", "fp", "unsure")
#: z for a two-sided 95% interval.
Z95 = 1.959963984540054

Json = dict[str, Any]


class AuditError(Exception):
    """A list, a sheet or a run is not usable."""


# -- the population ----------------------------------------------------------------------


@dataclass(frozen=True)
class Repo:
    name: str
    commit: str
    kind: str  # "library" or "script/app"
    category: str  # the list's own kind ("RL framework", "GANs and VAEs"...)


def population_repos() -> list[Repo]:
    """The repositories of ``libraries.toml`` and of the breadth labels, read as ``whole.py``
    reads its lists (name, commit and kind required, a full commit, none listed twice)."""
    repos: list[Repo] = []
    for path, kind in ((whole.LIBRARIES, "library"), *((path, "script/app") for path in BREADTH)):
        try:
            targets = whole.load_targets(path, kind)
        except whole.ListError as error:
            raise AuditError(str(error)) from None
        repos.extend(Repo(t.name, t.commit, kind, t.kind) for t in targets)
    names = [repo.name for repo in repos]
    duplicates = sorted(name for name, count in Counter(names).items() if count > 1)
    if duplicates:
        raise AuditError(f"listed twice: {', '.join(duplicates)}")
    return repos


def repo_root(cache: Path, name: str) -> Path:
    return cache / name.replace("/", "+")


# -- running the linter ------------------------------------------------------------------


def run_linter(linter: pinned.Linter, root: Path, jobs: int | None) -> pinned.Outcome:
    """``python -P -m tflint_leaks check --no-cache --output-format json .`` in ``root``
    (:func:`pinned.run`: past the timeout the whole session is killed)."""
    args = ["check", "--no-cache", "--output-format", "json"]
    if jobs is not None:
        args += ["--jobs", str(jobs)]
    return pinned.run(linter, [*args, "."], root)


def related_text(finding: Json) -> list[str]:
    """Each ``related`` location as ``role: message (path:line:column)``."""
    lines = []
    for item in finding.get("related") or []:
        where = f"{item.get('filename')}:{item['location']['row']}:{item['location']['column']}"
        if item.get("cell") is not None:
            where = f"{item.get('filename')} cell {item['cell']}:" + where.split(":", 1)[1]
        lines.append(f"{item.get('role')}: {item.get('message')} ({where})")
    return lines


def lint_population(
    repos: Sequence[Repo], cache: Path, linter: pinned.Linter, jobs: int | None
) -> Json:
    """Lint every repository (one at a time) and gather the runs and their rule findings."""
    runs: list[Json] = []
    findings: list[Json] = []
    for number, repo in enumerate(repos, 1):
        root = repo_root(cache, repo.name)
        run: Json = {"repo": repo.name, "commit": repo.commit, "kind": repo.kind}
        run["category"] = repo.category
        if not root.is_dir():
            run.update(status="missing", returncode=None, seconds=0.0, findings=0)
            runs.append(run)
            print(f"[{number}/{len(repos)}] {repo.name}: no tree at {root}", file=sys.stderr)
            continue
        outcome = run_linter(linter, root, jobs)
        run.update(returncode=outcome.returncode, seconds=round(outcome.seconds, 1))
        status = "ok"
        reported: list[Json] = []
        if outcome.returncode is None:
            status = "timeout"
        elif outcome.returncode not in (0, 1):
            status = f"exit {outcome.returncode}"
        else:
            try:
                reported = json.loads(outcome.stdout or "[]")
            except json.JSONDecodeError:
                status = "bad json"
        run["status"] = status
        if status != "ok":
            run["stderr_tail"] = outcome.stderr.strip().splitlines()[-5:]
        codes = Counter(str(item.get("code")) for item in reported)
        run["engine_codes"] = {
            code: count for code, count in sorted(codes.items()) if not RULE_CODE.match(code)
        }
        run["internal_errors"] = [
            f"{item.get('filename')}: {item.get('message')}"
            for item in reported
            if item.get("code") == INTERNAL_ERROR
        ]
        kept = [item for item in reported if RULE_CODE.match(str(item.get("code")))]
        run["findings"] = len(kept)
        run["per_rule"] = {
            code: count for code, count in sorted(codes.items()) if RULE_CODE.match(code)
        }
        for item in kept:
            findings.append(
                {
                    "repo": repo.name,
                    "commit": repo.commit,
                    "kind": repo.kind,
                    "path": str(item.get("filename")),
                    "cell": item.get("cell"),
                    "line": int(item["location"]["row"]),
                    "column": int(item["location"]["column"]),
                    "code": str(item["code"]),
                    "message": str(item.get("message", "")),
                    "related": related_text(item),
                }
            )
        runs.append(run)
        print(
            f"[{number}/{len(repos)}] {repo.name}: {status}, {len(kept)} findings, "
            f"{outcome.seconds:.1f}s",
            file=sys.stderr,
        )
    return {
        "command": "python -P -m tflint_leaks check --no-cache --output-format json .",
        "pythonpath": linter.env.get("PYTHONPATH", ""),
        "runs": runs,
        "findings": findings,
    }


# -- sampling ----------------------------------------------------------------------------


def finding_key(finding: Json) -> tuple[str, str, int, int, int, str, str]:
    cell = finding.get("cell")
    return (
        finding["repo"],
        finding["path"],
        -1 if cell is None else int(cell),
        finding["line"],
        finding["column"],
        finding["code"],
        finding["message"],
    )


def draw(findings: Sequence[Json], size: int, seed: int) -> list[Json]:
    """A simple random sample of ``size`` findings (all of them when there are fewer), drawn
    from the findings in a fixed order so that one seed always gives the same sample."""
    ordered = sorted(findings, key=finding_key)
    chosen = random.Random(seed).sample(range(len(ordered)), min(size, len(ordered)))
    return [ordered[index] for index in sorted(chosen)]


def toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string


def write_sheet(path: Path, sample: Sequence[Json], population: Json, seed: int | None) -> None:
    """Write the findings to judge; ``seed`` None: every finding of the population (a census)."""
    total = len(population["findings"])
    drawn = (
        "a simple random sample (without replacement, every\n# finding equally likely) of"
        if seed is not None
        else "every one (a census) of"
    )
    lines = [
        f"# Precision audit of tflint-leaks: {drawn} the rule findings (TFL1xx-TFL5xx)",
        "# of whole-repository runs on libraries.toml and breadth/labels-a.toml + labels-b.toml.",
        "# Written by `benchmarks/audit.py sample` (or `census`, which carries the verdicts of a",
        "# judged sheet over to the findings at the same places); judge each finding: verdict =",
        "# tp | fp | unsure, and a reason a reader can check. `benchmarks/audit.py score` reads",
        f"# this file. {'' if seed is None else f'seed = {seed}, '}{len(sample)} of {total}"
        f" findings, {len(population['runs'])} repositories.",
        "",
        *([f"seed = {seed}"] if seed is not None else []),
        f"population = {total}",
        "",
    ]
    for index, finding in enumerate(sample, 1):
        lines.append("[[finding]]")
        lines.append(f"id = {index}")
        for key in ("repo", "commit", "kind", "path"):
            lines.append(f"{key} = {toml_string(finding[key])}")
        if finding.get("cell") is not None:
            lines.append(f"cell = {int(finding['cell'])}")
        lines.append(f"line = {finding['line']}")
        lines.append(f"column = {finding['column']}")
        lines.append(f"code = {toml_string(finding['code'])}")
        lines.append(f"message = {toml_string(finding['message'])}")
        if finding["related"]:
            lines.append("related = [")
            lines.extend(f"    {toml_string(text)}," for text in finding["related"])
            lines.append("]")
        lines.append(f"verdict = {toml_string(finding.get('verdict', ''))}")
        lines.append(f"reason = {toml_string(finding.get('reason', ''))}")
        lines.append("")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")


def population_summary(population: Json) -> list[str]:
    runs = population["runs"]
    total = len(population["findings"])
    lines = [f"population: {total} findings in {len(runs)} repositories"]
    for kind in ("library", "script/app"):
        kind_runs = [run for run in runs if run["kind"] == kind]
        count = sum(run["findings"] for run in kind_runs)
        lines.append(f"  {kind}: {count} findings in {len(kind_runs)} repositories")
    per_rule = Counter(finding["code"] for finding in population["findings"])
    lines.append("  per rule: " + ", ".join(f"{c} {n}" for c, n in sorted(per_rule.items())))
    largest = sorted(runs, key=lambda run: (-run["findings"], run["repo"]))[:10]
    lines.append("  largest: " + ", ".join(f"{r['repo']} {r['findings']}" for r in largest))
    for run in runs:
        if run["status"] != "ok" or run.get("internal_errors"):
            detail = "; ".join(run.get("internal_errors") or run.get("stderr_tail") or [])
            lines.append(f"  problem: {run['repo']}: {run['status']} {detail}".rstrip())
    return lines


# -- scoring -----------------------------------------------------------------------------


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (0, 1 for no trials)."""
    if trials == 0:
        return (0.0, 1.0)
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass
class Tally:
    tp: int = 0
    fp: int = 0
    unsure: int = 0

    def add(self, verdict: str) -> None:
        setattr(self, verdict, getattr(self, verdict) + 1)

    def figures(self) -> Json:
        judged = self.tp + self.fp
        low, high = wilson(self.tp, judged)
        return {
            "tp": self.tp,
            "fp": self.fp,
            "unsure": self.unsure,
            "precision": round(self.tp / judged, 4) if judged else None,
            "ci95": [round(low, 4), round(high, 4)] if judged else None,
        }


def load_sheet(path: Path) -> list[Json]:
    try:
        with path.open("rb") as handle:
            findings = tomllib.load(handle).get("finding", [])
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise AuditError(f"{path}: {error}") from None
    problems = []
    for finding in findings:
        verdict = finding.get("verdict", "")
        if verdict not in VERDICTS:
            problems.append(f"#{finding.get('id')}: verdict {verdict!r}")
        elif not str(finding.get("reason", "")).strip():
            problems.append(f"#{finding.get('id')}: no reason")
    if problems:
        raise AuditError(f"{path}: not fully judged: " + ", ".join(problems))
    return list(findings)


def tally_by(findings: Iterable[Json], key: str) -> dict[str, Json]:
    tallies: dict[str, Tally] = {}
    for finding in findings:
        tallies.setdefault(str(finding[key]), Tally()).add(finding["verdict"])
    return {name: tallies[name].figures() for name in sorted(tallies)}


def score(findings: Sequence[Json], population: int | None = None) -> Json:
    overall = Tally()
    for finding in findings:
        overall.add(finding["verdict"])
    census = population == len(findings)
    return {
        "design": "census: every finding of the population judged"
        if census
        else "simple random sample without replacement (unweighted)",
        "sample": len(findings),
        "overall": overall.figures(),
        "per_rule": tally_by(findings, "code"),
        "per_kind": tally_by(findings, "kind"),
        "per_repo": tally_by(findings, "repo"),
    }


def format_row(name: str, figures: Json, width: int) -> str:
    judged = figures["tp"] + figures["fp"]
    if judged:
        low, high = figures["ci95"]
        shown = f"{figures['precision']:6.1%}  [{low:6.1%}, {high:6.1%}]"
    else:
        shown = "     -  (nothing judged)"
    return (
        f"  {name:<{width}} {shown}  tp {figures['tp']:>3}  fp {figures['fp']:>3}"
        f"  unsure {figures['unsure']:>2}"
    )


def report(result: Json, population: int | None) -> str:
    lines = [f"Precision of tflint-leaks ({result['design']}), Wilson 95% intervals"]
    sample_line = f"sample: {result['sample']} findings"
    if population is not None:
        sample_line += f" of {population}"
    lines.append(sample_line)
    if population == result["sample"]:
        lines.append(
            "(a census: the precisions are the population's own; the Wilson intervals are"
            " those of a sample of this size, for comparison with the sampled audits)"
        )
    elif population:
        lines.append(
            f"(sampling fraction {result['sample'] / population:.0%}: the Wilson intervals"
            " leave out the finite-population correction, so they are conservative)"
        )
    width = max(len(name) for name in ["overall", *result["per_repo"]])
    lines.append(format_row("overall", result["overall"], width))
    for title, key in (("per rule", "per_rule"), ("per kind", "per_kind")):
        lines.append(f"{title}:")
        lines.extend(format_row(name, figures, width) for name, figures in result[key].items())
    lines.append("per repository:")
    lines.extend(format_row(name, figures, width) for name, figures in result["per_repo"].items())
    return "\n".join(lines)


# -- the command line --------------------------------------------------------------------


def lint_now(args: argparse.Namespace) -> Json:
    """The population as the checkout of ``--pythonpath`` lints it."""
    linter = pinned.make_linter(args.python, [args.pythonpath], args.timeout)
    return lint_population(population_repos(), args.cache, linter, args.jobs)


def command_sample(args: argparse.Namespace) -> int:
    population_path: Path = args.population
    if args.reuse:
        try:
            population = json.loads(population_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            raise AuditError(f"{population_path}: {error}") from None
    else:
        population = lint_now(args)
        population_path.parent.mkdir(parents=True, exist_ok=True)
        population_path.write_text(json.dumps(population, indent=1) + "\n", encoding="utf-8")
    if args.sheet.exists() and not args.force:
        raise AuditError(f"{args.sheet} exists (judged?); --force to overwrite it")
    sample = draw(population["findings"], args.size, args.seed)
    write_sheet(args.sheet, sample, population, args.seed)
    print("\n".join(population_summary(population)))
    print(f"wrote {len(sample)} findings to {args.sheet}")
    return 0


def command_score(args: argparse.Namespace) -> int:
    findings = load_sheet(args.sheet)
    with args.sheet.open("rb") as handle:
        population = tomllib.load(handle).get("population")
    result = score(findings, population if isinstance(population, int) else None)
    result["population"] = population
    print(report(result, population if isinstance(population, int) else None))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


def place_key(finding: Json) -> tuple[str, str, int, int, int, str]:
    """Where a finding is and its code (its message may change with the linter's wording)."""
    return finding_key(finding)[:6]


def recheck(sheet: Sequence[Json], before: Json, now: Json) -> Json:
    """What became of the judged findings in a new run of the same population: those still
    reported, with the precision among them, those gone (by verdict), and how many findings of
    the new run the judged population did not have (not judged: the estimate leaves them out)."""
    present = {place_key(finding) for finding in now["findings"]}
    known = {place_key(finding) for finding in before["findings"]}
    kept = [finding for finding in sheet if place_key(finding) in present]
    gone = Counter(str(f.get("verdict")) for f in sheet if place_key(f) not in present)
    result = score(kept, len(now["findings"]))  # a census when every finding is judged
    result["gone"] = dict(sorted(gone.items()))
    result["population_before"] = len(before["findings"])
    result["population_now"] = len(now["findings"])
    result["not_judged_new"] = sum(place_key(f) not in known for f in now["findings"])
    return result


def command_recheck(args: argparse.Namespace) -> int:
    try:
        before = json.loads(args.population.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise AuditError(f"{args.population}: {error}") from None
    now = lint_now(args)
    args.now.parent.mkdir(parents=True, exist_ok=True)
    args.now.write_text(json.dumps(now, indent=1) + "\n", encoding="utf-8")
    result = recheck(load_sheet(args.sheet), before, now)
    print(report(result, result["population_now"]))
    print(
        f"gone since the sample: {result['gone']}; findings now {result['population_now']} "
        f"(were {result['population_before']}), {result['not_judged_new']} of them new and "
        "not judged"
    )
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


def census(population: Json, judged: Sequence[Json]) -> list[Json]:
    """Every finding of ``population``, with the verdict and reason of the judged finding at
    the same place (:func:`place_key`), if any."""
    known = {place_key(finding): finding for finding in judged}
    found = []
    for finding in population["findings"]:
        carried = known.get(place_key(finding), {})
        found.append(
            {
                **finding,
                "verdict": carried.get("verdict", ""),
                "reason": carried.get("reason", ""),
            }
        )
    return found


def command_census(args: argparse.Namespace) -> int:
    try:
        population = json.loads(args.population.read_text(encoding="utf-8"))
        with args.sheet.open("rb") as handle:
            judged = tomllib.load(handle).get("finding", [])
    except (OSError, json.JSONDecodeError, tomllib.TOMLDecodeError) as error:
        raise AuditError(str(error)) from None
    if args.out.exists() and not args.force:
        raise AuditError(f"{args.out} exists (judged?); --force to overwrite it")
    findings = census(population, judged)
    write_sheet(args.out, findings, population, None)
    carried = sum(bool(finding["verdict"]) for finding in findings)
    print(f"wrote {len(findings)} findings to {args.out}, {carried} judged already")
    return 0


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    sample = commands.add_parser("sample", help="lint the population and draw the sample")
    sample.add_argument("--seed", type=int, default=DEFAULT_SEED)
    sample.add_argument("--size", type=int, default=DEFAULT_SIZE)
    sample.add_argument("--sheet", type=Path, default=DEFAULT_SHEET)
    sample.add_argument("--population", type=Path, default=DEFAULT_POPULATION)
    sample.add_argument("--reuse", action="store_true", help="sample from --population again")
    sample.add_argument("--force", action="store_true", help="overwrite an existing sheet")
    sample.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    sample.add_argument("--python", default=sys.executable)
    sample.add_argument("--pythonpath", default=str(CHECKOUT), help="the checkout to measure")
    sample.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT)
    sample.add_argument("--jobs", type=int, default=None, help="passed to check --jobs")
    sample.set_defaults(handler=command_sample)
    score_parser = commands.add_parser("score", help="precision of the judged sheet")
    score_parser.add_argument("--sheet", type=Path, default=DEFAULT_SHEET)
    score_parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    score_parser.set_defaults(handler=command_score)
    again = commands.add_parser(
        "recheck", help="lint the population again: precision among the judged findings kept"
    )
    again.add_argument("--sheet", type=Path, default=DEFAULT_SHEET)
    again.add_argument("--population", type=Path, default=DEFAULT_POPULATION)
    again.add_argument("--now", type=Path, default=DEFAULT_POPULATION.with_name("audit-now.json"))
    again.add_argument("--json", type=Path, default=None, help="write the figures here")
    again.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    again.add_argument("--python", default=sys.executable)
    again.add_argument("--pythonpath", default=str(CHECKOUT), help="the checkout to measure")
    again.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT)
    again.add_argument("--jobs", type=int, default=None, help="passed to check --jobs")
    again.set_defaults(handler=command_recheck)
    every = commands.add_parser(
        "census", help="a sheet of every finding of a run, the judged ones' verdicts carried over"
    )
    every.add_argument("--population", type=Path, default=DEFAULT_POPULATION)
    every.add_argument("--sheet", type=Path, default=DEFAULT_SHEET, help="the judged sheet")
    every.add_argument("--out", type=Path, required=True)
    every.add_argument("--force", action="store_true", help="overwrite an existing sheet")
    every.set_defaults(handler=command_census)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        return int(args.handler(args))
    except AuditError as error:
        print(f"audit.py: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
