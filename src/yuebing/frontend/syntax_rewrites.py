"""Rewrites of three syntax families into constructs the transforms already differentiate, run
before the fence: ``match`` statements (``match_statements.py``), ``try``/``except*``
(``try_star.py``) and ``async``/``await`` (``async_functions.py``).

Each rewrite keeps to the function's own body: a nested function, lambda or class is rewritten
when it is differentiated itself, and until then runs as the Python it is. The rewritten code
calls its helpers by ``_yb_`` names, bound last to the functions (``runtime_names.py``).
"""
from __future__ import annotations

import ast

from .async_functions import desugar_async
from .match_statements import desugar_match
from .runtime_names import bind_helpers
from .try_star import desugar_try_star


def rewrite_syntax(node: ast.FunctionDef | ast.Lambda, bind: bool = True) -> ast.AST:
    """``node`` with its own match, except* and async constructs rewritten (a copy when any is);
    ``bind=False`` keeps the helpers' names, to run the result as plain Python."""
    node = desugar_async(desugar_try_star(desugar_match(node)))
    return bind_helpers(node) if bind else node
