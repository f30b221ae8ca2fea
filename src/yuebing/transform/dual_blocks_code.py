"""The code of one dual array block (``dual_blocks.py``): its SSA form, the forward pass
(values, tangents, partials and their tangents) and the reverse pass (cotangents and their
tangents, delivered into the inputs' fdata or rdata).

Per operation ``t = f(a, b)`` the forward pass keeps ``t``, its tangent ``t_d`` and, for
functions of one argument and powers, the partial ``t_p`` and its tangent ``t_pd``; the
reverse pass takes the cotangent ``g`` of ``t`` and its tangent ``gd`` to each operand as

    a_bar += g p;    a_bar_d += gd p + g p_d

with the products of ``_m`` (plain, or by the strong-zero rule on the second run) and ``None``
for zero (for sin and cos, whose f'' is -f, ``t_pd`` holds ``ad f`` and the reverse subtracts
``g p_d``: no negated array is made). An adjoint's first contribution is assigned, not added to
None (``first_contributions``). A contribution from an array to a float input is summed (``_dfit``). Where the block's
arrays broadcast (``_dual_inputs`` gives no size), each binary operation's contributions are
fitted to their operand's shape instead (``_dfitted``): every cotangent then has its value's shape
(or is a number standing for an array of it), and tangents broadcast to their value's.
"""
from __future__ import annotations

import operator
import re
from collections import Counter
from typing import Any, Callable

from ..ir import nodes as ir
from .array_blocks import _BINARY
from .constant_arrays import constant_inputs
from .dual_blocks import DUAL_UNARY, dual_classify
from .float_blocks import names_read

_WORD = re.compile(r"\b_?[A-Za-z_]\w*\b")
_PRODUCT_TANGENT = re.compile(r"(\w+)_d = _dtimes\((\w+), (\w+)\)")  # a unary operation's, a * b's of one tangent
_MUL_TANGENT = re.compile(r"(\w+)_d = _dadd\(_dtimes\((\w+), (\w+)\), _dtimes\((\w+), (\w+)\)\)")  # a * b's
_SUM_TANGENT = re.compile(r"(\w+)_d = _dsum_t\((\w+)_d, \2\)")  # np.sum's
_KRON_TANGENT = re.compile(r"(\w+)_d = _dkron_t\((\w+), (\w+), (\w+), (\w+)\)")  # kron's (product blocks)
_PLACEHOLDER = re.compile(r"@fit\d+@")


def _finite_nonzero(text: str) -> bool:
    """Whether ``text`` is a number literal neither zero nor infinite (a product by it is zero
    exactly where the other factor is, so the strong-zero rule changes nothing)."""
    try:
        value = float(text)
    except ValueError:
        return False
    return value != 0 and value - value == 0


