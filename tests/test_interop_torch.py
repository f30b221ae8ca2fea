"""``yuebing.interop.torch.wrap``: a NumPy function differentiated by yuebing as a PyTorch op,
checked against PyTorch's own derivatives of the same function written in torch (first and
second order, ``torch.func`` transforms, a small model trained with an optimizer) and by
``gradcheck``/``gradgradcheck`` in float64."""
from __future__ import annotations

import importlib
import re
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import func as F  # noqa: E402

from yuebing.interop.torch import wrap  # noqa: E402

D = torch.float64


def model_np(x, w, n, scale=1.0):
    """Two tensors, an int and a keyword passed through."""
    return np.sum(np.sin(x) * w) ** 2 * n * scale + np.sum(x ** 3 * w) - np.prod(np.cos(w))


def model_torch(x, w, n, scale=1.0):
    return torch.sum(torch.sin(x) * w) ** 2 * n * scale + torch.sum(x ** 3 * w) - torch.prod(torch.cos(w))


def pair_np(x):
    """A tuple of outputs: an array and a float."""
    return np.tanh(x) * x[::-1], float(np.sum(np.exp(-x ** 2)))


def pair_torch(x):
    return torch.tanh(x) * x.flip(0), torch.sum(torch.exp(-x ** 2))


def scalar_np(x):
    return np.sum(np.sin(x) * x ** 2) + np.log(np.sum(x ** 2))


def scalar_torch(x):
    return torch.sum(torch.sin(x) * x ** 2) + torch.log(torch.sum(x ** 2))


op, pair, scalar = wrap(model_np), wrap(pair_np), wrap(scalar_np)


def leaf(values):
    return torch.tensor(values, dtype=D, requires_grad=True)


def close(a, b):
    for p, q in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
        torch.testing.assert_close(p, q, rtol=1e-10, atol=1e-12)


def test_value_first_and_second_order_match_torch():
    x, w = leaf([0.1, -0.7, 0.3]), leaf([1.0, 2.0, -0.5])
    y, yt = op(x, w, 3, scale=2.0), model_torch(x, w, 3, scale=2.0)
    close(y, yt)
    g = torch.autograd.grad(y, (x, w), create_graph=True)
    gt = torch.autograd.grad(yt, (x, w), create_graph=True)
    close(g, gt)
    v = torch.tensor([1.0, -1.0, 0.5], dtype=D)
    close(torch.autograd.grad(g[0] @ v + g[1].sum(), (x, w)), torch.autograd.grad(gt[0] @ v + gt[1].sum(), (x, w)))


def test_backward_and_tuple_outputs_match_torch():
    x = leaf([0.4, -1.2, 0.9, 2.0])
    a, b = pair(x)
    close((a, b), pair_torch(x))
    (a.sum() * b).backward()
    x2 = x.detach().clone().requires_grad_()
    at, bt = pair_torch(x2)
    (at.sum() * bt).backward()
    close(x.grad, x2.grad)


def test_gradcheck_and_gradgradcheck():
    x, w = leaf([0.1, -0.7, 0.3]), leaf([1.0, 2.0, -0.5])
    assert torch.autograd.gradcheck(lambda x, w: op(x, w, 2), (x, w))
    assert torch.autograd.gradgradcheck(lambda x, w: op(x, w, 2), (x, w))
    assert torch.autograd.gradcheck(pair, (leaf([0.4, -1.2, 0.9]),))
    assert torch.autograd.gradgradcheck(pair, (leaf([0.4, -1.2, 0.9]),))


