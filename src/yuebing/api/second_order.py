"""Second order's public surface (DESIGN.md §7): ``hvp``, ``hessian``, ``prepare_hvp`` and
``prepare_hessian``, all by forward-over-reverse (``transform/second_order.py``).

One run of the dual reverse program gives the value, the gradient and one Hessian-vector product;
a Hessian's columns come from batched runs carrying many directions each (``api/batched_hessian.py``). Everything runs on copies of the caller's
arguments, which are never modified (``yb.hvp`` of a function that provably writes into no array
reads them as they are: ``transform/argument_writes.py``).
"""
from __future__ import annotations

import functools
import threading
import types
from typing import Any, Callable, Sequence

import numpy as np

from .. import rules as _rules  # noqa: F401 - registers every rule
from .. import tangents as T
from ..tangents.layout import match_layouts
from ..tangents.set_keys import originals_of, rekeyed
from ..ir import float_errors
from .common import argument_gradient, check_argnums, check_function, fname, normalise_argnums, reraise_hidden, scalar_seed, user_facing
from .pickling import loaded, portable
from .scale import check_scale_options, run_chunks
from .batched_hessian import MAX_BATCH, batched_columns
from .complex_hessian import holomorphic_hessian, refuse_complex_arguments
from .plain_arguments import plain_duals
from .direct_hvp import copies_needed, detached_value, direct_hvp, direct_passes, plain_function, sweep
from .argument_checks import note_shared_write, require_float_leaf, separate_arguments, shared_view_tangents
from ..rules import second_order as _second_order  # noqa: F401 - registers second-order rules
from ..rules import outside_state
from ..tangents import NoFData, NoRData, NoTangent
from ..tangents.arrays import array_root
from ..tangents.validate import validate_tangent
from ..transform.second_order import call_rrule2, dual_rule


def _zero_fdata_of(xs: tuple) -> tuple:
    """Zero fdata of each argument; arguments sharing arrays share their fdata."""
    fd = T.fdata(T.zero_tangent(xs))
    return (NoFData,) * len(xs) if fd is NoFData else tuple(fd)


def separated_arguments(xs: tuple, name: str) -> tuple[tuple, Callable]:
    """``(arguments, fdata_of)`` for a forward-over-reverse pass over ``xs``: arguments sharing
    float data become read-only views, and ``fdata_of`` gives each its own zero fdata
    (docs/conventions.md, "Arguments"); otherwise ``xs`` and fdata with their aliasing."""
    separate = separate_arguments(xs, name)
    if separate is None:
        return xs, _zero_fdata_of
    return separate, _fdata_per_argument


def _fdata_per_argument(xs: tuple) -> tuple:
    """Zero fdata of each argument on its own (arguments differentiated slot by slot)."""
    return tuple(T.fdata(T.zero_tangent(x)) for x in xs)


def _check_scalar(value: Any, f: Callable, name: str) -> None:
    if type(value) is float or isinstance(value, np.floating) or isinstance(value, np.ndarray) and value.shape == () \
            and value.dtype.kind == "f":
        return
    shape = f" of shape {np.shape(value)}" if isinstance(value, np.ndarray) else ""
    raise TypeError(
        f"{name}: {fname(f)} must return a real scalar (a float or 0-d float array), got a "
        f"{type(value).__qualname__}{shape}. Sum or index the output first, or use yb.jacobian for "
        "vector outputs"
    )


def _pull_unit(out: tuple, pullback: Callable, f: Callable, name: str) -> tuple:
    """Check the output is a real scalar and run the dual pullback with cotangent 1 and tangent 0:
    as in first order (``api.scalar_seed``), a float's cotangent is its rdata and a 0-d array's
    goes into its fdata."""
    _check_scalar(out[0], f, name)
    seed = scalar_seed(out[0], f, name)
    if isinstance(seed, np.ndarray):
        output_fdata = out[1]
        if isinstance(output_fdata, np.ndarray):
            output_fdata += seed
        return pullback(NoRData, NoRData)
    return pullback(seed, 0.0)


