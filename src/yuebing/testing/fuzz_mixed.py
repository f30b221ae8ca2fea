"""Fuzzer productions for constructs met together (mixed into ``fuzz_programs.Generator``).

The other productions exercise one construct per block; users mix them. These blocks combine
them: generator functions (nested, recursive, writing ``nonlocal`` state, walking dict views,
consumed by ``sum``, ``next`` and loops), classes with properties and setters, in-place array
updates inside ``try``/``except`` around ``np.linalg``, powers with constant exponents held in
variables or arrays of negative bases (``x ** k`` with ``k = 2.0``: the exponent's derivative
``log(x)`` is NaN there and must never reach the result), NumPy calls of float lists, spectral
linear algebra (``eigh``, ``slogdet``, ``qr``, ``lstsq``, matrix norms) and everyday idioms (sorting
with a key, step-slice writes, ``functools.reduce``, a coroutine fed by ``send``, ``__iadd__``).

Each ``b_*`` method returns the block's lines (or ``None`` when nothing fits) and records the kinds
of the names it binds; ``mixed_float_forms`` adds expression forms.
"""
from __future__ import annotations

from .fuzz_constructs import _const, _pos

# The features these productions add to ``fuzz_programs.FEATURES``, and a pattern in the source
# showing that a program exercises each (for coverage counts).
MIXED_FEATURES = (
    "generators",       # generator functions: nested, recursive, nonlocal-writing, kept and consumed later
    "properties",       # a class with @property getters and a setter, on floats and arrays
    "mixed",            # one block of several constructs: generators over dict views writing nonlocal
                        # state and arrays in place, try/except around np.linalg, properties calling recursion
    "power_consts",     # x ** k with k = 2.0 a variable, array exponents, pow(): negative bases in every mode
    "float_lists",      # NumPy calls of lists of floats: np.sin([a, b])[0], np.array([a, b]) @ ..., np.full
    "spectral",         # eigh (values, squared vector entries), slogdet, qr, lstsq, norm(ord=) of distinct-spectrum matrices
    "idioms",           # sorted(key=), list.sort, step-slice writes, functools.reduce, generator send, __iadd__
)

MIXED_MARKERS = {
    "generators": r"^\s+yield |^    _?\w+ = \(.* for v in \w+\)$",
    "properties": r"Box0\(",
    "mixed": r"# mixed$",
    "power_consts": r"\*\* _?k\d+\b|np\.power\(\w+, _?k\d+\)|\bpow\(|\*\* np\.(array|float64)\(|np\.float_power\(",
    "float_lists": r"np\.\w+\(\[[^\]]*\]\)(\[\d\]| @ )|np\.(full|asarray)\(|^\s*_?fl\d+ = \[",
    "spectral": r"np\.linalg\.(eigh|slogdet|qr|lstsq)\(|ord=",
    "idioms": r"sorted\(|\.sort\(\)|\[::2\] =|functools\.reduce\(|\.send\(|Acc0\(",
}

BOX_CLASS = """class Box0:
    def __init__(self, v):
        self._v = v

    @property
    def value(self):
        return self._v * 1.0

    @value.setter
    def value(self, v):
        self._v = 0.5 * np.tanh(v) + 0.5 * v

    @property
    def square(self):
        return self._v * self._v"""

WALK_GENERATOR = """def walk0(v, k):
    yield v
    if k > 0:
        yield from walk0(np.sin(v) * 0.9 + 0.1, k - 1)"""

SHRINK_HELPER = """def shrink0(v, k):
    if k == 0:
        return v
    return shrink0(np.tanh(v) * 0.9 + 0.05 * v * v, k - 1)"""


ACC_CLASS = """class Acc0:
    def __init__(self, v):
        self.v = v

    def __iadd__(self, other):
        self.v = self.v * 0.5 + other
        return self"""


def mixed_helper_sources(on) -> list[str]:
    """The module-level helpers the enabled productions need (``on(feature)``)."""
    helpers = []
    if on("properties") or on("mixed"):
        helpers.append(BOX_CLASS)
    if on("generators") or on("mixed"):
        helpers.append(WALK_GENERATOR)
    if on("mixed"):
        helpers.append(SHRINK_HELPER)
    if on("idioms"):
        helpers.append(ACC_CLASS)
    return helpers


