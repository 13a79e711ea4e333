"""tinygrad_like.torch without PyTorch: the namespace, refusals, creation and random draws, grad mode,
save/load, the data loader, the runner and install(), the drawing of a PyTorch-style model, and the
names table in docs/pytorch.md (generated from the facade, so it cannot go stale)."""
import io
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import tinygrad_like.torch as torch
from tinygrad_like import Tensor, backprop_steps, draw_graph, gradcheck
from tinygrad_like.torch import _names

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import torch_parity  # noqa: E402

nn, F = torch.nn, torch.nn.functional


# ---------------------------------------------------------------- names and refusals

@pytest.mark.parametrize("where, name", [(torch, "fft"), (torch, "compile"), (nn, "Conv2d"), (F, "conv2d"),
                                         (torch.optim, "RMSprop"), (torch.utils.data, "IterDataPipe")])
def test_missing_names_are_refused_by_name(where, name):
    qualified = f"{where.__name__.replace('tinygrad_like.', '')}.{name}"
    with pytest.raises(NotImplementedError, match=f"tinygrad_like.torch has no {qualified}"):
        getattr(where, name)
    assert not hasattr(where, name)          # a NotInEngine is an AttributeError too, so probing works


def test_cuda_and_mps_say_the_engine_runs_on_the_cpu():
    assert not torch.cuda.is_available() and not torch.backends.mps.is_available() and torch.cuda.device_count() == 0
    torch.cuda.manual_seed_all(0)            # a no-op, as in PyTorch without CUDA
    torch.backends.cudnn.deterministic = True
    for make in (lambda: torch.zeros(2, device="cuda"), lambda: torch.randn(2, device="mps"),
                 lambda: nn.Linear(2, 2, device="cuda"), lambda: nn.Linear(2, 2).to("cuda:0")):
        with pytest.raises(RuntimeError, match="CPU"):
            make()
    with pytest.raises(NotImplementedError, match="torch.cuda.Event: the engine runs on the CPU"):
        getattr(torch.cuda, "Event")  # noqa: B009 (the attribute access is what is tested)
    assert str(torch.device("cpu")) == "cpu" and torch.device("cpu") == "cpu"
    with pytest.raises(RuntimeError, match="CPU"):
        torch.device("cuda:1")


def test_the_names_table_in_the_docs_is_generated_from_the_facade():
    page = (ROOT / "docs" / "pytorch.md").read_text()
    assert _names.names_table() in page, "docs/pytorch.md's names table is stale: paste _names.names_table()"


def test_every_listed_name_exists_and_every_refused_name_is_refused():
    for module, names in _names.supported_names().items():
        facade_module = _names._module(module)
        for name in names:
            assert hasattr(facade_module, name), f"{module}.{name}"          # torch.newaxis is None, as PyTorch's
    for qualified in torch._refuse.REFUSED:
        module, _, name = qualified.rpartition(".")
        with pytest.raises(NotImplementedError, match=qualified):
            getattr(_names._module(module), name)


# ---------------------------------------------------------------- creation and random draws

def test_tensor_dtypes_and_copies_follow_pytorch():
    assert torch.tensor([1, 2]).dtype == torch.long and torch.tensor([1.0]).dtype == torch.float32
    assert torch.tensor([True]).dtype == torch.bool and torch.tensor(np.zeros(2)).dtype == torch.float64
    a = np.zeros(3)
    copied, shared = torch.tensor(a), torch.from_numpy(a)
    a[0] = 5
    assert copied.numpy()[0] == 0 and shared.numpy()[0] == 5
    assert torch.full((2,), 3).dtype == torch.int64 and torch.full((2,), 0.5).dtype == torch.float32
    assert torch.arange(5).dtype == torch.int64 and torch.zeros(2, 3, dtype=torch.double).dtype == np.float64
    assert torch.tensor([torch.tensor(1.5), 2.0]).tolist() == [1.5, 2.0]
    assert torch.Size([2, 3]).numel() == 6 and torch.numel(torch.ones(2, 3)) == 6
    np.testing.assert_array_equal(torch.tril(torch.ones(3, 3)).numpy(), np.tril(np.ones((3, 3))))


