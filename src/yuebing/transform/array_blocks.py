"""Array blocks: straight-line runs of elementwise array arithmetic compiled as one unit (an
optimisation of the reverse generator, like float blocks; DESIGN §5-6).

Statement by statement, every array operation gets a zero-filled fdata buffer in the forward pass
that its consumers accumulate their cotangents into, and the reverse pass adds each operation's
contribution into its operands' buffers: about three passes over memory per operation on top of
the primal's one. A run of elementwise statements -- ``+ - * /``, ``-a``, ``a ** c``, NumPy and
``math`` functions of one argument, ``np.sum(a)`` -- is instead guarded once: when its inputs are
float64 arrays of one shape and floats, the forward pass runs the NumPy code alone (SSA style) and
pushes one tuple of what the reverse pass needs, and the reverse pass is straight-line adjoint
code whose cotangents are values: nothing is zero-filled except the fdata of the arrays the block
hands on, and cotangents of inputs that carry no derivative (constant data such as fixed
observations) are never computed. Otherwise the statement-by-statement code runs.

Reverse mode's blocks also take products of two matrices (``a @ b``, ``np.matmul``, ``np.dot``),
``np.kron`` of two arrays of one rank (its adjoint contracted with the other factor; a sum's
float adjoint gives the float ``g sum(other)``, no pass over the kron: ``kron_cotangent``) and
comparisons (``0 <= h``: masks, no derivative), so a layer ``h = w @ x; h = h * (0 <= h)``
needs no fdata for ``h`` at all. A block with products is guarded by ``product_shapes`` (each
operand a float64 matrix, the two chaining), takes strong-zero products from the start (no second
run) and adds each input's contributions as they come: a product's by gemm straight into the
input's fdata (``buffers.add_matmul``). Generated code:

    if (type(x) is _ND or type(mu) is _ND) and (_shape := _array_shapes((x, mu,))) is not None \
            and np.log is _numpy_log:  # array block: lines 3-5
        _b1 = np.log(x)
        _b2 = _b1 - mu
        ...
        _push((x_f, _b2, ...)); _push(_FASTAB)
    else:
        <statement by statement>
        _push(_SLOWAB)
"""
from __future__ import annotations

import math
import operator
import re
from collections import Counter
from typing import Any, Callable

import numpy as np

from ..ir import nodes as ir
from ..rules.declare import SMALL, has_nan
from ..rules.linalg.products import kron_cotangent_of_first, kron_cotangent_of_second, kron_product
from ..rules.util import unbroadcast
from ..rules.core import is_hashable
from . import buffers
from .constant_arrays import constant_inputs, hoist_new_arrays
from .float_blocks import names_read, runs
from .templates import _ARRAY_UNARY, _UNARY

MIN_ARRAY_BLOCK = 2
#: functions whose derivative is bounded (and which give nan for an infinite argument)
_BOUNDED = frozenset({np.sin, np.cos, math.sin, math.cos})
#: functions whose derivative is their value or bounded, but which turn -inf into a finite value
_SATURATING = frozenset({np.exp, math.exp, np.tanh, math.tanh})

# a block of more steps than this frees each adjoint once spent on a line of its own (its reverse
# holds a few arrays, not one per value); a shorter block frees it on the line that spends it
_FREE_SPENT_ADJOINTS_ABOVE = 6

_BINARY = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/"}
_NUMBER = (int, float)
#: products of two matrices (blocks of reverse mode only: their cotangents are matrix products)
_PRODUCTS = frozenset({operator.matmul, np.matmul, np.dot})
_PRODUCT_KINDS = ("matmul", "kron")  # results of a shape of their own (np.kron: kron_cotangent)
_COMPARISONS = {operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">="}


def _numeric(a: ir.Atom) -> bool:
    return isinstance(a, ir.Const) and type(a.value) in _NUMBER and math.isfinite(a.value)


def _block_function(s: object, integers: set, resolve: Callable) -> Any:
    """The function ``s`` calls if ``s`` is a call that may join a block (positional arguments
    that are variables or finite numbers, a target that is not an integer), else None."""
    if not isinstance(s, ir.Call) or not s.target or s.kwargs or s.star_args is not None \
            or s.star_kwargs is not None or s.target in integers:
        return None
    for a in s.args:
        if isinstance(a, ir.Var) and a.name in integers or isinstance(a, ir.Const) and not _numeric(a):
            return None
    func = s.func.value if isinstance(s.func, ir.Const) else resolve(s.func)
    return func if func is not None and is_hashable(func) else None


def classify_in_reverse(s: object, integers: set, resolve: Callable) -> tuple[str, Any] | None:
    """``classify``, and the kinds only reverse mode's blocks take: a product of two matrices
    (``a @ b``, ``np.matmul``, ``np.dot``) and a comparison (``0 <= h``, a mask: no derivative)."""
    found = classify(s, integers, resolve)
    if found is not None:
        return found
    func = _block_function(s, integers, resolve)
    if func is None or len(s.args) != 2:  # type: ignore[attr-defined]
        return None
    variables = [a for a in s.args if not isinstance(a, ir.Const)]  # type: ignore[attr-defined]
    if func in _PRODUCTS and len(variables) == 2:
        return "matmul", func
    if func is np.kron and len(variables) == 2:  # (of two arrays of one rank: the guard)
        return "kron", func
    if func in _COMPARISONS and variables:
        return "compare", func
    return None


