"""NumPy's floating-point error state under differentiation: the user's ``raise`` holds for the
primal's operations only.

Under ``np.errstate(divide='raise')`` (or ``invalid``, ``over``, ``under``) a derivative program
must raise ``FloatingPointError`` where the plain call does, and nowhere else: the tangent of
``sqrt`` at 0 divides by zero, and ``0 * inf`` in a tangent makes NaN, where the primal is finite.
Primal and tangent statements are interleaved in the generated code (often on one line), and a
rule computes both, so no error state set around whole statements can tell them apart cheaply.

Instead, whenever the state a derivative program runs under has a ``raise`` -- the caller's, taken
by the entry points (``adopt``), or one the user's ``with np.errstate(...)`` sets in the
differentiated function (``ir.primitives.Managed``) -- its ``raise`` entries are turned into
``call`` with ``_float_error_call`` as the handler (the converted state is made once per state and
cached). Nothing changes while no error occurs: an operation that does not fail costs what it
did. When one fails, the handler looks at the Python frames that led to it (``_is_derivative``):

- a generated reverse pass (``*_reverse``), a function registered in ``DERIVATIVE_CODE`` (the
  partial derivatives of the elementwise rules) or a rule's ``pullback``: derivative arithmetic,
  the error is ignored (its inf or NaN stays in the derivative, as the mathematics gives it);
- a generated statement (found by the failing instruction's column in its line) that assigns only
  derivative names (tangents, partials, tangent temporaries: ``_derivative_name``): ignored too;
- anything else -- the user's code, a primal statement, a rule computing its primal, or a
  statement this module cannot read -- raises ``FloatingPointError`` as NumPy would. So an
  unrecognised form keeps raising (loudly, as before) rather than dropping a primal's error.

A state using a handler of the user's (``call`` or ``log``) is left as it is, as is every state
under NumPy without the error-state context variable nothing is converted (the old behaviour).
"""
from __future__ import annotations

import ast
import linecache
import os
import re
import sys
import types
from typing import Any

import numpy as np

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # yuebing/


def _library_dirs() -> tuple:
    """NumPy's and SciPy's folders (found without importing SciPy): their frames are passed over."""
    import importlib.util

    spec = importlib.util.find_spec("scipy")
    found = [np.__file__] + ([spec.origin] if spec is not None and spec.origin else [])
    return tuple(os.path.dirname(os.path.abspath(path)) + os.sep for path in found)


_LIBRARY_DIRS = _library_dirs()

#: code objects whose floating-point errors are derivative arithmetic (rules.declare registers the
#: elementwise partials here)
DERIVATIVE_CODE: set = set()

#: temporaries of the generated code that hold derivatives: block tangents, partials and their
#: tangents (``_b3_t``, ``_b3_p``, ``_b3_d``, ``_b3_pd``), a block's input tangents (``_a4``), its
#: output tangent (``_o5``), a float pair's tangent (``_q``), reverse-pass accumulators (``_g6d``)
_DERIVATIVE_TEMPORARY = re.compile(r"_b\d+_(t|p|d|pd|f|fd|r|rd)|_a\d+|_o\d+|_q|_g\d+d?|_fg\d+d?")


def error_state_variable() -> Any:
    """NumPy's context variable holding the error state (None for a NumPy without one)."""
    try:
        from numpy._core._ufunc_config import _extobj_contextvar
    except ImportError:
        return None
    return _extobj_contextvar if hasattr(_extobj_contextvar, "set") else None


_STATE = error_state_variable()
_DEFAULT = _STATE.get() if _STATE is not None else None
if _STATE is not None and "raise" in np.geterr().values():  # np.seterr(all='raise') before yuebing was imported:
    _DEFAULT = object()  # that state is not one to pass over
_get_state = _STATE.get if _STATE is not None else lambda: None  # (None: the old NumPy, nothing converted)
# state -> its converted twin, or None when it has no raise (a few entries: states the user made)
_CONVERTED: dict = {}


def _float_error_call(kind: str, flag: int) -> None:
    """The handler of a converted state: raise for a primal operation, ignore a derivative's."""
    if not _is_derivative(sys._getframe(1)):
        raise FloatingPointError(f"{kind} encountered")


