"""Stage 1: find a function's source and parse it with the standard ``ast`` module.

The whole file is parsed (so line numbers are the user's real ones) and the ``def`` or
``lambda`` node matching the function's code object is picked out. Sources come from
``linecache``, so functions defined in notebooks or ``exec``'d code whose source was registered
there work too. Two lambdas on one line are told apart by the column positions recorded in their
code objects.
"""
from __future__ import annotations

import ast
import functools
import inspect
import linecache
import types
from typing import Any


class SourceUnavailableError(TypeError):
    """The function's source cannot be found, so it cannot be transformed."""


@functools.lru_cache(maxsize=256)
def _parse_file(filename: str, text: str) -> ast.Module:
    return ast.parse(text, filename=filename)


def _file_text(filename: str, module_globals: dict | None) -> str:
    lines = linecache.getlines(filename, module_globals)
    if not lines:
        linecache.checkcache(filename)
        lines = linecache.getlines(filename, module_globals)
    return "".join(lines)


def _candidates(tree: ast.AST, code: types.CodeType) -> list[ast.AST]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == code.co_name:
            first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
            if code.co_firstlineno in (node.lineno, first):
                found.append(node)
        elif isinstance(node, ast.Lambda) and code.co_name == "<lambda>" and node.lineno == code.co_firstlineno:
            found.append(node)
    return found


def _lambda_matches(node: ast.Lambda, code: types.CodeType) -> bool:
    params = [a.arg for a in node.args.posonlyargs + node.args.args]
    if params != list(code.co_varnames[: len(params)]):
        return False
    positions = getattr(code, "co_positions", None)
    if positions is None:
        return True
    body = node.body
    for line, _end, col, _end_col in positions():
        if line is not None and col is not None:
            if (line, col) >= (body.lineno, body.col_offset) and (line, col) <= (body.end_lineno, body.end_col_offset):
                return True
    return False


def function_node(fn: types.FunctionType) -> tuple[ast.FunctionDef | ast.Lambda, str]:
    """The ``def``/``lambda`` node of ``fn`` and its file name."""
    code = fn.__code__
    filename = code.co_filename
    text = _file_text(filename, fn.__globals__)
    if not text:
        raise SourceUnavailableError(
            f"yuebing cannot find the source of {fn.__qualname__} (file {filename!r}): it needs "
            "Python source to differentiate a function. Define it in a file, or register the "
            "source with linecache when building it with exec"
        )
    try:
        tree = _parse_file(filename, text)
    except SyntaxError as error:
        raise SourceUnavailableError(f"cannot parse the source file of {fn.__qualname__}: {error}") from None
    candidates = _candidates(tree, code)
    if len(candidates) > 1:
        candidates = [c for c in candidates if not isinstance(c, ast.Lambda) or _lambda_matches(c, code)]
    if len(candidates) != 1:
        raise SourceUnavailableError(
            f"yuebing could not locate the definition of {fn.__qualname__} at {filename}:"
            f"{code.co_firstlineno} ({len(candidates)} candidates); if the file changed since it was "
            "imported, reload it"
        )
    return candidates[0], filename


def unwrap_callable(f: Any) -> Any:
    """The plain function behind staticmethod/classmethod/property getters and decorators."""
    if isinstance(f, (staticmethod, classmethod)):
        return f.__func__
    if isinstance(f, property):
        return f.fget
    return f


def source_text(fn: types.FunctionType) -> str:
    node, _ = function_node(fn)
    return ast.unparse(node)


__all__ = ["SourceUnavailableError", "function_node", "inspect", "source_text", "unwrap_callable"]
