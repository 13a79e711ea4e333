"""Named activations of a GPT, to cache, read or replace: the tools of activation patching.

    logits, cache = model.run_with_cache(idx)             cache: {name: numpy array}
    logits = model.run_with_hooks(idx, hooks={name: fn})  fn(activation) -> None (read) or a replacement

The names follow the state_dict's module names. For block i (B batch, T tokens, C = n_embd, nh query
heads of width hs, E experts, k = top_k):

    transformer.h.{i}.resid_pre      (B, T, C)       the residual stream entering block i
    transformer.h.{i}.attn.pattern   (B, nh, T, T)   softmax(q kᵀ/√hs + causal mask); row t: where token t looks
    transformer.h.{i}.attn.z         (B, T, nh, hs)  each head's output (pattern @ v), before c_proj mixes them
    transformer.h.{i}.attn.out       (B, T, C)       attention's output after c_proj, the term added to the stream
    transformer.h.{i}.mlp.hidden     (B, T, hidden)  the MLP's activation, c_proj's input (SwiGLU: silu(gate)·up)
    transformer.h.{i}.mlp.out        (B, T, C)       the MLP's (or the experts' mix's) output
    transformer.h.{i}.mlp.probs      (B, T, E)       with experts: the router's probabilities (read only)
    transformer.h.{i}.mlp.experts    (B, T, k)       with experts: the chosen experts, best first (read only)
    transformer.h.{i}.mlp.weights    (B, T, k)       with experts: their weights, renormalised (read only)
    transformer.h.{i}.resid_post     (B, T, C)       the residual stream leaving block i
    transformer.ln_f.out             (B, T, C)       the final norm's output, lm_head's input

An attention-only model (attn_only) has no mlp.* names; a model with experts has no mlp.hidden (each
expert sees only its own tokens). Any module's dotted name (`transformer.h.0.mlp.c_fc`) also works
in `hooks`: the hook then gets that module's output.

Zeroing a head: hooks={"transformer.h.1.attn.z": fn} with fn returning z with z[:, :, h] = 0.

The attention pattern: the fused attention never builds it whole. `run_with_cache` therefore computes
it on the side, from c_attn's output, with the same ops as the written-out attention
(nn.attention.Attention.weights), leaving the model's own computation untouched: the logits are
bit-identical to `model(idx)`. A hook on `attn.pattern` in `run_with_hooks` makes that layer's
attention take the written-out path (softmax, hook, @ v), whose logits equal the fused path's to
rounding (about 1e-7 relative in float32).

Everything runs in eval mode (no dropout) and without a graph; activations are handed over as numpy
copies, and a replacement must have the activation's shape (it is cast to the model's dtype).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from nn.module import Module, eval_mode
from nn.moe import MoE
from tinygrad_like import Tensor, no_grad


@dataclass
class Point:
    """Where a named activation lives: a module, whether it is that module's input ("pre") or output
    ("post"), and the view of it the hook sees (`view`: array -> shown array; `unview`: back)."""
    module: Module
    kind: str                                    # "pre" (args[0]) or "post" (output)
    view: Callable = lambda a: a
    unview: Callable = lambda a, shape: a
    read_only: bool = False
    owner: Module | None = None                  # for attn.pattern: the Attention it belongs to


def hook_points(model, batch_shape: tuple[int, int]) -> dict[str, Point]:
    """{name: Point} for every named activation of `model` run on idx of shape batch_shape (B, T)."""
    points = {}
    for i, block in enumerate(model.transformer.h):
        p = f"transformer.h.{i}."
        attn = block.attn
        nh, hs = attn.n_head, attn.head_dim
        points[p + "resid_pre"] = Point(block, "pre")
        points[p + "attn.pattern"] = Point(attn.pattern, "post", owner=attn)
        points[p + "attn.z"] = Point(attn.c_proj, "pre", view=lambda a, nh=nh, hs=hs: a.reshape(*a.shape[:-1], nh, hs),
                                     unview=lambda a, shape: a.reshape(shape))
        points[p + "attn.out"] = Point(attn, "post")
        if not block.attn_only:
            if isinstance(block.mlp, MoE):
                for key, pick in (("probs", 0), ("experts", 1), ("weights", 2)):
                    points[p + "mlp." + key] = Point(
                        block.mlp.router, "post", read_only=True,
                        view=lambda a, pick=pick, k=block.mlp.top_k: routing(a, k)[pick].reshape(*batch_shape, -1))
            else:
                points[p + "mlp.hidden"] = Point(block.mlp.c_proj, "pre")
            points[p + "mlp.out"] = Point(block.mlp, "post")
        points[p + "resid_post"] = Point(block, "post")
    points["transformer.ln_f.out"] = Point(model.transformer.ln_f, "post")
    return points


def routing(router_logits: np.ndarray, top_k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(probs (N, E), chosen (N, k), weights (N, k)) from the router's logits (N, E), as nn.moe.MoE
    computes them: softmax, the k most probable experts best first, their probabilities renormalised."""
    probs = Tensor(router_logits).softmax(-1)._data                     # the same op as MoE's
    chosen = np.argsort(-probs, axis=-1, kind="stable")[:, :top_k]
    picked = np.take_along_axis(probs, chosen, axis=-1)
    return probs, chosen, picked / picked.sum(-1, keepdims=True)


