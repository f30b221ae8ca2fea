"""How a NumPy function written as a full rule (not a one-line ``elementwise`` entry) reads its
call: the machinery ``numpy_elementwise``, ``numpy_creation`` and ``numpy_random`` share, with no
rules of its own.

* ``Params``: the primal's signature, so call-site keywords bind to positions and the parameters a
  call did not pass get their defaults;
* ``dense_tangent``: an argument's forward tangent with ``NoTangent`` read as 0.0;
* ``run_into_out`` / ``write_forward_out``: a call's result as a fresh array or written into
  ``out=`` (restoring the overwritten contents in the pullback).
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from ..tangents import NoTangent
from . import aliasing_views
from .core import CoDual, Dual, RuleArgumentError, primal
from .declare import _unpack_out
from .util import fit_tangent, out_cotangent, output, tangent


class Params:
    """The parameters of a primal, for rules written as ``rule(*args)``.

    The rule gets the primal's signature (so call-site keywords bind to positions) and fills the
    parameters the call did not pass with their defaults. Its pullback returns one rdata per
    argument it *received*: ``(NoRData, *rdatas[:len(args)])``.
    """

    def __init__(self, template: Callable) -> None:
        self.signature = inspect.signature(template)
        self.defaults = [p.default for p in self.signature.parameters.values()]

    def __call__(self, rule: Callable) -> Callable:
        rule.__signature__ = self.signature  # type: ignore[attr-defined]
        return rule

    def fill(self, args: tuple) -> list:
        return list(args) + self.defaults[len(args):]

    @classmethod
    def of(cls, f: Callable) -> "Params":
        """The parameters of primal ``f``, keyword-only ones included (all bindable by name)."""
        P = inspect.Parameter
        params = [p.replace(kind=P.POSITIONAL_OR_KEYWORD) for p in inspect.signature(f).parameters.values()
                  if p.kind not in (P.VAR_POSITIONAL, P.VAR_KEYWORD)]
        self = cls.__new__(cls)
        self.signature = inspect.Signature(params)
        self.defaults = [p.default for p in params]
        return self

    def call(self, f: Callable, args: Any) -> Any:
        """``f`` on the primals of ``args``: the first positionally, the others (those given,
        i.e. not the very default object) by keyword."""
        names = list(self.signature.parameters)
        values = [primal(a) for a in args]
        keywords = {n: v for n, v, d in zip(names[1:], values[1:], self.defaults[1:]) if v is not d}
        return f(values[0], **keywords)


def dense_tangent(v: Any) -> Any:
    """The forward tangent of an argument, with ``NoTangent`` (or a default) as 0.0."""
    t = tangent(v)
    return 0.0 if t is NoTangent else t


def run_into_out(call: Callable[[Any], Any], out: Any) -> tuple[CoDual, Callable[[Any], Any]]:
    """Run ``call(out_array_or_None)``; return the result codual and ``cotangent(dy)``.

    Without ``out=`` the result is fresh. With ``out=`` the out array is mutated: ``cotangent``
    reads its post-call cotangent, zeroes its fdata (its old contents were overwritten: their
    cotangent is 0) and restores its old contents. Call it before reading any primal the call
    may have overwritten (``out`` may be an input).
    """
    target = _unpack_out(out)
    if target is None:
        result = output(call(None))
        return result, lambda dy: out_cotangent(result, dy)
    saved = target.primal.copy()
    call(target.primal)
    aliasing_views.note_write(target.primal)

    def cotangent(dy: Any) -> Any:
        fd = target.fdata
        g = fd.copy() if isinstance(fd, np.ndarray) else 0.0
        if isinstance(fd, np.ndarray):
            fd[...] = 0
        target.primal[...] = saved
        return g

    return target, cotangent


def write_forward_out(y: Any, dy: Any, out: Any) -> Dual:
    """A forward rule's result: fresh ``Dual(y, dy)``, or ``y`` written into ``out=`` in place."""
    if out is None or primal(out) is None:
        return Dual(y, fit_tangent(dy, y))
    if isinstance(primal(out), tuple):
        if len(primal(out)) != 1:
            raise RuleArgumentError("yuebing supports a single out= array")
        out = Dual(primal(out)[0], tangent(out)[0] if isinstance(tangent(out), tuple) else tangent(out))
    target = primal(out)
    target[...] = y
    t = tangent(out)
    if isinstance(t, np.ndarray):
        t[...] = fit_tangent(dy, target)
        return Dual(target, t)
    return Dual(target, fit_tangent(dy, target))
