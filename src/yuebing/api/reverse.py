"""The public surface of yuebing (DESIGN.md §1): ``grad``, ``value_and_grad``, ``vjp``,
``value_and_pullback``, ``prepare_gradient``, ``prepare_pullback`` and ``show``.

All of them run the reverse rule of ``f`` (registered, or derived from its source) on the
caller's own arguments: a function that mutates its arguments is differentiated as the map from
their state *before* the call, and the reverse pass restores them, so after a gradient call the
arguments are exactly as they were before it.
"""
from __future__ import annotations

import functools
import threading
import types
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from .. import rules as _rules  # noqa: F401 - registers every rule
from ..rules import outside_state
from ..rules.core import RRULES, CoDual
from ..tangents import (
    MutableTangent,
    NoFData,
    NoRData,
    NoTangent,
    Tangent,
    fdata,
    increment,
    join,
    rdata,
    register_nondifferentiable_type,
    set_to_zero,
    structural_copy,
    zero_tangent,
)
from ..tangents.arrays import array_root
from ..tangents.validate import validate_tangent
from ..ir import float_errors
from .common import (argument_gradient, check_argnums, check_function, fname, normalise_argnums, scalar_seed, split_aux,
                     user_facing)
from .pickling import portable
from .argument_checks import note_shared_write, require_float_leaf, separate_arguments
from ..transform import buffers as _buffers
from ..transform.runtime import call_rrule, derived_rule, unwind


def _check_differentiable(value: Any, index: int, name: str, tangent: Any = None) -> None:
    """Refuse argument ``index`` of ``argnums`` when it has no tangent type, or nothing in it can
    carry a derivative (an int, a dict of ints: its gradient would be empty)."""
    if type(value) is float or type(value) is np.ndarray and value.dtype.kind in "fc":
        return
    try:
        zero_tangent(value) if tangent is None else tangent
    except TypeError as error:
        raise TypeError(f"{name}: argument {index} cannot be differentiated: {error}") from None
    require_float_leaf(value, index, name)


def _simple_arrays(args: tuple) -> bool:
    """Every argument a float/complex ndarray or a Python float, no two sharing memory: the
    common case, whose tangents need no structural walk."""
    roots = set()
    for a in args:
        if type(a) is float:
            continue
        if type(a) is not np.ndarray or a.dtype.kind not in "fc":
            return False
        root = array_root(a)
        if id(root) in roots:
            return False
        roots.add(id(root))
    return True


def _zero_args(args: tuple) -> Any:
    if _simple_arrays(args):
        return tuple(0.0 if type(a) is float else np.zeros_like(a) for a in args)
    return zero_tangent(args)


def _fdata_of(t: Any) -> Any:
    if type(t) is np.ndarray:
        return t
    if type(t) is float:
        return NoFData
    return fdata(t)


def _separated(args: tuple, name: str) -> tuple[tuple, Any]:
    """The arguments to run on and their tangents (None: the usual ones). Arguments sharing float
    data are differentiated slot by slot (``argument_checks.separate_arguments``): each gets its
    own read-only view and its own tangent."""
    if _simple_arrays(args):
        return args, None
    separate = separate_arguments(args, name)
    if separate is None:
        return args, None
    return separate, tuple(zero_tangent(a) for a in separate)


