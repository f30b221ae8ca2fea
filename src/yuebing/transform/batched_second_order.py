"""Batched second order: forward-over-reverse carrying B tangent directions per pass, so one
pass gives B Hessian-vector products (issue 16 item 3; ``api/batched_hessian.py`` seeds it).

In a batched pass (``rules.batched.BATCH.size`` is B >= 2) the primal program, its fdata and its
rdata run once; every *tangent* part -- the tangent of a value (``v_d``), of its fdata
(``v_fd``) and of its rdata (``v_rd``) -- carries B directions on a leading axis, as in batched
forward mode (``rules/batched.py``): a float's is a 1-D array of length B, an array's
``(B,) + shape``. A tangent without the batch axis is zero in every direction. Generated dual
code needs nothing new: its inline templates check that tangents are floats (or unbatched
arrays) and step aside otherwise, and ``_acc`` adds arrays.

``run_rule`` is what ``second_order._run_rule`` does with a primitive in a batched pass:

1. no argument's tangent or fdata tangent has the batch axis (the arguments are constants of
   the pass), or the rule has a zero derivative: the rule as usual, unbatched, and its pullback
   gives the arguments no cotangent tangent; a new buffer (``np.zeros`` and friends) gets batched
   zeros as tangent and fdata tangent (room for the batched writes that follow);
2. the rule's batch-aware version (``batched_second_order_rules.py``: elementwise functions and
   operators, ``@``/``dot``, sums, basic indexing, reshapes), unless it declines;
3. a rule that only moves tangents (list, dict and attribute operations,
   ``rules.batched.structural_rule``): as it is;
4. otherwise **the looped fallback**: the unbatched rule once per direction, on direction j's
   slice of every tangent and fdata tangent (views: in-place work lands in the batch) and, for
   j >= 1, on copies of the primals and fdata (the real ones are changed once, by the last run);
   the outputs' tangents are stacked, and the pullback runs each direction's pullback on its slice
   of the cotangent tangent, the copies' fdata first brought to the real fdata's values. The
   first-order results (fdata, rdata) are the real run's.

A ``special`` rule (a solver's, a quadrature's, an ODE's second order: pullbacks that route
cotangent tangents through state the slices do not reach) and the call on numbers past
``NUMBER_CALLS_PER_PASS`` (scalar code, faster one column per pass) raise ``Unbatched``, and so
does what the fallback cannot slice (a tangent of a kind of its own, a container tangent changed in
place); the Hessian then computes its columns one pass each
(``api/batched_hessian.py``), so nothing is ever approximated.
"""
from __future__ import annotations

import contextlib
import random
import threading
import types
from typing import Any, Callable, Iterator

import numpy as np

from ..ir import primitives as P
from ..rules import outside_state
from ..rules.batched import BATCH, batched, batched_zeros, is_batched, structural_rule
from ..rules.core import describe_callable
from ..tangents import MutableTangent, NoFData, NoRData, NoTangent, Tangent
from ..tangents import structural_copy
from .batched_forward import _CONTAINERS, _children, _may_draw, _Slicer
from .batched_second_order_rules import batch_aware_rule
from .lifting import _method_rdata, unbound_method


class Unbatched(Exception):
    """A call a batched second-order pass cannot carry; the Hessian's columns are then computed
    one pass each. (Raised inside the pass; never reaches the user.)"""


_EMPTY = (NoTangent, NoFData, NoRData)
_NUMBERS = (float, int, complex, bool)


def _empty(value: Any) -> bool:
    return value is NoTangent or value is NoFData or value is NoRData


