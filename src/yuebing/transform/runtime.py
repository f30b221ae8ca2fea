"""What reverse-mode generated code calls at run time: rule dispatch (registered or derived),
rdata accumulation, and the cache of derived rules (globals and closure cells:
``globals_and_cells.py``).

``call_rrule(f, *coduals, **kw_coduals)`` is the single entry point for every call site: a
registered rule if there is one; otherwise, for a Python function, method, class or callable
object, a rule *derived* from its source (built lazily on first call and cached per code object,
so recursion and never-executed branches cost nothing).
"""
from __future__ import annotations

import collections
import dataclasses
import functools
import types
from typing import Any, Callable

import numpy as np

from ..rules import array_like
from ..rules import core as _core
from ..rules._partial_work import reroute
from ..rules.core import RRULES, CoDual, MissingRuleError, describe_callable, run_rrule
from ..rules.local_classes import stored_defaults
from ..rules.util import add_rdata_to, output, slot_tangent, sum_rdata
from ..rules.numpy_vectorize import call_definition, probes_first, pyfunc_fdata
from ..tangents import MutableTangent, NoFData, NoRData, Tangent, fdata, join, rdata, zero_tangent
from ..tangents.ops import add as add_tangents
from .direct_calls import REVERSE as _DIRECT, describe_line, user_line_notes
from .exceptions import TRACKING, TRY_NAMES, abandon, carry_elements, caught, mark_partial, tracked
from . import partial_calls as _partial
from .dataclass_construction import construct_reverse
from .frozen_objects import frozen_reverse, is_frozen
from .dual_vectorize import whole_array
from .class_calls import call_positions, extra_arguments, is_generated_init, is_namedtuple, make_namedtuple, namedtuple_fields, without_init
from .new_construction import builder, by_new_reverse
from .globals_and_cells import (SELF_REFERENCE, SharedBox, cell_fdata, closure_fdata, closure_rdata, global_fdata, global_value,
                                new_cell_box, read_only, user_globals, with_user_globals)
from .star_arrays import is_star_array, route_star_rdata, star_coduals
from ..rules.bunch_data import routed_rdata
from ..rules.bunch_records import record_extras, taken_rdata
from .protocols import GRADIENT_CALLS, Candidate, CallMode, _refuse_yuebing_internals, CodeCache, SourceFunction, dispatch, property_function, run_operator
from .generated_text import RUNTIME_NAMES

# --------------------------------------------------------------------------------------------
# rdata arithmetic
# --------------------------------------------------------------------------------------------


def acc(a: Any, b: Any) -> Any:
    """``a + b`` for rdata, with ``NoRData`` as zero."""
    if b is NoRData:
        return a
    if a is NoRData:
        return b
    ta = type(a)
    if (ta is float or ta is complex) and type(b) in (float, complex):
        return a + b
    return sum_rdata(a, b)


# --------------------------------------------------------------------------------------------
# Star arguments
# --------------------------------------------------------------------------------------------


class Star:
    """Marks ``*seq`` at a call site (generated code: ``_STAR(codual)``)."""

    __slots__ = ("codual",)

    def __init__(self, codual: CoDual) -> None:
        self.codual = codual


_LISTS = (list, collections.deque)


def splits(primal: Any, tangent: Any) -> bool:
    """Whether a call site splits the tangent of ``*primal`` into its items' itself: a tuple's, a
    list's or deque's (whose tangent is one), an array's. Any other iterable is listed first."""
    return isinstance(primal, tuple) or isinstance(primal, _LISTS) and isinstance(tangent, _LISTS) \
        or is_star_array(primal) or type(primal) is list


def _listed_star(seq: CoDual) -> tuple[CoDual, Callable | None]:
    """``*seq`` of a set, an iterator, a dict view, a deque made in the function or a user
    iterable: ``list(seq)`` differentiated (CPython unpacks it in iteration order, as ``list``
    does), and that list's pullback, which sends its items' cotangents back to ``seq``."""
    if splits(seq.primal, seq.fdata):
        return seq, None
    return _dispatch(CoDual(list, NoFData), (seq,), {})


