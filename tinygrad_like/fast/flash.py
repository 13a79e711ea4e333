"""Attention that stays in the CPU cache: softmax(q kᵀ·scale + mask) v, tile by tile (the flash-attention
idea, in numpy), for the fused ops `Attention` and `MultiHeadAttention` (fast/fused.py).

Built whole, the scores (..., Tq, Tk) of every head are 4 MB at B=16, nh=4, T=128 in float32, and the
forward and backward walk them about eight times: through main memory, each time. Here the work goes
in tiles: a few batch entries × a few query rows × a span of keys, sized so that one tile of scores
takes half of the L2 cache (`l2_bytes`). A tile's scores are made, used and dropped while they are
still in cache, or nearly: backward holds two tile-sized arrays, p and ds, and so fills L2, but halving
the tiles doubles the numpy calls, which cost more than that (benchmarks/bench_ops.py).

Forward, per query tile, over its key spans, keeping a running row max m, sum l (`row_sum`) and output acc
(the online softmax; one span, the usual case up to T of several hundred, needs no rescaling):
    s = q (kᵀ·scale) + mask,  m' = max(m, rowmax s),  p = exp(s − m'),  c = exp(m − m')
    l = c·l + Σ p,  acc = c·acc + p v;  at the end out = acc / l, and lse = m + log l is saved.
Backward rebuilds each tile's weights from q, kᵀ·scale (the contiguous copy forward made, kept: one
array of k's size) and lse instead of saving them (no (Tq, Tk) array kept between forward and backward).
With g' = g·scale and D' = Σ g'⊙out per row:
    p = exp(s − lse),  dv += pᵀ g,  ds' = p ⊙ (g' vᵀ − D') (= ds·scale),  dq += ds' k,  dk += ds'ᵀ q
Key tiles where the mask is −inf everywhere (above a causal diagonal) are never computed. A query row
whose keys are all masked gets 0 and zero gradients, as in PyTorch (lse = +inf makes its p zero).

Dropout on the weights comes in as `noise` (..., Tq, Tk), drawn whole beforehand exactly as the composite
draws it (0 or 1/(1 − p), random.dropout_noise), and multiplies each tile's weights between the softmax
and the product with v: out = (p ⊙ noise) v / l. Backward then reads, with the same p:
    dv += (p ⊙ noise)ᵀ g,  ds' = p ⊙ (g' vᵀ ⊙ noise − D')
and D' = Σ g'⊙out per row is still right: Σ_j (g vᵀ ⊙ noise)_ij p_ij = Σ_c g_ic out_ic.

When a query tile sees its keys in one span (the usual case), the steps between the products are the
tile's softmax, forward (`tile_softmax_forward`: the weights, and their product with v) and backward
(`tile_softmax_backward`: p and ds'), numpy bodies for which the `fast` extra has a one-pass kernel
(kernels/attention.c), handed over by `kernels.compiled`.

Chunks of batch entries are independent, so they run on the thread pool (pool.py). When all of them
are one chunk (scores that fit in one tile: nanoGPT's and minGPT's), the chunk runs on the calling thread
and shares out its products (pool.stacked) and kernels among the C threads (spin_pool.py), each a
hand-over of microseconds; chunks on the Python pool's threads run their products and kernels on
their own thread (pool.sharing). Either way the bits are those of one thread.
"""
from __future__ import annotations

import functools
import glob
import math

import numpy as np

from tinygrad_like.fast import pool
from tinygrad_like.fast.arrays import array_max, array_sum, constant
from tinygrad_like.fast.kernels import compiled

TILE_BYTES: int | None = None  # bytes of one tile of scores; None: half of L2 (tests set it small)
QUERY_TILE: int | None = None  # query rows per tile; None: ROWS_PER_TILE (tests set it small)
ROWS_PER_TILE = 64


@functools.lru_cache(maxsize=1)
def l2_bytes() -> int:
    """The L2 (data or unified) cache of cpu0 in bytes, read from sysfs; 256 KiB where sysfs does not say."""
    for index in sorted(glob.glob("/sys/devices/system/cpu/cpu0/cache/index*")):
        try:
            with open(f"{index}/level") as f, open(f"{index}/type") as t, open(f"{index}/size") as s:
                level, kind, size = f.read().strip(), t.read().strip(), s.read().strip()
        except OSError:
            continue
        if level == "2" and kind in ("Data", "Unified"):
            units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
            return int(size[:-1]) * units[size[-1]] if size[-1] in units else int(size)
    return 256 << 10


