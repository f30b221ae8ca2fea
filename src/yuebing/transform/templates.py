"""Inline templates for hot primitives (DESIGN.md §6).

A call the generic path would send through ``rrule`` -- a CoDual per argument, a rule lookup, a
pullback closure -- costs microseconds; Python's own ``a * b`` costs tens of nanoseconds. For the
operations that dominate scalar loops (float arithmetic, reading a float out of an array or list,
``math``/NumPy functions of one float) the generator emits the primal operation and its adjoint
inline, behind a type guard:

    forward                                        reverse
    if type(a) in _FT and type(b) in _FT:          _e = _pop()
        t = a * b; t_f = _NF                       if _e is _FAST:
        _push(a); _push(b); _push(_FAST)               _g = t_r; t_r = _NR; _b = _pop(); _a = _pop()
    else:                                              if _g is not _NR: a_r += _g * _b; b_r += _g * _a
        <generic rule call>                        else: <generic pullback>

Residuals go on the same tape as pullbacks, the marker ``_FAST`` says which path ran. Anything
the guard does not cover (arrays, ints, user types) takes the generic path, so templates only
ever speed up, never change, what a rule would compute.

Strong zero (docs/conventions.md): an exactly-zero cotangent contributes exactly 0, even where
the local partial is inf or NaN. Float variants of products, quotients and functions skip their
adjoint when the cotangent ``_g`` is 0 (``if _g:``); array variants multiply through
``_szp``/``_szq`` (``rules.declare.strong_product``/``strong_quotient``: the product, fixed
only when it holds a NaN) and their in-place forms for large arrays.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Callable

import numpy as np

from ..rules import aliasing_views
from ..rules.declare import has_nan, strong_product, strong_quotient, zero_where_zero
from . import buffers
from .exceptions import EFFECT_MARKERS
from ..ir import nodes as ir
from ..ir.tested_comparisons import TESTED

FLOAT_TYPES = frozenset({float, np.float64})
SEQUENCE_TYPES = frozenset({list, np.ndarray})


class Fast:
    """The tape marker pushed by a template's forward code."""

    def __repr__(self) -> str:
        return "_FAST"


FAST = Fast()

_BINARY = {
    operator.add: "+", operator.iadd: "+", operator.sub: "-", operator.isub: "-",
    operator.mul: "*", operator.imul: "*", operator.truediv: "/", operator.itruediv: "/",
}

# f(x) for a float x: the derivative as an expression of x and t = f(x)
_UNARY: dict[Any, Callable[[str, str], str]] = {
    operator.neg: lambda x, t: "-1.0",
    math.sin: lambda x, t: f"_math.cos({x})", math.cos: lambda x, t: f"-_math.sin({x})",
    math.exp: lambda x, t: t, math.log: lambda x, t: f"(1.0 / {x} if {x} else _over0(1.0, {x}))",
    math.sqrt: lambda x, t: f"(0.5 / {t} if {t} else _over0(0.5, {t}))", math.tanh: lambda x, t: f"1.0 - {t} * {t}",
    # (NumPy's sin of inf is nan, where math's raises: so are the derivatives)
    np.sin: lambda x, t: f"(_math.cos({x}) if _math.isfinite({x}) else _math.nan)",
    np.cos: lambda x, t: f"(-_math.sin({x}) if _math.isfinite({x}) else _math.nan)",
    np.exp: lambda x, t: t, np.log: lambda x, t: f"(1.0 / {x} if {x} else _over0(1.0, {x}))",
    np.sqrt: lambda x, t: f"(0.5 / {t} if {t} else _over0(0.5, {t}))", np.tanh: lambda x, t: f"1.0 - {t} * {t}",
}


