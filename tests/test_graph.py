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


# ---------------------------------------------------------------- a graph freed by backward keeps its skeleton


def cluster_labels(source: str) -> dict:
    """{cluster name: its label} of DOT text as graphviz.Digraph writes it."""
    labels, stack = {}, []
    for line in source.splitlines():
        line = line.strip()
        if m := re.match(r'subgraph "?([^" ]+)"? \{$', line):
            stack.append(m[1])
        elif line == "}":
            if stack:
                stack.pop()
        elif stack and " [" not in line and (m := re.search(r'(?:^| )label=("(?:[^"\\]|\\.)*"|\S+)', line)):
            labels[stack[-1]] = m[1].strip('"')
    return labels


def readme_example():
    xv, wv, bv = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[0.5, -1.0], [0.25, 0.1]]), np.array([0.1, -0.2])
    x = Tensor(xv, name="x")
    w = Tensor(wv, requires_grad=True, name="w")
    b = Tensor(bv, requires_grad=True, name="b")
    return (xv, wv, bv), (x @ w + b).tanh().sum()


def test_after_a_plain_backward_the_whole_graph_is_drawn_with_every_edges_gradient():
    """The README's first example without retain_graph: every op and both leaves are drawn, and every edge
    carries the norm of its gradient, the derivatives worked out in numpy; nothing is left to a note."""
    (xv, wv, bv), loss = readme_example()
    loss.backward()
    nodes, edges, _ = parse_dot(draw_graph(loss, direction="backward", show_grads=True).source)
    slope = 1 - np.tanh(xv @ wv + bv) ** 2                         # d tanh(u)/du, u = xw + b
    norm = lambda a: f"‖g‖={np.linalg.norm(a):.3g}"  # noqa: E731
    carried = {(a, b): lab[-1] for a, b, lab in named_edges(nodes, edges) if a != "dL/dL = 1"}
    assert carried == {("SumBackward", "TanhBackward"): norm(np.ones((2, 2))),      # d sum / d tanh(u) = 1
                       ("TanhBackward", "AddBackward"): norm(slope),
                       ("AddBackward", "MatmulBackward"): norm(slope),
                       ("AddBackward", "AccumulateGrad b"): norm(slope.sum(0)),
                       ("MatmulBackward", "AccumulateGrad w"): norm(xv.T @ slope)}
    labels = {lines[0]: lines for lines, _ in nodes.values()}
    assert labels["AccumulateGrad w"][2] == norm(xv.T @ slope)
    assert "freed" not in nodes                                    # nothing is missing, so no note
    source = draw_graph(loss).source                               # the forward drawing too, shapes and all
    assert sorted(lines[0] for lines, _ in parse_dot(source)[0].values()) == ["Add", "Matmul", "Sum", "Tanh",
                                                                              "b", "w", "x"]
    with pytest.raises(RuntimeError, match=r"already freed.*retain_graph=True"):
        loss.backward()                                            # drawing did not bring the graph back to life
    # the same picture as with retain_graph=True, which keeps the arrays
    _, kept = readme_example()
    kept.backward(retain_graph=True)
    assert draw_graph(kept, direction="backward", show_grads=True).source == \
        draw_graph(loss, direction="backward", show_grads=True).source


def test_a_freed_graph_keeps_one_number_per_gradient_not_the_array():
    """What a plain backward keeps for the drawing is a float on each skeleton; a gradient larger than
    NORM_AT_MOST is not summed (a training step pays no extra pass), and the drawing then says so."""
    from tinygrad_like.scaffolding import NORM_AT_MOST, Skeleton
    x = Tensor(np.ones(8), requires_grad=True, name="x")
    h = x * 3.0
    y = (h * h).sum()
    y.backward()
    kept = y._ctx.parents[0]._ctx.parents[0]
    assert isinstance(kept, Skeleton) and type(kept.grad_norm) is float and kept._data is None
    assert kept.grad_norm == pytest.approx(np.linalg.norm(np.full(8, 2 * 3.0)))      # d(h²)/dh = 2h
    big = Tensor(np.ones(NORM_AT_MOST + 1), requires_grad=True, name="big")
    z = (big * 2.0).exp().sum()
    z.backward()
    nodes, edges, _ = parse_dot(draw_graph(z, direction="backward", show_grads=True).source)
    assert "freed" in nodes and "retain_graph=True" in nodes["freed"][0][-1]
    assert not any(lab[-1].startswith("‖g‖") for a, b, lab in named_edges(nodes, edges) if b == "ExpBackward")


