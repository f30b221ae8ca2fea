"""Generators and iterators under differentiation (issue 13 item 3): nothing hangs. An iterator
evaluated eagerly that does not end stops with an error naming it and the user's line; a user
iterator given to ``sum``/``list``/``max`` is walked by its own ``__next__``, differentiated."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import yuebing as yb
from yuebing.frontend import list_builders
from yuebing.ir import generators
from yuebing.rules import iteration

from .all_modes import check_all_modes

X, H = 0.7, 1e-6


def _difference(f, x=X):
    return (f(x + H) - f(x - H)) / (2 * H)


def _all_modes(f, x=X):
    """grad, jvp and hvp's gradient of ``f`` at ``x`` against central differences."""
    expected = _difference(f, x)
    np.testing.assert_allclose(yb.grad(f)(x), expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(yb.jvp(f, (x,), (1.0,))[1], expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(yb.hvp(f, (x,), (1.0,))[1][0], expected, rtol=1e-5, atol=1e-7)


@pytest.fixture
def small_limit(monkeypatch):
    monkeypatch.setattr(list_builders, "EAGER_ITEMS_LIMIT", 50)
    monkeypatch.setattr(iteration, "EAGER_ITEMS_LIMIT", 50)
    monkeypatch.setattr(generators, "EAGER_ITEMS_LIMIT", 50)


class _Counting:
    """A user iterator that never ends."""

    def __init__(self, x):
        self.x, self.k = x, 0

    def __iter__(self):
        return self

    def __next__(self):
        self.k += 1
        return self.x * self.k


class _Three(_Counting):
    def __next__(self):
        self.k += 1
        if self.k > 3:
            raise StopIteration
        return self.x * self.k


@pytest.mark.slow  # 10 s: it runs to the item limit
def test_an_endless_user_iterator_summed_stops_with_an_error(small_limit):
    def f(x):
        return sum(_Counting(x))
    with pytest.raises(RuntimeError, match=r"(?s)stopped iterating over a _Counting after 50 items.*"
                                           r"test_lazy_generators.py.*What to do"):
        yb.grad(f)(X)


@pytest.mark.parametrize("consume", [sum, lambda it: sum(list(it)), max, lambda it: sum(sorted(it))])
def test_a_user_iterator_given_to_a_builtin_is_walked_by_its_next(consume):
    _all_modes(lambda x: consume(_Three(x)) ** 2)


def test_an_endless_generator_drained_stops_with_an_error_naming_it(small_limit):
    def f(x):
        def endless():
            k = 0
            while True:
                yield x * k
                k += 1
        return sum(endless())
    with pytest.raises(RuntimeError, match=r"(?s)endless\(\) after 50 items.*test_lazy_generators.py.*"
                                           r"def endless.*What to do"):
        yb.grad(f)(X)


# --------------------------------------------------------------------------------------------
# lazy generators (frontend/generators.py): state machines the engine differentiates
# --------------------------------------------------------------------------------------------


def _send(x):
    def g():
        v = yield x
        w = yield v * 2.0
        yield w * v
    it = g()
    a = next(it)
    b = it.send(x * x)
    return a * b + it.send(3.0 * x)


def _suspended(x):
    produced = []

    def g():
        for k in range(5):
            produced.append(k)
            yield x ** (k + 1)
    it = g()
    first = next(it)
    return first * len(produced) + next(it)  # Python made two items only: len(produced) == 1, then 2


def _endless_next(x):
    def g():
        k = 0
        while True:
            yield x * k
            k += 1
    it = g()
    next(it)
    return next(it) * next(it)


def _endless_break(x):
    def g():
        k = 1.0
        while True:
            yield x * k
            k = k * 1.5
    total = 0.0
    for v in g():
        total += v * v
        if total > 20.0:
            break
    return total


def _endless_comprehension_zip(x):
    def g():
        k = 0
        while True:
            yield x + k
            k += 1
    return sum(a * b for a, b in zip([1.0, 2.0, 3.0], g()))


def _yield_from_value(x):
    def sub(a):
        yield a
        yield 2.0 * a
        return a * a

    def g():
        r = yield from sub(x)
        yield r * 3.0
        s = yield from [x, x * x]
        yield s
    return sum(v * v for v in g() if v is not None)


class _Walker:
    def __init__(self, rate):
        self.rate = rate

    def steps(self, x):
        while True:
            x = x * self.rate
            yield x


def _class_method(x):
    it = _Walker(1.1).steps(x)
    return next(it) + next(it) ** 2


def _captures(x):
    scale = x * 2.0
    offsets = [0.5, 1.5]

    def g():
        i = 0
        while i < 10:
            yield scale * offsets[i % 2] + x * i
            i += 1
    it = g()
    return next(it) * next(it) + next(it)


def _islice_endless(x):
    import itertools

    def g():
        k = 0
        while True:
            yield x ** k
            k += 1
    return sum(itertools.islice(g(), 1, 6, 2))


def _returns_early(x):
    def g(limit):
        k = 0
        while True:
            if k > limit:
                return
            yield x * k
            k += 1
    return sum(g(4)) + max(g(2))


def _if_and_for_with_yields(x):
    def g(n):
        for i in range(n):
            if i % 2:
                yield x * i
            else:
                continue
        else:
            yield -x
        while n > 0:
            n -= 1
            if n == 1:
                break
            yield x * n
    return sum(v * v for v in g(5))


LAZY = [_send, _suspended, _endless_next, _endless_break, _endless_comprehension_zip, _yield_from_value,
        _class_method, _captures, _islice_endless, _returns_early, _if_and_for_with_yields]


@pytest.mark.parametrize("f", LAZY, ids=lambda f: f.__name__.lstrip("_"))
def test_lazy_generator_in_every_mode(f):
    _all_modes(f)


def _simulation(x, rate):
    """A module-level generator with a variable named ``state`` (the rewrite's own bookkeeping
    must not read it: ``send`` asks whether the generator has started)."""
    state = x
    while True:
        pushed = yield state
        state = state * rate + (0.0 if pushed is None else pushed) * state


def _variables_named_state(x):
    def inner(scale):
        state = 0  # (0 when sent to: the check of a just-started generator must not look here)
        while True:
            got = yield scale * state
            state += 1 if got is None else got
    sim, it = _simulation(x, 0.9), inner(x)
    total = next(sim) + sim.send(0.5 * x) + sim.send(0.0) + next(sim)
    next(it)
    return total * (it.send(1.0) + it.send(2.0 * x))


@pytest.mark.parametrize("x", [0.7, -1.3])
def test_a_generator_variable_named_state_in_every_mode(x):
    check_all_modes(_variables_named_state, x)


def _writes_its_argument(x, a):
    def g():
        while True:
            a[0] = a[0] * x
            yield a[0] + a[1]
    it = g()
    return next(it) * next(it)


def test_a_lazy_generator_writing_an_argument_leaves_it_restored():
    a = np.array([1.5, -0.5])
    expected = (_writes_its_argument(X + H, a.copy()) - _writes_its_argument(X - H, a.copy())) / (2 * H)
    np.testing.assert_allclose(yb.grad(_writes_its_argument)(X, a), expected, rtol=1e-5)
    np.testing.assert_array_equal(a, [1.5, -0.5])
    np.testing.assert_allclose(yb.jvp(_writes_its_argument, (X, a), (1.0, np.zeros(2)))[1], expected, rtol=1e-5)
    np.testing.assert_array_equal(a, [1.5, -0.5])
    left = a.copy()
    _writes_its_argument(X, left)  # what a plain call leaves in an array the function captures
    np.testing.assert_allclose(yb.hvp(lambda x: _writes_its_argument(x, a), (X,), (1.0,))[1][0], expected, rtol=1e-5)
    np.testing.assert_array_equal(a, left)  # captured, not an argument: it keeps the call's writes (semantics.md)


# --------------------------------------------------------------------------------------------
# a value returned through StopIteration.value (frontend/stop_values.py); exceptions made and
# thrown in (ir/primitives.made_exception); the floats they are made from keep their derivative
# (rules/exception_data.py)
# --------------------------------------------------------------------------------------------


def _returned_through_send(x):
    def g():
        v = yield x
        return v * x
    it = g()
    next(it)
    try:
        it.send(x)
    except StopIteration as stop:
        return stop.value
    return 0.0


def _returned_in_a_loop(x):
    def g(n):
        total = 0.0
        for k in range(n):
            total += (yield x * k) or 0.0
        return total * x
    it = g(4)
    seen = 0.0
    while True:
        try:
            seen += next(it)
        except StopIteration as stop:
            return seen + stop.value
    

def _drive(generator, sent):
    try:
        next(generator)
        while True:
            generator.send(sent)
    except StopIteration as stop:
        return stop.value


def _returned_to_a_helper(x):
    def g():
        total = 1.0
        while total < 5.0:
            total = total * (yield total)
        return total + x
    return _drive(g(), x + 1.0) * x


class _Refused(Exception):
    pass


def _thrown_instances(x):
    def g():
        scale = 1.0
        while True:
            try:
                yield x * scale
            except KeyError:
                scale = scale * x
            except ValueError as error:
                scale = scale + len(error.args[0])
            except _Refused:
                scale = -scale
    it = g()
    a = next(it)
    b = it.throw(KeyError("x"))
    c = it.throw(ValueError("bad"))
    return a + b * c + it.throw(_Refused(2))


RETURNED_AND_THROWN = [_returned_through_send, _returned_in_a_loop, _returned_to_a_helper, _thrown_instances]


@pytest.mark.parametrize("f", RETURNED_AND_THROWN, ids=lambda f: f.__name__.lstrip("_"))
def test_returned_values_and_thrown_exceptions_in_every_mode(f):
    _all_modes(f)


def _value_of_a_generator_nothing_holds(x):
    def g():
        yield x
        return x * x
    made = [g()]
    try:
        next(made[0])
        next(made[0])
    except StopIteration as stop:
        return stop.args[0]  # (the argument it was made from, with its derivative)
    return 0.0


def _float_carried_by_a_raise(x):
    try:
        raise ValueError(x * 2.0)
    except ValueError as error:
        return error.args[0] * x


class _Carrying(Exception):
    def __init__(self, amount):
        super().__init__("carrying")
        self.amount = amount


def _float_carried_by_a_user_exception(x):
    try:
        raise _Carrying(x * x)
    except _Carrying as error:
        return error.amount


@pytest.mark.parametrize("f", [_value_of_a_generator_nothing_holds, _float_carried_by_a_raise,
                               _float_carried_by_a_user_exception], ids=["stop_args", "raise", "user_exception"])
def test_a_float_read_out_of_an_exception_carries_its_derivative(f):
    _all_modes(f)  # (rules/exception_data.py; what stays refused: tests/test_exception_data.py)


def _reads_the_except_name_after_the_handler(x):
    def g(v):
        try:
            raise ValueError("bad")
        except ValueError as e:
            got = yield v * 2.0
        yield got * len(e.args)  # (e is unbound once the handler is left)
    it = g(x)
    return next(it) * it.send(x)


def _rebinds_the_except_name(x):
    def g(v):
        for k in range(3):
            try:
                if k == 1:
                    raise ValueError(k)
            except ValueError as e:
                v = v * (yield v)
            e = v * 0.5  # (bound again after the handler)
            yield e
    it = g(x)
    return sum(it.send(x) if k else next(it) for k in range(4))


@pytest.mark.parametrize("mode", ["plain", "grad", "jvp", "hvp"])
def test_the_except_name_is_unbound_after_the_handler_in_every_mode(mode):
    """The state machine kept ``e`` on its frame after the handler (a value where CPython raises)."""
    f = _reads_the_except_name_after_the_handler
    run = {"plain": lambda: f(X), "grad": lambda: yb.grad(f)(X), "jvp": lambda: yb.jvp(f, (X,), (1.0,)),
           "hvp": lambda: yb.hvp(f, (X,), (1.0,))}[mode]
    with pytest.raises(UnboundLocalError, match="local variable 'e'"):
        run()


def test_the_except_name_bound_again_in_every_mode():
    check_all_modes(_rebinds_the_except_name, X)


# --------------------------------------------------------------------------------------------
# yields inside try/with and inside larger expressions (generator_exceptions.py, yield_hoisting.py)
# --------------------------------------------------------------------------------------------


def _finally_on_close(x):
    log = []

    def g():
        try:
            k = 1.0
            while True:
                yield x * k
                k = k * 1.5
        finally:
            log.append(x * 2.0)
    it = g()
    a = next(it) * next(it)
    it.close()
    return a + sum(log)


def _finally_on_break(x):
    log = []

    def g():
        try:
            k = 1.0
            while True:
                yield x * k
                k = k * 1.5
        finally:
            log.append(x * x)
    total = 0.0
    for v in g():
        total += v
        if total > 3.0:
            break
    return total + sum(log)


def _finally_on_return(x):
    log = []

    def g():
        try:
            i = 0
            while True:
                if i > 2:
                    return
                yield x * i
                i += 1
        finally:
            log.append(x)
    return sum(g()) * sum(log)


def _except_around_a_yield(x):
    def g():
        k = 0
        while True:
            try:
                v = yield x * k
                if v > 2.0:
                    raise ValueError
            except ValueError:
                yield -x * x
            k += 1
    it = g()
    a = next(it)
    b = it.send(1.0)
    c = it.send(3.0)
    return a + b * c + next(it)


def _thrown_in(x):
    def g():
        scale = 1.0
        while True:
            try:
                yield x * scale
            except KeyError:
                scale = scale * x
    it = g()
    a = next(it)
    b = it.throw(KeyError)
    return a + b * it.throw(KeyError)  # (an exception made in differentiated code needs a rule: the class)


def _generator_exit_caught(x):
    log = []

    def g():
        try:
            while True:
                yield x
        except GeneratorExit:
            log.append(x ** 3)
            raise
    it = g()
    a = next(it)
    it.close()
    return a * sum(log)


class _Scaled:
    def __init__(self, log, x):
        self.log, self.x = log, x

    def __enter__(self):
        return self.x * 2.0

    def __exit__(self, kind, error, traceback):
        self.log.append(self.x * 3.0)
        return False


def _with_around_a_yield(x):
    log = []

    def g():
        with _Scaled(log, x) as s:
            k = 0
            while True:
                yield x * s * k
                k += 1
    it = g()
    a = next(it) + next(it) * next(it)
    it.close()
    return a * sum(log)


def _yields_in_expressions(x):
    def g():
        total = 0.0
        while True:
            total += (yield total) * x
            total = max(total, (yield total * 2.0) or 0.0) + ((yield 1.0) if total > 1.0 else x)
    it = g()
    next(it)
    values = [it.send(x), it.send(0.5), it.send(x * x), it.send(2.0)]
    return sum(v * v for v in values)


def _yield_as_an_argument(x):
    log = []

    def g():
        while True:
            log.append(x * (yield x) + (yield x * x) ** 2)
    it = g()
    next(it)
    it.send(2.0 * x)
    it.send(x + 1.0)
    it.send(3.0)
    return sum(log)


def _finally_of_dropped_generators(x):
    log = []

    def g(scale):
        try:
            k = 1.0
            while True:
                yield x * scale * k
                k += 1.0
        finally:
            log.append(x * scale)
    first = next(g(2.0))
    paired = sum(a * b for a, b in zip([1.0, 2.0], g(3.0)))
    for v in zip(g(0.5), [1.0]):
        pass
    return first * paired + sum(log) ** 2


EXCEPTIONS_AND_EXPRESSIONS = [_finally_of_dropped_generators, _finally_on_close, _finally_on_break, _finally_on_return, _except_around_a_yield,
                              _thrown_in, _generator_exit_caught, _with_around_a_yield, _yields_in_expressions,
                              _yield_as_an_argument]


@pytest.mark.parametrize("f", EXCEPTIONS_AND_EXPRESSIONS, ids=lambda f: f.__name__.lstrip("_"))
def test_yields_in_try_with_and_expressions_in_every_mode(f):
    _all_modes(f)


# --------------------------------------------------------------------------------------------
# managers around a yield that run without derivatives (ir/generators.managed); generators
# closed where CPython drops them (frontend/generator_closing.py)
# --------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _noted(log, name):
    log.append(len(name))
    try:
        yield name
    finally:
        log.append(-len(name))


def _contextmanager_around_a_yield(x):
    log = []

    def g():
        with _noted(log, "inner") as name:
            k = 1.0
            while True:
                yield x * k * len(name)
                k += 1.0
    it = g()
    a = next(it) * next(it) * len(log)
    it.close()
    return a * len(log)


def _errstate_around_a_yield(x):
    def g():
        with np.errstate(divide="ignore"):
            k = 1.0
            while True:
                yield np.log(x * k) + float(np.isinf(np.log(0.0 * k)))  # (no warning: errstate is in effect)
                k += 1.0
    it = g()
    return next(it) * next(it)


def _dropped_generators(x):
    log = []

    def g(scale):
        try:
            k = 1.0
            while True:
                yield x * scale * k
                k += 1.0
        finally:
            log.append(x * scale)

    def first_of(scale):
        it = g(scale)
        return next(it)  # (closed when first_of returns)
    nested = sum([sum(a * b for a, b in zip([1.0, 2.0], g(s))) for s in (1.0, 2.0)])
    it = g(2.0)
    a = next(it)
    it = g(3.0)  # the first one dropped: closed
    b = next(it) + next(it) * sum(log)
    del it
    return (nested + a + b + first_of(0.5)) * sum(log)


def _dropped_lists_of_generators(x):
    log = []

    def g(scale):
        try:
            k = 1.0
            while True:
                yield x * scale * k
                k += 1.0
        finally:
            log.append(x * scale)
    gens = [g(1.0), g(2.0)]
    a = next(gens[0]) * next(gens[1])
    gens.append(g(3.0))
    a += next(gens[2]) * len(gens)
    gens = None  # the list dropped: its three generators closed here, their finally blocks run
    b = a * sum(log)
    pair = tuple([g(s) for s in (0.5, 4.0)])
    return b + next(pair[0]) * next(pair[1])


@contextlib.contextmanager
def _scaled(log, scale):
    log.append(scale * 2.0)
    try:
        yield scale * 3.0
    finally:
        log.append(scale * scale)


def _contextmanager_handed_floats(x):
    log = []

    def g():
        with _scaled(log, x) as s:
            k = 1.0
            while True:
                yield x * s * k
                k += 1.0
    it = g()
    a = next(it) * next(it) * sum(log)
    it.close()
    return a + sum(log) ** 2


MANAGED_AND_DROPPED = [_contextmanager_around_a_yield, _errstate_around_a_yield, _contextmanager_handed_floats,
                       _dropped_generators, _dropped_lists_of_generators]


@pytest.mark.parametrize("f", MANAGED_AND_DROPPED, ids=lambda f: f.__name__.lstrip("_"))
def test_managers_around_yields_and_dropped_generators_in_every_mode(f):
    _all_modes(f)


