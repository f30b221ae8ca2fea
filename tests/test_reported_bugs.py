"""Regression tests for bugs other engineers reported, each with the family its mechanism broke.

Every derivative is checked against central finite differences of the function itself (or
``check_rule``), never against typed-in numbers.
"""
import numpy as np
import pytest

import yuebing as yb


def central_difference(f, x, h=1e-6):
    """d f / d x at float ``x`` by a central difference."""
    return (f(x + h) - f(x - h)) / (2 * h)


# --------------------------------------------------------------------------------------------
# 1. Rules whose output is an integer array: the pullback's cotangent of that output was a bare
#    0.0, which shape arithmetic (np.diagonal(g, 1), g.reshape(...), g[:, 1:]) refused.
# --------------------------------------------------------------------------------------------

I1 = np.arange(1, 4)
I2 = np.arange(1, 10).reshape(3, 3)

INTEGER_OUTPUTS = {
    "diag offset (the report)": lambda: np.diag(np.arange(1, 3), 1) @ np.ones(3),
    "diag of a vector": lambda: np.diag(I1, -1),
    "diagflat": lambda: np.diagflat(I1, 1),
    "tril": lambda: np.tril(I2, -1),
    "triu": lambda: np.triu(I2, 1),
    "cumsum along an axis": lambda: np.cumsum(I2, axis=0),
    "ndarray.cumsum": lambda: I1.cumsum(),
    "concatenate": lambda: np.concatenate([I1, I1]),
    "stack": lambda: np.stack([I1, I1]),
    "hstack": lambda: np.hstack([I1, I1]),
    "vstack": lambda: np.vstack([I1, I1]),
    "diff": lambda: np.diff(I1),
    "cross": lambda: np.cross(I1, I1[::-1]),
    "split": lambda: np.split(I1, 3)[1],
}


@pytest.mark.parametrize("make", INTEGER_OUTPUTS.values(), ids=INTEGER_OUTPUTS.keys())
def test_integer_array_outputs_in_reverse_mode(make):
    def f(s):
        return np.sum(make() * s * s)

    assert np.isclose(yb.grad(f)(1.5), central_difference(f, 1.5))


@pytest.mark.parametrize("make", INTEGER_OUTPUTS.values(), ids=INTEGER_OUTPUTS.keys())
def test_integer_array_outputs_in_second_order(make):
    def f(s):
        return np.sum(make() * s * s * s)

    _, (gradient,), (curvature,) = yb.hvp(f, (1.5,), (1.0,))
    assert np.isclose(gradient, central_difference(f, 1.5))
    assert np.isclose(curvature, central_difference(yb.grad(f), 1.5), rtol=1e-5)


def test_integer_array_outputs_in_forward_mode():
    def f(s):
        return sum(np.sum(make() * s * s) for make in INTEGER_OUTPUTS.values())

    assert np.isclose(yb.jvp(f, (1.5,), (1.0,))[1], central_difference(f, 1.5))


# --------------------------------------------------------------------------------------------
# 2. A primitive differentiated through a definition (``defined_as`` and the domain files'
#    ``derived`` helpers): a float argument the definition never read got no cotangent, which
#    debug mode reported as a dropped derivative. Its derivative is zero by definition.
# --------------------------------------------------------------------------------------------

X2 = np.array([[0.3, -1.2, 0.5, 2.0], [1.1, 0.4, -0.7, 0.9], [0.2, 0.8, -1.5, 0.6]])
K2 = np.array([[0.5, -0.25], [1.0, 0.75]])

UNREAD_NUMBERS = {
    "real_if_close tol": lambda t: np.sum(np.real_if_close(X2 * t, tol=t)),
    "apply_along_axis extra argument": lambda t: np.sum(np.apply_along_axis(lambda r, c: r * r, 0, X2 * t, t)),
}
try:
    import scipy.ndimage as ndi
    import scipy.signal as ss

    UNREAD_NUMBERS.update({
        "convolve2d fillvalue in 'valid' mode": lambda t: np.sum(ss.convolve2d(X2 * t, K2, mode="valid", fillvalue=t)),
        "convolve2d fillvalue with boundary='symm'": lambda t: np.sum(ss.convolve2d(X2 * t, K2, boundary="symm",
                                                                                    fillvalue=t)),
        "ndimage cval in 'reflect' mode": lambda t: np.sum(ndi.correlate(X2 * t, K2, mode="reflect", cval=t)),
        "ndimage cval read ('constant')": lambda t: np.sum(ndi.correlate(X2 * t, K2, mode="constant", cval=t) ** 2),
    })
