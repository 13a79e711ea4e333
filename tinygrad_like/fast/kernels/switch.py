"""Which kernels run: none without numba, else as the environment variable TINYGRAD_LIKE_KERNELS says
("off" or "0": none; "numba" or "c": that variant for every op that has it; "on" or unset: each op's kept
variant, arrays.KEPT). Read at every choice, so that a test or a benchmark can set it in-process.
"""
from __future__ import annotations

import functools
import os

from tinygrad_like.fast.kernels.arrays import C_OPS


@functools.lru_cache(maxsize=1)
def numba_importable() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def choice() -> str:
    """TINYGRAD_LIKE_KERNELS as "off", "numba", "c" or "" (each op's kept variant); a clear error otherwise."""
    value = os.environ.get("TINYGRAD_LIKE_KERNELS", "").strip().lower()
    value = "off" if value in ("0", "off", "no", "false") else "" if value in ("1", "on", "yes", "true") else value
    if value not in ("", "off", "numba", "c"):
        raise ValueError(f"TINYGRAD_LIKE_KERNELS must be on, off, numba or c, got {value!r}")
    return value


def variant(op: str) -> str | None:
    """The variant forced for op by TINYGRAD_LIKE_KERNELS (None: the kept one; "numba" for ops without C)."""
    forced = choice()
    if forced == "c" and op not in C_OPS:
        return "numba"
    return forced or None
