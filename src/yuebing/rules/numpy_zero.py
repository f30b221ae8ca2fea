"""The rest of NumPy's public namespace whose derivative is zero (issue 14's coverage table).

``zero_derivative.py`` declares the common ones (comparisons, ``argmax``, ``floor``); this file
declares what the coverage walk (``rules/table.py``, ``python -m yuebing rules --missing``) found
without an entry: dtype and type utilities, predicates, index builders, bit packing, integer
scalar types, calendars, printing and configuration, file I/O, and window functions of an
integer length. Their results are types, booleans, integers, strings, files or constants: no
derivative flows through them. Differentiable functions without a rule are listed with the
reason in ``numpy_coverage.py`` instead, never here.

A function that gained a real rule in a module loaded before this one is skipped (a rule is
never replaced by a zero), and ``tests/test_numpy_coverage.py`` fails until its name is removed
from the lists below.
"""
import numpy as np

from ..tangents import register_nondifferentiable_type
from .cases import Case, randn
from .core import RRULES
from .declare import nondifferentiable, nondifferentiable_methods


def _declare_zero(*functions: object) -> None:
    """``nondifferentiable`` for those of ``functions`` without a rule yet."""
    nondifferentiable(*(f for f in functions if RRULES.lookup(f) is None))


#: functions of types, dtypes and shapes (no array data in, none out)
TYPE_UTILITIES = (
    np.can_cast, np.min_scalar_type, np.common_type, np.promote_types, np.mintypecode, np.issubdtype,
    np.isdtype, np.typename, np.datetime_data, np.iterable, np.isfortran, np.broadcast_shapes,
    np.finfo, np.iinfo, np.dtype, np.__array_namespace_info__,
)
#: boolean-, index- and integer-valued functions of array data
PREDICATES_AND_INDICES = (
    np.isin, np.isneginf, np.isposinf, np.isnat, np.may_share_memory, np.shares_memory,
    np.diag_indices_from, np.tril_indices_from, np.triu_indices_from, np.mask_indices, np.lexsort,
    np.nanargmax, np.nanargmin, np.ndindex, np.packbits, np.unpackbits, np.bitwise_count,
    np.spacing,  # piecewise constant: the gap to the next float changes only at powers of 2
)
#: integer, boolean, string and date scalar types (a float converted to them has no derivative)
INTEGER_TYPES = (
    np.bool_, np.byte, np.int8, np.int16, np.int32, np.int64, np.intc, np.intp, np.long,
    np.longlong, np.short, np.ubyte, np.uint, np.uint8, np.uint16, np.uint32, np.uint64, np.uintc,
    np.uintp, np.ulong, np.ulonglong, np.ushort, np.str_, np.bytes_, np.datetime64, np.timedelta64,
    np.busdaycalendar, np.busday_count, np.busday_offset, np.is_busday, np.datetime_as_string,
)
#: text, printing and configuration
TEXT_AND_SETTINGS = (
    np.array2string, np.array_repr, np.array_str, np.base_repr, np.binary_repr,
    np.format_float_positional, np.format_float_scientific, np.get_printoptions,
    np.set_printoptions, np.info, np.show_config, np.show_runtime, np.get_include, np.getbufsize,
    np.setbufsize, np.geterr, np.seterr, np.geterrcall, np.seterrcall, np.einsum_path, np.test,
    np.linalg.LinAlgError,
)
#: files and bytes: what is read is data from outside, what is written leaves the computation
FILE_IO = (
    np.save, np.savez, np.savez_compressed, np.savetxt, np.load, np.loadtxt, np.genfromtxt,
    np.fromregex, np.fromfile, np.frombuffer, np.fromstring,
)
#: window functions of an integer length (their values are constants)
WINDOWS = (np.bartlett, np.blackman, np.hamming, np.hanning)

ALL = TYPE_UTILITIES + PREDICATES_AND_INDICES + INTEGER_TYPES + TEXT_AND_SETTINGS + FILE_IO + WINDOWS
_declare_zero(*ALL)
# machine limits are constants: their fields (NumPy 2's cached properties finfo.tiny,
# smallest_normal) read as such (scikit-learn's power transform reads finfo.tiny)
register_nondifferentiable_type(np.finfo)
register_nondifferentiable_type(np.iinfo)

#: ndarray methods with zero derivative (searching, bytes, files, flags)
METHODS = ("searchsorted", "dump", "dumps", "tobytes", "tofile")  # (setflags: numpy_flags.py undoes it)
nondifferentiable_methods(np.ndarray, *(m for m in METHODS if (np.ndarray, m) not in RRULES.by_method))

CASES = [
    Case(np.isneginf, randn(4)),
    Case(np.isin, randn(5), randn(3)),
    Case(np.lexsort, (randn(4), randn(4))),
    Case(np.nanargmax, randn(3, 4), kwargs={"axis": 1}),
    Case(np.spacing, randn(4)),
    Case(np.int64, 2.5),
    Case(np.array2string, randn(3)),
    Case(np.hanning, 5),
    Case(np.ndarray.searchsorted, np.sort(randn(5)), randn(3)),
    Case(np.ndarray.tobytes, randn(3)),
]
