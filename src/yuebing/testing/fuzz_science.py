"""Fuzzer productions for what scientists write (mixed into ``fuzz_programs.Generator``).

Constant tables held in structured arrays and read by field or record, local tables written
through a field's view (differentiated: tangents/structured.py), closures writing ``nonlocal`` state inside
loops, classes with ``__new__``, ``try``/``except`` around a ``math.sqrt``/``math.log`` that fails
with a fallback branch, dict-of-arrays models updated in place, ``np.linalg.solve``/``inv``/``det``
in a loop, ``scipy.special`` functions of arrays, in-place updates of slices, masked reductions,
recursion over arrays and generators of arrays consumed by ``sum``.

Each ``b_*`` method returns the block's lines (or ``None`` when nothing fits); the names it binds
become live after its lines (``MixedBlocks._binding``). Values stay moderate: matrices are
``2 I`` plus a small term, exponents and logs see ``1 + e*e``.
"""
from __future__ import annotations

from .fuzz_constructs import _const, _pos

SCIENCE_FEATURES = (
    "struct_tables",    # TABLE0["a"][:n] * x, rows walked by a loop, a local table; rarely a write through a field view
    "nonlocal_loops",   # a closure writing nonlocal state, defined in a loop body or looping itself
    "new_classes",      # a class whose __new__ sets attributes (and a float subclass made by __new__)
    "fallbacks",        # try: math.sqrt(e) / math.log(e) except ValueError: a fallback
    "dict_models",      # a dict of arrays updated in place in a loop (slices, keys walked), the argument p too
    "linalg_loops",     # np.linalg.solve, inv and det of 2I + a small term, in a loop carrying the solution
    "special_arrays",   # scipy.special of arrays: xlogy, xlog1py, logsumexp(b=, axis=), log_softmax, digamma...
    "slice_inplace",    # y[1:] += b[:-1], y[:-1] -= y[1:], y[::2] *= c, y[mask] += ..., matrix rows
    "masked_reduce",    # b[mask].sum(), np.sum(b, where=mask), np.where(mask, b, 0), b * mask
    "array_recursion",  # recursion over arrays: v[0] + f(v[1:]), a smoothing step k times, mutual recursion
    "array_generators",  # sum(np.sin(a * k) for k in range(3)), generator functions yielding arrays
    "errstate",         # with np.errstate(invalid="raise"): try: np.sqrt(a) except FloatingPointError: ...
)

# Features left out unless asked for, and why.
SCIENCE_OPT_IN = {
    "errstate": "forward mode's tangent arithmetic runs under the user's np.errstate: 0.5 / sqrt(0) raises "
                "FloatingPointError where the plain call does not (tests/test_fuzz.py KNOWN_WRONG)",
}

SCIENCE_MARKERS = {
    "struct_tables": r"TABLE0|dtype=\[",
    "nonlocal_loops": r"# nonlocal in a loop$",
    "new_classes": r"(Particle0|Pos0)\(",
    "fallbacks": r"except ValueError:$",
    "errstate": r"np\.errstate\(",
    "dict_models": r"# dict model$",
    "linalg_loops": r"# linalg loop$",
    "special_arrays": r"^\s*_?y\d+ = scipy\.special\.",
    "slice_inplace": r"\[(1:|:-1|::2|_?mk\d+)\] [-+*/]= ",
    "masked_reduce": r"where=~?_?mk\d+|\[~?_?mk\d+\]\.|\* _?mk\d+\)|np\.where\(_?mk\d+",
    "array_recursion": r"\b(tail0|smooth0|ping0)\(",
    "array_generators": r"sum\(\(?np\.\w+\(.* for [kv] in|sum\(_?gen\d+\(|sum\(\(.* for i in range|for k in range\(3\)\)?\]?(\)\.sum|, axis)|max\(\(np",
}

TABLE = """TABLE0 = np.array([(0.5, 1.2, 2), (-0.3, 0.8, 1), (1.1, -0.4, 3), (0.2, 0.6, 0)],
                  dtype=[("a", float), ("b", float), ("k", int)])"""

PARTICLE_CLASS = """class Particle0:
    def __new__(cls, v, scale=1.0):
        obj = super().__new__(cls)
        obj.v = v * scale
        return obj

    def __init__(self, v, scale=1.0):
        self.m = 0.5 + 0.1 * scale * scale

    def energy(self):
        return self.m * np.sum(self.v * self.v)"""

