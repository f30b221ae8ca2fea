"""``x.flat`` of an array that is not C-contiguous, under differentiation.

NumPy's ``flatiter`` reads and writes its array live, in C order. When the array is C-contiguous
that order is a 1-D view, and ``x.flat`` is that view (``rules/numpy_iterators.py``). Otherwise no
view has that order, and a copy would be stale: ``e = x.T.flat; x[0, 0] = v; e[0]`` must read
``v``, and ``e[0] = v`` must write ``x``. ``FlatIterator`` is that object in Python: it holds the
array and does each read and write through it, so its methods are differentiated as user code
is (its tangent is the array's, held in the field ``base``). This module registers no rule."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ir.primitives import flat_assign


class FlatIterator:
    """What ``x.flat`` gives under differentiation when ``x`` is not C-contiguous: each item read
    from ``x`` when it is asked for (a copy, as NumPy's ``flatiter`` gives), each write made into
    ``x`` (``flat_assign``, NumPy's repetition of values included). As NumPy's, it is its own
    iterator, and an index read or written sets its position back to the start."""

    def __init__(self, base: np.ndarray) -> None:
        self.base = base
        self.index = 0

    def __getitem__(self, index: Any) -> Any:
        self.index = 0
        return np.ravel(self.base)[index]

    def __setitem__(self, index: Any, values: Any) -> None:
        self.index = 0
        flat_assign(self.base, index, values)

    def __iter__(self) -> FlatIterator:
        return self

    def __next__(self) -> Any:
        if self.index >= self.base.size:
            raise StopIteration
        item = self.base[np.unravel_index(self.index, self.base.shape)]
        self.index += 1
        return item

    def __len__(self) -> int:
        return self.base.size

    @property
    def coords(self) -> tuple:
        return np.unravel_index(self.index, self.base.shape)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.ravel(self.base) if dtype is None else np.ravel(self.base).astype(dtype)

    def copy(self) -> np.ndarray:
        return np.ravel(self.base).copy()
