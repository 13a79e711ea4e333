"""Attention in tiles (tinygrad_like/fast/flash.py): with tiles of a few rows, so that every edge is met on
small inputs, the fused ops still equal the composed attention to 1e-12 in float64 (values, both
backward paths, second derivatives); fully masked rows give 0; float32 stays float32 and within 1e-6
of the whole-scores formula; two threads give the same numbers as one."""
import contextlib
import warnings

import numpy as np
import pytest

import tinygrad_like
from tests.test_fused import check_fused_equals_composed, seeded
from tinygrad_like import Tensor, composed, grad
from tinygrad_like.fast import flash

rng = np.random.default_rng(1)

FLOAT_MASK = np.linspace(-3, 3, 7 * 9).reshape(7, 9)
FLOAT_MASK[:, 6:] = -np.inf                               # a band of masked keys: whole tiles skipped
LATE_MASK = np.arange(9)[None, :] >= np.array([[0], [1], [1], [7]])   # row 3 sees keys 7 and 8 only
FLOAT_MASK_16 = np.linspace(-3, 3, 16 * 20).reshape(16, 20)
FLOAT_MASK_16[:, 13:] = -np.inf
BOOL_MASK = rng.random((2, 1, 7, 9)) < 0.6
BOOL_MASK[..., 0] = True                                  # every row sees a key

CASES = {  # name: (function of the inputs, input shapes)
    "causal, T not a multiple of the tile": (lambda x: x.multihead_attention(2, is_causal=True), [(2, 7, 12)]),
    "causal, T = 1": (lambda x: x.multihead_attention(2, is_causal=True), [(3, 1, 12)]),
    "full": (lambda x: x.multihead_attention(2), [(2, 9, 12)]),
    "grouped-query": (lambda x: x.multihead_attention(4, 2, is_causal=True), [(2, 10, 16)]),
    "multi-query": (lambda x: x.multihead_attention(3, 1, is_causal=True), [(3, 6, 10)]),
    "sdpa causal": (lambda q, k, v: q.scaled_dot_product_attention(k, v, is_causal=True), [(2, 9, 3)] * 3),
    "sdpa KV cache, 3 queries after 6 cached keys": (
        lambda q, k, v: q.scaled_dot_product_attention(k, v, is_causal=True),
        [(2, 2, 3, 4), (2, 2, 9, 4), (2, 2, 9, 5)]),
    "sdpa float mask with masked columns": (lambda q, k, v: q.scaled_dot_product_attention(k, v, attn_mask=FLOAT_MASK),
                                            [(2, 7, 3), (2, 9, 3), (2, 9, 2)]),
    "sdpa bool mask per batch entry": (lambda q, k, v: q.scaled_dot_product_attention(k, v, attn_mask=BOOL_MASK),
                                       [(2, 3, 7, 4), (2, 3, 9, 4), (2, 3, 9, 4)]),
    "sdpa broadcast batch": (lambda q, k, v: q.scaled_dot_product_attention(k, v, is_causal=True),
                             [(2, 3, 8, 4), (1, 3, 8, 4), (3, 8, 4)]),
    "sdpa rows whose first key spans are all masked": (  # the online softmax starts from m = −inf there
        lambda q, k, v: q.scaled_dot_product_attention(k, v, attn_mask=LATE_MASK), [(2, 4, 3), (2, 9, 3), (2, 9, 2)]),
    # from 16 query rows on, kᵀ·scale is a contiguous copy (flash._scaled): these cases take that path
    "causal, 18 rows": (lambda x: x.multihead_attention(2, is_causal=True), [(2, 18, 12)]),
    "grouped-query, 17 rows": (lambda x: x.multihead_attention(4, 2, is_causal=True), [(2, 17, 16)]),
    "sdpa float mask, 16 rows": (lambda q, k, v: q.scaled_dot_product_attention(k, v, attn_mask=FLOAT_MASK_16),
                                 [(2, 16, 3), (2, 20, 3), (2, 20, 2)]),
    "sdpa broadcast batch, 16 rows": (lambda q, k, v: q.scaled_dot_product_attention(k, v, is_causal=True),
                                      [(2, 3, 16, 4), (1, 3, 16, 4), (3, 16, 5)]),
    # dropout's noise sliced tile by tile, through the one-span and the online softmax
    "sdpa causal, dropout": (seeded(lambda q, k, v: q.scaled_dot_product_attention(
        k, v, is_causal=True, dropout_p=0.3)), [(2, 9, 3)] * 3),
    "sdpa float mask with masked columns, dropout, 16 rows": (seeded(lambda q, k, v: q.scaled_dot_product_attention(
        k, v, attn_mask=FLOAT_MASK_16, dropout_p=0.5)), [(2, 16, 3), (2, 20, 3), (2, 20, 2)]),
    "causal, 18 rows, dropout": (seeded(lambda x: x.multihead_attention(2, is_causal=True, dropout_p=0.2)),
                                 [(2, 18, 12)]),
}

