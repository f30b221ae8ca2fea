"""Batched forward mode's dispatch (``rules/batched.py`` says what a batched tangent is): how a
registered forward rule runs when every tangent carries k directions.

``run_batched`` picks, in order:

1. no argument tangent has the batch axis (all zero): the rule as usual, fresh array tangents of
   its output then given the batch axis (a later write of a batched value into ``np.zeros(n)``
   needs room for it); the same for a rule with a zero derivative;
2. the rule's batch-aware version (``rules.batched.batched_rule``), unless it declines;
3. a rule that only moves tangents (list, dict and attribute operations): run as it is; a rule
   defined as Python code (``defined_as``: ``itertools``, NumPy's polynomial classes): that code's
   derived rule, batched like user code;
4. otherwise **the looped fallback**: the rule runs once per direction, on direction ``j``'s slice
   of every tangent (a view of each batched array, so in-place writes land in the batch) and, for
   ``j >= 1``, on copies of the primals (the real ones are changed once, by the last run, with the
   random state restored before each run); the outputs are stacked. An output that is a view of an
   input's tangent comes back as the same view of the batched tangent, so aliasing survives. A rule
   that changed a list, dict or object tangent in place, which slicing cannot carry back, is refused
   with an error naming it.

Nothing here is an approximation: the fallback gives exactly what the unbatched pass gives.
"""
from __future__ import annotations

import collections
import random
import types
from typing import Any, Callable

import numpy as np

from ..rules import array_like
from ..rules.batched import BATCH, batched, batched_rule, batched_zeros, is_batched, structural_rule, zero_rule
from ..ir.primitives import global_get
from ..rules.core import FRULES, Dual, describe_callable
from ..rules.exception_tangents import recorded
from ..tangents import MutableTangent, NoTangent, Tangent
from ..tangents import kinds as K
from ..tangents import structural_copy
from ..tangents.deques import tangent_deque

_NUMBER_TYPES = (float, int, complex, bool)
_CONTAINERS = (list, tuple, dict, Tangent, MutableTangent, collections.deque)
_SEQUENCES = (list, tuple, collections.deque)
_DICT_VIEWS = {K.DICT_VALUES: dict.values, K.DICT_KEYS: dict.keys, K.DICT_ITEMS: dict.items}


def derived_call(definition: Any, args: tuple, kwargs: dict) -> Dual:
    """``definition``'s derived forward rule on batched duals (``rules.core.frule`` falls back to it)."""
    from ..rules.core import frule

    return frule(definition, *args, **kwargs)


def run_batched(found: tuple, f: Dual, args: tuple, kwargs: dict, run_plain: Callable) -> Dual:
    """Registered forward rule ``found`` (``FRULES.lookup``'s triple) of ``f`` on batched duals."""
    fn = f.primal
    if array_like.applies(fn):
        args, kwargs = _as_arrays(fn, args, kwargs, run_plain)
    owner = found[2]
    full = args if owner is None else (Dual(owner, _owner_tangent(f, owner)),) + args
    seen: set = set()
    arrays: list = []
    if fn is global_get or fn is getattr and recorded(full[0].primal):
        # its tangent is the one a write in this call gave the global (batched), not its arguments'; an
        # exception's attribute: the tangent recorded beside it (rules/exception_tangents.py), batched as given
        return _unchecked(found, full, kwargs)
    if not any(_has_batch(d.tangent, d.primal, seen, arrays) for d in (*full, *kwargs.values())):
        return _promoted(run_plain(found, f, args, kwargs), seen, arrays)
    rule = batched_rule(fn)
    if rule is not None:
        out = rule(full, kwargs)
        if out is not None:
            return out
    if structural_rule(fn, full):
        return _unchecked(found, full, kwargs)
    definition = getattr(found[0], "definition", None)
    if definition is not None:  # defined as Python code (rules.second_order.defined_as): that code, batched
        found[0].check(full, kwargs)
        return derived_call(definition, full, kwargs)
    if zero_rule(fn):  # zeros written into out= go into its batched tangent as they are
        return _promoted(_unchecked(found, full, kwargs), seen, arrays)
    return looped(lambda g, a, kw: run_plain(found, g, a, kw), f, args, kwargs)