def test_generator_draws_are_reproducible_and_independent_of_the_global_stream():
    g = torch.Generator().manual_seed(42)
    a = torch.randn(3, generator=g)
    torch.manual_seed(0)
    b = torch.randn(3, generator=torch.Generator().manual_seed(42))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    torch.manual_seed(1)
    x = torch.rand(4)
    torch.randn(3, generator=g)              # does not advance the global stream
    torch.manual_seed(1)
    np.testing.assert_array_equal(x.numpy(), torch.rand(4).numpy())
    g1, g2 = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    p = torch.tensor([0.1, 0.2, 0.7])
    assert torch.multinomial(p, 5, replacement=True, generator=g1).tolist() == \
        torch.multinomial(p, 5, replacement=True, generator=g2).tolist()
    assert sorted(torch.randperm(6, generator=g1).tolist()) == list(range(6))
    r = torch.randint(3, 7, (100,), generator=g1)
    assert r.dtype == torch.int64 and 3 <= r.numpy().min() and r.numpy().max() < 7
    w = nn.init.normal_(torch.empty(1000), mean=2.0, std=0.5, generator=g2)
    assert abs(w.numpy().mean() - 2.0) < 0.1 and abs(w.numpy().std() - 0.5) < 0.05


def test_grad_mode_context_managers_and_decorators():
    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        assert not (x * 2).requires_grad
        with torch.enable_grad():
            assert (x * 2).requires_grad

    @torch.no_grad()
    def f():
        return x * 2

    @torch.no_grad
    def g():
        return x * 2

    @torch.inference_mode()
    def h():
        return x * 2
    assert not f().requires_grad and not g().requires_grad and not h().requires_grad and torch.is_grad_enabled()
    with torch.set_grad_enabled(False):
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()


# ---------------------------------------------------------------- save and load

def test_save_load_round_trips_tensors_state_dicts_and_nested_structures(tmp_path):
    model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    opt = torch.optim.AdamW(model.parameters())
    model(torch.randn(4, 2)).sum().backward()
    opt.step()
    checkpoint = {"model": model.state_dict(), "optim": opt.state_dict(), "step": 7, "note": None}
    torch.save(checkpoint, tmp_path / "ck.pt")
    back = torch.load(tmp_path / "ck.pt")
    assert back["step"] == 7 and back["note"] is None
    assert list(back["model"]) == list(model.state_dict())
    twin = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    twin.load_state_dict(back["model"])
    for key, value in model.state_dict().items():
        np.testing.assert_array_equal(twin.state_dict()[key], value)
    assert set(back["optim"]["state"]) == {0, 1, 2, 3}
    opt2 = torch.optim.AdamW(twin.parameters())
    opt2.load_state_dict({"state": {k: {n: (v.numpy() if isinstance(v, Tensor) else v) for n, v in s.items()}
                                    for k, s in back["optim"]["state"].items()},
                          "param_groups": back["optim"]["param_groups"]})
    buffer = io.BytesIO()
    torch.save(torch.arange(4), buffer)
    buffer.seek(0)
    assert torch.load(buffer).tolist() == [0, 1, 2, 3]


def test_load_says_what_it_cannot_read(tmp_path):
    (tmp_path / "junk.pt").write_bytes(b"hello")
    with pytest.raises(ValueError, match="neither a PyTorch checkpoint nor a safetensors file"):
        torch.load(tmp_path / "junk.pt")
    with pytest.raises(TypeError, match="cannot save a object"):
        torch.save({"x": object()}, tmp_path / "bad.pt")    # (more in tests/test_torch_checkpoints.py)


# ---------------------------------------------------------------- data

