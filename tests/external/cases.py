"""The functions of the external corpus, enumerated from installed packages (nothing copied).

Each ``CaseSpec`` builds, on demand, a ``Problem``: a scalar function of one float vector (the
package's own method or function, or a few lines of harness wiring around it), a smooth point
inside the function's documented bounds (a fixed seed per case), the module prefixes whose
``numpy`` a jax twin swaps, and a seed for functions with a random term (NumPy's legacy global
generator and Python's ``random`` reseeded before every evaluation, so the function is
deterministic and has a derivative).

Packages: ``opfunu`` (named and CEC benchmark functions), ``benchmark_functions``, ``pymoo``
(single-, multi- and many-objective test problems, objectives and constraints weighted into one
number), ``filterpy`` (Kalman filter steps as functions of their parameters, in
``cases_filterpy``), ``cma`` (pycma's test functions, in ``cases_cma``) and ``sklearn``
(scikit-learn's metrics, kernels, losses and estimator fits as functions of their data, in
``cases_sklearn`` and ``cases_sklearn_models``), ``lmfit`` (its lineshapes, in ``cases_lmfit``),
``properscoring`` (scoring rules, in ``cases_properscoring``) and ``pykalman`` (Kalman filters, in
``cases_pykalman``). ``numpy-ml`` does not import on Python 3.10+ (``collections.Hashable``).
"""
from __future__ import annotations

import contextlib
import importlib
import io
import sys
import zlib
from dataclasses import dataclass
from typing import Callable, ContextManager, Iterator, Optional

import numpy as np


@dataclass
class Problem:
    function: Callable[[np.ndarray], float]
    point: np.ndarray
    jax_prefixes: Optional[tuple[str, ...]] = None
    random_seed: Optional[int] = None
    # the jax twin runs eagerly (code comparing traced values in Python, as lmfit's max(tiny, sigma))
    jax_eager: bool = False


@dataclass(frozen=True)
class CaseSpec:
    package: str
    name: str
    build: Callable[[int], Problem]   # attempt number -> problem (a new point per attempt)
    # the whole check runs inside this context (pymoo with its backend bound to NumPy)
    setting: Callable[[], ContextManager] = contextlib.nullcontext
    variant_of: Optional[str] = None  # the package whose functions these are, run differently
    # also check forward mode (jvp against the verified gradient), yb.hvp against the verified
    # Hessian, and that no mode changes the argument
    all_modes: bool = False

    @property
    def case_id(self) -> str:
        return f"{self.package}:{self.name}"

    def seed(self, attempt: int) -> int:
        return zlib.crc32(f"{self.case_id}#{attempt}".encode())


def interior_point(lower, upper, seed: int, margin: float = 0.15) -> np.ndarray:
    """A random point of the box, kept ``margin`` of each side's width away from its faces."""
    lower, upper = np.asarray(lower, float).ravel(), np.asarray(upper, float).ravel()
    upper = np.where(np.isfinite(upper), upper, 10.0)
    lower = np.where(np.isfinite(lower), lower, -10.0)
    width = upper - lower
    rng = np.random.default_rng(seed)
    return lower + width * rng.uniform(margin, 1.0 - margin, size=lower.shape)


def _quietly(make: Callable):
    """Constructors of some packages print; keep the test output clean."""
    with contextlib.redirect_stdout(io.StringIO()):
        return make()


def installed(module: str) -> bool:
    try:
        importlib.import_module(module)
    except Exception:
        return False
    return True


# ----------------------------------------------------------------------------------- opfunu

SMALL_DIMENSIONS = (10, 20, 50, 100)


def _opfunu_instance(cls):
    """The instance with the fewest variables it supports (CEC 2010 defaults to 1000)."""
    obj = _quietly(cls)
    supported = getattr(obj, "dim_supported", None)
    if supported:
        return _quietly(lambda: cls(ndim=min(supported)))
    if not obj.dim_changeable or obj.ndim <= SMALL_DIMENSIONS[0]:
        return obj
    for ndim in SMALL_DIMENSIONS:
        try:
            smaller = _quietly(lambda: cls(ndim=ndim))
            smaller.evaluate(interior_point(smaller.lb, smaller.ub, 0))
            return smaller
        except Exception:  # this size needs data the package does not ship
            continue
    return obj


def _opfunu_spec(cls) -> CaseSpec:
    name = cls.__name__

    def build(attempt: int) -> Problem:
        obj = _opfunu_instance(cls)
        point = interior_point(obj.lb, obj.ub, spec.seed(attempt))
        seed = 0 if getattr(obj, "randomized_term", False) else None
        return Problem(obj.evaluate, point, ("opfunu.",), seed)

    spec = CaseSpec("opfunu", name, build)
    return spec


def opfunu_cases() -> list[CaseSpec]:
    import opfunu
    classes = opfunu.get_all_name_based_functions() + opfunu.get_all_cec_based_functions()
    return [_opfunu_spec(cls) for cls in sorted(classes, key=lambda c: c.__name__)]


# ----------------------------------------------------------------------------- benchmark_functions

def _benchmark_functions_spec(cls) -> CaseSpec:
    def build(attempt: int) -> Problem:
        obj = cls(n_dimensions=3) if _takes_dimensions(cls) else cls()
        lower, upper = obj.suggested_bounds()
        point = interior_point(lower, upper, spec.seed(attempt))
        return Problem(obj, point, ("benchmark_functions.",), None)

    spec = CaseSpec("benchmark_functions", cls.__name__, build)
    return spec


