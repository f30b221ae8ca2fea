"""``scipy.sparse``: the C kernels (``scipy.sparse._sparsetools``) its Python layer reaches,
written as plain NumPy over functions that have rules (``second_order.defined_as``: differentiated
like user code in every mode). SciPy's own Python (the matrix classes, ``diags``, ``@``, ``.T``,
``tocsc``...) is differentiated from its source; a sparse matrix carries its derivative in its
``data`` array, the index arrays being structure.

Each kernel is linear in each of its float arrays: a product of stored entries with a dense
operand, summed into the output (``_scatter``), or a gather of stored entries into a new structure.
The index work (which entry goes where) is done on the index arrays alone, without derivatives
(the helpers declared ``nondifferentiable``), mostly by SciPy's own kernel run on entry numbers.

Kernels that drop entries whose value is exactly zero (``dia_tocsr``, ``csr_plus_csr``,
``csr_matmat``...) keep them here, as explicit zeros: an entry that cancels at the point still has
a derivative. The matrix has the same values, with more stored entries than without yuebing.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .cases import Case, randn
from .core import RuleArgumentError
from .declare import nondifferentiable
from .second_order import defined_as

try:
    from scipy.sparse import _sparsetools as _kernels
except ImportError:  # the scipy extra is not installed: no rules to register
    _kernels = None


# --------------------------------------------------------------------------------------------
# Index work (no derivatives)
# --------------------------------------------------------------------------------------------


def _major_of(n_major, Ap):
    """The row (CSR) or column (CSC) of each stored entry."""
    Ap = np.asarray(Ap)
    return np.repeat(np.arange(n_major), np.diff(Ap[:n_major + 1]))[:Ap[n_major]]


def _entry_numbers(nnz):
    return np.arange(nnz, dtype=np.intp)


def _flat_positions(rows, cols, n_vecs):
    """Indices into a row-major ``(n, n_vecs)`` array of the rows ``rows``, every column."""
    return (np.asarray(rows)[:, None] * n_vecs + np.arange(n_vecs)).ravel(), np.asarray(cols)


def _copy_order(kernel, args, source, target, outputs):
    """Run ``kernel`` (one that copies stored values from argument ``source`` into ``target``) on
    entry numbers (from 1) instead of values, and on copies of its index outputs ``outputs``: which
    entry of ``source`` lands at each place of ``target`` (0 where none does), and the index outputs
    as the kernel fills them (the definition writes them, so that a gradient call puts them back)."""
    args = list(args)
    args[source] = np.arange(1, np.size(args[source]) + 1, dtype=np.intp).reshape(np.shape(args[source]))
    args[target] = order = np.zeros(np.shape(args[target]), dtype=np.intp)
    for k in outputs:
        args[k] = np.array(args[k])
    kernel(*args)
    return order, [args[k] for k in outputs]


def _dia_entries(n_row, n_col, L, offsets):
    """Row, column and (diagonal, column) of every stored place of a DIA matrix inside the matrix,
    in CSR order (by row, then by column)."""
    offsets = np.asarray(offsets)
    diagonal = np.repeat(np.arange(len(offsets)), L)
    cols = np.tile(np.arange(L), len(offsets))
    rows = cols - offsets[diagonal]
    inside = (rows >= 0) & (rows < n_row) & (cols < n_col)
    rows, cols, diagonal = rows[inside], cols[inside], diagonal[inside]
    order = np.lexsort((cols, rows))
    return rows[order], cols[order], diagonal[order]


nondifferentiable(_major_of, _flat_positions, _copy_order, _dia_entries)


# --------------------------------------------------------------------------------------------
# Linear algebra on stored entries
# --------------------------------------------------------------------------------------------


def _scatter(index, values, length):
    """``out[index[k]] += values[k]`` into zeros of ``length`` (indices repeat)."""
    if np.ndim(values) > 1:  # several right-hand sides (a 1-D ravel would be a view: not needed)
        index, values = np.ravel(index), np.ravel(values)
    if np.iscomplexobj(values):
        return np.bincount(index, np.real(values), length) + 1j * np.bincount(index, np.imag(values), length)
    sums = np.bincount(index, values, length)
    kind = np.asarray(values).dtype
    # (bincount sums in float64: an int or bool matrix's kernel adds in its own dtype, as
    # scikit-learn's label matrices densified into an int array need)
    return sums if kind.kind in "fc" else sums.astype(kind)


def _add_into(Yx, values):
    """``Yx += values``, read flat as the C kernels do (SciPy's ``sum`` passes a column ``(n, 1)``)."""
    Yx += np.reshape(values, np.shape(Yx))


def _csr_matvec(n_row, n_col, Ap, Aj, Ax, Xx, Yx):
    _add_into(Yx, _scatter(_major_of(n_row, Ap), Ax * np.ravel(Xx)[Aj], n_row))


def _csc_matvec(n_row, n_col, Ap, Ai, Ax, Xx, Yx):
    _add_into(Yx, _scatter(Ai, Ax * np.ravel(Xx)[_major_of(n_col, Ap)], n_row))


def _csr_matvecs(n_row, n_col, n_vecs, Ap, Aj, Ax, Xx, Yx):
    rows = _major_of(n_row, Ap)
    X = np.reshape(Xx, (n_col, n_vecs))
    Yx += _scatter(_flat_positions(rows, Aj, n_vecs)[0], Ax[:, None] * X[Aj], n_row * n_vecs)


def _csc_matvecs(n_row, n_col, n_vecs, Ap, Ai, Ax, Xx, Yx):
    cols = _major_of(n_col, Ap)
    X = np.reshape(Xx, (n_col, n_vecs))
    Yx += _scatter(_flat_positions(Ai, cols, n_vecs)[0], Ax[:, None] * X[cols], n_row * n_vecs)


def _coo_matvec(nnz, Ai, Aj, Ax, Xx, Yx):
    _add_into(Yx, _scatter(Ai[:nnz], Ax[:nnz] * np.ravel(Xx)[Aj[:nnz]], np.size(Yx)))


def _coo_matmat_dense(nnz, n_vecs, Ai, Aj, Ax, Bx, Cx):
    B = np.reshape(Bx, (-1, n_vecs))
    rows, cols = Ai[:nnz], Aj[:nnz]
    Cx += np.reshape(_scatter(_flat_positions(rows, cols, n_vecs)[0], Ax[:nnz, None] * B[cols], np.size(Cx)),
                     np.shape(Cx))


def _bsr_products(n_brow, n_bcol, R, C, Ap, Aj, Ax, X):
    """Each stored block times its part of ``X`` (``n_bcol * C`` rows), and the rows of the
    result each product adds to."""
    rows = _major_of(n_brow, Ap)
    blocks = np.reshape(Ax, (-1, R, C))[:len(rows)]
    parts = np.reshape(X, (n_bcol, C, -1))[Aj[:len(rows)]]
    return np.matmul(blocks, parts), np.ravel(rows[:, None] * R + np.arange(R))


def _bsr_matvec(n_brow, n_bcol, R, C, Ap, Aj, Ax, Xx, Yx):
    products, out_rows = _bsr_products(n_brow, n_bcol, R, C, Ap, Aj, Ax, Xx)
    _add_into(Yx, _scatter(out_rows, np.reshape(products, -1), n_brow * R))


def _bsr_matvecs(n_brow, n_bcol, n_vecs, R, C, Ap, Aj, Ax, Xx, Yx):
    products, out_rows = _bsr_products(n_brow, n_bcol, R, C, Ap, Aj, Ax, Xx)
    Yx += _scatter(_flat_positions(out_rows, out_rows, n_vecs)[0], products, n_brow * R * n_vecs)


def _dia_matvec(n_row, n_col, n_diags, L, offsets, diags, Xx, Yx):
    rows, cols, diagonal = _dia_entries(n_row, n_col, L, offsets)
    _add_into(Yx, _scatter(rows, diags[diagonal, cols] * np.ravel(Xx)[cols], n_row))


def _dia_matvecs(n_row, n_col, n_diags, L, offsets, diags, n_vecs, Xx, Yx):
    rows, cols, diagonal = _dia_entries(n_row, n_col, L, offsets)
    X = np.reshape(Xx, (n_col, n_vecs))
    Yx += np.reshape(_scatter(_flat_positions(rows, cols, n_vecs)[0], diags[diagonal, cols][:, None] * X[cols],
                              n_row * n_vecs), np.shape(Yx))


# --------------------------------------------------------------------------------------------
# Conversions
# --------------------------------------------------------------------------------------------


def _copying(kernel, source, target, outputs, adds=False):
    """The definition of ``kernel``, which copies stored values from its argument ``source`` into
    ``target`` (a conversion, a selection of rows), or adds them there (``adds``), and fills the
    index arrays at ``outputs``: the same copy, as a gather."""
    def definition(*args):
        order, filled = _copy_order(kernel, args, source, target, outputs)
        for k, values in zip(outputs, filled):
            args[k][...] = values
        values, written = args[source], order > 0
        read = np.maximum(order - 1, 0)
        copied = values[read] if np.ndim(values) == 1 else values[np.unravel_index(read, np.shape(values))]
        if adds:
            args[target][...] = args[target] + np.where(written, copied, 0)
        else:
            args[target][...] = np.where(written, copied, args[target])  # places no entry reaches keep theirs
    definition.__name__ = definition.__qualname__ = f"_{kernel.__name__}"
    return definition


def _csr_todense(n_row, n_col, Ap, Aj, Ax, Bx):
    rows = _major_of(n_row, Ap)
    Bx += np.reshape(_scatter(rows * n_col + Aj[:len(rows)], Ax[:len(rows)], n_row * n_col), np.shape(Bx))


def _coo_todense(n_row, n_col, nnz, Ai, Aj, Ax, Bx, fortran):
    places = _dense_places(n_row, n_col, Ai[:nnz], Aj[:nnz], fortran)
    Bx += np.reshape(_scatter(places, Ax[:nnz], n_row * n_col), np.shape(Bx))


def _dense_places(n_row, n_col, rows, cols, fortran):
    return cols * n_row + rows if fortran else rows * n_col + cols


nondifferentiable(_dense_places)


# --------------------------------------------------------------------------------------------
# SciPy's Python that reads ``a.base`` (``_prune_array``: copy a small view of a large array)
# --------------------------------------------------------------------------------------------


def _prune_copies(a):
    """Whether SciPy's ``_prune_array`` copies ``a`` (read on the primal: a view's ``base``)."""
    return a.base is not None and a.size < a.base.size // 2


def _check_prunable(A):
    """``prune``'s own checks of the lengths; the number of stored entries."""
    if len(A.indptr) != A._swap(A._shape_as_2d)[0] + 1:
        raise ValueError("index pointer has invalid length")
    if len(A.indices) < A.nnz:
        raise ValueError("indices array has fewer than nnz elements")
    if len(A.data) < A.nnz:
        raise ValueError("data array has fewer than nnz elements")
    return A.nnz


def _pruned(a):
    return a.copy() if _prune_copies(a) else a


def _prune(self):
    """``_cs_matrix.prune``: drop the room after the stored entries."""
    nnz = _check_prunable(self)
    self.indices = _pruned(self.indices[:nnz])
    self.data = _pruned(self.data[:nnz])


def _dia_structure(A, idx_dtype):
    """The CSR structure of DIA matrix ``A`` (every stored place inside the matrix)."""
    n_row, n_col = A.shape
    rows, cols, diagonal = _dia_entries(n_row, n_col, A.data.shape[1], A.offsets)
    indptr = np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=n_row)))).astype(idx_dtype)
    return indptr, cols.astype(idx_dtype), diagonal, cols