def _value_grad_hvp(f: Callable, args: tuple, directions: tuple, name: str) -> tuple[Any, tuple, tuple]:
    """``(value, gradients, hvps)`` of ``f`` at copies of ``args`` (not copied when ``f``
    writes into no array) along ``directions`` (one tangent per argument, ``NoTangent`` for
    arguments held fixed)."""
    passes = direct_passes(f, len(args))  # a plain function already run: no dispatch (api/direct_hvp.py)
    # float64 arrays, floats (api/plain_arguments.py), not copied for a function writing no array
    duals, separate, originals = plain_duals(args, directions, copies_needed(passes, f, args)), False, {}
    if duals is not None:
        if passes is not None:
            return direct_hvp(passes, f, duals, _pull_unit, name)
    else:
        duals, separate, originals = _duals(args, directions, name)
    scope = outside_state.enter()  # one tangent per outside object for the pass
    try:
        out, pullback = call_rrule2((f, NoFData, NoTangent, NoFData), *duals)
    except ValueError as error:
        if separate:
            note_shared_write(error, name)
        raise
    finally:
        redo = outside_state.leave(scope, lambda: pullback(NoRData, NoRData))  # (a refusal: the arguments put back first)
    value = detached_value(out[0])
    rs, rsd = _pull_unit(out, pullback, f, name)
    if redo is not None:  # outside state as a plain call leaves it (rules/outside_redo.py)
        redo(tuple(d[0] for d in duals))
    grads = rekeyed(tuple(_join(d[1], r, d[0]) for d, r in zip(duals, rs[1:])), originals)
    hvps = rekeyed(tuple(_join(d[3], r, d[0]) for d, r in zip(duals, rsd[1:])), originals)
    del out, pullback
    sweep()  # the pass's large temporaries back to the buffer pool
    return value, grads, hvps


def _duals(args: tuple, directions: tuple, name: str) -> tuple[list, bool, dict]:
    """The pass's argument 4-tuples ``(copy, fdata, direction, fdata tangent)`` for any
    arguments, whether they are separated (arguments sharing float data), and the copied set
    elements' originals (``set_keys.rekeyed`` keys the derivatives by them)."""
    directions = shared_view_tangents(args, directions, name)
    for i, (x, v) in enumerate(zip(args, directions)):
        if isinstance(x, str) and v is not NoTangent:  # (a str held fixed is any other constant)
            raise TypeError(f"{name}: argument {i} is a str; only numbers, arrays and structures of them "
                            f"can be differentiated: give yb.NoTangent as its direction to hold it fixed")
        if v is not NoTangent:
            try:
                validate_tangent(x, v)
            except TypeError as error:
                raise TypeError(f"{name}: the direction for argument {i} does not match it "
                                f"(a {type(x).__qualname__}): {error}") from None
    element_copies: dict = {}
    xs = T.structural_copy(tuple(args), element_copies)
    # arguments sharing float data (one array passed twice) are differentiated slot by slot, each
    # a read-only view with its own fdata (docs/conventions.md, "Arguments"); otherwise arguments
    # that share an array inside containers share its fdata
    xs, fdata_of = separated_arguments(xs, name)
    separate = fdata_of is _fdata_per_argument
    full = tuple(_zero_direction(x) if v is NoTangent else v for x, v in zip(args, directions))
    vs = T.scale(full, 1.0)
    if vs is NoTangent:  # no argument carries a derivative (ints): each gets NoTangent back
        vs = (NoTangent,) * len(xs)
    vs = match_layouts(xs, vs)  # a write through a view of x reaches its tangent too (tangents/layout.py)
    vs = rekeyed(vs, element_copies)  # a set's tangent keyed by the copy's elements
    return list(zip(xs, fdata_of(xs), vs, fdata_of(xs))), separate, originals_of(element_copies)


def _zero_direction(x: Any) -> Any:
    return T.zero_tangent(x)


def _join(f: Any, r: Any, x: Any) -> Any:
    """The full tangent of argument ``x`` from its fdata and rdata."""
    return argument_gradient(f, r, x)


@user_facing
def hvp(f: Callable, primals: Sequence[Any], tangents: Sequence[Any]) -> tuple:
    """Hessian-vector product by forward-over-reverse: ``(value, gradient, hvp)``.

    ``primals`` and ``tangents`` are tuples with one entry per positional argument of ``f``
    (which must return a real scalar); ``gradient`` and ``hvp`` are tuples with one entry per
    argument: the gradient, and the Hessian applied to ``tangents``, each with its argument's
    structure. ``NoTangent`` in ``tangents`` holds an argument fixed.
    """
    if not plain_function(f):  # (a plain def is callable and, by its code's flags, not async)
        check_function(f, "hvp")
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("hvp: primals and tangents must be tuples of positional arguments; for one "
                        "argument write hvp(f, (x,), (v,))")
    if len(primals) != len(tangents):
        raise TypeError(f"hvp: got {len(primals)} primals but {len(tangents)} tangents; give one per argument")
    return _value_grad_hvp(f, tuple(primals), tuple(tangents), "hvp")


