"""Retraces, then leaves with ``sys.exit(argv[1])`` or ``os._exit(argv[1])`` (argv[2] == "os")."""

import os
import sys

import helpers

helpers.retrace(6)
if sys.argv[2:] == ["os"]:
    os._exit(int(sys.argv[1]))  # marker: os-exit
sys.exit(int(sys.argv[1]))  # marker: sys-exit
helpers.retrace_more(6)
