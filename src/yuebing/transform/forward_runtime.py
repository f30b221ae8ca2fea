"""What generated forward-mode code calls at run time: rule dispatch (registered or derived),
globals and closure cells, and the cache of derived forward rules.

``call_frule(f, *duals, **kw_duals)`` is the single entry point for every call site of
forward-mode code: a registered forward rule if there is one; otherwise, for a Python function,
method, class, ``functools.partial``, callable object or ``np.vectorize``, a forward rule
*derived* from its source (generated lazily on first call and cached per code object, so
recursion and never-executed branches cost nothing). It mirrors ``runtime._dispatch``.
"""
from __future__ import annotations

import collections
import dataclasses
import types
from typing import Any

import numpy as np

from ..rules import core as _core
from ..rules.core import FRULES, Dual, MissingRuleError
from ..rules.local_classes import class_level_tangent
from ..rules import array_like, outside_state
from ..rules.core import frule as registered_frule
from ..rules.batched import BATCH, is_batched
from ..rules.declare import FORWARD
from ..rules.numpy_creation import _writable_diagonal
from ..rules.numpy_vectorize import call_definition, probes_first, pyfunc_tangent
from ..tangents import MutableTangent, NoTangent, Tangent, zero_tangent
from .direct_calls import FORWARD as _DIRECT, FORWARD_ZERO, describe_line, user_line_notes
from .exceptions import caught
from .forward_blocks import zero_view
from .forward_random import WATCH, before_rule, save_states
from .protocols import (GRADIENT_CALLS, CallMode, Candidate, CodeCache, NestedDifferentiationError, SourceFunction,
                        UndefinedGlobal, _refuse_yuebing_internals, dispatch, property_function, run_operator)
from .dataclass_construction import construct_forward
from .dual_vectorize import whole_array
from .batched_forward import looped, run_batched
from .star_arrays import is_star_array, star_duals
from .class_calls import extra_arguments, is_generated_init, is_namedtuple, make_namedtuple, namedtuple_fields, with_aliases, without_init
from .new_construction import builder, by_new_forward
from .frozen_objects import frozen_tangent, is_frozen
from ..rules.bunch_records import record_extras
from .generated_text import RUNTIME_NAMES
from .globals_and_cells import (SELF_REFERENCE, SharedBox, boxes_by_cell, cell_box, global_value, new_cell_box,
                                outside_global, read_only, user_globals, with_user_globals, without_tangent)

# --------------------------------------------------------------------------------------------
# Tangents of constants, globals and closures
# --------------------------------------------------------------------------------------------

_NO_TANGENT_TYPES = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, np.ufunc,
                     type(np.sum),  # NumPy's functions (np.sum, np.linalg.solve): no tangent, found without a walk
                     int, str, bool, type(None), UndefinedGlobal)


def zero_tangent_of(value: Any) -> Any:
    """A fresh zero tangent of ``value`` (``NoTangent`` for what has none)."""
    kind = type(value)
    if kind is float or kind is np.float64:
        return 0.0
    if kind in _CONSTANT_TYPES:
        return NoTangent
    try:
        return zero_tangent(value)
    except TypeError:
        return NoTangent


FORWARD_ZERO.append(zero_tangent_of)  # direct calls' default values (direct_calls.py)


_CONSTANT_TYPES = frozenset({int, bool, str, type(None), np.int64, np.bool_})


def global_tangent(value: Any) -> Any:
    """Globals are constants of the differentiation: a zero tangent; a mutable global (a list,
    a dict, an object) has one for the whole call (``rules/outside_state.py``)."""
    if isinstance(value, _NO_TANGENT_TYPES):
        if type(value) is types.FunctionType and value.__closure__ and not outside_state.active():
            if value in FRULES.by_function:  # a primitive (SciPy's decorated functions): its rule
                return NoTangent  # never reads its tangent, whose boxes cost 60 us per read
            return zero_tangent_of(value)  # boxes for its cells, for this read
        return NoTangent  # in a scope, a closure's cells are outside state of their own (cell_tangent)
    if type(value) is np.ndarray and value.dtype.kind in "fc" and not value.flags.writeable:
        return zero_view(value)  # a constant array (read-only): zeros costing nothing (forward_blocks.py)
    if isinstance(value, (float, int, complex, bool, str, np.ndarray)) or _draws_numbers(value):
        return zero_tangent_of(value)
    return outside_state.shared("tangent", value, zero_tangent_of)


