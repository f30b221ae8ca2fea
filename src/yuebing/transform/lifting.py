"""The lifting of second-order classes: each primitive's forward-over-reverse rule, built from
its first-order rules and its declaration (``rules/second_order.py`` says which class each
primitive falls in; this module says what each class computes).

``lookup_second_order(f)`` gives ``(rule, owner)``: the rule of ``f``'s declared class, built
once per declaration. A rule takes 4-tuples ``(primal, fdata, tangent, fdata_tangent)`` and
returns the output 4-tuple and a dual pullback ``(dy, dy_tangent) -> (rdatas, rdata_tangents)``.
The elementwise and in-place classes are lifted in ``lifting_elementwise.py``. Objects and
closure cells (attribute reads and writes, construction, ``super()``, ``nonlocal``) have rules of
their own, in ``lifting_objects.py``.
"""
from __future__ import annotations

import operator
import types
from typing import Any, Callable

import numpy as np

from ..rules import outside_state
from ..rules._comparisons import selection_goes_through
from ..rules._partial_work import reroute
from ..rules.core import RRULES, CoDual, Dual, describe_callable, rrule
from ..rules.core import frule as registered_frule
from ..rules.declare import ELEMENTWISE_PARTIALS, written_mask, zero_written
from ..rules.numpy_arguments import check_out_shape
from ..rules.second_order import Rule, SecondOrder, _error, class_method_owner, declaration_of, run_direct
from ..rules.containers.set_operators import second_order_on_sets
from ..rules.indexing.items import missing_definition
from ..rules.util import accumulate, is_differentiable, zero_fdata
from ..tangents import NoFData, NoRData, NoTangent, Tangent
from ..tangents import kinds as K
from ..tangents import structured
from .forward_runtime import zero_tangent_of  # (module level: an import in a hot function costs
from .dual_elementwise import SUM_METHOD, fast_sum
from .dual_multilinear import fast_product
from .runtime import acc  # a failed attribute lookup and its formatted error on every call)
from . import immutable_slots as _slots
from . import lifting_elementwise as _elementwise
from .lifting_elementwise import _elementwise_rule, _first, _fresh_output, _frule_of, _inplace_rule, \
    _output_cotangents  # (also imported from here by api/)

def lookup_second_order(f: Any) -> tuple[Rule, Any] | None:
    """``(rule, owner)`` for callable ``f``, or None. ``owner`` is the object a builtin method
    is bound to (the rule then takes the unbound method, with the owner as first argument)."""
    found = declaration_of(f)
    if found is None:
        return None
    return lift(found[0]), found[1]


_LIFTED: dict[int, tuple[SecondOrder, Rule]] = {}

#: ``DUAL_RULE(fn)``: the second-order rule of a Python function, from its source (set by
#: ``transform/second_order.py``, which imports this module: the defined_by class and user class
#: constructors call back into it).
DUAL_RULE: Callable = None  # type: ignore[assignment]


def lift(declaration: SecondOrder) -> Rule:
    """The second-order rule of a declaration, made once (declarations live as long as the
    process: they are kept in the tables of ``rules/second_order.py``)."""
    made = _LIFTED.get(id(declaration))
    if made is None or made[0] is not declaration:
        made = _LIFTED[id(declaration)] = (declaration, _make_rule(declaration))
    return made[1]


def _make_rule(d: SecondOrder) -> Rule:
    if d.kind == "special":
        return d.rule
    if d.kind == "zero":
        return _zero_rule(d.check)
    if d.kind == "linear":
        return _delegating(_linear_rule(d.data, d.stored), d.delegate) if d.delegate else _linear_rule(d.data, d.stored)
    if d.kind == "multilinear":
        return _multilinear
    if d.kind == "selection":
        return _selection if d.definition is None else _keyed_selection(d.definition)
    if d.kind == "elementwise":
        return _elementwise_rule(d.function, d.partials or ELEMENTWISE_PARTIALS[d.function])
    if d.kind == "in_place":
        return _inplace_rule(d.function)
    if d.kind == "vjp":
        return _vjp_rule(d.function, d.vjp, d.definition, d.direct)
    if d.kind == "python":
        return _python_rule(d.definition)
    raise ValueError(f"unknown second-order class {d.kind!r}")


_SET_READERS_TYPES = (types.BuiltinFunctionType, types.FunctionType, type)


