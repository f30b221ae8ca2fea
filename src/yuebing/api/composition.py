"""Transforms that compose: ``yb.grad``, ``yb.vjp`` (and its pullback), ``yb.jvp`` and
``yb.linearize`` called inside the function being differentiated, in reverse and forward mode.

Every second derivative here is one forward-over-reverse pass (``call_rrule2``) of the inner
function, run when the outer pass needs it, with the inner and outer perturbations kept apart by
construction: the inner derivative is taken with respect to the inner function's own arguments
(its direction enters as their tangents), the outer one reaches it through the tangents or
cotangents of the arguments *and of the values the inner function captured* (its closure's
boxes), which the inner transform holds constant.

* Reverse over ``grad(g)`` (``gradient_rrule``): the gradient's cotangent ``ybar`` goes back to
  every argument ``x_j`` and captured value as ``sum_i d2 g / dx_j dx_i ybar_i`` (plus ``vbar``
  times the gradient for ``value_and_grad``): one pass with direction ``ybar`` on the
  differentiated arguments, seeded ``(1, vbar)``; the answer is the rdata tangent. With
  ``has_aux`` the aux's cotangent ``abar`` joins ``vbar`` in the seed's tangent (``J_aux^T abar``:
  the aux is first order through the function); keywords are bound to positions.
* Reverse over ``jvp(f, p, t)``: cotangents ``(vbar, tbar)`` go to ``t`` as ``J^T tbar`` and to
  ``p`` (and the captured values) as ``J^T vbar + D(J^T tbar)[t]``: one pass with direction
  ``t`` seeded ``(tbar, vbar)``.
* Forward over ``jvp(f, p, t)`` along ``(dp, dt, dc)``: the value's tangent ``J dp + J_c dc`` and
  ``J dt`` by forward mode; ``D(J t)[dp, dc]`` element by element, each ``<D(J^T e_k)[dp, dc], t>``
  by one pass seeded ``e_k`` (so it costs one pass per output element).
* ``yb.vjp`` and ``yb.linearize`` are written as Python (``rules/_nested_definitions.py``): a
  pullback is ``grad`` of a pairing, a linearized function is ``jvp`` at the saved point.
"""
from __future__ import annotations

import functools
import inspect
import types
from typing import Any, Callable

import numpy as np

from .. import tangents as T
from ..rules import _nested_definitions as definitions
from ..rules import outside_state
from ..rules.core import CoDual, Dual, primal, register_frule, register_rrule
from ..rules.util import output
from ..tangents import NoFData, NoRData, NoTangent, Tangent
from ..transform.forward_runtime import NestedDifferentiationError, call_frule, global_tangent, zero_tangent_of
from ..transform.runtime import call_rrule
from ..transform.second_order import _dual_closure_tangent, call_rrule2
from .common import normalise_argnums
from .gradient_objects import as_argument_tangent
from .composed_second_order import check_jvp_call, defined_second_order, jvp_second_order, register as register_second_order
from .custom import linearize
from .forward import jvp
from .leaves import _leaves
from .nested_cell_writes import captured_state, refuse_float_writes
from .common import split_aux
from .reverse import grad, seed_output, value_and_grad, vjp
from .second_order import separated_arguments


# --------------------------------------------------------------------------------------------
# One forward-over-reverse pass inside an outer reverse pass
# --------------------------------------------------------------------------------------------


def _fresh_fdata(x: Any, outer: Any, default: Any) -> Any:
    """Zero fdata for the inner pass: a closure made in the differentiated code has boxes for
    its captured values (``outer`` holds the outer pass's); anything else its own."""
    if callable(x) and isinstance(outer, Tangent):
        return _zeroed_fdata(outer)
    return default


def _zeroed_fdata(fdata: Any) -> Any:
    """Fresh zero fdata shaped like ``fdata`` (its ``NoFData`` parts left so)."""
    return T.fdata(T.scale(T.join(fdata, NoRData), 0.0))


