"""Which dtype a function's body shows each parameter is used with, as plain data.

A Python number combined with a tensor takes the tensor's dtype (``x * step`` with a float32
``x`` multiplies in float32), but a tensor made from it with ``tf.constant(step)`` has the
dtype of the Python value (int32 for an int), and ``x * tf.constant(step)`` then raises
``TypeError``. So a fix that turns a Python number into a tensor must pick the dtype the
function uses it with: :func:`parameter_dtypes` reads, for each parameter, what the body
combines it with (``+``, ``*``, a comparison, ``tf.maximum``...): float literals (float32),
tensors whose dtype the code shows (:func:`shown_dtype`: ``tf.cast(v, tf.float16)``,
``tf.ones(shape)``), other parameters (whose dtype the call site shows), or anything else
(unknown). Names assigned from arithmetic on a parameter count as the parameter.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from tflint_leaks.analysis.names import resolve_dotted

Resolve = Callable[[ast.expr], str | None]

#: TensorFlow's dtypes, by the name ``tf.<name>`` gives them.
DTYPES = frozenset(
    {
        "bfloat16",
        "float16",
        "float32",
        "float64",
        "half",
        "double",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "complex64",
        "complex128",
        "bool",
    }
)
#: What ``tf.constant`` (and the tensor factories) make of a Python float.
DEFAULT_FLOAT = "float32"
#: What ``tf.constant`` makes of a Python int.
DEFAULT_INT = "int32"
#: Factories whose result is float32 unless their ``dtype`` says otherwise.
_FLOAT_FACTORIES = frozenset(
    f"tensorflow.{name}"
    for name in (
        "ones",
        "zeros",
        "eye",
        "random.normal",
        "random.uniform",
        "random.truncated_normal",
    )
)
#: Calls that give their first argument the dtype they are passed (second, or ``dtype=``).
_CONVERTERS = frozenset(
    {"tensorflow.cast", "tensorflow.constant", "tensorflow.convert_to_tensor", "tensorflow.fill"}
)
#: TensorFlow calls that combine their first two arguments as the operators do.
_BINARY_OPS = frozenset(
    f"tensorflow.{prefix}{name}"
    for prefix in ("", "math.")
    for name in (
        "add",
        "subtract",
        "multiply",
        "divide",
        "truediv",
        "floordiv",
        "pow",
        "maximum",
        "minimum",
        "equal",
        "not_equal",
        "less",
        "less_equal",
        "greater",
        "greater_equal",
    )
)


_BINARY_NAMES = frozenset(name.rpartition(".")[2] for name in _BINARY_OPS)
_COMBINING = (ast.BinOp, ast.Compare, ast.AugAssign, ast.Call)


@dataclass(frozen=True)
class DtypeUse:
    """What a body combines one parameter with."""

    #: Dtypes the body shows (``float32`` for a float literal).
    dtypes: tuple[str, ...] = ()
    #: Other parameters (their dtype is the call site's to show).
    params: tuple[str, ...] = ()
    #: Combined with a value whose dtype the body does not show.
    unknown: bool = False


def dotted_ast(node: ast.expr) -> str | None:
    """``a.b.c`` of a dotted ``ast`` expression; None for anything else."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def resolve_ast(node: ast.expr, imports: dict[str, str]) -> str | None:
    """The canonical name of a dotted ``ast`` expression through ``imports``."""
    dotted = dotted_ast(node)
    return resolve_dotted(dotted, imports) if dotted is not None else None


def resolver(imports: dict[str, str]) -> Resolve:
    """:func:`resolve_ast` through ``imports``, as one argument's function."""
    return lambda node: resolve_ast(node, imports)


