"""lmfit cases: the peak, step and distribution functions of ``lmfit.lineshapes`` as functions
of their parameters and of ``x``.

Each lineshape is taken twice: on an array of points (``x = grid + shift``, the shift the first
variable, the outputs weighted into one number) and at one point (``x`` the first variable, a
NumPy float, so the lineshapes' ``isinstance(x, (int, float))`` branches run). Every parameter is
kept inside a box where the function is smooth (``sigma > 0``, ``x > 0`` for the log-normal and
the power law, the Bose-Einstein denominator away from zero, the grid away from a step's corners).
Forms chosen by a string (``step``, ``rectangle``, ``thermal_distribution``) are one case each.
Three cases go through ``lmfit.Model``: a composite model's ``eval``, the residual a fit
minimises and a bounded parameter, at ``Parameters`` made from ``t``.

The lineshapes call SciPy's ``erf``, ``erfc``, ``wofz``, ``gamma``, ``loggamma`` and ``betaln``;
the jax twin (a second oracle) binds them to ``jax.scipy.special``'s and runs eagerly (their
``max(tiny, sigma)`` compares a traced value, which ``jax.jit`` refuses). Each case is checked in
every mode (``all_modes``): the gradient, ``yb.jvp``, the Hessian and ``yb.hvp``.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable

import numpy as np

from .cases import CaseSpec, Problem, interior_point

PREFIXES = ("lmfit.lineshapes", __name__)
# fractions of the x range: no point at 0 (dho's special case) or on the middle of a range
GRID_FRACTIONS = np.array([0.04, 0.17, 0.31, 0.46, 0.62, 0.77, 0.93])
WEIGHTS = np.linspace(1.0, 2.0, GRID_FRACTIONS.size)

# boxes of the usual parameters
AMPLITUDE = ("amplitude", 0.5, 3.0)
CENTER = ("center", -1.0, 1.0)
SIGMA = ("sigma", 0.5, 2.0)
X_WIDE = (-3.0, 3.0)
X_POSITIVE = (0.3, 4.0)


@dataclass(frozen=True)
class Lineshape:
    name: str
    parameters: tuple[tuple[str, float, float], ...]
    x_range: tuple[float, float] = X_WIDE
    form: str = ""                  # the ``form=`` argument, for the forms chosen by a string
    label: str = ""                 # a case name of its own (the same lineshape on another x range)

    @property
    def case_name(self) -> str:
        return self.label or (f"{self.name}_{self.form}" if self.form else self.name)

    def function(self) -> Callable:
        import lmfit.lineshapes
        function = getattr(lmfit.lineshapes, self.name)
        return partial(function, form=self.form) if self.form else function


PEAK = (AMPLITUDE, CENTER, SIGMA)
THERMAL = (("amplitude", 1.2, 2.0), ("center", -1.0, 0.5), ("kt", 0.5, 2.0))
X_ABOVE_CENTER = (1.5, 4.0)   # amplitude * exp((x - center) / kt) - 1 stays above 0.2
RECTANGLE = (AMPLITUDE, ("center1", -1.5, -0.5), ("sigma1", 0.5, 2.0), ("center2", 0.5, 1.5),
             ("sigma2", 0.5, 2.0))

LINESHAPES = (
    Lineshape("gaussian", PEAK),
    Lineshape("gaussian2d", (("y", -1.0, 1.0), AMPLITUDE, ("centerx", -1.0, 1.0), ("centery", -1.0, 1.0),
                             ("sigmax", 0.5, 2.0), ("sigmay", 0.5, 2.0))),
    Lineshape("lorentzian", PEAK),
    Lineshape("split_lorentzian", PEAK + (("sigma_r", 0.5, 2.0),)),
    Lineshape("voigt", PEAK + (("gamma", 0.3, 1.5),)),
    Lineshape("pvoigt", PEAK + (("fraction", 0.1, 0.9),)),
    Lineshape("moffat", PEAK + (("beta", 0.5, 3.0),)),
    Lineshape("pearson4", PEAK + (("expon", 0.8, 3.0), ("skew", -1.0, 1.0))),
    Lineshape("pearson7", PEAK + (("expon", 0.8, 3.0),)),
    Lineshape("breit_wigner", PEAK + (("q", -2.0, 2.0),)),
    Lineshape("damped_oscillator", (AMPLITUDE, ("center", 0.5, 2.0), ("sigma", 0.1, 0.5)), (0.1, 3.0)),
    Lineshape("dho", (AMPLITUDE, ("center", 0.5, 2.0), ("sigma", 0.3, 1.5), ("gamma", 0.5, 2.0))),
    Lineshape("logistic", PEAK),
    Lineshape("lognormal", (AMPLITUDE, ("center", -0.5, 0.5), ("sigma", 0.3, 1.5)), X_POSITIVE),
    # two points of the grid at x <= 0, which lognormal overwrites in place with 1e-15
    # (x[where(x <= tiny)] = tiny): their derivatives in x must vanish, not leak
    Lineshape("lognormal", (AMPLITUDE, ("center", -0.5, 0.5), ("sigma", 0.3, 1.5)), (-1.0, 3.0),
              label="lognormal_clipped"),
    Lineshape("students_t", (AMPLITUDE, CENTER, ("sigma", 0.5, 5.0))),
    Lineshape("expgaussian", PEAK + (("gamma", 0.3, 2.0),)),
    Lineshape("doniach", PEAK + (("gamma", 0.0, 0.5),)),
    Lineshape("skewed_gaussian", PEAK + (("gamma", -2.0, 2.0),)),
    Lineshape("skewed_voigt", PEAK + (("gamma", 0.3, 1.5), ("skew", -2.0, 2.0))),
    Lineshape("sine", (AMPLITUDE, ("frequency", 0.5, 2.0), ("shift", -1.0, 1.0))),
    Lineshape("expsine", (AMPLITUDE, ("frequency", 0.5, 2.0), ("shift", -1.0, 1.0), ("decay", 0.0, 0.5))),
    Lineshape("thermal_distribution", THERMAL, X_ABOVE_CENTER, "bose"),
    Lineshape("thermal_distribution", THERMAL, X_ABOVE_CENTER, "maxwell"),
    Lineshape("thermal_distribution", THERMAL, X_ABOVE_CENTER, "fermi"),
    Lineshape("bose", THERMAL, X_ABOVE_CENTER),
    Lineshape("fermi", THERMAL, X_ABOVE_CENTER),
    Lineshape("step", PEAK, X_WIDE, "linear"),
    Lineshape("step", PEAK, X_WIDE, "atan"),
    Lineshape("step", PEAK, X_WIDE, "erf"),
    Lineshape("step", PEAK, X_WIDE, "logistic"),
    Lineshape("rectangle", RECTANGLE, X_WIDE, "linear"),
    Lineshape("rectangle", RECTANGLE, X_WIDE, "atan"),
    Lineshape("rectangle", RECTANGLE, X_WIDE, "erf"),
    Lineshape("rectangle", RECTANGLE, X_WIDE, "logistic"),
    Lineshape("exponential", (AMPLITUDE, ("decay", 0.5, 3.0))),
    Lineshape("powerlaw", (AMPLITUDE, ("exponent", -2.0, 2.5)), X_POSITIVE),
    Lineshape("linear", (("slope", -2.0, 2.0), ("intercept", -1.0, 1.0))),
    Lineshape("parabolic", (("a", -2.0, 2.0), ("b", -2.0, 2.0), ("c", -1.0, 1.0))),
)


def _keywords(shape: Lineshape, values) -> dict:
    return {name: values[index] for index, (name, _, _) in enumerate(shape.parameters)}


def on_points(shape: Lineshape) -> Callable:
    """The lineshape on a grid of points shifted by ``t[0]``, in its parameters ``t[1:]``."""
    low, high = shape.x_range
    grid = low + (high - low) * GRID_FRACTIONS

    def lineshape_on_points(t):
        values = shape.function()(grid + t[0], **_keywords(shape, t[1:]))
        return np.sum(WEIGHTS * values)
    return lineshape_on_points


def at_one_point(shape: Lineshape) -> Callable:
    """The lineshape at the point ``t[0]`` (a NumPy float), in its parameters ``t[1:]``."""
    def lineshape_at_one_point(t):
        return shape.function()(t[0], **_keywords(shape, t[1:]))
    return lineshape_at_one_point


def _box(shape: Lineshape, on_grid: bool) -> tuple[list[float], list[float]]:
    low, high = shape.x_range
    shift = 0.02 * (high - low)
    first = (-shift, shift) if on_grid else (low, high)
    lower = [first[0]] + [box[1] for box in shape.parameters]
    upper = [first[1]] + [box[2] for box in shape.parameters]
    return lower, upper


def _spec(shape: Lineshape, on_grid: bool) -> CaseSpec:
    lower, upper = _box(shape, on_grid)
    function = on_points(shape) if on_grid else at_one_point(shape)

    def build(attempt: int) -> Problem:
        point = interior_point(lower, upper, spec.seed(attempt))
        return Problem(function, point, PREFIXES, None, jax_eager=True)

    suffix = "on_points" if on_grid else "at_a_point"
    spec = CaseSpec("lmfit", f"{shape.case_name}_{suffix}", build, all_modes=True)
    return spec


# ------------------------------------------------------------------------- lmfit.Model

MODEL_X = np.linspace(-2.0, 3.0, 7)


def model_gaussian_plus_linear_eval(t):
    """A composite model evaluated at parameters made from ``t`` (lmfit's ``Parameters``)."""
    from lmfit.models import GaussianModel, LinearModel
    model = GaussianModel(prefix="g_") + LinearModel(prefix="l_")
    params = model.make_params(g_amplitude=1.0 + 0.3 * t[0], g_center=t[1], g_sigma=1.0 + 0.2 * t[2],
                               l_slope=t[3], l_intercept=0.5)
    return np.sum(WEIGHTS * model.eval(params, x=MODEL_X))


def model_residual(t):
    """The sum of squares a fit minimises, at parameters made from ``t``."""
    from lmfit.models import GaussianModel
    model = GaussianModel()
    params = model.make_params(amplitude=1.0 + 0.3 * t[0], center=t[1], sigma=1.0 + 0.2 * t[2])
    return np.sum(model._residual(params, np.exp(-MODEL_X ** 2), None, x=MODEL_X) ** 2)


def model_eval_with_bounds(t):
    """A bounded parameter (lmfit maps it through its internal arcsin transform)."""
    from lmfit.models import LorentzianModel
    model = LorentzianModel()
    params = model.make_params(amplitude=1.0 + 0.3 * t[0], center=t[1],
                               sigma=dict(value=1.0 + 0.2 * t[2], min=0.1, max=5.0))
    return np.sum(WEIGHTS * model.eval(params, x=MODEL_X))


MODEL_FUNCTIONS = (model_gaussian_plus_linear_eval, model_residual, model_eval_with_bounds)


def _model_spec(function: Callable) -> CaseSpec:
    def build(attempt: int) -> Problem:
        return Problem(function, interior_point(-np.ones(4), np.ones(4), spec.seed(attempt)), None, None)

    spec = CaseSpec("lmfit", function.__name__, build, all_modes=True)
    return spec


def lmfit_cases() -> list[CaseSpec]:
    shapes = [_spec(shape, on_grid) for shape in LINESHAPES for on_grid in (True, False)]
    return shapes + [_model_spec(function) for function in MODEL_FUNCTIONS]
