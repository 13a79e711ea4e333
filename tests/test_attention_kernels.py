"""The attention kernels of the `fast` extra (kernels/attention.c, kernels/numba_rows.py) equal their numpy
bodies (fast/flash.py): the tile's softmax (tile_softmax_forward, tile_softmax_backward) to 1e-12 in float64
and within float32 rounding in float32 (tests/test_kernels.py's bound), with masks of every kind, rows whose
keys are all masked, row lengths that are no multiple of a vector, and logits far from 0, C's own exp within
an ulp; the transposing copy (transpose_copy) bit for bit, from every layout the fused ops hand it; and the
fused attention ops running the kernels equal the composed attention to 1e-12."""
import numpy as np
import pytest

pytest.importorskip("numba")

from tests.test_kernels import FLOAT32_ULPS, float32_bound, need  # noqa: E402
from tinygrad_like import Tensor, composed, grad  # noqa: E402
from tinygrad_like.composites import split_heads  # noqa: E402
from tinygrad_like.fast import flash, kernels  # noqa: E402
from tinygrad_like.fast.kernels import arrays as K  # noqa: E402
from tinygrad_like.fast.kernels import c_build, ready  # noqa: E402

rng = np.random.default_rng(3)
BATCH, ROWS, KEYS = (2, 3), 5, 37                         # a tile of 2 batch entries x 3 heads x 5 query rows


def causal_block(rows, keys, dtype):
    """The causal mask's block for the last `rows` queries of `keys` keys: 0 on and below the diagonal."""
    allowed = np.arange(keys)[None, :] <= np.arange(keys - rows, keys)[:, None]
    return np.where(allowed, 0, -np.inf).astype(dtype)


def masks(dtype):
    """name -> the mask of a (*BATCH, ROWS, KEYS) tile, as flash.py hands it over (a view of a larger mask)."""
    causal = causal_block(ROWS + 2, KEYS + 3, dtype)[2:, :KEYS].reshape(1, 1, ROWS, KEYS)  # strided rows
    float_mask = rng.standard_normal((1, 1, ROWS, KEYS)).astype(dtype) * 3
    float_mask[..., 1, :] = -np.inf                                             # a row sees no key
    padding = np.broadcast_to(np.where(np.arange(KEYS) % 3, 0, -np.inf).astype(dtype), (1, 1, ROWS, KEYS))
    per_entry = np.where(rng.random(BATCH + (ROWS, KEYS)) < 0.3, -np.inf, 0).astype(dtype)
    per_entry[1, 2, 3] = -np.inf                                                # that row of that head: none
    return {"none": None, "causal": causal, "float, a row masked whole": float_mask,
            "padding (row stride 0)": padding, "per batch entry and head": per_entry}


def scores(dtype, shift=0.0):
    return (rng.standard_normal(BATCH + (ROWS, KEYS)) * 4 + shift).astype(dtype)


def forward_both(variant, s, mask):
    """(weights, lse) of the kernel and of the numpy body, from the same scores: the weights read as their
    product with the identity (v = I, exact)."""
    eye = np.eye(s.shape[-1], dtype=s.dtype)
    results = []
    for fn in (lambda *a: K.tile_softmax_forward(*a, variant=variant), flash.tile_softmax_forward):
        out = np.empty(s.shape, s.dtype)
        lse = fn(s.copy(), None if mask is None else mask.copy(), eye, out)
        results.append((out, lse))
    return results


def backward_both(variant, s, mask, lse, dp, D):
    """(p, ds) of the kernel and of the numpy body."""
    got, want = [s.copy(), dp.copy()], [s.copy(), dp.copy()]
    K.tile_softmax_backward(got[0], mask, lse, got[1], D, variant)
    flash.tile_softmax_backward(want[0], mask, lse, want[1], D)
    return got, want


def tile_case(dtype, mask_name, shift=0.0):
    s, mask = scores(dtype, shift), masks(dtype)[mask_name]
    _, (_, lse) = forward_both("numba", s, mask)
    dp, D = rng.standard_normal(s.shape).astype(dtype), rng.standard_normal(lse.shape).astype(dtype)
    return s, mask, lse, dp, D


