"""Retraces, then hangs: the timeout must keep what was measured before the hang."""

import threading

import helpers

helpers.retrace(6)
threading.Event().wait()  # marker: hang
helpers.retrace_more(6)  # marker: after
