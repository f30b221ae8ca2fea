"""scipy.ndimage through yuebing: the definitions' values against SciPy in every mode (filters,
map_coordinates of every order <= 3, with and without prefilter), gradients, forward tangents and
Hessian-vector products of small user functions against finite differences (in the image, the
weights, sigma and the coordinates), integer inputs, and the refusals.

The rule cases (check_rule; second order in tests/test_second_order.py) are in
``yuebing/rules/scipy_ndimage.py``.
"""
import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.core import RuleArgumentError

ndi = pytest.importorskip("scipy.ndimage")
from yuebing.rules import scipy_ndimage as rules  # noqa: E402

from .test_scipy_signal import check_all_modes, real, value_of  # noqa: E402

rng = np.random.default_rng(12)
FILTER_MODES = sorted(rules._PAD)


@pytest.mark.parametrize("mode", FILTER_MODES)
def test_filter_values_match_scipy(mode):
    x, w = real(5, 6), real(3, 2)
    xc, wc, w4 = x + 1j * real(5, 6), w + 1j * real(3, 2), real(4)
    calls = [
        (lambda a: ndi.correlate(a, w, mode=mode, cval=0.3), x),
        (lambda a: ndi.convolve(a, wc, mode=mode, cval=0.3, origin=(0, -1)), xc),
        (lambda a: ndi.correlate(a, wc, mode=mode, origin=(1, 0)), xc),
        (lambda a: ndi.correlate1d(a, w[:, 0], 0, mode=mode, origin=-1), x),
        (lambda a: ndi.convolve1d(a, w4, 1, mode=mode, cval=0.2), x),
        (lambda a: ndi.uniform_filter(a, (2, 3), mode=mode, cval=0.1), x),
        (lambda a: ndi.uniform_filter1d(a, 4, 0, mode=mode, origin=-2), x),
        (lambda a: ndi.gaussian_filter(a, (0.7, 1.6), (0, 1), mode=mode, cval=0.4), x),
        (lambda a: ndi.gaussian_filter1d(a, 1.2, 0, 2, mode=mode, radius=2), x),
    ]
    for f, a in calls:
        np.testing.assert_allclose(value_of(f, a), f(a), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("mode", FILTER_MODES)
def test_filters_in_user_functions(mode):
    x, w = real(5, 6), real(3, 2)
    check_all_modes(lambda a: np.sum(np.sin(ndi.correlate(a.reshape(5, 6), w, mode=mode, cval=0.5))), x.ravel())
    check_all_modes(lambda v: np.sum(ndi.convolve(x, v.reshape(3, 2), mode=mode) ** 3), w.ravel())
    check_all_modes(lambda a: np.sum(ndi.gaussian_filter(a.reshape(5, 6), 1.1, mode=mode) ** 3), x.ravel())


def test_gaussian_filter_in_sigma():
    x = real(6, 5)
    check_all_modes(lambda s: np.sum(ndi.gaussian_filter(x, s[0]) ** 3), np.array([1.3]))
    check_all_modes(lambda s: np.sum(ndi.gaussian_filter(x, s, order=(1, 0), mode="wrap") ** 2), np.array([0.8, 1.7]))
    check_all_modes(lambda s: np.sum(ndi.gaussian_filter1d(x, s[0], axis=0, order=2) ** 2), np.array([1.1]))


def test_lists_and_integer_images():
    check_all_modes(lambda a: np.sum(ndi.uniform_filter([a[0], 2.0 * a[1], 1.0, a[0]], 3) ** 2), real(2))
    image = np.arange(20).reshape(4, 5)
    g = yb.grad(lambda w: float(np.sum(ndi.correlate(image, w.reshape(2, 2)))))(real(4))
    np.testing.assert_array_equal(g, 0.0)  # an integer result has no derivative (NoTangent)
    assert ndi.correlate(image, np.ones((2, 2))).dtype == image.dtype
    check_all_modes(lambda w: np.sum(ndi.correlate(image, w.reshape(2, 2), output=np.float64) ** 2), real(4))


# ------------------------------------------------------------------ map_coordinates


@pytest.mark.parametrize("mode", sorted(rules._INTERPOLATION))
@pytest.mark.parametrize("order", [0, 1, 2, 3])
def test_map_coordinates_values_match_scipy(mode, order):
    for shape in ((5, 4), (2, 3), (1, 4), (6,)):
        image = real(*shape)
        coords = np.stack([rng.uniform(-7.0, n + 6.0, 60) for n in shape])
        for prefilter in (True, False):
            f = lambda a: ndi.map_coordinates(a, coords, order=order, mode=mode, cval=0.3, prefilter=prefilter)  # noqa: E731
            np.testing.assert_allclose(value_of(f, image), f(image), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("mode", sorted(rules._INTERPOLATION))
@pytest.mark.parametrize("order", [1, 2, 3])
def test_map_coordinates_in_image_and_coordinates(mode, order):
    image = real(5, 6)
    inside = np.stack([rng.uniform(0.2, 3.8, 6), rng.uniform(0.2, 4.8, 6)])
    coords = np.concatenate([inside, [[-1.3, 5.4], [2.2, -0.7]]], axis=1)  # two outside
    coords = coords + 0.01 * (np.abs(coords - np.round(coords)) < 0.05)  # away from the nodes
    check_all_modes(lambda a: np.sum(np.sin(ndi.map_coordinates(a.reshape(5, 6), coords, order=order, mode=mode,
                                                                  cval=0.4))), image.ravel())
    check_all_modes(lambda c: np.sum(ndi.map_coordinates(image, c.reshape(2, -1), order=order, mode=mode,
                                                         cval=0.4) ** 2), coords.ravel())


def test_map_coordinates_refusals():
    with pytest.raises(RuleArgumentError, match="order <= 3"):
        yb.grad(lambda a: np.sum(ndi.map_coordinates(a, [[0.5], [0.5]], order=5)))(real(3, 3))
    with pytest.raises(RuleArgumentError, match="output= an array"):
        yb.grad(lambda a: np.sum(ndi.gaussian_filter(a, 1.0, output=np.zeros((3, 3)))))(real(3, 3))