def run_second_order(found: tuple[Rule, Any], f: tuple, args: tuple, kwargs: dict) -> tuple:
    """Run a looked-up rule; a bound builtin method runs unbound, its owner first."""
    rule, owner = found
    if owner is None and isinstance(f[0], _SET_READERS_TYPES):  # sets: rules/containers/set_operators.py
        on_sets = second_order_on_sets(f[0], args)
        if on_sets is not None:
            return on_sets(f, args, kwargs)
    if owner is not None:
        self4 = (owner, getattr(f[1], "__self__", NoFData), getattr(f[2], "__self__", NoTangent),
                 getattr(f[3], "__self__", NoFData))
        unbound = unbound_method(f[0], owner)
        try:
            out, pullback = rule((unbound, NoFData, NoTangent, NoFData), (self4,) + args, kwargs)
        except Exception as error:  # a function it called raised after partial work (issue 13)
            reroute(error, _owner_routed)
            raise
        return out, _owner_routed(pullback)
    return rule(f, args, kwargs)


def _owner_routed(pullback: Callable) -> Callable:
    def method_pullback(dy: Any, dy_d: Any) -> tuple:
        # the owner's rdata is the bound method's, as in first order (``rules.core``): for an
        # immutable owner (a float, a complex) it is the only channel of its derivative
        rs, rsd = pullback(dy, dy_d)
        return (_method_rdata(rs[1]),) + tuple(rs[2:]), (_method_rdata(rsd[1]),) + tuple(rsd[2:])

    return method_pullback


def unbound_method(fn: Any, owner: Any) -> Any:
    """What builtin method ``fn``, bound to ``owner``, was bound from: a C slot bound by ``super()``
    (``super().__setattr__``) is its defining class's, not the owner's override; a classmethod of
    a C class bound to its class (``chain.from_iterable``) is its descriptor, which takes the
    class first."""
    for base in class_method_owner(owner, fn.__name__):
        return base.__dict__[fn.__name__]
    return getattr(getattr(fn, "__objclass__", type(owner)), fn.__name__)


def _method_rdata(owner_rdata: Any) -> Any:
    return NoRData if owner_rdata is NoRData else Tangent(types.BuiltinMethodType, {"__self__": owner_rdata})


# --------------------------------------------------------------------------------------------
# The classes
# --------------------------------------------------------------------------------------------


def _primal_codual(a: tuple) -> CoDual:
    return CoDual(a[0], a[1])


def _is_empty(t: Any) -> bool:
    """Whether a tangent has no differentiable part (``NoTangent``, or a list/tuple of them)."""
    return t is NoTangent or type(t) in (list, tuple) and all(_is_empty(e) for e in t)


def _is_constant(t: Any) -> bool:
    """``NoTangent`` or a tuple of them: not a list, whose identity matters even when empty."""
    return t is NoTangent or type(t) is tuple and all(_is_constant(e) for e in t)


def _has_float_data(p: Any, depth: int = 0) -> bool:
    """Whether a primal holds differentiable numbers (an index tuple, a shape list, a slice or an
    int array holds none: it is structure, passed to the tangent call as it is)."""
    if isinstance(p, (float, complex, np.floating, np.complexfloating)):
        return True
    if isinstance(p, np.ndarray):
        return p.dtype.kind in "fc" or structured.carries_derivative(p)  # (a structured array's float fields)
    owner = getattr(p, "__self__", None)
    if isinstance(p, types.BuiltinMethodType) and owner is not None and not isinstance(owner, types.ModuleType):
        # a bound method (x.sum, lst.append) carries its owner's tangent; a list's, even empty
        return type(owner) in (list, dict) or _has_float_data(owner, depth + 1)
    if isinstance(p, (int, bool, str, bytes, slice, type(None), type(Ellipsis), np.integer, np.bool_, type,
                      np.dtype, types.BuiltinFunctionType, types.ModuleType)):
        return False
    if isinstance(p, types.FunctionType):
        return bool(p.__closure__)  # a closure carries its captured values' tangents
    if type(p).__module__ == "numpy" and callable(p) and not isinstance(p, np.poly1d):
        return False  # np.sum and the other NumPy functions (a poly1d is callable, and data)
    if type(p) in (list, tuple) and depth < 4:
        return any(_has_float_data(e, depth + 1) for e in p)
    if type(p) is dict and depth < 4:
        return any(_has_float_data(e, depth + 1) for e in p.values())
    return True  # objects and other containers: their tangent is what the call must see


