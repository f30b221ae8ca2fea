"""Structured arrays (``dtype=[("a", float), ("b", float)]``) have no tangent: float data written
into one, or an array made from float data with such a dtype, would lose its derivative (the
gradient was silently 0 in every mode, or half of it through a field's float view), so each
is refused by name in every mode. A float field read from one is a read-only view under
differentiation, so a write through it (an item write or ``v *= x``, which the inline templates
and second order make without the refusal's check) raises, with a note saying why. A structured
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


def _field_view_item_written(x):
    arr = np.zeros(3, dtype=STRUCT)
    v = arr["a"]
    v[1] = x[0]  # an inline template's write: the next read of the field would see the memory only
    return np.sum(arr["a"] * x)


def _field_items_written_in_a_loop(x):
    arr = np.zeros(3, dtype=STRUCT)
    for i in range(3):
        arr["a"][i] = x[i]
    return np.sum(arr["a"] ** 2)


def _field_view_multiplied_in_place(x):
    arr = np.ones(3, dtype=STRUCT)
    v = arr["a"]
    v *= x
    return np.sum(arr["a"] ** 2)


def _record_field_written(x):
    arr = np.zeros(2, dtype=STRUCT)
    arr[0]["a"] = x[0]  # a record (np.void) is a view of its row
    return arr["a"][0] * x[1]


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


def _message_and_notes(error: BaseException) -> str:
    return " ".join([str(error), *getattr(error, "__notes__", [])])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [_field_view_item_written, _field_items_written_in_a_loop,
                               _field_view_multiplied_in_place, _record_field_written])
def test_a_write_through_a_field_view_is_refused(f, mode):
    with pytest.raises((RuleArgumentError, ValueError)) as caught:
        MODES[mode](f)
    assert "structured arrays" in _message_and_notes(caught.value) or "not void" in str(caught.value)


def test_a_field_read_under_differentiation_leaves_the_array_writable():
    table = np.zeros(2, dtype=[("n", int), ("w", float)])
    table["w"] = [0.5, 2.0]
    yb.grad(lambda x: np.sum(x) * float(table["w"].sum()))(X.copy())
    table["w"][0] = 1.5  # the read-only view was the differentiated code's own, not the caller's
    assert table["w"][0] == 1.5


def test_a_structured_array_of_constants_passes():
    check_every_mode(_constant_table, X)
