"""Per-op overhead: forward+backward of a 2x2 add and of a (256x256)@(256x256) matmul, next to plain
numpy doing the same arithmetic (add: a+b, and the upstream gradient handed to both inputs;
matmul: A@B forward, G@Bᵀ and Aᵀ@G backward). Then the row reductions of the fused ops
(tinygrad_like/fused.py: array_max, array_sum) next to numpy's own max and sum, on attention-score
shapes of the tiny and small benchmark configs.

    python benchmarks/bench_ops.py [--repeats 2000]

Prints medians in microseconds and the ratio engine/numpy, measured in this one process.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from tinygrad_like import Tensor
from tinygrad_like.fused import array_max, array_sum


def median_us(fn, repeats: int, warmup: int = 50) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=2000)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    results = {}
    for n, repeats in ((2, args.repeats), (256, max(args.repeats // 20, 20))):
        a_np, b_np = rng.standard_normal((n, n)).astype(np.float32), rng.standard_normal((n, n)).astype(np.float32)
        a, b = Tensor(a_np, requires_grad=True), Tensor(b_np, requires_grad=True)
        if n == 2:
            name = "2x2 add"
            g = Tensor(np.ones((n, n), np.float32))
            def ours():
                a.grad = b.grad = None
                (a + b).backward(g)
            def plain():
                return a_np + b_np, g.data.copy(), g.data.copy()
        else:
            name = "256x256 matmul"
            g_np = np.ones((n, n), np.float32)
            def ours():
                a.grad = b.grad = None
                (a @ b).backward(g_np)
            def plain():
                return a_np @ b_np, g_np @ b_np.T, a_np.T @ g_np
        t_ours, t_np = median_us(ours, repeats), median_us(plain, repeats)
        results[name] = (t_ours, t_np)
        print(f"{name:16s} forward+backward: tinygrad_like {t_ours:9.1f} us | numpy {t_np:9.1f} us | ratio {t_ours / t_np:5.2f}")
    for shape in ((8, 2, 32, 32), (16, 4, 128, 128)):
        scores = rng.standard_normal(shape).astype(np.float32)
        repeats = max(args.repeats // (1 if scores.size < 10**5 else 20), 20)
        for name, ours, plain in (("row max", array_max, np.max), ("row sum", array_sum, np.sum)):
            t_ours = median_us(lambda: ours(scores, -1), repeats)
            t_np = median_us(lambda: plain(scores, -1, keepdims=True), repeats)
            results[f"{name} {shape}"] = (t_ours, t_np)
            print(f"{name} {str(shape):17s}: fused.{ours.__name__} {t_ours:8.1f} us | np.{plain.__name__} {t_np:8.1f} us "
                  f"| ratio {t_ours / t_np:5.2f}")
    return results


if __name__ == "__main__":
    main()
