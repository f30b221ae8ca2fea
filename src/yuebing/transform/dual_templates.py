"""Inline templates for second order: the dual reverse program's hot scalar operations written
out, as ``templates.py`` does for first order.

In the dual reverse program (``second_order.py``) every call goes through ``call_rrule2``, which
runs a primitive's first-order rule twice or more: tens of microseconds for ``y += x[i]``. For
float arithmetic (``+ - * /``, their in-place forms, ``-x``), NumPy and ``math`` functions of one
float (first and second derivatives), index tuples of ints, and element reads and writes of
float64 arrays, the generator emits the value, its tangent and both adjoints inline behind a type
guard, and the generic call otherwise:

    forward                                         reverse (g, gd: the result's rdata and its tangent)
    if type(a) in _FT and type(a_d) in _FT and ...: _e = _pop()
        t = a * b; t_d = a_d * b + a * b_d           if _e is _DFAST:
        t_f = t_fd = _NF                                 _a, _b, _ad, _bd = _pop()
        _push((a, b, a_d, b_d)); _push(_DFAST)           a_r += g * _b; a_rd += gd * _b + g * _bd ...
    else:                                           else:
        <generic call>                                  <generic pullback>

Strong zero (docs/conventions.md): an exactly-zero cotangent or tangent contributes exactly 0,
even where the partial it multiplies is inf or NaN. Each value, tangent and adjoint is computed
as written above and, only when it comes out NaN, again with every term that has a zero
derivative factor dropped (``strong`` expressions); derivatives that divide by the argument
(``log``, ``sqrt``) give +-inf at 0 as NumPy does, where Python floats would raise.
"""
from __future__ import annotations

import math
import operator
from typing import Any, NamedTuple

import numpy as np

from ..ir import nodes as ir
from ..rules.batched import BATCH
from .dual_tuples import (ACCUMULATED, _as_sequence, _check_unpack, accumulated, float_tuple, same_tuple,
                          tuple_item_guard, unpack_check)

_ARITHMETIC = {
    operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
    operator.iadd: "+", operator.isub: "-", operator.imul: "*", operator.itruediv: "/",
}


class DualTemplate(NamedTuple):
    guard: str
    forward: list  # lines after the guard
    pops: str  # the reverse's residual pops ('' for none)
    contributions: list  # (atom, rdata expression, rdata-tangent expression), with _g and _gd
    strong: tuple = ()  # per contribution: its two expressions by the strong-zero rule, or None
    marker: str = "_DFAST"  # what the forward lines push last; writes push their own (_DWRITE)


def safe_divide(a: float, b: float) -> float:
    """``a / b``, +-inf (or nan) where ``b`` is 0 as NumPy gives, where Python floats raise."""
    if b:
        return a / b
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.float64(a) / np.float64(b)


def _nz(d: str, expr: str) -> str:
    """``expr``, a term with derivative factor(s) ``d`` (``"_g and _xd"``), as 0.0 when one is 0."""
    return f"({expr} if {d} else 0.0)"


def dual_template(gen: Any, s: ir.Call) -> DualTemplate | None:
    """The inline variant of call ``s`` in the dual reverse program of ``gen``, if it has one."""
    if isinstance(s.func, ir.Global):
        return _unary_template(gen, s) or _sum_template(gen, s) or _new_array_or_diagonal(gen, s)
    if not s.target and isinstance(s.func, ir.Const) and s.func.value is _check_unpack():
        return _from_parts(unpack_check(gen, s))
    if not s.target or s.kwargs or s.star_args is not None or s.star_kwargs is not None \
            or not isinstance(s.func, ir.Const) or s.target in gen.integers:
        return None
    func = s.func.value
    if func is operator.neg and len(s.args) == 1:
        return _negation(gen, s)
    try:
        if func in _ARITHMETIC and len(s.args) == 2:
            return _arithmetic(gen, s, _ARITHMETIC[func])
    except TypeError:  # an unhashable constant
        return None
    if func is operator.pow and len(s.args) == 2:
        return _power(gen, s)
    if func is getattr and len(s.args) == 2 and isinstance(s.args[0], ir.Var) and isinstance(s.args[1], ir.Const) \
            and s.args[1].value in _ARRAY_METADATA:
        return _array_metadata(gen, s)
    if func is operator.getitem and len(s.args) == 2 and isinstance(s.args[0], ir.Var) \
            and s.args[0].name in _metadata_names(gen):
        return _int_item(gen, s)
    if func is operator.getitem and len(s.args) == 2:
        return _float_read(gen, s) or _view_read(gen, s)
    if func is _mktuple() and s.args:
        return _int_tuple(gen, s) or _from_parts(float_tuple(gen, s))
    if func is _as_sequence() and len(s.args) == 1:
        return _from_parts(same_tuple(gen, s))
    return None


