"""What scientists write to fit and simulate models, for the fuzzer (``fuzz_programs``): session 23.

Log densities and distribution functions of ``scipy.stats`` with their parameters differentiated,
``scipy.linalg``'s factorisations and ``expm``, Gaussian likelihoods through ``np.linalg``
(``slogdet``, ``inv``, ``eigh``), ``np.where`` with both branches finite, ``np.searchsorted`` and
``np.interp`` on grids, integer-power loops (Horner, power sums, ``** 2.0`` of negative values),
``math.fsum`` and ``statistics.fmean``, dataclass states updated in loops, gradient descent on a
dict of arrays left by ``break`` on a tolerance, and lists of scalars into ufuncs with the name
rebound to an item (``x = x[0]``) and written by a closure (``nonlocal``).

Each feature is a block maker mixed into ``fuzz_programs.Generator`` (it uses the generator's
``rng``, ``env``, ``n``, ``pick``, ``float_expr``, ``array_expr`` and ``MixedBlocks``' ``_new``,
``_array_name``). The first line of every block ends in a comment naming its feature, so
``features_in`` sees it. Shape parameters of incomplete gamma and beta functions (``gamma.cdf``'s
``a``, ``t.cdf``'s ``df``) stay constants: yuebing refuses them in forward mode and gives reverse
mode a NaN cotangent (``rules/scipy_special.fixed_message``), which the checker would call wrong.
"""
from __future__ import annotations

from .fuzz_constructs import _const, _pos

ESTIMATION_FEATURES = (
    "stats_dists",      # scipy.stats norm/gamma/beta/t logpdf and cdf, poisson.logpmf(mu float), frozen ones
    "scipy_linalg",     # scipy.linalg cho_factor/cho_solve, solve_triangular, expm, lu_factor/lu_solve
    "gauss_models",     # np.linalg slogdet, inv and eigh of a symmetric matrix: a Gaussian log-likelihood
    "where_finite",     # np.where(cond, a, b) with both branches finite (no masked NaN)
    "search_interp",    # np.searchsorted on a grid, an index read back; np.interp with fp differentiated
    "int_powers",       # integer-power loops: Horner, sum of a ** k, repeated products, ** 2.0 of negatives
    "exact_means",      # math.fsum and statistics.fmean (weights=) of lists of floats and of arrays
    "dataclass_models",  # a dataclass state updated in a loop: attributes, dataclasses.replace
    "dict_descent",     # gradient descent on a dict of arrays, left by break when the step is small
    "scalar_lists",     # np.sin([a, b]) of scalars, the list's name rebound to an item, a nonlocal writer
)

ESTIMATION_MARKERS = {name: rf"# {name}$" for name in ESTIMATION_FEATURES}

ESTIMATION_IMPORTS = ("import dataclasses", "import statistics", "import scipy.linalg", "import scipy.stats")

STATE_CLASS = """@dataclasses.dataclass
class State0:
    pos: np.ndarray
    vel: float = 0.0
    steps: int = 0

    def energy(self):
        return 0.5 * self.vel * self.vel + np.sum(np.cos(self.pos))"""


def estimation_helper_sources(on) -> list[str]:
    """The module-level helpers the enabled features need (``on(feature)``)."""
    return [STATE_CLASS] if on("dataclass_models") else []


def _wrap(expr: str) -> str:
    return expr if expr.isidentifier() else f"({expr})"


