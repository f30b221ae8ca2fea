"""Forward mode's public surface (DESIGN.md §1): ``jvp``, ``jacobian`` (forward or reverse) and
``show_forward``.

``jvp`` runs the forward rule of ``f`` (registered, or derived from its source by
``transform/forward.py``) on duals of *copies* of the caller's arguments and tangents: forward
mode replays the function, mutations included, so the caller's arguments would otherwise be left
in their post-call state. The caller's arguments and tangents are never modified.
"""
from __future__ import annotations

import functools
import inspect
import types
from typing import Any, Callable, Sequence

import numpy as np

from .. import rules as _rules  # noqa: F401 - registers every rule
from .. import tangents as T
from ..tangents.layout import match_layouts
from .recursion_advice import recursion_note
from .common import check_argnums, check_function, fname, normalise_argnums, split_aux
from .pickling import loaded, portable
from .scale import check_scale_options, run_chunks
from .argument_checks import note_shared_write, require_float_leaf, separate_arguments
from ..rules.core import Dual
from ..tangents import NoTangent
from ..tangents import kinds as K
from ..tangents.arrays import _address, array_root, view_like
from ..tangents.ops import _aligned_children, _build_tangent, _fill_tangent, _tangent_shell, primal_links
from ..tangents.validate import validate_tangent
from .argument_checks import shared_view_tangents
from .complex_jacobian import as_leaf_array, block_dtype, check_input_leaves, check_output_leaves, leaf_dtype
from ..rules import outside_state
from ..rules.batched import BATCH, batched, batched_zeros
from ..rules.declare import FORWARD, has_nan
from ..transform.forward_runtime import call_frule, direct_pass as _direct_pass, give_up_speculating, \
    global_tangent, run_direct, run_derived_directly, speculative_pass
from ..transform.forward_speculative import Speculation
from ..transform import buffers as _buffers
from ..transform.forward_random import PassRecord


def _run_forward(f: Callable, primals: tuple, tangents: tuple, kwargs: dict, name: str) -> tuple[Any, Any]:
    """``(value, tangent_out)`` of ``f`` at copies of ``primals`` along ``tangents``."""
    checked = _plain(primals, tangents)  # plain tangents are valid by construction
    if not checked:
        tangents = shared_view_tangents(primals, tangents, name)
    for i, (p, t) in enumerate(zip(primals, tangents) if not checked else ()):
        try:
            validate_tangent(p, t)
        except TypeError as error:
            raise TypeError(
                f"{name}: tangents[{i}] is not a tangent of primals[{i}] "
                f"(a {type(p).__qualname__}): {error}. A tangent has the primal's structure: a float for a "
                "float, an array of the same shape and dtype for a float array, NoTangent for ints and other "
                "non-differentiable values (yb.tangents.zero_tangent(x) shows the expected structure)"
            ) from None
    return _forward_with_strong_zero(f, primals, tangents, kwargs, name, plain=checked and not kwargs)


def _forward_with_strong_zero(f: Callable, primals: tuple, tangents: tuple, kwargs: dict, name: str,
                              plain: bool | None = None) -> tuple:
    """One plain forward pass, and a second by the strong-zero rule if the output tangent holds a
    NaN. ``plain``: whether the arguments are plain (``_plain``), if the caller checked."""
    randomness = PassRecord()  # the random states, saved lazily (transform/forward_random.py)
    try:
        value, tangent, outside = _forward_pass(f, primals, tangents, kwargs, name, strong=False, plain=plain)
    except RecursionError as error:  # frames per level and the limit to set
        error.add_note(recursion_note(error))
        raise
    finally:
        randomness.end()
    if _holds_nan(tangent):
        return _strong_zero_pass(f, primals, tangents, kwargs, name, plain, value, outside, randomness)
    return value, tangent


def _strong_zero_pass(f: Callable, primals: tuple, tangents: tuple, kwargs: dict, name: str, plain: bool | None,
                      value: Any, outside: bool, randomness: PassRecord) -> tuple:
    """The strong zero, checked once (rules/declare.py: FORWARD): the plain pass's tangent held a
    NaN, so ``f`` runs again, on fresh copies, with every product by the rule; its value must be
    the plain pass's."""
    drew_past_rules = randomness.restore()
    again, tangent, _ = _forward_pass(f, primals, tangents, kwargs, name, strong=True, plain=plain)
    if (outside or drew_past_rules) and not _same_value(value, again):
        raise ValueError(
            f"{name}: the tangent came out NaN, so yuebing ran {fname(f)} again by the strong-zero rule "
            "(docs/conventions.md), and the second run gave another value: the function changed state "
            "outside its arguments (a global list or dict, a module or class attribute, a closure made "
            "outside, a global random state drawn from outside yuebing's rules). Pass that state in as an "
            "argument, or use reverse mode (yb.grad, jacobian(mode='rev'))")
    return value, tangent


def _same_value(a: Any, b: Any) -> bool:
    """Whether two runs' outputs are equal (arrays elementwise, NaN equal to NaN)."""
    try:
        return bool(np.array_equal(np.asarray(a, dtype=object if isinstance(a, (list, tuple, dict)) else None),
                                   np.asarray(b, dtype=object if isinstance(b, (list, tuple, dict)) else None),
                                   equal_nan=not isinstance(a, (list, tuple, dict))))
    except (TypeError, ValueError):
        return a is b or a == b