def run_rule(found: tuple, f: tuple, args: tuple, kwargs: dict, run: Callable) -> tuple:
    """Primitive rule ``found`` (``(rule, owner)``) of ``f`` on 4-tuples with batched tangent
    parts; ``run(found, f, args, kwargs)`` runs it unbatched (the array_like boundary included)."""
    rule, owner = found
    if owner is not None:  # a bound builtin method: the unbound one, its owner first
        return _unbound_call(rule, owner, f, args, kwargs, run)
    if isinstance(f[0], _FUNCTIONS) and f[0] in _REBINDINGS:  # (a dropped pass puts what they rebind back: api/outside_snapshot.py)
        _REBINDINGS[f[0]](*(a[0] for a in args[:2]))
    if f[0] in _GLOBALS:  # their rules check the batch themselves (global_writes.py: Unbatched)
        return run(found, f, args, kwargs)
    if getattr(rule, "second_order_kind", None) == "zero" or not _any_batched(f, args, kwargs):
        return _constant_call(found, f, args, kwargs, run)
    if f[0] is setattr and isinstance(args[0][0], type):  # a class holds one tangent (rules/local_classes.py)
        raise Unbatched("a value carrying a derivative written on a class")
    if getattr(rule, "second_order_kind", None) == "python":  # a Python definition (map, itertools,
        # scipy.stats' methods): differentiated like user code, so batched like it; the looped
        # fallback lost every direction but the first of the cotangent tangents its calls routed
        return run(found, f, args, kwargs)
    if getattr(rule, "runs_definition", None) is not None and rule.runs_definition(args, kwargs):
        return run(found, f, args, kwargs)  # a key or comparisons that change data: sorted's definition
    _count_number_call(args)
    if getattr(rule, "second_order_kind", None) == "special":  # solvers, quadrature, ODEs, interop: their
        # pullbacks route cotangent tangents through state the looped fallback does not slice
        raise Unbatched(f"{describe_callable(f[0])} has no batched second-order rule")
    aware = batch_aware_rule(rule, f[0])
    if aware is not None:
        out = aware(f, args, kwargs)
        if out is not None:
            return out
    if structural_rule(f[0], tuple(_Primal(a[0]) for a in args)) and (
            not any(_batched_number(a[0], a[2]) for a in (*args, *kwargs.values())) or _method_read(f[0], args)):
        return run(found, f, args, kwargs)
    return looped(found, f, args, kwargs, run)


_GLOBALS = (P.global_get, P.global_set, P.global_del)

#: calls that rebind a name outside the values a pass reads: the global, the cell or the attribute
#: each rebinds, noted before the call
_REBINDINGS = {P.global_set: lambda fn, name: outside_state.note_write(fn.__globals__, name),
               P.global_del: lambda fn, name: outside_state.note_write(fn.__globals__, name),
               P.cell_set: lambda cell, value: outside_state.note_write(cell),
               setattr: outside_state.note_write, delattr: outside_state.note_write}
_FUNCTIONS = (types.FunctionType, types.BuiltinFunctionType)

#: calls on numbers a batched pass runs before it gives up: one pass per column runs them as
#: inline float code, about a hundred times faster than a rule call on batched tangents, so
#: scalar code (a loop over elements, a chain of math calls) is faster one column per pass
NUMBER_CALLS_PER_PASS = 32


class _NumberCalls(threading.local):
    count = 0


NUMBER_CALLS = _NumberCalls()


def start_pass() -> None:
    """Called before each batched pass: its count of calls on numbers starts at zero."""
    NUMBER_CALLS.count = 0


def _count_number_call(args: tuple) -> None:
    if any(type(a[0]) is np.ndarray and a[0].size > 1 for a in args):
        return
    NUMBER_CALLS.count += 1
    if NUMBER_CALLS.count > NUMBER_CALLS_PER_PASS:
        raise Unbatched(f"scalar code (over {NUMBER_CALLS_PER_PASS} calls on numbers): one pass per column is faster")


class _Primal:
    """What ``structural_rule`` reads of an argument: its primal."""

    __slots__ = ("primal",)

    def __init__(self, primal: Any) -> None:
        self.primal = primal


