"""Float state a user's callable writes while SciPy calls it (an ODE's right-hand side, an
objective, an equation, an integrand).

A rule for ``solve_ivp``, ``odeint``, ``minimize``, ``root``, ``least_squares``, ``brentq``... runs the
callable plainly inside SciPy, then differentiates the solution implicitly (or by an adjoint). What
the callable writes on the way -- a list it appends to, an attribute of an object, a ``nonlocal``
variable, an array it captures -- is written without a derivative, and calls the rule makes to
differentiate the callable write it again. Differentiated code that reads that state afterwards
would be differentiated as if nothing had been written. So (the mechanism ``quad`` brought,
``tangents/stale.py``):

- reverse mode: the slots the plain run wrote get zero fdata entries, and a nonzero cotangent
  gathered there (the differentiated code read the value) raises ``ValueError`` naming the
  callable, before the pullback differentiates it (``Written.refuse_if_read``);
- forward mode: once the rule has computed its tangents (its own calls of the callable are done),
  every written slot gets a NaN tangent, in place in the objects' tangents, so a value read from
  it has an unknown derivative, never a silent one (``Written.mark_unknown``);
- second order: as reverse mode, on the fdata of the forward-over-reverse arguments.

State without floats (a call counter, a list of iteration numbers, text written to a log) is not
tracked, and float state that is written but never read again (a history of values) costs nothing
in reverse and forward mode.
"""
from __future__ import annotations

import inspect
import os
from typing import Any, Callable, Iterable

from ..rules.core import RuleArgumentError
from ..tangents import join, rdata, stale, zero_tangent
from ..transform.codegen import user_location, user_qualname
from .split_aliases import separated

ADVICE = ("compute that value again after the call (from the solution it returns) instead of reading "
          "what the callable kept")


def _callable_name(values: Iterable) -> str:
    """The first Python callable among ``values``, as ``name (file:line)``."""
    for value in values:
        function = getattr(value, "__func__", value)
        code = getattr(function, "__code__", None)
        if code is not None:  # (a function the generated code made: named by the user's source)
            filename, line = user_location(code.co_filename, code.co_firstlineno)
            return f"{user_qualname(code.co_filename, getattr(function, '__qualname__', code.co_name))} ({filename}:{line})"
    return "the callable"


READ = "and the differentiated code reads that state afterwards"
GROWN = "and the derivative's own runs of it cannot follow the items it appended to a list"
RAISED = "and an exception it raised left SciPy's call (a handler would read that state without its derivative)"


def message(name: str, values: Iterable, why: str = READ) -> str:
    return (f"{name}: {_callable_name(values)} writes float state it reaches (an attribute, a captured list, a "
            f"nonlocal variable, an array it captures) while SciPy calls it, {why}; yuebing does not differentiate "
            f"what SciPy's calls of it write: {ADVICE}")


class Written:
    """The float leaves the primals reach, before a plain run; ``close`` finds those it wrote."""

    __slots__ = ("name", "primals", "before", "slots")

    def __init__(self, name: str, primals: tuple) -> None:
        self.name, self.primals = name, primals
        self.before = stale.snapshot(primals)
        self.slots: set = set()

    def close(self) -> "Written":
        self.slots = stale.changed_slots(self.primals, self.before)
        return self

    def appended(self) -> bool:
        """Whether a written slot is a new item of a list (or a dict's new number key)."""
        return any(slot not in self.before[0] and isinstance(slot[1], int) for slot in self.slots)

    # reverse mode
    def make_room(self, fdatas: tuple) -> None:
        """Zero fdata entries for the written slots (see ``stale.make_room``)."""
        for primal, fdata in zip(self.primals, fdatas):
            stale.make_room(primal, fdata, self.slots)

    def refuse_if_read(self, fdatas: tuple) -> None:
        """In the pullback, before it calls the callable: a cotangent gathered on a written slot."""
        if not self.slots:
            return
        full = tuple(join(f, rdata(zero_tangent(p))) for p, f in zip(self.primals, fdatas))
        if stale.carries_cotangent(self.primals, full, self.slots):
            raise ValueError(message(self.name, self.primals))

    # forward mode
    def mark_unknown(self, tangents: tuple) -> tuple:
        """The tangents with a NaN on every slot written since the snapshot (in place in mutable
        tangents, so the differentiated code reading the state later sees it)."""
        return stale.mark_changed(self.primals, tangents, self.before)


def _primals(values: tuple, part: Callable[[Any], Any]) -> tuple:
    return tuple(part(v) for v in values)


