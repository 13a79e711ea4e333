"""Reverse-mode autodiff: order the graph, then walk it backwards applying each op's backward rule.

Two phases, as in micrograd: (1) a topological order of the graph, built iteratively so that a chain
of 100,000 ops does not hit Python's recursion limit; (2) a walk over it in reverse, accumulating the
gradient of every node before passing it on to the node's parents.
"""
from __future__ import annotations

import numpy as np

from tinygrad_like.function import check_finite, enable_grad, no_grad, state


def toposort(roots) -> list:
    """Tensors reachable from `roots` through ops that need gradients, each after all of its parents."""
    order, seen = [], set()
    for root in roots:
        stack = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            ctx = node._ctx
            if ctx is not None:
                if getattr(ctx, "freed", False):
                    raise RuntimeError(
                        f"backward: the graph through {type(ctx).__name__} was already freed by an earlier "
                        "backward(). Pass retain_graph=True to the first backward() to walk it twice.")
                stack.extend((p, False) for p in ctx.parents if p.requires_grad and id(p) not in seen)
    return order


def backprop(roots, root_grads, retain_graph=False, create_graph=False, inputs=None, on_step=None) -> dict:
    """Propagate `root_grads` from `roots` to the leaves.

    Returns {id(tensor): gradient} for `inputs` when given (the `grad()` function); otherwise
    accumulates into the `.grad` of every leaf that requires grad (the `backward()` method).
    `on_step(node, g, passed)`, when given, is called once per node the walk processes, in the walk's
    order: g is the gradient the node received (summed over its uses), `passed` the [(parent, gradient)]
    it handed on (empty for a leaf, whose `.grad` is already updated). `backprop_steps` draws from it.
    """
    order = toposort(roots)
    wanted = None if inputs is None else {id(t) for t in inputs}
    grads, handed_out = {}, {id(g) for g in root_grads}
    for root, g in zip(roots, root_grads):
        grads[id(root)] = grads[id(root)] + g if id(root) in grads else g
    found, anomaly, skeletons = {}, state.detect_anomaly, {}
    with (enable_grad() if create_graph else no_grad()):
        for node in reversed(order):
            g = grads.pop(id(node), None)
            if g is None:
                if node._ctx is not None and not retain_graph:
                    node._ctx.free(skeletons)  # no gradient reached it, but its arrays must go all the same
                continue
            if wanted is not None and id(node) in wanted:
                found[id(node)] = g
            if retain_graph:
                node._last_grad = g.data  # kept for draw_graph(show_grads=True)
            ctx = node._ctx
            if ctx is None:
                if wanted is None and node.grad is None:
                    # .grad must be an array of its own (optimizers update it in place): copy g when it is
                    # a view (of a broadcast, a reshape, ...) or was already handed to another leaf or given
                    # by the caller. A fresh result, like a matmul's, is kept without paying for a copy.
                    own = g.data.flags.owndata and g.data.flags.writeable and id(g) not in handed_out
                    node.grad = g if own or create_graph else type(g)._make(np.array(g.data), None)
                    handed_out.add(id(g))
                elif wanted is None:
                    node.grad = node.grad + g
                if on_step is not None:
                    on_step(node, g, [])
                continue
            parent_grads = _unchecked_backward(ctx, g, node) if anomaly else ctx.backward(g, node)
            if not isinstance(parent_grads, tuple):
                parent_grads = (parent_grads,)
            passed = []
            for p, pg in zip(ctx.parents, parent_grads):
                if pg is None or not p.requires_grad:
                    continue
                if anomaly:
                    check_finite(ctx, pg.data, "backward gradient")
                if pg.data.dtype != p.data.dtype:
                    pg = pg.cast(p.dtype)
                passed.append((p, pg))
                if id(p) not in grads:
                    grads[id(p)] = pg
                elif create_graph:
                    grads[id(p)] = grads[id(p)] + pg
                else:  # plain arrays: the sum needs no graph, so skip the Tensor op
                    grads[id(p)] = type(pg)._make(grads[id(p)].data + pg.data, None)
            if on_step is not None:
                on_step(node, g, passed)
            if not retain_graph:
                ctx.free(skeletons)
    return found


def _unchecked_backward(ctx, g, node):
    """Under detect_anomaly, the backward rule's own ops are not checked one by one: an Inf there is
    reported as this op's gradient, naming the op whose rule produced it."""
    state.detect_anomaly = False
    try:
        return ctx.backward(g, node)
    finally:
        state.detect_anomaly = True