def _unbound_call(rule: Callable, owner: Any, f: tuple, args: tuple, kwargs: dict, run: Callable) -> tuple:
    self4 = (owner, getattr(f[1], "__self__", NoFData), getattr(f[2], "__self__", NoTangent),
             getattr(f[3], "__self__", NoFData))
    unbound = unbound_method(f[0], owner)
    out, pullback = run_rule((rule, None), (unbound, NoFData, NoTangent, NoFData), (self4,) + args, kwargs, run)

    def method_pullback(dy: Any, dy_d: Any) -> tuple:
        rs, rsd = pullback(dy, dy_d)
        return (_method_rdata(rs[1]),) + tuple(rs[2:]), (_method_rdata(rsd[1]),) + tuple(rsd[2:])

    return out, method_pullback


# --------------------------------------------------------------------------------------------
# Which parts carry the batch
# --------------------------------------------------------------------------------------------


def has_batch(t: Any, p: Any, seen: set | None = None) -> bool:
    """Whether tangent (or fdata tangent) ``t`` of primal ``p`` holds a leaf with the batch axis
    (a tangent object of a kind of its own counts: the careful path)."""
    if t is NoTangent or t is NoFData or t is NoRData or type(t) in _NUMBERS or t is None:
        return False
    seen = set() if seen is None else seen
    if id(t) in seen:
        return False
    seen.add(id(t))
    if isinstance(p, types.CellType):  # a closure's captured cell: what it holds
        try:
            p = p.cell_contents
        except ValueError:
            p = None
    if type(t) is np.ndarray:
        return not isinstance(p, (np.ndarray, np.generic, float, complex)) or is_batched(t, p)
    if type(t).__name__ == "CellTangent":  # (second_order.py) the tangent of a cell's contents
        return has_batch(t.value, p, seen)
    if not isinstance(t, _CONTAINERS):
        return True
    return any(has_batch(c, cp, seen) for c, cp in _children(t, p))


def _any_batched(f: tuple, args: tuple, kwargs: dict) -> bool:
    seen: set = set()
    return any(has_batch(a[2], a[0], seen) or has_batch(a[3], a[0], seen) for a in (f, *args, *kwargs.values()))


def _method_read(fn: Any, args: tuple) -> bool:
    """``xs.append`` read off a list, dict or array: its tangent is the method bound to the owner's
    tangent, whatever the owner holds."""
    if fn is not getattr or len(args) != 2 or not isinstance(args[1][0], str):
        return False
    value = getattr(args[0][0], args[1][0], None)
    return isinstance(value, types.BuiltinMethodType) and value.__self__ is args[0][0]


def _batched_number(p: Any, t: Any, depth: int = 0) -> bool:
    """Whether ``p`` is, or holds, a number whose tangent has the batch axis: the first-order
    rules of containers keep a number's cotangent in its slot as a number and an array's in the
    array's fdata, so a rule that moves values must not see a number's batched tangent (an array)."""
    if isinstance(p, (float, complex, np.floating, np.complexfloating)):
        return type(t) is np.ndarray and t.ndim == 1
    if depth > 8 or t is NoTangent:
        return False
    if isinstance(p, (list, tuple)) and isinstance(t, (list, tuple)) and len(p) == len(t):  # (namedtuples too)
        return any(_batched_number(e, u, depth + 1) for e, u in zip(p, t))
    if isinstance(p, dict) and isinstance(t, dict):
        return any(_batched_number(p[key], u, depth + 1) for key, u in t.items() if key in p)
    if isinstance(p, (set, frozenset)) and isinstance(t, dict):  # a SetTangent: element -> its tangent
        return any(_batched_number(e, u, depth + 1) for e, u in t.items())
    if isinstance(t, (Tangent, MutableTangent)):
        return any(_batched_number(_field_of(p, name), u, depth + 1) for name, u in t.fields.items())
    if type(t).__name__ == "CellTangent" and hasattr(p, "cell_contents"):  # a closure cell's (second_order.py)
        try:
            return _batched_number(p.cell_contents, t.value, depth + 1)
        except ValueError:  # an empty cell
            return False
    return False


