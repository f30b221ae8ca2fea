"""Stage 5c: forward-over-reverse -- the forward transform composed with the reverse transform.

DESIGN §7 asks for second derivatives by applying the forward transform to the generated
reverse-mode code. We compose the two transforms at generation time instead of parsing generated
code a second time: ``DualReverseGenerator`` emits the reverse-mode program of a function (the
generic, template-free form of ``transform/reverse.py``) in which every value carries the tangent
the forward transform would give it. Each variable ``v`` of the reverse program becomes four
locals -- ``v`` (primal), ``v_f`` (its fdata), ``v_d`` (the tangent of ``v``) and ``v_fd`` (the
tangent of ``v_f``) -- and each rdata ``v_r`` gets its tangent ``v_rd``. Call sites pass 4-tuples
``(primal, fdata, tangent, fdata_tangent)``.

The runtime helpers the reverse program calls have their forward rules here: ``call_rrule2`` is
the forward rule of ``runtime.call_rrule`` (it returns the 4-tuple output and a *dual pullback*
``pullback(dy, dy_tangent) -> (rdata, rdata_tangent)``), ``runtime.acc`` is linear so its forward
rule is itself applied to the tangents, and globals are constants (zero tangents). Primitive
rules come from ``rules/second_order.py``; Python functions get a dual rule generated from their
source by this module, cached per code object.

Generated code, printed by ``yb.show(f, mode="hvp")``, reads like the reverse program with a
``_d`` twin on every line.
"""
from __future__ import annotations

import itertools
import math
import linecache
import types
from typing import Any, Callable

import numpy as np

from ..rules.core import RRULES, SecondOrderError, describe_callable  # (imports at module level: in a hot
from ..rules._partial_work import reroute
from ..rules import array_like, outside_state  # function each costs a failed lookup and a formatted error)
from ..rules.numpy_vectorize import pyfunc_fdata, pyfunc_tangent
from ..tangents import MutableTangent, NoFData, NoRData, NoTangent, Tangent
from .runtime import holds_mutable
from ..ir import nodes as ir
from .lifting import _has_float_data, lookup_second_order, run_second_order
from .lifting_objects import construct
from . import second_order_calls as _calls
from . import batched_second_order as _batched
from ..rules.batched import BATCH
from . import lifting as _lifting
from .exceptions import EFFECT_MARKERS, TRACKING, TRY_NAMES, caught, mark_partial
from . import partial_calls as _partial
from .direct_calls import SECOND as _DIRECT, DualDirectCalls, note_user_lines
from .dual_templates import at_element, dual_template, dual_write, nan_batch, reverse_lines
from .dual_vectorize import over_elements
from .dual_blocks import NAMESPACE as DUAL_BLOCKS
from .dual_block_forms import DualBlockForms, drop_unread_global_parts
from .dual_float_loops import NAMESPACE as DUAL_LOOPS, DualFloatLoops
from .dual_tuples import NAMESPACE as DUAL_TUPLES
from .protocols import GRADIENT_CALLS, CallMode, CodeCache, SourceFunction, dispatch, property_function, run_operator
from .reverse import Generated, ReverseGenerator, _is_literal, share_cells_line
from .templates import FLOAT_TYPES, Fast


def _has_float(value: tuple) -> bool:
    return any(isinstance(v, (float, complex)) or isinstance(v, tuple) and _has_float(v) for v in value)


# --------------------------------------------------------------------------------------------
# Generator
# --------------------------------------------------------------------------------------------


