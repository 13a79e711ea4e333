"""The idioms real PyTorch programs (nanoGPT, minGPT, makemore; benchmarks/real_programs.py) rely on, written
here in our own words so that CI holds what the harness found: the data package and its samplers, the
import-only names (half precision, distributed, mixed precision), TensorBoard, the optimizers' signatures,
the functions and layers the programs call, and attention dropout."""
import inspect
import io
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest

import tinygrad_like.torch as torch
from tinygrad_like import gradcheck

nn, F = torch.nn, torch.nn.functional


# ---------------------------------------------------------------- torch.utils.data

def test_the_data_package_has_its_submodules_as_pytorch_does():
    from tinygrad_like.torch.utils.data.dataloader import DataLoader
    from tinygrad_like.torch.utils.data.dataset import Dataset
    from tinygrad_like.torch.utils.data.sampler import RandomSampler
    assert DataLoader is torch.utils.data.DataLoader and Dataset is torch.utils.data.Dataset
    assert RandomSampler is torch.utils.data.RandomSampler


def test_the_submodules_import_through_the_runner(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("from torch.utils.data.dataloader import DataLoader\nfrom torch.utils.data import Dataset\n"
                      "import torch.utils.data.sampler as s\nprint(DataLoader.__module__, s.BatchSampler.__name__)\n")
    out = subprocess.run([sys.executable, "-m", "tinygrad_like.torch", str(script)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["tinygrad_like.torch.utils.data.dataloader", "BatchSampler"]


class Squares(torch.utils.data.Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        return torch.tensor([i, i * i])


def test_sequential_and_batch_samplers_keep_the_order():
    assert list(torch.utils.data.SequentialSampler(range(4))) == [0, 1, 2, 3]
    batches = torch.utils.data.BatchSampler(range(7), 3, drop_last=False)
    assert list(batches) == [[0, 1, 2], [3, 4, 5], [6]] and len(batches) == 3
    dropped = torch.utils.data.BatchSampler(range(7), 3, drop_last=True)
    assert list(dropped) == [[0, 1, 2], [3, 4, 5]] and len(dropped) == 2
    with pytest.raises(ValueError, match="batch_size"):
        torch.utils.data.BatchSampler(range(7), 0, drop_last=False)


def test_random_sampler_without_replacement_is_a_permutation_per_pass():
    sampler = torch.utils.data.RandomSampler(range(50), generator=torch.Generator().manual_seed(1))
    first, second = list(sampler), list(sampler)
    assert sorted(first) == list(range(50)) and sorted(second) == list(range(50)) and first != second
    longer = list(torch.utils.data.RandomSampler(range(5), num_samples=12))
    assert len(longer) == 12 and sorted(longer[:5]) == list(range(5)) and sorted(longer[5:10]) == list(range(5))


def test_random_sampler_with_replacement_draws_lazily_and_uniformly():
    endless = torch.utils.data.RandomSampler(range(3), replacement=True, num_samples=int(1e10))  # minGPT's stream
    assert len(endless) == 10 ** 10
    it = iter(endless)
    draws = np.array([next(it) for _ in range(3000)])
    assert set(draws.tolist()) == {0, 1, 2}
    counts = np.bincount(draws) / len(draws)
    assert np.all(np.abs(counts - 1 / 3) < 0.05)          # 3000 draws: the standard error is 0.009
    same = [list(torch.utils.data.RandomSampler(range(9), replacement=True, num_samples=40,
                                                generator=torch.Generator().manual_seed(5))) for _ in range(2)]
    assert same[0] == same[1]


def test_random_sampler_follows_manual_seed():
    torch.manual_seed(3)
    a = list(torch.utils.data.RandomSampler(range(20), replacement=True, num_samples=20))
    torch.manual_seed(3)
    b = list(torch.utils.data.RandomSampler(range(20), replacement=True, num_samples=20))
    assert a == b


def test_subset_and_weighted_samplers():
    subset = list(torch.utils.data.SubsetRandomSampler([3, 5, 7]))
    assert sorted(subset) == [3, 5, 7]
    weighted = list(torch.utils.data.WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 400))
    assert set(weighted) <= {1, 3} and 0.65 < weighted.count(3) / 400 < 0.85
    with pytest.raises(ValueError, match="weights"):
        torch.utils.data.WeightedRandomSampler([-1.0, 2.0], 3)


def test_dataloader_with_a_sampler_batches_in_its_order():
    loader = torch.utils.data.DataLoader(Squares(), batch_size=2, sampler=[9, 2, 4], pin_memory=True)
    assert [b.tolist() for b in loader] == [[[9, 81], [2, 4]], [[4, 16]]] and len(loader) == 2
    random_order = torch.utils.data.DataLoader(Squares(), batch_size=2, sampler=torch.utils.data.SubsetRandomSampler(
        [9, 2, 4], generator=torch.Generator().manual_seed(0)))
    assert sorted(int(v) for b in random_order for v in b[:, 0].tolist()) == [2, 4, 9]


def test_dataloader_with_a_batch_sampler_and_a_collate_fn():
    loader = torch.utils.data.DataLoader(Squares(), batch_sampler=[[1, 2], [5]],
                                         collate_fn=lambda examples: [int(e[1]) for e in examples])
    assert list(loader) == [[1, 4], [25]] and len(loader) == 2
    with pytest.raises(ValueError, match="batch_sampler"):
        torch.utils.data.DataLoader(Squares(), batch_size=4, batch_sampler=[[1]])
    with pytest.raises(ValueError, match="sampler and shuffle"):
        torch.utils.data.DataLoader(Squares(), shuffle=True, sampler=range(3))


def test_dataloader_drop_last_shuffle_and_generator():
    loader = torch.utils.data.DataLoader(Squares(), batch_size=4, shuffle=True, drop_last=True,
                                         generator=torch.Generator().manual_seed(7))
    batches = list(loader)
    assert len(batches) == len(loader) == 2 and all(b.shape == (4, 2) for b in batches)
    again = torch.utils.data.DataLoader(Squares(), batch_size=4, shuffle=True, drop_last=True,
                                        generator=torch.Generator().manual_seed(7))
    assert [b.tolist() for b in again] == [b.tolist() for b in batches]


def test_dataloader_of_an_iterable_dataset():
    class Stream(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter([torch.tensor(float(i)) for i in range(5)])
    assert [b.tolist() for b in torch.utils.data.DataLoader(Stream(), batch_size=2)] == [[0, 1], [2, 3], [4]]
    with pytest.raises(ValueError, match="IterableDataset"):
        torch.utils.data.DataLoader(Stream(), shuffle=True)


def test_workers_load_in_the_main_process_and_say_so_once(capsys, monkeypatch):
    from tinygrad_like.torch.utils.data import dataloader
    monkeypatch.setattr(dataloader, "_said_main_process", False)
    for _ in range(2):
        loader = torch.utils.data.DataLoader(Squares(), batch_size=5, num_workers=4)
        assert [b.shape for b in loader] == [(5, 2), (5, 2)]
    assert capsys.readouterr().err.count("loads in the main process") == 1
    assert torch.utils.data.get_worker_info() is None


def test_concat_dataset():
    both = torch.utils.data.ConcatDataset([Squares(), Squares()])
    assert len(both) == 20 and both[13].tolist() == [3, 9] and both[-1].tolist() == [9, 81]
    with pytest.raises(IndexError):
        both[20]


# ---------------------------------------------------------------- TensorBoard

def test_summary_writer_writes_events_tensorboard_reads(tmp_path):
    pytest.importorskip("tensorboard", reason="SummaryWriter needs the tensorboard package (the tensorboard extra)")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from tinygrad_like.torch.utils.tensorboard import SummaryWriter
    with SummaryWriter(log_dir=str(tmp_path)) as writer:
        writer.add_scalar("Loss/train", torch.tensor(2.5), 10)       # makemore's call, with a tensor
        writer.add_scalar("Loss/train", 1.75, 20)
        writer.add_histogram("weights", np.array([0.0, 1.0, 1.0, 2.0]), 0)
        writer.add_text("notes", "hello", 0)
        writer.flush()
    events = EventAccumulator(str(tmp_path))
    events.Reload()
    assert [(e.step, e.value) for e in events.Scalars("Loss/train")] == [(10, 2.5), (20, 1.75)]
    histogram = events.Histograms("weights")[0].histogram_value
    assert (histogram.min, histogram.max, histogram.num, histogram.sum) == (0.0, 2.0, 4, 4.0)
    assert "notes/text_summary" in events.Tags()["tensors"]
    with pytest.raises(NotImplementedError, match="add_image"):
        getattr(SummaryWriter(log_dir=str(tmp_path)), "add_image")  # noqa: B009 (the lookup is what is tested)


def test_without_tensorboard_the_import_says_to_install_it(tmp_path):
    blocker = tmp_path / "tensorboard.py"
    blocker.write_text("raise ModuleNotFoundError(\"No module named 'tensorboard'\", name='tensorboard')\n")
    code = "import tinygrad_like.torch.utils.tensorboard"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"PYTHONPATH": f"{tmp_path}:{pathlib_root()}", "PATH": ""})
    assert "ModuleNotFoundError" in out.stderr and "pip install tensorboard" in out.stderr


def pathlib_root():
    import pathlib
    return str(pathlib.Path(__file__).resolve().parents[1])


# ---------------------------------------------------------------- names imported unconditionally

def test_half_precision_dtypes_exist_and_refuse_on_use():
    table = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}   # nanoGPT's line
    assert table["float16"] is torch.half and repr(torch.bfloat16) == "torch.bfloat16"
    assert torch.zeros(2).dtype != torch.float16
    for make in (lambda: torch.zeros(2, dtype=torch.float16), lambda: torch.ones(3).to(torch.bfloat16),
                 lambda: nn.Linear(2, 2, dtype=torch.half), lambda: torch.HalfTensor(2)):
        with pytest.raises(TypeError, match="float16|bfloat16"):
            make()


def test_distributed_imports_answers_and_refuses_use():
    from tinygrad_like.torch.distributed import destroy_process_group, init_process_group
    from tinygrad_like.torch.nn.parallel import DistributedDataParallel
    assert torch.distributed.is_available() is False and torch.distributed.is_initialized() is False
    with pytest.raises(RuntimeError, match="one process on one CPU"):
        init_process_group(backend="gloo")
    with pytest.raises(RuntimeError, match="one process on one CPU"):
        destroy_process_group()
    with pytest.raises(RuntimeError, match="one process on one CPU"):
        DistributedDataParallel(nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match="one CPU"):
        nn.DataParallel(nn.Linear(2, 2))


def test_grad_scaler_disabled_or_without_cuda_is_the_noop_pytorch_makes_it():
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        enabled_without_cuda = torch.cuda.amp.GradScaler(enabled=True)     # nanoGPT's float16 default on CPU
    assert any("CUDA is not available" in str(w.message) for w in caught)
    for scaler in (torch.cuda.amp.GradScaler(enabled=False), torch.amp.GradScaler("cuda", enabled=False),
                   enabled_without_cuda):
        assert not scaler.is_enabled() and scaler.get_scale() == 1.0
        loss = model(torch.ones(2, 3)).sum()
        assert scaler.scale(loss) is loss
        before = model.weight.numpy().copy()
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
        np.testing.assert_allclose(model.weight.numpy(), before - 0.5 * 2.0, rtol=1e-6)  # d/dw of the sum: 2 per entry
        opt.zero_grad()
    with pytest.raises(NotImplementedError, match="float32 or float64"):
        torch.amp.GradScaler("cpu", enabled=True)


def test_autocast_disabled_is_a_noop_and_enabled_on_cpu_is_refused():
    x = torch.ones(2)
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16, enabled=False):
        assert (x * 2).dtype == torch.float32

    @torch.amp.autocast("cpu", enabled=False)
    def double(v):
        return v * 2
    assert double(x).tolist() == [2.0, 2.0]
    with pytest.raises(NotImplementedError, match="float32 or float64"):
        torch.autocast("cpu", dtype=torch.bfloat16)
    with pytest.warns(UserWarning, match="CUDA is not available"):
        torch.cuda.amp.autocast()
    assert torch.cuda.is_bf16_supported() is False


