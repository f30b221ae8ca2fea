"""Derived-rule corpus: NumPy data, mutation, views and aliasing."""
import numpy as np

from yuebing.testing.cases import randn, randpos
from . import corpus_registry

CORPUS, case = corpus_registry()


@case(randn(4))
def array_item_assignment(x):
    y = np.zeros(4)
    for i in range(4):
        y[i] = x[i] * x[i]
    return np.sum(y)


@case(randn(5))
def slice_assignment(x):
    y = x.copy()
    y[1:3] = x[:2] * 2.0
    return np.sum(y * y)


@case(randn(5))
def mask_assignment(x):
    y = x * 1.0
    y[y < 0] = 0.0
    return np.sum(y * x)


@case(randn(5))
def fancy_index_repeated(x):
    idx = np.array([0, 2, 2, 4])
    return np.sum(x[idx] ** 2)


@case(randn(5))
def mutate_argument_in_place(x):
    x[0] = x[1] * 3.0
    x *= 2.0
    return np.sum(x)


@case(randn(4, 3))
def mutate_through_view(a):
    row = a[1]
    row[:] = row * 2.0
    return np.sum(a * a)


@case(randn(6))
def view_shares_memory(x):
    y = x * 1.0
    v = y[2:]
    v += 1.0
    return np.sum(y * y)


@case(randn(4))
def ufunc_out_argument(x):
    y = np.empty(4)
    np.sin(x, out=y)
    np.multiply(y, x, out=y)
    return np.sum(y)


@case(randn(3), randn(3))
def aliased_arguments(a, b):
    a += b
    return np.sum(a * b)


@case([randn(2), 1.5])
def list_mutation(xs):
    xs.append(xs[1] * 2.0)
    xs[0] = xs[0] * xs[2]
    return np.sum(xs[0]) + xs[1]


@case({"w": randn(3), "b": 0.5})
def dict_mutation(params):
    params["w2"] = params["w"] * params["b"]
    params["b"] = params["b"] + 1.0
    return np.sum(params["w2"]) * params["b"]


@case(randn(5))
def explicit_euler_preallocated(x0):
    n = 8
    dt = 0.1
    out = np.zeros((n + 1, x0.shape[0]))
    out[0] = x0
    for k in range(n):
        out[k + 1] = out[k] + dt * (-out[k] ** 3 + np.sin(out[k]))
    return np.sum(out[-1] ** 2)


@case(randn(10))
def stencil_on_slices(u):
    v = u.copy()
    for _ in range(3):
        v[1:-1] = v[1:-1] + 0.2 * (v[:-2] - 2.0 * v[1:-1] + v[2:])
    return np.sum(v * v)


@case([3.0, 1.0, 2.0, 0.5])
def bubble_sort_by_swaps(xs):
    ys = list(xs)
    n = len(ys)
    for i in range(n):
        for j in range(n - 1 - i):
            if ys[j] > ys[j + 1]:
                ys[j], ys[j + 1] = ys[j + 1], ys[j]
    w = 1.0
    s = 0.0
    for v in ys:
        s += w * v
        w += 1.0
    return s


@case([("a", 0.5), ("b", 1.5), ("a", 2.0)])
def dict_accumulator(pairs):
    totals = {}
    for key, value in pairs:
        if key in totals:
            totals[key] = totals[key] + value * value
        else:
            totals[key] = value
    return totals["a"] * totals["b"]


@case(randn(3))
def array_returned_is_argument(x):
    x *= 2.0
    return x


@case(randn(4))
def output_is_view_of_argument(x):
    return x[1:3]


@case(randpos(5))
def logsumexp_pattern(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))
