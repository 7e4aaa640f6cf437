"""The child side of ``tflint-leaks confirm``: instrument TensorFlow, run the target, record.

Run as ``python -m tflint_leaks.runtime.child CONFIG``. It imports TensorFlow, installs its hooks
before any user code is imported, sets ``sys.argv`` and ``sys.path[0]`` as Python would for the
target, runs it, and appends what it observes to the results file (see ``protocol``).

Only the standard library and TensorFlow are used here. Every private TensorFlow name is looked up
inside a guard: when one is missing, a ``degraded`` record says which public signal replaces it.
"""

from __future__ import annotations

import builtins
import collections
import contextlib
import ctypes
import dataclasses
import gc
import json
import linecache
import logging
import os
import resource
import runpy
import signal
import sys
import sysconfig
import threading
import time
import traceback
import types
import weakref
from collections.abc import Callable, Sized
from pathlib import Path
from typing import Any, NoReturn, Protocol

from tflint_leaks.runtime import protocol

#: A code object as the runtime knows it: absolute file, first line (first decorator), qualname.
CodeKey = tuple[str, int, str]
Site = tuple[str, int]
TraceFunc = Callable[[types.FrameType, str, Any], Any]

_INFO_ATTR = "_tflint_leaks_info"
_FLUSH_PERIOD_S = 1.0
_MAX_LOG_RECORDS = 50
_MAX_REPR = 120
_MAX_VALUE = 40
_NOISE_ROUNDS = 5
#: The lines recorded per measured tape run (TFL201) while the tape stays alive.
_MAX_LINES = 20
_LOG_MARKERS = ("retracing", "AutoGraph", "autograph")


class Records(Protocol):
    """Where a :class:`Recorder` writes its records: the results file (:class:`Writer`), or the
    memory of the pytest plugin's ``tf_budget`` fixture."""

    def write(self, kind: str, **fields: Any) -> None: ...


class Writer:
    """Appends records to the results file; only the original child process writes."""

    def __init__(self, path: str) -> None:
        self._pid = os.getpid()
        self._lock = threading.RLock()  # re-entered by the SIGTERM handler
        self._file = Path(path).open("a", encoding="utf-8")  # noqa: SIM115 - open for the run

    def write(self, kind: str, **fields: Any) -> None:
        if os.getpid() != self._pid:  # a fork of the target: its parent is the one measured
            return
        with self._lock:
            self._file.write(protocol.encode({"k": kind, **fields}))
            self._file.flush()


class UserFiles:
    """Decides, with a cache, whether a file belongs to the user rather than Python or a library."""

    def __init__(self, roots: list[str]) -> None:
        self._roots = [protocol.absolute(root) + os.sep for root in roots]
        excluded = {sys.prefix, sys.base_prefix, sys.exec_prefix, str(Path(__file__).parent)}
        excluded.update(sysconfig.get_paths().values())
        self._excluded = [protocol.absolute(path) + os.sep for path in excluded]
        self._cache: dict[str, bool] = {}

    def __contains__(self, filename: str) -> bool:
        known = self._cache.get(filename)
        if known is None:
            path = protocol.absolute(filename)
            known = any(path.startswith(root) for root in self._roots) and not any(
                path.startswith(prefix) for prefix in self._excluded
            )
            self._cache[filename] = known
        return known


def code_key(function: Any) -> tuple[CodeKey, int] | None:
    """The key and last line of the code object behind a (decorated, bound) Python callable."""
    target = function
    for _ in range(16):  # unwrap decorators (tf_decorator and functools.wraps both set this)
        inner = getattr(target, "__wrapped__", None)
        if inner is None:
            break
        target = inner
    target = getattr(target, "__func__", target)
    code = getattr(target, "__code__", None)
    if not isinstance(code, types.CodeType):
        return None
    last = max((line for _, _, line in code.co_lines() if line is not None), default=0)
    key = (
        protocol.absolute(code.co_filename),
        code.co_firstlineno,
        getattr(code, "co_qualname", code.co_name),
    )
    return key, max(last, code.co_firstlineno)


def describe_constraint(name: str, constraint: Any) -> dict[str, Any]:
    """A JSON description of one parameter's trace type (``Literal``, ``TensorSpec``, ...)."""
    kind = type(constraint).__name__
    text = repr(constraint)[:_MAX_REPR]
    described: dict[str, Any] = {"name": name, "kind": kind, "repr": text}
    if kind == "Literal" and hasattr(constraint, "value"):
        described["type"] = type(constraint.value).__name__
        described["value"] = repr(constraint.value)[:_MAX_VALUE]
    elif kind == "Weakref" and " to '" in text:
        described["type"] = text.split(" to '", 1)[1].split("'", 1)[0]
    elif hasattr(constraint, "shape") and hasattr(constraint, "dtype"):
        described["shape"] = str(
            tuple(constraint.shape.as_list()) if constraint.shape.rank is not None else None
        )
        described["dtype"] = getattr(constraint.dtype, "name", str(constraint.dtype))
    return described


