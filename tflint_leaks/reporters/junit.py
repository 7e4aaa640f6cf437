"""JUnit XML for CI test reports: one test suite per file, one failing test case per finding.

A finding judged by ``tflint-leaks confirm`` has its verdict as the failure's ``type``
(``runtime-confirmed``, ``runtime-not-reproduced``, ...) and on the last line of its text.

XML 1.0 cannot hold every character, escaped or not: control characters (a form feed quoted in
a syntax error) and the undecodable bytes of a file name that is not UTF-8 are written as
``\\x0c``/``\\xe9``, so the report is well-formed whatever the files and messages are.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from xml.etree import ElementTree as ET

from tflint_leaks.diagnostics import Diagnostic
from tflint_leaks.reporters.text import chain_lines, location, runtime

#: What XML 1.0 cannot hold: control characters other than tab and line breaks, surrogates
#: (a file name's undecodable bytes), U+FFFE and U+FFFF.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # a byte that did not decode (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _xml(text: str) -> str:
    return _NOT_XML.sub(_escape, text)


def render(diagnostics: Sequence[Diagnostic]) -> str:
    count = str(len(diagnostics))
    # A clean run is one passing test case, and the totals say so too.
    tests = count if diagnostics else "1"
    root = ET.Element("testsuites", name="tflint-leaks", tests=tests, failures=count, errors="0")
    if not diagnostics:
        suite = ET.SubElement(root, "testsuite", name="tflint-leaks", tests="1", failures="0")
        ET.SubElement(suite, "testcase", name="No findings", classname="tflint-leaks")
    by_file = itertools.groupby(sorted(diagnostics, key=Diagnostic.sort_key), lambda d: d.file)
    for file, group in by_file:
        findings = list(group)
        count = str(len(findings))
        suite = ET.SubElement(root, "testsuite", name=_xml(file), tests=count, failures=count)
        for diagnostic in findings:
            place = _xml(location(diagnostic))
            message = _xml(diagnostic.message)
            case = ET.SubElement(
                suite,
                "testcase",
                name=f"{diagnostic.code} {diagnostic.name} at {place}",
                classname=_xml(file),
            )
            failure = ET.SubElement(case, "failure", message=message)
            failure.text = f"{place}: {diagnostic.code} {message}"
            for step in chain_lines(diagnostic):
                failure.text += f"\n{_xml(step)}"
            if diagnostic.confirmation is not None:
                failure.set("type", f"runtime-{diagnostic.confirmation.verdict.value}")
                failure.text += f"\n{_xml(runtime(diagnostic.confirmation))}"
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"
