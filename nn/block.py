"""`Block`: one transformer block, attention then a feed-forward layer, each wrapped in a residual.

Pre-norm (GPT-2, nanoGPT, Llama), the norm sits inside the residual branch:
    x = x + attn(ln_1(x))
    x = x + mlp(ln_2(x))
Post-norm (the 2017 "Attention Is All You Need" block), the norm follows each residual sum:
    x = ln_1(x + attn(x))
    x = ln_2(x + mlp(x))
attn_only=True drops ln_2 and the MLP (x = x + attn(ln_1(x)), or x = ln_1(x + attn(x))): the
attention-only blocks of Elhage et al. 2021, small enough to read what each head does.
Pre-norm keeps an untouched path from input to output, which is why deep stacks of it train without
learning-rate warm-up tricks; post-norm is here to compare against.
"""
from __future__ import annotations

from nn.attention import Attention
from nn.dropout import Dropout
from nn.mlp import MLP
from nn.module import Module
from nn.moe import MoE
from nn.norm import LayerNorm, RMSNorm
from tinygrad_like import Tensor

NORMS = ("layernorm", "rmsnorm")


def _make_norm(norm: str, dim: int, bias: bool, dtype) -> Module:
    if norm == "layernorm":
        return LayerNorm(dim, bias=bias, dtype=dtype)
    if norm == "rmsnorm":
        return RMSNorm(dim, dtype=dtype)
    raise ValueError(f"Block: unknown norm {norm!r}, expected one of {NORMS}")


class Block(Module):
    """x (B, T, C) -> (B, T, C), C = dim. Sub-layers named as in nanoGPT: ln_1, attn, ln_2, mlp.

    mlp: the activation of the feed-forward layer ("gelu", "relu" or "swiglu"), of width mlp_hidden
    (default 4·dim). n_expert > 0 makes `mlp` a MoE of that many such MLPs with top_k routing, and its
    load-balancing loss is then `block.aux_loss` after each forward (None for a dense block).
    norm: "layernorm" (with bias when bias=True) or "rmsnorm". dropout: on the attention weights
    (inside attn) and on each branch's output before it joins the residual stream, in training only.
    """

    def __init__(self, dim: int, n_head: int, n_kv_head: int | None = None, mlp_hidden: int | None = None,
                 mlp: str = "gelu", norm: str = "layernorm", prenorm: bool = True, causal: bool = True,
                 rope: bool = False, bias: bool = True, dropout: float = 0.0, n_expert: int = 0, top_k: int = 2,
                 dtype="float32", attn_only: bool = False):
        hidden = 4 * dim if mlp_hidden is None else mlp_hidden
        self.dim, self.prenorm = dim, prenorm
        self.ln_1 = _make_norm(norm, dim, bias, dtype)
        self.attn = Attention(dim, n_head, n_kv_head, causal=causal, bias=bias, rope=rope, dropout=dropout,
                              dtype=dtype)
        self.attn_only = attn_only
        if attn_only:
            self.resid_dropout = Dropout(dropout)
            return
        self.ln_2 = _make_norm(norm, dim, bias, dtype)
        if n_expert > 0:
            self.mlp = MoE(dim, hidden, n_expert, top_k=top_k, activation=mlp, bias=bias, dtype=dtype)
        else:
            self.mlp = MLP(dim, hidden, activation=mlp, bias=bias, dtype=dtype)
        self.resid_dropout = Dropout(dropout)

    @property
    def aux_loss(self) -> Tensor | None:
        """The MoE load-balancing loss of the last forward (see nn.moe.MoE), None for a dense block."""
        return self.mlp.aux_loss if isinstance(getattr(self, "mlp", None), MoE) else None

    def forward(self, x: Tensor, kv_cache=None, return_weights: bool = False):
        """x (B, T, C) -> (B, T, C); with return_weights, (x, attention weights (B, nh, T, T_k))."""
        if x.ndim != 3 or x.shape[-1] != self.dim:
            raise ValueError(f"Block: input of shape {x.shape}, expected (B, T, {self.dim})")
        if self.prenorm:
            a, weights = self._attend(self.ln_1(x), kv_cache, return_weights)
            x = x + self.resid_dropout(a)
            if not self.attn_only:
                x = x + self.resid_dropout(self.mlp(self.ln_2(x)))
        else:
            a, weights = self._attend(x, kv_cache, return_weights)
            x = self.ln_1(x + self.resid_dropout(a))
            if not self.attn_only:
                x = self.ln_2(x + self.resid_dropout(self.mlp(x)))
        return (x, weights) if return_weights else x

    def _attend(self, x: Tensor, kv_cache, return_weights: bool):
        """(attention output, weights or None): weights are asked for only when wanted, because
        without them the engine runs attention as one fused op."""
        if return_weights:
            return self.attn(x, kv_cache=kv_cache, return_weights=True)
        return self.attn(x, kv_cache=kv_cache), None

    def extra_repr(self) -> str:
        return f"{self.dim}, prenorm={self.prenorm}" + (", attn_only=True" if self.attn_only else "")
