"""The lifting of the elementwise and in-place classes (``transform/lifting.py`` lifts the others).

An elementwise primitive (``np.sin``, ``operator.mul``, a ufunc with ``out=``, ``where=`` or
``dtype=``) runs its forward rule for the output tangent; its pullback delivers ``g * partial``
and the tangent ``g_d * partial + g * d(partial)``, each partial (``declare.elementwise``)
differentiated by the forward transform. The nonlinear in-place operators (``a *= b``) do the
same in place on arrays, restoring the primal and its tangent in the pullback. float64 arrays
take the fused rules of ``dual_elementwise.py`` first.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable

import numpy as np

from ..rules import aliasing_views
from ..rules.array_like import carries_floats
from ..rules.core import CoDual, Dual, describe_callable
from ..rules.core import frule as registered_frule
from ..rules.declare import ELEMENTWISE_PARTIALS, _conj, strong_product, ufunc_dtype, ufunc_mask
from ..rules.second_order import OUT_OF_PLACE, Rule, _error
from ..rules.util import accumulate, is_differentiable, out_cotangent, zero_fdata
from ..tangents import NoFData, NoRData, NoTangent
from .dual_elementwise import fast_rule
from .forward_runtime import call_frule, zero_tangent_of

_NO_CONTEXT = contextlib.nullcontext()

#: ``LINEAR(f4, args, kwargs)``: the linear class's rule (set by ``transform/lifting.py``, which
#: imports this module), for ``list + list`` and ``2 * [x]``: structure, not arithmetic.
LINEAR: Callable = None  # type: ignore[assignment]


def _frule_of(fn: Callable, *duals: Dual, **kw_duals: Dual) -> Dual:
    """Forward mode of ordinary NumPy code (a partial derivative, a vjp) by the forward transform."""
    return call_frule(Dual(fn, NoTangent), *duals, **kw_duals)


def _elementwise_cotangents(partials: tuple, xs: list, x_ds: list, y: Any, y_d: Any, g: Any, g_d: Any,
                            targets: list) -> tuple[tuple, tuple]:
    """Deliver ``g * partial`` and its tangent ``g_d * partial + g * d(partial)`` to each
    argument's ``(primal, fdata, fdata_tangent)`` target."""
    rs, rsd = [NoRData], [NoRData]
    with np.errstate(all="ignore"):
        for x, (target, fdata, fdata_t), partial in zip(xs, targets, partials):
            if partial is None or not is_differentiable(x):
                rs.append(NoRData)
                rsd.append(NoRData)
                continue
            p = _frule_of(partial, *(Dual(v, t) for v, t in zip(xs, x_ds)), Dual(y, y_d))
            # complex numbers (docs/conventions.md): the cotangent is g times the conjugate partial,
            # so its tangent is g_d conj(p) + g conj(p_d) (conj is linear: p_d's conjugate)
            p_value = _conj(p.primal)
            p_d = 0.0 if p.tangent is NoTangent else _conj(p.tangent)
            # strong zero (docs/conventions.md): an exactly-zero cotangent or tangent contributes 0
            rs.append(accumulate(CoDual(target, fdata), strong_product(g, p_value)))
            rsd.append(accumulate(CoDual(target, fdata_t),
                                  strong_product(g_d, p_value) + strong_product(g, p_d)))
    return tuple(rs), tuple(rsd)


def _fresh_output(y_dual: Dual) -> tuple:
    """The output 4-tuple of a forward rule's result: its tangent (zero where it has none) and
    fresh fdata and fdata tangent, where the output's cotangent and its tangent will gather."""
    y, y_d = y_dual.primal, y_dual.tangent
    return y, zero_fdata(y), zero_tangent_of(y) if y_d is NoTangent else y_d, zero_fdata(y)


def _output_cotangents(out: tuple, dy: Any, dy_d: Any) -> tuple:
    """The cotangent of an output 4-tuple and its tangent (from the fdata for arrays, the rdata
    for numbers)."""
    return out_cotangent(CoDual(out[0], out[1]), dy), out_cotangent(CoDual(out[0], out[3]), dy_d)


def _check_real(f: Any, xs: list) -> None:
    """Complex numbers are differentiated as pairs of reals (``_elementwise_cotangents``)."""