def _dual_tangent(fn: Any, forward_tangent: Any) -> Any:
    """A function's forward-mode tangent in second order's format: a closure's boxes as cell
    tangents; a partial's stored values' tangents as they are (its function's converted so).
    (A partial's read as a closure's lost what it stored: forward mode over ``yb.jvp`` of
    ``functools.partial(g, x)`` came out wrong.)"""
    if isinstance(fn, functools.partial) and isinstance(forward_tangent, Tangent):
        fields = dict(forward_tangent.fields)
        if "func" in fields:
            fields["func"] = _dual_tangent(fn.func, fields["func"])
        return Tangent(functools.partial, fields)
    return _dual_closure_tangent(forward_tangent)


def deliver(codual: Any, tangent: Any) -> Any:
    """Add a cotangent (a full tangent) into an outer argument: its mutable parts into the
    codual's fdata in place; returns the rdata (numbers) the pullback returns for it."""
    if tangent is NoTangent or not isinstance(codual, CoDual):
        return NoRData
    fd = codual.fdata
    zero_r = T.rdata(T.scale(tangent, 0.0))
    if fd is not NoFData:
        part = T.fdata(tangent)
        if part is not NoFData:
            T.increment(T.join(fd, zero_r), T.join(part, zero_r))
    return T.rdata(tangent)


class DualPass:
    """``call_rrule2`` of ``g`` on the outer arguments' primals with fresh fdata, along
    ``directions`` (None: zero), seeded by ``seed(out4) -> (dy, dy_d)``. ``first[i]`` and
    ``second[i]`` are argument ``i``'s cotangent and its tangent (full tangents); ``g_first``,
    ``g_second`` the same for the values ``g`` captured."""

    def __init__(self, g: Any, g_fdata: Any, args: tuple, directions: list, seed: Callable, name: str,
                 outer_memo: dict | None = None) -> None:
        # copies: an argument may share memory with a value the function captured (a pullback
        # called on a captured array); each gets its own cotangent, delivered to the outer pass
        primals = tuple(v if callable(v) else T.structural_copy(v) for v in (primal(a) for a in args))
        xs, fdata_of = separated_arguments(primals, name)
        outer = [a.fdata if isinstance(a, CoDual) else NoFData for a in args]
        fds = [_fresh_fdata(x, o, d) for x, o, d in zip(xs, outer, fdata_of(xs))]
        fdts = [_fresh_fdata(x, o, d) for x, o, d in zip(xs, outer, fdata_of(xs))]
        duals = [(x, fd, zero_tangent_of(x) if d is None or d is NoTangent else d, fdt)
                 for x, fd, d, fdt in zip(xs, fds, directions, fdts)]
        # (a partial's fdata marks its numbers and constants NoFData, which scaling raised on)
        g_fd = _zeroed_fdata(g_fdata) if isinstance(g_fdata, Tangent) else NoFData
        g_fdt = _zeroed_fdata(g_fdata) if isinstance(g_fdata, Tangent) else NoFData
        # the inner pass's outside state is its own, but the cotangents its answer (fdata tangents)
        # holds for an outside object go to the outer pass's box of it (``outer_memo``: its memo)
        scope = outside_state.enter(link=(outer_memo, _OUTER_BOXES))
        try:
            self.out, pullback = call_rrule2((g, g_fd, NoTangent, g_fdt), *duals)
        finally:
            outside_state.leave(scope, lambda: pullback(NoRData, NoRData))  # (a refusal: what it wrote put back first)
        rs, rsd = pullback(*seed(self.out))
        self.first = [T.join(fd, r) for fd, r in zip(fds, rs[1:])]
        self.second = [T.join(fdt, r) for fdt, r in zip(fdts, rsd[1:])]
        self.g_first = T.join(g_fd, rs[0]) if g_fd is not NoFData else NoTangent
        self.g_second = T.join(g_fdt, rsd[0]) if g_fdt is not NoFData else NoTangent


