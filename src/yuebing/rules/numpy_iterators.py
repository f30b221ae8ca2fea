"""NumPy's iteration helpers, lowered to the eager, index-based code they stand for, so their
derivatives come from the indexing and shape rules in every mode (issue 14):

* ``x.flat`` (the ``getattr`` rule of ``objects.py`` calls ``flat_rrule``/``flat_frule``) is
  ``np.ravel(x)``: the elements in C order, a 1-D *view* of ``x`` when ``x`` is C-contiguous, so
  ``x.flat[i]``, ``x.flat[2:5] = v``, ``for v in x.flat``, ``list(x.flat)``, ``np.array(x.flat)`` and
  ``sum(x.flat)`` are the same operations on that array. When ``x`` is not C-contiguous no view
  has that order, and a copy would miss later writes of ``x`` and not take writes through it:
  ``x.flat`` is then a ``FlatIterator`` (``flat_iterators.py``, differentiated as user code) reading
  and writing ``x`` live, its tangent ``x``'s. The statement ``x.flat[i] = v`` (and ``+=``) is
  written through ``flat_assign(x, i, v)`` (the normaliser's), through ``x``'s own index with the
  values repeated as NumPy repeats them (``_flat_assign``), for any memory layout. Differences
  from NumPy's ``flatiter`` for a C-contiguous ``x``: ``type(x.flat)`` is ``np.ndarray``, and its
  ``.base``/``.index``/``.coords`` are not a flatiter's.
* ``np.nditer(op, ...)`` is the list of what it yields: 0-d views of the operands (tuples of them
  for several operands) in the order NumPy's own iterator visits them (``order='K'`` follows the
  memory layout: it is read off ``np.nditer`` with ``multi_index`` on the primal arrays, and the
  primitive ``nditer_views`` takes that plan as data, so a tangent with another memory layout is
  viewed in the primal's order; views share memory, so it is linear and has no pullback work). Views of
  ``readonly`` operands are read-only, of ``readwrite``/``writeonly`` ones writable, so
  ``for v in np.nditer(x, op_flags=['readwrite']): v[...] = 2 * v`` writes ``x``. The ``with
  np.nditer(...) as it:`` form is not covered: ``with`` headers run undifferentiated (the
  loop over ``it`` then raises, naming the nditer). ``external_loop`` yields 1-D chunks of those
  views (``numpy_nditer_chunks.py``), ``buffered`` the same values, ``op_dtypes`` the values of
  read-only operands cast first (a writable one cast is refused). The position trackers ``multi_index``,
  ``c_index``, ``f_index`` make it a ``TrackedNditer``: the same views, walked by a position,
  with ``it.multi_index``/``it.index`` read off NumPy's own iterator on the primals. Third
  order refuses a ``for`` loop over one (its ``__next__`` moves the position before raising
  ``StopIteration``, so that ``it.finished`` is then True as in NumPy); ``while not it.finished``
  works.
* ``np.ndenumerate(x)`` is ``[(index, x[index]) for index in np.ndindex(x.shape)]`` and
  ``np.broadcast(*arrays)`` the list of tuples of broadcast elements in C order (keeping the
  broadcast object's ``shape``, ``size``, ``nd``, ``ndim``, ``numiter``): one primitive,
  ``c_order_elements``, whose pullback reads the elements' cotangents off the list's fdata.
* ``np.fromiter(iterable, dtype, count)`` is ``np.array(list(iterable)[:count], dtype=dtype)``.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .flat_iterators import FlatIterator
from .numpy_nditer_chunks import CHUNK_FLAGS, cast_for_nditer, nditer_chunk_lengths, nditer_chunk_views
from ..ir.primitives import flat_assign
from ..tangents import MutableTangent, NoFData, NoRData, NoTangent, zero_tangent
from .cases import Case, randn
from .core import CoDual, Dual, RuleArgumentError, frule as core_frule, frule_for, primal, rrule as core_rrule, rrule_for
from .declare import nondifferentiable
from .util import fit_tangent, output, unbroadcast
from .second_order import defined_as, linear

# --------------------------------------------------------------------------------------------
# x.flat: the C-order ravel (called by the getattr rules of objects.py)
# --------------------------------------------------------------------------------------------


def _flat_assign(x, index, values):
    """``x.flat[index] = values`` (``ir.primitives.flat_assign``, which the normaliser writes for
    it) as NumPy does it, in covered code: the places are the C-order positions ``index`` picks,
    written through ``x``'s own index (any memory layout), the values repeated to fill them (one
    place takes the first)."""
    if not isinstance(x, np.ndarray):  # another object's flat attribute: written as it is
        target = x.flat
        target[index] = values
        return
    positions = np.arange(x.size)[index]
    flat_values = np.ravel(np.asarray(values))
    if np.ndim(positions) == 0:
        x[np.unravel_index(positions, x.shape)] = flat_values[0]
        return
    repeated = flat_values[np.arange(positions.size) % flat_values.size]
    x[np.unravel_index(np.ravel(positions), x.shape)] = repeated


defined_as(flat_assign, _flat_assign)


def _read_only(y: np.ndarray) -> np.ndarray:
    """A read-only view of ``y`` (``y`` itself stays writable: rules may reuse it)."""
    view = y.view()
    view.flags.writeable = False
    return view


def _is_view_of(y: Any, x: Any) -> bool:
    return isinstance(y, np.ndarray) and y.size > 0 and np.shares_memory(y, x)


def _live_flat(x: Any, derivative: Any, none: Any) -> tuple[FlatIterator, MutableTangent]:
    """``x.flat`` of an array with no C-order view: a ``FlatIterator`` reading and writing ``x``,
    its derivative the array's (``none``: it has none)."""
    flat = FlatIterator(x)
    if derivative is none:
        return flat, zero_tangent(flat)
    return flat, MutableTangent(FlatIterator, {"base": derivative, "index": NoTangent})


