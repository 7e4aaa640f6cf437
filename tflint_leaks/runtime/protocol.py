"""The file format shared by the parent and the child of the confirmation mode.

The parent writes a JSON *config* file and starts the child with its path as the only argument.
The child appends one JSON object per line to the *results* file named in the config, flushing
after every line, so whatever it measured survives a timeout, a crash or ``os._exit``. Every
record has a ``k`` field naming its kind (the ``RECORD_*`` constants below).

This module is imported by the child: it must only use the standard library.
"""

from __future__ import annotations

import json
import os
from typing import Any

RECORD_START = "start"  # pid, python, tensorflow version
RECORD_DEGRADED = "degraded"  # a private TensorFlow name is missing: what, fallback
RECORD_FUNCTION = "function"  # a tf.function object created: serial, key, site
RECORD_TRACE = "trace"  # a new trace: key, last, serial, params
RECORD_CALLS = "calls"  # snapshot: [key..., calls, objects] per code object
RECORD_HITS = "hits"  # snapshot: [file, line, hits] per watched line
RECORD_SAMPLE = "sample"  # counters sampled at a loop line: file, line, hit, counters
#: One measured run of a persistent tape (TFL201): file, line (where it is created), run, base
#: and held (``[tensors, MB]`` held by tapes once it exists and when the work after its last
#: use starts; held is None when that work did not run while it was alive), lines (run in its
#: frame from that work on while it was alive), released (``[file, line]`` of the user line
#: that released it) or returned (the qualname of its function, which returned with it alive).
RECORD_TAPE_KEPT = "tape-kept"
#: One measured run of a statement inside a recording tape's block (TFL202): file, line, run,
#: before and after (``[tensors, MB]`` held by tapes when the statement starts and ends).
RECORD_TAPE_RECORDS = "tape-records"
RECORD_LOG = "log"  # a captured TensorFlow warning: level, msg
RECORD_EAGER = "eager"  # tf.config.run_functions_eagerly(True) was called
RECORD_MEMORY_LIMIT = "memory-limit"  # baseline_mb, limit_mb
RECORD_PROFILE = "profile"  # logdir, site, steps: a TensorFlow Profiler trace was written
RECORD_NOISE = "noise"  # rss_mb: the spread of RSS measured in the child's warm-up
RECORD_CONSTANTS = "constants"  # key, bytes, largest, rss_mb: a trace's constants, RSS it took
RECORD_END = "end"  # status, exit_code, exception, where

#: ``end`` statuses written by the child.
STATUS_COMPLETED = "completed"
STATUS_RAISED = "raised"
STATUS_EXITED = "exited"
STATUS_OS_EXIT = "os-exit"
STATUS_TERMINATED = "terminated"
STATUS_FATAL = "fatal"

#: Exact counters sampled at loop lines; ``rss_mb`` is sampled beside them as supporting evidence.
COUNTER_TRACES = "traces"
COUNTER_GRAPH_FUNCTIONS = "graph_functions"
COUNTER_LIVE_GRAPHS = "live_graphs"
COUNTER_KERAS_NAMES = "keras_names"
COUNTER_LIVE_TAPES = "live_tapes"
#: Tensors held by gradient-tape records (the inputs and outputs a tape keeps for its backward
#: pass), and their size in MB.
COUNTER_TAPE_TENSORS = "tape_tensors"
COUNTER_TAPE_MB = "tape_mb"
#: Nodes in the default graph (``Graph.version``): grows when TF1 graph-mode code builds ops.
COUNTER_GRAPH_NODES = "graph_nodes"
#: Live eager tensors (after ``gc.collect()``), and their size in MB.
COUNTER_LIVE_TENSORS = "live_tensors"
COUNTER_TENSOR_MB = "tensor_mb"
COUNTER_RSS_MB = "rss_mb"

#: How much is sampled at a watched line: hits only; counters that need no ``gc.collect()``
#: (traces, graph functions, RSS: for the charts of retracing findings); every exact counter
#: after a ``gc.collect()``; the tensors held by tapes on top (another heap walk); and every live
#: eager tensor on top of that (a third).
SAMPLE_NONE = 0
SAMPLE_LIGHT = 1
SAMPLE_FULL = 2
SAMPLE_TAPES = 3
SAMPLE_TENSORS = 4

#: Full samples (each with a ``gc.collect()``, about 0.14 s with TensorFlow loaded) are taken at
#: the first ``SAMPLE_FIRST`` hits of a loop line, then at every power of two (16, 32, ...), so
#: that a long loop stays fast and a rerun samples the same hits; a loop header is sampled once
#: more at its final check, so that the samples reach the loop's last iteration.
SAMPLE_FIRST = 12


def scheduled(run: int) -> bool:
    """Whether the ``run``-th run (1-based) of a watched line is sampled."""
    return run <= SAMPLE_FIRST or run & (run - 1) == 0


#: Environment given to the child so that TensorFlow's C++ logs stay quiet.
QUIET_ENV = {"TF_CPP_MIN_LOG_LEVEL": "3", "TF_ENABLE_ONEDNN_OPTS": "0"}
#: Added with ``--profile-dir``: TensorFlow's CPU allocator then records each allocation in
#: the profile (its default allocator does not), which TensorBoard's memory profile shows.
PROFILE_ENV = {"TF_CPU_ALLOCATOR_USE_BFC": "true"}


def absolute(path: str) -> str:
    """``path`` made absolute and normalised, without resolving symlinks.

    Code objects keep a file name as it was given to the interpreter, and findings keep it as it
    was given on the command line; both sides compare ``absolute()`` of those names. (``resolve``
    would follow symlinks and could then disagree with how the other side spelled the path.)
    """
    return os.path.abspath(path)  # noqa: PTH100 - see above


def encode(record: dict[str, Any]) -> str:
    """One results line (with its newline) for ``record``."""
    return json.dumps(record, separators=(",", ":"), default=str) + "\n"


def decode_lines(text: str) -> list[dict[str, Any]]:
    """The records of a results file; a line cut short by a killed child is skipped."""
    records: list[dict[str, Any]] = []
    for line in text.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("k"), str):
            records.append(value)
    return records
