"""What a code generator knows of a function's variables before emitting it: every name the IR
assigns or reads (``all_var_names``), and those that only ever hold integers (loop indices,
counters: ``integer_names``), which carry no derivative, so no fdata, tangent or rdata."""
from __future__ import annotations

import operator

from ..ir import nodes as ir
from ..rules.core import is_hashable


def all_var_names(body: list, found: set) -> set:
    """``found`` with every variable ``body`` assigns or reads, in nested blocks too."""
    for s in body:
        if isinstance(s, ir.Call):
            if s.target:
                found.add(s.target)
            for a in [s.func, *s.args, *(v for _, v in s.kwargs), s.star_args, s.star_kwargs]:
                if isinstance(a, ir.Var):
                    found.add(a.name)
        elif isinstance(s, ir.Copy):
            found.add(s.target)
            if isinstance(s.source, ir.Var):
                found.add(s.source.name)
        elif isinstance(s, ir.If):
            if isinstance(s.test, ir.Var):
                found.add(s.test.name)
            all_var_names(s.body, found)
            all_var_names(s.orelse, found)
        elif isinstance(s, ir.While):
            all_var_names(s.test_body, found)
            all_var_names(s.body, found)
        elif isinstance(s, ir.ForRange):
            found.add(s.var)
            all_var_names(s.body, found)
        elif isinstance(s, ir.With):
            found.update(s.defines)
            all_var_names(s.body, found)
        elif isinstance(s, ir.Try):
            found.update(h.name for h in s.handlers if h.name is not None)
            for block in ir.child_blocks(s):
                all_var_names(block, found)
        elif isinstance(s, ir.Return) and isinstance(s.value, ir.Var):
            found.add(s.value.name)
        elif isinstance(s, ir.MakeClosure):
            found.add(s.target)
            found.update(s.free_vars)
        elif isinstance(s, ir.Opaque):
            found.update(s.defines)
    return found


def integer_names(body: list, given: list[str]) -> set[str]:
    """Variables that only ever hold loop indices or integer constants (a small fixpoint over
    their assignments). They carry no derivative, so the reverse pass skips their rdata. ``given``
    names (parameters, free variables, globals, cells) hold what the caller or another function
    put there: one reassigned from itself (``x = x + x``) is not an integer, nor is anything
    computed from it."""
    sources: dict[str, list] = {name: [None] for name in given}

    def collect(stmts: list) -> None:
        for s in stmts:
            if isinstance(s, ir.ForRange):
                sources.setdefault(s.var, []).append("int")
                collect(s.body)
            elif isinstance(s, ir.Copy):
                src = s.source
                kind = src.name if isinstance(src, ir.Var) else ("int" if isinstance(src, ir.Const) and type(src.value) is int else None)
                sources.setdefault(s.target, []).append(kind)
            elif isinstance(s, ir.Call) and s.target:
                sources.setdefault(s.target, []).append(integer_operands(s))
            elif isinstance(s, (ir.MakeClosure,)):
                sources.setdefault(s.target, []).append(None)
            elif isinstance(s, ir.Opaque):
                for name in s.defines:
                    sources.setdefault(name, []).append(None)
            elif isinstance(s, ir.Try):
                for h in s.handlers:
                    if h.name is not None:
                        sources.setdefault(h.name, []).append(None)
            for block in ir.child_blocks(s):
                collect(block)

    collect(body)
    ints = {name for name, kinds in sources.items() if all(k is not None for k in kinds)}
    changed = True
    while changed:
        changed = False
        for name in list(ints):
            if any(any(d != "int" and d not in ints for d in (k if type(k) is tuple else (k,))) for k in sources[name]):
                ints.discard(name)
                changed = True
    return ints


# integer arithmetic on integer variables (``i += 1`` in a while loop): plain code, nothing on the tape
INT_OPS = {operator.add: "+", operator.iadd: "+", operator.sub: "-", operator.isub: "-",
            operator.mul: "*", operator.imul: "*"}


def integer_operands(s: ir.Call) -> tuple | None:
    """The operands of ``t = a + b`` (``- *``, in place too) as ``integer_names`` dependencies
    (``"int"`` for an int literal), or None when the call is anything else."""
    if not isinstance(s.func, ir.Const) or not is_hashable(s.func.value) or s.func.value not in INT_OPS \
            or len(s.args) != 2 or s.kwargs or s.star_args is not None or s.star_kwargs is not None:
        return None
    deps = []
    for a in s.args:
        if isinstance(a, ir.Var):
            deps.append(a.name)
        elif isinstance(a, ir.Const) and type(a.value) is int:
            deps.append("int")
        else:
            return None
    return tuple(deps)