def flat_rrule(x: CoDual) -> tuple[CoDual, Callable]:
    """``x.flat`` in reverse mode: ``(output, owner_rdata(dy))`` as ``objects._read`` returns."""
    out, pullback = core_rrule(np.ravel, x)
    if out.primal.size and not _is_view_of(out.primal, x.primal):  # C order of a non-contiguous array
        return CoDual(*_live_flat(x.primal, x.fdata, NoFData)), lambda dy: NoRData
    return out, lambda dy: pullback(dy)[1]


def flat_frule(x: Dual) -> Dual:
    """``x.flat`` in forward mode (the getattr frule of ``objects.py``). A tangent laid out
    otherwise than ``x`` (``yb.jvp`` given a Fortran-ordered tangent) has no C-order view even
    when ``x`` has one: its copy is read-only, so a write through ``x.flat`` raises instead of
    losing the tangent's part."""
    out = core_frule(np.ravel, x)
    if not out.primal.size:
        return out
    if not _is_view_of(out.primal, x.primal):
        return Dual(*_live_flat(x.primal, x.tangent, NoTangent))
    if isinstance(out.tangent, np.ndarray) and not _is_view_of(out.tangent, x.tangent):
        return Dual(out.primal, _read_only(out.tangent))
    return out


def flat_batched(x: Dual) -> Dual | None:
    """``x.flat`` in batched forward mode (``batched.py``'s rule of ``getattr``), when ``x`` has no
    C-order view: the ``FlatIterator``, holding the batched tangent (run once per direction on
    copies, which are C-contiguous, it would give another type of tangent in each); else None."""
    if type(x.primal) is not np.ndarray or not x.primal.size or x.primal.flags.c_contiguous:
        return None
    return Dual(*_live_flat(x.primal, x.tangent, NoTangent))


# --------------------------------------------------------------------------------------------
# np.nditer
# --------------------------------------------------------------------------------------------

#: flags that change nothing in what a plain loop over the iterator yields (``copy_if_overlap``
#: does: its writes go to a temporary copy written back when the iterator closes); ``buffered``
#: and ``grow_inner`` yield the same values (copies of read-only operands, written back for
#: writable ones), and shape ``external_loop``'s chunks (``numpy_nditer_chunks.py``)
_HARMLESS_FLAGS = frozenset({"refs_ok", "zerosize_ok", "reduce_ok", "external_loop", *CHUNK_FLAGS})
#: flags that track the position (``TrackedNditer``): what is yielded is the same
_TRACKING_FLAGS = frozenset({"multi_index", "c_index", "f_index"})
_WRITING = frozenset({"readwrite", "writeonly"})
_WHY_NOT = ("yuebing differentiates np.nditer as the list of 0-d views it yields, in a plain "
            "`for v in np.nditer(x)` loop")


def _refuse(what: str, instead: str) -> RuleArgumentError:
    return RuleArgumentError(f"numpy.nditer: {what} is not differentiated ({_WHY_NOT}); {instead}")


