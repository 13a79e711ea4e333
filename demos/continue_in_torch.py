"""Continue training an exported model in PyTorch, on the same data, from the same loss.

    python demos/export_hf.py out/train_gpt               # first: out/train_gpt/hf/
    python demos/continue_in_torch.py out/train_gpt --steps 20

Loads RUN/hf/ with transformers' own classes (no code of ours in the model), tokenizes the same text
with the exported tokenizer (the same ids as ours), measures the loss on the very batches train_gpt.py
evaluated on (so the first line repeats the run's last train/val loss), then runs AdamW steps in
PyTorch with the run's settings (betas 0.9/0.99, weight decay on matrices only, gradient clipping,
the final learning rate of the run's cosine schedule) and measures again.

PyTorch is optional for this project: without torch and transformers this prints the install command
and exits with status 0. On many GPUs, the same loop runs under torchrun or accelerate (see README,
"When you outgrow one CPU").
"""
from __future__ import annotations

import json
import pathlib
import time

import numpy as np

import _common
from data import get_batch, load_text, split_text

INSTALL = 'pip install -e ".[interop]"   (torch 2.13.0 CPU, transformers, tokenizers)'


def build_parser():
    p = _common.ArgumentParser(prog="python demos/continue_in_torch.py", description=__doc__.splitlines()[0],
                               formatter_class=_common.HelpFormatter)
    p.add_argument("run", help="a train_gpt.py output folder holding hf/ (written by demos/export_hf.py)")
    p.add_argument("--steps", type=_common.positive, default=20, help="AdamW steps in PyTorch")
    p.add_argument("--lr", type=float, default=None, help="default: the run's final learning rate (min_lr)")
    p.add_argument("--threads", type=_common.positive, default=2, help="torch.set_num_threads")
    return p


def estimate_loss(model, splits, settings, torch) -> dict:
    """train_gpt.estimate_loss in PyTorch: the same generator seed, so the same batches."""
    rng = np.random.default_rng(settings["seed"] + 1)
    B, T = settings["batch_size"], settings["block_size"]
    out = {}
    model.eval()
    with torch.no_grad():
        for name, ids in splits.items():
            losses = [batch_loss(model, *get_batch(ids, B, T, rng), torch).item()
                      for _ in range(settings["eval_iters"])]
            out[name] = float(np.mean(losses))
    model.train()
    return out


def batch_loss(model, x, y, torch):
    """Mean cross-entropy of the next token, nats/token, as GPT.forward computes it."""
    logits = model(torch.from_numpy(x)).logits                                   # (B, T, V)
    return torch.nn.functional.cross_entropy(logits.flatten(0, 1), torch.from_numpy(y).flatten())


def main(argv=None) -> dict | None:
    p = build_parser()
    args = p.parse_args(argv)
    try:
        import torch
        import transformers
    except ImportError as e:
        print(f"continue_in_torch.py: skipped, PyTorch / transformers are not installed ({e.name}). "
              f"Install:\n  {INSTALL}")
        return None
    transformers.logging.set_verbosity_error()
    run = pathlib.Path(args.run)
    hf_dir = run / "hf"
    if not (hf_dir / "config.json").is_file():
        p.error(f"{hf_dir} has no export; run python demos/export_hf.py {run} first")
    torch.set_num_threads(args.threads)
    settings = json.loads((run / "config.json").read_text())["settings"]
    model = transformers.AutoModelForCausalLM.from_pretrained(hf_dir)
    tok = transformers.AutoTokenizer.from_pretrained(hf_dir)
    text, source = load_text(settings["text"])
    splits = {name: np.asarray(tok.encode(part), dtype=np.int64)
              for name, part in zip(("train", "val"), split_text(text))}
    print(f"loaded {type(model).__name__} ({sum(p.numel() for p in model.parameters()):,} parameters, "
          f"{model.dtype}) and its tokenizer from {hf_dir}; {source}: train {len(splits['train']):,} tokens, "
          f"val {len(splits['val']):,}")

    summary_file = run / "summary.json"
    if summary_file.is_file():
        s = json.loads(summary_file.read_text())
        print(f"ours (train_gpt.py, step {s['steps']}):   train {s['train_loss']:.4f}  val {s['val_loss']:.4f}")
    before = estimate_loss(model, splits, settings, torch)
    print(f"PyTorch, same batches, before:   train {before['train']:.4f}  val {before['val']:.4f}")

    decay = [p for p in model.parameters() if p.ndim >= 2]
    no_decay = [p for p in model.parameters() if p.ndim < 2]
    lr = args.lr if args.lr is not None else settings["min_lr"]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": settings["weight_decay"]},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=lr, betas=(0.9, 0.99))
    rng = np.random.default_rng(settings["seed"] + 2)                # batches the run has not drawn
    t0 = time.perf_counter()
    for step in range(1, args.steps + 1):
        x, y = get_batch(splits["train"], settings["batch_size"], settings["block_size"], rng)
        loss = batch_loss(model, x, y, torch)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if settings["grad_clip"]:
            torch.nn.utils.clip_grad_norm_(model.parameters(), settings["grad_clip"])
        optimizer.step()
        if step == 1 or step % 5 == 0 or step == args.steps:
            print(f"PyTorch AdamW step {step:3d}: batch loss {loss.item():.4f}")
    seconds = time.perf_counter() - t0
    after = estimate_loss(model, splits, settings, torch)
    print(f"PyTorch, same batches, after {args.steps} steps: train {after['train']:.4f}  val {after['val']:.4f} "
          f"({seconds:.1f} s, lr {lr:g})")
    return {"before": before, "after": after, "steps": args.steps}


if __name__ == "__main__":
    main()
