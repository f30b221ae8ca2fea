"""Deep recursion (issue 13 item 9): a recursive function differentiates 2,000 levels deep with
the recursion limit at 4,000, in reverse mode, forward mode and second order, because a call of a
global Python function runs its generated passes directly (transform/direct_calls.py); and the
RecursionError at the limit says which limit to set (api/recursion_advice.py)."""
import functools
import math
import re
import sys
import types

import numpy as np
import pytest

import yuebing as yb

DEPTH = 2000


def rec(x, n):
    if n == 0:
        return x
    return math.sin(rec(x, n - 1)) * 0.5 + x * 0.01


def rec_array(x, n):
    if n == 0:
        return x
    return np.sin(rec_array(x, n - 1)) * 0.5 + x * 0.01


def closed_form(x, n):
    """rec(x, n) and its first and second derivatives in x, by the recurrence forwards."""
    v, d1, d2 = x, 1.0, 0.0
    for _ in range(n):
        v, d1, d2 = (math.sin(v) * 0.5 + x * 0.01, math.cos(v) * 0.5 * d1 + 0.01,
                     0.5 * (math.cos(v) * d2 - math.sin(v) * d1 * d1))
    return v, d1, d2


@pytest.fixture
def limit_4000():
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(4000)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def test_grad_2000_levels(limit_4000):
    _, d1, _ = closed_form(0.3, DEPTH)
    assert yb.grad(rec)(0.3, DEPTH) == pytest.approx(d1, rel=1e-12)


def test_grad_2000_levels_of_arrays(limit_4000):
    x = np.array([0.3, -1.2, 2.0])
    expected = np.array([closed_form(v, DEPTH)[1] for v in x])
    np.testing.assert_allclose(yb.grad(lambda x: np.sum(rec_array(x, DEPTH)))(x), expected, rtol=1e-12)


def test_jvp_2000_levels(limit_4000):
    v, d1, _ = closed_form(0.3, DEPTH)
    value, tangent = yb.jvp(rec, (0.3, DEPTH), (1.0, yb.NoTangent))
    assert value == pytest.approx(v, rel=1e-12)
    assert tangent == pytest.approx(d1, rel=1e-12)


def test_hvp_2000_levels(limit_4000):
    v, d1, d2 = closed_form(0.3, DEPTH)
    value, gradients, hvps = yb.hvp(rec, (0.3, DEPTH), (1.0, yb.NoTangent))
    assert value == pytest.approx(v, rel=1e-12)
    assert gradients[0] == pytest.approx(d1, rel=1e-12)
    assert hvps[0] == pytest.approx(d2, rel=1e-9, abs=1e-15)
    h = 1e-4  # and the closed form against central differences of the gradient
    fd = (closed_form(0.3 + h, DEPTH)[1] - closed_form(0.3 - h, DEPTH)[1]) / (2 * h)
    assert hvps[0] == pytest.approx(fd, rel=1e-5, abs=1e-12)


def nested(x, n):
    """A nested ``def`` calling itself through its closure cell."""
    def go(x, n):
        if n == 0:
            return x
        return math.sin(go(x, n - 1)) * 0.5 + x * 0.01
    return go(x, n)


def by_keywords(x, n):
    """Calls itself with keywords, out of order."""
    if n == 0:
        return x
    return math.sin(by_keywords(n=n - 1, x=x)) * 0.5 + x * 0.01


def with_defaults(x, n, scale=0.5, shift=0.01):
    """Calls itself with its defaults filled."""
    if n == 0:
        return x
    return math.sin(with_defaults(x, n - 1)) * scale + x * shift


class Walker:
    def __init__(self, scale):
        self.scale = scale

    def walk(self, x, n):
        if n == 0:
            return x
        return math.sin(self.walk(x, n - 1)) * self.scale + x * 0.01


def by_method(x, n):
    """A method calling itself through ``self``."""
    return Walker(0.5).walk(x, n)


class Node:
    def __init__(self, child):
        self.child = child

    def evaluate(self, x):
        if self.child is None:
            return x
        return math.sin(self.child.evaluate(x)) * 0.5 + x * 0.01


_TREES = {}


def by_tree(x, n):
    """A chain of ``n + 1`` nodes, each calling its child's method."""
    if n not in _TREES:
        node = Node(None)
        for _ in range(n):
            node = Node(node)
        _TREES[n] = node
    return _TREES[n].evaluate(x)