def _operand_flags(op_flags: Any, count: int) -> list[list[str]]:
    """``op_flags`` as one list of strings per operand."""
    if op_flags is None:
        return [["readonly"]] * count
    if len(op_flags) and all(isinstance(f, str) for f in op_flags):
        return [list(op_flags)] * count
    return [list(f) for f in op_flags]


def check_nditer_form(op: Any, flags: Any, op_flags: Any, order: str, casting: str, op_dtypes: Any,
                      op_axes: Any, itershape: Any, buffersize: int = 0) -> None:
    """Refuse the forms the list of views does not reproduce, naming them; then NumPy's own errors,
    from its iterator made on the operands as given (a writable operand that is not an array, an
    empty one without ``zerosize_ok``, shapes that do not broadcast)."""
    operands = list(op) if isinstance(op, (list, tuple)) else [op]
    if any(a is None for a in operands):
        raise _refuse("an operand None (an output nditer allocates)",
                      "allocate it first (out = np.empty(shape)) and pass it with op_flags=['writeonly']")
    extra = sorted(set(flags or ()) - _HARMLESS_FLAGS - _TRACKING_FLAGS)
    if extra:
        raise _refuse(f"flags={extra}", "loop over np.ndindex(x.shape) to have the index, or drop the flags")
    if op_axes is not None or itershape is not None:
        raise _refuse("op_axes or itershape", "reshape the operands before the loop")
    for operand_flags in _operand_flags(op_flags, len(operands)):
        extra = sorted(set(operand_flags) - {"readonly", "readwrite", "writeonly", "no_broadcast",
                                              "contig", "aligned", "nbo", "no_subtype", "copy"})
        if extra:
            raise _refuse(f"op_flags {extra}", "use 'readonly' or 'readwrite'")
    np.nditer(op, flags=flags, op_flags=op_flags, order=order, casting=casting, op_dtypes=op_dtypes,
              buffersize=buffersize)


def _operand_index(multi_index: tuple, shape: tuple) -> tuple:
    """The 0-d view's index into an operand of ``shape`` broadcast to the iteration's shape."""
    own = multi_index[len(multi_index) - len(shape):] if shape else ()
    return tuple(0 if n == 1 else i for i, n in zip(own, shape)) + (Ellipsis,)


def nditer_plan(operands: list, order: str) -> list:
    """Per step of NumPy's iterator, the index of each operand's 0-d view: NumPy's own iterator
    on the primals, with ``multi_index``, visits the elements in the order it does without."""
    iterator = np.nditer(operands, flags=["multi_index", "refs_ok", "zerosize_ok"], order=order)
    steps = []
    while not iterator.finished:
        steps.append([_operand_index(iterator.multi_index, np.shape(a)) for a in operands])
        iterator.iternext()
    return steps


def nditer_writable(op_flags: Any, count: int) -> list[bool]:
    return [bool(_WRITING & set(f)) for f in _operand_flags(op_flags, count)]


nondifferentiable(nditer_plan, nditer_writable, check_nditer_form)


def _view(array: Any, index: tuple, writable: bool) -> Any:
    view = array[index]
    return view if writable else _read_only(view)


def _views(arrays: list, steps: list, writable: list) -> list:
    if len(arrays) == 1:
        return [_view(arrays[0], step[0], writable[0]) for step in steps]
    return [tuple([_view(a, index, w) for a, index, w in zip(arrays, step, writable)]) for step in steps]


def nditer_views(operands: list, steps: list, writable: list) -> list:
    """The 0-d views ``np.nditer`` yields, one per step of ``steps`` (``nditer_plan``'s indices,
    computed from the primals: a tangent with another memory layout is viewed in the same order)."""
    return _views(operands, steps, writable)


def _derivative_views(arrays: list, derivatives: Any, steps: list, none: Any) -> list:
    """The views' fdata (or tangents): the same views of the operands' fdata, writable, as
    cotangents accumulate there; ``none`` (NoTangent, as in containers) for an operand without one."""
    parts = derivatives if isinstance(derivatives, list) else [none] * len(arrays)

    def view(d: Any, index: tuple) -> Any:
        return d[index] if isinstance(d, np.ndarray) else none

    if len(arrays) == 1:
        return [view(parts[0], step[0]) for step in steps]
    return [tuple([view(d, index) for d, index in zip(parts, step)]) for step in steps]


