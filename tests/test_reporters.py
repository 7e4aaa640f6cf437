"""Every output format against a golden file, SARIF against its schema and Microsoft's validator.

The input is ``tests/data/reporters/train.py``, linted from its directory so paths are relative.
``TFLINT_UPDATE_GOLDEN=1 pytest tests/test_reporters.py`` rewrites the golden files.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tflint_leaks.cli import OUTPUT_FORMATS, main
from tflint_leaks.diagnostics import CallSite, Confirmation, Diagnostic, Location, Severity, Verdict
from tflint_leaks.registry import CODES, RUNTIME_RETRACING
from tflint_leaks.reporters import github, junit, render, sarif

TESTS = Path(__file__).resolve().parent
DATA = TESTS / "data"
GOLDEN = TESTS / "golden"
ROOT = TESTS.parent
GOLDEN_NAMES = {
    "text": "train.txt",
    "json": "train.json",
    "json-lines": "train.jsonl",
    "sarif": "train.sarif",
    "github": "train.github.txt",
    "junit": "train.junit.xml",
}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().out


@pytest.fixture
def sample(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(DATA / "reporters")


def golden_view(output_format: str, output: str) -> str:
    """What the golden file holds: the output, except that SARIF keeps only the descriptors of
    the rules its results use (every rule's descriptor is checked separately below)."""
    if output_format != "sarif":
        return output
    log = json.loads(output)
    run_ = log["runs"][0]
    used = {result["ruleId"] for result in run_["results"]}
    driver = run_["tool"]["driver"]
    driver["rules"] = [rule for rule in driver["rules"] if rule["id"] in used]
    return json.dumps(log, indent=2) + "\n"


@pytest.mark.usefixtures("sample")
@pytest.mark.parametrize("output_format", OUTPUT_FORMATS)
def test_golden(capsys: pytest.CaptureFixture[str], output_format: str) -> None:
    code, output = run(capsys, "--no-cache", "--output-format", output_format, "train.py")
    assert code == 1
    golden = GOLDEN / GOLDEN_NAMES[output_format]
    actual = golden_view(output_format, output)
    if os.environ.get("TFLINT_UPDATE_GOLDEN"):
        golden.write_text(actual, encoding="utf-8")
    assert actual == golden.read_text(encoding="utf-8")


def test_every_format_has_a_golden_file() -> None:
    assert set(GOLDEN_NAMES) == set(OUTPUT_FORMATS)


def confirmed_findings() -> list[Diagnostic]:
    """``train.py``'s findings as ``tflint-leaks confirm`` reports them: each with a verdict,
    then a runtime-only ``TFL900`` finding."""
    from tflint_leaks.config import Settings
    from tflint_leaks.engine.runner import lint_paths

    step, shape, recreated = lint_paths([Path("train.py")], Settings()).diagnostics
    site = CallSite("train.py", 17, calls=2000, traces=40)
    verdicts = [
        Confirmation(
            Verdict.CONFIRMED,
            "`train_step` traced 40 times in 2000 calls: argument `step` took 40 distinct Python "
            "int values: 0, 1, 2, 3, ..., 39; bounded: no new trace in the last 1960 calls "
            "(40 graphs kept alive)",
            traces=40,
            calls=2000,
            cause="argument `step` took 40 distinct Python int values: 0, 1, 2, 3, ..., 39",
            iterations=2000,
            bounded=True,
            values=tuple(str(value) for value in range(40)),
            sites=(site,),
        ),
        Confirmation(
            Verdict.NOT_REPRODUCED,
            "`encode` traced 2 times in 2000 calls: argument `tokens` took 2 distinct shapes: "
            "(1,), (None,) (the rule accepts at most 5: max-python-values)",
            traces=2,
            calls=2000,
            cause="argument `tokens` took 2 distinct shapes: (1,), (None,)",
        ),
        Confirmation(Verdict.NOT_EXECUTED, "the code never ran while the target ran to its end"),
    ]
    judged = [
        replace(finding, confirmation=confirmation)
        for finding, confirmation in zip([step, shape, recreated], verdicts, strict=True)
    ]
    runtime_only = replace(
        RUNTIME_RETRACING.at(
            "train.py",
            "`scale` retraced at run time (10 traces in 10 calls): argument `factor` took 10 "
            "distinct Python float values: 0.0, 1.0, 2.0, 3.0, ..., 9.0",
            9,
        ),
        confirmation=Confirmation(
            Verdict.CONFIRMED,
            "`scale` traced 10 times in 10 calls: argument `factor` took 10 distinct Python "
            "float values: 0.0, 1.0, 2.0, 3.0, ..., 9.0; unbounded: still tracing new graphs at "
            "the end of the run (a new trace at call 10 of 10)",
            traces=10,
            calls=10,
            bounded=False,
        ),
    )
    return [*judged, runtime_only]


CONFIRMED_NAMES = {
    output_format: name.replace("train.", "confirmed.", 1)
    for output_format, name in GOLDEN_NAMES.items()
}


@pytest.mark.usefixtures("sample")
@pytest.mark.parametrize("output_format", OUTPUT_FORMATS)
def test_golden_confirmed(output_format: str) -> None:
    """Every format shows each finding's verdict and the runtime-only finding."""
    actual = golden_view(output_format, render(output_format, confirmed_findings()))
    golden = GOLDEN / CONFIRMED_NAMES[output_format]
    if os.environ.get("TFLINT_UPDATE_GOLDEN"):
        golden.write_text(actual, encoding="utf-8")
    assert actual == golden.read_text(encoding="utf-8")


@pytest.mark.usefixtures("sample")
def test_confirmed_sarif_and_json_follow_their_schemas() -> None:
    findings = confirmed_findings()
    log = sarif.to_sarif(findings)
    jsonschema.validate(log, sarif_schema(), format_checker=jsonschema.FormatChecker())
    results = log["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["TFL101", "TFL105", "TFL103", "TFL900"]
    verdicts = [r["properties"]["confirmation"]["verdict"] for r in results]
    assert verdicts == ["confirmed", "not-reproduced", "not-executed", "confirmed"]
    schema = json.loads((ROOT / "tflint_leaks/schemas/output.schema.json").read_text())
    jsonschema.validate(json.loads(render("json", findings)), schema)


@pytest.mark.usefixtures("sample")
def test_json_lines_is_the_json_output_one_per_line(capsys: pytest.CaptureFixture[str]) -> None:
    _, lines = run(capsys, "--output-format", "json-lines", "train.py")
    _, whole = run(capsys, "--output-format", "json", "train.py")
    assert [json.loads(line) for line in lines.splitlines()] == json.loads(whole)
    schema = json.loads((ROOT / "tflint_leaks/schemas/output.schema.json").read_text())
    jsonschema.validate(json.loads(whole), schema)


def sarif_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((DATA / "sarif-schema-2.1.0.json").read_text())
    return schema


@pytest.mark.usefixtures("sample")
def test_sarif_is_valid_against_the_schema(capsys: pytest.CaptureFixture[str]) -> None:
    _, output = run(capsys, "--output-format", "sarif", "train.py")
    log = json.loads(output)
    jsonschema.validate(log, sarif_schema(), format_checker=jsonschema.FormatChecker())
    results = log["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["TFL101", "TFL105", "TFL103"]
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in results)
    fixable = [r for r in results if "fixes" in r]
    assert [r["ruleId"] for r in fixable] == ["TFL101", "TFL105"]
    for result in fixable:
        (change,) = result["fixes"][0]["artifactChanges"]
        assert change["artifactLocation"] == {"uri": "train.py", "uriBaseId": "%SRCROOT%"}
        assert change["replacements"]


def test_sarif_describes_every_rule() -> None:
    log = sarif.to_sarif([])
    jsonschema.validate(log, sarif_schema())
    descriptors = {d["id"]: d for d in log["runs"][0]["tool"]["driver"]["rules"]}
    assert list(descriptors) == [code.code for code in CODES]
    assert {"TFL001", "TFL002", "TFL900"} <= set(descriptors)
    for code in CODES:
        descriptor = descriptors[code.code]
        assert descriptor["name"] == code.name
        assert descriptor["shortDescription"]["text"] == f"{code.summary}."
        assert descriptor["fullDescription"]["text"]
        assert descriptor["help"]["markdown"] == code.docs()
        assert descriptor["helpUri"] == code.url


def test_sarif_absolute_paths_are_file_uris(tmp_path: Path) -> None:
    path = tmp_path / "a b.py"
    start = Location(1, 1)
    diagnostic = Diagnostic(
        "TFL103", "function-recreated", "m", Severity.WARNING, str(path), start, start
    )
    (result,) = sarif.to_sarif([diagnostic])["runs"][0]["results"]
    artifact = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact == {"uri": path.as_uri()}
    assert "%20" in artifact["uri"]


def multitool() -> list[str]:
    local = ROOT / "node_modules/.bin/sarif-multitool"
    if local.exists():
        return [str(local)]
    npx = shutil.which("npx")
    if npx is None:
        pytest.skip(
            "npx is not installed, so the SARIF Multitool cannot run (`make sarif-multitool`)"
        )
    probe = subprocess.run(
        [npx, "--no-install", "sarif-multitool", "--version"],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    if probe.returncode != 0:
        pytest.skip(
            "@microsoft/sarif-multitool is not installed; `make sarif-multitool` installs it"
        )
    return [npx, "--no-install", "sarif-multitool"]


@pytest.mark.usefixtures("sample")
def test_sarif_passes_the_sarif_multitool(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    command = multitool()
    _, output = run(capsys, "--output-format", "sarif", "train.py")
    log_path = tmp_path / "tflint-leaks.sarif"
    log_path.write_text(output, encoding="utf-8")
    report = tmp_path / "validation.sarif"
    completed = subprocess.run(
        [*command, "validate", str(log_path), "--output", str(report), "--log", "ForceOverwrite"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    findings = json.loads(report.read_text(encoding="utf-8"))["runs"][0]["results"]
    # The default levels (error and warning): none may fire.
    assert findings == [], completed.stdout


def test_github_escapes_properties_and_data() -> None:
    start, end = Location(3, 5), Location(4, 2)
    diagnostic = Diagnostic(
        "TFL103", "function-recreated", "50% of\nsteps", Severity.ERROR, "dir,a:b.py", start, end
    )
    assert github.annotation(diagnostic) == (
        "::error title=tflint-leaks (TFL103 function-recreated),file=dir%2Ca%3Ab.py,"
        "line=3,endLine=4,col=5::dir,a:b.py:3:5: TFL103 50%25 of%0Asteps"
    )


def test_github_notebook_findings_name_the_cell() -> None:
    start = Location(2, 7)
    diagnostic = Diagnostic(
        "TFL101", "python-scalar-argument", "m", Severity.WARNING, "nb.ipynb", start, start, cell=3
    )
    assert github.annotation(diagnostic) == (
        "::warning title=tflint-leaks (TFL101 python-scalar-argument),file=nb.ipynb"
        "::nb.ipynb:cell 3:2:7: TFL101 m"
    )


def test_junit_without_findings_has_one_passing_case() -> None:
    """Failed before: the totals said ``tests="0"`` around a suite of one test."""
    assert junit.render([]) == (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<testsuites name="tflint-leaks" tests="1" failures="0" errors="0">\n'
        '  <testsuite name="tflint-leaks" tests="1" failures="0">\n'
        '    <testcase name="No findings" classname="tflint-leaks" />\n'
        "  </testsuite>\n"
        "</testsuites>\n"
    )
