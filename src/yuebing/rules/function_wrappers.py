"""Decorators called by differentiated code: a decorated nested function capturing our variables
is lowered to calls of its decorators (``frontend/closures.py: _decorators_as_calls``), which
every mode follows into what they return. Two of the standard library's need a rule:

* ``functools.update_wrapper`` (what ``functools.wraps`` calls): the wrapper itself, with its own
  derivative data (its closure holds the wrapped function, whose closure holds ours); the wrapped
  function's name, docstring and ``__wrapped__`` are copied onto it on the primal objects (names,
  not derivatives).
* ``functools.lru_cache``/``functools.cache``: the cache's wrapper made as Python makes it, with
  no derivative data of its own; a call of it is ``rules/cached_calls.py``'s business. A nested
  function of the differentiated code capturing its float data (or a variable not yet bound,
  which may come to hold some) is returned itself instead, its cache bypassed as every cached
  call a derivative reaches is (``cached_calls.py``): the wrapper C makes would carry no
  derivative of what the function captures. It gets the cache's ``cache_info``,
  ``cache_clear`` and ``cache_parameters`` (a cache that never answers); it runs at every call.

A function's attributes have no tangent of their own. A nested function read back from one
(``g.__wrapped__``) that the owner also holds in a closure cell -- the wrapper ``functools.wraps``
decorates captures the function it wraps -- gets the tangent the owner's tangent keeps for that
cell (``held_function_tangent``, asked by the ``getattr`` rules); one held nowhere else
(``cached.__wrapped__`` of a C cache) would come without the derivative of what it captures, and
is refused (``refuse_wrapped_closure``).
"""
from __future__ import annotations

import functools
import types
from typing import Any

from ..tangents import MutableTangent
from ._float_reach import holds_floats, is_label
from .cases import Case, randn
from .core import RuleArgumentError
from .declare import nondifferentiable
from .second_order import defined_as


def copy_wrapper_attributes(wrapper: Any, wrapped: Any, assigned: tuple, updated: tuple) -> None:
    """``update_wrapper``'s work, on the primal functions (no derivative: names and docstrings)."""
    functools.update_wrapper(wrapper, wrapped, assigned, updated)


def _update_wrapper(wrapper: Any, wrapped: Any, assigned: tuple = functools.WRAPPER_ASSIGNMENTS,
                    updated: tuple = functools.WRAPPER_UPDATES) -> Any:
    copy_wrapper_attributes(wrapper, wrapped, assigned, updated)
    return wrapper


def cache_function(user_function: Any, maxsize: int | None, typed: bool) -> Any:
    """``functools.lru_cache(maxsize, typed)(user_function)``, on the primal function."""
    return functools.lru_cache(maxsize, typed)(user_function)


def captures_our_floats(user_function: Any) -> bool:
    """Whether ``user_function`` is a nested function of the differentiated code whose closure
    holds float data, or a variable not bound yet (which may come to hold some)."""
    if type(user_function) is not types.FunctionType or not user_function.__closure__ \
            or not user_function.__code__.co_filename.startswith(_GENERATED):
        return False
    for cell in user_function.__closure__:
        try:
            value = cell.cell_contents
        except ValueError:  # not bound yet
            return True
        if not is_label(value):
            return True
    return False


def give_cache_attributes(user_function: Any, maxsize: Any, typed: bool) -> None:
    """The cache wrapper's methods, set on the function that stands for it (on the primal)."""
    user_function.cache_info = lambda: functools._CacheInfo(0, 0, maxsize, 0)
    user_function.cache_clear = lambda: None
    user_function.cache_parameters = lambda: {"maxsize": maxsize, "typed": typed}


def _cache_or_bypass(user_function: Any, maxsize: Any, typed: bool) -> Any:
    if captures_our_floats(user_function):
        give_cache_attributes(user_function, maxsize, typed)
        return user_function  # itself: its tangent is what it captures
    return cache_function(user_function, maxsize, typed)


def _lru_cache(maxsize: Any = 128, typed: bool = False) -> Any:
    if callable(maxsize) and isinstance(typed, bool):  # @lru_cache without parentheses
        return _cache_or_bypass(maxsize, 128, typed)
    return functools.partial(_cache_or_bypass, maxsize=maxsize, typed=typed)


_GENERATED = ("<yuebing ", "<plain forward")  # the files of the code yuebing generates


def refuse_wrapped_closure(owner: Any, name: str, value: Any) -> None:
    """``owner.name`` read from a function or another callable without a tangent of its fields
    (``g.__wrapped__``), holding a nested function of the differentiated code that captures float
    data: it would be called without the derivative of what it captures (a silent zero)."""
    if not (callable(owner) and isinstance(value, types.FunctionType) and value.__closure__
            and value.__code__.co_filename.startswith(_GENERATED)):
        return
    if isinstance(owner, type) or not holds_floats(_cell_contents(value)):
        return
    raise RuleArgumentError(
        f"getattr: yuebing cannot differentiate the nested function {value.__name__} read back from "
        f"{getattr(owner, '__name__', type(owner).__name__)}.{name}: a function's attributes carry no "
        f"derivatives, and {value.__name__} captures float data of the differentiated function. What to do: "
        f"call the decorated function itself, or keep the undecorated one in a variable of its own "
        f"(def {value.__name__}_plain(...), then {value.__name__} = decorator({value.__name__}_plain)) and call that")


def held_function_tangent(owner: Any, owner_tangent: Any, value: Any) -> Any:
    """The tangent of function ``value`` read from an attribute of function ``owner`` whose closure
    holds it too (``g.__wrapped__``, the wrapper capturing ``func``): what ``owner_tangent`` (its
    tangent or fdata, one field per free variable) keeps for that cell. None if no cell holds it."""
    if type(owner) is not types.FunctionType or not owner.__closure__ or type(value) is not types.FunctionType:
        return None
    fields = getattr(owner_tangent, "fields", None)
    if not isinstance(fields, dict):
        return None
    for name, cell in zip(owner.__code__.co_freevars, owner.__closure__):
        try:
            held = cell.cell_contents
        except ValueError:  # not bound yet
            continue
        if held is value and name in fields:
            box = fields[name]
            return box.fields.get("cell_contents") if isinstance(box, MutableTangent) else box
    return None


def _cell_contents(fn: types.FunctionType) -> list:
    held = []
    for cell in fn.__closure__ or ():
        try:
            held.append(cell.cell_contents)
        except ValueError:  # not bound yet
            continue
    return held


nondifferentiable(copy_wrapper_attributes, cache_function, captures_our_floats, give_cache_attributes)
defined_as(functools.update_wrapper, _update_wrapper)
defined_as(functools.lru_cache, _lru_cache)

def _wrapper_of(func: Any) -> Any:
    def wrapper(v: float) -> float:
        return 2.0 * func(v)
    return functools.update_wrapper(wrapper, func)


def _through_wrappers(x: float) -> float:
    def scaled(v: float) -> float:
        return v * x
    doubled = _wrapper_of(scaled)
    square = functools.lru_cache(maxsize=2)(_square)
    return doubled(x) + square(3) * x + functools.lru_cache(_square)(2) * x


def _square(n: int) -> int:
    return n * n


CASES = [
    Case(_through_wrappers, 0.7, name="functools.update_wrapper and lru_cache called on functions"),
    Case(_through_wrappers, randn(), name="functools.update_wrapper and lru_cache (random point)"),
]
