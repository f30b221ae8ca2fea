"""More of what scientists write, for the fuzzer (``fuzz_programs``): the habits of session 22.

Each feature is a block maker mixed into ``fuzz_programs.Generator`` (it uses the generator's
``rng``, ``env``, ``n``, ``pick``, ``float_expr``, ``array_expr`` and ``MixedBlocks``' ``_new``,
``_array_name``). The first line of every block ends in a comment naming its feature, so
``features_in`` sees it. Values stay moderate (``tanh``/``sin`` squash, divisions by
``1 + e*e``); a stop test or a tie that lands on a kink is skipped by the checker.
"""
from __future__ import annotations

from .fuzz_constructs import _const, _pos

HABIT_FEATURES = (
    "dict_break",       # a dict of arrays (a model and its velocity) updated in place in a loop left by break
    "scatter",          # np.add.at/np.subtract.at, np.put, y[[0, 0, 1]] += (buffered), fancy writes, repeated indices
    "norms",            # np.linalg.norm of vectors and matrices with ord= and axis=, keepdims
    "ties",             # np.maximum(a, a), np.clip(a, a - 1, a + 1), max(s, s), sorting equal entries
    "einsum_strings",   # np.einsum of matrices and vectors: "ij,j->i", "ii->", "ij->ji", "...i,...i->..."
    "cumulative",       # np.cumsum/np.cumprod/np.diff/np.roll of vectors and of matrices along an axis
    "special_axes",     # scipy.special softmax/logsumexp along an axis of a matrix, gammaln, erf, expit, xlogy
    "view_writes",      # a view (x[::2], M.T, reshape, [::-1], ravel) written, then the base read
    "array_classes",    # a class holding arrays with __add__/__mul__/__rmul__/__sub__/__neg__, reduced and summed
    "tolerance_loops",  # while loops stopped by a tolerance: Newton's square root, a fixed point, with try/except
)

HABIT_MARKERS = {name: rf"# {name}$" for name in HABIT_FEATURES}

FIELD_CLASS = """class Field0:
    def __init__(self, u, w):
        self.u = u
        self.w = w

    def __add__(self, other):
        return Field0(self.u + other.u, self.w + other.w)

    def __sub__(self, other):
        return Field0(self.u - other.u, self.w - other.w)

    def __mul__(self, c):
        return Field0(self.u * c, self.w * c)

    __rmul__ = __mul__

    def __neg__(self):
        return Field0(-self.u, -self.w)

    def energy(self):
        return np.sum(self.u * self.u) + 0.5 * np.sum(np.sin(self.w))"""

# a matrix {m} (and vectors {a}, {b} of length {n}) reduced to a float by einsum strings
EINSUM_FORMS = (
    'np.sum(np.einsum("ij,j->i", {m}, {a}) ** 2)', 'np.einsum("ii->", {m})',
    'np.einsum("ij,ij->", {m}, {m}) * 0.1', 'np.einsum("i,ij,j->", {a}, {m}, {b})',
    'np.sum(np.einsum("ij->ji", {m}) * {m})', 'np.sum(np.einsum("ij,jk->ik", {m}, {m}) ** 2) * 0.01',
    'np.sum(np.einsum("...i,...i->...", {m}, {m}))', 'np.sum(np.einsum("i,j->ij", {a}, {b}) * {m})',
    'np.einsum("ij,kj,ik->", {m}, {m}, np.eye({n}))', 'np.sum(np.einsum("ii->i", {m}) * {a})',
)

# a matrix {m} reduced by scipy.special along the axis {ax}
SPECIAL_AXIS_FORMS = (
    "np.sum(scipy.special.softmax({m}, axis={ax}) * {m})",
    "np.sum(scipy.special.logsumexp({m}, axis={ax}))",
    "np.sum(scipy.special.logsumexp({m}, axis={ax}, b=np.exp(0.2 * np.tanh({m}))))",
    "np.sum(scipy.special.gammaln(1.5 + {m} ** 2))", "np.sum(scipy.special.erf({m}) * scipy.special.expit({m}))",
    "np.sum(scipy.special.xlogy({m} ** 2, 1.0 + {m} ** 2))", "np.sum(scipy.special.log_softmax({m}, axis={ax})[0])",
    "np.sum(scipy.special.softmax({m}) ** 2)", "float(scipy.special.logsumexp({m}))",
)


def habit_helper_sources(on) -> list[str]:
    """The module-level helpers the enabled habits need (``on(feature)``)."""
    return [FIELD_CLASS] if on("array_classes") else []


def _wrap(expr: str) -> str:
    return expr if expr.isidentifier() else f"({expr})"