#: a reverse-over-reverse pass's second answer for an outside object goes to the outer box; a
#: pass along the outer direction reads an outside object along the outer tangent of it
_OUTER_BOXES, _OUTER_TANGENTS = {"fdata_tangent": "fdata"}, {"tangent": "tangent"}


def _seeds(cotangent: Any, cotangent_t: Any) -> Callable:
    """Seed an output 4-tuple with a cotangent and its tangent (full tangents, or NoTangent)."""

    def seed(out: tuple) -> tuple:
        return (seed_output(CoDual(out[0], out[1]), _shaped(out[0], cotangent)),
                seed_output(CoDual(out[0], out[3]), _shaped(out[0], cotangent_t)))

    return seed


def _shaped(y: Any, c: Any) -> Any:
    """A number cotangent of a 0-d array output as a 0-d array (the tangent model's)."""
    if isinstance(y, np.ndarray) and y.shape == () and isinstance(c, (float, np.floating)):
        return np.asarray(c, dtype=y.dtype)
    return c


def _scalar(value: Any) -> float:
    return 0.0 if value is NoTangent or value is NoRData else float(value)


# --------------------------------------------------------------------------------------------
# Reverse mode over yb.grad / yb.value_and_grad
# --------------------------------------------------------------------------------------------


def bound_positionally(g: Any, args: tuple, kwargs: dict, constant: Callable, mode: str) -> tuple[tuple, Callable]:
    """A gradient function's arguments with its keywords bound to positions by ``g``'s signature
    (defaults as ``constant(value)``), as ``yb.grad`` binds them: keywords are never
    differentiated by the inner transform (argnums count positional arguments), but carry the
    outer derivative. Also ``order(rdatas)``: the rdata of the bound arguments in the call's
    order (the positional ones, then each keyword as passed)."""
    if not kwargs:
        return tuple(args), lambda rdatas: tuple(rdatas)
    try:
        parameters = list(inspect.signature(g).parameters.values())
    except (TypeError, ValueError):
        parameters = None
    plain = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if parameters is None or any(p.kind not in plain for p in parameters):
        raise NestedDifferentiationError(
            f"{mode}: a gradient function called with keyword arguments ({', '.join(kwargs)}) needs a "
            "function whose parameters are all positional-or-keyword (no *args, **kwargs or keyword-only "
            "parameters); pass the arguments positionally")
    bound = inspect.Signature(parameters).bind(*args, **kwargs)  # a TypeError, as the plain call's
    names = [p.name for p in parameters]
    full = tuple(bound.arguments[p.name] if p.name in bound.arguments else constant(p.default)
                 for p in parameters)
    positions = [names.index(k) for k in kwargs]
    return full, lambda rdatas: tuple(rdatas[:len(args)]) + tuple(rdatas[i] for i in positions)


