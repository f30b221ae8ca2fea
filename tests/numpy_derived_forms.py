"""Call forms and checks for the sweep of NumPy functions derived from their Python source
(``tests/test_numpy_derived.py``): how to call each function on a small float input, a scalar
objective of its float outputs, and the comparison of reverse, forward and second order with
finite differences."""
import numpy as np

import yuebing as yb

_rng = np.random.default_rng(14)
X1 = _rng.uniform(0.5, 2.0, 5)  # distinct, positive: away from kinks, logs and square roots of 0
X2 = _rng.uniform(0.5, 2.0, (3, 4))
XS = _rng.uniform(0.5, 2.0, (3, 3)) + 3 * np.eye(3)  # well conditioned
GENERIC_INPUTS = (X1, X2, XS)

#: name -> [(call(f, x), x)]: the first form NumPy itself accepts is the one checked
FORMS = {
    "apply_over_axes": [(lambda f, x: f(np.sum, x, [0]), X2)],
    "astype": [(lambda f, x: f(x, np.float64), X1), (lambda f, x: f(x, np.complex128), X1)],
    "bincount": [(lambda f, x: f(np.array([0, 1, 1, 3, 0]), weights=x), X1)],
    "block": [(lambda f, x: f([[x[:2, :2], x[:2, 2:]], [x[2:, :2], x[2:, 2:]]]), X2)],
    "broadcast_arrays": [(lambda f, x: f(x[:, None], x), X1)],
    "geomspace": [(lambda f, x: f(x[0], x[1], 4), X1)],
    "histogram2d": [(lambda f, x: f(x, x[::-1], bins=2, weights=x * x), X1)],
    "histogramdd": [(lambda f, x: f(np.stack([x, x[::-1]], axis=1), bins=2, weights=x * x), X1)],
    "intersect1d": [(lambda f, x: f(x, x[1:4]), X1)],
    "setdiff1d": [(lambda f, x: f(x, x[1:3]), X1)],
    "setxor1d": [(lambda f, x: f(x, x[1:3] * 3), X1)],
    "union1d": [(lambda f, x: f(x, x[1:3] * 3), X1)],
    "kaiser": [(lambda f, x: f(6, x[0]), X1)],
    "nanpercentile": [(lambda f, x: f(x, 30), X1)],
    "nanquantile": [(lambda f, x: f(x, 0.3), X1)],
    "percentile": [(lambda f, x: f(x, 30), X1)],
    "quantile": [(lambda f, x: f(x, 0.3), X1)],
    "polyadd": [(lambda f, x: f(x, x[:2] * 2), X1)],
    "polysub": [(lambda f, x: f(x, x[:2] * 2), X1)],
    "polymul": [(lambda f, x: f(x, x[:3] * 2), X1)],
    "polydiv": [(lambda f, x: f(x, x[:3] * 2), X1)],
    "resize": [(lambda f, x: f(x, (3, 4)), X1)],
    "row_stack": [(lambda f, x: f((x, x * 2)), X1)],
    "unwrap": [(lambda f, x: f(x * 3), X1)],
    "fromfunction": [(lambda f, x: f(lambda i, j: i * x[0] + j * x[1], (2, 3)), X1)],
    "average": [(lambda f, x: f(x, weights=x[::-1]), X1)],
    "interp": [(lambda f, x: f(x * 0.9, np.sort(x), x * x), X1)],
    "trapezoid": [(lambda f, x: f(x, np.sort(x)), X1)],
    "convolve": [(lambda f, x: f(x, x[:3]), X1)],
    "correlate": [(lambda f, x: f(x, x[:3]), X1)],
    "polyval": [(lambda f, x: f(x, x[:3]), X1)],
    "polyfit": [(lambda f, x: f(np.arange(5.0), x, 2), X1)],
    "piecewise": [(lambda f, x: f(x, [x < 1.2, x >= 1.2], [lambda t: t * t, lambda t: 3 * t]), X1)],
    "select": [(lambda f, x: f([x < 1.2, x >= 1.2], [x * x, 3 * x]), X1)],
    "where": [(lambda f, x: f(x < 1.2, x * x, 3 * x), X1)],
    "cross": [(lambda f, x: f(x[:3], x[1:4]), X1)],
    "outer": [(lambda f, x: f(x, x[:3]), X1)],
    "kron": [(lambda f, x: f(x[:2], x[2:]), X1)],
    "tensordot": [(lambda f, x: f(x, x.T, 1), X2)],
    "einsum": [(lambda f, x: f("ij,kj->ik", x, x), X2)],
    "dot": [(lambda f, x: f(x, x.T), X2)],
    "vdot": [(lambda f, x: f(x, x * 2), X1)],
    "inner": [(lambda f, x: f(x, x * 2), X1)],
    "matmul": [(lambda f, x: f(x, x.T), X2)],
    "solve": [(lambda f, x: f(x, x[0]), XS)],
    "lstsq": [(lambda f, x: f(x.T, x[0], rcond=None), X2)],
    "tensorsolve": [(lambda f, x: f(x, x[0]), XS)],
    "matrix_power": [(lambda f, x: f(x, 3), XS)],
    "multi_dot": [(lambda f, x: f([x, x.T, x]), X2)],
    "gradient": [(lambda f, x: f(x, np.sort(x)), X1), (lambda f, x: f(x), X1)],
    "diff": [(lambda f, x: f(x, 2), X1)],
    "clip": [(lambda f, x: f(x, 0.8, 1.5), X1)],
    "take": [(lambda f, x: f(x, [0, 2, 2]), X1)],
    "take_along_axis": [(lambda f, x: f(x, np.argsort(x, axis=1), axis=1), X2)],
    "choose": [(lambda f, x: f([0, 1, 0, 1, 1], [x, x * 2]), X1)],
    "compress": [(lambda f, x: f([True, False, True], x), X1)],
    "extract": [(lambda f, x: f(x > 1.0, x), X1)],
    "repeat": [(lambda f, x: f(x, 2), X1)],
    "tile": [(lambda f, x: f(x, 2), X1)],
    "roll": [(lambda f, x: f(x, 2), X1)],
    "rot90": [(lambda f, x: f(x), X2)],
    "pad": [(lambda f, x: f(x, 2, mode="reflect"), X1)],
    "insert": [(lambda f, x: f(x, 1, x[0] * 2), X1)],
    "delete": [(lambda f, x: f(x, 1), X1)],
    "append": [(lambda f, x: f(x, x[:2]), X1)],
    "concatenate": [(lambda f, x: f([x, x * 2]), X1)],
    "stack": [(lambda f, x: f([x, x * 2]), X1)],
    "vstack": [(lambda f, x: f([x, x * 2]), X1)],
    "hstack": [(lambda f, x: f([x, x * 2]), X1)],
    "dstack": [(lambda f, x: f([x, x * 2]), X1)],
    "column_stack": [(lambda f, x: f([x, x * 2]), X1)],
    "split": [(lambda f, x: f(x[:4], 2), X1)],
    "array_split": [(lambda f, x: f(x, 2), X1)],
    "hsplit": [(lambda f, x: f(x, 2), X2)],
    "vsplit": [(lambda f, x: f(x[:2], 2), X2)],
    "dsplit": [(lambda f, x: f(x.reshape(1, 3, 4), 2), X2)],
    "moveaxis": [(lambda f, x: f(x, 0, 1), X2)],
    "swapaxes": [(lambda f, x: f(x, 0, 1), X2)],
    "expand_dims": [(lambda f, x: f(x, 0), X1)],
    "broadcast_to": [(lambda f, x: f(x, (2, 5)), X1)],
    "reshape": [(lambda f, x: f(x, (4, 3)), X2)],
    "put_along_axis": [],
    "linspace": [(lambda f, x: f(x[0], x[1], 4), X1)],
    "logspace": [(lambda f, x: f(x[0], x[1], 4), X1)],
    "full": [(lambda f, x: f(3, x[0]), X1)],
    "full_like": [(lambda f, x: f(x, x[0]), X1)],
    "meshgrid": [(lambda f, x: f(x, x[:2]), X1)],
    "histogram": [(lambda f, x: f(x, bins=3, weights=x * x), X1)],
    "partition": [(lambda f, x: f(x, 2), X1)],
    "nan_to_num": [(lambda f, x: f(x), X1)],
    "real_if_close": [(lambda f, x: f(x + 0j), X1)],
    "ptp": [(lambda f, x: f(x), X1)],
    "cumulative_sum": [(lambda f, x: f(x), X1)],
    "cumulative_prod": [(lambda f, x: f(x), X1)],
    "trace": [(lambda f, x: f(x), XS)],
    "fill_diagonal": [],
    "norm": [(lambda f, x: f(x), X2), (lambda f, x: f(x, 1), X2), (lambda f, x: f(x, "nuc"), X2)],
    "cond": [(lambda f, x: f(x), XS)],
    "vector_norm": [(lambda f, x: f(x), X2)],
    "matrix_norm": [(lambda f, x: f(x), X2)],
    "irfft": [(lambda f, x: f(x + 0.5j * x[::-1]), X1)],
    "hfft": [(lambda f, x: f(x + 0.5j * x[::-1]), X1)],
    "irfft2": [(lambda f, x: f(x + 0.5j * x[::-1]), X2)],
    "irfftn": [(lambda f, x: f(x + 0.5j * x[::-1]), X2)],
    "fftfreq": [(lambda f, x: f(5, x[0]), X1)],
    "rfftfreq": [(lambda f, x: f(5, x[0]), X1)],
    "tensorinv": [(lambda f, x: f(x.reshape(3, 3), ind=1), XS)],
    "vecdot": [(lambda f, x: f(x, x * 2), X1)],
    "matrix_transpose": [(lambda f, x: f(x), X2)],
    "diagonal": [(lambda f, x: f(x), X2)],
    "trim_zeros": [(lambda f, x: f(np.concatenate([[0.0], x, [0.0]])), X1)],
    "apply_along_axis": [(lambda f, x: f(np.sum, 0, x), X2)],
    "place": [],
    "putmask": [],
    "copyto": [],
    "put": [],
    "ix_": [],
    "i0": [(lambda f, x: f(x), X1)],
    "sinc": [(lambda f, x: f(x), X1)],
}


