"""Stage 6: compile generated source into functions, with the source registered in
``linecache`` so tracebacks and ``yb.show`` point at real, readable generated lines.

``compile_checked`` is the one place generated code is compiled (reverse, forward and
second-order programs): code that does not compile is a bug in yuebing, reported as an
``InternalError`` naming the user's function and line, never as a bare ``SyntaxError`` from a
``<yuebing ...>`` file."""
from __future__ import annotations

import __future__
import itertools
import linecache
import types
from typing import Any

from . import array_blocks, float_blocks, templates
from ..ir import nodes as ir

_counter = itertools.count()


class InternalError(RuntimeError):
    """Generated code that does not compile: a bug in yuebing, not in the user's code."""


#: generated file name -> (the file of the function it was generated from, generated line -> that
#: file's line, the function's qualified name). A function defined inside user code is defined by
#: the generated code of its enclosing function, so its own code object names the generated file:
#: ``user_location`` follows this table back to the user's file and line.
GENERATED_FROM: dict[str, tuple[str, dict, str]] = {}


def user_location(filename: str, line: int | None) -> tuple[str, int | None]:
    """The user's file and line that line ``line`` of ``filename`` came from (``filename`` itself
    when it is not generated code); through every level of nested functions."""
    for _ in range(32):  # nesting depth; a cycle cannot arise, the bound is only a guard
        origin = GENERATED_FROM.get(filename)
        if origin is None or line is None or line not in origin[1]:
            break
        filename, line = origin[0], origin[1][line]
    return filename, line


def user_qualname(filename: str, qualname: str) -> str:
    """``outer.<locals>.inner`` for a nested function whose qualified name is that of the
    generated pass that defined it (``outer_forward.<locals>.inner``)."""
    origin = GENERATED_FROM.get(filename)
    if origin is None:
        return qualname
    if ".<locals>." not in qualname:  # the program generated from a function (third order's
        return user_qualname(origin[0], origin[2])  # plain program, f_plain_jvp): that function
    return f"{user_qualname(origin[0], origin[2])}.<locals>.{qualname.rsplit('.<locals>.', 1)[1]}"


def _user_future_flags(fn: Any) -> int:
    """The ``from __future__`` flags of the user's code ``fn`` that change what generated code
    does: only ``annotations``. Generated code is compiled with these, never with codegen's own
    (``compile`` inherits the caller's flags): a local class's annotations would be strings when
    differentiated and objects when run, and code reading them would take another branch."""
    code = getattr(fn, "__code__", None)
    return (code.co_flags if code is not None else 0) & __future__.annotations.compiler_flag


def compile_checked(source: str, filename: str, fn: Any, line_map: dict | None, mode: str) -> types.CodeType:
    """``compile(source)``, or an ``InternalError`` naming ``fn``, the user's line the failing
    generated line came from, and what failed."""
    code = getattr(fn, "__code__", None)
    if line_map and code is not None:
        GENERATED_FROM[filename] = (code.co_filename, line_map, getattr(fn, "__qualname__", code.co_name))
    try:
        return compile(source, filename, "exec", flags=_user_future_flags(fn), dont_inherit=True)
    except SyntaxError as error:
        code = getattr(fn, "__code__", None)
        line = (line_map or {}).get(error.lineno or 0) or getattr(code, "co_firstlineno", "?")
        where = f"{getattr(code, 'co_filename', '?')}:{line}"
        text = (error.text or "").strip()
        raise InternalError(
            f"yuebing bug: the {mode} code generated for {getattr(fn, '__qualname__', fn)} ({where}) does not "
            f"compile ({error.msg}: {text!r}, line {error.lineno} of {filename}). Your code is not at fault; "
            "please report this with the function"
        ) from None


def compile_generated(generated: Any, fn: types.FunctionType, function_ir: ir.Function,
                      namespace: dict[str, Any]) -> tuple[Any, Any]:
    """Compile a generated reverse rule's forward and reverse functions with the runtime's names
    (``namespace``, which the runtime gives: codegen does not import it) and the templates'."""
    filename = f"<yuebing reverse {fn.__qualname__} #{next(_counter)}>"
    source = generated.source
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = dict(namespace)
    namespace.update(templates.NAMESPACE)
    namespace.update(array_blocks.NAMESPACE)
    namespace.update(float_blocks.NAMESPACE)
    namespace.update(generated.constants)
    namespace["_G"] = fn.__globals__
    # classes defined in the function belong to its module (their tangent type, their repr)
    namespace["__name__"] = fn.__globals__.get("__name__", "__main__")
    deferred_from = getattr(generated, "deferred_from", 0)
    if deferred_from:  # functions called only now and then, compiled on their first call
        lines = source.splitlines(True)
        source = "".join(lines[:deferred_from - 1])
        rest = "\n" * (deferred_from - 1) + "".join(lines[deferred_from - 1:])  # at their own line numbers
        later = _CompiledLater(rest, filename, fn, generated.line_map, namespace)
        namespace.update({name: _Deferred(name, later) for name in generated.deferred_names})
    code = compile_checked(source, filename, fn, generated.line_map, "reverse-mode")
    exec(code, namespace)  # noqa: S102 - our own generated code
    forward = namespace[generated.forward_name]
    reverse = namespace[generated.reverse_name]
    forward.__yuebing_line_map__ = generated.line_map
    return forward, reverse


class _CompiledLater:
    """The end of a generated source, compiled (once) when a function defined there is first
    called (``deferred_fallbacks.py``): into the namespace of the rest, at its own line numbers."""

    def __init__(self, source: str, filename: str, fn: Any, line_map: dict, namespace: dict) -> None:
        self.source, self.filename, self.fn, self.line_map, self.namespace = source, filename, fn, line_map, namespace
        self.done = False

    def __call__(self) -> dict:
        if not self.done:
            code = compile_checked(self.source, self.filename, self.fn, self.line_map, "reverse-mode")
            exec(code, self.namespace)  # noqa: S102 - our own generated code; replaces the _Deferred
            self.done = True
        return self.namespace


class _Deferred:
    """Stands for the generated function ``name`` until its first call compiles it."""

    def __init__(self, name: str, later: _CompiledLater) -> None:
        self.name, self.later = name, later

    def __call__(self, *args: Any) -> Any:
        return self.later()[self.name](*args)
