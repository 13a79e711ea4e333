"""fast/arrays.where, the Where primitive's array function on the fast path: the same bits, dtype and shape
as np.where (its plain version) for every case, the ones it copies and fills (one large array and a single
value, masked_fill and its gradient) and the ones it hands to np.where."""
import contextlib

import numpy as np
import pytest

from tinygrad_like import Tensor, composed
from tinygrad_like.fast.arrays import FILL_FROM, where

rng = np.random.default_rng(4)
BIG = (4, 3, 128, 128)                                      # 196,608 elements, over FILL_FROM
causal = (np.tril(np.ones((128, 128))) == 0)[None, None]    # (1, 1, 128, 128), as minGPT's masked_fill


def big(shape=BIG, dtype=np.float32):
    a = rng.standard_normal(shape).astype(dtype)
    a.reshape(-1)[:4] = [np.nan, -0.0, np.inf, -np.inf]
    return a


def f32(v):
    return np.array(v, np.float32)


CASES = {
    "masked_fill -inf (broadcast mask)": lambda: (causal, f32(-np.inf), big()),
    "its gradient: 0 where masked": lambda: (causal, f32(0.0), big()),
    "value second": lambda: (causal, big(), f32(0.0)),
    "full-size mask": lambda: (rng.random(BIG) < 0.5, f32(np.nan), big()),
    "value -0.0, mask of the last axis": lambda: (rng.random(128) < 0.5, f32(-0.0), big()),
    "float64 value into float32 array": lambda: (causal, np.array(1e300), big()),
    "float32 value into int64 array": lambda: (causal, f32(2.5), rng.integers(-9, 9, BIG)),
    "transposed array": lambda: (causal, f32(7.0), big().transpose(0, 1, 3, 2)),
    "small array: np.where": lambda: (causal[..., :8, :8], f32(-np.inf), big((2, 8, 8))),
    "mask of numbers: np.where": lambda: (causal.astype(np.float32), f32(3.0), big()),
    "mask wider than the array: np.where": lambda: (np.ones((2, 4, 3, 128, 128), bool), f32(1.0), big()),
    "two arrays: np.where": lambda: (causal, big(), big()),
}


@pytest.mark.parametrize("case", CASES)
def test_where_equals_numpys_bit_for_bit(case):
    cond, x, y = CASES[case]()
    want, got = np.where(cond, x, y), where(cond, x, y)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()
    assert got.flags.c_contiguous


def test_large_arrays_are_filled_small_ones_go_to_numpy(monkeypatch):
    """The copy-and-fill is what runs for masked_fill's sizes (np.where is not called), np.where below FILL_FROM."""
    calls = []
    plain = np.where
    monkeypatch.setattr(np, "where", lambda *a: calls.append(a[0].shape) or plain(*a))
    assert FILL_FROM <= np.prod(BIG)
    with np.errstate(all="raise"):                                    # no warning on the way (NaN, inf copied)
        where(causal, f32(-np.inf), big())
        where(causal, big(), f32(0.0))
    assert calls == []
    where(causal[..., :8, :8], f32(-np.inf), big((2, 8, 8)))
    assert calls == [(1, 1, 8, 8)]


def test_masked_fill_and_its_gradient_through_the_engine():
    """Tensor.masked_fill forward and backward with the fast path on equal the composed run's (plain
    np.where), bit for bit."""
    a, g = big(), big()
    g[~np.isfinite(g)] = 1.0
    results = []
    for context in (composed, contextlib.nullcontext):
        with context():
            t = Tensor(a.copy(), requires_grad=True)
            out = t.masked_fill(Tensor(causal), -1e9)
            out.backward(Tensor(g))
            results.append((out.numpy().tobytes(), t.grad.numpy().tobytes()))
    assert results[0] == results[1]
