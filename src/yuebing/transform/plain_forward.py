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
code. The captured values of a closure made outside are read as constants (third order refuses a
gradient of a function that captures differentiated variables before it gets here). A function
defined inside the program that captures its variables gets its own plain program nested in this
one, a closure over the variables and their tangents, as its tangent (``plain_closures.py``);
variables the user's code keeps in cells (``nonlocal``, late binding) are plain locals here. A
nested helper capturing nothing is followed like a global one.
"""
from __future__ import annotations

import builtins
import math
import operator
import dataclasses
import re
import types
from typing import Any

import numpy as np

from ..ir import nodes as ir
from ..ir import primitives as P
from . import plain_closures
from .plain_closures import bind, is_plain_closure, nested_ir, plain_name
from .closure_cells import share_cells
from .plain_constants import ConstantArguments
from .forward import ForwardGenerator, GeneratedForward, compile_forward
from .protocols import CodeCache

TANGENT_KEYWORD = "_t_"  # a keyword argument's tangent travels as ``_t_<name>=``
STAR, STARSTAR = "_yb_star", "_yb_starstar"  # ``*args`` and ``**kwargs`` of a call, as keywords


#: what to do about a construct third order does not follow
RESTRUCTURE = "define it at module level and pass what it needs as arguments"
CLOSURE_ADVICE = "call it directly, or define it at module level and pass what it needs as arguments"
PRIMITIVE = ("take that part out of the function under yb.grad, or take the Hessian of the gradient's "
             "function itself (docs/semantics.md, \"Third derivatives\", lists what third order covers)")


def _refusal(what: str, advice: str = RESTRUCTURE) -> Exception:
    from .forward_runtime import NestedDifferentiationError

    return NestedDifferentiationError(
        f"third derivatives (yb.hvp/yb.hessian of a function that calls yb.grad) do not support "
        f"{what} in the function whose gradient is taken yet; {advice}")


_POWERS = (np.power, np.float_power, math.pow, operator.pow, builtins.pow)


class PlainForwardGenerator(ForwardGenerator):
    """``ForwardGenerator`` with every call site written as ``_jvp(f, f_t, a, a_t, ...)``.

    ``captured`` (a nested function's program, ``plain_closures.py``): for each variable it
    captures from the enclosing plain program, ``(primal name, tangent name, through a cell)``."""

    def __init__(self, fn: ir.Function, globals_: dict | None = None, captured: dict | None = None,
                 depth: int = 0, function: types.FunctionType | None = None) -> None:
        self.captured = captured or {}
        self.depth = depth  # how deeply nested in the plain program of the function under yb.grad
        # variables the user's code keeps in cells are plain locals here (Python's own cells
        # share them with the nested programs); captured ones are read by name
        self.cells = set(fn.cell_backed)
        excluded = {*fn.params, *fn.cell_backed, *fn.free_vars, *self.captured}
        self.builtin_cells = _builtin_cells(fn, function)
        fn = dataclasses.replace(fn, cell_backed=[], free_vars=[v for v in fn.free_vars if v not in self.captured])
        super().__init__(fn, globals_)
        self.constant_arguments = ConstantArguments(fn, self._resolve, globals_ or {}, excluded)

    def fwd_Call(self, s: ir.Call, out: list, indent: int) -> None:
        variable = self._cell_access(s)
        if variable is not None:
            name, tangent = variable
            comment = f"  # line {s.line}: {ir._call_text(s)}"
            if s.func.value is P.cell_set:
                self.emit(out, indent, f"{name}, {tangent} = {self.primal(s.args[1])}, {self.tangent(s.args[1])}{comment}", s.line)
            elif s.target:
                self.emit(out, indent, f"{s.target}, {self.td(s.target)} = {name}, {tangent}{comment}", s.line)
            return
        parts = [self.primal(s.func), self.tangent(s.func)]
        elementwise = self._elementwise(s.func) and self._power(s.func)
        for a in s.args:
            parts += [self.primal(a), self.argument_tangent(elementwise, a)]
        # ``*args`` and ``**kwargs`` travel as keywords of their own, unpacked by the rule of
        # ``_jvp`` (``third_order.py``) into argument slots, or by ``jvp_call`` below
        starred = [(STAR, s.star_args)] if s.star_args is not None else []
        starred += [(STARSTAR, s.star_kwargs)] if s.star_kwargs is not None else []
        for k, v in [*s.kwargs, *starred]:
            parts += [f"{k}={self.primal(v)}", f"{TANGENT_KEYWORD}{k}={self.tangent(v)}"]
        call = f"_jvp({', '.join(parts)})"
        comment = f"  # line {s.line}: {ir._call_text(s)}" if s.line else ""
        target = f"{s.target}, {self.td(s.target)} = " if s.target else ""
        self.emit(out, indent, f"{target}{call}{comment}", s.line)

    def statements(self, body: list, out: list, indent: int) -> None:
        """Statement by statement: every call stays a ``_jvp`` call (no fused float or array
        blocks, whose arithmetic second order would not see)."""
        self.forward_each(body, out, indent)

    def fwd_MakeClosure(self, s: ir.MakeClosure, out: list, indent: int) -> None:
        if s.free_vars:
            self._closure(s, out, indent)
            return
        # a nested function capturing nothing is a helper like a module-level one (its calls are
        # ``_jvp`` calls, followed by their own plain programs)
        start = len(out)
        super().fwd_MakeClosure(s, out, indent)
        for k in range(start, len(out)):  # a function capturing nothing has no tangent
            if "_closure_tangent(" in out[k][0]:
                out[k] = ("    " * indent + f"{self.td(s.target)} = _NT  # line {s.line}: the function {s.target}", s.line)

    # A global read that is also a builtin's name (``type``, ``sum``) is a local of its own name
    # here, ``_pfb_type``: second order's program of this one checks types with the builtin
    # ``type`` before a local ``type`` would be bound (an UnboundLocalError)

    def _global_local(self, path: str) -> str:
        head, dot, rest = path.partition(".")
        if head in self.fn.global_names and hasattr(builtins, head):
            return f"_pfb_{head}{dot}{rest}"
        return path

    def primal(self, a: ir.Atom) -> str:
        text = super().primal(a)
        return self._global_local(text) if isinstance(a, ir.Global) and text == a.path else text

    def tangent(self, a: ir.Atom) -> str:
        if isinstance(a, ir.Global) and "." not in a.path:
            return self.td(self._global_local(a.path))
        return super().tangent(a)

    def argument_tangent(self, elementwise: bool, a: ir.Atom) -> str:
        """A call argument's tangent. A constant of the function given to an elementwise
        primitive (a literal number, a list or array of them: ``plain_constants.py``) has none (a
        strong zero), not 0.0: third order would compute its partial and multiply it by 0.0
        (np.power's exponent partial is NaN at a negative base). Elsewhere a literal keeps its
        0.0: giving every literal no tangent made third order of ``sorted`` over a tuple holding
        a literal wrong (tests/test_third_order_closures.py), a cause not yet found."""
        if elementwise and self.constant_arguments.constant(a):
            return "_NT"
        return self.tangent(a)

    def _power(self, func: ir.Atom) -> bool:
        """Whether the called function is a power, whose exponent's partial (``log`` of the base)
        is NaN at a negative base: the one place a constant's strong-zero tangent is needed. Other
        elementwise calls keep the tangent 0.0: with a masked array operand (``np.ma.sqrt(m) +
        W``) the strong zero changed the result's tangent (``test_numpy_masked``'s weighted
        average, a wrong Hessian), a cause not yet found. (Not the int array written twice
        through its tangent, which ``third_order._linear`` no longer does: with that fixed, the
        strong zero at every elementwise call still gives that average a wrong Hessian.)"""
        try:
            return self._resolve(func) in _POWERS
        except Exception:  # an unhashable or unresolvable callee
            return False

    def _elementwise(self, func: ir.Atom) -> bool:
        """Whether the called function is known here and has an elementwise second-order rule."""
        from .lifting import lookup_second_order

        try:
            found = lookup_second_order(self._resolve(func))
        except Exception:  # an unhashable or unresolvable callee: decided at run time
            return False
        return found is not None and getattr(found[0], "second_order_kind", None) == "elementwise"

    def _generated_lines(self) -> tuple[GeneratedForward, list[str]]:
        """``ForwardGenerator.generate``'s program and its lines, the globals named as builtins
        read into their own locals."""
        generated = super().generate()
        lines = generated.source.split("\n")
        for v in self.builtin_cells:  # (see _builtin_cells)
            read = f"    _cell_{v} = _fn.__closure__["
            k = next(k for k, text in enumerate(lines) if text.startswith(read))
            lines.insert(k + 1, f"    if _cell_{v}.cell_contents is not _global(_G, {v!r}): raise TypeError("
                                f"\"yuebing read the captured variable '{v}' as the builtin of that name, but this "
                                f"closure captures a different value: rename it\")")
        for g in self.fn.global_names:
            local = self._global_local(g)
            if local == g:
                continue
            key = ir.global_key(self.fn, g)
            plain = f"    {g} = _global(_G, {key!r})"
            for k, text in enumerate(lines):
                if text == plain or text.startswith(plain + ";"):
                    lines[k] = f"    {local} = _global(_G, {key!r}); {self.td(local)} = _gt({local})"
        return generated, lines

    def fwd_Opaque(self, s: ir.Opaque, out: list, indent: int) -> None:
        # (``if False: s = None``, making a captured variable a cell of ours for a closure that
        # shares it: here it is the enclosing program's variable, which Python shares already)
        made_a_cell = re.fullmatch(r"if False: (\w+) = None  # makes \1 a cell the closure below shares", s.source)
        if made_a_cell and (made_a_cell.group(1) in self.captured or made_a_cell.group(1) in self.builtin_cells):
            return
        if made_a_cell and made_a_cell.group(1) in self._read_only_outside_cells():
            # a variable captured from outside that nothing here writes: the closure below reads
            # our local holding its value (second order follows no ``if False`` cell, ``share_cells``)
            v = made_a_cell.group(1)
            self.emit(out, indent, f"{v} = {self.const(P.cell_get)}(_cell_{v})", s.line)
            return
        super().fwd_Opaque(s, out, indent)

    def _closure(self, s: ir.MakeClosure, out: list, indent: int) -> None:
        """A nested function capturing our variables: the user's definition, and its own plain
        program nested here, a closure over the captured variables and their tangents, as its
        tangent (``plain_closures.py``)."""
        if s.source.lstrip().startswith("@"):
            raise _refusal(f"decorated nested functions capturing variables ({s.target}, line {s.line})")
        self.emit(out, indent, s.source, s.source_lines or s.line)
        self.emit(out, indent, f"{s.target} = _with_user_globals({s.target}, _G)", s.line)
        # (a module captured as a cell and read as the global of its name, ``np``, is our local
        # ``np`` already: the user's function reads that one, with no cell to share)
        through_cells = {v: f"_cell_{v}" for v in s.free_vars
                         if self._capture(v)[2] and not self._module_cell_read_as_global(v)
                         and v not in self.builtin_cells and v not in self._read_only_outside_cells()}
        if through_cells:  # captured from outside us: the user's function gets those very cells
            cells = ", ".join(f"{v!r}: {cell}" for v, cell in through_cells.items())
            self.emit(out, indent, f"{s.target} = {self.const(share_cells)}({s.target}, {{{cells}}})", s.line)
        nested = PlainForwardGenerator(nested_ir(s, self.globals or {}, self.fn.filename), self.globals,
                                       {v: self._capture(v) for v in s.free_vars}, self.depth + 1)
        nested.constants, nested.constant_ids = self.constants, self.constant_ids  # one namespace
        for text, line in nested.nested_program(plain_name(s.target), s.line):
            self.emit(out, indent, text, line)
        self.emit(out, indent, f"{self.td(s.target)} = {plain_name(s.target)}  # line {s.line}: the closure "
                               f"{s.target}, its tangent its plain program", s.line)

    def _read_only_outside_cells(self) -> set[str]:
        """The variables captured from outside the differentiated function (constants here) that
        neither this function nor a function defined in it writes (``nonlocal``)."""
        outside = {v for v in self.fn.free_vars if v not in self.captured and v not in self.builtin_cells
                   and not self._module_cell_read_as_global(v)}
        written = _written_cells(self.fn.body) | {v for v in outside if _declared_nonlocal(self.fn.body, v)}
        return outside - written

    def _module_cell_read_as_global(self, name: str) -> bool:
        """Whether captured variable ``name`` is a module the normaliser reads as the global of
        that name (``frontend/normalise.py``, ``_module_cell_is_global``)."""
        return name in self.fn.free_vars and name in self.fn.global_names and name not in self.captured

    def _capture(self, name: str) -> tuple[str, str, bool]:
        """How a nested function reaches our variable ``name``: its primal's and its tangent's
        names here, and whether they are a cell and its tangent (a variable captured from outside
        the differentiated function)."""
        if name in self.captured:
            return self.captured[name]
        if name in self.fn.free_vars:
            return f"_cell_{name}", self.td(f"_cell_{name}"), True
        return name, self.td(name), False

    def _cell_access(self, s: ir.Call) -> tuple[str, str] | None:
        """``(primal, tangent)`` names of the variable a ``cell_get``/``cell_set`` reaches when it
        is a plain local (ours, kept in a cell by the user's code) or one of an enclosing plain
        program (captured); None for a cell captured from outside."""
        if not (isinstance(s.func, ir.Const) and s.func.value in (P.cell_get, P.cell_set)):
            return None
        cell = s.args[0]
        if not isinstance(cell, ir.Var):
            return None
        if cell.name.startswith("_cellobj_") and cell.name[len("_cellobj_"):] in self.cells:
            name = cell.name[len("_cellobj_"):]
            return name, self.td(name)
        name = cell.name[len("_cell_"):] if cell.name.startswith("_cell_") else None
        if name in self.captured and not self.captured[name][2]:
            return self.captured[name][:2]
        return None

    def nested_program(self, name: str, line: int) -> list[tuple[str, int]]:
        """The lines of this function's plain program as a nested ``def name``: the captured
        variables read by name (and written: ``nonlocal``)."""
        clashes = {v[1] for v in self.captured.values()} & (set(self.vars) | set(self.fn.params))
        if clashes:
            raise _refusal(f"a nested function with variables named like its captured ones' tangents "
                           f"({', '.join(sorted(clashes))}, line {line})", "rename them")
        generated, texts = self._generated_lines()
        lines = [(text, generated.line_map.get(k + 1, line)) for k, text in enumerate(texts) if text or k < len(texts) - 1]
        params = "".join(f", {p}, {self.td(p)}" for p in self.fn.params)
        lines[0] = (f"def {name}(_fn, _fn_t{params}):", line)
        written = sorted({n for v in _written_cells(self.fn.body) if v in self.captured
                          for n in self.captured[v][:2]})
        if written:
            lines.insert(2, (f"    nonlocal {', '.join(written)}", line))
        return self._aliased(lines)

    def _aliased(self, lines: list[tuple[str, int]]) -> list[tuple[str, int]]:
        """``lines`` with the runtime's names and constants they read as globals under names of
        their own (``_n1_jvp``, one prefix per depth of nesting): second order's program of the
        enclosing plain program binds the names *it* reads as locals, which a nested function
        reading them would capture (the user's module globals among them, walked as data)."""
        prefix = f"_n{self.depth}"
        names = plain_closures.globals_read([text for text, _ in lines], self.captured)
        runtime = {**R_names(), "_G": self.globals, "_jvp": jvp_call}
        aliases = {}
        for name in names:
            if (name in self.constants or name in runtime) and not re.match(r"_n\d+_", name):  # (a deeper one's)
                aliases[name] = prefix + name
                self.constants[prefix + name] = self.constants[name] if name in self.constants else runtime[name]
        if not aliases:
            return lines
        pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(aliases, key=len, reverse=True))) + r")\b")
        return [(pattern.sub(lambda m: aliases[m.group(0)], text), line) for text, line in lines]

    def generate(self) -> GeneratedForward:
        generated, lines = self._generated_lines()
        # second order's program of this one has runtime names of its own (``_fn``, ``_global``,
        # ``_G``, ...): ours get a prefix so that they stay distinct
        name = generated.name.replace("_jvp", "_plain_jvp")
        source = "\n".join(lines).replace(f"def {generated.name}(", f"def {name}(", 1)
        source = _RUNTIME_NAME.sub(lambda m: "_pf" + m.group(0), source)
        return GeneratedForward(name, source, generated.constants, generated.params, generated.line_map)