except ImportError:  # SciPy is an optional dependency; the NumPy cases still run
    pass


@pytest.mark.parametrize("f", UNREAD_NUMBERS.values(), ids=UNREAD_NUMBERS.keys())
def test_numbers_a_definition_does_not_read_get_a_zero_cotangent(f):
    assert np.isclose(yb.grad(f)(1.3), central_difference(f, 1.3))
    _, (gradient,), (curvature,) = yb.hvp(f, (1.3,), (1.0,))
    assert np.isclose(gradient, central_difference(f, 1.3))
    assert np.isclose(curvature, central_difference(yb.grad(f), 1.3), rtol=1e-5, atol=1e-6)


def test_defined_as_gives_unread_numbers_a_zero_cotangent():
    """The mechanism itself: the pullback of a rule declared with ``defined_as`` returns 0.0
    (not NoRData) for a float argument its definition never read."""
    from yuebing.rules.core import CoDual, rrule
    from yuebing.tangents import NoRData

    x = X2.copy()
    out, pullback = rrule(np.real_if_close, CoDual(x, np.zeros_like(x)), CoDual(5.0))
    out.fdata[...] = 1.0
    rdatas = pullback(NoRData)
    assert rdatas[2] == 0.0 and rdatas[2] is not NoRData


# --------------------------------------------------------------------------------------------
# 3. np.trapezoid(y, x=x, dx=...): dx is unread when x is given; its cotangent is an explicit
#    zero (debug mode reported NoRData as a dropped derivative). The rule's CASES cover it too.
# --------------------------------------------------------------------------------------------

Y3 = np.array([0.3, 1.2, -0.5, 2.0, 0.7])
X3 = np.cumsum([0.5, 1.0, 0.7, 1.3, 0.9])
trapezoid = getattr(np, "trapezoid", None) or np.trapz  # NumPy 2's name, NumPy 1's

TRAPEZOIDS = {
    "1-D": lambda t: trapezoid(Y3 * t * t, x=X3 * t, dx=t),
    "2-D along axis 0": lambda t: np.sum(trapezoid(np.outer(Y3, Y3) * t, x=X3, dx=t, axis=0) ** 2),
    "dx used (x None)": lambda t: trapezoid(Y3 * t, dx=t * t),
}


@pytest.mark.parametrize("f", TRAPEZOIDS.values(), ids=TRAPEZOIDS.keys())
def test_trapezoid_dx_unused_when_x_given(f):
    expected = central_difference(f, 1.3)
    assert np.isclose(yb.grad(f)(1.3), expected)
    assert np.isclose(yb.jvp(f, (1.3,), (1.0,))[1], expected)
    _, (gradient,), (curvature,) = yb.hvp(f, (1.3,), (1.0,))
    assert np.isclose(gradient, expected)
    assert np.isclose(curvature, central_difference(yb.grad(f), 1.3), rtol=1e-5, atol=1e-6)


# --------------------------------------------------------------------------------------------
# 4. A module-level float array reaches rules as a read-only view (``runtime.read_only``); a
#    SciPy function whose Cython kernel needs a writable buffer (``sosfilt``'s ``sos``) refused
#    it. Rules call primitives through ``util.call_on_primals``, which retries on writable copies.
# --------------------------------------------------------------------------------------------

try:
    SOS = ss.butter(2, 0.3, output="sos")  # module level: read-only inside differentiated code
except NameError:  # no SciPy
    SOS = None
SIGNAL = np.sin(np.linspace(0.0, 6.0, 24)) + 0.3 * np.cos(np.linspace(0.0, 17.0, 24))
needs_scipy = pytest.mark.skipif(SOS is None, reason="SciPy is an optional dependency")


def rising(sos, x):
    """Where the filtered signal rises: zero derivative (registered below), SciPy on its inputs."""
    return np.diff(ss.sosfilt(sos, x)) > 0