def _dtype_name(node: ast.expr, resolve: Resolve) -> str | None:
    """``tf.float16`` or ``"float16"`` -> ``float16``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value if node.value in DTYPES else None
    name = resolve(node)
    if name is None or not name.startswith("tensorflow."):
        return None
    short = name.removeprefix("tensorflow.").removeprefix("dtypes.")
    return short if short in DTYPES else None


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def shown_dtype(node: ast.expr, resolve: Resolve) -> str | None:
    """The dtype of a tensor the code spells out: ``tf.cast(x, tf.float16)``,
    ``tf.constant(1.0)``, ``tf.zeros([3], dtype=tf.int64)``, ``tf.ones([2])`` (float32)."""
    if not isinstance(node, ast.Call):
        return None
    called = resolve(node.func)
    if called in _CONVERTERS:
        given = _keyword(node, "dtype")
        if given is None and len(node.args) > 1:
            given = node.args[1]
        if given is not None:
            return _dtype_name(given, resolve)
        if called == "tensorflow.constant" and node.args:
            return _literal_dtype(node.args[0])
        return None
    if called in _FLOAT_FACTORIES:
        given = _keyword(node, "dtype")
        return DEFAULT_FLOAT if given is None else _dtype_name(given, resolve)
    return None


def _literal_dtype(node: ast.expr) -> str | None:
    """What ``tf.constant`` makes of a number literal, or a (nested) list of them: float32 if
    any is a float, else int32."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        return _literal_dtype(node.operand)
    if isinstance(node, ast.List | ast.Tuple) and node.elts:
        found = {_literal_dtype(element) for element in node.elts}
        if None in found:
            return None
        return DEFAULT_FLOAT if DEFAULT_FLOAT in found else DEFAULT_INT
    if isinstance(node, ast.Constant) and not isinstance(node.value, bool):
        if isinstance(node.value, float):
            return DEFAULT_FLOAT
        if isinstance(node.value, int):
            return DEFAULT_INT
    return None


def _carries(node: ast.expr, names: set[str]) -> bool:
    """Whether ``node`` is arithmetic on one of ``names`` (so it has that name's dtype)."""
    if isinstance(node, ast.Name):
        return node.id in names
    if isinstance(node, ast.BinOp):
        return _carries(node.left, names) or _carries(node.right, names)
    if isinstance(node, ast.UnaryOp):
        return _carries(node.operand, names)
    return False


def _pairs(node: ast.AST, resolve: Resolve) -> Iterable[tuple[ast.expr, ast.expr]]:
    """The operands a node combines: ``a + b``, ``a < b < c``, ``a += b``, ``tf.add(a, b)``."""
    if isinstance(node, ast.BinOp):
        yield node.left, node.right
    elif isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        yield from itertools.pairwise(operands)
    elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        yield ast.Name(node.target.id, ast.Load()), node.value
    elif (
        isinstance(node, ast.Call)
        and len(node.args) >= 2
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _BINARY_NAMES
        and resolve(node.func) in _BINARY_OPS
    ):
        yield node.args[0], node.args[1]


def parameter_dtypes(
    nodes: list[ast.AST], params: Iterable[str], resolve: Resolve
) -> dict[str, DtypeUse]:
    """For each parameter the body (``nodes``, its own nodes) combines with another value, what
    that value shows of the dtype; parameters combined with nothing (or only with int
    literals, which take any dtype) are left out."""
    parameters = set(params)
    pairs = [
        pair for node in nodes if isinstance(node, _COMBINING) for pair in _pairs(node, resolve)
    ]
    if not pairs:
        return {}
    assigns = [
        (node.targets[0].id, node.value)
        for node in nodes
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
    ]
    uses: dict[str, DtypeUse] = {}
    for param in parameters:
        names = {param}
        grew = True
        while grew:
            grew = False
            for target, value in assigns:
                if target not in names and _carries(value, names):
                    names.add(target)
                    grew = True
        dtypes: list[str] = []
        others: list[str] = []
        unknown = False
        for left, right in pairs:
            for own, other in ((left, right), (right, left)):
                if not _carries(own, names) or _carries(other, names):
                    continue
                if isinstance(other, ast.Constant) and isinstance(other.value, bool | int):
                    continue
                shown = _literal_dtype(other) or shown_dtype(other, resolve)
                if shown is not None:
                    dtypes.append(shown)
                elif isinstance(other, ast.Name) and other.id in parameters:
                    others.append(other.id)
                else:
                    unknown = True
        if dtypes or others or unknown:
            uses[param] = DtypeUse(
                tuple(dict.fromkeys(dtypes)), tuple(dict.fromkeys(others)), unknown
            )
    return uses
