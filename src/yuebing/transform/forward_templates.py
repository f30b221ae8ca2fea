"""Inline templates for forward mode: the hot primitives of ``templates.py`` (float arithmetic,
``math``/NumPy functions of a float or a float64 array, sums, scalar reads) with their tangent
computed in place of a ``_frule`` call, behind the same kind of type guards::

    if type(a) in _FT and type(b) in _FT and type(a_t) is float and type(b_t) is float:
        _p = a * b; t_t = a_t * b + a * b_t; t = _p
    else:
        <generic frule call>

The tangent is computed from the operands before the target is rebound (``s = s * v``).

Strong zero (docs/conventions.md): an exactly-zero tangent contributes exactly 0, even where the
partial it multiplies is inf or NaN. A product's tangent is computed as usual and, only when it
comes out NaN, again with each term taken by the rule (``_szp`` for arrays, ``t * p if t else
0.0`` for floats); a function's tangent is ``_szp(x_t, f'(x))``, or 0.0 for a zero float tangent.
Array checks run only in a strong pass (``_FWD.strong``, ``rules/declare.py: FORWARD``): the first
pass of a JVP is plain, and is run again strong only if its output holds a NaN (``api/forward.py``).
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from ..ir import nodes as ir
from ..ir.primitives import mktuple
from .templates import _ARRAY_UNARY, _BINARY, _IN_PLACE, _NEW_ARRAYS, _NEW_SHAPED, _UNARY, _is_view_index


class Names:
    """What a forward template needs from the generator."""

    def __init__(self, primal: Callable, tangent: Callable, td: Callable) -> None:
        self.primal, self.tangent, self.td = primal, tangent, td


def _float_var(a: ir.Atom) -> bool:
    return isinstance(a, ir.Var)


def _numeric(a: ir.Atom) -> bool:
    return isinstance(a, ir.Var) or isinstance(a, ir.Const) and type(a.value) in (int, float)


def forward_templates(s: ir.Call, value: Any, n: Names) -> list[tuple[str, list[str]]]:
    """``(guard, lines)`` variants for call ``s`` of known function ``value``."""
    if s.kwargs or s.star_args is not None or s.star_kwargs is not None:
        return []
    if value is operator.setitem and len(s.args) == 3 and all(isinstance(a, ir.Var) for a in s.args):
        return [_float_write(s, n)]
    if not s.target:
        return []
    if value is mktuple and s.args and all(isinstance(a, ir.Var) for a in s.args):
        items = ", ".join(n.primal(a) for a in s.args)
        guard = " and ".join(f"{n.tangent(a)} is _NT" for a in s.args)  # ints, indices: no tangent
        return [(guard, [f"{s.target} = ({items},); {n.td(s.target)} = _NT"])]
    try:
        binary, unary, array_unary = _BINARY.get(value), _UNARY.get(value), _ARRAY_UNARY.get(value)
    except TypeError:
        return []
    t, tt = s.target, n.td(s.target)
    func_guard = [f"{s.func.path} is {n.primal(ir.Const(value))}"] if isinstance(s.func, ir.Global) else []
    variants = []
    if binary is not None and len(s.args) == 2 and all(_numeric(a) for a in s.args) and any(map(_float_var, s.args)):
        variants.append(_binary(s, binary, n, t, tt, array=False))
        if value not in _IN_PLACE:  # in place on an array, however it is written: the rule
            variants.append(_binary(s, binary, n, t, tt, array=True))
            variants += [_binary(s, binary, n, t, tt, array=True, array_side=side) for side in (0, 1)]
        variants += _int_binaries(s, binary, n, t, tt)  # 0.5 * n
    elif binary is not None and len(s.args) == 2 and value not in _IN_PLACE \
            and all(_numeric(a) or isinstance(a, ir.Global) for a in s.args) and any(isinstance(a, ir.Global) for a in s.args):
        variants += _int_binaries(s, binary, n, t, tt)  # 2 * math.pi
    if unary is not None and len(s.args) == 1 and isinstance(s.args[0], ir.Var):
        variants.append(_unary(s, value, unary, n, t, tt, func_guard, array=False))
    if array_unary is not None and len(s.args) == 1 and isinstance(s.args[0], ir.Var):
        variants.append(_unary(s, value, array_unary, n, t, tt, func_guard, array=True))
    if value is operator.pow and len(s.args) == 2 and isinstance(s.args[0], ir.Var) \
            and isinstance(s.args[1], ir.Const) and type(s.args[1].value) in (int, float):
        variants += _power(s, n, t, tt)
    if value is np.sum and len(s.args) == 1 and isinstance(s.args[0], ir.Var):
        x = s.args[0]
        px, xt = n.primal(x), n.tangent(x)
        guard = " and ".join(func_guard + [f"type({px}) is _ND and {px}.dtype is _F64 and type({xt}) is _ND",
                                           "not _BATCH.size"])  # a batched tangent keeps its batch axis
        variants.append((guard, [f"{tt} = float({xt}.sum()); {t} = {px}.sum()"]))
    variants += _array_products(s, value, n, t, tt, func_guard)
    variants += new_arrays_and_views(s, value, n, t, tt, func_guard)
    if value is len and len(s.args) == 1 and isinstance(s.args[0], ir.Var):  # len of an array or a list: an int
        px = n.primal(s.args[0])
        variants.append((" and ".join(func_guard + [f"type({px}) in _SEQ"]), [f"{t} = len({px}); {tt} = _NT"]))
    if value is getattr and len(s.args) == 2 and isinstance(s.args[0], ir.Var) and isinstance(s.args[1], ir.Const) \
            and s.args[1].value in _ARRAY_METADATA:  # x.shape, x.ndim... of an array: no tangent
        px = n.primal(s.args[0])
        variants.append((" and ".join(func_guard + [f"type({px}) is _ND"]), [f"{t} = {px}.{s.args[1].value}; {tt} = _NT"]))
    if value is operator.getitem and len(s.args) == 2 and isinstance(s.args[0], ir.Var) \
            and isinstance(s.args[1], ir.Const) and type(s.args[1].value) is int:  # x.shape[0]: an int of a tuple
        ps, pi = n.primal(s.args[0]), n.primal(s.args[1])
        variants.append((" and ".join(func_guard + [f"type({ps}) is tuple and {n.tangent(s.args[0])} is _NT",
                                                    f"type(_v := {ps}[{pi}]) is int"]),
                         [f"{t} = _v; {tt} = _NT"]))
    if value is operator.getitem and len(s.args) == 2 and isinstance(s.args[0], (ir.Var, ir.Global)) \
            and (isinstance(s.args[1], ir.Var) or isinstance(s.args[1], ir.Const) and type(s.args[1].value) is int):
        seq, index = s.args
        ps, pi, st = n.primal(seq), n.primal(index), n.tangent(seq)
        guard = ["not _BATCH.size"] + ([] if isinstance(index, ir.Const) else [f"type({pi}) in _IDX"]) + [
            f"type({ps}) in _SEQ", f"type({st}) is type({ps})", f"type(_v := {ps}[{pi}]) in _FT"]
        variants.append((" and ".join(guard), [f"{tt} = float({st}[{pi}]); {t} = _v"]))
    return variants


_ORDER = {operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">="}


def _array_products(s: ir.Call, value: Any, n: Names, t: str, tt: str, func_guard: list) -> list:
    """``a @ b`` of float64 matrices (tangent ``a_t @ b + a @ b_t``), a comparison with a float64
    array (a bool array: no tangent) and a float64 array times a bool array (a mask: ``x_t *
    mask``), as a one-hidden-layer network computes them."""
    if len(s.args) != 2:
        return []
    a, b = s.args
    if value in (operator.matmul, np.matmul) and isinstance(a, ir.Var) and isinstance(b, ir.Var):
        pa, pb, at, bt = n.primal(a), n.primal(b), n.tangent(a), n.tangent(b)
        guard = func_guard + [f"type({pa}) is _ND and type({pb}) is _ND and {pa}.dtype is _F64 and {pb}.dtype is _F64",
                              f"{pa}.ndim == 2 and {pb}.ndim == 2 and type({at}) is _ND and type({bt}) is _ND",
                              "not _BATCH.size"]  # (a batched tangent's batch axis would broadcast)
        return [(" and ".join(guard), [f"_p = {pa} @ {pb}; _q = {at} @ {pb}", f"_q += {pa} @ {bt}; {tt} = _q; {t} = _p"])]
    if value in _ORDER and any(isinstance(x, ir.Var) for x in s.args) and all(_numeric(x) for x in s.args):
        kinds = [f"type({n.primal(x)}) in _ORDERED" for x in s.args if isinstance(x, ir.Var)]
        some_array = " or ".join(f"type({n.primal(x)}) is _ND" for x in s.args if isinstance(x, ir.Var))
        return [(" and ".join(kinds + [f"({some_array})"]),
                 [f"{t} = {n.primal(a)} {_ORDER[value]} {n.primal(b)}; {tt} = _NT"])]
    if value is operator.mul and isinstance(a, ir.Var) and isinstance(b, ir.Var):
        out = []
        for x, mask in ((a, b), (b, a)):
            px, xt, pm = n.primal(x), n.tangent(x), n.primal(mask)
            guard = (f"type({px}) is _ND and {px}.dtype is _F64 and type({xt}) is _ND and type({pm}) is _ND "
                     f"and {pm}.dtype is _BOOL and {n.tangent(mask)} is _NT and not _BATCH.size")
            out.append((guard, [f"_p = {n.primal(a)} * {n.primal(b)}; {tt} = {xt} * {pm}; {t} = _p"]))
        return out
    return []


#: attributes of an ndarray that are ints, tuples of ints or dtypes: no tangent
_ARRAY_METADATA = frozenset({"shape", "ndim", "size", "dtype", "itemsize", "nbytes"})


def _mixed_guard(s: ir.Call, n: Names, array_side: int) -> str:
    """The guard of ``a op b`` with one side (``array_side``) a float64 array of at least one
    dimension with an array tangent, the other a float with a float tangent (or a constant)."""
    arr, other = s.args if array_side == 0 else s.args[::-1]
    if not isinstance(arr, ir.Var):
        return "False"
    px, xt = n.primal(arr), n.tangent(arr)
    parts = [f"type({px}) is _ND and {px}.dtype is _F64 and {px}.ndim and type({xt}) is _ND"]
    if isinstance(other, ir.Var):
        parts += [f"type({n.primal(other)}) in _FT", f"type({n.tangent(other)}) is float"]
    return " and ".join(parts)


def _binary(s: ir.Call, op: str, n: Names, t: str, tt: str, array: bool,
            array_side: int | None = None) -> tuple[str, list[str]]:
    """``a op b`` on floats, on same-shape float64 arrays (``array``), or on an array and a float
    (``array_side``: which operand is the array; its tangent is an array, the float's a float)."""
    a, b = s.args
    pa, pb = n.primal(a), n.primal(b)
    at = n.tangent(a) if isinstance(a, ir.Var) else None
    bt = n.tangent(b) if isinstance(b, ir.Var) else None
    if array_side is not None:
        guard = _mixed_guard(s, n, array_side)
        if guard == "False":
            return ("False", [])
    elif array:  # same-shape float64 arrays with array tangents
        if not (isinstance(a, ir.Var) and isinstance(b, ir.Var)):
            return ("False", [])
        guard = (f"type({pa}) is _ND and type({pb}) is _ND and {pa}.dtype is _F64 and {pb}.dtype is _F64 "
                 f"and {pa}.shape == {pb}.shape and type({at}) is _ND and type({bt}) is _ND")
    else:
        parts = []
        for x, xt in ((a, at), (b, bt)):
            if isinstance(x, ir.Var):
                parts += [f"type({n.primal(x)}) in _FT", f"type({xt}) is float"]
        guard = " and ".join(parts)
    terms = {
        "+": [at, bt],
        "-": [at, f"-{bt}" if bt else None],
        "*": [f"{at} * {pb}" if at else None, f"{pa} * {bt}" if bt else None],
        "/": [f"{at} / {pb}" if at else None, f"-_p * {bt} / {pb}" if bt else None],
    }[op]
    expr = " + ".join(x for x in terms if x) or "0.0"
    if array_side is not None and expr in (at, bt):
        expr = f"{expr}.copy()"  # a new tangent, as the result is a new array
    # the same terms by the strong-zero rule (a zero tangent times an inf/nan partial gives 0)
    partials = {"*": [pb, pa], "/": [f"(1.0 / {pb})", f"(-_p / {pb})"]}.get(op)
    strong = None
    if partials is not None:
        factors = [(tangent, partial) for tangent, partial in zip((at, bt), partials) if tangent]
        if array:
            strong = " + ".join(f"_szp({tangent}, {partial})" for tangent, partial in factors)
        else:
            strong = " + ".join(f"({tangent} * {partial} if {tangent} else 0.0)" for tangent, partial in factors)
    # the tangent is built in _q and bound last: the result's names may be an operand's (a = a * b)
    if array:
        lines = [f"_p = {pa} {op} {pb}; _q = {expr}"]
        if strong:  # only in a strong pass (rules/declare.py: FORWARD)
            lines.append(f"if _FWD.strong and _has_nan(_q): _q = {strong}")
    else:
        lines = [f"_p = {pa} {op} {pb}; _q = float({expr})"]
        if strong:
            lines.append(f"if _q != _q: _q = float({strong})")
    lines.append(f"{tt} = _q; {t} = _p")
    return guard, lines


#: functions whose derivative is bounded (finite at every finite point, where the function is
#: finite too): a tangent times it is NaN only if the tangent is, so the strong-zero rule has
#: nothing to fix and its NaN check (a pass over the array) is skipped
_BOUNDED_DERIVATIVE = frozenset({np.sin, np.cos, np.tanh, np.arctan})


def _unary(s: ir.Call, value: Any, derivative: Callable[[str, str], str], n: Names, t: str, tt: str,
           func_guard: list, array: bool) -> tuple[str, list[str]]:
    (x,) = s.args
    px, xt = n.primal(x), n.tangent(x)
    if array:
        guard = func_guard + [f"type({px}) is _ND and {px}.dtype is _F64 and type({xt}) is _ND"]
        module = "_np"
    else:
        guard = func_guard + [f"type({px}) in _FT and type({xt}) is float"]
        module = "_math"
    call = f"-{px}" if value is operator.neg else f"{n.primal(s.func)}({px})"
    deriv = derivative(px, "_p").replace("_math.", f"{module}.") if not array else derivative(px, "_p")
    if value is operator.neg:
        tangent = f"-{xt}"
        if not array:
            tangent = f"float({tangent})"
    elif array and value in _BOUNDED_DERIVATIVE:
        tangent = f"{xt} * ({deriv})"  # f' finite wherever f is: no strong-zero check needed
    elif array:  # strong zero, in a strong pass: a zero tangent gives 0, whatever f'(x)
        tangent = f"(_szp({xt}, {deriv}) if _FWD.strong else {xt} * ({deriv}))"
    else:
        tangent = f"(float({xt} * ({deriv})) if {xt} else 0.0)"
    return " and ".join(guard), [f"_p = {call}; {tt} = {tangent}; {t} = _p"]


def _power(s: ir.Call, n: Names, t: str, tt: str) -> list[tuple[str, list[str]]]:
    """``x ** c`` with a numeric constant ``c``: a float ``x`` (``c`` an int: no complex results or
    ``ZeroDivisionError`` from the derivative that the primal did not raise) or a float64 array."""
    x, c = s.args[0], s.args[1].value
    px, xt = n.primal(x), n.tangent(x)
    deriv = f"{px} + {px}" if c == 2 else f"{c!r} * {px} ** {c - 1!r}"
    variants = []
    if type(c) is int and c >= 1:
        variants.append((f"type({px}) in _FT and type({xt}) is float",
                         [f"_p = {px} ** {c!r}; {tt} = float({xt} * ({deriv})); {t} = _p"]))
    strong = f"_szp({xt}, {deriv})" if c < 1 else None  # x ** (c - 1) is inf at 0 only for c < 1
    tangent = f"({strong} if _FWD.strong else {xt} * ({deriv}))" if strong else f"{xt} * ({deriv})"
    variants.append((f"type({px}) is _ND and {px}.dtype is _F64 and {px}.ndim and type({xt}) is _ND",
                     [f"_p = {px} ** {c!r}; {tt} = {tangent}; {t} = _p"]))
    return variants


def _int_binaries(s: ir.Call, op: str, n: Names, t: str, tt: str) -> list[tuple[str, list[str]]]:
    """``a op b`` where an operand variable holds an int or an operand is a module's number
    (``0.5 * n``, ``x / len(x)``, ``2 * math.pi``): Python's arithmetic, the int or the module's
    constant without a tangent, where the generic rule call costs microseconds. One variant per
    set of int operands (with the others floats carrying float tangents), as ``templates.py``'s."""
    positions = [k for k, a in enumerate(s.args) if isinstance(a, ir.Var)]
    sets = [(k,) for k in positions] + ([tuple(positions)] if len(positions) == 2 else [])
    if not positions:
        sets = [()]
    variants = []
    for ints in sets:
        guard, tangents = [], []
        for k, a in enumerate(s.args):
            pa = n.primal(a)
            if isinstance(a, ir.Global):
                guard.append(f"type({pa}) in _FT")  # a module's float (math.pi): a constant
            elif isinstance(a, ir.Var) and k in ints:
                guard.append(f"type({pa}) is int")
            elif isinstance(a, ir.Var):
                guard += [f"type({pa}) in _FT", f"type({n.tangent(a)}) is float"]
                tangents.append(k)
        pa, pb = (n.primal(a) for a in s.args)
        if not tangents:  # numbers only: an int has no tangent, a float a zero one
            lines = [f"_p = {pa} {op} {pb}; {tt} = _NT if type(_p) is int else 0.0; {t} = _p"]
        else:
            (k,) = tangents
            xt = n.tangent(s.args[k])
            expr = {"+": xt, "-": xt if k == 0 else f"-{xt}", "*": f"{xt} * {pb if k == 0 else pa}",
                    "/": f"{xt} / {pb}" if k == 0 else f"-_p * {xt} / {pb}"}[op]
            lines = [f"_p = {pa} {op} {pb}; {tt} = float({expr}); {t} = _p"]
        variants.append((" and ".join(guard), lines))
    return variants


def new_arrays_and_views(s: ir.Call, value: Any, n: Names, t: str, tt: str, func_guard: list) -> list:
    """New float64 arrays (``np.eye(n)``, ``np.zeros(shape)``, ``np.empty_like(x)``: a zero tangent,
    a read-only zero view where the array is a constant that only an array block reads,
    ``constant_arrays.py``), a constant view index of an array (``x[:, None]``: the same view of
    its tangent, as the indexing rule gives it) and the diagonal of a matrix (``np.diag(L)``: the
    rule's writable view of the tangent's diagonal), where each was a generic rule call."""
    if len(s.args) != 1 and not (value is operator.getitem and len(s.args) == 2):
        return []
    x = s.args[0]
    px = n.primal(x)
    if value in _NEW_ARRAYS and (isinstance(x, ir.Var) or value in _NEW_SHAPED):
        if value in _NEW_SHAPED:
            shapes = "is int" if value in (np.eye, np.identity) else "in _SHAPES"
            kind = [] if isinstance(x, ir.Const) else [f"type({px}) {shapes}"]
        else:
            kind = [f"type({px}) is _ND and {px}.dtype is _F64"]
        zero = "_zero_view(_p)" if getattr(s, "constant_array", False) else "_np.zeros(_p.shape)"
        return [(" and ".join(func_guard + kind + ["not _BATCH.size"]),
                 [f"_p = {n.primal(s.func)}({px}); {tt} = {zero}; {t} = _p"])]
    if not isinstance(x, ir.Var):
        return []
    xt = n.tangent(x)
    same = f"not _BATCH.size and type({px}) is _ND and type({xt}) is _ND and {xt}.shape == {px}.shape"
    if value is operator.getitem and _is_view_index(s.args[1]):
        index = n.primal(s.args[1])
        return [(f"{same} and type(_v := {px}[{index}]) is _ND", [f"{tt} = {xt}[{index}]; {t} = _v"])]
    if value is np.diag:
        return [(" and ".join(func_guard + [f"{same} and {px}.ndim == 2"]),
                 [f"_p = {n.primal(s.func)}({px}); {tt} = _writable_diagonal({xt}, 0); {t} = _p"])]
    return []


def _float_write(s: ir.Call, n: Names) -> tuple[str, list[str]]:
    """``y[idx] = v`` of a float with a float tangent into a float64 array: the same write into
    the array's tangent (any index the primal write accepts writes the same places of the
    tangent, which has the array's shape)."""
    y, idx, v = s.args
    py, yt, pv, vt = n.primal(y), n.tangent(y), n.primal(v), n.tangent(v)
    guard = (f"not _BATCH.size and type({py}) is _ND and {py}.dtype is _F64 and type({yt}) is _ND "
             f"and type({pv}) in _FT and type({vt}) is float")
    return guard, [f"{py}[{n.primal(idx)}] = {pv}; {yt}[{n.primal(idx)}] = {vt}"]
