"""Functions that raise after partial work, called from a try body (issue 13).

Plain Python keeps the work a function did before it raised: its writes to its arguments, the
items it appended. While a try body runs (``exceptions.TRACKING``), every differentiated
function runs a *tracked variant* of its code, generated on first need: its whole body is one
region of ``try_statements`` (its progress kept in plain locals, each unit of work one
statement), inside a handler that records how far it got on its tape before the exception
leaves. Its rule then attaches to the exception a *partial pullback* (``exceptions.attach``)
that replays that completed work backwards; the handler of the caller's frame takes it and
records it with its own progress, so the reverse pass undoes exactly what ran, through any number
of calls. Outside try bodies nothing changes (no tracking, no cost).
"""
from __future__ import annotations

import itertools
import linecache
import types
from typing import Any, Callable

from ..ir import nodes as ir
from ..rules.core import CoDual
from ..rules.util import slot_rdata
from ..tangents import NoRData
from .exceptions import _PARTIAL, Progress, _is_ours, attach, leave_partially, mark_partial, release
from .reverse import Generated, ReverseGenerator
from .try_statements import _Region

_counter = itertools.count()

#: filled by runtime.py: (runtime namespace, unwind); by second_order.py: (dual
#: generator class, its runtime namespace)
REVERSE: tuple = ()
SECOND: tuple = ()


def _all_calls(body: list, found: set) -> set:
    for s in body:
        if isinstance(s, ir.Call):
            found.add(id(s))
        for block in ir.child_blocks(s):
            _all_calls(block, found)
    return found


class WholeFunction:
    """A generator mixin: the function's body is one tracked region, left through a handler
    that records its progress; ``generate`` adds ``<name>_partial(_tape)``, the reverse pass of
    the work completed before an exception."""

    def __init__(self, fn: ir.Function, globals_: dict | None = None) -> None:
        super().__init__(fn, globals_)  # type: ignore[call-arg]
        self._direct_calls_in_try = _all_calls(fn.body, set())  # no direct calls: all tracked

    def forward(self, body: list, out: list, indent: int) -> None:
        if body is not self.fn.body:
            super().forward(body, out, indent)  # type: ignore[misc]
            return
        taped, _, call = self._names()
        init_at = len(out)
        self.emit(out, indent, "", self.fn.first_line)
        region = _Region()
        saved = self._enter(region)
        level = self._level(("function", 0), body)
        self.emit(out, indent, "try:", self.fn.first_line)
        self._forward_level(body, level, out, indent + 1)
        self._leave(saved)
        self._whole_names = region.names()
        self.emit(out, indent, "except BaseException as _error:  # record how far it got, for the caller", self.fn.first_line)
        self.emit(out, indent + 1, f"_leave_partially(_tape, {taped}, _error, {call}, ({self._whole_names}))", self.fn.first_line)
        self.emit(out, indent + 1, "raise", self.fn.first_line)
        values = "; ".join(f"{name} = {value}" for name, value in region.initial.items())
        out[init_at] = ("    " * indent + f"{values}; {taped} = len(_tape); {call} = -1", self.fn.first_line)

    def reverse(self, body: list, out: list, indent: int) -> None:
        if body is not self.fn.body:
            super().reverse(body, out, indent)  # type: ignore[misc]
            return
        saved = self._enter(_Region())
        self._reverse_full(body, out, indent)
        self._leave(saved)

    def generate(self) -> Generated:
        generated = super().generate()  # type: ignore[misc]
        out: list = []
        dual = hasattr(self, "rdd")
        name = f"{self.fn.name}_partial"
        self.emit(out, 0, f"def {name}(_tape):", self.fn.first_line)
        self.emit(out, 1, f'"""Reverse pass of the work {self.fn.name} completed before it raised."""')
        self.emit(out, 1, "_pop = _tape.pop")
        names = [n for v in self.vars for n in ((self.rd(v), self.rdd(v)) if dual else (self.rd(v),))]
        self.emit_no_rdata(out, 1, names)
        slot = self._names()[1]
        self.emit(out, 1, f"_e = _pop(); {slot} = _e.slot; {self._whole_names} = _e.record", self.fn.first_line)
        saved = self._enter(_Region())
        self._reverse_level(self.fn.body, self._level(("function", 0), self.fn.body), out, 1)
        self._leave(saved)
        comma = "," if len(self.fn.params) == 1 else ""
        results = f"({', '.join(self.rd(p) for p in self.fn.params)}{comma})"
        if dual:
            results += f", ({', '.join(self.rdd(p) for p in self.fn.params)}{comma})"
        self.emit(out, 1, f"return {results}")
        offset = generated.source.count("\n")
        line_map = dict(generated.line_map)
        line_map.update({offset + i + 1: line for i, (_, line) in enumerate(out) if line})
        source = generated.source + "\n".join(text for text, _ in out) + "\n"
        result = Generated(generated.forward_name, generated.reverse_name, source, generated.constants,
                           generated.params, line_map)
        result.partial_name = name  # type: ignore[attr-defined]
        return result


