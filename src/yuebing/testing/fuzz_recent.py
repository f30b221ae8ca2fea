"""Differential fuzzing of what session 24 changed in the engine: programs drawn from templates.

Each family writes a function ``f(x, s)`` (``x`` a float vector of length 4, ``s`` a float) that
goes through one of the constructs changed then, with random forms, constants and masks:
structured-array tables made from the arguments, masked arrays through np.where, joins,
np.diff and np.sort, smoothing splines of computed data, local Enum and dataclass models, module-level caches written in one call
and read in a later one, ``with`` managers defined in the function, exceptions carrying a user
object out of C code, and globals written through the module. ``check`` runs
``fuzz.check_program`` (reverse vs forward vs differences vs hvp, batched passes) and, for
``third=True``, ``fuzz_third`` (third derivatives against differences of the second).

``python -m yuebing.testing.fuzz_recent --seeds 96000:96100 [--third]`` prints the outcomes.
"""
from __future__ import annotations

import random

import numpy as np

from .fuzz import Outcome, Summary, check_program
from .fuzz_third import check_third_order_program, gradient_function_source

HEADER = "import math\nimport sys\nimport enum\nimport dataclasses\nimport contextlib\nimport numpy as np\nimport scipy.interpolate\n\n"


def _c(rng: random.Random, low: float = -1.5, high: float = 1.5) -> str:
    return repr(round(rng.uniform(low, high), 3))


def _p(rng: random.Random) -> str:
    return repr(round(rng.uniform(0.3, 1.6), 3))


def _smooth(rng: random.Random, v: str) -> str:
    return rng.choice([f"np.sin({v})", f"np.tanh({v})", f"{v} * {v}", f"{v} * {_c(rng)}", f"np.exp(0.3 * {v})"])


def struct_tables(rng: random.Random) -> tuple[list[str], list[str]]:
    """A structured array whose float fields are computed from the arguments."""
    body = ['R = np.zeros(4, dtype=[("a", float), ("b", float), ("k", int)])',
            f'R["a"] = {_smooth(rng, "x")}', f'R["b"] = x * s + {_c(rng)}', 'R["k"] = np.arange(4)']
    writes = [f"R[{rng.randrange(4)}] = (s * {_c(rng)}, x[{rng.randrange(4)}], 3)",
              f'R[{rng.randrange(4)}]["b"] = np.sin(s)', f'R[1:3]["a"] *= {_p(rng)}',
              f'R["a"][{rng.randrange(4)}] = s * s', 'R[[0, 2]] = R[[3, 1]]',
              'for r in R:\n        r["a"] = r["a"] * s + r["b"]', 'R[::2] = R[1::2].copy()',
              'R["b"][R["k"] % 2 == 0] *= s', 'R = np.concatenate([R[2:], R[:2]])']
    body += rng.sample(writes, rng.randint(0, 2))
    reads = ['np.sum(R["a"] * R["b"])', 'R[2]["a"] * R[1][1]', 'sum(r["a"] * r["b"] for r in R)',
             'np.sum(np.concatenate([R, R[::-1]])["b"] ** 2) * 0.1', 'np.sum(R.copy().reshape(2, 2)["a"])',
             'R.tolist()[1][0] * s', 'np.sum(R[R["k"] > 1]["b"])', 'np.sum(np.array([R[0], R[3]])["a"])',
             '(lambda a, b, k: a * b + k)(*R[2])', 'np.sum([a * b for a, b, k in R])',
             'np.sum(np.stack([R["a"], R["b"]]) ** 2) * 0.1', 'R[np.argmax(R["k"])]["a"] * s']
    return [], body + [f"out = {' + '.join(rng.sample(reads, rng.randint(1, 3)))}"]


