"""Second order (forward-over-reverse): every rule case with a second-order rule through
``check_second_order`` (one test per case, like test_rules.py), the whole derived-rule corpus
(either a correct Hessian-vector product or a clear ``SecondOrderError``, never a wrong answer),
Hessians of the realistic programs against finite differences of the gradient, and the API."""
import math

import numpy as np
import pytest

import yuebing as yb
from yuebing import tangents as T
from yuebing.tangents import NoFData, NoRData
from yuebing.rules import CoDual, primal, register_rrule, rule_modules
from yuebing.transform.lifting import lookup_second_order
from yuebing.testing.structural import compare
from yuebing.testing.second_order import NotTwiceDifferentiable, check_second_order, differentiable_positions
from yuebing.testing.targets import packed
from yuebing.transform.second_order import SecondOrderError

from .corpus import data, extra_data, extra_language, extra_objects, extra_programs, language, objects, programs

# ---------------------------------------------------------------- every rule case


def _checkable(case) -> bool:
    """Real float64 cases (central differences of a float32 gradient are too coarse to check a
    second derivative; complex second order is not supported) with 1-4 differentiable arguments."""
    values = list(case.args) + list(case.kwargs.values())
    if any(_complex_or_single(v) or _not_finite(v) or _cyclic(v) for v in values):
        return False
    if differentiable_positions(tuple(case.kwargs.values())):  # the checker passes keywords as constants
        return False
    return 1 <= len(differentiable_positions(case.args)) <= 4


def _cyclic(v, seen=None) -> bool:
    """A list or dict that contains itself (the scalar test function walks its argument)."""
    seen = set() if seen is None else seen
    if isinstance(v, (list, tuple, dict)):
        if id(v) in seen:
            return True
        seen.add(id(v))
        items = v.values() if isinstance(v, dict) else v
        found = any(_cyclic(e, seen) for e in items)
        seen.discard(id(v))
        return found
    return False


def _not_finite(v) -> bool:
    """NaN or infinite inputs: the gradient itself is not finite there, nothing to difference."""
    return isinstance(v, np.ndarray) and v.dtype.kind == "f" and not np.all(np.isfinite(v)) \
        or isinstance(v, float) and not np.isfinite(v)


def _complex_or_single(v, depth: int = 0) -> bool:
    if isinstance(v, np.ndarray):
        return v.dtype.kind == "c" or v.dtype == np.float32
    if isinstance(v, (complex, np.complexfloating, np.float32)) or v is np.float32:
        return True
    if isinstance(v, (list, tuple)) and depth < 3:
        return any(_complex_or_single(e, depth + 1) for e in v)
    if isinstance(v, dict) and depth < 3:
        return any(_complex_or_single(e, depth + 1) for e in v.values())
    return False


def _has_second_order(f) -> bool:
    try:
        return lookup_second_order(f) is not None
    except Exception:  # noqa: BLE001 - unusual callables have none
        return False


RULE_CASES = [
    pytest.param(case, id=f"{module.__name__.removeprefix('yuebing.rules.')}:{case.name}")
    for module in rule_modules()
    for case in getattr(module, "CASES", ())
    if _has_second_order(case.f) and _checkable(case)
]

#: Cases at points where the function is not twice differentiable (kinks, ties, jumps, the
#: conventions of docs/conventions.md): central differences of the gradient do not converge there,
#: so there is nothing to check against. A case not listed here must converge.
NOT_TWICE_DIFFERENTIABLE = {
    "abs'(0) = 0", "maximum ties split", "fmin ties split", "copysign at a = 0", "pow: 0**1",
    "pow: 0**0 is constant", "pow arrays: conventions", "mod at a jump: -floor(a/b)",
    "pow: d/dbase at 0 for p > 1; d/dexp 0 at 0", "xlogy(0, y): d/dy = 0",
    "norm(zeros(3)): gradient 0 by convention", "norm(zeros, ord=3): gradient 0", "norm(ord=1) with a zero entry",
    "numpy.max(ties split evenly)", "numpy.min(three-way tie)", "numpy.ptp(tied max)", "ndarray.max(ties)",
    "clip with a at its bounds (ties split)", "numpy.sort(ties: stable permutation)",
    "max tie: gradient to the first", "min tie in a list: first", "chebyshev with a tie",
}
#: Cases second order refuses with a SecondOrderError (documented in docs/limitations.md).
REFUSED = {"copy.copy(object)", "copy.deepcopy(object)", "defaultdict[missing]"}
#: Conventions for real powers of negative bases (not differentiable in the exponent there): the
#: gradient follows the first-order convention, the second derivative in the exponent does not.
#: (``math.pow(negative, int)`` is right since the strong-zero rule: its int exponent has no
#: tangent, so the exponent's NaN partial contributes nothing.)
NEGATIVE_BASE_POWERS = {"pow: d/dexp = 0 at a negative base"}


