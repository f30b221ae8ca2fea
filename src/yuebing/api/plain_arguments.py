"""The 4-tuples of a forward-over-reverse pass over plain arguments, made without tangent walks.

``yb.hvp`` copies its arguments structurally, checks each direction against its argument, finds
arguments that share float data, and builds zero fdata and the directions by walking the
tangent model (``api/second_order._value_grad_hvp``): tens of microseconds, which dominate the
HVP of a function that takes a few. When every argument is a float64 ndarray (no two sharing
memory) or a Python float, with a direction of the same type and shape, the same 4-tuples
``(copy, zero fdata, direction, zero fdata tangent)`` are made directly here.

The copies protect the caller's arrays from writes the function makes. When a function
provably writes into no array (``transform/argument_writes.py``), ``copy_arguments=False``
hands the passes the caller's arrays and directions themselves (a direction sharing memory with another argument or
direction, or laid out otherwise than its argument, is still copied).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..tangents import NoFData
from ..tangents.arrays import array_root
from ..transform import buffers

_ND, _F64 = np.ndarray, np.dtype(np.float64)


def plain_duals(args: tuple, directions: tuple, copy_arguments: bool = True) -> list | None:
    """The pass's argument 4-tuples, or None when an argument is not plain (the general path).
    ``copy_arguments=False``: the function writes into no array, so the arguments go in as
    they are."""
    duals = []
    roots = set()
    for x, v in zip(args, directions):
        if type(x) is float and type(v) is float:
            duals.append((x, NoFData, v * 1.0, NoFData))
            continue
        if type(x) is not _ND or type(v) is not _ND or x.dtype != _F64 or v.dtype != _F64 or v.shape != x.shape:
            return None
        root = id(array_root(x))
        if root in roots:
            return None  # arguments sharing float data: differentiated slot by slot
        roots.add(root)
        if not copy_arguments and (x.flags.c_contiguous or x.flags.f_contiguous):  # (a strided view: copied, as before)
            duals.append(_uncopied(x, v, roots))
            continue
        # every part in the argument's own memory layout (a Fortran-ordered argument stays one:
        # a write through x.T.reshape(-1) must reach it, and its tangents, as in the plain call)
        copy = _copied(x)
        if copy.flags.c_contiguous:  # (np.zeros: what zeros_like does for C order, at half the cost)
            # a C-ordered direction's copy has the layout already (a third less than filling one)
            direction = _copied(v) if v.flags.c_contiguous else _laid_out_as(copy, v)
            # zero fdata from the pool too (they are the gradient and HVP returned: the pool
            # follows them, and takes them back once the caller lets go of them)
            duals.append((copy, buffers.zeros_like(copy), direction, buffers.zeros_like(copy)))
        else:
            duals.append((copy, np.zeros_like(copy), _laid_out_as(copy, v), np.zeros_like(copy)))
    return duals


def _uncopied(x: np.ndarray, v: np.ndarray, roots: set) -> tuple:
    """The 4-tuple of an argument of a function that writes into no array: ``x`` itself, and
    ``v`` itself unless it shares memory with an argument (``roots``, those met so far: the
    check is finished for those after it by ``plain_duals``' own root test) or is laid out
    otherwise than ``x`` (the passes assume a tangent in its primal's layout)."""
    direction_root = id(array_root(v))
    if direction_root in roots or v.strides != x.strides:
        direction = _copied(v) if v.flags.c_contiguous and x.flags.c_contiguous else _laid_out_as(x, v)
    else:
        direction = v
        roots.add(direction_root)
    return x, buffers.zeros_like(x), direction, buffers.zeros_like(x)


def _copied(x: np.ndarray) -> np.ndarray:
    """A copy of ``x`` in its own memory layout; a large C-ordered one into a buffer of the pool
    (``transform/buffers.py``), back in the pool once the call is done with it: a fresh large
    array is a fresh mapping whose page faults cost more than the copy (the copies of
    simple_mlp's four arguments and directions: 320 faults a call)."""
    if x.size >= buffers.MIN_SIZE and x.flags.c_contiguous:
        copy = buffers.scratch(x)
        np.copyto(copy, x)
        return copy
    return x.copy(order="K")


def _laid_out_as(like: np.ndarray, v: np.ndarray) -> np.ndarray:
    """A copy of ``v`` in ``like``'s memory layout."""
    direction = np.empty_like(like)
    direction[...] = v
    return direction
