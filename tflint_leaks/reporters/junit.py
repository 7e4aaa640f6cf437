"""JUnit XML for CI test reports: one test suite per file, one failing test case per finding.

A finding judged by ``tflint-leaks confirm`` has its verdict as the failure's ``type``
(``runtime-confirmed``, ``runtime-not-reproduced``, ...) and on the last line of its text.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from xml.etree import ElementTree as ET

from tflint_leaks.diagnostics import Diagnostic
from tflint_leaks.reporters.text import location, runtime


def render(diagnostics: Sequence[Diagnostic]) -> str:
    count = str(len(diagnostics))
    root = ET.Element("testsuites", name="tflint-leaks", tests=count, failures=count, errors="0")
    if not diagnostics:
        suite = ET.SubElement(root, "testsuite", name="tflint-leaks", tests="1", failures="0")
        ET.SubElement(suite, "testcase", name="No findings", classname="tflint-leaks")
    by_file = itertools.groupby(sorted(diagnostics, key=Diagnostic.sort_key), lambda d: d.file)
    for file, group in by_file:
        findings = list(group)
        suite = ET.SubElement(
            root, "testsuite", name=file, tests=str(len(findings)), failures=str(len(findings))
        )
        for diagnostic in findings:
            place = location(diagnostic)
            case = ET.SubElement(
                suite,
                "testcase",
                name=f"{diagnostic.code} {diagnostic.name} at {place}",
                classname=file,
            )
            failure = ET.SubElement(case, "failure", message=diagnostic.message)
            failure.text = f"{place}: {diagnostic.code} {diagnostic.message}"
            if diagnostic.confirmation is not None:
                failure.set("type", f"runtime-{diagnostic.confirmation.verdict.value}")
                failure.text += f"\n{runtime(diagnostic.confirmation)}"
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"