def _from_parts(parts: tuple | None) -> DualTemplate | None:
    """A template of ``dual_tuples.py`` (its parts) as a DualTemplate."""
    return None if parts is None else DualTemplate(*parts)


def dual_write(gen: Any, s: ir.Call) -> DualTemplate | None:
    """``a[i] = v``: a float written into a float64 array at an int (or int tuple) index."""
    if s.target or s.kwargs or s.star_args is not None or s.star_kwargs is not None \
            or not isinstance(s.func, ir.Const) or s.func.value is not operator.setitem or len(s.args) != 3:
        return None
    array, index, value = s.args
    operand = _operand(gen, value)
    point = _index(gen, index)
    if not isinstance(array, ir.Var) or array.name in gen.integers or operand is None or point is None:
        return None
    pa, ta, fa, fda = gen.primal(array), gen.tangent(array), gen.fdata(array), gen.fdata_tangent(array)
    pv, tv, guard = operand
    guard = [_element_guard(gen, pa, ta, index, point)] + guard
    forward = [f"_old = {pa}[{point}]; _oldd = {ta}[{point}]; {pa}[{point}] = {pv}; {ta}[{point}] = {tv}; "
               f"_VIEW_WATCHES and _note_write({pa})",
               f"_push(({pa}, {ta}, {fa}, {fda}, {point}, _old, _oldd)); _push(_DWRITE)"]
    return DualTemplate(" and ".join(guard), forward, "_y, _yd, _yf, _yfd, _i, _old, _oldd = _pop()",
                        [(value, "_write", "_write")], marker="_DWRITE")


def _index(gen: Any, i: ir.Atom) -> str | None:
    """An index atom that may select one element: an int variable or constant, or a variable
    (an index tuple, checked when the code runs)."""
    if isinstance(i, ir.Var):
        return i.name
    if isinstance(i, ir.Const) and type(i.value) is int:
        return repr(i.value)
    return None


def _element_guard(gen: Any, p: str, t: str, i: ir.Atom, index: str) -> str:
    """The guard of an element read or write ``p[index]``: a float64 array with a tangent laid out
    as it, ``index`` one element. ``at_element`` checks the index when the code runs; an index
    known to be an int or a tuple of ``k`` ints (``_index_rank``) needs only the ranks (a call per
    element costs a tenth of a scalar loop's iteration)."""
    rank = _index_rank(gen, i)
    if rank is None:
        return f"type({p}) is _ND and {p}.dtype is _F64 and type({t}) is _ND and _at_element({p}, {t}, {index})"
    return f"type({p}) is _ND and {p}.dtype is _F64 and {p}.ndim == {rank} and type({t}) is _ND and {t}.ndim == {rank}"


def _index_rank(gen: Any, i: ir.Atom) -> int | None:
    """1 for an index that is an int wherever it runs (an int literal, a variable holding loop
    indices and int arithmetic of them: ``gen.integers``), ``k`` for a variable only ever
    assigned a tuple of ``k`` such ints (``_int_tuple``), else None."""
    if _is_int(gen, i):
        return 1
    return _int_tuple_names(gen).get(i.name) if isinstance(i, ir.Var) else None


def _is_int(gen: Any, a: ir.Atom) -> bool:
    return isinstance(a, ir.Var) and a.name in gen.integers or isinstance(a, ir.Const) and type(a.value) is int


def _int_tuple_names(gen: Any) -> dict:
    """The variables of ``gen``'s function only ever assigned ``(i, j, ...)`` of int atoms, and
    the tuples' length (their inline template always runs: ``_int_tuple``)."""
    found = getattr(gen, "_int_tuple_names", None)
    if found is None:
        lengths: dict[str, Any] = {}
        for name, st in _bindings(gen):
            length = len(st.args) if isinstance(st, ir.Call) and isinstance(st.func, ir.Const) \
                and st.func.value is _mktuple() and st.args and not st.kwargs and st.star_args is None \
                and all(_is_int(gen, a) for a in st.args) else None
            lengths[name] = length if lengths.get(name, length) == length else None
        found = gen._int_tuple_names = {name: k for name, k in lengths.items() if k is not None}
    return found


def at_element(array: Any, tangent: Any, index: Any) -> bool:
    """Whether ``array[index]`` is one element: an int for a 1-D array, a tuple of ints as long
    as the array has dimensions; and ``tangent`` is laid out as ``array`` (a batched pass's has a
    leading batch axis: the generic call then handles it, ``batched_second_order.py``)."""
    if tangent.ndim != array.ndim:
        return False
    if type(index) is int:
        return array.ndim == 1
    return type(index) is tuple and len(index) == array.ndim and all(type(k) is int for k in index)


