"""The yardstick for demos/train_gpt.py: the same GPT trained by PyTorch on the same batches.

    pip install torch==2.13.0        # CPU build; not a dependency of tinygrad_like
    python benchmarks/train_gpt_torch.py [the same flags as train_gpt.py] [--compare out/train_gpt]

Everything but the engine is shared with the main job, so only speed (and float rounding) differ:
  * the model: nanoGPT's architecture written below in PyTorch (wte + wpe, pre-norm blocks of
    LayerNorm, causal self-attention with c_attn/c_proj, a tanh-GELU MLP, ln_f, tied lm_head),
    starting from *the same initial weights*: our GPT is built with the same seed and copied in;
  * the data, tokenizer and batches: demos/data.py, batches drawn from the library RNG as in the
    main job, so step i sees the same tokens in both;
  * the optimizer: AdamW with the same two groups (decay on matrices only), betas, warmup + cosine
    schedule (nn.optim.cosine_schedule) and gradient clipping; the same fixed evaluation batches.
torch gets --threads threads (train_gpt.py's flag: every core by default). Reported: wall time (setup
to end), tokens per second of the training steps alone (evaluation excluded, as in the main job), final
train/val loss.
With --compare DIR (a train_gpt.py output folder) the two runs are printed side by side and written to
benchmarks/results/train_gpt_torch.json (benchmarks/record.py), from which benchmarks/report.py writes the
README's table of the main job.
"""
from __future__ import annotations

import json
import math
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "demos"), str(ROOT / "benchmarks")]

import record  # noqa: E402

INSTALL = "pip install torch==2.13.0"


def main(argv=None):
    try:
        import torch
    except ImportError:
        print(f"PyTorch is not installed, so there is nothing to compare against. Install the CPU build "
              f"with:\n    {INSTALL}\nand run this again. (tinygrad_like itself never needs torch.)")
        return None
    t_start = time.perf_counter()
    import numpy as np

    import train_gpt
    from data import build_tokenizer, encode, get_batch, load_text, split_text
    from models.gpt import GPT, GPTConfig
    from nn.optim import cosine_schedule
    from tinygrad_like import Tensor
    from tinygrad_like import random as _random

    parser = train_gpt.build_parser()
    parser.add_argument("--compare", metavar="DIR", help="a train_gpt.py output folder to print next to ours")
    args = parser.parse_args(argv)
    if args.resume:
        parser.error("--resume is not supported")
    if args.compare:
        print(record.machine_line())  # measured now, at the start, and kept in the results file
    try:
        settings, _, _ = train_gpt.resolve_settings(args)
    except train_gpt.UsageError as e:
        parser.error(str(e))
    unsupported = {k: settings[k] for k, v in dict(n_kv_head=None, norm="layernorm", mlp="gelu", mlp_hidden=None,
                                                    pos="learned", prenorm=True, n_expert=0, bias=True,
                                                    tie_weights=True, dtype="float32").items()
                   if settings[k] != v}
    if unsupported:
        raise SystemExit(f"train_gpt_torch.py implements the nanoGPT architecture only; not {unsupported}")
    torch.set_num_threads(args.threads)                                      # train_gpt's --threads: every core

    text, source = load_text(settings["text"])
    train_text, val_text = split_text(text)
    tokenizer = build_tokenizer(settings["tokenizer"], train_text, text, settings["vocab_size"])
    splits = {"train": encode(tokenizer, train_text), "val": encode(tokenizer, val_text)}
    config = GPTConfig(vocab_size=tokenizer.vocab_size, **{k: settings[k] for k in train_gpt.MODEL_FIELDS})

    Tensor.manual_seed(settings["seed"])  # as train_gpt.py: seed, build the model, then draw batches
    ours = GPT(config)
    model = TorchGPT(torch, config)
    model.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in ours.state_dict(with_tied=True).items()})
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": settings["weight_decay"]},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=settings["lr"], betas=train_gpt.BETAS, eps=1e-8)

    B, T, steps = settings["batch_size"], settings["block_size"], settings["steps"]

    def estimate_loss():
        rng, out = np.random.default_rng(settings["seed"] + 1), {}
        model.eval()
        with torch.no_grad():
            for name, ids in splits.items():
                out[name] = float(np.mean([model(*map(torch.from_numpy, get_batch(ids, B, T, rng)))[1].item()
                                           for _ in range(settings["eval_iters"])]))
        model.train()
        return out

    print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads; {source}, {settings['tokenizer']} "
          f"tokenizer; {sum(p.numel() for p in model.parameters()):,} parameters; {steps} steps of {B}x{T}")
    train_seconds, losses = 0.0, estimate_loss()
    for step in range(steps):
        t0 = time.perf_counter()
        lr = cosine_schedule(step, settings["lr"], settings["warmup"], steps, settings["min_lr"])
        for group in optimizer.param_groups:
            group["lr"] = lr
        x, y = get_batch(splits["train"], B, T, _random.rng())
        _, loss = model(torch.from_numpy(x), torch.from_numpy(y))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if settings["grad_clip"] > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), settings["grad_clip"])
        optimizer.step()
        train_seconds += time.perf_counter() - t0
        if (step + 1) % settings["eval_interval"] == 0 or step + 1 == steps:
            losses = estimate_loss()
            print(f"step {step + 1}/{steps} | loss {loss.item():.4f} | val {losses['val']:.4f} | "
                  f"tok/s {(step + 1) * B * T / train_seconds:.0f}", flush=True)
    result = {"engine": f"torch {torch.__version__} ({torch.get_num_threads()} threads)",
              "wall_time_s": time.perf_counter() - t_start, "train_time_s": train_seconds,
              "tokens_per_sec": steps * B * T / train_seconds, "train_loss": losses["train"],
              "val_loss": losses["val"], "steps": steps}
    print(json.dumps(result, indent=1))
    if args.compare:
        ours = compare(result, json.loads((pathlib.Path(args.compare) / "summary.json").read_text()))
        record.save("train_gpt_torch", {"tinygrad_like": ours, "PyTorch": result}, argv)
    return result