def _dia_tocsr_method(self, copy=False):
    """``_dia_base.tocsr``, keeping stored zeros (SciPy drops them, and their derivatives)."""
    if 0 in self.shape or len(self.offsets) == 0:
        return self._csr_container(self.shape, dtype=self.dtype)
    indptr, indices, diagonal, cols = _dia_structure(self, self._get_index_dtype(maxval=max(self.nnz, *self.shape)))
    out = self._csr_container((self.data[diagonal, cols], indices, indptr), shape=self.shape, dtype=self.dtype)
    out.has_canonical_format = True
    return out


def _stacked_format(formats, format):
    """The format SciPy's ``hstack``/``vstack`` give: CSR for CSR blocks, CSC for CSC, else COO."""
    formats = set(formats)
    return format or (formats.pop() if len(formats) == 1 and formats <= {"csr", "csc"} else "coo")


def _block_offsets(grid):
    """Where each block row and column starts (and the total), from the blocks' shapes (None: an
    empty block); SciPy's errors for blocks whose shapes do not fit."""
    heights, widths = [0] * len(grid), [0] * len(grid[0])
    for i, row in enumerate(grid):
        if len(row) != len(widths):
            raise ValueError("blocks must be 2-D")
        for j, block in enumerate(row):
            if block is None:
                continue
            height, width = np.shape(block) if np.ndim(block) == 2 else (1, np.size(block))
            if heights[i] and heights[i] != height:
                raise ValueError(f"blocks[{i},:] has incompatible row dimensions")
            if widths[j] and widths[j] != width:
                raise ValueError(f"blocks[:,{j}] has incompatible column dimensions")
            heights[i], widths[j] = height, width
    return np.concatenate(([0], np.cumsum(heights))), np.concatenate(([0], np.cumsum(widths)))