def over_zero(a: float, zero: Any) -> Any:
    """``a / zero`` for a (signed) zero float: +-inf as NumPy gives (``sqrt'(0) = inf``), where
    Python floats raise ZeroDivisionError."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.float64(a) / np.float64(zero)


def _strong(lines: list[str]) -> list[str]:
    """Float adjoint lines run only for a nonzero cotangent ``_g`` (strong zero)."""
    return ["if _g:"] + ["    " + line for line in lines] if lines else lines


class Emit:
    """What a template needs from the generator: names and expressions of atoms."""

    def __init__(self, primal: Callable[[ir.Atom], str], fdata: Callable[[ir.Atom], str],
                 rdata: Callable[[str], str], const: Callable[[Any], str]) -> None:
        self.primal, self.fdata, self.rdata, self.const = primal, fdata, rdata, const


def _is_float_atom(a: ir.Atom) -> bool:
    return isinstance(a, ir.Var) or isinstance(a, ir.Const) and type(a.value) in (int, float)


def _float_guard(e: Emit, atoms: list) -> list[str]:
    return [f"type({e.primal(a)}) in _FT" for a in atoms if isinstance(a, ir.Var)]


def _accumulate(e: Emit, a: ir.Atom, expr: str) -> list[str]:
    if not isinstance(a, ir.Var):
        return []
    r = e.rdata(a.name)
    return [f"{r} = {expr} if {r} is _NR else {r} + {expr}"]


class Template:
    """One inline variant of a call: ``guard`` (a Python condition), ``forward`` lines ending in
    a push of ``marker``, ``pops`` (the reverse line taking the residuals off the tape) and
    ``reverse`` lines. Float variants get the result's cotangent as ``_g`` (its rdata) and run
    only when it is not zero; array variants (``uses_rdata=False``) read the result's fdata from
    the tape and always run."""

    def __init__(self, guard: str, forward: list[str], reverse: list[str], pops: str = "",
                 marker: str = "_FAST", uses_rdata: bool = True, large: list[str] | None = None) -> None:
        self.guard, self.forward, self.reverse, self.pops = guard, forward, reverse, pops
        self.marker, self.uses_rdata = marker, uses_rdata
        self.test = f"_e is {marker}"  # how the reverse pass recognises this variant's tape entry
        if large is not None:
            # large arrays: the in-place variants, then the spent buffers go back to the pool
            spent = ["_release(_t)"] if "_t = _pop()" in pops else []
            result = "_t" if spent else "_tf"  # the result is an array even when its fdata is _NF
            self.reverse = ([f"if type({result}) is _ND and {result}.size >= _BIG:"]
                            + ["    " + line for line in large + spent + ["_release(_tf)"]]
                            + ["else:"] + ["    " + line for line in reverse])


def _func_guard(e: Emit, s: ir.Call, value: Any) -> list[str]:
    """A call through a global path (``np.sin``) is checked to still be that function."""
    if isinstance(s.func, ir.Global):
        return [f"{s.func.path} is {e.const(value)}"]
    return []


def template_for(s: ir.Call, value: Any, e: Emit) -> list[Template]:
    """The inline variants for call ``s`` whose function is ``value`` (known at generation)."""
    if s.kwargs or s.star_args is not None or s.star_kwargs is not None:
        return []
    try:
        binary = _BINARY.get(value)
        unary = _UNARY.get(value)
        array_unary = _ARRAY_UNARY.get(value)
    except TypeError:  # unhashable callable
        return []
    if value is operator.setitem and len(s.args) == 3 and isinstance(s.args[0], ir.Var) \
            and _is_index_atom(s.args[1]) and _is_float_atom(s.args[2]):
        return [_setitem(s, e)]
    if not s.target:
        return []
    t, tf = s.target, e.fdata(ir.Var(s.target))
    variants: list[Template] = []
    if binary is not None and len(s.args) == 2 and all(_is_float_atom(a) or isinstance(a, ir.Global) for a in s.args) \
            and any(isinstance(a, (ir.Var, ir.Global)) for a in s.args):
        variants.append(_binary(s, binary, e, t, tf))
        if value not in _IN_PLACE:  # a += b on an array mutates it in place, however it is written
            variants += _array_binary(s, binary, e, t, tf)
        variants += _int_binaries(s, binary, e, t, tf)
    if value in (operator.pow, operator.ipow) and len(s.args) == 2 and isinstance(s.args[0], ir.Var) \
            and isinstance(s.args[1], ir.Const) and type(s.args[1].value) in (int, float) \
            and math.isfinite(s.args[1].value):
        variants += _power(s, e, t, tf)
    if unary is not None and len(s.args) == 1 and isinstance(s.args[0], ir.Var):
        variants.append(_unary(s, value, unary, e, t, tf))
    if array_unary is not None and len(s.args) == 1 and isinstance(s.args[0], ir.Var):
        variants.append(_array_unary(s, value, array_unary, e, t, tf))
    if value is np.sum and len(s.args) == 1 and isinstance(s.args[0], ir.Var):
        variants.append(_array_sum(s, e, t, tf))
    if value is operator.getitem and len(s.args) == 2 and isinstance(s.args[0], ir.Var) and _is_view_index(s.args[1]):
        variants.append(_view_item(s, e, t, tf))
    elif value is operator.getitem and len(s.args) == 2 and isinstance(s.args[0], (ir.Var, ir.Global)) \
            and _is_index_atom(s.args[1]):
        variants.append(_getitem(s, e, t, tf))
    if value in _COMPARISONS and len(s.args) == 2:
        variants.append(_comparison(s, value, e, t, tf))
    if value in _TESTED_COMPARISONS and len(s.args) == 2:
        variants.append(_comparison(s, value, e, t, tf, "_SCALARS"))
    if value in (operator.mul, np.multiply) and len(s.args) == 2 and all(isinstance(a, ir.Var) for a in s.args):
        variants += _times_mask(s, e, t, tf)
    if value in (operator.matmul, np.matmul, np.dot) and len(s.args) == 2 and all(isinstance(a, ir.Var) for a in s.args):
        variants.append(_matmul(s, value, e, t, tf))
    if value is _mktuple() and s.args and all(isinstance(a, ir.Var) or isinstance(a, ir.Const) and type(a.value) is int
                                              for a in s.args):
        variants.append(_int_tuple(s, e, t, tf))
    if value is len and len(s.args) == 1 and isinstance(s.args[0], ir.Var):
        variants.append(_length(s, e, t, tf))
    if value in _NEW_ARRAYS and len(s.args) == 1 and (isinstance(s.args[0], ir.Var) or value in _NEW_SHAPED):
        variants.append(_new_array(s, value, e, t, tf))
    if value is getattr and len(s.args) == 2 and isinstance(s.args[0], ir.Var) and isinstance(s.args[1], ir.Const) \
            and s.args[1].value in _ARRAY_METADATA:
        variants.append(_array_metadata(s, e, t, tf))
    if value is getattr and len(s.args) == 2 and isinstance(s.args[0], ir.Var) and isinstance(s.args[1], ir.Const) \
            and type(s.args[1].value) is str and s.args[1].value == "T":
        variants.append(_transpose(s, e, t, tf))
    if value is operator.getitem and len(s.args) == 2 and isinstance(s.args[0], ir.Var) and _is_index_atom(s.args[1]):
        variants.append(_int_item(s, e, t, tf))
    return variants


_ARRAY_METADATA = frozenset({"shape", "ndim", "size"})  # ints, tuples of ints: no derivative


def _array_metadata(s: ir.Call, e: Emit, t: str, tf: str) -> Template:
    """``a.shape`` (``.ndim``, ``.size``) of an ndarray: ints, nothing to differentiate."""
    a = e.primal(s.args[0])
    forward = [f"{t} = {a}.{s.args[1].value}; {tf} = _NF", "_push(_FASTT)"]
    return Template(f"type({a}) is _ND", forward, [], marker="_FASTT", uses_rdata=False)


def _length(s: ir.Call, e: Emit, t: str, tf: str) -> Template:
    """``len(x)`` of an ndarray or a builtin container: an int, nothing to differentiate."""
    x = e.primal(s.args[0])
    guard = " and ".join(_func_guard(e, s, len) + [f"type({x}) in _SIZED"])
    return Template(guard, [f"{t} = len({x}); {tf} = _NF", "_push(_FASTT)"], [], marker="_FASTT", uses_rdata=False)


_NEW_SHAPED = frozenset({np.zeros, np.ones, np.empty, np.eye, np.identity})  # of a shape (an order): float64
_NEW_ARRAYS = _NEW_SHAPED | {np.zeros_like, np.ones_like, np.empty_like}  # like a float64 array


def _new_array(s: ir.Call, value: Any, e: Emit, t: str, tf: str) -> Template:
    """``np.empty_like(x)`` of a float64 array, ``np.zeros(n)`` of an int or a tuple, ``np.eye(n)``
    of an int: a new float64 array, its fdata zeros (writes into it may carry derivatives),
    nothing to pull back."""
    x = e.primal(s.args[0])
    if value in _NEW_SHAPED:
        shapes = "is int" if value in (np.eye, np.identity) else "in _SHAPES"
        kind = [] if isinstance(s.args[0], ir.Const) else [f"type({x}) {shapes}"]
    else:
        kind = [f"type({x}) is _ND and {x}.dtype is _F64"]
    guard = " and ".join(_func_guard(e, s, value) + kind)
    call = f"{e.primal(s.func) if isinstance(s.func, ir.Global) else e.const(value)}({x})"
    # a temporary only an array block reads (transform/constant_arrays.py): a constant, no fdata
    fdata = "_NF" if getattr(s, "constant_array", False) else f"_zeros_like({t})"
    return Template(guard, [f"{t} = {call}; {tf} = {fdata}", "_push(_FASTT)"], [], marker="_FASTT",
                    uses_rdata=False)


def _transpose(s: ir.Call, e: Emit, t: str, tf: str) -> Template:
    """``x.T`` of an ndarray with an array fdata: a view, its fdata the fdata's transpose (the
    getattr rule's), nothing to pull back."""
    x, xf = e.primal(s.args[0]), e.fdata(s.args[0])
    return Template(f"type({x}) is _ND and type({xf}) is _ND", [f"{t} = {x}.T; {tf} = {xf}.T", "_push(_FASTT)"],
                    [], marker="_FASTT", uses_rdata=False)


