"""Summaries of an external-corpus run: a printed table and ``docs/external-corpus.md``.

Run the whole corpus and rewrite the page (several minutes):

    python3 -m tests.external.report --write docs/external-corpus.md [--json outcomes.json]

(``--load outcomes.json`` renders saved outcomes again; ``--only TEXT`` runs matching ids.) A
package with a section of its own (``OWN_SECTIONS``: scikit-learn, lmfit, properscoring, pykalman)
can be run alone, replacing its row of the counts table, the total and its section (and reading the
mechanisms table again from ``repros.py``), the rest of the page as it was:

    python3 -m tests.external.report --package sklearn --write docs/external-corpus.md
"""
from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import sys
import time
from typing import Iterable

from .classify import Outcome

STATUSES = ("right", "refused", "wrong", "unverified", "unusable")


def counts_by_package(outcomes: Iterable[Outcome]) -> dict[str, collections.Counter]:
    table: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for outcome in outcomes:
        table[outcome.package][outcome.status] += 1
    return dict(table)


def tried(counter: collections.Counter) -> int:
    """Functions yuebing was asked to differentiate (the unusable ones never were)."""
    return counter["right"] + counter["refused"] + counter["wrong"] + counter["unverified"]


def refusal_groups(outcomes: Iterable[Outcome]) -> dict[str, list[str]]:
    """Refusal message (class and first line, at which stage) -> the functions giving it."""
    groups: dict[str, list[str]] = collections.defaultdict(list)
    for outcome in outcomes:
        if outcome.status == "refused":
            groups[f"[{outcome.stage}] {outcome.detail}"].append(outcome.case_id)
    return dict(sorted(groups.items(), key=lambda item: (-len(item[1]), item[0])))


def summary_text(outcomes: list[Outcome]) -> str:
    lines = [f"{'package':22s} {'tried':>6s} {'right':>6s} {'refused':>8s} {'wrong':>6s} {'unverified':>10s} "
             f"{'unusable':>9s}"]
    table = counts_by_package(outcomes)
    for package, counter in sorted(table.items()):
        lines.append(f"{package:22s} {tried(counter):6d} {counter['right']:6d} {counter['refused']:8d} "
                     f"{counter['wrong']:6d} {counter['unverified']:10d} {counter['unusable']:9d}")
    total = sum(table.values(), collections.Counter())
    lines.append(f"{'total':22s} {tried(total):6d} {total['right']:6d} {total['refused']:8d} "
                 f"{total['wrong']:6d} {total['unverified']:10d} {total['unusable']:9d}")
    lines.append("")
    lines.append("refused:")
    for message, case_ids in refusal_groups(outcomes).items():
        lines.append(f"  {len(case_ids):3d} x {message}")
    for status in ("wrong", "unverified", "unusable"):
        listed = [o for o in outcomes if o.status == status]
        if listed:
            lines.append(f"{status}:")
            lines.extend(f"  {o.case_id} [{o.stage}] {o.detail}" for o in listed)
    return "\n".join(lines)


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


