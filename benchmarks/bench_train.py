"""Training-step speed of small GPTs, ours next to PyTorch's, each framework in its own process.

    python benchmarks/bench_train.py                     # tiny, small, medium; 3 rounds
    python benchmarks/bench_train.py --configs tiny --rounds 5 --steps 30
    python benchmarks/bench_train.py --no-tune-malloc    # glibc's default allocator settings
    python benchmarks/bench_train.py --threads 1         # both frameworks on one thread
    python benchmarks/bench_train.py --defaults          # nothing set, against train_gpt.py's settings

The machine line comes first (benchmarks/machine.py: CPU, BLAS, matmul peak, memory bandwidth). Run as a
command, it writes benchmarks/results/bench_train.json (benchmarks/record.py; the README's table comes from
it through benchmarks/report.py); without --threads it runs on 1 thread, then on every core.

For each config: median ms per training step (forward, backward, AdamW step) after warm-up, tokens
per second, peak memory (a fresh process per measurement: ru_maxrss, and its growth over the RSS
after imports), and model-FLOPs utilisation against numpy's own float32 matmul peak measured in the
same process. When PyTorch is installed (optional: `pip install torch==2.13.0`, the CPU build), the
same model runs in PyTorch with the same number of threads, in a separate process (BLAS threads of
both frameworks fight over the cores when they share one), alternating our process and PyTorch's
every round, twice: with explicit-softmax attention and with its fused attention. Ratios are ours /
PyTorch's medians of the per-process medians; the spread is the min-max over rounds.

`--threads N` (default: every core) gives each worker N threads: PyTorch through
torch.set_num_threads(N); ours through the environment its process starts with, set before numpy
loads its BLAS: OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and MKL_NUM_THREADS for the BLAS, and
TINYGRAD_LIKE_NUM_THREADS for the engine's own thread pool. The table shows the thread count each
worker really got: for ours the pool's threads and numpy's BLAS threads (threadpoolctl, when installed;
BLAS is held to one while the pool has more, tinygrad_like/fast/pool.py), torch.get_num_threads().

`--defaults` asks what a learner gets who writes the loop above and sets nothing: three workers, alternated,
each started with no thread variable in its environment (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS,
MKL_NUM_THREADS and TINYGRAD_LIKE_NUM_THREADS removed): ours as the README builds the model and optimizer,
with no set_num_threads and no malloc tuning; ours as demos/train_gpt.py runs it (set_num_threads on every
usable core, tune_malloc); PyTorch (fused attention) with its own defaults. The matmul peak is measured
after the steps, so that nothing runs before the first step but the model's construction.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import record  # noqa: E402
from machine import blas_threads, machine_line, matmul_gflops, torch_available, worker_result  # noqa: E402

CONFIGS = {  # nanoGPT architecture, float32, dropout 0
    "tiny": dict(vocab_size=65, block_size=32, n_layer=2, n_head=2, n_embd=32, batch=8),
    "small": dict(vocab_size=128, block_size=128, n_layer=4, n_head=4, n_embd=128, batch=16),
    "medium": dict(vocab_size=128, block_size=256, n_layer=6, n_head=6, n_embd=384, batch=8),
}


def peak_rss_mb() -> float:
    """This process's peak RSS since it started (VmHWM). Not getrusage's ru_maxrss: Linux carries that
    over from the parent at fork, and the parent's machine line copies a 64 MB array."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def time_steps(step, warmup: int, steps: int) -> list[float]:
    for _ in range(warmup):
        step()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def worker_ours(cfg: dict, warmup: int, steps: int) -> dict:
    from models.gpt import GPT, GPTConfig
    from nn.optim import AdamW
    from tinygrad_like import Tensor
    Tensor.manual_seed(0)
    config = GPTConfig(**{k: v for k, v in cfg.items() if k != "batch"})
    rss0 = rss_mb()
    model = GPT(config)
    opt = AdamW(model.parameters(), lr=3e-4)
    rng = np.random.default_rng(0)
    x = rng.integers(0, cfg["vocab_size"], (cfg["batch"], cfg["block_size"]))
    y = rng.integers(0, cfg["vocab_size"], (cfg["batch"], cfg["block_size"]))

    def step():
        opt.zero_grad()
        _, loss = model(x, y)
        loss.backward()
        opt.step()
    from tinygrad_like import get_num_threads
    times = time_steps(step, warmup, steps)
    return dict(times=times, rss0=rss0, threads=f"{get_num_threads()}, BLAS {blas_threads()}")


