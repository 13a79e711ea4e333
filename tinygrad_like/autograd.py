"""Reverse-mode autodiff: walk the graph from the loss back to the leaves, newest tensor first, applying
each op's backward rule.

Every Tensor gets a number when it is made (`Tensor._tape_index`, from one counter), and a tensor is always
made after the tensors it is computed from. So walking tensors from the highest number down reaches each
one after every tensor computed from it, which is when its gradient is complete: the forward pass played
backwards, like a tape (PyTorch's engine orders its nodes by such a sequence number too). The walk keeps
the tensors that have received a gradient in a heap and takes the newest each time; a tensor joins the
heap when its first gradient arrives, so no separate pass has to sort the graph before the walk.

`backprop` is the walk itself, in the textbook's four steps. What the library adds around it sits in
`Walk`, beside it: where a leaf's gradient goes (`.grad`, or the answer of `grad()`), the hooks for
drawings (`_last_grad`) and for stepping through (`on_step`), anomaly checks, and freeing each node.
"""
from __future__ import annotations

import heapq
import weakref
from typing import TYPE_CHECKING

import numpy as np

from tinygrad_like.function import check_finite, state

if TYPE_CHECKING:
    from tinygrad_like.tensor import Tensor

_retained: dict = {}   # {id(t): weak reference to t}, the intermediates whose .grad is kept (retain_grad)


def retain(t) -> None:
    """Keep the gradient of the intermediate tensor `t` in t.grad at every backward (Tensor.retain_grad).
    Held weakly and by id (a tensor's == is elementwise, so it cannot be looked up by equality); the entry
    goes when t does. A plain dict, not a WeakValueDictionary: the walk asks whether it is empty at
    every node, and a plain dict answers that without a Python call."""
    key = id(t)
    _retained[key] = weakref.ref(t, lambda _, key=key: _retained.pop(key, None))


def _is_retained(node) -> bool:
    ref = _retained.get(id(node))
    return ref is not None and ref() is node


def _keep_grad(node, g, create_graph: bool) -> None:
    """Accumulate g into the .grad of a retained intermediate, as backprop does for a leaf."""
    if node.grad is None:
        node.grad = g if create_graph else type(g)._result(g._data.copy(), None)
    else:
        node.grad = node.grad + g if create_graph else type(g)._result(node.grad._data + g._data, None)


def backprop(roots, root_grads, retain_graph=False, create_graph=False, inputs=None, on_step=None) -> dict:
    """Propagate `root_grads` from `roots` to the leaves.

    Returns {tensor: gradient} for `inputs` when given (the `grad()` function); otherwise
    accumulates into the `.grad` of every leaf that requires grad (the `backward()` method).
    `on_step(node, g, passed)`, when given, is called once per node the walk processes, in the walk's
    order: g is the gradient the node received (summed over its uses), `passed` the [(parent, gradient)]
    it handed on (empty for a leaf, whose `.grad` is already updated). `backprop_steps` draws from it.
    """
    walk = Walk(retain_graph, create_graph, inputs, on_step, root_grads)
    grads, ready = {}, []               # {tensor: its gradient so far}; the heap of tensors to walk, newest first
    for root, g in zip(roots, root_grads):
        walk.add(grads, ready, root, g)
    recording, state.grad_enabled = state.grad_enabled, create_graph   # rules record a graph for create_graph
    try:
        while ready:
            node = heapq.heappop(ready)[-1]   # the newest tensor left: every tensor made from it has been walked,
            g = grads.pop(node)               # so its gradient is complete
            if node._ctx is None:             # a leaf: its gradient is an answer
                walk.leaf(node, g)
                continue
            for parent, pg in walk.rule(node, g):   # the op's backward rule: a gradient for each parent
                if parent.requires_grad:          # gradients that meet at a tensor add up
                    walk.add(grads, ready, parent, pg)
    finally:
        state.grad_enabled = recording
    return walk.found


