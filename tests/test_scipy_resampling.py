"""C-code resampling scientists use, differentiated: ``scipy.ndimage.zoom`` (linear in the image and
in ``cval`` for a fixed zoom: one matrix per axis, ``rules/scipy_ndimage.py``), in reverse, forward
and second order against finite differences, and its values against SciPy's."""
import numpy as np
import pytest

import yuebing as yb

from .all_modes import check_all_modes

ndi = pytest.importorskip("scipy.ndimage")

rng = np.random.default_rng(21)
IMAGE = rng.normal(size=(4, 5))

ZOOMS = [
    dict(zoom=2.0, order=1),
    dict(zoom=1.5),
    dict(zoom=(0.8, 1.7), order=2, mode="mirror"),
    dict(zoom=1.4, order=3, mode="nearest"),
    dict(zoom=2.0, order=0),
    dict(zoom=(2.0, 1.0), order=3, mode="wrap"),
    dict(zoom=1.5, order=3, mode="grid-constant", grid_mode=True, cval=0.4),
    dict(zoom=1.3, order=1, mode="reflect", prefilter=False),
]


@pytest.mark.parametrize("kw", ZOOMS, ids=str)
def test_zoom_every_mode_against_differences(kw):
    weights = rng.normal(size=ndi.zoom(IMAGE, **kw).shape)
    check_all_modes(lambda im: np.sum(weights * ndi.zoom(im, **kw) ** 2), IMAGE.copy())


@pytest.mark.parametrize("kw", ZOOMS, ids=str)
def test_zoom_values_match_scipy(kw):
    value, _ = yb.jvp(lambda im: ndi.zoom(im, **kw), (IMAGE.copy(),), (np.ones_like(IMAGE),))
    np.testing.assert_allclose(value, ndi.zoom(IMAGE, **kw), rtol=1e-12, atol=1e-12)


def test_zoom_in_cval_and_a_3d_image():
    cube = rng.normal(size=(3, 4, 2))
    check_all_modes(lambda c: np.sum(ndi.zoom(cube, 1.5, mode="grid-constant", grid_mode=True, cval=c) ** 2), 0.3)
    check_all_modes(lambda im: np.sum(np.sin(ndi.zoom(im, (1.3, 0.6, 2.0), order=1))), cube.copy())


def test_zoom_keeps_float32_and_the_output_dtype():
    small = IMAGE.astype(np.float32)
    value, tangent = yb.jvp(lambda im: ndi.zoom(im, 1.5), (small,), (np.ones_like(small),))
    assert value.dtype == np.float32 and tangent.dtype == np.float32
    value, _ = yb.jvp(lambda im: ndi.zoom(im, 1.5, output=np.float32), (IMAGE.copy(),), (np.ones_like(IMAGE),))
    assert value.dtype == np.float32


def test_zoom_gradient_is_the_transpose():
    """<J v, u> == <v, J^T u>: forward and reverse mode give one linear map."""
    kw = dict(zoom=(1.7, 0.6), order=3, mode="mirror")
    u = rng.normal(size=ndi.zoom(IMAGE, **kw).shape)
    v = rng.normal(size=IMAGE.shape)
    _, jv = yb.jvp(lambda im: ndi.zoom(im, **kw), (IMAGE.copy(),), (v,))
    g = yb.grad(lambda im: np.sum(u * ndi.zoom(im, **kw)))(IMAGE.copy())
    np.testing.assert_allclose(np.sum(jv * u), np.sum(g * v), rtol=1e-10)


# --------------------------------------------------------------------------------------------
# griddata ('linear': barycentric weights in SciPy's Delaunay simplex; 'nearest') and
# RBFInterpolator (a linear solve), in the values, the evaluation points and the data sites
# --------------------------------------------------------------------------------------------

si = pytest.importorskip("scipy.interpolate")

SITES = rng.uniform(size=(12, 2))
VALUES = np.sin(3 * SITES[:, 0]) + SITES[:, 1] ** 2
QUERY = np.array([[0.4, 0.5], [0.55, 0.3], [0.45, 0.62]])  # inside the hull, away from its edges


