"""Arguments that are not differentiated may be anything, in every entry point as in ``yb.grad``:
a str positional argument outside ``argnums``, keyword arguments of ``yb.hessian``, a str held fixed
(``NoTangent``) in ``yb.hvp``; and a signature read of a local method whose default is computed
from the function's variables is refused by name (it would show yuebing's placeholder string).
Derivatives are checked against central differences of the function or of its gradient."""
import inspect

import numpy as np
import pytest

import yuebing as yb

from .all_modes import check_all_modes
from .refusals import refused_in_every_mode

X = np.array([0.4, -1.1, 0.8])
V = np.array([0.3, 0.5, -0.7])


def scaled_cubes(x, kind, factor=1.0):
    """A scalar whose formula a str chooses; the str is never differentiated."""
    if kind == "cubes":
        return factor * np.sum(np.sin(x) * x ** 3)
    return factor * np.sum(np.cos(x) * x ** 2)


def _central_gradient(f, x, v, h=1e-5):
    return (yb.grad(f)(x + h * v) - yb.grad(f)(x - h * v)) / (2 * h)


def _central_value(f, x, v, h=1e-6):
    return (f(x + h * v) - f(x - h * v)) / (2 * h)


@pytest.mark.parametrize("kind", ["cubes", "squares"])
def test_hessian_takes_keyword_arguments_held_fixed_as_grad_does(kind):
    def f(x, kind="none", factor=1.0):
        return scaled_cubes(x, kind, factor)

    fixed = lambda x: f(x, kind=kind, factor=2.5)  # noqa: E731
    hessian = yb.hessian(f)(X, kind=kind, factor=2.5)
    np.testing.assert_allclose(hessian @ V, _central_gradient(fixed, X, V), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(yb.grad(f)(X, kind=kind, factor=2.5) @ V, _central_value(fixed, X, V), rtol=1e-6)


@pytest.mark.parametrize("entry", ["grad", "jacobian", "jacobian_fwd", "hessian"])
def test_a_str_outside_argnums_is_held_fixed_by_every_entry_point(entry):
    def f(kind, x, factor):
        return scaled_cubes(x, kind, factor)

    fixed = lambda x: f("cubes", x, 2.0)  # noqa: E731
    make = {"grad": yb.grad, "jacobian": yb.jacobian, "hessian": yb.hessian,
            "jacobian_fwd": lambda g, argnums: yb.jacobian(g, argnums, mode="fwd")}[entry]
    result = make(f, argnums=1)("cubes", X, 2.0)
    if entry == "hessian":
        np.testing.assert_allclose(result @ V, _central_gradient(fixed, X, V), rtol=1e-6, atol=1e-8)
    else:
        np.testing.assert_allclose(result @ V, _central_value(fixed, X, V), rtol=1e-6)


def test_hvp_holds_a_str_argument_fixed_given_no_tangent():
    def f(kind, x, factor):
        return scaled_cubes(x, kind, factor)

    value, (g_kind, g_x, g_factor), (h_kind, h_x, h_factor) = yb.hvp(f, ("cubes", X, 2.0), (yb.NoTangent, V, 0.5))
    fixed = lambda x: f("cubes", x, 2.0)  # noqa: E731
    assert value == pytest.approx(fixed(X))
    assert g_kind is yb.NoTangent and h_kind is yb.NoTangent
    np.testing.assert_allclose(g_x, yb.grad(fixed)(X), rtol=1e-12)
    assert g_factor == pytest.approx(fixed(X) / 2.0)
    # the Hessian along (V, 0.5): x's block from differences of the gradient, the cross term
    # d(df/dx)/dfactor = df/dx / factor
    expected_x = _central_gradient(fixed, X, V) + 0.5 * yb.grad(fixed)(X) / 2.0
    np.testing.assert_allclose(h_x, expected_x, rtol=1e-6, atol=1e-8)
    assert h_factor == pytest.approx(yb.grad(fixed)(X) @ V / 2.0, rel=1e-10)
    # forward mode agrees: the same str held fixed by its NoTangent tangent
    assert yb.jvp(f, ("cubes", X, 2.0), (yb.NoTangent, V, 0.0))[1] == pytest.approx(g_x @ V, rel=1e-10)


def test_hvp_refuses_a_direction_for_a_str_naming_what_to_do():
    with pytest.raises(TypeError, match=r"argument 0 is a str.*give yb.NoTangent as its direction"):
        yb.hvp(scaled_cubes, ("cubes", X), ("up", V))


# ---------------------------------------------------------------- signatures of local methods


def signature_of_a_computed_default(x):
    a = x * 3.0

    class M:
        def scale(self, y, k=a):
            return k * y
    k = inspect.signature(M.scale).parameters["k"].default
    return M().scale(x) * k


def signature_of_a_bound_methods_computed_keyword_default(x):
    a = x * 3.0

    class M:
        def scale(self, y, *, k=a):
            return k * y
    return inspect.signature(M().scale).parameters["k"].default * x


def argspec_of_a_nested_functions_computed_default(x):
    def scale(v, k=2.0 * x):
        return k * v
    return inspect.getfullargspec(scale).defaults[0] * x


@pytest.mark.parametrize("f", [signature_of_a_computed_default, signature_of_a_bound_methods_computed_keyword_default,
                               argspec_of_a_nested_functions_computed_default])
def test_a_signature_showing_computed_defaults_is_refused_by_name(f):
    """It would show the normaliser's placeholder string as the parameter's default."""
    refused_in_every_mode(f, TypeError, r"reading __defaults__ \(or __kwdefaults__\) through inspect\.")


def test_the_signature_refusal_points_at_the_users_line():
    with pytest.raises(TypeError, match=r"(?s)computed from the function's variables.*inspect.signature\(M.scale\)"):
        yb.grad(signature_of_a_computed_default)(0.7)


def signature_of_a_constant_default(x):
    class M:
        def scale(self, y, k=2.0):
            return k * y
    k = inspect.signature(M().scale).parameters["k"].default
    return M().scale(x * x) * k + inspect.getfullargspec(M.scale).defaults[0] * x


def test_a_signature_with_constant_defaults_works_in_every_mode():
    check_all_modes(signature_of_a_constant_default, 0.7)
