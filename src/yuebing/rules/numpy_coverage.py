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

from . import lazy

_ABSTRACT = "an abstract scalar type, for isinstance and np.issubdtype; it is never called on data"
_MATRIX = "np.matrix objects are not differentiated (NumPy deprecates np.matrix)"
_RECORDS = ("a record array class or record constructor: not differentiated; make structured arrays with "
            "np.zeros(n, dtype=[...]) or np.array(rows, dtype=[...]), which are (docs/tangents.md)")


REFUSED: dict[str, str] = {
    # np.matrix: NumPy deprecates it, and its * and ** are matrix products (its construction is
    # refused, so no array rule ever takes them elementwise)
    "numpy.asmatrix": _MATRIX + "; use 2-D arrays and @",
    "numpy.bmat": _MATRIX + "; use np.block of 2-D arrays",
    "numpy.matrix": _MATRIX + "; use 2-D arrays and @",
    # C functions without a rule
    "numpy.frompyfunc": "makes a ufunc over object arrays; use np.vectorize, which has a rule",
    "numpy.nested_iters": "an iterator over array elements: not differentiated; index the array in loops",
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
    # ndarray methods and attributes
    "numpy.ndarray.byteswap": "reinterprets the bytes of each element: not differentiable",
    "numpy.ndarray.getfield": "reads raw memory as another dtype: not differentiated",
    "numpy.ndarray.setfield": "writes raw memory as another dtype: not differentiated",
    "numpy.ndarray.resize": "resizes the array in place: not differentiated; use np.concatenate or np.tile, then slice",
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
    "numpy.r_": "np.r_[a, b] is differentiated from NumPy's source (a concatenation)",
    "numpy.c_": "np.c_[a, b] is differentiated from NumPy's source (a column concatenation)",
    "numpy.poly1d": ("differentiated from NumPy's source (construction, p(x), p.c, +, -, *, **, deriv, integ, "
                     "roots, np.polyval(p, x)); p / q written out on the coefficients; np.asarray(p) and other "
                     "NumPy functions given a poly1d are refused by name: pass p.coeffs; third order refuses it"),
    "numpy.flatiter": "the type of x.flat, which is differentiated as np.ravel(x) in every mode, third order too (numpy.ndarray.flat; rules/numpy_iterators.py)",
    "numpy.ndarray.flat": "x.flat is differentiated as np.ravel(x), a view, when x is C-contiguous, else as a FlatIterator reading and writing x live (rules/flat_iterators.py)",
    "numpy.mgrid": "constant grids (no derivative); differentiated from NumPy's source",
    "numpy.ogrid": "constant grids (no derivative); differentiated from NumPy's source",
}

#: inputs a rule or a derivation refuses in every mode (the entry's note says which)
LIMITS: dict[str, str] = {}

#: modes a rule or a derivation from NumPy's source does not cover yet: name -> {mode: why}
#: (modes: "forward", "second"; second order's gap is third order's too)
GAPS: dict[str, dict[str, str]] = {}

#: primitives whose third derivatives are refused although their second-order class allows them
#: (kept equal to ``transform/third_order._NOT_YET`` by ``tests/test_numpy_coverage.py``)
_VIA_SVD = "its cotangent map calls np.linalg.svd, whose own map calls it again"
THIRD_ORDER_REFUSED: dict[object, str] = {
    # found by tests/test_numpy_higher_order_table.py (each refusal raises NestedDifferentiationError)
    # (svdvals and cond: followed since svd's map is, THIRD_ORDER_MAPS_FOLLOWED)
    np.roots: "its complex roots (third order lifts real-valued cotangent maps only)",
    np.vectorize: "the vectorized function is not followed by third order",
    np.kaiser: "its source builds np.array of a list mixing numbers and ints, which third order refuses",
    np.poly: "its source builds np.array of a list mixing numbers and ints, which third order refuses",
    np.corrcoef: "its source clips with out=, which third order refuses",
}

#: refused primitives whose refusal reaches the cotangent maps that call them (wrong values, not
#: a shape third order cannot lift)
THIRD_ORDER_INHERITED: tuple = ()

#: primitives whose cotangent map calls the primitive itself, but on constants (arange's indices)
#: or without needing its third derivatives again (qr's mode="r", svd's singular vectors): third
#: order follows their maps (``transform/third_order._with_vjp``; the others it refuses by name;
#: SciPy's, ``scipy.linalg`` ``qr``, ``svd`` and ``solve``, join when SciPy is imported)
THIRD_ORDER_MAPS_FOLLOWED: set = {np.arange, np.linalg.qr, np.linalg.svd}


def _follow_scipy_maps() -> None:
    import scipy.linalg

    THIRD_ORDER_MAPS_FOLLOWED.update((scipy.linalg.qr, scipy.linalg.svd, scipy.linalg.solve))


lazy.when_imported("scipy.linalg", _follow_scipy_maps)

#: primitives whose third derivatives are refused for some of their arguments only
THIRD_ORDER_PARTLY: dict[object, str] = {
    np.linalg.norm: "third order refuses ord=2, -2 and 'nuc' of a matrix (" + _VIA_SVD + ")",
    np.linalg.matrix_norm: "third order refuses ord=2, -2 and 'nuc' (" + _VIA_SVD + ")",
    np.linalg.eig: "third order refuses complex eigenvalues",
    np.linalg.eigvals: "third order refuses complex eigenvalues",
}

CASES: list = []  # data only: no rules here