def _as_arrays(fn: Any, args: tuple, kwargs: dict, run_plain: Callable) -> tuple[tuple, dict]:
    """The array_like boundary (``rules/array_like.py``) with batched tangents: ``np.asarray``'s
    rule through this dispatch (a list of batched floats becomes a batched array)."""
    keys = array_like.conversions(fn, [a.primal for a in args], {k: v.primal for k, v in kwargs.items()})
    if not keys:
        return args, kwargs
    args, kwargs = list(args), dict(kwargs)
    convert = FRULES.lookup(np.asarray)
    for key in keys:
        values = args if isinstance(key, int) else kwargs
        values[key] = run_batched(convert, Dual(np.asarray, NoTangent), (values[key],), {}, run_plain)
    return tuple(args), kwargs


def _owner_tangent(f: Dual, owner: Any) -> Any:
    from ..tangents import zero_tangent

    tangent = getattr(f.tangent, "__self__", None)
    return zero_tangent(owner) if tangent is None else tangent


def _unchecked(found: tuple, args: tuple, kwargs: dict) -> Dual:
    """The registered rule on batched duals, without debug mode's per-call type checks (which
    expect one direction); the owner of a bound method is already first in ``args``."""
    rule, binder, _ = found
    if kwargs and binder.passthrough:
        return rule(*args, **kwargs)
    if kwargs:
        values, _ = binder.bind(args, kwargs)
        return rule(*values)
    return rule(*args)


def _has_batch(t: Any, p: Any, seen: set, arrays: list) -> bool:
    """Whether tangent ``t`` of ``p`` holds a batched leaf (ids of its objects go into ``seen``,
    its arrays into ``arrays``)."""
    if t is NoTangent or type(t) in _NUMBER_TYPES:
        return False
    if id(t) in seen:
        return False
    seen.add(id(t))
    if type(t) is np.ndarray and t.dtype.kind == "O":
        return True  # an object array's tangent (its elements'): the careful path
    if type(t) is np.void:
        return False  # a record of an unbatched tangent (a batched one is refused: structured_dispatch.py)
    if type(t) is np.ndarray:
        arrays.append(t)
        return p is None or not isinstance(p, (np.ndarray, np.generic, float, complex)) or is_batched(t, p)
    if not isinstance(t, _CONTAINERS):
        return True  # a tangent object of its own kind: whatever it holds, the careful path
    return any(_has_batch(c, cp, seen, arrays) for c, cp in _children(t, p))


def _children(t: Any, p: Any) -> list[tuple[Any, Any]]:
    """``(child tangent, child primal or None)`` of a container tangent."""
    if isinstance(t, _SEQUENCES):
        same = isinstance(p, _SEQUENCES) and len(p) == len(t)
        return [(c, p[i] if same else None) for i, c in enumerate(t)]
    if isinstance(t, dict):
        return [(c, p.get(k) if isinstance(p, dict) else None) for k, c in t.items()]
    if isinstance(t, (Tangent, MutableTangent)):
        return [(c, _field(p, name)) for name, c in t.fields.items()]
    return []


def _field(p: Any, name: str) -> Any:
    """Primal field ``name`` of ``p`` (a closure's captured cell by its variable name), or None."""
    code = getattr(p, "__code__", None)
    if code is not None and p.__closure__ and name in code.co_freevars:
        return p.__closure__[code.co_freevars.index(name)]
    try:
        return getattr(p, name, None)
    except Exception:  # noqa: BLE001 - a property that raises: no primal to guide the slicing
        return None


