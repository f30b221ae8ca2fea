"""Float data that leaves as text or bytes and comes back as numbers within one pass.

``str``, ``repr``, ``format``, f-strings, ``np.array2string``, ``x.tobytes()`` ... of float data have
zero derivative, rightly: text is no number. But text parsed back into numbers in the same call
(``float(s)``, ``np.fromstring``, ``np.frombuffer(x.tobytes())``, ``np.loadtxt``) would carry none of
the derivative the formatted values had: silently, the gradient would lose that part. Whether a
parsed text holds formatted derivatives cannot be told from the text, so a pass that formatted
float data as text or bytes refuses to parse any after that; text parsed before (data read at
the top of a loss) and text never parsed (a log line) are no business of the derivative."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import outside_state
from .core import RuleArgumentError
from .util import holds_float_data

#: per open scope (``outside_state.scope_id``): the first call that formatted float data as text
_FORMATTED: dict[int, str] = {}
_TEXT = (str, bytes, bytearray)
#: the result types a zero-derivative call is looked at for (its other results, bools and ints from
#: comparisons and predicates, cost nothing more)
CONCERNS = frozenset({str, bytes, bytearray, float, complex, np.ndarray, np.float64, np.float32, np.float16,
                      np.complex128, np.complex64, np.longdouble})


def note_formatted(name: str) -> None:
    """Float data was formatted as text or bytes by ``name`` in the open pass."""
    key = outside_state.scope_id()
    if key is not None and key not in _FORMATTED:
        _FORMATTED[key] = name
        outside_state.at_close(lambda: _FORMATTED.pop(key, None) and None)


def after_zero_call(name: str, args: tuple, kwargs: dict, y: Any, outs: list = ()) -> None:
    """A zero-derivative call ``name(*args, **kwargs) -> y`` on primals (``outs``: its ``out=``
    arrays): float data formatted as text is noted; text parsed into float data after that in the
    pass is refused; and so is a float array sharing the memory of a float argument (a view made
    without its derivative: ``np.frombuffer(x)``)."""
    values = (*args, *kwargs.values())
    if type(y) in _TEXT:
        if any(holds_float_data(a) for a in values):
            note_formatted(name)
        return
    if not holds_float_data(y):
        return
    if any(type(a) in _TEXT for a in values):
        refuse_parsed(name)
    if type(y) is np.ndarray and not any(y is o for o in outs) and any(
            type(a) is np.ndarray and a.dtype.kind in "fc" and np.may_share_memory(a, y) for a in values):
        raise RuleArgumentError(
            f"{name}: yuebing cannot differentiate it on a float array: its result shares the array's memory "
            "(a view) without its derivative. What to do: use a view NumPy differentiates (x.reshape(-1), "
            "x.view(), x[...]), or a copy")


def refuse_parsed(name: str) -> None:
    """Refuse ``name`` parsing text into numbers when the open pass formatted float data as text."""
    formatted = _FORMATTED.get(outside_state.scope_id()) if _FORMATTED else None
    if formatted is not None:
        raise RuleArgumentError(
            f"{name}: yuebing cannot differentiate numbers parsed from text or bytes after float data was "
            f"formatted as text in the same call ({formatted}): whether the text holds those values, whose "
            "derivative it would drop, cannot be told. What to do: keep the numbers as numbers (x.copy() "
            "rather than np.frombuffer(x.tobytes())), or read text data before formatting any (at the top of "
            "the function, or outside it)")

