"""Same seed, step by step: nanoGPT's train.py and minGPT's adder, unchanged, on PyTorch and on the engine
(`python -m tinygrad_like.torch`), each with its dropout off and on, and the loss each side prints at
every logged step compared.

    python benchmarks/same_seed.py [--steps 30] [--scratch DIR]

The programs, their copies and data come as in benchmarks/real_programs.py (its `prepare`): nanoGPT's
shakespeare_char config at real_programs' small size, logging every step (losses printed to 4 decimals),
and minGPT's adder (losses printed every 10 iterations, to 5 decimals). Both seed PyTorch's generator
(torch.manual_seed), so on the engine the initial weights, the batches and the dropout masks are
PyTorch's numbers (tinygrad_like/pytorch_streams/generator.py); what remains is float32 arithmetic done in a
different order. Prints, per program, both sides' losses at steps 0, 10 and 30 and the largest relative
difference over every logged step up to each.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]
import real_programs  # noqa: E402
from machine import load_average, machine_line, torch_available  # noqa: E402

NANO = ["config/train_shakespeare_char.py", "--device=cpu", "--compile=False", "--eval_iters=5",
        "--eval_interval=1000", "--log_interval=1", "--block_size=64", "--batch_size=12", "--n_layer=2",
        "--n_head=4", "--n_embd=128"]
NANO_LOSS = r"iter (\d+): loss ([\d.]+)"
ADDER_LOSS = r"iter (\d+): train loss ([\d.]+)"
NO_DROPOUT_MINGPT = ["--model.embd_pdrop=0.0", "--model.resid_pdrop=0.0", "--model.attn_pdrop=0.0"]


def programs(steps: int) -> list[tuple]:
    """(name, program, folder, script, arguments, loss regex: group 1 the step, group 2 the loss)."""
    nano = NANO + [f"--max_iters={steps}", f"--lr_decay_iters={steps}"]
    adder = [f"--trainer.max_iters={steps + 1}"]
    return [("nanoGPT, dropout 0", "nanoGPT", ".", "train.py", nano + ["--dropout=0.0"], NANO_LOSS),
            ("nanoGPT, dropout 0.2 (its config's)", "nanoGPT", ".", "train.py", nano, NANO_LOSS),
            ("minGPT adder, dropout 0", "minGPT", "projects/adder", "adder.py", adder + NO_DROPOUT_MINGPT, ADDER_LOSS),
            ("minGPT adder, dropout 0.1 (its default)", "minGPT", "projects/adder", "adder.py", adder, ADDER_LOSS)]


def losses(side: str, side_dir: Path, program: str, folder: str, script: str, args: list, pattern: str) -> dict:
    """{step: loss} as the program prints them, run on PyTorch (side "torch") or on the engine ("ours")."""
    program_dir = side_dir / program
    prefix = [sys.executable] if side == "torch" else [sys.executable, "-m", "tinygrad_like.torch"]
    path = [str(side_dir / "stubs"), str(program_dir)] + ([str(ROOT)] if side == "ours" else [])
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, "PYTHONPATH": os.pathsep.join(path)}
    out = subprocess.run(prefix + [script, *args], cwd=program_dir / folder, capture_output=True, text=True, env=env,
                         timeout=real_programs.TIMEOUT_S)
    if out.returncode:
        raise RuntimeError(f"{side}: {script} failed:\n{out.stderr[-1500:]}")
    return {int(step): float(loss) for step, loss in re.findall(pattern, out.stdout)}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=30, help="training steps (default 30)")
    ap.add_argument("--scratch", type=Path, help="keep the copies here (default: a temporary directory)")
    args = ap.parse_args(argv)
    if not torch_available():
        raise SystemExit("same_seed: needs PyTorch, to compare with")
    sources = {name: Path(os.environ.get(f"{name.upper()}_DIR", f"/work/programs/{name}"))
               for name in ("nanoGPT", "minGPT", "makemore")}
    shakespeare = Path(os.environ.get("SHAKESPEARE_TXT", "/work/programs/char-rnn/data/tinyshakespeare/input.txt"))
    print(machine_line(), flush=True)
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="same_seed."))
    dirs = {side: scratch / side for side in ("torch", "ours")}
    for side_dir in dirs.values():
        if not side_dir.exists():
            real_programs.prepare(side_dir, sources, shakespeare)
    report = {}
    for name, *how in programs(args.steps):
        got = {side: losses(side, side_dir, *how) for side, side_dir in dirs.items()}
        steps = sorted(set(got["torch"]) & set(got["ours"]))
        rel = {s: abs(got["ours"][s] - got["torch"][s]) / abs(got["torch"][s]) for s in steps}
        shown = [s for s in (0, 10, args.steps) if s in rel]
        report[name] = {s: (got["torch"][s], got["ours"][s], max(rel[t] for t in steps if t <= s)) for s in shown}
        print(f"{name} (load {load_average()}):")
        for s, (theirs, ours, worst) in report[name].items():
            print(f"  step {s:3d}: PyTorch {theirs}  ours {ours}  largest relative difference up to here {worst:.1e}")
    return report


if __name__ == "__main__":
    main()
