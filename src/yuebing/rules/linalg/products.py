"""Linear algebra: products (``np.dot``, ``vdot``, ``inner``, ``outer``, ``matmul`` and the ``@`` /
``@=`` operators, ``tensordot``, ``einsum``, ``kron``, ``trace``, ``ndarray.dot``/``.trace``) and
``np.linalg`` (``norm``, ``det``, ``slogdet``, ``inv``, ``solve``, ``cholesky``, ``qr``, ``eigh``,
``eigvalsh``, ``svd``, ``lstsq``, ``pinv``, ``matrix_power``, ``multi_dot``).

Most rules are written once as a *derivation* ``derive(*primals) -> (y, jvp, vjp)`` and turned into
a reverse and a forward rule by ``linalg_rule``: ``jvp(*tangents)`` gives the output tangent (a
``None`` tangent is zero), ``vjp(cotangent, need)`` gives one cotangent per differentiable
parameter (``None`` where ``need`` is false). Complex numbers follow the repository convention: the
real inner product ``Re(conj(a) * b)``, so a holomorphic map's adjoint uses conjugate transposes.

Functions that read only one triangle of their argument (``cholesky``, ``eigh``, SciPy's ``assume_a``
solvers) are differentiated as that: the derivative sees the Hermitian matrix built from the
triangle NumPy/LAPACK actually reads (a perturbation of the other triangle has zero effect; the
imaginary part of a Hermitian diagonal is ignored, as LAPACK does).

Conventions and limits (everything else raises ``RuleArgumentError``):

* ``norm``: the gradient at the zero vector (and at zero entries for ``ord=1`` or ``p < 1``) is 0;
  ``ord=inf``/``-inf`` and the induced matrix norms split ties evenly; ``ord=0`` has zero derivative.
  A float ``ord = p`` of a vector norm is differentiated (``d/dp (sum |x_i|^p)^(1/p)``); in
  ``ord=inf``/``-inf``/``0`` and the matrix norms ``ord`` picks a different function (a discrete
  choice), so its derivative is 0 by definition (the rules return that zero explicitly).
* ``eigh``/``svd`` (with vectors) and ``qr``: real inputs, distinct eigen/singular values, ``qr`` for
  square or tall matrices; eigen/singular values alone (``eigvalsh``, ``svd(compute_uv=False)``)
  also for complex inputs.
* ``lstsq`` and ``pinv``: full rank; ``lstsq`` for square or tall ``a``.
* ``det``, ``slogdet``: nonsingular matrices (the rule inverts ``a``). ``slogdet``'s sign has
  zero derivative for real input (it is piecewise constant) and turns with ``Im tr(a^-1 da)`` for
  complex input.
* ``out=`` is refused; lists and tuples must be converted with ``np.asarray`` before they can carry
  a derivative (``multi_dot`` takes its list of arrays as NumPy does).

Second order (``yb.hvp``, ``yb.hessian``; the end of the file): the products are ``multilinear``,
``trace`` is ``linear``, and the ``np.linalg`` functions have vjp functions written in plain NumPy
(``with_vjp``) that compute the reverse rules' cotangents with the same conventions; ``@=`` is
written as a product assigned back. ``multi_dot`` has no second-order rule yet.
"""
from __future__ import annotations

import functools
import inspect
import operator
from typing import Any, Callable

import numpy as np

from ..tangents import NoFData, NoRData, NoTangent
from .cases import Case, randc, randn
from .core import (CoDual, Dual, RuleArgumentError, describe_callable, frule_for, primal, register_frule,
                   register_rrule, rrule_for)
from .second_order import defined_by, jvp_defined_by, linear, multilinear, with_vjp
from .util import accumulate, fit_tangent, is_differentiable, out_cotangent, output, tangent, unbroadcast

try:  # NumPy 2
    from numpy._core.einsumfunc import _parse_einsum_input
except ImportError:  # pragma: no cover - NumPy 1
    from numpy.core.einsumfunc import _parse_einsum_input

# --------------------------------------------------------------------------------------------
# The derivation framework
# --------------------------------------------------------------------------------------------


def _label(target: Any) -> str:
    if isinstance(target, tuple):
        return f"{target[0].__qualname__}.{target[1]}"
    return describe_callable(target)


def refuse(label: str, message: str) -> None:
    raise RuleArgumentError(f"{label}: {message}")


def _refuse_containers(label: str, values: list, diff: tuple) -> None:
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


def _tangent_or_none(arg: Any) -> Any:
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


def linalg_rule(*targets: Any, diff: tuple = (0,)) -> Callable:
    """Register the rules derived from ``derive(*primals) -> (y, jvp, vjp)`` for ``targets``.

    ``diff`` lists the positions of the differentiable parameters. The rules take ``derive``'s
    signature (its parameter names must be the primal's). If ``y`` is the first argument itself
    (``matrix_power(a, 1)``), the output carries that argument's fdata/tangent.
    """

    def decorate(derive: Callable) -> Callable:
        label = _label(targets[0])

        def rrule(*args: Any) -> tuple:
            xs = [primal(a) for a in args]
            _refuse_containers(label, xs, diff)
            y, _, vjp = derive(*xs)
            if args and y is xs[0] and isinstance(args[0], CoDual):
                return CoDual(y, args[0].fdata), lambda dy: (NoRData,) * (len(args) + 1)
            out = output(y)

            def pullback(dy: Any) -> tuple:
                rdatas = [NoRData] * (len(args) + 1)
                need = tuple(i < len(args) and carries_gradient(args[i]) for i in diff)
                if any(need):
                    for i, g in zip(diff, vjp(cotangent_of(out, dy), need)):
                        if g is not None and i < len(args):
                            rdatas[i + 1] = accumulate(args[i], g)
                return tuple(rdatas)

            return out, pullback

        def frule(*args: Any) -> Dual:
            xs = [primal(a) for a in args]
            _refuse_containers(label, xs, diff)
            y, jvp, _ = derive(*xs)
            if args and y is xs[0]:
                return Dual(y, tangent(args[0]))
            dxs = [_tangent_or_none(args[i]) if i < len(args) else None for i in diff]
            dy = jvp(*dxs) if any(d is not None for d in dxs) else None
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
    return np.diagonal(x, axis1=-2, axis2=-1)


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


# --------------------------------------------------------------------------------------------
# Products: dot, vdot, inner, outer, tensordot, matmul, kron, trace
# --------------------------------------------------------------------------------------------


def _tensordot_parts(a: Any, b: Any, ax_a: list, ax_b: list) -> tuple[Callable, Callable]:
    """jvp and vjp of ``tensordot(a, b, (ax_a, ax_b))`` (output: free axes of a, then of b)."""
    na, nb = np.ndim(a), np.ndim(b)
    free_a = [i for i in range(na) if i not in ax_a]
    free_b = [i for i in range(nb) if i not in ax_b]

    def jvp(da: Any, db: Any) -> Any:
        return add(None if da is None else np.tensordot(da, b, (ax_a, ax_b)),
                   None if db is None else np.tensordot(a, db, (ax_a, ax_b)))

    def vjp(g: Any, need: tuple) -> tuple:
        g = np.asarray(g)
        ga = gb = None
        if need[0]:  # axes of t: free_a, then b's contracted axes in increasing order
            t = np.tensordot(g, conj(b), (list(range(len(free_a), g.ndim)), free_b))
            ga = np.transpose(t, np.argsort(free_a + [ax_a[j] for j in np.argsort(ax_b)]))
        if need[1]:  # axes of t: a's contracted axes in increasing order, then free_b
            t = np.tensordot(conj(a), g, (free_a, list(range(len(free_a)))))
            gb = np.transpose(t, np.argsort([ax_b[j] for j in np.argsort(ax_a)] + free_b))
        return ga, gb

    return jvp, vjp


def _normalise_axes(axes: Any, n: int) -> list:
    axes = [axes] if isinstance(axes, (int, np.integer)) else list(axes)
    return [int(ax) % n if n else int(ax) for ax in axes]


@linalg_rule(np.dot, (np.ndarray, "dot"), diff=(0, 1))
def _dot(a, b, out=None):
    no_out("numpy.dot", out)
    y = np.dot(a, b)
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:
        ax_a, ax_b = [], []
    else:
        ax_a, ax_b = [na - 1], [0 if nb == 1 else nb - 2]
    return (y, *_tensordot_parts(a, b, ax_a, ax_b))


@linalg_rule(np.inner, diff=(0, 1))
def _inner(a, b):
    y = np.inner(a, b)
    na, nb = np.ndim(a), np.ndim(b)
    ax_a, ax_b = ([], []) if na == 0 or nb == 0 else ([na - 1], [nb - 1])
    return (y, *_tensordot_parts(a, b, ax_a, ax_b))


@linalg_rule(np.tensordot, diff=(0, 1))
def _tensordot(a, b, axes=2):
    y = np.tensordot(a, b, axes)
    na, nb = np.ndim(a), np.ndim(b)
    try:
        n = operator.index(axes)
        ax_a, ax_b = list(range(na - n, na)), list(range(n))
    except TypeError:
        ax_a, ax_b = _normalise_axes(axes[0], na), _normalise_axes(axes[1], nb)
    return (y, *_tensordot_parts(a, b, ax_a, ax_b))


@linalg_rule(np.outer, diff=(0, 1))
def _outer(a, b, out=None):
    no_out("numpy.outer", out)
    y = np.outer(a, b)
    fa, fb = np.ravel(a), np.ravel(b)
    jvp, flat_vjp = _tensordot_parts(fa, fb, [], [])

    def vjp(g: Any, need: tuple) -> tuple:
        ga, gb = flat_vjp(g, need)
        return (None if ga is None else ga.reshape(np.shape(a)),
                None if gb is None else gb.reshape(np.shape(b)))

    return y, lambda da, db: jvp(None if da is None else np.ravel(da), None if db is None else np.ravel(db)), vjp


