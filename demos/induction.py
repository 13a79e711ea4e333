"""Induction heads: a 2-layer attention-only GPT learns to copy, and we find the head that does it.

What it teaches: a sequence of random tokens cannot be predicted, until it repeats. Trained on
random tokens repeated twice ([a b c ... | a b c ...]), the model's loss on the first half stays at
chance, ln V, while on the second half it falls towards zero: having seen "a b" once, on meeting "a"
again it predicts "b". Elhage et al. 2021 and Olsson et al. 2022 (transformer-circuits.pub) found the
two-step circuit behind this, which needs two layers:
  * a previous-token head (layer 0) writes into each position which token came before it;
  * an induction head (layer 1) looks from the current token t to the position whose PREVIOUS token
    was t, that is, to the token after t's earlier occurrence, and copies it into the prediction.
The length of the repeated half changes from batch to batch, so the model cannot copy by position:
it has to match tokens.

The evidence, three ways:
  * the loss per position: flat at ln V in the first half, low in the second;
  * the induction score of each head: its mean attention from each second-half token at position
    L + j to position j + 1 (the token after its earlier occurrence); chance is about 1/(position+1);
  * activation patching: zeroing the best induction head's output (its slice of attn.z, models/inside.py)
    sends the second half's loss back up, zeroing another head barely moves it.

Run:  python demos/induction.py [--out DIR]      (default out/induction/; about a minute on 2 CPU cores)
Writes induction.png (losses, scores, the best head's pattern, the ablation).
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # tiny matrices: one BLAS thread is faster (demos/sort.py)

import math  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import _common  # noqa: E402
from _common import plt  # noqa: E402
from models.gpt import GPT, GPTConfig  # noqa: E402
from nn.optim import AdamW, clip_grad_norm  # noqa: E402
from tinygrad_like import Tensor  # noqa: E402

# ---------------------------------------------------------------- the data


def repeated(rng, batch: int, length: int, vocab: int) -> np.ndarray:
    """(batch, 2·length) ints: `length` uniform random tokens, then the same tokens again."""
    half = rng.integers(0, vocab, size=(batch, length))
    return np.concatenate([half, half], axis=1)


def targets_of(seq: np.ndarray) -> np.ndarray:
    """Next-token targets (B, T): seq shifted left by one; the last position has none (-1)."""
    y = np.full_like(seq, -1)
    y[:, :-1] = seq[:, 1:]
    return y


# ---------------------------------------------------------------- measuring


def half_losses(logits: np.ndarray, seq: np.ndarray) -> tuple[float, float, np.ndarray]:
    """(first-half loss, second-half loss, loss per position (T - 1,)), nats, from logits (B, T, V).

    Position t predicts token t + 1. First half: t = 0 .. L-2 (a fresh random token each time; the
    best possible is ln V). Second half: t = L .. 2L-2, whose next token repeats token t - L + 1. Position
    L - 1 (predicting the first repeated token, which nothing announces) belongs to neither.
    """
    L = seq.shape[1] // 2
    z = logits.astype(np.float64)
    logp = z - z.max(-1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(-1, keepdims=True))
    nll = -np.take_along_axis(logp[:, :-1], seq[:, 1:, None], axis=-1)[..., 0]   # (B, T - 1)
    per_position = nll.mean(0)
    return float(per_position[:L - 1].mean()), float(per_position[L:].mean()), per_position


def induction_scores(cache: dict, n_layer: int, length: int) -> np.ndarray:
    """(n_layer, n_head): each head's mean attention from position L + j to position j + 1, over the
    second half's positions j = 0 .. L-2 and the batch."""
    L = length
    rows = np.arange(L, 2 * L - 1)                   # queries: the repeated tokens
    cols = rows - L + 1                              # keys: the token after each one's first occurrence
    return np.stack([cache[f"transformer.h.{i}.attn.pattern"][:, :, rows, cols].mean((0, 2))
                     for i in range(n_layer)])


def previous_token_scores(cache: dict, n_layer: int) -> np.ndarray:
    """(n_layer, n_head): mean attention from each position t >= 1 to t - 1."""
    out = []
    for i in range(n_layer):
        p = cache[f"transformer.h.{i}.attn.pattern"]
        t = np.arange(1, p.shape[-1])
        out.append(p[:, :, t, t - 1].mean((0, 2)))
    return np.stack(out)