def test_a_freed_graph_keeps_scopes_and_shares_nodes_used_twice():
    x = Tensor(np.ones((3, 4)), requires_grad=True, name="x")
    with scope("layer"):
        h = x.exp()
    y = (h * h).sum()                                              # h feeds Mul twice
    del h
    y.backward()
    nodes, edges, clusters = parse_dot(draw_graph(y).source)
    firsts = sorted(labels[0] for labels, _ in nodes.values())
    assert firsts == ["Exp", "Mul", "Sum", "x"]
    assert named_edges(nodes, edges).count(("Exp", "Mul", ["(3, 4)"])) == 2
    assert {labels[0]: path for labels, path in nodes.values()}["Exp"] == ("cluster_layer",)


# ---------------------------------------------------------------- fused ops opened into their composed twins


def fused_boxes(source: str) -> dict:
    """{box label: sorted first label lines of the nodes inside it} for every opened fused op."""
    nodes, _, _ = parse_dot(source)
    labels = cluster_labels(source)
    boxes = {}
    for lines, path in nodes.values():
        for cluster in path:
            if cluster.startswith("cluster_fused"):
                boxes.setdefault(labels[cluster], []).append(lines[0])
    return {k: sorted(v) for k, v in boxes.items()}


def test_softmax_opens_into_its_primitives_by_default():
    x = Tensor(np.array([[1.0, 2.0, 3.0], [0.5, 0.0, -1.0]]), requires_grad=True, name="x")
    y = x.softmax(-1)
    assert type(y._ctx).__name__ == "Softmax"                      # one fused node in the engine...
    source = draw_graph(y.sum()).source
    assert fused_boxes(source) == {"Softmax (fused)": ["Div", "Exp", "Sub", "Sum", "const"]}  # ...drawn opened
    nodes, edges, _ = parse_dot(source)
    where = {lines[0]: path for lines, path in nodes.values()}
    sums = sorted(path for lines, path in nodes.values() if lines[0] == "Sum")
    assert where["x"] == () and sums == [(), ("cluster_fused_0",)]   # the input and the outer Sum sit outside
    assert {("x", "Sub"), ("Exp", "Div"), ("Div", "Sum")} <= {(a, b) for a, b, _ in named_edges(nodes, edges)}
    assert fused_boxes(draw_graph(y.sum(), expand=False).source) == {}
    assert "Softmax\\n(2, 3)" in draw_graph(y.sum(), expand=False).source


def test_an_opened_backward_graph_carries_the_gradients_through_the_twin():
    """With retain_graph, the gradient that reached the fused op is sent through its twin: the edge
    into x carries the norm of dL/dx = s ⊙ (c − Σ s⊙c), worked out in numpy."""
    xv, cv = np.array([[1.0, 2.0, 3.0], [0.5, 0.0, -1.0]]), np.array([[1.0, -2.0, 0.5], [3.0, 1.0, -1.0]])
    x = Tensor(xv, requires_grad=True, name="x")
    loss = (x.softmax(-1) * Tensor(cv)).sum()
    loss.backward(retain_graph=True)
    grad_before = x.grad.numpy().copy()
    source = draw_graph(loss, direction="backward", show_grads=True).source
    assert fused_boxes(source) == {"SoftmaxBackward (fused)": ["DivBackward", "ExpBackward",
                                                               "SubBackward", "SumBackward"]}
    s = np.exp(xv) / np.exp(xv).sum(-1, keepdims=True)
    dx = s * (cv - (s * cv).sum(-1, keepdims=True))
    nodes, edges, _ = parse_dot(source)
    into_x = [lab for a, b, lab in named_edges(nodes, edges) if b == "AccumulateGrad x"]
    assert into_x == [["(2, 3)", f"‖g‖={np.linalg.norm(dx):.3g}"]]
    np.testing.assert_array_equal(x.grad.numpy(), grad_before)    # drawing touched no .grad
    inside = [lab for a, b, lab in named_edges(nodes, edges) if a == "DivBackward"]
    assert len(inside) == 2 and all(len(lab) == 2 for lab in inside)  # shape and norm on the box's own edges


def test_an_opened_linear_shows_its_constant_input_flowing_in():
    """x needs no gradient, so the engine records no op on it; the opened box still draws x Wᵀ + b
    from x itself (forward), and only what carries gradients (backward)."""
    x = Tensor(np.ones((2, 3, 4)), name="x")
    w = Tensor(np.ones((5, 4)), requires_grad=True, name="w")
    b = Tensor(np.zeros(5), requires_grad=True, name="b")
    loss = x.linear(w, b).sum()
    nodes, edges, _ = parse_dot(draw_graph(loss).source)
    named = {(a, b) for a, b, _ in named_edges(nodes, edges)}
    assert {("x", "Reshape"), ("w", "Permute"), ("Permute", "Matmul"), ("b", "Add")} <= named
    assert fused_boxes(draw_graph(loss).source) == {"Linear (fused)": ["Add", "Matmul", "Permute",
                                                                       "Reshape", "Reshape"]}
    loss.backward(retain_graph=True)
    backward = fused_boxes(draw_graph(loss, direction="backward").source)
    assert backward == {"LinearBackward (fused)": ["AddBackward", "MatmulBackward",
                                                   "PermuteBackward", "ReshapeBackward"]}


