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

from .fuzz_blocks import CoreBlocks
from .fuzz_estimation import (ESTIMATION_FEATURES, ESTIMATION_IMPORTS, ESTIMATION_MARKERS, EstimationBlocks,
                              estimation_helper_sources)
from .fuzz_constructs import CONSTRUCT_FEATURES, CONSTRUCT_MARKERS, ConstructBlocks, helper_sources
from .fuzz_constructs import OPT_IN as CONSTRUCT_OPT_IN
from .fuzz_expressions import ExpressionForms
from .fuzz_habits import HABIT_FEATURES, HABIT_MARKERS, HabitBlocks, habit_helper_sources
from .fuzz_mixed import MIXED_FEATURES, MIXED_MARKERS, MixedBlocks, mixed_helper_sources
from .fuzz_science import SCIENCE_FEATURES, SCIENCE_MARKERS, SCIENCE_OPT_IN, ScienceBlocks, science_helper_sources

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
) + CONSTRUCT_FEATURES + MIXED_FEATURES + SCIENCE_FEATURES + HABIT_FEATURES + ESTIMATION_FEATURES
# What a run uses unless told otherwise: every feature but the opt-in ones (feature -> why).
OPT_IN = {**CONSTRUCT_OPT_IN, **SCIENCE_OPT_IN}
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
    **MIXED_MARKERS,
    **SCIENCE_MARKERS,
    **HABIT_MARKERS,
    **ESTIMATION_MARKERS,
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
        head = ["import functools", "import itertools", "import math", "import numpy as np", "import scipy.special",
                *ESTIMATION_IMPORTS, ""]
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


class Generator(CoreBlocks, ExpressionForms, ConstructBlocks, MixedBlocks, ScienceBlocks, HabitBlocks,
                EstimationBlocks):
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
        ] + self.construct_makers() + self.mixed_makers() + self.science_makers() + self.habit_makers() + \
            self.estimation_makers()

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
        self.helpers += helper_sources(self.on) + mixed_helper_sources(self.on) + science_helper_sources(self.on)
        self.helpers += habit_helper_sources(self.on) + estimation_helper_sources(self.on)
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
        for feature in focus * 2:  # a focus block needing names that later blocks (or its first try) made
            if not re.search(FEATURE_MARKERS.get(feature, "$^"), "\n".join(l for b in blocks for l in b.lines), re.M):
                block = self.focus_block(feature)
                blocks += [block] if block is not None else []
        live = list(self.env.kinds.items())
        self.rng.shuffle(live)
        terms = [self.term(name, kind) for name, kind in live[: max(3, len(live) // 2)]]
        # every argument still bound to its first kind feeds the output, so none is unused
        return Program(params, self.helpers, blocks, terms, self.n, self.features)



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