def _draws_numbers(value: Any) -> bool:
    """A method of NumPy's random generators (``np.random.normal``): its state is the random rules'
    business (``rules/numpy_random.py``), not outside state carrying a tangent."""
    return isinstance(getattr(value, "__self__", None), (np.random.RandomState, np.random.Generator))


def cell_tangent(fn_t: Any, name: str, cell: Any = None) -> Any:
    """The tangent box of closure variable ``name`` from a function's tangent (``cell_box``)."""
    return cell_box(fn_t, name, cell, "tangent", NoTangent, zero_tangent_of)


def closure_tangent(fn: Any, captured: dict) -> Any:
    """Tangent of a function created inside differentiated code: one box per captured variable,
    holding the variable's tangent (its tangent object itself for mutable data: aliasing)."""
    if not isinstance(fn, types.FunctionType) or not fn.__closure__ \
            or without_tangent(fn, any(isinstance(e, SharedBox) or e is SELF_REFERENCE for e in captured.values())):
        return NoTangent
    boxes = {}
    helpers = boxes_by_cell(captured)
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
        entry = captured.get(name)
        if isinstance(entry, SharedBox):
            boxes[name] = entry.box
        elif entry is not SELF_REFERENCE:
            contents = NoTangent if entry is None else entry[1]  # (None: a global generated code keeps in a local)
            if entry is None and outside_global(fn, name, cell):
                contents = global_tangent(cell.cell_contents)  # (the call's one tangent of a module's dict)
            box = helpers.get(id(cell))
            boxes[name] = box if box is not None and box.fields.get("cell_contents") is contents \
                else MutableTangent(types.CellType, {"cell_contents": contents})
        else:
            boxes[name] = MutableTangent(types.CellType, {"cell_contents": NoTangent})
    result = Tangent(types.FunctionType, boxes)
    for name, entry in captured.items():
        if entry is SELF_REFERENCE:  # a recursive nested function: its own tangent
            boxes[name].fields["cell_contents"] = result
    return result


# --------------------------------------------------------------------------------------------
# Star arguments
# --------------------------------------------------------------------------------------------


class FStar:
    """Marks ``*seq`` at a call site (generated code: ``_STAR(dual)``)."""

    __slots__ = ("dual",)

    def __init__(self, dual: Dual) -> None:
        self.dual = dual


def _expand_star(seq: Dual) -> list[Dual]:
    primal, t = seq.primal, seq.tangent
    if isinstance(primal, tuple):
        parts = t if isinstance(t, tuple) else (NoTangent,) * len(primal)
        return [Dual(x, p if p is not NoTangent else zero_tangent_of(x)) for x, p in zip(primal, parts)]
    if isinstance(primal, (list, collections.deque)) and isinstance(t, (list, collections.deque)):  # (a deque's tangent is one)
        return [Dual(x, p) for x, p in zip(primal, t)]
    if is_star_array(primal):
        if BATCH.size and is_batched(t, primal):  # f(*x) in a batched pass: the batch axis stays first
            return [Dual(primal[i], t[:, i] if isinstance(primal[i], np.ndarray) else t[:, i].copy())
                    for i in range(len(primal))]
        return star_duals(seq)
    if type(primal) is list:  # a list without a tangent list: constants
        return [Dual(x, zero_tangent_of(x)) for x in primal]
    # a set, an iterator, a dict view, a deque made in the function, a user iterable: listed with
    # its derivatives, in the order CPython unpacks it (``runtime._listed_star``)
    return _expand_star(call_frule(Dual(list, NoTangent), seq))


