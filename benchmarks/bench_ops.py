"""Per-op speed, in three parts, after the machine line (benchmarks/machine.py).

1. Overhead, in this process: forward+backward of a 2x2 add and of a (256x256)@(256x256) matmul, next
   to plain numpy doing the same arithmetic (add: a+b, and the upstream gradient handed to both
   inputs; matmul: A@B forward, G@Bᵀ and Aᵀ@G backward).
2. The row reductions of the fused ops (tinygrad_like/fast/arrays.py: array_max, array_sum) next to numpy's
   own max and sum, on attention-score shapes of the tiny and small benchmark configs.
3. The hot ops of a training step at the small config's shapes (B=16, T=128, 4 heads of 32, MLP 512,
   vocabulary 1024), forward and backward with a given upstream gradient ("block products": the four
   projections of one transformer block, each a Linear with bias: 12 products), next to PyTorch when it is
   installed, each framework in its own process, the processes alternated round by round (`--rounds`),
   each op's time the median of `--op-repeats` runs, then the median over rounds. Next to ours, the
   numpy floor: one np.multiply(a, b, out=c) over an array of the op's largest operand's size, the
   least one pass over that memory can cost; an elementwise op whose forward and backward read and
   write it a few times costs a few floors. Below the table, attention next to its FLOP time: its six
   dense matmuls (forward q kᵀ and p v, backward dv, dp, dq, dk; 2·B·nh·T·T·hs flops each) at numpy's
   float32 matmul peak with the same threads, measured in the worker (machine.matmul_gflops).

    python benchmarks/bench_ops.py [--repeats 2000] [--rounds 3] [--op-repeats 20] [--threads 2]
    python benchmarks/bench_ops.py --threads 1 --clock cpu    # CPU time: steadier on a shared machine

Run as a command, it writes benchmarks/results/bench_ops.json (benchmarks/record.py); without --threads
and --clock it runs twice: on every core in wall time, then on 1 thread in CPU time.

`--threads N` (default: every core) as in bench_train.py: torch.set_num_threads(N) for PyTorch; for
ours, OPENBLAS_NUM_THREADS / OMP_NUM_THREADS / MKL_NUM_THREADS and TINYGRAD_LIKE_NUM_THREADS (the
engine's own thread pool) set in the worker's environment before numpy loads.
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
from machine import machine_line, matmul_gflops, median_seconds, torch_available, worker_result  # noqa: E402
from tinygrad_like import Tensor  # noqa: E402
from tinygrad_like.fast.arrays import array_max, array_sum  # noqa: E402

B, T, N_HEAD, HS, VOCAB = 16, 128, 4, 32, 1024
C = N_HEAD * HS
HOT_OPS = {  # name: (shape of the input, shape of the floor's array: the op's largest operand)
    "attention": ((B, T, 3 * C), (B, T, 3 * C)),
    "gelu": ((B, T, 4 * C), (B, T, 4 * C)),
    "exact gelu": ((B, T, 4 * C), (B, T, 4 * C)),
    "layernorm": ((B, T, C), (B, T, C)),
    "softmax": ((B, N_HEAD, T, T), (B, N_HEAD, T, T)),
    "cross-entropy": ((B * T, VOCAB), (B * T, VOCAB)),
    "linear": ((B, T, C), (B, T, 4 * C)),
    "block products": ((B, T, C), (B, T, 4 * C)),
}
BLOCK_LINEARS = ((C, 3 * C), (C, C), (C, 4 * C), (4 * C, C))  # (in, out) of a block's four projections
ATTENTION_FLOPS = 6 * 2 * B * N_HEAD * T * T * HS  # six dense (B, nh, T, T) matmuls, causal tiles counted too


def median_us(fn, repeats: int, warmup: int = 50, clock=time.perf_counter) -> float:
    return median_seconds(fn, repeats, warmup, clock) * 1e6


def ours_hot_ops(rng) -> dict:
    """name -> a function running the op forward and backward in tinygrad_like."""
    data = {name: rng.standard_normal(shape).astype(np.float32) for name, (shape, _) in HOT_OPS.items()}
    x = {name: Tensor(a, requires_grad=True) for name, a in data.items()}
    w_ln, b_ln = (Tensor(rng.standard_normal(C).astype(np.float32), requires_grad=True) for _ in range(2))
    w_fc = Tensor(rng.standard_normal((4 * C, C)).astype(np.float32) * 0.02, requires_grad=True)
    b_fc = Tensor(np.zeros(4 * C, np.float32), requires_grad=True)
    targets = rng.integers(0, VOCAB, B * T)
    block = [(Tensor(rng.standard_normal((B, T, n_in)).astype(np.float32), requires_grad=True),
              Tensor(rng.standard_normal((n_out, n_in)).astype(np.float32) * 0.02, requires_grad=True),
              Tensor(np.zeros(n_out, np.float32), requires_grad=True)) for n_in, n_out in BLOCK_LINEARS]
    forward = {
        "attention": lambda: x["attention"].multihead_attention(N_HEAD, is_causal=True),
        "gelu": lambda: x["gelu"].gelu(),
        "exact gelu": lambda: x["exact gelu"].gelu(approximate="none"),
        "layernorm": lambda: x["layernorm"].layernorm(-1, 1e-5, w_ln, b_ln),
        "softmax": lambda: x["softmax"].softmax(-1),
        "cross-entropy": lambda: x["cross-entropy"].sparse_categorical_crossentropy(targets),
        "linear": lambda: x["linear"].linear(w_fc, b_fc),
        "block products": lambda: [xi.linear(w, b) for xi, w, b in block],
    }
    params = [w_ln, b_ln, w_fc, b_fc, *x.values(), *(t for layer in block for t in layer)]

    def run(name):
        for p in params:
            p.grad = None
        ys = forward[name]()
        for y in ys if isinstance(ys, list) else [ys]:
            y.backward(None if y.ndim == 0 else np.ones(y.shape, np.float32))
    return {name: (lambda name=name: run(name)) for name in HOT_OPS}


def torch_hot_ops(rng) -> dict:
    """name -> a function running the op forward and backward in PyTorch, on the same shapes."""
    import torch
    import torch.nn.functional as F
    data = {name: torch.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)
            for name, (shape, _) in HOT_OPS.items()}
    w_ln, b_ln = (torch.randn(C, requires_grad=True) for _ in range(2))
    w_fc, b_fc = torch.randn(4 * C, C, requires_grad=True), torch.zeros(4 * C, requires_grad=True)
    targets = torch.tensor(rng.integers(0, VOCAB, B * T))
    block = [(torch.randn(B, T, n_in, requires_grad=True), (torch.randn(n_out, n_in) * 0.02).requires_grad_(),
              torch.zeros(n_out, requires_grad=True)) for n_in, n_out in BLOCK_LINEARS]

    def attention(qkv):
        q, k, v = (t.view(B, T, N_HEAD, HS).transpose(1, 2) for t in qkv.split(C, dim=2))  # (B, nh, T, hs)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, C)
    forward = {
        "attention": attention,
        "gelu": lambda x: F.gelu(x, approximate="tanh"),
        "exact gelu": lambda x: F.gelu(x),
        "layernorm": lambda x: F.layer_norm(x, (C,), w_ln, b_ln),
        "softmax": lambda x: torch.softmax(x, -1),
        "cross-entropy": lambda x: F.cross_entropy(x, targets),
        "linear": lambda x: F.linear(x, w_fc, b_fc),
        "block products": lambda _: [F.linear(xi, w, b) for xi, w, b in block],
    }
    params = [w_ln, b_ln, w_fc, b_fc, *data.values(), *(t for layer in block for t in layer)]

    def run(name):
        for p in params:
            p.grad = None
        ys = forward[name](data[name])
        for y in ys if isinstance(ys, list) else [ys]:
            y.backward(None if y.ndim == 0 else torch.ones_like(y))
    return {name: (lambda name=name: run(name)) for name in HOT_OPS}


def floor_us(shape, repeats: int, clock=time.perf_counter) -> float:
    a, b = np.ones(shape, np.float32), np.ones(shape, np.float32)
    c = np.empty_like(a)
    return median_us(lambda: np.multiply(a, b, out=c), repeats, warmup=3, clock=clock)


def run_worker(args) -> None:
    """In a fresh process: time every hot op of one framework (and, for ours, the numpy floors)."""
    from tinygrad_like.fast.memory import tune_malloc
    if args.tune_malloc:
        tune_malloc()
    rng = np.random.default_rng(0)
    if args.worker == "torch":
        import torch
        torch.set_num_threads(args.threads)
        ops = torch_hot_ops(rng)
    else:
        ops = ours_hot_ops(rng)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    result = {name: median_us(fn, args.op_repeats, warmup=3, clock=clock) for name, fn in ops.items()}
    if args.worker == "ours":
        result.update({f"floor {name}": floor_us(shape, args.op_repeats, clock)
                       for name, (_, shape) in HOT_OPS.items()})
        result["matmul GFLOP/s"] = matmul_gflops(threads=args.threads)
    print("RESULT " + json.dumps(result))


def spawn(kind: str, args) -> dict:
    cmd = [sys.executable, __file__, "--worker", kind, "--threads", str(args.threads),
           "--op-repeats", str(args.op_repeats), "--clock", args.clock]
    cmd += [] if args.tune_malloc else ["--no-tune-malloc"]
    return worker_result(cmd, kind, args.threads)


def overhead_rows(repeats: int, rng, results: dict) -> None:
    for n, reps in ((2, repeats), (256, max(repeats // 20, 20))):
        a_np, b_np = rng.standard_normal((n, n)).astype(np.float32), rng.standard_normal((n, n)).astype(np.float32)
        a, b = Tensor(a_np, requires_grad=True), Tensor(b_np, requires_grad=True)
        if n == 2:
            name = "2x2 add"
            g = Tensor(np.ones((n, n), np.float32))
            def ours():
                a.grad = b.grad = None
                (a + b).backward(g)
            def plain():
                return a_np + b_np, g.numpy().copy(), g.numpy().copy()
        else:
            name = "256x256 matmul"
            g_np = np.ones((n, n), np.float32)
            def ours():
                a.grad = b.grad = None
                (a @ b).backward(g_np)
            def plain():
                return a_np @ b_np, g_np @ b_np.T, a_np.T @ g_np
        t_ours, t_np = median_us(ours, reps), median_us(plain, reps)
        results[name] = (t_ours, t_np)
        print(f"{name:16s} forward+backward: tinygrad_like {t_ours:9.1f} us | numpy {t_np:9.1f} us "
              f"| ratio {t_ours / t_np:5.2f}")


def reduction_rows(repeats: int, rng, results: dict) -> None:
    for shape in ((8, 2, 32, 32), (16, 4, 128, 128)):
        scores = rng.standard_normal(shape).astype(np.float32)
        reps = max(repeats // (1 if scores.size < 10**5 else 20), 20)
        for name, ours, plain in (("row max", array_max, np.max), ("row sum", array_sum, np.sum)):
            t_ours = median_us(lambda: ours(scores, -1), reps)
            t_np = median_us(lambda: plain(scores, -1, keepdims=True), reps)
            results[f"{name} {shape}"] = (t_ours, t_np)
            print(f"{name} {str(shape):17s}: arrays.{ours.__name__} {t_ours:8.1f} us "
                  f"| np.{plain.__name__} {t_np:8.1f} us | ratio {t_ours / t_np:5.2f}")


def hot_op_rows(args) -> dict:
    kinds = ["ours"]
    if not args.no_torch:
        if torch_available():
            kinds.append("torch")
        else:
            print("PyTorch is not installed: our figures only (pip install torch==2.13.0 for the yardstick)")
    runs = {k: [] for k in kinds}
    for _ in range(args.rounds):
        for kind in kinds:  # alternate the frameworks round by round
            runs[kind].append(spawn(kind, args))
    med = {k: {key: statistics.median(r[key] for r in rs) for key in rs[0]} for k, rs in runs.items()}
    print(f"\nhot ops, forward+backward, small config's shapes, {args.threads} threads, median of "
          f"{args.rounds} alternated processes x {args.op_repeats} runs ({args.clock} ms)")
    print(f"  {'op':14s} {'input shape':16s} {'ours':>8s} {'PyTorch':>8s} {'ratio':>6s} "
          f"{'np floor':>9s} {'ours/floor':>10s}")
    rows = {}
    for name, (shape, _) in HOT_OPS.items():
        ours, floor = med["ours"][name] / 1e3, med["ours"][f"floor {name}"] / 1e3
        torch_ms = med["torch"][name] / 1e3 if "torch" in med else None
        rows[name] = dict(ours_ms=ours, torch_ms=torch_ms, floor_ms=floor)
        t_text = f"{torch_ms:8.3f} {ours / torch_ms:6.2f}" if torch_ms else f"{'-':>8s} {'-':>6s}"
        print(f"  {name:14s} {str(shape):16s} {ours:8.3f} {t_text} {floor:9.3f} {ours / floor:10.1f}")
    gflops = med["ours"]["matmul GFLOP/s"]
    flop_ms = ATTENTION_FLOPS / gflops / 1e6
    rows["attention"].update(flop_ms=flop_ms, gflops=gflops)
    print(f"  attention's FLOP time: 6 matmuls x {ATTENTION_FLOPS / 6e6:.1f} MFLOP at numpy's float32 matmul "
          f"peak with {args.threads} threads ({gflops:.0f} GFLOP/s) = {flop_ms:.3f} ms; "
          f"ours {rows['attention']['ours_ms'] / flop_ms:.2f}x that")
    return rows


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=2000, help="runs of each overhead and reduction row")
    ap.add_argument("--rounds", type=int, default=3, help="alternated worker processes per framework (hot ops)")
    ap.add_argument("--op-repeats", type=int, default=20, help="runs of each hot op in a worker")
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="threads per framework (hot ops)")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="hot ops: wall time, or the worker's CPU time "
                         "(steadier on a busy machine; with --threads 1 only)")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--no-tune-malloc", dest="tune_malloc", action="store_false")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.clock == "cpu" and args.threads != 1:
        ap.error("--clock cpu counts the CPU time of every thread (PyTorch's spinning ones too): "
                 "use it with --threads 1")
    if args.worker:
        return run_worker(args)
    print(machine_line())
    rng = np.random.default_rng(0)
    results = {}
    overhead_rows(args.repeats, rng, results)
    reduction_rows(args.repeats, rng, results)
    results["hot ops"] = hot_op_rows(args)
    return results


if __name__ == "__main__":
    record.run_both_clocks("bench_ops", main, sys.argv[1:])
