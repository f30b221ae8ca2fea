"""NumPy's covariance, ``np.cov``, written in plain NumPy and differentiated like user code in
every mode (``second_order.defined_as``), after NumPy's own ``np.cov`` has run on the primals for
its errors and warnings. NumPy's source calls ``np.average(..., returned=True)``; here the
weighted mean and the sum of weights are written out (written before that call had a
derivative). ``np.corrcoef``
is derived from NumPy's own source, which calls ``np.cov``.

Covered: ``m`` and ``y`` (1-D or 2-D, real or complex), ``rowvar``, ``bias``, ``ddof``,
``fweights`` (integer: no derivative), ``aweights`` (differentiated), ``dtype``. A covariance with
no more degrees of freedom than ``ddof`` is NumPy's (infinite or NaN, with its warning).
"""
from __future__ import annotations

import numpy as np

from .cases import Case, randc, randn, randpos
from .declare import nondifferentiable
from .second_order import defined_as


def _data_dtype(m, y, dtype):
    """NumPy's: at least float64, from the inputs unless ``dtype`` is given."""
    if dtype is not None:
        return dtype
    return np.result_type(m, np.float64) if y is None else np.result_type(m, y, np.float64)


nondifferentiable(_data_dtype)


def _cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """``np.cov``: ``(X - avg) @ (w (X - avg))^H / fact`` with NumPy's weighted ``avg`` and ``fact``."""
    m = np.asarray(m)
    dtype = _data_dtype(m, None if y is None else np.asarray(y), dtype)
    X = np.array(m, ndmin=2, dtype=dtype)
    if not rowvar and m.ndim != 1:
        X = X.T
    if X.shape[0] == 0:
        return np.array([]).reshape(0, 0)
    if y is not None:
        y = np.array(y, ndmin=2, dtype=dtype)
        if not rowvar and y.shape[0] != 1:
            y = y.T
        X = np.concatenate((X, y), axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:
        w = np.asarray(fweights, dtype=float)
    if aweights is not None:
        aweights = np.asarray(aweights, dtype=float)
        w = aweights if w is None else w * aweights
    if w is None:
        avg = np.mean(X, axis=1)
        fact = X.shape[1] - ddof
    else:
        w_sum = np.sum(w)
        avg = np.sum(X * w, axis=1) / w_sum
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = w_sum - ddof
        else:
            fact = w_sum - ddof * np.sum(w * aweights) / w_sum
    if fact <= 0:
        fact = 0.0  # NumPy's: the result is infinite or NaN (np.cov itself warned)
    X = X - avg[:, None]
    X_T = X.T if w is None else (X * w).T
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.dot(X, X_T.conj()) * np.true_divide(1, fact)
    return c.squeeze()


defined_as(np.cov, _cov, validate=True)

CASES = [
    Case(np.cov, randn(3, 5)),
    Case(np.cov, randn(5)),
    Case(np.cov, randn(4, 3), kwargs={"rowvar": False}),
    Case(np.cov, randn(2, 5), randn(5)),
    Case(np.cov, randn(3, 5), kwargs={"bias": True}),
    Case(np.cov, randn(3, 5), kwargs={"ddof": 2}),
    Case(np.cov, randn(3, 5), kwargs={"fweights": np.array([1, 2, 1, 3, 1])}),
    Case(np.cov, randn(3, 5), None, True, False, None, None, randpos(5)),
    Case(np.cov, randn(3, 5), None, True, False, 0, np.array([1, 2, 1, 3, 1]), randpos(5)),
    Case(np.cov, randc(2, 4)),
    Case(np.corrcoef, randn(3, 5)),
    Case(np.corrcoef, randn(5), randn(5)),
]
