"""Reverse-mode autodiff: walk the graph from the loss back to the leaves, newest tensor first, applying
each op's backward rule.

Every Tensor gets a number when it is made (`Tensor._tape_index`, its place on the tape), and a tensor is
always made after the tensors it is computed from. So walking tensors from the highest number down reaches
each one after every tensor computed from it, which is when its gradient is complete: the forward pass
played backwards (PyTorch's engine orders its nodes by such a sequence number too). The walk keeps the
tensors that have received a gradient in a heap and takes the newest each time; a tensor joins the heap
when its first gradient arrives, so no separate pass has to sort the graph before the walk.

`backprop` is the walk, in the textbook's four steps; `accumulate` and `into_leaf` are how gradients add
up. What the library builds around the walk (grad()'s answers, retain_grad, anomaly checks, the drawings'
last gradient, the step-through page, freeing the graph) is in scaffolding.py, called where the walk names
it (`around.`). `backward` (Tensor.backward's) and `grad` (the functional form) start a walk from `seed`.
"""
from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

import numpy as np

from tinygrad_like.function import state
from tinygrad_like.scaffolding import Around

if TYPE_CHECKING:
    from tinygrad_like.tensor import Tensor


def backprop(roots, root_grads, retain_graph=False, create_graph=False, inputs=None, on_step=None) -> dict:
    """Propagate `root_grads` from `roots` to the leaves.

    Returns {tensor: gradient} for `inputs` when given (the `grad()` function); otherwise
    accumulates into the `.grad` of every leaf that requires grad (the `backward()` method).
    `on_step(node, g, passed)`, when given, is called once per node the walk processes, in the walk's
    order: g is the gradient the node received (summed over its uses), `passed` the [(parent, gradient)]
    it handed on (empty for a leaf, whose `.grad` is already updated). `backprop_steps` draws from it.
    """
    around = Around(retain_graph, create_graph, inputs, on_step)
    grads, ready = {}, []               # {tensor: its gradient so far}; the heap of tensors to walk, newest first
    handed_out = set(root_grads)        # gradients the caller holds: a leaf's .grad must not be one of them
    for root, g in zip(roots, root_grads):
        accumulate(grads, ready, root, g, create_graph)
    recording, state.grad_enabled = state.grad_enabled, create_graph   # rules record a graph for create_graph
    try:
        while ready:
            node = heapq.heappop(ready)[-1]   # 1. the newest tensor left: every tensor made from it has been
            g = grads.pop(node)               #    walked, so its gradient is complete
            if node._ctx is None:             # 2. a leaf: its gradient is an answer
                if inputs is None:
                    into_leaf(node, g, create_graph, handed_out)
                around.leaf(node, g)
                continue
            ctx = node._ctx
            around.before_rule(node, g)
            parents = ctx.parents
            if g is None:                     # only rules that sent it no gradient reached it: it passes none on
                pgs = (None,) * len(parents)
            else:                             # 3. the op's backward rule: a gradient for each parent
                pgs = around.unchecked_rule(ctx, g, node) if around.anomaly else ctx.backward(g, node)
                pgs = pgs if isinstance(pgs, tuple) else (pgs,)
            around.after_rule(node, parents, g, pgs)
            for parent, pg in zip(parents, pgs):
                if parent.requires_grad:      # 4. gradients that meet at a tensor add up
                    accumulate(grads, ready, parent, pg, create_graph)
    finally:
        state.grad_enabled = recording
    return around.found


def accumulate(grads: dict, ready: list, t, g, create_graph: bool) -> None:
    """Add the gradient g (None: none) into t's, in t's dtype; t joins the walk with its first one. Without
    create_graph the sum needs no graph, so the arrays are added without a Tensor op."""
    if g is not None and g._data.dtype != t._data.dtype:
        g = g.cast(t.dtype)
    if t not in grads:
        grads[t] = g
        heapq.heappush(ready, (-t._tape_index, -id(t), t))   # newest first (a deepcopy's tie: by id)
    elif g is None:
        pass
    elif grads[t] is None:
        grads[t] = g
    else:
        grads[t] = grads[t] + g if create_graph else type(g)._result(np.asarray(grads[t]._data + g._data), None)


def into_leaf(node, g, create_graph: bool, handed_out: set) -> None:
    """A leaf's complete gradient, added into its `.grad` (accumulated across backward calls, as in PyTorch).
    .grad must be an array of its own (optimizers update it in place): g is copied when it is a view (of a
    broadcast, a reshape, ...) or was already handed out; a fresh result is kept."""
    if g is None:
        return
    if node.grad is None:
        own = g not in handed_out and g._data.flags.owndata and g._data.flags.writeable
        node.grad = g if own or create_graph else type(g)._result(g._data.copy(), None)
        handed_out.add(g)
    elif create_graph:
        node.grad = node.grad + g
    else:
        node.grad = type(g)._result(np.asarray(node.grad._data + g._data), None)   # 0-d + 0-d: a numpy scalar


def seed(out: Tensor, g, op: str, argument: str) -> Tensor:
    """The gradient the walk starts from at `out`: g as a Tensor of out's shape, or 1 for a one-element out."""
    if not out.requires_grad:
        raise RuntimeError(f"{op}: this tensor does not require grad (no input had requires_grad=True, "
                           "or it was computed under no_grad())")
    if g is None:
        if out._data.size != 1:
            raise RuntimeError(f"{op}: output of shape {out.shape} is not a scalar; reduce it first "
                               f"(e.g. .sum()) or pass {argument}= with the same shape")
        return out._result(np.ones_like(out._data), None)
    g = g if hasattr(g, "_ctx") else out._result(np.asarray(g, dtype=out.dtype), None)   # a Tensor, or an array
    if g._data.shape != out._data.shape:
        raise ValueError(f"{op}: gradient of shape {g.shape} does not match output of shape {out.shape}")
    return g


def backward(out: Tensor, gradient=None, retain_graph=False, create_graph=False) -> None:
    """Tensor.backward: d(out)/d(leaf) into every leaf's .grad, from `gradient` (None: 1 for a scalar out)."""
    backprop([out], [seed(out, gradient, "backward", "gradient")], retain_graph or create_graph, create_graph)


def grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None, allow_unused=False):
    """d(outputs)/d(inputs) as a list of Tensors, leaving every `.grad` untouched.

    outputs, inputs: a Tensor or a sequence of them. With allow_unused, an input the outputs do not
    depend on gets None; otherwise that is an error.
    """
    outputs = [outputs] if hasattr(outputs, "_ctx") else list(outputs)
    inputs = [inputs] if hasattr(inputs, "_ctx") else list(inputs)
    if grad_outputs is None or hasattr(grad_outputs, "_ctx"):
        grad_outputs = [grad_outputs] * len(outputs) if grad_outputs is None else [grad_outputs]
    seeds = [seed(out, g, "grad", "grad_outputs") for out, g in zip(outputs, grad_outputs)]
    retain = create_graph if retain_graph is None else retain_graph
    found = backprop(outputs, seeds, retain_graph=retain, create_graph=create_graph, inputs=inputs)
    result = []
    for i, t in enumerate(inputs):
        g = found.get(t)
        if g is None and not allow_unused:
            raise RuntimeError(f"grad: input {i} (shape {t.shape}) is not used to compute the outputs; "
                               "pass allow_unused=True to get None for it")
        result.append(g)
    return result