def _int_tuple(gen: Any, s: ir.Call) -> DualTemplate | None:
    """``(i, j)`` of ints (an index): no derivative."""
    items = []
    for a in s.args:
        if isinstance(a, ir.Var) and a.name in gen.integers or isinstance(a, ir.Const) and type(a.value) is int:
            items.append(gen.primal(a))
        else:
            return None
    t = s.target
    forward = [f"{t} = ({', '.join(items)},); {gen.dd(t)} = _NT; {gen.fd(t)} = {gen.fdd(t)} = _NF", "_push(_DFAST)"]
    return DualTemplate("True", forward, "", [])


_ARRAY_METADATA = frozenset({"shape", "ndim", "size"})  # ints, tuples of ints: no derivative


def _array_metadata(gen: Any, s: ir.Call) -> DualTemplate:
    """``a.shape`` (``.ndim``, ``.size``) of an ndarray: ints, nothing to differentiate (the
    generic call ran the linear class's rule twice, a tenth of a scalar loop's iteration)."""
    a, t = gen.primal(s.args[0]), s.target
    forward = [f"{t} = {a}.{s.args[1].value}; {gen.dd(t)} = _NT; {gen.fd(t)} = {gen.fdd(t)} = _NF", "_push(_DFAST)"]
    return DualTemplate(f"type({a}) is _ND", forward, "", [])


def _int_item(gen: Any, s: ir.Call) -> DualTemplate:
    """``shape[1]``: an int read from a tuple of a shape, nothing to differentiate."""
    ps, pi, t = gen.primal(s.args[0]), gen.primal(s.args[1]), s.target
    forward = [f"{t} = _v; {gen.dd(t)} = _NT; {gen.fd(t)} = {gen.fdd(t)} = _NF", "_push(_DFAST)"]
    return DualTemplate(f"type({ps}) is tuple and type(_v := {ps}[{pi}]) is int", forward, "", [])


def _metadata_names(gen: Any) -> set:
    """The variables of ``gen``'s function assigned ``a.shape`` (``.ndim``, ``.size``) only."""
    found = getattr(gen, "_metadata_names", None)
    if found is None:
        kinds: dict[str, bool] = {}
        for name, st in _bindings(gen):
            kinds[name] = kinds.get(name, True) and isinstance(st, ir.Call) and isinstance(st.func, ir.Const) \
                and st.func.value is getattr and len(st.args) == 2 and isinstance(st.args[1], ir.Const) \
                and st.args[1].value in _ARRAY_METADATA
        found = gen._metadata_names = {name for name, only in kinds.items() if only}
    return found


def _bindings(gen: Any) -> list[tuple[str, Any]]:
    """``(name, statement)`` for every binding in ``gen``'s function: the assigning statement, or
    None for names bound otherwise (loop variables, opaque statements, handlers, closure cells)."""
    found: list[tuple[str, Any]] = [(name, None) for name in getattr(gen.fn, "cell_backed", ())]

    def collect(body: list) -> None:
        for st in body:
            found.extend((name, None) for name in ([st.var] if isinstance(st, ir.ForRange) else [])
                         + list(getattr(st, "defines", ()))
                         + [h.name for h in getattr(st, "handlers", ()) if getattr(h, "name", None)])
            target = getattr(st, "target", None)
            if isinstance(target, str):
                found.append((target, st))
            for block in ir.child_blocks(st):
                collect(block)

    collect(gen.fn.body)
    return found


def _sum_template(gen: Any, s: ir.Call) -> DualTemplate | None:
    """``t = np.sum(x)`` of a float64 array with a tangent of its shape: linear, so the value and
    its tangent are sums and the cotangent and its tangent go to every element."""
    if not s.target or s.kwargs or s.star_args is not None or s.star_kwargs is not None or len(s.args) != 1 \
            or s.target in gen.integers or not isinstance(s.args[0], ir.Var) or s.args[0].name in gen.integers:
        return None
    if gen._resolve(s.func) is not np.sum:
        return None
    x = s.args[0]
    px, tx, fx, fdx = gen.primal(x), gen.tangent(x), gen.fdata(x), gen.fdata_tangent(x)
    guard = (f"{gen.primal(s.func)} is {gen.const(np.sum)} and type({px}) is _ND and {px}.dtype is _F64 "
             f"and type({tx}) is _ND and {tx}.shape == {px}.shape")
    t = s.target
    forward = [f"_v = _dreduce({px}, None); _vd = _dreduce({tx}, None); _push(({fx}, {fdx})); _push(_DFAST)",
               f"{t} = _v; {gen.dd(t)} = _vd; {gen.fd(t)} = {gen.fdd(t)} = _NF"]
    return DualTemplate(guard, forward, "_xf, _xfd = _pop()", [(x, "_sum", "_sum")])