def test_optimizer_signatures_show_fused_and_foreach():
    for opt in (torch.optim.AdamW, torch.optim.Adam, torch.optim.SGD):
        assert {"fused", "foreach"} <= set(inspect.signature(opt).parameters)
    p = nn.Parameter(torch.zeros(2))
    torch.optim.AdamW([p], lr=1e-3, betas=(0.9, 0.95), fused=False, foreach=None)
    with pytest.raises(NotImplementedError, match="amsgrad"):
        torch.optim.AdamW([p], amsgrad=True)


# ---------------------------------------------------------------- functions and layers

def test_einsum_forms_against_numpy():
    rng = np.random.default_rng(0)
    a, b, c = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 5)), rng.standard_normal(4)
    for equation, arrays in [("bij,bjk->bik", (a, b)), ("bij,j->bi", (a, c)), ("bij->jib", (a,)),
                             ("i,i->", (c, c)), ("bij,bjk", (a, b)), (" b i j , b j k -> b k", (a, b))]:
        ours = torch.einsum(equation, *[torch.tensor(x) for x in arrays])
        np.testing.assert_allclose(ours.numpy(), np.einsum(equation.replace(" ", ""), *arrays), rtol=1e-12)
    assert torch.einsum("ij,jk->ik", [torch.ones(2, 3), torch.ones(3, 1)]).tolist() == [[3.0], [3.0]]


