"""Everything around the training loop of demos/train_gpt.py: the run's settings, its output folder,
checkpoints and resuming, Ctrl-C, progress, and the files the run leaves behind.

train_gpt.py holds the loop itself (batch, forward, loss, backward, clip, step, evaluate); this module
holds what a long run needs besides:

    settings      DEFAULTS < PRESETS[--preset] < flags; when resuming, the saved run's settings, of
                  which only RESUME_OVERRIDES may change (resolve_settings, check_settings)
    the folder    config.json and tokenizer.json first (start_folder), ckpt.safetensors every
                  --ckpt-interval steps and at the end (Run.save), the results last (finish)
    Ctrl-C        held while an update is applied (hold_interrupt); a step it cuts off earlier is rolled
                  back, its RNG draws undone, and the last whole step is saved (Run.checkpointed), so
                  a resumed run gives the same bits as an uninterrupted one
    progress      a tqdm bar on a terminal, plain `step N/total | loss ...` lines otherwise
    results       samples.txt, loss.png, attention.png, block_backward.svg and summary.json

Run on its own, it says what a run folder holds and how to continue it:

    python demos/training_run.py out/train_gpt
"""
from __future__ import annotations

import contextlib
import json
import os
import pathlib
import re
import signal
import sys
import threading
import time

import numpy as np
import safetensors

import _common
from _common import UsageError, plt
from models import tokenizer as tokenizers
from models.gpt import GPTConfig
from nn import state as checkpoint
from tinygrad_like import Tensor, draw_graph
from tinygrad_like import random as _random

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
                sample_tokens=300, prompt=None, full_graph=False)
MODEL_FIELDS = ("block_size", "n_layer", "n_head", "n_embd", "n_kv_head", "dropout", "bias", "norm", "mlp",
                "mlp_hidden", "pos", "prenorm", "tie_weights", "n_expert", "top_k", "dtype")
