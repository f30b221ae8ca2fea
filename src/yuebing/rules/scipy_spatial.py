"""``scipy.spatial.distance``: ``cdist``, ``pdist`` and ``squareform``, written in NumPy and
differentiated like user code in every mode (``second_order.defined_as``), after SciPy's own
function has checked the arguments on the primals.

SciPy computes the distances in C++ (pybind11), so its Python wrappers cannot be followed. Here a
metric is a formula on pairs of rows, ``u`` and ``v`` broadcast against each other (``cdist``:
``XA[:, None]`` with ``XB[None]``; ``pdist``: the pairs ``i < j``). Covered, with their weights
``w=`` (differentiated too): ``euclidean``, ``sqeuclidean``, ``cityblock``, ``minkowski`` (``p=``),
``chebyshev``, ``cosine``, ``correlation``, ``braycurtis``, ``canberra``, ``hamming``, and without
weights ``seuclidean`` (``V=``; by default the sample variance of the rows, differentiated),
``mahalanobis`` (``VI=``; by default the inverse covariance of the rows, differentiated) and
``jensenshannon`` (SciPy 1.17's ``cdist``/``pdist`` refuse its ``base=``). A callable metric is
called on each pair of rows, as SciPy does, and differentiated as user code. The other boolean
metrics (``dice``, ``jaccard``, ``rogerstanimoto``, ``russellrao``, ``sokalsneath``, ``yule``)
count equal or nonzero entries: they are piecewise constant, with derivative 0 in the points
(refused with ``w=``). ``out=`` is refused (assign the result instead).

Conventions (docs/conventions.md): a distance that is a norm (``euclidean``, ``minkowski``,
``seuclidean``, ``mahalanobis``) has gradient 0 at coincident points, like ``np.linalg.norm`` at
0; ``cityblock`` and ``canberra`` follow ``abs'(0) = 0`` and ``chebyshev`` splits ties evenly, as
``np.max`` does; a ``canberra`` term ``0/0`` is 0 (SciPy's ``nansum``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .cases import Case, randn, randpos
from .core import RuleArgumentError
from .declare import nondifferentiable
from .second_order import defined_as

try:
    import scipy.spatial.distance as _distance
except ImportError:  # SciPy is optional
    _distance = None

_WEIGHTED = {"euclidean", "sqeuclidean", "cityblock", "minkowski", "chebyshev", "cosine", "correlation",
             "braycurtis", "canberra", "hamming"}
_UNWEIGHTED = {"seuclidean", "mahalanobis", "jensenshannon"}
_COUNTING = {"dice", "jaccard", "rogerstanimoto", "russellrao", "sokalsneath", "yule"}
_COVERED = _WEIGHTED | _UNWEIGHTED | _COUNTING


# --------------------------------------------------------------------------------------------
# Checking the call (on the primals, before the definition runs)
# --------------------------------------------------------------------------------------------


def _metric_name(metric: Any) -> str:
    """SciPy's canonical name of a metric given as a string (``'eu'`` -> ``'euclidean'``)."""
    info = _distance._METRIC_ALIAS.get(str(metric).lower())
    return str(metric) if info is None else info.canonical_name


def _refuse(function: str, metric: Any, kwargs: dict, out: Any) -> None:
    """Raise ``RuleArgumentError`` for what the definitions do not cover."""
    label = f"scipy.spatial.distance.{function}"
    if out is not None:
        raise RuleArgumentError(f"{label}: yuebing does not differentiate out=; assign the result instead "
                                f"(D = {function}(...))")
    if callable(metric):
        return
    name = _metric_name(metric)
    if name not in _COVERED:
        raise RuleArgumentError(
            f"{label}: yuebing has no derivative for metric={metric!r}; use one of {', '.join(sorted(_COVERED))}, "
            "or pass the metric as a Python function of two rows (it is then differentiated as your code)")
    if kwargs.get("w") is not None and name not in _WEIGHTED:
        raise RuleArgumentError(
            f"{label}: yuebing differentiates metric={metric!r} without w=; pass the weighted metric as a "
            "Python function of two rows (it is then differentiated as your code)")


def _check_cdist(XA, XB, metric="euclidean", *, out=None, **kwargs):
    _refuse("cdist", metric, kwargs, out)
    if not callable(metric):  # SciPy's own checks (shapes, p > 0, V's length); a callable would run twice
        _distance.cdist(XA, XB, metric, **kwargs)


def _check_pdist(X, metric="euclidean", *, out=None, **kwargs):
    _refuse("pdist", metric, kwargs, out)
    if not callable(metric):
        _distance.pdist(X, metric, **kwargs)


# --------------------------------------------------------------------------------------------
# The metrics, on rows u and v broadcast against each other (the last axis is the coordinate)
# --------------------------------------------------------------------------------------------


def _weighted(d, w):
    return d if w is None else d * w


def _norm(d):
    """The Euclidean norm of the last axis, with gradient 0 at 0 (docs/conventions.md)."""
    return np.linalg.norm(d, axis=-1)


