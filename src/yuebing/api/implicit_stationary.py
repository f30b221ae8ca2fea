"""Second order of a minimum found without the user's gradient (``minimize`` without ``jac=``,
``minimize_scalar``, ``least_squares``): the third derivatives of the objective that the implicit
function theorem on ``F = ∇_x f = 0`` needs (``api/implicit_second_order.py``).

The dual pullback of the solution needs, for a cotangent ``λ`` of ``F``, the gradient of
``psi(x, θ) = <∇_x f(x, θ), λ> = D f(x, θ)[λ, 0]`` in ``(x, θ)`` and that gradient's tangent along
``(ẋ, θ̇)``: forward-over-reverse of ``psi``. ``psi`` is the tangent half of ``f``'s *plain forward
program* (``transform/plain_forward.py``), which second order differentiates like user code
(``transform/third_order.py``), here composed by hand (``_Composition``) from the user's callable:
``fun(x, *args, **kwargs)`` for ``minimize``, ``0.5 * sum(r**2)`` of its residual ``r`` for
``least_squares`` and ``leastsq`` (``psi = <r, D r[λ]>``: the full Hessian of the cost, not
Gauss-Newton), and of the weighted residual ``(f(xdata, *p) - ydata) / sigma`` for ``curve_fit``.

``θ`` is ``args=``, ``kwargs=`` and what the callable captures. Plain forward programs read a
closure's captured variables as constants, so the user's closure is *opened* here: its plain
program is generated with each captured variable as an extra parameter, fed by the cell's
second-order read (``cell_get``, whose boxes are the closure's fdata and tangent), so the
captured variables' derivatives reach them like the arguments'. A bound method is its function
with the object first (third order reads no object attributes yet: refused there). A function
carrying derivatives deeper than that (a closure capturing another closure that captures ``θ``, a
closure passed in ``args=``) would lose them, so it is refused (``SecondOrderError``) with advice.
"""
from __future__ import annotations

import dataclasses
import functools
import operator
import re
import types
from typing import Any, Callable

import numpy as np

from ..ir import nodes as ir
from ..ir.primitives import cell_get, cell_set
from ..rules import _implicit_residuals as R
from ..rules.util import zero_fdata
from ..tangents import MutableTangent, NoFData, NoRData, NoTangent, Tangent, join
from ..transform.plain_forward import TANGENT_KEYWORD, PlainForwardGenerator, _compile, jvp_call
from ..transform.protocols import CodeCache, SourceFunction
from ..transform.globals_and_cells import cell_fdata
from ..transform.second_order import CellTangent, SecondOrderError, cell_tangent, dual_rule
from ..transform.third_order import _Composition, _constant, _function, _zero_tangent_of, bind_slots

_GETITEM = _function(operator.getitem)
_CELL_GET = _function(cell_get)
_JVP_CALL = _function(jvp_call)

# --------------------------------------------------------------------------------------------
# A closure's plain forward program with its captured variables as parameters
# --------------------------------------------------------------------------------------------

_OPENED = CodeCache()


def _opened_name(var: str) -> str:
    return f"_open_{var}"


def _open_body(body: list, cells: dict, owner: str) -> list:
    """``body`` with every read of a captured variable (``cell_get(_cell_v)``) a copy of the
    parameter standing for it; a write (``nonlocal``) is refused (``owner``: the function, where)."""
    out = []
    for s in body:
        if (isinstance(s, ir.Call) and isinstance(s.func, ir.Const) and s.func.value is cell_set
                and isinstance(s.args[0], ir.Var) and s.args[0].name in cells):
            # (a write into the function's own cells, ``_cellobj_v``, which its nested functions
            # share, is plain code the program follows: scipy.stats.linregress's wrapper)
            v = s.args[0].name[len("_cell_"):]
            # (its program reads the captured variables as they are when the outer pass goes back,
            # after the write: a counter steering a branch would take another path)
            raise SecondOrderError(f"yb.hvp/yb.hessian: third derivatives of {owner}, which writes (nonlocal) {v}, "
                                   "a variable it captures, under yb.grad or a minimiser, are not supported; pass "
                                   f"{v} to it as an argument and return its new value (yb.grad(..., has_aux=True)) "
                                   "instead of writing it")
        if (isinstance(s, ir.Call) and isinstance(s.func, ir.Const) and s.func.value is cell_get
                and len(s.args) == 1 and isinstance(s.args[0], ir.Var) and s.args[0].name in cells):
            out.append(ir.Copy(s.target, ir.Var(cells[s.args[0].name]), s.line))
            continue
        changes = {f.name: _open_body(getattr(s, f.name), cells, owner) for f in dataclasses.fields(s)
                   if isinstance(getattr(s, f.name), list) and f.name not in ("args", "kwargs")}
        if isinstance(s, ir.Try):
            changes["handlers"] = [dataclasses.replace(h, body=_open_body(h.body, cells, owner)) for h in s.handlers]
        out.append(dataclasses.replace(s, **changes) if changes else s)
    return out


