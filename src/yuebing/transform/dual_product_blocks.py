"""Dual product blocks: dual array blocks (``dual_blocks_code.py``) that also hold products of
two float64 matrices (``a @ b``, ``np.matmul``, ``np.dot``), ``np.kron`` of two float64 arrays of
one number of axes, and comparisons (masks, no derivative), so a layer ``h = w @ x; h = h * (0 <=
h)`` and the loss after it, or ``np.sum(np.kron(a, b))``, run as one unit in an HVP, as reverse
mode's array blocks do (``array_blocks.py``).

Statement by statement, each product goes through ``call_rrule2``'s dispatch to its dual rule
(``dual_multilinear.py``), which makes zero-filled fdata and fdata tangents for its result, and
the mask a 4-tuple of its own. In a product block:

* forward: ``t = a @ b`` and its tangent ``a_d @ b + a @ b_d`` (the second by gemm into the
  first; None for zero), no fdata; ``kron`` likewise (one pass into a pooled buffer), and where
  only ``np.sum`` reads a kron's tangent, that sum as ``sum(a_d) sum(b) + sum(a) sum(b_d)``
  with no kron of tangents; a mask ``m = 0 <= h`` has no tangent (``h * m`` takes ``h_d * m``);
* reverse (inside the loop of product rules, plain then strong zero): a product's adjoint ``g``
  and its tangent ``gd`` give an intermediate operand ``g b^T`` and ``gd b^T + g b_d^T``
  (``a^T g`` and ``a^T gd + a_d^T g`` for ``b``); for a block input they are added by gemm
  straight into its fdata and fdata tangent once the loop is done (no temporary, no addition
  pass). A kron's adjoint is contracted with the other factor; a float adjoint (a sum's,
  standing for an array of that value) gives the float ``g sum(b)``: no pass over the kron at
  all. Products take no strong-zero rule (as ``dual_multilinear.py``'s); the adjoints the
  gemms after the loop read are NaN-checked with the inputs', so a ``0 * inf`` is still caught.

The guard (``dual_blocks.dual_product_inputs``) asks every ``@`` operand to be a float64 matrix
and the two to chain, kron's two operands to be arrays of one number of axes; the arrays meeting
elementwise form groups (a product's result starts a group of its own), each group's size known
(None where its arrays broadcast, whose contributions are then fitted to their operands as
``dual_blocks_code.py`` does).
"""
from __future__ import annotations

from typing import Any

from .array_blocks import _expression
from .dual_blocks import dual_classify, dual_classify_any
from .dual_blocks_code import DualArrayBlock

_PRODUCTS = ("matmul", "kron")  # kinds whose result is an array of a shape of its own


def has_products(stmts: list, gen: Any) -> bool:
    """Whether a dual block's statements hold a product of matrices or a comparison."""
    return any(dual_classify(s, gen.integers, gen._resolve) is None for s in stmts)