def _writes_out(case) -> bool:
    """ufunc-style out=/dtype=/where= calls: second order may refuse them (dtype=, where=, out= a
    non-float array)."""
    return bool({"out", "dtype", "where"} & set(case.kwargs)) or "out)" in case.name or "out=" in case.name


@pytest.mark.parametrize("case", RULE_CASES)
def test_rule_second_order(case):
    if case.name in NEGATIVE_BASE_POWERS:
        with pytest.raises(AssertionError):
            check_second_order(case.f, *case.args, kwargs=case.kwargs)
        return
    try:
        check_second_order(case.f, *case.args, kwargs=case.kwargs)
    except NotTwiceDifferentiable:
        assert case.name in NOT_TWICE_DIFFERENTIABLE, "central differences of the gradient do not converge"
    except SecondOrderError as error:  # a refusal is right only for what second order refuses
        refused_keyword = any(k in str(error) for k in ("out=", "dtype=", "where="))
        assert _writes_out(case) and refused_keyword or case.name in REFUSED, str(error)


def test_many_rule_cases_have_second_order():
    assert len(RULE_CASES) >= 700


# ---------------------------------------------------------------- the corpus


def _scalar_outputs():
    rng = np.random.default_rng(0)
    entries = []
    for module in (language, data, objects, programs, extra_language, extra_data, extra_objects, extra_programs):
        for fn, args, _ in module.CORPUS:
            try:
                y = fn(*T.structural_copy(args))
            except Exception:  # noqa: BLE001 - corpus entries that raise on purpose
                continue
            if isinstance(y, float) or isinstance(y, np.ndarray) and y.dtype.kind == "f":
                w = rng.standard_normal(np.shape(y)) if isinstance(y, np.ndarray) else float(rng.standard_normal())
                entries.append(pytest.param(fn, args, w, id=f"{module.__name__.removeprefix('yuebing.rules.')}:{fn.__name__}"))
    return entries


CORPUS = _scalar_outputs()
_OUTCOMES = {"checked": 0, "refused": 0}


def _projected(fn, w):
    from yuebing.testing.targets import _project

    def scalar(*args):
        return _project(fn(*args), w)

    return scalar


@pytest.mark.parametrize("fn, args, w", CORPUS)
def test_corpus_hvp_is_right_or_refused(fn, args, w):
    """Never a wrong answer: the Hessian-vector product matches central differences of the
    gradient, or second order raises SecondOrderError naming what it does not support."""
    s = packed(_projected(fn, w))  # one tuple argument: arguments sharing an array share its tangent
    rng = np.random.default_rng(1)
    direction = tuple(T.randn_tangent(rng, tuple(args)))
    before = T.structural_copy(args)
    try:
        _, (gradient,), (product,) = yb.hvp(s, (args,), (direction,))
    except SecondOrderError:
        _OUTCOMES["refused"] += 1
        return
    assert compare(before, args) is None  # the caller's arguments are untouched
    argnums = tuple(differentiable_positions(args))
    probe = tuple(T.randn_tangent(rng, tuple(args)))
    probe = tuple(probe[i] for i in argnums)

    def selected(g):
        return tuple(g[i] for i in argnums)

    expected = selected(yb.grad(s)(T.structural_copy(args)))
    assert T.dot(probe, selected(gradient)) == pytest.approx(T.dot(probe, expected), rel=1e-8, abs=1e-10)
    h = 1e-5
    plus = selected(yb.grad(s)(T.add_to_primal(T.structural_copy(args), T.scale(direction, h))))
    minus = selected(yb.grad(s)(T.add_to_primal(T.structural_copy(args), T.scale(direction, -h))))
    finite = (T.dot(probe, plus) - T.dot(probe, minus)) / (2 * h)
    assert T.dot(probe, selected(product)) == pytest.approx(finite, rel=1e-4, abs=1e-6)
    _OUTCOMES["checked"] += 1


