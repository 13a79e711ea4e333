"""Large elementwise work shared out among the pool's threads in pieces, with the bits numpy's one call gives.

Used by the fast path's array functions (fast/arrays.py: small powers, masked_fill's copy-and-fill), the
lean walk's Mul and Tanh rules (fast/walk.py), and dropout's mask (fast/streams.py) and its scaling
(`scaled`). The primitive ops' own forwards (Mul, Add, Tanh, ...) stay numpy's one call: ops.py is what a
learner reads (notebook 1 prints Mul and Tanh).

An elementwise op computes each entry of its result from the entries at the same place in its inputs and
nothing else, so the result can be cut into pieces, each piece computed by the same numpy calls into its
own part of the output, and every entry is the one the whole call gives. numpy lets go of the GIL inside
its loops over large arrays, so the pool's threads (fast/pool.py) run the pieces at the same time.

Where the result is cut (`_pieces`):
- every input either the result's shape and C-contiguous, or a single value: along the flat layout, at
  multiples of ALIGN elements, so each piece starts as aligned as the whole array does and numpy runs the
  same vector loop on it;
- else (an input broadcast, such as masked_fill's (1, 1, T, T) mask or a bias): along the result's first
  axis, each input cut along it where it has that axis in full and passed whole where it broadcasts there.

A floating-point error in a piece is reported as numpy's one call would report it: each thread works under
the caller's np.errstate (a warning, an error raised in the caller, or nothing).

Only results (or inputs) of SHARE_FROM bytes and more are shared out: handing pieces to a thread and back
costs 17-38 us on the machine this was measured on, and two threads share one memory bus, so that a product of
two 3 MB arrays took as long on two threads as on one, and one of 6 MB a sixth less
(benchmarks/bench_elementwise.py). Smaller ones, a single thread (set_num_threads(1)), inputs of mixed
dtypes and anything else run numpy's one call, unchanged.

tests/test_elementwise_shared.py checks every function here against numpy's whole call, bit for bit.
"""
from __future__ import annotations

import numpy as np

from tinygrad_like.fast import pool

SHARE_FROM = 4 << 20    # bytes of the largest array: below this, numpy's one call on one thread (bench_elementwise.py)
ALIGN = 1024            # elements: flat pieces start at multiples of this
LARGE = 1 << 19         # elements: below this a caller need not ask (SHARE_FROM holds no fewer at 8 bytes each)


def shared(nbytes: int) -> int:
    """The number of pieces for a result of `nbytes` bytes: one per thread from SHARE_FROM bytes, else 1."""
    return pool.chosen() if nbytes >= SHARE_FROM else 1


def _pieces(shape: tuple, inputs: tuple, parts: int):
    """(flat, [(where, [each input's piece])]): a result of `shape` cut into `parts` pieces (see the module's
    docstring), `where` a slice of the result's flat layout (flat True) or of its first axis; None when it
    cannot be cut that many ways."""
    if all(x.ndim == 0 or (x.shape == shape and x.flags.c_contiguous) for x in inputs):
        size = int(np.prod(shape))
        cuts = sorted({min(size, size * i // parts // ALIGN * ALIGN) for i in range(parts)} | {size})
        views = [x if x.ndim == 0 else x.reshape(-1) for x in inputs]
        return True, [(slice(lo, hi), [v if v.ndim == 0 else v[lo:hi] for v in views])
                      for lo, hi in zip(cuts, cuts[1:])]
    parts = min(parts, shape[0] if shape else 1)
    if parts < 2:
        return None
    cuts = pool._cuts(shape[0], parts)
    full = [x.ndim == len(shape) and x.shape[0] == shape[0] for x in inputs]
    return False, [(slice(lo, hi), [x[lo:hi] if whole else x for x, whole in zip(inputs, full)])
                   for lo, hi in zip(cuts, cuts[1:])]


def share(step, shape: tuple, dtype, *inputs, outputs: int = 1, piece: int | None = None):
    """New arrays of `shape` and `dtype` (`outputs` of them; the array itself when 1), written by
    step(outs, ins) on matching pieces of them and of `inputs` (numpy arrays that broadcast to `shape`):
    step writes its pieces of the outputs, entry by entry, from the inputs' pieces. Shared out among the
    pool's threads, one run of neighbouring pieces each, when the outputs or an input are large enough
    (`shared`) and can be cut (`_pieces`); else one call on the whole. `piece` (elements): cut further into pieces of
    about that size, for a step of several passes, whose temporaries then stay in the CPU's cache."""
    outs = [np.empty(shape, dtype) for _ in range(outputs)]
    threads = shared(max(outs[0].nbytes * outputs, *(x.nbytes for x in inputs)))
    count = threads if piece is None or threads == 1 else max(threads, -(-outs[0].size // piece))
    cut = _pieces(shape, inputs, count) if count > 1 else None
    if cut is None or len(cut[1]) < 2:
        step(outs, inputs)
        return outs[0] if outputs == 1 else outs
    flat, pieces = cut
    views = [o.reshape(-1) for o in outs] if flat else outs
    runs, caller = pool._cuts(len(pieces), threads), np.geterr()

    def run(r):
        with np.errstate(**caller):          # the caller's np.errstate holds on every thread (warn, raise, ...)
            for where, ins in pieces[runs[r]:runs[r + 1]]:
                step([v[where] for v in views], ins)
    pool.run(run, range(threads))
    return outs[0] if outputs == 1 else outs


def ufunc(f, *inputs):
    """f(*inputs) for a numpy ufunc f (multiply, add, tanh, ...), shared out (`share`) when the inputs are
    numpy arrays of one dtype and the result is large; numpy's one call otherwise."""
    big = max(x.nbytes if isinstance(x, np.ndarray) else 0 for x in inputs)
    if shared(big) == 1 or not all(isinstance(x, np.ndarray) and x.dtype == inputs[0].dtype for x in inputs):
        return f(*inputs)
    dtype = f.resolve_dtypes((inputs[0].dtype,) * len(inputs) + (None,))[-1]
    shape = np.broadcast_shapes(*(x.shape for x in inputs))
    return share(lambda outs, ins: f(*ins, out=outs[0]), shape, dtype, *inputs)


def mul(x, y): return ufunc(np.multiply, x, y)


def scaled(keep: np.ndarray, scale) -> np.ndarray:
    """random.scaled(keep, scale): keep (boolean) as numbers in scale's dtype, times scale; the cast and the
    product in one pass (numpy's multiply casts keep as astype does), shared out when large."""
    def step(outs, ins):
        np.multiply(ins[0], scale, out=outs[0], dtype=scale.dtype)
    return share(step, keep.shape, scale.dtype, keep)