def _builtin_cells(fn: ir.Function, function: types.FunctionType | None) -> set[str]:
    """The variables ``function`` captures whose cells hold the builtin of their name
    (``isinstance``), when the module does not shadow it: a function written in a program that
    second order made from a plain program captures that program's local holding the builtin.
    They are read as the builtin (the program checks the cell still holds it), not shared with
    nested functions as cells: second order's program of ours would bind a local of that name
    of its own, which they would read before it is bound (an UnboundLocalError)."""
    if function is None or not function.__closure__:
        return set()
    cells = dict(zip(function.__code__.co_freevars, function.__closure__))
    found = set()
    for v in fn.free_vars:
        try:
            held = cells[v].cell_contents
        except (KeyError, ValueError):  # not a cell of this function, or an empty one
            continue
        if v not in function.__globals__ and held is getattr(builtins, v, None):
            found.add(v)
    return found


def R_names() -> dict[str, Any]:
    from .forward_runtime import runtime_namespace

    return runtime_namespace()


def _declared_nonlocal(body: list, name: str) -> bool:
    """Whether a function defined in ``body`` (at any depth) may write ``name`` (``nonlocal``)."""
    pattern = re.compile(r"\bnonlocal\b[^\n]*\b" + re.escape(name) + r"\b")
    for s in body:
        if isinstance(s, (ir.MakeClosure, ir.Opaque)) and pattern.search(s.source):
            return True
        if any(_declared_nonlocal(block, name) for block in ir.child_blocks(s)):
            return True
    return False