class HabitBlocks:
    """Block makers of ``HABIT_FEATURES``."""

    def habit_makers(self) -> list:
        makers = [
            ("dict_break", self.b_dict_break), ("scatter", self.b_repeated_scatter), ("norms", self.b_norms),
            ("ties", self.b_ties), ("einsum_strings", self.b_einsum), ("cumulative", self.b_cumulative),
            ("special_axes", self.b_special_axes), ("view_writes", self.b_view_writes),
            ("array_classes", self.b_array_classes), ("tolerance_loops", self.b_tolerance_loop),
        ]
        return [(feature, self._binding(maker)) for feature, maker in makers]

    def _habit_matrix(self, tag: str) -> tuple[str, list[str]]:
        """A fresh n x n float matrix made from arrays (the argument W when there is one)."""
        m = self.env.fresh("M")
        if "W" in self.env.kinds and self.rng.random() < 0.5:
            return m, [f"{m} = W * {_pos(self.rng)} + 0.1 * np.eye({self.n})  # {tag}"]
        return m, [f"{m} = np.outer(np.tanh({self.array_expr(1)}), {_wrap(self.array_expr(1))}) + "
                   f"np.diag({_wrap(self.array_expr(1))})  # {tag}"]

    # ---- a dict model trained in a loop left by break ------------------------------------------
    def b_dict_break(self):
        a = self._array_name()
        if a is None:
            return None
        m, out = self.env.fresh("net"), self._new("f", "t")
        c, lr, tol = self.float_expr(1), _pos(self.rng) + " * 0.2", repr(round(self.rng.uniform(0.05, 2.0), 3))
        stop = self.pick([f'if np.sum({m}["v"] ** 2) < {tol}:', f'if np.max(np.abs({m}["w"])) > {tol} + 1.0:',
                          f"if it >= {self.rng.randint(1, 3)}:"])
        return [f'{m} = {{"w": {a}.copy(), "v": np.zeros({self.n}), "loss": 0.0}}  # dict_break',
                f"for it in range({self.rng.randint(2, 5)}):",
                f'    g = np.tanh({m}["w"] * {_wrap(c)}) + 0.1 * {m}["w"]',
                f'    {m}["v"] *= 0.5', f'    {m}["v"] += g',
                f'    {m}["w"] -= {lr} * {m}["v"]',
                f'    {m}["loss"] = {m}["loss"] + np.sum(g * g) * 0.1',
                f"    {stop}", "        break",
                f'{out} = np.sum({m}["w"] * {m}["w"]) + {m}["loss"] + {m}["v"][0]']

    # ---- scatter writes with repeated indices --------------------------------------------------
    def b_repeated_scatter(self):
        a = self._array_name()
        if a is None:
            return None
        n, y = self.n, self._new("a", "y")
        idx = [self.rng.randrange(n) for _ in range(3)]
        idx[1] = idx[0]  # a repeated index: add.at adds twice, y[idx] += once (buffered)
        vals = f"np.sin({self.array_expr(1)})[:3]"
        write = self.pick([
            f"np.add.at({y}, {idx}, {vals})", f"np.subtract.at({y}, {idx}, {vals} * {_const(self.rng)})",
            f"{y}[{idx}] += {vals}", f"{y}[np.array({idx})] *= 1.0 + 0.2 * np.tanh({vals})",
            f"np.put({y}, {idx[1:]}, {vals}[:2])", f"{y}[{idx[1:]}] = {vals}[:2] * {self.float_expr(1)}",
            f"np.multiply.at({y}, {idx}, 1.0 + 0.3 * np.tanh({vals}))",
            f"{y}[{[k % 2 == 0 for k in range(n)]}] -= 0.5 * {y}[{[k % 2 == 0 for k in range(n)]}] ** 2",
        ])
        return [f"{y} = {a} * {_pos(self.rng)}  # scatter", write]

    # ---- norms with ord and axis -----------------------------------------------------------------
    def b_norms(self):
        out = self._new("f", "t")
        if self.rng.random() < 0.4:
            ord_ = self.pick(["1", "3", "np.inf", "-np.inf", "0.5", "None", "2"])
            return [f"{out} = np.linalg.norm({self.array_expr(1)} + 0.05, ord={ord_})  # norms"]
        m, lines = self._habit_matrix("norms")
        norm = self.pick([
            f"np.sum(np.linalg.norm({m}, axis={self.rng.randrange(2)}))",
            f"np.sum(np.linalg.norm({m}, ord={self.pick(['1', '3', 'np.inf'])}, axis={self.rng.randrange(2)}))",
            f"np.linalg.norm({m}, ord={self.pick(['1', 'np.inf', chr(39) + 'fro' + chr(39), '-1'])})",
            f"np.linalg.norm({m}, ord={self.pick(['2', '-2', chr(39) + 'nuc' + chr(39)])}) * 0.5",
            f"np.sum(np.linalg.norm({m}, axis=1, keepdims=True) * {m})",
        ])
        return lines + [f"{out} = {norm}"]

    # ---- ties between equal values ---------------------------------------------------------------
    def b_ties(self):
        a = self._array_name()
        if a is None:
            return None
        y, out = self._new("a", "y"), self._new("f", "t")
        e = self.float_expr(1)
        made = self.pick([
            f"np.maximum({a}, {a})", f"np.minimum({a} * 1.0, {a})", f"np.clip({a}, {a} - 1.0, {a} + 1.0)",
            f"np.clip({a}, {a}, {a})", f"np.fmax({a}, {a}.copy())", f"np.where({a} > {a}, {a}, 2.0 * {a})",
            f"np.maximum({a}, np.sort({a})[::-1][{self.rng.randrange(self.n)}])",
            f"np.sort(np.concatenate([{a}, {a}]))[::2]",
        ])
        scalar = self.pick([f"max({e}, {e})", f"min({e}, {e}) * 2.0", f"np.max([{e}, {e}])",
                            f"max(np.max({y}), np.max({y}))"])
        return [f"{y} = {made}  # ties", f"{out} = np.sum({y} * {y}) * 0.5 + {scalar}"]

    # ---- einsum strings and scipy.special along axes: a matrix reduced by a form of a table ------
    def _matrix_form(self, tag: str, forms: tuple[str, ...], operands) -> list[str]:
        """A fresh matrix (``_habit_matrix``), then a float: one of ``forms`` formatted with the
        matrix ``m``, ``n`` and what ``operands()`` draws (drawn after the matrix, before the pick)."""
        out = self._new("f", "t")
        m, lines = self._habit_matrix(tag)
        drawn = operands()
        return lines + [f"{out} = {self.pick([form.format(m=m, n=self.n, **drawn) for form in forms])}"]

    def b_einsum(self):
        return self._matrix_form("einsum_strings", EINSUM_FORMS,
                                 lambda: {"a": _wrap(self.array_expr(1)), "b": _wrap(self.array_expr(1))})

    # ---- cumulative sums, differences and rolls ---------------------------------------------------
    def b_cumulative(self):
        a = self._array_name()
        if a is None:
            return None
        out = self._new("f", "t")
        if self.rng.random() < 0.5:
            y = self._new("a", "y")
            made = self.pick([
                f"np.cumsum({a}) * {_const(self.rng)}", f"np.roll({a}, {self.rng.choice([-2, -1, 1, 2])})",
                f"np.cumprod(1.0 + 0.3 * np.tanh({a}))", f"np.concatenate([[0.0], np.diff({a})])",
                f"np.diff(np.cumsum({a}), prepend=0.0)", f"np.diff({a} ** 2, n=2, append=[1.0, 2.0])",
                f"{a}.cumsum()[::-1]",
            ])
            return [f"{y} = {made}  # cumulative", f"{out} = np.sum({y} * np.sin({y}))"]
        m, lines = self._habit_matrix("cumulative")
        reduced = self.pick([
            f"np.sum(np.cumsum({m}, axis={self.rng.randrange(2)}) ** 2) * 0.1",
            # both axes cut to (n-1, n-1): the product of shapes (n-1, n) and (n-1, n-1) failed in every program
            f"np.sum(np.diff({m}, axis={self.rng.randrange(2)})[:{self.n - 1}, :{self.n - 1}] * {m}[1:, 1:])",
            f"np.sum(np.roll({m}, 1, axis={self.rng.randrange(2)}) * {m})",
            f"np.sum(np.cumprod(1.0 + 0.2 * np.tanh({m}), axis=1))", f"np.sum(np.roll({m}, (1, -1), axis=(0, 1)) * {m})",
        ])
        return lines + [f"{out} = {reduced}"]

    def b_special_axes(self):
        return self._matrix_form("special_axes", SPECIAL_AXIS_FORMS, lambda: {"ax": self.rng.randrange(2)})

    # ---- views written, then their base read -------------------------------------------------------
    def b_view_writes(self):
        a = self._array_name()
        if a is None:
            return None
        n, y, v, out = self.n, self._new("a", "y"), self.env.fresh("vw"), self._new("f", "t")
        e = self.float_expr(1)
        write = self.pick([
            [f"{v} = {y}[::2]", f"{v}[0] = {e}", f"{v} *= {_const(self.rng)}"],
            [f"{v} = {y}[1:]", f"{v} += np.tanh({v}) * {e}"],
            [f"{v} = {y}.reshape({n}, 1)", f"{v}[{self.rng.randrange(n)}, 0] = {e}", f"{v}[:, 0] *= 0.9"],
            [f"{v} = {y}.reshape(1, {n}).T", f"{v}[0] += {e}"],
            [f"{v} = {y}[::-1]", f"{v}[0] -= {y}[0] * {e}"],
            [f"{v} = {y}.ravel()", f"{v}[1:] = {v}[:-1] * {e}"],
            [f"{v} = {y}[:]", f"{v}[:] = np.sin({v})", f"{y}[0] += {v}[1]"],
        ])
        lines = [f"{y} = {a}.copy()  # view_writes"] + write
        if self.rng.random() < 0.4:
            m, made = self._habit_matrix("view_writes")
            t = self.env.fresh("vt")
            lines += [made[0].split("  #")[0], f"{t} = {m}.T", f"{t}[0, {self.rng.randrange(n)}] += {e}",
                      f"{y} = {y} + {m}[{self.rng.randrange(n)}] * 0.5"]
        return lines + [f"{out} = np.sum({y} * {y}) + {y}[0]"]

    # ---- classes holding arrays, combined by operators ---------------------------------------------
    def b_array_classes(self):
        a = self._array_name()
        if a is None:
            return None
        fs, out, e = self.env.fresh("fs"), self._new("f", "t"), self.float_expr(1)
        made = f"[Field0({a} * {_pos(self.rng)} ** k, np.tanh({a}) * k) for k in range(3)]"
        combine = self.pick([
            f"functools.reduce(lambda p, q: p + q * 0.5, {fs})", f"sum({fs}[1:], {fs}[0])",
            f"sum((c * g for c, g in zip([0.5, -1.0, 2.0], {fs})), Field0(np.zeros({self.n}), np.zeros({self.n})))",
            f"-({fs}[0] - {fs}[1]) + 2.0 * {fs}[2]", f"functools.reduce(lambda p, q: p - q, {fs}, {fs}[0] * {e})",
        ])
        tot = self.env.fresh("tot")
        lines = [f"{fs} = {made}  # array_classes", f"{tot} = {combine}"]
        if self.rng.random() < 0.4:
            lines.append(f"{tot}.u = {tot}.u + {self.array_expr(1)}")
        return lines + [f"{out} = {tot}.energy() * 0.1"]

    # ---- while loops stopped by a tolerance ----------------------------------------------------------
    def b_tolerance_loop(self):
        out = self._new("f", "t")
        form = self.rng.randrange(4)
        z, k = self.env.fresh("z"), self.env.fresh("k")
        if form == 0:  # Newton's square root, to convergence
            target = f"1.0 + {_wrap(self.array_expr(1))} ** 2"
            return [f"{z} = np.ones({self.n})  # tolerance_loops", f"{k} = 0",
                    f"while np.max(np.abs({z} * {z} - ({target}))) > 1e-12 and {k} < 60:",
                    f"    {z} = 0.5 * ({z} + ({target}) / {z})", f"    {k} += 1", f"{out} = np.sum({z})"]
        if form == 1:  # a scalar fixed point z = c cos(z)
            c = f"0.5 * np.tanh({self.float_expr(1)})"
            return [f"{z} = 0.0  # tolerance_loops", "delta = 1.0", f"{k} = 0",
                    f"while abs(delta) > 1e-13 and {k} < 200:", f"    new = {c} * math.cos({z}) + 0.3",
                    f"    delta = new - {z}", f"    {z} = new", f"    {k} += 1", f"{out} = {z} * {self.float_expr(1)}"]
        if form == 2:  # a try/except fallback on a factorisation
            m, lines = self._habit_matrix("tolerance_loops")
            return lines + ["try:", f"    L = np.linalg.cholesky({m} @ {m}.T + 0.5 * np.eye({self.n}))",
                            f"    {out} = np.sum(np.log(np.diag(L)))",
                            "except np.linalg.LinAlgError:", f"    {out} = np.sum({m} ** 2)"]
        d = self.env.fresh("cache")
        return [f'{d} = {{"a": {self.float_expr(1)}}}  # tolerance_loops', "try:",
                f'    {out} = {d}["{self.pick(["a", "b"])}"] * 2.0', "except KeyError:",
                f'    {out} = {d}["a"] ** 2 + {self.float_expr(1)}']
