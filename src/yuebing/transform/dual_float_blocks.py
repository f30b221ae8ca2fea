"""Dual float blocks: a run of float arithmetic in the second-order program as straight-line code.

A dual array block (``dual_blocks.py``) whose inputs are all floats falls back to its statements,
each an inline template (``dual_templates.py``) behind its own type guard, pushing its residuals
and a marker per statement and popping them again in the reverse: about 1.5 us a multiplication
where the multiplication costs 0.05. When every operation of the block is one the templates
write out for floats -- ``+ - * /``, ``-a``, ``a ** n`` for a literal int ``n`` from 2 to 4, and
the ``math`` functions of ``dual_templates._UNARY`` -- this module writes the block once more for
floats: one guard (every input and its tangent a float), the values and tangents into fresh
locals, one tuple of residuals pushed; the reverse is straight-line code for the adjoints and
their tangents (floats, 0.0 for none) that reaches each input's rdata.

Every expression is the template's. Strong zero (docs/conventions.md): a product's tangent that
comes out NaN sends the block to its statements, and an input's adjoint that does runs the
adjoints again by the strong-zero rule, so the results are the statements'. NumPy floats (``x[i]``)
are computed as Python floats, and results that depend on one are NumPy floats again (blocks of
``+ - * /`` and ``-x`` only: a ``math`` function's result is a Python float either way). Python
floats raise where the statements would too (division by zero, ``math.log(0)``): the block then
runs its statements, which raise (or, for NumPy floats, compute) as the function does. Generated
code:

    _fb1 = None
    if type(y) in _FT and type(y_d) in _FT and type(a) in _FT and type(a_d) in _FT:  # dual float block
        try:
            _b2 = y * a; _b2_d = y_d * a + y * a_d
            ...
            _fs3 = _b2_d + ...
            if _fs3 != _fs3: raise FloatingPointError  # a NaN tangent (0 * inf?): the statements
        except (ArithmeticError, ValueError): pass
        else:
            _push((y, a, y_d, a_d, _b2, _b2_d, ...)); _push(_DFASTFB); _fb1 = True
            y = _b401; y_d = _b401_d; y_f = y_fd = _NF
    if _fb1 is None:
        <the dual array block, its statements as its fallback>
"""
from __future__ import annotations

import math
import operator
import re
from typing import Any

import numpy as np

from .array_blocks import _BINARY
from .dual_templates import _UNARY, safe_divide

_WORD = re.compile(r"\b_?[A-Za-z_]\w*\b")
_TEMPLATE_NAMES = re.compile(r"\b(_g|_gd|_a|_b|_ad|_bd|_x|_xd|_t|_v)\b")


def _nz(d: str, expr: str) -> str:
    """``expr``, a term with derivative factor(s) ``d``, as 0.0 when one is exactly 0."""
    return f"({expr} if {d} else 0.0)"


def float_capable(block: Any) -> bool:
    """Whether every operation of dual array block ``block`` has a float form here."""
    for _, kind, func, operands, _ in block.ops:
        if kind == "binary" and func in _BINARY or kind == "neg":
            continue
        if kind == "pow" and _literal_power(operands[1]) is not None:
            continue
        if kind == "unary" and getattr(func, "__module__", None) == "math" and func in _UNARY:
            continue
        return False
    return bool(block.ops)


def _literal_power(text: str) -> int | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return int(value) if value.is_integer() and 2 <= value <= 4 else None


