"""cma cases: the test functions of ``cma.ff`` (pycma's ``FitnessFunctions``), each a scalar
function of one float vector written by pycma's authors (nothing copied; enumerated from the
installed package).

Most are defined everywhere and are taken in [-1.5, 2]^5; a few return NaN outside the orthant
x > 1 (the ``corner`` and constrained variants) and are taken in [1, 3]^5. Some draw from NumPy's
global generator (``partsphere``, ``subspace_sphere``, the noisy ones): the harness reseeds it
before every call (``classify.usable_problem``).

pycma also ships hand-written gradients of a few of them (``cma.ff.grad_rosen`` ...): a third
oracle, compared in tests/test_external_corpus.py.
"""
from __future__ import annotations

from .cases import CaseSpec, Problem, interior_point

DIMENSION = 5
BOX = (-1.5, 2.0)
# NaN (pycma's "infeasible") unless every coordinate (elliwithoneconstraint: the last) exceeds 1
ABOVE_ONE = {"cornerelli", "cornerellirot", "cornersphere", "elliwithoneconstraint", "lineard",
             "spherewithnconstraints"}
ABOVE_ONE_BOX = (1.0, 3.0)
# not functions of a float vector to a number: bit strings, vector results, a function of a
# function, a random number, constrained variants returning a tuple
_NOT_SCALAR_FUNCTIONS = {"binval", "leadingones", "onemax", "rot", "fun_as_arg", "rand", "optprob",
                         "elliconstraint", "epslow", "powel_singular", "somenan"}
# the functions pycma gives a hand-written gradient of (cma.ff.grad_<name>)
GRADIENT_TWINS = ("cigar", "elli", "rosen", "sphere", "tablet")


def _cma_spec(name: str) -> CaseSpec:
    lower, upper = ABOVE_ONE_BOX if name in ABOVE_ONE else BOX

    def build(attempt: int) -> Problem:
        import cma
        function = getattr(cma.ff, name)
        point = interior_point([lower] * DIMENSION, [upper] * DIMENSION, spec.seed(attempt))
        return Problem(function, point, ("cma.",), None)

    spec = CaseSpec("cma", name, build)
    return spec


def cma_cases() -> list[CaseSpec]:
    import cma
    names = [name for name in dir(cma.ff)
             if not name.startswith(("_", "grad_")) and callable(getattr(cma.ff, name))
             and name not in _NOT_SCALAR_FUNCTIONS]
    return [_cma_spec(name) for name in sorted(names)]