def _promoted(out: Dual, inputs: set, arrays: list) -> Dual:
    """``out`` with its fresh array tangents given the batch axis, as zeros (an unbatched tangent
    is zero in every direction). An input's tangent, or a view of one, stays as it is: a batched
    write into it is then refused (``rules.batched._setitem``, or a read-only slice here)."""
    t = out.tangent
    if type(t) is np.ndarray and t.dtype.kind != "O":  # (an object array's: its elements' tangents, kept)
        if id(t) in inputs or not t.flags.writeable or t.ndim != np.ndim(out.primal) \
                or any(np.may_share_memory(t, a) for a in arrays):
            return out
        return Dual(out.primal, batched_zeros(out.primal, BATCH.size, t.dtype))
    if type(t) is list and id(t) not in inputs and isinstance(out.primal, list) and len(t) == len(out.primal):
        t[:] = [_promoted(Dual(p, c), inputs, arrays).tangent for p, c in zip(out.primal, t)]
    elif type(t) is tuple and isinstance(out.primal, tuple) and len(t) == len(out.primal):
        t = tuple(_promoted(Dual(p, c), inputs, arrays).tangent for p, c in zip(out.primal, t))
    elif type(t) is dict and id(t) not in inputs and isinstance(out.primal, dict):
        for key in list(t):
            t[key] = _promoted(Dual(out.primal.get(key), t[key]), inputs, arrays).tangent
    return Dual(out.primal, t)


# --------------------------------------------------------------------------------------------
# The looped fallback
# --------------------------------------------------------------------------------------------


def looped(run: Callable, f: Dual, args: tuple, kwargs: dict) -> Dual:
    """``run(f, args, kwargs)`` once per direction on slices of the tangents, outputs stacked."""
    k = BATCH.size
    slicer = _Slicer(k)
    f_slices = slicer.slices(f.tangent, f.primal)
    arg_slices = [slicer.slices(a.tangent, a.primal) for a in args]
    kw_slices = {name: slicer.slices(d.tangent, d.primal) for name, d in kwargs.items()}
    primals = (f.primal, tuple(a.primal for a in args), {name: d.primal for name, d in kwargs.items()})
    copies = [_copy_primals(primals) for _ in range(k - 1)]
    draws = _may_draw(f.primal)
    states = (np.random.get_state(), random.getstate()) if draws else None
    outputs: list = [None] * k
    raised = None
    with batched(0):  # one direction per run: nested passes inside the rule are unbatched
        for j in list(range(1, k)) + [0]:  # the real primals last: they are changed once
            fp, ap, kp = primals if j == 0 else copies[j - 1]
            if draws:  # every run draws the same numbers (the real run last, leaving the state it leaves)
                np.random.set_state(states[0])
                random.setstate(states[1])
            try:
                out = run(Dual(fp, f_slices[j]), tuple(Dual(p, s[j]) for p, s in zip(ap, arg_slices)),
                          {name: Dual(kp[name], kw_slices[name][j]) for name in kp})
            except Exception as error:
                if type(error).__module__.startswith("yuebing."):
                    raise
                raised = error  # a user's exception after partial work: every run does that work
                continue  # on its slices, the real one last, which then raises (issue 13)
            outputs[j] = out
    if raised is not None:
        raise raised
    slicer.check_unchanged(f.primal)
    y = outputs[0].primal
    ty = slicer.stack([o.tangent for o in outputs], primal=y)
    _check_views(f.primal, y, ty, args)
    return Dual(y, ty)


def _check_views(fn: Any, y: Any, ty: Any, args: tuple) -> None:
    """Refuse an output that is a view of an argument whose tangent came back as a copy: a later
    write through the view would reach the argument but not its tangent."""
    if type(y) is not np.ndarray or type(ty) is not np.ndarray:
        return
    for a in args:
        if type(a.primal) is np.ndarray and is_batched(a.tangent, a.primal) and np.may_share_memory(y, a.primal) \
                and not np.may_share_memory(ty, a.tangent):
            raise NotImplementedError(
                f"batched forward mode: {describe_callable(fn)} returned a view of its argument whose tangent, "
                "computed once per direction, is a copy (the directions' memory layout differs from the "
                "argument's). Pass chunk_size=1 to yb.jacobian (one direction per pass)")


