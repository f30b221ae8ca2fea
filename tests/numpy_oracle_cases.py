"""The NumPy call table that ``test_jax_numpy_oracle.py`` (against JAX) and
``test_numpy_higher_order_table.py`` (second and third order against the coverage table) share.

Each case is a call ``call(xp, f, *xs)`` written once for NumPy and ``jax.numpy`` (``xp`` is the
library, ``f`` its function of the case's name); its output (every float or complex array of it)
is made a number by a fixed random weighting, ``sum(w1 * real(out)) + sum(w2 * imag(out))``
(``make_loss``). Inputs lie inside each function's domain and away from its kinks; calls of
decompositions take gauge-free functions of the factors (squares of singular vectors, symmetric
inputs made inside the call).
"""
from __future__ import annotations

import dataclasses
import zlib
from typing import Any, Callable

import numpy as np

# --------------------------------------------------------------------------------------------
# Inputs: (shape, domain) per argument
# --------------------------------------------------------------------------------------------

DOMAINS = {
    "real": lambda rng, s: rng.standard_normal(s),
    "pos": lambda rng, s: rng.uniform(0.5, 2.0, s),
    "unit": lambda rng, s: rng.uniform(-0.9, 0.9, s),
    "gt1": lambda rng, s: rng.uniform(1.2, 3.0, s),
    "wc": lambda rng, s: rng.standard_normal(s) + 3.0 * np.eye(s[-1]),  # well conditioned
    "complex": lambda rng, s: rng.standard_normal(s) + 1j * rng.standard_normal(s),
    "cwc": lambda rng, s: rng.standard_normal(s) + 1j * rng.standard_normal(s) + 3.0 * np.eye(s[-1]),
    "nan": lambda rng, s: np.where(np.arange(np.prod(s)).reshape(s) % 4 == 1, np.nan, rng.standard_normal(s)),
}


def r(*shape):
    return shape, "real"


def p(*shape):
    return shape, "pos"


def u(*shape):
    return shape, "unit"


def g1(*shape):
    return shape, "gt1"


def wc(*shape):
    return shape, "wc"


def nan(*shape):
    return shape, "nan"


def c(*shape):
    return shape, "complex"


def cwc(*shape):
    return shape, "cwc"


#: the usual configurations of a one-argument elementwise function, of a two-argument one
#: (broadcasting), of an axis-taking function
ONE = [(r(),), (r(5),), (r(3, 4),)]
TWO = [(r(3, 4), r(4)), (r(), r(5)), (r(2, 3), r(2, 3))]
MATRIX = [(r(3, 4),), (r(2, 3, 4),)]


def same_domain(configs, domain):
    return [tuple((shape, domain) for shape, _ in config) for config in configs]


@dataclasses.dataclass
class Oracle:
    """One function: its qualified NumPy name, how to call it, its input configurations."""

    name: str
    call: Callable
    configs: list
    rtol: float = 1e-6
    slow: bool = False
    twin: Callable | None = None  # jnp -> the JAX function, when it is not jnp's namesake


_INDEX = np.array([2, 0, 1, 2])
_CHOICE = np.array([0, 1, 1, 0])
_MASK = np.array([True, False, True, True, False])
_MASK34 = np.arange(12).reshape(3, 4) % 3 == 0
_INTS = np.array([1, -2, 0, 3, 2])
_ALONG = np.array([[0, 2], [1, 1], [3, 0]])
_TRIM = np.array([0.0, 1.0, 1.0, 0.0, 0.0])


def _square(t):
    return t * t + 1.0


def _filled_diagonal(xp, f, x, v):
    """``np.fill_diagonal`` fills in place and returns None; JAX's returns the filled copy."""
    if xp is np:
        y = x.copy()
        f(y, v)
        return y
    return f(x, v, inplace=False)


def _sym(xp, b):
    return b + b.T


def _spd(xp, b):
    return b @ b.T + 3.0 * xp.eye(b.shape[0])


def _herm(xp, b):
    return b + xp.conj(b.T)


def _hpd(xp, b):
    return b @ xp.conj(b.T) + 3.0 * xp.eye(b.shape[0])


def _eigvals_invariant(xp, ev):
    """Symmetric in the eigenvalues (their order may differ between libraries)."""
    return xp.sum(xp.real(ev) ** 3) + xp.sum(xp.imag(ev) ** 2)


def _sorted_copy(xp, x):
    """``ndarray.sort`` sorts in place; a JAX array's ``sort`` returns the sorted copy."""
    if xp is np:
        y = x.copy()
        y.sort(axis=-1)
        return y
    return x.sort(axis=-1)


def unary(name, domain="real", configs=ONE, **kw):
    return Oracle(name, lambda xp, f, x: f(x), same_domain(configs, domain), **kw)


def binary(name, domains=("real", "real"), configs=TWO, **kw):
    cfgs = [tuple((s, d) for (s, _), d in zip(c, domains)) for c in configs]
    return Oracle(name, lambda xp, f, x, y: f(x, y), cfgs, **kw)


def reduction(name, domain="real", **kw):
    """Over all elements, along an axis, along the last axis with keepdims."""
    configs = same_domain([(r(5),), (r(3, 4),)], domain)
    return [Oracle(name, lambda xp, f, x: f(x), configs, **kw),
            Oracle(name + "[axis=0]", lambda xp, f, x: f(x, axis=0), same_domain([(r(3, 4),)], domain), **kw),
            Oracle(name + "[axis=-1, keepdims]", lambda xp, f, x: f(x, axis=-1, keepdims=True),
                   same_domain([(r(2, 3, 4),)], domain), **kw)]


def method(name, call, configs=MATRIX, **kw):
    return Oracle(f"numpy.ndarray.{name}", call, configs, **kw)


