"""Plain JSON data to and from this tool's frozen dataclasses, checked against their types.

The cache stores the ``ast`` index of each file and its findings as JSON, never as a pickle: a
cache file can only ever produce values of the declared types, and anything else (a wrong type,
a missing field, an unknown enum value) raises :class:`CodecError`, so a damaged or crafted
cache is rejected as a whole instead of being trusted.

Dataclasses and named tuples become lists in field order (compact, and fast to rebuild);
tuples, lists and frozensets become lists; dicts must have string keys; enums become their values.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable
from functools import cache
from typing import Any, TypeVar, Union, cast, get_args, get_origin, get_type_hints

T = TypeVar("T")
Json = Any


class CodecError(ValueError):
    """The data does not have the shape of the type it should be read as."""


def to_json(value: object) -> Json:
    """``value`` as plain JSON data."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [to_json(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init]
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
        return [to_json(item) for item in value]
    if isinstance(value, tuple | list | frozenset | set):
        items = sorted(value) if isinstance(value, frozenset | set) else value
        return [to_json(item) for item in items]
    if isinstance(value, dict):
        return {_key(key): to_json(item) for key, item in value.items()}
    raise TypeError(f"cannot encode {type(value).__name__}")


def _key(key: object) -> str:
    if not isinstance(key, str):
        raise TypeError(f"dict keys must be strings, not {type(key).__name__}")
    return key


def from_json(kind: type[T], data: Json) -> T:
    """Read ``data`` as a value of ``kind``; :class:`CodecError` when it does not fit."""
    value: T = _reader(cast(Any, kind))(data)
    return value


Reader = Callable[[Json], Any]


@cache
def _reader(kind: Any) -> Reader:
    """A function that reads data as ``kind`` (built once per type)."""
    origin = get_origin(kind)
    args = get_args(kind)
    if kind is type(None) or kind is None:
        return _exact(type(None))
    if kind is bool:
        return _exact(bool)
    if kind is int:
        return _exact(int)
    if kind is str:
        return _exact(str)
    if kind is float:
        return _number
    if kind is typing.Any:
        raise TypeError("Any cannot be read safely")
    if origin in (Union, types.UnionType):
        return _union(tuple(_reader(arg) for arg in args))
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return _sequence(_reader(args[0]), tuple)
        return _fixed_tuple(tuple(_reader(arg) for arg in args))
    if origin is list:
        return _sequence(_reader(args[0]), list)
    if origin is frozenset:
        return _sequence(_reader(args[0]), frozenset)
    if origin is dict:
        if args[0] is not str:
            raise TypeError("only dicts with string keys can be read")
        return _mapping(_reader(args[1]))
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return _enum(kind)
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        fields = [f for f in dataclasses.fields(kind) if f.init]
        return _record(kind, tuple(f.name for f in fields))
    if isinstance(kind, type) and issubclass(kind, tuple) and hasattr(kind, "_fields"):
        return _record(kind, kind._fields)
    raise TypeError(f"cannot read {kind!r}")


def _exact(kind: type) -> Reader:
    def read(data: Json) -> Any:
        if type(data) is not kind:
            raise CodecError(f"expected {kind.__name__}, got {type(data).__name__}")
        return data

    return read


def _number(data: Json) -> float:
    if type(data) not in (int, float):
        raise CodecError(f"expected a number, got {type(data).__name__}")
    return float(data)


def _union(readers: tuple[Reader, ...]) -> Reader:
    def read(data: Json) -> Any:
        for reader in readers:
            try:
                return reader(data)
            except CodecError:
                continue
        raise CodecError(f"{data!r:.40} fits none of the alternatives")

    return read


def _list(data: Json) -> list[Json]:
    if type(data) is not list:
        raise CodecError(f"expected a list, got {type(data).__name__}")
    return data


def _sequence(item: Reader, make: Callable[[Any], Any]) -> Reader:
    return lambda data: make(item(element) for element in _list(data))


def _fixed_tuple(items: tuple[Reader, ...]) -> Reader:
    def read(data: Json) -> tuple[Any, ...]:
        elements = _list(data)
        if len(elements) != len(items):
            raise CodecError(f"expected {len(items)} items, got {len(elements)}")
        return tuple(reader(element) for reader, element in zip(items, elements, strict=True))

    return read


def _mapping(item: Reader) -> Reader:
    def read(data: Json) -> dict[str, Any]:
        if type(data) is not dict:
            raise CodecError(f"expected an object, got {type(data).__name__}")
        return {_exact(str)(key): item(value) for key, value in data.items()}

    return read


def _enum(kind: type[enum.Enum]) -> Reader:
    def read(data: Json) -> enum.Enum:
        try:
            return kind(data)
        except ValueError:
            raise CodecError(f"{data!r:.40} is not a {kind.__name__}") from None

    return read


def _record(kind: type, names: tuple[str, ...]) -> Reader:
    """A reader for a dataclass or a named tuple, from the list of its fields' values."""
    # Field readers are built on first use, so that a recursive type (an expression whose
    # parts are expressions) can refer to its own reader.
    resolved: list[tuple[Reader, ...]] = []

    def read(data: Json) -> Any:
        if not resolved:
            hints = get_type_hints(kind)
            resolved.append(tuple(_reader(hints[name]) for name in names))
        readers = resolved[0]
        elements = _list(data)
        if len(elements) != len(readers):
            raise CodecError(f"{kind.__name__}: expected {len(readers)} fields")
        values = {
            name: reader(element)
            for name, reader, element in zip(names, readers, elements, strict=True)
        }
        return kind(**values)

    return read
