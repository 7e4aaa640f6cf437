"""Writes about 12 MB to stdout and stderr, then retraces: nothing may block on a full pipe."""

import sys

import helpers

line = "x" * 120
for i in range(50_000):
    print(i, line)
    print(i, line, file=sys.stderr)
helpers.retrace(6)