def _int_item(s: ir.Call, e: Emit, t: str, tf: str) -> Template:
    """``shape[1]``: an int read from a tuple (of a shape), nothing to differentiate."""
    ps, pi = e.primal(s.args[0]), e.primal(s.args[1])
    forward = [f"{t} = _v; {tf} = _NF", "_push(_FASTT)"]
    return Template(f"type({ps}) is tuple and type(_v := {ps}[{pi}]) is int", forward, [], marker="_FASTT",
                    uses_rdata=False)


def _is_view_index(index: ir.Atom) -> bool:
    """A constant basic index that makes a view of any ndarray it applies to: slices, ``None``
    and ``...``, with ints beside them (``x[:, None]``, ``x[1:]``, ``x[..., 0]``)."""
    if not isinstance(index, ir.Const):
        return False
    items = index.value if type(index.value) is tuple else (index.value,)
    views = [it is None or it is Ellipsis or type(it) is slice for it in items]
    return any(views) and all(view or type(it) is int for view, it in zip(views, items))


def _view_item(s: ir.Call, e: Emit, t: str, tf: str) -> Template:
    """``x[:, None]`` of an ndarray: a view, whose fdata is the same view of ``x``'s fdata (as
    the indexing rule gives it), so there is nothing to pull back."""
    x, index = s.args
    px, pf, pi = e.primal(x), e.fdata(x), e.const(index.value)
    forward = [f"{t} = {px}[{pi}]; {tf} = {pf}[{pi}] if type({pf}) is _ND else _NF", "_push(_FASTT)"]
    return Template(f"type({px}) is _ND", forward, [], marker="_FASTT", uses_rdata=False)


