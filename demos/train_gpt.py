"""The main job: train a small GPT on real text on a CPU, and write everything worth looking at.

    python demos/train_gpt.py                            # the default run: preset "small", see below
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

This file is the loop, top to bottom: data, model, optimizer, then `train`. Everything a long run
needs around it (settings from flags, presets or a saved run; the output folder; checkpoints, resuming
and Ctrl-C; progress lines; samples, plots and the summary) is in demos/training_run.py.

Written into --out (default out/train_gpt/):
    ckpt.safetensors    weights, AdamW moments, step, RNG state and loss history (nn/state.py), saved
                        every --ckpt-interval steps, at the end, and when you press Ctrl-C
    config.json         the GPTConfig and every run setting;  tokenizer.json  the tokenizer
    samples.txt         text generated from a few prompts
    loss.png            training and validation loss against step, with the unigram baseline
    attention.png       attention weights of every head of every layer on one validation snippet
    block_backward.svg  the backward graph of one transformer block, boxed by sub-layer
    summary.json        config, num_params, steps, train/val loss, unigram_val_loss, tokens/s, wall time
    health.png          with --health N: every N steps, per layer, activation mean/std, saturated units,
                        gradient norm and update-to-data ratio (nn/health.py; also summary["health"]);
                        a rule that fires (initial loss far from ln V, an update ratio far from usual,
                        saturation, exploding gradients, NaN/Inf) prints one line: what, and the usual fix;
                        the run ends with a verdict ("health: 0 rules fired over 20 checks ..."). Unless
                        given, --health makes the run 200 steps (--steps) into out/train_gpt_health (--out)

Resuming is exact: batches come from the library RNG, which the checkpoint saves and restores, and
an interrupted step is rolled back (its RNG draws undone; the update itself cannot be cut in half), so
stopping and resuming gives bit-identical parameters and loss history to an uninterrupted run.

Defaults: preset "small" (4 layers, 4 heads, width 128, context 64 tokens, 932,608 parameters), batch
32, 800 steps at lr 2e-3, BPE with 1024 tokens, on every core (--threads); the run ends at validation
loss 3.5172 nats/token against the unigram baseline's 5.932. Why BPE: per character of validation text
(`val_loss_per_char` in summary.json) the same 600-step run reached 1.54 nats with chars, 1.28 with
BPE-512 and 1.23 with BPE-1024; a BPE token carries about 2.9 characters, so a 64-token window sees
about 190 characters of context. 800 steps are about 11 passes over the 143k training tokens, so the
train loss falls well below validation (2.56 against 3.52). Dropout 0.1 gained 0.01 nats, so it stays
off. The run's time and speed, and PyTorch's on the same batches (benchmarks/train_gpt_torch.py), are
benchmark results: docs/performance.md.
"""
from __future__ import annotations

import hashlib
import sys
import time

import numpy as np

from _common import UsageError
from data import build_tokenizer, encode, get_batch, load_text, split_text, unigram_loss
from models.gpt import GPT, GPTConfig
from nn.health import HealthMonitor
from nn.optim import AdamW, clip_grad_norm, cosine_schedule
from tinygrad_like import Tensor, get_num_threads, no_grad, set_num_threads
from tinygrad_like import random as _random
from tinygrad_like.fast.memory import tune_malloc
from training_run import (
    MODEL_FIELDS,
    Run,
    build_parser,
    check_long_enough,
    finish,
    hold_interrupt,
    resolve_settings,
    sample_prompts,
    saved_tokenizer,
    start_folder,
)

BETAS = (0.9, 0.99)  # beta2 = 0.99 as nanoGPT uses for small models: faster to adapt on short runs