# --health without --steps or --out: a short run of the same model into a folder of its own, so a health
# check never replaces the main run's outputs (out/train_gpt) and ends in about a quarter of its time; 200
# steps see the start the rules judge most (initial loss, update size) and the settling after warmup.
HEALTH_STEPS, HEALTH_OUT = 200, "out/train_gpt_health"
# What --resume may change: how long to train and how often to look, never the model or the data.
RESUME_OVERRIDES = ("steps", "eval_interval", "ckpt_interval", "log_interval", "sample_tokens", "prompt",
                    "full_graph")


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
    t.add_argument("--full-graph", action="store_const", const=True,
                   help="block_backward.svg with every fused op opened into its primitives (about 90 nodes, "
                        "several screens tall) instead of one node per op (about 25, one layer's story)")
    t.add_argument("--health", type=int, nargs="?", const=10, metavar="N",
                   help="every N steps, record the training health (nn/health.py): print the rules that fire "
                        "and a one-line verdict, write health.png and a health section in summary.json; "
                        f"unless given, --steps {HEALTH_STEPS} and --out {HEALTH_OUT} (default: off; alone: N = 10)")
    t.add_argument("--no-tune-malloc", dest="tune_malloc", action="store_false",
                   help="keep glibc's default allocator settings (see tinygrad_like/fast/memory.py)")
    t.add_argument("--threads", type=int, metavar="N", default=usable_cores(),
                   help="threads for products and attention (tinygrad_like.set_num_threads; default: every "
                        "core, as PyTorch; 1 leaves numpy's BLAS its own threads)")
    return p


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, where the OS tells), else the machine's."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def resolve_settings(args) -> tuple[dict, pathlib.Path, pathlib.Path | None]:
    """(settings, out dir, the folder to resume or None). Settings: DEFAULTS < preset < flags; when resuming, the saved
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
        return settings, pathlib.Path(args.out or folder), folder
    preset = given.get("preset", DEFAULTS["preset"])
    settings = {**DEFAULTS, **PRESETS[preset], **given, "preset": preset}
    health_check = given.get("health") is not None
    if health_check and "steps" not in given:
        settings["steps"] = min(HEALTH_STEPS, settings["steps"])
    settings["min_lr"] = settings["lr"] / 10 if settings["min_lr"] is None else settings["min_lr"]
    if settings["warmup"] is None:  # a twentieth of the run, and short enough for any --steps (even 1)
        settings["warmup"] = min(max(1, settings["steps"] // 20), settings["steps"] - 1)
    settings["ckpt_interval"] = settings["ckpt_interval"] or settings["eval_interval"]
    check_settings(settings)
    return settings, pathlib.Path(args.out or (HEALTH_OUT if health_check else "out/train_gpt")), None


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


# ---------------------------------------------------------------- progress: a bar on a terminal, lines otherwise

class BarProgress:
    """tqdm bar: step, train loss (moving average, weight 0.1 on the newest batch), the last val loss with
    the step it was measured at, tokens/s; tqdm adds the elapsed time and the time left."""

    def __init__(self, start: int, total: int):
        from tqdm import tqdm
        self.bar = tqdm(total=total, initial=start, unit="step", dynamic_ncols=True, file=sys.stdout)
        self.avg = None

    def update(self, step, loss, last_eval, tok_s):
        """`last_eval`: the newest [step, train loss, val loss] of the history, or None before the first."""
        self.avg = loss if self.avg is None else 0.9 * self.avg + 0.1 * loss
        val_text = f"{last_eval[2]:.3f} (step {last_eval[0]})" if last_eval else "-"
        self.bar.set_postfix_str(f"loss {self.avg:.3f} | val {val_text} | {tok_s:,.0f} tok/s", refresh=False)
        self.bar.update(step - self.bar.n)

    def close(self):
        self.bar.close()


class LineProgress:
    """One plain line every `interval` steps and at every step whose validation loss was measured:
    step N/total | loss X | tok/s Z | eta M:SS, with `| val Y` after the loss only on the lines of a step
    that was evaluated (a value repeated on the lines between would read as a curve that stopped).
    `loss` is the mean over the steps since the last line."""

    def __init__(self, start: int, total: int, interval: int):
        self.total, self.interval, self.losses = total, interval, []
        self.t0, self.start = time.perf_counter(), start

    def update(self, step, loss, last_eval, tok_s):
        """`last_eval`: the newest [step, train loss, val loss] of the history, or None before the first."""
        self.losses.append(loss)
        evaluated = last_eval is not None and last_eval[0] == step
        if step % self.interval and step != self.total and not evaluated:
            return
        done = step - self.start
        eta = (time.perf_counter() - self.t0) / done * (self.total - step) if done else 0.0
        val_text = f" | val {last_eval[2]:.4f}" if evaluated else ""
        print(f"step {step}/{self.total} | loss {np.mean(self.losses):.4f}{val_text} | "
              f"tok/s {tok_s:.0f} | eta {_duration(eta)}", flush=True)
        self.losses = []

    def close(self):
        pass


def _duration(seconds: float) -> str:
    return f"{int(seconds // 60)}:{int(seconds % 60):02d}"


# ---------------------------------------------------------------- the run: folder, checkpoints, Ctrl-C

def start_folder(out, tokenizer, config: GPTConfig, settings: dict, info: dict) -> pathlib.Path:
    """Create the output folder with the tokenizer and config.json (the model, every setting, the text's
    name and SHA-256), which --resume reads back."""
    out = _common.out_dir(out)
    tokenizer.save(out / TOKENIZER)
    (out / CONFIG).write_text(json.dumps({"model": config.to_dict(), "settings": settings,
                                          "data": {"source": info["source"], "sha256": info["sha256"]}}, indent=1))
    return out


def save_checkpoint(out, model, optimizer, step: int, history: dict):
    """ckpt.safetensors: weights, AdamW moments, step, RNG state, and the loss history (nn/state.py)."""
    checkpoint.save(out / CKPT, model, optimizer, step, extra={"history": history})


class Run:
    """One run's state around the loop: the step reached, the loss history, the speed, the progress
    display, and the RNG state after the last whole step (what a Ctrl-C rolls back to).

    history: {"train": [batch loss of step 0, 1, ...], "eval": [[step, train loss, val loss], ...]},
    saved in every checkpoint (for loss.png after a resume). With resume_dir, the weights, AdamW
    moments, RNG state, step and history are loaded from its checkpoint.
    """

    def __init__(self, out, settings, model, optimizer, resume_dir=None):
        self.out, self.settings, self.model, self.optimizer = out, settings, model, optimizer
        self.step, self.history, self.resumed = 0, {"train": [], "eval": []}, resume_dir is not None
        if self.resumed:
            saved = checkpoint.load(resume_dir / CKPT, model, optimizer)  # weights, moments, RNG state
            self.step, self.history = saved["step"], saved["extra"]["history"]
        self.tokens, self.seconds = 0, 0.0
        self.interrupted, self.progress, self.rng_state = False, None, None

    @property
    def last_val(self) -> float | None:
        return self.history["eval"][-1][2] if self.history["eval"] else None

    def evaluated(self) -> bool:
        """Is the loss at this step measured already (by the run an interrupt cut off)?"""
        return bool(self.history["eval"]) and self.history["eval"][-1][0] == self.step

    def record_eval(self, losses: dict):
        self.history["eval"].append([self.step, losses["train"], losses["val"]])

    def start_progress(self):
        """A tqdm bar on a terminal, else a line every --log-interval steps (default eval interval / 4)."""
        s = self.settings
        interval = s["log_interval"] or max(1, s["eval_interval"] // 4)
        self.progress = BarProgress(self.step, s["steps"]) if sys.stdout.isatty() else \
            LineProgress(self.step, s["steps"], interval)

    def stepped(self, loss: float):
        """Called inside hold_interrupt once the update is applied: the step is whole."""
        self.history["train"].append(loss)
        self.step += 1
        self.rng_state = _random.get_state()

    def log(self, loss: float, tokens: int, seconds: float):
        """Count a step's tokens and time (evaluation excluded) and show the progress."""
        self.tokens, self.seconds = self.tokens + tokens, self.seconds + seconds
        last_eval = self.history["eval"][-1] if self.history["eval"] else None
        self.progress.update(self.step, loss, last_eval, self.tokens / self.seconds)

    def save(self):
        save_checkpoint(self.out, self.model, self.optimizer, self.step, self.history)

    def save_if_due(self):
        if self.step % self.settings["ckpt_interval"] == 0 and self.step < self.settings["steps"]:
            self.save()

    @contextlib.contextmanager
    def checkpointed(self):
        """Save a checkpoint when the block ends. On Ctrl-C, first undo the random draws of the step it
        cut off (the update itself is never cut: hold_interrupt), then save, say how to resume, and set
        self.interrupted instead of raising."""
        self.rng_state = _random.get_state()  # the RNG as it was after the last completed step
        try:
            yield
            self.save()
        except KeyboardInterrupt:
            _random.set_state(self.rng_state)
            self.save()
            self.interrupted = True
        finally:
            if self.progress is not None:
                self.progress.close()
        if self.interrupted:
            print(f"\ninterrupted: checkpoint at step {self.step} saved to {self.out / CKPT}\n"
                  f"continue with: python demos/train_gpt.py --resume {self.out}")

    def describe(self, info, tokenizer, splits, baseline):
        """The three lines a run starts with: the data, the model, where training starts."""
        s, config = self.settings, self.model.config
        print(f"data: {info['source']}, {info['chars']:,} characters; {s['tokenizer']} tokenizer, vocab "
              f"{tokenizer.vocab_size}; train {len(splits['train']):,} tokens, val {len(splits['val']):,}")
        print(f"model: {self.model.num_params():,} parameters ({config.n_layer} layers, {config.n_head} heads, "
              f"width {config.n_embd}, context {config.block_size}); unigram baseline {baseline:.4f} nats/token")
        print(f"{'resuming at' if self.resumed else 'training from'} step {self.step} to {s['steps']}, "
              f"batch {s['batch_size']}x{s['block_size']} tokens")


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