_NEW_OF_ORDER = {np.eye: "is int", np.identity: "is int", np.zeros: "in _SHAPES_D", np.ones: "in _SHAPES_D"}


def _new_array_or_diagonal(gen: Any, s: ir.Call) -> DualTemplate | None:
    """``t = np.eye(n)`` (``identity``, ``zeros``, ``ones`` of an order or a shape): a new float64
    array with zero fdata, tangent and fdata tangent (a constant only an array block reads,
    ``constant_arrays.py``: no fdata and a read-only zero tangent), nothing to pull back; and
    ``t = np.diag(L)`` of a float64 matrix: the same diagonal views of its tangent, fdata and fdata
    tangent (writable, as the rule gives them), so cotangents reach ``L``'s fdata with no reverse
    work. Each was a generic call paying the zero or linear class's dispatch."""
    if not s.target or s.kwargs or s.star_args is not None or s.star_kwargs is not None or len(s.args) != 1 \
            or not isinstance(s.args[0], ir.Var):
        return None
    try:
        func = gen._resolve(s.func)
        func = len if func is None and s.func.path == "len" else func  # the builtin (its guard checks)
        kind = _NEW_OF_ORDER.get(func)
    except TypeError:  # unhashable
        return None
    if s.target in gen.integers and func is not len:
        return None
    x, t = s.args[0], s.target
    px, fn = gen.primal(x), gen.primal(s.func)
    if kind is not None:
        if getattr(s, "constant_array", False):
            parts = f"{gen.dd(t)} = {gen.const(_zero_view)}(_v); {gen.fd(t)} = {gen.fdd(t)} = _NF"
        else:
            zeros = gen.const(np.zeros)
            parts = f"{gen.fd(t)} = {zeros}(_v.shape); {gen.dd(t)} = {zeros}(_v.shape); {gen.fdd(t)} = {zeros}(_v.shape)"
        # (a batched pass gives new arrays batched zero tangents: the generic call)
        guard = (f"{fn} is {gen.const(func)} and type({px}) {kind.replace('_SHAPES_D', gen.const(_SHAPES))} "
                 f"and not {gen.const(BATCH)}.size")
        return DualTemplate(guard, [f"_v = {fn}({px}); _push(_DFAST)", f"{t} = _v; {parts}"], "", [])
    if func is len:  # of an array or a builtin container: an int
        guard = f"{fn} is {gen.const(len)} and type({px}) in {gen.const(_SIZED)}"
        forward = [f"{t} = len({px}); {gen.dd(t)} = _NT; {gen.fd(t)} = {gen.fdd(t)} = _NF", "_push(_DFAST)"]
        return DualTemplate(guard, forward, "", [])
    if func is not np.diag or x.name in gen.integers:
        return None
    tx, fx, fdx = gen.tangent(x), gen.fdata(x), gen.fdata_tangent(x)
    guard = (f"{fn} is {gen.const(np.diag)} and type({px}) is _ND and {px}.dtype is _F64 and {px}.ndim == 2 "
             f"and type({tx}) is _ND and {tx}.shape == {px}.shape and type({fx}) is _ND and {fx}.shape == {px}.shape "
             f"and type({fdx}) is _ND and {fdx}.shape == {px}.shape")
    diagonal = gen.const(_writable_diagonal)
    forward = [f"_v = {fn}({px}); _vd = {diagonal}({tx}, 0); _vf = {diagonal}({fx}, 0); "
               f"_vfd = {diagonal}({fdx}, 0); _push(_DFAST)",
               f"{t} = _v; {gen.dd(t)} = _vd; {gen.fd(t)} = _vf; {gen.fdd(t)} = _vfd"]
    return DualTemplate(guard, forward, "", [])


_SHAPES = frozenset({int, tuple})
_SIZED = frozenset({np.ndarray, list, tuple, dict, str})


def _zero_view(value: np.ndarray) -> np.ndarray:
    from .forward_blocks import zero_view

    return zero_view(value)


def _writable_diagonal(a: np.ndarray, k: int) -> np.ndarray:
    from ..rules.numpy_creation import _writable_diagonal as diagonal

    return diagonal(a, k)


def _mktuple() -> Any:
    from ..ir.primitives import mktuple

    return mktuple