def _elementwise_rule(f: Any, partials: tuple) -> Rule:
    def rule(f4: tuple, args: tuple, kwargs: dict) -> tuple:
        fast = fast_rule(f, args, kwargs)  # + - * / exp log ... on float64 arrays (dual_elementwise.py)
        if fast is not None:
            return fast
        xs = [a[0] for a in args]
        if any(isinstance(x, (list, tuple, str)) for x in xs) and not any(isinstance(x, np.ndarray) for x in xs):
            return LINEAR(f4, args, kwargs)  # list + list, 2 * [x]: structure, not arithmetic
        x_ds = [a[2] for a in args]
        options = (NoRData,) * (len(args) - len(partials) + len(kwargs))  # rdata of out=, where=, dtype=
        if isinstance(f, np.ufunc) and options:
            out4, mask, dtype = _ufunc_options(f, args[len(partials):], kwargs, args[:len(partials)])
            args = args[:len(partials)]
            xs, x_ds = _cast(xs[:len(args)], dtype), _cast(x_ds[:len(args)], dtype)
            if out4 is not None:
                plain = _plain_out(out4[0])
                if plain is not None:
                    return _into_plain_out(f, args, plain, mask, dtype, options)
                return _into_out(f, partials, args, out4, xs, x_ds, mask, options)
        if len(args) != len(partials) or options and not isinstance(f, np.ufunc):
            raise _error(f"yb.hvp/yb.hessian: no second-order rule for {describe_callable(f)} with "
                         f"{len(args)} arguments and keywords {sorted(kwargs)}")
        _check_real(f, xs)
        out = _fresh_output(registered_frule(f, *(Dual(x, t) for x, t in zip(xs, x_ds))))

        def pullback(dy: Any, dy_d: Any) -> tuple:
            g, g_d = _output_cotangents(out, dy, dy_d)
            rs, rsd = _elementwise_cotangents(partials, xs, x_ds, out[0], out[2], g, g_d,
                                              [(a[0], a[1], a[3]) for a in args])
            return rs + options, rsd + options

        return out, pullback

    rule.second_order_kind = "elementwise"  # type: ignore[attr-defined]
    rule.partials = partials  # type: ignore[attr-defined] - read by third order
    return rule


_UFUNC_OPTIONS = ("out", "where", "dtype")


def _ufunc_options(f: Any, extra: tuple, kwargs: dict, args: tuple) -> tuple:
    """A ufunc call's ``(out 4-tuple or None, where= mask or None, dtype or None)``, from the
    arguments after the inputs (NumPy's order: out, where, dtype... only out is positional in
    NumPy, but the first-order rules bind all three) and the keywords; others are refused."""
    options = dict(zip(_UFUNC_OPTIONS, extra))
    for key, value in kwargs.items():
        if key not in _UFUNC_OPTIONS:
            raise _error(f"yb.hvp/yb.hessian: {describe_callable(f)} with {key}= is not supported in "
                         "second order; call it without")
        options[key] = value
    out4 = options.get("out")
    out4 = None if out4 is None or out4[0] is None else out4
    mask = ufunc_mask(describe_callable(f), options["where"][0], out4 is not None) if "where" in options else None
    dtype = options["dtype"][0] if "dtype" in options else None
    return out4, mask, ufunc_dtype(describe_callable(f), dtype, [a[0] for a in args])


def _cast(values: list, dtype: Any) -> list:
    """Inputs (or their tangents) converted to a ufunc's ``dtype=``, as NumPy does before computing."""
    if dtype is None:
        return values
    return [v if v is NoTangent else np.asarray(v).astype(dtype) if isinstance(v, np.ndarray) else dtype.type(v)
            for v in values]


def _into_out(f: Any, partials: tuple, args: tuple, out: tuple, xs: list, x_ds: list, mask: Any,
              options: tuple) -> tuple:
    """``f(*xs, out=o)``: like an in-place operator, the result and its tangent overwrite ``o``
    and its tangent (restored by the pullback, which then delivers the cotangent ``o`` gathered);
    with a ``where=`` mask, only the selected elements, the others keeping values and cotangents."""
    o, o_f, o_d, o_fd = out
    if type(o) is tuple and len(o) == 1:  # out=(array,)
        o, o_f, o_d, o_fd = o[0], _first(o_f, NoFData), _first(o_d, NoTangent), _first(o_fd, NoFData)
    if not (isinstance(o, np.ndarray) and isinstance(o_f, np.ndarray) and isinstance(o_d, np.ndarray)
            and isinstance(o_fd, np.ndarray)):
        raise _error(f"yb.hvp/yb.hessian: {describe_callable(f)} with out= a non-float array is not "
                     "supported in second order; assign the result instead")
    xs = [x.copy() if isinstance(x, np.ndarray) else x for x in xs]  # out may alias them
    x_ds = [t.copy() if isinstance(t, np.ndarray) else t for t in x_ds]
    _check_real(f, xs)
    with np.errstate(all="ignore") if mask is not None else _NO_CONTEXT:  # unselected: computed, then dropped
        y_dual = registered_frule(f, *(Dual(x, t) for x, t in zip(xs, x_ds)))
    y, y_d = y_dual.primal, 0.0 if y_dual.tangent is NoTangent else y_dual.tangent
    saved, saved_d = o.copy(), o_d.copy()
    written = True if mask is None else mask
    np.copyto(o, y, where=written, casting="unsafe")
    np.copyto(o_d, y_d, where=written, casting="unsafe")
    aliasing_views.note_write(o)

    def pullback(dy: Any, dy_d: Any) -> tuple:
        g, g_d = o_f.copy(), o_fd.copy()  # the cotangents of the written array
        o[...] = saved
        o_d[...] = saved_d
        np.copyto(o_f, 0, where=written)  # its old contents were overwritten (where written)
        np.copyto(o_fd, 0, where=written)
        if mask is not None:
            g, g_d = np.where(mask, g, 0), np.where(mask, g_d, 0)
        with np.errstate(all="ignore") if mask is not None else _NO_CONTEXT:
            rs, rsd = _elementwise_cotangents(partials, xs, x_ds, y, y_d, g, g_d, [(a[0], a[1], a[3]) for a in args])
        return rs + options, rsd + options

    return (out[0], out[1], out[2], out[3]), pullback