def worker_torch(cfg: dict, warmup: int, steps: int, attention: str, threads: int | None) -> dict:
    """PyTorch's step on `threads` threads (None: PyTorch's own default)."""
    import torch

    from benchmarks.torch_gpt import TorchGPT
    if threads is not None:
        torch.set_num_threads(threads)
    torch.manual_seed(0)
    rss0 = rss_mb()
    model = TorchGPT(cfg["vocab_size"], cfg["block_size"], cfg["n_layer"], cfg["n_head"], cfg["n_embd"], attention)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    x = torch.randint(0, cfg["vocab_size"], (cfg["batch"], cfg["block_size"]))
    y = torch.randint(0, cfg["vocab_size"], (cfg["batch"], cfg["block_size"]))

    def step():
        opt.zero_grad(set_to_none=True)
        _, loss = model(x, y)
        loss.backward()
        opt.step()
    return dict(times=time_steps(step, warmup, steps), rss0=rss0, threads=torch.get_num_threads())


def run_worker(args) -> None:
    from tinygrad_like.fast.memory import tune_malloc
    if args.tune_malloc:
        tune_malloc()
    cfg = CONFIGS[args.config]
    peak = matmul_gflops(threads=args.threads)                              # BLAS on every thread asked for
    if args.worker == "ours":
        result = worker_ours(cfg, args.warmup, args.steps)
    else:
        result = worker_torch(cfg, args.warmup, args.steps, args.worker.split("-")[1], args.threads)
    result.update(peak_gflops=peak, maxrss_mb=peak_rss_mb())
    print("RESULT " + json.dumps(result))


DEFAULTS_KINDS = ("ours defaults", "ours as train_gpt", "torch-fused defaults")


def run_defaults_worker(args) -> None:
    """A --defaults worker: nothing set ("ours defaults", "torch-fused defaults"), or what demos/train_gpt.py
    sets ("ours as train_gpt"): every usable core for the pool, and tune_malloc."""
    cfg = CONFIGS[args.config]
    if args.worker == "ours as train_gpt":
        from tinygrad_like import set_num_threads
        from tinygrad_like.fast.memory import tune_malloc
        from tinygrad_like.fast.pool import usable_cores
        set_num_threads(usable_cores())
        tune_malloc()
    if args.worker.startswith("ours"):
        result = worker_ours(cfg, args.warmup, args.steps)
    else:
        result = worker_torch(cfg, args.warmup, args.steps, "fused", threads=None)
    result.update(peak_gflops=matmul_gflops(), maxrss_mb=peak_rss_mb())
    print("RESULT " + json.dumps(result))


