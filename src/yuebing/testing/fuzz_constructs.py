"""Program fragments for constructs users write that have hidden silent bugs (fuzzer productions).

``fuzz_programs.Generator`` mixes in ``ConstructBlocks``: each ``b_*`` method writes a few
statements using one construct, on the generator's live names, and returns them (or ``None`` when
nothing fits). The constructs: iterators kept and consumed later with their list changed in
between (``map``, ``zip``, ``enumerate``, ``filter``, ``itertools``), dict views, closures writing
``nonlocal`` state, nested functions under a ``functools.wraps`` decorator, a small class with
``__add__`` and methods, exceptions carrying floats, ``np.linalg`` on well-conditioned matrices,
``np.add.at`` and overlapping in-place updates, and ``numpy.ma`` masked arrays.

Values stay moderate and smooth at most points (``tanh`` squashes what feeds a matrix,
thresholds are random so a point on a kink is rare and recognised by the checker).
"""
from __future__ import annotations

import random

# The construct features (appended to ``fuzz_programs.FEATURES``) and a pattern in the source
# showing that a program exercises each (for coverage counts).
CONSTRUCT_FEATURES = (
    "kept_iterators",   # m = map(g, ys); ys[i] = ...; sum(m) (zip, enumerate, filter); for v in map(..) writing ys
    "itertools",        # chain, accumulate, pairwise, starmap, islice, zip_longest kept; groupby
    "dict_views",       # d.values() read after a write; d.items() walked while values are set
    "dict_iterators",   # iter/map/zip/enumerate/filter/reversed of d.values() kept while d is written
    "decorated",        # a nested function under a functools.wraps decorator: opt-in (being fixed)
    "operators",        # a small class with __add__, __mul__ and a method
    "exceptions",       # raise ValueError(v) / a user exception storing a float, read in the handler
    "linalg",           # np.linalg.solve, inv, cholesky of 2I + 0.1 t t^T
    "numpy_ma",         # np.ma.masked_where(a < c, a).sum() and other numpy.ma reductions
)

CONSTRUCT_MARKERS = {
    "kept_iterators": r"= (map|zip|enumerate|filter)\(|for v in map\(",
    "itertools": r"itertools\.\w+\(",
    "dict_views": r"\.values\(\)$|\.items\(\):$",
    "dict_iterators": r"= (iter|map|reversed|zip|enumerate|filter)\(.*\w+\.(values|items)\(\)",
    "decorated": r"^    @logged0$",
    "operators": r"Vec0\(",
    "exceptions": r"except (ValueError|Overflow0) as err",
    "linalg": r"np\.linalg\.(solve|inv|cholesky)\(_?A\d",
    "numpy_ma": r"np\.ma\.\w+\(",
}

# Construct features left out unless asked for, and why.
OPT_IN: dict = {}  # (dict_iterators and decorated were, until their silent cases were fixed)

# Module-level helpers the productions call (added to the program by ``helper_sources``).
VEC_CLASS = """class Vec0:
    def __init__(self, a, b):
        self.a = a
        self.b = b

    def __add__(self, other):
        return Vec0(self.a + other.a, self.b + other.b)

    def __mul__(self, c):
        return Vec0(self.a * c, self.b * c)

    def norm2(self):
        return self.a * self.a + self.b * self.b"""

LOGGED_DECORATOR = """def logged0(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)
    return wrapper"""

AMOUNT_ERROR = """class Overflow0(Exception):
    def __init__(self, amount):
        super().__init__("too large")
        self.amount = amount"""


def _const(rng: random.Random, low: float = 0.3, high: float = 1.7) -> str:
    return repr(round(rng.choice((-1, 1)) * rng.uniform(low, high), 3))


def _pos(rng: random.Random) -> str:
    return repr(round(rng.uniform(0.3, 1.7), 3))


def helper_sources(on) -> list[str]:
    """The module-level helpers the enabled construct features need (``on(feature)``)."""
    wanted = (("operators", VEC_CLASS), ("decorated", LOGGED_DECORATOR), ("exceptions", AMOUNT_ERROR))
    return [source for feature, source in wanted if on(feature)]


