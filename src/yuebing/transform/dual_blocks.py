"""Dual array blocks: runs of elementwise array arithmetic in the second-order program computed as
one unit (the second-order twin of ``array_blocks.py``).

Statement by statement, each operation of the dual reverse program (``second_order.py``) goes
through ``call_rrule2``: a dispatch, a 4-tuple of zero-filled fdata and fdata tangent per value,
and a dual pullback that delivers every cotangent into buffers. A run of at least two
elementwise statements -- ``+ - * /``, ``-a``, ``a ** c``, the functions of ``DUAL_UNARY``,
``np.sum(a)`` -- is instead guarded once: when its inputs are float64 arrays of one shape and
floats, the forward pass computes each value, its tangent and the partials the reverse needs
(SSA style, ``dual_blocks_code.py``), and the reverse pass is straight-line adjoint code for the
cotangents and their tangents. Tangents and cotangents are values there, ``None`` standing for
zero (no derivative work for constant data such as fixed observations) and a float standing for
an array of that value (a sum's cotangent, ``log(x) - mu``'s tangent); an input without fdata
gets no cotangent. Otherwise the statements run one by one.

Strong zero (docs/conventions.md): the forward pass falls back to the statements one by one when
a tangent the block hands on holds a NaN; the reverse pass runs again with every product by the
strong-zero rule when an input's cotangent or its tangent holds one. Generated code:

    _db1 = None
    if (type(x) is _ND or ...) and (_dk2 := _dual_inputs(_dm3, x, x_f, x_d, ...)) is not None ...:
        _a4, ... = _dk2  # tangents (None: zero), activity and arrayness per input, the size
        try:
            _b5 = np.log(x); _b5_p = 1.0 / x; _b5_d = _m(_a4, _b5_p); ...
        except Exception: pass  # Python floats raise where NumPy gives inf: one by one
        else:
            if not _dual_nan(_b9_d): ...; _push((...)); _push(_DFASTAB); _db1 = True
    if _db1 is None:
        <statement by statement>; _push(_DSLOWAB)
"""
from __future__ import annotations

import math
import operator
from typing import Any, Callable

import numpy as np

from ..ir import nodes as ir
from ..rules.core import is_hashable
from ..rules.declare import SMALL as _SMALL, has_nan, strong_product, zero_where_zero
from ..rules.util import unbroadcast
from .array_blocks import classify
from .constant_arrays import hoist_new_arrays
from .float_blocks import runs
from .forward_blocks import _ZEROS  # dtype -> the read-only zero every zero tangent view is of

MIN_DUAL_BLOCK = 2

#: f -> (f'(x), f''(x)) as expressions of the argument ``X`` and the value ``T``
DUAL_UNARY: dict[Any, tuple[str, str]] = {}
for _m in (np, math):
    DUAL_UNARY.update({
        _m.exp: ("T", "T"), _m.log: ("1.0 / X", "-1.0 / (X * X)"),
        _m.sin: ("_np.cos(X)", "-T"), _m.cos: ("-_np.sin(X)", "-T"),
        _m.tanh: ("1.0 - T * T", "-2.0 * T * (1.0 - T * T)"),
        _m.sqrt: ("0.5 / T", "-0.25 / (T * T * T)"), _m.expm1: ("T + 1.0", "T + 1.0"),
    })


def dual_classify(s: object, integers: set, resolve: Callable) -> tuple[str, Any] | None:
    """``(kind, function)`` if ``s`` can join a dual array block (``array_blocks.classify``,
    with functions of one argument whose second derivative ``DUAL_UNARY`` knows)."""
    found = classify(s, integers, resolve)
    if found is None:
        return None
    kind, func = found
    if kind == "unary" and (not is_hashable(func) or func not in DUAL_UNARY):
        return None
    if kind == "sum" and not isinstance(s.func, (ir.Global, ir.Const)):
        return None
    return found