def opened_program(fun: types.FunctionType) -> tuple[types.FunctionType, SourceFunction]:
    """``fun``'s plain forward program taking its captured variables as extra parameters, after
    its own: ``program(fun, fun_t, x, x_t, ..., v, v_t, ...)`` for ``fun.__code__.co_freevars``."""
    found = _OPENED.get(fun)
    if found is None:
        source = SourceFunction(fun)
        function = source.ir
        cells = {f"_cell_{v}": _opened_name(v) for v in function.free_vars}
        # the cells stay (a captured module is checked through its cell); only their reads change
        opened = dataclasses.replace(function, params=function.params + list(cells.values()),
                                     body=_open_body(function.body, cells, f"{fun.__name__}{_where(fun)}"))
        generated = PlainForwardGenerator(opened, fun.__globals__).generate()
        found = _OPENED.put(fun, (_compile(generated, fun), source))
    return found


# --------------------------------------------------------------------------------------------
# psi's gradient and its tangent, composed from second-order rules
# --------------------------------------------------------------------------------------------


def _elements(c: _Composition, slot: int, value: Any, keywords: bool) -> Any:
    """The slot pairs ``(value, zero direction)`` of ``args``'s elements (a non-tuple is one
    argument) or, with ``keywords``, of ``kwargs``'s items by name, read out of ``slot``."""
    def element(key: Any) -> tuple[int, int]:
        e = c.call(_GETITEM, [slot, c.add(_constant(key))])
        return e, c.add(_constant(_zero_tangent_of(c.values[e][0])))

    if keywords:
        return {k: element(k) for k in (value or {})}
    if isinstance(value, tuple):
        return [element(k) for k in range(len(value))]
    return [(slot, c.add(_constant(_zero_tangent_of(value))))]


def _partial_rdata(name: str, r: Any) -> Any:
    """A partial's rdata holding ``r`` as its field ``name``'s (``func``, ``args``, ``keywords``)."""
    return NoRData if r is NoRData else Tangent(functools.partial, {name: r})


def _user_call(c: _Composition, fun_slot: int, positional: list, keywords: dict,
               refuse: Callable[[Any, str], Exception] | None = None) -> int:
    """The ``(value, tangent)`` pair of the user's callable on the slot pairs, by second order
    of its plain forward program (opened, for a closure): the pair's slot. ``refuse(fun, what)``
    makes the error for what cannot be followed (a minimiser's by default; ``yb.grad`` has its own)."""
    refuse = refuse or _refusal
    fun4 = c.values[fun_slot]
    fun = fun4[0]
    if isinstance(fun, functools.partial):  # its function, its arguments first and its keywords added
        def part(name: str, value: Any) -> int:
            fields = [getattr(t, "fields", {}) if isinstance(t, Tangent) else {} for t in fun4]
            # its rdata (stored numbers) goes back as the partial's: dropped, yb.grad(partial(g, x[0]))
            # inside yb.hessian lost x[0]'s
            c.steps.append((lambda dy, dy_d: tuple((NoRData, _partial_rdata(name, r)) for r in (dy, dy_d)),
                            [fun_slot], len(c.values)))
            return c.add((value, fields[1].get(name, NoFData), fields[2].get(name, NoTangent),
                          fields[3].get(name, NoFData)))

        bound = part("args", fun.args), part("keywords", fun.keywords)
        if any(_captures(c.values[b][1], set()) or _captures(c.values[b][2], set()) for b in bound):
            raise refuse(fun.func, "a function bound by functools.partial that captures variables carrying "
                                   "derivatives")
        positional = _elements(c, bound[0], fun.args, keywords=False) + list(positional)
        keywords = {**_elements(c, bound[1], fun.keywords, keywords=True), **keywords}
        return _user_call(c, part("func", fun.func), positional, keywords, refuse)
    if isinstance(fun, types.MethodType) and isinstance(fun.__func__, types.FunctionType):
        # a bound method: its function, with the object (and its derivatives) as the first argument
        self4 = tuple(fun.__self__ if k == 0 else getattr(part, "__self__", NoTangent if k == 2 else NoFData)
                      for k, part in enumerate(fun4))
        self_slot = c.add(self4)
        positional = [(self_slot, c.add(_constant(_zero_tangent_of(fun.__self__)))), *positional]
        fun_slot = c.add(_function(fun.__func__))
        fun = fun.__func__
    if not (isinstance(fun, types.FunctionType) and fun.__closure__):
        slots = [fun_slot, c.add(_constant(NoTangent))] + [s for pair in positional for s in pair]
        named = {}
        for k, (value, direction) in keywords.items():  # jvp_call's keywords: k=value, _t_k=its tangent
            named[k], named[TANGENT_KEYWORD + k] = value, direction
        return c.call(_JVP_CALL, slots, named)
    program, source = opened_program(fun)
    given = {**dict(enumerate(positional)), **keywords}
    plan = source.plan(fun, tuple(range(len(positional))), dict(keywords))
    slots = [fun_slot, c.add(_constant(NoTangent))] + bind_slots(c, given, plan)  # (**kwargs: a dict built)
    for name, cell in zip(fun.__code__.co_freevars, fun.__closure__):
        cell4 = (cell, cell_fdata(fun4[1], name, cell), cell_tangent(fun4[2], name, cell),
                 cell_fdata(fun4[3], name, cell, "fdata_tangent"))
        value = c.call(_CELL_GET, [c.add(cell4)])
        v4 = c.values[value]
        if (_captures(v4[1], set()) or _captures(v4[2], set())) and not _called_opened(fun, name, v4[0]):
            raise refuse(fun, f"{name}, a function that captures variables carrying derivatives")
        slots += [value, c.add(_constant(_zero_tangent_of(v4[0])))]
    out, pullback = dual_rule(program)(_function(program), *(c.values[s] for s in slots))
    c.steps.append((pullback, slots, len(c.values)))
    return c.add(out)


