"""``scipy.integrate``'s ODE solvers and ``quad`` as yuebing differentiates them, written as ordinary
code so that the transforms differentiate it like user code (files under ``api/`` are machinery the
transforms refuse to follow); ``api/ode.py`` and ``api/quad.py`` register these definitions for
SciPy's functions and the rules of the primitives they call.

Each public definition takes SciPy's exact signature, makes its array_like arguments arrays with
``np.asarray`` (whose rule carries a list's cotangent back to its elements), and calls a
*primitive*: a plain function running SciPy, whose reverse and forward rules (the continuous
adjoint, the sensitivity equations, differentiation under the integral) live in ``api/``. The
right-hand sides are the functions those rules differentiate with ``yb.vjp``/``yb.jvp``: the
user's callable is an argument like any other, so the state it captures (a closure's cells, a
bound method's object) has a derivative, as in ``_implicit_residuals.py``.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

try:
    import scipy.integrate as _integrate
except ImportError:  # the scipy extra is not installed
    _integrate = None


def as_args(args: Any) -> tuple:
    """SciPy's ``args=``: None is none, a single value is a one-tuple."""
    if args is None:
        return ()
    return args if isinstance(args, tuple) else (args,)


# --------------------------------------------------------------------------------------------
# Right-hand sides and integrands (differentiated by the api rules)
# --------------------------------------------------------------------------------------------


def ivp_rhs(t: Any, y: Any, fun: Callable, args: tuple) -> Any:
    """``solve_ivp``'s ``F(t, y, θ) = fun(t, y, *args)``, as a flat array."""
    return np.reshape(np.asarray(fun(t, y, *args)), -1)


def odeint_rhs(t: Any, y: Any, fun: Callable, args: tuple) -> Any:
    """``odeint``'s ``F(t, y, θ) = func(y, t, *args)`` (``tfirst=False``)."""
    return np.reshape(np.asarray(fun(y, t, *args)), -1)


def quad_integrand(t: Any, fun: Callable, args: tuple) -> Any:
    """``quad``'s integrand ``func(t, *args)``."""
    return fun(t, *args)


# --------------------------------------------------------------------------------------------
# The primitives (plain calls of SciPy; their rules are in api/)
# --------------------------------------------------------------------------------------------


def solve_ivp_call(fun: Callable, t_span: Any, y0: Any, t_eval: Any, args: tuple, settings: dict) -> Any:
    """``scipy.integrate.solve_ivp`` with array arguments and the other settings in a dict."""
    return _integrate.solve_ivp(fun, t_span, y0, t_eval=t_eval, args=args or None, **settings)


def odeint_call(func: Callable, y0: Any, t: Any, args: tuple, settings: dict) -> Any:
    """``scipy.integrate.odeint`` with array arguments and the other settings in a dict."""
    return _integrate.odeint(func, y0, t, args=args, **settings)


def quad_call(func: Callable, a: Any, b: Any, args: tuple, settings: dict) -> Any:
    """``scipy.integrate.quad`` with the settings in a dict."""
    return _integrate.quad(func, a, b, args=args, **settings)


def quad_vec_call(f: Callable, a: Any, b: Any, args: tuple, settings: dict) -> Any:
    """``scipy.integrate.quad_vec`` with the settings in a dict."""
    return _integrate.quad_vec(f, a, b, args=args, **settings)


def _sample_point(a: Any, b: Any) -> float:
    """A finite point of ``[a, b]``, where the integrand shows its shape."""
    for t in (a, b):
        if np.isfinite(t):
            return float(t)
    return 0.0


