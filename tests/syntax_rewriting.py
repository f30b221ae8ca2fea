"""Run a function as yuebing rewrites it (``frontend/syntax_rewrites.py``) but as plain Python:
the rewritten ``def`` compiled with the helpers' names as globals, so tests compare its behaviour
(values, bindings, exceptions) with the original's."""
from __future__ import annotations

import ast

from yuebing.frontend.runtime_names import HELPERS
from yuebing.frontend.source import function_node
from yuebing.frontend.syntax_rewrites import rewrite_syntax


def rewritten(fn):
    """``fn`` rebuilt from its rewritten source (helpers by name); the same globals otherwise."""
    node, filename = function_node(fn)
    new = rewrite_syntax(node, bind=False)
    assert new is not node, f"{fn.__name__}: nothing was rewritten"
    namespace = dict(fn.__globals__, **HELPERS)
    exec(compile(ast.Module([new], []), filename, "exec"), namespace)
    return namespace[new.name]
