"""numpy.ma masked arrays reaching NumPy's own functions, and more of their methods (issue 13).

NumPy hands a masked array to numpy.ma itself: ``np.sum(m)`` calls ``m.sum()`` (its reductions
call the method of any array that is not a plain ndarray), ``np.sin(m)`` runs the ufunc on the
data and ``MaskedArray.__array_wrap__`` puts the mask back (masking, and filling with the ufunc's
fill value, what is outside the ufunc's domain), ``for v in m`` and ``sum(m)`` walk ``m[0]``,
``m[1]``... Each is defined here as NumPy computes it, over the definitions and primitives of
``numpy_masked.py``; ``_form_of`` tells the dispatch which definition a call reaches
(``transform/protocols.py`` asks it before refusing a masked argument). New methods: ``prod``,
``cumsum``, ``cumprod``, ``transpose`` and ``m.T``, ``reshape``, ``ravel``, ``anom``; and the
writes that keep the mask (``m[i] = v``, ``m += n``): NumPy changes a mask in place, which
earlier operations may still read (a ``np.where`` of it saved for the reverse pass), so a write
that would change it is refused. ``np.ma.atleast_1d/2d/3d``; and products and solves that would
ignore a mask (``np.dot``, ``np.linalg.solve``, ``scipy.linalg.cholesky``...: ``_pure_on_data``)
given masked arrays none of whose entries is masked, which they compute on the data (pykalman
keeps its observations in a masked array, masked only where one is missing).
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from ..ir.primitives import as_sequence
from .cases import Case, randn, randpos
from .core import RuleArgumentError
from .declare import nondifferentiable
from ..tangents.kinds import MASKED_ARRAYS
from .numpy_masked import (AWARE, DEFINITIONS, FORM_FINDERS, MaskedArray, _data, _data_of, _finish, _function_form,
                           _like, _made_from, _masked, _no_out)
from .second_order import defined_as

# --------------------------------------------------------------------------------------------
# Helpers without derivative
# --------------------------------------------------------------------------------------------


def _options(parameters: tuple, args: tuple, kwargs: dict) -> dict:
    """The keywords NumPy passes on to the method (those given, by name): never float data,
    which would lose its derivative here."""
    options = dict(zip(parameters, args))
    options.update(kwargs)
    for name, value in options.items():
        if isinstance(value, (float, complex, np.inexact)) or isinstance(value, np.ndarray) and value.dtype.kind in "fc":
            raise RuleArgumentError(f"numpy.ma: yuebing does not differentiate {name}= of a NumPy function given a "
                                    "masked array; call the masked array's method without it")
    return {name: value for name, value in options.items() if value is not np._NoValue}


def _outside_domain(f: np.ufunc, *operands: Any) -> Any:
    """Where ``MaskedArray.__array_wrap__`` masks ``f``'s result for its domain (False if none)."""
    domain = np.ma.core.ufunc_domain.get(f)
    if domain is None:
        return False
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.ma.filled(domain(*operands).astype(bool, copy=False), True)


def _domain_fill(f: np.ufunc) -> Any:
    """The value ``__array_wrap__`` writes outside ``f``'s domain (a binary ufunc's: the last)."""
    fill = np.ma.core.ufunc_fills.get(f, 0)
    return fill[-1] if isinstance(fill, tuple) else fill


nondifferentiable(_options, _outside_domain, _domain_fill)


# --------------------------------------------------------------------------------------------
# NumPy's functions given a masked array
# --------------------------------------------------------------------------------------------


