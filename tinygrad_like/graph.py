"""`draw_graph`: the forward or backward computation graph of a tensor, as a graphviz Digraph.

Forward: leaves (boxes, labelled with their names) flow into ops (ovals) down to the output.
Backward: the gradient functions from the output back to the leaves (`MulBackward`, ...), edges
labelled with the shape and (show_grads, after a backward) the norm of the gradient they carry.
Ops remember the name scope they ran in, and `group_scopes` draws each scope as a nested box; a
parameter sits in the box of the layer whose state_dict name it carries (`attn.c_attn.weight` in
`attn.c_attn`, where the op that uses it ran).

A fused op (fast/fused.py) can be opened: it is then drawn as a box, "Softmax (fused)", holding the
graph of the composite it replaces (composites.py, through dispatch.rebuild) built on the same inputs.
A graph freed by backward() is drawn from what it keeps (scaffolding.Skeleton): every op, shape, scope
and leaf, and each gradient's norm, without the arrays.
"""
from __future__ import annotations

from collections import deque

import numpy as np

from tinygrad_like import dispatch
from tinygrad_like.autograd import backprop
from tinygrad_like.scaffolding import NORM_AT_MOST
from tinygrad_like.tensor import Tensor

try:
    from tinygrad_like.render import Graph
except ImportError:  # the renderer is optional for building DOT source
    from graphviz import Digraph as Graph

EXPAND_AT_MOST = 6  # expand="auto" opens every fused op of a graph that holds at most this many


def _shape(shape) -> str:
    return "(" + ", ".join(map(str, shape)) + ")"


def _values(array: np.ndarray) -> str:
    if array.size <= 4:
        return np.array2string(array, precision=3, separator=", ").replace("\n", "")
    return f"mean {array.mean():.3g}, std {array.std():.3g}"


def _norm(array) -> str:
    return f"‖g‖={float(np.sqrt(np.sum(np.square(array, dtype=np.float64)))):.3g}"


def _grad_norm(t) -> str | None:
    """The norm of the gradient t received in the last backward: from its array (retain_graph=True), from the
    number a freed graph's skeleton keeps, or, for a leaf, from its .grad; None when none is known."""
    if t._last_grad is not None:
        return _norm(t._last_grad)
    kept = getattr(t, "grad_norm", None)
    if kept is not None:
        return f"‖g‖={kept:.3g}"
    if t._ctx is None and t.grad is not None:
        return _norm(t.grad._data)
    return None


def _key(t) -> int:
    """A drawn node is an op (shared by every skeleton of its output) or a leaf tensor."""
    return id(t._ctx) if t._ctx is not None else id(t)


def _leaf_scope(t, user_scopes=()) -> str:
    """A parameter named `attn.c_attn.weight` sits in the box of the op that reads it: the user's scope
    that is `attn.c_attn` or ends with it (a module called inside an outer scope), else `attn.c_attn`."""
    if t.name and "." in t.name:
        prefix = t.name.rsplit(".", 1)[0]
        return next((s for s in user_scopes if s == prefix or s.endswith("." + prefix)), prefix)
    return t.scope or ""


