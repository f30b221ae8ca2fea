"""Helpers shared by rule files: creating outputs, reading output cotangents, delivering
cotangents to arguments (with broadcasting undone), and forward-mode tangents of arguments.

Conventions (see ``core.py``): an argument is a ``CoDual``/``Dual`` or, for parameters the call
did not pass, a plain default value. ``NoRData`` is a valid zero rdata for any primal, and
``NoTangent`` a valid zero tangent in forward mode.
"""
from __future__ import annotations

import types
from typing import Any, Callable

import numpy as np

from ..tangents import NoFData, NoRData, NoTangent, Tangent, fdata, increment, join, rdata, zero_tangent
from ..tangents import structured
from .core import CoDual, Dual, primal


def holds_float_data(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` holds float data whose derivative an object-dtype array would drop: a
    float or complex number, a float array, or an object array, list or tuple with one inside, a
    function whose closure holds one (``lambda x: x * t[0]``), an object whose attributes do
    (nested up to 8 deep). Labels (None, strings, ints, int arrays, lists of them, functions
    without closures) hold none. The one test for a new object array and for a write into one."""
    if isinstance(value, (float, complex, np.inexact)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "fc" or value.dtype.kind == "O" and any(holds_float_data(v, depth + 1) for v in value.flat)
    if isinstance(value, (list, tuple)) and depth < 8:
        return any(holds_float_data(v, depth + 1) for v in value)
    if isinstance(value, types.FunctionType) and depth < 8:
        return any(_cell_holds_float_data(cell, depth + 1) for cell in value.__closure__ or ())
    if depth < 8 and not isinstance(value, (type, types.ModuleType)) and isinstance(getattr(value, "__dict__", None), dict):
        return any(holds_float_data(v, depth + 1) for v in vars(value).values())
    return False


def _cell_holds_float_data(cell: Any, depth: int) -> bool:
    try:
        contents = cell.cell_contents
    except ValueError:  # an empty cell, filled later: it may come to hold anything
        return True
    return holds_float_data(contents, depth)


def refuse_object_array_of_numbers(y: np.ndarray) -> None:
    """An object-dtype array holding float data (``dtype=object``, ``astype(object)``) has no
    tangent: its elements' derivatives would be dropped, so it is refused."""
    if holds_float_data(y):
        from .core import RuleArgumentError

        raise RuleArgumentError(
            "yuebing cannot follow derivatives through an object-dtype array of numbers (dtype=object, "
            "astype(object)): keep a float array (drop dtype=object) or use a list")


def refuse_numbers_into_object_array(name: str, target: Any, value: Any) -> None:
    """Writing float data into an object-dtype array (``a = np.empty(n, dtype=object); a[0] = x``)
    would store the float without its derivative (such an array has no tangent here: object
    arrays holding floats are differentiated by ``object_arrays.py``'s own rules), so it is
    refused. Reverse mode cannot tell a constant float from a differentiated one: both are."""
    if type(target) is np.ndarray and target.dtype.kind == "O" and holds_float_data(primal(value)):
        from .core import RuleArgumentError

        raise RuleArgumentError(
            f"{name}: yuebing cannot follow derivatives through an object-dtype array (dtype=object): "
            "writing float data into one would drop its derivative; keep the numbers in a float array "
            "(np.zeros(n)) or a list")


# How a rule makes the zero fdata of a new float array: ``transform/buffers.py`` fills this hook in
# with its pool (a large fresh array costs more in page faults on first touch than the arithmetic
# done on it); rules cannot import the transform layer.
ZEROS_LIKE: Callable[[np.ndarray], np.ndarray] = np.zeros_like
# ... and an uninitialised new array a rule writes whole (``np.empty(shape, dtype)``); ``POOLED(a)``:
# 1 if array ``a`` is such a buffer, which the pool refers to once more until it is swept back
EMPTY: Callable[[Any, Any], np.ndarray] = np.empty
POOLED: Callable[[Any], int] = lambda a: 0


def zero_fdata(y: Any) -> Any:
    """The zero fdata of a freshly created value ``y``."""
    if type(y) is np.ndarray:
        if y.dtype.kind in "fc":
            return ZEROS_LIKE(y)
        if y.dtype.kind == "O":
            refuse_object_array_of_numbers(y)
        if structured.carries_derivative(y):  # its tangent: the same dtype (tangents/structured.py)
            return structured.zeros_like(y)
        return NoFData
    if isinstance(y, (float, complex, int, np.number, np.bool_, str)) or y is None:
        return NoFData
    return fdata(zero_tangent(y))


def output(y: Any) -> CoDual:
    """A codual for a freshly created result ``y`` (zero fdata)."""
    return CoDual(y, zero_fdata(y))


def out_cotangent(out: CoDual, rdata: Any) -> Any:
    """The cotangent of an output: its fdata for arrays, the incoming rdata for numbers."""
    f = out.fdata
    if type(f) is np.ndarray:
        return f
    if f is NoFData:
        if rdata is not NoRData:
            return rdata
        # An integer/bool array output has no cotangent; a zero of its shape keeps the rules'
        # shape arithmetic (np.diagonal(g, k), g.reshape, g[i]) valid where a bare 0.0 is not.
        return np.zeros(out.primal.shape) if isinstance(out.primal, np.ndarray) else 0.0
    return join(f, rdata)


def unbroadcast(g: Any, shape: tuple) -> Any:
    """Sum ``g`` over the axes that broadcasting added or stretched to reach ``g``'s shape."""
    g_shape = np.shape(g)
    if g_shape == shape:
        return g
    extra = len(g_shape) - len(shape)
    if extra > 0:
        g = np.sum(g, axis=tuple(range(extra)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and np.shape(g)[i] != 1)
    if stretched:
        g = np.sum(g, axis=stretched, keepdims=True)
    return g


def is_differentiable(x: Any) -> bool:
    """Whether primal ``x`` is a float/complex number or a float/complex array."""
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "fc"
    return isinstance(x, (float, complex, np.floating, np.complexfloating))


def accumulate(arg: Any, g: Any) -> Any:
    """Deliver cotangent ``g`` (shaped like a broadcast result) to argument ``arg``.

    Arrays are incremented in place in the argument's fdata and give ``NoRData``; numbers give
    their rdata (``g`` summed over broadcast axes). Non-differentiable arguments give ``NoRData``.
    """
    if not isinstance(arg, CoDual):
        return NoRData
    x = arg.primal
    if isinstance(x, (np.ndarray, np.void)) and structured.carries_derivative(x):
        if arg.fdata is not NoFData:  # field by field (a record: into its view of the array's tangent)
            add_cotangent(arg.fdata, x, g)
        return NoRData
    if type(x) is np.ndarray or isinstance(x, np.ndarray):
        if x.dtype.kind not in "fc" or arg.fdata is NoFData:
            return NoRData
        g = unbroadcast(g, x.shape)
        if x.dtype.kind == "f" and np.iscomplexobj(g):
            g = np.real(g)
        arg.fdata += g
        return NoRData
    if isinstance(x, (float, np.floating)):
        total = np.sum(g) if np.ndim(g) else g
        return float(np.real(total))
    if isinstance(x, (complex, np.complexfloating)):
        return complex(np.sum(g) if np.ndim(g) else g)
    if isinstance(x, (list, tuple)) and arg.fdata is not NoFData and _carries_floats(x):
        from .core import RuleArgumentError

        raise RuleArgumentError(
            f"a rule received a {type(x).__name__} where it differentiates an array; "
            "convert it with np.asarray first"
        )
    return NoRData


def _carries_floats(x: Any) -> bool:
    """Whether a list or tuple holds float data (ints alone carry no derivative)."""
    from .array_like import carries_floats

    return carries_floats(x)


def tangent(arg: Any) -> Any:
    """The tangent of a forward-mode argument (``NoTangent`` for plain defaults)."""
    return arg.tangent if isinstance(arg, Dual) else NoTangent


def fit_tangent(dy: Any, y: Any) -> Any:
    """Shape a computed tangent like primal ``y``: same type, shape and dtype."""
    if structured.carries_derivative(y):  # a structured array or record (tangents/structured.py)
        return structured.zeros_like(y) if dy is NoTangent else dy
    if isinstance(y, np.ndarray):
        if y.dtype.kind == "O":
            refuse_object_array_of_numbers(y)
        if y.dtype.kind not in "fc":
            return NoTangent
        if dy is NoTangent:
            return np.zeros_like(y)
        dy = np.broadcast_to(dy, y.shape)
        if y.dtype.kind == "f" and np.iscomplexobj(dy):
            dy = np.real(dy)
        return np.array(dy, dtype=y.dtype)
    if isinstance(y, (float, np.floating)):
        return 0.0 if dy is NoTangent else float(np.real(dy))
    if isinstance(y, (complex, np.complexfloating)):
        return 0j if dy is NoTangent else complex(dy)
    if isinstance(y, (int, np.integer, np.bool_)):  # an int result (nan_to_num of an int) has none
        return NoTangent
    return NoTangent if dy is NoTangent else dy


def slot_tangent(arg: Any) -> Any:
    """The full tangent to store for argument ``arg`` in a container's tangent (a list slot,
    a dict value, an object field): mutable parts are the argument's own fdata objects (aliasing),
    value parts start at zero and accumulate there."""
    if not isinstance(arg, CoDual):
        return zero_tangent(arg)
    x, f = arg.primal, arg.fdata
    if f is NoFData:
        if isinstance(x, float):
            return 0.0
        return zero_tangent(x)
    if type(f) is np.ndarray or isinstance(f, (list, dict)):
        return f
    return join(f, rdata(zero_tangent(x)))


def slot_rdata(t: Any, primal: Any = None) -> Any:
    """The rdata part of a tangent stored in a container slot (see ``slot_tangent``); with the
    slot's ``primal``, a number's slot in a batched second-order pass (one value per direction,
    an array) is read as the rdata it is, not as an array's fdata."""
    if isinstance(t, float) or type(t) is np.ndarray and isinstance(primal, (float, complex)):
        return t
    if isinstance(t, tuple) and isinstance(primal, tuple) and len(t) == len(primal) \
            or type(t) is Tangent and primal is not None:
        return _parts_rdata(t, primal)
    return rdata(t)


def _parts_rdata(t: Any, primal: Any) -> Any:
    """``slot_rdata`` of a tuple's or an immutable object's slot, part by part with its primal
    parts: a tuple of numbers passed by keyword (``d.update(b=(x, y))``) kept one direction of a
    batched pass, its numbers' B values being read as arrays' fdata."""
    if isinstance(t, tuple):
        parts = [slot_rdata(u, p) for u, p in zip(t, primal)]
    else:
        names = list(t.fields)
        parts = [slot_rdata(t.fields[name], getattr(primal, name, None) if isinstance(name, str) else None)
                 for name in names]
    if all(r is NoRData for r in parts):
        return NoRData
    if isinstance(t, tuple):
        return tuple(parts) if type(t) is tuple else tuple.__new__(type(t), parts)
    return Tangent(t.primal_type, dict(zip(names, parts)))


def add_rdata_to(t: Any, r: Any) -> Any:
    """Full tangent ``t`` plus rdata ``r`` (in place for mutable parts)."""
    if r is NoRData:
        return t
    if isinstance(t, (float, complex, np.floating, np.complexfloating)):
        return t + r
    return increment(t, join(NoFData, r))


def sum_rdata(r1: Any, r2: Any) -> Any:
    """The sum of two rdata of one primal (either may be ``NoRData`` at any level)."""
    if r1 is NoRData:
        return r2
    if r2 is NoRData:
        return r1
    if isinstance(r1, tuple):
        parts = [sum_rdata(u, v) for u, v in zip(r1, r2)]
        return tuple.__new__(type(r1), parts) if hasattr(type(r1), "_fields") else tuple(parts)
    if isinstance(r1, Tangent):
        keys = list(r1.fields) + [k for k in r2.fields if k not in r1.fields]
        return Tangent(r1.primal_type, {k: sum_rdata(r1.fields.get(k, NoRData), r2.fields.get(k, NoRData)) for k in keys})
    return r1 + r2


def defined_rrule(definition: Any, *args: Any, **kwargs: Any) -> tuple:
    """The reverse rule of a primitive computed as the Python function ``definition``
    (``second_order.defined_as`` and the domain files' ``derived`` helpers): ``core.rrule`` of the
    definition, whose pullback gives a zero cotangent instead of none to each number the
    definition did not read on this call (``fillvalue`` in 'valid' mode, ``tol`` where no value
    was complex): the primitive's derivative there is zero by definition, not dropped."""
    from .core import rrule

    out, pullback = rrule(definition, *args, **kwargs)
    numbers = [i for i, a in enumerate((*args, *kwargs.values()), start=1)
               if isinstance(a, CoDual) and isinstance(a.primal, (float, complex, np.inexact))
               and not isinstance(a.primal, np.ndarray)]
    if not numbers:
        return out, pullback

    def zero_for_unread_numbers(dy: Any) -> tuple:
        rdatas = list(pullback(dy))
        for i in numbers:
            if i < len(rdatas) and rdatas[i] is NoRData:
                rdatas[i] = 0.0
        return tuple(rdatas)

    return out, zero_for_unread_numbers


#: Cython's refusal of a read-only array where a typed memoryview is not ``const``
_READ_ONLY_BUFFER = "buffer source array is read-only"


def _writable(value: Any) -> Any:
    """``value`` with each read-only array in it (at the top or in a list or tuple) copied."""
    if isinstance(value, np.ndarray) and not value.flags.writeable:
        return value.copy()
    if type(value) is list or type(value) is tuple:
        return type(value)(_writable(v) for v in value)
    return value


def call_on_primals(fn: Any, args: tuple, kwargs: dict) -> Any:
    """``fn`` called on the primals of ``args`` and ``kwargs``. A float array read from a global
    reaches rules as a read-only view (``runtime.read_only``); a SciPy function whose Cython
    kernel refuses read-only buffers (``sosfilt``'s ``sos``) is called again on writable copies of
    those (only when it refused them: such a refusal comes before the kernel does anything)."""
    values = [primal(a) for a in args]
    keywords = {k: primal(v) for k, v in kwargs.items()}
    try:
        return fn(*values, **keywords)
    except ValueError as error:
        if _READ_ONLY_BUFFER not in str(error):
            raise
    return fn(*_writable(values), **{k: _writable(v) for k, v in keywords.items()})


def unbroadcast_structured(g: np.ndarray, shape: tuple) -> np.ndarray:
    """``unbroadcast`` of structured cotangent ``g`` to ``shape``, field by field (a sub-array
    field keeps its own trailing axes)."""
    if g.shape == tuple(shape):
        return g
    out = np.zeros(shape, g.dtype)
    for target, source in zip(structured.float_fields(out), structured.float_fields(g)):
        target[...] = unbroadcast(source, target.shape)
    return out


def add_cotangent(fdata: Any, primal: np.ndarray, g: Any) -> None:
    """Add structured cotangent ``g`` (broadcast to ``primal``'s shape or beyond) into ``fdata``."""
    shape = np.shape(structured.as_array(primal))
    structured.add_into(fdata, unbroadcast_structured(structured.as_array(g), shape))
