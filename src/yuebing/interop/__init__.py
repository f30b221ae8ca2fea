"""Bridges to other frameworks: ``yuebing.interop.torch.wrap(f)`` and ``yuebing.interop.jax.wrap(f)``
make a NumPy function, differentiated by yuebing, an operation of PyTorch or JAX. Each bridge is
imported on its own, so neither framework is needed to import yuebing. This package sits at the
top of the layers, beside ``testing`` and ``bench``: it uses the public API only.
"""