def _may_draw(fn: Any) -> bool:
    """Whether ``fn`` may draw from NumPy's or Python's global random state: a method of a random
    state or generator, or a rule of the random and statistics domains (``rvs``). Restoring the
    states costs a few hundred microseconds per run, so only these pay it."""
    if isinstance(getattr(fn, "__self__", None), (np.random.RandomState, np.random.Generator, random.Random)):
        return True
    try:
        origin = FRULES.origin.get(fn, "")
    except TypeError:  # an unhashable callable
        return True
    return not isinstance(fn, np.ufunc) and ("random" in origin or "stats" in origin or not origin)


def _copy_primals(primals: tuple) -> tuple:
    """A copy of the call's primals (one copy, so aliasing among them is kept); a bound builtin
    method (``xs.append``) is bound again to the copy of its object."""
    fn, args, kwargs = primals
    owner = getattr(fn, "__self__", None)
    rebind = isinstance(fn, (types.BuiltinMethodType, types.MethodWrapperType)) and owner is not None \
        and not isinstance(owner, (types.ModuleType, type))
    values = ((owner,) if rebind else ()) + tuple(args) + tuple(kwargs.values())
    views = {i: _DICT_VIEWS[type(v)] for i, v in enumerate(values) if type(v) in _DICT_VIEWS}
    if views:  # ``sum(d.values())``: a dict view is copied as the same view of a copy of its dict
        values = tuple(dict(v.mapping) if i in views else v for i, v in enumerate(values))
    copied = _copied_arrays(values)
    if copied is None:
        copied = structural_copy(values)
    if views:
        copied = tuple(views[i](c) if i in views else c for i, c in enumerate(copied))
    if rebind:
        fn, copied = getattr(copied[0], fn.__name__), copied[1:]
    return fn, tuple(copied[:len(args)]), dict(zip(kwargs, copied[len(args):]))


_IMMUTABLE = (int, float, complex, bool, str, bytes, type(None), np.generic, type, types.FunctionType,
              types.BuiltinFunctionType, np.ufunc)


def _copied_arrays(values: tuple) -> tuple | None:
    """The fast copy: when every value is a number, a string or an array, no two arrays sharing
    memory, the arrays copied and the rest as they are; otherwise None (``structural_copy``)."""
    arrays = [v for v in values if type(v) is np.ndarray]
    if len(arrays) + sum(isinstance(v, _IMMUTABLE) for v in values) != len(values):
        return None
    if any(np.may_share_memory(a, b) for i, a in enumerate(arrays) for b in arrays[i + 1:]):
        return None
    return tuple(v.copy() if type(v) is np.ndarray else v for v in values)