def classify(s: object, integers: set, resolve: Callable) -> tuple[str, Any] | None:
    """``(kind, function)`` if ``s`` can join an array block, else None."""
    func = _block_function(s, integers, resolve)
    if func is None:
        return None
    variables = [a for a in s.args if not isinstance(a, ir.Const)]  # type: ignore[attr-defined]
    if func in _BINARY and len(s.args) == 2 and variables:
        return "binary", func
    if func is operator.pow and len(s.args) == 2 and not isinstance(s.args[0], ir.Const) and _numeric(s.args[1]) \
            and isinstance(s.func, ir.Const):
        return "pow", func
    if len(s.args) != 1 or not variables:
        return None
    if func is operator.neg and isinstance(s.func, ir.Const):
        return "neg", func
    if func in _ARRAY_UNARY or func in _UNARY:
        return "unary", func
    if func is np.sum:
        return "sum", func
    return None


def find_array_blocks(body: list, integers: set, resolve: Callable, taken: set) -> list[tuple[int, int]]:
    """``(start, stop)`` ranges of ``body`` that form array blocks (indices in ``taken``, the
    float blocks, are left alone). New constant arrays are moved before (``hoist_for_blocks``),
    not here: the float blocks are found on the order the array blocks see."""
    skip = {id(body[k]) for k in taken}

    def fits(s: object) -> bool:
        return id(s) not in skip and classify_in_reverse(s, integers, resolve) is not None

    return runs(body, fits, MIN_ARRAY_BLOCK)


def hoist_for_blocks(body: list, integers: set, resolve: Callable) -> None:
    """Move the new constant arrays of ``body`` to the front of the runs they split, before any
    kind of block is looked for. Moving them between two searches changed what the second found:
    runs of float arithmetic that the move joined became a float block in the reverse pass (its
    search comes second, on the moved body) but not in the forward pass, whose tape then did not
    match (fuzzer seed 32012). Moving the same arrays again is a no-op, so both passes agree."""
    hoist_new_arrays(body, lambda s: classify_in_reverse(s, integers, resolve) is not None, integers, resolve)