class MixedBlocks:
    """Block makers and expression forms of ``MIXED_FEATURES``; uses the generator's ``rng``,
    ``env``, ``n``, ``on``, ``pick``, ``float_expr``, ``array_expr`` and ``_local_list``."""

    def mixed_makers(self) -> list:
        makers = [
            ("generators", self.b_generator_function), ("generators", self.b_kept_generator),
            ("properties", self.b_property), ("mixed", self.b_mixed),
            ("power_consts", self.b_power_const), ("float_lists", self.b_float_list),
            ("spectral", self.b_spectral), ("idioms", self.b_idiom),
        ]
        return [(feature, self._binding(maker)) for feature, maker in makers]

    def _binding(self, maker):
        """``maker`` with the names it made (``_new``) live only after its lines are written, so
        no expression of the block reads a name the block binds later."""
        def made():
            self._pending: list[tuple[str, str]] = []
            lines = maker()
            if lines is not None:
                self.env.kinds.update(self._pending)
            return lines
        return made

    def _array_name(self) -> str | None:
        arrays = self.env.names("a")
        return self.pick(arrays) if arrays else None

    def _new(self, kind: str, prefix: str) -> str:
        name = self.env.fresh(prefix)
        self._pending.append((name, kind))
        return name

    # ---- generators --------------------------------------------------------------------------
    def b_generator_function(self):
        """A nested generator function capturing an array, consumed by sum, next or a loop."""
        a = self._array_name()
        if a is None:
            return None
        self.env.frozen.add(a)  # captured by the generator: rebinding it later is another feature
        gen, out = self.env.fresh("gen"), self._new("f", "t")
        body = self.pick([
            [f"def {gen}(c):", f"    for i in range({self.n}):", f"        yield np.sin({a}[i]) * c"],
            [f"def {gen}(c):", "    yield c", f"    yield from (w * c for w in {a})"],
            [f"def {gen}(c):", "    w = c", f"    for v in {a}:", "        w = 0.5 * w + v", "        yield w * w"],
        ])
        made = f"{gen}({self.float_expr(1)})"
        consumed = self.pick([
            [f"{out} = sum({made})"],
            [f"{(g := self.env.fresh('g'))} = {made}", f"{out} = next({g}) * {_const(self.rng)}",
             f"for v in {g}:", f"    {out} = {out} + v * v"],
            [f"{out} = sum(v * u for v, u in zip({made}, walk0({self.float_expr(1)}, 2)))"],
        ])
        return body + consumed

    def b_kept_generator(self):
        """A generator (expression or recursive function) made, its source written, then consumed."""
        ys, lines = self._local_list()
        ge, out = self.env.fresh("ge"), self._new("f", "t")
        if self.rng.random() < 0.6:
            lines += [f"{ge} = (v * {_const(self.rng)} + v * v for v in {ys})"]
        else:
            lines += [f"{ge} = walk0({ys}[0], 3)"]
        write = f"{ys}[{self.rng.randrange(self.n)}] = {self.float_expr(2)}"
        return lines + [write, f"{out} = sum({ge})"]

    # ---- properties --------------------------------------------------------------------------
    def b_property(self):
        """A Box0 holding a float or an array, read through properties and written by its setter."""
        box = self.env.fresh("bx")
        array = self.rng.random() < 0.4
        made = self.array_expr(1) if array else self.float_expr(2)
        out = self._new("f", "t")
        square = f"np.sum({box}.square)" if array else f"{box}.square"
        value = f"np.sum({box}.value)" if array else f"{box}.value"
        return [f"{box} = Box0({made})", f"{box}.value = {box}.value * {_const(self.rng)} + {self.float_expr(1)}",
                f"{out} = {square} + {value}"]

    # ---- several constructs in one block -------------------------------------------------------
    def b_mixed(self):
        makers = [self._generator_over_view, self._linalg_in_try, self._property_recursion]
        lines = self.pick(makers)()
        if lines:
            lines[0] += "  # mixed"
        return lines

    def _generator_over_view(self):
        """A generator walking a dict's items, writing nonlocal state; its loop writes an array."""
        a = self._array_name()
        if a is None:
            return None
        d, y, cnt, walk, g = (self.env.fresh(p) for p in ("d", "y", "cnt", "walk", "g"))
        out = self._new("f", "t")
        return [f'{d} = {{"a": {self.float_expr(1)}, "b": {self.float_expr(1)}, "c": {self.float_expr(1)}}}',
                f"{y} = {a}.copy()", f"{cnt} = 0.0", f"def {walk}():", f"    nonlocal {cnt}",
                f"    for key, v in {d}.items():", f"        {cnt} = {cnt} + v * {_const(self.rng)}",
                "        yield v", f"{g} = {walk}()", f'{d}["{self.pick("abc")}"] = {self.float_expr(1)}',
                f"for k, w in enumerate({g}):", f"    {y}[k] += w * {y}[(k + 1) % {self.n}]",
                f"{out} = np.sum({y} * {y}) * 0.1 + {cnt}"]

    def _linalg_in_try(self):
        """An array solved for, written in place in a try block whose raise carries one entry."""
        m, z, out = self.env.fresh("A"), self._new("a", "z"), self._new("f", "t")
        a, b = self.array_expr(1), self.array_expr(1)
        return [f"{m} = 2.0 * np.eye({self.n}) + 0.1 * np.outer(np.tanh({a}), np.tanh({a}))",
                f"{z} = np.linalg.solve({m}, {b})", "try:", f"    {z}[0] = {z}[0] * {self.float_expr(1)}",
                f"    if {z}[1] > {_const(self.rng, 0.0, 0.3)}:", f"        raise ValueError({z}[1])",
                f"    {out} = np.sum({z})", "except ValueError as err:",
                f"    {out} = err.args[0] * {_const(self.rng)} + {z}[0]"]

    def _property_recursion(self):
        """A property's value passed through a recursive helper and a closure, set back."""
        box, scale, out = self.env.fresh("bx"), self.env.fresh("scale"), self._new("f", "t")
        return [f"{box} = Box0({self.float_expr(2)})", f"def {scale}(v):", f"    return v * {box}.value",
                f"{box}.value = shrink0({box}.value, {self.rng.randint(1, 3)})",
                f"{out} = {scale}({self.float_expr(1)}) + {box}.square"]

    # ---- powers with constant exponents ------------------------------------------------------
    def b_power_const(self):
        """x ** k for a variable k holding an integral float (or an int, or np.float64), of an
        argument or expression whose entries are negative at about half the points."""
        k, out = self.env.fresh("k"), self._new("f", "t")
        exponent = self.pick(["2.0", "3.0", "2", "np.float64(2.0)", "float(2)"])
        base = self.pick([a for a in ("x", self._array_name()) if a and self.env.kinds.get(a) == "a"] or [None])
        if base is None or self.rng.random() < 0.4:
            value = f"{self.float_expr(1)} ** {k}"
        else:
            value = self.pick([f"np.sum({base} ** {k})", f"np.sum(np.power({base}, {k}))", f"np.sum({base} ** {k} * {base})"])
        return [f"{k} = {exponent}", f"{out} = {value}"]

    def mixed_float_forms(self, e, a) -> list:
        n, rng = self.n, self.rng
        forms: list = []
        if self.on("power_consts"):
            exps = "[" + ", ".join(self.pick(["2.0", "3.0", "1.0"]) for _ in range(n)) + "]"
            forms += [lambda: f"pow({e()}, 2.0)", lambda: f"pow({e()}, 3)", lambda: f"{e()} ** np.float64(2.0)",
                      lambda: f"np.sum({a()} ** np.array({exps}))", lambda: f"np.sum(np.power({a()}, {exps}))",
                      lambda: f"np.sum(np.float_power({a()}, 2.0))", lambda: f"(1.0 + {e()} ** 2) ** -1.5"]
        if self.on("float_lists"):
            forms += [lambda: f"np.sin([{e()}, {e()}])[{rng.randrange(2)}]",
                      lambda: f"np.array([{e()}, {e()}]) @ np.array([{e()}, {e()}])",
                      lambda: f"np.sum(np.asarray([{e()}, {e()}]) ** 2.0)",
                      lambda: f"np.sum(np.tanh([{e()}, {e()}]) * {_wrap_name(a())}[:2])",
                      lambda: f"float(np.cos([{e()}])[0])",
                      lambda: f"np.sum(np.full({n}, {e()}) * {a()})"]
        return forms

    def b_float_list(self):
        """A float list made, passed to NumPy, and an argument rebound to one of its entries."""
        lst, out = self.env.fresh("fl"), self._new("f", "t")
        items = ", ".join(self.float_expr(1) for _ in range(self.rng.choice((2, 3))))
        lines = [f"{lst} = [{items}]", f"{out} = np.sum(np.sin({lst}) * np.exp(-0.1 * np.array({lst}) ** 2.0))"]
        arrays = [a for a in self.env.names("a", mutable=True)]
        if arrays and self.rng.random() < 0.5:  # x = x[0]: a name rebound to a float of its own array
            a = self.pick(arrays)
            lines.append(f"{a} = {a}[{self.rng.randrange(self.n)}] * {_pos(self.rng)}")
            self.env.kinds[a] = "f"
        return lines


    # ---- spectral linear algebra and Python idioms ---------------------------------------------
    def b_spectral(self):
        """A symmetric matrix with distinct eigenvalues (1, 2, 3, ... plus a small rank-one term),
        reduced through eigh, slogdet, qr, lstsq or a matrix norm."""
        n, m, out = self.n, self.env.fresh("S"), self._new("f", "t")
        a = self.array_expr(1)
        made = f"{m} = np.diag(np.arange(1.0, {n + 1}.0)) + 0.1 * np.outer(np.tanh({a}), np.tanh({a}))"
        k, b = self.rng.randrange(n), self.array_expr(1)
        order = self.pick(["1", "2", "np.inf", '"fro"', '"nuc"'])
        reduced = self.pick([
            [f"{(w := self.env.fresh('w'))}, {(v := self.env.fresh('V'))} = np.linalg.eigh({m})",
             f"{out} = {w}[{k}] * {self.float_expr(1)} + np.sum({v}[:, {k}] ** 2 * {_wrap_name(b)})"],
            [f"{(sg := self.env.fresh('sg'))}, {(ld := self.env.fresh('ld'))} = np.linalg.slogdet({m})",
             f"{out} = {sg} * {ld}"],
            [f"{(q := self.env.fresh('Q'))}, {(r := self.env.fresh('R'))} = np.linalg.qr({m})",
             f"{out} = np.sum(np.abs(np.diag({r}))) + np.sum(({q} @ {r} - {m}) ** 2)"],
            [f"{(sol := self.env.fresh('sol'))} = np.linalg.lstsq({m}, {b}, rcond=None)[0]",
             f"{out} = np.sum({sol} * {sol})"],
            [f"{out} = np.linalg.norm({m}, ord={order})"],
        ])
        return [made] + reduced

    def b_idiom(self):
        """Everyday Python: sorting with a key, writing every other entry, reduce, a coroutine fed by
        send, an object's augmented assignment."""
        ys, lines = self._local_list()
        out = self._new("f", "t")
        rng, n = self.rng, self.n
        form = self.pick([
            [f"{out} = sorted({ys}, key=lambda v: {self.pick(['-v', 'abs(v)', 'v * v'])})[{rng.randrange(n)}] * {_const(rng)}"],
            [f"{ys}.sort()", f"{out} = {ys}[0] * {_const(rng)} + {ys}[-1]"],
            [f"{(y := self.env.fresh('y'))} = np.zeros({2 * n})", f"{y}[::2] = np.array({ys}) * {self.float_expr(1)}",
             f"{y}[1::2] = np.sin({ys})", f"{y}[::-3] *= {_const(rng)}", f"{out} = np.sum({y} * {y}) * 0.1"],
            [f"{out} = functools.reduce(lambda u, v: u * {_pos(rng) if rng.random() < 0.5 else '0.5'} + v * v, {ys}, {self.float_expr(1)})"],
            [f"def {(co := self.env.fresh('co'))}():", "    total = 0.0", "    while True:", "        v = yield total",
             f"        total = total * 0.5 + v * v", f"{(g := self.env.fresh('g'))} = {co}()", f"next({g})",
             f"{out} = 0.0", f"for v in {ys}:", f"    {out} = {g}.send(v * {self.float_expr(1)})", f"{g}.close()"],
            [f"{(acc := self.env.fresh('acc'))} = Acc0({self.float_expr(1)})", f"for v in {ys}:",
             f"    {acc} += v * {_const(rng)}", f"{out} = {acc}.v"],
        ])
        return lines + form

def _wrap_name(expr: str) -> str:
    return expr if expr.isidentifier() else f"({expr})"