@linalg_rule(np.vdot, diff=(0, 1))
def _vdot(a, b):
    y = np.vdot(a, b)

    def jvp(da: Any, db: Any) -> Any:
        return add(None if da is None else np.vdot(da, b), None if db is None else np.vdot(a, db))

    def vjp(g: Any, need: tuple) -> tuple:  # y = sum(conj(a) * b): not holomorphic in a
        ga = np.reshape(np.asarray(b) * np.conj(g), np.shape(a)) if need[0] else None
        gb = np.reshape(np.asarray(a) * g, np.shape(b)) if need[1] else None
        return ga, gb

    return y, jvp, vjp


def _matmul_parts(a: Any, b: Any) -> tuple[Callable, Callable]:
    """jvp and vjp of ``a @ b`` with NumPy's 1-D promotion and batch broadcasting."""
    a2 = a if np.ndim(a) > 1 else np.reshape(a, (1, -1))
    b2 = b if np.ndim(b) > 1 else np.reshape(b, (-1, 1))

    def jvp(da: Any, db: Any) -> Any:
        return add(None if da is None else np.matmul(da, b), None if db is None else np.matmul(a, db))

    def vjp(g: Any, need: tuple) -> tuple:
        batch = np.broadcast_shapes(np.shape(a2)[:-2], np.shape(b2)[:-2])
        g2 = np.reshape(g, batch + (np.shape(a2)[-2], np.shape(b2)[-1]))
        ga = unbroadcast(g2 @ mH(b2), np.shape(a2)).reshape(np.shape(a)) if need[0] else None
        gb = unbroadcast(mH(a2) @ g2, np.shape(b2)).reshape(np.shape(b)) if need[1] else None
        return ga, gb

    return jvp, vjp


def _array_operands(label: str, a: Any, b: Any) -> None:
    if not isinstance(a, np.ndarray) and not isinstance(b, np.ndarray):
        refuse(label, f"yuebing's rule handles NumPy arrays only, not {type(a).__qualname__} @ "
                      f"{type(b).__qualname__}; register a rule for the type's __matmul__ with "
                      "yuebing.rules.register_rrule")


@linalg_rule(np.matmul, diff=(0, 1))
def _matmul(x1, x2, out=None):
    no_out("numpy.matmul", out)
    return (np.matmul(x1, x2), *_matmul_parts(x1, x2))


@linalg_rule(operator.matmul, diff=(0, 1))
def _matmul_operator(a, b):
    _array_operands("operator.matmul", a, b)
    return (operator.matmul(a, b), *_matmul_parts(a, b))


@rrule_for(operator.imatmul)
def _imatmul_rrule(a, b):
    x = a.primal
    if not isinstance(x, np.ndarray):  # no in-place @= : Python rebinds a to a @ b
        return _matmul_operator.rrule(a, b)
    _refuse_containers("operator.imatmul", [x, primal(b)], (1,))
    saved = x.copy()
    _, vjp = _matmul_parts(saved, primal(b))
    operator.imatmul(x, primal(b))  # NumPy checks shapes and casting, and handles b aliasing a

    def pullback(dy: Any) -> tuple:
        if a.fdata is NoFData:
            x[...] = saved
            return NoRData, NoRData, NoRData
        g = a.fdata.copy()  # cotangent of a after the call
        a.fdata[...] = 0  # its old contents were overwritten
        x[...] = saved  # restore first: b may be (a view of) a
        ga, gb = vjp(g, (True, carries_gradient(b)))
        accumulate(a, ga)
        rb = accumulate(b, gb) if gb is not None else NoRData
        return NoRData, NoRData, rb

    return CoDual(x, a.fdata), pullback


@frule_for(operator.imatmul)
def _imatmul_frule(a, b):
    x = a.primal
    if not isinstance(x, np.ndarray):
        return _matmul_operator.frule(a, b)
    _refuse_containers("operator.imatmul", [x, primal(b)], (1,))
    jvp, _ = _matmul_parts(x, primal(b))
    dy = jvp(_tangent_or_none(a), _tangent_or_none(b))  # before x changes: b may alias it
    operator.imatmul(x, primal(b))
    if isinstance(a.tangent, np.ndarray):
        a.tangent[...] = fit_tangent(NoTangent if dy is None else dy, x)
    return Dual(x, a.tangent)


@linalg_rule(np.kron, diff=(0, 1))
def _kron(a, b):
    y = np.kron(a, b)
    nd = max(np.ndim(a), np.ndim(b))
    sa = (1,) * (nd - np.ndim(a)) + np.shape(a)
    sb = (1,) * (nd - np.ndim(b)) + np.shape(b)

    def jvp(da: Any, db: Any) -> Any:
        return add(None if da is None else np.kron(da, b), None if db is None else np.kron(a, db))

    def vjp(g: Any, need: tuple) -> tuple:
        # y reshaped to (a0, b0, a1, b1, ...) is the outer product a[i] * b[k] per axis
        g4 = np.reshape(g, [n for pair in zip(sa, sb) for n in pair])
        ia, ib = list(range(0, 2 * nd, 2)), list(range(1, 2 * nd, 2))
        ga = np.einsum(g4, list(range(2 * nd)), conj(np.reshape(b, sb)), ib, ia).reshape(np.shape(a)) if need[0] else None
        gb = np.einsum(g4, list(range(2 * nd)), conj(np.reshape(a, sa)), ia, ib).reshape(np.shape(b)) if need[1] else None
        return ga, gb

    return y, jvp, vjp


def _trace_parts(x: np.ndarray, offset: int, axis1: int, axis2: int, dtype: Any) -> tuple[Callable, Callable]:
    def jvp(dx: Any) -> Any:
        return np.trace(dx, offset, axis1, axis2, dtype=dtype)

    def vjp(g: Any, need: tuple) -> tuple:
        gx = np.zeros(x.shape, dtype=np.result_type(x, np.asarray(g)))
        moved = np.moveaxis(gx, (axis1, axis2), (-2, -1))  # a view of gx
        n1, n2 = moved.shape[-2:]
        start = max(0, -offset)
        rows = np.arange(start, start + max(0, min(n1 - start, n2 - start - offset)))
        moved[..., rows, rows + offset] = np.asarray(g)[..., None]
        return (gx,)

    return jvp, vjp


@linalg_rule(np.trace, (np.ndarray, "trace"))
def _trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    no_out("numpy.trace", out)
    y = np.trace(a, offset, axis1, axis2, dtype=dtype)
    x = np.asarray(a)
    ax1, ax2 = axis1 % x.ndim, axis2 % x.ndim
    return (y, *_trace_parts(x, offset, ax1, ax2, dtype))


# --------------------------------------------------------------------------------------------
# einsum
# --------------------------------------------------------------------------------------------

_EINSUM_KEYWORDS = {"optimize"}


def _einsum_layout(args: list) -> tuple[list, list]:
    """Positions of the operands among einsum's arguments, and their expanded subscripts."""
    if isinstance(primal(args[0]), str):
        positions = list(range(1, len(args)))
    else:  # interleaved form: op, sublist, op, sublist, ..., [output sublist]
        positions = list(range(0, len(args) - 1, 2))
    ins, out, _ = _parse_einsum_input([primal(a) for a in args])
    return positions, ins.split(",") + [out]


def _einsum_check(kwargs: dict) -> dict:
    extra = set(kwargs) - _EINSUM_KEYWORDS
    if extra:
        refuse("numpy.einsum", f"yuebing supports only the optimize= keyword, not {sorted(extra)}; "
                               "assign the result instead of out=, and cast with .astype for dtype=")
    return {k: primal(v) for k, v in kwargs.items()}


def _einsum_operand_cotangent(i: int, subs: list, ops: list, g: Any, kwargs: dict) -> np.ndarray:
    """Cotangent of operand ``i``: an einsum of the output cotangent with the other operands."""
    *in_subs, out_sub = subs
    mine = in_subs[i]
    x = np.asarray(ops[i])
    others = [j for j in range(len(ops)) if j != i]
    unique = "".join(dict.fromkeys(mine))
    present = set(out_sub).union(*(in_subs[j] for j in others))
    kept = "".join(c for c in unique if c in present)
    sizes = {c: x.shape[mine.index(c)] for c in unique}
    spec = ",".join([out_sub] + [in_subs[j] for j in others]) + "->" + kept
    grad = np.einsum(spec, np.asarray(g), *(conj(np.asarray(ops[j])) for j in others), **kwargs)
    # labels only this operand sums over: the cotangent is constant along them
    grad = grad.reshape([grad.shape[kept.index(c)] if c in kept else 1 for c in unique])
    grad = np.broadcast_to(grad, [max(n, sizes[c]) for n, c in zip(grad.shape, unique)])
    grad = unbroadcast_labels(grad, [sizes[c] for c in unique])
    if len(unique) == len(mine):
        return np.transpose(grad, [unique.index(c) for c in mine])
    # repeated labels (a diagonal): write into the diagonal of a zero array
    full = np.zeros(x.shape, dtype=np.result_type(x, grad))
    strides = [sum(full.strides[k] for k, c in enumerate(mine) if c == u) for u in unique]
    diagonal = np.lib.stride_tricks.as_strided(full, shape=grad.shape, strides=strides)
    diagonal[...] = grad
    return full


def unbroadcast_labels(g: np.ndarray, sizes: list) -> np.ndarray:
    """Sum ``g`` (same ndim) over the axes where ``sizes`` is 1 but ``g`` is longer."""
    axes = tuple(k for k, (n, s) in enumerate(zip(g.shape, sizes)) if s == 1 and n != 1)
    return np.sum(g, axis=axes, keepdims=True) if axes else g


def _einsum_view_of(y: Any, args: list, positions: list) -> CoDual | None:
    """The operand ``y`` is a view of (einsum returns views for pure transposes/diagonals)."""
    if len(positions) == 1 and isinstance(y, np.ndarray) and y.base is not None:
        x = primal(args[positions[0]])
        if isinstance(x, np.ndarray) and np.shares_memory(y, x):
            return args[positions[0]]
    return None


