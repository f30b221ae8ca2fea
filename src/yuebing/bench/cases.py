"""The 13 benchmark functions (Mooncake.jl's suite), written the way a NumPy user writes them.

Each function uses only the module-level names ``np``, ``math`` and ``solve_triangular``, and the
module constant ``TURING_DATA``; ``peers.py`` runs the very same code in autograd, JAX and PyTorch
by swapping those names for the framework's own (``autograd.numpy``, ``jax.numpy``, ``torch``).

``CASES`` lists them with their inputs; every case is differentiated with respect to all of its
arguments.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

try:
    from scipy.linalg import solve_triangular
except ImportError:  # scipy is optional: gp_lml reports the missing import
    def solve_triangular(a, b, lower=False):
        raise ImportError("gp_lml needs scipy (pip install scipy)")

from .large_block import large_single_block

# ----------------------------------------------------------------------------------------------
# The functions
# ----------------------------------------------------------------------------------------------


def sum_1000(x):
    return np.sum(x)


def _sum_1000(x):
    y = 0.0
    for i in range(len(x)):
        y += x[i]
    return y


def sum_sin_1000(x):
    return np.sum(np.sin(x))


def _sum_sin_1000(x):
    y = 0.0
    for i in range(len(x)):
        y += np.sin(x[i])
    return y


def kron_sum(x, y):
    return np.sum(np.kron(x, y))


def kron_view_sum(x, y):
    return kron_sum(x[:20, :20], np.triu(y))


def naive_map_sin_cos_exp(x):
    y = np.empty_like(x)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            y[i, j] = np.sin(np.cos(np.exp(x[i, j])))
    return np.sum(y)


def map_sin_cos_exp(x):
    return np.sum(np.vectorize(lambda v: np.sin(np.cos(np.exp(v))))(x))


def broadcast_sin_cos_exp(x):
    return np.sum(np.sin(np.cos(np.exp(x))))


def simple_mlp(W2, W1, Y, X):
    H = W1 @ X
    H = H * (0 <= H)
    return np.sum((Y - W2 @ H) ** 2)


def gp_lml(x, y, s):
    """Log marginal likelihood of a zero-mean GP, kernel exp(-(a-b)^2/2), noise variance s."""
    n = len(x)
    K = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2) + s * np.eye(n)
    L = np.linalg.cholesky(K)
    alpha = solve_triangular(L, y, lower=True)
    return -0.5 * np.sum(alpha ** 2) - np.sum(np.log(np.diag(L))) - 0.5 * n * math.log(2 * math.pi)


# turing_broadcast_benchmark: mu, sigma ~ Normal(1, 2) truncated to (0.1, 10);
# x_i ~ LogNormal(mu, sigma) for fixed observations; parameters from theta via a logistic map.
LO, HI = 0.1, 10.0


def _normal_cdf(z):
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


TRUNCATED_LOG_NORMALISER = math.log(2.0 * math.sqrt(2.0 * math.pi)) + math.log(
    _normal_cdf((HI - 1.0) / 2.0) - _normal_cdf((LO - 1.0) / 2.0)
)
TURING_DATA = np.random.default_rng(1234).lognormal(1.5, 0.5, size=100_000)


def to_interval(t):
    """(lo + (hi - lo) * logistic(t), log-Jacobian of that map)."""
    p = 1.0 / (1.0 + np.exp(-t))
    return LO + (HI - LO) * p, math.log(HI - LO) + np.log(p) + np.log(1.0 - p)


def truncated_normal_logpdf(v):
    return -0.5 * ((v - 1.0) / 2.0) ** 2 - TRUNCATED_LOG_NORMALISER


def lognormal_logpdf(x, mu, sigma):
    z = (np.log(x) - mu) / sigma
    return -0.5 * z ** 2 - np.log(x) - np.log(sigma) - 0.5 * math.log(2.0 * math.pi)


def turing_broadcast_benchmark(theta):
    mu, log_jac_mu = to_interval(theta[0])
    sigma, log_jac_sigma = to_interval(theta[1])
    log_prior = truncated_normal_logpdf(mu) + truncated_normal_logpdf(sigma)
    return log_prior + log_jac_mu + log_jac_sigma + np.sum(lognormal_logpdf(TURING_DATA, mu, sigma))


# ----------------------------------------------------------------------------------------------
# The cases
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """A benchmark: its function and a builder of its (deterministic) NumPy arguments."""

    name: str
    function: Callable
    make_args: Callable[[np.random.Generator], tuple]

    def args(self) -> tuple:
        return self.make_args(np.random.default_rng(0))


def _gp_args(rng: np.random.Generator) -> tuple:
    x = 0.2 * np.arange(128.0)
    s = 1.0
    K = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2) + s * np.eye(len(x))
    y = np.linalg.cholesky(K) @ rng.standard_normal(len(x))
    return x, y, s


def _normal(*shapes: tuple) -> Callable[[np.random.Generator], tuple]:
    return lambda rng: tuple(rng.standard_normal(shape) for shape in shapes)


CASES: list[Case] = [
    Case("sum_1000", sum_1000, _normal((1000,))),
    Case("_sum_1000", _sum_1000, _normal((1000,))),
    Case("sum_sin_1000", sum_sin_1000, _normal((1000,))),
    Case("_sum_sin_1000", _sum_sin_1000, _normal((1000,))),
    Case("kron_sum", kron_sum, _normal((20, 20), (40, 40))),
    Case("kron_view_sum", kron_view_sum, _normal((40, 30), (40, 40))),
    Case("naive_map_sin_cos_exp", naive_map_sin_cos_exp, _normal((10, 10))),
    Case("map_sin_cos_exp", map_sin_cos_exp, _normal((10, 10))),
    Case("broadcast_sin_cos_exp", broadcast_sin_cos_exp, _normal((10, 10))),
    Case("simple_mlp", simple_mlp, _normal((128, 256), (256, 128), (128, 70), (128, 70))),
    Case("gp_lml", gp_lml, _gp_args),
    Case("turing_broadcast_benchmark", turing_broadcast_benchmark, _normal((2,))),
    Case("large_single_block", large_single_block, lambda rng: (np.array([0.9, 0.99]),)),
]

BY_NAME: dict[str, Case] = {case.name: case for case in CASES}


def large_block_source(lines: int = 400) -> str:
    """The source of ``large_block.py`` (kept committed so ``inspect`` can read it)."""
    body = "".join("    y = y * a\n" for _ in range(lines))
    return (
        '"""``large_single_block``: one basic block of 400 multiplications (generated by\n'
        '``yuebing.bench.cases.large_block_source()``; do not edit by hand)."""\n\n\n'
        "def large_single_block(x):\n"
        "    a = x[1]\n"
        "    y = x[0]\n"
        f"{body}"
        "    return y\n"
    )
