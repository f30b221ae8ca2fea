"""Implicit differentiation (``api/implicit.py``): ``yb.custom_root`` and ``scipy.optimize``'s root
finders and minimisers inside differentiated code, in reverse and forward mode, against central
differences of the whole solve (solved to tight tolerances), with parameters passed by ``args=``
and captured by closures; refusals of what has no implicit derivative."""
import numpy as np
import pytest
import scipy.optimize as so

import yuebing as yb


def central(f, a, h=1e-5):
    """Central differences of ``f`` at float or array ``a``: an array ``f.shape + a.shape``."""
    a = np.asarray(a, dtype=float)
    columns = []
    for i in range(a.size):
        e = np.zeros(a.size)
        e[i] = h
        e = e.reshape(a.shape)
        columns.append((np.asarray(f(a + e if a.ndim else float(a + e))) - np.asarray(f(a - e if a.ndim else float(a - e))))
                       / (2 * h))
    return np.stack(columns, axis=-1).reshape(np.shape(f(a if a.ndim else float(a))) + a.shape)


def check(f, a, rtol=1e-7, atol=1e-9, h=1e-5):
    """Reverse (grad or jacobian) and forward (jvp, jacobian) mode against central differences."""
    expected = central(f, a, h)
    a = a if np.ndim(a) else float(a)
    value = f(a)
    if np.ndim(value) == 0 and np.ndim(a) == 0:
        np.testing.assert_allclose(yb.grad(f)(a), expected, rtol=rtol, atol=atol)
        np.testing.assert_allclose(yb.jvp(f, (a,), (1.0,))[1], expected, rtol=rtol, atol=atol)
        return
    np.testing.assert_allclose(yb.jacobian(f)(a), expected, rtol=rtol, atol=atol)
    np.testing.assert_allclose(yb.jacobian(f, mode="fwd")(a), expected, rtol=rtol, atol=atol)


# --------------------------------------------------------------------------------- root finders

def root_closure(a):
    return so.root(lambda x: x ** 3 - a, np.array([1.0]), tol=1e-13).x[0]


def root_args(a):
    return so.root(lambda x, b: x ** 3 - b, np.array([1.0]), args=(a,), tol=1e-13).x[0]


def root_vector(p):
    """Three equations in three unknowns, parameters in a closure and in args."""
    def fun(x, scale):
        return np.array([x[0] + 0.5 * np.sin(x[1]) - p[0], x[1] * x[0] - scale * p[1], x[2] ** 3 + x[0] - p[2]])
    res = so.root(fun, np.ones(3), args=(2.0 * p[0],), tol=1e-13)
    return res.x * np.array([1.0, 2.0, 3.0])


def root_jac_true(a):
    return so.root(lambda x: (x ** 3 - a, np.diag(3 * x ** 2)), np.array([1.0]), jac=True, tol=1e-13).x[0]


def fsolve_list(a):
    return so.fsolve(lambda x: [x[0] ** 3 - a, x[1] - x[0] * a], np.array([1.0, 1.0]), xtol=1e-13)


def fsolve_full(a):
    x, info, ier, message = so.fsolve(lambda x, b: x ** 2 - b, np.array([1.0, 2.0]), args=(a,), full_output=True,
                                      xtol=1e-13)
    return np.sum(x) + np.sum(info["fvec"])


def root_scalar_bracket(a):
    return so.root_scalar(lambda x: x ** 3 - a, bracket=(0.0, 3.0), xtol=1e-14).root


def root_scalar_newton(a):
    return so.root_scalar(lambda x, b: (x ** 3 - b, 3 * x ** 2), args=(a,), x0=1.0, fprime=True, xtol=1e-14).root


@pytest.mark.parametrize("solver", ["brentq", "brenth", "ridder", "bisect", "toms748"])
def test_bracketing(solver):
    def closure(a):
        return getattr(so, solver)(lambda x: np.cos(x) - a * x, 0.0, 2.0, xtol=1e-14)

    def by_args(a):
        return getattr(so, solver)(lambda x, b: np.cos(x) - b * x, 0.0, 2.0, args=(a,), xtol=1e-14)

    check(closure, 0.7)
    check(by_args, 0.7)