@rrule_for(nditer_views)
def _nditer_views_rrule(operands: CoDual, steps: CoDual, writable: CoDual) -> tuple[CoDual, Callable]:
    arrays, plan = primal(operands), primal(steps)
    out = CoDual(_views(arrays, plan, primal(writable)), _derivative_views(arrays, operands.fdata, plan, NoTangent))
    return out, lambda dy: (NoRData, NoRData, NoRData, NoRData)  # views: cotangents reach the operands' fdata


@frule_for(nditer_views)
def _nditer_views_frule(operands: Any, steps: Any, writable: Any) -> Dual:
    arrays, plan = primal(operands), primal(steps)
    tangents = operands.tangent if isinstance(operands, Dual) else NoTangent
    return Dual(_views(arrays, plan, primal(writable)), _derivative_views(arrays, tangents, plan, NoTangent))


linear(nditer_views)


def _nditer(op: Any, flags: Any = None, op_flags: Any = None, op_dtypes: Any = None, order: str = "K",
            casting: str = "safe", op_axes: Any = None, itershape: Any = None, buffersize: int = 0) -> list:
    check_nditer_form(op, flags, op_flags, order, casting, op_dtypes, op_axes, itershape, buffersize)
    several = isinstance(op, (list, tuple))
    operands = [np.asarray(a) for a in op] if several else [np.asarray(op)]
    writable = nditer_writable(op_flags, len(operands))
    if op_dtypes is not None:
        operands = cast_for_nditer(operands, op_dtypes, writable)
    steps = nditer_plan(operands, order)
    if "external_loop" in (flags or ()):
        return nditer_chunk_views(operands, steps, nditer_chunk_lengths(operands, flags, order, buffersize), writable)
    views = nditer_views(operands, steps, writable)
    tracked = nditer_positions(operands, flags, order)
    if tracked is None:
        return views
    return TrackedNditer(views, operands, tracked[0], tracked[1], several)


def nditer_positions(operands: list, flags: Any, order: str) -> tuple | None:
    """Per step, the ``multi_index`` and the ``index`` NumPy's own iterator reports with the
    tracking flags given (None for one not tracked); None when none is."""
    tracking = sorted(set(flags or ()) & _TRACKING_FLAGS)
    if not tracking:
        return None
    iterator = np.nditer(operands, flags=tracking + ["refs_ok", "zerosize_ok"], order=order)
    has_multi, has_index = "multi_index" in tracking, "c_index" in tracking or "f_index" in tracking
    multi, index = [], []
    while not iterator.finished:
        multi.append(iterator.multi_index if has_multi else None)
        index.append(iterator.index if has_index else None)
        iterator.iternext()
    return (multi if has_multi else None), (index if has_index else None)


nondifferentiable(nditer_positions)


class TrackedNditer:
    """``np.nditer`` with ``multi_index``, ``c_index`` or ``f_index``, under differentiation: the
    list of views a plain loop yields, walked by a position, with the iterator's protocol
    (``for v in it``, ``while not it.finished: ... it.iternext()``, ``it[k]``, ``it.value``,
    ``it.multi_index``, ``it.index``, ``it.iterindex``, ``reset()``); its methods are
    differentiated like user code. Its type is this class, not ``np.nditer``."""

    def __init__(self, views, operands, multi, index, several):
        self._views = views
        self.operands = tuple(operands)
        self._multi = multi
        self._index = index
        self._several = several
        self._position = 0
        self._started = False

    @property
    def finished(self):
        return self._position >= len(self._views)

    @property
    def itersize(self):
        return len(self._views)

    @property
    def iterindex(self):
        return self._position

    def _here(self):
        if self._position >= len(self._views):
            raise ValueError("Iterator is past the end")
        return self._views[self._position]

    @property
    def value(self):
        return self._here()

    @property
    def multi_index(self):
        if self._multi is None:
            raise ValueError("Iterator is not tracking a multi-index")
        self._here()
        return self._multi[self._position]

    @property
    def index(self):
        if self._index is None:
            raise ValueError("Iterator does not have an index")
        self._here()
        return self._index[self._position]

    def __getitem__(self, k):
        here = self._here()
        return here[k] if self._several else (here, )[k]

    def __setitem__(self, k, value):
        here = self._here()
        view = here[k] if self._several else (here, )[k]
        view[...] = value

    def __len__(self):
        return len(self._views)

    def iternext(self):
        self._position = self._position + 1
        return self._position < len(self._views)

    def reset(self):
        self._position = 0
        self._started = False

    def __iter__(self):
        return self

    def __next__(self):
        if self._started:
            self._position = self._position + 1
        self._started = True
        if self._position >= len(self._views):
            raise StopIteration
        return self._views[self._position]