def _as_dual(v: Any) -> Dual:
    return v if isinstance(v, Dual) else Dual(v, zero_tangent_of(v))


# --------------------------------------------------------------------------------------------
# Dispatch
# --------------------------------------------------------------------------------------------


def call_frule(f: Dual, *args: Any, _STARSTAR: Dual | None = None, **kwargs: Any) -> Dual:
    """Forward rule of any call ``f(*args, **kwargs)`` on duals (see the module docstring)."""
    if args and type(args[-1]) is FStar:
        args = args[:-1] + tuple(_expand_star(args[-1].dual))
    if _STARSTAR is not None:
        mapping = _STARSTAR.primal
        if not isinstance(mapping, dict):
            raise TypeError(f"argument after ** must be a mapping, not {type(mapping).__qualname__}")
        mapping_t = _STARSTAR.tangent if isinstance(_STARSTAR.tangent, dict) else {}
        extra = {k: Dual(v, mapping_t[k] if k in mapping_t else zero_tangent_of(v)) for k, v in mapping.items()}
        duplicate = extra.keys() & kwargs.keys()
        if duplicate:
            raise TypeError(f"got multiple values for keyword argument {sorted(duplicate)[0]!r}")
        kwargs = {**kwargs, **extra}
    return _dispatch(f, args, kwargs)


def _property_get(args: tuple) -> Dual | None:
    """``getattr(obj, name)`` for a property of a user class: its getter, derived from source."""
    getter = property_function(getattr, [a.primal for a in args])
    return None if getter is None else call_frule(Dual(getter, NoTangent), args[0])


def _property_set(args: tuple) -> Dual | None:
    """``setattr(obj, name, value)`` for a property of a user class: its setter, derived."""
    setter = property_function(setattr, [a.primal for a in args])
    if setter is None:
        return None
    call_frule(Dual(setter, NoTangent), args[0], args[2])
    return Dual(None, NoTangent)


def _operator_on_user_type(fn: Any, args: tuple, kwargs: dict) -> Dual | None:
    """Python's operator protocol for user classes (``transform/protocols.py``)."""
    if kwargs or not args:
        return None
    return run_operator(fn, args, _primal_of, _call_dunder, _primal_of)


def _primal_of(a: Dual) -> Any:
    return a.primal


def _call_dunder(candidate: Candidate, operands: tuple) -> Dual:
    return call_frule(Dual(candidate.method, NoTangent), *operands)


def _dispatch(f: Dual, args: tuple, kwargs: dict) -> Dual:
    return dispatch(_FORWARD, f, f.primal, args, kwargs)


def _call_object(f: Dual, call: types.FunctionType, args: tuple, kwargs: dict) -> Dual:
    """A callable object: its class's ``__call__`` bound to it."""
    return _call_method(Dual(types.MethodType(call, f.primal), Tangent(types.MethodType, {"__self__": f.tangent})),
                        args, kwargs)


def _gradient(f: Dual, args: tuple, kwargs: dict) -> Dual:
    if WATCH.active:
        save_states()  # the random states before any draw of the nested pass (forward_random.py)
    if BATCH.size:  # a batched pass: one forward-over-reverse pass per direction
        return looped(lambda g, a, kw: GRADIENT_CALLS["forward"](g, *a, **kw), f, args, kwargs)
    return GRADIENT_CALLS["forward"](f, *args, **kwargs)  # forward over yb.grad: forward-over-reverse


def _missing(fn: Any) -> Exception:
    return MissingRuleError(fn, "forward")


def _call_method(f: Dual, args: tuple, kwargs: dict) -> Dual:
    method = f.primal
    owner = method.__self__
    if isinstance(f.tangent, Tangent) and "__self__" in f.tangent.fields:
        self_t = f.tangent.fields["__self__"]
    else:
        self_t = zero_tangent_of(owner)
    return _dispatch(Dual(method.__func__, NoTangent), (Dual(owner, self_t),) + args, kwargs)


