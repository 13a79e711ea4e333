"""`draw_graph`: the forward or backward computation graph of a tensor, as a graphviz Digraph.

Forward: leaves (boxes, labelled with their names) flow into ops (ovals) down to the output.
Backward: the gradient functions from the output back to the leaves (`MulBackward`, ...), edges
labelled with the shape (and, after backward with retain_graph, the norm) of the gradient they carry.
Ops remember the name scope they ran in, and `group_scopes` draws each scope as a nested box.
"""
from __future__ import annotations

from collections import deque

import numpy as np

from tinygrad_like.tensor import Tensor

try:
    from tinygrad_like.render import Graph
except ImportError:  # the renderer is optional for building DOT source
    from graphviz import Digraph as Graph


def _shape(shape) -> str:
    return "(" + ", ".join(map(str, shape)) + ")"


def _values(array: np.ndarray) -> str:
    if array.size <= 4:
        return np.array2string(array, precision=3, separator=", ").replace("\n", "")
    return f"mean {array.mean():.3g}, std {array.std():.3g}"


def _norm(array) -> str:
    return f"‖g‖={float(np.sqrt(np.sum(np.square(array, dtype=np.float64)))):.3g}"


def _is_freed(ctx) -> bool:
    return getattr(ctx, "freed", False)


def _collect(root: Tensor, max_nodes: int, direction: str):
    """Breadth-first from the root: the tensors to draw (at most max_nodes) and how many were left out."""
    keep, seen, queue = [], {id(root)}, deque([root])
    total = 0
    while queue:
        t = queue.popleft()
        total += 1
        if len(keep) < max_nodes:
            keep.append(t)
        if t._ctx is None or _is_freed(t._ctx):
            continue
        for p in t._ctx.parents:
            if direction == "backward" and not p.requires_grad:
                continue
            if id(p) not in seen:
                seen.add(id(p))
                queue.append(p)
    return keep, total - len(keep)


def _leaf_scope(t: Tensor) -> str:
    if t.name and "." in t.name:
        return t.name.rsplit(".", 1)[0]
    return t.scope or ""


def draw_graph(root: Tensor, direction: str = "forward", show_shapes: bool = True, show_values: bool = False,
               show_grads: bool = False, group_scopes: bool = True, max_nodes: int = 400):
    """Draw how `root` was computed (direction="forward") or how its gradient flows back ("backward").

    Returns a graphviz Digraph: `.source` is the DOT text, `.render_to("g.svg")` writes a picture,
    and Jupyter shows it inline. The backward drawing needs the graph, so call backward with
    `retain_graph=True` first if you want gradient norms (show_grads) on it.
    """
    if direction not in ("forward", "backward"):
        raise ValueError(f"draw_graph: direction must be 'forward' or 'backward', got {direction!r}")
    tensors, left_out = _collect(root, max_nodes, direction)
    drawn = {id(t) for t in tensors}
    nodes: dict[str, list] = {}  # scope -> [(node id, label, attrs)]
    edges = []

    def node_id(t: Tensor) -> str:
        return f"n{id(t._ctx) if t._ctx is not None else id(t)}"

    for t in tensors:
        ctx = t._ctx
        if ctx is None:
            label = [t.name or ("const" if not t.requires_grad else "leaf")]
            if direction == "backward":
                label[0] = f"AccumulateGrad {t.name or ''}".strip()
            if show_shapes:
                label.append(_shape(t.shape))
            if show_values or (t.size == 1 and not t.name):
                label.append(_values(t.data))
            if show_grads and t.grad is not None:
                label.append(_norm(t.grad.data))
            color = "lightblue" if t.requires_grad else "lightgrey"
            nodes.setdefault(_leaf_scope(t), []).append((node_id(t), label, dict(shape="box", style="filled", fillcolor=color)))
            continue
        name = type(ctx).__name__ + ("Backward" if direction == "backward" else "")
        label = [name]
        if t.name:
            label.append(t.name)
        if show_shapes and direction == "forward":
            label.append(_shape(t.shape))
        if show_values:
            label.append(_values(t.data))
        attrs = dict(shape="oval")
        if t is root:
            attrs.update(style="filled,bold", fillcolor="khaki")
        if _is_freed(ctx):
            label.append("(graph freed by backward)")
        nodes.setdefault(ctx.scope or "", []).append((node_id(t), label, attrs))
        for p in ([] if _is_freed(ctx) else ctx.parents):
            if id(p) not in drawn or (direction == "backward" and not p.requires_grad):
                continue
            edge_label = []
            if show_shapes:
                edge_label.append(_shape(p.shape))
            if show_grads and direction == "backward" and p._last_grad is not None:
                edge_label.append(_norm(p._last_grad))
            pair = (node_id(p), node_id(t)) if direction == "forward" else (node_id(t), node_id(p))
            edges.append((*pair, "\\n".join(edge_label)))

    g = Graph(name="backward" if direction == "backward" else "forward")
    g.attr(rankdir="TB", fontsize="10")
    g.attr("node", fontsize="10", fontname="Helvetica")
    g.attr("edge", fontsize="8", fontname="Helvetica")
    if direction == "backward" and root.size == 1:
        g.node("seed", "dL/dL = 1", shape="plaintext")
        edges.insert(0, ("seed", node_id(root), ""))
    _add_nodes(g, nodes, group_scopes)
    for a, b, label in edges:
        g.edge(a, b, label=label) if label else g.edge(a, b)
    if left_out:
        g.node("cut", f"... {left_out} more nodes not drawn (max_nodes={max_nodes})", shape="note", color="red")
    return g


def _add_nodes(g, nodes: dict, group_scopes: bool) -> None:
    """Place nodes into nested clusters, one per dotted scope prefix ("h.0" holds "h.0.attn")."""
    def emit(target, items):
        for nid, label, attrs in items:
            target.node(nid, "\\n".join(label), **attrs)

    if not group_scopes:
        emit(g, [item for items in nodes.values() for item in items])
        return
    scopes = set()
    for s in nodes:
        parts = s.split(".") if s else []
        scopes.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    emit(g, nodes.get("", []))

    def build(scope):
        sub = Graph(name=f"cluster_{scope}")
        sub.attr(label=scope, style="rounded", color="gray50", fontsize="10")
        emit(sub, nodes.get(scope, []))
        for child in sorted(c for c in scopes if c.rsplit(".", 1)[0] == scope and c != scope and "." in c):
            sub.subgraph(build(child))
        return sub

    for top in sorted(s for s in scopes if "." not in s):
        g.subgraph(build(top))
