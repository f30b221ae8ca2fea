"""Lazy generators' state machines (``frontend/generators.py``, ``generator_exceptions.py``,
``yield_hoisting.py``) behave as CPython's generators: each case below is run as written and as
rewritten (plain Python, no differentiation) under random sequences of ``next``, ``send``,
``throw`` and ``close``, and what each call returned or raised, and what the generator recorded,
must be the same. The derivatives of the same constructs are in ``test_lazy_generators.py``."""
from __future__ import annotations

import ast
import contextlib
import random

import numpy as np
import pytest

from yuebing.frontend import generators
from yuebing.frontend.source import function_node


def rewritten(fn):
    """``fn`` with every generator function in it rewritten as a state machine, compiled as
    plain Python (as if the caller consumed them with ``next``)."""
    node, filename = function_node(fn)
    original = generators.consumed_lazily
    generators.consumed_lazily = lambda node: True
    try:
        new = generators.state_machines(node, filename)
    finally:
        generators.consumed_lazily = original
    assert new is not node, f"{fn.__name__}: nothing was rewritten"
    namespace = dict(fn.__globals__)
    exec(compile(ast.Module([new], []), filename, "exec"), namespace)
    return namespace[new.name]


def outcome(call):
    """What ``call()`` returned, or the type and message of what it raised."""
    try:
        return ("returned", call())
    except BaseException as error:  # noqa: BLE001 - StopIteration, GeneratorExit, RuntimeError too
        value = error.value if isinstance(error, StopIteration) else None
        return ("raised", type(error).__name__, str(error), value)


def drive(it, operations, log):
    """Apply ``operations`` to the generator ``it``, recording each outcome in ``log``."""
    for name, argument in operations:
        if name == "next":
            log.append(outcome(lambda: next(it)))
        elif name == "send":
            log.append(outcome(lambda: it.send(argument)))
        elif name == "throw":
            log.append(outcome(lambda: it.throw(argument)))
        else:
            log.append(outcome(it.close))
    for _ in range(2):  # (CPython would close it again when it is dropped, after the log is returned)
        log.append(outcome(it.close))
    return log


# Each case takes the operations and returns the log: the generator appends what it does.

def try_finally_loop(operations):
    log = []

    def g():
        try:
            k = 0
            while True:
                v = yield k
                k += 1 if v is None else v
        finally:
            log.append("finally")
    return drive(g(), operations, log)


def except_and_else(operations):
    log = []

    def g():
        k = 0
        while k < 6:
            v = None
            try:
                v = yield k
                if v == 3:
                    raise KeyError("three")
            except ValueError as error:
                log.append(("ValueError", str(error)))
                yield -1
            except (KeyError, IndexError):
                log.append("KeyError or IndexError")
            else:
                log.append(("else", k))
            k += 1
        return k
    return drive(g(), operations, log)


def nested_finally_and_return(operations):
    log = []

    def g():
        try:
            try:
                for i in range(4):
                    v = yield i
                    if v == 2:
                        return "early"
                    if v == 3:
                        break
                yield "after the loop"
            finally:
                log.append("inner")
                yield "in the inner finally"
        finally:
            log.append("outer")
        return "end"
    return drive(g(), operations, log)


def catches_generator_exit(operations):
    log = []

    def g():
        while True:
            try:
                yield 1
            except GeneratorExit:
                log.append("exit")
                raise
            except ValueError:
                log.append("swallowed")
                yield "recovered"
    return drive(g(), operations, log)


def ignores_generator_exit(operations):
    log = []

    def g():
        while True:
            try:
                yield 1
            except GeneratorExit:
                log.append("ignored")
                yield 2
    return drive(g(), operations, log)


def bare_raise_and_reraise(operations):
    log = []

    def g():
        n = 0
        while True:
            try:
                n += 1
                yield n
            except ValueError:
                log.append("re-raised")
                raise
            finally:
                log.append(("finally", n))
    return drive(g(), operations, log)


class Manager:
    def __init__(self, log, name, suppress=False):
        self.log, self.name, self.suppress = log, name, suppress

    def __enter__(self):
        self.log.append(("enter", self.name))
        return self.name

    def __exit__(self, kind, error, traceback):
        self.log.append(("exit", self.name, kind.__name__ if kind else None))
        return self.suppress and kind is KeyError


def with_managers(operations):
    log = []

    def g():
        k = 0
        while True:
            with Manager(log, "outer") as a, Manager(log, "inner", suppress=True) as b:
                v = yield (a, b, k)
                if v == 2:
                    raise KeyError("suppressed by inner")
            k += 1
    return drive(g(), operations, log)


def yield_from_a_generator(operations):
    log = []

    def sub():
        try:
            v = yield "sub"
            while v != 3:
                v = yield ("sub got", v)
            return "sub returned"
        finally:
            log.append("sub finally")

    def g():
        while True:
            try:
                r = yield from sub()
                log.append(r)
            except ValueError:
                log.append("ValueError at the yield from")
            yield "between"
    return drive(g(), operations, log)


