"""Forward blocks: straight-line runs of float or elementwise array arithmetic generated as one
unit in forward mode (the forward twin of ``float_blocks.py`` and ``array_blocks.py``).

Statement by statement, every operation of forward-mode code pays its own type guard (an inline
template, ``forward_templates.py``) or a rule call. A run of such statements is instead guarded
once; when its inputs qualify it computes primal and tangent directly, each value in a fresh
local (SSA style), and writes the results back at the end:

* a *float block* (``+ - * / -x x**n`` and functions of one float such as ``math.sin``,
  ``np.exp``): inputs are floats with float tangents; NumPy floats are computed as Python floats
  (the same IEEE values, a third of the cost) and results that depend on one are NumPy floats
  again;
* an *array block* (the same operations, ``np.sum``, on float64 arrays and floats): primal and
  tangent as plain NumPy, ``y = np.sin(x); y_t = x_t * _np.cos(x)``. A tangent may be ``None``
  (exactly zero: a constant such as a global array, whose tangent is a read-only zero view,
  ``zero_view``, or a zero float) or of a smaller shape than its primal (a float's tangent
  broadcast over an array: ``(log(x) - mu)`` has the tangent ``-mu_t``), so no derivative work is
  spent on constants; results get full, fresh tangents.

The block's code runs in a ``try``: if any statement raises (Python floats raise where NumPy's
give inf, an array has the wrong shape) nothing has been assigned yet, and the statements run
again one by one, which raise (or not) at the user's line exactly as before. The block runs
only in a JVP's plain pass (``rules/declare.py: FORWARD``); the strong-zero pass and batched
passes take the statements one by one. Generated code:

    _fb = False
    if not _FWD.strong and not _BATCH.size and type(y) in _FT and ...:  # float block: lines 3-402
        try:
            _i1 = float(y); _i2 = float(a)
            _b3 = _i1 * _i2; _b3_t = y_t * _i2 + _i1 * a_t
            ...
        except Exception:  # Python floats raise where NumPy's give inf: one by one, below
            pass
        else:
            _fb = True
            y = _f64(_b402) if type(y) is not float or ... else _b402; y_t = _b402_t
    if not _fb:
        <statement by statement>
"""
from __future__ import annotations

import math
import operator
import re
from typing import Any, Callable

import numpy as np

from ..ir import nodes as ir
from ..rules.core import is_hashable
from ..tangents import NoTangent
from .array_blocks import _BINARY, _expression, classify
from .constant_arrays import constant_inputs, hoist_new_arrays
from .float_blocks import _is_float_op, names_read, runs
from .forward_spent import NAMESPACE as _SPENT_NAMESPACE, spent_primal, spent_tangent
from .templates import _ARRAY_UNARY, _UNARY

MIN_FLOAT_BLOCK = 3
MIN_ARRAY_BLOCK = 2


# --------------------------------------------------------------------------------------------
# Finding blocks
# --------------------------------------------------------------------------------------------


def _float_unary(s: object, integers: set, resolve: Callable) -> Any:
    """The function of ``t = f(x)``, a function of one float with a known derivative, or None."""
    if not isinstance(s, ir.Call) or not s.target or s.kwargs or s.star_args is not None \
            or s.star_kwargs is not None or s.target in integers or len(s.args) != 1 \
            or not isinstance(s.args[0], ir.Var) or s.args[0].name in integers:
        return None
    func = resolve(s.func)
    if func is None or func is operator.neg or not is_hashable(func) or func not in _UNARY:
        return None
    return func


_IN_PLACE = {operator.iadd: operator.add, operator.isub: operator.sub, operator.imul: operator.mul,
              operator.itruediv: operator.truediv}  # on floats, ``y += v`` rebinds: ``y = y + v``


