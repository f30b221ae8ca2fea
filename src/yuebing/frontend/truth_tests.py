"""Stage 1, part of ``normalise.py``: the implicit truth tests of ``if``, ``while``, ``x if t else
y``, ``and``/``or``, comprehension filters and ``assert``.

Python tests a value's truth by calling its class's ``__bool__`` (or ``__len__``). A user
class's ``__bool__`` may do float work (accumulate into an attribute); run as the generated
code's plain ``if t:``, that work would have no derivative. So a test whose value is not known
to be a bool is lowered as

    _plain1 = _tested_plainly3(t)       # (an opaque statement: a bool, a number, a list...)
    if _plain1:
        _truth2 = t
    else:
        _truth2 = operator.truth(t)     # a call the machinery dispatches as it does bool(t)
    if _truth2: ...

and ``rules/comparing_calls.py`` runs a ``__bool__`` (or ``__len__``) that may change data as
user code, in every mode. The check first keeps the generic call (microseconds) out of loops
testing numbers and lists. A value known to be a bool is tested as it is: a comparison, ``not``
(itself the call ``operator.not_``, which ``comparing_calls.py`` follows the same way),
``is``/``in``, ``isinstance(...)`` and other builtins giving a bool, a constant, and a local
variable only ever assigned such values.

Comparisons are lowered here too. ``a < b`` may be anything a user's ``__lt__`` returns, whose
truth may run a ``__bool__`` that writes; CPython tests it where it decides a branch. So a
comparison tested by an ``if``/``while``/filter/``assert`` is one call of ``tested_lt(a, b)``
(``ir/tested_comparisons.py``: the truth of ``a < b``, inlined as ``a < b`` for numbers), a
chain ``a < b < c`` there a chain of them (``b`` evaluated once); a chain as a value keeps each
link's value and tests each link but the last as above, as CPython's chain jumps do.
"""
from __future__ import annotations

import ast
import operator
import sys
from typing import Any

import numpy as np

from ..ir import nodes as ir
from ..ir.tested_comparisons import TESTED
from .runtime_names import own_nodes

__all__ = ["asserted", "boolean_operation", "comparison", "tested", "truth_test"]

COMPARE = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Is: operator.is_, ast.IsNot: operator.is_not,
}
#: comparisons whose result is always a bool (``in`` converts what ``__contains__`` returns)
_BOOL_COMPARISONS = (ast.Is, ast.IsNot, ast.In, ast.NotIn)

#: builtins whose result is a bool (when the name is not shadowed)
_BOOL_BUILTINS = frozenset({"isinstance", "issubclass", "callable", "hasattr", "bool"})
#: values whose truth Python tests without calling Python code: tested as they are, without the
#: call (a generic call costs microseconds in a loop)
_PLAIN_TYPES = frozenset({bool, int, float, list, tuple, dict, str, type(None), np.bool_, np.float64, np.int64,
                          np.ndarray})


def tested_plainly(value: Any) -> bool:
    """Whether the truth of ``value`` is computed without Python code (run as is, no derivative)."""
    return type(value) in _PLAIN_TYPES


_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def tested(lowering: Any, node: ast.expr, out: list) -> ir.Atom:
    """``node`` lowered (into ``out``) as the test of an ``if``/``while``...: its truth. An
    ``and``/``or`` there tests each operand it evaluates once, as CPython's jumps do (its value,
    the last operand, is not tested again); a comparison is the call of its truth."""
    if isinstance(node, ast.BoolOp):
        truth = lowering.tmp("truth")
        _truth_chain(lowering, node.op, node.values, truth, out)
        return ir.Var(truth)
    if isinstance(node, ast.Compare) and not _known_bool(node, frozenset(), lowering):
        truth = lowering.tmp("truth")
        _link(lowering, lowering.expr(node.left, out), list(zip(node.ops, node.comparators)), truth, True, out)
        return ir.Var(truth)
    return truth_test(lowering, node, lowering.expr(node, out), out)


