"""``ast.parse`` for every part of yuebing, one thread at a time.

CPython 3.11 keeps the AST constructor's recursion depth in the interpreter, not the thread: two
threads parsing at once (first calls of differentiated functions from a thread pool) can fail
with ``SystemError: AST constructor recursion depth mismatch`` (CPython gh-106905). A lock
around our own parsing keeps them apart.
"""
from __future__ import annotations

import ast
import threading

_PARSING = threading.RLock()  # (re-entrant: a finalizer run during a parse may parse too)


def parse(source: str, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    """``ast.parse(source, filename, mode)`` under yuebing's parsing lock."""
    with _PARSING:
        return ast.parse(source, filename=filename, mode=mode)


__all__ = ["parse"]
