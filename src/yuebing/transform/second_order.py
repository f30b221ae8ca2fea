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

import inspect
import itertools
import linecache
import types
from typing import Any, Callable

from ..rules.core import describe_callable
from ..tangents import NoFData, NoRData, NoTangent
from . import ir
from .reverse import Generated, ReverseGenerator, _has_reverse_work, _is_literal


def _has_float(value: tuple) -> bool:
    return any(isinstance(v, (float, complex)) or isinstance(v, tuple) and _has_float(v) for v in value)


class SecondOrderError(TypeError):
    """A construct or function that forward-over-reverse (hvp, hessian) does not support yet."""


# --------------------------------------------------------------------------------------------
# Generator
# --------------------------------------------------------------------------------------------


class DualReverseGenerator(ReverseGenerator):
    """The reverse-mode program of a function with forward-mode tangents on every value."""

    def __init__(self, fn: ir.Function) -> None:
        super().__init__(fn, None)  # no globals: no inline templates, only generic call sites
        if fn.cell_backed:
            raise SecondOrderError(
                f"{fn.name} ({fn.filename}:{fn.first_line}) has variables that nested functions write "
                "(nonlocal); yb.hvp/yb.hessian do not support that yet. Return the values instead"
            )
        used = set(self.vars) | set(fn.global_names) | {f"_cell_{v}" for v in fn.free_vars}
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

    def _generic_call(self, s: ir.Call, out: list, indent: int) -> None:
        args = [self.codual(a) for a in s.args]
        args += [f"{k}={self.codual(v)}" for k, v in s.kwargs]
        if s.star_args is not None:
            args.append(f"_STAR={self.codual(s.star_args)}")
        if s.star_kwargs is not None:
            args.append(f"_STARSTAR={self.primal(s.star_kwargs)}")
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
        raise SecondOrderError(
            f"line {s.line} of {self.fn.filename}: yb.hvp/yb.hessian do not support nested function "
            "definitions or lambdas inside the differentiated function yet; define the function at "
            "module level and pass what it needs as arguments"
        )

    def fwd_With(self, s: ir.With, out: list, indent: int) -> None:
        self.emit(out, indent, f"with {s.items}:", s.line)
        for name in s.defines:
            self.emit(out, indent + 1, f"{self.fd(name)} = {self.fdd(name)} = _NF; {self.dd(name)} = _zt({name})", s.line)
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
        atoms = [*s.args, *(v for _, v in s.kwargs)] + ([s.star_args] if s.star_args is not None else [])
        for position, a in enumerate(atoms, start=1):
            self._accumulate(a, str(position), out, indent, line)

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
        for name in fn.global_names:
            self.emit(out, 1, f"{name} = _global(_G, {name!r}); {self.fd(name)} = _global_fdata({name}); "
                              f"{self.dd(name)} = _zt({name}); {self.fdd(name)} = _global_fdata({name})")
        for k, name in enumerate(fn.free_vars):
            # captured variables are constants of the differentiation (zero tangent)
            cell = f"_cell_{name}"
            self.emit(out, 1, f"{cell} = _fn.__closure__[{k}]; {self.fd(cell)} = _cell_fdata(_fn_f, {name!r}); "
                              f"{self.dd(cell)} = _NT; {self.fdd(cell)} = _NF")
        self.forward(fn.body, out, 1)
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
        text_lines = [text for text, _ in out]
        line_map = {i + 1: line for i, (_, line) in enumerate(out) if line}
        return Generated(fwd_name, rev_name, "\n".join(text_lines) + "\n", self.constants, fn.params, line_map)


# --------------------------------------------------------------------------------------------
# Runtime: forward rules of the reverse program's helpers
# --------------------------------------------------------------------------------------------


