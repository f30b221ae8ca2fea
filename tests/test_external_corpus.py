"""The external corpus (issue 12, "the guard"): functions written by others, from packages on PyPI
installed by the ``test`` extra (opfunu, benchmark-functions, pymoo, filterpy, cma, scikit-learn, lmfit,
properscoring, pykalman, astropy, sympy's lambdify, statsmodels, numpy-ml; pymoo's problems a second time with their ``anp`` backend bound to NumPy instead
of the lazy backend object they ship with), differentiated by yuebing and checked against central differences and, where
their code also runs under ``jax.numpy``, against ``jax.grad``/``jax.hessian`` (``tests/external/``).

Every function ends right, refused (a yuebing error class, listed in ``docs/external-corpus.md``)
or wrong. Nothing may be wrong except the entries of ``KNOWN_WRONG``, each with the minimal
reproduction of its mechanism; an entry that is no longer wrong fails the test, so the list only
shrinks. The default run checks a fixed, evenly spaced sample of each package; the whole corpus
runs under ``-m slow`` (scikit-learn's default sample is picked by hand, ``SKLEARN_DEFAULT``).
pycma's hand-written gradients, scikit-learn's kernels' and likelihood's and properscoring's
``crps_gaussian(grad=True)`` own gradients, astropy's ``fit_deriv``, sympy's symbolic derivatives and
statsmodels' ``score`` and ``hessian`` are a third oracle for the functions they belong to (numpy-ml's
activations', losses' and layers' own derivatives: tests/test_external_numpy_ml.py).
"""
from __future__ import annotations

import collections
import random
import zlib

import numpy as np
import pytest

import yuebing as yb
from tests.external import oracle
from tests.external.cases import PYMOO_NUMPY, CaseSpec, Problem, all_cases, installed, interior_point
from tests.external.cases_cma import BOX, DIMENSION, GRADIENT_TWINS
from tests.external.classify import Outcome, run_case, usable_problem
from tests.external.repros import FIXED, MECHANISMS, Mechanism
from tests.modes import central, check_every_mode
from tests.external.report import summary_text

# case id -> the mechanism that makes it wrong; its minimal reproduction, in plain NumPy, is the
# named function of tests/external/repros.py (checked below to be still wrong).
KNOWN_WRONG: dict[str, str] = {
    "astropy:Voigt1D": "result_cached_on_an_object",
    "astropy:Voigt1D_in_inputs": "result_cached_on_an_object",
    "numpy_ml:rbf_kernel_in_sigma": "zero_partial_meets_infinite_cotangent",
    "numpy_ml:gp_regression_in_inputs": "zero_partial_meets_infinite_cotangent",
}

# The default run takes this many functions of each package, evenly spaced in name order (< 60 s).
DEFAULT_SAMPLE = {"opfunu": 12, "benchmark_functions": 4, "pymoo": 6, PYMOO_NUMPY: 4, "filterpy": 6,
                  "cma": 6, "lmfit": 8,
                  "properscoring": 3, "pykalman": 2, "astropy": 8, "sympy": 6,
                  "statsmodels": 4, "numpy_ml": 14}
MINIMUM_CORPUS = 300


def hessian_wanted(spec: CaseSpec, full: bool = False) -> bool:
    """Hessians in the full run; in the default run for half the sample (a fixed hash)."""
    return full or zlib.crc32(spec.case_id.encode()) % 2 == 0


# scikit-learn's default sample is chosen by hand: two cases that skip its input validation (an
# in-place activation, a loss). A case through check_array takes 30-150 s checked in every mode on
# a loaded 2-core machine (compiling its validation code dominates; narwhals' cached plugin
# discovery is answered by its cache since rules/cached_calls.py), so the metrics, kernels and fits
# run in the slow step only; the kernels' own gradients below are the default run's other sklearn check.
SKLEARN_DEFAULT = ("sklearn:activation_softmax", "sklearn:nn_loss_log_loss_2_columns")


