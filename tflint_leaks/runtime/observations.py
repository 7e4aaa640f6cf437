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


def _param(value: dict[str, Any]) -> Param:
    names = {f.name for f in dataclasses.fields(Param)}
    return Param(**{name: value[name] for name in names if name in value})


def _apply(observations: Observations, record: dict[str, Any]) -> None:
    kind = record["k"]
    if kind == protocol.RECORD_START:
        observations.started = True
        observations.tensorflow = record.get("tensorflow")
    elif kind == protocol.RECORD_TRACE:
        site = record.get("site")
        trace = Trace(
            key=_key(record["key"]),
            last_line=int(record["last"]),
            serial=record.get("serial"),
            user=bool(record.get("user")),
            params=tuple(_param(p) for p in record.get("params", ())),
            site=(str(site[0]), int(site[1])) if site else None,
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
