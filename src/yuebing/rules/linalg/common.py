"""What the linear-algebra rule modules share: the derivation framework and small matrix helpers.

Most rules are written once as a *derivation* ``derive(*primals) -> (y, jvp, vjp)`` and turned into
a reverse and a forward rule by ``linalg_rule``: ``jvp(*tangents)`` gives the output tangent (a
``None`` tangent is zero), ``vjp(cotangent, need)`` gives one cotangent per differentiable
parameter (``None`` where ``need`` is false). A nonlinear primitive with a second-order cotangent
map (``with_vjp(f, _f_vjp)``) passes that map instead, ``linalg_rule(f, vjp=_f_vjp)``, and its
derivation returns ``(y, jvp)``: the reverse rule calls the same function second order
differentiates, so each cotangent formula is written once. Complex numbers follow the repository
convention: the real inner product ``Re(conj(a) * b)``, so a holomorphic map's adjoint uses
conjugate transposes.

Functions that read only one triangle of their argument (``cholesky``, ``eigh``, SciPy's ``assume_a``
solvers) are differentiated as that: the derivative sees the Hermitian matrix built from the
triangle NumPy/LAPACK actually reads (``hermitian_from``; a perturbation of the other triangle has
zero effect, and the imaginary part of a Hermitian diagonal is ignored, as LAPACK does).
"""
from __future__ import annotations

import dis
import inspect
import sys
from typing import Any, Callable

import numpy as np

from ...tangents import NoFData, NoRData, NoTangent
from ..cases import randc, randn
from ..core import CoDual, Dual, RuleArgumentError, describe_callable, primal, register_frule, register_rrule
from .. import util
from ..util import accumulate, fit_tangent, is_differentiable, out_cotangent, output, tangent

# --------------------------------------------------------------------------------------------
# The derivation framework
# --------------------------------------------------------------------------------------------


def _label(target: Any) -> str:
    if isinstance(target, tuple):
        return f"{target[0].__qualname__}.{target[1]}"
    return describe_callable(target)


def refuse(label: str, message: str) -> None:
    raise RuleArgumentError(f"{label}: {message}")


def refuse_containers(label: str, values: list, diff: tuple) -> None:
    """Refuse a list or tuple where a differentiable array is expected (``diff``: positions)."""
    for i in diff:
        if i < len(values) and isinstance(values[i], (list, tuple)):
            refuse(label, f"yuebing differentiates this function for NumPy arrays and numbers; convert "
                          f"the {type(values[i]).__name__} argument with np.asarray first")


def carries_gradient(arg: Any) -> bool:
    """Whether a rule argument is a codual of a float/complex number or array with fdata."""
    if not isinstance(arg, CoDual):
        return False
    x = arg.primal
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "fc" and arg.fdata is not NoFData
    return is_differentiable(x)


def tangent_or_none(arg: Any) -> Any:
    """A rule argument's tangent, or None where it has none (or is not differentiable)."""
    t = tangent(arg)
    return None if t is NoTangent or not is_differentiable(primal(arg)) else t


def cotangent_of(out: CoDual, dy: Any) -> Any:
    """The output cotangent; for a tuple output, a list with ``None`` for zero entries."""
    y = out.primal
    if not isinstance(y, tuple):
        return out_cotangent(out, dy)
    result = []
    for k in range(len(y)):
        f = out.fdata[k] if isinstance(out.fdata, tuple) else NoFData
        r = dy[k] if isinstance(dy, tuple) else NoRData
        if isinstance(f, np.ndarray):
            result.append(f)
        elif r is not NoRData and r is not NoTangent:
            result.append(r)
        else:
            result.append(None)
    return result


def fit(dy: Any, y: Any) -> Any:
    """A full tangent of ``y`` from a computed tangent (``None``: zero; tuples entry by entry)."""
    if isinstance(y, tuple):
        parts = dy if dy is not None else [None] * len(y)
        values = [fit(d, v) for d, v in zip(parts, y)]
        return tuple(values) if type(y) is tuple else tuple.__new__(type(y), values)
    return fit_tangent(NoTangent if dy is None else dy, y)


