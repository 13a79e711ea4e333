"""Where each of our GPT's weights lives in Hugging Face transformers' GPT-2, Llama and Mixtral: one table
per family, read in both directions (`to_theirs` for save_pretrained, `to_ours` for from_pretrained).

A row is (our name, their name or names, layout). In the names, {i} is a layer, {e} an expert and {k}
"weight" or "bias". The layouts:

    same        the same array
    T           transposed: GPT-2's Conv1D computes x W + b with W (in, out), our Linear x Wᵀ + b
    rows(cut)   ours is theirs stacked along rows, e.g. c_attn = [q_proj; k_proj; v_proj]; `cut(config)`
                gives the row indices where our array splits into theirs (np.split)

GPT-2 keeps nanoGPT's names, which are ours (Hugging Face files often drop the "transformer." prefix:
models/gpt.py's from_hf_gpt2 accepts both). Llama and Mixtral rename every layer and split our fused
projections. RoPE needs no permutation: both rotate halves (dimension i pairs with i + head_dim/2).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Row:
    ours: str
    theirs: tuple[str, ...]
    transpose: bool = False
    cut: Callable | None = None   # config -> split indices, when len(theirs) > 1


def same(ours: str, theirs: str | None = None) -> Row:
    return Row(ours, (theirs or ours,))


def T(ours: str) -> Row:
    return Row(ours, (ours,), transpose=True)


def rows(ours: str, cut: Callable, *theirs: str) -> Row:
    return Row(ours, theirs, cut=cut)


def qkv_cut(c) -> list[int]:
    """c_attn's rows: [q (n_head·head_dim) | k (kv_heads·head_dim) | v (kv_heads·head_dim)]."""
    return [c.n_head * c.head_dim, (c.n_head + c.kv_heads) * c.head_dim]


def gate_up_cut(c) -> list[int]:
    """A SwiGLU c_fc's rows: [gate (hidden) | up (hidden)]."""
    return [c.hidden]


H = "transformer.h.{i}."
L = "model.layers.{i}."

GPT2 = (
    same("transformer.wte.weight"), same("transformer.wpe.weight"),
    same(H + "ln_1.{k}"), T(H + "attn.c_attn.weight"), same(H + "attn.c_attn.bias"),
    T(H + "attn.c_proj.weight"), same(H + "attn.c_proj.bias"),
    same(H + "ln_2.{k}"), T(H + "mlp.c_fc.weight"), same(H + "mlp.c_fc.bias"),
    T(H + "mlp.c_proj.weight"), same(H + "mlp.c_proj.bias"),
    same("transformer.ln_f.{k}"), same("lm_head.weight"),
)

_LLAMA_TRUNK = (
    same("transformer.wte.weight", "model.embed_tokens.weight"),
    same(H + "ln_1.weight", L + "input_layernorm.weight"),
    rows(H + "attn.c_attn.{k}", qkv_cut, L + "self_attn.q_proj.{k}", L + "self_attn.k_proj.{k}",
         L + "self_attn.v_proj.{k}"),
    same(H + "attn.c_proj.{k}", L + "self_attn.o_proj.{k}"),
    same(H + "ln_2.weight", L + "post_attention_layernorm.weight"),
    same("transformer.ln_f.weight", "model.norm.weight"),
    same("lm_head.weight"),
)

LLAMA = _LLAMA_TRUNK + (
    rows(H + "mlp.c_fc.{k}", gate_up_cut, L + "mlp.gate_proj.{k}", L + "mlp.up_proj.{k}"),
    same(H + "mlp.c_proj.{k}", L + "mlp.down_proj.{k}"),
)

MOE = L + "block_sparse_moe."
MIXTRAL = _LLAMA_TRUNK + (   # the per-expert layout transformers saves
    same(H + "mlp.router.weight", MOE + "gate.weight"),
    rows(H + "mlp.experts.{e}.c_fc.weight", gate_up_cut, MOE + "experts.{e}.w1.weight", MOE + "experts.{e}.w3.weight"),
    same(H + "mlp.experts.{e}.c_proj.weight", MOE + "experts.{e}.w2.weight"),
)

TABLES = {"gpt2": GPT2, "llama": LLAMA, "mixtral": MIXTRAL}

_FIELD = {"i": r"(?P<i>\d+)", "e": r"(?P<e>\d+)", "k": r"(?P<k>weight|bias)"}


def _pattern(name: str) -> re.Pattern:
    parts = re.split(r"\{(\w)\}", name)  # literal, field, literal, field, ...
    return re.compile("".join(_FIELD[p] if i % 2 else re.escape(p) for i, p in enumerate(parts)))


def row_of(table, ours: str) -> tuple[Row, list[str]]:
    """The row holding our parameter `ours`, and its names in their file."""
    for row in table:
        if m := _pattern(row.ours).fullmatch(ours):
            return row, [t.format(**m.groupdict()) for t in row.theirs]
    raise KeyError(f"no Hugging Face name for our parameter '{ours}'")


def to_theirs(table, state: dict, config) -> dict[str, np.ndarray]:
    """Our state dict {name: array} -> their names and layouts (views; callers copy what they keep)."""
    out = {}
    for name, array in state.items():
        row, theirs = row_of(table, name)
        array = array.T if row.transpose else array
        out.update(zip(theirs, np.split(array, row.cut(config)) if row.cut else [array]))
    return out


def to_ours(table, weights: dict, names) -> tuple[dict[str, np.ndarray], list[str]]:
    """Our arrays named `names` from `weights` (their names and layouts): ({our name: array}, the names
    of theirs that are missing). The entries used are popped from `weights`, so what is left in it
    has no place in our model."""
    out, missing = {}, []
    for name in names:
        row, theirs = row_of(table, name)
        lacking = [t for t in theirs if t not in weights]
        if lacking:
            missing += lacking
            continue
        parts = [weights.pop(t) for t in theirs]
        array = np.concatenate(parts) if len(parts) > 1 else parts[0]
        out[name] = array.T if row.transpose else array
    return out, missing
