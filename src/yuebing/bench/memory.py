"""Peak memory of one gradient call relative to one function call (the ``yb peak mem`` column).

Counted with ``tracemalloc``: every allocation made through Python's allocators while the call
runs, NumPy's array buffers included (NumPy reports them to tracemalloc), from just before the
call until its result is released, so the returned gradient counts and the arguments, allocated
before, do not. Each callable is called once untraced first, so compiled code, caches and a
prepared gradient's buffers made on a first call are not counted. yuebing's pool of large
buffers (``transform/buffers.py``) is emptied before the traced call: buffers a call takes from
it are memory the process keeps for it, so they are allocated, and counted, in that call (kept
from the warm-up, a kron gradient read 0.09 of the function's peak). Memory that C libraries
allocate on their own (BLAS workspaces) is not seen.
"""
from __future__ import annotations

import gc
import tracemalloc
from typing import Any, Callable

from ..transform import buffers


def peak_bytes(call: Callable[[], Any]) -> int:
    """Peak traced bytes allocated during one ``call()`` (after one warm-up call)."""
    call()
    buffers.clear()
    gc.collect(1)  # the warm-up's garbage is young: a full collection of a large heap takes seconds
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = call()
        peak = tracemalloc.get_traced_memory()[1]
        del result
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return max(peak - before, 0)


def peak_ratio(gradient: Callable[[], Any], function: Callable[[], Any]) -> tuple[float, int, int]:
    """(peak bytes of ``gradient`` / peak bytes of ``function``, both peaks in bytes)."""
    gradient_peak, function_peak = peak_bytes(gradient), peak_bytes(function)
    return gradient_peak / max(function_peak, 1), gradient_peak, function_peak
