"""Causal self-attention (multi-head and grouped-query), with optional RoPE and a KV cache.

    q, k, v = x W_qkvᵀ split in three                    (one combined projection, `c_attn`)
    y_h     = softmax(q_h k_hᵀ / √hs + mask) v_h          (per head h; the engine's sdpa)
    y       = cat(y_1 .. y_nh) W_projᵀ                    (`c_proj`)

Grouped-query attention (GQA): only n_kv_head key/value heads are computed and cached; query head h
reads KV head h // (n_head // n_kv_head). With n_kv_head = n_head this is plain multi-head
attention, with n_kv_head = 1 it is multi-query attention. The KV cache shrinks by n_head / n_kv_head.

Without RoPE, a KV cache, attention dropout or weights to return, everything between c_attn and
c_proj is the engine's `Tensor.multihead_attention` (one fused op on the fast path; split, sdpa and
join inside `with composed():`); otherwise the heads are split here and attended with the engine's sdpa.

Names follow nanoGPT (`c_attn`, `c_proj`, B, T, C, nh, hs), so GPT-2 weights load by name.
References: Vaswani et al. 2017 (https://arxiv.org/abs/1706.03762); Ainslie et al. 2023, GQA
(https://arxiv.org/abs/2305.13245); Karpathy's nanoGPT model.py.
"""
from __future__ import annotations

import math

import numpy as np

from nn.linear import Linear
from nn.module import HookPoint, Module
from nn.rope import RoPE
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


def repeat_kv(x: Tensor, n_rep: int) -> Tensor:
    """(B, nkv, T, hs) -> (B, nkv·n_rep, T, hs), each KV head repeated n_rep times in a row,
    so that query head h meets KV head h // n_rep. The backward of expand sums the copies' gradients."""
    if n_rep == 1:
        return x
    B, nkv, T, hs = x.shape
    x = x.unsqueeze(2).expand(B, nkv, n_rep, T, hs)   # (B, nkv, n_rep, T, hs)
    return x.reshape(B, nkv * n_rep, T, hs)           # (B, nh, T, hs)


