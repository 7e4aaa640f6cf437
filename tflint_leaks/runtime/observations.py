"""What the child measured, read back from its results file into plain typed objects."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tflint_leaks.runtime import protocol

#: A code object: absolute file, first line (the first decorator of a decorated function), qualname.
CodeKey = tuple[str, int, str]
Site = tuple[str, int]


@dataclass(frozen=True)
class Param:
    """One parameter's trace type in one trace."""

    name: str
    kind: str  # Literal, TensorSpec, Weakref, List, ...
    repr: str
    type: str | None = None  # the Python type of a Literal value or of a Weakref target
    shape: str | None = None
    dtype: str | None = None
    value: str | None = None  # the repr of a Literal's Python value

    def shown(self) -> str:
        """The value as a user would write it: the Python value, the shape, or the repr."""
        return self.value or self.shape or self.repr


@dataclass(frozen=True)
class Trace:
    key: CodeKey
    last_line: int
    serial: int | None
    user: bool
    params: tuple[Param, ...]
    #: The user line that called the ``tf.function`` (None when no user frame made the call).
    site: Site | None = None
    #: The call's number at its site, and among all calls of the code object (1-based).
    call: int = 0
    ncall: int = 0
    #: The bytes of the trace's graph constants (all of them, and the largest), and how much
    #: process memory (MB) the trace itself took, when they were measured.
    constant_bytes: int | None = None
    largest_constant: int | None = None
    rss_mb: float | None = None

    def signature(self) -> tuple[str, ...]:
        return tuple(param.repr for param in self.params)

    def param(self, name: str) -> Param | None:
        return next((param for param in self.params if param.name == name), None)


@dataclass
class CodeStats:
    """Everything observed for one code object."""

    key: CodeKey
    last_line: int = 0
    traces: list[Trace] = field(default_factory=list)
    calls: int = 0
    objects: int = 0
    creation_sites: set[Site] = field(default_factory=set)
    #: Calls per call site (the user line that called the ``tf.function``).
    site_calls: dict[Site, int] = field(default_factory=dict)

    def contains(self, file: str, line: int) -> bool:
        return self.key[0] == file and self.key[1] <= line <= max(self.last_line, self.key[1])

    def distinct_traces(self) -> int:
        """Traces of distinct (object, signature) pairs.

        A function that creates variables traces twice on its first call with the same
        signature; counting distinct pairs makes its baseline 1 like any other function.
        """
        return len({(trace.serial, trace.signature()) for trace in self.traces})


@dataclass(frozen=True)
class Sample:
    hit: int
    counters: dict[str, float | None]


def position(hit: int, loop: bool) -> int:
    """Where the ``hit``-th run of a watched line sits on a chart and in a summary: at a loop
    header, the iterations completed when it ran (0 at the first, all of them at the final
    check); at any other statement, the run itself (1 at the first)."""
    return hit - 1 if loop else hit


#: ``[tensors, MB]`` held by gradient tapes at one moment.
Held = tuple[float, float]


@dataclass(frozen=True)
class TapeKeptRun:
    """One measured run of a statement that creates a persistent tape (TFL201): what tapes
    held once it existed (``base``) and when the work after its last use started (``held``:
    None when that work did not run while the tape was alive), the lines its frame ran from
    then on while it was alive, and where it was released (a user line) or the function that
    returned with it alive."""

    run: int
    base: Held | None
    held: Held | None
    lines: tuple[int, ...]
    released: Site | None
    returned: str | None

    def kept(self) -> Held | None:
        """What the tape itself still held when the work started: ``held - base``."""
        if self.base is None:
            return None
        if self.held is None:
            return (0.0, 0.0)
        return (self.held[0] - self.base[0], round(self.held[1] - self.base[1], 3))


@dataclass(frozen=True)
class TapeRecordsRun:
    """One measured run of a statement inside a recording tape's block (TFL202)."""

    run: int
    before: Held | None
    after: Held | None

    def added(self) -> Held | None:
        if self.before is None or self.after is None:
            return None
        return (self.after[0] - self.before[0], round(self.after[1] - self.before[1], 3))


@dataclass
class Observations:
    """The whole run as the child saw it."""

    started: bool = False
    tensorflow: str | None = None
    code: dict[CodeKey, CodeStats] = field(default_factory=dict)
    #: The user line that created each ``tf.function`` object, by serial number.
    created: dict[int, Site] = field(default_factory=dict)
    hits: dict[Site, int] = field(default_factory=dict)
    samples: dict[Site, list[Sample]] = field(default_factory=dict)
    tape_kept: dict[Site, list[TapeKeptRun]] = field(default_factory=dict)
    tape_records: dict[Site, list[TapeRecordsRun]] = field(default_factory=dict)
    degraded: list[str] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    eager: bool = False
    memory_limit: dict[str, Any] | None = None
    #: The spread of RSS measured in the child's warm-up, when a tape finding was watched.
    rss_noise_mb: float | None = None
    #: Where the TensorFlow Profiler trace went (``logdir``), the loop it covers and its steps.
    profile: dict[str, Any] | None = None
    end: dict[str, Any] | None = None

    def stats(self, key: CodeKey) -> CodeStats:
        if key not in self.code:
            self.code[key] = CodeStats(key)
        return self.code[key]

    def user_code(self) -> list[CodeStats]:
        return [stats for stats in self.code.values() if any(t.user for t in stats.traces)]


