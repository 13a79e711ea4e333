"""Memory habits that make numpy training loops faster: the allocator setting `tune_malloc()`,
and `pieces()`, which lets a chain of elementwise steps run on cache-sized pieces.

Each training step allocates and frees many large temporary arrays. glibc serves a request above its
mmap threshold with fresh pages from the OS, which the kernel must zero, and returns them on free, so
every step pays for page faults and zeroing again. Raising the mmap and trim thresholds keeps freed
memory in the process for reuse, the effect of the environment variables MALLOC_MMAP_THRESHOLD_ and
MALLOC_TRIM_THRESHOLD_. It is process-wide and never applied on import: the engine takes it by default
with the thread count, at the first op that can share out work (`tune_malloc_by_default`;
TINYGRAD_LIKE_TUNE_MALLOC=0 turns that off), and the demos and benchmarks call it explicitly and offer a
flag to turn it off. It does nothing where glibc's mallopt is not available.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3


def tune_malloc(mmap_threshold: int = 1 << 30, trim_threshold: int = 1 << 30) -> bool:
    """Keep freed blocks below `mmap_threshold` bytes in the heap; return True when it took effect."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, mmap_threshold)) and bool(mallopt(M_TRIM_THRESHOLD, trim_threshold))


def tune_malloc_by_default() -> None:
    """The engine's default allocator setting, taken with the thread count by the first op that can share
    out work (fast/pool.py: chosen()), never at import: tune_malloc(), unless the environment variable
    TINYGRAD_LIKE_TUNE_MALLOC is 0. Without it glibc hands every large freed array back to the OS and
    maps it again at the next step; PyTorch's own caching allocator keeps such blocks for reuse too."""
    if os.environ.get("TINYGRAD_LIKE_TUNE_MALLOC", "1").strip() != "0":
        tune_malloc()


def pieces(*arrays, size: int = 1 << 16):
    """Matching pieces of same-shaped arrays, `size` elements each, for a chain of elementwise steps
    written in place: a dozen passes over a piece that stays in the CPU cache beat a dozen passes over
    arrays that do not (AdamW, GELU). Arrays up to `size` elements, or not contiguous, come back whole."""
    if arrays[0].size <= size or not all(a.flags.c_contiguous for a in arrays):
        yield arrays
        return
    flat = [a.reshape(-1) for a in arrays]
    for start in range(0, flat[0].size, size):
        yield [f[start:start + size] for f in flat]


def row_pieces(*arrays, size: int = 1 << 16):
    """Matching pieces of whole rows of C-contiguous arrays (..., n_i) with the same leading axes, each
    piece a 2-D (rows, n_i) view, about `size` elements of the first array (at least one row):
    `pieces` for a chain of steps that also reduces along the last axis (softmax, layernorm; a
    (..., 1) array of row statistics comes along in matching pieces). Arrays to be written must be
    C-contiguous, or the halves of a C-contiguous array's rows (SwiGLU's da and db): rows that
    reshape as views; other arrays' pieces would be copies."""
    if arrays[0].size == 0 or arrays[0].ndim == 0:
        yield arrays
        return
    flat = [a.reshape(-1, a.shape[-1]) for a in arrays]
    step = max(size // arrays[0].shape[-1], 1)
    for start in range(0, flat[0].shape[0], step):
        yield [f[start:start + step] for f in flat]
