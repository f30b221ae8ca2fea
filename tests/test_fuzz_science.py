"""The fuzzer's productions of what scientists write (``yuebing.testing.fuzz_science``).

Each feature's focused programs must come out right (or refused by name) in every mode, checked by
``fuzz.check_program`` (reverse vs forward vs differences vs hvp); a structured array made in
the function is differentiated through its fields' views (tangents/structured.py), and a write
into a global table (a constant) is refused by name in every mode, never silently wrong.
"""
import random

import numpy as np
import pytest

from yuebing.testing import fuzz
from yuebing.testing.fuzz_programs import DEFAULT_FEATURES, features_in, random_args, random_program
from yuebing.testing.fuzz_science import SCIENCE_FEATURES

HEADER = "import math\nimport numpy as np\nimport scipy.special\n\n"
ARGS = (np.array([0.4, -0.7, 1.1]), 0.8)
TABLE = "    tab = np.ones(3, dtype=[('w', float), ('c', float)])\n"

# a float written through a field's view, each way a field is written: right in every mode
FIELD_WRITES = {
    "item of a field view": "    fv = tab['w']\n    fv[1] = s * x[0]\n",
    "field view multiplied in place": "    fv = tab['w']\n    fv *= x\n",
    "field items in a loop": "    for i in range(3):\n        tab['w'][i] = x[i] * s\n",
    "step slice of a field": "    fv = tab['w'][::2]\n    fv[0] = s\n",
    "ufunc out= a field": "    np.sin(x, out=tab['w'])\n",
    "np.copyto into a field": "    np.copyto(tab['w'], x * s)\n",
    "field += array": "    tab['w'] += x\n",
    "np.add.at on a field": "    np.add.at(tab['w'], [0, 0], x[:2])\n",
}


@pytest.mark.parametrize("write", FIELD_WRITES.values(), ids=list(FIELD_WRITES))
def test_a_write_through_a_field_view_is_right_in_every_mode(write):
    source = HEADER + "def f(x, s):\n" + TABLE + write + "    return np.sum(tab['w'] * x) + s\n"
    outcome = fuzz.check_program(source, ARGS)
    assert outcome.status == "right", str(outcome)


def test_a_module_table_read_by_field_and_by_row_is_right():
    source = HEADER + ("TAB = np.array([(0.5, 1.0), (-0.2, 2.0), (1.0, 0.3)], dtype=[('w', float), ('c', float)])\n\n"
                       "def f(x, s):\n    acc = 0.0\n    for row in TAB:\n        acc = acc + row['c'] * np.sin(s * row['w'])\n"
                       "    return np.sum(TAB['c'] * np.tanh(x)) + acc * TAB['w'][1]\n")
    assert fuzz.check_program(source, ARGS).status == "right"


RECORDS = ("REC = np.array([(0.5, [1.0, 2.0]), (-0.3, [0.4, -1.2])], dtype=[('w', float), ('v', float, (2,))])\n\n")


def test_a_module_table_read_by_record_position_and_sub_array_is_right():
    """A record's fields (np.void items, refused before) are constants, by name, position or a
    sub-array field."""
    source = HEADER + RECORDS + ("def f(x, s):\n    acc = 0.0\n    for i in range(2):\n"
                                 "        acc = acc + REC[i][0] * np.sin(x[i] * s) + np.sum(REC[i]['v'] * x[1:]) * REC[i]['w']\n"
                                 "    return acc\n")
    assert fuzz.check_program(source, ARGS).status == "right"


@pytest.mark.parametrize("write", ["    v = REC[0]['v']\n    v[0] = x[0] * s\n", "    REC[1]['v'][1] = s\n",
                                   "    row = REC[0]\n    row['w'] = s\n"])
def test_a_write_through_a_record_is_refused_in_every_mode(write):
    """A record's sub-array field is a view of the table, a global and so a constant: a float
    written through it would lose its derivative (the gradient missed it silently in reverse mode
    and hvp), so the table is read-only, as a global float array is."""
    source = HEADER + RECORDS + "def f(x, s):\n" + write + "    return np.sum(REC['v'][0] * x[:2]) + REC['w'][0] * s\n"
    outcome = fuzz.check_program(source, ARGS)
    assert outcome.status == "refused", str(outcome)
    assert {f.mode for f in outcome.findings} >= {"reverse", "forward", "hvp"}, str(outcome)


