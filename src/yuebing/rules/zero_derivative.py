"""Functions whose derivative is zero, declared in one place (DESIGN.md §4).

Their results are integers, booleans, indices, shapes, predicates or piecewise-constant values.
Random draws live in ``numpy_random.py`` (some have pathwise derivatives in their parameters).
"""
import _random
import ast
import builtins
import collections
import datetime
import importlib
import importlib.metadata
import inspect
import logging
import math
import operator
import os
import random
import re
import sys
import threading
import time
import types
import typing
import warnings

import numpy as np

from ..ir import generators
from ..tangents import register_nondifferentiable_type
from .cases import Case, randn
from .core import RuleArgumentError
from .declare import nondifferentiable, nondifferentiable_as, nondifferentiable_methods

nondifferentiable(
    # builtins (int-, bool- and index-valued)
    builtins.round, builtins.int, builtins.bool, builtins.range,
    builtins.len, builtins.isinstance, builtins.issubclass, builtins.id, builtins.hash,
    builtins.type, builtins.callable, builtins.hasattr, builtins.repr, builtins.str,
    builtins.format, builtins.ord, builtins.chr, builtins.bin, builtins.hex, builtins.oct,
    builtins.all, builtins.any, builtins.print, builtins.slice,
    builtins.dir,  # names (scikit-learn's Kernel.hyperparameters lists its attributes so)
    # operator: comparisons and predicates
    operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne,
    operator.not_, operator.truth, operator.is_, operator.is_not, operator.contains,
    operator.index, operator.invert, operator.and_, operator.or_, operator.xor,
    operator.lshift, operator.rshift, operator.countOf, operator.indexOf,
    # math: integer-valued and predicates
    math.floor, math.ceil, math.trunc, math.isfinite, math.isinf, math.isnan, math.isclose,
    math.factorial, math.comb, math.perm, math.gcd, math.lcm, math.isqrt,
    # numpy: indices, shapes, predicates, piecewise constants
    np.argmax, np.argmin, np.argsort, np.argwhere, np.nonzero, np.flatnonzero, np.searchsorted,
    np.digitize, np.count_nonzero, np.any, np.all, np.isclose, np.allclose, np.array_equal,
    np.array_equiv, np.shape, np.ndim, np.size, np.result_type, np.iscomplexobj, np.isrealobj,
    np.isscalar, np.floor, np.ceil, np.trunc, np.rint, np.fix, np.round, np.around, np.sign, np.isnan, np.isinf,
    np.isfinite, np.signbit, np.greater, np.greater_equal, np.less, np.less_equal, np.equal,
    np.not_equal, np.logical_and, np.logical_or, np.logical_not, np.logical_xor,
    np.floor_divide, np.isreal, np.iscomplex, np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.invert, np.left_shift,
    np.right_shift, np.gcd, np.lcm, np.unravel_index, np.ravel_multi_index, np.indices,
    np.tril_indices, np.triu_indices, np.diag_indices,
    np.ix_,  # an index builder: a float array passed to it is an index, not data
    # numpy: constant arrays (values do not depend on the arguments)
    np.zeros, np.ones, np.empty, np.eye, np.identity, np.tri, np.zeros_like, np.ones_like,
    np.empty_like, np.random.default_rng,
)

# side effects with no derivative (issue 13: run once per gradient call, as in a plain call):
# clocks, the random module's C draws (its Python methods -- uniform, gauss... -- are derived
# from source: pathwise in their parameters), logging, warnings
nondifferentiable(
    time.time, time.perf_counter, time.monotonic, time.process_time, time.time_ns, time.perf_counter_ns,
    time.monotonic_ns, time.sleep,
    logging.debug, logging.info, logging.warning, logging.error, logging.critical, logging.exception,
    logging.log, logging.Logger.debug, logging.Logger.info, logging.Logger.warning, logging.Logger.error,
    logging.Logger.critical, logging.Logger.exception, logging.Logger.log, logging.Logger.isEnabledFor,
    logging.getLogger, warnings.warn, warnings.simplefilter, warnings.filterwarnings, warnings.resetwarnings, random.Random.seed, random.Random.getstate, random.Random.setstate,
)
# introspection library code asks on its way (scipy.stats' axis_nan_policy asks the recursion
# limit): ints, strings and flags about the interpreter, the process and its threads
nondifferentiable(
    sys.getrecursionlimit, sys.getsizeof, sys.getrefcount, sys.getdefaultencoding, sys.getfilesystemencoding,
    sys.is_finalizing, sys.intern, sys.getswitchinterval, os.getenv, os.getpid, os.cpu_count, os.fspath,
    threading.get_ident, threading.get_native_id, threading.current_thread, threading.main_thread,
    threading.active_count,
    inspect.isfunction, inspect.ismethod, inspect.isclass,
    inspect.isgeneratorfunction, inspect.iscoroutinefunction, inspect.getmodule, inspect.currentframe,
)
# a read-only view of a dict that is not data: a signature's parameters (inspect.Signature.bind,
# behind scikit-learn's argument validation), a class's namespace
nondifferentiable_methods(types.MappingProxyType, "keys", "values", "items", "__iter__", "__len__", "__contains__")
register_nondifferentiable_type(inspect.Parameter)  # its default is a constant of a def
register_nondifferentiable_type(inspect.Signature)

