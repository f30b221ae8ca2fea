"""scipy.signal's spectral estimates, differentiated from SciPy's own source in every mode
(grad, jvp and hvp against central differences along a direction, ``check_every_mode`` for the
smaller cases).

They were refused at ``ShortTimeFFT``'s ``functools.cached_property`` (``_pre_padding``), which
is now read as an instance field once cached and computed by its getter, then cached, on its
first read (``rules/_cached_properties.py``); ``spectrogram`` and ``stft`` also take windows by
``sliding_window_view(..., writeable=True)``, which is now the rule's read-only view."""
import functools

import numpy as np
import pytest
import scipy.signal as ss

import yuebing as yb

from yuebing.testing.second_order import check_second_order
from yuebing.testing.third_order import check_third_order

from .modes import check_every_mode

N = 24
X = np.sin(np.linspace(0.0, 9.0, N)) + 0.2 * np.cos(np.linspace(0.0, 4.0, N) ** 2)
OTHER = np.cos(np.linspace(0.0, 5.0, N)) ** 3

SPECTRAL = {
    "welch": lambda x: np.sum(ss.welch(x, nperseg=8)[1] * np.arange(5.0)),
    "welch_spectrum_linear": lambda x: np.sum(ss.welch(x, nperseg=8, scaling="spectrum", detrend="linear")[1]),
    "welch_twosided_boxcar": lambda x: np.sum(ss.welch(x, window="boxcar", nperseg=6, return_onesided=False)[1]),
    "welch_median": lambda x: np.sum(ss.welch(x, nperseg=8, average="median")[1]),
    "periodogram": lambda x: np.sum(ss.periodogram(x)[1] ** 0.5),
    "periodogram_hann_spectrum": lambda x: np.sum(ss.periodogram(x, window="hann", scaling="spectrum")[1]),
    "csd": lambda x: np.sum(np.abs(ss.csd(x, OTHER * x, nperseg=8)[1]) ** 2),
    "csd_real_part": lambda x: np.sum(ss.csd(x[::-1], x, nperseg=8, noverlap=2)[1].real),
    "coherence": lambda x: np.sum(ss.coherence(x, OTHER + 0.5 * x, nperseg=8)[1]),
    "spectrogram": lambda x: np.sum(ss.spectrogram(x, nperseg=8)[2] * 1.5),
    "spectrogram_magnitude": lambda x: np.sum(ss.spectrogram(x, nperseg=8, noverlap=4, mode="magnitude")[2]),
    "spectrogram_complex": lambda x: np.sum(np.abs(ss.spectrogram(x, nperseg=8, mode="complex")[2]) ** 2),
    "stft": lambda x: np.sum(np.abs(ss.stft(x, nperseg=8)[2]) ** 2),
    "stft_istft": lambda x: np.sum(ss.istft(ss.stft(x, nperseg=8)[2], nperseg=8)[1] ** 3),
}


DIRECTION = np.cos(np.arange(N) * 1.7)


