"""``python -m yuebing bench``: Mooncake.jl's 13 benchmarks, written as NumPy code, timed for
yuebing and its peers.

``--mode grad`` (the default) prints one table: per case the NumPy function's median time, then,
per column, the ratio time(value and gradient) / time(function): yuebing reverse
(``prepare_gradient``), yuebing forward (one JVP), each installed peer (autograd, JAX eager, JAX
jit, PyTorch eager), yuebing's time to first gradient (transformation and first call), and
yuebing's plain ``value_and_grad`` call and its peak memory relative to the function's.
``--mode jvp`` times one JVP, ``--mode hvp`` one Hessian-vector product and the dense Hessian of
the small cases, each side by side with the peers' own; ``--mode all`` prints every table. Every
column is checked against finite differences before it is timed; a wrong one is shown as
``WRONG``, a case yuebing raises on as ``refused``, a library without the operation as ``—``.

Modules: ``cases`` (the functions), ``peers`` and ``peers_second_order`` (one adapter per
column), ``check`` (finite differences), ``memory`` (tracemalloc), ``modes`` (the tables),
``runner`` (timing), ``report`` (tables, JSON, plot).
"""
from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
import time
from typing import Any

import numpy as np

from .cases import BY_NAME, CASES
from .modes import MODES
from .peers import PEERS, installed_peers
from .report import Table, write_json, write_plot
from .runner import run_case, warm_up_yuebing

DEFAULT_BUDGET = 0.5
# One thread for every numerical library: ratios measure differentiation overhead, and on a small
# shared machine a second BLAS/OpenMP thread waiting for a busy core stalls calls for milliseconds.
ONE_THREAD = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false",
}
# ``--allocator steady``: a steady C allocator for every column. By default glibc maps fresh memory
# for large arrays and hands it back to the system as soon as the heap's top is free, so a NumPy
# function's temporaries page-fault on every call or on none depending on what ran before: we
# measured the same primal (turing_broadcast_benchmark) at 0.32 ms and at 1.3 ms in two processes.
# With these settings freed memory stays in the heap and every column -- the primal included -- is
# timed doing its arithmetic, not its page faults. The default, ``--allocator default``, measures
# what users run: the allocator as the process found it.
STEADY_ALLOCATOR = {
    "MALLOC_MMAP_THRESHOLD_": str(32 * 2 ** 20),
    "MALLOC_TRIM_THRESHOLD_": str(2 ** 30),
    "MALLOC_TOP_PAD_": str(16 * 2 ** 20),
}


def rerun_single_threaded(argv: list[str]) -> None:
    """Restart ``python -m yuebing bench ARGV`` with ``ONE_THREAD``'s variables and, with
    ``--allocator steady``, ``STEADY_ALLOCATOR``'s, where the caller has not set them (libraries
    and the C allocator read them when loaded, and NumPy is loaded already)."""
    wanted = dict(ONE_THREAD)
    if _allocator_choice(argv) == "steady":
        wanted.update(STEADY_ALLOCATOR)
    missing = {k: v for k, v in wanted.items() if k not in os.environ}
    if missing:
        os.environ.update(missing)
        sys.stdout.flush()
        os.execv(sys.executable, [sys.executable, "-m", "yuebing", "bench", *argv])