@pytest.mark.parametrize("shift", [0.0, 1e4])
@pytest.mark.parametrize("mask_name", list(masks(np.float64)))
@pytest.mark.parametrize("variant", ["numba", "c"])
def test_tile_kernels_equal_the_numpy_bodies_float64(variant, mask_name, shift):
    need(variant)
    s, mask, lse, dp, D = tile_case(np.float64, mask_name, shift)
    (weights, got_lse), (want_weights, want_lse) = forward_both(variant, s, mask)
    np.testing.assert_allclose(weights, want_weights, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got_lse, want_lse, rtol=1e-15, atol=0)             # +inf where masked whole
    got, want = backward_both(variant, s, mask, lse, dp, D)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


@pytest.mark.parametrize("mask_name", ["none", "causal", "padding (row stride 0)"])
@pytest.mark.parametrize("variant", ["numba", "c"])
def test_tile_forward_with_dropout_noise(variant, mask_name):
    """Dropout's noise multiplies the weights between the softmax and v, in the kernel's wrapper and in the
    numpy body: both equal (softmax(s + mask) ⊙ noise) v computed here whole, and the lse is the weights'
    before dropout."""
    need(variant)
    s, mask = scores(np.float64), masks(np.float64)[mask_name]
    noise = np.where(rng.random(s.shape) < 0.3, 0.0, 1 / 0.7)
    v = rng.standard_normal((KEYS, 4))
    full = s if mask is None else s + mask
    top = full.max(-1, keepdims=True)
    e = np.exp(full - np.where(np.isfinite(top), top, 0))
    want = (e / e.sum(-1, keepdims=True) * noise) @ v
    want_lse = np.log(e.sum(-1, keepdims=True)) + top
    for fn in (lambda *a: K.tile_softmax_forward(*a, variant=variant), flash.tile_softmax_forward):
        out = np.empty(s.shape[:-1] + (4,))
        lse = fn(s.copy(), None if mask is None else mask.copy(), v, out, noise)
        np.testing.assert_allclose(out, want, rtol=0, atol=1e-12)
        np.testing.assert_allclose(lse, want_lse, rtol=1e-14, atol=0)


def test_masked_rows_give_weights_0_and_lse_inf():
    """The cases above meet rows whose keys are all masked: their weights are 0, their lse +inf, and the
    backward rebuilds p = 0 and ds = 0 for them, in the numpy body (the kernels equal it)."""
    s, mask, lse, dp, D = tile_case(np.float64, "float, a row masked whole")
    _, (weights, lse) = forward_both("numba", s, mask)
    assert (lse[..., 1, 0] == np.inf).all() and not weights[..., 1, :].any()
    p, ds = s.copy(), dp.copy()
    flash.tile_softmax_backward(p, mask, lse, ds, D)
    assert not p[..., 1, :].any() and not ds[..., 1, :].any()
    np.testing.assert_allclose(weights.sum(-1)[..., [0, 2, 3, 4]], 1, rtol=1e-14)