def _written_cells(body: list) -> set[str]:
    """The captured variables ``body`` writes (``cell_set(_cell_v, ...)``), nested blocks too."""
    written = set()
    for s in body:
        if isinstance(s, ir.Call) and isinstance(s.func, ir.Const) and s.func.value is P.cell_set \
                and isinstance(s.args[0], ir.Var) and s.args[0].name.startswith("_cell_"):
            written.add(s.args[0].name[len("_cell_"):])
        for block in ir.child_blocks(s):
            written |= _written_cells(block)
    return written


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
        program = _compile(PlainForwardGenerator(source.ir, fn.__globals__, function=fn).generate(), fn)
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
    _unpack_stars(primals, tangents, kw, kw_t)
    if is_plain_closure(f_t):  # a closure made in the program: its tangent is its own plain program
        return _call_plain_closure(f, f_t, primals, tangents, kw, kw_t)
    if _holds_plain_closures([*tangents, *kw_t.values()]) and _python_function(f):
        # closures handed to a Python function (a generator fold's copy, a helper), alone or in a
        # list: forward mode would take their tangents, plain programs, for data and drop them.
        # The function's own plain program calls each through its program, as third order does
        return _call_plain_closure(f, plain_forward(f), primals, tangents, kw, kw_t, f_t)
    if any(map(is_plain_closure, [*tangents, *kw_t.values()])) and not _structural(f):
        raise _refusal(f"nested functions capturing variables passed to {getattr(f, '__qualname__', f)!r}",
                       CLOSURE_ADVICE)
    result = call_frule(Dual(f, f_t), *(Dual(p, t) for p, t in zip(primals, tangents)),
                        **{k: Dual(v, kw_t[k]) for k, v in kw.items()})
    return result.primal, result.tangent