def _with_listed_star(pullback: Callable, list_pullback: Callable | None, at: int) -> Callable:
    """``pullback`` of a call given ``*list(x)``, with the list's rdata (at index ``at``) taken
    back to ``x``."""
    if list_pullback is None:
        return pullback

    def unlisted(dy: Any) -> tuple:
        rs = list(pullback(dy))
        rs[at] = list_pullback(NoRData)[1]  # (the list's own rdata is none: its fdata carries it)
        return tuple(rs)

    return unlisted


def _expand_star(seq: CoDual) -> list[CoDual]:
    primal, f = seq.primal, seq.fdata
    if isinstance(primal, tuple):
        parts = f if isinstance(f, tuple) else (NoFData,) * len(primal)
        return [CoDual(x, p) for x, p in zip(primal, parts)]
    if isinstance(primal, _LISTS) and isinstance(f, _LISTS):  # (a deque made outside: its tangent is a deque)
        return [CoDual(x, fdata(t)) for x, t in zip(primal, f)]
    if is_star_array(primal):
        return star_coduals(seq)
    return [CoDual(x, fdata(zero_tangent(x))) for x in primal]  # a list without a tangent list: constants


def _route_star_rdata(seq: CoDual, rdatas: list) -> Any:
    """rdata for the ``*seq`` argument from its elements' rdata."""
    primal, f = seq.primal, seq.fdata
    if isinstance(primal, tuple):
        return NoRData if all(r is NoRData for r in rdatas) else tuple(rdatas)
    if is_star_array(primal):
        return route_star_rdata(seq, rdatas)
    if isinstance(primal, _LISTS) and isinstance(f, _LISTS):
        for i, r in enumerate(rdatas):
            if r is not NoRData:
                f[i] = acc(f[i], r) if isinstance(f[i], (float, complex)) else join(fdata(f[i]), acc(rdata(f[i]), r))
    return NoRData


def _route_starstar_rdata(mapping: CoDual, keys: list, rdatas: list) -> Any:
    f = mapping.fdata
    if isinstance(f, dict):
        for k, r in zip(keys, rdatas):
            if r is not NoRData:
                f[k] = acc(f[k], r) if isinstance(f[k], (float, complex)) else join(fdata(f[k]), acc(rdata(f[k]), r))
    return NoRData


# --------------------------------------------------------------------------------------------
# Dispatch
# --------------------------------------------------------------------------------------------


def call_rrule(f: CoDual, *args: Any, _STARSTAR: CoDual | None = None, **kwargs: CoDual) -> tuple[CoDual, Callable]:
    """Reverse rule of any call ``f(*args, **kwargs)`` (see the module docstring)."""
    star = list_pullback = None
    if args and type(args[-1]) is Star:
        star, list_pullback = _listed_star(args[-1].codual)
        explicit = args[:-1]
        args = explicit + tuple(_expand_star(star))
    if _STARSTAR is not None:
        mapping = _STARSTAR.primal
        if not isinstance(mapping, dict):
            raise TypeError(f"argument after ** must be a mapping, not {type(mapping).__qualname__}")
        mapping_f = _STARSTAR.fdata if isinstance(_STARSTAR.fdata, dict) else {}
        extra = {k: CoDual(v, fdata(mapping_f[k]) if k in mapping_f else fdata(zero_tangent(v))) for k, v in mapping.items()}
        duplicate = extra.keys() & kwargs.keys()
        if duplicate:
            raise TypeError(f"got multiple values for keyword argument {sorted(duplicate)[0]!r}")
        n_explicit_kw = len(kwargs)
        kwargs = {**kwargs, **extra}
    if star is None and _STARSTAR is None:
        return _dispatch(f, args, kwargs)
    n_plain = len(explicit) if star is not None else len(args)
    keys = (n_explicit_kw, list(extra)) if _STARSTAR is not None else None
    try:
        out, pullback = _dispatch(f, args, kwargs)
    except Exception as error:  # a function that raised after partial work: routed alike (issue 13)
        reroute(error, lambda inner: _with_listed_star(_star_routed(inner, len(args), n_plain, star, _STARSTAR, keys),
                                                       list_pullback, 1 + n_plain))
        raise
    return out, _with_listed_star(_star_routed(pullback, len(args), n_plain, star, _STARSTAR, keys), list_pullback, 1 + n_plain)