def masked(rng: random.Random) -> tuple[list[str], list[str]]:
    """A masked array (a fixed mask or one computed from the values) through joins, where, diff, sort."""
    mask = [rng.random() < 0.4 for _ in range(4)]
    made = rng.choice([f"np.ma.masked_array({_smooth(rng, 'x')} + s, mask={mask})",
                       f"np.ma.masked_greater(x * s, {_p(rng)})",
                       f"np.ma.masked_where(x < {_c(rng, -0.5, 0.5)}, x + {_c(rng)})"])
    steps = ["r = np.where(m > 0, m, m * m)", "r = np.concatenate([m, m * s])", "r = np.diff(m)",
             "r = np.sort(m * s)", "r = np.ma.where(m > 0.1, m * s, 0.5)", "r = np.ma.concatenate([m[::-1], m])",
             "r = np.ma.diff(m * m)", "r = np.ma.sort(m + s)", "r = np.stack([m, m * 2.0])",
             "r = np.append(m, s)", "r = np.hstack([m, np.ma.masked_array([s], mask=[False])])"]
    ends = ["np.ma.filled(r, 0.0) ** 2", "np.ma.sum(np.ma.exp(0.3 * r)) * 1.0", "r.max() * r.min() * 1.0", "r.sum() * 1.0", "np.sum(np.ma.getdata(r) ** 2) * 0.1", "(r * r).mean()",
            "np.sum(np.ma.getdata(r)) * s"]
    chosen = rng.choice(ends)
    body = [f"m = {made}", rng.choice(steps), f"out = np.sum({chosen})" if "**" in chosen else f"out = {chosen}"]
    return [], body


def local_models(rng: random.Random) -> tuple[list[str], list[str]]:
    """Local Enum members and dataclasses holding computed values, frozen ones, decorators reading variables."""
    forms = [
        ["class Mode(enum.Enum):", "    LOW = s", f"    HIGH = s * {_c(rng)} + 1.0",
         "out = Mode.HIGH.value * np.sum(x * x) + Mode.LOW.value ** 2 + sum(m.value for m in Mode)"],
        ["@dataclasses.dataclass(frozen=True)", "class P:", "    u: np.ndarray", "    w: float = s * 2.0",
         "    def energy(self):", f"        return np.sum(np.sin(self.u)) * self.w + {_c(rng)}",
         f"p = P(x * {_c(rng)})", "q = dataclasses.replace(p, w=p.w * s)", "out = p.energy() + q.energy()"],
        ["k = s * s + 0.5", "def scaled(cls):", "    cls.factor = k", "    return cls", "@scaled",
         "class Model:", "    def __init__(self, a):", "        self.a = a",
         "    def loss(self):", "        return np.sum(self.a ** 2) * self.factor",
         f"out = Model(x * {_c(rng)}).loss()"],
        ["class Level(enum.Enum):", "    A = s", "    B = s * s", f"    C = {_c(rng)} * s",
         "out = sum(m.value * np.sum(x * x) for m in Level) + Level['B'].value + Level(s).value"],
        ["@dataclasses.dataclass", "class Q:", "    a: float", "    b: float = s + 1.0",
         "q = Q(np.sum(x))", "d = dataclasses.fields(Q)[1].default", f"out = q.a * q.b + d * {_c(rng)}"],
        ["class Base:", "    def __init_subclass__(cls, k=1.0, **kw):", "        super().__init_subclass__(**kw)",
         "        cls.k = k", "class Sub(Base, k=s * 3.0):", "    pass", "out = Sub.k * np.sum(np.tanh(x))"],
        ["@dataclasses.dataclass(frozen=True)", "class V:", "    a: float", "    def __post_init__(self):",
         "        object.__setattr__(self, 'a', self.a * 2.0)", "v = V(s * x[0])",
         f"out = v.a ** 2 + {_c(rng)} * v.a"],
    ]
    return [], rng.choice(forms)


CACHE_HELPERS = ["CACHE = {}", "STORE = []", "class Holder:\n    value = None",
                 "def remember(key, v):\n    CACHE[key] = v\n    return 0.0",
                 "def recall(key):\n    return CACHE[key]",
                 "def push(v):\n    STORE.clear()\n    STORE.append(v)",
                 "def put_global(v):\n    global G\n    G = v",
                 "def put_module(v):\n    setattr(sys.modules[__name__], 'H', v)",
                 "def memo(v):\n    if 'm' not in CACHE:\n        pass\n    CACHE['m'] = v * 2.0\n    return CACHE['m']"]