def hoisted_yields(operations):
    log = []

    def g():
        total = 0
        items = [10, 20]
        while True:
            total += ((yield total) or 0) * 2
            items.append((yield "a") if total > 4 else (yield "b"))
            log.append(max(items[-1] or 0, (yield len(items)) or 0))
            both = (yield "x") and (yield "y")
            log.append(("both", both, {"k": (yield "key"), "j": total}))
    return drive(g(), operations, log)


def evaluation_order(operations):
    log = []

    def note(value):
        log.append(value)
        return value

    def g():
        table = {}
        while True:
            note(note("a") + str((yield "first")) + note("b"))
            table[note("key")] = yield "into the table"
            table[(yield "the key")] = note("value")
            log.append(sorted(map(str, table)))
            log.append({note("k1"): (yield "dict value"), (yield "dict key"): note("v2")})
            x = [note(1), *((yield "starred") or ()), note(2)]
            log.append(x)
    return drive(g(), operations, log)


def finally_returns_over_an_exception(operations):
    log = []

    def g():
        while True:
            v = None
            try:
                v = yield "body"
                if v == 1:
                    raise ValueError("lost")
            finally:
                if v == 1:
                    return "finally wins"  # noqa: B012 - the construct being tested
    return drive(g(), operations, log)


@contextlib.contextmanager
def noted(log, name):
    log.append(("enter", name))
    try:
        yield name
    except KeyError:
        log.append(("swallowed", name))
    finally:
        log.append(("exit", name))


def contextmanager_and_errstate(operations):
    log = []

    def g():
        k = 0
        while k < 5:
            with noted(log, "cm") as name, np.errstate(divide="ignore"):
                v = yield (name, k, np.geterr()["divide"])
                log.append(np.geterr()["divide"])
                if v == 2:
                    raise KeyError("swallowed by the manager")
            k += 1
        return k
    return drive(g(), operations, log)


def returned_through_stop_iteration(operations):
    log = []

    def g():
        total = 0
        while total < 6:
            v = yield total
            total += 1 if v is None else v
        return total * 10
    it = g()
    for name, argument in operations:
        try:
            if name == "next":
                log.append(next(it))
            elif name == "send":
                log.append(it.send(argument))
            elif name == "throw":
                log.append(it.throw(argument))
            else:
                it.close()
        except StopIteration as stop:
            log.append(("returned", stop.value))
        except Exception as error:  # noqa: BLE001 - what CPython raises, compared
            log.append(type(error).__name__)
    return log



def match_and_except_star(operations):
    """``match`` and ``try``/``except*`` around yields (rewritten before the state machine)."""
    log = []

    def g():
        k = 0
        while k < 12:
            try:
                match (k % 4, k):
                    case (0, _):
                        v = yield ("zero", k)
                    case (1, n) if n > 2:
                        raise ExceptionGroup("two", [ValueError(n), KeyError(n)])
                    case (1, _):
                        raise ExceptionGroup("one", [ValueError(k)])
                    case [2, n]:
                        v = yield ("two", n)
                    case _:
                        v = yield "other"
                match v:
                    case None:
                        log.append("nothing sent")
                    case int(n) if n > 2:
                        log.append(("big", n))
                    case n:
                        log.append(("sent", n))
            except* ValueError as group:
                log.append(("value errors", len(group.exceptions)))
                v = yield "handled"
                log.append(("handler got", v))
            except* KeyError:
                log.append("key errors")
            finally:
                log.append(("finally", k))
            k += 1
        return "done"
    return drive(g(), operations, log)


def imports_between_yields(operations):
    """``import`` statements after yields: what they bind is read after later yields."""
    log = []

    def g():
        import math
        k = 0
        while k < 8:
            from math import sqrt as root
            v = yield root(k)
            import json
            import os.path
            try:
                from string import ascii_lowercase as letters
                v = yield letters[k]
            finally:
                log.append((json.dumps(v), os.path.basename("a/b"), math.floor(k / 2), root(4), letters[0]))
            k += 1
    return drive(g(), operations, log)


def runtime_names_as_variables(operations):
    """The generator's variables carry the names the rewrite uses for its own bookkeeping
    (``state`` is where it resumes, read by ``send``; the others name frame attributes)."""
    log = []

    def g(state):
        frame = resume = sent = thrown = more = value = 0
        returned = exception = iterator = hoisted = pending = caught = manager = entered = 0
        while True:
            try:
                with Manager(log, "m") as exit:
                    sent = (yield state) or 0
                    state = state + sent + ((yield exit) or 0)
            except ValueError as error:
                log.append(("caught", str(error), state))
            finally:
                frame, resume, thrown, more, value = frame + 1, resume + 2, thrown + 3, more + 4, value + 5
                log.append((frame, resume, sent, thrown, more, value))
                returned, exception, iterator, hoisted = returned + 1, exception + 1, iterator + 1, hoisted + 1
                pending, caught, manager, entered = pending + 1, caught + 1, manager + 1, entered + 1
                log.append((returned, exception, iterator, hoisted, pending, caught, manager, entered))
    return drive(g(0), operations, log)