ELEMENTWISE = [
    *(unary(f"numpy.{n}") for n in (
        "sin", "cos", "tan", "sinh", "cosh", "tanh", "arctan", "atan", "arcsinh", "asinh", "exp", "exp2",
        "expm1", "square", "negative", "positive", "absolute", "abs", "fabs", "sinc", "deg2rad", "degrees",
        "rad2deg", "radians", "conj", "conjugate", "real", "imag", "cbrt", "angle", "nan_to_num",
        "floor", "ceil", "trunc", "rint", "round", "around", "sign")),
    unary("numpy.fix", twin=lambda jnp: jnp.trunc),  # jax.numpy.fix is deprecated
    *(unary(f"numpy.{n}", "pos") for n in ("sqrt", "log", "log10", "log2", "log1p", "reciprocal")),
    *(unary(f"numpy.{n}", "unit") for n in ("arcsin", "asin", "arccos", "acos", "arctanh", "atanh")),
    *(unary(f"numpy.{n}", "gt1") for n in ("arccosh", "acosh")),
    *(binary(f"numpy.{n}") for n in (
        "add", "subtract", "multiply", "arctan2", "atan2", "hypot", "maximum", "minimum", "fmax", "fmin",
        "logaddexp", "logaddexp2", "copysign", "heaviside")),
    *(binary(f"numpy.{n}", ("real", "pos")) for n in ("divide", "true_divide", "fmod", "mod", "remainder")),
    *(binary(f"numpy.{n}", ("pos", "real")) for n in ("power", "pow", "float_power")),
    Oracle("numpy.ldexp", lambda xp, f, x: f(x, _INTS), [(r(5),), (r(3, 5),)]),
    Oracle("numpy.clip", lambda xp, f, x, lo, hi: f(x, lo - 1.0, hi + 1.0), [(r(3, 4), r(4), r(3, 1))]),
    Oracle("numpy.clip[scalars]", lambda xp, f, x: f(x, -0.5, 0.5), [(r(3, 4),)]),
    Oracle("numpy.where", lambda xp, f, x, y: f(_MASK34, x, y), [(r(3, 4), r(4)), (r(3, 4), r(3, 4))]),
]

REDUCTIONS = [
    *(o for n in ("sum", "prod", "mean", "var", "std", "max", "min", "amax", "amin", "ptp", "nansum",
                  "nanmean", "nanmax", "nanmin") for o in reduction(f"numpy.{n}")),
    *(Oracle(f"numpy.{n}[NaN]", lambda xp, f, x: f(x), [(nan(3, 4),)]) for n in ("nansum", "nanmean", "nanmax", "nanmin")),
    Oracle("numpy.median", lambda xp, f, x: f(x), [(r(5),), (r(3, 4),)]),
    *(Oracle(f"numpy.{n}", lambda xp, f, x: f(x, 30.0), [(r(5),), (r(3, 4),)]) for n in ("percentile", "nanpercentile")),
    *(Oracle(f"numpy.{n}", lambda xp, f, x: f(x, 0.3), [(r(5),), (r(3, 4),)]) for n in ("quantile", "nanquantile")),
    Oracle("numpy.quantile[axis=1, q array]", lambda xp, f, x: f(x, np.array([0.2, 0.75]), axis=1), [(r(3, 4),)]),
    Oracle("numpy.median[axis=0]", lambda xp, f, x: f(x, axis=0), [(r(4, 3),)]),
    Oracle("numpy.average", lambda xp, f, x, w: f(x, weights=w), [(r(5), p(5))]),
    Oracle("numpy.average[axis=1]", lambda xp, f, x, w: f(x, axis=1, weights=w), [(r(3, 4), p(4))]),
    Oracle("numpy.var[ddof=1]", lambda xp, f, x: f(x, ddof=1), [(r(3, 4),)]),
    Oracle("numpy.std[ddof=1, axis=0]", lambda xp, f, x: f(x, axis=0, ddof=1), [(r(3, 4),)]),
    *(Oracle(f"numpy.{n}", lambda xp, f, x: f(x), [(r(5),), (r(3, 4),)]) for n in ("cumsum", "cumprod")),
    *(Oracle(f"numpy.{n}[axis=1]", lambda xp, f, x: f(x, axis=1), [(r(3, 4),)]) for n in ("cumsum", "cumprod")),
    *(Oracle(f"numpy.{n}", lambda xp, f, x: f(x, axis=1), [(r(3, 4),)]) for n in ("cumulative_sum", "cumulative_prod")),
    *(Oracle(f"numpy.{n}[include_initial]", lambda xp, f, x: f(x, include_initial=True), [(r(5),)])
      for n in ("cumulative_sum", "cumulative_prod")),
    Oracle("numpy.trace", lambda xp, f, x: f(x), [(r(4, 4),), (r(3, 5),)]),
    Oracle("numpy.trace[offset=1]", lambda xp, f, x: f(x, offset=1), [(r(4, 4),)]),
    Oracle("numpy.diff", lambda xp, f, x: f(x), [(r(5),), (r(3, 4),)]),
    Oracle("numpy.diff[n=2, axis=0]", lambda xp, f, x: f(x, n=2, axis=0), [(r(4, 3),)]),
]

