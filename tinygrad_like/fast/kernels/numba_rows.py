"""The one-pass kernels in numba: each reads its inputs once and writes its outputs once, where the
numpy bodies of the fused ops (tinygrad_like/fast/fused.py) make a pass over memory per numpy call.

Every kernel works on rows lo..hi of 2-D C-contiguous arrays (rows, n), or on elements lo..hi of
1-D ones, and lets go of the GIL (nogil), so the engine's own pool shares the rows out
(`kernels.rows.share`): numba's threading layer is not used, and the pool stays the one owner of
the cores. Scalars come in the arrays' dtype (float32 math stays float32).

The formulas are the numpy bodies', step for step; the sums run in the arrays' dtype, in an order
the compiler may regroup ("reassoc", so that it can use vector registers; no other fast-math
assumption: infinities and NaN behave as in numpy). Compiled at first use and cached on disk
(cache=True): a second process loads them.
"""
from __future__ import annotations

import math

from numba import njit

kernel = njit(nogil=True, cache=True, fastmath={"reassoc"}, error_model="numpy")


# ---------------------------------------------------------------- LayerNorm and RMSNorm

@kernel
def layernorm_forward(x, w, b, eps, inv_n, xhat, rstd, y, lo, hi):
    """x̂ = (x − mean)·rstd, rstd = 1/√(var + eps), y = x̂·w + b; rows (r, n), w and b (n,), rstd (r, 1)."""
    n = x.shape[1]
    for r in range(lo, hi):
        s = x[r, 0] - x[r, 0]
        for j in range(n):
            s += x[r, j]
        mean = s * inv_n
        q = s - s
        for j in range(n):
            c = x[r, j] - mean
            xhat[r, j] = c
            q += c * c
        rs = 1 / math.sqrt(q * inv_n + eps)
        rstd[r, 0] = rs
        for j in range(n):
            h = xhat[r, j] * rs
            xhat[r, j] = h
            y[r, j] = h * w[j] + b[j]


@kernel
def layernorm_backward(g, xhat, rstd, w, inv_n, dx, dw, db, lo, hi):
    """dx = (ĝ − mean(ĝ) − x̂·mean(ĝ⊙x̂))·rstd, ĝ = g·w; dw += Σ_rows g⊙x̂ and db += Σ_rows g over
    rows lo..hi (dw, db (n,): one pair per thread, summed by the caller)."""
    n = g.shape[1]
    for r in range(lo, hi):
        s = g[r, 0] - g[r, 0]
        sx = s
        for j in range(n):
            gw = g[r, j] * w[j]
            s += gw
            sx += gw * xhat[r, j]
            dw[j] += g[r, j] * xhat[r, j]
            db[j] += g[r, j]
        mean_gw, mean_gx = s * inv_n, sx * inv_n
        rs = rstd[r, 0]
        for j in range(n):
            dx[r, j] = (g[r, j] * w[j] - mean_gw - xhat[r, j] * mean_gx) * rs


@kernel
def rmsnorm_forward(x, w, eps, inv_n, rstd, y, lo, hi):
    """y = x·rstd·w, rstd = 1/√(mean(x²) + eps); rows (r, n), w (n,), rstd (r, 1)."""
    n = x.shape[1]
    for r in range(lo, hi):
        q = x[r, 0] - x[r, 0]
        for j in range(n):
            q += x[r, j] * x[r, j]
        rs = 1 / math.sqrt(q * inv_n + eps)
        rstd[r, 0] = rs
        for j in range(n):
            y[r, j] = x[r, j] * rs * w[j]


@kernel
def rmsnorm_backward(g, x, rstd, w, inv_n, dx, dw, lo, hi):
    """dx = (ĝ − x̂·mean(ĝ⊙x̂))·rstd, x̂ = x·rstd, ĝ = g·w; dw += Σ_rows g⊙x̂ over rows lo..hi."""
    n = g.shape[1]
    for r in range(lo, hi):
        rs = rstd[r, 0]
        sx = g[r, 0] - g[r, 0]
        for j in range(n):
            h = x[r, j] * rs
            sx += g[r, j] * w[j] * h
            dw[j] += g[r, j] * h
        mean_gx = sx * inv_n
        for j in range(n):
            dx[r, j] = (g[r, j] * w[j] - x[r, j] * rs * mean_gx) * rs


# ---------------------------------------------------------------- softmax, log-softmax, cross-entropy

@kernel
def row_max(x, r):
    """max of row r (a NaN is passed over here, and reaches the row through exp(NaN − max))."""
    m = x[r, 0]
    for j in range(x.shape[1]):
        m = max(m, x[r, j])
    return m


