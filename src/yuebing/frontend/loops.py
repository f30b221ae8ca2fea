"""Lowering of ``for`` and ``while`` loops (part of the normaliser, ``normalise.Normaliser``).

``for`` over ``range`` becomes ``ForRange``; every other ``for`` walks an index over a sequence
while the index is within the sequence's *current* length, as Python's list iterator does (a
list that grows in the body is followed live), as a ``While``. A dict or set is walked over a
snapshot of its keys, and a change of its size raises Python's ``RuntimeError``. ``break``,
``continue`` and ``return`` inside a loop become flags (``_Loop``) tested by the loop and by
the statements after the jump.
"""
from __future__ import annotations

import ast
import operator
from typing import Any

from ..ir import generators as G
from ..ir import nodes as ir
from ..ir import primitives as P
from .truth_tests import tested


# `for v in reversed(obj)` walks obj backwards by index, unless obj's __reversed__ is Python code
# of its own, which may yield something else (every other item, new values): then the loop walks
# what reversed(obj) returns (plain code, spelt with builtins: it runs in every mode's program). A
# class may declare that its __reversed__ is that walk (REVERSED_WALKS_BACKWARDS: the deques made
# in the function).
_REVERSED_BY_OWN_CODE = (
    "type(getattr(type({it}), '__reversed__', None)).__name__ == 'function' "
    "and not getattr(type({it}), 'REVERSED_WALKS_BACKWARDS', False)")

# `for v in reversed(d)` walks a deque by index, itself (its items read live, as CPython's reversed
# iterator reads them), checking the mutation count CPython's iterator checks: a deque made in the
# function keeps it in ``state``; one passed in has it counted by the rules that change it
# (rules/containers/_deque_states.py, reached by name: plain code, spelt with builtins)
_IS_DEQUE_ARGUMENT = "type({it}).__module__ == 'collections' and type({it}).__name__ == 'deque'"
_DEQUE_STATE = (
    "({it}.state if getattr(type({it}), 'REVERSED_WALKS_BACKWARDS', False) else "
    "__import__('yuebing.rules.containers._deque_states', fromlist=['mutations']).mutations({it}))")


class _Loop:
    """Flags of one loop being lowered (created only when the loop needs them)."""

    def __init__(self, index: int) -> None:
        self.exit = f"_exit{index}"  # skip the rest of this iteration (break/continue/return)
        self.stop = f"_stop{index}"  # leave the loop (break/return)


def _jumps(node: ast.AST, in_loop: bool = False) -> set[str]:
    """Which of break/continue/return can leave ``node`` (break/continue of nested loops excluded)."""
    found: set[str] = set()
    stack = [(node, False)]
    while stack:
        n, nested = stack.pop()
        if isinstance(n, ast.Return):
            found.add("return")
        elif isinstance(n, ast.Break) and not nested:
            found.add("break")
        elif isinstance(n, ast.Continue) and not nested:
            found.add("continue")
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(n, (ast.For, ast.AsyncFor, ast.While)):
            # the body's break/continue are the nested loop's own; its else clause's leave ours
            # (``for ...: ... else: break``: scipy.stats' _masked_arrays_2_sentinel_arrays)
            stack.extend((child, True) for child in n.body)
            stack.extend((child, nested) for child in n.orelse)
            continue  # (the header's target, iterable or test holds no break or continue)
        for child in ast.iter_child_nodes(n):
            stack.append((child, nested))
    return found


