"""The last touches of the normal form (``normalise.py``): runs of statements produced where one
was expected (``_Seq``) flattened into their blocks, and a name for the generated functions."""
from __future__ import annotations

import keyword

from ..ir import nodes as ir


class _Seq(list):
    """A run of statements produced where one was expected (flattened away)."""


def _flatten(body: list) -> list:
    flat: list = []
    for s in body:
        if isinstance(s, _Seq):
            flat.extend(_flatten(list(s)))
            continue
        if isinstance(s, ir.If):
            s.body, s.orelse = _flatten(s.body), _flatten(s.orelse)
        elif isinstance(s, ir.While):
            s.test_body, s.body = _flatten(s.test_body), _flatten(s.body)
        elif isinstance(s, (ir.ForRange, ir.With)):
            s.body = _flatten(s.body)
        elif isinstance(s, ir.Try):
            s.body, s.orelse, s.finalbody = _flatten(s.body), _flatten(s.orelse), _flatten(s.finalbody)
            for h in s.handlers:
                h.body = _flatten(h.body)
        flat.append(s)
    return flat


def _identifier(name: str) -> str:
    """A name for the generated functions: the function's own when it is an identifier, else a
    cleaned one (``<lambda>`` -> ``_lambda``; a ``__name__`` set to ``"L-BFGS-B"``)."""
    if name == "<lambda>":
        return "_lambda"
    if name.isidentifier() and not keyword.iskeyword(name):
        return name
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return cleaned if cleaned.isidentifier() and not keyword.iskeyword(cleaned) else f"_{cleaned}"
