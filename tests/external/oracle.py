"""Oracles for the external corpus: central differences and jax twins.

Central differences are tried at several relative steps (the right step depends on how curved
and how large the function is); a derivative is accepted when it agrees with the differences at
one of them, within a relative tolerance plus the rounding noise that step implies. A wrong
derivative (a dropped or doubled term) disagrees at every step.

A *jax twin* runs the package's own code with its modules' ``numpy`` (and ``math``) names bound to
``jax.numpy`` for the duration of the call: no code is copied. The twin is used only when it
computes the same value as the NumPy original, and only when jax is importable.
"""
from __future__ import annotations

import contextlib
import math
import sys
from dataclasses import dataclass
from typing import Callable, Iterator, Optional

import numpy as np

EPS = np.finfo(float).eps
RELATIVE_STEPS = (1e-6, 1e-5, 1e-7, 1e-4, 1e-3)
RTOL = 1e-5
JAX_RTOL = 1e-5


def agrees(actual: np.ndarray, expected: np.ndarray, noise: float | np.ndarray, rtol: float = RTOL) -> bool:
    """Every component within ``rtol`` of the larger of the two vectors' sizes, plus ``noise``."""
    actual, expected = np.asarray(actual, float), np.asarray(expected, float)
    if actual.shape != expected.shape or not np.all(np.isfinite(actual)) or not np.all(np.isfinite(expected)):
        return False
    scale = max(np.max(np.abs(actual), initial=0.0), np.max(np.abs(expected), initial=0.0))
    return bool(np.all(np.abs(actual - expected) <= rtol * scale + noise + 1e-300))


def relative_error(actual: np.ndarray, expected: np.ndarray) -> float:
    actual, expected = np.asarray(actual, float), np.asarray(expected, float)
    if actual.shape != expected.shape:
        return math.inf
    scale = max(np.max(np.abs(expected), initial=0.0), 1e-300)
    return float(np.max(np.abs(actual - expected), initial=0.0) / scale)


def _perturbed(x: np.ndarray, index: int, step: float) -> tuple[np.ndarray, np.ndarray, float]:
    plus, minus = x.copy(), x.copy()
    plus.flat[index] += step
    minus.flat[index] -= step
    return plus, minus, plus.flat[index] - minus.flat[index]


def central_gradient(f: Callable, x: np.ndarray, relative_step: float) -> tuple[np.ndarray, np.ndarray]:
    """Central differences of scalar ``f`` at ``x`` and the rounding noise of each component."""
    steps = relative_step * np.maximum(1.0, np.abs(x)).ravel()
    estimate, noise = np.empty(x.size), np.empty(x.size)
    for i in range(x.size):
        plus, minus, width = _perturbed(x, i, steps[i])
        high, low = float(f(plus)), float(f(minus))
        estimate[i] = (high - low) / width
        noise[i] = 50 * EPS * max(abs(high), abs(low), 1.0) / width
    return estimate.reshape(x.shape), noise.reshape(x.shape)


@dataclass
class DifferenceCheck:
    """How a derivative compares with central differences over the steps tried.

    ``stable``: the differences at two neighbouring middle steps (relative 1e-7 and 1e-6, or 1e-6
    and 1e-5) agree within ``STABLE_RTOL`` (a tenth of the tolerance) plus their rounding noise,
    so they resolve the derivative and one disagreeing with them is wrong. Unstable differences (a
    function too curved, too large or with frequencies finer than any step: Weierstrass sums to
    3**20) decide nothing; another oracle must."""
    agrees: bool
    error: float
    stable: bool


STABLE_RTOL = 1e-6
STABLE_STEPS = (1e-7, 1e-6, 1e-5)


def _stable(estimates: dict[float, tuple[np.ndarray, np.ndarray]]) -> bool:
    middle = [estimates[step] for step in STABLE_STEPS]
    return any(agrees(a, b, noise_a + noise_b, STABLE_RTOL)
               for (a, noise_a), (b, noise_b) in zip(middle, middle[1:]))


