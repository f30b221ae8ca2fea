"""Context managers that may suppress an exception raised in their block (issue 13).

A ``with`` statement whose manager is entered as written (``primitives.Managed``) cannot keep the
work its block did before an exception the manager suppresses: the block is one unit of work, and
half of it would be recorded. A manager whose ``__exit__`` is Python code that may return a true
value (``return kind is ValueError``), or a ``@contextmanager`` function whose generator catches an
exception (``try: yield`` with an ``except`` clause), is therefore entered as PEP 343 spells the
statement out, its methods differentiated, so that the ``try`` lowering keeps exactly the work done
(``frontend/with_statements.py``). Whether one may suppress is read from its source once
(conservatively yes without source); a manager of C code (``np.errstate``, a lock) is not asked:
it is entered as written, and a suppression refused by name.

A ``@contextmanager`` function defined in the differentiated function is, when the statement runs,
contextlib's helper as yuebing differentiated it (``differentiated_generator_manager``): whether its
generator catches is read from the function's own source by the ``with`` lowering.
"""
from __future__ import annotations

import ast
import contextlib
import functools
import inspect
import re
import textwrap
import types
from typing import Any

from .primitives import holds_float_data, is_generator_manager, is_python_manager_class


def may_suppress(maker: Any) -> bool:
    """Whether ``maker`` (what a ``with`` header calls) makes a manager that may suppress: a class
    with Python ``__enter__``/``__exit__`` whose ``__exit__`` may return a true value, or a
    ``@contextmanager`` function whose generator catches an exception."""
    if is_generator_manager(maker):
        return _catches(maker.__wrapped__.__code__)
    if is_python_manager_class(maker):
        return _returns_true(maker.__exit__.__code__)
    return False


def manager_entered_by_methods(manager: Any) -> bool:
    """``with m:`` with ``m`` made before the statement (asked when it runs): its class has Python
    ``__enter__``/``__exit__``, and it holds float data (``primitives.manager_holding_floats``) or
    its ``__exit__`` may suppress."""
    kind = type(manager)
    return is_python_manager_class(kind) and (holds_float_data(manager) or _returns_true(kind.__exit__.__code__))


#: the file name of ``contextlib.contextmanager`` as a generated program (transform/codegen.py, ...)
_DIFFERENTIATED_CONTEXTMANAGER = re.compile(r"<yuebing [a-z]+ contextmanager #\d+>")


def made_when_run_entered_by_methods(maker: Any, catches: bool, *values: Any) -> bool:
    """A ``with`` header calling ``maker``, a name bound when the function runs (a manager imported
    or defined in it), handed ``values`` (asked when it runs): true when ``maker`` makes a manager
    of Python code and the values or what it captures hold float data, or it may suppress
    (``catches``: a local ``@contextmanager`` generator has an ``except`` clause)."""
    if differentiated_generator_manager(maker) or is_generator_manager(maker) and _defined_in_generated_code(maker):
        return catches or holds_float_data(maker, *values)  # (its generator a state machine: see catches)
    if is_generator_manager(maker) or is_python_manager_class(maker):
        return may_suppress(maker) or holds_float_data(maker, *values)
    return False


def made_by_a_python_method(method: Any, *values: Any) -> bool:
    """A ``with`` header calling ``method``, a bound method of an object of the function
    (``m.session(x)``), handed ``values`` (asked when it runs): true when it is Python code and its
    object or the values hold float data, or it is a ``@contextmanager`` method that may suppress.
    The call is then differentiated, and the manager it makes entered as one made before."""
    func = getattr(method, "__func__", None)
    if not isinstance(method, types.MethodType) or not isinstance(func, types.FunctionType):
        return False
    return is_generator_manager(func) and may_suppress(func) or holds_float_data(method.__self__, *values)


def differentiated_generator_manager(maker: Any) -> bool:
    """Whether ``maker`` is the helper ``contextlib.contextmanager`` returns as yuebing differentiated
    it (a ``@contextmanager`` function defined in the differentiated function: its decorator is
    differentiated code), whose manager's ``__enter__``/``__exit__`` are contextlib's Python."""
    code = getattr(maker, "__code__", None)
    return isinstance(maker, types.FunctionType) and maker.__globals__ is vars(contextlib) \
        and code.co_name == "helper" and _DIFFERENTIATED_CONTEXTMANAGER.fullmatch(code.co_filename) is not None \
        and isinstance(getattr(maker, "__wrapped__", None), types.FunctionType)


def _defined_in_generated_code(maker: Any) -> bool:
    """Whether the generator function a ``@contextmanager`` helper wraps was defined in a program
    yuebing generated (a local one, rewritten as a state machine)."""
    return maker.__wrapped__.__code__.co_filename.startswith("<yuebing ")


def generator_catches(function: ast.AST) -> bool:
    """Whether the ``@contextmanager`` generator ``function`` (its definition) may swallow what is
    thrown into it at its ``yield``: a ``try`` with an ``except`` clause."""
    return any(isinstance(n, (ast.Try, getattr(ast, "TryStar", ast.Try))) and n.handlers for n in _own_nodes(function))


def _tree(code: types.CodeType) -> ast.AST | None:
    """The function definition ``code`` was compiled from, or None without source."""
    try:
        lines, _ = inspect.findsource(code)
    except (OSError, TypeError):
        return None
    source = textwrap.dedent("".join(inspect.getblock(lines[code.co_firstlineno - 1:])))
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    return next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)


def _own_nodes(function: ast.AST) -> list:
    """The nodes of ``function``'s body, not those of functions or classes defined in it."""
    found, pending = [], list(ast.iter_child_nodes(function))
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        found.append(node)
        pending.extend(ast.iter_child_nodes(node))
    return found


@functools.lru_cache(maxsize=None)
def _returns_true(code: types.CodeType) -> bool:
    """Whether an ``__exit__`` may return a true value: a ``return`` of anything but nothing,
    ``None`` or ``False`` (True when its source is not found)."""
    function = _tree(code)
    if function is None:
        return True
    return any(isinstance(n, ast.Return) and n.value is not None
               and not (isinstance(n.value, ast.Constant) and n.value.value in (None, False))
               for n in _own_nodes(function))


@functools.lru_cache(maxsize=None)
def _catches(code: types.CodeType) -> bool:
    """Whether a ``@contextmanager`` generator may swallow what is thrown into it at its
    ``yield``: a ``try`` with an ``except`` clause (True when its source is not found)."""
    function = _tree(code)
    return function is None or generator_catches(function)
