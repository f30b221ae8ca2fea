"""Float ``while`` loops: a ``while`` loop whose test compares numbers and whose body is float
arithmetic plus integer counting (``while i < n: x = x * a + b; i += 1``) runs, when its inputs
are floats, as a plain Python loop that appends each iteration's residuals to float64 columns
(``array('d')``: 8 bytes a float) -- the ``for`` loops' float loop (``float_blocks.FloatLoop``)
with the trip count unknown in advance. The test's comparisons and the counter's integer
arithmetic record nothing; the reverse pass walks the columns backwards with the same
straight-line adjoint code. Nothing here writes to arrays, so a failing iteration has nothing to
undo: the residuals are pushed once the loop ended.

Generated code reads like this:

    if type(x) in _FT and type(a) in _FT and ... (type(n) is int or type(n) in _FT):  # float loop
        _res1_x = _array_d(); _np1 = (...)
        while True:
            _t1 = i < n
            if not _t1:
                break
            _b1 = x * a; _b2 = _b1 + b; i = i + 1
            _res1_x.append(x)
            x = _b2
        _push((_res1_x, range(len(_res1_x)), _np1, a, b, ())); _push(_FASTLOOP)
    else:
        <the loop as usual>
"""
from __future__ import annotations

import math
import operator
from ..ir import nodes as ir
from ..ir.tested_comparisons import TESTED
from ..rules.core import is_hashable
from .float_blocks import FloatLoop

_COMPARISONS = {operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">=", operator.eq: "==",
                operator.ne: "!="}
_COMPARISONS.update({truth: _COMPARISONS[comparison] for comparison, truth in TESTED.items()})  # (if a < b:)


def _comparison(s: object) -> tuple[str, list[str]] | None:
    """``(source, names read)`` of ``t = a < b`` (``<= > >= == !=``) on variables and finite
    number literals, or None."""
    if not isinstance(s, ir.Call) or not s.target or s.kwargs or s.star_args is not None \
            or s.star_kwargs is not None or not isinstance(s.func, ir.Const) or not is_hashable(s.func.value) \
            or s.func.value not in _COMPARISONS or len(s.args) != 2:
        return None
    ops, names = [], []
    for a in s.args:
        if isinstance(a, ir.Var):
            ops.append(a.name)
            names.append(a.name)
        elif isinstance(a, ir.Const) and type(a.value) in (int, float) and math.isfinite(a.value):
            ops.append(repr(a.value))
        else:
            return None
    return f"{s.target} = {ops[0]} {_COMPARISONS[s.func.value]} {ops[1]}", names


class FloatWhileLoop(FloatLoop):
    """A ``FloatLoop`` over a ``while`` loop (module docstring). ``None`` from ``plan_while``
    when its test or body has anything else."""

    @staticmethod
    def plan_while(loop: ir.While, integers: set, unary: dict, resolve: "callable", fresh: "callable",
                   function_body: list, plain: "callable") -> "FloatWhileLoop | None":
        tests, compared, flags = [], [], []

        def test_lines(stmts: list, indent: str) -> bool:
            """Append the test's statements: comparisons (their results are flags), copies of
            flags and ``if flag:`` (``a < b and c < d``), integer arithmetic."""
            for s in stmts:
                text = plain(s)
                if isinstance(s, ir.Copy) and isinstance(s.source, ir.Var) and s.source.name in flags:
                    text = f"{s.target} = {s.source.name}"
                    flags.append(s.target)
                elif isinstance(s, ir.If) and isinstance(s.test, ir.Var) and s.test.name in flags:
                    for header, block in ((f"if {s.test.name}:", s.body), ("else:", s.orelse)):
                        tests.append(indent + header)
                        if not test_lines(block + [ir.Pass()], indent + "    "):
                            return False
                    continue
                elif isinstance(s, ir.Pass):
                    text = "pass"
                elif text is None:
                    found = _comparison(s)
                    if found is None:
                        return False
                    text, names = found
                    flags.append(s.target)
                    compared.extend(n for n in names if n not in integers and n not in compared and n not in flags)
                tests.append(indent + text)
            return True

        if not test_lines(loop.test_body, "") \
                or not isinstance(loop.test, ir.Var) or loop.test.name not in integers and loop.test.name not in flags:
            return None
        self = FloatLoop.plan(loop, integers, unary, resolve, fresh, function_body, plain, FloatWhileLoop())
        if self is None:
            return None
        read_in_body, assigned = set(self.entry_reads), self.assigned
        if any(f in read_in_body or f in assigned or f in compared for f in flags) \
                or any(v in assigned and v not in self.final for v in compared):
            return None  # a test's flag used as a number, or a compared value not kept in its variable
        self.tests, self.flags = tests, flags
        self.compared = [v for v in compared if v not in read_in_body]  # (those are guarded as floats)
        return self

    def guard(self, const: "callable", primal: "callable", fd: "callable") -> str:
        parts = [super().guard(const, primal, fd)]
        parts += [f"(type({v}) is int or type({v}) in _FT)" for v in self.compared]  # n in i < n: a number
        return " and ".join(p for p in parts if p != "True") or "True"

    def forward(self, loop_range: str, primal: "callable", fd: "callable") -> list[str]:
        """The loop; ``loop_range`` names the local the trip count's range is put in."""
        self.res, self.range = self.fresh("res"), loop_range
        columns = self.columns()
        numpy_values = self.fresh("np")
        appends = {r: self.fresh("append") for r in columns}
        lines = [f"{column} = _array_d(); {appends[r]} = {column}.append" for r, column in columns.items()]
        lines.append(f"{numpy_values} = ({self._numpy_values()})")
        trips = None if columns else self.fresh("trips")
        if trips:
            lines.append(f"{trips} = 0")
        lines.append("while True:")
        body = self.tests + [f"if not {self.loop.test.name}:", "    break"] + self._step_lines(primal, {})
        body += [f"{appends[r]}({r})" for r in columns]
        body += [f"{v} = {loc}" for v, loc in self.final.items()]
        if trips:
            body.append(f"{trips} += 1")
        lines += ["    " + b for b in body]
        count = trips or f"len({next(iter(columns.values()))})"
        saved = list(columns.values()) + [f"range({count})", numpy_values] + self.invariant
        lines.append(f"_push(({', '.join(saved)}, ())); _push(_FASTLOOP)")
        lines += [f"{fd(v)} = _NF" for v in list(self.final) + self.flags]
        return lines

    def _reverse_header(self, columns: dict[str, str], loop_range: str) -> list[str]:
        """Each column backwards (``reversed``: a slice of an ``array`` would copy it)."""
        walks = [f"reversed({column})" for column in columns.values()]
        targets = list(columns)
        if not walks:
            return [f"for _ in {loop_range}:"]
        if len(walks) == 1:
            return [f"for {targets[0]} in {walks[0]}:"]
        return [f"for {', '.join(targets)} in zip({', '.join(walks)}):"]