def compare(torch_result: dict, summary: dict) -> dict:
    """Print our run (a train_gpt.py summary) beside PyTorch's; returns our figures of the comparison."""
    print(f"\n{'':22}{'tinygrad_like':>16}{'PyTorch':>16}")
    for key, fmt in (("wall_time_s", "{:.1f}"), ("train_time_s", "{:.1f}"), ("tokens_per_sec", "{:,.0f}"),
                     ("train_loss", "{:.4f}"), ("val_loss", "{:.4f}")):
        print(f"{key:22}{fmt.format(summary[key]):>16}{fmt.format(torch_result[key]):>16}")
    print(f"{'unigram_val_loss':22}{summary['unigram_val_loss']:>16.4f}")
    for line in who_took_how_long(summary, torch_result):
        print(line)
    return {key: summary[key] for key in ("wall_time_s", "train_time_s", "tokens_per_sec", "train_loss", "val_loss",
                                          "unigram_val_loss", "steps")}


def who_took_how_long(ours: dict, theirs: dict) -> list[str]:
    """Each time as a plain ratio, ours over PyTorch's, with both times: below 1, tinygrad_like took less.
    (A speed ratio worded "PyTorch is 0.9x faster" read backwards on a run where PyTorch was slower.)"""
    return [f"tinygrad_like took {ours[key] / theirs[key]:.2f} of PyTorch's {what} "
            f"({ours[key]:.1f} s against {theirs[key]:.1f} s)"
            for key, what in (("wall_time_s", "wall time"), ("train_time_s", "time in training steps"))]


def TorchGPT(torch, config):
    """nanoGPT's model in PyTorch, with our names, so our state_dict(with_tied=True) loads as it is."""
    nn, F = torch.nn, torch.nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
            self.c_proj = nn.Linear(config.n_embd, config.n_embd)
            self.attn_dropout, self.resid_dropout = nn.Dropout(config.dropout), nn.Dropout(config.dropout)

        def forward(self, x):
            B, T, C = x.shape
            nh = config.n_head
            q, k, v = self.c_attn(x).split(C, dim=2)
            q, k, v = (t.view(B, T, nh, C // nh).transpose(1, 2) for t in (q, k, v))  # (B, nh, T, hs)
            att = (q @ k.transpose(-2, -1)) / math.sqrt(C // nh)                         # (B, nh, T, T)
            att = att.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
            y = self.attn_dropout(att.softmax(dim=-1)) @ v                                # (B, nh, T, hs)
            y = y.transpose(1, 2).contiguous().view(B, T, C)                              # (B, T, C)
            return self.c_proj(y)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(config.n_embd), nn.LayerNorm(config.n_embd)
            self.attn = CausalSelfAttention()
            self.mlp = nn.ModuleDict(dict(c_fc=nn.Linear(config.n_embd, 4 * config.n_embd),
                                          c_proj=nn.Linear(4 * config.n_embd, config.n_embd)))
            self.drop = nn.Dropout(config.dropout)

        def forward(self, x):
            x = x + self.drop(self.attn(self.ln_1(x)))
            h = F.gelu(self.mlp.c_fc(self.ln_2(x)), approximate="tanh")
            return x + self.drop(self.mlp.c_proj(h))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(config.vocab_size, config.n_embd), wpe=nn.Embedding(config.block_size, config.n_embd),
                drop=nn.Dropout(config.dropout), h=nn.ModuleList([Block() for _ in range(config.n_layer)]),
                ln_f=nn.LayerNorm(config.n_embd)))
            self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
            self.lm_head.weight = self.transformer.wte.weight  # tied, as in our GPT

        def forward(self, idx, targets):
            tr = self.transformer
            x = tr.drop(tr.wte(idx) + tr.wpe(torch.arange(idx.shape[1])))
            for block in tr.h:
                x = block(x)
            logits = self.lm_head(tr.ln_f(x))
            return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1))

    return GPT()


if __name__ == "__main__":
    main()
