"""SARIF 2.1.0 for code scanning (GitHub, Azure DevOps, IDE viewers).

One run whose ``tool.driver`` describes every rule (id, name, short and full description, help
text and URI); one result per finding with its region, related locations and, when the finding
has a fix, a ``fixes`` entry whose artifact changes are the fix's edits. Paths given relative to
the working directory stay relative to ``%SRCROOT%``, which code scanning maps to the checkout.
A finding judged by ``tflint-leaks confirm`` has its verdict on the message's last line and the
whole ``confirmation`` (as in JSON) in the result's ``properties``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import PurePath
from typing import Any
from urllib.parse import quote

from tflint_leaks import __version__
from tflint_leaks.diagnostics import Diagnostic, Location
from tflint_leaks.docs import sections
from tflint_leaks.registry import CODES
from tflint_leaks.reporters.text import chain, runtime

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/tflint-leaks/tflint-leaks"
SOURCE_ROOT = "%SRCROOT%"


def _sentence(text: str) -> str:
    return text if text.endswith(".") else text + "."


def _rule_descriptors() -> list[dict[str, Any]]:
    """Every code the tool can emit (the engine's, the rules', the runtime's), in the registry's
    order, so that every result has a descriptor."""
    descriptors: list[dict[str, Any]] = []
    for code in CODES:
        docs = code.docs()
        descriptors.append(
            {
                "id": code.code,
                "name": code.name,
                "shortDescription": {"text": _sentence(code.summary)},
                "fullDescription": {"text": _sentence(sections(docs)["What it does"])},
                "help": {"text": docs, "markdown": docs},
                "helpUri": code.url,
                "defaultConfiguration": {
                    "level": code.severity.value,
                    "enabled": code.default_enabled,
                },
                "properties": {"fix": code.fix.value if code.fix else None},
            }
        )
    return descriptors


def _artifact(path: str) -> dict[str, str]:
    pure = PurePath(path)
    if pure.is_absolute():
        return {"uri": pure.as_uri()}
    return {"uri": quote(pure.as_posix()), "uriBaseId": SOURCE_ROOT}


def _region(start: Location, end: Location) -> dict[str, int]:
    """SARIF regions are 1-based with an exclusive end column, as our locations are."""
    return {
        "startLine": start.line,
        "startColumn": start.column,
        "endLine": end.line,
        "endColumn": end.column,
    }


def _physical(path: str, start: Location, end: Location) -> dict[str, Any]:
    return {"artifactLocation": _artifact(path), "region": _region(start, end)}


def _flow_location(path: str, start: Location, end: Location, message: str) -> dict[str, Any]:
    return {
        "location": {"physicalLocation": _physical(path, start, end), "message": {"text": message}}
    }


def _result(diagnostic: Diagnostic, rule_index: dict[str, int]) -> dict[str, Any]:
    message = diagnostic.message
    if diagnostic.confirmation is not None:
        message += f"\n{runtime(diagnostic.confirmation)}"
    result: dict[str, Any] = {
        "ruleId": diagnostic.code,
        "ruleIndex": rule_index[diagnostic.code],
        "level": diagnostic.severity.value,
        "message": {"text": message},
        "locations": [
            {"physicalLocation": _physical(diagnostic.file, diagnostic.start, diagnostic.end)}
        ],
    }
    if diagnostic.related:
        result["relatedLocations"] = [
            {
                "id": number,
                "message": {"text": related.message},
                "physicalLocation": _physical(related.file, related.start, related.end),
            }
            for number, related in enumerate(diagnostic.related, start=1)
        ]
    steps = chain(diagnostic)
    if steps:
        # The path from the loop to the finding, for viewers that show code flows.
        flow = [
            _flow_location(related.file, related.start, related.end, related.message)
            for related in steps
        ]
        flow.append(
            _flow_location(diagnostic.file, diagnostic.start, diagnostic.end, diagnostic.message)
        )
        result["codeFlows"] = [{"threadFlows": [{"locations": flow}]}]
    fix = diagnostic.fix
    if fix is not None:
        result["fixes"] = [
            {
                "description": {"text": fix.message},
                "artifactChanges": [
                    {
                        "artifactLocation": _artifact(diagnostic.file),
                        "replacements": [
                            {
                                "deletedRegion": _region(edit.start, edit.end),
                                "insertedContent": {"text": edit.content},
                            }
                            for edit in fix.edits
                        ],
                    }
                ],
                "properties": {"applicability": fix.applicability.value},
            }
        ]
    properties: dict[str, Any] = {"name": diagnostic.name}
    if diagnostic.cell is not None:
        properties["cell"] = diagnostic.cell
    if diagnostic.confirmation is not None:
        properties["confirmation"] = diagnostic.confirmation.to_json()
    result["properties"] = properties
    return result


def to_sarif(diagnostics: Sequence[Diagnostic]) -> dict[str, Any]:
    descriptors = _rule_descriptors()
    rule_index = {descriptor["id"]: i for i, descriptor in enumerate(descriptors)}
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "tflint-leaks",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": descriptors,
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": [_result(d, rule_index) for d in diagnostics],
            }
        ],
    }


def render(diagnostics: Sequence[Diagnostic]) -> str:
    return json.dumps(to_sarif(diagnostics), indent=2) + "\n"