def _blocks(grid, format=None, dtype=None, as_array=None):
    """``bmat``, ``block_array``, ``hstack`` and ``vstack``: a matrix of blocks (None: zeros) from
    the blocks' entries, without SciPy's object array of blocks (which holds no derivative)."""
    import scipy.sparse as sps

    grid = [list(row) for row in grid]
    present = [b for row in grid for b in row if b is not None]
    if as_array is None:
        as_array = any(isinstance(b, sps.sparray) for b in present)
    row_at, col_at = _block_offsets(grid)
    parts = [(b.tocoo() if sps.issparse(b) else sps.coo_array(np.atleast_2d(b)), row_at[i], col_at[j])
             for i, row in enumerate(grid) for j, b in enumerate(row) if b is not None]
    rows = np.concatenate([p.row + i for p, i, _ in parts])
    cols = np.concatenate([p.col + j for p, _, j in parts])
    data = np.concatenate([p.data for p, _, _ in parts])
    shape = (int(row_at[-1]), int(col_at[-1]))
    made = (sps.coo_array if as_array else sps.coo_matrix)((data, (rows, cols)), shape=shape, dtype=dtype)
    # (a None block, like a dense one, takes SciPy off its CSR/CSC path: COO)
    return made.asformat(_stacked_format([getattr(b, "format", None) for row in grid for b in row], format))


