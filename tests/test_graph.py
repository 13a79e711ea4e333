"""draw_graph: the DOT source has the right nodes, edges, labels and clusters; SVGs come out of every
rendering path (system dot, wasm, none -> .dot file) and parse."""
import re
import shutil
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from tinygrad_like import Tensor, draw_graph, scope
from tinygrad_like import render as R

# ---------------------------------------------------------------- a small DOT reader


def parse_dot(source: str):
    """(nodes, edges, clusters) of graphviz DOT text as graphviz.Digraph writes it.

    nodes: {id: (label lines, tuple of enclosing cluster names)}; edges: [(tail, head, label lines)];
    clusters: {name: enclosing cluster name or None}.
    """
    nodes, edges, clusters, stack = {}, [], {}, []
    for line in source.splitlines():
        line = line.strip()
        if m := re.match(r'subgraph "?([^" ]+)"? \{$', line):
            clusters[m[1]] = stack[-1] if stack else None
            stack.append(m[1])
        elif line == "}":
            if stack:
                stack.pop()
        elif m := re.match(r'(\S+) -> (\S+)(?: \[label="?(.*?)"?\])?$', line):
            edges.append((m[1], m[2], m[3].split("\\n") if m[3] else []))
        elif m := re.match(r'(\S+) \[label=("(?:[^"\\]|\\.)*"|\S+?)[ \]]', line):
            nodes[m[1]] = (m[2].strip('"').split("\\n"), tuple(stack))
    return nodes, edges, clusters


def by_label(nodes):
    """{first label line: node id} (the test graphs give distinct first lines where it matters)."""
    return {labels[0]: nid for nid, (labels, _) in nodes.items()}


def named_edges(nodes, edges):
    """Edges as (tail's first label line, head's first label line, label lines)."""
    first = {nid: labels[0] for nid, (labels, _) in nodes.items()}
    return [(first.get(a, a), first.get(b, b), lab) for a, b, lab in edges]


def small_graph():
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((2, 3)), requires_grad=True, name="x")
    w = Tensor(rng.standard_normal((2, 3)), requires_grad=True, name="w")
    return x, w, (x * w).sum()


# ---------------------------------------------------------------- forward


def test_forward_graph_has_ops_leaves_shapes_and_edges():
    x, w, y = small_graph()
    nodes, edges, _ = parse_dot(draw_graph(y).source)
    assert sorted(labels for labels, _ in nodes.values()) == [["Mul", "(2, 3)"], ["Sum", "()"], ["w", "(2, 3)"],
                                                              ["x", "(2, 3)"]]
    assert sorted(named_edges(nodes, edges)) == [("Mul", "Sum", ["(2, 3)"]), ("w", "Mul", ["(2, 3)"]),
                                                 ("x", "Mul", ["(2, 3)"])]


def test_forward_graph_draws_one_edge_per_use_and_constants():
    x = Tensor([1.0, 2.0], requires_grad=True, name="x")
    nodes, edges, _ = parse_dot(draw_graph((x * x * 3.0).sum(), show_shapes=False).source)
    named = named_edges(nodes, edges)
    assert named.count(("x", "Mul", [])) == 2        # x*x: x enters the Mul twice
    assert any(labels == ["const", "3."] for labels, _ in nodes.values())  # the scalar shows its value


def test_show_values_and_a_freed_graph():
    x = Tensor([1.0, 2.0], requires_grad=True, name="x")
    y = (x * 2.0).sum()
    nodes, _, _ = parse_dot(draw_graph(y, show_values=True).source)
    assert ["x", "(2)", "[1., 2.]"] in [labels for labels, _ in nodes.values()]
    assert ["Sum", "()", "6."] in [labels for labels, _ in nodes.values()]
    y.backward()                                     # frees the graph's arrays, keeps its skeleton
    nodes, _, _ = parse_dot(draw_graph(y).source)
    assert sorted(labels for labels, _ in nodes.values()) == [["Mul", "(2)"], ["Sum", "()"], ["const", "()", "2."],
                                                              ["x", "(2)"]]


# ---------------------------------------------------------------- backward


def test_backward_graph_shows_gradient_functions_shapes_and_norms():
    x, w, y = small_graph()
    c = Tensor(np.ones((2, 3)))                      # a constant: not part of the backward graph
    y = (x * w * c).sum()
    y.backward(retain_graph=True)
    nodes, edges, _ = parse_dot(draw_graph(y, direction="backward", show_grads=True).source)
    ids = by_label(nodes)
    assert set(ids) == {"dL/dL = 1", "SumBackward", "MulBackward", "AccumulateGrad x", "AccumulateGrad w"}
    named = {(a, b): lab for a, b, lab in named_edges(nodes, edges)}
    assert ("dL/dL = 1", "SumBackward") in named
    # output -> leaves, each edge labelled with the gradient's shape and its norm
    (outer,) = [a for a, b in named if b == "AccumulateGrad x"]
    assert outer == "MulBackward" and (outer, "AccumulateGrad w") in named
    assert named[("SumBackward", "MulBackward")][0] == "(2, 3)"

    def norm(label_lines):
        (text,) = [s for s in label_lines if s.startswith("‖g‖=")]
        return float(text[len("‖g‖="):])
    # d(Σ x·w·1)/dx = w and d/dw = x: the drawn norms are those of w and x (3 significant digits)
    assert norm(named[("MulBackward", "AccumulateGrad x")]) == pytest.approx(np.linalg.norm(w.numpy()), rel=5e-3)
    assert norm(named[("MulBackward", "AccumulateGrad w")]) == pytest.approx(np.linalg.norm(x.numpy()), rel=5e-3)
    assert norm(nodes[ids["AccumulateGrad w"]][0]) == pytest.approx(np.linalg.norm(x.numpy()), rel=5e-3)
    assert norm(named[("SumBackward", "MulBackward")]) == pytest.approx(np.sqrt(6), rel=5e-3)  # ones(2, 3)