def _unary_template(gen: Any, s: ir.Call) -> DualTemplate | None:
    """``t = f(x)`` for a float ``x`` and ``f`` in ``_UNARY`` (a NumPy or ``math`` function)."""
    if not s.target or s.kwargs or s.star_args is not None or s.star_kwargs is not None \
            or len(s.args) != 1 or s.target in gen.integers or not isinstance(s.func, ir.Global):
        return None
    func = gen._resolve(s.func)
    try:
        derivatives = _UNARY.get(func)
    except TypeError:  # unhashable
        return None
    operand = _operand(gen, s.args[0])
    if derivatives is None or operand is None or not operand[2]:
        return None
    px, tx, guard = operand
    divide = gen.const(safe_divide)
    first, second = (d.replace("X", "_x").replace("T", "_t").replace("_sdiv", divide) for d in derivatives)
    t = s.target
    # the partial, when the tangent needed it, goes to the reverse with the value (not computed
    # there again, twice); otherwise None, and the reverse computes it (math.cos(inf) raises: only
    # where a derivative needs it, as before)
    forward = [f"_v = {gen.primal(s.func)}({px}); _x = {px}; _t = _v",
               f"if {tx}: _p = {first}; _vd = _p * {tx}",
               "else: _p = None; _vd = 0.0",
               f"_push(({px}, {tx}, _v, _p)); _push(_DFAST)",
               f"{t} = _v; {gen.dd(t)} = _vd; {gen.fd(t)} = {gen.fdd(t)} = _NF"]
    guard = [f"{gen.primal(s.func)} is {gen.const(func)}"] + guard
    pops = f"_x, _xd, _t, _p = _pop()\nif _p is None: _p = {first}"
    return DualTemplate(" and ".join(guard), forward, pops,
                        [(s.args[0], "_g * _p", f"_gd * _p + _g * ({second}) * _xd")],
                        ((_nz("_g", "_g * _p"),
                          _nz("_gd", "_gd * _p") + " + " + _nz("_g and _xd", f"_g * ({second}) * _xd")),))


def _finite(derivative: str, module: Any) -> str:
    """NumPy's sin and cos of inf are nan, where math's raise (as the primal call does)."""
    return derivative if module is math else f"({derivative} if _math.isfinite(X) else _math.nan)"


# f(X) = T: the first and second derivatives as expressions of X and T
_UNARY: dict = {}
for _module in ("math", "np"):
    _m = math if _module == "math" else np
    _UNARY.update({
        _m.sin: (_finite("_math.cos(X)", _m), _finite("-_math.sin(X)", _m)),
        _m.cos: (_finite("-_math.sin(X)", _m), _finite("-_math.cos(X)", _m)),
        _m.exp: ("T", "T"), _m.log: ("_sdiv(1.0, X)", "_sdiv(-1.0, X * X)"),
        _m.sqrt: ("_sdiv(0.5, T)", "_sdiv(-0.25, T * T * T)"),
        _m.tanh: ("1.0 - T * T", "-2.0 * T * (1.0 - T * T)"),
    })


def _operand(gen: Any, a: ir.Atom) -> tuple[str, str, list] | None:
    """``(value, tangent, guard parts)`` of a float operand, or None."""
    if isinstance(a, ir.Var) and a.name not in gen.integers or isinstance(a, ir.Global) and "." not in a.path:
        # (a module global is read into a local with its tangent: a constant, it takes no rdata)
        value, tangent = gen.primal(a), gen.tangent(a)
        return value, tangent, [f"type({value}) in _FT", f"type({tangent}) in _FT"]
    if isinstance(a, ir.Const) and type(a.value) in (int, float) and math.isfinite(a.value):
        return repr(float(a.value)), "0.0", []  # a literal: finite (repr(inf) is no Python literal)
    return None


def _number_operand(gen: Any, a: ir.Atom) -> tuple[str, str, list] | None:
    """``(value, "0.0", guard parts)`` of an operand without a derivative that is not a literal: a
    variable bound only by ``len(...)`` (an int) or a module's float (``math.pi``)."""
    if isinstance(a, ir.Var) and a.name in _length_names(gen):
        return a.name, "0.0", [f"type({a.name}) is int"]
    if isinstance(a, ir.Global) and "." in a.path:
        value = gen.primal(a)
        return value, "0.0", [f"type({value}) in _FT"]
    return None


def _length_names(gen: Any) -> set:
    """The variables of ``gen``'s function bound only by ``len(...)`` (``n = len(x)``)."""
    found = getattr(gen, "_length_names", None)
    if found is None:
        kinds: dict[str, bool] = {}
        for name, st in _bindings(gen):
            kinds[name] = kinds.get(name, True) and isinstance(st, ir.Call) and len(st.args) == 1 \
                and (isinstance(st.func, ir.Global) and st.func.path == "len"
                     or isinstance(st.func, ir.Const) and st.func.value is len)
        found = gen._length_names = {name for name, only in kinds.items() if only}
    return found