def plan(batch: tuple, Tq: int, Tk: int, itemsize: int):
    """(batch entries per chunk, query rows per tile, widest key span) for scores of shape (*batch, Tq, Tk).

    Each tile holds at most TILE_BYTES of scores: chunk × heads × rows × keys × itemsize (unless the heads of
    one batch entry alone need more), with at least one chunk per thread of the pool. Query tiles have
    ROWS_PER_TILE rows: the smaller the tile, the more of a causal triangle is skipped, but the more
    numpy calls and small products a head takes: 64 rows measured faster than 32 for heads 32 wide (T of
    128 and 512) and the same for heads 64 wide. Key spans are as wide as the rest of the budget allows,
    all keys when they fit."""
    budget = TILE_BYTES or l2_bytes() // 2
    per_pair = max(1, math.prod(batch[1:]) * itemsize)                             # bytes of one score, all heads
    tq = max(1, min(QUERY_TILE or ROWS_PER_TILE, Tq))
    span = max(tq, budget // (per_pair * tq))
    chunk = max(1, budget // (per_pair * tq * max(1, min(Tk, span))))
    threads = pool.threads_for(math.prod(batch) * Tq * Tk * itemsize)               # 1 when the scores are small
    return min(chunk, -(-batch[0] // threads)), tq, span                              # a chunk for every thread


def key_spans(mask: np.ndarray | None, Tq: int, Tk: int, tq: int, span: int):
    """For each query tile (start, stop): the key spans it must see, [(start, stop, masked)], masked
    being False where the mask is 0 throughout the span (then it is not added).

    Keys go in units of tq keys (at least ROWS_PER_TILE, a few units for one query row when decoding with a KV
    cache); a unit whose mask is −inf for every row (and batch entry) is left out, and runs of live units
    are joined into spans at most `span` wide. A span with a masked unit (for causal attention: the
    diagonal one) gets the mask added over all its keys: one pass over whole rows costs less than one
    over a part of each row (measured)."""
    unit = min(span, QUERY_TILE or max(tq, ROWS_PER_TILE))
    starts, rows = np.arange(0, Tk, unit), np.arange(0, Tq, tq)
    dead = [[False] * len(starts)] * len(rows)
    unmasked = [[True] * len(starts)] * len(rows)   # the mask is 0 throughout the unit
    if mask is not None and Tk and Tq:
        axes = tuple(range(mask.ndim - 2))                                        # over batch entries too
        per_tile = lambda keep: np.logical_and.reduceat(np.logical_and.reduceat(keep, starts, 1), rows, 0).tolist()
        dead, unmasked = per_tile((mask == -np.inf).all(axes)), per_tile((mask == 0).all(axes))
    tiles = []
    for i, a in enumerate(rows.tolist()):
        spans = []
        for c, gone, zero in zip(starts.tolist(), dead[i], unmasked[i]):
            if gone:
                continue
            d = min(c + unit, Tk)
            if spans and spans[-1][1] == c and d - spans[-1][0] <= span:
                spans[-1] = (spans[-1][0], d, spans[-1][2] or not zero)
            else:
                spans.append((c, d, not zero))
        tiles.append(((a, min(a + tq, Tq)), spans))
    return tiles


def tiling(mask: np.ndarray | None, batch: tuple, Tq: int, Tk: int, itemsize: int):
    """(batch entries per chunk, tiles) for attention with this mask: `plan` and `key_spans`, or one
    tile of everything when all the scores fit in one tile's budget (decoding with a KV cache: one
    query row), which saves their cost on every call."""
    if QUERY_TILE is None and math.prod(batch) * Tq * Tk * itemsize <= (TILE_BYTES or l2_bytes() // 2):
        return batch[0], [((0, Tq), [(0, Tk, mask is not None)] if Tk else [])]
    chunk, tq, span = plan(batch, Tq, Tk, itemsize)
    return chunk, key_spans(mask, Tq, Tk, tq, span)


@functools.lru_cache(maxsize=32)
def causal_spans(T: int, tq: int, span: int, dtype: np.dtype):
    return key_spans(constant("causal", T, dtype), T, T, tq, span)


def _take(a, start: int, stop: int):
    """Rows start:stop of the leading (batch) axis, or the array itself where that axis is broadcast (size 1)."""
    return a if a is None or a.shape[0] == 1 else a[start:stop]


def _sum_to(a: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum a over the axes where `shape` has 1 and a does not (GQA's query heads per KV head)."""
    axes = tuple(i for i, (n, m) in enumerate(zip(shape, a.shape)) if n == 1 and m != 1)
    return a.sum(axes, keepdims=True) if axes else a


def scaled_keys(q, k, scale, batch: int):
    """Room for k'ᵀ = kᵀ·scale (batch, ..., d, Tk), which forward fills chunk by chunk and backward reads
    again; None when q has fewer than 16 rows. BLAS multiplies by a contiguous kᵀ faster than by a
    transposed view, and the scale costs nothing in the copy; for a few query rows (decoding with a KV
    cache) the copy would cost more than it saves: then the scale goes into q and kᵀ stays a view."""
    if q.shape[-2] < 16:
        return None
    return np.empty((batch,) + k.shape[1:-2] + k.shape[:-3:-1], np.result_type(k, scale))


def _scaled(q, k, scale, kT, fill: bool):
    """(q', k'ᵀ) with q' k'ᵀ = q kᵀ·scale: q and kT (filled with kᵀ·scale when `fill`), or, where kT is
    None, q·scale and the view kᵀ (see scaled_keys)."""
    if kT is None:
        return q * scale, np.swapaxes(k, -1, -2)
    if fill:
        compiled(transpose_copy, kT)(k, scale, kT)
    return q, kT


def _transposed(a, rows: int):
    """(..., T, d) -> (..., d, T), contiguous when `rows` query rows will be multiplied by it (see scaled_keys)."""
    if rows < 16:
        return np.swapaxes(a, -1, -2)
    out = np.empty(a.shape[:-2] + a.shape[:-3:-1], a.dtype)
    return compiled(transpose_copy, out)(a, None, out)


def transpose_copy(a: np.ndarray, scale, out: np.ndarray) -> np.ndarray:
    """out = aᵀ·scale (aᵀ when scale is None) for a (..., n, d), out (..., d, n): kᵀ·scale and vᵀ, from the
    packed projection's layout; returns out. The numpy body of a kernel of the `fast` extra
    (kernels/attention.c), as a head's rows are short for numpy's transposing copy."""
    if scale is None:
        np.copyto(out, np.swapaxes(a, -1, -2))
        return out
    return np.multiply(np.swapaxes(a, -1, -2), scale, out=out)


def _scores(q, kT, mask, rows, keys, masked: bool):
    """One tile of scores: q' k'ᵀ over the key span, plus the mask there unless it is 0 throughout.
    q has every batch axis of the mask, so the mask adds in place."""
    (a, b), (c, d) = rows, keys
    s = pool.stacked(q[..., a:b, :], kT[..., c:d])
    if masked:
        s += mask[..., a:b, c:d]
    return s


def forward(q, k, v, mask, scale, tiles, out, lse, chunk: int, noise=None):
    """Write softmax(q kᵀ·scale + mask) v into out and the rows' log-sum-exp into lse, chunk by chunk;
    return k'ᵀ = kᵀ·scale as the chunks made it (`scaled_keys`), for backward.

    q (N, ..., Tq, d), k (N or 1, ..., Tk, d), v (N or 1, ..., Tk, dv), mask (.., Tq, Tk) additive or None,
    noise (N or 1, ..., Tq, Tk) dropout's factors or None, all with the same number of axes; out (N, ..., Tq, dv)
    and lse (N, ..., Tq, 1) may be strided views."""
    kT = scaled_keys(q, k, scale, out.shape[0])
    pool.run(lambda i: _forward_chunk(_take(q, i, i + chunk), _take(k, i, i + chunk), _take(v, i, i + chunk),
                                      _take(mask, i, i + chunk), scale, tiles, out[i:i + chunk], lse[i:i + chunk],
                                      _take(kT, i, i + chunk), _take(noise, i, i + chunk)),
             range(0, out.shape[0], chunk))
    return kT


def _forward_chunk(q, k, v, mask, scale, tiles, out, lse, kT, noise=None):
    q = np.broadcast_to(q, out.shape[:-2] + q.shape[-2:])                        # every batch axis
    q, kT = _scaled(q, k, scale, kT, fill=True)
    v = np.ascontiguousarray(v) if q.shape[-2] >= 16 else v
    for (a, b), spans in tiles:
        if len(spans) == 1:                                                       # the usual case: one span
            start, stop, masked = spans[0]
            s = pool.stacked(q[..., a:b, :], kT[..., start:stop])
            lse[..., a:b, :] = compiled(tile_softmax_forward, s)(
                s, mask[..., a:b, start:stop] if masked else None, v[..., start:stop, :], out[..., a:b, :],
                None if noise is None else noise[..., a:b, start:stop])
        elif spans:
            _online_tile(q, kT, v, mask, (a, b), spans, out, lse, noise)
        else:                                                                     # every key masked
            out[..., a:b, :], lse[..., a:b, :] = 0, np.inf


def tile_softmax_forward(s: np.ndarray, mask: np.ndarray | None, v: np.ndarray, out: np.ndarray,
                         noise: np.ndarray | None = None) -> np.ndarray:
    """One span of keys whole: the weights softmax(s + mask) of the scores s (..., rows, n) = q kᵀ·scale
    along the last axis, times dropout's noise (..., rows, n) when given, times v (..., n, dv), written into
    out (..., rows, dv); returns the rows' log-sum-exp (..., rows, 1) (of the weights before dropout): +inf
    for a row whose keys are all masked, whose output is 0. s is overwritten. The numpy body of the `fast`
    extra's kernel (kernels/attention.c)."""
    if mask is not None:
        s += mask
    shift = np.maximum(array_max(s, -1), np.finfo(s.dtype).min)  # a row masked whole: exp(−inf − lowest) = 0
    s -= shift
    np.exp(s, out=s)
    row_sum = array_sum(s, -1)
    if noise is not None:
        s *= noise
    pv = np.matmul(s, v)
    if not row_sum.all():
        row_sum[row_sum == 0] = np.inf                           # every key masked: out 0, lse +inf
    np.divide(pv, row_sum, out=out)
    np.log(row_sum, out=row_sum)
    return np.add(shift, row_sum, out=row_sum)


def _online_tile(q, kT, v, mask, rows, spans, out, lse, noise=None):
    """A query tile whose keys come in several spans: the online softmax, a running row max m, sum
    (`row_sum`) and output acc rescaled as each span comes (numpy only: spans are one per tile up to T
    of a few thousand); dropout's noise, when given, multiplies p after its sum is taken."""
    a, b = rows
    lowest = np.finfo(out.dtype).min
    m = row_sum = acc = None
    for start, stop, masked in spans:
        s = _scores(q, kT, mask, (a, b), (start, stop), masked)
        m_new = array_max(s, -1) if m is None else np.maximum(m, array_max(s, -1))
        shift = np.maximum(m_new, lowest)                        # a row masked so far: exp(−inf − lowest) = 0
        s -= shift
        np.exp(s, out=s)                                                         # p
        span_sum = array_sum(s, -1)
        if noise is not None:
            s *= noise[..., a:b, start:stop]
        pv = pool.stacked(s, v[..., start:stop, :])
        if m is None:
            row_sum, acc = span_sum, pv
        else:
            correction = np.exp(m - shift)                                       # rescale what came before
            row_sum = row_sum * correction + span_sum
            acc = acc * correction + pv
        m = m_new
    if not row_sum.all():
        row_sum[row_sum == 0] = np.inf                                  # every key masked: out 0, lse +inf
    np.divide(acc, row_sum, out=out[..., a:b, :])
    np.log(row_sum, out=row_sum)
    np.add(shift, row_sum, out=lse[..., a:b, :])


def backward(g, q, k, v, out, lse, mask, scale, tiles, dq, dk, dv, chunk: int, kT, noise=None):
    """Write the gradients of Σ g⊙out for q, k and v into dq, dk, dv (same number of axes as q, k, v
    after broadcasting over the chunk, may be strided views), rebuilding each tile's weights from lse
    and the k'ᵀ that forward returned; noise: the dropout factors forward used, or None."""
    pool.run(lambda i: _backward_chunk(
        g[i:i + chunk], _take(q, i, i + chunk), _take(k, i, i + chunk), _take(v, i, i + chunk), out[i:i + chunk],
        lse[i:i + chunk], _take(mask, i, i + chunk), scale, tiles, dq[i:i + chunk], dk[i:i + chunk],
        dv[i:i + chunk], _take(kT, i, i + chunk), _take(noise, i, i + chunk)), range(0, g.shape[0], chunk))


def _backward_chunk(g, q, k, v, out, lse, mask, scale, tiles, dq, dk, dv, kT, noise=None):
    q = np.broadcast_to(q, g.shape[:-2] + q.shape[-2:])                          # every batch axis
    qs, kT = _scaled(q, k, scale, kT, fill=False)
    vT = _transposed(v, q.shape[-2])
    g_s = g * scale                                                               # g', contiguous
    D = np.vecdot(g_s, out)[..., None]                                            # D' = Σ g'⊙out per row
    # one tile of all the keys (the usual case up to T of a few hundred): dk and dv are made at once, in place;
    # else summed over the query tiles
    whole = len(tiles) == 1 and len(tiles[0][1]) == 1 and tiles[0][1][0][:2] == (0, k.shape[-2])
    dk_sum, dv_sum = (dk, dv) if whole else (np.zeros(dk.shape, dk.dtype), np.zeros(dv.shape, dv.dtype))
    for (a, b), spans in tiles:
        gt, g_st, qt = g[..., a:b, :], g_s[..., a:b, :], q[..., a:b, :]
        if not spans:
            dq[..., a:b, :] = 0
        for start, stop, masked in spans:
            p = pool.stacked(qs[..., a:b, :], kT[..., start:stop])                # the scores, again
            ds = pool.stacked(g_st, vT[..., start:stop])                          # g' vᵀ
            if noise is not None:
                ds *= noise[..., a:b, start:stop]                                 # the gradient of p
            compiled(tile_softmax_backward, p)(p, mask[..., a:b, start:stop] if masked else None,
                                               lse[..., a:b, :], ds, D[..., a:b, :])   # p; ds' = ds·scale
            if noise is not None:
                p *= noise[..., a:b, start:stop]                                  # the weights v saw
            _add_product(dv_sum[..., start:stop, :], np.swapaxes(p, -1, -2), gt, whole)       # dv += pᵀ g
            _add_product(dk_sum[..., start:stop, :], np.swapaxes(ds, -1, -2), qt, whole)      # dk += ds'ᵀ q
            if start == spans[0][0]:
                pool.stacked(ds, k[..., start:stop, :], out=dq[..., a:b, :])
            else:
                dq[..., a:b, :] += pool.stacked(ds, k[..., start:stop, :])
    if not whole:
        dk[...], dv[...] = dk_sum, dv_sum


def _add_product(total: np.ndarray, a: np.ndarray, b: np.ndarray, first: bool) -> None:
    """total += a @ b, summed over the axes where total has 1 (`_sum_to`); total = a @ b when `first`,
    written straight into total where no axis needs summing."""
    if first and np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) == total.shape[:-2]:
        pool.stacked(a, b, out=total)
    elif first:
        total[...] = _sum_to(pool.stacked(a, b), total.shape)
    else:
        total += _sum_to(pool.stacked(a, b), total.shape)


def tile_softmax_backward(s, mask, lse, dp, D) -> None:
    """In place, for one span of scores s (..., rows, n) = q kᵀ·scale: s becomes the weights rebuilt,
    p = exp(s + mask − lse), and dp (= g vᵀ) becomes ds = p ⊙ (dp − D), lse and D (..., rows, 1).
    The numpy body of the `fast` extra's kernel (kernels/attention.c)."""
    if mask is not None:
        s += mask
    s -= lse
    np.exp(s, out=s)
    dp -= D
    dp *= s
