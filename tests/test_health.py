"""nn/health.py: HealthMonitor's statistics against direct computations, and its rules on induced failures
(a learning rate 100x too large, an init 10x too large) and on a healthy run, which fires none."""
import json
import math

import numpy as np
import pytest

from models.gpt import GPT, GPTConfig
from nn.health import SATURATED, HealthMonitor
from nn.optim import AdamW, clip_grad_norm
from tinygrad_like import Tensor

V, T, B = 64, 16, 16


def bigram_batches(n: int, seed: int = 0):
    """Batches from a fixed random bigram table: a task with something to learn (loss below ln V)."""
    rng = np.random.default_rng(seed)
    table = np.cumsum(rng.dirichlet(np.full(V, 0.1), size=V), axis=1)
    for _ in range(n):
        x = np.zeros((B, T + 1), dtype=np.int64)
        x[:, 0] = rng.integers(0, V, B)
        for j in range(T):
            x[:, j + 1] = np.minimum((table[x[:, j]] < rng.random((B, 1))).sum(1), V - 1)
        yield x[:, :-1], x[:, 1:]


def run(lr=3e-3, init=1.0, steps=15, every=5, mlp="gelu"):
    """Train a small GPT with the monitor; returns (monitor, first step whose loss is not finite or None)."""
    Tensor.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=V, block_size=T, n_layer=2, n_head=4, n_embd=64, mlp=mlp))
    for p in model.parameters():
        if p.ndim >= 2:
            p.data[...] *= init
    lines = []
    health = HealthMonitor(model, every=every, vocab_size=V, log=lines.append)
    opt = AdamW(model.parameters(), lr=lr, betas=(0.9, 0.99))
    nan_step = None
    for step, (x, y) in enumerate(bigram_batches(steps)):
        health.before_forward(step)
        _, loss = model(x, y)
        loss.backward()
        health.after_backward(step, loss)
        clip_grad_norm(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad()
        health.after_step(step)
        if nan_step is None and not math.isfinite(loss.item()):
            nan_step = step
    assert lines == health.alerts
    return health, nan_step


@pytest.fixture(scope="module")
def healthy():
    return run()


def test_a_healthy_run_fires_no_rule(healthy):
    health, _ = healthy
    assert health.alerts == []
    assert health.verdict() == "health: 0 rules fired over 3 checks (every 5 steps, 0 to 10)"
    assert health.steps == [0, 5, 10]
    assert health.loss[-1] < health.loss[0] < math.log(V) + 0.1  # it learns, and starts at about ln V
    assert health.layers == ["embed", "h.0", "h.1", "head"]


def test_learning_rate_100x_fires_the_update_ratio_rule_first():
    health, nan_step = run(lr=0.3)
    assert health.fired[0] == "update ratio high"
    assert "step 0" in health.alerts[0] and "lower it" in health.alerts[0]
    assert nan_step is None or nan_step > 0


def test_init_10x_fires_the_initial_loss_rule():
    health, nan_step = run(init=10.0)
    assert health.fired[0] == "initial loss" and "ln 64 = 4.159" in health.alerts[0]
    assert health.loss[0] > math.log(V) + 0.5 and nan_step is None


def test_nan_is_named_with_step_and_parameter():
    Tensor.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=V, block_size=T, n_layer=1, n_head=2, n_embd=16))
    health = HealthMonitor(model, every=10, log=lambda line: None)
    x, y = next(bigram_batches(1))
    health.before_forward(3)
    _, loss = model(x, y)
    loss.backward()
    model.transformer.h[0].attn.c_proj.weight.grad.data[0, 0] = np.nan
    health.after_backward(3, loss)
    assert health.alerts == ["health: non-finite: gradient of transformer.h.0.attn.c_proj.weight holds NaN/Inf "
                             "at step 3. Usually: lower the learning rate; look for log(0), division by 0 or "
                             "float16 overflow."]