class Static:
    @staticmethod
    def walk(x, n):
        if n == 0:
            return x
        return math.sin(Static.walk(x, n - 1)) * 0.5 + x * 0.01


def by_static_method(x, n):
    """A static method calling itself through its class (an attribute holding a function)."""
    return Static.walk(x, n)


class ByKeywords:
    def walk(self, x, n, scale=0.5):
        if n == 0:
            return x
        return math.sin(self.walk(n=n - 1, x=x)) * scale + x * 0.01


def by_method_keywords(x, n):
    """A method calling itself with keywords, its default filled."""
    return ByKeywords().walk(x, n)


def nested_keywords(x, n):
    """A nested ``def`` calling itself with keywords, its default filled."""
    def go(x, n, shift=0.01):
        if n == 0:
            return x
        return math.sin(go(n=n - 1, x=x)) * 0.5 + x * shift
    return go(x, n)


WALKERS = types.ModuleType("walkers")  # a module whose attribute holds the recursive function


def by_module_attribute(x, n):
    """Calling itself as a module's attribute (``mod.f(...)``)."""
    if n == 0:
        return x
    return math.sin(WALKERS.walk(x, n - 1)) * 0.5 + x * 0.01


WALKERS.walk = by_module_attribute


def by_dict_entry(x, n):
    """Calling itself as a dict's entry."""
    if n == 0:
        return x
    return math.sin(BY_NAME["walk"](x, n - 1)) * 0.5 + x * 0.01


def by_list_entry(x, n):
    """Calling itself as a list's entry."""
    if n == 0:
        return x
    return math.sin(IN_LIST[0](x, n - 1)) * 0.5 + x * 0.01


BY_NAME, IN_LIST = {"walk": by_dict_entry}, [by_list_entry]


class AlternatingBase:
    def walk(self, x, n):
        if n == 0:
            return x
        return math.sin(self.walk(x, n - 1)) * 0.5 + x * 0.01  # the subclass's walk


class AlternatingChild(AlternatingBase):
    def walk(self, x, n):
        if n == 0:
            return x
        return math.sin(super().walk(x, n - 1)) * 0.5 + x * 0.01


def by_super(x, n):
    """Levels alternating between a method and its base class's through ``super()``."""
    return AlternatingChild().walk(x, n)


class TwoSteps:
    def step(self, x, n, scale=0.5):
        if n == 0:
            return x
        return math.sin(self.hop(n=n - 1, x=x)) * scale + x * 0.01

    def hop(self, x, n, shift=0.01):
        if n == 0:
            return x
        return math.sin(self.step(x, n - 1)) * 0.5 + x * shift


def by_other_method(x, n):
    """Levels alternating between two methods, one calling the other by keywords, the other
    leaving a default to be filled."""
    return TwoSteps().step(x, n)

#: the recursive forms that run 2,000 levels deep at limit 4,000, each computing ``rec``
FORMS = {"global": rec, "closure": nested, "keywords": by_keywords, "defaults": with_defaults,
         "method": by_method, "tree": by_tree, "static method": by_static_method,
         "method keywords": by_method_keywords, "closure keywords": nested_keywords,
         "module attribute": by_module_attribute, "dict entry": by_dict_entry, "list entry": by_list_entry,
         "super": by_super, "other method keywords": by_other_method}


#: forms whose second order at 2,000 levels takes over two seconds (run in the slow step)
SLOW_HVP = {"super", "other method keywords", "dict entry", "list entry", "tree", "closure"}


def _forms_and_modes() -> list:
    return [pytest.param(form, mode, id=f"{mode}-{form}",
                         marks=[pytest.mark.slow] if mode == "hvp" and form in SLOW_HVP else [])
            for mode in ("grad", "jvp", "hvp") for form in FORMS]


@pytest.mark.parametrize("form, mode", _forms_and_modes())
def test_each_form_2000_levels(limit_4000, form, mode):
    f = FORMS[form]
    v, d1, d2 = closed_form(0.3, DEPTH)
    if mode == "grad":
        assert yb.grad(f)(0.3, DEPTH) == pytest.approx(d1, rel=1e-12)
    elif mode == "jvp":
        value, tangent = yb.jvp(f, (0.3, DEPTH), (1.0, yb.NoTangent))
        assert (value, tangent) == (pytest.approx(v, rel=1e-12), pytest.approx(d1, rel=1e-12))
    else:
        value, gradients, hvps = yb.hvp(f, (0.3, DEPTH), (1.0, yb.NoTangent))
        assert (value, gradients[0]) == (pytest.approx(v, rel=1e-12), pytest.approx(d1, rel=1e-12))
        assert hvps[0] == pytest.approx(d2, rel=1e-9, abs=1e-15)


