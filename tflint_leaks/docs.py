"""Rule documentation: sections of a rule's docs, generated pages, the README's rule table.

``python -m tflint_leaks.docs`` rewrites ``docs/rules/CODE.md`` for every rule and the table
between ``<!-- rules:start -->`` and ``<!-- rules:end -->`` in ``README.md``;
``python -m tflint_leaks.docs --check`` exits 1 and names what is stale instead.
"""

from __future__ import annotations

import re

from tflint_leaks.rules import Rule

_HEADING = re.compile(r"^## (?P<title>.+)$", re.MULTILINE)


def sections(rule: type[Rule]) -> dict[str, str]:
    """The rule's docs split at ``## Heading`` lines: heading -> body (stripped)."""
    docs = rule.docs()
    headings = list(_HEADING.finditer(docs))
    return {
        heading.group("title").strip(): docs[
            heading.end() : headings[i + 1].start() if i + 1 < len(headings) else len(docs)
        ].strip()
        for i, heading in enumerate(headings)
    }