def _tangent_codual(a: tuple, mutated: bool = False) -> CoDual:
    """The tangent of an argument as a codual, for the tangent call of a linear function.

    Structure -- indices, shapes, flags, index tuples, lists of ints: anything holding no float
    data -- is passed as it is, except a list the call may mutate (``mutated``: the target of
    ``append`` or ``x[i] = v``), which must be its tangent list so the primal is mutated only
    once. Tangents are passed as they are (their identity matters: a list's tangent stored in a
    container must stay the list's tangent)."""
    p, t = a[0], a[2]
    if t is NoTangent and type(p) in _FLOAT_SCALARS:  # a number held fixed: its tangent is 0, never its value
        return CoDual(0.0 * p, a[3])
    if t is NoTangent or not mutated and not _has_float_data(p) and not (type(p) is list and not p):
        return CoDual(p, a[1])
    return CoDual(t, a[3])


_FLOAT_SCALARS = (float, complex, np.float64, np.float32, np.complex128)


_CONSTANT_TYPES = (int, bool, str, bytes, type(None), np.integer, np.bool_)


def _without_constants(y: Any, t: Any) -> Any:
    """The tangent call copies the non-differentiable elements of a list or tuple (an int
    argument passes through as itself): their tangent is ``NoTangent``."""
    if type(y) is list and type(t) is list and len(t) == len(y):
        for i, v in enumerate(y):
            if isinstance(v, _CONSTANT_TYPES):
                t[i] = NoTangent
    elif type(y) is tuple and type(t) is tuple and any(isinstance(v, _CONSTANT_TYPES) for v in y):
        t = tuple(NoTangent if isinstance(v, _CONSTANT_TYPES) else e for v, e in zip(y, t))
    return t


_MUTATORS = {operator.setitem, operator.delitem, operator.iadd, operator.iconcat, getattr}


def _tangent_function(f: tuple) -> CoDual:
    """A bound method's tangent is the same method bound to the owner's tangent."""
    return CoDual(f[0], f[1]) if f[2] is NoTangent or not callable(f[2]) else CoDual(f[2], f[3])


def _zero_tangent_of(value: Any) -> Any:
    return zero_tangent_of(value)


def _carries_tangent(value: Any) -> bool:
    """Whether the output of a linear call has a tangent: a dict's ``values()``/``items()`` view
    has the same view of the dict's tangent (the tangent model gives views none of their own)."""
    return callable(value) and not isinstance(value, (type, np.ndarray)) or isinstance(value, K.VALUE_CARRYING_DICT_VIEWS) \
        or _zero_tangent_of(value) is not NoTangent


def _delegating(rule: Rule, delegate: Callable) -> Rule:
    """``rule``, except for the calls ``delegate`` hands to a Python function (``np.sum(A)`` of
    a SciPy sparse matrix: its own ``sum``), differentiated as that function's code."""
    def delegating(f: tuple, args: tuple, kwargs: dict) -> tuple:
        definition = delegate(tuple(a[0] for a in args), {k: v[0] for k, v in kwargs.items()})
        if definition is None:
            return rule(f, args, kwargs)
        return DUAL_RULE(definition)((definition, NoFData, NoTangent, NoFData), *args, **kwargs)

    delegating.second_order_kind = getattr(rule, "second_order_kind", "linear")  # type: ignore[attr-defined]
    delegating.delegate = delegate  # type: ignore[attr-defined]  # (third order follows the definition too)
    for name in ("data", "stored"):  # (read by third order)
        if hasattr(rule, name):
            setattr(delegating, name, getattr(rule, name))
    return delegating


def _linear_rule(data: tuple, stored: tuple) -> Rule:
    """The linear class (``rules.second_order.linear``): integer arguments are passed to the
    tangent call as they are (axes, indices, shapes), except at the positions and keyword names in
    ``data`` (values read as numbers: they become 0) and ``stored`` (values written into a
    container)."""
    if not data and not stored:
        return _linear

    def rule(f: tuple, args: tuple, kwargs: dict) -> tuple:
        return _linear(f, args, kwargs, data, stored)

    rule.second_order_kind = "linear"  # type: ignore[attr-defined]
    rule.data, rule.stored = data, stored  # type: ignore[attr-defined] - read by third order
    return rule


def _zero_ints(primal: Any, value: Any, deep: bool) -> Any:
    """The tangent of data for the tangent call: an int (or int array) passed as itself becomes 0.
    With ``deep`` (array builders: ``np.array([x, 1])``) the ints inside lists and tuples, whose
    tangents are ``NoTangent``, become 0 too, in a copy; otherwise lists keep their identity."""
    if isinstance(value, (int, np.integer, np.bool_)):  # a bool read as a number too (np.where(c, 0.5, y == a))
        return 0
    if isinstance(value, np.ndarray) and value.dtype.kind in "iub":
        return np.zeros_like(value)  # still integers: no fdata, as the structure expects
    if deep and type(value) in (list, tuple) and type(primal) is type(value) and len(primal) == len(value):
        parts = [_constant_slot(v) if e is NoTangent else _zero_ints(v, e, deep) for v, e in zip(primal, value)]
        if all(q is e for q, e in zip(parts, value)):
            return value
        return type(value)(parts)
    return value


