"""The PyTorch yardstick: the same nanoGPT architecture as models/gpt.py, written in PyTorch.

Learned positions, pre-LayerNorm blocks, GELU (tanh approximation, as ours) MLP, tied embeddings,
GPT-2 init. `attention="explicit"` writes softmax(q kᵀ/√d) v out in ops like ours does; "fused" uses
F.scaled_dot_product_attention. Only imported when torch is installed (`pip install torch==2.13.0`).
"""
from __future__ import annotations

import math

import torch
import torch.nn as tnn
import torch.nn.functional as F


class CausalSelfAttention(tnn.Module):
    def __init__(self, n_embd: int, n_head: int, attention: str):
        super().__init__()
        self.n_head, self.attention = n_head, attention
        self.c_attn = tnn.Linear(n_embd, 3 * n_embd)
        self.c_proj = tnn.Linear(n_embd, n_embd)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))  # (B, nh, T, hs)
        if self.attention == "fused":
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))                         # (B, nh, T, T)
            mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
            att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
            y = att @ v
        return self.c_proj(y.transpose(1, 2).reshape(B, T, C))


class Block(tnn.Module):
    def __init__(self, n_embd: int, n_head: int, attention: str):
        super().__init__()
        self.ln_1, self.ln_2 = tnn.LayerNorm(n_embd), tnn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, attention)
        self.mlp = tnn.Sequential()
        self.mlp.c_fc = tnn.Linear(n_embd, 4 * n_embd)
        self.mlp.gelu = tnn.GELU(approximate="tanh")
        self.mlp.c_proj = tnn.Linear(4 * n_embd, n_embd)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class TorchGPT(tnn.Module):
    def __init__(self, vocab_size: int, block_size: int, n_layer: int, n_head: int, n_embd: int,
                 attention: str = "explicit"):
        super().__init__()
        self.transformer = tnn.ModuleDict(dict(
            wte=tnn.Embedding(vocab_size, n_embd), wpe=tnn.Embedding(block_size, n_embd),
            h=tnn.ModuleList([Block(n_embd, n_head, attention) for _ in range(n_layer)]),
            ln_f=tnn.LayerNorm(n_embd)))
        self.lm_head = tnn.Linear(n_embd, vocab_size, bias=False)
        self.lm_head.weight = self.transformer.wte.weight
        for name, p in self.named_parameters():
            if name.endswith("bias"):
                tnn.init.zeros_(p)
            elif p.dim() == 1:
                tnn.init.ones_(p)
            else:
                std = 0.02 / math.sqrt(2 * n_layer) if name.endswith("c_proj.weight") else 0.02
                tnn.init.normal_(p, 0.0, std)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        x = self.transformer.wte(idx) + self.transformer.wpe(torch.arange(T, device=idx.device))
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        loss = None if targets is None else F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                                            ignore_index=-1)
        return logits, loss
