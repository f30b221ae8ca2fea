"""Second-order rules of common elementwise operations on float64 arrays, written out in NumPy.

The elementwise class (``lifting_elementwise._elementwise_rule``) runs a primitive's forward rule for the
output's tangent and, in the dual pullback, differentiates each partial derivative by the
forward transform: several rule dispatches per operation, which dominate on small arrays and
cost extra passes over memory on large ones. For ``+ - * /``, ``a ** c`` with a constant number
``c``, and ``exp``, ``log``, ``sin``, ``cos``, ``tanh``, ``expm1`` (NumPy's or the operators),
called on float64 arrays and floats, this module computes the same quantities directly:

* forward: ``y = f(*xs)``, its tangent ``y_d = sum_k p_k * x_d_k`` with the partials ``p_k``
  (kept for the pullback), and each partial's own tangent ``p_d_k``;
* dual pullback: cotangent ``g * p_k`` and its tangent ``g_d * p_k + g * p_d_k``, delivered
  into the inputs' fdata (arrays) or rdata (floats) as the generic rule does.

Every product with a tangent or cotangent takes the strong-zero rule (``declare.strong_product``),
like the generic rule. Other argument types (integers arrays, complex, subclasses, keywords,
``out=``) return None and take the generic rule.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Callable

import numpy as np

from ..rules.core import CoDual
from ..rules.declare import SMALL, strong_product
from ..rules.util import accumulate, out_cotangent
from ..tangents import NoFData, NoRData, NoTangent
from .dual_blocks import ignoring_errors

_ND, _F64, _add_reduce, _vdot, _einsum = np.ndarray, np.dtype(np.float64), np.add.reduce, np.vdot, np.einsum
_FLOATS = (float, np.float64)

# A formula: (xs, tangents (None: no tangent), y) -> (y_d or None, [(p_k, p_d_k or None) per input]).
Formula = Callable[[list, list, Any], tuple]


def _times(t: Any, p: Any) -> Any:
    return None if t is None else strong_product(t, p)


def _total(*terms: Any) -> Any:
    present = [t for t in terms if t is not None]
    if not present:
        return None
    total = present[0]
    for t in present[1:]:
        total = total + t
    return total


def _exp(xs: list, ts: list, y: Any) -> tuple:
    y_d = _times(ts[0], y)
    return y_d, [(y, y_d)]


def _expm1(xs: list, ts: list, y: Any) -> tuple:
    p = y + 1.0
    y_d = _times(ts[0], p)
    return y_d, [(p, y_d)]


def _log(xs: list, ts: list, y: Any) -> tuple:
    p = 1.0 / xs[0]
    return _times(ts[0], p), [(p, _times(ts[0], -p / xs[0]))]


def _sin(xs: list, ts: list, y: Any) -> tuple:
    p = np.cos(xs[0])
    return _times(ts[0], p), [(p, _times(ts[0], -y))]


def _cos(xs: list, ts: list, y: Any) -> tuple:
    p = -np.sin(xs[0])
    return _times(ts[0], p), [(p, _times(ts[0], -y))]


def _tanh(xs: list, ts: list, y: Any) -> tuple:
    p = 1.0 - y * y
    y_d = _times(ts[0], p)
    return y_d, [(p, None if y_d is None else -2.0 * y * y_d)]


def _add(xs: list, ts: list, y: Any) -> tuple:
    return _total(ts[0], ts[1]), [(1.0, None), (1.0, None)]


def _sub(xs: list, ts: list, y: Any) -> tuple:
    return _total(ts[0], None if ts[1] is None else -ts[1]), [(1.0, None), (-1.0, None)]


def _mul(xs: list, ts: list, y: Any) -> tuple:
    a, b = xs
    return _total(_times(ts[0], b), _times(ts[1], a)), [(b, ts[1]), (a, ts[0])]


def _div(xs: list, ts: list, y: Any) -> tuple:
    a, b = xs
    pa, pb = 1.0 / b, -y / b
    y_d = _total(_times(ts[0], pa), _times(ts[1], pb))
    # d(1/b) = -(1/b)/b db; d(-y/b) = -(y_d/b) - (-y/b)/b db
    pa_d = _times(ts[1], -pa / b)
    pb_d = _total(None if y_d is None else -(y_d / b), _times(ts[1], -pb / b))
    return y_d, [(pa, pa_d), (pb, pb_d)]


def _pow(xs: list, ts: list, y: Any) -> tuple | None:
    a, c = xs
    if type(c) is not int or c == 0:
        return None  # a float exponent may be a variable (its cotangent is needed), 0 a special case
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        p = c * np.power(a, c - 1)
        p_d = None if ts[0] is None else _times(ts[0], c * (c - 1) * np.power(a, c - 2)) if c != 1 else None
    return _times(ts[0], p), [(p, p_d), (None, None)]


FORMULAS: dict[Any, tuple[int, Formula]] = {
    np.exp: (1, _exp), np.expm1: (1, _expm1), np.log: (1, _log), np.sin: (1, _sin), np.cos: (1, _cos),
    np.tanh: (1, _tanh),
    np.add: (2, _add), operator.add: (2, _add), np.subtract: (2, _sub), operator.sub: (2, _sub),
    np.multiply: (2, _mul), operator.mul: (2, _mul), np.divide: (2, _div), operator.truediv: (2, _div),
    np.power: (2, _pow), operator.pow: (2, _pow),
}


def _input(a: tuple) -> tuple | None:
    """``(primal, tangent or None)`` of a 4-tuple argument this module handles, else None."""
    x, t = a[0], a[2]
    tx = type(x)
    if tx is _ND:
        if x.dtype is not _F64 and x.dtype != _F64:
            # a mask or an index array (h * (h > 0)): data without a derivative
            return (x, None) if t is NoTangent and x.dtype.kind in "bi" else None
        if type(t) is _ND and t.shape == x.shape and t.dtype == _F64:
            return x, t
        return (x, None) if t is NoTangent else None
    if tx is float or tx is np.float64:
        if type(t) is float or type(t) is np.float64:
            return x, None if t == 0.0 else t  # an exact zero contributes nothing (strong zero)
        return (x, None) if t is NoTangent else None
    if tx is int and t is NoTangent:
        return x, None  # a constant (the generator gives ints no tangent)
    return None


def _summed(g: np.ndarray, p: Any) -> float | None:
    """``sum(g * p)`` without the product array (a dot product), or None when ``p`` is not a
    float or an array of ``g``'s shape."""
    if type(p) is _ND:
        if p.shape != g.shape:
            return None
        # a large BLAS dot product may start threads, which cost milliseconds on a busy machine
        return float(_vdot(g, p)) if g.size <= SMALL else float(_einsum("i,i->", g.ravel(), p.ravel()))
    if type(p) is float or type(p) is np.float64:
        return float(p) * float(_add_reduce(g, None))
    return None