class Recorder:
    """Holds what the hooks observe and writes it out incrementally."""

    def __init__(self, writer: Records, user_files: UserFiles) -> None:
        self.writer = writer
        self.user_files = user_files
        self.calls: collections.Counter[CodeKey] = collections.Counter()
        #: Calls per code object and call site (the user line that called the ``tf.function``).
        self.site_calls: collections.Counter[tuple[CodeKey, Site | None]] = collections.Counter()
        self.objects: collections.Counter[CodeKey] = collections.Counter()
        self.hits: collections.Counter[tuple[str, int]] = collections.Counter()
        self.loop_ends: collections.Counter[tuple[str, int]] = collections.Counter()
        self.live_graphs: weakref.WeakSet[Any] = weakref.WeakSet()
        self.live_tapes: weakref.WeakSet[Any] = weakref.WeakSet()
        #: The ``GradientTape`` created last (the one a statement that creates a tape made).
        self.newest_tape: weakref.ref[Any] | None = None
        #: The live tapes, once their creation is tracked (None before, or in a release where
        #: it cannot be).
        self.tapes: weakref.WeakSet[Any] | None = None
        #: Counter readers, each with the sampling level it needs (``protocol.SAMPLE_*``).
        self.counters: list[tuple[int, Callable[[], dict[str, float | None]]]] = []
        self.eager_reported = False
        #: Measure the constants of every trace of user code (a TFL501 finding is judged).
        self.measure_constants = False
        self.profiler: Profiler | None = None
        self.traces = 0
        self.logs_written = 0
        self._serials = 0
        self._stack = threading.local()
        self._dirty = False
        self._flush_lock = threading.RLock()

    # -- tf.function objects and calls ---------------------------------------------------------

    def function_info(self, function: Any) -> tuple[int, CodeKey | None]:
        """The serial number and code key of a ``Function`` object, assigned on first sight."""
        info: tuple[int, CodeKey | None] | None = function.__dict__.get(_INFO_ATTR)
        if info is None:
            info = self.register_function(function, getattr(function, "_python_function", None))
        return info

    def register_function(self, function: Any, python_function: Any) -> tuple[int, CodeKey | None]:
        self._serials += 1
        found = code_key(python_function)
        key = found[0] if found else None
        info = (self._serials, key)
        function.__dict__[_INFO_ATTR] = info
        if key is not None:
            self.objects[key] += 1
            self._dirty = True
            if key[0] in self.user_files:
                site = self.user_site(sys._getframe(2))
                self.writer.write(protocol.RECORD_FUNCTION, serial=info[0], key=key, site=site)
        return info

    def user_site(self, frame: types.FrameType | None) -> list[Any] | None:
        """The innermost frame of user code at or above ``frame``, as ``[file, line]``."""
        while frame is not None:
            if frame.f_code.co_filename in self.user_files:
                return [protocol.absolute(frame.f_code.co_filename), frame.f_lineno]
            frame = frame.f_back
        return None

    def enter_call(self, function: Any, caller: types.FrameType | None) -> None:
        """Count a call of ``function`` made from ``caller``, at the user line that made it."""
        serial, key = self.function_info(function)
        found = self.user_site(caller)
        site = (found[0], found[1]) if found else None
        call = (serial, site, 0, 0)
        if key is not None:
            self.calls[key] += 1
            self.site_calls[key, site] += 1
            call = (serial, site, self.site_calls[key, site], self.calls[key])
            self._dirty = True
        self.call_stack().append(call)

    def leave_call(self) -> None:
        self.call_stack().pop()

    def call_stack(self) -> list[tuple[int, Site | None, int, int]]:
        """The ``tf.function`` calls in progress on this thread: serial, call site, the call's
        number at its site and for its code object."""
        stack: list[tuple[int, Site | None, int, int]] | None = getattr(self._stack, "calls", None)
        if stack is None:
            stack = self._stack.calls = []
        return stack

    # -- traces --------------------------------------------------------------------------------

    def on_trace(self, function_type: Any, tracing_options: Any) -> None:
        self.traces += 1
        found = code_key(getattr(tracing_options, "python_function", None))
        if found is None:
            return
        key, last = found
        stack = self.call_stack()
        params = [
            describe_constraint(name, getattr(parameter, "type_constraint", None))
            for name, parameter in getattr(function_type, "parameters", {}).items()
        ]
        serial, site, site_call, call = stack[-1] if stack else (None, None, 0, 0)
        self.writer.write(
            protocol.RECORD_TRACE,
            key=key,
            last=last,
            serial=serial,
            site=site,
            call=site_call,
            ncall=call,
            user=key[0] in self.user_files,
            params=params,
        )
        self.flush()

    def on_traced(self, tracing_options: Any, concrete: Any, rss_before: float | None) -> None:
        """After a trace of user code: the bytes of the constants its graph holds, and how much
        process memory the trace took (``rss_before``: RSS in MB when it started)."""
        found = code_key(getattr(tracing_options, "python_function", None))
        if found is None or found[0][0] not in self.user_files:
            return
        sizes = graph_constants(getattr(concrete, "graph", None))
        if sizes is None:
            return
        after = rss_mb()
        grew = (
            round(after - rss_before, 1) if after is not None and rss_before is not None else None
        )
        self.writer.write(
            protocol.RECORD_CONSTANTS,
            key=found[0],
            bytes=sum(sizes),
            largest=max(sizes, default=0),
            rss_mb=grew,
        )
        self.flush()

    # -- samples at loop lines -----------------------------------------------------------------

    def on_run(self, watch: Watch) -> int:
        """Count a run of a watched statement (or loop header); sample it if it is scheduled.
        Returns the run's number."""
        site = watch.site
        self.hits[site] += 1
        hit = self.hits[site]
        self._dirty = True
        if hit == 1:
            self.flush()
        if watch.level and self.profiler is not None:
            self.profiler.on_loop(site, hit)
        if watch.level and protocol.scheduled(hit):
            self.sample(site, hit, watch.level)
        return hit

    def on_loop_end(self, watch: Watch) -> None:
        """A loop's header ran its final check: sample it there (if that run was not sampled
        already), at the first end of the loop and then at every power of two of its ends, so
        that the samples of a loop run once reach its last iteration."""
        site = watch.site
        self.loop_ends[site] += 1
        ends, hit = self.loop_ends[site], self.hits[site]
        if watch.level and not protocol.scheduled(hit) and ends & (ends - 1) == 0:
            self.sample(site, hit, watch.level)

    def sample(self, site: Site, hit: int, level: int) -> None:
        if level >= protocol.SAMPLE_FULL:
            gc.collect()
        counters: dict[str, float | None] = {}
        for needs, read in self.counters:
            if needs <= level:
                counters.update(read())
        self.writer.write(protocol.RECORD_SAMPLE, file=site[0], line=site[1], hit=hit, c=counters)

    # -- output --------------------------------------------------------------------------------

    def flush(self) -> None:
        """Write snapshots of the call and hit counts if they changed since the last flush."""
        self.check_eager()
        with self._flush_lock:
            if not self._dirty:
                return
            self._dirty = False
            calls, objects, hits = dict(self.calls), dict(self.objects), dict(self.hits)
            sites: dict[CodeKey, list[list[Any]]] = {}
            for (key, site), count in list(self.site_calls.items()):
                if site is not None:
                    sites.setdefault(key, []).append([*site, count])
            counts = [
                [*key, calls.get(key, 0), objects.get(key, 0), sites.get(key, [])]
                for key in {**objects, **calls}
            ]
            self.writer.write(protocol.RECORD_CALLS, counts=counts)
            lines = [[file, line, count] for (file, line), count in hits.items()]
            self.writer.write(protocol.RECORD_HITS, counts=lines)

    def check_eager(self) -> None:
        if self.eager_reported:
            return
        try:
            import tensorflow as tf

            eager = bool(tf.config.functions_run_eagerly())
        except Exception:  # a missing public API must not stop the run
            return
        if eager:
            self.eager_reported = True
            self.writer.write(protocol.RECORD_EAGER, on=True)

    def log(self, record: logging.LogRecord) -> None:
        if self.logs_written < _MAX_LOG_RECORDS:
            self.logs_written += 1
            self.writer.write(protocol.RECORD_LOG, level=record.levelname, msg=record.getMessage())


