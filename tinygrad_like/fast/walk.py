"""Tensor.backward's walk when no feature is in use, in one function, on arrays: autograd.backprop without
what it does not need.

autograd.backprop reads as the idea: four steps, with accumulation, leaves and the library's scaffolding
(grad()'s answers, retain_grad, anomaly checks, the drawings' last gradient, the step-through hook, freeing)
each a call of its own, and every gradient a Tensor made by Tensor ops. On a small graph that bookkeeping is
most of the cost: a 2x2 add's forward and backward spent more in it than in numpy. `backward` here is the
same walk for the case a training step runs, `loss.backward()` with no feature in use (no retain_graph,
create_graph or anomaly mode, no intermediate with retain_grad, no gradient given that itself needs one).
Without create_graph no gradient needs a graph, so it carries numpy arrays, and the rules of the commonest
primitives (RULES) run on arrays: the same numpy calls, in the same order, as their Tensor rules in ops.py
make through Function.apply. Any other op's rule runs as written, on a Tensor. The walk's order, the sums
in that order, each leaf's .grad (kept without a copy exactly when the plain walk keeps it), the freed
graph and its skeletons with their gradient norms, the errors on a freed or changed graph: all as in the
plain walk, written inline, so gradients are the same bits (tests/test_lean_walk.py walks many graphs both
ways and compares them). Any other call goes to autograd.backward unchanged.

`install` puts it in Tensor.backward's place (a method that looked it up would cost a call more); inside
`composed()` and `fast.enabled(False)` it calls the plain walk itself; draw_graph, grad() and
backprop_steps always call the plain one.
"""
from __future__ import annotations

from heapq import heappop, heappush

import numpy as np

from tinygrad_like import autograd, ops, scaffolding
from tinygrad_like.dispatch import kernel
from tinygrad_like.fast import elementwise
from tinygrad_like.fast.apply import NO_OPTIONS
from tinygrad_like.function import state
from tinygrad_like.scaffolding import NORM_AT_MOST, Skeleton, changed_error, freed_error, norm
from tinygrad_like.tensor import Tensor, tape

new = object.__new__


SEEDS = {}  # {(dtype, shape): a read-only array of ones}: the gradient a one-number out starts from