# ---------------------------------------------------------------- data

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
        tokenizer = saved_tokenizer(resume_dir, digest, source)
    else:
        tokenizer = build_tokenizer(settings["tokenizer"], train_text, text, settings["vocab_size"])
    prompts = sample_prompts(tokenizer, settings["prompt"], val_text)  # checked now, not after training
    splits = {"train": encode(tokenizer, train_text), "val": encode(tokenizer, val_text)}
    check_long_enough(len(splits["train"]), len(splits["val"]), settings["block_size"])
    info = dict(source=source, sha256=digest, chars=len(text), val_chars=len(val_text), prompts=prompts)
    return tokenizer, splits, info


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


def evaluate_if_due(model, splits, settings, run: Run):
    """The loss on both splits every --eval-interval steps and after the last step, once per step."""
    due = run.step % settings["eval_interval"] == 0 or run.step == settings["steps"]
    if due and not run.evaluated():
        run.record_eval(estimate_loss(model, splits, settings))


def train(model, optimizer, splits, settings, run: Run, health: HealthMonitor | None = None) -> bool:
    """Steps run.step .. settings["steps"]; False if Ctrl-C stopped the run first (run.checkpointed
    then rolled back the step it cut off and saved the last whole one). `health`, when given, watches
    every step around the forward, backward and update (it records only every N-th)."""
    steps, B, T = settings["steps"], settings["batch_size"], settings["block_size"]
    with run.checkpointed():  # a checkpoint at the end, or at Ctrl-C
        evaluate_if_due(model, splits, settings, run)  # the untrained model's loss (or one an interrupt cut off)
        run.start_progress()
        while run.step < steps:
            t0 = time.perf_counter()
            lr = cosine_schedule(run.step, settings["lr"], settings["warmup"], steps, settings["min_lr"])
            x, y = get_batch(splits["train"], B, T, _random.rng())                     # (B, T) each
            step = run.step
            if health:
                health.before_forward(step)
            loss = forward_backward(model, x, y)
            if health:
                health.after_backward(step, loss)
            with hold_interrupt():  # from here the step completes, or it never happened
                for group in optimizer.param_groups:
                    group["lr"] = lr
                if settings["grad_clip"] > 0:
                    clip_grad_norm(model.parameters(), settings["grad_clip"])
                optimizer.step()
                if health:
                    health.after_step(step)
                optimizer.zero_grad()
                run.stepped(loss)  # step + 1, the loss in the history, the RNG state a Ctrl-C rolls back to
            seconds = time.perf_counter() - t0
            evaluate_if_due(model, splits, settings, run)
            run.log(loss, B * T, seconds)
            run.save_if_due()  # every --ckpt-interval steps
    return not run.interrupted


# ---------------------------------------------------------------- main

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
        tune_malloc()  # keep freed arrays' memory for reuse (tinygrad_like/fast/memory.py)
    try:  # every mistake on the command line ends here, before anything is written or trained
        settings, out, resume_dir = resolve_settings(args)
        tokenizer, splits, info = prepare_data(settings, resume_dir)
    except UsageError as e:
        parser.error(str(e))
    config = GPTConfig(vocab_size=tokenizer.vocab_size, **{k: settings[k] for k in MODEL_FIELDS})
    out = start_folder(out, tokenizer, config, settings, info)

    Tensor.manual_seed(settings["seed"])  # the init, then the batches, come from this one generator
    model = GPT(config)
    optimizer = make_optimizer(model, settings)
    state = Run(out, settings, model, optimizer, resume_dir)  # step 0, or the checkpoint's step
    baseline = unigram_loss(splits["train"], splits["val"], tokenizer.vocab_size)
    state.describe(info, tokenizer, splits, baseline)
    health = None
    if args.health is not None:
        if args.health < 1:
            parser.error(f"--health must be at least 1 (record every N steps), got {args.health}")
        health = HealthMonitor(model, every=args.health, vocab_size=tokenizer.vocab_size)
    if not train(model, optimizer, splits, settings, state, health):
        return None
    return finish(state, tokenizer, splits, baseline, info, t_start, health)


if __name__ == "__main__":
    sys.exit(0 if main() is not None else 130)  # 130: the shell's code for "stopped by Ctrl-C"
