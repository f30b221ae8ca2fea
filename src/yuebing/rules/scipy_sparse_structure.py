"""``scipy.sparse``'s C kernels that make a new structure from one or two matrices: sums,
differences, elementwise products, maxima and quotients of two matrices, the product of two
sparse matrices, sorting and summing duplicates in place, and reading entries (a diagonal, a
rectangle, single entries). Written as plain NumPy (``second_order.defined_as``), like the kernels
of ``scipy_sparse.py``: the structure is found from the index arrays alone, without derivatives,
and the stored values are gathered into it (``scipy_sparse._scatter``).

SciPy's kernels drop results that are exactly zero (an entry that cancels, a product with a
stored zero); these keep them as explicit zeros, since the entry's derivative need not be zero.
"""
from __future__ import annotations

import numpy as np

from .core import RuleArgumentError
from .declare import nondifferentiable
from .second_order import defined_as
from .scipy_sparse import _kernels, _major_of, _scatter


# --------------------------------------------------------------------------------------------
# Index work (no derivatives)
# --------------------------------------------------------------------------------------------


def _keys(n_major, n_minor, Ap, Aj):
    """One number per stored entry, ordered as (major, minor) are: ``major * n_minor + minor``."""
    major = _major_of(n_major, Ap).astype(np.int64)
    return major * n_minor + np.asarray(Aj[:len(major)], dtype=np.int64)


