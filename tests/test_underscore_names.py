"""A user's names that begin with an underscore never collide with the generated code's.

Generated code uses ``_p``, ``_q``, ``_tape``, ``_fn``, numbered temporaries (``_b1``, ``_t1``) and
runtime globals (``_D``, ``_ND``, ``_FT``); ``frontend/underscore_names.py`` renames the
function's own underscore names before lowering. Each function here is checked in every mode
against finite differences (``check_all_modes``: gradient, forward tangent, Hessian-vector
product), some to third order.
"""
from __future__ import annotations

import asyncio
import re

import numpy as np
import numpy as _np
import pytest

import yuebing as yb
from tests.all_modes import check_all_modes
from yuebing.testing.third_order import check_third_order

# module globals named like the runtime's (``_D``, ``_ND``, ``_FT``) and its temporaries (``_p``)
_D = 2.0
_ND = 3.0
_FT = 0.5
_p = 1.5
_W = np.array([0.5, -1.0, 2.0])


def _helper(v, scale):
    return np.sin(v) * scale


def locals_like_templates(x):
    _p = x * 2.0
    print("", end="")  # (an opaque call between: the inline templates' _p/_q live across it)
    _q = _p * x
    print("", end="")
    _r = _q * _p
    return np.sum(_r)


def globals_like_runtime(x):
    a = x * _D
    print("", end="")
    b = a * _ND
    print("", end="")
    c = b @ b * _p
    return np.sum(c) * _p + np.sum(np.sin(x) * _FT)


def parameters_like_generated(_x, _p=1.5, _d=2.0, _tape=0.5, _fn=3.0, _G=0.25):
    _o = _x * _p + _d
    print("", end="")
    return np.sum(np.sin(_o) * _tape + _o * _o * _fn) * _G


def numbered_locals(x):
    _b1 = np.sin(x)
    _t1 = _b1 * x
    print("", end="")
    _o = _t1 + _b1 * _b1
    _pb = np.cos(_o)
    _v = _pb * _t1
    _e = _v.sum()
    return _e * _e


def private_helpers_and_modules(x):
    _y = _helper(x, _D) + _np.exp(x * _FT)
    return _np.sum(_y * _W)


def closure_capturing(x):
    _p = x * 2.0

    def scaled(v):
        return v * _p

    _q = scaled(x) + (lambda _z: _z * _p)(x)
    return np.sum(np.sin(_q))


def closure_writing(x):
    _acc = x * 0.0

    def bump(v):
        nonlocal _acc
        _acc = _acc + v * v

    bump(x)
    bump(np.sin(x))
    return np.sum(_acc * x)


def nested_shadowing(x):
    _p = x * 3.0

    def inner(v):
        _p = v * v  # the nested function's own _p: not the enclosing one
        return _p + 1.0

    return np.sum(inner(x) * _p)


def comprehension_over_underscore(x):
    _w = 1.5
    terms = [x[_i] * x[_i] * _w for _i in range(3)]
    more = {_k: np.sin(x[_k]) for _k in range(3)}
    return sum(terms) + sum(more.values()) + sum(_v * _v for _v in x)


def loop_variables(x):
    total = 0.0
    for _k in range(3):
        total = total + x[_k] * x[(_k + 1) % 3]
    for _ in range(2):
        total = total * 1.1
    _j = 0
    while _j < 3:
        total = total + np.cos(x[_j])
        _j += 1
    return total


def imports_and_handlers(x):
    import numpy as _lin
    try:
        _r = _lin.tanh(x)
        raise ValueError("handled")
    except ValueError as _err:
        _r = _r * len(str(_err))
    return np.sum(_r * x)


def class_reading_underscore_globals(x):
    class Scaled:  # the class statement runs with the globals it reads bound to locals
        factor = _ND

        def __init__(self, v):
            self._v = v * _D  # (an attribute: keeps its name)

        def value(self):
            return self._v * self.factor
    _s = Scaled(x)
    print("", end="")
    return np.sum(_s.value() * x)


