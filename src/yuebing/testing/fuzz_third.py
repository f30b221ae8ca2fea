"""Third order in the differential fuzzer: the fuzzer's checks of a function taking a gradient.

For a random program ``f`` whose arguments are all floats and float arrays, ``F`` is written
beside it in the same module: ``F(args) = sum_k <v_k, yb.grad(f, argnums=all)(args)_k>`` with
fixed random weights ``v_k``. ``fuzz.check_function(F, args)`` then checks ``F`` six ways: its
reverse mode is reverse over reverse of ``f``, its forward mode forward over reverse, its HVP
(``yb.hvp``, and ``hessian(chunk_size=n)``) third derivatives of ``f``, each against central
differences of the lower orders. A refusal by name is fine; a number that differs is wrong.

``python -m yuebing.testing.fuzz_third --seeds 0:50`` prints the counts by outcome.
"""
from __future__ import annotations

import numpy as np

from .fuzz import Outcome, Summary, _float_arguments, case, load_function
from .fuzz import check_function
from .fuzz_programs import DEFAULT_FEATURES

GRADIENT_OF = "F3"


def gradient_weights(args: tuple, seed: int) -> list:
    """The fixed weights ``v_k`` (shaped like the arguments, rounded to 3 digits, so moderate)."""
    rng = np.random.default_rng(seed + 104729)
    return [round(float(rng.uniform(-1.0, 1.0)), 3) if isinstance(a, float)
            else np.round(rng.uniform(-1.0, 1.0, a.shape), 3) for a in args]


def _literal(weight) -> str:
    return repr(weight) if isinstance(weight, float) else f"np.array({weight.tolist()!r})"


def gradient_function_source(source: str, params: list[str], args: tuple, seed: int) -> str | None:
    """``source`` (defining ``f(*params)``) with ``F3``, the weighted sum of ``f``'s gradient,
    appended; None unless every argument is a float or a float64 array."""
    if not _float_arguments(args):
        return None
    names = ", ".join(params)
    nums = ", ".join(str(k) for k in range(len(args)))
    terms = [f"np.sum(g[{k}] * {_literal(w)})" for k, w in enumerate(gradient_weights(args, seed))]
    return (source + "\nimport yuebing as yb\n\n\n"
            f"def {GRADIENT_OF}({names}):\n"
            f"    g = yb.grad(f, argnums=({nums},))({names})\n"
            f"    return {' + '.join(terms)}\n")


def check_third_order_program(source: str, args: tuple, seed: int = 0) -> Outcome:
    """``fuzz.check_function`` of ``F3`` in ``source`` (see the module docstring)."""
    try:
        F = load_function(source, GRADIENT_OF)
    except Exception as error:  # noqa: BLE001 -- reported as the generator's fault
        return Outcome("invalid", [], f"{type(error).__name__}: {error}\n{source}")
    outcome = check_function(F, args, seed)
    outcome.source = source
    return outcome


def run_third_order_seed(seed: int, features=DEFAULT_FEATURES) -> Outcome | None:
    """The third-order outcome of seed's program (None when its arguments are not all floats)."""
    program, args = case(seed, features)
    source = gradient_function_source(program.source(), program.params, args, seed)
    if source is None:
        return None
    return check_third_order_program(source, args, seed)


def run_third_order_seeds(seeds, features=DEFAULT_FEATURES) -> Summary:
    summary = Summary()
    for seed in seeds:
        outcome = run_third_order_seed(seed, features)
        if outcome is not None:
            summary.add(seed, outcome)
    return summary


def _main() -> None:
    import argparse
    import time

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0:50", help="start:stop")
    parser.add_argument("--debug", action="store_true", help="with yuebing's debug checks on")
    options = parser.parse_args()
    if options.debug:
        from ..api import config
        config(debug=True)
    start, stop = (int(v) for v in options.seeds.split(":"))
    began = time.time()
    summary = run_third_order_seeds(range(start, stop))
    print(summary.report())
    for seed in sorted({s for seeds in summary.mechanisms.values() for s in seeds})[:20]:
        print(f"\n==== seed {seed}\n{summary.outcomes[seed]}")
    print(f"{time.time() - began:.1f} s")


if __name__ == "__main__":
    _main()


__all__ = ["GRADIENT_OF", "check_third_order_program", "gradient_function_source", "gradient_weights", "run_third_order_seed",
           "run_third_order_seeds"]
