"""The text of a generated program, shared by every code generator (reverse, forward, second and
third order): the names of the constants generated code refers to (``operator.mul`` ->
``_operator_mul``), the primal expression of an atom, emitted lines each tied to the user's line,
and ``Generated``, the record of a reverse-mode program's source."""
from __future__ import annotations

import cmath
import dataclasses
from typing import Any, Callable

import numpy as np

from ..ir import nodes as ir
from .variables import all_var_names

#: the names the runtimes put in every generated module's namespace (``_D``, ``_NT``, ``_rrule``...):
#: a constant never takes one (a user's class ``D`` was named ``_D`` and replaced forward mode's
#: ``Dual``). Each runtime module adds its names when it is imported, before it generates code.
RUNTIME_NAMES: set[str] = set()

LITERAL_TYPES = (int, float, complex, str, bytes, bool, type(None), type(Ellipsis))


def is_literal(value: Any) -> bool:
    """Whether ``repr(value)`` is a Python literal that reads back as ``value``."""
    if isinstance(value, tuple):
        return all(is_literal(v) for v in value)
    if isinstance(value, slice):
        return all(is_literal(v) for v in (value.start, value.stop, value.step))
    if type(value) in (float, complex) and not cmath.isfinite(value):
        return False  # repr(inf) and repr(nan) are not Python literals: a named constant
    return type(value) in LITERAL_TYPES


@dataclasses.dataclass
class Generated:
    """Source of the forward and reverse functions, and the constants they refer to."""

    forward_name: str
    reverse_name: str
    source: str
    constants: dict[str, Any]
    params: list[str]
    line_map: dict[int, int]  # generated line -> user line
    deferred_from: int = 0  # the line where functions compiled on first call start (deferred_fallbacks.py)
    deferred_names: tuple = ()  # those functions


class ConstantNames:
    """Names for the constants generated code refers to (``operator.mul`` -> ``_operator_mul``),
    the primal expression of an atom, and emitting lines. Shared by the reverse and forward generators."""

    def emit(self, out: list, indent: int, text: str, line: int | tuple[int, ...] = 0) -> None:
        """Lines of ``text`` at ``indent``, each from the user's ``line`` (or ``line[i]``, one per
        line of ``text``: a nested function's definition)."""
        if "\n" not in text and not isinstance(line, tuple):  # (nearly every line)
            out.append(("    " * indent + text, line))
            return
        lines = line if isinstance(line, tuple) else None
        for i, piece in enumerate(text.split("\n")):
            out.append(("    " * indent + piece, lines[i] if lines else line))

    def range_bounds(self, s: ir.ForRange) -> str:
        """The arguments of loop ``s``'s ``range(...)``, as short as Python reads them."""
        if s.step != ir.Const(1):
            return ", ".join(self.primal(a) for a in (s.start, s.stop, s.step))
        return self.primal(s.stop) if s.start == ir.Const(0) else ", ".join(self.primal(a) for a in (s.start, s.stop))

    def call_arguments(self, s: ir.Call, operand: Callable[[ir.Atom], str]) -> list[str]:
        """The arguments of a rule call for call site ``s``, each atom as ``operand`` writes it
        (a CoDual, a Dual): positional ones, ``_STAR(*args)``, keywords, ``_STARSTAR=**kwargs``."""
        args = [operand(a) for a in s.args]
        if s.star_args is not None:
            args.append(f"_STAR({operand(s.star_args)})")
        args += [f"{k}={operand(v)}" for k, v in s.kwargs]
        if s.star_kwargs is not None:
            args.append(f"_STARSTAR={operand(s.star_kwargs)}")
        return args

    def emit_no_rdata(self, out: list, indent: int, names: list, line: int = 0) -> None:
        """``a_r = b_r = ... = _NR`` for the rdata ``names``, six to a line."""
        for chunk in range(0, len(names), 6):
            self.emit(out, indent, " = ".join(names[chunk:chunk + 6]) + " = _NR", line)

    def __init__(self) -> None:
        self.constants: dict[str, Any] = {}
        self.constant_ids: dict[int, str] = {}
        self.counter = 0  # of fresh names

    def function_names(self) -> set[str]:
        """The names of the function being transformed (``self.fn``: variables, parameters,
        globals, free variables) and each one's prefixes ending before an ``_`` (``_b2`` of
        ``_b2_d``): a fresh name or a constant must be none of them, or generated code would
        overwrite the user's variable (or its derivative's ``_b2_d``)."""
        taken = self.__dict__.get("_function_names")
        if taken is None:
            fn = self.fn  # type: ignore[attr-defined]
            names = all_var_names(fn.body, set(fn.params)) | set(fn.global_names) | set(fn.free_vars)
            taken = self._function_names = names | {v[:k] for v in names for k in range(1, len(v)) if v[k] == "_"}
        return taken

    def fresh(self, hint: str) -> str:
        """A new local name ``_<hint><n>`` that is none of the function's names."""
        taken = self.function_names()
        while True:
            self.counter += 1
            name = f"_{hint}{self.counter}"
            if name not in taken:
                return name

    def const(self, value: Any) -> str:
        if is_literal(value):
            return repr(value)
        key = id(value)
        if key not in self.constant_ids:
            base = "_" + "".join(c if c.isalnum() else "_" for c in ir.constant_name(value)[:60]).strip("_")
            name = base
            i = 1
            taken = self.function_names()
            while name in self.constants or name in taken or name in RUNTIME_NAMES:
                i += 1
                name = f"{base}{i}"
            self.constants[name] = value
            self.constant_ids[key] = name
        return self.constant_ids[key]

    def primal(self, a: ir.Atom) -> str:
        if isinstance(a, ir.Var):
            return a.name
        if isinstance(a, ir.Global):
            if "." in a.path and is_float_array(resolve_path(getattr(self, "globals", None), a.path, self.fn.global_keys)):
                return f"_read_only({a.path})"  # a module's array (mod.W): a constant, as a global's
            return a.path
        return self.const(a.value)


def resolve_path(namespace: dict | None, path: str, keys: dict | None = None) -> Any:
    """The value of a global path (``mod.W``) in ``namespace`` now, or None; ``keys``: the
    lowered function's ``global_keys`` (``u_EPS`` is the module's ``_EPS``)."""
    value: Any = namespace
    head, *rest = path.split(".")
    for part in [(keys or {}).get(head, head), *rest]:
        if value is None:
            return None
        value = value.get(part, None) if isinstance(value, dict) else getattr(value, part, None)
    return value


def is_float_array(value: Any) -> bool:
    return isinstance(value, np.ndarray) and value.dtype.kind in "fc"


def program_text(out: list) -> tuple[str, dict[int, int]]:
    """The source of emitted lines ``out`` (``(text, user line)`` pairs) and its line map:
    generated line -> the user's line."""
    text_lines = [text for text, _ in out]
    line_map = {i + 1: line for i, (_, line) in enumerate(out) if line}
    return "\n".join(text_lines) + "\n", line_map
