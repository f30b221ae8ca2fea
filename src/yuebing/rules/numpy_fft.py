"""``numpy.fft``: the discrete Fourier transforms (linear maps), the shifts (permutations) and the
sample frequencies.

Transforms: ``fft``, ``ifft``, ``rfft``, ``irfft``, ``hfft``, ``ihfft``, ``fft2``, ``ifft2``,
``rfft2``, ``irfft2``, ``fftn``, ``ifftn``, ``rfftn``, ``irfftn``, with ``n``/``s`` (zero padding
and cropping), ``axis``/``axes`` (repeated axes too) and ``norm`` in all three conventions; ``out=``
runs as ``out[...] = f(x)`` (``numpy_arguments.rule``: the spec never sees it). Each is declared ``linear`` for second order. ``fftshift``/``ifftshift`` are
permutations (each the other's adjoint). ``fftfreq``/``rfftfreq`` are ``k / (n d)``: zero in the
integer ``n``, differentiable in the spacing ``d`` (``dy/dd = -y/d``).

Conventions (docs/fft.md). Cotangents of complex values use the real inner product
``Re(conj(a) b)`` (docs/conventions.md), so the cotangent map of a linear ``y = A x`` is the
conjugate transpose ``A^H g``, and when ``x`` is real, its real part (``accumulate`` takes it). The
adjoint of a transform with ``norm`` is the inverse transform with the *dual* norm (backward <->
forward, ortho <-> ortho): ``fft(norm="backward")^H = ifft(norm="forward")``. An n-dimensional
transform is NumPy's sequence of 1-D stages (``_stages``), whose adjoints run in reverse order;
padding's adjoint is cropping and cropping's is zero padding (``_resize``).

The real transforms have a Hermitian half. ``rfft`` keeps the ``n//2 + 1`` first outputs of the
full transform, so its adjoint is ``Re(F^H [g; 0])``: NumPy's ``irfft`` of ``g / w`` with the dual
norm, where ``w`` is 1 for DC (and for Nyquist when ``n`` is even) and 2 for the other bins
(``irfft`` counts those bins twice, for their mirror images). ``irfft`` reads ``Re(sum_k w_k X_k
e^(2 pi i k t / n))`` (the imaginary parts of DC and Nyquist are ignored), so its adjoint is
``w * rfft(g)`` with the dual norm: the cotangent of the imaginary part of DC and Nyquist is 0.
``hfft(a) = irfft(conj(a))`` and ``ihfft(a) = conj(rfft(a))`` with swapped norms follow.
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from ..tangents import NoRData, NoTangent
from .cases import Case, randc, randn
from .core import Dual, primal
from .numpy_arguments import deliver, forward, rule
from .numpy_shape import linear_op
from .second_order import linear, with_vjp
from .util import fit_tangent, out_cotangent, output, tangent

_fft = np.fft

# --------------------------------------------------------------------------------------------
# 1-D pieces: norms, resizing, Hermitian weights, the adjoint of each 1-D transform
# --------------------------------------------------------------------------------------------

_DUAL = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _dual(norm: Any) -> Any:
    """The norm whose inverse transform is the adjoint of a transform with ``norm``."""
    return _DUAL[norm]


def _resize(g: np.ndarray, axis: int, m: int) -> np.ndarray:
    """``g`` cropped or zero-padded to length ``m`` along ``axis`` (the adjoint of NumPy's
    padding or cropping of the input to the transform length)."""
    k = g.shape[axis]
    if k == m:
        return g
    if k > m:
        return np.take(g, np.arange(m), axis=axis)
    widths = [(0, 0)] * g.ndim
    widths[axis] = (0, m - k)
    return np.pad(g, widths)


def _weights(n: int, axis: int, ndim: int, dtype: Any) -> np.ndarray:
    """How often each bin of a Hermitian half of length ``n//2 + 1`` counts in the full spectrum
    of length ``n``: 1 for DC and (``n`` even) Nyquist, 2 for the others; shaped to broadcast
    along ``axis``."""
    w = np.full(n // 2 + 1, 2.0, dtype=dtype)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    shape = [1] * ndim
    shape[axis] = w.size
    return w.reshape(shape)


def _real_dtype(g: np.ndarray) -> Any:
    return g.real.dtype if g.dtype.kind in "fc" else np.float64


def _adjoint_fft(g: np.ndarray, n: int, axis: int, norm: Any, m: int) -> np.ndarray:
    return _resize(_fft.ifft(g, axis=axis, norm=_dual(norm)), axis, m)


def _adjoint_ifft(g: np.ndarray, n: int, axis: int, norm: Any, m: int) -> np.ndarray:
    return _resize(_fft.fft(g, axis=axis, norm=_dual(norm)), axis, m)


def _adjoint_rfft(g: np.ndarray, n: int, axis: int, norm: Any, m: int) -> np.ndarray:
    w = _weights(n, axis, g.ndim, _real_dtype(g))
    return _resize(_fft.irfft(g / w, n, axis=axis, norm=_dual(norm)), axis, m)


def _adjoint_irfft(g: np.ndarray, n: int, axis: int, norm: Any, m: int) -> np.ndarray:
    w = _weights(n, axis, g.ndim, _real_dtype(g))
    return _resize(w * _fft.rfft(np.real(g), n, axis=axis, norm=_dual(norm)), axis, m)


def _adjoint_hfft(g: np.ndarray, n: int, axis: int, norm: Any, m: int) -> np.ndarray:
    return np.conj(_adjoint_irfft(g, n, axis, _dual(norm), m))  # hfft(a) = irfft(conj(a)), dual norm


def _adjoint_ihfft(g: np.ndarray, n: int, axis: int, norm: Any, m: int) -> np.ndarray:
    return _adjoint_rfft(np.conj(g), n, axis, _dual(norm), m)  # ihfft(a) = conj(rfft(a)), dual norm


_ADJOINTS: dict[str, Callable] = {"fft": _adjoint_fft, "ifft": _adjoint_ifft, "rfft": _adjoint_rfft,
                                  "irfft": _adjoint_irfft, "hfft": _adjoint_hfft, "ihfft": _adjoint_ihfft}
_HALF_INPUT = ("irfft", "hfft")  # default n = 2 (m - 1); output length n
_HALF_OUTPUT = ("rfft", "ihfft")  # output length n // 2 + 1


# --------------------------------------------------------------------------------------------
# Stages: each function as NumPy's sequence of 1-D transforms, and their adjoint
# --------------------------------------------------------------------------------------------


def _stage_n(kind: str, n: Any, length: int) -> int:
    """The transform length of a 1-D stage (``n=None``: NumPy's default for the kind)."""
    if n is None:
        return 2 * (length - 1) if kind in _HALF_INPUT else length
    return operator.index(n)


def _nd_args(shape: tuple, s: Any, axes: Any, invreal: bool) -> tuple[list, list]:
    """``(s, axes)`` as NumPy's ``_cook_nd_args`` makes them (without its warnings: the primal
    call gives those)."""
    shapeless = s is None
    if s is None:
        s = list(shape) if axes is None else [shape[a] for a in axes]
    s = list(s)
    axes = list(range(-len(s), 0)) if axes is None else list(axes)
    if invreal and shapeless:
        s[-1] = (shape[axes[-1]] - 1) * 2
    s = [shape[a] if k == -1 else k for k, a in zip(s, axes)]
    return s, axes


def _stages(name: str, shape: tuple, n_or_s: Any, axes: Any) -> list[tuple[str, Any, int]]:
    """``(kind, n, axis)`` of each 1-D transform NumPy's ``name`` applies, in NumPy's order."""
    if name in _ADJOINTS:
        return [(name, n_or_s, axes)]
    base = name.rstrip("n2")
    s, ax = _nd_args(shape, n_or_s, axes, invreal=base == "irfft")
    if base in ("fft", "ifft"):
        return [(base, s[i], ax[i]) for i in reversed(range(len(ax)))]
    if base == "rfft":
        return [("rfft", s[-1], ax[-1])] + [("fft", s[i], ax[i]) for i in range(len(ax) - 2, -1, -1)]
    return [("ifft", s[i], ax[i]) for i in range(len(ax) - 1)] + [("irfft", s[-1], ax[-1])]


def _adjoint(name: str, shape: tuple, n_or_s: Any, axes: Any, norm: Any, g: np.ndarray) -> np.ndarray:
    """The cotangent of the input of ``numpy.fft.<name>`` (input ``shape``) for cotangent ``g``
    of its output: the stages' adjoints in reverse order, each resizing back to its input."""
    plan = []
    current = list(shape)
    for kind, n, axis in _stages(name, shape, n_or_s, axes):
        axis = operator.index(axis) % len(current)
        m = current[axis]
        n = _stage_n(kind, n, m)
        plan.append((kind, n, axis, m))
        current[axis] = n // 2 + 1 if kind in _HALF_OUTPUT else n
    g = np.asarray(g)
    for kind, n, axis, m in reversed(plan):
        g = _ADJOINTS[kind](g, n, axis, norm, m)
    return g


# --------------------------------------------------------------------------------------------
# The rules
# --------------------------------------------------------------------------------------------


def _transform(name: str, default_axes: Any) -> Callable:
    """The ``linear_op`` spec of ``numpy.fft.<name>`` (1-D functions take ``n``/``axis``, the
    others ``s``/``axes``; the spec's signature is NumPy's, for binding call-site keywords)."""
    function = getattr(_fft, name)

    def spec(a, n=None, axis=default_axes, norm=None, out=None):  # out= is handled by numpy_arguments.rule
        op = lambda v: function(v, n, axis, norm)  # noqa: E731
        return op, lambda g: _adjoint(name, np.shape(a), n, axis, norm, g)

    if name not in _ADJOINTS:  # n-dimensional: NumPy names them s and axes
        def spec(a, s=None, axes=default_axes, norm=None, out=None):  # noqa: F811
            op = lambda v: function(v, s, axes, norm)  # noqa: E731
            return op, lambda g: _adjoint(name, np.shape(a), s, axes, norm, g)

    spec.__qualname__ = f"_{name}_spec"
    return spec


_ONE_D = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
_TWO_D = ("fft2", "ifft2", "rfft2", "irfft2")
_N_D = ("fftn", "ifftn", "rfftn", "irfftn")
TRANSFORMS = tuple(getattr(_fft, name) for name in _ONE_D + _TWO_D + _N_D)

for _name in _ONE_D:
    linear_op(getattr(_fft, _name))(_transform(_name, -1))
for _name in _TWO_D:
    linear_op(getattr(_fft, _name))(_transform(_name, (-2, -1)))
for _name in _N_D:
    linear_op(getattr(_fft, _name))(_transform(_name, None))


@linear_op(_fft.fftshift)
def _fftshift_spec(x, axes=None):
    return (lambda v: _fft.fftshift(v, axes)), (lambda g: _fft.ifftshift(g, axes))


@linear_op(_fft.ifftshift)
def _ifftshift_spec(x, axes=None):
    return (lambda v: _fft.ifftshift(v, axes)), (lambda g: _fft.fftshift(g, axes))


# fftfreq(n, d) = k / (n d): zero in the integer n, -y / d in the spacing d


def _freq_vjp(g, y, n, d=1.0, device=None):
    """Cotangent map of ``fftfreq``/``rfftfreq``: ``d`` gets ``-sum(g y) / d``."""
    return None, -np.sum(g * y) / d


def _frequencies(function: Callable) -> None:
    @rule(function)
    def _rrule(n, d=1.0, device=None):
        kw = {} if primal(device) is None else {"device": primal(device)}
        out = output(function(primal(n), primal(d), **kw))

        def pullback(dy: Any) -> tuple:
            _, gd = _freq_vjp(out_cotangent(out, dy), out.primal, primal(n), primal(d))
            return NoRData, deliver(d, gd)

        return out, pullback

    @forward(function)
    def _frule(n, d=1.0, device=None):
        kw = {} if primal(device) is None else {"device": primal(device)}
        y = function(primal(n), primal(d), **kw)
        td = tangent(d)
        return Dual(y, fit_tangent(-y * (np.asarray(td) / primal(d)) if _moves(td) else NoTangent, y))

    with_vjp(function, _freq_vjp)


def _moves(t: Any) -> bool:
    return isinstance(t, (float, complex, np.number, np.ndarray))


_frequencies(_fft.fftfreq)
_frequencies(_fft.rfftfreq)


# --------------------------------------------------------------------------------------------
# Second order: the transforms and shifts are linear (n, s, axes and norm go to the tangent call)
# --------------------------------------------------------------------------------------------

linear(*TRANSFORMS, _fft.fftshift, _fft.ifftshift)


# --------------------------------------------------------------------------------------------
# Cases (the dot-product, JAX and norm-by-norm checks are in tests/test_numpy_fft.py)
# --------------------------------------------------------------------------------------------


CASES = [
    Case(_fft.fft, randn(6)),
    Case(_fft.fft, randc(5), kwargs={"norm": "ortho"}),
    Case(_fft.fft, randn(3, 4), 6, kwargs={"axis": 0, "norm": "forward"}),
    Case(_fft.fft, randn(7), 4, name="numpy.fft.fft(cropped)"),
    Case(_fft.fft, randn(5, dtype=np.float32)),
    # out=: runs as out[...] = f(x); the array's old contents get a zero cotangent, restored after
    Case(_fft.fft, randn(6), None, -1, None, randc(6), name="numpy.fft.fft(out=)"),
    Case(_fft.rfft2, randn(3, 4), None, (-2, -1), "ortho", randc(3, 3), name="numpy.fft.rfft2(out=)"),
    Case(lambda a: _fft.ifft(a, out=a), randc(6), name="numpy.fft.ifft(a, out=a)"),
    Case(_fft.ifft, randc(2, 5), kwargs={"n": 7}),
    Case(_fft.ifft, randn(6), kwargs={"norm": "ortho"}),
    Case(_fft.rfft, randn(6)),
    Case(_fft.rfft, randn(7), kwargs={"norm": "forward"}),
    Case(_fft.rfft, randn(4, 3), 8, 0, "ortho"),
    Case(_fft.rfft, randn(9), 5, name="numpy.fft.rfft(cropped, odd n)"),
    Case(_fft.irfft, randc(4)),
    Case(_fft.irfft, randc(4), 7, kwargs={"norm": "ortho"}),
    Case(_fft.irfft, randc(3, 5), 4, 0, name="numpy.fft.irfft(cropped input)"),
    Case(_fft.irfft, randn(5), kwargs={"norm": "forward"}),
    Case(_fft.rfft, randn(8, dtype=np.float32), kwargs={"norm": "ortho"}),
    Case(_fft.irfft, randc(5, dtype=np.complex64), 8),
    Case(_fft.rfftn, randn(3, 4, dtype=np.float32)),
    Case(_fft.hfft, randc(4)),
    Case(_fft.hfft, randc(5), 9, kwargs={"norm": "ortho"}),
    Case(_fft.hfft, randn(4), kwargs={"norm": "forward"}),
    Case(_fft.ihfft, randn(6)),
    Case(_fft.ihfft, randn(2, 5), 8, 0, "forward"),
    Case(_fft.fft2, randn(3, 4)),
    Case(_fft.fft2, randc(2, 3, 4), (4, 2), kwargs={"norm": "ortho"}),
    Case(_fft.ifft2, randc(3, 4), kwargs={"axes": (1, 0), "norm": "forward"}),
    Case(_fft.rfft2, randn(4, 5)),
    Case(_fft.rfft2, randn(3, 4), (5, 6), kwargs={"norm": "ortho"}),
    Case(_fft.irfft2, randc(4, 3)),
    Case(_fft.irfft2, randc(4, 3), (3, 5), kwargs={"norm": "forward"}),
    Case(_fft.fftn, randn(2, 3, 4)),
    Case(_fft.fftn, randc(3, 4), (2, 6), (1, 0), "ortho"),
    Case(_fft.fftn, randn(4, 3), kwargs={"axes": (0, 0)}, name="numpy.fft.fftn(repeated axis)"),
    Case(_fft.ifftn, randc(2, 3, 4), kwargs={"axes": (0, 2)}),
    Case(_fft.rfftn, randn(2, 3, 4)),
    Case(_fft.rfftn, randn(3, 4, 2), (5, 3), (0, 1), "forward"),
    Case(_fft.irfftn, randc(3, 2, 4)),
    Case(_fft.irfftn, randc(3, 4), (4, 5), (1, 0), "ortho"),
    Case(_fft.fftshift, randn(5)),
    Case(_fft.fftshift, randn(4, 5), kwargs={"axes": 1}),
    Case(_fft.ifftshift, randc(3, 4)),
    Case(_fft.ifftshift, randn(5, 2), (0,)),
    Case(_fft.fftfreq, 5, 0.3),
    Case(_fft.fftfreq, 6, 2.0),
    Case(_fft.rfftfreq, 7, 0.7),
]
