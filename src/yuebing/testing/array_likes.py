"""Rule cases again with their arrays given as Python lists, and their floats as Python ints.

NumPy and SciPy accept a list (or a nested list) wherever they take an array, and an int where
they take a float. The runtime converts lists that hold floats with ``np.asarray``'s rule before
a rule runs (``rules/array_like.py``), but lists of ints and plain ints reach the rule as they
are: a cotangent map doing arithmetic on them (``x * 1.0`` on a list) crashed or went wrong.
``array_like_variants(case)`` derives, from one rule ``Case``, the calls a user may write instead:

* ``list``: one float array argument as a nested list of floats, differentiated (its tangent is
  a list of floats and flows back through the conversion);
* ``int list``: one float array argument as a nested list of ints (a constant: ints carry no
  derivative), the other arguments differentiated;
* ``int``: one float scalar argument as a Python int (a constant).

A variant is made only where the plain function accepts it as NumPy does: it runs, and gives a
finite result of the original's structure (a list NumPy refuses is no call a user can write).
``run_variant`` checks one with ``check_rule``, the forward rule run through the runtime as a
traced call is.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Iterator

import numpy as np

from .. import tangents as T
from ..rules.cases import Case, ConventionCase, Expect
from .check_rule import check_rule


@dataclasses.dataclass
class Variant:
    """A rule case with one argument replaced: ``kind`` says how, ``where`` which argument.
    ``points`` are the replaced ``(args, kwargs)`` to try in turn: an int variant has several,
    as rounding may land on a point where the function itself is not smooth (``8 // 2.0``)."""

    case: Case
    kind: str
    where: int | str
    points: list

    @property
    def name(self) -> str:
        return f"{self.case.name}[{self.where}: {self.kind}]"


def _float_array(value: Any) -> bool:
    return type(value) is np.ndarray and value.dtype in (np.float64, np.complex128) and value.ndim > 0 \
        and value.size > 0


#: ways to round a float to an int: the first that gives a smooth point is used
_ROUNDINGS = (np.trunc, np.round, lambda v: np.trunc(v) + np.where(v < 0, -1, 1))


def _replacements(value: Any) -> Iterator[tuple[str, list]]:
    """``(kind, candidate values)`` for an argument."""
    if _float_array(value):
        yield "list", [value.tolist()]
        if value.dtype.kind == "f":
            yield "int list", [rounding(value).astype(int).tolist() for rounding in _ROUNDINGS]
    elif type(value) is float and math.isfinite(value):
        yield "int", [int(rounding(value)) for rounding in _ROUNDINGS]


def _as_floats(value: Any) -> Any:
    """The float twin of an int variant's value: what the case itself could have been given."""
    return float(value) if isinstance(value, int) else np.asarray(value, dtype=float)


def _finite(value: Any) -> bool:
    try:
        return all(np.all(np.isfinite(a)) for a in T.ops._collect_arrays(value, T.ops._primal_children)) \
            and all(math.isfinite(abs(v)) for v in _numbers(value))
    except TypeError:
        return False


def _numbers(value: Any) -> list:
    if isinstance(value, (float, complex)):
        return [value]
    if isinstance(value, (list, tuple)):
        return [n for v in value for n in _numbers(v)]
    return []


def _accepted(case: Case, args: tuple, kwargs: dict, reference: Any) -> bool:
    """Whether the plain function takes the replaced arguments as it takes the originals: it
    runs, quietly, and gives a finite result of the same structure."""
    try:
        with np.errstate(all="raise"):
            y = case.f(*T.structural_copy(args), **T.structural_copy(kwargs))
    except Exception:  # NumPy itself refuses (a list as ``self``, an int where it needs a float...)
        return False
    if not _finite(y):
        return False
    try:
        T.difference(y, reference)  # the same structure: a list never gives a different kind of output
    except (TypeError, ValueError):
        return False
    return True


def array_like_variants(case: Case) -> list[Variant]:
    """The list and int variants of ``case`` that the plain function accepts (module docstring)."""
    if isinstance(case, (ConventionCase, Expect)):
        return []  # conventions at points where finite differences say nothing
    try:
        reference = case.f(*T.structural_copy(case.args), **T.structural_copy(case.kwargs))
    except Exception:
        return []
    slots = [(i, value) for i, value in enumerate(case.args)] + list(case.kwargs.items())
    variants = []
    for where, value in slots:
        for kind, candidates in _replacements(value):
            points = [_replaced(case, where, v) for v in candidates]
            points = [p for p in points if _accepted(case, *p, reference)]
            if points:
                variants.append(Variant(case, kind, where, points))
    return variants


def _replaced(case: Case, where: int | str, value: Any) -> tuple[tuple, dict]:
    if isinstance(where, int):
        return case.args[:where] + (value,) + case.args[where + 1:], case.kwargs
    return case.args, {**case.kwargs, where: value}


def run_variant(variant: Variant) -> None:
    """Check one variant with ``check_rule`` (raises ``RuleCheckError`` or the rule's error).

    An int variant that fails where its float twin fails too is at a point where the function of
    the other arguments is not smooth or not differentiable (``8 // 2.0``, a knot of ``np.interp``,
    a rank-deficient matrix): the next rounding is tried, and if every rounding lands on such a
    point the rule has done on the ints what it does on the same floats. Where the twin passes,
    the failure is the rule's, and raised."""
    case = variant.case
    with case.context():
        for args, kwargs in variant.points:
            try:
                _check(case, args, kwargs)
                return
            except Exception:
                if variant.kind == "list" or _twin_passes(case, variant.where, args, kwargs):
                    raise


def _check(case: Case, args: tuple, kwargs: dict) -> None:
    check_rule(case.f, *args, kwargs=kwargs, mode=case.mode, through_runtime=True, **case.options)


def _twin_passes(case: Case, where: int | str, args: tuple, kwargs: dict) -> bool:
    """Whether ``case.f`` passes ``check_rule`` at the same point with the int argument given as
    floats and held constant (a closure's value: only the other arguments are differentiated), or
    differentiated when there is no other argument."""
    if isinstance(where, str):
        twin_kwargs = {**kwargs, where: _as_floats(kwargs[where])}
        function, others = case.f, args
    else:
        function, others, twin_kwargs = _holding(case.f, where, _as_floats(args[where])), \
            args[:where] + args[where + 1:], kwargs
        if not others:  # nothing else to differentiate: the twin is the case at these floats
            function, others = case.f, (_as_floats(args[where]),)
    try:
        check_rule(function, *others, kwargs=twin_kwargs, mode=case.mode, through_runtime=True, **case.options)
    except Exception:
        return False
    return True


def _holding(f: Any, where: int, value: Any) -> Any:
    """``f`` with positional argument ``where`` fixed to ``value``."""
    def holding(*args, **kwargs):
        return f(*args[:where], value, *args[where:], **kwargs)

    return holding
