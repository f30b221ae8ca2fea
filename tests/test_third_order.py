"""Third derivatives: Hessians (and Hessian-vector products) of functions that call ``yb.grad``.

Every Hessian is checked against central differences of the gradient (``yb.grad`` of the outer
function is reverse over reverse, which needs only second derivatives) and for symmetry.
"""
import math

import numpy as np
import pytest
import scipy.linalg
import scipy.special

import yuebing as yb
from yuebing.rules.core import RuleArgumentError
from yuebing.tangents import NoTangent
from yuebing.transform.plain_forward import plain_forward

from yuebing.testing.second_order import NotTwiceDifferentiable
from yuebing.testing.third_order import NotThirdOrderCheckable, check_third_order

from tests.test_second_order import CORPUS, NEGATIVE_BASE_POWERS, NOT_TWICE_DIFFERENTIABLE, RULE_CASES, _fd_hessian

A = np.array([[2.0, 0.5, -0.3], [0.1, 1.5, 0.4], [-0.2, 0.3, 1.0]])


def check_hessian(f, x, rtol=1e-6, atol=1e-6):
    hessian = yb.hessian(f)(x)
    np.testing.assert_allclose(hessian, _fd_hessian(f, x), rtol=rtol, atol=atol)
    np.testing.assert_allclose(hessian, np.swapaxes(hessian, 0, -1) if np.ndim(x) else hessian, rtol=1e-8, atol=1e-8)
    return hessian


# -------------------------------------------------------------------- inner functions (g)

def smooth(x):
    y = np.sin(x) * x
    return np.sum(y * y) + x[0] * x[1]


def helper(x, scale=2.0):
    return scale * np.sum(np.exp(-x) * x ** 3)


def calls_helpers(x):
    return helper(x) + helper(x, scale=0.5) + np.sum(np.tanh(x)) / 3.0


def quadratic_form(x):
    return x @ A @ x + np.dot(x, x) ** 2 + np.sum(np.outer(x, x) * A)


def in_place_loop(x):
    z = np.zeros(3)
    z[0] = 1
    for i in range(1, 3):
        z[i] = z[i - 1] * x[i] + x[i - 1] ** 2
    z *= x
    z += np.sqrt(x)
    z /= 1.0 + x
    return np.sum(z ** 3)


def methods_and_shapes(x):
    m = np.stack([x, x ** 2]).T
    return m.sum() * m.reshape(-1).mean() + np.log(1.0 + x.T @ x) + np.sum(np.where(x > 0.65, x ** 3, np.cos(x)))


def data_dependent_while(x):
    total = 0.0
    k = 0
    while total < 2.0 and k < 10:
        total = total + np.sum(x ** 2) * (k + 1)
        k += 1
    return total * np.sum(np.exp(x))


def scalar_math(t):
    return math.sin(t) * math.exp(0.5 * t) + t ** 4 / (1.0 + t * t)


INNER = [smooth, calls_helpers, quadratic_form, in_place_loop, methods_and_shapes, data_dependent_while]


@pytest.mark.parametrize("g", INNER, ids=lambda g: g.__name__)
def test_plain_forward_program_is_forward_mode(g):
    x = np.array([0.3, 0.5, 0.7])
    v = np.array([1.0, -2.0, 0.5])
    value, tangent = plain_forward(g)(g, NoTangent, x, v)
    expected = yb.jvp(g, (x,), (v,))
    np.testing.assert_allclose(value, expected[0], rtol=1e-12)
    np.testing.assert_allclose(tangent, expected[1], rtol=1e-12)


@pytest.mark.parametrize("g", INNER, ids=lambda g: g.__name__)
def test_hessian_of_squared_gradient_norm(g):
    def f(x):
        return np.sum(yb.grad(g)(x) ** 2)

    check_hessian(f, np.array([0.3, 0.5, 0.7]))


