"""Dual float loops: a ``for`` loop over a range whose body reads floats out of float64 arrays and
does float arithmetic, run in the second-order program as plain Python floats (the dual twin of
``float_blocks.FloatLoop`` and ``forward_loops.ForwardFloatLoop``, whose analysis it reuses).

Statement by statement, each iteration of ``y += np.sin(x[i])`` runs an inline template per
operation: a type guard, a NumPy scalar per element read, two pushes and two pops per operation.
Guarded once before the loop, the loop instead reads the arrays and their tangents through
``memoryview``s (Python floats), computes each value, its tangent and the partials the reverse
needs in fresh locals, and appends one tuple of residuals per iteration; the reverse walks the
range and the tuples backwards with straight-line code for the adjoints and their tangents,
adding the read elements' into the arrays' fdata and fdata tangents. Only loops of reads, writes
(``y[i, j] = v`` into a float64 array the loop does not read), ``+ - * /``, ``-x``, ``x ** n`` for a
literal int and the functions of ``dual_templates._UNARY`` qualify (no helper calls).

A write records the element's old value and tangent; the reverse gathers the element's fdata (and
its tangent) into the written value's adjoint, zeroes them and puts the old value back, as the
statements' setitem does. An iteration writes last, after every step that can raise, so when the
loop gives up (an exception, a NaN tangent) the recorded iterations are all that wrote: their
elements are put back, last first, before the statements run and record the old values again.

Strong zero (docs/conventions.md): the forward's products are plain; a NaN in a tangent handed on
(``0 * inf``) sends the loop to its statements, which multiply by the strong-zero rule. Each
adjoint product is taken only for a nonzero factor, as the templates do. Where Python floats raise
(division by zero, ``math.log(0)``) the loop has assigned no variable of the function yet, and the
statements run instead, raising or computing as the function does. Values that depend on a NumPy
float are NumPy floats again when written back (``ForwardFloatLoop``'s classification). Generated
code:

    _dl1 = None
    if type(x) is _ND and ... and type(y) in _FT and type(y_d) is float:  # dual float loop: line 37
        _res4 = []
        try:
            _m2 = _loop_cells(x); _m2_d = _loop_cells(x_d); _c3 = float(y); _c3_d = y_d
            _rec = _res4.append
            for i in _range5:
                _b6 = _m2[i]; _b6_d = _m2_d[i]
                _b7 = _c3 + _b6; _b7_d = _c3_d + _b6_d
                _c3 = _b7; _c3_d = _b7_d
            if _range5 and not (_b7_d == _b7_d): raise FloatingPointError
        except Exception:
            <the elements written put back>
        else:
            <push the residuals, write y back>; _dl1 = True
    if _dl1 is None:
        <the loop, statement by statement>
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np
from ..ir import nodes as ir
from .dual_templates import _UNARY as DUAL_UNARY
from .float_blocks import _cells, _expression, _keeps_python_floats, _literal
from .forward_loops import ForwardFloatLoop, loop_cells
from .try_statements import has_reverse_work


class _Marker:
    def __repr__(self) -> str:
        return "_DFASTLOOP"


#: pushed last by a dual float loop that ran (the statements push the loop's trip count)
FAST_LOOP = _Marker()


class DualFloatLoop:
    """The forward and reverse code of one dual float loop (``plan``: None when it does not qualify)."""

    def __init__(self, plan: ForwardFloatLoop, gen: Any) -> None:
        self.plan, self.loop, self.gen, self.fresh = plan, plan.loop, gen, gen.fresh
        self.name = {**plan.entry}  # operand -> the local holding it in an iteration
        self.residuals: list[str] = []  # what each iteration records, in order

    @staticmethod
    def plan_loop(s: ir.ForRange, gen: Any) -> "DualFloatLoop | None":
        plan = ForwardFloatLoop.plan(s, gen.integers, gen._resolve, gen.fresh, gen.fn.body)
        if plan is None or plan.loop.helpers:
            return None
        if any(kind == "unary" and payload[1] not in DUAL_UNARY for kind, _, payload in plan.loop.steps):
            return None
        if any(kind == "op" and payload[0] is operator.pow and not _int_literal(payload[1][1])
               for kind, _, payload in plan.loop.steps):
            return None
        return DualFloatLoop(plan, gen)

    # ------------------------------------------------------------------ forward

    def guard(self) -> str:
        gen, loop = self.gen, self.loop
        parts = []
        for a in loop.arrays:
            d, f, fd = gen.dd(a), gen.fd(a), gen.fdd(a)
            parts.append(f"type({a}) is _ND and {a}.dtype is _F64 and {a}.ndim == {loop.ndim[a]} and type({d}) is _ND "
                         f"and {d}.dtype is _F64 and {d}.shape == {a}.shape and ({f} is _NF or type({f}) is _ND "
                         f"and {f}.shape == {a}.shape) and ({fd} is _NF or type({fd}) is _ND and {fd}.shape == {a}.shape)")
        for w in loop.written:  # the cotangents the reverse gathers are in its fdata (and their tangents)
            d, f, fd = gen.dd(w), gen.fd(w), gen.fdd(w)
            parts.append(f"type({w}) is _ND and {w}.dtype is _F64 and {w}.ndim == {loop.ndim[w]} and type({d}) is _ND "
                         f"and {d}.dtype is _F64 and {d}.shape == {w}.shape and type({f}) is _ND and {f}.shape == {w}.shape "
                         f"and type({fd}) is _ND and {fd}.shape == {w}.shape")
        # (a written array sharing memory with a read one: its elements change under the reads)
        parts += [f"not _may_share_memory({w}, {r}) and not _may_share_memory({gen.dd(w)}, {gen.dd(r)})"
                  for w in loop.written for r in loop.arrays]
        for v in loop.carried + loop.invariant:
            kind = "type({v}) is float" if v in self.plan.python_inputs else "type({v}) in _FT"
            parts.append(kind.format(v=v) + f" and type({gen.dd(v)}) is float")
        parts += [f"{gen.primal(atom)} is {gen.const(func)}" for atom, func in loop.unary_guards.values()]
        return " and ".join(parts) or "True"

    def forward(self, loop_range: str) -> list[str]:
        """The guarded loop, ending where the statements' loop begins (under ``if {self.ran} is
        None:``, which the generator emits)."""
        gen, loop = self.gen, self.loop
        self.ran, self.records = self.fresh("dl"), self.fresh("res")
        views = self.views = {a: self.fresh("m") for a in loop.arrays + loop.written}
        setup = [f"{m} = _loop_cells({a}); {m}_d = _loop_cells({gen.dd(a)})" for a, m in views.items()
                 if a in loop.arrays]
        setup += [f"{m} = _loop_cells({a}, True); {m}_d = _loop_cells({gen.dd(a)}, True)" for a, m in views.items()
                  if a in loop.written]
        setup += [f"{c} = float({v}); {c}_d = {gen.dd(v)}" for v, c in self.plan.entry.items()]
        setup.append(f"_rec = {self.records}.append")
        body = [f"{target} = {source}" for target, source in loop.copies] + self._steps()
        if self.residuals:
            body.append(f"_rec(({', '.join(self.residuals)},))")
        body += [f"{self.plan.entry[v]} = {loop.final[v]}; {self.plan.entry[v]}_d = {loop.final[v]}_d"
                 for v in loop.carried]
        handed = [f"{local}_d" for local in loop.final.values()]
        saved = [self.records, loop_range] + loop.outer_integers \
            + [p for a in loop.arrays for p in (gen.fd(a), gen.fdd(a))] \
            + [p for w in loop.written for p in (w, gen.dd(w), gen.fd(w), gen.fdd(w))] + loop.invariant
        write_back = [f"{v} = {f'_f64({local})' if self.plan.made[local] else local}; {gen.dd(v)} = {local}_d; "
                      f"{gen.fd(v)} = {gen.fdd(v)} = _NF" for v, local in loop.final.items()]
        lines = [f"{self.ran} = None", f"if {self.guard()}:  # dual float loop: line {loop.loop.line}",
                 f"    {self.records} = []", "    try:"]
        lines += ["        " + s for s in setup]
        lines.append(f"        for {loop.loop.var} in {loop_range}:")
        lines += ["            " + b for b in body]
        if handed:  # a NaN tangent handed on (0 * inf): the statements' products give the strong zero
            check = " and ".join(f"{h} == {h}" for h in handed)
            lines.append(f"        if {loop_range} and not ({check}): raise FloatingPointError")
        lines.append("    except Exception:  # Python floats raise where NumPy's give inf: statement by statement")
        lines += ["        " + text for text in self._unwrite(loop_range) or ["pass"]]
        lines += ["    else:", f"        _push(({', '.join(saved)},)); _push(_DFASTLOOP); {self.ran} = True"]
        if write_back:
            lines.append(f"        if {loop_range}:")
            lines += ["            " + text for text in write_back]
        if views:
            lines += ["    finally:", f"        {' = '.join(f'{m} = {m}_d' for m in views.values())} = None"
                      "  # (the views hold the arrays' buffers)"]
        return lines

    def _unwrite(self, loop_range: str) -> list[str]:
        """The elements the loop wrote before it gave up, put back, last first (the statements then
        record the values the function saw). An iteration writes nothing before its last step can
        raise (``_steps``), so the recorded iterations are all that wrote."""
        writes = [(local, payload) for kind, local, payload in self.loop.steps if kind == "write"]
        if not writes:
            return []
        lines = [f"for {self.loop.loop.var}, _r in zip(reversed({loop_range}[:len({self.records})]), "
                 f"reversed({self.records})):"]
        lines += [f"    {target} = {source}" for target, source in self.loop.copies]
        for local, (array, index, _) in reversed(writes):
            m, k = self.views[array], self.residuals.index(local)
            lines.append(f"    {m}[{index}] = _r[{k}]; {m}_d[{index}] = _r[{k + 1}]")
        return lines

    def _record(self, *names: str) -> None:
        for n in names:
            if not _literal(n) and n not in self.residuals:
                self.residuals.append(n)

    def _steps(self) -> list[str]:
        """One iteration: each value, its tangent and the partials the reverse needs."""
        name, lines = self.name, []
        # an iteration's writes come last, after reading the old values and checking the tangents
        # (a NaN, 0 * inf: the statements' strong zero), so it writes nothing unless it completes
        # (no array read in the loop is written: the order of reads and writes is the function's)
        olds, checks, writes = [], [], []
        for kind, local, payload in self.loop.steps:
            if kind == "write":
                array, index, value = payload
                m, value = self.views[array], name.get(value, value)
                tangent = "0.0" if _literal(value) else f"{value}_d"
                olds.append(f"{local} = {m}[{index}]; {local}_d = {m}_d[{index}]")
                if tangent != "0.0":
                    checks.append(f"{tangent} != {tangent}")
                writes.append(f"{m}[{index}] = {value}; {m}_d[{index}] = {tangent}")
                self._record(local, f"{local}_d")
                continue
            if kind == "read":
                array, index = payload
                m = self.views[array]
                lines.append(f"{local} = {m}[{index}]; {local}_d = {m}_d[{index}]")
                continue
            if kind == "unary":
                _, func, x = payload
                atom = self.loop.unary_guards[payload[0]][0]
                x = name.get(x, x)
                call = f"{self.gen.primal(atom)}({x})"
                value = call if _keeps_python_floats(func) else f"float({call})"
                first, second = (d.replace("X", x).replace("T", local).replace("_sdiv", "_safe_divide")
                                 for d in DUAL_UNARY[func])
                xd = "0.0" if _literal(x) else f"{x}_d"
                lines.append(f"{local} = {value}; {local}_p = {first}; {local}_d = {xd} * {local}_p; "
                             f"{local}_pd = {second} * {xd} if {xd} else 0.0")
                self._record(f"{local}_p", f"{local}_pd")
                continue
            f, ops = payload
            ops = [name.get(o, o) for o in ops]
            ts = ["0.0" if _literal(o) else f"{o}_d" for o in ops]
            value = _expression(f, ops)
            if f is operator.neg:
                tangent = f"-{ts[0]}"
            elif f is operator.pow:
                n = int(float(ops[1]))
                first = "0.0" if n == 0 else "1.0" if n == 1 else f"{float(n)!r} * {ops[0]} ** {n - 1}"
                second = "0.0" if n in (0, 1) else f"{float(n * (n - 1))!r} * {ops[0]} ** {n - 2}"
                lines.append(f"{local} = {ops[0]} ** {n}; {local}_p = {first}; {local}_d = {ts[0]} * {local}_p; "
                             f"{local}_pd = {second} * {ts[0]} if {ts[0]} else 0.0")
                self._record(f"{local}_p", f"{local}_pd")
                continue
            elif f is operator.add:
                tangent = f"{ts[0]} + {ts[1]}"
            elif f is operator.sub:
                tangent = f"{ts[0]} - {ts[1]}"
            elif f is operator.mul:
                tangent = f"{ts[0]} * {ops[1]} + {ops[0]} * {ts[1]}"
                self._record(*ops, *ts)
            else:  # t = a / b: (ta - t tb) / b
                tangent = f"({ts[0]} - {local} * {ts[1]}) / {ops[1]}"
                self._record(ops[1], ts[1], local, f"{local}_d")
            lines.append(f"{local} = {value}; {local}_d = {tangent}")
        if checks:
            olds.append(f"if {' or '.join(checks)}: raise FloatingPointError")
        return lines + olds + writes

    # ------------------------------------------------------------------ reverse

    def reverse(self) -> list[str]:
        gen, loop = self.gen, self.loop
        xfs = {a: (self.fresh("xf"), self.fresh("xfd")) for a in loop.arrays}
        loop_range = self.fresh("range")
        # a written array, its tangent and their fdata: restored and gathered from
        wrs = {w: tuple(self.fresh(k) for k in ("w", "wd", "wf", "wfd")) for w in loop.written}
        cells = [p for group in list(xfs.values()) + list(wrs.values()) for p in group]
        unpacked = [self.records, loop_range] + loop.outer_integers + cells + loop.invariant
        lines = [f"{', '.join(unpacked)}, = _pop()"]
        lines += [f"{p} = _cells({p})" for p in cells]
        carry = {v: self.fresh("g") for v in loop.carried}
        outputs = {v: self.fresh("g") for v in loop.final if v not in carry}
        invariant = {v: self.fresh("g") for v in loop.invariant}
        for v, g in list(carry.items()) + list(outputs.items()):
            r, rd = gen.rd(v), gen.rdd(v)
            lines.append(f"{g} = 0.0 if {r} is _NR else {r}; {g}d = 0.0 if {rd} is _NR else {rd}; {r} = {rd} = _NR")
        lines += [f"{g} = {g}d = 0.0" for g in invariant.values()]
        adjoint = {loc: carry.get(v) or outputs[v] for v, loc in loop.final.items()}
        values = {loc for _, loc, _ in loop.steps} | set(loop.entry_reads)
        name = self.name
        body: list[str] = []

        def add(target: str, expr: str, tangent: str) -> None:
            if target not in values:
                return  # a literal
            g = invariant.get(target) or adjoint.get(target)
            if g is not None:
                body.append(f"{g} += {expr}; {g}d += {tangent}")
            else:
                g = adjoint[target] = self.fresh("g")
                body.append(f"{g} = {expr}; {g}d = {tangent}")

        for kind, local, payload in reversed(loop.steps):
            if kind == "write":  # the old value back; what its element gathered goes to the value
                array, index, value = payload
                w, wd, wf, wfd = wrs[array]
                g = self.fresh("g")
                body.append(f"{g} = float({wf}[{index}]); {g}d = float({wfd}[{index}]); {wf}[{index}] = "
                            f"{wfd}[{index}] = 0.0; {w}[{index}] = {local}; {wd}[{index}] = {local}_d")
                add(value, g, f"{g}d")
                continue
            g = adjoint.get(local)
            if g is None:
                continue
            gd = f"{g}d"
            if kind == "read":
                xf, xfd = xfs[payload[0]]
                index = payload[1]
                body.append(f"if {xf} is not _NF: {xf}[{index}] += {g}")
                body.append(f"if {xfd} is not _NF: {xfd}[{index}] += {gd}")
            elif kind == "unary" or kind == "op" and payload[0] is operator.pow:
                x = payload[2] if kind == "unary" else payload[1][0]
                add(x, f"({g} * {local}_p if {g} else 0.0)",
                    f"({gd} * {local}_p if {gd} else 0.0) + ({g} * {local}_pd if {g} else 0.0)")
            else:
                f, ops = payload
                for target, contribution, tangent in _adjoint_pairs(f, ops, [name.get(o, o) for o in ops], local, g):
                    add(target, contribution, tangent)
        for v, g in carry.items():  # the entry value's adjoint is the previous iteration's
            entry = adjoint.get(v)
            if entry is None:
                body.append(f"{g} = {g}d = 0.0")
            elif entry != g:
                body.append(f"{g} = {entry}; {g}d = {entry}d")
        for g in outputs.values():  # only the last iteration's value was read after the loop
            body.append(f"{g} = {g}d = 0.0")
        body[:0] = [f"{target} = {source}" for target, source in loop.copies]
        walks = [f"reversed({loop_range})"]
        if self.residuals:
            walks.append(f"reversed({self.records})")
            lines.append(f"for {loop.loop.var}, ({', '.join(self.residuals)},) in zip({', '.join(walks)}):")
        else:
            lines.append(f"for {loop.loop.var} in {walks[0]}:")
        lines += ["    " + b for b in (body or ["pass"])]
        for v, g in carry.items():
            lines.append(f"{gen.rd(v)} = {g}; {gen.rdd(v)} = {g}d")
        for v, g in outputs.items():  # no iteration ran: the value read after is the one before
            lines.append(f"if not {loop_range}: {gen.rd(v)} = {g}; {gen.rdd(v)} = {g}d")
        for v, g in invariant.items():
            r, rd = gen.rd(v), gen.rdd(v)
            lines.append(f"{r} = {g} if {r} is _NR else {r} + {g}; {rd} = {g}d if {rd} is _NR else {rd} + {g}d")
        return lines


class DualFloatLoops:
    """A mixin of ``DualReverseGenerator`` (before ``ReverseGenerator``): ``for`` loops over a range
    as dual float loops where they qualify, their statements as the fallback."""

    def fwd_ForRange(self, s: ir.ForRange, out: list, indent: int) -> None:
        loops = self.__dict__.setdefault("_dual_loops", {})  # id of the loop -> its plan
        plan = None if self.generic_only or not has_reverse_work(s.body) else DualFloatLoop.plan_loop(s, self)
        loops[id(s)] = plan
        if plan is not None:
            loop_range = self.fresh("range")
            bounds = ", ".join(self.primal(a) for a in (s.start, s.stop, s.step))
            self.emit(out, indent, f"{loop_range} = range({bounds})", s.line)
            for text in plan.forward(loop_range):
                self.emit(out, indent, text, s.line)
            self.emit(out, indent, f"if {plan.ran} is None:  # statement by statement", s.line)
            indent += 1
        super().fwd_ForRange(s, out, indent)

    def rev_ForRange(self, s: ir.ForRange, out: list, indent: int) -> None:
        plan = self.__dict__.get("_dual_loops", {}).get(id(s))
        if plan is None:
            super().rev_ForRange(s, out, indent)
            return
        self.emit(out, indent, f"_e = _pop()  # undo the loop at line {s.line}", s.line)
        self.emit(out, indent, "if _e is _DFASTLOOP:  # the dual float loop ran", s.line)
        for text in plan.reverse():
            self.emit(out, indent + 1, text, s.line)
        self.emit(out, indent, "else:", s.line)
        self.emit(out, indent + 1, "for _ in range(_e):", s.line)
        self.reverse(s.body, out, indent + 2)


def _adjoint_pairs(f: Any, ops: list, names: list, t: str, g: str) -> list[tuple[str, str, str]]:
    """``(operand, contribution, its tangent)`` of ``t = f(*ops)`` with adjoint ``g`` (and ``g + 'd'``),
    each product taken only for a nonzero factor (strong zero)."""
    gd = f"{g}d"
    a = names[0]
    ad = "0.0" if _literal(a) else f"{a}_d"

    def nz(factor: str, expr: str) -> str:
        return f"({expr} if {factor} else 0.0)"

    if f is operator.neg:
        return [(ops[0], f"-{g}", f"-{gd}")]
    b = names[1]
    bd = "0.0" if _literal(b) else f"{b}_d"
    if f is operator.add:
        return [(ops[0], g, gd), (ops[1], g, gd)]
    if f is operator.sub:
        return [(ops[0], g, gd), (ops[1], f"-{g}", f"-{gd}")]
    if f is operator.mul:
        return [(ops[0], nz(g, f"{g} * {b}"), f"{nz(gd, f'{gd} * {b}')} + {nz(g, f'{g} * {bd}')}"),
                (ops[1], nz(g, f"{g} * {a}"), f"{nz(gd, f'{gd} * {a}')} + {nz(g, f'{g} * {ad}')}")]
    # t = a / b: q = g / b to a with tangent (gd - q bd) / b; -q t to b with tangent -(qd t + q td)
    q, qd = f"({g} / {b})", f"(({gd} - {g} / {b} * {bd}) / {b})"
    return [(ops[0], q, qd), (ops[1], nz(g, f"-{q} * {t}"), f"-({qd} * {t} + {nz(g, f'{q} * {t}_d')})")]


def _int_literal(text: str) -> bool:
    try:
        value = float(text)
    except ValueError:
        return False
    return value.is_integer() and 0 <= value <= 8


NAMESPACE = {"_DFASTLOOP": FAST_LOOP, "_loop_cells": loop_cells, "_cells": _cells, "_may_share_memory": np.may_share_memory}

__all__ = ["DualFloatLoop", "DualFloatLoops", "FAST_LOOP", "NAMESPACE"]
