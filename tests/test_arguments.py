"""What is differentiated (issue 12, item 10; docs/conventions.md, "Arguments"): arguments with no
float leaf are refused naming the leaf, ints next to floats get NoTangent, and one array passed
in two argument slots is differentiated slot by slot as JAX does -- in every mode. Derivatives
are checked against central differences of the per-slot definition (the other slot held fixed,
as a separate copy)."""
import numpy as np
import pytest

import yuebing as yb

H = 1e-6


def central(f, args, i):
    """d f / d args[i] (a float or float array) by central differences, other arguments fixed."""
    x = args[i]
    if isinstance(x, float):
        plus, minus = list(args), list(args)
        plus[i], minus[i] = x + H, x - H
        return (f(*plus) - f(*minus)) / (2 * H)
    g = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = H
        plus, minus = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args], list(args)
        minus = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
        plus[i], minus[i] = x + e, x - e
        g.flat[k] = (f(*plus) - f(*minus)) / (2 * H)
    return g


# ---------------------------------------------------------------- leaves without a derivative


def dict_model(d):
    return float(d["a"]) * 2.0 + d["b"] ** 2 * 1.5


def scaled(x):
    return np.sum(x * 1.5) + np.sum(x ** 2)


def model_with_hyperparameter(m):
    return np.sum(np.sin(m["w"]) ** 2) * m["n"] + m["n"] * 0.5


@pytest.mark.parametrize("argument, names", [
    (3, ["argument 0 is the int 3", "pass 3.0 for 3"]),
    (np.int64(4), ["argument 0 is the int", "4.0"]),
    ({"a": 1, "b": 2}, ["argument 0['a'] is the int 1", "argument 0['b'] is the int 2", "pass 1.0 for 1, 2.0 for 2",
                        "leave argument 0 out of argnums"]),
    ([1, 2], ["argument 0[0] is the int 1", "argument 0[1] is the int 2"]),
    (np.array([1, 2]), ["argument 0 is an array of dtype int64", "np.asarray(x, dtype=float)"]),
    ("abc", ["argument 0 is a str"]),
    (None, ["argument 0 is None"]),
])
def test_an_argument_without_float_leaves_is_refused_naming_its_leaves(argument, names):
    function = dict_model if isinstance(argument, dict) else (lambda v: 1.5) if isinstance(argument, (str, type(None))) \
        else (lambda v: v[0] * 1.5 + v[1]) if isinstance(argument, list) else scaled
    for make in (yb.grad, yb.value_and_grad, yb.jacobian, lambda f: yb.jacobian(f, mode="fwd"),
                 lambda f: (lambda *a: yb.prepare_gradient(f, *a)(*a))):
        with pytest.raises(TypeError) as raised:
            make(function)(argument)
        for name in names:
            assert name in str(raised.value)
    if not isinstance(argument, (dict, list, str, type(None))):
        with pytest.raises(TypeError, match="argument 0 is"):
            yb.hessian(scaled)(argument)


def test_the_advice_works_as_printed():
    d = {"a": 1.0, "b": 2.0}  # "pass 1.0 for 1, 2.0 for 2"
    g = yb.grad(dict_model)(d)
    assert g["a"] == pytest.approx(2.0) and g["b"] == pytest.approx(6.0)
    x = np.asarray(np.array([1, 2]), dtype=float)  # "np.asarray(x, dtype=float)"
    np.testing.assert_allclose(yb.grad(scaled)(x), central(scaled, (x,), 0), rtol=1e-6)
    np.testing.assert_allclose(yb.hessian(scaled)(x), 2 * np.eye(2), rtol=1e-8)
    assert yb.grad(lambda v: v * v)(3.0) == pytest.approx(6.0)


def test_an_int_argument_left_out_of_argnums_is_fine():
    assert yb.grad(lambda x, n: x ** n)(2.0, 3) == pytest.approx(12.0)