def _compare_over_steps(derivative: np.ndarray, estimate_at: Callable) -> DifferenceCheck:
    best, estimates = math.inf, {}
    for relative_step in RELATIVE_STEPS:
        estimate, noise = estimate_at(relative_step)
        best = min(best, relative_error(derivative, estimate))
        if agrees(derivative, estimate, noise):
            return DifferenceCheck(True, best, True)
        estimates[relative_step] = (estimate, noise)
    return DifferenceCheck(False, best, _stable(estimates))


def gradient_against_differences(f: Callable, x: np.ndarray, gradient: np.ndarray) -> DifferenceCheck:
    """``gradient`` against central differences of ``f`` at each step in turn."""
    return _compare_over_steps(gradient, lambda step: central_gradient(f, x, step))


COMPLEX_STEP = 1e-30


def complex_step_gradient(f: Callable, x: np.ndarray) -> Optional[np.ndarray]:
    """``Im f(x + i h e_k) / h``: no cancellation, so exact to rounding for code built from
    analytic operations, at any curvature. Code with ``abs``, comparisons or ``max`` is not
    analytic: there the result can be wrong, so it only ever confirms, never convicts."""
    estimate = np.empty(x.size)
    for k in range(x.size):
        shifted = x.astype(complex)
        shifted.flat[k] += 1j * COMPLEX_STEP
        try:
            value = f(shifted)
        except Exception:  # the code does not take complex input
            return None
        estimate[k] = np.imag(value) / COMPLEX_STEP
    return estimate.reshape(x.shape)


def directional_difference(gradient_of: Callable, x: np.ndarray, direction: np.ndarray,
                           relative_step: float) -> tuple[np.ndarray, np.ndarray]:
    """Central differences of the gradient along ``direction`` (a Hessian-vector product)."""
    step = relative_step * max(1.0, float(np.max(np.abs(x))))
    high = np.asarray(gradient_of(x + step * direction), float)
    low = np.asarray(gradient_of(x - step * direction), float)
    noise = 50 * EPS * max(np.max(np.abs(high)), np.max(np.abs(low)), 1.0) / step
    return (high - low) / (2 * step), np.full(x.shape, noise)


def hessian_against_differences(gradient_of: Callable, x: np.ndarray, hessian: np.ndarray,
                                directions: np.ndarray) -> DifferenceCheck:
    """``hessian @ v`` against differences of the gradient along each ``v``; the worst one."""
    matrix = np.asarray(hessian, float).reshape(x.size, x.size)
    worst = DifferenceCheck(True, 0.0, True)
    for direction in directions:
        product = (matrix @ direction.ravel()).reshape(x.shape)
        check = _compare_over_steps(product, lambda step: directional_difference(
            gradient_of, x, direction.reshape(x.shape), step))
        if not check.agrees:
            return check
        worst = DifferenceCheck(True, max(worst.error, check.error), True)
    return worst


# ----------------------------------------------------------------------------------- jax twins

def jax_available() -> bool:
    try:
        import jax  # noqa: F401
    except ImportError:
        return False
    return True


def _enable_float64() -> None:
    """jax computes in float64 as NumPy does (set once: setting it again clears jax's caches)."""
    import jax
    if not jax.config.jax_enable_x64:
        jax.config.update("jax_enable_x64", True)


class _JaxMath:
    """``math`` with its functions taken from ``jax.numpy`` where it has them (``math.cos(t)``)."""

    def __getattr__(self, name: str):
        import jax.numpy as jnp
        return getattr(jnp, name, getattr(math, name))


class _JaxNumpy:
    """``jax.numpy``, falling back to NumPy for what it lacks (``np.random``: a random term is
    a constant of the input, drawn by NumPy from the same seed as the original's)."""

    def __getattr__(self, name: str):
        import jax.numpy as jnp
        return getattr(jnp, name) if hasattr(jnp, name) else getattr(np, name)


def _replacement(name: str, value: object, jnp: object, jax_math: _JaxMath) -> object:
    if value is np:
        return _JaxNumpy()
    if value is math:
        return jax_math
    if callable(value) and getattr(np, name, None) is value and hasattr(jnp, name):
        return getattr(jnp, name)  # from numpy import dot, exp
    if callable(value) and getattr(math, name, None) is value and hasattr(jnp, name):
        return getattr(jnp, name)  # from math import cos
    return _jax_special(value)


