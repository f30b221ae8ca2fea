"""The NumPy coverage table (issue 14, item 5): every public name of numpy, numpy.linalg,
numpy.fft and ndarray has an entry, the table's claims agree with what the transforms do, and
``python -m yuebing rules --missing`` works as printed."""
import numpy as np
import pytest

import yuebing as yb
from yuebing.rules import numpy_coverage, numpy_zero
from yuebing.rules.core import RRULES
from yuebing.rules.coverage import NAMESPACES, coverage, entry, ndarray_names, public_names


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


def test_gaps_and_limits_mark_a_derived_entry(monkeypatch):
    monkeypatch.setitem(numpy_coverage.GAPS, "numpy.vander", {"second": "a gap"})
    monkeypatch.setitem(numpy_coverage.LIMITS, "numpy.vander", "a limit")
    e = entry("numpy.vander", np.vander)
    assert (e.status, e.reverse, e.forward, e.second, e.third) == ("derived", "derived", "derived", "—", "—")
    assert "a gap" in e.note and "a limit" in e.note


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


def test_third_order_refusals_include_the_transforms():
    """The transform's own list of refusals is in the table's data (the rest of that data is
    checked against the transform by tests/test_numpy_higher_order_table.py)."""
    from yuebing.transform import third_order as transform_third_order

    walked = [getattr(module, name, None) for _, module in NAMESPACES for name in public_names(module)]
    walked += [getattr(np.ndarray, name) for name in ndarray_names()]
    public = [f for f in transform_third_order._NOT_YET if any(f is w for w in walked)]  # not scipy's
    assert set(public) <= set(numpy_coverage.THIRD_ORDER_REFUSED)  # (none at the moment)


#: one-argument calls of names the table refuses today (a name that gains a rule drops out)
_REFUSAL_CALLS = {
    "numpy.ndarray.to_device": lambda v: v.to_device("cpu"),
    "numpy.ndarray.resize": lambda v: v.resize((2,), refcheck=False),
    "numpy.matrix": lambda v: np.matrix(v),
    "numpy.ndarray.byteswap": lambda v: v.byteswap(),
}


def _refused_now():
    entries = {e.name: e for group in coverage().values() for e in group}
    return [name for name in _REFUSAL_CALLS if entries[name].status == "refused"]


@pytest.mark.parametrize("name", _refused_now())
def test_refused_names_raise_naming_what_stops_them(name):
    """What the table says is refused raises under yb.grad (never a silent answer)."""
    call = _REFUSAL_CALLS[name]
    x = np.array([0.3, 1.7, -2.2])

    def f(v):
        return np.sum(np.real(call(v * 1.0)))

    try:
        yb.grad(f)(x)
    except Exception as error:  # noqa: BLE001 - each refusal has its own error type
        assert not isinstance(error, AssertionError)
    else:
        pytest.fail(f"{name} is differentiated now: delete its reason from rules/numpy_coverage.py "
                    "(the table then shows how it is differentiated) and probe it in DERIVED_PROBES")


def test_some_names_are_refused():
    assert len(_refused_now()) >= 3


def test_zero_entries_give_zero_gradients():
    x = np.array([0.3, 1.7, -2.2])

    def f(v):
        return np.sum(v * np.isneginf(v)) + np.nanargmax(v) + np.spacing(v[0])

    assert np.array_equal(yb.grad(f)(x), np.zeros(3))


def test_rules_missing_command(capsys):
    from yuebing.__main__ import main

    assert main(["rules", "--missing"]) == 0
    out = capsys.readouterr().out
    assert "`numpy.matrix`" in out and "`numpy.sin`" not in out
    assert main(["rules", "--bogus"]) == 2


# --------------------------------------------------------------------------------------------
# What the table says is derived is differentiated, in the modes it says
# --------------------------------------------------------------------------------------------

_X5 = np.array([0.31, -1.2, 0.77, 1.9, -0.45])
_M34 = np.arange(12.0).reshape(3, 4) / 7.0 - np.array([0.3, -0.2, 0.5, 0.1])
_TRIM = np.array([0.0, 1.0, 1.0, 0.0, 0.0])


def _printed(x):
    with np.printoptions(precision=3):
        return x * 2.0


def _in_errstate(x):
    with np.errstate(divide="ignore"):
        return x / 3.0