def test_after_a_plain_backward_a_fused_op_is_a_closed_box_with_a_note():
    x = Tensor(np.ones((2, 3)), requires_grad=True, name="x")
    loss = x.softmax(-1).sum()
    loss.backward()
    source = draw_graph(loss, direction="backward").source
    boxes = fused_boxes(source)
    assert list(boxes) == ["SoftmaxBackward (fused)"] and boxes["SoftmaxBackward (fused)"] == ["SoftmaxBackward"]
    assert "(not opened: its inputs were\\nfreed by backward)" in source


def layer_norm_model():
    import nn
    layer = nn.LayerNorm(4)
    x = Tensor(np.arange(8.0).reshape(2, 4), requires_grad=True, name="x")
    return layer(x).sum()


def test_default_opens_small_graphs_and_keeps_a_block_fused():
    import nn
    boxes = fused_boxes(draw_graph(layer_norm_model()).source)    # a LayerNorm layer: opened, no argument needed
    assert list(boxes) == ["LayerNorm (fused)"] and {"Sqrt", "Div", "Mul", "Add"} <= set(boxes["LayerNorm (fused)"])
    x = Tensor(np.random.default_rng(0).standard_normal((1, 3, 8)), requires_grad=True, name="x")
    loss = nn.Block(8, n_head=2)(x).sum()                          # 8 fused ops: drawn fused unless asked
    assert fused_boxes(draw_graph(loss).source) == {}
    assert "MultiHeadAttention" in draw_graph(loss).source
    opened = fused_boxes(draw_graph(loss, expand={"MultiHeadAttention"}).source)
    assert list(opened) == ["MultiHeadAttention (fused)"] and {"Matmul", "Exp", "Where", "Cat"} <= set(
        opened["MultiHeadAttention (fused)"])
    every = cluster_labels(draw_graph(loss, expand=True).source)
    assert sorted(v for k, v in every.items() if k.startswith("cluster_fused")) == sorted(
        ["LayerNorm (fused)"] * 2 + ["Linear (fused)"] * 4 + ["MultiHeadAttention (fused)", "Gelu (fused)"])


def test_a_llama_block_opens_its_rmsnorms_and_swiglu():
    """RMSNorm and SwiGLU are fused ops too: expand=True opens them into their composites, the norm into
    its mean, sqrt and division, SwiGLU into the two halves of c_fc's output, σ and the products."""
    import nn
    x = Tensor(np.random.default_rng(0).standard_normal((1, 3, 8)), requires_grad=True, name="x")
    loss = nn.Block(8, n_head=2, mlp="swiglu", norm="rmsnorm", bias=False)(x).sum()
    every = cluster_labels(draw_graph(loss, expand=True).source)
    assert sorted(v for k, v in every.items() if k.startswith("cluster_fused")) == sorted(
        ["RMSNorm (fused)"] * 2 + ["Linear (fused)"] * 4 + ["MultiHeadAttention (fused)", "SwiGLU (fused)"])
    opened = fused_boxes(draw_graph(loss, expand={"SwiGLU", "RMSNorm"}).source)
    assert sorted(opened) == ["RMSNorm (fused)", "SwiGLU (fused)"]
    assert sorted(set(opened["SwiGLU (fused)"])) == ["Getitem", "Mul", "Sigmoid"]
    assert {"Mul", "Sum", "Sqrt", "Div"} <= set(opened["RMSNorm (fused)"])
    assert sorted(opened["SwiGLU (fused)"]).count("Getitem") == 2


def test_an_opened_op_sits_in_its_layers_box():
    nodes, _, clusters = parse_dot(draw_graph(layer_norm_model()).source)
    where = {lines[0]: path for lines, path in nodes.values()}
    assert where["Sqrt"][:-1] == () and where["Sqrt"][-1].startswith("cluster_fused")  # a lone layer: no scope box


def test_expand_names_must_be_fused_ops():
    with pytest.raises(ValueError, match=r"unknown fused ops \['Softmx'\].*'Softmax'"):
        draw_graph(layer_norm_model(), expand={"Softmx"})


# ---------------------------------------------------------------- block graphs read like the state_dict


def tiny_gpt():
    from models.gpt import GPT, GPTConfig
    Tensor.manual_seed(0)
    return GPT(GPTConfig(vocab_size=11, block_size=8, n_layer=2, n_head=2, n_embd=8))