POS_CLASS = """class Pos0(float):
    def __new__(cls, v):
        return super().__new__(cls, v * v + 0.1)

    def half(self):
        return self * 0.5"""

RECURSIVE_HELPERS = """def tail0(v):
    if len(v) == 1:
        return v[0]
    return v[0] * 0.5 + np.sin(tail0(v[1:]))


def smooth0(v, k):
    if k == 0:
        return v
    return smooth0(0.5 * (v + np.roll(v, 1)) + 0.1 * np.tanh(v), k - 1)


def ping0(v, k):
    return v if k == 0 else pong0(np.sin(v) * 0.9, k - 1)


def pong0(v, k):
    return v if k == 0 else ping0(v * v * 0.5 + 0.1, k - 1)"""


def science_helper_sources(on) -> list[str]:
    """The module-level helpers the enabled productions need (``on(feature)``)."""
    wanted = (("struct_tables", TABLE), ("new_classes", PARTICLE_CLASS), ("new_classes", POS_CLASS),
              ("array_recursion", RECURSIVE_HELPERS))
    return [source for feature, source in wanted if on(feature)]


class ScienceBlocks:
    """Block makers of ``SCIENCE_FEATURES``; uses the generator's ``rng``, ``env``, ``n``, ``pick``,
    ``float_expr``, ``array_expr`` and ``MixedBlocks``' ``_binding``, ``_new`` and ``_array_name``."""

    def science_makers(self) -> list:
        makers = [
            ("struct_tables", self.b_struct_table), ("nonlocal_loops", self.b_nonlocal_loop),
            ("new_classes", self.b_new_class), ("fallbacks", self.b_fallback), ("errstate", self.b_errstate),
            ("dict_models", self.b_dict_model), ("linalg_loops", self.b_linalg_loop),
            ("special_arrays", self.b_special_array), ("slice_inplace", self.b_slice_inplace),
            ("masked_reduce", self.b_masked_reduce), ("array_recursion", self.b_array_recursion),
            ("array_generators", self.b_array_generator),
        ]
        return [(feature, self._binding(maker)) for feature, maker in makers]

    def _consts(self) -> str:
        return "[" + ", ".join(_const(self.rng) for _ in range(self.n)) + "]"

    # ---- structured arrays of constants --------------------------------------------------------
    def b_struct_table(self):
        """Fields and records of a constant module table read into differentiated expressions;
        one block in twelve makes a local table (its constants written in), and at half of those a
        differentiated float is written through a field's view (both differentiated)."""
        n, out = self.n, self._new("f", "t")
        form = self.rng.randrange(12)
        if form == 0:
            return self._local_table(out)
        if form < 5:  # records (np.void), or tuples of Python numbers from tolist()
            rows, row = self.pick([(f"TABLE0[:{n}]", 'row["a"]'), (f"TABLE0[:{n}]", "row[0]"),
                                   (f"TABLE0.tolist()[:{n}]", "row[0]")])
            return [f"{out} = 0.0", f"for row in {rows}:",
                    f"    {out} = {out} + {row} * np.sin({self.float_expr(1)} * row[1]) + row[2] * 0.1"]
        y = self._new("a", "y")
        field = f'TABLE0["{self.pick("ab")}"][:{n}]'
        return [f"{y} = {field} * {self.array_expr(1)} + TABLE0[\"b\"][:{n}] ** 2",
                f'{out} = np.sum({y} * TABLE0["k"][:{n}]) * 0.1 + TABLE0["a"][{self.rng.randrange(n)}] * {self.float_expr(1)}']

    def _local_table(self, out: str) -> list[str]:
        n, tab, v = self.n, self.env.fresh("tab"), self.env.fresh("fv")
        write = self.pick([[f'{v} = {tab}["w"]', f"{v}[{self.rng.randrange(n)}] = {self.float_expr(1)}"],
                           [f'{v} = {tab}["w"]', f"{v} *= {self.array_expr(1)}"],
                           [f"for i in range({n}):", f'    {tab}["w"][i] = {tab}["w"][i] * {self.float_expr(1)}'],
                           [f'np.copyto({tab}["w"], {self.array_expr(1)})'],
                           [f'{v} = {tab}["w"][::2]', f"{v}[0] = {self.float_expr(1)}"]])
        made = [f'{tab} = np.zeros({n}, dtype=[("w", float), ("c", float)])', f'{tab}["w"] = {self._consts()}',
                f'{tab}["c"] = np.linspace(0.1, 1.0, {n})']
        return made + (write if self.rng.random() < 0.5 else []) + [
            f'{out} = np.sum({tab}["w"] * np.tanh({self.array_expr(1)}) + {tab}["c"] ** 2 * {self.float_expr(1)})']

    # ---- closures writing nonlocal state inside loops --------------------------------------------
    def b_nonlocal_loop(self):
        a = self._array_name()
        if a is None:
            return None
        acc, step, out = self.env.fresh("acc"), self.env.fresh("step"), self._new("f", "t")
        c = self.float_expr(1)
        form = self.rng.randrange(4)
        if form == 2:  # a captured array written by item, and one rebound through nonlocal
            buf, arr = self.env.fresh("buf"), self.env.fresh("arr")
            return [f"{buf} = np.zeros({self.n})  # nonlocal in a loop", f"{arr} = {a} * 0.5",
                    f"def {step}(i, v):", f"    nonlocal {arr}", f"    {buf}[i] = v * {arr}[i]",
                    f"    {arr} = {arr} * 0.9 + np.tanh(v)", f"for i in range({self.n}):", f"    {step}(i, {a}[i] * {c})",
                    f"{out} = np.sum({buf} * {arr}) + np.sum({buf} ** 2) * 0.1"]
        if form < 2:  # the closure defined anew in every iteration
            return [f"{acc} = 0.0  # nonlocal in a loop", f"{out} = 0.0", f"for i in range({self.n}):",
                    f"    def {step}(v):", f"        nonlocal {acc}", f"        {acc} = {acc} * 0.7 + np.tanh(v)",
                    f"        return {acc}", f"    {out} = {out} + {step}({a}[i] * {c})"]
        # the closure loops itself, breaking on its state, and is called in a loop
        return [f"{acc} = 0.0  # nonlocal in a loop", f"def {step}(arr, c):", f"    nonlocal {acc}",
                "    for v in arr:", f"        {acc} = {acc} + np.sin(v * c)",
                f"        if {acc} > {self.rng.uniform(1.0, 4.0):.3f}:", "            break", f"    return {acc}",
                f"{out} = 0.0", "k = 0", "while k < 2:", f"    {out} = {out} + {step}({a}, {c}) * 0.5", "    k += 1"]

    # ---- classes with __new__ ------------------------------------------------------------------
    def b_new_class(self):
        out = self._new("f", "t")
        if self.rng.random() < 0.3:
            pos = self.env.fresh("pos")
            return [f"{pos} = Pos0({self.float_expr(2)})", f"{out} = {pos}.half() + {pos} * {self.float_expr(1)}"]
        obj = self.env.fresh("pt")
        return [f"{obj} = Particle0({self.array_expr(1)}, {self.float_expr(1)})",
                f"{obj}.v = {obj}.v * {_const(self.rng)} + {self.array_expr(1)}",
                f"{out} = {obj}.energy() * 0.1 + {obj}.m * {self.float_expr(1)}"]

    # ---- try/except fallbacks --------------------------------------------------------------------
    def b_fallback(self):
        out = self._new("f", "t")
        e = self.float_expr(1)
        if self.rng.random() < 0.5:
            return ["try:", f"    {out} = math.sqrt({e})", "except ValueError:", f"    {out} = -math.sqrt(-({e})) * 0.5"]
        return ["try:", f"    {out} = math.log({e}) * {self.float_expr(1)}", "except ValueError:",
                f"    {out} = {e} - 1.0"]

    def b_errstate(self):
        """NumPy's floating-point errors raised in a block, caught with a fallback."""
        a, out = self.array_expr(1), self._new("f", "t")
        y, base = self._new("a", "y"), self.env.fresh("base")
        # the base computed before the block: only the sqrt may raise (np.where computes both branches)
        return [f"{base} = {a}", 'with np.errstate(invalid="raise"):', "    try:", f"        {y} = np.sqrt({base})",
                "    except FloatingPointError:", f"        {y} = np.sqrt(np.abs({base})) * 0.5",
                f"{out} = np.sum({y})"]

    # ---- dict-of-arrays models updated in place ------------------------------------------------
    def b_dict_model(self):
        a = self._array_name()
        if a is None:
            return None
        m, out = self.env.fresh("mdl"), self._new("f", "t")
        lines = [f'{m} = {{"w": {a}.copy(), "b": np.zeros({self.n}), "c": {self.float_expr(1)}}}  # dict model',
                 f"for step in range({self.rng.randint(1, 3)}):",
                 f'    {m}["w"] -= 0.1 * np.tanh({m}["w"] * {self.array_expr(1)})',
                 f'    {m}["b"][1:] += {m}["w"][:-1] * {_const(self.rng)}',
                 f'    {m}["c"] = {m}["c"] * 0.9 + np.sum({m}["b"]) * 0.1']
        lines += self.pick([[f"for key in {m}:", f"    {m}[key] = {m}[key] * {_pos(self.rng)}"],
                            [f"for key, v in {m}.items():", f"    {m}[key] = v + {self.float_expr(1)} * 0.1"],
                            [f'{m}.update(w={m}["w"] * {_pos(self.rng)}, c={m}["c"] + {self.float_expr(1)})'],
                            [f'{m}.setdefault("d", {m}["w"] * 2.0)', f'{m}["d"][0] += {m}["c"]',
                             f'{m}["c"] = {m}["c"] + np.sum({m}["d"]) * 0.1'], []])
        if "p" in self.env.kinds and self.env.kinds["p"] == "d" and self.rng.random() < 0.5:
            lines += [f'p["w"][:2] *= {self.float_expr(1)}', f'p["b"] += np.sum({m}["w"]) * 0.1']
        return lines + [f'{out} = np.sum({m}["w"] * {m}["b"]) + {m}["c"]']

    # ---- linear algebra in a loop ----------------------------------------------------------------
    def b_linalg_loop(self):
        n, out, z = self.n, self._new("f", "t"), self._new("a", "z")
        m, b = self.env.fresh("A"), self.array_expr(1)
        update = self.pick([f"{z} = np.linalg.solve({m}, {z}) * 1.5", f"{z} = np.linalg.inv({m}) @ {z} * 1.5",
                            f"{z} = np.linalg.solve({m}, {z} + {_wrap(b)})"])
        return [f"{z} = {self.array_expr(1)}  # linalg loop", f"{out} = 0.0", f"for i in range({self.rng.randint(2, 3)}):",
                f"    {m} = 2.0 * np.eye({n}) + 0.1 * np.outer(np.tanh({z}), np.tanh({_wrap(b)}))",
                f"    {update}", f"    {out} = {out} + np.log(np.linalg.det({m})) * {self.float_expr(1)}"]

    # ---- scipy.special of arrays -----------------------------------------------------------------
    def b_special_array(self):
        a, b = self.array_expr(1), self.array_expr(1)
        y, out = self._new("a", "y"), self._new("f", "t")
        made = self.pick([
            f"scipy.special.xlogy({a}, 1.0 + {_wrap(b)} ** 2)", f"scipy.special.xlogy(1.0 + {_wrap(a)} ** 2, 0.5 + {_wrap(b)} ** 2)",
            f"scipy.special.xlog1py({a}, {_wrap(b)} ** 2)", f"scipy.special.log_softmax({a})",
            f"scipy.special.digamma(1.5 + {_wrap(a)} ** 2)", f"scipy.special.erfc({a})",
            f"scipy.special.log_expit({a})", f"scipy.special.gammaln(1.0 + np.exp(0.3 * np.tanh({a})))",
            f"scipy.special.erf({a}) * scipy.special.expit({b})",
        ])
        reduced = self.pick([
            f"scipy.special.logsumexp({y}, b=np.exp(0.3 * np.tanh({b})))",
            f"np.sum(scipy.special.logsumexp(np.stack([{y}, {_wrap(b)}]), axis=0))",
            f"scipy.special.logsumexp({y})", f"np.sum({y} * {y}) * 0.1",
        ])
        return [f"{y} = {made}", f"{out} = {reduced}"]

    # ---- in-place updates of slices --------------------------------------------------------------
    def b_slice_inplace(self):
        a = self._array_name()
        if a is None:
            return None
        y, c = self._new("a", "y"), _const(self.rng)
        lines = [f"{y} = {a}.copy()"]
        for _ in range(self.rng.randint(2, 3)):
            lines.append(self.pick([
                f"{y}[1:] += {_wrap(self.array_expr(1))}[:-1] * {c}", f"{y}[:-1] -= 0.5 * {y}[1:]",
                f"{y}[::2] *= {self.float_expr(1)}", f"{y}[1:] += {y}[:-1]",
                f"{y}[1:] /= 1.0 + {y}[:-1] ** 2",
            ]))
        if self.rng.random() < 0.4:
            mk = self.env.fresh("mk")
            lines += [f"{mk} = {y} > {_const(self.rng, 0.0, 0.5)}", f"{y}[{mk}] += np.sin({y}[{mk}]) * {c}"]
        if "W" in self.env.kinds and self.rng.random() < 0.4:
            mat = self._new("m", "M")
            lines += [f"{mat} = W.copy()", f"{mat}[1:, :] += 0.5 * {mat}[:-1, :] * {self.float_expr(1)}",
                      f"{mat}[:, 0] -= {y}"]
        return lines

    # ---- masked reductions ---------------------------------------------------------------------
    def b_masked_reduce(self):
        a, b = self._array_name(), self.array_expr(1)
        if a is None:
            return None
        mk, out = self.env.fresh("mk"), self._new("f", "t")
        reduced = self.pick([
            f"{_wrap(b)}[{mk}].sum()", f"{_wrap(b)}[~{mk}].sum() * {self.float_expr(1)}",
            f"np.sum({b}, where={mk})", f"np.sum(np.where({mk}, {b}, 0.0) ** 2)", f"np.sum({_wrap(b)} * {mk})",
            f"np.mean({b}, where={mk}) if {mk}.any() else 0.0", f"np.sum(np.sin({b}), where=~{mk}) + np.count_nonzero({mk})",
            f"np.max({b}, where={mk}, initial=-5.0) * 0.5",
        ])
        return [f"{mk} = {a} > {_const(self.rng, 0.0, 0.8)}", f"{out} = {reduced}"]

    # ---- recursion over arrays ---------------------------------------------------------------------
    def b_array_recursion(self):
        out = self._new("f", "t")
        k = self.rng.randint(1, 3)
        value = self.pick([f"tail0({self.array_expr(1)})", f"np.sum(smooth0({self.array_expr(1)}, {k}) ** 2)",
                           f"np.sum(ping0({self.array_expr(1)}, {k}))", f"ping0({self.float_expr(1)}, {k + 1})",
                           f"tail0(list(np.tanh({self.array_expr(1)})))"])
        return [f"{out} = {value}"]

    # ---- generators of arrays consumed by sum ------------------------------------------------------
    def b_array_generator(self):
        a = self._array_name()
        if a is None:
            return None
        y = self._new("a", "y")
        made = self.pick([
            [f"{y} = sum(np.sin({a} * k) * {_pos(self.rng)} for k in range(3))"],
            [f"{y} = sum(({a}[i] * np.cos({self.array_expr(1)}) for i in range({self.n})), np.zeros({self.n}))"],
            [f"def {(g := self.env.fresh('gen'))}(c):", "    for k in range(3):", f"        yield np.tanh({a} * c) * 0.5 ** k",
             f"{y} = sum({g}({self.float_expr(1)}))"],
            [f"{y} = sum((np.tanh(v * {_wrap(self.array_expr(1))}) for v in {a}), start=np.zeros({self.n}))"],
            [f"{y} = np.stack(list(np.sin({a} + k) for k in range(3))).sum(axis=0)"],
            [f"{y} = np.sum([{a} * {_pos(self.rng)} ** k for k in range(3)], axis=0)"],
            [f"{y} = max((np.sin({a} * k) for k in (1.0, 2.0, 3.0)), key=lambda v: v[0])"],
        ])
        return made


def _wrap(expr: str) -> str:
    """``expr`` parenthesised unless it is a plain name."""
    return expr if expr.isidentifier() else f"({expr})"
