"""Forward float loops: a ``for`` loop over a range whose body reads floats out of float64 arrays,
does float arithmetic and writes floats into float64 arrays, run in a JVP as plain Python floats
(the forward twin of ``float_blocks.FloatLoop``, whose analysis of the body it reuses).

Statement by statement, each iteration of ``y += x[i]`` pays a type guard per operation, a NumPy
scalar per element read and NumPy scalar arithmetic. Guarded once before the loop, the loop
instead reads the arrays and their tangents through ``memoryview``s (elements come out as Python
floats), computes primal and tangent of every value in fresh locals, and writes the carried
variables back after the loop. NumPy floats are computed as Python floats (the same IEEE values);
a result that depends on one is a NumPy float again. Where Python floats raise (``1.0 / 0.0``,
a domain error of ``math.log``) the loop has assigned no variable of the function yet, and it runs
again statement by statement, which raises (or not) at the user's line exactly as before; the
elements it wrote are written again with the same values (it reads no array it writes). Only a
JVP's plain pass takes it: the strong-zero pass and batched passes run the loop as usual.
Generated code:

    _fb = False
    if not _FWD.strong and not _BATCH.size and type(x) is _ND and ... :  # float loop: line 37
        try:
            _m4 = _loop_cells(x); _m4_t = _loop_cells(x_t)
            _c5 = float(y); _c5_t = y_t
            for _k2 in range(_t1):
                i = _k2
                _b2 = _m4[i]; _b2_t = _m4_t[i]
                _b3 = _c5 + _b2; _b3_t = _c5_t + _b2_t
                _c5 = _b3; _c5_t = _b3_t
        except Exception:  # Python floats raise where NumPy's give inf: statement by statement, below
            pass
        else:
            _fb = True
            if range(_t1): y = _f64(_b3); y_t = _b3_t
        finally:
            _m4 = _m4_t = None  # the views hold the arrays' buffers
    if not _fb:
        <the loop, statement by statement>
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from ..ir import nodes as ir
from .float_blocks import FloatLoop, _expression, _keeps_python_floats, _literal
from .forward_blocks import _binary_tangent, _power_tangent, _unary_tangent
from .templates import _UNARY

_BINARY = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/"}


class ForwardFloatLoop:
    """The forward code of one float loop (``plan``: None when the loop does not qualify)."""

    def __init__(self, loop: FloatLoop, fresh: Callable) -> None:
        self.loop, self.fresh = loop, fresh
        self.entry = {v: fresh("c") for v in loop.entry_reads}  # each input as a Python float
        self.made: dict[str, bool] = {}  # local -> whether its value is a NumPy float in the loop
        self.depends: dict[str, set] = {v: {v} for v in loop.entry_reads}  # local -> inputs it reads

    @staticmethod
    def plan(s: ir.ForRange, integers: set, resolve: Callable, fresh: Callable,
             function_body: list) -> "ForwardFloatLoop | None":
        loop = FloatLoop.plan(s, integers, _UNARY, resolve, fresh, function_body)
        if loop is None or any(kind == "plain" for kind, _, _ in loop.steps):
            return None
        forward = ForwardFloatLoop(loop, fresh)
        return forward if forward._classify() else None

    def _classify(self) -> bool:
        """Which values are NumPy floats. A variable handed on whose value depends on a NumPy
        float (an element read, a NumPy function's value) is one after any iteration; the others
        are Python floats when the inputs they depend on are (the guard checks it). A variable of
        the second kind depending on one of the first changes kind between iterations: no plan."""
        loop = self.loop
        for kind, local, payload in loop.steps:
            if kind == "read":
                self.made[local], self.depends[local] = True, set()
            elif kind == "unary":
                python = _keeps_python_floats(payload[1])
                self.made[local] = not python
                self.depends[local] = set() if python else self.depends.get(payload[2], set())
            elif kind == "op":
                operands = payload[1]
                self.made[local] = any(self.made.get(o, False) for o in operands)
                self.depends[local] = set().union(*(self.depends.get(o, set()) for o in operands))
        numpy_vars = {v for v, local in loop.final.items() if self.made[local]}
        self.python_inputs = sorted(set().union(*(self.depends[local] for v, local in loop.final.items()
                                                  if v not in numpy_vars)), key=loop.entry_reads.index)
        return not numpy_vars & set(self.python_inputs)

    # ------------------------------------------------------------------ code

    def guard(self, primal: Callable, const: Callable, td: Callable) -> str:
        loop = self.loop
        parts = ["not _FWD.strong", "not _BATCH.size"]
        for a in loop.arrays + loop.written:
            parts.append(f"type({a}) is _ND and {a}.dtype is _F64 and {a}.ndim == {loop.ndim[a]} "
                         f"and type({td(a)}) is _ND and {td(a)}.dtype is _F64 and {td(a)}.shape == {a}.shape")
        parts += [f"not _may_share_memory({w}, {r})" for w in loop.written for r in loop.arrays]
        for v in loop.carried + loop.invariant:
            kind = "type({v}) is float" if v in self.python_inputs else "type({v}) in _FT"
            parts.append(kind.format(v=v) + f" and type({td(v)}) is float")
        parts += [f"{primal(atom)} is {const(func)}" for atom, func in loop.unary_guards.values()]
        parts += [f"{primal(atom)} is {const(func)} and {primal(atom)}.__code__ is {const(func.__code__)}"
                  for atom, func in loop.helpers]  # the function inlined, its code unchanged
        return " and ".join(parts)

    def code(self, loop_range: str, primal: Callable, const: Callable, td: Callable) -> list[str]:
        """The guarded loop, ending where the statement-by-statement loop begins (under ``if not
        _fb:``, which the generator emits)."""
        loop = self.loop
        views = {a: self.fresh("m") for a in loop.arrays + loop.written}
        setup = [f"{m} = _loop_cells({a}); {m}_t = _loop_cells({td(a)})" for a, m in views.items()
                 if a in loop.arrays]
        setup += [f"{m} = _loop_cells({a}, True); {m}_t = _loop_cells({td(a)}, True)" for a, m in views.items()
                  if a in loop.written]
        setup += [f"{c} = float({v}); {c}_t = {td(v)}" for v, c in self.entry.items()]
        body = [f"{target} = {source}" for target, source in loop.copies]
        body += self._steps(views, primal)
        body += [f"{self.entry[v]} = {loop.final[v]}; {self.entry[v]}_t = {loop.final[v]}_t" for v in loop.carried]
        ran = f"if {loop_range}: " if loop.final else ""
        write_back = [f"{v} = {f'_f64({local})' if self.made[local] else local}; {td(v)} = {local}_t"
                      for v, local in loop.final.items()]
        indices = [loop.loop.var] + [target for target, _ in loop.copies]
        lines = ["_fb = False", f"if {self.guard(primal, const, td)}:  # float loop: line {loop.loop.line}", "    try:"]
        lines += ["        " + s for s in setup]
        lines.append(f"        for {loop.loop.var} in {loop_range}:")
        lines += ["            " + b for b in body]
        lines += ["    except Exception:  # Python floats raise where NumPy's give inf: statement by statement, below",
                  "        pass", "    else:", "        _fb = True"]
        if write_back:
            lines.append(f"        {ran}{'; '.join(write_back)}")
        lines.append(f"        {'; '.join(f'{td(v)} = _NT' for v in indices)}")
        if views:
            lines += ["    finally:", f"        {' = '.join(f'{m} = {m}_t' for m in views.values())} = None"
                      "  # (the views hold the arrays' buffers)"]
        return lines

    def _steps(self, views: dict, primal: Callable) -> list[str]:
        """One iteration: each value and its tangent, Python floats in fresh locals."""
        loop = self.loop
        name = {**self.entry}  # operand -> the local holding it (step locals keep their names)
        lines: list[str] = []
        for kind, local, payload in loop.steps:
            if kind == "read":
                array, index = payload
                lines.append(f"{local} = {views[array]}[{index}]; {local}_t = {views[array]}_t[{index}]")
                continue
            if kind == "write":
                array, index, value = payload
                tangent = "0.0" if _literal(value) else f"{name.get(value, value)}_t"
                lines.append(f"{views[array]}[{index}] = {name.get(value, value)}; {views[array]}_t[{index}] = {tangent}")
                continue
            if kind == "unary":
                _, func, x = payload
                atom = loop.unary_guards[payload[0]][0]
                x = name.get(x, x)
                value = f"{primal(atom)}({x})" if _keeps_python_floats(func) else f"float({primal(atom)}({x}))"
                tangent = None if _literal(x) else _unary_tangent(_UNARY[func](x, local), f"{x}_t")
            else:
                f, ops = payload
                ops = [name.get(o, o) for o in ops]
                ts = [None if _literal(o) else f"{o}_t" for o in ops]
                value = _expression(f, ops)
                if f is operator.neg:
                    tangent = f"-{ts[0]}"
                elif f is operator.pow:
                    tangent = _power_tangent(ops[0], int(ops[1]), ts[0])
                else:
                    tangent = _binary_tangent(_BINARY[f], ops[0], ops[1], local, ts[0], ts[1])
            lines.append(f"{local} = {value}; {local}_t = {tangent or '0.0'}")
        return lines


def loop_cells(array: np.ndarray, writable: bool = False) -> memoryview:
    """A float64 array's elements as a ``memoryview`` (read and written as Python floats); raises
    for a read-only one to be written (the loop then runs statement by statement)."""
    view = memoryview(array)
    if view.format != "d" or writable and view.readonly:
        view.release()
        raise TypeError("not a writable float64 buffer")
    return view


NAMESPACE = {"_loop_cells": loop_cells, "_may_share_memory": np.may_share_memory}

__all__ = ["ForwardFloatLoop", "NAMESPACE", "loop_cells"]
