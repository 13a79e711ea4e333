"""Why attention divides by √d: measured for head sizes 16 to 512 with random unit-variance q and k.

What it teaches (chapter 18, "Why divide by √d?"): a dot product q·k of two random vectors of
length d is a sum of d products of variance 1, so its spread (std) grows like √d: about 4 at d = 16,
about 23 at d = 512. A softmax of such spread-out scores puts almost all weight on one key (max
weight → 1, entropy → 0), and there the softmax is flat: the gradient that reaches the scores is
nearly zero, so the attention cannot learn. Dividing by √d keeps the scores at std ≈ 1 for every d,
the softmax soft, and the gradient alive.

For each d: T queries against T keys in B independent batches, scores (B, T, T); the softmax
weights of each row; and the gradient of L = Σ g·softmax(scores) for a random upstream g (what a
loss downstream might send back), taken with respect to the scores the softmax sees: its norm per
row, median over rows.

Run:  python demos/why_sqrt_d.py [--out DIR] [--sizes 16 32 ...] [--batch 64] [--tokens 16]
Prints a table and writes why_sqrt_d.png.
"""
from __future__ import annotations

import math

import numpy as np

import _common
from tinygrad_like import Tensor, grad


def softmax_stats(scores: Tensor, upstream: Tensor) -> dict:
    """How peaked softmax(scores) is, and how big the gradient through it is. scores, upstream: (B, T, T)."""
    s = Tensor(scores.numpy(), requires_grad=True)      # a fresh leaf: we want d L / d scores
    weights = s.softmax(-1)                              # (B, T, T), rows sum to 1
    entropy = -(weights * s.log_softmax(-1)).sum(-1)     # (B, T), in nats; log_softmax never takes log(0)
    loss = (weights * upstream).sum()
    (g,) = grad(loss, [s])                               # (B, T, T)
    return {"max_weight": weights.max(axis=-1).mean().item(),  # 1/T for a uniform row, 1 for a one-hot row
            "entropy": entropy.mean().item(),
            # per row; the median is the typical row (the mean is carried by the few rows whose top two scores tie)
            "grad_norm": float(np.median((g * g).sum(-1).sqrt().numpy()))}


def measure(d: int, batch: int, tokens: int) -> dict:
    q = Tensor.randn(batch, tokens, d)                   # (B, T, d), unit variance
    k = Tensor.randn(batch, tokens, d)                   # (B, T, d)
    raw = q @ k.transpose(-2, -1)                        # (B, T, T): every query against every key
    scaled = raw / math.sqrt(d)                          # (B, T, T)
    upstream = Tensor.randn(batch, tokens, tokens)       # the same random dL/dweights for both
    row = {"d": d, "std_raw": raw.std().item(), "std_scaled": scaled.std().item()}
    for tag, scores in (("raw", raw), ("scaled", scaled)):
        row.update({f"{key}_{tag}": value for key, value in softmax_stats(scores, upstream).items()})
    return row


def plot(rows: list[dict], tokens: int, path):
    plt = _common.plt
    d = np.array([r["d"] for r in rows])
    col = lambda key: np.array([r[key] for r in rows])  # noqa: E731
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    ax = axes[0]
    ax.plot(d, col("std_raw"), "o-", label="q·k")
    ax.plot(d, col("std_scaled"), "s-", label="q·k / √d")
    ax.plot(d, np.sqrt(d), "k--", lw=1, label="√d")
    ax.set(title="spread of the scores: std", xlabel="head size d", yscale="log")
    ax = axes[1]
    ax.plot(d, col("max_weight_raw"), "o-", label="without √d")
    ax.plot(d, col("max_weight_scaled"), "s-", label="with √d")
    ax.axhline(1 / tokens, color="k", ls=":", lw=1, label=f"uniform (1/{tokens})")
    ax.set(title="softmax peakedness: mean max weight", xlabel="head size d", ylim=(0, 1.05))
    ax = axes[2]
    ax.plot(d, col("grad_norm_raw"), "o-", label="without √d")
    ax.plot(d, col("grad_norm_scaled"), "s-", label="with √d")
    ax.set(title="gradient at the scores: median row norm", xlabel="head size d", yscale="log")
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xticks(d, [str(v) for v in d])
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    fig.suptitle(f"Why attention divides by √d: {tokens} keys per query, random unit-variance q and k", y=1.02)
    return _common.save_figure(fig, path)


def main(argv=None) -> dict:
    p = _common.parser("why_sqrt_d", __doc__.splitlines()[0])
    p.add_argument("--sizes", type=_common.positive, nargs="+", default=[16, 32, 64, 128, 256, 512],
                   help="head sizes d")
    p.add_argument("--batch", type=_common.positive, default=64, help="independent batches B")
    p.add_argument("--tokens", type=_common.positive, default=16, help="tokens T (queries = keys)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    out = _common.out_dir(args.out)
    Tensor.manual_seed(args.seed)

    rows = [measure(d, args.batch, args.tokens) for d in args.sizes]
    print(f"{args.batch} x {args.tokens} queries, each against {args.tokens} keys; "
          f"a uniform softmax has max weight {1 / args.tokens:.3f} and entropy {math.log(args.tokens):.2f} nats\n")
    print(f"{'':>5} {'std of scores':^22} {'mean max weight':^18} {'entropy (nats)':^18} {'grad norm (median)':^20}")
    print(f"{'d':>5} {'q·k':>7} {'√d':>7} {'/√d':>7} {'raw':>8} {'/√d':>8}  "
          f"{'raw':>8} {'/√d':>8}  {'raw':>9} {'/√d':>9}")
    for r in rows:
        print(f"{r['d']:>5} {r['std_raw']:7.2f} {math.sqrt(r['d']):7.2f} {r['std_scaled']:7.3f} "
              f"{r['max_weight_raw']:8.3f} {r['max_weight_scaled']:8.3f}  "
              f"{r['entropy_raw']:8.3f} {r['entropy_scaled']:8.3f}  "
              f"{r['grad_norm_raw']:9.2e} {r['grad_norm_scaled']:9.2e}")
    big = rows[-1]
    print(f"\nAt d = {big['d']}: raw scores spread {big['std_raw']:.1f}, the softmax puts {big['max_weight_raw']:.0%} "
          f"on one key on average and a typical row's gradient is {big['grad_norm_raw'] / big['grad_norm_scaled']:.1e} "
          f"times the scaled one; divided by √d the spread stays {big['std_scaled']:.2f}.")
    print("\nPlot:")
    return {"rows": rows, "files": {"plot": plot(rows, args.tokens, out / "why_sqrt_d.png")}}


if __name__ == "__main__":
    main()