SHAPE = [
    Oracle("numpy.reshape", lambda xp, f, x: f(x, (4, 3)), [(r(3, 4),)]),
    Oracle("numpy.ravel", lambda xp, f, x: f(x), [(r(3, 4),)]),
    Oracle("numpy.transpose", lambda xp, f, x: f(x, (2, 0, 1)), [(r(2, 3, 4),)]),
    Oracle("numpy.permute_dims", lambda xp, f, x: f(x, (1, 0)), [(r(3, 4),)]),
    Oracle("numpy.matrix_transpose", lambda xp, f, x: f(x), [(r(2, 3, 4),)]),
    Oracle("numpy.swapaxes", lambda xp, f, x: f(x, 0, 2), [(r(2, 3, 4),)]),
    Oracle("numpy.moveaxis", lambda xp, f, x: f(x, 0, -1), [(r(2, 3, 4),)]),
    Oracle("numpy.squeeze", lambda xp, f, x: f(x), [(r(3, 1, 4),)]),
    Oracle("numpy.expand_dims", lambda xp, f, x: f(x, 1), [(r(3, 4),)]),
    *(Oracle(f"numpy.{n}", lambda xp, f, x: f(x), [(r(),), (r(4),), (r(3, 4),)]) for n in ("atleast_1d", "atleast_2d", "atleast_3d")),
    *(Oracle(f"numpy.{n}", lambda xp, f, x: f(x), [(r(3, 4),)]) for n in ("flip", "fliplr", "flipud", "rot90", "copy", "array", "asarray")),
    Oracle("numpy.flip[axis=1]", lambda xp, f, x: f(x, axis=1), [(r(3, 4),)]),
    Oracle("numpy.roll", lambda xp, f, x: f(x, 2, axis=1), [(r(3, 4),)]),
    Oracle("numpy.rot90[k=3]", lambda xp, f, x: f(x, 3), [(r(3, 4),)]),
    Oracle("numpy.tile", lambda xp, f, x: f(x, (2, 3)), [(r(4),), (r(2, 3),)]),
    Oracle("numpy.repeat", lambda xp, f, x: f(x, 3, axis=0), [(r(2, 3),)]),
    Oracle("numpy.repeat[counts]", lambda xp, f, x: f(x, np.array([1, 0, 2])), [(r(3),)]),
    Oracle("numpy.broadcast_to", lambda xp, f, x: f(x, (3, 4)), [(r(4),), (r(3, 1),)]),
    *(Oracle(f"numpy.{n}", lambda xp, f, x, y: f([x, y]), [(r(3, 4), r(3, 4))]) for n in ("concatenate", "concat", "stack", "vstack", "hstack", "dstack", "column_stack")),
    Oracle("numpy.concatenate[axis=1]", lambda xp, f, x, y: f([x, y], axis=1), [(r(3, 4), r(3, 2))]),
    Oracle("numpy.stack[axis=-1]", lambda xp, f, x, y: f([x, y], axis=-1), [(r(3, 4), r(3, 4))]),
    Oracle("numpy.split", lambda xp, f, x: f(x, 2), [(r(4, 3),)]),
    Oracle("numpy.split[indices]", lambda xp, f, x: f(x, [1, 3], axis=1), [(r(2, 5),)]),
    Oracle("numpy.array_split", lambda xp, f, x: f(x, 3), [(r(7),)]),
    Oracle("numpy.hsplit", lambda xp, f, x: f(x, 2), [(r(3, 4),)]),
    Oracle("numpy.vsplit", lambda xp, f, x: f(x, 2), [(r(4, 3),)]),
    Oracle("numpy.dsplit", lambda xp, f, x: f(x, 2), [(r(2, 3, 4),)]),
    Oracle("numpy.diag", lambda xp, f, x: f(x), [(r(4),), (r(3, 4),)]),
    Oracle("numpy.diag[k=1]", lambda xp, f, x: f(x, 1), [(r(3),), (r(4, 4),)]),
    Oracle("numpy.diagflat", lambda xp, f, x: f(x), [(r(2, 2),)]),
    Oracle("numpy.diagonal", lambda xp, f, x: f(x, 1), [(r(3, 4),)]),
    Oracle("numpy.tril", lambda xp, f, x: f(x), [(r(3, 4),)]),
    Oracle("numpy.triu", lambda xp, f, x: f(x, -1), [(r(3, 4),)]),
    Oracle("numpy.take", lambda xp, f, x: f(x, _INDEX), [(r(3),), (r(3, 2),)]),
    Oracle("numpy.take[axis=1]", lambda xp, f, x: f(x, _INDEX, axis=1), [(r(2, 3),)]),
    Oracle("numpy.take_along_axis", lambda xp, f, x: f(x, _ALONG, axis=1), [(r(3, 4),)]),
    Oracle("numpy.choose", lambda xp, f, x, y: f(_CHOICE, [x, y]), [(r(4), r(4))]),
    Oracle("numpy.compress", lambda xp, f, x: f(_MASK, x), [(r(5),)]),
    Oracle("numpy.extract", lambda xp, f, x: f(_MASK, x), [(r(5),)]),
    Oracle("numpy.select", lambda xp, f, x, y: f([x > 0.5, x < -0.5], [x, y], 0.25), [(r(5), r(5))]),
    Oracle("numpy.piecewise", lambda xp, f, x: f(x, [x < 0, x >= 0], [lambda t: t * t, lambda t: 3.0 * t]), [(r(5),)]),
    Oracle("numpy.append", lambda xp, f, x, y: f(x, y), [(r(3), r(2)), (r(2, 3), r(2, 3))]),
    Oracle("numpy.append[axis=0]", lambda xp, f, x, y: f(x, y, axis=0), [(r(2, 3), r(1, 3))]),
    Oracle("numpy.insert", lambda xp, f, x, y: f(x, 1, y), [(r(4), r())]),
    Oracle("numpy.delete", lambda xp, f, x: f(x, np.array([0, 2])), [(r(5),)]),
    Oracle("numpy.delete[axis=1]", lambda xp, f, x: f(x, 1, axis=1), [(r(2, 3),)]),
    Oracle("numpy.trim_zeros", lambda xp, f, x: f(x * _TRIM), [(r(5),)]),
    Oracle("numpy.rollaxis", lambda xp, f, x: f(x, 2), [(r(2, 3, 4),)]),
    Oracle("numpy.apply_along_axis", lambda xp, f, x: f(_square, 1, x), [(r(3, 4),)]),
    Oracle("numpy.fill_diagonal", lambda xp, f, x, v: _filled_diagonal(xp, f, x, v), [(r(3, 3), r()), (r(3, 3), r(3))]),
    Oracle("numpy.pad", lambda xp, f, x: f(x, 2), [(r(3),), (r(2, 3),)]),
    *(Oracle(f"numpy.pad[{m}]", lambda xp, f, x, m=m: f(x, (1, 2), mode=m), [(r(4),)]) for m in ("reflect", "symmetric", "edge", "wrap", "mean", "linear_ramp", "maximum", "minimum")),
    Oracle("numpy.sort", lambda xp, f, x: f(x), [(r(5),), (r(3, 4),)]),
    Oracle("numpy.sort[axis=0]", lambda xp, f, x: f(x, axis=0), [(r(3, 4),)]),
    Oracle("numpy.partition", lambda xp, f, x: f(x, 2)[2], [(r(6),)]),
    # jax.numpy.unique's gradient is zero; for distinct values unique is sort (a selection)
    *(Oracle(f"numpy.{n}", lambda xp, f, x: f(x), [(r(6),)], twin=lambda jnp: jnp.sort) for n in ("unique", "unique_values")),
    Oracle("numpy.meshgrid", lambda xp, f, x, y: f(x, y), [(r(3), r(4))]),
    Oracle("numpy.meshgrid[ij]", lambda xp, f, x, y: f(x, y, indexing="ij"), [(r(3), r(4))]),
    Oracle("numpy.linspace", lambda xp, f, a, b: f(a, b, 5), [(r(), r())]),
    Oracle("numpy.logspace", lambda xp, f, a, b: f(a, b, 4), [(u(), u())]),
    Oracle("numpy.full", lambda xp, f, v: f((2, 3), v), [(r(),)]),
    Oracle("numpy.full_like", lambda xp, f, x, v: f(x, v), [(r(2, 3), r())]),
    *(Oracle(f"numpy.{n}", lambda xp, f, x: f(x), [(r(),)]) for n in ("float64", "double", "complex128", "cdouble")),
    *(Oracle(f"numpy.{n}", lambda xp, f, x: f(x), [(r(),)], rtol=1e-6) for n in ("float32", "single", "complex64", "csingle")),
    Oracle("numpy.float16", lambda xp, f, x: f(x), [(r(),)], rtol=1e-3),
    Oracle("numpy.vectorize", lambda xp, f, x: f(_square)(x), [(r(4),)]),
]