def _holds_nan(t: Any) -> bool:
    """Whether a tangent holds a NaN anywhere (arrays, numbers, and containers of them)."""
    if isinstance(t, np.ndarray):
        return t.dtype.kind in "fc" and has_nan(t)
    if isinstance(t, (float, complex, np.floating, np.complexfloating)):
        return t != t
    if isinstance(t, dict):
        return any(_holds_nan(c) for c in t.values())
    if isinstance(t, (list, tuple)):
        return any(_holds_nan(c) for c in t)
    if isinstance(t, (T.Tangent, T.MutableTangent)):
        return any(_holds_nan(c) for c in t.fields.values())
    return False


def _plain(primals: tuple, tangents: tuple) -> bool:
    """Whether every argument is a Python float with a float tangent or a float ndarray owning its
    memory with a tangent array of its shape and dtype, no argument or tangent passed twice, in an
    unbatched pass: arguments whose copies need no structural walk."""
    if BATCH.size or len({id(p) for p in primals} | {id(t) for t in tangents}) != 2 * len(primals):
        return False
    for p, t in zip(primals, tangents):
        if type(p) is float:
            if type(t) is not float:
                return False
        elif not (type(p) is np.ndarray and type(t) is np.ndarray and p.base is None and p.dtype.kind == "f"
                  and t.dtype == p.dtype and t.shape == p.shape):
            return False
    return True


def _plain_copies(primals: tuple, tangents: tuple) -> list:
    """Copies of plain arguments (``_plain``) and their tangents, interleaved (primal, tangent,
    ...): what the general path's walks make of them (``structural_copy``, ``scale``,
    ``match_layouts``: new arrays, each tangent in its primal's memory order)."""
    flat: list = []
    for p, t in zip(primals, tangents):
        if type(p) is float:
            flat += (p, t)
        else:
            t_copy = np.empty_like(p)  # the primal's memory order
            t_copy[...] = t
            flat += (np.array(p, copy=True), t_copy)
    return flat


def _forward_pass(f: Callable, primals: tuple, tangents: tuple, kwargs: dict, name: str, strong: bool,
                  plain: bool | None = None) -> tuple:
    """One forward pass on fresh copies of the primals and tangents; ``strong``: every product by
    the strong-zero rule, or plainly. Returns the value, its tangent, and whether the pass reached
    outside state (``rules/outside_state.py``)."""
    if plain if plain is not None else not kwargs and _plain(primals, tangents):
        return _plain_forward_pass(f, _plain_copies(primals, tangents), strong)
    x = T.structural_copy(tuple(primals))
    # arguments sharing float data (one array passed twice) are differentiated slot by slot, each
    # a read-only view with its own tangent (docs/conventions.md, "Arguments")
    separate = separate_arguments(x, name)
    x = x if separate is None else separate
    # a fresh tangent with the caller's aliasing, for the copy (the rules update it in place)
    dx = T.scale(tuple(tangents), 1.0) if any(t is not NoTangent for t in tangents) else (NoTangent,) * len(x)
    if dx is NoTangent:
        dx = (NoTangent,) * len(x)
    dx = match_layouts(x, dx)  # a write through a view of x reaches its tangent too (tangents/layout.py)
    duals = [Dual(p, t) for p, t in zip(x, dx)]
    zero = _batched_zero if BATCH.size else T.zero_tangent  # a batched pass: room for writes of batched values
    kw_duals = {k: Dual(v, zero(v)) for k, v in T.structural_copy(kwargs).items()}
    scope = outside_state.enter()  # one tangent per outside object for the pass
    strength, FORWARD.strong = FORWARD.strong, strong
    try:
        out = call_frule(Dual(f, global_tangent(f)), *duals, **kw_duals)
        outside = outside_state.touched()
    except ValueError as error:
        if separate is not None:
            note_shared_write(error, name)
        raise
    finally:
        FORWARD.strong = strength
        outside_state.leave(scope)
    return out.primal, out.tangent, outside


def _plain_forward_pass(f: Callable, flat: list, strong: bool) -> tuple:
    """``_forward_pass`` on plain arguments' copies (``_plain_copies``): a plain Python function
    whose forward rule was derived before runs its generated code directly
    (``forward_runtime.run_derived_directly``), anything else through dispatch."""
    scope = outside_state.enter()  # one tangent per outside object for the pass
    strength, FORWARD.strong = FORWARD.strong, strong
    try:
        result = run_derived_directly(f, flat)
        if result is None:
            out = call_frule(Dual(f, global_tangent(f)), *(Dual(p, t) for p, t in zip(flat[::2], flat[1::2])))
            result = out.primal, out.tangent
        outside = outside_state.touched()
    finally:
        FORWARD.strong = strength
        outside_state.leave(scope)
    return result[0], result[1], outside


