"""Entry points hide yuebing's internal frames from tracebacks, as JAX does: an error raised in
the user's function shows the user's frames (and the generated code's), plus at most the two
frames that re-raise it. ``YUEBING_FULL_TRACEBACK=1`` keeps everything."""
import os
import traceback

import numpy as np
import pytest

import yuebing as yb

_PACKAGE = os.path.dirname(os.path.abspath(yb.__file__))
X = np.array([0.5, 1.5, 2.0])


def _fails(x):
    if x[0] > 0.0:
        raise ValueError("the user's own error")
    return np.sum(x ** 2)


def _fails_later(x):
    """Fine at the example the call is prepared with, failing at the next call's argument."""
    if x[0] > 1.0:
        raise ValueError("the user's own error")
    return np.sum(x ** 2)


def _calls_grad_inside(x):
    return np.sum(yb.grad(_fails)(x))


CALLS = {
    "grad": lambda: yb.grad(_fails)(X),
    "value_and_grad": lambda: yb.value_and_grad(_fails)(X),
    "vjp": lambda: yb.vjp(_fails, X),
    "jvp": lambda: yb.jvp(_fails, (X,), (X,)),
    "jacobian_rev": lambda: yb.jacobian(_fails)(X),
    "jacobian_fwd": lambda: yb.jacobian(_fails, mode="fwd")(X),
    "hessian": lambda: yb.hessian(_fails)(X),
    "hvp": lambda: yb.hvp(_fails, (X,), (X,)),
    "linearize": lambda: yb.linearize(_fails, X),
    "jvp_of_grad": lambda: yb.jvp(_calls_grad_inside, (X,), (X,)),
    "grad_of_grad": lambda: yb.grad(_calls_grad_inside)(X),
    "prepare_gradient": lambda: yb.prepare_gradient(_fails_later, X - 1.0)(X + 1.0),
    "prepare_hvp": lambda: yb.prepare_hvp(_fails_later, X - 1.0)((X + 1.0,), (X,)),
    "prepare_hessian": lambda: yb.prepare_hessian(_fails_later, X - 1.0)(X + 1.0),
    "prepare_pullback": lambda: yb.prepare_pullback(_fails_later, X - 1.0)(X + 1.0),
}


@pytest.mark.parametrize("call", CALLS)
def test_internal_frames_are_hidden(call, monkeypatch):
    monkeypatch.delenv("YUEBING_FULL_TRACEBACK", raising=False)
    with pytest.raises(ValueError, match="the user's own error") as caught:
        CALLS[call]()
    files = [frame.filename for frame in traceback.extract_tb(caught.value.__traceback__)]
    internal = [f for f in files if os.path.abspath(f).startswith(_PACKAGE)]
    assert len(internal) <= 2, internal  # the frames that re-raise it
    assert any(f == __file__ for f in files)  # the user's raising line is kept


def test_full_traceback_keeps_internal_frames(monkeypatch):
    monkeypatch.setenv("YUEBING_FULL_TRACEBACK", "1")
    with pytest.raises(ValueError) as caught:
        yb.jvp(_fails, (X,), (X,))
    files = [frame.filename for frame in traceback.extract_tb(caught.value.__traceback__)]
    assert sum(os.path.abspath(f).startswith(_PACKAGE) for f in files) > 2