def _field_of(p: Any, name: Any) -> Any:
    try:
        return getattr(p, name, None) if isinstance(name, str) else None
    except Exception:  # noqa: BLE001 - a property that raises
        return None


def _constant_call(found: tuple, f: tuple, args: tuple, kwargs: dict, run: Callable) -> tuple:
    """A call on constants of the pass: unbatched, its fresh array outputs given batched zero
    tangents; no cotangent tangent goes back (its arguments do not depend on the directions)."""
    with batched(0):
        out, pullback = run(found, f, args, kwargs)
    y, _, t, ft = out
    if f[0] in _BUFFERS:
        inputs = [a[k] for a in args for k in (0, 2, 3) if type(a[k]) is np.ndarray]
        t, ft = _widened(t, y, inputs), _widened(ft, y, inputs)
    n = 1 + len(args) + len(kwargs)

    def constant_pullback(dy: Any, dy_d: Any) -> tuple:
        with batched(0):
            rs, _ = pullback(dy, NoRData)
        return rs, (NoRData,) * n

    return (y, out[1], t, ft), constant_pullback


#: array constructors whose results are buffers that code writes into (``z = np.zeros(n)``, then
#: ``z[i] = ...``; ``u = u0.copy()``, then ``u += ...``): their tangent parts are batched zeros
#: from the start. Other results of constant
#: calls keep unbatched tangents, so that calls on constants stay unbatched; a batched write into
#: one is refused (``Unbatched``: the Hessian's columns are then computed one pass each).
_BUFFERS = {np.zeros, np.empty, np.ones, np.full, np.zeros_like, np.empty_like, np.ones_like, np.full_like,
            np.copy, np.ndarray.copy, np.array}


def _widened(t: Any, y: Any, inputs: list) -> Any:
    """A fresh float array tangent of ``y`` as batched zeros (it is zero); anything else as it is."""
    if type(t) is not np.ndarray or type(y) is not np.ndarray or t.shape != y.shape or t.dtype.kind not in "fc":
        return t
    if not t.flags.writeable or any(np.may_share_memory(t, a) for a in inputs):
        return t  # an input's (or a view of one): a batched write into it is refused later
    return batched_zeros(y, BATCH.size, t.dtype)


# --------------------------------------------------------------------------------------------
# The looped fallback
# --------------------------------------------------------------------------------------------


def looped(found: tuple, f: tuple, args: tuple, kwargs: dict, run: Callable) -> tuple:
    """The unbatched rule once per direction (see the module docstring)."""
    k = BATCH.size
    slicer = _Slicer(k)
    names = list(kwargs)
    given = [f, *args, *(kwargs[n] for n in names)]
    d_slices = [_slices(slicer, a[2], a[0]) for a in given]  # (an unbatched list too: each run its own)
    fd_slicer = _Slicer(k)  # the fdata tangents' own: their containers are written back after the pullbacks
    fd_slices = [_fdata_tangent_slices(fd_slicer, a) for a in given]
    real = [(a[0], a[1]) for a in given]
    copies = [_copied(real) for _ in range(k - 1)]
    draws = _may_draw(f[0])
    states = (np.random.get_state(), random.getstate()) if draws else None
    runs: list = [None] * k
    with batched(0), _refused_writes():
        for j in list(range(1, k)) + [0]:  # the real primals last: they are changed once
            parts = real if j == 0 else copies[j - 1]
            if draws:  # every run draws the same numbers
                np.random.set_state(states[0])
                random.setstate(states[1])
            fours = [(p, fd, d[j], ft[j]) for (p, fd), d, ft in zip(parts, d_slices, fd_slices)]
            runs[j] = run(found, fours[0], tuple(fours[1:1 + len(args)]), dict(zip(names, fours[1 + len(args):])))
    _rebuild(slicer)
    _rebuild(fd_slicer)  # (a list's fdata tangent grows with it: append's tangent call)
    outs = [o for o, _ in runs]
    y, y_f = outs[0][0], outs[0][1]
    y_d = _stacked(slicer, [o[2] for o in outs], y)
    y_fd = _stacked(fd_slicer, [o[3] for o in outs], y)  # a view of an argument's: a view of its batched one
    _check_views(f[0], y, y_d, args)
    return (y, y_f, y_d, y_fd), _looped_pullback(fd_slicer, runs, real, copies, y_fd, f[0])