def find_dual_blocks(body: list, integers: set, resolve: Callable) -> list[tuple[int, int]]:
    """``(start, stop)`` ranges of ``body`` that form dual array blocks."""
    fits = lambda s: dual_classify(s, integers, resolve) is not None  # noqa: E731
    hoist_new_arrays(body, fits, integers, resolve)
    return runs(body, fits, MIN_DUAL_BLOCK)


# --------------------------------------------------------------------------------------------
# What the generated blocks call
# --------------------------------------------------------------------------------------------

_ND, _F64 = np.ndarray, np.dtype(np.float64)
_vdot = np.vdot


def _is_zero_view(t: np.ndarray) -> bool:
    base = t.base
    return base is not None and base is _ZEROS.get(_F64)


def dual_inputs(constant: tuple, *quads: Any) -> tuple | None:
    """The guard of a dual block on ``(value, fdata, tangent, fdata tangent)`` per input: each a
    float with a float tangent or a float64 array (not 0-d) with a tangent of its shape, the
    arrays of one shape or shapes that broadcast together, at least one array. Returns each
    input's tangent (None for zero), whether it takes a cotangent (a float, an array with fdata;
    never a module global), whether it is an array, and the arrays' size -- None where their
    shapes differ (the reverse then fits each contribution to its operand, ``fitted``); else
    None."""
    tangents, active, arrays, shape, same = [], [], [], None, True
    for k, fixed in enumerate(constant):
        v, f, t, ft = quads[4 * k:4 * k + 4]
        kind = type(v)
        if kind is float or kind is np.float64:
            if type(t) is not float and type(t) is not np.float64:
                return None
            tangents.append(None if fixed or not t else t)
            active.append(not fixed)
            arrays.append(False)
            continue
        if kind is not _ND or v.dtype is not _F64 or not v.ndim or type(t) is not _ND or t.dtype is not _F64 \
                or t.shape != v.shape:
            return None
        if not (f is _NF or type(f) is _ND and f.shape == v.shape) or not (ft is _NF or type(ft) is _ND):
            return None
        if shape is None:
            shape = v.shape
        elif v.shape != shape:
            try:
                shape, same = np.broadcast_shapes(shape, v.shape), False
            except ValueError:
                return None
        constant_data = fixed or f is _NF and ft is _NF
        # data without fdata (observations passed in): a zero tangent costs nothing downstream
        zero = fixed or _is_zero_view(t) or constant_data and not t.any()
        tangents.append(None if zero else t)
        active.append(not constant_data)
        arrays.append(True)
    if shape is None:
        return None
    return (*tangents, *active, *arrays, math.prod(shape) if same else None)


def add(a: Any, b: Any) -> Any:
    """``a + b`` where None is zero."""
    if a is None:
        return b
    return a if b is None else a + b


def sub(a: Any, b: Any) -> Any:
    if b is None:
        return a
    return -b if a is None else a - b


def neg(a: Any) -> Any:
    return None if a is None else -a


def times(d: Any, p: Any) -> Any:
    """``d * p`` for a tangent or cotangent ``d`` (None: zero)."""
    return None if d is None or p is None else d * p


def cotangent_times(g: Any, p: Any) -> Any:
    """``times`` in the reverse: a cotangent of exactly 1.0 (an HVP's seed, through a sum) times
    a partial is the partial itself, no pass over it. (The reverse never writes into a cotangent:
    it adds them into fdata and into new arrays. A tangent is not shared so: a write into an
    array also writes its tangent.)"""
    if g is None or p is None:
        return None
    return p if g.__class__ is float and g == 1.0 else g * p


def strong_times(d: Any, p: Any) -> Any:
    """``times`` by the strong-zero rule: where ``d`` is exactly 0 the product is 0."""
    if d is None or p is None:
        return None
    product = d * p
    if type(product) is _ND:
        if has_nan(product):
            if type(d) is _ND:
                zero_where_zero(product, d)
            elif d == 0:
                product[...] = 0.0
        return product
    return 0.0 * product if product != product and d == 0 else product


def quotient(g: Any, b: Any) -> Any:
    """``g / b`` (None: zero), NumPy's inf where ``b`` is 0 (Python floats would raise)."""
    if g is None:
        return None
    if type(g) is _ND or type(b) is _ND or b:
        return g / b
    return np.float64(g) / b


