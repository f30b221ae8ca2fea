"""The global random states across the two passes of a JVP (``api/forward.py``).

A JVP's first pass multiplies tangents plainly; only when its output tangent holds a NaN does a
second pass run by the strong-zero rule, and that pass must draw the random numbers the first
drew. Saving NumPy's global state before every JVP (``np.random.get_state()``: a Python loop over
its 624 words, about 60% of a JVP of ``np.sum``) is paid by every call for the rare one that
needs it, so the states are saved lazily instead:

* each pass notes the raw bytes of the global ``MT19937``'s state (a 2.5 kB copy through its
  ``ctypes`` interface, no Python loop);
* the forward runtime calls ``before_rule(fn)`` before every registered rule: the first rule of
  the pass that may draw (``may_draw``: any rule but those of modules known not to draw nor to
  call user code plainly) saves NumPy's full legacy state (its cached Gaussian included) and
  Python's ``random`` state, once;
* the second pass starts from those saved states; if nothing was saved but the raw bytes moved
  (something drew past the rules: a backstop, none is known to), it starts from the raw bytes,
  and ``api/forward.py`` compares the two passes' values, refusing a second run that drew other
  numbers. (A cached Gaussian taken past the rules would leave the raw bytes as they were: the
  reason ``may_draw`` lists the modules that cannot draw rather than those that can.)

A pass inside a pass (a JVP of a function calling ``yb.jvp``) keeps its own record; the outer
pass adopts the inner one's save when it had none (the inner pass's first draw was the outer's
first too).
"""
from __future__ import annotations

import ctypes
import random
import threading
from typing import Any

import numpy as np

from ..ir.primitives import as_sequence, cell_get, cell_set, check_unpack, min_len, mkdict, mklist, mkset, mktuple
from ..rules.core import FRULES

_MT_STATE_BYTES = 624 * 4 + 4  # numpy's mt19937_state: uint32_t key[624]; int pos


class _Watch(threading.local):
    active = False  # inside a forward pass of yb.jvp or jacobian
    saved: Any = None  # (NumPy's legacy state, Python's random state, raw bytes then) before the pass's first draw


WATCH = _Watch()


def _global_bit_generator() -> Any:
    return np.random.mtrand._rand._bit_generator


_STATE_VIEW: list = [(None, None)]  # (the global bit generator last seen, a byte view of its state); one
# slot, so a thread never reads one generator's view with another's


def raw_state() -> bytes | None:
    """The raw bytes of NumPy's global MT19937 state, or None for another bit generator."""
    generator = _global_bit_generator()
    seen, view = _STATE_VIEW[0]
    if generator is not seen:  # (its ``ctypes`` interface is built anew at each read: costly)
        if type(generator) is not np.random.MT19937:
            return None
        # a NumPy view of the state's memory, fixed for the generator's life (the cache keeps it
        # alive): ``tobytes`` copies it for a tenth of ``ctypes.string_at``'s call
        memory = (ctypes.c_uint8 * _MT_STATE_BYTES).from_address(generator.ctypes.state_address)
        view = np.ctypeslib.as_array(memory)
        _STATE_VIEW[0] = (generator, view)
    return view.tobytes()


def _set_raw_state(raw: bytes) -> None:
    generator = _global_bit_generator()
    ctypes.memmove(generator.ctypes.state_address, raw, _MT_STATE_BYTES)


#: modules of rules that neither draw random numbers nor call user code outside the differentiation
#: (a rule that calls user code plainly, ``sorted``'s key or a ``scipy.integrate`` integrand, may draw)
_DRAWLESS = tuple(f"yuebing.rules.{name}" for name in (
    "operators.", "indexing.", "linalg.", "containers.", "math_cmath", "scipy_special", "scipy_bessel",
    "scipy_linalg_decomp", "scipy_linalg_solvers", "scipy_linalg_special", "scipy_rules", "numpy_elementwise",
    "numpy_vectorize",  # np.vectorize(pyfunc) only builds the object: its calls run pyfunc's forward code
    "numpy_reductions", "numpy_shape", "numpy_creation", "numpy_ranges", "numpy_zero", "numpy_join_split", "numpy_rearrange",
    "numpy_selection", "numpy_cumulative", "numpy_fft", "numpy_statistics", "numpy_nan_statistics",
    "numpy_covariance", "numpy_counting", "numpy_interp"))


#: the IR's primitives that only build or take apart containers and cells
_DRAWLESS_PRIMITIVES = frozenset({mktuple, mklist, mkdict, mkset, check_unpack, cell_get, cell_set, min_len})
_RANDOM_CLASSES = (np.random.RandomState, np.random.Generator, random.Random)


def may_draw(fn: Any, args: tuple = ()) -> bool:
    """Whether registered rule ``fn`` may draw from a global random state: any rule but those of
    the ``_DRAWLESS`` modules, yuebing's zero-derivative rules of functions that are not a random
    generator's, and container primitives (a draw there would go past the lazy save)."""
    try:
        origin = FRULES.origin.get(fn, "")
        if fn in _DRAWLESS_PRIMITIVES or args and (fn is as_sequence and type(args[0].primal) in (tuple, list)
                                                   or fn is getattr and type(args[0].primal) is np.ndarray):
            return False
    except TypeError:  # an unhashable callable
        return True
    if origin == "yuebing.rules.zero_derivative":  # len, comparisons, np.empty_like... but random.random
        owner = getattr(fn, "__self__", None) or getattr(fn, "__objclass__", None)
        return isinstance(owner, _RANDOM_CLASSES) or isinstance(owner, type) and issubclass(owner, _RANDOM_CLASSES) \
            or "random" in str(getattr(fn, "__module__", None))
    return not origin.startswith(_DRAWLESS)


def save_states() -> None:
    """Save the global random states, unless this pass saved them already."""
    if WATCH.saved is None:
        WATCH.saved = (np.random.get_state(), random.getstate(), raw_state())


def before_rule(fn: Any, args: tuple) -> None:
    """Called before a registered rule runs in a forward pass (on duals ``args``): save the states
    before its first draw."""
    if WATCH.active and WATCH.saved is None and may_draw(fn, args):
        save_states()


class PassRecord:
    """What one pass noted: the raw state before it, and the full states saved before its first draw."""

    __slots__ = ("raw", "saved", "_outer")

    def __init__(self) -> None:
        """Begin watching a pass (generators other than MT19937: the full state, saved now)."""
        self._outer = (WATCH.active, WATCH.saved)
        self.raw = raw_state()
        self.saved = None
        WATCH.active, WATCH.saved = True, None
        if self.raw is None:
            save_states()

    def end(self) -> None:
        """Stop watching; the enclosing pass adopts this one's save if it had none."""
        self.saved = WATCH.saved
        active, outer_saved = self._outer
        WATCH.active, WATCH.saved = active, outer_saved if outer_saved is not None else self.saved

    def restore(self) -> bool:
        """Put the global states back as they were for this pass's draws; True when they were
        restored only from the raw bytes (something drew past the rules: the caller checks the
        second pass's value)."""
        if self.saved is not None and self.saved[2] == self.raw:  # no draw past the rules before the save
            np.random.set_state(self.saved[0])
            random.setstate(self.saved[1])
            return False
        if self.raw is not None and raw_state() != self.raw:
            _set_raw_state(self.raw)
            return True
        return False


__all__ = ["PassRecord", "WATCH", "before_rule", "may_draw", "raw_state", "save_states"]
