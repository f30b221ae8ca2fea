"""Recycled buffers for large arrays: a small caching allocator for yuebing's generated code.

A fresh large array costs page faults on first touch (the C allocator maps new memory for it and
hands it back to the system when a gradient call frees its temporaries), several times the
arithmetic done on it. The inline array templates (``transform/templates.py``) therefore take the
results, fdata and reverse temporaries of large arrays from here, and buffers come back in two
ways:

* ``release(buffer)``: a template's reverse step is done with a buffer and nothing else refers
  to it;
* ``sweep()``: at the end of a gradient call, every buffer lent since that is now referred to by
  nothing but this module (results the reverse pass dropped, temporaries other code held) goes
  back too, so a steady loop of gradient calls allocates nothing new.

Both check reference counts, so values the caller keeps -- outputs, aux data, arrays stored in
containers, anything with a view on it -- are never recycled. The pool holds at most
``MAX_POOLED_BYTES``; memory beyond that goes back to the allocator.

The pool is shared by all threads and guarded by one lock (taken only for large arrays, whose
arithmetic costs far more): a buffer is handed to one user at a time, and a sweep in one thread
pools only what no thread refers to.
"""
from __future__ import annotations

import sys
import threading
from typing import Any

import numpy as np

from ..rules import util as _util

# elements (32 KB); smaller arrays are cheap to allocate. Arrays of 4096 to 16384 elements come
# from glibc's heap, whose top goes back to the system at the end of a call or not depending on
# what happens to sit above it: simple_mlp's HVP (128x70 fdata) took ~170 page faults a call in 5
# of 6 fresh processes with 16384 here, in 1 of 6 with 4096 (docs/performance.md)
MIN_SIZE = 4096
MAX_POOLED_BYTES = 512 * 2 ** 20
MAX_LENT = 4096  # buffers followed between sweeps; beyond that the oldest are left to their users

_POOL: dict[tuple, list] = {}
_pooled_bytes = 0
_LENT: dict[int, np.ndarray] = {}  # id -> buffer handed out and not yet seen free
_UNREFERENCED = sys.getrefcount(object()) + 2  # the caller's local and our parameter, in a call
_LOCK = threading.RLock()  # guards _POOL, _pooled_bytes and _LENT (re-entrant: a collection run
# inside a locked section can never deadlock on it)


def take(like: np.ndarray) -> np.ndarray | None:
    """A recycled buffer shaped like large C-ordered ``like``, if one is free."""
    global _pooled_bytes
    if like.size >= MIN_SIZE and like.flags.c_contiguous:
        with _LOCK:
            free = _POOL.get((like.shape, like.dtype))
            if free:
                buffer = free.pop()
                _pooled_bytes -= buffer.nbytes
                _LENT[id(buffer)] = buffer
                return buffer
    return None


def _fresh(like: np.ndarray, zero: bool) -> np.ndarray:
    buffer = (np.zeros if zero else np.empty)(like.shape, like.dtype)
    if buffer.size >= MIN_SIZE:
        with _LOCK:
            if len(_LENT) >= MAX_LENT:
                _sweep(forget_held=True)
            _LENT[id(buffer)] = buffer
    return buffer


def zeros_like(y: np.ndarray) -> np.ndarray:
    """A zero fdata for array ``y`` (C-ordered, like ``y`` when ``y`` is)."""
    if y.flags.c_contiguous:
        buffer = take(y)
        if buffer is not None:
            buffer.fill(0)
            return buffer
        return _fresh(y, zero=True)
    return np.zeros_like(y)


_util.ZEROS_LIKE = zeros_like  # the rules' zero fdata of new arrays come from the pool too


def empty(shape: Any, dtype: Any = np.float64) -> np.ndarray:
    """An uninitialised C-ordered array (from the pool when large), ``np.empty``'s arguments."""
    global _pooled_bytes
    shape, dtype = tuple(shape), np.dtype(dtype)
    with _LOCK:
        free = _POOL.get((shape, dtype))
        if free:
            buffer = free.pop()
            _pooled_bytes -= buffer.nbytes
            _LENT[id(buffer)] = buffer
            return buffer
    return _fresh(np.broadcast_to(np.empty((), dtype), shape), zero=False)


def followed(buffer: Any) -> int:
    """1 if ``buffer`` is lent (this module refers to it), else 0."""
    return int(_LENT.get(id(buffer)) is buffer)