def _constant_slot(v: Any) -> Any:
    """What the tangent call sees for a constant inside data: 0 for an int, the value itself for a
    key-like constant (``dict([("a", x)])`` keeps its key), ``NoTangent`` otherwise."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return 0
    return v if isinstance(v, _CONSTANT_TYPES) else NoTangent


_DICT_READS = (operator.getitem, dict.__getitem__)
_KEYED = (operator.getitem, operator.setitem, operator.delitem, operator.contains)


def _dict_key_position(fn: Any, args: tuple) -> int | None:
    """Which argument of a call on a dict is a key (a key holding an object with float attributes
    has a tangent, but the dict's tangent is looked up by the key itself), or None."""
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, dict) and args and not isinstance(fn, types.MethodType):  # d.get(key)
        return 0
    if len(args) >= 2 and isinstance(args[0][0], dict) and (fn in _KEYED or getattr(fn, "__objclass__", None) is dict):
        return 1  # d[key], dict.get(d, key)
    return None


def _linear(f: tuple, args: tuple, kwargs: dict, data: tuple = (), stored: tuple = ()) -> tuple:
    if f[0] in _DICT_READS and len(args) == 2 and isinstance(args[0][0], dict):
        missing = missing_definition(args[0][0], args[1][0])  # a defaultdict's or Counter's default
        if missing is not None:
            try:
                return DUAL_RULE(missing)((missing, NoFData, NoTangent, NoFData), *args)
            except Exception as error:  # its factory raised after work: the read's arguments as given
                reroute(error, lambda inner: inner)
                raise
    if f[0] is np.sum or f[0] is SUM_METHOD:
        fast = fast_sum(args, kwargs)  # np.sum(x) of a float64 array (dual_elementwise.py)
        if fast is not None:
            return fast
    put_back = _slots.removed(f[0], args)  # elements holding immutable objects it removes (immutable_slots.py)
    out1, pullback1 = rrule(_primal_codual(f), *map(_primal_codual, args),
                            **{k: _primal_codual(v) for k, v in kwargs.items()})
    first_mutated = isinstance(f[0], (types.MethodDescriptorType, types.WrapperDescriptorType)) \
        or not isinstance(f[0], types.MethodType) and f[0] in _MUTATORS
    if first_mutated and args and args[0][2] is NoTangent and isinstance(args[0][0], np.ndarray) \
            and args[0][0].dtype.kind not in "fc" and not _has_float_data(out1.primal):
        # a write into data without a tangent (an int array: r[0] = 3): no tangent to update, and
        # the tangent call would run on the primal itself (writing its zeroed values into it). A
        # method of an int array whose result holds floats (idx.choose(choices)) is no such write.
        y = out1.primal
        out = (y, out1.fdata, _zero_tangent_of(y) if _carries_tangent(y) else NoTangent, zero_fdata(y))
        nothing = (NoRData,) * (1 + len(args) + len(kwargs))
        return out, lambda dy, dy_d: (pullback1(dy), nothing)
    # a list or dict read out of a container (rows[0], d["a"]) must come with the tangent stored
    # there, even when nothing in it holds floats yet: an append to it must reach that tangent
    handed_out = f[0] is operator.getitem and type(out1.primal) in (list, dict)
    tangent_args = [_tangent_codual(a, mutated=(first_mutated or handed_out) and k == 0) for k, a in enumerate(args)]
    key = _dict_key_position(f[0], args)
    if key is not None:  # a dict's tangent is keyed by the primal keys: ``d[(obj, "a")]``, ``d.get(k)``
        tangent_args[key] = CoDual(args[key][0], args[key][1])
    tangent_kwargs = {k: _tangent_codual(v) for k, v in kwargs.items()}
    for key in stored:  # a list or dict written into a container: its tangent goes in with it (a
        # later append to it must reach the tangent stored there), even when it holds no floats yet
        a = kwargs.get(key) if isinstance(key, str) else args[key] if key < len(args) else None
        if a is not None and type(a[0]) in (list, dict) and type(a[2]) is type(a[0]):
            if isinstance(key, str):
                tangent_kwargs[key] = CoDual(a[2], a[3])
            else:
                tangent_args[key] = CoDual(a[2], a[3])
    for keys, deep in ((data, True), (stored, False)):
        for key in keys:
            if isinstance(key, int) and key < len(tangent_args):
                c = tangent_args[key]
                tangent_args[key] = CoDual(_zero_ints(args[key][0], c.primal, deep), c.fdata)
            elif key in tangent_kwargs:
                c = tangent_kwargs[key]
                tangent_kwargs[key] = CoDual(_zero_ints(kwargs[key][0], c.primal, deep), c.fdata)
    try:
        out2, pullback2 = rrule(_tangent_function(f), *tangent_args, **tangent_kwargs)
    except (TypeError, AttributeError, ValueError, KeyError) as error:  # not valid arguments
        pullback1(NoRData)  # undo the primal call before reporting
        raise _error(f"yb.hvp/yb.hessian: second order cannot apply {describe_callable(f[0])} to the "
                     f"tangents of these arguments ({type(error).__name__}: {error})") from None
    # the slots the rule made for a frozen object's tangent, taken for a mutable object's, made as
    # the primal's rule makes them (immutable_slots.py: the Hessian through [Config(a, b)][0] was 0)
    out2 = _slots.after_call(out1, out2, args, first_mutated, handed_out and type(args[1][0]) is not slice)
    y = out1.primal
    constants_only = all(_is_constant(a[2]) for a in [f, *args, *kwargs.values()])
    if not _carries_tangent(y):  # an int, a shape, a string: the tangent call computed it again
        out = (y, out1.fdata, NoTangent, NoFData)
    elif constants_only and not isinstance(y, list):
        # only constants in: the output is a constant (the tangent call ran on primals)
        out = (y, out1.fdata, _zero_tangent_of(y), zero_fdata(y))
    elif out2.primal is y:  # the tangent call saw the primal (a list of strings) and returned it
        given = [a for a in args if a[0] is y]
        out = (y, out1.fdata, *given[0][2:]) if given else (y, out1.fdata, _zero_tangent_of(y), zero_fdata(y))
    elif constants_only:  # a new list of floats the tangent call read from primals (a structured
        # table's tolist(): the Hessian counted its numbers as tangents): zeros, in a list of its own
        out = (y, out1.fdata, _zero_tangent_of(y), zero_fdata(y))
    else:
        out = (y, out1.fdata, _without_constants(y, out2.primal), out2.fdata)

    def pullback(dy: Any, dy_d: Any) -> tuple:
        tangent_rdata = pullback2(dy_d)  # newest first: the tangent call ran second
        if put_back:
            _slots.put_back(args[0][3], put_back)
        return pullback1(dy), tangent_rdata

    return out, pullback