def _star_routed(pullback: Callable, n_args: int, n_plain: int, star: CoDual | None, starstar: CoDual | None,
                 keys: tuple | None) -> Callable:
    """The pullback of a call given ``*star``/``**starstar``: the rdata of the elements go back
    to the sequence and the mapping (``keys``: the number of explicit keywords, the mapping's)."""
    def routed(dy: Any) -> tuple:
        rs = list(pullback(dy))
        result = [rs[0]]
        body = rs[1:]
        positional, keyword = body[:n_args], body[n_args:]
        result += positional[:n_plain]
        if star is not None:
            result.append(_route_star_rdata(star, positional[n_plain:]))
        if starstar is not None:
            result += keyword[:keys[0]]
            result.append(_route_starstar_rdata(starstar, keys[1], keyword[keys[0]:]))
        else:
            result += keyword
        return tuple(result)

    return routed


def _property_get(args: tuple) -> tuple[CoDual, Callable] | None:
    """``getattr(obj, name)`` for a property of a user class: its getter, derived from source."""
    getter = property_function(getattr, [a.primal for a in args])
    if getter is None:
        return None
    out, pullback = call_rrule(CoDual(getter, NoFData), args[0])
    n_rest = len(args) - 1
    return out, lambda dy: (NoRData, pullback(dy)[1]) + (NoRData,) * n_rest


def _property_set(args: tuple) -> tuple[CoDual, Callable] | None:
    """``setattr(obj, name, value)`` for a property of a user class: its setter, derived."""
    setter = property_function(setattr, [a.primal for a in args])
    if setter is None:
        return None
    out, pullback = call_rrule(CoDual(setter, NoFData), args[0], args[2])

    def set_pullback(dy: Any) -> tuple:
        rs = pullback(NoRData)
        return (NoRData, rs[1], NoRData, rs[2])

    return out, set_pullback


def _operator_on_user_type(fn: Any, args: tuple, kwargs: dict) -> tuple[CoDual, Callable] | None:
    """Python's operator protocol for user classes (``transform/protocols.py``): ``a + b`` runs
    ``type(a).__add__`` (or ``type(b).__radd__``), derived from source like any method."""
    if kwargs or not args:
        return None
    return run_operator(fn, args, _primal_of, _call_dunder, lambda result: result[0].primal)


def _primal_of(a: CoDual) -> Any:
    return a.primal


def _call_dunder(candidate: Candidate, operands: tuple) -> tuple[CoDual, Callable]:
    try:
        out, pullback = call_rrule(CoDual(candidate.method, NoFData), *operands)
    except Exception as error:  # a dunder that raised after partial work: routed alike (issue 13)
        reroute(error, lambda inner: _dunder_pullback(inner, candidate.reflected))
        raise
    return out, _dunder_pullback(pullback, candidate.reflected)


def _dunder_pullback(pullback: Callable, reflected: bool) -> Callable:
    if reflected:  # the operands were swapped: so are their rdata
        return lambda dy: (NoRData, *reversed(pullback(dy)[1:]))
    return lambda dy: (NoRData, *pullback(dy)[1:])


def _dispatch(f: CoDual, args: tuple, kwargs: dict) -> tuple[CoDual, Callable]:
    return dispatch(_REVERSE, f, f.primal, args, kwargs)


def _call_object(f: CoDual, call: types.FunctionType, args: tuple, kwargs: dict) -> tuple[CoDual, Callable]:
    """A callable object: its class's ``__call__`` bound to it."""
    bound = CoDual(types.MethodType(call, f.primal), Tangent(types.MethodType, {"__self__": f.fdata}))
    return _call_method(bound, args, kwargs)


def _missing(fn: Any) -> Exception:
    return MissingRuleError(fn, "reverse")


def _gradient(f: CoDual, args: tuple, kwargs: dict) -> tuple[CoDual, Callable]:
    return GRADIENT_CALLS["reverse"](f, args, kwargs)  # reverse over yb.grad: Hessian-vector products