def _fresh_tangent(dy: np.ndarray, y: Any) -> bool:
    """Whether ``dy``, a rule's jvp result, can be ``y``'s tangent as it is: an array of ``y``'s
    type, shape and dtype that nothing but the caller refers to (it, or the one array it is a view
    of, made by the formula: not an argument's tangent, a view of one, or a cached array), so
    ``fit``'s copy is not needed. References: the caller's local, the parameter, getrefcount's."""
    if type(y) is not np.ndarray or dy.shape != y.shape or dy.dtype != y.dtype or not dy.flags.writeable \
            or sys.getrefcount(dy) > 3 + util.POOLED(dy):  # (a pooled buffer: the pool's reference too)
        return False
    base = dy.base
    return base is None or type(base) is np.ndarray and base.base is None \
        and sys.getrefcount(base) <= 3 + util.POOLED(base)


def linalg_rule(*targets: Any, diff: tuple = (0,), vjp: Callable | None = None,
                fast_vjp: Callable | None = None) -> Callable:
    """Register the rules derived from ``derive(*primals) -> (y, jvp, vjp)`` for ``targets``.

    ``diff`` lists the positions of the differentiable parameters. The rules take ``derive``'s
    signature (its parameter names must be the primal's). If ``y`` is the first argument itself
    (``matrix_power(a, 1)``), the output carries that argument's fdata/tangent.

    ``vjp``: the primitive's cotangent map ``vjp(g, y, *primals) -> tuple`` in plain NumPy, the one
    its second-order ``with_vjp`` declaration names (one cotangent per parameter, None for none; a
    tuple output's ``g`` is a tuple with None for outputs that got no cotangent). ``derive`` then
    returns ``(y, jvp)`` only and the reverse rule's pullback calls ``vjp``, so the derivative
    formula is written once for first and second order. ``fast_vjp``, with the same signature,
    is tried first and returns None where it does not apply (a specialised kernel).
    """

    def decorate(derive: Callable) -> Callable:
        label = _label(targets[0])
        unread = set() if vjp is None else _unread_primals(vjp) & _unread_primals(fast_vjp)

        def rrule(*args: Any) -> tuple:
            xs = [primal(a) for a in args]
            refuse_containers(label, xs, diff)
            derived = derive(*xs)
            y = derived[0]
            if args and y is xs[0] and isinstance(args[0], CoDual):
                return CoDual(y, args[0].fdata), lambda dy: (NoRData,) * (len(args) + 1)
            out = output(y)
            # the pullback keeps only what it reads: derive's vjp, or the primals the cotangent
            # maps read (Cholesky's reads the factor, not the matrix: that is freed as in f)
            backward = derived[2] if vjp is None else None
            kept = xs if vjp is None else [None if k in unread else x for k, x in enumerate(xs)]
            args = args if vjp is None else [_unread_argument(a) if k in unread else a for k, a in enumerate(args)]
            del derived, xs

            def pullback(dy: Any) -> tuple:
                rdatas = [NoRData] * (len(args) + 1)
                need = tuple(i < len(args) and carries_gradient(args[i]) for i in diff)
                if any(need):
                    g = cotangent_of(out, dy)
                    if vjp is None:  # derive's vjp: a cotangent per position in diff, None if not needed
                        cotangents = zip(diff, backward(g, need))
                    else:  # one per parameter, needed or not
                        g = tuple(g) if isinstance(y, tuple) else g
                        found = None if fast_vjp is None else fast_vjp(g, y, *kept)
                        cotangents = ((i, c) for i, c in enumerate(vjp(g, y, *kept) if found is None else found)
                                      if i < len(args) and i in diff and carries_gradient(args[i]))
                    for i, c in cotangents:
                        if c is not None and i < len(args):
                            rdatas[i + 1] = accumulate(args[i], c)
                return tuple(rdatas)

            return out, pullback

        def frule(*args: Any) -> Dual:
            xs = [primal(a) for a in args]
            refuse_containers(label, xs, diff)
            y, jvp = derive(*xs)[:2]
            if args and y is xs[0]:
                return Dual(y, tangent(args[0]))
            dxs = [tangent_or_none(args[i]) if i < len(args) else None for i in diff]
            dy = jvp(*dxs) if any(d is not None for d in dxs) else None
            if type(dy) is np.ndarray and _fresh_tangent(dy, y):
                return Dual(y, dy)  # the formula's own new array: fit's copy would only cost
            return Dual(y, fit(dy, y))

        signature = inspect.signature(derive)
        rrule.__signature__ = frule.__signature__ = signature  # type: ignore[attr-defined]
        rrule.__qualname__, frule.__qualname__ = f"rrule[{label}]", f"frule[{label}]"
        for target in targets:
            register_rrule(target, rrule)
            register_frule(target, frule)
        derive.rrule, derive.frule = rrule, frule  # type: ignore[attr-defined]
        return derive

    return decorate


