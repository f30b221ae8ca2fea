"""``jacobian`` (DESIGN.md §1): the dense Jacobian by forward mode (columns: one JVP per input
element, or batched passes of up to ``MAX_BATCH`` directions) or by reverse mode (rows: one
pullback per output element), with ``chunk_size``, ``holomorphic`` and the scale-out options.
"""
from __future__ import annotations

import functools
import types
from typing import Any, Callable, Sequence

import numpy as np

from .. import tangents as T
from ..ir import float_errors
from .common import check_argnums, check_function, fname, normalise_argnums, reraise_hidden, split_aux
from .pickling import loaded, portable
from .scale import check_scale_options, run_chunks
from .argument_checks import require_float_leaf
from ..tangents import NoTangent
from .complex_jacobian import block_dtype, check_input_leaves, check_output_leaves, leaf_dtype
from ..rules.batched import batched
from .forward import _forward_with_strong_zero, _run_forward, jvp
from .leaves import _assemble, _basis, _batched_leaf, _batched_seed, _flat_leaves, _leaves


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
        # the caller's np.errstate raise: for the primal only (ir/float_errors.py)
        errors = None if float_errors.current_state() is float_errors.DEFAULT else float_errors.adopt()
        try:
            jacs, aux = run(self.f, args, kwargs, nums, self.has_aux, self._scale())
        except Exception as error:
            reraise_hidden(error)
        finally:
            if errors is not None:
                float_errors.restore(errors)
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


__all__ = ["Jacobian", "jacobian"]
