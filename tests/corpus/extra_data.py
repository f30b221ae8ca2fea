"""Derived-rule corpus, extended: NumPy operations, mutation of arguments (directly and through
views), aliasing between arguments, containers."""
import numpy as np

from yuebing.testing.cases import randn, randpos, randu
from . import corpus_registry

CORPUS, case = corpus_registry()


# ---------------------------------------------------------------- ndarray operations

@case(randn(3, 4), randn(4, 2), randn(2))
def matmul_broadcast_bias(a, b, c):
    h = a @ b + c          # (3, 2) + (2,)
    g = np.tanh(h) * c[None, :]
    return np.sum(g @ g.T)


@case(randn(4, 3))
def reductions_with_axis(a):
    col_mean = a.mean(axis=0)
    row_sum = np.sum(a * a, axis=1)
    centred = a - col_mean
    var = np.mean(centred ** 2, axis=0)
    return np.sum(var) + np.prod(row_sum[:2] + 1.0) + np.max(a, axis=1).sum()


@case(randn(6))
def cumsum_and_diff(x):
    c = np.cumsum(x)
    cp = np.cumprod(1.0 + 0.1 * x)
    return np.sum(c * c) + cp[-1] + np.sum(np.diff(c) * x[1:])


@case(np.array([0.81, -1.3, 0.42, -0.25, 1.7, -0.66, 0.12, 2.1]),
      np.array([-0.3, 1.1, 0.55, -1.6, 0.2, 0.9, -0.45, 1.4]))
def where_clip_maximum(x, y):
    a = np.where(x > 0.0, x * y, -x)
    b = np.clip(y, -0.75, 0.75)
    c = np.maximum(x, 0.25 * y)
    d = np.minimum(x * 2.0, 1.0)
    return np.sum(a + b * c + d)


@case(randn(3), randn(2, 3))
def concatenate_stack_reshape(a, b):
    c = np.concatenate([a, b[0], b[1] * 2.0])       # (9,)
    m = c.reshape(3, 3)
    s = np.stack([a, b[1], a * b[0]], axis=1)       # (3, 3)
    v = np.vstack([m, s]).ravel()
    h = np.hstack([a, a])
    return np.sum(m @ s) + np.dot(v[:6], h) + np.sum(np.transpose(m) * s)


@case(randn(5, 4))
def advanced_indexing(a):
    rows = np.array([0, 2, 4, 2])
    cols = np.array([1, 3, 0, 1])
    picked = a[rows, cols]
    sub = a[[1, 3]][:, [0, 2]]
    block = a[np.ix_([0, 1], [2, 3])]
    return np.sum(picked ** 2) + np.sum(sub * block)


@case(np.array([0.93, -0.21, 0.05, -1.4, 0.71, 0.33, -0.68, 1.9, -0.12, 0.26, -0.95, 0.61]))
def boolean_indexing(x):
    mask = np.abs(x) > 0.5
    pos = x[mask]
    y = x.copy()
    y[~mask] = y[~mask] * 3.0
    return np.sum(pos ** 2) + np.sum(y * x)


@case(randn(5), randpos(5))
def inplace_ufuncs_with_out(x, s):
    out = np.empty_like(x)
    np.multiply(x, s, out=out)
    np.add(out, 1.0, out=out)
    np.exp(out, out=out)
    tmp = np.zeros(5)
    np.divide(out, s, out=tmp)
    np.subtract(tmp, x, out=tmp)
    return np.sum(tmp * out)


@case(randn(4), randn(3))
def outer_and_einsum_like(u, v):
    o = np.outer(u, v)
    w = u[:, None] * v[None, :]
    return np.sum(o * w) + np.trace(o[:3, :3]) + np.sum(np.einsum("i,j->ij", u, v) ** 2)


@case(randn(3, 3))
def norms_and_linalg(a):
    m = a @ a.T + 3.0 * np.eye(3)
    return np.linalg.norm(a) + np.log(np.linalg.det(m)) + np.sum(np.linalg.inv(m)) + np.sum(np.linalg.solve(m, a[0]))


@case(randpos(6))
def elementwise_math_chain(x):
    y = np.sqrt(x) * np.log1p(x) + np.exp(-x) / (1.0 + x ** 2)
    z = np.arctan(y) + np.cos(x) * np.sinh(0.3 * x)
    return np.sum(z ** 2) + np.mean(np.power(x, 1.5))


@case(randn(2, 3, 2))
def transpose_swapaxes_squeeze(a):
    b = np.transpose(a, (2, 0, 1))         # (2, 2, 3)
    c = np.swapaxes(a, 0, 2)               # (2, 3, 2)
    d = a[:, :1, :].squeeze(1)             # (2, 2)
    e = np.expand_dims(d, 0) * b[:, :, :2]
    return np.sum(e) + np.sum(c * c) + np.sum(b[..., 0])


# ---------------------------------------------------------------- mutation of arguments through views

@case(randn(4, 3))
def mutate_argument_row(a):
    a[0] = a[0] * a[1]
    a[2] += a[3]
    return np.sum(a[:, 0])


@case(randn(3, 4))
def mutate_argument_column_slice(a):
    col = a[:, 1]
    col *= 2.0
    a[:, 2:] -= a[:, :2] * 0.5
    return np.sum(a ** 2)


@case(randn(12))
def mutate_through_reshaped_view(x):
    m = x.reshape(3, 4)
    m[1, :] = m[1, :] * m[0, :]
    m[:, 0] += 1.0
    return np.sum(x ** 3)


