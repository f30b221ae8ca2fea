"""The composition third order assembles its rules from (``third_order.py``): a few
second-order rule calls (``call_rrule2``) on numbered slots of 4-tuples (value, fdata, tangent,
fdata tangent), and the dual pullback that runs them backwards, gathering each slot's rdata and
rdata tangent. Also used by the nested and composed transforms of ``api/``."""
from __future__ import annotations

import operator
from typing import Any, Callable

from ..ir import primitives as P
from ..rules.util import sum_rdata, zero_fdata
from ..tangents import NoFData, NoRData, NoTangent
from .lifting import _zero_tangent_of

_ADD = (operator.add, NoFData, NoTangent, NoFData)
_MUL = (operator.mul, NoFData, NoTangent, NoFData)
_SETITEM = (operator.setitem, NoFData, NoTangent, NoFData)
_MKDICT = (P.mkdict, NoFData, NoTangent, NoFData)


def _constant(value: Any) -> tuple:
    """The 4-tuple of a constant of the computation."""
    return value, zero_fdata(value), _zero_tangent_of(value), zero_fdata(value)


def _function(f: Any) -> tuple:
    return f, NoFData, NoTangent, NoFData


class _Composition:
    """A few second-order calls composed by hand. Values are numbered slots (the inputs first);
    ``call`` runs ``call_rrule2`` on slots and returns the output's slot; ``pull`` runs the calls'
    dual pullbacks backwards, gathering the rdata (and rdata tangent) of every slot."""

    def __init__(self, inputs: list) -> None:
        self.values = list(inputs)
        self.n_inputs = len(inputs)
        self.steps: list = []

    def add(self, value: tuple) -> int:
        self.values.append(value)
        return len(self.values) - 1

    def call(self, f: tuple, slots: list, keywords: dict | None = None) -> int:
        from .second_order import call_rrule2

        keywords = keywords or {}
        out, pullback = call_rrule2(f, *(self.values[i] for i in slots),
                                    **{k: self.values[i] for k, i in keywords.items()})
        self.steps.append((pullback, list(slots) + list(keywords.values()), len(self.values)))
        return self.add(out)

    def pack(self, slots: list) -> int:
        """A tuple of the values in ``slots`` (a ``*args`` parameter): its rdata goes back to
        them element by element; array cotangents reach them through their own fdata."""
        values = [self.values[s] for s in slots]
        parts = [tuple(v[k] for v in values) for k in range(4)]
        for k in (1, 3):
            if all(p is NoFData for p in parts[k]):
                parts[k] = NoFData

        def unpack(dy: Any, dy_d: Any) -> tuple:
            split = [dy[k] if isinstance(dy, tuple) else NoRData for k in range(len(slots))]
            split_d = [dy_d[k] if isinstance(dy_d, tuple) else NoRData for k in range(len(slots))]
            return (NoRData, *split), (NoRData, *split_d)

        self.steps.append((unpack, list(slots), len(self.values)))
        return self.add(tuple(parts))

    def total(self, slots: list, like: int) -> int:
        """The sum of the values in ``slots`` (a zero like slot ``like``'s value if none)."""
        if not slots:
            return self.add(_constant(_zero_tangent_of(self.values[like][0])))
        result = slots[0]
        for s in slots[1:]:
            result = self.call(_ADD, [result, s])
        return result

    def output(self, value: int, tangent: int) -> tuple[tuple, Callable]:
        """The 4-tuple of the pair ``(value, tangent)`` of two slots, and the dual pullback of
        the whole composition (rdata for ``jvp_call`` itself, then each input)."""
        y, t = self.values[value], self.values[tangent]
        fdata = (y[1], t[1]) if y[1] is not NoFData or t[1] is not NoFData else NoFData
        fdata_t = (y[3], t[3]) if y[3] is not NoFData or t[3] is not NoFData else NoFData
        out = ((y[0], t[0]), fdata, (y[2], t[2]), fdata_t)

        def pullback(dy: Any, dy_d: Any) -> tuple:
            seeds = {value: [NoRData, NoRData], tangent: [NoRData, NoRData]}
            for slot, k in ((value, 0), (tangent, 1)):
                seeds[slot][0] = sum_rdata(seeds[slot][0], dy[k] if isinstance(dy, tuple) else NoRData)
                seeds[slot][1] = sum_rdata(seeds[slot][1], dy_d[k] if isinstance(dy_d, tuple) else NoRData)
            return self.pull(seeds)

        return out, pullback

    def pair_output(self, pair: int) -> tuple[tuple, Callable]:
        """Like ``output``, for a slot already holding the ``(value, tangent)`` pair."""
        return self.values[pair], lambda dy, dy_d: self.pull({pair: [dy, dy_d]})

    def pull(self, seeds: dict) -> tuple[tuple, tuple]:
        rd = [NoRData] * len(self.values)
        rdd = [NoRData] * len(self.values)
        for slot, (r, r_d) in seeds.items():
            rd[slot], rdd[slot] = r, r_d
        for step_pullback, slots, out_slot in reversed(self.steps):
            rs, rsd = step_pullback(rd[out_slot], rdd[out_slot])
            for j, s in enumerate(slots):
                rd[s] = sum_rdata(rd[s], rs[1 + j])
                rdd[s] = sum_rdata(rdd[s], rsd[1 + j])
        return (NoRData, *rd[:self.n_inputs]), (NoRData, *rdd[:self.n_inputs])