# ---------------------------------------------------------------- realistic programs: Hessians

from .test_forward import REALISTIC  # noqa: E402 - the programs of the forward-mode Jacobian tests


def _scalarized(fn, args, argnum, seed=0):
    """``x -> <w, fn(..., x, ...)> + 0.1 |fn(...)|^2`` with the other arguments held fixed."""
    from yuebing.testing.targets import _project

    w = np.random.default_rng(seed).standard_normal(np.shape(fn(*T.structural_copy(args))))
    fixed = list(args)

    def scalar(x):
        call = list(fixed)
        call[argnum] = x
        return _project(fn(*call), w)

    return scalar


def _fd_hessian(scalar, x, h=1e-5):
    """Central differences of yb.grad: column j is (grad(x + h e_j) - grad(x - h e_j)) / 2h."""
    x = np.asarray(x, dtype=float)
    columns = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e.flat[j] = h
        plus = yb.grad(scalar)(x + e if x.ndim else float(x + e))
        minus = yb.grad(scalar)(x - e if x.ndim else float(x - e))
        columns.append(np.ravel((np.asarray(plus) - np.asarray(minus)) / (2 * h)))
    return np.stack(columns, axis=1).reshape(x.shape + x.shape)


@pytest.mark.parametrize("fn, args, argnum", REALISTIC, ids=[f"{fn.__name__}-arg{a}" for fn, _, a in REALISTIC])
def test_realistic_hessian_matches_finite_differences_of_gradient(fn, args, argnum):
    scalar = _scalarized(fn, args, argnum)
    x = args[argnum]
    if not isinstance(x, (float, np.ndarray)):  # a dict of parameters: Hessian-vector products
        direction = T.randn_tangent(np.random.default_rng(2), x)
        _, _, (product,) = yb.hvp(scalar, (x,), (direction,))
        h = 1e-5
        plus = yb.grad(scalar)(T.add_to_primal(T.structural_copy(x), T.scale(direction, h)))
        minus = yb.grad(scalar)(T.add_to_primal(T.structural_copy(x), T.scale(direction, -h)))
        finite = T.scale(T.difference(plus, minus), 1 / (2 * h))
        probe = T.randn_tangent(np.random.default_rng(3), x)
        assert T.dot(probe, product) == pytest.approx(T.dot(probe, finite), rel=1e-5, abs=1e-7)
        return
    hessian = yb.hessian(scalar)(x)
    expected = _fd_hessian(scalar, x)
    np.testing.assert_allclose(hessian, expected, rtol=1e-5, atol=1e-6)
    flat = np.reshape(hessian, (np.size(x), np.size(x)))
    np.testing.assert_allclose(flat, flat.T, rtol=1e-10, atol=1e-10)


def test_prepared_hessian_matches_and_reuses_buffers():
    fn, args, argnum = REALISTIC[0]
    scalar = _scalarized(fn, args, argnum)
    x = args[argnum]
    prepared = yb.prepare_hessian(scalar, x)
    first = prepared(x)
    np.testing.assert_allclose(first, yb.hessian(scalar)(x), rtol=1e-12, atol=1e-12)
    second = prepared(x * 1.01)
    np.testing.assert_allclose(second, yb.hessian(scalar)(x * 1.01), rtol=1e-12, atol=1e-12)
    assert first is not second


# ---------------------------------------------------------------- API


def cubic(x, w):
    return np.sum(w * x ** 3) + x[0] * x[1]


def test_hvp_returns_value_gradient_and_product():
    x, w, v = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, 3.0]), np.array([0.3, 0.1, -0.2])
    value, (gx, gw), (hx, hw) = yb.hvp(cubic, (x, w), (v, yb.NoTangent))
    assert value == pytest.approx(cubic(x, w))
    np.testing.assert_allclose(gx, yb.grad(cubic)(x, w))
    np.testing.assert_allclose(gw, yb.grad(cubic, argnums=1)(x, w))
    np.testing.assert_allclose(hx, yb.hessian(cubic)(x, w) @ v)
    np.testing.assert_allclose(hw, yb.hessian(cubic, argnums=(0, 1))(x, w)[1][0] @ v)  # d/dw of grad_x . v