TILINGS = {  # name: (QUERY_TILE, TILE_BYTES): small tiles, so that key spans and chunks are many
    "rows 2, spans of 2 keys": (2, 2 * 2 * 8 * 2),
    "rows 3, spans of up to 6 keys": (3, 3 * 6 * 8 * 2),
    "automatic": (None, None),
}


@pytest.fixture(params=list(TILINGS))
def tiling(request, monkeypatch):
    rows, budget = TILINGS[request.param]
    monkeypatch.setattr(flash, "QUERY_TILE", rows)
    monkeypatch.setattr(flash, "TILE_BYTES", budget)
    return request.param


@pytest.mark.parametrize("name", list(CASES))
def test_tiled_equals_composed(name, tiling):
    check_fused_equals_composed(*CASES[name])


def test_small_tiles_make_several_spans_and_chunks(monkeypatch):
    monkeypatch.setattr(flash, "QUERY_TILE", 2)
    monkeypatch.setattr(flash, "TILE_BYTES", 2 * 2 * 8 * 2)
    chunk, rows, span = flash.plan((2, 2), 7, 7, 8)
    assert (chunk, rows, span) == (1, 2, 2)
    tiles = flash.causal_spans(7, rows, span, np.dtype(np.float64))
    assert [len(spans) for _, spans in tiles] == [1, 2, 3, 4]         # the online softmax meets up to 4
    assert tiles[1] == ((2, 4), [(0, 2, False), (2, 4, True)])      # keys 4-5, above the diagonal: skipped


def test_spans_add_the_mask_only_where_it_is_not_0(monkeypatch):
    monkeypatch.setattr(flash, "QUERY_TILE", 2)
    causal = np.where(np.tril(np.ones((6, 6), bool)), 0.0, -np.inf)
    assert flash.key_spans(causal, 6, 6, 2, 2) == [((0, 2), [(0, 2, True)]),
                                                   ((2, 4), [(0, 2, False), (2, 4, True)]),
                                                   ((4, 6), [(0, 2, False), (2, 4, False), (4, 6, True)])]
    assert flash.key_spans(causal, 6, 6, 2, 6)[2] == ((4, 6), [(0, 6, True)])   # joined: masked as a whole


def test_tile_sizes_fit_the_budget():
    assert flash.l2_bytes() >= 64 << 10
    for batch, T, itemsize in [((16, 4), 128, 4), ((8, 6), 256, 4), ((1, 1), 2048, 8), ((64, 12), 1024, 8)]:
        chunk, rows, span = flash.plan(batch, T, T, itemsize)
        heads = int(np.prod(batch[1:]))
        assert chunk * heads * rows * min(T, span) * itemsize <= flash.l2_bytes() // 2 or chunk == 1 and rows <= 32


def sdpa_by_hand(q, k, v, allowed):
    """Attention in float64 numpy with rows of no allowed key set to 0: the known answer."""
    s = np.where(allowed, q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]), -np.inf)
    live = allowed.any(-1, keepdims=True)
    e = np.exp(s - np.where(live, s.max(-1, keepdims=True), 0))
    return np.where(live, e / np.where(live, e.sum(-1, keepdims=True), 1), 0) @ v