class DualArrayBlock:
    """The SSA form of one block and the code generated for it."""

    def __init__(self, stmts: list, gen: Any) -> None:
        self.gen, self.fresh = gen, gen.fresh
        self.first_line, self.last_line = stmts[0].line, stmts[-1].line
        self.inputs: list[str] = []  # variables (and global names) read before the block assigns them
        self.atoms: dict[str, ir.Atom] = {}
        self.constants: set[str] = set()  # module globals and attributes: no derivative
        self.marked = constant_inputs(stmts)  # new constant arrays only the block reads: none either
        self.attributes: list[tuple[str, str]] = []  # (local, module attribute path)
        self.function_guards: list[str] = []
        self.ops: list[tuple[str, str, Any, list[str], str]] = []  # (local, kind, function, operands, its name)
        current: dict[str, str] = {}
        # product blocks (dual_product_blocks.py): reverse lines run once after the loop of the
        # product rules, and the adjoints they read, NaN-checked with the inputs' in that loop
        self.after_loop: list[str] = []
        self.checked_too: list[str] = []
        for s in stmts:
            kind, func = self._classify(s)
            operands = [self._operand(a, current) for a in s.args]
            if not isinstance(s.func, ir.Const):
                guard = f"{gen.primal(s.func)} is {gen.const(func)}"
                if guard not in self.function_guards:
                    self.function_guards.append(guard)
            local = self.fresh("b")
            self.ops.append((local, kind, func, operands, gen.primal(s.func)))
            current[s.target] = local
        read = names_read(gen.fn.body, {id(s) for s in stmts})
        # values read after the block (or by the block before it assigns them: a loop's next
        # iteration) are handed on
        self.final = {v: loc for v, loc in current.items() if loc != v and (v in read or v in self.inputs)}
        self.tangent = {v: self.fresh("a") for v in self.inputs}  # None where zero
        self.tangent.update({local: f"{local}_d" for local, *_ in self.ops})
        self.tangent.update({local: "None" for local, _ in self.attributes})
        self.active = {v: self.fresh("act") for v in self.inputs}
        self.array = {v: self.fresh("arr") for v in self.inputs}
        self.size, self.given, self.ran = self.fresh("n"), self.fresh("dk"), self.fresh("db")
        self.depends = {v: ({v} if v not in self.constants else set()) for v in self.inputs}
        self.arrayness = {v: {v} for v in self.inputs}
        for local, kind, _, operands, _ in self.ops:
            # a comparison's mask carries no derivative; a matrix product is an array of a shape
            # of its own, a source of arrayness like an input (dual_product_blocks.py)
            self.depends[local] = set() if kind == "compare" else \
                set().union(*(self.depends.get(o, set()) for o in operands))
            self.arrayness[local] = set() if kind == "sum" else {local} if kind in ("matmul", "kron") else \
                set().union(*(self.arrayness.get(o, set()) for o in operands))
        self.masks = {local for local, kind, *_ in self.ops if kind == "compare"}

    def _classify(self, s: object) -> tuple[str, Any]:
        return dual_classify(s, self.gen.integers, self.gen._resolve)

    def _operand(self, a: ir.Atom, current: dict) -> str:
        gen = self.gen
        if isinstance(a, ir.Var) or isinstance(a, ir.Global) and "." not in a.path:
            name = gen.primal(a)
            if name not in current:
                current[name] = name
                self.inputs.append(name)
                self.atoms[name] = a
                if isinstance(a, ir.Global) or name in self.marked:
                    self.constants.add(name)
            return current[name]
        if isinstance(a, ir.Global):  # a module attribute (np.pi): a constant read once
            local = self.fresh("k")
            self.attributes.append((local, a.path))
            return local
        return gen.primal(a)  # a number

    def _t(self, operand: str) -> str:
        return self.tangent.get(operand, "None")  # a number's is zero

    # ------------------------------------------------------------------ forward

    def forward(self) -> tuple[str, list[str], list[str]]:
        """``(guard, lines run when it holds (in a try), lines run when they ran)``."""
        gen = self.gen
        constant = tuple(v in self.constants for v in self.inputs)
        quads = ", ".join(f"{gen.primal(self.atoms[v])}, {gen.fdata(self.atoms[v])}, {gen.tangent(self.atoms[v])}, "
                          f"{gen.fdata_tangent(self.atoms[v])}" for v in self.inputs)
        some_array = " or ".join(f"type({v}) is _ND" for v in self.inputs)
        # a module attribute read in the block (np.pi) must be a number: an array would broadcast
        # with the block's arrays unchecked
        numbers = [f"type({path}) in _FT" for _, path in self.attributes]
        guard = " and ".join([f"({some_array})", f"({self.given} := {self._guard_call(gen.const(constant), quads)}) is not None"]
                             + self.function_guards + numbers)
        unpacked = [self.tangent[v] for v in self.inputs] + [self.active[v] for v in self.inputs] \
            + [self.array[v] for v in self.inputs] + [self.size]
        body = [f"{', '.join(unpacked)}, = {self.given}"]
        body += [f"{local} = {path}" for local, path in self.attributes]
        # partials' tangents taken plainly; the reverse takes them again by the strong-zero rule
        # in its strong-zero pass (``_reverse_body``)
        self.strong_partials: list[tuple[str, str, str]] = []  # (partial's tangent, tangent, f'')
        self.negated: set[str] = set()  # values whose t_pd is the partial's tangent negated
        for local, kind, func, operands, fname in self.ops:
            body += self._forward_op(local, kind, func, operands, fname)
        finish = self._finish()
        return guard, self._fused_sums(body, finish), finish

    def _guard_call(self, constant: str, quads: str) -> str:
        """The call that checks the inputs and gives their tangents, flags and the size."""
        return f"_dual_inputs({constant}, {quads})"

    def _size_of(self, value: str) -> str:
        """The number of elements of the arrays ``value`` meets elementwise (None where they broadcast)."""
        return self.size

    def _broadcasts(self) -> str:
        """Whether some of the block's arrays broadcast (the reverse then fits contributions)."""
        return f"{self.size} is None"

    def _fused_sums(self, body: list[str], finish: list[str]) -> list[str]:
        """``body`` where a tangent read by nothing but the tangent of ``np.sum(t)`` is not made:
        for ``t_d = _dtimes(ad, t_p)`` (a function of one argument, a power) that tangent is the
        dot product of ``ad`` and ``t_p`` (``_dsum_dot``), for ``t = a * b`` the sum of two, one
        pass each and no array (the last operation of an elementwise loss)."""
        uses = Counter(w for line in body + finish + self.reverse_lines + self.after_loop for w in _WORD.findall(line))
        sums: dict[str, tuple[int, str]] = {}  # t -> (line of t_d, the sum of t_d as dot products)
        for i, line in enumerate(body):
            if m := _PRODUCT_TANGENT.fullmatch(line):
                sums[m.group(1)] = (i, f"_dsum_dot({m.group(2)}, {m.group(3)}, {m.group(1)})")
            elif m := _MUL_TANGENT.fullmatch(line):
                t, ad, b, bd, a = m.groups()
                sums[t] = (i, f"_dadd(_dsum_dot({ad}, {b}, {t}), _dsum_dot({bd}, {a}, {t}))")
            elif m := _KRON_TANGENT.fullmatch(line):  # sum(kron(ad, b)) = sum(ad) sum(b): no kron of tangents
                sums[m.group(1)] = (i, f"_dkron_sum_t({m.group(2)}, {m.group(3)}, {m.group(4)}, {m.group(5)})")
        fused: list = list(body)
        for i, line in enumerate(body):
            m = _SUM_TANGENT.fullmatch(line)
            if m is None or m.group(2) not in sums or uses[f"{m.group(2)}_d"] != 2:
                continue
            j, total = sums[m.group(2)]
            fused[j] = None
            fused[i] = f"{m.group(1)}_d = {total}"
        return [line for line in fused if line is not None]

    def _forward_op(self, t: str, kind: str, func: Any, ops: list, fname: str) -> list[str]:
        a = ops[0]
        ad = self._t(a)
        if kind == "binary":
            b = ops[1]
            bd = self._t(b)
            value = f"{t} = {a} {_BINARY[func]} {b}"
            tangent = {operator.add: f"_dadd({ad}, {bd})", operator.sub: f"_dsub({ad}, {bd})",
                       operator.mul: _product_tangent(a, ad, b, bd),
                       operator.truediv: f"_ddiv_t({ad}, {bd}, {t}, {b})"}[func]
            return [value, f"{t}_d = {tangent}"]
        if kind == "neg":
            return [f"{t} = -{a}", f"{t}_d = _dneg({ad})"]
        if kind == "sum":
            # np.sum is guarded (function_guards): its reduction itself, without np.sum's wrapper
            return [f"{t} = _dreduce({a}, None)", f"{t}_d = _dsum_t({ad}, {a})"]
        if kind == "pow":
            c = float(ops[1])
            value = f"{t} = {a} ** {ops[1]}"
            if c == 0:
                return [value, f"{t}_d = {t}_p = {t}_pd = None"]
            first = "1.0" if c == 1 else f"2.0 * {a}" if c == 2 else f"{c!r} * {a} ** {c - 1!r}"
            second = None if c == 1 else "2.0" if c == 2 else f"{c * (c - 1)!r} * {a} ** {c - 2!r}"
        else:
            first, second = (d.replace("X", a).replace("T", t) for d in DUAL_UNARY[func])
            value = f"{t} = {fname}({a})"
        needed = " or ".join([f"{ad} is not None"] * (ad != "None") + [self._active(a)] * bool(self.depends.get(a)))
        if first in (t, "1.0") or not needed:  # free, or read by nothing (no tangent, no cotangent)
            partial = first if needed else "None"
        else:
            partial = f"{first} if {needed} else None"
        lines = [value, f"{t}_p = {partial}", f"{t}_d = _dtimes({ad}, {t}_p)"]
        if second is None:
            lines.append(f"{t}_pd = None")
        elif second == t:  # exp: the partial's tangent is the value's
            lines.append(f"{t}_pd = {t}_d")
        elif _finite_nonzero(second):  # (x ** 2: a plain product, which no NaN check can change)
            lines.append(f"{t}_pd = _dtimes({ad}, {second})")
        elif second == f"-{t}":  # sin, cos (f'' = -f): ad * f, which the reverse subtracts (no negation)
            lines.append(f"{t}_pd = None if {ad} is None else {ad} * {t}")
            self.strong_partials.append((f"{t}_pd", ad, t))
            self.negated.add(t)
        else:
            # by the strong-zero rule: where the tangent is 0 so is this, even if f'' is infinite
            # (x ** 1.5 at 0: f' is finite, so no NaN reaches the tangents the block hands on);
            # read only by the reverse, so plainly here and again by the rule in the reverse's
            # strong-zero pass, which a NaN here brings about (``_reverse_body``)
            lines.append(f"{t}_pd = None if {ad} is None else {ad} * ({second})")
            self.strong_partials.append((f"{t}_pd", ad, second))
        return lines

    def _finish(self) -> list[str]:
        """After the block ran: the NaN check of the tangents handed on (then one by one), the
        residuals pushed, the results written back."""
        gen = self.gen
        handed = [self._t(local) for local in self.final.values()]
        self.outputs = [(self.fresh("of"), self.fresh("ofd")) for _ in self.final]
        self.fits: dict[str, str] = {}  # placeholder -> its _dfitted call (read by broadcast blocks only)
        self.entry = [(self.fresh("ef"), self.fresh("efd")) for _ in self.inputs]
        lines = self._reverse_body()
        # values the reverse reads only to fit contributions are pushed by broadcast blocks only
        shaping = set(_WORD.findall("\n".join(self.fits.values()))) - set(_WORD.findall("\n".join(lines + self.after_loop)))
        self.reverse_lines = [_PLACEHOLDER.sub(lambda m: self.fits[m.group(0)], line) for line in lines]
        defined = set(self.tangent.values()) | {f"{local}_p" for local, *_ in self.ops} \
            | {f"{local}_pd" for local, *_ in self.ops} | {local for local, *_ in self.ops} \
            | set(self.inputs) | {local for local, _ in self.attributes}
        used = set(_WORD.findall("\n".join(self.reverse_lines + self.after_loop)))
        self.residuals = sorted((defined & used) - {"None"})
        lines = [f"if not _dual_nan({', '.join(handed)}):" if handed else "if True:"]
        taken = f"({', '.join(self.tangent[v] for v in self.inputs)},)" if self.inputs else "()"  # (constants only)
        outputs = []
        for (var, local), (of, ofd) in zip(self.final.items(), self.outputs):
            # a comparison's mask handed on has no fdata and the zero tangent its rule gives
            outputs.append(f"{of} = {ofd} = _NF" if local in self.masks else f"{of} = _dout_f({local}); {ofd} = _dout_f({local})")
        pushed = [gen.fdata(self.atoms[v]) + ", " + gen.fdata_tangent(self.atoms[v]) for v in self.inputs] \
            + [self.active[v] for v in self.inputs] + [self.array[v] for v in self.inputs] + [self.size] \
            + [f"{r} if {self._broadcasts()} else None" if r in shaping else r for r in self.residuals] \
            + [f"{of}, {ofd}" for of, ofd in self.outputs]
        body = outputs + [f"_push(({', '.join(pushed)},)); _push(_DFASTAB); {self.ran} = True"]
        for (var, local), (of, ofd) in zip(self.final.items(), self.outputs):
            tangent = f"_dzt({local})" if local in self.masks else f"_dout_t({self._t(local)}, {local}, {taken})"
            body.append(f"{var} = {local}; {gen.fd(var)} = {of}; {gen.dd(var)} = {tangent}; {gen.fdd(var)} = {ofd}")
        return lines + ["    " + line for line in body]

    # ------------------------------------------------------------------ reverse

    def _reverse_body(self) -> list[str]:
        """The adjoint steps, inside a loop over the product rules (plain, then strong zero)."""
        g = {name: self.fresh("g") for name in list(self.inputs) + [local for local, *_ in self.ops]}
        gd = {name: f"{g[name]}d" for name in g}
        self.adjoints = (g, gd)
        incoming = [(local, of, ofd, var) for (var, local), (of, ofd) in zip(self.final.items(), self.outputs)]
        self.incoming = [(self.fresh("gi"), self.fresh("gid"), local, of, ofd, var) for local, of, ofd, var in incoming]
        reset = " = ".join(list(g.values()) + list(gd.values())) + " = None"
        lines = [reset] + [f"{g[local]} = {gi}; {gd[local]} = {gid}" for gi, gid, local, *_ in self.incoming]
        if self.strong_partials:  # (the forward took them plainly: a NaN there is one here too)
            lines.append("if _m is _DSTRONG_TIMES:  # the partials' tangents by the strong-zero rule too")
            lines += [f"    {pd} = None if {ad} is None else _dstrong({ad}, {second})"
                      for pd, ad, second in self.strong_partials]
        for local, kind, func, operands, _ in reversed(self.ops):
            if not self.depends[local]:
                continue  # computed from constants only
            step = self._adjoint_step(local, kind, func, operands, g, gd)
            if step:
                lines.append(f"if {g[local]} is not None or {gd[local]} is not None:")
                lines += ["    " + line for line in step]
        checked = [x for v in self.inputs if v not in self.constants for x in (g[v], gd[v])]
        checked += [x for v in self.checked_too for x in (g[v], gd[v])]  # (products' adjoints used after the loop)
        lines.append(f"if not _dual_nan({', '.join(checked)}): break" if checked else "break")
        return lines[:1] + first_contributions(lines[1:], set(g.values()) | set(gd.values()))

    def _active(self, name: str) -> str:  # (a module attribute such as np.pi depends on nothing)
        return " or ".join(self.active[v] for v in sorted(self.depends.get(name, ()))) or "False"

    def _arrayish(self, name: str) -> str:
        return " or ".join(self.array[v] for v in sorted(self.arrayness.get(name, ()))) or "False"

    def _adjoint_step(self, t: str, kind: str, func: Any, ops: list, g: dict, gd: dict) -> list[str]:
        G, GD = g[t], gd[t]
        shared: list[str] = []
        if kind == "binary":
            a, b = ops
            ad, bd = self._t(a), self._t(b)
            if func is operator.add:
                parts = [(a, G, GD), (b, G, GD)]
            elif func is operator.sub:
                parts = [(a, G, GD), (b, f"_dneg({G})", f"_dneg({GD})")]
            elif func is operator.mul:
                parts = [(a, f"_m({G}, {b})", f"_dadd(_m({GD}, {b}), _m({G}, {bd}))"),
                         (b, f"_m({G}, {a})", f"_dadd(_m({GD}, {a}), _m({G}, {ad}))")]
            else:  # t = a / b: q = g / b goes to a, -q t to b
                q, qd = self.fresh("q"), self.fresh("qd")
                shared = [f"{q} = _q({G}, {b}); {qd} = _q(_dsub({GD}, _m({q}, {bd})), {b})"]
                parts = [(a, q, qd), (b, f"_dneg(_m({q}, {t}))", f"_dneg(_dadd(_m({qd}, {t}), _m({q}, {t}_d)))")]
        elif kind in ("neg",):
            parts = [(ops[0], f"_dneg({G})", f"_dneg({GD})")]
        elif kind == "sum":
            parts = [(ops[0], G, GD)]
        else:  # unary, pow: the partial and its tangent
            combine = "_dsub" if t in self.negated else "_dadd"
            parts = [(ops[0], f"_m({G}, {t}_p)", f"{combine}(_m({GD}, {t}_p), _m({G}, {t}_pd))")]
        body = []
        for target, value, tangent in parts:
            if target not in self.depends or not self.depends[target]:
                continue  # a number or a constant
            raw_value, raw_tangent = value, tangent
            reduce = "False"
            if kind != "sum" and not self.arrayness[t] <= self.arrayness[target]:
                target_array = self._arrayish(target)
                reduce = f"({self._arrayish(t)})" + (f" and not ({target_array})" if target_array != "False" else "")
            if reduce != "False":
                value, tangent = (f"_dfit({e}, {reduce}, {self._size_of(t)})" for e in (value, tangent))
            elif kind == "sum" and not self.arrayness[target] == set():
                pass  # a sum's cotangent: a float standing for the array
            if kind == "binary":  # (the other kinds keep their operand's shape)
                value, tangent = (self._broadcast_fit(fit, raw, t, target)
                                  for fit, raw in ((value, raw_value), (tangent, raw_tangent)))
            ta, tad = g[target], gd[target]
            body.append(f"if {self._active(target)}: {ta} = _dadd({ta}, {value}); {tad} = _dadd({tad}, {tangent})")
        return shared + body if body else []

    def _broadcast_fit(self, same_shape: str, contribution: str, value: str, operand: str) -> str:
        """A binary operation's contribution to an operand: as for arrays of one shape, or, where
        the block's arrays broadcast (its size None), fitted to the operand's shape."""
        size = self._size_of(value)
        if size.isdigit():  # floats only (product blocks): nothing broadcasts
            return same_shape
        placeholder = f"@fit{len(self.fits)}@"
        self.fits[placeholder] = f"_dfitted({contribution}, {value}, {operand})"
        return f"({same_shape} if {size} is not None else {placeholder})"

    def reverse(self) -> list[str]:
        gen = self.gen
        g, gd = self.adjoints
        popped = [f"{ef}, {efd}" for ef, efd in self.entry] + [self.active[v] for v in self.inputs] \
            + [self.array[v] for v in self.inputs] + [self.size] + self.residuals \
            + [f"{of}, {ofd}" for of, ofd in self.outputs]
        lines = [f"{', '.join(popped)}, = _pop()"]
        for gi, gid, local, of, ofd, var in self.incoming:
            r, rd = gen.rd(var), gen.rdd(var)
            lines.append(f"{gi} = _din({of}, {r}); {gid} = _din({ofd}, {rd}); {r} = {rd} = _NR")
        lines.append("with _errstate(all='ignore'):")
        lines.append("    for _m, _q in _DPRODUCTS:  # plainly, then (a NaN: 0 * inf?) by the strong-zero rule")
        lines += ["        " + line for line in self.reverse_lines]
        lines += ["    " + line for line in self.after_loop]
        for v, (ef, efd) in zip(self.inputs, self.entry):
            if v in self.constants:
                continue
            a, ad, r, rd = g[v], gd[v], gen.rd(v), gen.rdd(v)
            lines.append(f"if {self.array[v]}:")
            lines.append(f"    if {ef} is not _NF and {a} is not None: {ef} += {a}")
            lines.append(f"    if {efd} is not _NF and {ad} is not None: {efd} += {ad}")
            lines.append("else:")
            lines.append(f"    if {a} is not None: {r} = {a} if {r} is _NR else {r} + {a}")
            lines.append(f"    if {ad} is not None: {rd} = {ad} if {rd} is _NR else {rd} + {ad}")
        return lines


