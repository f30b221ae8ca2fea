"""What ``with ... as name`` binds, in every mode.

``with`` headers run without derivatives. The bound value once kept a zero derivative
(``with nullcontext(x * x) as y: return y`` had gradient 0), and a rebound variable kept its old
derivative, also through a closure reading it. It is now assigned like any value, and a value
holding float data is refused with advice that works (``ir.primitives.with_bound``).
"""
from __future__ import annotations

import contextlib
import time
import warnings

import numpy as np
import pytest

import yuebing as yb
from tests.all_modes import check_all_modes

MODES = {
    "grad": lambda f: yb.grad(f)(0.7),
    "jvp": lambda f: yb.jvp(f, (0.7,), (1.0,)),
    "hvp": lambda f: yb.hvp(f, (0.7,), (1.0,)),
}


def _binds_a_float(x):
    with contextlib.nullcontext(x * x) as y:
        return y * 1.0


def _rebinds_a_captured_variable(x):
    y = x
    read = lambda: y * 2.0  # noqa: E731
    with contextlib.nullcontext(3.0 * x) as y:
        pass
    return read()


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("f", [_binds_a_float, _rebinds_a_captured_variable], ids=lambda f: f.__name__)
def test_a_bound_value_holding_floats_is_refused(f, mode):
    with pytest.raises(TypeError, match="compute the value before the with statement"):
        MODES[mode](f)


def _advice_followed(x):
    y = x * x
    with contextlib.nullcontext():
        return y * 1.0


def _binds_warnings_and_a_label(x):
    with warnings.catch_warnings(record=True) as caught, contextlib.nullcontext(("a", 2)) as (label, count):
        warnings.simplefilter("always")
        warnings.warn("noted")
        y = np.sin(x) * count
    return y + len(caught) + len(label)


def _binds_a_file(x, path):
    with open(path) as handle:
        scale = 2.0 if handle is not None else 1.0
    return scale * x * x


def test_the_advice_works_and_values_without_floats_are_bound(tmp_path):
    check_all_modes(_advice_followed, 0.7)
    check_all_modes(_binds_warnings_and_a_label, 0.7)
    path = tmp_path / "data.txt"
    path.write_text("abc")
    check_all_modes(lambda x: _binds_a_file(x, str(path)), 0.7)


class _Timer:
    def __enter__(self):
        self.start = time.perf_counter()  # a float of the manager's own: not a value to refuse
        return self

    def __exit__(self, *exc):
        self.elapsed = time.perf_counter() - self.start


def _timed(x):
    with _Timer() as timer:
        y = np.sin(x) * x
    return y + 0.0 * (timer is None)


def test_a_manager_bound_to_itself_is_not_refused():
    check_all_modes(_timed, 0.7)