def _takes_dimensions(cls) -> bool:
    import inspect
    return "n_dimensions" in inspect.signature(cls.__init__).parameters


def benchmark_functions_cases() -> list[CaseSpec]:
    import inspect
    import benchmark_functions as bf
    classes = [value for value in vars(bf).values()
               if isinstance(value, type) and issubclass(value, bf.BenchmarkFunction)
               and value is not bf.BenchmarkFunction and not inspect.isabstract(value)]
    return [_benchmark_functions_spec(cls) for cls in sorted(classes, key=lambda c: c.__name__)]


# ----------------------------------------------------------------------------------- pymoo

PYMOO_MODULES = ("pymoo.problems.single", "pymoo.problems.multi", "pymoo.problems.many")


def weighted_total(out: dict) -> float:
    """pymoo's outputs (objectives ``F``, constraints ``G``/``H``: arrays or lists of arrays)
    as one number, each entry weighted by a fixed, distinct weight.

    The weight is computed from a counter, not carried from one iteration to the next: a float
    carried around a loop next to an array statement is dropped by yuebing's array blocks
    (KNOWN mechanism, see tests/test_external_corpus.py), which would hide the package's code."""
    parts = []
    for key in ("F", "G", "H"):
        if key in out:
            value = out[key]
            parts.extend(value if isinstance(value, list) else [value])
    total = 0.0
    for index in range(len(parts)):
        total = total + (1.0 + 0.1 * index) * np.sum(parts[index])
    return total


def _pymoo_function(problem):
    def pymoo_objective(x):
        out = {}
        problem._evaluate(np.reshape(x, (1, -1)), out)
        return weighted_total(out)
    return pymoo_objective


PYMOO_NUMPY = "pymoo (anp = numpy)"


def _pymoo_spec(cls, numpy_backend: bool = False) -> CaseSpec:
    def build(attempt: int) -> Problem:
        problem = _quietly(cls)
        point = interior_point(problem.xl, problem.xu, spec.seed(attempt))
        return Problem(_pymoo_function(problem), point, ("pymoo.problems.", "pymoo.util.", __name__), None)

    if numpy_backend:
        spec = CaseSpec(PYMOO_NUMPY, cls.__name__, build, pymoo_backend_bound_to_numpy, "pymoo")
    else:
        spec = CaseSpec("pymoo", cls.__name__, build)
    return spec


@contextlib.contextmanager
def pymoo_backend_bound_to_numpy() -> Iterator[None]:
    """pymoo's problems call NumPy through ``anp``, a ``LazyBackend`` object whose
    ``__getattr__`` imports numpy, autograd or jax at each access (yuebing differentiates it as
    user code). Within the block the modules' ``anp`` is NumPy itself (what the lazy object
    returns by default): the same problems, with no lazy object in the way."""
    saved = []
    for module_name, module in list(sys.modules.items()):
        if module is None or not module_name.startswith("pymoo."):
            continue
        namespace = vars(module)
        for name, value in list(namespace.items()):
            if type(value).__name__ == "LazyBackend":
                saved.append((namespace, name, value))
                namespace[name] = np
    try:
        yield
    finally:
        for namespace, name, value in saved:
            namespace[name] = value


def _continuous_pymoo_problem(cls) -> bool:
    """A concrete problem on floats with finite bounds, built with its defaults."""
    try:
        problem = _quietly(cls)
    except Exception:
        return False
    if problem.xl is None or problem.xu is None or problem.n_var is None or problem.n_var < 1:
        return False
    if problem.vtype not in (float, None) or not np.all(np.isfinite(problem.xl)):
        return False
    return type(problem)._evaluate is not _pymoo_base()._evaluate


def _pymoo_base():
    from pymoo.core.problem import Problem as PymooProblem
    return PymooProblem


def pymoo_cases() -> list[CaseSpec]:
    base = _pymoo_base()
    classes = {}
    for module_name in PYMOO_MODULES:
        module = importlib.import_module(module_name)
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, base) and value.__module__.startswith("pymoo.problems"):
                classes[value.__name__] = value
    usable = sorted((cls for cls in classes.values() if _continuous_pymoo_problem(cls)), key=lambda c: c.__name__)
    return [_pymoo_spec(cls) for cls in usable] + [_pymoo_spec(cls, numpy_backend=True) for cls in usable]


# ----------------------------------------------------------------------------------- all

def all_cases() -> list[CaseSpec]:
    """Every case of every installed package, in a fixed order."""
    from .cases_cma import cma_cases
    from .cases_filterpy import filterpy_cases
    from .cases_lmfit import lmfit_cases
    from .cases_properscoring import properscoring_cases
    from .cases_pykalman import pykalman_cases
    from .cases_sklearn import sklearn_cases
    sources = (("opfunu", opfunu_cases), ("benchmark_functions", benchmark_functions_cases),
               ("pymoo", pymoo_cases), ("filterpy", filterpy_cases), ("cma", cma_cases),
               ("sklearn", sklearn_cases), ("lmfit", lmfit_cases),
               ("properscoring", properscoring_cases), ("pykalman", pykalman_cases))
    specs: list[CaseSpec] = []
    for module, enumerate_cases in sources:
        if installed(module):
            specs.extend(enumerate_cases())
    return specs
