"""Deeply nested code: run the libcst parse and the rule walk where recursion has room.

libcst's parser and the walk recurse once per nesting level. Python's default limits (a
recursion limit of 1000 on an 8 MB stack) are reached by valid generated code such as a sum
of a thousand terms, and libcst's native parser overflows the C stack -- killing the process --
on a few thousand levels. So the engine refuses files nested deeper than
:data:`MAX_NESTING` before parsing them (measured in the cheap ``ast`` pass), and runs the
parse and walk of the rest on a thread with a large stack and recursion limit.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TypeVar

Result = TypeVar("Result")

#: Deeper than this, a file is reported as too deeply nested instead of parsed: libcst's parse
#: time grows with the square of the nesting (3,000 levels took 2.3 s, 20,000 took 9 minutes).
MAX_NESTING = 1_000
_STACK_BYTES = 512 * 1024 * 1024
_RECURSION_LIMIT = 50_000


def call_with_deep_stack(function: Callable[[], Result]) -> Result:
    """``function()``, run on a thread with a large stack and a high recursion limit."""
    outcome: list[Result] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            outcome.append(function())
        except BaseException as error:  # re-raised in the caller's thread
            failure.append(error)

    previous_stack = threading.stack_size(_STACK_BYTES)
    previous_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous_limit, _RECURSION_LIMIT))
    try:
        thread = threading.Thread(target=target, name="tflint-leaks-check", daemon=True)
        thread.start()
        thread.join()
    finally:
        threading.stack_size(previous_stack)
        sys.setrecursionlimit(previous_limit)
    if failure:
        raise failure[0]
    return outcome[0]