def _call_partial(f: Dual, args: tuple, kwargs: dict) -> Dual:
    p = f.primal
    pt = f.tangent if isinstance(f.tangent, Tangent) else None
    stored_t = pt.fields.get("args", NoTangent) if pt else NoTangent
    stored = [Dual(a, stored_t[i] if isinstance(stored_t, tuple) else zero_tangent_of(a)) for i, a in enumerate(p.args)]
    kw_t = pt.fields.get("keywords", NoTangent) if pt else NoTangent
    stored_kw = {k: Dual(v, kw_t[k] if isinstance(kw_t, dict) and k in kw_t else zero_tangent_of(v))
                 for k, v in p.keywords.items()}
    func_t = pt.fields.get("func", NoTangent) if pt else NoTangent
    return _dispatch(Dual(p.func, func_t), tuple(stored) + args, {**stored_kw, **kwargs})


def _construct(f: Dual, args: tuple, kwargs: dict) -> Dual:
    cls = f.primal
    build = builder(cls, "forward")
    if build is not None:  # a metaclass's __call__ or a __new__ in Python (new_construction.py)
        return by_new_forward(cls, args, kwargs, _dispatch, build)
    if dataclasses.is_dataclass(cls) and is_generated_init(cls):
        return _construct_dataclass(cls, args, kwargs)
    if is_namedtuple(cls):
        items = namedtuple_fields(cls, args, kwargs)
        tangents = [d.tangent if isinstance(d, Dual) else _default_tangent(d) for d in items]
        given = extra_arguments(cls, kwargs)  # a tuple bunch's attributes: tangents beside it (rules/bunch_data.py)
        extras = {k: v.primal if isinstance(v, Dual) else v for k, v in given.items()}
        y = make_namedtuple(cls, [d.primal if isinstance(d, Dual) else d for d in items], extras)
        record_extras("tangent", y, list(extras.values()), [v.tangent if isinstance(v, Dual) else NoTangent
                                                           for v in given.values()])
        return Dual(y, NoTangent if all(t is NoTangent for t in tangents) else with_aliases(y, tuple.__new__(cls, tangents)))
    init = cls.__init__
    if without_init(cls, args, kwargs):
        return Dual(object.__new__(cls), MutableTangent(cls, {}))
    if cls.__new__ is not object.__new__ or not isinstance(init, types.FunctionType):
        raise MissingRuleError(cls, "forward", reason="it is a class whose construction yuebing cannot "
                               "derive (a __new__ or an __init__ without Python source)")
    obj = object.__new__(cls)
    obj_t = MutableTangent(cls, {})
    _dispatch(Dual(init, NoTangent), (Dual(obj, obj_t),) + args, kwargs)
    return Dual(obj, frozen_tangent(cls, obj_t) if is_frozen(obj) else obj_t)  # (frozen_objects.py)


def _default_tangent(value: Any) -> Any:
    """A named tuple field's default: its tangent if a class body in the function computed it."""
    t = class_level_tangent(value)
    return zero_tangent_of(value) if t is None else t


def _construct_dataclass(cls: type, args: tuple, kwargs: dict) -> Dual:
    """A dataclass through its generated ``__init__``, then ``__post_init__`` (``dataclass_construction.py``)."""
    return construct_forward(cls, args, kwargs, lambda f, a: _dispatch(f, a, {}))