def strong_quotient(g: Any, b: Any) -> Any:
    q = quotient(g, b)
    if type(q) is _ND:
        if has_nan(q) and type(g) is _ND:
            zero_where_zero(q, g)
        elif has_nan(q) and g == 0:
            q[...] = 0.0
        return q
    return 0.0 if q is not None and q != q and g == 0 else q


def divided_tangent(ad: Any, bd: Any, t: Any, b: Any) -> Any:
    """The tangent of ``t = a / b``: ``(ad - t bd) / b``. An array ``t`` over a nonzero number
    ``b`` with number tangents (a location-scale step, ``(x - mu) / sigma``) is scaled once and
    shifted in place: two passes over ``t`` instead of three."""
    if bd is None:
        return None if ad is None else ad / b
    if type(t) is _ND and type(b) is not _ND and b and type(bd) is not _ND and type(ad) is not _ND:
        scaled = t * (-bd / b)
        if ad is not None:
            scaled += ad / b
        return scaled
    return sub(ad, t * bd) / b


def tangent_sum(t: Any, value: Any) -> Any:
    """The tangent of ``np.sum(value)``: a float standing for an array is that value times its
    size; an array that broadcasts to ``value``'s shape (a block whose arrays broadcast) stands
    for its copies along the broadcast axes."""
    if t is None:
        return None
    if type(t) is _ND:
        total = float(np.add.reduce(t, None))
        return total if t.size == value.size else total * (value.size // t.size)
    return float(t) * value.size if type(value) is _ND else t


def sum_of_product(d: Any, p: Any, value: Any) -> Any:
    """``tangent_sum(times(d, p), value)``: for two arrays of ``value``'s shape their dot product
    (one pass, no product array; NaN where the sum of the products is)."""
    if d is None or p is None:
        return None
    if type(d) is _ND and type(p) is _ND and d.shape == p.shape == value.shape:
        return float(_vdot(d, p))
    return tangent_sum(d * p, value)


def fitted(c: Any, value: Any, operand: Any) -> Any:
    """In a block whose arrays broadcast: the contribution ``c`` to the cotangent of ``operand``
    from an operation with result ``value`` -- ``c`` an array that broadcasts to ``value``'s
    shape or a number standing for such an array, None for zero -- as ``operand``'s own: an
    array of its shape or a number standing for one (summed over the axes broadcasting
    stretched), a number for a number operand."""
    if c is None:
        return None
    if type(operand) is not _ND:
        if type(value) is not _ND:
            return c
        if type(c) is _ND:
            return float(np.add.reduce(c, None)) * (value.size // c.size)
        return c * value.size
    if type(c) is _ND:
        if c.shape == operand.shape == value.shape:
            return c
        return unbroadcast(np.broadcast_to(c, value.shape), operand.shape)
    return c * (value.size // operand.size)


def fit(c: Any, reduce: bool, size: int) -> Any:
    """A contribution to a float from an array (``reduce``): its sum, a float standing for an
    array summed as that value times the size."""
    if not reduce or c is None:
        return c
    return float(np.add.reduce(c, None)) if type(c) is _ND else c * size


def dual_nan(*values: Any) -> bool:
    """Whether any of the values (arrays, floats, None) may hold a NaN (no false negatives). Two
    small float64 arrays of one shape (an adjoint and its tangent) take one call: their dot
    product is NaN where either holds one (NaN times anything is NaN); ``inf * 0`` or
    ``inf - inf`` read as NaN too, a false alarm that only costs the strong-zero pass."""
    pending = None  # an array not yet checked, to pair with the next of its shape
    for v in values:
        if v is None:
            continue
        if type(v) is _ND:
            if pending is None:
                pending = v
                continue
            if v.shape == pending.shape and v.dtype is _F64 and pending.dtype is _F64 and v.size <= _SMALL:
                total = _vdot(pending, v)
                pending = None
                if total != total:
                    return True
            elif has_nan(v):
                return True
        elif v != v:
            return True
    return pending is not None and has_nan(pending)


def incoming(fdata: Any, rdata: Any) -> Any:
    """An output's cotangent (or its tangent): its fdata and its rdata, None for none (or an exact
    0.0: a float output's cotangent tangent is 0.0 when an HVP seeds it, and None skips its
    products, which by the strong-zero rule are zero)."""
    if fdata is _NF:
        return None if rdata is _NR or type(rdata) is float and rdata == 0.0 else rdata
    return fdata if rdata is _NR else fdata + rdata


def out_fdata(value: Any) -> Any:
    return np.zeros(value.shape) if type(value) is _ND else _NF


def out_tangent(t: Any, value: Any, taken: tuple) -> Any:
    """The tangent a block hands on: a float for a float; for an array a fresh array of its
    shape (``t`` may be None for zero, a float standing for an array, or an input's tangent)."""
    if type(value) is not _ND:
        return 0.0 if t is None else float(t)
    if t is None:
        return np.zeros(value.shape)
    if type(t) is not _ND or t.shape != value.shape:
        return np.array(np.broadcast_to(t, value.shape))
    return t.copy() if any(t is other for other in taken) else t


class _IgnoringErrors:
    """``np.errstate(all="ignore")`` for the reverse of a dual block, at a third of its cost: the
    ignoring error state is made once per state it replaces (so ``np.setbufsize`` and the rest of
    the caller's state are kept) and set and reset on NumPy's context variable directly. NumPy
    without that variable (other versions) gets ``np.errstate`` itself."""

    __slots__ = ("_token",)
    _made: tuple = (None, None)  # (the state replaced last, its ignoring twin)

    def __enter__(self) -> None:
        current = _ERROR_STATE.get()
        replaced, ignoring = _IgnoringErrors._made
        if replaced is not current:
            with np.errstate(all="ignore"):
                ignoring = _ERROR_STATE.get()
            _IgnoringErrors._made = (current, ignoring)
        self._token = _ERROR_STATE.set(ignoring)

    def __exit__(self, *exc: Any) -> None:
        _ERROR_STATE.reset(self._token)


def _error_state_variable() -> Any:
    try:
        from numpy._core._ufunc_config import _extobj_contextvar
    except ImportError:
        return None
    return _extobj_contextvar if hasattr(_extobj_contextvar, "set") else None


_ERROR_STATE = _error_state_variable()


def ignoring_errors(all: str = "ignore") -> Any:  # (called as np.errstate is: _errstate(all='ignore'))
    """A context ignoring NumPy's floating-point errors (see ``_IgnoringErrors``)."""
    return _IgnoringErrors() if _ERROR_STATE is not None else np.errstate(all=all)


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


def _no_fdata() -> tuple:
    from ..tangents import NoFData, NoRData

    return NoFData, NoRData


_NF, _NR = _no_fdata()
#: the reverse's products: plainly first, by the strong-zero rule when a NaN came out
PRODUCTS = ((cotangent_times, quotient), (strong_times, strong_quotient))

NAMESPACE = {"_dual_inputs": dual_inputs, "_dadd": add, "_dsub": sub, "_dneg": neg, "_dtimes": times, "_dstrong": strong_product,
             "_ddiv_t": divided_tangent, "_dsum_t": tangent_sum, "_dfit": fit, "_dfitted": fitted, "_dual_nan": dual_nan,
             "_din": incoming, "_dout_f": out_fdata, "_dout_t": out_tangent, "_DPRODUCTS": PRODUCTS,
             "_dsum_dot": sum_of_product, "_DSTRONG_TIMES": strong_times,  # (dual_blocks_code: fused sums, strong pass)
             "_np": np, "_dreduce": np.add.reduce, "_errstate": ignoring_errors, "_DFASTAB": _Marker("_DFASTAB"), "_DSLOWAB": _Marker("_DSLOWAB"),
             "_DFASTFB": _Marker("_DFASTFB"), "_f64": np.float64}  # a dual float block ran (dual_float_blocks.py)
