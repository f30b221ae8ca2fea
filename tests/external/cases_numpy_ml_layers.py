"""numpy-ml's layers and modules (``numpy_ml.neural_nets.layers``/``modules``/``wrappers``) and the
convolution helpers under them (``numpy_ml.neural_nets.utils``), differentiated through their
``forward`` passes.

A layer is made and initialised once per case, outside the differentiated call, NumPy's global
generator seeded (the initialisers draw from it), as a user's model is; the case is then a
function of the layer's input (``t`` reshaped) or of its parameters (``t`` split into the layer's
``parameters`` dictionary, written before the call). Stateful layers (recurrent cells, anything
keeping its inputs for ``backward``) have ``flush_gradients`` called first, as a training loop
does between batches, so a call does not see the previous one's state. The layers' own
``backward`` is a third oracle (tests/test_external_numpy_ml.py). And one model: a scaled-down
``BernoulliVAE``'s loss in its input.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .cases import CaseSpec, Problem, interior_point
from .cases_filterpy import total
from .cases_numpy_ml import PREFIXES, fixed, spec_around, spec_made


def arrays_of(inputs: tuple, seed: int) -> list:
    """Fixed inputs: a shape gives an array, a list of shapes a list of arrays (``Add``, ``Multiply``),
    an array is taken as it is."""
    made = []
    for index, shape in enumerate(inputs):
        if isinstance(shape, np.ndarray):   # given as it is (an embedding's word ids)
            made.append(shape)
        elif isinstance(shape, list):
            made.append([fixed(part, seed + 10 * index + k) for k, part in enumerate(shape)])
        else:
            made.append(fixed(shape, seed + 10 * index))
    return made


def flat_shapes(inputs: tuple) -> list:
    return [part for shape in inputs for part in (shape if isinstance(shape, list) else [shape])]


def initialised(make: Callable, inputs: tuple):
    """A layer made by ``make`` and run once on fixed inputs (which creates its parameters)."""
    np.random.seed(0)
    layer = make()
    layer.forward(*arrays_of(inputs, 10))
    return layer


def reset_recurrent_state(layer) -> None:
    """A recurrent cell carries its hidden state from one ``forward`` to the next; a training loop
    calls ``flush_gradients`` between sequences. (Modules' own ``flush_gradients`` sets their
    components' derived variables to None, after which ``forward`` fails: their cells are flushed.)"""
    for part in (layer, getattr(layer, "cell", None), getattr(layer, "cell_fwd", None),
                 getattr(layer, "cell_bwd", None)):
        if part is not None and "n_timesteps" in getattr(part, "derived_variables", {}):
            part.flush_gradients()


def _unflattened(t, inputs: tuple) -> list:
    """``t`` split and reshaped into the structure of ``inputs``."""
    shapes = flat_shapes(inputs)
    pieces = np.split(t, np.cumsum([int(np.prod(shape)) for shape in shapes])[:-1])
    arrays = [piece.reshape(shape) for piece, shape in zip(pieces, shapes)]
    made, start = [], 0
    for shape in inputs:
        count = len(shape) if isinstance(shape, list) else 1
        made.append(arrays[start:start + count] if isinstance(shape, list) else arrays[start])
        start += count
    return made


def forward_in_input(layer, inputs: tuple) -> Callable:
    """The layer's weighted output as a function of its inputs."""
    def layer_forward_in_input(t):
        reset_recurrent_state(layer)
        return total(layer.forward(*_unflattened(t, inputs)))
    return layer_forward_in_input


def forward_in_parameters(layer, names: tuple, inputs: tuple) -> Callable:
    """The layer's weighted output on fixed inputs as a function of the named parameters."""
    shapes = [np.shape(layer.parameters[name]) for name in names]
    sizes = [int(np.prod(shape)) for shape in shapes]
    arrays = arrays_of(inputs, 20)

    def layer_forward_in_parameters(t):
        reset_recurrent_state(layer)
        pieces = np.split(t, np.cumsum(sizes)[:-1])
        for name, piece, shape in zip(names, pieces, shapes):
            layer.parameters[name] = piece.reshape(shape)
        return total(layer.forward(*arrays))
    return layer_forward_in_parameters


def _layer_spec(name: str, make: Callable, inputs: tuple, parameters: tuple = ()) -> CaseSpec:
    """In the input when ``parameters`` is empty, else in those parameters (the point near their
    initial values)."""
    def build(attempt: int) -> Problem:
        layer = initialised(make, inputs)
        if parameters:
            function = forward_in_parameters(layer, parameters, inputs)
            centre = np.concatenate([np.ravel(layer.parameters[p]) for p in parameters])
        else:
            function = forward_in_input(layer, inputs)
            centre = np.concatenate([fixed(shape, 30 + i).ravel() for i, shape in enumerate(flat_shapes(inputs))])
        width = 0.05 * np.maximum(np.abs(centre), 0.3)
        point = interior_point(centre - width, centre + width, spec.seed(attempt))
        return Problem(function, point, PREFIXES, 0)

    spec = CaseSpec("numpy_ml", name, build, all_modes=True)
    return spec


def _layers():
    from numpy_ml.neural_nets import layers
    return layers


def _modules():
    from numpy_ml.neural_nets import modules
    return modules


def _elu():
    from numpy_ml.neural_nets.activations import ELU
    return ELU(alpha=0.7)


def _dropout_fully_connected():
    from numpy_ml.neural_nets.wrappers import Dropout
    return Dropout(_layers().FullyConnected(n_out=3, act_fn="Tanh"), p=0.3)


WORD_IDS = np.array([[0, 3, 1], [4, 3, 2]])
# name -> (maker, input shapes, parameters differentiated or ())
LAYERS = {
    "FullyConnected_tanh": (lambda: _layers().FullyConnected(n_out=3, act_fn="Tanh"), ((2, 4),), ()),
    "FullyConnected_tanh_in_parameters": (lambda: _layers().FullyConnected(n_out=3, act_fn="Tanh"), ((2, 4),),
                                          ("W", "b")),
    "FullyConnected_sigmoid_in_parameters": (lambda: _layers().FullyConnected(n_out=2, act_fn="Sigmoid"),
                                             ((3, 4),), ("W", "b")),
    "FullyConnected_elu": (lambda: _layers().FullyConnected(n_out=3, act_fn=_elu()), ((2, 4),), ()),
    "FullyConnected_affine": (lambda: _layers().FullyConnected(n_out=2, act_fn="Affine(slope=2, intercept=1)"),
                              ((2, 4),), ()),
    "Conv1D": (lambda: _layers().Conv1D(out_ch=2, kernel_width=3, pad="same", act_fn="Tanh"), ((1, 5, 2),), ()),
    "Conv1D_in_parameters": (lambda: _layers().Conv1D(out_ch=2, kernel_width=3, pad=1, stride=2),
                             ((1, 5, 2),), ("W", "b")),
    "Conv1D_dilated": (lambda: _layers().Conv1D(out_ch=2, kernel_width=2, pad="causal", dilation=1),
                       ((1, 5, 2),), ()),
    "Conv2D": (lambda: _layers().Conv2D(out_ch=2, kernel_shape=(2, 2), pad="same", act_fn="Tanh"),
               ((1, 3, 3, 2),), ()),
    "Conv2D_in_parameters": (lambda: _layers().Conv2D(out_ch=2, kernel_shape=(2, 2), pad=1, stride=2),
                             ((1, 3, 3, 2),), ("W", "b")),
    "Conv2D_dilated": (lambda: _layers().Conv2D(out_ch=1, kernel_shape=(2, 2), pad=1, dilation=1),
                       ((1, 4, 4, 1),), ()),
    "Deconv2D": (lambda: _layers().Deconv2D(out_ch=2, kernel_shape=(2, 2), stride=2, act_fn="Tanh"),
                 ((1, 2, 2, 2),), ()),
    "Deconv2D_in_parameters": (lambda: _layers().Deconv2D(out_ch=1, kernel_shape=(2, 2), pad=1),
                               ((1, 2, 2, 2),), ("W",)),
    "Pool2D_max": (lambda: _layers().Pool2D(kernel_shape=(2, 2), stride=2, mode="max"), ((1, 4, 4, 1),), ()),
    "Pool2D_average": (lambda: _layers().Pool2D(kernel_shape=(2, 2), stride=1, mode="average"),
                       ((1, 3, 3, 2),), ()),
    "BatchNorm1D": (lambda: _layers().BatchNorm1D(), ((4, 3),), ()),
    "BatchNorm1D_in_parameters": (lambda: _layers().BatchNorm1D(), ((4, 3),), ("scaler", "intercept")),
    "BatchNorm2D": (lambda: _layers().BatchNorm2D(), ((2, 2, 2, 2),), ()),
    "LayerNorm1D": (lambda: _layers().LayerNorm1D(), ((3, 4),), ()),
    "LayerNorm1D_in_parameters": (lambda: _layers().LayerNorm1D(), ((3, 4),), ("scaler", "intercept")),
    "LayerNorm2D": (lambda: _layers().LayerNorm2D(), ((1, 2, 2, 3),), ()),
    "Softmax": (lambda: _layers().Softmax(), ((3, 3),), ()),
    "Embedding_in_parameters": (lambda: _layers().Embedding(n_out=2, vocab_size=5), (WORD_IDS,), ("W",)),
    "Embedding_mean_pool_in_parameters": (lambda: _layers().Embedding(n_out=2, vocab_size=5, pool="mean"),
                                          (WORD_IDS,), ("W",)),
    "Add_tanh": (lambda: _layers().Add(act_fn="Tanh"), ([(2, 3), (2, 3)],), ()),
    "Multiply_sigmoid": (lambda: _layers().Multiply(act_fn="Sigmoid"), ([(2, 3), (2, 3)],), ()),
    "Flatten": (lambda: _layers().Flatten(keep_dim="first"), ((2, 2, 3),), ()),
    "DotProductAttention": (lambda: _layers().DotProductAttention(scale=True), ((1, 2, 2), (1, 3, 2), (1, 3, 2)), ()),
    "RNNCell": (lambda: _layers().RNNCell(n_out=2), ((2, 3),), ()),
    "RNNCell_in_parameters": (lambda: _layers().RNNCell(n_out=2), ((2, 2),), ("Waa", "Wax", "ba", "bx")),
    "LSTMCell": (lambda: _layers().LSTMCell(n_out=2), ((2, 3),), ()),
    "Dropout_FullyConnected": (_dropout_fully_connected, ((2, 4),), ()),
    "SkipConnectionIdentityModule": (lambda: _modules().SkipConnectionIdentityModule(
        out_ch=2, kernel_shape1=(2, 2), kernel_shape2=(2, 2), act_fn="Tanh"), ((1, 3, 3, 2),), ()),
    "SkipConnectionConvModule": (lambda: _modules().SkipConnectionConvModule(
        out_ch1=2, out_ch2=2, kernel_shape1=(2, 2), kernel_shape2=(2, 2), kernel_shape_skip=(1, 1),
        pad1=1, pad2=0, act_fn="Tanh"), ((2, 3, 3, 1),), ()),
    "WavenetResidualModule": (lambda: _modules().WavenetResidualModule(
        ch_residual=2, ch_dilation=2, dilation=1, kernel_width=2), ((1, 4, 2), (1, 4, 2)), ()),
    "BidirectionalLSTM": (lambda: _modules().BidirectionalLSTM(n_out=2), ((1, 2, 3),), ()),
    "MultiHeadedAttentionModule": (lambda: _modules().MultiHeadedAttentionModule(n_heads=2),
                                   ((1, 4), (1, 4), (1, 4)), ()),
}


# ------------------------------------------------------------- convolution helpers (utils)

W_2D = fixed((2, 2, 2, 2), 40)


def conv2d_in_input(t):
    from numpy_ml.neural_nets.utils import conv2D
    return total(conv2D(t.reshape(1, 3, 3, 2), W_2D, 1, 1, 0))


def conv2d_in_weights(t):
    from numpy_ml.neural_nets.utils import conv2D
    return total(conv2D(fixed((1, 3, 3, 2), 41), t.reshape(2, 2, 2, 2), 2, "same", 1))


def conv1d(t):
    from numpy_ml.neural_nets.utils import conv1D
    return total(conv1D(t[:10].reshape(1, 5, 2), t[10:].reshape(2, 2, 1), 1, "causal", 0))


def conv2d_naive(t):
    from numpy_ml.neural_nets.utils import conv2D_naive
    return total(conv2D_naive(t.reshape(1, 3, 3, 2), W_2D, 1, 1, 0))


def deconv2d_naive(t):
    from numpy_ml.neural_nets.utils import deconv2D_naive
    return total(deconv2D_naive(t.reshape(1, 2, 2, 2), W_2D, 2, 0, 0))


def im2col_col2im(t):
    from numpy_ml.neural_nets.utils import col2im, im2col
    columns, pad = im2col(t.reshape(1, 3, 3, 2), W_2D.shape, 1, 1)
    return total(columns, col2im(np.tanh(columns), (1, 3, 3, 2), W_2D.shape, pad, 1))


def pad2d_and_dilate(t):
    from numpy_ml.neural_nets.utils import dilate, pad2D
    padded, _ = pad2D(t.reshape(1, 3, 3, 2), (1, 0, 2, 1))
    return total(np.sin(padded), dilate(t.reshape(1, 3, 3, 2), 1))


UTILS = {conv2d_in_input: 18, conv2d_in_weights: 16, conv1d: 14, conv2d_naive: 18, deconv2d_naive: 8,
         im2col_col2im: 18, pad2d_and_dilate: 18}


def bernoulli_vae_loss():
    """numpy-ml's convolutional variational autoencoder, scaled down: its loss (``VAELoss``) in the
    input image, through the encoder, the reparametrised draw (reseeded) and the decoder."""
    from numpy_ml.neural_nets.losses import VAELoss
    from numpy_ml.neural_nets.models.vae import BernoulliVAE
    vae = BernoulliVAE(T=2, latent_dim=3, enc_conv1_out_ch=2, enc_conv2_out_ch=2, enc_conv1_kernel_shape=(2, 2),
                       enc_conv2_kernel_shape=(2, 2), enc_pool2_kernel_shape=(1, 1), enc_pool1_stride=1)
    vae.N = 16   # what its fit sets: pixels per image
    vae.forward(IMAGE)

    def vae_loss(t):
        image = t.reshape(IMAGE.shape)
        reconstruction = vae.forward(image)
        return VAELoss.loss(image.reshape(1, -1), reconstruction, vae._dv["t_mean"], vae._dv["t_log_var"])
    return vae_loss


IMAGE = 0.5 + 0.4 * fixed((1, 4, 4, 1), 3)


def layer_cases() -> list[CaseSpec]:
    specs = [_layer_spec(name, make, inputs, parameters) for name, (make, inputs, parameters) in LAYERS.items()]
    specs += [spec_around("numpy_ml", function.__name__, function, fixed(size, 50 + index), spread=0.05)
              for index, (function, size) in enumerate(UTILS.items())]
    specs.append(spec_made("numpy_ml", "bernoulli_vae_loss", bernoulli_vae_loss, IMAGE, jax_twin=False))
    return specs