def _float_read(s: object, integers: set) -> bool:
    """``t = x[i]``: an element of an array at an index variable or an int (a float when ``x`` is a
    float64 array and the index picks one element, which the block checks)."""
    return isinstance(s, ir.Call) and bool(s.target) and isinstance(s.func, ir.Const) \
        and s.func.value is operator.getitem and len(s.args) == 2 and not s.kwargs and s.star_args is None \
        and s.star_kwargs is None and s.target not in integers and isinstance(s.args[0], ir.Var) \
        and s.args[0].name not in integers \
        and (isinstance(s.args[1], ir.Var) or isinstance(s.args[1], ir.Const) and type(s.args[1].value) is int)


def _float_statement(s: object, integers: set, resolve: Callable) -> tuple[str, Any] | None:
    """``(kind, function)`` if ``s`` can join a float block, else None."""
    if _is_float_op(s, integers):
        return "op", s.func.value
    if _float_read(s, integers):
        return "read", operator.getitem
    func = _float_unary(s, integers, resolve)
    if func is not None:
        return "unary", func
    if isinstance(s, ir.Call) and isinstance(s.func, ir.Const) and is_hashable(s.func.value) \
            and s.func.value in _IN_PLACE and s.target not in integers:
        plain = ir.Call(s.target, ir.Const(_IN_PLACE[s.func.value]), s.args, line=s.line)
        if _is_float_op(plain, integers):
            return "op", _IN_PLACE[s.func.value]
    return None


def find_forward_blocks(body: list, integers: set, resolve: Callable) -> tuple[dict, dict]:
    """Float blocks and array blocks of ``body``: ``{start: stop}`` each."""
    hoist_new_arrays(body, lambda s: classify(s, integers, resolve) is not None, integers, resolve)
    floats = dict(runs(body, lambda s: _float_statement(s, integers, resolve) is not None, MIN_FLOAT_BLOCK))
    taken = {id(body[k]) for start, stop in floats.items() for k in range(start, stop)}
    arrays = dict(runs(body, lambda s: id(s) not in taken and classify(s, integers, resolve) is not None,
                       MIN_ARRAY_BLOCK))
    return floats, arrays


def whole_array_block(stmts: list, integers: set, resolve: Callable) -> bool:
    """Whether every statement of ``stmts`` can join one array block."""
    return len(stmts) >= MIN_ARRAY_BLOCK and all(classify(s, integers, resolve) is not None for s in stmts)


# --------------------------------------------------------------------------------------------
# What both kinds share
# --------------------------------------------------------------------------------------------


class _Block:
    """The SSA form of a run: its inputs, one local per value, the values handed on."""

    def __init__(self, stmts: list, fresh: Callable, primal: Callable, const: Callable, function_body: list) -> None:
        self.stmts, self.fresh, self.primal, self.const = stmts, fresh, primal, const
        self.inputs: list[str] = []  # variables (and global names) read before the block assigns them
        self.input_atoms: dict[str, ir.Atom] = {}
        self.attributes: list[tuple[str, str]] = []  # (local, module attribute path): constants
        self.function_guards: list[str] = []
        self.current: dict[str, str] = {}
        self.ops: list[tuple[str, str, Any, list[str], str]] = []  # (local, kind, function, operands, its name)
        for s in stmts:
            kind, func = self.kind_of(s)
            operands = [self._operand(a) for a in s.args]
            if not isinstance(s.func, ir.Const):
                guard = f"{primal(s.func)} is {const(func)}"
                if guard not in self.function_guards:
                    self.function_guards.append(guard)
            local = fresh("b")
            self.ops.append((local, kind, func, operands, primal(s.func)))
            self.current[s.target] = local
        read = names_read(function_body, {id(s) for s in stmts})
        # values read after the block, or by the block itself before it assigns them (a loop
        # carries them to the next iteration's block), are written back
        self.final = {v: loc for v, loc in self.current.items() if loc != v and (v in read or v in self.inputs)}
        self.first_line, self.last_line = stmts[0].line, stmts[-1].line
        self.made = {loc for loc, *_ in self.ops}

    def kind_of(self, s: ir.Call) -> tuple[str, Any]:
        raise NotImplementedError

    def _operand(self, a: ir.Atom) -> str:
        if isinstance(a, ir.Var) or isinstance(a, ir.Global) and "." not in a.path:
            name = self.primal(a)
            if name not in self.current:
                self.current[name] = name
                self.inputs.append(name)
                self.input_atoms[name] = a
            return self.current[name]
        if isinstance(a, ir.Global):  # a module attribute (math.pi): read once, no derivative
            local = self.fresh("k")
            self.attributes.append((local, a.path))
            return local
        return self.primal(a)  # a number

    def tangent_name(self, operand: str, tangents: dict) -> str | None:
        """The local holding an operand's tangent, None for a number or a module constant."""
        return tangents.get(operand)

    def emit_guarded(self, what: str, guard: str, body: list[str], write_back: list[str]) -> list[str]:
        """The block's code, ending where the statement-by-statement fallback begins (under
        ``if not _fb:``, which the generator emits)."""
        lines = ["_fb = False", f"if {guard}:  # {what}: lines {self.first_line}-{self.last_line}", "    try:"]
        lines += ["        " + b for b in body or ["pass"]]
        lines += ["    except Exception:  # it raised part way, having assigned nothing: one by one, below",
                  "        pass", "    else:"]
        lines += ["        " + w for w in write_back + ["_fb = True"]]
        return lines