def _hstack(blocks, format=None, dtype=None):
    return _blocks([list(blocks)], format, dtype)


def _vstack(blocks, format=None, dtype=None):
    return _blocks([[b] for b in blocks], format, dtype)


def _bmat(blocks, format=None, dtype=None):
    return _blocks(blocks, format, dtype)


def _block_array(blocks, *, format=None, dtype=None):
    return _blocks(blocks, format, dtype, as_array=True)


nondifferentiable(_prune_copies, _check_prunable, _dia_structure, _stacked_format, _block_offsets)


# --------------------------------------------------------------------------------------------
# np.matrix results of the *_matrix classes: no tangent (the sum over every entry avoids one)
# --------------------------------------------------------------------------------------------

_MATRIX_ADVICE = (
    "scipy.sparse: yuebing does not differentiate the np.matrix results of the *_matrix classes "
    "(csr_matrix.todense(), .sum(axis=0), .mean(axis=1), an np.matrix operand): np.matrix has no tangent "
    "(NumPy deprecates it). What to do: A.toarray() for a dense ndarray; A @ np.ones(A.shape[1]) for the row "
    "sums and np.ones(A.shape[0]) @ A for the column sums; or the *_array classes (sps.csr_array(A)), whose "
    "sums and products are ndarrays")


_LIL_DOK_ADVICE = (
    "scipy.sparse: yuebing does not differentiate the LIL and DOK formats (tolil(), todok(), lil_matrix, "
    "dok_array...: SciPy keeps their entries in object arrays of lists and in dicts, filled in C). What to do: "
    "collect the values, rows and columns in lists and build sps.csr_array((values, (rows, cols)), shape=shape) "
    "(or coo_array), or use diags, hstack, vstack, bmat")


