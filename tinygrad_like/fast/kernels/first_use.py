"""Compile every kernel a dtype needs at once, at its first use, and say how long it took.

numba compiles a kernel on its first call for each dtype and writes it to its cache (cache=True, in
__pycache__ beside numba_rows.py, or NUMBA_CACHE_DIR); the C kernels are built once per machine (c_build.py).
`prepare(dtype)` runs each array function once on a tiny input, so that all the compiling happens in one
place, and prints one line on stderr when anything had to be compiled; a later run loads everything from
the caches and prints nothing.
"""
from __future__ import annotations

import functools
import sys
import threading
import time

import numpy as np

from tinygrad_like.fast.kernels import arrays, c_build, numba_rows, numba_twister
from tinygrad_like.fast.kernels.switch import variant


@functools.lru_cache(maxsize=None)
def prepare(dtype: np.dtype) -> bool:
    """Compile (or load) every kernel the ops use for `dtype`; False, with one line on stderr, if the
    kernels do not work here (then the numpy bodies run)."""
    start = time.perf_counter()
    built = not c_build.library_built() and c_build.compiler() is not None
    c_ready = threading.Thread(target=c_build.library, daemon=True)   # the compiler runs beside numba's
    c_ready.start()
    try:
        _run_each(arrays, dtype, c_ready)
    except Exception as error:  # a broken numba or compiler must not stop training: numpy's bodies run
        print(f"tinygrad_like: the fast kernels do not work here ({type(error).__name__}: {error}); "
              "the numpy bodies run instead", file=sys.stderr)
        return False
    built = built and c_build.library() is not None
    compiled = [k for module in (numba_rows, numba_twister) for k in vars(module).values()
                if hasattr(k, "stats") and sum(k.stats.cache_misses.values())]
    if compiled or built:
        c_note = "" if c_build.library() else f"; C kernels off: {c_build.reason()}"
        print(f"tinygrad_like: compiled {len(compiled)} numba kernels{' and the C kernels' if built else ''} for "
              f"{dtype.name} in {time.perf_counter() - start:.1f} s (cached for later runs){c_note}",
              file=sys.stderr)
    return True


def _run_each(arrays, dtype: np.dtype, c_ready) -> None:
    """Every array function an op of the engine uses once, on tiny inputs of dtype, with the variant each
    op will use: numba's first, while the C kernels may still be compiling (the thread c_ready), then the
    others."""
    x = np.linspace(-1, 1, 6, dtype=dtype).reshape(2, 3)
    w, t = np.ones(3, dtype), np.zeros(2, np.int64)
    y, xhat, rstd = arrays.layernorm_forward(x, w, w, 1e-5, variant("layernorm"))
    arrays.layernorm_backward(x, xhat, rstd, w, (True, True, True), variant("layernorm"))
    y, rstd = arrays.rmsnorm_forward(x, w, 1e-6, variant("rmsnorm"))
    arrays.rmsnorm_backward(x, x, rstd, w, variant("rmsnorm"))
    m, v = np.zeros(6, dtype), np.zeros(6, dtype)
    arrays.adam_update(x.reshape(-1).copy(), x, m, v, 1e-3, 0.9, 0.999, 1e-8, 0.01, True, 1, variant("adam"))
    c_ready.join()
    for op in ("softmax", "log_softmax"):
        forward, backward = getattr(arrays, f"{op}_forward"), getattr(arrays, f"{op}_backward")
        backward(x, forward(x, variant(op)), variant(op))
    probs, _ = arrays.cross_entropy_forward(x, t, 0.1, variant("cross_entropy"))
    arrays.cross_entropy_backward(probs, t, 0.1, 1.0, variant("cross_entropy"))
    arrays.gelu_backward(x, arrays.gelu_forward(x, variant("gelu")), variant("gelu"))
    arrays.gelu_erf_backward(x, arrays.gelu_erf_forward(x, variant("gelu_erf")), variant("gelu_erf"))
    arrays.silu_backward(x, arrays.silu_forward(x, variant("silu")), variant("silu"))
    packed = np.linspace(-1, 1, 8, dtype=dtype).reshape(2, 4)                 # [gate | up], two of each
    arrays.swiglu_backward(arrays.swiglu_forward(packed, variant("swiglu")), packed, variant("swiglu"))
    if arrays.kept_variant_runs("tile_softmax") or variant("tile_softmax"):  # attention (flash.py)
        s = x[None].copy()                                                   # (1, 2, 3)
        lse = arrays.tile_softmax_forward(s, np.zeros((2, 3), dtype), x.T, np.empty((1, 2, 2), dtype),
                                          variant=variant("tile_softmax"))
        arrays.tile_softmax_backward(s, None, lse, s.copy(), lse, variant("tile_softmax"))
    arrays.transpose_copy(x[None], 2.0, np.empty((1, 3, 2), dtype), variant("transpose"))
    words = np.empty(2, np.uint32)                   # PyTorch's dropout mask (fast/streams.py), any dtype's
    numba_twister.words_into(np.arange(624, dtype=np.uint32), 624, words)
    numba_twister.pairs_below(words.view(np.uint64), 2 ** 52, np.empty(1, bool))
