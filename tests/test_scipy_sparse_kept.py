"""A sparse matrix made inside a differentiated function and kept afterwards (in a global list, on
an object, in a dict, through ``has_aux``) is what a plain call leaves, in every mode: the reverse
pass undoes the writes into the arrays it made (SciPy's kernels fill index arrays made empty), and
``rules/outside_redo.py`` gives the arrays reached from outside state their values back.
Before, ``keep[0].toarray()`` read emptied or garbage index arrays (a segfault, or zeros).
The same for plain arrays kept outside; the arguments stay restored."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from tests.modes import check_every_mode

sps = pytest.importorskip("scipy.sparse")

X0 = np.array([0.7, 0.35, 1.2, -0.4])
SEED = np.linspace(0.4, 1.3, X0.size)
FORMATS = ["csr", "csc", "coo", "bsr", "dia"]
MODES = ["grad", "jvp", "jacobian_fwd", "hvp", "hessian"]


def _run(mode, f, x):
    """``f`` differentiated at ``x`` in ``mode``; the derivative is thrown away."""
    if mode == "grad":
        yb.grad(f)(x)
    elif mode == "jvp":
        yb.jvp(f, (x,), (SEED,))
    elif mode == "jacobian_fwd":
        yb.jacobian(f, mode="fwd")(x)
    elif mode == "hvp":
        yb.hvp(f, (x,), (SEED,))
    else:
        yb.hessian(f)(x)


def _made(x, fmt):
    """A CSR sum of diagonals, converted to ``fmt`` (BSR sums have no rule yet)."""
    return (sps.diags(x, format="csr") + sps.diags(x[1:] ** 2, 1, format="csr")).asformat(fmt)


def _loss(A, x):
    return np.sum((A @ x) ** 2) + np.sin(x) @ (A @ np.cos(x))


def _assert_same_matrix(kept, plain):
    """``kept`` is a matrix of the class, format and values of the plain call's, with every array of
    its structure intact (yuebing may store more explicit zeros: compared through ``toarray``)."""
    assert type(kept) is type(plain) and kept.format == plain.format
    np.testing.assert_array_equal(kept.toarray(), plain.toarray())
    np.testing.assert_array_equal(kept.tocoo().toarray(), plain.toarray())  # (the index arrays, read again)
    if hasattr(plain, "indptr"):
        np.testing.assert_array_equal(kept.indptr, plain.indptr)
        np.testing.assert_array_equal(kept.indices, plain.indices)


def _keeping(fmt, keep):
    """A function that appends the matrix it makes to the list ``keep``, made outside it."""
    def f(x):
        A = _made(x, fmt)
        keep.append(A)
        return _loss(A, x)
    return f


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_matrix_kept_in_a_list_made_outside(fmt, mode):
    kept, plain = [], []
    _run(mode, _keeping(fmt, kept), X0.copy())
    _keeping(fmt, plain)(X0.copy())
    assert len(kept) >= 1
    for A in kept:
        _assert_same_matrix(A, plain[0])


class _Holder:
    pass


@pytest.mark.parametrize("mode", ["grad", "hvp"])
@pytest.mark.parametrize("route", ["attribute", "dict", "aux"])
@pytest.mark.parametrize("fmt", ["csc", "dia", "csr"])
def test_matrix_kept_on_an_object_a_dict_or_through_aux(fmt, route, mode):
    holder, store = _Holder(), {}

    def f(x):
        A = sps.diags(x, format=fmt)  # (DIA made and converted inside diags)
        if route == "attribute":
            holder.A = A
        else:
            store["A"] = A
        return _loss(A, x)

    if route == "aux":
        value = lambda x: (f(x), store["A"])  # noqa: E731
        aux = (yb.grad(value, has_aux=True)(X0.copy())[1] if mode == "grad"
               else yb.value_and_grad(value, has_aux=True)(X0.copy())[0][1])
        _assert_same_matrix(aux, sps.diags(X0, format=fmt))
    else:
        _run(mode, f, X0.copy())
        _assert_same_matrix(holder.A if route == "attribute" else store["A"], sps.diags(X0, format=fmt))


@pytest.mark.parametrize("fmt", FORMATS)
def test_derivatives_of_a_function_keeping_its_matrix(fmt):
    """Keeping the matrix changes no derivative."""
    check_every_mode(_keeping(fmt, []), X0)


@pytest.mark.parametrize("mode", MODES)
def test_plain_arrays_kept_outside(mode):
    """Float and int arrays made in the pass and written after: what a plain call leaves."""
    keep = []

    def f(x):
        floats = np.zeros(4)
        floats[:] = x * 2.0
        ints = np.empty(4, dtype=np.intp)
        ints[...] = np.arange(4) + 5
        keep.extend([floats, ints])
        return np.sum(floats * x)

    _run(mode, f, X0.copy())
    for k in range(0, len(keep), 2):
        np.testing.assert_array_equal(keep[k], 2.0 * X0)
        np.testing.assert_array_equal(keep[k + 1], np.arange(4) + 5)


@pytest.mark.parametrize("mode", ["grad", "hvp"])
def test_an_outside_array_written_in_the_pass_keeps_the_write(mode):
    """An array on an outside object, written by the call: as a plain call leaves it."""
    holder = _Holder()
    holder.counts = np.zeros(3, dtype=np.intp)

    def f(x):
        holder.counts[1] += 1
        return np.sum(x ** 2)

    _run(mode, f, X0.copy())
    np.testing.assert_array_equal(holder.counts, [0, 1, 0])


@pytest.mark.parametrize("mode", ["grad", "hvp"])
def test_the_argument_stays_restored_when_a_view_of_it_is_kept(mode):
    """A view of the argument stored outside is the argument's memory: it stays as the reverse pass
    leaves the argument (restored), not as the forward pass left it."""
    keep = []

    def f(x):
        keep.append(x[:2])
        x[0] = 5.0 * x[1]
        return np.sum(x ** 2)

    x = X0.copy()
    _run(mode, f, x)
    np.testing.assert_array_equal(x, X0)
    np.testing.assert_array_equal(keep[-1], X0[:2])