class ArrayBlock:
    """The SSA form of one block and the code generated for it."""

    def __init__(self, stmts: list, integers: set, resolve: Callable, fresh: Callable,
                 primal: Callable, const: Callable, function_body: list) -> None:
        self.stmts, self.fresh, self.primal, self.const = stmts, fresh, primal, const
        self.inputs: list[str] = []  # variables read before the block assigns them
        # inputs that are module globals or new constant arrays (constant_arrays.py): no derivative
        self.constants: set[str] = set()
        marked = constant_inputs(stmts)
        current: dict[str, str] = {}
        self.ops: list[tuple[str, str, Any, list[str]]] = []  # (local, kind, function, operands)
        self.function_guards: list[str] = []
        self.attributes: list[tuple[str, str]] = []  # (local, module attribute path) read by the block
        for s in stmts:
            kind, func = classify_in_reverse(s, integers, resolve)
            operands = []
            for a in s.args:
                if isinstance(a, ir.Var) or isinstance(a, ir.Global) and "." not in a.path:
                    name = primal(a)
                    if name not in current:
                        current[name] = name
                        self.inputs.append(name)
                        if isinstance(a, ir.Global) or name in marked:
                            self.constants.add(name)
                    operands.append(current[name])
                elif isinstance(a, ir.Global):
                    # a module attribute (np.pi): a constant read once into a local, which the
                    # reverse pass gets as a residual (the module's name is not bound there)
                    local = fresh("k")
                    self.attributes.append((local, a.path))
                    operands.append(local)
                else:
                    operands.append(primal(a))  # a number
            guard = f"{primal(s.func)} is {const(func)}"
            if not isinstance(s.func, ir.Const) and guard not in self.function_guards:
                self.function_guards.append(guard)
            local = fresh("b")
            self.ops.append((local, kind, func, operands, primal(s.func)))
            current[s.target] = local
        read = names_read(function_body, {id(s) for s in stmts})
        # a value nothing outside the block reads (a temporary, a name the block alone uses) is
        # not written back: its fdata would be zero-filled for nothing
        # ...but a value the block itself reads before assigning it is written back: inside a
        # loop, the next iteration's block reads it (`weight = weight + 1.0` carried around a loop)
        self.final = {v: loc for v, loc in current.items() if loc != v and (v in read or v in self.inputs)}
        self.first_line, self.last_line = stmts[0].line, stmts[-1].line
        self.values = {loc for loc, *_ in self.ops} | set(self.inputs)
        # which inputs each value depends on: its cotangent is needed only if one of them is active
        self.depends: dict[str, set] = {v: {v} for v in self.inputs}
        # which inputs make each value an array (all arrays of a block have one shape; np.sum
        # makes a float): a float's cotangent from an array expression is that expression's sum
        self.arrayness: dict[str, set] = {v: {v} for v in self.inputs}
        # a matrix product is an array of a shape of its own: a source of arrayness, like an input
        self.products = [local for local, kind, *_ in self.ops if kind in _PRODUCT_KINDS]
        self.attribute_locals = [local for local, _ in self.attributes]
        for local, kind, _, operands, _ in self.ops:
            self.depends[local] = set() if kind == "compare" else \
                set().union(*(self.depends.get(o, set()) for o in operands))
            self.arrayness[local] = set() if kind == "sum" else {local} if kind in _PRODUCT_KINDS else \
                set().union(*(self.arrayness.get(o, set()) for o in operands))
        self.masks = {local for local, kind, *_ in self.ops if kind == "compare"}  # bools: finite factors
        self.residuals = self._residuals()
        self.finite = fresh("fin") if self._finite_output_suffices() else None
        self.flags = {v: fresh("act") for v in self.inputs}  # does the input carry a derivative?
        self.is_array = {v: fresh("arr") for v in self.inputs}  # is the input an array?
        self.shape = fresh("shape")  # the shape of each group's arrays, and whether they all agree
        self.operand_shapes = fresh("opsh")  # when they do not: each operand's shape, in order
        self.groups = self._groups()
        self.shaped = [(local, k) for local, kind, _, operands, _ in self.ops if kind in ("binary", "sum")
                       for k, o in enumerate(operands) if o in self.values]

    def _finite_output_suffices(self) -> bool:
        """Whether finite outputs prove every partial of the block finite, so its adjoint needs
        no strong-zero check (``0 * inf`` needs an infinite partial). True when every output is
        a float (a sum: checked for free) and every operation's partial is bounded by its
        values and a non-finite operand leaves a non-finite result: ``+ - *``, ``-a``, sums,
        ``sin``/``cos``, ``a ** c`` for ``c`` in 0..3 (larger powers may overflow in the partial
        alone), and ``exp``/``tanh`` of a block input (they turn -inf into a finite value, which
        must not hide infinite partials before them)."""
        if not self.final or any(self.arrayness[local] for local in self.final.values()):
            return False
        inputs = set(self.inputs)
        for local, kind, func, operands, _ in self.ops:
            if kind in ("neg", "sum") or kind == "binary" and func in (operator.add, operator.sub, operator.mul):
                continue
            if kind == "pow" and float(operands[1]) in (0.0, 1.0, 2.0, 3.0):
                continue
            if kind == "unary" and func in _BOUNDED:
                continue
            if kind == "unary" and func in _SATURATING and operands[0] in inputs:
                continue
            return False
        return True

    def _groups(self) -> list[list[str]]:
        """The inputs in groups that meet in elementwise operations: the arrays of a group must
        have one shape; a sum separates groups (``np.sum(a) * b`` with a and b of any shapes)."""
        group = {v: v for v in self.inputs + self.products}

        def find(v: str) -> str:
            while group[v] != v:
                v = group[v]
            return v

        for local in self.arrayness:
            members = sorted(self.arrayness[local])
            for other in members[1:]:
                group[find(other)] = find(members[0])
        roots: dict[str, list[str]] = {}
        for v in self.inputs + self.products:
            roots.setdefault(find(v), []).append(v)
        return list(roots.values())

    def _group_of(self, name: str) -> int:
        member = next(iter(self.arrayness[name]))
        return next(k for k, g in enumerate(self.groups) if member in g)

    def _flag_names(self) -> list[str]:
        return list(self.flags.values()) + list(self.is_array.values())

    def _may_be_array(self, name: str) -> str:
        if self.arrayness[name] & set(self.products):
            return "True"  # a matrix product's result, or elementwise of one
        return " or ".join(self.is_array[v] for v in sorted(self.arrayness[name]))

    def _fitted(self, expr: str, kind: str, result: str, target: str) -> str:
        """``expr``, the contribution of ``result``'s adjoint to ``target``'s, made a float when
        ``target`` is a float and ``result`` an array (its sum). The adjoint of an array may be a
        float standing for that value in every element (what a sum's adjoint gives its operand):
        its sum is that value times the number of elements."""
        if kind in ("sum", *_PRODUCT_KINDS) or self.arrayness[result] <= self.arrayness[target]:
            return expr  # whenever the result is an array, so is the target (a product's: its shape)
        target_array = self._may_be_array(target)
        if target_array == "True":
            return expr  # a product's result (or elementwise of one): always an array
        shape = f"{self.shape}[0][{self._group_of(result)}]"
        reduced = f"(_spread_sum({expr}, {shape}) if {self._may_be_array(result)} else {expr})"
        return f"({expr} if {target_array} else {reduced})" if target_array else reduced

    def _shaped(self, expr: str, kind: str, result: str, target: str, operands: list) -> str:
        """``_fitted`` when the block's arrays have one shape; when they broadcast, the
        contribution summed down to the operand's own shape (a sum's adjoint spread up to it)."""
        fitted = self._fitted(expr, kind, result, target)
        if kind not in ("binary", "sum"):
            return fitted  # elementwise with one operand: the same shape
        k = operands.index(target)
        recorded = f"{self.operand_shapes}[{self.shaped.index((result, k))}]"
        exact = f"_spread_to({expr}, {recorded})" if kind == "sum" else f"_unbroadcast({expr}, {recorded})"
        return f"({fitted} if {self.shape}[1] else {exact})"

    def _residuals(self) -> list[str]:
        needed: list[str] = []
        for local, kind, func, operands, _ in self.ops:
            if not self.depends[local]:
                continue  # a constant: no adjoint
            if kind == "binary" and func is operator.mul or kind in _PRODUCT_KINDS:  # each factor for the other's adjoint
                needed += [operands[1 - k] for k in range(2) if operands[k] in self.values and self.depends[operands[k]]]
            elif kind == "binary" and func is operator.truediv:
                needed += [operands[1], local]
            elif kind == "pow":
                needed.append(operands[0])
            elif kind == "unary":  # what its partial reads: sin's its argument, exp's its value
                partial = (_ARRAY_UNARY if func in _ARRAY_UNARY else _UNARY)[func]("\0x", "\0t")
                needed += [name for name, mark in ((operands[0], "\0x"), (local, "\0t")) if mark in partial]
        order = {name: k for k, name in enumerate(self.inputs + [op[0] for op in self.ops])}
        attributes = [local for local, _ in self.attributes]
        return sorted({n for n in needed if n in self.values}, key=order.__getitem__) \
            + [n for n in attributes if n in needed]

    # ------------------------------------------------------------------ forward

    def forward(self, fd: Callable) -> tuple[str, list[str]]:
        # a module attribute holding an array (mod.W) takes part in broadcasting: checked with
        # every group (a float or int is a scalar there), so a different shape is not missed
        read = [f"_as_operand({path})" for _, path in self.attributes]
        some_array = " or ".join(f"type({v}) is _ND" for v in self.inputs) or "False"
        if self.products:
            shapes = self._product_shapes(read)
        else:
            groups = ", ".join("(" + ", ".join(list(g) + read) + ",)" for g in self.groups)
            shapes = f"_array_shapes({groups})"
        guard = " and ".join([f"({some_array})", f"({self.shape} := {shapes}) is not None"]
                             + self.function_guards)
        lines = []
        dead = self._last_reads()
        operands = {(local, k): o for local, _, _, ops, _ in self.ops for k, o in enumerate(ops)}
        shaped = {operands[key] for key in self.shaped}
        recorded: dict[str, str] = {}  # a freed intermediate whose shape the reverse pass needs
        for k, (local, kind, func, ops, fname) in enumerate(self.ops):
            lines.append(f"{local} = {_expression(kind, func, ops, fname)}")
            if dead[k]:  # intermediates nothing reads any more: freed as the function frees them
                # (where shapes differ, the shapes of those that are operands are kept first)
                for name in dead[k]:
                    if name in shaped:
                        recorded[name] = self.fresh("sh")
                        lines.append(f"if not {self.shape}[1]: {recorded[name]} = _np.shape({name})")
                lines.append(f"del {', '.join(dead[k])}")
        outputs = []
        for var, local in self.final.items():
            out_f = self.fresh("of")
            outputs.append(out_f)
            if self.depends[local]:
                lines.append(f"{out_f} = _zeros_like({local}) if type({local}) is _ND else _NF")
            else:  # a comparison's bools: no derivative
                lines.append(f"{out_f} = _NF")
        activity = [f"{self.is_array[v]} = type({v}) is _ND; {flag} = "
                    + ("False" if v in self.constants else f"{fd(v)} is not _NF or not {self.is_array[v]}")
                    for v, flag in self.flags.items()]
        lines = activity + [f"{local} = {path}" for local, path in self.attributes] + lines
        shapes = ", ".join(recorded.get(operands[key]) or f"_np.shape({operands[key]})" for key in self.shaped)
        lines.append(f"{self.operand_shapes} = None if {self.shape}[1] else ({shapes}{',' if len(self.shaped) == 1 else ''})")
        if self.finite is not None:  # comparisons: no warning for inf or nan
            lines.append(f"{self.finite} = " + " and ".join(f"-_INF < {v} < _INF" for v in self.final.values()))
        pushed = [fd(v) for v in self.inputs] + self._flag_names() + self.residuals + outputs \
            + ([self.finite] if self.finite is not None else []) \
            + [self.shape, self.operand_shapes]
        lines.append(f"_push(({', '.join(pushed)},)); _push(_FASTAB)")
        for (var, local), out_f in zip(self.final.items(), outputs):
            lines.append(f"{var} = {local}; {fd(var)} = {out_f}")
        self.outputs = outputs
        return guard, lines

    def _product_shapes(self, read: list[str]) -> str:
        """The guard's shapes of a block with matrix products (``product_shapes``): the values it
        reads, each product's operands as the values that make them arrays (indices), and the
        groups of values whose arrays meet elementwise (module attributes in every group)."""
        sources = self.inputs + self.attribute_locals + self.products
        index = {name: k for k, name in enumerate(sources)}

        def members(operand: str) -> tuple:
            if operand in self.arrayness:
                return tuple(sorted(index[v] for v in self.arrayness[operand]))
            return (index[operand],) if operand in index else ()

        products = tuple((members(ops[0]), members(ops[1])) + (("kron",) if kind == "kron" else ())
                         for _, kind, _, ops, _ in self.ops if kind in _PRODUCT_KINDS)
        attributes = tuple(index[a] for a in self.attribute_locals)
        groups = tuple(tuple(index[v] for v in g) + attributes for g in self.groups)
        return f"_product_shapes(({', '.join(self.inputs + read)},), {products!r}, {groups!r})"

    def _spent_residuals(self, local: str, steps: list) -> list[str]:
        """After the step of ``local`` (reverse order): the block's own intermediates that no
        later step reads, let go (``steps`` in reverse order), so the pass holds fewer arrays."""
        made = {name for name, *_ in self.ops}
        position = next(k for k, step in enumerate(steps) if step[0] == local)
        spent = []
        for name in self.residuals:
            if name not in made:
                continue
            readers = [k for k, (_, shared, contributions, _, operands) in enumerate(steps)
                       if name in operands or any(_reads(name, text) for text in shared)
                       or any(_reads(name, c[2]) for c in contributions)]
            if readers and max(readers) == position:
                spent.append(name)
        return [f"    {' = '.join(spent)} = None"] if spent else []

    def _last_reads(self) -> list[list[str]]:
        """Per operation, the block's own intermediates it reads last that neither the reverse
        pass (residuals) nor the results need."""
        kept = set(self.residuals) | set(self.final.values())
        made = {local for local, *_ in self.ops}
        last: dict[str, int] = {}
        for k, (_, _, _, ops, _) in enumerate(self.ops):
            for o in ops:
                if o in made and o not in kept:
                    last[o] = k
        dead: list[list[str]] = [[] for _ in self.ops]
        for name, k in last.items():
            dead[k].append(name)
        return dead

    # ------------------------------------------------------------------ reverse

    def reverse(self, fd: Callable, rd: Callable) -> list[str]:
        """The adjoint code, run first as plain products; if an input's adjoint then holds a NaN
        (what ``0 * inf`` gives), once more with every product and quotient taken by the
        strong-zero rule (``_szp``/``_szq``: an exactly-zero cotangent contributes 0), so the
        common case pays one NaN check per input, not one per operation."""
        entry_fdata = [f"_ef_{k}" for k in range(len(self.inputs))]
        popped = entry_fdata + self._flag_names() + self.residuals + self.outputs \
            + ([self.finite] if self.finite is not None else []) + [self.shape, self.operand_shapes]
        lines = [f"{', '.join(popped)}, = _pop()"]
        adjoint = {name: self.fresh("g") for name in self.values}
        incoming = {local: self.fresh("gi") for local in self.final.values()}
        for (var, local), out_f in zip(self.final.items(), self.outputs):  # incoming cotangents
            g, r = incoming[local], rd(var)
            lines.append(f"{g} = {out_f} if {out_f} is not _NF else None if {r} is _NR else {r}; {r} = _NR")
        reset = [" = ".join(adjoint[n] for n in sorted(self.values)) + " = None"]
        reset += [f"{adjoint[local]} = {g}" for local, g in incoming.items()]
        if self.products:  # strong-zero products from the start, and each input's contributions
            # added as they come (a product's by gemm, straight into the fdata): no second run
            steps, _ = self._steps(adjoint, True, {v: (f, rd(v)) for v, f in zip(self.inputs, entry_fdata)})
            return lines + reset + steps
        fast, negative = self._steps(adjoint, False)
        strong, _ = self._steps(adjoint, True)
        checked = [adjoint[v] for v in self.inputs if v not in self.constants]
        lines += reset + fast
        if checked and strong != fast:
            # inline (a call costs as much as the check): the sum of squares of a small array,
            # the sum of a large one (see rules.declare.has_nan), the value of a float
            tests = [f"{g} is not None and (_s := (_vdot({g}, {g}) if {g}.size <= _SMALL else _ar({g}, None)) "
                     f"if type({g}) is _ND else {g}) != _s" for g in checked]
            unproven = f"not {self.finite} and " if self.finite is not None else ""
            lines.append(f"if {unproven}({' or '.join(f'({t})' for t in tests)}):  # a NaN (0 * inf?): again, by the strong-zero rule")
            lines += ["    " + line for line in reset + strong]
        for k, v in enumerate(self.inputs):  # the cotangents of the block's inputs
            if v in self.constants:
                continue
            g, sign = adjoint[v], "-" if v in negative else "+"
            lines.append(f"if {g} is not None:")  # only computed for arrays with fdata and floats
            lines.append(f"    if {entry_fdata[k]} is not _NF:")
            lines.append(f"        {entry_fdata[k]} {sign}= {g}")
            lines.append("    else:")
            lines.append(f"        {g} = {'-' if sign == '-' else ''}_fsum({g}); "
                         f"{rd(v)} = {g} if {rd(v)} is _NR else {rd(v)} + {g}")
        return lines

    def _steps(self, adjoint: dict, strong: bool, direct: dict | None = None) -> tuple[list[str], set]:
        """The adjoint statements (plain or strong-zero products) and the set of adjoints that
        hold the negation of their value. With ``direct`` (input -> its fdata and rdata names),
        contributions to inputs are added to them on the spot."""
        lines: list[str] = []

        def active(name: str) -> str:
            return " or ".join(self.flags[v] for v in sorted(self.depends[name])) or "False"

        steps = []  # (local, shared lines, contributions, kind, operands), in reverse order
        for local, kind, func, operands, _ in reversed(self.ops):
            if not self.depends[local]:
                continue  # a constant: no adjoint
            shared: list[str] = []
            if kind == "matmul":  # a float adjoint (a sum's) stands for a matrix of that value
                g = adjoint[local]
                shared.append(f"if type({g}) is not _ND: {g} = _spread_to({g}, {self.shape}[2][{self.products.index(local)}])")
            def taken(target: str) -> bool:  # not a number or a constant
                return target in self.values and bool(self.depends[target]) \
                    and not (direct is not None and target in self.constants)

            found = _adjoints(kind, func, operands, local, adjoint[local], shared, strong, self.masks)
            if not strong and sum(taken(target) for target, _, _ in found) == 1:
                # the adjoint's one use: a product with it is taken in its memory when nothing
                # else refers to it (exp's, a constant factor's, a square's: no new array each)
                found = _adjoints(kind, func, operands, local, adjoint[local], [], strong, self.masks, spent=True)
            contributions = [(k, target, self._shaped(expr, kind, local, target, operands), negated)
                             for k, (target, expr, negated) in enumerate(found) if taken(target)]
            steps.append((local, shared, contributions, kind, operands))
        received = Counter(target for *_, contributions, _, _ in steps for _, target, _, _ in contributions
                           if direct is None or target not in direct)
        received.update(self.final.values())  # the incoming cotangent is a contribution too
        # an adjoint with one contribution keeps that contribution's sign out of its value (a
        # negation is a pass over the array); what it contributes in turn carries the sign
        negative: set[str] = set()
        for local, shared, contributions, kind, operands in steps:
            body: list[str] = []
            for k, target, expr, negated in contributions:
                a = adjoint[target]
                negated = negated != (local in negative)
                if direct is not None and target in direct:
                    body += _added_to_input(direct[target], self.flags[target], kind, operands, k,
                                            adjoint[local], expr, negated)
                    continue
                if received[target] == 1:
                    add = f"{a} = {expr}"
                    if negated:
                        negative.add(target)
                elif negated:
                    add = f"{a} = -({expr}) if {a} is None else {a} - ({expr})"
                else:
                    add = f"{a} = {expr} if {a} is None else {a} + {expr}"
                body.append(f"if {active(target)}: {add}")
            if body:
                lines.append(f"if {adjoint[local]} is not None:")
                lines += ["    " + b for b in shared + body]
                # spent (its consumers came before it): freed now, so a long block's reverse holds
                # a few arrays at a time, not one per value -- a peak of many large temporaries,
                # freed at once, makes glibc give the memory back and fault it in again next call.
                # A short block frees it on its last contribution's line (no line of its own), so
                # the next step's temporaries do not add to it
                if len(steps) > _FREE_SPENT_ADJOINTS_ABOVE or direct is not None:
                    lines.append(f"    {adjoint[local]} = None")
                else:
                    lines[-1] += f"; {adjoint[local]} = None"
                if direct is not None:
                    lines += self._spent_residuals(local, steps)
        return lines, negative


