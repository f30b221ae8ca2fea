"""Random Python/NumPy programs for the differential fuzzer (``testing/fuzz.py``).

``random_program(rng, features)`` writes a function ``f`` over a float array ``x`` (and, by
feature, a float ``s``, a list of floats ``xs`` and a dict model ``p``) returning a float. The
body is a list of *blocks*, each a few statements exercising one feature of the language or of
NumPy (see ``FEATURES``); the generator tracks the kind of every live name (float, array of
length ``n``, list of ``n`` floats, growing list, dict model) so the program is valid Python that
the plain interpreter runs. Expressions stay bounded (``tanh``/``sin`` squash, divisions by
``1 + e*e``, logs of ``1 + e*e``), so values and derivatives are moderate and finite differences
are accurate. Branch conditions compare random values with random thresholds; a point that lands
on a kink is recognised by the checker (finite differences at two steps disagree) and skipped.

A program is kept as blocks so the shrinker can drop blocks and return terms one at a time.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

import numpy as np

from .fuzz_constructs import (CONSTRUCT_FEATURES, CONSTRUCT_MARKERS, OPT_IN, ConstructBlocks, _const, _pos,
                              helper_sources)

# Each feature names a family of blocks or expression forms; a program uses only enabled ones.
FEATURES = (
    "arith",            # float and array + - * /
    "ufunc",            # NumPy ufuncs and math functions
    "reduce",           # np.sum/mean/max/dot/norm, @, builtin sum/max/min
    "array_like",       # lists and tuples passed into NumPy calls: np.sin([a, b]), x * [a, 2*a]
    "np_scalar",        # NumPy scalars read from arrays: x[0]
    "np_float64",       # NumPy scalars made by calling the type: np.float64(...)
    "rebind",           # a name rebound, also to another kind: x = x[0]
    "comprehension",    # list comprehensions, also assigned back to the name they iterate
    "closure_nonlocal",  # nested def writing a variable with nonlocal (one and two levels)
    "closure_factory",  # def make(c): def g(v): ...; return g
    "neg_power",        # x ** 2.0, np.power(x, 3.0), math.pow with negative bases
    "masked_where",     # np.where(x > 0, np.sqrt(x), 0.0)
    "inplace",          # y[i] = ..., y += ..., list and dict writes
    "loop_break",       # for with if/break, while loops
    "branch",           # if/else on values
    "float_loop",       # for i in range(n): acc = acc + x[i] * ... (float loops)
    "float_block",      # six or more float operations in a row (float blocks)
    "helper",           # module-level helper functions and lambdas
    "tuple",            # tuples and tuple unpacking
    "model",            # a dict model argument and local dicts
    "list_arg",         # a list-of-floats argument
    "methods",          # array methods and slices: a.sum(), a.dot(b), a[1:] * a[:-1], np.concatenate
    "matrix",           # a matrix argument: W @ a, np.outer, rows and columns, np.linalg.solve
    "objects",          # a user class holding an array, with a method and an attribute write
    "recursion",        # a recursive module-level helper
    "iterate",          # for over enumerate/zip/reversed of arrays and lists
    "scipy",            # scipy.special functions, of arrays and of lists
    "more_numpy",       # interp, clip, einsum, outer, sort, diff, det, inv, var, stack, int lists
    "calls",            # defaults, keyword and *args helpers, lambdas inside f, map
    "grow_loop",        # a for loop over a list that grows inside the loop
    "nested_loops",     # two nested for loops, matrix element reads and writes
    "power_general",    # powers with a differentiable exponent: (1 + a*a) ** b, 2.0 ** a
    "np_constants",     # module constants in expressions: x * np.pi, math.e
    "linear_float_block",  # float blocks of + and - only (no residuals); off: each block has a power
    "refusable",        # constructs once refused (try/except, :=, a closure over a rebound name):
                        # they must be refused or differentiated right, never wrongly
) + CONSTRUCT_FEATURES
# What a run uses unless told otherwise: every feature but the opt-in ones.
DEFAULT_FEATURES = tuple(name for name in FEATURES if name not in OPT_IN)

# A pattern in the source showing that a program exercises a feature (for coverage counts).
FEATURE_MARKERS = {
    "arith": r"[-+*/] ",
    "ufunc": r"np\.(sin|cos|tanh|exp|log1p|sqrt)\(|math\.(cos|exp|log|hypot)\(",
    "reduce": r"np\.(sum|mean|max|dot|linalg\.norm)\(|\b(max|min|sum)\(",
    "array_like": r"np\.\w+(\.\w+)?\(\(?\[|\* \[|- \[|np\.\w+\(\(|, \[|np\.mean\(\(",
    "np_scalar": r"\b_?t\d+ = \w+\[\d\]$",
    "np_float64": r"np\.float64\(",
    "rebind": r"^\s*(\w+) = .*\b\1\b",
    "comprehension": r"[\[(][^\n]* for v in ",
    "closure_nonlocal": r"nonlocal _?total\d",
    "closure_factory": r"def _?make\d+\(",
    "neg_power": r"\*\* (2|3)|np\.power\(|math\.pow\(|np\.square\(",
    "masked_where": r"np\.where\(",
    "inplace": r"\] = |\+= |\*= ",
    "loop_break": r"break$|while ",
    "branch": r"^    if (?!np\.all|k == 0).*:$",
    "float_loop": r"for i in range\(\d\):\n\s+_?s\d+ ",
    "float_block": r"^\s*_?u\d+ = ",
    "helper": r"\bh\d\(",
    "tuple": r"\b_?p\d+, _?q\d+ = ",
    "model": r"\bp\[|\b_?m\d+ = \{",
    "list_arg": r"def f\(.*xs",
    "methods": r"(?<!np)\.(sum|mean|dot|copy|reshape)\(|\[1:\]|np\.concatenate\(",
    "matrix": r"\bW\b",
    "objects": r"Model\d\(",
    "recursion": r"\brec0\(.*, \d\)",
    "iterate": r"in (enumerate|zip|reversed)\(",
    "scipy": r"scipy\.special\.\w+\(",
    "more_numpy": r"np\.(interp|clip|einsum|outer|sort|diff|var|std|stack|cumprod|hypot|arctan2|minimum)\(|np\.linalg\.(det|inv)\(",
    "calls": r"(?<!def )\b(kw0|va0)\(|lambda v: v|map\(",
    "grow_loop": r"len\(\w+\) < \d",
    "nested_loops": r"for j in range",
    "linear_float_block": r"^    _?u\d+ = \w+ [-+] \w+\n    _?u\d+ = \w+ [-+] \w+\n    _?u\d+ = \w+ [-+] \w+\n    _?u\d+ = \w+ [-+] \w+\n    _?u\d+ = \w+ [-+] \w+\n    _?u\d+ = \w+ [-+] \w+$",
    "refusable": r"^    try:$|:= |# late capture",
    "np_constants": r"np\.(pi|e)\b|math\.(pi|e)\b",
    "power_general": r"\*\* \(?[a-z(]|np\.power\(2\.0|math\.pow\(1\.5",
    **CONSTRUCT_MARKERS,
}


def features_in(source: str) -> set[str]:
    """The features whose marker occurs in ``source``."""
    return {name for name, marker in FEATURE_MARKERS.items() if re.search(marker, source, re.M)}


@dataclass
class Block:
    """A few statements of the body, tagged with the features they exercise."""
    lines: list[str]
    features: frozenset[str]


@dataclass
class Program:
    """A generated function: helpers at module level, the body's blocks and the returned terms."""
    params: list[str]
    helpers: list[str]
    blocks: list[Block]
    terms: list[str]
    n: int
    features: frozenset[str] = field(default_factory=frozenset)

    def source(self) -> str:
        head = ["import functools", "import itertools", "import math", "import numpy as np", "import scipy.special", ""]
        for helper in self.helpers:
            head += helper.splitlines() + [""]
        body = [line for block in self.blocks for line in block.lines]
        ret = " + ".join(self.terms) if self.terms else "0.0"
        lines = head + [f"def f({', '.join(self.params)}):"]
        lines += ["    " + line for line in body] + [f"    return {ret}", ""]
        return "\n".join(lines)

    def used_features(self) -> frozenset[str]:
        return frozenset().union(*(b.features for b in self.blocks)) if self.blocks else frozenset()