@rrule_for(np.einsum)
def _einsum_rrule(*args, **kwargs):
    options = _einsum_check(kwargs)
    positions, subs = _einsum_layout(list(args))
    ops = [primal(args[p]) for p in positions]
    y = np.einsum(*(primal(a) for a in args), **options)
    n_rdata = len(args) + len(kwargs) + 1
    source = _einsum_view_of(y, list(args), positions)
    if source is not None:  # y is a view of the operand: its fdata is the same view of the fdata
        fd = source.fdata
        view = np.einsum(*(fd if a is source else primal(a) for a in args)) if isinstance(fd, np.ndarray) else NoFData
        return CoDual(y, view), lambda dy: (NoRData,) * n_rdata
    out = output(y)

    def pullback(dy: Any) -> tuple:
        g = out_cotangent(out, dy)
        rdatas = [NoRData] * n_rdata
        for i, p in enumerate(positions):
            if carries_gradient(args[p]):
                rdatas[p + 1] = accumulate(args[p], _einsum_operand_cotangent(i, subs, ops, g, options))
        return tuple(rdatas)

    return out, pullback


@frule_for(np.einsum)
def _einsum_frule(*args, **kwargs):
    options = _einsum_check(kwargs)
    positions, subs = _einsum_layout(list(args))
    ops = [primal(args[p]) for p in positions]
    y = np.einsum(*(primal(a) for a in args), **options)
    source = _einsum_view_of(y, list(args), positions)
    if source is not None:
        t = source.tangent
        view = np.einsum(*(t if a is source else primal(a) for a in args)) if isinstance(t, np.ndarray) else NoTangent
        return Dual(y, view)
    spec = ",".join(subs[:-1]) + "->" + subs[-1]
    dy = None
    for i, p in enumerate(positions):
        dx = _tangent_or_none(args[p])
        if dx is not None:
            dy = add(dy, np.einsum(spec, *(dx if j == i else op for j, op in enumerate(ops)), **options))
    return Dual(y, fit(dy, y))


# --------------------------------------------------------------------------------------------
# np.linalg.norm
# --------------------------------------------------------------------------------------------


def _sgn(x: np.ndarray, r: np.ndarray) -> np.ndarray:
    """x / |x|, 0 where x is 0."""
    return np.divide(x, r, out=np.zeros(np.shape(x), dtype=np.result_type(x, 1.0)), where=r != 0)


def _split_ties(mask: np.ndarray, axes: tuple) -> np.ndarray:
    return mask / np.sum(mask, axis=axes, keepdims=True)


def _vector_direction(x: np.ndarray, ym: np.ndarray, ord: Any, axes: tuple) -> np.ndarray:
    """``u`` with ``d norm = Re sum(conj(u) * dx)`` over ``axes`` (``ym``: the norm, kept dims)."""
    r = np.abs(x)
    if ord is None or ord == 2:
        return _sgn(x, np.broadcast_to(ym, x.shape))
    if ord == 1:
        return _sgn(x, r)
    if ord == np.inf or ord == -np.inf:
        return _sgn(x, r) * _split_ties(r == ym, axes)
    if ord == 0:
        return np.zeros(x.shape, dtype=np.result_type(x, 1.0))
    p = float(ord)
    # d/d|x_i| (sum |x|^p)^(1/p) = (|x_i| / y)^(p-1); 0 at x_i = 0 and at y = 0 by convention
    ratio = np.divide(r, ym, out=np.zeros(r.shape, dtype=np.result_type(r, 1.0)), where=(ym != 0) & (r != 0))
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(ratio != 0, ratio ** (p - 1), 0.0)
    return _sgn(x, r) * scale


def _matrix_direction(x: np.ndarray, ym: np.ndarray, ord: Any) -> np.ndarray:
    """Matrix norms over the last two axes: ``u`` as in ``_vector_direction``."""
    if ord is None or ord == "fro":
        return _sgn(x, np.broadcast_to(ym, x.shape))
    if ord in ("nuc", 2, -2):
        u, s, vh = np.linalg.svd(x, full_matrices=False)
        if ord == "nuc":
            return u @ vh
        if ord == 2:  # the largest singular value (assumed simple)
            return u[..., :, :1] @ vh[..., :1, :]
        return u[..., :, -1:] @ vh[..., -1:, :]
    if ord in (1, -1, np.inf, -np.inf):
        r = np.abs(x)
        sums_axis = -2 if ord in (1, -1) else -1  # ord 1: column sums; inf: row sums
        sums = np.sum(r, axis=sums_axis, keepdims=True)
        return _sgn(x, r) * _split_ties(sums == ym, (-1,) if sums_axis == -2 else (-2,))
    refuse("numpy.linalg.norm", f"yuebing does not differentiate the matrix norm ord={ord!r}")


def norm_axes(nd: int, ord: Any, axis: Any) -> tuple[tuple, bool]:
    """The axes ``np.linalg.norm`` reduces over, and whether it takes a matrix norm of them."""
    if axis is None:
        axes = tuple(range(nd)) if ord is None or nd == 1 else (0, 1)
    else:
        axes = tuple(_normalise_axes(axis, nd))
    return axes, len(axes) == 2 and not (axis is None and ord is None)


def ord_partial(x, ym, ord, axes, matrix):
    """``d norm / d ord`` (kept dims; plain NumPy, also differentiated by second order): for a
    vector norm of finite nonzero ``ord = p``, ``(y / p) sum q^p log q`` with ``q = |x| / y`` (zero
    entries add nothing, their limit for ``p > 0``; ``y = 0`` gives 0). ``ord = ±inf``, ``0`` and
    the matrix norms are discrete choices: 0 by definition."""
    if matrix or ord is None or isinstance(ord, str) or ord == 0 or np.isinf(ord):
        return np.zeros(np.shape(ym))
    p = float(ord)
    r = np.abs(x)
    inside = (r != 0) & (ym != 0)
    q = np.where(inside, r / np.where(ym != 0, ym, 1.0), 1.0)  # q = 1 elsewhere: log q = 0
    return ym / p * np.sum(q ** p * np.log(q), axis=axes, keepdims=True)


@linalg_rule(np.linalg.norm, diff=(0, 1))
def _norm(x, ord=None, axis=None, keepdims=False):
    y = np.linalg.norm(x, ord, axis, keepdims)
    x = np.asarray(x)
    nd = x.ndim
    axes, matrix = norm_axes(nd, ord, axis)
    ym = y if keepdims else np.expand_dims(y, axes)
    if matrix:
        moved = np.moveaxis(x, axes, (-2, -1))
        u = np.moveaxis(_matrix_direction(moved, np.moveaxis(np.asarray(ym), axes, (-2, -1)), ord), (-2, -1), axes)
    else:
        u = _vector_direction(x, ym, ord, axes)

    def jvp(dx: Any, d_ord: Any = None) -> Any:
        dy = None if dx is None else np.real(np.sum(conj(u) * dx, axis=axes, keepdims=keepdims))
        if d_ord is not None:
            dy = add(dy, np.reshape(ord_partial(x, ym, ord, axes, matrix), np.shape(y)) * d_ord)
        return dy

    def vjp(g: Any, need: tuple) -> tuple:
        gk = np.real(g if keepdims else np.expand_dims(g, axes))
        g_ord = float(np.sum(gk * ord_partial(x, ym, ord, axes, matrix))) if need[1] else None
        return (gk * u if need[0] else None), g_ord

    return y, jvp, vjp


# --------------------------------------------------------------------------------------------
# det, slogdet, inv, solve, matrix_power, multi_dot
# --------------------------------------------------------------------------------------------


def adjugate(a: np.ndarray, det: Any) -> np.ndarray:
    """adj(a) = det(a) a^-1, also for singular matrices (from the SVD a = U S V^H)."""
    try:
        return np.asarray(det)[..., None, None] * np.linalg.inv(a)
    except np.linalg.LinAlgError:
        u, s, vh = np.linalg.svd(a)
        n = s.shape[-1]
        others = np.stack([np.prod(np.delete(s, i, axis=-1), axis=-1) for i in range(n)], axis=-1)
        phase = np.linalg.det(u) * np.linalg.det(vh)
        return phase[..., None, None] * (mH(vh) * others[..., None, :]) @ mH(u)


def det_parts(a: np.ndarray, y: Any) -> tuple[Callable, Callable]:
    """jvp and vjp of ``y = det(a)``: ``dy = tr(adj(a) da)``."""
    adj = adjugate(a, y)

    def jvp(da: Any) -> Any:
        return np.einsum("...ij,...ji->...", adj, da)

    def vjp(g: Any, need: tuple) -> tuple:
        return (np.asarray(g)[..., None, None] * mH(adj),)

    return jvp, vjp


@linalg_rule(np.linalg.det)
def _det(a):
    y = np.linalg.det(a)
    return (y, *det_parts(np.asarray(a), y))


@linalg_rule(np.linalg.slogdet)
def _slogdet(a):
    y = np.linalg.slogdet(a)
    sign = y[0]
    try:
        a_inv = np.linalg.inv(a)
    except np.linalg.LinAlgError:
        a_inv = None  # log|det| is not differentiable here: say so if a derivative is asked for
    complex_input = np.iscomplexobj(a)

    def inverse() -> np.ndarray:
        if a_inv is None:
            refuse("numpy.linalg.slogdet", "not differentiable at a singular matrix (log|det| = -inf)")
        return a_inv

    def jvp(da: Any) -> Any:
        t = np.einsum("...ij,...ji->...", inverse(), da)
        # real input: the sign is piecewise constant; complex: it turns with Im(t)
        return [sign * 1j * np.imag(t) if complex_input else None, np.real(t)]

    def vjp(g: list, need: tuple) -> tuple:
        g_sign, g_log = g
        w = np.asarray(0.0 if g_log is None else np.real(g_log), dtype=np.result_type(a, 1.0))
        if complex_input and g_sign is not None:
            w = w + 1j * np.real(np.conj(g_sign) * sign * 1j)
        return (w[..., None, None] * mH(inverse()),)

    return y, jvp, vjp


