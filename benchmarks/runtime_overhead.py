"""Slowdown of a tight loop of ``tf.function`` calls under ``tflint-leaks confirm``.

Runs the same loop three times, each in a fresh child process, in the same invocation:

- ``plain``: ``python loop.py`` with no instrumentation;
- ``traced``: under ``confirm`` with a retracing finding in the loop (trace and call hooks, plus
  ``sys.settrace`` counting the loop line);
- ``sampled``: under ``confirm`` with a growth finding at the loop (the same, plus counter samples
  with ``gc.collect()`` at the first 12 iterations and at every power of two after).

Only the loop is timed (inside the child), not ``import tensorflow``. Not run by CI::

    .venv/bin/python benchmarks/runtime_overhead.py [--calls 20000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tflint_leaks.diagnostics import Diagnostic, Location, Related, Severity
from tflint_leaks.runtime.confirm import Target, run_confirm
from tflint_leaks.runtime.launcher import child_environment

LOOP = """\
import sys, time
import tensorflow as tf

@tf.function
def step(x):
    return x * 2.0 + 1.0

x = tf.ones([8])
step(x)
calls = int(sys.argv[1])
start = time.perf_counter()
for _ in range(calls):
    step(x)
print(f"loop_seconds={time.perf_counter() - start:.4f}")
"""
_DEF_LINE, _LOOP_LINE, _CALL_LINE = 4, 12, 13


def finding(script: str, code: str) -> Diagnostic:
    def at(line: int) -> Location:
        return Location(line, 1)

    related = (
        Related("tf-function", "", script, at(_DEF_LINE), at(_DEF_LINE)),
        Related("loop", "", script, at(_LOOP_LINE), at(_LOOP_LINE)),
    )
    return Diagnostic(
        code,
        "bench",
        "bench",
        Severity.WARNING,
        script,
        at(_CALL_LINE),
        at(_CALL_LINE),
        None,
        related,
    )


def seconds(output: str) -> float:
    for line in output.splitlines():
        if line.startswith("loop_seconds="):
            return float(line.split("=", 1)[1])
    raise RuntimeError(f"no timing in the child's output:\n{output}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5_000)
    calls = parser.parse_args().calls
    with tempfile.TemporaryDirectory() as workdir:
        script = os.path.join(workdir, "loop.py")  # noqa: PTH118 - a plain path string is needed
        Path(script).write_text(LOOP, encoding="utf-8")
        plain = subprocess.run(
            [sys.executable, script, str(calls)],
            capture_output=True,
            text=True,
            check=True,
            env=child_environment(),
        )
        results = {"plain": seconds(plain.stdout)}
        for name, code in (("traced", "TFL101"), ("sampled", "TFL401")):
            target = Target(kind="script", path=script, args=(str(calls),))
            result = run_confirm(
                target, [finding(script, code)], timeout=600.0, memory_limit_mb=None
            )
            results[name] = seconds(result.run.stdout_tail)
    base = results["plain"]
    print(f"{calls} calls of a tf.function on an 8-float tensor")
    for name, value in results.items():
        print(f"{name:8s} {value:8.3f} s  {value / calls * 1e6:7.1f} us/call  x{value / base:.2f}")


if __name__ == "__main__":
    main()