def test_einsum_refuses_what_it_does_not_do():
    with pytest.raises(NotImplementedError, match="diagonal"):
        torch.einsum("ii->i", torch.ones(2, 2))
    with pytest.raises(NotImplementedError, match=r"'\.\.\.'"):
        torch.einsum("...ij->...ji", torch.ones(2, 2))
    with pytest.raises(ValueError, match="letter 'j' has sizes 3 and 4"):
        torch.einsum("ij,jk->ik", torch.ones(2, 3), torch.ones(4, 2))
    with pytest.raises(ValueError, match="2 operands"):
        torch.einsum("ij,jk->ik", torch.ones(2, 3))


def test_bmm_and_outer_check_their_shapes():
    assert torch.bmm(torch.ones(2, 3, 4), torch.ones(2, 4, 5)).shape == (2, 3, 5)
    with pytest.raises(ValueError, match="bmm"):
        torch.bmm(torch.ones(3, 4), torch.ones(4, 5))
    assert torch.outer(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0, 5.0])).tolist() == [[3, 4, 5], [6, 8, 10]]


def test_legacy_tensor_types():
    assert torch.LongTensor([1, 2]).dtype == torch.int64 and torch.FloatTensor(2, 3).shape == (2, 3)
    assert torch.FloatTensor(2, 3).dtype == torch.float32 and torch.FloatTensor([1, 2]).tolist() == [1.0, 2.0]
    assert isinstance(torch.zeros(2), torch.FloatTensor) and not isinstance(torch.zeros(2), torch.LongTensor)
    assert isinstance(torch.arange(3), torch.LongTensor) and torch.BoolTensor([1, 0]).tolist() == [True, False]


