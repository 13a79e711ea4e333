"""backprop_steps: the step-through page of a backward pass.

The page is parsed with html.parser; its frames are compared with the engine's own order (the
`on_step` hook of autograd.backprop and autograd.toposort, run on a twin graph), its values with
gradients from math or plain-numpy finite differences. The browser tests load the page in headless
Chromium, press the right arrow key and click "next", and compare screenshots.
"""
import html.parser
import io
import pathlib
import re
import subprocess
import sys

import matplotlib.image
import numpy as np
import pytest

from browser import chromium, headless_chrome
from tinygrad_like import Tensor, backprop_steps
from tinygrad_like.autograd import backprop
from tinygrad_like.backprop_steps import show
from tinygrad_like.scaffolding import toposort

DEMOS = pathlib.Path(__file__).resolve().parents[1] / "demos"
if str(DEMOS) not in sys.path:
    sys.path.append(str(DEMOS))

import attention_by_hand  # noqa: E402
import render_graphs  # noqa: E402


class Page(html.parser.HTMLParser):
    """Frames (data attributes and table rows as text), the SVG's node ids, and anything external."""

    def __init__(self, text: str):
        super().__init__()
        self.frames, self.svg_ids, self.external, self.counter = [], set(), [], None
        self._row = self._cell = self._table = None
        self._in_counter = False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("link", "img", "iframe") or (tag == "script" and "src" in a):
            self.external.append((tag, a))
        if any(v and re.match(r"(https?:)?//", v) for k, v in a.items() if k in ("src", "href")):
            self.external.append((tag, a))
        if tag == "section" and "frame" in a.get("class", ""):
            self.frames.append(dict(attrs=a, rows={}, text=[]))
        if tag == "g" and a.get("id"):
            self.svg_ids.add(a["id"])
        if tag == "table":
            self._table = a.get("class")
        if tag == "tr" and self.frames:
            self._row = dict(attrs=a, cells=[])
        if tag in ("th", "td") and self._row is not None:
            self._cell = []
        self._in_counter = tag == "span" and a.get("id") == "counter"
        self._in_rule = tag == "pre" and a.get("class") == "rule"

    def handle_endtag(self, tag):
        if tag in ("th", "td") and self._cell is not None:
            self._row["cells"].append("".join(self._cell).strip())
            self._cell = None
        if tag == "tr" and self._row is not None:
            self.frames[-1]["rows"].setdefault(self._table, []).append(self._row)
            self._row = None
        if tag == "span":
            self._in_counter = False
        if tag == "pre":
            self._in_rule = False

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        if self._in_counter:
            self.counter = data
        if getattr(self, "_in_rule", False):
            self.frames[-1]["rule"] = self.frames[-1].get("rule", "") + data
        if self.frames:
            self.frames[-1]["text"].append(data)


def label(t: Tensor) -> str:
    """The engine's name for a node of the backward walk, as the page writes it."""
    if t._ctx is None:
        return f"AccumulateGrad {t.name}"
    return type(t._ctx).__name__ + "Backward" + (f" {t.name}" if t.name else "")


