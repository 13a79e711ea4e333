"""The PyTorch-style GPT script (demos/torch_scripts/gpt_char.py) timed on PyTorch and on the engine through
tinygrad_like.torch: the same file, each framework in its own process, alternated round by round.

    python benchmarks/bench_facade.py [--rounds 3] [--steps 40]

Each run trains the script at 2 layers, 4 heads, width 64, context 32, batch 16 (its defaults) and
reports the median time of one training step (batch, forward, backward, AdamW step) after 5 warm-up
steps, as the script itself logs it. Both frameworks keep their default threads (what a learner gets)
unless --threads sets both (OMP/BLAS/our pool; on a machine shared with other jobs, 1 is steadier).
The machine line comes first. Run as a command, it writes benchmarks/results/bench_facade.json
(benchmarks/record.py), which benchmarks/report.py turns into the README's table.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))
import record  # noqa: E402
from machine import load_average, machine_line, thread_env, torch_available  # noqa: E402

SCRIPT = ROOT / "demos" / "torch_scripts" / "gpt_char.py"
WARMUP = 5


def run(kind: str, steps: int, threads: int | None = None) -> float:
    """Median seconds per training step of one run of the script on `kind` ("torch" or "engine")."""
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "log.json"
        prefix = [sys.executable] if kind == "torch" else [sys.executable, "-m", "tinygrad_like.torch"]
        cmd = prefix + [str(SCRIPT), "--max_iters", str(steps + WARMUP), "--eval_interval", str(10 ** 9),
                        "--eval_iters", "1", "--sample", "0", "--log", str(log)]
        env = {**(thread_env(threads) if threads else os.environ), "PYTHONPATH": str(ROOT)}
        out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
        if out.returncode:
            raise RuntimeError(f"{kind} run failed:\n{out.stderr[-3000:]}")
        return statistics.median(json.loads(log.read_text())["step_seconds"][WARMUP:])


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--threads", type=int, help="threads for both (BLAS, OpenMP, our pool); default: each "
                        "framework's own default")
    args = parser.parse_args(argv)
    print(machine_line(), flush=True)
    if not torch_available():
        print("PyTorch is not installed: nothing to compare with (pip install -e '.[interop]')")
        return {}
    times = {"torch": [], "engine": []}
    for r in range(args.rounds):
        for kind in ("torch", "engine") if r % 2 == 0 else ("engine", "torch"):
            times[kind].append(run(kind, args.steps, args.threads))
            print(f"round {r + 1} {kind:6s}: {times[kind][-1] * 1e3:7.1f} ms/step (load {load_average()})", flush=True)
    medians = {k: statistics.median(v) for k, v in times.items()}
    fastest = {k: min(v) for k, v in times.items()}  # on a shared machine the least disturbed run says most
    ratio = medians["engine"] / medians["torch"]
    print(f"median ms/step: PyTorch {medians['torch'] * 1e3:.1f}, engine via tinygrad_like.torch "
          f"{medians['engine'] * 1e3:.1f}; engine / PyTorch = {ratio:.2f}x "
          f"(fastest rounds: {fastest['torch'] * 1e3:.1f} and {fastest['engine'] * 1e3:.1f}, "
          f"{fastest['engine'] / fastest['torch']:.2f}x)")
    return {"steps": args.steps, "rounds": args.rounds, "threads": args.threads or 0,
            "torch_ms": [t * 1e3 for t in times["torch"]], "engine_ms": [t * 1e3 for t in times["engine"]],
            "median_torch_ms": medians["torch"] * 1e3, "median_engine_ms": medians["engine"] * 1e3, "ratio": ratio,
            "fastest_torch_ms": fastest["torch"] * 1e3, "fastest_engine_ms": fastest["engine"] * 1e3}


if __name__ == "__main__":
    record.save("bench_facade", {"": main()})