def _float_leaves(value, path=()):
    """The index paths of float and complex arrays and numbers inside tuples and lists."""
    if isinstance(value, (tuple, list)):
        return [p for i, v in enumerate(value) for p in _float_leaves(v, path + (i,))]
    if isinstance(value, (float, complex, np.ndarray, np.generic)) and np.issubdtype(np.asarray(value).dtype, np.inexact):
        return [(path, np.iscomplexobj(value), np.shape(value))]
    return []


def objective_for(call, reference):
    """A nonlinear scalar of the float outputs of ``call(x)`` (sin of each, weighted), or None
    when it has none."""
    leaves = _float_leaves(reference)
    if not leaves:
        return None
    rng = np.random.default_rng(7)
    weighted = []
    for path, is_complex, shape in leaves:
        w = rng.standard_normal(shape)
        if is_complex:
            w = w + 1j * rng.standard_normal(shape)
        weighted.append((path, is_complex, w))

    def objective(x):
        out = call(x)
        total = 0.0
        for path, is_complex, w in weighted:
            v = out
            for k in path:
                v = v[k]
            if is_complex:
                total = total + np.sum(np.real(np.sin(v) * w))
            else:
                total = total + np.sum(np.sin(v) * w)
        return total

    return objective


def fd_gradient(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        g.flat[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def fd_hvp(f, x, v, h=1e-4):
    """The Hessian-vector product by second differences of ``f`` alone."""
    hv = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        hv.flat[i] = (f(x + e + h * v) - f(x - e + h * v) - f(x + e - h * v) + f(x - e - h * v)) / (4 * h * h)
    return hv


def _close(a, b, rtol):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    scale = max(1.0, float(np.max(np.abs(b), initial=0.0)))
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= rtol * scale))


def _attempt(run, expected, rtol):
    try:
        got = run()
    except Exception as error:  # noqa: BLE001 - the sweep records every failure
        first = str(error).splitlines()[0] if str(error) else ""
        return f"error {type(error).__name__}: {first[:160]}"
    return "ok" if _close(got, expected, rtol) else "wrong"


def fd_check_all(f, x):
    """Each mode's verdict on ``f`` at ``x``: ``ok``, ``wrong`` or the error."""
    v = np.random.default_rng(3).standard_normal(x.shape)
    g = fd_gradient(f, x)
    return {
        "rev": _attempt(lambda: yb.grad(f)(x), g, 1e-5),
        "fwd": _attempt(lambda: yb.jvp(f, (x,), (v,))[1], np.sum(g * v), 1e-5),
        "hvp": _attempt(lambda: yb.hvp(f, (x,), (v,))[2][0], fd_hvp(f, x, v), 2e-4),
    }