def backward(out, gradient=None, retain_graph=False, create_graph=False) -> None:
    """autograd.backward(out, gradient, retain_graph, create_graph): the same gradients in every leaf's
    .grad, the same graph freed, the same errors. Anything but a Tensor.backward() with the fast path on,
    no feature in use, a plain Tensor `gradient` of out's shape (or none, for a one-number out), goes to
    autograd.backward.

    The heap holds the tensors made by ops; a leaf waits in `leaves` and gets its .grad after the walk
    (nothing in the walk reads a leaf's .grad, and a leaf's gradient is complete once every op has been
    walked). When a rule raises, the leaves the plain walk would have finished by then (those newer than
    the node that raised) are finished first."""
    mode = state.__dict__              # this thread's modes, in one thread-local look-up
    if (retain_graph or create_graph or not out.requires_grad or scaffolding._retained or not mode["fused"]
            or mode["detect_anomaly"]):  # the fast path off (composed()), or a feature in use
        return autograd.backward(out, gradient, retain_graph, create_graph)
    if gradient is None and out._data.size == 1:
        given = SEEDS.get(key := (out._data.dtype, out._data.shape))   # autograd.seed's np.ones_like(out)
        if given is None:
            given = SEEDS[key] = np.ones_like(out._data)
            given.flags.writeable = False      # one array for every backward: nothing may write into it
    elif type(gradient) is Tensor and not gradient.requires_grad and gradient._data.shape == out._data.shape:
        given = gradient._data                 # the caller's: copied into a leaf's .grad, never kept
    else:
        return autograd.backward(out, gradient, retain_graph, create_graph)
    dtype = out._data.dtype
    g = given if given.dtype is dtype or given.dtype == dtype else given.astype(dtype)
    grads = {}                         # {tensor: its gradient so far, an array}
    ready, leaves = [], []             # the heap of tensors made by ops (newest first); the leaves reached
    node = out                         # the tensor walked now (out first: the newest of the graph)
    if out._ctx is None:
        grads[out], node = g, None
        leaves.append(out)
    skeletons = {}                     # as scaffolding.free: {tensor: its Skeleton}, one per tensor
    owned = {}                         # {tensor: its gradient so far} where the walk made that array and
                                       # nobody else holds it: a slice's gradient may be added into it
    recording = failed = None          # the caller's grad mode, once a Tensor rule needs it off; an error
    try:
        while node is not None:
            ctx = node._ctx
            if ctx.freed:              # scaffolding.Around.before_rule
                freed_error(ctx)
            parents = ctx.parents
            index = node._tape_index
            kept_parents = []          # what scaffolding.free keeps of each parent, once the rule has run
            for p in parents:
                if p._tape_index > index:
                    changed_error(ctx, p)
                if p._ctx is None and p.requires_grad:
                    kept_parents.append(p)
                else:
                    kept = skeletons.get(p)
                    if kept is None:
                        kept = skeletons[p] = Skeleton(p)
                    kept_parents.append(kept)
            fresh = False              # the parents' gradients: new arrays of their shapes (a slice's)
            if g is None:
                pgs = (None,) * len(parents)
            else:
                kept = skeletons.get(node) if skeletons else None
                if kept is not None and g.size <= NORM_AT_MOST:
                    kept.grad_norm = norm(g)
                rule = RULES.get(type(ctx))
                fresh = rule is _getitem
                if fresh and _into_owned(ctx, g, grads, owned):
                    pgs, fresh = (None,), False    # added into the parent's gradient already
                else:
                    pgs = rule(ctx, g, node) if rule is not None else None
                if pgs is None:        # the op's own rule, on Tensors, recording no graph
                    if recording is None:
                        recording, state.grad_enabled = state.grad_enabled, False
                    pgs = ctx.backward(Tensor._result(g, None), node)
                    pgs = tuple(pg if pg is None else pg._data for pg in (pgs if isinstance(pgs, tuple) else (pgs,)))
            if ctx.options is NO_OPTIONS:   # made by fast/apply.py: it holds parents, scope and options only
                ctx.parents, ctx.freed = tuple(kept_parents), True
                del ctx.options
            else:                      # scaffolding.free
                ctx.__dict__ = {"parents": tuple(kept_parents), "scope": ctx.scope, "freed": True}
            for parent, pg in zip(parents, pgs):   # autograd.accumulate
                if not parent.requires_grad:
                    continue
                if pg is not None:
                    dtype = parent._data.dtype
                    if pg.dtype is not dtype and pg.dtype != dtype:
                        pg = pg.astype(dtype)
                if parent not in grads:
                    grads[parent] = pg
                    if fresh and pg is not None:
                        owned[parent] = pg
                    if parent._ctx is None:
                        leaves.append(parent)
                    else:
                        heappush(ready, (-parent._tape_index, -id(parent), parent))
                elif pg is not None:
                    before = grads[parent]
                    grads[parent] = pg if before is None else _array(before + pg)
                    if before is not None:
                        owned[parent] = grads[parent]
            if not ready:
                break
            node = heappop(ready)[-1]      # the newest tensor left: its gradient is complete
            g = grads.pop(node)
            if owned:
                owned.pop(node, None)  # handed to the rules now, which may share it
    except BaseException as error:     # the leaves the plain walk's heap gave before `node` get their .grad
        failed, newer = error, (-1, 0) if node is None else (node._tape_index, id(node))
        leaves = [t for t in leaves if (t._tape_index, id(t)) > newer]
    finally:
        if recording is not None:
            state.grad_enabled = recording
    holders = None                     # autograd.into_leaf, for each leaf
    for node in leaves:
        g = grads.pop(node)
        if g is None:
            continue
        if node.grad is not None:
            g = _array(node.grad._data + g)
        elif g is given or not ((flags := g.flags).owndata and flags.writeable):
            g = g.copy()               # the caller's gradient, a view or a read-only array: copied
        else:                          # kept by the leaf the plain walk's heap gives first, copied by the others
            holders = {} if holders is None else holders   # {id of an array: the leaf that keeps it}
            holder = holders.get(id(g))
            if holder is None:
                holders[id(g)] = node
            elif (node._tape_index, id(node)) > (holder._tape_index, id(holder)):
                holder.grad, holders[id(g)] = Tensor._result(g.copy(), None), node
            else:
                g = g.copy()
        grad = new(Tensor)             # Tensor._result(g, None) written out: here the call would cost more
        grad._data = g                 # (one store a line: a tuple assignment of them costs more)
        grad.grad = None
        grad.requires_grad = False
        grad._ctx = None
        grad.name = None
        grad.scope = ""
        grad._last_grad = None
        grad._tape_index = next(tape)
        node.grad = grad
    if failed is not None:
        try:
            raise failed
        finally:
            failed = None              # no cycle through this frame