def _looped_pullback(fd_slicer: _Slicer, runs: list, real: list, copies: list, y_fd: Any, fn: Any) -> Callable:
    k = len(runs)

    def pullback(dy: Any, dy_d: Any) -> tuple:
        dy_slices = _slices(_Slicer(k), dy_d, runs[0][0][0])
        results: list = [None] * k
        with batched(0), _refused_writes():
            for j in range(1, k):  # the copies' fdata: the real fdata's values now, before any pullback
                for (_, fd), (_, fd_copy) in zip(real, copies[j - 1]):
                    _sync(fd, fd_copy)
                _sync(runs[0][0][1], runs[j][0][1])
            for j in list(range(1, k)) + [0]:  # the real run last: its pullback consumes the real fdata
                out, run_pullback = runs[j]
                _sync_slice(y_fd, j, out[3])
                _refresh(fd_slicer, j)
                results[j] = run_pullback(dy, dy_slices[j])
        _rebuild(fd_slicer)
        rs = results[0][0]
        primals = [None] + [part[0] for part in real[1:]]
        return rs, tuple(_stacked_rdata([r[1][i] for r in results], p) for i, p in enumerate(primals))

    return pullback


def _refresh(slicer: _Slicer, j: int) -> None:
    """Direction j's slices of list, dict and object fdata tangents, their number slots brought
    to the batched slots' values now (other calls' pullbacks have added to them since slicing)."""
    k = slicer.k
    for shell, _ in slicer.containers:
        origin, direction = slicer.origin[id(shell)]
        if direction != j:
            continue
        for key, value in _entries(shell):
            fresh = _refreshed(value, _entry(origin, key), j, k)
            if fresh is not value:
                _set_entry(shell, key, fresh)


def _refreshed(value: Any, slot: Any, j: int, k: int, depth: int = 0) -> Any:
    """Slice ``value`` of batched slot ``slot`` with its numbers brought to direction j's values:
    a number slot, and the numbers inside a value slot (a frozen object's ``Tangent``, a tuple),
    which a pullback replaces rather than adds into (a read of ``cs[0]`` lost another's)."""
    if isinstance(value, (float, complex)):
        return type(value)(slot[j]) if type(slot) is np.ndarray and slot.shape == (k,) else value
    if depth > 8:
        return value
    if type(value) is Tangent and type(slot) is Tangent:
        fields = {name: _refreshed(v, slot.fields.get(name), j, k, depth + 1) for name, v in value.fields.items()}
        changed = any(fields[name] is not v for name, v in value.fields.items())
        return Tangent(value.primal_type, fields) if changed else value
    if isinstance(value, tuple) and type(slot) is type(value) and len(slot) == len(value):
        parts = [_refreshed(v, b, j, k, depth + 1) for v, b in zip(value, slot)]
        if all(n is o for n, o in zip(parts, value)):
            return value
        return tuple(parts) if type(value) is tuple else tuple.__new__(type(value), parts)
    return value