class _Given:
    """A call-site argument while binding keywords (unlike the defaults the binder fills in)."""

    __slots__ = ("value",)

    def __init__(self, value: tuple) -> None:
        self.value = value


def _with_positional_keywords(rule: Callable) -> Callable:
    """Wrap a rule that takes positional arguments only: call-site keywords are bound to the
    first-order rule's parameters (defaults filled in as constants), and the rdata go back in
    call order."""
    def bound_rule(f: tuple, args: tuple, kwargs: dict) -> tuple:
        if not kwargs:
            return rule(f, args, {})
        found = RRULES.lookup(f[0])
        if found is not None and found[1].passthrough:  # the rule takes **kwargs: constants only
            for key, value in kwargs.items():
                if not _is_constant(value[2]):
                    raise _error(f"yb.hvp/yb.hessian: pass the differentiable argument {key}= of "
                                 f"{describe_callable(f[0])} positionally")
            return rule(f, args, kwargs)
        if found is None or found[2] is not None:
            raise _error(f"yb.hvp/yb.hessian: pass the arguments of {describe_callable(f[0])} positionally")
        values, positions = found[1].bind([_Given(a) for a in args], {k: _Given(v) for k, v in kwargs.items()})
        flat = tuple(v.value if isinstance(v, _Given) else _default4(v) for v in values)
        out, pullback = rule(f, flat, {})
        n = len(args)

        def reordered(dy: Any, dy_d: Any) -> tuple:
            rs, rsd = pullback(dy, dy_d)
            return _reorder(rs, n, positions), _reorder(rsd, n, positions)

        return out, reordered

    bound_rule.second_order_kind = getattr(rule, "second_order_kind", "special")  # type: ignore[attr-defined]
    return bound_rule