class DualReverseGenerator(DualDirectCalls, DualBlockForms, DualFloatLoops, ReverseGenerator):
    """The reverse-mode program of a function with forward-mode tangents on every value."""

    float_blocks = False  # float arithmetic runs inline (dual_templates.py); arrays in dual blocks

    def __init__(self, fn: ir.Function, globals_: dict | None = None) -> None:
        super().__init__(fn, globals_)  # globals resolve functions for dual_templates.py
        self._dual_blocks: dict = {}  # id of a block's first statement -> its DualArrayBlock
        used = set(self.vars) | set(fn.global_names) | {f"_cell_{v}" for v in fn.free_vars} \
            | {f"_cellobj_{v}" for v in fn.cell_backed}
        suffix = self.names.f  # "_f" unless that collides
        while any(n + s in used for n in used for s in (suffix, suffix[:-1] + "d", suffix + "d", suffix[:-1] + "rd")):
            suffix = "_" + suffix
        self.d_suffix, self.fd_suffix, self.rd_suffix = suffix[:-1] + "d", suffix + "d", suffix[:-1] + "rd"

    # ------------------------------------------------------------ naming

    def dd(self, name: str) -> str:
        return name + self.d_suffix

    def fdd(self, name: str) -> str:
        return name + self.fd_suffix

    def rdd(self, name: str) -> str:
        return name + self.rd_suffix

    def tangent(self, a: ir.Atom) -> str:
        """The tangent expression of an atom."""
        if isinstance(a, ir.Var):
            return "_NT" if a.name in self.integers else self.dd(a.name)
        if isinstance(a, ir.Global) and "." not in a.path:
            return self.dd(a.path)
        if isinstance(a, ir.Global):
            return f"_zt({a.path})"
        value = a.value
        if type(value) is float:
            return "0.0"
        if type(value) is complex:
            return "0j"
        if _is_literal(value) and not (isinstance(value, tuple) and _has_float(value)):
            return "_NT"
        if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, type, types.ModuleType)) \
                and not getattr(value, "__closure__", None) or callable(value) and type(value).__module__ == "numpy":
            return "_NT"  # functions and classes known now carry no tangent
        return f"_zt({self.const(value)})"

    def fdata_tangent(self, a: ir.Atom) -> str:
        if isinstance(a, ir.Var):
            return "_NF" if a.name in self.integers else self.fdd(a.name)
        if isinstance(a, ir.Global) and "." not in a.path:
            return self.fdd(a.path)
        return "_NF"

    def codual(self, a: ir.Atom) -> str:
        return f"({self.primal(a)}, {self.fdata(a)}, {self.tangent(a)}, {self.fdata_tangent(a)})"

    def _four(self, name: str) -> str:
        return f"{name}, {self.fd(name)}, {self.dd(name)}, {self.fdd(name)}"

    def _templates(self, s: ir.Call) -> list:
        return []

    # ------------------------------------------------------------ forward

    def fwd_Call(self, s: ir.Call, out: list, indent: int) -> None:
        template = s.dual_template = dual_template(self, s) or dual_write(self, s)  # type: ignore[attr-defined]
        if template is None:
            super().fwd_Call(s, out, indent)
            return
        self.emit(out, indent, f"if {template.guard}:  # inline: {ir._call_text(s)}", s.line)
        for text in template.forward:
            self.emit(out, indent + 1, text, s.line)
        self.emit(out, indent, "else:", s.line)
        self._generic_call(s, out, indent + 1)

    def _generic_call(self, s: ir.Call, out: list, indent: int) -> None:
        args = [self.codual(a) for a in s.args]
        args += [f"{k}={self.codual(v)}" for k, v in s.kwargs]
        if s.star_args is not None:
            args.append(f"_STAR={self.codual(s.star_args)}")
        if s.star_kwargs is not None:
            args.append(f"_STARSTAR={self.codual(s.star_kwargs)}")
        self.emit(out, indent, f"_o, _pb = _rrule2({', '.join([self.codual(s.func)] + args)})", s.line)
        if s.target:
            self.emit(out, indent, f"{self._four(s.target)} = _o", s.line)
        self.emit(out, indent, "_push(_pb)", s.line)

    def fwd_Copy(self, s: ir.Copy, out: list, indent: int) -> None:
        if s.target in self.integers:
            self.emit(out, indent, f"{s.target} = {self.primal(s.source)}", s.line)
            return
        self.emit(out, indent, f"{self._four(s.target)} = {self.codual(s.source)}", s.line)

    def fwd_ForRange(self, s: ir.ForRange, out: list, indent: int) -> None:
        start = len(out)
        super().fwd_ForRange(s, out, indent)
        if s.var not in self.integers:  # the loop variable holds ints: no tangent
            for k in range(start, len(out)):
                text, line = out[k]
                if text.strip() == f"{self.fd(s.var)} = _NF":
                    out[k] = (f"{text}; {self.dd(s.var)} = _NT; {self.fdd(s.var)} = _NF", line)
                    break

    def fwd_Return(self, s: ir.Return, out: list, indent: int) -> None:
        self.emit(out, indent, f"return {self.codual(s.value)}", s.line)

    def fwd_Opaque(self, s: ir.Opaque, out: list, indent: int) -> None:
        self.emit(out, indent, s.source, s.line)
        for name in s.defines:
            self.emit(out, indent, f"{self.fd(name)} = {self.fdd(name)} = _NF; {self.dd(name)} = _zt({name})", s.line)

    def fwd_MakeClosure(self, s: ir.MakeClosure, out: list, indent: int) -> None:
        # the closure's fdata and fdata tangent hold one box per captured variable (where its
        # cotangents accumulate), its tangent the captured values' tangents
        self.emit(out, indent, s.source, s.source_lines or s.line)
        self.emit(out, indent, f"{s.target} = _with_user_globals({s.target}, _G)", s.line)
        cells = share_cells_line(self, s)
        if cells:
            self.emit(out, indent, cells, s.line)
        shared = self.fn.cell_backed  # variables the closure writes (nonlocal): shared boxes

        def entry(name: str, part: Callable) -> str:
            if name in shared:
                return f"{name!r}: _SHARED({part('_cellobj_' + name)})"
            if name in s.shared:  # a cell of ours the closure shares: its boxes too
                return f"{name!r}: _SHARED({part('_cell_' + name)})"
            if name == s.target:  # the function captures itself (recursion)
                return f"{name!r}: _SELF"
            return f"{name!r}: ({name}, {'_NF' if name in self.integers else part(name)})"

        def tangent(name: str) -> str:
            if name == s.target and name not in shared and name not in s.shared:
                return "_SELF"
            if name in shared:
                return self.dd("_cellobj_" + name)
            if name in s.shared:
                return self.dd("_cell_" + name)
            return "_NT" if name in self.integers else self.dd(name)

        pairs = {part: ", ".join(entry(name, part) for name in s.free_vars) for part in (self.fd, self.fdd)}
        tangents = ", ".join(f"{name!r}: {tangent(name)}" for name in s.free_vars)
        t = s.target
        self.emit(out, indent, f"{self.fd(t)} = _closure_fdata({t}, {{{pairs[self.fd]}}}); "
                               f"{self.fdd(t)} = _closure_fdata({t}, {{{pairs[self.fdd]}}})", s.line)
        self.emit(out, indent, f"{self.dd(t)} = _closure_tangent({t}, {{{tangents}}})", s.line)
        self.emit(out, indent, f"_push({self.fd(t)}); _push({self.fdd(t)})  # the reverse pass reads the captured cotangents", s.line)

    def rev_MakeClosure(self, s: ir.MakeClosure, out: list, indent: int) -> None:
        self.emit(out, indent, f"_closure_fd = _pop(); _closure = _pop()  # undo line {s.line}: the closure {s.target}", s.line)
        for name in s.free_vars:
            if name in self.fn.cell_backed or name in s.shared or name in self.integers:
                continue  # its cotangent lives in the shared cell box, or it has none (an int)
            r, rd = self.rd(name), self.rdd(name)
            self.emit(out, indent, f"{r} = _acc({r}, _closure_rdata(_closure, {name!r})); "
                                   f"{rd} = _acc({rd}, _closure_rdata(_closure_fd, {name!r}))", s.line)

    def init_defined(self, name: str) -> str:
        return f"{self.fd(name)} = {self.fdd(name)} = _NF; {self.dd(name)} = _zt({name})"

    def fwd_With(self, s: ir.With, out: list, indent: int) -> None:
        self.emit(out, indent, f"with {s.items}:", s.line)
        for name in s.defines:
            self.emit(out, indent + 1, self.init_defined(name), s.line)
        self.forward(s.body, out, indent + 1)
        if not s.body and not s.defines:
            self.emit(out, indent + 1, "pass", s.line)

    # ------------------------------------------------------------ reverse

    def _accumulate(self, atom: Any, source: str, out: list, indent: int, line: int) -> None:
        if isinstance(atom, ir.Var) and atom.name not in self.integers:
            r, rd = self.rd(atom.name), self.rdd(atom.name)
            self.emit(out, indent, f"{r} = _acc({r}, _rs[{source}]); {rd} = _acc({rd}, _rsd[{source}])", line)

    def _generic_reverse(self, s: ir.Call, pullback: str, comment: str, out: list, indent: int) -> None:
        line = s.line
        if s.target:
            r, rd = self.rd(s.target), self.rdd(s.target)
            self.emit(out, indent, f"_rs, _rsd = {pullback}({r}, {rd}); {r} = {rd} = _NR{comment}", line)
        else:
            self.emit(out, indent, f"_rs, _rsd = {pullback}(_NR, _NR){comment}", line)
        self._accumulate(s.func, "0", out, indent, line)
        atoms = [*s.args, *(v for _, v in s.kwargs)] + ([s.star_args] if s.star_args is not None else []) \
            + ([s.star_kwargs] if s.star_kwargs is not None else [])
        for position, a in enumerate(atoms, start=1):
            self._accumulate(a, str(position), out, indent, line)

    def rev_Call(self, s: ir.Call, out: list, indent: int) -> None:
        template = getattr(s, "dual_template", None)
        if template is None:
            super().rev_Call(s, out, indent)
            return
        self.emit(out, indent, f"_e = _pop()  # undo line {s.line}: {ir._call_text(s)}", s.line)
        self.emit(out, indent, f"if _e is {template.marker}:", s.line)
        for text in reverse_lines(self, s, template):
            self.emit(out, indent + 1, text, s.line)
        self.emit(out, indent, "else:", s.line)
        self._generic_reverse(s, "_e", "", out, indent + 1)

    def rev_Copy(self, s: ir.Copy, out: list, indent: int) -> None:
        if isinstance(s.source, ir.Var) and s.source.name == s.target or s.target in self.integers:
            return
        target_r, target_rd = self.rd(s.target), self.rdd(s.target)
        comment = f"  # undo line {s.line}: {s.target} = {s.source}"
        if isinstance(s.source, ir.Var) and s.source.name not in self.integers:
            source_r, source_rd = self.rd(s.source.name), self.rdd(s.source.name)
            self.emit(out, indent, f"{source_r} = _acc({source_r}, {target_r}); {source_rd} = _acc({source_rd}, {target_rd})", s.line)
        self.emit(out, indent, f"{target_r} = {target_rd} = _NR{comment}", s.line)

    # ------------------------------------------------------------ whole functions

    def generate(self) -> Generated:
        fn = self.fn
        fwd_name, rev_name = f"{fn.name}_dual_forward", f"{fn.name}_dual_reverse"
        out: list = []
        params = "".join(f", {self._four(p)}" for p in fn.params)
        self.emit(out, 0, f"def {fwd_name}(_tape, _fn, _fn_f, _fn_d, _fn_fd{params}):", fn.first_line)
        self.emit(out, 1, f'"""Forward pass of {fn.name} ({fn.filename}:{fn.first_line}) with tangents."""')
        self.emit(out, 1, "_push = _tape.append")
        global_lines = {}
        for name in fn.global_names:
            global_lines[name] = len(out)
            self.emit(out, 1, f"{name} = _global(_G, {ir.global_key(fn, name)!r}); {self.fd(name)} = _global_fdata({name}); "
                              f"{self.dd(name)} = _zt({name}); {self.fdd(name)} = _global_fdata({name}, 'fdata_tangent')")
        for name in fn.cell_backed:
            # a local that nested functions write (nonlocal): read and written through its cell,
            # with cell boxes for its fdata and fdata tangent and a shared holder for its tangent
            obj = f"_cellobj_{name}"
            self.emit(out, 1, f"if False: {name} = None  # makes {name} a local of this function")
            self.emit(out, 1, f"{obj} = (lambda: {name}).__closure__[0]; {self.fd(obj)} = _new_cell_box(); "
                              f"{self.fdd(obj)} = _new_cell_box(); {self.dd(obj)} = _CellTangent(_NT)")
        for k, name in enumerate(fn.free_vars):
            # a closure made by differentiated code carries its captured values' tangents;
            # values captured from outside are constants (no tangent)
            cell = f"_cell_{name}"
            self.emit(out, 1, f"{cell} = _fn.__closure__[{k}]; {self.fd(cell)} = _cell_fdata(_fn_f, {name!r}, {cell}); "
                              f"{self.dd(cell)} = _cell_tangent(_fn_d, {name!r}, {cell}); "
                              f"{self.fdd(cell)} = _cell_fdata(_fn_fd, {name!r}, {cell}, 'fdata_tangent')")
        self.forward(fn.body, out, 1)
        drop_unread_global_parts(out, global_lines)
        self.emit(out, 0, "")
        self.emit(out, 0, f"def {rev_name}(_tape, _out_r, _out_rd):", fn.first_line)
        self.emit(out, 1, f'"""Reverse pass of {fn.name} with tangents: (rdata, rdata tangent) of each parameter."""')
        self.emit(out, 1, "_pop = _tape.pop")
        names = [n for v in self.vars for n in (self.rd(v), self.rdd(v))]
        for chunk in range(0, len(names), 6):
            self.emit(out, 1, " = ".join(names[chunk:chunk + 6]) + " = _NR")
        last = fn.body[-1]
        if isinstance(last, ir.Return) and isinstance(last.value, ir.Var):
            name = last.value.name
            self.emit(out, 1, f"{self.rd(name)}, {self.rdd(name)} = _out_r, _out_rd", last.line)
        self.reverse(fn.body, out, 1)
        comma = "," if len(fn.params) == 1 else ""
        results = ", ".join(self.rd(p) for p in fn.params)
        tangents = ", ".join(self.rdd(p) for p in fn.params)
        self.emit(out, 1, f"return ({results}{comma}), ({tangents}{comma})")
        deferred_from = self.append_dual_deferred(out)  # long float blocks' other forms (dual_deferred.py)
        text_lines = [text for text, _ in out]
        line_map = {i + 1: line for i, (_, line) in enumerate(out) if line}
        return Generated(fwd_name, rev_name, "\n".join(text_lines) + "\n", self.constants, fn.params, line_map,
                         deferred_from, tuple(self.dual_deferred_names or ()))