def _rebuild(slicer: _Slicer) -> None:
    """Carry back what the runs did to sliced lists, dicts and objects (a tangent list appended
    to, a number slot of an fdata tangent accumulated into): each batched container gets, entry by
    entry, the stack of its direction slices' entries (the batched entry itself where every
    direction kept its slice; a new array of numbers for a number slot). Slices whose keys differ
    between directions cannot be stacked: ``Unbatched``."""
    groups: dict = {}
    for shell, _ in slicer.containers:
        origin, j = slicer.origin[id(shell)]
        groups.setdefault(id(origin), (origin, [None] * slicer.k))[1][j] = shell
    for origin, shells in groups.values():
        if any(shell is None for shell in shells):
            continue
        keys = [key for key, _ in _entries(shells[0])]
        if any([key for key, _ in _entries(shell)] != keys for shell in shells):
            raise Unbatched("a looped call changed a container differently in different directions")
        entries = [(key, _stacked_entry(slicer, [_entry(shell, key) for shell in shells], _entry(origin, key)))
                   for key in keys]
        _assign(origin, entries)


def _stacked_entry(slicer: _Slicer, parts: list, before: Any) -> Any:
    memo = slicer.memo.get(id(before)) if before is not None else None
    if memo is not None and all(p is m for p, m in zip(parts, memo)):
        return before  # every direction kept its slice of the batched entry
    if all(isinstance(p, (float, complex, np.floating, np.complexfloating)) for p in parts):
        return np.array(parts)  # a number slot: a new array (the old one may be shared)
    return _stacked(slicer, parts, None)


def _assign(origin: Any, entries: list) -> None:
    if isinstance(origin, list):
        origin[:] = [value for _, value in entries]
    elif isinstance(origin, dict):
        origin.clear()
        origin.update(entries)
    elif isinstance(origin, (Tangent, MutableTangent)):
        origin.fields.clear()
        origin.fields.update(entries)
    else:
        raise Unbatched(f"a looped call changed a {type(origin).__qualname__} slice")


def _entries(container: Any) -> list:
    if isinstance(container, list):
        return list(enumerate(container))
    if isinstance(container, dict):
        return list(container.items())
    return list(container.fields.items())


def _entry(container: Any, key: Any) -> Any:
    if isinstance(container, (list, tuple)):
        return container[key] if key < len(container) else None
    if isinstance(container, dict):
        return container.get(key)
    return container.fields.get(key)


def _set_entry(container: Any, key: Any, value: Any) -> None:
    if isinstance(container, (list, dict)):
        container[key] = value
    else:
        container.fields[key] = value


def _slices(slicer: _Slicer, t: Any, p: Any) -> list:
    """Direction j's part of tangent ``t`` of ``p``, for each j (an unbatched or empty one: itself)."""
    if t is NoFData or t is NoRData or t is NoTangent or t is None or isinstance(t, _NUMBERS + (np.generic,)):
        return [t] * slicer.k
    if type(t) is np.ndarray and type(p) in (float, complex) and t.shape == (slicer.k,):
        return [float(v) if type(p) is float else complex(v) for v in t]
    if isinstance(t, (types.BuiltinMethodType, types.MethodType)):
        raise Unbatched(f"a bound method's tangent reached {describe_callable(p)}")
    if type(t) is tuple and any(_empty(item) for item in t):  # a tuple's rdata tangent (x, y = pair)
        parts = p if type(p) is tuple and len(p) == len(t) else (None,) * len(t)
        return list(zip(*(_slices(slicer, item, part) for item, part in zip(t, parts))))
    try:
        return slicer.slices(t, p)
    except NotImplementedError as error:
        raise Unbatched(str(error)) from None


def _fdata_tangent_slices(slicer: _Slicer, a: tuple) -> list:
    """Direction j's part of argument ``a``'s fdata tangent; for a constant of the pass (an array
    whose tangent and fdata tangent lack the batch axis) one scratch array for every direction:
    what its pullback gathers there goes nowhere (``batched_second_order_rules._into``)."""
    p, t, fd = a[0], a[2], a[3]
    if type(fd) is np.ndarray and type(p) is np.ndarray and not is_batched(fd, p) and not is_batched(t, p):
        return [np.zeros_like(fd)] * slicer.k
    return _slices(slicer, fd, p)