def _called_opened(fun: types.FunctionType, name: str, value: Any) -> bool:
    """Whether ``value``, captured by ``fun`` as ``name`` and capturing variables carrying
    derivatives itself, is a Python function that ``fun``'s opened program calls opened in turn
    (``nested._opened_function_call``, a third-order hook), so their derivatives follow. Not when
    a function nested in either reads captured variables through cells (a generator expression
    over ``name``, a lambda ``value`` returns): the opened programs read them as parameters."""
    def nests_closures(f: types.FunctionType) -> bool:
        return any(isinstance(const, types.CodeType) and const.co_freevars for const in f.__code__.co_consts)

    return isinstance(value, types.FunctionType) and not nests_closures(fun) and not nests_closures(value)


def _seed(value4: tuple, seed: float) -> Any:
    """Cotangent ``seed`` of a scalar value: in its fdata for an array, else as rdata."""
    if isinstance(value4[0], np.ndarray):
        value4[1][...] += seed
        return NoRData
    return seed


def _composition(x4: tuple, params4: tuple, u: Any, u_dot: Any, what: str,
                 refuse: Callable[[Any, str], Exception] | None = None) -> _Composition:
    """The composition's slots: the callable, ``x``, the direction ``u`` (tangent ``u̇``), then the
    other parameters, which must not hold functions capturing derivatives (``what`` they are)."""
    for a4 in params4[1:]:
        if _captures(a4[1], set()) or _captures(a4[2], set()):
            raise (refuse or _refusal)(params4[0][0], f"{what} that captures variables carrying derivatives")
    u4 = (u, zero_fdata(u), u_dot, zero_fdata(u))
    return _Composition([params4[0], x4, u4, *params4[1:]])


def _pull_psi(c: _Composition, pair: int, x4: tuple) -> tuple:
    """Pull ``psi``, the second of the pair ``(f, psi)`` in slot ``pair``, back to the slots."""
    psi = c.call(_GETITEM, [pair, c.add(_constant(1))])
    rs, rsd = c.pull({psi: [_seed(c.values[psi], 1.0), NoRData]})
    return join(x4[3], rsd[2]), (rs[1], *rs[4:]), (rsd[1], *rsd[4:])


def pull_stationary(cost: bool, x4: tuple, params4: tuple, u: Any, u_dot: Any) -> tuple:
    """The gradient of ``psi(x, θ) = <∇_x f(x, θ), u>`` (``H_xx u``, and ``H_θx u`` into the
    parameters' fdata) and its tangent along the arguments' tangents and ``u̇`` (``D³f[u, (ẋ, θ̇)]
    + H u̇``, into their fdata tangents); ``f`` is the objective ``fun(x, *args)`` (``cost``
    False; ``params4``: ``fun``, ``args``) or ``least_squares``' cost (``fun``, ``args``,
    ``kwargs``). Returns ``(x̄̇, params' rdata, params' rdata tangents)``."""
    c = _composition(x4, params4, u, u_dot, "a function in args= or kwargs=")
    positional = _elements(c, 3, params4[1][0], keywords=False)
    keywords = _elements(c, 4, params4[2][0], keywords=True) if cost else {}
    pair = _user_call(c, 0, [(1, 2), *positional], keywords)
    if cost:  # psi = <r, D r[u]>
        pair = c.call(_function(R.residual_pairing), [pair])
    return _pull_psi(c, pair, x4)


