"""The bench's tables: what each ``--mode`` prints, one ``TableSpec`` per table.

``grad`` (the default): the value and gradient, as before (yuebing's prepared gradient, one JVP,
the peers' reverse gradients, time to first gradient) and, appended, yuebing's plain
``value_and_grad`` call and its peak memory. ``jvp``: one JVP. ``hvp``: one Hessian-vector
product, then a second table with the dense Hessian of the small cases. ``all``: every table.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .cases import Case
from .peers import PEER_JVPS, PEERS, YUEBING_COLUMNS, yuebing_forward, yuebing_plain
from .peers_second_order import PEER_HESSIANS, PEER_HVPS, YUEBING_HESSIANS, YUEBING_HVPS
from .runner import MEMORY, REFUSED, TTFG, Cell, measure_column, peak_memory, time_to_first_gradient

# The dense Hessian (one HVP per input) is timed on cases with at most this many inputs.
HESSIAN_MAX_INPUTS = 300
PLAIN = "yuebing plain"


@dataclass(frozen=True)
class TableSpec:
    """One table: its columns' adapters and what its ratios mean."""

    name: str  # the key in the JSON file
    title: str  # printed above the table
    operation: str  # what a peer lacking the column lacks ("forward mode")
    yuebing: dict[str, Callable]  # column -> adapter, for yuebing's columns (first)
    peers: dict[str, Callable]  # peer column -> adapter
    explanation: str  # the footer's first paragraph
    extras: dict[str, Callable[[Case, float], Cell]] = field(default_factory=dict)  # measured first, shown last
    applies: Callable[[Case], bool] = lambda case: True

    def columns(self, peers: list[str]) -> list[str]:
        return [*self.yuebing, *peers, *self.extras]


def input_count(case: Case) -> int:
    return sum(int(np.size(a)) for a in case.args())


GRAD = TableSpec(
    "grad", "value and gradient", "reverse mode", YUEBING_COLUMNS, {name: adapter for name, (_, adapter) in PEERS.items()},
    "primal: median time of the NumPy function. Ratio columns: median, over interleaved samples, of "
    "time(value and gradient) / time(function); 'yb reverse' is prepare_gradient, 'yb forward' one JVP, "
    "'yb plain' yb.value_and_grad(f) made once and called. 'yb 1st grad': seconds for yuebing's first "
    "value_and_grad, transformation included. 'yb peak mem': peak memory traced (tracemalloc: Python "
    "objects and NumPy buffers, the returned gradient included, the arguments not) during one plain "
    "value_and_grad call / the same during one function call.",
    extras={
        TTFG: lambda case, budget: time_to_first_gradient(case),
        PLAIN: lambda case, budget: measure_column(case, PLAIN, yuebing_plain, REFUSED, budget),
        MEMORY: lambda case, budget: peak_memory(case),
    },
)
JVP = TableSpec(
    "jvp", "one JVP (forward mode)", "forward mode", {"yuebing jvp": yuebing_forward}, PEER_JVPS,
    "Ratio columns: median time(one JVP) / time(function), each JVP checked first against a central "
    "difference along its direction. yuebing: yb.jvp; autograd: make_jvp (forward mode); jax, jax-jit: "
    "jax.jvp eager and jitted; torch: torch.func.jvp.",
)
HVP = TableSpec(
    "hvp", "one Hessian-vector product", "Hessian-vector product", YUEBING_HVPS, PEER_HVPS,
    "Ratio columns: median time(one HVP) / time(function); each column's gradient is checked against finite "
    "differences of the function, then its HVP against central differences of that gradient. yuebing: yb.hvp "
    "and yb.prepare_hvp (value, gradient and HVP); autograd: hessian_tensor_product; jax, jax-jit: "
    "jax.jvp(jax.grad(f)) eager and jitted; torch: torch.func.jvp(torch.func.grad(f)).",
)
HESSIAN = TableSpec(
    "hessian", f"dense Hessian (cases with at most {HESSIAN_MAX_INPUTS} inputs)", "dense Hessian",
    YUEBING_HESSIANS, PEER_HESSIANS,
    "Ratio columns: median time(dense Hessian) / time(function); each Hessian times random directions is "
    "checked against central differences of the library's gradient (itself checked first). yuebing: "
    "yb.hessian and yb.prepare_hessian; autograd: hessian; jax, jax-jit: jax.hessian eager and jitted; "
    "torch: torch.func.hessian.",
    applies=lambda case: input_count(case) <= HESSIAN_MAX_INPUTS,
)

MODES: dict[str, list[TableSpec]] = {
    "grad": [GRAD],
    "jvp": [JVP],
    "hvp": [HVP, HESSIAN],
    "all": [GRAD, JVP, HVP, HESSIAN],
}