def _product_tangent(a: str, ad: str, b: str, bd: str) -> str:
    """The tangent of ``a * b``: ``ad b + bd a``, one term where a tangent is known to be zero
    (a number, a constant: no call to add None)."""
    if ad == "None" or bd == "None":
        return "None" if ad == bd else f"_dtimes({ad}, {b})" if bd == "None" else f"_dtimes({bd}, {a})"
    return f"_dadd(_dtimes({ad}, {b}), _dtimes({bd}, {a}))"


def first_contributions(lines: list[str], adjoints: set) -> list[str]:
    """``lines`` (after the loop's reset of every adjoint to None) where an adjoint's first
    contribution ``g = _dadd(g, c)`` is ``g = c``: ``g`` is None there (the lines run in their
    order, an ``if`` only skipping some), and ``_dadd(None, c)`` is ``c`` itself."""
    assigned: set = set()
    out = []
    for line in lines:
        pieces, start = [], 0
        for m in _ASSIGNMENT.finditer(line):
            name = m.group(1)
            if name not in adjoints:
                continue
            opening = f"_dadd({name}, "
            if name not in assigned and line.startswith(opening, m.end()) and m.end() >= start:
                close = _closing(line, m.end() + len("_dadd"))
                pieces += [line[start:m.end()], line[m.end() + len(opening):close]]
                start = close + 1
            assigned.add(name)
        out.append("".join(pieces) + line[start:])
    return out


