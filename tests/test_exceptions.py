"""try/except/else/finally in differentiated code (issue 13 item 2; transform/exceptions.py).

The construct suite (tests/corpus/constructs.py, ``c_try_*``) checks the derivatives of the
common forms in every mode; this file checks the rules around them: yuebing's own errors are not
swallowed by a user's ``except Exception``, what reverse mode cannot replay is refused (and
forward mode still differentiates it), a caught exception leaves the caller's data as plain
Python leaves it, and the reverse pass undoes exactly the statements that ran.
"""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from yuebing.frontend.fence import UnsupportedSyntaxError

H = 1e-6


def _central(f, x):
    return (f(x + H) - f(x - H)) / (2 * H)


def _all_modes_agree(f, x):
    expected = _central(f, x)
    np.testing.assert_allclose(yb.grad(f)(x), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(yb.jvp(f, (x,), (1.0,))[1], expected, rtol=1e-6, atol=1e-8)
    second = (yb.grad(f)(x + H) - yb.grad(f)(x - H)) / (2 * H)
    np.testing.assert_allclose(yb.hessian(f)(x), second, rtol=1e-5, atol=1e-6)


class _Unknown:
    """A callable object whose call yuebing has no rule for (its __call__ is a C slot)."""

    __call__ = np.frompyfunc(lambda v: v * 2.0, 1, 1)


def test_a_missing_rule_is_not_taken_for_the_users_exception():
    unknown = _Unknown()

    def f(x):
        try:
            y = unknown(x) * 1.0
        except Exception:  # noqa: BLE001 - the user's broad handler
            y = 0.0
        return y + x

    with pytest.raises(Exception) as error:
        yb.grad(f)(0.5)
    assert type(error.value).__module__.startswith("yuebing"), error.value


def test_the_branch_taken_depends_on_the_point():
    def f(x):
        try:
            if x > 1.0:
                raise ValueError("large")
            y = np.sin(x) * x
        except ValueError:
            y = np.exp(x)
        return y * x

    for x in (0.4, 1.7):
        _all_modes_agree(f, x)


def test_statements_before_the_raise_keep_their_derivative():
    def f(x):
        y = x
        try:
            y = y * 3.0
            z = np.log(y)
            y = y * z
            [][0]
            y = y * 100.0
        except IndexError:
            y = y + x ** 2
        return y

    _all_modes_agree(f, 0.8)


def test_a_raise_inside_a_branch_of_the_try_body_is_undone_in_part():
    def f(x, flag):
        y = x
        try:
            if flag:
                y = y * 2.0
                z = np.sin(y)
                y = y + z
                raise KeyError("stop")
            else:
                y = y ** 3
                raise KeyError("stop")
        except KeyError:
            y = y * x
        return y

    for flag in (True, False):
        _all_modes_agree(lambda x: f(x, flag), 0.6)


def test_mutation_before_the_raise_stays_and_is_differentiated():
    def f(x):
        values = np.array([x, 2.0 * x])
        try:
            values[0] = values[0] * values[1]
            values[5] = 1.0
        except IndexError:
            values[1] = np.cos(values[1])
        return values.sum()

    _all_modes_agree(f, 0.9)


def test_a_loop_that_raises_after_work_keeps_its_completed_part():
    # the reverse pass replays the completed iterations and the completed statements of the
    # iteration that raised (more forms in tests/test_partial_exceptions.py)
    def f(x):
        total = x
        try:
            for i in range(4):
                total = total * x
                if i == 2:
                    raise ValueError("stop")
        except ValueError:
            total = total + 1.0
        return total

    _all_modes_agree(f, 0.7)


def test_a_callee_that_changed_data_before_raising_keeps_its_work():
    # its partial pullback goes with the exception (transform/partial_calls.py)
    def fill(buffer, v):
        buffer[0] = v * 2.0
        raise RuntimeError("half done")

    def f(x):
        buffer = np.zeros(2)
        try:
            fill(buffer, x)
        except RuntimeError:
            pass
        return buffer[0] * x

    _all_modes_agree(f, 0.7)


def test_a_callee_that_only_computed_before_raising_is_fine():
    def checked(v):
        scaled = v * 3.0
        if scaled > 1.0:
            raise ValueError("too large")
        return scaled

    def f(x):
        try:
            y = checked(x)
        except ValueError:
            y = checked(x / 10.0)
        return y * x

    for x in (0.2, 0.9):
        _all_modes_agree(f, x)


def test_an_escaping_exception_leaves_the_arguments_restored():
    def f(a):
        a *= 2.0
        try:
            a[0] = 5.0
        finally:
            a[1] = 7.0
        raise RuntimeError("escapes")

    a = np.array([1.0, 2.0])
    with pytest.raises(RuntimeError, match="escapes"):
        yb.grad(lambda v: f(v))(a)
    np.testing.assert_array_equal(a, [1.0, 2.0])


def test_reverse_pass_is_consistent_with_vjp_identity_on_arrays():
    def f(v):
        out = []
        for k in range(3):
            try:
                if k == 1:
                    raise ArithmeticError("skip")
                out.append(np.tanh(v * (k + 1.0)))
            except ArithmeticError:
                out.append(v ** 2)
        return np.stack(out)

    rng = np.random.default_rng(3)
    v, t, w = rng.normal(size=4), rng.normal(size=4), rng.normal(size=(3, 4))
    _, pullback = yb.vjp(f, v)
    _, tangent_out = yb.jvp(f, (v,), (t,))
    np.testing.assert_allclose(np.sum(pullback(w)[0] * t), np.sum(w * tangent_out), rtol=1e-10)


def test_show_prints_the_try():
    def f(x):
        try:
            y = {"a": x}["b"]
        except KeyError:
            y = x * 2.0
        return y

    text = yb.show(f, 0.5)
    assert "except KeyError" in text and "undo the try" in text


def test_an_object_numpy_reads_through_array_is_refused_not_dropped():
    # np.asarray(np.poly1d(c)) used to give a zero derivative in every mode (reported by the
    # NumPy derivation sweep): the rules' fallback for unknown objects dropped it
    def f(c):
        return np.sum(np.asarray(np.poly1d(c)) ** 2)

    c = np.array([1.0, 2.0])
    for run in (lambda: yb.grad(f)(c), lambda: yb.jvp(f, (c,), (np.ones(2),))):
        with pytest.raises(Exception, match="through __array__"):
            run()


def _catching(kind):
    def f(x):
        try:
            raise kind(x * 2.0)
        except kind as error:  # a class the function captures (its name read from a closure cell)
            return error.args[0] * x

    return f


def test_a_handler_naming_a_captured_class():
    """``except kind`` of a class captured from the enclosing function: the handler's generated
    text read the cell's name (NameError) before the type was read first."""
    _all_modes_agree(_catching(ValueError), 0.7)