# --------------------------------------------------------------------------------------------
# Runtime: forward rules of the reverse program's helpers
# --------------------------------------------------------------------------------------------


def call_rrule2(f: tuple, *args: tuple, **kwargs: tuple) -> tuple[tuple, Callable]:
    """The forward rule of ``runtime.call_rrule``: run ``f`` on 4-tuples ``(primal, fdata,
    tangent, fdata_tangent)``; return the output 4-tuple and a dual pullback."""
    if "_STARSTAR" in kwargs:
        return _calls.call_with_starstar(f, args, kwargs)
    if "_STAR" in kwargs:
        return _calls.call_with_star(f, args, kwargs)
    return dispatch(_SECOND_ORDER, f, f[0], args, kwargs)


_FIRST_ORDER_ONLY = object()  # lookup's answer for a primitive with no second-order rule


def _lookup(fn: Any) -> Any:
    """The second-order rule of ``fn``; or why there is none, for a primitive. (``yb.grad`` and
    ``yb.value_and_grad`` have theirs from ``transform/third_order.py``.)"""
    found = lookup_second_order(fn)
    if found is not None:
        return found
    if RRULES.lookup(fn) is not None:  # a primitive: never transformed from its source
        return _FIRST_ORDER_ONLY
    return None


def _run_rule(found: Any, f: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    """A primitive's second-order rule; in a batched pass, by ``batched_second_order.run_rule``."""
    if found is _FIRST_ORDER_ONLY:
        raise _no_rule(f[0])
    if BATCH.size:
        return _batched.run_rule(found, f, args, kwargs, _run_unbatched)
    return _run_unbatched(found, f, args, kwargs)


def _run_unbatched(found: Any, f: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    """A primitive's second-order rule, after the array_like boundary (``rules/array_like.py``):
    lists of numbers that NumPy would make arrays go through ``np.asarray``'s rule first."""
    fn = f[0]
    # (in a batched pass a Python definition converts its own lists, batched like user code: the
    # conversion here is unbatched and would lay a list of batched floats out the wrong way round)
    keys = array_like.applies(fn) and not (BATCH.size and getattr(found[0], "second_order_kind", None) == "python") \
        and array_like.conversions(fn, [a[0] for a in args], {k: v[0] for k, v in kwargs.items()})
    if not keys:
        return run_second_order(found, f, args, kwargs)
    args, kwargs = list(args), dict(kwargs)
    converted = []
    asarray = lookup_second_order(np.asarray)
    for key in keys:
        values = args if isinstance(key, int) else kwargs
        values[key], convert_pullback = run_second_order(asarray, _ASARRAY, (values[key],), {})
        slot = array_like.rdata_slot(key, len(args), list(kwargs))
        converted.append((slot, convert_pullback))
    try:
        out, pullback = run_second_order(found, f, tuple(args), kwargs)
    except Exception as error:  # a function it called raised after partial work (issue 13)
        reroute(error, lambda inner: _converted_back(inner, converted))
        raise
    return out, _converted_back(pullback, converted)


def _converted_back(pullback: Callable, converted: list) -> Callable:
    """The pullback of a rule whose array_like arguments were converted: through ``np.asarray``'s."""
    def array_like_pullback(dy: Any, dy_d: Any) -> tuple:
        rs, rsd = (list(r) for r in pullback(dy, dy_d))
        for slot, convert_pullback in reversed(converted):
            crs, crsd = convert_pullback(rs[slot], rsd[slot])
            rs[slot], rsd[slot] = crs[1], crsd[1]
        return tuple(rs), tuple(rsd)

    return array_like_pullback


_ASARRAY = (np.asarray, NoFData, NoTangent, NoFData)


def _gradient(f: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    """A call of a function made by ``yb.grad``: third derivatives (``transform/third_order.py``)."""
    if BATCH.size:  # before it runs: the Hessian's columns are then computed one pass each
        raise _batched.Unbatched("third derivatives run one direction per pass")
    return GRADIENT_CALLS["second"](f, args, kwargs)


def _call_function(f: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    rule = dual_rule(f[0])
    _DIRECT.note(f[0], rule)  # later calls may run its passes directly (direct_calls.py)
    return rule(f, *args, **kwargs)


def _call_method(f: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    """A bound method: its function with the owner (and the owner's fdata and tangents) first."""
    fn = f[0]
    if type(fn.__func__) is not types.FunctionType:  # a method of a C type without a rule
        raise _no_rule(fn)
    owner = (fn.__self__, getattr(f[1], "__self__", NoFData), getattr(f[2], "__self__", NoTangent),
             getattr(f[3], "__self__", NoFData))
    func4 = (fn.__func__, NoFData, NoTangent, NoFData)
    found = lookup_second_order(fn.__func__)  # a Python function with a declared rule (scipy.stats' methods)
    if found is not None:
        out, pullback = run_second_order(found, func4, (owner, *args), kwargs)
    else:
        out, pullback = _call_function(func4, (owner, *args), kwargs)  # noted for direct calls

    def method_pullback(dy: Any, dy_d: Any) -> tuple:
        rs, rsd = pullback(dy, dy_d)
        return (_method_rdata(rs[1]),) + rs[2:], (_method_rdata(rsd[1]),) + rsd[2:]

    return out, method_pullback


def _construct(f: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:

    return construct(f, args, kwargs)


def _call_object(f: tuple, call: types.FunctionType, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    """A callable object: its class's ``__call__`` (by its rule if it has one, as yb.flatten's
    unflatten does), the object first."""

    found = lookup_second_order(call)
    try:
        if found is not None:
            out, pullback = run_second_order(found, (call, NoFData, NoTangent, NoFData), (f, *args), kwargs)
        else:
            out, pullback = dual_rule(call)((call, NoFData, NoTangent, NoFData), f, *args, **kwargs)
    except Exception as error:  # a __call__ that raised after partial work: routed alike (issue 13)
        reroute(error, _object_routed)
        raise
    return out, _object_routed(pullback)


def _object_routed(pullback: Callable) -> Callable:
    def call_pullback(dy: Any, dy_d: Any) -> tuple:
        rs, rsd = pullback(dy, dy_d)
        return tuple(rs[1:]), tuple(rsd[1:])  # the object's rdata is the callee's first

    return call_pullback


def _call_vectorized(f: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    """``np.vectorize(pyfunc)(x)``: the dual rule of the same computation written as a list
    comprehension (``rules.second_order.vectorized_call``), with what first order supports."""
    from ..rules.differentiated import vectorized_call

    vec = f[0]
    if vec.signature is not None:
        raise SecondOrderError(f"yb.hvp/yb.hessian: {describe_callable(vec)} is supported only without a "
                               "signature; call the function in a loop instead")
    pyfunc = (vec.pyfunc, pyfunc_fdata(f[1]), pyfunc_tangent(f[2]), pyfunc_fdata(f[3]))  # (numpy_vectorize.py)
    if kwargs or len(args) != 1 or vec.excluded:
        return _vectorized_several(vec, pyfunc, args, kwargs)
    fast = over_elements(vec, pyfunc, args[0], call_rrule2)  # a float64 array, element by element (dual_vectorize.py)
    if fast is not None:
        return fast
    out, pullback = dual_rule(vectorized_call)((vectorized_call, NoFData, NoTangent, NoFData), pyfunc, *args)

    def vectorized_pullback(dy: Any, dy_d: Any) -> tuple:
        rs, rsd = pullback(dy, dy_d)  # (definition, pyfunc, x): the object's rdata is none
        return (NoRData, rs[2]), (NoRData, rsd[2])

    return out, vectorized_pullback


def _vectorized_several(vec: np.vectorize, pyfunc: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    """Several arguments, keywords or ``excluded`` ones: the dual rule of the definition
    ``rules.differentiated.vectorized_call_of``."""
    from ..rules.differentiated import vectorized_call_of

    constants = [(c, NoFData, NoTangent, NoFData) for c in (frozenset(vec.excluded), vec.otypes)]
    out, pullback = dual_rule(vectorized_call_of)((vectorized_call_of, NoFData, NoTangent, NoFData), pyfunc,
                                                  *constants, *args, **kwargs)

    def several_pullback(dy: Any, dy_d: Any) -> tuple:
        rs, rsd = pullback(dy, dy_d)  # (definition, pyfunc, excluded, otypes, *args, **kwargs)
        return (NoRData, *rs[4:]), (NoRData, *rsd[4:])

    return out, several_pullback



def _method_rdata(owner_rdata: Any) -> Any:
    """A bound method's rdata carries its owner's (what ``getattr``'s pullback reads)."""
    from ..tangents import Tangent

    return NoRData if owner_rdata is NoRData else Tangent(types.MethodType, {"__self__": owner_rdata})


def _call_python(method: types.FunctionType, args: tuple) -> tuple[tuple, Callable]:
    """Call a user class's Python method (a dunder, a property function) through its dual rule,
    or its declared second-order rule (``np.poly1d.__truediv__``'s definition)."""
    f4 = (method, NoFData, NoTangent, NoFData)
    found = lookup_second_order(method)
    if found is not None:
        return run_second_order(found, f4, args, {})
    out, pullback = dual_rule(method)(f4, *args)
    return out, pullback


def _property_get(args: tuple) -> tuple[tuple, Callable] | None:
    """``getattr(obj, name)`` for a property of a user class: its getter's dual rule."""
    getter = property_function(getattr, [a[0] for a in args])
    if getter is None:
        return None
    out, pullback = _call_python(getter, (args[0],))
    rest = (NoRData,) * (len(args) - 1)

    def getter_pullback(dy: Any, dy_d: Any) -> tuple:
        rs, rsd = pullback(dy, dy_d)
        return (NoRData, rs[1]) + rest, (NoRData, rsd[1]) + rest

    return out, getter_pullback


def _property_set(args: tuple) -> tuple[tuple, Callable] | None:
    """``setattr(obj, name, value)`` for a property of a user class: its setter's dual rule."""
    setter = property_function(setattr, [a[0] for a in args])
    if setter is None:
        return None
    out, pullback = _call_python(setter, (args[0], args[2]))

    def setter_pullback(dy: Any, dy_d: Any) -> tuple:
        rs, rsd = pullback(dy, dy_d)
        return (NoRData, rs[1], NoRData, rs[2]), (NoRData, rsd[1], NoRData, rsd[2])

    return out, setter_pullback


def _operator_on_user_type(fn: Any, args: tuple, kwargs: dict) -> tuple[tuple, Callable] | None:
    """Python's operator protocol for user classes (``transform/protocols.py``)."""
    if kwargs or not args:
        return None
    return run_operator(fn, args, lambda a: a[0], _call_dunder, lambda result: result[0][0])


def _call_dunder(candidate: Any, operands: tuple) -> tuple[tuple, Callable]:
    out, pullback = _call_python(candidate.method, operands)
    if not candidate.reflected:
        return out, pullback

    def reflected_pullback(dy: Any, dy_d: Any) -> tuple:  # the operands were swapped: so are their rdata
        rs, rsd = pullback(dy, dy_d)
        return (NoRData, rs[2], rs[1]), (NoRData, rsd[2], rsd[1])

    return out, reflected_pullback


def _no_rule(fn: Any) -> SecondOrderError:
    return SecondOrderError(
        f"yb.hvp/yb.hessian: no second-order rule for {describe_callable(fn)}. Second order covers "
        "Python functions, methods and classes, and the primitives marked in docs/rules.md. What to do: "
        "rewrite the call with covered functions, or declare its second order with "
        "yuebing.rules.second_order.with_vjp(f, vjp) (docs/custom-derivatives.md, 'Rules for a function without one')"
    )


def zero_tangent_of(value: Any) -> Any:
    from .forward_runtime import zero_tangent_of as forward_zero

    return forward_zero(value)


def runtime_namespace() -> dict[str, Any]:
    from .forward_runtime import global_tangent
    from .runtime import (SharedBox, acc, cell_fdata, closure_fdata, closure_rdata, global_fdata, global_value,
                          new_cell_box, read_only, user_globals, with_user_globals)

    return {"_NF": NoFData, "_NR": NoRData, "_NT": NoTangent, "_rrule2": call_rrule2, "_acc": acc,
            "_global": global_value, "_read_only": read_only, "_SELF": _self_reference(), "_global_fdata": global_fdata, "_cell_fdata": cell_fdata,
            "_zt": _constant_tangent(global_tangent), "_closure_fdata": closure_fdata,
            "_closure_rdata": closure_rdata, "_closure_tangent": closure_tangent,
            "_cell_tangent": cell_tangent, "_with_user_globals": with_user_globals,
            "_user_globals": user_globals, "_SHARED": SharedBox, "_new_cell_box": new_cell_box, "_CellTangent": CellTangent,
            "_FT": FLOAT_TYPES, "_ND": np.ndarray, "_math": math, "_at_element": at_element, "_nan_batch": nan_batch, "_F64": np.dtype(np.float64), "_DFAST": _DFAST,
            "_DWRITE": _DWRITE, "_caught": caught, **TRY_NAMES, **DUAL_BLOCKS, **DUAL_LOOPS, **DUAL_TUPLES}


_DFAST = Fast()  # pushed by an inline call of the dual program (dual_templates.py)
_DWRITE = Fast()  # pushed by an inline write a[i] = v of the dual program
EFFECT_MARKERS.add(_DWRITE)


class CellTangent:
    """The tangent of a closure cell: the tangent of the value it holds (a cell written through
    ``nonlocal`` shares one holder between the function and its closures)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def closure_tangent(fn: Any, captured: dict) -> Any:
    """The tangent of a function made inside differentiated code: its captured values' tangents."""
    from ..tangents import Tangent

    if not isinstance(fn, types.FunctionType) or not fn.__closure__:
        return NoTangent
    from .runtime import SELF_REFERENCE

    fields = {}
    for name in fn.__code__.co_freevars:
        value = captured.get(name, NoTangent)
        fields[name] = value if isinstance(value, CellTangent) else CellTangent(value)  # shared holders stay shared
    result = Tangent(types.FunctionType, fields)
    for name, value in captured.items():
        if value is SELF_REFERENCE:  # a recursive nested function: its own tangent
            fields[name].value = result
    return result


def cell_tangent(fn_d: Any, name: str, cell: Any = None) -> Any:
    """The tangent holder of closure variable ``name``; for a closure made outside, its cell's
    one holder for the whole call (outside state, ``rules/outside_state.py``)."""
    if cell is not None and (holder := outside_state.registered("tangent", cell)) is not None:
        return holder  # a cell a class made inside the differentiated code captures (rules/local_classes.py)
    if isinstance(fn_d, Tangent):
        found = fn_d.fields.get(name, NoTangent)
        if isinstance(found, MutableTangent):  # a closure's tangent in the tangent model's format
            return CellTangent(found.fields.get("cell_contents", NoTangent))  # (a direction given to yb.hvp)
        if found is not NoTangent:
            return found
    if cell is None or not outside_state.active() or not holds_mutable(cell):
        return NoTangent
    return outside_state.shared("tangent", cell, lambda c: CellTangent(
        outside_state.shared("tangent", c.cell_contents, zero_tangent_of)))


def _self_reference() -> Any:
    from .runtime import SELF_REFERENCE

    return SELF_REFERENCE


def _constant_tangent(global_tangent: Callable) -> Callable:
    def zt(value: Any) -> Any:
        t = global_tangent(value)
        return zero_tangent_of(value) if t is NoTangent and type(value) is float else t

    return zt


# --------------------------------------------------------------------------------------------
# Dual rules of Python functions
# --------------------------------------------------------------------------------------------

_DUAL = CodeCache()  # DualRule per function code and module
_counter = itertools.count()


def dual_rule(fn: types.FunctionType) -> "DualRule":
    """The forward-over-reverse rule of Python function ``fn``, generated on first use."""
    rule = _DUAL.get(fn)
    if rule is None:
        from .forward_runtime import _refuse_yuebing_internals

        _refuse_yuebing_internals(fn, "yb.hvp/yb.hessian")
        rule = _DUAL.put(fn, DualRule(fn))
    return rule


class DualRule(SourceFunction):
    """Forward-over-reverse rule of a Python function, generated from its source."""

    def __init__(self, fn: types.FunctionType) -> None:
        super().__init__(fn)
        self.generated = DualReverseGenerator(self.ir, fn.__globals__).generate()
        filename = f"<yuebing hvp {fn.__qualname__} #{next(_counter)}>"
        source = self.generated.source
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        namespace = runtime_namespace()
        namespace.update(self.generated.constants)
        namespace["_G"] = fn.__globals__
        # classes defined in the function belong to its module (their tangent type, their repr)
        namespace["__name__"] = fn.__globals__.get("__name__", "__main__")
        from .codegen import _CompiledLater, _Deferred, compile_checked

        line_map = getattr(self.generated, "line_map", None)
        if self.generated.deferred_from:  # functions called only now and then, compiled on their first call
            lines = source.splitlines(True)
            start = self.generated.deferred_from - 1
            source, rest = "".join(lines[:start]), "\n" * start + "".join(lines[start:])  # at their own line numbers
            later = _CompiledLater(rest, filename, fn, line_map, namespace)
            namespace.update({name: _Deferred(name, later) for name in self.generated.deferred_names})
        code = compile_checked(source, filename, fn, line_map, "second-order")
        exec(code, namespace)  # noqa: S102 - our own generated code
        self.forward = namespace[self.generated.forward_name]
        self.reverse = namespace[self.generated.reverse_name]

    @property
    def source(self) -> str:
        return self.generated.source

    def _bind(self, fn: Any, args: tuple, kwargs: dict) -> tuple[list, list | None]:
        """A 4-tuple for each parameter of the generated function, in its order, and where each
        call argument's rdata comes from: ``(param, None)`` or ``(param, index in *args)``
        (None when the arguments are the parameters, in order)."""
        if self.simple and not kwargs and len(args) == self.n_params:
            return list(args), None
        from ..rules.util import zero_fdata

        from ..rules.core import CoDual
        from ..rules.util import slot_tangent

        keys = list(range(len(args))) + list(kwargs)
        given = {**dict(enumerate(args)), **kwargs}
        result, routes = [], {}
        for j, (kind, payload) in enumerate(self.plan(fn, args, kwargs)):
            if kind == "starstar":  # a dict: slots for the fdata and its tangent
                items = {k: given[key] for k, key in payload.items()}
                routes.update({key: (j, k) for k, key in payload.items()})
                result.append(({k: a[0] for k, a in items.items()},
                               {k: slot_tangent(CoDual(a[0], a[1])) for k, a in items.items()},
                               {k: a[2] for k, a in items.items()},
                               {k: slot_tangent(CoDual(a[0], a[3])) for k, a in items.items()}))
            elif kind == "star":  # a tuple of the 4-tuples
                items = [given[key] for key in payload]
                routes.update({key: (j, i) for i, key in enumerate(payload)})
                parts = [tuple(item[k] for item in items) for k in range(4)]
                for k, empty in ((1, NoFData), (2, NoTangent), (3, NoFData)):
                    if all(p is empty for p in parts[k]):
                        parts[k] = empty
                result.append(tuple(parts))
            elif kind == "arg":
                routes[payload] = (j, None)
                result.append(given[payload])
            else:  # a default value: a constant
                result.append((payload, zero_fdata(payload), zero_tangent_of(payload), zero_fdata(payload)))
        return result, [routes[k] for k in keys]

    def __call__(self, f: tuple, *args: tuple, **kwargs: tuple) -> tuple[tuple, Callable]:
        if TRACKING.depth and TRACKING.here():  # inside a try body: work done before an exception is kept
            return _partial.call_dual_tracked(self, f, args, kwargs)
        params, routes = self._bind(f[0], args, kwargs)
        flat = [part for p in params for part in p]
        tape: list = []
        try:
            out = self.forward(tape, *f, *flat)
        except Exception as error:
            note_user_lines(self, error, _DIRECT, " (second order)")
            mark_partial(error, self.name, tape)  # see transform/exceptions.py
            raise
        reverse = self.reverse

        def pullback(dy: Any, dy_d: Any) -> tuple:
            rs, rsd = reverse(tape, dy, dy_d)
            if routes is None:
                return (NoRData,) + tuple(rs), (NoRData,) + tuple(rsd)
            return _partial.route_dual(rs, routes, params, 1), _partial.route_dual(rsd, routes, params, 3)

        return out, pullback


# --------------------------------------------------------------------------------------------
# Forward mode over yb.grad: forward-over-reverse inside a forward-mode program
# --------------------------------------------------------------------------------------------


def _dual_closure_tangent(forward_tangent: Any) -> Any:
    """A forward-mode closure tangent (one box per captured variable) in the dual format."""
    from ..tangents import MutableTangent, Tangent

    if not isinstance(forward_tangent, Tangent):
        return NoTangent
    fields = {}
    for name, box in forward_tangent.fields.items():
        value = box.fields.get("cell_contents", NoTangent) if isinstance(box, MutableTangent) else NoTangent
        fields[name] = CellTangent(value)
    return Tangent(types.FunctionType, fields)


# what second order does with each kind of callable (transform/protocols.py)
_SECOND_ORDER = CallMode(
    lookup=_lookup, run_rule=_run_rule, property_get=_property_get, property_set=_property_set,
    operator=_operator_on_user_type, gradient=_gradient, function=_call_function, method=_call_method,
    construct=_construct, partial=_calls.call_partial, vectorized=_call_vectorized, callable_object=_call_object,
    missing=lambda fn: _no_rule(fn), constant=lambda fn: (fn, NoFData, NoTangent, NoFData),
)

__all__ = ["DualReverseGenerator", "DualRule", "SecondOrderError", "call_rrule2", "dual_rule"]

_lifting.DUAL_RULE = dual_rule
_partial.SECOND = (DualReverseGenerator, runtime_namespace)
_calls.CALL_RRULE2 = call_rrule2