# annotations evaluated when library code defines a function (``x: ArrayLike | None``)
# and the typing module's own forms, bare (a set of them: functools.singledispatch's register
# reads annotations; typing.Union, typing.Callable, typing.List, a TypeVar)
for _annotation_type in (types.UnionType, types.GenericAlias, type(typing.Optional[int]), type(typing.List[int]),
                         type(typing.Union), type(typing.Literal), type(typing.Callable), type(typing.Tuple),
                         type(typing.List), typing.TypeVar, typing.ParamSpec):
    register_nondifferentiable_type(_annotation_type)
# ... read as types (strings evaluated: a nested function's annotations), and source compiled
nondifferentiable(typing.get_type_hints, builtins.compile)
# os.environ (its Mapping.get is Python code reading __getitem__): strings
nondifferentiable(type(os.environ).__getitem__, type(os.environ).__iter__, type(os.environ).__len__,
                  type(os.environ).copy)
# an import returns a module (a lazy backend's __getattr__ imports the one it forwards to)
nondifferentiable(importlib.import_module)
# installed packages' metadata (plugin discovery scans the file system: narwhals, behind
# scikit-learn's input checks): strings and entry points
nondifferentiable(importlib.metadata.entry_points, importlib.metadata.distributions, importlib.metadata.version,
                  importlib.metadata.metadata, importlib.metadata.requires, importlib.metadata.packages_distributions)
nondifferentiable_methods(_random.Random, "random", "getrandbits")  # the C base of random.Random
nondifferentiable_methods(int, "bit_length", "bit_count")  # (random.Random._randbelow)
nondifferentiable_methods(slice, "indices")  # integers (scipy.sparse's A[1:3])
# super().__init__() in a class whose next base is object: a no-op (it raises on extra arguments)
nondifferentiable(object.__init__)
# cls.__new__(cls) of a class without a __new__ of its own (scikit-learn's CallbackContext, behind
# every fit): an empty instance, whose zero tangent takes the attributes written to it later
nondifferentiable(object.__new__)
# random bytes from the operating system and the date (scikit-learn names and dates each fit's
# callback context: uuid.uuid4(), datetime.now(timezone.utc)); a datetime carries no derivative
nondifferentiable(os.urandom, int.from_bytes, datetime.datetime.now, datetime.datetime.utcnow, datetime.date.today)
for _clock_type in (datetime.datetime, datetime.date, datetime.time, datetime.timedelta, datetime.timezone):
    register_nondifferentiable_type(_clock_type)

# (list and tuple's index and count: comparing_calls.py, whose comparisons may call user dunders)
# text carries no derivative: every public method of str and bytes (formatting a float included)
nondifferentiable_methods(str, *(name for name in dir(str) if not name.startswith("_")))
nondifferentiable_methods(bytes, *(name for name in dir(bytes) if not name.startswith("_")))
nondifferentiable(str.maketrans, bytes.maketrans)  # static methods: called as functions, not on an instance
# regular expressions match text: a kernel or activation named by a string and parsed with re
# (numpy-ml's KernelInitializer("RBFKernel(sigma=1.1)")); their patterns and matches carry none
nondifferentiable(re.compile, re.match, re.fullmatch, re.search, re.findall, re.finditer, re.sub, re.subn,
                  re.split, re.escape)
_PATTERN_METHODS = ("match", "fullmatch", "search", "findall", "finditer", "sub", "subn", "split")
nondifferentiable_methods(re.Pattern, *_PATTERN_METHODS)
nondifferentiable_methods(re.Match, "group", "groups", "groupdict", "start", "end", "span", "expand")
register_nondifferentiable_type(re.Pattern)
register_nondifferentiable_type(re.Match)


def _literal_value(source: object, *namespaces: object, **named_namespaces: object) -> object:
    """``eval`` of a literal (``eval("1.1")``: numpy-ml reads a kernel's parameters so): the
    literal, a constant. An expression reading names could read the function's variables, whose
    derivatives a zero-derivative eval would drop: refused."""
    if isinstance(source, str):
        try:
            return ast.literal_eval(source)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            pass
    raise RuleArgumentError(
        f"eval({source!r}): yuebing differentiates eval of a literal only (eval('1.1'), eval('[1, 2]')); "
        "this one may read variables, whose derivatives it would drop. What to do: compute the "
        "expression in Python code instead of eval")


nondifferentiable_as(builtins.eval, _literal_value)
nondifferentiable_methods(np.ndarray, "argmax", "argmin", "argsort", "nonzero", "any", "all", "round")
# numpy.ma's questions about an array (library code asks them of plain arrays: interp1d): their
# answers carry no derivative, and a masked array itself is refused wherever it arrives
nondifferentiable(np.ma.isMaskedArray, np.ma.isMA, np.ma.isarray, np.ma.is_masked, np.ma.is_mask, np.ma.getmask,
                  np.ma.getmaskarray)



# a with statement's manager around a yield of a lazy generator, when nothing handed to it holds
# floats: made, entered and exited without derivatives, as with headers are elsewhere
nondifferentiable(generators.runs_plainly, generators.made_plainly, generators.PlainManager.__enter__,
                  generators.PlainManager.__exit__, generators.watch)
register_nondifferentiable_type(generators.PlainManager)

CASES = [
    Case(len, [1.0, 2.0]),
    Case(operator.lt, 1.0, 2.0),
    Case(np.argmax, randn(5)),
    Case(np.floor, randn(4) * 3),
    Case(np.sign, randn(4)),
    Case(np.round, randn(4) * 3, 1),
    Case(np.isclose, randn(3), randn(3)),
    Case(math.floor, 2.5),
    Case(np.searchsorted, np.sort(randn(5)), randn(3)),
    Case(logging.debug, "x=%s", 1.5),
]