# Packages whose refusals and findings have a section of their own at the end of the page (their
# counts stay in the main table), so that one package can be run again and its section and row
# replaced without running the rest: ``--package sklearn --write docs/external-corpus.md``.
OWN_SECTIONS = ("sklearn", "lmfit", "properscoring", "pykalman", "astropy", "sympy", "statsmodels", "numpy_ml")
SECTION_NOTES = {
    "numpy_ml": [
        "numpy-ml 0.1.2 (`collections.Hashable` restored for its import): its activations (`fn`, `grad`,",
        "`grad2`, called), losses, layers and modules through `forward` (made and initialised outside the",
        "differentiated function; in their inputs and in their parameters), the convolution helpers,",
        "kernels, distance metrics, linear, Bayesian and Gaussian-process regression (kernels named by",
        "strings, read with `re` and `eval`: zero derivative since c706a4f), a GMM's lower bound, an",
        "HMM's log-likelihood, optimiser steps, a contextual linear bandit's rewards and a LinUCB",
        "policy's steps (reseeded draws), ALS and NMF from given factors, a scaled-down `BernoulliVAE`'s",
        "loss in its image (encoder, reparametrised draw, decoder), and signal processing, in every mode",
        "(`tests/external/cases_numpy_ml*.py`). Its own `grad`/`grad2` and layers' `backward` are a",
        "third oracle (`tests/test_external_numpy_ml.py`). Two cases give a NaN `yb.jvp` (mechanism",
        "`zero_partial_meets_infinite_cotangent`: the RBF kernel's `sqrt` of a squared distance that is",
        "exactly 0 with a tangent of rounding noise, then squared); their gradients and Hessians are right.",
        "Unusable, numpy-ml's own failures: `RNN`, `LSTM` (`gradients` property without setter),",
        "`SparseEvolution` (`np.random.binomial(shape=)`), `GaussianBandit` (`sum` of a float), not listed.",
        "Two of its own derivatives are wrong where yuebing and central differences agree:",
        "`LogisticRegression._NLL_grad` subtracts the penalty's gradient, and `trees.losses.MSELoss.grad`",
        "divides by the rows of a matrix the loss averages over every entry of.",
    ],
    "astropy": [
        "astropy's functional models (every class of `astropy.modeling.functional_models` and",
        "`powerlaws`) through their `evaluate`, in the parameters and in the inputs; a few built and",
        "called as users call them (`Gaussian1D(...)(x)`, `Moffat2D`, a compound model, the",
        "`leastsquare_1d` statistic: `Model.__call__`'s validation and unit machinery, differentiated",
        "since `dict.fromkeys` has a rule); and the smooth functions of `astropy.stats` (circular",
        "statistics, biweight estimators, `mad_std`, information criteria), in every mode",
        "(`tests/external/cases_astropy.py`). `fit_deriv`, astropy's own derivative in the parameters,",
        "is a third oracle (`test_against_astropys_fit_deriv`). The Sersic profiles take",
        "`gammaincinv(2 n, 0.5)`, which has no derivative formula in `n`: NaN gradient, refused in",
        "forward mode. `Voigt1D` is wrong: `_wrap_wofz` returns the `wofz(z)` it kept on the model",
        "when `z` equals the last one (mechanism `result_cached_on_an_object`).",
    ],
    "statsmodels": [
        "statsmodels' log-likelihoods (`model.loglike(params)`: discrete, zero-inflated, linear, GLM",
        "with each family, ordered logit and probit) in their parameters, the model built outside the",
        "differentiated function, in every mode (`tests/external/cases_statsmodels.py`); the discrete",
        "models' own `score` and `hessian` are a third oracle (`test_against_statsmodels_own_score`).",
        "The ordered probit's thresholds at -inf and inf gave a NaN Hessian (ndtr's partial",
        "`exp(-x^2/2)` differentiated at inf: 0 * inf), fixed in `scipy_special.gaussian`.",
    ],
    "sympy": [
        "Code generated by `sympy.lambdify` from formulas of physics and statistics, each as a",
        "`numpy` function of one list argument, a `scipy` function with common subexpressions",
        "(`cse=True`) on an array of points, and a `math` function of scalars",
        "(`tests/external/cases_sympy.py`), in every mode. The symbolic gradient and Hessian",
        "(`sympy.diff`, lambdified) are a third oracle (`test_against_sympys_symbolic_derivatives`).",
    ],
    "lmfit": [
        "lmfit's `lmfit.lineshapes` (peaks, steps, thermal distributions; each form of `step`,",
        "`rectangle`, `thermal_distribution` a case of its own), each on an array of points and at one",
        "point (`tests/external/cases_lmfit.py`), in its parameters and `x`, in every mode (`yb.jvp`,",
        "`yb.hvp` too). The jax twin binds their `scipy.special` functions to `jax.scipy.special`'s and",
        "runs eagerly (their `max(tiny, sigma)` compares a traced value); the lineshapes that call",
        "`float()`, write into an array or take `loggamma` of a complex argument have no twin.",
        "Three cases go through `lmfit.Model` (`eval` of a composite model, the residual, a bounded",
        "parameter): refused where lmfit builds its `Parameters` (a dict subclass holding an asteval",
        "interpreter, which opens an `io.BytesIO`).",
    ],
    "properscoring": [
        "properscoring's scoring rules (`crps_gaussian`, `crps_ensemble` sorted and weighted,",
        "`crps_quadrature` through `np.vectorize` over `scipy.integrate.quad`, Brier scores) in the",
        "forecasts and the observations, in every mode (`tests/external/cases_properscoring.py`);",
        "`crps_gaussian(grad=True)`'s own derivative is a third oracle",
        "(`test_against_properscorings_own_gradient`).",
    ],
    "pykalman": [
        "pykalman's filters (standard, Cholesky and Bierman square-root, unscented, additive",
        "unscented) as functions of the model or the observations, in every mode",
        "(`tests/external/cases_pykalman.py`). Every entry point keeps the observations in a masked",
        "array (`np.ma.atleast_2d`, masked where one is missing) and applies `np.dot` and `linalg` to",
        "it: with nothing masked these compute on the data. Its `get_params` reads the model through",
        "`self.__getattribute__(name)`, whose second order was silently wrong (fixed here). Still",
        "refused: the unscented filters' `K.dot(z - mu)` (a plain array's bound method given the masked",
        "array) and the square-root filters' `scipy.linalg.qr` of a tall matrix in mode 'full'.",
    ],
    "sklearn": [
        "scikit-learn's metrics (y_pred, and sample weights), pairwise kernels, Gaussian-process",
        "kernels on X and through `theta`, `GaussianProcessRegressor.log_marginal_likelihood` and",
        "`predict`, the neural network's in-place activations and losses, `utils.extmath`, and",
        "estimators fitted inside the function (scalers, ridge, kernel ridge, covariance, PCA,",
        "discriminant analysis, naive Bayes, mixtures) as functions of their data",
        "(`tests/external/cases_sklearn*.py`). Each case is also checked in forward mode (`yb.jvp`",
        "against the verified gradient) and by `yb.hvp` (against differences of the gradient), and",
        "no mode may change its argument. The kernels' own `eval_gradient=True` is a third oracle",
        "(`test_against_sklearns_own_kernel_gradients`, the kernels built from `exp(theta)`; through",
        "`theta` itself, the `Hyperparameter` named tuples of `clone_with_theta`, whose `__new__` is",
        "Python code, are built as `type.__call__` builds them). Most estimator fits of scikit-learn",
        "1.9 run inside `callback_management_context(self)`,",
        "refused when the estimator holds floats; the losses of `sklearn._loss` are Cython classes.",
    ],
}


