"""Second order of ``np.vectorize(pyfunc)(x)`` on a float64 array: one dual call per element.

The general rule (``second_order._call_vectorized``) differentiates ``vectorized_call``, the same
computation written as a comprehension over ``x.ravel().tolist()``: per element, a list read, the
call and a list append, each through a rule (the lists' tangents and fdata walked each time).
When ``x`` is a float64 array with a tangent of its shape, this module calls ``pyfunc``'s dual
rule on each element's ``(value, tangent)`` directly, gathers the outputs and their tangents into
arrays, and its pullback sends each element's cotangent and its tangent back through that
element's dual pullback, last element first. What ``pyfunc`` captures gathers its cotangents in
its closure's boxes, as in the general rule (whose pullback drops ``pyfunc``'s rdata too).

When ``pyfunc``'s body is elementwise arithmetic of its one parameter alone (``+ - *``, negation,
division by a nonzero number, NumPy's functions of one argument in ``dual_blocks.DUAL_UNARY``:
``lambda v: np.sin(np.cos(np.exp(v)))``), each statement gives on the array what it gives on each
element (Python floats raise only in what is left out: division by a variable, powers), so its
dual rule runs once on the whole array: one dual array block (``dual_blocks.py``) instead of a
dual call per element.
"""
from __future__ import annotations

import builtins
import inspect
import math
import operator
import types
from typing import Any, Callable

import numpy as np

from ..rules.core import CoDual
from ..rules.numpy_vectorize import probes_first
from ..rules.util import out_cotangent
from ..tangents import NoFData, NoRData
from .exceptions import carry_elements

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
    if whole_array(pyfunc[0]):
        return _on_the_array(pyfunc, arg, call)
    ys, y_ds, pullbacks = [], [], []
    elements, element_tangents = x.ravel().tolist(), x_d.ravel().tolist()
    probe = probes_first(vec)  # NumPy's call on the first element first, its result unused
    if probe:
        elements, element_tangents = elements[:1] + elements, element_tangents[:1] + element_tangents
    for v, t in zip(elements, element_tangents):
        try:
            out, pullback = call(pyfunc, (v, NoFData, t, NoFData))
        except Exception as error:  # its work and the completed elements' go with it (issue 13)
            carry_elements(error, pullbacks, arg, probe)
            raise
        pullbacks.append(pullback)
        if type(out[0]) not in _FLOAT_TYPES or type(out[2]) not in _FLOAT_TYPES:
            for done in reversed(pullbacks):  # not a float function: undo, and take the general rule
                done(NoRData, NoRData)
            return None
        ys.append(out[0])
        y_ds.append(out[2])
    if probe:
        ys, y_ds = ys[1:], y_ds[1:]
    y = np.array(ys).reshape(x.shape)
    result = (y, np.zeros(x.shape), np.array(y_ds).reshape(x.shape), np.zeros(x.shape))

    def vectorized_pullback(dy: Any, dy_d: Any) -> tuple:
        g = out_cotangent(CoDual(y, result[1]), dy).ravel().tolist()
        g_d = out_cotangent(CoDual(y, result[3]), dy_d).ravel().tolist()
        if probe:  # the probe's result is unused
            g, g_d = [0.0, *g], [0.0, *g_d]
        rs, rsd = [0.0] * len(g), [0.0] * len(g)
        for k in reversed(range(len(g))):
            r, rd = pullbacks[k](g[k], g_d[k])
            rs[k] = 0.0 if r[1] is NoRData else r[1]
            rsd[k] = 0.0 if rd[1] is NoRData else rd[1]
        if probe:  # its argument is the first element's
            rs, rsd = [rs[0] + rs[1], *rs[2:]], [rsd[0] + rsd[1], *rsd[2:]]
        for fdata, values in ((x_f, rs), (x_fd, rsd)):
            if type(fdata) is _ND:
                fdata += np.array(values).reshape(x.shape)
        return (NoRData, NoRData), (NoRData, NoRData)

    return result, vectorized_pullback