def _inside(points):
    from scipy.spatial import Delaunay

    return bool(np.all(Delaunay(points).find_simplex(QUERY) >= 0))


@pytest.mark.parametrize("method", ["linear", "nearest"])
def test_griddata_values_match_scipy(method):
    outside = np.vstack([QUERY, [[2.0, 2.0]]])
    for xi in (outside, (outside[:, 0], outside[:, 1]), outside.reshape(2, 2, 2)):
        value, _ = yb.jvp(lambda v: si.griddata(SITES, v, xi, method=method), (VALUES.copy(),), (np.ones(12),))
        np.testing.assert_allclose(value, si.griddata(SITES, VALUES, xi, method=method), rtol=1e-12, atol=1e-12)
    stacked = np.stack([VALUES, 2 * VALUES], axis=1)  # values with a trailing axis
    value, _ = yb.jvp(lambda v: si.griddata(SITES, v, QUERY), (stacked,), (np.ones_like(stacked),))
    np.testing.assert_allclose(value, si.griddata(SITES, stacked, QUERY), rtol=1e-12)


@pytest.mark.parametrize("method", ["linear", "nearest"])
def test_griddata_in_the_values(method):
    check_all_modes(lambda v: np.sum(si.griddata(SITES, v, QUERY, method=method) ** 2), VALUES.copy())


def test_griddata_linear_in_the_points_and_the_sites():
    assert _inside(SITES)
    check_all_modes(lambda q: np.sum(si.griddata(SITES, VALUES, q.reshape(3, 2)) ** 2), QUERY.ravel().copy())
    check_all_modes(lambda s: np.sum(si.griddata(s.reshape(12, 2), VALUES, QUERY) ** 2), SITES.ravel().copy())


def test_griddata_refuses_what_it_does_not_differentiate():
    from yuebing.rules.core import RuleArgumentError

    with pytest.raises(RuleArgumentError, match="method='cubic'.*RBFInterpolator"):
        yb.grad(lambda v: np.sum(si.griddata(SITES, v, QUERY, method="cubic")))(VALUES.copy())
    check_all_modes(lambda v: np.sum(si.RBFInterpolator(SITES, v, kernel="cubic")(QUERY) ** 2), VALUES.copy())


STRETCHED = SITES * np.array([1.0, 30.0])  # (rescale=True triangulates the sites scaled to a unit box)
STRETCHED_QUERY = QUERY * np.array([1.0, 30.0])


@pytest.mark.parametrize("method", ["linear", "nearest"])
def test_griddata_rescaled(method):
    def f(v):
        return si.griddata(STRETCHED, v, STRETCHED_QUERY, method=method, rescale=True)

    value, _ = yb.jvp(f, (VALUES.copy(),), (np.ones(12),))
    np.testing.assert_allclose(value, f(VALUES), rtol=1e-12, atol=1e-12)
    assert not np.allclose(f(VALUES), si.griddata(STRETCHED, VALUES, STRETCHED_QUERY, method=method)), \
        "rescaling changes the triangulation or the nearest site here"
    check_all_modes(lambda v: np.sum(f(v) ** 2), VALUES.copy())
    if method == "linear":
        check_all_modes(lambda q: np.sum(si.griddata(STRETCHED, VALUES, q.reshape(3, 2), rescale=True) ** 2),
                        STRETCHED_QUERY.ravel().copy())
        check_all_modes(lambda p: np.sum(si.griddata(p.reshape(12, 2), VALUES, STRETCHED_QUERY, rescale=True) ** 2),
                        STRETCHED.ravel().copy())


LINE = np.array([0.3, 0.0, 1.2, 0.7, 2.0, 1.6])  # unsorted sites, as griddata takes them
LINE_VALUES = np.cos(LINE)
LINE_QUERY = np.array([0.2, 0.9, 1.5, 1.9])  # (inside; not at a site)


