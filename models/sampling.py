"""Choosing the next token from logits, in numpy without a graph: greedy, temperature, top-k and nucleus
(top-p) filtering, and one draw per row by inverse CDF. GPT.generate (models/gpt.py) calls these.

Reference: Holtzman et al. 2020, nucleus sampling (https://arxiv.org/abs/1904.09751).
"""
from __future__ import annotations

import math
from numbers import Real

import numpy as np

from tinygrad_like import random as _random


def check_sampling(temperature, top_k, top_p) -> None:
    if not (isinstance(temperature, Real) and temperature >= 0 and math.isfinite(temperature)):
        raise ValueError(f"generate: temperature must be a number >= 0 (0 is greedy), got {temperature!r}")
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 1):
        raise ValueError(f"generate: top_k must be an integer >= 1 or None, got {top_k!r}")
    if top_p is not None and not (isinstance(top_p, Real) and 0 < top_p <= 1):
        raise ValueError(f"generate: top_p must be in (0, 1] or None, got {top_p!r}")


def filter_logits(logits: np.ndarray, top_k: int | None = None, top_p: float | None = None) -> np.ndarray:
    """logits (B, V) with the tokens that may not be sampled set to -inf (a float64 copy).

    top_k: keep the k largest logits of each row (ties at the k-th value are all kept).
    top_p (nucleus): keep the smallest set of most probable tokens whose probability reaches p: a
    token is dropped when the tokens more probable than it already sum to >= p. The most probable
    token is always kept.
    """
    out = np.array(logits, dtype=np.float64)
    if top_k is not None and top_k < out.shape[-1]:
        kth = np.sort(out, axis=-1)[:, -top_k][:, None]                    # (B, 1) the k-th largest
        out[out < kth] = -np.inf
    if top_p is not None and top_p < 1:
        order = np.argsort(-out, axis=-1, kind="stable")                    # (B, V) most probable first
        probs = np.take_along_axis(_softmax(out), order, axis=-1)
        before = np.cumsum(probs, axis=-1) - probs                          # mass of the better tokens
        drop = np.zeros_like(out, dtype=bool)
        np.put_along_axis(drop, order, before >= top_p, axis=-1)
        out[drop] = -np.inf
    return out


def sample_logits(logits: np.ndarray, temperature: float = 1.0, top_k: int | None = None,
                  top_p: float | None = None, rng: np.random.Generator | None = None) -> np.ndarray:
    """One token per row of logits (B, V): argmax for temperature 0, else a draw from
    softmax(filter_logits(logits / temperature)) by inverse CDF with one uniform number per row."""
    logits = np.asarray(logits, dtype=np.float64)
    if temperature == 0:
        return np.argmax(logits, axis=-1)
    probs = _softmax(filter_logits(logits / temperature, top_k, top_p))     # (B, V)
    u = (rng if rng is not None else _random.rng()).random((logits.shape[0], 1))
    cdf = np.cumsum(probs, axis=-1)
    return np.minimum((cdf < u * cdf[:, -1:]).sum(-1), logits.shape[-1] - 1)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)