def _copies_if_plain(primals: tuple, tangents: tuple) -> list | None:
    """``_plain_copies(primals, tangents)`` if the arguments are plain (``_plain``), else None:
    both in one walk, for the direct path of ``jvp``."""
    flat: list = []
    ids = set()
    for p, t in zip(primals, tangents):
        kind = type(p)
        if kind is float:
            if type(t) is not float:
                return None
            flat += (p, t)
        elif kind is np.ndarray and type(t) is np.ndarray and p.base is None and p.dtype.kind == "f" \
                and t.dtype == p.dtype and t.shape == p.shape:
            # a tangent laid out as its primal (tangents/layout.py): a plain copy when the strides agree
            t_copy = _copy(t) if t.strides == p.strides else _copy_in_layout(t, p)
            flat += (_copy(p), t_copy)
        else:
            return None
        ids.add(id(p))
        ids.add(id(t))
    return flat if len(ids) == len(flat) else None  # an argument or tangent passed twice: the general path


def _copy(a: np.ndarray) -> np.ndarray:
    """A copy of array ``a`` in its memory order; a large C-ordered one in a recycled buffer
    (``transform/buffers.py``: a fresh one costs more in page faults than the copy itself), which
    the sweep at the end of the call takes back once nothing refers to it."""
    if a.size >= _buffers.MIN_SIZE and a.flags.c_contiguous:
        buffer = _buffers.scratch(a)
        np.copyto(buffer, a)
        return buffer
    return a.copy() if a.flags.c_contiguous else a.copy(order="K")  # (a keyword costs a tenth of a small copy)


def _copy_in_layout(t: np.ndarray, p: np.ndarray) -> np.ndarray:
    """A copy of tangent ``t`` in primal ``p``'s memory order."""
    t_copy = np.empty_like(p)
    t_copy[...] = t
    return t_copy


def _direct_jvp(direct: Callable, f: Callable, primals: tuple, tangents: tuple) -> tuple | None:
    """``jvp`` of a plain function whose forward code was generated before, on copies of plain
    arguments (``_copies_if_plain``; None for others): ``_forward_with_strong_zero`` and
    ``_plain_forward_pass`` in one frame, the code run directly (``run_derived_directly``)."""
    flat = _copies_if_plain(primals, tangents)
    if flat is None:
        return None
    randomness = PassRecord()  # the random states, saved lazily (transform/forward_random.py)
    scope = outside_state.enter()  # one tangent per outside object for the pass
    strength, FORWARD.strong = FORWARD.strong, False
    try:
        value, tangent = run_direct(direct, f, flat)
        outside = outside_state.touched()
    except RecursionError as error:  # frames per level and the limit to set
        error.add_note(recursion_note(error))
        raise
    finally:
        FORWARD.strong = strength
        outside_state.leave(scope)
        randomness.end()
        flat = None  # the copies: recycled below unless the output holds them
        if _buffers.lent():
            _buffers.sweep()
    if type(tangent) is float and tangent == tangent or not _holds_nan(tangent):
        return value, tangent
    return _strong_zero_pass(f, primals, tangents, {}, "jvp", True, value, outside, randomness)


_F64 = np.dtype(np.float64)


def _speculate(program: Callable, f: Callable, primals: tuple, tangents: tuple) -> tuple | None:
    """``jvp`` by ``f``'s speculative program (``transform/forward_speculative.py``) on the
    caller's own float64 arrays and floats: no copies, no records, as the program changes nothing
    (it stops where the function would do more than compute values). None (the ordinary path
    runs) for other arguments, when it stopped or raised, for a tangent holding a NaN (the
    strong-zero pass), and for outputs other than a float or a float64 array or sharing memory
    with an argument or tangent (a JVP's outputs are never the caller's arrays); a stop and such
    outputs end ``f``'s speculation (``give_up_speculating``)."""
    flat: list = []
    for p, t in zip(primals, tangents):
        kind = type(p)
        if kind is np.ndarray:
            if type(t) is not np.ndarray or p.dtype is not _F64 or t.dtype is not _F64 or t.shape != p.shape:
                return None
        elif kind is not float or type(t) is not float:
            return None
        flat.append(p)
        flat.append(t)
    try:
        value, tangent = program(f, NoTangent, *flat)  # (a plain pass: it reads no FORWARD.strong)
    except Speculation:
        give_up_speculating(f)
        return None
    except Exception:  # noqa: BLE001 - the ordinary path raises it, with its notes
        return None
    if type(value) not in _SPECULATED_VALUES or type(tangent) not in _SPECULATED_TANGENTS \
            or type(value) is np.ndarray and _shares_memory(value, flat) \
            or type(tangent) is np.ndarray and _shares_memory(tangent, flat):
        give_up_speculating(f)  # (outputs of other kinds, or the caller's memory: each time, likely)
        return None
    if tangent != tangent if type(tangent) is float else has_nan(tangent):
        return None  # the strong-zero pass
    return value, tangent


_SPECULATED_VALUES = frozenset({float, np.float64, np.ndarray})
_SPECULATED_TANGENTS = frozenset({float, np.ndarray})


def _shares_memory(a: np.ndarray, arguments: list) -> bool:
    return any(type(b) is np.ndarray and np.may_share_memory(a, b) for b in arguments)


