"""SARIF 2.1.0 for code scanning (GitHub, Azure DevOps, IDE viewers).

One run whose ``tool.driver`` describes every rule (id, name, short and full description, help
text and URI); one result per finding with its region, related locations and, when the finding
has a fix, a ``fixes`` entry whose artifact changes are the fix's edits. Paths given relative to
the working directory stay relative to ``%SRCROOT%``, which code scanning maps to the checkout.
A finding judged by ``tflint-leaks confirm`` has its verdict on the message's last line and the
whole ``confirmation`` (as in JSON) in the result's ``properties``.

A finding in a notebook is placed at the line and column of the ``.ipynb`` file itself, where the
cell's source is in its JSON (the cell stays in the result's properties): code scanning shows a
notebook as the JSON file it is, and the cell URIs of editors (``vscode-notebook-cell:``) mean
nothing to it. A fix's inserted text is escaped as JSON string content and its regions start and
end inside the cell's source strings, so applying it to the file keeps valid JSON and changes
only that cell. A notebook that cannot be read any more is reported on the file, without region.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import quote

from tflint_leaks import __version__
from tflint_leaks.diagnostics import Diagnostic, Location
from tflint_leaks.docs import sections
from tflint_leaks.engine.notebook import (
    NotebookError,
    RawNotebook,
    ascii_only,
    json_string_content,
)
from tflint_leaks.registry import CODES
from tflint_leaks.reporters.text import chain, runtime
from tflint_leaks.source import SourceError, read_source

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
    # The name's bytes, percent-encoded: a name that is not UTF-8 keeps its bytes.
    return {"uri": quote(os.fsencode(pure.as_posix())), "uriBaseId": SOURCE_ROOT}


def _region(start: Location, end: Location) -> dict[str, int]:
    """SARIF regions are 1-based with an exclusive end column, as our locations are."""
    return {
        "startLine": start.line,
        "startColumn": start.column,
        "endLine": end.line,
        "endColumn": end.column,
    }


class _Notebooks:
    """The raw text of each notebook a finding is in, read once."""

    def __init__(self) -> None:
        self._read: dict[str, RawNotebook | None] = {}

    def region(self, path: str, cell: int, start: Location, end: Location) -> dict[str, int] | None:
        """The region of the ``.ipynb`` file where a cell's range is."""
        if path not in self._read:
            try:
                self._read[path] = RawNotebook(read_source(Path(path)))
            except (SourceError, NotebookError, ValueError, KeyError, IndexError):
                self._read[path] = None
        raw = self._read[path]
        if raw is None:
            return None
        first, last = raw.location(cell, start), raw.location(cell, end)
        return _region(first, last) if first is not None and last is not None else None

    def escape(self, path: str, content: str) -> str:
        raw = self._read.get(path)
        return json_string_content(content, raw is not None and ascii_only(raw.text))


def _physical(
    path: str, start: Location, end: Location, cell: int | None, notebooks: _Notebooks
) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": _artifact(path)}
    region = _region(start, end) if cell is None else notebooks.region(path, cell, start, end)
    if region is not None:
        physical["region"] = region
    return physical


def _fixes(diagnostic: Diagnostic, notebooks: _Notebooks) -> list[dict[str, Any]]:
    fix = diagnostic.fix
    if fix is None:
        return []
    replacements = []
    for edit in fix.edits:
        region: dict[str, int] | None = _region(edit.start, edit.end)
        content = edit.content
        if diagnostic.cell is not None:
            region = notebooks.region(diagnostic.file, diagnostic.cell, edit.start, edit.end)
            content = notebooks.escape(diagnostic.file, content)
        if region is None:
            return []
        replacements.append({"deletedRegion": region, "insertedContent": {"text": content}})
    return [
        {
            "description": {"text": fix.message},
            "artifactChanges": [
                {"artifactLocation": _artifact(diagnostic.file), "replacements": replacements}
            ],
            "properties": {"applicability": fix.applicability.value},
        }
    ]


def _flow_location(
    path: str,
    start: Location,
    end: Location,
    cell: int | None,
    message: str,
    notebooks: _Notebooks,
) -> dict[str, Any]:
    physical = _physical(path, start, end, cell, notebooks)
    return {"location": {"physicalLocation": physical, "message": {"text": message}}}


def _result(
    diagnostic: Diagnostic, rule_index: dict[str, int], notebooks: _Notebooks
) -> dict[str, Any]:
    where = _physical(diagnostic.file, diagnostic.start, diagnostic.end, diagnostic.cell, notebooks)
    message = diagnostic.message
    if diagnostic.confirmation is not None:
        message += f"\n{runtime(diagnostic.confirmation)}"
    result: dict[str, Any] = {
        "ruleId": diagnostic.code,
        "ruleIndex": rule_index[diagnostic.code],
        "level": diagnostic.severity.value,
        "message": {"text": message},
        "locations": [{"physicalLocation": where}],
    }
    if diagnostic.related:
        result["relatedLocations"] = [
            {
                "id": number,
                "message": {"text": related.message},
                "physicalLocation": _physical(
                    related.file, related.start, related.end, related.cell, notebooks
                ),
            }
            for number, related in enumerate(diagnostic.related, start=1)
        ]
    steps = chain(diagnostic)
    if steps:
        # The path from the loop to the finding, for viewers that show code flows.
        flow = [_flow_location(r.file, r.start, r.end, r.cell, r.message, notebooks) for r in steps]
        flow.append(
            _flow_location(
                diagnostic.file,
                diagnostic.start,
                diagnostic.end,
                diagnostic.cell,
                diagnostic.message,
                notebooks,
            )
        )
        result["codeFlows"] = [{"threadFlows": [{"locations": flow}]}]
    fixes = _fixes(diagnostic, notebooks)
    if fixes:
        result["fixes"] = fixes
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
    notebooks = _Notebooks()
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
                "results": [_result(d, rule_index, notebooks) for d in diagnostics],
            }
        ],
    }


def render(diagnostics: Sequence[Diagnostic]) -> str:
    return json.dumps(to_sarif(diagnostics), indent=2) + "\n"