def gradient_rrule(f: Any, args: tuple, kwargs: dict) -> tuple:
    """Reverse rule of a call of a function made by ``yb.grad``/``yb.value_and_grad`` (any
    arguments, keywords bound to positions; the gradient's function may capture variables of
    the differentiated code). With ``has_aux`` the aux is an ordinary output of the function:
    its cotangent seeds the same pass, as the tangent of the aux's cotangent. Keywords of a
    function that cannot take them by position (``*args``, ``**kwargs``, keyword-only
    parameters) are bound by a ``functools.partial``, whose captured keywords carry their
    outer derivative as a closure's captured values do."""
    spec = f.primal.__yuebing_gradient__
    nums, single = normalise_argnums(spec.argnums, len(args), "grad")
    if kwargs and not positional_parameters(spec.f):
        g, g_fdata, deliver_captured = _keywords_captured(spec.f, f.fdata, kwargs)
        order = lambda rdatas: tuple(rdatas) + tuple(deliver_captured[k] for k in kwargs)  # noqa: E731
        args = tuple(args)
    else:
        args, order = bound_positionally(spec.f, args, kwargs, lambda v: v, "reverse mode over yb.grad")
        g, g_fdata, deliver_captured = spec.f, f.fdata, None
    xs = tuple(primal(a) for a in args)
    # the arguments not differentiated are copied: they may share memory with what the function
    # captured (a pullback called on a captured array), which the inner gradient need not separate
    copies = tuple(x if i in nums else T.structural_copy(x) for i, x in enumerate(xs))
    before, outer = captured_state(g), outside_state.current()
    with outside_state.followed():  # (its derivative through what the outer pass wrote: DualPass's)
        value, gradient = value_and_grad(g, argnums=spec.argnums, has_aux=spec.has_aux)(*copies)
    refuse_float_writes(g, before, "reverse mode over yb.grad")  # (run plainly: s = s * y, its derivative lost)
    if spec.with_value:
        out = output((value, gradient))
    else:
        out = output((gradient, value[1]) if spec.has_aux else gradient)

    def pullback(dy: Any) -> tuple:
        value_bar, grad_bar, aux_bar = _split_cotangent(T.join(out.fdata, dy), spec)
        grad_bar = as_argument_tangent(grad_bar, gradient)  # (an object's: api/gradient_objects.py)
        grad_bars = (grad_bar,) if single or grad_bar is NoTangent else tuple(grad_bar)
        directions: list = [None] * len(xs)
        for i, bar in zip(nums, grad_bars):
            directions[i] = bar
        seed = _aux_seeds(_scalar(value_bar), aux_bar) if spec.has_aux else _seeds(1.0, _scalar(value_bar))
        run = DualPass(g, g_fdata, args, directions, seed, "grad", outer)
        g_rdata = NoRData
        if deliver_captured is not None:
            deliver_captured.update(run.g_second)
        elif isinstance(g_fdata, Tangent):  # (a partial's stored numbers: rdata, for the function to pass on)
            g_rdata = deliver(CoDual(g, g_fdata), run.g_second)
        return (g_rdata,) + order([deliver(a, s) for a, s in zip(args, run.second)])

    return out, pullback


def positional_parameters(g: Any) -> bool:
    """Whether every parameter of ``g`` may be given by position (so keywords bind to positions)."""
    try:
        parameters = inspect.signature(g).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
               for p in parameters)


class _CapturedKeywords(dict):
    """The rdata of a gradient function's keyword arguments, once the pass's tangent of the
    ``functools.partial`` that captured them (``update``) is delivered to them."""

    def __init__(self, g: Any, g_fdata: Any, kwargs: dict) -> None:
        super().__init__((k, NoRData) for k in kwargs)
        self.g, self.g_fdata, self.kwargs = g, g_fdata, kwargs

    def update(self, tangent: Any) -> None:  # type: ignore[override]
        if not isinstance(tangent, Tangent):
            return
        func = tangent.fields.get("func", NoTangent)
        if isinstance(self.g_fdata, Tangent) and func is not NoTangent:
            deliver(CoDual(self.g, self.g_fdata), func)
        keywords = tangent.fields.get("keywords", NoTangent)
        for k, codual in self.kwargs.items():
            if isinstance(keywords, dict) and keywords.get(k, NoTangent) is not NoTangent:
                self[k] = deliver(codual, keywords[k])


def _keywords_captured(g: Any, g_fdata: Any, kwargs: dict) -> tuple[Any, Any, _CapturedKeywords]:
    """``functools.partial(g, **kwargs)`` (copies of the keywords' values), the fdata its pass
    starts from (``g``'s captured values' beside the keywords'), and where their rdata lands."""
    bound = functools.partial(g, **T.structural_copy({k: primal(v) for k, v in kwargs.items()}))
    fdata = T.fdata(T.zero_tangent(bound))
    if isinstance(fdata, Tangent):  # (the parts without fdata left out, as a closure's are)
        fields = {k: v for k, v in fdata.fields.items() if v is not NoFData}
        fdata = Tangent(fdata.primal_type, {**fields, "func": g_fdata} if isinstance(g_fdata, Tangent) else fields)
    return bound, fdata, _CapturedKeywords(g, g_fdata, kwargs)


