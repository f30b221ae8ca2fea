"""yuebing's intermediate representation: a small structured normal form of Python.

The normaliser (``frontend/normalise.py``) lowers a function body to these statements; the
reverse and forward transforms consume them. Every expression is an *atom* -- a variable
(``Var``) or a constant (``Const``) -- and every statement performs at most one operation, so
each has exactly one derivative rule. Control flow stays structured (``If``, ``While``,
``ForRange``) so generated code reads like the user's.

Statements
    ``Call(target, func, args, kwargs)``   target = func(*args, **kwargs)  (any operation)
    ``Copy(target, source)``                target = source                  (rebinding)
    ``If(test, body, orelse)``
    ``While(test_body, test, body)``        test_body recomputes ``test`` before each trip
    ``ForRange(var, start, stop, step, body)``
    ``Return(value)``                       only as a function's last statement
    ``Opaque(source)``                      forward-only Python (raise, assert, nested def...)
    ``With(items, body)``                   context managers entered in the forward pass only
    ``Try(body, handlers, orelse, finalbody)``  try/except/else/finally (``Handler(types, name, body)``)
    ``Pass()``
Every statement carries ``line``: the line in the user's file it came from.
"""
from __future__ import annotations

import dataclasses
import types
from typing import Any, Union


@dataclasses.dataclass(frozen=True)
class Var:
    name: str

    def __str__(self) -> str:
        return self.name


@dataclasses.dataclass(frozen=True)
class Const:
    value: Any

    def __str__(self) -> str:
        return constant_name(self.value)


def constant_name(value: Any) -> str:
    """How a constant reads in printed IR and generated code (``operator.mul``, ``list.append``)."""
    if callable(value) and not isinstance(value, type):
        objclass = getattr(value, "__objclass__", None)
        if objclass is not None:
            return f"{objclass.__name__}.{value.__name__}"
        module = getattr(value, "__module__", None) or ""
        name = getattr(value, "__name__", None)
        if name is not None:
            if module in ("_operator", "operator"):
                return f"operator.{name}"
            if module == "builtins" or module.startswith("yuebing"):
                return name
            return f"{module}.{name}"
    if isinstance(value, type):
        return value.__name__
    if isinstance(value, types.CodeType):  # a guard that a function's code is unchanged
        return f"{value.co_name}_code"
    return repr(value)


@dataclasses.dataclass(frozen=True)
class Global:
    """A global name or a module attribute path (``np.linalg.inv``): constant during a call."""

    path: str

    def __str__(self) -> str:
        return self.path


Atom = Union[Var, Const, Global]


@dataclasses.dataclass
class Call:
    target: str | None
    func: Atom
    args: list[Atom]
    kwargs: list[tuple[str, Atom]] = dataclasses.field(default_factory=list)
    line: int = 0
    star_args: Atom | None = None
    star_kwargs: Atom | None = None


@dataclasses.dataclass
class Copy:
    target: str
    source: Atom
    line: int = 0


@dataclasses.dataclass
class If:
    test: Atom
    body: list
    orelse: list
    line: int = 0


@dataclasses.dataclass
class While:
    test_body: list
    test: Atom
    body: list
    line: int = 0


@dataclasses.dataclass
class ForRange:
    var: str
    start: Atom
    stop: Atom
    step: Atom
    body: list
    line: int = 0


@dataclasses.dataclass
class Return:
    value: Atom
    line: int = 0


@dataclasses.dataclass
class Opaque:
    """Python source run as is in the forward pass; it creates no differentiable value."""

    source: str
    line: int = 0
    defines: tuple[str, ...] = ()


@dataclasses.dataclass
class MakeClosure:
    """``target = <def or lambda>``: a nested function capturing ``free_vars`` of this one.

    ``shared`` are the captured variables that are themselves free variables of this function
    (cells of an enclosing one): the new function gets those very cells, so that writes through
    ``nonlocal`` at any depth, and reads after them, all see one variable."""

    target: str
    source: str
    free_vars: tuple[str, ...]
    line: int = 0
    shared: tuple[str, ...] = ()
    #: the user's line of each line of ``source`` (empty: all are ``line``)
    source_lines: tuple[int, ...] = ()


@dataclasses.dataclass
class With:
    """``with <items>: body``; the context managers run in the forward pass only."""

    items: str
    body: list
    defines: tuple[str, ...] = ()
    line: int = 0


@dataclasses.dataclass
class Handler:
    """``except <types> as <name>: body``; ``types`` is the source of the exception types
    (empty for a bare ``except:``), evaluated by the forward pass as Python evaluates it."""

    types: str
    name: str | None
    body: list
    line: int = 0


@dataclasses.dataclass
class Try:
    """``try: body`` with its handlers, ``else`` and ``finally`` blocks. The reverse pass replays
    the path the forward pass took: which handler ran (if any) and how many statements of
    ``body`` completed before the exception (transform/reverse.py)."""

    body: list
    handlers: list
    orelse: list
    finalbody: list
    line: int = 0