def _refuse_lil_dok(*args, **kwargs):
    """The LIL and DOK formats (conversions to them, their constructors): refused by name."""
    raise RuleArgumentError(_LIL_DOK_ADVICE)


def _refuse_matrix(*args, **kwargs):
    """``scipy.sparse._sputils.asmatrix``, which makes the np.matrix results: refused by name."""
    raise RuleArgumentError(_MATRIX_ADVICE)


def _sum_axes(A, axis):
    """SciPy's own check of ``axis`` (None: over every entry); the sum's dtype."""
    from scipy.sparse._sputils import get_sum_dtype, validateaxis

    return validateaxis(axis, ndim=A.ndim), get_sum_dtype(A.dtype)


nondifferentiable(_refuse_matrix, _refuse_lil_dok, _sum_axes)


def _copy_of_function(f):
    """A function running ``f``'s code that is not ``f`` (no rule is registered for it: it is
    differentiated from its source, like SciPy's own)."""
    import types

    return types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__, f.__closure__)


def _sparse_sum(self, axis=None, dtype=None, out=None):
    """``_spbase.sum``: over every entry, the sum of the stored values (SciPy's makes them an
    np.matrix first for the *_matrix classes); over an axis, SciPy's own code."""
    axes, sum_dtype = _sum_axes(self, axis)
    if axes is not None:
        return _SPBASE_SUM(self, axis=axis, dtype=dtype, out=out)
    if self.nnz == 0:
        return np.sum(np.zeros(1, dtype=sum_dtype), dtype=dtype, out=out)
    return np.sum(_stored_values(self), dtype=dtype, out=out)


def _stored_values(A):
    """Every stored value, duplicates included (their sum is the matrix's; SciPy's ``_todata``
    sums them in place first)."""
    if hasattr(A, "indptr"):
        return A.data[:A.indptr[-1]]
    if A.format == "coo":
        return A.data
    return _TODATA(A)


def _dia_sum(self, axis=None, dtype=None, out=None):
    """``_dia_base.sum``: over every entry, that of the CSR matrix (SciPy's makes an np.matrix of
    the row sums first for ``dia_matrix``); over an axis, SciPy's own code."""
    if _sum_axes(self, axis)[0] is None:
        return _sparse_sum(self.tocsr(), None, dtype, out)
    return _DIA_SUM(self, axis=axis, dtype=dtype, out=out)


#: kernels that copy stored values: the position of the values read, of the values written, of
#: the index arrays written, and whether the values are added to what is there
_COPYING = {"csr_tocsc": (4, 7, (5, 6)), "coo_tocsr": (5, 8, (6, 7)), "csr_row_index": (4, 6, (5,)),
            "csr_row_slice": (5, 7, (6,)), "csr_column_index2": (4, 6, (5,)), "csr_hstack": (5, 8, (6, 7)),
            "bsr_tocsr": (6, 9, (7, 8)), "csr_tobsr": (6, 9, (7, 8), True)}

_DEFINITIONS = {
    "csr_matvec": _csr_matvec, "csc_matvec": _csc_matvec, "csr_matvecs": _csr_matvecs,
    "csc_matvecs": _csc_matvecs, "coo_matvec": _coo_matvec, "coo_matmat_dense": _coo_matmat_dense,
    "dia_matvec": _dia_matvec, "dia_matvecs": _dia_matvecs, "bsr_matvec": _bsr_matvec, "bsr_matvecs": _bsr_matvecs,
    "csr_todense": _csr_todense, "coo_todense": _coo_todense,
}