@pytest.mark.parametrize("g", INNER, ids=lambda g: g.__name__)
def test_hessian_of_gradient_penalty_and_inner_step(g):
    def penalised(x):
        return g(x) + 0.5 * np.sum(yb.grad(g)(x) ** 2)

    def after_one_step(x):  # MAML-style: the loss after a gradient step
        return g(x - 0.1 * yb.grad(g)(x))

    x = np.array([0.4, 0.8, 0.6])
    check_hessian(penalised, x)
    check_hessian(after_one_step, x)


def test_hvp_through_grad_matches_hessian():
    def f(x):
        return np.sum(np.sin(yb.grad(in_place_loop)(x)))

    x = np.array([0.3, 0.5, 0.7])
    v = np.array([0.2, -1.0, 0.4])
    value, gradient, product = yb.hvp(f, (x,), (v,))
    np.testing.assert_allclose(value, f(x))
    np.testing.assert_allclose(gradient[0], yb.grad(f)(x), rtol=1e-10)
    np.testing.assert_allclose(product[0], _fd_hessian(f, x) @ v, rtol=1e-6, atol=1e-7)


def test_float_arguments_and_math_functions():
    def f(t):
        return yb.grad(scalar_math)(t) ** 2 + math.cos(yb.grad(scalar_math)(t * t))

    check_hessian(f, 0.7)


def test_value_and_grad_inside():
    def f(x):
        value, gradient = yb.value_and_grad(smooth)(x)
        return value * np.sum(gradient * x) + value ** 2

    check_hessian(f, np.array([0.3, -0.5, 0.9]))


def two_arguments(x, w):
    return np.sum(np.tanh(w * x) ** 2) + np.sum(w ** 3 * x)


def test_argnums_and_cross_derivatives():
    def f(x):  # the gradient with respect to both arguments, one of them derived from x
        gx, gw = yb.grad(two_arguments, argnums=(0, 1))(x, x[::-1] * 2.0)
        return np.sum(gx * gw) + np.sum(yb.grad(two_arguments, argnums=1)(x, np.ones(3)) ** 2)

    check_hessian(f, np.array([0.3, 0.5, 0.7]))


def adds_ints_as_floats(t):
    return t * t + float(1) + float(t > 0.5) * t


def test_float_of_an_int_has_no_tangent():
    """``float(1)`` and ``float(flag)`` in the function under ``yb.grad``: the int is a value, of
    tangent 0. Third order took it as structure (``float`` linear), giving ``float(1)`` the
    tangent 1.0: the Hessian's gradient off by 0.28 against reverse over reverse."""
    check_third_order(adds_ints_as_floats, 0.7)


def returns_numpy_float(x):
    return np.sum(x ** 3) * np.sum(np.exp(x))


def returns_0d_array(x):
    return np.asarray(np.sum(np.exp(x) * x))


def test_zero_dimensional_and_numpy_float_values():
    def f(x):
        return np.sum(yb.grad(returns_numpy_float)(x) ** 2) + np.sum(yb.grad(returns_0d_array)(x) ** 3)

    check_hessian(f, np.array([0.2, 0.4, 0.1]))


def test_caller_data_untouched():
    x = np.array([0.3, 0.5, 0.7])
    saved = x.copy()
    yb.hessian(lambda y: np.sum(yb.grad(in_place_loop)(y) ** 2))(x)
    np.testing.assert_array_equal(x, saved)


# -------------------------------------------------------------------- primitives by cotangent map

def spd(x):
    return A @ A.T + np.outer(x, x)


def reductions(x):
    return np.linalg.norm(x) ** 3 + np.max(x ** 2) * np.var(x) + np.std(x * 2.0, ddof=1) + np.median(x ** 2)


def special_functions(x):
    return scipy.special.logsumexp(2.0 * x) + np.sum(scipy.special.softmax(x) * x ** 2) + np.sum(np.clip(x, 0.35, 0.65) ** 3)


