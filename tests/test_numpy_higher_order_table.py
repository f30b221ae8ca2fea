"""The coverage table's second- and third-order columns (``python -m yuebing rules``) against what
the transforms do, on the NumPy call table of the JAX oracle (``numpy_oracle_cases.py``): where
the table gives a second-order class, ``yb.hvp`` of the weighted output matches central
differences of ``yb.grad`` (which the JAX oracle checks); where it gives third order,
``check_third_order`` passes; where it gives ``—``, the call raises (never a silent answer).

The whole table is slow (``-m slow``); a few families run by default.
"""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from tests.numpy_oracle_cases import DOMAINS, ORACLES, function_of, make_loss, prepared, seed_of
from yuebing.rules.coverage import coverage
from yuebing.testing.third_order import check_third_order
from yuebing.transform.protocols import NestedDifferentiationError

_ENTRIES = {e.name: e for entries in coverage().values() for e in entries}
NO = "—"

#: checked in the default run
FAST = {"numpy.sin", "numpy.prod", "numpy.linalg.inv", "numpy.fft.rfft", "numpy.cumprod", "numpy.linalg.eigh",
        "numpy.einsum", "numpy.sort", "numpy.linalg.svd", "numpy.exp[complex]", "numpy.linalg.eigvalsh",
        "numpy.linalg.qr", "numpy.max", "numpy.cumsum", "numpy.linalg.det"}


def _loss(oracle, config, k):
    rng, xs, keep, weights = prepared(oracle, config, seed_of(oracle.name) + k)
    return rng, xs, make_loss(np, oracle.call, function_of(oracle.name, np), keep, weights, len(xs))


def _hvp_against_differences(loss, xs, rng):
    directions = tuple(np.asarray(DOMAINS["complex" if np.iscomplexobj(x) else "real"](rng, x.shape), dtype=x.dtype)
                       for x in xs)
    hvps = yb.hvp(loss, tuple(xs), directions)[2]
    eps = 1e-5
    gradient = yb.grad(loss, argnums=tuple(range(len(xs))))
    plus = gradient(*(x + eps * v for x, v in zip(xs, directions)))
    minus = gradient(*(x - eps * v for x, v in zip(xs, directions)))
    for k, (h, a, b) in enumerate(zip(hvps, plus, minus)):
        expected = (np.asarray(a) - np.asarray(b)) / (2 * eps)
        scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
        np.testing.assert_allclose(h, expected, rtol=1e-4, atol=1e-6 * scale, err_msg=f"hvp in argument {k}")


def _params(oracles=ORACLES):
    return [pytest.param(o, id=o.name, marks=[] if o.name in FAST else [pytest.mark.slow]) for o in oracles]


def _third_order_claims():
    """The table claims third order for real inputs; float16's rounding leaves no finite
    differences of a gradient to compare with."""
    return [o for o in ORACLES if not any(d in ("complex", "cwc") for _, d in o.configs[0]) and o.rtol < 1e-3]


@pytest.mark.parametrize("oracle", _params())
def test_second_order_column(oracle):
    e = _ENTRIES[oracle.name.split("[")[0]]
    rng, xs, loss = _loss(oracle, oracle.configs[0], 0)
    if e.second == NO:
        with pytest.raises(Exception):  # noqa: B017 - second order's own refusal, whatever it is
            _hvp_against_differences(loss, xs, rng)
        return
    _hvp_against_differences(loss, xs, rng)  # complex inputs too


def _real_config(config):
    """The configuration with NaN inputs made ordinary (third order's check adds terms in every
    input, which a NaN makes NaN)."""
    return tuple((shape, "real" if domain == "nan" else domain) for shape, domain in config)


@pytest.mark.parametrize("oracle", _params(_third_order_claims()))
def test_third_order_column(oracle):
    e = _ENTRIES[oracle.name.split("[")[0]]
    _, xs, loss = _loss(oracle, _real_config(oracle.configs[0]), 0)
    if e.third == NO:
        with pytest.raises(Exception):  # noqa: B017 - third order's own refusal, whatever it is
            check_third_order(loss, *xs)
        return
    if e.third == "partly":  # some calls refused (a refusal naming it), the others right
        try:
            check_third_order(loss, *xs, rtol=1e-4, atol=1e-5)
        except NestedDifferentiationError:
            pass
        return
    check_third_order(loss, *xs, rtol=1e-4, atol=1e-5)
