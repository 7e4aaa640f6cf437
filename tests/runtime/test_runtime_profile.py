"""``confirm --profile-dir``: a TensorFlow Profiler trace of the measured iterations, read back
with the XPlane protocol buffer that ships inside TensorFlow (what TensorBoard's profile plugin
reads)."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest

from tests.runtime.conftest import TARGETS, line_of, requires_tensorflow, target_path
from tflint_leaks.cli import main

pytestmark = [pytest.mark.runtime, requires_tensorflow]


def test_profile_directory_holds_a_trace_tensorflow_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    profile = tmp_path / "profile"
    script = TARGETS / "python_scalar.py"
    code = main(["confirm", str(script), "--timeout", "300", "--profile-dir", str(profile)])
    captured = capsys.readouterr()
    assert code == 1, captured.err
    loop = f"{target_path('python_scalar.py')}:{line_of('python_scalar.py', 'int-loop')}"
    assert (
        f"note: TensorFlow Profiler trace of 11 runs of the loop at {loop} in {profile} "
        f"(tensorboard --logdir {profile})\n"
    ) in captured.err
    # TensorBoard's layout: plugins/profile/<run>/<host>.xplane.pb
    (trace,) = profile.glob("plugins/profile/*/*.xplane.pb")
    space = xplane_pb2.XSpace()
    space.ParseFromString(trace.read_bytes())
    (host,) = [plane for plane in space.planes if plane.name == "/host:CPU"]
    events = {key: meta.name for key, meta in host.event_metadata.items()}
    stats = {key: meta.name for key, meta in host.stat_metadata.items()}
    steps = []
    counts: collections.Counter[str] = collections.Counter()
    for line in host.lines:
        for event in line.events:
            counts[events[event.metadata_id]] += 1
            if events[event.metadata_id] == "iteration":
                values = {stats[s.metadata_id]: s.int64_value for s in event.stats}
                steps.append(values["step_num"])
    # each run of the loop header is a step: ten iterations, then the run that ends the loop
    assert sorted(steps) == list(range(1, 12))
    # the traced function ran in them, and CPU allocations are there for the memory profile
    assert counts["step"] == 10
    assert counts["MemoryAllocation"] > 0


def test_the_profile_extra_opens_the_trace_in_tensorboard(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The `profile` extra installs TensorBoard and its profile plugin (XProf): TensorBoard
    finds the plugin, and the plugin's own converter reads the trace `confirm` wrote into the
    trace viewer's events. Failed before: no extra installed either, so the note's
    `tensorboard --logdir` could not run."""
    from importlib.metadata import entry_points

    pytest.importorskip("tensorboard", reason="needs the profile extra")
    raw_to_tool_data = pytest.importorskip(
        "xprof.convert.raw_to_tool_data", reason="needs the profile extra"
    )
    plugins = {entry.name for entry in entry_points(group="tensorboard_plugins")}
    assert "profile" in plugins
    profile = tmp_path / "profile"
    script = TARGETS / "python_scalar.py"
    assert main(["confirm", str(script), "--timeout", "300", "--profile-dir", str(profile)]) == 1
    capsys.readouterr()
    (trace,) = profile.glob("plugins/profile/*/*.xplane.pb")
    tools = raw_to_tool_data.xspace_to_tool_names([str(trace)])
    assert {"trace_viewer@", "overview_page", "memory_profile"} <= set(tools)
    data, content_type = raw_to_tool_data.xspace_to_tool_data([str(trace)], "trace_viewer@", {})
    assert content_type == "application/json"
    names = collections.Counter(event.get("name") for event in json.loads(data)["traceEvents"])
    # the eleven runs of the loop header as the trace viewer's steps, the traced function's
    # ten calls inside them
    assert sorted(name for name in names if name.startswith("iteration ")) == sorted(
        f"iteration {n}" for n in range(1, 12)
    )
    assert names["step"] == 10