_calls = 0


def _power(v, n):
    return v if n == 0 else v * _power(v, n - 1)


def declared_global_and_recursion(x):
    global _calls
    _calls += 1  # declared global: written to the module, keeps its name

    def _reads_global(v):
        return v * _D  # the nested function's global, not our renamed local
    _r = _power(x, 3) + _reads_global(x) * _D
    return np.sum(_r)


def scalar_chain(t):
    _p = t * t
    print("", end="")
    _q = np.sin(_p) * _D
    print("", end="")
    return _q * _p + _FT * t


FUNCTIONS = [locals_like_templates, globals_like_runtime, parameters_like_generated, numbered_locals,
             private_helpers_and_modules, closure_capturing, closure_writing, nested_shadowing,
             comprehension_over_underscore, loop_variables, imports_and_handlers,
             class_reading_underscore_globals, declared_global_and_recursion]
X = np.array([0.3, -0.7, 1.1])


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_every_mode(f):
    check_all_modes(f, X.copy())


def test_scalar_every_mode():
    check_all_modes(scalar_chain, 0.7)


@pytest.mark.parametrize("f", [locals_like_templates, globals_like_runtime, scalar_chain],
                         ids=lambda f: f.__name__)
def test_third_order(f):
    check_third_order(f, X.copy() if f is not scalar_chain else 0.7)


def test_parameters_bound_by_keyword():
    """The generated function takes the renamed parameters by position: a call naming the
    user's parameters still binds them."""
    def by_keyword(x):
        return parameters_like_generated(x, _tape=0.7, _fn=x[0])
    check_all_modes(by_keyword, X.copy())
    gradient = yb.grad(parameters_like_generated, argnums=(0, 1))(X.copy(), 0.8, _G=1.5)
    h = 1e-6
    slope = (parameters_like_generated(X, _p=0.8 + h, _G=1.5) - parameters_like_generated(X, _p=0.8 - h, _G=1.5)) / (2 * h)
    np.testing.assert_allclose(gradient[1], slope, rtol=1e-6)