@pytest.mark.parametrize("shift", [0.0, 1e3])
@pytest.mark.parametrize("mask_name", list(masks(np.float32)))
@pytest.mark.parametrize("variant", ["numba", "c"])
def test_tile_kernels_float32_within_rounding(variant, mask_name, shift):
    """float32 against the numpy body run in float64 on the same float32 inputs: the weights within
    FLOAT32_ULPS·√n float32 epsilons of their row's largest (n keys) times 1 + the row's largest |logit|
    (a logit's own rounding, ε·|s|, reaches its weight relatively), lse within as many of |lse|; p likewise,
    with |lse| added to the logits, and ds within p's bound times the row's largest |dp| plus |D|."""
    need(variant)
    s, mask, lse, dp, D = tile_case(np.float32, mask_name, shift)
    (weights, got_lse), _ = forward_both(variant, s, mask)
    f64 = lambda a: None if a is None else a.astype(np.float64)
    _, (want_weights, want_lse) = forward_both(variant, f64(s), f64(mask))     # the float64 body
    assert weights.dtype == got_lse.dtype == np.float32
    live = np.isfinite(want_lse)
    assert (got_lse[~live] == np.inf).all() and not weights[~live[..., 0]].any()
    logits = 1 + np.abs(s).max(-1, keepdims=True) + (0 if mask is None else np.abs(mask[np.isfinite(mask)]).max())
    assert (np.abs(weights - want_weights) <= float32_bound(want_weights, KEYS) * logits).all()
    lse_bound = FLOAT32_ULPS * np.sqrt(KEYS) * np.finfo(np.float32).eps * np.abs(want_lse[live])
    assert (np.abs(got_lse[live] - want_lse[live]) <= lse_bound).all()
    got, _ = backward_both(variant, s, mask, lse, dp, D)
    _, want = backward_both(variant, f64(s), f64(mask), f64(lse), f64(dp), f64(D))
    p_bound = float32_bound(want[0], KEYS) * (logits + np.where(live, np.abs(lse), 0))
    assert (np.abs(got[0] - want[0]) <= p_bound).all()
    assert (np.abs(got[1] - want[1]) <= p_bound * (np.abs(dp).max(-1, keepdims=True) + np.abs(D))).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_c_kernels_exp_is_within_an_ulp(dtype):
    """attention.c computes exp itself (glibc's vector exp takes a slow path for −inf): within one ulp of
    the exact value from exp's whole range down to the subnormals, 0 for −inf and below, inf above, NaN
    for NaN. Read through the backward kernel: with lse = 0, D = 0 and dp = 1, p = exp(s)."""
    need("c")
    lo, hi = (-104.0, 88.7) if dtype == np.float32 else (-745.0, 709.7)
    x = np.concatenate([np.linspace(lo, hi, 199_997), [-np.inf, np.inf, np.nan, 0.0, -0.0, 2 * lo, 2 * hi]])
    x = x.astype(dtype).reshape(-1, 7)
    p, ones = x.copy(), np.ones(x.shape, dtype)
    K.tile_softmax_backward(p, None, np.zeros((len(x), 1), dtype), ones, np.zeros((len(x), 1), dtype), "c")
    exact = np.exp(x.astype(np.longdouble))
    finite = np.isfinite(x) & (np.abs(x) < max(-lo, hi))
    err = np.abs(p[finite].astype(np.longdouble) - exact[finite]) / np.spacing(exact[finite].astype(dtype))
    assert err.max() <= 1, float(err.max())
    np.testing.assert_array_equal(p[-1], [0, np.inf, np.nan, 1, 1, 0, np.inf])
    np.testing.assert_array_equal(ones, np.where(np.isnan(p), np.nan, p))        # ds = p·(1 − 0)


def transpose_sources(dtype):
    """name -> an array (..., n, d) as the fused ops hand one to transpose_copy."""
    qkv = rng.standard_normal((3, 37, 4 * 8)).astype(dtype)                    # 2 query heads, 1 KV head of 8
    _, k, v = split_heads(qkv, 2, 1)
    packed = rng.standard_normal((2, 37, 3 * 3 * 5)).astype(dtype)
    _, k3, _ = split_heads(packed, 3, 3)
    return {"k of a packed projection, one KV head": k, "v of it": v, "k, three heads": k3,
            "contiguous (N, H, n, d)": rng.standard_normal((2, 3, 37, 5)).astype(dtype),
            "one batch axis": rng.standard_normal((4, 37, 6)).astype(dtype),
            "broadcast over heads": np.broadcast_to(rng.standard_normal((2, 1, 37, 5)), (2, 3, 37, 5)).astype(dtype),
            "three batch axes that do not merge (numpy's copy)": k3[:, :, None].repeat(2, 2)[..., ::1, :]}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("variant", ["numba", "c"])
def test_transpose_kernel_copies_bit_for_bit(variant, dtype):
    need(variant)
    for name, a in transpose_sources(dtype).items():
        for scale in (None, dtype(0.37)):
            out, want = (np.empty(a.shape[:-2] + a.shape[:-3:-1], dtype) for _ in range(2))
            assert K.transpose_copy(a, scale, out, variant) is out
            np.testing.assert_array_equal(out, flash.transpose_copy(a, scale, want), err_msg=name)
            np.testing.assert_array_equal(out, np.swapaxes(a, -1, -2) * (1 if scale is None else scale), err_msg=name)


