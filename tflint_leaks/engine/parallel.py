"""Worker processes for the two per-file phases (index, check), with prompt interruption.

Each phase forks its workers once the data they share exists (the project index for the check
phase), hands it to them once through the pool initializer instead of with every task, and
yields results in order as they are finished. Workers ignore SIGINT: on Ctrl-C (or SIGTERM, which
the command line turns into the same interrupt) the parent gets the ``KeyboardInterrupt``, keeps
what was finished and terminates the workers.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from multiprocessing.pool import Pool as _ProcessPool

Item = TypeVar("Item")
Shared = TypeVar("Shared")
Result = TypeVar("Result")

#: The cyclic garbage collector's thresholds while linting. A run keeps hundreds of thousands of
#: small acyclic objects alive (syntax trees, index facts); with Python's defaults (700, 10, 10)
#: the collector scans them again and again, a third of a cold run's time on tf-keras's sources.
#: Collecting the youngest generation every 200,000 allocations instead (mypy's choice) keeps
#: cyclic garbage collected, a few MB later.
COLLECTOR_THRESHOLDS = (200_000, 30, 30)

_task: Callable[[Any, Any], Any] | None = None
_shared: Any = None


def _start_worker(task: Callable[[Any, Any], Any], shared: Any) -> None:
    global _task, _shared
    # The parent handles Ctrl-C and SIGTERM and stops the workers with SIGTERM (terminate):
    # a worker ignores the one and dies of the other without a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    gc.set_threshold(*COLLECTOR_THRESHOLDS)  # inherited when forked, not when spawned
    _task, _shared = task, shared


def _run(item: Any) -> Any:
    assert _task is not None
    return _task(item, _shared)


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the body with :data:`COLLECTOR_THRESHOLDS`, then restore the caller's."""
    before = gc.get_threshold()
    gc.set_threshold(*COLLECTOR_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class Phase(Generic[Item, Shared, Result]):
    """Apply ``task(item, shared)`` to every item, in ``jobs`` processes when jobs > 1."""

    def __init__(self, task: Callable[[Item, Shared], Result], shared: Shared, jobs: int) -> None:
        self._task = task
        self._shared = shared
        self._jobs = jobs
        self._pool: _ProcessPool | None = None

    def run(self, items: Sequence[Item]) -> Iterator[Result]:
        if self._jobs <= 1 or len(items) < 2:
            for item in items:
                yield self._task(item, self._shared)
            return
        import multiprocessing  # only when workers are used: it costs start-up time

        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        context = multiprocessing.get_context(method)
        self._pool = context.Pool(
            min(self._jobs, len(items)), _start_worker, (self._task, self._shared)
        )
        chunk = max(1, min(16, len(items) // (self._jobs * 8)))
        try:
            yield from self._pool.imap(_run, items, chunksize=chunk)
        finally:
            self.close()

    def close(self) -> None:
        """Stop the workers (at once if results are still pending: Ctrl-C)."""
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None