def _split_cotangent(cotangent: Any, spec: Any) -> tuple[Any, Any, Any]:
    """``(value's, gradient's, aux's)`` cotangents of a gradient function's output."""
    if spec.with_value:
        value_bar, grad_bar = _pair(cotangent)
        value_bar, aux_bar = _pair(value_bar) if spec.has_aux else (value_bar, NoTangent)
        return value_bar, grad_bar, aux_bar
    if spec.has_aux:
        grad_bar, aux_bar = _pair(cotangent)
        return 0.0, grad_bar, aux_bar
    return 0.0, cotangent, NoTangent


def _pair(cotangent: Any) -> tuple[Any, Any]:
    return (NoTangent, NoTangent) if cotangent is NoTangent else (cotangent[0], cotangent[1])


def _aux_seeds(value_bar: float, aux_bar: Any) -> Callable:
    """Seeds of a ``has_aux`` function's output ``(value, aux)``: cotangent ``(1, 0)``, and as its
    tangent ``(value_bar, aux_bar)`` (so the pass's second answer also holds ``J_aux^T aux_bar``)."""

    def seed(out: tuple) -> tuple:
        value, aux = split_aux(out[0], "grad")
        zero = T.zero_tangent(aux)
        aux_t = zero if aux_bar is NoTangent else aux_bar
        return (seed_output(CoDual(out[0], out[1]), (_shaped(value, 1.0), zero)),
                seed_output(CoDual(out[0], out[3]), (_shaped(value, value_bar), aux_t)))

    return seed


# --------------------------------------------------------------------------------------------
# yb.jvp inside reverse and forward mode
# --------------------------------------------------------------------------------------------


def _elements(packed: Any, n: int) -> list:
    """The coduals of the elements of a tuple codual."""
    fd = packed.fdata if isinstance(packed, CoDual) else NoFData
    return [CoDual(v, fd[i] if isinstance(fd, tuple) else NoFData) for i, v in enumerate(primal(packed))][:n]


def jvp_rrule(f: Any, primals: Any, tangents: Any, *rest: Any, **kwargs: Any) -> tuple:
    """``yb.jvp(f, primals, tangents)`` inside reverse-mode code. With ``has_aux`` the aux is an
    ordinary output of ``f`` at the primals: its cotangent joins the value's in the seed's
    tangent (``J_aux^T abar`` goes to the primals; the aux does not depend on the tangents)."""
    has_aux = primal(rest[0] if rest else kwargs.get("has_aux", False))
    check_jvp_call(primal(primals), primal(tangents), "reverse mode")
    ps, ts = primal(primals), primal(tangents)
    out = output(jvp(primal(f), ps, ts, has_aux=True) if has_aux else jvp(primal(f), ps, ts))
    f_fdata, outer = (f.fdata if isinstance(f, CoDual) else NoFData), outside_state.current()

    def pullback(dy: Any) -> tuple:
        cotangent = T.join(out.fdata, dy)
        if cotangent is NoTangent:  # no cotangent (yb.jacobian's value pass restores with none): nothing to do
            return (NoRData,) * (4 + len(rest) + len(kwargs))
        if has_aux:
            value_bar, tangent_bar, aux_bar = cotangent
            seed = _jvp_aux_seeds(tangent_bar, value_bar, aux_bar)
        else:
            value_bar, tangent_bar = cotangent
            seed = _seeds(tangent_bar, value_bar)
        run = DualPass(primal(f), f_fdata, tuple(_elements(primals, len(ps))), list(ts), seed, "jvp", outer)
        # (a partial's stored numbers: its rdata, which was dropped)
        f_r = deliver(f, run.g_second) if isinstance(f_fdata, Tangent) else NoRData
        p_r = tuple(deliver(a, s) for a, s in zip(_elements(primals, len(ps)), run.second))
        t_r = tuple(deliver(a, s) for a, s in zip(_elements(tangents, len(ts)), run.first))
        return (NoRData, f_r, p_r, t_r) + (NoRData,) * (len(rest) + len(kwargs))

    return out, pullback