def _jax_special(value: object) -> object:
    """jax's twin of a SciPy special function bound under any name (lmfit's ``gamfcn`` is
    ``scipy.special.gamma``), or ``None``."""
    if not isinstance(value, np.ufunc) or "scipy.special" not in sys.modules:
        return None
    import jax.scipy.special as jax_special
    name = value.__name__
    if getattr(sys.modules["scipy.special"], name, None) is not value:
        return None
    return getattr(jax_special, name, None)


@contextlib.contextmanager
def numpy_replaced_by_jax(prefixes: tuple[str, ...]) -> Iterator[None]:
    """Within the block, the modules named by ``prefixes`` see ``jax.numpy`` for ``numpy``."""
    import jax.numpy as jnp
    jax_math, saved = _JaxMath(), []
    for module_name, module in list(sys.modules.items()):
        if module is None or not module_name.startswith(prefixes):
            continue
        namespace = vars(module)
        for name, value in list(namespace.items()):
            replacement = _replacement(name, value, jnp, jax_math)
            if replacement is not None:
                saved.append((namespace, name, value))
                namespace[name] = replacement
    try:
        yield
    finally:
        for namespace, name, value in reversed(saved):
            namespace[name] = value


MAX_TWIN_OPERATIONS = 2000


class JaxTwin:
    """``f`` run under jax with the package's NumPy names swapped, compiled once (``jax.jit``:
    jax's eager mode compiles every primitive separately, far slower on small functions).
    ``derivatives`` returns ``None`` when the package's code is not jax-traceable."""

    def __init__(self, f: Callable, prefixes: tuple[str, ...], reseed: Optional[Callable] = None,
                 eager: bool = False):
        self.f, self.prefixes, self.reseed = f, prefixes, reseed
        self.eager = eager   # not compiled: Python comparisons of traced values work under jax.grad
        self._compiled: dict[bool, Callable] = {}
        self._size: Optional[int] = None   # operations in the traced function

    def _all_orders(self, hessian: bool) -> Callable:
        import jax
        if hessian not in self._compiled:
            f = self.f

            def all_orders(y):
                return f(y), jax.grad(f)(y), (jax.hessian(f)(y) if hessian else None)

            self._compiled[hessian] = all_orders if self.eager else jax.jit(all_orders)
        return self._compiled[hessian]

    def _small_enough(self, hessian: bool, x: np.ndarray) -> bool:
        """XLA takes minutes and gigabytes to compile the Hessian of a long unrolled program
        (pymoo's G12 runs 729 loop iterations): such functions have no twin. Tracing the
        function alone is quick."""
        import jax
        if self.eager:
            return True
        if self._size is None:
            self._size = len(jax.make_jaxpr(self.f)(x).jaxpr.eqns)
        return self._size <= MAX_TWIN_OPERATIONS

    def derivatives(self, x: np.ndarray, hessian: bool) -> Optional[tuple[float, np.ndarray, Optional[np.ndarray]]]:
        """(value, gradient, Hessian or None) at ``x``, or ``None`` if there is no twin."""
        import jax.numpy as jnp
        _enable_float64()
        if self.reseed is not None:
            self.reseed()
        try:
            with numpy_replaced_by_jax(self.prefixes):
                if not self._small_enough(hessian, x):
                    return None
                value, gradient, matrix = self._all_orders(hessian)(jnp.asarray(x))
        except Exception:  # the package's code is not jax-traceable: no twin, not an error
            return None
        return (float(value), np.asarray(gradient, float),
                None if matrix is None else np.asarray(matrix, float))


def product_against_differences(gradient_of: Callable, x: np.ndarray, product: np.ndarray,
                                direction: np.ndarray) -> DifferenceCheck:
    """A Hessian-vector product ``product`` against differences of the gradient along ``direction``."""
    return _compare_over_steps(product, lambda step: directional_difference(gradient_of, x, direction, step))