@kernel
def softmax_forward(x, y, lo, hi):
    """y = exp(x − max) / Σ exp(x − max) along each row."""
    n = x.shape[1]
    for r in range(lo, hi):
        m = row_max(x, r)
        s = m - m
        for j in range(n):
            e = math.exp(x[r, j] - m)
            y[r, j] = e
            s += e
        for j in range(n):
            y[r, j] /= s


@kernel
def softmax_backward(g, y, dx, lo, hi):
    """dx = y ⊙ (g − Σ g⊙y) along each row."""
    n = g.shape[1]
    for r in range(lo, hi):
        s = g[r, 0] - g[r, 0]
        for j in range(n):
            s += g[r, j] * y[r, j]
        for j in range(n):
            dx[r, j] = (g[r, j] - s) * y[r, j]


@kernel
def log_softmax_forward(x, y, lo, hi):
    """y = (x − max) − log Σ exp(x − max) along each row."""
    n = x.shape[1]
    for r in range(lo, hi):
        m = row_max(x, r)
        s = m - m
        for j in range(n):
            s += math.exp(x[r, j] - m)
        ls = math.log(s)
        for j in range(n):
            y[r, j] = (x[r, j] - m) - ls


@kernel
def log_softmax_backward(g, y, dx, lo, hi):
    """dx = g − exp(y)·Σ g along each row."""
    n = g.shape[1]
    for r in range(lo, hi):
        s = g[r, 0] - g[r, 0]
        for j in range(n):
            s += g[r, j]
        for j in range(n):
            dx[r, j] = g[r, j] - math.exp(y[r, j]) * s


@kernel
def cross_entropy_forward(x, targets, smoothing, inv_n, probs, losses, lo, hi):
    """probs = softmax(x) per row, losses = (1 − ε)(lse − x[t]) + ε(lse − mean x), lse = log Σ exp(x)."""
    n = x.shape[1]
    for r in range(lo, hi):
        m = row_max(x, r)
        s = m - m
        sx = s
        for j in range(n):
            c = x[r, j] - m
            sx += c
            e = math.exp(c)
            probs[r, j] = e
            s += e
        for j in range(n):
            probs[r, j] /= s
        ls = math.log(s)
        loss = ls - (x[r, targets[r]] - m)
        if smoothing != 0:
            loss = (1 - smoothing) * loss + smoothing * (ls - sx * inv_n)
        losses[r] = loss


@kernel
def cross_entropy_backward(probs, targets, smoothing, inv_n, scale, dx, lo, hi):
    """dx = (probs − (1 − ε)·onehot(t) − ε/n) · scale per row (scale (r,))."""
    n = probs.shape[1]
    spread = smoothing * inv_n
    for r in range(lo, hi):
        s = scale[r]
        for j in range(n):
            dx[r, j] = (probs[r, j] - spread) * s
        t = targets[r]
        dx[r, t] = (probs[r, t] - ((1 - smoothing) + spread)) * s


# ---------------------------------------------------------------- GELU, SiLU, SwiGLU (elementwise, 1-D)

@kernel
def gelu_forward(x, c, c3, half, y, lo, hi):
    """y = ½x(1 + tanh u), u = x(c + c3·x²), c = √(2/π), c3 = 0.044715c."""
    for i in range(lo, hi):
        v = x[i]
        y[i] = half * v * (1 + math.tanh(v * (c + c3 * v * v)))


@kernel
def gelu_backward(g, x, c, c3, half, dx, lo, hi):
    """dx = g·((1 + t)(½ + ½x(1 − t)(c + 3c3·x²))), t = tanh u."""
    for i in range(lo, hi):
        v = x[i]
        v2 = v * v
        t = math.tanh(v * (c + c3 * v2))
        dx[i] = g[i] * ((1 + t) * (half + half * v * (1 - t) * (c + 3 * c3 * v2)))


@kernel
def gelu_erf_forward(x, r, half, y, lo, hi):
    """y = ½x(1 + erf(x·r)), r = 1/√2: the exact GELU."""
    for i in range(lo, hi):
        v = x[i]
        y[i] = half * v * (1 + math.erf(v * r))


@kernel
def gelu_erf_backward(g, x, r, half, c, dx, lo, hi):
    """dx = g·(½(1 + erf(x·r)) + x·c·e^(−x²/2)), r = 1/√2, c = 1/√(2π)."""
    for i in range(lo, hi):
        v = x[i]
        dx[i] = g[i] * (half * (1 + math.erf(v * r)) + v * c * math.exp(-half * v * v))


