"""Allocates 64 MB per iteration and keeps it: ``--memory-limit`` must stop it."""

import helpers
import numpy as np

helpers.retrace(6)
kept = []
for _ in range(100):  # marker: alloc-loop
    kept.append(np.ones(8 * 2**20))  # marker: alloc
helpers.retrace_more(6)  # marker: after
