"""Structured arrays (``dtype=[("a", float), ("b", float)]``) with float fields: their tangent is a
structured array of the same dtype (docs/tangents.md "Structured arrays", tangents/structured.py).
Made in the function, written by field, record or view, read by field and record, iterated, or
passed in: gradient, JVP and Hessian-vector product against central differences, the caller's
arguments left as they were (``check_modes``)."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
import yuebing.tangents as T
from yuebing.rules import RuleArgumentError
from yuebing.testing import check_tangent_interface
from yuebing.testing.third_order import check_third_order

from .modes import check_every_mode
from .test_deque_arguments import check_modes

DT = [("a", float), ("b", float)]
MIXED = [("m", float), ("n", int), ("name", "U5"), ("v", float, (2,)), ("c", complex)]
NESTED = [("p", [("x", float), ("y", float)]), ("k", int)]
X = np.array([0.7, -0.4, 1.3])

# ------------------------------------------------------------------------------------------------
# Made in the function
# ------------------------------------------------------------------------------------------------


def field_written(x):
    arr = np.zeros(3, dtype=DT)
    arr["a"] = x
    arr["b"] = x ** 2
    return np.sum(arr["a"] * arr["b"]) + np.sum(arr["a"] ** 2)


def record_written(x):
    arr = np.zeros(2, dtype=DT)
    arr[0] = (x[0], x[1])
    arr[1] = (x[2] * 2.0, 1.0)
    return np.sum(arr["a"] * arr["b"]) + arr[0]["a"] * arr[1]["a"]


def field_view_slice_written(x):
    arr = np.zeros(3, dtype=DT)
    arr["a"][:] = x
    arr["b"][1:] = x[:2] * x[2]
    return np.sum(arr["a"] * arr["b"] + np.sin(arr["a"]))


def written_through_view(x):
    arr = np.zeros(3, dtype=DT)
    arr["a"] = 1.0
    v = arr["b"]
    v[1] = x[0] * 3.0
    v *= x[1]
    arr["a"][2] = x[2]
    return np.sum(arr["a"] * arr["b"]) + arr["b"][1] ** 2 + arr[2]["a"] * x[0]


def made_from_records(x):
    arr = np.array([(x[0], 1.0), (x[1], x[2] * x[0])], dtype=DT)
    return np.sum(arr["a"] * arr["b"]) + arr[1]["b"] ** 2


def rows_iterated(x):
    arr = np.array([(x[0], 2.0), (x[1], x[2]), (0.5, x[0] * x[1])], dtype=DT)
    total = 0.0
    for row in arr:
        total = total + row["a"] * np.cos(row["b"])
    return total


def mixed_fields(x):
    arr = np.zeros(2, dtype=MIXED)
    arr[0] = (x[0], 3, "one", [x[1], 2.0], x[2] + 1j * x[0])
    arr["name"][1] = "two"
    arr["n"][1] = 5
    arr[1]["v"][:] = x[:2] * 2.0  # a record's sub-array field: a view of the array
    arr["m"][1] = x[2] ** 2
    total = np.sum(arr["m"] * arr["n"]) + np.sum(arr["v"] ** 2) + np.abs(arr["c"][0]) ** 2
    return total * (arr["name"][0] == "one") + np.sum(arr[1]["v"]) * arr[1]["m"]


def nested_fields(x):
    arr = np.zeros(2, dtype=NESTED)
    arr["p"]["x"] = x[:2]
    arr[1] = ((x[2], x[0] * x[1]), 4)
    p = arr["p"]
    return np.sum(p["x"] * p["y"] * arr["k"]) + np.sum(p["x"] ** 2)


def rows_from_a_list(x):
    arr = np.zeros(3, dtype=DT)
    arr[:2] = [(x[0], x[1]), (x[2], 2.0)]
    arr[2:] = x[1] * 3.0  # a number fills every field
    arr[[0, 2]] = arr[[2, 0]]  # records moved by an advanced index
    return np.sum(arr["a"] * arr["b"] ** 2)


def copied(x):
    arr = np.array([(x[0], x[1]), (x[2], 1.0)], dtype=DT)
    other = arr.copy()
    other["a"] *= 2.0
    same = np.asarray(arr)
    same[0]["b"] = x[2] ** 2  # np.void field write: the record is a view
    return np.sum(other["a"] * arr["b"]) + np.sum(np.array(arr)["a"])


def records_unpacked(x):
    arr = np.array([(x[0], 2.0), (x[1] * x[2], 0.5), (1.5, x[2])], dtype=DT)
    total = 0.0
    for (w, c), v in zip(arr, x):
        total = total + w * c * v
    for i, row in enumerate(arr[::-1]):
        total = total + row[0] * row[1] * i  # fields by position
    return total


def as_lists_and_views(x):
    arr = np.array([(x[0], x[1]), (x[2], 1.0)], dtype=DT)
    rows = arr.tolist()
    swapped = arr[["b", "a"]]  # a view of two fields
    arr[1] = arr[0]  # a record written from a record
    return rows[0][0] * rows[1][0] + np.sum(swapped["b"] * arr["b"]) + np.sum(arr.reshape(2, 1)["a"] ** 3)


def records_broadcast(x):
    arr = np.zeros(3, dtype=[("a", float), ("b", float), ("k", int), ("v", float, (2,))])
    arr[:] = (x[0], x[1] ** 2, 4, [x[2], 1.0])  # one record into every record
    arr[1:] = [(x[2], 1.0, 2, x[:2])]  # a list of one record, broadcast
    arr[0]["v"] = x[1]  # a number into a record's sub-array field
    return np.sum(arr["a"] * arr["b"] * arr["k"]) + np.sum(arr["v"] ** 2 * arr["a"][:, None])


MADE_INSIDE = [records_broadcast, field_written, record_written, field_view_slice_written, written_through_view, made_from_records,
               rows_iterated, mixed_fields, nested_fields, rows_from_a_list, copied, records_unpacked,
               as_lists_and_views]


@pytest.mark.parametrize("f", MADE_INSIDE, ids=lambda f: f.__name__)
def test_structured_arrays_made_in_the_function(f):
    check_modes(f, X.copy())


# The cases refused before structured arrays had a tangent type, now differentiated: those that
# touch fields only in every mode, batched forward too (check_every_mode); records in the others.


def _field_view_copied_into(x):
    arr = np.empty(3, dtype=DT)
    np.copyto(arr["a"], x)
    return np.sum(arr["a"])


def _field_view_added_to(x):
    arr = np.zeros(3, dtype=DT)
    field = arr["a"]
    field += x
    return np.sum(arr["a"] ** 2)


def _field_items_written_in_a_loop(x):
    arr = np.zeros(3, dtype=DT)
    for i in range(3):
        arr["a"][i] = x[i]
    return np.sum(arr["a"] ** 2)


def _record_field_written(x):
    arr = np.zeros(2, dtype=DT)
    arr[0]["a"] = x[0]  # a record (np.void) is a view of its row
    return arr["a"][0] * x[1]


def _constant_table(x):
    table = np.zeros(2, dtype=[("n", int), ("w", float)])
    return np.sum(x) * table.shape[0] + float(table["w"].sum())


@pytest.mark.parametrize("f", [field_written, field_view_slice_written, _field_view_copied_into, _field_view_added_to,
                               _field_items_written_in_a_loop, _constant_table], ids=lambda f: f.__name__.strip("_"))
def test_fields_in_every_mode(f):
    check_every_mode(f, X.copy())


def test_a_record_field_written():
    check_modes(_record_field_written, X.copy())


def test_a_field_read_under_differentiation_leaves_the_array_writable():
    table = np.zeros(2, dtype=[("n", int), ("w", float)])
    table["w"] = [0.5, 2.0]
    yb.grad(lambda x: np.sum(x) * float(table["w"].sum()))(X.copy())
    table["w"][0] = 1.5
    assert table["w"][0] == 1.5


@pytest.mark.parametrize("f", [record_written, rows_iterated], ids=lambda f: f.__name__)
def test_third_order(f):
    check_third_order(f, X.copy())


# ------------------------------------------------------------------------------------------------
# Passed in: the gradient is a structured array of the same dtype, the argument left as it was
# ------------------------------------------------------------------------------------------------


def _table():
    return np.array([(0.6, -1.1), (0.3, 0.9), (1.4, 0.2)], dtype=DT)


def _mixed_table():
    arr = np.zeros(2, dtype=MIXED)
    arr[0] = (0.4, 2, "a", [0.1, -0.3], 0.5 - 0.2j)
    arr[1] = (-0.8, 3, "b", [0.7, 0.2], 1.5 + 0.1j)
    return arr


def read_by_field(arr, x):
    return np.sum(arr["a"] * arr["b"]) * x + np.sum(np.exp(arr["a"])) * x ** 2


def read_by_record(arr, x):
    total = 0.0
    for row in arr:
        total = total + row["a"] ** 2 * row["b"] * x
    return total + arr[1]["b"] * arr[2]["a"]


def written_argument(arr, x):
    arr["a"] = arr["a"] * x
    arr[1] = (x, arr[1]["b"] ** 2)
    return np.sum(arr["a"] * arr["b"])


def mixed_argument(arr, x):
    return np.sum(arr["m"] * arr["n"] * x) + np.sum(arr["v"] ** 2) * np.abs(arr["c"][1]) + len(arr["name"][0])


@pytest.mark.parametrize("f, table", [(read_by_field, _table), (read_by_record, _table), (written_argument, _table),
                                      (mixed_argument, _mixed_table)], ids=lambda v: getattr(v, "__name__", ""))
def test_structured_argument(f, table):
    check_modes(f, table(), 0.8)


def test_gradient_is_a_structured_array():
    arr = _table()
    grad = yb.grad(read_by_field)(arr, 0.8)
    assert grad.dtype == arr.dtype and grad.shape == arr.shape
    eps = 1e-6
    for name in ("a", "b"):
        for i in range(len(arr)):
            up, down = arr.copy(), arr.copy()
            up[name][i] += eps
            down[name][i] -= eps
            slope = (read_by_field(up, 0.8) - read_by_field(down, 0.8)) / (2 * eps)
            assert grad[name][i] == pytest.approx(slope, rel=1e-6, abs=1e-8)


# ------------------------------------------------------------------------------------------------
# The tangent type
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [_table, _mixed_table, lambda: np.zeros((2, 2), dtype=NESTED),
                                  lambda: _mixed_table()[1], lambda: (lambda t: (t, t[1:], [t[0]]))(_table())],
                         ids=["floats", "mixed", "nested", "record", "views"])
def test_tangent_interface(make):
    check_tangent_interface(make())


def test_tangent_types():
    arr = _mixed_table()
    assert T.tangent_type(arr) is np.ndarray and T.zero_tangent(arr).dtype == arr.dtype
    assert T.tangent_type(arr[0]) is np.void
    assert T.zero_tangent(np.zeros(2, dtype=[("n", int), ("s", "U2")])) is T.NoTangent  # labels only


# ------------------------------------------------------------------------------------------------
# What is refused by name, never dropped
# ------------------------------------------------------------------------------------------------

MODES = {"grad": lambda f: yb.grad(f)(X.copy()), "jvp": lambda f: yb.jvp(f, (X.copy(),), (X.copy(),)),
         "hvp": lambda f: yb.hvp(f, (X.copy(),), (X.copy(),))}


def _made(x):
    arr = np.zeros(3, dtype=DT)
    arr["a"] = x
    arr["b"] = x * 2.0
    return arr


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("call, name", [(lambda a, x: np.repeat(a, 2), "numpy.repeat"),
                                        (lambda a, x: np.full(2, x[0], dtype=DT), "numpy.full"),
                                        (lambda a, x: np.tile(a, 2), "numpy.tile"), (lambda a, x: np.roll(a, 1), "numpy.roll"),
                                        (lambda a, x: a.astype([("a", np.float32), ("b", float)]), "ndarray.astype")],
                         ids=["repeat", "full", "tile", "roll", "astype"])
def test_other_numpy_calls_are_refused_by_name(call, name, mode):
    """Rules written for float arrays would find no float dtype and drop the fields' derivatives."""
    def f(x):
        out = call(_made(x), x)
        return np.sum(np.asarray(out[0]["a"]) if isinstance(out, list) else out["a"])

    with pytest.raises(RuleArgumentError, match=f"{name}: yuebing does not differentiate this call on a structured"):
        MODES[mode](f)


