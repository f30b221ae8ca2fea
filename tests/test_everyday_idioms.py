"""Everyday idioms of scientific code, each in every mode against central differences, and its
dense Hessian the same whether the columns come one pass each (``chunk_size=1``) or B at a time
(batched forward-over-reverse).

Found by trying code written the way users write it: batched Hessians of ``map``, ``itertools``
and ``scipy.stats`` calls with ``loc=``/``scale=`` keywords were silently wrong (every direction
but the first dropped), while one pass per column was right."""
from __future__ import annotations

import collections
import functools
import itertools
import math
import types

import numpy as np
import pytest
import scipy.linalg as sl
import scipy.special as sp
import scipy.stats as st

import yuebing as yb
from tests.all_modes import check_all_modes
from tests.modes import check_every_mode


def _cube(a):
    return a ** 3


def _with_keywords(x, **kw):
    return np.sum(np.asarray(kw["loc"]) * x ** 2 + kw["scale"] * x)


def _running(x):
    out = []
    for v in x:
        out.append(v * (out[-1] if out else 1.0))
    return sum(out)


def _closure_total(x):
    total = 0.0

    def add(v):
        nonlocal total
        total += v ** 2 * x[0]

    for v in x:
        add(v)
    return total


def _rows_of_lists(x):
    rows = [[], []]
    for v in x:
        rows[0].append(v * v)
    rows[1].append(x[0] * x[1])
    return sum(rows[0]) * x[0] + rows[1][0] * x[2]


def _dict_of_lists(x):
    d = {"a": [], "n": [1, 2]}
    d["a"].append(x[0] ** 2)
    d["a"].extend([x[1], x[2]])
    d["n"].append(x[0] * 3.0)
    return sum(d["a"]) * x[1] + d["n"][2] * x[2]


def _set_add_and_union(x):
    s = set()
    for v in x:
        s.add(v * v)
    return sum(s | {x[0] * x[1]}) * x[2]


class _Problem:
    def __init__(self):
        self.scale = 2.0


_PROBLEM = _Problem()


def _keyed_by_objects(x):
    """cma's CountWarnings: a dict keyed by (object with float attributes, name). Second order
    looked a dict's tangent up by the key's tangent (KeyError)."""
    key = (_PROBLEM, "a")
    d = {key: x[0] * 2, (_PROBLEM, "b"): x[1]}
    e = dict.get(d, key) + d.setdefault((_PROBLEM, "c"), x[2] ** 2) + d.pop((_PROBLEM, "b"))
    return d[key] * e + (key in d) * x[1]


# a module holding a weight matrix, read as mod.W inside array code (reverse mode's array block
# took it for a scalar: "non-broadcastable output operand" in the pullback)
_weights = types.ModuleType("_weights")
_weights.W = np.arange(9.0).reshape(3, 3) / 10


def _sorted_logging_key(x):
    log = []

    def key(v):
        log.append(v * x[0])  # a key that records what it compared: its work has derivatives
        return v

    return sorted(x, key=key)[0] * sum(log)


def _filter_counting(x):
    total = [0.0]

    def keep(v):
        total[0] += v ** 2
        return v > 1.0

    return sum(filter(keep, x)) * total[0]


_Pair = collections.namedtuple("_Pair", "a b")


def _namedtuple_make(x):
    """``_make`` calls ``tuple.__new__(cls, iterable)`` (it had no rule)."""
    q = _Pair._make([x[1], x[2] ** 2])
    return q.a * q.b + tuple.__new__(tuple, [x[0], x[1]])[1] ** 3