def rss_mb() -> float | None:
    """The resident set size of this process in MB (Linux), or None where unavailable."""
    try:
        with Path("/proc/self/statm").open(encoding="ascii") as statm:
            pages = int(statm.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return round(pages * resource.getpagesize() / 2**20, 2)


def address_space_mb() -> float | None:
    """The virtual address space (``VmSize``) of this process in MB (Linux)."""
    try:
        with Path("/proc/self/status").open(encoding="ascii") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        return None
    return None


# -- hooks ---------------------------------------------------------------------------------------


def guarded_import(module: str) -> Any:
    """Import a (possibly private) TensorFlow module, or None if this release lacks it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def install_trace_hook(recorder: Recorder) -> bool:
    """Wrap ``tracing_compilation._create_concrete_function``: every new trace goes through it."""
    module = guarded_import("tensorflow.python.eager.polymorphic_function.tracing_compilation")
    original = getattr(module, "_create_concrete_function", None)
    if original is None:
        return False

    def create_concrete_function(
        function_type: Any, type_context: Any, func_graph: Any, tracing_options: Any
    ) -> Any:
        try:
            recorder.on_trace(function_type, tracing_options)
        except Exception as error:  # instrumentation must never break the target
            recorder.writer.write(protocol.RECORD_DEGRADED, what=f"trace hook: {error!r}")
        if not recorder.measure_constants:
            return original(function_type, type_context, func_graph, tracing_options)
        before = rss_mb()
        concrete = original(function_type, type_context, func_graph, tracing_options)
        try:
            recorder.on_traced(tracing_options, concrete, before)
        except Exception as error:  # instrumentation must never break the target
            recorder.writer.write(protocol.RECORD_DEGRADED, what=f"constants: {error!r}")
        return concrete

    module._create_concrete_function = create_concrete_function
    return True


def install_function_hooks(recorder: Recorder, pause_tracer: bool = True) -> bool:
    """Wrap ``Function.__init__`` (serial numbers, creation sites) and ``Function.__call__``.

    With ``pause_tracer``, the line sampler is paused for each call (the confirm child's); the
    pytest plugin leaves whatever tracer runs (a debugger, coverage) alone."""
    module = guarded_import("tensorflow.python.eager.polymorphic_function.polymorphic_function")
    function_class = getattr(module, "Function", None)
    if function_class is None:
        return False
    original_init = function_class.__init__
    original_call = function_class.__call__

    def __init__(self: Any, python_function: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, python_function, *args, **kwargs)
        recorder.register_function(self, python_function)

    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
        recorder.enter_call(self, sys._getframe(1))
        # TensorFlow's own Python frames need no line events: pausing the line sampler for the
        # call keeps them at full speed (the caller's frame keeps its local trace function)
        sampler = sys.gettrace() if pause_tracer else None
        if sampler is not None:
            sys.settrace(None)
        try:
            return original_call(self, *args, **kwargs)
        finally:
            if sampler is not None:
                sys.settrace(sampler)
            recorder.leave_call()

    function_class.__init__ = __init__
    function_class.__call__ = __call__
    return True


def track_instances(
    module_name: str, class_name: str, live: Any, created: Callable[[Any], None] | None = None
) -> bool:
    """Add every new instance of ``module_name.class_name`` to the weak set ``live`` (and hand
    it to ``created``)."""
    cls = getattr(guarded_import(module_name), class_name, None)
    if cls is None:
        return False
    original_init = cls.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        with contextlib.suppress(TypeError):  # not weak-referenceable in this release
            live.add(self)
            if created is not None:
                created(self)

    cls.__init__ = __init__
    return True


def graph_function_count() -> int | None:
    """Functions registered in the eager context (each trace adds at least one)."""
    module = guarded_import("tensorflow.python.eager.context")
    try:
        return len(module.context().list_function_names())
    except Exception:  # private API: fall back to no value
        return None


def keras_name_count() -> int | None:
    """The sum of Keras 3's name counters (``dense``, ``dense_1``, ...), if Keras is loaded."""
    module = sys.modules.get("keras.src.backend.common.global_state")
    if module is None:
        return 0
    try:
        uids = module.get_global_attribute("object_name_uids", {})
        return int(sum(uids.values()))
    except Exception:  # private API: fall back to no value
        return None


def tape_holdings(tapes: Sized | None) -> dict[str, float | None]:
    """The tensors that gradient tapes hold, and their size: exact, read from the heap.

    A tape keeps each recorded op's inputs and outputs for the backward pass in a tuple or list
    that only TensorFlow's C++ tape refers to. After ``gc.collect()``, while a tape is alive
    (``tapes``: the live ones; None when they are not tracked), a tuple or list holding an
    ``EagerTensor`` that no Python object (nor a local variable of a running frame) refers to is
    such a record. With no tape alive nothing is: the list a running comprehension (or
    ``list()``) is building is referred to by no object the garbage collector sees either.
    """
    module = sys.modules.get("tensorflow.python.framework.ops")
    eager_tensor = getattr(module, "EagerTensor", None)
    if eager_tensor is None:
        return {protocol.COUNTER_TAPE_TENSORS: None, protocol.COUNTER_TAPE_MB: None}
    if tapes is not None and not len(tapes):
        return {protocol.COUNTER_TAPE_TENSORS: 0, protocol.COUNTER_TAPE_MB: 0.0}
    records = [
        o
        for o in gc.get_objects()
        if type(o) in (tuple, list) and any(type(item) is eager_tensor for item in o)
    ]
    referred = {id(value) for frame in running_frames() for value in frame.f_locals.values()}
    if records:
        ids = {id(record) for record in records}
        first = records[0]
        for referrer in gc.get_referrers(*records):
            # the list above and the argument tuple of this very call hold every record
            if referrer is records or (
                type(referrer) is tuple and len(referrer) == len(records) and referrer[0] is first
            ):
                continue
            referred.update(i for item in gc.get_referents(referrer) if (i := id(item)) in ids)
    held = {
        id(item): item
        for record in records
        if id(record) not in referred
        for item in record
        if type(item) is eager_tensor
    }
    size = sum(t.shape.num_elements() * t.dtype.size for t in held.values())
    return {
        protocol.COUNTER_TAPE_TENSORS: len(held),
        protocol.COUNTER_TAPE_MB: round(size / 2**20, 3),
    }


def held_by_tapes(tapes: Sized | None) -> list[float] | None:
    """``[tensors, MB]`` held by gradient tapes (``tapes``: the live ones) right now (after
    ``gc.collect()``), or None when they cannot be counted in this release."""
    for frame in running_frames():
        frame.f_locals  # noqa: B018 - refresh each snapshot: a deleted local is gone from it
    gc.collect()
    held = tape_holdings(tapes)
    tensors, size = held[protocol.COUNTER_TAPE_TENSORS], held[protocol.COUNTER_TAPE_MB]
    return None if tensors is None or size is None else [tensors, size]


def graph_constants(graph: Any) -> list[int] | None:
    """The size in bytes of each ``Const`` op of a traced graph (from its static shape and
    dtype: the constant's data is not copied), or None when the graph cannot be read."""
    try:
        outputs = [op.outputs[0] for op in graph.get_operations() if op.type == "Const"]
        return [(out.shape.num_elements() or 0) * out.dtype.size for out in outputs]
    except Exception:  # an unexpected graph: no measurement
        return None


def default_graph_nodes() -> int | None:
    """The nodes added to the default graph so far (``Graph.version``, public)."""
    module = guarded_import("tensorflow.python.framework.ops")
    try:
        return int(module.get_default_graph().version)
    except Exception:  # fall back to no value
        return None


def live_tensors() -> dict[str, float | None]:
    """Every live ``EagerTensor`` (the garbage collector tracks them) and their size."""
    eager_tensor = getattr(sys.modules.get("tensorflow.python.framework.ops"), "EagerTensor", None)
    if eager_tensor is None:
        return {protocol.COUNTER_LIVE_TENSORS: None, protocol.COUNTER_TENSOR_MB: None}
    tensors = [o for o in gc.get_objects() if type(o) is eager_tensor]
    size = sum((t.shape.num_elements() or 0) * t.dtype.size for t in tensors)
    return {
        protocol.COUNTER_LIVE_TENSORS: len(tensors),
        protocol.COUNTER_TENSOR_MB: round(size / 2**20, 3),
    }


def running_frames() -> list[types.FrameType]:
    """Every frame on the stack of every thread."""
    frames = []
    for frame in sys._current_frames().values():
        current: types.FrameType | None = frame
        while current is not None:
            frames.append(current)
            current = current.f_back
    return frames


def install_counters(recorder: Recorder) -> None:
    """Register the exact counters sampled at loop lines, reporting any that are unavailable."""

    def counter(level: int, name: str, read: Callable[[], float | None]) -> None:
        recorder.counters.append((level, lambda: {name: read()}))

    counter(protocol.SAMPLE_LIGHT, protocol.COUNTER_TRACES, lambda: recorder.traces)
    counter(protocol.SAMPLE_LIGHT, protocol.COUNTER_GRAPH_FUNCTIONS, graph_function_count)
    counter(protocol.SAMPLE_LIGHT, protocol.COUNTER_RSS_MB, rss_mb)
    counter(protocol.SAMPLE_FULL, protocol.COUNTER_GRAPH_NODES, default_graph_nodes)
    counter(protocol.SAMPLE_FULL, protocol.COUNTER_KERAS_NAMES, keras_name_count)
    live_graphs, live_tapes = recorder.live_graphs, recorder.live_tapes
    if track_instances("tensorflow.python.framework.func_graph", "FuncGraph", live_graphs):
        counter(protocol.SAMPLE_FULL, protocol.COUNTER_LIVE_GRAPHS, lambda: len(live_graphs))
    else:
        degraded(recorder, "func_graph.FuncGraph", "live graphs are not counted")

    def tape_created(tape: Any) -> None:
        recorder.newest_tape = weakref.ref(tape)

    if track_instances(
        "tensorflow.python.eager.backprop", "GradientTape", live_tapes, tape_created
    ):
        recorder.tapes = live_tapes
        counter(protocol.SAMPLE_FULL, protocol.COUNTER_LIVE_TAPES, lambda: len(live_tapes))
    else:
        degraded(recorder, "backprop.GradientTape", "live tapes are not counted")
    if getattr(guarded_import("tensorflow.python.framework.ops"), "EagerTensor", None) is None:
        degraded(
            recorder,
            "ops.EagerTensor",
            "tensors held by tapes and live tensors are not counted: tape findings are judged "
            "on process memory",
        )
    else:
        recorder.counters.append((protocol.SAMPLE_TAPES, lambda: tape_holdings(recorder.tapes)))
        recorder.counters.append((protocol.SAMPLE_TENSORS, live_tensors))


def degraded(recorder: Recorder, what: str, fallback: str) -> None:
    recorder.writer.write(protocol.RECORD_DEGRADED, what=what, fallback=fallback)


class LogCapture(logging.Filter):
    """Takes TensorFlow's retracing and AutoGraph warnings off stderr and into the results."""

    def __init__(self, recorder: Recorder) -> None:
        super().__init__()
        self._recorder = recorder

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if any(marker in message for marker in _LOG_MARKERS):
            self._recorder.log(record)
            return False
        return True


def install_hooks(recorder: Recorder, *, plugin: bool = False) -> None:
    """Every hook and counter. For the pytest plugin (``plugin``), TensorFlow's log and any
    tracer already running are left as they are."""
    if not install_trace_hook(recorder):
        degraded(
            recorder,
            "tracing_compilation._create_concrete_function",
            "traces are not recorded one by one; TensorFlow's retracing warnings are the evidence",
        )
    if not install_function_hooks(recorder, pause_tracer=not plugin):
        degraded(
            recorder,
            "polymorphic_function.Function",
            "calls and tf.function objects are not counted",
        )
    install_counters(recorder)
    if not plugin:
        logging.getLogger("tensorflow").addFilter(LogCapture(recorder))


# -- the TensorFlow Profiler ----------------------------------------------------------------------


class Profiler:
    """Records a TensorFlow Profiler trace of the measured iterations into ``logdir``.

    It starts when a sampled loop header first runs and stops once that loop has run its first
    ``protocol.SAMPLE_FIRST`` iterations (the ones sampled one by one), or when the run ends.
    Each run of the header opens a step (``iteration``, with its number), which TensorBoard's
    profile plugin shows as steps; the parent sets ``TF_CPU_ALLOCATOR_USE_BFC`` so that CPU
    allocations appear in its memory profile.
    """

    def __init__(self, recorder: Recorder, logdir: str) -> None:
        self._recorder = recorder
        self._logdir = logdir
        self._site: tuple[str, int] | None = None
        self._step: Any = None
        self._steps = 0
        self._done = False

    def on_loop(self, site: tuple[str, int], hit: int) -> None:
        if self._done or (self._site is not None and site != self._site):
            return
        import tensorflow as tf
        from tensorflow.python.profiler.trace import Trace

        if self._site is None:
            self._site = site
            tf.profiler.experimental.start(self._logdir)
        self._close_step()
        if hit > protocol.SAMPLE_FIRST + 1:  # the header's run after the last measured one
            self.stop()
            return
        self._step = Trace("iteration", step_num=hit, _r=1)
        self._step.__enter__()
        self._steps = hit

    def _close_step(self) -> None:
        if self._step is not None:
            self._step.__exit__(None, None, None)
            self._step = None

    def stop(self) -> None:
        if self._done or self._site is None:
            return
        import tensorflow as tf

        self._done = True
        self._close_step()
        try:
            tf.profiler.experimental.stop()
        except Exception as error:  # a profiler failure must not change how the run ended
            degraded(self._recorder, f"TensorFlow Profiler ({error!r})", "no profile written")
            return
        self._recorder.writer.write(
            protocol.RECORD_PROFILE, logdir=self._logdir, site=list(self._site), steps=self._steps
        )


# -- line sampling -------------------------------------------------------------------------------


@dataclasses.dataclass
class Watch:
    """A watched statement or loop header (one of the config's ``sites``): its runs are counted
    and sampled at ``level`` (``protocol.SAMPLE_*``), and its probes measure something in each.

    A run of a statement starts when a line of its ``head`` runs coming from outside the whole
    statement, or by a jump back (a loop around it): a ``with`` line also runs on exit from its
    body, which is not a run. A loop header runs once per iteration and once more for its final
    check, which is the run followed by a line outside its ``body``.
    """

    site: Site
    level: int
    loop: bool
    head: range
    whole: range
    body: range
    probes: list[TapeKept | TapeRecords] = dataclasses.field(default_factory=list)

    @classmethod
    def read(cls, spec: dict[str, Any]) -> Watch:
        def lines(pair: list[int] | None) -> range:
            return range(pair[0], pair[1] + 1) if pair else range(0)

        return cls(
            (spec["file"], int(spec["line"])),
            int(spec["level"]),
            bool(spec["loop"]),
            lines(spec["head"]),
            lines(spec["whole"]),
            lines(spec.get("body")),
        )


class TapeKept:
    """TFL201: what a tape created at ``site`` (a persistent tape, by the finding) still holds
    when the work after its last use starts (the statement at ``alive``), on the scheduled runs
    of the statement that creates it, and which lines of its frame run until it is released."""

    def __init__(self, recorder: Recorder, site: Site, alive: Site) -> None:
        self.recorder = recorder
        self.site = site
        self.alive = alive

    def entered(self, frame: FrameWatch, watch: Watch, run: int) -> None:
        if watch.site == self.site:
            if protocol.scheduled(run):
                measured = TapeRun(self, run, frame)
                frame.after(watch.head, measured.created)
                frame.runs.append(measured)
            return
        for measured in frame.runs:
            if measured.probe is self:
                measured.reached_work(watch.site[1])


class TapeRun:
    """One measured run of a :class:`TapeKept` probe, written once the tape is released (or
    its function returns with it alive)."""

    def __init__(self, probe: TapeKept, run: int, frame: FrameWatch) -> None:
        self.probe = probe
        self.run = run
        self.frame = frame
        self.base: list[float] | None = None
        self.held: list[float] | None = None
        self.lines: list[int] = []
        self.done = False
        self._collecting = False
        self._finalizer: Any = None  # a weakref.finalize

    def created(self) -> None:
        """The statement that creates the tape has run: what tapes hold now is the baseline."""
        self.base = held_by_tapes(self.probe.recorder.tapes)
        newest = self.probe.recorder.newest_tape
        tape = newest() if newest is not None else None
        if tape is not None:
            self._finalizer = weakref.finalize(tape, self.released)
            self._finalizer.atexit = False

    def reached_work(self, line: int) -> None:
        if not self._collecting and not self.done:
            self.held = held_by_tapes(self.probe.recorder.tapes)
            self._collecting = True
            self.ran(line)

    def ran(self, line: int) -> None:
        if self._collecting and line not in self.lines and len(self.lines) < _MAX_LINES:
            self.lines.append(line)

    def released(self) -> None:
        """The tape was freed while its frame runs (a run still open closes when the frame
        returns), by the frame's :meth:`FrameWatch.releasing_line`."""
        self.close(released=[self.probe.site[0], self.frame.releasing_line()])

    def close(self, released: list[Any] | None = None, returned: str | None = None) -> None:
        if self.done:
            return
        self.done = True
        if self._finalizer is not None:
            self._finalizer.detach()
        file, line = self.probe.site
        self.probe.recorder.writer.write(
            protocol.RECORD_TAPE_KEPT,
            file=file,
            line=line,
            run=self.run,
            base=self.base,
            held=self.held,
            lines=self.lines,
            released=released,
            returned=returned,
        )


class TapeRecords:
    """TFL202: what gradient tapes hold when the statement at ``site`` starts and when it ends,
    on its scheduled runs: a tape still recording records what the statement computes."""

    def __init__(self, recorder: Recorder, site: Site) -> None:
        self.recorder = recorder
        self.site = site

    def entered(self, frame: FrameWatch, watch: Watch, run: int) -> None:
        if not protocol.scheduled(run):
            return
        before = held_by_tapes(self.recorder.tapes)

        def ended() -> None:
            file, line = self.site
            self.recorder.writer.write(
                protocol.RECORD_TAPE_RECORDS,
                file=file,
                line=line,
                run=run,
                before=before,
                after=held_by_tapes(self.recorder.tapes),
            )

        frame.after(watch.head, ended)


class FrameWatch:
    """The line events of one frame of a code object that holds watched lines."""

    def __init__(self, tracer: LineTracer, watches: dict[int, list[Watch]], name: str) -> None:
        self._tracer = tracer
        self._watches = watches
        self._name = name
        self._line = 0  # the line and instruction offset of the frame's previous line event
        self._offset = -1
        self._previous = 0  # the line event before that
        self._handling = False
        self._loop: Watch | None = None  # a loop whose header has just run
        self._after: list[tuple[range, Callable[[], None]]] = []
        self.runs: list[TapeRun] = []

    def releasing_line(self) -> int:
        """The line that freed an object now: the line running, or the one before when the
        object is freed while this watch handles a line event. A frame's locals snapshot
        (``f_locals``, which a sample reads) keeps a local the code has deleted or rebound
        until the snapshot is refreshed, at the next sample."""
        return self._previous if self._handling else self._line

    def after(self, head: range, then: Callable[[], None]) -> None:
        """Call ``then`` at the frame's first line outside ``head`` (or when it returns)."""
        self._after.append((head, then))

    def trace(self, frame: types.FrameType, event: str, arg: Any) -> TraceFunc | None:
        if self._tracer.stopped:
            return None
        try:
            self._handling = True
            if event == "line":
                self._line_event(frame.f_lineno, frame.f_lasti)
            elif event == "return":
                self._returned()
        except Exception as error:  # a bug here must not break the target: stop sampling
            self._tracer.give_up(error)
            return None
        finally:
            self._handling = False
        return self.trace

    def _line_event(self, line: int, offset: int) -> None:
        previous, back = self._line, offset <= self._offset
        self._previous, self._line, self._offset = previous, line, offset
        recorder = self._tracer.recorder
        loop = self._loop
        if loop is not None and line not in loop.head:
            self._loop = None
            if line not in loop.body:
                recorder.on_loop_end(loop)
        if self._after:
            due = [then for head, then in self._after if line not in head]
            self._after = [(head, then) for head, then in self._after if line in head]
            for then in due:
                then()
        if self.runs:
            self.runs = [measured for measured in self.runs if not measured.done]
            for measured in self.runs:
                measured.ran(line)
        for watch in self._watches.get(line, ()):
            if previous in (watch.head if watch.loop else watch.whole) and not back:
                continue
            run = recorder.on_run(watch)
            if watch.loop:
                self._loop = watch
            for probe in watch.probes:
                probe.entered(self, watch, run)

    def _returned(self) -> None:
        if self._loop is not None:
            self._tracer.recorder.on_loop_end(self._loop)
            self._loop = None
        due, self._after = self._after, []
        for _, then in due:
            then()
        for measured in self.runs:
            measured.close(returned=self._name)
        self.runs = []


class LineTracer:
    """A ``sys.settrace`` hook that only traces code objects holding a watched line, with a
    :class:`FrameWatch` per frame."""

    def __init__(self, recorder: Recorder, watches: list[Watch]) -> None:
        self.recorder = recorder
        self.stopped = False
        self._watches: dict[str, list[Watch]] = {}
        for watch in watches:
            self._watches.setdefault(watch.site[0], []).append(watch)
        self._by_code: dict[types.CodeType, dict[int, list[Watch]] | None] = {}
        self._files: dict[str, str | None] = {}

    def _lines_of(self, code: types.CodeType) -> dict[int, list[Watch]] | None:
        if code.co_name.startswith("<") and code.co_name != "<module>":
            return None  # a comprehension, lambda or generator expression holds no statement
        filename = code.co_filename
        if filename not in self._files:
            path = protocol.absolute(filename)
            self._files[filename] = path if path in self._watches else None
        known = self._files[filename]
        if known is None:
            return None
        lines = {line for _, _, line in code.co_lines() if line is not None}
        watched: dict[int, list[Watch]] = {}
        for watch in self._watches[known]:
            if watch.head.start in lines:
                for line in watch.head:
                    watched.setdefault(line, []).append(watch)
        return watched or None

    def global_trace(self, frame: types.FrameType, event: str, arg: Any) -> TraceFunc | None:
        code = frame.f_code
        try:
            if code not in self._by_code:
                self._by_code[code] = self._lines_of(code)
        except Exception as error:  # a bug here must not break the target: stop sampling
            self.give_up(error)
            return None
        watches = self._by_code[code]
        if watches is None:
            return None
        return FrameWatch(self, watches, getattr(code, "co_qualname", code.co_name)).trace

    def give_up(self, error: Exception) -> None:
        self.stopped = True
        sys.settrace(None)
        threading.settrace(None)
        degraded(self.recorder, f"line sampling ({error!r})", "loop lines are not sampled")

    def install(self) -> None:
        sys.settrace(self.global_trace)
        threading.settrace(self.global_trace)


def watches_of(recorder: Recorder, config: dict[str, Any]) -> list[Watch]:
    """The config's watched sites, with the probes attached to their statements."""
    watches = {watch.site: watch for watch in map(Watch.read, config["sites"])}
    for spec in config.get("probes", ()):
        site = (spec["file"], int(spec["line"]))
        if spec["kind"] == "tape-kept":
            alive = (spec["file"], int(spec["alive"]))
            kept = TapeKept(recorder, site, alive)
            watches[site].probes.append(kept)
            watches[alive].probes.append(kept)
        else:
            watches[site].probes.append(TapeRecords(recorder, site))
    return list(watches.values())


# -- running the target --------------------------------------------------------------------------


def measure_rss_noise(recorder: Recorder) -> None:
    """The spread of RSS over ``_NOISE_ROUNDS`` rounds of allocating and freeing a 1 MB tensor,
    each followed by ``gc.collect()``: what RSS does when nothing grows, in this process."""
    import tensorflow as tf

    readings = []
    for _ in range(_NOISE_ROUNDS):
        _ = tf.ones([2**18]) * 2.0  # 1 MB allocated and dropped
        del _
        gc.collect()
        readings.append(rss_mb())
    if None not in readings:
        measured = [value for value in readings if value is not None]
        spread = round(max(measured) - min(measured), 3)
        recorder.writer.write(protocol.RECORD_NOISE, rss_mb=spread)


def apply_memory_limit(recorder: Recorder, limit_mb: int) -> None:
    """Cap the address space at what TensorFlow holds after warm-up plus ``limit_mb``.

    TensorFlow reserves about 1.4 GB of address space once its thread pools start (far more than
    it uses), so an absolute ``RLIMIT_AS`` would mostly measure TensorFlow; the limit applies to
    what the user's code adds on top of that baseline.
    """
    import tensorflow as tf

    _ = tf.constant([1.0]) * 2.0  # start the eager thread pools so that they count in the baseline
    baseline = address_space_mb()
    if baseline is None:
        degraded(recorder, "/proc/self/status", "the memory limit is not applied")
        return
    limit = int((baseline + limit_mb) * 2**20)
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    recorder.writer.write(
        protocol.RECORD_MEMORY_LIMIT, baseline_mb=round(baseline, 1), limit_mb=limit_mb
    )


def raised_at(recorder: Recorder, error: BaseException) -> list[Any] | None:
    """The innermost user frame of ``error``'s traceback, as ``[file, line]``."""
    frames = [
        f for f in traceback.extract_tb(error.__traceback__) if f.filename in recorder.user_files
    ]
    return [protocol.absolute(frames[-1].filename), frames[-1].lineno] if frames else None


def user_traceback(recorder: Recorder, error: BaseException) -> str:
    """The traceback of ``error`` without the frames of this bootstrap and of ``runpy``."""
    frames = traceback.extract_tb(error.__traceback__)
    kept = [frame for frame in frames if frame.filename in recorder.user_files] or frames
    lines = traceback.format_list(kept)
    return "".join(["Traceback (most recent call last):\n", *lines]) + "".join(
        traceback.format_exception_only(type(error), error)
    )


def finish(recorder: Recorder, status: str, exit_code: int | None, **fields: Any) -> None:
    if recorder.profiler is not None:
        recorder.profiler.stop()
    recorder.flush()
    recorder.writer.write(protocol.RECORD_END, status=status, exit_code=exit_code, **fields)


def install_exit_guards(recorder: Recorder) -> None:
    """Flush on SIGTERM (the parent's timeout) and on ``os._exit`` in the measured process."""
    main_pid = os.getpid()
    original_exit: Callable[[int], NoReturn] = os._exit

    def on_sigterm(signum: int, frame: types.FrameType | None) -> None:
        sys.settrace(None)
        finish(recorder, protocol.STATUS_TERMINATED, None, where=recorder.user_site(frame))
        original_exit(128 + signum)

    def guarded_exit(status: int) -> NoReturn:
        if os.getpid() == main_pid:
            sys.settrace(None)
            where = recorder.user_site(sys._getframe(1))
            finish(recorder, protocol.STATUS_OS_EXIT, status, where=where)
        original_exit(status)

    signal.signal(signal.SIGTERM, on_sigterm)
    os._exit = guarded_exit


def start_flusher(recorder: Recorder) -> None:
    """Flush counts every second, so a child killed while stuck in C code still leaves them."""

    def loop() -> None:
        while True:
            time.sleep(_FLUSH_PERIOD_S)
            recorder.flush()

    threading.Thread(target=loop, name="tflint-leaks-flush", daemon=True).start()


def run_notebook(path: str, args: list[str], cells: list[list[Any]]) -> None:
    """Run a notebook's code cells in order in one ``__main__`` namespace, as Jupyter's "Run
    All" would. Each cell is compiled at its line in the joined code cells (so positions map
    back to ``cell:line``) under the notebook's absolute path, which tracebacks can then show."""
    filename = protocol.absolute(path)
    sys.argv = [path, *args]
    sys.path[0] = str(Path(filename).parent)
    lines: list[str] = []
    for _, first, source in cells:
        lines += [""] * (first - 1 - len(lines)) + source.splitlines()
    linecache.cache[filename] = (len(lines), None, [line + "\n" for line in lines], filename)
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    for _, first, source in cells:
        exec(compile("\n" * (first - 1) + source, filename, "exec"), namespace)


def run_target(config: dict[str, Any]) -> None:
    """Run the script, module or pytest selection as Python itself would."""
    kind = config["kind"]
    args = list(config["args"])
    if kind == "script":
        path = config["path"]
        sys.argv = [path, *args]
        sys.path[0] = str(Path(protocol.absolute(path)).parent)
        runpy.run_path(path, run_name="__main__")
    elif kind == "notebook":
        run_notebook(config["path"], args, config["cells"])
    elif kind == "module":
        sys.argv = [config["module"], *args]
        sys.path[0] = str(Path.cwd())
        runpy.run_module(config["module"], run_name="__main__", alter_sys=True)
    else:
        import pytest

        sys.argv = ["pytest", *args]
        sys.path[0] = str(Path.cwd())
        raise SystemExit(int(pytest.main(args)))


def run(config: dict[str, Any]) -> int:
    """Instrument, run the target and record how it ended; returns the exit code."""
    writer = Writer(config["results"])
    recorder = Recorder(writer, UserFiles(config["roots"]))
    try:
        import tensorflow as tf
    except Exception as error:  # reported to the parent, which explains it
        finish(recorder, protocol.STATUS_FATAL, 3, exception=repr(error))
        return 3
    writer.write(protocol.RECORD_START, pid=os.getpid(), tensorflow=tf.__version__)
    recorder.measure_constants = bool(config.get("constants"))
    install_hooks(recorder)
    install_exit_guards(recorder)
    if config.get("memory_limit_mb"):
        apply_memory_limit(recorder, int(config["memory_limit_mb"]))
    watches = watches_of(recorder, config)
    if any(watch.level >= protocol.SAMPLE_TAPES for watch in watches):
        measure_rss_noise(recorder)
    if config.get("profile_dir"):
        recorder.profiler = Profiler(recorder, config["profile_dir"])
    start_flusher(recorder)
    tracer = LineTracer(recorder, watches)
    try:
        if watches:
            tracer.install()
        run_target(config)
    except SystemExit as stop:
        sys.settrace(None)
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        finish(recorder, protocol.STATUS_EXITED, code, where=raised_at(recorder, stop))
        return code
    except BaseException as error:  # the user's crash is a result, reported whole
        sys.settrace(None)
        finish(
            recorder,
            protocol.STATUS_RAISED,
            1,
            exception=f"{type(error).__name__}: {error}"[:500],
            import_error=isinstance(error, ImportError),
            where=raised_at(recorder, error),
            traceback=user_traceback(recorder, error),
        )
        return 1
    sys.settrace(None)
    finish(recorder, protocol.STATUS_COMPLETED, 0)
    return 0


def die_with_parent() -> None:
    """On Linux, ask for SIGTERM when the ``confirm`` process that started this child dies,
    even by SIGKILL (the parent's own clean-up then never runs): no orphaned TensorFlow
    process keeps a core busy. The SIGTERM handler still writes what was measured."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent died before the request took effect
        os.kill(os.getpid(), signal.SIGTERM)


_PR_SET_PDEATHSIG = 1


def main(argv: list[str]) -> int:
    die_with_parent()
    config = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    for name, value in protocol.QUIET_ENV.items():
        os.environ.setdefault(name, value)
    return run(config)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
