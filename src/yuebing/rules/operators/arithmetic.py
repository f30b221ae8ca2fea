"""Rules for the out-of-place functions of the ``operator`` module: arithmetic with type
dispatch, sequence concatenation and repetition (DESIGN.md §2, §4).

One rule per operator function looks at the primal types:

* numbers and arrays (Python ``int``/``float``/``complex``/``bool``, NumPy scalars, ndarrays with
  broadcasting): ``add sub mul truediv floordiv mod pow neg pos abs``, built with
  ``make_elementwise_rules`` on the operator itself, so Python types are kept
  (``operator.add(1.0, 2.0)`` is the float ``3.0``);
* ``list + list``, ``tuple + tuple``, ``operator.concat``: concatenation; ``list * n``,
  ``n * list``, ``tuple * n``: repetition. The output list's fdata is a new list holding the
  *same* tangent objects for mutable elements (arrays, lists, objects) and fresh zero values for
  floats, whose cotangents go back to the source slot in the pullback;
* anything without a tangent (``str + str``, ``None``...): zero derivative.

The in-place operators (``iadd``...) are in ``in_place.py``; they reuse these rules where they
rebind (floats, ints, tuples).

Conventions at non-smooth points (docs/conventions.md):

* ``abs'(0) = 0``; complex ``abs`` has gradient ``z / |z|`` (0 at 0).
* ``floordiv`` has zero derivative; ``mod``: ``d/da = 1``, ``d/db = -floor(a / b)`` (the
  formula holds on each side of a jump; at a jump it is the one-sided value of the formula).
* ``pow``: ``d/dbase = p * base**(p-1)``, taken as 0 where ``p == 0`` (``0**0 = 1`` is constant)
  and with ``0**p``'s one-sided limits at ``base == 0`` (``0`` for ``p > 1``, ``1`` for
  ``p == 1``, ``+-inf`` for ``p < 1``). ``d/dexp = base**p * log(base)`` only where
  ``base > 0``; it is 0 where ``base <= 0`` for real results (a negative base with an integer
  exponent is not differentiable in the exponent over the reals). Complex results (complex
  operands, or a Python ``float`` negative base with a fractional exponent, which Python turns
  into a complex number) use the principal ``log``, 0 at ``base == 0``.
"""
from __future__ import annotations

import cmath
import math
import operator
from typing import Any, Callable

import numpy as np

from ... import tangents as T
from ...tangents import NoFData, NoRData
from ..cases import Case, ConventionCase, randc, randn, randpos
from ..core import CoDual, Dual, describe_callable, primal, register_frule, register_rrule
from ..declare import make_elementwise_rules
from .common import (
    _NUMBER_TYPES, Elements, _is_count, _is_numeric, _unsupported, forward_elements, forward_sequence, list_output,
    ref, tangent_free, tuple_output,
)

# ============================================================================================
# Numeric partial derivatives: partial(a, b, y) (binary) or partial(x, y) (unary)
# ============================================================================================


def _one(*_: Any) -> float:
    return 1.0


def _minus_one(*_: Any) -> float:
    return -1.0


def _any_array(*xs: Any) -> bool:
    return any(isinstance(x, np.ndarray) for x in xs)