def _float_rdata(g: np.ndarray, g_d: np.ndarray, p: Any, p_d: Any) -> tuple | None:
    """The rdata of a float input and its tangent, ``sum(g p)`` and ``sum(g_d p + g p_d)``, as
    dot products; None (the products, by the strong-zero rule) where they hold a NaN, which
    ``0 * inf`` gives and the rule turns into 0."""
    r, r_d = _summed(g, p), _summed(g_d, p)
    if p_d is not None and r_d is not None:
        extra = _summed(g, p_d)
        r_d = None if extra is None else r_d + extra
    if r is None or r_d is None or r != r or r_d != r_d:
        return None
    return r, r_d


def _deliver(x: Any, fdata: Any, c: Any) -> Any:
    """Add contribution ``c`` to an array's fdata in place (``NoRData``), or give a float its
    rdata; what needs summing over broadcast axes goes through ``accumulate``."""
    if type(fdata) is _ND and type(c) is _ND and c.shape == fdata.shape:
        fdata += c
        return NoRData
    return accumulate(CoDual(x, fdata), c)


def _scaled(g: Any, p: Any) -> Any:
    """``g * p`` by the strong-zero rule; a partial of 1 or -1 (sums, differences) costs no product."""
    if type(p) is float:
        if p == 1.0:
            return g
        if p == -1.0:
            return -g
    return strong_product(g, p)


def fast_rule(f: Any, args: tuple, kwargs: dict) -> tuple | None:
    """The dual rule's ``(output 4-tuple, dual pullback)`` of ``f(*args)`` by its formula, or
    None when ``f`` has none or an argument is not a float64 array, a float or a constant int."""
    found = FORMULAS.get(f)
    if found is None or kwargs or len(args) != found[0]:
        return None
    inputs = [_input(a) for a in args]
    if None in inputs or not any(type(x) is _ND for x, _ in inputs):
        return None
    xs, ts = [x for x, _ in inputs], [t for _, t in inputs]
    y = f(*xs)
    if type(y) is not _ND or y.dtype != _F64:
        return None
    formula = found[1](xs, ts, y)
    if formula is None:
        return None
    y_d, partials = formula
    if y_d is None:
        y_d = np.zeros(y.shape)
    elif type(y_d) is not _ND or y_d.shape != y.shape or any(y_d is t for t in ts):
        y_d = np.broadcast_to(y_d, y.shape).copy()  # fresh: an input's tangent is never shared
    out = (y, np.zeros(y.shape), y_d, np.zeros(y.shape))

    def pullback(dy: Any, dy_d: Any) -> tuple:
        g, g_d = out_cotangent(CoDual(y, out[1]), dy), out_cotangent(CoDual(y, out[3]), dy_d)
        rs, rsd = [NoRData], [NoRData]
        with ignoring_errors():
            for a, x, (p, p_d) in zip(args, xs, partials):
                if p is None or type(x) is int or type(x) is _ND and (a[1] is NoFData or x.dtype != _F64):
                    rs.append(NoRData)  # a constant: no cotangent
                    rsd.append(NoRData)
                    continue
                summed = None if type(x) is _ND else _float_rdata(g, g_d, p, p_d)
                if summed is not None:
                    rs.append(summed[0])
                    rsd.append(summed[1])
                    continue
                rs.append(_deliver(x, a[1], _scaled(g, p)))
                tangent = _scaled(g_d, p)
                if p_d is not None:
                    tangent = tangent + strong_product(g, p_d)
                rsd.append(_deliver(x, a[3], tangent))
        return tuple(rs), tuple(rsd)

    return out, pullback


#: ``x.sum()`` runs unbound (``lifting.run_second_order``)
SUM_METHOD = np.ndarray.sum


def fast_sum(args: tuple, kwargs: dict) -> tuple | None:
    """The dual rule of ``np.sum(x)`` or ``x.sum()`` for a float64 array ``x`` (linear: the sum of
    the tangent; the pullback adds the cotangent and its tangent to every element), or None."""
    if kwargs or len(args) != 1:
        return None
    x, x_f, t, t_f = args[0]
    if type(x) is not _ND or x.dtype != _F64 or type(t) is not _ND or t.shape != x.shape or t.dtype != _F64:
        return None
    out = (_add_reduce(x, None), NoFData, _add_reduce(t, None), NoFData)  # what np.sum runs, without its wrapper

    def pullback(dy: Any, dy_d: Any) -> tuple:
        for fdata, g in ((x_f, dy), (t_f, dy_d)):
            if type(fdata) is _ND and g is not NoRData:
                fdata += g
        return (NoRData, NoRData), (NoRData, NoRData)

    return out, pullback