def _deepest_stack(run):
    """The most Python frames on the stack at once while ``run()`` runs."""
    deepest = [0]

    def profile(frame, event, arg):
        if event == "call":
            depth, f = 0, frame
            while f is not None:
                depth, f = depth + 1, f.f_back
            deepest[0] = max(deepest[0], depth)

    run()  # derive first: the derivation's own frames are not the recursion's
    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return deepest[0]


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_frames_per_level_at_most_two(mode, form):
    f = FORMS[form]
    runs = {"grad": lambda n: lambda: yb.grad(f)(0.3, n),
            "jvp": lambda n: lambda: yb.jvp(f, (0.3, n), (1.0, yb.NoTangent)),
            "hvp": lambda n: lambda: yb.hvp(f, (0.3, n), (1.0, yb.NoTangent))}[mode]
    per_level = (_deepest_stack(runs(80)) - _deepest_stack(runs(40))) / 40
    assert per_level <= 2, per_level


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_recursion_error_says_which_limit_works(mode):
    runs = {"grad": lambda n: yb.grad(rec)(0.3, n),
            "jvp": lambda n: yb.jvp(rec, (0.3, n), (1.0, yb.NoTangent))[1],
            "hvp": lambda n: yb.hvp(rec, (0.3, n), (1.0, yb.NoTangent))[1][0]}[mode]
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(600)
    try:
        with pytest.raises(RecursionError) as info:
            runs(5000)
        note = info.value.__notes__[-1]
        found = re.search(r"rec was (\d+) levels deep .* sys\.setrecursionlimit\((\d+)\) allows twice the depth", note)
        assert found, note
        levels, suggested = int(found.group(1)), int(found.group(2))
        assert 500 < levels < 600 and suggested < 4 * 600
        sys.setrecursionlimit(suggested)  # the advice works as printed: twice the depth reached
        runs(2 * levels)
    finally:
        sys.setrecursionlimit(old)


def counter(xs, n):
    xs.append(float(n))
    if n == 0:
        raise ValueError("bottom reached")
    return counter(xs, n - 1) * 2.0


def test_error_deep_inside_restores_arguments_and_names_lines():
    xs = [1.0]
    with pytest.raises(ValueError, match="bottom reached") as info:
        yb.grad(lambda x: counter([x], 30))(1.0)
    notes = "\n".join(info.value.__notes__)
    assert "in counter" in notes and 'raise ValueError("bottom reached")' in notes
    data = [1.0]
    with pytest.raises(ValueError):
        yb.grad(counter)(data, 20)
    assert data == [1.0]  # every level's append undone
    assert xs == [1.0]


def scaled(x, n):
    if n == 0:
        return helper(x)
    return scaled(x, n - 1) * 1.5


def helper(x):
    return x * x


def test_rule_registered_after_derivation_is_used():
    assert yb.grad(scaled)(2.0, 3) == pytest.approx(4.0 * 1.5 ** 3)
    original = helper
    try:
        yb.nondifferentiable(helper)
        assert yb.grad(scaled)(2.0, 3) == 0.0  # the rule, not helper's derived passes
    finally:
        from yuebing.rules.core import FRULES, RRULES
        from yuebing.rules.declare import ZERO_DERIVATIVE

        RRULES.by_function.pop(original, None)
        FRULES.by_function.pop(original, None)
        ZERO_DERIVATIVE.discard(original)
    assert yb.grad(scaled)(2.0, 3) == pytest.approx(4.0 * 1.5 ** 3)


def guarded(x, n):
    if n == 0:
        raise KeyError("none")
    try:
        return guarded(x, n - 1) * 2.0
    except KeyError:
        return x * x


def test_recursive_call_in_try_body():
    # the call raises before doing work at the bottom, so the handler's path is differentiated
    assert yb.grad(guarded)(3.0, 4) == pytest.approx(2.0 ** 3 * 6.0)
    assert yb.jvp(guarded, (3.0, 4), (1.0, yb.NoTangent))[1] == pytest.approx(2.0 ** 3 * 6.0)