def _allocator_choice(argv: list[str]) -> str:
    for i, arg in enumerate(argv):
        if arg == "--allocator" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--allocator="):
            return arg.split("=", 1)[1]
    return "default"


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m yuebing bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", nargs="+", choices=list(BY_NAME), metavar="CASE",
                        help=f"cases to run (default: all): {', '.join(BY_NAME)}")
    parser.add_argument("--peers", nargs="+", choices=[*PEERS, "none", "all"], metavar="PEER",
                        help=f"peer columns: {', '.join(PEERS)}, 'all' or 'none' (default: those installed)")
    parser.add_argument("--mode", choices=list(MODES), default="grad",
                        help="'grad' (default): value and gradient; 'jvp': one JVP; 'hvp': one "
                             "Hessian-vector product and the dense Hessian of the small cases; 'all': "
                             "every table in one run")
    parser.add_argument("--budget", type=float, default=DEFAULT_BUDGET,
                        help=f"seconds of timing per column and case (default {DEFAULT_BUDGET})")
    parser.add_argument("--allocator", choices=["default", "steady"], default="default",
                        help="'default' (the default): glibc as the process found it, what users run; "
                             "'steady': glibc keeps freed memory (MALLOC_*_ environment variables), so "
                             "no column is timed doing page faults")
    parser.add_argument("--json", metavar="OUT.json", help="write every number to this file")
    parser.add_argument("--plot", metavar="OUT.png", help="write a bar chart of the ratios (needs matplotlib)")
    return parser.parse_args(argv)


def chosen_peers(requested: list[str] | None) -> list[str]:
    if requested is None:
        return installed_peers()
    if "none" in requested:
        return []
    if "all" in requested:
        return list(PEERS)
    return list(dict.fromkeys(requested))


def allocator_description() -> str:
    """Which allocator this process runs with, for the printed results."""
    settings = {k: os.environ[k] for k in STEADY_ALLOCATOR if k in os.environ}
    if not settings:
        return "allocator: default (glibc as the process found it)"
    kind = "steady" if settings == STEADY_ALLOCATOR else "as set by the caller"
    return f"allocator: {kind} ({', '.join(f'{k}={v}' for k, v in settings.items())})"


def environment(peers: list[str], budget: float) -> dict:
    """What the numbers were measured on."""
    from importlib.metadata import PackageNotFoundError, version

    versions = {}
    for package in ("yuebing", "numpy", "scipy", "autograd", "jax", "jaxlib", "torch"):
        try:
            versions[package] = version(package)
        except PackageNotFoundError:
            pass
    return {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
            "versions": versions, "peers": peers, "budget_s": budget,
            "threads": {k: os.environ.get(k) for k in ONE_THREAD},
            "allocator": {k: os.environ.get(k) for k in STEADY_ALLOCATOR}}


def main(argv: list[str]) -> int:
    options = parse_args(argv)
    try:
        return _run(options)
    finally:
        gc.unfreeze()


def _run(options: Any) -> int:
    cases = [BY_NAME[n] for n in options.cases] if options.cases else CASES
    peers = chosen_peers(options.peers)
    specs = MODES[options.mode]
    started = time.perf_counter()
    print(allocator_description(), flush=True)
    warm_up_yuebing()
    # what lives now (peers' modules, the importing process's heap: a test session's) is left
    # out of the collections each measurement starts with: they scan only what the run makes
    gc.freeze()
    tables, plotted = {}, []
    for spec in specs:
        columns = spec.columns(peers)
        table = Table(columns, title=None if options.mode == "grad" else spec.title, explanation=spec.explanation)
        table.header()
        rows = tables[spec.name] = []
        for case in cases:
            if spec.applies(case):
                rows.append(run_case(case, spec, peers, options.budget))
                table.row(rows[-1])
        table.footer()
        plotted.append((spec.title, rows, columns))
    elapsed = time.perf_counter() - started
    threads = ", ".join(f"{k}={os.environ.get(k, 'unset')}" for k in [*ONE_THREAD, *STEADY_ALLOCATOR])
    print(f"\n{len(cases)} cases in {elapsed:.0f} s; numpy {np.__version__}, python {platform.python_version()}; {threads}")
    print(allocator_description())
    if options.json:
        meta = environment(peers, options.budget) | {"total_s": elapsed, "mode": options.mode}
        write_json(options.json, tables, meta)
        print(f"numbers written to {options.json}")
    if options.plot:
        print(write_plot(options.plot, plotted))
    return 0


__all__ = ["main", "rerun_single_threaded"]