@pytest.mark.parametrize("made", ["np.array([(0.5, 1.0), (-0.2, 2.0), (1.0, 0.3)], dtype=[('w', float), ('c', float)])",
                                  "np.ones(3, dtype=[('w', float), ('c', float)])\n    tab['c'] = [0.5, -0.2, 1.0]"])
def test_a_table_of_constants_made_inside_f_is_right(made):
    """Refused before structured arrays had a tangent type (the refusal could not tell constant
    floats from differentiated ones)."""
    source = HEADER + f"def f(x, s):\n    tab = {made}\n    return np.sum(tab['c'] * np.tanh(x)) + s * tab['w'][0]\n"
    outcome = fuzz.check_program(source, ARGS)
    assert outcome.status == "right", str(outcome)


def test_the_checker_counts_a_bare_read_only_error_as_a_crash():
    """Only the read-only error the public face explains (a global structured table) is a refusal."""
    assert fuzz._crash("reverse", ValueError("assignment destination is read-only")).check == "crash"
    explained = ValueError("assignment destination is read-only")
    explained.add_note("yuebing does not differentiate writes into a structured array read from a global: ...")
    assert fuzz._crash("reverse", explained).check == "refused"


def _focused(feature: str, seed: int):
    rng = random.Random(seed * 1009 + sum(map(ord, feature)))
    program = random_program(rng, DEFAULT_FEATURES, focus=feature)
    return program, random_args(rng, program)


@pytest.mark.parametrize("feature", SCIENCE_FEATURES)
def test_focused_programs_exercise_their_feature(feature):
    for seed in range(5):
        program, _ = _focused(feature, seed)
        assert feature in features_in(program.source()), program.source()


@pytest.mark.parametrize("feature", [f for f in SCIENCE_FEATURES if f in DEFAULT_FEATURES])
def test_a_focused_program_is_never_wrong(feature):
    program, args = _focused(feature, 0)
    _, outcome = fuzz.check_at_points(program, args, random.Random(7919))
    assert outcome.status in ("right", "refused", "unsmooth"), str(outcome)


@pytest.mark.parametrize("body", [
    "    return sum(w * v * s + c for (w, c), v in zip(TAB.tolist(), x))\n",
    "    rows = TAB.tolist()\n    return rows[0][0] * x[0] * x[1] + s\n",
])
def test_a_structured_table_as_a_list_is_a_constant_in_every_mode(body):
    """``table.tolist()`` inside f: second order's tangent call of the linear ``tolist`` ran on the
    table (it has no tangent) and its numbers were taken for the list's tangent, so the Hessian of
    ``rows[0][0] * x[0] * x[1]`` was [[0, .5], [.65, .15]] (transform/lifting.py)."""
    source = HEADER + ("TAB = np.array([(0.5, 1.0), (-0.2, 2.0), (1.0, 0.3)], dtype=[('w', float), ('c', float)])\n\n"
                       "def f(x, s):\n" + body)
    outcome = fuzz.check_program(source, ARGS)
    assert outcome.status == "right", str(outcome)


TABLE_WITH_INTS = ("T = np.array([(0.5, 1.0, 2), (-0.2, 2.0, 1), (1.0, 0.3, 0)], "
                   "dtype=[('w', float), ('c', float), ('k', int)])\n\n")


@pytest.mark.parametrize("body", [
    "    tot = 0.0\n    for (w, c, k), v in zip(T, x):\n        tot = tot + w * np.sin(v * c) * s + k * v\n    return tot\n",
    "    tot = 0.0\n    for i, row in enumerate(T):\n        w, c, k = row\n        tot = tot + w * np.sin(x[i] * c) * s\n    return tot\n",
])
def test_a_record_unpacked_into_its_fields_is_right_in_every_mode(body):
    """``for (w, c, k), v in zip(table, x)``: a record (np.void) is walked field by field, as
    constants (was refused: iteration over a void; ir/primitives.as_sequence)."""
    outcome = fuzz.check_program(HEADER + TABLE_WITH_INTS + "def f(x, s):\n" + body, ARGS)
    assert outcome.status == "right", str(outcome)


def test_a_write_through_an_unpacked_sub_array_field_is_refused():
    source = HEADER + RECORDS + "def f(x, s):\n    for w, v in REC:\n        v[0] = s\n    return np.sum(REC['v'][0] * x[:2])\n"
    outcome = fuzz.check_program(source, ARGS)
    assert outcome.status == "refused" and {f.mode for f in outcome.findings} >= {"reverse", "forward", "hvp"}, str(outcome)
