"""``functools.singledispatch`` functions and ``singledispatchmethod`` methods: the call is followed into the implementation the
registry picks for the first argument's class, which is looked up as a plain call. The lookup
takes a class and gives a function (no derivative either way), while differentiating the
dispatcher itself would walk its ``WeakKeyDictionary`` cache and the ``KeyError`` it catches.

A ``singledispatchmethod`` read from an instance (``s.apply``) is a function ``__get__`` makes,
holding the instance in its closure: the ``getattr`` rules give it the instance's derivative data
as a bound method's (``dispatch_method_owner`` tells them), and the call runs the implementation
bound to the instance with that data (``protocols.dispatch``), so an instance holding float data
is differentiated like any method's ``self``."""
from __future__ import annotations

import functools
from typing import Any, Callable

from ._dispatch_methods import METHOD_CODE, dispatch_method_owner
from ._float_reach import holds_floats
from .cached_calls import GENERATED_FILES
from .core import RuleArgumentError


@functools.singledispatch
def _probe(arg: Any) -> None:
    """A singledispatch function, for the code object every one of them shares."""


_WRAPPER_CODE = _probe.__code__  # functools' ``wrapper(*args, **kw)``, shared by every singledispatch function


def singledispatch_implementation(fn: Any, first: Any) -> Callable | None:
    """The implementation singledispatch function (or method read from its instance) ``fn``
    calls for first argument ``first`` (a primal), or None when ``fn`` is neither. Refused where
    the pick would hold what carries derivatives as a constant: an implementation defined in the
    differentiated function (its captured variables)."""
    code = getattr(fn, "__code__", None)
    if code is _WRAPPER_CODE and hasattr(fn, "dispatch"):
        chosen = fn.dispatch(first.__class__)
    elif code is METHOD_CODE:  # its closure: the singledispatchmethod and what __get__ was given
        cells = dict(zip(code.co_freevars, (c.cell_contents for c in fn.__closure__)))
        chosen = cells["self"].dispatcher.dispatch(first.__class__).__get__(cells["obj"], cells["cls"])
    else:
        return None
    defined_in = getattr(getattr(chosen, "__func__", chosen), "__code__", None)
    if defined_in is not None and defined_in.co_filename.startswith(GENERATED_FILES):
        raise _refusal(fn, "an implementation registered in the differentiated function (what it captures "
                           "would be held constant)")
    return chosen


def bound_implementation(fn: Any, chosen: Any) -> bool:
    """Whether ``chosen`` is the implementation of singledispatchmethod ``fn`` bound to an instance
    holding float data: called with ``fn``'s derivative data (its instance's), not as a constant."""
    owner = dispatch_method_owner(fn)
    return owner is not None and getattr(chosen, "__self__", None) is owner and holds_floats([owner])


def _refusal(fn: Any, what: str) -> RuleArgumentError:
    name = getattr(fn, "__qualname__", "the function")
    name = getattr(fn, "__name__", name) if ".<locals>." in name else name  # (generated code's own qualname)
    return RuleArgumentError(
        f"{name}: yuebing cannot differentiate {what}. What to do: dispatch with isinstance in a plain "
        "function or method, or register module-level implementations that take the instance or the "
        "captured values as arguments")
