"""Runtime confirmation: run flagged code with TensorFlow and measure what the findings claim.

How the CLI calls it (the parent never imports TensorFlow)::

    from tflint_leaks.runtime import INSTALL_HINT, tensorflow_available
    from tflint_leaks.runtime.confirm import Target, run_confirm

    if not tensorflow_available():
        click.echo(INSTALL_HINT, err=True)
        raise SystemExit(2)
    target = Target(kind="script", path="train.py", args=("--epochs", "3"))
    # or Target(kind="notebook", path="train.ipynb")
    # or Target(kind="module", module="pkg.train", args=(...))
    # or Target(kind="pytest", args=("tests/test_train.py", "-k", "fit"))
    paths = user_paths or target.default_paths()
    diagnostics = lint_paths(paths, settings).diagnostics
    result = run_confirm(
        target,
        diagnostics,
        timeout=600.0,
        memory_limit_mb=None,
        max_python_values=settings.options.max_python_values,
        user_paths=paths,  # linted code counts as the user's
        progress=None,  # or a terminal stream: one status line while the run goes
        profile_dir=None,  # or a directory for a TensorFlow Profiler trace
    )
    # result.diagnostics: every finding with .confirmation set, then runtime-only TFL900
    # findings; report them like any others. result.charts: what the HTML report draws for
    # each (runtime.report.render(result, target.name)). result.run: status ("completed",
    # "raised", "exited", "os-exit", "timeout", "memory-limit", "crashed", "fatal"),
    # description, failure (one line when the target failed), traceback (of the user's
    # exception), notes (degraded private APIs, captured warnings, skipped notebook syntax,
    # the profile written), stdout_tail / stderr_tail of the target.

The target runs in a child process (``tflint_leaks.runtime.child``) started in the current
directory with the same interpreter; its stdout and stderr go to temporary files (their tails are
in ``result.run``). ``memory_limit_mb`` caps the address space the target may add on top of what
TensorFlow holds after warm-up (``RLIMIT_AS``). What is measured and how verdicts are decided:
``docs/runtime.md``.
"""

from __future__ import annotations

import importlib.util

INSTALL_HINT = (
    "tflint-leaks confirm needs TensorFlow in this environment: install the runtime extra "
    "(`pip install '.[runtime]'` in a clone of tflint-leaks)"
)

__all__ = ["INSTALL_HINT", "tensorflow_available"]


def tensorflow_available() -> bool:
    """Whether TensorFlow can be imported here, found without importing it."""
    return importlib.util.find_spec("tensorflow") is not None