@needs_scipy
@pytest.mark.parametrize("f", [
    lambda t: np.sum(ss.sosfilt(SOS, SIGNAL * t) ** 2),
    lambda t: np.sum(ss.sosfilt(SOS, SIGNAL) * t ** 2),
    lambda t: np.sum(ss.sosfilt(SOS, SIGNAL * t, zi=np.zeros((1, 2)))[0] ** 2),
], ids=["sosfilt(global sos, x)", "sosfilt(global sos, global x)", "sosfilt(global sos, zi=)"])
def test_a_cython_kernel_gets_a_writable_copy_of_a_module_global(f):
    expected = central_difference(f, 1.3)
    assert np.isclose(yb.grad(f)(1.3), expected)
    assert np.isclose(yb.jvp(f, (1.3,), (1.0,))[1], expected)
    _, (gradient,), (curvature,) = yb.hvp(f, (1.3,), (1.0,))
    assert np.isclose(gradient, expected)
    assert np.isclose(curvature, central_difference(yb.grad(f), 1.3), rtol=1e-5, atol=1e-6)


@needs_scipy
def test_a_zero_derivative_function_gets_a_writable_copy_of_a_module_global():
    yb.nondifferentiable(rising)

    def f(t):
        return np.sum(np.where(rising(SOS, SIGNAL), SIGNAL[1:] * t * t, 0.0))

    expected = central_difference(f, 1.3)
    assert np.isclose(yb.grad(f)(1.3), expected)
    assert np.isclose(yb.jvp(f, (1.3,), (1.0,))[1], expected)
    assert np.isclose(yb.hvp(f, (1.3,), (1.0,))[2][0], central_difference(yb.grad(f), 1.3), rtol=1e-5)


def test_writes_into_a_module_global_still_fail():
    """The copies are made only for a kernel's refusal of a read-only buffer, never for a write:
    a write into a global inside differentiated code must still fail, not be lost on a copy."""
    def f(t):
        np.copyto(SIGNAL, SIGNAL * t)
        return np.sum(SIGNAL)

    with pytest.raises(ValueError, match="read-only"):
        yb.grad(f)(1.3)


def test_dict_get_on_a_module_dict_without_fdata():
    # sys.modules.get(...) (SciPy's array-API helpers call it) failed: the dict has no fdata
    import sys

    def f(x):
        module = sys.modules.get("numpy")
        return x * x * 3.0 if module is not None else x

    x, h = 0.7, 1e-6
    expected = (f(x + h) - f(x - h)) / (2 * h)
    np.testing.assert_allclose(yb.grad(f)(x), expected, rtol=1e-7)
    np.testing.assert_allclose(yb.jvp(f, (x,), (1.0,))[1], expected, rtol=1e-7)
    np.testing.assert_allclose(yb.hvp(f, (x,), (1.0,))[1][0], expected, rtol=1e-7)


class _Keywords:
    def __init__(self, **kw):
        self.__dict__.update(kw)
        for k, v in kw.items():
            vars(self)[k + "2"] = v * 2.0

    def value(self, t):
        return self.s * t * self.s2 + np.sin(self.__dict__["s"])


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_instance_dict_writes_keep_their_derivatives(mode):
    # self.__dict__.update(kw) dropped the derivative in every mode (the instance dict got a
    # tangent of its own instead of the object's fields)
    def f(x):
        return _Keywords(s=x).value(t=x)

    x, h = 0.7, 1e-6
    expected = (f(x + h) - f(x - h)) / (2 * h)
    got = {"grad": lambda: yb.grad(f)(x), "jvp": lambda: yb.jvp(f, (x,), (1.0,))[1],
           "hvp": lambda: yb.hvp(f, (x,), (1.0,))[1][0]}[mode]()
    np.testing.assert_allclose(got, expected, rtol=1e-6)


@pytest.mark.parametrize("make", [lambda x: x.astype(object), lambda x: np.asarray(x, dtype=object)])
def test_object_arrays_of_numbers_are_followed_not_dropped(make):
    # their elements' derivatives used to come out as zero in every mode (then were refused)
    from .modes import check_every_mode
    check_every_mode(lambda x: float(make(x)[-1]) * x[0], np.array([1.0, 2.0]))


def test_object_arrays_made_by_an_uncovered_call_are_refused_not_dropped():
    def f(x):
        return float(np.cumsum(x, dtype=object)[-1])

    x = np.array([1.0, 2.0])
    with pytest.raises(Exception, match="object-dtype array of numbers"):
        yb.grad(f)(x)
    with pytest.raises(Exception, match="object-dtype array of numbers"):
        yb.jvp(f, (x,), (np.ones(2),))


# --------------------------------------------------------------------------------------------
# Library wrappers that declare another signature (array_api_compat's ``get_xp``: ``*args,
# **kwargs`` with ``__signature__`` set to the target's) were bound by the declared parameters
# and failed with a bare ``KeyError: 'args'`` (scipy.interpolate.CubicSpline reached one); and
# SciPy's ``overwrite_a=True`` (a permission to destroy the argument, which library code passes)
# was refused.
# --------------------------------------------------------------------------------------------