def _unpack_stars(primals: list, tangents: list, kw: dict, kw_t: dict) -> None:
    """A call's ``*args`` and ``**kwargs`` (``STAR``, ``STARSTAR``) as arguments of their own."""
    from ..tangents import NoTangent

    if STAR in kw:
        values, values_t = kw.pop(STAR), kw_t.pop(STAR)
        for k, value in enumerate(values):
            primals.append(value)
            tangents.append(NoTangent if values_t is NoTangent else values_t[k])
    if STARSTAR in kw:
        mapping, mapping_t = kw.pop(STARSTAR), kw_t.pop(STARSTAR)
        for name, value in mapping.items():
            kw[name], kw_t[name] = value, NoTangent if mapping_t is NoTangent else mapping_t[name]


def _structural(f: Any) -> bool:
    """Whether ``f`` only moves values around (``list.append``: a linear rule), so that a
    closure's plain program may go where the closure goes."""
    from .lifting import lookup_second_order

    found = lookup_second_order(f)
    return found is not None and getattr(found[0], "second_order_kind", None) == "linear"


def _python_function(f: Any) -> bool:
    """Whether ``f`` is a Python function without a rule of its own (third order follows it
    through its plain program: ``third_order._python_function``)."""
    from .lifting import lookup_second_order

    return isinstance(f, types.FunctionType) and lookup_second_order(f) is None