def _jvp_aux_seeds(tangent_bar: Any, value_bar: Any, aux_bar: Any) -> Callable:
    """Seeds of a ``has_aux`` function's output ``(value, aux)`` under ``yb.jvp``: cotangent
    ``(tangent_bar, 0)`` (the aux's tangent is not an output), and as its tangent ``(value_bar,
    aux_bar)``, the cotangents of the outputs that are values at the primals."""

    def seed(out: tuple) -> tuple:
        value, aux = split_aux(out[0], "jvp")
        zero_value, zero_aux = T.zero_tangent(value), T.zero_tangent(aux)
        cotangent = (_shaped(value, zero_value if tangent_bar is NoTangent else tangent_bar), zero_aux)
        cotangent_t = (_shaped(value, zero_value if value_bar is NoTangent else value_bar),
                       zero_aux if aux_bar is NoTangent else aux_bar)
        return (seed_output(CoDual(out[0], out[1]), cotangent), seed_output(CoDual(out[0], out[3]), cotangent_t))

    return seed


def jvp_frule(f: Any, primals: Any, tangents: Any, has_aux: Any = False) -> Dual:
    """``yb.jvp(f, primals, tangents)`` inside forward-mode code: forward over forward. With
    ``has_aux`` ``f`` returns ``(value, aux)``: the aux is ``f``'s output at the primals (its
    tangent is the output tangent's second part), and only the value's tangent is paired."""
    check_jvp_call(primals.primal, tangents.primal, "forward mode")
    aux = bool(primal(has_aux))
    fn, ps, ts = f.primal, primals.primal, tangents.primal
    dps = _parts(primals.tangent, ps)
    dts = _parts(tangents.tangent, ts)
    f_tangent = getattr(f, "tangent", NoTangent)
    if aux:
        value, value_t, aux_value = jvp(fn, ps, ts, has_aux=True)
    else:
        (value, value_t), aux_value = jvp(fn, ps, ts), None
    # J dp + J_c dc (of the pair (value, aux) with has_aux; c: captured and outside values)
    y_dot = _forward(fn, f_tangent, ps, dps, outside_state.current())
    t_dot = _forward(fn, global_tangent(fn), ps, dts)
    t_dot = T.add(_item(t_dot, 0) if aux else t_dot, _second_term(fn, f_tangent, ps, dps, ts, value_t, aux_value, aux))
    if aux:
        return Dual((value, value_t, aux_value), (_item(y_dot, 0), t_dot, _item(y_dot, 1)))
    return Dual((value, value_t), (y_dot, t_dot))


def _item(tangent: Any, k: int) -> Any:
    """Part ``k`` of a pair's tangent (nothing when the pair has none)."""
    return NoTangent if tangent is NoTangent else tangent[k]


def _parts(tangent: Any, values: tuple) -> list:
    if tangent is NoTangent:
        return [zero_tangent_of(v) for v in values]
    return [zero_tangent_of(v) if t is NoTangent else t for v, t in zip(values, tangent)]


def _forward(fn: Any, fn_tangent: Any, ps: tuple, dps: list, outer_memo: dict | None = None) -> Any:
    """The tangent of ``fn(*ps)`` along ``dps`` (and the tangent of what ``fn`` captured, and with
    ``outer_memo``, the outer pass's, of the outside objects it reads)."""
    xs, dxs = T.structural_copy((ps, tuple(dps)))  # forward mode replays mutations
    scope = outside_state.enter(link=(outer_memo, _OUTER_TANGENTS))
    try:
        return call_frule(Dual(fn, fn_tangent), *(Dual(x, d) for x, d in zip(xs, dxs))).tangent
    finally:
        outside_state.leave(scope)


