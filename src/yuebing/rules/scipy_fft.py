"""``scipy.fft``'s transforms as ``numpy.fft``'s (``numpy_fft.py``: their rules, conventions and
second order). Both run pocketfft on the same arguments; SciPy's ``overwrite_x`` and ``workers``
only choose memory and threads. SciPy checks each call on the primals first (a ``plan`` is refused
by SciPy itself). ``scipy.signal.hilbert`` and others reach NumPy's rules this way.

The discrete cosine transforms of types 2 and 3 (``dct``, ``idct``: spectral methods, compression)
are written as one FFT of twice the length (the even extension of ``x``), with SciPy's scalings
for each ``norm`` and ``orthogonalize``; types 1 and 4 and the sine transforms are refused by name.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .cases import Case, randc, randn
from .core import RuleArgumentError
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


def _cosine_2_or_3(x, kind, norm, orthogonalize):
    """SciPy's DCT of type ``kind`` (2 or 3) of real ``x`` along the last axis, by one FFT of
    twice the length: type 2 from the even extension ``[x, x[::-1]]``, type 3 as its transpose."""
    n = x.shape[-1]
    k = np.arange(n)
    ortho = norm == "ortho"
    if kind == 2:
        y = np.real(np.fft.fft(np.concatenate([x, x[..., ::-1]], axis=-1), axis=-1)[..., :n]
                    * np.exp(-1j * np.pi * k / (2 * n)))
        if ortho:  # (orthogonalize: the first entry's own scale, for an orthogonal matrix)
            y = y * np.where((k == 0) & (orthogonalize is not False), np.sqrt(1 / (4 * n)), np.sqrt(1 / (2 * n)))
    else:
        w = np.where(k == 0, 0.5, 1.0)
        if ortho:
            w = w * np.where((k == 0) & (orthogonalize is not False), 2 / np.sqrt(4 * n), 1 / np.sqrt(2 * n))
        z = np.concatenate([x * w * np.exp(1j * np.pi * k / (2 * n)), np.zeros(x.shape)], axis=-1)
        y = np.real(np.fft.ifft(z, axis=-1)[..., :n]) * (4 * n)
    return y / (2 * n) if norm == "forward" else y


def _cosine(inverse: bool) -> Callable:
    name = "idct" if inverse else "dct"

    def by_fft(x, type=2, n=None, axis=-1, norm=None, overwrite_x=False, workers=None, orthogonalize=None):
        if type not in (2, 3):
            raise RuleArgumentError(f"scipy.fft.{name}: yuebing differentiates types 2 and 3 (the DCT and its "
                                    f"inverse), not type {type}")
        x = np.moveaxis(np.asarray(x), axis, -1)
        if n is not None and n != x.shape[-1]:  # truncated, or padded with zeros, as SciPy does
            x = x[..., :n] if n < x.shape[-1] else np.concatenate([x, np.zeros(x.shape[:-1] + (n - x.shape[-1],))], -1)
        kind = 5 - type if inverse else type
        scale = norm if not inverse or norm == "ortho" else {None: "forward", "backward": "forward", "forward": None}[norm]
        if np.iscomplexobj(x):  # the real and imaginary parts transformed apart, as SciPy does (which
            # does not pass orthogonalize on for them: SciPy 1.17 orthogonalizes a complex x regardless)
            y = _cosine_2_or_3(np.real(x), kind, scale, None) + 1j * _cosine_2_or_3(np.imag(x), kind, scale, None)
        else:
            y = _cosine_2_or_3(x, kind, scale, orthogonalize)
        return np.moveaxis(y, -1, axis)

    return by_fft


def _register() -> None:
    for name in ONE_AXIS:
        defined_as(getattr(sfft, name), _one_axis(getattr(np.fft, name)), validate=True)
    for name in SEVERAL_AXES:
        numpy_transform = getattr(np.fft, name)
        if name.endswith("2"):  # SciPy's default axes are NumPy's: (-2, -1)
            defined_as(getattr(sfft, name), _two_axes(numpy_transform), validate=True)
        else:
            defined_as(getattr(sfft, name), _several_axes(numpy_transform), validate=True)
    defined_as(sfft.dct, _cosine(inverse=False), validate=True)
    defined_as(sfft.idct, _cosine(inverse=True), validate=True)


if sfft is not None:
    _register()


def _cases() -> list[Any]:
    return [
        Case(sfft.fft, randn(6)), Case(sfft.ifft, randc(5), kwargs={"norm": "ortho"}),
        Case(sfft.rfft, randn(7), kwargs={"n": 8}), Case(sfft.irfft, randc(5)),
        Case(sfft.hfft, randc(4)), Case(sfft.ihfft, randn(6)),
        Case(sfft.fft2, randc(3, 4)), Case(sfft.irfftn, randc(3, 3), kwargs={"axes": (0, 1)}),
        Case(sfft.fftn, randn(2, 3, 2), kwargs={"s": (2, 4), "axes": (0, 2), "norm": "forward"}),
        Case(sfft.dct, randn(6)), Case(sfft.dct, randn(3, 5), kwargs={"norm": "ortho", "axis": 0}),
        Case(sfft.dct, randn(5), kwargs={"type": 3, "n": 7, "norm": "forward"}),
        Case(sfft.idct, randn(2, 6), kwargs={"norm": "ortho"}), Case(sfft.idct, randn(5), kwargs={"type": 3}),
        Case(sfft.idct, randc(4), kwargs={"norm": "ortho", "orthogonalize": False}),
    ]


CASES = _cases() if sfft is not None else []