@pytest.mark.parametrize("create_graph", [False, True])
def test_fully_masked_rows_give_zero_and_zero_gradients(tiling, create_graph):
    """A padding mask that hides every key from some queries: those rows are 0 (as in PyTorch), their
    gradients 0, no NaN and no warning; the other rows are what they would be without them."""
    allowed = rng.random((2, 6, 9)) < 0.5
    allowed[0, 2] = allowed[1, 5] = allowed[1, 0] = False
    allowed[0, 3, 1] = True
    q, k, v = (Tensor(rng.standard_normal(s), dtype=np.float64, requires_grad=True)
               for s in [(2, 6, 4), (2, 9, 4), (2, 9, 3)])
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        out = q.scaled_dot_product_attention(k, v, attn_mask=allowed)
        dq, dk, dv = grad(out.sum(), [q, k, v], create_graph=create_graph)
    np.testing.assert_allclose(out.numpy(), sdpa_by_hand(q.numpy(), k.numpy(), v.numpy(), allowed), rtol=0, atol=1e-12)
    for b, row in [(0, 2), (1, 5), (1, 0)]:
        assert not out.numpy()[b, row].any() and not dq.numpy()[b, row].any()
    for b, rows in [(0, [0, 1, 3, 4, 5]), (1, [1, 2, 3, 4])]:             # the live rows alone, composed
        ql, kl, vl = (Tensor(a.numpy()[b:b + 1, rows] if a is q else a.numpy()[b:b + 1], requires_grad=True)
                      for a in (q, k, v))
        with composed():
            ol = ql.scaled_dot_product_attention(kl, vl, attn_mask=allowed[b:b + 1, rows])
            dql, dkl, dvl = grad(ol.sum(), [ql, kl, vl])
        np.testing.assert_allclose(dq.numpy()[b, rows], dql.numpy()[0], rtol=0, atol=1e-12)
        np.testing.assert_allclose(dk.numpy()[b], dkl.numpy()[0], rtol=0, atol=1e-12)
        np.testing.assert_allclose(dv.numpy()[b], dvl.numpy()[0], rtol=0, atol=1e-12)


