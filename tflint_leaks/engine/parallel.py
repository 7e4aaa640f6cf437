"""Worker processes for the two per-file phases (index, check): runs that always end.

Each phase forks its workers once the data they share exists (the project index for the check
phase). A worker gets the task, the shared data and every item once, when it starts (copied by
the fork, not pickled), and then only the positions of the items to run, a chunk at a time over
its own pipe; it sends each result back as soon as it has it. So the parent always knows which
item each worker is on, and it waits on the workers' pipes and on their process sentinels at
once: a worker that dies (killed, a segfault, ``os._exit``) is noticed at once, never waited
for. The item it was on is run again in a new worker (a stray kill costs nothing); if that
worker dies too, the phase's ``lost`` function gives the item's result (the runner reports the
file as TFL002) and the run goes on.

Workers ignore SIGINT and die of SIGTERM: on Ctrl-C (or SIGTERM, which the command line turns
into the same interrupt) the parent gets the ``KeyboardInterrupt`` wherever it waits, keeps what
was finished and kills the workers, whatever they are doing, and reaps them.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.context import ForkContext, SpawnContext
    from multiprocessing.process import BaseProcess

Item = TypeVar("Item")
Shared = TypeVar("Shared")
Result = TypeVar("Result")

#: The cyclic garbage collector's thresholds while linting. A run keeps hundreds of thousands of
#: small acyclic objects alive (syntax trees, index facts); with Python's defaults (700, 10, 10)
#: the collector scans them again and again, a third of a cold run's time on tf-keras's sources.
#: Collecting the youngest generation every 200,000 allocations instead (mypy's choice) keeps
#: cyclic garbage collected, a few MB later.
COLLECTOR_THRESHOLDS = (200_000, 30, 30)

#: How many workers may die on one item before it is given up (``lost``): the first death may
#: be a stray kill, the second says the item kills its worker.
DEATHS_PER_ITEM = 2

#: Chunks sent ahead to each worker, so that it never waits for the parent between chunks.
_CHUNKS_AHEAD = 2


@dataclass(frozen=True)
class Death(Generic[Item]):
    """A worker process died while it was running the task on ``item``."""

    item: Item
    #: How it died: ``killed by SIGKILL``, ``exit status 3``.
    cause: str
    #: The item was given up (its result is ``lost``'s); else it was run again.
    final: bool


def _serve(
    tasks: Connection,
    results: Connection,
    task: Callable[[Any, Any], Any],
    shared: Any,
    items: Sequence[Any],
    inherited: list[Connection],
) -> None:
    """A worker: run the task on the positions it is sent, sending back each result (or the
    exception the task raised) as soon as it has it; end when the parent closes its pipe."""
    # The parent handles Ctrl-C and SIGTERM and kills the workers: a worker ignores the one and
    # dies of the other without a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    gc.set_threshold(*COLLECTOR_THRESHOLDS)  # inherited when forked, not when spawned
    # The parent's ends of the pipes, copied by the fork: closed, so that this worker sees the
    # end of its task pipe when the parent closes it or dies.
    for connection in inherited:
        connection.close()
    while True:
        try:
            chunk: list[int] = tasks.recv()
        except EOFError:
            return
        for position in chunk:
            try:
                outcome = (position, True, task(items[position], shared))
            except Exception as error:  # raised again in the parent, as with one process
                outcome = (position, False, error)
            try:
                results.send(outcome)
            except Exception as error:  # the result or the exception cannot be pickled
                results.send((position, False, RuntimeError(f"{type(error).__name__}: {error}")))


@dataclass(eq=False)
class _Worker:
    process: BaseProcess
    tasks: Connection
    results: Connection
    #: The positions sent to it and not answered yet, in the order it runs them.
    running: deque[int] = field(default_factory=deque)


def cause_of_death(exit_code: int | None) -> str:
    """``killed by SIGKILL`` for a negative exit code (a signal), ``exit status N`` else."""
    if exit_code is not None and exit_code < 0:
        try:
            return f"killed by {signal.Signals(-exit_code).name}"
        except ValueError:
            return f"killed by signal {-exit_code}"
    return f"exit status {exit_code}"


class _Workers:
    """Up to ``jobs`` workers running ``task`` on ``items``; results come out in order."""

    def __init__(
        self,
        context: ForkContext | SpawnContext,
        task: Callable[[Any, Any], Any],
        shared: Any,
        items: Sequence[Any],
        jobs: int,
        forked: bool,
        cost: Callable[[Any], int] | None,
    ) -> None:
        self._context = context
        self._start = (task, shared, items)
        self._items = items
        self._jobs = jobs
        self._forked = forked
        self._workers: list[_Worker] = []
        if cost is None:
            self._chunk = max(1, min(16, len(items) // (jobs * 8)))
            self._todo: deque[int] = deque(range(len(items)))
        else:
            # Longest first, one at a time (LPT scheduling): no worker is left with a large
            # item, or a chunk of them, while the others have finished.
            self._chunk = 1
            self._todo = deque(sorted(range(len(items)), key=lambda i: (-cost(items[i]), i)))
        #: How many workers died on each item.
        self._killed: dict[int, int] = {}

    def results(self, lost: Callable[[Any, str], Any], deaths: list[Death[Any]]) -> Iterator[Any]:
        done: dict[int, Any] = {}
        for position in range(len(self._items)):
            while position not in done:
                self._feed()
                self._receive(done, lost, deaths)
            yield done.pop(position)

    def _feed(self) -> None:
        """Start workers while there is work for more, and send each a chunk ahead."""
        while self._todo and len(self._workers) < min(self._jobs, len(self._todo)):
            self._workers.append(self._spawn())
        for worker in self._workers:
            while self._todo and len(worker.running) < _CHUNKS_AHEAD * self._chunk:
                chunk = [self._todo.popleft() for _ in range(min(self._chunk, len(self._todo)))]
                worker.running.extend(chunk)
                try:
                    worker.tasks.send(chunk)
                except BrokenPipeError:  # it died: its sentinel says so, and _bury handles it
                    break

    def _spawn(self) -> _Worker:
        tasks_out, tasks_in = self._context.Pipe(duplex=False)
        results_in, results_out = self._context.Pipe(duplex=False)
        parents = [tasks_in, results_in]
        inherited = [*parents, *(c for w in self._workers for c in (w.tasks, w.results))]
        process = self._context.Process(
            target=_serve,
            args=(tasks_out, results_out, *self._start, inherited if self._forked else []),
            name="tflint-leaks-worker",
            daemon=True,
        )
        process.start()
        tasks_out.close()
        results_out.close()
        return _Worker(process, tasks_in, results_in)

    def _receive(
        self, done: dict[int, Any], lost: Callable[[Any, str], Any], deaths: list[Death[Any]]
    ) -> None:
        """Wait until a worker sends results or dies (an interrupt ends the wait at once), and
        take what came: the results, and the items of a worker that died."""
        from multiprocessing.connection import wait

        ready = wait([o for w in self._workers for o in (w.results, w.process.sentinel)])
        for worker in list(self._workers):
            ended = worker.process.sentinel in ready
            if not ended and worker.results not in ready:
                continue
            try:
                while worker.results.poll():  # what it sent before dying, too
                    self._take(worker, worker.results.recv(), done)
            except EOFError:  # its end of the pipe closed: it died
                ended = True
            if ended:
                self._bury(worker, done, lost, deaths)

    def _take(self, worker: _Worker, message: tuple[int, bool, Any], done: dict[int, Any]) -> None:
        position, finished, value = message
        if not finished:
            raise value
        worker.running.remove(position)
        done[position] = value

    def _bury(
        self,
        worker: _Worker,
        done: dict[int, Any],
        lost: Callable[[Any, str], Any],
        deaths: list[Death[Any]],
    ) -> None:
        """Reap a worker that died; run what it had not finished again, in a new worker, but
        give up the item it was on when it is the second to die on it."""
        self._workers.remove(worker)
        self._end(worker)
        if not worker.running:
            return
        cause = cause_of_death(worker.process.exitcode)
        position = worker.running.popleft()
        self._killed[position] = self._killed.get(position, 0) + 1
        final = self._killed[position] >= DEATHS_PER_ITEM
        deaths.append(Death(self._items[position], cause, final))
        if final:
            done[position] = lost(self._items[position], cause)
        else:
            worker.running.appendleft(position)
        self._todo.extendleft(reversed(worker.running))

    def stop(self) -> None:
        """Kill and reap every worker, whatever it is doing."""
        while self._workers:
            self._end(self._workers.pop())

    @staticmethod
    def _end(worker: _Worker) -> None:
        worker.process.kill()
        worker.process.join()
        worker.tasks.close()
        worker.results.close()


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the body with :data:`COLLECTOR_THRESHOLDS`, then restore the caller's, and give the
    collector back what :func:`settle` took from it (unless the caller had frozen objects
    itself: then they all stay so)."""
    before = gc.get_threshold()
    frozen = gc.get_freeze_count()
    gc.set_threshold(*COLLECTOR_THRESHOLDS)
    try:
        yield
    finally:
        if not frozen:
            gc.unfreeze()
        gc.set_threshold(*before)


