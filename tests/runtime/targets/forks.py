"""Forks children that outlive the target and ignore SIGTERM: none may survive the run."""

import os
import signal
import time

import helpers

for _ in range(2):
    if os.fork() == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        helpers.retrace(3)  # instrumentation in a fork must not write results
        time.sleep(300)
        os._exit(0)
helpers.retrace(6)