_ASSIGNMENT = re.compile(r"\b(_\w+) = (?!=)")


def _closing(text: str, opening: int) -> int:
    """The index of the parenthesis closing the one at ``opening``."""
    depth = 0
    for k in range(opening, len(text)):
        depth += {"(": 1, ")": -1}.get(text[k], 0)
        if depth == 0:
            return k
    raise ValueError(f"unbalanced parentheses in {text!r}")


def emit_forward(gen: Any, block: DualArrayBlock, out: list, indent: int) -> None:
    """The block's forward code, up to the ``if`` its statement-by-statement fallback goes in."""
    guard, body, finish = block.forward()
    line = block.first_line
    gen.emit(out, indent, f"{block.ran} = None", line)
    gen.emit(out, indent, f"if {guard}:  # dual array block: lines {line}-{block.last_line}", line)
    gen.emit(out, indent + 1, "try:", line)
    for text in body:
        gen.emit(out, indent + 2, text, line)
    gen.emit(out, indent + 1, "except Exception:  # Python floats raise where NumPy gives inf: one by one", line)
    gen.emit(out, indent + 2, "pass", line)
    gen.emit(out, indent + 1, "else:", line)
    for text in finish:
        gen.emit(out, indent + 2, text, line)
    gen.emit(out, indent, f"if {block.ran} is None:", line)
