"""Derived-rule corpus, extended: small realistic numerical programs (simulations, optimisation
loops, statistics and machine-learning losses, numerical methods)."""
import math

import numpy as np

from yuebing.testing.cases import randn, randpos, randu
from . import corpus_registry

CORPUS, case = corpus_registry()


# ---------------------------------------------------------------- simulations

def _lotka_volterra(z, theta):
    a, b, c, d = theta
    x, y = z[0], z[1]
    return np.array([a * x - b * x * y, d * x * y - c * y])


@case(randpos(2), randpos(4))
def explicit_euler_ode_preallocated(z0, theta):
    n, dt = 20, 0.05
    traj = np.empty((n + 1, 2))
    traj[0] = z0
    for k in range(n):
        traj[k + 1] = traj[k] + dt * _lotka_volterra(traj[k], theta)
    return np.sum(traj[:, 0]) * dt + traj[-1, 1]


class LeapfrogParticle:
    def __init__(self, q, p, mass):
        self.q = q
        self.p = p
        self.mass = mass

    def force(self):
        return -self.q ** 3 - 0.5 * self.q

    def kick(self, dt):
        self.p = self.p + 0.5 * dt * self.force()

    def drift(self, dt):
        self.q = self.q + dt * self.p / self.mass

    def step(self, dt):
        self.kick(dt)
        self.drift(dt)
        self.kick(dt)

    def hamiltonian(self):
        return 0.5 * np.sum(self.p ** 2) / self.mass + np.sum(0.25 * self.q ** 4 + 0.25 * self.q ** 2)


@case(randn(3), randn(3), 1.3)
def leapfrog_particle_class(q0, p0, mass):
    part = LeapfrogParticle(q0, p0, mass)
    qs = []
    for _ in range(15):
        part.step(0.05)
        qs.append(part.q[0])
    return part.hamiltonian() + sum(qs) * 0.1


@case(LeapfrogParticle(randn(2), randn(2), 0.9))
def leapfrog_argument_mutated(part):
    for _ in range(10):
        part.step(0.1)
    return part.hamiltonian()


@case(np.sin(np.linspace(0.0, np.pi, 12)) + 0.1 * randn(12), 0.3)
def heat_equation_stencil(u0, kappa):
    u = u0.copy()
    lap = np.zeros_like(u)
    for _ in range(20):
        lap[1:-1] = u[:-2] - 2.0 * u[1:-1] + u[2:]
        u[1:-1] += kappa * lap[1:-1]
        u[0] = 0.0
        u[-1] = u[-2]           # Neumann at the right end
    return np.sum(u ** 2)


@case(0.3, 0.8)
def random_walk_fixed_seed(drift, vol):
    rng = np.random.default_rng(1234)
    x = 0.0
    path = []
    for _ in range(30):
        eps = rng.standard_normal()
        x = x + drift * 0.1 + vol * math.sqrt(0.1) * eps
        path.append(x)
    steps = rng.normal(size=5)
    return np.mean(np.array(path) ** 2) + np.sum(steps * drift)


@case(randn(4), 0.5)
def random_walk_array_generator(x0, sigma):
    rng = np.random.default_rng(7)
    noise = rng.standard_normal((10, 4))
    x = x0.copy()
    for t in range(10):
        x = 0.9 * x + sigma * noise[t]
    u = rng.uniform(0.0, 1.0, size=4)
    return np.sum(x * u)


# ---------------------------------------------------------------- optimisation loops

@case(randn(3, 2), randn(3), randn(2))
def gradient_descent_by_hand(a, b, w0):
    # least squares, 10 steps of hand-written gradient descent; differentiate the final loss
    w = w0.copy()
    lr = 0.05
    for _ in range(10):
        r = a @ w - b
        g = 2.0 * a.T @ r
        w -= lr * g
    return np.sum((a @ w - b) ** 2)


@case(1.2, -0.4)
def momentum_descent_scalar(x0, y0):
    # Rosenbrock-like valley, heavy-ball momentum, in plain floats
    x, y = x0, y0
    vx = vy = 0.0
    for _ in range(15):
        gx = 2.0 * (x - 1.0) - 4.0 * x * (y - x * x)
        gy = 2.0 * (y - x * x)
        vx = 0.8 * vx - 0.02 * gx
        vy = 0.8 * vy - 0.02 * gy
        x += vx
        y += vy
    return (1.0 - x) ** 2 + (y - x * x) ** 2


# ---------------------------------------------------------------- statistics and ML losses

def _softmax(z):
    e = np.exp(z - np.max(z, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


@case(randn(4, 3), np.array([0, 2, 1, 2]))
def softmax_cross_entropy(logits, labels):
    p = _softmax(logits)
    n = logits.shape[0]
    return -np.mean(np.log(p[np.arange(n), labels]))


@case(randn(3), 0.2, randn(6, 3), np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0]))
def logistic_regression_loss(w, b, x, y):
    z = x @ w + b
    # numerically stable log(1 + exp(-z)) formulation
    loss = np.mean(np.logaddexp(0.0, z) - y * z)
    return loss + 0.01 * np.dot(w, w)


@case({"Wx": 0.5 * randn(4, 2), "Wh": 0.5 * randn(4, 4), "b": randn(4), "v": randn(4)}, randn(6, 2))
def rnn_unrolled(params, xs):
    h = np.zeros(4)
    outs = []
    for t in range(xs.shape[0]):
        h = np.tanh(params["Wx"] @ xs[t] + params["Wh"] @ h + params["b"])
        outs.append(np.dot(params["v"], h))
    ys = np.array(outs)
    return np.sum(ys ** 2) / len(outs)