_ASYNC_FLAGS = inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE


def jvp(f: Callable, primals: Sequence[Any], tangents: Sequence[Any], has_aux: bool = False) -> tuple:
    """Jacobian-vector product by forward mode, as JAX's ``jvp``: ``(value, tangent_out)``, or
    ``(value, tangent_out, aux)`` with ``has_aux`` (``f`` then returns ``(value, aux)``).

    ``primals`` and ``tangents`` are tuples (or lists) of the same length, one tangent per
    positional argument, each with its primal's structure (``NoTangent`` for ints). The caller's
    arguments are not modified, even when ``f`` mutates them.
    """
    if type(f) is not types.FunctionType or f.__code__.co_flags & _ASYNC_FLAGS:  # (a plain function: no walk)
        check_function(f, "jvp")
    elif not has_aux and type(primals) is tuple and type(tangents) is tuple and len(primals) == len(tangents):
        direct = _direct_pass(f, len(primals))  # its generated forward code, derived at an earlier call
        if direct is not None and not BATCH.size:
            program = speculative_pass(f)
            result = None if program is None else _speculate(program, f, primals, tangents)
            if result is not None:
                return result
            result = _direct_jvp(direct, f, primals, tangents)
            if result is not None:
                return result
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(
            "jvp: primals and tangents must be tuples (or lists) of positional arguments, got "
            f"{type(primals).__qualname__} and {type(tangents).__qualname__}; for one argument write "
            "jvp(f, (x,), (dx,))"
        )
    if len(primals) != len(tangents):
        raise TypeError(f"jvp: got {len(primals)} primals but {len(tangents)} tangents; give one tangent per argument")
    value, tangent = _run_forward(f, tuple(primals), tuple(tangents), {}, "jvp")
    if has_aux:
        if not (isinstance(value, (tuple, list)) and len(value) == 2):
            raise TypeError(f"jvp(has_aux=True): {fname(f)} must return a pair (value, aux), got {type(value).__qualname__}")
        parts = tangent if isinstance(tangent, (tuple, list)) else (NoTangent, NoTangent)
        return value[0], parts[0], value[1]
    return value, tangent


# --------------------------------------------------------------------------------------------
# Leaves of a structure: the float scalars and float arrays a Jacobian is indexed by
# --------------------------------------------------------------------------------------------


def _refuse_complex(x: Any, what: str) -> None:
    raise TypeError(
        f"jacobian: {what} contains a complex value ({type(x).__qualname__}); yuebing's jacobian is for "
        "real inputs and outputs (use jvp/vjp with complex tangents instead)"
    )


def _leaves(x: Any, t: Any, what: str, complex_ok: bool = False) -> list[tuple[Any, Any]]:
    """``(primal_leaf, tangent_leaf)`` for every float scalar and float array reachable from
    ``x`` (each shared object once), in a fixed order; ``t`` is a tangent of ``x``. Complex
    numbers and arrays are leaves too with ``complex_ok`` (``yb.jacobian``), else refused."""
    found: list = []
    seen: set = set()
    stack = [(x, t)]
    while stack:
        v, tv = stack.pop()
        kind = K.primal_kind(v)
        if kind is K.COMPLEX and not complex_ok:
            _refuse_complex(v, what)
        if kind is K.FLOAT or kind is K.COMPLEX:
            found.append((v, tv))
            continue
        if kind is K.NONDIFF:
            continue
        if id(v) in seen:
            continue
        seen.add(id(v))
        if kind is K.ARRAY:
            if v.dtype.kind == "c" and not complex_ok:
                _refuse_complex(v, what)
            found.append((v, tv))
            continue
        keys, children, _ = K.parts(v, kind)
        tchildren = _aligned_children(kind, keys, tv)
        stack.extend(reversed(list(zip(children, tchildren))))
    return found


def _build(x: Any, leaf: Callable[[Any], Any], share_memory: bool = False) -> Any:
    """A tangent of ``x`` whose leaves (in ``_leaves`` order) are ``leaf(primal_leaf)``. With
    ``share_memory``, arrays of ``x`` that are views of one memory get the same views of one array,
    ``leaf(their root)``, as DESIGN.md §2 asks of a tangent (``leaf`` may add leading axes)."""
    memo: dict[int, Any] = {}
    links = primal_links(x) if share_memory else None
    made: dict[int, np.ndarray] = {}

    def array(v: np.ndarray) -> np.ndarray:
        root = links.root_of(v) if links else None
        if root is None:
            return leaf(v)
        if id(root) not in made:
            made[id(root)] = leaf(root)
        return _same_view(v, root, made[id(root)])

    def build(v: Any) -> Any:
        kind = K.primal_kind(v)
        if kind is K.FLOAT or kind is K.COMPLEX:
            return leaf(v)
        if kind is K.NONDIFF:
            return NoTangent
        if id(v) in memo:
            return memo[id(v)]
        if kind is K.ARRAY:
            memo[id(v)] = t = array(v)
            return t
        keys, children, _ = K.parts(v, kind)
        if kind in K.MUTABLE_KINDS:
            shell = memo[id(v)] = _tangent_shell(v, kind)
            return _fill_tangent(shell, kind, keys, [build(c) for c in children])
        memo[id(v)] = t = _build_tangent(v, kind, keys, [build(c) for c in children])
        return t

    return build(x)