def _truth_chain(lowering: Any, op: ast.boolop, values: list, truth: str, out: list) -> None:
    """The truth of ``values`` joined by ``op`` into ``truth``: each operand evaluated tested once."""
    test = tested(lowering, values[0], out)
    out.append(ir.Copy(truth, test, line=lowering.line))
    if len(values) == 1:
        return
    rest: list = []
    _truth_chain(lowering, op, values[1:], truth, rest)
    out.append(ir.If(test, rest, [], line=lowering.line) if isinstance(op, ast.And)
               else ir.If(test, [], rest, line=lowering.line))


def comparison(lowering: Any, node: ast.Compare, out: list, target: str) -> ir.Atom:
    """``a < b < c`` as a value (into ``target``, or a fresh temporary): the value of the link
    that decided, each link but the last tested for truth as CPython's chain jump tests it."""
    result = target or lowering.tmp()
    _link(lowering, lowering.expr(node.left, out), list(zip(node.ops, node.comparators)), result, False, out)
    return ir.Var(result)


def _link(lowering: Any, left: ir.Atom, pairs: list, result: str, truth_only: bool, out: list) -> None:
    """The first comparison of ``pairs`` (``(op, right node)``) into ``result``, and the rest
    when it holds. ``truth_only``: ``result`` is the chain's truth (a test), not its value."""
    op, right_node = pairs[0]
    if isinstance(op, (ast.In, ast.NotIn)) and len(pairs) == 1 \
            and lowering.globals_contains(left, right_node, isinstance(op, ast.NotIn), result, out):
        right = None  # name in globals(): whether the module defines it (global_writes.py)
    elif isinstance(op, ast.In):
        right = lowering.expr(right_node, out)
        lowering.call(out, ir.Const(operator.contains), [right, left], result)
    elif isinstance(op, ast.NotIn):
        right = lowering.expr(right_node, out)
        inside = lowering.call(out, ir.Const(operator.contains), [right, left])
        lowering.call(out, ir.Const(operator.not_), [inside], result)
    else:
        right = lowering.expr(right_node, out)
        compare = COMPARE[type(op)]
        lowering.call(out, ir.Const(TESTED.get(compare, compare) if truth_only else compare), [left, right], result)
    if len(pairs) == 1:
        return
    branch: list = []
    _link(lowering, right, pairs[1:], result, truth_only, branch)
    holds = ir.Var(result) if truth_only or isinstance(op, _BOOL_COMPARISONS) else _truth_of(lowering, ir.Var(result), out)
    out.append(ir.If(holds, branch, [], line=lowering.line))


def boolean_operation(lowering: Any, node: ast.BoolOp, out: list, target: str) -> ir.Atom:
    """``a and b``/``a or b`` as a value (into ``target``, or a fresh temporary): each operand
    but the last tested once, an operand that is itself ``and``/``or`` by its own operands (as
    CPython's jumps test them); the last operand is the value, untested."""
    result = target or lowering.tmp()
    _chain(lowering, node.op, node.values, result, None, out)
    return ir.Var(result)


def _value_and_truth(lowering: Any, node: ast.expr, out: list) -> tuple:
    """``node``'s value and its truth, each operand of an ``and``/``or`` tested once."""
    if isinstance(node, ast.BoolOp) and not _known_bool(node, _bool_names(lowering), lowering):
        result, truth = lowering.tmp(), lowering.tmp("truth")
        _chain(lowering, node.op, node.values, result, truth, out)
        return ir.Var(result), ir.Var(truth)
    value = lowering.expr(node, out)
    return value, truth_test(lowering, node, value, out)


def _chain(lowering: Any, op: ast.boolop, values: list, result: str, truth: str | None, out: list) -> None:
    """``values`` joined by ``op`` into ``result`` (and their truth into ``truth``, unless None:
    then the last value is not tested)."""
    if len(values) == 1 and truth is None:
        out.append(ir.Copy(result, lowering.expr(values[0], out), line=lowering.line))
        return
    value, test = _value_and_truth(lowering, values[0], out)
    out.append(ir.Copy(result, value, line=lowering.line))
    if truth is not None:
        out.append(ir.Copy(truth, test, line=lowering.line))
    if len(values) == 1:
        return
    rest: list = []
    _chain(lowering, op, values[1:], result, truth, rest)
    out.append(ir.If(test, rest, [], line=lowering.line) if isinstance(op, ast.And)
               else ir.If(test, [], rest, line=lowering.line))