def _mktuple() -> Any:
    from ..ir.primitives import mktuple

    return mktuple


def _is_index_atom(a: ir.Atom) -> bool:
    return isinstance(a, ir.Var) or isinstance(a, ir.Const) and type(a.value) in (int, tuple)


def _binary(s: ir.Call, op: str, e: Emit, t: str, tf: str, ints: tuple = (), marker: str = "_FAST") -> Template:
    """``a op b`` on floats; the operands at positions ``ints`` are int variables instead
    (``_int_binaries``): guarded as ints, given no cotangent."""
    a, b = s.args
    pa, pb = e.primal(a), e.primal(b)
    floats = [x for k, x in enumerate(s.args) if k not in ints]
    guard = " and ".join([f"type({e.primal(s.args[k])}) is int" for k in ints] + _float_guard(e, floats)
                         + [f"type({e.primal(x)}) in _FT" for x in floats if isinstance(x, ir.Global)])
    forward = [f"{t} = {pa} {op} {pb}; {tf} = _NF"]
    reverse: list[str] = []

    def accumulate(k: int, expr: str) -> list[str]:
        return [] if k in ints else _accumulate(e, s.args[k], expr)

    if op in "+-":
        forward.append(f"_push({marker})")
        reverse += accumulate(0, "_g")
        reverse += accumulate(1, "_g" if op == "+" else "-_g")
        return Template(guard, forward, reverse, marker=marker)
    # a global (math.pi, a module's constant: no cotangent) is read into the tape like a variable
    pushes = [x for x in (a, b) if isinstance(x, (ir.Var, ir.Global))]
    if ints:  # only the operands an adjoint reads: a * b's reads the other, a / b's reads b, and a for b's
        adjoints = {k for k in (0, 1) if k not in ints and isinstance(s.args[k], ir.Var)}
        read = {1 - k for k in adjoints} if op == "*" else ({1} if adjoints else set()) | ({0} if 1 in adjoints else set())
        pushes = [x for k, x in enumerate(s.args) if k in read and isinstance(x, (ir.Var, ir.Global))]
    # operands go on the tape before the result is bound: the target may be an operand (s = s * v)
    if pushes:
        forward.insert(0, "; ".join(f"_push({e.primal(x)})" for x in pushes))
    forward.append(f"_push({marker})")
    names = {id(x): f"_v{i}" for i, x in enumerate(pushes)}
    pops = "; ".join(f"{names[id(x)]} = _pop()" for x in reversed(pushes))
    va = names.get(id(a), pa)
    vb = names.get(id(b), pb)
    if op == "*":
        reverse += accumulate(0, f"_g * {vb}")
        reverse += accumulate(1, f"_g * {va}")
    else:  # a / b
        reverse += accumulate(0, f"_g / {vb}")
        reverse += accumulate(1, f"-_g * {va} / ({vb} * {vb})")
    return Template(guard, forward, _strong(reverse), pops, marker=marker)


_INT_MARKERS = {(0,): "_FASTI0", (1,): "_FASTI1", (0, 1): "_FASTI01"}


def _int_binaries(s: ir.Call, op: str, e: Emit, t: str, tf: str) -> list[Template]:
    """``a op b`` where an operand variable (or global) holds an int (``0.5 * n``, ``x / len(x)``,
    ``i * h``):
    Python's own arithmetic, the int without a derivative, where the generic rule call costs
    microseconds. One variant per set of int operands, each with its own tape marker."""
    positions = [k for k, a in enumerate(s.args) if isinstance(a, (ir.Var, ir.Global))]
    sets = [(k,) for k in positions] + ([tuple(positions)] if len(positions) == 2 else [])
    return [_binary(s, op, e, t, tf, ints, _INT_MARKERS[ints]) for ints in sets]


def _unary(s: ir.Call, value: Any, derivative: Callable[[str, str], str], e: Emit, t: str, tf: str) -> Template:
    (x,) = s.args
    px = e.primal(x)
    guard = " and ".join(_func_guard(e, s, value) + _float_guard(e, [x]))
    call = f"-{px}" if value is operator.neg else f"{e.primal(s.func)}({px})"
    forward = [f"{t} = {call}; {tf} = _NF"]
    if value is operator.neg:
        forward.append("_push(_FAST)")
        return Template(guard, forward, _accumulate(e, x, "-_g"))
    forward.insert(0, f"_push({px})")  # before the target (which may be x) is rebound
    forward.append(f"_push({t}); _push(_FAST)")
    return Template(guard, forward, _strong(_accumulate(e, x, f"_g * ({derivative('_x', '_t')})")), "_t = _pop(); _x = _pop()")


