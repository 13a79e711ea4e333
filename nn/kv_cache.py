"""`KVCache`: the keys and values one attention layer has seen, kept so that generating a token reads the
past once instead of recomputing it (nn/attention.py appends to it; models/gpt.py makes one per block).
"""
from __future__ import annotations

import numpy as np

from tinygrad_like import Tensor
from tinygrad_like.function import state


class KVCache:
    """The keys and values one attention layer has seen so far, (B, n_kv_head, T_so_far, hs) each.

    Make one per layer and pass it on every call: `attn(x, kv_cache=cache)` rotates the new keys to
    their positions (the cache length is the offset), appends them and attends over everything kept.
    Storage is a numpy buffer preallocated to `capacity` tokens along the time axis and doubled when
    full, so appending one token costs O(1) amortised copying, not a copy of the whole past.
    No graph is kept for the past; only the newest keys/values stay differentiable.
    """

    def __init__(self, capacity: int = 64):
        self.capacity, self.length = max(int(capacity), 1), 0
        self._k = self._v = None       # (B, n_kv_head, capacity, hs) buffers, allocated on first append

    @property
    def k(self) -> np.ndarray: return self._k[:, :, :self.length] if self._k is not None else None  # (B, nkv, T, hs)
    @property
    def v(self) -> np.ndarray: return self._v[:, :, :self.length] if self._v is not None else None  # (B, nkv, T, hs)

    @property
    def nbytes(self) -> int:
        """Bytes of the keys and values stored: 2 · B · n_kv_head · T_so_far · hs · itemsize."""
        return 0 if self._k is None else 2 * self.k.nbytes

    def reset(self) -> None:
        self._k = self._v = None
        self.length = 0

    def append(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Store k, v (B, nkv, T_new, hs); return all keys and values so far, (B, nkv, T_so_far, hs)."""
        if k.shape != v.shape or k.ndim != 4:
            raise ValueError(f"KVCache: keys {k.shape} and values {v.shape} must both be (B, n_kv_head, T, hs)")
        B, nkv, T, hs = k.shape
        if self._k is None:
            shape = (B, nkv, max(self.capacity, T), hs)
            self._k, self._v = np.empty(shape, k.dtype), np.empty(shape, v.dtype)
        elif (B, nkv, hs) != (self._k.shape[0], self._k.shape[1], self._k.shape[3]) or k.dtype != self._k.dtype:
            raise ValueError(f"KVCache: holds {self.k.shape} {self._k.dtype}, cannot append {k.shape} {k.dtype} "
                             "(batch, heads, head size and dtype must stay the same)")
        past, end = self.length, self.length + T
        if end > self._k.shape[2]:     # full: double (or more), copying the past once
            shape = (B, nkv, max(2 * self._k.shape[2], end), hs)
            for name in ("_k", "_v"):
                grown = np.empty(shape, k.dtype)
                grown[:, :, :past] = getattr(self, name)[:, :, :past]
                setattr(self, name, grown)
        self._k[:, :, past:end], self._v[:, :, past:end] = k._data, v._data
        self.length = end
        if state.grad_enabled and (k.requires_grad or v.requires_grad) and past:
            # keep the new keys/values in the graph: constant past joined to the live present
            return (Tensor.cat(Tensor(self._k[:, :, :past]), k, dim=2),    # (B, nkv, T_so_far, hs)
                    Tensor.cat(Tensor(self._v[:, :, :past]), v, dim=2))    # (B, nkv, T_so_far, hs)
        if state.grad_enabled and (k.requires_grad or v.requires_grad):
            return k, v
        return Tensor(self.k), Tensor(self.v)

    def __repr__(self):
        shape = None if self._k is None else self.k.shape
        return f"KVCache(length={self.length}, shape={shape}, nbytes={self.nbytes})"