def install() -> None:
    """Put `backward` in Tensor.backward's place (fast/__init__.py calls this): the plain method's work,
    autograd.backward, is what `backward` calls for everything it does not walk itself. It takes the
    plain method's docstring with it: help(t.backward) tells a learner what backward does, not how the
    fast walk does it."""
    backward.__doc__ = PLAIN_DOC
    Tensor.backward = backward


PLAIN_DOC = Tensor.backward.__doc__             # tensor.py's, read before install replaces the method


# ---------------------------------------------------------------- the commonest rules, on arrays
# Each is its op's backward rule in ops.py, written on numpy arrays with the numpy calls the Tensor rule
# makes (a Tensor op runs its forward on the arrays; a numpy scalar becomes a 0-d array, as in
# Function.apply; a reshape or expand to the same shape returns its input, as Tensor.reshape/expand do).
# A rule returns None when the dtypes differ, where a Tensor op would promote: the Tensor rule runs then.

def _array(a) -> np.ndarray:
    return a if isinstance(a, np.ndarray) else np.asarray(a)


def _reshape(g: np.ndarray, shape: tuple) -> np.ndarray:
    return g if g.shape == shape else g.reshape(shape)


def _unbroadcast(g: np.ndarray, shape: tuple) -> np.ndarray:
    """ops.unbroadcast as it runs on a Tensor: Tensor.sum, then Tensor.reshape."""
    if g.shape == shape:
        return g
    extra = g.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(i + extra for i, n in enumerate(shape) if n == 1 and g.shape[i + extra] != 1)
    if not axes:
        return g.reshape(shape)
    return _reshape(np.sum(g, axis=axes, keepdims=True), shape)


def _add(ctx, g, out):
    x, y = ctx.parents
    shape = g.shape
    return (None if not x.requires_grad else g if x._data.shape == shape else _unbroadcast(g, x._data.shape),
            None if not y.requires_grad else g if y._data.shape == shape else _unbroadcast(g, y._data.shape))


def _sub(ctx, g, out):
    x, y = ctx.parents
    return (_unbroadcast(g, x._data.shape) if x.requires_grad else None,
            _unbroadcast(_array(-g), y._data.shape) if y.requires_grad else None)


def _mul(ctx, g, out):
    x, y = ctx.parents
    if x._data.dtype != g.dtype or y._data.dtype != g.dtype:
        return None
    if g.size >= elementwise.LARGE:                      # g * y and g * x in pieces on the pool
        gx, gy = _both(g, y._data if x.requires_grad else None, x._data if y.requires_grad else None)
        return (None if gx is None else _unbroadcast(gx, x._data.shape),
                None if gy is None else _unbroadcast(gy, y._data.shape))
    return (_unbroadcast(_array(g * y._data), x._data.shape) if x.requires_grad else None,
            _unbroadcast(_array(g * x._data), y._data.shape) if y.requires_grad else None)