def _unread_primals(vjp: Callable | None) -> set:
    """Positions ``k`` of the primals in ``vjp(g, y, *primals)`` that its code never reads (a
    parameter no instruction loads, and no nested function captures), so a pullback need not
    keep them alive; every position for ``None`` (no function)."""
    if vjp is None:
        return set(range(64))
    code = getattr(vjp, "__code__", None)
    if code is None or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        return set()
    loaded = {i.argval for i in dis.get_instructions(code) if i.opname in _READS} | set(code.co_cellvars)
    names = code.co_varnames[2:code.co_argcount]
    return {k for k, name in enumerate(names) if name not in loaded}


def _unread_argument(arg: Any) -> Any:
    """What a pullback keeps of a rule argument whose primal its cotangent map never reads:
    an array's fdata stands for the array too (same shape and dtype, all ``accumulate`` and
    ``carries_gradient`` look at), so the primal is not kept alive; None for an array without
    fdata (no cotangent to deliver)."""
    if isinstance(arg, CoDual) and type(arg.primal) is np.ndarray:
        x, fdata = arg.primal, arg.fdata
        if fdata is NoFData:
            return None
        if type(fdata) is np.ndarray and fdata.shape == x.shape and fdata.dtype == x.dtype:
            return CoDual(fdata, fdata)
    return arg


_READS = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "LOAD_CLOSURE", "LOAD_DEREF",
                    "LOAD_FAST_LOAD_FAST", "DELETE_FAST"})


# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------


def conj(x: Any) -> Any:
    return np.conj(x) if np.iscomplexobj(x) else x