@pytest.mark.parametrize("method", ["linear", "nearest", "cubic"])
def test_griddata_in_one_dimension(method):
    def f(v):
        return si.griddata(LINE, v, LINE_QUERY, method=method)

    value, _ = yb.jvp(f, (LINE_VALUES.copy(),), (np.ones(6),))
    np.testing.assert_allclose(value, f(LINE_VALUES), rtol=1e-12, atol=1e-12)
    check_all_modes(lambda v: np.sum(f(v) ** 2), LINE_VALUES.copy())
    check_all_modes(lambda q: np.sum(si.griddata((LINE,), LINE_VALUES, (q,), method=method) ** 2), LINE_QUERY.copy())
    if method != "nearest":
        check_all_modes(lambda p: np.sum(si.griddata(p, LINE_VALUES, LINE_QUERY, method=method) ** 2), LINE.copy())


@pytest.mark.parametrize("kw", [{}, {"kernel": "gaussian", "epsilon": 2.0}, {"kernel": "cubic", "smoothing": 0.1},
                                {"kernel": "multiquadric", "epsilon": 1.5, "degree": 1}], ids=str)
def test_rbf_interpolator_in_values_points_and_sites(kw):
    check_all_modes(lambda v: np.sum(si.RBFInterpolator(SITES, v, **kw)(QUERY) ** 2), VALUES.copy())
    check_all_modes(lambda q: np.sum(si.RBFInterpolator(SITES, VALUES, **kw)(q.reshape(3, 2)) ** 2),
                    QUERY.ravel().copy())
    if kw:  # (the default thin-plate spline has an unbounded second derivative at a site)
        check_all_modes(lambda s: np.sum(si.RBFInterpolator(s.reshape(12, 2), VALUES, **kw)(QUERY) ** 2),
                        SITES.ravel().copy())


def test_rbf_interpolator_values_match_scipy():
    value, _ = yb.jvp(lambda v: si.RBFInterpolator(SITES, v)(QUERY), (VALUES.copy(),), (np.ones(12),))
    np.testing.assert_allclose(value, si.RBFInterpolator(SITES, VALUES)(QUERY), rtol=1e-10, atol=1e-12)


def test_third_order_of_zoom_and_griddata():
    from yuebing.testing.third_order import check_third_order

    check_third_order(lambda im: np.sum(ndi.zoom(im, 1.5) ** 3), IMAGE.copy())
    check_third_order(lambda v: np.sum(si.griddata(SITES, v, QUERY) ** 3), VALUES.copy())


SPLINE_X = np.linspace(0.0, 1.0, 7) ** 1.3
SPLINE_Y = np.sin(3 * SPLINE_X) + 0.1 * SPLINE_X
SPLINE_AT = np.array([0.13, 0.42, 0.77, 1.2, -0.1])  # inside, and outside (each ext= mode)


@pytest.mark.parametrize("k", [1, 2, 3, 5])
@pytest.mark.parametrize("ext", [0, 1, 3])
def test_interpolating_univariate_spline_values_match_scipy(k, ext):
    def f(y):
        return si.UnivariateSpline(SPLINE_X, y, s=0, k=k, ext=ext)(SPLINE_AT)

    value, _ = yb.jvp(f, (SPLINE_Y.copy(),), (np.ones(7),))
    np.testing.assert_allclose(value, f(SPLINE_Y), rtol=1e-12, atol=1e-12)


def test_interpolating_univariate_spline_in_values_sites_and_points():
    check_all_modes(lambda y: np.sum(si.UnivariateSpline(SPLINE_X, y, s=0)(SPLINE_AT) ** 2), SPLINE_Y.copy())
    check_all_modes(lambda x: np.sum(si.UnivariateSpline(x, SPLINE_Y, s=0, k=2)(SPLINE_AT[:3]) ** 2), SPLINE_X.copy())
    check_all_modes(lambda p: np.sum(si.InterpolatedUnivariateSpline(SPLINE_X, SPLINE_Y)(p, nu=1) ** 2),
                    SPLINE_AT[:3].copy())


# FITPACK's smoothing fit (s > 0, s=None), a bbox and LSQUnivariateSpline: tests/test_scipy_smoothing_spline.py