def _run(f: Callable, args: tuple, kwargs: dict, with_function: bool = False, buffers: Any = None,
         name: str = "vjp"):
    """Forward pass of ``f`` on the caller's arguments (or, for arguments sharing float data,
    read-only views of them); returns what the pullback needs."""
    args, separate_tangents = _separated(args, name)
    if separate_tangents is not None:
        buffers = separate_tangents
    tangents = _zero_args(args) if buffers is None else buffers
    per_arg = list(tangents) if isinstance(tangents, tuple) else [NoTangent] * len(args)
    arg_fdata = [_fdata_of(t) for t in per_arg]
    f_tangent = zero_tangent(f) if with_function else NoTangent
    f_fdata = fdata(f_tangent)
    kw_coduals = {k: CoDual(v, fdata(zero_tangent(v))) for k, v in kwargs.items()}
    coduals = [CoDual(a, fd) for a, fd in zip(args, arg_fdata)]
    scope = outside_state.enter()  # one tangent per outside object for the pass
    try:
        out, pullback = call_rrule(CoDual(f, f_fdata), *coduals, **kw_coduals)
    except ValueError as error:
        if separate_tangents is not None:
            note_shared_write(error, name)
        raise
    finally:
        redo = outside_state.leave(scope, lambda: pullback(NoRData))  # (a refusal: the arguments put back first)
    if redo is not None:
        pullback = _redoing(pullback, redo, (*args, *kwargs.values()))
    return out, pullback, arg_fdata, f_fdata, tangents, args


def _redoing(pullback: Callable, redo: Callable, arguments: tuple) -> Callable:
    """``pullback``, then the outside state the forward pass reached given back what the forward
    pass left in it, as a plain call leaves it (``rules/outside_redo.py``); the arguments stay
    restored."""

    def run(*cotangent: Any) -> Any:
        result = pullback(*cotangent)
        redo(arguments)
        return result

    return run


def seed_output(out: CoDual, cotangent: Any) -> Any:
    """Add the output cotangent's fdata into the output's fdata; return its rdata."""
    if cotangent is NoTangent:
        return NoRData
    ct_f = fdata(cotangent)
    if ct_f is not NoFData:
        increment(join(out.fdata, rdata(zero_tangent(out.primal))), join(ct_f, rdata(zero_tangent(out.primal))))
    return rdata(cotangent)


class _OncePullback:
    """A pullback that may run once (it consumes the recorded tape and restores the inputs)."""

    def __init__(self, run: Callable) -> None:
        self._run = run
        self._unused = [True]  # list.pop is atomic: of two threads calling at once, one runs

    @user_facing
    def __call__(self, *cotangent: Any) -> Any:
        try:
            self._unused.pop()
        except IndexError:
            raise RuntimeError(
                "this yuebing pullback has already been called: its reverse pass consumed the tape "
                "and restored the inputs. Call yb.vjp again for another cotangent, or use yb.jacobian"
            ) from None
        return self._run(*cotangent)