def module_state(rng: random.Random) -> tuple[list[str], list[str]]:
    """Outside state written in one call and read in a later one (dict, list, class attribute, globals)."""
    forms = [
        [f"remember('a', {_smooth(rng, 'x')} * s)", "out = np.sum(recall('a') ** 2) * 0.5"],
        [f"push(x * s + {_c(rng)})", "out = np.sum(np.sin(STORE[0]))"],
        [f"Holder.value = np.tanh(x) * {_p(rng)}", "out = np.sum(Holder.value * x) * s"],
        ["put_global(s * x)", "out = np.sum(G * G) + s"],
        [f"put_module(np.sin(x) * s)", "out = np.sum(sys.modules[__name__].H * x)"],
        ["t = memo(s * s)", "out = t * np.sum(x) + CACHE['m']"],
    ]
    return CACHE_HELPERS, rng.choice(forms)


def managers(rng: random.Random) -> tuple[list[str], list[str]]:
    """With statements whose manager the function defines (a class, @contextmanager, a method's)."""
    forms = [
        ["class Scale:", "    def __init__(self, k):", "        self.k = k", "    def __enter__(self):",
         "        return self.k * 2.0", "    def __exit__(self, *exc):", "        return False",
         "with Scale(s) as k:", f"    t = np.sum(x * k) + {_c(rng)}", "out = t * s"],
        ["@contextlib.contextmanager", "def shifted(v):", "    yield v + 1.0",
         "with shifted(x * s) as y:", "    t = np.sum(np.sin(y))", "out = t"],
        ["class Sup:", "    def __enter__(self):", "        return self", "    def __exit__(self, *exc):",
         "        return True", "t = s", "with Sup():", "    t = t * np.sum(x)",
         f"    raise ValueError('skip')", "out = t * t"],
        ["class Acc:", "    def __init__(self):", "        self.total = 0.0", "    def __enter__(self):",
         "        return self", "    def __exit__(self, *exc):", "        self.total = self.total * 2.0",
         "        return False", "acc = Acc()", "with acc as a:", f"    a.total = a.total + np.sum(x ** 2) * s",
         "out = acc.total"],
        ["class Model:", "    def __init__(self, w):", "        self.w = w", "    @contextlib.contextmanager",
         "    def scaled(self, c):", "        old = self.w", "        self.w = self.w * c", "        yield self",
         "        self.w = old", f"m = Model(x * {_p(rng)})", "with m.scaled(s) as h:",
         "    t = np.sum(h.w ** 2)", "out = t + np.sum(m.w)"],
        ["with np.errstate(over='ignore'):", f"    out = np.sum(np.exp(x * s)) * {_p(rng)}"],
        ["class Tape:", "    def __init__(self):", "        self.items = []", "    def __enter__(self):",
         "        return self.items", "    def __exit__(self, kind, value, tb):",
         "        self.items.append(s * 0.5)", "        return kind is KeyError",
         "tape = Tape()", "with tape as items:", "    items.append(np.sum(np.sin(x)))",
         "    {}['missing']", "out = sum(tape.items) * s"],
    ]
    return [], rng.choice(forms)


def splines(rng: random.Random) -> tuple[list[str], list[str]]:
    """A smoothing spline (FITPACK's knots held) of data computed from the arguments, evaluated."""
    k = rng.choice([3, 3, 2, 4])
    # no smoothing fit (s > 0): its derivative is that of fp = s met exactly, which FITPACK meets
    # to 0.1%, so differences of its output disagree by about that (docs/limitations.md; seeds 96208-9)
    made = rng.choice([f"scipy.interpolate.UnivariateSpline(xs, y, k={k}, s=0.0)",
                       f"scipy.interpolate.UnivariateSpline(xs, y, w=1.0 + 0.1 * xs, k={k}, s=0)",
                       f"scipy.interpolate.LSQUnivariateSpline(xs, y, [0.3, 0.6], k={k})",
                       f"scipy.interpolate.InterpolatedUnivariateSpline(xs, y, k={k})"])
    reads = ["spl(0.37)", "spl.integral(0.1, 0.9)", "np.sum(spl(xs) ** 2) * 0.1", "spl.derivative()(0.52)",
             "np.sum(spl.get_coeffs()) * 0.1", "spl.get_residual() * 0.0 + spl(0.81) ** 2"]
    return [], ["xs = np.linspace(0.0, 1.0, 9)",
                f"y = np.sin(3.0 * xs * s) + {_c(rng)} * np.concatenate([x, x, [s]]) ** 2",
                f"spl = {made}", f"out = {' + '.join(rng.sample(reads, rng.randint(1, 3)))}"]