_util.EMPTY, _util.POOLED = empty, followed  # what a rule writes whole (kron's tangent) too


def scratch(like: np.ndarray) -> np.ndarray:
    """An uninitialised C-ordered buffer shaped like ``like``."""
    buffer = take(like)
    return _fresh(like, zero=False) if buffer is None else buffer


def _pool(buffer: np.ndarray) -> None:
    """Put a free buffer in the pool (the caller holds ``_LOCK``)."""
    global _pooled_bytes
    if _pooled_bytes + buffer.nbytes <= MAX_POOLED_BYTES:
        _POOL.setdefault((buffer.shape, buffer.dtype), []).append(buffer)
        _pooled_bytes += buffer.nbytes


def release(buffer: Any) -> None:
    """Return a spent buffer to the pool when nothing else refers to it."""
    if type(buffer) is np.ndarray and buffer.size >= MIN_SIZE and buffer.base is None \
            and buffer.flags.c_contiguous:
        with _LOCK:
            followed = _LENT.get(id(buffer)) is buffer
            if sys.getrefcount(buffer) <= _UNREFERENCED + followed:
                if followed:
                    del _LENT[id(buffer)]
                _pool(buffer)


def lent() -> bool:
    """Whether any buffer is out (a sweep has work to do)."""
    return bool(_LENT)


def sweep(forget_held: bool = False) -> None:
    """Pool every lent buffer that nothing but this module refers to any more. With
    ``forget_held``, stop following the ones still in use (they become their users' arrays)."""
    with _LOCK:
        _sweep(forget_held)


def _sweep(forget_held: bool) -> None:
    for key in list(_LENT):
        if sys.getrefcount(_LENT[key]) <= 2:  # the dict's reference and getrefcount's argument
            _pool(_LENT.pop(key))
        elif forget_held:
            del _LENT[key]


def clear() -> None:
    """Drop every pooled and lent buffer (tests; freeing memory)."""
    global _pooled_bytes
    with _LOCK:
        _POOL.clear()
        _LENT.clear()
        _pooled_bytes = 0


def pooled(shape: tuple, dtype: Any = np.float64) -> int:
    """How many free buffers of this shape and dtype the pool holds."""
    return len(_POOL.get((tuple(shape), np.dtype(dtype)), ()))


def add_product(target: np.ndarray, a: np.ndarray, b: Any) -> None:
    """``target += a * b`` (``a`` shaped like ``target``) without a fresh large temporary."""
    if a.size < MIN_SIZE or a.shape != target.shape:
        target += a * b
        return
    product = scratch(a)
    np.multiply(a, b, out=product)
    target += product
    release(product)


def spent_product(spent: np.ndarray, b: Any) -> Any:
    """``spent * b`` where ``spent`` is an adjoint its step is done with: taken in ``spent``'s
    own memory when nothing else refers to it and ``b`` (a mask, a float) keeps its shape."""
    if type(spent) is np.ndarray and spent.size >= MIN_SIZE and spent.base is None \
            and spent.dtype is _F64 and np.shape(b) in ((), spent.shape) and spent.flags.c_contiguous \
            and spent.flags.writeable \
            and sys.getrefcount(spent) <= _UNREFERENCED + (_LENT.get(id(spent)) is spent):
        return np.multiply(spent, b, out=spent)
    return spent * b


def add_spent_product(target: np.ndarray, spent: np.ndarray, b: Any) -> None:
    """``target += spent * b`` where ``spent`` is a cotangent its reverse step is done with: the
    product is taken in ``spent``'s own memory when nothing else refers to it (the check
    ``release`` makes), sparing a large temporary at a point where the reverse pass holds the
    most; through ``add_product`` otherwise."""
    if type(spent) is np.ndarray and spent.size >= MIN_SIZE and spent.shape == target.shape \
            and spent.base is None and spent.dtype == target.dtype and spent.flags.c_contiguous \
            and spent.flags.writeable \
            and sys.getrefcount(spent) <= _UNREFERENCED + (_LENT.get(id(spent)) is spent):
        np.multiply(spent, b, out=spent)
        target += spent
        return
    add_product(target, spent, b)


