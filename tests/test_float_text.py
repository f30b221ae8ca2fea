"""Float data formatted as text or bytes and parsed back into numbers in the same call: the
parsed numbers would carry none of the derivative (it was silently dropped: ``np.frombuffer(
x.tobytes())``, ``np.fromstring(" ".join(map(str, x)))`` gave a zero gradient), so parsing after
formatting is refused in every mode; text parsed before any formatting (data read at the top of
a loss) and formatting never parsed (a log line) work. f-strings are built by the calls Python
makes for them (``format(repr(v), spec)``), with the same text."""
import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.core import RuleArgumentError

from .modes import check_every_mode

X = np.array([0.7, 0.35, 1.2])
RUNS = {"grad": lambda f: yb.grad(f)(X.copy()), "jvp": lambda f: yb.jvp(f, (X.copy(),), (X.copy(),)),
        "hvp": lambda f: yb.hvp(f, (X.copy(),), (X.copy(),))}


def _through_bytes(x):
    return np.sum(np.frombuffer(x.tobytes(), dtype=np.float64) ** 2)


def _through_joined_text(x):
    return np.sum(np.fromstring(" ".join(map(str, x)), sep=" ") ** 2)


def _through_an_f_string(x):
    return float(f"{x[0]:.12f}") * x[1]


def _through_str(x):
    return float(str(float(x[0]))) ** 2 + x[1]


@pytest.mark.parametrize("mode", RUNS)
@pytest.mark.parametrize("f", [_through_bytes, _through_joined_text, _through_an_f_string, _through_str])
def test_numbers_parsed_from_formatted_floats_are_refused(f, mode):
    with pytest.raises(RuleArgumentError, match="parsed from text or bytes after float data was formatted"):
        RUNS[mode](f)


def _view_through_the_buffer(x):
    return np.sum(np.frombuffer(x * 2.0, dtype=np.float64) ** 2)


@pytest.mark.parametrize("mode", RUNS)
def test_a_view_made_without_its_derivative_is_refused(mode):
    with pytest.raises(RuleArgumentError, match="shares the array's memory"):
        RUNS[mode](_view_through_the_buffer)


def _parsed_first_then_logged(x):
    data = np.fromstring("1.5 -0.5 2.0", sep=" ")  # data read before anything is formatted
    loss = np.sum((x - data) ** 2)
    message = f"loss={loss:.4f} at {x[0]!r} width {x[1]:>{10}.{3}f}"  # a log line, never parsed
    return loss + 0.0 * len(message)


def test_text_parsed_before_formatting_and_text_never_parsed_work():
    check_every_mode(_parsed_first_then_logged, X)


def test_f_strings_give_pythons_text():
    seen = []

    def f(x):
        width = 9
        seen.append(f"{x[0]:.3f}|{x[1]!r}|{x[2]:>{width}.{2}e}|{'lit'!s:^7}|{{braces}}|{int(x[2] > 1)}")
        return np.sum(x ** 2)

    plain = f(X.copy())
    yb.grad(f)(X.copy())
    yb.jvp(f, (X.copy(),), (X.copy(),))
    assert plain == np.sum(X ** 2) and len(set(seen)) == 1


def test_a_refused_call_leaves_no_watch_behind():
    """Both closing checks run when a scope closes, the first reporting or not: neither the
    float-text flag nor the watched views outlive the call (a flag left under a reused scope id
    would refuse a later, innocent call)."""
    from yuebing.rules import aliasing_views, float_text, outside_state

    def writes_after_a_view_and_formats(x):
        v = x * 1.0
        w = np.broadcast_to(v, (2, 3))
        label = f"{x[0]:.3f}"
        v[0] = 3.0 * x[1]  # (a value other than the one there: the watch compares values)
        return np.sum(w) + 0.0 * len(label)

    with pytest.raises(RuleArgumentError, match="after this call made a view"):
        yb.grad(writes_after_a_view_and_formats)(X.copy())
    assert not float_text._FORMATTED and not aliasing_views._WATCHED and not outside_state._CLOSING
    np.testing.assert_allclose(yb.grad(lambda x: float(np.fromstring("1 2 3", sep=" ") @ x))(X.copy()), [1, 2, 3])