class LoopLowering:
    """The loop statements of ``Normaliser`` (a mixin: it uses the normaliser's ``expr``,
    ``assign``, ``block``, ``call`` and ``tmp``)."""

    def _loop_flags(self, node: ast.AST) -> _Loop | None:
        jumps = set()
        for s in node.body:
            jumps |= _jumps(s)
        if not jumps:
            return None
        return _Loop(self.counter + 1)

    def _loop_else(self, node: ast.For | ast.While, loop: _Loop | None, out: list) -> None:
        """``for/while ... else``: the else block runs unless the loop was left by break (or return)."""
        if not node.orelse:
            return
        self.line = node.orelse[0].lineno
        else_block = self.block(node.orelse)
        if loop is None:  # nothing can leave the loop early
            out.extend(else_block)
            return
        go = self.tmp("go")
        out.append(ir.Opaque(f"{go} = not {loop.stop}", line=self.line, defines=(go,)))
        out.append(ir.If(ir.Var(go), else_block, [], line=self.line))

    def stmt_While(self, node: ast.While, out: list) -> None:
        line = node.lineno
        loop = self._loop_flags(node)
        test_body: list = []
        test = tested(self, node.test, test_body)
        if loop is not None:
            self.counter += 1
            out.append(ir.Opaque(f"{loop.stop} = False", line=line, defines=(loop.stop,)))
            test = self._and_not_stop(test, loop, test_body)
            self.loops.append(loop)
        body = [ir.Opaque(f"{loop.exit} = False", line=line, defines=(loop.exit,))] if loop else []
        body += self._repeated(self.block, node.body)
        if loop is not None:
            self.loops.pop()
        out.append(ir.While(test_body, test, body, line=line))
        self._loop_else(node, loop, out)

    def _repeated(self, lower: Any, *args: Any) -> Any:
        """``lower(*args)`` for code that may run more than once per call (a loop's body, a
        comprehension), with ``repeats`` counting them (closures.py: a comprehension run more
        than once per call cannot have its variables in our cells)."""
        self.repeats += 1
        try:
            return lower(*args)
        finally:
            self.repeats -= 1

    def _and_not_stop(self, test: ir.Atom, loop: _Loop, out: list) -> ir.Atom:
        """A loop test that also fails once the loop has been broken out of (or returned from)."""
        go = self.tmp("go")
        extra = " or _returned" if self.uses_return_flag else ""
        text = repr(test.value) if isinstance(test, ir.Const) else f"bool({test})"
        out.append(ir.Opaque(f"{go} = {text} and not ({loop.stop}{extra})", line=self.line, defines=(go,)))
        return ir.Var(go)

    def stmt_For(self, node: ast.For, out: list) -> None:
        loop = self._loop_flags(node)

        def body(inner: list) -> None:
            if loop is not None:
                inner.append(ir.Opaque(f"{loop.exit} = False", line=node.lineno, defines=(loop.exit,)))
                self.loops.append(loop)
            inner.extend(self._repeated(self.block, node.body))
            if loop is not None:
                self.loops.pop()

        if loop is not None:
            self.counter += 1
            out.append(ir.Opaque(f"{loop.stop} = False", line=node.lineno, defines=(loop.stop,)))
        self._for_loop(node.target, node.iter, body, out, loop)
        self._loop_else(node, loop, out)

    def _for_loop(self, target: ast.expr, iterable: ast.expr, make_body: Any, out: list, loop: Any) -> None:
        """Lower ``for target in iterable`` with a body produced by ``make_body(list)``."""
        line = self.line
        call = iterable if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) \
            and not iterable.keywords and self.builtin_unshadowed(iterable.func.id) else None
        kind = call.func.id if call is not None else None
        if kind == "range" and 1 <= len(call.args) <= 3 and not any(isinstance(a, ast.Starred) for a in call.args):
            bounds = [self.expr(a, out) for a in call.args]
            start, stop, step = (
                (ir.Const(0), bounds[0], ir.Const(1)) if len(bounds) == 1 else
                (bounds[0], bounds[1], ir.Const(1)) if len(bounds) == 2 else tuple(bounds))

            def element(k: ir.Atom, body: list) -> None:
                self.assign(target, k, body)
            self._index_loop(start, stop, step, element, make_body, out, loop, line)
            return
        # Every other loop walks an index over a sequence while the index is within the
        # sequence's *current* length, as Python's list iterator does: a list that grows (or
        # shrinks) in the body is followed live. A dict or set is walked over a snapshot of its
        # keys, and a change of its size raises Python's RuntimeError.
        if kind == "enumerate" and len(call.args) == 1 and isinstance(target, (ast.Tuple, ast.List)) \
                and len(target.elts) == 2 and not any(isinstance(e, ast.Starred) for e in target.elts):
            it, seq = self._sequence(call.args[0], out)

            def element(k: ir.Atom, body: list) -> None:
                self.assign(target.elts[0], k, body)
                self.assign(target.elts[1], self.call(body, ir.Const(operator.getitem), [seq, k]), body)
            self._live_loop(ir.Const(0), "{k} < len(%s)" % seq, [(it, seq)], element, make_body, out, loop, line)
            return
        if kind == "zip" and call.args and not any(isinstance(a, ast.Starred) for a in call.args):
            pairs = [self._sequence(a, out) for a in call.args]
            seqs = [seq for _, seq in pairs]

            def element(k: ir.Atom, body: list) -> None:
                items = [self.call(body, ir.Const(operator.getitem), [s, k]) for s in seqs]
                if isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == len(seqs) \
                        and not any(isinstance(e, ast.Starred) for e in target.elts):
                    for t, item in zip(target.elts, items):
                        self.assign(t, item, body)
                else:
                    self.assign(target, self.call(body, ir.Const(P.mktuple), items), body)
            within = " and ".join(f"{{k}} < len({seq})" for seq in seqs)
            self._live_loop(ir.Const(0), within, pairs, element, make_body, out, loop, line)
            return
        if kind == "reversed" and len(call.args) == 1:
            self._reversed_loop(target, self._held(self.expr(call.args[0], out), out), make_body, out, loop, line)
            return
        view = iterable.func.attr if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) \
            and not iterable.args and not iterable.keywords else None
        if view in ("items", "values", "keys"):
            mapping = self._held(self.expr(iterable.func.value, out), out)
            keys = self.call(out, ir.Const(P.dict_keys), [mapping, ir.Const(view)])

            def element(k: ir.Atom, body: list) -> None:
                key = self.call(body, ir.Const(operator.getitem), [keys, k])
                if view == "keys":
                    self.assign(target, key, body)
                    return
                value = self.call(body, ir.Const(operator.getitem), [mapping, key])
                if view == "values":
                    self.assign(target, value, body)
                elif isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == 2 \
                        and not any(isinstance(e, ast.Starred) for e in target.elts):
                    self.assign(target.elts[0], key, body)
                    self.assign(target.elts[1], value, body)
                else:
                    self.assign(target, self.call(body, ir.Const(P.mktuple), [key, value]), body)
            self._live_loop(ir.Const(0), "{k} < len(%s)" % keys, [(mapping, keys)], element, make_body, out, loop, line)
            return
        it, seq = self._sequence(iterable, out)

        def element(k: ir.Atom, body: list) -> None:
            self.assign(target, self.call(body, ir.Const(operator.getitem), [seq, k]), body)
        self._live_loop(ir.Const(0), "{k} < len(%s)" % seq, [(it, seq)], element, make_body, out, loop, line)

    def _reversed_loop(self, target: ast.expr, it: ir.Var, make_body: Any, out: list, loop: Any, line: int) -> None:
        """``for target in reversed(it)``: a list, tuple, array or deque walked backwards by index
        (its items read live, as CPython's reversed iterators read them); an object whose
        ``__reversed__`` is Python code of its own (which may yield something else: every other
        item, new values) walked forwards over what ``reversed(it)`` returns, that call
        differentiated, as ``r = reversed(it); for v in r:`` is. Which one is decided when it runs."""
        own, rev, seq, start, step = (self.tmp(name) for name in ("own", "rev", "seq", "start", "step"))
        out.append(ir.Opaque(f"{own} = {_REVERSED_BY_OWN_CODE.format(it=it)}", line=line, defines=(own,)))
        by_own_code: list = [ir.Call(rev, ir.Global("reversed"), [it], line=line)]
        self.globals["reversed"] = None
        flag, forward_state = self._walk(ir.Var(rev), by_own_code, seq)
        by_own_code += [ir.Copy(start, ir.Const(0), line=line), ir.Copy(step, ir.Const(1), line=line)]
        by_index: list = [ir.Opaque(f"{flag} = False\n{forward_state} = None\n{rev} = None", line=line,
                                    defines=(flag, forward_state, rev))]
        walks = ir.Var(self.tmp("walks"))  # a deque: walked itself, read live (see _DEQUE_STATE)
        by_index.append(ir.Opaque(f"{walks.name} = getattr(type({it}), 'REVERSED_WALKS_BACKWARDS', False) or "
                                  + _IS_DEQUE_ARGUMENT.format(it=it), line=line, defines=(walks.name,)))
        # its mutation count, which CPython's reversed iterator checks
        state = self.tmp("state")
        deque_state = _DEQUE_STATE.format(it=it)
        by_index.append(ir.Opaque(f"{state} = {deque_state} if {walks.name} else None", line=line, defines=(state,)))
        by_index.append(ir.If(walks, [ir.Copy(seq, it, line=line)],
                              [ir.Call(seq, ir.Const(P.as_sequence), [it], line=line)], line=line))
        n = self.call(by_index, ir.Global("len"), [ir.Var(seq)])
        self.globals["len"] = None
        last = self.call(by_index, ir.Const(operator.sub), [n, ir.Const(1)])
        by_index += [ir.Copy(start, last, line=line), ir.Copy(step, ir.Const(-1), line=line)]
        by_own_code.append(ir.Opaque(f"{state} = None", line=line, defines=(state,)))
        out.append(ir.If(ir.Var(own), by_own_code, by_index, line=line))
        mutated = (f"if {state} is not None and {{k}} >= 0 and {deque_state} != {state}: "  # (none at the end)
                   "raise RuntimeError('deque mutated during iteration')")

        def element(k: ir.Atom, body: list) -> None:
            self.assign(target, self.call(body, ir.Const(operator.getitem), [ir.Var(seq), k]), body)
        within = "{k} >= 0 and {k} < len(%s)" % seq  # as list_reverseiterator: stops if the list shrank
        self._live_loop(ir.Var(start), within, [(it, ir.Var(seq))], element, make_body, out, loop, line,
                        step=step, checks=[mutated])

    def _sequence(self, iterable: ast.expr, out: list, lazy: bool = True) -> tuple[ir.Atom, ir.Var]:
        """The iterated object and the indexable sequence the loop walks (the object itself
        for lists, tuples and arrays; a list of its keys for a dict or set). An iterator (a lazy
        generator, ``iter()``'s, a user class's: ``ir/generators.py``) is walked as a
        ``LazySequence`` whose items ``_live_loop`` fetches one at a time, as the loop reaches
        them (``lazy``; not for ``reversed``)."""
        it = self._held(self.expr(iterable, out), out)
        if not lazy:
            return it, self.call(out, ir.Const(P.as_sequence), [it])
        seq = self.tmp("seq")
        self._walk(it, out, seq)
        return it, ir.Var(seq)

    def _walk(self, it: ir.Var, out: list, seq: str) -> tuple[str, str]:
        """Make ``seq`` the sequence a loop over ``it`` walks (``_sequence``); the names of its
        lazy flag and of its deque's mutation count."""
        # a deque (passed in or made in the function): walked itself by index, its items read live,
        # and its mutation count checked before each step, as CPython's deque iterator does
        walks = ir.Var(self.tmp("walks"))
        out.append(ir.Opaque(f"{walks.name} = getattr(type({it}), 'REVERSED_WALKS_BACKWARDS', False) or "
                             + _IS_DEQUE_ARGUMENT.format(it=it), line=self.line, defines=(walks.name,)))
        state = self.tmp("state")
        out.append(ir.Opaque(f"{state} = {_DEQUE_STATE.format(it=it)} if {walks.name} else None", line=self.line,
                             defines=(state,)))
        flag = ir.Var(self.tmp("lazy"))  # (plain code: a rule call would walk a long list argument)
        # lazy: a generator, iter()'s iterator, or a user class's instance whose __iter__ is Python
        # code (ir.primitives.python_iterable, spelt out with builtins): its iterator may be
        # advanced by the body too
        user_iterator = (f"type(getattr(type({it}), '__iter__', None)).__name__ == 'function' "
                         f"and not isinstance({it}, (list, tuple, dict, set, frozenset))")
        out.append(ir.Opaque(f"{flag.name} = not {walks.name} and (getattr(type({it}), {G.LAZY_MARK!r}, False) or "
                             f"({user_iterator}))", line=self.line, defines=(flag.name,)))
        out.append(ir.If(walks, [ir.Copy(seq, it, line=self.line)], [
            ir.If(flag, [ir.Call(seq, ir.Const(G.LazySequence), [it], line=self.line)],
                  [ir.Call(seq, ir.Const(P.as_sequence), [it], line=self.line)], line=self.line)], line=self.line))
        self.__dict__.setdefault("lazy_flags", {})[seq] = flag
        self.__dict__.setdefault("deque_states", {})[seq] = (it, state)
        return flag.name, state

    def _held(self, value: ir.Atom, out: list) -> ir.Var:
        """``value`` in a temporary of its own: a loop keeps the object it iterates even when
        the body rebinds the name it came from (``for x in x``), and a global or constant gets
        a local the size checks can name."""
        if isinstance(value, ir.Var) and value.name not in self.taken:
            return value  # already a temporary
        held = self.tmp("it")
        out.append(ir.Copy(held, value, line=self.line))
        return ir.Var(held)

    def _index_loop(self, start, stop, step, element, make_body, out: list, loop: Any, line: int) -> None:
        """``for k in range(start, stop, step)``."""
        k = self.tmp("k")
        body: list = []
        if loop is None:
            element(ir.Var(k), body)
            make_body(body)
            out.append(ir.ForRange(k, start, stop, step, body, line=line))
            return
        if isinstance(step, ir.Const):
            within = f"{k} < {stop}" if step.value > 0 else f"{k} > {stop}"
        else:
            within = f"({k} < {stop} if {step} > 0 else {k} > {stop})"
        self._while_index(k, start, step, within, [], element, make_body, out, loop, line)

    def _live_loop(self, start, within: str, iterated: list, element, make_body, out: list, loop: Any,
                   line: int, step: int | str = 1, checks: list = ()) -> None:
        """A loop over sequences whose index stays ``within`` (a test of ``{k}``) their current
        lengths; ``iterated`` pairs each iterated object with the sequence walked, to raise
        Python's error when a dict or set walked over a snapshot changes size (and ``checks``,
        more plain statements run before each test)."""
        k = self.tmp("k")
        fetch = self._fetch(k, [seq for _, seq in iterated], out, line)
        # (a user class's iterator, walked as a list too, is not a snapshot: it may have no len)
        checks = [f"if {seq} is not {it} and type({it}).__module__ == 'builtins' and len({it}) != len({seq}): "
                  f"raise RuntimeError(('Set' if isinstance("
                  f"{it}, (set, frozenset)) else 'dictionary') + ' changed size during iteration')"
                  for it, seq in iterated] + [check.format(k=k) for check in checks] + self._mutation_checks(iterated)
        step = ir.Var(step) if isinstance(step, str) else ir.Const(step)
        self._while_index(k, start, step, within.format(k=k), checks, element, make_body, out, loop, line,
                          fetch)

    def _mutation_checks(self, iterated: list) -> list:
        """CPython's deque iterator's test before each step (at the end too): the deque a loop walks
        itself was not mutated since the loop began (``_sequence``)."""
        states = self.__dict__.get("deque_states", {})
        found = [states[seq.name] for _, seq in iterated if isinstance(seq, ir.Var) and seq.name in states]
        return [f"if {state} is not None and {_DEQUE_STATE.format(it=it)} != {state}: "
                "raise RuntimeError('deque mutated during iteration')" for it, state in found]

    def _fetch(self, k: str, seqs: list, out: list, line: int) -> list:
        """``[flag, call]``: before each test of a loop over lazy sequences, fetch item ``k``
        (``fetch_items``, differentiated) when ``flag``: one of them is lazy at run time."""
        flags = [self.__dict__.get("lazy_flags", {}).get(seq.name) for seq in seqs if isinstance(seq, ir.Var)]
        flags = [f for f in flags if f is not None]
        if not flags:
            return []
        flag = flags[0]
        if len(flags) > 1:
            flag = ir.Var(self.tmp("lazy"))
            out.append(ir.Opaque(f"{flag.name} = " + " or ".join(str(f) for f in flags), line=line, defines=(flag.name,)))
        return [flag, ir.Call(None, ir.Const(G.fetch_items), [ir.Var(k), *seqs], line=line)]

    def _while_index(self, k: str, start, step, within: str, checks: list, element, make_body, out: list,
                     loop: Any, line: int, fetch: list = ()) -> None:
        """``k = start; while within (and the loop was not left): body; k += step``, with
        ``checks`` (plain statements) run before each test, as Python's iterator runs them in
        each ``next``."""
        out.append(ir.Copy(k, start, line=line))
        test_body: list = []
        go = self.tmp("go")
        stopped = ""
        if loop is not None:
            stopped = f"{loop.stop} or _returned" if self.uses_return_flag else loop.stop
        if fetch:  # (not once the loop was left: Python's loop does not advance its iterator then)
            flag, call = fetch
            if stopped:
                flag = ir.Var(self.tmp("fetch"))
                test_body.append(ir.Opaque(f"{flag.name} = {fetch[0]} and not ({stopped})", line=line, defines=(flag.name,)))
            test_body.append(ir.If(flag, [call], [], line=line))
        for check in checks:
            test_body.append(ir.Opaque(f"if not ({stopped}):\n    {check}" if stopped else check, line=line))
        test = f"({within}) and not ({stopped})" if stopped else within
        test_body.append(ir.Opaque(f"{go} = {test}", line=line, defines=(go,)))
        body: list = []
        element(ir.Var(k), body)
        make_body(body)
        body.append(ir.Opaque(f"{k} += {step}", line=line))
        out.append(ir.While(test_body, ir.Var(go), body, line=line))