class _Opener:
    """Replaces each fused node to open by the output of its composite, built on stand-ins of the
    node's parents (leaves holding the same arrays) so that the composite's graph stops at them; a
    stand-in is drawn as the parent it stands for. Remembers which box each composite node belongs to."""

    def __init__(self, opened: set, direction: str, show_grads: bool):
        self.opened, self.direction, self.show_grads = opened, direction, show_grads
        self.alias = {}   # key of a fused output or a stand-in -> the tensor drawn in its place
        self.box_of = {}  # key -> box name, for the composite's nodes and for fused nodes left closed
        self.boxes = {}   # box name -> (label, scope)

    def wants(self, t) -> bool:
        return t._ctx is not None and type(t._ctx).__name__ in self.opened and dispatch.is_fused(t._ctx)

    def resolve(self, t, open_new: bool = True):
        """What is drawn for t: t itself, or the output of its composite (opened now if open_new)."""
        key = _key(t)
        while key in self.alias:
            t = self.alias[key]
            key = _key(t)
        if not open_new or not self.wants(t) or key in self.box_of:
            return t
        ctx = t._ctx
        box = f"cluster_fused_{len(self.boxes)}"
        name = type(ctx).__name__ + ("Backward" if self.direction == "backward" else "")
        self.boxes[box] = (f"{name} (fused)", ctx.scope or "")
        if not dispatch.can_rebuild(ctx):  # freed by backward: a closed box
            self.box_of[key] = box
            return t
        stand_ins = [_stand_in(p, self.direction) for p in ctx.parents]
        out = dispatch.rebuild(ctx, stand_ins)
        for s, p in zip(stand_ins, ctx.parents):
            self.alias[id(s)] = p
        self.alias[key] = out
        for member in _members(out, {id(s) for s in stand_ins}):
            self.box_of[_key(member)] = box
        if self.show_grads and t._last_grad is not None:  # the gradient that reached the fused op, via its composite
            backprop([out], [Tensor._result(t._last_grad, None)], retain_graph=True,
                     inputs=[s for s in stand_ins if s.requires_grad])
        return out


def _stand_in(p: Tensor, direction: str) -> Tensor:
    """A leaf holding p's array. In a forward drawing it requires grad even where p does not, so that
    every op of the composite is recorded, also those that only touch a constant input (x's reshape in x Wᵀ)."""
    s = Tensor._result(p._data, None)
    s.requires_grad = p.requires_grad or direction == "forward" and p.dtype.kind == "f"
    s.name, s.scope = p.name, p.scope
    return s


def _members(out: Tensor, stop: set) -> list:
    """The tensors of out's graph, up to (and without) the stand-ins in `stop`."""
    found, seen, stack = [], {id(out)}, [out]
    while stack:
        t = stack.pop()
        found.append(t)
        for p in (t._ctx.parents if t._ctx is not None else ()):
            if id(p) not in seen and id(p) not in stop:
                seen.add(id(p))
                stack.append(p)
    return found


def _collect(root, max_nodes: int, direction: str, opener: _Opener):
    """Breadth-first from the root: the tensors to draw (at most max_nodes) and how many were left out."""
    root = opener.resolve(root)
    keep, seen, queue = [], {_key(root)}, deque([root])
    total = 0
    while queue:
        t = queue.popleft()
        total += 1
        if len(keep) < max_nodes:
            keep.append(t)
        if t._ctx is None:
            continue
        for p in t._ctx.parents:
            if direction == "backward" and not p.requires_grad:
                continue
            p = opener.resolve(p, open_new=len(keep) < max_nodes)  # no composites built for what is not drawn
            if _key(p) not in seen:
                seen.add(_key(p))
                queue.append(p)
    return root, keep, total - len(keep)


def _to_open(root, expand, direction: str, max_nodes: int) -> set:
    names = dispatch.fused_op_names()
    if expand is True:
        return names
    if expand is False or expand is None:
        return set()
    if expand == "auto":
        _, tensors, _ = _collect(root, max_nodes, direction, _Opener(set(), direction, False))
        fused = sum(t._ctx is not None and dispatch.is_fused(t._ctx) for t in tensors)
        return names if fused <= EXPAND_AT_MOST else set()
    wanted = {expand} if isinstance(expand, str) else set(expand)
    unknown = wanted - names
    if unknown:
        raise ValueError(f"draw_graph: expand names unknown fused ops {sorted(unknown)}; the fused ops are "
                         f"{sorted(names)} (or pass True for all, False for none, 'auto')")
    return wanted


