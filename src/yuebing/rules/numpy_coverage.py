"""Why public NumPy functions without a rule have none: the data of the coverage table.

``rules/table.py`` walks ``numpy``, ``numpy.linalg``, ``numpy.fft`` and the public ``ndarray``
methods and attributes, and gives every name one entry, computed from the registries at run time:
its rules (reverse, forward, second and third order), a declared zero derivative
(``zero_derivative.py``, ``numpy_zero.py``), derivation from its Python source, or the reason
below. A rule registered later wins over a reason here (the table shows the rule), so these
entries only say why a name has no rule *today*; ``tests/test_numpy_coverage.py`` fails when a
public name has none of these. Each reason says what to do instead where something works.

Names are qualified: ``numpy.divmod``, ``numpy.linalg.x``, ``numpy.ndarray.byteswap`` (methods
and attributes alike).
"""
from __future__ import annotations

import numpy as np

#: being given rules by issue 14, item 4 (another change in progress)
PENDING = "no rule yet: a rule is being written (issue 14, item 4)"
_DISPATCHED = ("no rule yet: NumPy implements it in Python behind a C dispatcher, which yuebing does not "
               "derive yet (issue 14, item 1)")
_ABSTRACT = "an abstract scalar type, for isinstance and np.issubdtype; it is never called on data"
_EXTENDED = ("extended precision: no rule (tangents are float16/32/64 or complex64/128); "
             "convert with np.float64 or np.complex128 first")
_RECORDS = "structured (record) data: not differentiated; keep one float array per field"
_SET_OPERATION = ("set operation: its values are selected from the inputs, like np.unique's; no rule yet "
                  "(np.unique's is being written, issue 14, item 4)")


def _dispatched(instead: str) -> str:
    return f"{_DISPATCHED}; {instead}"