def _binary_tangent(op: str, a: str, b: str, t: str, ta: str | None, tb: str | None) -> str | None:
    """The tangent of ``t = a op b`` from the operands' tangents present (None: zero)."""
    if ta is None and tb is None:
        return None
    if op == "+":
        return ta if tb is None else tb if ta is None else f"{ta} + {tb}"
    if op == "-":
        return ta if tb is None else f"-{tb}" if ta is None else f"{ta} - {tb}"
    if op == "*":
        return f"{ta} * {b}" if tb is None else f"{a} * {tb}" if ta is None else f"{ta} * {b} + {a} * {tb}"
    if tb is None:  # t = a / b: (ta - t * tb) / b
        return f"{ta} / {b}"
    return f"{t} * (-{tb} / {b})" if ta is None else f"({ta} - {t} * {tb}) / {b}"


def _power_tangent(a: str, n: Any, ta: str) -> str | None:
    """The tangent of ``a ** n`` for a numeric constant ``n``."""
    if n == 0:
        return None
    if n == 1:
        return ta
    if n == 2:
        return f"(2.0 * {ta}) * {a}"
    return f"({float(n)!r} * {ta}) * {a} ** {n - 1!r}"


def _unary_tangent(derivative: str, ta: str) -> str:
    if derivative == "-1.0":
        return f"-{ta}"
    if derivative.startswith("1.0 / "):  # log: one quotient, no reciprocal array
        return f"{ta} / ({derivative[len('1.0 / '):]})"
    return f"{ta} * ({derivative})"


# --------------------------------------------------------------------------------------------
# Float blocks
# --------------------------------------------------------------------------------------------


