"""Third order of a ``functools.cache``/``lru_cache`` call (``rules/cached_calls.py``).

In a plain forward program (``plain_forward.py``) a cached function's call is one ``_jvp`` call,
which third order (``third_order.jvp_rule``) refused by name. Followed here as the other orders
follow it: a call no derivative can reach is answered by the cache (a constant), any other is
the wrapped function's own plain program, the cache bypassed; a cached function defined in the
differentiated code capturing its floats is refused as in every order.
"""
from __future__ import annotations

import functools
import types
from typing import Any

from ..rules.cached_calls import answered_by_cache, refuse_captured_floats
from .third_order import FOLLOWED_CALLS, _Call, _function, _python_function, _zero


def cached_call(call: _Call) -> Any:
    """The slot(s) of a cached function's call (see ``third_order.FOLLOWED_CALLS``), or None."""
    if not isinstance(call.f, functools._lru_cache_wrapper):
        return None
    refuse_captured_floats(call.f)
    values = [call.value(a) for a, _ in call.arg_slots]
    keywords = {k: call.value(a) for k, (a, _) in call.keyword_slots.items()}
    if answered_by_cache(call.f, values, keywords):
        return _zero(call)
    inner = call.f.__wrapped__
    if type(inner) is not types.FunctionType:
        return None  # a builtin function cached: refused by name (jvp_rule), as before
    call.function_slot = call.composition.add(_function(inner))
    return _python_function(call, inner)


FOLLOWED_CALLS.append(cached_call)