def _getitem(s: ir.Call, e: Emit, t: str, tf: str) -> Template:
    seq, index = s.args
    ps, pi = e.primal(seq), e.primal(index)
    known_int = isinstance(index, ir.Const) or e.fdata(index) == "_NF"  # a constant or a loop index
    guard_parts = [] if known_int else [f"type({pi}) in _IDX"]
    guard_parts += [f"type({ps}) in _SEQ", f"type(_v := {ps}[{pi}]) in _FT"]
    # one tape entry, the (fdata, index) pair itself: no other entry is a tuple. Pushed before
    # the target is bound: the target may be the sequence itself (x = x[0])
    forward = [f"_push(({e.fdata(seq)}, {pi}))", f"{t} = _v; {tf} = _NF"]
    # a constant array (a global: fdata _NF) gathers no cotangent
    template = Template(" and ".join(guard_parts), forward, ["if _sf is not _NF: _sf[_i] += _g"], "_sf, _i = _e")
    template.test = "type(_e) is tuple"
    return template


# ---------------------------------------------------------------- array variants

# f(x) for a float64 array x: the derivative as an expression of x and t = f(x)
_ARRAY_UNARY: dict[Any, Callable[[str, str], str]] = {
    np.sin: lambda x, t: f"_np.cos({x})", np.cos: lambda x, t: f"-_np.sin({x})",
    np.exp: lambda x, t: t, np.log: lambda x, t: f"1.0 / {x}", np.sqrt: lambda x, t: f"0.5 / {t}",
    np.tanh: lambda x, t: f"1.0 - {t} * {t}", operator.neg: lambda x, t: "-1.0",
}


def _array_guard(e: Emit, atoms: list) -> list[str]:
    # 0-d arrays are left to the rules: NumPy turns their results into scalars (np.float64)
    return [f"type({e.primal(a)}) is _ND and {e.primal(a)}.dtype is _F64 and {e.primal(a)}.ndim" for a in atoms]


def _array_unary(s: ir.Call, value: Any, derivative: Callable[[str, str], str], e: Emit, t: str, tf: str) -> Template:
    (x,) = s.args
    px = e.primal(x)
    guard = " and ".join(_func_guard(e, s, value) + _array_guard(e, [x]))
    call = f"-{px}" if value is operator.neg else f"{e.primal(s.func)}({px})"
    ufunc = "_np.negative" if value is operator.neg else e.primal(s.func)
    forward = [f"_push({px}); _push({e.fdata(x)})",
               f"{t} = {call} if {px}.size < _BIG else {ufunc}({px}, out=_scratch({px})); "
               f"{tf} = {_active_fdata(e, t, [x])}",
               f"_push({t}); _push({tf}); _push(_FASTA)"]
    reverse = [f"if _xf is not _NF: _xf += _szp(_tf, {derivative('_x', '_t')})"]
    if value is np.cos:  # one NumPy call fewer than adding the product with -sin
        reverse = ["if _xf is not _NF: _xf -= _szp(_tf, _np.sin(_x))"]
    elif value is np.log:
        reverse = ["if _xf is not _NF: _xf += _szq(_tf, _x)"]
    elif value is operator.neg:
        reverse = ["if _xf is not _NF: _xf -= _tf"]
    if value is np.log:
        large = ["if _xf is not _NF: _add_quotient_sz(_xf, _tf, _x)"]
    elif value is operator.neg:
        large = ["if _xf is not _NF: _xf -= _tf"]
    else:
        large = [f"if _xf is not _NF: _add_product_sz(_xf, _tf, {derivative('_x', '_t')})"]
    return Template(guard, forward, reverse, "_tf = _pop(); _t = _pop(); _xf = _pop(); _x = _pop()",
                    marker="_FASTA", uses_rdata=False, large=large)


def _array_sum(s: ir.Call, e: Emit, t: str, tf: str) -> Template:
    (x,) = s.args
    px = e.primal(x)
    guard = " and ".join(_func_guard(e, s, np.sum) + _array_guard(e, [x]))
    # x.sum() is np.sum(x) for an exact ndarray, without NumPy's Python-level dispatch
    forward = [f"_push({e.fdata(x)})", f"{t} = {px}.sum(); {tf} = _NF", "_push(_FAST)"]
    return Template(guard, forward, ["if _xf is not _NF: _xf += _g"], "_xf = _pop()")


_IN_PLACE = (operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ipow)


def _array_binary(s: ir.Call, op: str, e: Emit, t: str, tf: str) -> list[Template]:
    """``a op b`` with two float64 arrays of one shape, or an array and a float. (Not for
    ``a += b``, ``operator.iadd(a, b)``: on an array that mutates it in place, which stays with
    the rule, which restores the array.)"""
    a, b = s.args
    pa, pb = e.primal(a), e.primal(b)
    variants = []
    if isinstance(a, ir.Var) and isinstance(b, ir.Var):
        guard = " and ".join(_array_guard(e, [a, b]) + [f"{pa}.shape == {pb}.shape"])
        variants.append(_array_binary_variant(s, op, e, t, tf, guard, "_FASTA", True, True))
    for array_side in (0, 1):
        arr, other = (a, b) if array_side == 0 else (b, a)
        if not isinstance(arr, ir.Var):
            continue
        guard_parts = _array_guard(e, [arr])
        if isinstance(other, (ir.Var, ir.Global)):
            guard_parts.append(f"type({e.primal(other)}) in _FT")
        marker = "_FASTL" if array_side == 0 else "_FASTR"
        variants.append(_array_binary_variant(s, op, e, t, tf, " and ".join(guard_parts), marker,
                                              array_side == 0, array_side == 1))
    return variants


