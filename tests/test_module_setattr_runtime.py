"""An attribute write on a module found only when it runs: ``setattr(mod, name, x)`` with ``name``
computed, ``m.G = x`` with ``m`` a variable bound to a module in a branch, ``sys`` imported inside
the function. The module's global is written as ``global G`` writes it (``transform/global_writes.py``:
``MODULE_SETATTR``), and functions compiled reading it as a constant (``m.G``, or ``G`` in ``m``'s
own functions) are compiled anew; one running when the write is found is refused in that call,
then followed. Each against central differences in reverse, forward and second order.

Also: a function reading ``m.G`` compiled before any writer of ``m.G`` was known gave the value
without the derivative the write gave it (grad 0.49 for 1.47): it is compiled anew too."""
from __future__ import annotations

import itertools
import sys
import types

import numpy as np
import pytest

import yuebing as yb

from .modes import check_every_mode

_COUNT = itertools.count()

_OWNER = """
G = 0.5
def own_reader(v):
    return G * v
"""

_USER = """
import sys
def reader(v):
    return m.G * v + m.own_reader(v)
"""


@pytest.fixture
def modules():
    """A fresh module ``m`` (in ``sys.modules`` for the test) and a namespace using it, whose
    readers are compiled in every mode before any writer exists."""
    name = f"yb_runtime_owner_{next(_COUNT)}"
    m = types.ModuleType(name)
    exec(_OWNER, vars(m))
    sys.modules[name] = m
    user: dict = {"__name__": f"{name}_user", "m": m, "other": types.ModuleType("other")}
    exec(_USER, user)
    check_every_mode(user["reader"], 0.7)
    yield m, user
    sys.modules.pop(name, None)


_WRITERS = {
    "computed_name": "def writer(x):\n    setattr(m, ''.join(['G']), x * x)\n    return reader(x)\n",
    "bound_in_a_branch": "def writer(x):\n    mod = m if x > 0 else other\n    mod.G = x * x\n    return reader(x)\n",
    "sys_imported_inside": "def writer(x):\n    import sys as system\n    system.modules[m.__name__].G = x * x\n"
                           "    return reader(x)\n",
}


@pytest.mark.parametrize("kind", list(_WRITERS))
def test_a_module_write_found_when_it_runs_is_followed_in_every_mode(kind, modules):
    m, user = modules
    exec(_WRITERS[kind], user)
    check_every_mode(user["writer"], 0.7)  # 2 x^3
    np.testing.assert_allclose(yb.grad(user["writer"])(0.7), 6 * 0.7 ** 2, rtol=1e-12)
    value, _ = yb.value_and_grad(user["writer"])(0.7)
    assert m.G == 0.7 * 0.7 and value == 2 * 0.7 ** 3  # the module left as a plain call leaves it


def test_a_reader_of_mod_g_compiled_before_the_writer_takes_its_derivative(modules):
    m, user = modules
    exec("def writer(x):\n    m.G = x * x\n    return reader(x)\n", user)
    check_every_mode(user["writer"], 0.7)
    np.testing.assert_allclose(yb.grad(user["writer"])(0.7), 6 * 0.7 ** 2, rtol=1e-12)


def test_a_read_after_the_write_in_the_same_function_is_refused_once_then_followed(modules):
    m, user = modules
    exec("def writer(x):\n    setattr(m, ''.join(['G']), x * x)\n    return m.G * x\n", user)
    with pytest.raises(TypeError, match="global 'G'.*writer was running code compiled reading it as a constant"
                                        ".*call again"):
        yb.grad(user["writer"])(0.7)
    check_every_mode(user["writer"], 0.7)  # the advice works: x^3
    np.testing.assert_allclose(yb.grad(user["writer"])(0.7), 3 * 0.7 ** 2, rtol=1e-12)


def test_a_name_that_is_not_a_string_raises_as_python_does(modules):
    m, user = modules
    exec("def writer(x):\n    setattr(m, 3, x)\n    return x\n", user)
    with pytest.raises(TypeError, match="attribute name must be string"):
        yb.grad(user["writer"])(0.7)


_THROUGH_A_VARIABLE = {
    "written_and_read_through_a_variable": "def writer(x):\n    mod = m if x > 0 else other\n    mod.G = x * x\n"
                                           "    return mod.G * x\n",
    "read_by_getattr": "def writer(x):\n    m.G = x * x\n    mod = m if x > 0 else other\n"
                       "    return mod.G * x + getattr(m, 'G') * x\n",
}


@pytest.mark.parametrize("kind", list(_THROUGH_A_VARIABLE))
def test_a_read_through_a_variable_or_getattr_takes_the_derivative_the_write_gave(kind, modules):
    """A read not lowered to ``global_get`` (``mod.G`` with ``mod`` a variable, ``getattr(m, "G")``):
    the getattr rules give the derivative this call's write gave (it gave the value without it:
    grad 0.49 for 1.47)."""
    m, user = modules
    exec(_THROUGH_A_VARIABLE[kind], user)
    check_every_mode(user["writer"], 0.7)
    copies = 1 if kind.startswith("written") else 2
    np.testing.assert_allclose(yb.grad(user["writer"])(0.7), copies * 3 * 0.7 ** 2, rtol=1e-12)