class ConstructBlocks:
    """Block makers for the construct features (mixed into ``fuzz_programs.Generator``, whose
    ``rng``, ``env``, ``n``, ``float_expr`` and ``array_expr`` they use)."""

    def construct_makers(self) -> list:
        return [
            ("kept_iterators", self.b_kept_iterator), ("kept_iterators", self.b_loop_over_map),
            ("itertools", self.b_itertools), ("dict_views", self.b_dict_view),
            ("dict_iterators", self.b_dict_iterator), ("closure_nonlocal", self.b_nonlocal_state),
            ("decorated", self.b_decorated), ("operators", self.b_operators),
            ("exceptions", self.b_exception), ("linalg", self.b_linalg),
            ("inplace", self.b_scatter), ("numpy_ma", self.b_masked),
        ]

    def _local_list(self) -> tuple[str, list[str]]:
        """A list of ``n`` floats the production writes: one already live (the argument ``xs``
        too, whose writes yuebing must undo), or a fresh one (its line)."""
        lists = self.env.names("l", mutable=True)
        if lists and self.rng.random() < 0.3:
            return self.pick(lists), []
        ys = self.env.fresh("ys")
        if self.env.names("a") and self.rng.random() < 0.5:
            line = f"{ys} = list(np.tanh({self.array_expr(1)}))"
        else:
            line = f"{ys} = [" + ", ".join(self.float_expr(1) for _ in range(self.n)) + "]"
        self.env.kinds[ys] = "l"
        return ys, [line]

    def _bind_float(self, expr: str) -> tuple[str, str]:
        out = self.env.fresh("t")
        self.env.kinds[out] = "f"
        return out, f"{out} = {expr}"

    def _write(self, ys: str) -> str:
        return f"{ys}[{self.rng.randrange(self.n)}] = {self.float_expr(2)}"

    def b_kept_iterator(self):
        """An iterator made, its list written, then the iterator consumed (reads the new value)."""
        rng = self.rng
        ys, lines = self._local_list()
        it = self.env.fresh("it")
        made, consumed = self.pick([
            (f"map(lambda v: v * v + {_const(rng)} * v, {ys})", f"sum({it})"),
            (f"zip({ys}, {(other := self.pick(self.env.names('a', mutable=True) or [ys]))})",
             f"sum(v * w for v, w in {it})"),
            (f"enumerate({ys})", f"sum(v * (k + 1) for k, v in {it})"),
            (f"filter(lambda v: v > {_const(rng, 0.0, 0.5)}, {ys})", f"sum({it}, 0.0)"),
            (f"map(np.multiply, {ys}, reversed({ys}))", f"sum({it})"),
        ])
        # a zip reads its array lazily too: sometimes the array is the one written
        write = self._write(other if made.startswith("zip") and self.rng.random() < 0.5 else ys)
        _, last = self._bind_float(consumed)
        return lines + [f"{it} = {made}", write, last]

    def b_loop_over_map(self):
        """A for loop over a map of a list whose body writes that list (map reads it lazily)."""
        ys, lines = self._local_list()
        acc = self.env.fresh("s")
        self.env.kinds[acc] = "f"
        return lines + [f"{acc} = 0.0", f"for v in map(np.tanh, {ys}):",
                        f"    {ys}[-1] = {ys}[-1] + {_const(self.rng)} * v", f"    {acc} = {acc} + v * v"]

    def b_itertools(self):
        """An itertools iterator kept while its list is written, or groupby walked by a loop."""
        rng = self.rng
        ys, lines = self._local_list()
        it = self.env.fresh("it")
        made, consumed = self.pick([
            (f"itertools.chain({ys}, [{self.float_expr(1)}])", f"sum({it})"),
            (f"itertools.accumulate({ys})", f"sum({it})"),
            (f"itertools.accumulate({ys}, lambda u, v: u * {_pos(rng)} + v)", f"sum(v * v for v in {it})"),
            (f"itertools.pairwise({ys})", f"sum(u * v for u, v in {it})"),
            (f"itertools.starmap(lambda u, v: u * v + u, zip({ys}, {ys}[::-1]))", f"sum({it})"),
            (f"itertools.islice({ys}, 1, None)", f"sum({it})"),
            (f"itertools.zip_longest({ys}, {ys}[:2], fillvalue={_const(rng)})", f"sum(u * v for u, v in {it})"),
        ])
        if rng.random() < 0.2:  # groupby: consumed by a loop, each group summed while it is current
            out, last = self._bind_float("0.0")
            key = f"lambda v: v > {_const(rng, 0.0, 0.4)}"
            return lines + [last, f"for key, group in itertools.groupby({ys}, key={key}):",
                            f"    {out} = {out} + sum(group) * (2.0 if key else 0.5)"]
        write = self._write(ys)
        _, last = self._bind_float(consumed)
        return lines + [f"{it} = {made}", write, last]

    def _local_dict(self) -> tuple[str, list[str]]:
        d = self.env.fresh("d")
        return d, [f'{d} = {{"a": {self.float_expr(2)}, "b": {self.float_expr(1)}, "c": {self.float_expr(1)}}}']

    def b_dict_view(self):
        """Dict views are live: read after the dict is written, and walked while values are set."""
        d, lines = self._local_dict()
        view = self.env.fresh("vw")
        write = f'{d}["{self.pick("abc")}"] = {self.float_expr(2)}'
        _, last = self._bind_float(self.pick([f"sum({view})", f"sum(v * v for v in {view})"]))
        if self.rng.random() < 0.5:
            return lines + [f"{view} = {d}.values()", write, last]
        return lines + [f"for key, v in {d}.items():", f"    {d}[key] = v * {_const(self.rng)} + 0.1",
                        f"{view} = {d}.values()", last]

    def b_dict_iterator(self):
        """An iterator over a dict view (``iter``, ``map``, ``zip``, ``enumerate``, ``filter``,
        ``reversed``) kept while the dict is written: it reads the new values (silently the old
        ones before commit b2a899b)."""
        d, lines = self._local_dict()
        it = self.env.fresh("it")
        made, consumed = self.pick([
            (f"iter({d}.values())", f"sum({it})"), (f"iter({d}.items())", f"sum(v for _, v in {it})"),
            (f"map(np.sin, {d}.values())", f"sum({it})"), (f"reversed({d}.values())", f"sum({it})"),
            (f"zip({d}.values(), [1.0, 2.0, 3.0])", f"sum(v * w for v, w in {it})"),
            (f"enumerate({d}.values())", f"sum(v * (k + 1) for k, v in {it})"),
            (f"filter(lambda v: v > {_const(self.rng, 0.0, 0.5)}, {d}.values())", f"sum({it}, 0.0)"),
        ])
        write = f'{d}["{self.pick("bc")}"] = {self.float_expr(2)}'
        _, last = self._bind_float(consumed)
        return lines + [f"{it} = {made}", write, last]

    def b_nonlocal_state(self):
        """A closure keeping state in a nonlocal float, called from a generator expression."""
        if not self.env.names("a"):
            return None
        state, step = self.env.fresh("state"), self.env.fresh("step")
        first = f"{state} = {self.float_expr(1)}"
        _, last = self._bind_float(f"sum({step}(v) for v in {self.pick(self.env.names('a'))}) + {state}")
        return [first, f"def {step}(v):", f"    nonlocal {state}",
                f"    {state} = 0.5 * {state} + np.tanh(v)", f"    return {state} * v", last]

    def b_decorated(self):
        """A nested function capturing a differentiated float, under a functools.wraps decorator
        (opt-in while its silent bug is being fixed)."""
        floats = self.env.names("f")
        captured = self.pick(floats) if floats else None
        if captured is None:
            return None
        self.env.frozen.add(captured)
        inner = self.env.fresh("scaled")
        _, last = self._bind_float(f"{inner}({self.float_expr(2)}) + {inner}({self.float_expr(1)})")
        return ["@logged0", f"def {inner}(v):", f"    return v * {captured} + np.sin(v)", last]

    def b_operators(self):
        """Two instances of a small class combined by its operators and reduced by a method."""
        u, w = self.env.fresh("vec"), self.env.fresh("vec")
        total = self.pick([f"{u} + {w} * {_const(self.rng)}", f"sum([{u}, {w}], Vec0(0.0, 0.0))",
                           f"{u} * {self.float_expr(1)} + {w}"])
        made = [f"{u} = Vec0({self.float_expr(2)}, {self.float_expr(1)})",
                f"{w} = Vec0({self.float_expr(1)}, {self.float_expr(2)})"]
        _, last = self._bind_float(f"({total}).norm2()")
        return made + [last]

    def b_exception(self):
        """Float data carried by an exception into its handler."""
        out = self.env.fresh("t")
        if self.rng.random() < 0.5:
            lines = ["try:", f"    if {self.float_expr(1)} > {_const(self.rng, 0.0, 0.5)}:",
                     f"        raise ValueError({self.float_expr(2)})", f"    {out} = {self.float_expr(1)}",
                     "except ValueError as err:", f"    {out} = err.args[0] * {_const(self.rng)}"]
        else:
            lines = ["try:", f"    raise Overflow0({self.float_expr(2)})", "except Overflow0 as err:",
                     f"    {out} = err.amount * err.amount + {self.float_expr(1)}"]
        self.env.kinds[out] = "f"
        return lines

    def b_linalg(self):
        """solve, inv or cholesky of a well-conditioned symmetric matrix (eigenvalues in [2, 2.4])."""
        m, n = self.env.fresh("A"), self.n
        a = self.array_expr(1)
        lines = [f"{m} = 2.0 * np.eye({n}) + 0.1 * np.outer(np.tanh({a}), np.tanh({a}))"]
        self.env.kinds[m] = "m"
        b = self.array_expr(1)
        out = self.env.fresh("z")
        column = f"np.linalg.cholesky({m})[:, {self.rng.randrange(n)}] * {self.float_expr(1)}"
        lines.append(f"{out} = " + self.pick([f"np.linalg.solve({m}, {b})", f"np.linalg.inv({m}) @ {_wrap_name(b)}",
                                              f"np.linalg.cholesky({m}) @ {_wrap_name(b)}", column]))
        self.env.kinds[out] = "a"
        return lines

    def b_scatter(self):
        """np.add.at with a repeated index, and an in-place update of overlapping slices."""
        y, n = self.env.fresh("y"), self.n
        source = self.pick(self.env.names("a")) if self.env.names("a") else f"np.ones({n})"
        index = [self.rng.randrange(n) for _ in range(3)]
        index[2] = index[0]  # a repeated index: np.add.at adds twice where y[idx] += would once
        # y[1:] += y[:-1] reads y[:-1] as it was before the update (NumPy copies overlapping operands)
        shift = self.pick([f"{y}[1:] += {y}[:-1]", f"{y}[1:] += {_const(self.rng)} * {y}[:-1]"])
        lines = [f"{y} = {source}.copy()", f"np.add.at({y}, {index}, np.sin({self.array_expr(1)})[:3])", shift]
        self.env.kinds[y] = "a"
        return lines

    def b_masked(self):
        """A numpy.ma masked array made from an array expression and reduced by its methods or NumPy's functions."""
        m, a = self.env.fresh("mk"), self.array_expr(1)
        made = self.pick([f"np.ma.masked_where({_wrap_name(a)} < {_const(self.rng, 0.0, 0.5)}, {a})",
                          f"np.ma.masked_greater({a}, {_pos(self.rng)})"])
        reduced = self.pick([f"{m}.sum()", f"({m} * {m}).sum() * 0.5", f"np.ma.sin({m}).sum()",
                             f"{m}.filled(0.0).sum()", f"{m}.max() + {m}.min()",
                             # NumPy's own functions on it, as NumPy hands them to numpy.ma
                             f"np.sum({m}) + np.mean({m})", f"np.sin({m}).sum()", f"{m}.cumsum().sum() * 0.5",
                             f"{m}.prod()", f"np.ma.median({m}) + {m}.var()"])
        out, last = self._bind_float(reduced)
        # the term falls back to 0.0 when every entry is masked (a masked constant is no float)
        return [f"{m} = {made}", last, f"{out} = {out} if {out} is not np.ma.masked else 0.0"]


def _wrap_name(expr: str) -> str:
    """``expr`` parenthesised unless it is a plain name (for a comparison's or ``@``'s side)."""
    return expr if expr.isidentifier() else f"({expr})"
