"""The fast path: everything in the engine that exists for speed, beside the teaching core.

- fused.py: fused ops, each one graph node replacing one composite op of the core (composites.py)
- flash.py: attention in cache-sized tiles, for the fused attention ops
- pool.py: the one pool of threads (products, attention, GELU)
- elementwise.py: large elementwise work (masked_fill, small powers, the walk's Mul and Tanh rules, dropout's
  mask) in pieces on the pool, the same bits
- memory.py: cache-sized pieces of arrays, and the allocator setting `tune_malloc`
- adam.py: Adam's update in cache-sized pieces or a kernel, for nn/optim.py
- grad_norm.py: clip_grad_norm's squared norms in one compiled pass per gradient, for nn/optim.py
- streams.py: PyTorch's bernoulli draw (dropout's mask, or its noise) in one compiled pass, for
  pytorch_streams/generator.py
- walk.py: Tensor.backward's walk when no feature is in use, in one function, on arrays
- apply.py: Function.apply for the ops of one or two Tensors and no options (Add, Mul, Exp, ...)
- arrays.py: shared array helpers (row sums and maxima as BLAS products, ...), and the faster array
  functions of four primitives (matmul on the pool, embedding rows, small powers, a value put where a mask says)

Importing this package (which `import tinygrad_like` does) registers all of these with the core
(dispatch.py), gives the ops of one or two Tensors apply.py's apply, and changes nothing else: numpy's
threads and the allocator stay as they are until
`set_num_threads` or `tune_malloc` is called, or the first op that can share out work takes the defaults
(every usable core, BLAS held to one thread, the allocator setting; pool.chosen).

`enabled()` says whether the fast path is on; `with enabled(False):` turns it off for a block (the
core's composites run, as inside `tinygrad_like.composed()`), `with enabled(True):` on.
"""
from __future__ import annotations

from tinygrad_like.dispatch import register_fused, register_kernel
from tinygrad_like.fast import adam, apply, arrays, elementwise, fused, grad_norm, pool, streams, walk
from tinygrad_like.fast.memory import tune_malloc
from tinygrad_like.fast.pool import get_num_threads, set_num_threads
from tinygrad_like.function import fast_path, state

FUSED_OPS = (fused.Linear, fused.Softmax, fused.LogSoftmax, fused.LayerNorm, fused.RMSNorm, fused.Gelu, fused.GeluErf,
             fused.Silu, fused.SwiGLU, fused.CrossEntropy, fused.Attention, fused.MultiHeadAttention)

for _op in FUSED_OPS:
    register_fused(_op.composite, _op, _op.from_composite, _op.accepts)
register_kernel("matmul", pool.matmul)
register_kernel("power", arrays.power)
register_kernel("where", arrays.where)
register_kernel("scaled", elementwise.scaled)
register_kernel("add_rows", arrays.add_rows)
register_kernel("adam_update", adam.run_update)
register_kernel("adam_group", adam.run_group)
register_kernel("squares_sums", grad_norm.squares_sums)
register_kernel("keep_below", streams.keep_below)
register_kernel("keep_below_scaled", streams.keep_below_scaled)
apply.install()
walk.install()


def enabled(on: bool | None = None):
    """enabled() -> whether the fast path is on (in this thread). enabled(False) / enabled(True): a
    context manager that turns it off / on for the block inside `with`."""
    return state.fused if on is None else fast_path(on)


__all__ = ["enabled", "get_num_threads", "set_num_threads", "tune_malloc", "FUSED_OPS"]