def _holds_plain_closures(tangents: list) -> bool:
    """Whether a plain closure is among ``tangents`` or inside a list, tuple or dict of them."""
    seen: set[int] = set()
    stack = list(tangents)
    while stack:
        t = stack.pop()
        if is_plain_closure(t):
            return True
        if type(t) in (list, tuple, dict) and id(t) not in seen:
            seen.add(id(t))
            stack.extend(t.values() if type(t) is dict else t)
    return False


def _call_plain_closure(f: Any, program: Any, primals: list, tangents: list, kw: dict, kw_t: dict,
                        f_t: Any = None) -> tuple[Any, Any]:
    """``program(f, f_t, x, x_t, ...)``, the call's arguments bound to its parameters (``f_t``:
    ``program`` itself for a closure's, whose tangent it is)."""
    given = {**{k: (p, t) for k, (p, t) in enumerate(zip(primals, tangents))}, **{k: (v, kw_t[k]) for k, v in kw.items()}}
    flat: list = []
    for kind, payload in bind(program, f, len(primals), list(kw)):
        if kind == "arg":
            flat += given[payload]
        elif kind == "star":
            flat += [tuple(given[key][0] for key in payload), tuple(given[key][1] for key in payload)]
        elif kind == "starstar":
            flat += [{name: given[key][0] for name, key in payload.items()},
                     {name: given[key][1] for name, key in payload.items()}]
        else:
            from .forward_runtime import zero_tangent_of

            flat += [payload, zero_tangent_of(payload)]
    return program(f, program if f_t is None else f_t, *flat)


__all__ = ["STAR", "STARSTAR", "PlainForwardGenerator", "jvp_call", "plain_forward", "split_call"]
