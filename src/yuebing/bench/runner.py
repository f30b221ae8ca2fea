"""Running the suite: per table (``modes``) and case, the primal time, then each column checked
against finite differences and, if right, timed; the gradient table adds yuebing's time to first
gradient and its peak memory.

Timing: ``time.perf_counter``; warm-up calls, then samples of enough back-to-back calls to last
about ``budget / 25`` seconds each, taken until ``budget`` seconds are spent (at least 3 samples);
times are medians per call. A ratio is the median, over interleaved pairs of samples, of
gradient time / NumPy primal time, so that a machine busy with other work for a while skews
numerator and denominator alike.
"""
from __future__ import annotations

import gc
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Protocol

from .cases import Case
from .check import first_line
from .memory import peak_ratio
from .peers import NoSuchMode, Unavailable

MIN_SAMPLES = 3
MAX_SAMPLES = 200
SAMPLES_PER_BUDGET = 25
TTFG = "yuebing first gradient"
MEMORY = "yuebing peak memory"
NO_SUCH_MODE = "\u2014"  # an em dash: the library has no such operation
REFUSED = "refused"  # yuebing raised on the case


@dataclass
class Cell:
    """One entry of the table. ``status``: ok, WRONG, missing (a peer failed), refused (yuebing
    raised), n/a (not installed) or NO_SUCH_MODE; ``note`` says why."""

    status: str
    seconds: float | None = None
    ratio: float | None = None
    first_call_s: float | None = None
    note: str | None = None
    peak_bytes: int | None = None  # the memory column: the gradient's peak and the function's
    function_peak_bytes: int | None = None


class Columns(Protocol):
    """What ``run_case`` needs of a table (``modes.TableSpec``)."""

    operation: str  # what a peer without an adapter lacks
    yuebing: dict[str, Callable[[Case], Any]]  # column -> adapter
    peers: dict[str, Callable[[Case], Any]]
    extras: dict[str, Callable[[Case, float], Cell]]  # column -> measurement


@dataclass
class Row:
    case: str
    primal_s: float | None = None
    cells: dict[str, Cell] = field(default_factory=dict)
    error: str | None = None


def calls_per_sample(fn: Callable[[], object], target: float) -> int:
    """Warm ``fn`` up; how many back-to-back calls last about ``target`` seconds."""
    fn()
    start = time.perf_counter()
    fn()
    return max(1, int(target / max(time.perf_counter() - start, 1e-9)))


def sample(fn: Callable[[], object], number: int) -> float:
    """Seconds per call over ``number`` back-to-back calls."""
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def _sampling(budget: float) -> Iterator[int]:
    """Sample indices until ``budget`` seconds are spent (at least MIN_SAMPLES, at most MAX)."""
    gc.collect()
    deadline = time.perf_counter() + budget
    count = 0
    while count < MIN_SAMPLES or (time.perf_counter() < deadline and count < MAX_SAMPLES):
        yield count
        count += 1


def median_time(fn: Callable[[], object], budget: float) -> float:
    """Median seconds per call of ``fn``."""
    number = calls_per_sample(fn, budget / SAMPLES_PER_BUDGET)
    return statistics.median(sample(fn, number) for _ in _sampling(budget))


def paired_times(primal: Callable[[], object], gradient: Callable[[], object], budget: float) -> tuple[float, float]:
    """(median seconds per gradient call, median of gradient/primal over interleaved samples).

    Samples of the two alternate, so a machine that slows down for a while (other processes,
    frequency changes) slows both sides of each ratio alike."""
    target = budget / SAMPLES_PER_BUDGET / 2
    n_primal, n_gradient = calls_per_sample(primal, target), calls_per_sample(gradient, target)
    times, ratios = [], []
    for _ in _sampling(budget):
        t_primal = sample(primal, n_primal)
        times.append(sample(gradient, n_gradient))
        ratios.append(times[-1] / t_primal)
    return statistics.median(times), statistics.median(ratios)


def _time_first_call(prepared: Any) -> float:
    start = time.perf_counter()
    prepared.call()
    return time.perf_counter() - start


def measure_column(case: Case, column: str, adapter: Callable[[Case], Any], failure: str,
                   budget: float) -> Cell:
    """Prepare, check and time one column on one case; ``failure`` labels the adapter failing.

    ``adapter(case)`` returns a prepared column with ``call()`` (timed) and ``problem(f, args)``
    (its check against finite differences: ``None`` or what is wrong)."""
    try:
        prepared = adapter(case)
        first = _time_first_call(prepared)
        problem = prepared.problem(case.function, case.args())
    except NoSuchMode as reason:
        return Cell(NO_SUCH_MODE, note=f"{column}: {reason}")
    except Unavailable as reason:
        return Cell("n/a", note=f"{column}: {reason}")
    except Exception as error:  # the framework failing on this case is a result, not a crash
        return Cell(failure, note=f"{column}: {first_line(error)}")
    if problem is not None:
        return Cell("WRONG", first_call_s=first, note=f"{column} on {case.name}: {problem}")
    args = case.args()
    seconds, ratio = paired_times(lambda: case.function(*args), prepared.call, budget)
    return Cell("ok", seconds, ratio, first)


def time_to_first_gradient(case: Case) -> Cell:
    """Seconds for yuebing's first ``value_and_grad`` call, its derived-rule cache cleared first."""
    from .. import api as yuebing
    from yuebing.transform.runtime import _DERIVED

    args = case.args()
    _DERIVED.clear()
    try:
        start = time.perf_counter()
        yuebing.value_and_grad(case.function, argnums=tuple(range(len(args))))(*args)
        seconds = time.perf_counter() - start
    except Exception as error:
        return Cell(REFUSED, note=f"yuebing value_and_grad: {first_line(error)}")
    return Cell("ok", seconds)


def peak_memory(case: Case) -> Cell:
    """yuebing's plain ``value_and_grad`` call: peak traced memory relative to the function's."""
    from .. import api as yuebing

    args = case.args()
    try:
        value_and_grad = yuebing.value_and_grad(case.function, argnums=tuple(range(len(args))))
        ratio, gradient_peak, function_peak = peak_ratio(lambda: value_and_grad(*args), lambda: case.function(*args))
    except Exception as error:
        return Cell(REFUSED, note=f"yuebing value_and_grad: {first_line(error)}")
    return Cell("ok", ratio=ratio, peak_bytes=gradient_peak, function_peak_bytes=function_peak)


def run_case(case: Case, table: Columns, peers: Iterable[str], budget: float) -> Row:
    """One row of ``table``: the primal's time, the table's extra columns (first, so that yuebing's
    time to first gradient starts from empty caches), yuebing's columns and the peers'."""
    row = Row(case.name)
    args = case.args()
    try:
        row.primal_s = median_time(lambda: case.function(*args), budget)
    except Exception as error:
        row.error = f"the NumPy function fails: {first_line(error)}"
        return row
    for column, measure in table.extras.items():
        row.cells[column] = measure(case, budget)
    for column, adapter in table.yuebing.items():
        row.cells[column] = measure_column(case, column, adapter, REFUSED, budget)
    for peer in peers:
        adapter = table.peers.get(peer)
        row.cells[peer] = (measure_column(case, peer, adapter, "missing", budget) if adapter is not None else
                           Cell(NO_SUCH_MODE, note=f"{peer}: has no {table.operation}"))
    return row


def warm_up_yuebing() -> None:
    """Differentiate a trivial function once so lazy imports do not count as the first case's
    time to first gradient."""
    from .. import api as yuebing

    def tiny(x):
        return x * x

    yuebing.value_and_grad(tiny)(1.0)