def _key(value: Iterable[Any]) -> CodeKey:
    file, line, qualname = value
    return (str(file), int(line), str(qualname))


def _held(value: Any) -> Held | None:
    return (float(value[0]), float(value[1])) if value else None


def _site(value: Any) -> Site | None:
    return (str(value[0]), int(value[1])) if value else None


def _param(value: dict[str, Any]) -> Param:
    names = {f.name for f in dataclasses.fields(Param)}
    return Param(**{name: value[name] for name in names if name in value})


def _apply_tape(observations: Observations, record: dict[str, Any]) -> None:
    site = (record["file"], int(record["line"]))
    if record["k"] == protocol.RECORD_TAPE_KEPT:
        kept = TapeKeptRun(
            run=int(record["run"]),
            base=_held(record.get("base")),
            held=_held(record.get("held")),
            lines=tuple(int(line) for line in record.get("lines", ())),
            released=_site(record.get("released")),
            returned=record.get("returned"),
        )
        observations.tape_kept.setdefault(site, []).append(kept)
    else:
        recorded = TapeRecordsRun(
            int(record["run"]), _held(record.get("before")), _held(record.get("after"))
        )
        observations.tape_records.setdefault(site, []).append(recorded)


def _apply(observations: Observations, record: dict[str, Any]) -> None:
    kind = record["k"]
    if kind == protocol.RECORD_START:
        observations.started = True
        observations.tensorflow = record.get("tensorflow")
    elif kind == protocol.RECORD_TRACE:
        trace = Trace(
            key=_key(record["key"]),
            last_line=int(record["last"]),
            serial=record.get("serial"),
            user=bool(record.get("user")),
            params=tuple(_param(p) for p in record.get("params", ())),
            site=_site(record.get("site")),
            call=int(record.get("call", 0)),
            ncall=int(record.get("ncall", 0)),
        )
        stats = observations.stats(trace.key)
        stats.traces.append(trace)
        stats.last_line = max(stats.last_line, trace.last_line)
    elif kind == protocol.RECORD_FUNCTION:
        if record.get("site"):
            file, line = record["site"]
            observations.stats(_key(record["key"])).creation_sites.add((file, int(line)))
            observations.created[int(record["serial"])] = (file, int(line))
    elif kind == protocol.RECORD_CALLS:
        for *key, calls, objects, sites in record["counts"]:
            stats = observations.stats(_key(key))
            stats.calls, stats.objects = int(calls), int(objects)
            stats.site_calls = {(str(file), int(line)): int(n) for file, line, n in sites}
    elif kind == protocol.RECORD_HITS:
        observations.hits = {(file, int(line)): int(n) for file, line, n in record["counts"]}
    elif kind == protocol.RECORD_SAMPLE:
        site = (record["file"], int(record["line"]))
        sample = Sample(hit=int(record["hit"]), counters=dict(record["c"]))
        observations.samples.setdefault(site, []).append(sample)
    elif kind in (protocol.RECORD_TAPE_KEPT, protocol.RECORD_TAPE_RECORDS):
        _apply_tape(observations, record)
    elif kind == protocol.RECORD_DEGRADED:
        fallback = record.get("fallback")
        observations.degraded.append(
            f"{record['what']} unavailable: {fallback}" if fallback else record["what"]
        )
    elif kind == protocol.RECORD_LOG:
        observations.logs.append(str(record["msg"]))
    elif kind == protocol.RECORD_EAGER:
        observations.eager = True
    elif kind == protocol.RECORD_MEMORY_LIMIT:
        observations.memory_limit = record
    elif kind == protocol.RECORD_PROFILE:
        observations.profile = record
    elif kind == protocol.RECORD_CONSTANTS:
        traces = observations.stats(_key(record["key"])).traces
        index = next(
            (i for i in range(len(traces) - 1, -1, -1) if traces[i].constant_bytes is None), None
        )
        if index is not None:
            traces[index] = dataclasses.replace(
                traces[index],
                constant_bytes=int(record["bytes"]),
                largest_constant=int(record["largest"]),
                rss_mb=record.get("rss_mb"),
            )
    elif kind == protocol.RECORD_NOISE:
        observations.rss_noise_mb = float(record["rss_mb"])
    elif kind == protocol.RECORD_END:
        observations.end = record


def apply_lines(observations: Observations, text: str) -> None:
    """Add the records in ``text`` (whole lines of the results file) to ``observations``."""
    for record in protocol.decode_lines(text):
        _apply(observations, record)


def read_observations(text: str) -> Observations:
    """Rebuild the observations from the results file's text (possibly cut short)."""
    observations = Observations()
    apply_lines(observations, text)
    return observations