def test_batched_forward_follows_fields_and_refuses_records():
    def by_field(x):
        arr = _made(x)
        return arr["a"] * arr["b"]

    jac = yb.jacobian(by_field, mode="fwd")(X.copy())
    np.testing.assert_allclose(jac, yb.jacobian(by_field, mode="rev")(X.copy()), rtol=1e-12)

    def by_record(x):
        arr = _made(x)
        return np.array([row["a"] * row["b"] for row in arr])

    with pytest.raises(RuleArgumentError, match="batched forward mode.*chunk_size=1"):
        yb.jacobian(by_record, mode="fwd")(X.copy())
    np.testing.assert_allclose(yb.jacobian(by_record, mode="fwd", chunk_size=1)(X.copy()),
                               yb.jacobian(by_record, mode="rev")(X.copy()), rtol=1e-12)


TABLE = np.array([(0.5, 1.0), (-0.2, 2.0)], dtype=DT)


@pytest.mark.parametrize("mode", MODES)
def test_a_write_into_a_global_table_is_refused_with_advice(mode):
    """A global is a constant of the differentiation: read-only, as a global float array is."""
    def f(x):
        row = TABLE[0]
        row["a"] = x[0]
        return np.sum(TABLE["a"] * x[:2])

    with pytest.raises(ValueError, match="read-only") as caught:
        MODES[mode](f)
    assert "np.copy(TABLE)" in "\n".join(getattr(caught.value, "__notes__", []))
    assert TABLE[0]["a"] == 0.5


