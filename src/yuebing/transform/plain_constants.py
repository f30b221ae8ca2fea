"""Constants of a function that a plain forward program gives elementwise calls without a tangent.

Third order differentiates ``sum_k partial_k * t_k`` for each elementwise call of the function
under ``yb.grad`` (``third_order._elementwise``). An argument whose tangent is a zero *value*
still has its partial computed and multiplied by that zero, and a partial may be NaN where the
argument cannot vary: ``np.power``'s exponent partial ``y log(x)`` at a negative base. So an
argument that is a constant of the function -- a literal, or a list, tuple or array built from
literals, or a module constant only read -- is given no tangent at all (``_NT``), and its
partial is never computed.

A variable counts as a constant only when nothing could make it hold derivatives or share its
object with something written: it is assigned once, from literals (or other such constants)
through a call that builds a new value (``[2.0, 3.0]``, ``np.array(...)``, ``float(2)``, an
elementwise call), and it is only read as an argument of elementwise calls or of those builders
(never written in place, aliased, returned, or read by a nested function or opaque code).
"""
from __future__ import annotations

import builtins
import numbers
import re
from typing import Any, Callable, Iterator

import numpy as np

from ..ir import nodes as ir
from ..ir import primitives as P

#: calls that copy their arguments into a new value (a list or tuple keeps its items, so it copies
#: only immutable ones: see ``_copies``)
_COPYING = (np.array, float, int, complex, np.float64, np.float32, np.int64)
_GATHERING = (P.mklist, P.mktuple)
_SOURCE_WORD = re.compile(r"[A-Za-z_]\w*")


class ConstantArguments:
    """The variables and globals of ``fn`` that are constants in the sense above.

    ``resolve(atom)`` gives the value of a called atom known when the program is written (or
    None); ``excluded`` are names that are no constants whatever their assignments (parameters,
    variables in cells, captured ones)."""

    def __init__(self, fn: ir.Function, resolve: Callable[[ir.Atom], Any], globals_: dict,
                 excluded: set[str]) -> None:
        self.fn, self.resolve, self.globals = fn, resolve, globals_
        statements = list(_walk(fn.body))
        words = _words_in_sources(statements)
        self.assignments = _assignments(statements)
        self.calls = [s for s in statements if isinstance(s, ir.Call)]
        self.other_reads = _other_reads(statements)
        self.variables = {name for name, made in self.assignments.items()
                          if len(made) == 1 and name not in excluded and name not in words}
        self.immutable: set[str] = set()
        self.global_paths = {p for p in _global_paths(statements) if p.split(".")[0] not in words
                             and _constant_global_value(globals_, p, fn.global_keys)}
        self._settle()

    def constant(self, a: ir.Atom) -> bool:
        """Whether argument ``a`` of an elementwise call is a constant of the function."""
        if isinstance(a, ir.Const):
            return _constant_value(a.value)
        if isinstance(a, ir.Var):
            return a.name in self.variables
        return isinstance(a, ir.Global) and a.path in self.global_paths

    def _settle(self) -> None:
        """Drop candidates until each one left is made from constants and only read safely."""
        changed = True
        while changed:
            before = (len(self.variables), len(self.global_paths))
            self.immutable = {n for n in self.variables if self._made_immutable(self.assignments[n][0])}
            self.variables = {n for n in self.variables if self._made_constant(self.assignments[n][0])}
            self.variables -= self.other_reads
            self.global_paths -= self.other_reads
            for s in self.calls:
                self._drop_unsafe_reads(s)
            changed = (len(self.variables), len(self.global_paths)) != before

    def _is_candidate(self, a: ir.Atom) -> bool:
        if isinstance(a, ir.Const):
            return isinstance(a.value, (numbers.Number, np.number))
        return self.constant(a)

    def _made_constant(self, s: Any) -> bool:
        if isinstance(s, ir.Copy):
            return isinstance(s.source, ir.Const) and self._is_candidate(s.source)
        if not isinstance(s, ir.Call) or s.star_args is not None or s.star_kwargs is not None:
            return False
        if not all(map(self._is_candidate, s.args)):
            return False
        f = self._callee(s)
        if f is np.array:
            return all(k == "dtype" for k, _ in s.kwargs)
        return not s.kwargs and (f in _COPYING or f in _GATHERING or self._elementwise(s, in_place=False))

    def _made_immutable(self, s: Any) -> bool:
        """Assigned a number, or a tuple of immutable constants."""
        if isinstance(s, ir.Copy):
            return isinstance(s.source, ir.Const)
        return isinstance(s, ir.Call) and self._callee(s) is P.mktuple \
            and all(isinstance(a, ir.Const) or isinstance(a, ir.Var) and a.name in self.immutable for a in s.args)

    def _drop_unsafe_reads(self, s: ir.Call) -> None:
        """Drop the candidates call ``s`` reads other than as a constant may be read."""
        f = self._callee(s)
        for k, a in enumerate(s.args):
            if self._read_safely(s, f, k, a):
                continue
            self._drop(a)
        for key, a in s.kwargs:
            if not (f is np.array and key == "dtype"):
                self._drop(a)
        self._drop(s.func)
        for a in (s.star_args, s.star_kwargs):
            if a is not None:
                self._drop(a)

    def _read_safely(self, s: ir.Call, f: Any, k: int, a: ir.Atom) -> bool:
        if isinstance(a, ir.Const):
            return True
        if f in _GATHERING:  # a list or tuple keeps the very object
            return isinstance(a, ir.Var) and a.name in self.immutable
        if f in _COPYING:
            return True
        # an in-place elementwise call (``a += b``) writes its first argument only
        return self._elementwise(s, in_place=False) or k > 0 and self._elementwise(s, in_place=True)

    def _drop(self, a: ir.Atom) -> None:
        if isinstance(a, ir.Var):
            self.variables.discard(a.name)
        elif isinstance(a, ir.Global):
            self.global_paths.discard(a.path)

    def _callee(self, s: ir.Call) -> Any:
        try:
            value = self.resolve(s.func)
        except Exception:  # an unresolvable callee: decided at run time, as no builder
            return None
        if value is None and isinstance(s.func, ir.Global) and s.func.path not in self.globals:
            return getattr(builtins, s.func.path, None)  # float(2): a builtin the module does not shadow
        return value

    def _elementwise(self, s: ir.Call, in_place: bool) -> bool:
        """Whether ``s`` calls an elementwise primitive (an in-place one if ``in_place``)."""
        if s.kwargs or s.star_args is not None or s.star_kwargs is not None:
            return False
        from .lifting import lookup_second_order

        try:
            found = lookup_second_order(self._callee(s))
        except TypeError:  # unhashable
            return False
        rule = found[0] if found is not None else None
        if getattr(rule, "second_order_kind", None) != "elementwise":
            return False
        return in_place or not hasattr(rule, "in_place_of")