def powers_and_logs(x):
    s = np.sum(x)
    return pow(s, 3) + math.log(s + 1.0, 2.0) + math.log(s) + np.sum(np.sort(x) * np.array([0.0, 1.0, 2.0]))


def linear_algebra(x):
    m = A + np.diag(x)
    return (np.sum(np.linalg.inv(m) ** 2) + np.linalg.det(A + np.outer(x, x)) + np.log(np.linalg.det(spd(x))) ** 2
            + np.sum(np.linalg.cholesky(spd(x))) + np.sum(np.linalg.solve(m, x) ** 2))


@pytest.mark.parametrize("g", [reductions, special_functions, powers_and_logs, linear_algebra],
                         ids=lambda g: g.__name__)
def test_primitives_given_by_cotangent_maps(g):
    def f(x):
        return np.sum(yb.grad(g)(x) ** 2)

    check_hessian(f, np.array([0.3, 0.5, 0.7]), rtol=1e-5, atol=1e-6)


# -------------------------------------------------------------------- what is refused, clearly

def uses_expm(x):
    return np.sum(scipy.linalg.expm(np.outer(x, x)))


def uses_sorted_with_a_key(x):
    return sorted([x[0], x[1]], key=abs)[0] ** 3


def uses_lu_factor(x):
    return np.sum(scipy.linalg.lu_factor(np.outer(x, x) + 3.0 * np.eye(3))[0])


def test_unsupported_primitive_is_named():
    with pytest.raises(yb.NestedDifferentiationError, match="third derivatives.*lu_factor"):
        yb.hessian(lambda x: np.sum(yb.grad(uses_lu_factor)(x) ** 2))(np.ones(3) * 0.5)


def test_expm_by_its_forward_definition():  # (rules/scipy_linalg_third_order.py; refused before)
    check_hessian(lambda x: np.sum(yb.grad(uses_expm)(x) ** 2), np.ones(3) * 0.5)


def test_sorted_with_a_key():  # (refused before: tests/test_third_order_closures.py has more)
    check_hessian(lambda x: np.sum(yb.grad(uses_sorted_with_a_key)(x) ** 2), np.array([0.3, 0.5, 0.7]))


def make_loss(data, power):
    def loss(w):  # a closure over constants (the data), as models are often written
        return np.sum((w - data) ** power * w)

    return loss


def test_closures_over_constants():
    loss = make_loss(np.array([0.1, 0.2, 0.3]), 2)

    def f(w):
        return np.sum(yb.grad(loss)(w) ** 2) + loss(w)

    check_hessian(f, np.array([0.3, 0.5, 0.7]))


def test_capturing_differentiated_variables():
    # the inner function captures x: third derivatives in x through the capture and the argument
    def f(x):
        return np.sum(yb.grad(lambda w: np.sum(x * w ** 3))(x) ** 2)

    check_hessian(f, np.array([0.3, -0.5, 0.7]))


def defines_helpers(x):
    def cube(v, power=3):
        return v ** power

    scaled = lambda a, b: a * np.sin(b)  # noqa: E731
    return np.sum(cube(x) * x) + scaled(x[0], x[1])


def test_functions_defined_inside_capturing_nothing():
    check_hessian(lambda x: np.sum(yb.grad(defines_helpers)(x) ** 2), np.array([0.3, -0.7, 1.1]))


def captures_a_variable(y):
    s = np.sum(y)
    return np.sum((lambda t: t * s)(y) ** 2)


def nonlocal_accumulator(y):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v

    for v in y:
        add(v ** 2)
    return total * np.sum(y)


def late_binding(y):
    fs = [lambda t: a * t for a in y]
    return sum(f(1.5) for f in fs) * np.sum(y ** 2)


def default_from_a_variable(y):
    def k(v, w=2 * y[0]):
        return v * w

    return np.sum(k(y) ** 2)


