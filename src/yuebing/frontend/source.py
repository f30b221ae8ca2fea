"""Stage 1: find a function's source and parse it with the standard ``ast`` module.

The whole file is parsed (so line numbers are the user's real ones) and the ``def`` or
``lambda`` node of the function's code object is picked out. Sources come from ``linecache``,
so functions defined in notebooks or ``exec``'d code whose source was registered there work too.

The text found is checked against the code that actually runs: the file is compiled and the
function's code object must be among the results (bytecode, constants, names, variables and
positions alike, nested code included). A file edited after import is therefore not
differentiated in its new form, and two lambdas on one line (or in one
comprehension, or a default argument) are told apart by which one compiles to the live code.
A closure that yuebing's own generated program defines is read from its own lines alone: that
program's registered text is exactly what was compiled, and can be thousands of lines.

When there is no source text (the interactive prompt, ``python -c``, ``exec`` of a string,
cloudpickle by value) or the text found is not that of the live code (a file edited since it was
imported), the function is recovered from its bytecode instead (``bytecode.py``), and refused
with ``SourceUnavailableError`` when that fails.
"""
from __future__ import annotations

import ast
import functools
import inspect
import linecache
import types
from typing import Any

from . import bytecode
from .code_compare import same_code
from .parsing import parse as parse_source


class SourceUnavailableError(TypeError):
    """The function's source cannot be found, so it cannot be transformed."""


@functools.lru_cache(maxsize=256)
def _parse_file(filename: str, text: str) -> ast.Module:
    return parse_source(text, filename=filename)


def _file_text(filename: str, module_globals: dict | None) -> str:
    lines = linecache.getlines(filename, module_globals)
    if not lines:
        linecache.checkcache(filename)
        lines = linecache.getlines(filename, module_globals)
    return "".join(lines)


@functools.lru_cache(maxsize=256)
def _definitions(filename: str, text: str) -> dict[tuple[str, int], list[ast.AST]]:
    """Every ``def`` and ``lambda`` of the file by the ``(co_name, co_firstlineno)`` its code
    may have (a decorated def's: its first decorator's line or its own), in ``ast.walk`` order:
    one walk of the file, not one per function."""
    found: dict[tuple[str, int], list[ast.AST]] = {}
    for node in ast.walk(_parse_file(filename, text)):
        for key in _keys(node):
            found.setdefault(key, []).append(node)
    return found


def _keys(node: ast.AST) -> tuple:
    """The ``(co_name, co_firstlineno)`` the code of a ``def`` or ``lambda`` node may have."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
        return tuple((node.name, line) for line in dict.fromkeys((node.lineno, first)))
    if isinstance(node, ast.Lambda):
        return (("<lambda>", node.lineno),)
    return ()


def _generated_definition(filename: str, text: str, code: types.CodeType) -> ast.AST | None:
    """The ``def``/``lambda`` of ``code`` in a program yuebing generated, parsed from its own
    lines alone (at their line numbers and columns, under an ``if 1:``): the whole program can
    be thousands of lines. None when those lines do not parse alone."""
    first = code.co_firstlineno
    last = max([first] + [p[1] for p in code.co_positions() if p[1] is not None])
    if first < 2:
        return None
    piece = "\n" * (first - 2) + "if 1:\n" + "".join(text.splitlines(True)[first - 1:last])
    try:
        tree = parse_source(piece, filename=filename)
    except SyntaxError:
        return None
    key = (code.co_name, first)
    return _node_of_code([node for node in ast.walk(tree) if key in _keys(node)], code)


def _candidates(filename: str, text: str, code: types.CodeType) -> list[ast.AST]:
    return list(_definitions(filename, text).get((code.co_name, code.co_firstlineno), ()))


def _registered_text(filename: str) -> bool:
    """Whether ``filename``'s text was put in ``linecache`` by the code that compiled it (no
    file on disk to go stale: notebook cells, ``exec``'d source)."""
    entry = linecache.cache.get(filename)
    return entry is not None and len(entry) == 4 and entry[1] is None


def _generated_by_yuebing(filename: str) -> bool:
    """Whether ``filename`` is a program yuebing generated (a closure it defines is being
    differentiated): its registered text is exactly what was compiled, so the live code's own
    positions find the definition; compiling a large generated program again cost seconds."""
    return filename.startswith("<yuebing ") and _registered_text(filename)