def test_threads_and_print_options(monkeypatch):
    from tinygrad_like.fast import pool
    before = pool.get_num_threads()
    try:
        torch.set_num_threads(1)
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
    monkeypatch.setattr(torch._functions, "PRINT_OPTIONS", dict(torch._functions.PRINT_OPTIONS))
    torch.set_printoptions(precision=2, sci_mode=False)
    assert torch._functions.PRINT_OPTIONS["precision"] == 2 and torch._functions.PRINT_OPTIONS["sci_mode"] is False
    torch.set_printoptions(profile="full")
    assert torch._functions.PRINT_OPTIONS["threshold"] == math.inf
    with pytest.raises(ValueError, match="profile"):
        torch.set_printoptions(profile="long")



@pytest.mark.parametrize("setting, tuned", [(None, 1), ("0", 0)])
def test_set_num_threads_takes_the_engines_allocator_setting(monkeypatch, setting, tuned):
    # the engine tunes glibc's allocator with the thread count it picks at the first product; a count set
    # beforehand skips that, so torch.set_num_threads (a PyTorch program knows nothing of the engine's
    # allocator) takes it itself, unless TINYGRAD_LIKE_TUNE_MALLOC=0 turns it off
    from tinygrad_like.fast import memory, pool
    calls = []
    monkeypatch.setattr(memory, "tune_malloc", lambda *args: calls.append(args) or True)
    if setting is None:
        monkeypatch.delenv("TINYGRAD_LIKE_TUNE_MALLOC", raising=False)
    else:
        monkeypatch.setenv("TINYGRAD_LIKE_TUNE_MALLOC", setting)
    before = pool.get_num_threads()
    try:
        torch.set_num_threads(before)
        assert torch.get_num_threads() == before
    finally:
        torch.set_num_threads(before)
    assert len(calls) == 2 * tuned

