"""``scipy.fft.dct``/``idct`` of types 2 and 3, written as one FFT of twice the length
(``rules/scipy_fft.py``): the same values as SciPy for every norm, ``orthogonalize``, ``n``, axis and
real or complex input, and derivatives in every mode against central differences; types 1 and 4
are refused by name."""
import itertools

import numpy as np
import pytest
import scipy.fft

import yuebing as yb
from yuebing.rules.core import RuleArgumentError
from yuebing.rules.scipy_fft import _cosine

from .modes import check_every_mode

X = np.array([0.7, 0.35, 1.2, -0.4])
_RNG = np.random.default_rng(3)
_REAL = _RNG.normal(size=(4, 6))
_COMPLEX = _REAL + 1j * _RNG.normal(size=(4, 6))


@pytest.mark.parametrize("inverse", [False, True], ids=["dct", "idct"])
@pytest.mark.parametrize("kind,norm", list(itertools.product((2, 3), (None, "backward", "ortho", "forward"))))
def test_the_definition_gives_scipys_values(inverse, kind, norm):
    scipy_transform = scipy.fft.idct if inverse else scipy.fft.dct
    for orthogonalize, n, axis, x in itertools.product((None, False, True) if norm == "ortho" else (None,),
                                                         (None, 4, 9), (-1, 0), (_REAL, _COMPLEX)):
        options = {"type": kind, "n": n, "axis": axis, "norm": norm, "orthogonalize": orthogonalize}
        np.testing.assert_allclose(_cosine(inverse)(x, **options), scipy_transform(x, **options), atol=1e-12,
                                   err_msg=str(options))


def _spectral(x):
    return np.sum(scipy.fft.dct(x ** 2, norm="ortho") ** 3) + np.sum(scipy.fft.idct(x) * x)


def _on_matrices(x):
    m = np.outer(x, x ** 2)
    return np.sum(scipy.fft.dct(m, axis=0, type=3) ** 2) + np.sum(scipy.fft.idct(m, n=5, norm="forward"))


def _complex_input(x):
    return np.sum(np.abs(scipy.fft.dct(x * (1 + 0.5j), norm="ortho")) ** 2)


@pytest.mark.parametrize("f", [_spectral, _on_matrices, _complex_input])
def test_cosine_transforms_in_every_mode(f):
    check_every_mode(f, X)


@pytest.mark.parametrize("kind", [1, 4])
def test_other_types_are_refused(kind):
    with pytest.raises(RuleArgumentError, match=f"not type {kind}"):
        yb.grad(lambda x: np.sum(scipy.fft.dct(x, type=kind)))(X)
