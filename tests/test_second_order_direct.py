"""The ``direct`` second-order formulas of the ``with_vjp`` class (``rules/linalg/
direct_second_order.py``): on every real float64 rule case of a function that has one, the
formula is the path taken, it gives the HVP the cotangent map's forward transform gives (that
path switched back on), and both match central differences of the gradient
(``check_second_order``). Programs calling several of them (the gp_lml benchmark, keywords,
upper factors, constant arguments) are checked in every mode."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import scipy.linalg as sla

import yuebing as yb
from yuebing.rules.second_order import _BY_FUNCTION
from yuebing.testing.second_order import check_second_order, differentiable_positions, scalar_test_function
from yuebing.testing.targets import packed

from tests.all_modes import check_all_modes
from tests.test_second_order import RULE_CASES

DIRECT = [f for f, d in _BY_FUNCTION.items() if d.kind == "vjp" and d.direct is not None]
CASES = [case for case in (c.values[0] for c in RULE_CASES) if case.f in DIRECT]


class _Switched:
    """The declarations of ``DIRECT`` with their formula wrapped (``counting``) or removed."""

    def __init__(self, remove: bool) -> None:
        self.remove, self.taken, self.saved = remove, 0, {}

    def __enter__(self) -> "_Switched":
        for f in DIRECT:
            d = self.saved[f] = _BY_FUNCTION[f]
            _BY_FUNCTION[f] = dataclasses.replace(d, direct=None if self.remove else self._counting(d.direct))
        return self

    def _counting(self, direct):
        def counted(xs, x_ds):
            made = direct(xs, x_ds)
            self.taken += made is not None
            return made
        return counted

    def __exit__(self, *exc) -> None:
        _BY_FUNCTION.update(self.saved)


def test_the_direct_class_covers_the_linear_algebra_programs_use_most():
    assert {np.linalg.cholesky, np.linalg.solve, np.linalg.inv, np.linalg.det, np.linalg.slogdet, sla.cholesky,
            sla.solve_triangular, sla.solve, sla.inv} <= set(DIRECT)
    assert all(_BY_FUNCTION[f].label == "direct" for f in DIRECT)


def _real(case) -> bool:
    return all(a.dtype == np.float64 for a in case.args if isinstance(a, np.ndarray))


#: written for stacks of matrices too (rules/linalg/eigh_second_order.py)
_STACKS_TOO = (np.linalg.eigh, np.linalg.eigvalsh, np.linalg.svd, sla.eigh)


def _direct_applies(case) -> bool:
    """The scope the formulas document: one real matrix, not singular (stacks, and det's singular
    matrices, take the general path, except for the spectral formulas of ``_STACKS_TOO``), SciPy's
    solve and inv of a general matrix, not transposed, SciPy's eigh of the standard problem's
    whole spectrum."""
    options = case.kwargs or {}
    general = options.get("assume_a") in (None, "gen", "general") and not options.get("transposed")
    if case.f is sla.eigh and (len(case.args) > 1 or {"b", "subset_by_index", "subset_by_value"} & set(options)):
        return False
    stacked_ok = case.f in _STACKS_TOO and case.args[0].ndim > 2
    return (case.args[0].ndim == 2 or stacked_ok) and bool(np.all(np.linalg.cond(case.args[0]) < 1e12)) and (
        case.f not in (sla.solve, sla.inv) or general)


@pytest.mark.parametrize("case", [c for c in CASES if _real(c)], ids=lambda c: c.f.__name__)
def test_direct_formula_is_taken_and_equals_the_transformed_cotangent_map(case):
    s = packed(scalar_test_function(case.f, case.args, case.kwargs))
    args = tuple(case.args[i] for i in differentiable_positions(case.args))
    rng = np.random.default_rng(3)
    v = tuple(rng.standard_normal(np.shape(a)) for a in args)
    with _Switched(remove=False) as switched:
        direct = yb.hvp(s, (args,), (v,))
        taken = switched.taken
        check_second_order(case.f, *case.args, kwargs=case.kwargs)
    with _Switched(remove=True):
        general = yb.hvp(s, (args,), (v,))
    assert taken == _direct_applies(case)
    for a, b in zip(direct[2][0], general[2][0]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


def _spd(n: int, seed: int) -> np.ndarray:
    b = np.random.default_rng(seed).standard_normal((n, n))
    return b @ b.T + n * np.eye(n)


def _gp(params):
    x, y, s = params[:6], params[6:12], params[12]
    k = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2) + (1.0 + s * s) * np.eye(6)
    low = np.linalg.cholesky(k)
    alpha = sla.solve_triangular(low, y, lower=True)
    return -0.5 * np.sum(alpha ** 2) - np.sum(np.log(np.diag(low))) - 3 * math.log(2 * math.pi)


def _upper_factors(a_flat):
    a = a_flat.reshape(4, 4)
    a = a @ a.T + 4 * np.eye(4)
    u = np.linalg.cholesky(a, upper=True)
    w = sla.cholesky(a, lower=False)
    t = sla.solve_triangular(w, np.arange(1.0, 5.0), trans="T", unit_diagonal=False)
    return np.sum(u * w) + np.sum(t ** 2)


def _solves(a_flat):
    a = a_flat.reshape(3, 3) + 3 * np.eye(3)
    b = np.stack([a_flat[:3], a_flat[3:6]], axis=1)
    x = np.linalg.solve(a, b)
    return np.sum(np.linalg.inv(a) ** 2) + np.sum(x * b) + np.linalg.solve(a, a_flat[6:])[1] \
        + np.sum(sla.inv(a @ a)[:, :2] * sla.solve(a.T, b, check_finite=False))


def _determinants(a_flat):
    a = a_flat.reshape(3, 3) + 2 * np.eye(3)
    sign, logdet = np.linalg.slogdet(a)
    return logdet * np.linalg.det(a @ a.T) + sign * np.linalg.det(a) ** 2


def _constant_matrix(b):
    low = np.linalg.cholesky(_spd(5, 1))
    return np.sum(sla.solve_triangular(low, b, lower=True, trans=1) ** 3)


@pytest.mark.parametrize("f, x", [
    (_gp, np.concatenate([np.linspace(0, 2, 6), np.linspace(-1, 1, 6), [0.3]])),
    (_upper_factors, np.random.default_rng(0).standard_normal(16)),
    (_solves, np.random.default_rng(1).standard_normal(9)),
    (_determinants, np.random.default_rng(3).standard_normal(9)),
    (_constant_matrix, np.random.default_rng(2).standard_normal(5)),
], ids=["gp", "upper", "solves", "determinants", "constant_matrix"])
def test_programs_of_direct_rules_in_every_mode(f, x):
    with _Switched(remove=False) as switched:
        check_all_modes(f, x)
        v = np.linspace(0.3, 1.1, x.size)
        hessian = yb.hessian(f)(x)
        np.testing.assert_allclose(hessian @ v, yb.hvp(f, (x,), (v,))[2][0], rtol=1e-9, atol=1e-9)
    assert switched.taken > 0


@pytest.mark.parametrize("n", [70, 130])
@pytest.mark.parametrize("f, kwargs", [(np.linalg.cholesky, {}), (np.linalg.cholesky, {"upper": True}),
                                       (sla.cholesky, {"lower": True}), (sla.cholesky, {})],
                         ids=["numpy", "numpy-upper", "scipy-lower", "scipy"])
def test_cholesky_second_order_by_block_recursion(n, f, kwargs):
    """Above order 64 the Cholesky factor's second order follows the factorisation's block
    recursion (``cholesky_blocks``): the HVP the cotangent map's forward transform gives,
    and central differences of the gradient (``check_second_order``)."""
    a = _spd(n, 4)
    s = packed(scalar_test_function(f, (a,), kwargs))
    v = np.random.default_rng(5).standard_normal(a.shape)
    with _Switched(remove=False) as switched:
        direct = yb.hvp(s, ((a,),), ((v,),))
        check_second_order(f, a, kwargs=kwargs)
    assert switched.taken
    with _Switched(remove=True):
        general = yb.hvp(s, ((a,),), ((v,),))
    np.testing.assert_allclose(direct[1][0][0], general[1][0][0], rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(direct[2][0][0], general[2][0][0], rtol=1e-8, atol=1e-10)


def _gp_of_order(n):
    def gp(params):
        x, y, s = params[:n], params[n:2 * n], params[2 * n]
        k = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2) + (1.0 + s * s) * np.eye(n)
        low = np.linalg.cholesky(k)
        alpha = sla.solve_triangular(low, y, lower=True)
        return -0.5 * np.sum(alpha ** 2) - np.sum(np.log(np.diag(low)))
    return gp


def test_gp_of_order_100_in_every_mode():
    """The gp_lml benchmark's program at an order where Cholesky's tangent, cotangent and second
    order all take their block recursions."""
    n = 100
    x = np.concatenate([0.2 * np.arange(n), np.sin(np.arange(n)), [0.3]])
    with _Switched(remove=False) as switched:
        check_all_modes(_gp_of_order(n), x)
    assert switched.taken > 0
