"""Exceptions that leave partial work through a ``finally`` block (issue 13, the last refusals).

An exception that leaves a ``try`` through a ``finally`` block with differentiable work is
recorded on its way out (transform/try_statements.py, ``_fwd_way_out``): how far the try got,
the partial work of a call that raised, then the finally block's work follows on the tape; the
reverse pass undoes the finally block, then the try's completed work. Every case is checked in
reverse mode, forward mode and second order against central differences (tests/modes.py), and
the caller's arrays are checked unchanged after ``yb.grad``.
"""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from yuebing.frontend import fence as yb_errors
from tests.modes import central, check_every_mode
from tests.test_partial_exceptions import fill_then_raise, middle


def loop_through_finally(x):
    y = x
    try:
        for i in range(3):
            try:
                y = y * x
                if i == 1:
                    raise KeyError("leaves through finally")
            finally:
                y = y + np.sin(x)
    except KeyError:
        y = y * 2.0
    return y


def the_issues_example(x):
    y = x
    try:
        try:
            y = y * x
            raise KeyError("k")
        finally:
            y = y + x * x
    except KeyError:
        pass
    return y * x


def unmatched_handler_then_finally(x):
    y = x
    try:
        try:
            y = np.exp(y * x)
            {}["missing"]
        except ValueError:
            y = 0.0
        finally:
            y = y * x + x
    except KeyError:
        y = y - x
    return y


def handler_raises_through_finally(x):
    y = x
    try:
        try:
            y = y * 3.0
            raise KeyError("inner")
        except KeyError:
            y = np.sin(y) * x
            raise ValueError("from the handler")
        finally:
            y = y + x ** 2
    except ValueError:
        y = y * x
    return y


def else_raises_through_finally(x):
    y = x
    try:
        try:
            y = y * 3.0
        except KeyError:
            y = 0.0
        else:
            y = np.cos(y) * x
            raise ValueError("from else")
        finally:
            y = y * y
    except ValueError:
        y = y + x
    return y


def finally_raises_after_its_try_completed(x):
    y = x
    try:
        try:
            y = y * 3.0
            raise KeyError("inner")
        except KeyError:
            y = np.sin(y) * x
        finally:
            y = y + x ** 2
            raise ValueError("from the finally block")
    except ValueError:
        y = y * x
    return y


def finally_raises_while_an_exception_leaves(x):
    y = x
    try:
        try:
            y = y * 3.0
            raise KeyError("inner")
        finally:
            y = y + x ** 2
            [][0]
            y = 100.0
    except IndexError:
        y = y * x
    return y


def callee_raising_through_finally(x):
    buffer = np.zeros(2)
    try:
        try:
            buffer[1] = x * x
            fill_then_raise(buffer, x)
        finally:
            buffer[0] = buffer[0] * np.cos(x)
    except RuntimeError:
        buffer[1] = buffer[1] + x
    return buffer[0] * buffer[1]


def nested_finally_blocks(x):
    y = x
    try:
        try:
            try:
                y = y * x
                raise KeyError("deep")
            finally:
                y = y + np.sin(x)
        finally:
            y = y * np.exp(x)
    except KeyError:
        y = y - x
    return y


def _callee_with_finally(buffer, v):
    try:
        buffer[0] = buffer[0] + v * v
        middle(buffer, v)
    finally:
        buffer[1] = buffer[1] * v


def finally_in_a_callee(x):
    buffer = np.array([0.5, 0.25])
    try:
        _callee_with_finally(buffer, x)
    except RuntimeError:
        buffer[0] = buffer[0] * x
    return buffer[0] * buffer[1]


def while_loop_with_finally(x):
    y, k = x, 0
    try:
        while k < 5:
            try:
                y = y * np.cos(x) + 0.1
                k += 1
                if k == 3:
                    raise KeyError(k)
            finally:
                y = y * x
                if k == 2:
                    y = y + x
    except KeyError:
        y = y + 1.0
    return y


FINALLY_CASES = [loop_through_finally, the_issues_example, unmatched_handler_then_finally,
                 handler_raises_through_finally, else_raises_through_finally,
                 finally_raises_after_its_try_completed, finally_raises_while_an_exception_leaves,
                 callee_raising_through_finally, nested_finally_blocks, finally_in_a_callee,
                 while_loop_with_finally]


@pytest.mark.parametrize("f", FINALLY_CASES, ids=lambda f: f.__name__)
def test_work_of_a_finally_block_an_exception_left_through_is_replayed(f):
    check_every_mode(f, 0.7)


def _restored_and_right(f, values):
    """``yb.grad`` of ``f`` at the array ``values`` matches central differences and leaves the
    caller's array as it was."""
    kept = values.copy()
    gradient = yb.grad(f)(values)
    np.testing.assert_array_equal(values, kept)
    np.testing.assert_allclose(gradient, central(lambda v: f(v.copy()), kept, 1e-6), rtol=1e-6, atol=1e-8)