def builds_a_set(y):
    return sum({float(v) for v in y}) * np.sum(y ** 2)


#: issue 13's constructs in the function under yb.grad still refused by name in third order: each
#: with its error text
REFUSED_IN_THIRD_ORDER = [
    (builds_a_set, "set.add"),
]  # (closures, nonlocal writes, late binding, defaults: tests/test_third_order_closures.py)


WRITTEN = 0.0


def writes_a_global(y):
    global WRITTEN
    WRITTEN = np.sum(y ** 2)
    return WRITTEN * y[0]


def test_global_writes_are_refused_by_name():
    F = lambda x: np.sum(yb.grad(writes_a_global)(x) ** 2)  # noqa: E731
    with pytest.raises(yb.NestedDifferentiationError, match="third derivatives.*the global 'WRITTEN'") as error:
        yb.hessian(F)(np.array([0.3, -0.7, 1.1]))
    assert isinstance(error.value, TypeError)  # (as the other orders' refusals of globals: callers catch that)
    assert "test_third_order.py" in "".join(getattr(error.value, "__notes__", [])) + str(error.value)


@pytest.mark.parametrize("g, message", REFUSED_IN_THIRD_ORDER, ids=lambda v: getattr(v, "__name__", ""))
def test_cells_defaults_and_sets_are_refused_by_name(g, message):
    F = lambda x: np.sum(yb.grad(g)(x) ** 2)  # noqa: E731
    x0 = np.array([0.3, -0.7, 1.1])
    for second_order in (yb.hessian(F), lambda x: yb.hvp(F, (x,), (x,))):
        with pytest.raises(yb.NestedDifferentiationError, match=message):
            second_order(x0)


def test_has_aux():
    def with_aux(x):
        return np.sum(x ** 3), 1

    F = lambda x: np.sum(yb.grad(with_aux, has_aux=True)(x)[0] ** 2)  # noqa: E731
    check_hessian(F, np.array([0.3, -0.7, 1.1]))


def sum_of_two(x, y):
    return x + y


def product_of_two(x, y):
    return x * y * y


def test_perturbations_are_not_confused():
    # d2/dx2 [x^2 * d/dy (x + y)] = 2: the inner derivative's perturbation (y) is not the outer one
    assert yb.hessian(lambda x: x * x * yb.grad(sum_of_two, argnums=1)(x, 1.0))(1.5) == pytest.approx(2.0)
    # d2/dx2 [x * d/dy (x y^2)] at y = x: d2/dx2 [2 x^3] = 12 x: the outer perturbation reaches the
    # inner gradient through both arguments
    assert yb.hessian(lambda x: x * yb.grad(product_of_two, argnums=1)(x, x))(1.5) == pytest.approx(18.0)


def builds_a_list(x):
    parts = []
    for k in range(2):
        parts.append(x[k] ** 3)
    pair = tuple(parts)
    return pair[0] * pair[1] + parts[0]


def test_lists_built_by_append():
    check_hessian(lambda x: np.sum(yb.grad(builds_a_list)(x) ** 2), np.array([0.5, 0.7]))


# -------------------------------------------------------------------- every rule, through yb.grad

#: Conventions at points where a derivative is not defined (see test_second_order): third
#: derivatives follow them no more than second derivatives do; and gamma at -1.5, where the pure
#: Python digamma's reflection divides by tan(pi x) at its pole, so its derivatives lose digits.
THIRD_ORDER_CONVENTIONS = NEGATIVE_BASE_POWERS | {"pow: 0**1", "pow arrays: conventions", "math.gamma(negative)"}
#: Known failures with an unclear error, to fix (docs/limitations.md).
KNOWN_ERRORS: set = set()  # none at the moment (np.interp works since its arguments pass the array_like boundary)