def _arithmetic(gen: Any, s: ir.Call, op: str) -> DualTemplate | None:
    a, b = s.args
    numbers = [k for k, x in enumerate(s.args) if _number_operand(gen, x) is not None]
    left, right = (_number_operand(gen, x) if k in numbers else _operand(gen, x) for k, x in enumerate(s.args))
    if left is None or right is None or not left[2] and not right[2]:
        return None
    if all(isinstance(x, ir.Var) and k in numbers or isinstance(x, ir.Const) and type(x.value) is int
           for k, x in enumerate(s.args)):
        return None  # ints only (n * 2): an int, the generic call
    (pa, ta, ga), (pb, tb, gb) = left, right
    t, td = s.target, gen.dd(s.target)
    # into temporaries first: the target may be an operand (s *= v)
    tangent = {"+": f"{ta} + {tb}", "-": f"{ta} - {tb}", "*": f"{ta} * {pb} + {pa} * {tb}",
               "/": f"({ta} - _v * {tb}) / {pb}"}[op]
    forward = [f"_v = {pa} {op} {pb}; _vd = {tangent}"]
    if op in "*/":  # strong zero: again term by term when the tangent comes out NaN
        strong_tangent = {"*": f"{_nz(ta, f'{ta} * {pb}')} + {_nz(tb, f'{pa} * {tb}')}",
                          "/": f"{_nz(ta, f'{ta} / {pb}')} - {_nz(tb, f'_v * {tb} / {pb}')}"}[op]
        forward.append(f"if _vd != _vd: _vd = {strong_tangent}")
    if op in "*/":
        forward.append(f"_push(({pa}, {pb}, {ta}, {tb})); _push(_DFAST)")
        pops = "_a, _b, _ad, _bd = _pop()"
    else:
        forward.append("_push(_DFAST)")
        pops = ""
    forward.append(f"{t} = _v; {td} = _vd; {gen.fd(t)} = {gen.fdd(t)} = _NF")
    if op == "+":
        parts = [(a, "_g", "_gd"), (b, "_g", "_gd")]
    elif op == "-":
        parts = [(a, "_g", "_gd"), (b, "-_g", "-_gd")]
    elif op == "*":
        parts = [(a, "_g * _b", "_gd * _b + _g * _bd"), (b, "_g * _a", "_gd * _a + _g * _ad")]
    else:  # t = a / b: da = g / b, db = -g a / b^2, and their derivatives
        parts = [(a, "_g / _b", "(_gd - _g * _bd / _b) / _b"),
                 (b, "-_g * _a / (_b * _b)", "(2.0 * _g * _a * _bd / _b - _gd * _a - _g * _ad) / (_b * _b)")]
    strong: tuple = ()
    if op == "*":
        strong = tuple((_nz("_g", f"_g * {p}"), f"{_nz('_gd', f'_gd * {p}')} + {_nz(f'_g and {pd}', f'_g * {pd}')}")
                       for p, pd in (("_b", "_bd"), ("_a", "_ad")))
    elif op == "/":
        strong = ((_nz("_g", "_g / _b"), f"{_nz('_gd', '_gd / _b')} - {_nz('_g and _bd', '_g * _bd / (_b * _b)')}"),
                  (_nz("_g", "-_g * _a / (_b * _b)"),
                   f"{_nz('_g and _bd', '2.0 * _g * _a * _bd / (_b * _b * _b)')} - {_nz('_gd', '_gd * _a / (_b * _b)')}"
                   f" - {_nz('_g and _ad', '_g * _ad / (_b * _b)')}"))
    parts = [(ir.Const(0) if k in numbers else atom, value, tangent) for k, (atom, value, tangent) in enumerate(parts)]
    return DualTemplate(" and ".join(ga + gb), forward, pops, parts, strong)  # (no rdata for an int)