def numbers(text: str) -> np.ndarray:
    return np.array([float(v) for v in re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", text)])


def engine_order(build) -> tuple[list, list]:
    """(labels from the on_step hook, labels of reversed(toposort)) for a fresh twin of the graph."""
    loss = build()
    expected_walk = [label(t) for t in reversed(toposort([loss]))]
    hooked = []
    backprop([loss], [Tensor(np.ones_like(loss.numpy()))], on_step=lambda node, g, passed: hooked.append(label(node)))
    return hooked, expected_walk


def neuron():
    out = render_graphs.neuron()      # tanh(w·x + b), x = (1, -2, 0.5), w = (0.3, 0.1, -0.4), b = 0.2
    out.name = "out"
    return out


def leaves(loss) -> dict:
    return {t.name: t for t in toposort([loss]) if t._ctx is None}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    out = tmp_path_factory.mktemp("backprop_steps")
    loss = neuron()
    w, b = leaves(loss)["w"], leaves(loss)["b"]
    neuron_path = backprop_steps(loss, out / "neuron.html")
    attn_path = backprop_steps(attention_by_hand.token3_loss(), out / "attention.html")
    return {"neuron": Page(neuron_path.read_text(encoding="utf-8")), "neuron_path": neuron_path,
            "neuron_leaves": (w, b), "attention": Page(attn_path.read_text(encoding="utf-8")),
            "attention_path": attn_path}


@pytest.mark.parametrize("name, build, steps", [("neuron", neuron, 6),
                                                ("attention", attention_by_hand.token3_loss, 15)])
def test_one_frame_per_backward_step_in_the_engines_order(pages, name, build, steps):
    page = pages[name]
    shown = [f["attrs"]["data-label"] for f in page.frames]
    hooked, walk = engine_order(build)
    assert shown == hooked == walk
    assert len(shown) == steps
    assert [f["attrs"]["data-step"] for f in page.frames] == [str(i + 1) for i in range(steps)]
    assert page.counter == f"step 1 / {steps}"
    # every frame's node is drawn in the SVG, and a node comes after every node that sent it a gradient
    position = {f["attrs"]["data-node"]: i for i, f in enumerate(page.frames)}
    assert set(position) <= page.svg_ids
    for i, f in enumerate(page.frames):
        for target in f["attrs"]["data-to"].split():
            assert position[target] > i


@pytest.mark.parametrize("name", ["neuron", "attention"])
def test_page_is_self_contained(pages, name):
    assert pages[name].external == []
    text = pages[f"{name}_path"].read_text(encoding="utf-8")
    assert "<svg" in text and "http://" not in text.split("<svg", 1)[0]
    assert 'id="prev"' in text and 'id="next"' in text and "ArrowRight" in text and "ArrowLeft" in text


def test_neuron_values_are_the_chain_rule(pages):
    """tanh(w·x + b): dL/dz = 1 - tanh(z)², dL/dw = (1 - tanh(z)²) x, dL/db = 1 - tanh(z)²."""
    x, w, b = np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.1, -0.4]), 0.2
    z = w @ x + b
    dz = 1 - np.tanh(z) ** 2
    frames = pages["neuron"].frames
    io_rows = [{r["cells"][0]: r["cells"][1] for r in f["rows"]["io"]} for f in frames]
    first = io_rows[0]
    assert numbers(first["forward value of out"]) == pytest.approx([np.tanh(z)], abs=1e-4)
    assert numbers(first["receives dL/d(out) ()"]) == pytest.approx([1.0])
    passed = [r["cells"][1] for r in frames[0]["rows"]["io"] if r["attrs"].get("class") == "passed"]
    assert numbers(passed[0]) == pytest.approx([dz], rel=1e-3)
    mul = next(f for f in frames if f["attrs"]["data-label"] == "MulBackward")
    to_w = [r["cells"][1] for r in mul["rows"]["io"] if r["attrs"].get("class") == "passed"]
    assert len(to_w) == 1                                      # x needs no gradient
    assert mul["rule"].startswith("# tinygrad_like/ops.py: Mul.backward\n") and "grad * x" in mul["rule"]
    assert "rule" not in frames[-1]                            # a leaf applies no rule
    np.testing.assert_allclose(numbers(to_w[0]), dz * x, rtol=1e-3)
    shown = {r["cells"][0]: r["cells"][1] for r in frames[-1]["rows"]["leaves"]}
    np.testing.assert_allclose(numbers(shown["w.grad"]), dz * x, rtol=1e-3)
    np.testing.assert_allclose(numbers(shown["b.grad"]), [dz], rtol=1e-3)
    # the page's run was a real backward: .grad is filled as loss.backward() fills it
    w_t, b_t = pages["neuron_leaves"]
    assert w_t.name == "w" and b_t.name == "b"
    np.testing.assert_allclose(w_t.grad.numpy(), dz * x, rtol=1e-6)
    np.testing.assert_allclose(b_t.grad.numpy(), dz, rtol=1e-6)


def test_leaf_grads_appear_in_the_frame_where_the_walk_reaches_them(pages):
    frames = pages["neuron"].frames
    for i, f in enumerate(frames):
        rows = {r["cells"][0]: r for r in f["rows"]["leaves"]}
        for name in ("w", "b"):
            reached = next(j for j, g in enumerate(frames) if g["attrs"]["data-label"] == f"AccumulateGrad {name}")
            row = rows[f"{name}.grad"]
            assert (row["cells"][1] == "None") == (i < reached)
            assert (row["attrs"].get("class") == "changed") == (i == reached)


def test_attention_gradients_match_numpy_finite_differences(pages):
    """The last frame's W_Q, W_K, W_V .grad against central differences of a plain-numpy forward."""
    x = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    Ws = {"W_Q": np.array([[1.0, 0.0], [1.0, 1.0]]), "W_K": np.eye(2), "W_V": np.array([[1.0, 0.0], [0.0, 2.0]])}

    def loss(W):
        q, k, v = x @ W["W_Q"], x @ W["W_K"], x @ W["W_V"]
        s = q[2] @ k.T / np.sqrt(2)
        return (np.exp(s) / np.exp(s).sum() @ v).sum()

    shown = {r["cells"][0]: r["cells"][1] for r in pages["attention"].frames[-1]["rows"]["leaves"]}
    for name, W in Ws.items():
        numeric = np.zeros((2, 2))
        for i in np.ndindex(2, 2):
            plus, minus = {**Ws, name: W.copy()}, {**Ws, name: W.copy()}
            plus[name][i] += 1e-6
            minus[name][i] -= 1e-6
            numeric[i] = (loss(plus) - loss(minus)) / 2e-6
        np.testing.assert_allclose(numbers(shown[f"{name}.grad"]), numeric.ravel(), rtol=1e-3, atol=1e-4, err_msg=name)