def _converted(state: Any) -> Any:
    """``state`` with its ``raise`` entries handled by ``_float_error_call``, or None without one."""
    try:
        return _CONVERTED[state]
    except KeyError:
        pass
    token = _STATE.set(state)
    try:
        modes = np.geterr()
        twin = None
        users_handler = np.geterrcall() is not _float_error_call and {"call", "log"} & set(modes.values())
        if "raise" in modes.values() and not users_handler:  # (a handler of the user's: kept)
            converted = {k: ("call" if v == "raise" else v) for k, v in modes.items()}
            with np.errstate(**converted, call=_float_error_call):
                twin = _STATE.get()
    finally:
        _STATE.reset(token)
    if len(_CONVERTED) > 64:  # states made by the user's errstate blocks: keep the last few
        _CONVERTED.clear()
    _CONVERTED[state] = twin
    _CONVERTED[twin] = None  # (already converted)
    return twin


#: the error state in force and NumPy's default one: the entry points call ``adopt`` only when
#: ``current_state() is not DEFAULT`` (one builtin call and a comparison in the usual case)
current_state = _get_state
DEFAULT = _DEFAULT


def adopt() -> Any:
    """Convert the current error state if it raises; a token for ``restore`` (None: unchanged).
    Costs a context-variable read and a comparison in the usual (default) state."""
    state = _get_state()
    if state is _DEFAULT:
        return None
    twin = _converted(state)
    return None if twin is None else _STATE.set(twin)


_SETTINGS = ("_all", "_divide", "_over", "_under", "_invalid")


def adopt_manager(manager: Any) -> Any:
    """``adopt`` after the user's ``with`` header entered ``manager``, when it is an
    ``np.errstate`` asking to raise (another manager, or one that only ignores or warns, leaves a
    converted state converted: nothing to do, not even a look at the state)."""
    if type(manager) is not np.errstate or not any(getattr(manager, k, None) == "raise" for k in _SETTINGS):
        return None
    return adopt()


def restore(token: Any) -> None:
    """Undo ``adopt``."""
    if token is not None:
        _STATE.reset(token)


def _is_derivative(frame: types.FrameType | None) -> bool:
    """Whether the failing operation, called from ``frame``, computes a derivative."""
    while frame is not None:
        code = frame.f_code
        filename = code.co_filename
        if code in DERIVATIVE_CODE:
            return True
        if filename.startswith("<yuebing"):
            return _generated_derivative(frame)
        if filename.startswith(_PACKAGE_DIR):
            if code.co_name == "pullback":
                return True
        elif not filename.startswith(_LIBRARY_DIRS):
            return False  # the user's code (run plainly): a primal
        frame = frame.f_back
    return False


def _generated_derivative(frame: types.FrameType) -> bool:
    """Whether the generated statement ``frame`` is running assigns derivatives only."""
    code = frame.f_code
    if code.co_name.endswith("_reverse"):
        return True
    try:
        line, _, column, _ = list(code.co_positions())[frame.f_lasti // 2]
    except (IndexError, ValueError):
        return False
    text = linecache.getline(code.co_filename, line or 0)
    statement = _statement_at(text, column)
    if statement is None:
        return False
    names = _assigned_names(statement)
    suffixes = _tangent_suffixes(code)
    return bool(names) and all(_derivative_name(n, suffixes, code.co_varnames) for n in names)


def _statement_at(text: str, column: int | None) -> ast.stmt | None:
    """The simple statement of generated line ``text`` spanning ``column`` (None if unreadable)."""
    if column is None:
        return None
    indent = len(text) - len(text.lstrip())
    body = text.strip()
    for attempt in (body, body + " pass"):
        try:
            tree = ast.parse(attempt)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return)) \
                    and node.col_offset <= column - indent < (node.end_col_offset or 0):
                return node
        return None
    return None


def _assigned_names(statement: ast.stmt) -> list:
    """The names a statement assigns ([] for one that assigns none, or not only names)."""
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, (ast.AugAssign, ast.AnnAssign)):
        targets = [statement.target]
    else:
        return []
    names: list = []
    for target in targets:
        elements = target.elts if isinstance(target, ast.Tuple) else [target]
        for element in elements:
            if not isinstance(element, ast.Name):
                return []
            names.append(element.id)
    return names


def _tangent_suffixes(code: types.CodeType) -> tuple:
    """The suffixes naming the derivatives of a generated function's variables, read from its
    parameters (``x, x_t`` in forward mode; ``x, x_f, x_d, x_fd`` forward-over-reverse)."""
    params = code.co_varnames[:code.co_argcount]
    for i, name in enumerate(params):
        if name.startswith("_") or i + 1 >= len(params) or not params[i + 1].startswith(name):
            continue
        return tuple(p[len(name):] for p in params[i + 1:] if p.startswith(name) and p != name)
    return ()


def _derivative_name(name: str, suffixes: tuple, variables: tuple) -> bool:
    if _DERIVATIVE_TEMPORARY.fullmatch(name):
        return True
    return any(name.endswith(s) and name[:-len(s)] in variables for s in suffixes if s)