def _both(g, a, b):
    """(g * a, g * b), None for a factor that is None: both products in one hand-over to the pool."""
    factors = [f for f in (a, b) if f is not None]
    if len(factors) == 1:
        product = elementwise.mul(g, factors[0])
        return (product, None) if a is not None else (None, product)

    def both(outs, ins):
        np.multiply(ins[0], ins[1], out=outs[0])
        np.multiply(ins[0], ins[2], out=outs[1])
    shape = np.broadcast_shapes(g.shape, a.shape, b.shape)
    if shape != g.shape:                                 # g itself broadcast: the plain products
        return _array(g * a), _array(g * b)
    return tuple(elementwise.share(both, shape, g.dtype, g, a, b, outputs=2))


def _neg(ctx, g, out):
    return (_array(-g),)


def _exp(ctx, g, out):
    if out._data.dtype != g.dtype:
        return None
    return (_array(g * out._data),)


def _tanh(ctx, g, out):                                  # grad * (1 - out * out)
    o = out._data
    if o.dtype != g.dtype:
        return None
    if g.size >= elementwise.LARGE and g.shape == o.shape:   # the same three steps, in pieces on the pool
        return (elementwise.share(_tanh_slope, o.shape, o.dtype, g, o, piece=TANH_PIECE),)
    return (_array(g * _array(np.asarray(1, o.dtype) - _array(o * o))),)


TANH_PIECE = 1 << 15  # elements: the temporaries stay in the cache between the three steps


def _tanh_slope(outs, ins):
    """g * (1 - o * o) into outs[0], step by step as _tanh's plain line rounds."""
    (t,), (g, o) = outs, ins
    np.multiply(o, o, out=t)
    np.subtract(np.asarray(1, o.dtype), t, out=t)
    np.multiply(g, t, out=t)


def _sigmoid(ctx, g, out):                               # grad * out * (1 - out)
    o = out._data
    if o.dtype != g.dtype:
        return None
    return (_array(_array(g * o) * _array(np.asarray(1, o.dtype) - o)),)


def _sum(ctx, g, out):                                   # grad.reshape(keepdim shape).expand(x.shape)
    shape = ctx.parents[0]._data.shape
    if not ctx.keepdim:
        g = _reshape(g, ops._keepdim_shape(shape, ctx.axis))
    return (g if g.shape == shape else np.broadcast_to(g, shape),)


def _reshape_rule(ctx, g, out):
    return (_reshape(g, ctx.parents[0]._data.shape),)


def _expand(ctx, g, out):
    return (_unbroadcast(g, ctx.parents[0]._data.shape),)


def _clone(ctx, g, out):
    return (g,)


def _div(ctx, g, out):                                   # gx = grad / y; (gx, -gx * out), unbroadcast
    x, y = ctx.parents
    if x._data.dtype != g.dtype or y._data.dtype != g.dtype:
        return None
    gx = _array(g / y._data)
    return (_unbroadcast(gx, x._data.shape) if x.requires_grad else None,
            _unbroadcast(_array(_array(-gx) * out._data), y._data.shape) if y.requires_grad else None)


def _permute(ctx, g, out):                               # grad.permute(inverse order)
    return (np.transpose(g, tuple(o % g.ndim for o in np.argsort(ctx.order).tolist())),)


def _getitem(ctx, g, out):                               # ScatterAdd.apply(grad, shape, index)
    return (_array(ops.ScatterAdd().forward(g, shape=ctx.parents[0]._data.shape, index=ctx.index)),)