def hessian(f: Callable, argnums: int | Sequence[int] = 0, *, holomorphic: bool = False, executor: Any = None,
            chunk_size: int | None = None, progress: bool | None = None) -> "Hessian":
    """The function computing the Hessian of scalar ``f`` with respect to ``argnums``.

    For float and float-array arguments, like JAX: with one argnum the Hessian has shape
    ``x.shape + x.shape``; with a tuple of argnums it is a nested tuple of blocks
    ``H[i][j]`` of shape ``x_i.shape + x_j.shape``. ``holomorphic=True``: complex arguments and a
    complex scalar output give the complex Hessian ``f''(z)``, as ``jax.hessian(f, holomorphic=True)``
    (``api/complex_hessian.py``: the caller promises ``f`` is holomorphic).

    The columns come from *batched* forward-over-reverse (``transform/batched_second_order.py``):
    one pass runs the function and its gradient once and carries ``chunk_size`` basis directions
    in every tangent (a leading batch axis), giving that many columns: 10-35x faster than one
    pass per column on elementwise and matmul code. The default is all ``n`` columns in one pass,
    up to 64 per pass, as for ``jacobian(mode="fwd")``; ``chunk_size=1`` is one ``yb.hvp`` per
    column. Calls without a batched rule run once per direction inside the pass; a pass that
    meets a call it cannot carry (a solver's, a quadrature's, an ODE's or interop second order,
    a tangent it cannot slice) is dropped and its columns computed one pass each, so the Hessian
    is the same for every ``chunk_size`` (a batched and a per-column pass may differ in the last
    bit of rounding). Scalar code (a loop over elements, a chain of math calls on floats) is
    faster one pass per column, whose inline float code the batched tangents would bypass: a pass
    is dropped after 32 calls on numbers. Once a function's pass was dropped, its next Hessians
    on arguments of the same shapes run one pass per column from the start. A dropped pass puts
    back the outside state it changed (a global, a module's list, a closure's variable, an outside
    object's attributes) before the columns are computed (``api/outside_snapshot.py``); an outside
    object it could not put back drops the pass at its first read. ``chunk_size`` must be a
    positive int or None.

    Scale-out (docs/scale-out.md): with ``executor`` (any ``concurrent.futures.Executor``) the
    columns are computed there, ``chunk_size`` per task (default about ``n / (4 * workers)``, each
    task's columns batched, up to 64 per pass); the Hessian is the same as without one. ``progress``: a tqdm bar on a terminal once the work
    has run 2 s (``None``), always (``True``) or never (``False``).
    """
    check_scale_options(executor, chunk_size, progress, "hessian")
    return Hessian(f, argnums, executor, chunk_size, progress, holomorphic)


class Hessian:
    """What ``yb.hessian`` returns. Pickles as ``f`` (by reference) and its options, without the
    executor (a pool belongs to the process that made it: loaded elsewhere, it runs in process)."""

    def __init__(self, f: Callable, argnums: Any = 0, executor: Any = None, chunk_size: int | None = None,
                 progress: bool | None = None, holomorphic: bool = False) -> None:
        check_function(f, "hessian")
        check_argnums(argnums, "hessian")
        self.f, self.argnums, self.holomorphic = f, argnums, holomorphic
        self.executor, self.chunk_size, self.progress = executor, chunk_size, progress
        functools.update_wrapper(self, f, updated=())
        self.__name__ = f"hessian({fname(f)})"

    @user_facing
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        nums, single = normalise_argnums(self.argnums, len(args), "hessian")
        # keyword arguments are held fixed, as yb.grad's are
        f = functools.partial(self.f, **kwargs) if kwargs else self.f
        if self.holomorphic:
            return holomorphic_hessian(functools.partial(_hessian, scale=_scale(self)), f, args, nums, single)
        refuse_complex_arguments(args, nums)
        return _hessian(f, args, nums, single, scale=_scale(self))

    def __reduce__(self) -> tuple:
        return Hessian, (portable(self.f), self.argnums, None, self.chunk_size, self.progress, self.holomorphic)

    def __repr__(self) -> str:
        holomorphic = ", holomorphic=True" if self.holomorphic else ""
        return f"yb.hessian({fname(self.f)}, argnums={self.argnums!r}{holomorphic})"

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else types.MethodType(self, obj)


