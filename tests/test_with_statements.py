"""``with`` statements in every mode (``frontend/with_statements.py``).

Managers are entered and exited without derivatives. The bound value once kept a zero derivative
(``with nullcontext(x * x) as y: return y`` had gradient 0), a rebound variable kept its old
derivative, also through a closure reading it, and a manager handed an object
(``with nullcontext(box) as b: b.v * x``) silently dropped its fields' derivatives. Every value a
header hands its manager is now computed by the differentiated program and must hold no float
data (``ir.primitives.with_inputs``); the bound value is assigned like any value. A manager that
suppresses an exception is entered as PEP 343 spells it out (``ir/suppressing_managers.py``), and
``contextlib.suppress`` is rewritten to the ``try`` it means; ``contextlib.nullcontext(v) as t`` is rewritten to ``t = v``, so ``v`` may hold
floats (more cases: ``test_nullcontext_values.py``), and a manager class of the function's module
handed floats is entered through its differentiated methods (``test_python_managers.py``).
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


@pytest.mark.parametrize("f", [_binds_a_float, _rebinds_a_captured_variable], ids=lambda f: f.__name__)
def test_a_value_bound_through_nullcontext_keeps_its_derivative(f):
    check_all_modes(f, 0.7)


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


class _Box:
    def __init__(self, v):
        self.v = v


class _Holding:
    """A manager made from a value that carries a derivative, returning itself."""

    def __init__(self, scale):
        self.scale = scale

    def __enter__(self):
        self.doubled = 2.0 * self.scale
        return self

    def __exit__(self, *exc):
        return False


def _binds_a_box(x):
    b = _Box(x * 2.0)
    with contextlib.nullcontext(b) as o:
        y = o.v * x
    return y


def _manager_made_from_x(x):
    with _Holding(x) as h:
        y = h.doubled * x
    return y


def _manager_made_before(x):
    manager = _Holding(x * 3.0)
    with manager:
        y = x * x
    return y


def _nditer_made_in_the_header(x):
    with np.nditer(np.array([x, 2.0 * x])) as it:  # a manager of C code handed float data
        y = sum(float(v) for v in it)
    return y


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("f", [_nditer_made_in_the_header], ids=lambda f: f.__name__)
def test_a_manager_handed_float_data_is_refused_not_silently_wrong(f, mode):
    with pytest.raises(TypeError, match="is handed a value holding float data") as error:
        MODES[mode](f)
    assert "test_with_statements.py" in "".join(getattr(error.value, "__notes__", []))


class _Owner:
    def __init__(self, weight):
        self.weight = weight
        self.lock = contextlib.nullcontext()  # a manager held by an object holding floats
        self.path_label = "run"

    def energy(self, x):
        with self.lock, contextlib.nullcontext(self.path_label) as label, _Timer() as timer:
            y = self.weight * np.sin(x) * len(label)
        return y + 0.0 * (timer is None)


def _progress_over_floats(x):
    values = [x, 2.0 * x, x * x]
    total = 0.0
    with contextlib.nullcontext(len(values)) as count:  # handed an int computed from floats
        for v in values:
            total = total + v * count
    return total


def test_managers_handed_no_floats_work_in_every_mode():
    check_all_modes(lambda x: _Owner(1.5).energy(x), 0.7)
    check_all_modes(_progress_over_floats, 0.7)
    check_all_modes(_binds_a_box, 0.7)  # (nullcontext: an assignment)
    check_all_modes(_manager_made_from_x, 0.7)  # (a class of this module: its methods differentiated)
    check_all_modes(_manager_made_before, 0.7)  # (made before: entered through its methods too)


def _suppressed_after_work(x):
    y = x * 1.0
    with contextlib.suppress(ZeroDivisionError, KeyError):
        y = y * x
        y = y / (x - x)  # raises: y keeps x * x
        y = y * 100.0
    return y * np.sin(x)


def _suppressed_nothing(x):
    y = x * 1.0
    with contextlib.suppress(ZeroDivisionError):
        y = y * np.exp(x)
    return y


def test_contextlib_suppress_keeps_the_work_before_the_exception():
    check_all_modes(_suppressed_after_work, 0.7)
    check_all_modes(_suppressed_nothing, 0.7)


class _Swallowing:
    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        return True


def _swallowed(x):
    y = x * x
    with _Swallowing():
        y = y * x
        raise ValueError("stop")
    return y


def test_another_manager_that_suppresses_keeps_the_work_before_the_exception():
    check_all_modes(_swallowed, 0.7)  # (it was refused: tests/test_exception_managers.py)