def test_flatten_lays_out_the_float_fields():
    """``yb.flatten`` of a model holding a structured array: its float fields, in dtype order;
    ``unflatten`` keeps the other fields, and is differentiated like the model."""
    table = np.zeros(2, dtype=[("m", float), ("n", int), ("name", "U5"), ("v", float, (2,))])
    table[0], table[1] = (0.4, 2, "a", [0.1, -0.3]), (-0.8, 3, "b", [0.7, 0.2])
    model = {"t": table, "w": 1.5}
    flat, unflatten = yb.flatten(model)
    assert flat.size == 2 * (1 + 2) + 1  # the fields m and v, and w
    rebuilt = unflatten(flat)
    assert rebuilt["t"]["name"].tolist() == model["t"]["name"].tolist() and rebuilt["t"]["n"].tolist() == [2, 3]

    def loss(p):
        return np.sum(p["t"]["m"] * p["t"]["v"][:, 1]) * p["w"] ** 2

    np.testing.assert_allclose(yb.flatten_tangent(model, yb.grad(loss)(model)),
                               yb.grad(lambda v: loss(unflatten(v)))(flat), rtol=1e-12)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_a_jacobian_indexed_by_records_is_refused(mode):
    """Its elements are records: seeding one would mix its fields (the rows came out as sums of
    fields). yb.vjp takes a structured cotangent as it is."""
    with pytest.raises(TypeError, match="structured array.*records, not numbers"):
        yb.jacobian(_made, mode=mode)(X.copy())
    with pytest.raises(TypeError, match="structured array.*records, not numbers"):
        yb.jacobian(lambda t: t["a"] * t["b"], mode=mode)(_table())
    _, pullback = yb.vjp(_made, X.copy())
    cotangent = _made(np.array([1.0, -2.0, 0.5]))
    (g,) = pullback(cotangent)
    step = np.array([0.3, 0.1, -0.7])
    eps = 1e-6
    up, down = _made(X + eps * step), _made(X - eps * step)
    expected = sum(np.sum(cotangent[k] * (up[k] - down[k])) for k in ("a", "b")) / (2 * eps)
    assert np.dot(g, step) == pytest.approx(expected, rel=1e-6)