def _added_to_input(names: tuple, flag: str, kind: str, operands: list, k: int, g: str, expr: str,
                    negated: bool) -> list[str]:
    """A contribution added to a block input's fdata (or, for a float or an array without
    fdata, its rdata) on the spot; a product's by gemm, without the product as a temporary."""
    fdata, rdata = names
    if kind == "matmul":
        product = f"{g}, {operands[1]}.T" if k == 0 else f"{operands[0]}.T, {g}"
        sign = ", -1.0" if negated else ""
        return [f"if {flag}: _add_matmul({fdata}, {product}{sign})"]
    return [f"if {flag}:",
            f"    if {fdata} is not _NF: {fdata} {'-' if negated else '+'}= {expr}",
            f"    else: _s = {'-' if negated else ''}_fsum({expr}); {rdata} = _s if {rdata} is _NR else {rdata} + _s"]


def _expression(kind: str, func: Any, ops: list, fname: str) -> str:
    if kind == "matmul":
        return f"{ops[0]} @ {ops[1]}" if func is operator.matmul else f"{fname}({ops[0]}, {ops[1]})"
    if kind == "kron":  # np.kron's products, into a pooled buffer
        return f"_kron_product({ops[0]}, {ops[1]})"
    if kind == "compare":
        return f"{ops[0]} {_COMPARISONS[func]} {ops[1]}"
    if kind == "binary":
        return f"{ops[0]} {_BINARY[func]} {ops[1]}"
    if kind == "neg":
        return f"-{ops[0]}"
    if kind == "pow":
        return f"{ops[0]} ** {ops[1]}"
    if kind == "sum":  # np.sum of a block's value (a float64 array or a float) is np.add.reduce over
        return f"_add_reduce({ops[0]}, None)"  # every axis, without np.sum's Python-level dispatch
    return f"{fname}({ops[0]})"  # unary