def _compile(generated: Any, fn: types.FunctionType, mode: str, namespace: dict) -> tuple:
    """The tracked variant's forward, reverse and partial reverse functions."""
    from . import array_blocks, float_blocks, templates
    from .codegen import compile_checked

    filename = f"<yuebing {mode} (tracked) {fn.__qualname__} #{next(_counter)}>"
    source = generated.source
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = dict(namespace)
    if mode == "reverse":
        for extra in (templates.NAMESPACE, array_blocks.NAMESPACE, float_blocks.NAMESPACE):
            namespace.update(extra)
    namespace.update(generated.constants)
    namespace["_G"] = fn.__globals__
    namespace["__name__"] = fn.__globals__.get("__name__", "__main__")
    namespace["_leave_partially"] = leave_partially
    exec(compile_checked(source, filename, fn, generated.line_map, mode), namespace)  # noqa: S102 - our own code
    return namespace[generated.forward_name], namespace[generated.reverse_name], namespace[generated.partial_name]


def _variant(rule: Any, fn: types.FunctionType, mode: str, generator: type, namespace: Callable) -> tuple:
    key = f"_tracked_{mode}"
    found = rule.__dict__.get(key)
    if found is None:
        cls = type(f"Tracked{generator.__name__}", (WholeFunction, generator), {})
        found = _compile(cls(rule.ir, fn.__globals__).generate(), fn, mode, namespace())
        rule.__dict__[key] = found
    return found


def _keeps_partial(error: BaseException, tape: list) -> bool:
    """Whether the tracked forward pass that recorded ``tape`` left a replayable record."""
    return not _is_ours(error) and getattr(error, _PARTIAL, None) is None and bool(tape) \
        and isinstance(tape[-1], Progress)


def route_reverse(param_r: tuple, routes: list, coduals: list) -> tuple:
    """A call's argument rdata from its parameters' (``DerivedRule``'s pullback and a partial
    pullback route them alike)."""
    result = [NoRData]
    for route in routes:
        if route[0] == "param":
            result.append(param_r[route[1]])
        elif route[0] == "vararg":
            r = param_r[route[1]]
            result.append(r[route[2]] if isinstance(r, tuple) else NoRData)
        else:
            result.append(slot_rdata(coduals[route[1]].fdata[route[2]]))
    return tuple(result)


def route_dual(param_rdata: tuple, routes: list, params: list, part: int) -> tuple:
    """The rdata of each call argument from the rdata of each parameter (``DualRule``'s): a
    ``*args`` element's from its tuple's, a ``**kwargs`` entry's from its slot in the dict's
    fdata (``part`` 1) or fdata tangent (``part`` 3)."""
    from ..rules.util import slot_rdata

    result = [NoRData]
    for j, i in routes:
        r = param_rdata[j]
        if i is None:
            result.append(r)
        elif isinstance(i, str):
            result.append(slot_rdata(params[j][part][i], params[j][0][i]))  # (a number's: B directions when batched)
        else:
            result.append(r[i] if isinstance(r, tuple) else NoRData)
    return tuple(result)


def call_tracked(rule: Any, f: CoDual, args: tuple, kwargs: dict) -> tuple:
    """``DerivedRule.__call__`` inside a try body: the tracked variant, whose work done before
    an exception goes with the exception as a partial pullback."""
    namespace, unwind = REVERSE[0], REVERSE[1]
    fn = f.primal
    forward, reverse, partial = _variant(rule, fn, "reverse", ReverseGenerator, namespace)
    coduals, routes = rule._bind(fn, args, kwargs)
    flat = [part for c in coduals for part in (c.primal, c.fdata)]
    tape: list = []
    try:
        value, value_f = forward(tape, fn, f.fdata, *flat)
    except BaseException as error:  # (GeneratorExit, KeyboardInterrupt caught by the user: the same)
        if not _keeps_partial(error, tape):
            mark_partial(error, rule.name, tape)
            release(error)
            unwind(tape)
            raise
        attach(error, lambda _dy: route_reverse(partial(tape), routes, coduals), lambda: unwind(tape), rule.name)
        raise

    def pullback(dy: Any) -> tuple:
        return route_reverse(reverse(tape, dy), routes, coduals)

    return CoDual(value, value_f), pullback


def call_dual_tracked(rule: Any, f: tuple, args: tuple, kwargs: dict) -> tuple:
    """``DualRule.__call__`` inside a try body (second order), as ``call_tracked``."""
    generator, namespace = SECOND
    forward, reverse, partial = _variant(rule, f[0], "second-order", generator, namespace)
    params, routes = rule._bind(f[0], args, kwargs)
    flat = [part for p in params for part in p]
    tape: list = []

    def routed(rs: tuple, rsd: tuple) -> tuple:
        if routes is None:
            return (NoRData,) + tuple(rs), (NoRData,) + tuple(rsd)
        return route_dual(rs, routes, params, 1), route_dual(rsd, routes, params, 3)

    try:
        out = forward(tape, *f, *flat)
    except BaseException as error:
        if not _keeps_partial(error, tape):
            mark_partial(error, rule.name, tape)
            raise
        attach(error, lambda _dy, _dy_d: routed(*partial(tape)), None, rule.name)
        raise
    return out, lambda dy, dy_d: routed(*reverse(tape, dy, dy_d))
