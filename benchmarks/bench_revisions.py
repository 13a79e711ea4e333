"""Two revisions of the engine side by side: training-step time and the 2x2 add's overhead, before and after.

    python benchmarks/bench_revisions.py a65a24f                    # that commit against this working tree
    python benchmarks/bench_revisions.py a65a24f main --threads 1 2 --configs tiny small medium --rounds 3

A refactor must not cost speed; this is how a change is checked. Each revision is checked out into a temporary
git worktree (the working tree itself stands for "after" when no second revision is given), and every
measurement runs in a fresh process from that tree: bench_train.py's own worker (`--worker ours`, the same
GPT, AdamW and batches; malloc tuning on, as bench_train does), and a 2x2 add forward+backward timed against
numpy's own add in the same process. The two revisions alternate in every round, the one that goes first
swapped round by round, so a change of the machine's speed during the run, or a cost to whichever runs
second (a warm cache, a busy core), reaches both. Figures are medians over rounds of each process's median;
the ratio is after / before. Run as a command, it writes benchmarks/results/bench_revisions.json.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks")]

import record  # noqa: E402
from machine import machine_line, thread_env  # noqa: E402

# Runs in a worker process whose first sys.path entry is the revision's tree: the 2x2 add forward+backward,
# and numpy's add of the same arrays, median microseconds of 2,000 calls each after warm-up.
ADD_WORKER = r"""
import json, statistics, time
import numpy as np
from tinygrad_like import Tensor

def median_us(fn, n=2000):
    for _ in range(200):
        fn()
    times = []
    for _ in range(n):
        t0 = time.perf_counter(); fn(); times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6

rng = np.random.default_rng(0)
a_np, b_np = rng.standard_normal((2, 2)).astype(np.float32), rng.standard_normal((2, 2)).astype(np.float32)
a, b = Tensor(a_np, requires_grad=True), Tensor(b_np, requires_grad=True)
g = Tensor(np.ones((2, 2), np.float32))

def ours():
    a.grad = b.grad = None
    (a + b).backward(g)

print("RESULT " + json.dumps(dict(ours_us=median_us(ours), numpy_us=median_us(lambda: a_np + b_np))))
"""


def checkout(rev: str, into: Path) -> Path:
    """A detached worktree of `rev` at `into` (removed by the caller's cleanup)."""
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(into), rev], check=True)
    return into


def run(tree: Path, cmd: list[str], threads: int) -> dict:
    """Run `cmd` from `tree` with `tree` first on the import path; the JSON of its RESULT line."""
    env = thread_env(threads) | {"PYTHONPATH": str(tree)}
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=tree, env=env)
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("RESULT ")]
    if out.returncode or not line:
        raise RuntimeError(f"worker in {tree} failed:\n{out.stderr[-3000:]}")
    return json.loads(line[0][len("RESULT "):])


def step_ms(tree: Path, config: str, threads: int, steps: int, warmup: int) -> float:
    """Median ms per training step of bench_train's `config`, in one fresh process from `tree`."""
    cmd = [sys.executable, "benchmarks/bench_train.py", "--worker", "ours", "--config", config,
           "--steps", str(steps), "--warmup", str(warmup), "--threads", str(threads)]
    return statistics.median(run(tree, cmd, threads)["times"])


def compare(trees: dict, configs, threads_list, rounds: int, steps: int, warmup: int) -> dict:
    """{row: {label: median, ..., "ratio": after / before}} for each config x threads, and the 2x2 add."""
    (before, t_before), (after, t_after) = trees.items()
    pairs = ((before, t_before), (after, t_after))
    rows = {}
    for threads in threads_list:
        for config in configs:
            times = {before: [], after: []}
            for r in range(rounds):
                for label, tree in pairs[::1 if r % 2 == 0 else -1]:             # who goes first, swapped
                    times[label].append(step_ms(tree, config, threads, steps, warmup))
            row = {label: statistics.median(ts) for label, ts in times.items()}
            rows[f"{config}, {threads} thread{'s' if threads > 1 else ''} (ms/step)"] = row | dict(
                ratio=row[after] / row[before])
            print(f"{config:7s} {threads} thr  {before}: {row[before]:8.2f} ms  {after}: {row[after]:8.2f} ms"
                  f"  ratio {row[after] / row[before]:.3f}", flush=True)
    adds = {before: [], after: []}
    for r in range(rounds):
        for label, tree in pairs[::1 if r % 2 == 0 else -1]:
            adds[label].append(run(tree, [sys.executable, "-c", ADD_WORKER], 1))
    row = {label: statistics.median(r["ours_us"] for r in results) for label, results in adds.items()}
    numpy_us = statistics.median(r["numpy_us"] for results in adds.values() for r in results)
    rows["2x2 add f+b (us)"] = row | dict(ratio=row[after] / row[before], numpy_add_us=numpy_us)
    print(f"2x2 add f+b  {before}: {row[before]:.2f} us  {after}: {row[after]:.2f} us  (numpy's add "
          f"{numpy_us:.2f} us)", flush=True)
    return rows


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("before", help="a git revision (commit, branch, tag)")
    ap.add_argument("after", nargs="?", help="a git revision (default: this working tree, committed or not)")
    ap.add_argument("--configs", nargs="+", default=["tiny", "small", "medium"])
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    args = ap.parse_args(argv)
    print(machine_line(), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        trees = {f"before ({args.before})": checkout(args.before, Path(tmp) / "before")}
        try:
            trees[f"after ({args.after or 'working tree'})"] = (checkout(args.after, Path(tmp) / "after")
                                                               if args.after else ROOT)
            return compare(trees, args.configs, args.threads, args.rounds, args.steps, args.warmup)
        finally:
            for tree in trees.values():
                if tree != ROOT:
                    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)])


if __name__ == "__main__":
    rows = main()
    record.save("bench_revisions", {"before/after": rows})