def _same_view(v: np.ndarray, root: np.ndarray, new_root: np.ndarray) -> np.ndarray:
    """The view of ``new_root`` that ``v`` is of ``root``; leading axes ``new_root`` has beyond
    ``root``'s (a batch axis whose every slice is laid out as ``root``) are kept whole."""
    extra = new_root.ndim - root.ndim
    if not extra:
        return view_like(v, root, new_root)
    owner = array_root(new_root)
    offset = _address(new_root) - _address(owner) + _address(v) - _address(root)
    return np.ndarray(new_root.shape[:extra] + v.shape, v.dtype, buffer=owner, offset=offset,
                      strides=new_root.strides[:extra] + v.strides)


def _basis(x: Any, position: int, index: int, unit: complex = 1.0) -> Any:
    """The tangent of ``x`` that is ``unit`` (1, or 1j for a complex leaf) at element ``index`` of
    leaf number ``position``, else 0. Views of one memory in ``x`` get views of one tangent array,
    so a 1 in memory they share is seen by each: the direction perturbs the memory, as reverse
    mode's gradient is taken."""
    leaves = _leaves(x, T.zero_tangent(x), "the argument", complex_ok=True)
    target = leaves[position][0]
    # floats are never shared: the one to seed is float number `chosen` in the walk's order
    chosen = sum(not isinstance(v, np.ndarray) for v, _ in leaves[:position])
    counter = iter(range(1 << 62))

    def leaf(v: Any) -> Any:
        if isinstance(v, np.ndarray):
            return np.zeros(v.shape, dtype=v.dtype)
        value = unit if next(counter) == chosen and not isinstance(target, np.ndarray) else 0.0
        return leaf_dtype(v)(value) if K.primal_kind(v) is K.COMPLEX else value

    t = _build(x, leaf, share_memory=True)
    if isinstance(target, np.ndarray):
        tv = _leaves(x, t, "the argument", complex_ok=True)[position][1]
        tv[np.unravel_index(index, tv.shape)] = unit  # (an index, not a reshape: a view may be strided)
    return t


def _flat_leaves(x: Any, t: Any, what: str) -> list[np.ndarray]:
    """Each leaf's tangent as a float64 (complex128) array of the leaf's shape (zeros for ``NoTangent``)."""
    return [np.zeros(np.shape(v), leaf_dtype(v)) if tv is NoTangent else as_leaf_array(v, tv)
            for v, tv in _leaves(x, t, what, complex_ok=True)]


def _is_leaf(x: Any) -> bool:
    kind = K.primal_kind(x)
    return kind is K.FLOAT or kind is K.COMPLEX or kind is K.ARRAY and x.dtype.kind in "fc"


def _assemble(x: Any, y: Any, blocks: list[list[np.ndarray]]) -> Any:
    """The Jacobian of output ``y`` with respect to ``x`` from ``blocks[i][j]`` (output leaf ``i``
    by input leaf ``j``, each shaped ``out_leaf.shape + in_leaf.shape``): one array when both are
    a float or a float array, otherwise ``y``'s tangent structure holding ``x``'s tangent
    structure of blocks."""
    if _is_leaf(x) and _is_leaf(y):
        return blocks[0][0]
    y_count = iter(range(1 << 62))

    def output_leaf(v: Any) -> Any:
        row = blocks[next(y_count)]
        if _is_leaf(x):
            return row[0]
        x_count = iter(range(1 << 62))
        return _build(x, lambda u: row[next(x_count)])

    if _is_leaf(y):
        return output_leaf(y)
    return _build(y, output_leaf)


def _check_argument(x: Any, i: int, name: str, holomorphic: bool = False) -> None:
    try:
        t = T.zero_tangent(x)
    except TypeError as error:
        raise TypeError(f"{name}: argument {i} cannot be differentiated: {error}") from None
    require_float_leaf(x, i, name)  # an int, a dict of ints: nothing to differentiate
    check_input_leaves([v for v, _ in _leaves(x, t, f"argument {i}", complex_ok=True)], i, holomorphic)