@linalg_rule(np.linalg.inv)
def _inv(a):
    y = np.linalg.inv(a)

    def jvp(da: Any) -> Any:
        return -(y @ da @ y)

    def vjp(g: Any, need: tuple) -> tuple:
        return (-(mH(y) @ g @ mH(y)),)

    return y, jvp, vjp


def solve_parts(a: np.ndarray, x: np.ndarray, vector: bool, solve: Callable, solve_adjoint: Callable) -> tuple:
    """jvp and vjp of ``x = solve(a, b)``; ``vector``: b (and x) is a stack of vectors."""
    x2 = x[..., None] if vector else x

    def jvp(da: Any, db: Any) -> Any:
        rhs = add(None if db is None else (np.asarray(db)[..., None] if vector else db),
                  None if da is None else -(da @ x2))
        dx = solve(rhs)
        return dx[..., 0] if vector else dx

    def vjp(g: Any, need: tuple) -> tuple:
        gb = solve_adjoint(g[..., None] if vector else g)
        ga = -(gb @ mH(x2)) if need[0] else None
        return ga, (gb[..., 0] if vector else gb) if need[1] else None

    return jvp, vjp


@linalg_rule(np.linalg.solve, diff=(0, 1))
def _solve(a, b):
    y = np.linalg.solve(a, b)
    vector = np.ndim(b) == 1
    return (y, *solve_parts(np.asarray(a), y, vector,
                            lambda r: np.linalg.solve(a, r), lambda g: np.linalg.solve(mH(np.asarray(a)), g)))


@linalg_rule(np.linalg.matrix_power)
def _matrix_power(a, n):
    y = np.linalg.matrix_power(a, n)
    n = operator.index(n)
    if n == 0 or y is a:
        return y, lambda da: None, lambda g, need: (None,)
    base = np.linalg.inv(a) if n < 0 else np.asarray(a)
    m = abs(n)
    powers = [None, base]  # powers[k] = base^k; None stands for the identity
    for _ in range(m - 2):
        powers.append(powers[-1] @ base)

    def times(p: Any, x: Any, left: bool) -> Any:
        return x if p is None else (p @ x if left else x @ p)

    def jvp(da: Any) -> Any:
        d_base = da if n > 0 else -(base @ da @ base)
        return add(*(times(powers[k], times(powers[m - 1 - k], d_base, False), True) for k in range(m)))

    def vjp(g: Any, need: tuple) -> tuple:
        g_base = add(*(times(_mH_or_none(powers[k]), times(_mH_or_none(powers[m - 1 - k]), g, False), True)
                       for k in range(m)))
        return (g_base if n > 0 else -(mH(base) @ g_base @ mH(base)),)

    return y, jvp, vjp


def _mH_or_none(p: Any) -> Any:
    return None if p is None else mH(p)


def _multi_dot_chain(arrays: list) -> tuple[list, list, tuple]:
    """Matrices (1-D ends promoted), prefix and suffix products (None: identity)."""
    ms = [np.asarray(m) for m in arrays]
    if ms[0].ndim == 1:
        ms[0] = ms[0][None, :]
    if ms[-1].ndim == 1:
        ms[-1] = ms[-1][:, None]
    prefix, suffix = [None], [None]
    for m in ms[:-1]:
        prefix.append(m if prefix[-1] is None else prefix[-1] @ m)
    for m in ms[:0:-1]:
        suffix.append(m if suffix[-1] is None else m @ suffix[-1])
    return ms, prefix, suffix[::-1]


def _multi_dot_check(arrays: Any) -> None:
    if not isinstance(arrays, (list, tuple)) or not all(isinstance(m, np.ndarray) for m in arrays):
        refuse("numpy.linalg.multi_dot", "yuebing needs a list or tuple of NumPy arrays")


_NOT_GIVEN = object()  # multi_dot's out= default: tells whether the call passed out=


@rrule_for(np.linalg.multi_dot)
def _multi_dot_rrule(arrays, out=_NOT_GIVEN):
    no_out("numpy.linalg.multi_dot", None if out is _NOT_GIVEN else primal(out))
    n_rdata = 2 if out is _NOT_GIVEN else 3
    xs = arrays.primal
    _multi_dot_check(xs)
    y = np.linalg.multi_dot(xs)
    result = output(y)
    fds = arrays.fdata

    def pullback(dy: Any) -> tuple:
        if fds is NoFData:
            return (NoRData,) * n_rdata
        ms, prefix, suffix = _multi_dot_chain(xs)
        g = np.reshape(out_cotangent(result, dy), (ms[0].shape[0], ms[-1].shape[1]))
        for i, (x, fd) in enumerate(zip(xs, fds)):
            if isinstance(fd, np.ndarray):
                gi = g if suffix[i] is None else g @ mH(suffix[i])
                gi = gi if prefix[i] is None else mH(prefix[i]) @ gi
                fd += np.reshape(np.real(gi) if fd.dtype.kind == "f" else gi, x.shape)
        return (NoRData,) * n_rdata

    return result, pullback


@frule_for(np.linalg.multi_dot)
def _multi_dot_frule(arrays, out=_NOT_GIVEN):
    no_out("numpy.linalg.multi_dot", None if out is _NOT_GIVEN else primal(out))
    xs = arrays.primal
    _multi_dot_check(xs)
    y = np.linalg.multi_dot(xs)
    ts = arrays.tangent
    if ts is NoTangent:
        return Dual(y, fit(None, y))
    ms, prefix, suffix = _multi_dot_chain(xs)
    dy = None
    for i, (m, t) in enumerate(zip(ms, ts)):
        if isinstance(t, np.ndarray):
            term = np.reshape(t, m.shape)
            term = term if prefix[i] is None else prefix[i] @ term
            dy = add(dy, term if suffix[i] is None else term @ suffix[i])
    return Dual(y, fit(None if dy is None else np.reshape(dy, np.shape(y)), y))




# --------------------------------------------------------------------------------------------
# Factorisations: cholesky, qr, eigh, eigvalsh, svd; lstsq, pinv
# --------------------------------------------------------------------------------------------


def _phi(x: np.ndarray) -> np.ndarray:
    """Lower triangle with the (real part of the) diagonal halved."""
    return np.tril(x, -1) + 0.5 * real_diag(x)


def _lower_inverse(low: np.ndarray) -> np.ndarray:
    """The inverse of a lower-triangular matrix: LAPACK's triangular inverse (a third of a general
    inverse's work) when SciPy is there and ``low`` is one real float64 matrix."""
    if low.ndim == 2 and low.dtype == np.float64:
        try:
            from scipy.linalg.lapack import dtrtri
        except ImportError:
            pass
        else:
            inverse, info = dtrtri(low, lower=1)
            if info == 0:
                return inverse
    return np.linalg.inv(low)


def cholesky_parts(a: np.ndarray, low: np.ndarray) -> tuple[Callable, Callable]:
    """jvp and vjp of the lower Cholesky factor ``low`` of the Hermitian matrix read from tril(a)."""

    def jvp(da: Any) -> Any:
        low_inv = _lower_inverse(low)
        x = low_inv @ hermitian_from(da, lower=True) @ mH(low_inv)
        return low @ _phi(x)

    def vjp(g: Any, need: tuple) -> tuple:
        fast = _real_cholesky_vjp(low, g)
        if fast is not None:
            return (fast,)
        low_inv = _lower_inverse(low)  # only now: the forward pass need not pay for it
        s = mH(low_inv) @ _phi(mH(low) @ g) @ low_inv
        return (hermitian_from_adjoint(s, lower=True),)

    return jvp, vjp


def _real_cholesky_vjp(low: np.ndarray, g: Any) -> np.ndarray | None:
    """The Cholesky cotangent for one real float64 matrix with BLAS triangular kernels:
    ``S = L^-T Phi(L^T G) L^-1`` as a triangular product and two triangular solves (3 n^3 flops
    instead of 6 n^3 for an explicit inverse and three dense products), returned as
    ``tril(S + S^T)`` with ``S``'s own diagonal. None if it does not apply.

    BLAS wants Fortran order, and ``L.T`` and ``G.T`` are Fortran views of C-ordered ``L`` and
    ``G``, so the work is done on transposes (no copies): ``M^T = G^T L``, then
    ``Phi(M)^T = M^T * W`` (``W`` upper triangular with 0.5 on its diagonal), ``X^T`` from
    ``L^T X^T = Phi^T`` and ``S^T`` from ``S^T L = X^T``."""
    if not (low.ndim == 2 and low.dtype == np.float64 and isinstance(g, np.ndarray) and g.dtype == np.float64
            and g.shape == low.shape):
        return None
    try:
        from scipy.linalg.blas import dtrmm, dtrsm
    except ImportError:
        return None
    up = low.T  # the upper factor U = L^T
    weights = _halved_upper(low.shape[0])
    m_t = dtrmm(1.0, up, g.T, side=1, lower=0, trans_a=1)  # G^T U^T = G^T L
    np.multiply(m_t, weights, out=m_t)  # Phi(L^T G)^T
    x_t = dtrsm(1.0, up, m_t, lower=0, overwrite_b=1)  # U X^T = Phi^T
    s_t = dtrsm(1.0, up, x_t, side=1, lower=0, trans_a=1, overwrite_b=1)  # S^T U^T = X^T
    out = s_t.T + s_t
    np.multiply(out, weights.T, out=out)  # tril(S + S^T), S's diagonal
    return out


