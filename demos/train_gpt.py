"""The main job: train a small GPT on real text on a CPU, and write everything worth looking at.

    python demos/train_gpt.py                            # the default run (see "Defaults" below)
    python demos/train_gpt.py --preset tiny --steps 100 --out /tmp/tiny
    python demos/train_gpt.py --text my.txt --tokenizer bpe --vocab-size 512
    python demos/train_gpt.py --resume out/train_gpt     # continue a stopped run, same numbers
    python demos/sample.py out/train_gpt --prompt "def"   # generate from the checkpoint

What happens: the text (default: the Python reference docs that ship with CPython, see demos/data.py)
is split 90/10, tokenized, and a GPT (models/gpt.py) learns to predict each next token:

    x, y = B random windows of T tokens, y shifted by one          (B, T) each
    loss = mean cross-entropy of softmax(model(x)) against y       nats per token
    AdamW step (decay on matrices only), lr from warmup + cosine, gradients clipped to --grad-clip

Every --eval-interval steps the loss is measured on the same --eval-iters batches of the train and
validation splits (fixed batches, so the points of the curve compare like with like). The run must
beat the unigram baseline, the loss of predicting every token with its training-set frequency.

Written into --out (default out/train_gpt/):
    ckpt.safetensors    weights, AdamW moments, step, RNG state and loss history (nn/state.py), saved
                        every --ckpt-interval steps, at the end, and when you press Ctrl-C
    config.json         the GPTConfig and every run setting;  tokenizer.json  the tokenizer
    samples.txt         text generated from a few prompts
    loss.png            training and validation loss against step, with the unigram baseline
    attention.png       attention weights of every head of every layer on one validation snippet
    block_backward.svg  the backward graph of one transformer block, boxed by sub-layer
    summary.json        config, num_params, steps, train/val loss, unigram_val_loss, tokens/s, wall time

Resuming is exact: batches come from the library RNG, which the checkpoint saves and restores, and
an interrupted step is rolled back (its RNG draws undone; the update itself cannot be cut in half), so
stopping and resuming gives bit-identical parameters and loss history to an uninterrupted run.

Defaults, chosen by measuring on a 2-core machine (`nproc` = 2, as in CI): preset "small" (4 layers,
4 heads, width 128, context 64 tokens, 932,608 parameters), batch 32, 800 steps at lr 2e-3, BPE with
1024 tokens, on every core (--threads). The default run took 119 s wall (103 s of training steps,
15,889 tokens/s) and ended at validation loss 3.517 nats/token (1.208 per character) against the
unigram baseline's 5.932; PyTorch, from the same initial weights on the same batches with 2 threads
(benchmarks/train_gpt_torch.py), run right after, reached the same 3.517 in 111 s wall (16,161 tokens/s). Machine: AMD
EPYC, 2 cores, OpenBLAS 0.3.31, 193 GFLOP/s float32 matmul, 22 GB/s copy, 0.37 us per tiny numpy call
(benchmarks/machine.py). An earlier machine of the same kind ran the same run in 88 s (21,213
tokens/s), and on a shared machine the same run moves by 20% from one hour to the next: expect figures
to move by up to 2x between machines. Other busy processes on the same two cores slow it down a lot
(we measured 2x to 20x with numpy's BLAS threads; --threads 1 with OPENBLAS_NUM_THREADS=1 keeps it usable).
Why BPE: per character of validation text (loss x tokens / characters, `val_loss_per_char` in the
summary) the same 600-step run reached 1.54 nats with chars, 1.28 with BPE-512 and 1.23 with
BPE-1024, at about the same time per step: a BPE token carries ~2.9 characters, so a 64-token
window sees ~190 characters of context and a step trains on ~3x more text. The price: 800 steps
are ~11 passes over the 143k training tokens, so the train loss falls well below validation (2.56 vs
3.52). Dropout 0.1 bought 0.01 nats at 8% more time per step, so it stays off; 1000 steps gave 3.503.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pathlib
import re
import signal
import sys
import threading
import time

import numpy as np

import _common
from _common import UsageError, plt
from data import build_tokenizer, encode, get_batch, load_text, split_text, unigram_loss
from models import tokenizer as tokenizers
from models.gpt import GPT, GPTConfig
from nn import state as checkpoint
from nn.optim import AdamW, clip_grad_norm, cosine_schedule
from tinygrad_like import Tensor, draw_graph, get_num_threads, no_grad, set_num_threads
from tinygrad_like import random as _random
from tinygrad_like.memory import tune_malloc

CKPT, CONFIG, TOKENIZER = "ckpt.safetensors", "config.json", "tokenizer.json"

# A preset sets the model shape and the training length; every flag below overrides one entry.
PRESETS = {
    "tiny":   dict(n_layer=2, n_head=2, n_embd=32, block_size=32, batch_size=16, steps=200, lr=3e-3,
                   eval_interval=50, eval_iters=4),
    "small":  dict(n_layer=4, n_head=4, n_embd=128, block_size=64, batch_size=32, steps=800, lr=2e-3,
                   eval_interval=100, eval_iters=10),
    "medium": dict(n_layer=6, n_head=6, n_embd=192, block_size=128, batch_size=32, steps=3000, lr=1e-3,
                   eval_interval=250, eval_iters=20),
}
DEFAULTS = dict(preset="small", text=None, tokenizer="bpe", vocab_size=1024, n_kv_head=None, dropout=0.0,
                bias=True, norm="layernorm", mlp="gelu", mlp_hidden=None, pos="learned", prenorm=True,
                tie_weights=True, n_expert=0, top_k=2, dtype="float32", min_lr=None, warmup=None,
                weight_decay=0.1, grad_clip=1.0, ckpt_interval=None, log_interval=None, seed=1337,
                sample_tokens=300, prompt=None)
MODEL_FIELDS = ("block_size", "n_layer", "n_head", "n_embd", "n_kv_head", "dropout", "bias", "norm", "mlp",
                "mlp_hidden", "pos", "prenorm", "tie_weights", "n_expert", "top_k", "dtype")
# What --resume may change: how long to train and how often to look, never the model or the data.
RESUME_OVERRIDES = ("steps", "eval_interval", "ckpt_interval", "log_interval", "sample_tokens", "prompt")
BETAS = (0.9, 0.99)  # beta2 = 0.99 as nanoGPT uses for small models: faster to adapt on short runs


# ---------------------------------------------------------------- command line

def _from_preset(key: str) -> str:
    return "(default from --preset: " + ", ".join(f"{name} {PRESETS[name][key]}" for name in PRESETS) + ")"


def _default(key: str) -> str:
    return f"(default: {DEFAULTS[key]})"


def build_parser():
    """The flags; each one's default is in its help, taken from DEFAULTS or PRESETS. Every default is
    None to argparse, meaning "not given", so a preset or a resumed run's settings can fill it in."""
    p = _common.parser("train_gpt", "Train a small GPT on text and write samples, plots, graphs and a "
                                    "checkpoint. Unset flags come from --preset.", out=False)
    p.add_argument("--out", metavar="DIR", help="output folder (default: out/train_gpt, or the --resume folder)")
    p.add_argument("--preset", choices=list(PRESETS), help=f"model shape and run length {_default('preset')}")
    p.add_argument("--resume", metavar="DIR", help="continue the run saved in DIR (its settings are used)")
    d = p.add_argument_group("data")
    d.add_argument("--text", metavar="FILE", help="a UTF-8 text file (default: CPython's pydoc_data.topics)")
    d.add_argument("--tokenizer", choices=("char", "bpe"), help=_default("tokenizer"))
    d.add_argument("--vocab-size", type=int, metavar="N",
                   help=f"BPE vocabulary size, at least 256 (the byte values) {_default('vocab_size')}")
    m = p.add_argument_group("model (GPTConfig fields; vocab_size comes from the tokenizer)")
    m.add_argument("--n-layer", type=int, metavar="N", help=f"transformer blocks {_from_preset('n_layer')}")
    m.add_argument("--n-head", type=int, metavar="N", help=f"attention heads {_from_preset('n_head')}")
    m.add_argument("--n-embd", type=int, metavar="N",
                   help=f"width of the residual stream, a multiple of --n-head {_from_preset('n_embd')}")
    m.add_argument("--block-size", type=int, metavar="T", help=f"context length in tokens {_from_preset('block_size')}")
    m.add_argument("--n-kv-head", type=int, metavar="N",
                   help="key/value heads, grouped-query attention (default: --n-head)")
    m.add_argument("--dropout", type=float, metavar="P", help=_default("dropout"))
    m.add_argument("--no-bias", dest="bias", action="store_const", const=False, help="no biases")
    m.add_argument("--norm", choices=("layernorm", "rmsnorm"), help=_default("norm"))
    m.add_argument("--mlp", choices=("gelu", "relu", "swiglu"), help=_default("mlp"))
    m.add_argument("--mlp-hidden", type=int, metavar="N", help="MLP width (default: 4 * n_embd)")
    m.add_argument("--pos", choices=("learned", "rope"), help=_default("pos"))
    m.add_argument("--postnorm", dest="prenorm", action="store_const", const=False, help="post-norm blocks")
    m.add_argument("--untied", dest="tie_weights", action="store_const", const=False,
                   help="separate lm_head and token embedding matrices")
    m.add_argument("--n-expert", type=int, metavar="N",
                   help=f"mixture of experts per block, 0: a dense MLP {_default('n_expert')}")
    m.add_argument("--top-k", type=int, metavar="K", help=f"experts per token {_default('top_k')}")
    m.add_argument("--dtype", choices=("float32", "float64"), help=_default("dtype"))
    t = p.add_argument_group("training")
    t.add_argument("--steps", type=int, metavar="N", help=_from_preset("steps"))
    t.add_argument("--batch-size", type=int, metavar="B", help=_from_preset("batch_size"))
    t.add_argument("--lr", type=float, help=f"peak learning rate {_from_preset('lr')}")
    t.add_argument("--min-lr", type=float, metavar="LR", help="final learning rate (default: lr / 10)")
    t.add_argument("--warmup", type=int, metavar="N",
                   help="linear warmup steps, fewer than --steps (default: steps / 20, at most steps - 1)")
    t.add_argument("--weight-decay", type=float, metavar="W",
                   help=f"AdamW decay of matrices {_default('weight_decay')}")
    t.add_argument("--grad-clip", type=float, metavar="NORM",
                   help=f"max global gradient norm, 0: off {_default('grad_clip')}")
    t.add_argument("--eval-interval", type=int, metavar="N",
                   help=f"steps between loss measurements {_from_preset('eval_interval')}")
    t.add_argument("--eval-iters", type=int, metavar="N",
                   help=f"batches per loss measurement {_from_preset('eval_iters')}")
    t.add_argument("--ckpt-interval", type=int, metavar="N",
                   help="steps between checkpoints (default: --eval-interval)")
    t.add_argument("--log-interval", type=int, metavar="N",
                   help="steps between log lines when not on a terminal (default: eval interval / 4)")
    t.add_argument("--seed", type=int, help=f"seeds the init and the batches {_default('seed')}")
    t.add_argument("--sample-tokens", type=int, metavar="N",
                   help=f"tokens generated per prompt for samples.txt {_default('sample_tokens')}")
    t.add_argument("--prompt", action="append",
                   help="a prompt for samples.txt, repeatable (default: a few that suit the text)")
    t.add_argument("--no-tune-malloc", dest="tune_malloc", action="store_false",
                   help="keep glibc's default allocator settings (see tinygrad_like/memory.py)")
    t.add_argument("--threads", type=int, metavar="N", default=usable_cores(),
                   help="threads for products and attention (tinygrad_like.set_num_threads; default: every "
                        "core, as PyTorch; 1 leaves numpy's BLAS its own threads)")
    return p


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, where the OS tells), else the machine's."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def resolve_settings(args) -> tuple[dict, pathlib.Path, bool]:
    """(settings, out dir, resuming?). Settings: DEFAULTS < preset < flags; when resuming, the saved
    settings, of which only RESUME_OVERRIDES may be changed by flags. Raises UsageError for settings
    that cannot work, before any data is read."""
    machine_only = ("out", "resume", "tune_malloc", "threads")                # how to run, not what to train
    given = {k: v for k, v in vars(args).items() if v is not None and k not in machine_only}
    if args.resume:
        folder = pathlib.Path(args.resume)
        if not (folder / CKPT).is_file() or not (folder / CONFIG).is_file():
            raise UsageError(f"--resume: {folder} holds no {CKPT} and {CONFIG} (not a train_gpt.py output folder)")
        settings = json.loads((folder / CONFIG).read_text())["settings"]
        changed = sorted(k for k, v in given.items() if k not in RESUME_OVERRIDES and settings.get(k) != v)
        if changed:
            raise UsageError(f"--resume: cannot change {changed} of a saved run (only {list(RESUME_OVERRIDES)})")
        settings.update({k: v for k, v in given.items() if k in RESUME_OVERRIDES})
        check_settings(settings)
        return settings, pathlib.Path(args.out or folder), True
    preset = given.get("preset", DEFAULTS["preset"])
    settings = {**DEFAULTS, **PRESETS[preset], **given, "preset": preset}
    settings["min_lr"] = settings["lr"] / 10 if settings["min_lr"] is None else settings["min_lr"]
    if settings["warmup"] is None:  # a twentieth of the run, and short enough for any --steps (even 1)
        settings["warmup"] = min(max(1, settings["steps"] // 20), settings["steps"] - 1)
    settings["ckpt_interval"] = settings["ckpt_interval"] or settings["eval_interval"]
    check_settings(settings)
    return settings, pathlib.Path(args.out or "out/train_gpt"), False


def check_settings(settings: dict):
    """UsageError, naming the flag, for a setting no run can use."""
    for key in ("steps", "batch_size", "eval_interval", "eval_iters", "ckpt_interval"):
        if settings[key] < 1:
            raise UsageError(f"--{key.replace('_', '-')} must be >= 1, got {settings[key]}")
    for key in ("warmup", "sample_tokens", "weight_decay", "grad_clip", "min_lr"):
        if settings[key] < 0:
            raise UsageError(f"--{key.replace('_', '-')} must be >= 0, got {settings[key]}")
    if settings["log_interval"] is not None and settings["log_interval"] < 1:
        raise UsageError(f"--log-interval must be >= 1, got {settings['log_interval']}")
    if not settings["lr"] > 0:
        raise UsageError(f"--lr must be > 0, got {settings['lr']}")
    if settings["warmup"] >= settings["steps"]:
        raise UsageError(f"--warmup ({settings['warmup']}) must be smaller than --steps ({settings['steps']})")
    if settings["tokenizer"] == "bpe" and settings["vocab_size"] < 256:
        raise UsageError(f"--vocab-size must be at least 256 (a BPE vocabulary starts with the 256 byte "
                         f"values), got {settings['vocab_size']}")
    if settings["n_head"] > 0 and settings["n_embd"] % settings["n_head"]:
        raise UsageError(f"--n-head ({settings['n_head']}) must divide --n-embd ({settings['n_embd']}): "
                         "each head gets n_embd / n_head dimensions")
    try:  # everything else the model checks (positive sizes, heads, experts, rope): a model of 256 ids
        GPTConfig(vocab_size=256, **{k: settings[k] for k in MODEL_FIELDS})
    except ValueError as e:
        flags = re.sub(rf"\b({'|'.join(MODEL_FIELDS)})\b", lambda m: "--" + m[1].replace("_", "-"), str(e))
        raise UsageError(f"model settings: {flags}") from None


# ---------------------------------------------------------------- progress: a bar on a terminal, lines otherwise

class BarProgress:
    """tqdm bar: step, train loss (moving average, weight 0.1 on the newest batch), last val loss,
    tokens/s; tqdm adds the elapsed time and the time left."""

    def __init__(self, start: int, total: int):
        from tqdm import tqdm
        self.bar = tqdm(total=total, initial=start, unit="step", dynamic_ncols=True, file=sys.stdout)
        self.avg = None

    def update(self, step, loss, val, tok_s):
        self.avg = loss if self.avg is None else 0.9 * self.avg + 0.1 * loss
        val_text = f"{val:.3f}" if val is not None else "-"
        self.bar.set_postfix_str(f"loss {self.avg:.3f} | val {val_text} | {tok_s:,.0f} tok/s", refresh=False)
        self.bar.update(step - self.bar.n)

    def close(self):
        self.bar.close()


class LineProgress:
    """One plain line every `interval` steps (and whenever a new validation loss is measured):
    step N/total | loss X | val Y | tok/s Z | eta M:SS. `loss` is the mean over the steps since the last line."""

    def __init__(self, start: int, total: int, interval: int, val: float | None):
        self.total, self.interval, self.losses, self.shown_val = total, interval, [], val
        self.t0, self.start = time.perf_counter(), start

    def update(self, step, loss, val, tok_s):
        self.losses.append(loss)
        if step % self.interval and step != self.total and val == self.shown_val:
            return
        done = step - self.start
        eta = (time.perf_counter() - self.t0) / done * (self.total - step) if done else 0.0
        val_text = f"{val:.4f}" if val is not None else "-"
        print(f"step {step}/{self.total} | loss {np.mean(self.losses):.4f} | val {val_text} | "
              f"tok/s {tok_s:.0f} | eta {_duration(eta)}", flush=True)
        self.losses, self.shown_val = [], val

    def close(self):
        pass


def _duration(seconds: float) -> str:
    return f"{int(seconds // 60)}:{int(seconds % 60):02d}"


# ---------------------------------------------------------------- training

def make_optimizer(model: GPT, settings: dict) -> AdamW:
    """AdamW with two groups: matrices (linear weights, embeddings) decay; vectors (biases, norm
    gains) do not: shrinking a LayerNorm gain or a bias towards 0 is not a useful prior."""
    params = list(model.parameters())
    decay = [p for p in params if p.ndim >= 2]
    no_decay = [p for p in params if p.ndim < 2]
    groups = [{"params": decay, "weight_decay": settings["weight_decay"]}]
    if no_decay:
        groups.append({"params": no_decay, "weight_decay": 0.0})
    return AdamW(groups, lr=settings["lr"], betas=BETAS)


def forward_backward(model: GPT, x: np.ndarray, y: np.ndarray) -> float:
    """Loss of one batch and its gradients in every parameter's .grad; nothing is updated yet."""
    _, loss = model(x, y)
    loss.backward()
    return loss.item()


@contextlib.contextmanager
def hold_interrupt():
    """Hold Ctrl-C until the block ends, so an optimizer update is never left half applied."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


def estimate_loss(model: GPT, splits: dict, settings: dict) -> dict:
    """Mean loss on the same `eval_iters` batches of each split every time (a fresh generator seeded
    from --seed, not the library RNG, so measuring does not change the training batches)."""
    rng = np.random.default_rng(settings["seed"] + 1)
    out = {}
    model.eval()
    try:
        with no_grad():
            for name, ids in splits.items():
                losses = [model(*get_batch(ids, settings["batch_size"], settings["block_size"], rng))[1].item()
                          for _ in range(settings["eval_iters"])]
                out[name] = float(np.mean(losses))
    finally:
        model.train()
    return out


def train(model, optimizer, splits, settings, out, step, history) -> tuple[int, bool, dict]:
    """Run steps `step`..settings["steps"]; returns (step reached, interrupted?, speed stats).

    history: {"train": [batch loss of step 0, 1, ...], "eval": [[step, train loss, val loss], ...]},
    saved in every checkpoint (for loss.png after a resume).
    """
    steps, B, T = settings["steps"], settings["batch_size"], settings["block_size"]
    log_interval = settings["log_interval"] or max(1, settings["eval_interval"] // 4)
    rng_state = _random.get_state()  # the RNG as it was after the last completed step
    stats = dict(tokens=0, seconds=0.0)
    last_val = history["eval"][-1][2] if history["eval"] else None

    def evaluate_if_due():
        nonlocal last_val
        due = step % settings["eval_interval"] == 0 or step == steps
        if due and not (history["eval"] and history["eval"][-1][0] == step):
            losses = estimate_loss(model, splits, settings)
            history["eval"].append([step, losses["train"], losses["val"]])
            last_val = losses["val"]

    progress = None
    try:
        evaluate_if_due()  # the untrained model's loss (or one that an interrupt cut off)
        progress = BarProgress(step, steps) if sys.stdout.isatty() else \
            LineProgress(step, steps, log_interval, last_val)
        while step < steps:
            t0 = time.perf_counter()
            lr = cosine_schedule(step, settings["lr"], settings["warmup"], steps, settings["min_lr"])
            x, y = get_batch(splits["train"], B, T, _random.rng())
            loss = forward_backward(model, x, y)
            with hold_interrupt():  # from here the step completes, or it never happened
                for group in optimizer.param_groups:
                    group["lr"] = lr
                if settings["grad_clip"] > 0:
                    clip_grad_norm(model.parameters(), settings["grad_clip"])
                optimizer.step()
                optimizer.zero_grad()
                history["train"].append(loss)
                step += 1
                rng_state = _random.get_state()
            stats["seconds"] += time.perf_counter() - t0
            stats["tokens"] += B * T
            evaluate_if_due()
            progress.update(step, loss, last_val, stats["tokens"] / stats["seconds"])
            if step % settings["ckpt_interval"] == 0 and step < steps:
                save_checkpoint(out, model, optimizer, step, history)
        save_checkpoint(out, model, optimizer, step, history)
        return step, False, stats
    except KeyboardInterrupt:
        _random.set_state(rng_state)  # undo the random draws of the step that did not finish
        save_checkpoint(out, model, optimizer, step, history)
        return step, True, stats
    finally:
        if progress is not None:
            progress.close()


def save_checkpoint(out, model, optimizer, step, history):
    checkpoint.save(out / CKPT, model, optimizer, step, extra={"history": history})


# ---------------------------------------------------------------- what the run leaves behind

def write_samples(model, tokenizer, prompts, n_tokens, seed, path) -> pathlib.Path:
    """For each prompt: the prompt and n_tokens sampled at temperature 0.8 (top-k 40)."""
    parts = []
    for i, prompt in enumerate(prompts):
        ids = np.asarray([tokenizer.encode(prompt)], dtype=np.int64)
        out = model.generate(ids, n_tokens, temperature=0.8, top_k=40, seed=seed + i)
        parts.append(f"=== prompt {prompt!r} ===\n{tokenizer.decode(out[0].tolist())}\n")
    path.write_text("\n".join(parts), encoding="utf-8")
    print(f"  wrote {path}")
    return path


def default_prompts(tokenizer, val_text: str) -> list[str]:
    """A few prompts that suit the Python docs, kept when the tokenizer can encode them, and the
    first words of the validation text (a prompt from text the model never trained on). None ends in
    a space: BPE tokens carry their leading space (" the"), so a prompt's trailing space would be
    a lone " " token the model rarely saw, and its continuations start oddly."""
    prompts = []
    for p in ("\n", "The", "def", "for x in", " ".join(val_text.lstrip().split("\n")[0].split()[:3])):
        try:
            if p.strip() or p == "\n":
                tokenizer.encode(p)
                prompts.append(p)
        except ValueError:
            pass
    return list(dict.fromkeys(prompts)) or ["\n"]


def plot_loss(history, baseline, path) -> pathlib.Path:
    """Batch losses of every step (thin), their running mean, the measured train/val points, baseline."""
    fig, ax = plt.subplots(figsize=(8, 4.5))
    batch = np.asarray(history["train"])
    steps = np.arange(len(batch))  # batch loss of step i: the weights after i updates, like an eval at i
    ax.plot(steps, batch, color="tab:blue", alpha=0.25, lw=0.8, label="train batch loss")
    if len(batch) >= 10:
        w = max(5, len(batch) // 50)
        ax.plot(steps[w - 1:], np.convolve(batch, np.ones(w) / w, mode="valid"), color="tab:blue", lw=1.5,
                label=f"train, running mean of {w}")
    if history["eval"]:
        ev = np.asarray(history["eval"])
        ax.plot(ev[:, 0], ev[:, 1], "o-", color="tab:green", ms=4, label="train (eval batches)")
        ax.plot(ev[:, 0], ev[:, 2], "s-", color="tab:orange", ms=4, label="validation")
    ax.axhline(baseline, color="gray", ls="--", lw=1, label=f"unigram baseline {baseline:.3f}")
    ax.set(xlabel="step", ylabel="cross-entropy (nats / token)", title="Loss")
    ax.grid(alpha=0.3)
    ax.legend()
    return _common.save_figure(fig, path)


def _visible(token: str) -> str:
    """A token as an axis label: spaces, newlines and tabs drawn as visible marks."""
    return token.replace(" ", "␣").replace("\n", "⏎").replace("\t", "⇥") or "∅"


def snippet(val_ids: np.ndarray, tokenizer, length: int) -> np.ndarray:
    """`length` validation tokens that read well in a picture: the first run that starts a line with a
    letter and holds no newline and few spaces (else simply the first tokens), (length,)."""
    for start in range(1, min(len(val_ids), 20000) - length):
        ids = val_ids[start:start + length]
        text = tokenizer.decode(ids.tolist())
        if tokenizer.decode([int(val_ids[start - 1])]).endswith("\n") and text[:1].isalpha() \
                and "\n" not in text and text.count(" ") <= len(text) // 4:
            return ids
    return val_ids[:length]


def plot_attention(model, tokenizer, ids, path) -> pathlib.Path:
    """Grid of heatmaps, one row per layer and one column per head: row t of a heatmap is how much
    token t (query, y axis) takes from each earlier token (key, x axis)."""
    maps = model.attention_maps(ids[None])                   # n_layer x (1, nh, T, T)
    labels = [_visible(tokenizer.decode([int(i)])) for i in ids]
    L, H = len(maps), maps[0].shape[1]
    fig, axes = plt.subplots(L, H, figsize=(2.4 * H + 0.6, 2.4 * L + 0.6), squeeze=False)
    for layer, weights in enumerate(maps):
        for head in range(H):
            ax = axes[layer][head]
            ax.imshow(weights[0, head], cmap="viridis", vmin=0, vmax=1)
            ax.set_xticks(range(len(labels)), labels, fontsize=6, rotation=90)
            ax.set_yticks(range(len(labels)), labels, fontsize=6)
            ax.set_title(f"layer {layer} head {head}", fontsize=8)
    fig.suptitle(f"Attention weights on a validation snippet: {tokenizer.decode(ids.tolist())!r}", fontsize=9)
    fig.tight_layout()
    return _common.save_figure(fig, path)


def draw_block_backward(model, ids, path) -> pathlib.Path:
    """The backward graph of block 0 of the trained model on a few tokens (batch 1).

    The block's input is the snippet's embeddings as a leaf x (1, T, C); L = sum of the block's
    outputs stands in for the loss the rest of the network would compute. A block called on its own
    still runs in its scope in the model (transformer.h.0, the prefix of its parameters' names), so
    draw_graph boxes every sub-layer (ln_1, attn, ln_2, mlp) with its weights, and opens the fused
    multi-head attention to show the heads' primitives.
    """
    tr = model.transformer
    emb = tr.wte.weight.data[ids]                                         # (T, C)
    if model.config.pos == "learned":
        emb = emb + tr.wpe.weight.data[: len(ids)]
    x = Tensor(emb[None].copy(), requires_grad=True, name="x")           # (1, T, C)
    model.eval()
    try:
        y = tr.h[0](x)                                                    # (1, T, C)
        loss = y.sum()
        loss.backward(retain_graph=True)  # keeps the arrays: gradient norms on every edge, and the attention opened
        graph = draw_graph(loss, direction="backward", show_grads=True, expand={"MultiHeadAttention"})
        return _common.save_graph(graph, path)
    finally:
        model.zero_grad()
        model.train()


# ---------------------------------------------------------------- main

def prepare_data(settings, resume_dir):
    """Text, split, tokenizer (trained, or the resumed run's), ids and prompts. Writes nothing, and
    raises UsageError for a text the run cannot use: missing, empty, not UTF-8, or a validation split
    shorter than one window of --block-size + 1 tokens."""
    try:
        text, source = load_text(settings["text"])
    except (OSError, ValueError) as e:
        raise UsageError(str(e) if str(e).startswith("--text") else f"--text: {e}") from None
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    train_text, val_text = split_text(text)
    # Neither tokenizer makes more tokens than the text has bytes: say so now, not after BPE training.
    check_long_enough(len(train_text.encode("utf-8")), len(val_text.encode("utf-8")), settings["block_size"],
                      at_most=True)
    if resume_dir is not None:
        if json.loads((resume_dir / CONFIG).read_text())["data"]["sha256"] != digest:
            raise UsageError(f"--resume: the text {source} differs from the one this run trained on")
        tokenizer = tokenizers.load(resume_dir / TOKENIZER)
    else:
        tokenizer = build_tokenizer(settings["tokenizer"], train_text, text, settings["vocab_size"])
    prompts = settings["prompt"] or default_prompts(tokenizer, val_text)
    for prompt in prompts:  # fail now, not after training
        try:
            tokenizer.encode(prompt)
        except ValueError as e:
            raise UsageError(f"--prompt {prompt!r}: {e} of the char tokenizer (built from the text)") from None
    splits = {"train": encode(tokenizer, train_text), "val": encode(tokenizer, val_text)}
    check_long_enough(len(splits["train"]), len(splits["val"]), settings["block_size"])
    info = dict(source=source, sha256=digest, chars=len(text), val_chars=len(val_text), prompts=prompts)
    return tokenizer, splits, info


def check_long_enough(n_train: int, n_val: int, block_size: int, at_most: bool = False):
    """A batch is windows of block_size + 1 tokens, from either split; n_train and n_val count the
    splits' tokens, or bound them from above (at_most)."""
    for name, n in (("training split (the first 90% of the text)", n_train),
                    ("validation split (the last 10% of the text)", n_val)):
        if n < block_size + 1:
            has = f"at most {n:,}" if at_most else f"{n:,}"
            raise UsageError(f"--block-size {block_size} is too long for the text: a window needs {block_size + 1} "
                             f"tokens and the {name} has {has}; use a smaller --block-size or a longer --text")


def write_results(model, tokenizer, splits, history, baseline, settings, info, out) -> dict:
    """samples.txt, loss.png, attention.png, block_backward.svg; returns the summary (without wall time)."""
    print("writing the results:")
    ids = snippet(splits["val"], tokenizer, min(model.config.block_size, 16))
    files = {
        "samples": write_samples(model, tokenizer, info["prompts"], settings["sample_tokens"], settings["seed"],
                                 out / "samples.txt"),
        "loss_plot": plot_loss(history, baseline, out / "loss.png"),
        "attention": plot_attention(model, tokenizer, ids, out / "attention.png"),
        "block_backward": draw_block_backward(model, ids[:6], out / "block_backward.svg"),
        "checkpoint": out / CKPT, "config": out / CONFIG, "tokenizer": out / TOKENIZER,
    }
    step, train_loss, val_loss = history["eval"][-1]
    return {
        "config": model.config.to_dict(), "num_params": model.num_params(), "steps": step,
        "train_loss": train_loss, "val_loss": val_loss, "unigram_val_loss": baseline,
        "val_loss_per_char": val_loss * len(splits["val"]) / info["val_chars"],
        "tokenizer": settings["tokenizer"], "text": info["source"], "settings": settings,
        "checkpoint": str(out / CKPT), "files": {k: str(v) for k, v in files.items()},
    }


def main(argv=None) -> dict | None:
    """Train (or resume), then write the results; returns the summary, or None if interrupted."""
    t_start = time.perf_counter()
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.threads < 1:
        parser.error(f"--threads must be at least 1, got {args.threads}")
    previous = get_num_threads()
    set_num_threads(args.threads)
    try:
        return run(args, parser, t_start)
    finally:
        set_num_threads(previous)


def run(args, parser, t_start: float) -> dict | None:
    """The run itself, with the thread count main has set."""
    if args.tune_malloc:
        tune_malloc()  # keep freed arrays' memory for reuse: measured 1.2x faster steps (README, Performance)
    try:  # every mistake on the command line ends here, before anything is written or trained
        settings, out, resuming = resolve_settings(args)
        resume_dir = pathlib.Path(args.resume) if resuming else None
        tokenizer, splits, info = prepare_data(settings, resume_dir)
    except UsageError as e:
        parser.error(str(e))
    out = _common.out_dir(out)
    tokenizer.save(out / TOKENIZER)
    config = GPTConfig(vocab_size=tokenizer.vocab_size, **{k: settings[k] for k in MODEL_FIELDS})
    (out / CONFIG).write_text(json.dumps({"model": config.to_dict(), "settings": settings,
                                          "data": {"source": info["source"], "sha256": info["sha256"]}}, indent=1))

    Tensor.manual_seed(settings["seed"])  # the init, then the batches, come from this one generator
    model = GPT(config)
    optimizer = make_optimizer(model, settings)
    step, history = 0, {"train": [], "eval": []}
    if resuming:
        saved = checkpoint.load(resume_dir / CKPT, model, optimizer)  # weights, moments, RNG state
        step, history = saved["step"], saved["extra"]["history"]
    baseline = unigram_loss(splits["train"], splits["val"], tokenizer.vocab_size)
    print(f"data: {info['source']}, {info['chars']:,} characters; {settings['tokenizer']} tokenizer, vocab "
          f"{tokenizer.vocab_size}; train {len(splits['train']):,} tokens, val {len(splits['val']):,}")
    print(f"model: {model.num_params():,} parameters ({config.n_layer} layers, {config.n_head} heads, "
          f"width {config.n_embd}, context {config.block_size}); unigram baseline {baseline:.4f} nats/token")
    print(f"{'resuming at' if resuming else 'training from'} step {step} to {settings['steps']}, "
          f"batch {settings['batch_size']}x{settings['block_size']} tokens")

    step, interrupted, stats = train(model, optimizer, splits, settings, out, step, history)
    if interrupted:
        print(f"\ninterrupted: checkpoint at step {step} saved to {out / CKPT}\n"
              f"continue with: python demos/train_gpt.py --resume {out}")
        return None
    try:
        summary = write_results(model, tokenizer, splits, history, baseline, settings, info, out)
    except KeyboardInterrupt:
        print(f"\ninterrupted while writing the results; the checkpoint is saved, and "
              f"python demos/train_gpt.py --resume {out} writes them")
        return None
    tokens_per_sec = stats["tokens"] / stats["seconds"] if stats["seconds"] else None
    summary.update(tokens_per_sec=tokens_per_sec, train_time_s=stats["seconds"],
                   wall_time_s=time.perf_counter() - t_start)
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(f"  wrote {out / 'summary.json'}")
    print(f"  wrote {out / CKPT} (sample from it: python demos/sample.py {out} --prompt \"The\")")
    speed = f", {tokens_per_sec:,.0f} tokens/s" if tokens_per_sec else ""
    print(f"done: val loss {summary['val_loss']:.4f} nats/token (unigram baseline {baseline:.4f}); "
          f"{summary['wall_time_s']:.0f} s wall{speed}")
    return summary


if __name__ == "__main__":
    sys.exit(0 if main() is not None else 130)  # 130: the shell's code for "stopped by Ctrl-C"