class Walk:
    """What one backward pass does around the walk: how gradients add up, where a leaf's goes, and the
    observers (drawing hook, step-through hook, anomaly checks), then freeing each node."""

    __slots__ = ("retain", "create_graph", "on_step", "wanted", "found", "skeletons", "anomaly", "handed_out")

    def __init__(self, retain_graph: bool, create_graph: bool, inputs, on_step, root_grads):
        self.retain, self.create_graph, self.on_step = retain_graph, create_graph, on_step
        self.wanted = None if inputs is None else set(inputs)
        self.found, self.skeletons = {}, {}
        self.anomaly = state.detect_anomaly
        self.handed_out = set(root_grads)  # gradients the caller or a leaf holds: a leaf's .grad must copy them

    def add(self, grads: dict, ready: list, t, g) -> None:
        """Add the gradient g (None: none) into t's, in t's dtype; t joins the walk with its first one.
        Without create_graph the sum needs no graph, so the arrays are added without a Tensor op."""
        if g is not None and g._data.dtype is not t._data.dtype and g._data.dtype != t._data.dtype:   # `is`: cheap
            g = g.cast(t.dtype)
        if t not in grads:
            grads[t] = g
            heapq.heappush(ready, (-t._tape_index, -id(t), t))   # _walk_key(t), written out: once per edge
        elif g is None:
            pass
        elif grads[t] is None:
            grads[t] = g
        else:
            grads[t] = grads[t] + g if self.create_graph else type(g)._result(grads[t]._data + g._data, None)

    def rule(self, node, g):
        """(parent, gradient) for each parent of node, from node's backward rule (None where none). The
        observers see the step first, then node's saved arrays are freed (unless retain_graph)."""
        ctx = node._ctx
        if ctx.freed:
            _freed_error(ctx)
        parents = ctx.parents
        if g is None:                     # only rules that sent it no gradient reached it: it passes none on
            grads = (None,) * len(parents)
        else:
            if self.wanted is not None and node in self.wanted:
                self.found[node] = g
            if self.retain:
                node._last_grad = g._data  # kept for draw_graph(show_grads=True)
            if _retained and self.wanted is None and _is_retained(node):
                _keep_grad(node, g, self.create_graph)   # retain_grad(): an intermediate keeps its .grad
            grads = _unchecked_backward(ctx, g, node) if self.anomaly else ctx.backward(g, node)
            if not isinstance(grads, tuple):
                grads = (grads,)
            if self.anomaly or self.on_step is not None:
                self._observe(node, g, grads)
        if not self.retain:
            ctx.free(self.skeletons)
        return zip(parents, grads)

    def _observe(self, node, g, grads) -> None:
        """detect_anomaly's check of each gradient handed on, and the step-through hook."""
        passed = [(p, pg) for p, pg in zip(node._ctx.parents, grads) if p.requires_grad and pg is not None]
        if self.anomaly:
            for _, pg in passed:
                check_finite(node._ctx, pg._data, "backward gradient")
        if self.on_step is not None:
            self.on_step(node, g, [(p, pg if pg.dtype == p.dtype else pg.cast(p.dtype)) for p, pg in passed])

    def leaf(self, node, g) -> None:
        """A leaf's complete gradient: the answer for `grad()`, else added into its `.grad`."""
        if g is None:
            return
        if self.wanted is not None:
            if node in self.wanted:
                self.found[node] = g
        elif node.grad is None:
            # .grad must be an array of its own (optimizers update it in place): g is copied when it is a
            # view (of a broadcast, a reshape, ...) or was already handed out; a fresh result is kept.
            own = g not in self.handed_out and g._data.flags.owndata and g._data.flags.writeable
            node.grad = g if own or self.create_graph else type(g)._result(g._data.copy(), None)
            self.handed_out.add(g)
        elif self.create_graph:
            node.grad = node.grad + g
        else:
            node.grad = type(g)._result(node.grad._data + g._data, None)
        if self.retain:
            node._last_grad = g._data      # kept for draw_graph(show_grads=True)
        if self.on_step is not None:
            self.on_step(node, g, [])


def toposort(roots) -> list:
    """Every tensor reachable from `roots` through tensors that require grad, oldest first: the reverse
    of the order backprop walks them in (which backprop finds as it goes, from Tensor._tape_index; the tests
    check the two agree). An error if backward already freed the op of one of them."""
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
    return (-t._tape_index, -id(t))


def _freed_error(ctx) -> None:
    raise RuntimeError(
        f"backward: the graph through {type(ctx).__name__} was already freed by an earlier "
        "backward(). Pass retain_graph=True to the first backward() to walk it twice.")


def _unchecked_backward(ctx, g, node):
    """Under detect_anomaly, the backward rule's own ops are not checked one by one: an Inf there is
    reported as this op's gradient, naming the op whose rule produced it."""
    state.detect_anomaly = False
    try:
        return ctx.backward(g, node)
    finally:
        state.detect_anomaly = True


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
    if g.shape != out.shape:
        raise ValueError(f"{op}: gradient of shape {g.shape} does not match output of shape {out.shape}")
    return g


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
