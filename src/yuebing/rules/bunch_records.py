"""Recording a tuple bunch's extra keyword arguments beside it, in the record an exception's
arguments use (``exception_data.py``); the predicates and the routing of the rdata are in
``bunch_data.py``, which the batched rules import (this module imports ``exception_data``, which
imports them: kept apart, there is no cycle)."""
from __future__ import annotations

from typing import Any

from ._float_reach import holds_floats
from .bunch_data import KIND
from .exception_data import Carried, record_carried


def record_extras(role: str, y: tuple, values: list, data: list) -> Carried | None:
    """Record the extra keyword arguments ``values`` tuple bunch ``y`` was made from with their
    derivative data in ``role``; None when they hold no float data (nothing to follow)."""
    if not holds_floats(values):
        return None
    return record_carried(role, y, values, data, KIND)


def taken_rdata(carried: Carried | None, names: list) -> dict:
    """The cotangents the reads of the extra arguments ``names`` gathered, by name (once)."""
    return {} if carried is None else dict(zip(names, carried.take()))