def saved_tokenizer(resume_dir: pathlib.Path, digest: str, source: str):
    """The tokenizer of the run in resume_dir; UsageError if its text (SHA-256 `digest`) was another."""
    if json.loads((resume_dir / CONFIG).read_text())["data"]["sha256"] != digest:
        raise UsageError(f"--resume: the text {source} differs from the one this run trained on")
    return tokenizers.load(resume_dir / TOKENIZER)


def sample_prompts(tokenizer, given: list[str] | None, val_text: str) -> list[str]:
    """The --prompt flags, else default_prompts; UsageError for one the tokenizer cannot encode."""
    prompts = given or default_prompts(tokenizer, val_text)
    for prompt in prompts:
        try:
            tokenizer.encode(prompt)
        except ValueError as e:
            raise UsageError(f"--prompt {prompt!r}: {e} of the char tokenizer (built from the text)") from None
    return prompts


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
    """attention.png: the figure of attention_figure, saved."""
    return _common.save_figure(attention_figure(model, tokenizer, ids), path)


def attention_figure(model, tokenizer, ids):
    """Grid of heatmaps, one row per layer and one column per head: row t of a heatmap is how much
    token t (the query, y axis) takes from each earlier token (the key, x axis); one colour bar, the
    weight from 0 to 1 (each row sums to 1), for every heatmap."""
    maps = model.attention_maps(ids[None])                   # n_layer x (1, nh, T, T)
    labels = [_visible(tokenizer.decode([int(i)])) for i in ids]
    L, H = len(maps), maps[0].shape[1]
    fig, axes = plt.subplots(L, H, figsize=(2.4 * H + 1.4, 2.4 * L + 0.8), squeeze=False, layout="constrained")
    for layer, weights in enumerate(maps):
        for head in range(H):
            ax = axes[layer][head]
            image = ax.imshow(weights[0, head], cmap="viridis", vmin=0, vmax=1)
            ax.set_xticks(range(len(labels)), labels, fontsize=6, rotation=90)
            ax.set_yticks(range(len(labels)), labels, fontsize=6)
            ax.set_title(f"layer {layer} head {head}", fontsize=8)
            if layer == L - 1:
                ax.set_xlabel("key (the token attended to)", fontsize=8)
            if head == 0:
                ax.set_ylabel("query (the token attending)", fontsize=8)
    fig.colorbar(image, ax=axes, shrink=min(0.6, 2.0 / L + 0.2), label="attention weight (each row sums to 1)")
    fig.suptitle(f"Attention weights on a validation snippet: {tokenizer.decode(ids.tolist())!r}", fontsize=9)
    return fig