def draw_graph(root: Tensor, direction: str = "forward", show_shapes: bool = True, show_values: bool = False,
               show_grads: bool = False, group_scopes: bool = True, max_nodes: int = 400, expand="auto"):
    """Draw how `root` was computed (direction="forward") or how its gradient flows back ("backward").

    Returns a graphviz Digraph: `.source` is the DOT text, `.render_to("g.svg")` writes a picture,
    and Jupyter shows it inline.

    After a plain `backward()` the graph is freed but its skeleton stays, so the drawing still shows
    every op, shape and scope, and (show_grads) the norm of the gradient on every edge (the skeleton
    keeps that one number, for gradients of at most scaffolding.NORM_AT_MOST numbers); the values, the
    norms of larger gradients and fused ops opened with their gradients need the arrays themselves:
    `backward(retain_graph=True)` keeps them.

    expand: which fused ops (linear, softmax, log_softmax, layernorm, GELU, cross-entropy, attention,
    multi-head attention; tinygrad_like/fast/fused.py) to open, each drawn as a box "Softmax (fused)"
    holding the primitive graph of its composite (tinygrad_like/composites.py) built on the same inputs.
    "auto" (the default) opens them all when the graph holds at most EXPAND_AT_MOST = 6 of them (a
    softmax, a LayerNorm, an attention head with its three projections, a small MLP and its loss)
    and none otherwise, so a transformer block (8 fused ops) stays one node per sub-layer; True opens
    all, False none, and a set of op names, e.g. {"MultiHeadAttention"}, those. A fused op whose
    inputs were freed by backward is drawn as a closed box with a note.
    """
    if direction not in ("forward", "backward"):
        raise ValueError(f"draw_graph: direction must be 'forward' or 'backward', got {direction!r}")
    opener = _Opener(_to_open(root, expand, direction, max_nodes), direction, show_grads)
    root, tensors, left_out = _collect(root, max_nodes, direction, opener)
    drawn = {_key(t) for t in tensors}
    nodes: dict[tuple, list] = {}  # (scope, box or None) -> [(node id, label, attrs)]
    edges, lost = [], False  # lost: something asked for was freed by backward

    numbers: dict[int, int] = {}  # node ids numbered in drawing order, so the same graph gives the same DOT

    def node_id(t) -> str:
        return f"n{numbers.setdefault(_key(t), len(numbers))}"

    user_scopes: dict[int, list] = {}  # leaf -> the scopes of the ops that read it
    for t in (t for t in tensors if t._ctx is not None):
        box = opener.box_of.get(_key(t))
        for p in t._ctx.parents:
            user_scopes.setdefault(_key(opener.resolve(p, open_new=False)), []).append(
                opener.boxes[box][1] if box else t._ctx.scope or "")

    for t in tensors:
        ctx, box = t._ctx, opener.box_of.get(_key(t))
        data = t._data
        if ctx is None:
            label = [t.name or ("const" if not t.requires_grad else "leaf")]
            if direction == "backward":
                label[0] = f"AccumulateGrad {t.name or ''}".strip()
            if show_shapes:
                label.append(_shape(t.shape))
            if data is not None and (show_values or (t.numel() == 1 and not t.name)):
                label.append(_values(data))
            if show_grads and t.grad is not None:
                label.append(_norm(t.grad._data))
            color = "lightblue" if t.requires_grad else "lightgrey"
            where = (opener.boxes[box][1], box) if box else (_leaf_scope(t, user_scopes.get(_key(t), ())), None)
            nodes.setdefault(where, []).append((node_id(t), label, dict(shape="box", style="filled", fillcolor=color)))
            continue
        lost = lost or ctx.freed and show_values and data is None
        name = type(ctx).__name__ + ("Backward" if direction == "backward" else "")
        label = [name]
        if t.name:
            label.append(t.name)
        if show_shapes and direction == "forward":
            label.append(_shape(t.shape))
        if show_values and data is not None:
            label.append(_values(data))
        if box and not dispatch.can_rebuild(ctx) and dispatch.is_fused(ctx):
            label.append("(not opened: its inputs were\\nfreed by backward)")
        attrs = dict(shape="oval")
        if t is root:
            attrs.update(style="filled,bold", fillcolor="khaki")
        nodes.setdefault((opener.boxes[box][1] if box else ctx.scope or "", box), []).append((node_id(t), label, attrs))
        for p in ctx.parents:
            if direction == "backward" and not p.requires_grad:
                continue
            p = opener.resolve(p, open_new=False)
            if _key(p) not in drawn:
                continue
            edge_label = []
            if show_shapes:
                edge_label.append(_shape(p.shape))
            if show_grads and direction == "backward":
                norm = _grad_norm(p)
                if norm is not None:
                    edge_label.append(norm)
                lost = lost or norm is None and ctx.freed     # a gradient too large for its norm to be kept
            pair = (node_id(p), node_id(t)) if direction == "forward" else (node_id(t), node_id(p))
            edges.append((*pair, "\\n".join(edge_label)))

    g = Graph(name="backward" if direction == "backward" else "forward")
    g.attr(rankdir="TB", fontsize="10")
    g.attr("node", fontsize="10", fontname="Helvetica")
    g.attr("edge", fontsize="8", fontname="Helvetica")
    if direction == "backward" and root.numel() == 1:
        g.node("seed", "dL/dL = 1", shape="plaintext")
        edges.insert(0, ("seed", node_id(root), ""))
    _add_nodes(g, nodes, {box: label for box, (label, _) in opener.boxes.items()}, group_scopes)
    for a, b, label in edges:
        g.edge(a, b, label=label) if label else g.edge(a, b)
    if left_out:
        g.node("cut", f"... {left_out} more nodes not drawn (max_nodes={max_nodes})", shape="note", color="red")
    if lost:
        g.node("freed", "graph freed by backward(): the arrays of intermediate results and their gradients\\n"
                        f"are gone (an edge keeps its gradient's norm up to {NORM_AT_MOST:,} numbers);\\n"
                        "backward(retain_graph=True) keeps them to draw",
               shape="note", color="gray50", fontcolor="gray30")
    return g