IDIOMS = {
    "module_attribute_matrix": lambda x: np.sum((np.sin(x) * np.pi * _weights.W) ** 2),
    # second order lost what was appended to a list read out of another container (a list or
    # dict holding only empty lists or ints passed as structure, its element's tangent a fresh one)
    "rows_of_lists": _rows_of_lists,
    "dict_of_lists": _dict_of_lists,
    "map_lambda": lambda x: sum(map(lambda a: a ** 3, x)),
    "map_def": lambda x: sum(map(_cube, x)),
    "map_np_sin": lambda x: sum(map(np.sin, x)) * x[0],
    "accumulate_product": lambda x: sum(itertools.accumulate(x, lambda a, b: a * b)),
    "accumulate_plain": lambda x: sum(itertools.accumulate(x * x)),
    "reduce": lambda x: functools.reduce(lambda a, b: a * b + 1.0, x),
    "starmap": lambda x: sum(itertools.starmap(lambda a, b: a * b, zip(x, x[::-1]))),
    "sorted_key": lambda x: sum(v * i for i, v in enumerate(sorted(x, key=lambda t: -t))),
    "max_key": lambda x: max(list(x), key=abs) ** 2 * x[1],
    # a key or predicate that changes data was run as plain Python: its work silently dropped
    "sorted_logging_key": _sorted_logging_key,
    "filter_counting": _filter_counting,
    "norm_logpdf_loc_scale": lambda x: np.sum(st.norm.logpdf(x, loc=x[0], scale=x[1])),
    "norm_logpdf_loc": lambda x: np.sum(st.norm.logpdf(x, loc=x[0])),
    "gamma_logpdf": lambda x: np.sum(st.gamma.logpdf(x, 2.0, scale=x[2])),
    "keywords_into_kwargs": lambda x: _with_keywords(x, loc=x[0], scale=x[1] * x[2]),
    "logsumexp_weights": lambda x: sp.logsumexp(x * x[0], b=np.array([1.0, 2.0, 0.5])),
    "special_functions": lambda x: np.sum(sp.gammaln(x) + sp.erf(x) * sp.expit(x) * x[0]),
    "running_list": _running,
    "closure_total": _closure_total,
    "masked_update": lambda x: np.sum(np.where(x > 1.0, x ** 2, x) * x[0]),
    "outer_diagonal": lambda x: np.sum((np.outer(x, x) + np.diag(x)) ** 2),
    "interp": lambda x: np.sum(np.interp([0.1, 0.5, 1.5], [0.0, 1.0, 2.0], x ** 2)),
    "norms": lambda x: np.linalg.norm(x, ord=3) + np.linalg.norm(x) * x[0],
    "expm": lambda x: np.sum(sl.expm(np.array([[x[0], x[1]], [0.0, x[2]]]))),
    "math_functions": lambda x: math.hypot(x[0], x[1]) * math.atan2(x[1], x[2]) + math.log1p(x[0]),
    "r_concatenate": lambda x: np.sum(np.r_[x, x[:2] ** 2] ** 2),
    "statistics": lambda x: np.std(x) * np.mean(x) + np.var(x, ddof=1),
    # opfunu's Branin01: constants computed from module attributes inside an array expression
    # (forward mode's array block of constants only did not compile)
    # forward mode's float block took x for a float when it read x[0] and used x whole
    "element_and_whole": lambda x: np.sum((2 * x + np.array([x[1], x[0], x[2]])) * np.array([0.3, -0.8, 0.5])),
    # cma.ff's cigar/rosen/tablet (``x = [x] if isscalar(x[0]) else x`` then ``... for x in x``): the
    # first iterable, which Python evaluates in the enclosing scope, was renamed to the loop variable
    "comprehension_shadows_its_iterable": lambda x: sum([x[0] ** 2 + 3 * sum(x[1:] ** 2) for x in [x, x * 2]]),
    "generator_shadows_its_iterable": lambda x: sum(x ** 3 for x in x) + sum(sum(r) for r in [[v * x[0] for v in x] for x in [x]]),
    # batched forward mode (yb.jacobian(mode="fwd")) refused dict views and set methods
    "sum_dict_values": lambda x: sum({i: v ** 2 * x[0] for i, v in enumerate(x)}.values()),
    "max_dict_values": lambda x: max(dict(a=x[0] * x[1], b=x[2]).values()) * x[0],
    "set_comprehension": lambda x: sum({v * x[0] for v in x}),
    "set_add_and_union": _set_add_and_union,
    "dict_keyed_by_objects": _keyed_by_objects,
    "namedtuple_make": _namedtuple_make,
    "branin": lambda x: ((x[1] - (5.1 / (4 * np.pi ** 2)) * x[0] ** 2 + 5 * x[0] / np.pi - 6) ** 2
                         + 10 * (1 - 1 / (8 * np.pi)) * np.cos(x[0]) + 10),
}

POINT = np.array([0.3, 1.2, 2.0])


@pytest.mark.parametrize("name", sorted(IDIOMS))
def test_every_mode(name):
    check_every_mode(IDIOMS[name], POINT)


@pytest.mark.parametrize("name", sorted(IDIOMS))
def test_batched_hessian_is_per_column_hessian(name):
    f = IDIOMS[name]
    per_column = yb.hessian(f, chunk_size=1)(POINT.copy())
    batched = yb.hessian(f, chunk_size=POINT.size)(POINT.copy())
    np.testing.assert_allclose(batched, per_column, rtol=1e-10, atol=1e-12)


def test_namedtuple_replace():
    """``_replace`` makes its namedtuple with ``_make`` from ``map(kwds.pop, fields, self)``, which
    pops the keywords' dict in place: batched forward mode (``jacobian(mode="fwd")``, the dense
    Hessian) runs ``map`` as its definition, each ``pop`` on the batched dict (it was refused)."""
    def f(x):
        p = _Pair(x[0], x[1])._replace(a=x[0] * x[2])
        return p.a * p.b + p._replace(b=x[2])[1] ** 2

    check_every_mode(f, POINT)
    np.testing.assert_allclose(yb.hessian(f, chunk_size=POINT.size)(POINT.copy()),
                               yb.hessian(f, chunk_size=1)(POINT.copy()), rtol=1e-12)


def test_batched_map_of_a_mutating_function():
    """``map`` of a function that changes a container (``list.append``, ``dict.pop``) in batched
    forward mode: the changes land in the batched tangent, as in one direction at a time."""
    def f(x):
        out = []
        list(map(out.append, x * x))
        scales = {"a": x[0], "b": x[1] * 2.0}
        taken = list(map(scales.pop, ["b"]))
        return np.sum(np.array(out) * taken[0]) + scales["a"] ** 3 + len(scales)

    check_every_mode(f, POINT)