@case(randn(3, 3))
def mutate_through_transpose(a):
    t = a.T
    t[0] = t[0] + t[1] * 2.0   # writes column 0 of a
    t[2, 1] *= 3.0
    return np.sum(a @ a)


@case(randu(10, low=-1.0, high=1.0))
def mutate_strided_view(x):
    even = x[::2]
    odd = x[1::2]
    even += odd * 0.5
    odd *= even
    x[-1] = x[0] * x[1]
    return x


@case(randn(6))
def return_view_after_mutation(x):
    v = x[1:4]
    v[:] = np.sin(v)
    return v[::-1]


@case([randn(3), randn(3)], {"lr": 0.1, "n": 3})
def mutate_list_of_arrays(params, cfg):
    for _ in range(cfg["n"]):
        for p in params:
            p -= cfg["lr"] * 2.0 * p * p
    return np.sum(params[0] * params[1])


@case({"x": randn(3), "y": 0.5, "hist": []})
def mutate_dict_of_mixed(state):
    for k in range(3):
        state["x"] = state["x"] * state["y"] + 0.1
        state["y"] += 0.05 * np.sum(state["x"])
        state["hist"].append(state["y"])
    return sum(state["hist"])


@case([0.5, 1.5, -0.7, 2.0])
def list_methods_mutation(xs):
    xs.insert(1, xs[0] * 2.0)
    last = xs.pop()
    xs.extend([last * last, 0.3])
    xs.reverse()
    xs[2] = xs[2] * xs[0]
    del xs[-1]
    return sum(xs) + last


# ---------------------------------------------------------------- aliasing between arguments

def _axpy_inplace(a, x, y):
    y += a * x
    return np.sum(y * x)


@case(0.7, randn(4))
def same_array_twice(a, x):
    return _axpy_inplace(a, x, x)


def _scale_first(lst, first):
    first *= 2.0          # ndarray in place: the same object as lst[0]
    lst[1] = lst[1] + np.sum(first)
    return np.sum(lst[0]) * lst[1]


@case([randn(3), 0.4])
def list_and_its_element(lst):
    return _scale_first(lst, lst[0])


@case(randn(6))
def overlapping_views_of_one_array(x):
    a = x[:4]
    b = x[2:]
    a *= 2.0
    b[:2] += a[:2] * 0.1      # b[:2] is x[2:4], which a also covers
    return np.sum(x * x)


@case(*(lambda v: (v, v))(randn(3)))
def aliased_top_level_arguments(a, b):
    # check_rule receives the same array object twice
    a *= 2.0
    return np.sum(a * b) + np.sum(b)


_shared = randn(2)


@case([_shared, _shared, 0.3])
def list_holding_one_array_twice(xs):
    xs[0] += xs[2]
    return np.sum(xs[1] ** 2) + np.sum(xs[0])


# ---------------------------------------------------------------- cyclic containers

def _self_list(v):
    lst = [v, 0.5]
    lst.append(lst)
    return lst


@case(_self_list(1.3))
def list_containing_itself(lst):
    s = 0.0
    cur = lst
    for _ in range(4):
        s += cur[0] * cur[1]
        cur[1] = cur[1] + 0.1 * cur[0]
        cur = cur[2]
    return s


def _self_dict():
    d = {"v": 0.8}
    d["self"] = d
    d["data"] = [0.4, d]
    return d


@case(_self_dict())
def dict_cycle(d):
    s = d["self"]["self"]["v"] * d["data"][0]
    d["data"][1]["v"] *= 2.0
    return s + d["v"]


# ---------------------------------------------------------------- more aliasing and in-place patterns

@case(0.7, 1.9)
def list_of_lists_aliased_by_multiplication(x, y):
    rows = [[x, y]] * 3          # three references to one inner list
    rows[0][0] = rows[0][0] * 2.0
    rows[1][1] += x
    return rows[2][0] * rows[2][1] + sum(r[0] for r in rows)


@case(randn(3, 2))
def swap_rows_through_views(a):
    # the classic NumPy pitfall: a[1] is a view, so after the tuple assignment both rows equal a's old
    # row 1; the derivative must follow the primal semantics exactly
    a[0], a[1] = a[1], a[0]
    return np.sum(a * np.arange(1.0, 7.0).reshape(3, 2))


@case(randn(3, 2))
def swap_rows_with_copies(a):
    a[[0, 1]] = a[[1, 0]]
    return np.sum(a * np.arange(1.0, 7.0).reshape(3, 2))


@case(randn(6), np.array([0, 2, 2, 1, 0, 3]))
def scatter_add_at(w, bins):
    hist = np.zeros(4)
    np.add.at(hist, bins, w * w)
    return np.sum(hist * np.array([1.0, 2.0, 3.0, 4.0]))


@case(np.array([0.3, -1.2, 2.2, 0.9, -0.4]))
def sort_argument_in_place(x):
    x.sort()
    w = np.linspace(1.0, 2.0, 5)
    return np.sum(x * w) + np.sort(-x)[0]


@case(randn(5))
def early_return_after_mutation(x):
    for i in range(len(x)):
        x[i] = x[i] * 2.0 + 0.1
        if i == 2:
            return np.sum(x * x)
    return 0.0


def _collect(node, out):
    if isinstance(node, list):
        for child in node:
            _collect(child, out)
    else:
        out.append(node * node)


@case([0.4, [1.3, [0.2]], [[-0.8, 0.5]]])
def recursion_with_shared_accumulator(tree):
    acc = []
    _collect(tree, acc)
    _collect(tree[1], acc)
    return sum(acc) * acc[0]
