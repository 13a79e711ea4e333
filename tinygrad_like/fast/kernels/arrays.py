"""The compiled kernels as array functions: numpy arrays in, numpy arrays out, the same results as the
numpy bodies of the fused ops (tinygrad_like/fast/fused.py, and the attention tile's in fast/flash.py) to
rounding (tests/test_kernels.py).

Each function takes the rows (or elements) of C-contiguous arrays, cuts them into a few runs per thread of
the engine's pool and runs a kernel on each run (`share`): a C kernel from SPIN_MIN_BYTES on, on the C
threads (spin_pool.run_kernel), else on the Python pool (`pool.threads_for`: one thread below pool.MIN_BYTES);
the attention tile's on the C threads too, else whole on the calling thread, which is one of the Python
pool's already when flash.py shares out chunks of tiles there. The kernels let go of the GIL, so the pool's
threads run them side by side; numba's own threads are never started (one owner of the cores: the pool,
which holds BLAS to one thread while it has more).

`variant` picks the compiled code: "numba" (numba_rows.py) or "c" (rows.c and attention.c through ctypes);
None takes the one kept for the op (KEPT), by measurement (benchmarks/bench_kernels.py): C where the op's
cost is exp, tanh or erf (numba calls the scalar ones; C gets vector ones), numba elsewhere.
"""
from __future__ import annotations

import bisect
import ctypes
import functools
import math

import numpy as np

from tinygrad_like.fast import pool, spin_pool
from tinygrad_like.fast.kernels import c_build

C_OPS = {"softmax", "log_softmax", "cross_entropy", "gelu", "gelu_erf", "silu", "swiglu", "tile_softmax",  # in C
         "transpose"}
KEPT = {"layernorm": "numba", "rmsnorm": "numba", "adam": "numba", "softmax": "c", "log_softmax": "c",
        "cross_entropy": "c", "gelu": "c", "gelu_erf": "c", "silu": "c", "swiglu": "c", "tile_softmax": "c",
        "transpose": "c"}
GELU_C = math.sqrt(2 / math.pi)
SQRT_HALF, INV_SQRT_2PI = 1 / math.sqrt(2), 1 / math.sqrt(2 * math.pi)

# rows.c's and attention.c's functions: their arguments before (n,) lo, hi — "a" a float array, "i" an int64
# array, "s" a float scalar, "l" an integer, "m" a mask block (rows, n) given as its start (NULL when it has
# no rows) and its row stride — and whether they take the row length n (row kernels) or not (elementwise)
C_ARGS = {
    "softmax_forward": ("aa", True), "softmax_backward": ("aaa", True),
    "log_softmax_forward": ("aa", True), "log_softmax_backward": ("aaa", True),
    "cross_entropy_forward": ("aissaa", True), "cross_entropy_backward": ("aissaa", True),
    "gelu_forward": ("asssa", False), "gelu_backward": ("aasssa", False),
    "gelu_erf_forward": ("assa", False), "gelu_erf_backward": ("aasssa", False),
    "silu_forward": ("aa", False), "silu_backward": ("aaa", False),
    "swiglu_forward": ("aa", True), "swiglu_backward": ("aaa", True),
    "tile_softmax_forward": ("amlsa", True), "tile_softmax_backward": ("amlaaa", True),
    "transpose_copy": ("aisa", False),
}


# C_ARGS's letters as spin_pool.signature spells them: a pointer, a long, a scalar (a mask block: both)
SPIN_KINDS = {"a": "p", "i": "p", "l": "l", "s": "s", "m": "pl"}


# Ops whose numba variant loses to their numpy body (numba's scalar exp against numpy's vectorised one,
# benchmarks/bench_kernels.py): where their C variant is missing, the numpy body runs, not numba.
NUMPY_BEFORE_NUMBA = {"tile_softmax"}


def variant_for(op: str, variant: str | None) -> str:
    """The variant to run: the one asked for, else the one kept for op, else the other one if that is
    missing (no compiler: numba everywhere, but see `kept_variant_runs`)."""
    wanted = variant or KEPT[op]
    if wanted == "c" and c_library() is None and variant is None:
        return "numba"
    return wanted


