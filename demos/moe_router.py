"""Mixture of experts: why the router needs a load-balancing loss.

What it teaches: a mixture-of-experts layer (nn/moe.py) sends each token to the top_k of n_expert
expert MLPs chosen by a learned router. Nothing in the language-model loss asks the router to share
the work, and a rich-get-richer loop sets in: an expert that gets more tokens gets more gradient, gets
better, so the router sends it even more tokens. Left alone, the router collapses onto a few experts
and the others sit idle (parameters paid for, never used). The Switch Transformer / Mixtral fix is an
extra loss, aux = n_expert · Σ_i f_i · P_i (f_i: fraction of tokens sent to expert i, P_i: mean router
probability of expert i), which is smallest when the load is even.

The demo trains the same small MoE GPT twice, from the same initial weights on the same batches:
once with aux_loss_coef = 0 (no balancing) and once with aux_loss_coef = --coef (default 0.05). The
data is character-level text: the Python reference documentation that ships with CPython
(pydoc_data.topics), so nothing is downloaded. After every step it records each expert's share of
the routing assignments (expert_counts / their sum; with top_k = 2 every token makes two
assignments, so one expert can hold at most half, and a router collapsed onto two experts gives
them 0.5 each). At the end it reports, per block, the largest share, the share of the two busiest
experts, the entropy of the shares (log2(8) = 3 bits when all 8 are used evenly) and the idle
experts (share < 1%), averaged over the last 10 steps.

The setup is plain: default GPT-2 initialisation (the router starts near uniform, and at step 0 the
tokens spread over all experts), AdamW at a constant 3e-3, no tricks to provoke the collapse. Without
the balancing loss the router piles onto two experts per block within the first few steps (Adam's
first updates move every router weight by about lr, a large push next to their 0.02 scale, felt by
all tokens alike), then recovers only partly: at the end a few experts still carry most tokens and
some sit idle. In our runs this also happens with lr 1e-3 or a 50-step warmup, more or less deeply
depending on the block (entropy 1.9 to 2.7 bits at step 200); with the balancing loss every block
stays near 3 bits.

Run:  python demos/moe_router.py [--out DIR]      (default out/moe_router/)
Writes expert_share.png (per-expert token share over training, both runs side by side, one row per block).
"""
from __future__ import annotations

import os

# Tiny matrices: one BLAS thread is faster than a pool of them (whose hand-offs dominate at this size,
# and turn ruinous on a busy machine). Set before numpy loads; override from the shell if you like.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import time

import numpy as np

import _common
from _common import plt
from models.gpt import GPT, GPTConfig
from models.tokenizer import CharTokenizer
from nn.optim import AdamW, clip_grad_norm
from tinygrad_like import Tensor


def load_text(n_chars: int) -> str:
    """The first n_chars of CPython's bundled reference docs (topics in sorted order)."""
    from pydoc_data.topics import topics
    return "".join(topics[k] for k in sorted(topics))[:n_chars]


def batches(data: np.ndarray, steps: int, batch_size: int, block_size: int, seed: int):
    """The list of (x, y) batches both runs train on: random windows of the text, y = x shifted by one."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(steps):
        start = rng.integers(0, len(data) - block_size - 1, size=batch_size)
        x = np.stack([data[s:s + block_size] for s in start])          # (B, T)
        y = np.stack([data[s + 1:s + block_size + 1] for s in start])  # (B, T)
        out.append((x, y))
    return out


def expert_shares(model: GPT) -> np.ndarray:
    """(n_layer, n_expert): each block's routing assignments in the last forward, as fractions summing to 1."""
    counts = np.stack([block.mlp.expert_counts for block in model.transformer.h]).astype(np.float64)
    return counts / counts.sum(axis=1, keepdims=True)


def collapse_stats(shares: np.ndarray) -> dict:
    """shares (..., n_expert) rows summing to 1 -> per row: max share, the two busiest experts' share,
    entropy in bits (log2(n_expert) when even, 1 bit for two experts at 0.5 each) and idle experts (< 1%)."""
    p = np.asarray(shares, dtype=np.float64)
    safe = np.where(p > 0, p, 1.0)                                       # 0 · log 0 = 0
    return dict(max_share=p.max(-1),
                top2_share=np.sort(p, axis=-1)[..., -2:].sum(-1),
                entropy_bits=-(p * np.log2(safe)).sum(-1),
                idle_experts=(p < 0.01).sum(-1))


def train(config: GPTConfig, coef: float, data_batches, lr: float, seed: int) -> dict:
    """Train one model with the given aux_loss_coef; record shares (steps, n_layer, n_expert) and losses."""
    Tensor.manual_seed(seed)                                  # same seed: both runs start from the same weights
    model = GPT(config)
    model.aux_loss_coef = coef
    opt = AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    shares, lm_losses, aux_losses = [], [], []
    for x, y in data_batches:
        _, loss = model(Tensor(x), Tensor(y))
        opt.zero_grad()
        loss.backward()
        clip_grad_norm(model.parameters(), 1.0)
        opt.step()
        shares.append(expert_shares(model))
        aux_losses.append(model.last_aux_loss)                # mean over blocks, top_k (= 2) when balanced
        lm_losses.append(loss.item() - coef * model.last_aux_loss)  # the cross-entropy part alone
    return dict(coef=coef, shares=np.array(shares), lm_loss=lm_losses, aux_loss=aux_losses)


