"""Compiled one-pass kernels for the elementwise ops: the `fast` extra (pip install -e ".[fast]").

arrays.py: the array functions the fused ops call (numpy arrays in and out); numba_rows.py: the kernels
in numba; rows.c, attention.c (the attention tile's softmax, for fast/flash.py) and c_build.py: the kernels
in C, built with the system compiler at first use;
first_use.py: compiles (or loads from the cache) every kernel of a dtype at once, and says so;
switch.py: which kernels run (TINYGRAD_LIKE_KERNELS).
A fused op asks `compiled(body, *arrays)` for the function to run: the kernel standing in for its numpy
body, or the body.

The kernels are on when numba imports, off without it (everything then runs as numpy's bodies), and the
environment variable TINYGRAD_LIKE_KERNELS chooses: "off" (or "0"), "numba" or "c" (that variant for
every op that has it), "on" or unset: the variant kept for each op (arrays.KEPT).
"""
from __future__ import annotations

import functools
import os
import threading

import numpy as np

from tinygrad_like.fast.kernels import arrays as kernel_arrays
from tinygrad_like.fast.kernels.switch import choice, numba_importable, variant

DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_preparing = threading.Lock()  # attention's chunks ask from the pool's threads at once: one compiles


def ready(dtype) -> bool:
    """Whether the kernels run for arrays of this dtype: numba imports, they are not turned off, and the
    dtype is float32 or float64 (compiled, or loaded from the cache, on the first call for the dtype)."""
    if np.dtype(dtype) not in DTYPES or choice() == "off" or not numba_importable():
        return False
    import tinygrad_like.fast.kernels.first_use as first_use  # loads numba: only when it imports
    with _preparing:
        return first_use.prepare(np.dtype(dtype))


def compiled(body, *arrays):
    """The kernel standing in for the fused op's numpy body `body` (arrays.py's function of the same name:
    the same arguments, the same results to rounding) when the kernels are ready for these arrays, else
    `body` itself. Ready: kernels on and compiled for their dtype, every float array of that one dtype (a
    mix promotes in numpy's body), the first of at least MIN_SIZE elements, none empty."""
    floats = [a for a in arrays if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    if not floats or floats[0].size < MIN_SIZE or any(a.dtype != floats[0].dtype or a.size == 0 for a in floats):
        return body
    key = (body, floats[0].dtype, os.environ.get("TINYGRAD_LIKE_KERNELS"))
    if key not in _chosen:
        _chosen[key] = _choose(body, floats[0].dtype)
    return _chosen[key]


# Below this many elements an op takes the numpy body: its few calls on a small array cost about what a
# kernel's call does (measured at 4,096 elements: the same to noise), and small examples keep numpy's bits.
MIN_SIZE = 4096
_chosen: dict = {}  # (body, dtype, TINYGRAD_LIKE_KERNELS) -> the function compiled() hands back


def _choose(body, dtype):
    if not ready(dtype):
        return body
    fn = getattr(kernel_arrays, body.__name__)
    op = body.__name__.rsplit("_", 1)[0]
    forced = variant(op)
    if forced is None:
        return fn if kernel_arrays.kept_variant_runs(op) else body
    return functools.partial(fn, variant=forced)