def test_the_callers_array_is_restored_after_a_finally_on_the_way_out():
    def f(a):
        try:
            try:
                a[0] = a[0] * a[1]
                _callee_with_finally(a, a[1])
            finally:
                a[1] = a[1] + np.sin(a[0])
        except RuntimeError:
            a[0] = a[0] * 2.0
        return np.sum(a ** 2)

    _restored_and_right(f, np.array([0.4, 0.9]))
    check_every_mode(f, np.array([0.4, 0.9]))


def test_an_exception_escaping_through_a_finally_leaves_the_arguments_restored():
    def f(x, buffer):
        try:
            try:
                buffer[0] = buffer[0] * x
                middle(buffer, x)
            finally:
                buffer[1] = buffer[1] + x
        except KeyError:  # not the RuntimeError: it escapes
            pass
        return buffer[0]

    for run in (lambda b: yb.grad(f)(0.7, b), lambda b: yb.vjp(f, 0.7, b), lambda b: yb.hvp(f, (0.7, b), (1.0, np.zeros(2)))):
        buffer = np.array([0.25, 0.5])
        with pytest.raises(RuntimeError, match="half done"):
            run(buffer)
        np.testing.assert_array_equal(buffer, [0.25, 0.5])


# ------------------------------------------------------------------------------------------
# Work done before an exception by a function reached through a rule (map, functools.reduce),
# a class's construction, or given *args/**kwargs: each layer routes the partial work
# (rules/_partial_work.py) as it routes its pullback.
# ------------------------------------------------------------------------------------------


def _accumulate_then_raise(buffer, v):
    buffer[0] = buffer[0] + v * v
    if v > 1.0:
        raise ValueError("too big")
    buffer[1] = buffer[1] * v
    return np.sin(v)


def through_map(x):
    buffer = np.array([0.5, 2.0])
    total = x
    try:
        total = sum(map(lambda v: _accumulate_then_raise(buffer, v), [x, 2 * x, 3 * x]))
    except ValueError:
        total = total * buffer[0]
    return total + buffer[0] * x + buffer[1]


def through_map_raising_before_any_work(x):
    values = [x, np.cos(x)]
    out = [1.0]

    def step(v):
        if v < 0.8:
            raise KeyError(v)
        out.append(v * x)
        return v

    try:
        list(map(step, values))
    except KeyError:
        out.append(x * x)
    return sum(out) * out[-1]


def through_reduce(x):
    import functools

    buffer = np.array([0.5, 0.0])
    total = x

    def step(a, b):
        buffer[0] = buffer[0] * b + a
        if b > 1.0:
            raise ValueError("stop")
        return a * b

    try:
        total = functools.reduce(step, [x, 2 * x, 3 * x, 4 * x])
    except ValueError:
        total = total * buffer[0]
    return total + buffer[0] * x


class _HalfBuilt:
    def __init__(self, v, out):
        self.a = v * 3.0
        out[0] = out[0] * np.exp(v)
        out[1] = self.a * out[0]
        raise KeyError("half built")


def through_a_constructor(x):
    out = np.array([0.5, 1.0])
    try:
        made = _HalfBuilt(x, out)
    except KeyError:
        made = None
    return x * out[0] + out[1] if made is None else made.a


def given_star_args(x):
    buffer = np.zeros(2)
    arguments = (buffer, x)
    try:
        fill_then_raise(*arguments)
    except RuntimeError:
        pass
    return buffer[0] * x + buffer[1]


def given_star_kwargs(x):
    buffer = np.zeros(2)
    arguments = {"buffer": buffer, "v": x}
    try:
        fill_then_raise(**arguments)
    except RuntimeError:
        pass
    return buffer[0] * x + buffer[1]


def given_some_arguments_by_star(x):
    buffer = np.zeros(2)
    try:
        fill_then_raise(buffer, *[x * x])
    except RuntimeError:
        buffer[0] = buffer[0] + x
    return buffer[0] * x + buffer[1]


class _Holder:
    def __init__(self):
        self.buffer = np.zeros(2)

    def fill(self, v):
        self.buffer[0] = v * v
        self.buffer[1] = np.sin(self.buffer[0])
        raise RuntimeError("method")


def a_method_given_star_args(x):
    holder = _Holder()
    try:
        holder.fill(*(x,))
    except RuntimeError:
        pass
    return holder.buffer[0] * x + holder.buffer[1]


def a_star_call_inside_map(x):
    buffer = np.zeros(2)
    try:
        list(map(lambda pair: fill_then_raise(*pair), [(buffer, x)]))
    except RuntimeError:
        pass
    return buffer[0] * x + buffer[1]


def a_functools_partial(x):
    import functools

    buffer = np.zeros(2)
    fill = functools.partial(fill_then_raise, buffer)
    try:
        fill(x)
    except RuntimeError:
        pass
    return buffer[0] * x + buffer[1]


class _Filler:
    def __init__(self, buffer):
        self.buffer = buffer

    def __call__(self, v):
        self.buffer[0] = v * v
        self.buffer[1] = np.sin(self.buffer[0])
        raise RuntimeError("object")