def add_matmul(target: np.ndarray, a: np.ndarray, b: np.ndarray, sign: float = 1.0) -> None:
    """``target += a @ b`` for 2-D float64 matrices (a matrix product's cotangent): BLAS's gemm
    accumulating straight into ``target`` (no temporary product, no separate addition pass:
    measured 1.1x to 3x faster) where SciPy is there and every operand is laid out in C or
    Fortran order; NumPy's product and addition otherwise. ``sign`` -1: ``target -= a @ b``."""
    gemm = _gemm_operands(target, a, b)
    if gemm is None:
        if sign < 0:
            target -= a @ b
        else:
            target += a @ b
        return
    c, first, trans_first, second, trans_second = gemm
    out = _DGEMM(sign, first, second, 1.0, c, trans_a=trans_first, trans_b=trans_second, overwrite_c=1)
    if out is not c:  # f2py copied it after all: the sum is in ``out``
        c[...] = out


def _gemm_operands(target: Any, a: Any, b: Any) -> tuple | None:
    """What gemm takes to compute ``target += a @ b`` in place (BLAS works in Fortran order: a
    C-ordered ``target`` is updated as ``target^T += b^T a^T``), or None where it cannot: SciPy
    missing, not float64 matrices, an operand in neither C nor Fortran order, nothing to add, or
    ``target`` overlapping an operand. Runs once per product per gradient call, so it reads
    each array's flags once (each ``.flags`` read builds an object)."""
    if (_DGEMM is None and not _find_gemm()) or type(target) is not np.ndarray or type(a) is not np.ndarray \
            or type(b) is not np.ndarray:
        return None
    if target.dtype is not _F64 or a.dtype is not _F64 or b.dtype is not _F64 or target.ndim != 2 \
            or not a.size or not b.size:
        return None
    flags = target.flags
    if not flags.writeable or _may_overlap(target, flags.owndata, a) or _may_overlap(target, flags.owndata, b):
        return None
    if flags.f_contiguous:
        first, trans_first = _blas_operand(a)
        second, trans_second = _blas_operand(b)
        c = target
    elif flags.c_contiguous:
        first, trans_first = _blas_operand(b.T)
        second, trans_second = _blas_operand(a.T)
        c = target.T
    else:
        return None
    if first is None or second is None:
        return None
    return c, first, trans_first, second, trans_second


def _find_gemm() -> bool:
    """Whether SciPy's BLAS gemm is there. Taken only once the user's program has imported
    ``scipy.linalg`` (importing it costs a third of a second, which a gradient of NumPy code
    should not pay): until then NumPy's product and addition, which differ only in rounding."""
    global _DGEMM
    if "scipy.linalg" not in sys.modules:
        return False
    from scipy.linalg.blas import dgemm

    _DGEMM = dgemm
    return True


def _may_overlap(target: np.ndarray, target_owns: bool, x: np.ndarray) -> bool:
    """Whether ``x`` may share memory with ``target``. The common case without NumPy's bounds
    test (a microsecond or two a call): ``target`` owns its memory and ``x`` is another owner,
    or a view of another owner (NumPy collapses a view's ``base`` to the array owning the
    memory), so the two are distinct allocations."""
    if x is target:
        return True
    if target_owns:
        if x.flags.owndata:
            return False
        base = x.base
        if type(base) is np.ndarray and base is not target and base.flags.owndata:
            return False
    return np.may_share_memory(target, x)


def _blas_operand(x: np.ndarray) -> tuple:
    """``(array, transpose flag)`` that BLAS reads as ``x`` without a copy, or ``(None, 0)``."""
    flags = x.flags
    if flags.f_contiguous:
        return x, 0
    if flags.c_contiguous:
        return x.T, 1
    return None, 0


_DGEMM: Any = None  # SciPy's gemm, once _find_gemm saw scipy.linalg imported
_F64 = np.dtype(np.float64)


def sum_product(a: np.ndarray, b: np.ndarray) -> float:
    """``np.sum(a * b)`` for same-shape arrays, without a fresh large temporary."""
    if a.size < MIN_SIZE:
        return float(np.sum(a * b))
    product = scratch(a)
    np.multiply(a, b, out=product)
    total = float(product.sum())
    release(product)
    return total


def add_quotient(target: np.ndarray, a: np.ndarray, b: Any) -> None:
    """``target += a / b`` (``a`` shaped like ``target``) without a fresh large temporary."""
    if a.size < MIN_SIZE or a.shape != target.shape:
        target += a / b
        return
    quotient = scratch(a)
    np.divide(a, b, out=quotient)
    target += quotient
    release(quotient)
