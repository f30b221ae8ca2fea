"""Inline templates of the dual program for tuples of floats: the multiple values a helper returns
and their unpacking (``a, b = pair(t)``), which otherwise cost a rule call each through the linear
class (its dispatch and tangent walks: a hundred microseconds for a pair).

* ``t = (a, b)`` of floats with float tangents: the tuple and the tuple of the tangents, no
  fdata; the reverse takes each element's cotangent out of the tuple's rdata;
* ``_as_sequence(t)`` of a tuple is ``t`` itself (its tangent, fdata and rdata pass through);
* ``_check_unpack(t, n, starred)`` of a tuple of the right length does nothing (otherwise the
  generic call raises Python's error);
* ``x = t[k]`` at an int constant ``k`` joins the array element read of ``dual_templates``
  (``tuple_item_guard``); its cotangents go to the tuple's rdata as ``(NoRData, ..., g, ...)``.

Each template is ``(guard, forward lines, pops, contributions)``, which ``dual_templates`` makes a
``DualTemplate``. Tuple rdata are summed by ``runtime.acc`` (``NoRData`` for none): the
contributions marked ``ACCUMULATED`` are emitted by ``accumulated``.
"""
from __future__ import annotations

import math
from typing import Any

from ..ir import nodes as ir
from ..tangents import NoRData

ACCUMULATED = "_acc:"  # a contribution summed into its operand's rdata by _acc


class _TupleMarker:
    def __repr__(self) -> str:
        return "_TUPLE"


#: pushed in place of an array's fdata by an element read that read a tuple
TUPLE = _TupleMarker()


def _as_sequence() -> Any:
    from ..ir.primitives import as_sequence

    return as_sequence


def _check_unpack() -> Any:
    from ..ir.primitives import check_unpack

    return check_unpack


def _float_operand(gen: Any, a: ir.Atom) -> tuple[str, str, list] | None:
    """``(value, tangent, guard parts)`` of a float element, or None."""
    if isinstance(a, ir.Var) and a.name not in gen.integers:
        value, tangent = gen.primal(a), gen.tangent(a)
        return value, tangent, [f"type({value}) in _FT", f"type({tangent}) in _FT"]
    if isinstance(a, ir.Const) and type(a.value) is float and math.isfinite(a.value):
        return repr(a.value), "0.0", []
    return None


def float_tuple(gen: Any, s: ir.Call) -> tuple | None:
    """``t = (a, b, ...)`` of floats with float tangents."""
    operands = [_float_operand(gen, a) for a in s.args]
    if any(o is None for o in operands) or not any(o[2] for o in operands):
        return None
    t = s.target
    values, tangents = (", ".join(o[k] for o in operands) + "," for k in (0, 1))
    forward = [f"{t} = ({values}); {gen.dd(t)} = ({tangents}); {gen.fd(t)} = {gen.fdd(t)} = _NF", "_push(_DFAST)"]
    contributions = [(a, f"{ACCUMULATED}_part(_g, {k})", f"{ACCUMULATED}_part(_gd, {k})")
                     for k, a in enumerate(s.args) if isinstance(a, ir.Var)]
    return (" and ".join(part for o in operands for part in o[2]), forward, "", contributions)


def same_tuple(gen: Any, s: ir.Call) -> tuple | None:
    """``_as_sequence(t)`` of a tuple: ``t`` itself."""
    (a,) = s.args
    if not isinstance(a, ir.Var) or a.name in gen.integers:
        return None
    t, p = s.target, gen.primal(a)
    forward = [f"{t} = {p}; {gen.dd(t)} = {gen.tangent(a)}; {gen.fd(t)} = {gen.fdata(a)}; "
               f"{gen.fdd(t)} = {gen.fdata_tangent(a)}", "_push(_DFAST)"]
    return (f"type({p}) is tuple", forward, "", [(a, f"{ACCUMULATED}_g", f"{ACCUMULATED}_gd")])


def unpack_check(gen: Any, s: ir.Call) -> tuple | None:
    """``_check_unpack(t, n, starred)`` of a tuple that unpacks: nothing to do."""
    if len(s.args) != 3 or s.kwargs or not isinstance(s.args[0], ir.Var) \
            or not all(isinstance(a, ir.Const) for a in s.args[1:]):
        return None
    p, n, starred = gen.primal(s.args[0]), s.args[1].value, s.args[2].value
    if type(n) is not int or type(starred) is not bool:
        return None
    length = f"len({p}) >= {n}" if starred else f"len({p}) == {n}"
    return (f"type({p}) is tuple and {length}", ["_push(_DFAST)"], "", [])


def tuple_item_guard(p: str, t: str, index: str) -> str:
    """The guard of ``p[index]`` reading a float (with a float tangent) out of a tuple."""
    return f"type({p}) is tuple and type({t}) is tuple and type({p}[{index}]) in _FT and type({t}[{index}]) in _FT"


def accumulated(gen: Any, contributions: list) -> list[str]:
    """The reverse lines of ``ACCUMULATED`` contributions (``_g``, ``_gd``: the result's rdata and
    its tangent, ``NoRData`` for none)."""
    lines = []
    for atom, value, tangent in contributions:
        r, rd = gen.rd(atom.name), gen.rdd(atom.name)
        lines.append(f"{r} = _acc({r}, {value[len(ACCUMULATED):]}); {rd} = _acc({rd}, {tangent[len(ACCUMULATED):]})")
    return lines


def part(rdata: Any, k: int) -> Any:
    """Element ``k``'s rdata out of a tuple's (``NoRData`` for none)."""
    if type(rdata) is tuple:
        return rdata[k]
    if rdata is NoRData:
        return NoRData
    raise TypeError(f"internal error: the rdata of a tuple of floats is a {type(rdata).__qualname__}")


def one_hot(n: int, k: int, g: Any) -> tuple:
    """A tuple's rdata with ``g`` at position ``k`` of ``n`` (``NoRData`` elsewhere)."""
    return tuple(g if j == k % n else NoRData for j in range(n))


NAMESPACE = {"_TUPLE": TUPLE, "_part": part, "_one_hot": one_hot}

__all__ = ["ACCUMULATED", "NAMESPACE", "accumulated", "float_tuple", "same_tuple", "tuple_item_guard", "unpack_check"]