#: the default run checks every eighth rule case and every third corpus program (fixed samples);
#: the slow step (.ci/run) checks them all
THIRD_ORDER_SAMPLE = 8
RULE_CASES_SAMPLED = [
    param if k % THIRD_ORDER_SAMPLE == 0 else pytest.param(*param.values, id=param.id, marks=pytest.mark.slow)
    for k, param in enumerate(RULE_CASES)
]


@pytest.mark.parametrize("case", RULE_CASES_SAMPLED)
def test_rule_third_order(case):
    """Each primitive under yb.grad inside yb.hvp: third derivatives against central differences
    of reverse over reverse, or a clear refusal."""
    try:
        check_third_order(case.f, *case.args, kwargs=case.kwargs)
    except (NotThirdOrderCheckable, yb.NestedDifferentiationError, yb.SecondOrderError):
        pass  # not float arguments; or refused, naming what and why
    except NotTwiceDifferentiable:
        assert case.name in NOT_TWICE_DIFFERENTIABLE | THIRD_ORDER_CONVENTIONS
    except AssertionError:
        if case.name not in THIRD_ORDER_CONVENTIONS:
            raise
    except RuleArgumentError as error:  # a rule's own third-order refusal (numpy.ma, comparisons that write)
        if not str(error).startswith("third derivatives (yb.hvp/yb.hessian of a function calling yb.grad)") \
                and case.name not in KNOWN_ERRORS:
            raise
    except Exception:  # noqa: BLE001
        if case.name not in KNOWN_ERRORS:
            raise
    else:
        assert case.name not in KNOWN_ERRORS, "fixed: take it off KNOWN_ERRORS"


CORPUS_SAMPLED = [
    entry if k % 3 == 0 else pytest.param(*entry, marks=pytest.mark.slow) for k, entry in enumerate(CORPUS)
]


@pytest.mark.parametrize("fn, args, w", CORPUS_SAMPLED)
def test_corpus_third_order_is_right_or_refused(fn, args, w):
    """Every corpus function under yb.grad inside yb.hvp: right, or refused naming what."""
    try:
        check_third_order(fn, *args)
    except (NotThirdOrderCheckable, yb.NestedDifferentiationError, yb.SecondOrderError):
        pass
    except ValueError:
        if fn.__name__ != "np_interp_builtin":  # np.interp: KNOWN_ERRORS
            raise


def test_every_route_to_the_hessian_agrees():
    def f(x):
        return smooth(x) + 0.5 * np.sum(yb.grad(in_place_loop)(x) ** 2)

    x = np.array([0.3, 0.5, 0.7])
    hessian = check_hessian(f, x)
    np.testing.assert_allclose(yb.jacobian(yb.grad(f), mode="fwd")(x), hessian, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(yb.jacobian(yb.grad(f), mode="rev")(x), hessian, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(yb.prepare_hessian(f, x)(x), hessian, rtol=1e-10, atol=1e-12)


def chooses(x):
    return max(0.0, x[0]) ** 3 + min(x[1], x[2], 0.9) ** 3 + max([x[0] * x[1], x[2]]) ** 2


def test_builtin_max_and_min():
    for x in (np.array([0.3, 0.5, 0.7]), np.array([-0.3, 0.95, 0.97])):
        check_hessian(lambda y: np.sum(yb.grad(chooses)(y) ** 2), x)


def _cube_through_an_int_array(d):
    r = np.zeros(3, int)
    r[0] = 3
    return np.sum((r * d) ** 3)


def test_write_into_an_int_array_in_third_order():
    """The third-order twin of second order's int-array write (its tangent call wrote into the
    primal): the Hessian of the gradient is f''' = 162 * d."""
    gradient = yb.grad(_cube_through_an_int_array)
    hessian = yb.hessian(lambda d: gradient(d))(0.7)
    h = 1e-4
    expected = (yb.grad(lambda d: gradient(d))(0.7 + h) - yb.grad(lambda d: gradient(d))(0.7 - h)) / (2 * h)
    np.testing.assert_allclose(hessian, expected, rtol=1e-6)