def parameters_sit_with_their_users(source: str, tied=()):
    """Each parameter node is in the box named by its state_dict prefix, and so is every op that reads
    it (except the second user of a tied weight); returns the parameter names drawn."""
    nodes, edges, clusters = parse_dot(source)
    drawn = {}
    for nid, (lines, path) in nodes.items():
        name = lines[0].removeprefix("AccumulateGrad ")
        if "." in name and name.endswith(("weight", "bias")):
            assert path and path[-1] == "cluster_" + name.rsplit(".", 1)[0], (name, path)
            drawn[nid] = name
    for a, b, _ in edges:
        param, op = (a, b) if a in drawn else (b, a)
        if param in drawn and drawn[param] not in tied:
            assert nodes[op][1][-1] == nodes[param][1][-1], (drawn[param], nodes[op])
    return sorted(drawn.values()), clusters


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_a_models_block_called_alone_draws_like_its_state_dict(direction):
    """Block 0 of a GPT never called before, called on its own (as train_gpt.py draws it): boxes named
    transformer.h.0..., each holding its parameters and the op that reads them."""
    model = tiny_gpt()
    block = model.transformer.h[0]
    x = Tensor(np.random.default_rng(0).standard_normal((1, 3, 8)), requires_grad=True, name="x")
    loss = block(x).sum()
    loss.backward()
    source = draw_graph(loss, direction=direction).source
    names, clusters = parameters_sit_with_their_users(source)
    assert names == sorted(n for n, _ in block.named_parameters("transformer.h.0"))
    assert [p.name for p in block.parameters()] == [n for n, _ in block.named_parameters("transformer.h.0")]
    assert clusters["cluster_transformer.h.0"] is None                # transformer > h > h.0 drawn as one box
    for sub in ("attn", "ln_1", "ln_2", "mlp"):
        assert clusters[f"cluster_transformer.h.0.{sub}"] == "cluster_transformer.h.0"
    for sub in ("attn.c_attn", "attn.c_proj"):
        assert clusters[f"cluster_transformer.h.0.{sub}"] == "cluster_transformer.h.0.attn"
    nodes, _, _ = parse_dot(source)
    residual = [path for lines, path in nodes.values() if lines[0].startswith("Add")]
    assert ("cluster_transformer.h.0",) in residual                   # the block's own ops: the residual sums


def test_a_whole_models_graph_puts_every_parameter_in_its_layer():
    model = tiny_gpt()
    idx = np.array([[1, 2, 3, 4]])
    _, loss = model(idx, np.array([[2, 3, 4, 5]]))
    loss.backward()
    for direction in ("forward", "backward"):
        names, clusters = parameters_sit_with_their_users(draw_graph(loss, direction=direction, max_nodes=2000).source,
                                                          tied={"transformer.wte.weight"})
        assert names == sorted(model.state_dict())
        assert clusters["cluster_transformer.h.1.mlp.c_fc"] == "cluster_transformer.h.1.mlp"
        assert clusters["cluster_transformer.h"] == "cluster_transformer"


def test_a_lone_block_draws_its_sub_layers_at_the_top():
    import nn
    block = nn.Block(8, n_head=2)
    loss = block(Tensor(np.ones((1, 2, 8)), requires_grad=True, name="x")).sum()
    names, clusters = parameters_sit_with_their_users(draw_graph(loss).source)
    assert names == sorted(block.state_dict())
    assert clusters["cluster_attn.c_attn"] == "cluster_attn" and clusters["cluster_ln_1"] is None


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_a_lone_block_inside_a_scope_draws_each_weight_in_the_box_of_its_op(direction):
    """A Block called on its own inside scope("transformer") runs its ops in transformer.attn.c_attn,
    ...; each weight keeps its state_dict name (attn.c_attn.weight) and sits in the very box of the
    op that reads it, never in a second attn.c_attn box outside transformer."""
    import nn
    block = nn.Block(8, n_head=2)
    with scope("transformer"):
        loss = block(Tensor(np.ones((1, 2, 8)), requires_grad=True, name="x")).sum()
    loss.backward()
    nodes, edges, clusters = parse_dot(draw_graph(loss, direction=direction).source)
    assert [c for c in clusters if not c.startswith(("cluster_transformer", "cluster_fused"))] == []
    weights = {nid: labels[0].removeprefix("AccumulateGrad ") for nid, (labels, _) in nodes.items()
               if labels[0].endswith(("weight", "bias"))}
    assert sorted(weights.values()) == sorted(block.state_dict())
    for nid, name in weights.items():
        assert nodes[nid][1][-1] == "cluster_transformer." + name.rsplit(".", 1)[0], (name, nodes[nid][1])
    users = [(a, b) if b in weights else (b, a) for a, b, _ in edges if a in weights or b in weights]
    assert len(users) == len(weights)                                  # each weight read by one op
    for op, weight in users:
        assert nodes[op][1][-1] == nodes[weight][1][-1], (weights[weight], nodes[op])