# ---------------------------------------------------------------- wired into the fused attention ops

FUSED_CASES = {  # name: (function of the inputs, input shapes)
    "causal, T not a multiple of the tile": (lambda x: x.multihead_attention(2, is_causal=True), [(2, 37, 24)]),
    "full": (lambda x: x.multihead_attention(3), [(2, 20, 27)]),
    "grouped-query": (lambda x: x.multihead_attention(4, 2, is_causal=True), [(2, 45, 32)]),
    "multi-query": (lambda x: x.multihead_attention(3, 1, is_causal=True), [(3, 33, 20)]),
    "sdpa bool mask per batch entry, rows that see no key": (
        lambda q, k, v: q.scaled_dot_product_attention(k, v, attn_mask=PADDED), [(2, 3, 20, 4), (2, 3, 24, 4),
                                                                                 (2, 3, 24, 5)]),
    "sdpa float mask": (lambda q, k, v: q.scaled_dot_product_attention(k, v, attn_mask=FLOAT_MASK),
                        [(2, 20, 3), (2, 24, 3), (2, 24, 2)]),
}
PADDED = rng.random((2, 1, 20, 24)) < 0.6
PADDED[0, 0, 3] = PADDED[1, 0, 17] = False                  # those queries see no key
FLOAT_MASK = np.linspace(-3, 3, 20 * 24).reshape(20, 24)
FLOAT_MASK[:, 19:] = -np.inf


def count_tile_calls(monkeypatch):
    """Count the calls of the tile kernels' array functions, with the kernels on, whatever the environment."""
    monkeypatch.delenv("TINYGRAD_LIKE_KERNELS", raising=False)
    assert ready(np.float64) and ready(np.float32)
    monkeypatch.setattr(kernels, "MIN_SIZE", 0)                 # the tests' tiles are small
    monkeypatch.setattr(kernels, "_chosen", {})
    calls = {}
    for way, name in (("forward", "tile_softmax_forward"), ("backward", "tile_softmax_backward"),
                      ("transpose", "transpose_copy")):
        fn = getattr(K, name)
        def spy(*args, fn=fn, way=way, **kwargs):
            calls[way] = calls.get(way, 0) + 1
            return fn(*args, **kwargs)
        monkeypatch.setattr(K, name, spy)
    return calls


def value_and_grads(fn, arrays, u):
    inputs = [Tensor(a, requires_grad=True) for a in arrays]
    y = fn(*inputs)
    return [y.numpy(), *[d.numpy() for d in grad((y * Tensor(u)).sum(), inputs)]]


@pytest.mark.parametrize("tiles", ["automatic", "rows 8, several key spans"])
@pytest.mark.parametrize("name", list(FUSED_CASES))
def test_attention_with_tile_kernels_equals_composed(name, tiles, monkeypatch):
    """Each variant's kernels run in the fused attention ops (forward and backward) and give the composed
    attention's values and gradients to 1e-12 in float64; with several key spans per query tile, the
    spans before the last go through the numpy online softmax."""
    if tiles != "automatic":
        monkeypatch.setattr(flash, "QUERY_TILE", 8)
        monkeypatch.setattr(flash, "TILE_BYTES", 8 * 16 * 8)
    fn, shapes = FUSED_CASES[name]
    arrays = [rng.standard_normal(s) * 2 for s in shapes]
    u = rng.standard_normal(fn(*[Tensor(a) for a in arrays]).shape)
    with composed():
        want = value_and_grads(fn, arrays, u)
    calls = count_tile_calls(monkeypatch)
    for variant in ("numba", "c") if c_build.library() is not None else ("numba",):
        monkeypatch.setenv("TINYGRAD_LIKE_KERNELS", variant)
        calls.clear()
        got = value_and_grads(fn, arrays, u)
        assert calls.get("forward", 0) >= (1 if tiles == "automatic" else 0) and calls.get("backward", 0) >= 1
        assert calls.get("transpose", 0) >= 2                       # kᵀ·scale and vᵀ, in each chunk
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12, err_msg=variant)