def mT(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


def mH(x: np.ndarray) -> np.ndarray:
    return conj(np.swapaxes(x, -1, -2))


def add(*terms: Any) -> Any:
    """The sum of the terms that are not ``None`` (``None`` if all are)."""
    total = None
    for t in terms:
        if t is not None:
            total = t if total is None else total + t
    return total


def real_diag(x: np.ndarray) -> np.ndarray:
    return np.eye(x.shape[-1]) * np.real(x)


def diag_vector(x: np.ndarray) -> np.ndarray:
    """The diagonal of a square matrix (or stack); einsum, which second order differentiates."""
    return np.einsum("...ii->...i", x)


def as_diag(d: np.ndarray) -> np.ndarray:
    return d[..., :, None] * np.eye(d.shape[-1], dtype=d.dtype)


def no_out(label: str, out: Any) -> None:
    if out is not None:
        refuse(label, "yuebing does not support out= here; assign the result instead (y[...] = f(x))")


def real_only(label: str, *xs: Any) -> None:
    if any(np.iscomplexobj(x) for x in xs):
        refuse(label, "yuebing's rule supports real inputs only (complex results are not unique "
                      "up to a smooth phase, or the formula is not implemented)")


def hermitian_from(a: np.ndarray, lower: bool) -> np.ndarray:
    """The Hermitian matrix LAPACK sees when it reads one triangle of ``a`` (real diagonal)."""
    t = np.tril(a, -1) if lower else np.triu(a, 1)
    return t + mH(t) + real_diag(a)


def hermitian_from_adjoint(s: np.ndarray, lower: bool) -> np.ndarray:
    """Adjoint of ``hermitian_from``: the cotangent of ``a`` given that of the Hermitian matrix."""
    both = s + mH(s)
    return (np.tril(both, -1) if lower else np.triu(both, 1)) + real_diag(s)


def normalise_axes(axes: Any, n: int) -> list:
    """An axis or axes as a list of nonnegative ints (for ``n`` dimensions)."""
    axes = [axes] if isinstance(axes, (int, np.integer)) else list(axes)
    return [int(ax) % n if n else int(ax) for ax in axes]


# --------------------------------------------------------------------------------------------
# For the vjp functions of second order (plain NumPy: no try/except, no ``out=``/``where=``)
# --------------------------------------------------------------------------------------------


def cotangent_entry(g: Any, k: int) -> Any:
    """Entry ``k`` of a tuple output's cotangent; None where that output got none."""
    if not isinstance(g, tuple):
        return None
    c = g[k]
    if c is None or c is NoRData or c is NoTangent:
        return None
    return c


# --------------------------------------------------------------------------------------------
# Test data
# --------------------------------------------------------------------------------------------


def well_conditioned(n: int, *batch: int, dtype: Any = np.float64, complex_: bool = False) -> np.ndarray:
    """A well-conditioned square matrix (or stack): randn + n I."""
    x = randc(*batch, n, n) if complex_ else randn(*batch, n, n).astype(dtype)
    return x + np.asarray(n * np.eye(n), dtype=x.dtype)


# --------------------------------------------------------------------------------------------
# Rules derived from a definition in plain NumPy
# --------------------------------------------------------------------------------------------


def derived(target: Any, definition: Callable, validate: bool = True) -> None:
    """``second_order.defined_as`` with NumPy's own argument checks on by default (``validate``:
    run ``target`` on the primals first, for its errors on bad shapes and dimensions)."""
    from ..second_order import defined_as

    defined_as(target, definition, validate=validate)


# --------------------------------------------------------------------------------------------
# Phase gauges of complex eigen- and singular vectors
# --------------------------------------------------------------------------------------------


def real_pivot(v: np.ndarray) -> tuple:
    """Per column of ``v`` (..., m, k): the first row where it is exactly real and nonzero (where
    LAPACK fixed its phase: the first component for ``eigh(UPLO='L')``'s eigenvectors and tall or
    square ``svd``'s right singular vectors, the last for ``UPLO='U'``). Returns ``(mask, p)``:
    ``mask`` (..., m, k) marks that row, ``p`` (..., 1, k) is its value (1 where there is none:
    then the mask column is all False and no phase is fixed)."""
    ok = (np.imag(v) == 0) & (np.real(v) != 0)
    rows = np.argmax(ok, axis=-2)[..., None, :]
    has = np.take_along_axis(ok, rows, axis=-2)
    mask = (np.arange(v.shape[-2])[:, None] == rows) & has
    p = np.where(has, np.real(np.take_along_axis(v, rows, axis=-2)), 1.0)
    return mask, p


def phase_turn(dv: Any, pivot: tuple) -> Any:
    """``beta`` (..., 1, k) such that ``dv + 1j * v * beta`` is real at the pivot rows."""
    mask, p = pivot
    return -np.sum(np.where(mask, np.imag(dv), 0.0), axis=-2, keepdims=True) / p


def phase_turn_adjoint(c: Any, pivot: tuple) -> Any:
    """The cotangent of ``dv`` given ``c``, that of ``beta`` (adjoint of ``phase_turn``); the
    cotangent of ``1j * v * beta`` is ``c = -Im(sum(conj(g) * v))`` per column."""
    mask, p = pivot
    return np.where(mask, -1j * c / p, 0.0)
