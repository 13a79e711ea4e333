"""Checkpoints: exact round trips (incl. non-contiguous arrays and the RNG), atomic saves, clear errors that
leave everything unchanged, and an exact resume in a fresh process."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import safetensors.numpy

from nn import Linear, Module
from nn.optim import SGD, Adam
from nn.state import CheckpointError, load, save
from tinygrad_like import Tensor, atomic_file
from tinygrad_like import random as tl_random

REPO = Path(__file__).resolve().parents[1]


class Tiny(Module):
    """x (B, 4) -> (B, 2) through Linear, relu, dropout, Linear: only nn.Linear and Tensor ops."""

    def __init__(self, hidden=8, p=0.2):
        self.fc1, self.fc2, self.p = Linear(4, hidden), Linear(hidden, 2), p

    def forward(self, x):
        return self.fc2(self.fc1(x).relu().dropout(self.p, self.training))


def train(model, opt, n):
    for _ in range(n):
        x, y = Tensor.randn(5, 4), Tensor.rand(5, 2)   # random batches from the library RNG
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()


def trained(seed=0, n=3, make_opt=lambda m: Adam(m.parameters(), lr=0.01)):
    Tensor.manual_seed(seed)
    model = Tiny()
    opt = make_opt(model)
    train(model, opt, n)
    return model, opt


def snapshot(model, opt):
    return ({k: v.copy() for k, v in model.state_dict().items()}, opt.state_dict(), tl_random.get_state())


def assert_same(snap, model, opt):
    weights, opt_sd, rng = snap
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(v, weights[k])
    now = opt.state_dict()
    assert now["param_groups"] == opt_sd["param_groups"] and now["state"].keys() == opt_sd["state"].keys()
    for i, s in opt_sd["state"].items():
        assert now["state"][i].keys() == s.keys()
        for k, v in s.items():
            np.testing.assert_array_equal(now["state"][i][k], v)
    assert tl_random.get_state() == rng


# ---------------------------------------------------------------- round trips

def test_round_trip_model_optimizer_step_extra_rng(tmp_path):
    model, opt = trained()
    path = tmp_path / "ckpt.safetensors"
    save(path, model, opt, step=3, extra={"loss": 0.25, "config": {"hidden": 8}})
    draws = Tensor.rand(4).numpy().copy()          # what the RNG gives right after the save
    Tensor.manual_seed(123)
    fresh = Tiny()
    fresh_opt = Adam(fresh.parameters(), lr=0.5)    # other lr: loading restores the saved settings too
    info = load(path, fresh, fresh_opt)
    assert info == {"step": 3, "extra": {"loss": 0.25, "config": {"hidden": 8}}}
    np.testing.assert_array_equal(Tensor.rand(4).numpy(), draws)
    assert_same(snapshot(model, opt)[:2] + (tl_random.get_state(),), fresh, fresh_opt)
    assert fresh_opt.param_groups[0]["lr"] == 0.01 and fresh_opt.param_groups[0]["betas"] == (0.9, 0.999)


def test_file_is_plain_safetensors_with_state_dict_names(tmp_path):
    model, opt = trained(make_opt=lambda m: SGD(m.parameters(), lr=0.1, momentum=0.9))
    path = tmp_path / "ckpt.safetensors"
    save(path, model, opt, step=7)
    tensors = safetensors.numpy.load_file(str(path))
    for name, value in model.state_dict().items():
        np.testing.assert_array_equal(tensors[name], value)
    assert "optim.0.fc1.weight.momentum_buffer" in tensors
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        meta = json.loads(f.read(n))["__metadata__"]
    assert meta["format"] == "pt" and json.loads(meta["step"]) == 7
    assert json.loads(meta["optimizer"])["state"]["fc2.bias"]["step"] == 3


def test_non_contiguous_arrays_are_saved_correctly(tmp_path):
    """safetensors 0.8 writes a transposed view's memory in storage order; save must make arrays contiguous."""
    lin = Linear(3, 3)
    arr = np.arange(9, dtype=np.float32).reshape(3, 3) / 10
    lin.weight.data = arr.T                          # a non-contiguous view
    assert not lin.weight.numpy().flags.c_contiguous
    opt = Adam(lin.parameters(), lr=0.1)
    lin.weight.grad = Tensor(arr.T.copy() + 1.0)
    opt.step()
    state = opt.state[id(lin.weight)]                # a moment stored in Fortran order, as zeros_like of a
    state["exp_avg"] = np.asfortranarray(state["exp_avg"])  # transposed weight gives in the per-parameter path
    assert not state["exp_avg"].flags.c_contiguous
    expected_w, expected_m = lin.weight.numpy().copy(), opt.state[id(lin.weight)]["exp_avg"].copy()
    path = tmp_path / "t.safetensors"
    save(path, lin, opt)
    fresh = Linear(3, 3)
    fresh_opt = Adam(fresh.parameters(), lr=0.1)
    load(path, fresh, fresh_opt)
    np.testing.assert_array_equal(fresh.weight.numpy(), expected_w)
    np.testing.assert_array_equal(fresh_opt.state[id(fresh.weight)]["exp_avg"], expected_m)
    # and the simplest case from the brief: the weight is arr.T, nothing else
    lin2, lin3 = Linear(3, 3), Linear(3, 3)
    lin2.weight.data = arr.T
    save(path, lin2)
    load(path, lin3)
    np.testing.assert_array_equal(lin3.weight.numpy(), arr.T)


