"""End-to-end tests of the public API and of its error messages."""
import operator

import numpy as np
import scipy.special
import pytest

import yuebing as yb
from yuebing.testing import structurally_equal


def quadratic(x):
    return np.sum(x * x) * 0.5


def two_args(x, y):
    return np.sum(x * y) + y * y if np.ndim(y) == 0 else np.sum(x * y)


def fd_gradient(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        g.flat[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def test_grad_matches_finite_differences():
    x = np.random.default_rng(0).standard_normal(5)
    np.testing.assert_allclose(yb.grad(quadratic)(x), fd_gradient(quadratic, x), rtol=1e-6)


def test_value_and_grad_and_argnums_tuple():
    x, y = np.arange(3.0), 2.0
    value, (gx, gy) = yb.value_and_grad(two_args, argnums=(0, 1))(x, y)
    assert value == two_args(x, y)
    np.testing.assert_allclose(gx, fd_gradient(lambda v: two_args(v, y), x), rtol=1e-6)
    assert gy == pytest.approx((two_args(x, y + 1e-6) - two_args(x, y - 1e-6)) / 2e-6, rel=1e-6)


def with_aux(x):
    loss = np.sum(x ** 2)
    return loss, {"norm": np.sqrt(loss)}


def test_has_aux():
    x = np.arange(3.0)
    (value, aux), g = yb.value_and_grad(with_aux, has_aux=True)(x)
    assert value == 5.0 and aux["norm"] == pytest.approx(np.sqrt(5.0))
    np.testing.assert_allclose(g, 2 * x)
    g2, aux2 = yb.grad(with_aux, has_aux=True)(x)
    np.testing.assert_allclose(g2, 2 * x)


def scaled(x, *, scale):
    return np.sum(x) * scale


def test_keyword_arguments_are_not_differentiated():
    np.testing.assert_allclose(yb.grad(scaled)(np.ones(3), scale=3.0), 3.0 * np.ones(3))


def square_all(x):
    return x * x


def test_vjp_with_array_output():
    x = np.arange(3.0)
    value, pullback = yb.vjp(square_all, x)
    np.testing.assert_allclose(value, x * x)
    (gx,) = pullback(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(gx, 2 * x * np.array([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError, match="already been called"):
        pullback(np.ones(3))


def test_vjp_rejects_mismatched_cotangent():
    _, pullback = yb.vjp(square_all, np.arange(3.0))
    with pytest.raises(TypeError, match="cotangent does not match"):
        pullback(np.ones(4))


def mutates(x):
    x *= 3.0
    x[0] = 1.0
    return np.sum(x * x)


def test_arguments_restored_after_gradient_call():
    x = np.arange(1.0, 4.0)
    before = x.copy()
    g = yb.grad(mutates)(x)
    np.testing.assert_array_equal(x, before)
    expected = fd_gradient(lambda v: mutates(v.copy()), before)
    np.testing.assert_allclose(g, expected, rtol=1e-6)


def vector_output(x):
    return x * 2.0


def test_non_scalar_output_error_names_shape_and_alternatives():
    with pytest.raises(TypeError, match=r"shape \(3,\).*yb\.vjp.*yb\.jacobian"):
        yb.grad(vector_output)(np.ones(3))


def string_output(x):
    return "a"


def test_non_numeric_output_error():
    with pytest.raises(TypeError, match="must return a real scalar"):
        yb.grad(string_output)(1.0)


def test_argnums_out_of_range():
    with pytest.raises(ValueError, match="argnums=2 is out of range"):
        yb.grad(two_args, argnums=2)(np.ones(2), 1.0)


def test_non_differentiable_argument_type():
    with pytest.raises(TypeError, match="argument 0 is a str"):
        yb.grad(quadratic)("abc")
    with pytest.raises(TypeError, match="argument 0 is the int 3"):
        yb.grad(quadratic)(3)


class Node:
    def __init__(self, value):
        self.value = value
        self.next = self


def ring_energy(head):
    s = 0.0
    node = head
    for _ in range(8):
        s += node.value * node.next.value
        node = node.next
    return s


def make_ring(n):
    nodes = [Node(float(i + 1)) for i in range(n)]
    for i in range(n):
        nodes[i].next = nodes[(i + 1) % n]
    return nodes[0]


def test_prepare_gradient_on_a_ring_many_times():
    head = make_ring(4)
    prepared = yb.prepare_gradient(ring_energy, head)
    first_value, first_grad = prepared(head)
    first = yb.tangents.structural_copy(first_grad)
    for _ in range(5):
        value, grad = prepared(head)
        assert value == first_value
        assert structurally_equal(first, grad)
    assert grad.next.next.next.next is grad  # the tangent is a ring too
    # gradient by hand: each edge (a, a.next) is walked twice in 8 steps
    node, g = head, grad
    for _ in range(4):
        expected = 2 * (node.next.value + _prev(head, node).value)
        assert g.value == pytest.approx(expected)
        node, g = node.next, g.next


def _prev(head, target):
    node = head
    while node.next is not target:
        node = node.next
    return node


def test_prepare_gradient_reuses_buffers():
    x = np.arange(3.0)
    prepared = yb.prepare_gradient(quadratic, x)
    _, g1 = prepared(x)
    _, g2 = prepared(x)
    assert g1 is g2  # the buffer is owned by the prepared gradient and overwritten
    np.testing.assert_allclose(g2, x)


def test_prepare_pullback():
    prepared = yb.prepare_pullback(square_all, np.ones(2))
    value, pullback = prepared(np.array([1.0, 2.0]))
    np.testing.assert_allclose(pullback(np.ones(2))[0], [2.0, 4.0])


def make_closure(w):
    def f(x):
        return np.sum(w * x)

    return f


def test_value_and_pullback_gives_closure_gradient():
    w = np.array([1.0, 2.0])
    f = make_closure(w)
    value, pullback = yb.value_and_pullback(f, np.array([3.0, 4.0]))
    f_grad, x_grad = pullback(1.0)
    np.testing.assert_allclose(x_grad, w)
    np.testing.assert_allclose(f_grad.w.cell_contents, [3.0, 4.0])


def test_show_is_readable_python():
    source = yb.show(ring_energy)
    assert "def ring_energy_forward" in source and "def ring_energy_reverse" in source
    assert "# undo line" in source
    compile(source, "<show>", "exec")
    ir_text = yb.show(ring_energy, stage="ir")
    assert ir_text.startswith("def ring_energy(head):")


def nested_grad(x):
    return np.sum(yb.grad(quadratic)(x))


def test_lambda_sources_on_one_line():
    f, g = (lambda x: x * 2.0), (lambda x: x * 3.0)
    assert yb.grad(f)(1.0) == 2.0 and yb.grad(g)(1.0) == 3.0


def test_exec_registered_in_linecache():
    import linecache

    source = "def cube(x):\n    return x * x * x\n"
    filename = "<notebook cell 7>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {}
    exec(compile(source, filename, "exec"), namespace)
    assert yb.grad(namespace["cube"])(2.0) == pytest.approx(12.0)


def test_exec_without_source_is_recovered_from_its_bytecode():
    namespace = {}
    exec("def hidden(x):\n    return x * x * 3.0\n", namespace)
    hidden = namespace["hidden"]
    expected = (hidden(1.0 + 1e-6) - hidden(1.0 - 1e-6)) / 2e-6
    np.testing.assert_allclose(yb.grad(hidden)(1.0), expected, rtol=1e-8)


class Model:
    def __init__(self):
        self.w = 2.0

    def loss(self, x):
        return self.w * x * x

    @staticmethod
    def static_loss(x):
        return 3.0 * x * x

    @classmethod
    def class_loss(cls, x):
        return 4.0 * x * x


def test_methods_static_and_class_methods():
    m = Model()
    assert yb.grad(m.loss)(1.5) == pytest.approx(6.0)
    assert yb.grad(Model.static_loss)(1.5) == pytest.approx(9.0)
    assert yb.grad(Model.class_loss)(1.5) == pytest.approx(12.0)


def grad_inside(x):
    return yb.grad(quadratic)(x)[0] * x[0]


def smooth(x, w):
    return np.sum(np.sin(x * w) * x) + w * w * np.sum(x ** 3)


def gradient_penalty(x, w):
    gx = yb.grad(smooth)(x, w)
    return np.sum(gx ** 2) + w * np.sum(gx)


def value_and_gradient_inside(x, w):
    v, (gx, gw) = yb.value_and_grad(smooth, argnums=(0, 1))(x, w)
    return v * gw + np.sum(gx * x)


def captures_an_argument(x, w):
    return np.sum(yb.grad(lambda y: np.sum(np.sin(y * w)))(x))


@pytest.mark.parametrize("f", [gradient_penalty, value_and_gradient_inside])
def test_reverse_over_reverse_through_hessian_vector_products(f):
    x, w, h = np.array([0.3, -0.5, 1.2]), 0.8, 1e-6
    gx, gw = yb.grad(f, argnums=(0, 1))(x, w)
    np.testing.assert_allclose(gx, [(f(x + h * e, w) - f(x - h * e, w)) / (2 * h) for e in np.eye(3)], rtol=1e-6)
    assert gw == pytest.approx((f(x, w + h) - f(x, w - h)) / (2 * h), rel=1e-6)


def test_reverse_over_reverse_hessians_and_its_refusals():
    x = np.arange(1.0, 3.0)
    np.testing.assert_allclose(yb.grad(grad_inside)(x), fd_gradient(grad_inside, x), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(yb.jacobian(yb.grad(smooth), mode="rev")(x, 0.8), yb.hessian(smooth)(x, 0.8),
                               rtol=1e-12)
    # a gradient function capturing a variable being differentiated: its mixed second derivatives
    h = 1e-6
    assert yb.grad(captures_an_argument, argnums=1)(x, 0.8) == pytest.approx(
        (captures_an_argument(x, 0.8 + h) - captures_an_argument(x, 0.8 - h)) / (2 * h), rel=1e-6)


def decorate(h):
    return h


def nested_with_decorator_and_default(x):
    @decorate
    def inner(y, scale=np.e):
        return y * x * scale

    return inner(x)


def test_nested_def_decorators_and_defaults_see_user_globals():
    assert yb.grad(nested_with_decorator_and_default)(1.5) == pytest.approx(2 * 1.5 * np.e)


def test_show_forward():
    assert "quadratic" in yb.show(quadratic, mode="forward")


def scaled_norm(x, s):
    x *= 2.0  # mutates its argument: the prepared path must restore it too
    return np.sum(x * x) * s


def test_prepared_gradient_hot_path_matches_finite_differences():
    x, s = np.array([0.5, -1.5, 2.0]), 1.7
    prepared = yb.prepare_gradient(scaled_norm, x, s, argnums=(0, 1))
    before = x.copy()
    for _ in range(3):  # the first call takes the general path, later ones the hot path
        value, (gx, gs) = prepared(x, s)
        np.testing.assert_array_equal(x, before)
        np.testing.assert_allclose(gx, fd_gradient(lambda v: scaled_norm(v.copy(), s), before), rtol=1e-6)
        assert gs == pytest.approx(np.sum((2 * before) ** 2))


def test_prepared_gradient_hot_path_still_rejects_vector_output():
    prepared = yb.prepare_gradient(vector_output, np.ones(2))
    with pytest.raises(TypeError, match="must return a scalar"):
        prepared(np.ones(2))
    with pytest.raises(TypeError, match="must return a scalar"):
        prepared(np.ones(2))


def mutates_then_returns_vector(x):
    x *= 3.0
    x[0] = 7.0
    return x * 2.0


def test_errors_after_the_forward_pass_leave_arguments_intact():
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="must return a scalar"):
        yb.grad(mutates_then_returns_vector)(x)
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])


def mutates_then_fails(x, items):
    x *= 3.0
    x[1] = 5.0
    items.append(x[0])
    for i in range(len(x)):
        x[i] = x[i] * 2.0
    return scipy.special.hyperu(1.0, 2.0, x).sum()  # no rule: fails after all those mutations


def test_errors_during_the_forward_pass_leave_arguments_intact():
    x, items = np.array([1.0, 2.0, 3.0]), [0.5]
    with pytest.raises(TypeError, match="hyperu"):
        yb.grad(mutates_then_fails)(x, items)
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])
    assert items == [0.5]


def test_functions_sharing_code_keep_their_own_defaults():
    # one lambda, three functions: the derived rule is shared per code object, the defaults are not
    functions = [lambda x, k=k: k * x * x for k in (1.0, 2.0, 3.0)]
    assert [yb.grad(f)(1.0) for f in functions] == [2.0, 4.0, 6.0]
    assert [yb.jvp(f, (1.0,), (1.0,))[1] for f in functions] == [2.0, 4.0, 6.0]
    assert [yb.hessian(f)(1.0) for f in functions] == [2.0, 4.0, 6.0]
    with_arrays = [lambda x, w=np.full(2, k): np.sum(w * x * x) for k in (1.0, 2.0)]  # array defaults
    np.testing.assert_allclose([yb.grad(f)(np.ones(2)) for f in with_arrays], [[2.0, 2.0], [4.0, 4.0]])


def test_same_source_in_two_modules_reads_its_own_globals():
    # Python compares code objects by value: the same text in two namespaces gives equal code
    # objects, but each function reads its own module's globals
    import linecache

    source = "def scaled_square(x):\n    return a * x * x\n"
    functions = []
    for k, a in enumerate((1.0, 2.0, 3.0)):
        name = f"<same text {k}>"
        linecache.cache[name] = (len(source), None, source.splitlines(True), name)
        namespace = {"a": a}
        exec(compile(source, name, "exec"), namespace)
        functions.append(namespace["scaled_square"])
    assert functions[0].__code__ == functions[1].__code__
    assert [yb.grad(f)(1.0) for f in functions] == [2.0, 4.0, 6.0]
    assert [yb.jvp(f, (1.0,), (1.0,))[1] for f in functions] == [2.0, 4.0, 6.0]
    assert [yb.hessian(f)(1.0) for f in functions] == [2.0, 4.0, 6.0]


def _explicit_in_place(a, b):
    y = operator.isub(a, b)  # called as a function: still mutates a
    operator.imul(y, 2.0)
    return np.sum(y * y) + np.sum(a * a) * 0.5


def test_in_place_operators_called_as_functions_mutate():
    x, b = np.array([0.3, -0.5, 0.8]), 0.7
    expected = 6.0 * 2.0 * (x - b)  # a is y: 1.5 |2 (x - b)|^2
    np.testing.assert_allclose(yb.grad(_explicit_in_place)(x, b), expected)
    np.testing.assert_allclose(yb.jvp(_explicit_in_place, (x, b), (np.ones(3), 0.0))[1], np.sum(expected))
    np.testing.assert_allclose(yb.hvp(_explicit_in_place, (x, b), (np.ones(3), 0.0))[2][0], 12.0 * np.ones(3))
    np.testing.assert_array_equal(x, [0.3, -0.5, 0.8])


_MISSING = object()


def _with_sentinel_default(x, scale=_MISSING):
    if scale is _MISSING:
        scale = 2.0
    return np.sum(x ** 3) * scale


def test_object_sentinel_defaults_are_constants():
    x = np.array([1.0, 0.5])
    np.testing.assert_allclose(yb.grad(_with_sentinel_default)(x), 6.0 * x ** 2)
    np.testing.assert_allclose(yb.jvp(_with_sentinel_default, (x,), (np.ones(2),))[1], np.sum(6.0 * x ** 2))
    np.testing.assert_allclose(yb.hessian(_with_sentinel_default)(x), np.diag(12.0 * x))