def call_rrule2(f: tuple, *args: tuple, **kwargs: tuple) -> tuple[tuple, Callable]:
    """The forward rule of ``runtime.call_rrule``: run ``f`` on 4-tuples ``(primal, fdata,
    tangent, fdata_tangent)``; return the output 4-tuple and a dual pullback."""
    from ..rules.core import RRULES
    from ..rules.second_order import lookup_second_order, run_second_order

    fn = f[0]
    if "_STARSTAR" in kwargs:
        kwargs.update(_constant_keywords(fn, kwargs.pop("_STARSTAR")))
    if "_STAR" in kwargs:
        return _call_with_star(f, args, kwargs)
    found = lookup_second_order(fn)
    if found is not None:
        return run_second_order(found, f, args, kwargs)
    if RRULES.lookup(fn) is not None:  # a primitive: never transformed from its source
        raise _no_rule(fn)
    if type(fn) is types.FunctionType:
        return dual_rule(fn)(f, *args, **kwargs)
    if isinstance(fn, type):
        from ..rules.second_order import construct

        return construct(f, args, kwargs)
    if type(fn) is types.MethodType and type(fn.__func__) is types.FunctionType:
        owner = (fn.__self__, getattr(f[1], "__self__", NoFData), getattr(f[2], "__self__", NoTangent),
                 getattr(f[3], "__self__", NoFData))
        (out, pullback) = dual_rule(fn.__func__)((fn.__func__, NoFData, NoTangent, NoFData), owner, *args, **kwargs)

        def method_pullback(dy: Any, dy_d: Any) -> tuple:
            rs, rsd = pullback(dy, dy_d)
            return (rs[1],) + rs[2:], (rsd[1],) + rsd[2:]  # the method's rdata is its owner's

        return out, method_pullback
    raise _no_rule(fn)