@contextlib.contextmanager
def _refused_writes() -> Iterator[None]:
    """A run that wrote into a tangent without the batch axis (a constant's, handed to every
    direction read-only): ``Unbatched``."""
    try:
        yield
    except (ValueError, TypeError) as error:  # (a linear rule reports the write as a SecondOrderError)
        if "read-only" in str(error):
            raise Unbatched(f"a write into the tangent of a constant of the pass ({error})") from None
        raise


def _copied(real: list) -> list:
    """A copy of the call's primals and fdata, taken as one structure (aliasing kept)."""
    arrays = [v for pair in real for v in pair if type(v) is np.ndarray]
    simple = all(type(v) is np.ndarray or v is NoFData or isinstance(v, (_NUMBERS, str, type(None), np.generic))
                 or callable(v) and not isinstance(v, (list, dict)) and not hasattr(v, "__dict__")
                 for pair in real for v in pair)
    if simple and not any(np.may_share_memory(a, b) for i, a in enumerate(arrays) for b in arrays[i + 1:]):
        return [tuple(v.copy() if type(v) is np.ndarray else v for v in pair) for pair in real]
    try:
        return [tuple(pair) for pair in structural_copy([list(pair) for pair in real])]
    except Exception as error:  # noqa: BLE001 - a value yuebing cannot copy
        raise Unbatched(f"cannot copy the arguments of a looped call: {error}") from None


def _sync(real: Any, copy: Any, depth: int = 0) -> None:
    """Copy the values of the arrays of fdata ``real`` into the matching arrays of ``copy``."""
    if type(real) is np.ndarray:
        if type(copy) is np.ndarray and copy is not real and copy.shape == real.shape and copy.flags.writeable:
            copy[...] = real
        return
    if depth > 32:
        return
    if isinstance(real, (list, tuple)) and isinstance(copy, (list, tuple)) and len(real) == len(copy):
        for r, c in zip(real, copy):
            _sync(r, c, depth + 1)
    elif isinstance(real, dict) and isinstance(copy, dict):
        for key, r in real.items():
            if key in copy:
                _sync(r, copy[key], depth + 1)
    elif isinstance(real, (Tangent, MutableTangent)) and isinstance(copy, (Tangent, MutableTangent)):
        for name, r in real.fields.items():
            if name in copy.fields:
                _sync(r, copy.fields[name], depth + 1)


def _sync_slice(batched_fd: Any, j: int, target: Any, depth: int = 0) -> None:
    """Bring run j's own output fdata tangent to slice j of the stacked one (the cotangent tangent
    gathered there): arrays in place, the number slots of lists, dicts and objects by value."""
    if type(batched_fd) is np.ndarray and type(target) is np.ndarray and target.flags.writeable \
            and batched_fd.shape[1:] == target.shape and not np.shares_memory(batched_fd[j], target):
        target[...] = batched_fd[j]
        return
    if depth > 32 or not isinstance(target, (list, tuple, dict, Tangent, MutableTangent)) \
            or type(batched_fd) is not type(target):
        return
    for key, value in _entries(target):
        b = _entry(batched_fd, key)
        if isinstance(value, (float, complex)) and type(b) is np.ndarray and b.ndim == 1 and j < b.shape[0]:
            if isinstance(target, tuple):
                raise Unbatched("a number slot of a tuple fdata tangent")
            _set_entry(target, key, type(value)(b[j]))
        else:
            _sync_slice(b, j, value, depth + 1)


