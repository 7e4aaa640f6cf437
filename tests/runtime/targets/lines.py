"""Lines watched by hand-made findings: a `with` line, which Python runs again on exit from its
block; a loop header, with a decorated definition (whose decorator line runs twice) first in
its body."""

import contextlib


def block():
    with contextlib.nullcontext():  # marker: with-line
        value = 1
    return value


for _ in range(20):  # marker: loop

    @contextlib.contextmanager  # marker: decorated
    def managed():
        yield

    block()
