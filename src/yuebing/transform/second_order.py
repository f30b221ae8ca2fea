"""Stage 5c: forward-over-reverse -- the forward transform composed with the reverse transform.

DESIGN §7 asks for second derivatives by applying the forward transform to the generated
reverse-mode code. We compose the two transforms at generation time instead of parsing generated
code a second time: ``transform/dual_reverse.DualReverseGenerator`` emits the reverse-mode program
of a function in which every value carries the tangent the forward transform would give it, and
call sites pass 4-tuples ``(primal, fdata, tangent, fdata_tangent)``.

The runtime helpers the reverse program calls have their forward rules here: ``call_rrule2`` is
the forward rule of ``runtime.call_rrule`` (it returns the 4-tuple output and a *dual pullback*
``pullback(dy, dy_tangent) -> (rdata, rdata_tangent)``), ``runtime.acc`` is linear so its forward
rule is itself applied to the tangents, and globals are constants (zero tangents). Primitive
rules come from ``rules/second_order.py``; Python functions get a dual rule (``DualRule``)
generated from their source, cached per code object.

Generated code, printed by ``yb.show(f, mode="hvp")``, reads like the reverse program with a
``_d`` twin on every line.
"""
from __future__ import annotations

import itertools
import math
import linecache
import types
from typing import Any, Callable

import numpy as np

from ..rules.core import RRULES, SecondOrderError, describe_callable  # (imports at module level: in a hot
from ..rules._partial_work import reroute
from ..rules import aliasing_views, array_like, outside_state  # function each costs a failed lookup and a formatted error)
from ..rules.numpy_vectorize import call_definition, probes_first, pyfunc_fdata, pyfunc_tangent
from ..tangents import MutableTangent, NoFData, NoRData, NoTangent, Tangent
from .globals_and_cells import (SELF_REFERENCE, SharedBox, cell_fdata, closure_fdata, closure_rdata, global_fdata,
                                outside_global,
                                global_value, holds_mutable, new_cell_box, read_only, user_globals, with_user_globals,
                                without_tangent)
from .lifting import lookup_second_order, run_second_order
from .lifting_objects import construct
from . import second_order_calls as _calls
from . import batched_second_order as _batched
from ..rules.batched import BATCH
from . import lifting as _lifting
from .exceptions import EFFECT_MARKERS, TRACKING, TRY_NAMES, caught, mark_partial
from . import partial_calls as _partial
from .direct_calls import SECOND as _DIRECT, note_user_lines
from .dual_templates import at_element, nan_batch
from .dual_vectorize import over_elements
from .dual_blocks import NAMESPACE as DUAL_BLOCKS
from .dual_float_loops import NAMESPACE as DUAL_LOOPS
from .dual_tuples import NAMESPACE as DUAL_TUPLES
from .protocols import GRADIENT_CALLS, CallMode, CodeCache, SourceFunction, dispatch, property_function, run_operator
from .protocols import _refuse_numpy_forms as refuse_numpy_forms
from .dual_reverse import DualReverseGenerator
from .templates import FLOAT_TYPES, Fast
from .generated_text import RUNTIME_NAMES


# --------------------------------------------------------------------------------------------
# Runtime: forward rules of the reverse program's helpers
# --------------------------------------------------------------------------------------------


def call_rrule2(f: tuple, *args: tuple, **kwargs: tuple) -> tuple[tuple, Callable]:
    """The forward rule of ``runtime.call_rrule``: run ``f`` on 4-tuples ``(primal, fdata,
    tangent, fdata_tangent)``; return the output 4-tuple and a dual pullback."""
    if "_STARSTAR" in kwargs:
        return _calls.call_with_starstar(f, args, kwargs)
    if "_STAR" in kwargs:
        return _calls.call_with_star(f, args, kwargs)
    return dispatch(_SECOND_ORDER, f, f[0], args, kwargs)


_FIRST_ORDER_ONLY = object()  # lookup's answer for a primitive with no second-order rule


def _lookup(fn: Any) -> Any:
    """The second-order rule of ``fn``; or why there is none, for a primitive. (``yb.grad`` and
    ``yb.value_and_grad`` have theirs from ``transform/third_order.py``.)"""
    found = lookup_second_order(fn)
    if found is not None:
        return found
    if RRULES.lookup(fn) is not None:  # a primitive: never transformed from its source
        return _FIRST_ORDER_ONLY
    return None


