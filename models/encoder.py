"""Encoder: the GPT stack with bidirectional attention, read out as sentence embeddings.

A language model masks the future because it must predict it; a model that only reads (to embed,
classify or retrieve) lets every token attend to every other token. That one switch, causal=False,
turns models.gpt's stack into the shape of BERT-style embedding models such as bge-small-en-v1.5:

    states = Encoder(config)(idx, attention_mask)          (B, T, C) one vector per token
    e      = mean of states over the real tokens            (B, C)
    embed  = e / ||e||                                      (B, C) unit length, so a dot product
                                                                   of two embeddings is their cosine

Padding: attention_mask (B, T) is 1 for real tokens and 0 for padding, right-padded (every row is
ones, then zeros), as tokenizers pad a batch. nn.Attention has no attention-mask input, so instead
of masking padded keys, each row is run on its real tokens only (rows of equal length together, as
one batch); the result is exactly what masking would give, and padding positions get zero states.
(With experts, last_aux_loss then describes the last of those batches only.)
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from models.config import GPTConfig
from models.gpt import Transformer
from nn import init
from tinygrad_like import Tensor

__all__ = ["Encoder"]


class Encoder(Transformer):
    """transformer.wte, wpe, h.N (bidirectional Blocks), ln_f; no lm_head.

    The config's `causal` is ignored: an encoder is bidirectional (self.config has causal=False).
    Its parameters are those of models.arithmetic.named_shapes(config) without lm_head.
    """

    def __init__(self, config: GPTConfig):
        if not isinstance(config, GPTConfig):
            raise TypeError(f"Encoder: expected a GPTConfig, got {type(config).__name__}")
        super().__init__(replace(config, causal=False))
        init.gpt2_init_(self, config.n_layer)

    def forward(self, idx, attention_mask=None) -> Tensor:
        """idx (B, T) ints [, attention_mask (B, T) of 1/0] -> token states (B, T, C) after ln_f."""
        idx = self._check_idx(idx)
        if attention_mask is None:
            return self._trunk(idx)
        lengths = self._lengths(attention_mask, idx.shape)                   # (B,) real tokens per row
        B, T = idx.shape
        pieces, rows_in_order = [], []
        for n in np.unique(lengths):                                         # one batch per length
            rows = np.nonzero(lengths == n)[0]
            h = self._trunk(idx[rows, :n])                                   # (b, n, C)
            if n < T:
                pad = Tensor(np.zeros((len(rows), T - n, h.shape[-1]), dtype=h.dtype))
                h = Tensor.cat(h, pad, dim=1)                                # (b, T, C)
            pieces.append(h)
            rows_in_order.append(rows)
        order = np.concatenate(rows_in_order)                                # row of the batch each piece row is
        inverse = np.empty_like(order)
        inverse[order] = np.arange(B)
        return Tensor.cat(pieces, dim=0)[inverse]                            # (B, T, C) in the input's order

    def embed(self, idx, attention_mask=None) -> Tensor:
        """Sentence embeddings (B, C): token states averaged over the real tokens, scaled to length 1."""
        states = self(idx, attention_mask)                                   # (B, T, C)
        B, T, _ = states.shape
        mask = np.ones((B, T)) if attention_mask is None else np.asarray(_data(attention_mask), dtype=np.float64)
        weights = Tensor((mask / mask.sum(1, keepdims=True))[:, :, None].astype(states.dtype))  # (B, T, 1)
        pooled = (states * weights).sum(1)                                   # (B, C) the mean
        norm = (pooled * pooled).sum(-1, keepdim=True).sqrt().maximum(1e-12)  # (B, 1)
        return pooled / norm

    @staticmethod
    def _lengths(attention_mask, shape) -> np.ndarray:
        """Real tokens per row of a right-padded 1/0 mask, or a clear error."""
        mask = np.asarray(_data(attention_mask))
        if mask.shape != tuple(shape):
            raise ValueError(f"Encoder: attention_mask has shape {mask.shape}, idx has {tuple(shape)}")
        if not np.isin(mask, (0, 1)).all():
            raise ValueError("Encoder: attention_mask must hold only 1 (token) and 0 (padding)")
        mask = mask.astype(bool)
        lengths = mask.sum(1)
        right_padded = mask == (np.arange(shape[1]) < lengths[:, None])
        if not right_padded.all():
            raise ValueError("Encoder: attention_mask must be right-padded (each row ones, then zeros)")
        if (lengths == 0).any():
            raise ValueError(f"Encoder: row {int(np.argmin(lengths))} of attention_mask has no tokens")
        return lengths


def _data(x):
    return x._data if isinstance(x, Tensor) else x