def test_brentq_full_output():
    def f(a):
        x, r = so.brentq(lambda x: x ** 3 - a, 0.0, 3.0, full_output=True, xtol=1e-14)
        return x + 2.0 * r.root

    check(f, 2.0)


def test_newton_scalar_and_array():
    check(lambda a: so.newton(lambda x: x ** 3 - a, 1.0, tol=1e-14), 2.0)
    check(lambda a: so.newton(lambda x, b: x ** 3 - b, 1.0, fprime=lambda x, b: 3 * x ** 2, args=(a,), tol=1e-14), 2.0)
    check(lambda p: so.newton(lambda x: x ** 3 - p, np.ones(3), tol=1e-14), np.array([2.0, 3.0, 0.5]))


@pytest.mark.parametrize("f", [root_closure, root_args, root_jac_true, root_scalar_bracket, root_scalar_newton,
                               fsolve_full])
def test_root_scalar_problems(f):
    check(f, 2.0)


VARIANTS = {
    "root(method='lm')": lambda a: so.root(lambda x: x ** 3 - a, np.array([1.0]), method="lm", tol=1e-14).x[0],
    "fsolve(fprime=)": lambda a: so.fsolve(lambda x, b: x ** 3 - b, np.array([1.0]), args=(a,),
                                           fprime=lambda x, b: np.diag(3 * x ** 2), xtol=1e-13)[0],
    "root_scalar(secant)": lambda a: so.root_scalar(lambda x: x ** 3 - a, x0=1.0, x1=1.5, method="secant",
                                                     xtol=1e-14).root,
    "least_squares(inactive bounds)": lambda a: so.least_squares(lambda x: np.array([x[0] - a, x[0] * 2 - 1.0]),
                                                                 np.ones(1), bounds=(-10, 10), xtol=1e-15, ftol=1e-15,
                                                                 gtol=1e-15).x[0],
    # args= a single value (SciPy makes it a tuple); a nested lambda as jac (forward mode gives it
    # a tangent of empty cells)
    "minimize(args=a, jac=lambda)": lambda a: so.minimize(lambda x, b: np.sum((x - b) ** 2) + np.sum(x ** 4), np.zeros(1),
                                                          args=a, jac=lambda x, b: 2 * (x - b) + 4 * x ** 3,
                                                          method="BFGS", options={"gtol": 1e-13}).x[0],
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_solver_variants(name):
    check(VARIANTS[name], 2.0, rtol=1e-6, atol=1e-8, h=1e-4)


def test_root_vector_and_fsolve():
    check(root_vector, np.array([1.2, 0.8, 2.0]))
    check(fsolve_list, 2.0)


def test_captured_array_mutated_after_the_solve():
    """The pullback sees the parameters as they were at the solve (the reverse pass restores
    them first), not as the code left them."""
    def f(w):
        v = w.copy()
        x = so.root(lambda x: x ** 3 - v, np.ones(2), tol=1e-13).x
        v[0] = 5.0
        x[1] = x[1] * 2.0
        return np.sum(x * v)

    check(f, np.array([2.0, 3.0]))


def test_forward_reverse_dot_product():
    p = np.array([1.2, 0.8, 2.0])
    u, v = np.array([0.3, -1.0, 0.5]), np.array([1.0, 0.2, -0.7])
    _, pullback = yb.vjp(root_vector, p)
    _, tangent = yb.jvp(root_vector, (p,), (v,))
    np.testing.assert_allclose(np.dot(pullback(u)[0], v), np.dot(u, tangent), rtol=1e-12)


# ----------------------------------------------------------------------------------- minimisers

def quartic(x, b):
    return np.sum((x - b) ** 2 * np.array([1.0, 2.0])) + np.sum(x ** 4)


def minimize_value_and_grad(b):
    res = so.minimize(lambda x, c: yb.value_and_grad(quartic)(x, c), np.zeros(2), args=(b,), jac=True,
                      method="BFGS", options={"gtol": 1e-12})
    return np.array([res.x[0], res.x[1], res.fun])


def minimize_jac_callable(b):
    res = so.minimize(lambda x: quartic(x, b), np.zeros(2), jac=lambda x: 2 * (x - b) * np.array([1.0, 2.0]) + 4 * x ** 3,
                      method="BFGS", options={"gtol": 1e-12})
    return np.array([res.x[0], res.x[1], res.fun])


def minimize_no_jac(b):
    res = so.minimize(lambda x: quartic(x, b), np.zeros(2), method="BFGS", options={"gtol": 1e-10})
    return np.array([res.x[0], res.x[1], res.fun])


def test_minimize():
    b = np.array([1.5, -0.5])
    check(minimize_value_and_grad, b)
    check(minimize_jac_callable, b)
    # SciPy's own finite-difference gradient leaves x* right to ~1e-8 only: wider steps
    check(minimize_no_jac, b, rtol=1e-4, atol=1e-5, h=1e-3)


def test_minimize_methods():
    """Every method's solution has the same implicit derivative: against central differences of
    SLSQP, which solves this problem to ~1e-14."""
    def solved_by(method, options):
        def f(b):
            res = so.minimize(lambda x, c: yb.value_and_grad(quartic)(x, c), np.zeros(2), args=(b,), jac=True,
                              method=method, options=options)
            return np.array([res.x[0], res.x[1], res.fun])
        return f

    b = np.array([1.5, -0.5])
    expected = central(solved_by("SLSQP", {"ftol": 1e-14}), b)
    for method, options in [("L-BFGS-B", {"gtol": 1e-13, "ftol": 1e-15}), ("Newton-CG", {"xtol": 1e-13}),
                            ("trust-constr", {"gtol": 1e-12, "xtol": 1e-14})]:
        f = solved_by(method, options)
        np.testing.assert_allclose(yb.jacobian(f)(b), expected, rtol=1e-7, atol=1e-8, err_msg=method)
        np.testing.assert_allclose(yb.jacobian(f, mode="fwd")(b), expected, rtol=1e-7, atol=1e-8, err_msg=method)


def test_minimize_scalar():
    def f(a):
        res = so.minimize_scalar(lambda x: (x - a) ** 2 + x ** 4)
        return res.x + res.fun

    a = 2.0
    x = so.minimize_scalar(lambda x: (x - a) ** 2 + x ** 4, options={"xtol": 1e-14}).x
    x = so.newton(lambda x: 2 * (x - a) + 4 * x ** 3, x, tol=1e-15)  # x* to full precision
    dx = 2.0 / (2.0 + 12.0 * x ** 2)  # implicit function theorem by hand: F = 2(x - a) + 4x^3
    expected = dx + (-2.0 * (x - a))  # res.fun by the envelope theorem
    np.testing.assert_allclose(yb.grad(f)(a), expected, rtol=1e-6)
    np.testing.assert_allclose(yb.jvp(f, (a,), (1.0,))[1], expected, rtol=1e-6)


def ls_residual(x, c, scale=1.0):
    return np.array([x[0] - c[0], x[1] * x[0] - scale, x[1] - 2.0 * c[1]])


def test_least_squares():
    def f(p):
        res = so.least_squares(ls_residual, np.ones(2), args=(p,), kwargs={"scale": p[0] * p[1]}, method="lm",
                               xtol=1e-15, ftol=1e-15, gtol=1e-15)
        return np.array([res.x[0], res.x[1], res.cost, res.fun[0], res.fun[1], res.fun[2]])

    def polished(p):
        """The same solution to full precision (least_squares stops ~1e-9 away from it): Newton
        on the normal equations J^T r = 0, written out."""
        x = so.least_squares(ls_residual, np.ones(2), args=(p,), kwargs={"scale": p[0] * p[1]}, method="lm").x

        def normal(x):
            r = ls_residual(x, p, p[0] * p[1])
            return np.array([r[0] + x[1] * r[1], x[0] * r[1] + r[2]])

        x = so.fsolve(normal, x, xtol=1e-15)
        r = ls_residual(x, p, p[0] * p[1])
        return np.array([x[0], x[1], 0.5 * np.dot(r, r), *r])

    p = np.array([2.0, 1.5])
    expected = central(polished, p)
    np.testing.assert_allclose(yb.jacobian(f)(p), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(yb.jacobian(f, mode="fwd")(p), expected, rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------------------------- custom_root

def newton_solver(f, x0):
    x = x0
    for _ in range(60):
        x = x - f(x) / (2.0 * x)
    return x


def test_custom_root():
    def sqrt_of(a):
        return yb.custom_root(lambda x: x * x - a, 1.0, newton_solver)

    assert sqrt_of(2.0) == newton_solver(lambda x: x * x - 2.0, 1.0)
    check(sqrt_of, 2.0)
    np.testing.assert_allclose(yb.grad(sqrt_of)(2.0), 0.5 / np.sqrt(2.0), rtol=1e-12)


def test_custom_root_vector_tangent_solve():
    calls = []

    def tangent_solve(g, y):
        calls.append(1)
        matrix = np.stack([g(e) for e in np.eye(y.size)], axis=1)
        return np.linalg.solve(matrix, y)

    def f(p):
        def residual(x):
            return np.array([x[0] ** 3 - p[0], x[1] - p[1] * x[0]])
        return yb.custom_root(residual, np.ones(2), lambda g, x0: so.fsolve(g, x0, xtol=1e-13), tangent_solve)

    check(f, np.array([2.0, 0.5]))
    assert calls  # the user's linear solver was used


def test_fixed_point_loop_unrolls():
    def babylonian(a):
        x = 1.0
        for _ in range(60):
            x = 0.5 * (x + a / x)
        return x

    check(babylonian, 2.0)


# -------------------------------------------------------------------------------------- bilevel

def test_bilevel():
    """Outer loss of the inner solution x*(w) of F(x, w) = x + w * tanh(x) - t = 0."""
    t = np.array([0.5, -1.0, 2.0])

    def outer(w):
        inner = so.root(lambda x: x + w * np.tanh(x) - t, np.zeros(3), tol=1e-13)
        return np.sum((inner.x - 0.3) ** 2) + 0.1 * np.sum(w ** 2)

    check(outer, np.array([0.5, 1.0, 2.0]))


# ------------------------------------------------------------------------- results and refusals

def test_result_fields():
    r = so.OptimizeResult(x=np.array([2.0, 1.0]), fun=3.0, nit=3)
    (g,) = yb.vjp(lambda r: r.x[0] * r.fun, r)[1](1.0)
    np.testing.assert_allclose(g["x"], [3.0, 0.0])
    assert g["fun"] == 2.0
    t = yb.tangents.zero_tangent(r)
    t["x"][:] = [1.0, 0.0]
    t["fun"] = 0.5
    assert yb.jvp(lambda r: r.x[0] * r.fun, (r,), (t,))[1] == 4.0


def uses_hess_inv(b):
    res = so.minimize(lambda x: quartic(x, b), np.zeros(2), method="BFGS")
    return np.sum(res.hess_inv)


def test_undifferentiated_field_refused_or_nan():
    b = np.array([1.5, -0.5])
    with pytest.raises(ValueError, match="hess_inv"):
        yb.grad(uses_hess_inv)(b)
    assert np.isnan(yb.jvp(uses_hess_inv, (b,), (np.ones(2),))[1])


def test_refusals():
    with pytest.raises(ValueError, match="constraints"):
        yb.grad(lambda b: so.minimize(lambda x: np.sum((x - b) ** 2), np.zeros(2),
                                      constraints=[{"type": "ineq", "fun": lambda x: x[0]}]).fun)(np.ones(2))
    with pytest.raises(ValueError, match="bound is active"):
        yb.grad(lambda b: so.minimize(lambda x: np.sum((x - b) ** 2), np.zeros(2), method="L-BFGS-B",
                                      bounds=[(0.0, 0.5), (0.0, 0.5)]).x[0])(np.ones(2))
    with pytest.raises(ValueError, match="did not converge"):
        yb.grad(lambda a: so.root(lambda x: x ** 2 + a, np.array([1.0])).x[0])(1.0)
    with pytest.raises(ValueError, match="singular"):
        yb.grad(lambda a: yb.custom_root(lambda x: (x - a) ** 2, 1.0, lambda f, x0: a))(1.0)
    with pytest.raises(TypeError, match="callables"):
        yb.custom_root(1.0, 1.0, newton_solver)