def _numpy_method(fn: Callable, name: str) -> Callable:
    """``np.sum(m, ...)``: NumPy calls ``m.sum`` with the keywords given (as ``_wrapreduction`` does)."""
    parameters = tuple(inspect.signature(fn).parameters)[1:]

    def numpy_form(a: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(a, name)(**_options(parameters, args, kwargs))

    numpy_form.__qualname__ = f"{fn.__name__} of a masked array"
    return numpy_form


def _numpy_ufunc(f: np.ufunc) -> Callable:
    """``np.sin(m)``: ``f`` on the data, masked where an operand is or where ``f`` leaves its
    domain, the ufunc's fill value there (the strong zero keeps ``f``'s undefined partials out)."""
    def numpy_ufunc(*operands: Any) -> Any:
        like = _like(f, *operands)
        outside = _outside_domain(f, *operands)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            computed = f(*[_data_of(a) for a in operands])
        return _finish(np.where(outside, _domain_fill(f), computed), like)

    numpy_ufunc.__qualname__ = f"{f.__name__} of a masked array"
    return numpy_ufunc


def _masked_rows(self: MaskedArray) -> list:
    """``for v in m``: its items ``m[0]``, ``m[1]``... (``np.ma.masked`` where masked)."""
    return [self[i] for i in range(self.shape[0])]


def _sum_of_items(self: MaskedArray, start: Any = 0) -> Any:
    """``sum(m)``: Python adds the items one by one (a masked one makes the total masked)."""
    total = start
    for item in _masked_rows(self):
        total = total + item
    return total


_METHODS_OF = {np.sum: "sum", np.mean: "mean", np.var: "var", np.std: "std", np.max: "max", np.amax: "max",
               np.min: "min", np.amin: "min", np.prod: "prod", np.cumsum: "cumsum", np.cumprod: "cumprod",
               np.transpose: "transpose", np.ravel: "ravel"}
_FORMS: dict[Any, Callable] = {fn: _numpy_method(fn, name) for fn, name in _METHODS_OF.items()}
_FORMS[as_sequence] = _masked_rows
_FORMS[sum] = _sum_of_items
_UFUNCS: dict[np.ufunc, Callable] = {}


def _form_of(fn: Any, values: list, kwargs: dict) -> Callable | None:
    """The definition a call of NumPy's ``fn`` reaches when its first argument is a masked array
    (as NumPy dispatches it), or None."""
    if not values or not isinstance(values[0], MaskedArray) and not (
            isinstance(fn, np.ufunc) and any(isinstance(v, MaskedArray) for v in values)):
        return None
    try:
        found = _FORMS.get(fn)
    except TypeError:  # an unhashable callable
        return None
    if found is None and isinstance(fn, np.ufunc) and fn.nout == 1 and len(values) == fn.nin and not kwargs:
        found = _UFUNCS.get(fn)
        if found is None:
            found = _UFUNCS[fn] = _numpy_ufunc(fn)
    return found


FORM_FINDERS.append(_form_of)


def _on_unmasked_data(fn: Callable) -> Callable:
    """NumPy's or SciPy's ``fn`` (``np.dot``, ``np.linalg.solve``...) given masked arrays none of
    whose entries is masked: ``fn`` of their data, returned as NumPy returns it (a masked array
    with its mask, or a plain result). A mask it would ignore is all False, so nothing is lost.
    (``fn`` runs twice, once to see NumPy's result: only pure functions, ``_PURE_ON_DATA``.)"""
    def on_unmasked_data(*args: Any, **kwargs: Any) -> Any:
        like = _like(fn, *args, **kwargs)
        if not like.scalar and np.any(like.mask):
            raise RuleArgumentError(f"{fn.__name__}: {MASKED_ARRAYS}")
        return _finish(fn(*[_data_of(a) if isinstance(a, MaskedArray) else a for a in args], **kwargs), like)

    on_unmasked_data.__qualname__ = f"{fn.__name__} of a masked array with nothing masked"
    return on_unmasked_data


_ON_UNMASKED: dict[Any, Callable] = {}


def _pure_on_data() -> frozenset:
    """The products, solves and factorizations of one result that pykalman's filters apply to
    masked observations; pure, so running them twice changes nothing."""
    numpy_ones = {np.dot, np.vdot, np.inner, np.outer, np.tensordot, np.kron, np.trace, np.diagonal, np.diag,
                  np.linalg.solve, np.linalg.inv, np.linalg.pinv, np.linalg.det, np.linalg.cholesky}
    try:
        import scipy.linalg as sl
    except ImportError:  # pragma: no cover - SciPy is optional
        return frozenset(numpy_ones)
    return frozenset(numpy_ones | {sl.solve, sl.inv, sl.pinv, sl.det, sl.cholesky, sl.solve_triangular})


_PURE_ON_DATA: list[frozenset] = []


def _unmasked_form_of(fn: Any, values: list, kwargs: dict) -> Callable | None:
    """The definition of a pure NumPy or SciPy function (``_pure_on_data``) called with masked
    arrays none of whose entries is masked, or None (then refused)."""
    if not _PURE_ON_DATA:
        _PURE_ON_DATA.append(_pure_on_data())
    try:
        if fn not in _PURE_ON_DATA[0]:
            return None
    except TypeError:  # an unhashable callable
        return None
    masked = [v for v in values if isinstance(v, MaskedArray)]
    if not masked or any(np.ma.getmaskarray(m).any() for m in masked) or any(
            isinstance(v, MaskedArray) for v in kwargs.values()):
        return None
    found = _ON_UNMASKED.get(fn)
    if found is None:
        found = _ON_UNMASKED[fn] = _on_unmasked_data(fn)
    return found


FORM_FINDERS.append(_unmasked_form_of)

# --------------------------------------------------------------------------------------------
# More methods
# --------------------------------------------------------------------------------------------


def _filled_with(self: MaskedArray, value: float) -> np.ndarray:
    return np.where(np.ma.getmaskarray(self), value, _data(self))


def _masked_prod(self: MaskedArray, axis: Any = None, dtype: Any = None, out: Any = None,
                 keepdims: Any = np._NoValue) -> Any:
    """``m.prod()``: the product of the data with masked entries 1 (a slice all masked: masked, 1)."""
    _no_out(out, "prod")
    like = _like(MaskedArray.prod, self, axis, dtype, None, keepdims)
    filled = _filled_with(self, 1)
    if keepdims is np._NoValue:
        return _finish(np.prod(filled, axis=axis, dtype=dtype), like)
    return _finish(np.prod(filled, axis=axis, dtype=dtype, keepdims=keepdims), like)


def _cumulative(method: Callable, accumulate: Callable, neutral: float) -> Callable:
    """``m.cumsum()``, ``m.cumprod()``: of the data with masked entries ``neutral``; the mask kept."""
    def cumulative(self: MaskedArray, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
        _no_out(out, method.__name__)
        like = _like(method, self, axis, dtype)
        return _finish(accumulate(_filled_with(self, neutral), axis=axis, dtype=dtype), like)

    cumulative.__qualname__ = f"masked {method.__name__}"
    return cumulative


def _shaped(method: Callable, name: str) -> Callable:
    """``m.transpose()``, ``m.reshape(...)``, ``m.ravel()``: the same method of the data, the mask as NumPy makes it."""
    def shaped(self: MaskedArray, *args: Any, **kwargs: Any) -> Any:
        like = _like(method, self, *args, **kwargs)
        return _finish(getattr(_data(self), name)(*args, **kwargs), like)

    shaped.__qualname__ = f"masked {name}"
    return shaped


def _masked_T(self: MaskedArray) -> Any:
    return self.transpose()


def _masked_anom(self: MaskedArray, axis: Any = None, dtype: Any = None) -> Any:
    """``m.anom(axis)``: ``m`` less its mean along ``axis``, as NumPy writes it."""
    mean = self.mean(axis, dtype)
    if not axis:
        return self - mean
    return self - mean.reshape(_expanded(mean.shape, axis))


def _expanded(shape: tuple, axis: int) -> tuple:
    """``shape`` with a 1 inserted at ``axis`` (``np.expand_dims``'s)."""
    axis = axis % (len(shape) + 1)
    return shape[:axis] + (1,) + shape[axis:]


nondifferentiable(_expanded)


# --------------------------------------------------------------------------------------------
# Writes: the data written, the mask as it was (a write that would change the mask is refused:
# NumPy changes it in place, under what earlier operations read from it)
# --------------------------------------------------------------------------------------------


def _write_keeps_mask(self: MaskedArray, index: Any, value: Any) -> bool:
    """Whether ``m[index] = value`` leaves the mask as it is: NumPy gives the entries written the
    value's mask (unmasked for a plain value), the hard mask of ``m.harden_mask()`` excepted."""
    mask = np.ma.getmaskarray(self)
    if self.hardmask or value is np.ma.masked or isinstance(index, MaskedArray):
        return False
    written = np.broadcast_to(np.ma.getmaskarray(value), np.shape(mask[index]))
    return bool(np.array_equal(mask[index], written))


def _update_keeps_mask(self: MaskedArray, other: Any) -> bool:
    """Whether ``m += n`` leaves ``m``'s mask as it is (``n`` masks no entry ``m`` does not)."""
    added = np.ma.getmask(other)
    if added is np.ma.nomask or self.hardmask:
        return added is np.ma.nomask
    return not np.any(np.broadcast_to(added, self.shape) & ~np.ma.getmaskarray(self))


nondifferentiable(_write_keeps_mask, _update_keeps_mask)

_MASK_CHANGED = ("numpy.ma: yuebing differentiates a write into a masked array that leaves its mask as it is ({}); "
                 "this one would change the mask, which NumPy does in place: make a new masked array instead, "
                 "np.ma.array(np.where(selected, new, m.data), mask=new_mask)")


def _masked_setitem(self: MaskedArray, index: Any, value: Any) -> None:
    """``m[i] = v``: ``v``'s data written into ``m``'s data (a view of it)."""
    if not _write_keeps_mask(self, index, value):
        raise RuleArgumentError(_MASK_CHANGED.format("m[i] = v where m[i] is not masked, v a plain value"))
    data = _data(self)
    data[index] = _data_of(value)


def _updated(name: str, neutral: float, update: Callable) -> Callable:
    """``m += n``, ``m -= n``, ``m *= n``: ``m``'s data updated where ``m`` is not masked (NumPy
    uses ``neutral`` for ``n`` under ``m``'s mask); ``m`` itself returned."""
    def updated(self: MaskedArray, other: Any) -> MaskedArray:
        if not _update_keeps_mask(self, other):
            raise RuleArgumentError(_MASK_CHANGED.format(f"m {name} n where n masks no entry m does not"))
        update(_data(self), np.where(np.ma.getmaskarray(self), neutral, _data_of(other)))
        return self

    updated.__qualname__ = f"masked {name}"
    return updated


def _add_into(data: np.ndarray, other: Any) -> None:
    data += other


def _subtract_from(data: np.ndarray, other: Any) -> None:
    data -= other


def _multiply_into(data: np.ndarray, other: Any) -> None:
    data *= other


FORM_DEFINITIONS: dict[Any, Callable] = {
    MaskedArray.__setitem__: _masked_setitem, MaskedArray.__iadd__: _updated("+=", 0.0, _add_into),
    MaskedArray.__isub__: _updated("-=", 0.0, _subtract_from), MaskedArray.__imul__: _updated("*=", 1.0, _multiply_into),
    MaskedArray.prod: _masked_prod,
    MaskedArray.cumsum: _cumulative(MaskedArray.cumsum, np.cumsum, 0),
    MaskedArray.cumprod: _cumulative(MaskedArray.cumprod, np.cumprod, 1),
    MaskedArray.transpose: _shaped(MaskedArray.transpose, "transpose"),
    MaskedArray.reshape: _shaped(MaskedArray.reshape, "reshape"),
    MaskedArray.ravel: _shaped(MaskedArray.ravel, "ravel"),
    MaskedArray.T.fget: _masked_T, MaskedArray.anom: _masked_anom,
}
FORM_DEFINITIONS.update({getattr(np.ma, name): _function_form(getattr(MaskedArray, name))
                         for name in ("prod", "cumsum", "cumprod", "anom")})
FORM_DEFINITIONS.update({getattr(np.ma, name): _made_from(getattr(np.ma, name), 0)
                         for name in ("atleast_1d", "atleast_2d", "atleast_3d")})  # (one array: pykalman's)
for _target, _definition in FORM_DEFINITIONS.items():
    defined_as(_target, _definition)
DEFINITIONS.update(FORM_DEFINITIONS)
AWARE.update(FORM_DEFINITIONS)


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------

CASES = [
    Case(MaskedArray.prod, _masked(randpos(6))),
    Case(MaskedArray.prod, _masked(randn(3, 4)), kwargs={"axis": 1}, name="MaskedArray.prod(axis=1)"),
    Case(MaskedArray.cumsum, _masked(randn(6))),
    Case(MaskedArray.cumprod, _masked(randn(3, 4)), kwargs={"axis": 0}, name="MaskedArray.cumprod(axis=0)"),
    Case(MaskedArray.transpose, _masked(randn(3, 4))),
    Case(MaskedArray.reshape, _masked(randn(3, 4)), (4, 3)),
    Case(MaskedArray.anom, _masked(randn(3, 4)), 0, name="MaskedArray.anom(0)"),
]