def _call_vectorized(f: Dual, args: tuple, kwargs: dict) -> Dual:
    """``np.vectorize(pyfunc)(*arrays)``: ``pyfunc``'s forward rule applied element by element."""
    if BATCH.size:  # a batched pass: the element-by-element rule once per direction
        return looped(lambda g, a, kw: _call_vectorized(g, a, kw), f, args, kwargs)
    vec = f.primal
    if kwargs or len(args) != 1 or vec.excluded or vec.signature is not None:
        # as its definition in covered code, derived like user code
        definition, constants = call_definition(vec)
        return call_frule(Dual(definition, NoTangent), Dual(vec.pyfunc, pyfunc_tangent(f.tangent)),
                          *(Dual(c, NoTangent) for c in constants), *args, **kwargs)
    x = args[0]
    whole = _on_the_array(vec, f.tangent, x)
    if whole is not None:
        return whole
    xs = np.asarray(x.primal)
    flat = xs.ravel()
    t = x.tangent
    t_flat = np.broadcast_to(np.asarray(t), xs.shape).ravel() if isinstance(t, (np.ndarray, float)) else None
    func = Dual(vec.pyfunc, pyfunc_tangent(f.tangent))  # a closure's tangent: its captured values'
    values, tangents = [], []
    is_float = xs.dtype.kind == "f"
    elements = flat.tolist() if is_float else flat  # Python floats: what the rules are fastest on
    element_tangents = t_flat.tolist() if is_float and t_flat is not None else None
    direct = None  # after the first element: pyfunc's generated code, called without dispatch
    probe = probes_first(vec) and len(elements) > 0  # NumPy's call on the first element first, unused
    for i in ([0] if probe else []) + list(range(len(elements))):
        v = elements[i]
        v_t = element_tangents[i] if element_tangents is not None else zero_tangent_of(v)
        if direct is not None:
            try:
                value, value_t = direct(vec.pyfunc, func.tangent, v, v_t)
            except Exception as error:
                _DERIVED.get(vec.pyfunc)._point_at_user_line(error)
                raise
        else:
            out = call_frule(func, Dual(v, v_t))
            value, value_t = out.primal, out.tangent
            direct = direct_pass(vec.pyfunc, 1)
        values.append(value)
        tangents.append(value_t)
    if probe:
        values, tangents = values[1:], tangents[1:]
    y = np.asarray(values, dtype=vec.otypes[0] if vec.otypes else None).reshape(xs.shape)
    if y.dtype.kind not in "fc":
        return Dual(y, NoTangent)
    dy = np.array([0.0 if d is NoTangent else d for d in tangents], dtype=y.dtype).reshape(xs.shape)
    if not isinstance(x.primal, np.ndarray) and np.ndim(y) == 0:
        return Dual(y, dy)
    return Dual(y, dy)


def _on_the_array(vec: np.vectorize, vec_t: Any, x: Dual) -> Dual | None:
    """``vec(x)`` by one call of ``pyfunc``'s forward rule on the whole float64 array ``x`` when
    ``pyfunc``'s body is elementwise arithmetic of its parameter (``dual_vectorize.whole_array``:
    each statement gives on the array what it gives on each element), else None."""
    p, t = x.primal, x.tangent
    if type(p) is not np.ndarray or p.dtype != np.float64 or not p.ndim or not p.size or type(t) is not np.ndarray \
            or t.dtype != np.float64 or t.shape != p.shape or vec.excluded or vec.otypes not in (None, "d") \
            or not whole_array(vec.pyfunc):
        return None
    out = call_frule(Dual(vec.pyfunc, pyfunc_tangent(vec_t)), Dual(p, t))
    y, dy = out.primal, out.tangent
    if type(y) is not np.ndarray or y.dtype != np.float64 or y.shape != p.shape or type(dy) is not np.ndarray:
        return None  # (it cannot: the body is elementwise)
    return Dual(y, dy)


# --------------------------------------------------------------------------------------------
# Derived forward rules
# --------------------------------------------------------------------------------------------

_DERIVED = CodeCache()  # DerivedFRule per function code and module




def _run_rule(found: Any, f: Dual, args: tuple, kwargs: dict) -> Dual:
    """A registered forward rule; in a batched pass, by ``batched_forward.run_batched``."""
    if WATCH.active and WATCH.saved is None:  # the random states before the pass's first draw
        before_rule(f.primal if isinstance(f, Dual) else f, args)
    if BATCH.size:
        return run_batched(found, f, args, kwargs, _run_one_rule)
    return _run_one_rule(found, f, args, kwargs)