def spawn(kind: str, config: str, args) -> dict:
    cmd = [sys.executable, __file__, "--worker", kind, "--config", config, "--steps", str(args.steps),
           "--warmup", str(args.warmup), "--threads", str(args.threads)]
    cmd += [] if args.tune_malloc else ["--no-tune-malloc"]
    cmd += ["--defaults"] if args.defaults else []
    return worker_result(cmd, kind, None if args.defaults else args.threads)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--no-tune-malloc", dest="tune_malloc", action="store_false")
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="threads per framework (default: all cores)")
    ap.add_argument("--defaults", action="store_true",
                    help="nothing set, against train_gpt.py's settings and PyTorch's defaults (see above)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--config", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return run_defaults_worker(args) if args.defaults else run_worker(args)

    from models.arithmetic import flops_per_token
    from models.config import GPTConfig
    kinds = list(DEFAULTS_KINDS[:2]) if args.defaults else ["ours"]
    if not args.no_torch:
        if torch_available():
            kinds += [DEFAULTS_KINDS[2]] if args.defaults else ["torch-explicit", "torch-fused"]
        else:
            print("PyTorch is not installed: our figures only (pip install torch==2.13.0 for the yardstick)")
    print(machine_line())
    if args.defaults:
        print(f"each framework's defaults, no thread variables in the workers' environment (and ours as "
              f"train_gpt.py sets it), {args.rounds} rounds x {args.steps} steps after {args.warmup} warm-up")
    else:
        print(f"{args.threads} threads per framework, malloc tuning {'on' if args.tune_malloc else 'off'}, "
              f"{args.rounds} rounds x {args.steps} steps after {args.warmup} warm-up")
    summary = {}
    for name in args.configs:
        cfg = CONFIGS[name]
        runs = {k: [] for k in kinds}
        for _ in range(args.rounds):
            for kind in kinds:  # alternate the frameworks round by round
                runs[kind].append(spawn(kind, name, args))
        tokens = cfg["batch"] * cfg["block_size"]
        config = GPTConfig(**{k: v for k, v in cfg.items() if k != "batch"})
        flops = flops_per_token(config) * tokens
        row = {}
        for kind, results in runs.items():
            medians = [statistics.median(r["times"]) for r in results]
            ms = statistics.median(medians)
            peak = statistics.median(r["peak_gflops"] for r in results)
            row[kind] = dict(ms=ms, spread=(min(medians), max(medians)), tok_s=tokens / ms * 1e3,
                             maxrss_mb=max(r["maxrss_mb"] for r in results),
                             train_mb=max(r["maxrss_mb"] - r["rss0"] for r in results),
                             mfu=flops / (ms / 1e3) / (peak * 1e9), peak_gflops=peak,
                             threads=results[0]["threads"])
        summary[name] = row
        print(f"\n{name}: {cfg}")
        print(f"  {'':20s} {'ms/step':>9s} {'spread':>15s} {'tok/s':>9s} "
              f"{'peak MB':>8s} {'train MB':>9s} {'MFU':>6s} {'threads':>12s}")
        for kind, r in row.items():
            print(f"  {kind:20s} {r['ms']:9.2f} {r['spread'][0]:7.2f}-{r['spread'][1]:<7.2f} {r['tok_s']:9.0f} "
                  f"{r['maxrss_mb']:8.0f} {r['train_mb']:9.0f} {r['mfu']:6.1%} {str(r['threads']):>12s}")
        for kind in kinds[1:]:
            print(f"  {kinds[0]} / {kind}: {row[kinds[0]]['ms'] / row[kind]['ms']:.2f}")
    return summary


if __name__ == "__main__":
    argv = sys.argv[1:]
    if "--worker" in argv:                        # a worker process: prints its RESULT line, records nothing
        main(argv)
    elif "--defaults" in argv:                    # a learner's loop with nothing set, with and without kernels
        import importlib.util
        kernels = importlib.util.find_spec("numba") and os.environ.get("TINYGRAD_LIKE_KERNELS") not in ("off", "0")
        label = "with the fast extra's kernels" if kernels else "without kernels (numpy only)"
        record.save("bench_train_defaults" if kernels else "bench_train_defaults_numpy", {label: main(argv)},
                    script="bench_train")
    elif "--threads" in argv:
        record.save("bench_train", {"given threads": main(argv)})
    else:  # the README's table: one thread, then every core
        record.save("bench_train", {f"{n} threads": main(argv + ["--threads", str(n)]) for n in (1, os.cpu_count())})
