"""``np.vectorize(pyfunc)``: the object carries ``pyfunc``'s derivative data.

A function given to ``np.vectorize`` is often a lambda over the function's own variables
(``np.vectorize(lambda v: np.sin(v * a))``). Its derivative data -- a closure's fdata holds one
box per captured variable, where cotangents accumulate; its tangent, the captured values'
tangents -- becomes the vectorize object's, in every mode. Calling the object is each runtime's
``vectorized`` handler (``transform/runtime.py``, ``forward_runtime.py``, ``second_order.py``): it
reads ``pyfunc``'s data back with ``pyfunc_fdata`` / ``pyfunc_tangent``, so the captured
variables get their derivatives through the closure, as for any call of ``pyfunc``.

An object made outside the differentiated function (passed in, or a global) has the structural
tangent of a ``vectorize`` instance instead: its ``pyfunc`` is then a constant, as it was made.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..tangents import NoFData, NoRData, NoTangent
from ..tangents.types import MutableTangent, Tangent
from .core import CoDual, Dual, primal, register_frule, register_rrule
from .second_order import _register as _second_order_rule


def _made_elsewhere(data: Any) -> bool:
    """Whether ``data`` is a vectorize instance's own structural tangent (the object was not
    made by the rules below, so it holds no ``pyfunc`` data)."""
    return isinstance(data, (Tangent, MutableTangent)) and getattr(data, "primal_type", None) is np.vectorize


def pyfunc_fdata(vec_fdata: Any) -> Any:
    """The fdata of the ``pyfunc`` of a vectorize object whose fdata is ``vec_fdata``."""
    return NoFData if _made_elsewhere(vec_fdata) else vec_fdata


def pyfunc_tangent(vec_tangent: Any) -> Any:
    """The tangent of the ``pyfunc`` of a vectorize object whose tangent is ``vec_tangent``."""
    return NoTangent if _made_elsewhere(vec_tangent) else vec_tangent


def _make(pyfunc: Any, rest: tuple, kwargs: dict) -> np.vectorize:
    return np.vectorize(pyfunc, *(primal(r) for r in rest), **{k: primal(v) for k, v in kwargs.items()})


def _vectorize_rrule(pyfunc: CoDual, *rest: Any, **kwargs: Any) -> tuple[CoDual, Callable]:
    """The object's fdata is ``pyfunc``'s (shared: a closure's boxes collect the cotangents of
    what it captures when the object is called), so nothing comes back through this pullback."""
    n = 1 + len(rest) + len(kwargs)
    return CoDual(_make(pyfunc.primal, rest, kwargs), pyfunc.fdata), lambda dy: (NoRData,) * (n + 1)


def _vectorize_frule(pyfunc: Dual, *rest: Any, **kwargs: Any) -> Dual:
    return Dual(_make(pyfunc.primal, rest, kwargs), pyfunc.tangent)


def _vectorize_second_order(f4: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    """``(object, fdata, tangent, fdata tangent)``: ``pyfunc``'s own three."""
    pyfunc = args[0]
    vec = np.vectorize(pyfunc[0], *(a[0] for a in args[1:]), **{k: v[0] for k, v in kwargs.items()})
    none = (NoRData,) * (1 + len(args) + len(kwargs))
    return (vec, pyfunc[1], pyfunc[2], pyfunc[3]), lambda dy, dy_d: (none, none)


register_rrule(np.vectorize, _vectorize_rrule)
register_frule(np.vectorize, _vectorize_frule)
_second_order_rule((np.vectorize,), _vectorize_second_order)

__all__ = ["pyfunc_fdata", "pyfunc_tangent"]