def _count_row(package: str, counter: collections.Counter) -> str:
    return (f"| {package} | {tried(counter)} | {counter['right']} | {counter['refused']} | "
            f"{counter['wrong']} | {counter['unverified']} | {counter['unusable']} |")


def _total_row(total: collections.Counter) -> str:
    return (f"| **total** | {tried(total)} | {total['right']} | {total['refused']} | "
            f"{total['wrong']} | {total['unverified']} | {total['unusable']} |")


def _section_markers(package: str) -> tuple[str, str]:
    return f"<!-- section of {package}: begin -->", f"<!-- section of {package}: end -->"


def package_section(package: str, outcomes: list[Outcome], known_wrong: dict[str, str]) -> str:
    """The package's own section: what it runs, its refusals, wrong, unverified and unusable."""
    begin, end = _section_markers(package)
    parts = [begin, f"## {package}", ""] + SECTION_NOTES.get(package, []) + [
        "", "| count | stage and error | functions |", "|---:|---|---|"]
    for message, case_ids in refusal_groups(outcomes).items():
        parts.append(f"| {len(case_ids)} | {_escape(message)} | {', '.join(case_ids)} |")
    parts += ["", "| function | status | stage | what |", "|---|---|---|---|"]
    for outcome in (o for o in outcomes if o.status in ("wrong", "unverified", "unusable")):
        known = f" (KNOWN_WRONG: {known_wrong.get(outcome.case_id, 'NOT LISTED')})" if outcome.status == "wrong" else ""
        parts.append(f"| {outcome.case_id} | {outcome.status} | {outcome.stage} | {_escape(outcome.detail)}{known} |")
    return "\n".join(parts + [end])


def _parse_count_row(line: str) -> tuple[str, collections.Counter]:
    cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
    counter = collections.Counter(dict(zip(("right", "refused", "wrong", "unverified", "unusable"),
                                           (int(cell) for cell in cells[2:7]))))
    return cells[0], counter


