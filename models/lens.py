"""The logit lens: read the residual stream after each block as if it were the last one.

    logits_ℓ = lm_head(ln_f(x_ℓ))        x_0 = the embeddings, x_ℓ = the stream after block ℓ (ℓ = 1..L)

so row L is the model's own output and the rows before it show when the final prediction takes
shape (nostalgebraist 2020, "interpreting GPT: the logit lens"). Each row's cross-entropy against the
targets says how much of the final loss is already reached at that depth.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinygrad_like import Tensor, no_grad


@dataclass
class Lens:
    """What logit_lens returns; L = n_layer, so L + 1 rows (the embeddings, then each block).

    names    (L + 1,) "embed", "h.0", ..., "h.{L-1}": the stream read
    logits   (L + 1, B, T, V) float64
    top      (L + 1, B, T, k) token ids, most probable first
    probs    (L + 1, B, T, k) their probabilities under softmax(logits)
    loss     (L + 1,) mean cross-entropy against the targets (nats), or None without targets
    """
    names: list[str]
    logits: np.ndarray
    top: np.ndarray
    probs: np.ndarray
    loss: np.ndarray | None


def logit_lens(model, idx, targets=None, k: int = 5) -> Lens:
    """Project the residual stream after each block through ln_f and lm_head; see the module docstring.

    idx (B, T) ints; targets (B, T) ints, the token after each position (-1: ignored); k: tokens kept
    per position. Runs without a graph, in eval mode.
    """
    _, cache = model.run_with_cache(idx)
    L = len(model.transformer.h)
    streams = [cache["transformer.h.0.resid_pre"]] + [cache[f"transformer.h.{i}.resid_post"] for i in range(L)]
    was_training = model.training
    model.eval()
    try:
        with no_grad():  # the same two layers the model ends with, on each stream in turn
            logits = np.stack([model.lm_head(model.transformer.ln_f(Tensor(x))).numpy() for x in streams])
    finally:
        model.train(was_training)
    logits = logits.astype(np.float64)                                         # (L + 1, B, T, V)
    logp = logits - logits.max(-1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(-1, keepdims=True))                        # log-softmax
    k = min(k, logits.shape[-1])
    top = np.argsort(-logits, axis=-1, kind="stable")[..., :k]                 # (L + 1, B, T, k)
    probs = np.exp(np.take_along_axis(logp, top, axis=-1))
    loss = None
    if targets is not None:
        targets = np.asarray(targets)
        if targets.shape != logits.shape[1:3]:
            raise ValueError(f"logit_lens: targets of shape {targets.shape}, expected idx's {logits.shape[1:3]}")
        keep = targets >= 0
        picked = np.take_along_axis(logp, np.where(keep, targets, 0)[None, ..., None], axis=-1)[..., 0]
        loss = -(picked * keep).sum((1, 2)) / max(keep.sum(), 1)                 # (L + 1,)
    names = ["embed"] + [f"h.{i}" for i in range(L)]
    return Lens(names, logits, top, probs, loss)