@case(randn(8), randu(3, low=-1.0, high=1.0), 0.4)
def kernel_density_estimate(data, query, bandwidth):
    total = 0.0
    for q in query:
        z = (q - data) / bandwidth
        dens = np.mean(np.exp(-0.5 * z * z)) / (bandwidth * math.sqrt(2.0 * math.pi))
        total += math.log(dens)
    return total


@case(randn(5, 2))
def pairwise_energy_double_loop(pos):
    # Lennard-Jones-like soft energy over all pairs
    n = pos.shape[0]
    e = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            d = pos[i] - pos[j]
            r2 = np.dot(d, d) + 0.5
            e += 1.0 / r2 ** 3 - 1.0 / r2
    return e


@case(randn(5, 2))
def pairwise_distance_vectorised(pos):
    diff = pos[:, None, :] - pos[None, :, :]
    r = np.sqrt(np.sum(diff ** 2, axis=-1) + 0.1)
    iu = np.triu_indices(pos.shape[0], k=1)
    return np.sum(1.0 / r[iu])


@case(randn(10))
def standardise_and_moments(x):
    m = x.mean()
    s = x.std()
    z = (x - m) / s
    skew = np.mean(z ** 3)
    kurt = np.mean(z ** 4) - 3.0
    return skew * 0.3 + kurt * 0.1 + np.var(x)


# ---------------------------------------------------------------- numerical methods

@case(2.7)
def newton_sqrt_while(a):
    x = a if a > 1.0 else 1.0
    while abs(x * x - a) > 1e-12 * a:
        x = 0.5 * (x + a / x)
    return x


@case(randn(5), 0.7)
def horner_polynomial(coeffs, x):
    acc = 0.0
    for c in coeffs[::-1]:
        acc = acc * x + c
    # and the derivative by a simultaneous Horner pass
    p, dp = coeffs[-1], 0.0
    for c in coeffs[-2::-1]:
        dp = dp * x + p
        p = p * x + c
    return acc + dp


@case(np.array([0.0, 0.4, 1.1, 1.7, 2.5, 3.0]), randn(6), np.array([0.13, 0.9, 1.5, 2.2, 2.8]))
def piecewise_linear_interp_searchsorted(xp, fp, xq):
    idx = np.searchsorted(xp, xq) - 1
    idx = np.clip(idx, 0, len(xp) - 2)
    x0, x1 = xp[idx], xp[idx + 1]
    t = (xq - x0) / (x1 - x0)
    yq = (1.0 - t) * fp[idx] + t * fp[idx + 1]
    return np.sum(yq ** 2)


@case(np.array([0.0, 0.5, 1.2, 2.0]), randn(4), 0.9)
def interp_loop_version(xp, fp, x):
    k = int(np.searchsorted(xp, x)) - 1
    for i in range(len(xp) - 1):
        if xp[i] <= x < xp[i + 1]:
            k = i
            break
    t = (x - xp[k]) / (xp[k + 1] - xp[k])
    return fp[k] + t * (fp[k + 1] - fp[k])


@case(np.array([0.0, 0.6, 1.1, 1.9, 2.4]), randn(5), np.array([0.3, 1.0, 2.0]))
def np_interp_builtin(xp, fp, xq):
    return np.sum(np.interp(xq, xp, fp) * xq)


@case(randpos(1)[0] + 0.5)
def bisection_then_newton(c):
    # root of x^3 + x - c: bisection for 10 steps (data-dependent branches), then 3 Newton steps
    lo, hi = 0.0, 3.0
    for _ in range(10):
        mid = 0.5 * (lo + hi)
        if mid ** 3 + mid - c > 0.0:
            hi = mid
        else:
            lo = mid
    x = 0.5 * (lo + hi)
    for _ in range(6):
        x = x - (x ** 3 + x - c) / (3.0 * x * x + 1.0)
    return x


@case(randn(4))
def trapezoid_and_simpson(w):
    def f(t):
        return math.exp(-t * t) * (w[0] + w[1] * t + w[2] * t * t) + w[3]
    n = 10
    h = 1.0 / n
    trap = 0.5 * (f(0.0) + f(1.0)) + sum(f(i * h) for i in range(1, n))
    simp = f(0.0) + f(1.0)
    for i in range(1, n):
        simp += (4.0 if i % 2 else 2.0) * f(i * h)
    return trap * h + simp * h / 3.0


@case(randn(3, 3) + 3.0 * np.eye(3), randn(3))
def jacobi_iteration(a, b):
    x = np.zeros(3)
    d = np.diag(a)
    r = a - np.diag(d)
    for _ in range(12):
        x = (b - r @ x) / d
    return np.sum(x ** 2)


@case(randn(3, 3))
def power_iteration(a):
    m = a @ a.T + np.eye(3)
    v = np.ones(3) / math.sqrt(3.0)
    for _ in range(25):
        w = m @ v
        v = w / np.linalg.norm(w)
    return v @ m @ v


@case(randn(4, 3))
def gram_schmidt_loop(a):
    q = np.zeros_like(a)
    for j in range(a.shape[1]):
        v = a[:, j].copy()
        for i in range(j):
            v -= np.dot(q[:, i], a[:, j]) * q[:, i]
        q[:, j] = v / np.linalg.norm(v)
    return np.sum(q * a)


@case(randn(6), 0.3)
def exponential_smoothing(series, alpha_logit):
    alpha = 1.0 / (1.0 + math.exp(-alpha_logit))
    level = series[0]
    sse = 0.0
    for t in range(1, len(series)):
        err = series[t] - level
        sse += err * err
        level = level + alpha * err
    return sse


@case(randn(3, 4))
def vectorized_elementwise_function(x):
    g = np.vectorize(lambda v: np.sin(np.cos(np.exp(v))) * v)
    return np.sum(g(x) ** 2)