def test_statistics_equal_direct_computations():
    """Recompute one recorded step by hand: grad norms, update ratios, activation std, saturation."""
    Tensor.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=V, block_size=T, n_layer=2, n_head=4, n_embd=64))
    for p in model.parameters():
        if p.ndim >= 2:
            p.data[...] *= 8.0  # some GELU inputs below -3, so the saturated fraction is not 0
    health = HealthMonitor(model, every=1, vocab_size=V, log=lambda line: None)
    opt = AdamW(model.parameters(), lr=3e-3)
    x, y = next(bigram_batches(1))
    health.before_forward(0)
    _, loss = model(x, y)
    loss.backward()
    health.after_backward(0, loss)
    grads = {n: p.grad.numpy().copy() for n, p in model.named_parameters()}
    before = {n: p.numpy().copy() for n, p in model.named_parameters()}
    opt.step()
    health.after_step(0)
    w = "transformer.h.1.attn.c_attn.weight"
    assert health.per_param["grad_norm"][w][0] == pytest.approx(np.sqrt((grads[w] ** 2).sum()), rel=1e-6)
    dw = model.state_dict()[w] - before[w]
    assert health.per_param["update_ratio"][w][0] == pytest.approx(
        np.log10(np.sqrt((dw ** 2).sum() / (before[w] ** 2).sum())), rel=1e-6)
    h1 = [n for n in grads if n.startswith("transformer.h.1.")]
    assert health.per_layer["grad_norm"]["h.1"][0] == pytest.approx(np.sqrt(sum((grads[n] ** 2).sum() for n in h1)))
    model.load_state_dict(before)  # the forward pass the monitor saw
    seen = {}
    _, cache = model.run_with_cache(x, hooks={"transformer.h.0.mlp.c_fc": lambda a: seen.update(pre=a)})
    assert health.per_layer["act_std"]["h.1"][0] == pytest.approx(cache["transformer.h.1.resid_post"].std(), rel=1e-5)
    assert health.per_layer["act_mean"]["h.0"][0] == pytest.approx(cache["transformer.h.0.resid_post"].mean(),
                                                                   rel=1e-4, abs=1e-6)
    fraction = (seen["pre"] < -3).mean()
    assert 0.001 < fraction and health.per_layer["saturated"]["h.0"][0] == pytest.approx(fraction)


def test_saturation_definitions():
    x = np.array([[-6.0, -4.0, -2.0, 0.0, 3.0]])
    np.testing.assert_array_equal(SATURATED["gelu"](x), [[True, True, False, False, False]])
    np.testing.assert_array_equal(SATURATED["swiglu"](x), [[True, False, False, False, False]])
    np.testing.assert_array_equal(SATURATED["tanh"](x), [[True, True, False, False, True]])
    dead = SATURATED["relu"](np.array([[-1.0, 2.0], [-3.0, -1.0]]))  # unit 0 never fires: dead; unit 1 fires once
    np.testing.assert_array_equal(dead, [[True, False], [True, False]])


def test_grad_growth_rule():
    Tensor.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=V, block_size=T, n_layer=1, n_head=2, n_embd=16))
    health = HealthMonitor(model, every=1, log=lambda line: None)
    for step, scale in enumerate([1.0, 10.0, 1000.0]):
        for p in model.parameters():
            p.grad = Tensor(np.full(p.shape, 1e-3 * scale, dtype=p.dtype))
        health.before_forward(step)
        health.after_backward(step, 1.0)
        health.after_step(step)
    assert health.fired == ["grad growth"] and "step 2 is 1000x" in health.alerts[0]
    assert health.verdict() == "health: 1 rule fired over 3 checks (every 1 steps, 0 to 2): grad growth (see above)"


def test_summary_is_json_and_plot_writes_a_png(healthy, tmp_path):
    health, _ = healthy
    text = json.dumps(health.summary())
    back = json.loads(text)
    assert back["steps"] == [0, 5, 10] and set(back["per_layer"]) == {
        "act_mean", "act_std", "saturated", "grad_norm", "update_ratio"}
    path = health.plot(tmp_path / "health.png")
    assert path.stat().st_size > 10_000


