"""Stacks of products of one leading shape (attention's q kᵀ and p v, (B, heads, T, d)), shared out along their
first axis by fast/pool.py's matmul: the bits of numpy's own stacked product, contiguous or a transposed view,
float32 and float64, on 1, 2 and 3 threads."""
import numpy as np
import pytest

import tinygrad_like
from tinygrad_like.fast import pool


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_stacks_of_one_shape_give_numpys_bits(n, dtype, monkeypatch):
    rng = np.random.default_rng(7)
    monkeypatch.setattr(pool, "MIN_FLOPS", 0)
    q = rng.standard_normal((5, 3, 11, 16)).astype(dtype)
    k = rng.standard_normal((5, 3, 11, 16)).astype(dtype)
    v = rng.standard_normal((5, 3, 11, 8)).astype(dtype)
    g = rng.standard_normal((5, 2, 3, 4, 6)).astype(dtype)
    h = rng.standard_normal((5, 2, 3, 6, 2)).astype(dtype)
    tinygrad_like.set_num_threads(n)
    try:
        scores = pool.matmul(q, k.swapaxes(-1, -2))                       # b a transposed view
        assert scores.tobytes() == np.matmul(q, k.swapaxes(-1, -2)).tobytes()
        assert pool.matmul(scores, v).tobytes() == np.matmul(scores, v).tobytes()
        assert pool.matmul(g, h).tobytes() == np.matmul(g, h).tobytes()   # five axes
        kt = k.swapaxes(-1, -2)[:, :1]                                       # one head, broadcast: numpy's product
        assert pool.matmul(q, kt).tobytes() == np.matmul(q, kt).tobytes()
    finally:
        tinygrad_like.set_num_threads(1)