@functools.lru_cache(maxsize=16)
def _halved_upper(n: int) -> np.ndarray:
    """Ones on and above the diagonal, 0.5 on it (Fortran order, read-only: shared)."""
    weights = np.asfortranarray(np.triu(np.ones((n, n))))
    weights[np.diag_indices(n)] = 0.5
    weights.flags.writeable = False
    return weights


def upper_cholesky_parts(a: np.ndarray, up: np.ndarray) -> tuple[Callable, Callable]:
    """The same for the upper factor of the matrix read from triu(a): ``up = lower(a^H)^H``."""
    jvp_low, vjp_low = cholesky_parts(mH(a), mH(up))
    return (lambda da: mH(jvp_low(mH(da))),
            lambda g, need: (mH(vjp_low(mH(g), need)[0]),))


@linalg_rule(np.linalg.cholesky)
def _cholesky(a, upper=False):
    y = np.linalg.cholesky(a, upper=upper)
    a = np.asarray(a)
    return (y, *(upper_cholesky_parts(a, y) if upper else cholesky_parts(a, y)))


@linalg_rule(np.linalg.qr)
def _qr(a, mode="reduced"):
    label = "numpy.linalg.qr"
    y = np.linalg.qr(a, mode=mode)
    a = np.asarray(a)
    real_only(label, a)
    m, n = a.shape[-2:]
    if mode not in ("reduced", "complete", "r") or m < n or (mode == "complete" and m != n):
        refuse(label, "yuebing differentiates modes 'reduced' and 'r' for square or tall matrices "
                      "(and 'complete' for square ones)")
    q, r = np.linalg.qr(a) if mode == "r" else y
    r_inv = np.linalg.inv(r)

    def jvp(da: Any) -> Any:
        d = da @ r_inv
        x = mT(q) @ d
        omega = np.tril(x, -1) - mT(np.tril(x, -1))
        dq, dr = q @ (omega - x) + d, (x - omega) @ r
        return dr if mode == "r" else [dq, dr]

    def vjp(g: Any, need: tuple) -> tuple:
        gq, gr = (None, g) if mode == "r" else g
        mm = add(None if gr is None else gr @ mT(r), None if gq is None else -(mT(q) @ gq))
        if mm is None:
            return (None,)
        nn = np.triu(mm) + mT(np.triu(mm, 1))
        return (add(gq, q @ nn) @ mT(r_inv),)

    return y, jvp, vjp


def _eig_gaps(w: np.ndarray, squared: bool = False) -> np.ndarray:
    """F[i, j] = 1 / (w_j - w_i) off the diagonal, 0 on it."""
    v = w * w if squared else w
    diff = v[..., None, :] - v[..., :, None]
    off = ~np.eye(w.shape[-1], dtype=bool)
    return np.divide(1.0, diff, out=np.zeros_like(diff), where=off)


@linalg_rule(np.linalg.eigh)
def _eigh(a, UPLO="L"):
    label = "numpy.linalg.eigh"
    y = np.linalg.eigh(a, UPLO=UPLO)
    real_only(label, a)
    w, v = y
    lower = UPLO.upper() == "L"
    gaps = _eig_gaps(w)

    def jvp(da: Any) -> Any:
        x = mT(v) @ hermitian_from(da, lower) @ v
        return [diag_vector(x), v @ (gaps * x)]

    def vjp(g: list, need: tuple) -> tuple:
        gw, gv = g
        xbar = add(None if gw is None else as_diag(np.asarray(gw)), None if gv is None else gaps * (mT(v) @ gv))
        if xbar is None:
            return (None,)
        return (hermitian_from_adjoint(v @ xbar @ mT(v), lower),)

    return y, jvp, vjp


@linalg_rule(np.linalg.eigvalsh)
def _eigvalsh(a, UPLO="L"):
    y = np.linalg.eigvalsh(a, UPLO=UPLO)
    v = np.linalg.eigh(a, UPLO=UPLO)[1]
    lower = UPLO.upper() == "L"

    def jvp(da: Any) -> Any:
        return np.real(diag_vector(mH(v) @ hermitian_from(da, lower) @ v))

    def vjp(g: Any, need: tuple) -> tuple:
        return (hermitian_from_adjoint((v * np.asarray(g)[..., None, :]) @ mH(v), lower),)

    return y, jvp, vjp


def singular_value_parts(u: np.ndarray, vh: np.ndarray) -> tuple[Callable, Callable]:
    """jvp and vjp of the singular values given the reduced singular vectors."""

    def jvp(da: Any) -> Any:
        return np.real(diag_vector(mH(u) @ da @ mH(vh)))

    def vjp(g: Any, need: tuple) -> tuple:
        return ((u * np.asarray(g)[..., None, :]) @ vh,)

    return jvp, vjp


@linalg_rule(np.linalg.svd)
def _svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    label = "numpy.linalg.svd"
    y = np.linalg.svd(a, full_matrices, compute_uv, hermitian)
    a = np.asarray(a)
    if hermitian:
        refuse(label, "yuebing does not differentiate hermitian=True; use the default")
    if not compute_uv:
        u, _, vh = np.linalg.svd(a, full_matrices=False)
        return (y, *singular_value_parts(u, vh))
    real_only(label, a)
    m, n = a.shape[-2:]
    if full_matrices and m != n:
        refuse(label, "yuebing differentiates full_matrices=False (or square matrices) only")
    u, s, vh = y
    v = mT(vh)
    gaps = _eig_gaps(s, squared=True)
    s_inv = 1.0 / s

    def jvp(da: Any) -> Any:
        dp = mT(u) @ da @ v
        ds = diag_vector(dp)
        dp_s, s_dp = dp * s[..., None, :], s[..., :, None] * dp
        du = u @ (gaps * (dp_s + mT(dp_s))) + (da @ v - u @ dp) * s_inv[..., None, :]
        dv = v @ (gaps * (s_dp + mT(s_dp))) + (mT(da) @ u - v @ mT(dp)) * s_inv[..., None, :]
        return [du, ds, mT(dv)]

    def vjp(g: list, need: tuple) -> tuple:
        gu, gs, gvh = g
        gv = None if gvh is None else mT(gvh)
        inner = None if gs is None else as_diag(np.asarray(gs))
        terms = [None]
        if gu is not None:
            ut_gu = mT(u) @ gu
            inner = add(inner, (gaps * (ut_gu - mT(ut_gu))) * s[..., None, :])
            terms.append(((gu - u @ ut_gu) * s_inv[..., None, :]) @ vh)
        if gv is not None:
            vt_gv = mT(v) @ gv
            inner = add(inner, s[..., :, None] * (gaps * (vt_gv - mT(vt_gv))))
            terms.append(u @ (s_inv[..., :, None] * (mT(gv) - vt_gv.swapaxes(-1, -2) @ vh)))
        if inner is not None:
            terms.append(u @ inner @ vh)
        return (add(*terms),)

    return y, jvp, vjp


@linalg_rule(np.linalg.lstsq, diff=(0, 1))
def _lstsq(a, b, rcond=None):
    label = "numpy.linalg.lstsq"
    y = np.linalg.lstsq(a, b, rcond=rcond)
    x, res, rank, s = y
    a, b = np.asarray(a), np.asarray(b)
    m, n = a.shape
    if m < n or rank < n:
        refuse(label, "yuebing differentiates full-rank square or tall least-squares problems only")
    vector = b.ndim == 1
    x2, b2 = (x[:, None], b[:, None]) if vector else (x, b)
    r = b2 - a @ x2
    gram_inv = np.linalg.inv(mH(a) @ a)
    pinv = gram_inv @ mH(a)
    has_res = res.size > 0
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    s_jvp, s_vjp = singular_value_parts(u, vh)

    def as2(t: Any) -> Any:
        return None if t is None else (np.asarray(t)[:, None] if vector else t)

    def jvp(da: Any, db: Any) -> Any:
        dr = add(as2(db), None if da is None else -(da @ x2))  # change of b - a x, x held fixed
        dx = add(None if dr is None else pinv @ dr, None if da is None else gram_inv @ (mH(da) @ r))
        dres = 2 * np.real(np.sum(np.conj(r) * dr, axis=0)) if has_res and dr is not None else None
        ds = s_jvp(da) if da is not None else None
        return [None if dx is None else (dx[:, 0] if vector else dx), dres, None, ds]

    def vjp(g: list, need: tuple) -> tuple:
        gx, gres, _, gs = g
        gb = ga = None
        if gx is not None:
            gx = as2(gx)
            z = mH(pinv) @ gx
            gb, ga = z, -(z @ mH(x2)) + r @ mH(gram_inv @ gx)
        if gres is not None and has_res:
            w = 2 * r * np.real(np.asarray(gres))
            gb, ga = add(gb, w), add(ga, -(w @ mH(x2)))
        if gs is not None:
            ga = add(ga, s_vjp(gs, need)[0])
        if gb is not None and vector:
            gb = gb[:, 0]
        return ga, gb

    return y, jvp, vjp


_NO_VALUE = object()


@linalg_rule(np.linalg.pinv)
def _pinv(a, rcond=None, hermitian=False, rtol=_NO_VALUE):
    label = "numpy.linalg.pinv"
    kwargs = {} if rtol is _NO_VALUE else {"rtol": rtol}
    y = np.linalg.pinv(a, rcond, hermitian, **kwargs)
    if hermitian:
        refuse(label, "yuebing does not differentiate hermitian=True; use the default")
    a = np.asarray(a)
    s = np.linalg.svd(a, compute_uv=False)
    m, n = a.shape[-2:]
    if s.size and np.any(s[..., -1] <= max(m, n) * np.finfo(s.dtype).eps * s[..., 0]):
        refuse(label, "yuebing differentiates the pseudo-inverse of full-rank matrices only")
    p = y
    left = np.eye(m) - a @ p  # projector onto the complement of the range of a
    right = np.eye(n) - p @ a

    def jvp(da: Any) -> Any:
        return -(p @ da @ p) + p @ mH(p) @ mH(da) @ left + right @ mH(da) @ mH(p) @ p

    def vjp(g: Any, need: tuple) -> tuple:
        return (-(mH(p) @ g @ mH(p)) + left @ mH(g) @ p @ mH(p) + mH(p) @ p @ mH(g) @ right,)

    return y, jvp, vjp


