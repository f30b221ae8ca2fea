"""Forward mode's public surface (DESIGN.md §1): ``jvp`` (``jacobian``, by forward or reverse
mode, is in ``jacobians.py``; ``show_forward`` in ``show.py``).

``jvp`` runs the forward rule of ``f`` (registered, or derived from its source by
``transform/forward.py``) on duals of *copies* of the caller's arguments and tangents: forward
mode replays the function, mutations included, so the caller's arguments would otherwise be left
in their post-call state. The caller's arguments and tangents are never modified.
"""
from __future__ import annotations

import inspect
import types
from typing import Any, Callable, Sequence

import numpy as np

from .. import rules as _rules  # noqa: F401 - registers every rule
from .. import tangents as T
from ..tangents.layout import match_layouts
from ..tangents.set_keys import rekeyed
from .recursion_advice import recursion_note
from ..ir import float_errors
from .common import check_function, fname, reraise_hidden
from .argument_checks import note_shared_write, separate_arguments
from ..rules.core import Dual
from ..tangents import NoTangent
from ..tangents import kinds as K
from ..tangents.validate import validate_tangent
from .argument_checks import shared_view_tangents
from ..rules import outside_state
from ..rules.batched import BATCH
from ..rules.declare import FORWARD, has_nan
from ..transform.forward_runtime import call_frule, direct_pass as _direct_pass, give_up_speculating, \
    global_tangent, run_direct, run_derived_directly, speculative_pass
from ..transform.forward_speculative import Speculation
from ..transform import buffers as _buffers
from ..transform.forward_random import PassRecord
from .leaves import _batched_zero


def _run_forward(f: Callable, primals: tuple, tangents: tuple, kwargs: dict, name: str) -> tuple[Any, Any]:
    """``(value, tangent_out)`` of ``f`` at copies of ``primals`` along ``tangents``."""
    checked = _plain(primals, tangents)  # plain tangents are valid by construction
    if not checked:
        tangents = shared_view_tangents(primals, tangents, name)
    for i, (p, t) in enumerate(zip(primals, tangents) if not checked else ()):
        try:
            validate_tangent(p, t)
        except TypeError as error:
            raise TypeError(
                f"{name}: tangents[{i}] is not a tangent of primals[{i}] "
                f"(a {type(p).__qualname__}): {error}. A tangent has the primal's structure: a float for a "
                "float, an array of the same shape and dtype for a float array, NoTangent for ints and other "
                "non-differentiable values (yb.tangents.zero_tangent(x) shows the expected structure)"
            ) from None
    return _forward_with_strong_zero(f, primals, tangents, kwargs, name, plain=checked and not kwargs)


def _forward_with_strong_zero(f: Callable, primals: tuple, tangents: tuple, kwargs: dict, name: str,
                              plain: bool | None = None) -> tuple:
    """One plain forward pass, and a second by the strong-zero rule if the output tangent holds a
    NaN. ``plain``: whether the arguments are plain (``_plain``), if the caller checked."""
    randomness = PassRecord()  # the random states, saved lazily (transform/forward_random.py)
    try:
        value, tangent, outside = _forward_pass(f, primals, tangents, kwargs, name, strong=False, plain=plain)
    except RecursionError as error:  # frames per level and the limit to set
        error.add_note(recursion_note(error))
        raise
    finally:
        randomness.end()
    if _holds_nan(tangent):
        return _strong_zero_pass(f, primals, tangents, kwargs, name, plain, value, outside, randomness)
    return value, tangent


def _strong_zero_pass(f: Callable, primals: tuple, tangents: tuple, kwargs: dict, name: str, plain: bool | None,
                      value: Any, outside: bool, randomness: PassRecord) -> tuple:
    """The strong zero, checked once (rules/declare.py: FORWARD): the plain pass's tangent held a
    NaN, so ``f`` runs again, on fresh copies, with every product by the rule; its value must be
    the plain pass's."""
    drew_past_rules = randomness.restore()
    again, tangent, _ = _forward_pass(f, primals, tangents, kwargs, name, strong=True, plain=plain)
    if (outside or drew_past_rules) and not _same_value(value, again):
        raise ValueError(
            f"{name}: the tangent came out NaN, so yuebing ran {fname(f)} again by the strong-zero rule "
            "(docs/conventions.md), and the second run gave another value: the function changed state "
            "outside its arguments (a global list or dict, a module or class attribute, a closure made "
            "outside, a global random state drawn from outside yuebing's rules). Pass that state in as an "
            "argument, or use reverse mode (yb.grad, jacobian(mode='rev'))")
    return value, tangent


