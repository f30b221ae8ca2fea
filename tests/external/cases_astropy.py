"""astropy cases: the functional models of ``astropy.modeling`` (``Gaussian1D``, ``Moffat2D``,
``PowerLaw1D``, ... every class of ``functional_models`` and ``powerlaws``), astropy's own
least-squares statistic around them, and the smooth functions of ``astropy.stats``.

A model is taken through its ``evaluate`` (astropy's formula, a static method of plain NumPy) twice:
in its parameters (``t`` is the parameter vector, near the class's defaults, on a fixed irregular
grid of inputs) and in its inputs (``t`` the grid's points, the parameters fixed). A few models are
also built and called as users call them (``Gaussian1D(amplitude=..., ...)(x)``, a compound model,
``astropy.modeling.statistic.leastsquare_1d``), which runs astropy's ``Model.__call__``
machinery (input validation, units, broadcasting). Classes with a ``fit_deriv`` (astropy's own
hand-written derivative in the parameters) give a third oracle: ``test_against_astropys_fit_deriv``.

Piecewise models (``Box1D``, ``Disk2D``, ``Trapezoid1D``, ``BrokenPowerLaw1D``...) are smooth between
their edges: the grid keeps away from them, so their derivatives are those of the piece each point
is on. Every case is checked in every mode (``all_modes``: gradient, ``yb.jvp``, Hessian, ``yb.hvp``).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .cases import CaseSpec, Problem, interior_point
from .cases_filterpy import total

PREFIXES = ("astropy.", __name__)
# irregular points (no point on a piece's edge at the default parameters, none at 0)
X_GRID = np.array([-1.37, -0.61, 0.23, 0.71, 1.18, 1.93])
X_POSITIVE = np.array([0.34, 0.62, 0.87, 1.26, 1.71, 2.45])
X_SMALL = np.array([-0.43, -0.17, 0.06, 0.21, 0.38])
X_TANGENT = np.array([-0.19, -0.08, 0.04, 0.13, 0.21])
X_MAGNITUDES = np.array([-21.4, -20.7, -20.1, -19.3])
XY_GRID = (np.array([-1.21, -0.37, 0.29, 0.83, 1.47]), np.array([0.61, -0.94, 0.17, 1.33, -0.52]))
XY_RING = (np.array([-1.52, 0.11, 1.27, 0.93, -1.08]), np.array([0.37, 1.61, -0.42, 1.22, -1.19]))

# inputs other than X_GRID, by class (positive for logs and powers, inside arcsin's domain, ...)
INPUTS = {"ArcCosine1D": X_SMALL, "ArcSine1D": X_SMALL, "ArcTangent1D": X_SMALL, "Tangent1D": X_TANGENT,
          "Logarithmic1D": X_POSITIVE, "Sersic1D": X_POSITIVE, "KingProjectedAnalytic1D": X_POSITIVE,
          "BrokenPowerLaw1D": X_POSITIVE, "ExponentialCutoffPowerLaw1D": X_POSITIVE,
          "LogParabola1D": X_POSITIVE, "PowerLaw1D": X_POSITIVE, "SmoothlyBrokenPowerLaw1D": X_POSITIVE,
          "Schechter1D": X_MAGNITUDES, "Ring2D": XY_RING}
# parameters other than the class's defaults, where those sit on an edge of the model's domain
# (Sersic's ``ellip`` 0, the Voigt profile's widths, Ring2D's radii around the grid's points)
PARAMETERS = {"Ring2D": {"r_in": 0.9, "width": 0.6}, "KingProjectedAnalytic1D": {"r_tide": 3.0},
              "LogParabola1D": {"beta": 0.2}, "GeneralSersic2D": {"ellip": 0.2, "c": 0.3},
              "Sersic2D": {"ellip": 0.2}, "Ellipse2D": {"a": 1.9, "b": 1.1, "theta": 0.3},
              "Gaussian2D": {"theta": 0.3}, "Disk2D": {"R_0": 1.1}, "TrapezoidDisk2D": {"R_0": 0.8},
              "Box2D": {"x_width": 1.7, "y_width": 2.3}, "Box1D": {"width": 1.9},
              "Trapezoid1D": {"width": 1.0, "slope": 0.7}, "AiryDisk2D": {"radius": 1.7},
              "ArcCosine1D": {"amplitude": 1.3}, "ArcSine1D": {"amplitude": 1.3}}
def _model_classes() -> list[type]:
    from astropy.modeling import functional_models, powerlaws
    classes = [getattr(module, name) for module in (functional_models, powerlaws) for name in module.__all__]
    return sorted(classes, key=lambda cls: cls.__name__)


def inputs_of(cls) -> tuple[np.ndarray, ...]:
    inputs = INPUTS.get(cls.__name__, XY_GRID if cls.n_inputs == 2 else X_GRID)
    return inputs if isinstance(inputs, tuple) else (inputs,)


def default_parameters(cls) -> np.ndarray:
    overrides = PARAMETERS.get(cls.__name__, {})
    return np.array([float(overrides.get(name, getattr(cls, name).default)) for name in cls.param_names])


def parameters_near_defaults(cls, seed: int) -> np.ndarray:
    """Each parameter within 15% of its default (a default of 0 within 0.15 of it): the sign of
    every width, radius and exponent kept, so the model stays on the piece it is on."""
    centre = default_parameters(cls)
    spread = np.where(centre == 0.0, 0.15, 0.15 * np.abs(centre))
    return interior_point(centre - spread, centre + spread, seed, margin=0.1)


def _evaluate(cls) -> Callable:
    """The model's formula: ``evaluate`` of an instance made with the defaults (a static method on
    most classes, a method using ``self`` on ``Voigt1D``, ``Schechter1D``, ...)."""
    return cls().evaluate


def _in_parameters(cls) -> Callable:
    inputs, evaluate = inputs_of(cls), _evaluate(cls)

    def model_in_parameters(t):
        return total(evaluate(*inputs, *t))
    return model_in_parameters


def _in_inputs(cls, parameters: np.ndarray) -> Callable:
    sizes, evaluate = [np.size(x) for x in inputs_of(cls)], _evaluate(cls)

    def model_in_inputs(t):
        return total(evaluate(*np.split(t, np.cumsum(sizes)[:-1]), *parameters))
    return model_in_inputs


def _model_spec(cls, in_inputs: bool) -> CaseSpec:
    name = cls.__name__ + ("_in_inputs" if in_inputs else "")

    def build(attempt: int) -> Problem:
        parameters = parameters_near_defaults(cls, spec.seed(attempt))
        if not in_inputs:
            return Problem(_in_parameters(cls), parameters, PREFIXES, None)
        # the inputs moved by less than a tenth of the grid's spacing: each stays on its piece
        point = np.concatenate(inputs_of(cls))
        point = point + interior_point(np.full(point.size, -0.05), np.full(point.size, 0.05), spec.seed(attempt))
        return Problem(_in_inputs(cls, default_parameters(cls)), point, PREFIXES, None)

    spec = CaseSpec("astropy", name, build, all_modes=True)
    return spec


# ---------------------------------------------------------------- models called as users call them

def gaussian_model_called(t):
    from astropy.modeling.models import Gaussian1D
    return total(Gaussian1D(amplitude=t[0], mean=t[1], stddev=t[2])(X_GRID))


def moffat2d_model_called(t):
    from astropy.modeling.models import Moffat2D
    return total(Moffat2D(amplitude=t[0], x_0=t[1], y_0=t[2], gamma=t[3], alpha=t[4])(*XY_GRID))


def powerlaw_model_called_in_x(t):
    from astropy.modeling.models import PowerLaw1D
    return total(PowerLaw1D(amplitude=1.3, x_0=0.9, alpha=1.7)(t))


def compound_model_called(t):
    from astropy.modeling.models import Gaussian1D, Linear1D
    model = Gaussian1D(amplitude=t[0], mean=t[1], stddev=t[2]) + Linear1D(slope=t[3], intercept=t[4])
    return total(model(X_GRID))


MEASURED = np.array([0.21, 0.63, 1.12, 0.87, 0.52, 0.13])
WEIGHTS = np.array([1.0, 0.8, 1.3, 1.1, 0.9, 1.2])


def leastsquare_of_evaluate(t):
    """astropy's least-squares statistic of a Gaussian plus a constant, its model a closure over
    the classes' ``evaluate`` (the statistic only calls it)."""
    from astropy.modeling.functional_models import Const1D, Gaussian1D
    from astropy.modeling.statistic import leastsquare_1d

    def model(x):
        return Gaussian1D.evaluate(x, t[0], t[1], t[2]) + Const1D.evaluate(x, t[3])
    return leastsquare_1d(MEASURED, model, WEIGHTS, X_GRID)


