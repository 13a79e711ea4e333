"""Fast smoke tests of the small demos: attention_by_hand, render_graphs, gradcheck_tour, why_sqrt_d.

Each demo's main() runs in-process with small settings into tmp_path. Expected numbers come from
the seed chapter (../shared/seeds/000_0c2f6b44173e4dca.txt, "Attention with real numbers", "The
causal mask", "The feed-forward network"), from math (the spread of q·k is √d), or from an
independent plain-numpy computation, never from the code under test.
"""
import math
import pathlib
import sys
import xml.etree.ElementTree as ET

import matplotlib.image
import numpy as np
import pytest

DEMOS = pathlib.Path(__file__).resolve().parents[1] / "demos"
if str(DEMOS) not in sys.path:
    sys.path.append(str(DEMOS))  # the demos import their helper module `_common` as scripts do

import attention_by_hand  # noqa: E402
import gradcheck_tour  # noqa: E402
import render_graphs  # noqa: E402
import why_sqrt_d  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"


def svg_parts(path) -> dict:
    """The text lines, node count and cluster titles of a graphviz SVG (it must parse as XML)."""
    root = ET.parse(path).getroot()
    groups = list(root.iter(f"{SVG}g"))
    return {"texts": [t.text for t in root.iter(f"{SVG}text")],
            "nodes": sum(g.get("class") == "node" for g in groups),
            "clusters": {g.find(f"{SVG}title").text for g in groups if g.get("class") == "cluster"}}


# ---------------------------------------------------------------- attention_by_hand

@pytest.fixture(scope="module")
def by_hand(tmp_path_factory):
    return attention_by_hand.main(["--out", str(tmp_path_factory.mktemp("attention_by_hand"))])


# (result key, the chapter's numbers, tolerance): the chapter rounds to 3 decimals
SEED_NUMBERS = [
    ("q", [[1, 0], [1, 1], [2, 1]], 0),
    ("k", [[1, 0], [0, 1], [1, 1]], 0),
    ("v", [[1, 0], [0, 2], [1, 2]], 0),
    ("scores3", [2, 1, 3], 0),
    ("scaled3", [1.414, 0.707, 2.121], 1e-3),
    ("exp3", [4.113, 2.028, 8.342], 1e-3),
    ("exp_sum3", 14.484, 2e-3),  # the text adds its rounded terms: the exact sum is 14.4826
    ("weights3", [0.284, 0.140, 0.576], 1e-3),
    ("out3", [0.860, 1.432], 1e-3),
    ("causal_weights", [[1, 0, 0], [0.5, 0.5, 0], [0.284, 0.140, 0.576]], 1e-3),
    ("causal_out", [[1, 0], [0.5, 1.0], [0.860, 1.432]], 1e-3),
    ("mlp_pre", [0.860, 1.432, -0.572, 0.572], 1e-3),
    ("mlp_relu", [0.860, 1.432, 0, 0.572], 1e-3),
]


@pytest.mark.parametrize("key, expected, tol", SEED_NUMBERS, ids=[c[0] for c in SEED_NUMBERS])
def test_attention_by_hand_matches_the_chapter(by_hand, key, expected, tol):
    np.testing.assert_allclose(by_hand[key], expected, rtol=0, atol=tol + 1e-6)


def test_attention_by_hand_gradients_match_numpy_finite_differences(by_hand):
    """d(sum of token 3's output)/dW for W_Q, W_K, W_V, recomputed in plain numpy, float64."""
    x = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    Ws = {"W_Q": np.array([[1.0, 0.0], [1.0, 1.0]]), "W_K": np.eye(2), "W_V": np.array([[1.0, 0.0], [0.0, 2.0]])}

    def loss(W):
        q, k, v = x @ W["W_Q"], x @ W["W_K"], x @ W["W_V"]
        s = q[2] @ k.T / np.sqrt(2)
        w = np.exp(s) / np.exp(s).sum()
        return (w @ v).sum()

    eps = 1e-6
    for name, W in Ws.items():
        numeric = np.zeros((2, 2))
        for i in np.ndindex(2, 2):
            plus, minus = {**Ws, name: W.copy()}, {**Ws, name: W.copy()}
            plus[name][i] += eps
            minus[name][i] -= eps
            numeric[i] = (loss(plus) - loss(minus)) / (2 * eps)
        np.testing.assert_allclose(by_hand["grads"][name], numeric, atol=1e-5, err_msg=name)


def test_attention_by_hand_graphs(by_hand):
    forward = svg_parts(by_hand["files"]["forward"])
    backward = svg_parts(by_hand["files"]["backward"])
    for label in ("W_Q", "W_K", "W_V", "Exp", "Matmul", "weights"):
        assert label in forward["texts"], label
    for label in ("AccumulateGrad W_Q", "AccumulateGrad W_K", "AccumulateGrad W_V", "ExpBackward"):
        assert label in backward["texts"], label
    assert any(t and t.startswith("‖g‖=") for t in backward["texts"])  # show_grads put norms on it
    assert {"cluster_project", "cluster_softmax", "cluster_mix"} <= forward["clusters"]


# ---------------------------------------------------------------- render_graphs

@pytest.fixture(scope="module")
def gallery(tmp_path_factory):
    return render_graphs.main(["--out", str(tmp_path_factory.mktemp("render_graphs"))])