def _run_one_rule(found: Any, f: Dual, args: tuple, kwargs: dict) -> Dual:
    """A registered forward rule, after the array_like boundary (``rules/array_like.py``): lists
    of numbers that NumPy would make arrays go through ``np.asarray``'s rule first."""
    fn = f.primal if isinstance(f, Dual) else f
    if array_like.applies(fn):
        keys = array_like.conversions(fn, [a.primal for a in args], {k: v.primal for k, v in kwargs.items()})
        if keys:
            args, kwargs = list(args), dict(kwargs)
            for key in keys:
                values = args if isinstance(key, int) else kwargs
                values[key] = registered_frule(np.asarray, values[key])
    return registered_frule(f, *args, **kwargs)


def _call_derived(f: Dual, args: tuple, kwargs: dict) -> Dual:
    rule = derived_frule(f.primal)
    _DIRECT.note(f.primal, rule)  # later calls may run it directly (direct_calls.py)
    return rule(f, *args, **kwargs)


_FORWARD = CallMode(
    lookup=FRULES.lookup, run_rule=_run_rule,
    property_get=_property_get, property_set=_property_set, operator=_operator_on_user_type, gradient=_gradient,
    function=lambda f, args, kwargs: _call_derived(f, args, kwargs), method=_call_method,
    construct=_construct, partial=_call_partial, vectorized=_call_vectorized, callable_object=_call_object,
    missing=_missing, constant=lambda fn: Dual(fn, NoTangent),
)