def leastsquare_2d_of_evaluate(t):
    from astropy.modeling.functional_models import Lorentz2D
    from astropy.modeling.statistic import leastsquare_2d

    def model(x, y):
        return Lorentz2D.evaluate(x, y, t[0], t[1], t[2], t[3])
    return leastsquare_2d(MEASURED[:5], model, None, *XY_GRID)


def leastsquare_of_model(t):
    from astropy.modeling.models import Lorentz1D
    from astropy.modeling.statistic import leastsquare_1d
    return leastsquare_1d(MEASURED, Lorentz1D(amplitude=t[0], x_0=t[1], fwhm=t[2]), None, X_GRID)


CALLED = {gaussian_model_called: (1.0, 0.0, 1.0), moffat2d_model_called: (1.0, 0.0, 0.0, 1.0, 1.5),
          powerlaw_model_called_in_x: tuple(X_POSITIVE), compound_model_called: (1.0, 0.1, 0.8, 0.3, 0.2),
          leastsquare_of_evaluate: (1.0, 0.2, 0.7, 0.1), leastsquare_2d_of_evaluate: (1.0, 0.1, -0.2, 1.2),
          leastsquare_of_model: (1.0, 0.1, 0.9)}


# ------------------------------------------------------------------------------- astropy.stats

ANGLES = np.array([0.31, 1.12, 2.05, 2.71, 3.64, 4.42, 5.27])
SAMPLE = np.array([1.21, 0.35, 2.07, -0.48, 0.93, 1.64, 0.12, 1.38, 0.71])


