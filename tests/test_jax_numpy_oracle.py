"""``yb.grad`` against ``jax.grad`` on the ``jax.numpy`` twin of every NumPy function with a rule
or derived from NumPy's source (issue 14's oracle): elementwise functions, reductions, shape
functions, linear algebra, FFTs and ndarray methods, on random real and complex inputs of several
shapes, with JAX in float64; ``yb.jvp`` is checked against JAX's gradient as well.

The cases are in ``numpy_oracle_cases.py``. ``test_every_twin_is_compared`` fails when a
NumPy function with a rule and a JAX twin is neither compared here nor listed in
``NOT_COMPARED`` with the reason.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import yuebing as yb
from tests.numpy_oracle_cases import (
    DOMAINS, ORACLES, Oracle, function_of, make_loss, prepared, seed_of,
)
from yuebing.rules.coverage import coverage

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

#: NumPy functions with a rule and a jax.numpy twin that are not compared, and why
NOT_COMPARED = {
    "numpy.arange": "jax.numpy.arange needs concrete (untraced) bounds",
    "numpy.from_dlpack": "memory exchange: the same array, no computation to compare; "
                         "tests/test_array_exchange.py checks writes through it against the plain call",
    "numpy.fromiter": "jax.numpy.fromiter raises NotImplementedError (impure under its transformations); "
                      "tests/test_numpy_iterators.py checks it against finite differences",
    "numpy.put": "jax.numpy.put has no in-place form (NumPy's mutates its argument); check_rule covers it",
    "numpy.put_along_axis": "jax.numpy.put_along_axis has no in-place form; check_rule covers it",
    "numpy.place": "jax.numpy.place has no in-place form; check_rule covers it",
    "numpy.unique_all": "its counts and indices are integers; its values are compared as numpy.unique",
    "numpy.unique_counts": "its counts are integers; its values are compared as numpy.unique",
    "numpy.unique_inverse": "its inverse indices are integers; its values are compared as numpy.unique",
    "numpy.spacing": "jax cannot differentiate spacing (no derivative rule for nextafter)",
    "numpy.nextafter": "jax has no derivative rule for nextafter",
    "numpy.fromfunction": "jax.numpy.fromfunction calls the function on traced index arrays; DERIVED_PROBES in "
                          "tests/test_numpy_coverage.py checks it against finite differences",
    "numpy.setdiff1d": ("jax.numpy's set operations give a zero gradient (as its unique does); tests/test_numpy_coverage.py "
                        "checks yuebing's against finite differences"),
    "numpy.printoptions": "a context manager (no values); tests/test_numpy_coverage.py probes it",
    **{f"numpy.{n}": ("jax.numpy's set operations give a zero gradient (as its unique does); tests/test_numpy_coverage.py "
                      "checks yuebing's against finite differences") for n in ("intersect1d", "setxor1d", "union1d")},
    "numpy.ndarray.item": "a JAX array's item() is a concrete Python number (not traced)",
    "numpy.ndarray.view": "a JAX array's view() reinterprets bytes only",
}

# --------------------------------------------------------------------------------------------
# The comparison
# --------------------------------------------------------------------------------------------


def _jax_gradient(loss: Callable, argnums: tuple, xs: list) -> tuple:
    """``jax.grad`` of ``loss``, compiled as a whole (a third of the time of running it op by op);
    op by op where the function cannot be traced (shapes that depend on values: trim_zeros)."""
    gradient = jax.grad(loss, argnums=argnums)
    arrays = [jnp.asarray(x) for x in xs]
    try:
        return jax.jit(gradient)(*arrays)
    except (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError,
            jax.errors.TracerBoolConversionError, jax.errors.TracerIntegerConversionError):
        return gradient(*arrays)


def _compare(oracle: Oracle, config: tuple, seed: int) -> str | None:
    """None when both gradients agree, else a precise description of the disagreement."""
    rng, xs, keep, weights = prepared(oracle, config, seed)
    f_np = function_of(oracle.name, np)
    f_jax = oracle.twin(jnp) if oracle.twin is not None else function_of(oracle.name, jnp)
    argnums = tuple(range(len(xs)))
    ours = yb.grad(make_loss(np, oracle.call, f_np, keep, weights, len(xs)), argnums=argnums)(*xs)
    theirs = _jax_gradient(make_loss(jnp, oracle.call, f_jax, keep, weights, len(xs)), argnums, xs)
    # for a complex input JAX's gradient is the conjugate of the steepest-ascent direction that
    # yuebing gives (the PyTorch/Mooncake convention, docs/conventions.md)
    theirs = [np.conj(b) if np.iscomplexobj(x) else np.asarray(b) for b, x in zip(theirs, xs)]
    for k, (a, b) in enumerate(zip(ours, theirs)):
        b = np.asarray(b)
        if np.shape(a) != b.shape or not _close(a, b, oracle.rtol):
            return (f"{oracle.name}: gradient in argument {k} disagrees with jax.grad\n"
                    f"  inputs (shape, domain): {config}\n  inputs: {[x.tolist() for x in xs]}\n"
                    f"  yuebing: {np.asarray(a).tolist()}\n  jax:     {b.tolist()}")
    # forward mode too, at no cost to JAX: yb.jvp along random directions against <jax.grad, v>
    # (where the coverage table claims it: a gap is tested to raise in test_numpy_coverage)
    if _ENTRIES[oracle.name.split("[")[0]].forward == "—":
        return None
    directions = [np.asarray(DOMAINS["complex" if np.iscomplexobj(x) else "real"](rng, x.shape), dtype=x.dtype) for x in xs]
    tangent = yb.jvp(make_loss(np, oracle.call, f_np, keep, weights, len(xs)), tuple(xs), tuple(directions))[1]
    expected = sum(float(np.sum(np.real(np.conj(b) * v))) for b, v in zip(theirs, directions))  # <g, v>
    if not _close(np.asarray(tangent), np.asarray(expected), oracle.rtol):
        return (f"{oracle.name}: yb.jvp disagrees with jax.grad's directional derivative\n"
                f"  inputs (shape, domain): {config}\n  inputs: {[x.tolist() for x in xs]}\n"
                f"  directions: {[v.tolist() for v in directions]}\n  yuebing: {tangent}\n  jax:     {expected}")
    return None


_ENTRIES = {e.name: e for entries in coverage().values() for e in entries}


def _close(a: Any, b: np.ndarray, rtol: float) -> bool:
    scale = max(1.0, float(np.max(np.abs(b), initial=0.0)))
    return bool(np.allclose(a, b, rtol=rtol, atol=1e-9 * scale, equal_nan=True))


#: compared in the default run (one or two of each family); the rest are marked slow (`-m slow`)
FAST = {
    "numpy.sin", "numpy.log", "numpy.arcsin", "numpy.power", "numpy.divide", "numpy.maximum", "numpy.arctan2",
    "numpy.where", "numpy.clip", "numpy.sum[axis=-1, keepdims]", "numpy.prod", "numpy.var[ddof=1]", "numpy.max",
    "numpy.average", "numpy.cumprod", "numpy.nanmean[NaN]", "numpy.reshape", "numpy.transpose",
    "numpy.concatenate[axis=1]", "numpy.split", "numpy.take", "numpy.sort", "numpy.pad[reflect]", "numpy.diag",
    "numpy.matmul", "numpy.einsum", "numpy.tensordot", "numpy.cross", "numpy.convolve", "numpy.interp",
    "numpy.linalg.inv", "numpy.linalg.solve", "numpy.linalg.cholesky", "numpy.linalg.eigh",
    "numpy.linalg.svd", "numpy.linalg.qr", "numpy.linalg.norm[ord=nuc]", "numpy.linalg.lstsq", "numpy.fft.rfft",
    "numpy.fft.irfftn[s, axes, ortho]", "numpy.fft.hfft[n=5, ortho]", "numpy.ndarray.sum[axis=1]", "numpy.ndarray.std",
    "numpy.exp[complex]", "numpy.abs[complex]", "numpy.linalg.solve[complex]", "numpy.linalg.eigh[complex]",
    "numpy.fft.fft[complex]", 
}


def _param(oracle: Oracle) -> Any:
    marks = [] if oracle.name in FAST and not oracle.slow else [pytest.mark.slow]
    return pytest.param(oracle, id=oracle.name, marks=marks)


@pytest.mark.parametrize("oracle", [_param(o) for o in ORACLES])
def test_gradient_matches_jax(oracle):
    failures = [m for k, config in enumerate(oracle.configs) if (m := _compare(oracle, config, seed_of(oracle.name) + k))]
    assert not failures, "\n".join(failures)


def test_the_fast_subset_names_oracles():
    assert FAST <= {o.name for o in ORACLES}


def test_every_twin_is_compared():
    """Every NumPy function (and ndarray method) with a rule whose jax.numpy twin exists is
    compared above or listed in NOT_COMPARED."""
    compared = {o.name.split("[")[0] for o in ORACLES}
    twins = {"numpy": jnp, "numpy.linalg": jnp.linalg, "numpy.fft": jnp.fft, "numpy.ndarray": jax.Array}
    uncompared = []
    for prefix, entries in coverage().items():
        for e in entries:
            name = e.name.rsplit(".", 1)[1]
            if e.status in ("rule", "derived") and hasattr(twins[prefix], name) and e.name not in compared | set(NOT_COMPARED):
                uncompared.append(e.name)
    assert not uncompared, f"compare these with their jax.numpy twins, or say why not in NOT_COMPARED: {uncompared}"
