"""Stage 1, without source text: recover a function's ``def``/``lambda`` from its code object.

A function typed at the interactive prompt, run by ``python -c`` or from standard input, built by
``exec`` of a string that nobody put in ``linecache``, or unpickled by value (cloudpickle) has no
source file; nor does one whose file changed since it was imported (its text no longer compiles
to the code that runs). ``source.function_node`` then asks this module, which decompiles the code
object (``frontend/decompiler.py``) into a standard-library ``ast`` and hands that to the same
normaliser as source text.

Why our own decompiler. The maintained candidates do not do the job: ``depyf`` (MIT, maintained
for PyTorch, documented for CPython 3.7-3.11) turned ordinary functions into wrong code when tried
(a ``while`` condition became a ``continue`` outside any loop, a loop body's statement was
duplicated after ``continue``, a walrus evaluated its value twice, ``try``/``except`` lost its
handler, a list comprehension appended to its loop variable); ``decompyle3``/``uncompyle6`` stop
at CPython 3.8/3.9, and ``pycdc`` is C++ with partial 3.11 coverage. Decompiling the output of
one known compiler version is a bounded problem, and the check below makes a guess safe.

Never a wrong reconstruction: the recovered ``def`` is compiled (inside a function declaring the
live code's free variables, when it has any) and the result must equal the live code object --
bytecode, names, variables, flags, constants and nested code, everything but positions and
qualified names (``code_compare.same_code``). Otherwise ``SourceUnavailableError`` says what failed and
to put the function in a file. Line numbers of the recovered statements are the live code's own
(the user's ``<stdin>``/``<string>`` lines), so errors still point at them.

CPython 3.11, 3.12 and 3.13 are decompiled (3.12/3.13 code is first rewritten into 3.11's
instructions, ``decompiler_312.py``); on other versions the recovery is refused with the same
advice.
"""
from __future__ import annotations

import __future__
import ast
import copy
import dis
import functools
import sys
import types
from typing import Any

from .code_compare import same_code
from .decompiler import Decompiler, DecompileError

#: CPython versions whose bytecode the decompiler knows
SUPPORTED = ((3, 11), (3, 12), (3, 13))

_CO_NESTED = 0x10
_FUTURE_FLAGS = __future__.annotations.compiler_flag


class RecoveryError(Exception):
    """The function could not be recovered from its bytecode (the message says why)."""


def recover(fn: types.FunctionType) -> ast.FunctionDef | ast.Lambda:
    """The ``def``/``lambda`` node of ``fn``, rebuilt from ``fn.__code__`` and checked to compile
    back to it; raises ``RecoveryError``."""
    defaults = len(fn.__defaults__ or ())
    kw_defaults = tuple(sorted(fn.__kwdefaults__ or ()))
    return copy.deepcopy(_recovered(fn.__code__, defaults, kw_defaults))


@functools.lru_cache(maxsize=256)
def _recovered(code: types.CodeType, defaults: int, kw_defaults: tuple) -> ast.AST:
    if sys.version_info[:2] not in SUPPORTED:
        raise RecoveryError(f"yuebing decompiles the bytecode of CPython "
                            f"{', '.join('.'.join(map(str, v)) for v in SUPPORTED)} only, and this is "
                            f"{sys.version.split()[0]}")
    placeholders = [ast.Name(f"__default{k}__", ast.Load()) for k in range(defaults)]
    kw = {name: ast.Name(f"__default_{name}__", ast.Load()) for name in kw_defaults}
    try:
        node = Decompiler(code).function(placeholders, kw)
    except DecompileError as error:
        raise RecoveryError(f"its bytecode has {error}, which yuebing cannot decompile") from None
    except (IndexError, KeyError, AttributeError, TypeError, ValueError) as error:
        raise RecoveryError(f"its bytecode did not decompile ({type(error).__name__}: {error})") from None
    set_positions(node, code.co_firstlineno)
    if not compiles_back(node, code):
        raise RecoveryError("the function rebuilt from its bytecode does not compile back to the same code")
    return node


def set_positions(node: ast.AST, line: int) -> int:
    """Give every node a line (its own, as the decompiler set it from the live code's line
    table, else its parent's) and an end line covering its children; returns the end line."""
    line = getattr(node, "lineno", None) or line
    end = line
    for child in ast.iter_child_nodes(node):
        end = max(end, set_positions(child, line))
    if "lineno" in node._attributes:
        node.lineno, node.col_offset, node.end_lineno, node.end_col_offset = line, 0, end, 0
    return end