def circmean(t):
    from astropy.stats import circmean
    return circmean(t)


def circvar_weighted(t):
    from astropy.stats import circvar
    return circvar(ANGLES, weights=np.exp(t))


def circstd(t):
    from astropy.stats import circstd
    return circstd(t)


def circmoment_2(t):
    from astropy.stats import circmoment
    return total(*circmoment(t, p=2.0))


def circcorrcoef(t):
    from astropy.stats import circcorrcoef
    return circcorrcoef(t, ANGLES[::-1] + 0.2 * np.sin(t))


def rayleightest(t):
    from astropy.stats import rayleightest
    return rayleightest(t)


def vtest(t):
    from astropy.stats import vtest
    return vtest(t, mu=1.3)


def biweight_location(t):
    from astropy.stats import biweight_location
    return biweight_location(t)


def biweight_scale(t):
    from astropy.stats import biweight_scale
    return biweight_scale(t)


def biweight_midvariance_modified(t):
    from astropy.stats import biweight_midvariance
    return biweight_midvariance(t, modify_sample_size=True)


def biweight_midcorrelation(t):
    from astropy.stats import biweight_midcorrelation
    return biweight_midcorrelation(t, SAMPLE + 0.3 * np.sin(3.0 * t))


def mad_std(t):
    from astropy.stats import mad_std
    return mad_std(t)


def signal_to_noise_oir_ccd(t):
    from astropy.stats import signal_to_noise_oir_ccd
    return signal_to_noise_oir_ccd(t[0], t[1], t[2], t[3], t[4], t[5], gain=t[6])


def akaike_info_criterion_lsq(t):
    from astropy.stats import akaike_info_criterion_lsq
    return akaike_info_criterion_lsq(np.sum(t ** 2), 3, t.size)


def bayesian_info_criterion(t):
    from astropy.stats import bayesian_info_criterion
    return bayesian_info_criterion(-np.sum(t ** 2), 4, 50)


STATS = {circmean: ANGLES, circvar_weighted: np.linspace(-0.5, 0.5, ANGLES.size), circstd: ANGLES,
         circmoment_2: ANGLES, circcorrcoef: ANGLES, rayleightest: ANGLES[:5], vtest: ANGLES[:5],
         biweight_location: SAMPLE, biweight_scale: SAMPLE, biweight_midvariance_modified: SAMPLE,
         biweight_midcorrelation: SAMPLE, mad_std: SAMPLE,
         signal_to_noise_oir_ccd: (60.0, 900.0, 40.0, 3.0, 25.0, 30.0, 1.4), akaike_info_criterion_lsq: SAMPLE,
         bayesian_info_criterion: SAMPLE}


def _function_spec(function, centre) -> CaseSpec:
    centre = np.asarray(centre, float)

    def build(attempt: int) -> Problem:
        # each point moved by a few percent: a median's order and a sum's pieces stay as they are
        spread = 0.03 * np.maximum(np.abs(centre), 0.3)
        return Problem(function, interior_point(centre - spread, centre + spread, spec.seed(attempt)), PREFIXES, None)

    spec = CaseSpec("astropy", function.__name__, build, all_modes=True)
    return spec


def astropy_cases() -> list[CaseSpec]:
    classes = _model_classes()
    specs = [_model_spec(cls, in_inputs) for cls in classes for in_inputs in (False, True)]
    specs += [_function_spec(function, centre) for function, centre in {**CALLED, **STATS}.items()]
    return sorted(specs, key=lambda spec: spec.name)
