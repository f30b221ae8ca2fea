"""``global`` writes in differentiated code (issue 13 item 4): a global written in the call carries
its derivative to every later read in the call (in the writer, a callee, a sibling function), and
the module's global is written as a plain call writes it, once per gradient call. Where the
derivative would be lost (a nested differentiation, third order) the write is refused naming it."""
from __future__ import annotations

import sys

import numpy as np
import pytest

import yuebing as yb

COUNTER = 0
SCALE = 1.0
CHOICE = None
WEIGHTS = np.array([1.0, 2.0, 3.0])
LOG: list = []


def counted(x):
    global COUNTER, CHOICE
    COUNTER += 1
    CHOICE = np.sin if x > 0.0 else np.cos
    return CHOICE(x) * x * COUNTER


def scaled(v):  # reads SCALE: a sibling of the writers
    return SCALE * v


def written_then_read(x):
    global SCALE
    SCALE = x * 2.0
    return SCALE * x


def read_by_a_callee(x):
    global SCALE
    SCALE = np.sin(x)
    return scaled(x) + SCALE


def written_twice(x):
    global SCALE
    SCALE = np.sin(x)
    first = scaled(x)
    SCALE = SCALE * x + 1.0
    return first + scaled(x * x)


def written_in_a_loop(x):
    global SCALE
    SCALE = 1.0
    for k in range(3):
        SCALE = SCALE * x + k
        SCALE += scaled(0.5)
    return SCALE


def array_rebound(x):
    global WEIGHTS
    WEIGHTS = WEIGHTS * x
    WEIGHTS = np.tanh(WEIGHTS)
    return np.sum(weighted(x))


def weighted(v):
    return WEIGHTS * v


def vector_writer(xs):
    global WEIGHTS
    WEIGHTS = xs * xs
    return weighted(xs[0]) + np.sin(xs)


def built_list(x):
    global LOG
    LOG = []
    LOG.append(x * 2.0)
    LOG.append(x * x)
    return sum(LOG) * x


def deleted(x):
    global SCALE
    SCALE = x * 3.0
    y = scaled(x)
    del SCALE
    return y


def through_globals(x):
    globals()["SCALE"] = x * 2.0  # the global SCALE, written as global SCALE; SCALE = ... writes it
    return scaled(x) + globals()["SCALE"]


def _fresh() -> None:
    global SCALE, WEIGHTS, LOG
    SCALE, WEIGHTS, LOG = 1.0, np.array([1.0, 2.0, 3.0]), []


def _plain(f, x):
    _fresh()
    return f(x)


def _first(f, x, h=1e-6):
    return (_plain(f, x + h) - _plain(f, x - h)) / (2 * h)


def _second(f, x, h=1e-4):
    return (_plain(f, x + h) - 2 * _plain(f, x) + _plain(f, x - h)) / h ** 2


WRITERS = [written_then_read, read_by_a_callee, written_twice, written_in_a_loop, array_rebound, built_list,
           through_globals]


