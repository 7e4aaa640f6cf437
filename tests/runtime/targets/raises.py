"""Retraces, then raises: the traceback is reported and the findings still get verdicts."""

import helpers


def load_checkpoint(path):
    raise FileNotFoundError(f"no checkpoint at {path}")  # marker: raise


helpers.retrace(6)
load_checkpoint("/nonexistent/ckpt")
helpers.retrace_more(6)  # marker: after