def _call_method(f: CoDual, args: tuple, kwargs: dict) -> tuple[CoDual, Callable]:
    method = f.primal
    self_f = f.fdata.fields.get("__self__", NoFData) if isinstance(f.fdata, Tangent) else NoFData
    func = method.__func__
    out, pullback = _dispatch(CoDual(func, NoFData), (CoDual(method.__self__, self_f),) + args, kwargs)

    def method_pullback(dy: Any) -> tuple:
        rs = pullback(dy)
        self_r = rs[1]
        f_r = NoRData if self_r is NoRData else Tangent(types.MethodType, {"__self__": self_r})
        return (f_r, *rs[2:])

    return out, method_pullback


def _call_partial(f: CoDual, args: tuple, kwargs: dict) -> tuple[CoDual, Callable]:
    p = f.primal
    pf = f.fdata if isinstance(f.fdata, Tangent) else None
    stored_f = pf.fields.get("args", NoFData) if pf else NoFData
    stored = [CoDual(a, stored_f[i] if isinstance(stored_f, tuple) else NoFData) for i, a in enumerate(p.args)]
    kw_f = pf.fields.get("keywords", NoFData) if pf else NoFData
    stored_kw = {k: CoDual(v, fdata(kw_f[k]) if isinstance(kw_f, dict) else NoFData) for k, v in p.keywords.items()
                 if k not in kwargs}  # a keyword given again at the call overrides the stored one
    func_f = pf.fields.get("func", NoFData) if pf else NoFData
    shape = (len(stored), len(args), len(kwargs), stored_kw, kw_f)
    try:
        out, pullback = _dispatch(CoDual(p.func, func_f), tuple(stored) + args, {**stored_kw, **kwargs})
    except Exception as error:  # a function that raised after partial work: routed alike (issue 13)
        reroute(error, lambda inner: _stored_routed(inner, *shape))
        raise
    return out, _stored_routed(pullback, *shape)


def _stored_routed(pullback: Callable, n_stored: int, n_args: int, n_kwargs: int, stored_kw: dict, kw_f: Any) -> Callable:
    """The pullback of a call of a ``functools.partial``: the stored arguments' rdata go to it."""
    def partial_pullback(dy: Any) -> tuple:
        rs = pullback(dy)
        stored_r = rs[1:1 + n_stored]
        f_r = NoRData
        if any(r is not NoRData for r in stored_r):
            f_r = Tangent(functools.partial, {"args": tuple(stored_r)})
        rest = rs[1 + n_stored:]
        if isinstance(kw_f, dict):  # a stored keyword's cotangent goes to its slot in the keywords' tangent
            for key, r in zip(stored_kw, rest[n_args:n_args + len(stored_kw)]):
                if key in kw_f:
                    kw_f[key] = add_rdata_to(kw_f[key], r)
        return (f_r, *rest[:n_args], *rest[n_args + len(stored_kw):][:n_kwargs]) if stored_kw else (f_r, *rest)

    return partial_pullback


def _construct(f: CoDual, args: tuple, kwargs: dict) -> tuple[CoDual, Callable]:
    cls = f.primal
    build = builder(cls, "reverse")
    if build is not None:  # a metaclass's __call__ or a __new__ in Python (new_construction.py)
        return by_new_reverse(cls, args, kwargs, _dispatch, build)
    if dataclasses.is_dataclass(cls) and is_generated_init(cls):
        return _construct_dataclass(cls, args, kwargs)
    if is_namedtuple(cls):
        return _construct_namedtuple(cls, args, kwargs)
    init = cls.__init__
    if without_init(cls, args, kwargs):
        return CoDual(object.__new__(cls), MutableTangent(cls, {})), lambda dy: (NoRData,) * (1 + len(args) + len(kwargs))
    if cls.__new__ is not object.__new__ or not isinstance(init, types.FunctionType):
        raise MissingRuleError(cls, "reverse", reason="it is a class whose construction yuebing cannot "
                               "derive (a __new__ or an __init__ without Python source)")
    obj = object.__new__(cls)
    obj_f = MutableTangent(cls, {})
    try:
        _, pullback = _dispatch(CoDual(init, NoFData), (CoDual(obj, obj_f),) + args, kwargs)
    except Exception as error:  # an __init__ that raised after partial work: routed alike (issue 13)
        reroute(error, _constructed)
        raise
    if is_frozen(obj):  # identified by value from here on (frozen_objects.py)
        return frozen_reverse(obj, obj_f, _constructed(pullback))
    return CoDual(obj, obj_f), _constructed(pullback)