def _default4(v: Any) -> tuple:
    """A default the binder filled in, as a constant 4-tuple (NumPy's "not given" marker,
    ``np._NoValue``, is an object whose zero tangent would be an empty object tangent)."""
    if v is np._NoValue:
        return (v, NoFData, NoTangent, NoFData)
    return (v, zero_fdata(v), _zero_tangent_of(v), zero_fdata(v))


def _parameter_names(f: Any) -> list:
    """The positional parameter names of ``f``'s first-order rule."""
    found = RRULES.lookup(f)
    return list(found[1].names) if found is not None else []


def _reorder(rdatas: tuple, n_positional: int, positions: list) -> tuple:
    return tuple(rdatas[:1 + n_positional]) + tuple(rdatas[1 + p] for p in positions)


def _refuse_structured(f: Any, args: tuple) -> None:
    """The classes below differentiate numbers and arrays: a list of arrays would be dropped."""
    for a in args:
        if isinstance(a[0], (list, tuple, dict)) and _has_float_data(a[0]):
            raise _error(f"yb.hvp/yb.hessian: {describe_callable(f)} takes a {type(a[0]).__name__} of "
                         "differentiable values, which its second-order rule does not support")


def _multilinear(f: tuple, args: tuple, kwargs: dict) -> tuple:
    _refuse_structured(f[0], args)
    fast = fast_product(f[0], args, kwargs)  # matmul, dot, kron of float64 matrices (dual_multilinear.py)
    if fast is not None:
        return fast
    fn = _primal_codual(f)
    constants = {k: _primal_codual(v) for k, v in kwargs.items()}  # flags such as optimize=True
    out, pullback = rrule(fn, *map(_primal_codual, args), **constants)
    # the same call with fdata tangents: its pullback sends dy_tangent through the primal factors
    out_t, pullback_t = rrule(fn, *(CoDual(a[0], a[3]) for a in args), **constants)
    y_d: Any = NoTangent
    terms = []
    for j, a in enumerate(args):
        if a[2] is NoTangent or not is_differentiable(a[0]):
            continue
        # factor j replaced by its tangent, the others' fdata tangents collect dy * (others); the
        # tangent factor has no fdata, so the rule skips its cotangent (it is not wanted)
        call_args = [CoDual(b[0], b[3]) for b in args]
        call_args[j] = CoDual(a[2], NoFData)
        out_j, pullback_j = rrule(fn, *call_args, **constants)
        y_d = out_j.primal if y_d is NoTangent else y_d + out_j.primal
        terms.append((j, out_j, pullback_j))
    y = out.primal
    if y_d is NoTangent:
        y_d = _zero_tangent_of(y)
    elif isinstance(y, float):
        y_d = float(y_d)
    result = (y, out.fdata, y_d, out_t.fdata)

    def pullback2(dy: Any, dy_d: Any) -> tuple:
        tangent_rdata = [NoRData] * (len(args) + len(kwargs) + 1)
        for j, out_j, pullback_j in reversed(terms):
            if isinstance(out.fdata, np.ndarray) and isinstance(out_j.fdata, np.ndarray):  # (not a view
                out_j.fdata[...] = out.fdata  # of the fdata-less factor) the cotangent lives in the primal fdata
            rs_j = list(pullback_j(dy))
            rs_j[j + 1] = NoRData  # factor j was its tangent: what reaches it is not wanted
            tangent_rdata = _sum_rdatas(tangent_rdata, rs_j)
        tangent_rdata = _sum_rdatas(tangent_rdata, pullback_t(dy_d))
        return pullback(dy), tuple(tangent_rdata)

    return result, pullback2


def _sum_rdatas(rs1: Any, rs2: Any) -> list:
    return [acc(a, b) for a, b in zip(rs1, rs2)]


def _with_fdata_tangents(fn: CoDual, args: tuple, kwargs: dict | None = None) -> tuple[CoDual, CoDual, Callable]:
    """Run the first-order rule of ``fn`` twice on the same primals: with their fdata, then with
    their fdata tangents (what a rule that reads, builds or selects structure does to the fdata it
    does to the fdata tangent). Returns both outputs and the dual pullback, which undoes the
    second run first."""
    kwargs = kwargs or {}
    out1, pullback1 = rrule(fn, *(CoDual(a[0], a[1]) for a in args), **{k: CoDual(v[0], v[1]) for k, v in kwargs.items()})
    with outside_state.fdata_tangent_pass():
        out2, pullback2 = rrule(fn, *(CoDual(a[0], a[3]) for a in args), **{k: CoDual(v[0], v[3]) for k, v in kwargs.items()})

    def pullback(dy: Any, dy_d: Any) -> tuple:
        tangent_rdata = pullback2(dy_d)
        return pullback1(dy), tangent_rdata

    if getattr(pullback1, "changes_nothing", False):  # (transform/exceptions.py)
        pullback.changes_nothing = True  # type: ignore[attr-defined]
    return out1, out2, pullback