def _array_binary_variant(s: ir.Call, op: str, e: Emit, t: str, tf: str, guard: str, marker: str,
                          a_is_array: bool, b_is_array: bool) -> Template:
    a, b = s.args
    pa, pb = e.primal(a), e.primal(b)
    fa = e.fdata(a) if a_is_array else "None"
    fb = e.fdata(b) if b_is_array else "None"
    ufunc = {"+": "_np.add", "-": "_np.subtract", "*": "_np.multiply", "/": "_np.divide"}[op]
    shaped = pa if a_is_array else pb
    forward = [f"_push({pa}); _push({pb}); _push({fa}); _push({fb})",
               f"{t} = {pa} {op} {pb} if {shaped}.size < _BIG else {ufunc}({pa}, {pb}, out=_scratch({shaped})); "
               f"{tf} = {_active_fdata(e, t, [a, b], [a_is_array, b_is_array])}",
               f"_push({t}); _push({tf}); _push({marker})"]
    pops = "_tf = _pop(); _t = _pop(); _bf = _pop(); _af = _pop(); _b = _pop(); _a = _pop()"
    # products and quotients with the cotangent follow the strong-zero rule (_szp, _szq, *_sz)
    da = {"+": "_tf", "-": "_tf", "*": "_szp(_tf, _b)", "/": "_szq(_tf, _b)"}[op]
    db = {"+": "_tf", "-": "-_tf", "*": "_szp(_tf, _a)", "/": "-_szp(_tf, _a / (_b * _b))"}[op]
    # large arrays accumulate in place (through a recycled buffer for products and quotients)
    to_array = {"+": {"a": "_af += _tf", "b": "_bf += _tf"}, "-": {"a": "_af += _tf", "b": "_bf -= _tf"},
                "*": {"a": "_add_product_sz(_af, _tf, _b)", "b": "_add_product_sz(_bf, _tf, _a)"},
                "/": {"a": "_add_quotient_sz(_af, _tf, _b)", "b": "_bf -= _szp(_tf, _a / (_b * _b))"}}[op]
    # a float side's cotangent is a sum over the array: without a temporary where possible
    to_float = {"+": {"a": "_tf.sum()", "b": "_tf.sum()"}, "-": {"a": "_tf.sum()", "b": "-_tf.sum()"},
                "*": {"a": "_sum_product_sz(_tf, _b)", "b": "_sum_product_sz(_tf, _a)"},
                "/": {"a": "_np.sum(_szq(_tf, _b))", "b": "-_sum_product_sz(_tf, _a / (_b * _b))"}}[op]
    reverse, large = [], []
    for side, is_array, atom, expr in (("a", a_is_array, a, da), ("b", b_is_array, b, db)):
        if is_array:
            reverse.append(f"if _{side}f is not _NF: _{side}f += {expr}")
            large.append(f"if _{side}f is not _NF: {to_array[side]}")
        elif isinstance(atom, ir.Var):
            r = e.rdata(atom.name)
            reverse.append(f"_s = float(_np.sum({expr})); {r} = _s if {r} is _NR else {r} + _s")
            large.append(f"_s = float({to_float[side]}); {r} = _s if {r} is _NR else {r} + _s")
    return Template(guard, forward, reverse, pops, marker=marker, uses_rdata=False, large=large)


def _power(s: ir.Call, e: Emit, t: str, tf: str) -> list[Template]:
    """``x ** p`` with a numeric constant ``p``: float and float64-array variants."""
    x, p = s.args
    px, pp = e.primal(x), repr(p.value)
    float_variant = Template(
        f"type({px}) in _FT and {px} > 0.0" if not isinstance(p.value, int) else f"type({px}) in _FT",
        [f"_push({px})", f"{t} = {px} ** {pp}; {e.fdata(ir.Var(t))} = _NF", "_push(_FAST)"],
        _strong(_accumulate(e, x, f"_g * {pp} * _x ** ({pp} - 1)")), "_x = _pop()")
    if isinstance(s.func, ir.Const) and s.func.value is operator.ipow:
        return [float_variant]  # x **= p on an array is in place: the rule's business
    array_variant = Template(
        " and ".join(_array_guard(e, [x])),
        [f"_push({px}); _push({e.fdata(x)})", f"{t} = {px} ** {pp}; {tf} = {_active_fdata(e, t, [x])}",
         f"_push({tf}); _push(_FASTA)"],
        [f"if _xf is not _NF: _xf += _szp(_tf, {pp} * _x ** ({pp} - 1))"],
        "_tf = _pop(); _xf = _pop(); _x = _pop()", marker="_FASTA", uses_rdata=False,
        large=[f"if _xf is not _NF: _add_product_sz(_xf, _tf, {'2.0 * _x' if pp == '2' else f'{pp} * _x ** ({pp} - 1)'})"])
    return [float_variant, array_variant]