def _into_owned(ctx, g, grads, owned) -> bool:
    """A slice's gradient added into its parent's gradient in place, when the walk owns that array and the
    index is basic (a split's q, k, v): the plain walk's `before + ScatterAdd(g)` without the zero array or
    the new sum. The same bits: outside the slice the plain sum adds 0.0 (which turns -0.0 into +0.0), so
    the whole array gets + 0.0 first; inside, before[index] + g as the plain sum computes it."""
    parent = ctx.parents[0]
    before = owned.get(parent)
    if before is None or before is not grads.get(parent) or before.dtype != g.dtype or not ops._is_basic(ctx.index):
        return False
    inside = before[ctx.index] + g
    np.add(before, before.dtype.type(0), out=before)
    before[ctx.index] = inside
    return True


def _cat(ctx, g, out):                                   # each input's slice of grad
    grads, start, lead = [], 0, (slice(None),) * (ctx.axis % g.ndim)
    for p, n in zip(ctx.parents, ctx.sizes):
        grads.append(g[lead + (slice(start, start + n),)] if p.requires_grad else None)
        start += n
    return tuple(grads)


def _relu(ctx, g, out):                                  # grad * (x > 0), the mask cast to grad's dtype
    x = ctx.parents[0]._data
    if x.dtype != g.dtype or g.dtype.kind != "f":
        return None
    return (_array(g * _array(np.greater(x, 0)).astype(g.dtype)),)


def _power(ctx, g, out):                                 # grad * c x^(c-1), as ops.PowConst's rule
    x, c = ctx.parents[0]._data, ctx.c
    if x.dtype != g.dtype or g.dtype.kind != "f":
        return None
    if c == 0:                                           # x^0 = 1 is constant (even at x = 0)
        return (np.zeros(g.shape, g.dtype),)
    times = elementwise.mul if g.size >= elementwise.LARGE else np.multiply   # large: in pieces on the pool
    if c == 1:
        return (_array(times(g, np.asarray(c, g.dtype))),)
    slope = times(x, np.asarray(c, g.dtype)) if c == 2 else \
        times(_array(kernel("power", ops.power)(x, c - 1)), np.asarray(c, g.dtype))
    return (_array(times(g, _array(slope))),)


def _product(a, b):                                      # Tensor.matmul on arrays of 2 or more axes, one dtype
    if a.ndim > 2 and b.ndim == 2:                       # (..., k) @ (k, m): one (rows, k) @ (k, m) product
        return _reshape(kernel("matmul", np.matmul)(a.reshape(-1, a.shape[-1]), b), a.shape[:-1] + b.shape[-1:])
    return kernel("matmul", np.matmul)(a, b)


def _matmul(ctx, g, out):                                # dX = G Yᵀ, dY = Xᵀ G, unbroadcast
    x, y = ctx.parents
    a, b = x._data, y._data
    if a.dtype != g.dtype or b.dtype != g.dtype:
        return None
    return (_unbroadcast(_product(g, np.swapaxes(b, -1, -2)), a.shape) if x.requires_grad else None,
            _unbroadcast(_product(np.swapaxes(a, -1, -2), g), b.shape) if y.requires_grad else None)


def _where(ctx, g, out):                                 # grad where cond holds for x, elsewhere for y
    cond, x, y = ctx.parents
    if cond._data.dtype != np.bool_ or g.dtype.kind != "f":
        return None
    where, zero = kernel("where", np.where), np.asarray(0.0, g.dtype)
    return (None,
            _unbroadcast(_array(where(cond._data, g, zero)), x._data.shape) if x.requires_grad else None,
            _unbroadcast(_array(where(cond._data, zero, g)), y._data.shape) if y.requires_grad else None)


RULES = {ops.Add: _add, ops.Sub: _sub, ops.Mul: _mul, ops.Neg: _neg, ops.Exp: _exp, ops.Tanh: _tanh,
         ops.Sigmoid: _sigmoid, ops.Sum: _sum, ops.Reshape: _reshape_rule, ops.Expand: _expand, ops.Clone: _clone,
         ops.Div: _div, ops.Permute: _permute, ops.Getitem: _getitem, ops.Cat: _cat, ops.Relu: _relu,
         ops.PowConst: _power, ops.Matmul: _matmul, ops.Where: _where}