def test_ints_next_to_floats_keep_notangent_and_the_floats_their_derivative():
    w = np.array([0.3, -0.7, 1.1])
    m = {"w": w, "n": 3}
    expected = central(lambda w_: model_with_hyperparameter({"w": w_, "n": 3}), (w,), 0)
    g = yb.grad(model_with_hyperparameter)(m)
    assert g["n"] is yb.NoTangent
    np.testing.assert_allclose(g["w"], expected, rtol=1e-6)
    _, (gv,), (hv,) = yb.hvp(model_with_hyperparameter, (m,), ({"w": np.ones(3), "n": yb.NoTangent},))
    assert gv["n"] is yb.NoTangent and hv["n"] is yb.NoTangent
    np.testing.assert_allclose(gv["w"], expected, rtol=1e-6)
    gradient_w = lambda w_: yb.grad(model_with_hyperparameter)({"w": w_, "n": 3})["w"]  # noqa: E731
    np.testing.assert_allclose(hv["w"], (gradient_w(w + 1e-5) - gradient_w(w - 1e-5)) / 2e-5, rtol=1e-5, atol=1e-8)
    for mode in ("rev", "fwd"):
        j = yb.jacobian(model_with_hyperparameter, mode=mode)(m)
        assert j["n"] is yb.NoTangent
        np.testing.assert_allclose(j["w"], expected, rtol=1e-6)
    _, tangent = yb.jvp(model_with_hyperparameter, (m,), ({"w": np.ones(3), "n": yb.NoTangent},))
    assert tangent == pytest.approx(np.sum(expected))
    assert yb.grad(lambda t: t[0] * t[1])((2, 3.0)) == (yb.NoTangent, pytest.approx(2.0))


def test_vjp_jvp_and_hvp_give_notangent_to_an_int_argument():
    assert yb.vjp(lambda x, n: x * n, 2.0, 3)[1](1.0) == (pytest.approx(3.0), yb.NoTangent)
    assert yb.vjp(dict_model, {"a": 1, "b": 2})[1](1.0) == ({"a": yb.NoTangent, "b": yb.NoTangent},)
    assert yb.jvp(lambda x, n: x * n, (2.0, 3), (1.0, yb.NoTangent)) == (6.0, pytest.approx(3.0))
    value, gradients, products = yb.hvp(lambda x: x * 1.5, (3,), (yb.NoTangent,))
    assert (value, gradients, products) == (4.5, (yb.NoTangent,), (yb.NoTangent,))
    with pytest.raises(TypeError, match="int 3 has tangent NoTangent"):
        yb.jvp(lambda x: x * 1.5, (3,), (1.0,))


def test_an_empty_container_has_an_empty_gradient():
    assert yb.grad(lambda d: 1.0)({}) == {}


# ---------------------------------------------------------------- one array in two argument slots


def bilinear(x, y):
    return np.sum(x * y * y) + np.sum(np.sin(x) * y)


def vector_valued(x, y):
    return x * np.cos(y)


A = np.array([0.4, -1.2, 0.9])


def _per_slot_gradients(f, a):
    """Each slot's own derivative at (a, a): the other slot a separate copy, held fixed."""
    return central(f, (a.copy(), a.copy()), 0), central(f, (a.copy(), a.copy()), 1)