PRODUCTS = [
    Oracle("numpy.dot", lambda xp, f, a, b: f(a, b), [(r(3, 4), r(4)), (r(4), r(4)), (r(2, 3), r(3, 2))]),
    Oracle("numpy.vdot", lambda xp, f, a, b: f(a, b), [(r(4), r(4)), (r(2, 3), r(2, 3))]),
    Oracle("numpy.inner", lambda xp, f, a, b: f(a, b), [(r(4), r(4)), (r(2, 4), r(3, 4))]),
    Oracle("numpy.outer", lambda xp, f, a, b: f(a, b), [(r(3), r(4))]),
    Oracle("numpy.kron", lambda xp, f, a, b: f(a, b), [(r(2, 2), r(2, 3))]),
    Oracle("numpy.matmul", lambda xp, f, a, b: f(a, b), [(r(3, 4), r(4, 2)), (r(2, 3, 4), r(4)), (r(4), r(2, 4, 3))]),
    Oracle("numpy.tensordot", lambda xp, f, a, b: f(a, b, axes=([1, 2], [0, 1])), [(r(2, 3, 4), r(3, 4, 2))]),
    Oracle("numpy.tensordot[axes=1]", lambda xp, f, a, b: f(a, b, 1), [(r(2, 3), r(3, 4))]),
    Oracle("numpy.einsum", lambda xp, f, a, b: f("ij,jk->ik", a, b), [(r(2, 3), r(3, 4))]),
    Oracle("numpy.einsum[trace, broadcast]", lambda xp, f, a, b: f("...ii,...i->...", a, b), [(r(2, 3, 3), r(2, 3))]),
    Oracle("numpy.vecdot", lambda xp, f, a, b: f(a, b), [(r(3, 4), r(4))]),
    Oracle("numpy.cross", lambda xp, f, a, b: f(a, b), [(r(3), r(3)), (r(4, 3), r(3)), (r(2), r(2))]),
    Oracle("numpy.convolve", lambda xp, f, a, b: f(a, b), [(r(5), r(3))]),
    *(Oracle(f"numpy.convolve[{m}]", lambda xp, f, a, b, m=m: f(a, b, mode=m), [(r(5), r(3))]) for m in ("same", "valid")),
    Oracle("numpy.correlate", lambda xp, f, a, b: f(a, b), [(r(5), r(3))]),
    Oracle("numpy.correlate[full]", lambda xp, f, a, b: f(a, b, mode="full"), [(r(5), r(3))]),
    Oracle("numpy.interp", lambda xp, f, x, fp: f(x, np.linspace(-2.0, 2.0, 5), fp), [(r(6), r(5))]),
    Oracle("numpy.polyval", lambda xp, f, c, x: f(c, x), [(r(4), r(5))]),
    Oracle("numpy.polyfit", lambda xp, f, x, y: f(x, y, 2), [(r(6), r(6))]),
    Oracle("numpy.roots", lambda xp, f, c: _eigvals_invariant(xp, f(c)), [(r(4),)]),
    Oracle("numpy.gradient", lambda xp, f, x: f(x), [(r(5),)]),
    Oracle("numpy.gradient[2-D]", lambda xp, f, x: f(x, axis=1), [(r(3, 4),)]),
    Oracle("numpy.trapezoid", lambda xp, f, y: f(y), [(r(5),), (r(3, 4),)]),
    Oracle("numpy.trapezoid[x=]", lambda xp, f, y, x: f(y, x=x), [(r(5), r(5))]),
    Oracle("numpy.histogram_bin_edges", lambda xp, f, x: f(x, bins=3), [(r(6),)]),
    Oracle("numpy.histogram", lambda xp, f, x, w: f(x, bins=3, range=(-4.0, 4.0), weights=w)[0], [(r(6), p(6))]),
]