def draw_block_backward(model, ids, path, full: bool = False) -> pathlib.Path:
    """The backward graph of block 0 of the trained model on a few tokens (batch 1).

    The block's input is the snippet's embeddings as a leaf x (1, T, C); L = sum of the block's
    outputs stands in for the loss the rest of the network would compute. A block called on its own
    still runs in its scope in the model (transformer.h.0, the prefix of its parameters' names), so
    draw_graph boxes every sub-layer (ln_1, attn, ln_2, mlp) with its weights. By default each fused
    op is one node (LayerNorm, Linear, MultiHeadAttention, GELU: the block's story, about one screen);
    `full` (--full-graph) opens every one into the primitives of its composite, mostly the reshapes,
    permutes and slices that split the heads, several screens tall.
    """
    tr = model.transformer
    emb = tr.wte.weight.numpy()[ids]                                         # (T, C)
    if model.config.pos == "learned":
        emb = emb + tr.wpe.weight.numpy()[: len(ids)]
    x = Tensor(emb[None].copy(), requires_grad=True, name="x")           # (1, T, C)
    model.eval()
    try:
        y = tr.h[0](x)                                                    # (1, T, C)
        loss = y.sum()
        loss.backward(retain_graph=True)  # keeps the arrays: gradient norms on every edge, fused ops openable
        graph = draw_graph(loss, direction="backward", show_grads=True, expand=True if full else "auto")
        return _common.save_graph(graph, path)
    finally:
        model.zero_grad()
        model.train()


def check_long_enough(n_train: int, n_val: int, block_size: int, at_most: bool = False):
    """A batch is windows of block_size + 1 tokens, from either split; n_train and n_val count the
    splits' tokens, or bound them from above (at_most)."""
    for name, n in (("training split (the first 90% of the text)", n_train),
                    ("validation split (the last 10% of the text)", n_val)):
        if n < block_size + 1:
            has = f"at most {n:,}" if at_most else f"{n:,}"
            raise UsageError(f"--block-size {block_size} is too long for the text: a window needs {block_size + 1} "
                             f"tokens and the {name} has {has}; use a smaller --block-size or a longer --text")