REFUSED: dict[str, str] = {
    # given rules by issue 14 item 4 (another engineer, now): no zero may be declared for them
    **{f"numpy.{name}": PENDING for name in (
        "append", "insert", "delete", "piecewise", "partition", "argpartition", "unique", "unique_all",
        "unique_counts", "unique_inverse", "unique_values", "histogram", "copyto", "place", "putmask",
        "diagonal", "fill_diagonal", "rollaxis", "real_if_close", "poly1d", "cumulative_sum",
        "apply_along_axis", "astype", "nditer", "flatiter")},
    **{f"numpy.ndarray.{name}": PENDING for name in ("argpartition", "choose", "diagonal", "partition", "flat")},
    # differentiable, behind a dispatcher: no rule yet
    "numpy.apply_over_axes": _dispatched("apply the function once per axis yourself"),
    "numpy.block": _dispatched("use np.concatenate (np.block is nested concatenations)"),
    "numpy.broadcast_arrays": _dispatched("use np.broadcast_to on each array"),
    "numpy.corrcoef": _dispatched("compute it from np.cov's formula with np.mean and @"),
    "numpy.cov": _dispatched("write (x - x.mean(axis=1, keepdims=True)) @ (...).T / (n - 1)"),
    "numpy.cumulative_prod": _dispatched("use np.cumprod"),
    "numpy.ediff1d": _dispatched("use np.diff(np.ravel(x))"),
    "numpy.geomspace": _dispatched("use start * (stop / start) ** np.linspace(0, 1, num)"),
    "numpy.i0": _dispatched("scipy.special.i0 has a rule"),
    "numpy.nancumprod": _dispatched("use np.cumprod(np.where(np.isnan(x), 1.0, x))"),
    "numpy.nancumsum": _dispatched("use np.cumsum(np.where(np.isnan(x), 0.0, x))"),
    "numpy.nanprod": _dispatched("use np.prod(np.where(np.isnan(x), 1.0, x))"),
    "numpy.nanmedian": _dispatched("use np.median(x[~np.isnan(x)])"),
    "numpy.nanpercentile": _dispatched("drop the NaNs first (x[~np.isnan(x)])"),
    "numpy.nanquantile": _dispatched("drop the NaNs first (x[~np.isnan(x)])"),
    "numpy.nanstd": _dispatched("use np.std(x[~np.isnan(x)])"),
    "numpy.nanvar": _dispatched("use np.var(x[~np.isnan(x)])"),
    "numpy.percentile": _dispatched("np.median has a rule; a percentile is an interpolation of np.sort(x)"),
    "numpy.quantile": _dispatched("np.median has a rule; a quantile is an interpolation of np.sort(x)"),
    "numpy.poly": _dispatched("multiply the factors out with np.convolve"),
    "numpy.polyadd": _dispatched("add the coefficient arrays (padded to one length)"),
    "numpy.polyder": _dispatched("multiply the coefficients by their powers"),
    "numpy.polydiv": _dispatched("no replacement"),
    "numpy.polyint": _dispatched("divide the coefficients by their powers plus one"),
    "numpy.polymul": _dispatched("use np.convolve"),
    "numpy.polysub": _dispatched("subtract the coefficient arrays (padded to one length)"),
    "numpy.resize": _dispatched("use np.tile or np.concatenate, then slice"),
    "numpy.trim_zeros": _dispatched("slice the array yourself"),
    "numpy.unstack": _dispatched("index the array along the axis (x[i] or np.moveaxis)"),
    "numpy.unwrap": _dispatched("its result is x plus piecewise-constant multiples of 2 pi"),
    "numpy.vander": _dispatched("use x[:, None] ** np.arange(n)[::-1]"),
    "numpy.sort_complex": _dispatched("a selection of the input's values; sort by np.lexsort and index"),
    "numpy.bincount": _dispatched("zero in x, linear in weights=: use np.add.at on a zero array"),
    "numpy.histogram2d": _dispatched("zero in the sample, linear in weights="),
    "numpy.histogramdd": _dispatched("zero in the sample, linear in weights="),
    "numpy.intersect1d": _SET_OPERATION,
    "numpy.setdiff1d": _SET_OPERATION,
    "numpy.setxor1d": _SET_OPERATION,
    "numpy.union1d": _SET_OPERATION,
    # Python functions whose derivation stops at something yuebing does not cover
    "numpy.kaiser": "its beta parameter is differentiable, and it calls np.i0, which has no rule yet",
    "numpy.fromfunction": ("calls its function with *args of index arrays, which yuebing does not derive; "
                           "call the function on np.indices(shape) yourself"),
    "numpy.require": ("its source calls set.remove, which has no rule; use np.ascontiguousarray or "
                      "np.asarray(x, order=...)"),
    "numpy.asmatrix": "np.matrix objects are not differentiated; use 2-D arrays and @",
    "numpy.bmat": "np.matrix objects are not differentiated; use np.block of 2-D arrays",
    "numpy.matrix": "np.matrix objects are not differentiated; use 2-D arrays and @",
    # C functions without a rule
    "numpy.divmod": "no rule yet (two outputs); np.floor_divide (zero derivative) and np.mod (a rule) give them",
    "numpy.frexp": "no rule yet (mantissa and integer exponent, x = m * 2**e)",
    "numpy.modf": "no rule yet (two outputs); x - np.trunc(x) is the fractional part, and is differentiated",
    "numpy.nextafter": "no rule yet (its derivative is 1 in x and 0 in the direction)",
    "numpy.matvec": "no rule yet (a NumPy 2.2 ufunc); np.matmul(A, v[..., None])[..., 0] is differentiated",
    "numpy.vecmat": "no rule yet (a NumPy 2.2 ufunc); np.matmul(np.conj(v)[..., None, :], A)[..., 0, :] is differentiated",
    "numpy.from_dlpack": "memory shared with another library: not differentiated (see yuebing.interop)",
    "numpy.fromiter": "builds an array from an iterator, which is not differentiated; use np.array(list(iterable))",
    "numpy.frompyfunc": "makes a ufunc over object arrays; use np.vectorize, which has a rule",
    "numpy.nested_iters": "an iterator over array elements: not differentiated; index the array in loops",
    "numpy.broadcast": "an iterator over broadcast elements: not differentiated; use np.broadcast_to",
    "numpy.ndenumerate": "an iterator of (index, value): not differentiated; loop over np.ndindex(x.shape) and read x[i]",
    "numpy.ndarray": "the low-level array constructor (shape and buffer); use np.array, np.zeros or np.empty",
    "numpy.memmap": "a file-backed array: read it with np.array(np.memmap(...)), then differentiate",
    "numpy.object_": "object arrays are not differentiated; use float arrays",
    "numpy.recarray": _RECORDS,
    "numpy.record": _RECORDS,
    "numpy.void": _RECORDS,
    "numpy.ufunc": "the type of ufuncs, not called on data (its instances, np.sin..., have rules)",
    **{f"numpy.{name}": _ABSTRACT for name in (
        "character", "complexfloating", "flexible", "floating", "generic", "inexact", "integer",
        "number", "signedinteger", "unsignedinteger")},
    **{f"numpy.{name}": _EXTENDED for name in ("clongdouble", "complex256", "float128", "longdouble")},
    # objects indexed with [], not called
    "numpy.r_": "its __getitem__ uses try/except, which yuebing does not derive yet; use np.concatenate",
    "numpy.c_": "its __getitem__ uses try/except, which yuebing does not derive yet; use np.column_stack",
    "numpy.mgrid": "constant grids (no derivative), but its __getitem__ is not derived yet; use np.meshgrid",
    "numpy.ogrid": "constant grids (no derivative), but its __getitem__ is not derived yet; use np.meshgrid(..., sparse=True)",
    # ndarray methods and attributes
    "numpy.ndarray.compress": "no rule for the method yet; np.compress(condition, x, axis) has one",
    "numpy.ndarray.byteswap": "reinterprets the bytes of each element: not differentiable",
    "numpy.ndarray.getfield": "reads raw memory as another dtype: not differentiated",
    "numpy.ndarray.setfield": "writes raw memory as another dtype: not differentiated",
    "numpy.ndarray.resize": "resizes the array in place: not differentiated; use np.concatenate or np.tile, then slice",
    "numpy.ndarray.to_device": "no rule yet; on the CPU x.to_device('cpu') is x: drop the call",
    "numpy.ndarray.base": "the array a view was made from: not differentiated; keep a reference to it instead",
    "numpy.ndarray.ctypes": "raw memory: not differentiated",
    "numpy.ndarray.data": "raw memory (a memoryview): not differentiated",
    "numpy.ndarray.device": "a device name: no derivative",
}

#: names that work as they are, without a rule of their own (how)
WORKS: dict[str, str] = {
    "numpy.errstate": "a context manager: `with np.errstate(...)` works in every mode",
    "numpy.s_": "builds slices and index tuples (no derivative); indexing with them is differentiated",
    "numpy.index_exp": "builds slices and index tuples (no derivative); indexing with them is differentiated",
}

#: primitives whose third derivatives are refused although their second-order class allows them
#: (kept equal to ``transform/third_order._NOT_YET`` by ``tests/test_numpy_coverage.py``)
THIRD_ORDER_REFUSED: dict[object, str] = {
    np.linalg.eigh: "its eigenvectors' third derivatives disagree with finite differences",
}

CASES: list = []  # data only: no rules here
