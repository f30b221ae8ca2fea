"""Helpers every entry point of the public face shares, written once: tracebacks without
yuebing's frames, ``argnums`` checks, scalar outputs and their seeds, ``has_aux`` pairs, and the
gradient of an argument from its fdata and rdata."""
from __future__ import annotations

import functools
import inspect
import os
import types
from typing import Any, Callable, Sequence

import numpy as np

from ..ir import float_errors
from ..rules.structured_values import is_read_only_structured
from ..tangents import NoRData, NoTangent, join, zero_tangent
from .recursion_advice import recursion_note

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # yuebing/


def hide_internal_frames(error: BaseException) -> BaseException:
    """Drop yuebing's own frames from a traceback, as JAX does: what remains is the user's code
    (and the generated code, named ``<yuebing reverse f #n>``). Set YUEBING_FULL_TRACEBACK=1 to
    keep everything."""
    if os.environ.get("YUEBING_FULL_TRACEBACK"):
        return error
    tb = error.__traceback__
    kept = []
    while tb is not None:
        if not os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(_PACKAGE_DIR):
            kept.append(tb)
        tb = tb.tb_next
    new_tb = None
    for frame_tb in reversed(kept):
        new_tb = types.TracebackType(new_tb, frame_tb.tb_frame, frame_tb.tb_lasti, frame_tb.tb_lineno)
    return error.with_traceback(new_tb)


