"""clip_grad_norm's squared norms (nn/optim.py's squares_sums) in one pass per gradient: kernels/grad_norm.c,
registered with dispatch as "squares_sums".

The plain loop squares each gradient into a float64 array (twice the gradient's bytes) and sums that with
numpy's pairwise sum. grad_norm.c takes the same squares in the same pairwise order as it reads the gradient,
so each sum has the plain loop's bits (tests/test_optim.py compares them over sizes that exercise every
branch of the order), and a sum that overflows to inf says so with the plain line's RuntimeWarning. Arrays
it does not take (not float32 or float64, or not C-contiguous: a broadcast gradient), every array when
there is no C compiler, and everything with TINYGRAD_LIKE_KERNELS=off go to the plain line.
"""
from __future__ import annotations

import ctypes
import functools
import math
import warnings
from pathlib import Path

import numpy as np

from tinygrad_like.fast.kernels import c_build
from tinygrad_like.fast.kernels.switch import choice

SOURCE = Path(__file__).with_name("kernels") / "grad_norm.c"
FLAGS = ["-O3", "-march=native", "-ffp-contract=off", "-shared", "-fPIC"]   # no fused multiply-add: numpy's roundings
_failure: str | None = None


@functools.lru_cache(maxsize=1)
def library() -> ctypes.CDLL | None:
    """grad_norm.c's library (built now if it is not in the cache), or None: then reason() says why."""
    global _failure
    lib, _failure = c_build.built("grad_norm", [SOURCE], FLAGS)
    if lib is None:
        return None
    for name in ("squares_sum_f32", "squares_sum_f64"):
        getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_long]
        getattr(lib, name).restype = ctypes.c_double
    return lib


def reason() -> str | None:
    """Why library() is None, once it has been asked; None when it loaded."""
    return _failure


def squares_sums(arrays: list) -> list:
    """[Σ a² in float64, for a in arrays]: nn.optim.squares_sums, each taken by grad_norm.c where it can."""
    lib = library() if choice() != "off" else None
    kernels = {} if lib is None else {np.float32: lib.squares_sum_f32, np.float64: lib.squares_sum_f64}
    sums = []
    for a in arrays:
        kernel = kernels.get(a.dtype.type)
        if kernel is None or not a.flags.c_contiguous:
            sums.append(float(np.sum(np.square(a, dtype=np.float64))))     # nn.optim.squares_sums' own line
        else:
            sums.append(kernel(a.ctypes.data, a.size))
            if sums[-1] == math.inf and np.isfinite(a).all():     # as the plain line's square says it
                warnings.warn("overflow encountered in square", RuntimeWarning, stacklevel=2)
    return sums