LINALG = [
    *(Oracle(f"numpy.linalg.{n}", lambda xp, f, a: f(a), [(wc(3, 3),), (wc(2, 3, 3),)]) for n in ("inv", "det", "slogdet", "pinv", "svdvals")),
    Oracle("numpy.linalg.pinv[tall]", lambda xp, f, a: f(a), [(r(4, 3),)]),
    Oracle("numpy.linalg.solve", lambda xp, f, a, b: f(a, b), [(wc(3, 3), r(3)), (wc(3, 3), r(3, 2))]),
    Oracle("numpy.linalg.cholesky", lambda xp, f, b: f(_spd(xp, b)), [(r(3, 3),)]),
    Oracle("numpy.linalg.eigh", lambda xp, f, b: (lambda w, v: (w, v * v))(*f(_sym(xp, b))), [(r(3, 3),)]),
    Oracle("numpy.linalg.eigvalsh", lambda xp, f, b: f(_sym(xp, b)), [(r(3, 3),)]),
    # jax.numpy.linalg.eig refuses eigenvector derivatives even when only eigenvalues are used
    Oracle("numpy.linalg.eig", lambda xp, f, a: _eigvals_invariant(xp, f(a)[0]), [(r(3, 3),)],
           twin=lambda jnp: lambda a: (jnp.linalg.eigvals(a), None)),
    Oracle("numpy.linalg.eigvals", lambda xp, f, a: _eigvals_invariant(xp, f(a)), [(r(3, 3),)]),
    Oracle("numpy.linalg.svd", lambda xp, f, a: (lambda s: (s[0] * s[0], s[1], s[2] * s[2]))(f(a, full_matrices=False)), [(r(3, 3),), (r(4, 3),)]),
    Oracle("numpy.linalg.svd[compute_uv=False]", lambda xp, f, a: f(a, compute_uv=False), [(r(4, 3),)]),
    Oracle("numpy.linalg.qr", lambda xp, f, a: f(a), [(r(4, 3),), (r(3, 3),)]),
    Oracle("numpy.linalg.lstsq", lambda xp, f, a, b: f(a, b)[:2], [(r(5, 3), r(5))]),
    Oracle("numpy.linalg.matrix_power", lambda xp, f, a: f(a, 3), [(r(3, 3),)]),
    Oracle("numpy.linalg.matrix_power[-2]", lambda xp, f, a: f(a, -2), [(wc(3, 3),)]),
    Oracle("numpy.linalg.cond", lambda xp, f, a: f(a), [(wc(3, 3),)]),
    Oracle("numpy.linalg.multi_dot", lambda xp, f, a, b, c: f([a, b, c]), [(r(2, 3), r(3, 4), r(4, 2))]),
    Oracle("numpy.linalg.tensorsolve", lambda xp, f, a, b: f(a.reshape(2, 3, 6), b), [(wc(6, 6), r(2, 3))]),
    Oracle("numpy.linalg.tensorinv", lambda xp, f, a: f(a.reshape(2, 3, 6)), [(wc(6, 6),)]),
    *(Oracle(f"numpy.linalg.norm[ord={o}]", lambda xp, f, x, o=o: f(x, ord=o), [(r(5),)]) for o in (None, 1, 2, np.inf, -np.inf, 3, 0.5)),
    *(Oracle(f"numpy.linalg.norm[ord={o}]", lambda xp, f, x, o=o: f(x, ord=o), [(r(3, 4),)]) for o in ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf)),
    Oracle("numpy.linalg.norm[axis=1]", lambda xp, f, x: f(x, axis=1), [(r(3, 4),)]),
    Oracle("numpy.linalg.vector_norm", lambda xp, f, x: f(x), [(r(3, 4),)]),
    Oracle("numpy.linalg.vector_norm[ord=1, axis=0]", lambda xp, f, x: f(x, ord=1, axis=0), [(r(3, 4),)]),
    Oracle("numpy.linalg.matrix_norm", lambda xp, f, x: f(x), [(r(2, 3, 4),)]),
    Oracle("numpy.linalg.matrix_norm[nuc]", lambda xp, f, x: f(x, ord="nuc"), [(r(3, 4),)]),
    *(Oracle(f"numpy.linalg.{n}", lambda xp, f, x: f(x), [(r(3, 4),), (r(2, 3, 3),)]) for n in ("trace", "diagonal", "matrix_transpose")),
    Oracle("numpy.linalg.matmul", lambda xp, f, a, b: f(a, b), [(r(3, 4), r(4, 2))]),
    Oracle("numpy.linalg.tensordot", lambda xp, f, a, b: f(a, b, axes=1), [(r(3, 4), r(4, 2))]),
    Oracle("numpy.linalg.outer", lambda xp, f, a, b: f(a, b), [(r(3), r(4))]),
    Oracle("numpy.linalg.vecdot", lambda xp, f, a, b: f(a, b), [(r(3, 4), r(3, 4))]),
    Oracle("numpy.linalg.cross", lambda xp, f, a, b: f(a, b), [(r(4, 3), r(4, 3))]),
]