def _adjoints(kind: str, func: Any, ops: list, t: str, g: str, body: list,
              strong: bool = False, masks: set = frozenset(), spent: bool = False) -> list[tuple[str, str, bool]]:
    """``(operand, contribution, negated)`` of the adjoint of ``t = func(*ops)`` with output
    adjoint ``g``; shared subexpressions go into ``body`` first. ``strong``: products and
    quotients with ``g`` by the strong-zero rule (not needed for a factor in ``masks``, bools).
    ``spent``: ``g`` is read by this contribution only, so products with it may be taken in its
    memory (``_spent_product``, which checks that nothing else refers to it)."""
    def times(factor: str) -> str:
        if factor in masks or spent and not strong:  # (a mask: bools, finite; the mask has no adjoint)
            return f"_spent_product({g}, {factor})"
        return f"_szp({g}, {factor})" if strong else f"{g} * {factor}"

    if kind == "matmul":  # the strong zero as the product's template has it: none
        return [(ops[0], f"{g} @ {ops[1]}.T", False), (ops[1], f"{ops[0]}.T @ {g}", False)]
    if kind == "kron":  # (a float adjoint, a sum's, gives the float g sum(other): no pass over the kron)
        return [(ops[0], f"_kron_g(0, {g}, {ops[1]}, {ops[0]})", False), (ops[1], f"_kron_g(1, {g}, {ops[0]}, {ops[1]})", False)]
    if kind == "compare":
        return []
    if kind == "sum":
        return [(ops[0], g, False)]
    if kind == "neg":
        return [(ops[0], g, True)]
    if kind == "pow":
        n = float(ops[1])
        if n == 0:
            return []
        if n == 1:
            return [(ops[0], g, False)]
        power = ops[0] if n == 2 else f"{ops[0]} ** {n - 1!r}"
        if spent and not strong:  # n * g * power, both products in g's memory
            return [(ops[0], f"_spent_product(_spent_product({g}, {n!r}), {power})", False)]
        return [(ops[0], times(f"({n!r} * {power})") if strong else f"{n!r} * {g} * {power}", False)]
    if kind == "unary":
        table = _ARRAY_UNARY if func in _ARRAY_UNARY else _UNARY
        derivative = table[func](ops[0], t)
        if derivative == "-1.0":
            return [(ops[0], g, True)]
        if derivative.startswith("-"):
            return [(ops[0], times(f"({derivative[1:]})"), True)]
        if derivative.startswith("1.0 / "):
            divisor = derivative[len("1.0 / "):]
            return [(ops[0], f"_szq({g}, {divisor})" if strong else f"{g} / ({divisor})", False)]
        return [(ops[0], times(f"({derivative})"), False)]
    a, b = ops
    if func is operator.add:
        return [(a, g, False), (b, g, False)]
    if func is operator.sub:
        return [(a, g, False), (b, g, True)]
    if func is operator.mul:
        return [(a, times(b), False), (b, times(a), False)]
    quotient = f"_q_{t}"  # truediv: t = a / b
    body.append(f"{quotient} = _szq({g}, {b})" if strong else f"{quotient} = {g} / {b}")
    return [(a, quotient, False), (b, f"_szp({quotient}, {t})" if strong else f"{quotient} * {t}", True)]