def _scale(owner: Any) -> dict:
    return {"executor": owner.executor, "chunk_size": owner.chunk_size, "progress": owner.progress,
            "name": f"hessian({fname(owner.f)})"}


class PreparedHvp:
    """``yb.prepare_hvp(f, *example_args)``: Hessian-vector products of ``f`` at arguments shaped
    like the examples. The dual reverse program is compiled once. Float64 arrays and floats take
    ``yb.hvp``'s direct path (``api/direct_hvp.py``); on the general path the fdata buffers of
    float-array arguments are allocated once per thread and zeroed on each call (so several
    threads can call one prepared object at once)."""

    def __init__(self, f: Callable, example_args: tuple) -> None:
        shapes = [_signature_of(x) for x in example_args]
        self._setup(f, shapes, [np.shape(x) if _has_buffers(x) else None for x in example_args])
        if hasattr(f, "__code__"):
            dual_rule(f)  # compile now: the first call is not slower than the others

    def _setup(self, f: Callable, shapes: list, buffer_shapes: list) -> None:
        self.f = f
        self.shapes = shapes
        self._buffer_shapes = buffer_shapes
        self._per_thread = threading.local()  # each thread's buffers: calls from threads never share them
        functools.update_wrapper(self, f, updated=())

    def __reduce__(self) -> tuple:
        """Pickled as ``f`` (by reference) and the prepared shapes: never the buffers or the
        generated code, which the first call after loading rebuilds."""
        return _restore_prepared_hvp, (portable(self.f), self.shapes, self._buffer_shapes)

    def __repr__(self) -> str:
        n = len(self.shapes)
        return f"yb.prepare_hvp({fname(self.f)}, <{n} argument{'s' if n != 1 else ''}>)"

    def __call__(self, primals: Sequence[Any], tangents: Sequence[Any]) -> tuple:
        # the caller's np.errstate raise: for the primal only (ir/float_errors.py)
        errors = None if float_errors.current_state() is float_errors.DEFAULT else float_errors.adopt()
        try:
            return self._call(tuple(primals), tuple(tangents))
        except Exception as error:
            reraise_hidden(error)
        finally:
            if errors is not None:
                float_errors.restore(errors)

    def _call(self, primals: tuple, tangents: tuple) -> tuple:
        if len(primals) != len(self.shapes) or len(tangents) != len(primals):
            raise TypeError(f"prepare_hvp: prepared for {len(self.shapes)} arguments, got {len(primals)} "
                            f"primals and {len(tangents)} tangents")
        # float64 arrays and floats, a function whose passes run without dispatch: yb.hvp's direct
        # path (fresh arrays from calloc cost less than zeroing kept buffers and copying out of them)
        passes = direct_passes(self.f, len(primals))
        duals = plain_duals(primals, tangents, copies_needed(passes, self.f, primals))
        if passes is not None and duals is not None:
            return direct_hvp(passes, self.f, duals, _pull_unit, "hvp")
        if [_signature_of(x) for x in primals] != self.shapes or any(
                t is not NoTangent and _signature_of(t) != _signature_of(x) for x, t in zip(primals, tangents)):
            return _value_grad_hvp(self.f, primals, tangents, "hvp")  # not what was prepared for
        if len({id(array_root(x)) if isinstance(x, np.ndarray) else id(x) for x in primals}) < len(primals):
            return _value_grad_hvp(self.f, primals, tangents, "hvp")  # shared arguments: slot by slot
        duals = []
        for x, v, buffers in zip(primals, tangents, self._buffers()):
            if buffers is None:
                return _value_grad_hvp(self.f, primals, tangents, "hvp")
            fd, fdt = buffers
            fd.fill(0)
            fdt.fill(0)
            direction = np.zeros_like(x) if v is NoTangent else np.array(v, dtype=float)
            duals.append((x.copy(), fd, direction, fdt))
        passes = direct_passes(self.f, len(duals))  # no dispatch once it ran (api/direct_hvp.py)
        if passes is not None:
            return direct_hvp(passes, self.f, duals, _pull_unit, "hvp", fresh=True)
        scope = outside_state.enter()
        try:
            out, pullback = call_rrule2((self.f, NoFData, NoTangent, NoFData), *duals)
        finally:
            redo = outside_state.leave(scope, lambda: pullback(NoRData, NoRData))  # (a refusal: the arguments put back first)
        value = detached_value(out[0])
        rs, rsd = _pull_unit(out, pullback, self.f, "hvp")
        if redo is not None:  # outside state as a plain call leaves it (rules/outside_redo.py)
            redo(tuple(d[0] for d in duals))
        grads = tuple(d[1] + (0.0 if r is NoRData else r) for d, r in zip(duals, rs[1:]))
        hvps = tuple(d[3] + (0.0 if r is NoRData else r) for d, r in zip(duals, rsd[1:]))
        return value, grads, hvps

    def _buffers(self) -> list:
        """This thread's (fdata, fdata tangent) buffers, one pair per argument (None where the
        argument is not a float64 array)."""
        buffers = getattr(self._per_thread, "buffers", None)
        if buffers is None:
            buffers = self._per_thread.buffers = [
                None if shape is None else (np.zeros(shape), np.zeros(shape)) for shape in self._buffer_shapes]
        return buffers