def _same_value(a: Any, b: Any) -> bool:
    """Whether two runs' outputs are equal (arrays elementwise, NaN equal to NaN)."""
    try:
        return bool(np.array_equal(np.asarray(a, dtype=object if isinstance(a, (list, tuple, dict)) else None),
                                   np.asarray(b, dtype=object if isinstance(b, (list, tuple, dict)) else None),
                                   equal_nan=not isinstance(a, (list, tuple, dict))))
    except (TypeError, ValueError):
        return a is b or a == b


def _holds_nan(t: Any) -> bool:
    """Whether a tangent holds a NaN anywhere (arrays, numbers, and containers of them)."""
    if isinstance(t, np.ndarray):
        return t.dtype.kind in "fc" and has_nan(t)
    if isinstance(t, (float, complex, np.floating, np.complexfloating)):
        return t != t
    if isinstance(t, dict):
        return any(_holds_nan(c) for c in t.values())
    if isinstance(t, (list, tuple)):
        return any(_holds_nan(c) for c in t)
    if isinstance(t, (T.Tangent, T.MutableTangent)):
        return any(_holds_nan(c) for c in t.fields.values())
    return False


def _plain(primals: tuple, tangents: tuple) -> bool:
    """Whether every argument is a Python float with a float tangent or a float ndarray owning its
    memory with a tangent array of its shape and dtype, no argument or tangent passed twice, in an
    unbatched pass: arguments whose copies need no structural walk."""
    if BATCH.size or len({id(p) for p in primals} | {id(t) for t in tangents}) != 2 * len(primals):
        return False
    for p, t in zip(primals, tangents):
        if type(p) is float:
            if type(t) is not float:
                return False
        elif not (type(p) is np.ndarray and type(t) is np.ndarray and p.base is None and p.dtype.kind == "f"
                  and t.dtype == p.dtype and t.shape == p.shape):
            return False
    return True


def _plain_copies(primals: tuple, tangents: tuple) -> list:
    """Copies of plain arguments (``_plain``) and their tangents, interleaved (primal, tangent,
    ...): what the general path's walks make of them (``structural_copy``, ``scale``,
    ``match_layouts``: new arrays, each tangent in its primal's memory order)."""
    flat: list = []
    for p, t in zip(primals, tangents):
        if type(p) is float:
            flat += (p, t)
        else:
            t_copy = np.empty_like(p)  # the primal's memory order
            t_copy[...] = t
            flat += (np.array(p, copy=True), t_copy)
    return flat


def _forward_pass(f: Callable, primals: tuple, tangents: tuple, kwargs: dict, name: str, strong: bool,
                  plain: bool | None = None) -> tuple:
    """One forward pass on fresh copies of the primals and tangents; ``strong``: every product by
    the strong-zero rule, or plainly. Returns the value, its tangent, and whether the pass reached
    outside state (``rules/outside_state.py``)."""
    if plain if plain is not None else not kwargs and _plain(primals, tangents):
        return _plain_forward_pass(f, _plain_copies(primals, tangents), strong)
    element_copies: dict = {}
    x = T.structural_copy(tuple(primals), element_copies)
    # arguments sharing float data (one array passed twice) are differentiated slot by slot, each
    # a read-only view with its own tangent (docs/conventions.md, "Arguments")
    separate = separate_arguments(x, name)
    x = x if separate is None else separate
    # a fresh tangent with the caller's aliasing, for the copy (the rules update it in place)
    dx = T.scale(tuple(tangents), 1.0) if any(t is not NoTangent for t in tangents) else (NoTangent,) * len(x)
    if dx is NoTangent:
        dx = (NoTangent,) * len(x)
    dx = match_layouts(x, dx)  # a write through a view of x reaches its tangent too (tangents/layout.py)
    dx = rekeyed(dx, element_copies)  # a set's tangent keyed by the copy's elements
    duals = [Dual(p, t) for p, t in zip(x, dx)]
    zero = _batched_zero if BATCH.size else T.zero_tangent  # a batched pass: room for writes of batched values
    kw_duals = {k: Dual(v, zero(v)) for k, v in T.structural_copy(kwargs).items()}
    scope = outside_state.enter()  # one tangent per outside object for the pass
    strength, FORWARD.strong = FORWARD.strong, strong
    try:
        out = call_frule(Dual(f, global_tangent(f)), *duals, **kw_duals)
        outside = outside_state.touched()
    except ValueError as error:
        if separate is not None:
            note_shared_write(error, name)
        raise
    finally:
        FORWARD.strong = strength
        outside_state.leave(scope)
    return out.primal, out.tangent, outside


