"""numpy.ma masked arrays (issue 13): their functions and methods, as definitions over plain arrays.

A masked array's tangent is the tangent of its data (``tangents/masked.py``): the mask carries no
derivative, and the data under the mask follows NumPy's own rules (``m + n`` keeps ``m``'s data
where the result is masked, ``m.data`` reads it). Each numpy.ma function or method below is
*defined* (``second_order.defined_as``) by Python code over plain arrays, which every mode
differentiates like user code, on three primitives:

* ``_like(fn, *args, **kwargs)`` calls numpy.ma itself on the primal values, without derivatives:
  its result says what the value is (``np.ma.masked``, a scalar, or a masked array and its mask);
* ``_data(m)``: the data of a masked array (a view), whose tangent is the masked array's own;
* ``_as_masked(data, like)``: ``data`` seen as the masked array ``like`` describes (a view), its
  tangent the data's.

The data is computed as NumPy computes it (``np.where(mask, d, np.sqrt(d))`` for ``np.ma.sqrt``),
so derivatives follow the values; the strong zero keeps NaN and inf under a mask out of them.
Everything else meeting a masked array is refused (``refuse_masked_arguments``, called for every
registered rule): a rule for plain arrays would ignore the mask.
"""
from __future__ import annotations

import collections
import operator
from typing import Any, Callable

import numpy as np

from ..tangents import NoRData, register_nondifferentiable_type
from ..tangents.kinds import MASKED_ARRAYS
from ..tangents.masked import SEEN as MASKED_SEEN
from .cases import Case, randn, randpos
from .core import CoDual, Dual, RuleArgumentError, describe_callable, primal, register_frule, register_rrule
from .declare import ZERO_DERIVATIVE, nondifferentiable
from .second_order import SecondOrder, declare, defined_as, jvp_defined_by

MaskedArray = np.ma.MaskedArray


# --------------------------------------------------------------------------------------------
# The primitives
# --------------------------------------------------------------------------------------------


@register_nondifferentiable_type
class _Like:
    """What numpy.ma's own call returned, for the definitions: ``masked`` (it is ``np.ma.masked``),
    ``scalar`` (not a masked array), ``mask`` (its mask as a bool array), ``shape``, ``dtype``, and
    ``fill_value``, and ``shares[i]``: whether it shares memory with positional argument ``i``."""

    def __init__(self, value: Any, args: tuple) -> None:
        MASKED_SEEN[0] = True
        self.value = value
        self.masked = value is np.ma.masked
        self.scalar = not isinstance(value, MaskedArray)
        self.mask = None if self.scalar else np.ma.getmaskarray(value)
        self.shape, self.dtype = np.shape(value), getattr(value, "dtype", None)
        self.fill_value = getattr(value, "fill_value", None)
        self.shares = tuple(isinstance(a, np.ndarray) and isinstance(value, np.ndarray)
                            and np.may_share_memory(value, a) for a in args)


def _like(fn: Callable, *args: Any, **kwargs: Any) -> _Like:
    """numpy.ma's ``fn`` called on the primal values (no derivative): what its result is."""
    return _Like(fn(*args, **kwargs), args)


def _data(m: Any) -> np.ndarray:
    """The data of masked array ``m`` (a view); a plain array itself."""
    return np.ma.getdata(m)


def _as_masked(data: np.ndarray, like: _Like) -> MaskedArray:
    """``data`` viewed as the masked array ``like`` describes (its class, mask, fill value)."""
    template = like.value
    if data.shape != template.shape:
        raise RuleArgumentError(f"numpy.ma: yuebing's definition gave data of shape {data.shape} for a masked "
                                f"array of shape {template.shape}; please report this")
    out = data.view(type(template))
    out._update_from(template)
    out._mask = template._mask
    return out


def _view_of(t: Any, y: Any, source: Any) -> Any:
    """The tangent (or fdata) of ``y``, a view of ``source`` with its shape: the same view of
    ``source``'s tangent ``t`` (a new array object on the same memory, as ``y`` is)."""
    return t.view() if isinstance(t, np.ndarray) and y is not source else t