def test_rebound_global_takes_the_new_function():
    global helper
    original = helper
    assert yb.grad(scaled)(2.0, 2) == pytest.approx(4.0 * 1.5 ** 2)
    try:
        helper = lambda x: x * x * x  # noqa: E731
        assert yb.grad(scaled)(2.0, 2) == pytest.approx(12.0 * 1.5 ** 2)
        assert yb.jvp(scaled, (2.0, 2), (1.0, yb.NoTangent))[1] == pytest.approx(12.0 * 1.5 ** 2)
        assert yb.hvp(scaled, (2.0, 2), (1.0, yb.NoTangent))[2][0] == pytest.approx(12.0 * 1.5 ** 2)
    finally:
        helper = original


def make_swappable():
    """A recursive closure made outside, and a way to rebind its cell."""
    def go(x, n):
        if n == 0:
            return x
        return go(x, n - 1) * 2.0

    def swap(g):
        nonlocal go
        go = g
    return go, swap


def test_rebound_closure_cell_takes_the_new_function():
    first, swap = make_swappable()
    assert yb.grad(first)(1.5, 3) == pytest.approx(8.0)
    swap(lambda x, n: x * x)  # first's recursive call now reaches the lambda: 2 x^2
    assert yb.grad(first)(1.5, 3) == pytest.approx(4 * 1.5)
    assert yb.jvp(first, (1.5, 3), (1.0, yb.NoTangent))[1] == pytest.approx(4 * 1.5)
    assert yb.hvp(first, (1.5, 3), (1.0, yb.NoTangent))[2][0] == pytest.approx(4.0)
    swap(first)
    assert yb.hvp(first, (1.5, 3), (1.0, yb.NoTangent))[1][0] == pytest.approx(8.0)


def scaled_by(x, n, scale=2.0, w=np.ones(2)):
    if n == 0:
        return np.sum(w * x)
    return scaled_by(x, n - 1) * scale


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_changed_defaults_are_read_at_each_call(mode):
    """The direct path reads defaults from the function when called, as Python does: replaced
    defaults, and an array default (its zero fdata fresh each call), give the new derivative."""
    run = {"grad": lambda: yb.grad(scaled_by)(1.5, 3),
           "jvp": lambda: yb.jvp(scaled_by, (1.5, 3), (1.0, yb.NoTangent))[1],
           "hvp": lambda: yb.hvp(lambda x: scaled_by(x, 3) ** 2, (1.5,), (1.0,))[2][0]}[mode]
    closed = {"grad": lambda s, w: s ** 3 * w.sum(), "jvp": lambda s, w: s ** 3 * w.sum(),
              "hvp": lambda s, w: 2 * (s ** 3 * w.sum()) ** 2}[mode]
    original = scaled_by.__defaults__
    try:
        assert run() == pytest.approx(closed(2.0, np.ones(2)))
        scaled_by.__defaults__ = (3.0, np.array([1.0, 4.0]))
        assert run() == pytest.approx(closed(3.0, np.array([1.0, 4.0])))
        assert run() == pytest.approx(closed(3.0, np.array([1.0, 4.0])))
    finally:
        scaled_by.__defaults__ = original


class Scaled:
    """A recursive method whose object carries a differentiated field."""
    def __init__(self, w):
        self.w = w

    def power(self, x, n):
        if n == 0:
            return x
        return self.power(x, n - 1) * self.w


def through_fields(w, x):
    return Scaled(w).power(x, 5)


def test_method_object_fields_get_derivatives():
    """The object's fdata goes in and its rdata comes out of a method reached directly: d/dw of
    x w^5 is 5 x w^4, in every mode."""
    w, x = 1.3, 0.7
    assert yb.grad(through_fields)(w, x) == pytest.approx(5 * x * w ** 4)
    assert yb.jvp(through_fields, (w, x), (1.0, 0.0))[1] == pytest.approx(5 * x * w ** 4)
    assert yb.hvp(through_fields, (w, x), (1.0, 0.0))[2][0] == pytest.approx(20 * x * w ** 3)
    assert yb.grad(lambda w: np.sum(Scaled(w).power(x, 5)))(np.array([1.3, 0.5])) == pytest.approx(5 * x * np.array([1.3, 0.5]) ** 4)


def test_method_replaced_on_the_class_takes_the_new_one():
    assert yb.grad(through_fields)(1.3, 0.7) == pytest.approx(5 * 0.7 * 1.3 ** 4)
    original = Scaled.power
    try:
        Scaled.power = lambda self, x, n: x * self.w * self.w
        assert yb.grad(through_fields)(1.3, 0.7) == pytest.approx(2 * 0.7 * 1.3)
        assert yb.hvp(through_fields, (1.3, 0.7), (1.0, 0.0))[2][0] == pytest.approx(2 * 0.7)
    finally:
        Scaled.power = original


