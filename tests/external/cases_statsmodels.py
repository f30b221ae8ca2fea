"""statsmodels cases: the log-likelihoods of its regression and count models as functions of their
parameters (``model.loglike(params)``, statsmodels' own code on fixed, generated data).

Models: discrete (``Logit``, ``Probit``, ``Poisson`` with an offset, ``MNLogit``,
``NegativeBinomial`` in its ``nb2``, ``nb1`` and ``geometric`` forms, ``NegativeBinomialP``,
``GeneralizedPoisson``), zero-inflated (``ZeroInflatedPoisson``, ``ZeroInflatedNegativeBinomialP``),
linear (``OLS``'s concentrated likelihood, ``WLS``, ``GLS``), ``GLM`` with each family, and
``OrderedModel`` (logit and probit). Each model is built once per point, outside the differentiated
function (building reads the data through pandas and patsy); only ``loglike`` is differentiated.
The discrete models' own ``score`` and ``hessian`` are a third oracle where they are the derivatives
of ``loglike`` itself (``test_against_statsmodels_own_score``; the linear models' and GLM's hold the
scale fixed where ``loglike`` estimates it from the parameters). Every case is checked in every mode.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .cases import CaseSpec, Problem, interior_point

ROWS = 40


def _data() -> dict:
    rng = np.random.default_rng(20261205)
    x = np.column_stack([np.ones(ROWS), rng.standard_normal((ROWS, 2))])
    counts = rng.poisson(np.exp(0.3 + 0.4 * x[:, 1]))
    counts[:6] = 0   # zeros for the zero-inflated models
    return {"x": x, "binary": (rng.uniform(size=ROWS) < 1.0 / (1.0 + np.exp(-x[:, 1]))).astype(float),
            "counts": counts.astype(float), "real": x @ np.array([0.5, 1.0, -0.3]) + 0.4 * rng.standard_normal(ROWS),
            "positive": np.exp(0.2 + 0.3 * x[:, 1] + 0.3 * rng.standard_normal(ROWS)),
            "classes": rng.integers(0, 3, size=ROWS), "offset": 0.1 * rng.standard_normal(ROWS)}


def _discrete(name: str, **options) -> Callable:
    def make(d):
        from statsmodels.discrete import count_model, discrete_model
        cls = getattr(discrete_model, name, None) or getattr(count_model, name)
        y = d["binary"] if name in ("Logit", "Probit") else d["classes"] if name == "MNLogit" else d["counts"]
        return cls(y, d["x"], **options)
    return make


def _linear(name: str) -> Callable:
    def make(d):
        import statsmodels.api as sm
        if name == "WLS":
            return sm.WLS(d["real"], d["x"], weights=np.linspace(1.0, 2.0, ROWS))
        if name == "GLS":
            lags = np.abs(np.subtract.outer(np.arange(ROWS), np.arange(ROWS)))
            return sm.GLS(d["real"], d["x"], sigma=0.5 ** lags)
        return sm.OLS(d["real"], d["x"])
    return make


def _glm(family: str) -> Callable:
    def make(d):
        import statsmodels.api as sm
        families = {"Gaussian": (sm.families.Gaussian(), d["real"]), "Poisson": (sm.families.Poisson(), d["counts"]),
                    "Binomial": (sm.families.Binomial(), d["binary"]),
                    "Gamma": (sm.families.Gamma(sm.families.links.Log()), d["positive"]),
                    "InverseGaussian": (sm.families.InverseGaussian(sm.families.links.Log()), d["positive"]),
                    "NegativeBinomial": (sm.families.NegativeBinomial(alpha=0.7), d["counts"]),
                    "Tweedie": (sm.families.Tweedie(var_power=1.5), d["counts"])}
        family_object, y = families[family]
        return sm.GLM(y, d["x"], family=family_object)
    return make


def _ordered(distribution: str) -> Callable:
    def make(d):
        from statsmodels.miscmodels.ordinal_model import OrderedModel
        return OrderedModel(d["classes"], d["x"][:, 1:], distr=distribution)
    return make


_BETA = (0.1, 0.2, -0.1)
# name -> (how to build the model, the centre of the parameters' box)
MODELS: dict[str, tuple[Callable, tuple[float, ...]]] = {
    "Logit": (_discrete("Logit"), _BETA), "Probit": (_discrete("Probit"), _BETA),
    "Poisson_offset": (_discrete("Poisson", offset=_data()["offset"]), _BETA),
    "MNLogit": (_discrete("MNLogit"), _BETA + (0.05, -0.2, 0.15)),
    "NegativeBinomial_nb2": (_discrete("NegativeBinomial"), _BETA + (0.5,)),
    "NegativeBinomial_nb1": (_discrete("NegativeBinomial", loglike_method="nb1"), _BETA + (0.5,)),
    "NegativeBinomial_geometric": (_discrete("NegativeBinomial", loglike_method="geometric"), _BETA),
    "NegativeBinomialP": (_discrete("NegativeBinomialP", p=1.5), _BETA + (0.5,)),
    "GeneralizedPoisson": (_discrete("GeneralizedPoisson"), _BETA + (0.1,)),
    "ZeroInflatedPoisson": (_discrete("ZeroInflatedPoisson"), (-0.5,) + _BETA),
    "ZeroInflatedNegativeBinomialP": (_discrete("ZeroInflatedNegativeBinomialP"), (-0.5,) + _BETA + (0.5,)),
    "OLS": (_linear("OLS"), _BETA), "WLS": (_linear("WLS"), _BETA), "GLS": (_linear("GLS"), _BETA),
    **{f"GLM_{family}": (_glm(family), _BETA) for family in
       ("Gaussian", "Poisson", "Binomial", "Gamma", "InverseGaussian", "NegativeBinomial", "Tweedie")},
    "OrderedModel_logit": (_ordered("logit"), (0.3, -0.2, -0.4, 0.2)),
    "OrderedModel_probit": (_ordered("probit"), (0.3, -0.2, -0.4, 0.2)),
}
# statsmodels' score and hessian are loglike's own derivatives for these (scale-free likelihoods;
# NegativeBinomial's hessian differs from loglike's in alpha's row, which differences of yb.grad
# and of loglike both confirm; MNLogit's second order is refused: pandas objects on the model)
OWN_DERIVATIVES = ("Logit", "Probit", "Poisson_offset", "GeneralizedPoisson")


def model_and_point(name: str, seed: int):
    make, centre = MODELS[name]
    centre = np.array(centre)
    model = make(_data())
    return model, interior_point(centre - 0.1, centre + 0.1, seed)


def _loglike(model) -> Callable:
    def loglike(params):
        return model.loglike(params)
    return loglike


def _spec(name: str) -> CaseSpec:
    def build(attempt: int) -> Problem:
        model, point = model_and_point(name, spec.seed(attempt))
        return Problem(_loglike(model), point, None, None)

    spec = CaseSpec("statsmodels", name, build, all_modes=True)
    return spec


def statsmodels_cases() -> list[CaseSpec]:
    return [_spec(name) for name in sorted(MODELS)]