# --------------------------------------------------------------------------------------------
# Second order
# --------------------------------------------------------------------------------------------
#
# The vjp functions below are differentiated by the forward transform (plain NumPy: no
# try/except, no ``out=``/``where=``). Each computes exactly the cotangents of the reverse rule
# above it. A tuple output's cotangent ``g`` is a tuple (a ``SlogdetResult``, ``EighResult``...)
# whose entries are ``NoRData`` for number outputs nobody used: ``_cot`` reads them.


def _cot(g: Any, k: int) -> Any:
    """Entry ``k`` of a tuple output's cotangent; None where that output got none."""
    if not isinstance(g, tuple):
        return None
    c = g[k]
    if c is None or c is NoRData or c is NoTangent:
        return None
    return c


def _safe_div(x: Any, r: Any) -> Any:
    """x / r, 0 where r is 0 (``_sgn`` without ``out=``/``where=``)."""
    nonzero = r != 0
    return np.where(nonzero, x / np.where(nonzero, r, 1.0), 0.0)


def _gaps(w: Any, squared: bool = False) -> Any:
    """``_eig_gaps`` without ``out=``/``where=``."""
    v = w * w if squared else w
    diff = v[..., None, :] - v[..., :, None]
    off = ~np.eye(w.shape[-1], dtype=bool)
    return np.where(off, 1.0 / np.where(off, diff, 1.0), 0.0)


def _inv_vjp(g, y, a):
    return (-(mH(y) @ g @ mH(y)),)


def _solve_vjp(g, y, a, b):
    vector = np.ndim(b) == 1
    x2 = y[..., None] if vector else y
    gb = np.linalg.solve(mH(np.asarray(a)), g[..., None] if vector else g)
    return -(gb @ mH(x2)), (gb[..., 0] if vector else gb)


def _cofactor_adjugate(a):
    """adj(a) from the cofactors (a polynomial in ``a``: smooth at singular matrices too)."""
    n = a.shape[-1]
    j = np.arange(n - 1)[None, :]
    keep = j + (j >= np.arange(n)[:, None])  # keep[i]: the indices other than i
    minors = a[..., keep[:, None, :, None], keep[None, :, None, :]]  # (..., n, n, n-1, n-1)
    signs = 1.0 - 2.0 * ((np.arange(n)[:, None] + np.arange(n)[None, :]) % 2)
    return mT(signs * np.linalg.det(minors))


def _det_vjp(g, y, a):
    a = np.asarray(a)
    if np.all(np.asarray(y) != 0):
        adj = np.asarray(y)[..., None, None] * np.linalg.inv(a)
    else:  # the reverse rule's SVD adjugate has no forward rule at a singular matrix
        adj = _cofactor_adjugate(a)
    return (np.asarray(g)[..., None, None] * mH(adj),)


def _slogdet_vjp(g, y, a):
    g_sign, g_log = _cot(g, 0), _cot(g, 1)
    w = 0.0 if g_log is None else np.real(g_log)
    if np.iscomplexobj(a) and g_sign is not None:
        w = w + 1j * np.real(np.conj(g_sign) * y[0] * 1j)
    return (np.asarray(w)[..., None, None] * mH(np.linalg.inv(a)),)


def _matrix_power_vjp(g, y, a, n):
    n = operator.index(n)
    if n == 0:
        return None, None
    base = np.linalg.inv(a) if n < 0 else np.asarray(a)
    m = abs(n)
    powers = [np.eye(base.shape[-1], dtype=base.dtype), base]  # powers[k] = base^k
    for _ in range(m - 2):
        powers.append(powers[-1] @ base)
    g_base = mH(powers[0]) @ g @ mH(powers[m - 1])
    for k in range(1, m):
        g_base = g_base + mH(powers[k]) @ g @ mH(powers[m - 1 - k])
    return (g_base if n > 0 else -(mH(base) @ g_base @ mH(base))), None


def lower_cholesky_cotangent(low, g):
    """The cotangent of ``a`` (its lower triangle read) given that of its lower Cholesky factor
    ``low``: the first-order formula in plain NumPy, which second order differentiates."""
    low_inv = np.linalg.inv(low)
    return hermitian_from_adjoint(mH(low_inv) @ _phi(mH(low) @ g) @ low_inv, lower=True)


def _cholesky_vjp(g, y, a, upper=False):
    low, g_low = (mH(y), mH(g)) if upper else (y, g)  # upper: the lower factor of a^H
    ga = lower_cholesky_cotangent(low, g_low)
    return (mH(ga) if upper else ga), None


def _vector_direction_vjp(x, ym, ord, axes):
    """``_vector_direction`` in plain NumPy."""
    r = np.abs(x)
    if ord is None or ord == 2:
        return _safe_div(x, np.broadcast_to(ym, x.shape))
    if ord == 1:
        return _safe_div(x, r)
    if ord == np.inf or ord == -np.inf:
        ties = r == ym
        return _safe_div(x, r) * (ties / np.sum(ties, axis=axes, keepdims=True))
    if ord == 0:
        return np.zeros(x.shape, dtype=np.result_type(x, 1.0))
    p = float(ord)
    ratio = np.where((ym != 0) & (r != 0), r / np.where(ym != 0, ym, 1.0), 0.0)
    scale = np.where(ratio != 0, np.where(ratio != 0, ratio, 1.0) ** (p - 1), 0.0)
    return _safe_div(x, r) * scale


def _matrix_direction_vjp(x, ym, ord):
    """``_matrix_direction`` in plain NumPy."""
    if ord is None or ord == "fro":
        return _safe_div(x, np.broadcast_to(ym, x.shape))
    if ord in ("nuc", 2, -2):
        u, s, vh = np.linalg.svd(x, full_matrices=False)
        if ord == "nuc":
            return u @ vh
        if ord == 2:
            return u[..., :, :1] @ vh[..., :1, :]
        return u[..., :, -1:] @ vh[..., -1:, :]
    r = np.abs(x)
    sums_axis = -2 if ord in (1, -1) else -1
    ties = np.sum(r, axis=sums_axis, keepdims=True) == ym
    return _safe_div(x, r) * (ties / np.sum(ties, axis=(-1,) if sums_axis == -2 else (-2,), keepdims=True))


def _norm_vjp(g, y, x, ord=None, axis=None, keepdims=False):
    x = np.asarray(x)
    nd = x.ndim
    axes, matrix = norm_axes(nd, ord, axis)
    ym = y if keepdims else np.expand_dims(y, axes)
    if matrix:
        moved = np.moveaxis(x, axes, (-2, -1))
        u = np.moveaxis(_matrix_direction_vjp(moved, np.moveaxis(np.asarray(ym), axes, (-2, -1)), ord),
                        (-2, -1), axes)
    else:
        u = _vector_direction_vjp(x, ym, ord, axes)
    gk = np.real(g if keepdims else np.expand_dims(g, axes))
    g_ord = None if ord is None or isinstance(ord, (int, str)) else np.sum(gk * ord_partial(x, ym, ord, axes, matrix))
    return gk * u, g_ord, None, None


def _eigvalsh_vjp(g, y, a, UPLO="L"):
    v = np.linalg.eigh(a, UPLO=UPLO)[1]
    return hermitian_from_adjoint((v * np.asarray(g)[..., None, :]) @ mH(v), UPLO.upper() == "L"), None


def _eigh_vjp(g, y, a, UPLO="L"):
    w, v = y[0], y[1]
    gw, gv = _cot(g, 0), _cot(g, 1)
    xbar = np.zeros(v.shape, dtype=v.dtype)
    if gw is not None:
        xbar = xbar + as_diag(np.asarray(gw))
    if gv is not None:
        xbar = xbar + _gaps(w) * (mT(v) @ gv)
    return hermitian_from_adjoint(v @ xbar @ mT(v), UPLO.upper() == "L"), None


def _svd_vjp(g, y, a, full_matrices=True, compute_uv=True, hermitian=False):
    if not compute_uv:
        u, _, vh = np.linalg.svd(a, full_matrices=False)
        return (u * np.asarray(g)[..., None, :]) @ vh, None, None, None
    u, s, vh = y[0], y[1], y[2]
    gu, gs, gvh = _cot(g, 0), _cot(g, 1), _cot(g, 2)
    v = mT(vh)
    gaps = _gaps(s, squared=True)
    s_inv = 1.0 / s
    inner = np.zeros(s.shape[:-1] + (s.shape[-1], s.shape[-1]), dtype=s.dtype)
    ga = np.zeros(a.shape, dtype=u.dtype)
    if gs is not None:
        inner = inner + as_diag(np.asarray(gs))
    if gu is not None:
        ut_gu = mT(u) @ gu
        inner = inner + (gaps * (ut_gu - mT(ut_gu))) * s[..., None, :]
        ga = ga + ((gu - u @ ut_gu) * s_inv[..., None, :]) @ vh
    if gvh is not None:
        gv = mT(gvh)
        vt_gv = mT(v) @ gv
        inner = inner + s[..., :, None] * (gaps * (vt_gv - mT(vt_gv)))
        ga = ga + u @ (s_inv[..., :, None] * (mT(gv) - mT(vt_gv) @ vh))
    return ga + u @ inner @ vh, None, None, None


def _qr_vjp(g, y, a, mode="reduced"):
    if mode == "r":
        q, r = np.linalg.qr(a)
        gq, gr = None, g
    else:
        q, r = y[0], y[1]
        gq, gr = _cot(g, 0), _cot(g, 1)
    n = r.shape[-1]
    mm = np.zeros(r.shape[:-2] + (n, n), dtype=r.dtype)
    if gr is not None:
        mm = mm + gr @ mT(r)
    if gq is not None:
        mm = mm - mT(q) @ gq
    nn = np.triu(mm) + mT(np.triu(mm, 1))
    top = q @ nn if gq is None else gq + q @ nn
    return top @ mT(np.linalg.inv(r)), None