def _structure(n_major, n_minor, keys):
    """The ``indptr`` and ``indices`` of the sorted distinct ``keys``."""
    return np.concatenate(([0], np.cumsum(np.bincount(keys // n_minor, minlength=n_major)))), keys % n_minor


def _union(n_major, n_minor, Ap, Aj, Bp, Bj):
    """The structure of ``A + B`` (every place either stores), and the place of each entry of A and
    of B in it."""
    a, b = _keys(n_major, n_minor, Ap, Aj), _keys(n_major, n_minor, Bp, Bj)
    keys = np.unique(np.concatenate((a, b)))
    return np.searchsorted(keys, a), np.searchsorted(keys, b), _structure(n_major, n_minor, keys)


def _intersection(n_major, n_minor, Ap, Aj, Bp, Bj):
    """The structure of ``A * B`` (the places both store), and the place of each entry of A and B in
    it (its size for an entry outside it)."""
    a, b = _keys(n_major, n_minor, Ap, Aj), _keys(n_major, n_minor, Bp, Bj)
    keys = np.intersect1d(a, b)
    return _places_in(keys, a), _places_in(keys, b), _structure(n_major, n_minor, keys)


def _places_in(keys, wanted):
    """The position of each of ``wanted`` in sorted ``keys``; ``len(keys)`` where it is absent."""
    at = np.minimum(np.searchsorted(keys, wanted), max(len(keys) - 1, 0))
    found = (keys[at] == wanted) if len(keys) else np.zeros(len(wanted), dtype=bool)
    return np.where(found, at, len(keys))


def _product_pairs(n_row, n_col, Ap, Aj, Bp, Bj):
    """The entry pairs ``(A[i, k], B[k, j])`` whose products make ``A @ B``: the entry of A, of B,
    and the place in the product's structure of each pair; that structure."""
    rows = _major_of(n_row, Ap)
    inner = np.asarray(Aj[:len(rows)], dtype=np.int64)
    Bp = np.asarray(Bp, dtype=np.int64)
    counts = Bp[inner + 1] - Bp[inner]
    a = np.repeat(np.arange(len(rows)), counts)
    starts = np.repeat(Bp[inner] - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
    b = np.arange(len(a)) + starts
    pair_keys = rows[a].astype(np.int64) * n_col + np.asarray(Bj, dtype=np.int64)[b]
    # SciPy's order within a row: the columns by last first reached (its linked list)
    keys, first, place = np.unique(pair_keys, return_index=True, return_inverse=True)
    order = np.lexsort((-first, keys // n_col))
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    indptr = np.concatenate(([0], np.cumsum(np.bincount(keys // n_col, minlength=n_row))))
    return a, b, rank[place], (indptr, keys[order] % n_col)


def _duplicate_groups(n_row, n_col, Ap, Aj):
    """For ``csr_sum_duplicates``: the group of each stored entry (runs of one column in a row), and
    ``Ap``, ``Aj`` compacted as SciPy does."""
    rows = _major_of(n_row, Ap)
    columns = np.asarray(Aj[:len(rows)])
    starts = np.ones(len(rows), dtype=bool)
    starts[1:] = (rows[1:] != rows[:-1]) | (columns[1:] != columns[:-1])
    Ap, Aj = np.array(Ap), np.array(Aj)
    _kernels.csr_sum_duplicates(n_row, n_col, Ap, Aj, np.zeros(len(rows)))
    return np.cumsum(starts) - 1, Ap, Aj


def _sorted_order(n_row, Ap, Aj):
    """For ``csr_sort_indices``: ``Aj`` sorted as SciPy does, and where each entry came from."""
    order, Aj = np.arange(Ap[n_row], dtype=np.intp), np.array(Aj)
    _kernels.csr_sort_indices(n_row, Ap, Aj, order)
    return order, Aj


def _diagonal_entries(k, n_row, n_col, Ap, Aj):
    """The stored entries on diagonal ``k`` and their place along it; its length."""
    rows = _major_of(n_row, Ap)
    first_row, first_col = max(-k, 0), max(k, 0)
    length = max(min(n_row - first_row, n_col - first_col), 0)
    on = np.asarray(Aj[:len(rows)]) - rows == k
    return np.flatnonzero(on), rows[on] - first_row, length


def _submatrix_entries(n_row, Ap, Aj, ir0, ir1, ic0, ic1):
    """``get_csr_submatrix``'s structure: the new ``indptr``, ``indices`` and the stored entries
    they keep, in order."""
    rows = _major_of(n_row, Ap)
    columns = np.asarray(Aj[:len(rows)])
    kept = (rows >= ir0) & (rows < ir1) & (columns >= ic0) & (columns < ic1)
    counts = np.bincount(rows[kept] - ir0, minlength=ir1 - ir0)
    indptr = np.concatenate(([0], np.cumsum(counts))).astype(np.asarray(Ap).dtype)
    return indptr, (columns[kept] - ic0).astype(np.asarray(Aj).dtype), np.flatnonzero(kept)


def _sample_pairs(n_row, n_col, Ap, Aj, n_samples, Bi, Bj):
    """For ``csr_sample_values``: each (sample, stored entry) pair at one place."""
    rows = _major_of(n_row, Ap)
    keys = rows.astype(np.int64) * n_col + np.asarray(Aj[:len(rows)], dtype=np.int64)
    wanted = (np.asarray(Bi[:n_samples], dtype=np.int64) % n_row) * n_col + np.asarray(Bj[:n_samples]) % n_col
    order = np.argsort(keys, kind="stable")
    low, high = np.searchsorted(keys[order], wanted, "left"), np.searchsorted(keys[order], wanted, "right")
    sample = np.repeat(np.arange(n_samples), high - low)
    within = np.arange(len(sample)) - np.repeat(np.concatenate(([0], np.cumsum(high - low)[:-1])), high - low)
    return sample, order[np.repeat(low, high - low) + within]


def _dia_product_terms(M, K, n_a, L_a, offsets_a, data_a, N, n_b, L_b, offsets_b, data_b):
    """For ``dia_matmat``: SciPy's offsets of the product, and each product term
    ``A[i, k] B[k, j]``: its diagonal of A and B, its ``k`` and ``j``, and its place in the
    product's flat data (one more place for the terms of no diagonal SciPy keeps)."""
    offsets, data = _kernels.dia_matmat(M, K, n_a, L_a, offsets_a, data_a, N, n_b, L_b, offsets_b, data_b)
    width = np.size(data) // max(len(offsets), 1)
    d, e, j = (g.ravel() for g in np.meshgrid(np.arange(n_a), np.arange(n_b), np.arange(width), indexing="ij"))
    k = j - np.asarray(offsets_b)[e]
    i = k - np.asarray(offsets_a)[d]
    valid = (i >= 0) & (i < M) & (k >= 0) & (k < K) & (k < L_a) & (j < L_b) & (j < N)
    d, e, j, k, total = d[valid], e[valid], j[valid], k[valid], (j - i)[valid]
    order = np.argsort(offsets)
    at = np.minimum(np.searchsorted(offsets[order], total), len(offsets) - 1)
    found = offsets[order][at] == total
    place = np.where(found, order[at] * width + j, np.size(data))
    return offsets, np.size(data), d, e, k, j, place


nondifferentiable(_dia_product_terms)


def _dia_matmat(M, K, n_a, L_a, offsets_a, data_a, N, n_b, L_b, offsets_b, data_b):
    offsets, size, d, e, k, j, place = _dia_product_terms(M, K, n_a, L_a, offsets_a, data_a, N, n_b, L_b,
                                                           offsets_b, data_b)
    return offsets, _scatter(place, data_a[d, k] * data_b[e, j], size + 1)[:size]


nondifferentiable(_keys, _structure, _union, _intersection, _places_in, _product_pairs, _duplicate_groups,
                  _sorted_order, _diagonal_entries, _submatrix_entries, _sample_pairs)


# --------------------------------------------------------------------------------------------
# Definitions
# --------------------------------------------------------------------------------------------


def _write_structure(Cp, Cj, indptr, indices):
    """Write a result's structure into the index arrays SciPy made for it; its number of entries."""
    Cp[...] = indptr
    Cj[:len(indices)] = indices
    return len(indices)


def _on_union(operation):
    """The kernel of ``operation`` applied on every place either matrix stores (0 where one does
    not): ``csr_plus_csr``, ``csr_minus_csr``, ``csr_maximum_csr``..."""
    def kernel(n_row, n_col, Ap, Aj, Ax, Bp, Bj, Bx, Cp, Cj, Cx):
        a_place, b_place, (indptr, indices) = _union(n_row, n_col, Ap, Aj, Bp, Bj)
        nnz = _write_structure(Cp, Cj, indptr, indices)
        Cx[:nnz] = operation(_scatter(a_place, Ax[:len(a_place)], nnz), _scatter(b_place, Bx[:len(b_place)], nnz))
    return kernel


def _csr_elmul_csr(n_row, n_col, Ap, Aj, Ax, Bp, Bj, Bx, Cp, Cj, Cx):
    a_place, b_place, (indptr, indices) = _intersection(n_row, n_col, Ap, Aj, Bp, Bj)
    nnz = _write_structure(Cp, Cj, indptr, indices)
    # one more place, for the entries stored by one matrix only: dropped after the sums
    a = _scatter(a_place, Ax[:len(a_place)], nnz + 1)[:nnz]
    Cx[:nnz] = a * _scatter(b_place, Bx[:len(b_place)], nnz + 1)[:nnz]


def _csr_matmat(n_row, n_col, Ap, Aj, Ax, Bp, Bj, Bx, Cp, Cj, Cx):
    a, b, place, (indptr, indices) = _product_pairs(n_row, n_col, Ap, Aj, Bp, Bj)
    nnz = _write_structure(Cp, Cj, indptr, indices)
    Cx[:nnz] = _scatter(place, Ax[a] * Bx[b], nnz)


def _csr_sum_duplicates(n_row, n_col, Ap, Aj, Ax):
    group, indptr, indices = _duplicate_groups(n_row, n_col, Ap, Aj)
    Ap[...], Aj[...] = indptr, indices
    count = len(group) and group[-1] + 1
    Ax[:count] = _scatter(group, Ax[:len(group)], count)


def _csr_sort_indices(n_row, Ap, Aj, Ax):
    order, indices = _sorted_order(n_row, Ap, Aj)
    Aj[...] = indices
    Ax[:len(order)] = Ax[order]


def _csr_diagonal(k, n_row, n_col, Ap, Aj, Ax, Yx):
    entries, along, length = _diagonal_entries(k, n_row, n_col, Ap, Aj)
    Yx[:length] = _scatter(along, Ax[entries], length)


def _get_csr_submatrix(n_row, n_col, Ap, Aj, Ax, ir0, ir1, ic0, ic1):
    indptr, indices, kept = _submatrix_entries(n_row, Ap, Aj, ir0, ir1, ic0, ic1)
    return indptr, indices, Ax[kept]


def _csr_sample_values(n_row, n_col, Ap, Aj, Ax, n_samples, Bi, Bj, Yx):
    sample, entry = _sample_pairs(n_row, n_col, Ap, Aj, n_samples, Bi, Bj)
    Yx[:n_samples] = _scatter(sample, Ax[entry], n_samples)


def _carries_floats(Ax):
    return np.asarray(Ax).dtype.kind in "fc"


def _eliminate_zeros_plain(n_row, n_col, Ap, Aj, Ax):
    _kernels.csr_eliminate_zeros(n_row, n_col, Ap, Aj, Ax)


nondifferentiable(_carries_floats, _eliminate_zeros_plain)


def _csr_eliminate_zeros(n_row, n_col, Ap, Aj, Ax):
    """Refused for float values; booleans (the result of ``A > 0``) and integers as SciPy does."""
    if not _carries_floats(Ax):
        return _eliminate_zeros_plain(n_row, n_col, Ap, Aj, Ax)
    raise RuleArgumentError(
        "scipy.sparse eliminate_zeros (csr_eliminate_zeros): yuebing does not differentiate it: it drops the "
        "stored entries that are exactly zero, and with them their derivatives. What to do: leave the zeros "
        "stored (they change no product or sum), or rebuild the matrix from the entries you keep")


_DEFINITIONS = {
    "csr_plus_csr": _on_union(np.add), "csr_minus_csr": _on_union(np.subtract),
    "csr_maximum_csr": _on_union(np.maximum), "csr_minimum_csr": _on_union(np.minimum),
    "csr_eldiv_csr": _on_union(np.divide), "csr_elmul_csr": _csr_elmul_csr, "csr_matmat": _csr_matmat,
    "csr_sum_duplicates": _csr_sum_duplicates, "csr_sort_indices": _csr_sort_indices,
    "csr_diagonal": _csr_diagonal, "get_csr_submatrix": _get_csr_submatrix,
    "csr_sample_values": _csr_sample_values, "csr_eliminate_zeros": _csr_eliminate_zeros, "dia_matmat": _dia_matmat,
}
#: kernels of integers only, or of comparisons: no derivative
_INDEX_KERNELS = ("csr_has_canonical_format", "csr_has_sorted_indices", "expandptr", "csr_matmat_maxnnz",
                  "csr_column_index1",
                  "csr_sample_offsets", "csr_count_blocks", "cs_graph_components", "csr_ne_csr", "csr_lt_csr",
                  "csr_gt_csr", "csr_le_csr", "csr_ge_csr")

if _kernels is not None:
    for _name, _definition in _DEFINITIONS.items():
        _definition.__qualname__ = _definition.__name__ = f"_{_name}"
        defined_as(getattr(_kernels, _name), _definition)
    nondifferentiable(*(getattr(_kernels, name) for name in _INDEX_KERNELS))


def _cases() -> list:
    if _kernels is None:
        return []
    import scipy.sparse as sps

    from .cases import Case, randn, randpos

    A = sps.random(4, 5, density=0.5, format="csr", random_state=8)
    B = sps.random(4, 5, density=0.5, format="csr", random_state=9)
    C = sps.random(5, 3, density=0.6, format="csr", random_state=10)
    room = A.nnz + B.nnz
    product_nnz = _kernels.csr_matmat_maxnnz(4, 3, A.indptr, A.indices, C.indptr, C.indices)
    unsorted = (np.array([0, 3, 5]), np.array([3, 1, 1, 2, 0]))  # row 0: columns 3, 1, 1

    def two(name):
        return Case(getattr(_kernels, name), 4, 5, A.indptr, A.indices, randn(A.nnz), B.indptr, B.indices,
                    randn(B.nnz), np.zeros(5, np.int32), np.zeros(room, np.int32), randn(room))

    # values that no result cancels, where SciPy's kernels keep every entry too
    return [two(name) for name in ("csr_plus_csr", "csr_minus_csr", "csr_elmul_csr")] + [
        Case(_kernels.csr_maximum_csr, 4, 5, A.indptr, A.indices, randpos(A.nnz), B.indptr, B.indices,
             randpos(B.nnz), np.zeros(5, np.int32), np.zeros(room, np.int32), randn(room)),
        Case(_kernels.csr_matmat, 4, 3, A.indptr, A.indices, randn(A.nnz), C.indptr, C.indices, randn(C.nnz),
             np.zeros(5, np.int32), np.zeros(product_nnz, np.int32), randn(product_nnz)),
        Case(_kernels.csr_sort_indices, 2, unsorted[0].copy(), unsorted[1].copy(), randn(5)),
        Case(_kernels.csr_sum_duplicates, 2, 4, unsorted[0].copy(), np.array([1, 1, 3, 0, 2]), randn(5)),
        Case(_kernels.csr_diagonal, 1, 4, 5, A.indptr, A.indices, randn(A.nnz), randn(4)),
        Case(_kernels.get_csr_submatrix, 4, 5, A.indptr, A.indices, randn(A.nnz), 1, 3, 0, 4),
        Case(_kernels.csr_sample_values, 4, 5, A.indptr, A.indices, randn(A.nnz), 3, np.array([0, -1, 2]),
             np.array([1, 2, 2]), randn(3)),
    ]


CASES = _cases()
