"""One argument holding arrays that are views of one memory (``(a, a[1:])``, ``[a, a[::2]]``, a dict
of views): every mode differentiates through the shared memory (one tangent per memory,
DESIGN.md §2). The Jacobian with respect to a view is the derivative with respect to the memory
elements it shows, so forward and reverse Jacobians, gradients, JVPs and HVPs are checked against
central differences of ``h(base) = f(make(base))``, the function of the memory itself."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from tests.modes import central


def _pair(base):
    return (base, base[1:])


def _strided_list(base):
    return [base, base[::2]]


def _overlapping_slices(base):
    return (base[:4], base[2:])  # the base itself is not in the structure


def _dict_of_views(base):
    grid = base.reshape(2, 3)
    return {"row": grid[0], "column": grid[:, 1], "grid": grid, "scale": 0.5}


def _nested(base):
    return {"pair": (base[:4], base[2:]), "items": [base[::3]]}


CASES = {
    "tuple": (_pair, lambda t: np.concatenate([np.sin(t[0]) * 2.0, t[1] ** 2 * t[0][0]])),
    "list strided": (_strided_list, lambda t: np.concatenate([t[0] ** 3, np.exp(t[1]) * t[0][1]])),
    "overlapping slices": (_overlapping_slices, lambda t: t[0] * t[1][::-1] + np.cos(t[1])),
    "dict": (_dict_of_views, lambda d: np.concatenate([d["row"] * d["column"][1:], (d["grid"] ** 2).ravel()])
             * d["scale"]),
    "nested": (_nested, lambda d: np.concatenate([d["pair"][0] * d["pair"][1], np.tanh(d["items"][0])])),
}

BASE = np.linspace(0.2, 1.3, 6)


def _leaves(make):
    """``(path getter, indices of the base's elements the leaf shows)`` for each array leaf."""
    shown = make(np.arange(BASE.size))
    found = []

    def walk(v, get):
        if isinstance(v, np.ndarray):
            found.append((get, v))
        elif isinstance(v, dict):
            for k in v:
                walk(v[k], lambda s, k=k, get=get: get(s)[k])
        elif isinstance(v, (tuple, list)):
            for i, item in enumerate(v):
                walk(item, lambda s, i=i, get=get: get(s)[i])

    walk(shown, lambda s: s)
    return found


def _memory_jacobian(make, f):
    return central(lambda base: f(make(base.copy())), BASE, 1e-6)  # (f may write into it)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("mode, chunk_size", [("rev", None), ("fwd", None), ("fwd", 1), ("fwd", 2)])
def test_jacobian_is_the_derivative_through_shared_memory(name, mode, chunk_size):
    make, f = CASES[name]
    expected = _memory_jacobian(make, f)
    jac = yb.jacobian(f, mode=mode, chunk_size=chunk_size)(make(BASE.copy()))
    for get, indices in _leaves(make):
        np.testing.assert_allclose(get(jac), expected[:, indices], rtol=1e-6, atol=1e-8,
                                   err_msg=f"{name}: {mode}, chunk_size={chunk_size}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_jvp_and_hvp_agree_with_differences_of_the_memory(name):
    make, f = CASES[name]
    loss = lambda s: np.sum(f(s) ** 2)  # noqa: E731
    memory_loss = lambda base: loss(make(base))  # noqa: E731
    direction = np.linspace(0.3, 1.1, BASE.size)
    slope = (memory_loss(BASE + 1e-6 * direction) - memory_loss(BASE - 1e-6 * direction)) / 2e-6
    memory_gradient = central(memory_loss, BASE, 1e-6)

    gradient = yb.grad(loss)(make(BASE.copy()))
    for get, indices in _leaves(make):
        np.testing.assert_allclose(get(gradient), memory_gradient[indices], rtol=1e-6, atol=1e-8)

    # the tangent as views of one array, and as separate arrays that agree where they overlap
    for tangent in (_tangent(make(direction.copy()), lambda a: a), _tangent(make(direction.copy()), np.copy)):
        _, t = yb.jvp(loss, (make(BASE.copy()),), (tangent,))
        np.testing.assert_allclose(t, slope, rtol=1e-6)
        _, _, (hv,) = yb.hvp(loss, (make(BASE.copy()),), (tangent,))
        memory_gradient_along = (yb.grad(lambda b: memory_loss(b))(BASE + 1e-5 * direction)
                                 - yb.grad(lambda b: memory_loss(b))(BASE - 1e-5 * direction)) / 2e-5
        for get, indices in _leaves(make):
            np.testing.assert_allclose(get(hv), memory_gradient_along[indices], rtol=1e-5, atol=1e-7)


def _tangent(structure, array):
    """A tangent of the structure made from the memory's tangent: its arrays as ``array`` makes
    them (the same views, or independent copies), its floats 0 (they are not memory)."""
    if isinstance(structure, np.ndarray):
        return array(structure)
    if isinstance(structure, dict):
        return {k: _tangent(v, array) for k, v in structure.items()}
    if isinstance(structure, (tuple, list)):
        return type(structure)(_tangent(v, array) for v in structure)
    return 0.0


@pytest.mark.parametrize("run", [
    lambda f, x, t: yb.jvp(f, (x,), (t,)),
    lambda f, x, t: yb.hvp(f, (x,), (t,)),
], ids=["jvp", "hvp"])
def test_separate_tangents_that_disagree_on_shared_memory_are_refused(run):
    base = BASE.copy()
    loss = lambda t: np.sum(t[0] ** 2) + np.sum(t[1] ** 3)  # noqa: E731
    with pytest.raises(ValueError, match=r"primals\[0\]\[0\] and primals\[0\]\[1\] disagree on the memory"):
        run(loss, [base, base[::2]], [np.ones(6), np.array([1.0, 2.0, 1.0])])


def test_a_write_through_one_view_is_seen_by_the_other_in_every_jacobian():
    def f(t):
        a, b = t
        b *= a[0]  # writes the memory a shows too
        return a * np.sin(a)

    make = _pair
    expected = _memory_jacobian(make, f)
    for mode in ("rev", "fwd"):
        jac = yb.jacobian(f, mode=mode)(make(BASE.copy()))
        for get, indices in _leaves(make):
            np.testing.assert_allclose(get(jac), expected[:, indices], rtol=1e-6, atol=1e-8, err_msg=mode)


def test_outputs_that_are_views_of_one_array_get_the_same_rows_in_both_modes():
    def f(x):
        y = np.sin(x) * x[0]
        return y, y[1:]

    x = BASE.copy()
    expected = central(lambda v: np.sin(v) * v[0], x, 1e-6)
    for mode in ("rev", "fwd"):
        whole, tail = yb.jacobian(f, mode=mode)(x)
        np.testing.assert_allclose(whole, expected, rtol=1e-6, atol=1e-8, err_msg=mode)
        np.testing.assert_allclose(tail, expected[1:], rtol=1e-6, atol=1e-8, err_msg=mode)