def settle() -> None:
    """Leave every object alive now out of the cyclic collector's scans until the run ends
    (:func:`fewer_collections`): the project's indexes, which live as long as the run. Its one
    scan of the older generation rescanned them all (0.3 s of a 10 s run on tf-keras's sources),
    and forked workers no longer copy the pages such a scan writes to."""
    gc.freeze()


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class Phase(Generic[Item, Shared, Result]):
    """Apply ``task(item, shared)`` to every item, in ``jobs`` processes when jobs > 1.

    ``lost(item, cause)`` is the result of an item that killed the workers that ran it (see
    :data:`DEATHS_PER_ITEM`); :attr:`deaths` records every worker that died, and on what.
    ``cost(item)``, an estimate of an item's work (its size), makes the workers take the items
    largest first; the results still come in the items' order."""

    def __init__(
        self,
        task: Callable[[Item, Shared], Result],
        shared: Shared,
        jobs: int,
        lost: Callable[[Item, str], Result],
        cost: Callable[[Item], int] | None = None,
    ) -> None:
        self._task = task
        self._shared = shared
        self._jobs = jobs
        self._lost = lost
        self._cost = cost
        self._workers: _Workers | None = None
        self.deaths: list[Death[Item]] = []

    def run(self, items: Sequence[Item]) -> Iterator[Result]:
        if self._jobs <= 1 or len(items) < 2:
            for item in items:
                yield self._task(item, self._shared)
            return
        import multiprocessing  # only when workers are used: it costs start-up time

        forked = "fork" in multiprocessing.get_all_start_methods()
        self._workers = _Workers(
            multiprocessing.get_context("fork") if forked else multiprocessing.get_context("spawn"),
            self._task,
            self._shared,
            items,
            min(self._jobs, len(items)),
            forked,
            self._cost,
        )
        try:
            yield from self._workers.results(self._lost, self.deaths)
        finally:
            self.close()

    def close(self) -> None:
        """Stop the workers (at once if results are still pending: Ctrl-C)."""
        if self._workers is not None:
            self._workers.stop()
            self._workers = None