def truth_test(lowering: Any, node: ast.expr, value: ir.Atom, out: list) -> ir.Atom:
    """What an ``if``/``while``... tests for the expression ``node`` lowered to ``value``:
    ``value`` itself when it is known to be a bool, else its truth computed as the module's
    docstring shows (emitted into ``out`` by the normaliser ``lowering``)."""
    if isinstance(value, ir.Const) or _known_bool(node, _bool_names(lowering), lowering):
        return value
    return _truth_of(lowering, value, out)


def _truth_of(lowering: Any, value: ir.Atom, out: list) -> ir.Var:
    """The truth of ``value``, as the module's docstring shows."""
    plain, test, check = lowering.tmp("plain"), lowering.tmp("truth"), lowering.tmp("tested_plainly")
    out.append(ir.Copy(check, ir.Const(tested_plainly), line=lowering.line))  # (no name the user may shadow)
    out.append(ir.Opaque(f"{plain} = {check}({value})", line=lowering.line, defines=(plain,)))
    asked: list = []
    lowering.call(asked, ir.Const(operator.truth), [value], test)
    out.append(ir.If(ir.Var(plain), [ir.Copy(test, value, line=lowering.line)], asked, line=lowering.line))
    return ir.Var(test)


def asserted(lowering: Any, node: ast.Assert, out: list) -> ast.Assert:
    """``assert test, message`` with its test's truth computed first (as ``truth_test``), when the
    test is not known to be a bool: ``assert t, message`` (the message is still evaluated only
    when it fails). Under ``python -O`` asserts do not run, nor does their test."""
    if sys.flags.optimize or _known_bool(node.test, _bool_names(lowering), lowering):
        return node
    value = tested(lowering, node.test, out)
    if not isinstance(value, ir.Var):
        return node
    return ast.copy_location(ast.Assert(ast.Name(value.name, ast.Load()), node.msg), node)


def _known_bool(node: ast.expr, names: frozenset, lowering: Any) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Compare):
        return all(isinstance(op, _BOOL_COMPARISONS) for op in node.ops)
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.Not)
    if isinstance(node, ast.BoolOp):
        return all(_known_bool(v, names, lowering) for v in node.values)
    if isinstance(node, ast.NamedExpr):
        return _known_bool(node.value, names, lowering)
    if isinstance(node, ast.Name):
        return node.id in names
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _BOOL_BUILTINS:
        return lowering.builtin_unshadowed(node.func.id)
    return False


def _bool_names(lowering: Any) -> frozenset:
    """The local variables of the function being lowered that only ever hold a bool: every
    binding of them is a plain assignment of a value known to be one (computed once)."""
    names = getattr(lowering, "_bool_names", None)
    if names is None:
        names = _only_bools(lowering)
        lowering._bool_names = names
    return names


def _only_bools(lowering: Any) -> frozenset:
    function = lowering.node
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return frozenset()
    nodes = own_nodes(function.body)
    values: dict[str, list] = {}  # name -> the values plain assignments give it
    plain_targets = set()
    for n in nodes:
        if isinstance(n, ast.Assign) and all(isinstance(t, ast.Name) for t in n.targets):
            for t in n.targets:
                values.setdefault(t.id, []).append(n.value)
                plain_targets.add(id(t))
    other = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}  # bound some other way:
    other |= {name for s in nodes if isinstance(s, (ast.Global, ast.Nonlocal)) for name in s.names}
    other |= {n.id for n in nodes if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
              and id(n) not in plain_targets}  # a loop, with, walrus, augmented assignment, del...
    other |= {n.name for n in nodes if isinstance(n, (*_NESTED[:2], ast.ClassDef, ast.ExceptHandler)) and n.name}
    other |= {(a.asname or a.name).split(".")[0] for n in nodes if isinstance(n, (ast.Import, ast.ImportFrom))
              for a in n.names}
    candidates = {name for name in values if name not in other}
    while True:  # a flag assigned from another flag: kept while all its values stay known
        kept = {name for name in candidates
                if all(_known_bool(v, frozenset(candidates), lowering) for v in values[name])}
        if kept == candidates:
            return frozenset(kept)
        candidates = kept