def _data_rrule(m: CoDual) -> tuple[CoDual, Callable]:
    y = _data(m.primal)
    return CoDual(y, _view_of(m.fdata, y, m.primal)), lambda dy: (NoRData, NoRData)


def _data_frule(m: Dual) -> Dual:
    y = _data(m.primal)
    return Dual(y, _view_of(m.tangent, y, m.primal))


def _as_masked_rrule(data: CoDual, like: Any) -> tuple[CoDual, Callable]:
    y = _as_masked(data.primal, primal(like))
    return CoDual(y, _view_of(data.fdata, y, data.primal)), lambda dy: (NoRData, NoRData, NoRData)


def _as_masked_frule(data: Dual, like: Any) -> Dual:
    y = _as_masked(data.primal, primal(like))
    return Dual(y, _view_of(data.tangent, y, data.primal))


def _view_second_order(make: Callable) -> Callable:
    """Second order of a primitive whose output is a view of its first argument with its shape:
    every role (fdata, tangent, fdata tangent) is the same view of the argument's, and the
    pullback has nothing to add (the cotangents meet in the shared memory)."""
    def rule(f: tuple, args: tuple, kwargs: dict) -> tuple:
        source = args[0]
        y = make(source[0], *(a[0] for a in args[1:]))
        nothing = (NoRData,) * (1 + len(args))
        roles = tuple(_view_of(role, y, source[0]) for role in source[1:])
        return (y, *roles), lambda dy, dy_d: (nothing, nothing)

    rule.second_order_kind = "linear"  # type: ignore[attr-defined] - a view (docs/rules.md)
    return rule


_GET_DATA = MaskedArray.data.fget
for _target in (_data, _GET_DATA):
    register_rrule(_target, _data_rrule)
    register_frule(_target, _data_frule)
    declare((_target,), SecondOrder("special", rule=_view_second_order(_data)))
register_rrule(_as_masked, _as_masked_rrule)
register_frule(_as_masked, _as_masked_frule)
declare((_as_masked,), SecondOrder("special", rule=_view_second_order(_as_masked)))
nondifferentiable(_like)


def _data_jvp(m: Any, m_t: Any) -> tuple:
    """Third order (``jvp_defined_by``): the data and its tangent, the masked array's own (a plain array)."""
    return _data(m), m_t


def _as_masked_jvp(data: Any, data_t: Any, like: Any, like_t: Any) -> tuple:
    """Third order: the masked array and its tangent, the data's (never a masked array)."""
    return _as_masked(data, like), data_t


jvp_defined_by(_data, _data_jvp)
jvp_defined_by(_GET_DATA, _data_jvp)
jvp_defined_by(_as_masked, _as_masked_jvp)


# --------------------------------------------------------------------------------------------
# Definitions (differentiated like user code: keep them plain Python over plain arrays)
# --------------------------------------------------------------------------------------------


def _data_of(a: Any) -> np.ndarray:
    """The data of ``a``: a masked array's (a view), an array itself, anything else as an array."""
    if isinstance(a, np.ndarray):
        return _data(a)
    return np.asarray(a)


def _finish(data: Any, like: _Like) -> Any:
    """The result numpy.ma gives: ``np.ma.masked``, a scalar, or ``data`` as the masked array."""
    if like.masked:
        return np.ma.masked
    if like.scalar:
        return data[()] if isinstance(data, np.ndarray) else data
    return _as_masked(data, like)


def _kept_under_mask(like: _Like, kept: Any, computed: Any) -> Any:
    """NumPy's masked operations put the first operand's data back where the result is masked."""
    if like.scalar:
        return computed
    return np.where(like.mask, kept, computed)


