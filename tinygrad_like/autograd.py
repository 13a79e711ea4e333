"""Reverse-mode autodiff: walk the graph from the loss back to the leaves, newest tensor first, applying
each op's backward rule.

Every Tensor gets a number when it is made (`Tensor._seq`, from one counter), and a tensor is always
made after the tensors it is computed from. So walking tensors from the highest number down reaches each
one after every tensor computed from it, which is when its gradient is complete: the forward pass played
backwards, like a tape (PyTorch's engine orders its nodes by such a sequence number too). The walk keeps
the tensors that have received a gradient in a heap and takes the newest each time; a tensor joins the
heap when its first gradient arrives, so no separate pass has to sort the graph before the walk.
"""
from __future__ import annotations

import heapq
import weakref

from tinygrad_like.function import check_finite, state

_retained = weakref.WeakValueDictionary()   # {id(t): t}, the intermediates whose .grad is kept (retain_grad)


def retain(t) -> None:
    """Keep the gradient of the intermediate tensor `t` in t.grad at every backward (Tensor.retain_grad).
    Held weakly and by id: a tensor's == is elementwise, so it cannot be looked up by equality."""
    _retained[id(t)] = t


def _keep_grad(node, g, create_graph: bool) -> None:
    """Accumulate g into the .grad of a retained intermediate, as backprop does for a leaf."""
    if node.grad is None:
        node.grad = g if create_graph else type(g)._make(g.data.copy(), None)
    else:
        node.grad = node.grad + g if create_graph else type(g)._make(node.grad.data + g.data, None)


def toposort(roots) -> list:
    """Every tensor reachable from `roots` through tensors that require grad, oldest first: the order
    backprop walks them in, reversed. An error if backward already freed the op of one of them."""
    found, stack = set(), list(roots)
    while stack:                                   # an explicit stack: a chain of 100,000 ops needs no recursion
        t = stack.pop()
        if t in found:
            continue
        found.add(t)
        if t._ctx is not None:
            if t._ctx.freed:
                _freed_error(t._ctx)
            stack.extend(p for p in t._ctx.parents if p.requires_grad)
    return sorted(found, key=_walk_key, reverse=True)


def _walk_key(t) -> tuple:
    """Newest first; a copy of a tensor (copy.deepcopy) keeps its number, so id() breaks the tie."""
    return (-t._seq, -id(t))


def _freed_error(ctx) -> None:
    raise RuntimeError(
        f"backward: the graph through {type(ctx).__name__} was already freed by an earlier "
        "backward(). Pass retain_graph=True to the first backward() to walk it twice.")


def backprop(roots, root_grads, retain_graph=False, create_graph=False, inputs=None, on_step=None) -> dict:
    """Propagate `root_grads` from `roots` to the leaves.

    Returns {tensor: gradient} for `inputs` when given (the `grad()` function); otherwise
    accumulates into the `.grad` of every leaf that requires grad (the `backward()` method).
    `on_step(node, g, passed)`, when given, is called once per node the walk processes, in the walk's
    order: g is the gradient the node received (summed over its uses), `passed` the [(parent, gradient)]
    it handed on (empty for a leaf, whose `.grad` is already updated). `backprop_steps` draws from it.
    """
    wanted = None if inputs is None else set(inputs)
    grads, ready = {}, []         # {tensor: its gradient so far}; the heap of tensors to walk, by _walk_key
    for root, g in zip(roots, root_grads):
        if root in grads:
            grads[root] = grads[root] + g
        else:
            grads[root] = g
            heapq.heappush(ready, (*_walk_key(root), root))
    handed_out = set(root_grads)  # gradients some leaf or the caller holds: a leaf's .grad must be a copy of them
    found, anomaly, skeletons = {}, state.detect_anomaly, {}
    # the rules' own ops form a graph only for create_graph
    recording, state.grad_enabled = state.grad_enabled, create_graph
    try:
        while ready:
            node = heapq.heappop(ready)[-1]
            g = grads.pop(node)           # complete: every tensor made from node has been walked
            ctx = node._ctx
            if ctx is None:               # a leaf
                if g is None:
                    continue
                if wanted is not None:
                    if node in wanted:
                        found[node] = g
                elif node.grad is None:
                    # .grad must be an array of its own (optimizers update it in place): copy g when it is
                    # a view (of a broadcast, a reshape, ...) or was already handed out. A fresh result,
                    # like a matmul's, is kept without paying for a copy.
                    own = g not in handed_out and g._data.flags.owndata and g._data.flags.writeable
                    node.grad = g if own or create_graph else type(g)._make(g.data.copy(), None)
                    handed_out.add(g)
                elif create_graph:
                    node.grad = node.grad + g
                else:  # plain arrays, as for grads below
                    node.grad = type(g)._make(node.grad.data + g.data, None)
                if retain_graph:
                    node._last_grad = g.data  # kept for draw_graph(show_grads=True)
                if on_step is not None:
                    on_step(node, g, [])
                continue
            if ctx.freed:
                _freed_error(ctx)
            if g is None:  # only rules that sent it no gradient reached it: it passes none on, but is freed
                parent_grads = (None,) * len(ctx.parents)
            else:
                if wanted is not None and node in wanted:
                    found[node] = g
                if retain_graph:
                    node._last_grad = g.data
                if _retained and wanted is None and _retained.get(id(node)) is node:
                    _keep_grad(node, g, create_graph)
                parent_grads = _unchecked_backward(ctx, g, node) if anomaly else ctx.backward(g, node)
                if not isinstance(parent_grads, tuple):
                    parent_grads = (parent_grads,)
            passed = []
            for p, pg in zip(ctx.parents, parent_grads):
                if not p.requires_grad:
                    continue
                if pg is not None:
                    if anomaly:
                        check_finite(ctx, pg.data, "backward gradient")
                    if pg._data.dtype != p._data.dtype:
                        pg = pg.cast(p.dtype)
                    if on_step is not None:
                        passed.append((p, pg))
                if p not in grads:            # p's first gradient: p joins the walk
                    grads[p] = pg
                    heapq.heappush(ready, (-p._seq, -id(p), p))   # (_walk_key(p), p), written out: once per edge
                elif pg is None:
                    pass
                elif grads[p] is None:
                    grads[p] = pg
                elif create_graph:
                    grads[p] = grads[p] + pg
                else:  # plain arrays: the sum needs no graph, so skip the Tensor op
                    grads[p] = type(pg)._make(grads[p]._data + pg._data, None)
            if on_step is not None and g is not None:
                on_step(node, g, passed)
            if not retain_graph:
                ctx.free(skeletons)
    finally:
        state.grad_enabled = recording
    return found


def _unchecked_backward(ctx, g, node):
    """Under detect_anomaly, the backward rule's own ops are not checked one by one: an Inf there is
    reported as this op's gradient, naming the op whose rule produced it."""
    state.detect_anomaly = False
    try:
        return ctx.backward(g, node)
    finally:
        state.detect_anomaly = True