@user_facing
def vjp(f: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """``(value, pullback)`` (``(value, pullback, aux)`` with ``has_aux``); ``pullback(ct)``
    returns one cotangent per primal. The pullback can be called once."""
    check_function(f, "vjp")
    out, pullback, arg_fdata, _, _, primals = _run(f, primals, {})
    value = out.primal
    aux = None
    if has_aux:
        value, aux = split_aux(value, "vjp")
    # The reverse pass undoes every mutation, including the ones that built the output: hand the
    # caller a copy, so running the pullback cannot change what they hold.
    returned_value, returned_aux = structural_copy((value, aux))

    def run(cotangent: Any) -> tuple:
        try:
            validate_tangent(value, cotangent)
        except TypeError as error:
            raise TypeError(f"vjp: the cotangent does not match the output of {fname(f)}: {error}") from None
        ct = (cotangent, zero_tangent(aux)) if has_aux else cotangent
        rs = pullback(seed_output(out, ct))
        return tuple(argument_gradient(fd, r, x) for fd, r, x in zip(arg_fdata, rs[1:], primals))

    result = (returned_value, _OncePullback(run))
    return result + (returned_aux,) if has_aux else result


@user_facing
def value_and_pullback(f: Callable, *primals: Any) -> tuple:
    """Low-level (Mooncake's ``value_and_pullback!!``): ``(value, pullback)`` where
    ``pullback(ct)`` returns ``(gradient of f's captured state, *gradients of the primals)``."""
    out, pullback, arg_fdata, f_fdata, _, _ = _run(f, primals, {}, with_function=True, name="value_and_pullback")

    def run(cotangent: Any) -> tuple:
        validate_tangent(out.primal, cotangent)
        rs = pullback(seed_output(out, cotangent))
        return (join(f_fdata, rs[0]),) + tuple(join(fd, r) for fd, r in zip(arg_fdata, rs[1:]))

    return structural_copy(out.primal), _OncePullback(run)


def _output_seed(full: Any, full_f: Any, has_aux: bool, f: Callable, name: str) -> tuple[Any, Any]:
    """``(value the caller gets, rdata to seed the reverse pass with)`` from the output of a
    forward pass and its fdata; the seed of a 0-d array output is added into its fdata instead.
    A TypeError (not a scalar, not a pair with ``has_aux``) leaves the forward pass to undo."""
    value, aux = split_aux(full, name) if has_aux else (full, None)
    kind = type(value)
    seed = 1.0 if kind is float or kind is np.float64 else scalar_seed(value, f, name)
    if aux is None and (kind is float or isinstance(value, np.floating)):
        pair = (value, None)
    else:
        pair = structural_copy((value, aux))  # the reverse pass will undo how they were built
    if type(seed) is np.ndarray:
        target = full_f[0] if has_aux else full_f
        target += seed
        seed = NoRData
    elif has_aux:
        seed = (seed, NoRData)
    return (pair if has_aux else pair[0]), seed


def _gradient_call(f: Callable, argnums: Any, has_aux: bool, name: str, args: tuple, kwargs: dict, buffers: Any = None):
    nums, single = normalise_argnums(argnums, len(args), name)
    if buffers is None:
        try:
            buffers = _zero_args(args)
        except TypeError:
            buffers = None  # reported per argument below
    for a in nums:
        _check_differentiable(args[a], a, name, buffers[a] if isinstance(buffers, tuple) else None)
    out, pullback, arg_fdata, _, tangents, args = _run(f, args, kwargs, buffers=buffers, name=name)
    try:
        result_value, seed = _output_seed(out.primal, out.fdata, has_aux, f, name)
    except Exception:
        pullback(NoRData)  # undo the forward pass's mutations before reporting
        raise
    rs = pullback(seed)
    grads = tuple(argument_gradient(arg_fdata[a], rs[1 + a], args[a]) for a in nums)
    del out, pullback
    if _buffers.lent():
        _buffers.sweep()  # the large temporaries of this call, for the next
    return result_value, grads[0] if single else grads, tangents


def _forward_arguments(args: tuple, buffers: tuple, defaults: tuple) -> list:
    """The generated forward pass's arguments after its function and fdata: each argument and its
    zero fdata (its buffer; ``NoFData`` for a float), then ``defaults`` for the remaining
    parameters (``_default_arguments``)."""
    flat: list = []
    for a, b in zip(args, buffers):
        flat += (a, b if type(b) is np.ndarray else NoFData)
    return flat + _default_arguments(defaults) if defaults else flat


def _default_arguments(defaults: tuple) -> list:
    """Default values and their fdata for the forward pass: each call its own fdata, as binding a
    default gives it."""
    flat: list = []
    for d in defaults:
        flat += (d, fdata(zero_tangent(d)))
    return flat


def _direct_gradient(rule: Any, f: Callable, flat: list, args: tuple, buffers: tuple, nums: tuple, single: bool,
                     has_aux: bool, name: str) -> tuple:
    """``(value, gradient)`` of plain function ``f`` on plain arguments (float/complex arrays and
    Python floats, no two sharing memory) whose zero fdata are ``buffers`` (0.0 for a float);
    ``flat`` is ``_forward_arguments`` of them: the generated passes of its derived rule run
    directly, with no dispatch, binding or tangent walks. The gradient of an array argument is
    its buffer."""
    tape: list = []
    scope = outside_state.enter()  # one tangent per outside object for the pass
    try:
        full, full_f = rule.forward(tape, f, NoFData, *flat)
    except Exception as error:
        rule._point_at_user_line(error, "forward")
        unwind(tape)
        raise
    finally:
        redo = outside_state.leave(scope, lambda: unwind(tape))
    try:
        if not has_aux and (type(full) is float or type(full) is np.float64):
            value, seed = full, 1.0  # the common case, without a call
        else:
            value, seed = _output_seed(full, full_f, has_aux, f, name)
    except Exception:
        rule.reverse(tape, NoRData)  # undo the forward pass's mutations before reporting
        raise
    try:
        param_r = rule.reverse(tape, seed)
    except Exception as error:
        rule._point_at_user_line(error, "reverse")
        raise
    if redo is not None:  # outside state as a plain call leaves it (rules/outside_redo.py)
        redo(args)
    del tape, full_f
    if single:
        gradient = _argument_gradient(buffers, param_r, args, nums[0])
    else:
        gradient = tuple([_argument_gradient(buffers, param_r, args, a) for a in nums])
    if _buffers.lent():
        _buffers.sweep()  # the large temporaries of this call, for the next
    return value, gradient


def _argument_gradient(buffers: tuple, param_r: tuple, args: tuple, a: int) -> Any:
    """Argument ``a``'s gradient: an array argument's is its buffer (``argument_gradient``'s
    common case, without its calls)."""
    b, r = buffers[a], param_r[a]
    return b if r is NoRData and type(b) is np.ndarray else argument_gradient(_fdata_of(b), r, args[a])


def value_and_grad(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False) -> "ValueAndGrad":
    """``g(*args, **kwargs) -> (value, gradient)``; ``((value, aux), gradient)`` with ``has_aux``.

    The gradient has the structure of the argument (a tuple of them for a tuple ``argnums``).
    Keyword arguments are passed to ``f`` and never differentiated. The function returned pickles
    as ``f``, ``argnums`` and ``has_aux`` (docs/scale-out.md).
    """
    return ValueAndGrad(f, argnums, has_aux)


def grad(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False) -> "Grad":
    """``g(*args, **kwargs) -> gradient`` (``(gradient, aux)`` with ``has_aux``), as JAX's grad.
    The function returned pickles as ``f``, ``argnums`` and ``has_aux`` (docs/scale-out.md)."""
    return Grad(f, argnums, has_aux)


class _GradientFunction:
    """What ``grad``/``value_and_grad`` return: a callable holding ``f``, ``argnums`` and
    ``has_aux`` and the plain calls' caches (``_PlainCalls``). It pickles as those three (the
    caches, and the rule generated from ``f``, are rebuilt on the first call after loading), has
    ``f``'s name and docstring (``functools.update_wrapper``), and binds as a method when it is a
    class attribute, as a function would."""

    _name = "grad"
    _with_value = False

    def __init__(self, f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False) -> None:
        check_function(f, self._name)
        check_argnums(argnums, self._name)
        self._calls = _PlainCalls(f, argnums, has_aux, self._name)
        self._has_aux = has_aux
        functools.update_wrapper(self, f, updated=())  # f's __dict__ is not ours: nothing copied
        # forward mode over this function is forward-over-reverse (transform/second_order.py)
        self.__yuebing_gradient__ = GradientSpec(f, argnums, has_aux, self._with_value)

    def __reduce__(self) -> tuple:
        spec = self.__yuebing_gradient__
        return type(self), (portable(spec.f), spec.argnums, spec.has_aux)

    def __repr__(self) -> str:
        spec = self.__yuebing_gradient__
        aux = ", has_aux=True" if spec.has_aux else ""
        return f"yb.{self._name}({fname(spec.f)}, argnums={spec.argnums!r}{aux})"

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else types.MethodType(self, obj)


class Grad(_GradientFunction):
    """``yb.grad(f, argnums, has_aux)``: ``(*args, **kwargs) -> gradient``."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # the caller's np.errstate raise: for the primal only (ir/float_errors.py)
        errors = None if float_errors.current_state() is float_errors.DEFAULT else float_errors.adopt()
        try:
            value, gradient = self._calls(args, kwargs)
        except Exception as error:
            _reraise(error)
        finally:
            if errors is not None:
                float_errors.restore(errors)
        return (gradient, value[1]) if self._has_aux else gradient


class ValueAndGrad(_GradientFunction):
    """``yb.value_and_grad(f, argnums, has_aux)``: ``(*args, **kwargs) -> (value, gradient)``."""

    _name = "value_and_grad"
    _with_value = True

    def __call__(self, *args: Any, **kwargs: Any) -> tuple:
        # the caller's np.errstate raise: for the primal only (ir/float_errors.py)
        errors = None if float_errors.current_state() is float_errors.DEFAULT else float_errors.adopt()
        try:
            return self._calls(args, kwargs)
        except Exception as error:
            _reraise(error)
        finally:
            if errors is not None:
                float_errors.restore(errors)


@user_facing
def _reraise(error: Exception) -> None:
    """Raise ``error`` as every entry point does (``user_facing``: yuebing's frames hidden). The
    gradient functions' calls catch and pass it here rather than being wrapped themselves: a
    wrapper's frame costs every call, this only the failing ones."""
    raise error


register_nondifferentiable_type(_GradientFunction)  # constants of a differentiation, as functions are


class _DirectRule:
    """The derived rule of plain function ``f``, for running its generated passes directly,
    while that is what a call of ``f`` dispatches to: ``f``'s code is the code the rule was made
    from (a new ``__code__`` gets a new rule), no rule is registered for ``f`` (checked every
    call: one may be registered at any time), ``f`` is not itself made by ``yb.grad``, and it
    has no ``*args``, ``**kwargs`` or keyword-only parameters."""

    __slots__ = ("f", "_resolved")

    def __init__(self, f: types.FunctionType) -> None:
        self.f = f
        self._resolved: tuple = (None, None)  # (code object, its rule or None); one attribute,
        # so a thread never reads one's code with the other's rule

    def get(self, n_args: int) -> tuple | None:
        """``(rule, the defaults a call with n_args positional arguments leaves out)``, or None
        when such a call cannot run the rule directly."""
        f = self.f
        code, rule = self._resolved
        if code is not f.__code__:
            rule = self._resolve()
        if rule is None or f in RRULES.by_function:
            return None
        missing = rule.n_params - n_args
        if missing == 0:
            return rule, ()
        defaults = f.__defaults__  # read every call: it may be replaced
        if missing < 0 or defaults is None or len(defaults) < missing:
            return None
        return rule, defaults[len(defaults) - missing:]

    def _resolve(self) -> Any:
        f = self.f
        code = f.__code__
        rule = None
        if not hasattr(f, "__yuebing_gradient__"):
            try:
                rule = derived_rule(f)
            except Exception:
                rule = None  # the general path reports it, with its context
        self._resolved = (code, rule if rule is not None and rule.simple else None)
        return self._resolved[1]


_FLOAT64 = np.dtype(np.float64)


def _fresh_fdata(args: tuple) -> tuple[tuple, list] | None:
    """New zero fdata for plain arguments -- float/complex ndarrays (an array each) and Python
    floats (0.0), no two arrays sharing memory -- and the forward pass's arguments for them
    (``_forward_arguments``, without defaults), or None for any other arguments. New on every
    call: they become the returned gradients, which the caller may keep. Large ones come from
    the buffer pool, which takes back the ones the caller dropped."""
    if len(args) == 1:  # the common case of one small float64 array, without the loop
        a = args[0]
        if type(a) is np.ndarray and a.dtype is _FLOAT64 and a.size < _buffers.MIN_SIZE \
                and (a.ndim == 1 or a.flags.c_contiguous):
            zero = np.zeros(a.shape, _FLOAT64)
            return (zero,), [a, zero]
    fdata: list = []
    flat: list = []
    first = None  # the first array argument
    roots: list | None = None  # of the arrays so far (ids), once there are two: arguments
    # sharing memory are not plain (one array alone shares with nothing: no lookups for it)
    for a in args:
        kind = type(a)
        if kind is float:
            fdata.append(0.0)
            flat += (a, NoFData)
            continue
        if kind is not np.ndarray:
            return None
        dtype = a.dtype
        if dtype is not _FLOAT64 and dtype.kind not in "fc":
            return None
        if first is None:
            first = a
        else:
            if roots is None:
                roots = [id(first) if first.base is None else id(array_root(first))]
            root = id(a) if a.base is None else id(array_root(a))
            if root in roots:
                return None
            roots.append(root)
        if a.size >= _buffers.MIN_SIZE:
            zero = _buffers.zeros_like(a)
        elif a.ndim == 1 or a.flags.c_contiguous:  # (a vector's zeros are C-ordered whatever its strides)
            zero = np.zeros(a.shape, dtype)  # (calloc: less time than np.empty_like and a fill)
        else:
            zero = np.empty_like(a)  # in the argument's memory order, as np.zeros_like would
            zero.fill(0)
        fdata.append(zero)
        flat += (a, zero)
    return tuple(fdata), flat


class _PlainCalls:
    """The calls of one function made by ``grad``/``value_and_grad``: ``(value, gradient)``.

    A call with plain arguments (float/complex arrays and floats, no two sharing memory), no
    keywords, of a plain function whose derived rule is simple runs that rule's generated
    passes directly, as ``PreparedGradient``'s hot path does, but on new fdata each call (the
    gradients returned are the caller's). What the direct path needs is cached here: the rule
    (per code object of ``f``) and the normalised ``argnums`` (per number of arguments: one
    entry, replaced when a call leaves out another number of defaults). Every other call --
    keywords, containers, aliasing arguments, ints, callable objects -- takes the general path. Nothing
    here is written during a call but those two caches, each replaced whole, so threads can
    share it."""

    __slots__ = ("f", "argnums", "has_aux", "name", "_rule", "_argnums")

    def __init__(self, f: Callable, argnums: Any, has_aux: bool, name: str) -> None:
        self.f, self.argnums, self.has_aux, self.name = f, argnums, has_aux, name
        self._rule = _DirectRule(f) if type(f) is types.FunctionType else None
        self._argnums: tuple = (-1, (), False)  # (number of arguments, nums, single)

    def __call__(self, args: tuple, kwargs: dict) -> tuple:
        if not kwargs and self._rule is not None:
            direct = self._rule.get(len(args))
            if direct is not None:
                rule, defaults = direct
                fresh = _fresh_fdata(args)
                if fresh is not None:
                    buffers, flat = fresh
                    n, nums, single = self._argnums
                    if n != len(args):
                        nums, single = normalise_argnums(self.argnums, len(args), self.name)
                        self._argnums = (len(args), nums, single)
                    if defaults:
                        flat += _default_arguments(defaults)
                    return _direct_gradient(rule, self.f, flat, args, buffers, nums, single, self.has_aux, self.name)
        value, gradient, _ = _gradient_call(self.f, self.argnums, self.has_aux, self.name, args, kwargs)
        return value, gradient


class GradientSpec(NamedTuple):
    """What a function made by ``grad``/``value_and_grad`` computes (forward mode reads it)."""

    f: Callable
    argnums: Any
    has_aux: bool
    with_value: bool


def _fill_zero(buffer: np.ndarray) -> np.ndarray:
    buffer.fill(0)
    return buffer


class _CallState:
    """One thread's buffers of a ``PreparedGradient``: the tangents of its last call and the
    arguments they were made for. Per thread, so calls from several threads never zero or
    accumulate into each other's buffers (and a returned gradient is overwritten only by the
    same thread's next call)."""

    __slots__ = ("buffers", "last_args", "last_simple", "flat")

    def __init__(self) -> None:
        self.buffers: Any = None
        self.last_args: tuple = ()
        self.last_simple: bool | None = None  # whether last_args are plain arrays and floats
        self.flat: list | None = None  # the direct path's forward arguments (_forward_arguments) for them


class PreparedGradient:
    """``(*args) -> (value, gradient)`` compiled once, with tangent buffers owned here and reused:
    the gradient returned by one call is overwritten by the next call from the same thread.
    Safe to call from several threads at once (each thread has its own buffers)."""

    def __init__(self, f: Callable, example_args: tuple, argnums: Any, has_aux: bool) -> None:
        if isinstance(f, types.FunctionType):
            derived_rule(f)  # compile now: errors are reported here
        self._setup(f, len(example_args), argnums, has_aux)

    def _setup(self, f: Callable, n_args: int, argnums: Any, has_aux: bool) -> None:
        self.f, self.argnums, self.has_aux, self._n_args = f, argnums, has_aux, n_args
        # each thread's _CallState: one plain threading.local attribute read per call (about
        # 70 ns; a threading.local subclass holding the fields costs that per field read)
        self._per_thread = threading.local()
        self._rule = _DirectRule(f) if isinstance(f, types.FunctionType) else None
        self._nums, self._single = normalise_argnums(argnums, n_args, "prepare_gradient")
        functools.update_wrapper(self, f, updated=())

    def __reduce__(self) -> tuple:
        """Pickled as ``f`` (by reference), the number of arguments, ``argnums`` and ``has_aux``:
        never the buffers or the generated code, which the first call after loading rebuilds."""
        return _restore_prepared_gradient, (portable(self.f), self._n_args, self.argnums, self.has_aux)

    def __repr__(self) -> str:
        aux = ", has_aux=True" if self.has_aux else ""
        n = self._n_args
        return f"yb.prepare_gradient({fname(self.f)}, <{n} argument{'s' if n != 1 else ''}>, argnums={self.argnums!r}{aux})"

    def _reusable(self, state: _CallState, args: tuple) -> bool:
        """Can the buffers of this thread's last call serve this one (same objects, same structure)?"""
        if self._same_plain_arguments(state, args):
            return True
        if state.buffers is None or len(args) != len(state.last_args) or state.last_simple \
                or any(a is not b for a, b in zip(args, state.last_args)):
            return False  # other objects, or plain arrays whose shape changed
        try:
            validate_tangent(args, state.buffers)  # same structure as last time?
        except TypeError:
            return False
        return True

    @staticmethod
    def _same_plain_arguments(state: _CallState, args: tuple) -> bool:
        """The hot path's check: the same plain arrays and floats as last time, the same shapes.
        The same objects have the same dtypes and share memory as they did (a shape can change
        in place, so that is checked)."""
        last, buffers = state.last_args, state.buffers
        if buffers is None or len(args) != len(last):
            return False
        for a, b in zip(args, last):
            if a is not b:
                return False
        if state.last_simple is None:
            state.last_simple = _simple_arrays(args)
        if not state.last_simple:
            return False
        for a, b in zip(args, buffers):
            if type(a) is not float and b.shape != a.shape:
                return False
        return True

    def _fast_call(self, state: _CallState, args: tuple) -> tuple | None:
        """The hot path: the same plain arrays/floats as last time, a plain function, no
        keywords. Runs the generated passes directly (no dispatch, binding or tangent walks)."""
        direct = self._rule.get(len(args)) if self._rule is not None else None
        if direct is None:
            return None
        buffers = state.buffers
        if state.last_simple:  # _same_plain_arguments inline (a microsecond of a small case's few)
            if len(args) != len(buffers):
                return None
            for a, last, b in zip(args, state.last_args, buffers):
                if a is not last or type(b) is np.ndarray and b.shape != a.shape:
                    return None
        elif not self._same_plain_arguments(state, args):
            return None
        rule, defaults = direct
        for b in buffers:
            if type(b) is np.ndarray:
                b.fill(0)
        flat = state.flat
        if flat is None or defaults:  # the same arguments and buffers give the same list
            flat = _forward_arguments(args, buffers, defaults)
            state.flat = None if defaults else flat
        return _direct_gradient(rule, self.f, flat, args, buffers, self._nums, self._single, self.has_aux,
                                "prepare_gradient")

    def __call__(self, *args: Any, **kwargs: Any) -> tuple:
        try:
            state = self._per_thread.state
        except AttributeError:  # this thread's first call
            state = self._per_thread.state = _CallState()
        # the caller's np.errstate raise: for the primal only (ir/float_errors.py)
        errors = None if float_errors.current_state() is float_errors.DEFAULT else float_errors.adopt()
        try:
            if not kwargs:
                fast = self._fast_call(state, args)
                if fast is not None:
                    return fast
            return self._general_call(state, args, kwargs)
        except Exception as error:
            _reraise(error)  # (user_facing's work without a wrapper's frame on every call)
        finally:
            if errors is not None:
                float_errors.restore(errors)

    def _general_call(self, state: _CallState, args: tuple, kwargs: dict) -> tuple:
        """A call the hot path does not take: other arguments, keywords, containers."""
        buffers = None
        if self._reusable(state, args):
            if _simple_arrays(args):
                buffers = tuple(0.0 if type(b) is float else _fill_zero(b) for b in state.buffers)
            else:
                buffers = set_to_zero(state.buffers)
        value, gradient, tangents = _gradient_call(self.f, self.argnums, self.has_aux, "prepare_gradient", args, kwargs, buffers)
        state.buffers, state.last_args, state.last_simple, state.flat = tangents, args, None, None
        return value, gradient


def prepare_gradient(f: Callable, *example_args: Any, argnums: int | Sequence[int] = 0, has_aux: bool = False) -> PreparedGradient:
    """Compile the gradient of ``f`` for arguments like ``example_args`` (see ``PreparedGradient``)."""
    return PreparedGradient(f, example_args, argnums, has_aux)


def _restore_prepared_gradient(f: Callable, n_args: int, argnums: Any, has_aux: bool) -> PreparedGradient:
    """A ``PreparedGradient`` loaded by pickle: compiled on its first call, not here."""
    prepared = PreparedGradient.__new__(PreparedGradient)
    prepared._setup(f, n_args, argnums, has_aux)
    return prepared


class PreparedPullback:
    """``yb.prepare_pullback(f, ...)``: ``(*args) -> (value, pullback)``, ``vjp`` with the
    derivation cached. Pickles as ``f``; the rule is derived again on the first call after loading."""

    def __init__(self, f: Callable) -> None:
        self.f = f
        functools.update_wrapper(self, f, updated=())

    def __call__(self, *args: Any) -> tuple:
        return vjp(self.f, *args)

    def __reduce__(self) -> tuple:
        return PreparedPullback, (portable(self.f),)

    def __repr__(self) -> str:
        return f"yb.prepare_pullback({fname(self.f)})"


def prepare_pullback(f: Callable, *example_args: Any) -> PreparedPullback:
    """``(*args) -> (value, pullback)``, compiled once (``vjp`` with the derivation cached)."""
    if isinstance(f, types.FunctionType):
        derived_rule(f)
    return PreparedPullback(f)




__all__ = [
    "Grad", "MutableTangent", "NoTangent", "PreparedGradient", "PreparedPullback", "Tangent", "ValueAndGrad", "grad",
    "prepare_gradient",
    "prepare_pullback", "register_nondifferentiable_type", "value_and_grad",
    "value_and_pullback", "vjp",
]
