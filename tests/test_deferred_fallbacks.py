"""Long float blocks call their statement-by-statement fallback out of line, compiled on its first
call (transform/deferred_fallbacks.py): the fallback (inputs that are not floats) and the float
path give the derivatives of the same function, in every mode; errors in the fallback name the
user's line."""
import numpy as np
import pytest

import yuebing as yb

from .modes import check_every_mode


def long_block(x):
    a = x * 0.5 + 0.25
    y = x * a
    t = (y * a + x) / (a + 2.0)   # t is a temporary of the block
    y = t * t - y * 0.5
    w = (y - a) * (x + 1.5)      # w is read after the block
    y = (y * a + w) / (a * a + 1.0)
    y = y - t * 0.25 + w * 0.125
    y = (y * a - x) / (y * y + 2.0)
    y = y * a + t * w - 0.5 * x
    y = (y + w) / (a + 3.0) - y * y * 0.0625
    y = y * (1.0 - 0.25 * a) + t / (w * w + 1.0)
    y = (y - 0.5 * t) * (x + 0.75) - w * a * 0.125
    y = y / (a * a + 2.0) + y * y * 0.25 - t
    y = y * a * 0.5 + (w - y) / (x * x + 4.0)
    y = (y + t + w) * 0.25 - a * y * 0.125
    return np.sin(y) + w * 0.5


def long_overflowing_block(x):
    """c is inf with an exactly-zero derivative, and 1 / c**2 is 0: the block's adjoint meets
    0 * inf, so its strong-zero re-run (deferred, like the fallback) runs."""
    a = x - x
    b = a + 1e300
    c = b * 1e300
    d = c * c
    e = 1.0 / d
    y = e * 2.0 + x
    y = y * 0.5 + x * 0.25 - 0.125
    y = y * y * 0.25 + x / (y * y + 1.0)
    y = (y - x * 0.5) * (y + 0.75) - 0.0625 * x
    y = y * 0.5 + x * 0.25 - 0.125
    y = y * y * 0.25 + x / (y * y + 1.0)
    y = (y - x * 0.5) * (y + 0.75) - 0.0625 * x
    y = y * 0.5 + x * 0.25 - 0.125
    y = y * y * 0.25 + x / (y * y + 1.0)
    y = (y - x * 0.5) * (y + 0.75) - 0.0625 * x
    y = y * 0.5 + x * 0.25 - 0.125
    y = y * y * 0.25 + x / (y * y + 1.0)
    return np.sin(y)


def long_block_in_a_loop(x):
    s = x * 0.0
    for _ in range(3):
        s = long_block(x + s * 0.125) * 0.5 + s
    return s


def test_the_block_is_long_and_its_fallback_is_deferred():
    shown = yb.show(long_block)
    assert "float block" in shown
    assert "def _fallback" in shown and "statement by statement" in shown
    # one block of more than LONG_BLOCK statements: its fallback functions are defined once each
    assert shown.count("# float block: lines ") == 1
    assert shown.count("def _fallback") == 2
    stem = shown.split("def _fallback", 1)[1].split("_forward(", 1)[0]
    assert f"= _fallback{stem}_forward(_tape, " in shown and f"= _fallback{stem}_reverse(_tape, " in shown


@pytest.mark.parametrize("x", [0.7, np.float64(0.3)], ids=["float", "numpy float"])
def test_the_float_path_matches_finite_differences_in_every_mode(x):
    check_every_mode(long_block, x)


@pytest.mark.parametrize("x", [np.array([0.7, -0.4, 1.1]), np.array([0.2])], ids=["three", "one"])
def test_the_deferred_fallback_matches_finite_differences_in_every_mode(x):
    check_every_mode(lambda v: np.sum(long_block(v)), x)


@pytest.mark.parametrize("x", [0.45, np.array([0.45, -0.3])], ids=["float", "array"])
def test_a_long_block_in_a_loop_matches_finite_differences(x):
    check_every_mode(lambda v: np.sum(long_block_in_a_loop(v)), x)


@pytest.mark.parametrize("x", [-1.5, 2.0, np.array([0.5, -1.0])], ids=["negative", "positive", "array"])
def test_the_deferred_strong_zero_rerun_gives_finite_derivatives(x):
    assert "def _strong" in yb.show(long_overflowing_block)
    if np.ndim(x):
        check_every_mode(lambda v: np.sum(long_overflowing_block(v)), x)
    else:
        check_every_mode(long_overflowing_block, x)


def test_float_inputs_do_not_compile_the_fallback():
    from yuebing.transform import runtime
    from yuebing.transform.runtime import derived_rule

    runtime._DERIVED.clear()  # a rule of its own, whatever ran before
    yb.grad(long_block)(0.7)
    rule = derived_rule(long_block)
    names = rule.generated.deferred_names
    assert names and all(type(rule.forward.__globals__[n]).__name__ == "_Deferred" for n in names)
    value, pullback = yb.vjp(long_block, np.array([0.7, 0.2]))  # arrays: the fallback, compiled now
    pullback(np.ones(2))
    assert all(callable(rule.forward.__globals__[n]) and type(rule.forward.__globals__[n]).__name__ == "function"
               for n in names)


class Halves:
    """Numbers whose arithmetic is float arithmetic until a division by one below 0.1."""

    def __init__(self, v):
        self.v = v

    def _other(self, o):
        return o.v if isinstance(o, Halves) else o

    def __mul__(self, o):
        return Halves(self.v * self._other(o))

    __rmul__ = __mul__

    def __add__(self, o):
        return Halves(self.v + self._other(o))

    __radd__ = __add__

    def __sub__(self, o):
        return Halves(self.v - self._other(o))

    def __rsub__(self, o):
        return Halves(self._other(o) - self.v)

    def __truediv__(self, o):
        if abs(self._other(o)) < 0.1:
            raise ZeroDivisionError("a Halves divided by a small number")
        return Halves(self.v / self._other(o))


def test_an_error_in_the_deferred_fallback_names_the_users_line():
    # a + 3.0 is the first divisor below 0.1 when a = -2.95 (x = -6.4): the line of "(a + 3.0)"
    with pytest.raises(ZeroDivisionError) as raised:
        yb.grad(lambda v: long_block(Halves(v)).v)(-6.4)
    notes = "\n".join(getattr(raised.value, "__notes__", []))
    line = next(i for i, text in enumerate(open(__file__).read().splitlines(), 1) if "(a + 3.0) - y * y" in text)
    assert f'{__file__}", line {line}' in notes