def kept_variant_runs(op: str) -> bool:
    """Whether op's kept variant, or one that beats its numpy body, runs here (False: run the body)."""
    return not (op in NUMPY_BEFORE_NUMBA and KEPT[op] == "c" and c_library() is None)


@functools.lru_cache(maxsize=None)
def kernel(name: str, variant: str, dtype: np.dtype):
    """The kernel `name` of a variant as a Python function of (arrays and scalars..., lo, hi)."""
    if variant == "numba":
        import tinygrad_like.fast.kernels.numba_rows as numba_rows  # loads numba: only when it is asked for
        return getattr(numba_rows, name)
    lib = c_library()
    if lib is None:
        raise RuntimeError(f"kernels: the C variant of {name} is not available: {c_build.reason()}")
    kinds, rows = C_ARGS[name]
    scalar = ctypes.c_float if dtype == np.float32 else ctypes.c_double
    fn = getattr(lib, f"{name}_{'f32' if dtype == np.float32 else 'f64'}")
    types = {"s": [scalar], "l": [ctypes.c_long], "m": [ctypes.c_void_p, ctypes.c_long]}
    fn.argtypes = [t for k in kinds for t in types.get(k, [ctypes.c_void_p])] + [ctypes.c_long] * (3 if rows else 2)
    fn.restype = None

    def raw(kind, value):
        if kind in "ai":
            return [value.ctypes.data]
        if kind == "m":                                    # unit stride along the row, checked by the caller
            return [value.ctypes.data if len(value) else None, value.strides[0] // value.itemsize]
        return [value]
    spin_kinds = "".join(SPIN_KINDS[k] for k in kinds) + ("l" if rows else "")    # spin_pool.signature's letters
    address, itemsize = ctypes.cast(fn, ctypes.c_void_p).value, np.dtype(dtype).itemsize

    def arguments(values) -> tuple:
        """The C arguments for these arrays and scalars: addresses, strides, scalars (and the row length)."""
        return (*(r for k, v in zip(kinds, values) for r in raw(k, v)), *((values[0].shape[-1],) if rows else ()))

    def bind(*values):
        """The kernel on these arrays and scalars, as a function of (lo, hi): the arrays' addresses are
        read once (a microsecond each), not once per run. Its `spin` is what spin_pool.run_kernel takes
        to call the same kernel on the C threads: (address, kinds, itemsize, arguments)."""
        args = arguments(values)
        run = lambda lo, hi: fn(*args, lo, hi)
        run.spin = (address, spin_kinds, itemsize, args)
        return run

    def call(*values):
        """The kernel on these arrays and scalars over rows (or elements) lo..hi, the last two values."""
        fn(*arguments(values[:-2]), *values[-2:])
    call.bind = bind
    return call


def c_library():
    return c_build.library()


RUNS_PER_THREAD = 4  # runs go out as threads free up: a thread slowed by another process takes fewer
# Elementwise kernels are cut at multiples of this many elements: their vector loops then meet each element
# where one call over the whole array does, which gives the same bits (the loops' remainders may not);
# every vector width up to 512 bits, unrolled twice, divides it (tests/test_spin_pool.py checks the bits).
ELEMENTS_PER_CUT = 64
# The attention tile's softmax takes the logs of 64 rows at once (attention.c's BLOCK) in a vector loop:
# cut at multiples of 64 rows, its blocks are those of one call (the same bits).
TILE_ROWS_PER_CUT = 64
# C kernels over this many bytes or more go to the C threads (spin_pool.run_kernel) when the pool has more
# than one thread: a hand-over costs a few microseconds there, against tens on the Python pool, so far
# smaller jobs gain from a second core than pool.MIN_BYTES: from 64 KiB on the exact GELU, softmax and SiLU
# (the cheapest per byte) all gain alone (benchmarks/bench_handover.py, part 4), but in minGPT's sort demo
# and makemore's transformer, whose softmaxes are of 64 to 128 KiB, sharing those out cost more than it
# gave (benchmarks/real_programs.py's programs, alternated): from 128 KiB.
SPIN_MIN_BYTES = 128 << 10


def runs(count: int, nbytes: int, unit: int = 1) -> list:
    """[0, ..., count]: where to cut `count` rows into runs, RUNS_PER_THREAD per thread worth using on
    nbytes (one run on one thread), each cut at a multiple of `unit`."""
    threads = pool.threads_for(nbytes)
    cuts = pool._cuts(count, min(1 if threads == 1 else threads * RUNS_PER_THREAD, max(count, 1)))
    return [c // unit * unit for c in cuts[:-1]] + cuts[-1:]


def share(fn, count: int, nbytes: int, *args, unit: int = 1, python_pool: bool = True) -> None:
    """fn(*args, lo, hi) for each run of the `count` rows (or elements) (`runs`, cut at multiples of `unit`):
    a C kernel from SPIN_MIN_BYTES on on the C threads (spin_pool.run_kernel) when they can take it and the
    Python pool is not sharing out work already (pool.sharing), else on the Python pool, or in one call on
    this thread when not `python_pool`; a C kernel bound to its arguments once (`kernel`'s bind). A job for
    one thread (one thread in the pool, or too small to share) is one direct call, with nothing bound."""
    threads = pool.chosen()
    if threads == 1 or (nbytes < SPIN_MIN_BYTES and (not python_pool or pool.threads_for(nbytes) == 1)):
        fn(*args, 0, count)                                   # one run, on this thread: nothing to bind
        return
    bound = fn.bind(*args) if hasattr(fn, "bind") else functools.partial(fn, *args)
    if nbytes >= SPIN_MIN_BYTES and hasattr(bound, "spin") and not pool.sharing() and \
            spin_pool.run_kernel(*bound.spin, 0, count, unit, threads * RUNS_PER_THREAD, threads - 1) is not None:
        return
    if not python_pool:
        bound(0, count)
        return
    cuts = runs(count, nbytes, unit)
    pool.run(lambda i: bound(cuts[i], cuts[i + 1]), range(len(cuts) - 1))


def _rows(a: np.ndarray) -> np.ndarray:
    """a as C-contiguous rows (r, n) (a view when it is contiguous already)."""
    return np.ascontiguousarray(a).reshape(-1, a.shape[-1])


def _flat(a: np.ndarray, dtype=None) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=dtype).reshape(-1)


def _empty(shape: tuple, dtype, n: int | None = None) -> tuple:
    """(out, view): a new array of `shape`, and the same memory as rows (r, n) (or flat, n None) for a
    kernel to write. The caller hands back `out` itself, an array that owns its memory, so that a leaf's
    .grad can keep it without a copy (autograd.into_leaf)."""
    out = np.empty(shape, dtype)
    return out, out.reshape(-1) if n is None else out.reshape(-1, n)


CACHE_LINE = 64  # bytes


def partial_sums(runs: int, count: int, n: int, dtype) -> np.ndarray:
    """Zeroed partial sums (runs, count, n), one (count, n) block per run for the run's thread to add into, each
    block starting on a cache line of its own with a line of space after it. Packed side by side, two threads
    adding into neighbouring blocks write the one cache line where a block ends and the next begins (numpy's
    arrays start on 16 bytes, not 64) at every row: false sharing, which made LayerNorm's backward on two
    threads slower than on one (tests/test_kernels.py: test_partial_sums_keep_runs_on_lines_of_their_own)."""
    dtype = np.dtype(dtype)
    line = CACHE_LINE // dtype.itemsize
    stride = -(-(count * n) // line) * line + line                              # elements from block to block
    buffer = np.zeros(runs * stride + line, dtype)
    start = (-buffer.ctypes.data // dtype.itemsize) % line                      # the first element on a line
    return buffer[start:start + runs * stride].reshape(runs, stride)[:, :count * n].reshape(runs, count, n)


def _typed(dtype, *values):
    return [dtype.type(v) for v in values]


# ---------------------------------------------------------------- LayerNorm and RMSNorm

def layernorm_forward(x: np.ndarray, w: np.ndarray | None, b: np.ndarray | None, eps: float, variant=None):
    """(y, x̂, rstd): y = x̂·w + b (x̂ itself without w), x̂ = (x − mean)/√(var + eps) along the last axis;
    rstd (..., 1). Without w, y is x̂ (the same array)."""
    x2 = _rows(x)
    dtype = x2.dtype
    n = x2.shape[1]
    w2 = np.ones(n, dtype) if w is None else _flat(w, dtype)
    b2 = np.zeros(n, dtype) if b is None else _flat(b, dtype)
    xhat, xhat2 = _empty(x.shape, dtype, n)
    y, y2 = (xhat, xhat2) if w is None else _empty(x.shape, dtype, n)
    rstd = np.empty((*x.shape[:-1], 1), dtype)
    fn = kernel("layernorm_forward", variant_for("layernorm", variant), dtype)
    share(fn, x2.shape[0], x2.nbytes, x2, w2, b2, *_typed(dtype, eps, 1 / n), xhat2, rstd.reshape(-1, 1), y2)
    return y, xhat, rstd


def layernorm_backward(g: np.ndarray, xhat: np.ndarray, rstd: np.ndarray, w: np.ndarray | None,
                       need=(True, True, True), variant=None):
    """The gradients of layernorm_forward given the upstream gradient g, as the numpy body returns them:
    need says which of (x, w, b) want one (1 to 3 entries); dx alone when it has one entry, else
    (dx, dw, db)[:len(need)] with None where not needed (dw and db: Σ over rows)."""
    g2, xhat2 = _rows(np.asarray(g, xhat.dtype)), _rows(xhat)
    dtype, n = xhat2.dtype, xhat2.shape[1]
    w2 = np.ones(n, dtype) if w is None else _flat(w, dtype)
    dx, dx2 = _empty(xhat.shape, dtype, n)
    cuts = runs(xhat2.shape[0], xhat2.nbytes)
    parts = partial_sums(len(cuts) - 1, 2, n, dtype)                             # dw and db of each run
    fn = kernel("layernorm_backward", variant_for("layernorm", variant), dtype)
    inv_n = dtype.type(1 / n)
    pool.run(lambda i: fn(g2, xhat2, rstd.reshape(-1, 1), w2, inv_n, dx2, parts[i, 0], parts[i, 1],
                          cuts[i], cuts[i + 1]), range(len(cuts) - 1))
    grads = (dx if need[0] else None, *(parts[:, i].sum(0) if len(need) > i + 1 and need[i + 1]
                                        else None for i in range(2)))
    return grads[0] if len(need) == 1 else grads[:len(need)]


def rmsnorm_forward(x: np.ndarray, w: np.ndarray | None, eps: float, variant=None):
    """(y, rstd): y = x·rstd·w, rstd = 1/√(mean(x²) + eps) (..., 1) along the last axis."""
    x2 = _rows(x)
    dtype = x2.dtype
    n = x2.shape[1]
    w2 = np.ones(n, dtype) if w is None else _flat(w, dtype)
    (y, y2), rstd = _empty(x.shape, dtype, n), np.empty((*x.shape[:-1], 1), dtype)
    fn = kernel("rmsnorm_forward", variant_for("rmsnorm", variant), dtype)
    share(fn, x2.shape[0], x2.nbytes, x2, w2, *_typed(dtype, eps, 1 / n), rstd.reshape(-1, 1), y2)
    return y, rstd


def rmsnorm_backward(g: np.ndarray, x: np.ndarray, rstd: np.ndarray, w: np.ndarray | None, variant=None):
    """(dx, dw) of rmsnorm_forward given the upstream gradient g (dw: Σ over rows of g·x·rstd)."""
    g2, x2 = _rows(np.asarray(g, x.dtype)), _rows(x)
    dtype, n = x2.dtype, x2.shape[1]
    w2 = np.ones(n, dtype) if w is None else _flat(w, dtype)
    dx, dx2 = _empty(x.shape, dtype, n)
    cuts = runs(x2.shape[0], x2.nbytes)
    parts = partial_sums(len(cuts) - 1, 1, n, dtype)                             # dw of each run
    fn = kernel("rmsnorm_backward", variant_for("rmsnorm", variant), dtype)
    inv_n = dtype.type(1 / n)
    pool.run(lambda i: fn(g2, x2, rstd.reshape(-1, 1), w2, inv_n, dx2, parts[i, 0], cuts[i], cuts[i + 1]),
             range(len(cuts) - 1))
    return dx, parts[:, 0].sum(0)


# ---------------------------------------------------------------- softmax, log-softmax, cross-entropy

def _row_op(name: str, op: str, variant, *arrays) -> np.ndarray:
    rows = [_rows(a) for a in arrays]
    out, out2 = _empty(arrays[-1].shape, rows[-1].dtype, rows[-1].shape[1])
    share(kernel(name, variant_for(op, variant), out.dtype), out2.shape[0], out.nbytes, *rows, out2)
    return out


def softmax_forward(x: np.ndarray, variant=None) -> np.ndarray:
    """softmax along the last axis."""
    return _row_op("softmax_forward", "softmax", variant, x)


def softmax_backward(g: np.ndarray, y: np.ndarray, variant=None) -> np.ndarray:
    """dx = y ⊙ (g − Σ g⊙y), y = softmax(x)."""
    return _row_op("softmax_backward", "softmax", variant, np.asarray(g, y.dtype), y)


def log_softmax_forward(x: np.ndarray, variant=None) -> np.ndarray:
    """log-softmax along the last axis."""
    return _row_op("log_softmax_forward", "log_softmax", variant, x)


def log_softmax_backward(g: np.ndarray, y: np.ndarray, variant=None) -> np.ndarray:
    """dx = g − exp(y)·Σ g, y = log_softmax(x)."""
    return _row_op("log_softmax_backward", "log_softmax", variant, np.asarray(g, y.dtype), y)


def cross_entropy_forward(x: np.ndarray, targets: np.ndarray, smoothing: float, variant=None):
    """(probs (M, C), losses (M,)) of logits x (M, C) against targets (M,): probs = softmax(x),
    loss = (1 − ε)(lse(x) − x[target]) + ε(lse(x) − mean(x))."""
    x2 = _rows(x)
    dtype = x2.dtype
    t = np.ascontiguousarray(targets, np.int64)
    probs, losses = np.empty_like(x2), np.empty(x2.shape[0], dtype)
    fn = kernel("cross_entropy_forward", variant_for("cross_entropy", variant), dtype)
    share(fn, x2.shape[0], x2.nbytes, x2, t, *_typed(dtype, smoothing, 1 / x2.shape[1]), probs, losses)
    return probs, losses


def cross_entropy_backward(probs: np.ndarray, targets: np.ndarray, smoothing: float, scale, variant=None):
    """d logits = (probs − (1 − ε)·onehot(target) − ε/C)·scale, scale one number or one per row (M,)."""
    dtype = probs.dtype
    t = np.ascontiguousarray(targets, np.int64)
    scale = np.ascontiguousarray(np.broadcast_to(np.asarray(scale, dtype).reshape(-1), (probs.shape[0],)))
    dx = np.empty_like(probs)
    fn = kernel("cross_entropy_backward", variant_for("cross_entropy", variant), dtype)
    share(fn, probs.shape[0], probs.nbytes, probs, t, *_typed(dtype, smoothing, 1 / probs.shape[1]), scale, dx)
    return dx


# ---------------------------------------------------------------- GELU, SiLU, SwiGLU

def _elementwise(name: str, op: str, variant, arrays, scalars=(), outputs=1):
    flat = [_flat(a) for a in arrays]
    dtype = flat[-1].dtype
    outs = [_empty(arrays[-1].shape, dtype) for _ in range(outputs)]
    fn = kernel(name, variant_for(op, variant), dtype)
    share(fn, flat[-1].size, flat[-1].nbytes, *flat, *_typed(dtype, *scalars), *(view for _, view in outs),
          unit=ELEMENTS_PER_CUT)
    return outs[0][0] if outputs == 1 else tuple(out for out, _ in outs)


def gelu_forward(x: np.ndarray, variant=None) -> np.ndarray:
    """GELU, tanh form: ½x(1 + tanh(√(2/π)(x + 0.044715x³)))."""
    return _elementwise("gelu_forward", "gelu", variant, [x], (GELU_C, GELU_C * 0.044715, 0.5))


def gelu_backward(g: np.ndarray, x: np.ndarray, variant=None) -> np.ndarray:
    """g·dGELU/dx, recomputed from x."""
    return _elementwise("gelu_backward", "gelu", variant, [np.asarray(g, x.dtype), x],
                        (GELU_C, GELU_C * 0.044715, 0.5))


def gelu_erf_forward(x: np.ndarray, variant=None) -> np.ndarray:
    """The exact GELU: ½x(1 + erf(x/√2))."""
    return _elementwise("gelu_erf_forward", "gelu_erf", variant, [x], (SQRT_HALF, 0.5))


def gelu_erf_backward(g: np.ndarray, x: np.ndarray, variant=None) -> np.ndarray:
    """g·(Φ(x) + x·φ(x)), recomputed from x."""
    return _elementwise("gelu_erf_backward", "gelu_erf", variant, [np.asarray(g, x.dtype), x],
                        (SQRT_HALF, 0.5, INV_SQRT_2PI))


def silu_forward(x: np.ndarray, variant=None) -> np.ndarray:
    """x·σ(x)."""
    return _elementwise("silu_forward", "silu", variant, [x])


def silu_backward(g: np.ndarray, x: np.ndarray, variant=None) -> np.ndarray:
    """g·σ(x)(1 + x(1 − σ(x)))."""
    return _elementwise("silu_backward", "silu", variant, [np.asarray(g, x.dtype), x])


def swiglu_forward(x: np.ndarray, variant=None) -> np.ndarray:
    """silu(a)·b of x = [a | b] (..., 2n), read in place from the packed halves (no copy of either); (..., n)."""
    if x.shape[-1] % 2:
        raise ValueError(f"swiglu_forward: x {x.shape} needs an even last axis, [gate | up]")
    x2 = _rows(x)
    y, y2 = _empty(x.shape[:-1] + (x.shape[-1] // 2,), x2.dtype, x.shape[-1] // 2)
    share(kernel("swiglu_forward", variant_for("swiglu", variant), x2.dtype), x2.shape[0], x2.nbytes, x2, y2)
    return y


def swiglu_backward(g: np.ndarray, x: np.ndarray, variant=None) -> np.ndarray:
    """dx = [da | db] (..., 2n) of swiglu_forward given the upstream gradient g (..., n), written packed."""
    if x.shape[-1] % 2 or g.shape != x.shape[:-1] + (x.shape[-1] // 2,):
        raise ValueError(f"swiglu_backward: x {x.shape} needs an even last axis and g of shape "
                         f"{x.shape[:-1] + (x.shape[-1] // 2,)}, got g {g.shape}")
    x2 = _rows(x)
    g2 = _rows(np.asarray(g, x2.dtype))
    dx, dx2 = _empty(x.shape, x2.dtype, x.shape[-1])
    share(kernel("swiglu_backward", variant_for("swiglu", variant), x2.dtype), x2.shape[0], x2.nbytes, g2, x2, dx2)
    return dx


# ---------------------------------------------------------------- the attention tile's softmax

def _mask_block(mask: np.ndarray | None, s: np.ndarray):
    """The mask of a tile of scores s (..., rows, n) as the kernels read it: one block (rows, n), or (0, n)
    when there is none, with unit stride along a row, shared by every batch entry and head of the tile.
    A mask that differs between them is added to s here (in place), and the kernels see none."""
    if mask is not None and all(m == 1 for m in mask.shape[:-2]):
        block = mask.reshape(mask.shape[-2:])
        return block if block.strides[-1] == block.itemsize else np.ascontiguousarray(block)
    if mask is not None:
        s += mask
    return np.empty((0, s.shape[-1]), s.dtype)


def _in_place_rows(a: np.ndarray) -> np.ndarray:
    """a (..., n) as rows (r, n) of the same memory, for a kernel that writes into it: a must be C-contiguous."""
    if not a.flags.c_contiguous:
        raise ValueError(f"tile_softmax: the kernels write in place into C-contiguous tiles, got strides {a.strides}")
    return a.reshape(-1, a.shape[-1])


def tile_softmax_forward(s: np.ndarray, mask: np.ndarray | None, v: np.ndarray, out: np.ndarray,
                         noise: np.ndarray | None = None, variant=None) -> np.ndarray:
    """flash.tile_softmax_forward: out = (softmax(s + mask) ⊙ noise) v for scores s (..., rows, n), C-contiguous,
    which become the weights (times dropout's noise, when given); returns the rows' log-sum-exp (..., rows, 1),
    +inf where every key is masked (whose weights are 0). The kernel and the product run on the C threads
    when they can take them (`share`, pool.stacked), else on the calling thread (flash.py's chunks on the
    Python pool are one thread's work already)."""
    rows = _in_place_rows(s)
    lse = np.empty((rows.shape[0], 1), s.dtype)
    fn = kernel("tile_softmax_forward", variant_for("tile_softmax", variant), s.dtype)
    share(fn, rows.shape[0], s.nbytes, rows, _mask_block(mask, s), s.shape[-2], np.finfo(s.dtype).min, lse,
          unit=TILE_ROWS_PER_CUT, python_pool=False)
    if noise is not None:
        s *= noise
    pool.stacked(s, v, out=out)
    return lse.reshape(s.shape[:-1] + (1,))


def tile_softmax_backward(s: np.ndarray, mask: np.ndarray | None, lse: np.ndarray, dp: np.ndarray, D: np.ndarray,
                          variant=None) -> None:
    """flash.tile_softmax_backward: in place, s (..., rows, n) becomes p = exp(s + mask − lse) and dp becomes
    ds = p ⊙ (dp − D), s and dp C-contiguous, lse and D (..., rows, 1). On the C threads when they can take
    it (`share`), else on the calling thread."""
    rows, _ = _in_place_rows(s), _in_place_rows(dp)
    shape = s.shape[:-1] + (1,)
    per_row = [np.ascontiguousarray(a if a.shape == shape else np.broadcast_to(a, shape)).reshape(-1) for a in (lse, D)]
    fn = kernel("tile_softmax_backward", variant_for("tile_softmax", variant), s.dtype)
    share(fn, rows.shape[0], s.nbytes, rows, _mask_block(mask, s), s.shape[-2], per_row[0], dp.reshape(rows.shape),
          per_row[1], python_pool=False)


@functools.lru_cache(maxsize=64)
def _blocks(shape: tuple, strides: tuple, itemsize: int):
    """(n0, n1, src strides of the two, or None) for the leading axes of an array (..., n, d) of that
    shape and strides: at most two after dropping those of size 1 and merging neighbours that step
    evenly; None when they do not come down to two, or a stride is not a whole number of elements."""
    if any(s % itemsize for s in strides):
        return None
    axes = []
    for n, st in zip(shape[:-2], strides[:-2]):
        if n == 1:
            continue
        if axes and axes[-1][1] == st * n:
            axes[-1] = (axes[-1][0] * n, st)
        else:
            axes.append((n, st))
    if len(axes) > 2:
        return None
    (n0, s0), (n1, s1) = [(1, 0)] * (2 - len(axes)) + axes
    return n0, n1, s0 // itemsize, s1 // itemsize


@functools.lru_cache(maxsize=64)
def _transpose_layout(shape: tuple, strides: tuple, itemsize: int):
    """The layout array attention.c's transpose_copy reads (n1, n, d, s0, s1, row stride), read-only, or None."""
    blocks = _blocks(shape, strides, itemsize)
    if blocks is None or strides[-1] != itemsize or strides[-2] % itemsize:
        return None
    n0, n1, s0, s1 = blocks
    layout = np.array([n1, shape[-2], shape[-1], s0, s1, strides[-2] // itemsize], np.int64)
    layout.flags.writeable = False
    return n0, layout


def transpose_copy(a: np.ndarray, scale, out: np.ndarray, variant=None) -> np.ndarray:
    """flash.transpose_copy: out (..., d, n), C-contiguous, = aᵀ·scale for a (..., n, d) with unit stride
    along d and leading axes that come down to two (`_blocks`): a view of the packed projection, or a
    contiguous array; numpy's copy otherwise. Returns out. On the C threads when they can take it (`share`),
    else on the calling thread."""
    found = _transpose_layout(a.shape, a.strides, a.itemsize) if out.flags.c_contiguous else None
    if found is None:
        return np.multiply(np.swapaxes(a, -1, -2), 1 if scale is None else scale, out=out)
    n0, layout = found
    n1, n, d, s0, s1, sr = layout.tolist()
    src = np.lib.stride_tricks.as_strided(a, (n0, n1, n, d), tuple(x * a.itemsize for x in (s0, s1, sr, 1)))
    fn = kernel("transpose_copy", variant_for("transpose", variant), out.dtype)
    share(fn, n0 * n1, out.nbytes, src, layout, out.dtype.type(1 if scale is None else scale), out.reshape(-1, d, n),
          python_pool=False)
    return out


# ---------------------------------------------------------------- Adam and AdamW

def adam_update(p: np.ndarray, g: np.ndarray, m: np.ndarray, v: np.ndarray, lr: float, beta1: float,
                beta2: float, eps: float, weight_decay: float, decoupled: bool, step: int, variant=None) -> None:
    """Adam's step `step` (AdamW's when decoupled) on p, m and v in place, given the gradient g:
    nn.optim.adam_update's arithmetic in one pass (arrays that are not C-contiguous are worked on in
    contiguous copies, written back)."""
    dtype = p.dtype
    work = [a if a.flags.c_contiguous else np.ascontiguousarray(a) for a in (p, m, v)]
    scalars = _adam_scalars(dtype, lr, beta1, beta2, eps, weight_decay, decoupled, step)
    fn = kernel("adam_update", variant_for("adam", variant), dtype)
    flat = [a.reshape(-1) for a in work]
    share(fn, p.size, p.nbytes, flat[0], _flat(g, dtype), flat[1], flat[2], *scalars)
    for a, w in zip((p, m, v), work):
        if a is not w:
            a[...] = w


def _adam_scalars(dtype, lr, beta1, beta2, eps, weight_decay, decoupled, step) -> list:
    """The adam_update kernel's scalars, in the arrays' dtype: β₁, β₂, 1 − β₁, 1 − β₂, the bias-corrected
    step size and scale of √v, ε, the decay of the weights (AdamW) and of the gradient's weight term (Adam)."""
    decay = 1 - lr * weight_decay if decoupled and weight_decay != 0 else 1.0
    grad_decay = weight_decay if not decoupled else 0.0
    return _typed(dtype, beta1, beta2, 1 - beta1, 1 - beta2, lr / (1 - beta1 ** step),
                  1 / math.sqrt(1 - beta2 ** step), eps, decay, grad_decay)


def adam_group(params: list, grads: list, m: np.ndarray, v: np.ndarray, lr: float, beta1: float, beta2: float,
               eps: float, weight_decay: float, decoupled: bool, step: int, variant=None) -> None:
    """nn.optim.adam_group without joining the parameters into one array and writing them back: each is
    updated where it lies by adam_update's kernel, against its own stretch of the flat moments m and v. The
    group's elements, end to end, are cut into runs (`runs`: a few per thread), a parameter spanning runs
    or a run several parameters, and the runs go to the pool in one hand-over for the group."""
    dtype = m.dtype
    scalars = _adam_scalars(dtype, lr, beta1, beta2, eps, weight_decay, decoupled, step)
    fn = kernel("adam_update", variant_for("adam", variant), dtype)
    starts = [0]
    for p in params:
        starts.append(starts[-1] + p.size)
    parts = []                                  # (p, g, m, v) of each parameter, flat
    for i, (p, g) in enumerate(zip(params, grads)):
        if not p.flags.c_contiguous or p.dtype != dtype:   # worked on in a copy, written back: alone, here
            adam_update(p, g, m[starts[i]:starts[i + 1]], v[starts[i]:starts[i + 1]], lr, beta1, beta2, eps,
                        weight_decay, decoupled, step, variant)
            parts.append(None)
            continue
        parts.append((p.reshape(-1), _flat(g, dtype), m[starts[i]:starts[i + 1]], v[starts[i]:starts[i + 1]]))
    cuts = runs(starts[-1], m.nbytes)

    def run(r):
        lo, hi = cuts[r], cuts[r + 1]
        for i in range(bisect.bisect_right(starts, lo) - 1, len(params)):
            if starts[i] >= hi:
                break
            if parts[i] is not None:
                fn(*parts[i], *scalars, max(lo - starts[i], 0), min(hi, starts[i + 1]) - starts[i])
    pool.run(run, range(len(cuts) - 1))