def _plain_forward_pass(f: Callable, flat: list, strong: bool) -> tuple:
    """``_forward_pass`` on plain arguments' copies (``_plain_copies``): a plain Python function
    whose forward rule was derived before runs its generated code directly
    (``forward_runtime.run_derived_directly``), anything else through dispatch."""
    scope = outside_state.enter()  # one tangent per outside object for the pass
    strength, FORWARD.strong = FORWARD.strong, strong
    try:
        result = run_derived_directly(f, flat)
        if result is None:
            out = call_frule(Dual(f, global_tangent(f)), *(Dual(p, t) for p, t in zip(flat[::2], flat[1::2])))
            result = out.primal, out.tangent
        outside = outside_state.touched()
    finally:
        FORWARD.strong = strength
        outside_state.leave(scope)
    return result[0], result[1], outside


def _copies_if_plain(primals: tuple, tangents: tuple) -> list | None:
    """``_plain_copies(primals, tangents)`` if the arguments are plain (``_plain``), else None:
    both in one walk, for the direct path of ``jvp``."""
    flat: list = []
    ids = set()
    for p, t in zip(primals, tangents):
        kind = type(p)
        if kind is float:
            if type(t) is not float:
                return None
            flat += (p, t)
        elif kind is np.ndarray and type(t) is np.ndarray and p.base is None and p.dtype.kind == "f" \
                and t.dtype == p.dtype and t.shape == p.shape:
            # a tangent laid out as its primal (tangents/layout.py): a plain copy when the strides agree
            t_copy = _copy(t) if t.strides == p.strides else _copy_in_layout(t, p)
            flat += (_copy(p), t_copy)
        else:
            return None
        ids.add(id(p))
        ids.add(id(t))
    return flat if len(ids) == len(flat) else None  # an argument or tangent passed twice: the general path


def _copy(a: np.ndarray) -> np.ndarray:
    """A copy of array ``a`` in its memory order; a large C-ordered one in a recycled buffer
    (``transform/buffers.py``: a fresh one costs more in page faults than the copy itself), which
    the sweep at the end of the call takes back once nothing refers to it."""
    if a.size >= _buffers.MIN_SIZE and a.flags.c_contiguous:
        buffer = _buffers.scratch(a)
        np.copyto(buffer, a)
        return buffer
    return a.copy() if a.flags.c_contiguous else a.copy(order="K")  # (a keyword costs a tenth of a small copy)


def _copy_in_layout(t: np.ndarray, p: np.ndarray) -> np.ndarray:
    """A copy of tangent ``t`` in primal ``p``'s memory order."""
    t_copy = np.empty_like(p)
    t_copy[...] = t
    return t_copy


def _direct_jvp(direct: Callable, f: Callable, primals: tuple, tangents: tuple) -> tuple | None:
    """``jvp`` of a plain function whose forward code was generated before, on copies of plain
    arguments (``_copies_if_plain``; None for others): ``_forward_with_strong_zero`` and
    ``_plain_forward_pass`` in one frame, the code run directly (``run_derived_directly``)."""
    flat = _copies_if_plain(primals, tangents)
    if flat is None:
        return None
    randomness = PassRecord()  # the random states, saved lazily (transform/forward_random.py)
    scope = outside_state.enter()  # one tangent per outside object for the pass
    strength, FORWARD.strong = FORWARD.strong, False
    try:
        value, tangent = run_direct(direct, f, flat)
        outside = outside_state.touched()
    except RecursionError as error:  # frames per level and the limit to set
        error.add_note(recursion_note(error))
        raise
    finally:
        FORWARD.strong = strength
        outside_state.leave(scope)
        randomness.end()
        flat = None  # the copies: recycled below unless the output holds them
        if _buffers.lent():
            _buffers.sweep()
    if type(tangent) is float and tangent == tangent or not _holds_nan(tangent):
        return value, tangent
    return _strong_zero_pass(f, primals, tangents, {}, "jvp", True, value, outside, randomness)


_F64 = np.dtype(np.float64)