def test_the_figure_names_every_threshold_and_no_legend_covers_a_panel(healthy):
    """Each rule's line or band is in its panel's legend; legends sit outside the panels (the gradient
    legend used to cover the head's curve); a layer has one colour in every panel."""
    import matplotlib.pyplot as plt
    health, _ = healthy
    fig = health.figure()
    try:
        fig.canvas.draw()
        panels = {ax.get_title(): ax for ax in fig.axes}
        labels = {title: [t.get_text() for t in ax.get_legend().get_texts()] if ax.get_legend() else []
                  for title, ax in panels.items()}
        assert "rule: more than 20% saturated" in labels["saturated MLP units (fraction)"]
        assert "rule: all layers above 100x their first norm" in labels["gradient norm"]
        assert {"rule: median over matrices above -0.5", "rule: median over matrices below -5.0",
                "-3: the usual for SGD (Adam starts higher)"} <= set(labels["update / data: log10(|lr*update| / |w|)"])
        assert "rule: first loss above ln 64 + 0.5" in labels["loss (recorded steps)"]
        boxes = [ax.get_window_extent() for ax in fig.axes]
        legends = [ax.get_legend() for ax in fig.axes if ax.get_legend()] + fig.legends
        for legend in legends:
            box = legend.get_window_extent()
            assert not any(box.overlaps(b) for b in boxes), [t.get_text() for t in legend.get_texts()]
        assert [t.get_text() for t in fig.legends[0].get_texts()] == health.layers
        colours = {}
        for ax in fig.axes:
            for line, layer in zip(ax.get_lines(), [lyr for lyr in health.layers
                                                    if not all(math.isnan(v) for v in
                                                               health.per_layer[KEY[ax.get_title()]][lyr])]
                                   if ax.get_title() in KEY else []):
                colours.setdefault(layer, set()).add(line.get_color())
        assert colours and all(len(c) == 1 for c in colours.values()), colours
    finally:
        plt.close(fig)


KEY = {"activation mean (layer output)": "act_mean", "activation std (layer output)": "act_std",
       "saturated MLP units (fraction)": "saturated", "gradient norm": "grad_norm",
       "update / data: log10(|lr*update| / |w|)": "update_ratio"}


def test_train_gpt_health_flag_writes_png_and_summary(tmp_path, capsys):
    import pathlib
    import sys
    demos = pathlib.Path(__file__).resolve().parents[1] / "demos"
    if str(demos) not in sys.path:
        sys.path.append(str(demos))
    import train_gpt
    flags = ["--preset", "tiny", "--tokenizer", "char", "--n-layer", "1", "--n-head", "2", "--n-embd", "16",
             "--block-size", "16", "--batch-size", "4", "--eval-iters", "2", "--sample-tokens", "4", "--steps", "6",
             "--eval-interval", "3", "--out", str(tmp_path)]
    summary = train_gpt.main([*flags, "--health", "2"])
    assert summary["health"]["steps"] == [0, 2, 4] and (tmp_path / "health.png").stat().st_size > 10_000
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last == summary["health"]["verdict"] and last.startswith("health: ") and " over 3 checks " in last
    saved = json.loads((tmp_path / "summary.json").read_text())
    assert saved["health"]["layers"] == ["embed", "h.0", "head"] and saved["files"]["health"].endswith("health.png")
    plain = train_gpt.main([*flags, "--out", str(tmp_path / "plain")])
    assert "health" not in plain and plain["val_loss"] == summary["val_loss"]  # watching changes nothing


def test_train_gpt_health_is_a_short_run_into_its_own_folder():
    """--health alone must not replace the main run's outputs (out/train_gpt) nor last as long as it."""
    import pathlib
    import sys
    demos = pathlib.Path(__file__).resolve().parents[1] / "demos"
    if str(demos) not in sys.path:
        sys.path.append(str(demos))
    import training_run
    resolve = lambda *flags: training_run.resolve_settings(training_run.build_parser().parse_args(list(flags)))
    main_run, main_out, _ = resolve()
    health_run, health_out, _ = resolve("--health", "10")
    assert main_out == pathlib.Path("out/train_gpt") and health_out == pathlib.Path("out/train_gpt_health")
    assert (main_run["steps"], health_run["steps"]) == (800, 200) and health_run["n_embd"] == main_run["n_embd"]
    asked, asked_out, _ = resolve("--health", "--steps", "800", "--out", "out/train_gpt")
    assert asked["steps"] == 800 and asked_out == pathlib.Path("out/train_gpt")  # asked for: allowed