class EstimationBlocks:
    """Block makers of ``ESTIMATION_FEATURES``."""

    def estimation_makers(self) -> list:
        makers = [
            ("stats_dists", self.b_stats), ("scipy_linalg", self.b_scipy_linalg),
            ("gauss_models", self.b_gauss_model), ("where_finite", self.b_where_finite),
            ("search_interp", self.b_search_interp), ("int_powers", self.b_int_powers),
            ("exact_means", self.b_exact_means), ("dataclass_models", self.b_dataclass_model),
            ("dict_descent", self.b_dict_descent), ("scalar_lists", self.b_scalar_lists),
        ]
        return [(feature, self._binding(maker)) for feature, maker in makers]

    def _positive(self) -> str:
        """A positive float expression away from 0: ``c + e * e``."""
        e = _wrap(self.float_expr(1))
        return f"({_pos(self.rng)} + {e} * {e})"

    def _spd(self, tag: str) -> tuple[str, list[str]]:
        """A fresh symmetric positive definite n x n matrix ``2 I + 0.3 t t^T`` (or ``B B^T / n + I``)."""
        m, n = self.env.fresh("S"), self.n
        if "W" in self.env.kinds and self.rng.random() < 0.4:
            made = f"{m} = W @ W.T * {0.5 / n:.3f} + np.eye({n})"
        else:
            t = self.env.fresh("tv")
            return m, [f"{t} = np.tanh({self.array_expr(1)})  # {tag}",
                       f"{m} = 2.0 * np.eye({n}) + {_pos(self.rng)} * np.outer({t}, {t})"]
        return m, [f"{made}  # {tag}"]

    # ---- scipy.stats -------------------------------------------------------------------------
    def b_stats(self):
        out = self._new("f", "t")
        a, loc, scale = self.array_expr(1), self.float_expr(1), self._positive()
        form = self.pick([
            f"np.sum(scipy.stats.norm.logpdf({a}, loc={loc}, scale={scale}))",
            f"np.sum(scipy.stats.norm.cdf({a}, {loc}, {scale}))",
            f"np.sum(scipy.stats.norm.logcdf({a}, loc={loc}) + scipy.stats.norm.sf({a}, scale={scale}))",
            f"np.sum(scipy.stats.gamma.logpdf(1.0 + {_wrap(a)} ** 2, a={scale} + 0.5, scale={self._positive()}))",
            f"np.sum(scipy.stats.gamma.cdf(1.0 + {_wrap(a)} ** 2, {_pos(self.rng)} + 1.0, scale={scale}))",
            f"np.sum(scipy.stats.beta.logpdf(scipy.special.expit({a}), {scale}, {self._positive()}))",
            f"np.sum(scipy.stats.t.logpdf({a}, df={scale} + 1.0, loc={loc}, scale={self._positive()}))",
            f"np.sum(scipy.stats.t.cdf({a}, {self.rng.choice([2.5, 3.0, 5.0])}, loc={loc}))",
            f"np.sum(scipy.stats.poisson.logpmf({[self.rng.randrange(5) for _ in range(self.n)]}, mu={scale} + np.tanh({a})))",
            f"np.sum(scipy.stats.poisson.logpmf(np.arange({self.n}), {scale}))",
            f"np.sum(scipy.stats.expon.logpdf(1.0 + {_wrap(a)} ** 2, scale={scale}))",
        ])
        if self.rng.random() < 0.3:  # a frozen distribution, made once and called twice
            d = self.env.fresh("dist")
            return [f"{d} = scipy.stats.norm({loc}, {scale})  # stats_dists",
                    f"{out} = np.sum({d}.logpdf({a})) + {d}.cdf({self.float_expr(1)}) * 0.5"]
        return [f"{out} = {form}  # stats_dists"]

    # ---- scipy.linalg ------------------------------------------------------------------------
    def b_scipy_linalg(self):
        out = self._new("f", "t")
        m, lines = self._spd("scipy_linalg")
        b, n = self.array_expr(1), self.n
        form = self.rng.randrange(5)
        if form == 0:
            c = self.env.fresh("cf")
            return lines + [f"{c} = scipy.linalg.cho_factor({m}, lower={self.pick(['True', 'False'])})",
                            f"{out} = np.sum(scipy.linalg.cho_solve({c}, {b}) * {_wrap(b)}) * 0.5"]
        if form == 1:
            low = self.pick(["True", "False"])
            tri = f"np.tril({m})" if low == "True" else f"np.triu({m})"
            return lines + [f"{out} = np.sum(scipy.linalg.solve_triangular({tri}, {b}, lower={low}) ** 2)"]
        if form == 2:
            return lines + [f"{out} = np.sum(scipy.linalg.expm(0.2 * ({m} - 2.0 * np.eye({n})) * {self.float_expr(1)})) * 0.1"]
        if form == 3:
            lu, piv = self.env.fresh("lu"), self.env.fresh("piv")
            return lines + [f"{lu}, {piv} = scipy.linalg.lu_factor({m} + 0.3 * np.diag({self.array_expr(1)}))",
                            f"{out} = np.sum(scipy.linalg.lu_solve(({lu}, {piv}), {b}))"]
        chol = self.env.fresh("L")
        return lines + [f"{chol} = scipy.linalg.cholesky({m}, lower=True)",
                        f"{out} = np.sum(np.log(np.diag({chol}))) + np.sum(scipy.linalg.solve_triangular({chol}, {b}, lower=True) ** 2)"]

    # ---- Gaussian models through np.linalg -----------------------------------------------------
    def b_gauss_model(self):
        out = self._new("f", "t")
        m, lines = self._spd("gauss_models")
        r = self.array_expr(1)
        form = self.rng.randrange(4)
        if form == 0:
            sign, logdet = self.env.fresh("sg"), self.env.fresh("ld")
            return lines + [f"{sign}, {logdet} = np.linalg.slogdet({m})",
                            f"{out} = 0.5 * {logdet} * {sign} + 0.5 * {_wrap(r)} @ np.linalg.inv({m}) @ {_wrap(r)}"]
        if form == 1:
            w, v = self.env.fresh("ev"), self.env.fresh("V")
            pick = self.pick([f"np.sum(np.log({w}))", f"np.sum({w} * np.arange(1, {self.n + 1}))",
                              f"np.sum({v}[:, -1] ** 2 * {_wrap(r)})", f"np.sum(({v}.T @ {_wrap(r)}) ** 2 / {w})"])
            return lines + [f"{w}, {v} = np.linalg.eigh({m})", f"{out} = {pick}"]
        if form == 2:
            return lines + [f"{out} = np.linalg.slogdet({m})[1] + np.trace(np.linalg.inv({m}) @ np.outer({r}, {r})) * 0.5"]
        return lines + [f"{out} = np.sum(np.linalg.eigvalsh({m}) ** 2) * 0.1 + np.linalg.det(np.linalg.inv({m}))"]

    # ---- np.where with both branches finite ----------------------------------------------------
    def b_where_finite(self):
        a = self._array_name()
        if a is None:
            return None
        y = self._new("a", "y")
        c = _const(self.rng, 0.0, 0.6)
        made = self.pick([
            f"np.where({a} > {c}, np.sin({a}) * {self.float_expr(1)}, {a} ** 2)",
            f"np.where({a} < {c}, np.exp(-{_wrap(a)} ** 2), np.tanh({a}) + 1.0)",
            f"np.where(np.abs({a}) > {_pos(self.rng)}, {a}, {self.array_expr(1)})",
            f"np.where({a} > {c}, {self.float_expr(1)}, {a} * {self.float_expr(1)})",
            f"np.where([True, False] * {self.n // 2} + [True] * {self.n % 2}, {a}, {self.array_expr(1)})",
        ])
        return [f"{y} = {made}  # where_finite"]

    # ---- searchsorted and interp on grids -------------------------------------------------------
    def b_search_interp(self):
        a = self._array_name()
        if a is None:
            return None
        out, g = self._new("f", "t"), self.env.fresh("grid")
        k = self.rng.choice([7, 9, 11])
        side = self.pick(['"right"', '"left"'])
        grid = f"{g} = np.linspace(-2.0, 2.0, {k})  # search_interp"
        form = self.pick([
            [f"{out} = np.sum({a} * np.cos({g})[np.searchsorted({g}, {a})])"],
            [f"{out} = np.sum(np.interp({a}, {g}, np.sin({g}) * {self.float_expr(1)}))"],
            [f"{out} = float(np.interp({self.float_expr(1)}, {g}, {g} ** 2 + np.tanh({g} * {self.float_expr(1)})))"],
            [f"idx = np.clip(np.searchsorted({g}, {a}, side={side}) - 1, 0, {k - 2})",
             f"wt = ({a} - {g}[idx]) / ({g}[idx + 1] - {g}[idx])",
             f"{out} = np.sum((1.0 - wt) * np.exp({g}[idx] * 0.3) + wt * np.exp({g}[idx + 1] * 0.3))"],
        ])
        return [grid] + form

    # ---- integer powers in loops ---------------------------------------------------------------
    def b_int_powers(self):
        out = self._new("f", "t")
        kmax = self.rng.randint(2, 4)
        coeffs = [_const(self.rng) for _ in range(kmax + 1)]
        base = self.env.fresh("b")
        value = self.float_expr(1) if self.rng.random() < 0.5 else f"np.tanh({self.array_expr(1)}) * {_pos(self.rng)}"
        lines = [f"{base} = {value}  # int_powers"]
        form = self.rng.randrange(4)
        if form == 0:  # Horner's scheme
            lines += [f"{out} = 0.0", f"for c in [{', '.join(coeffs)}]:", f"    {out} = {out} * {base} + c"]
        elif form == 1:  # a power series
            lines += [f"{out} = 0.0", f"for k in range(1, {kmax + 1}):", f"    {out} = {out} + {base} ** k / k"]
        elif form == 2:  # repeated products
            p = self.env.fresh("pw")
            lines += [f"{p} = 1.0", f"for _ in range({kmax}):", f"    {p} = {p} * {base}", f"{out} = {p}"]
        else:  # float exponents at negative bases (the exponent's log is NaN there)
            lines += [f"{out} = {base} ** 2.0 - 0.5 * {_wrap(base)} ** 3.0 + np.power({base}, 4.0) * 0.1"]
        return lines + [f"{out} = np.sum({out})"]

    # ---- exact sums and means --------------------------------------------------------------------
    def b_exact_means(self):
        out = self._new("f", "t")
        items = ", ".join(self.float_expr(1) for _ in range(self.rng.randint(2, 4)))
        weights = [round(self.rng.uniform(0.5, 2.0), 2) for _ in range(self.n)]
        form = self.pick([
            f"math.fsum([{items}])", f"statistics.fmean([{items}])",
            f"math.fsum({self.array_expr(1)}) * 0.5", f"statistics.fmean({self.array_expr(1)})",
            f"statistics.fmean({self.array_expr(1)}, weights={weights})",
            f"math.fsum(v * v for v in {_wrap(self.array_expr(1))}) * 0.1",
            f"statistics.fmean(np.tanh({self.array_expr(1)}).tolist()) + math.fsum(({items},))",
        ])
        return [f"{out} = {form}  # exact_means"]

    # ---- dataclass states in loops ---------------------------------------------------------------
    def b_dataclass_model(self):
        a = self._array_name()
        if a is None:
            return None
        st, out = self.env.fresh("st"), self._new("f", "t")
        lines = [f"{st} = State0({a}.copy(), {self.float_expr(1)})  # dataclass_models",
                 f"for i in range({self.rng.randint(2, 4)}):"]
        lines += self.pick([
            [f"    {st}.vel = {st}.vel * 0.9 - 0.1 * np.sum(np.sin({st}.pos))", f"    {st}.pos = {st}.pos + 0.2 * {st}.vel",
             f"    {st}.steps += 1"],
            [f"    {st} = dataclasses.replace({st}, vel={st}.vel + 0.1 * np.tanh({st}.pos[0]), steps={st}.steps + 1)"],
            [f"    {st}.pos[i % {self.n}] *= 0.5 + 0.1 * {st}.vel", f"    {st}.vel -= 0.05 * {st}.energy()"],
            [f"    {st}.pos += 0.1 * np.cos({st}.pos) * {st}.vel", f"    if {st}.energy() > {self.rng.uniform(2.0, 5.0):.2f}:",
             "        break"],
        ])
        return lines + [f"{out} = {st}.energy() + {st}.vel * {st}.steps * 0.1"]

    # ---- gradient descent on a dict of arrays, left by break -----------------------------------
    def b_dict_descent(self):
        a = self._array_name()
        if a is None:
            return None
        p, out, g = self.env.fresh("prm"), self._new("f", "t"), self.env.fresh("gr")
        target = self.array_expr(1)
        tol = self.pick(["1e-3", "0.05", "0.3"])
        return [f'{p} = {{"w": {a} * 0.5, "b": np.zeros({self.n})}}  # dict_descent',
                f"for it in range({self.rng.randint(3, 8)}):",
                f'    {g} = {{"w": {p}["w"] + {p}["b"] - np.tanh({target}), "b": 0.5 * ({p}["w"] + {p}["b"])}}',
                f"    for key in {p}:", f"        {p}[key] = {p}[key] - {_pos(self.rng)} * 0.3 * {g}[key]",
                f'    if np.linalg.norm({g}["w"]) < {tol}:', "        break",
                f'{out} = np.sum({p}["w"] ** 2) + np.sum({p}["b"] * {p}["w"])']

    # ---- lists of scalars into ufuncs, rebound names, closures that write ---------------------------
    def b_scalar_lists(self):
        out, v = self._new("f", "t"), self.env.fresh("sl")
        e1, e2 = self.float_expr(1), self.float_expr(1)
        ufunc = self.pick(["np.sin", "np.exp", "np.tanh", "np.cos", "np.square"])
        lines = [f"{v} = {ufunc}([{e1}, {e2}])  # scalar_lists"]
        form = self.rng.randrange(3)
        if form == 0:  # the name rebound to an item, then to a product with it
            lines += [f"{v} = {v}[{self.rng.randrange(2)}]", f"{v} = {v} * {v} + {self.float_expr(1)}", f"{out} = {v}"]
        elif form == 1:  # a closure writing the float it captures
            acc, step = self.env.fresh("acc"), self.env.fresh("add")
            lines += [f"{acc} = 0.0", f"def {step}(w):", f"    nonlocal {acc}", f"    {acc} = {acc} + w * w",
                      f"for w in {v}:", f"    {step}(w)", f"{out} = {acc}"]
        else:  # a list of scalars into a binary ufunc with a broadcast scalar
            lines += [f"{out} = float(np.sum(np.maximum({v}, [{self.float_expr(1)}, 0.0]) * np.array([1.0, 0.5])))"]
        return lines