_FFT_ONE = [(r(8),), (r(3, 6),)]
FFT = [
    *(Oracle(f"numpy.fft.{n}", lambda xp, f, x: f(x), _FFT_ONE) for n in (
        "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "ifftn", "rfftn", "irfftn", "fftshift", "ifftshift")),
    *(Oracle(f"numpy.fft.{n}", lambda xp, f, x: f(x), [(r(3, 6),), (r(2, 3, 4),)]) for n in ("fft2", "ifft2", "rfft2", "irfft2")),
    *(Oracle(f"numpy.fft.{n}[n=5, {norm}]", lambda xp, f, x, norm=norm: f(x, 5, norm=norm), [(r(8),)])
      for n in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft") for norm in ("backward", "ortho", "forward")),
    *(Oracle(f"numpy.fft.{n}[s, axes, ortho]", lambda xp, f, x: f(x, s=(4, 5), axes=(0, 2), norm="ortho"), [(r(3, 2, 6),)])
      for n in ("fftn", "ifftn", "rfftn", "irfftn", "fft2", "ifft2", "rfft2", "irfft2")),
    Oracle("numpy.fft.fftshift[axes]", lambda xp, f, x: f(x, axes=1), [(r(3, 5),)]),
    *(Oracle(f"numpy.fft.{n}", lambda xp, f, d: f(8, d), [(p(),)]) for n in ("fftfreq", "rfftfreq")),
]

METHODS = [
    *(method(n, lambda xp, f, x: getattr(x, f)()) for n in (
        "sum", "prod", "mean", "var", "std", "max", "min", "cumsum", "cumprod", "ravel", "flatten", "copy",
        "conj", "conjugate", "transpose", "squeeze")),
    *(method(f"{n}[axis=1]", lambda xp, f, x: getattr(x, f)(axis=1)) for n in (
        "sum", "prod", "mean", "var", "std", "max", "min", "cumsum", "cumprod")),
    method("sort", lambda xp, f, x: _sorted_copy(xp, x)),
    method("reshape", lambda xp, f, x: x.reshape(-1, 2)),
    method("swapaxes", lambda xp, f, x: x.swapaxes(0, -1)),
    method("clip", lambda xp, f, x: x.clip(-0.5, 0.5)),
    method("repeat", lambda xp, f, x: x.repeat(2, axis=0)),
    method("take", lambda xp, f, x: x.take(_INDEX)),
    method("trace", lambda xp, f, x: x.trace()),
    method("dot", lambda xp, f, x: x.dot(x.T), [(r(3, 4),)]),
    method("diagonal", lambda xp, f, x: x.diagonal()),
    method("astype", lambda xp, f, x: x.astype(np.float32), rtol=1e-6),
    method("compress", lambda xp, f, x: x.compress(_MASK[:3], axis=-2)),
    method("choose", lambda xp, f, x, y: xp.asarray(_CHOICE).choose([x, y * y]), [(r(4), r(4))]),
    # a NumPy array lives on the CPU (x.to_device("cpu") is x); a JAX array's wants a Device
    method("to_device", lambda xp, f, x: x.to_device("cpu") if xp is np else x, [(r(3, 4),)]),
]

LEFTOVERS = [  # issue 14's leftovers (rules/numpy_leftovers.py, numpy_statistics.py)
    Oracle("numpy.astype", lambda xp, f, x: f(x, np.float32), [(r(3, 4),)], rtol=1e-6),
    Oracle("numpy.astype[complex]", lambda xp, f, x: xp.abs(f(x, np.complex128) * (1 + 2j)), [(r(5),)]),
    *(Oracle(f"numpy.{n}[decimals=2]", lambda xp, f, x: f(x, 2) + x, same_domain(ONE, "real")) for n in ("round", "around")),
    Oracle("numpy.average[returned]", lambda xp, f, x, w: f(x, axis=1, weights=w, returned=True), [(r(3, 4), p(4))]),
    Oracle("numpy.average[returned, weights like a]", lambda xp, f, x, w: f(x, weights=w, returned=True),
           [(r(5), p(5)), (r(3, 4), p(3, 4))]),
    Oracle("numpy.average[returned, no weights]", lambda xp, f, x: f(x, axis=0, returned=True), [(r(3, 4),)]),
]

DERIVED = [  # differentiated from NumPy's Python source when this was written (some have rules now)
    Oracle("numpy.apply_over_axes", lambda xp, f, x: f(xp.sum, x * x, [0]), [(r(3, 4),)]),
    Oracle("numpy.block", lambda xp, f, x, y: f([[x, y], [y, x]]), [(r(2, 3), r(2, 3))]),
    Oracle("numpy.broadcast_arrays", lambda xp, f, x, y: f(x, y), [(r(4), r(3, 1))]),
    Oracle("numpy.ediff1d", lambda xp, f, x: f(x), [(r(5),), (r(2, 3),)]),
    Oracle("numpy.geomspace", lambda xp, f, a, b: f(a, b, 4), [(p(), p())]),
    Oracle("numpy.i0", lambda xp, f, x: f(x), [(r(5),)]),
    Oracle("numpy.kaiser", lambda xp, f, b: f(6, b), [(p(),)]),
    *(Oracle(f"numpy.{n}", lambda xp, f, x: f(x), [(r(5),), (nan(3, 4),)]) for n in (
        "nancumprod", "nancumsum", "nanprod", "nanstd", "nanvar", "nanmedian")),
    Oracle("numpy.nanstd[axis=0, ddof=1]", lambda xp, f, x: f(x, axis=0, ddof=1), [(nan(4, 3),)]),
    Oracle("numpy.poly", lambda xp, f, x: f(x), [(r(4),)]),
    *(Oracle(f"numpy.{n}", lambda xp, f, a, b: f(a, b), [(r(5), r(3)), (r(2), r(4))]) for n in ("polyadd", "polysub", "polymul")),
    # the quotient: JAX's remainder keeps the dividend's length (NumPy's is trimmed)
    Oracle("numpy.polydiv", lambda xp, f, a, b: f(a, b + 3.0)[0], [(r(5), r(3))]),
    Oracle("numpy.polyder", lambda xp, f, a: f(a, 2), [(r(5),)]),
    Oracle("numpy.resize", lambda xp, f, x: f(x, (3, 4)), [(r(5),), (r(2, 3),)]),
    Oracle("numpy.sort_complex", lambda xp, f, x: f(x), [(r(5),)]),
    Oracle("numpy.unstack", lambda xp, f, x: f(x, axis=1), [(r(3, 4),)]),
    Oracle("numpy.unwrap", lambda xp, f, x: f(3.0 * x), [(r(6),), (r(2, 5),)]),
    Oracle("numpy.vander", lambda xp, f, x: f(x), [(r(4),)]),
    Oracle("numpy.vander[N=3, increasing]", lambda xp, f, x: f(x, 3, increasing=True), [(r(4),)]),
    Oracle("numpy.cov", lambda xp, f, x: f(x), [(r(3, 5),)]),
    Oracle("numpy.cov[weights, ddof=0]", lambda xp, f, x, w: f(x, aweights=w, ddof=0), [(r(2, 5), p(5))]),
    Oracle("numpy.corrcoef", lambda xp, f, x: f(x), [(r(3, 5),)]),
    Oracle("numpy.polyint", lambda xp, f, c: f(c, 2), [(r(4),)]),
    Oracle("numpy.bincount", lambda xp, f, w: f(_INTS + 2, weights=w, minlength=6), [(r(5),)]),
    Oracle("numpy.histogram2d", lambda xp, f, x, y, w: f(x, y, bins=2, range=[[-3, 3], [-3, 3]], weights=w)[0],
           [(r(6), r(6), p(6))]),
    Oracle("numpy.histogramdd", lambda xp, f, x, w: f(x, bins=2, range=[[-3, 3], [-3, 3]], weights=w)[0],
           [(r(6, 2), p(6))]),
    Oracle("numpy.divmod", lambda xp, f, x, y: f(x, y), [(r(5), p(5))]),
    *(Oracle(f"numpy.{n}", lambda xp, f, x: f(x), [(r(5),), (r(2, 3),)]) for n in ("frexp", "modf")),
    Oracle("numpy.matvec", lambda xp, f, a, v: f(a, v), [(r(3, 4), r(4)), (r(2, 3, 4), r(2, 4))]),
    Oracle("numpy.vecmat", lambda xp, f, v, a: f(v, a), [(r(3), r(3, 4)), (r(2, 3), r(2, 3, 4))]),
]

_C1 = [(c(),), (c(5),), (c(3, 4),)]
_C2 = [(c(3, 4), c(4)), (r(3, 4), c(4)), (c(), c(5))]
COMPLEX = [  # complex inputs: JAX's gradient is the conjugate of yuebing's (see _compare)
    *(Oracle(f"numpy.{n}[complex]", lambda xp, f, z: f(z), _C1) for n in (
        "sin", "cos", "tan", "sinh", "cosh", "tanh", "exp", "expm1", "log", "log1p", "sqrt", "square", "reciprocal",
        "arcsin", "arctan", "arcsinh", "negative", "conj", "real", "imag", "abs", "angle")),
    *(Oracle(f"numpy.{n}[complex]", lambda xp, f, a, b: f(a, b), _C2) for n in ("add", "subtract", "multiply", "divide")),
    Oracle("numpy.power[complex]", lambda xp, f, a, b: f(a, b), [(c(4), r(4)), (c(4), c(4))]),
    *(Oracle(f"numpy.{n}[complex]", lambda xp, f, z: f(z), [(c(5),), (c(3, 4),)]) for n in (
        "sum", "prod", "mean", "var", "std", "cumsum", "cumprod", "ravel")),
    Oracle("numpy.var[complex, axis=0]", lambda xp, f, z: f(z, axis=0), [(c(3, 4),)]),
    *(Oracle(f"numpy.{n}[complex]", lambda xp, f, a, b: f(a, b), [(c(3, 4), c(4)), (c(4), r(4))]) for n in ("dot", "inner", "matmul")),
    Oracle("numpy.vdot[complex]", lambda xp, f, a, b: f(a, b), [(c(4), c(4)), (c(2, 3), r(2, 3))]),
    Oracle("numpy.outer[complex]", lambda xp, f, a, b: f(a, b), [(c(3), c(4))]),
    Oracle("numpy.einsum[complex]", lambda xp, f, a, b: f("ij,jk->ik", a, b), [(c(2, 3), c(3, 4))]),
    Oracle("numpy.concatenate[complex]", lambda xp, f, a, b: f([a, b]), [(c(3), r(2))]),
    Oracle("numpy.transpose[complex]", lambda xp, f, z: f(z), [(c(3, 4),)]),
    Oracle("numpy.where[complex]", lambda xp, f, a, b: f(_MASK34, a, b), [(c(3, 4), c(4))]),
    Oracle("numpy.convolve[complex]", lambda xp, f, a, b: f(a, b), [(c(5), c(3))]),
    Oracle("numpy.correlate[complex]", lambda xp, f, a, b: f(a, b, mode="full"), [(c(5), c(3))]),
    *(Oracle(f"numpy.linalg.{n}[complex]", lambda xp, f, a: f(a), [(cwc(3, 3),)]) for n in ("inv", "det", "slogdet", "pinv", "svdvals")),
    Oracle("numpy.linalg.solve[complex]", lambda xp, f, a, b: f(a, b), [(cwc(3, 3), c(3)), (cwc(3, 3), r(3, 2))]),
    Oracle("numpy.linalg.cholesky[complex]", lambda xp, f, b: f(_hpd(xp, b)), [(c(3, 3),)]),
    Oracle("numpy.linalg.eigvalsh[complex]", lambda xp, f, b: f(_herm(xp, b)), [(c(3, 3),)]),
    Oracle("numpy.linalg.eigh[complex]", lambda xp, f, b: (lambda w, v: (w, xp.abs(v) ** 2))(*f(_herm(xp, b))), [(c(3, 3),)]),
    Oracle("numpy.linalg.svd[complex]", lambda xp, f, a: (lambda s: (xp.abs(s[0]) ** 2, s[1], xp.abs(s[2]) ** 2))(f(a, full_matrices=False)), [(c(3, 3),)]),
    Oracle("numpy.linalg.qr[complex]", lambda xp, f, a: f(a), [(c(4, 3),)]),
    Oracle("numpy.linalg.eigvals[complex]", lambda xp, f, a: _eigvals_invariant(xp, f(a)), [(c(3, 3),)]),
    Oracle("numpy.linalg.lstsq[complex]", lambda xp, f, a, b: f(a, b)[0], [(c(5, 3), c(5))]),
    *(Oracle(f"numpy.linalg.norm[complex, ord={o}]", lambda xp, f, z, o=o: f(z, ord=o), [(c(5),)]) for o in (None, 1, np.inf, 3)),
    *(Oracle(f"numpy.linalg.norm[complex, ord={o}]", lambda xp, f, z, o=o: f(z, ord=o), [(c(3, 4),)]) for o in ("fro", "nuc", 2, 1)),
    Oracle("numpy.linalg.matrix_power[complex]", lambda xp, f, a: f(a, 3), [(c(3, 3),)]),
    *(Oracle(f"numpy.fft.{n}[complex]", lambda xp, f, z: f(z), [(c(8),), (c(3, 6),)]) for n in (
        "fft", "ifft", "hfft", "fftn", "ifftn", "irfft", "irfftn", "fftshift")),
    *(Oracle(f"numpy.fft.{n}[complex]", lambda xp, f, z: f(z), [(c(3, 6),)]) for n in ("fft2", "ifft2", "irfft2")),
    Oracle("numpy.fft.irfft[complex, n=9, ortho]", lambda xp, f, z: f(z, 9, norm="ortho"), [(c(5),)]),
    method("sum[complex]", lambda xp, f, z: z.sum(axis=0), [(c(3, 4),)]),
    method("conj[complex]", lambda xp, f, z: z.conj(), [(c(3, 4),)]),
]

ORACLES = DERIVED + ELEMENTWISE + REDUCTIONS + SHAPE + PRODUCTS + LINALG + FFT + METHODS + LEFTOVERS + COMPLEX


def function_of(name: str, xp: Any) -> Any:
    """The function of library ``xp`` that ``name`` (``numpy.linalg.inv[...]``) stands for; for
    an ndarray method, its name (the call looks it up on the array)."""
    base = name.split("[")[0]
    parts = base.split(".")
    if parts[1] == "ndarray":
        return parts[2]
    module = {"linalg": xp.linalg, "fft": xp.fft}.get(parts[1], xp)
    return getattr(module, parts[-1])


def _outputs(out: Any) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def weighted(xp: Any, out: Any, keep: list, weights: list) -> Any:
    """``sum_k <w_k, real(out_k)> + <w'_k, imag(out_k)>`` over the kept outputs."""
    if not isinstance(out, (tuple, list)):
        out = [out]
    total = 0.0
    for i, w in zip(keep, weights):
        o = out[i]
        total = total + xp.sum(w[0] * xp.real(o)) + xp.sum(w[1] * xp.imag(o))
    return total


def make_loss(xp: Any, call: Callable, f: Any, keep: list, weights: list, arity: int) -> Callable:
    """The weighted output of ``call`` as a function of its ``arity`` arguments, taken one by one
    (third order takes no ``*args`` at a call site)."""
    if arity == 1:
        def loss(a):
            return weighted(xp, call(xp, f, a), keep, weights)
    elif arity == 2:
        def loss(a, b):
            return weighted(xp, call(xp, f, a, b), keep, weights)
    else:
        def loss(a, b, c):
            return weighted(xp, call(xp, f, a, b, c), keep, weights)
    return loss


def _inputs(rng: np.random.Generator, config: tuple) -> list:
    return [np.asarray(DOMAINS[domain](rng, shape)) for shape, domain in config]


def seed_of(name: str) -> int:
    return zlib.crc32(name.encode())


def prepared(oracle: Oracle, config: tuple, seed: int) -> tuple:
    """``(rng, xs, numpy loss)``: the inputs of one configuration and the weighted loss of the
    NumPy function, its weights drawn from ``rng`` after the inputs."""
    rng = np.random.default_rng(seed)
    xs = _inputs(rng, config)
    f_np = function_of(oracle.name, np)
    outs = _outputs(oracle.call(np, f_np, *xs))
    keep = [i for i, o in enumerate(outs) if np.asarray(o).dtype.kind in "fc"]
    weights = [(rng.standard_normal(np.shape(outs[i])), rng.standard_normal(np.shape(outs[i]))) for i in keep]
    return rng, xs, keep, weights
