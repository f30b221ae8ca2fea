"""Closures in plain forward programs (third derivatives through ``yb.grad``).

A nested function ``h`` that captures variables of the function ``g`` under ``yb.grad`` needs,
in third order, the derivatives of the captured values *and of their tangents*. The plain program
of ``g`` (``plain_forward.py``) keeps each variable and its tangent as two locals, ``s`` and
``s_t``; next to ``h`` itself (the user's definition, as in ``g``) it defines ``h``'s own plain
program *nested in ``g``'s*: an ordinary Python closure over ``s`` and ``s_t``, reading them, and
writing them through ``nonlocal``, by name. That nested program is ``h``'s tangent in the plain
program, and ``_jvp(h, h_t, ...)`` calls it. Second order then sees nothing but closures over
local variables, which it differentiates like any user code.

Variables the user's code keeps in cells (written through ``nonlocal``, captured and rebound:
late binding) are plain locals of the plain programs: Python's own cells give the sharing and
the late binding, for the primals and the tangents alike.

This module finds the nested function's IR (normalising its definition inside a stand-in for the
enclosing function), recognises a nested plain program, and binds a call's arguments to it.
"""
from __future__ import annotations

import itertools
import linecache
import textwrap
import types
from typing import Any

from ..ir import nodes as ir

#: the name of every nested plain program starts with this (how ``_jvp`` recognises one)
PLAIN_PREFIX = "_yb_plain_"

_stand_ins = itertools.count()


def plain_name(target: str) -> str:
    return f"{PLAIN_PREFIX}{target}"


def is_plain_closure(value: Any) -> bool:
    """Whether ``value`` is a nested plain program (a closure's tangent in a plain program)."""
    code = getattr(value, "__code__", None)
    return type(value) is types.FunctionType and code.co_name.startswith(PLAIN_PREFIX) \
        and code.co_filename.startswith("<")


def nested_ir(s: ir.MakeClosure, globals_: dict, filename: str) -> ir.Function:
    """The normal form of the function ``s`` defines, its captured variables read from cells as
    in any closure: the definition is compiled inside a stand-in for the enclosing function that
    binds them, at the user's line numbers (each line keeps its line in error messages)."""
    from ..frontend.normalise import normalise

    body = [f"{name} = None" for name in s.free_vars] + s.source.split("\n") + [f"return {s.target}"]
    padding = max(s.line - 1 - len(s.free_vars) - 1, 0)
    text = "\n" * padding + "def _yb_enclosing():\n" + textwrap.indent("\n".join(body), "    ") + "\n"
    stand_in = f"<yuebing plain closure {next(_stand_ins)}: {s.target} of {filename}>"
    linecache.cache[stand_in] = (len(text), None, text.splitlines(True), stand_in)
    # (not this module's ``from __future__ import annotations``: the definitions inside it read
    # the globals their annotations name, which normalise then binds where they run)
    module = compile(text, stand_in, "exec", dont_inherit=True)
    enclosing = next(c for c in module.co_consts if isinstance(c, types.CodeType))
    made = types.FunctionType(enclosing, globals_)()
    if type(made) is not types.FunctionType:
        raise TypeError(f"{s.target} is not a function")  # (a decorated definition: refused by the caller)
    return normalise(made)


def globals_read(lines: list[str], captured: dict) -> set[str]:
    """The names the nested ``def`` in ``lines`` (and the functions inside it) read as globals,
    found by Python's own scoping, the ``captured`` variables bound around it."""
    import symtable

    bound = sorted({n for v in captured.values() for n in v[:2]}) or ["_"]
    text = "def _yb_enclosing():\n    " + " = ".join(bound) + " = None\n" + textwrap.indent("\n".join(lines), "    ")
    names: set[str] = set()
    tables = list(symtable.symtable(text, "<plain closure>", "exec").get_children()[0].get_children())
    while tables:
        table = tables.pop()
        if table.get_type() == "function":
            names |= set(table.get_globals())
        tables += table.get_children()
    return names


def compiled_definitions(source: str, filename: str, namespace: dict) -> dict:
    """The functions ``source`` defines, compiled under ``filename`` (kept in ``linecache``, so
    that second order and error messages read their lines): definitions third order runs as user
    code (yuebing's own files are not differentiated). ``filename`` must not start with
    ``<yuebing``, the mark of generated passes."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - yuebing's own source
    return namespace


def user_params(plain: types.FunctionType) -> list[str]:
    """The user's parameters of a nested plain program ``(_fn, _fn_t, p, p_t, ...)``."""
    code = plain.__code__
    return list(code.co_varnames[2:code.co_argcount:2])


def bind(plain: types.FunctionType, fn: Any, n_args: int, keywords: list) -> list[tuple[str, Any]]:
    """How a call of closure ``fn`` with ``n_args`` positional arguments and ``keywords`` fills
    the parameters of its plain program (``protocols.bind_call``'s plan)."""
    from .protocols import bind_call, code_signature

    return bind_call(code_signature(fn), user_params(plain), fn.__qualname__, n_args, keywords)


__all__ = ["PLAIN_PREFIX", "bind", "compiled_definitions", "globals_read", "is_plain_closure", "nested_ir", "plain_name", "user_params"]