def quad_vec_by_components(f: Callable, a: Any, b: Any, args: tuple, settings: dict) -> Any:
    """``quad_vec_call`` as one ``quad`` per component of the integrand (same value to the
    tolerance; the error estimate is the largest component's): its second order is quad's."""
    shape = np.shape(f(_sample_point(a, b), *args))
    tolerances = {k: settings[k] for k in ("epsabs", "epsrel", "points") if settings.get(k) is not None}
    parts = [_integrate.quad(lambda t, i=i: np.ravel(f(t, *args))[i], a, b, **tolerances)
             for i in range(int(np.prod(shape)))]
    value = np.reshape(np.array([p[0] for p in parts]), shape)
    return (value if shape else float(value)), max((p[1] for p in parts), default=0.0)


# --------------------------------------------------------------------------------------------
# The definitions registered for SciPy's functions (defined_as)
# --------------------------------------------------------------------------------------------


def solve_ivp(fun: Callable, t_span: Any, y0: Any, method: Any = "RK45", t_eval: Any = None, dense_output: bool = False,
              events: Any = None, vectorized: bool = False, args: Any = None, **options: Any) -> Any:
    """``scipy.integrate.solve_ivp``, its array_like arguments made arrays."""
    settings = dict(options)
    settings["method"] = method
    settings["dense_output"] = dense_output
    settings["events"] = events
    settings["vectorized"] = vectorized
    times = None if t_eval is None else np.asarray(t_eval, dtype=float)
    return solve_ivp_call(fun, np.asarray(t_span, dtype=float), np.asarray(y0), times, as_args(args), settings)


def odeint(func: Callable, y0: Any, t: Any, args: Any = (), Dfun: Any = None, col_deriv: int = 0, full_output: int = 0,
           ml: Any = None, mu: Any = None, rtol: Any = None, atol: Any = None, tcrit: Any = None, h0: Any = 0.0,
           hmax: Any = 0.0, hmin: Any = 0.0, ixpr: int = 0, mxstep: int = 0, mxhnil: int = 0, mxordn: int = 12,
           mxords: int = 5, printmessg: int = 0, tfirst: bool = False) -> Any:
    """``scipy.integrate.odeint``, its array_like arguments made arrays."""
    settings = {"Dfun": Dfun, "col_deriv": col_deriv, "full_output": full_output, "ml": ml, "mu": mu, "rtol": rtol,
                "atol": atol, "tcrit": tcrit, "h0": h0, "hmax": hmax, "hmin": hmin, "ixpr": ixpr, "mxstep": mxstep,
                "mxhnil": mxhnil, "mxordn": mxordn, "mxords": mxords, "printmessg": printmessg, "tfirst": tfirst}
    return odeint_call(func, np.asarray(y0), np.asarray(t, dtype=float), as_args(args), settings)


def quad(func: Callable, a: Any, b: Any, args: Any = (), full_output: int = 0, epsabs: Any = 1.49e-08,
         epsrel: Any = 1.49e-08, limit: int = 50, points: Any = None, weight: Any = None, wvar: Any = None,
         wopts: Any = None, maxp1: int = 50, limlst: int = 50, complex_func: bool = False) -> Any:
    """``scipy.integrate.quad``."""
    settings = {"full_output": full_output, "epsabs": epsabs, "epsrel": epsrel, "limit": limit, "points": points,
                "weight": weight, "wvar": wvar, "wopts": wopts, "maxp1": maxp1, "limlst": limlst,
                "complex_func": complex_func}
    return quad_call(func, a, b, as_args(args), settings)


def quad_vec(f: Callable, a: Any, b: Any, epsabs: Any = 1e-200, epsrel: Any = 1e-08, norm: str = "2",
             cache_size: Any = 100e6, limit: int = 10000, workers: Any = 1, points: Any = None, quadrature: Any = None,
             full_output: bool = False, *, args: Any = ()) -> Any:
    """``scipy.integrate.quad_vec``."""
    settings = {"epsabs": epsabs, "epsrel": epsrel, "norm": norm, "cache_size": cache_size, "limit": limit,
                "workers": workers, "points": points, "quadrature": quadrature, "full_output": full_output}
    return quad_vec_call(f, a, b, as_args(args), settings)
