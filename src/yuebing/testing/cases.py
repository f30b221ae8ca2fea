"""Running the rule files' test cases (``rules/cases.py`` declares them as data).

``run_case(case)`` checks a ``Case`` with ``check_rule`` and a ``ConventionCase`` (a documented
value at a non-smooth point) against its expected gradient in reverse mode and the forward rule's
agreement with it. The input makers (``randn`` ...) are re-exported for test corpora.
"""
from __future__ import annotations

import numpy as np

from .. import tangents as T
from ..rules.cases import Case, ConventionCase, Expect, randc, randn, randpos, randu
from ..rules.core import CoDual, Dual, frule, rrule
from ..tangents import NoRData, NoTangent
from .check_rule import check_rule
from .structural import compare


def run_case(case: Case) -> None:
    """Check one rule test case; raises ``AssertionError`` (or the rule's error) when it fails."""
    with case.context():
        if isinstance(case, ConventionCase):
            _check_convention(case)
        elif isinstance(case, Expect):
            _check_expected(case)
        else:
            check_rule(case.f, *case.args, kwargs=case.kwargs, mode=case.mode, **case.options)


def _check_convention(case: ConventionCase) -> None:
    args = T.structural_copy(case.args)
    coduals = [CoDual(a, T.fdata(T.zero_tangent(a))) for a in args]
    out, pullback = rrule(case.f, *coduals, **case.kwargs)
    if isinstance(out.fdata, np.ndarray):  # an array output: cotangent ones, in its fdata
        out.fdata += 1
        rdatas = pullback(NoRData)
    else:
        rdatas = pullback(1.0)
    gradient = tuple(T.join(c.fdata, T.rdata(T.zero_tangent(c.primal)) if r is NoRData else r)
                     for c, r in zip(coduals, rdatas[1:]))
    problem = compare(tuple(case.expected), gradient, rtol=1e-12, atol=1e-12)
    if problem:
        raise AssertionError(f"{case.name}: gradient {gradient!r} is not the convention's {case.expected!r}: {problem}")
    args = T.structural_copy(case.args)
    dx = T.randn_tangent(np.random.default_rng(0), args)
    dx = dx if isinstance(dx, tuple) else (NoTangent,) * len(args)
    dy = frule(case.f, *(Dual(a, t) for a, t in zip(args, dx)), **case.kwargs).tangent
    if abs(np.sum(dy) - T.dot(gradient, dx)) > 1e-12:
        raise AssertionError(f"{case.name}: forward tangent {dy!r} disagrees with the convention")


def _check_expected(case: Expect) -> None:
    x = T.structural_copy(case.args)
    fd = [T.fdata(T.zero_tangent(xi)) for xi in x]
    out, pullback = rrule(case.f, *(CoDual(xi, fi) for xi, fi in zip(x, fd)), **case.kwargs)
    ybar = np.ones(np.shape(out.primal)) if case.ybar is None else case.ybar
    if isinstance(out.fdata, np.ndarray):
        out.fdata[...] += ybar
        rdatas = pullback(NoRData)
    else:
        rdatas = pullback(float(ybar))
    got = T.join(fd[0], rdatas[1])
    np.testing.assert_allclose(got, case.expected, rtol=1e-12, atol=1e-12, err_msg=case.name)


__all__ = ["Case", "ConventionCase", "Expect", "randc", "randn", "randpos", "randu", "run_case"]