def _constructed(pullback: Callable) -> Callable:
    """A class's pullback from its ``__init__``'s: the new object's rdata is dropped."""
    def construct_pullback(dy: Any) -> tuple:
        rs = pullback(NoRData)
        return (NoRData, *rs[2:])

    return construct_pullback


def _construct_namedtuple(cls: type, args: tuple, kwargs: dict) -> tuple[CoDual, Callable]:
    items = namedtuple_fields(cls, args, kwargs)
    stored = stored_defaults(items, lambda c: isinstance(c, CoDual))  # (defaults a class body here computed)
    given = extra_arguments(cls, kwargs)
    extras = {k: v.primal if isinstance(v, CoDual) else v for k, v in given.items()}
    y = make_namedtuple(cls, [c.primal if isinstance(c, CoDual) else c for c in items], extras)
    parts = [c.fdata if isinstance(c, CoDual) else NoFData for c in items]
    out_f = NoFData if all(p is NoFData for p in parts) else tuple.__new__(cls, parts)
    positions = call_positions(cls, len(args), kwargs)
    # a tuple bunch's attributes: their derivatives beside it (rules/bunch_data.py)
    carried = record_extras("fdata", y, list(extras.values()), [c.fdata if isinstance(c, CoDual) else NoFData
                                                                 for c in given.values()])
    keys = [None] * len(args) + list(kwargs)

    def pullback(dy: Any) -> tuple:
        field_r = (list(dy) if isinstance(dy, tuple) else [NoRData] * len(items)) + [NoRData]  # (an attribute's)
        for i, gather in stored.items():
            gather(field_r[i])
        return (NoRData, *routed_rdata(field_r, positions, keys, taken_rdata(carried, list(given))))

    return CoDual(y, out_f), pullback


def _construct_dataclass(cls: type, args: tuple, kwargs: dict) -> tuple[CoDual, Callable]:
    """A dataclass through its generated ``__init__``, then ``__post_init__`` as a derived method
    call (``transform/dataclass_construction.py``)."""
    return construct_reverse(cls, args, kwargs, lambda f, a: _dispatch(f, a, {}))


def _call_vectorized(f: CoDual, args: tuple, kwargs: dict) -> tuple[CoDual, Callable]:
    """``np.vectorize(pyfunc)(*arrays)``: ``pyfunc``'s rule applied element by element."""
    vec = f.primal
    if kwargs or len(args) != 1 or vec.excluded or vec.signature is not None:
        return _vectorized_several(f, args, kwargs)
    x = args[0]
    xs = np.asarray(x.primal)
    flat = xs.ravel()
    pullbacks = []
    values = []
    if xs.dtype.kind == "f":  # Python floats (tolist: float64, float32, float16; float(v): the others)
        elements = flat.tolist() if xs.dtype.itemsize <= 8 else [float(v) for v in flat]
    else:
        elements = list(flat)
    fn, fn_f = vec.pyfunc, pyfunc_fdata(f.fdata)  # a closure's boxes: its captured variables' cotangents
    if _on_whole_array(vec, x.primal):
        return _vectorized_on_array(CoDual(fn, fn_f), x)
    probe = probes_first(vec) and bool(elements)  # NumPy's call on the first element first, unused
    if probe:
        elements = [elements[0], *elements]
    rule = derived_rule(fn) if type(fn) is types.FunctionType else None
    if rule is not None and rule.simple and rule.n_params == 1 and not tracked():  # (a try body: each element's work kept)
        # a plain one-argument function: run its generated passes directly on one tape (each
        # element's reverse pass, run newest first, pops exactly what its forward pass pushed)
        tape: list = []
        forward, reverse = rule.forward, rule.reverse
        try:
            for v in elements:
                values.append(forward(tape, fn, fn_f, v, NoFData)[0])
        except Exception as error:
            rule._point_at_user_line(error, "forward")
            abandon(error)  # the work of a callee that raised, newest: undone, and refused if caught
            mark_partial(error, rule.name, tape)  # its work is undone: an except clause must not go on
            unwind(tape)
            raise
        n = len(values)

        def element_pullbacks(gs: list) -> list:
            return [reverse(tape, gs[i])[0] for i in range(n - 1, -1, -1)][::-1]
    else:
        func = CoDual(fn, fn_f)
        for v in elements:
            try:
                out, pb = call_rrule(func, CoDual(v, NoFData))
            except Exception as error:  # its work and the completed elements' go with it (issue 13)
                carry_elements(error, pullbacks, x, probe)
                raise
            values.append(out.primal)
            pullbacks.append(pb)

        def element_pullbacks(gs: list) -> list:
            return [pullbacks[i](gs[i])[1] for i in range(len(pullbacks) - 1, -1, -1)][::-1]
    if probe:
        values = values[1:]
    y = np.asarray(values, dtype=vec.otypes[0] if vec.otypes else None).reshape(xs.shape)
    result = output(y)

    def pullback(dy: Any) -> tuple:
        g = result.fdata if isinstance(result.fdata, np.ndarray) else np.zeros(xs.shape)
        gs = np.asarray(g, dtype=float).ravel().tolist()
        rs = element_pullbacks([0.0, *gs] if probe else gs)  # (the probe's result: unused)
        grads = np.array([0.0 if r is NoRData else r for r in rs], dtype=float)
        if probe:  # its argument is the first element's
            grads = grads[1:]
            grads[0] += 0.0 if rs[0] is NoRData else rs[0]
        if isinstance(x.primal, np.ndarray) and isinstance(x.fdata, np.ndarray):
            x.fdata += grads.reshape(xs.shape)
            return NoRData, NoRData
        return NoRData, float(grads.sum()) if np.ndim(x.primal) == 0 else NoRData

    return result, pullback