BOX_HELPER = "class Box:\n    def __init__(self, v):\n        self.v = v\n    def __hash__(self):\n        return 7"


def c_exceptions(rng: random.Random) -> tuple[list[str], list[str]]:
    """A user object that C code puts in the exception it raises, read in the handler."""
    forms = [
        ["b = Box(x * s)", "d = {}", "try:", "    t = d[b]", "except KeyError as e:",
         "    t = np.sum(e.args[0].v ** 2)", "out = t"],
        ["b = Box(np.sin(x))", "d = {}", "try:", "    t = d.pop(b)", "except KeyError as e:",
         f"    t = np.sum(e.args[0].v) * s", "out = t"],
        ["b = Box(s * 2.0)", "try:", "    t = b.missing", "except AttributeError as e:",
         "    t = e.obj.v * np.sum(x)", "out = t"],
        ["t = 0.0", "d = {}", f"for k in range({rng.randint(1, 3)}):", "    b = Box(x * (s + k))",
         "    try:", "        t = t + d[b]", "    except KeyError as e:", "        t = t + np.sum(np.tanh(e.args[0].v))",
         "    d[Box(0.0)] = s", "out = t"],
        ["b = Box(np.exp(0.2 * x))", "try:", "    t = getattr(b, 'w')", "except AttributeError as e:",
         f"    t = np.sum(e.obj.v * x) * {_c(rng)}", "out = t * s"],
    ]
    return [BOX_HELPER], rng.choice(forms)


FAMILIES = {"struct_tables": struct_tables, "masked": masked, "local_models": local_models,
            "module_state": module_state, "managers": managers, "c_exceptions": c_exceptions,
            "splines": splines}


def program(seed: int, families=tuple(FAMILIES)) -> tuple[str, tuple]:
    """The source of ``f(x, s)`` for ``seed`` (one or two families) and its point."""
    rng = random.Random(seed)
    chosen = rng.sample(list(families), min(len(families), rng.choice([1, 1, 2])))
    helpers, body, outs = [], [], []
    for k, name in enumerate(chosen):
        extra, lines = FAMILIES[name](rng)
        helpers += [h for h in extra if h not in helpers]
        body += [line.replace("out =", f"out{k} =", 1) if line.lstrip().startswith("out =") else line
                 for line in lines]
        outs.append(f"out{k}")
    body.append(f"return {' + '.join(outs)} + {_c(rng)} * s * np.sum(x)")
    source = HEADER + "\n\n".join(helpers) + "\n\n\ndef f(x, s):\n" + "".join(f"    {line}\n" for line in body)
    nprng = np.random.default_rng(seed)
    args = (np.round(nprng.uniform(-1.0, 1.0, 4), 3), round(float(nprng.uniform(0.4, 1.2)), 3))
    return source, args


def check(seed: int, third: bool = False, families=tuple(FAMILIES)) -> Outcome:
    """Seed's outcome in first and second order, or (``third``) in third order."""
    source, args = program(seed, families)
    if not third:
        return check_program(source, args, seed)
    return check_third_order_program(gradient_function_source(source, ["x", "s"], args, seed), args, seed)


def _main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="96000:96050")
    parser.add_argument("--third", action="store_true")
    parser.add_argument("--family", default=None)
    options = parser.parse_args()
    start, stop = (int(v) for v in options.seeds.split(":"))
    families = (options.family,) if options.family else tuple(FAMILIES)
    summary = Summary()
    for seed in range(start, stop):
        summary.add(seed, check(seed, options.third, families))
    print(summary.report())
    for seed, outcome in summary.outcomes.items():
        if outcome.status in ("wrong", "invalid"):
            print(f"\n==== seed {seed}\n{outcome}")


if __name__ == "__main__":
    _main()


__all__ = ["FAMILIES", "check", "program"]