class _Env:
    """Live names by kind: 'f' float, 'a' float array of length n, 'l' list of n floats,
    'g' growing list of floats, 'd' dict model {"w": array, "b": float}."""

    def __init__(self) -> None:
        self.kinds: dict[str, str] = {}
        self.frozen: set[str] = set()  # captured by a nested function: never reassigned
        self.counter = 0

    def fresh(self, prefix: str) -> str:
        """A new name; every third begins with an underscore, as the generated code's names do
        (``_t3``, ``_p7``: they must not collide with them). No random draw: a seed's program
        is the same but for its names."""
        self.counter += 1
        return f"{'_' if self.counter % 3 == 0 else ''}{prefix}{self.counter}"

    def names(self, kind: str, mutable: bool = False) -> list[str]:
        return [k for k, v in self.kinds.items() if v == kind and not (mutable and k in self.frozen)]


def _closing(expr: str, start: int) -> int:
    """The index of the bracket closing the one at ``start``."""
    depth = 0
    for i in range(start, len(expr)):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(expr[i], 0)
        if depth == 0:
            return i
    return -1


def _wrap(expr: str) -> str:
    """``expr`` in parentheses unless it is one call or already one parenthesised group, so it
    can be a power's base or a subscripted value without changing its meaning."""
    head = re.match(r"[\w.]*\(", expr)
    if head and _closing(expr, head.end() - 1) == len(expr) - 1:
        return expr
    return f"({expr})"