GALLERY_LABELS = [
    ("neuron_forward", ["Tanh", "w", "b", "x"]),
    ("neuron_backward", ["TanhBackward", "AccumulateGrad w", "AccumulateGrad b"]),
    ("mlp_forward", ["fc1.weight", "fc2.bias", "Tanh"]),
    ("mlp_backward", ["AccumulateGrad fc1.weight", "AccumulateGrad fc2.weight"]),
    ("softmax_forward", ["Max", "Exp", "Sum", "Div", "logits"]),
    ("softmax_backward", ["ExpBackward", "MaxBackward", "AccumulateGrad logits"]),
    ("attention_head_forward", ["query.weight", "key.weight", "value.weight", "Exp", "Where"]),
    ("attention_head_backward", ["AccumulateGrad query.weight", "ExpBackward"]),
    ("block_forward", ["attn.c_attn.weight", "mlp.c_fc.weight", "ln_1.weight", "ln_2.bias", "Tanh"]),
    ("block_backward", ["AccumulateGrad attn.c_proj.weight", "AccumulateGrad mlp.c_proj.weight",
                        "AccumulateGrad x"]),
    ("grad_of_tanh", ["Tanh", "x.grad", "x"]),
]


@pytest.mark.parametrize("name, labels", GALLERY_LABELS, ids=[c[0] for c in GALLERY_LABELS])
def test_gallery_svg_parses_and_shows_its_ops(gallery, name, labels):
    entry = gallery[name]
    assert entry["path"].suffix == ".svg"
    parts = svg_parts(entry["path"])
    for label in labels:
        assert label in parts["texts"], label
    # every drawn tensor is a node of the picture; the backward pictures add the "dL/dL = 1" seed
    assert parts["nodes"] == entry["nodes"] + name.endswith("backward")


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_block_graph_is_grouped_by_sub_layer(gallery, direction):
    parts = svg_parts(gallery[f"block_{direction}"]["path"])
    assert {"cluster_ln_1", "cluster_attn", "cluster_ln_2", "cluster_mlp"} <= parts["clusters"]
    assert {"ln_1", "attn", "ln_2", "mlp"} <= set(parts["texts"])  # the cluster titles are drawn


def test_gradient_graph_is_more_than_a_leaf(gallery):
    """x.grad from create_graph=True is a graph: tanh, its square, 1 - it, times the incoming 1s."""
    assert gallery["grad_of_tanh"]["nodes"] >= 5


# ---------------------------------------------------------------- gradcheck_tour

def test_gradcheck_tour_all_pass(tmp_path):
    result = gradcheck_tour.main(["--out", str(tmp_path)])
    assert result["all_passed"], result["failed"]
    assert "FAIL" not in result["files"]["table"].read_text()
    names = {r["name"].split()[0] for r in result["rows"]}
    for layer in ("Linear", "Embedding", "LayerNorm", "RMSNorm", "MLP", "Attention", "MoE", "Block"):
        assert layer in names, layer
    for op in ("exp", "log", "matmul", "softmax", "getitem", "attention"):
        assert op in names, op
    assert max(r["max_abs_error"] for r in result["rows"]) < 1e-6


def test_gradcheck_tour_catches_a_wrong_gradient():
    """a·detach(a) has value a² but backward sees only one factor: analytic a, numeric 2a."""
    a = np.array([0.5, -1.0, 2.0])
    row = gradcheck_tour.check("wrong", lambda t: t * t.detach(), [gradcheck_tour.Tensor(a, requires_grad=True)])
    assert not row["passed"]
    assert row["max_abs_error"] > 0.1


# ---------------------------------------------------------------- why_sqrt_d

def test_why_sqrt_d_spread_grows_like_sqrt_d(tmp_path):
    result = why_sqrt_d.main(["--out", str(tmp_path), "--sizes", "16", "512", "--batch", "16"])
    small, big = result["rows"]
    assert big["std_raw"] / small["std_raw"] == pytest.approx(math.sqrt(512 / 16), rel=0.2)
    for row in (small, big):
        assert row["std_raw"] == pytest.approx(math.sqrt(row["d"]), rel=0.2)
        assert row["std_scaled"] == pytest.approx(1.0, abs=0.2)
    # without scaling, d = 512 makes the softmax nearly one-hot and starves the gradient
    assert big["max_weight_raw"] > 0.85 > 0.5 > big["max_weight_scaled"]
    assert big["grad_norm_raw"] < 0.05 * big["grad_norm_scaled"]
    image = matplotlib.image.imread(result["files"]["plot"])
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100


@pytest.mark.parametrize("name, steps", [("neuron_backprop", 6), ("attention_backprop", 15)])
def test_gallery_writes_the_backprop_pages(gallery, name, steps):
    """One frame per node of the walk. Neuron: tanh, add, sum, mul, and the leaves w and b (x needs no
    gradient). Attention: sum, index, the mix matmul, divide by the row sum, row sum, exp, divide by
    √2, the score matmul, the transpose of k, the three projection matmuls, and W_Q, W_K, W_V."""
    entry = gallery[name]
    assert entry["path"].suffix == ".html" and entry["steps"] == steps
    assert entry["path"].read_text(encoding="utf-8").count('<section class="frame"') == steps