def a_callable_object(x):
    buffer = np.zeros(2)
    try:
        _Filler(buffer)(x)
    except RuntimeError:
        pass
    return buffer[0] * x + buffer[1]


def given_keywords(x):
    buffer = np.zeros(2)
    try:
        fill_then_raise(v=x, buffer=buffer)
    except RuntimeError:
        pass
    return buffer[0] * x + buffer[1]


ROUTED_CASES = [a_functools_partial, a_callable_object, given_keywords, through_map, through_map_raising_before_any_work, through_reduce, through_a_constructor,
                given_star_args, given_star_kwargs, given_some_arguments_by_star, a_method_given_star_args,
                a_star_call_inside_map]


@pytest.mark.parametrize("f", ROUTED_CASES, ids=lambda f: f.__name__)
def test_work_routed_through_a_rule_a_constructor_or_star_arguments_is_replayed(f):
    check_every_mode(f, 0.7)


def test_the_callers_array_is_restored_after_routed_partial_work():
    def f(a):
        try:
            list(map(lambda v: _accumulate_then_raise(a, v), [a[1], 4.0 * a[1]]))
        except ValueError:
            a[1] = a[1] + a[0]
        try:
            _HalfBuilt(0.1 * a[0], a)
        except KeyError:
            pass
        try:
            fill_then_raise(*(a, a[0]))
        except RuntimeError:
            pass
        return np.sum(a ** 2)

    _restored_and_right(f, np.array([0.1, 0.3]))
    check_every_mode(f, np.array([0.1, 0.3]))


def test_an_exception_escaping_map_leaves_the_arguments_restored():
    def f(x, buffer):  # no try: the exception leaves yb.grad, map's completed calls are undone
        return sum(map(lambda v: _accumulate_then_raise(buffer, v), [x, 2 * x]))

    def caught_elsewhere(x, buffer):  # a try whose handler does not match
        try:
            return f(x, buffer)
        except KeyError:
            return x

    for g in (f, caught_elsewhere):
        for run in (lambda b: yb.grad(g)(0.7, b), lambda b: yb.vjp(g, 0.7, b)):
            buffer = np.array([0.25, 0.5])
            with pytest.raises(ValueError, match="too big"):
                run(buffer)
            np.testing.assert_array_equal(buffer, [0.25, 0.5])


def a_key_that_changes_data_then_raises(x):
    buffer = np.array([0.5, 0.0])

    def key(v):
        buffer[0] = buffer[0] + v
        if v > 1.0:
            raise ValueError("stop")
        return v

    total = x
    try:
        total = sorted([x, 2 * x, 3 * x], key=key)[0]
    except ValueError:
        total = total * buffer[0]
    return total + buffer[0] * x


def test_a_key_that_changed_data_before_raising_keeps_its_work():
    # sorted/min/max/filter call a key that may change data like user code (rules/_key_functions.py):
    # what it changed before raising reaches the handler with its derivatives (it used to be refused)
    check_every_mode(a_key_that_changes_data_then_raises, 0.7)


def a_key_that_only_reads(x):
    weights = {0.7: 2.0}
    total = x
    try:
        total = max([x, 2 * x], key=lambda v: weights[v]) * x
    except KeyError:
        total = total * np.sin(x)
    return total


def test_a_key_that_only_reads_may_raise():
    check_every_mode(a_key_that_only_reads, 0.7)


def test_a_reverse_jacobian_leaves_a_changed_argument_as_it_was():
    """yb.jacobian (reverse mode) ran a value pass whose changes to the arguments were never
    undone: every row was then taken at the changed point, and the caller's array kept them
    (found by the checks above; with or without an exception)."""
    def f(a):
        a[0] = a[0] * a[1]
        try:
            a[1] = np.sin(a[0]) + a[1]
            raise KeyError("after the write")
        except KeyError:
            pass
        return np.array([np.sum(a ** 2), a[0] * a[1]])

    values = np.array([0.1, 0.3])
    jacobian = yb.jacobian(f)(values)
    np.testing.assert_array_equal(values, [0.1, 0.3])
    np.testing.assert_allclose(jacobian, central(lambda v: f(v.copy()), values, 1e-6), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(yb.jacobian(f, mode="fwd")(values.copy()), jacobian, rtol=1e-12)


def _appends_then_exits(acc, x):
    acc.append(x * 2.0)
    raise GeneratorExit  # a BaseException, not an Exception


def _caught_base_exception(x):
    acc = []
    try:
        _appends_then_exits(acc, x)
    except GeneratorExit:
        pass
    return acc[0] * x


def test_a_callee_raising_a_base_exception_after_work_keeps_its_work():
    """A callee's work before a GeneratorExit (or KeyboardInterrupt) its caller catches was
    silently dropped in reverse mode (the tracked call caught Exception only): 3.0 for 6.0."""
    check_every_mode(_caught_base_exception, 1.5)
