"""Forward mode written as plain Python, for third derivatives.

The Hessian of a function ``f`` that itself calls ``yb.grad(g)`` needs, in the dual pullback of
that call, the third-derivative term ``D^3 g[xdot, ybar]``. It is the Hessian-vector product of
``psi(x, u) = D g(x)[u]``, the forward derivative of ``g``: if ``psi`` is a Python program that
second order can differentiate, forward-over-reverse gives third derivatives of ``g`` with no new
rule layer. This module writes that program.

``plain_forward(g)`` is the forward-mode program of ``g`` (``forward.py``'s generator, with the
same variables ``v``/``v_t`` and control flow) in which every call site is one call of a single
function, ``jvp_call``::

    t, t_t = _jvp(f, f_t, a, a_t, b, b_t, axis=0, _t_axis=_NT)   # line 12: t = f(a, b, axis=0)

and nothing else is opaque: no ``Dual`` objects, no inline templates. Run as it is, ``jvp_call``
is forward mode of one call. Under second order, ``jvp_call`` has its own rule
(``transform/third_order.py``): a primitive's forward derivative assembled from its second-order
rules by class, a Python function's from its own plain forward program, differentiated like user
code. A closure's captured values are read as constants (third order refuses a gradient of a
function that captures differentiated variables before it gets here); functions defined inside
the program that capture its variables, and variables written through ``nonlocal``, raise
``NestedDifferentiationError`` (a nested helper capturing nothing is followed like a global one).
"""
from __future__ import annotations

import re
import types
from typing import Any

from ..ir import nodes as ir
from .forward import ForwardGenerator, GeneratedForward, compile_forward
from .protocols import CodeCache

TANGENT_KEYWORD = "_t_"  # a keyword argument's tangent travels as ``_t_<name>=``


#: what to do about a construct third order does not follow
RESTRUCTURE = "define it at module level and pass what it needs as arguments"
PRIMITIVE = ("take that part out of the function under yb.grad, or take the Hessian of the gradient's "
             "function itself (docs/limitations.md lists what third order covers)")


def _refusal(what: str, advice: str = RESTRUCTURE) -> Exception:
    from .forward_runtime import NestedDifferentiationError

    return NestedDifferentiationError(
        f"third derivatives (yb.hvp/yb.hessian of a function that calls yb.grad) do not support "
        f"{what} in the function whose gradient is taken yet; {advice}")


class PlainForwardGenerator(ForwardGenerator):
    """``ForwardGenerator`` with every call site written as ``_jvp(f, f_t, a, a_t, ...)``."""

    def fwd_Call(self, s: ir.Call, out: list, indent: int) -> None:
        if s.star_args is not None or s.star_kwargs is not None:
            raise _refusal(f"calls with *args or **kwargs ({ir._call_text(s)}, line {s.line})",
                           "pass the arguments one by one")
        parts = [self.primal(s.func), self.tangent(s.func)]
        for a in s.args:
            parts += [self.primal(a), self.tangent(a)]
        for k, v in s.kwargs:
            parts += [f"{k}={self.primal(v)}", f"{TANGENT_KEYWORD}{k}={self.tangent(v)}"]
        call = f"_jvp({', '.join(parts)})"
        comment = f"  # line {s.line}: {ir._call_text(s)}" if s.line else ""
        target = f"{s.target}, {self.td(s.target)} = " if s.target else ""
        self.emit(out, indent, f"{target}{call}{comment}", s.line)

    def statements(self, body: list, out: list, indent: int) -> None:
        """Statement by statement: every call stays a ``_jvp`` call (no fused float or array
        blocks, whose arithmetic second order would not see)."""
        for s in body:
            getattr(self, f"fwd_{type(s).__name__}")(s, out, indent)

    def fwd_MakeClosure(self, s: ir.MakeClosure, out: list, indent: int) -> None:
        # a nested function capturing nothing is a helper like a module-level one (its calls are
        # ``_jvp`` calls, followed by their own plain programs); a captured variable's tangent
        # would be read as a constant
        if s.free_vars:
            raise _refusal(f"nested functions capturing variables ({s.target}, line {s.line}: "
                           f"{', '.join(s.free_vars)})", "pass them to it as arguments")
        start = len(out)
        super().fwd_MakeClosure(s, out, indent)
        for k in range(start, len(out)):  # a function capturing nothing has no tangent
            if "_closure_tangent(" in out[k][0]:
                out[k] = ("    " * indent + f"{self.td(s.target)} = _NT  # line {s.line}: the function {s.target}", s.line)

    def generate(self) -> GeneratedForward:
        if self.fn.cell_backed:
            names = ", ".join(self.fn.user_names.get(v, v) for v in self.fn.cell_backed)
            raise _refusal(f"variables that nested functions write or capture while they are rebound ({names})")
        generated = super().generate()
        # second order's program of this one has runtime names of its own (``_fn``, ``_global``,
        # ``_G``, ...): ours get a prefix so that they stay distinct
        name = generated.name.replace("_jvp", "_plain_jvp")
        source = generated.source.replace(f"def {generated.name}(", f"def {name}(", 1)
        source = _RUNTIME_NAME.sub(lambda m: "_pf" + m.group(0), source)
        return GeneratedForward(name, source, generated.constants, generated.params, generated.line_map)


