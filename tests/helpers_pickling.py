"""Functions for the pickling and scale-out tests (tests/test_pickling.py, tests/test_scale_out.py),
in an importable module so that plain ``pickle`` sends them by name to worker processes (spawned
workers import this module; functions defined in a test module would be found there too, but a
helper module keeps what workers import small)."""
import numpy as np


def loss(x):
    """A scalar of one float array: smooth, every coordinate coupled to its neighbour."""
    return np.sum(np.sin(x) * x) + 0.5 * np.sum(x[:-1] * x[1:]) + np.log1p(np.sum(x * x))


def loss_of_two(x, w):
    """A scalar of two float arrays of one shape."""
    y = np.tanh(x * w)
    return np.sum(y * y + np.exp(-x) * w) + 0.5 * np.sum(x * x)


def loss_with_aux(x):
    """``(value, aux)`` for ``has_aux``."""
    value = np.sum(x ** 3)
    return value, {"norm": float(np.sqrt(np.sum(x * x)))}


def vector(x):
    """A vector output (a Jacobian of shape ``(n + 1, n)``)."""
    y = np.sin(x) * np.cumsum(x)
    return np.concatenate([y, [np.sum(x * x)]])


def scaled(x, scale=2.0):
    """A keyword argument, passed to the function and not differentiated."""
    return np.sum(np.cos(x) * scale)


def example_loss(params, x, y):
    """A per-example loss of a small linear model in a dict: the gradient is a dict."""
    prediction = np.tanh(params["W"] @ x + params["b"])
    return np.sum((prediction - y) ** 2)


class Model:
    """A model whose loss is a method: ``yb.grad(model.loss)`` pickles the bound method by name
    with the model's state."""

    def __init__(self, scale):
        self.scale = scale

    def loss(self, x):
        return self.scale * np.sum(x ** 4) + np.sum(x)


def central_gradient(f, x, h=1e-6):
    """The gradient of scalar ``f`` at float array ``x`` by central differences."""
    g = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = h
        g.flat[k] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def central_jacobian(f, x, h=1e-6):
    """The Jacobian of vector ``f`` at float array ``x`` by central differences."""
    columns = []
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = h
        columns.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h))
    return np.stack(columns, axis=-1)


def load_and_call(data, *args):
    """In a worker: load a pickled yuebing function (made with cloudpickle: plain ``pickle``
    loads it) and call it."""
    import pickle

    return pickle.loads(data)(*args)
