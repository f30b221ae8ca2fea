"""Rules for the in-place functions of the ``operator`` module: ``iadd isub imul itruediv
ifloordiv imod ipow iconcat`` (DESIGN.md §2, §4).

They mutate an ndarray left operand in place and return it (the output codual *is* the left
codual); ``list += seq`` and ``list *= n`` mutate the list (but ``list += array`` is NumPy's
``np.asarray(list) + array``, a new array); on floats, ints and tuples they rebind
(the out-of-place rules of ``arithmetic.py``, whose partials and conventions they share). NumPy's
casting rules are kept (``int_array += 0.5`` raises).
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from ...tangents import NoRData, NoTangent
from .. import aliasing_views
from ..cases import Case, randc, randn, randpos
from ..core import CoDual, Dual, describe_callable, frule, primal, rrule
from ..declare import strong_product
from ..util import accumulate, add_rdata_to, fit_tangent, is_differentiable, refuse_numbers_into_object_array, tangent
from .arithmetic import _NUMERIC, _binary_rules, _one, _register
from .common import (
    Elements, _is_count, _is_numeric, _unsupported, fdata_part, fit_element, forward_elements, fresh_tangent,
    rdata_part, ref, send, tangent_free,
)

# ============================================================================================
# In-place operators
# ============================================================================================


def _conj(d: Any) -> Any:
    return np.conj(d) if np.iscomplexobj(d) else d


def _check_operand(name: str, a: Any, z: Any) -> None:
    if not _is_numeric(z) and not tangent_free(z):
        raise _unsupported(name, a, z)
    refuse_numbers_into_object_array(name, a, z)  # a structured array's field (arr["w"] += x)


def _array_inplace_rrule(iop: Callable, op: Callable, name: str, partials: tuple, needs_y: bool,
                         a: CoDual, b: Any) -> tuple[CoDual, Callable]:
    x, z = a.primal, primal(b)
    _check_operand(name, x, z)
    saved = x.copy()
    iop(x, z)  # NumPy's own in-place semantics and casting errors
    aliasing_views.note_write(x)
    fd = a.fdata
    out = CoDual(x, fd)
    if not isinstance(fd, np.ndarray):  # integer array: no tangent
        def restore_only(dy: Any) -> tuple:
            x[...] = saved
            return NoRData, NoRData, NoRData

        return out, restore_only

    def pullback(dy: Any) -> tuple:
        g = fd.copy()  # cotangent of the post-call array (output and argument are one object)
        x[...] = saved  # restore first: b may be a or a view of a
        fd[...] = 0  # the old contents were overwritten
        with np.errstate(all="ignore"):
            y = op(x, z) if needs_y else None
            rdatas = [NoRData]
            for arg, v, partial in ((a, x, partials[0]), (b, z, partials[1])):
                if partial is None or not is_differentiable(v):
                    rdatas.append(NoRData)
                else:  # strong zero: a zero cotangent contributes 0 through an inf/nan partial
                    rdatas.append(accumulate(arg, strong_product(g, _conj(partial(x, z, y)))))
        return tuple(rdatas)

    return out, pullback


def _array_inplace_frule(iop: Callable, name: str, partials: tuple, a: Dual, b: Any) -> Dual:
    x, z = a.primal, primal(b)
    _check_operand(name, x, z)
    if x.dtype.kind not in "fc" or not isinstance(a.tangent, np.ndarray):
        iop(x, z)
        return Dual(x, a.tangent)
    old = x.copy()
    z_old = z.copy() if isinstance(z, np.ndarray) and np.shares_memory(x, z) else z
    iop(x, z)
    dy: Any = NoTangent
    with np.errstate(all="ignore"):
        for arg, v, partial in ((a, old, partials[0]), (b, z_old, partials[1])):
            dv = tangent(arg)
            if partial is None or dv is NoTangent or not is_differentiable(v):
                continue
            term = strong_product(dv, partial(old, z_old, x))
            dy = term if dy is NoTangent else dy + term
    a.tangent[...] = fit_tangent(dy, x)  # computed in full before writing: b may alias a
    return Dual(x, a.tangent)


def _list_extend_rrule(iop: Callable, name: str, a: CoDual, b: Any) -> tuple[CoDual, Callable]:
    lst, fd = a.primal, a.fdata
    z = primal(b)
    if iop is operator.iconcat and not hasattr(type(z), "__getitem__"):
        raise TypeError(f"'{type(z).__name__}' object can't be concatenated")
    src = Elements(b, name)  # snapshot before the mutation (b may be a itself)
    m = len(lst)
    iop(lst, src.items if src._kind == "constant" else z)
    nodes = [ref(src, i) for i in range(len(src))]
    fd.extend([fresh_tangent(p, f) for p, f, _ in nodes])

    def pullback(dy: Any) -> tuple:
        tail = fd[m:]
        del fd[m:]
        del lst[m:]
        for j in range(len(nodes) - 1, -1, -1):
            send(nodes[j][2], rdata_part(tail[j]))
        return NoRData, NoRData, src.rdata()

    return CoDual(lst, fd), pullback


def _list_repeat_rrule(iop: Callable, a: CoDual, b: Any) -> tuple[CoDual, Callable]:
    lst, fd = a.primal, a.fdata
    n, m = primal(b), len(lst)
    saved_items = list(lst)
    fdatas = [fdata_part(t) for t in fd]
    iop(lst, n)
    if len(lst) > 0:
        fd.extend([fresh_tangent(p, f) for _ in range(int(n) - 1) for p, f in zip(saved_items, fdatas)])
    else:
        del fd[:]

    def pullback(dy: Any) -> tuple:
        if m and len(lst) > 0:
            tail = fd[m:]
            del fd[m:]
            del lst[m:]
            for k, t in enumerate(tail):
                fd[k % m] = add_rdata_to(fd[k % m], rdata_part(t))
        else:  # the list was emptied: the values removed have cotangent zero
            lst[:] = saved_items
            fd[:] = [fresh_tangent(p, f) for p, f in zip(saved_items, fdatas)]
        return NoRData, NoRData, NoRData

    return CoDual(lst, fd), pullback


def _list_inplace_frule(iop: Callable, name: str, a: Dual, b: Any) -> Dual:
    lst, t = a.primal, a.tangent
    if iop is operator.imul:
        n, m = primal(b), len(lst)
        old = list(zip(lst, t))
        iop(lst, n)
        t[:] = [fit_element(p, dt) for p, dt in old] * max(int(n), 0) if m else []
        return Dual(lst, t)
    z = primal(b)
    if iop is operator.iconcat and not hasattr(type(z), "__getitem__"):
        raise TypeError(f"'{type(z).__name__}' object can't be concatenated")
    items = forward_elements(b, name)
    constant = not isinstance(z, (list, tuple, np.ndarray))
    iop(lst, [p for p, _ in items] if constant else z)
    t.extend(fit_element(p, dt) for p, dt in items)
    return Dual(lst, t)


def numpy_gives_result(iop: Callable, x: Any, b: Any) -> bool:
    """``list OP= array``: lists have no in-place number methods, so Python asks the array's
    reflected operator first and NumPy returns a new array (``l += x`` adds elementwise; it does
    not extend ``l``, which is left as it was)."""
    return isinstance(x, (list, tuple)) and isinstance(primal(b), (np.ndarray, np.generic)) \
        and iop is not operator.iconcat


def as_array_rrule(op: Callable, a: Any, b: Any) -> tuple[CoDual, Callable]:
    """``op(np.asarray(a), b)`` with the conversion's rule: the list's cotangent flows back to it."""
    converted, convert_pullback = rrule(np.asarray, a)
    out, pullback = rrule(op, converted, b)

    def as_array_pullback(dy: Any) -> tuple:
        _, ra, rb = pullback(dy)
        return NoRData, convert_pullback(ra)[1], rb

    return out, as_array_pullback


def as_array_frule(op: Callable, a: Any, b: Any) -> Dual:
    return frule(op, frule(np.asarray, a), b)


def _inplace_rules(iop: Callable, op: Callable, kind: str, partials: tuple, needs_y: bool) -> tuple[Callable, Callable]:
    name = describe_callable(iop)
    rebind_r, rebind_f = _binary_rules(iop, name, kind, partials, in_place=True)
    list_op = iop in (operator.iadd, operator.iconcat) or iop is operator.imul

    def rrule(a: Any, b: Any) -> tuple[CoDual, Callable]:
        x = primal(a)
        if isinstance(x, np.ndarray) and isinstance(a, CoDual):
            return _array_inplace_rrule(iop, op, name, partials, needs_y, a, b)
        if numpy_gives_result(iop, x, b):
            return as_array_rrule(op, a, b)
        if isinstance(x, list) and list_op and isinstance(a, CoDual) and isinstance(a.fdata, list):
            if iop is operator.imul:
                if not _is_count(primal(b)):
                    return rebind_r(a, b)  # let Python raise its TypeError
                return _list_repeat_rrule(iop, a, b)
            return _list_extend_rrule(iop, name, a, b)
        return rebind_r(a, b)

    def frule(a: Any, b: Any) -> Dual:
        x = primal(a)
        if isinstance(x, np.ndarray) and isinstance(a, Dual):
            return _array_inplace_frule(iop, name, partials, a, b)
        if numpy_gives_result(iop, x, b):
            return as_array_frule(op, a, b)
        if isinstance(x, list) and list_op and isinstance(a, Dual) and isinstance(a.tangent, list):
            if iop is operator.imul and not _is_count(primal(b)):
                return rebind_f(a, b)
            return _list_inplace_frule(iop, name, a, b)
        return rebind_f(a, b)

    rrule.__qualname__, frule.__qualname__ = f"rrule[{name}]", f"frule[{name}]"
    return rrule, frule


# ============================================================================================
# Registration
# ============================================================================================


for _name, (_partials, _needs_y) in _NUMERIC.items():
    _op = getattr(operator, _name)
    _iop = getattr(operator, "i" + _name)
    _kind = _name if _name in ("add", "mul") else "other"
    _register((_iop,), _inplace_rules(_iop, _op, _kind, _partials, _needs_y))

# iconcat: sequences only (Python refuses numbers; NumPy refuses arrays)
_register((operator.iconcat,), _inplace_rules(operator.iconcat, operator.concat, "add", (_one, _one), False))

# ============================================================================================
# Cases
# ============================================================================================


_LENGTH_CHANGES = ("rev", "fwd")


def _inplace_cases() -> list:
    a = randn(4)
    m = randn(3, 4)
    lst_shared = randn(2)
    aliased_list = [1.0, lst_shared, 2.5]
    return [
        Case(operator.iadd, randn(3, 4), randn(4), name="array += broadcast array"),
        Case(operator.iadd, a, a, name="a += a (aliased)"),
        Case(operator.imul, randn(4), randn(4)[0], name="array *= numpy scalar"),
        Case(operator.imul, m, m, name="a *= a (aliased)"),
        Case(operator.isub, randn(3), 2.0),
        Case(operator.itruediv, randn(3, 2), randpos(2)),
        Case(operator.itruediv, randn(3), randpos(3), name="a /= b float64"),
        Case(operator.ifloordiv, randpos(3) * 3, randpos(3)),
        Case(operator.imod, randpos(3) * 5, randpos(3)),
        Case(operator.ipow, randpos(3), randn(3)),
        Case(operator.ipow, randpos(2, 3), 2),
        Case(operator.iadd, randn(3, dtype=np.float32), randn(3), name="float32 += float64"),
        Case(operator.iadd, randc(3), randn(3), name="complex += float"),
        Case(operator.imul, randc(3), randc(3), name="complex *= complex"),
        Case(operator.iadd, np.array(1.5), 2.0, name="0-d array += float"),
        Case(operator.iadd, np.arange(3), 2, name="int array += int"),
        # list += / *= change the list's length. check_rule builds the post-call cotangent from
        # the preload *before* the call (pre-call structure), so its reverse check cannot run on
        # them until it reads that cotangent after the forward pass (diff in the report); with
        # that change these pass in both modes.
        Case(operator.iadd, [1.0, randn(2)], [2.0, 3.0], name="list += list", mode=_LENGTH_CHANGES),
        Case(operator.iadd, aliased_list, aliased_list, name="list += itself", mode=_LENGTH_CHANGES),
        Case(operator.iadd, [1.0], (2.0, randn(2)), name="list += tuple", mode=_LENGTH_CHANGES),
        Case(operator.iconcat, [1.0, lst_shared], [lst_shared, 4.0], name="iconcat lists with shared array",
             mode=_LENGTH_CHANGES),
        Case(operator.imul, [1.0, lst_shared, 2.0], 3, name="list *= 3", mode=_LENGTH_CHANGES),
        Case(operator.imul, [1.0, 2.5], 0, name="list *= 0", mode=_LENGTH_CHANGES),
        Case(operator.imul, [1.0, randn(2)], 1, name="list *= 1"),
        Case(operator.iadd, 1.5, 2.5, name="float += float (rebind)"),
        Case(operator.iadd, (1.5, randn(2)), (2.5,), name="tuple += tuple (rebind)"),
        Case(operator.imul, 1.5, randn(3), name="float *= array (rebind)"),
        Case(operator.ipow, 1.5, 2.0, name="float **= float"),
    ]


def _view_cases() -> list:
    # b is a view of a: the checker rebuilds the view relation on its copies
    base = randn(6)
    rows = randn(3, 3)
    return [
        Case(operator.iadd, base, base[::-1], name="a += reversed view of a"),
        Case(operator.imul, rows, rows[0], name="a *= row view of a"),
        Case(operator.iadd, rows[1:], rows[0], name="view += other view"),
    ]


CASES = [
    *_inplace_cases(),
    *_view_cases(),
]