def check_along_a_direction(f, x):
    """grad and jvp against central differences along ``DIRECTION``; hvp against central
    differences of the gradient (``check_second_order``)."""
    h = 1e-6
    expected = (f(x + h * DIRECTION) - f(x - h * DIRECTION)) / (2 * h)
    np.testing.assert_allclose(yb.grad(f)(x) @ DIRECTION, expected, rtol=1e-5, atol=1e-7, err_msg="grad")
    np.testing.assert_allclose(yb.jvp(f, (x,), (DIRECTION,))[1], expected, rtol=1e-5, atol=1e-7, err_msg="jvp")
    check_second_order(f, x, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("name", list(SPECTRAL))
def test_spectral_estimate_in_every_mode(name):
    check_along_a_direction(SPECTRAL[name], X)


def short_time_fft_made_inside(x):
    transform = ss.ShortTimeFFT(ss.windows.hann(8), hop=3, fs=2.0)
    return np.sum(np.abs(transform.stft(x)) ** 2) + transform.k_min * 0.0


GLOBAL_TRANSFORM = ss.ShortTimeFFT(ss.windows.hann(8), hop=3, fs=2.0)
GLOBAL_TRANSFORM.stft(X)  # its cached properties computed outside, before any differentiation


def short_time_fft_cached_outside(x):
    return np.sum(np.abs(GLOBAL_TRANSFORM.stft(x)) ** 2)


def short_time_fft_spectrogram(x):
    return np.sum(ss.ShortTimeFFT(ss.windows.hann(8), hop=2, fs=1.0, scale_to="psd").spectrogram(x))


@pytest.mark.parametrize("f", [short_time_fft_made_inside, short_time_fft_cached_outside, short_time_fft_spectrogram])
def test_short_time_fft_in_every_mode(f):
    check_along_a_direction(f, X)


def short_time_fft_of_a_window(w):
    """The window carries the derivative: ShortTimeFFT makes it read-only (``setflags``)."""
    return np.sum(np.abs(ss.ShortTimeFFT(w * 1.0, hop=3, fs=1.0).stft(X)) ** 2)


def welch_of_a_window(w):
    return np.sum(ss.welch(X, window=w, nperseg=8)[1])


@pytest.mark.parametrize("f", [short_time_fft_of_a_window, welch_of_a_window])
def test_derivative_in_the_window(f):
    w = ss.windows.hann(8) + 0.1
    direction = np.cos(np.arange(8.0))
    expected = (f(w + 1e-6 * direction) - f(w - 1e-6 * direction)) / 2e-6
    np.testing.assert_allclose(yb.grad(f)(w) @ direction, expected, rtol=1e-6, err_msg="grad")
    np.testing.assert_allclose(yb.jvp(f, (w,), (direction,))[1], expected, rtol=1e-6, err_msg="jvp")
    check_second_order(f, w, rtol=1e-4, atol=1e-6)


def window_computed_in_place_then_read_only(x):
    """What ShortTimeFFT does to the window scipy.signal.windows computed in place: the reverse
    pass gives the array its flags back before it restores its contents (``rules/numpy_flags.py``)."""
    w = np.ones(4) * 0.5
    w += x[:4]
    w.setflags(write=False)
    return np.sum(w ** 2 * x[1:5])


def test_setflags_is_undone_by_the_reverse_pass():
    check_every_mode(window_computed_in_place_then_read_only, X[:6])


class Body:
    """A cached_property computed from the differentiated data."""

    def __init__(self, x):
        self.x = x

    @functools.cached_property
    def energy(self):
        return np.sum(np.sin(self.x) ** 2)


def computed_then_cached(x):
    body = Body(x * 2.0)
    first = body.energy  # the getter runs, its value stored in body.__dict__
    x_scaled = body.x * 0.5
    return first + body.energy * np.sum(x_scaled)  # read back from body.__dict__


def cached_in_the_function(x):
    body = Body(x)
    body.__dict__["energy"] = np.sum(x ** 3)  # cached by hand: the getter never runs, as in Python
    return body.energy * 2.0


@pytest.mark.parametrize("f", [computed_then_cached, cached_in_the_function])
def test_cached_property_in_every_mode(f):
    check_every_mode(f, np.array([0.3, -0.7, 1.1]))
    check_third_order(f, np.array([0.3, -0.7, 1.1]))


def test_cached_property_of_an_argument():
    """Computed on the argument in reverse mode: its gradient reaches ``x`` through the getter,
    and the argument comes back as it was given (not cached, as the pass is undone)."""
    body = Body(np.array([0.3, -0.7, 1.1]))
    gradient = yb.grad(lambda b: b.energy * 3.0)(body)
    np.testing.assert_allclose(gradient.x, 3.0 * np.sin(2.0 * body.x), rtol=1e-12)
    assert "energy" not in body.__dict__
    direction = yb.tangents.zero_tangent(body)
    direction.fields["x"] = np.ones(3)
    t = yb.jvp(lambda b: b.energy, (body,), (direction,))[1]
    np.testing.assert_allclose(t, np.sum(np.sin(2.0 * body.x)), rtol=1e-12)