def user_facing(function: Callable) -> Callable:
    """Entry points re-raise errors with yuebing's internal frames hidden."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        # the caller's np.errstate raise: for the primal only (ir/float_errors.py)
        errors = None if float_errors.current_state() is float_errors.DEFAULT else float_errors.adopt()
        try:
            return function(*args, **kwargs)
        except RecursionError as error:
            if hasattr(error, "add_note"):  # frames per level and the limit to set (recursion_advice.py)
                error.add_note(recursion_note(error))
            raise hide_internal_frames(error) from error.__cause__
        except Exception as error:
            _note_field_write(error)
            raise hide_internal_frames(error) from error.__cause__
        finally:
            if errors is not None:
                float_errors.restore(errors)

    return wrapper


@user_facing
def reraise_hidden(error: BaseException) -> None:
    """Raise ``error`` as every entry point does (``user_facing``: yuebing's frames hidden), for
    entry points that catch and pass errors here rather than being wrapped: a wrapper's frame
    costs every call, this only the failing ones."""
    raise error


def _note_field_write(error: BaseException) -> None:
    """A write into a structured array read from a global (or a field or record of one), which is
    a constant of the differentiation and so read-only (``transform/globals_and_cells.read_only``):
    say why, and what to do. The array is found among the variables of the frame where the write
    failed."""
    if not (isinstance(error, ValueError) and "read-only" in str(error) and hasattr(error, "add_note")):
        return
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is not None and any(is_read_only_structured(v) for v in tb.tb_frame.f_locals.values()):
        error.add_note(
            "yuebing does not differentiate writes into a structured array read from a global: it is a constant of "
            "the differentiation (read-only, like a global float array), so a float written into it, its fields or "
            "its records would lose its derivative. Copy it inside the function first (table = np.copy(TABLE)) "
            "or pass it as an argument")


def check_function(f: Any, name: str) -> None:
    """A clear ``TypeError`` when ``f`` is not callable: most often its value was passed
    (``yb.grad(loss(x))``) where the function is meant."""
    if callable(f):
        _check_not_async(f, name)
        return
    raise TypeError(f"{name} takes a function to differentiate, got a {type(f).__qualname__} value, which is not "
                    f"callable: pass the function itself (yb.{name}(loss, ...), not yb.{name}(loss(x), ...))")


def _check_not_async(f: Any, name: str) -> None:
    """An ``async def`` itself is refused with advice: calling it makes a coroutine, not a number."""
    if inspect.iscoroutinefunction(f) or inspect.isasyncgenfunction(f):
        short = getattr(f, "__name__", "f")
        raise TypeError(
            f"yb.{name} cannot differentiate the async function {getattr(f, '__qualname__', short)} itself: calling "
            f"it makes a coroutine, not a number. What to do: differentiate a function that runs it, such as "
            f"yb.{name}(lambda x: asyncio.run({short}(x)), ...); under differentiation asyncio.run runs it on "
            "yuebing's own event loop (docs/semantics.md, \"Async\").")


def check_argnums(argnums: Any, name: str) -> None:
    """A clear ``TypeError`` unless ``argnums`` is an int or a non-empty sequence of ints."""
    def is_int(a: Any) -> bool:
        return isinstance(a, (int, np.integer)) and not isinstance(a, bool)

    if is_int(argnums):
        return
    if isinstance(argnums, (tuple, list)) and argnums and all(is_int(a) for a in argnums):
        return
    raise TypeError(f"{name}: argnums must be an int or a tuple of ints (positions of positional arguments), got "
                    f"{argnums!r}; keyword arguments are not differentiated: pass the value positionally")


def normalise_argnums(argnums: int | Sequence[int], n_args: int, name: str) -> tuple[tuple[int, ...], bool]:
    single = isinstance(argnums, (int, np.integer))
    nums = (int(argnums),) if single else tuple(int(a) for a in argnums)
    if not nums:
        raise ValueError(f"{name}: argnums must name at least one argument")
    for a in nums:
        if not -n_args <= a < n_args:
            raise ValueError(
                f"{name}: argnums={argnums!r} is out of range for a call with {n_args} positional "
                f"argument{'s' if n_args != 1 else ''}"
            )
    return tuple(a % n_args for a in nums), single


def fname(f: Callable) -> str:
    """The name of a user's function, for messages."""
    return getattr(f, "__qualname__", None) or repr(f)


def split_aux(value: Any, name: str, f: Callable | None = None) -> tuple[Any, Any]:
    """``(value, aux)`` from a ``has_aux=True`` function's output, which must be a pair."""
    if not (isinstance(value, (tuple, list)) and len(value) == 2):
        who = fname(f) if f is not None else "the function"
        raise TypeError(f"{name}(has_aux=True): {who} must return a pair (value, aux), got {type(value).__qualname__}")
    return value[0], value[1]


def scalar_seed(value: Any, f: Callable, name: str) -> Any:
    """The cotangent 1 for a scalar output; a TypeError for anything else."""
    if isinstance(value, (float, np.floating)) and not isinstance(value, (complex, np.complexfloating)):
        return 1.0
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind == "f":
        return np.ones((), value.dtype)
    if isinstance(value, np.ndarray):
        raise TypeError(
            f"{name}: {fname(f)} must return a scalar, but returned an array of shape {value.shape} "
            f"and dtype {value.dtype}. Use yb.vjp for a vector-Jacobian product or yb.jacobian for "
            "the full Jacobian (or reduce the output, e.g. with np.sum)"
        )
    if isinstance(value, (complex, np.complexfloating)):
        raise TypeError(f"{name}: {fname(f)} returned a complex number; grad needs a real scalar output. Use yb.vjp")
    raise TypeError(
        f"{name}: {fname(f)} must return a real scalar (a float or a 0-d float array), but returned "
        f"a {type(value).__qualname__}. Use yb.vjp for other outputs"
    )


def argument_gradient(fdata: Any, rdata: Any, primal: Any) -> Any:
    """The gradient of one argument from its fdata and rdata: zero where nothing reached it (an
    unused float gets 0.0, as in JAX, not ``NoTangent``)."""
    if rdata is NoRData and type(fdata) is np.ndarray:
        return fdata  # an array argument: the common case
    return _zeros_where_unused(join(fdata, rdata), primal)


def _zeros_where_unused(g: Any, primal: Any) -> Any:
    if g is NoTangent:
        return zero_tangent(primal)
    if type(g) is tuple and type(primal) is tuple and len(g) == len(primal) \
            and any(e is NoTangent or type(e) is tuple for e in g):
        return tuple(_zeros_where_unused(e, p) for e, p in zip(g, primal))
    return g