class ForwardFloatBlock(_Block):
    """A run of float arithmetic computed on Python floats, primal and tangent together."""

    def __init__(self, stmts: list, integers: set, resolve: Callable, fresh: Callable, primal: Callable,
                 const: Callable, function_body: list) -> None:
        self.integers, self.resolve = integers, resolve
        super().__init__(stmts, fresh, primal, const, function_body)

    def kind_of(self, s: ir.Call) -> tuple[str, Any]:
        return _float_statement(s, self.integers, self.resolve)

    def code(self, td: Callable) -> list[str]:
        arrays = {ops[0] for _, kind, _, ops, _ in self.ops if kind == "read"} & set(self.inputs)
        whole = {o for _, kind, _, ops, _ in self.ops for o in (ops if kind != "read" else ops[1:])}
        if arrays & whole:  # an array read by element and used whole (2 * x + x[0]): the guard
            return ["_fb = False"]  # would take it for a float; statement by statement, always
        indices = {ops[1] for _, kind, _, ops, _ in self.ops if kind == "read"} & set(self.inputs) - arrays
        numbers = [v for v in self.inputs if v not in arrays and v not in indices]
        floats = {v: self.fresh("i") for v in numbers}  # each float input as a Python float
        tangents = {v: td(v) for v in numbers}
        guard = ["not _FWD.strong", "not _BATCH.size"] + [
            f"type({v}) in _FT and type({td(v)}) is float" for v in numbers] + [
            f"type({v}) is _ND and {v}.dtype is _F64 and type({td(v)}) is _ND" for v in arrays] + self.function_guards
        body = [f"{floats[v]} = float({v})" for v in numbers]
        body += [f"{local} = {path}" for local, path in self.attributes]
        numpy_made = set()  # values NumPy functions made: NumPy floats when handed on
        depends: dict[str, set] = {v: {v} for v in numbers}
        for local, kind, func, operands, fname in self.ops:
            ops = [floats.get(o, o) for o in operands]
            ts = [tangents.get(o) for o in operands]
            depends[local] = set().union(*(depends.get(o, set()) for o in operands))
            t = f"{local}_t"
            if kind == "read":  # an element, checked to be one (a NumPy float), and its tangent
                x, index = operands
                body.append(f"{local} = {x}[{index}]")
                body.append(f"if type({local}) is not _f64: raise TypeError('not an element')  # statement by statement")
                body.append(f"{local} = float({local}); {t} = float({td(x)}[{index}])")
                numpy_made.add(local)
                tangents[local] = t
                floats[local] = local
                continue
            if kind == "unary":
                keeps_python = getattr(func, "__module__", None) == "math"
                value = f"{fname}({ops[0]})" if keeps_python else f"float({fname}({ops[0]}))"
                if keeps_python:  # math.sin of a NumPy float is a Python float
                    depends[local] = set()
                else:
                    numpy_made.add(local)
                tangent = _unary_tangent(_UNARY[func](ops[0], local), ts[0])
            elif func is operator.neg:
                value, tangent = f"-{ops[0]}", f"-{ts[0]}"
            elif func is operator.pow:
                value, tangent = f"{ops[0]} ** {ops[1]}", _power_tangent(ops[0], int(ops[1]), ts[0])
            else:
                op = _BINARY[func]
                value = f"{ops[0]} {op} {ops[1]}"
                tangent = _binary_tangent(op, ops[0], ops[1], local, ts[0], ts[1])
            if kind != "unary" and any(o in numpy_made for o in operands):
                numpy_made.add(local)
            body.append(f"{local} = {value}; {t} = {tangent or '0.0'}")
            tangents[local] = t
            floats[local] = local
        write_back, assigned = [], []
        for var, local in self.final.items():
            sources = sorted(depends[local])
            if local in numpy_made:
                value = f"_f64({local})"
            elif sources:
                value = f"(_f64({local}) if {' or '.join(f'type({v}) is not float' for v in sources)} else {local})"
            else:
                value = local
            hold = self.fresh("o")  # computed before any input is rebound
            write_back.append(f"{hold} = {value}")
            assigned.append(f"{var} = {hold}; {td(var)} = {tangents[local]}")
        return self.emit_guarded("float block", " and ".join(guard), body, write_back + assigned)


# --------------------------------------------------------------------------------------------
# Array blocks
# --------------------------------------------------------------------------------------------