def _setitem(s: ir.Call, e: Emit) -> Template:
    """``a[i] = v`` writing a float into a float64 array (or a float slot of a list)."""
    arr, index, v = s.args
    pa, pi, pv = e.primal(arr), e.primal(index), e.primal(v)
    guard = " and ".join(
        ([] if isinstance(index, ir.Const) else [f"type({pi}) in _IDX"])
        + [f"type({pa}) in _SEQ", f"type(_old := {pa}[{pi}]) in _FT"]
        + ([f"type({pv}) in _FT"] if isinstance(v, ir.Var) else []))
    # (_VIEW_WATCHES: the arrays a repeating view watches, usually none: rules/aliasing_views.py)
    forward = [f"{pa}[{pi}] = {pv}; _VIEW_WATCHES and _note_write({pa})",
               f"_push({pa}); _push({e.fdata(arr)}); _push({pi}); _push(_old); _push(_FASTS)"]
    pops = "_old = _pop(); _i = _pop(); _af = _pop(); _a = _pop()"
    reverse = ["_s = _af[_i]; _af[_i] = 0.0; _a[_i] = _old  # the old value was overwritten: restore it"]
    if isinstance(v, ir.Var):
        r = e.rdata(v.name)
        reverse.append(f"{r} = _s if {r} is _NR else {r} + _s")
    return Template(guard, forward, reverse, pops, marker="_FASTS", uses_rdata=False)


def _int_tuple(s: ir.Call, e: Emit, t: str, tf: str) -> Template:
    """``(i, j)`` of ints (an index): nothing to differentiate."""
    items = [e.primal(a) for a in s.args]
    guard = " and ".join(f"type({x}) is int" for a, x in zip(s.args, items) if isinstance(a, ir.Var)) or "True"
    forward = [f"{t} = ({', '.join(items)},); {tf} = _NF", "_push(_FASTT)"]
    return Template(guard, forward, [], marker="_FASTT", uses_rdata=False)


def _active_fdata(e: Emit, t: str, atoms: list, arrays: list | None = None) -> str:
    """The fdata expression of an array result: zeros when an input may carry a derivative, and
    ``_NF`` when every input is a constant -- a literal, or an array whose fdata is ``_NF`` (a
    global array, or a result computed from constants only) -- so no cotangent is gathered for it
    (activity analysis at run time: constant data such as fixed observations costs no
    derivative work)."""
    arrays = arrays if arrays is not None else [True] * len(atoms)
    tests = []
    for atom, is_array in zip(atoms, arrays):
        if isinstance(atom, ir.Const):
            continue
        if not is_array:
            return f"_zeros_like({t})"  # a float variable: its derivative is not known here
        tests.append(f"{e.fdata(atom)} is not _NF")
    if not tests:
        return "_NF"
    return f"_zeros_like({t}) if {' or '.join(tests)} else _NF"


_COMPARISONS = {operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">=",
                operator.eq: "==", operator.ne: "!="}
#: ``if a < b:``'s truth of a comparison (``ir/tested_comparisons.py``): for numbers, the comparison
_TESTED_COMPARISONS = {truth: _COMPARISONS[comparison] for comparison, truth in TESTED.items()}


def _comparison(s: ir.Call, value: Any, e: Emit, t: str, tf: str, kinds: str = "_NUM") -> Template:
    """``a < b`` on numbers and arrays (``kinds``; the truth of ``a < b`` on numbers): no
    derivative, nothing to record."""
    a, b = s.args
    guard = " and ".join(f"type({e.primal(x)}) in {kinds}" for x in (a, b) if not isinstance(x, ir.Const)) or "True"
    operator_ = _COMPARISONS.get(value) or _TESTED_COMPARISONS[value]
    forward = [f"{t} = {e.primal(a)} {operator_} {e.primal(b)}; {tf} = _NF", "_push(_FASTC)"]
    return Template(guard, forward, [], marker="_FASTC", uses_rdata=False)


def _times_mask(s: ir.Call, e: Emit, t: str, tf: str) -> list[Template]:
    """A float64 array times a same-shape array without a derivative (a mask ``h * (h > 0)``)."""
    variants = []
    for side, marker in ((0, "_FASTM0"), (1, "_FASTM1")):
        arr, mask = (s.args[0], s.args[1]) if side == 0 else (s.args[1], s.args[0])
        pa, pm = e.primal(arr), e.primal(mask)
        guard = (f"type({pa}) is _ND and {pa}.dtype is _F64 and {pa}.ndim and type({pm}) is _ND and "
                 f"{pm}.dtype.kind in 'bi' and {pa}.shape == {pm}.shape")
        forward = [f"_push({pm}); _push({e.fdata(arr)})",
                   f"{t} = {e.primal(s.args[0])} * {e.primal(s.args[1])}; {tf} = {_active_fdata(e, t, [arr])}",
                   f"_push({tf}); _push({marker})"]
        variants.append(Template(guard, forward, ["if _af is not _NF: _af += _tf * _m"],
                                 "_tf = _pop(); _af = _pop(); _m = _pop()",
                                 large=["if _af is not _NF: _add_spent_product(_af, _tf, _m)"],
                                 marker=marker, uses_rdata=False))
    return variants


