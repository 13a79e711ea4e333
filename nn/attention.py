"""Causal self-attention (multi-head and grouped-query), with optional RoPE and a KV cache.

    q, k, v = x W_qkvᵀ split in three                    (one combined projection, `c_attn`)
    y_h     = softmax(q_h k_hᵀ / √hs + mask) v_h          (per head h; the engine's sdpa)
    y       = cat(y_1 .. y_nh) W_projᵀ                    (`c_proj`)

Grouped-query attention (GQA): only n_kv_head key/value heads are computed and cached; query head h
reads KV head h // (n_head // n_kv_head). With n_kv_head = n_head this is plain multi-head
attention, with n_kv_head = 1 it is multi-query attention. The KV cache shrinks by n_head / n_kv_head.

Everything between c_attn and c_proj is one call of the engine's `Tensor.multihead_attention`: the
engine's head split, then RoPE and the KV cache on the split heads (`prepare`), then its sdpa (hooks on
`self.pattern` read or replace the weights; dropout on them in training), then the heads joined. The
dispatch runs it as one fused op (dropout included), or composed when RoPE, a cache, hooks or weights ask for it.

Names follow nanoGPT (`c_attn`, `c_proj`, B, T, C, nh, hs), so GPT-2 weights load by name.
References: Vaswani et al. 2017 (https://arxiv.org/abs/1706.03762); Ainslie et al. 2023, GQA
(https://arxiv.org/abs/2305.13245); Karpathy's nanoGPT model.py.
"""
from __future__ import annotations

from nn.kv_cache import KVCache
from nn.linear import Linear
from nn.module import HookPoint, Module
from nn.rope import RoPE
from tinygrad_like import Tensor


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
        qkv = self.c_attn(x)                                          # (B, T, (nh + 2·nkv)·hs)
        y = qkv.multihead_attention(self.n_head, self.n_kv_head, is_causal=self.causal,
                                    dropout_p=self.dropout if self.training else 0.0,
                                    weights_hook=self.pattern if self.pattern.hooked else None,
                                    return_weights=return_weights, prepare=self.prepare(kv_cache))
        y, att = y if return_weights else (y, None)                   # (B, T, C): heads side by side
        y = self.c_proj(y)
        return (y, att) if return_weights else y

    def prepare(self, kv_cache: KVCache | None = None):
        """What changes the split heads before attention, or None: RoPE rotates q (B, nkv, nh/nkv, T, hs) and
        k (B, nkv, 1, T, hs) to the positions after the cached ones; the cache appends k and v and gives
        back all keys and values so far, (B, nkv, 1, T_k, hs)."""
        if self.rope is None and kv_cache is None:
            return None

        def rotate_and_cache(q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor, Tensor]:
            if self.rope is not None:
                start = kv_cache.length if kv_cache is not None else 0
                q, k = self.rope(q, start), self.rope(k, start)
            if kv_cache is not None:
                B, nkv, _, T, hs = k.shape
                k, v = kv_cache.append(k.reshape(B, nkv, T, hs), v.reshape(B, nkv, T, hs))   # (B, nkv, T_k, hs)
                k, v = k.reshape(B, nkv, 1, -1, hs), v.reshape(B, nkv, 1, -1, hs)
            return q, k, v
        return rotate_and_cache

    def extra_repr(self) -> str:
        return (f"dim={self.dim}, n_head={self.n_head}, n_kv_head={self.n_kv_head}, causal={self.causal}, "
                f"dropout={self.dropout}")