def compiles_back(node: ast.AST, code: types.CodeType) -> bool:
    """Whether ``node`` compiles to ``code`` (all but positions and qualified names)."""
    try:
        module = compile(_module_around(node, code), code.co_filename, "exec",
                         flags=code.co_flags & _FUTURE_FLAGS, dont_inherit=True)
    except (SyntaxError, ValueError, TypeError):
        return False
    return any(same_structure(candidate, code) for candidate in _codes_named(module, code.co_name))


def _module_around(node: ast.AST, code: types.CodeType) -> ast.Module:
    """A module defining ``node`` where the live code was defined: inside a function whose
    variables are the free variables (and inside a class for ``__class__``) when it has any."""
    statement = node if isinstance(node, ast.stmt) else ast.Expr(node)
    free = [name for name in code.co_freevars if name != "__class__"]
    body = [statement]
    if "__class__" in code.co_freevars:
        body = [ast.ClassDef("__yuebing_class__", [], [], body, [])]
    if free or code.co_flags & _CO_NESTED:
        cells = [ast.Assign([ast.Name(n, ast.Store()) for n in free], ast.Constant(None))] if free else []
        body = [ast.FunctionDef("__yuebing_outer__", _no_arguments(), cells + body, [], None, None)]
    imports = [ast.Import([ast.alias(name)]) for name in sorted(imported_names(code))]
    module = ast.Module(imports + body, [])
    return ast.fix_missing_locations(module)


def imported_names(code: types.CodeType) -> set[str]:
    """Globals the live code treats as imported modules: CPython 3.11 calls ``m.f()`` with
    ``LOAD_ATTR`` rather than ``LOAD_METHOD`` when ``m`` was imported in the module (3.12 with a
    ``LOAD_ATTR`` that is not a method load, 3.13 with one followed by ``PUSH_NULL``)."""
    names = set()
    for c in _codes_named(code, None):
        ins = [i for i in dis.get_instructions(c) if i.opname != "EXTENDED_ARG"]
        names |= {a.argval for a, b in zip(ins, ins[1:])
                  if a.opname == "LOAD_GLOBAL" and a.arg & 1 and b.opname == "LOAD_ATTR"}
        # CPython 3.13 loads the module, the function, then the NULL of the call
        names |= {a.argval for a, b, c in zip(ins, ins[1:], ins[2:]) if a.opname == "LOAD_GLOBAL"
                  and not a.arg & 1 and b.opname == "LOAD_ATTR" and not b.arg & 1 and c.opname == "PUSH_NULL"}
        # a class body loads names with LOAD_NAME: the NULL before it (3.11, 3.12), after the attribute (3.13)
        names |= {b.argval for a, b, c in zip(ins, ins[1:], ins[2:])
                  if a.opname == "PUSH_NULL" and b.opname == "LOAD_NAME" and c.opname == "LOAD_ATTR"}
        names |= {a.argval for a, b, c in zip(ins, ins[1:], ins[2:]) if a.opname == "LOAD_NAME"
                  and b.opname == "LOAD_ATTR" and not b.arg & 1 and c.opname == "PUSH_NULL"
                  and sys.version_info >= (3, 13)}
    return names


def _no_arguments() -> ast.arguments:
    return ast.arguments([], [], None, [], [], None, [])


def _codes_named(code: types.CodeType, name: str) -> list[types.CodeType]:
    found, stack = [], [code]
    while stack:
        c = stack.pop()
        if name is None or c.co_name == name:
            found.append(c)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return found


def _plain(code: types.CodeType) -> types.CodeType:
    """``code`` without what depends on where it was compiled: qualified names, file name."""
    consts = tuple(_plain(c) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_qualname=code.co_name, co_filename="", co_consts=consts)


def same_structure(a: types.CodeType, b: types.CodeType) -> bool:
    tables = [(c.co_name, c.co_exceptiontable) for c in _codes_named(a, None)]
    return same_code(_plain(a), _plain(b), positions=False) and \
        tables == [(c.co_name, c.co_exceptiontable) for c in _codes_named(b, None)]


def describe(fn: Any) -> str:
    """How a function without usable source came to be, for error messages."""
    filename = fn.__code__.co_filename
    if filename == "<stdin>":
        return "typed at the interactive prompt (or read from standard input)"
    if filename == "<string>":
        return "run from a string (python -c, or exec without a file name)"
    return f"from {filename!r}, whose text yuebing could not find"


__all__ = ["RecoveryError", "SUPPORTED", "compiles_back", "describe", "recover", "same_structure"]