def _plain_out(o: Any) -> np.ndarray | None:
    """The array ``out=`` names (``o`` or ``(o,)``) when it holds ints or bools, else None."""
    if type(o) is tuple and len(o) == 1:
        o = o[0]
    return o if isinstance(o, np.ndarray) and o.dtype.kind in "biu" else None


def _into_plain_out(f: Any, args: tuple, o: np.ndarray, mask: Any, dtype: Any, options: tuple) -> tuple:
    """``f(*xs, out=o)`` into an int or bool array: NumPy's own call on the primals (its casting
    check refuses float inputs there, so the values written carry no derivative), ``o`` restored by
    the pullback, which delivers no cotangent."""
    saved = o.copy()
    where = {} if mask is None else {"where": mask}
    f(*(a[0] for a in args), out=o, dtype=dtype, **where)
    none = (NoRData,) * (len(args) + 1) + options

    def pullback(dy: Any, dy_d: Any) -> tuple:
        o[...] = saved
        return none, none

    return _fresh_output(Dual(o, NoTangent)), pullback


def _first(parts: Any, empty: Any) -> Any:
    return parts[0] if isinstance(parts, tuple) else empty


def _inplace_rule(iop: Any) -> Rule:
    """``a op= b`` for the nonlinear in-place operators: in place for arrays (the primal and its
    tangent are overwritten, and restored by the pullback), a rebinding for numbers."""
    partials = ELEMENTWISE_PARTIALS[iop]
    op = OUT_OF_PLACE[iop]
    rebinding = _elementwise_rule(iop, partials)
    out_of_place = _elementwise_rule(op, partials)

    def rule(f4: tuple, args: tuple, kwargs: dict) -> tuple:
        a, b = args
        if isinstance(a[0], (list, tuple)) and isinstance(b[0], (np.ndarray, np.generic)) \
                and not carries_floats(a[0]):
            # ``ints op= array``: NumPy's new array (lists of floats are arrays already: the
            # array_like boundary); the ints carry no derivative
            return out_of_place(f4, ((np.asarray(a[0]), NoFData, NoTangent, NoFData), b), kwargs)
        if not (isinstance(a[0], np.ndarray) and isinstance(a[1], np.ndarray)):
            return rebinding(f4, args, kwargs)
        x, x_f, x_d, x_fd = a
        _check_real(iop, [x, b[0]])
        saved, saved_d = x.copy(), x_d.copy()
        z = b[0].copy() if isinstance(b[0], np.ndarray) else b[0]  # b may be a view of a
        z_d = b[2].copy() if isinstance(b[2], np.ndarray) else b[2]
        y_dual = registered_frule(op, Dual(saved, saved_d), Dual(z, z_d))
        y, y_d = y_dual.primal, y_dual.tangent
        x[...] = y
        x_d[...] = 0.0 if y_d is NoTangent else y_d
        aliasing_views.note_write(x)

        def pullback(dy: Any, dy_d: Any) -> tuple:
            g, g_d = x_f.copy(), x_fd.copy()  # cotangents of the post-call array
            x[...] = saved
            x_d[...] = saved_d
            x_f[...] = 0  # its old contents were overwritten
            x_fd[...] = 0
            return _elementwise_cotangents(partials, [saved, z], [saved_d, z_d], y, y_d, g, g_d,
                                           [(x, x_f, x_fd), (b[0], b[1], b[3])])

        return a, pullback

    rule.second_order_kind = "elementwise"  # type: ignore[attr-defined]
    rule.in_place_of = op  # type: ignore[attr-defined] - read by third order
    return rule