def _declares_another_signature(f):
    import functools
    import inspect

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        return f(*args, scale=2.0, **kwargs)

    signature = inspect.signature(f)
    wrapped.__signature__ = signature.replace(parameters=[p for n, p in signature.parameters.items() if n != "scale"])
    return wrapped


@_declares_another_signature
def _scaled_sine(x, /, *, scale, shift=0.0):
    return np.sin(x * scale) + shift


def test_a_wrapper_declaring_its_targets_signature_is_bound_by_its_own():
    f = lambda x: _scaled_sine(x, shift=0.5) * x  # noqa: E731
    for mode in ("grad", "jvp", "hvp"):
        got = {"grad": lambda: yb.grad(f)(0.3), "jvp": lambda: yb.jvp(f, (0.3,), (1.0,))[1],
               "hvp": lambda: yb.hvp(f, (0.3,), (1.0,))[1][0]}[mode]()
        assert got == pytest.approx(central_difference(f, 0.3), rel=1e-6)


def test_scipy_overwrite_flags_are_accepted():
    import scipy.linalg as sla

    a0 = np.array([[4.0, 1.0], [1.0, 3.0]])

    def f(t):  # each call gets its own array: SciPy may destroy it
        return np.sum(sla.solve(a0 * t, np.ones(2) * t, overwrite_a=True, overwrite_b=True)) \
            + sla.det(a0 * t, overwrite_a=True) + np.sum(sla.cholesky(a0 * t * t, overwrite_a=True))

    for got in (yb.grad(f)(1.3), yb.jvp(f, (1.3,), (1.0,))[1], yb.hvp(f, (1.3,), (1.0,))[1][0]):
        assert got == pytest.approx(central_difference(f, 1.3), rel=1e-6)


# --------------------------------------------------------------------------------------------
# sys.modules read inside differentiated code (array_api_compat's _check_device, reached by
# CubicSpline): forward mode walked the whole registry for a tangent and failed on whatever a
# library had put there (a struct.Struct), depending on what the process had imported.
# --------------------------------------------------------------------------------------------

def _asks_the_registry(x):  # what array_api_compat does
    import sys as registry_owner  # (a module global in the library; here a local import of the module)

    return x * x * (1.0 if registry_owner.modules.get("numpy") is np else 2.0)


def test_reading_the_module_registry_in_every_mode():
    import struct
    import sys

    sys.modules["_yuebing_test_registry_entry"] = struct.Struct("d")
    try:
        f = _asks_the_registry
        for got in (yb.grad(f)(0.7), yb.jvp(f, (0.7,), (1.0,))[1], yb.hvp(f, (0.7,), (1.0,))[1][0]):
            assert got == pytest.approx(central_difference(f, 0.7), rel=1e-6)
    finally:
        del sys.modules["_yuebing_test_registry_entry"]


# --------------------------------------------------------------------------------------------
# A name reassigned only by integer arithmetic of itself (``x = x + x``, ``x += 1``) was taken
# for an integer loop counter, though it started as the caller's float or array: everything
# computed from it had no derivative (the fuzzer's seed 30116: gradient 0 in reverse mode and
# in the Hessian). Parameters, free variables, globals and cells now start as "anything".
# --------------------------------------------------------------------------------------------

def _doubled(x):
    x += x
    return np.sum(x * x) * 0.1


def _counted(x):
    x = x + 1
    x = x * x
    return np.sum(x)


def _closure_counter(x):
    total = x[0]

    def bump():
        nonlocal total
        total = total + total
    bump()
    return total * x[1]


_SCALE = 1.5


def _global_squared(x):
    global _SCALE
    _SCALE = _SCALE * _SCALE
    value = np.sum(x * x) * _SCALE
    _SCALE = 1.5
    return value


@pytest.mark.parametrize("f", [_doubled, _counted, _closure_counter, _global_squared], ids=lambda f: f.__name__)
def test_names_reassigned_from_themselves_keep_derivatives(f):
    from .modes import check_every_mode
    check_every_mode(f, np.array([-0.63, -0.99, 1.43]))