if _kernels is not None:
    from scipy.sparse._compressed import _cs_matrix
    from scipy.sparse._dia import _dia_base

    for _name, _definition in _DEFINITIONS.items():
        defined_as(getattr(_kernels, _name), _definition)
    for _name, _places in _COPYING.items():
        defined_as(getattr(_kernels, _name), _copying(getattr(_kernels, _name), *_places))
    defined_as(_cs_matrix.prune, _prune)
    defined_as(_dia_base.tocsr, _dia_tocsr_method)
    from scipy.sparse import _construct

    defined_as(_construct.hstack, _hstack, validate=True)
    defined_as(_construct.vstack, _vstack, validate=True)
    defined_as(_construct.bmat, _bmat, validate=True)
    defined_as(_construct.block_array, _block_array, validate=True)
    from scipy.sparse import _base, _sputils

    _SPBASE_SUM, _TODATA = _copy_of_function(_base._spbase.sum), _base._todata
    _DIA_SUM = _copy_of_function(_dia_base.sum)
    defined_as(_base._spbase.sum, _sparse_sum)
    defined_as(_dia_base.sum, _dia_sum)
    defined_as(_sputils.asmatrix, _refuse_matrix)
    from scipy.sparse import _coo, _csr, dok_array, dok_matrix, lil_array, lil_matrix

    for _target in (_base._spbase.tolil, _base._spbase.todok, _csr._csr_base.tolil, _coo._coo_base.todok,
                    lil_matrix, lil_array, dok_matrix, dok_array):
        defined_as(_target, _refuse_lil_dok)


# --------------------------------------------------------------------------------------------
# Cases: each kernel on its own, outputs filled with nonzeros (accumulated into, or overwritten)
# --------------------------------------------------------------------------------------------


def _cases() -> list:
    if _kernels is None:
        return []
    import scipy.sparse as sps

    A = sps.random(4, 5, density=0.5, format="csr", random_state=7)
    Ap, Aj, nnz = A.indptr, A.indices, A.nnz
    coo = A.tocoo()
    offsets, L = np.array([-1, 0, 2]), 5
    index = np.zeros_like(Ap)
    return [
        Case(_kernels.csr_matvec, 4, 5, Ap, Aj, randn(nnz), randn(5), randn(4)),
        Case(_kernels.csc_matvec, 5, 4, Ap, Aj, randn(nnz), randn(4), randn(5)),
        Case(_kernels.csr_matvecs, 4, 5, 2, Ap, Aj, randn(nnz), randn(10), randn(8)),
        Case(_kernels.csc_matvecs, 5, 4, 2, Ap, Aj, randn(nnz), randn(8), randn(10)),
        Case(_kernels.coo_matvec, nnz, coo.row, coo.col, randn(nnz), randn(5), randn(4)),
        Case(_kernels.coo_matmat_dense, nnz, 2, coo.row, coo.col, randn(nnz), randn(10), randn(4, 2)),
        Case(_kernels.dia_matvec, 4, 5, 3, L, offsets, randn(3, L), randn(5), randn(4)),
        Case(_kernels.dia_matvecs, 4, 5, 3, L, offsets, randn(3, L), 2, randn(5, 2), randn(4, 2)),
        Case(_kernels.csr_todense, 4, 5, Ap, Aj, randn(nnz), randn(4, 5)),
        Case(_kernels.coo_todense, 4, 5, nnz, coo.row, coo.col, randn(nnz), randn(20), True),
        Case(_kernels.csr_tocsc, 4, 5, Ap, Aj, randn(nnz), np.zeros(6, Ap.dtype), np.zeros(nnz, Ap.dtype),
             randn(nnz)),
        Case(_kernels.coo_tocsr, 4, 5, nnz, coo.row, coo.col, randn(nnz), index.copy(), np.zeros(nnz, Ap.dtype),
             randn(nnz)),
        Case(_kernels.csr_row_index, 3, np.array([2, 0, 2], dtype=Ap.dtype), Ap, Aj, randn(nnz),
             np.zeros(2 * int(np.diff(Ap)[2]) + int(np.diff(Ap)[0]), Ap.dtype),
             randn(2 * int(np.diff(Ap)[2]) + int(np.diff(Ap)[0]))),
    ]


CASES = _cases()