def parse(argv):
    p = _common.parser("moe_router", __doc__.splitlines()[0])
    p.add_argument("--steps", type=_common.positive, default=300)
    p.add_argument("--coef", type=float, default=0.05, help="aux_loss_coef of the balanced run")
    p.add_argument("--n-expert", type=_common.positive, default=8)
    p.add_argument("--top-k", type=_common.positive, default=2)
    p.add_argument("--n-layer", type=_common.positive, default=2)
    p.add_argument("--n-embd", type=_common.positive, default=64)
    p.add_argument("--expert-hidden", type=_common.positive, default=64, help="hidden width of each expert MLP")
    p.add_argument("--block-size", type=_common.positive, default=32)
    p.add_argument("--batch-size", type=_common.positive, default=16)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--n-chars", type=_common.positive, default=200_000,
                   help="characters of text to draw batches from")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.n_embd % 4:
        p.error(f"--n-embd ({args.n_embd}) must be a multiple of 4, the demo's number of attention heads")
    if args.top_k > args.n_expert:
        p.error(f"--top-k ({args.top_k}) must not exceed --n-expert ({args.n_expert})")
    return args


def main(argv=None) -> dict:
    args = parse(argv)
    out = _common.out_dir(args.out)
    start = time.perf_counter()
    text = load_text(args.n_chars)
    tok = CharTokenizer.from_text(text)
    data = np.array(tok.encode(text), dtype=np.int64)
    config = GPTConfig(vocab_size=tok.vocab_size, block_size=args.block_size, n_layer=args.n_layer, n_head=4,
                       n_embd=args.n_embd, mlp_hidden=args.expert_hidden, n_expert=args.n_expert,
                       top_k=args.top_k)
    data_batches = batches(data, args.steps, args.batch_size, args.block_size, args.seed)
    print(f"{len(text):,} characters ({tok.vocab_size} distinct); GPT with {args.n_layer} MoE blocks of "
          f"{args.n_expert} experts, top-{args.top_k}; {args.steps} steps of {args.batch_size}x{args.block_size} "
          "tokens")

    runs = []
    for coef in (0.0, args.coef):
        t0 = time.perf_counter()
        run = train(config, coef, data_batches, args.lr, args.seed)
        run["stats"] = collapse_stats(run["shares"][-10:].mean(0))    # (n_layer,) each, last 10 steps
        runs.append(run)
        print(f"\naux_loss_coef = {coef}: LM loss {np.mean(run['lm_loss'][-10:]):.3f}, "
              f"balance loss {np.mean(run['aux_loss'][-10:]):.3f} (even: {args.top_k}), "
              f"{time.perf_counter() - t0:.1f} s")
        for i, share in enumerate(run["shares"][-10:].mean(0)):
            s = {k: v[i] for k, v in run["stats"].items()}
            print(f"  block {i}: shares [{' '.join(f'{v:.2f}' for v in share)}]  "
                  f"max {s['max_share']:.2f}, two busiest {s['top2_share']:.2f}, "
                  f"entropy {s['entropy_bits']:.2f} bits, idle {s['idle_experts']}")
    print(f"(even use of {args.n_expert} experts: share {1 / args.n_expert:.3f} each, "
          f"entropy {np.log2(args.n_expert):.2f} bits)")

    path = plot(runs, out / "expert_share.png")
    print(f"done in {time.perf_counter() - start:.1f} s")
    return dict(runs=runs, files=[path])


def plot(runs, path):
    n_layer, n_expert = runs[0]["shares"].shape[1:]
    fig, axes = plt.subplots(n_layer, len(runs), figsize=(5.5 * len(runs), 2.8 * n_layer), squeeze=False,
                             sharex=True, sharey=True)
    colors = plt.get_cmap("tab10" if n_expert <= 10 else "tab20")(np.arange(n_expert))
    for col, run in enumerate(runs):
        steps = np.arange(1, len(run["shares"]) + 1)
        for layer in range(n_layer):
            ax = axes[layer, col]
            ax.stackplot(steps, run["shares"][:, layer].T, colors=colors,
                         labels=[f"expert {e}" for e in range(n_expert)])
            ent = run["stats"]["entropy_bits"][layer]
            ax.set(ylim=(0, 1), xlim=(1, steps[-1]), ylabel=f"block {layer}: token share",
                   title=f"aux_loss_coef = {run['coef']}  (final entropy {ent:.2f} bits)" if layer == 0 else
                   f"final entropy {ent:.2f} bits")
        axes[-1, col].set_xlabel("training step")
    axes[0, -1].legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8)
    fig.suptitle("Share of routing assignments per expert (stacked): without and with the load-balancing loss")
    return _common.save_figure(fig, path)


if __name__ == "__main__":
    main()