def _signature_of(x: Any) -> Any:
    return (np.shape(x), x.dtype) if isinstance(x, np.ndarray) else type(x)


def _has_buffers(x: Any) -> bool:
    """Whether a prepared HVP keeps reusable (fdata, fdata tangent) buffers for argument ``x``:
    a float64 array."""
    return isinstance(x, np.ndarray) and x.dtype == np.float64


def prepare_hvp(f: Callable, *example_args: Any) -> PreparedHvp:
    """Hessian-vector products of ``f`` for repeated calls: ``prepared(primals, tangents)``
    returns ``(value, gradients, hvps)`` like ``yb.hvp`` (arrays are fresh on every call)."""
    return PreparedHvp(f, example_args)


def _restore_prepared_hvp(f: Callable, shapes: list, buffer_shapes: list) -> PreparedHvp:
    """A ``PreparedHvp`` loaded by pickle: compiled on its first call, not here."""
    prepared = PreparedHvp.__new__(PreparedHvp)
    prepared._setup(f, shapes, buffer_shapes)
    return prepared


def prepare_hessian(f: Callable, *example_args: Any, argnums: int | Sequence[int] = 0, executor: Any = None,
                    chunk_size: int | None = None, progress: bool | None = None) -> "PreparedHessian":
    """The Hessian of ``f`` for repeated calls with arguments shaped like the examples: compiled
    once (batched passes as ``yb.hessian``; with ``chunk_size=1`` one prepared HVP per column,
    its fdata buffers reused).
    ``executor``, ``chunk_size`` and ``progress`` as for ``yb.hessian``."""
    check_scale_options(executor, chunk_size, progress, "prepare_hessian")
    prepared = PreparedHvp(f, example_args)
    nums, single = normalise_argnums(argnums, len(example_args), "prepare_hessian")
    for i in nums:
        _check_hessian_argument(example_args[i], i)
    return PreparedHessian(prepared, nums, single, executor, chunk_size, progress)


class PreparedHessian:
    """What ``yb.prepare_hessian`` returns: Hessians by its ``PreparedHvp``. Pickles as that
    (itself pickled as ``f`` and shapes) and its options, without the executor."""

    def __init__(self, prepared: PreparedHvp, nums: tuple, single: bool, executor: Any = None,
                 chunk_size: int | None = None, progress: bool | None = None) -> None:
        self.prepared, self.f, self.nums, self.single = prepared, prepared.f, nums, single
        self.executor, self.chunk_size, self.progress = executor, chunk_size, progress
        functools.update_wrapper(self, prepared.f, updated=())
        self.__name__ = f"hessian({fname(prepared.f)})"

    def __call__(self, *args: Any) -> Any:
        # the caller's np.errstate raise: for the primal only (ir/float_errors.py)
        errors = None if float_errors.current_state() is float_errors.DEFAULT else float_errors.adopt()
        try:
            return _hessian(self.f, args, self.nums, self.single, run=self.prepared, scale=_scale(self))
        except Exception as error:
            reraise_hidden(error)
        finally:
            if errors is not None:
                float_errors.restore(errors)

    def __reduce__(self) -> tuple:
        return PreparedHessian, (self.prepared, self.nums, self.single, None, self.chunk_size, self.progress)

    def __repr__(self) -> str:
        return f"yb.prepare_hessian({fname(self.f)}, argnums={self.nums[0] if self.single else self.nums!r})"