def _power(gen: Any, s: ir.Call) -> DualTemplate | None:
    """``t = a ** c``: a float to a literal int power from 2 to 4 (Python raises where it
    overflows, as the statement does)."""
    a, c = s.args
    operand = _operand(gen, a)
    if operand is None or not operand[2] or not isinstance(c, ir.Const) or type(c.value) is not int \
            or not 2 <= c.value <= 4:
        return None
    px, tx, guard = operand
    n = c.value
    first = f"{n}.0 * _x" if n == 2 else f"{n}.0 * _x ** {n - 1}"
    second = "2.0" if n == 2 else f"{n * (n - 1)}.0 * _x" if n == 3 else f"{n * (n - 1)}.0 * _x ** {n - 2}"
    t = s.target
    forward = [f"_x = {px}; _v = _x ** {n}; _vd = ({first}) * {tx} if {tx} else 0.0",
               f"_push(({px}, {tx})); _push(_DFAST)",
               f"{t} = _v; {gen.dd(t)} = _vd; {gen.fd(t)} = {gen.fdd(t)} = _NF"]
    return DualTemplate(" and ".join(guard), forward, "_x, _xd = _pop()",
                        [(a, f"_g * ({first})", f"_gd * ({first}) + _g * ({second}) * _xd")],
                        ((_nz("_g", f"_g * ({first})"),
                          _nz("_gd", f"_gd * ({first})") + " + " + _nz("_g and _xd", f"_g * ({second}) * _xd")),))


def _negation(gen: Any, s: ir.Call) -> DualTemplate | None:
    operand = _operand(gen, s.args[0])
    if operand is None or not operand[2]:
        return None
    px, tx, guard = operand
    t = s.target
    forward = [f"_v = -{px}; _vd = -{tx}", "_push(_DFAST)",
               f"{t} = _v; {gen.dd(t)} = _vd; {gen.fd(t)} = {gen.fdd(t)} = _NF"]
    return DualTemplate(" and ".join(guard), forward, "", [(s.args[0], "-_g", "-_gd")])


def _float_read(gen: Any, s: ir.Call) -> DualTemplate | None:
    """``t = x[i]``: a float from a 1-D float64 array at an int index, or from a tuple at an int
    constant (``a, b = pair(t)``; its cotangents go to the tuple's rdata: ``dual_tuples.py``)."""
    x, i = s.args
    index = _index(gen, i)
    if not isinstance(x, ir.Var) or x.name in gen.integers or index is None:
        return None
    px, tx, fx, fdx = gen.primal(x), gen.tangent(x), gen.fdata(x), gen.fdata_tangent(x)
    guard = _element_guard(gen, px, tx, i, index)
    pushed = f"({fx}, {fdx}, {index})"
    if isinstance(i, ir.Const):
        guard = f"({guard}) or ({tuple_item_guard(px, tx, index)})"
        pushed = f"{pushed} if type({px}) is _ND else (_TUPLE, len({px}), {index})"
    t = s.target
    # the array's fdata is pushed before the target is bound: the target may be the array (x = x[0])
    forward = [f"_v = {px}[{index}]; _vd = {tx}[{index}]; _push({pushed}); _push(_DFAST)",
               f"{t} = _v; {gen.dd(t)} = _vd; {gen.fd(t)} = {gen.fdd(t)} = _NF"]
    return DualTemplate(guard, forward, "_xf, _xfd, _i = _pop()", [(x, "_read", "_read")])


def _view_read(gen: Any, s: ir.Call) -> DualTemplate | None:
    """``t = x[:, None]``: a view of a float64 array at a constant basic index (slices, None,
    ``...`` and ints, not only ints). Its tangent, fdata and fdata tangent are the same views of
    the array's, so cotangents written into the view's fdata are the array's: the reverse has
    nothing to do, as the indexing rule's pullback (the generic call paid the linear class's
    dispatch and tangent walks)."""
    x, i = s.args
    if not isinstance(x, ir.Var) or x.name in gen.integers or not isinstance(i, ir.Const) or not _basic_view(i.value):
        return None
    px, tx, fx, fdx, index = gen.primal(x), gen.tangent(x), gen.fdata(x), gen.fdata_tangent(x), gen.primal(i)
    # every part laid out as the array (a batched pass's tangents have a leading axis: not here)
    guard = (f"type({px}) is _ND and {px}.dtype is _F64 and type({tx}) is _ND and {tx}.shape == {px}.shape "
             f"and type({fx}) is _ND and {fx}.shape == {px}.shape and type({fdx}) is _ND and {fdx}.shape == {px}.shape")
    t = s.target
    forward = [f"_v = {px}[{index}]; _vd = {tx}[{index}]; _vf = {fx}[{index}]; _vfd = {fdx}[{index}]; _push(_DFAST)",
               f"{t} = _v; {gen.dd(t)} = _vd; {gen.fd(t)} = _vf; {gen.fdd(t)} = _vfd"]
    return DualTemplate(guard, forward, "", [])


def _basic_view(index: Any) -> bool:
    """Whether indexing an array with ``index`` gives a view (basic indexing that is not only ints)."""
    parts = index if type(index) is tuple else (index,)
    return any(p is None or p is Ellipsis or type(p) is slice for p in parts) \
        and all(p is None or p is Ellipsis or type(p) is int or type(p) is slice and _int_bounds(p) for p in parts)