def _euclidean(u, v, w=None):
    return _norm(_weighted(u - v, None if w is None else np.sqrt(w)))


def _sqeuclidean(u, v, w=None):
    d = u - v
    return np.sum(_weighted(d * d, w), axis=-1)


def _cityblock(u, v, w=None):
    return np.sum(_weighted(np.abs(u - v), w), axis=-1)


def _minkowski(u, v, p=2.0, w=None):
    d = u - v if w is None else (u - v) * w ** (1.0 / p)
    return np.linalg.norm(d, ord=p, axis=-1)


def _chebyshev(u, v, w=None):
    d = np.abs(u - v)
    return np.max(d if w is None else (w > 0) * d, axis=-1)


def _correlation(u, v, w=None, centered=True):
    """SciPy's ``correlation``: ``1 - u.v / (|u| |v|)`` of the (weighted-)centred rows, clipped to [0, 2]."""
    if w is not None:
        w = w / np.sum(w)
    if centered:
        u = u - (np.mean(u, axis=-1, keepdims=True) if w is None else np.sum(u * w, axis=-1, keepdims=True))
        v = v - (np.mean(v, axis=-1, keepdims=True) if w is None else np.sum(v * w, axis=-1, keepdims=True))
    uv = np.sum(_weighted(u * v, w), axis=-1)
    uu = np.sum(_weighted(u * u, w), axis=-1)
    vv = np.sum(_weighted(v * v, w), axis=-1)
    return np.clip(1.0 - uv / np.sqrt(uu * vv), 0.0, 2.0)


def _cosine(u, v, w=None):
    return _correlation(u, v, w, centered=False)


def _braycurtis(u, v, w=None):
    return np.sum(_weighted(np.abs(u - v), w), axis=-1) / np.sum(_weighted(np.abs(u + v), w), axis=-1)


def _canberra(u, v, w=None):
    scale = np.abs(u) + np.abs(v)
    zero = scale == 0  # 0/0 terms count 0 (SciPy's nansum)
    terms = np.where(zero, 0.0, np.abs(u - v) / np.where(zero, 1.0, scale))
    return np.sum(_weighted(terms, w), axis=-1)


def _hamming(u, v, w=None):
    differs = (u != v) * 1.0
    if w is None:
        return np.mean(differs, axis=-1)
    return np.sum(differs * w, axis=-1) / np.sum(w)


def _seuclidean(u, v, V):
    return _norm((u - v) / np.sqrt(V))


def _mahalanobis(u, v, VI):
    d = u - v
    squared = np.sum(d * np.matmul(d, np.transpose(VI)), axis=-1)  # d^T VI d, row by row
    positive = squared > 0
    # sqrt'(0) is inf: at coincident points the gradient is 0, as for a norm (docs/conventions.md)
    return np.where(positive, np.sqrt(np.where(positive, squared, 1.0)), 0.0)


def _relative_entropy(p, m):
    """``rel_entr(p, m)`` for ``m >= p/2``: ``p log(p/m)``, 0 where ``p`` is 0."""
    positive = p > 0
    return np.where(positive, p * np.log(np.where(positive, p, 1.0) / np.where(positive, m, 1.0)), 0.0)


def _jensenshannon(u, v):
    p = u / np.sum(u, axis=-1, keepdims=True)
    q = v / np.sum(v, axis=-1, keepdims=True)
    m = (p + q) / 2.0
    js = np.sum(_relative_entropy(p, m), axis=-1) + np.sum(_relative_entropy(q, m), axis=-1)
    return np.sqrt(js / 2.0)


_FORMULAS = {
    "euclidean": _euclidean, "sqeuclidean": _sqeuclidean, "cityblock": _cityblock, "minkowski": _minkowski,
    "chebyshev": _chebyshev, "cosine": _cosine, "correlation": _correlation, "braycurtis": _braycurtis,
    "canberra": _canberra, "hamming": _hamming, "seuclidean": _seuclidean, "mahalanobis": _mahalanobis,
    "jensenshannon": _jensenshannon,
}


def _counting_cdist(XA, XB, name):
    return _distance.cdist(XA, XB, name)


def _counting_pdist(X, name):
    return _distance.pdist(X, name)


nondifferentiable(_metric_name, _counting_cdist, _counting_pdist)


# --------------------------------------------------------------------------------------------
# cdist, pdist, squareform
# --------------------------------------------------------------------------------------------


def _row_statistics(name, rows, kwargs):
    """SciPy's defaults computed from the rows: ``V`` of seuclidean, ``VI`` of mahalanobis."""
    if name == "seuclidean" and kwargs.get("V") is None:
        return {**kwargs, "V": np.var(rows, axis=0, ddof=1)}
    if name == "mahalanobis" and kwargs.get("VI") is None:
        return {**kwargs, "VI": np.transpose(np.linalg.inv(np.atleast_2d(np.cov(np.transpose(rows)))))}
    return kwargs


def _float_keywords(kwargs):
    """``w=``, ``V=``, ``VI=`` given as lists (of ints too) as the float arrays SciPy makes of them."""
    return {k: np.asarray(v, dtype=np.float64) if k in ("w", "V", "VI") and v is not None else v
            for k, v in kwargs.items()}