class DualFloatBlock:
    """The float form of one dual array block (its SSA analysis: ``DualArrayBlock``)."""

    def __init__(self, block: Any, gen: Any) -> None:
        self.block, self.gen = block, gen
        self.ran = gen.fresh("fb")
        self.divide = gen.const(safe_divide)
        self.tangent = {v: gen.fresh("ft") for v in block.inputs}  # each input's tangent, in a local
        self.tangent.update({local: f"{local}_d" for local, *_ in block.ops})
        for local, _ in block.attributes:
            self.tangent[local] = "0.0"
        # NumPy floats (x[i] of a float64 array) are computed as Python floats: the same IEEE
        # values at a third of the cost; a result that depends on one is one again (as in
        # float_blocks.py). Only for + - * / and -x, whose result types follow their operands'
        self.convert = all(kind in ("binary", "neg") for _, kind, *_ in block.ops)
        self.numpy = {v: (gen.fresh("nv"), gen.fresh("nt")) for v in block.inputs}
        self.originals = {v: gen.fresh("o") for v in block.inputs}
        self.value_flags: dict = {v: {self.numpy[v][0]} for v in block.inputs}
        self.tangent_flags: dict = {v: {self.numpy[v][1]} for v in block.inputs}
        for local, kind, func, operands, _ in block.ops:
            values = set().union(*(self.value_flags.get(o, set()) for o in operands))
            tangents = set().union(*(self.tangent_flags.get(o, set()) for o in operands))
            self.value_flags[local] = values
            self.tangent_flags[local] = tangents | values if func in (operator.mul, operator.truediv) else tangents

    def _t(self, operand: str) -> str:
        return self.tangent.get(operand, "0.0")  # a number's is zero

    def restore(self) -> str:
        """The line giving the inputs back their own values (NumPy floats), if they were converted."""
        if not (self.convert and self.block.inputs):
            return ""
        inputs = list(self.block.inputs)
        return f"{', '.join(inputs)}, = {', '.join(self.originals[v] for v in inputs)},"

    def typed(self, expr: str, flags: dict, local: str | None = None) -> str:
        """``expr``, a result, as a NumPy float when one of the inputs it depends on was one."""
        found = sorted(flags.get(local or expr, ()))
        if not self.convert or not found:
            return expr
        return f"(_f64({expr}) if {' or '.join(found)} else {expr})"

    # ------------------------------------------------------------------ forward

    def guard(self) -> str:
        gen, block = self.gen, self.block
        parts = []
        for v in block.inputs:
            atom = block.atoms[v]
            parts += [f"type({gen.primal(atom)}) in _FT", f"type({gen.tangent(atom)}) in _FT"]
        parts += block.function_guards + [f"type({path}) in _FT" for _, path in block.attributes]
        return " and ".join(parts)

    def forward(self) -> list[str]:
        """The lines run when the guard holds (in a ``try``)."""
        gen, block = self.gen, self.block
        lines = [f"{self.tangent[v]} = {gen.tangent(block.atoms[v])}" for v in block.inputs]
        if self.convert and block.inputs:
            inputs, tangents = list(block.inputs), [self.tangent[v] for v in block.inputs]
            flags = [f for v in inputs for f in self.numpy[v]]
            lines.append(f"{', '.join(self.originals[v] for v in inputs)}, = {', '.join(inputs)},")
            lines.append("; ".join(f"{self.numpy[v][0]} = type({v}) is not float; {self.numpy[v][1]} = type({t}) is not float"
                                   for v, t in zip(inputs, tangents)))
            self.any_numpy = " or ".join(flags)
            lines.append(f"if {self.any_numpy}: {', '.join(inputs + tangents)}, = "
                         f"{', '.join(f'float({n})' for n in inputs + tangents)},")
        lines += [f"{local} = {path}" for local, path in block.attributes]
        self.checked: list[str] = []
        for local, kind, func, operands, fname in block.ops:
            lines += self._forward_op(local, kind, func, operands, fname)
        checked = self._carriers(self.checked)
        if checked:  # strong zero: a product's tangent NaN (0 * inf?) runs the statements, by the rule
            total = self.gen.fresh("fs")
            for k in range(0, len(checked), 50):
                lines.append(f"{total} {'+=' if k else '='} {' + '.join(checked[k:k + 50])}")
            lines.append(f"if {total} != {total}: raise FloatingPointError")
        return lines

    def _carriers(self, checked: list[str]) -> list[str]:
        """The tangents whose sum is NaN whenever one of ``checked`` is: those of the operations
        no later operation reads that depend on one of ``checked``. Every tangent expression
        here is NaN when an operand's tangent is (``nan * b``, ``nan + x``, ``p * nan if nan``:
        a NaN is true), so a NaN reaches such a last reader (a chain of 400 products: one
        check, not 400 additions)."""
        tainted: set = {name[:-2] for name in checked}  # (each ``<local>_d``)
        read: set = set()
        for local, _, _, operands, _ in self.block.ops:
            if any(o in tainted for o in operands):
                tainted.add(local)
            read.update(operands)
        return [f"{local}_d" for local, *_ in self.block.ops if local in tainted and local not in read]

    def _forward_op(self, t: str, kind: str, func: Any, ops: list, fname: str) -> list[str]:
        a = ops[0]
        ad = self._t(a)
        if kind == "neg":
            return [f"{t} = -{a}; {t}_d = -{ad}"]
        if kind == "binary":
            b = ops[1]
            bd = self._t(b)
            if func is operator.add:
                return [f"{t} = {a} + {b}; {t}_d = {ad} + {bd}"]
            if func is operator.sub:
                return [f"{t} = {a} - {b}; {t}_d = {ad} - {bd}"]
            self.checked.append(f"{t}_d")  # a NaN here may be 0 * inf (checked at the end)
            if func is operator.mul:
                return [f"{t} = {a} * {b}; {t}_d = {ad} * {b} + {a} * {bd}"]
            return [f"{t} = {a} / {b}; {t}_d = ({ad} - {t} * {bd}) / {b}"]
        if kind == "pow":
            n = _literal_power(ops[1])
            first = f"{n}.0 * {a}" if n == 2 else f"{n}.0 * {a} ** {n - 1}"
            second = "2.0" if n == 2 else f"{n * (n - 1)}.0 * {a}" if n == 3 else f"{n * (n - 1)}.0 * {a} ** {n - 2}"
            return [f"{t} = {a} ** {n}; {t}_p = {first}; {t}_pp = {second}; {t}_d = {t}_p * {ad} if {ad} else 0.0"]
        first, second = (self._unary(d, a, t) for d in _UNARY[func])
        return [f"{t} = {fname}({a}); {t}_p = {first}; {t}_pp = {second}; {t}_d = {t}_p * {ad} if {ad} else 0.0"]

    def _unary(self, derivative: str, x: str, t: str) -> str:
        derivative = derivative.replace("_sdiv", self.divide)
        return re.sub(r"\b[XT]\b", lambda m: x if m.group(0) == "X" else t, derivative)

    # ------------------------------------------------------------------ reverse

    def reverse(self) -> list[str]:
        """The adjoints, after the residuals are popped (``pops``): the outputs' rdata in, the
        inputs' rdata out."""
        gen, block = self.gen, self.block
        # the inputs' and outputs' adjoints have names of their own; an operation's is taken when
        # first assigned from the names of adjoints already read for the last time (so a float
        # dies when its name is next assigned: thousands alive at once till the function returns
        # overflow CPython's float free list, and each then costs an allocator call to make and free)
        fixed = list(block.inputs) + [local for local in block.final.values() if local not in block.inputs]
        self.g = {name: gen.fresh("fg") for name in fixed}
        g, free = self.g, []
        lines, body, strong_body = [], [], []
        for var, local in block.final.items():
            r, rd = gen.rd(var), gen.rdd(var)
            lines.append(f"{g[local]}i = 0.0 if {r} is _NR else {r}; {g[local]}di = 0.0 if {rd} is _NR else {rd}; "
                         f"{r} = {rd} = _NR")
            body.append(f"{g[local]} = {g[local]}i; {g[local]}d = {g[local]}di")
        strong_body += body
        assigned = set(block.final.values())
        for local, kind, func, operands, _ in reversed(block.ops):
            if local not in assigned or not block.depends[local]:
                continue  # nothing reaches it, or computed from constants only
            for target, value, tangent, strong in self._contributions(local, kind, func, operands):
                if target not in block.depends or not block.depends[target]:
                    continue  # a number or a constant
                step = "+=" if target in assigned else "="
                assigned.add(target)
                if target not in g:
                    g[target] = free.pop() if free else gen.fresh("fg")
                body.append(f"{g[target]} {step} {value}; {g[target]}d {step} {tangent}")
                strong_body.append(f"{g[target]} {step} {strong[0]}; {g[target]}d {step} {strong[1]}")
            if local not in fixed:
                free.append(g[local])  # read for the last time
        lines += self._raising_again(body)
        results = [x for v in block.inputs if v not in block.constants and v in assigned for x in (g[v], f"{g[v]}d")]
        if results and strong_body != body:
            # strong zero: a NaN (0 * inf?) reaches an input's adjoint whenever one came out; then
            # the adjoints again with every product by the strong-zero rule (compiled when needed)
            total = gen.fresh("fs")
            lines.append(f"{total} = {' + '.join(results)}")
            lines.append(f"if {total} != {total}:")
            lines.append(f"    {', '.join(results)}, = {self._strong_call(strong_body, results)}")
        for v in block.inputs:
            if v in block.constants or v not in assigned:
                continue
            r, rd = gen.rd(v), gen.rdd(v)
            lines.append(f"{r} = {g[v]} if {r} is _NR else {r} + {g[v]}; {rd} = {g[v]}d if {rd} is _NR else {rd} + {g[v]}d")
        self.reverse_lines = lines
        return lines

    def _raising_again(self, body: list) -> list[str]:
        """``body``, run again on NumPy floats where the Python floats it computes with raise."""
        block = self.block
        if not (self.convert and block.inputs and any(func is operator.truediv for _, _, func, _, _ in block.ops)):
            return body
        # Python floats raise where NumPy's give inf (a quotient by an underflowed b * b): then
        # again on NumPy floats, as the statements would compute
        return ["for _k in range(2):", "    try:"] + ["        " + b for b in body] + [
            "        break", "    except (ZeroDivisionError, OverflowError):",
            f"        if _k or not ({self.any_numpy}):", "            raise", "        " + self._as_numpy(body)]

    def _strong_call(self, body: list, results: list) -> str:
        """The call of a function running ``body`` (compiled on its first call) on the names it
        reads, returning ``results``."""
        names = sorted(set(_WORD.findall("\n".join(body))) & (self._defined() | self._incoming()))
        source = [f"def _strong({', '.join(names)}):"] + ["    " + line for line in self._raising_again(body)]
        source.append(f"    return {', '.join(results)},")
        namespace = {"_math": math, "_f64": np.float64, self.divide: safe_divide}
        function = self.gen.const(CompiledWhenCalled("\n".join(source) + "\n", namespace, self.block))
        return f"{function}({', '.join(names)})"

    def _incoming(self) -> set:
        return {f"{self.g[local]}{suffix}" for local in self.block.final.values() for suffix in ("i", "di")}

    def _contributions(self, t: str, kind: str, func: Any, ops: list) -> list[tuple]:
        """``(operand, cotangent, its tangent, (both by the strong-zero rule))`` per operand, in
        the templates' expressions (``dual_templates.py``) with this operation's names."""
        g, a = self.g[t], ops[0]
        names = {"_g": g, "_gd": f"{g}d", "_a": a, "_ad": self._t(a), "_x": a, "_xd": self._t(a), "_t": t}
        if kind == "binary":
            names.update({"_b": ops[1], "_bd": self._t(ops[1])})
        name = lambda text: _TEMPLATE_NAMES.sub(lambda m: names[m.group(1)], text)  # noqa: E731
        if kind == "neg":
            return [(a, name("-_g"), name("-_gd"), (name("-_g"), name("-_gd")))]
        if kind == "binary":
            b = ops[1]
            if func is operator.add:
                same = (name("_g"), name("_gd"))
                return [(a, *same, same), (b, *same, same)]
            if func is operator.sub:
                return [(a, name("_g"), name("_gd"), (name("_g"), name("_gd"))),
                        (b, name("-_g"), name("-_gd"), (name("-_g"), name("-_gd")))]
            if func is operator.mul:
                return [(a, name("_g * _b"), name("_gd * _b + _g * _bd"),
                         (name(_nz("_g", "_g * _b")), name(f"{_nz('_gd', '_gd * _b')} + {_nz('_g and _bd', '_g * _bd')}"))),
                        (b, name("_g * _a"), name("_gd * _a + _g * _ad"),
                         (name(_nz("_g", "_g * _a")), name(f"{_nz('_gd', '_gd * _a')} + {_nz('_g and _ad', '_g * _ad')}")))]
            return [(a, name("_g / _b"), name("(_gd - _g * _bd / _b) / _b"),
                     (name(_nz("_g", "_g / _b")), name(f"{_nz('_gd', '_gd / _b')} - {_nz('_g and _bd', '_g * _bd / (_b * _b)')}"))),
                    (b, name("-_g * _a / (_b * _b)"), name("(2.0 * _g * _a * _bd / _b - _gd * _a - _g * _ad) / (_b * _b)"),
                     (name(_nz("_g", "-_g * _a / (_b * _b)")),
                      name(f"{_nz('_g and _bd', '2.0 * _g * _a * _bd / (_b * _b * _b)')} - {_nz('_gd', '_gd * _a / (_b * _b)')}"
                           f" - {_nz('_g and _ad', '_g * _ad / (_b * _b)')}")))]
        # a ** n and math functions: the partial and its derivative, kept by the forward pass
        p, pp, xd = f"{t}_p", f"{t}_pp", self._t(a)
        return [(a, f"{g} * {p}", f"{g}d * {p} + {g} * {pp} * {xd}",
                 (_nz(g, f"{g} * {p}"), f"{_nz(f'{g}d', f'{g}d * {p}')} + {_nz(f'{g} and {xd}', f'{g} * {pp} * {xd}')}"))]

    def _as_numpy(self, body: list) -> str:
        """The line making the residuals ``body`` reads NumPy floats."""
        used = set(_WORD.findall("\n".join(body))) & self._defined()
        names = sorted(used - {f for pair in self.numpy.values() for f in pair})
        return f"{', '.join(names)}, = {', '.join(f'_f64({n})' for n in names)}," if names else "pass"

    def _defined(self) -> set:
        block = self.block
        defined = set(block.inputs) | set(self.tangent.values()) | {local for local, _ in block.attributes}
        defined |= {f for pair in self.numpy.values() for f in pair}
        for local, *_ in block.ops:
            defined |= {local, f"{local}_d", f"{local}_p", f"{local}_pp"}
        return defined

    def residuals(self) -> list[str]:
        """The forward pass's names the reverse reads."""
        used = set(_WORD.findall("\n".join(self.reverse_lines)))
        return sorted(self._defined() & used)