@kernel
def silu_forward(x, y, lo, hi):
    """y = x·σ(x)."""
    for i in range(lo, hi):
        v = x[i]
        y[i] = v / (1 + math.exp(-v))


@kernel
def silu_backward(g, x, dx, lo, hi):
    """dx = g·σ(x)(1 + x(1 − σ(x)))."""
    for i in range(lo, hi):
        v = x[i]
        s = 1 / (1 + math.exp(-v))
        dx[i] = g[i] * s * (1 + v * (1 - s))


@kernel
def swiglu_forward(x, y, lo, hi):
    """y = silu(a)·b for rows of x = [a | b] (r, 2n), y (r, n)."""
    n = y.shape[1]
    for r in range(lo, hi):
        for j in range(n):
            v = x[r, j]
            y[r, j] = v / (1 + math.exp(-v)) * x[r, n + j]


@kernel
def swiglu_backward(g, x, dx, lo, hi):
    """dx = [da | db]: da = g·b·σ(a)(1 + a(1 − σ(a))), db = g·silu(a); g (r, n), x and dx (r, 2n)."""
    n = g.shape[1]
    for r in range(lo, hi):
        for j in range(n):
            v = x[r, j]
            s = 1 / (1 + math.exp(-v))
            dx[r, j] = g[r, j] * x[r, n + j] * s * (1 + v * (1 - s))
            dx[r, n + j] = g[r, j] * v * s


# ---------------------------------------------------------------- the attention tile's softmax (attention.c)

@kernel
def tile_softmax_forward(s, mask, period, lowest, lse, lo, hi):
    """s ← softmax(s + mask) along each row, row r with mask row r % period (no mask when it has no rows);
    lse[r] = m + log Σ exp(s + mask − m), m = max(row max, lowest); +inf and weights 0 for a row whose
    keys are all masked."""
    n = s.shape[1]
    for r in range(lo, hi):
        m = lowest                                              # max(row max, lowest), in the arrays' dtype
        if mask.shape[0]:
            mr = r % period
            for j in range(n):
                x = s[r, j] + mask[mr, j]
                s[r, j] = x
                m = max(m, x)
        else:
            for j in range(n):
                m = max(m, s[r, j])
        total = m - m
        for j in range(n):
            e = math.exp(s[r, j] - m)
            s[r, j] = e
            total += e
        if total == 0:
            lse[r, 0] = math.inf
            continue
        for j in range(n):
            s[r, j] /= total
        lse[r, 0] = m + math.log(total)


@kernel
def tile_softmax_backward(s, mask, period, lse, dp, D, lo, hi):
    """s ← p = exp(s + mask − lse), dp ← ds = p ⊙ (dp − D), row r with mask row r % period, lse[r], D[r]."""
    n = s.shape[1]
    for r in range(lo, hi):
        lr, d = lse[r], D[r]
        if mask.shape[0]:
            mr = r % period
            for j in range(n):
                p = math.exp(s[r, j] + mask[mr, j] - lr)
                s[r, j] = p
                dp[r, j] = p * (dp[r, j] - d)
        else:
            for j in range(n):
                p = math.exp(s[r, j] - lr)
                s[r, j] = p
                dp[r, j] = p * (dp[r, j] - d)


@kernel
def transpose_copy(src, layout, scale, dst, lo, hi):
    """dst (blocks, d, n) = srcᵀ·scale for src (n0, n1, n, d), block b = (b / n1, b % n1), blocks lo..hi
    (layout: for attention.c's version)."""
    n1 = src.shape[1]
    for b in range(lo, hi):
        for t in range(src.shape[2]):
            for j in range(src.shape[3]):
                dst[b, j, t] = src[b // n1, b % n1, t, j] * scale


# ---------------------------------------------------------------- AdamW

@kernel
def adam_update(p, g, m, v, beta1, beta2, one_minus_beta1, one_minus_beta2, step_size, v_scale, eps, decay,
                grad_decay, lo, hi):
    """One Adam(W) step in place on elements lo..hi: p ← p·decay (AdamW's 1 − lr·wd; 1 for Adam),
    g' = g + grad_decay·p (Adam's wd; 0 for AdamW), m ← β₁m + (1−β₁)g', v ← β₂v + (1−β₂)g'²,
    p ← p − step_size·m/(√v·v_scale + eps)."""
    for i in range(lo, hi):
        w = p[i] * decay
        gi = g[i] + grad_decay * w if grad_decay != 0 else g[i]
        mi = m[i] * beta1 + gi * one_minus_beta1
        vi = v[i] * beta2 + gi * gi * one_minus_beta2
        m[i] = mi
        v[i] = vi
        p[i] = w - mi / (math.sqrt(vi) * v_scale + eps) * step_size