def _lstsq_vjp(g, y, a, b, rcond=None):
    a, b = np.asarray(a), np.asarray(b)
    x, res = y[0], y[1]
    vector = b.ndim == 1
    x2, b2 = (x[:, None], b[:, None]) if vector else (x, b)
    r = b2 - a @ x2
    gram_inv = np.linalg.inv(mH(a) @ a)
    gx, gres, gs = _cot(g, 0), _cot(g, 1), _cot(g, 3)
    ga = np.zeros(a.shape, dtype=np.result_type(a, b))
    gb = np.zeros(b2.shape, dtype=np.result_type(a, b))
    if gx is not None:
        gx2 = gx[:, None] if vector else gx
        z = a @ mH(gram_inv) @ gx2  # mH(pinv) @ gx
        gb = gb + z
        ga = ga - z @ mH(x2) + r @ mH(gram_inv @ gx2)
    if gres is not None and np.size(res) > 0:
        w = 2 * r * np.real(np.asarray(gres))
        gb = gb + w
        ga = ga - w @ mH(x2)
    if gs is not None:
        u, _, vh = np.linalg.svd(a, full_matrices=False)
        ga = ga + (u * np.asarray(gs)[..., None, :]) @ vh
    return ga, (gb[:, 0] if vector else gb), None


def _pinv_vjp(g, y, a, rcond=None, hermitian=False, rtol=_NO_VALUE):
    a = np.asarray(a)
    p = y
    m, n = a.shape[-2:]
    left = np.eye(m) - a @ p
    right = np.eye(n) - p @ a
    return -(mH(p) @ g @ mH(p)) + left @ mH(g) @ p @ mH(p) + mH(p) @ p @ mH(g) @ right, None, None, None


multilinear(operator.matmul, np.matmul, np.dot, (np.ndarray, "dot"), np.inner, np.outer, np.kron,
            np.tensordot, np.einsum, np.vdot)
linear(np.trace, (np.ndarray, "trace"))
with_vjp(np.linalg.inv, _inv_vjp)


def _imatmul(a, b):
    """``a @= b``: the product written back into ``a`` (NumPy's shape check kept)."""
    product = a @ b
    if not isinstance(a, np.ndarray):
        return product  # no in-place @=: Python rebinds a
    if product.shape != a.shape:
        raise ValueError(f"matmul: the product's shape {product.shape} does not match the array's {a.shape} for @=")
    a[...] = product
    return a


def _solve_jvp(a, a_t, b, b_t):
    """Third order: the tangent of ``solve(a, b)`` (its cotangent map solves again)."""
    y = np.linalg.solve(a, b)
    vector = np.ndim(b) == 1  # b is one vector, for every matrix of a stack
    rhs = b_t if b_t is not NoTangent else np.zeros_like(y)
    if a_t is not NoTangent:
        rhs = rhs - ((a_t @ y[..., None])[..., 0] if vector else a_t @ y)
    return y, (np.linalg.solve(a, rhs[..., None])[..., 0] if vector else np.linalg.solve(a, rhs))


defined_by(operator.imatmul, _imatmul)
with_vjp(np.linalg.solve, _solve_vjp)
jvp_defined_by(np.linalg.solve, _solve_jvp)
with_vjp(np.linalg.det, _det_vjp)
with_vjp(np.linalg.slogdet, _slogdet_vjp)
with_vjp(np.linalg.matrix_power, _matrix_power_vjp)
with_vjp(np.linalg.cholesky, _cholesky_vjp)
with_vjp(np.linalg.norm, _norm_vjp)
with_vjp(np.linalg.eigvalsh, _eigvalsh_vjp)
with_vjp(np.linalg.eigh, _eigh_vjp)
with_vjp(np.linalg.svd, _svd_vjp)
with_vjp(np.linalg.qr, _qr_vjp)
with_vjp(np.linalg.lstsq, _lstsq_vjp)
with_vjp(np.linalg.pinv, _pinv_vjp)
# Without a second-order rule: operator.imatmul (in place: the multilinear rule would run the
# product on the primal twice) and np.linalg.multi_dot (its factors are the elements of one
# list argument, which neither multilinear nor with_vjp delivers cotangents to).


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


def _well(n: int, *batch: int, dtype: Any = np.float64, complex_: bool = False) -> np.ndarray:
    """A well-conditioned square matrix (or stack): randn + n I."""
    x = randc(*batch, n, n) if complex_ else randn(*batch, n, n).astype(dtype)
    return x + np.asarray(n * np.eye(n), dtype=x.dtype)


def _spd(n: int, *batch: int, dtype: Any = np.float64, complex_: bool = False) -> np.ndarray:
    """Symmetric (Hermitian) positive definite: B B^H + n I."""
    b = randc(*batch, n, n) if complex_ else randn(*batch, n, n).astype(dtype)
    return b @ mH(b) + np.asarray(n * np.eye(n), dtype=b.dtype)


def _sym(n: int) -> np.ndarray:
    """Symmetric with well-separated eigenvalues."""
    q = np.linalg.qr(randn(n, n))[0]
    return (q * np.arange(1.0, n + 1) * 2) @ q.T


f32 = np.float32