def _mod_db(a: Any, b: Any, y: Any) -> Any:
    return -(a // b)


def _div_db(a: Any, b: Any, y: Any) -> Any:
    return -y / b


def _div_da(a: Any, b: Any, y: Any) -> Any:
    return 1.0 / b


def _pow_dbase(a: Any, p: Any, y: Any) -> Any:
    if _any_array(a, p):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            d = p * np.power(a, p - 1)
        return np.where(np.equal(p, 0), 0, d)
    if p == 0:
        return 0.0
    if a == 0 and not isinstance(p, (complex, np.complexfloating)) and p < 1:
        # one-sided limit of p * a**(p-1) (Python floats raise on 0.0 ** negative); for p >= 1
        # the formula below is exact at 0 and forward mode of it gives the second derivative
        return p * math.inf
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return p * a ** (p - 1)


def _pow_dexp(a: Any, p: Any, y: Any) -> Any:
    if _any_array(a, p):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if np.iscomplexobj(y) or np.iscomplexobj(a):
                nonzero = np.not_equal(a, 0)
                return np.where(nonzero, y * np.log(np.where(nonzero, a, 1) + 0j), 0)
            positive = np.greater(a, 0)
            return np.where(positive, y * np.log(np.where(positive, a, 1)), 0)
    if isinstance(y, (complex, np.complexfloating)) or isinstance(a, (complex, np.complexfloating)):
        return y * cmath.log(a) if a != 0 else 0j
    return y * math.log(a) if a > 0 else 0.0


def _abs_partial(x: Any, y: Any) -> Any:
    if isinstance(x, np.ndarray):
        if x.dtype.kind == "c":
            return np.divide(np.conj(x), y, out=np.zeros_like(x), where=y != 0)
        return np.sign(x)
    if isinstance(x, (complex, np.complexfloating)):
        return complex(x.real, -x.imag) / y if y else 0j  # attributes: second order differentiates this
    return 1.0 if x > 0 else -1.0 if x < 0 else 0.0


# name: (partials, whether the in-place pullback needs the out-of-place result y)
_NUMERIC = {
    "add": ((_one, _one), False),
    "sub": ((_one, _minus_one), False),
    "mul": ((lambda a, b, y: b, lambda a, b, y: a), False),
    "truediv": ((_div_da, _div_db), True),
    "floordiv": ((None, None), False),
    "mod": ((_one, _mod_db), False),
    "pow": ((_pow_dbase, _pow_dexp), True),
}

# ============================================================================================
# Operands without a tangent
# ============================================================================================


def _zero_rules(call: Callable) -> tuple[Callable, Callable]:
    def rrule(*args: Any) -> tuple[CoDual, Callable]:
        y = call(*(primal(a) for a in args))
        n = len(args) + 1
        return CoDual(y, _zero_fdata(y)), lambda dy: (NoRData,) * n

    def frule(*args: Any) -> Dual:
        y = call(*(primal(a) for a in args))
        return Dual(y, T.zero_tangent(y))

    return rrule, frule


def _zero_fdata(y: Any) -> Any:
    if isinstance(y, _NUMBER_TYPES + (str, bytes)) or y is None:
        return NoFData
    return T.fdata(T.zero_tangent(y))


# ============================================================================================
# Sequence rules: concatenation and repetition
# ============================================================================================


def _concat_rrule(call: Callable, name: str, a: CoDual, b: CoDual) -> tuple[CoDual, Callable]:
    x, z = primal(a), primal(b)
    y = call(x, z)
    src_a, src_b = Elements(a, name), Elements(b, name)
    nodes = [ref(src_a, i) for i in range(len(src_a))] + [ref(src_b, i) for i in range(len(src_b))]
    out, send_back = (list_output if isinstance(y, list) else tuple_output)(nodes)
    out.primal = y  # Python's own result object (same elements)

    def pullback(dy: Any) -> tuple:
        send_back() if isinstance(y, list) else send_back(dy)
        return NoRData, src_a.rdata(), src_b.rdata()

    return out, pullback


def _repeat_rrule(call: Callable, name: str, a: CoDual, b: CoDual) -> tuple[CoDual, Callable]:
    seq_first = isinstance(primal(a), (list, tuple))
    seq, count = (a, primal(b)) if seq_first else (b, primal(a))
    y = call(primal(a), primal(b))
    src = Elements(seq, name)
    nodes = [ref(src, i) for _ in range(max(int(count), 0)) for i in range(len(src))]
    out, send_back = (list_output if isinstance(y, list) else tuple_output)(nodes)
    out.primal = y

    def pullback(dy: Any) -> tuple:
        send_back() if isinstance(y, list) else send_back(dy)
        return (NoRData, src.rdata(), NoRData) if seq_first else (NoRData, NoRData, src.rdata())

    return out, pullback


def _concat_frule(call: Callable, name: str, a: Dual, b: Dual) -> Dual:
    y = call(primal(a), primal(b))
    items = forward_elements(a, name) + forward_elements(b, name)
    out = forward_sequence(list if isinstance(y, list) else tuple, items)
    return Dual(y, out.tangent)


def _repeat_frule(call: Callable, name: str, a: Dual, b: Dual) -> Dual:
    seq_first = isinstance(primal(a), (list, tuple))
    seq, count = (a, primal(b)) if seq_first else (b, primal(a))
    y = call(primal(a), primal(b))
    items = forward_elements(seq, name) * max(int(count), 0)
    return Dual(y, forward_sequence(list if isinstance(y, list) else tuple, items).tangent)


# ============================================================================================
# Binary and unary dispatch
# ============================================================================================


def _choose(name: str, kind: str, x: Any, z: Any, probe: Callable | None = None) -> str:
    """Which rule applies to primal operands ``x`` and ``z``: numeric, concat, repeat or zero.

    Operands without a rule are first tried with ``probe`` (the operator itself, when calling it
    has no side effects), so that Python's own TypeError wins over "no rule"."""
    if isinstance(x, (list, tuple)) or isinstance(z, (list, tuple)):
        if kind == "add" and (type(x) is type(z) or isinstance(x, tuple) and isinstance(z, tuple)):
            return "concat"
        # a NumPy integer on the left turns the sequence into an array (numeric), on the right
        # it is a repeat count like an int
        left_count = _is_count(x) and not isinstance(x, np.generic)
        if kind == "mul" and (isinstance(x, (list, tuple)) and _is_count(z) or left_count and isinstance(z, (list, tuple))):
            return "repeat"
        if _is_numeric(x) and tangent_free(z) or _is_numeric(z) and tangent_free(x):
            return "numeric"  # e.g. array + [1, 2]: NumPy converts; the list is a constant
    elif _is_numeric(x) and _is_numeric(z):
        return "numeric"
    if tangent_free(x) and tangent_free(z):
        return "zero"
    if isinstance(x, (str, bytes)) and name in ("operator.mod", "operator.imod"):
        return "zero"  # printf-style formatting ("%.2f" % x): a string, no derivative
    if probe is not None:
        probe(x, z)
    raise _unsupported(name, x, z)


def _fast_float_rrule(call: Callable, partials: tuple, x: float, z: float) -> tuple[CoDual, Callable] | None:
    """Python float op Python float with a float result: no arrays, no broadcasting."""
    y = call(x, z)
    if type(y) is not float:
        return None
    pa, pb = partials

    def pullback(dy: Any) -> tuple:
        if dy is NoRData:
            return NoRData, NoRData, NoRData
        return (NoRData, NoRData if pa is None else dy * pa(x, z, y),
                NoRData if pb is None else dy * pb(x, z, y))

    return CoDual(y, NoFData), pullback


def _binary_rules(call: Callable, name: str, kind: str, partials: tuple,
                  in_place: bool = False) -> tuple[Callable, Callable]:
    """Type-dispatching rules for binary ``call`` (an operator function)."""
    probe = None if in_place else call
    numeric_r, numeric_f = make_elementwise_rules(call, *partials)
    zero_r, zero_f = _zero_rules(call)

    def rrule(a: Any, b: Any) -> tuple[CoDual, Callable]:
        x, z = primal(a), primal(b)
        if type(x) is float and type(z) is float:
            fast = _fast_float_rrule(call, partials, x, z)
            if fast is not None:
                return fast
        which = _choose(name, kind, x, z, probe)
        if which == "numeric":
            return numeric_r(a, b)
        if which == "concat":
            return _concat_rrule(call, name, a, b)
        if which == "repeat":
            return _repeat_rrule(call, name, a, b)
        return zero_r(a, b)

    def frule(a: Any, b: Any) -> Dual:
        which = _choose(name, kind, primal(a), primal(b), probe)
        if which == "numeric":
            return numeric_f(a, b)
        if which == "concat":
            return _concat_frule(call, name, a, b)
        if which == "repeat":
            return _repeat_frule(call, name, a, b)
        return zero_f(a, b)

    rrule.__qualname__, frule.__qualname__ = f"rrule[{name}]", f"frule[{name}]"
    return rrule, frule


def _unary_rules(call: Callable, name: str, partial: Callable) -> tuple[Callable, Callable]:
    numeric_r, numeric_f = make_elementwise_rules(call, partial)
    zero_r, zero_f = _zero_rules(call)

    def choose(x: Any) -> bool:
        if _is_numeric(x):
            return True
        if tangent_free(x):
            return False
        raise _unsupported(name, x)

    def rrule(a: Any) -> tuple[CoDual, Callable]:
        return numeric_r(a) if choose(primal(a)) else zero_r(a)

    def frule(a: Any) -> Dual:
        return numeric_f(a) if choose(primal(a)) else zero_f(a)

    rrule.__qualname__, frule.__qualname__ = f"rrule[{name}]", f"frule[{name}]"
    return rrule, frule


def _register(targets: tuple, rules: tuple[Callable, Callable]) -> None:
    for target in targets:
        register_rrule(target, rules[0])
        register_frule(target, rules[1])


# ============================================================================================
# Registration
# ============================================================================================


for _name, (_partials, _needs_y) in _NUMERIC.items():
    _op = getattr(operator, _name)
    _kind = _name if _name in ("add", "mul") else "other"
    _register((_op,), _binary_rules(_op, describe_callable(_op), _kind, _partials))

# concat: sequences only (Python refuses numbers; NumPy refuses arrays)
_register((operator.concat,), _binary_rules(operator.concat, "operator.concat", "add", (_one, _one)))

_register((operator.neg,), _unary_rules(operator.neg, "operator.neg", _minus_one))
_register((operator.pos,), _unary_rules(operator.pos, "operator.pos", _one))
ABS_RULES = _unary_rules(abs, "abs", _abs_partial)
_register((operator.abs,), ABS_RULES)
POW_RULES = _binary_rules(operator.pow, "pow", "other", _NUMERIC["pow"][0])

# ============================================================================================
# Cases
# ============================================================================================


def _seq_cases() -> list:
    shared = randn(3)
    return [
        Case(operator.add, [1.5, shared, (2.0, randn(2))], [shared, -0.5], name="list+list with aliased array"),
        Case(operator.add, [1.0, 2.0], [3.0], name="list+list floats"),
        Case(operator.add, (1.0, randn(2)), (3, 4.0), name="tuple+tuple"),
        Case(operator.add, (1.0, 2.0), (3.0,), name="tuple+tuple floats"),
        Case(operator.add, [], [2.0], name="empty list+list"),
        Case(operator.concat, [1.0, randn(2)], [3.0], name="concat lists"),
        Case(operator.concat, (1.0,), (randn(2), 2.5), name="concat tuples"),
        Case(operator.mul, [1.5, shared, 2.0], 2, name="list*2 with array"),
        Case(operator.mul, 3, [1.5, -2.0], name="3*list"),
        Case(operator.mul, (1.5, randn(2)), 2, name="tuple*2"),
        Case(operator.mul, [1.5], 0, name="list*0"),
        # nothing differentiable at all: the forward check compares NoTangent with a tuple of
        # NoTangent (check_rule change proposed in the report), so reverse only
        Case(operator.add, "ab", "cd", name="str+str"),
        Case(operator.add, randn(3), [1, 2, 3], name="array+list of ints"),
    ]


CASES = [
    # scalars: Python floats keep their type
    Case(operator.add, 1.5, 2.25, name="float+float"),
    Case(operator.add, 3, 2.25, name="int+float"),
    Case(operator.add, 2, 3, name="int+int"),
    Case(operator.add, True, 0.5, name="bool+float"),
    Case(operator.sub, 1.5, -0.25),
    Case(operator.mul, 1.5, randn(3), name="float*array"),
    Case(operator.mul, randn(3, 1), randn(4), name="array*array broadcasting"),
    Case(operator.sub, randn(2, 3), randn(3), name="array-array broadcasting"),
    Case(operator.add, randn(3, dtype=np.float32), randn(3, dtype=np.float32)),
    Case(operator.mul, randn(2, dtype=np.float32), 1.5, name="float32 array*float"),
    Case(operator.add, np.array(1.25), randn(3), name="0-d array + array"),
    Case(operator.mul, np.array(1.25), np.array(-0.5), name="0-d * 0-d"),
    Case(operator.add, randn(0, 3), randn(3), name="empty + array"),
    Case(operator.mul, np.float32(1.5), np.float32(2.5), name="float32 scalars"),
    Case(operator.mul, np.float64(1.5), 2.5, name="numpy float64 scalar"),
    Case(operator.add, randc(), randc(), name="complex+complex"),
    Case(operator.mul, randc(), 1.5, name="complex*float"),
    Case(operator.mul, randc(3), randn(3), name="complex array*array"),
    Case(operator.truediv, 1.5, 0.75),
    Case(operator.truediv, randn(2, 3), randpos(3)),
    Case(operator.truediv, randc(3), randc(3)),
    Case(operator.truediv, 3, 4, name="int/int"),
    Case(operator.floordiv, 7.5, 2.0),
    Case(operator.floordiv, randpos(3) * 4, randpos(3)),
    Case(operator.mod, 7.3, 2.0),
    Case(operator.mod, -7.3, 2.0, name="mod negative"),
    Case(operator.mod, randpos(4) * 5, randpos(4)),
    Case(operator.pow, 1.5, 2.5),
    # negative bases only with integer exponents: a float exponent near an integer leaves the
    # reals (Python: complex, NumPy: nan), so finite differences in the exponent are undefined
    Case(operator.pow, -1.5, 2, name="negative base, int exponent"),
    Case(operator.pow, -1.5, 0.5, name="negative float base, fractional exponent: complex"),
    Case(operator.pow, 2, 0.5, name="int base"),
    Case(operator.pow, randpos(3), randn(3), name="pow with array exponent"),
    Case(operator.pow, randn(3), 3, name="array ** int"),
    Case(operator.pow, 1.5, randn(2, 2), name="float ** array"),
    Case(operator.pow, randn(4), np.array([0, 1, 2, 3]), name="negative bases, integer array exponents"),
    ConventionCase(operator.pow, -1.5, 2.0, expected=(2 * -1.5, 0.0), name="pow: d/dexp = 0 at a negative base"),
    ConventionCase(operator.pow, 0.0, 2.5, expected=(0.0, 0.0), name="pow: d/dbase at 0 for p > 1; d/dexp 0 at 0"),
    ConventionCase(operator.pow, 0.0, 1.0, expected=(1.0, 0.0), name="pow: 0**1"),
    ConventionCase(operator.pow, 0.0, 0.0, expected=(0.0, 0.0), name="pow: 0**0 is constant"),
    ConventionCase(operator.pow, np.array([-2.0, 0.0]), np.array([3.0, 0.0]),
                   expected=(np.array([12.0, 0.0]), np.array([0.0, 0.0])), name="pow arrays: conventions"),
    ConventionCase(operator.abs, 0.0, expected=(0.0,), name="abs'(0) = 0"),
    ConventionCase(operator.abs, 0j, expected=(0j,), name="complex abs'(0) = 0"),
    ConventionCase(operator.mod, 4.0, 2.0, expected=(1.0, -2.0), name="mod at a jump: -floor(a/b)"),
    Case(operator.pow, randpos(3, dtype=np.float32), randn(3, dtype=np.float32)),
    Case(operator.pow, randc(3), randc(3), name="complex pow"),
    Case(operator.pow, randc(), 2.0, name="complex scalar pow"),
    Case(operator.neg, 1.5),
    Case(operator.neg, randn(2, 3)),
    Case(operator.neg, randc(2)),
    Case(operator.pos, randn(3)),
    Case(operator.pos, 2.5),
    Case(operator.abs, -1.5),
    Case(operator.abs, randn(3, 2)),
    Case(operator.abs, randc(3)),
    Case(operator.abs, randc(), name="complex abs"),
    Case(operator.abs, randn(3, dtype=np.float32)),
    *_seq_cases(),
]