def test_hessian_blocks_for_several_arguments_are_symmetric():
    x, w = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, 3.0])
    blocks = yb.hessian(cubic, argnums=(0, 1))(x, w)
    full = np.block([[blocks[0][0], blocks[0][1]], [blocks[1][0], blocks[1][1]]])
    np.testing.assert_allclose(full, full.T, atol=1e-12)
    assert yb.hessian(lambda a, b: a * a * b, argnums=(0, 1))(1.5, 2.0)[0][1] == pytest.approx(3.0)


def test_hvp_leaves_arguments_untouched_even_when_f_mutates_them():
    def mutating(x):
        x[0] = x[0] * x[1]
        return np.sum(x ** 2)

    x = np.array([1.5, 2.0])
    before = x.copy()
    _, (g,), (h,) = yb.hvp(mutating, (x,), (np.array([1.0, 0.0]),))
    np.testing.assert_array_equal(x, before)
    np.testing.assert_allclose(g, [2 * 1.5 * 2.0 ** 2, 2 * 1.5 ** 2 * 2.0 + 2 * 2.0])
    np.testing.assert_allclose(h, [2 * 2.0 ** 2, 4 * 1.5 * 2.0])


def vector_output(x):
    return x * 2.0


def test_second_order_errors_are_clear():
    with pytest.raises(TypeError, match="real scalar"):
        yb.hessian(vector_output)(np.ones(2))
    with pytest.raises(TypeError, match="tuples"):
        yb.hvp(cubic, np.ones(3), np.ones(3))
    with pytest.raises(TypeError, match="2 primals but 1 tangents"):
        yb.hvp(cubic, (np.ones(3), np.ones(3)), (np.ones(3),))
    with pytest.raises(TypeError, match="flatten"):
        yb.hessian(lambda d: d["a"] * 2.0)({"a": 1.0})
    with pytest.raises(yb.SecondOrderError, match="no second-order rule for <lambda> \\(vectorized\\)"):
        yb.hvp(lambda x: TWICE(x) * x, (1.5,), (1.0,))


def _twice_rrule(x):
    def pullback(g):
        return NoRData, 2.0 * g

    return CoDual(float(TWICE(primal(x))), NoFData), pullback


# a C function (a NumPy ufunc object) with a user's reverse rule and no second-order declaration
TWICE = np.frompyfunc(lambda v: 2.0 * v, 1, 1)
register_rrule(TWICE, _twice_rrule)


# Hessians of functions that call yb.grad (third derivatives): tests/test_third_order.py


def test_show_hvp_is_readable_python():
    source = yb.show(cubic, mode="hvp")
    compile(source, "<test>", "exec")
    assert "def cubic_dual_forward" in source and "# undo line" in source and "x_d" in source


def writes_through_out(a):
    b = a * 1.0
    np.exp(b, out=b)
    np.multiply(b, a, out=b)
    return np.sum(b ** 2)


def test_ufunc_out_in_second_order():
    x = np.array([0.3, 0.8, -0.4])
    hessian = yb.hessian(writes_through_out)(x)
    np.testing.assert_allclose(hessian, _fd_hessian(writes_through_out, x), rtol=1e-6, atol=1e-7)


def zero_d_output(x):
    return np.array(np.sum(x * x * x))


def test_zero_d_array_outputs_are_scalars():
    # the cotangent of a 0-d array output goes into its fdata, as in first order
    x = np.array([1.0, 2.0])
    _, (g,), (hv,) = yb.hvp(zero_d_output, (x,), (np.array([1.0, 0.0]),))
    np.testing.assert_allclose(g, 3 * x ** 2)
    np.testing.assert_allclose(hv, [6.0, 0.0])
    np.testing.assert_allclose(yb.prepare_hvp(zero_d_output, x)((x,), (np.array([0.0, 1.0]),))[2][0], [0.0, 12.0])