def kron_cotangent(side: int, g: Any, other: np.ndarray, target: np.ndarray) -> Any:
    """The contribution of adjoint ``g`` of ``kron(a, b)`` to operand ``side`` (0: ``a``, 1:
    ``b``, which is ``target``): ``g`` contracted with the other factor; a float ``g`` (a sum's,
    standing for an array of that value) gives the float ``g sum(other)``."""
    if g is None:
        return None
    if type(g) is not np.ndarray:
        return float(g) * float(np.add.reduce(other, None))
    contract = kron_cotangent_of_first if side == 0 else kron_cotangent_of_second
    return contract(g, other, target.shape)


def _reads(name: str, text: str) -> bool:
    """Whether generated ``text`` reads the local ``name``."""
    return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text) is not None


def nan_in(*adjoints: Any) -> bool:
    """Whether any of a block's input adjoints (arrays, floats, or None) holds a NaN."""
    for g in adjoints:
        if g is None:
            continue
        if type(g) is np.ndarray:
            if has_nan(g):
                return True
        elif g != g:
            return True
    return False


def array_shapes(*groups: tuple) -> tuple | None:
    """The block's guard: ``(shapes, same)`` if every value is a float or a float64 array (not
    0-d), with at least one array, and the arrays of each group broadcast together: ``shapes``
    gives each group's shape, ``same`` whether every array has its group's shape. Else None."""
    shapes, arrays, same = [], False, True
    for values in groups:
        shape = None
        for v in values:
            tv = type(v)
            if tv is float or tv is np.float64:
                continue
            if tv is not np.ndarray or v.dtype != np.float64 or not v.ndim:
                return None
            if shape is None:
                shape = v.shape
            elif v.shape != shape:
                try:
                    shape = np.broadcast_shapes(shape, v.shape)
                except ValueError:
                    return None
                same = False
        shapes.append(shape)
        arrays = arrays or shape is not None
    return (shapes, same) if arrays else None