def _vectorized_several(f: CoDual, args: tuple, kwargs: dict) -> tuple[CoDual, Callable]:
    """``np.vectorize`` called with several arguments, keywords, ``excluded`` ones or a signature:
    as its definition in covered code (``rules.numpy_vectorize.call_definition``), derived like user code."""
    vec = f.primal
    definition, constants = call_definition(vec)
    out, pullback = call_rrule(CoDual(definition, NoFData), CoDual(vec.pyfunc, pyfunc_fdata(f.fdata)),
                               *(CoDual(c, NoFData) for c in constants), *args, **kwargs)

    def several_pullback(dy: Any) -> tuple:
        rs = pullback(dy)  # (definition, pyfunc, *constants, *args, **kwargs)
        return (NoRData, *rs[2 + len(constants):])

    return out, several_pullback


def _on_whole_array(vec: np.vectorize, x: Any) -> bool:
    """Whether ``vec(x)`` may run ``vec.pyfunc`` once on the whole of ``x``: a non-empty float64
    array of one dimension or more (a 0-d one would give a NumPy float) and a function whose body
    is elementwise arithmetic of its parameter
    (``dual_vectorize.whole_array``: each statement gives on the array what it gives on each
    element, bit for bit), with no ``excluded`` arguments and float output."""
    return type(x) is np.ndarray and x.dtype == np.float64 and x.ndim > 0 and x.size > 0 and not vec.excluded \
        and vec.otypes in (None, "d") and whole_array(vec.pyfunc)


def _vectorized_on_array(fn: CoDual, x: CoDual) -> tuple[CoDual, Callable]:
    """``np.vectorize(fn)(x)`` as one call ``fn(x)`` (``_on_whole_array``): one array block
    instead of a derived call per element. ``x``'s cotangent goes into its fdata, as ``fn``'s
    rule puts an array's."""
    out, pullback = call_rrule(fn, x)

    def array_pullback(dy: Any) -> tuple:
        pullback(dy)
        return NoRData, NoRData

    return out, array_pullback


