"""Side effects outside the arguments happen once per gradient call, as in a plain call (DESIGN §2):
after ``yb.grad``, ``yb.vjp``'s pullback, ``yb.hvp``... a global log holds the call's line, a
counter in a module-level dict, object or closure went up by one, a list the call built and stored
outside holds its items (``rules/outside_redo.py``). The reverse pass used to undo them all (the
state came back as before the call). Arguments still come back as they were."""
import numpy as np
import pytest

import yuebing as yb

from .modes import check_every_mode

LOG: list = []
COUNTS: dict = {}


class Recorder:
    def __init__(self):
        self.calls = 0
        self.seen = []


RECORDER = Recorder()


def _make_counter():
    n = 0

    def bump():
        nonlocal n
        n += 1
        return n

    return bump


BUMP = _make_counter()


def _state():
    return (list(LOG), dict(COUNTS), RECORDER.calls, list(RECORDER.seen), BUMP.__closure__[0].cell_contents)


def _reset():
    LOG.clear()
    COUNTS.clear()
    RECORDER.calls, RECORDER.seen = 0, []
    BUMP.__closure__[0].cell_contents = 0


def f(x):
    LOG.append("called")
    COUNTS["f"] = COUNTS.get("f", 0) + 1
    RECORDER.calls += 1
    built = []
    built.append(2)
    built.append(3)
    RECORDER.seen.append(built)
    BUMP()
    return np.sum(np.sin(x) * x)


X = np.array([0.3, 0.7, 1.1])
V = np.array([1.0, -0.5, 0.25])


def _vjp_and_pullback(x):
    y, pullback = yb.vjp(f, x)
    pullback(1.0)


MODES = {
    "grad": lambda x: yb.grad(f)(x),
    "value_and_grad": lambda x: yb.value_and_grad(f)(x),
    "vjp and its pullback": _vjp_and_pullback,
    "jvp": lambda x: yb.jvp(f, (x,), (V,)),
    "hvp": lambda x: yb.hvp(f, (x,), (V,)),
    "prepared gradient": lambda x: yb.prepare_gradient(f, x)(x),
}


@pytest.mark.parametrize("mode", sorted(MODES))
def test_once_per_call_as_in_a_plain_call(mode):
    _reset()
    f(X.copy())
    f(X.copy())
    plain = _state()
    _reset()
    MODES[mode](X.copy())
    MODES[mode](X.copy())
    assert _state() == plain


def test_derivatives_are_unchanged():
    check_every_mode(f, X)


REGISTRY: list = []


def keeps_its_argument(xs):
    REGISTRY.append(xs)
    xs.append(xs[0] * 2.0)
    return sum(v * v for v in xs)


def test_an_argument_stored_outside_still_comes_back_restored():
    REGISTRY.clear()
    xs = [0.5, 1.5]
    g = yb.grad(keeps_its_argument)(xs)
    h = 1e-6
    expected = [(keeps_its_argument([0.5 + h, 1.5]) - keeps_its_argument([0.5 - h, 1.5])) / (2 * h),
                (keeps_its_argument([0.5, 1.5 + h]) - keeps_its_argument([0.5, 1.5 - h])) / (2 * h)]
    REGISTRY.clear()
    REGISTRY.append(xs)
    np.testing.assert_allclose(g, expected, rtol=1e-6)
    assert xs == [0.5, 1.5]  # the argument: as it was
    assert REGISTRY[0] is xs
