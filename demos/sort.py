"""Sorting digits with a small GPT: an algorithm learned from examples alone.

What it teaches: a language model only ever predicts the next token, yet trained on sequences
"input digits, then the same digits sorted" it learns an algorithm. Three ideas make that work:
  * one sequence holds problem and answer: 2 0 1 2 9 4 | 0 1 2 2 4 9 (input, then output);
  * the loss is only taken on the answer: targets are -1 (ignored) on the input part, because the
    input digits are random and cannot be predicted, so learning them would only add noise;
  * at test time the model reads the input and writes the answer one token at a time, always taking
    its most probable token (greedy decoding); an answer counts only if every digit is right
    (exact match), measured on held-out inputs the model never trained on.
Training stops once the validation set reaches --target (99.9%: a margin above the 99% goal, since
stopping at the first lucky measurement overstates accuracy); the accuracy reported is then measured
on a separate test set, so the stopping rule cannot flatter it.

Run:  python demos/sort.py [--out DIR]      (default out/sort/)
Writes loss.png (training loss and validation accuracy against steps).
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
from nn.optim import AdamW, clip_grad_norm, cosine_schedule
from tinygrad_like import Tensor

# ---------------------------------------------------------------- the data

def problems(ids: np.ndarray, length: int) -> tuple[np.ndarray, np.ndarray]:
    """Problem number -> (input digits, sorted digits), both (N, length).

    Every input is one number from 0 to 10**length - 1 written with `length` digits, so a problem is
    named by an integer: that makes it easy to keep the held-out problems out of training.
    """
    powers = 10 ** np.arange(length - 1, -1, -1)              # (length,) e.g. 100000 ... 1
    inputs = (np.asarray(ids)[:, None] // powers) % 10         # (N, length) the digits, most significant first
    return inputs, np.sort(inputs, axis=1)


def sequences(inputs: np.ndarray, outputs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) for next-token training, both (N, 2·length - 1).

    The full sequence is input + output; x is all but its last token, y all but its first (y[t] is
    the token after x[..t]). Positions where y is still an input digit get target -1: no loss there.
    """
    full = np.concatenate([inputs, outputs], axis=1)           # (N, 2L)
    x, y = full[:, :-1], full[:, 1:].copy()                    # (N, 2L-1) each
    y[:, :inputs.shape[1] - 1] = -1                            # the first L-1 targets are input digits
    return x, y