def _flag_sets() -> tuple[int, ...]:
    """Compiler flags to try: none, then ``from __future__ import annotations`` inherited from
    the code that compiled the source (code built by ``exec`` in such a module has it)."""
    import __future__

    return (0, __future__.annotations.compiler_flag)


@functools.lru_cache(maxsize=64)
def _compiled_codes(filename: str, text: str, flags: int) -> dict | None:
    """Every code object the file compiles to, by ``(name, first line)``; None if it does not
    compile."""
    try:
        module = compile(_parse_file(filename, text), filename, "exec", flags=flags, dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    found: dict = {}
    stack = [module]
    while stack:
        code = stack.pop()
        found.setdefault((code.co_name, code.co_firstlineno), []).append(code)
        stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return found


def _compiles_to(filename: str, text: str, code: types.CodeType) -> types.CodeType | None:
    """The code object compiled from ``text`` that equals ``code`` (None if the text has none).
    Positions are compared first; then, so that a line table written differently by another
    build of the compiler is no obstacle, the same code without them (the text then still
    computes exactly what runs)."""
    for positions in (True, False):
        for flags in _flag_sets():
            codes = _compiled_codes(filename, text, flags)
            if codes is None:
                return None
            for candidate in codes.get((code.co_name, code.co_firstlineno), ()):
                if same_code(candidate, code, positions):
                    return candidate
    return None


def _contains(node: ast.AST, line: int, end_line: int, col: int, end_col: int) -> bool:
    """Whether ``node`` spans an instruction's position (in ``co_positions`` order)."""
    return (node.lineno, node.col_offset) <= (line, col) and (end_line, end_col) <= (node.end_lineno, node.end_col_offset)


def _parameters(node: ast.FunctionDef | ast.Lambda) -> list[str]:
    """Parameter names in ``co_varnames`` order."""
    args = node.args
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    return names + [a.arg for a in (args.vararg, args.kwarg) if a is not None]


def _node_of_code(candidates: list, code: types.CodeType) -> ast.AST | None:
    """The innermost candidate node whose source range holds every positioned instruction of
    ``code`` (the compiled code of the node, so the positions are the node's own)."""
    # the function's first instruction sits at column 0 of its first line, outside a lambda
    spans = [p for p in code.co_positions() if None not in p and p[2:] != (0, 0)]
    if spans:  # a node holds them all when it holds the first start and the last end
        first = min((p[0], p[2]) for p in spans)
        last = max((p[1], p[3]) for p in spans)
        spans = [(first[0], last[0], first[1], last[1])]
    holding = [n for n in candidates if all(_contains(n, *p) for p in spans)]
    if not holding:
        return None
    if not spans and len(holding) > 1:  # no column positions (python -X no_debug_ranges)
        holding = [n for n in holding if _parameters(n) == list(code.co_varnames[:len(_parameters(n))])]
    if not spans and len(holding) > 1:
        raise SourceUnavailableError(
            f"yuebing cannot tell apart the {len(holding)} definitions of {code.co_qualname} on line "
            f"{code.co_firstlineno} of {code.co_filename}: Python runs without column positions "
            "(-X no_debug_ranges or PYTHONNODEBUGRANGES). Define them on separate lines")
    # nodes holding the same instructions are nested: the innermost starts last
    return max(holding, key=lambda n: (n.lineno, n.col_offset, -n.end_lineno, -n.end_col_offset))


def function_node(fn: types.FunctionType) -> tuple[ast.FunctionDef | ast.Lambda, str]:
    """The ``def``/``lambda`` node of ``fn`` and its file name."""
    code = fn.__code__
    filename = code.co_filename
    text = _file_text(filename, fn.__globals__)
    if not text:
        return _from_bytecode(fn, f"yuebing cannot find the source of {fn.__qualname__}, "
                                  f"{bytecode.describe(fn)}")
    if _generated_by_yuebing(filename):
        node = _generated_definition(filename, text, code)
        if node is not None:
            return node, filename
    try:
        _parse_file(filename, text)  # (cached: _definitions reads it)
    except SyntaxError as error:
        raise SourceUnavailableError(
            f"cannot parse the source file of {fn.__qualname__} ({filename}): {error}. If the file "
            "changed since it was imported, reload the module (importlib.reload) or restart Python"
        ) from None
    compiled = code if _generated_by_yuebing(filename) else _compiles_to(filename, text, code)
    if compiled is None and filename in linecache.cache:
        # linecache may hold an older copy than the one imported (a module reloaded since):
        # read the file again before concluding it changed
        linecache.checkcache(filename)
        fresh = _file_text(filename, fn.__globals__)
        if fresh and fresh != text:
            text = fresh
            compiled = _compiles_to(filename, text, code)
    if compiled is None and _registered_text(filename):
        # source registered by whoever compiled it (a notebook cell, exec'd code): it cannot
        # have changed on disk, but may have been compiled with flags or AST transformations
        # of its own. Its candidates are told apart by the live code's positions.
        compiled = code
    if compiled is None and _rewritten_by_pytest(fn):
        # pytest rewrote the module's assert statements (they call its helpers, named
        # ``@pytest_ar``): the text computes what runs, the assertions' messages aside
        compiled = code
    if compiled is None:
        # the file changed since it was imported: what runs is the code object, so recover it
        return _from_bytecode(fn, f"the source of {fn.__qualname__} in {filename} (line {code.co_firstlineno}) "
                                  "does not compile to the code being run: the file changed since it was "
                                  "imported", "or reload the module (importlib.reload) or restart Python")
    node = _node_of_code(_candidates(filename, text, code), compiled)
    if node is None:
        return _from_bytecode(fn, f"yuebing could not locate the definition of {fn.__qualname__} at "
                                  f"{filename}:{code.co_firstlineno} in its source")
    return node, filename


def _rewritten_by_pytest(fn: types.FunctionType) -> bool:
    """Whether ``fn``'s module was compiled by pytest's assertion rewriter (a test module)."""
    return "@py_builtins" in fn.__globals__ and "@py_builtins" in names_used(fn.__code__)


def names_used(code: types.CodeType) -> set[str]:
    """The names ``code`` and the code objects nested in it load as globals or attributes
    (``co_names``): every global it may read."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= names_used(const)
    return names


def _from_bytecode(fn: types.FunctionType, why: str, other_fix: str = "") -> tuple[ast.AST, str]:
    """The function's ``def``/``lambda`` recovered from its code object (``frontend/bytecode.py``),
    when its source text is missing or is not the text of the code that runs."""
    try:
        return bytecode.recover(fn), fn.__code__.co_filename
    except bytecode.RecoveryError as error:
        raise SourceUnavailableError(
            f"{why}, and recovering it from its bytecode failed: {error}. yuebing differentiates "
            f"Python source: define {fn.__name__} in a file (a module you import, or a script you "
            f"run){', ' + other_fix if other_fix else ''}") from None


def unwrap_callable(f: Any) -> Any:
    """The plain function behind staticmethod/classmethod/property getters and decorators."""
    if isinstance(f, (staticmethod, classmethod)):
        return f.__func__
    if isinstance(f, property):
        return f.fget
    return f


def unparse_with_lines(node: ast.stmt) -> tuple[str, tuple[int, ...]]:
    """``ast.unparse(node)`` and, for each line of it, the line of the user's source it came from
    (so generated code that defines a nested function maps its body line by line: an error inside
    the nested function then names the user's line, not its ``def``). The text is parsed again and
    walked beside ``node``; if the two trees differ anywhere, every line maps to ``node``'s first."""
    text = ast.unparse(node)
    count = text.count("\n") + 1
    fallback = (node.lineno,) * count
    try:
        again = parse_source(text).body
    except SyntaxError:
        return text, fallback
    if len(again) != 1:
        return text, fallback
    origin: dict[int, int] = {}
    for new, old in zip(ast.walk(again[0]), ast.walk(node)):
        if type(new) is not type(old):
            return text, fallback
        if isinstance(new, ast.stmt):  # breadth first: inner statements overwrite their parents' lines
            for line in range(new.lineno, (new.end_lineno or new.lineno) + 1):
                origin[line] = old.lineno
    return text, tuple(origin.get(i, node.lineno) for i in range(1, count + 1))


def source_text(fn: types.FunctionType) -> str:
    node, _ = function_node(fn)
    return ast.unparse(node)


__all__ = ["SourceUnavailableError", "function_node", "inspect", "same_code", "source_text", "unparse_with_lines",
           "unwrap_callable"]