def run_derived_directly(fn: Any, arguments: list) -> tuple | None:
    """``(value, tangent)`` of plain Python function ``fn`` at ``arguments`` (primal, tangent,
    primal, tangent, ...), by its derived rule's generated code, skipping dispatch, when that is
    what dispatch would run (as a direct call site checks, ``direct_calls.py``): its rule was
    derived before for this code and module and takes exactly these positional arguments, and no
    rule is registered for ``fn``, nor is it made by ``yb.grad``. None otherwise."""
    direct = direct_pass(fn, len(arguments) // 2)
    return None if direct is None or len(arguments) % 2 else run_direct(direct, fn, arguments)


def direct_pass(fn: Any, n_args: int) -> Any:
    """The generated forward code of plain Python function ``fn`` when dispatch would run it on
    ``n_args`` positional arguments (see ``run_derived_directly``), or None."""
    if type(fn) is not types.FunctionType:
        return None
    entry = _DIRECT.entries.get(fn.__code__)
    if entry is None or entry[0] is not fn.__globals__ or entry[1] != n_args \
            or fn in FRULES.by_function or hasattr(fn, "__yuebing_gradient__"):
        return None
    return entry[2]


_SPECULATIVE: dict = {}  # code -> (globals, the speculative program or None)


def speculative_pass(fn: Any) -> Any:
    """The speculative forward program of plain function ``fn`` (``forward_speculative.py``),
    built at the first call, or None (none can be made, or one stopped: ``give_up_speculating``).
    Only for a function ``direct_pass`` found."""
    entry = _SPECULATIVE.get(fn.__code__)
    if entry is not None and entry[0] is fn.__globals__:
        return entry[1]
    from .forward_speculative import speculative_forward

    rule = _DERIVED.get(fn)
    program = None if rule is None else speculative_forward(rule.ir, fn, runtime_namespace())
    _SPECULATIVE[fn.__code__] = (fn.__globals__, program)
    return program


def give_up_speculating(fn: Any) -> None:
    """``fn``'s speculative program stopped: its JVPs take the ordinary path from now on."""
    _SPECULATIVE[fn.__code__] = (fn.__globals__, None)


def run_direct(direct: Any, fn: Any, arguments: list) -> tuple:
    """``(value, tangent)`` of plain function ``fn`` by its generated forward code ``direct``
    (``direct_pass``) at ``arguments`` (primal, tangent, ...); an error names the user's line."""
    try:
        return direct(fn, NoTangent, *arguments)
    except Exception as error:
        _DERIVED.get(fn)._point_at_user_line(error)
        raise


def derived_frule(fn: types.FunctionType) -> "DerivedFRule":
    """The forward rule of Python function ``fn``, generated on first use, cached per code."""
    rule = _DERIVED.get(fn)
    if rule is None:
        _refuse_yuebing_internals(fn)
        rule = _DERIVED.put(fn, DerivedFRule(fn))
    return rule


class DerivedFRule(SourceFunction):
    """The forward rule of a Python function, generated from its source."""

    def __init__(self, fn: types.FunctionType) -> None:
        from .forward import compile_forward, generate_forward

        super().__init__(fn)
        self.generated = generate_forward(self.ir, fn.__globals__)
        self.forward = compile_forward(self.generated, fn, runtime_namespace())

    @property
    def source(self) -> str:
        return self.generated.source

    def _point_at_user_line(self, error: BaseException) -> None:
        """Add notes naming the user's file and line that each failing generated line came
        from: this rule's, and those of rules its code called directly (direct_calls.py)."""
        own = self.forward.__code__.co_filename
        user_line_notes(error, "forward", lambda name: self if name == own else _DIRECT.rules_by_file.get(name),
                        lambda rule, line, stage: describe_line(rule, line, " (forward mode)"))

    def _bind(self, fn: Any, args: tuple, kwargs: dict) -> list:
        """A dual for each parameter of the generated function, in its order."""
        if self.simple and not kwargs and len(args) == self.n_params:
            return [_as_dual(a) for a in args]
        given = {**dict(enumerate(args)), **kwargs}
        duals = []
        for kind, payload in self.plan(fn, args, kwargs):
            if kind == "arg":
                duals.append(_as_dual(given[payload]))
            elif kind == "star":
                items = [_as_dual(given[key]) for key in payload]
                parts = tuple(d.tangent for d in items)
                duals.append(Dual(tuple(d.primal for d in items), NoTangent if all(p is NoTangent for p in parts) else parts))
            elif kind == "starstar":
                entries = {k: _as_dual(given[key]) for k, key in payload.items()}
                duals.append(Dual({k: d.primal for k, d in entries.items()}, {k: d.tangent for k, d in entries.items()}))
            else:
                duals.append(_as_dual(payload))  # a default value: a fresh zero tangent
        return duals

    def __call__(self, f: Dual, *args: Any, **kwargs: Any) -> Dual:
        duals = self._bind(f.primal, args, kwargs)
        flat = []
        for d in duals:
            flat.append(d.primal)
            flat.append(d.tangent)
        try:
            value, value_t = self.forward(f.primal, f.tangent, *flat)
        except Exception as error:
            self._point_at_user_line(error)
            raise
        return Dual(value, value_t)


def runtime_namespace() -> dict[str, Any]:
    """Names every generated forward-mode module can use."""
    return {
        "_D": Dual,
        "_NT": NoTangent,
        "_frule": call_frule,
        "_gt": global_tangent,
        "_zt": zero_tangent_of,
        "_global": global_value,
        "_read_only": read_only,
        "_cell_tangent": cell_tangent,
        "_closure_tangent": closure_tangent,
        "_with_user_globals": with_user_globals,
        "_user_globals": user_globals,
        "_SHARED": SharedBox,
        "_new_cell_box": new_cell_box,
        "_STAR": FStar,
        "_FWD": FORWARD,
        "_BATCH": BATCH,
        "_SELF": SELF_REFERENCE,
        "_caught": caught,
        "_zero_view": zero_view,  # (forward_templates.new_arrays_and_views)
        "_writable_diagonal": _writable_diagonal,
    }


def _derive_for_core(f: Any, *args: Any, **kwargs: Any) -> Dual:
    """``rules.core.frule``'s fallback for callables without a registered forward rule."""
    if not isinstance(f, Dual):
        f = Dual(f, global_tangent(f) if not isinstance(f, types.FunctionType) else zero_tangent_of(f))
    return call_frule(f, *(_as_dual(a) for a in args), **{k: _as_dual(v) for k, v in kwargs.items()})


_core.derive_frule = _derive_for_core

__all__ = ["DerivedFRule", "call_frule", "closure_tangent", "derived_frule", "global_tangent", "runtime_namespace"]


RUNTIME_NAMES.update(runtime_namespace())  # (generated constants never take these names)