def _matmul(s: ir.Call, value: Any, e: Emit, t: str, tf: str) -> Template:
    """``a @ b`` (``np.matmul``, ``np.dot``: the same product) of two 2-D float64 matrices."""
    a, b = s.args
    pa, pb = e.primal(a), e.primal(b)
    guard = " and ".join(_func_guard(e, s, value) + [
        f"type({pa}) is _ND and type({pb}) is _ND and {pa}.ndim == 2 and {pb}.ndim == 2 "
        f"and {pa}.dtype is _F64 and {pb}.dtype is _F64"])
    product = f"{pa} @ {pb}" if value is not np.dot else f"{e.primal(s.func)}({pa}, {pb})"  # the function's own
    forward = [f"_push({pa}); _push({pb}); _push({e.fdata(a)}); _push({e.fdata(b)})",
               f"{t} = {product}; {tf} = {_active_fdata(e, t, [a, b])}", f"_push({tf}); _push(_FASTMM)"]
    # then the spent operands are dropped: the locals would keep them alive through the next
    # steps (the reverse pass's peak), and the product's cotangent goes back to the pool
    reverse = ["if _af is not _NF: _add_matmul(_af, _tf, _b.T)", "if _bf is not _NF: _add_matmul(_bf, _a.T, _tf)",
               "_release(_tf); _a = _b = _af = _bf = _tf = None"]
    return Template(guard, forward, reverse, "_tf = _pop(); _bf = _pop(); _af = _pop(); _b = _pop(); _a = _pop()",
                    marker="_FASTMM", uses_rdata=False)


def add_product_sz(target: np.ndarray, a: np.ndarray, b: Any) -> None:
    """``target += a * b`` with the strong zero (0 where the cotangent ``a`` is 0), without a
    fresh large temporary."""
    if a.size < buffers.MIN_SIZE or a.shape != target.shape:
        target += strong_product(a, b)
        return
    product = buffers.scratch(a)
    np.multiply(a, b, out=product)
    if has_nan(product):
        zero_where_zero(product, a)
    target += product
    buffers.release(product)


def add_quotient_sz(target: np.ndarray, a: np.ndarray, b: Any) -> None:
    """``target += a / b`` with the strong zero, without a fresh large temporary."""
    if a.size < buffers.MIN_SIZE or a.shape != target.shape:
        target += strong_quotient(a, b)
        return
    quotient = buffers.scratch(a)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.divide(a, b, out=quotient)
    if has_nan(quotient):
        zero_where_zero(quotient, a)
    target += quotient
    buffers.release(quotient)


def sum_product_sz(a: np.ndarray, b: Any) -> float:
    """``np.sum(a * b)`` with the strong zero: taken again term by term only when it is NaN."""
    total = buffers.sum_product(a, b) if type(b) is np.ndarray and b.shape == a.shape else float(np.sum(a * b))
    if total != total:
        total = float(np.sum(strong_product(a, b)))
    return total


WRITE_MARKER = Fast()  # pushed by inline writes (a[i] = v); runtime.unwind knows its residuals

NAMESPACE = {
    "_FT": FLOAT_TYPES, "_SEQ": SEQUENCE_TYPES, "_IDX": frozenset({int, tuple}), "_ND": np.ndarray,
    "_F64": np.dtype(np.float64), "_zeros_like": buffers.zeros_like, "_release": buffers.release,
    "_add_product": buffers.add_product, "_add_spent_product": buffers.add_spent_product, "_add_matmul": buffers.add_matmul, "_add_quotient": buffers.add_quotient,
    "_sum_product": buffers.sum_product, "_scratch": buffers.scratch, "_BIG": buffers.MIN_SIZE,
    "_np": np, "_math": math, "_f64": np.float64, "_over0": over_zero,
    "_szp": strong_product, "_szq": strong_quotient, "_has_nan": has_nan, "_add_product_sz": add_product_sz,
    "_add_quotient_sz": add_quotient_sz, "_sum_product_sz": sum_product_sz,
    "_NUM": frozenset({float, int, bool, np.float64, np.ndarray}), "_SCALARS": frozenset({float, int, bool, np.float64}),
    "_SIZED": frozenset({np.ndarray, list, tuple, dict, str}), "_SHAPES": frozenset({int, tuple}),
    "_FASTB": Fast(), "_SLOWB": Fast(), "_FASTLOOP": Fast(), "_SLOWLOOP": Fast(), "_FASTC": Fast(), "_FASTM0": Fast(), "_FASTM1": Fast(), "_FASTMM": Fast(),
    "_FASTI0": Fast(), "_FASTI1": Fast(), "_FASTI01": Fast(),
    "_VIEW_WATCHES": aliasing_views._WATCHED, "_note_write": aliasing_views.note_write,
    "_FAST": FAST, "_FASTA": Fast(), "_FASTL": Fast(), "_FASTR": Fast(), "_FASTS": WRITE_MARKER, "_FASTT": Fast(),
}
# markers of inline code that changes existing data (writes; a float loop's writes), for
# transform/exceptions.py: the others leave nothing behind but new values
EFFECT_MARKERS.update((WRITE_MARKER, NAMESPACE["_FASTLOOP"]))
