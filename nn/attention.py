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

from nn.kv_cache import KVCache
from nn.linear import Linear
from nn.module import HookPoint, Module
from nn.rope import RoPE
from tinygrad_like import Tensor
from tinygrad_like.composites import causal_mask, split_heads


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
        k, v = self.repeat_kv(k), self.repeat_kv(v)                   # (B, nh, T_k, hs)

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
        """c_attn's output (B, T, (nh + 2·nkv)·hs) -> q (B, nh, T, hs), k and v (B, nkv, T, hs): the engine's
        split (composites.split_heads), heads ungrouped; with RoPE, q and k rotated to the positions start, ..."""
        B, T, _ = qkv.shape
        nh, nkv, hs = self.n_head, self.n_kv_head, self.head_dim
        q, k, v = split_heads(qkv, nh, nkv)                           # (B, nkv, nh/nkv, T, hs), (B, nkv, 1, T, hs)
        q, k, v = q.reshape(B, nh, T, hs), k.reshape(B, nkv, T, hs), v.reshape(B, nkv, T, hs)
        if self.rope is not None:
            q, k = self.rope(q, start), self.rope(k, start)
        return q, k, v

    def repeat_kv(self, x: Tensor) -> Tensor:
        """(B, nkv, T, hs) -> (B, nh, T, hs): each KV head repeated n_head // n_kv_head times in a row, so
        that query head h meets KV head h // (nh // nkv) (Tensor.repeat_interleave: an expand, whose backward
        sums the copies' gradients; the engine's sdpa repeats the same way)."""
        n_rep = self.n_head // self.n_kv_head
        return x if n_rep == 1 else x.repeat_interleave(n_rep, dim=1)

    def weights(self, q: Tensor, k: Tensor) -> Tensor:
        """softmax(q kᵀ / √hs + causal mask): q (B, nh, T, hs), k (B, nh, T_k, hs) -> (B, nh, T, T_k),
        the attention pattern written out (the fused paths never build it whole)."""
        T, Tk = q.shape[-2], k.shape[-2]
        att = q @ k.transpose(-2, -1) * (1.0 / math.sqrt(self.head_dim))   # (B, nh, T, T_k)
        if self.causal:  # lower triangle aligned to the end, as the cached keys come first
            att = att.masked_fill(~causal_mask(T, Tk), -math.inf)
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
