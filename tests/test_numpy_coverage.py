"""The NumPy coverage table (issue 14, item 5): every public name of numpy, numpy.linalg,
numpy.fft and ndarray has an entry, the table's claims agree with what the transforms do, and
``python -m yuebing rules --missing`` works as printed."""
import subprocess
import sys

import numpy as np
import pytest

import yuebing as yb
from yuebing.rules import numpy_coverage, numpy_zero
from yuebing.rules.core import RRULES, MissingRuleError
from yuebing.rules.coverage import coverage, entry, ndarray_names, public_names, third_order


def test_every_public_numpy_name_has_an_entry():
    missing = [e.name for entries in coverage().values() for e in entries if e.status == "missing"]
    assert not missing, ("public NumPy names without an entry: give each a rule, a zero derivative "
                         "(rules/numpy_zero.py) or a reason (rules/numpy_coverage.py):\n" + "\n".join(missing))


def test_the_walk_reaches_every_namespace():
    table = coverage()
    assert {e.name for e in table["numpy"]} == {f"numpy.{n}" for n in public_names(np)} - {"numpy.linalg", "numpy.fft"}
    assert len(table["numpy.linalg"]) == len(public_names(np.linalg))
    assert len(table["numpy.fft"]) == len(public_names(np.fft))
    assert [e.name for e in table["numpy.ndarray"]] == [f"numpy.ndarray.{n}" for n in ndarray_names()]


def test_a_rule_wins_over_a_reason(monkeypatch):
    monkeypatch.setitem(numpy_coverage.REFUSED, "numpy.sin", "a stale reason")
    assert entry("numpy.sin", np.sin).status == "rule"


def test_a_name_without_anything_is_missing():
    def undeclared(x):  # a C-like callable: not a Python function
        return x

    assert entry("numpy.not_a_function", np.frompyfunc(undeclared, 1, 1)).status == "missing"


def test_zero_declarations_never_replace_a_rule():
    """numpy_zero.py skips a function that had a rule first; its lists must then drop it (a rule
    registered after it would replace the zero: also caught here)."""
    shadowed = [f for f in numpy_zero.ALL if "(zero derivative)" not in RRULES.lookup(f)[0].__qualname__]
    shadowed += [m for m in numpy_zero.METHODS
                 if "(zero derivative)" not in RRULES.by_method[(np.ndarray, m)][0].__qualname__]
    assert not shadowed, f"these have real rules now; delete them from rules/numpy_zero.py: {shadowed}"


def test_third_order_refusals_are_the_transforms():
    from yuebing.transform import third_order as transform_third_order

    assert set(numpy_coverage.THIRD_ORDER_REFUSED) == set(transform_third_order._NOT_YET)


@pytest.mark.parametrize("name", ["numpy.divmod", "numpy.nanstd", "numpy.ndarray.to_device", "numpy.frexp"])
def test_refused_names_raise_naming_the_function(name):
    """What the table says is refused does raise, naming the function (never a silent zero)."""
    x = np.array([0.3, 1.7, -2.2])
    owner, attribute = name.rsplit(".", 1)
    if owner == "numpy.ndarray":
        def f(v):
            return np.sum(getattr(v, attribute)("cpu"))
    else:
        function = getattr(np, attribute)

        def f(v):
            out = function(v)
            return np.sum(out[0] if isinstance(out, tuple) else out)
    with pytest.raises(MissingRuleError, match=attribute):
        yb.grad(f)(x)


def test_zero_entries_give_zero_gradients():
    x = np.array([0.3, 1.7, -2.2])

    def f(v):
        return np.sum(v * np.isneginf(v)) + np.nanargmax(v) + np.spacing(v[0])

    assert np.array_equal(yb.grad(f)(x), np.zeros(3))


_RNG = np.random.default_rng(0)
_A = _RNG.standard_normal((3, 3)) + 3 * np.eye(3)
_THIRD_ORDER_SAMPLE = [  # one or two per second-order class, and the refusals
    (np.sin, _RNG.standard_normal(3)), (np.cumsum, _RNG.standard_normal(3)), (np.max, _RNG.standard_normal(3)),
    (np.linalg.inv, _A), (np.linalg.det, _A), (np.fft.rfft, _RNG.standard_normal(4)),
    (np.cumprod, _RNG.standard_normal(3)), (np.linalg.qr, _A), (np.linalg.eigh, _A @ _A.T),
    (np.linalg.eigvalsh, _A @ _A.T),
]


@pytest.mark.parametrize("function, x", _THIRD_ORDER_SAMPLE, ids=lambda v: getattr(v, "__name__", ""))
def test_third_order_column_matches_the_transform(function, x):
    """Where the table says third order, third derivatives match finite differences of reverse
    over reverse (``check_third_order``); where it says no, third order raises naming it."""
    from yuebing.testing.third_order import check_third_order
    from yuebing.transform.protocols import NestedDifferentiationError

    if third_order(function) == "yes":
        check_third_order(function, x)
    else:
        with pytest.raises(NestedDifferentiationError, match="eigh" if function is np.linalg.eigvalsh else function.__name__):
            check_third_order(function, x)


def test_rules_missing_command():
    result = subprocess.run([sys.executable, "-m", "yuebing", "rules", "--missing"], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "`numpy.divmod`" in result.stdout and "`numpy.sin`" not in result.stdout