def test_dataloader_batches_shuffles_with_the_generator_and_drops_last():
    ds = torch.utils.data.TensorDataset(torch.arange(10), torch.arange(10) * 2)
    batches = list(torch.utils.data.DataLoader(ds, batch_size=4))
    assert [b[0].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batches[0][1].tolist() == [0, 2, 4, 6]
    loader = torch.utils.data.DataLoader(ds, batch_size=4, shuffle=True, drop_last=True,
                                         generator=torch.Generator().manual_seed(0))
    again = torch.utils.data.DataLoader(ds, batch_size=4, shuffle=True, drop_last=True,
                                        generator=torch.Generator().manual_seed(0))
    first = [b[0].tolist() for b in loader]
    assert len(loader) == 2 and len(first) == 2 and first == [b[0].tolist() for b in again]
    assert first != [b[0].tolist() for b in loader]          # a new order each pass
    parts = torch.utils.data.random_split(ds, [0.7, 0.3], generator=torch.Generator().manual_seed(1))
    assert sorted(i for p in parts for i in p.indices) == list(range(10)) and len(parts[0]) == 7
    assert torch.utils.data.default_collate([1.5, 2.5]).dtype == torch.float64


# ---------------------------------------------------------------- the runner and install()

def test_runner_runs_the_unmodified_gpt_script(tmp_path):
    log = tmp_path / "log.json"
    result = subprocess.run([sys.executable, "-m", "tinygrad_like.torch", str(torch_parity.GPT_SCRIPT),
                             "--max_iters", "3", "--eval_interval", "2", "--eval_iters", "1", "--chars", "3000",
                             "--sample", "10", "--n_layer", "1", "--log", str(log)],
                            capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[0].startswith("tinygrad_like.torch: running") and "on tinygrad_like" in \
        result.stderr.splitlines()[0]
    assert "step 0: train loss" in result.stdout and log.exists()


def test_runner_refuses_a_missing_module_by_name(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("import torch\nimport torch.nn as nn\nfrom torch.nn import functional as F\n"
                      "import torch.optim, torch.utils.data\nprint(torch.__name__, nn.__name__, F.__name__)\n"
                      "import torch.fft\n")
    result = subprocess.run([sys.executable, "-m", "tinygrad_like.torch", str(script)], capture_output=True,
                            text=True, timeout=300)
    assert "tinygrad_like.torch tinygrad_like.torch.nn tinygrad_like.torch.nn.functional" in result.stdout
    assert result.returncode == 1 and "NotInEngine: tinygrad_like.torch has no torch.fft" in result.stderr


def test_install_makes_later_imports_resolve_to_the_facade():
    real = sys.modules.get("torch")
    torch.install()
    try:
        import torch as imported
        import torch.nn.functional as imported_F
        assert imported is torch and imported_F is F
    finally:
        torch.uninstall()
    assert sys.modules.get("torch") is real


# ---------------------------------------------------------------- seeing inside a PyTorch-style model

def test_a_pytorch_style_gpt_draws_with_its_state_dict_names_and_steps_and_gradchecks(tmp_path):
    script = torch_parity.load_script(torch_parity.GPT_SCRIPT, on_facade=True)
    torch.manual_seed(0)
    model = script.GPT(20, n_embd=8, n_head=2, n_layer=1, block_size=4).double()
    X = torch.randint(0, 20, (2, 4))
    _, loss = model(X, X)
    source = draw_graph(loss, direction="backward").source
    for box in ("blocks.0.sa.heads.1.key", "blocks.0.ffwd.net.0", "blocks.0.ln1", "lm_head"):
        assert f'label="{box}"' in source or f"label={box} " in source, box
    opened = draw_graph(loss, direction="backward", expand=True).source
    assert "(fused)" in opened and opened.count(" [label=") > source.count(" [label=")   # fused ops opened
    head = model.blocks[0].sa.heads[0]
    x = torch.randn(1, 3, 8, dtype=torch.float64, requires_grad=True)
    page = backprop_steps((head(x) ** 2).sum(), tmp_path / "head.html")
    assert "heads.0" in page.read_text()
    assert gradcheck(lambda x, *ps: head(x), x, *head.parameters())


def test_bring_your_torch_demo_trains_draws_and_writes_the_head_page(tmp_path):
    sys.path.insert(0, str(ROOT / "demos"))
    import bring_your_torch
    logs = bring_your_torch.main(["--steps", "3", "--no-torch", "--out", str(tmp_path)])
    assert len(logs["engine"]["losses"]) == 3
    for name in ("losses.png", "block_backward.svg", "head_backprop.html"):
        assert (tmp_path / name).stat().st_size > 1000, name
    assert "blocks.0.sa.heads.1.key" in (tmp_path / "block_backward.svg").read_text()
    # the loss picture's title says what ran: one engine here, two when PyTorch ran too
    one, two = bring_your_torch.loss_figure(logs), bring_your_torch.loss_figure({**logs, "PyTorch": logs["engine"]})
    try:
        assert one.axes[0].get_title() == ("A PyTorch script on the engine, through tinygrad_like.torch "
                                           "(PyTorch not run)")
        assert [t.get_text() for t in one.axes[0].get_legend().get_texts()] == [
            "the engine, through tinygrad_like.torch"]
        assert two.axes[0].get_title() == "The same PyTorch script on two engines"
        assert len(two.axes[0].get_legend().get_texts()) == 2
    finally:
        bring_your_torch._common.plt.close("all")


def test_the_readme_table_of_bench_facade_shows_the_stored_figures():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import report
    run = dict(steps=40, rounds=3, threads=0, torch_ms=[10.0, 12.0, 11.0], engine_ms=[15.0, 14.0, 16.0],
               median_torch_ms=11.0, median_engine_ms=15.0, ratio=15 / 11, fastest_torch_ms=10.0,
               fastest_engine_ms=14.0)
    text = report.bench_facade(dict(benchmark="bench_facade", command="python benchmarks/bench_facade.py",
                                    date="2026-01-02T03:04:05+00:00", machine="machine: X | load 0.10", load=0.1,
                                    cores=2, runs={"": run}))
    assert "| median of the rounds | 11.00 | 15.00 | 1.36 |" in text
    assert "| fastest round | 10.00 | 14.00 | 1.40 |" in text
    assert "3 rounds of 40 steps, each framework's default threads" in text