def test_vector_output_jacobians():
    def vector(x):
        _p = x * _D
        print("", end="")
        _q = np.sin(_p) * _ND
        return _q * x
    forward = yb.jacobian(vector, mode="fwd")(X.copy())
    reverse = yb.jacobian(vector, mode="rev")(X.copy())
    h = 1e-6
    columns = [(vector(X + h * e) - vector(X - h * e)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(forward, np.array(columns).T, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(reverse, forward, rtol=1e-12, atol=1e-12)


def test_generated_code_reads_no_user_underscore_name():
    """The generated programs name the user's ``_p`` and the global ``_D`` otherwise."""
    for mode in ("reverse", "forward", "hvp"):
        text = yb.show(globals_like_runtime, X.copy(), mode=mode)
        assert "_global(_G, '_D')" in text and not re.search(r"(?<!\w)_D = _global", text), mode
        text = yb.show(locals_like_templates, X.copy(), mode=mode)
        assert "u_p" in text, mode


def _dotted_import(x):
    import _pytest.mark  # binds _pytest, with its submodule mark imported
    import numpy.linalg as _la
    return np.sum(x * x) * len(_pytest.mark.__name__) + _la.norm(x)


def test_dotted_import_of_an_underscore_package():
    check_all_modes(_dotted_import, X.copy())


def _computes_with_underscores(x):
    _p = np.sin(x) * x + _D
    _q = _p * _p
    return np.sum(_q * _FT)


def test_speculative_jvp():
    """A plain computing function's later JVPs run speculatively (forward_speculative.py)."""
    from yuebing.transform.forward_runtime import _SPECULATIVE

    v = np.linspace(-1.0, 0.5, 3)
    h = 1e-6
    slope = (_computes_with_underscores(X + h * v) - _computes_with_underscores(X - h * v)) / (2 * h)
    for _ in range(3):
        value, tangent = yb.jvp(_computes_with_underscores, (X.copy(),), (v,))
        assert value == _computes_with_underscores(X)
        assert tangent == pytest.approx(slope, rel=1e-7)
    entry = _SPECULATIVE.get(_computes_with_underscores.__code__)
    assert entry is not None and entry[1] is not None


@pytest.mark.parametrize("f", [locals_like_templates, globals_like_runtime, numbered_locals, closure_capturing],
                         ids=lambda f: f.__name__)
def test_dense_hessian(f):
    """``yb.hessian`` (batched forward-over-reverse) against differences of the gradient."""
    hessian = yb.hessian(f)(X.copy())
    h = 1e-5
    columns = [(yb.grad(f)(X + h * e) - yb.grad(f)(X - h * e)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(hessian, np.array(columns).T, rtol=1e-5, atol=1e-5)


def _starred(_x, *_args, _scale=2.0, **_kw):
    _t = _x * _scale
    print("", end="")
    for _a in _args:
        _t = _t * _a
    return np.sum(_t * _x) * _kw.get("_w", 1.0)


def test_star_and_keyword_only_parameters():
    """``*_args``, a keyword-only ``_scale`` and ``**_kw`` are bound by the user's names."""
    check_all_modes(lambda x: _starred(x, 1.5, 0.5, _scale=x[0], _w=3.0) + _starred(x), X.copy())


def _unbound(x):
    if x[0] > 5.0:
        _p = x
    return np.sum(_p * x)


@pytest.mark.parametrize("mode", ["grad", "jvp", "hessian"])
def test_an_unbound_variable_is_named_as_the_user_wrote_it(mode):
    call = {"grad": lambda: yb.grad(_unbound)(X.copy()),
            "jvp": lambda: yb.jvp(_unbound, (X.copy(),), (X.copy(),)),
            "hessian": lambda: yb.hessian(_unbound)(X.copy())}[mode]
    with pytest.raises(UnboundLocalError, match=r"local variable '_p'"):
        call()


# ---------------------------------------------------------------- private helpers keep the fast paths

def _affine(_x, _a, _b):
    return _x * _a + _b


def _calls_affine(x, a, b, n):
    for i in range(n):
        x = _affine(x, a, b)
    return x


def _rec(x, _n=3):
    return x if _n == 0 else x * _rec(x, _n=_n - 1)


class _Walker:
    def walk(self, x, _n=3):
        return x if _n == 0 else x * self.walk(x, _n=_n - 1)


def test_private_helpers_keep_the_fast_paths():
    """A module's ``_helper`` (renamed ``u_helper`` in the caller) and parameters named ``_n``
    still get the float loop's inlining and the direct recursive calls."""
    forward = yb.show(_calls_affine, 0.5, 0.9, 0.1, 3).split("def ")[1]
    assert "float loop" in forward and "_rrule" not in forward
    assert "_DIRECT" in yb.show(_rec, 0.7)
    assert "_DIRECT" in yb.show(_Walker.walk, _Walker(), 0.7)
    h = 1e-6
    for f, args in ((_calls_affine, (0.5, 0.9, 0.1, 3)), (_rec, (0.7,)), (lambda x: _Walker().walk(x), (0.7,))):
        slope = (f(args[0] + h, *args[1:]) - f(args[0] - h, *args[1:])) / (2 * h)
        assert yb.grad(f)(*args) == pytest.approx(slope, rel=1e-6)


def vectorized_closure(x):
    _a = x[0] * 2.0
    _g = np.vectorize(lambda _v: _np.sin(_v * _a) + _v * _FT)
    return np.sum(_g(x) * x)


def test_vectorized_closure_every_mode():
    check_all_modes(vectorized_closure, X.copy())


# ---------------------------------------------------------------- locals spelt as builtins


def locals_named_like_builtins(x, type="linear"):
    """The generated code calls type(), float(), len() by name: a local ``type`` or ``float``
    hid them ('str' object is not callable in every mode)."""
    float = 2.0
    len = x * float
    sum = 0.0
    for i in range(3):
        sum = sum + len[i] ** 2
    list = [sum, 1.0]
    return list[0] * (2.0 if type == "linear" else 1.0)


def builtin_named_cell(x):
    sum = 0.0

    def add(v):
        nonlocal sum
        sum = sum + v * v

    for i in range(3):
        add(x[i])
    max = lambda a: a * sum  # noqa: E731
    return max(2.0) + float(sum)


@pytest.mark.parametrize("f", [locals_named_like_builtins, builtin_named_cell], ids=lambda f: f.__name__)
def test_locals_named_like_builtins_in_every_mode(f):
    check_all_modes(f, np.array([0.3, -1.2, 0.7]))


def test_a_builtin_named_parameter_by_keyword():
    x, v = np.array([0.3, -1.2, 0.7]), np.array([1.0, 0.3, -0.4])
    f = locals_named_like_builtins
    slope = (f(x + 1e-6 * v, type="quad") - f(x - 1e-6 * v, type="quad")) / 2e-6
    np.testing.assert_allclose(yb.grad(f)(x.copy(), type="quad") @ v, slope, rtol=1e-6)


# ---------------------------------------------------------------- names spelt as the rewrites' own
# The rewrites of match, try/except*, async code and generators write names that begin with
# ``_yb_`` (``_yb_subject1``, ``_yb_pending1``, ``_yb_len``); a user's variable so named was the
# same variable (a match statement overwrote ``_yb_subject1``: a wrong value, silently).
_yb_scale = 3.0


def _yb_square(v):
    return v * v


def match_beside_its_subject_name(x):
    _yb_subject1 = x * 3.0
    match [x, 2.0]:
        case [a, b]:
            r = a * b
        case _:
            r = x
    return r * _yb_subject1


def match_beside_a_helper_name(x):
    _yb_len = x * 3.0  # (the rewritten match calls its helper _yb_len)
    match [x, 2.0]:
        case [a, b]:
            r = a * b
    return r * _yb_len


def except_star_beside_its_names(x):
    _yb_pending1, _yb_match1 = x * 3.0, x * 2.0
    try:
        raise ExceptionGroup("g", [ValueError(1)])
    except* ValueError:
        r = x * x
    return r * _yb_pending1 + _yb_match1


def reads_globals_spelt_as_helpers(x):
    match [x]:
        case [a]:
            r = a * _yb_scale
    return _yb_square(r)


async def _scaled(v, _yb_manager1):
    await asyncio.sleep(0)
    return v * _yb_manager1


def async_beside_its_names(x):
    _yb_comprehension1 = 2.0
    return asyncio.run(_scaled(x, x)) * _yb_comprehension1


def lazy_generator_beside_its_names(x):
    def numbers(v):
        _yb_frame = v * 2.0
        got = yield v
        yield _yb_frame * got
    it = numbers(x)
    return next(it) * it.send(x)


def match_with_parameter_spelt_as_helper(x, _yb_subject1=2.0):
    match x:
        case float():
            r = x * _yb_subject1
    return r


HELPER_SPELT = [match_beside_its_subject_name, match_beside_a_helper_name, except_star_beside_its_names,
                reads_globals_spelt_as_helpers, async_beside_its_names, lazy_generator_beside_its_names,
                match_with_parameter_spelt_as_helper,
                lambda x: match_with_parameter_spelt_as_helper(x, _yb_subject1=x)]


@pytest.mark.parametrize("f", HELPER_SPELT, ids=lambda f: f.__name__)
def test_names_spelt_as_the_rewrites_own_in_every_mode(f):
    check_all_modes(f, 0.7)


def _unbound_helper_spelt(x):
    match x:
        case 1.0:
            _yb_subject1 = 1.0
    return _yb_subject1 * x


def test_an_unbound_name_spelt_as_a_rewrites_is_named_as_the_user_wrote_it():
    with pytest.raises(UnboundLocalError, match=r"local variable '_yb_subject1'"):
        yb.grad(_unbound_helper_spelt)(0.7)
