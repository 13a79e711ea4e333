"""What the library builds around the backward walk, kept out of it so that autograd.py reads as the idea.

`backprop` (autograd.py) calls an `Around` at the three places it names: `before_rule` and `after_rule`
around each op's backward rule, and `leaf` at each leaf. Here they:

- answer `grad()`: the gradients of the tensors it asked for (`found`);
- keep `retain_grad()`'s gradients: an intermediate tensor registered here keeps its `.grad`;
- keep what a drawing shows of each gradient (draw_graph(show_grads=True)): the array itself with
  `retain_graph=True` (`_last_grad`), else only its norm, on the skeleton the freed graph keeps (`grad_norm`);
- check every gradient for NaN and Inf under `detect_anomaly()`, naming the op whose rule made it;
- call the step-through hook (`on_step`: backprop_steps.py);
- free each node once its gradient has gone on, down to the graph's skeleton (`free`, `Skeleton`).

`toposort` lists a graph's tensors oldest first, for the tools that want it whole before the walk.
"""
from __future__ import annotations

import math
import weakref

import numpy as np

from tinygrad_like.function import check_finite, state

_retained: dict = {}   # {id(t): weak reference to t}, the intermediates whose .grad is kept (retain_grad)
# A plain backward keeps the norm of each intermediate gradient of at most this many numbers (a drawing's
# graph: the README's example, a block on 16 tokens) for draw_graph; a larger one, as in a training step, is
# not summed, so training pays no extra pass over its gradients (docs/engine.md, "What backward frees").
NORM_AT_MOST = 16_384


def retain(t) -> None:
    """Keep the gradient of the intermediate tensor `t` in t.grad at every backward (Tensor.retain_grad).
    Held weakly and by id (a tensor's == is elementwise, so it cannot be looked up by equality); the entry
    goes when t does."""
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
        node.grad = node.grad + g if create_graph else type(g)._result(np.asarray(node.grad._data + g._data), None)


class Around:
    """One backward pass's scaffolding: grad()'s answers, retain_grad, the drawings' last gradient,
    anomaly checks, the step-through hook and freeing."""

    __slots__ = ("retain", "create_graph", "on_step", "wanted", "found", "skeletons", "anomaly")

    def __init__(self, retain_graph: bool, create_graph: bool, inputs, on_step):
        self.retain, self.create_graph, self.on_step = retain_graph, create_graph, on_step
        self.wanted = None if inputs is None else set(inputs)   # grad(): the tensors whose gradients it returns
        self.found, self.skeletons = {}, {}
        self.anomaly = state.detect_anomaly

    def before_rule(self, node, g) -> None:
        """node's gradient g is complete and its rule is next: a freed graph is an error, so is an input
        changed in place after the op read it; grad()'s answer, the drawing's last gradient and
        retain_grad's .grad are taken here."""
        if node._ctx.freed:
            freed_error(node._ctx)
        for p in node._ctx.parents:
            if p._tape_index > node._tape_index:   # p was changed in place after this op read it (dialect/inplace.py)
                changed_error(node._ctx, p)
        if g is None:
            return
        if self.wanted is not None and node in self.wanted:
            self.found[node] = g
        if self.retain:
            node._last_grad = g._data      # kept for draw_graph(show_grads=True)
        elif g._data.size <= NORM_AT_MOST:
            kept = self.skeletons.get(node)   # what the freed graph keeps of node (its users are freed already)
            if kept is not None:
                kept.grad_norm = norm(g._data)
        if _retained and self.wanted is None and _is_retained(node):
            _keep_grad(node, g, self.create_graph)

    def unchecked_rule(self, ctx, g, node):
        """Under detect_anomaly, the backward rule's own ops are not checked one by one: an Inf there is
        reported by after_rule as this op's gradient, naming the op whose rule produced it."""
        state.detect_anomaly = False
        try:
            return ctx.backward(g, node)
        finally:
            state.detect_anomaly = True

    def after_rule(self, node, parents: tuple, g, grads: tuple) -> None:
        """node's rule gave `grads`, one per parent: detect_anomaly's checks, the step-through hook, then
        the node is freed (unless retain_graph)."""
        if g is not None and (self.anomaly or self.on_step is not None):
            passed = [(p, pg) for p, pg in zip(parents, grads) if p.requires_grad and pg is not None]
            if self.anomaly:
                for _, pg in passed:
                    check_finite(node._ctx, pg._data, "backward gradient")
            if self.on_step is not None:
                self.on_step(node, g, [(p, pg if pg.dtype == p.dtype else pg.cast(p.dtype))
                                       for p, pg in passed])
        if not self.retain:
            free(node._ctx, self.skeletons)

    def leaf(self, node, g) -> None:
        """A leaf's complete gradient g (already in its .grad, unless grad() asked for it)."""
        if g is None:
            return
        if self.wanted is not None and node in self.wanted:
            self.found[node] = g
        if self.retain:
            node._last_grad = g._data      # kept for draw_graph(show_grads=True)
        if self.on_step is not None:
            self.on_step(node, g, [])