def _run_rule(found: Any, f: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    """A primitive's second-order rule; in a batched pass, by ``batched_second_order.run_rule``."""
    if found is _FIRST_ORDER_ONLY:
        raise _no_rule(f[0])
    if BATCH.size:
        return _batched.run_rule(found, f, args, kwargs, _run_unbatched)
    return _run_unbatched(found, f, args, kwargs)


def _run_unbatched(found: Any, f: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    """A primitive's second-order rule, after the array_like boundary (``rules/array_like.py``):
    lists of numbers that NumPy would make arrays go through ``np.asarray``'s rule first."""
    fn = f[0]
    # (in a batched pass a Python definition converts its own lists, batched like user code: the
    # conversion here is unbatched and would lay a list of batched floats out the wrong way round)
    keys = array_like.applies(fn) and not (BATCH.size and getattr(found[0], "second_order_kind", None) == "python") \
        and array_like.conversions(fn, [a[0] for a in args], {k: v[0] for k, v in kwargs.items()})
    if not keys:
        return run_second_order(found, f, args, kwargs)
    args, kwargs = list(args), dict(kwargs)
    converted = []
    asarray = lookup_second_order(np.asarray)
    for key in keys:
        values = args if isinstance(key, int) else kwargs
        values[key], convert_pullback = run_second_order(asarray, _ASARRAY, (values[key],), {})
        slot = array_like.rdata_slot(key, len(args), list(kwargs))
        converted.append((slot, convert_pullback))
    try:
        out, pullback = run_second_order(found, f, tuple(args), kwargs)
    except Exception as error:  # a function it called raised after partial work (issue 13)
        reroute(error, lambda inner: _converted_back(inner, converted))
        raise
    return out, _converted_back(pullback, converted)


def _converted_back(pullback: Callable, converted: list) -> Callable:
    """The pullback of a rule whose array_like arguments were converted: through ``np.asarray``'s."""
    def array_like_pullback(dy: Any, dy_d: Any) -> tuple:
        rs, rsd = (list(r) for r in pullback(dy, dy_d))
        for slot, convert_pullback in reversed(converted):
            crs, crsd = convert_pullback(rs[slot], rsd[slot])
            rs[slot], rsd[slot] = crs[1], crsd[1]
        return tuple(rs), tuple(rsd)

    return array_like_pullback


_ASARRAY = (np.asarray, NoFData, NoTangent, NoFData)


def _gradient(f: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    """A call of a function made by ``yb.grad``: third derivatives (``transform/third_order.py``)."""
    if BATCH.size:  # before it runs: the Hessian's columns are then computed one pass each
        raise _batched.Unbatched("third derivatives run one direction per pass")
    return GRADIENT_CALLS["second"](f, args, kwargs)


def _call_function(f: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    rule = dual_rule(f[0])
    _DIRECT.note(f[0], rule)  # later calls may run its passes directly (direct_calls.py)
    return rule(f, *args, **kwargs)


def _call_method(f: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    """A bound method: its function with the owner (and the owner's fdata and tangents) first."""
    fn = f[0]
    if type(fn.__func__) is not types.FunctionType:  # a method of a C type without a rule
        raise _no_rule(fn)
    owner = (fn.__self__, getattr(f[1], "__self__", NoFData), getattr(f[2], "__self__", NoTangent),
             getattr(f[3], "__self__", NoFData))
    func4 = (fn.__func__, NoFData, NoTangent, NoFData)
    found = lookup_second_order(fn.__func__)  # a Python function with a declared rule (scipy.stats' methods)
    if found is not None:
        out, pullback = run_second_order(found, func4, (owner, *args), kwargs)
    else:
        out, pullback = _call_function(func4, (owner, *args), kwargs)  # noted for direct calls

    def method_pullback(dy: Any, dy_d: Any) -> tuple:
        rs, rsd = pullback(dy, dy_d)
        return (_method_rdata(rs[1]),) + rs[2:], (_method_rdata(rsd[1]),) + rsd[2:]

    return out, method_pullback


def _construct(f: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:

    return construct(f, args, kwargs)


def _call_object(f: tuple, call: types.FunctionType, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    """A callable object: its class's ``__call__`` (by its rule if it has one, as yb.flatten's
    unflatten does), the object first."""

    found = lookup_second_order(call)
    try:
        if found is not None:
            out, pullback = run_second_order(found, (call, NoFData, NoTangent, NoFData), (f, *args), kwargs)
        else:
            out, pullback = dual_rule(call)((call, NoFData, NoTangent, NoFData), f, *args, **kwargs)
    except Exception as error:  # a __call__ that raised after partial work: routed alike (issue 13)
        reroute(error, _object_routed)
        raise
    return out, _object_routed(pullback)


def _object_routed(pullback: Callable) -> Callable:
    def call_pullback(dy: Any, dy_d: Any) -> tuple:
        rs, rsd = pullback(dy, dy_d)
        return tuple(rs[1:]), tuple(rsd[1:])  # the object's rdata is the callee's first

    return call_pullback


def _call_vectorized(f: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    """``np.vectorize(pyfunc)(x)``: the dual rule of the same computation written as a list
    comprehension (``rules.second_order.vectorized_call``), with what first order supports."""
    from ..rules.differentiated import vectorized_call

    vec = f[0]
    pyfunc = (vec.pyfunc, pyfunc_fdata(f[1]), pyfunc_tangent(f[2]), pyfunc_fdata(f[3]))  # (numpy_vectorize.py)
    if kwargs or len(args) != 1 or vec.excluded or vec.signature is not None:
        return _vectorized_several(vec, pyfunc, args, kwargs)
    fast = over_elements(vec, pyfunc, args[0], call_rrule2)  # a float64 array, element by element (dual_vectorize.py)
    if fast is not None:
        return fast
    probe = (probes_first(vec), NoFData, NoTangent, NoFData)  # NumPy's call on the first element first
    out, pullback = dual_rule(vectorized_call)((vectorized_call, NoFData, NoTangent, NoFData), pyfunc, *args, probe)

    def vectorized_pullback(dy: Any, dy_d: Any) -> tuple:
        rs, rsd = pullback(dy, dy_d)  # (definition, pyfunc, x, probe): the object's rdata is none
        return (NoRData, rs[2]), (NoRData, rsd[2])

    return out, vectorized_pullback


def _vectorized_several(vec: np.vectorize, pyfunc: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    """Several arguments, keywords, ``excluded`` ones or a signature: the dual rule of the
    definition ``rules.numpy_vectorize.call_definition`` gives."""
    definition, values = call_definition(vec)
    constants = [(c, NoFData, NoTangent, NoFData) for c in values]
    out, pullback = dual_rule(definition)((definition, NoFData, NoTangent, NoFData), pyfunc, *constants, *args, **kwargs)
    skip = 2 + len(constants)  # the rdatas of (definition, pyfunc, *constants)

    def several_pullback(dy: Any, dy_d: Any) -> tuple:
        rs, rsd = pullback(dy, dy_d)  # (definition, pyfunc, *constants, *args, **kwargs)
        return (NoRData, *rs[skip:]), (NoRData, *rsd[skip:])

    return out, several_pullback



def _method_rdata(owner_rdata: Any) -> Any:
    """A bound method's rdata carries its owner's (what ``getattr``'s pullback reads)."""
    from ..tangents import Tangent

    return NoRData if owner_rdata is NoRData else Tangent(types.MethodType, {"__self__": owner_rdata})


def _call_python(method: types.FunctionType, args: tuple) -> tuple[tuple, Callable]:
    """Call a user class's Python method (a dunder, a property function) through its dual rule,
    or its declared second-order rule (``np.poly1d.__truediv__``'s definition)."""
    f4 = (method, NoFData, NoTangent, NoFData)
    found = lookup_second_order(method)
    if found is not None:
        return run_second_order(found, f4, args, {})
    refuse_numpy_forms(method)  # numpy.ma's methods without a definition are refused, as dispatch does
    out, pullback = dual_rule(method)(f4, *args)
    return out, pullback


def _property_get(args: tuple) -> tuple[tuple, Callable] | None:
    """``getattr(obj, name)`` for a property of a user class: its getter's dual rule."""
    getter = property_function(getattr, [a[0] for a in args])
    if getter is None:
        return None
    out, pullback = _call_python(getter, (args[0],))
    rest = (NoRData,) * (len(args) - 1)

    def getter_pullback(dy: Any, dy_d: Any) -> tuple:
        rs, rsd = pullback(dy, dy_d)
        return (NoRData, rs[1]) + rest, (NoRData, rsd[1]) + rest

    return out, getter_pullback


def _property_set(args: tuple) -> tuple[tuple, Callable] | None:
    """``setattr(obj, name, value)`` for a property of a user class: its setter's dual rule."""
    setter = property_function(setattr, [a[0] for a in args])
    if setter is None:
        return None
    out, pullback = _call_python(setter, (args[0], args[2]))

    def setter_pullback(dy: Any, dy_d: Any) -> tuple:
        rs, rsd = pullback(dy, dy_d)
        return (NoRData, rs[1], NoRData, rs[2]), (NoRData, rsd[1], NoRData, rsd[2])

    return out, setter_pullback


def _operator_on_user_type(fn: Any, args: tuple, kwargs: dict) -> tuple[tuple, Callable] | None:
    """Python's operator protocol for user classes (``transform/protocols.py``)."""
    if kwargs or not args:
        return None
    return run_operator(fn, args, lambda a: a[0], _call_dunder, lambda result: result[0][0])


def _call_dunder(candidate: Any, operands: tuple) -> tuple[tuple, Callable]:
    try:
        out, pullback = _call_python(candidate.method, operands)
    except Exception as error:  # a dunder that raised after partial work: routed alike (issue 13)
        reroute(error, lambda inner: _dunder_pullback(inner, candidate.reflected))
        raise
    return out, _dunder_pullback(pullback, candidate.reflected)


def _dunder_pullback(pullback: Callable, reflected: bool) -> Callable:
    if not reflected:
        return pullback

    def reflected_pullback(dy: Any, dy_d: Any) -> tuple:  # the operands were swapped: so are their rdata
        rs, rsd = pullback(dy, dy_d)
        return (NoRData, rs[2], rs[1]), (NoRData, rsd[2], rsd[1])

    return reflected_pullback


def _no_rule(fn: Any) -> SecondOrderError:
    return SecondOrderError(
        f"yb.hvp/yb.hessian: no second-order rule for {describe_callable(fn)}. Second order covers "
        "Python functions, methods and classes, and the primitives marked in docs/rules.md. What to do: "
        "rewrite the call with covered functions, or declare its second order with "
        "yuebing.rules.second_order.with_vjp(f, vjp) (docs/custom-derivatives.md, 'Rules for a function without one')"
    )


def zero_tangent_of(value: Any) -> Any:
    from .forward_runtime import zero_tangent_of as forward_zero

    return forward_zero(value)


def runtime_namespace() -> dict[str, Any]:
    from .forward_runtime import global_tangent
    from .runtime import acc

    return {"_NF": NoFData, "_NR": NoRData, "_NT": NoTangent, "_rrule2": call_rrule2, "_acc": acc,
            "_global": global_value, "_read_only": read_only, "_SELF": SELF_REFERENCE, "_global_fdata": global_fdata, "_cell_fdata": cell_fdata,
            "_zt": _constant_tangent(global_tangent), "_closure_fdata": closure_fdata,
            "_closure_rdata": closure_rdata, "_closure_tangent": closure_tangent,
            "_cell_tangent": cell_tangent, "_with_user_globals": with_user_globals,
            "_user_globals": user_globals, "_SHARED": SharedBox, "_new_cell_box": new_cell_box, "_CellTangent": CellTangent,
            "_FT": FLOAT_TYPES, "_ND": np.ndarray, "_math": math, "_at_element": at_element, "_nan_batch": nan_batch, "_F64": np.dtype(np.float64), "_DFAST": _DFAST,
            "_DWRITE": _DWRITE, "_caught": caught, "_VIEW_WATCHES": aliasing_views._WATCHED, "_note_write": aliasing_views.note_write, **TRY_NAMES, **DUAL_BLOCKS, **DUAL_LOOPS, **DUAL_TUPLES}


_DFAST = Fast()  # pushed by an inline call of the dual program (dual_templates.py)
_DWRITE = Fast()  # pushed by an inline write a[i] = v of the dual program
EFFECT_MARKERS.add(_DWRITE)


class CellTangent:
    """The tangent of a closure cell: the tangent of the value it holds (a cell written through
    ``nonlocal`` shares one holder between the function and its closures)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def closure_tangent(fn: Any, captured: dict) -> Any:
    """The tangent of a function made inside differentiated code: its captured values' tangents."""
    from ..tangents import Tangent

    if not isinstance(fn, types.FunctionType) or not fn.__closure__ \
            or without_tangent(fn, any(isinstance(v, CellTangent) or v is SELF_REFERENCE for v in captured.values())):
        return NoTangent
    from .forward_runtime import global_tangent

    fields = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
        value = captured.get(name, NoTangent)
        if name not in captured and outside_global(fn, name, cell):
            value = global_tangent(cell.cell_contents)  # (a module's dict kept in a local: the call's one tangent)
        fields[name] = value if isinstance(value, CellTangent) else CellTangent(value)  # shared holders stay shared
    result = Tangent(types.FunctionType, fields)
    for name, value in captured.items():
        if value is SELF_REFERENCE:  # a recursive nested function: its own tangent
            fields[name].value = result
    return result


def cell_tangent(fn_d: Any, name: str, cell: Any = None) -> Any:
    """The tangent holder of closure variable ``name``; for a closure made outside, its cell's
    one holder for the whole call (outside state, ``rules/outside_state.py``)."""
    if cell is not None and (holder := outside_state.registered("tangent", cell)) is not None:
        return holder  # a cell a class made inside the differentiated code captures (rules/local_classes.py)
    if isinstance(fn_d, Tangent):
        found = fn_d.fields.get(name, NoTangent)
        if isinstance(found, MutableTangent):  # a closure's tangent in the tangent model's format
            return CellTangent(found.fields.get("cell_contents", NoTangent))  # (a direction given to yb.hvp)
        if found is not NoTangent:
            return found
    if cell is None or not outside_state.active() or not holds_mutable(cell):
        return NoTangent
    return outside_state.shared("tangent", cell, lambda c: CellTangent(
        outside_state.shared("tangent", c.cell_contents, zero_tangent_of)))


def _constant_tangent(global_tangent: Callable) -> Callable:
    def zt(value: Any) -> Any:
        t = global_tangent(value)
        return zero_tangent_of(value) if t is NoTangent and type(value) is float else t

    return zt


# --------------------------------------------------------------------------------------------
# Dual rules of Python functions
# --------------------------------------------------------------------------------------------

_DUAL = CodeCache()  # DualRule per function code and module
_counter = itertools.count()


def dual_rule(fn: types.FunctionType) -> "DualRule":
    """The forward-over-reverse rule of Python function ``fn``, generated on first use."""
    rule = _DUAL.get(fn)
    if rule is None:
        from .forward_runtime import _refuse_yuebing_internals

        _refuse_yuebing_internals(fn, "yb.hvp/yb.hessian")
        rule = _DUAL.put(fn, DualRule(fn))
    return rule


class DualRule(SourceFunction):
    """Forward-over-reverse rule of a Python function, generated from its source."""

    def __init__(self, fn: types.FunctionType) -> None:
        super().__init__(fn)
        self.generated = DualReverseGenerator(self.ir, fn.__globals__).generate()
        filename = f"<yuebing hvp {fn.__qualname__} #{next(_counter)}>"
        source = self.generated.source
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        namespace = runtime_namespace()
        namespace.update(self.generated.constants)
        namespace["_G"] = fn.__globals__
        # classes defined in the function belong to its module (their tangent type, their repr)
        namespace["__name__"] = fn.__globals__.get("__name__", "__main__")
        from .codegen import _CompiledLater, _Deferred, compile_checked

        line_map = getattr(self.generated, "line_map", None)
        if self.generated.deferred_from:  # functions called only now and then, compiled on their first call
            lines = source.splitlines(True)
            start = self.generated.deferred_from - 1
            source, rest = "".join(lines[:start]), "\n" * start + "".join(lines[start:])  # at their own line numbers
            later = _CompiledLater(rest, filename, fn, line_map, namespace)
            namespace.update({name: _Deferred(name, later) for name in self.generated.deferred_names})
        code = compile_checked(source, filename, fn, line_map, "second-order")
        exec(code, namespace)  # noqa: S102 - our own generated code
        self.forward = namespace[self.generated.forward_name]
        self.reverse = namespace[self.generated.reverse_name]

    @property
    def source(self) -> str:
        return self.generated.source

    def _bind(self, fn: Any, args: tuple, kwargs: dict) -> tuple[list, list | None]:
        """A 4-tuple for each parameter of the generated function, in its order, and where each
        call argument's rdata comes from: ``(param, None)`` or ``(param, index in *args)``
        (None when the arguments are the parameters, in order)."""
        if self.simple and not kwargs and len(args) == self.n_params:
            return list(args), None
        from ..rules.util import zero_fdata

        from ..rules.core import CoDual
        from ..rules.util import slot_tangent

        keys = list(range(len(args))) + list(kwargs)
        given = {**dict(enumerate(args)), **kwargs}
        result, routes = [], {}
        for j, (kind, payload) in enumerate(self.plan(fn, args, kwargs)):
            if kind == "starstar":  # a dict: slots for the fdata and its tangent
                items = {k: given[key] for k, key in payload.items()}
                routes.update({key: (j, k) for k, key in payload.items()})
                result.append(({k: a[0] for k, a in items.items()},
                               {k: slot_tangent(CoDual(a[0], a[1])) for k, a in items.items()},
                               {k: a[2] for k, a in items.items()},
                               {k: slot_tangent(CoDual(a[0], a[3])) for k, a in items.items()}))
            elif kind == "star":  # a tuple of the 4-tuples
                items = [given[key] for key in payload]
                routes.update({key: (j, i) for i, key in enumerate(payload)})
                parts = [tuple(item[k] for item in items) for k in range(4)]
                for k, empty in ((1, NoFData), (2, NoTangent), (3, NoFData)):
                    if all(p is empty for p in parts[k]):
                        parts[k] = empty
                result.append(tuple(parts))
            elif kind == "arg":
                routes[payload] = (j, None)
                result.append(given[payload])
            else:  # a default value: a constant
                result.append((payload, zero_fdata(payload), zero_tangent_of(payload), zero_fdata(payload)))
        return result, [routes[k] for k in keys]

    def __call__(self, f: tuple, *args: tuple, **kwargs: tuple) -> tuple[tuple, Callable]:
        if TRACKING.depth and TRACKING.here():  # inside a try body: work done before an exception is kept
            return _partial.call_dual_tracked(self, f, args, kwargs)
        params, routes = self._bind(f[0], args, kwargs)
        flat = [part for p in params for part in p]
        tape: list = []
        try:
            out = self.forward(tape, *f, *flat)
        except Exception as error:
            note_user_lines(self, error, _DIRECT, " (second order)")
            mark_partial(error, self.name, tape)  # see transform/exceptions.py
            raise
        reverse = self.reverse

        def pullback(dy: Any, dy_d: Any) -> tuple:
            rs, rsd = reverse(tape, dy, dy_d)
            if routes is None:
                return (NoRData,) + tuple(rs), (NoRData,) + tuple(rsd)
            return _partial.route_dual(rs, routes, params, 1), _partial.route_dual(rsd, routes, params, 3)

        return out, pullback


# --------------------------------------------------------------------------------------------
# Forward mode over yb.grad: forward-over-reverse inside a forward-mode program
# --------------------------------------------------------------------------------------------


def _dual_closure_tangent(forward_tangent: Any) -> Any:
    """A forward-mode closure tangent (one box per captured variable) in the dual format."""
    from ..tangents import MutableTangent, Tangent

    if not isinstance(forward_tangent, Tangent):
        return NoTangent
    fields = {}
    for name, box in forward_tangent.fields.items():
        value = box.fields.get("cell_contents", NoTangent) if isinstance(box, MutableTangent) else NoTangent
        fields[name] = CellTangent(value)
    return Tangent(types.FunctionType, fields)


# what second order does with each kind of callable (transform/protocols.py)
_SECOND_ORDER = CallMode(
    lookup=_lookup, run_rule=_run_rule, property_get=_property_get, property_set=_property_set,
    operator=_operator_on_user_type, gradient=_gradient, function=_call_function, method=_call_method,
    construct=_construct, partial=_calls.call_partial, vectorized=_call_vectorized, callable_object=_call_object,
    missing=lambda fn: _no_rule(fn), constant=lambda fn: (fn, NoFData, NoTangent, NoFData),
)

__all__ = ["DualReverseGenerator", "DualRule", "SecondOrderError", "call_rrule2", "dual_rule"]

_lifting.DUAL_RULE = dual_rule
_partial.SECOND = (DualReverseGenerator, runtime_namespace)
_calls.CALL_RRULE2 = call_rrule2


RUNTIME_NAMES.update(runtime_namespace())  # (generated constants never take these names)