def held_out_split(n_total: int, n_val: int, n_test: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """Two disjoint random sets of problem numbers (validation, test) that training never sees."""
    chosen = rng.choice(n_total, size=n_val + n_test, replace=False)
    return chosen[:n_val], chosen[n_val:]


def training_ids(n: int, n_total: int, held_out: np.ndarray, rng) -> np.ndarray:
    """n random problem numbers, none of them in `held_out` (redrawn until all are allowed)."""
    ids = rng.integers(0, n_total, size=n)
    bad = np.isin(ids, held_out)
    while bad.any():
        ids[bad] = rng.integers(0, n_total, size=int(bad.sum()))
        bad = np.isin(ids, held_out)
    return ids


# ---------------------------------------------------------------- measuring

def greedy_complete(model, prompts: np.ndarray, n_new: int) -> np.ndarray:
    """Append n_new tokens to each prompt (N, T), each the model's most probable next token; return
    only the new tokens, (N, n_new).

    GPT.generate with temperature 0 is greedy decoding (argmax, no sampling); it reuses the keys and
    values of earlier tokens (the KV cache, see demos/kv_cache.py), so each step costs one token's work.
    """
    prompts = np.asarray(prompts)
    return model.generate(prompts, n_new, temperature=0.0)[:, prompts.shape[1]:]


def exact_match(predicted: np.ndarray, expected: np.ndarray) -> float:
    """Fraction of rows where every token agrees: one wrong digit makes the whole answer wrong."""
    if predicted.shape != expected.shape:
        raise ValueError(f"exact_match: predicted {predicted.shape} and expected {expected.shape} differ")
    return float(np.mean(np.all(predicted == expected, axis=1)))


def accuracy(model, inputs: np.ndarray, outputs: np.ndarray, batch: int = 500) -> float:
    """Exact-match accuracy of the greedy answers to `inputs` (N, T) against `outputs` (N, n_out)."""
    answers = np.concatenate([greedy_complete(model, inputs[i:i + batch], outputs.shape[1])
                              for i in range(0, len(inputs), batch)])
    return exact_match(answers, outputs)


# ---------------------------------------------------------------- training

def train_until(model, next_batch, val_in, val_out, args) -> tuple[list, list, float]:
    """AdamW steps on batches from next_batch() -> (x, y) until validation exact match reaches
    args.target (checked every args.eval_every steps) or args.steps steps have run.

    Learning rate: warmup then cosine decay to a tenth (nn.optim.cosine_schedule); gradients clipped
    to norm 1. Returns (loss per step, [(step, validation accuracy)], seconds spent).
    """
    decay = [p for p in model.parameters() if p.ndim >= 2]      # matrices decay, biases and norms do not
    no_decay = [p for p in model.parameters() if p.ndim < 2]
    opt = AdamW([{"params": decay}, {"params": no_decay, "weight_decay": 0.0}], lr=args.lr, weight_decay=0.1)
    losses, evals, start = [], [], time.perf_counter()
    for step in range(args.steps):
        for group in opt.param_groups:
            group["lr"] = cosine_schedule(step, args.lr, warmup_steps=min(100, args.steps // 10),
                                          total_steps=args.steps, min_lr=args.lr / 10)
        x, y = next_batch()                                     # (B, T) each
        _, loss = model(Tensor(x), Tensor(y))
        opt.zero_grad()
        loss.backward()
        clip_grad_norm(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
        if (step + 1) % args.eval_every == 0 or step + 1 == args.steps:
            evals.append((step + 1, accuracy(model, val_in, val_out)))
            print(f"step {step + 1:5d} | loss {np.mean(losses[-args.eval_every:]):.4f} | "
                  f"val exact match {evals[-1][1]:.3f} | {time.perf_counter() - start:5.1f} s")
            if evals[-1][1] >= args.target:
                break
    return losses, evals, time.perf_counter() - start


# ---------------------------------------------------------------- the demo

def task_parser(name: str, description: str, steps: int, eval_every: int):
    """The settings sort.py and add.py share: model size, training, held-out sets and when to stop."""
    p = _common.parser(name, description)
    p.add_argument("--steps", type=_common.positive, default=steps,
                   help="most training steps (stops early at --target)")
    p.add_argument("--batch-size", type=_common.positive, default=64)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--n-layer", type=_common.positive, default=2)
    p.add_argument("--n-head", type=_common.positive, default=4)
    p.add_argument("--n-embd", type=_common.positive, default=64)
    p.add_argument("--eval-every", type=_common.positive, default=eval_every,
                   help="steps between validation measurements")
    p.add_argument("--n-val", type=_common.positive, default=2000, help="validation problems (decide when to stop)")
    p.add_argument("--n-test", type=_common.positive, default=2000, help="test problems (the accuracy reported)")
    p.add_argument("--target", type=float, default=0.999,
                   help="stop once validation accuracy reaches this (a margin above the 99%% goal)")
    p.add_argument("--seed", type=int, default=0)
    return p


def parse(argv):
    p = task_parser("sort", __doc__.splitlines()[0], steps=600, eval_every=25)
    p.add_argument("--length", type=_common.positive, default=6, help="digits per sequence")
    args = p.parse_args(argv)
    _common.check_heads(p, args.n_embd, args.n_head)
    return args


def main(argv=None) -> dict:
    args = parse(argv)
    out = _common.out_dir(args.out)
    start = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    Tensor.manual_seed(args.seed)
    L, n_total = args.length, 10 ** args.length

    val_ids, test_ids = held_out_split(n_total, args.n_val, args.n_test, rng)
    held_out = np.concatenate([val_ids, test_ids])
    val_in, val_out = problems(val_ids, L)
    test_in, test_out = problems(test_ids, L)

    config = GPTConfig(vocab_size=10, block_size=2 * L - 1, n_layer=args.n_layer, n_head=args.n_head,
                       n_embd=args.n_embd)
    model = GPT(config)
    print(f"sorting {L} digits 0-9: GPT with {model.num_params():,} parameters "
          f"({args.n_layer} layers, {args.n_head} heads, {args.n_embd} wide)")
    x, y = sequences(*problems(val_ids[:1], L))
    print(f"a sequence:  x = {x[0].tolist()}\n             y = {y[0].tolist()}  (-1: no loss)")

    def next_batch():
        return sequences(*problems(training_ids(args.batch_size, n_total, held_out, rng), L))

    losses, evals, train_time = train_until(model, next_batch, val_in, val_out, args)

    test_acc = accuracy(model, test_in, test_out)
    wall = time.perf_counter() - start
    print(f"\ntest exact match on {len(test_ids)} held-out sequences: {test_acc:.4f} after {len(losses)} steps "
          f"({train_time:.1f} s training, {wall:.1f} s in all)")
    model.eval()
    shown = greedy_complete(model, test_in[:5], L)
    for a, b, c in zip(test_in[:5], shown, test_out[:5]):
        print(f"  {''.join(map(str, a))} -> {''.join(map(str, b))}  {'ok' if (b == c).all() else 'WRONG'}")

    path = plot(losses, evals, args.target, out / "loss.png")
    return dict(test_accuracy=test_acc, val_accuracy=evals[-1][1], steps=len(losses), train_time_s=train_time,
                wall_time_s=wall, losses=losses, evals=evals, num_params=model.num_params(), files=[path])


def plot(losses, evals, target, path):
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.5))
    ax1.plot(np.arange(1, len(losses) + 1), losses, lw=0.8)
    ax1.set(xlabel="step", ylabel="cross-entropy on the answer digits", yscale="log", title="training loss")
    steps, accs = zip(*evals)
    ax2.plot(steps, accs, "o-")
    ax2.axhline(target, color="gray", ls="--", lw=0.8, label=f"target {target:.1%}")
    ax2.set(xlabel="step", ylabel="exact match", ylim=(0, 1.02), title="held-out validation accuracy (greedy)")
    ax2.legend(loc="lower right")
    return _common.save_figure(fig, path)


if __name__ == "__main__":
    main()