def whole_scores_attention(qkv, n_head, u):
    """The formula before tiles, in float32 numpy: every score at once; output and d(Σ out⊙u)/dqkv."""
    B, T, W = qkv.shape
    q, k, v = np.split(qkv.reshape(B, T, 3 * n_head, W // (3 * n_head)).transpose(0, 2, 1, 3), 3, axis=1)
    scale = np.float32(1 / np.sqrt(q.shape[-1]))
    s = q @ np.swapaxes(k, -1, -2) * scale + np.where(np.tril(np.ones((T, T), bool)), 0, -np.inf).astype(np.float32)
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    g = u.reshape(B, T, n_head, -1).transpose(0, 2, 1, 3)
    dw = g @ np.swapaxes(v, -1, -2)
    ds = w * (dw - (dw * w).sum(-1, keepdims=True))
    grads = [ds @ k * scale, np.swapaxes(ds, -1, -2) @ q * scale, np.swapaxes(w, -1, -2) @ g]
    join = lambda a: a.transpose(0, 2, 1, 3).reshape(B, T, -1)
    return join(w @ v), np.concatenate([a.transpose(0, 2, 1, 3) for a in grads], axis=2).reshape(B, T, W)


def test_float32_stays_float32_and_close_to_the_whole_scores_formula(tiling):
    qkv = rng.standard_normal((3, 37, 24)).astype(np.float32)
    u = rng.standard_normal((3, 37, 8)).astype(np.float32)
    x = Tensor(qkv, requires_grad=True)
    out = x.multihead_attention(2, is_causal=True)
    (out * Tensor(u)).sum().backward()
    assert out.dtype == x.grad.dtype == np.float32
    want_out, want_grad = whole_scores_attention(qkv, 2, u)
    np.testing.assert_allclose(out.numpy(), want_out, rtol=1e-6, atol=1e-6 * np.abs(want_out).max())
    np.testing.assert_allclose(x.grad.numpy(), want_grad, rtol=1e-6, atol=1e-6 * np.abs(want_grad).max())


def test_two_threads_give_the_numbers_of_one(monkeypatch):
    pytest.importorskip("threadpoolctl")
    from tinygrad_like.fast import pool
    monkeypatch.setattr(pool, "MIN_BYTES", 0)                # share even these small scores between the threads
    monkeypatch.setattr(flash, "QUERY_TILE", 4)
    monkeypatch.setattr(flash, "TILE_BYTES", 4 * 8 * 2 * 8)
    x = Tensor(rng.standard_normal((6, 11, 24)), requires_grad=True)
    results = []
    for threads in (1, 2):
        tinygrad_like.set_num_threads(threads)
        try:
            out = x.multihead_attention(2, is_causal=True)
            (dx,) = grad((out * out).sum(), [x])
        finally:
            tinygrad_like.set_num_threads(1)
        results.append((out.numpy(), dx.numpy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


def test_small_attention_stays_on_one_thread():
    """Below pool.MIN_BYTES of scores, handing chunks to a second thread costs more than it gives: one chunk."""
    from tinygrad_like.fast import pool
    tinygrad_like.set_num_threads(2)
    try:
        assert pool.threads_for(pool.MIN_BYTES - 1) == 1 and pool.threads_for(pool.MIN_BYTES) == 2
        assert flash.plan((8, 2), 32, 32, 4)[0] == 8                           # the tiny config: 64 KB of scores
        assert flash.plan((16, 4), 128, 128, 4)[0] <= 8                        # the small config: 4 MB, two chunks
    finally:
        tinygrad_like.set_num_threads(1)


def test_thread_count_must_be_positive():
    with pytest.raises(ValueError, match="set_num_threads"):
        tinygrad_like.set_num_threads(0)
    assert tinygrad_like.get_num_threads() >= 1


def test_thread_count_from_the_environment(monkeypatch):
    from tinygrad_like.fast import pool
    monkeypatch.setenv("TINYGRAD_LIKE_NUM_THREADS", "3")
    assert pool._default_threads() == 3
    monkeypatch.setenv("TINYGRAD_LIKE_NUM_THREADS", "two")
    with pytest.raises(ValueError, match="TINYGRAD_LIKE_NUM_THREADS"):
        pool._default_threads()
    monkeypatch.delenv("TINYGRAD_LIKE_NUM_THREADS")
    assert pool._default_threads() == pool.usable_cores() >= 1


# ---------------------------------------------------------------- dropout's mask

def dropped_weights(stream: str, seed: int, fused: bool):
    """nanoGPT's attention call in float32 (large enough for the kernels) with v = I, so the output is the
    dropped weights themselves; and the stream's next number, which says where the draw left it."""
    from tinygrad_like import random as tl_random
    from tinygrad_like.pytorch_streams.generator import TorchGenerator
    tl_random.use(TorchGenerator(seed) if stream == "pytorch" else np.random.default_rng(seed))
    try:
        q, k = (Tensor(np.random.default_rng(i).standard_normal((2, 4, 64, 16)).astype(np.float32), requires_grad=True)
                for i in (1, 2))
        v = Tensor(np.broadcast_to(np.eye(64, dtype=np.float32), (2, 4, 64, 64)).copy())
        with contextlib.nullcontext() if fused else composed():
            out = q.scaled_dot_product_attention(k, v, is_causal=True, dropout_p=0.2)
        after = tl_random.uniform((1,), np.float64)[0]
    finally:
        Tensor.manual_seed(0)
    assert (type(out._ctx).__name__ == "Attention") == fused
    return out.numpy(), after


@pytest.mark.parametrize("stream", ["numpy", "pytorch"])
def test_attention_dropout_draws_the_composites_mask(stream):
    """The fused attention with dropout draws the very noise the composite draws, from numpy's stream and
    from PyTorch's: the same entries zeroed (bit for bit), the others equal within float32 rounding, and
    the stream left at the same place."""
    fused, fused_next = dropped_weights(stream, 11, fused=True)
    composed_out, composed_next = dropped_weights(stream, 11, fused=False)
    np.testing.assert_array_equal(fused == 0, composed_out == 0)
    assert 0.15 < ((fused == 0) & (np.tril(np.ones((64, 64))) == 1)).mean() / (65 / 128) < 0.25   # p = 0.2 of the kept
    np.testing.assert_allclose(fused, composed_out, rtol=0, atol=1e-6)
    assert fused_next == composed_next


def test_attention_dropout_mask_is_pytorchs():
    """From PyTorch's stream, the fused attention zeroes the weights PyTorch's own
    scaled_dot_product_attention zeroes at the same seed (so a program's losses stay PyTorch's)."""
    torch = pytest.importorskip("torch", reason="compares with PyTorch's own attention dropout")
    ours, _ = dropped_weights("pytorch", 11, fused=True)
    torch.manual_seed(11)
    q, k = (torch.tensor(np.random.default_rng(i).standard_normal((2, 4, 64, 16)).astype(np.float32)) for i in (1, 2))
    v = torch.eye(64).expand(2, 4, 64, 64).contiguous()
    theirs = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=0.2).numpy()
    np.testing.assert_array_equal(ours == 0, theirs == 0)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-6)