def default_sample(specs: list[CaseSpec]) -> list[CaseSpec]:
    chosen = []
    for package, count in DEFAULT_SAMPLE.items():
        members = [spec for spec in specs if spec.package == package]
        stride = max(1, len(members) // count)
        chosen.extend(members[stride // 2::stride][:count])
    return chosen + [spec for spec in specs if spec.case_id in SKLEARN_DEFAULT]


# The slow step takes this scikit-learn sample, one or two of each kind; every case (136) checked
# in every mode takes about an hour on 2 cores (check_array's narwhals plugin discovery runs at each
# call), so the whole package runs by `python -m tests.external.report --package sklearn`.
SKLEARN_SLOW = ("sklearn:mean_squared_error", "sklearn:r2_score", "sklearn:brier_score_loss",
                "sklearn:rbf_kernel_gamma", "sklearn:kernel_Matern_1_5_on_X", "sklearn:activation_tanh",
                "sklearn:nn_loss_binary_log_loss_2_columns", "sklearn:row_norms", "sklearn:ridge_regression_cholesky",
                "sklearn:gaussian_mixture_log_prob")


def slow_step_cases(specs: list[CaseSpec]) -> list[CaseSpec]:
    return [spec for spec in specs if spec.package != "sklearn" or spec.case_id in SKLEARN_SLOW + SKLEARN_DEFAULT]


ALL_CASES = all_cases()
DEFAULT_CASES = default_sample(ALL_CASES)


def assert_expected(outcome: Outcome) -> None:
    """0 wrong outside KNOWN_WRONG; every KNOWN_WRONG entry still wrong."""
    if outcome.case_id in KNOWN_WRONG:
        assert outcome.status == "wrong", (
            f"{outcome.case_id} is now {outcome.status}: remove it from KNOWN_WRONG "
            f"({KNOWN_WRONG[outcome.case_id]})")
    else:
        assert outcome.status != "wrong", f"{outcome.case_id}: {outcome.stage}: {outcome.detail}"


@pytest.mark.skipif(not ALL_CASES, reason="the external packages (the test extra) are not installed")
@pytest.mark.parametrize("spec", DEFAULT_CASES, ids=[spec.case_id for spec in DEFAULT_CASES])
def test_external_function(spec: CaseSpec) -> None:
    outcome = run_case(spec, hessian_wanted(spec))
    print(f"{outcome.case_id}: {outcome.status} {outcome.stage} {outcome.detail}")
    assert_expected(outcome)


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=[m.name for m in MECHANISMS])
def test_mechanism_reproduction_is_still_wrong(mechanism: Mechanism) -> None:
    """Each failure mechanism the corpus found, reduced to a few lines: once fixed, remove it
    from tests/external/repros.py (and its KNOWN_WRONG entries) and keep a regression test."""
    assert mechanism.still_wrong(), (
        f"'{mechanism.name}' is fixed: remove it from tests/external/repros.py and the KNOWN_WRONG "
        f"entries it explains ({mechanism.seen_in})")


@pytest.mark.parametrize("mechanism", FIXED, ids=[m.name for m in FIXED])
def test_fixed_mechanism_in_every_mode(mechanism: Mechanism) -> None:
    """The mechanisms the corpus found, fixed: grad, jvp, jacobian, hvp and hessian against
    central differences (array blocks writing back loop-carried floats, float loops over constant
    arrays and with no residuals, functools.wraps wrappers, reshapes of int arrays)."""
    assert not mechanism.still_wrong()
    check_every_mode(mechanism.function, mechanism.argument)


def test_known_wrong_entries_name_real_cases() -> None:
    """A stale KNOWN_WRONG id (renamed upstream) must not silently stop being checked, nor a
    stale name in scikit-learn's hand-picked default sample."""
    if ALL_CASES:
        ids = {spec.case_id for spec in ALL_CASES}
        assert not {case_id for case_id in KNOWN_WRONG if installed(case_id.split(":")[0])} - ids
        if installed("sklearn"):
            assert not set(SKLEARN_DEFAULT + SKLEARN_SLOW) - ids


@pytest.mark.slow
@pytest.mark.skipif(not ALL_CASES, reason="the external packages (the test extra) are not installed")
def test_whole_external_corpus() -> None:
    outcomes = [run_case(spec, hessian_wanted(spec, full=True)) for spec in slow_step_cases(ALL_CASES)]
    print(summary_text(outcomes))
    distinct = {spec.case_id for spec in ALL_CASES if spec.variant_of is None}
    assert sum(1 for o in outcomes if o.status != "unusable" and o.case_id in distinct) >= MINIMUM_CORPUS
    problems = []
    for outcome in outcomes:
        try:
            assert_expected(outcome)
        except AssertionError as error:
            problems.append(str(error))
    assert not problems, "\n".join(problems)


def _smooth(x):
    return np.sum(np.sin(3.0 * x) * x ** 2) + 1e3 * np.exp(0.01 * np.sum(x))


def _smooth_gradient(x):
    return 3.0 * np.cos(3.0 * x) * x ** 2 + 2.0 * x * np.sin(3.0 * x) + 10.0 * np.exp(0.01 * np.sum(x))


@pytest.mark.parametrize("scale", [1e-2, 1.0, 100.0])
def test_differences_convict_a_slightly_wrong_gradient(scale: float) -> None:
    """The oracle itself: an exact gradient passes; one component off by 1e-4 of the gradient's
    size is convicted (stable differences that disagree), not excused as unresolved."""
    x = scale * np.random.default_rng(3).uniform(-1.0, 1.0, size=5)
    exact = _smooth_gradient(x)
    assert oracle.gradient_against_differences(_smooth, x, exact).agrees
    wrong = exact.copy()
    wrong[2] += 1e-4 * np.max(np.abs(exact))
    check = oracle.gradient_against_differences(_smooth, x, wrong)
    assert not check.agrees and check.stable


def _random_pair_sum(x):
    return float(np.sum(x[np.random.permutation(x.size)[:2]] ** 2))


def _python_random_pair_sum(x):
    return float(np.sum(x[random.sample(range(x.size), 2)] ** 2))


@pytest.mark.parametrize("function", [_random_pair_sum, _python_random_pair_sum])
def test_a_function_drawing_random_numbers_is_reseeded_whatever_it_returns(function) -> None:
    """The harness reseeds a function that draws from NumPy's global generator or Python's
    ``random`` even when two plain calls happen to agree (here the same 2 of 5 coordinates,
    about one time in ten, as cma's subspace_sphere after partsphere): otherwise the gradient
    call draws again and its value is compared with a value it need not repeat."""
    x = np.linspace(-1.0, 1.0, 5)
    problem = Problem(function, x)
    spec = CaseSpec("harness", function.__name__, lambda attempt: problem)
    for global_seed in range(30):   # NumPy: 0, 10, 15 and 22 draw the same pair twice; random: 5, 9, ...
        problem.random_seed = None
        np.random.seed(global_seed)
        random.seed(global_seed)
        assert usable_problem(spec)[0].random_seed is not None, global_seed
    assert run_case(spec).status == "right"


@pytest.mark.skipif(not installed("cma"), reason="cma (the test extra) is not installed")
@pytest.mark.parametrize("name", GRADIENT_TWINS)
def test_against_pycmas_own_gradients(name: str) -> None:
    """pycma's hand-written gradients (cma.ff.grad_rosen, ...) as an oracle: yb.grad and yb.jvp
    against them, yb.hessian and yb.hvp against their central differences."""
    import cma
    function, gradient = getattr(cma.ff, name), getattr(cma.ff, "grad_" + name)
    for seed in range(3):
        x = interior_point([BOX[0]] * DIMENSION, [BOX[1]] * DIMENSION, seed)
        direction = np.random.default_rng(seed).standard_normal(DIMENSION)
        expected = gradient(x.copy())
        scale = np.max(np.abs(expected))
        np.testing.assert_allclose(yb.grad(function)(x.copy()), expected, rtol=1e-12, atol=1e-12 * scale)
        _, slope = yb.jvp(function, (x.copy(),), (direction,))
        np.testing.assert_allclose(slope, expected @ direction, rtol=1e-12, atol=1e-12 * scale)
        hessian = central(lambda y: gradient(y.copy()), x, 1e-6)
        atol = 1e-7 * np.max(np.abs(hessian))
        np.testing.assert_allclose(yb.hessian(function)(x.copy()), hessian, rtol=1e-7, atol=atol)
        _, (gradient_again,), (product,) = yb.hvp(function, (x.copy(),), (direction,))
        np.testing.assert_allclose(gradient_again, expected, rtol=1e-12, atol=1e-12 * scale)
        np.testing.assert_allclose(product, hessian @ direction, rtol=1e-7, atol=atol)


@pytest.mark.skipif(not installed("properscoring"), reason="properscoring (the test extra) is not installed")
def test_against_properscorings_own_gradient() -> None:
    """``crps_gaussian(x, mu, sig, grad=True)`` returns its own derivative in ``mu`` and ``sig``:
    yb.grad and yb.jvp against it, yb.hessian and yb.hvp against its central differences."""
    from properscoring import crps_gaussian
    observed, weights = np.array([0.3, -1.1, 0.8]), np.array([1.0, 1.5, 2.0])

    def score(p):
        return np.sum(weights * crps_gaussian(observed, p[:3], p[3:]))

    def own_gradient(p):
        return (weights * crps_gaussian(observed, p[:3], p[3:], grad=True)[1]).ravel()

    for seed in range(3):
        rng = np.random.default_rng(seed)
        p = np.concatenate([rng.uniform(-1.0, 1.0, 3), rng.uniform(0.5, 2.0, 3)])
        direction = np.linspace(-1.0, 1.0, 6)
        np.testing.assert_allclose(yb.grad(score)(p.copy()), own_gradient(p), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(yb.jvp(score, (p.copy(),), (direction,))[1], own_gradient(p) @ direction,
                                   rtol=1e-12, atol=1e-14)
        hessian = central(own_gradient, p, 1e-6)
        np.testing.assert_allclose(yb.hessian(score)(p.copy()), hessian, rtol=1e-7, atol=1e-8)
        _, _, (product,) = yb.hvp(score, (p.copy(),), (direction,))
        np.testing.assert_allclose(product, hessian @ direction, rtol=1e-7, atol=1e-8)


def _kernel_from_log_hyperparameters(name: str, log_theta):
    """The kernel made directly from ``exp(theta)`` (in scikit-learn's order of ``theta``):
    ``clone_with_theta`` itself builds ``Hyperparameter`` named tuples, whose own ``__new__``
    yuebing refuses (``test_namedtuple_with_its_own_new_is_refused_in_every_mode``)."""
    from sklearn.gaussian_process import kernels as k
    p = np.exp(log_theta)
    return {"RBF": lambda: k.RBF(length_scale=p[:2]),
            "Matern_2_5": lambda: k.Matern(length_scale=p[0], nu=2.5),
            "RationalQuadratic": lambda: k.RationalQuadratic(alpha=p[0], length_scale=p[1]),
            "ExpSineSquared": lambda: k.ExpSineSquared(length_scale=p[0], periodicity=p[1]),
            "ConstantKernel_times_RBF": lambda: k.ConstantKernel(p[0]) * k.RBF(p[1]),
            "RBF_plus_WhiteKernel": lambda: k.RBF(p[0]) + k.WhiteKernel(p[1])}[name]()


@pytest.mark.skipif(not installed("sklearn"), reason="scikit-learn (the test extra) is not installed")
@pytest.mark.parametrize("name", [pytest.param("RBF", marks=pytest.mark.slow),
                                  pytest.param("Matern_2_5", marks=pytest.mark.slow),
                                  "RationalQuadratic", "ExpSineSquared",  # (batched forward through pdist)
                                  "ConstantKernel_times_RBF", "RBF_plus_WhiteKernel"])
def test_against_sklearns_own_kernel_gradients(name: str) -> None:
    """scikit-learn's Gaussian-process kernels compute their own derivative in the
    log-hyperparameters (``kernel(X, eval_gradient=True)``): yb.jacobian in both modes against it,
    and the second derivative of one entry (yb.hessian, yb.hvp) against its differences."""
    from tests.external.cases_sklearn import X_FIXED, _kernels
    theta = _kernels()[name].theta + 0.1

    def matrix(log_theta):
        return _kernel_from_log_hyperparameters(name, log_theta)(X_FIXED)

    def own_gradient(log_theta):
        return _kernel_from_log_hyperparameters(name, log_theta)(X_FIXED, eval_gradient=True)[1]

    expected = own_gradient(theta)
    for mode in ("rev", "fwd"):
        np.testing.assert_allclose(yb.jacobian(matrix, mode=mode)(theta.copy()), expected, rtol=1e-10, atol=1e-12)
    entry = lambda log_theta: matrix(log_theta)[1, 3]  # noqa: E731
    hessian = central(lambda log_theta: own_gradient(log_theta)[1, 3], theta, 1e-6)
    np.testing.assert_allclose(yb.hessian(entry)(theta.copy()), hessian, rtol=1e-6, atol=1e-8)
    direction = np.linspace(0.5, 1.0, theta.size)
    _, _, (product,) = yb.hvp(entry, (theta.copy(),), (direction,))
    np.testing.assert_allclose(product, hessian @ direction, rtol=1e-6, atol=1e-8)


class _Doubled(collections.namedtuple("_Doubled", "a b")):
    """A named tuple with a ``__new__`` of its own (as scikit-learn's ``Hyperparameter``)."""
    __slots__ = ()

    def __new__(cls, a, b=3.0):
        return super().__new__(cls, 2.0 * a, b)


def _product_of_doubled(x):
    pair = _Doubled(x[0], x[1])
    return pair.a * pair.b


def test_namedtuple_with_its_own_new_in_every_mode() -> None:
    """Its construction once bound the fields directly, skipping its ``__new__``: the value was
    right (the plain call made it) but the gradient missed the factor 2 ([2, 3] for [4, 3]); it
    was then refused by name, and since classes whose ``__new__`` is Python code are built as
    ``type.__call__`` builds them (58c300d) it is right in every mode."""
    check_every_mode(_product_of_doubled, np.array([1.5, 2.0]))


# ------------------------------------------------------------------------ astropy and sympy's own derivatives

def _fit_deriv_classes() -> list[str]:
    if not installed("astropy"):
        return []
    from tests.external.cases_astropy import _model_classes
    return [cls.__name__ for cls in _model_classes() if cls.fit_deriv is not None]


# Voigt1D.fit_deriv and evaluate share _wrap_wofz's kept result (repros.result_cached_on_an_object)
_CACHED_WOFZ = pytest.mark.xfail(raises=AssertionError, strict=True,
                                 reason="Voigt1D._wrap_wofz returns the wofz(z) it kept, without its derivative")


@pytest.mark.parametrize("name", [pytest.param(name, marks=_CACHED_WOFZ) if name == "Voigt1D" else name
                                  for name in _fit_deriv_classes()])
def test_against_astropys_fit_deriv(name: str) -> None:
    """astropy's models with a ``fit_deriv`` (their own derivative in the parameters): yb.jacobian
    in both modes against it, and the Hessian of the weighted sum (yb.hessian, yb.hvp) against
    central differences of ``fit_deriv``."""
    from astropy.modeling import functional_models, powerlaws
    from tests.external.cases_astropy import inputs_of, parameters_near_defaults
    cls = getattr(functional_models, name, None) or getattr(powerlaws, name)
    model, inputs = cls(), inputs_of(cls)
    parameters = parameters_near_defaults(cls, zlib.crc32(name.encode()))
    shape = np.broadcast(*inputs).shape
    weights = np.linspace(1.0, 2.0, int(np.prod(shape))).reshape(shape)

    def values(p):
        return model.evaluate(*inputs, *p) + 0.0 * weights

    def own_jacobian(p):
        return np.stack([np.broadcast_to(d, shape) for d in model.fit_deriv(*inputs, *p)], axis=-1)

    expected = own_jacobian(parameters.copy())
    for mode in ("rev", "fwd"):
        np.testing.assert_allclose(yb.jacobian(values, mode=mode)(parameters.copy()), expected,
                                   rtol=1e-9, atol=1e-12 * np.max(np.abs(expected)))
    hessian = central(lambda p: np.tensordot(weights, own_jacobian(p), axes=weights.ndim), parameters, 1e-6)
    weighted = lambda p: np.sum(weights * model.evaluate(*inputs, *p))  # noqa: E731
    atol = 1e-7 * max(np.max(np.abs(hessian)), 1.0)
    np.testing.assert_allclose(yb.hessian(weighted)(parameters.copy()), hessian, rtol=1e-6, atol=atol)
    direction = np.linspace(0.5, 1.0, parameters.size)
    _, _, (product,) = yb.hvp(weighted, (parameters.copy(),), (direction,))
    np.testing.assert_allclose(product, hessian @ direction, rtol=1e-6, atol=atol)


def _formula_names() -> list[str]:
    if not installed("sympy"):
        return []
    from tests.external.cases_sympy import formulas
    # sympy leaves d|x|, d max(x, y), d re(z) and a Matrix norm's derivative unevaluated (its symbols
    # are not declared real), and its printer cannot print them
    unprintable = {"max_min_abs", "complex_intermediate", "rotated_norm"}
    return [formula.name for formula in formulas() if "numpy" in formula.modules and formula.name not in unprintable]


@pytest.mark.parametrize("name", _formula_names())
def test_against_sympys_symbolic_derivatives(name: str) -> None:
    """The lambdified formula's gradient and Hessian, lambdified from ``sympy.diff`` of the same
    expression: yb.grad and yb.jvp against the symbolic gradient, yb.hessian and yb.hvp against the
    symbolic Hessian, to rounding."""
    import sympy
    from tests.external.cases_sympy import _point, _symbols, formulas, lambdified
    formula = next(formula for formula in formulas() if formula.name == name)
    symbols = _symbols(formula)
    expression = formula.expression(*symbols).doit()
    gradient = sympy.lambdify([list(symbols)], [sympy.diff(expression, s) for s in symbols], modules="numpy")
    hessian = sympy.lambdify([list(symbols)], sympy.hessian(expression, symbols), modules="numpy")
    function = lambdified(formula, "numpy")
    for seed in range(2):
        x = _point(formula, "numpy", seed)
        direction = np.linspace(-1.0, 1.0, x.size) + 0.3
        expected, matrix = np.asarray(gradient(x), float), np.asarray(hessian(x), float)
        scale, matrix_scale = np.max(np.abs(expected)), np.max(np.abs(matrix))
        np.testing.assert_allclose(yb.grad(function)(x.copy()), expected, rtol=1e-10, atol=1e-12 * scale)
        np.testing.assert_allclose(yb.jvp(function, (x.copy(),), (direction,))[1], expected @ direction,
                                   rtol=1e-10, atol=1e-12 * scale * x.size)
        np.testing.assert_allclose(yb.hessian(function)(x.copy()), matrix, rtol=1e-9, atol=1e-11 * matrix_scale)
        _, _, (product,) = yb.hvp(function, (x.copy(),), (direction,))
        np.testing.assert_allclose(product, matrix @ direction, rtol=1e-9, atol=1e-11 * matrix_scale * x.size)


# ------------------------------------------------------------------------ what the new corpora needed

def _median_allowed_to_overwrite(x):
    deviations = np.abs(x - np.median(x))
    return np.median(deviations, overwrite_input=True) * np.sum(x ** 2)


def test_median_allowed_to_overwrite_its_input_in_every_mode() -> None:
    """``np.median(..., overwrite_input=True)`` (astropy's biweight estimators and ``mad_std``, on a
    temporary) was refused; it is a permission NumPy may use, and the rules compute on the input
    without touching it (as np.quantile's)."""
    check_every_mode(_median_allowed_to_overwrite, np.array([1.21, 0.35, 2.07, -0.48, 0.93, 1.64, 0.12]))


def _entries_from_keys(x):
    shared = dict.fromkeys(("a", "b", "c"), x * x)
    empty = dict.fromkeys(range(2))
    for key in empty:
        empty[key] = np.sin(x[key])
    return shared["a"][0] + 2.0 * shared["b"][1] + np.sum(shared["c"]) * empty[1] + empty[0]


def test_dict_fromkeys_in_every_mode() -> None:
    """``dict.fromkeys(keys, value)`` had no rule (astropy's ``Model.__init__`` builds its input
    units with it): each entry is the one value, its derivative carried to every key."""
    check_every_mode(_entries_from_keys, np.array([0.3, -0.8, 1.2]))


def _own_derivative_models() -> list[str]:
    if not installed("statsmodels"):
        return []
    from tests.external.cases_statsmodels import OWN_DERIVATIVES
    return list(OWN_DERIVATIVES)


@pytest.mark.parametrize("name", _own_derivative_models())
def test_against_statsmodels_own_score(name: str) -> None:
    """The discrete models' ``score`` and ``hessian`` (statsmodels' own derivatives of
    ``loglike``): yb.grad and yb.jvp against the score, yb.hessian and yb.hvp against the Hessian."""
    from tests.external.cases_statsmodels import model_and_point
    model, params = model_and_point(name, zlib.crc32(name.encode()))
    direction = np.linspace(-1.0, 1.0, params.size) + 0.2
    score, hessian = model.score(params.copy()), model.hessian(params.copy())
    atol, hessian_atol = 1e-10 * np.max(np.abs(score)), 1e-9 * np.max(np.abs(hessian))
    np.testing.assert_allclose(yb.grad(model.loglike)(params.copy()), score, rtol=1e-9, atol=atol)
    np.testing.assert_allclose(yb.jvp(model.loglike, (params.copy(),), (direction,))[1], score @ direction,
                               rtol=1e-9, atol=atol * params.size)
    np.testing.assert_allclose(yb.hessian(model.loglike)(params.copy()), hessian, rtol=1e-8, atol=hessian_atol)
    _, _, (product,) = yb.hvp(model.loglike, (params.copy(),), (direction,))
    np.testing.assert_allclose(product, hessian @ direction, rtol=1e-8, atol=hessian_atol * params.size)


def _ordered_probit_step(x):
    import scipy.stats
    from scipy.special import erf, erfc, ndtr
    z = np.array([-np.inf, 0.3, np.inf]) - x[0]
    cells = scipy.stats.norm.cdf(z[1:]) - scipy.stats.norm.cdf(z[:-1])
    densities = scipy.stats.norm.pdf(z) + scipy.stats.t.pdf(z, 4.0) + scipy.stats.expon.pdf(z, scale=x[1])
    return np.sum(np.log(cells)) + np.sum(ndtr(z) * x[1]) + np.sum(erf(z) + erfc(z)) * x[1] ** 2 + np.sum(densities)


def test_gaussian_partials_at_infinite_arguments_in_every_mode() -> None:
    """ndtr, erf and erfc at -inf and inf (an ordered probit's outer thresholds, statsmodels'
    OrderedModel): their partials exp(-x^2) are 0 there, and so are the partials' derivatives,
    where second order computed exp(-x^2) * -2x = 0 * inf = NaN; so are scipy.stats densities
    where the log-density is -inf (at inf, outside expon's support), which were exp(logpdf) *
    dlogpdf = 0 * inf = NaN in forward mode and second order."""
    check_every_mode(_ordered_probit_step, np.array([0.2, 0.7]))