defined_as(np.nditer, _nditer)

# --------------------------------------------------------------------------------------------
# np.ndenumerate, np.broadcast, np.fromiter
# --------------------------------------------------------------------------------------------


def c_order_indices(shape: tuple) -> list:
    return list(np.ndindex(*shape))


def broadcast_shape_of(arrays: list) -> tuple:
    return np.broadcast_shapes(*[np.shape(a) for a in arrays])


nondifferentiable(c_order_indices, broadcast_shape_of)


def _element_values(arrays: list, shape: tuple) -> list:
    """Each array's elements broadcast to ``shape``, in C order (NumPy scalars)."""
    return [list(np.broadcast_to(a, shape).ravel()) for a in arrays]


class BroadcastElements(list):
    """``np.broadcast(*arrays)`` under differentiation: the list of what it yields, with the
    broadcast object's ``shape``, ``size``, ``nd``/``ndim`` and ``numiter``."""

    def __init__(self, items: Any, shape: tuple, numiter: int) -> None:
        super().__init__(items)
        self.shape, self.numiter = tuple(shape), numiter
        self.nd = self.ndim = len(self.shape)
        self.size = int(np.prod(self.shape, dtype=np.int64))


def c_order_elements(arrays: list, shape: tuple, indexed: bool) -> list:
    """What ``np.ndenumerate(x)`` (``indexed``: ``[(index, x[index]), ...]``) or
    ``np.broadcast(*arrays)`` (``[(a[index], b[index]), ...]``, broadcast) yields, in C order."""
    columns = _element_values(arrays, shape)
    if indexed:
        return list(zip(c_order_indices(shape), columns[0]))
    return BroadcastElements(zip(*columns), shape, len(arrays))


def _position(indexed: bool, k: int) -> int:
    return 1 if indexed else k


def _element_cotangents(out_fdata: list, k: int, shape: tuple, dtype: Any) -> np.ndarray:
    """Array ``k``'s elements' cotangents, read from the output list's fdata, in ``shape``."""
    values = [entry[k] if entry[k] is not NoTangent else 0.0 for entry in out_fdata]
    return np.array(values, dtype=np.result_type(dtype, float)).reshape(shape)


@rrule_for(c_order_elements)
def _c_order_elements_rrule(arrays: CoDual, shape: CoDual, indexed: CoDual) -> tuple[CoDual, Callable]:
    xs, n, with_index = primal(arrays), primal(shape), primal(indexed)
    out = output(c_order_elements(xs, n, with_index))
    fdatas = arrays.fdata if isinstance(arrays.fdata, list) else [NoTangent] * len(xs)

    def pullback(dy: Any) -> tuple:
        for k, (x, fd) in enumerate(zip(xs, fdatas)):
            if isinstance(fd, np.ndarray) and len(out.fdata):
                fd += unbroadcast(_element_cotangents(out.fdata, _position(with_index, k), n, x.dtype), np.shape(x))
        return NoRData, NoRData, NoRData, NoRData

    return out, pullback


@frule_for(c_order_elements)
def _c_order_elements_frule(arrays: Any, shape: Any, indexed: Any) -> Dual:
    xs, n, with_index = primal(arrays), primal(shape), primal(indexed)
    y = c_order_elements(xs, n, with_index)
    tangents = arrays.tangent if isinstance(arrays, Dual) and isinstance(arrays.tangent, list) else [NoTangent] * len(xs)
    columns = [[fit_tangent(t, v) for t, v in zip(np.broadcast_to(t, n).ravel(), values)]
               if isinstance(t, np.ndarray) else [NoTangent] * len(values)
               for t, values in zip(tangents, _element_values(xs, n))]
    if with_index:
        return Dual(y, [(NoTangent, t) for t in columns[0]])
    return Dual(y, [tuple(ts) for ts in zip(*columns)])


linear(c_order_elements)


def _ndenumerate(arr: Any) -> list:
    x = np.asarray(arr)
    return c_order_elements([x], x.shape, True)


def _broadcast(*args: Any) -> list:
    arrays = [np.asarray(a) for a in args]
    return c_order_elements(arrays, broadcast_shape_of(arrays), False)