def _selection(f: tuple, args: tuple, kwargs: dict) -> tuple:
    out1, out2, pullback = _with_fdata_tangents(_primal_codual(f), args, kwargs)
    tangent = registered_frule(f[0], *(Dual(a[0], a[2]) for a in args),
                               **{k: Dual(v[0], NoTangent) for k, v in kwargs.items()}).tangent
    y = out1.primal
    if tangent is NoTangent:
        tangent = _zero_tangent_of(y)
    return (y, out1.fdata, tangent, out2.fdata), pullback


def _zero_rule(check: Callable | None) -> Rule:
    """The zero class; ``check(out, args, kwargs)`` may refuse the call once it ran (undone first)."""
    if check is None:
        return _zero

    def rule(f: tuple, args: tuple, kwargs: dict) -> tuple:
        out, pullback = _zero(f, args, kwargs)
        try:
            check(out, args, kwargs)
        except Exception:
            pullback(NoRData, NoRData)  # undo the call before reporting
            raise
        return out, pullback

    rule.second_order_kind = "zero"  # type: ignore[attr-defined]
    return rule


def _zero(f: tuple, args: tuple, kwargs: dict) -> tuple:
    out, pullback = rrule(_primal_codual(f), *map(_primal_codual, args),
                          **{k: _primal_codual(v) for k, v in kwargs.items()})
    y = out.primal
    result = (y, out.fdata, _zero_tangent_of(y), zero_fdata(y))
    written = None
    for a in [*args, *kwargs.values()]:
        for p, t, fdata_t in _out_candidates(a):
            if y is p and isinstance(t, np.ndarray):  # out=: the array now holds a constant
                mask = written_mask(kwargs["where"][0], np.shape(y)) if "where" in kwargs else None
                written = (t, t.copy(), fdata_t, mask)
                zero_written(t, mask)
                result = (y, out.fdata, t, fdata_t)

    def pullback2(dy: Any, dy_d: Any) -> tuple:
        rs = pullback(dy)  # zeroes the overwritten cotangent and restores the primal
        if written is not None:
            zero_written(written[2], written[3])  # the tangent of that zero cotangent
            written[0][...] = written[1]
        return rs, (NoRData,) * len(rs)

    if written is None:  # zero-derivative rules mutate nothing (they refuse out=): exceptions.py
        pullback2.changes_nothing = True  # type: ignore[attr-defined]
    return result, pullback2


def _out_candidates(a: tuple) -> list:
    """``(primal, tangent, fdata tangent)`` of a 4-tuple argument, or of each element of a tuple
    (a ufunc's ``out=(array,)``)."""
    if type(a[0]) is tuple and type(a[2]) is tuple:
        fdata_ts = a[3] if type(a[3]) is tuple else (NoFData,) * len(a[0])
        return list(zip(a[0], a[2], fdata_ts))
    return [(a[0], a[2], a[3])]


def _vjp_rule(function: Any, vjp: Callable, value: Callable | None = None, direct: Callable | None = None) -> Rule:
    """The with_vjp class: the output tangent from ``function``'s forward rule (or the forward
    transform of ``value``, when declared); the cotangents and their tangents from the forward
    transform of the cotangent map ``vjp(g, y, *xs)``. A ``direct`` formula, where it applies,
    does all of it at once."""

    def rule(f4: tuple, args: tuple, kwargs: dict) -> tuple:
        _refuse_structured(function, args)
        made = None if direct is None else run_direct(direct, args)
        if made is not None:
            return made
        names = _parameter_names(function)
        k = names.index("out") if "out" in names else len(args)
        if k < len(args) and _is_out_array(args[k][0]):
            return assign_out(rule, f4, args, kwargs, k)
        duals = [Dual(a[0], a[2]) for a in args]
        y_dual = registered_frule(function, *duals) if value is None else _frule_of(value, *duals)
        for a in args:
            if y_dual.primal is a[0] and isinstance(a[0], np.ndarray):  # the input itself (matrix_power(a, 1))
                return a, lambda dy, dy_d: ((NoRData,) * (len(args) + 1),) * 2
        out = _fresh_output(y_dual)

        def pullback(dy: Any, dy_d: Any) -> tuple:
            g, g_d = _output_cotangents(out, dy, dy_d)
            cot = _frule_of(vjp, Dual(g, g_d), Dual(out[0], out[2]), *(Dual(a[0], a[2]) for a in args))
            rs, rsd = [NoRData], [NoRData]
            for k, a in enumerate(args):
                c = cot.primal[k] if k < len(cot.primal) else None  # missing trailing entries: None
                if c is None or not is_differentiable(a[0]):
                    rs.append(NoRData)
                    rsd.append(NoRData)
                    continue
                c_d = cot.tangent[k] if isinstance(cot.tangent, tuple) else NoTangent
                rs.append(accumulate(CoDual(a[0], a[1]), c))
                rsd.append(accumulate(CoDual(a[0], a[3]), 0.0 if c_d is NoTangent else c_d))
            return tuple(rs), tuple(rsd)

        return out, pullback

    # third order runs the vjp class by the primitive's own forward rule: not with a value function
    rule.second_order_kind = "vjp" if value is None else "custom_vjp"  # type: ignore[attr-defined]
    wrapped = _with_positional_keywords(rule)
    wrapped.vjp = vjp  # type: ignore[attr-defined] - read by third order
    return wrapped


