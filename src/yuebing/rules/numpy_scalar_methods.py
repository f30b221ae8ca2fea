"""Methods of NumPy scalars (``np.float64``, ``np.complex128``, ...): ``loss.item()``,
``np.sum(x).astype(np.float32)``, ``s.round(3)``, ``s.reshape(1)``.

A NumPy scalar has the methods of a 0-d array. Each differentiable one is defined, in every mode,
as the same method of ``np.asarray(s)`` (whose rules exist), with a 0-d result turned back into a
scalar as NumPy's scalar methods return it. The methods that return integers (``argmax``,
``nonzero``...) have a zero derivative; the ones that write in place or reinterpret memory are
left without a rule, so they raise ``MissingRuleError``.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .cases import Case, randc, randn
from .declare import nondifferentiable_methods
from .second_order import defined_as

#: methods whose value is the 0-d array method's, scalars for 0-d results
_DIFFERENTIABLE = (
    "astype", "choose", "clip", "compress", "conj", "conjugate", "copy", "cumprod", "cumsum", "flatten",
    "item", "max", "mean", "min", "prod", "ravel", "repeat", "reshape", "round", "squeeze", "std", "sum",
    "swapaxes", "take", "tolist", "transpose", "var",
)

#: methods with integer, boolean or text results
_ZERO = ("argmax", "argmin", "argsort", "nonzero", "searchsorted", "tobytes", "dumps")


def _scalar_of(value: Any) -> Any:
    """A 0-d array as the scalar NumPy's scalar methods return; anything else as it is."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value[()]
    return value


def _as_array_method(name: str) -> Callable:
    def method(scalar, *args, **kwargs):
        return _scalar_of(getattr(np.asarray(scalar), name)(*args, **kwargs))

    method.__qualname__ = method.__name__ = f"generic_{name}"
    return method


for _name in _DIFFERENTIABLE:
    defined_as((np.generic, _name), _as_array_method(_name))
nondifferentiable_methods(np.generic, *_ZERO)


def _s() -> np.float64:
    return np.float64(randn())


CASES = [
    Case(np.float64.item, _s()),
    Case(np.float64.sum, _s()),
    Case(np.float64.astype, _s(), np.float64, name="float64.astype(float64)"),
    Case(np.float64.round, _s(), 2, name="float64.round(2)"),
    Case(np.float64.reshape, _s(), (1, 1), name="float64.reshape((1, 1))"),
    Case(np.float64.clip, _s(), -0.5, 0.5, name="float64.clip"),
    Case(np.float64.mean, _s()),
    Case(np.float64.tolist, _s()),
    Case(np.complex128.conjugate, np.complex128(randc())),
    Case(np.complex128.item, np.complex128(randc())),
]