def _add_nodes(g, nodes: dict, box_labels: dict, group_scopes: bool) -> None:
    """Place nodes into nested clusters, one per dotted scope prefix ("h.0" holds "h.0.attn"), and the
    ops of an opened fused op into a box of their own inside their scope's cluster. A scope level
    that holds nothing but one deeper level is drawn as that level ("transformer" around
    "transformer.h" around "transformer.h.0" becomes one box, "transformer.h.0")."""
    content: dict[str, dict] = {}  # scope -> {box or None: items}
    for (scope, box), items in nodes.items():
        content.setdefault(scope if group_scopes else "", {}).setdefault(box, []).extend(items)

    def emit(target, items):
        for nid, label, attrs in items:
            target.node(nid, "\\n".join(label), **attrs)

    def fill(target, scope):
        for box, items in sorted(content.get(scope, {}).items(), key=lambda kv: kv[0] or ""):
            if box is None:
                emit(target, items)
                continue
            sub = Graph(name=box)
            sub.attr(label=box_labels[box], style="rounded,dashed", color="royalblue", fontcolor="royalblue",
                     fontsize="10")
            emit(sub, items)
            target.subgraph(sub)

    scopes = set()
    for s in content:
        parts = s.split(".") if s else []
        scopes.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    children = {s: sorted(c for c in scopes if c.rsplit(".", 1)[0] == s and "." in c) for s in scopes}

    def build(scope):
        while scope not in content and len(children[scope]) == 1:
            scope = children[scope][0]
        sub = Graph(name=f"cluster_{scope}")
        sub.attr(label=scope, style="rounded", color="gray50", fontsize="10")
        fill(sub, scope)
        for child in children[scope]:
            sub.subgraph(build(child))
        return sub

    fill(g, "")
    for top in sorted(s for s in scopes if "." not in s):
        g.subgraph(build(top))