def partial_step(x, n, scale):
    if n == 0:
        return x
    return math.sin(step(x, n - 1)) * scale + x * 0.01


step = functools.partial(partial_step, scale=0.5)  # a global partial: the general dispatch


def walk(x, n):
    return step(x, n)


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_slow_form_recursion_error_says_which_limit_works(mode):
    """A function reached through a ``functools.partial`` still takes the general dispatch
    (several frames a level): the RecursionError's note measures that and its suggested limit
    works as printed."""
    f = walk
    runs = {"grad": lambda n: yb.grad(f)(0.3, n),
            "jvp": lambda n: yb.jvp(f, (0.3, n), (1.0, yb.NoTangent))[1],
            "hvp": lambda n: yb.hvp(f, (0.3, n), (1.0, yb.NoTangent))[1][0]}[mode]
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(600)
    try:
        with pytest.raises(RecursionError) as info:
            runs(5000)
        note = info.value.__notes__[-1]
        found = re.search(r"partial_step was (\d+) levels deep .* each level takes ([\d.]+) Python frame.*"
                          r"sys\.setrecursionlimit\((\d+)\) allows twice the depth", note)
        assert found, note
        levels, per_level, suggested = int(found.group(1)), float(found.group(2)), int(found.group(3))
        assert per_level > 2 and levels * per_level < 600
        sys.setrecursionlimit(suggested)
        expected = closed_form(0.3, 2 * levels)[1]
        assert runs(2 * levels) == pytest.approx(expected, rel=1e-12)
    finally:
        sys.setrecursionlimit(old)


class Holder:
    """An object whose attribute holds a plain function or a bound method, chosen per call."""
    def __init__(self, step, w):
        self.step, self.w = step, w

    def bound(self, x, n):
        return x * self.w if n == 0 else self.step(x, n - 1) * self.w


def plain_step(x, n):
    return x * x if n == 0 else plain_step(x, n - 1) * 2.0


def test_attribute_holding_function_or_method():
    """One attribute read reaches a plain function (its own direct path) or a bound method
    (the object's derivative given back through the method) at different calls."""
    h = Holder(plain_step, 3.0)
    assert yb.grad(lambda x: h.bound(x, 3))(1.5) == pytest.approx(3.0 * 4.0 * 2 * 1.5)
    assert yb.hvp(lambda x: h.bound(x, 3), (1.5,), (1.0,))[2][0] == pytest.approx(3.0 * 4.0 * 2)

    def chained(w, x):
        inner = Holder(None, w)
        outer = Holder(inner.bound, w)  # outer.step is inner's bound method: w * (x w)
        return outer.bound(x, 1)
    assert yb.grad(chained)(1.3, 0.7) == pytest.approx(2 * 1.3 * 0.7)
    assert yb.jvp(chained, (1.3, 0.7), (1.0, 0.0))[1] == pytest.approx(2 * 1.3 * 0.7)
    assert yb.hvp(chained, (1.3, 0.7), (1.0, 0.0))[2][0] == pytest.approx(2 * 0.7)


class Renamed:
    """Two classes' ``step`` methods, one calling the other's with keywords: bound by names."""
    def __init__(self, other, w):
        self.other, self.w = other, w

    def step(self, x, n, k=1.0):
        if n == 0:
            return x * k
        return self.other.step(n=n - 1, x=x * self.w)


class Different:
    def step(self, n, x, k=2.0):  # the same names in another order, another default
        return x * x * k


def test_self_call_by_names_reaches_another_signature():
    """A call bound by its caller's parameter names reaches another function only when that one
    has the same names in the same order (else the general path binds it)."""
    def f(w, x):
        return Renamed(Renamed(Different(), w), w).step(x, 2)
    w, x = 1.3, 0.7  # Different gets x w^2: 2 (x w^2)^2 = 2 x^2 w^4
    assert yb.grad(f)(w, x) == pytest.approx(8 * x * x * w ** 3)
    assert yb.jvp(f, (w, x), (1.0, 0.0))[1] == pytest.approx(8 * x * x * w ** 3)
    assert yb.hvp(f, (w, x), (1.0, 0.0))[2][0] == pytest.approx(24 * x * x * w ** 2)
