"""Second order of ``np.vectorize(pyfunc)(x)`` on a float64 array: one dual call per element.

The general rule (``second_order._call_vectorized``) differentiates ``vectorized_call``, the same
computation written as a comprehension over ``x.ravel().tolist()``: per element, a list read, the
call and a list append, each through a rule (the lists' tangents and fdata walked each time).
When ``x`` is a float64 array with a tangent of its shape, this module calls ``pyfunc``'s dual
rule on each element's ``(value, tangent)`` directly, gathers the outputs and their tangents into
arrays, and its pullback sends each element's cotangent and its tangent back through that
element's dual pullback, last element first. What ``pyfunc`` captures gathers its cotangents in
its closure's boxes, as in the general rule (whose pullback drops ``pyfunc``'s rdata too).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..rules.core import CoDual
from ..rules.util import out_cotangent
from ..tangents import NoFData, NoRData

_ND, _F64 = np.ndarray, np.dtype(np.float64)
_FLOAT_TYPES = (float, np.float64)


def over_elements(vec: np.vectorize, pyfunc: tuple, arg: tuple, call: Callable) -> tuple | None:
    """``(output 4-tuple, dual pullback)`` of ``vec(x)``, or None when the general rule is needed.
    ``call`` is the dual call (``second_order.call_rrule2``)."""
    x, x_f, x_d, x_fd = arg
    if vec.excluded or vec.otypes not in (None, "d"):
        return None
    if type(x) is not _ND or x.dtype != _F64 or not x.size or type(x_d) is not _ND or x_d.shape != x.shape \
            or x_d.dtype != _F64:
        return None
    ys, y_ds, pullbacks = [], [], []
    for v, t in zip(x.ravel().tolist(), x_d.ravel().tolist()):
        out, pullback = call(pyfunc, (v, NoFData, t, NoFData))
        pullbacks.append(pullback)
        if type(out[0]) not in _FLOAT_TYPES or type(out[2]) not in _FLOAT_TYPES:
            for done in reversed(pullbacks):  # not a float function: undo, and take the general rule
                done(NoRData, NoRData)
            return None
        ys.append(out[0])
        y_ds.append(out[2])
    y = np.array(ys).reshape(x.shape)
    result = (y, np.zeros(x.shape), np.array(y_ds).reshape(x.shape), np.zeros(x.shape))

    def vectorized_pullback(dy: Any, dy_d: Any) -> tuple:
        g = out_cotangent(CoDual(y, result[1]), dy).ravel().tolist()
        g_d = out_cotangent(CoDual(y, result[3]), dy_d).ravel().tolist()
        rs, rsd = [0.0] * len(g), [0.0] * len(g)
        for k in reversed(range(len(g))):
            r, rd = pullbacks[k](g[k], g_d[k])
            rs[k] = 0.0 if r[1] is NoRData else r[1]
            rsd[k] = 0.0 if rd[1] is NoRData else rd[1]
        for fdata, values in ((x_f, rs), (x_fd, rsd)):
            if type(fdata) is _ND:
                fdata += np.array(values).reshape(x.shape)
        return (NoRData, NoRData), (NoRData, NoRData)

    return result, vectorized_pullback