class _Slicer:
    """Direction ``j``'s slice of every tangent of one call (identity-memoised: a tangent reached
    twice gives one slice), and the stacking of the outputs back into batched tangents."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.memo: dict[int, list] = {}
        self.origin: dict[int, tuple[Any, int]] = {}  # id(slice) -> (batched tangent, j)
        self.arrays: list[np.ndarray] = []  # batched input arrays (for outputs that are views of them)
        self.containers: list[tuple[Any, list]] = []  # (container slice, its children's ids when made)
        self.keep: list = []  # keeps sliced objects alive while their ids are keys

    def slices(self, t: Any, p: Any) -> list:
        if t is NoTangent or type(t) in _NUMBER_TYPES or t is None:
            return [t] * self.k
        key = id(t)
        if key not in self.memo:
            self.keep.append(t)
            self.memo[key] = self._make(t, p)
        return self.memo[key]

    def _make(self, t: Any, p: Any) -> list:
        if type(t) is np.ndarray:
            return self._array(t, p)
        if type(t) is list or type(t) is collections.deque:  # (a deque's tangent: a deque with its maxlen)
            shells: list = [[] if type(t) is list else tangent_deque((), t) for _ in range(self.k)]
            self._note(t, shells)
            parts = [self.slices(c, cp) for c, cp in _children(t, p)]
            for j, shell in enumerate(shells):
                shell.extend(part[j] for part in parts)
            return self._watch(shells)
        if isinstance(t, tuple):
            parts = [self.slices(c, cp) for c, cp in _children(t, p)]
            cls = type(t)
            out = [cls(part[j] for part in parts) if cls is tuple else tuple.__new__(cls, [part[j] for part in parts])
                   for j in range(self.k)]
            self._note(t, out)
            return out
        if isinstance(t, dict):
            shells = [type(t)() for _ in range(self.k)]
            self._note(t, shells)
            for key, (c, cp) in zip(list(t), _children(t, p)):
                part = self.slices(c, cp)
                for j, shell in enumerate(shells):
                    shell[key] = part[j]
            return self._watch(shells)
        if type(t) in _DICT_VIEWS:  # d.values(), d.keys(), d.items() of a dict tangent: views of its slices
            primal = dict(p.mapping) if type(p) in _DICT_VIEWS else None
            return [_DICT_VIEWS[type(t)](part) for part in self.slices(dict(t.mapping), primal)]
        if isinstance(t, (Tangent, MutableTangent)):
            shells = [type(t)(t.primal_type, {}) for _ in range(self.k)]
            self._note(t, shells)
            for name, (c, cp) in zip(list(t.fields), _children(t, p)):
                part = self.slices(c, cp)
                for j, shell in enumerate(shells):
                    shell.fields[name] = part[j]
            return self._watch(shells) if isinstance(t, MutableTangent) else shells
        raise NotImplementedError(
            f"batched forward mode: a tangent of type {type(t).__qualname__} reached a forward rule that runs "
            "once per direction, and yuebing cannot slice it. Pass chunk_size=1 to yb.jacobian (one direction "
            "per pass)")

    def _array(self, t: np.ndarray, p: Any) -> list:
        known = isinstance(p, (np.ndarray, np.generic, float, complex))
        if known and not is_batched(t, p) or not known and (t.ndim == 0 or t.shape[0] != self.k):
            view = t.view()  # zero in every direction; a write into it would be lost: refused
            view.flags.writeable = False
            return [view] * self.k
        if isinstance(p, (float, complex, np.floating, np.complexfloating)):
            convert = complex if t.dtype.kind == "c" else float
            return [convert(t[j]) for j in range(self.k)]
        self.arrays.append(t)
        out = [t[j, ...] for j in range(self.k)]
        self._note(t, out)
        return out

    def _note(self, batched_tangent: Any, slices: list) -> None:
        # known before its children are sliced: a child reaching back to it (a cycle of objects,
        # a lazy groupby and its group) gets these shells instead of recursing forever
        self.memo[id(batched_tangent)] = slices
        for j, s in enumerate(slices):
            self.origin[id(s)] = (batched_tangent, j)
        self.keep.extend(slices)

    def _watch(self, shells: list) -> list:
        for s in shells:
            self.containers.append((s, _child_ids(s)))
        return shells

    def check_unchanged(self, fn: Any) -> None:
        """Refuse a rule that changed a sliced list, dict or object tangent in place."""
        for shell, ids in self.containers:
            if _child_ids(shell) != ids:
                raise NotImplementedError(
                    f"batched forward mode: the forward rule of {describe_callable(fn)} changed a list, dict or "
                    "object tangent in place, which running it once per direction cannot carry back. Pass "
                    "chunk_size=1 to yb.jacobian (one direction per pass), or use yb.jvp")

    # ---------------------------------------------------------------- stacking outputs

    def stack(self, outs: list, memo: dict | None = None, primal: Any = None) -> Any:
        """The batched tangent whose slice ``j`` is ``outs[j]`` (``primal``: the output's, for its layout)."""
        memo = {} if memo is None else memo
        first = outs[0]
        # keyed by every direction's object, not the first's alone: two outputs whose first
        # directions share an object (the float 0.0, NoTangent) differ in the other directions
        key = tuple(map(id, outs))
        if key in memo:
            return memo[key]
        origin = self.origin.get(id(first))
        if origin is not None and all(self.origin.get(id(o)) == (origin[0], j) for j, o in enumerate(outs)):
            return origin[0]  # an input's own tangent, handed back
        result = self._stack_new(outs, memo, primal)
        memo[key] = result
        return result

    def _stack_new(self, outs: list, memo: dict, primal: Any) -> Any:
        first = next((o for o in outs if o is not NoTangent), NoTangent)
        if first is NoTangent:
            return NoTangent
        if isinstance(first, (np.ndarray, np.generic) + _NUMBER_TYPES):
            zero = np.zeros_like(np.asarray(first))
            return self._leaf([zero if o is NoTangent else o for o in outs], primal)
        if type(first) is list:
            return [self.stack([o[i] for o in outs], memo) for i in range(len(first))]
        if type(first) is collections.deque:
            return tangent_deque([self.stack([o[i] for o in outs], memo) for i in range(len(first))], first)
        if isinstance(first, tuple):
            items = [self.stack([o[i] for o in outs], memo) for i in range(len(first))]
            return tuple(items) if type(first) is tuple else tuple.__new__(type(first), items)
        if isinstance(first, dict):
            out = type(first)()
            for key in first:
                out[key] = self.stack([o[key] for o in outs], memo)
            return out
        if isinstance(first, (Tangent, MutableTangent)):
            return type(first)(first.primal_type,
                               {name: self.stack([o.fields[name] for o in outs], memo) for name in first.fields})
        if all(o is first for o in outs):  # one object for every direction: nothing to stack
            return first
        raise NotImplementedError(  # returning one direction's tangent for all would be silently wrong
            f"batched forward mode: a rule that ran once per direction returned tangents of type "
            f"{type(first).__name__}, which yuebing cannot stack. Pass chunk_size=1 to yb.jacobian (one direction "
            "per pass)")

    def _leaf(self, outs: list, primal: Any) -> np.ndarray:
        first = outs[0]
        if isinstance(first, np.ndarray):
            for base in self.arrays:
                if np.may_share_memory(first, base):
                    return self._view_of(outs, base)
        if isinstance(primal, np.ndarray) and primal.shape == np.shape(first):  # in the output's layout
            out = batched_zeros(primal, self.k, np.result_type(*outs))
            for j, o in enumerate(outs):
                out[j] = o
            return out
        return np.stack([np.asarray(o) for o in outs])

    def _view_of(self, outs: list, base: np.ndarray) -> np.ndarray:
        """The batched view whose slice ``j`` is ``outs[j]``, each a view of ``base[j]``."""
        first = outs[0]
        start = first.__array_interface__["data"][0]
        step = base.strides[0]
        if all(isinstance(o, np.ndarray) and o.shape == first.shape and o.strides == first.strides
               and o.__array_interface__["data"][0] == start + j * step for j, o in enumerate(outs)):
            return np.lib.stride_tricks.as_strided(first, (self.k,) + first.shape, (step,) + first.strides)
        raise NotImplementedError(
            "batched forward mode: a forward rule returned views of its argument's tangent that do not form "
            "one view of the batched tangent. Pass chunk_size=1 to yb.jacobian (one direction per pass)")


def _child_ids(container: Any) -> list:
    if isinstance(container, (list, collections.deque)):
        return [id(c) for c in container]
    if isinstance(container, dict):
        return [(k, id(c)) for k, c in container.items()]
    return [(k, id(c)) for k, c in container.fields.items()]


__all__ = ["looped", "run_batched"]
