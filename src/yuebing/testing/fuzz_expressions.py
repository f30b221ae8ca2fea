"""Expression forms of the fuzzer's programs (mixed into ``fuzz_programs.Generator``).

``ExpressionForms`` writes random float and array expressions over the generator's live names,
using only the forms of enabled features (``self.on(feature)``). Expressions stay bounded
(``tanh``/``sin`` squash, divisions by ``1 + e*e``, logs of ``1 + e*e``) so values and
derivatives are moderate and finite differences accurate.
"""
from __future__ import annotations

import re

from .fuzz_constructs import _const

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



def tuple_src(list_src: str) -> str:
    """The tuple display with the elements of a list display."""
    return "(" + list_src[1:-1] + ",)"



class ExpressionForms:
    """Float and array expressions; uses the generator's ``rng``, ``env``, ``n``, ``helpers``,
    ``on`` and ``pick``."""

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
        forms += self.more_float_forms(e, a1) + self.mixed_float_forms(e, a1)
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