def test_attention_float32_with_tile_kernels_within_rounding(monkeypatch):
    """The small GPT's attention shape cut down, float32, with the kept kernels: output and gradient within
    FLOAT32_ULPS·√T float32 epsilons of the float64 composition's scale (the largest |value| of the
    output, and of the gradient plus the upstream gradient), as the numpy body is."""
    x = rng.standard_normal((2, 70, 48)).astype(np.float32) * 2
    u = rng.standard_normal((2, 70, 16)).astype(np.float32)
    fn = lambda t: t.multihead_attention(2, is_causal=True)
    with composed():
        want = value_and_grads(fn, [x.astype(np.float64)], u.astype(np.float64))
    calls = count_tile_calls(monkeypatch)
    results = {}
    for choice in ("off", "on"):
        monkeypatch.setenv("TINYGRAD_LIKE_KERNELS", choice)
        results[choice] = value_and_grads(fn, [x], u)
    tiles = -(-70 // flash.ROWS_PER_TILE)                             # 2 tiles of at most 64 rows
    assert tiles > 1
    assert calls == ({"forward": tiles, "backward": tiles, "transpose": 2}  # a call a tile; kᵀ and vᵀ
                     if c_build.library() is not None else {"transpose": 2})
    scale = [np.abs(want[0]).max(), np.abs(want[1]).max() + np.abs(u).max()]
    for choice, got in results.items():
        for a, b, size in zip(got, want, scale):
            assert a.dtype == np.float32
            err = np.abs(a - b).max()
            assert err <= FLOAT32_ULPS * np.sqrt(70) * np.finfo(np.float32).eps * size, (choice, err)


def test_without_a_compiler_the_numpy_body_runs(monkeypatch):
    """numba's scalar exp loses to numpy's here (benchmarks/bench_kernels.py): where the C kernels are
    missing, the tiles run the numpy body unless TINYGRAD_LIKE_KERNELS=numba asks for numba."""
    calls = count_tile_calls(monkeypatch)
    monkeypatch.setattr(K, "c_library", lambda: None)
    monkeypatch.delenv("TINYGRAD_LIKE_KERNELS", raising=False)
    x = Tensor(rng.standard_normal((2, 20, 12)), requires_grad=True)
    x.multihead_attention(2, is_causal=True).sum().backward()
    assert calls == {"transpose": 2}                                # numba's transposing copy beats numpy's
    monkeypatch.setenv("TINYGRAD_LIKE_KERNELS", "numba")
    calls.clear()
    x.multihead_attention(2, is_causal=True).sum().backward()
    assert calls == {"forward": 1, "backward": 1, "transpose": 2}


def test_a_strided_tile_is_refused():
    s = np.zeros((4, 6))[:, ::2]
    with pytest.raises(ValueError, match="tile_softmax: the kernels write in place into C-contiguous tiles"):
        K.tile_softmax_forward(s, None, np.eye(3), np.empty((4, 3)), variant="numba")


def test_second_derivatives_with_the_kernels_equal_composed(monkeypatch):
    """create_graph=True: the recorded backward is Tensor ops (no tile kernel runs in it), and the gradient
    of that gradient equals the composed attention's, with the kernels making the forward."""
    x = rng.standard_normal((2, 40, 24))
    u = rng.standard_normal((2, 40, 12))
    fn = lambda t: t.multihead_attention(2, 1, is_causal=True)

    def second(inputs):
        y = fn(*inputs)
        grads = grad((y * Tensor(u)).sum(), inputs, create_graph=True)
        return [g.numpy() for g in grads], grad(sum((g * g).sum() for g in grads), inputs)[0].numpy()

    with composed():
        want = second([Tensor(x, requires_grad=True)])
    calls = count_tile_calls(monkeypatch)
    got = second([Tensor(x, requires_grad=True)])
    assert calls.get("forward", 0) >= 1 and "backward" not in calls
    np.testing.assert_allclose(got[0][0], want[0][0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-10, atol=1e-10)