class ForwardArrayBlock(_Block):
    """A run of elementwise NumPy arithmetic, primal and tangent as plain NumPy."""

    def __init__(self, stmts: list, integers: set, resolve: Callable, fresh: Callable, primal: Callable,
                 const: Callable, function_body: list) -> None:
        self.integers, self.resolve = integers, resolve
        super().__init__(stmts, fresh, primal, const, function_body)

    def kind_of(self, s: ir.Call) -> tuple[str, Any]:
        return classify(s, self.integers, self.resolve)

    def code(self, td: Callable) -> list[str]:
        active = self.fresh("tg")
        tangents = {v: self.fresh("a") for v in self.inputs}  # None where the tangent is zero
        pairs = ", ".join(f"{v}, {td(v)}" for v in self.inputs)
        guard = ["not _FWD.strong", "not _BATCH.size",
                 f"({active} := _array_tangents({pairs})) is not None"] + self.function_guards
        # (a block of constants only, such as 1 / (8 * np.pi), has no inputs to unpack)
        body = [f"{', '.join(tangents.values())}, = {active}"] if tangents else []
        for v in constant_inputs(self.stmts) & set(self.inputs):
            tangents[v] = None  # a new constant array (constant_arrays.py): its tangent is zero
        body += [f"{local} = {path}" for local, path in self.attributes]
        dead = self._last_reads()
        for k, (local, kind, func, operands, fname) in enumerate(self.ops):
            spent = set(dead[k])  # values and tangents read last here: their memory may take a result
            tangent_lines = self._tangent_lines(local, kind, func, operands, tangents, spent)
            unread = {v for v in spent if not any(re.search(rf"\b{v}\b", line) for line in tangent_lines)}
            plain = _expression(kind, func, operands, fname)
            body.append(f"{local} = {spent_primal(kind, func, operands, plain, fname, unread)}")
            body += tangent_lines
            tangents[local] = f"{local}_t"
            if dead[k]:  # freed as the function frees them (large arrays: memory reused)
                body.append(f"del {', '.join(dead[k])}")
        taken = self.fresh("given")
        sums = {local for local, kind, *_ in self.ops if kind == "sum"}  # floats, float tangents (or None)
        write_back = [f"{taken} = [{', '.join(td(v) for v in self.inputs)}]"] \
            if any(local not in sums for local in self.final.values()) else []
        holds = []
        for var, local in self.final.items():
            hold = self.fresh("o")
            if local in sums:
                write_back.append(f"{hold} = 0.0 if {tangents[local]} is None else {tangents[local]}")
            else:
                write_back.append(f"{hold} = _out_tangent({tangents[local]}, {local}, {taken})")
            holds.append(f"{var} = {local}; {td(var)} = {hold}")
        return self.emit_guarded("array block", " and ".join(guard), body, write_back + holds)

    def _tangent_lines(self, local: str, kind: str, func: Any, operands: list, tangents: dict,
                       spent: set) -> list[str]:
        """``local_t = ...``, one case per combination of operand tangents that may be None,
        computed into the memory of a value or tangent in ``spent`` where one is (``forward_spent``)."""
        present = [tangents.get(o) for o in operands]
        maybe = [t for t in present if t is not None]

        def expression(live: set) -> str | None:
            found = _tangent_expression(live)
            return None if found is None else spent_tangent(found, spent)

        def _tangent_expression(live: set) -> str | None:
            ts = [t if t in live else None for t in present]
            if kind == "binary":
                return _binary_tangent(_BINARY[func], operands[0], operands[1], local, ts[0], ts[1])
            if ts[0] is None:
                return None
            if kind == "neg":
                return f"-{ts[0]}"
            if kind == "pow":
                return _power_tangent(operands[0], float(operands[1]), ts[0])
            if kind == "sum":
                return f"_tangent_sum({ts[0]}, {operands[0]})"
            table = _ARRAY_UNARY if func in _ARRAY_UNARY else _UNARY
            return _unary_tangent(table[func](operands[0], local), ts[0])

        t = f"{local}_t"
        if not maybe:
            return [f"{t} = None"]
        if len(maybe) == 1:
            (a,) = maybe
            return [f"{t} = None if {a} is None else {expression({a}) or 'None'}"]
        a, b = maybe
        return [f"if {a} is None:", f"    {t} = None if {b} is None else {expression({b}) or 'None'}",
                f"elif {b} is None:", f"    {t} = {expression({a}) or 'None'}",
                "else:", f"    {t} = {expression({a, b}) or 'None'}"]

    def _last_reads(self) -> list[list[str]]:
        """Per operation, the block's values (and their tangents) it reads last that are not
        handed on."""
        kept = set(self.final.values())
        last: dict[str, int] = {}
        for k, (_, _, _, ops, _) in enumerate(self.ops):
            for o in ops:
                if o in self.made and o not in kept:
                    last[o] = k
        dead: list[list[str]] = [[] for _ in self.ops]
        for name, k in last.items():
            dead[k] += [name, f"{name}_t"]
        return dead