def finish(run: Run, tokenizer, splits, baseline, info, t_start: float, health=None) -> dict | None:
    """Write samples.txt, loss.png, attention.png, block_backward.svg and summary.json (with `health`, a
    nn.health.HealthMonitor, also health.png and summary["health"]); returns the summary, or None if
    Ctrl-C stopped the writing (the checkpoint is saved: a resume writes them)."""
    try:
        summary = write_results(run.model, tokenizer, splits, run.history, baseline, run.settings, info, run.out)
        if health is not None:
            summary["files"]["health"] = str(health.plot(run.out / "health.png"))
            print(f"  wrote {run.out / 'health.png'}")
            summary["health"] = health.summary()
    except KeyboardInterrupt:
        print(f"\ninterrupted while writing the results; the checkpoint is saved, and "
              f"python demos/train_gpt.py --resume {run.out} writes them")
        return None
    tokens_per_sec = run.tokens / run.seconds if run.seconds else None
    summary.update(tokens_per_sec=tokens_per_sec, train_time_s=run.seconds, wall_time_s=time.perf_counter() - t_start)
    (run.out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(f"  wrote {run.out / 'summary.json'}")
    print(f"  wrote {run.out / CKPT} (sample from it: python demos/sample.py {run.out} --prompt \"The\")")
    speed = f", {tokens_per_sec:,.0f} tokens/s" if tokens_per_sec else ""
    print(f"done: val loss {summary['val_loss']:.4f} nats/token (unigram baseline {baseline:.4f}); "
          f"{summary['wall_time_s']:.0f} s wall{speed}")
    if health is not None:
        print(health.verdict())  # last, so a run where nothing fired still says it was checked
    return summary


def write_results(model, tokenizer, splits, history, baseline, settings, info, out) -> dict:
    """samples.txt, loss.png, attention.png, block_backward.svg; returns the summary (without wall time)."""
    print("writing the results:")
    ids = snippet(splits["val"], tokenizer, min(model.config.block_size, 16))
    files = {
        "samples": write_samples(model, tokenizer, info["prompts"], settings["sample_tokens"], settings["seed"],
                                 out / "samples.txt"),
        "loss_plot": plot_loss(history, baseline, out / "loss.png"),
        "attention": plot_attention(model, tokenizer, ids, out / "attention.png"),
        "block_backward": draw_block_backward(model, ids[:6], out / "block_backward.svg",
                                              full=settings.get("full_graph", False)),
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


# ---------------------------------------------------------------- on its own: what a run folder holds

def main(argv=None) -> dict:
    """Print a run folder's state (settings, step reached, last losses, finished or not) and the
    command that continues it; returns that state."""
    p = _common.parser("training_run", "Say what a train_gpt.py output folder holds and how to continue it.",
                       out=False)
    p.add_argument("run", help="a train_gpt.py output folder (config.json, ckpt.safetensors)")
    args = p.parse_args(argv)
    folder = pathlib.Path(args.run)
    if not (folder / CONFIG).is_file() or not (folder / CKPT).is_file():
        p.error(f"{folder} holds no {CONFIG} and {CKPT} (not a train_gpt.py output folder)")
    settings = json.loads((folder / CONFIG).read_text())["settings"]
    with safetensors.safe_open(str(folder / CKPT), framework="numpy") as f:  # the header only, no arrays
        meta = f.metadata()
    step, history = json.loads(meta["step"]), json.loads(meta["extra"])["history"]
    state = dict(step=step, steps=settings["steps"], preset=settings["preset"],
                 last_eval=history["eval"][-1] if history["eval"] else None,
                 finished=(folder / "summary.json").is_file())
    print(f"{folder}: preset {settings['preset']}, step {step} of {settings['steps']}")
    if state["last_eval"]:
        at, train_loss, val_loss = state["last_eval"]
        print(f"  last measured at step {at}: train {train_loss:.4f}, val {val_loss:.4f} nats/token")
    if state["finished"]:
        print(f"  finished: results written (summary.json); sample with python demos/sample.py {folder}")
    else:
        print(f"  not finished: continue with python demos/train_gpt.py --resume {folder}")
    return state


if __name__ == "__main__":
    main()