def _made_from(fn: Callable, source: int) -> Callable:
    """A constructor (``np.ma.array``, ``masked_where``...): its data is argument ``source``'s,
    a view of it when numpy.ma made one, else a copy in the result's dtype."""
    def made(*args: Any, **kwargs: Any) -> Any:
        like = _like(fn, *args, **kwargs)
        d = _data_of(args[source])
        if not like.shares[source]:
            d = np.array(d, dtype=like.dtype, copy=True)
        return _finish(d.reshape(like.shape), like)

    made.__qualname__ = f"masked {fn.__name__}"
    return made


def _elementwise(op: Any, f: np.ufunc) -> Callable:
    """``np.ma.sqrt``, ``np.ma.add``...: ``f`` on the data, the first operand's data kept where masked."""
    def masked_elementwise(*operands: Any) -> Any:
        like = _like(op, *operands)
        data = [_data_of(a) for a in operands]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            computed = f(*data)
        return _finish(_kept_under_mask(like, data[0], computed), like)

    masked_elementwise.__qualname__ = f"masked {f.__name__}"
    return masked_elementwise


def _zero_filled(m: Any) -> np.ndarray:
    return np.where(np.ma.getmaskarray(m), 0, _data_of(m))


def _no_out(out: Any, name: str) -> None:
    if out is not None:
        raise RuleArgumentError(f"numpy.ma.MaskedArray.{name}: yuebing does not differentiate out= of a masked "
                                "reduction; assign the result instead")


def _reduced(total: Any, axis: Any, dtype: Any, keepdims: Any) -> Any:
    if keepdims is np._NoValue:
        return np.sum(total, axis=axis, dtype=dtype)
    return np.sum(total, axis=axis, dtype=dtype, keepdims=keepdims)


def _masked_sum(self: MaskedArray, axis: Any = None, dtype: Any = None, out: Any = None,
                keepdims: Any = np._NoValue) -> Any:
    _no_out(out, "sum")
    like = _like(MaskedArray.sum, self, axis, dtype, None, keepdims)
    return _finish(_reduced(_zero_filled(self), axis, dtype, keepdims), like)


def _masked_mean(self: MaskedArray, axis: Any = None, dtype: Any = None, out: Any = None,
                 keepdims: Any = np._NoValue) -> Any:
    _no_out(out, "mean")
    like = _like(MaskedArray.mean, self, axis, dtype, None, keepdims)
    total = _reduced(_zero_filled(self), axis, dtype, keepdims)
    count = _reduced(~np.ma.getmaskarray(self), axis, None, keepdims)
    return _finish(total * 1.0 / np.maximum(count, 1), like)  # no entry: masked, the data the sum (0)


def _masked_var(self: MaskedArray, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
                keepdims: Any = np._NoValue, mean: Any = np._NoValue) -> Any:
    _no_out(out, "var")
    if mean is not np._NoValue:
        raise RuleArgumentError("numpy.ma.MaskedArray.var: yuebing does not differentiate mean=; leave it out")
    like = _like(MaskedArray.var, self, axis, dtype, None, ddof, keepdims)
    mask = np.ma.getmaskarray(self)
    d = _data(self)
    count = np.sum(~mask, axis=axis, keepdims=True)
    centre = np.sum(np.where(mask, 0, d), axis=axis, keepdims=True) / np.maximum(count, 1)
    deviation = np.where(mask, 0, d - centre)
    total = _reduced(deviation * deviation, axis, dtype, keepdims)
    n = _reduced(~mask, axis, None, keepdims) - ddof
    with np.errstate(divide="ignore", invalid="ignore"):
        quotient = total / n
        return _finish(np.where((n == 0) | ~np.isfinite(quotient), total, quotient), like)  # (np.ma.divide's data)


def _masked_std(self: MaskedArray, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
                keepdims: Any = np._NoValue, mean: Any = np._NoValue) -> Any:
    variance = _masked_var(self, axis, dtype, out, ddof, keepdims, mean)
    if variance is np.ma.masked:
        return variance
    return np.ma.sqrt(variance)