def pull_curve_fit(x4: tuple, params4: tuple, u: Any, u_dot: Any) -> tuple:
    """``pull_stationary`` for ``curve_fit``'s cost ``0.5 |w|^2``, ``w = (f(xdata, *p) - ydata) / sigma``
    (``params4``: ``f``, ``xdata``, ``ydata``, ``sigma``): ``psi = <w, D w[u]>``, the model called
    as ``f(xdata, p[0], p[1], ...)`` with directions ``u[0], u[1], ...``."""
    c = _composition(x4, params4, u, u_dot, "xdata, ydata or sigma holding a function", _curve_fit_refusal)
    xdata = c.call(_function(R.curve_fit_xdata), [3])
    positional = [(xdata, c.add(_constant(_zero_tangent_of(c.values[xdata][0]))))]
    for i in range(int(np.size(x4[0]))):
        index = c.add(_constant(i))
        positional.append((c.call(_GETITEM, [1, index]), c.call(_GETITEM, [2, index])))
    pair = _user_call(c, 0, positional, {}, _curve_fit_refusal)
    return _pull_psi(c, c.call(_function(R.curve_fit_pairing), [pair, 4, 5]), x4)


# --------------------------------------------------------------------------------------------
# What cannot be followed: derivatives captured deeper than one closure
# --------------------------------------------------------------------------------------------


def _captures(t: Any, seen: set) -> bool:
    """Whether fdata or a tangent holds a function's captured variables that carry derivatives."""
    if id(t) in seen or t is NoTangent or t is NoFData:
        return False
    seen.add(id(t))
    if isinstance(t, (tuple, list)):
        return any(_captures(v, seen) for v in t)
    if isinstance(t, dict):
        return any(_captures(v, seen) for v in t.values())
    if isinstance(t, Tangent):
        if t.primal_type is types.FunctionType:
            return any(_carries(v) for v in t.fields.values())
        return any(_captures(v, seen) for v in t.fields.values())
    return False


def _carries(box: Any) -> bool:
    """Whether a closure's box (fdata: a cell box; tangent: a ``CellTangent``) holds a derivative."""
    content = box.fields.get("cell_contents", NoTangent) if isinstance(box, MutableTangent) else box
    content = content.value if isinstance(content, CellTangent) else content
    return content is not NoTangent and content is not NoFData


def _where(fun: Any) -> str:
    """Where the user wrote ``fun``: its file and line, or for a function made inside the
    differentiated code (its code is the generated program's) the function that makes it."""
    code = getattr(fun, "__code__", None)
    if code is None:
        return ""
    if not code.co_filename.startswith("<yuebing"):
        return f" ({code.co_filename}:{code.co_firstlineno})"
    maker = re.match(r"(\w+)_dual_forward\b", getattr(code, "co_qualname", ""))
    outer = getattr(fun, "__globals__", {}).get(maker.group(1)) if maker else None
    if not isinstance(outer, types.FunctionType):
        return ""
    return f" (made in {outer.__name__}, {outer.__code__.co_filename}:{outer.__code__.co_firstlineno})"


def _advice(fun: Any, what: str) -> str:
    return (f"yb.hvp/yb.hessian: the second derivative of a minimiser's solution needs third derivatives of the "
            f"objective {getattr(fun, '__name__', '')}{_where(fun)}, which yuebing takes with respect to its "
            f"arguments and the variables it captures, not through {what}; pass those variables to the objective "
            "as arguments (args=), or pass the objective's gradient as jac=")


def _refusal(fun: Any, what: str) -> Exception:
    return SecondOrderError(_advice(fun, what))


def _curve_fit_refusal(fun: Any, what: str) -> Exception:
    """``_refusal`` worded for ``curve_fit``, whose model takes no ``args=`` and whose ``jac=`` is not used."""
    return SecondOrderError(
        f"yb.hvp/yb.hessian: the second derivative of scipy.optimize.curve_fit's popt needs third derivatives of the "
        f"model {getattr(fun, '__name__', '')}{_where(fun)}, which yuebing takes with respect to its arguments and the "
        f"variables it captures, not through {what}; make the model capture those variables itself (w, not a "
        "function reading w), or pass them in a dict xdata (xdata={'t': t, 'w': w}, read as X['t'], X['w'])")


__all__ = ["opened_program", "pull_curve_fit", "pull_stationary"]