#: a call of each derived (or working) name, on a float array: name -> (function, input)
DERIVED_PROBES = {
    "numpy.apply_over_axes": (lambda x: np.apply_over_axes(np.sum, x * x, [0]), _M34),
    "numpy.asarray_chkfinite": (lambda x: np.asarray_chkfinite(x) ** 2, _X5),
    "numpy.block": (lambda x: np.block([[x, x * x], [x, x]]), _M34),
    "numpy.broadcast_arrays": (lambda x: np.broadcast_arrays(x, _M34)[0] * _M34, _X5[:4]),
    "numpy.ediff1d": (lambda x: np.ediff1d(x * x), _X5),
    "numpy.geomspace": (lambda x: np.geomspace(x[0] ** 2 + 0.5, x[1] ** 2 + 2.0, 4), _X5),
    "numpy.i0": (lambda x: np.i0(x), _X5),
    "numpy.intersect1d": (lambda x: np.intersect1d(x, x[:3]) ** 2, _X5),
    "numpy.kaiser": (lambda x: np.kaiser(5, x[0] ** 2 + 1.0), _X5),
    "numpy.nancumprod": (lambda x: np.nancumprod(x), _X5),
    "numpy.nancumsum": (lambda x: np.nancumsum(x * x), _X5),
    "numpy.nanmedian": (lambda x: np.nanmedian(x * x), _X5),
    "numpy.nanprod": (lambda x: np.nanprod(x), _X5),
    "numpy.nanstd": (lambda x: np.nanstd(x), _X5),
    "numpy.nanvar": (lambda x: np.nanvar(x), _X5),
    "numpy.poly": (lambda x: np.poly(x), _X5),
    "numpy.polyadd": (lambda x: np.polyadd(x * x, x[:3]), _X5),
    "numpy.polyder": (lambda x: np.polyder(x * x), _X5),
    "numpy.polydiv": (lambda x: np.polydiv(x, x[:3] + 2.0)[0], _X5),
    "numpy.polysub": (lambda x: np.polysub(x * x, x[:3]), _X5),
    "numpy.printoptions": (_printed, _X5),
    "numpy.require": (lambda x: np.require(x * x, requirements="C"), _X5),
    "numpy.resize": (lambda x: np.resize(x * x, (3, 4)), _X5),
    "numpy.row_stack": (lambda x: np.row_stack([x, x * x]), _X5),
    "numpy.setxor1d": (lambda x: np.setxor1d(x, x[:3]) ** 2, _X5),
    "numpy.sort_complex": (lambda x: np.real(np.sort_complex(x)) ** 2, _X5),
    "numpy.union1d": (lambda x: np.union1d(x, x[:3] + 10.0) ** 2, _X5),
    "numpy.unstack": (lambda x: np.unstack(x * x)[1], _M34),
    "numpy.unwrap": (lambda x: np.unwrap(x * 3.0), _X5),
    "numpy.vander": (lambda x: np.vander(x), _X5),
    "numpy.fromfunction": (lambda x: np.fromfunction(lambda i: x[0] * i * i + x[1], (3,)), _X5),
    "numpy.corrcoef": (lambda x: np.corrcoef(x, x[::-1] ** 2), _X5),
    "numpy.polyint": (lambda x: np.polyint(x * x), _X5),
    "numpy.setdiff1d": (lambda x: np.setdiff1d(x, x[:2]) ** 2, _X5),
    "numpy.histogram2d": (lambda x: np.histogram2d(x, -x, bins=2, range=[[-3, 3], [-3, 3]], weights=x * x)[0], _X5),
    "numpy.histogramdd": (lambda x: np.histogramdd(x[:, None], bins=3, range=[[-3, 3]], weights=x * x)[0], _X5),
    "numpy.errstate": (_in_errstate, _X5),
    "numpy.r_": (lambda x: np.r_[x, x * x], _X5),
    "numpy.c_": (lambda x: np.c_[x, x * x], _X5),
    "numpy.poly1d": (lambda x: (np.poly1d(x[:3]) * np.poly1d(x[3:]) + np.poly1d(x[:2]) ** 2).deriv()(x), _X5),
    "numpy.flatiter": (lambda x: np.array((x[:, None] * x).T.flat)[3:9] * x.flat[0], _X5),  # a read-only copy
    "numpy.ndarray.flat": (lambda x: x.reshape(1, 5).flat[1:4] * list(x.flat)[2], _X5),  # a view
}
_MODES = ("reverse", "forward", "second")


def _entries():
    return {e.name: e for entries in coverage().values() for e in entries}


def test_every_derived_name_is_probed():
    derived = {name for name, e in _entries().items() if e.status in ("derived", "works")}
    unprobed = sorted(derived - set(DERIVED_PROBES) - {"numpy.s_", "numpy.index_exp", "numpy.mgrid", "numpy.ogrid"})
    assert not unprobed, f"add a call of each to DERIVED_PROBES: {unprobed}"


def _directional(function, x, v, eps=1e-6):
    return (function(x + eps * v) - function(x - eps * v)) / (2 * eps)


def _mode_result(mode, loss, x, v):
    """``(ours, finite differences)`` of the mode's directional derivative of ``loss``."""
    if mode == "reverse":
        return np.sum(yb.grad(loss)(x) * v), _directional(loss, x, v)
    if mode == "forward":
        return yb.jvp(loss, (x,), (v,))[1], _directional(loss, x, v)
    hvp = yb.hvp(loss, (x,), (v,))[2][0]  # one per argument
    return hvp, _directional(yb.grad(loss), x, v, eps=1e-5)


@pytest.mark.parametrize("name", sorted(DERIVED_PROBES))
def test_derived_names_are_differentiated_in_their_modes(name):
    """Reverse, forward and second order against finite differences, in the modes the table
    gives (a name that has a rule by now is checked in its rule's modes); a mode the table marks
    as a gap raises (it is never silently wrong)."""
    function, x = DERIVED_PROBES[name]
    e = _entries()[name]  # derived, or a rule by now
    rng = np.random.default_rng(zlib_seed(name))
    weights = rng.standard_normal(np.shape(function(x)))
    v = rng.standard_normal(np.shape(x))

    def loss(y):
        return np.sum(weights * np.asarray(function(y)))

    for mode, claim in zip(_MODES, (e.reverse, e.forward, e.second)):
        if claim == "—":
            with pytest.raises(Exception):  # noqa: B017 - the gap's own error, whatever it is
                _mode_result(mode, loss, x, v)
            continue
        ours, expected = _mode_result(mode, loss, x, v)
        np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-7, err_msg=f"{name}: {mode}")


def zlib_seed(name: str) -> int:
    import zlib

    return zlib.crc32(name.encode())