def _cdist(XA, XB, metric="euclidean", *, out=None, **kwargs):
    """``cdist``: ``D[i, j] = metric(XA[i], XB[j])``."""
    if callable(metric):
        XA, XB = np.asarray(XA), np.asarray(XB)
        if len(XA) == 0 or len(XB) == 0:
            return np.zeros((len(XA), len(XB)))
        return np.array([[metric(u, v, **kwargs) for v in XB] for u in XA], dtype=np.float64)
    XA, XB = np.asarray(XA, dtype=np.float64), np.asarray(XB, dtype=np.float64)
    kwargs = _float_keywords(kwargs)
    name = _metric_name(metric)
    if name in _COUNTING:
        return _counting_cdist(XA, XB, name)
    kwargs = _row_statistics(name, np.concatenate([XA, XB]), kwargs)
    return _FORMULAS[name](XA[:, None, :], XB[None, :, :], **kwargs)


def _pdist(X, metric="euclidean", *, out=None, **kwargs):
    """``pdist``: ``metric(X[i], X[j])`` for ``i < j``, row by row (the condensed matrix)."""
    X = np.asarray(X) if callable(metric) else np.asarray(X, dtype=np.float64)
    first, second = np.triu_indices(len(X), 1)
    if callable(metric):
        return np.array([metric(X[i], X[j], **kwargs) for i, j in zip(first, second)], dtype=np.float64)
    name = _metric_name(metric)
    if name in _COUNTING:
        return _counting_pdist(X, name)
    return _FORMULAS[name](X[first], X[second], **_row_statistics(name, X, _float_keywords(kwargs)))


def _squareform(X, force="no", checks=True):
    """``squareform``: the condensed vector to the symmetric matrix with zero diagonal, or back (the
    upper triangle, row by row, as SciPy reads it)."""
    X = np.asarray(X)
    if force.lower() == "tomatrix" or (force.lower() != "tovector" and X.ndim == 1):
        n = max(int(np.ceil(np.sqrt(X.shape[0] * 2))), 1)  # the empty vector is the 1 x 1 zero matrix
        upper = np.zeros((n, n), dtype=X.dtype)
        upper[np.triu_indices(n, 1)] = X
        return upper + np.transpose(upper)
    return X[np.triu_indices(X.shape[0], 1)]


if _distance is not None:
    defined_as(_distance.cdist, _cdist, validate=_check_cdist)
    defined_as(_distance.pdist, _pdist, validate=_check_pdist)
    defined_as(_distance.squareform, _squareform, validate=True)


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


def _cases() -> list:
    if _distance is None:
        return []
    cdist, pdist, squareform = _distance.cdist, _distance.pdist, _distance.squareform
    xa, xb, w = randn(4, 3), randn(5, 3), randpos(3)
    cases = [Case(cdist, xa, xb, name) for name in ("euclidean", "sqeuclidean", "cityblock", "chebyshev", "cosine",
                                                    "correlation", "braycurtis", "canberra", "seuclidean")]
    cases += [Case(pdist, randn(5, 3), name) for name in ("euclidean", "sqeuclidean", "cityblock", "cosine",
                                                         "correlation", "canberra", "seuclidean")]
    cases += [
        Case(cdist, xa, xb, name="cdist(XA, XB) (euclidean by default)"),
        Case(cdist, xa, xb, "minkowski", kwargs={"p": 3.0}), Case(pdist, randn(4, 2), "minkowski", kwargs={"p": 1.5}),
        Case(cdist, xa, xb, "euclidean", kwargs={"w": w}), Case(cdist, xa, xb, "cityblock", kwargs={"w": w}),
        Case(cdist, xa, xb, "cosine", kwargs={"w": w}), Case(cdist, xa, xb, "minkowski", kwargs={"p": 3.0, "w": w}),
        Case(cdist, xa, xb, "seuclidean", kwargs={"V": randpos(3)}),
        Case(cdist, randn(6, 2), randn(3, 2), "mahalanobis"),
        Case(pdist, randn(6, 2), "mahalanobis", kwargs={"VI": np.array([[2.0, 0.3], [0.3, 1.0]])}),
        Case(cdist, randpos(3, 4), randpos(2, 4), "jensenshannon"),
        Case(pdist, randpos(3, 4), "jensenshannon"),
        Case(cdist, xa, xb, "eu", name="cdist(metric='eu'): SciPy's alias"),
        Case(cdist, np.array([[0.0, 1.0], [2.0, 2.0]]), np.array([[1.0, 1.0]]), "chebyshev",
             name="chebyshev with a tie"),
        Case(squareform, randn(6)), Case(squareform, np.zeros(0), name="squareform(empty)"),
        # checks=False: finite differences make the matrix asymmetric, which SciPy refuses
        Case(squareform, _distance.squareform(randpos(10)), kwargs={"checks": False}, name="squareform(matrix)"),
        Case(squareform, randn(3), kwargs={"force": "tomatrix"}),
    ]
    return cases


CASES = _cases()