def jacobian(f: Callable, argnums: int | Sequence[int] = 0, mode: str = "rev", has_aux: bool = False, *,
             holomorphic: bool = False, executor: Any = None, chunk_size: int | None = None,
             progress: bool | None = None) -> "Jacobian":
    """``jac(*args, **kwargs)``: the Jacobian of ``f`` with respect to positional argument(s)
    ``argnums``, shaped ``output.shape + input.shape`` for a float or float-array argument and
    output (nested tangent structures otherwise; a tuple of Jacobians for a tuple ``argnums``).

    ``mode="rev"`` runs one reverse pass per output element (``yb.vjp``). ``mode="fwd"`` is
    *batched* forward mode (Mooncake's chunked forward mode): one forward pass carries
    ``chunk_size`` input directions at once, every tangent with a leading batch axis, so a
    Jacobian with ``n`` input elements takes ``ceil(n / chunk_size)`` passes. The default is all
    ``n`` directions in one pass, up to 64 per pass (past that the pass's arrays, 64 times the
    primal's, stop paying for themselves); ``chunk_size=1`` is one ``yb.jvp`` per input
    element. Rules that do not know the batch axis run once per direction inside the pass, so the
    Jacobian is the same for every ``chunk_size``. Keyword arguments are passed to ``f`` and not
    differentiated. With ``has_aux``, ``f`` returns ``(value, aux)`` and ``jac`` returns
    ``(jacobian, aux)``.

    Complex numbers (JAX's ``jacfwd``/``jacrev``, ``api/complex_jacobian.py``): real inputs with
    complex outputs give the complex Jacobian ``d Re y/dx + i d Im y/dx``; complex inputs need
    ``holomorphic=True`` (complex outputs too), which gives ``f'(z)``, right only for a function
    that is holomorphic (the caller's promise, as in JAX).

    Scale-out (docs/scale-out.md): with ``executor`` (any ``concurrent.futures.Executor``) the
    rows (``"rev"``) or columns (``"fwd"``) are computed there, ``chunk_size`` of them per task
    (default about ``n / (4 * workers)``; in forward mode a task's columns are batched, up to 64
    per pass unless ``chunk_size`` is given), each task on its own copy of the arguments; the
    Jacobian is the same as without one. ``progress``: a tqdm bar on a terminal once the work has
    run 2 s (``None``), always (``True``) or never (``False``).
    """
    if mode not in ("rev", "fwd"):
        raise ValueError(f"jacobian: mode must be 'rev' or 'fwd', got {mode!r}")
    check_scale_options(executor, chunk_size, progress, "jacobian")
    return Jacobian(f, argnums, mode, has_aux, executor, chunk_size, progress, holomorphic)


class Jacobian:
    """What ``yb.jacobian`` returns. Pickles as ``f`` (by reference) and its options, without the
    executor (a pool belongs to the process that made it: loaded elsewhere, it runs in process)."""

    def __init__(self, f: Callable, argnums: Any = 0, mode: str = "rev", has_aux: bool = False, executor: Any = None,
                 chunk_size: int | None = None, progress: bool | None = None, holomorphic: bool = False) -> None:
        check_function(f, "jacobian")
        check_argnums(argnums, "jacobian")
        self.f, self.argnums, self.mode, self.has_aux, self.holomorphic = f, argnums, mode, has_aux, holomorphic
        self.executor, self.chunk_size, self.progress = executor, chunk_size, progress
        functools.update_wrapper(self, f, updated=())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        nums, single = normalise_argnums(self.argnums, len(args), "jacobian")
        for a in nums:
            _check_argument(args[a], a, "jacobian", self.holomorphic)
        run = _jacobian_fwd if self.mode == "fwd" else _jacobian_rev
        jacs, aux = run(self.f, args, kwargs, nums, self.has_aux, self._scale())
        result = jacs[0] if single else tuple(jacs)
        return (result, aux) if self.has_aux else result

    def _scale(self) -> dict:
        return {"executor": self.executor, "chunk_size": self.chunk_size, "progress": self.progress,
                "name": f"jacobian({fname(self.f)})", "holomorphic": self.holomorphic}

    def __reduce__(self) -> tuple:
        return Jacobian, (portable(self.f), self.argnums, self.mode, self.has_aux, None, self.chunk_size, self.progress,
                          self.holomorphic)

    def __repr__(self) -> str:
        aux = (", has_aux=True" if self.has_aux else "") + (", holomorphic=True" if self.holomorphic else "")
        return f"yb.jacobian({fname(self.f)}, argnums={self.argnums!r}, mode={self.mode!r}{aux})"

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else types.MethodType(self, obj)


def _locate(item: int, sizes: Sequence[int]) -> tuple[int, int]:
    """``(k, index)``: flat item number ``item`` of leaves of ``sizes`` is element ``index`` of leaf ``k``."""
    for k, size in enumerate(sizes):
        if item < size:
            return k, item
        item -= size
    raise IndexError(item)