def _int_bounds(part: slice) -> bool:
    return all(b is None or type(b) is int for b in (part.start, part.stop, part.step))


def _grouped(expr: str) -> str:
    """``expr`` as an operand of ``+`` (parenthesised unless it is a name)."""
    return expr if expr.isidentifier() else f"({expr})"


def nan_batch(c: Any) -> bool:
    """A batched pass's tangent of a cotangent (an array, ``batched_second_order.py``) holding a
    NaN: the strong-zero fix below works on numbers, so the pass is dropped (its Hessian columns are
    then computed one pass each); otherwise False."""
    if np.isnan(c).any():
        from .batched_second_order import Unbatched

        raise Unbatched("a NaN in a batched cotangent tangent (the strong-zero rule works one direction at a time)")
    return False


def reverse_lines(gen: Any, s: ir.Call, template: DualTemplate) -> list[str]:
    """The reverse of an inline call: the result's rdata and its tangent, taken to the operands."""
    lines = template.pops.split("\n") if template.pops else []
    if not s.target and template.contributions:  # a write: restore the overwritten element; its cotangents go to the value
        lines.append("_y[_i] = _old; _yd[_i] = _oldd")
        (value, _, _), = template.contributions
        for fdata, rdata in (("_yf", gen.rd), ("_yfd", gen.rdd)):
            lines.append(f"if {fdata} is not _NF:")
            lines.append(f"    _c = {fdata}[_i]; {fdata}[_i] = 0.0")
            if isinstance(value, ir.Var):
                r = rdata(value.name)
                lines.append(f"    {r} = _c if {r} is _NR else {r} + _c")
        return lines
    if not s.target:  # a check (unpacking): nothing to undo
        return lines or ["pass"]
    r, rd = gen.rd(s.target), gen.rdd(s.target)
    lines.append(f"_g = {r}; _gd = {rd}; {r} = {rd} = _NR")
    summed = [c for c in template.contributions if c[1].startswith(ACCUMULATED)]
    if summed:  # rdata of tuples, summed by _acc (NoRData for none)
        return lines + accumulated(gen, summed)
    lines.append("if _g is not _NR or _gd is not _NR:")
    lines.append("    _g = 0.0 if _g is _NR else _g; _gd = 0.0 if _gd is _NR else _gd")
    strong = template.strong or (None,) * len(template.contributions)
    cleared = {r, rd}  # rdata known to be _NR here: an operand that is the target (y = y + t)
    for (atom, value, tangent), by_rule in zip(template.contributions, strong):
        if value == "_sum":  # a sum: its cotangents go to every element of the array's fdata
            lines.append("    if _xf is not _NF: _xf += _g")
            # (an HVP seeds the output's cotangent tangent with 0.0: nothing to add, a pass saved)
            lines.append("    if _xfd is not _NF and type(_gd) is not _ND and _gd: _xfd += _gd")
            continue
        if value == "_read":  # a float read: its cotangents go into the array's fdata and fdata tangent
            xr, xrd = gen.rd(atom.name), gen.rdd(atom.name)  # (a tuple's: its rdata, _xfd its length)
            lines.append(f"    if _xf is _TUPLE: {xr} = _acc({xr}, _one_hot(_xfd, _i, _g)); "
                         f"{xrd} = _acc({xrd}, _one_hot(_xfd, _i, _gd)); _xf = _xfd = _NF")
            lines.append("    if _xf is not _NF: _xf[_i] += _g")
            # a batched cotangent tangent (an array) reaching an array read inline: the array's
            # tangent had no batch axis, a constant of the pass whose fdata tangent takes nothing
            lines.append("    if _xfd is not _NF and type(_gd) is not _ND: _xfd[_i] += _gd")
            continue
        if not isinstance(atom, ir.Var):
            continue  # a literal
        ar, ard = gen.rd(atom.name), gen.rdd(atom.name)
        for expr, strong_expr, r in ((value, by_rule and by_rule[0], ar), (tangent, by_rule and by_rule[1], ard)):
            if not strong_expr:
                lines.append(f"    {r} = {expr}" if r in cleared else f"    {r} = {expr} if {r} is _NR else {r} + {_grouped(expr)}")
                cleared.discard(r)
                continue
            lines.append(f"    _c = {expr}")
            if strong_expr:  # a NaN (0 * inf?): again, by the strong-zero rule
                lines.append(f"    if (_c != _c if type(_c) is not _ND else _nan_batch(_c)): _c = {strong_expr}")
            lines.append(f"    {r} = _c if {r} is _NR else {r} + _c")
            cleared.discard(r)
    return lines