@pytest.mark.parametrize("f", WRITERS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp", "hessian"])
def test_a_written_global_carries_its_derivative_to_later_reads(f, mode):
    x = 0.7
    expected = _second(f, x) if mode == "hessian" else _first(f, x)
    _fresh()
    got = {"grad": lambda: yb.grad(f)(x), "jvp": lambda: yb.jvp(f, (x,), (1.0,))[1],
           "hvp": lambda: yb.hvp(f, (x,), (1.0,))[1][0], "hessian": lambda: yb.hessian(f)(x)}[mode]()
    np.testing.assert_allclose(got, expected, rtol=1e-4 if mode == "hessian" else 1e-6)


def test_the_hvp_of_a_global_writer_matches_differences_of_its_gradient():
    x, h = 0.7, 1e-5
    _fresh()
    got = yb.hvp(written_twice, (x,), (1.0,))[2][0]

    def gradient(v):
        _fresh()
        return yb.grad(written_twice)(v)

    np.testing.assert_allclose(got, (gradient(x + h) - gradient(x - h)) / (2 * h), rtol=1e-6)


@pytest.mark.parametrize("f", [written_twice, array_rebound, built_list], ids=lambda f: f.__name__)
def test_the_module_global_holds_what_a_plain_call_leaves(f):
    expected = _plain(f, 0.7)
    left = (SCALE, WEIGHTS.copy(), list(LOG))
    _fresh()
    yb.grad(f)(0.7)
    assert SCALE == left[0] and LOG == left[2]
    np.testing.assert_array_equal(WEIGHTS, left[1])
    assert expected is not None


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_the_jacobian_of_a_function_writing_a_global_array(mode):
    xs, h = np.array([0.3, 0.6, 0.9]), 1e-6
    expected = np.zeros((3, 3))
    for j in range(3):
        e = np.eye(3)[j] * h
        expected[:, j] = (_plain(vector_writer, xs + e) - _plain(vector_writer, xs - e)) / (2 * h)
    _fresh()
    np.testing.assert_allclose(yb.jacobian(vector_writer, mode=mode)(xs), expected, rtol=1e-6)


def test_the_hessian_of_a_vector_function_writing_a_global_array():
    def scalar(xs):
        return np.sum(vector_writer(xs) * xs)

    xs, h = np.array([0.3, 0.6, 0.9]), 1e-5

    def gradient(v):
        _fresh()
        return yb.grad(scalar)(v)

    expected = np.stack([(gradient(xs + e) - gradient(xs - e)) / (2 * h) for e in np.eye(3) * h], axis=1)
    _fresh()
    np.testing.assert_allclose(yb.hessian(scalar)(xs), expected, rtol=1e-6, atol=1e-8)


IMPORTED = None


def imports_into_a_global(x):
    global IMPORTED
    from numpy import sin as IMPORTED

    return IMPORTED(x) * x


def test_an_import_binding_a_global_writes_the_module_global():
    global IMPORTED
    IMPORTED = None
    np.testing.assert_allclose(yb.grad(imports_into_a_global)(0.7), _first(imports_into_a_global, 0.7), rtol=1e-6)
    assert IMPORTED is np.sin


def test_a_deleted_global_is_deleted_and_its_reads_before_keep_their_derivative():
    np.testing.assert_allclose(yb.grad(deleted)(0.7), 6.0 * 0.7, rtol=1e-12)
    assert "SCALE" not in globals()
    _fresh()


@pytest.mark.parametrize("mode", ["grad", "jvp", "hessian"])
def test_a_counter_goes_up_once_per_call_and_the_derivative_is_the_plain_one(mode):
    global COUNTER
    COUNTER = 0
    x, h = 0.8, 1e-6
    run = {"grad": lambda: yb.grad(counted)(x), "jvp": lambda: yb.jvp(counted, (x,), (1.0,))[1],
           "hessian": lambda: yb.hessian(counted)(x)}[mode]
    got = run()
    assert COUNTER == 1 and CHOICE is np.sin

    def plain(v):  # the function with the counter as it was during the call
        return np.sin(v) * v

    first = (plain(x + h) - plain(x - h)) / (2 * h)
    expected = first if mode != "hessian" else (plain(x + h) - 2 * plain(x) + plain(x - h)) / h ** 2
    np.testing.assert_allclose(got, expected, rtol=1e-4)


THIS_MODULE = sys.modules[__name__]


def read_as_a_module_attribute(x):
    written_then_read(x)
    return THIS_MODULE.SCALE * np.sin(x)  # as another module reads it (mod.G)


def read_by_nested_functions(x):
    global SCALE
    SCALE = x * 2.0

    def with_default(v, s=SCALE):
        return s * v

    reads_it = lambda v: SCALE * v  # noqa: E731 - a lambda reads the module's global, as in Python
    return with_default(x) + reads_it(x) + a_callee_with_a_default(x)


def a_callee_with_a_default(x):
    def inner(v, s=SCALE * SCALE):
        return s + v

    return inner(x)


def checked_in_forward_only_code(x):
    global SCALE
    SCALE = x * 2.0
    assert SCALE == 2.0 * x, SCALE  # the value written, not the one at entry
    try:
        if SCALE < 0.0:
            raise ValueError(SCALE)
    except (ValueError, type(SCALE)):
        pass
    return SCALE * x


@pytest.mark.parametrize("f", [read_by_nested_functions, checked_in_forward_only_code, read_as_a_module_attribute],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_nested_functions_and_forward_only_code_read_the_written_value(f, mode):
    x = 0.7
    expected = _first(f, x)
    _fresh()
    got = {"grad": lambda: yb.grad(f)(x), "jvp": lambda: yb.jvp(f, (x,), (1.0,))[1],
           "hvp": lambda: yb.hvp(f, (x,), (1.0,))[1][0]}[mode]()
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def a_class_condition_reading_a_written_global(x):
    global SCALE
    SCALE = x * 2.0

    class Scaled:
        if SCALE > 0:  # (run by the class statement; a method reading it works: test_local_classes_global_methods.py)
            sign = 1.0
    return Scaled.sign * x


def through_the_module(x):
    import sys

    sys.modules[__name__].SCALE = x * 2.0
    return scaled(x)


@pytest.mark.parametrize("f, message", [
    (a_class_condition_reading_a_written_global, "a class defined in a differentiated function reading the global 'SCALE'"),
], ids=["class"])  # (a decorator reading one is followed: test_decorated_closures.py)
def test_writes_and_reads_it_cannot_follow_are_refused(f, message):
    with pytest.raises(Exception, match=message):
        yb.grad(f)(0.7)
    _fresh()


def test_a_module_attribute_write_with_sys_imported_inside_is_followed():
    from tests.modes import check_every_mode

    try:
        check_every_mode(through_the_module, 0.7)
    finally:
        _fresh()


# ---------------------------------------------------------------- def, class, except binding a global


def calls_choice(v):
    return CHOICE(v) * v


def a_def_binding_a_global(x):
    global CHOICE
    k = x * x

    def CHOICE(v):  # noqa: F811 - the global statement makes this the module's CHOICE
        return k * np.sin(v)

    return calls_choice(x) + CHOICE(x)


def makes_a_holder(v):
    return Holder(v * v).scaled()  # noqa: F821 - the module's Holder, which the class statement below binds


def a_class_binding_a_global(x):
    global Holder

    class Holder:
        def __init__(self, v):
            self.v = v

        def scaled(self):
            return self.v * 3.0

    return makes_a_holder(x) + Holder(x).scaled()


def reads_caught():
    return CAUGHT.args[0]  # noqa: F821 - bound by the except clause below while it runs


def an_except_binding_a_global(x):
    global CAUGHT
    try:
        raise ValueError(x * 2.0)
    except ValueError as CAUGHT:
        y = reads_caught() * x + CAUGHT.args[0]
    return y


@pytest.mark.parametrize("f", [a_def_binding_a_global, a_class_binding_a_global, an_except_binding_a_global],
                         ids=["def", "class", "except"])
def test_def_class_and_except_binding_a_global_in_every_mode(f):
    from tests.modes import check_every_mode

    check_every_mode(f, 0.7)
    yb.grad(f)(0.7)
    module = sys.modules[__name__]
    if f is an_except_binding_a_global:
        assert not hasattr(module, "CAUGHT")  # deleted when the handler is left, as in a plain call
    else:
        bound = module.CHOICE if f is a_def_binding_a_global else module.Holder
        name = "CHOICE" if f is a_def_binding_a_global else "Holder"
        assert (bound.__name__, bound.__qualname__) == (name, f"{f.__name__}.<locals>.{name}")
    _fresh()


# ---------------------------------------------------------------- where the derivative would be lost


def inner_reads(y):
    return SCALE * y * y


def outer_writes_inner_reads(x):
    global SCALE
    SCALE = x * 2.0
    return yb.grad(inner_reads)(x)


def inner_writes(y):
    global SCALE
    SCALE = y * 3.0
    return y * y


def outer_reads_what_inner_wrote(x):
    g = yb.grad(inner_writes)(x)  # (a read before it is of the value the global held: a constant)
    return SCALE * g


def gradient_times_x(x):
    return yb.grad(written_then_read)(x) * x


@pytest.mark.parametrize("f", [outer_writes_inner_reads, outer_reads_what_inner_wrote], ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_a_global_crossing_a_nested_differentiation_is_refused_naming_it(f, mode):
    with pytest.raises(TypeError, match="the global 'SCALE'") as error:
        yb.grad(f)(0.7) if mode == "grad" else yb.jvp(f, (0.7,), (1.0,))
    assert "test_global_writes.py" in "".join(getattr(error.value, "__notes__", [])) + str(error.value)
    _fresh()


def test_third_order_over_a_global_writer_is_refused_naming_it():
    with pytest.raises(TypeError, match="the global 'SCALE'"):
        yb.hvp(gradient_times_x, (0.7,), (1.0,))
    _fresh()


def test_third_order_reads_a_global_no_pass_wrote_as_a_constant():
    def outer(x):
        return yb.grad(scaled)(x) * x * x

    _fresh()
    np.testing.assert_allclose(yb.hvp(outer, (0.7,), (1.0,))[2][0], 2.0 * SCALE, rtol=1e-12)


# ---------------------------------------------------------------- functions without source


_WRITER = """
def writer(x):
    global G
    G = x * x
    return reader(x)
"""


def test_functions_without_source_file_that_write_a_global_are_followed():
    namespace: dict = {"__name__": "no_source"}
    exec("G = 0.0\ndef reader(v):\n    return G * v\n" + _WRITER, namespace)
    np.testing.assert_allclose(yb.grad(namespace["writer"])(0.7), 3 * 0.7 ** 2, rtol=1e-12)
    assert namespace["G"] == 0.7 ** 2


def test_a_reader_compiled_before_the_writer_existed_is_compiled_again():
    namespace: dict = {"__name__": "no_source_late"}
    exec("G = 0.5\ndef reader(v):\n    return G * v\n", namespace)
    assert yb.grad(namespace["reader"])(0.7) == 0.5  # compiled reading G as a constant
    exec(_WRITER, namespace)
    np.testing.assert_allclose(yb.grad(namespace["writer"])(0.7), 3 * 0.7 ** 2, rtol=1e-12)  # (tests/test_globals_notebook.py)


# ---------------------------------------------------------------- which module a function writes


def test_a_writer_held_by_another_module_writes_only_its_own_modules_global():
    """A function writes the globals of its own module (its ``__globals__``), wherever it is held:
    the module holding it (``from owner import set_g``) does not count its names as written, and
    is not disassembled for it; the owner's global, read as ``owner.G``, carries the derivative."""
    import types

    from tests.modes import check_every_mode
    from yuebing.frontend.global_writes import written_in_module, written_names

    owner = types.ModuleType("owner_of_set_g")
    exec("G = 0.0\ndef set_g(x):\n    global G\n    G = x * x\n", vars(owner))
    holder: dict = {"__name__": "holder_of_set_g", "set_g": owner.set_g, "owner": owner}
    exec("G = 3.0\ndef f(x):\n    set_g(x)\n    return G * x + owner.G * x\n", holder)
    check_every_mode(holder["f"], 0.7)  # 3 x + x^3
    np.testing.assert_allclose(yb.grad(holder["f"])(0.7), 3.0 + 3 * 0.7 ** 2, rtol=1e-12)
    assert "G" in written_in_module(owner)
    assert "G" not in written_names(holder["f"])


# ---------------------------------------------------------------- globals() as a mapping
# (each writer has names and a reader of its own: a reader compiled before a writer taught the
# module its names would read them as constants, and be refused)

ALIAS_LEVEL = 0.5
UPD_A = UPD_B = UPD_C = 1.0
PAIRS_A = PAIRS_B = 1.0
COMP_A = COMP_B = 1.0
_START = {name: 1.0 for name in ("ALIAS_LEVEL", "UPD_A", "UPD_B", "UPD_C", "PAIRS_A", "PAIRS_B", "COMP_A", "COMP_B")}


def reads_alias_level(v):
    return ALIAS_LEVEL * v


def through_an_alias(x):
    g = globals()
    g["ALIAS_LEVEL"] = x * 3.0
    g["ALIAS_LEVEL"] *= x
    return g["ALIAS_LEVEL"] + reads_alias_level(x)


def reads_updated():
    return UPD_A * UPD_B + UPD_C


def through_update(x):
    globals().update(UPD_A=x * x, UPD_B=np.sin(x))
    globals().update({"UPD_C": x + 1.0})
    return reads_updated() + UPD_A * UPD_C


def reads_pairs(v):
    return PAIRS_A * v + PAIRS_B


def through_update_of_pairs(x):
    names = ["PAIRS_A", "PAIRS_B"]
    globals().update(zip(names, [x * 2.0, x ** 3]))
    return reads_pairs(x) * x


def reads_computed():
    return COMP_A * COMP_B


def through_a_computed_name(x):
    for name, scale in (("COMP_A", 2.0), ("COMP_B", 5.0)):
        globals()[name] = x * scale
    total = globals()["COMP_" + "A"] * x
    del globals()["COMP_B"]
    globals()["COMP_B"] = total
    return total + reads_computed()


GOT_A = 1.0
_START.update(GOT_A=1.0)


def reads_got():
    return GOT_A * 2.0


def through_get_and_in(x):
    g = globals()
    g["GOT_A"] = np.sin(x)
    missing = globals().get("GOT_" + "MISSING", x * 4.0)  # not defined: the default
    here = g.get("GOT_A") if "GOT_A" in g else 0.0
    absent = 1.0 if "GOT_MISSING" not in globals() else 0.0
    return here * x + missing + reads_got() + absent


def _values():
    return {name: getattr(sys.modules[__name__], name, None) for name in _START}


@pytest.mark.parametrize("f", [through_an_alias, through_update, through_update_of_pairs, through_a_computed_name,
                               through_get_and_in], ids=lambda f: f.__name__)
def test_globals_as_a_mapping_in_every_mode(f):
    from tests.modes import check_every_mode

    try:
        check_every_mode(f, 0.7)
        plain = f(0.7)
        left = _values()
        value, _ = yb.value_and_grad(f)(0.7)
        assert value == plain and _values() == left  # the module left as a plain call leaves it
    finally:
        vars(sys.modules[__name__]).update(_START)


def test_a_name_computed_when_it_runs_and_read_by_name_after_is_refused_naming_it():
    def writes_then_reads(x):
        name = "LATE" + "_LEVEL"
        globals()[name] = x * 2.0
        return LATE_LEVEL * x  # noqa: F821 - compiled as a constant: the name was not known written

    try:
        with pytest.raises(TypeError, match="global 'LATE_LEVEL'.*running code compiled reading it as a constant"):
            yb.grad(writes_then_reads)(0.7)
    finally:
        vars(sys.modules[__name__]).pop("LATE_LEVEL", None)