class DualProductBlock(DualArrayBlock):
    """A dual array block with matrix products and masks."""

    def __init__(self, stmts: list, gen: Any) -> None:
        super().__init__(stmts, gen)
        self.products = [local for local, kind, *_ in self.ops if kind in _PRODUCTS]
        for local, kind, *_ in self.ops:
            if kind == "compare":
                self.tangent[local] = "None"  # a mask: no tangent, no cotangent
        self.groups = self._groups()

    def _classify(self, s: object) -> tuple[str, Any]:
        return dual_classify_any(s, self.gen.integers, self.gen._resolve)

    def _groups(self) -> list[list[str]]:
        """The inputs and products in groups whose arrays meet elementwise (as
        ``array_blocks.ArrayBlock._groups``)."""
        sources = self.inputs + self.products
        group = {v: v for v in sources}

        def find(v: str) -> str:
            while group[v] != v:
                v = group[v]
            return v

        for members in self.arrayness.values():
            members = sorted(members)
            for other in members[1:]:
                group[find(other)] = find(members[0])
        roots: dict[str, list[str]] = {}
        for v in sources:
            roots.setdefault(find(v), []).append(v)
        return list(roots.values())

    def _guard_call(self, constant: str, quads: str) -> str:
        index = {name: k for k, name in enumerate(self.inputs + self.products)}

        def members(operand: str) -> tuple:
            return tuple(sorted(index[v] for v in self.arrayness.get(operand, ())))

        products = tuple((kind == "kron", members(ops[0]), members(ops[1]))
                         for _, kind, _, ops, _ in self.ops if kind in _PRODUCTS)
        groups = tuple(tuple(index[v] for v in g) for g in self.groups)
        return f"_dual_product_inputs({constant}, {products!r}, {groups!r}, {quads})"

    def _size_of(self, value: str) -> str:
        members = self.arrayness.get(value)
        if not members:
            return "1"  # floats only: nothing to sum
        member = next(iter(members))
        k = next(k for k, g in enumerate(self.groups) if member in g)
        return f"{self.size}[0][{k}]"

    def _broadcasts(self) -> str:
        return f"None in {self.size}[0]"

    def _arrayish(self, name: str) -> str:
        if self.arrayness.get(name, set()) & set(self.products):
            return "True"  # a product's result, or elementwise of one: always an array
        return super()._arrayish(name)

    def _forward_op(self, t: str, kind: str, func: Any, ops: list, fname: str) -> list[str]:
        if kind == "compare":
            return [f"{t} = {_expression(kind, func, ops, fname)}"]
        if kind not in _PRODUCTS:
            return super()._forward_op(t, kind, func, ops, fname)
        a, b = ops
        tangent = f"{a}, {self._t(a)}, {b}, {self._t(b)}"
        if kind == "kron":  # np.kron's products, into a pooled buffer
            return [f"{t} = _dkron({a}, {b})", f"{t}_d = _dkron_t({tangent})"]
        # (np.matmul and np.dot of two matrices are the product @ computes; a large one pooled)
        return [f"{t} = _dmm({a}, {b})", f"{t}_d = _dmm_t({tangent})"]

    def _adjoint_step(self, t: str, kind: str, func: Any, ops: list, g: dict, gd: dict) -> list[str]:
        if kind == "compare":
            return []
        if kind not in _PRODUCTS:
            return super()._adjoint_step(t, kind, func, ops, g, gd)
        G, GD = g[t], gd[t]
        body = []
        if kind == "matmul":  # (a sum's adjoint, a float, as the matrix it stands for)
            shape = f"{self.size}[1][{self.products.index(t)}]"
            body.append(f"{G} = _dspread({G}, {shape}); {GD} = _dspread({GD}, {shape})")
        for side, (target, other) in enumerate(((ops[0], ops[1]), (ops[1], ops[0]))):
            if not self.depends.get(target):
                continue  # a constant
            other_d = self._t(other)
            ta, tad = g[target], gd[target]
            if kind == "kron":  # (a float adjoint gives a float standing for the operand)
                body.append(f"if {self._active(target)}: {ta} = _dadd({ta}, _dkron_g({side}, {G}, {other}, {target})); "
                            f"{tad} = _dadd({tad}, _dkron_gd({side}, {G}, {GD}, {other}, {other_d}, {target}))")
            elif target in self.inputs:  # after the loop, by gemm into its fdata and fdata tangent
                ef, efd = self.entry[self.inputs.index(target)]
                self.after_loop.append(f"if {self.active[target]}: _dmm_into({side}, {ef}, {efd}, {G}, {GD}, {other}, {other_d})")
                if t not in self.checked_too:
                    self.checked_too.append(t)
            else:
                body.append(f"if {self._active(target)}: {ta} = _dadd({ta}, _dmm_g({side}, {G}, {other})); "
                            f"{tad} = _dadd({tad}, _dmm_gd({side}, {G}, {GD}, {other}, {other_d}))")
        return body