def _jacobian_fwd(f: Callable, args: tuple, kwargs: dict, nums: tuple, has_aux: bool, scale: dict) -> tuple[list, Any]:
    scale = dict(scale)
    holomorphic = scale.pop("holomorphic", False)
    zeros = tuple(T.zero_tangent(a) for a in args)
    in_leaves = {a: [v for v, _ in _leaves(args[a], zeros[a], f"argument {a}", complex_ok=True)] for a in nums}
    sizes = [int(np.size(xl)) for a in nums for xl in in_leaves[a]]
    total, cap = sum(sizes), scale["chunk_size"] or MAX_BATCH  # directions per forward pass
    first: list = []
    if scale["executor"] is None and min(cap, total) > 1:  # the first batch's pass gives the value too
        leaves = [(a, j, int(np.size(xl))) for a in nums for j, xl in enumerate(in_leaves[a])]
        full_value, first = _batched_columns(f, args, kwargs, has_aux, leaves, list(range(min(cap, total))), True)
    else:
        full_value, _ = _run_forward(f, args, zeros, kwargs, "jacobian")
    value, aux = (split_aux(full_value, "jacobian", f) if has_aux else (full_value, None))
    out_leaves = [v for v, _ in _leaves(value, T.zero_tangent(value), "the output", complex_ok=True)]
    check_output_leaves(out_leaves, holomorphic)
    if scale["executor"] is None:  # here: one task per batch (a progress bar step each)
        scale = {**scale, "chunk_size": min(cap, max(1, total))}
    done = len(first)
    rest = run_chunks(forward_columns, (f, args, kwargs, nums, has_aux, cap), total - done,
                      part=lambda start, stop: range(start + done, stop + done), **scale)
    columns = iter(first + rest)
    jacs = []
    for a in nums:
        blocks = [[np.zeros(np.shape(yl) + np.shape(xl), block_dtype(yl, xl)) for xl in in_leaves[a]]
                  for yl in out_leaves]
        for j, xl in enumerate(in_leaves[a]):
            for index in range(int(np.size(xl))):
                for i, column in enumerate(next(columns)):
                    target = blocks[i][j]
                    target.reshape(target.shape[:column.ndim] + (-1,))[(Ellipsis, index)] = column
        jacs.append(_assemble(args[a], value, blocks))
    return jacs, aux


#: directions per batched forward pass of ``jacobian(mode="fwd")`` when ``chunk_size`` is not
#: given: past this the pass's arrays (k times the primal's) stop paying for themselves
#: (``python -m yuebing bench``'s Jacobian timings, docs/api.md)
MAX_BATCH = 64


def forward_columns(f: Callable, args: tuple, kwargs: dict, nums: tuple, has_aux: bool, cap: int,
                    items: range) -> list:
    """The task of a forward-mode Jacobian: for each flat input coordinate in ``items`` (over the
    leaves of the arguments ``nums``, in order), the Jacobian's columns, one per output leaf.
    Up to ``cap`` coordinates go through one batched forward pass (``rules/batched.py``)."""
    f = loaded(f)
    zeros = tuple(T.zero_tangent(a) for a in args)
    leaves = [(a, j, int(np.size(xl))) for a in nums
              for j, (xl, _) in enumerate(_leaves(args[a], zeros[a], f"argument {a}", complex_ok=True))]
    items = list(items)
    out: list = []
    for start in range(0, len(items), cap):
        group = items[start:start + cap]
        if len(group) == 1:
            out.append(_one_column(f, args, kwargs, has_aux, zeros, leaves, group[0]))
        else:
            out.extend(_batched_columns(f, args, kwargs, has_aux, leaves, group))
    return out


def _one_column(f: Callable, args: tuple, kwargs: dict, has_aux: bool, zeros: tuple, leaves: list,
                item: int) -> list:
    """The Jacobian's columns for flat input coordinate ``item``: one unbatched JVP."""
    k, index = _locate(item, [size for _, _, size in leaves])
    a, j, _ = leaves[k]
    tangents = list(zeros)
    tangents[a] = _basis(args[a], j, index)
    y, dy = _run_forward(f, args, tuple(tangents), kwargs, "jacobian")
    y, _ = (split_aux(y, "jacobian", f) if has_aux else (y, None))
    if has_aux:
        dy = dy[0] if isinstance(dy, (tuple, list)) else NoTangent
    return _flat_leaves(y, dy, "the output")


def _batched_columns(f: Callable, args: tuple, kwargs: dict, has_aux: bool, leaves: list, group: list,
                     with_value: bool = False) -> Any:
    """The Jacobian's columns for the flat input coordinates ``group``: one forward pass whose
    tangents carry ``len(group)`` directions, each argument's leaves seeded with a leading batch
    axis (zeros for the arguments not differentiated, so writes into them have room).
    ``with_value``: ``(f's value, columns)``."""
    m = len(group)
    seeds: dict = {}
    tangents = tuple(_batched_seed(x, a, m, seeds) for a, x in enumerate(args))
    for r, item in enumerate(group):
        k, index = _locate(item, [size for _, _, size in leaves])
        a, j, _ = leaves[k]
        seed = seeds[(a, j)]
        seed[(r,) + np.unravel_index(index, seed.shape[1:])] = 1.0  # any layout: no reshape copy
    with batched(m):
        full, dy = _forward_with_strong_zero(f, args, tangents, kwargs, "jacobian")
    y, _ = (split_aux(full, "jacobian", f) if has_aux else (full, None))
    if has_aux:
        dy = dy[0] if isinstance(dy, (tuple, list)) else NoTangent
    stacks = [_batched_leaf(v, tv, m) for v, tv in _leaves(y, dy, "the output", complex_ok=True)]
    columns = [[stack[r] for stack in stacks] for r in range(m)]
    return (full, columns) if with_value else columns


def _batched_seed(x: Any, a: int, m: int, seeds: dict) -> Any:
    """A zero tangent of ``x`` with a leading batch axis of ``m`` on every float leaf (views of
    one memory in ``x`` get views of one batched array); leaf ``j``'s array is ``seeds[(a, j)]``."""
    t = _build(x, lambda v: batched_zeros(v, m, None if isinstance(v, np.ndarray) else leaf_dtype(v)),
               share_memory=True)  # each direction laid out as v
    for j, (_, tv) in enumerate(_leaves(x, t, f"argument {a}", complex_ok=True) if seeds is not None else ()):
        seeds[(a, j)] = tv
    return t


