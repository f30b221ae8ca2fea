"""``numpy.lib.stride_tricks.sliding_window_view`` (convolutions written as ``windows @ kernel``),
which was refused (its NumPy source reads ``__array_interface__`` through ``as_strided``): a
linear rule whose cotangent sums each entry's windows. Checked in every mode against
differences, batched forward mode included (its axes count from the end)."""
import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

from .modes import check_every_mode

KERNEL = np.array([0.2, -0.5, 0.3])


@pytest.mark.parametrize("f", [
    lambda w: np.sum((sliding_window_view(np.concatenate([w, w[::-1], w]), 3) @ KERNEL) ** 2),
    lambda w: np.sum(sliding_window_view(np.outer(w, w), (2, 2)) ** 3),
    lambda w: np.sum(sliding_window_view(np.outer(w, w), 2, axis=1).max(axis=-1) ** 2),
    lambda w: np.sum(sliding_window_view(np.outer(w, w), (2, 2), axis=(0, 0)) * 1.5),
], ids=["conv1d", "windows2d", "max_pool", "repeated_axis"])
def test_sliding_windows(f):
    check_every_mode(f, np.array([0.7, 0.35, 1.2]))


def test_writeable_windows_are_read_only_under_differentiation():
    """``writeable=True`` (scipy.signal's spectrogram and stft ask for it) gives the same windows,
    read-only: reading them is differentiated; a write through them raises in every mode rather
    than put one derivative where the overlapping windows repeat the entry."""
    import yuebing as yb

    check_every_mode(lambda w: np.sum(sliding_window_view(w, 2, writeable=True) ** 3), np.array([0.7, 0.35, 1.2]))

    def writes(w):
        windows = sliding_window_view(w * 1.0, 2, writeable=True)
        windows[0, 1] = w[0]
        return np.sum(windows)

    w = np.array([0.7, 0.35, 1.2])
    for run in (lambda: yb.grad(writes)(w), lambda: yb.jvp(writes, (w,), (w,)), lambda: yb.hvp(writes, (w,), (w,))):
        with pytest.raises(ValueError, match="read-only"):
            run()