def watched_rrule(name: str, rrule: Callable) -> Callable:
    """``rrule`` (whose plain run of the callable happens before it returns) refusing, in its
    pullback, a cotangent on float state that run wrote (and, at once, an exception the callable
    raised after writing some: ``_refusing_raises``)."""
    rrule = _refusing_raises(name, rrule)

    def rrule_watching_writes(*args: Any, **kwargs: Any) -> tuple:
        args, split = separated(args)  # a callable's parts aliasing one array as different variables
        inputs = args + tuple(kwargs.values())
        written = Written(name, _primals(inputs, lambda a: a.primal))
        out, pullback = rrule(*args, **kwargs)
        split.write_back()  # (what the run wrote on an object the split copied: split_aliases.py)
        fdatas = _primals(inputs, lambda a: a.fdata)
        written.close().make_room(fdatas)

        def pullback_refusing_reads(dy: Any) -> Any:
            written.refuse_if_read(fdatas)
            return pullback(dy)

        for key in ("changes_nothing",):  # (markers the transform reads)
            if hasattr(pullback, key):
                setattr(pullback_refusing_reads, key, getattr(pullback, key))
        return out, pullback_refusing_reads

    return _named(rrule_watching_writes, rrule)


def watched_frule(name: str, frule: Callable) -> Callable:
    """``frule`` marking NaN the tangent of every float slot the callable's runs wrote."""

    def frule_watching_writes(*args: Any, **kwargs: Any) -> Any:
        inputs = args + tuple(kwargs.values())
        written = Written(name, _primals(inputs, lambda a: a.primal))
        out = _refusing_on_failure(written, frule, args, kwargs, ValueError)
        if written.close().slots:
            written.mark_unknown(_primals(inputs, lambda a: a.tangent))
        return out

    return _named(frule_watching_writes, frule)


def watched_second_order(name: str, rule: Callable, error: type) -> Callable:
    """A second-order rule ``rule(f4, args4, kwargs4) -> (out4, pullback(dy, dy_dot))`` refusing,
    in its pullback, a cotangent on float state the callable wrote (as ``watched_rrule``, on the
    arguments' fdata: the second item of each argument's 4-tuple)."""

    def second_order_watching_writes(f4: tuple, args4: tuple, kwargs4: dict) -> Any:
        inputs = args4 + tuple(kwargs4.values())
        written = Written(name, _primals(inputs, lambda a: a[0]))
        out4, pullback = _refusing_on_failure(written, rule, (f4, args4, kwargs4), {}, error)
        fdatas = _primals(inputs, lambda a: a[1])
        if written.close().appended():  # (second order's runs see the list as it was: refused now)
            raise error(message(name, written.primals, GROWN))
        written.make_room(fdatas)

        def pullback_refusing_reads(dy: Any, dy_dot: Any) -> Any:
            try:
                written.refuse_if_read(fdatas)
            except ValueError as refused:
                raise error(str(refused)) from None
            return pullback(dy, dy_dot)

        return out4, pullback_refusing_reads

    return _named(second_order_watching_writes, rule)


def _refusing_on_failure(written: Written, rule: Callable, args: tuple, kwargs: dict, error: type) -> Any:
    """``rule(*args, **kwargs)``; a failure after the callable wrote float state (an item appended to
    a list whose tangent, taken before, is now shorter) is refused by name, the failure chained; so
    is an exception the callable raised after writing it (``refuse_escaping``)."""
    try:
        return rule(*args, **kwargs)
    except Exception as failure:
        refuse_escaping(written, failure)
        if isinstance(failure, (TypeError, ValueError)) and written.close().slots:
            raise error(message(written.name, written.primals, GROWN)) from failure
        raise


def _refusing_raises(name: str, rrule: Callable) -> Callable:
    """Reverse mode's ``rrule`` refusing an exception the callable raised after writing float state."""
    def rrule_refusing_raises(*args: Any, **kwargs: Any) -> tuple:
        inputs = args + tuple(kwargs.values())
        written = Written(name, _primals(inputs, lambda a: a.primal))
        try:
            return rrule(*args, **kwargs)
        except Exception as failure:
            refuse_escaping(written, failure)
            raise

    return _named(rrule_refusing_raises, rrule)


def refuse_escaping(written: Written, failure: BaseException) -> None:
    """An exception the callable raised (not one of yuebing's, nor the rule's own failure: the
    innermost frame is outside yuebing) leaving SciPy's call after the callable wrote float state
    is refused by name, with an error a user's ``except`` clause does not take (issue 13): the
    handler would read that state with no derivative, or a tangent shorter than the list."""
    if type(failure).__module__.startswith("yuebing.") or not _raised_outside(failure):
        return
    if written.close().slots:
        raise RuleArgumentError(message(written.name, written.primals, RAISED) + "; or test for the failing "
                                "case before calling SciPy, so that the callable does not raise") from failure


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _raised_outside(failure: BaseException) -> bool:
    tb = failure.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is None or not tb.tb_frame.f_code.co_filename.startswith(_PACKAGE)


def _named(wrapper: Callable, rule: Callable) -> Callable:
    """``wrapper`` passing for ``rule`` (its signature, names and marks: docs/rules.md reads them)."""
    for attribute in ("__signature__", "__qualname__", "__name__", "__module__", "__doc__", "second_order_kind"):
        try:
            value = inspect.signature(rule) if attribute == "__signature__" else getattr(rule, attribute)
        except (AttributeError, ValueError, TypeError):
            continue
        setattr(wrapper, attribute, value)
    wrapper.__wrapped__ = rule  # type: ignore[attr-defined]
    return wrapper