def product_shapes(values: tuple, products: tuple, groups: tuple) -> tuple | None:
    """``array_shapes`` for a block with matrix products: ``values`` are the block's inputs
    (floats or float64 arrays, not 0-d), then come the products in order, each ``(a, b)`` the
    indices of the values that make its operands arrays; each operand (its arrays broadcast
    together) must be a matrix and the two must chain (``(a, b, "kron")``: np.kron's, two arrays
    of one rank). ``groups`` are tuples of indices.
    ``(group shapes, same, each product's shape)``, or None."""
    shapes: list = []
    for v in values:
        tv = type(v)
        if tv is float or tv is np.float64:
            shapes.append(None)
        elif tv is not np.ndarray or v.dtype != np.float64 or not v.ndim:
            return None
        else:
            shapes.append(v.shape)
    for a, b, *kron in products:
        sa, sb = _broadcast_of(shapes, a), _broadcast_of(shapes, b)
        if kron and sa is not None and sb is not None and len(sa) == len(sb):  # np.kron: any one rank
            shapes.append(tuple(p * q for p, q in zip(sa, sb)))
            continue
        if kron or sa is None or sb is None or len(sa) != 2 or len(sb) != 2 or sa[1] != sb[0]:
            return None
        shapes.append((sa[0], sb[1]))
    same, group_shapes = True, []
    for members in groups:
        known = [shapes[k] for k in members if shapes[k] is not None]
        shape = _broadcast_of(shapes, members) if known else None
        if known and shape is None:
            return None
        same = same and all(s == shape for s in known)
        group_shapes.append(shape)
    return group_shapes, same, shapes[len(values):]