def test_plain_weights_file_loads_into_model(tmp_path):
    model = Tiny()
    path = tmp_path / "w.safetensors"
    safetensors.numpy.save_file({k: np.ascontiguousarray(v) + 1 for k, v in model.state_dict().items()}, str(path))
    expected = {k: v + 1 for k, v in model.state_dict().items()}
    assert load(path, model) == {"step": None, "extra": None}
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(v, expected[k])


# ---------------------------------------------------------------- atomic writes

def test_crash_mid_save_keeps_previous_checkpoint(tmp_path, monkeypatch):
    model, opt = trained()
    path = tmp_path / "ckpt.safetensors"
    save(path, model, opt, step=3)
    good = path.read_bytes()
    train(model, opt, 1)

    def crash_halfway(f, data):
        f.write(data[: len(data) // 2])
        raise OSError("disk full (simulated)")
    monkeypatch.setattr(atomic_file, "_write", crash_halfway)
    with pytest.raises(OSError, match="simulated"):
        save(path, model, opt, step=4)
    assert path.read_bytes() == good
    assert os.listdir(tmp_path) == ["ckpt.safetensors"]   # no temp file left behind
    monkeypatch.undo()
    fresh = Tiny()
    fresh_opt = Adam(fresh.parameters(), lr=0.01)
    assert load(path, fresh, fresh_opt)["step"] == 3


def test_save_overwrites_and_leaves_only_the_file(tmp_path):
    model, opt = trained()
    path = tmp_path / "ckpt.safetensors"
    save(path, model, opt, step=1)
    save(path, model, opt, step=2)
    assert os.listdir(tmp_path) == ["ckpt.safetensors"]
    assert load(path, Tiny())["step"] == 2


# ---------------------------------------------------------------- bad files: clear errors, nothing changed

def damage_truncate(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * 2 // 3])


def damage_flip_data_byte(path):
    data = bytearray(path.read_bytes())
    data[-3] ^= 0x40                                  # inside the last tensor's bytes
    path.write_bytes(bytes(data))


def damage_header(path):
    data = bytearray(path.read_bytes())
    data[8:20] = b"#" * 12                            # the JSON header no longer parses
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage, match", [
    (damage_truncate, "not a readable safetensors file"),
    (damage_flip_data_byte, "corrupted"),
    (damage_header, "not a readable safetensors file"),
    (lambda path: path.write_bytes(b""), "not a readable safetensors file"),
])
def test_damaged_file_is_an_error_and_changes_nothing(tmp_path, damage, match):
    model, opt = trained()
    path = tmp_path / "ckpt.safetensors"
    save(path, model, opt)
    damage(path)
    other, other_opt = trained(seed=1, n=2)
    snap = snapshot(other, other_opt)
    with pytest.raises(CheckpointError, match=match) as err:
        load(path, other, other_opt)
    assert str(path) in str(err.value)
    assert_same(snap, other, other_opt)


class Renamed(Tiny):
    """Tiny with fc2 called `head`: same shapes, other names."""

    def __init__(self):
        self.fc1, self.head, self.p = Linear(4, 8), Linear(8, 2), 0.2

    def forward(self, x):
        return self.head(self.fc1(x).relu())


@pytest.mark.parametrize("make, match", [
    (lambda: (Tiny(hidden=6), "Adam"), r"'fc1.weight' has shape \(8, 4\) in the file but \(6, 4\) in the model"),
    (lambda: (Renamed(), "Adam"), r"missing \['head.weight', 'head.bias'\], unexpected \['fc2.bias', 'fc2.weight'\]"),
    (lambda: (Tiny(), "SGD"), "holds Adam state, cannot load it into SGD"),
    (lambda: (Tiny(), "groups"), "optimizer parameter groups differ"),
])
def test_mismatched_checkpoint_is_an_error_and_changes_nothing(tmp_path, make, match):
    model, opt = trained()
    path = tmp_path / "ckpt.safetensors"
    save(path, model, opt)
    other, kind = make()
    ps = other.parameters()
    other_opt = {"Adam": lambda: Adam(ps, lr=0.01), "SGD": lambda: SGD(ps, lr=0.01, momentum=0.9),
                 "groups": lambda: Adam([{"params": ps[:2]}, {"params": ps[2:]}], lr=0.01)}[kind]()
    other(Tensor.randn(2, 4)).sum().backward()
    other_opt.step()                                  # give it state to protect
    snap = snapshot(other, other_opt)
    with pytest.raises(CheckpointError, match=match) as err:
        load(path, other, other_opt)
    assert str(path) in str(err.value)
    assert_same(snap, other, other_opt)


def test_missing_file_and_missing_optimizer_state(tmp_path):
    model, opt = trained()
    with pytest.raises(FileNotFoundError, match="nope.safetensors"):
        load(tmp_path / "nope.safetensors", model, opt)
    path = tmp_path / "weights_only.safetensors"
    save(path, model)
    snap = snapshot(model, opt)
    with pytest.raises(CheckpointError, match="holds no optimizer state"):
        load(path, model, opt)
    assert_same(snap, model, opt)


def test_save_rejects_what_it_cannot_write(tmp_path):
    model, opt = trained()
    with pytest.raises(TypeError, match="extra holds a ndarray"):
        save(tmp_path / "c.safetensors", model, extra={"a": np.zeros(2)})
    with pytest.raises(ValueError, match="not in the model"):
        save(tmp_path / "c.safetensors", model, SGD([Tensor(np.ones(2), requires_grad=True)], lr=0.1))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        save(tmp_path / "no_dir" / "c.safetensors", model)
    assert os.listdir(tmp_path) == []


# ---------------------------------------------------------------- exact resume in a new process

SCRIPT = '''
import sys
import numpy as np
import nn.state
from nn import Linear, Module
from nn.optim import AdamW, clip_grad_norm, cosine_schedule
from tinygrad_like import Tensor

class Tiny(Module):
    def __init__(self):
        self.fc1, self.fc2 = Linear(4, 16), Linear(16, 2)
    def forward(self, x):
        return self.fc2(self.fc1(x).relu().dropout(0.3, self.training))

def make(seed):
    Tensor.manual_seed(seed)
    model = Tiny()
    decay = [p for n, p in model.named_parameters() if n.endswith("weight")]
    other = [p for n, p in model.named_parameters() if not n.endswith("weight")]
    opt = AdamW([{"params": decay, "weight_decay": 0.1}, {"params": other, "weight_decay": 0.0}], lr=1e-2)
    return model, opt

def train(model, opt, start, stop):
    for step in range(start, stop):
        for group in opt.param_groups:
            group["lr"] = cosine_schedule(step, 1e-2, warmup_steps=3, total_steps=12, min_lr=1e-3)
        x, y = Tensor.randn(8, 4), Tensor.rand(8, 2)
        ((model(x) - y) ** 2).mean().backward()
        clip_grad_norm(model.parameters(), 0.5)
        opt.step()
        opt.zero_grad()

mode, n, ckpt, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
if mode == "fresh":                      # train steps [0, n), save
    model, opt = make(0)
    train(model, opt, 0, n)
    nn.state.save(ckpt, model, opt, step=n)
else:                                    # new model and optimizer (other seed), load, train n more
    model, opt = make(99)
    start = nn.state.load(ckpt, model, opt)["step"]
    if mode == "resume_reseeded":
        Tensor.manual_seed(7)            # forget the saved RNG state: dropout and batches change
    train(model, opt, start, start + n)
np.savez(out, **model.state_dict())
'''


def test_resume_in_new_process_is_exact(tmp_path):
    script = tmp_path / "train_tiny.py"
    script.write_text(textwrap.dedent(SCRIPT))
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}

    def run(*args):
        subprocess.run([sys.executable, str(script), *map(str, args)], check=True, env=env, cwd=tmp_path)

    N, M = 5, 6
    run("fresh", N + M, tmp_path / "full.safetensors", tmp_path / "full.npz")
    run("fresh", N, tmp_path / "half.safetensors", tmp_path / "half.npz")
    run("resume", M, tmp_path / "half.safetensors", tmp_path / "resumed.npz")
    run("resume_reseeded", M, tmp_path / "half.safetensors", tmp_path / "reseeded.npz")
    full, resumed, reseeded = (np.load(tmp_path / f) for f in ("full.npz", "resumed.npz", "reseeded.npz"))
    assert sorted(full.files) == ["fc1.bias", "fc1.weight", "fc2.bias", "fc2.weight"]
    for name in full.files:
        np.testing.assert_array_equal(resumed[name], full[name])
    # the RNG state matters: without it the same resume ends elsewhere
    assert not all(np.array_equal(reseeded[name], full[name]) for name in full.files)