CASES = [
    # dot / ndarray.dot
    Case(np.dot, randn(3), randn(3)),
    Case(np.dot, randn(2, 3), randn(3, 4)),
    Case(np.dot, randn(2, 3), randn(3)),
    Case(np.dot, randn(3), randn(3, 2)),
    Case(np.dot, randn(2, 3, 4), randn(5, 4, 2)),
    Case(np.dot, randn(), randn(3, 2)),
    Case(np.dot, randn(2, 3, dtype=f32), randn(3, 2, dtype=f32)),
    Case(np.dot, randc(2, 3), randc(3, 2)),
    Case(np.dot, randn(2, 3), randc(3)),
    Case(np.dot, randn(0, 3), randn(3, 2)),
    Case(np.dot, np.arange(6).reshape(2, 3), randn(3, 2)),
    Case(np.ndarray.dot, randn(2, 3), randn(3, 4)),
    # vdot, inner, outer, tensordot
    Case(np.vdot, randn(2, 3), randn(6)),
    Case(np.vdot, randc(4), randc(4)),
    Case(np.inner, randn(2, 3), randn(4, 3)),
    Case(np.inner, randn(3), randn(3)),
    Case(np.inner, randn(), randn(2, 3)),
    Case(np.inner, randc(2, 3), randc(3)),
    Case(np.outer, randn(3), randn(2, 2)),
    Case(np.outer, randc(2), randc(3)),
    Case(np.tensordot, randn(2, 3, 4), randn(3, 4, 5)),
    Case(np.tensordot, randn(2, 3, 4), randn(4, 2, 5), kwargs={"axes": ([0, 2], [1, 0])}),
    Case(np.tensordot, randn(2, 3), randn(4), kwargs={"axes": 0}),
    Case(np.tensordot, randn(3, 4, dtype=f32), randn(4, 2, dtype=f32), kwargs={"axes": 1}),
    Case(np.tensordot, randc(2, 3), randc(3, 2), kwargs={"axes": ([-1], [0])}),
    # matmul and @, @=
    Case(np.matmul, randn(2, 3), randn(3, 4)),
    Case(np.matmul, randn(3), randn(3)),
    Case(np.matmul, randn(3), randn(2, 3, 4)),
    Case(np.matmul, randn(2, 1, 3, 4), randn(5, 4, 2)),
    Case(np.matmul, randn(4, 2, 3), randn(3)),
    Case(np.matmul, randn(2, 3, dtype=f32), randn(3, 2, dtype=f32)),
    Case(np.matmul, randc(2, 2, 3), randc(3, 4)),
    Case(np.matmul, randn(2, 3), randc(3, 2)),
    Case(np.matmul, randn(0, 3), randn(3, 2)),
    Case(operator.matmul, randn(2, 3), randn(3, 4)),
    Case(operator.imatmul, randn(2, 3), randn(3, 3)),
    Case(operator.imatmul, randn(3), randn(3, 3)),
    Case(operator.imatmul, randc(2, 2), randc(2, 2)),
    Case(operator.imatmul, randn(2, 3, 3), randn(3, 3)),
    Case(operator.imatmul, *(lambda a: (a, a))(randn(3, 3)), name="operator.imatmul(a, a)"),
    Case(operator.imatmul, *(lambda a: (a, a.T))(randn(3, 3)), name="operator.imatmul(a, a.T)"),
    # kron, trace
    Case(np.kron, randn(2, 3), randn(3, 2)),
    Case(np.kron, randn(3), randn(2, 2)),
    Case(np.kron, randc(2), randc(2)),
    Case(np.trace, randn(3, 3)),
    Case(np.trace, randn(3, 4), kwargs={"offset": 1}),
    Case(np.trace, randn(4, 3), kwargs={"offset": -2}),
    Case(np.trace, randn(2, 3, 4), kwargs={"axis1": 1, "axis2": 2}),
    Case(np.trace, randn(3, 2, 3), kwargs={"axis1": 0, "axis2": -1, "offset": 1}),
    Case(np.trace, randn(3, 3, dtype=f32)),
    Case(np.trace, randc(3, 3)),
    Case(np.trace, randn(2, 3), kwargs={"offset": 5}),
    Case(np.ndarray.trace, randn(3, 3), kwargs={"offset": -1}),
    # einsum
    Case(np.einsum, "ij,jk->ik", randn(2, 3), randn(3, 4)),
    Case(np.einsum, "ij,jk", randn(2, 3), randn(3, 4)),
    Case(np.einsum, "ii->i", randn(3, 3)),
    Case(np.einsum, "ii", randn(3, 3)),
    Case(np.einsum, "iij->j", randn(3, 3, 2)),
    Case(np.einsum, "ij->", randn(2, 3)),
    Case(np.einsum, "ij->j", randn(2, 3)),
    Case(np.einsum, "ij->ji", randn(2, 3)),
    Case(np.einsum, "i,i->", randn(3), randn(3)),
    Case(np.einsum, "i,j->ij", randn(3), randn(2)),
    Case(np.einsum, "...ij,...jk->...ik", randn(2, 2, 3), randn(3, 4)),
    Case(np.einsum, "...i,i", randn(2, 3), randn(3)),
    Case(np.einsum, "i...->...", randn(3, 2)),
    Case(np.einsum, "ij,jk,kl->il", randn(2, 3), randn(3, 4), randn(4, 2), kwargs={"optimize": True}),
    Case(np.einsum, "ij,ij->i", randn(1, 3), randn(4, 3)),
    Case(np.einsum, "ij,jk->ik", randn(2, 3, dtype=f32), randn(3, 2, dtype=f32)),
    Case(np.einsum, "ij,jk->ik", randc(2, 3), randc(3, 2)),
    Case(np.einsum, "ii,ij->j", randn(3, 3), randn(3, 2)),
    Case(np.einsum, randn(2, 3), [0, 1], randn(3, 4), [1, 2], [0, 2]),
    Case(np.einsum, "ij,j->i", randn(0, 3), randn(3)),
    # norm
    Case(np.linalg.norm, randn(5)),
    Case(np.linalg.norm, randn(3, 4)),
    Case(np.linalg.norm, randn(2, 3, 4)),
    Case(np.linalg.norm, randn(5), kwargs={"ord": 1}),
    Case(np.linalg.norm, randn(5), kwargs={"ord": np.inf}),
    Case(np.linalg.norm, randn(5), kwargs={"ord": -np.inf}),
    Case(np.linalg.norm, randn(5), kwargs={"ord": 3}),
    Case(np.linalg.norm, randn(5), kwargs={"ord": 0.5}),
    # a float ord passed positionally is perturbed by check_rule: d norm / d ord is checked too
    Case(np.linalg.norm, randn(5), 3.5, name="numpy.linalg.norm(x, ord=3.5)"),
    Case(np.linalg.norm, randn(3, 4), 1.5, 1, True, name="numpy.linalg.norm(x, ord=1.5, axis=1, keepdims)"),
    Case(np.linalg.norm, np.array([0.0, 1.5, -2.0]), 3.5, name="numpy.linalg.norm(ord=3.5) with a zero entry"),
    Case(np.linalg.norm, randn(4), -1.5, name="numpy.linalg.norm(x, ord=-1.5)"),
    Case(np.linalg.norm, randc(4), 2.5, name="numpy.linalg.norm(complex, ord=2.5)"),
    Case(np.linalg.norm, randn(5), kwargs={"ord": 0}),
    Case(np.linalg.norm, randn(3, 4), kwargs={"axis": 1}),
    Case(np.linalg.norm, randn(3, 4), kwargs={"axis": 0, "keepdims": True}),
    Case(np.linalg.norm, randn(3, 4), kwargs={"axis": -1, "ord": 1}),
    Case(np.linalg.norm, randn(3, 4), kwargs={"ord": "fro"}),
    Case(np.linalg.norm, randn(3, 4), kwargs={"ord": "nuc"}),
    Case(np.linalg.norm, randn(3, 4), kwargs={"ord": 2}),
    Case(np.linalg.norm, randn(3, 4), kwargs={"ord": -2}),
    Case(np.linalg.norm, randn(3, 4), kwargs={"ord": 1}),
    Case(np.linalg.norm, randn(3, 4), kwargs={"ord": -1}),
    Case(np.linalg.norm, randn(3, 4), kwargs={"ord": np.inf}),
    Case(np.linalg.norm, randn(3, 4), kwargs={"ord": -np.inf}),
    Case(np.linalg.norm, randn(2, 3, 4), kwargs={"axis": (0, 2), "ord": "fro", "keepdims": True}),
    Case(np.linalg.norm, randn(2, 3, 4), kwargs={"axis": (2, 1), "ord": "nuc"}),
    Case(np.linalg.norm, randn(4, dtype=f32)),
    Case(np.linalg.norm, randc(4)),
    Case(np.linalg.norm, randc(4), kwargs={"ord": 1}),
    Case(np.linalg.norm, randc(3, 3), kwargs={"ord": "nuc"}),
    Case(np.linalg.norm, randn()),
    Case(np.linalg.norm, np.zeros(3), name="norm(zeros(3)): gradient 0 by convention"),
    Case(np.linalg.norm, np.zeros((2, 3)), kwargs={"axis": 1, "ord": 3}, name="norm(zeros, ord=3): gradient 0"),
    Case(np.linalg.norm, np.array([0.0, 1.5, -2.0]), kwargs={"ord": 1}, name="norm(ord=1) with a zero entry"),
    # a two-way tie: the central difference is the mean of the one-sided slopes, i.e. the even split
    Case(np.linalg.norm, np.array([2.0, -2.0, 1.0]), kwargs={"ord": np.inf}, name="norm(ord=inf) at a tie"),
    # det, slogdet, inv, solve
    Case(np.linalg.det, _well(3)),
    Case(np.linalg.det, _well(2, 3)),
    Case(np.linalg.det, _well(3, dtype=f32)),
    Case(np.linalg.det, _well(3, complex_=True)),
    Case(np.linalg.det, _well(1)),
    Case(np.linalg.det, np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, 1.0, 2.0]]), name="det at a singular matrix"),
    Case(np.linalg.det, np.stack([np.ones((2, 2)), _well(2)]), name="det of a stack with a singular matrix"),
    Case(np.linalg.slogdet, _well(3)),
    Case(np.linalg.slogdet, -_well(3, 2)),
    Case(np.linalg.slogdet, _well(3, complex_=True)),
    Case(np.linalg.inv, _well(3)),
    Case(np.linalg.inv, _well(3, 2)),
    Case(np.linalg.inv, _well(3, dtype=f32)),
    Case(np.linalg.inv, _well(3, complex_=True)),
    Case(np.linalg.solve, _well(3), randn(3)),
    Case(np.linalg.solve, _well(3), randn(3, 2)),
    Case(np.linalg.solve, _well(3, 2), randn(3)),
    Case(np.linalg.solve, _well(3, 2), randn(2, 3, 2)),
    Case(np.linalg.solve, _well(3, 2), randn(3, 2)),
    Case(np.linalg.solve, _well(3, dtype=f32), randn(3, dtype=f32)),
    Case(np.linalg.solve, _well(3, complex_=True), randc(3, 2)),
    Case(np.linalg.solve, _well(3), randc(3)),
    Case(np.linalg.matrix_power, _well(3) / 3, 3),
    Case(np.linalg.matrix_power, _well(3) / 3, 1),
    Case(np.linalg.matrix_power, _well(3) / 3, 0),
    Case(np.linalg.matrix_power, _well(3) / 3, -2),
    Case(np.linalg.matrix_power, _well(2, 2, complex_=True) / 2, 5),
    Case(np.linalg.multi_dot, [randn(3), randn(3, 4), randn(4, 2)]),
    Case(np.linalg.multi_dot, [randn(2, 3), randn(3, 4), randn(4, 2), randn(2)]),
    Case(np.linalg.multi_dot, (randc(2, 3), randc(3, 3))),
    # factorisations
    Case(np.linalg.cholesky, _spd(3)),
    Case(np.linalg.cholesky, _spd(3, 2)),
    Case(np.linalg.cholesky, _spd(3), kwargs={"upper": True}),
    Case(np.linalg.cholesky, _spd(3, complex_=True)),
    Case(np.linalg.cholesky, _spd(3, complex_=True), kwargs={"upper": True}),
    Case(np.linalg.cholesky, _spd(3, dtype=f32)),
    Case(np.linalg.qr, randn(3, 3)),
    Case(np.linalg.qr, randn(5, 3)),
    Case(np.linalg.qr, randn(2, 4, 3)),
    Case(np.linalg.qr, randn(4, 3), kwargs={"mode": "r"}),
    Case(np.linalg.qr, randn(3, 3), kwargs={"mode": "complete"}),
    Case(np.linalg.eigh, _sym(4)),
    Case(np.linalg.eigh, _sym(3) + np.triu(randn(3, 3), 1), kwargs={"UPLO": "U"}),
    Case(np.linalg.eigh, np.stack([_sym(3), _sym(3)])),
    Case(np.linalg.eigvalsh, _sym(4)),
    Case(np.linalg.eigvalsh, _spd(3, complex_=True)),
    Case(np.linalg.eigvalsh, _sym(3), kwargs={"UPLO": "U"}),
    Case(np.linalg.svd, randn(4, 3), kwargs={"full_matrices": False}),
    Case(np.linalg.svd, randn(3, 5), kwargs={"full_matrices": False}),
    Case(np.linalg.svd, randn(3, 3)),
    Case(np.linalg.svd, randn(2, 4, 3), kwargs={"full_matrices": False}),
    Case(np.linalg.svd, randn(4, 3), kwargs={"compute_uv": False}),
    Case(np.linalg.svd, randc(3, 4), kwargs={"compute_uv": False}),
    Case(np.linalg.lstsq, randn(5, 3), randn(5)),
    Case(np.linalg.lstsq, randn(5, 3), randn(5, 2)),
    Case(np.linalg.lstsq, _well(3), randn(3, 2)),
    Case(np.linalg.lstsq, randc(4, 2), randc(4)),
    Case(np.linalg.pinv, randn(4, 3)),
    Case(np.linalg.pinv, randn(3, 4)),
    Case(np.linalg.pinv, randn(2, 3, 3)),
    Case(np.linalg.pinv, randc(4, 2)),
]
