"""The composite GitHub Action (``action.yml``): its steps' commands run as the runner would run
them (bash, the inputs in their environment, ``GITHUB_ACTION_PATH`` at the action's checkout,
``RUNNER_TEMP`` a scratch directory), on a repository with a leak. Failed before: there was no
action."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.test_packaging import LEAKY, ROOT, _source_tree

ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
_EXPRESSION = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")


def _value(expression: str, inputs: dict[str, str], temp: Path) -> str:
    if expression == "runner.temp":
        return str(temp)
    name = expression.removeprefix("inputs.")
    assert name in inputs, f"unknown expression {expression!r}"
    return inputs[name]


def _substituted(text: str, inputs: dict[str, str], temp: Path) -> str:
    return _EXPRESSION.sub(lambda match: _value(match[1], inputs, temp), text)


def _runs(condition: str | None, inputs: dict[str, str]) -> bool:
    """The ``if:`` forms the action uses: ``always()`` and ``inputs.NAME == 'VALUE'``, joined
    with ``&&``; any other form fails the test (so a new one is tested here too)."""
    if condition is None:
        return True
    results = []
    for term in (part.strip() for part in condition.split("&&")):
        if term == "always()":
            results.append(True)
            continue
        match = re.fullmatch(r"inputs\.([\w-]+) == '([^']*)'", term)
        assert match is not None, f"unsupported condition {term!r}"
        results.append(inputs[match[1]] == match[2])
    return all(results)


def _run_action(with_: dict[str, str], tmp_path: Path) -> list[tuple[dict[str, Any], Any]]:
    """Run every step; (step, completed process or the ``with:`` of a ``uses:`` step)."""
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    inputs.update(with_)
    workspace = tmp_path / "workspace"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "train.py").write_text(LEAKY)
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    action_path = _source_tree(tmp_path)
    done: list[tuple[dict[str, Any], Any]] = []
    for step in ACTION["runs"]["steps"]:
        if not _runs(step.get("if"), inputs):
            continue
        if "uses" in step:
            done.append(
                (step, {k: _substituted(str(v), inputs, temp) for k, v in step["with"].items()})
            )
            continue
        assert step["shell"] == "bash"
        env = {
            key: _substituted(str(value), inputs, temp)
            for key, value in step.get("env", {}).items()
        }
        completed = subprocess.run(
            ["bash", "-e", "-c", step["run"]],
            cwd=workspace,
            env={
                "PATH": os.environ["PATH"],
                "HOME": str(tmp_path),
                "GITHUB_ACTION_PATH": str(action_path),
                "RUNNER_TEMP": str(temp),
                **env,
            },
            capture_output=True,
            text=True,
            check=False,
            timeout=540,
        )
        done.append((step, completed))
    return done


def test_the_action_annotates_the_findings_and_fails_the_job(tmp_path: Path) -> None:
    steps = _run_action({"paths": "src", "args": "--select TFL1"}, tmp_path)
    assert [step["name"] for step, _ in steps] == ["Install tflint-leaks", "Lint"]
    (_, install), (_, lint) = steps
    assert install.returncode == 0, install.stderr[-3000:]
    assert lint.returncode == 1, lint.stderr
    assert lint.stdout.splitlines() == [
        "::warning title=tflint-leaks (TFL101 python-scalar-argument),file=src/train.py,"
        "line=8,endLine=8,col=24,endColumn=25::src/train.py:8:24: TFL101 Python number `i` "
        "changes every iteration; each value retraces `step`"
    ]


def test_the_action_uploads_sarif_when_asked(tmp_path: Path) -> None:
    steps = _run_action({"paths": "src", "sarif": "true", "output-format": "text"}, tmp_path)
    names = [step["name"] for step, _ in steps]
    assert names == [
        "Install tflint-leaks",
        "Write the SARIF report",
        "Upload the SARIF report",
        "Lint",
    ]
    (_, install), (_, report), (upload, given), (_, lint) = steps
    assert install.returncode == 0, install.stderr[-3000:]
    # exit 1 (findings) is not a failure of the report step
    assert report.returncode == 0, report.stderr
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    log = json.loads(Path(given["sarif_file"]).read_text(encoding="utf-8"))
    assert [result["ruleId"] for result in log["runs"][0]["results"]] == ["TFL101"]
    assert lint.returncode == 1
    assert lint.stdout.splitlines()[-1] == "Found 1 warning."