def test_grad_of_one_array_passed_twice_is_each_slots_own():
    a = A.copy()
    gx, gy = _per_slot_gradients(bilinear, a)
    for result in (yb.grad(bilinear, argnums=(0, 1))(a, a), yb.value_and_grad(bilinear, argnums=(0, 1))(a, a)[1],
                   yb.prepare_gradient(bilinear, a, a, argnums=(0, 1))(a, a)[1], yb.vjp(bilinear, a, a)[1](1.0),
                   yb.value_and_pullback(bilinear, a, a)[1](1.0)[1:]):
        np.testing.assert_allclose(result[0], gx, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(result[1], gy, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(yb.grad(bilinear, argnums=1)(a, a), gy, rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(a, A)  # the caller's array is untouched (and writable again)
    assert a.flags.writeable


def test_views_of_one_array_in_two_slots():
    a = A.copy()

    def f(x, y):
        return np.sum(x[1:] * y * y)

    g = yb.grad(f, argnums=(0, 1))(a, a[1:])
    np.testing.assert_allclose(g[0], central(f, (a.copy(), a[1:].copy()), 0), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(g[1], central(f, (a.copy(), a[1:].copy()), 1), rtol=1e-6, atol=1e-9)


def test_forward_mode_jacobians_and_jvp_of_one_array_passed_twice():
    a = A.copy()
    tx, ty = np.array([1.0, 0.5, -0.3]), np.array([0.2, -1.0, 0.7])
    _, tangent = yb.jvp(bilinear, (a, a), (tx, ty))
    gx, gy = _per_slot_gradients(bilinear, a)
    assert tangent == pytest.approx(gx @ tx + gy @ ty, rel=1e-6)
    expected_x = np.array([central(lambda x: vector_valued(x, A.copy())[i], (A.copy(),), 0) for i in range(3)])
    expected_y = np.array([central(lambda y: vector_valued(A.copy(), y)[i], (A.copy(),), 0) for i in range(3)])
    for mode in ("rev", "fwd"):
        jx, jy = yb.jacobian(vector_valued, argnums=(0, 1), mode=mode)(a, a)
        np.testing.assert_allclose(jx, expected_x, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(jy, expected_y, rtol=1e-6, atol=1e-9)


def test_hvp_and_hessian_of_one_array_passed_twice():
    a = A.copy()
    vx, vy = np.array([1.0, 0.5, -0.3]), np.array([0.2, -1.0, 0.7])

    def gradients(x, y):
        return yb.grad(bilinear, argnums=(0, 1))(x.copy(), y.copy())

    h = 1e-5
    plus, minus = gradients(a + h * vx, a + h * vy), gradients(a - h * vx, a - h * vy)
    expected = [(p - m) / (2 * h) for p, m in zip(plus, minus)]
    for run in (yb.hvp, yb.prepare_hvp(bilinear, a, a)):
        f_or_none = (bilinear,) if run is yb.hvp else ()
        _, grads, products = run(*f_or_none, (a, a), (vx, vy))
        for g, e in zip(grads, _per_slot_gradients(bilinear, a)):
            np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-9)
        for p, e in zip(products, expected):
            np.testing.assert_allclose(p, e, rtol=1e-5, atol=1e-8)
    blocks = yb.hessian(bilinear, argnums=(0, 1))(a, a)
    columns = np.eye(3)
    for j in range(3):
        e = columns[j]
        gxp, gyp = gradients(a + h * e, a)
        gxm, gym = gradients(a - h * e, a)
        np.testing.assert_allclose(blocks[0][0][:, j], (gxp - gxm) / (2 * h), rtol=1e-5, atol=1e-8)
        np.testing.assert_allclose(blocks[1][0][:, j], (gyp - gym) / (2 * h), rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(blocks[0][1], blocks[1][0].T, rtol=1e-10, atol=1e-12)


def doubles_first(x, y):
    x *= 2.0
    return np.sum(x * y)


def test_a_write_into_an_array_shared_by_two_slots_is_refused_and_the_advice_works():
    a = A.copy()
    for call in (lambda: yb.grad(doubles_first, argnums=(0, 1))(a, a), lambda: yb.vjp(doubles_first, a, a),
                 lambda: yb.jvp(doubles_first, (a, a), (a, a)), lambda: yb.hvp(doubles_first, (a, a), (a, a))):
        with pytest.raises(ValueError, match="read-only") as raised:
            call()
        assert "pass a copy to one of them (f(a, a.copy()))" in " ".join(raised.value.__notes__).lower()
        np.testing.assert_array_equal(a, A)
    g = yb.grad(doubles_first, argnums=(0, 1))(a, a.copy())  # each slot its own array
    np.testing.assert_allclose(g[0], central(doubles_first, (a.copy(), a.copy()), 0), rtol=1e-6)
    through_both = yb.grad(lambda v: doubles_first(v, v))(a)  # the derivative through both uses
    np.testing.assert_allclose(through_both, central(lambda v: doubles_first(v, v), (a.copy(),), 0), rtol=1e-6)


def pair_of_dicts(p, q):
    return np.sum(p["w"] * q["w"] ** 2)


def test_float_data_shared_inside_containers_of_two_slots_is_refused():
    p = {"w": A.copy()}
    for call in (lambda: yb.grad(pair_of_dicts, argnums=(0, 1))(p, p), lambda: yb.grad(pair_of_dicts)(p, {"w": p["w"]}),
                 lambda: yb.hvp(pair_of_dicts, (p, p), (p, p)), lambda: yb.jvp(pair_of_dicts, (p, p), (p, p))):
        with pytest.raises(TypeError, match=r"argument 0(\['w'\])? and argument 1(\['w'\])? (are the same dict|share)"):
            call()
    g = yb.grad(lambda d: pair_of_dicts(d, d))(p)  # the advice: a function of one argument
    np.testing.assert_allclose(g["w"], central(lambda w: pair_of_dicts({"w": w}, {"w": w}), (A.copy(),), 0), rtol=1e-6)


def test_sharing_data_without_floats_between_slots_is_fine():
    config = {"k": 2}

    def f(m, c):
        return np.sum(m["w"]) * c["k"] * m["c"]["k"]

    g = yb.grad(f)({"w": A.copy(), "c": config}, config)
    np.testing.assert_allclose(g["w"], np.full(3, 4.0))


def test_within_one_argument_aliasing_shares_the_tangent():
    a = A.copy()

    def f(xs):
        return np.sum(xs[0] * xs[1])

    g = yb.grad(f)([a, a])
    assert g[0] is g[1]  # one array, one tangent: the derivative through both uses
    np.testing.assert_allclose(g[0], central(lambda v: f([v, v]), (a.copy(),), 0), rtol=1e-6)


def test_one_float_passed_twice_is_differentiated_per_slot():
    x = 1.5
    assert yb.grad(lambda u, v: u * v * v, argnums=(0, 1))(x, x) == (pytest.approx(2.25), pytest.approx(4.5))


def uses_both_slots_of_a_gradient(a):
    gx, gy = yb.grad(bilinear, argnums=(0, 1))(a, a)
    return np.sum(gx * 1.3) + np.sum(gy * 0.7)


def written_out(a):  # the same, with bilinear's per-slot gradients written by hand
    return np.sum((a * a + np.cos(a) * a) * 1.3) + np.sum((2 * a * a + np.sin(a)) * 0.7)


def test_differentiating_a_function_that_passes_one_array_twice_to_yb_grad():
    """yb.grad called inside differentiated code separates the slots too, in every outer mode."""
    a = A.copy()
    assert uses_both_slots_of_a_gradient(a) == pytest.approx(written_out(a))
    expected = central(written_out, (a.copy(),), 0)
    np.testing.assert_allclose(yb.grad(uses_both_slots_of_a_gradient)(a), expected, rtol=1e-6)
    np.testing.assert_allclose([yb.jvp(uses_both_slots_of_a_gradient, (a,), (e,))[1] for e in np.eye(3)], expected,
                               rtol=1e-6)
    gradient = yb.grad(written_out)
    hessian = np.array([(gradient(a + 1e-5 * e) - gradient(a - 1e-5 * e)) / 2e-5 for e in np.eye(3)]).T
    np.testing.assert_allclose(yb.hessian(uses_both_slots_of_a_gradient)(a), hessian, rtol=1e-5, atol=1e-8)
    for mode in ("rev", "fwd"):
        jac = yb.jacobian(lambda v: yb.grad(uses_both_slots_of_a_gradient)(v), mode=mode)(a)
        np.testing.assert_allclose(jac, hessian, rtol=1e-5, atol=1e-8)