# --------------------------------------------------------------------------------------------
# np.sin/np.cos of a float that overflowed to inf is nan in NumPy; the float fast paths' partials
# used math.cos, which raises ValueError there: jvp, hvp and hessian crashed where the plain call
# returns nan (the fuzzer's seed 30485). Now nan, as NumPy gives.
# --------------------------------------------------------------------------------------------

def _overflowed_sin_cos(x):
    v = x * 1e308 * 10.0
    return np.sin(v) + np.cos(v) + x


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp", "hessian", "jacobian_fwd"])
def test_sin_cos_of_inf_give_nan_derivatives(mode):
    with np.errstate(all="ignore"):
        assert np.isnan(_overflowed_sin_cos(2.0))
        got = {"grad": lambda: yb.grad(_overflowed_sin_cos)(2.0),
               "jvp": lambda: yb.jvp(_overflowed_sin_cos, (2.0,), (1.0,))[1],
               "hvp": lambda: yb.hvp(_overflowed_sin_cos, (2.0,), (1.0,))[1][0],
               "hessian": lambda: yb.hessian(_overflowed_sin_cos)(2.0),
               "jacobian_fwd": lambda: yb.jacobian(_overflowed_sin_cos, mode="fwd")(2.0)}[mode]()
    assert np.isnan(got)


# --------------------------------------------------------------------------------------------
# A dict's values or items handed on as a view (``vals = d.values()`` then ``for v in vals``, or
# the iterable of a generator expression run lazily) were refused with NotASequenceError; they
# are walked as list(view) is, each value with its derivative.
# --------------------------------------------------------------------------------------------

def _values_in_generator(x):
    d = {"a": x[0], "b": x[1] * x[2]}
    return sum(v * v for v in d.values())


def _items_held_in_variable(x):
    d = {"a": x[:2], "b": np.sin(x[1:])}
    pairs = d.items()
    total = 0.0
    for key, value in pairs:
        total += np.sum(value ** 2) * (2.0 if key == "a" else 1.0)
    return total


@pytest.mark.parametrize("f", [_values_in_generator, _items_held_in_variable], ids=lambda f: f.__name__)
def test_dict_views_handed_on_keep_derivatives(f):
    from .modes import check_every_mode
    check_every_mode(f, np.array([0.3, -0.8, 1.1]))


# --------------------------------------------------------------------------------------------
# Third order: a list taken out of a tuple holding no float data yet (``ys, flag = [], False``)
# was passed as structure, so its tangent was the primal list itself, which then took the
# tangents appended to it: hessian(grad(f)) gave 8.2 where differences give 6. Now its tangent
# is its own list, as an empty list's already was.
# --------------------------------------------------------------------------------------------

def _list_from_tuple(x):
    ys, flag = [], False
    ys.append(x)
    ys.append(x * x)
    return (ys[0] + sum(ys)) * x * (2.0 if flag else 1.0)


def _dict_from_tuple(x):
    table, count = {}, 0
    table["a"] = x * x
    return table["a"] * x + count


def _nested_list_from_tuple(x):
    (ys, zs), n = ([], []), 1
    ys.append(x)
    zs.append(ys[0] * x)
    return zs[0] * x * n


@pytest.mark.parametrize("f", [_list_from_tuple, _dict_from_tuple, _nested_list_from_tuple],
                         ids=lambda f: f.__name__)
def test_third_order_of_containers_taken_out_of_tuples(f):
    x, h = 0.7, 1e-4
    expected = (yb.hessian(f)(x + h) - yb.hessian(f)(x - h)) / (2 * h)
    assert np.isclose(yb.hessian(yb.grad(f))(x), expected, rtol=1e-5)
    assert np.isclose(yb.grad(yb.grad(yb.grad(f)))(x), expected, rtol=1e-5)


# --------------------------------------------------------------------------------------------
# np.std of identical values (the fuzzer's seed 30710: a where() that zeroed every element)
# gave NaN in every mode (0/0); the convention is the norm's at 0: gradient 0.
# --------------------------------------------------------------------------------------------

def _std_of_equal_values(x):
    return np.std(np.where(x > 0, np.sqrt(np.abs(x)), 0.0)) + np.sum(np.std(np.outer(x, x) * 0.0 + x[0], axis=0))


def test_std_at_zero_spread_has_gradient_zero():
    from .modes import check_every_mode
    check_every_mode(_std_of_equal_values, np.array([-0.3, -1.2, -0.4]), second_order=False)
    assert not np.any(np.isnan(yb.hessian(_std_of_equal_values)(np.array([-0.3, -1.2, -0.4]))))