def zero_head(layer: int, head: int) -> dict:
    """run_with_hooks hooks that zero one head's output before c_proj mixes the heads."""
    def hook(z):                                     # z (B, T, n_head, head_dim)
        z[:, :, head] = 0.0
        return z
    return {f"transformer.h.{layer}.attn.z": hook}


def ablation(model, seq: np.ndarray, heads: list[tuple[int, int]]) -> dict[tuple[int, int], float]:
    """{(layer, head): second-half loss with that head zeroed}."""
    return {lh: half_losses(model.run_with_hooks(seq, zero_head(*lh)), seq)[1] for lh in heads}


# ---------------------------------------------------------------- training


def make_model(args) -> GPT:
    Tensor.manual_seed(args.seed)
    return GPT(GPTConfig(vocab_size=args.vocab, block_size=2 * args.max_length, n_layer=2, n_head=args.n_head,
                         n_embd=args.n_embd, attn_only=True, pos=args.pos))


def train(model, args, rng, log=print) -> list[tuple[int, float, float]]:
    """AdamW on fresh batches, each with its own half length in [min_length, max_length]; returns
    [(step, first-half loss, second-half loss)] measured on the training batches (never seen twice)."""
    decay = [p for p in model.parameters() if p.ndim >= 2]
    opt = AdamW([{"params": decay}, {"params": [p for p in model.parameters() if p.ndim < 2], "weight_decay": 0.0}],
                lr=args.lr, weight_decay=0.01)
    history, start = [], time.perf_counter()
    for step in range(1, args.steps + 1):
        seq = repeated(rng, args.batch_size, int(rng.integers(args.min_length, args.max_length + 1)), args.vocab)
        logits, loss = model(Tensor(seq), Tensor(targets_of(seq)))
        opt.zero_grad()
        loss.backward()
        clip_grad_norm(model.parameters(), 1.0)
        opt.step()
        if step % args.log_every == 0 or step == 1:
            first, second, _ = half_losses(logits.numpy(), seq)
            history.append((step, first, second))
            log(f"step {step:5d} | first half {first:.3f} | second half {second:.3f} | "
                f"{time.perf_counter() - start:5.1f} s")
    return history