# --------------------------------------------------------------------------------------------
# What the generated blocks call
# --------------------------------------------------------------------------------------------

_ZEROS: dict = {}  # dtype -> a read-only 0-d zero, the base of every zero view of that dtype


def zero_view(value: np.ndarray) -> np.ndarray:
    """The tangent of a constant float array (a global, read-only): zeros in a read-only view of
    one 0-d zero, costing no memory. An array block recognises it (its base) and spends no
    derivative work on it; rules read it as the zeros it is."""
    zero = _ZEROS.get(value.dtype)
    if zero is None:
        zero = np.zeros((), value.dtype)
        zero.flags.writeable = False
        zero = _ZEROS.setdefault(value.dtype, zero)
    return np.broadcast_to(zero, value.shape)


_F64 = np.dtype(np.float64)


def array_tangents(*pairs: Any) -> tuple | None:
    """The guard of an array block on ``(value, tangent, ...)``: each value a float with a float
    tangent, an int (``0.5 * n``: a constant, as in Python's arithmetic) or a float64 array (not
    0-d) with a tangent array of its shape, at least one an array. Returns each tangent, None
    where it is zero (a zero view, a zero float, an int's); else None."""
    found, some_array = [], False
    for k in range(0, len(pairs), 2):
        v, t = pairs[k], pairs[k + 1]
        kind = type(v)
        if kind is float or kind is np.float64:
            if type(t) is not float:
                return None
            found.append(t if t else None)
        elif kind is int:
            found.append(None)
        elif kind is np.ndarray and v.dtype is _F64 and v.ndim and type(t) is np.ndarray \
                and t.dtype is _F64 and t.shape == v.shape:
            some_array = True
            found.append(None if t.base is not None and t.base is _ZEROS.get(_F64) else t)
        else:
            return None
    return tuple(found) if some_array else None


def out_tangent(t: Any, value: Any, taken: list) -> Any:
    """The tangent a block hands on for ``value``: a float for a float; for an array, a fresh
    array of its shape (``t`` may be None for zero, a float or a smaller array broadcast over it,
    or an array another value already has)."""
    if type(value) is not np.ndarray:
        return NoTangent if type(value) is int else 0.0 if t is None else float(t)  # (ints: 2 * n)
    if t is None:
        t = np.zeros(value.shape)
    elif type(t) is not np.ndarray or t.shape != value.shape:
        t = np.array(np.broadcast_to(t, value.shape))
    elif any(t is other for other in taken):
        t = t.copy()
    taken.append(t)
    return t


def tangent_sum(t: Any, value: Any) -> Any:
    """The tangent of ``np.sum(value)`` from ``value``'s tangent (a float stands for an array of
    that value)."""
    if type(value) is not np.ndarray:
        return t
    if type(t) is np.ndarray:
        return float((t if t.shape == value.shape else np.broadcast_to(t, value.shape)).sum())
    return float(t) * value.size


NAMESPACE = {"_array_tangents": array_tangents, "_out_tangent": out_tangent, "_tangent_sum": tangent_sum,
             "_math": math, "_add_reduce": np.add.reduce,  # (array_blocks._expression's np.sum)
             "_BOOL": np.dtype(bool), "_ORDERED": frozenset({np.ndarray, float, int, np.float64}),  # (forward_templates)
             **_SPENT_NAMESPACE}

__all__ = ["ForwardArrayBlock", "ForwardFloatBlock", "NAMESPACE", "find_forward_blocks", "whole_array_block",
           "zero_view"]