def test_leaky_relu_and_normalize_by_hand():
    x = torch.tensor([[-2.0, 0.0, 3.0]], dtype=torch.float64, requires_grad=True)
    assert F.leaky_relu(x, 0.1).tolist() == [[-0.2, 0.0, 3.0]] and nn.LeakyReLU(0.1)(x).tolist() == [[-0.2, 0.0, 3.0]]
    F.leaky_relu(x, 0.1).sum().backward()
    assert x.grad.tolist() == [[0.1, 0.1, 1.0]]                      # PyTorch's slope at 0 is negative_slope's
    v = torch.tensor([[3.0, 4.0], [0.0, 0.0]], dtype=torch.float64)
    assert F.normalize(v, dim=1).tolist() == [[0.6, 0.8], [0.0, 0.0]]  # a zero row stays zero
    assert F.normalize(v, p=1, dim=1).tolist()[0] == pytest.approx([3 / 7, 4 / 7])


def test_inplace_flags_are_accepted_and_give_pytorchs_values():
    x = torch.tensor([-1.0, 2.0])
    assert nn.ReLU(inplace=True)(x).tolist() == [0.0, 2.0] and F.relu(x, inplace=True).tolist() == [0.0, 2.0]
    assert nn.SiLU(inplace=True)(x).shape == (2,) and nn.Dropout(0.5, inplace=True).eval()(x).tolist() == [-1, 2]
    assert F.leaky_relu(x, inplace=True).tolist() == pytest.approx([-0.01, 2.0])
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(inplace=True), nn.Linear(3, 1))
    assert model(torch.ones(4, 2)).shape == (4, 1)


def test_clip_grad_value():
    p = nn.Parameter(torch.zeros(3))
    p.grad = torch.tensor([-5.0, 0.5, 2.0])
    q = nn.Parameter(torch.zeros(1))                                  # no gradient: skipped
    torch.nn.utils.clip_grad_value_([p, q], 1.0)
    assert p.grad.tolist() == [-1.0, 0.5, 1.0] and q.grad is None


def test_one_cycle_lr_by_hand():
    p = nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=1.0, momentum=0.9)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=11, pct_start=0.5,
                                                anneal_strategy="linear", div_factor=10, final_div_factor=100)
    lrs, momenta = [], []
    for _ in range(11):
        lrs.append(opt.param_groups[0]["lr"])
        momenta.append(opt.param_groups[0]["momentum"])
        opt.step()
        sched.step() if len(lrs) < 11 else None
    # up from 1/10 to 1 over steps 0..4.5 (the first phase ends at 0.5·11 − 1 = 4.5), then down to 1/1000 at 10
    assert lrs[0] == pytest.approx(0.1) and lrs[10] == pytest.approx(0.001)
    assert lrs[4] == pytest.approx(0.1 + 0.9 * 4 / 4.5) and lrs[5] == pytest.approx(1 - (1 - 0.001) * 0.5 / 5.5)
    assert momenta[0] == pytest.approx(0.95) and momenta[10] == pytest.approx(0.95)
    with pytest.raises(ValueError, match="past total_steps"):
        sched.step()
        sched.step()