def _batched_zero(x: Any) -> Any:
    """A zero tangent of ``x`` with the current pass's batch axis on every float leaf."""
    return _batched_seed(x, 0, BATCH.size, None)


def _batched_leaf(v: Any, tv: Any, m: int) -> np.ndarray:
    """An output leaf's batched tangent as a float array of shape ``(m,) + v.shape`` (a tangent
    without the batch axis is the same in every direction)."""
    shape = np.shape(v)
    if tv is NoTangent:
        return np.zeros((m,) + shape, leaf_dtype(v))
    tv = np.asarray(tv, dtype=leaf_dtype(v))
    if tv.ndim == len(shape):
        return np.broadcast_to(tv, (m,) + shape)
    return tv.reshape((m,) + shape)


def _jacobian_rev(f: Callable, args: tuple, kwargs: dict, nums: tuple, has_aux: bool, scale: dict) -> tuple[list, Any]:
    from .reverse import vjp

    scale = dict(scale)
    holomorphic = scale.pop("holomorphic", False)
    g = functools.partial(f, **kwargs) if kwargs else f
    full_value, pullback = vjp(g, *args)
    pullback(T.zero_tangent(full_value))  # restores what the pass changed in the arguments
    value, aux = (split_aux(full_value, "jacobian", f) if has_aux else (full_value, None))
    out_leaves = [v for v, _ in _leaves(value, T.zero_tangent(value), "the output", complex_ok=True)]
    check_output_leaves(out_leaves, holomorphic)
    in_leaves = {a: [v for v, _ in _leaves(args[a], T.zero_tangent(args[a]), f"argument {a}", complex_ok=True)]
                 for a in nums}
    blocks = {a: [[np.zeros(np.shape(yl) + np.shape(xl), block_dtype(yl, xl)) for xl in in_leaves[a]]
                  for yl in out_leaves] for a in nums}
    n_rows = sum(int(np.size(yl)) for yl in out_leaves)
    # under an executor each task works on its own copy: threads must not mutate shared arguments
    copy = scale["executor"] is not None
    rows = iter(run_chunks(reverse_rows, (f, args, kwargs, nums, has_aux, copy, holomorphic), n_rows, **scale))
    for i, yl in enumerate(out_leaves):
        for index in range(int(np.size(yl))):
            per_argument = next(rows)
            for a, leaf_rows in zip(nums, per_argument):
                for j, row in enumerate(leaf_rows):
                    target = blocks[a][i][j]
                    target.reshape((-1,) + target.shape[target.ndim - row.ndim:])[index] = row
    return [_assemble(args[a], value, blocks[a]) for a in nums], aux


def reverse_rows(f: Callable, args: tuple, kwargs: dict, nums: tuple, has_aux: bool, copy: bool,
                 holomorphic: bool, items: range) -> list:
    """The task of a reverse-mode Jacobian: for each flat output coordinate in ``items`` (over
    the output's leaves, in order), the Jacobian's rows: per argument of ``nums``, one per leaf.
    A complex output's row is the conjugate of its cotangent 1's (``holomorphic``), or, of real
    inputs, that of the cotangent 1 (``d Re y``) plus i times that of the cotangent 1j (``d Im y``)."""
    f = loaded(f)
    if copy:
        args, kwargs = T.structural_copy((args, kwargs))
    g = functools.partial(f, **kwargs) if kwargs else f
    out = []
    for item in items:
        rows, complex_leaf = _reverse_row(g, f, args, nums, has_aux, item, 1.0)
        if complex_leaf and holomorphic:
            rows = [[np.conj(r) for r in leaf_rows] for leaf_rows in rows]
        elif complex_leaf:
            imaginary, _ = _reverse_row(g, f, args, nums, has_aux, item, 1j)
            rows = [[r + 1j * s for r, s in zip(*pair)] for pair in zip(rows, imaginary)]
        out.append(rows)
    return out


def _reverse_row(g: Callable, f: Callable, args: tuple, nums: tuple, has_aux: bool, item: int,
                 unit: complex) -> tuple[list, bool]:
    """The rows for flat output coordinate ``item`` from the cotangent ``unit`` there, and
    whether that output is complex."""
    from .reverse import vjp

    y, pullback = vjp(g, *args)
    y, aux_now = (split_aux(y, "jacobian", f) if has_aux else (y, None))
    leaves = _leaves(y, T.zero_tangent(y), "the output", complex_ok=True)
    i, index = _locate(item, [int(np.size(yl)) for yl, _ in leaves])
    ct = _basis(y, i, index, unit)
    grads = pullback((ct, T.zero_tangent(aux_now)) if has_aux else ct)
    return [_flat_leaves(args[a], grads[a], f"argument {a}") for a in nums], leaf_dtype(leaves[i][0]) is np.complex128


__all__ = ["Jacobian", "jacobian", "jvp"]