class Attention(Module):
    """Self-attention over x (B, T, C) -> (B, T, C), C = dim.

    dim: model width; n_head query heads of hs = dim // n_head; n_kv_head key/value heads (None: n_head).
    causal: token t sees tokens <= t only; False lets every token see every token (a reading model).
    bias: biases in c_attn and c_proj. rope: rotate q and k by RoPE (base rope_base, table of
    max_seq_len positions). dropout: on the attention weights, in training mode only (the residual
    dropout after c_proj is the Block's job). dtype: "float32" or "float64".

    Parameters: c_attn.weight ((nh + 2·nkv)·hs, dim), rows ordered q, k, v; c_proj.weight (dim, dim).
    """

    def __init__(self, dim: int, n_head: int, n_kv_head: int | None = None, causal: bool = True, bias: bool = True,
                 rope: bool = False, dropout: float = 0.0, rope_base: float = 10000.0, max_seq_len: int = 4096,
                 dtype="float32"):
        n_kv_head = n_head if n_kv_head is None else n_kv_head
        if n_head < 1 or n_kv_head < 1 or dim < 1:
            raise ValueError(f"Attention: dim={dim}, n_head={n_head}, n_kv_head={n_kv_head} must all be positive")
        if dim % n_head:
            raise ValueError(f"Attention: dim={dim} is not divisible by n_head={n_head}")
        if n_head % n_kv_head:
            raise ValueError(f"Attention: n_head={n_head} is not divisible by n_kv_head={n_kv_head}")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"Attention: dropout must be in [0, 1), got {dropout}")
        self.dim, self.n_head, self.n_kv_head, self.head_dim = dim, n_head, n_kv_head, dim // n_head
        self.causal, self.dropout = causal, dropout
        self.c_attn = Linear(dim, (n_head + 2 * n_kv_head) * self.head_dim, bias=bias, dtype=dtype)
        self.c_proj = Linear(dim, dim, bias=bias, dtype=dtype)
        self.rope = RoPE(self.head_dim, max_seq_len, rope_base) if rope else None
        self.pattern = HookPoint()  # hooks here read or replace the weights (B, nh, T, T_k); see models/inside.py

    def forward(self, x: Tensor, kv_cache: KVCache | None = None, return_weights: bool = False):
        """y (B, T, C); with return_weights also the attention weights (B, nh, T, T_k), T_k = T plus
        the cached tokens. The weights are the softmax before attention dropout (each row sums to 1)."""
        if x.ndim != 3 or x.shape[-1] != self.dim:
            raise ValueError(f"Attention: input of shape {x.shape}, expected (B, T, {self.dim})")
        B, T, C = x.shape
        nh, nkv = self.n_head, self.n_kv_head
        qkv = self.c_attn(x)                                          # (B, T, (nh + 2·nkv)·hs)
        written_out = self.pattern.hooked or (self.training and self.dropout > 0)
        if self.rope is None and kv_cache is None and not return_weights and not written_out:
            # the common case: the engine's multi-head attention
            return self.c_proj(qkv.multihead_attention(nh, nkv, is_causal=self.causal))
        q, k, v = self.split_heads(qkv, start=kv_cache.length if kv_cache is not None else 0)
        if kv_cache is not None:
            k, v = kv_cache.append(k, v)                              # (B, nkv, T_k, hs)
        k, v = repeat_kv(k, nh // nkv), repeat_kv(v, nh // nkv)       # (B, nh, T_k, hs)

        if written_out:
            y, att = self._attend_written_out(q, k, v)
        elif return_weights:
            y, att = q.scaled_dot_product_attention(k, v, is_causal=self.causal, return_weights=True)
        else:  # with rope or a KV cache: the engine's fused sdpa op on the heads
            y = q.scaled_dot_product_attention(k, v, is_causal=self.causal)
        y = y.transpose(1, 2).reshape(B, T, C)                        # (B, T, C): heads side by side
        y = self.c_proj(y)
        return (y, att) if return_weights else y

    def split_heads(self, qkv: Tensor, start: int = 0) -> tuple[Tensor, Tensor, Tensor]:
        """c_attn's output (B, T, (nh + 2·nkv)·hs) -> q (B, nh, T, hs), k and v (B, nkv, T, hs); with
        RoPE, q and k rotated to the positions start, start + 1, ..."""
        B, T, _ = qkv.shape
        nh, nkv, hs = self.n_head, self.n_kv_head, self.head_dim
        qkv = qkv.reshape(B, T, nh + 2 * nkv, hs).transpose(1, 2)     # (B, nh + 2·nkv, T, hs)
        q = qkv[:, :nh]                                               # (B, nh, T, hs)
        k = qkv[:, nh:nh + nkv]                                       # (B, nkv, T, hs)
        v = qkv[:, nh + nkv:]                                         # (B, nkv, T, hs)
        if self.rope is not None:
            q, k = self.rope(q, start), self.rope(k, start)
        return q, k, v

    def weights(self, q: Tensor, k: Tensor) -> Tensor:
        """softmax(q kᵀ / √hs + causal mask): q (B, nh, T, hs), k (B, nh, T_k, hs) -> (B, nh, T, T_k),
        the attention pattern written out (the fused paths never build it whole)."""
        T, Tk = q.shape[-2], k.shape[-2]
        att = q @ k.transpose(-2, -1) * (1.0 / math.sqrt(self.head_dim))   # (B, nh, T, T_k)
        if self.causal:  # lower triangle aligned to the end, as the cached keys come first
            att = att.masked_fill(~np.tril(np.ones((T, Tk), dtype=bool), k=Tk - T), -math.inf)
        return att.softmax(-1)

    def _attend_written_out(self, q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """The sdpa written out, so that the weights exist whole between softmax and @ v: for dropout
        on them, and for hooks on `self.pattern`, which may read or replace them."""
        att = self.weights(q, k)                                           # (B, nh, T, T_k)
        if self.pattern.hooked:
            att = self.pattern(att)                                        # (B, nh, T, T_k)
        dropped = att.dropout(self.dropout, training=True) if self.training and self.dropout > 0 else att
        return dropped @ v, att                                            # (B, nh, T, hs)

    def extra_repr(self) -> str:
        return (f"dim={self.dim}, n_head={self.n_head}, n_kv_head={self.n_kv_head}, causal={self.causal}, "
                f"dropout={self.dropout}")
