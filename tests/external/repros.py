"""Minimal reproductions of the failure mechanisms the external corpus found, in plain NumPy.

Each ``Mechanism`` holds a function, its argument and ``still_wrong()``: whether yuebing still
gets it wrong (a value or gradient different from the plain function and central differences, or
an exception that is not one of yuebing's refusals). ``tests/test_external_corpus.py`` asserts
each one is still wrong, so a fix makes the test fail and the entry is removed (the fixer adds a
regression test next to the fix). They live in a file, as yuebing needs source to differentiate.
"""
from __future__ import annotations

import contextlib
import functools
import importlib
import random
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

import yuebing as yb

from .classify import is_clean_refusal
from .oracle import agrees, central_gradient


# 1. An array block drops the write-back of a float carried around a loop: `weight` keeps 1.0.
def loop_carried_float_next_to_array(x):
    result = 0.0
    weight = 1.0
    for _ in range(2):
        result = result + weight * np.sum(x)
        weight = weight + 1.0
    return result


# 2. A loop reading floats from a module-level (constant) array crashes in the pullback.
CONSTANT_SAMPLES = np.array([0.3, 0.9])


def loop_over_constant_array(t):
    s = t[0]
    for z in CONSTANT_SAMPLES:
        s = s + z * s
    return s


# 3. A functools.wraps decorator: wrapper(*args, **kwargs) is bound by the wrapped signature.
def _passthrough(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return f(*args, **kwargs)
    return wrapper


@_passthrough
def _scaled(a, k=2.0):
    return a * k


def call_through_wraps_decorator(x):
    return np.sum(_scaled(x))


# 4. A loop whose body only updates a float, then an array statement: the reverse code generated
#    does not compile ("for  in reversed(_res3):").
def float_only_loop_then_array(x):
    w = 1.0
    for _ in range(2):
        w = w + 1.0
    return w * np.sum(x)


# 5. The pullback of .reshape on an integer array built from a list of ints: the cotangent
#    reaching it has one element ("cannot reshape array of size 1 into shape (4,)").
def reshape_of_integer_array(x):
    c = np.array([1, 2, 3, 4]).reshape((2, 2))
    return np.sum(c[0] * x)


# 6. A lazy module stand-in (pymoo's ``anp``, a LazyBackend): its __getattr__, differentiated as
#    user code, imports the module it forwards to; yuebing followed importlib.import_module into
#    frozen importlib and refused ("cannot find the source of _sanity_check").
class _LazyNumpy:
    def __getattr__(self, name):
        return getattr(importlib.import_module("numpy"), name)


_LAZY_NUMPY = _LazyNumpy()


def lazy_backend_importing_its_module(x):
    return _LAZY_NUMPY.sum(_LAZY_NUMPY.sin(x) * x)


# 7. Python's random.sample and randrange: Random._randbelow calls int.bit_length, which had no
#    rule (MissingRuleError naming int.bit_length).
def python_random_picks(x):
    random.seed(3)
    picks = random.sample(range(x.size), 3)
    return np.sum(x[picks] ** 3) + random.randrange(7) * x[0]


# 8. super().__init__() in a class whose next base is object (pymoo's Normalization): the call
#    reaches object.__init__, bound to the instance, which had no rule (MissingRuleError).
class _Normalization:
    def __init__(self):
        super().__init__()


class _Scaling(_Normalization):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale


def super_init_reaching_object(x):
    return np.sum(_Scaling(x[0]).scale * np.sin(x))


# 9. cls.__new__(cls) of a class without a __new__ of its own (scikit-learn's
#    CallbackContext._from_estimator, behind every fit): object.__new__ had no rule (MissingRuleError,
#    naming it type.__new__); the empty instance's attributes are written afterwards.
class _Context:
    @classmethod
    def made_empty(cls, scale):
        context = cls.__new__(cls)
        context.scale = scale
        return context


def new_instance_by_object_new(x):
    context = _Context.made_empty(x[0] * x[1])
    return np.sum(context.scale * np.sin(x))


# 10. uuid.uuid4() and datetime.now() in differentiated code (scikit-learn names and dates each
#     fit's callback context): os.urandom, int.from_bytes and datetime.now had no rules.
def named_and_dated(x):
    import datetime
    import uuid
    stamp = (uuid.uuid4(), datetime.datetime.now(datetime.timezone.utc))
    return np.sum(np.sin(x) * x) + 0.0 * len(str(stamp))


# 11. A with statement's manager (run without derivatives) deletes an attribute that the block
#     set (scikit-learn's callback_management_context deletes estimator._skl_callbacks_to_teardown):
#     the pullback's undo of the setattr failed (AttributeError, an internal error).
@contextlib.contextmanager
def _tidied(holder):
    try:
        yield
    finally:
        del holder.scratch


class _Holder:
    pass


def attribute_deleted_by_with_manager(x):
    holder = _Holder()
    with _tidied(holder):
        holder.scratch = []
        y = np.sum(x ** 2)
    return y


# 12. scipy.linalg.pinvh of a matrix with a repeated eigenvalue (scikit-learn's covariance
#     estimators compute the precision in fit, used or not; OAS at shrinkage 1 gives c * I): eigh's
#     map, which pinvh's source reached, divides by eigenvalue gaps, so even an unused pinvh turned
#     the gradient into NaN.
def pinvh_at_repeated_eigenvalues(x):
    import scipy.linalg
    covariance = np.sum(x ** 2) * np.eye(2)
    scipy.linalg.pinvh(covariance)
    return np.trace(covariance)


# 13. scipy.special.digamma at a complex argument: its derivative, polygamma(1, z), is SciPy's
#     polygamma, which takes real arguments only (TypeError from zeta). lmfit's pearson4 takes
#     real(loggamma(expon + 0.5j * skew)): its gradient is digamma's, its Hessian digamma's derivative.
#     (Before the fix: a TypeError in every mode of this function.)
def digamma_at_complex(x):
    import scipy.special
    return np.real(scipy.special.digamma(x[0] + 0.5j * x[1]))


# 14. np.vectorize with an argument NumPy hands whole to every call (a frozen distribution: a 0-d
#     object array there): yuebing broadcast it with the arrays and refused the object array
#     (StructureError). properscoring's crps_quadrature vectorizes over (x, cdf_or_dist, ...).
def vectorize_handing_an_object_whole(x):
    import scipy.stats
    distribution = scipy.stats.norm(loc=x[0], scale=1.5)
    return np.sum(np.vectorize(lambda v, d: d.cdf(v))(x * 2.0, distribution))


# 15. An attribute read through the object's bound __getattribute__ (a method-wrapper): second order
#     gave the wrapper a constant's tangent, not its object's, so the Hessian lost the value's
#     tangent (pykalman's get_params reads {name: obj.__getattribute__(name) ...}).
class _Box:
    def __init__(self, a):
        self.a = a


def attribute_read_by_bound_getattribute(x):
    return np.sum(np.sin(_Box(x * x).__getattribute__("a")))


# 16. A result kept on an object by an earlier call and returned when the input matches it (astropy's
#     Voigt1D._wrap_wofz keeps the last z and wofz(z) on the model): a plain call at the point leaves
#     the result there, and the differentiated call returns it, a value computed without derivatives,
#     so the derivative through it is silently 0. Nothing in the returned value tells yuebing it was
#     computed from the input.
class _LastResult:
    def __init__(self):
        self.last_x, self.last_y = np.zeros(0), None

    def sine(self, x):
        if np.array_equal(x, self.last_x):
            return self.last_y
        self.last_x, self.last_y = x, np.sin(x)
        return self.last_y


_LAST_RESULT = _LastResult()
CACHED_POINT = np.array([0.3, -0.7])
_LAST_RESULT.sine(2.0 * CACHED_POINT)   # the plain call that fills the cache, as a user's fit would


def result_cached_on_an_object(x):
    return np.sum(_LAST_RESULT.sine(2.0 * x))


# 17. A zero partial meets an infinite tangent or cotangent: 0 * inf is NaN. The strong zero
#     (docs/conventions.md) covers an exactly-zero tangent or cotangent meeting an infinite partial,
#     not the mirror case. Reverse mode: sqrt(x * x) at x = 0 (abs by another name) gets sqrt's
#     infinite partial on a nonzero cotangent, then the product's zero partial: NaN, where forward
#     mode (zero tangent of x * x, strong zero at sqrt) gives 0. Forward mode has the mirror case:
#     numpy-ml's RBF kernel squares pairwise distances sqrt(D), D's diagonal exactly 0 with a
#     tangent of rounding noise (1e-17): sqrt's tangent is inf, the square's partial 2 * 0, jvp NaN
#     where reverse mode (strong zero at sqrt) is right. Changing it changes the written convention.
def zero_partial_meets_infinite_cotangent(x):
    return np.sum(np.sqrt(x * x))


@dataclass(frozen=True)
class Mechanism:
    name: str
    function: Callable[[np.ndarray], Any]
    argument: np.ndarray
    seen_in: str

    def still_wrong(self) -> bool:
        try:
            value, gradient = yb.value_and_grad(self.function)(self.argument.copy())
        except Exception as error:
            return not is_clean_refusal(error)
        if not np.isclose(float(value), float(self.function(self.argument.copy()))):
            return True
        estimate, noise = central_gradient(lambda y: float(self.function(y)), self.argument, 1e-6)
        return not agrees(np.asarray(gradient, float), estimate, noise)


#: mechanisms found and fixed: each is a regression test in every mode (tests/test_external_corpus.py)
FIXED = (
    Mechanism("array block drops a loop-carried float", loop_carried_float_next_to_array,
              np.ones(2), "the corpus's own weighting loop (weighted_total/total before it was rewritten): "
              "pymoo G1, G11, MW1-MW14 and filterpy multivariate_multiply, van_loan_discretization gave "
              "wrong values"),
    Mechanism("float loop over a constant array crashes", loop_over_constant_array,
              np.array([0.3, -0.5]), "filterpy gh_filter, ghk_filter"),
    Mechanism("functools.wraps decorator: KeyError 'args'", call_through_wraps_decorator,
              np.array([1.5, 0.5]), "scipy.linalg.eigh via scipy.stats.multivariate_normal: "
              "benchmark_functions PitsAndHoles, filterpy log_likelihood"),
    Mechanism("float-only loop then array: reverse code does not compile", float_only_loop_then_array,
              np.ones(2), "a reduction of mechanism 1"),
    Mechanism("reshape of an integer array: pullback reshapes a 1-element cotangent",
              reshape_of_integer_array, np.array([0.3, 0.7]), "pymoo G19 (anp = numpy): its constant "
              "matrix anp.array([-16, 2, ...]).reshape((10, 5))"),
    Mechanism("lazy backend's __getattr__ imports its module: refused inside frozen importlib",
              lazy_backend_importing_its_module, np.array([0.3, -0.8, 1.1]),
              "pymoo: 75 problems through their anp LazyBackend (refused since the attribute protocols "
              "of be1bf5f, importlib.import_module now has zero derivative)"),
    Mechanism("random.sample/randrange: int.bit_length has no rule", python_random_picks,
              np.linspace(-1.0, 1.0, 5), "the harness's check that functions drawing from Python's "
              "random are reseeded (int.bit_length and bit_count now have zero derivative)"),
    Mechanism("super().__init__() reaching object.__init__ had no rule", super_init_reaching_object,
              np.array([0.5, 2.0, -1.0]), "pymoo ZDT5 (both variants): pymoo.util.normalization's "
              "Normalization.__init__ (object.__init__ now has zero derivative, also bound by super())"),
    Mechanism("cls.__new__(cls) reaching object.__new__ had no rule", new_instance_by_object_new,
              np.array([0.5, 2.0, -1.0]), "scikit-learn: every fit through CallbackContext._from_estimator "
              "(StandardScaler, SplineTransformer...; object.__new__ now has zero derivative)"),
    Mechanism("uuid.uuid4() and datetime.now() had no rules", named_and_dated, np.array([0.5, 2.0, -1.0]),
              "scikit-learn: every fit through CallbackContext._from_estimator (os.urandom, int.from_bytes "
              "and datetime.now now have zero derivative; datetimes have no tangent)"),
    Mechanism("a with statement's manager deletes an attribute the block set: the pullback's undo failed",
              attribute_deleted_by_with_manager, np.array([0.5, -1.0]),
              "scikit-learn: StandardScaler fit_transform and transform, wrapped by callback_management_context "
              "(it deletes _skl_callbacks_to_teardown at exit; the undo of a setattr now restores the state before "
              "whatever the manager did: tests/test_with_deleting_manager.py)"),
    Mechanism("scipy.linalg.pinvh at a repeated eigenvalue: NaN gradient, even unused",
              pinvh_at_repeated_eigenvalues, np.array([0.5, -1.0]),
              "scikit-learn: OAS/oas at shrinkage 1 (EmpiricalCovariance._set_covariance computes the precision "
              "with pinvh, which went through eigh's map dividing by eigenvalue gaps; pinvh now has a rule of its "
              "own: tests/test_pinvh_degenerate.py)"),
    Mechanism("digamma at a complex argument: its derivative polygamma(1, z) is real-only in SciPy",
              digamma_at_complex, np.array([1.3, 0.4]),
              "lmfit pearson4 (both cases): the Hessian of real(loggamma(expon + 0.5j * skew)) crashed with "
              "a TypeError from zeta (complex polygamma now in rules/complex_polygamma.py: "
              "tests/test_complex_polygamma.py)"),
    Mechanism("np.vectorize with an object handed whole (a frozen distribution): refused as an object array",
              vectorize_handing_an_object_whole, np.array([0.3, -0.6]),
              "properscoring crps_quadrature (rules/differentiated.handed_whole keeps such an argument out of "
              "the broadcast, as NumPy does: tests/test_vectorize_whole_arguments.py)"),
    Mechanism("o.__getattribute__(name): second order took the method-wrapper for a constant (Hessian wrong)",
              attribute_read_by_bound_getattribute, np.array([0.3, -0.7, 1.1]),
              "pykalman filter, smooth and loglikelihood in the model (Hessians off by 25-60 %, through "
              "get_params; lifting_objects.py now gives the wrapper its object's tangent: "
              "tests/test_method_wrapper_reads.py; and third order, plain_objects.py, since)"),
)

#: mechanisms still wrong (each asserted still wrong, so a fix shows up)
MECHANISMS: tuple = (
    Mechanism("a result cached on an object by a plain call is returned without its derivative",
              result_cached_on_an_object, CACHED_POINT,
              "astropy Voigt1D, Voigt1D_in_inputs (Voigt1D._wrap_wofz keeps the last z and wofz(z) on the "
              "model; reported to the lead, docs/limitations.md's known silent cases)"),
    Mechanism("a zero partial meets an infinite tangent or cotangent: NaN (the strong zero is one-sided)",
              zero_partial_meets_infinite_cotangent, np.array([0.0, 0.5]),
              "numpy_ml rbf_kernel_in_sigma and gp_regression_in_inputs: yb.jvp is NaN (the RBF kernel's "
              "sqrt of a pairwise squared distance that is exactly 0 with a rounding-noise tangent, then "
              "squared); their gradients and Hessians are right"),
)
