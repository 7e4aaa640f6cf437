"""JSON output for editors and tools: a list of findings.

The contract is ``tflint_leaks/schemas/output.schema.json``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tflint_leaks.diagnostics import Diagnostic, Location
from tflint_leaks.registry import BY_CODE


def _location(location: Location) -> dict[str, int]:
    return {"row": location.line, "column": location.column}


def diagnostic_to_json(diagnostic: Diagnostic) -> dict[str, Any]:
    code = BY_CODE.get(diagnostic.code)
    fix = diagnostic.fix
    return {
        "code": diagnostic.code,
        "name": diagnostic.name,
        "message": diagnostic.message,
        "severity": diagnostic.severity.value,
        "filename": diagnostic.file,
        "cell": diagnostic.cell,
        "location": _location(diagnostic.start),
        "end_location": _location(diagnostic.end),
        "fix": None
        if fix is None
        else {
            "applicability": fix.applicability.value,
            "message": fix.message,
            "edits": [
                {
                    "content": edit.content,
                    "location": _location(edit.start),
                    "end_location": _location(edit.end),
                }
                for edit in fix.edits
            ],
        },
        "url": code.url if code is not None else None,
        "related": [
            {
                "role": related.role.value,
                "message": related.message,
                "filename": related.file,
                "cell": related.cell,
                "location": _location(related.start),
                "end_location": _location(related.end),
            }
            for related in diagnostic.related
        ],
        "confirmation": None
        if diagnostic.confirmation is None
        else diagnostic.confirmation.to_json(),
    }


def render(diagnostics: Sequence[Diagnostic]) -> str:
    return json.dumps([diagnostic_to_json(d) for d in diagnostics], indent=2) + "\n"