def test_a_tensor_used_twice_receives_the_sum_of_both_gradients(pages):
    """exp feeds both the row sum and the division: the page shows two uses waiting, then their sum."""
    frames = pages["attention"].frames
    exp_step = next(i for i, f in enumerate(frames) if f["attrs"]["data-label"] == "ExpBackward exp")
    before = {r["cells"][0]: r["cells"] for r in frames[exp_step - 1]["rows"]["waiting"]}
    assert before[f"{exp_step + 1}. ExpBackward exp"][2] == "2 uses"
    sent = [r["cells"][1] for f in frames[:exp_step] for r in f["rows"]["io"]
            if r["attrs"].get("data-to") == frames[exp_step]["attrs"]["data-node"]]
    assert len(sent) == 2 and all(s.startswith("shape (3, 3), ‖g‖ = ") for s in sent)


def test_large_gradients_show_shape_and_norm():
    g = np.arange(6.0).reshape(2, 3)
    assert show(g) == f"shape (2, 3), ‖g‖ = {np.sqrt(55):.4g}"
    assert show(np.array([1.0, -2.5])) == "[1, -2.5]"
    assert show(np.array(0.25)) == "0.25"


def test_grad_accumulates_into_an_existing_grad_and_the_graph_is_freed(tmp_path):
    loss = neuron()
    w = leaves(loss)["w"]
    w.grad = Tensor([1.0, 1.0, 1.0])
    page = Page(backprop_steps(loss, tmp_path / "again").read_text(encoding="utf-8"))
    x, wv = np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.1, -0.4])
    new = (1 - np.tanh(wv @ x + 0.2) ** 2) * x
    np.testing.assert_allclose(w.grad.numpy(), 1 + new, rtol=1e-6)
    reached = next(f for f in page.frames if f["attrs"]["data-label"] == "AccumulateGrad w")
    row = {r["cells"][0]: r["cells"][1] for r in reached["rows"]["leaves"]}["w.grad"]
    assert row.endswith("(was [1, 1, 1])")
    np.testing.assert_allclose(numbers(row)[:3], 1 + new, rtol=1e-3)
    with pytest.raises(RuntimeError, match="freed"):
        loss.backward()
    assert (tmp_path / "again.html").exists()


def test_bad_loss_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match=r"backprop_steps: .*scalar.*shape \(3,\)"):
        backprop_steps(Tensor([1.0, 2.0, 3.0], requires_grad=True) * 2, tmp_path / "x.html")


# ---------------------------------------------------------------- in a real browser

def image(png: bytes) -> np.ndarray:
    return matplotlib.image.imread(io.BytesIO(png), format="png")[..., :3]


def non_blank(img: np.ndarray) -> bool:
    """More than a plain background: many pixels away from the most common colour."""
    flat = img.reshape(-1, 3)
    background = np.median(flat, axis=0)
    return np.mean(np.abs(flat - background).sum(axis=1) > 0.1) > 0.01


def test_browser_arrow_key_and_next_button_change_the_frame(pages, tmp_path):
    """Selenium drives headless Chromium: press the right arrow three times, then click next."""
    driver = headless_chrome(tmp_path / "profile")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    try:
        driver.get(pages["attention_path"].resolve().as_uri())
        counter = driver.find_element(By.ID, "counter")
        assert counter.text == "step 1 / 15"
        first = image(driver.get_screenshot_as_png())
        body = driver.find_element(By.TAG_NAME, "body")
        for _ in range(3):
            body.send_keys(Keys.ARROW_RIGHT)
        assert counter.text == "step 4 / 15"
        visible = [f for f in driver.find_elements(By.CSS_SELECTOR, "section.frame") if f.is_displayed()]
        assert [f.get_attribute("data-step") for f in visible] == ["4"]
        current = driver.find_elements(By.CSS_SELECTOR, "g.node.current")
        assert [c.get_attribute("id") for c in current] == [visible[0].get_attribute("data-node")]
        later = image(driver.get_screenshot_as_png())
        driver.find_element(By.ID, "next").click()
        assert counter.text == "step 5 / 15"
        body.send_keys(Keys.ARROW_LEFT)
        assert counter.text == "step 4 / 15"
        (tmp_path / "first.png").write_bytes(driver.get_screenshot_as_png())
    finally:
        driver.quit()
    assert non_blank(first) and non_blank(later)
    assert first.shape == later.shape and np.abs(first - later).sum(axis=2).astype(bool).mean() > 0.001


