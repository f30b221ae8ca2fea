"""``python -m yuebing [bench | demo | rules] [options]``: the project's main job.

``bench`` (the default) runs the benchmark suite (``yuebing.bench``; ``python -m yuebing bench
--help``); ``demo`` shows the tangent model on data NumPy users keep their models in: dicts of
arrays, objects, a cyclic ring; ``rules`` prints docs/rules.md, the rule table and the NumPy
coverage table (``rules --missing``: only the NumPy names without a derivative; its exit status
is 1 when a public name has no entry at all).
"""
from __future__ import annotations

import sys

import numpy as np

from . import tangents as T
from .testing import check_tangent_interface


class Particle:
    def __init__(self, x: float, v: np.ndarray) -> None:
        self.x = x
        self.v = v
        self.neighbour = self


def demo() -> None:
    a, b = Particle(1.0, np.ones(2)), Particle(2.0, np.zeros(2))
    a.neighbour, b.neighbour = b, a
    model = {"weights": np.arange(4.0).reshape(2, 2), "particles": [a, b], "name": "demo"}
    model["weights_view"] = model["weights"][0]
    t = T.randn_tangent(np.random.default_rng(0), model)
    print("primal model keys:", list(model))
    print("a random tangent of it:")
    for key, value in t.items():
        print(f"  {key}: {value!r}")
    print("cycle kept:      t['particles'][0].neighbour.neighbour is t['particles'][0] ->",
          t["particles"][0].neighbour.neighbour is t["particles"][0])
    print("view kept:       t['weights_view'] shares memory with t['weights'] ->",
          np.shares_memory(t["weights_view"], t["weights"]))
    print("dot(t, t) =", round(T.dot(t, t), 6))
    check_tangent_interface(model)
    print("check_tangent_interface(model): all laws hold")


def bench_arguments(argv: list[str]) -> list[str] | None:
    """The bench command's own arguments, or None when ``argv`` asks for another command."""
    if not argv or argv[0].startswith("-"):
        return argv
    return argv[1:] if argv[0] == "bench" else None


def rules(argv: list[str]) -> int:
    """``rules [--missing]``: docs/rules.md, or the NumPy names without a derivative."""
    from .rules.coverage import coverage, coverage_table, stale_reasons
    from .rules.table import document

    if argv not in ([], ["--missing"]):
        print("usage: python -m yuebing rules [--missing]", file=sys.stderr)
        return 2
    if not argv:
        sys.stdout.write(document())
        return 0
    sys.stdout.write(coverage_table(only_missing=True))
    for name in stale_reasons():
        print(f"note: {name} has a rule now; delete its reason from rules/numpy_coverage.py", file=sys.stderr)
    missing = [e.name for entries in coverage().values() for e in entries if e.status == "missing"]
    for name in missing:
        print(f"error: {name} has no entry (a rule, a zero derivative or a reason)", file=sys.stderr)
    return 1 if missing else 0


def main(argv: list[str]) -> int:
    if argv and argv[0] == "demo":
        demo()
        return 0
    if argv and argv[0] == "rules":
        return rules(argv[1:])
    bench_argv = bench_arguments(argv)
    if bench_argv is None:
        print(f"unknown command {argv[0]!r}; available: bench (the default), demo, rules", file=sys.stderr)
        return 2
    from .bench import main as bench

    return bench(bench_argv)


if __name__ == "__main__":
    if bench_arguments(sys.argv[1:]) is not None:
        from .bench import rerun_single_threaded

        rerun_single_threaded(bench_arguments(sys.argv[1:]))
    sys.exit(main(sys.argv[1:]))