def _extreme(method: Callable, reduce: Callable, fill_of: Callable) -> Callable:
    """``m.max()``, ``m.min()``: ``reduce`` of the data with masked entries filled by ``fill_of(m)``
    (NumPy's ``-inf`` for a maximum), the result's fill value where a whole slice is masked."""
    def extreme(self: MaskedArray, axis: Any = None, out: Any = None, fill_value: Any = None,
                keepdims: Any = np._NoValue) -> Any:
        _no_out(out, method.__name__)
        like = _like(method, self, axis, None, fill_value, keepdims)
        fill = fill_of(self) if fill_value is None else fill_value
        filled = np.where(np.ma.getmaskarray(self), fill, _data(self))
        if keepdims is np._NoValue:
            result = reduce(filled, axis=axis)
        else:
            result = reduce(filled, axis=axis, keepdims=keepdims)
        if like.scalar:
            return _finish(result, like)
        return _finish(np.where(like.mask, like.fill_value, result), like)

    extreme.__qualname__ = f"masked {method.__name__}"
    return extreme


def _masked_median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
                   keepdims: bool = False) -> Any:
    """np.ma.median of all the unmasked entries (``axis=None``): ``np.median`` of them, its
    convention at ties (the two middle values share the derivative); along an axis, ``_median_along``."""
    if out is not None or keepdims:
        raise RuleArgumentError("numpy.ma.median: yuebing does not differentiate out= or keepdims=; assign the "
                                "result, and index it with None to keep the axis")
    if axis is not None:
        return _median_along(a, axis)
    like = _like(np.ma.median, a)
    if like.masked:
        return np.ma.masked
    return _finish(np.median(_compressed(a)), like)