def free(ctx, skeletons: dict) -> None:
    """Drop what backward needed, like PyTorch after a backward without retain_graph, so that memory goes
    back before the next forward: the saved arrays, the options, and the parent Tensors. Each parent is
    replaced by what a drawing needs of it: a leaf that requires grad (a parameter, which its owner holds
    anyway) stays itself, so its .grad can be shown; any other Tensor becomes a `Skeleton` (shape, dtype,
    name, scope, its own op), and its array goes as soon as nothing else holds it. `skeletons`
    ({tensor: skeleton}, one per backward) lets a tensor used by several ops keep one skeleton. Walking a
    freed node again is an error (freed_error)."""
    kept = []
    for p in ctx.parents:
        kept.append(p if p._ctx is None and p.requires_grad else _skeleton_of(p, skeletons))
    ctx.__dict__ = {"parents": tuple(kept), "scope": ctx.scope, "freed": True}   # the rest goes at once


def _skeleton_of(t, skeletons: dict) -> Skeleton:
    kept = skeletons.get(t)
    if kept is None:
        kept = skeletons[t] = Skeleton(t)
    return kept


class Skeleton:
    """What a graph freed by backward keeps of a Tensor: the op that made it (`_ctx`, itself freed),
    its shape, dtype, name and scope, the norm of the gradient it received (`grad_norm`, set by
    Around.before_rule when the walk reaches it; None for one of more than NORM_AT_MOST numbers), and no
    array, except a copy of at most 4 numbers (drawings print those). Attribute names match Tensor's, so
    draw_graph walks a freed graph like a live one."""

    __slots__ = ("_ctx", "_data", "dtype", "grad_norm", "name", "requires_grad", "scope", "shape")
    grad = _last_grad = None

    def __init__(self, t):
        data = t._data                 # its shape and dtype read from the array: one Skeleton per node, so cheaply
        self._ctx, self.shape, self.dtype, self.name, self.scope = t._ctx, data.shape, data.dtype, t.name, t.scope
        self.requires_grad, self.grad_norm = t.requires_grad, None
        self._data = np.array(data) if data.size <= 4 else None    # a copy: a small view can pin a big array

    def numel(self) -> int:
        return int(np.prod(self.shape))

    def __repr__(self):
        made_by = f" made by {type(self._ctx).__name__}" if self._ctx is not None else ""
        return f"Skeleton(shape={self.shape}, dtype={self.dtype}{made_by}, array freed by backward)"


def changed_error(ctx, p) -> None:
    """An op's input was changed in place after the op read it (an in-place method on an intermediate
    takes a new place on the tape, dialect/inplace.py): its gradient would go to the new value."""
    raise RuntimeError(
        f"backward: {type(ctx).__name__} read a tensor of shape {p.shape} that {type(p._ctx).__name__} then "
        f"changed in place, and its gradient would go to the new value. Write {type(p._ctx).__name__} out of "
        f"place (a new tensor), or call it before {type(ctx).__name__} reads the tensor.")


def norm(a: np.ndarray) -> float:
    """‖a‖, the square root of the sum of squares (np.vdot: one pass, no temporary; math.sqrt: no ufunc call)."""
    return math.sqrt(np.vdot(a, a))


def freed_error(ctx) -> None:
    raise RuntimeError(
        f"backward: the graph through {type(ctx).__name__} was already freed by an earlier "
        "backward(). Pass retain_graph=True to the first backward() to walk it twice.")


def toposort(roots) -> list:
    """Every tensor reachable from `roots` through tensors that require grad, oldest first: the reverse
    of the order backprop walks them in (which backprop finds as it goes, from the tape; the tests
    check the two agree). An error if backward already freed the op of one of them."""
    found, stack = set(), list(roots)
    while stack:                                   # an explicit stack: a chain of 100,000 ops needs no recursion
        t = stack.pop()
        if t in found:
            continue
        found.add(t)
        if t._ctx is not None:
            if t._ctx.freed:
                freed_error(t._ctx)
            stack.extend(p for p in t._ctx.parents if p.requires_grad)
    return sorted(found, key=lambda t: (-t._tape_index, -id(t)), reverse=True)