def _run_rule(found: tuple, f: CoDual, args: tuple, kwargs: dict) -> tuple[CoDual, Callable]:
    """A registered rule, after the array_like boundary (``rules/array_like.py``): lists of
    numbers that NumPy would make arrays go through ``np.asarray``'s rule first."""
    fn = f.primal
    if not array_like.applies(fn):
        return run_rrule(found, f.fdata, args, kwargs)
    keys = array_like.conversions(fn, [a.primal for a in args], {k: v.primal for k, v in kwargs.items()})
    if not keys:
        return run_rrule(found, f.fdata, args, kwargs)
    args, kwargs = list(args), dict(kwargs)
    converted = []
    for key in keys:
        values = args if isinstance(key, int) else kwargs
        values[key], convert_pullback = run_rrule(_ASARRAY, NoFData, (values[key],), {})
        slot = array_like.rdata_slot(key, len(args), list(kwargs))
        converted.append((slot, convert_pullback))
    try:
        out, pullback = run_rrule(found, f.fdata, tuple(args), kwargs)
    except Exception as error:  # a function it called raised after partial work (issue 13)
        reroute(error, lambda inner: _converted_back(inner, converted))
        raise
    return out, _converted_back(pullback, converted)


def _converted_back(pullback: Callable, converted: list) -> Callable:
    """The pullback of a rule whose array_like arguments were converted: through ``np.asarray``'s."""
    def array_like_pullback(dy: Any) -> tuple:
        rdatas = list(pullback(dy))
        for slot, convert_pullback in reversed(converted):
            rdatas[slot] = convert_pullback(rdatas[slot])[1]
        return tuple(rdatas)

    return array_like_pullback


_ASARRAY = RRULES.lookup(np.asarray)

def _call_derived(f: CoDual, args: tuple, kwargs: dict) -> tuple[CoDual, Callable]:
    rule = derived_rule(f.primal)
    _DIRECT.note(f.primal, rule)  # later calls may run its passes directly (direct_calls.py)
    return rule(f, *args, **kwargs)


_REVERSE = CallMode(
    lookup=RRULES.lookup, run_rule=_run_rule,
    property_get=_property_get, property_set=_property_set, operator=_operator_on_user_type, gradient=_gradient,
    function=lambda f, args, kwargs: _call_derived(f, args, kwargs), method=_call_method,
    construct=_construct, partial=_call_partial, vectorized=_call_vectorized, callable_object=_call_object,
    missing=_missing, constant=lambda fn: CoDual(fn, NoFData),
)

def unwind(tape: list) -> None:
    """Undo the mutations of a forward pass that stopped with an error, so the caller's data is
    left as it was: run the recorded pullbacks (with a zero cotangent) and the inline writes'
    restorations, newest first. Best effort: the error being raised is what the user sees."""
    from .templates import NAMESPACE, WRITE_MARKER

    while tape:
        item = tape.pop()
        if item is WRITE_MARKER:  # an inline a[i] = v: residuals a, a_f, i, old below it
            old, index, _, array = tape.pop(), tape.pop(), tape.pop(), tape.pop()
            array[index] = old
        elif item is NAMESPACE["_FASTLOOP"]:  # a float loop: its writes, logged, newest first
            for array, log in tape.pop()[-1]:
                for index, old in reversed(log):
                    array[index] = old
        elif callable(item) and not isinstance(item, (type, np.ndarray)):
            try:
                item(NoRData)
            except Exception:  # noqa: BLE001 - keep undoing the rest
                pass


# --------------------------------------------------------------------------------------------
# Derived rules
# --------------------------------------------------------------------------------------------

_DERIVED = CodeCache()  # DerivedRule per function code and module


def _describe_stage(rule: "DerivedRule", line: int, stage: str) -> str:
    return describe_line(rule, line, "" if stage == "forward" else " (while running the pullback)")


def derived_rule(fn: types.FunctionType) -> "DerivedRule":
    rule = _DERIVED.get(fn)
    if rule is None:
        _refuse_yuebing_internals(fn, "reverse mode")  # nested differentiation: a clear error
        rule = _DERIVED.put(fn, DerivedRule(fn))
    return rule


