"""``np.nditer`` with ``external_loop`` (and ``buffered``, ``grow_inner``, ``buffersize``): what it
yields is a list of 1-D chunks, each a run of the elements a plain loop yields one by one
(``numpy_iterators.nditer_plan``'s order), as long as NumPy's own iterator makes it on the
primals. A chunk is a view of its operand (NumPy's are, unbuffered; buffered ones of a read-only
operand are copies with the same values, and of a writable one are written back when the iterator
closes, which a view does at once), so its fdata (tangent) is the same view of the operand's fdata
(tangent): linear, no pullback work. The run of an operand's elements is equally spaced in memory
(NumPy makes chunks so); a tangent laid out otherwise, where the run is not, is refused.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..tangents import NoRData, NoTangent
from ..tangents.arrays import array_root
from .core import CoDual, Dual, RuleArgumentError, frule_for, primal, rrule_for
from .declare import nondifferentiable
from .second_order import linear

#: flags that shape the chunks of an external loop
CHUNK_FLAGS = ("buffered", "grow_inner")


def nditer_chunk_lengths(operands: list, flags: Any, order: str, buffersize: int) -> list[int]:
    """The length of each chunk NumPy's iterator yields with ``external_loop`` on the primals."""
    chosen = ["external_loop", "refs_ok", "zerosize_ok"] + [f for f in flags or () if f in CHUNK_FLAGS]
    lengths = []
    for value in np.nditer(operands, flags=chosen, order=order, buffersize=buffersize):
        first = value[0] if isinstance(value, tuple) else value
        lengths.append(int(first.shape[0]) if first.ndim else 1)
    return lengths


nondifferentiable(nditer_chunk_lengths)


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def _run(array: np.ndarray, indices: list, writable: bool) -> np.ndarray:
    """The 1-D view of ``array`` whose elements are ``array[index]`` for ``indices`` (equally
    spaced in memory), writable or not."""
    first = array[indices[0]]
    addresses = [_address(array[index]) for index in indices]
    step = addresses[1] - addresses[0] if len(addresses) > 1 else array.itemsize
    if any(b - a != step for a, b in zip(addresses, addresses[1:])):
        raise RuleArgumentError("numpy.nditer with external_loop: a tangent laid out in memory otherwise than "
                                "its array has no view for NumPy's chunk; pass a tangent made like the array "
                                "(np.zeros_like(x)), or loop without external_loop")
    root = array_root(array)
    if root.flags.c_contiguous or root.flags.f_contiguous:
        view = np.ndarray((len(indices),), array.dtype, buffer=root, offset=_address(first) - _address(root),
                          strides=(step,))
    else:
        view = np.lib.stride_tricks.as_strided(first, (len(indices),), (step,))
    if not (writable and array.flags.writeable):
        view.flags.writeable = False
    return view


def _chunks(arrays: list, steps: list, lengths: list, writable: list) -> list:
    out, start = [], 0
    for length in lengths:
        run = steps[start:start + length]
        views = [_run(a, [step[k] for step in run], w) if isinstance(a, np.ndarray) else a
                 for k, (a, w) in enumerate(zip(arrays, writable))]
        out.append(views[0] if len(arrays) == 1 else tuple(views))
        start += length
    return out


def nditer_chunk_views(operands: list, steps: list, lengths: list, writable: list) -> list:
    """The chunks ``np.nditer(..., flags=['external_loop'])`` yields: runs of ``lengths`` of the
    elements at ``steps`` (``nditer_plan``'s indices), 1-D views of the operands."""
    return _chunks(operands, steps, lengths, writable)


def _derivatives(arrays: list, derivatives: Any, none: Any) -> list:
    """The operands' fdata (tangents), ``none`` for an operand without one."""
    parts = derivatives if isinstance(derivatives, list) else [none] * len(arrays)
    return [d if isinstance(d, np.ndarray) else none for d in parts]


@rrule_for(nditer_chunk_views)
def _nditer_chunk_views_rrule(operands: CoDual, steps: CoDual, lengths: CoDual, writable: CoDual) -> tuple[CoDual, Callable]:
    arrays, plan, sizes = primal(operands), primal(steps), primal(lengths)
    fdata = _chunks(_derivatives(arrays, operands.fdata, NoTangent), plan, sizes, [True] * len(arrays))
    out = CoDual(_chunks(arrays, plan, sizes, primal(writable)), fdata)
    return out, lambda dy: (NoRData,) * 5  # views: cotangents reach the operands' fdata


@frule_for(nditer_chunk_views)
def _nditer_chunk_views_frule(operands: Any, steps: Any, lengths: Any, writable: Any) -> Dual:
    arrays, plan, sizes = primal(operands), primal(steps), primal(lengths)
    tangents = operands.tangent if isinstance(operands, Dual) else NoTangent
    return Dual(_chunks(arrays, plan, sizes, primal(writable)),
                _chunks(_derivatives(arrays, tangents, NoTangent), plan, sizes, [True] * len(arrays)))


linear(nditer_chunk_views)


def cast_for_nditer(operands: list, op_dtypes: Any, writable: list) -> list:
    """``op_dtypes``: each read-only operand cast as NumPy's buffers cast it (a copy, with the
    derivative of the cast); a writable one whose dtype would change is refused (NumPy writes its
    buffer back when the iterator closes, which a loop over a copy would not)."""
    dtypes = list(op_dtypes) if isinstance(op_dtypes, (list, tuple)) else [op_dtypes] * len(operands)
    out = []
    for a, dtype, w in zip(operands, dtypes, writable):
        if dtype is None or np.dtype(dtype) == a.dtype:
            out.append(a)
        elif w:
            raise RuleArgumentError(
                "numpy.nditer: op_dtypes casting a writable operand is not differentiated (NumPy writes the cast "
                "buffer back when the iterator closes); cast before the loop and assign back after it")
        else:
            out.append(np.asarray(a, dtype=dtype))
    return out


CASES: list = []  # checked through np.nditer's own definition: tests/test_nditer_flags.py
