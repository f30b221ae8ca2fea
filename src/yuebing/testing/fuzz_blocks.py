"""The fuzzer's core statement blocks (mixed into ``fuzz_programs.Generator``).

Each ``b_*`` method of ``CoreBlocks`` writes a few statements exercising one feature (rebinding,
comprehensions, closures, in-place writes, loops, branches, float blocks, tuples, dicts, objects,
iteration) on the generator's live names, records the kinds of the names it binds, and returns
the lines (or ``None`` when nothing fits).
"""
from __future__ import annotations

from .fuzz_constructs import _const, _pos


class CoreBlocks:
    """Block makers of the core features; uses the generator's ``rng``, ``env``, ``n``,
    ``helpers``, ``on``, ``pick``, ``float_expr`` and ``array_expr``."""

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

    def _accumulator_and_two_arrays(self) -> tuple[str, str, str] | None:
        """A new accumulator's name and two live arrays (``None`` when no array is live)."""
        arrays = self.env.names("a")
        if not arrays:
            return None
        acc = self.env.fresh("s")
        return acc, self.pick(arrays), self.pick(arrays)

    def b_float_loop(self):
        env, n = self.env, self.n
        names = self._accumulator_and_two_arrays()
        if names is None:
            return None
        acc, a, b = names
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
        names = self._accumulator_and_two_arrays()
        if names is None:
            return None
        acc, a, b = names
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