def _median_along(a: Any, axis: int) -> Any:
    """``np.ma.median(m, axis=k)``: per slice, the middle of its unmasked entries in sorted order
    (the mean of the two middle ones for an even count); a slice all masked is masked."""
    like = _like(np.ma.median, a, axis)
    mask = np.ma.getmaskarray(a)
    ordered = np.sort(np.where(mask, np.inf, _data_of(a)), axis=axis)  # masked entries last
    count = np.sum(~mask, axis=axis, keepdims=True)
    low = np.take_along_axis(ordered, np.maximum(count - 1, 0) // 2, axis=axis)
    high = np.take_along_axis(ordered, count // 2, axis=axis) if ordered.shape[axis] > 0 else low
    middle = np.squeeze((low + high) * 0.5, axis=axis)
    if like.scalar or like.masked:
        return _finish(middle, like)
    return _finish(np.where(like.mask, np.ma.getdata(like.value), middle), like)


def _masked_power(a: Any, b: Any, third: Any = None) -> Any:
    """np.ma.power: the first operand's data where an operand is masked, the fill value where the
    power is not finite (as NumPy writes them), the power elsewhere."""
    like = _like(np.ma.power, a, b, third)
    if like.masked:  # (the masked constant's fill value is no number)
        return np.ma.masked
    fa, fb = _data_of(a), _data_of(b)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        computed = np.where(np.ma.getmaskarray(a) | np.ma.getmaskarray(b), fa, np.power(fa, fb))
        if like.scalar:
            return _finish(computed, like)
        return _finish(np.where(np.isfinite(computed), computed, like.fill_value), like)


def _masked_average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *,
                    keepdims: Any = np._NoValue) -> Any:
    if returned:
        raise RuleArgumentError("numpy.ma.average: yuebing does not differentiate returned=True; compute the "
                                "sum of the weights with np.ma.array(w, mask=np.ma.getmaskarray(a)).sum(axis)")
    like = _like(np.ma.average, a, axis, weights, keepdims=keepdims)
    if weights is None:
        return _masked_mean(_as_view(a), axis, None, None, keepdims)
    d, w = _data_of(a), _data_of(weights)
    excluded = np.ma.getmaskarray(a) | _along(np.ma.getmaskarray(weights), d, axis)
    w = _along(w, d, axis)
    with np.errstate(invalid="ignore", over="ignore"):  # (NaN and inf under the mask)
        scale = _reduced(np.where(excluded, 0, w), axis, None, keepdims)
        total = _reduced(np.where(excluded, 0, d * w), axis, None, keepdims)
        return _finish(total / np.where(scale == 0, 1, scale), like)


def _along(w: np.ndarray, d: np.ndarray, axis: Any) -> np.ndarray:
    """Weights of ``d``'s shape, or 1-D along ``axis`` (as np.ma.average takes them), shaped to broadcast."""
    if w.shape == d.shape:
        return w
    shape = [1] * d.ndim
    shape[axis] = w.shape[0]
    return w.reshape(shape)


def _as_view(a: Any) -> MaskedArray:
    """``np.ma.asanyarray(a)``: ``a`` itself if masked, else a masked view of it."""
    if isinstance(a, MaskedArray):
        return a
    return _masked_view(a)


def _function_form(method: Callable) -> Callable:
    """``np.ma.sum(a, ...)``, ``np.ma.max(a, ...)``: the method of ``np.ma.asanyarray(a)``."""
    def function_form(a: Any, *args: Any, **kwargs: Any) -> Any:
        return method(_as_view(a), *args, **kwargs)

    function_form.__qualname__ = f"masked {method.__name__} as a function"
    return function_form


def _masked_filled(self: MaskedArray, fill_value: Any = None) -> np.ndarray:
    d = _data(self)
    if np.ma.getmask(self) is np.ma.nomask:
        return d
    fill = self.fill_value if fill_value is None else fill_value
    result = np.where(np.ma.getmaskarray(self), fill, d)
    if result.dtype != d.dtype:
        result = result.astype(d.dtype)
    return result


def _filled(a: Any, fill_value: Any = None) -> Any:
    if isinstance(a, MaskedArray):
        return _masked_filled(a, fill_value)
    if isinstance(a, np.ndarray):
        return a
    return np.array(a)


def _masked_compressed(self: MaskedArray) -> np.ndarray:
    d = np.ravel(_data(self))
    if np.ma.getmask(self) is np.ma.nomask:
        return d
    return d[~np.ravel(np.ma.getmaskarray(self))]


def _compressed(x: Any) -> np.ndarray:
    if isinstance(x, MaskedArray):
        return _masked_compressed(x)
    return np.ravel(_data_of(x))


def _getdata(a: Any, subok: bool = True) -> np.ndarray:
    return _data_of(a)


def _masked_getitem(self: MaskedArray, index: Any) -> Any:
    like = _like(MaskedArray.__getitem__, self, index)
    if isinstance(index, MaskedArray):  # as NumPy reads a masked index: its data
        index = np.ma.getdata(index)
    return _finish(_data(self)[index], like)


def _dunder(op: Any, reflected: bool) -> Callable:
    """``m + n`` and ``n + m``: the numpy.ma function, as ``MaskedArray.__add__`` calls it."""
    if reflected:
        def masked_reflected(self: MaskedArray, other: Any) -> Any:
            return op(other, self)
        return masked_reflected

    def masked_operator(self: MaskedArray, other: Any) -> Any:
        return op(self, other)
    return masked_operator


# --------------------------------------------------------------------------------------------
# The table: numpy.ma's function or method -> its definition
# --------------------------------------------------------------------------------------------

_UNARY = ("sqrt", "exp", "log", "log10", "log2", "sin", "cos", "tan", "tanh", "sinh", "cosh", "arctan",
          "arcsin", "arccos", "absolute", "negative")
_BINARY = ("add", "subtract", "multiply", "true_divide", "divide", "hypot", "arctan2")
_DUNDERS = {"__add__": "add", "__sub__": "subtract", "__mul__": "multiply", "__truediv__": "true_divide"}
_MADE_FROM_FIRST = ("masked_invalid", "masked_greater", "masked_greater_equal", "masked_less", "masked_less_equal",
                    "masked_equal", "masked_not_equal", "masked_inside", "masked_outside", "masked_values",
                    "array", "asarray", "asanyarray")

_masked_view = _made_from(np.ma.asanyarray, 0)
_METHODS_AS_FUNCTIONS = ("sum", "mean", "var", "std", "max", "min")

DEFINITIONS: dict[Any, Callable] = {
    **{getattr(np.ma, name): _elementwise(getattr(np.ma, name), getattr(np, name)) for name in _UNARY + _BINARY},
    **{getattr(MaskedArray, name): _dunder(getattr(np.ma, op), False) for name, op in _DUNDERS.items()},
    **{getattr(MaskedArray, name.replace("__", "__r", 1)): _dunder(getattr(np.ma, op), True)
       for name, op in _DUNDERS.items()},
    **{getattr(np.ma, name): _made_from(getattr(np.ma, name), 0) for name in _MADE_FROM_FIRST},
    np.ma.masked_where: _made_from(np.ma.masked_where, 1),
    MaskedArray: _made_from(MaskedArray, 0),
    MaskedArray.sum: _masked_sum, MaskedArray.mean: _masked_mean, np.ma.average: _masked_average,
    MaskedArray.var: _masked_var, MaskedArray.std: _masked_std,
    MaskedArray.max: _extreme(MaskedArray.max, np.max, np.ma.maximum_fill_value),
    MaskedArray.min: _extreme(MaskedArray.min, np.min, np.ma.minimum_fill_value),
    np.ma.power: _masked_power, MaskedArray.__pow__: _dunder(np.ma.power, False),
    MaskedArray.__rpow__: _dunder(np.ma.power, True),
    MaskedArray.filled: _masked_filled, np.ma.filled: _filled,
    MaskedArray.compressed: _masked_compressed, np.ma.compressed: _compressed,
    np.ma.getdata: _getdata, MaskedArray.__getitem__: _masked_getitem, np.ma.median: _masked_median,
    **{getattr(np.ma, name): _function_form(getattr(MaskedArray, name)) for name in _METHODS_AS_FUNCTIONS},
}
for _target, _definition in DEFINITIONS.items():
    defined_as(_target, _definition)

#: questions about a masked array: no derivative
nondifferentiable(MaskedArray.mask.fget, MaskedArray.fill_value.fget, MaskedArray.shape.fget, MaskedArray.dtype.fget,
                  MaskedArray.hardmask.fget, MaskedArray.sharedmask.fget, MaskedArray.count, np.ma.count,
                  np.ma.maximum_fill_value, np.ma.minimum_fill_value,
                  MaskedArray.__eq__, MaskedArray.__ne__, MaskedArray.__lt__, MaskedArray.__le__,
                  MaskedArray.__gt__, MaskedArray.__ge__)

#: what may receive a masked array: the definitions above, their primitives, and functions of zero derivative
AWARE = {*DEFINITIONS, _data, _GET_DATA, _as_masked}  # (numpy_masked_forms.py adds its own)


# --------------------------------------------------------------------------------------------
# The refusal
# --------------------------------------------------------------------------------------------


def refuse_masked_arguments(fn: Any, args: tuple, kwargs: dict, primal_of: Callable[[Any], Any]) -> None:
    """Raise if a registered rule other than numpy.ma's would receive a masked array: as an
    argument (unless the rule only moves values: yuebing's own primitives, container methods, zero
    derivatives), or inside a list or tuple handed to a NumPy or SciPy function. Such a rule would
    ignore the mask."""
    if not MASKED_SEEN[0]:  # no masked array yet in this process
        return
    for a in args:  # (the common case, no masked array, in one pass without allocations)
        v = primal_of(a)
        tp = type(v)
        if tp in _PLAIN:
            continue
        if isinstance(v, MaskedArray) or tp in _SEQUENCES and any(isinstance(e, MaskedArray) for e in v):
            break
    else:
        if not kwargs:
            return
    values = [primal_of(a) for a in (*args, *kwargs.values())]
    direct = any(isinstance(v, MaskedArray) for v in values)
    if not direct and not any(type(v) in _SEQUENCES and any(isinstance(e, MaskedArray) for e in v) for v in values):
        return
    if _aware(fn) or direct and _moves_values(fn) or not direct and not _numerical(fn) or _passes_on(fn):
        return
    if fn is getattr and len(values) >= 2 and _plain_attribute(values[0], values[1]):
        return
    what = describe_callable(fn)
    if fn is getattr and len(values) >= 2:
        what = f"the attribute {values[1]!r} of a masked array"
    elif getattr(fn, "__name__", "") == "as_sequence":
        what = "a loop over (or the unpacking of) a masked array"
    elif (getattr(fn, "__module__", None) or "").startswith("yuebing"):
        raise RuleArgumentError(f"yuebing's {what} received a numpy.ma masked array, which it does not follow yet; "
                                "take the masked array's data and mask as plain arrays there: "
                                "np.where(m.mask, 0.0, m.data)")
    raise RuleArgumentError(f"{what}: {MASKED_ARRAYS}")


#: where NumPy's own functions send a masked argument (``numpy_masked_forms.py`` adds its finder)
FORM_FINDERS: list[Callable[[Any, list, dict], Any]] = []


def masked_form(fn: Any, args: tuple, kwargs: dict, primal_of: Callable[[Any], Any]) -> Callable | None:
    """The definition a call of a registered rule reaches instead when a masked array is among its
    positional arguments, as NumPy dispatches it (``np.sum(m)`` is ``m.sum()``), or None."""
    if not MASKED_SEEN[0]:  # no masked array yet in this process
        return None
    for a in args:  # (as refuse_masked_arguments: the common case in one pass without allocations)
        v = primal_of(a)
        if type(v) not in _PLAIN and (isinstance(v, MaskedArray) or type(v) in _SEQUENCES
                                      and any(isinstance(e, MaskedArray) for e in v)):
            break  # (a list of them: np.concatenate([m, x]), numpy_masked_joins.py)
    else:
        return None
    if _aware(fn):
        return None
    values = [primal_of(a) for a in args]
    for find in FORM_FINDERS:
        found = find(fn, values, kwargs)
        if found is not None:
            return found
    return None


def _passes_on(fn: Any) -> bool:
    """yuebing's helpers in the plain forward programs of third order that take a masked array as
    a value: ``jvp_call(f, f_t, ...)``, which calls ``f`` through the rules (each checked here in
    turn), the readers of globals and tangents (``np.ma.masked`` read, a masked global's tangent),
    and ``plain_data``, a generator expression's question whether its values are plain data."""
    return (getattr(fn, "__module__", None), getattr(fn, "__name__", None)) in _PASSING_ON


_PASSING_ON = frozenset({("yuebing.transform.plain_forward", "jvp_call"), ("yuebing.ir.primitives", "plain_data"),
                         *(("yuebing.transform.globals_and_cells", name) for name in ("read_only", "global_value")),
                         *(("yuebing.transform.forward_runtime", name)
                           for name in ("global_tangent", "zero_tangent_of", "cell_tangent"))})


def _aware(fn: Any) -> bool:
    try:
        return fn in AWARE or fn in ZERO_DERIVATIVE
    except TypeError:  # an unhashable callable
        return False


_CONTAINERS = (list, tuple, dict, set, frozenset, collections.deque)
_SEQUENCES = (list, tuple)
_PLAIN = frozenset({np.ndarray, float, int, bool, str, type(None), np.float64})  # (never masked: the fast exit)
#: yuebing's primitives that put values into a container (the ones that walk one, as_sequence, are refused)
_BUILDERS = frozenset({"mklist", "mktuple", "mkdict", "mkset", "cell_get", "cell_set", "global_get", "global_set"})
#: functions that take a masked array as a value to keep or compare, not to compute with
_MOVING = frozenset({operator.is_, operator.is_not, operator.contains, operator.getitem, operator.setitem, tuple,
                     operator.neg, operator.pos})  # (-m: NumPy negates all the data and keeps the mask)


def _moves_values(fn: Any) -> bool:
    if (getattr(fn, "__module__", None) or "").startswith("yuebing") and getattr(fn, "__name__", "") in _BUILDERS:
        return True
    owner = getattr(fn, "__self__", None)
    if type(owner) in _CONTAINERS or getattr(fn, "__objclass__", None) in _CONTAINERS:
        return True
    try:
        return fn in _MOVING
    except TypeError:
        return False


def _numerical(fn: Any) -> bool:
    module = getattr(fn, "__module__", None) or type(fn).__module__ or ""
    return module.split(".")[0] in ("numpy", "scipy", "math")


def _plain_attribute(owner: Any, name: Any) -> bool:
    """An attribute read that carries no float data (``m.ndim``, a bound method such as ``m.sum``)."""
    if not isinstance(owner, MaskedArray) or not isinstance(name, str):
        return False
    value = getattr(owner, name, None)
    if callable(value) or value is None:
        return True
    return not isinstance(value, (np.ndarray, float, complex, np.inexact))



def masked_method(owner: Any, name: Any) -> bool:
    """Whether ``getattr(owner, name)`` reads a method of masked array ``owner`` (second order: its
    tangent, a plain array, has other methods; the method's definition takes the owner's tangent)."""
    return isinstance(owner, MaskedArray) and isinstance(name, str) and callable(getattr(type(owner), name, None))


# --------------------------------------------------------------------------------------------
# Cases (finite data under the masks: check_rule moves every entry, the masked ones too)
# --------------------------------------------------------------------------------------------

_MASK = np.array([False, True, False, False, True, False])


def _masked(x: np.ndarray) -> MaskedArray:
    return np.ma.array(x, mask=_MASK[:x.shape[-1]] if x.ndim == 1 else np.resize(_MASK, x.shape))


CASES = [
    Case(MaskedArray.sum, _masked(randn(6))),
    Case(MaskedArray.sum, _masked(randn(3, 4)), kwargs={"axis": 0}, name="MaskedArray.sum(axis=0)"),
    Case(MaskedArray.mean, _masked(randn(3, 4)), kwargs={"axis": 1}, name="MaskedArray.mean(axis=1)"),
    Case(MaskedArray.filled, _masked(randn(6)), 0.5),
    Case(MaskedArray.compressed, _masked(randn(3, 4))),
    Case(MaskedArray.__getitem__, _masked(randn(6)), slice(1, 4), name="MaskedArray.__getitem__(slice)"),
    Case(MaskedArray.__getitem__, _masked(randn(6)), 2, name="MaskedArray.__getitem__(scalar)"),
    Case(MaskedArray.__mul__, _masked(randn(6)), randn(6)),
    Case(MaskedArray.__rtruediv__, _masked(randpos(6)), randn(6)),
    Case(np.ma.masked_where, randn(6) > 0.0, randn(6)),
    Case(np.ma.masked_less, randn(6), 0.0),
    Case(np.ma.array, randn(6), kwargs={"mask": _MASK}, name="np.ma.array(mask=)"),
    Case(np.ma.sqrt, _masked(randpos(6))),
    Case(np.ma.log, np.ma.masked_less(randn(6), 0.0)),
    Case(np.ma.average, _masked(randn(6)), kwargs={"weights": randpos(6)}, name="np.ma.average(weights=)"),
    Case(np.ma.getdata, _masked(randn(6))),
    Case(MaskedArray.var, _masked(randn(3, 4)), kwargs={"axis": 0, "ddof": 1}, name="MaskedArray.var(axis=0, ddof=1)"),
    Case(MaskedArray.std, _masked(randn(6))),
    Case(MaskedArray.max, _masked(randn(3, 4)), kwargs={"axis": 1}, name="MaskedArray.max(axis=1)"),
    Case(MaskedArray.min, _masked(randn(6))),
    Case(np.ma.median, _masked(randn(6))),
    Case(np.ma.power, _masked(randpos(6)), randn(6)),
    Case(MaskedArray.__rpow__, _masked(randn(6)), 1.5),
    Case(np.ma.filled, _masked(randn(6)), 0.0),
]