def _stacked(slicer: _Slicer, outs: list, y: Any) -> Any:
    """The batched tangent (or fdata tangent) whose slice j is ``outs[j]``."""
    handed_back = _origin_of(slicer, outs)
    if handed_back is not None:  # an argument's own (a list's tangent read out of a list): itself
        return handed_back
    if all(o is outs[0] for o in outs) and (_empty(outs[0]) or outs[0] is None):
        return outs[0]
    if type(y) in (float, complex) or isinstance(y, np.generic):
        values = [0.0 if _empty(o) else o for o in outs]
        if all(isinstance(v, (_NUMBERS, np.generic)) or type(v) is np.ndarray and v.ndim == 0 for v in values):
            return np.array(values, dtype=np.result_type(*values, np.float64))
    first = outs[0]
    if isinstance(first, (list, tuple, dict)) and all(type(o) is type(first) and len(o) == len(first) for o in outs):
        keys = list(range(len(first))) if not isinstance(first, dict) else list(first)
        parts = [_stacked(slicer, [o[key] for o in outs], _entry(y, key) if isinstance(y, type(first)) else None)
                 for key in keys]
        if isinstance(first, dict):
            return type(first)(zip(keys, parts))
        return list(parts) if type(first) is list else tuple(parts) if type(first) is tuple \
            else tuple.__new__(type(first), parts)
    if all(isinstance(o, (_NUMBERS, np.generic)) or _empty(o) for o in outs) and not all(_empty(o) for o in outs):
        values = [0.0 if _empty(o) else o for o in outs]  # a number slot: one batched array of its own
        return np.array(values, dtype=np.result_type(*values, np.float64))
    if not isinstance(first, (np.ndarray, np.generic, Tangent, MutableTangent) + _NUMBERS) and not _empty(first) \
            and any(o is not first for o in outs):
        raise Unbatched(f"the directions' {type(first).__qualname__} tangents cannot be stacked")
    try:
        return slicer.stack(outs, primal=y)
    except NotImplementedError as error:
        raise Unbatched(str(error)) from None


def _origin_of(slicer: _Slicer, outs: list) -> Any:
    """The batched object whose direction slices ``outs`` are, or None."""
    found = slicer.origin.get(id(outs[0]))
    if found is None:
        return None
    for j, o in enumerate(outs):
        there = slicer.origin.get(id(o))
        if there is None or there[0] is not found[0] or there[1] != j:
            return None
    return found[0]


def _stacked_rdata(items: list, p: Any) -> Any:
    """The batched rdata tangent whose slice j is ``items[j]`` (``NoRData`` where all are)."""
    if all(r is NoRData for r in items):
        return NoRData
    values = [0.0 if r is NoRData else r for r in items]
    if all(isinstance(v, (_NUMBERS, np.generic, np.ndarray)) for v in values):
        arrays = [np.asarray(v) for v in values]
        if len({a.shape for a in arrays}) == 1:
            return np.stack(arrays)
    if all(isinstance(r, (list, tuple, dict, Tangent)) or r is NoRData for r in items):
        slicer = _Slicer(len(items))
        try:
            first = next(r for r in items if r is not NoRData)
            return slicer.stack([first if r is NoRData else r for r in items]) if all(
                r is not NoRData for r in items) else _unstackable(p)
        except NotImplementedError:
            return _unstackable(p)
    return _unstackable(p)


def _unstackable(p: Any) -> Any:
    raise Unbatched(f"rdata of a looped call on a {type(p).__qualname__} cannot be stacked")


def _check_views(fn: Any, y: Any, y_d: Any, args: tuple) -> None:
    """An output that is a view of an argument must have a tangent that is a view of its tangent."""
    if type(y) is not np.ndarray or type(y_d) is not np.ndarray:
        return
    for a in args:
        if type(a[0]) is np.ndarray and is_batched(a[2], a[0]) and np.may_share_memory(y, a[0]) \
                and not np.may_share_memory(y_d, a[2]):
            raise Unbatched(f"{describe_callable(fn)} returned a view whose batched tangent is a copy")


__all__ = ["NUMBER_CALLS_PER_PASS", "Unbatched", "has_batch", "looped", "run_rule", "start_pass"]