def _is_out_array(o: Any) -> bool:
    return isinstance(o, np.ndarray) or type(o) is tuple and len(o) == 1 and isinstance(o[0], np.ndarray)


def assign_out(rule: Rule, f4: tuple, args: tuple, kwargs: dict, k: int) -> tuple:
    """``f(..., out=o)`` (``o`` at position ``k``) as ``o[...] = f(..., out=None)``, as the first-order
    rules run it (``numpy_arguments.out_assigned``): the rule without ``out``, then the second-order
    rule of the assignment, which saves and restores ``o`` and its tangent."""
    o4 = args[k]
    if type(o4[0]) is tuple:  # out=(array,)
        o4 = (o4[0][0], _first(o4[1], NoFData), _first(o4[2], NoTangent), _first(o4[3], NoFData))
    none4 = (None, NoFData, NoTangent, NoFData)
    y4, inner = rule(f4, args[:k] + (none4,) + args[k + 1:], kwargs)
    try:
        check_out_shape(y4[0], o4[0])
    except ValueError:
        inner(NoRData, NoRData)  # undo the call before reporting
        raise
    setitem = lookup_second_order(operator.setitem)
    _, assign_pullback = run_second_order(setitem, (operator.setitem, NoFData, NoTangent, NoFData),
                                          (o4, (Ellipsis, NoFData, NoTangent, NoFData), y4), {})

    def pullback(dy: Any, dy_d: Any) -> tuple:
        rs, rsd = assign_pullback(NoRData, NoRData)  # o's cotangent (and its tangent) to the result
        return inner(rs[3], rsd[3])

    return o4, pullback


def _python_rule(definition: types.FunctionType) -> Rule:
    """The defined_by class: the dual rule of a Python function computing the same."""
    def rule(f4: tuple, args: tuple, kwargs: dict) -> tuple:
        return DUAL_RULE(definition)((definition, NoFData, NoTangent, NoFData), *args, **kwargs)

    rule.second_order_kind = "python"  # type: ignore[attr-defined]
    rule.definition = definition  # type: ignore[attr-defined] - read by third order
    return rule


def _keyed_selection(definition: types.FunctionType) -> Rule:
    """The selection class of a function taking ``key=`` (``sorted``, ``max``): a key that may
    change data (``rules/_key_functions.py``), or items whose comparison dunders may
    (``rules/_comparisons.py``), make the call its ``definition``, which calls the key and makes
    the comparisons like user code; any other call only orders, and is a selection."""
    calling_key = _python_rule(definition)

    def runs_definition(args: tuple, kwargs: dict) -> bool:
        key = kwargs.get("key")
        return bool(args) and selection_goes_through([a[0] for a in args], None if key is None else key[0])

    def rule(f: tuple, args: tuple, kwargs: dict) -> tuple:
        if runs_definition(args, kwargs):
            return calling_key(f, args, kwargs)
        return _selection(f, args, kwargs)

    rule.second_order_kind = "selection"  # type: ignore[attr-defined]
    rule.runs_definition = runs_definition  # type: ignore[attr-defined] - batched like user code then
    return rule


_linear.second_order_kind = "linear"  # type: ignore[attr-defined]
_selection.second_order_kind = "selection"  # type: ignore[attr-defined]
_multilinear.second_order_kind = "multilinear"  # type: ignore[attr-defined]
_multilinear = _with_positional_keywords(_multilinear)
_zero.second_order_kind = "zero"  # type: ignore[attr-defined]
_elementwise.LINEAR = _linear
