"""Rules given Python lists where NumPy takes arrays, and ints where it takes floats (issue 13).

Every rule module's ``CASES`` run again through ``yuebing.testing.array_likes``: each float array
argument as a nested list of floats (differentiated) and of ints (a constant), each float as an
int, wherever the plain function accepts it; checked by ``check_rule`` with the forward rule run
through the runtime as a traced call is. The sweep over every module is the slow step; the
default run sweeps the modules whose rules did arithmetic on raw list arguments. Then calls as
users write them, in every mode against central differences.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.linalg as sl
import scipy.signal as ss
import scipy.special as sp
import scipy.stats as st

import yuebing as yb
from tests.all_modes import check_all_modes
from yuebing.rules import rule_modules
from yuebing.rules.core import RuleArgumentError
from yuebing.testing.array_likes import array_like_variants, run_variant

MODULES = {module.__name__.removeprefix("yuebing.rules."): module for module in rule_modules()
           if getattr(module, "CASES", ())}

#: modules whose rules crashed or were refused on lists (the default run): polyfit's pullback,
#: in-place operators, np.interp, modf, the linear-algebra derivations, clip/where/nan_to_num
QUICK = ("numpy_signal", "operators.in_place", "numpy_interp", "numpy_c_cores", "linalg.determinants_norms",
         "builtins")


def _sweep(name: str) -> None:
    failures = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # RankWarning, RuntimeWarning of the cases' own points
        for case in MODULES[name].CASES:
            for variant in array_like_variants(case):
                try:
                    run_variant(variant)
                except Exception as error:  # noqa: BLE001 - every failure is reported below
                    failures.append(f"{variant.name}: {type(error).__name__}: {str(error)[:300]}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("name", [n for n in QUICK if n in MODULES])
def test_rules_take_lists_and_ints(name):
    _sweep(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(MODULES) - set(QUICK)))
def test_every_rule_module_takes_lists_and_ints(name):
    _sweep(name)


def test_variants_are_made_only_where_numpy_takes_them():
    from yuebing.rules.cases import Case

    variants = array_like_variants(Case(np.sum, np.array([0.5, 1.5])))
    assert sorted(v.kind for v in variants) == ["int list", "list"]
    # ndarray.sum on a list is refused by NumPy itself: no variant
    assert not array_like_variants(Case(np.ndarray.sum, np.array([0.5, 1.5])))


X = np.array([0.4, 1.3, -0.7])


def _list_plus_array(x):
    values = [1.0, x[0], 2.0]
    values += x  # NumPy's elementwise sum (a new array), not list.extend
    return np.sum(values * x)


def _list_times_array(x):
    values = [x[1], 2.0, x[0]]
    values *= x
    return np.sum(values ** 2)


def _int_list_op_array(x):
    """Ints on the left: no array_like conversion (an int array cannot take the float result in
    place); second order crashed on the list (TypeError: float * NoTangent)."""
    values = [1, 2, 3]
    values *= x
    other = [2, 1, 1]
    other /= x + 2
    return np.sum(values * x ** 2) + np.sum(other)


def _list_matmul_array(x):
    rows = [[1.0, x[0], 0.5], [x[1], 2.0, x[2]]]
    rows @= np.outer(x, x)
    return np.sum(rows ** 2)


def _int_lists(x):
    clipped = np.clip(x, [0, 0, 0], [1, 1, 1])
    return np.sum(clipped ** 2) + np.linalg.norm(np.outer([1, 2], x)) + np.sum(np.where(x > 0, [1, 2, 3], x) * x)


def _power_and_solve(x):
    return np.sum(pow([1.5, 2.0, 0.5], x)) + np.sum(np.linalg.solve([[2, 1, 0], [1, 3, 1], [0, 1, 4]], x) ** 2)


@pytest.mark.parametrize("f", [_list_plus_array, _list_times_array, _int_list_op_array, _list_matmul_array, _int_lists, _power_and_solve],
                         ids=lambda f: f.__name__)
def test_lists_in_every_mode(f):
    check_all_modes(f, X.copy())


def test_list_plus_array_leaves_the_list():
    """``l += x`` with an array makes a new array (the list is unchanged): the gradient was wrong
    (list-extend semantics: [2.5, 0.5] where differences give [3.5, 3.5])."""
    def f(x):
        values = [1.0, x[0]]
        kept = values
        values += x
        return np.sum(values * x) + kept[1] * len(kept)

    check_all_modes(f, np.array([0.5, 1.5]))


def test_split_of_a_list_along_another_axis_is_refused():
    """NumPy splits a list by its length, whatever the axis: the pieces differ from the array's."""
    def f(x):
        rows = [[x[0], 1.0, 2.0], [3.0, x[1], 4.0]]
        return np.sum(np.split(rows, [1], axis=1)[-1])

    with pytest.raises(RuleArgumentError, match="splits it by the list's length"):
        yb.grad(f)(np.array([0.5, 1.5]))