class CompiledWhenCalled:
    """A generated function compiled on its first call: a float block's strong-zero adjoints,
    which only a NaN runs (most programs never compile them)."""

    def __init__(self, source: str, namespace: dict, block: Any) -> None:
        self.source, self.namespace, self.lines = source, namespace, (block.first_line, block.last_line)
        self.function: Any = None

    def __call__(self, *args: Any) -> Any:
        if self.function is None:
            first, last = self.lines
            code = compile(self.source, f"<yuebing strong zero of lines {first}-{last}>", "exec")
            exec(code, self.namespace)  # noqa: S102 - our own generated code
            self.function = self.namespace["_strong"]
        return self.function(*args)

    def __repr__(self) -> str:
        return f"<strong-zero adjoints of lines {self.lines[0]}-{self.lines[1]}, compiled when called>"


def emit_float_forward(gen: Any, fb: DualFloatBlock, out: list, indent: int) -> None:
    """The block's float form, then the ``if`` its other forms go in."""
    block, line = fb.block, fb.block.first_line
    forward = fb.forward()
    fb.reverse()  # (the residuals are what it reads)
    residuals = fb.residuals()
    gen.emit(out, indent, f"{fb.ran} = None", line)
    gen.emit(out, indent, f"if {fb.guard()}:  # dual float block: lines {line}-{block.last_line}", line)
    gen.emit(out, indent + 1, "try:", line)
    for text in forward:
        gen.emit(out, indent + 2, text, line)
    gen.emit(out, indent + 1, "except (ArithmeticError, ValueError):  # as the statements raise (or, on NumPy floats, not)", line)
    gen.emit(out, indent + 2, fb.restore() or "pass", line)
    gen.emit(out, indent + 1, "else:", line)
    pushed = ", ".join(residuals)  # (Python floats: the reverse computes with them too)
    gen.emit(out, indent + 2, f"_push(({pushed}{',' if residuals else ''})); _push(_DFASTFB); {fb.ran} = True", line)
    if fb.restore():
        gen.emit(out, indent + 2, fb.restore(), line)
    for var, local in block.final.items():
        gen.emit(out, indent + 2, f"{var} = {fb.typed(local, fb.value_flags)}; {gen.dd(var)} = "
                                  f"{fb.typed(fb._t(local), fb.tangent_flags, local)}; {gen.fd(var)} = {gen.fdd(var)} = _NF", line)
    gen.emit(out, indent, f"if {fb.ran} is None:", line)


def emit_float_reverse(gen: Any, fb: DualFloatBlock, out: list, indent: int) -> None:
    """The reverse of the float form, then the ``else:`` the other forms' reverse goes in."""
    block, line = fb.block, fb.block.last_line
    residuals = fb.residuals()
    gen.emit(out, indent, f"if _tape[-1] is _DFASTFB:  # undo the dual float block at lines {block.first_line}-{line}", line)
    gen.emit(out, indent + 1, f"_pop(); {', '.join(residuals)}{',' if residuals else ''} = _pop()" if residuals
             else "_pop(); _pop()", line)
    for text in fb.reverse_lines:
        gen.emit(out, indent + 1, text, line)
    gen.emit(out, indent, "else:", line)


__all__ = ["DualFloatBlock", "emit_float_forward", "emit_float_reverse", "float_capable"]