def _speculate(program: Callable, f: Callable, primals: tuple, tangents: tuple) -> tuple | None:
    """``jvp`` by ``f``'s speculative program (``transform/forward_speculative.py``) on the
    caller's own float64 arrays and floats: no copies, no records, as the program changes nothing
    (it stops where the function would do more than compute values). None (the ordinary path
    runs) for other arguments, when it stopped or raised, for a tangent holding a NaN (the
    strong-zero pass), and for outputs other than a float or a float64 array or sharing memory
    with an argument or tangent (a JVP's outputs are never the caller's arrays); a stop and such
    outputs end ``f``'s speculation (``give_up_speculating``)."""
    flat: list = []
    for p, t in zip(primals, tangents):
        kind = type(p)
        if kind is np.ndarray:
            if type(t) is not np.ndarray or p.dtype is not _F64 or t.dtype is not _F64 or t.shape != p.shape:
                return None
        elif kind is not float or type(t) is not float:
            return None
        flat.append(p)
        flat.append(t)
    try:
        value, tangent = program(f, NoTangent, *flat)  # (a plain pass: it reads no FORWARD.strong)
    except Speculation:
        give_up_speculating(f)
        return None
    except Exception:  # noqa: BLE001 - the ordinary path raises it, with its notes
        return None
    if type(value) not in _SPECULATED_VALUES or type(tangent) not in _SPECULATED_TANGENTS \
            or type(value) is np.ndarray and _shares_memory(value, flat) \
            or type(tangent) is np.ndarray and _shares_memory(tangent, flat):
        give_up_speculating(f)  # (outputs of other kinds, or the caller's memory: each time, likely)
        return None
    if tangent != tangent if type(tangent) is float else has_nan(tangent):
        return None  # the strong-zero pass
    return value, tangent


_SPECULATED_VALUES = frozenset({float, np.float64, np.ndarray})
_SPECULATED_TANGENTS = frozenset({float, np.ndarray})


def _shares_memory(a: np.ndarray, arguments: list) -> bool:
    return any(type(b) is np.ndarray and np.may_share_memory(a, b) for b in arguments)


_ASYNC_FLAGS = inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE


def jvp(f: Callable, primals: Sequence[Any], tangents: Sequence[Any], has_aux: bool = False) -> tuple:
    """Jacobian-vector product by forward mode, as JAX's ``jvp``: ``(value, tangent_out)``, or
    ``(value, tangent_out, aux)`` with ``has_aux`` (``f`` then returns ``(value, aux)``).

    ``primals`` and ``tangents`` are tuples (or lists) of the same length, one tangent per
    positional argument, each with its primal's structure (``NoTangent`` for ints). The caller's
    arguments are not modified, even when ``f`` mutates them.
    """
    # the caller's np.errstate raise: for the primal only (ir/float_errors.py)
    errors = None if float_errors.current_state() is float_errors.DEFAULT else float_errors.adopt()
    try:
        if type(f) is not types.FunctionType or f.__code__.co_flags & _ASYNC_FLAGS:  # (a plain function: no walk)
            check_function(f, "jvp")
        elif not has_aux and type(primals) is tuple and type(tangents) is tuple and len(primals) == len(tangents):
            direct = _direct_pass(f, len(primals))  # its generated forward code, derived at an earlier call
            if direct is not None and not BATCH.size:
                program = speculative_pass(f)
                result = None if program is None else _speculate(program, f, primals, tangents)
                if result is not None:
                    return result
                result = _direct_jvp(direct, f, primals, tangents)
                if result is not None:
                    return result
        if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
            raise TypeError(
                "jvp: primals and tangents must be tuples (or lists) of positional arguments, got "
                f"{type(primals).__qualname__} and {type(tangents).__qualname__}; for one argument write "
                "jvp(f, (x,), (dx,))"
            )
        if len(primals) != len(tangents):
            raise TypeError(f"jvp: got {len(primals)} primals but {len(tangents)} tangents; give one tangent per argument")
        value, tangent = _run_forward(f, tuple(primals), tuple(tangents), {}, "jvp")
        if has_aux:
            if not (isinstance(value, (tuple, list)) and len(value) == 2):
                raise TypeError(f"jvp(has_aux=True): {fname(f)} must return a pair (value, aux), got {type(value).__qualname__}")
            parts = tangent if isinstance(tangent, (tuple, list)) else (NoTangent, NoTangent)
            return value[0], parts[0], value[1]
        return value, tangent
    except Exception as error:  # (a try costs nothing until it catches; a wrapper, every call)
        reraise_hidden(error)
    finally:
        if errors is not None:
            float_errors.restore(errors)


__all__ = ["jvp"]