# ------------------------------------------- primitives whose second order is a Python definition


def map_with_captured_scale(xs, c):
    return np.array(list(map(lambda v, w: v * c * w + np.sin(v), xs, [0.5, -1.5, 2.0])))


def filter_then_square(xs, c):
    kept = filter(lambda v: v > 0.0, xs)
    return sum(v * v * c for v in kept) + sum(filter(None, [c * c, 0.0]))


def vectorized_cubic(x, c):
    return np.vectorize(lambda v: v * v * v - 2.0 * np.cos(v))(x) * c


def sort_in_place(x):
    y = x * x
    y.sort()
    return y * np.arange(1.0, len(y) + 1.0)


@pytest.mark.parametrize("f, args", [
    (map_with_captured_scale, ([0.3, -1.2, 0.7], 1.3)),
    (filter_then_square, ([0.3, -1.2, 0.7], 1.3)),
    (vectorized_cubic, (np.array([[0.3, -1.2], [0.7, 2.0]]), 0.8)),
    (sort_in_place, (np.array([0.3, -1.2, 0.7, 2.1]),)),
], ids=["map", "filter", "vectorize", "ndarray.sort"])
def test_second_order_by_python_definition(f, args):
    check_second_order(f, *args)


def draws(loc, scale, low, gen):
    z = gen.normal(loc, scale, size=(2, 3))
    u = gen.uniform(low, low + scale[0] * scale[0], size=3)
    e = gen.exponential(scale[1])
    return np.sum(z * z * u) + e * e * loc[0]


@pytest.mark.parametrize("make", [np.random.default_rng, np.random.RandomState], ids=["Generator", "RandomState"])
def test_pathwise_draws_replay_their_noise_in_second_order(make):
    loc, scale, low = np.array([0.5, -0.3, 1.0]), np.array([1.2, 0.7, 2.0]), np.array([0.1, 0.2, 0.3])
    gen = make(7)
    check_second_order(draws, loc, scale, low, gen)
    # as in first order, the reverse pass undoes the draws: the caller's generator is where it was
    assert _state(gen) == _state(make(7))


def _state(gen) -> str:
    return str(gen.bit_generator.state if hasattr(gen, "bit_generator") else gen.get_state(legacy=False))


def scalar_loop(x, w):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * w - x[i] / (w + 2.0)
        s *= 0.9  # the target is an operand
        s = s - x[i] * x[i] + 1.0
    return s * s / w


def test_inline_scalar_operations_in_second_order():
    # float arithmetic and float reads run inline in the dual program (transform/dual_templates.py)
    assert "# inline: " in yb.show(scalar_loop, mode="hvp")
    check_second_order(scalar_loop, np.linspace(-1.0, 1.0, 6), 0.7)
    check_second_order(scalar_loop, [0.3, -0.4, 1.1], 0.7)  # a list: the generic path for reads


def unary_scalar_loop(x, w):
    s = 0.0
    for i in range(len(x)):
        v = x[i] * w
        s += np.sin(v) + math.cos(-v) * np.exp(-v) + np.tanh(v) - math.sqrt(v * v + 1.0) + np.log(v * v + 2.0)
    return s * s


def test_inline_functions_of_one_float_in_second_order():
    assert "np.sin is _numpy_sin" in yb.show(unary_scalar_loop, mode="hvp")
    check_second_order(unary_scalar_loop, np.linspace(-1.0, 1.0, 5), 0.7)


def writes_elements(x, w):
    y = np.empty_like(x)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            y[i, j] = np.sin(x[i, j] * w) * x[i, j]
    z = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        z[i] = y[i, 0] * y[i, 1]
        z[i] = z[i] * w  # an element read back and overwritten
    return np.sum(z * z) + np.sum(y)


def test_inline_element_writes_in_second_order():
    assert "y.ndim == 2 and type(y_d) is _ND and y_d.ndim == 2" in yb.show(writes_elements, mode="hvp")
    check_second_order(writes_elements, np.array([[0.3, -0.8], [1.2, 0.5], [-0.4, 0.9]]), 0.7)


def metadata_loops(x):
    s = 0.0
    shape = x.shape
    for i in range(shape[0]):
        for j in range(x.shape[1]):
            s += np.exp(x[i, j] * 0.5) * x.size / x.ndim + x[i, j] * len(shape[0:1])
    return s