def unbinds_the_except_name(operations):
    """``except E as error:`` unbinds ``error`` when the handler is left (CPython's ``finally:
    error = None; del error``), whether the handler yields (compiled into blocks) or not; the
    rewrite kept it bound on the frame."""
    log = []

    def g():
        k = 0
        while k < 5:
            try:
                v = yield k
                if v == 3:
                    raise KeyError("three")
            except ValueError as error:  # (a handler with a yield)
                got = yield str(error)
                log.append(("handled", got))
            except KeyError as error:
                log.append(("key", str(error)))
            try:
                raise IndexError(k)  # (a try without a yield: kept as written)
            except IndexError as gone:
                log.append(("index", str(gone)))
            for name in ("error", "gone"):
                try:
                    log.append(("still bound", name, error if name == "error" else gone))
                except NameError as unbound:
                    log.append((type(unbound).__name__, name))
            k += 1
    return drive(g(), operations, log)


CASES = [unbinds_the_except_name, contextmanager_and_errstate, returned_through_stop_iteration, try_finally_loop, except_and_else, nested_finally_and_return, catches_generator_exit,
         ignores_generator_exit, bare_raise_and_reraise, with_managers, yield_from_a_generator, hoisted_yields,
         finally_returns_over_an_exception, evaluation_order, match_and_except_star, imports_between_yields,
         runtime_names_as_variables]


def random_operations(rng: random.Random, length: int) -> list:
    choices = [("next", None)] * 4 + [("send", v) for v in (1, 2, 3, 4)] + [
        ("throw", ValueError("thrown")), ("throw", KeyError), ("throw", IndexError("index")), ("close", None)]
    return [rng.choice(choices) for _ in range(length)]


def _comparable(log):
    """Exceptions given to throw are shared objects: compare by type and text."""
    return [tuple((type(v).__name__, str(v)) if isinstance(v, BaseException) else v for v in entry)
            if isinstance(entry, tuple) else entry for entry in log]


@pytest.mark.parametrize("case", CASES, ids=lambda f: f.__name__)
def test_rewritten_generator_behaves_as_cpython(case):
    lazy = rewritten(case)
    rng = random.Random(case.__name__)
    for _ in range(60):
        operations = random_operations(rng, rng.randint(1, 9))
        assert _comparable(lazy(operations)) == _comparable(case(operations)), operations


def closes_in_a_loop(stop):
    log = []

    def g():
        try:
            k = 0
            while True:
                yield k
                k += 1
        finally:
            log.append("finally")
    for v in g():
        log.append(v)
        if v == stop:
            break
    log.append("after the loop")
    return log


def closes_what_it_drops(stop):
    log = []

    def g(n):
        try:
            k = n
            while True:
                yield k
                k += 1
        finally:
            log.append(("finally", n))
    log.append(next(g(10)))
    log.append(next(g(20), None))
    for a, b in zip(g(0), range(stop)):
        log.append((a, b))
    for i, v in enumerate(g(30)):
        if i == stop:
            break
    total = sum(a for a, b in zip(g(40), range(stop)))  # (closed after the statement: in CPython, after sum)
    log.append(total)
    log.append("after the loops")
    return log


def closes_nested_and_held(stop):
    log = []

    def g(n):
        try:
            k = n
            while True:
                yield k
                k += 1
        finally:
            log.append(("finally", n))

    def first_of(n):
        it = g(n)
        log.append(("first", next(it)))
        return n
    values = [sum(a for a, _ in zip(g(10 * s), range(stop))) for s in range(1, 3)]
    log.append(values)
    it = g(100)
    log.append(next(it))
    it = g(200) if stop else None
    log.append("rebound")
    if stop > 1:
        log.append(next(it))
        del it
        log.append("deleted")
    first_of(300)
    log.append("end")
    return log


def closes_lists_it_drops(stop):
    log = []

    def g(n):
        try:
            k = n
            while True:
                yield k
                k += 1
        finally:
            log.append(("finally", n))
    pair = (g(100), g(200))
    log.append(next(pair[1]))
    gens = [g(1), g(2)]
    log.append(next(gens[0]) + next(gens[1]))
    gens.append(g(3))
    log.append((next(gens[2]), len(gens)))
    gens = [g(10 * s) for s in range(stop)]  # (the list before is dropped: its last item closed first)
    for k in range(stop):
        log.append(next(gens[k]))
    log.append("rebound")
    if stop > 1:
        del pair
        log.append("deleted")
    it = g(300)
    log.append(next(it))
    log.append("end")
    return log  # (then pair, gens and it are closed, in the order they were first bound)


@pytest.mark.parametrize("case", [closes_in_a_loop, closes_what_it_drops, closes_nested_and_held, closes_lists_it_drops],
                         ids=lambda f: f.__name__)
def test_a_dropped_generator_is_closed_as_cpython_drops_it(case):
    lazy = rewritten(case)
    for stop in range(4):
        assert lazy(stop) == case(stop), stop