def _walk(body: list) -> Iterator[Any]:
    for s in body:
        yield s
        if isinstance(s, ir.Try):
            yield from s.handlers
        for block in ir.child_blocks(s):
            yield from _walk(block)


def _assignments(statements: list) -> dict[str, list]:
    """Each name the statements bind, and the statements binding it."""
    made: dict[str, list] = {}
    for s in statements:
        for name in _bound(s):
            made.setdefault(name, []).append(s)
    return made


def _bound(s: Any) -> list[str]:
    if isinstance(s, (ir.Call, ir.Copy, ir.MakeClosure)):
        return [s.target] if s.target else []
    if isinstance(s, ir.ForRange):
        return [s.var]
    if isinstance(s, ir.Handler):
        return [s.name] if s.name else []
    return list(getattr(s, "defines", ()))


def _other_reads(statements: list) -> set[str]:
    """Names and global paths read other than as call arguments (copied, returned, tested)."""
    atoms = []
    for s in statements:
        if isinstance(s, ir.Copy):
            atoms.append(s.source)
        elif isinstance(s, ir.Return):
            atoms.append(s.value)
        elif isinstance(s, ir.ForRange):
            atoms += [s.start, s.stop, s.step]
    return {a.name if isinstance(a, ir.Var) else a.path for a in atoms if isinstance(a, (ir.Var, ir.Global))}


def _words_in_sources(statements: list) -> set[str]:
    """Names that opaque code, nested functions and with-items may read."""
    words: set[str] = set()
    for s in statements:
        for text in (getattr(s, "source", None), getattr(s, "items", None), getattr(s, "types", None)):
            if isinstance(text, str):
                words |= set(_SOURCE_WORD.findall(text))
    return words


def _global_paths(statements: list) -> set[str]:
    paths = set()
    for s in statements:
        if isinstance(s, ir.Call):
            paths |= {a.path for a in [*s.args, *(v for _, v in s.kwargs)] if isinstance(a, ir.Global)}
    return paths


def _constant_global_value(globals_: dict, path: str, keys: dict) -> bool:
    """Whether the global holds a number, a tuple of numbers, or an array of numbers (whose
    tangent in a plain program is a zero of its own, ``forward_runtime.global_tangent``)."""
    from .forward import resolve_path

    try:
        value = resolve_path(globals_, path, keys)
    except Exception:  # not there yet: decided as a variable, with its tangent
        return False
    return _constant_value(value)


def _constant_value(value: Any) -> bool:
    if isinstance(value, (numbers.Number, np.number)) and not isinstance(value, bool):
        return True
    if type(value) is tuple:
        return all(map(_constant_value, value))
    return type(value) is np.ndarray and value.dtype.kind in "biufc"