def _second_term(fn: Any, fn_tangent: Any, ps: tuple, dps: list, ts: tuple, like: Any, aux: Any = None,
                 has_aux: bool = False) -> Any:
    """``D(J t)[dp, dc]``, shaped like the output's tangent ``like``: element ``k`` is
    ``<D(J^T e_k)[dp, dc], t>``, one forward-over-reverse pass each (with ``has_aux``, of the
    value's element: the aux's cotangent is zero)."""
    from .leaves import _basis, _build

    y_leaves = _leaves(like, T.zero_tangent(like), "the output of the function under yb.jvp")
    sizes = [int(np.size(v)) for v, _ in y_leaves]
    values: list = []
    for position, size in enumerate(sizes):
        flat = np.zeros(size)
        for index in range(size):
            basis = _basis(like, position, index)
            cotangent = (basis, T.zero_tangent(aux)) if has_aux else basis
            flat[index] = _pairing_derivative(fn, fn_tangent, ps, dps, ts, cotangent)
        values.append(flat)
    counter = iter(range(len(values)))
    return _build(like, lambda leaf: _reshape(values[next(counter)], leaf))


def _reshape(flat: np.ndarray, leaf: Any) -> Any:
    return flat.reshape(np.shape(leaf)).astype(leaf.dtype) if isinstance(leaf, np.ndarray) else float(flat[0])


def _pairing_derivative(fn: Any, fn_tangent: Any, ps: tuple, dps: list, ts: tuple, basis: Any) -> float:
    """``<D(J^T e)[dp, dc], t>`` by one forward-over-reverse pass of ``fn`` seeded ``e``."""
    xs, fdata_of = separated_arguments(tuple(T.structural_copy(ps)), "jvp")
    fds, fdts = fdata_of(xs), fdata_of(xs)
    duals = [(x, fd, d, fdt) for x, fd, d, fdt in zip(xs, fds, dps, fdts)]
    scope = outside_state.enter(link=(outside_state.current(), _OUTER_TANGENTS))  # (along dc too)
    try:
        out, pullback = call_rrule2((fn, NoFData, _dual_tangent(fn, fn_tangent), NoFData), *duals)
    finally:
        outside_state.leave(scope, lambda: pullback(NoRData, NoRData))  # (a refusal: what it wrote put back first)
    _, rsd = pullback(*_seeds(basis, NoTangent)(out))
    total = 0.0
    for fdt, r, t in zip(fdts, rsd[1:], ts):
        derivative = T.join(fdt, r)
        if derivative is not NoTangent:
            total += float(T.dot(derivative, t))
    return total


# --------------------------------------------------------------------------------------------
# yb.vjp and yb.linearize: their Python definitions, in every mode
# --------------------------------------------------------------------------------------------


def _defined(definition: types.FunctionType, name: str) -> tuple[Callable, Callable]:
    """Reverse and forward rules running ``definition`` as user code."""

    def reverse(*args: Any, **kwargs: Any) -> tuple:
        _no_options(kwargs, name)
        out, pullback = call_rrule(CoDual(definition, NoFData), *args)
        return out, lambda dy: (NoRData,) + tuple(pullback(dy)[1:])

    def forward(*args: Any, **kwargs: Any) -> Dual:
        _no_options(kwargs, name)
        return call_frule(Dual(definition, NoTangent), *args)

    return reverse, forward


def _no_options(kwargs: dict, name: str) -> None:
    if any(primal(v) for v in kwargs.values()):
        raise NestedDifferentiationError(
            f"differentiating a function that calls {name} with {', '.join(kwargs)}= is not supported yet")


def _register() -> None:
    definitions.JVP = jvp
    for public, definition, name in ((vjp, definitions.vjp_definition, "yb.vjp"),
                                     (linearize, definitions.linearize_definition, "yb.linearize")):
        reverse, forward = _defined(definition, name)
        register_rrule(public, reverse)
        register_frule(public, forward)
        register_second_order(public, defined_second_order(definition, name))
    register_rrule(jvp, jvp_rrule)
    register_frule(jvp, jvp_frule)
    register_second_order(jvp, jvp_second_order)


_register()