#: everyday calls with lists where NumPy/SciPy take arrays (the issue's probe; all pass)
EVERYDAY = {
    "interp_int_knots": lambda x: np.sum(np.interp(x, [0, 1, 3], [1, 3, 2])),
    "interp_list_fp": lambda x: np.sum(np.interp([0.5, 1.5], [0.0, 1.0, 2.0], [x[0], x[1], x[2]])),
    "dot_int_list": lambda x: np.dot([1, 2, 3], x) ** 2,
    "solve_int_matrix": lambda x: np.sum(np.linalg.solve([[3, 1, 0], [1, 4, 1], [0, 1, 5]], x) ** 2),
    "solve_differentiated_lists": lambda x: np.sum(np.linalg.solve([[x[0] + 3, 1], [1, x[1] + 4]], [1.0, x[2]])),
    "det_nested": lambda x: np.linalg.det([[x[0] + 3, 1], [x[1], 4]]),
    "norm_logpdf_lists": lambda x: np.sum(st.norm.logpdf([0, 1, 2], loc=x)) + np.sum(st.norm.logpdf([x[0], 1.0], 0.5, 2)),
    "concatenate_int_list": lambda x: np.sum(np.concatenate([[1, 2], x]) * np.arange(5)),
    "polyval_int_coefficients": lambda x: np.sum(np.polyval([1, 2, 3], x)) + np.polyval([x[0], 2, x[1]], 1.5),
    "convolve_int_kernel": lambda x: np.sum(np.convolve(x, [1, 2, 1]) ** 2),
    "einsum_int_list": lambda x: np.einsum("i,i->", [1, 2, 3], x ** 2),
    "average_int_weights": lambda x: np.average(x, weights=[1, 2, 3]),
    "trapezoid_int_points": lambda x: np.trapezoid(x ** 2, [0, 1, 3]) + np.sum(np.gradient(x ** 2, [0, 1, 3])),
    "logsumexp_int_b": lambda x: sp.logsumexp(x, b=[1, 2, 3]) + np.sum(sp.xlogy([1, 2, 3], x ** 2 + 1)),
    "scipy_solve_int_matrix": lambda x: np.sum(sl.solve([[4, 1, 0], [1, 3, 0], [0, 0, 2]], x, assume_a="pos")),
    "lfilter_lists": lambda x: np.sum(ss.lfilter([1, 0.5], [1, -0.2], x) ** 2),
    "cov_with_int_row": lambda x: np.sum(np.cov([x, [1, 2, 4]])) + np.corrcoef(x, [1, 2, 4])[0, 1],
    "multivariate_int_mean_cov": lambda x: st.multivariate_normal.logpdf(x, [0, 1, 0], [[2, 0, 0], [0, 1, 0], [0, 0, 3]]),
    "lstsq_int_matrix": lambda x: np.sum(np.linalg.lstsq([[1, 0], [1, 1], [1, 2]], x, rcond=None)[0] ** 2),
    "insert_and_pad": lambda x: np.sum(np.insert(x, [1, 2], [5, 6]) ** 2) + np.sum(np.pad(x, [1, 2], constant_values=[1.0, 2.0]) ** 2),
    "int_scalars": lambda x: sp.gamma(3) * x[0] + sp.gamma(x[1] + 2) + np.sum(np.power(2, x)) + np.sum(np.hypot([3, 4], x[:2])),
    "ndarray_methods_with_lists": lambda x: np.sum(x.clip([0, 0, 0], [1, 1, 1])) + x.dot([1, 2, 3]) ** 2,
    "operators_with_lists": lambda x: np.sum([1, 2, 3] * x + [0.5, 1.0, 2.0] / (x + 1)) + x @ [1, 2, 3],
}


@pytest.mark.parametrize("name", sorted(EVERYDAY))
def test_everyday_calls_with_lists(name):
    check_all_modes(EVERYDAY[name], np.array([0.3, 1.2, 0.7]))