def splice_package(page: str, package: str, outcomes: list[Outcome], known_wrong: dict[str, str]) -> str:
    """``page`` with ``package``'s row of the counts table, the total row and its own section
    replaced by ``outcomes`` (a run of that package alone), and the mechanisms table read again
    from ``repros.py``; the other packages' rows stay."""
    lines = page.rstrip("\n").split("\n")
    header = lines.index("| package | tried | right | refused | wrong | unverified | unusable |")
    last = header + 2
    while lines[last].startswith("| ") and not lines[last].startswith("| **total**"):
        last += 1
    rows = dict(_parse_count_row(line) for line in lines[header + 2:last])
    rows[package] = counts_by_package(outcomes).get(package, collections.Counter())
    table = [_count_row(name, counter) for name, counter in sorted(rows.items())]
    table.append(_total_row(sum(rows.values(), collections.Counter())))
    lines[header + 2:last + 1] = table
    text = "\n".join(_with_mechanisms_refreshed(lines))
    begin, end = _section_markers(package)
    section = package_section(package, outcomes, known_wrong)
    if begin in text:
        text = text[:text.index(begin)] + section + text[text.index(end) + len(end):]
    else:
        text = text + "\n\n" + section
    return text + "\n"


MECHANISMS_HEADER = "| mechanism | reproduction | seen in | status |"


def mechanism_rows() -> list[str]:
    """The rows of the mechanisms table, from ``repros.py`` (no run needed)."""
    from .repros import FIXED, MECHANISMS
    rows = []
    for status, mechanisms in (("still wrong", MECHANISMS), ("fixed", FIXED)):
        for mechanism in mechanisms:
            rows.append(f"| {_escape(mechanism.name)} | `repros.{mechanism.function.__name__}` | "
                        f"{_escape(mechanism.seen_in)} | {status} |")
    return rows


def _with_mechanisms_refreshed(lines: list[str]) -> list[str]:
    """``lines`` of the page with the mechanisms table's rows read again from ``repros.py``."""
    if MECHANISMS_HEADER not in lines:
        return lines
    first = lines.index(MECHANISMS_HEADER) + 2
    last = first
    while last < len(lines) and lines[last].startswith("| "):
        last += 1
    return lines[:first] + mechanism_rows() + lines[last:]