def test_inline_array_metadata_in_second_order():
    # x.shape, shape[0] run inline in the dual program (no linear-class rule call per iteration);
    # a slice of the shape is a tuple, which takes the generic call
    shown = yb.show(metadata_loops, mode="hvp")
    assert "= x.shape; " in shown and "type(_v := shape[0]) is int" in shown
    x = np.array([[0.3, -0.8, 0.1], [1.2, 0.5, -0.4]])
    check_second_order(metadata_loops, x)
    v = np.linspace(0.3, 1.1, 6).reshape(2, 3)
    _, _, (product,) = yb.hvp(metadata_loops, (x,), (v,))
    np.testing.assert_allclose(np.tensordot(yb.hessian(metadata_loops)(x), v, 2), product, rtol=1e-12, atol=1e-12)


def index_tuples(x):
    y = np.empty_like(x)
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            at = (i, j)
            y[at] = np.sin(np.cos(np.exp(x[at])))
        row = (i, slice(None))  # not an element: its read takes the generic call
        s += np.sum(x[row] ** 2)
        row = (i, 0)
        s += x[row] * y[row]
    return np.sum(y) + s


def test_inline_reads_and_writes_at_int_tuples_in_second_order():
    # an index only ever assigned a tuple of k ints is guarded by the arrays' ranks; a variable
    # also assigned anything else keeps the run-time check (at_element)
    shown = yb.show(index_tuples, mode="hvp")
    assert "x.ndim == 2 and type(x_d) is _ND and x_d.ndim == 2:  # inline: _t" in shown
    assert "_at_element(x, x_d, row)" in shown
    x = np.array([[0.3, -0.8, 0.1], [1.2, 0.5, -0.4]])
    check_second_order(index_tuples, x)
    v = np.linspace(0.3, 1.1, 6).reshape(2, 3)
    _, _, (product,) = yb.hvp(index_tuples, (x,), (v,))
    np.testing.assert_allclose(np.tensordot(yb.hessian(index_tuples)(x), v, 2), product, rtol=1e-12, atol=1e-12)


def lognormal_draws(mean, sigma, gen):
    y = gen.lognormal(mean, sigma[0] * sigma[1], size=(2, 3))
    return np.sum(y * y) + np.sum(np.log(y) * mean)


@pytest.mark.parametrize("make", [np.random.default_rng, np.random.RandomState], ids=["Generator", "RandomState"])
def test_lognormal_second_order_is_that_of_exp_of_normal(make):
    check_second_order(lognormal_draws, np.array([0.2, -0.1, 0.4]), np.array([0.6, 1.1]), make(5))
    value, _, _ = yb.hvp(lognormal_draws, (np.array([0.2, -0.1, 0.4]), np.array([0.6, 1.1]), make(5)),
                         (np.ones(3), np.ones(2), T.NoTangent))
    assert value == lognormal_draws(np.array([0.2, -0.1, 0.4]), np.array([0.6, 1.1]), make(5))  # the same draws


def where_with_a_boolean_branch(a):
    chosen = np.where(a == 0.1, 0.5, np.maximum(a, 0.1) == a)  # a bool read as the number 1
    return chosen * a * a


def test_boolean_data_has_zero_tangent():
    x = 0.3
    _, _, product = yb.hvp(where_with_a_boolean_branch, (x,), (1.0,))
    assert product[0] == pytest.approx(_fd_hessian(where_with_a_boolean_branch, x))


def _writes_into_int_arrays(d):
    r = np.zeros(3, int)
    r[0] = 3
    flags = np.zeros(2, bool)
    flags[1] = True
    t = 0
    t += d  # an int target that becomes a float: this one carries the tangent
    return np.sum((r * d) ** 2) + np.sum(np.where(flags, t * d, d)) * t


def test_writes_into_int_arrays_leave_their_values():
    """The tangent call of a write into an int array used to run on the array itself, writing
    the zeroed value into it: a silently wrong value and Hessian (found by the fft work)."""
    from tests.modes import check_every_mode

    check_every_mode(_writes_into_int_arrays, 0.7)