def test_browser_screenshots_of_two_frames_differ(pages, tmp_path):
    """Without a driver: chromium --screenshot of the page opened at step 1 and at step 5 (#step=5)."""
    browser = chromium()
    if browser is None:
        pytest.skip("no headless browser: needs chromium on PATH (Debian: apt-get install chromium)")
    shots = []
    for step in (1, 5):
        png = tmp_path / f"step{step}.png"
        subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                        "--disable-component-update", "--disable-sync", "--no-first-run",
                        f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,900", f"--screenshot={png}",
                        pages["neuron_path"].resolve().as_uri() + f"#step={step}"],
                       capture_output=True, timeout=120, check=True)
        shots.append(image(png.read_bytes()))
    assert all(non_blank(s) for s in shots)
    assert np.abs(shots[0] - shots[1]).sum(axis=2).astype(bool).mean() > 0.001


@pytest.mark.parametrize("name", ["neuron", "attention"])
def test_the_pages_in_docs_are_what_render_graphs_writes_today(pages, name):
    """docs/backprop/ holds copies of the demo's pages: same frames, same numbers as a fresh run."""
    committed = Page((pathlib.Path(__file__).resolve().parents[1] / "docs" / "backprop" / f"{name}_backprop.html")
                     .read_text(encoding="utf-8"))
    fresh = pages[name]
    assert [f["attrs"]["data-label"] for f in committed.frames] == [f["attrs"]["data-label"] for f in fresh.frames]
    assert [(f["rows"], f.get("rule")) for f in committed.frames] == [(f["rows"], f.get("rule")) for f in fresh.frames]


def test_a_tensor_used_twice_gets_two_rows_and_their_sum(tmp_path):
    """x * x: MulBackward passes g·x to x twice; the leaf then receives 2x, as d(x²)/dx says."""
    x = Tensor([3.0, -1.0], requires_grad=True, name="x")
    page = Page(backprop_steps((x * x).sum(), tmp_path / "square.html").read_text(encoding="utf-8"))
    assert [f["attrs"]["data-label"] for f in page.frames] == ["SumBackward", "MulBackward", "AccumulateGrad x"]
    passed = [r["cells"][1] for r in page.frames[1]["rows"]["io"] if r["attrs"].get("class") == "passed"]
    assert passed == ["[3, -1]", "[3, -1]"]
    waiting = page.frames[1]["rows"]["waiting"][0]["cells"]
    assert waiting[1:] == ["[6, -2]", "2 uses"]
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, -2.0])


def test_without_graphviz_the_page_still_steps(tmp_path, monkeypatch):
    monkeypatch.setattr("tinygrad_like.render.backend", lambda: "none")
    text = backprop_steps(neuron(), tmp_path / "plain.html").read_text(encoding="utf-8")
    page = Page(text)
    assert "<svg" not in text and "No Graphviz renderer" in text
    assert len(page.frames) == 6 and page.counter == "step 1 / 6"


def test_a_fused_node_shows_its_composites_derivative_and_names_the_kernel(tmp_path):
    """SoftmaxBackward runs fast/fused.py's hand-written backward (a kernel with the fast extra): the page shows
    what a learner can read instead, the composite softmax is and its derivative dx = y ⊙ (g − Σ g⊙y), and
    names the kernel only as how it runs."""
    x = Tensor([[1.0, 2.0, 0.5]], requires_grad=True, name="x")
    w = Tensor([[0.3, -1.0, 2.0]], name="w")
    page = Page(backprop_steps((x.softmax(-1) * w).sum(), tmp_path / "softmax.html").read_text(encoding="utf-8"))
    frame = next(f for f in page.frames if f["attrs"]["data-label"] == "SoftmaxBackward")
    text = frame["rule"]
    assert text.startswith("# a fused node: one node for the composite tinygrad_like/composites.py: softmax\n")
    assert "def softmax(x: Tensor, axis: int) -> Tensor:" in text and "e / e.sum(axis, keepdim=True)" in text
    assert "# its derivative, written out (tinygrad_like/fast/fused.py: Softmax):" in text
    assert "dx = y ⊙ (g − Σ g⊙y)" in text
    assert "# how it runs: Softmax.backward calls softmax_backward:\n#   a compiled one-pass kernel" in text
    assert "def backward" not in text and "compiled(" not in text        # not the fast code itself
    # a primitive still shows its own backward, as written
    mul = next(f for f in page.frames if f["attrs"]["data-label"] == "MulBackward")
    assert mul["rule"].startswith("# tinygrad_like/ops.py: Mul.backward\n")