def markdown(outcomes: list[Outcome], known_wrong: dict[str, str]) -> str:
    table = counts_by_package(outcomes)
    total = sum(table.values(), collections.Counter())
    separate = [o for o in outcomes if o.package in OWN_SECTIONS]
    outcomes = [o for o in outcomes if o.package not in OWN_SECTIONS]
    parts = [
        "# External corpus",
        "",
        "Functions written by others, from packages installed as test-only dependencies (the `test`",
        "extra), differentiated by yuebing at smooth points inside their bounds: the value against the",
        "plain call, the gradient against central differences (several steps) and the Hessian against",
        "central differences of the gradient along random directions; where the package's own code",
        "also runs under `jax.numpy` (its modules' `numpy` names swapped for the call), against",
        "`jax.grad`/`jax.hessian` as a second oracle. Nothing of theirs is copied into this repository:",
        "`tests/external/` only enumerates and calls it. Harness: `tests/test_external_corpus.py`;",
        "regenerate this page with `python3 -m tests.external.report --write docs/external-corpus.md`.",
        "",
        "A function whose plain call advances NumPy's global generator or Python's `random` (a random",
        "term, a random subspace) has both reseeded before every call, yuebing's and the oracles'",
        "alike, so it is one deterministic function; two equal plain values do not make it so.",
        "",
        "*right*: value, gradient and Hessian agree; *refused*: yuebing raised one of its own error",
        "classes; *wrong*: different numbers or an internal error (each one is listed in `KNOWN_WRONG`",
        "with its minimal reproduction, and the test fails if it is no longer wrong); *unusable*: the",
        "plain function itself fails on Python 3.11 / NumPy 2 (not counted as tried).",
        "",
        "*unverified*: no oracle resolves the derivative (the differences disagree among their own",
        "steps, there is no jax twin, complex step is unavailable or disagrees) and forward and reverse",
        "mode agree; listed, not counted as right.",
        "",
        "| package | tried | right | refused | wrong | unverified | unusable |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for package, counter in sorted(table.items()):
        parts.append(_count_row(package, counter))
    parts.append(_total_row(total))
    parts += ["", "`pymoo (anp = numpy)` is pymoo's problems again, with the `anp` object their modules call",
              "NumPy through (a `LazyBackend` whose `__getattr__` imports the backend at each read) bound",
              "to NumPy itself: the same problems with no lazy object in the way; it is not counted in the",
              "300-function minimum.",
              "`numpy-ml` was a candidate but does not import on Python 3.10+ "
              "(`from collections import Hashable`).", "",
              "`cma` is pycma's `cma.ff` test functions; pycma's hand-written gradients of five of them",
              "(`cma.ff.grad_rosen`, `grad_sphere`, `grad_elli`, `grad_cigar`, `grad_tablet`) are a third",
              "oracle: `test_against_pycmas_own_gradients` checks `yb.grad` and `yb.jvp` against them and",
              "`yb.hessian` and `yb.hvp` against their central differences.",
              "", "## Refused, by error", "",
              "| count | stage and error | functions |", "|---:|---|---|"]
    for message, case_ids in refusal_groups(outcomes).items():
        parts.append(f"| {len(case_ids)} | {_escape(message)} | {', '.join(case_ids)} |")
    parts += ["", "## Failure mechanisms found", "",
              "Each reduced to a few lines of plain NumPy in `tests/external/repros.py`. Still wrong ones",
              "are asserted still wrong (a fix shows up as a failing test); fixed ones are regression tests",
              "in every mode.", "", MECHANISMS_HEADER, "|---|---|---|---|"] + mechanism_rows()
    parts += ["", "## Wrong", "", "| function | stage | what | mechanism (KNOWN_WRONG) |", "|---|---|---|---|"]
    for outcome in (o for o in outcomes if o.status == "wrong"):
        parts.append(f"| {outcome.case_id} | {outcome.stage} | {_escape(outcome.detail)} | "
                     f"{_escape(known_wrong.get(outcome.case_id, 'NOT LISTED'))} |")
    parts += ["", "## Unverified", "", "| function | stage | why |", "|---|---|---|"]
    for outcome in (o for o in outcomes if o.status == "unverified"):
        parts.append(f"| {outcome.case_id} | {outcome.stage} | {_escape(outcome.detail)} |")
    parts += ["", "## Unusable", "", "| function | why |", "|---|---|"]
    for outcome in (o for o in outcomes if o.status == "unusable"):
        parts.append(f"| {outcome.case_id} | {_escape(outcome.detail)} |")
    for package in sorted({o.package for o in separate}):
        parts += ["", package_section(package, [o for o in separate if o.package == package], known_wrong)]
    return "\n".join(parts) + "\n"


def main(argv: list[str]) -> int:
    from tests.test_external_corpus import KNOWN_WRONG, hessian_wanted
    from .cases import all_cases
    from .classify import run_case
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", help="write the markdown page to this path")
    parser.add_argument("--only", help="run only case ids containing this text")
    parser.add_argument("--json", help="also save the outcomes to this file")
    parser.add_argument("--load", help="render saved outcomes instead of running")
    parser.add_argument("--package", choices=OWN_SECTIONS,
                        help="run this package alone; --write then replaces its row and section of the page")
    args = parser.parse_args(argv)
    if args.load:
        with open(args.load) as handle:
            outcomes = [Outcome(**row) for row in json.load(handle)]
        return _finish(outcomes, args, KNOWN_WRONG)
    started, outcomes = time.time(), []
    for spec in all_cases():
        if (args.only and args.only not in spec.case_id) or (args.package and spec.package != args.package):
            continue
        outcome = run_case(spec, hessian_wanted(spec, full=True))
        print(f"{outcome.case_id:45s} {outcome.status:8s} {outcome.stage:8s} {outcome.detail[:120]}", flush=True)
        outcomes.append(outcome)
    print(f"{len(outcomes)} functions in {time.time() - started:.0f} s")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump([dataclasses.asdict(outcome) for outcome in outcomes], handle, indent=1)
    return _finish(outcomes, args, KNOWN_WRONG)


def _finish(outcomes: list[Outcome], args: argparse.Namespace, known_wrong: dict[str, str]) -> int:
    print(summary_text(outcomes))
    if args.write and args.package:
        with open(args.write) as handle:
            page = splice_package(handle.read(), args.package, outcomes, known_wrong)
        with open(args.write, "w") as handle:
            handle.write(page)
    elif args.write:
        with open(args.write, "w") as handle:
            handle.write(markdown(outcomes, known_wrong))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