def _fromiter(iter: Any, dtype: Any, count: int = -1, like: Any = None) -> np.ndarray:  # noqa: A002 - NumPy's name
    items = list(iter)
    if count >= 0:
        if len(items) < count:
            raise ValueError(f"iterator too short: Expected {count} but iterator had only {len(items)} items.")
        items = items[:count]
    return np.array(items, dtype=dtype)


defined_as(np.ndenumerate, _ndenumerate)
defined_as(np.broadcast, _broadcast, validate=True)  # NumPy's own error for shapes that do not broadcast
def _check_fromiter(iter: Any, dtype: Any, count: int = -1, like: Any = None) -> None:  # noqa: A002
    """NumPy's own errors (items that are not numbers of ``dtype``), from a call on a sequence
    only: a one-shot iterator must reach the definition whole (it then refuses it by name)."""
    if isinstance(iter, (list, tuple, np.ndarray, range)):
        np.fromiter(iter, dtype, count)


defined_as(np.fromiter, _fromiter, validate=_check_fromiter)

# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


def _flat_reads(x: np.ndarray) -> Any:
    f = x.flat
    return f[2] * f[0] + np.sum(f[1:4] ** 2) + np.sum(x.flat[[0, 2]]) + sum(x.flat) + np.array(x.flat) * list(x.flat)[1]


def _flat_writes(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    x.flat[1] = v[0] * v[1]
    x.flat[2:5] = v * v
    return x * x


def _ndenumerate_sum(x: np.ndarray) -> Any:
    total = 0.0
    for index, v in np.ndenumerate(x):
        total = total + (index[0] + 1) * v * v
    return total


def _nditer_sum(x: np.ndarray) -> Any:
    total = 0.0
    for v in np.nditer(x):
        total = total + v * v
    return total


def _nditer_pairs(a: np.ndarray, b: np.ndarray) -> Any:
    total = 0.0
    for u, v in np.nditer([a, b]):
        total = total + u * np.sin(v)
    return total


_WEIGHTS = np.array([[1.0, 2.0, 0.5], [3.0, 4.0, -1.0]])


def _multi_index_loop(x: np.ndarray) -> Any:
    it = np.nditer(x, flags=["multi_index"])
    total = 0.0
    for v in it:
        total = total + v * v * _WEIGHTS[it.multi_index]
    return total


def _c_index_writes(x: np.ndarray) -> Any:
    y = x.copy()
    it = np.nditer(y, flags=["c_index"], op_flags=["readwrite"])
    while not it.finished:
        it[0] = np.sin(it[0]) * (it.index + 1)
        it.iternext()
    return np.sum(y * _WEIGHTS)


def _tracked_pairs(a: np.ndarray, b: np.ndarray) -> Any:
    it = np.nditer([a, b], flags=["f_index", "multi_index"])
    total = 0.0
    for u, v in it:
        total = total + u * v * it.index + np.cos(u) * it.multi_index[0]
    return total


def _broadcast_pairs(a: np.ndarray, b: np.ndarray) -> Any:
    total = 0.0
    for u, v in np.broadcast(a, b):
        total = total + u * v * v
    return total


def _fromiter_squares(x: np.ndarray) -> np.ndarray:
    return np.fromiter((v * v for v in x), dtype=float)


CASES = [
    Case(_flat_reads, randn(2, 3), name="x.flat reads: item, slice, list, sum, np.array, list()"),
    Case(_flat_writes, randn(2, 3), randn(3), name="x.flat writes: item and slice"),
    Case(_ndenumerate_sum, randn(2, 3), name="for index, v in np.ndenumerate(x)"),
    Case(_nditer_sum, randn(2, 3), name="for v in np.nditer(x)"),
    Case(_nditer_pairs, randn(3), randn(2, 1), name="for u, v in np.nditer([a, b]) (broadcast)"),
    Case(_multi_index_loop, randn(2, 3), name="np.nditer(x, flags=['multi_index']): it.multi_index"),
    Case(_c_index_writes, randn(2, 3), name="np.nditer c_index, readwrite: while not it.finished, it[0] ="),
    Case(_tracked_pairs, randn(3), randn(2, 1), name="np.nditer([a, b], f_index, multi_index) (broadcast)"),
    Case(_broadcast_pairs, randn(3), randn(2, 1), name="for u, v in np.broadcast(a, b)"),
    Case(_fromiter_squares, randn(4), name="np.fromiter(generator, dtype=float)"),
]
