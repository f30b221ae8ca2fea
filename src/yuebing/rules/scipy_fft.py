"""``scipy.fft``'s transforms as ``numpy.fft``'s (``numpy_fft.py``: their rules, conventions and
second order). Both run pocketfft on the same arguments; SciPy's ``overwrite_x`` and ``workers``
only choose memory and threads. SciPy checks each call on the primals first (a ``plan`` is refused
by SciPy itself). ``scipy.signal.hilbert`` and others reach NumPy's rules this way.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .cases import Case, randc, randn
from .second_order import defined_as

try:
    import scipy.fft as sfft
except ImportError:  # the scipy extra is not installed: no rules to register
    sfft = None

ONE_AXIS = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
SEVERAL_AXES = ("fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn")


def _one_axis(transform: Callable) -> Callable:
    def by_numpy(x, n=None, axis=-1, norm=None, overwrite_x=False, workers=None, *, plan=None):
        return transform(x, n, axis, norm)

    return by_numpy


def _several_axes(transform: Callable) -> Callable:
    def by_numpy(x, s=None, axes=None, norm=None, overwrite_x=False, workers=None, *, plan=None):
        return transform(x, s, axes, norm)

    return by_numpy


def _two_axes(transform: Callable) -> Callable:
    def by_numpy(x, s=None, axes=(-2, -1), norm=None, overwrite_x=False, workers=None, *, plan=None):
        return transform(x, s, axes, norm)

    return by_numpy


def _register() -> None:
    for name in ONE_AXIS:
        defined_as(getattr(sfft, name), _one_axis(getattr(np.fft, name)), validate=True)
    for name in SEVERAL_AXES:
        numpy_transform = getattr(np.fft, name)
        if name.endswith("2"):  # SciPy's default axes are NumPy's: (-2, -1)
            defined_as(getattr(sfft, name), _two_axes(numpy_transform), validate=True)
        else:
            defined_as(getattr(sfft, name), _several_axes(numpy_transform), validate=True)


if sfft is not None:
    _register()


def _cases() -> list[Any]:
    return [
        Case(sfft.fft, randn(6)), Case(sfft.ifft, randc(5), kwargs={"norm": "ortho"}),
        Case(sfft.rfft, randn(7), kwargs={"n": 8}), Case(sfft.irfft, randc(5)),
        Case(sfft.hfft, randc(4)), Case(sfft.ihfft, randn(6)),
        Case(sfft.fft2, randc(3, 4)), Case(sfft.irfftn, randc(3, 3), kwargs={"axes": (0, 1)}),
        Case(sfft.fftn, randn(2, 3, 2), kwargs={"s": (2, 4), "axes": (0, 2), "norm": "forward"}),
    ]


CASES = _cases() if sfft is not None else []