class Generator(ConstructBlocks):
    """Writes one program; ``on(feature)`` says whether a form may be used."""

    def __init__(self, rng: random.Random, features: frozenset[str]) -> None:
        self.rng = rng
        self.features = features
        self.env = _Env()
        self.n = rng.choice((3, 4))
        self.helpers: list[str] = []

    def on(self, feature: str) -> bool:
        return feature in self.features

    def pick(self, options: list):
        return self.rng.choice(options)

    # ---- expressions -------------------------------------------------------------------------
    def float_leaf(self) -> str:
        env, rng = self.env, self.rng
        options = [lambda: self.pick(env.names("f"))] * 3 if env.names("f") else []
        if env.names("a"):
            options.append(lambda: f"{self.pick(env.names('a'))}[{rng.randrange(self.n)}]")
        if env.names("l"):
            options.append(lambda: f"{self.pick(env.names('l'))}[{rng.randrange(self.n)}]")
        if env.names("d"):
            options.append(lambda: f'{self.pick(env.names("d"))}["b"]')
        if not options:
            return _const(rng)
        return self.pick(options)()

    def float_expr(self, depth: int = 2) -> str:
        if depth <= 0 or self.rng.random() < 0.25:
            return self.float_leaf()
        e = lambda: self.float_expr(depth - 1)  # noqa: E731
        forms: list = []
        if self.on("arith"):
            forms += [lambda: f"({e()} + {e()})", lambda: f"({e()} - {e()})", lambda: f"({e()} * {e()})",
                      lambda: f"{e()} / (1.0 + {e()} ** 2)", lambda: f"{_const(self.rng)} * {e()}"]
        if self.on("ufunc"):
            forms += [lambda: f"np.sin({e()})", lambda: f"math.cos({e()})", lambda: f"np.tanh({e()})",
                      lambda: f"math.exp(0.3 * np.tanh({e()}))", lambda: f"math.log(1.0 + {e()} ** 2)",
                      lambda: f"np.sqrt(1.0 + {e()} ** 2)", lambda: f"math.hypot({e()}, {e()})"]
        if self.on("reduce"):
            a = self.array_expr
            forms += [lambda: f"np.sum({a(depth - 1)})", lambda: f"np.mean({a(depth - 1)})",
                      lambda: f"np.max({a(depth - 1)})", lambda: f"np.dot({a(depth - 1)}, {a(depth - 1)})",
                      lambda: f"np.linalg.norm({a(depth - 1)})", lambda: f"max({e()}, {e()})",
                      lambda: f"min({e()}, {e()})"]
            if self.env.names("l"):
                forms.append(lambda: f"sum({self.pick(self.env.names('l'))})")
        if self.on("array_like"):
            k = self.rng.choice((2, 3))
            lst = lambda: "[" + ", ".join(e() for _ in range(k)) + "]"  # noqa: E731
            forms += [lambda: f"np.sum(np.sin({lst()}))", lambda: f"np.dot({lst()}, {lst()})",
                      lambda: f"np.sum(np.add({lst()}, {lst()}))", lambda: f"np.linalg.norm({lst()})",
                      lambda: f"np.mean(({e()}, {e()}))", lambda: f"np.sum(np.exp(0.2 * np.array({lst()})))",
                      lambda: f"np.max(np.maximum({lst()}, 0.1))", lambda: f"np.prod(({e()}, {e()}))"]
        if self.on("np_float64"):
            forms += [lambda: f"np.float64({e()})", lambda: f"np.float64({e()}) * {e()}"]
        if self.on("neg_power"):
            forms += [lambda: f"{e()} ** 2.0", lambda: f"{e()} ** 3", lambda: f"math.pow({e()}, 2.0)",
                      lambda: f"np.power({e()}, 3.0)", lambda: f"({e()}) ** 2"]
        if self.on("tuple"):
            forms += [lambda: f"({e()}, {e()})[{self.rng.randrange(2)}]", lambda: f"sum(({e()}, {e()}))"]
        if self.on("helper") and self.on_helpers():
            forms += [lambda: f"{self.helper_name()}({e()})"]
        a1 = lambda: self.array_expr(depth - 1)  # noqa: E731
        if self.on("methods"):
            forms += [lambda: f"{_wrap(a1())}.sum()", lambda: f"{_wrap(a1())}.mean()",
                      lambda: f"{_wrap(a1())}.dot({a1()})", lambda: f"np.sum({(x := _wrap(a1()))}[1:] * {x}[:-1])",
                      lambda: f"np.sum(np.concatenate([{a1()}, {a1()}]) ** 2)", lambda: f"float({e()})"]
        if self.on("matrix") and "W" in self.env.kinds:
            forms += [lambda: f"{_wrap(a1())} @ W @ {_wrap(a1())}", lambda: f"np.sum(np.outer({a1()}, {a1()}) * W)",
                      lambda: f"np.trace(W) * {e()}", lambda: f"np.sum(W[{self.rng.randrange(self.n)}] * {a1()})"]
        if self.on("recursion") and any(h.startswith("def rec") for h in self.helpers):
            forms += [lambda: f"rec0({e()}, {self.rng.randint(0, 3)})"]
        forms += self.more_float_forms(e, a1)
        if not forms:
            return self.float_leaf()
        return _wrap(self.pick(forms)())

    def array_leaf(self) -> str:
        env = self.env
        options = [lambda: self.pick(env.names("a"))] * 3 if env.names("a") else []
        if env.names("d"):
            options.append(lambda: f'{self.pick(env.names("d"))}["w"]')
        if env.names("l"):
            options.append(lambda: f"np.array({self.pick(env.names('l'))})")
        if not options:
            # leaves only: float_expr may ask for an array again, and an array leaf built from
            # float expressions would recurse without end (a RecursionError among seeds 20000-20400)
            return "np.array([" + ", ".join(self.float_leaf() for _ in range(self.n)) + "])"
        return self.pick(options)()

    def array_expr(self, depth: int = 2) -> str:
        if depth <= 0 or self.rng.random() < 0.25:
            return self.array_leaf()
        a = lambda: self.array_expr(depth - 1)  # noqa: E731
        e = lambda: self.float_expr(depth - 1)  # noqa: E731
        n, rng = self.n, self.rng
        forms: list = []
        if self.on("arith"):
            forms += [lambda: f"({a()} + {a()})", lambda: f"({a()} - {e()})", lambda: f"{a()} * {e()}",
                      lambda: f"({a()} * {a()})", lambda: f"{a()} / (1.0 + {a()} ** 2)", lambda: f"-{a()}"]
        if self.on("ufunc"):
            forms += [lambda: f"np.sin({a()})", lambda: f"np.cos({a()})", lambda: f"np.tanh({a()})",
                      lambda: f"np.exp(0.3 * np.tanh({a()}))", lambda: f"np.log1p({a()} ** 2)",
                      lambda: f"np.sqrt(1.0 + {a()} ** 2)", lambda: f"np.cumsum({a()}) / {n}",
                      lambda: f"{a()}[::-1]", lambda: f"np.roll({a()}, 1)"]
        if self.on("array_like"):
            lst = lambda: "[" + ", ".join(e() for _ in range(n)) + "]"  # noqa: E731
            consts = lambda: "[" + ", ".join(_const(rng) for _ in range(n)) + "]"  # noqa: E731
            forms += [lambda: f"{a()} * {lst()}", lambda: f"({a()} - {consts()})", lambda: f"np.sin({lst()})",
                      lambda: f"np.exp(0.2 * np.tanh({lst()}))", lambda: f"np.maximum({a()}, {consts()})",
                      lambda: f"np.add({lst()}, {a()})", lambda: f"np.array({lst()})",
                      lambda: f"np.multiply({tuple_src(lst())}, {a()})"]
        if self.on("neg_power"):
            forms += [lambda: f"{a()} ** 2.0", lambda: f"np.power({a()}, 3.0)", lambda: f"{a()} ** 2",
                      lambda: f"np.square({a()})", lambda: f"np.power({a()}, 2)"]
        if self.on("masked_where"):
            forms += [lambda: f"np.where({(x := a())} > 0, np.sqrt({x}), 0.0)",
                      lambda: f"np.where({(x := a())} > 0.0, np.log({x}), {x})",
                      lambda: f"np.where({(x := a())} > 0, {x}, 0.1 * {x})",
                      lambda: f"np.where({(x := a())} < 0.5, np.sqrt(0.5 - {x}), 0.0)"]
        if self.on("helper") and self.on_helpers():
            forms += [lambda: f"{self.helper_name()}({a()})"]
        if self.on("matrix") and "W" in self.env.kinds:
            forms += [lambda: f"W @ {_wrap(a())}", lambda: f"np.tanh(W @ {_wrap(a())} + {a()})",
                      lambda: f"{_wrap(a())} @ W.T", lambda: f"W[:, {self.rng.randrange(n)}] * {e()}",
                      lambda: f"np.linalg.solve(3.0 * np.eye({n}) + 0.2 * W, {a()})",
                      lambda: f"np.sum(W * {_wrap(a())}[:, None], axis=0)"]
        if self.on("methods"):
            forms += [lambda: f"{_wrap(a())}.copy() * {e()}", lambda: f"np.concatenate([{_wrap(a())}[1:], {_wrap(a())}[:1]])",
                      lambda: f"{_wrap(a())}.reshape({n}, 1)[:, 0]", lambda: f"np.clip({a()}, -5.0, 5.0)"]
        if self.on("objects") and any(h.startswith("class Model") for h in self.helpers):
            forms += [lambda: f"Model0({a()})({a()})"]
        forms += self.more_array_forms(e, a)
        if not forms:
            return self.array_leaf()
        return _wrap(self.pick(forms)())

    def more_float_forms(self, e, a) -> list:
        n, rng = self.n, self.rng
        ints = "[" + ", ".join(str(rng.randint(-3, 5)) for _ in range(n)) + "]"
        forms: list = []
        if self.on("scipy"):
            forms += [lambda: f"scipy.special.expit({e()})", lambda: f"scipy.special.gammaln(1.5 + {e()} ** 2)",
                      lambda: f"scipy.special.erf({e()})", lambda: f"scipy.special.logsumexp({a()})"]
            if self.on("array_like"):
                forms.append(lambda: f"np.sum(scipy.special.expit([{e()}, {e()}]))")
        if self.on("more_numpy"):
            forms += [lambda: f"np.interp(0.5, [0.0, 1.0], [{e()}, {e()}])", lambda: f"np.sum(np.clip([{e()}, {e()}], -0.8, 0.8))",
                      lambda: f'np.einsum("i,i->", {a()}, {a()})', lambda: f"np.sum(np.outer({a()}, [1.0, 2.0]))",
                      lambda: f"np.prod(np.tanh({a()}) + 2.0)", lambda: f"np.sum(np.diff({a()}) ** 2)",
                      lambda: f"np.sum(np.sort({a()}) * {ints})", lambda: f"np.var({a()})", lambda: f"np.std({a()})",
                      lambda: f"np.linalg.det(2.0 * np.eye({n}) + 0.1 * np.outer({(x := a())}, {x}))",
                      lambda: f"np.sum(np.linalg.inv(2.0 * np.eye({n}) + 0.1 * np.outer({a()}, {a()})))",
                      lambda: f"np.sum(np.stack([{a()}, {a()}]) ** 2)", lambda: f"np.sum(({a()} - {ints}) ** 2)"]
        if self.on("np_constants"):
            forms += [lambda: f"{e()} * np.pi", lambda: f"math.sin({e()} + math.e)", lambda: f"np.pi * {e()} ** 2"]
        if self.on("calls"):
            forms += [lambda: f"kw0({e()})", lambda: f"kw0({e()}, c={e()})", lambda: f"kw0({e()}, d={e()})",
                      lambda: f"va0({e()}, {e()}, {e()})", lambda: f"va0(*[{e()}, {e()}])",
                      lambda: f"sum(map(lambda v: v * v, {a()}))"]
        if self.on("power_general"):
            forms += [lambda: f"(1.0 + {e()} ** 2) ** {e()}", lambda: f"np.power(2.0, {e()})",
                      lambda: f"abs({e()}) ** 1.5", lambda: f"math.pow(1.5 + {e()} ** 2, {e()})"]
        return forms

    def more_array_forms(self, e, a) -> list:
        n = self.n
        forms: list = []
        if self.on("scipy"):
            forms += [lambda: f"scipy.special.expit({a()})", lambda: f"scipy.special.softmax({a()})",
                      lambda: f"scipy.special.gammaln(1.0 + {a()} ** 2)", lambda: f"scipy.special.erf({a()})"]
        if self.on("masked_where"):
            forms += [lambda: f"np.where({(x := _wrap(a()))} > {_const(self.rng, 0.0, 0.5)}, {x} * {x}, np.sin({x}))",
                      lambda: f"np.maximum({a()}, {a()})", lambda: f"np.maximum({a()}, {_const(self.rng, 0.0, 0.5)})"]
        if self.on("more_numpy"):
            forms += [lambda: f"np.cumprod(np.tanh({a()}) * 0.5 + 1.0)", lambda: f"np.sort({a()})",
                      lambda: f"np.abs({a()})", lambda: f"np.arctan2({a()}, 2.0 + {a()} ** 2)",
                      lambda: f"np.minimum({a()}, {a()})", lambda: f"np.hypot({a()}, {e()})"]
        if self.on("np_constants"):
            forms += [lambda: f"{a()} * np.pi", lambda: f"np.sin({a()} + np.e)", lambda: f"{a()} / math.pi"]
        if self.on("calls"):
            forms += [lambda: f"kw0({a()}, c={e()})", lambda: f"np.array(list(map(lambda v: v * 2.0, {a()})))"]
        if self.on("power_general"):
            forms += [lambda: f"np.power(1.0 + {a()} ** 2, {e()})", lambda: f"2.0 ** {_wrap(a())}",
                      lambda: f"(1.0 + {a()} ** 2) ** {_wrap(a())}"]
        return forms

    def on_helpers(self) -> bool:
        return any(re.match(r"(?:def )?h\d", h) for h in self.helpers)

    def helper_name(self) -> str:
        return self.pick([m.group(1) for h in self.helpers if (m := re.match(r"(?:def )?(h\d+)", h))])

    # ---- blocks ------------------------------------------------------------------------------
    def block_makers(self) -> list:
        return [
            ("rebind", self.b_rebind), ("comprehension", self.b_comprehension),
            ("closure_nonlocal", self.b_nonlocal), ("closure_factory", self.b_factory),
            ("inplace", self.b_inplace), ("loop_break", self.b_loop_break), ("branch", self.b_branch),
            ("float_loop", self.b_float_loop), ("float_block", self.b_float_block),
            ("tuple", self.b_tuple), ("model", self.b_local_dict), ("np_scalar", self.b_np_scalar),
            ("objects", self.b_object), ("iterate", self.b_iterate), ("calls", self.b_lambda),
            ("grow_loop", self.b_grow_loop), ("nested_loops", self.b_nested_loops),
            ("refusable", self.b_refusable),
        ] + self.construct_makers()

    def block(self) -> Block | None:
        makers = [("arith", self.b_new_float), ("arith", self.b_new_array)]
        for feature, maker in self.block_makers():
            if self.on(feature):
                # refused programs check nothing else: their blocks are drawn less often
                makers += [(feature, maker)] * (1 if feature == "refusable" else 2)
        feature, maker = self.pick(makers)
        lines = maker()
        if lines is None:
            return None
        return Block(lines, frozenset({feature}))

    def focus_block(self, feature: str) -> Block | None:
        """A block certain to exercise ``feature``: its block form, or else a new name bound to an
        expression drawn from that feature's forms alone (so a short seed list covers them all)."""
        for name, maker in self.block_makers():
            if name == feature:
                lines = maker()
                if lines is not None:
                    return Block(lines, frozenset({feature}))
        marker = FEATURE_MARKERS.get(feature, "")
        saved, self.features = self.features, frozenset({feature})
        try:
            for _ in range(10):
                kind = self.pick(["f", "a"])
                expr = self.float_expr(2) if kind == "f" else self.array_expr(2)
                if re.search(marker, expr):
                    break
        finally:
            self.features = saved
        return Block(self.assign_new(kind, expr, "t" if kind == "f" else "a"), frozenset({feature}))

    def assign_new(self, kind: str, expr: str, prefix: str) -> list[str]:
        name = self.env.fresh(prefix)
        self.env.kinds[name] = kind
        return [f"{name} = {expr}"]

    def b_new_float(self):
        return self.assign_new("f", self.float_expr(3), "t")

    def b_new_array(self):
        return self.assign_new("a", self.array_expr(3), "a")

    def b_np_scalar(self):
        if self.env.names("a") and self.rng.random() < 0.5:
            return self.assign_new("f", f"{self.pick(self.env.names('a'))}[{self.rng.randrange(self.n)}]", "t")
        if self.on("np_float64"):
            return self.assign_new("f", f"np.float64({self.float_expr(2)})", "t")
        return self.assign_new("f", f"{self.float_expr(2)} * {self.pick(self.env.names('a') or ['np.ones(3)'])}[0]", "t")

    def b_rebind(self):
        env, rng = self.env, self.rng
        choices = []
        for name in env.names("a", mutable=True):
            choices += [(name, "f", f"{name}[{rng.randrange(self.n)}]"),
                        (name, "a", f"{name} * {_const(rng)} + {self.array_expr(1)}"),
                        (name, "l", f"list({name})")]
        for name in env.names("f", mutable=True):
            choices.append((name, "f", f"{name} * {_const(rng)} + {self.float_expr(1)}"))
        for name in env.names("l", mutable=True):
            choices += [(name, "a", f"np.array({name})"), (name, "l", f"[v * {_const(rng)} for v in {name}]")]
        if not choices:
            return None
        name, kind, expr = self.pick(choices)
        env.kinds[name] = kind
        return [f"{name} = {expr}"]

    def b_comprehension(self):
        env, rng = self.env, self.rng
        forms = []
        if env.names("a"):
            forms.append(lambda: self.assign_new("l", f"[np.sin(v) * {self.float_expr(1)} for v in {self.pick(env.names('a'))}]", "l"))
            forms.append(lambda: self.assign_new("f", f"sum(v * v for v in {self.pick(env.names('a'))})", "t"))
            forms.append(lambda: self.assign_new(
                "a", f"np.array([{(a := self.pick(env.names('a')))}[i] * {_const(rng)} + {a}[{self.n} - 1 - i] for i in range({self.n})])", "a"))
        if env.names("l"):
            forms.append(lambda: self.assign_new("l", f"[math.tanh(v) + {_const(rng)} * v for v in {self.pick(env.names('l'))}]", "l"))
        if env.names("l", mutable=True) and self.on("rebind"):
            name = self.pick(env.names("l", mutable=True))
            forms.append(lambda: [f"{name} = [v * {_const(rng)} for v in {name}]"])
        forms.append(lambda: self.assign_new("l", "[" + ", ".join(self.float_expr(1) for _ in range(self.n)) + "]", "l"))
        return self.pick(forms)()

    def b_nonlocal(self):
        env = self.env
        total, add = env.fresh("total"), env.fresh("add")
        lines = [f"{total} = 0.0"]
        if self.rng.random() < 0.5:
            lines += [f"def {add}(v):", f"    nonlocal {total}", f"    {total} += v"]
        else:  # two levels: the writer is nested in another nested function
            outer = env.fresh("outer")
            lines += [f"def {outer}(v):", f"    def {add}(w):", f"        nonlocal {total}",
                      f"        {total} += w", f"    {add}(v * 2.0)", f"    return None"]
            add = outer
        if env.names("a") and self.rng.random() < 0.6:
            arr = self.pick(env.names("a"))
            lines += [f"for i in range({self.n}):", f"    {add}({arr}[i] * {self.float_expr(1)})"]
        else:
            lines += [f"{add}({self.float_expr(2)})", f"{add}({self.float_expr(2)})"]
        env.kinds[total] = "f"
        return lines

    def b_factory(self):
        env, rng = self.env, self.rng
        make, g = env.fresh("make"), env.fresh("g")
        if rng.random() < 0.5:
            lines = [f"def {make}(c):", "    def inner(v):", f"        return c * v + np.sin(v)", "    return inner",
                     f"{g} = {make}({self.float_expr(1)})"]
        else:  # a factory whose closure keeps state through nonlocal
            lines = [f"def {make}():", "    total = 0.0", "    def inner(v):", "        nonlocal total",
                     "        total = total + v * v", "        return total", "    return inner", f"{g} = {make}()"]
        out = env.fresh("t")
        lines += [f"{g}({self.float_expr(2)})", f"{out} = {g}({self.float_expr(2)})"]
        env.kinds[out] = "f"
        return lines

    def b_inplace(self):
        env, rng, n = self.env, self.rng, self.n
        forms = []
        forms.append(lambda: self._zeros_then_write())
        arrays = env.names("a", mutable=True)
        if arrays:
            forms += [lambda: [f"{self.pick(arrays)} += {self.array_expr(1)}"],
                      lambda: [f"{self.pick(arrays)} *= {self.float_expr(1)}"],
                      lambda: [f"{self.pick(arrays)}[{rng.randrange(n)}] = {self.float_expr(2)}"],
                      lambda: [f"{self.pick(arrays)}[{rng.randrange(n)}] += {self.float_expr(2)}"],
                      lambda: [f"{self.pick(arrays)}[0:2] = {self.array_expr(1)}[1:3] * {_const(rng)}"]]
        lists = env.names("l", mutable=True)
        if lists:
            forms.append(lambda: [f"{self.pick(lists)}[{rng.randrange(n)}] = {self.float_expr(2)}"])
        floats = env.names("f", mutable=True)
        if floats:
            forms.append(lambda: [f"{self.pick(floats)} += {self.float_expr(2)}"])
        dicts = env.names("d", mutable=True)
        if dicts:
            forms.append(lambda: [f'{(d := self.pick(dicts))}["b"] = {d}["b"] * {self.float_expr(1)}'])
            forms.append(lambda: [f'{self.pick(dicts)}["w"] += {self.array_expr(1)}'])
        forms.append(lambda: self._grow_list())
        return self.pick(forms)()

    def _zeros_then_write(self):
        y = self.env.fresh("y")
        lines = [f"{y} = np.zeros({self.n})"]
        for i in self.rng.sample(range(self.n), k=self.rng.randint(1, self.n)):
            lines.append(f"{y}[{i}] = {self.float_expr(2)}")
        self.env.kinds[y] = "a"
        return lines

    def _grow_list(self):
        g = self.env.fresh("acc")
        lines = [f"{g} = []"]
        if self.env.names("a") and self.rng.random() < 0.5:
            lines += [f"for v in {self.pick(self.env.names('a'))}:", f"    {g}.append(np.cos(v) * {self.float_expr(1)})"]
        else:
            lines += [f"{g}.append({self.float_expr(2)})" for _ in range(2)]
        self.env.kinds[g] = "g"
        return lines

    def b_loop_break(self):
        env, rng, n = self.env, self.rng, self.n
        floats = env.names("f", mutable=True)
        if not floats or not env.names("a"):
            return None
        acc, arr = self.pick(floats), self.pick(env.names("a"))
        if rng.random() < 0.6:
            return [f"for i in range({n}):", f"    if {arr}[i] > {_const(rng)}:", "        break",
                    f"    {acc} = {acc} * 0.8 + np.tanh({arr}[i] * {self.float_expr(1)})"]
        k = env.fresh("k")
        return [f"{k} = 0", f"while {k} < {n} and {acc} < {_pos(rng)} * 4:",
                f"    {acc} = {acc} + {arr}[{k}] ** 2 * 0.5", f"    {k} += 1"]

    def b_branch(self):
        env = self.env
        floats, arrays = env.names("f", mutable=True), env.names("a", mutable=True)
        cond = f"{self.float_expr(2)} > {_const(self.rng, 0.0, 0.5)}"
        if floats and (not arrays or self.rng.random() < 0.6):
            t = self.pick(floats)
            if self.rng.random() < 0.3:
                return [f"if {cond}:", f"    {t} = {self.float_expr(2)}", f"elif {self.float_expr(1)} < {_const(self.rng)}:",
                        f"    {t} = {t} + 1.0"]
            return [f"if {cond}:", f"    {t} = {self.float_expr(2)}", "else:", f"    {t} = {t} * {self.float_expr(1)}"]
        if arrays:
            a = self.pick(arrays)
            return [f"if {cond}:", f"    {a} = {self.array_expr(2)}", "else:", f"    {a} = np.cos({a})"]
        return None

    def b_float_loop(self):
        env, n = self.env, self.n
        if not env.names("a"):
            return None
        acc = env.fresh("s")
        a, b = self.pick(env.names("a")), self.pick(env.names("a"))
        body = self.pick([f"{acc} = {acc} + {a}[i] * {b}[i]", f"{acc} = {acc} * 0.9 + {a}[i] ** 2 * {b}[i]",
                          f"{acc} += {a}[i] * {_const(self.rng)} - {b}[i] / (1.0 + {a}[i] * {a}[i])"])
        env.kinds[acc] = "f"
        if self.rng.random() < 0.3 and env.names("l"):
            lst = self.pick(env.names("l"))
            return [f"{acc} = 0.0", f"for v in {lst}:", f"    {acc} = {acc} + v * {_const(self.rng)}"]
        return [f"{acc} = 0.0", f"for i in range({n}):", f"    {body}"]

    def b_float_block(self):
        env, rng = self.env, self.rng
        lines = []
        names = []
        linear = self.on("linear_float_block") and rng.random() < 0.5
        for k in range(rng.randint(6, 9)):
            pool = env.names("f") + names
            left = self.pick(pool) if pool else self.float_leaf()
            right = self.pick(pool + [_const(rng)]) if pool else _const(rng)
            op = self.pick(["+", "-"] if linear else ["+", "-", "*", "*", "/ (1.0 + ", "**"])
            if k == 0 and not linear and not self.on("linear_float_block"):
                op = "**"  # a block with a residual (see the feature linear_float_block)
            t = env.fresh("u")
            if op == "/ (1.0 + ":
                rhs = f"{left} / (1.0 + {right} * {right})"
            elif op == "**":
                rhs = f"{left} ** 2"
            elif op == "*":
                rhs = f"{left} * {right} * 0.5"
            else:
                rhs = f"{left} {op} {right}"
            lines.append(f"{t} = {rhs}")
            names.append(t)
        env.kinds[names[-1]] = "f"
        env.kinds[names[-2]] = "f"
        return lines

    def b_tuple(self):
        env = self.env
        p, q = env.fresh("p"), env.fresh("q")
        if self.rng.random() < 0.5:
            lines = [f"{p}, {q} = {self.float_expr(2)}, {self.float_expr(2)}"]
        else:
            tp = env.fresh("tp")
            lines = [f"{tp} = ({self.float_expr(2)}, {self.array_expr(1)})", f"{p}, {q} = {tp}[0], np.sum({tp}[1])"]
        env.kinds[p] = env.kinds[q] = "f"
        return lines

    def b_local_dict(self):
        env = self.env
        m = env.fresh("m")
        lines = [f'{m} = {{"w": {self.array_expr(2)}, "b": {self.float_expr(2)}}}',
                 f'{m}["b"] = {m}["b"] * {_const(self.rng)} + np.sum({m}["w"])']
        env.kinds[m] = "d"
        return lines

    def b_object(self):
        if not any(h.startswith("class Model") for h in self.helpers):
            return None
        obj, out = self.env.fresh("obj"), self.env.fresh("t")
        lines = [f"{obj} = Model0({self.array_expr(1)})", f"{obj}.w = {obj}.w * {_const(self.rng)} + {self.array_expr(1)}",
                 f"{out} = np.sum({obj}({self.array_expr(1)})) + {obj}.scale({self.float_expr(1)})"]
        self.env.kinds[out] = "f"
        return lines

    def b_refusable(self):
        env, rng = self.env, self.rng
        out = env.fresh("t")
        form = rng.randrange(3)
        if form == 0:
            lines = ["try:", f"    {out} = {self.float_expr(2)}", "except ZeroDivisionError:", f"    {out} = 0.0"]
        elif form == 1:
            lines = [f"{out} = ({(w := env.fresh('w'))} := {self.float_expr(2)}) * {w}"]
        else:
            c, k = env.fresh("c"), env.fresh("late")
            lines = [f"{c} = {self.float_expr(1)}  # late capture", f"def {k}(v):", f"    return v * {c}",
                     f"{c} = {self.float_expr(1)}", f"{out} = {k}({self.float_expr(1)})"]
        env.kinds[out] = "f"
        return lines

    def b_lambda(self):
        sq, out = self.env.fresh("sq"), self.env.fresh("t")
        lines = [f"{sq} = lambda v: v * v + {_const(self.rng)} * v", f"{out} = {sq}({self.float_expr(2)}) + {sq}({self.float_expr(1)})"]
        self.env.kinds[out] = "f"
        return lines

    def b_grow_loop(self):
        g = self.env.fresh("grow")
        lines = [f"{g} = [{self.float_expr(2)}, {self.float_expr(1)}]", f"for v in {g}:",
                 f"    if len({g}) < {self.rng.randint(3, 6)}:", f"        {g}.append(v * 0.5 + {self.float_expr(1)})"]
        self.env.kinds[g] = "g"
        return lines

    def b_nested_loops(self):
        env, n = self.env, self.n
        if not env.names("a"):
            return None
        acc = env.fresh("s")
        a, b = self.pick(env.names("a")), self.pick(env.names("a"))
        if "W" in env.kinds and self.rng.random() < 0.6:
            m = env.fresh("M")
            lines = [f"{m} = W.copy()", f"{acc} = 0.0", f"for i in range({n}):", f"    for j in range({n}):",
                     f"        {m}[i, j] = {m}[i, j] * {a}[j] + {_const(self.rng)}", f"        {acc} = {acc} + {m}[i, j] * {b}[i] * 0.1"]
            env.kinds[m] = "m"
        else:
            lines = [f"{acc} = 0.0", f"for i in range({n}):", f"    for j in range(i + 1):",
                     f"        {acc} = {acc} + {a}[i] * {b}[j] * 0.1"]
        env.kinds[acc] = "f"
        return lines

    def b_iterate(self):
        env = self.env
        floats = env.names("f", mutable=True)
        if not floats or not env.names("a"):
            return None
        acc, a = self.pick(floats), self.pick(env.names("a"))
        seq = self.pick(env.names("l") + env.names("a"))
        return self.pick([
            [f"for i, v in enumerate({a}):", f"    {acc} = {acc} * 0.7 + v * {_const(self.rng)} + i * 0.01"],
            [f"for v, w in zip({a}, {seq}):", f"    {acc} = {acc} + np.sin(v) * w"],
            [f"for v in reversed({seq}):", f"    {acc} = 0.5 * {acc} + v"],
        ])

    # ---- helpers and the whole program -------------------------------------------------------
    def add_helpers(self) -> None:
        templates = [
            "def h{k}(v):\n    return np.sin(v) * v + 0.5 * v ** 2",
            "def h{k}(v):\n    w = np.tanh(v)\n    return w * w + v",
            "h{k} = lambda v: np.cos(v) * 0.5 + v",
            "def h{k}(v):\n    if np.all(v > -10.0):\n        return v * np.exp(-0.1 * v * v)\n    return v",
        ]
        for k in range(self.rng.randint(1, 2) if self.on("helper") else 0):
            self.helpers.append(self.pick(templates).format(k=k))
        if self.on("objects"):
            self.helpers.append("class Model0:\n    def __init__(self, w):\n        self.w = w\n\n"
                                "    def __call__(self, v):\n        return np.tanh(self.w * v)\n\n"
                                "    def scale(self, c):\n        return c * np.sum(self.w ** 2)")
        if self.on("calls"):
            self.helpers.append("def kw0(v, c=2.0, *, d=0.5):\n    return c * v + d * v * v")
            self.helpers.append("def va0(*vs):\n    total = 0.0\n    for v in vs:\n        total = total + np.sin(v)\n    return total")
        self.helpers += helper_sources(self.on)
        if self.on("recursion"):
            self.helpers.append("def rec0(v, k):\n    if k == 0:\n        return v\n    return rec0(np.sin(v) + 0.1 * v, k - 1)")

    def params(self, focus: tuple[str, ...]) -> list[str]:
        params = ["x"]
        self.env.kinds["x"] = "a"
        if self.rng.random() < 0.7:
            params.append("s")
            self.env.kinds["s"] = "f"
        if self.on("list_arg") and (self.rng.random() < 0.5 or "list_arg" in focus):
            params.append("xs")
            self.env.kinds["xs"] = "l"
        if self.on("model") and (self.rng.random() < 0.5 or "model" in focus):
            params.append("p")
            self.env.kinds["p"] = "d"
        if self.on("matrix") and (self.rng.random() < 0.4 or "matrix" in focus):
            params.append("W")
            self.env.kinds["W"] = "m"
        return params

    def term(self, name: str, kind: str) -> str:
        return {"f": name, "a": f"np.sum({name} * {name}) * 0.1", "l": f"sum({name})", "g": f"sum({name})",
                "m": f"np.sum(np.sin({name}))",
                "d": f'np.sum({name}["w"]) * {name}["b"]'}[kind]

    def program(self, n_blocks: int, focus: tuple[str, ...] = ()) -> Program:
        params = self.params(focus)
        self.add_helpers()
        blocks = []
        for feature in focus:
            block = self.focus_block(feature)
            blocks += [block] if block is not None else []
        tries = 0
        while len(blocks) < n_blocks and tries < 5 * n_blocks:
            tries += 1
            block = self.block()
            if block is not None:
                blocks.append(block)
        live = list(self.env.kinds.items())
        self.rng.shuffle(live)
        terms = [self.term(name, kind) for name, kind in live[: max(3, len(live) // 2)]]
        # every argument still bound to its first kind feeds the output, so none is unused
        return Program(params, self.helpers, blocks, terms, self.n, self.features)


def tuple_src(list_src: str) -> str:
    """The tuple display with the elements of a list display."""
    return "(" + list_src[1:-1] + ",)"


def random_program(rng: random.Random, features=DEFAULT_FEATURES, n_blocks: tuple[int, int] = (3, 7),
                   focus: str | tuple[str, ...] = ()) -> Program:
    """A random program using only ``features`` (always valid Python for ``random_args``); with
    ``focus`` (a feature or several), its first blocks certainly exercise them."""
    gen = Generator(rng, frozenset(features))
    return gen.program(rng.randint(*n_blocks), (focus,) if isinstance(focus, str) else tuple(focus or ()))


def random_args(rng: random.Random, program: Program) -> tuple:
    """Arguments for ``program``'s parameters: entries of magnitude 0.2..1.5 with random signs,
    so kinks at zero (abs, where, sqrt) are never at the point."""
    def value() -> float:
        return rng.choice((-1.0, 1.0)) * rng.uniform(0.2, 1.5)

    n = program.n
    made = {"x": lambda: np.array([value() for _ in range(n)]), "s": value,
            "xs": lambda: [value() for _ in range(n)],
            "p": lambda: {"w": np.array([value() for _ in range(n)]), "b": value()},
            "W": lambda: np.array([[value() for _ in range(n)] for _ in range(n)])}
    return tuple(made[name]() for name in program.params)


__all__ = ["FEATURES", "DEFAULT_FEATURES", "OPT_IN", "FEATURE_MARKERS", "features_in", "Block", "Program", "random_args", "random_program"]