# ---------------------------------------------------------------- attention dropout

def attention_inputs(dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return [torch.tensor(rng.standard_normal((2, 2, 5, 4)).astype(dtype), requires_grad=True) for _ in range(3)]


def test_attention_without_dropout_is_unchanged_by_the_option():
    q, k, v = attention_inputs()
    plain = q.scaled_dot_product_attention(k, v, is_causal=True)
    np.testing.assert_array_equal(F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=0.0).numpy(),
                                  plain.numpy())


def test_attention_dropout_drops_weights_and_keeps_the_mean():
    q, k, v = attention_inputs()
    weights = np.asarray(q.scaled_dot_product_attention(k, v, is_causal=True, return_weights=True)[1].numpy())
    expected = weights @ v.numpy()
    torch.manual_seed(0)
    outs = [F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=0.4).numpy() for _ in range(2000)]
    assert not np.allclose(outs[0], expected)                        # dropped
    # unbiased, E[mask / (1 - p)] = 1: the mean of 2000 draws within 5 standard errors, each draw's variance
    # being Σ_j w_j² v_j² · p/(1 − p) (independent keep-or-drop per weight)
    standard_error = np.sqrt(np.einsum("...ij,...jd->...id", weights ** 2, v.numpy() ** 2) * 0.4 / 0.6 / 2000)
    assert (np.abs(np.mean(outs, axis=0) - expected) <= 5 * standard_error).all()
    # one draw by hand: some weights zeroed, the rest scaled by 1/(1 - p); the output is those weights times v
    torch.manual_seed(1)
    one = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=0.4).numpy()
    torch.manual_seed(1)                                             # the same draw, on the weights by hand
    dropped = torch.tensor(weights).dropout(0.4).numpy()
    kept_scaled = dropped[dropped != 0] / weights[dropped != 0]
    np.testing.assert_allclose(kept_scaled, 1 / 0.6, rtol=1e-12)
    np.testing.assert_allclose(one, dropped @ v.numpy(), rtol=1e-12)


def test_attention_dropout_gradcheck_with_a_fixed_mask():
    q, k, v = attention_inputs()

    def attend(q, k, v):
        torch.manual_seed(3)                                         # the same mask at every evaluation
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=0.3)
    assert gradcheck(attend, q, k, v)


def test_nanogpt_attention_line_trains_and_evaluates():
    """nanoGPT's call: dropout only while training, none in eval (the same input gives the same output)."""
    q, k, v = attention_inputs(np.float32)
    for training, same in ((True, False), (False, True)):
        p = 0.2 if training else 0
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=p, is_causal=True)
        b = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=p, is_causal=True)
        assert np.array_equal(a.numpy(), b.numpy()) == same
    with pytest.raises(ValueError, match="dropout_p"):
        F.scaled_dot_product_attention(q, k, v, dropout_p=1.0)


# ---------------------------------------------------------------- Tensor conversions the programs call

def test_contiguous_nelement_and_integer_conversions():
    x = torch.arange(6.0).reshape(2, 3)
    y = x.transpose(0, 1).contiguous().view(6)                       # nanoGPT's head merge
    assert y.tolist() == [0, 3, 1, 4, 2, 5] and x.contiguous() is x
    assert x.nelement() == 6 and x.long().dtype == torch.int64 and x.int().dtype == torch.int32
    assert x.bool().tolist() == [[False, True, True], [True, True, True]]


def test_checkpoint_round_trip_of_a_module_state_dict():
    buffer = io.BytesIO()
    torch.save(nn.Linear(2, 2).state_dict(), buffer)
    assert set(torch.load(io.BytesIO(buffer.getvalue()))) == {"weight", "bias"}