def _broadcast_of(shapes: list, members: tuple) -> tuple | None:
    """The shape the arrays among ``members`` broadcast to (None: none is an array, or they
    do not broadcast)."""
    known = [shapes[k] for k in members if shapes[k] is not None]
    if not known:
        return None
    try:
        return np.broadcast_shapes(*known) if len(known) > 1 else known[0]
    except ValueError:
        return None


def unbroadcast_to(g: Any, shape: tuple) -> Any:
    """An adjoint summed over the axes broadcasting added or stretched to reach ``shape``."""
    if type(g) is not np.ndarray:
        return spread_to(g, shape)
    if g.shape != shape:
        g = unbroadcast(g, shape)
    return g if shape else float(g)


def spread_to(g: Any, shape: tuple) -> Any:
    """A float adjoint as the array of that value in every element of ``shape`` (a view)."""
    return g if shape == () else np.broadcast_to(g, shape)


def spread_sum(g: Any, shape: tuple) -> Any:
    """The sum of an array adjoint: ``g`` itself, or a float standing for ``g`` in every element."""
    return float(g.sum()) if type(g) is np.ndarray else g * math.prod(shape)


def float_sum(g: Any) -> Any:
    """The cotangent of a float input from an array-or-float contribution."""
    return float(g.sum()) if type(g) is np.ndarray else g


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


def as_operand(value: Any) -> Any:
    """What ``array_shapes`` sees of a module attribute a block reads: an array as itself (its
    shape broadcasts with the block's), anything else (np.pi, an int) as a scalar."""
    return value if type(value) is np.ndarray else 0.0


NAMESPACE = {"_kron_g": kron_cotangent, "_kron_product": kron_product, "_array_shapes": array_shapes, "_product_shapes": product_shapes, "_spent_product": buffers.spent_product, "_add_reduce": np.add.reduce, "_as_operand": as_operand, "_nan_in": nan_in, "_vdot": np.vdot, "_ar": np.add.reduce, "_SMALL": SMALL, "_INF": math.inf, "_unbroadcast": unbroadcast_to, "_spread_to": spread_to, "_fsum": float_sum, "_spread_sum": spread_sum, "_math": math,
             "_FASTAB": _Marker("_FASTAB"), "_SLOWAB": _Marker("_SLOWAB")}