def _check_hessian_argument(x: Any, i: int) -> None:
    if type(x) is float or isinstance(x, np.ndarray) and x.dtype.kind == "f":
        return
    require_float_leaf(x, i, "hessian")  # an int, an int array: nothing to differentiate
    raise TypeError(
        f"hessian: argument {i} is a {type(x).__qualname__}; hessian takes float or float-array "
        "arguments. For a dict, list or object of arrays, flatten it with yb.flatten and differentiate "
        "the function of the flat vector, or use yb.hvp, which takes any structure"
    )


def _hessian(f: Callable, args: tuple, nums: tuple, single: bool, run: Callable | None = None,
             scale: dict | None = None) -> Any:
    for i in nums:
        _check_hessian_argument(args[i], i)
    sizes = [int(np.size(args[i])) for i in nums]
    dtypes = [_float_dtype(args[i]) for i in nums]  # a float32 argument keeps float32 (as its tangents do)
    blocks = [[np.empty((sizes[a], sizes[b]), dtype=np.result_type(dtypes[a], dtypes[b])) for b in range(len(nums))]
              for a in range(len(nums))]
    scale = scale or {"name": f"hessian({fname(f)})", "executor": None, "chunk_size": None}
    total, cap = sum(sizes), min(scale["chunk_size"] or MAX_BATCH, MAX_BATCH)  # directions per pass
    if scale["executor"] is None:  # here: one task per pass (a progress bar step each)
        scale = {**scale, "chunk_size": min(cap, max(1, total))}
    columns = iter(run_chunks(hessian_columns, (f, args, nums, run, cap), total, **scale))
    for b in range(len(nums)):
        for k in range(sizes[b]):
            for a, column in enumerate(next(columns)):
                blocks[a][b][:, k] = column
    shaped = [[_shape_block(blocks[a][b], args[nums[a]], args[nums[b]]) for b in range(len(nums))]
              for a in range(len(nums))]
    if single:
        return shaped[0][0]
    return tuple(tuple(row) for row in shaped)


def hessian_columns(f: Callable, args: tuple, nums: tuple, run: Callable | None, cap: int, items: range) -> list:
    """The task of a Hessian: for each flat coordinate in ``items`` (over the arguments ``nums``,
    in order), the Hessian's column as one flat array per argument of ``nums``. Up to ``cap``
    columns come from one batched forward-over-reverse pass on copies of ``args``
    (``api/batched_hessian.py``); a single column, or a group the batched pass cannot carry, from
    one pass per column (``run``: a prepared HVP, else ``hvp``'s)."""
    f = loaded(f)
    items = list(items)
    out: list = []
    batch = cap > 1
    for start in range(0, len(items), cap):
        group = items[start:start + cap]
        columns = None
        if batch:  # a lone column goes twice through a pass of two: a column's arithmetic is the
            # same in every batched pass (not always to the last bit the same as one pass per column)
            columns = batched_columns(f, args, nums, group if len(group) > 1 else group * 2, _pull_unit)
            batch = columns is not None  # a dropped pass: the next groups would drop theirs too
        out.extend(columns[:len(group)] if columns is not None else _columns_one_by_one(f, args, nums, run, group))
    return out


def _columns_one_by_one(f: Callable, args: tuple, nums: tuple, run: Callable | None, items: list) -> list:
    """The Hessian's columns for ``items``, one forward-over-reverse pass each."""
    sizes = [int(np.size(args[i])) for i in nums]
    out = []
    for item in items:
        b, k = 0, item
        while k >= sizes[b]:
            k -= sizes[b]
            b += 1
        j = nums[b]
        directions = [NoTangent] * len(args)
        basis = np.zeros(sizes[b], dtype=_float_dtype(args[j]))  # a direction has its argument's dtype
        basis[k] = 1.0
        directions[j] = float(basis[0]) if type(args[j]) is float else basis.reshape(np.shape(args[j]))
        if run is not None:
            _, _, hv = run(args, tuple(directions))
        else:
            _, _, hv = _value_grad_hvp(f, args, tuple(directions), "hessian")
        out.append([np.ravel(hv[i]) for i in nums])
    return out


def _float_dtype(x: Any) -> np.dtype:
    """The dtype of a Hessian argument's tangents: a float array's own, float64 for a float."""
    return x.dtype if isinstance(x, np.ndarray) else np.dtype(np.float64)


def _shape_block(block: np.ndarray, xa: Any, xb: Any) -> Any:
    if type(xa) is float and type(xb) is float:
        return float(block[0, 0])
    return block.reshape(np.shape(xa) + np.shape(xb))
