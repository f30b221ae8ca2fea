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
gets no cotangent. Otherwise the statements run one by one. A run that also holds products of
two matrices or comparisons (masks) is a product block (``dual_product_blocks.py``, guarded by
``dual_product_inputs``; its products' runtime is here too).

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
from ..ir.float_errors import error_state_variable
from ..rules.core import is_hashable
from ..rules.declare import SMALL as _SMALL, has_nan, strong_product, zero_where_zero
from ..rules.linalg.products import kron_product, kron_sum_of_two
from ..rules.util import unbroadcast
from .array_blocks import classify, classify_in_reverse, kron_cotangent
from . import buffers
from .buffers import add_matmul
from .constant_arrays import hoist_new_arrays
from .float_blocks import runs
from .forward_blocks import _ZEROS  # dtype -> the read-only zero every zero tangent view is of
from .direct_calls import default_tangent as zero_tangent_of  # (forward_runtime's, through its hook: it imports this module's users)

MIN_DUAL_BLOCK = 2
#: the kinds of a block's statements that make it a product block (matrix products, masks)
PRODUCT_KINDS = ("matmul", "kron", "compare")

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


def dual_classify_any(s: object, integers: set, resolve: Callable) -> tuple[str, Any] | None:
    """``dual_classify``, and the kinds only product blocks take (``dual_product_blocks.py``): a
    product of two matrices (``a @ b``, ``np.matmul``, ``np.dot``), ``np.kron`` of two arrays and
    a comparison (a mask)."""
    found = dual_classify(s, integers, resolve)
    if found is not None:
        return found
    found = classify_in_reverse(s, integers, resolve)
    return found if found is not None and found[0] in PRODUCT_KINDS else None


def find_dual_blocks(body: list, integers: set, resolve: Callable) -> list[tuple[int, int]]:
    """``(start, stop)`` ranges of ``body`` that form dual array blocks."""
    fits = lambda s: dual_classify_any(s, integers, resolve) is not None  # noqa: E731
    hoist_new_arrays(body, fits, integers, resolve)
    return runs(body, fits, MIN_DUAL_BLOCK)


# --------------------------------------------------------------------------------------------
# What the generated blocks call
# --------------------------------------------------------------------------------------------

_ND, _F64 = np.ndarray, np.dtype(np.float64)
# np.vdot without its __array_function__ dispatch (a third of its cost on small arrays): it is
# only called on ndarrays here
_vdot = getattr(np.vdot, "_implementation", np.vdot)


def _checked_input(fixed: bool, v: Any, f: Any, t: Any, ft: Any) -> tuple | None:
    """One input of a dual block: ``(tangent or None for zero, takes a cotangent, shape or None
    for a float)``, or None when it does not fit (``dual_inputs``). (Arrays first: the common case.)"""
    kind = type(v)
    if kind is _ND:
        shape = v.shape
        if v.dtype is not _F64 or not shape or type(t) is not _ND or t.dtype is not _F64 or t.shape != shape:
            return None
        if not (f is _NF or type(f) is _ND and f.shape == shape) or not (ft is _NF or type(ft) is _ND):
            return None
        constant_data = fixed or f is _NF and ft is _NF
        # a zero tangent (a view of the read-only zero), or data without fdata (observations
        # passed in) with a zero tangent: None, which costs nothing downstream
        base = t.base
        zero = fixed or base is not None and base is _ZEROS.get(_F64) or constant_data and not t.any()
        return None if zero else t, not constant_data, shape
    if kind is float or kind is np.float64:
        if type(t) is not float and type(t) is not np.float64:
            return None
        return None if fixed or not t else t, not fixed, None
    if kind is int:  # a constant, as in Python's arithmetic (0.5 * n, n = len(x)): no derivative
        return None, False, None
    return None


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
        checked = _checked_input(fixed, *quads[4 * k:4 * k + 4])
        if checked is None:
            return None
        t, takes, its_shape = checked
        tangents.append(t)
        active.append(takes)
        arrays.append(its_shape is not None)
        if its_shape is None or its_shape == shape:
            continue
        if shape is None:
            shape = its_shape
        else:
            try:
                shape, same = np.broadcast_shapes(shape, its_shape), False
            except ValueError:
                return None
    if shape is None:
        return None
    return (*tangents, *active, *arrays, math.prod(shape) if same else None)


def dual_product_inputs(constant: tuple, products: tuple, groups: tuple, *quads: Any) -> tuple | None:
    """``dual_inputs`` for a block with matrix products and comparisons (``dual_product_blocks.py``):
    ``products`` gives each product ``(is a kron, a, b)`` with its operands as the indices of the
    values that make them arrays (the inputs, then the products in order): for ``@`` each a
    float64 matrix and the two chaining, for ``kron`` two arrays of one number of axes;
    ``groups`` the indices of the values whose arrays meet elementwise, broadcasting together.
    The last item is ``(each group's size or None where its arrays broadcast, each product's
    shape)``."""
    tangents, active, arrays, shapes = [], [], [], []
    for k, fixed in enumerate(constant):
        checked = _checked_input(fixed, *quads[4 * k:4 * k + 4])
        if checked is None:
            return None
        t, takes, shape = checked
        tangents.append(t)
        active.append(takes)
        arrays.append(shape is not None)
        shapes.append(shape)
    for kron, a, b in products:
        sa, sb = _broadcast_of(shapes, a), _broadcast_of(shapes, b)
        if sa is None or sb is None:
            return None
        if kron:  # two arrays of one number of axes
            if len(sa) != len(sb):
                return None
            shapes.append(tuple(p * q for p, q in zip(sa, sb)))
            continue
        if len(sa) != 2 or len(sb) != 2 or sa[1] != sb[0]:
            return None
        shapes.append((sa[0], sb[1]))
    sizes = []
    for members in groups:
        known = [shapes[k] for k in members if shapes[k] is not None]
        shape = _broadcast_of(shapes, members) if known else ()
        if shape is None:
            return None
        sizes.append(math.prod(shape) if all(s == shape for s in known) else None)
    return (*tangents, *active, *arrays, (tuple(sizes), tuple(shapes[len(constant):])))


def _fit_to(d: Any, like: np.ndarray) -> Any:
    """A tangent (None: zero; a float or a smaller array standing for an array) as an array of
    ``like``'s shape, for a matrix product."""
    if d is None or type(d) is _ND and d.shape == like.shape:
        return d
    return np.broadcast_to(d, like.shape)


def spread(g: Any, shape: tuple) -> Any:
    """A product's adjoint (None, or a float standing for an array: a sum's) as an array."""
    return g if g is None or type(g) is _ND else np.full(shape, float(g))


def pooled_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` of two matrices, a large one into a buffer of the pool (``buffers.py``: a fresh
    large array is a fresh mapping whose page faults cost about a fifth of the product)."""
    m, n = a.shape[0], b.shape[1]
    return np.matmul(a, b, out=buffers.empty((m, n)) if m * n >= buffers.MIN_SIZE else None)


def product_tangent(a: np.ndarray, ad: Any, b: np.ndarray, bd: Any) -> Any:
    """The tangent of ``a @ b``: ``ad @ b + a @ bd`` (None: zero), the second added by gemm."""
    ad, bd = _fit_to(ad, a), _fit_to(bd, b)
    if ad is None:
        return None if bd is None else pooled_product(a, bd)
    y = pooled_product(ad, b)
    if bd is not None:
        add_matmul(y, a, bd)
    return y


def _factors(side: int, g: np.ndarray, other: np.ndarray) -> tuple:
    """The two factors of the cotangent of ``a @ b``'s operand ``side`` (0: ``a``, 1: ``b``)."""
    return (g, other.T) if side == 0 else (other.T, g)


def product_cotangent(side: int, g: Any, other: np.ndarray) -> Any:
    """The contribution of adjoint ``g`` of ``a @ b`` to operand ``side``: ``g b^T`` or ``a^T g``."""
    if g is None:
        return None
    first, second = _factors(side, g, other)
    return pooled_product(first, second)


def product_cotangent_tangent(side: int, g: Any, gd: Any, other: np.ndarray, other_d: Any) -> Any:
    """The tangent of ``product_cotangent``: ``gd`` through ``other`` plus ``g`` through
    ``other``'s tangent (None: zero), the second added by gemm."""
    other_d = _fit_to(other_d, other)
    out = product_cotangent(side, gd, other)
    if g is None or other_d is None:
        return out
    if out is None:
        return product_cotangent(side, g, other_d)
    add_matmul(out, *_factors(side, g, other_d))
    return out


def product_into(side: int, fdata: Any, fdata_d: Any, g: Any, gd: Any, other: np.ndarray, other_d: Any) -> None:
    """``product_cotangent`` and its tangent added by gemm straight into a block input's fdata
    and fdata tangent (no product as a temporary)."""
    if type(fdata) is _ND and g is not None:
        add_matmul(fdata, *_factors(side, g, other))
    if type(fdata_d) is not _ND:
        return
    if gd is not None:
        add_matmul(fdata_d, *_factors(side, gd, other))
    other_d = _fit_to(other_d, other)
    if g is not None and other_d is not None:
        add_matmul(fdata_d, *_factors(side, g, other_d))


def _total(x: Any, like: np.ndarray) -> Any:
    """The sum of a tangent or adjoint standing for an array of ``like``'s shape (None: zero)."""
    if x is None:
        return None
    if type(x) is _ND:
        return float(np.add.reduce(x, None)) * (like.size // x.size)
    return float(x) * like.size


def kron_tangent(a: np.ndarray, ad: Any, b: np.ndarray, bd: Any) -> Any:
    """The tangent of ``kron(a, b)``: ``kron(ad, b) + kron(a, bd)`` (None: zero) in one pass
    into a pooled buffer (``rules/linalg/products.py``)."""
    ad, bd = _fit_to(ad, a), _fit_to(bd, b)
    if ad is None:
        return None if bd is None else kron_product(a, bd)
    return kron_product(ad, b) if bd is None else kron_sum_of_two(ad, b, a, bd)


def kron_sum_tangent(a: np.ndarray, ad: Any, b: np.ndarray, bd: Any) -> Any:
    """The tangent of ``np.sum(kron(a, b))`` with no kron of tangents made: each element of
    ``kron(ad, b)`` is a product ``ad[i] b[k]``, so the sum is ``sum(ad) sum(b)``."""
    first = None if ad is None else _total(ad, a) * float(np.add.reduce(b, None))
    return add(first, None if bd is None else float(np.add.reduce(a, None)) * _total(bd, b))


def kron_cotangent_tangent(side: int, g: Any, gd: Any, other: np.ndarray, other_d: Any, target: np.ndarray) -> Any:
    """The tangent of ``kron_cotangent``: ``gd`` through ``other`` plus ``g`` through ``other``'s
    tangent (None: zero)."""
    through = kron_cotangent(side, gd, other, target)
    if g is None or other_d is None:
        return through
    if type(g) is not _ND:
        return add(through, float(g) * _total(other_d, other))
    return add(through, kron_cotangent(side, g, _fit_to(other_d, other), target))


def _broadcast_of(shapes: list, members: tuple) -> tuple | None:
    """The shape the arrays among ``members`` broadcast to (None: none is an array, or they do not)."""
    known = [shapes[k] for k in members if shapes[k] is not None]
    if not known:
        return None
    if len(known) == 1:
        return known[0]
    try:
        return np.broadcast_shapes(*known)
    except ValueError:
        return None


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
    array also writes its tangent.) A partial of booleans or ints (``x * mask``'s in ``x``) is
    multiplied all the same: a cotangent is floats (``-mask`` raised TypeError in yb.hvp)."""
    if g is None or p is None:
        return None
    if g.__class__ is float and g == 1.0 and not (p.__class__ is _ND and p.dtype.kind in "biu"):
        return p
    return g * p


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
    if len(values) == 2:  # (an input's adjoint and its tangent, two small arrays: one dot product)
        a, b = values
        if type(a) is _ND and type(b) is _ND and a.shape == b.shape and a.dtype is _F64 and b.dtype is _F64 \
                and a.size <= _SMALL:
            total = _vdot(a, b)
            return total != total
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
        if type(value) is int:  # (n * 2 of an int input: an int, as the statements make it)
            return _NT
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


_ERROR_STATE = error_state_variable()


def ignoring_errors(all: str = "ignore") -> Any:  # (called as np.errstate is: _errstate(all='ignore'))
    """A context ignoring NumPy's floating-point errors (see ``_IgnoringErrors``)."""
    return _IgnoringErrors() if _ERROR_STATE is not None else np.errstate(all=all)


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


def _no_fdata() -> tuple:
    from ..tangents import NoFData, NoRData, NoTangent

    return NoFData, NoRData, NoTangent


_NF, _NR, _NT = _no_fdata()
#: the reverse's products: plainly first, by the strong-zero rule when a NaN came out
PRODUCTS = ((cotangent_times, quotient), (strong_times, strong_quotient))

NAMESPACE = {"_dual_inputs": dual_inputs, "_dadd": add, "_dsub": sub, "_dneg": neg, "_dtimes": times, "_dstrong": strong_product,
             "_ddiv_t": divided_tangent, "_dsum_t": tangent_sum, "_dfit": fit, "_dfitted": fitted, "_dual_nan": dual_nan,
             "_din": incoming, "_dout_f": out_fdata, "_dout_t": out_tangent, "_DPRODUCTS": PRODUCTS,
             "_dsum_dot": sum_of_product, "_DSTRONG_TIMES": strong_times,  # (dual_blocks_code: fused sums, strong pass)
             "_np": np, "_dreduce": np.add.reduce, "_errstate": ignoring_errors, "_DFASTAB": _Marker("_DFASTAB"), "_DSLOWAB": _Marker("_DSLOWAB"),
             "_DFASTFB": _Marker("_DFASTFB"), "_f64": np.float64,  # a dual float block ran (dual_float_blocks.py)
             # product blocks (dual_product_blocks.py)
             "_dual_product_inputs": dual_product_inputs, "_dmm_t": product_tangent, "_dmm_g": product_cotangent,
             "_dmm_gd": product_cotangent_tangent, "_dmm_into": product_into, "_dspread": spread, "_dmm": pooled_product,
             "_dkron": kron_product, "_dkron_t": kron_tangent, "_dkron_sum_t": kron_sum_tangent, "_dkron_g": kron_cotangent,
             "_dkron_gd": kron_cotangent_tangent, "_dzt": zero_tangent_of}