#: the forward runtime's names that plain programs use, renamed ``_pf...`` in them, as are the
#: function's own (``_fn``, ``_fn_t``) and the normaliser's early-return flag (``_returned``): second
#: order's program of a plain program has names of its own that would meet them
RUNTIME_NAMES = ("_global", "_G", "_gt", "_zt", "_NT", "_cell_tangent")
_RUNTIME_NAME = re.compile(r"\b(?:" + "|".join(RUNTIME_NAMES + ("_returned", "_fn", "_fn_t")) + r")\b")


_PLAIN = CodeCache()  # plain forward program per function code and module


def plain_forward(fn: types.FunctionType) -> types.FunctionType:
    """The plain forward program of Python function ``fn`` (cached per code object): called as
    ``program(fn, fn_t, x, x_t, ...)`` it returns ``(value, tangent)``."""
    program = _PLAIN.get(fn)
    if program is None:
        from .forward_runtime import _refuse_yuebing_internals
        from .protocols import SourceFunction

        _refuse_yuebing_internals(fn, "yb.hvp/yb.hessian over yb.grad")
        source = SourceFunction(fn)
        program = _compile(PlainForwardGenerator(source.ir, fn.__globals__).generate(), fn)
        program.__yuebing_source__ = source  # its signature binds calls (transform/third_order.py)
        _PLAIN.put(fn, program)
    return program


def _compile(generated: GeneratedForward, fn: types.FunctionType) -> types.FunctionType:
    """``forward.compile_forward`` under a file name that second order may read (it
    differentiates this program from its source), the runtime's names also as ``_pf...``."""
    from . import forward_runtime as R

    renamed = {"_pf" + name: value for name, value in R.runtime_namespace().items() if name in RUNTIME_NAMES}
    renamed.update(_pf_G=fn.__globals__, _jvp=jvp_call)
    return compile_forward(generated, fn, R.runtime_namespace(), "plain forward", renamed)


def split_call(args: tuple, kwargs: dict) -> tuple[list, list, dict, dict]:
    """``(primals, tangents, keyword primals, keyword tangents)`` of ``jvp_call``'s arguments
    after ``f, f_t``."""
    primals, tangents = list(args[0::2]), list(args[1::2])
    kw = {k: v for k, v in kwargs.items() if not k.startswith(TANGENT_KEYWORD)}
    kw_t = {k: kwargs[TANGENT_KEYWORD + k] for k in kw}
    return primals, tangents, kw, kw_t


def jvp_call(f: Any, f_t: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """Forward mode of one call ``f(*args)``, its arguments given as ``primal, tangent`` pairs:
    ``(value, tangent)``. (Under second order, ``transform/third_order.py``'s rule runs instead.)"""
    from ..rules.core import Dual
    from .forward_runtime import call_frule

    primals, tangents, kw, kw_t = split_call(args, kwargs)
    result = call_frule(Dual(f, f_t), *(Dual(p, t) for p, t in zip(primals, tangents)),
                        **{k: Dual(v, kw_t[k]) for k, v in kw.items()})
    return result.primal, result.tangent


__all__ = ["PlainForwardGenerator", "jvp_call", "plain_forward", "split_call"]
