"""Seeded programs on tinygrad_like.torch draw PyTorch's numbers: global draws after torch.manual_seed, draws
from a Generator, nn layers' initial weights and nn.init, dropout masks, DataLoader batches, strided
outputs and get_rng_state/set_rng_state (the programs are in tests/torch_stream_cases.py). Checked against
PyTorch's answers stored in tests/torch_streams.json, and live when PyTorch is installed. Also: the
engine's own stream (Tensor.manual_seed) is numpy's, unchanged, and switching between the two."""
from __future__ import annotations

import json
import pathlib
import sys

import numpy as np
import pytest

import tinygrad_like.torch as facade
from tinygrad_like import Tensor
from tinygrad_like import random as tl_random
from tinygrad_like.pytorch_streams.generator import TorchGenerator

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from torch_stream_cases import PROGRAMS, digest, run_program  # noqa: E402

STORED = json.loads((pathlib.Path(__file__).resolve().parent / "torch_streams.json").read_text())["answers"]


@pytest.fixture(autouse=True)
def engine_stream_after():
    yield
    Tensor.manual_seed(0)        # leave the library on the engine's own stream for the tests that follow


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_draws_pytorchs_stored_numbers(name):
    assert digest(run_program(name, facade)) == STORED[f"program: {name}"]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_draws_pytorchs_numbers_live(name):
    torch = pytest.importorskip("torch", reason="the live comparison needs PyTorch; the stored one runs without")
    ours, theirs = run_program(name, facade), run_program(name, torch)
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a.dtype == b.dtype and a.shape == b.shape, (i, a.dtype, b.dtype, a.shape, b.shape)
        np.testing.assert_array_equal(a, b, err_msg=f"{name}: array {i}")


def test_engine_stream_is_numpys_and_unchanged():
    """Tensor.manual_seed keeps the engine's numbers: numpy's default_rng, as before PyTorch's streams."""
    Tensor.manual_seed(5)
    x, u, i = Tensor.randn(3, 4).numpy(), Tensor.uniform(7, low=-1, high=2).numpy(), Tensor.randint(0, 9, (5,)).numpy()
    rng = np.random.default_rng(5)
    np.testing.assert_array_equal(x, rng.standard_normal((3, 4)).astype(np.float32))
    np.testing.assert_array_equal(u, rng.uniform(-1, 2, 7).astype(np.float32))
    np.testing.assert_array_equal(i, rng.integers(0, 9, (5,)))


def test_the_last_seed_call_chooses_the_stream():
    facade.manual_seed(0)
    assert isinstance(tl_random.current(), TorchGenerator)
    torch_first = Tensor.randn(3).numpy()
    np.testing.assert_array_equal(torch_first, TorchGenerator(0).normal((3,)))
    Tensor.manual_seed(0)
    assert isinstance(tl_random.current(), np.random.Generator)
    numpy_first = np.random.default_rng(0).standard_normal(3).astype(np.float32)
    np.testing.assert_array_equal(Tensor.randn(3).numpy(), numpy_first)


def test_generator_argument_leaves_the_library_stream_alone():
    Tensor.manual_seed(1)
    g = facade.Generator().manual_seed(2)
    facade.randn(10, generator=g)
    facade.randperm(5, generator=g)
    Tensor.zeros(20).normal_(generator=g)
    np.testing.assert_array_equal(Tensor.rand(4).numpy(), np.random.default_rng(1).random(4).astype(np.float32))


def test_library_state_round_trips_both_kinds():
    for seed_call in (Tensor.manual_seed, facade.manual_seed):
        seed_call(3)
        Tensor.randn(5)
        state = json.loads(json.dumps(tl_random.get_state()))       # plain JSON, as checkpoints store it
        first = Tensor.randn(17).numpy()
        Tensor.manual_seed(99)
        tl_random.set_state(state)
        np.testing.assert_array_equal(Tensor.randn(17).numpy(), first)


def test_generator_state_is_pytorchs_bytes():
    g = facade.Generator().manual_seed(9)
    state = g.get_state()
    assert state.dtype == np.uint8 and state.shape == (5056,)
    first = facade.rand(4, generator=g).numpy()
    g.set_state(state)
    np.testing.assert_array_equal(facade.rand(4, generator=g).numpy(), first)
    with pytest.raises(ValueError, match="5056 bytes"):
        g.set_state(np.zeros(3, dtype=np.uint8))


def test_a_generator_that_is_not_one_is_refused():
    with pytest.raises(TypeError, match="generator must be"):
        Tensor.zeros(3).normal_(generator="seed 1")


@pytest.mark.parametrize("p", [0.1, 0.2, 1 / 3, 0.5, 0.9])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_dropout_noise_is_the_numbers_of_its_formulas(p, dtype):
    """dropout_noise, made in the tensor's dtype, equals the formulas written out here on the same draws:
    the engine's stream (keep / (1 − p) in float64, rounded once) and PyTorch's (1/(1 − p) in the dtype)."""
    shape = (7, 999)
    tl_random.manual_seed(5)
    noise = tl_random.dropout_noise(shape, p, dtype)
    keep = np.random.default_rng(5).random(shape) >= p
    want = (keep / (1 - p)).astype(dtype)
    assert noise.dtype == want.dtype and noise.tobytes() == want.tobytes()
    tl_random.use(TorchGenerator(5))
    noise = tl_random.dropout_noise(shape, p, dtype)
    keep = TorchGenerator(5)._unit(7 * 999, np.float64).reshape(shape) < 1 - p
    dt = np.dtype(dtype).type
    want = keep.astype(dtype) * (dt(1) / dt(1 - p))
    assert noise.dtype == want.dtype and noise.tobytes() == want.tobytes()