class DerivedRule(SourceFunction):
    """The reverse rule of a Python function, generated from its source."""

    def __init__(self, fn: types.FunctionType) -> None:
        from .codegen import compile_generated
        from .reverse import generate_reverse

        super().__init__(fn)
        self.generated = generate_reverse(self.ir, fn.__globals__)
        self.forward, self.reverse = compile_generated(self.generated, fn, self.ir, runtime_namespace())

    def _point_at_user_line(self, error: BaseException, stage: str) -> None:
        """Add notes naming the user's file and line that each failing generated line came
        from: this rule's, and those of rules its code called directly (direct_calls.py)."""
        own = self.forward.__code__.co_filename
        user_line_notes(error, stage, lambda name: self if name == own else _DIRECT.rules_by_file.get(name),
                        _describe_stage)

    def _bind(self, fn: Any, args: tuple, kwargs: dict) -> tuple[list, list]:
        """Coduals for each parameter, and how to route each call argument's rdata back."""
        if self.simple and not kwargs and len(args) == self.n_params:
            return list(args), [("param", i) for i in range(len(args))]
        given = {**dict(enumerate(args)), **kwargs}
        coduals: list[CoDual] = []
        routes: dict[Any, tuple] = {}
        for j, (kind, payload) in enumerate(self.plan(fn, args, kwargs)):
            if kind == "arg":
                routes[payload] = ("param", j)
                coduals.append(given[payload])
            elif kind == "star":
                items = [given[key] for key in payload]
                routes.update({key: ("vararg", j, i) for i, key in enumerate(payload)})
                parts = tuple(c.fdata for c in items)
                coduals.append(CoDual(tuple(c.primal for c in items), NoFData if all(p is NoFData for p in parts) else parts))
            elif kind == "starstar":
                entries = {k: given[key] for k, key in payload.items()}
                routes.update({key: ("varkw", j, k) for k, key in payload.items()})
                coduals.append(CoDual({k: c.primal for k, c in entries.items()}, {k: slot_tangent(c) for k, c in entries.items()}))
            else:  # a default value
                coduals.append(CoDual(payload, fdata(zero_tangent(payload))))
        order = [routes[i] for i in range(len(args))] + [routes[k] for k in kwargs]
        return coduals, order

    def __call__(self, f: CoDual, *args: CoDual, **kwargs: CoDual) -> tuple[CoDual, Callable]:
        if TRACKING.depth and TRACKING.here():  # inside a try body: work done before an exception is kept
            return _partial.call_tracked(self, f, args, kwargs)
        fn = f.primal
        coduals, routes = self._bind(fn, args, kwargs)
        flat = []
        for c in coduals:
            flat.append(c.primal)
            flat.append(c.fdata)
        tape: list = []
        try:
            value, value_f = self.forward(tape, fn, f.fdata, *flat)
        except Exception as error:
            self._point_at_user_line(error, "forward")
            mark_partial(error, self.name, tape)  # undone here: an except clause must not go on
            unwind(tape)
            raise
        out = CoDual(value, value_f)
        reverse = self.reverse

        def pullback(dy: Any) -> tuple:
            try:
                param_r = reverse(tape, dy)
            except Exception as error:
                self._point_at_user_line(error, "reverse")
                raise
            return _partial.route_reverse(param_r, routes, coduals)

        return out, pullback


def _derive_for_core(f: CoDual, *args: CoDual, **kwargs: CoDual) -> tuple[CoDual, Callable]:
    return call_rrule(f, *args, **kwargs)


def runtime_namespace() -> dict[str, Any]:
    """Names every generated module can use."""
    return {
        "_CD": CoDual,
        "_NF": NoFData,
        "_NR": NoRData,
        "_rrule": call_rrule,
        "_acc": acc,
        "_global": global_value,
        "_SELF": SELF_REFERENCE,
        "_read_only": read_only,
        "_global_fdata": global_fdata,
        "_cell_fdata": cell_fdata,
        "_closure_fdata": closure_fdata,
        "_closure_rdata": closure_rdata,
        "_with_user_globals": with_user_globals,
        "_user_globals": user_globals,
        "_SHARED": SharedBox,
        "_new_cell_box": new_cell_box,
        "_STAR": Star,
        "_caught": caught,
        **TRY_NAMES,
    }


_core.derive_rrule = _derive_for_core
_partial.REVERSE = (runtime_namespace, unwind)

__all__ = ["acc", "call_rrule", "derived_rule", "DerivedRule", "describe_callable", "output", "add_tangents"]


RUNTIME_NAMES.update(runtime_namespace())  # (generated constants never take these names)
