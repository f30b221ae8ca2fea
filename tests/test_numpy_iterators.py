"""NumPy's iteration helpers (``rules/numpy_iterators.py``): ``x.flat``, ``np.nditer``,
``np.ndenumerate``, ``np.broadcast`` and ``np.fromiter`` in reverse, forward, second and third
order, against central differences (``check_rule``, ``check_second_order``,
``check_third_order``), with the arguments restored after ``yb.grad``, NumPy's iteration order
for every memory layout, and the refusals."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from yuebing.rules import numpy_iterators
from yuebing.frontend.fence import UnsupportedSyntaxError
from yuebing.rules.core import RuleArgumentError
from yuebing.testing import check_rule
from yuebing.testing.second_order import check_second_order
from yuebing.testing.third_order import check_third_order

CASES = numpy_iterators.CASES
_IDS = [c.name for c in CASES]


def _central_gradient(f, x, eps=1e-6):
    """Central differences, perturbing ``x`` in place: its memory layout (which ``np.nditer``'s
    order follows) stays as it is."""
    g = np.zeros(x.shape)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + eps
        up = f(x)
        x[i] = old - eps
        down = f(x)
        x[i] = old
        g[i] = (up - down) / (2 * eps)
    return g


def _layouts():
    base = np.random.default_rng(3).standard_normal((3, 4))
    return {"C": base, "F": np.asfortranarray(base), "T": base.T, "reversed": base[::-1, ::-1],
            "strided": base[:, ::2], "columns reversed": base[:, ::-1]}


@pytest.mark.parametrize("case", CASES, ids=_IDS)
def test_reverse_and_forward(case):
    check_rule(case.f, *case.args, kwargs=case.kwargs)


@pytest.mark.parametrize("case", CASES, ids=_IDS)
def test_second_order(case):
    check_second_order(case.f, *case.args, kwargs=case.kwargs)


#: over ~2 s each on a loaded machine
_SLOW_THIRD_ORDER = {"x.flat reads: item, slice, list, sum, np.array, list()", "for u, v in np.broadcast(a, b)"}


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name, marks=[pytest.mark.slow] if c.name in _SLOW_THIRD_ORDER else [])
                                  for c in CASES])
def test_third_order(case):
    if case.name in _FOR_OVER_TRACKED:
        # its __next__ moves the position before raising StopIteration at the end (it.finished is
        # then True, as NumPy's), which third order refuses by name: the while form works
        with pytest.raises(UnsupportedSyntaxError, match=r"StopIteration\) raised in __next__"):
            check_third_order(case.f, *case.args, kwargs=case.kwargs, rtol=1e-4, atol=1e-5)
        return
    check_third_order(case.f, *case.args, kwargs=case.kwargs, rtol=1e-4, atol=1e-5)


#: ``for v in it`` over an np.nditer with multi_index/c_index/f_index (numpy_iterators.TrackedNditer)
_FOR_OVER_TRACKED = {"np.nditer(x, flags=['multi_index']): it.multi_index",
                     "np.nditer([a, b], f_index, multi_index) (broadcast)"}


def test_a_tracked_nditer_is_finished_after_a_for_loop_and_reports_numpys_positions():
    x = np.arange(6.0).reshape(2, 3)[:, ::-1]  # not C-contiguous: order K follows the memory

    def positions(x):
        it = np.nditer(x, flags=["multi_index", "f_index"])
        seen = []
        total = 0.0
        for v in it:
            seen.append((it.multi_index, it.index, it.iterindex))
            total = total + v * (it.index + 1)
        return total, seen, it.finished

    def with_aux(x):
        total, seen, finished = positions(x)
        return total, (seen, finished)

    expected = positions(x)
    (value, (seen, finished)), g = yb.value_and_grad(with_aux, has_aux=True)(x)
    assert (value, seen, finished) == expected and finished
    np.testing.assert_allclose(g, _central_gradient(lambda u: positions(u)[0], x.copy()), rtol=1e-6, atol=1e-8)


# --------------------------------------------------------------------------------------------
# x.flat
# --------------------------------------------------------------------------------------------


def _weighted_flat(x):
    """Reads of every kind, weighted by the C-order position (so the order matters)."""
    total = 0.0
    for k, v in enumerate(x.flat):
        total = total + (k + 1) * v * v
    return total + x.flat[1] * x.flat[-1] + np.sum(np.sin(x.flat[1:4]))


@pytest.mark.parametrize("layout", list(_layouts()))
def test_flat_reads_follow_c_order_for_every_layout(layout):
    x = _layouts()[layout]
    before = x.copy()
    value, g = yb.value_and_grad(_weighted_flat)(x)
    assert value == pytest.approx(_weighted_flat(x))
    np.testing.assert_allclose(g, _central_gradient(_weighted_flat, x), rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(x, before)  # restored after yb.grad
    _, jv = yb.jvp(_weighted_flat, (x,), (np.ones_like(x),))
    assert jv == pytest.approx(np.sum(g))


def _flat_writes(x):
    y = x * 1.0
    y.flat[0] = y.flat[4] ** 2
    y.flat[2:5] = np.sin(x.flat[:3])
    y.flat[[1, 5]] = x.flat[[5, 1]] * 3.0
    return np.sum(y * y * np.arange(1.0, 7.0).reshape(2, 3))


def test_flat_writes_of_a_fresh_array():
    x = np.random.default_rng(0).standard_normal((2, 3))
    g = yb.grad(_flat_writes)(x)
    np.testing.assert_allclose(g, _central_gradient(_flat_writes, x.copy()), rtol=1e-6, atol=1e-8)
    _, hv = yb.hvp(_flat_writes, (x,), (np.ones_like(x),))[1:]
    eps = 1e-5
    expected = (yb.grad(_flat_writes)(x + eps) - yb.grad(_flat_writes)(x - eps)) / (2 * eps)
    np.testing.assert_allclose(hv[0], expected, rtol=1e-5, atol=1e-7)


def _writes_argument(x, v):
    x.flat[:] = 0.5  # a scalar to every element
    x.flat[1] = v[0]
    x.flat[3:5] = v * v
    return np.sum(x * x) + v[0] * v[1]


def test_flat_writes_to_an_argument_are_restored():
    x, v = np.random.default_rng(1).standard_normal((2, 3)), np.array([0.3, -1.2])
    before = x.copy()
    gx, gv = yb.grad(_writes_argument, argnums=(0, 1))(x, v)
    np.testing.assert_array_equal(x, before)
    np.testing.assert_array_equal(gx, 0.0)  # every element overwritten
    np.testing.assert_allclose(gv, _central_gradient(lambda w: _writes_argument(x.copy(), w), v), rtol=1e-6)
    check_rule(_writes_argument, x, v)  # the post-call state of x too, both modes


def test_flat_write_through_a_non_contiguous_array():
    def write_transposed(x):
        y = x.T
        y.flat[0] = 1.0  # the statement writes through y's own index (ir.primitives.flat_assign)
        y.flat[1] = x[0, 0] * 3.0
        return np.sum(y * y)

    x = np.random.default_rng(2).standard_normal((2, 3))
    np.testing.assert_allclose(yb.grad(write_transposed)(x.copy()),
                               _central_gradient(lambda w: write_transposed(w.copy()), x), rtol=1e-6)


# --------------------------------------------------------------------------------------------
# np.nditer
# --------------------------------------------------------------------------------------------


def _weighted_nditer(x):
    total = 0.0
    k = 0.0
    for v in np.nditer(x):
        k = k + 1.0
        total = total + k * v * v
    return total


@pytest.mark.parametrize("layout", list(_layouts()))
def test_nditer_follows_numpys_order_for_every_layout(layout):
    x = _layouts()[layout]
    value, g = yb.value_and_grad(_weighted_nditer)(x)
    assert value == pytest.approx(_weighted_nditer(x))  # order K: memory order, as NumPy
    np.testing.assert_allclose(g, _central_gradient(_weighted_nditer, x), rtol=1e-6, atol=1e-8)


def test_nditer_yields_read_only_zero_dimensional_views():
    def write_read_only(x):
        for v in np.nditer(x):
            v[...] = 2.0 * v
        return np.sum(x)

    with pytest.raises(ValueError, match="read-only"):
        write_read_only(np.ones(3))
    with pytest.raises(ValueError, match="read-only"):
        yb.grad(write_read_only)(np.ones(3))


_WEIGHTS = np.arange(1.0, 7.0).reshape(2, 3)


def _doubles_in_place(x, w):
    y = x * w
    for v in np.nditer(y, op_flags=["readwrite"]):
        v[...] = v * v + w[0]
    return np.sum(y * _WEIGHTS)


def _doubles_argument(x):
    for v in np.nditer(x, op_flags=["readwrite"]):
        v[...] = np.sin(v) * v
    return x


def test_nditer_readwrite_writes_the_operand():
    x, w = np.random.default_rng(2).standard_normal((2, 3)), np.array([1.5, -0.5, 2.0])
    check_rule(_doubles_in_place, x, w)
    check_rule(_doubles_argument, x)  # the argument's post-call state, and restored
    check_second_order(_doubles_in_place, x, w)


def test_nditer_several_operands_broadcast():
    a, b = np.array([0.5, -1.0, 2.0]), np.array([[0.3], [1.1]])

    def products(a, b):
        total = 0.0
        for u, v in np.nditer((a, b)):
            total = total + u * v * v
        return total

    ga, gb = yb.grad(products, argnums=(0, 1))(a, b)
    np.testing.assert_allclose(ga, _central_gradient(lambda t: products(t, b), a), rtol=1e-6)
    np.testing.assert_allclose(gb, _central_gradient(lambda t: products(a, t), b), rtol=1e-6)


def test_nditer_in_a_with_header_is_refused_with_advice_that_works():
    def in_with(x):
        total = 0.0
        with np.nditer(x, op_flags=["readwrite"]) as it:
            for v in it:
                v[...] = 2 * v
                total = total + v
        return total

    with pytest.raises(TypeError, match="with` header"):
        yb.grad(in_with)(np.ones(3))

    def as_advised(x):  # the loop of the error's advice
        total = 0.0
        for v in np.nditer(x, op_flags=["readwrite"]):
            v[...] = 2 * v
            total = total + v * v
        return total

    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(yb.grad(as_advised)(x), 8.0 * x, rtol=1e-12)


@pytest.mark.parametrize("kwargs, named", [
    ({"flags": ["copy_if_overlap"]}, "copy_if_overlap"), ({"op_axes": [[0]]}, "op_axes"),
    ({"flags": ["buffered"], "op_dtypes": ["float32"], "op_flags": ["readwrite"], "casting": "same_kind"}, "op_dtypes"),
])  # (external_loop, buffered, op_dtypes of read-only operands work: tests/test_nditer_flags.py)
def test_nditer_forms_that_change_what_is_yielded_are_refused(kwargs, named):
    def loop(x):
        total = 0.0
        for v in np.nditer(x, **kwargs):
            total = total + np.sum(v)
        return total

    with pytest.raises(RuleArgumentError, match=named):
        yb.grad(loop)(np.ones(3))


# --------------------------------------------------------------------------------------------
# np.ndenumerate, np.broadcast, np.fromiter
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["C", "T", "reversed"])
def test_ndenumerate_indices_and_values(layout):
    x = _layouts()[layout]

    def f(x):
        total = 0.0
        for (i, j), v in np.ndenumerate(x):
            total = total + (i + 2 * j + 1) * v * v
        return total

    before = x.copy()
    np.testing.assert_allclose(yb.grad(f)(x), _central_gradient(f, x), rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(x, before)


def test_broadcast_refuses_shapes_that_do_not_broadcast():
    def f(a, b):
        return sum(u * v for u, v in np.broadcast(a, b))

    with pytest.raises(ValueError):
        yb.grad(f)(np.ones(3), np.ones(2))


def test_fromiter_count_and_errors():
    def f(x):
        return np.sum(np.fromiter((v * v for v in x), dtype=float, count=2) ** 2)

    x = np.array([0.5, -1.5, 2.0])
    np.testing.assert_allclose(yb.grad(f)(x), _central_gradient(f, x), rtol=1e-6)

    def rows(x):
        return np.sum(np.fromiter((r for r in x), dtype=float))

    with pytest.raises(ValueError):  # NumPy's own error: a row is not a float
        yb.grad(rows)(np.ones((2, 2)))


def test_nditer_with_an_integer_operand():
    def f(x, k):
        total = 0.0
        for v, n in np.nditer([x, k]):
            total = total + n * v * v
        return total

    x, k = np.array([0.5, -1.0, 2.0]), np.array([1, 2, 3])
    np.testing.assert_allclose(yb.grad(f)(x, k), _central_gradient(lambda t: f(t, k), x), rtol=1e-6)
    assert yb.jvp(lambda t: f(t, k), (x,), (np.ones(3),))[1] == pytest.approx(np.sum(2 * k * x))
    check_second_order(f, x, k)


def test_nditer_list_of_same_shape_operands_is_several_operands():
    """``[a, b]`` is a list of operands, not one array_like (the boundary leaves it as it is)."""
    def f(a, b):
        total = 0.0
        for u, v in np.nditer([a, b]):
            total = total + u * np.cos(v)
        return total

    a, b = np.array([0.5, -1.0, 2.0]), np.array([0.3, 1.1, -0.7])
    ga, gb = yb.grad(f, argnums=(0, 1))(a, b)
    np.testing.assert_allclose(ga, np.cos(b), rtol=1e-12)
    np.testing.assert_allclose(gb, _central_gradient(lambda t: f(a, t), b.copy()), rtol=1e-6)


def test_broadcast_object_attributes():
    def f(a, b):
        it = np.broadcast(a, b)
        return sum(u * v for u, v in it) * (it.shape[1] * it.size * it.nd * it.ndim * it.numiter)

    a, b = np.array([0.5, -1.0, 2.0]), np.array([[0.3], [1.1]])
    value, ga = yb.value_and_grad(f)(a, b)
    assert value == pytest.approx(f(a, b)) == pytest.approx(np.sum(a * b) * 3 * 6 * 2 * 2 * 2)
    np.testing.assert_allclose(ga, _central_gradient(lambda t: f(t, b), a.copy()), rtol=1e-6)
    assert yb.jvp(f, (a, b), (np.ones(3), np.zeros((2, 1))))[1] == pytest.approx(np.sum(ga))
    check_second_order(f, a, b)


@pytest.mark.parametrize("op", [3.0, [1.0, 2.0]], ids=["float", "list of floats"])
def test_nditer_writable_operand_that_is_not_an_array_is_refused_as_numpy_does(op):
    def f(x):
        total = 0.0
        for v in np.nditer(x, op_flags=["readwrite"]):
            total = total + np.sum(v)
        return total

    with pytest.raises(TypeError, match="writeable"):
        f(op)
    with pytest.raises(TypeError, match="writeable"):
        yb.grad(f)(op)


def test_nditer_output_operand_none_is_refused():
    def f(x):
        for v, out in np.nditer([x, None]):
            out[...] = v * v
        return x

    with pytest.raises(RuleArgumentError, match="None"):
        yb.grad(lambda x: np.sum(f(x)))(np.ones(3))


@pytest.mark.slow
def test_nditer_readwrite_third_order():
    x, w = np.random.default_rng(2).standard_normal((2, 3)), np.array([1.5, -0.5, 2.0])
    check_third_order(_doubles_in_place, x, w, rtol=1e-4, atol=1e-5)


def test_array_likes_are_converted():
    def f(x):
        total = 0.0
        for _, v in np.ndenumerate([x, 2.0 * x]):
            total = total + v * v
        for u, v in np.broadcast([x, 1.0], 3.0 * x):
            total = total + u * v
        return total

    assert yb.grad(f)(0.7) == pytest.approx((f(0.7 + 1e-6) - f(0.7 - 1e-6)) / 2e-6, rel=1e-6)
    assert yb.jvp(f, (0.7,), (1.0,))[1] == pytest.approx(yb.grad(f)(0.7))


def test_flat_write_with_a_tangent_laid_out_otherwise_is_followed():
    """A Fortran-ordered tangent for a C-ordered argument is copied into the argument's layout
    (tangents/layout.py), so the write through the flat view reaches it: never a lost tangent."""
    def write(x):
        x.flat[1] = x.flat[0] ** 2
        return x * 1.0

    x = np.arange(1.0, 7.0).reshape(2, 3)
    tangent = np.asfortranarray(np.arange(6.0).reshape(2, 3) + 3.0)
    expected = (write(x + 1e-6 * tangent) - write(x - 1e-6 * tangent)) / 2e-6
    np.testing.assert_allclose(yb.jvp(write, (x.copy(),), (tangent,))[1], expected, rtol=1e-6, atol=1e-6)
    loss = lambda a: np.sum(write(a) ** 2)  # noqa: E731
    gradient = yb.grad(loss)
    np.testing.assert_allclose(yb.hvp(loss, (x.copy(),), (tangent,))[2][0],
                               (gradient(x + 1e-5 * tangent) - gradient(x - 1e-5 * tangent)) / 2e-5, rtol=1e-5, atol=1e-5)
    _, reads = yb.jvp(lambda x: x.flat[1] * x.flat[4], (x,), (tangent,))
    assert reads == pytest.approx(tangent[0, 1] * x[1, 1] + x[0, 1] * tangent[1, 1])


def _iterated_everywhere(x):
    y = x * 1.0
    y.flat[1:3] = x.flat[3:5] ** 2
    for v in np.nditer(y, op_flags=["readwrite"]):
        v[...] = v * np.cos(v)
    pairs = [u * v for u, v in np.broadcast(y, x[0])]
    return np.array([v * (i[1] + 1) for i, v in np.ndenumerate(y)] + pairs)


def test_jacobians_of_both_modes_agree():
    x = np.random.default_rng(5).standard_normal((2, 3))
    reverse = yb.jacobian(_iterated_everywhere, mode="rev")(x)
    np.testing.assert_allclose(yb.jacobian(_iterated_everywhere, mode="fwd")(x), reverse, rtol=1e-12, atol=1e-12)
    eps = 1e-6
    column = (_iterated_everywhere(x + eps * _WEIGHTS) - _iterated_everywhere(x - eps * _WEIGHTS)) / (2 * eps)
    np.testing.assert_allclose(np.tensordot(reverse, _WEIGHTS, axes=2), column, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
@pytest.mark.parametrize("second", ["C", "T", "reversed"])
def test_nditer_order_of_two_operands_is_numpys(order, second):
    """The elements come in NumPy's order for every ``order=`` and pair of layouts (``'K'``
    follows both operands' strides)."""
    a = np.asfortranarray(np.random.default_rng(6).standard_normal((3, 4)))
    rng = np.random.default_rng(7)
    b = {"C": rng.standard_normal((3, 4)), "T": rng.standard_normal((4, 3)).T,
         "reversed": rng.standard_normal((3, 4))[::-1, ::-1]}[second]

    def weighted(a, b):
        total, k = 0.0, 0.0
        for u, v in np.nditer([a, b], order=order):
            k = k + 1.0
            total = total + k * u * np.sin(v)
        return total

    value, (ga, gb) = yb.value_and_grad(weighted, argnums=(0, 1))(a, b)
    assert value == pytest.approx(weighted(a, b), rel=1e-12)
    np.testing.assert_allclose(ga, _central_gradient(lambda t: weighted(t, b), a), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gb, _central_gradient(lambda t: weighted(a, t), b), rtol=1e-6, atol=1e-8)


def test_nditer_reduction_into_a_broadcast_operand():
    """``reduce_ok`` with a readwrite operand broadcast over the loop: every step writes the same
    element (a view of it), as NumPy's unbuffered iterator does."""
    def total_of(x):
        acc = np.zeros(1)
        for v, out in np.nditer([x, acc], flags=["reduce_ok"], op_flags=[["readonly"], ["readwrite"]]):
            out[...] = out + v * v
        return acc[0]

    x = np.array([0.5, -1.0, 2.0])
    assert total_of(x) == pytest.approx(np.sum(x * x))
    np.testing.assert_allclose(yb.grad(total_of)(x), 2 * x, rtol=1e-12)
    check_second_order(total_of, x)
