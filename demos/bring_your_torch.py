"""Your PyTorch code, inside: a GPT written in plain PyTorch, trained on the engine through tinygrad_like.torch.

The model is demos/torch_scripts/gpt_char.py, a file that knows nothing of this project (per-head
nn.Linear key/query/value, a tril buffer with masked_fill, F.softmax(dim=-1), blocks in nn.Sequential,
Dropout, LayerNorm, AdamW). This demo
  1. trains it on the engine: `python -m tinygrad_like.torch gpt_char.py`, the script unmodified;
  2. with PyTorch installed, trains the same file under PyTorch, and prints both loss curves side by
     side (same seed, but the two frameworks draw different random numbers, so the weights and batches
     differ and the curves agree in shape, not digit for digit; tests/test_torch_facade_parity.py
     copies the weights across and gets the same losses and gradients);
  3. builds the model again through the facade and looks inside: the backward graph of its first block,
     every op in the box of the module that owns it under the state_dict's names
     (blocks.0.sa.heads.1.key), and a page that steps through the backprop of its first head.

Run:  python demos/bring_your_torch.py [--out DIR] [--steps 300]
Writes losses.png, block_backward.svg and head_backprop.html.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import _common
import tinygrad_like.torch as torch
from tinygrad_like import backprop_steps, draw_graph

SCRIPT = _common.ROOT / "demos" / "torch_scripts" / "gpt_char.py"


def train(framework: str, args, out) -> dict | None:
    """Run the script on `framework` ("engine" or "PyTorch") and return its log (None if PyTorch is missing)."""
    log = out / f"log_{framework.lower()}.json"
    prefix = [sys.executable, "-m", "tinygrad_like.torch"] if framework == "engine" else [sys.executable]
    cmd = prefix + [str(SCRIPT), "--max_iters", str(args.steps), "--eval_interval", str(max(args.steps // 3, 1)),
                    "--sample", "120", "--log", str(log)]
    env = {**os.environ, "PYTHONPATH": str(_common.ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    print(f"\n$ {' '.join(c if c != sys.executable else 'python' for c in cmd[:4])} ...   ({framework})")
    result = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if framework == "PyTorch" and "No module named 'torch'" in result.stderr:
        print("PyTorch is not installed: only the engine's run (pip install -e '.[interop]' to compare)")
        return None
    if result.returncode:
        raise SystemExit(f"the {framework} run failed:\n{result.stderr[-2000:]}")
    print((result.stderr.strip() + "\n" if framework == "engine" else "") + result.stdout.rstrip())
    return json.loads(log.read_text())


def side_by_side(logs: dict, out) -> None:
    """Both loss curves as a table (every tenth of the run, each a mean over 10 steps) and a picture."""
    names = list(logs)
    steps = len(logs[names[0]]["losses"])
    print("\nstep  " + "  ".join(f"{n:>8s}" for n in names) + "   (training loss, mean of 10 steps)")
    for s in range(0, steps, max(steps // 10, 1)):
        window = slice(max(s - 9, 0), s + 1)
        print(f"{s:4d}  " + "  ".join(f"{sum(logs[n]['losses'][window]) / len(logs[n]['losses'][window]):8.4f}"
                                      for n in names))
    for n in names:
        ms = sorted(logs[n]["step_seconds"])[len(logs[n]["step_seconds"]) // 2] * 1e3
        print(f"{n}: median {ms:.1f} ms per step (this machine, now; benchmarks/bench_facade.py measures properly)")
    _common.save_figure(loss_figure(logs), out / "losses.png")


LABELS = {"engine": "the engine, through tinygrad_like.torch", "PyTorch": "PyTorch"}


def loss_figure(logs: dict):
    """The loss curves of the runs in `logs`, titled by what ran: one engine when PyTorch was not run."""
    fig, ax = _common.plt.subplots(figsize=(7, 4))
    for n in logs:
        ax.plot(logs[n]["losses"], label=LABELS[n], alpha=0.8)
    title = ("The same PyTorch script on two engines" if len(logs) > 1 else
             "A PyTorch script on the engine, through tinygrad_like.torch (PyTorch not run)")
    ax.set(xlabel="step", ylabel="training loss (nats/char)", title=title)
    ax.legend()
    return fig


def look_inside(out) -> None:
    """The script's model built through the facade: its first block's backward graph, its first head's backprop."""
    spec = importlib.util.spec_from_file_location("gpt_char_on_the_engine", SCRIPT)
    gpt_char = importlib.util.module_from_spec(spec)
    torch.install()
    try:
        spec.loader.exec_module(gpt_char)  # the unmodified file; its `import torch` is the facade here
    finally:
        torch.uninstall()
    torch.manual_seed(0)
    model = gpt_char.GPT(vocab_size=40, n_embd=16, n_head=2, n_layer=1, block_size=8)
    x = torch.randn(1, 4, 16, requires_grad=True)
    block = model.blocks[0]
    print("\nInside the model, as the engine sees it (names from its state_dict):")
    print("  " + ", ".join(name for name, _ in block.named_parameters(prefix="blocks.0"))[:300] + ", ...")
    graph = draw_graph(block(x).pow(2).mean(), direction="backward")
    _common.save_graph(graph, out / "block_backward.svg")
    head = block.sa.heads[0]
    page = backprop_steps(head(x).pow(2).mean(), out / "head_backprop.html",
                          title="blocks.0.sa.heads.0: one head of the PyTorch script, backprop step by step")
    print(f"  wrote {page}")


def main(argv=None) -> dict:
    p = _common.parser("bring_your_torch", __doc__.splitlines()[0])
    p.add_argument("--steps", type=_common.positive, default=300, help="training steps for each framework")
    p.add_argument("--no-torch", action="store_true", help="skip the PyTorch run")
    args = p.parse_args(argv)
    out = _common.out_dir(args.out)
    logs = {"engine": train("engine", args, out)}
    if not args.no_torch and (theirs := train("PyTorch", args, out)) is not None:
        logs["PyTorch"] = theirs
    side_by_side(logs, out)
    look_inside(out)
    return logs


if __name__ == "__main__":
    main()