def inspect(model, seq: np.ndarray, n_layer: int = 2) -> dict:
    """Losses, induction and previous-token scores of `model` on `seq` (one forward with the cache)."""
    logits, cache = model.run_with_cache(seq)
    first, second, per_position = half_losses(logits, seq)
    return dict(first=first, second=second, per_position=per_position, cache=cache,
                scores=induction_scores(cache, n_layer, seq.shape[1] // 2),
                previous=previous_token_scores(cache, n_layer))


# ---------------------------------------------------------------- the picture


def plot(history, before, after, ablated, best, other, seq, vocab, path):
    fig, ax = plt.subplots(2, 2, figsize=(12, 9))
    steps, first, second = zip(*history)
    a = ax[0, 0]
    a.plot(steps, first, label="first half (random tokens)")
    a.plot(steps, second, label="second half (a repeat)")
    a.axhline(math.log(vocab), color="gray", ls="--", lw=1, label=f"chance, ln {vocab} = {math.log(vocab):.2f}")
    a.set(xlabel="step", ylabel="loss (nats/token)", title="Training: the repeat becomes predictable")
    a.legend()

    a = ax[0, 1]
    L = seq.shape[1] // 2
    a.plot(np.arange(len(before["per_position"])), before["per_position"], label="before training", color="gray")
    a.plot(np.arange(len(after["per_position"])), after["per_position"], label="after training")
    a.axvline(L - 0.5, color="k", lw=0.8)
    a.set(xlabel="position t (predicting token t + 1)", ylabel="loss", title=f"Loss per position (halves of {L})")
    a.legend()

    a = ax[1, 0]
    layer, head = best
    pattern = after["cache"][f"transformer.h.{layer}.attn.pattern"][0, head]
    a.imshow(pattern, cmap="viridis", vmin=0, vmax=1)
    a.set(title=f"Layer {layer} head {head} (score {after['scores'][best]:.2f}): the stripe at offset L - 1",
          xlabel="key position", ylabel="query position")

    a = ax[1, 1]
    names = ["none", f"L{best[0]}H{best[1]}\n(best induction)", f"L{other[0]}H{other[1]}\n(another head)"]
    values = [after["second"], ablated[best], ablated[other]]
    bars = a.bar(names, values, color=["C0", "C3", "C2"])
    a.bar_label(bars, fmt="%.2f")
    a.axhline(math.log(vocab), color="gray", ls="--", lw=1)
    a.set(ylabel="second-half loss", title="Ablation: zero one head's output")
    fig.tight_layout()
    return _common.save_figure(fig, path)


# ---------------------------------------------------------------- main


def build_parser():
    p = _common.parser("induction", __doc__.splitlines()[0])
    p.add_argument("--steps", type=_common.positive, default=2000)
    p.add_argument("--batch-size", type=_common.positive, default=32)
    p.add_argument("--vocab", type=_common.positive, default=64, help="random tokens are drawn from 0..vocab-1")
    p.add_argument("--min-length", type=_common.positive, default=8, help="shortest repeated half")
    p.add_argument("--max-length", type=_common.positive, default=24, help="longest repeated half")
    p.add_argument("--n-head", type=_common.positive, default=2)
    p.add_argument("--n-embd", type=_common.positive, default=64)
    p.add_argument("--pos", choices=("learned", "rope"), default="rope", help="position encoding")
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--log-every", type=_common.positive, default=50)
    p.add_argument("--seed", type=int, default=0)
    return p


def main(argv=None) -> dict:
    p = build_parser()
    args = p.parse_args(argv)
    _common.check_heads(p, args.n_embd, args.n_head)
    if not 2 <= args.min_length <= args.max_length:
        p.error(f"need 2 <= --min-length ({args.min_length}) <= --max-length ({args.max_length})")
    out = _common.out_dir(args.out)
    rng = np.random.default_rng(args.seed)
    model = make_model(args)
    print(f"induction: 2-layer attention-only GPT, {model.num_params():,} parameters, {args.n_head} heads per "
          f"layer, vocabulary {args.vocab} (chance: ln {args.vocab} = {math.log(args.vocab):.3f} nats)")
    seq = repeated(np.random.default_rng(args.seed + 1), 64, args.max_length, args.vocab)  # held-out probe
    before = inspect(model, seq)
    start = time.perf_counter()
    history = train(model, args, rng)
    seconds = time.perf_counter() - start
    after = inspect(model, seq)

    print("\ninduction score per head (chance about 1/(position + 1)):")
    for name, s in (("before training,", before["scores"]), ("after training, ", after["scores"])):
        for layer in range(2):
            print(f"  {name} layer {layer}: " + "  ".join(f"H{h} {v:.3f}" for h, v in enumerate(s[layer])))
    print("previous-token score per head after training:")
    for layer in range(2):
        print(f"  layer {layer}: " + "  ".join(f"H{h} {v:.3f}" for h, v in enumerate(after["previous"][layer])))
    best = tuple(int(i) for i in np.unravel_index(np.argmax(after["scores"][1]), after["scores"][1:].shape))
    best = (1, best[1])
    other = (1, int(np.argmin(after["scores"][1])))
    ablated = ablation(model, seq, [best, other])
    print(f"\nloss on the held-out probe (halves of {args.max_length}): first half {after['first']:.3f} "
          f"(ln V = {math.log(args.vocab):.3f}), second half {after['second']:.3f} "
          f"(before training {before['first']:.3f} / {before['second']:.3f})")
    print(f"ablation, second-half loss: none {after['second']:.3f} | best induction head L1H{best[1]} zeroed "
          f"{ablated[best]:.3f} | L1H{other[1]} zeroed {ablated[other]:.3f}")
    plot(history, before, after, ablated, best, other, seq, args.vocab, out / "induction.png")
    print(f"trained in {seconds:.1f} s")
    return dict(history=history, before=before, after=after, best=best, other=other, ablated=ablated,
                seconds=seconds, model=model)


if __name__ == "__main__":
    main()