@dataclasses.dataclass
class Pass:
    line: int = 0


Statement = Union[Call, Copy, If, While, ForRange, Return, Opaque, MakeClosure, With, Try, Pass]


def child_blocks(s: Any) -> list[list]:
    """The statement lists nested in statement ``s`` (none for a simple statement), for walks
    that treat every block alike."""
    if isinstance(s, Try):
        return [s.body, *(h.body for h in s.handlers), s.orelse, s.finalbody]
    return [getattr(s, name) for name in ("test_body", "body", "orelse") if hasattr(s, name)]


@dataclasses.dataclass
class Function:
    """A normalised function: parameters, body, and where it came from."""

    name: str
    params: list[str]
    body: list
    filename: str
    first_line: int
    free_vars: list[str]
    global_names: list[str]
    defaults: dict = dataclasses.field(default_factory=dict)
    # locals kept in cells: written by nested functions (nonlocal), or captured by one and
    # reassigned or bound in a loop (late binding)
    cell_backed: list = dataclasses.field(default_factory=list)
    user_names: dict = dataclasses.field(default_factory=dict)  # a renamed variable -> the user's
    # a local standing for a global whose name begins with ``_`` -> the global's name
    # (frontend/underscore_names.py): the generated code binds it with ``global_key``
    global_keys: dict = dataclasses.field(default_factory=dict)


def global_key(fn: Function, name: str) -> str:
    """The name in the user's module of the global the lowered code calls ``name``."""
    return fn.global_keys.get(name, name)


# --------------------------------------------------------------------------------------------
# Printing (every stage is printable: yb.show and debugging)
# --------------------------------------------------------------------------------------------


def _call_text(s: Call) -> str:
    parts = [str(a) for a in s.args]
    if s.star_args is not None:
        parts.append(f"*{s.star_args}")
    parts += [f"{k}={v}" for k, v in s.kwargs]
    if s.star_kwargs is not None:
        parts.append(f"**{s.star_kwargs}")
    call = f"{s.func}({', '.join(parts)})"
    return f"{s.target} = {call}" if s.target else call


def format_body(body: list, indent: int = 0) -> list[str]:
    pad = "    " * indent
    lines: list[str] = []
    for s in body:
        tag = f"  # line {s.line}" if getattr(s, "line", 0) else ""
        if isinstance(s, Call):
            lines.append(pad + _call_text(s) + tag)
        elif isinstance(s, Copy):
            lines.append(f"{pad}{s.target} = {s.source}{tag}")
        elif isinstance(s, If):
            lines.append(f"{pad}if {s.test}:{tag}")
            lines += format_body(s.body, indent + 1) or [pad + "    pass"]
            if s.orelse:
                lines.append(pad + "else:")
                lines += format_body(s.orelse, indent + 1)
        elif isinstance(s, While):
            lines.append(f"{pad}while True:{tag}")
            lines += format_body(s.test_body, indent + 1)
            lines.append(f"{pad}    if not {s.test}: break")
            lines += format_body(s.body, indent + 1)
        elif isinstance(s, ForRange):
            lines.append(f"{pad}for {s.var} in range({s.start}, {s.stop}, {s.step}):{tag}")
            lines += format_body(s.body, indent + 1) or [pad + "    pass"]
        elif isinstance(s, Return):
            lines.append(f"{pad}return {s.value}{tag}")
        elif isinstance(s, With):
            lines.append(f"{pad}with {s.items}:{tag}")
            lines += format_body(s.body, indent + 1) or [pad + "    pass"]
        elif isinstance(s, Try):
            lines += _format_try(s, pad, tag, indent)
        elif isinstance(s, MakeClosure):
            for i, text in enumerate(s.source.splitlines()):
                lines.append(pad + text + (tag if i == 0 else ""))
        elif isinstance(s, Opaque):
            for i, text in enumerate(s.source.splitlines()):
                lines.append(pad + text + (tag if i == 0 else ""))
        elif isinstance(s, Pass):
            lines.append(pad + "pass")
        else:
            raise TypeError(f"unknown IR statement {s!r}")
    return lines


def _format_try(s: Try, pad: str, tag: str, indent: int) -> list[str]:
    lines = [f"{pad}try:{tag}"] + (format_body(s.body, indent + 1) or [pad + "    pass"])
    for h in s.handlers:
        clause = "except" + (f" {h.types}" if h.types else "") + (f" as {h.name}" if h.name else "")
        lines += [f"{pad}{clause}:"] + (format_body(h.body, indent + 1) or [pad + "    pass"])
    for keyword, block in (("else", s.orelse), ("finally", s.finalbody)):
        if block:
            lines += [f"{pad}{keyword}:"] + format_body(block, indent + 1)
    return lines


def format_function(fn: Function) -> str:
    header = f"def {fn.name}({', '.join(fn.params)}):"
    return "\n".join([header] + (format_body(fn.body, 1) or ["    pass"]))
