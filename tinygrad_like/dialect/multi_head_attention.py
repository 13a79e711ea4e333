"""torch.nn.functional.multi_head_attention_forward: nn.MultiheadAttention's computation with the weights
passed in, in PyTorch's sequence-first layout (L, N, E), composed of engine ops.

    q, k, v = the input projections of query, key, value       (L, N, E), (S, N, E), (S, N, E)
    each split into num_heads heads of E / num_heads            (N·H, L, hd), (N·H, S, hd)
    weights = softmax(q kᵀ / √hd + mask)                        (N·H, L, S), dropped out while training
    output  = out_proj(weights v, heads side by side)           (L, N, E)

PyTorch's masks say where NOT to attend: a bool attn_mask or key_padding_mask is True at the positions to
leave out (the opposite of scaled_dot_product_attention's); a float mask is added to the scores. bias_k and
bias_v append one learned key and value; add_zero_attn appends a zero key and value.
"""
from __future__ import annotations

import math

import numpy as np

from tinygrad_like.errors import ShapeError
from tinygrad_like.tensor import Tensor

__all__ = ["multi_head_attention_forward"]


def _float_mask(mask, dtype, what: str) -> Tensor | None:
    """A bool mask (True: leave out) as 0 / −inf, a float mask as it is."""
    if mask is None:
        return None
    mask = mask if isinstance(mask, Tensor) else Tensor(np.asarray(mask))
    if mask.dtype == bool:
        return mask._result(np.where(mask._data, -np.inf, 0.0).astype(dtype), None)
    if mask.dtype.kind != "f":
        raise TypeError(f"multi_head_attention_forward: {what} must be bool or floating point, got {mask.dtype}")
    return mask.cast(dtype) if mask.dtype != dtype else mask


def _pad_last(mask: Tensor | None) -> Tensor | None:
    """One more column of zeros at the end (for the key appended by bias_k or add_zero_attn)."""
    return None if mask is None else mask.pad((0, 1))


def multi_head_attention_forward(query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn: bool, dropout_p: float,
                                 out_proj_weight: Tensor, out_proj_bias, training: bool = True, key_padding_mask=None,
                                 need_weights: bool = True, attn_mask=None, use_separate_proj_weight: bool = False,
                                 q_proj_weight=None, k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights: bool = True, is_causal: bool = False):
    """(attn_output (L, N, E), attn_weights (N, L, S) averaged over heads, or (N, H, L, S), or None when
    need_weights is False). Unbatched inputs (L, E) give (L, E) and (L, S). See the module's docstring."""
    unbatched = query.ndim == 2
    if unbatched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = (key_padding_mask if isinstance(key_padding_mask, Tensor)
                                else Tensor(np.asarray(key_padding_mask))).unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    if embed_dim != embed_dim_to_check or embed_dim % num_heads:
        raise ShapeError(f"multi_head_attention_forward: query {query.shape} must be (L, N, E) with E = "
                         f"embed_dim_to_check = {embed_dim_to_check}, divisible by num_heads = {num_heads}")
    if key.shape[:2] != value.shape[:2] or key.shape[1] != bsz:
        raise ShapeError(f"multi_head_attention_forward: key {key.shape} and value {value.shape} must be (S, N, ·) "
                         f"with the query's N = {bsz}")
    head_dim = embed_dim // num_heads

    # ---- the input projections
    if use_separate_proj_weight:
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    else:
        w_q, w_k, w_v = in_proj_weight.chunk(3, 0)
    b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3, 0)
    q, k, v = query.linear(w_q, b_q), key.linear(w_k, b_k), value.linear(w_v, b_v)

    # ---- the masks, as floats added to the scores: attn_mask (L, S) or (N·H, L, S), key_padding_mask (N, S)
    mask = _float_mask(attn_mask, q.dtype, "attn_mask")
    if mask is None and is_causal:
        mask = q._result(np.triu(np.full((tgt_len, key.shape[0]), -np.inf, dtype=q.dtype), 1), None)
    padding = _float_mask(key_padding_mask, q.dtype, "key_padding_mask")
    if bias_k is not None and bias_v is not None:                     # one more learned key and value
        k = Tensor.cat(k, bias_k.expand(1, bsz, embed_dim), dim=0)
        v = Tensor.cat(v, bias_v.expand(1, bsz, embed_dim), dim=0)
        mask, padding = _pad_last(mask), _pad_last(padding)

    # ---- heads: (len, N, E) -> (N·H, len, hd)
    def heads(x: Tensor) -> Tensor:
        return x.reshape(x.shape[0], bsz * num_heads, head_dim).transpose(0, 1)

    q = heads(q)
    k = heads(k) if static_k is None else static_k
    v = heads(v) if static_v is None else static_v
    if add_zero_attn:                                                 # one more key and value, all zeros
        zeros = k._result(np.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype), None)
        k, v = Tensor.cat(k, zeros, dim=1), Tensor.cat(v, zeros, dim=1)
        mask, padding = _pad_last(mask), _pad_last(padding)
    src_len = k.shape[1]
    if padding is not None:                                           # (N, S) -> (N·H, 1, S)
        if padding.shape != (bsz, src_len):
            raise ShapeError(f"multi_head_attention_forward: key_padding_mask {padding.shape} must be (N, S) = "
                             f"{(bsz, src_len)}")
        padding = padding.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len).reshape(
            bsz * num_heads, 1, src_len)
        mask = padding if mask is None else mask + padding

    # ---- attention
    scores = (q * (1 / math.sqrt(head_dim))) @ k.transpose(-2, -1)    # (N·H, L, S)
    if mask is not None:
        scores = scores + mask
    weights = scores.softmax(-1)
    dropped = weights.dropout(dropout_p) if training and dropout_p > 0 else weights
    out = (dropped @ v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = out.linear(out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
    if unbatched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        weights = weights.mean(1)
    return out, (weights.squeeze(0) if unbatched else weights)