def _call_with_star(f: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    """``f(*args, *seq, **kwargs)``: the elements of ``seq`` become arguments (each with its slot of
    the sequence's fdata, tangent and fdata tangent), and their rdata go back to ``seq``."""
    from ..rules.core import CoDual
    from .runtime import _expand_star, _route_star_rdata

    star = kwargs.pop("_STAR")
    seq, seq_f, seq_d, seq_fd = star
    primal_parts = _expand_star(CoDual(seq, seq_f))
    tangent_parts = _expand_star(CoDual(seq, seq_fd))
    tangents = list(seq_d) if isinstance(seq_d, (list, tuple)) else [zero_tangent_of(x) for x in primal_parts]
    elements = tuple((p.primal, p.fdata, t, q.fdata) for p, q, t in zip(primal_parts, tangent_parts, tangents))
    out, pullback = call_rrule2(f, *args, *elements, **kwargs)
    n_plain, n_kw = len(args), len(kwargs)

    def routed(dy: Any, dy_d: Any) -> tuple:
        rs, rsd = pullback(dy, dy_d)
        result = []
        for seq_fdata, r in ((seq_f, rs), (seq_fd, rsd)):
            r = list(r)
            plain = r[:1 + n_plain]
            stars = r[1 + n_plain:1 + n_plain + len(elements)]
            keyword = r[1 + n_plain + len(elements):]
            result.append(tuple(plain + keyword[:n_kw] + [_route_star_rdata(CoDual(seq, seq_fdata), stars)]))
        return result[0], result[1]

    return out, routed


def _constant_keywords(fn: Any, mapping: Any) -> dict:
    """``f(**mapping)``: keywords passed this way are constants of second order (flags, axes)."""
    from .forward_runtime import zero_tangent_of

    result = {}
    for key, value in mapping.items():
        if zero_tangent_of(value) is not NoTangent:
            raise SecondOrderError(
                f"yb.hvp/yb.hessian: the differentiable value {key}= reaches {describe_callable(fn)} "
                "through **kwargs, which second order does not follow yet; pass it by name"
            )
        result[key] = (value, NoFData, NoTangent, NoFData)
    return result


def _no_rule(fn: Any) -> SecondOrderError:
    return SecondOrderError(
        f"yb.hvp/yb.hessian: no second-order rule for {describe_callable(fn)}. Second order covers "
        "Python functions, methods and classes, and the primitives marked in docs/rules.md; "
        "rewrite the call with covered functions, or declare the function's class in "
        "yuebing/rules/second_order.py (linear, multilinear, with_vjp)"
    )


def zero_tangent_of(value: Any) -> Any:
    from .forward_runtime import zero_tangent_of as forward_zero

    return forward_zero(value)


def runtime_namespace() -> dict[str, Any]:
    from .forward_runtime import global_tangent
    from .runtime import acc, cell_fdata, global_fdata, global_value

    return {"_NF": NoFData, "_NR": NoRData, "_NT": NoTangent, "_rrule2": call_rrule2, "_acc": acc,
            "_global": global_value, "_global_fdata": global_fdata, "_cell_fdata": cell_fdata,
            "_zt": _constant_tangent(global_tangent)}


def _constant_tangent(global_tangent: Callable) -> Callable:
    def zt(value: Any) -> Any:
        t = global_tangent(value)
        return zero_tangent_of(value) if t is NoTangent and type(value) is float else t

    return zt


# --------------------------------------------------------------------------------------------
# Dual rules of Python functions
# --------------------------------------------------------------------------------------------

_DUAL: dict[types.CodeType, "DualRule"] = {}
_counter = itertools.count()


def dual_rule(fn: types.FunctionType) -> "DualRule":
    """The forward-over-reverse rule of Python function ``fn``, generated on first use."""
    rule = _DUAL.get(fn.__code__)
    if rule is None:
        from .forward_runtime import _refuse_yuebing_internals

        _refuse_yuebing_internals(fn, "yb.hvp/yb.hessian")
        rule = _DUAL[fn.__code__] = DualRule(fn)
    return rule


class DualRule:
    """Forward-over-reverse rule of a Python function, generated from its source."""

    def __init__(self, fn: types.FunctionType) -> None:
        from ..frontend.normalise import normalise

        self.name = fn.__qualname__
        self.ir = normalise(fn)
        self.generated = DualReverseGenerator(self.ir).generate()
        filename = f"<yuebing hvp {fn.__qualname__} #{next(_counter)}>"
        source = self.generated.source
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        namespace = runtime_namespace()
        namespace.update(self.generated.constants)
        namespace["_G"] = fn.__globals__
        exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - our own generated code
        self.forward = namespace[self.generated.forward_name]
        self.reverse = namespace[self.generated.reverse_name]
        self.signature = inspect.signature(fn)
        self.n_params = len(self.ir.params)
        code = fn.__code__
        self.simple = not (code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)) and code.co_kwonlyargcount == 0

    @property
    def source(self) -> str:
        return self.generated.source

    def _bind(self, args: tuple, kwargs: dict) -> list:
        if self.simple and not kwargs and len(args) == self.n_params:
            return list(args)
        if not self.simple:
            raise SecondOrderError(f"yb.hvp/yb.hessian: {self.name} takes *args, **kwargs or keyword-only "
                                   "parameters, which second order does not support yet")
        from ..rules.util import zero_fdata

        marker = object()
        try:
            bound = self.signature.bind(*[(marker, a) for a in args], **{k: (marker, v) for k, v in kwargs.items()})
        except TypeError as error:
            raise TypeError(f"{self.name}(): {error}") from None
        bound.apply_defaults()
        result = []
        for name in self.ir.params:
            value = bound.arguments[name]
            if isinstance(value, tuple) and len(value) == 2 and value[0] is marker:
                result.append(value[1])
            else:  # a default value: a constant
                result.append((value, zero_fdata(value), zero_tangent_of(value), zero_fdata(value)))
        return result

    def __call__(self, f: tuple, *args: tuple, **kwargs: tuple) -> tuple[tuple, Callable]:
        params = self._bind(args, kwargs)
        flat = [part for p in params for part in p]
        tape: list = []
        out = self.forward(tape, *f, *flat)
        reverse = self.reverse

        def pullback(dy: Any, dy_d: Any) -> tuple:
            rs, rsd = reverse(tape, dy, dy_d)
            return (NoRData,) + tuple(rs), (NoRData,) + tuple(rsd)

        return out, pullback


__all__ = ["DualReverseGenerator", "DualRule", "SecondOrderError", "call_rrule2", "dual_rule"]