def _on_the_array(pyfunc: tuple, arg: tuple, call: Callable) -> tuple:
    """``pyfunc``'s dual rule called once with the array (its body is elementwise)."""
    x, x_f = arg[0], arg[1]
    out, pullback = call(pyfunc, arg)

    def array_pullback(dy: Any, dy_d: Any) -> tuple:
        rs, rsd = pullback(dy, dy_d)
        for fdata, r in ((x_f, rs[1]), (arg[3], rsd[1])):
            if r is not NoRData and type(fdata) is _ND:
                fdata += r  # (arrays' cotangents are in their fdata already)
        return (NoRData, NoRData), (NoRData, NoRData)

    return out, array_pullback


_IR: dict = {}  # code object -> its normal form, or None (no source, refused syntax)


def whole_array(fn: Any) -> bool:
    """Whether plain function ``fn`` of one parameter computes elementwise: a straight line of
    the statements listed in the module docstring on its parameter and their results, then
    ``return`` of one of them (its functions looked up now: a global may be rebound). It may
    capture modules (the dual program's lambdas capture ``np``), no other data."""
    if type(fn) is not types.FunctionType or fn.__defaults__ or fn.__code__.co_argcount != 1 \
            or fn.__code__.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS | inspect.CO_GENERATOR):
        return False
    names = dict(fn.__globals__)
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            return False
        if type(value) is not types.ModuleType:  # captured data (a module such as np is none)
            return False
        names[name] = value
    if fn.__code__ not in _IR:
        from ..frontend.normalise import normalise

        try:
            _IR[fn.__code__] = normalise(fn)
        except Exception:  # no source, syntax the normaliser refuses: element by element
            _IR[fn.__code__] = None
    function = _IR[fn.__code__]
    return function is not None and _elementwise_body(function, names)


def _elementwise_body(function: Any, globals_: dict) -> bool:
    from ..ir import nodes as ir
    from .dual_blocks import DUAL_UNARY

    # the normaliser's check that a captured module is the global of its name changes no value
    checks = tuple(f"if _cell_{name}.cell_contents is not {name}: raise TypeError(" for name in function.free_vars)
    kept = [s for s in function.body if not (isinstance(s, ir.Opaque) and not s.defines and s.source.startswith(checks))]
    if not kept:
        return False
    *body, last = kept
    known = set(function.params)
    if not body or not isinstance(last, ir.Return) or not isinstance(last.value, ir.Var):
        return False

    def operand(a: Any) -> bool:
        return isinstance(a, ir.Var) and a.name in known or isinstance(a, ir.Const) and type(a.value) in (int, float) \
            and math.isfinite(a.value)

    for s in body:
        if not isinstance(s, ir.Call) or not s.target or s.kwargs or s.star_args is not None or s.star_kwargs is not None \
                or not all(operand(a) for a in s.args) or not any(isinstance(a, ir.Var) for a in s.args):
            return False
        func = _resolve(s.func, globals_, function.global_keys)
        if func in (operator.add, operator.sub, operator.mul) and len(s.args) == 2 or func is operator.neg and len(s.args) == 1:
            pass
        elif func is operator.truediv and len(s.args) == 2 and isinstance(s.args[1], ir.Const) and s.args[1].value:
            pass
        elif not (isinstance(func, np.ufunc) and func in DUAL_UNARY and len(s.args) == 1):
            return False
        known.add(s.target)
    return last.value.name in known


def _resolve(func: Any, globals_: dict, keys: dict) -> Any:
    """The function ``func`` names; ``keys``: the lowered function's ``global_keys``."""
    from ..ir import nodes as ir

    if isinstance(func, ir.Const):
        return func.value
    if not isinstance(func, ir.Global):
        return None
    parts = func.path.split(".")
    head = keys.get(parts[0], parts[0])
    value = globals_.get(head, getattr(builtins, head, None))
    for part in parts[1:]:
        value = getattr(value, part, None)
    return value