def test_torch_func_transforms_match_torch():
    x = torch.tensor([0.3, -0.8, 1.1], dtype=D)
    v = torch.tensor([1.0, 0.5, -2.0], dtype=D)
    close(F.grad(scalar)(x), F.grad(scalar_torch)(x))
    close(F.grad(lambda x: F.grad(scalar)(x) @ v)(x), F.grad(lambda x: F.grad(scalar_torch)(x) @ v)(x))
    close(F.hessian(scalar)(x), F.hessian(scalar_torch)(x))            # forward over reverse
    close(F.jacrev(F.grad(scalar))(x), F.hessian(scalar_torch)(x))     # reverse over reverse
    close(F.jacfwd(pair)(x), F.jacfwd(pair_torch)(x))
    close(F.jvp(scalar, (x,), (v,)), F.jvp(scalar_torch, (x,), (v,)))
    batch = torch.stack([x, 2 * x, -x])
    close(F.vmap(F.grad(scalar))(batch), F.vmap(F.grad(scalar_torch))(batch))   # per-example gradients
    close(F.vmap(pair)(batch), F.vmap(pair_torch)(batch))


def test_trains_inside_a_torch_model_like_its_torch_twin():
    def activation(h, power):
        return np.log1p(np.tanh(h) ** power)

    def activation_torch(h, power):
        return torch.log1p(torch.tanh(h) ** power)

    wrapped = wrap(activation)
    torch.manual_seed(0)
    twins = [torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Linear(5, 1)) for _ in range(2)]
    twins[1].load_state_dict(twins[0].state_dict())
    data, target = torch.randn(16, 3), torch.randn(16, 1)
    losses = []
    for net, act in zip(twins, (wrapped, activation_torch)):
        optimizer = torch.optim.Adam(net.parameters(), lr=0.05)
        history = []
        for _ in range(5):
            optimizer.zero_grad()
            out = net[1](act(net[0](data), 2))
            loss = torch.mean((out - target) ** 2)
            loss.backward()
            optimizer.step()
            history.append(loss.item())
        losses.append(history)
    assert losses[0][-1] < losses[0][0]
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-5)   # float32 all the way
    for p, q in zip(twins[0].parameters(), twins[1].parameters()):
        torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-5)
        assert p.dtype == torch.float32


def test_float32_in_float32_out_and_integer_tensors_held_fixed():
    def scaled(x, k):
        return np.sum(x * k) ** 2

    x = torch.tensor([0.5, 1.5], requires_grad=True)
    k = torch.tensor([2, 3])
    y = wrap(scaled)(x, k)
    assert y.dtype == torch.float32
    (gx,) = torch.autograd.grad(y, x)
    xt = x.detach().clone().requires_grad_()
    torch.autograd.grad(torch.sum(xt * k) ** 2, xt)
    torch.testing.assert_close(gx, torch.autograd.grad(torch.sum(xt * k) ** 2, xt)[0])


def test_third_order_is_refused():
    x = leaf([0.3, -0.8, 1.1])
    (g,) = torch.autograd.grad(scalar(x) + (x ** 4).sum(), x, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="third-order derivatives"):
        torch.autograd.grad(h.sum(), x)


def test_bad_inputs_and_outputs_are_refused():
    x = leaf([0.3, -0.8])
    with pytest.raises(TypeError, match="holding tensors"):
        scalar([x])
    with pytest.raises(TypeError, match="keyword argument 'w'"):
        op(x, 1, w=x)
    with pytest.raises(TypeError, match="complex tensor"):
        scalar(torch.ones(2, dtype=torch.complex128))
    with pytest.raises(TypeError, match="f returned a list"):
        wrap(lambda x: [x, x])(x)
    with pytest.raises(TypeError, match="dtype bool"):
        wrap(lambda x: x > 0)(x)
    with pytest.raises(TypeError, match="expected a function"):
        wrap(3)


def test_import_says_how_to_install_torch(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.delitem(sys.modules, "yuebing.interop.torch")
    with pytest.raises(ImportError, match=re.escape("pip install -e '.[interop]'")):
        importlib.import_module("yuebing.interop.torch")


def test_importing_yuebing_imports_neither_framework():
    code = "import sys, yuebing, yuebing.interop; assert not {'torch', 'jax'} & set(sys.modules), sys.modules.keys()"
    subprocess.run([sys.executable, "-c", code], check=True)
