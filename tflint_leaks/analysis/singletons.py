"""The base of the enums the analyses test in hot loops."""

from __future__ import annotations

import enum


class Singletons(enum.Enum):
    """An enum whose members hash by identity, in C. ``enum.Enum`` hashes a member with a
    Python method (``hash(self._name_)``), and the facts put members in sets and tuple keys
    hundreds of thousands of times a run (``kind in {Kind.MODEL, Kind.INSTANCE}``, a lattice
    atom's key): 0.6 million calls on tf-keras's sources. Members are singletons compared by
    identity, so equality is unchanged; an order over them was never their hash's (a string's,
    which differs from one process to the next)."""

    __hash__ = object.__hash__