def _attach(point: Point, name: str, fn: Callable):
    """Register fn(view of the activation) -> None or replacement on the point's module; the handle."""
    def apply(value):
        data = value._data if isinstance(value, Tensor) else np.asarray(value)
        new = fn(np.array(point.view(data)))                         # a copy: editing it changes nothing
        if new is None:
            return None
        if point.read_only:
            raise ValueError(f"run_with_hooks: '{name}' is read only; the hook must return None")
        new = np.asarray(new._data if isinstance(new, Tensor) else new)
        if new.shape != point.view(data).shape:
            raise ValueError(f"run_with_hooks: the hook on '{name}' returned shape {new.shape}, "
                             f"expected {point.view(data).shape}")
        return Tensor(point.unview(new, data.shape).astype(data.dtype, copy=False))

    if point.kind == "pre":
        def pre(module, args):
            new = apply(args[0])
            return None if new is None else (new, *args[1:])
        return point.module.register_forward_pre_hook(pre)

    def post(module, args, output):
        return apply(output)
    return point.module.register_forward_hook(post)


def _cache_pattern(attn, name: str, cache: dict):
    """A hook on c_attn computing the pattern on the side (the model's own attention stays fused)."""
    def hook(module, args, qkv):
        _, weights = qkv.multihead_attention(attn.n_head, attn.n_kv_head, is_causal=attn.causal, return_weights=True,
                                             prepare=attn.prepare())                # (B, nh, T, T)
        cache[name] = weights.numpy().copy()
    return attn.c_attn.register_forward_hook(hook)


def run_with_hooks(model, idx, hooks: dict | None = None, cache: dict | None = None) -> np.ndarray:
    """Logits (B, T, vocab_size) of model(idx) with each hooks[name](activation) applied (see the module
    docstring for the names); with `cache`, every named activation is also stored into it."""
    hooks = dict(hooks or {})
    idx = model._check_idx(idx)
    points = hook_points(model, idx.shape)
    modules = dict(model.named_modules())
    handles = []
    try:
        for name, fn in hooks.items():
            if name in points:
                handles.append(_attach(points[name], name, fn))
            elif name in modules:
                handles.append(_attach(Point(modules[name], "post"), name, fn))
            else:
                raise KeyError(f"run_with_hooks: no activation named '{name}'; the names are "
                               f"{sorted(points)[:8]}... (see models/inside.py) or a module's name")
        if cache is not None:
            for name, point in points.items():
                if name.endswith("attn.pattern") and name not in hooks:
                    handles.append(_cache_pattern(point.owner, name, cache))
                else:
                    handles.append(_attach(point, name, lambda a, name=name: cache.__setitem__(name, a)))
        with no_grad(), eval_mode(model):
            logits, _ = model(idx)
    finally:
        for handle in handles:
            handle.remove()
    return logits.numpy()


def run_with_cache(model, idx, hooks: dict | None = None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(logits (B, T, vocab_size), {name: activation}) for model(idx), with optional hooks applied first."""
    cache = {}
    logits = run_with_hooks(model, idx, hooks, cache)
    return logits, cache


def attention_maps(model, idx) -> list[np.ndarray]:
    """One (B, n_head, T, T) numpy array per block: who each token attends to (rows sum to 1). Runs in
    eval mode (no dropout) and without building a graph."""
    idx = model._check_idx(idx)
    with no_grad(), eval_mode(model):
        _, maps = model._trunk(idx, return_weights=True)
    return [m.numpy().copy() for m in maps]