def test_backward_graph_without_grads_has_no_norms():
    _, _, y = small_graph()
    source = draw_graph(y, direction="backward").source
    assert "MulBackward" in source and "‖g‖" not in source


def test_graph_of_a_gradient_shows_the_backward_computation():
    x = Tensor([1.0, 2.0], requires_grad=True, name="x")
    (x ** 3).sum().backward(create_graph=True)       # x.grad = 1 · (x² · 3), recorded as ops
    nodes, edges, _ = parse_dot(draw_graph(x.grad).source)
    firsts = [labels[0] for labels, _ in nodes.values()]
    assert "PowConst" in firsts and firsts.count("Mul") == 2 and "x" in firsts
    assert ("x", "PowConst", ["(2)"]) in named_edges(nodes, edges)


def test_invalid_direction():
    with pytest.raises(ValueError, match="direction must be 'forward' or 'backward'"):
        draw_graph(small_graph()[2], direction="sideways")


# ---------------------------------------------------------------- scopes and size limits


def test_scopes_become_nested_clusters():
    x, w, _ = small_graph()
    with scope("block0.attn"):
        h = x * w
    with scope("block0"), scope("mlp"):              # nested scopes join with dots
        h = h.relu()
    with scope("block1"):
        y = h.sum()
    nodes, _, clusters = parse_dot(draw_graph(y).source)
    assert clusters == {"cluster_block0": None, "cluster_block0.attn": "cluster_block0",
                        "cluster_block0.mlp": "cluster_block0", "cluster_block1": None}
    where = {labels[0]: path for labels, path in nodes.values()}
    assert where["Mul"] == ("cluster_block0", "cluster_block0.attn")
    assert where["Relu"] == ("cluster_block0", "cluster_block0.mlp")
    assert where["Sum"] == ("cluster_block1",) and where["x"] == ()
    flat, _, flat_clusters = parse_dot(draw_graph(y, group_scopes=False).source)
    assert flat_clusters == {} and "subgraph" not in draw_graph(y, group_scopes=False).source
    assert sorted(labels for labels, _ in flat.values()) == sorted(labels for labels, _ in nodes.values())


def chain(n):
    x = Tensor([1.0], requires_grad=True, name="x")
    y = x
    for _ in range(n):
        y = y * 2.0                                  # each op adds a Mul and a constant leaf
    return y


@pytest.mark.parametrize("direction, total", [("forward", 1 + 30 + 30), ("backward", 1 + 30)])
def test_max_nodes_cuts_with_a_visible_note(direction, total):
    y = chain(30)
    nodes, _, _ = parse_dot(draw_graph(y, direction=direction, max_nodes=10).source)
    assert nodes["cut"][0] == [f"... {total - 10} more nodes not drawn (max_nodes=10)"]
    assert len([n for n in nodes if n not in ("cut", "seed")]) == 10
    everything, _, _ = parse_dot(draw_graph(y, direction=direction, max_nodes=1000).source)
    assert "cut" not in everything and len([n for n in everything if n != "seed"]) == total


# ---------------------------------------------------------------- rendering through every path

SVG = "{http://www.w3.org/2000/svg}"


def svg_texts(svg: str) -> set:
    return {t.text for t in ET.fromstring(svg.encode()).iter(f"{SVG}text")}


@pytest.mark.parametrize("backend", ["dot", "wasm"])
def test_svg_of_a_drawn_graph_parses_and_has_the_labels(backend, request, tmp_path):
    if backend == "dot":
        if shutil.which("dot") is None:
            pytest.skip("system Graphviz `dot` not installed")
        request.getfixturevalue("hide_wasm")
    else:
        request.getfixturevalue("hide_dot")
    assert R.backend() == backend
    x, w, y = small_graph()
    with scope("blk"):
        y = (x * w).sum()
    y.backward(retain_graph=True)
    for direction, expected in [("forward", {"x", "w", "Mul", "Sum", "(2, 3)", "blk"}),
                                ("backward", {"AccumulateGrad x", "MulBackward", "SumBackward", "dL/dL = 1"})]:
        out = draw_graph(y, direction=direction, show_grads=True).render_to(tmp_path / f"{direction}.svg")
        assert out == tmp_path / f"{direction}.svg"
        assert expected <= svg_texts(out.read_text())


def test_without_any_renderer_the_dot_file_is_written_with_a_warning(hide_dot, hide_wasm, tmp_path):
    assert R.backend() == "none"
    g = draw_graph(small_graph()[2])
    with pytest.warns(UserWarning, match="no Graphviz renderer found.*apt-get install graphviz"):
        out = g.render_to(tmp_path / "graph.svg")
    assert out == tmp_path / "graph.dot" and out.read_text() == g.source
