"""Structured arrays (``dtype=[("a", float), ("b", float)]``) have no tangent: float data written
into one, or an array made from float data with such a dtype, would lose its derivative (the
gradient was silently 0 in every mode, or half of it through a field's float view), so each
is refused by name in every mode. A structured
array of constants, read as labels, is no business of the derivative and passes."""
import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.core import RuleArgumentError

from .modes import check_every_mode

STRUCT = [("a", float), ("b", float)]


def _field_written(x):
    arr = np.zeros(3, dtype=STRUCT)
    arr["a"] = x
    return np.sum(arr["a"] * x)


def _row_written(x):
    arr = np.zeros(2, dtype=STRUCT)
    arr[0] = (x[0], x[1])
    return arr["a"][0] * x[2]


def _made_from_floats(x):
    arr = np.array([(x[0], 1.0), (x[1], 2.0)], dtype=STRUCT)
    return np.sum(arr["a"])


def _field_view_written(x):
    arr = np.zeros(3, dtype=STRUCT)
    arr["a"][:] = x  # through the field's float view, whose next read sees the memory only
    return np.sum(arr["a"] * x)


def _field_view_copied_into(x):
    arr = np.empty(3, dtype=STRUCT)
    np.copyto(arr["a"], x)
    return np.sum(arr["a"])


def _field_view_added_to(x):
    arr = np.zeros(3, dtype=STRUCT)
    field = arr["a"]
    field += x
    return np.sum(arr["a"] ** 2)


def _constant_table(x):
    table = np.zeros(2, dtype=[("n", int), ("w", float)])
    return np.sum(x) * table.shape[0] + float(table["w"].sum())


X = np.array([0.7, 0.35, 1.2])
MODES = {
    "grad": lambda f: yb.grad(f)(X.copy()),
    "jvp": lambda f: yb.jvp(f, (X.copy(),), (np.ones(3),)),
    "hvp": lambda f: yb.hvp(f, (X.copy(),), (np.ones(3),)),
    "jacobian_fwd": lambda f: yb.jacobian(f, mode="fwd")(X.copy()),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [_field_written, _row_written, _made_from_floats, _field_view_written,
                               _field_view_copied_into, _field_view_added_to])
def test_float_data_into_a_structured_array_is_refused(f, mode):
    with pytest.raises(RuleArgumentError, match="structured arrays"):
        MODES[mode](f)


def test_a_structured_array_of_constants_passes():
    check_every_mode(_constant_table, X)
