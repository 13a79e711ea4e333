"""What handing a product to a second thread costs, on the Python pool and on the C threads, and what it buys
at the real programs' sizes.

    python benchmarks/bench_handover.py [--rounds 5] [--repeats 200] [--only kernels]   # prints; records nothing

1. Hand-over: a run of two empty items on the Python pool (pool.run), and a product too small to be
   work, (4, 1) @ (1, 2), on the C threads (spin_pool.matmul: the caller posts 2 rows, does its 2,
   waits), against the same call with no worker (the ctypes call alone); a kernel too small to be work
   in 2 runs on the C threads (spin_pool.run_kernel, from Python) against the kernel called directly.
   Back to back, after 0.5 ms idle and after 5 ms (both past spin_pool.SPIN_NS: every worker asleep on
   its futex or lock; on a VM whose idle cores halt, the core too); the kernel back to back.
2. Products (float32) at the programs' sizes: Linear forward rows @ Wᵀ and the backward's dx = g W,
   dW = gᵀ x of nanoGPT (768 rows, 128 wide), minGPT's sort demo (704 rows, 48 wide) and makemore's
   transformer (512 rows, 64 wide), on 1 thread (numpy), on 2 threads of the Python pool (its
   threshold set to 0) and on 2 with the C threads; and the backward's dx and dW pair side by side
   (pool.each on the Python pool, pool.products on the C threads).
3. Where sharing out starts to pay: (rows, 64) @ (64, 64) on 1 thread and on the C threads.
4. Compiled kernels (kernels/arrays.py): the exact GELU's forward and backward at nanoGPT's MLP, (768, 512)
   float32, on 1 thread, in runs on the Python pool at 2 threads, and on the C threads at 2
   (spin_pool.run_kernel); and where sharing a kernel out starts to pay: the GELU forward over 2K to
   512K elements, and softmax (rows of 16) and SiLU, the cheapest per byte, over 32 to 256 KiB, on 1
   thread and on the C threads.
5. Attention forward and backward at nanoGPT's shapes (B 12, 4 heads, T 64, 32 wide, float32, causal, dropout
   0.2, as its F.scaled_dot_product_attention call makes them): one chunk on the caller (its scores fit in
   one tile), with its products and kernels on 1 thread, on 1 thread with the Python pool at 2 (no
   difference: a chunk's work is one thread's there) and shared out among the C threads at 2.
Every figure is the median of `--rounds` rounds, the variants alternated within each round.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from machine import blas_limit, machine_line  # noqa: E402
from tinygrad_like.fast import pool, spin_pool  # noqa: E402
from tinygrad_like.fast.kernels import arrays  # noqa: E402

PROGRAMS = {"nanoGPT": (768, 128, [384, 128, 512]), "sort": (704, 48, [144, 48, 192]),
            "makemore transformer": (512, 64, [192, 64, 256])}  # rows, width, Linear outputs


def per_call_us(fn, repeats: int, idle: float = 0.0) -> float:
    """Median time of fn() in microseconds, `idle` seconds of sleep before each call."""
    times = []
    for _ in range(repeats):
        if idle:
            time.sleep(idle)
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


class Variant:
    """One way to run products and kernels: 1 thread, the Python pool at 2 threads, or the C threads at 2;
    python_min and spin_min are each pool's thresholds (0 or NEVER), in flops for products and in bytes
    for kernels."""

    def __init__(self, name, threads, python_min, spin_min):
        self.name, self.threads, self.python, self.spin = name, threads, python_min, spin_min

    def __enter__(self):
        self.saved = pool.MIN_FLOPS, spin_pool.MIN_FLOPS, pool.MIN_BYTES, arrays.SPIN_MIN_BYTES
        pool.MIN_FLOPS, spin_pool.MIN_FLOPS = self.python, self.spin
        pool.MIN_BYTES, arrays.SPIN_MIN_BYTES = self.python, self.spin
        pool.set_num_threads(self.threads)
        self.blas = blas_limit(1)           # on 1 thread too: BLAS's own threads would spin into the next variant
        self.blas.__enter__()
        return self

    def __exit__(self, *exc):
        self.blas.__exit__(*exc)
        pool.MIN_FLOPS, spin_pool.MIN_FLOPS, pool.MIN_BYTES, arrays.SPIN_MIN_BYTES = self.saved


NEVER = 1 << 62
VARIANTS = [Variant("1 thread", 1, NEVER, NEVER), Variant("Python pool 2", 2, 0, NEVER),
            Variant("C threads 2", 2, NEVER, 0)]


def rounds_of(measure, variants, rounds):
    """{variant name: median over rounds of measure()} with the variants alternated in each round."""
    times = {v.name: [] for v in variants}
    for _ in range(rounds):
        for v in variants:
            with v:
                times[v.name].append(measure())
    return {name: statistics.median(ts) for name, ts in times.items()}


def handover(rounds: int, repeats: int) -> None:
    a, b = np.ones((4, 1), np.float32), np.ones((1, 2), np.float32)
    print("\nhand-over (us per call, median):")
    for idle, label in ((0.0, "back to back"), (0.0005, "after 0.5 ms idle"), (0.005, "after 5 ms idle")):
        n = repeats if not idle else max(repeats // 4, 20)
        python = rounds_of(lambda: per_call_us(lambda: pool.run(lambda i: None, range(2)), n, idle),
                           [VARIANTS[1]], rounds)
        c_two = rounds_of(lambda: per_call_us(lambda: spin_pool.matmul(a, b, workers=1), n, idle), [VARIANTS[2]],
                          rounds)
        c_none = rounds_of(lambda: per_call_us(lambda: spin_pool.matmul(a, b, workers=0), n, idle), [VARIANTS[2]],
                           rounds)
        print(f"  {label:17s} Python pool run of 2 empty items {python['Python pool 2']:6.1f} | C threads, "
              f"2 rows each {c_two['C threads 2']:6.1f}, no worker {c_none['C threads 2']:5.1f}")
    x = np.ones(128, np.float32)
    out = np.empty_like(x)
    gelu = arrays.kernel("gelu_forward", "c", x.dtype).bind(x, *arrays._typed(x.dtype, 0.8, 0.04, 0.5), out)
    kernel_two = rounds_of(lambda: per_call_us(lambda: spin_pool.run_kernel(*gelu.spin, 0, 128, 64, 2, 1), repeats),
                           [VARIANTS[2]], rounds)
    kernel_one = rounds_of(lambda: per_call_us(lambda: gelu(0, 128), repeats), [VARIANTS[0]], rounds)
    print(f"  back to back      a kernel (GELU over 128 elements) in 2 runs on the C threads "
          f"{kernel_two['C threads 2']:6.1f} (spin_pool.run_kernel), on the caller {kernel_one['1 thread']:5.1f}")


def products(rounds: int, repeats: int, rng) -> None:
    print("\nfloat32 products (us, median): 1 thread | Python pool 2 | C threads 2")
    for program, (rows, width, outs) in PROGRAMS.items():
        for out in outs:
            x = rng.standard_normal((rows, width), np.float32)
            w = rng.standard_normal((out, width), np.float32)
            g = rng.standard_normal((rows, out), np.float32)
            cases = {f"x Wᵀ  ({rows}x{width})@({width}x{out})": lambda: pool.matmul(x, w.T),
                     f"g W   ({rows}x{out})@({out}x{width})": lambda: pool.matmul(g, w),
                     f"gᵀ x  ({out}x{rows})@({rows}x{width})": lambda: pool.matmul(g.T, x)}
            for label, fn in cases.items():
                t = rounds_of(lambda: per_call_us(fn, repeats), VARIANTS, rounds)
                print(f"  {program:21s} {label:30s} " + " | ".join(f"{t[v.name]:7.1f}" for v in VARIANTS)
                      + f"   C/1: {t['C threads 2'] / t['1 thread']:.2f}")
            flops = 4 * g.size * width

            def pair():
                both = pool.products([(g, w), (g.T, x)], flops)
                if both is None:
                    pool.each([lambda: np.matmul(g, w), lambda: np.matmul(g.T, x)], flops)
            t = rounds_of(lambda: per_call_us(pair, repeats), VARIANTS, rounds)
            label = f"dx and dW side by side (out {out})"
            print(f"  {program:21s} {label:30s} " + " | ".join(f"{t[v.name]:7.1f}" for v in VARIANTS)
                  + f"   C/1: {t['C threads 2'] / t['1 thread']:.2f}")


def threshold(rounds: int, repeats: int, rng) -> None:
    print("\n(rows, 64) @ (64, 64) float32 (us, median): 1 thread | C threads 2")
    b = rng.standard_normal((64, 64), np.float32)
    for rows in (8, 16, 32, 64, 128, 256, 512):
        a = rng.standard_normal((rows, 64), np.float32)
        t = rounds_of(lambda: per_call_us(lambda: pool.matmul(a, b), repeats), [VARIANTS[0], VARIANTS[2]], rounds)
        print(f"  {rows:4d} rows, {2 * rows * 64 * 64 / 1e6:5.2f} Mflop: {t['1 thread']:6.1f} | {t['C threads 2']:6.1f}"
              f"   C/1: {t['C threads 2'] / t['1 thread']:.2f}")


def kernels(rounds: int, repeats: int, rng) -> None:
    print("\nexact GELU at nanoGPT's MLP, (768, 512) float32 (us, median): 1 thread | Python pool 2 | C threads 2")
    x = rng.standard_normal((768, 512), np.float32)
    g = rng.standard_normal((768, 512), np.float32)
    for label, fn in (("forward", lambda: arrays.gelu_erf_forward(x)),
                      ("backward", lambda: arrays.gelu_erf_backward(g, x))):
        t = rounds_of(lambda: per_call_us(fn, repeats), VARIANTS, rounds)
        print(f"  {label:9s} " + " | ".join(f"{t[v.name]:7.1f}" for v in VARIANTS)
              + f"   C/1: {t['C threads 2'] / t['1 thread']:.2f}")
    print("\nexact GELU forward, float32 (us, median): 1 thread | C threads 2")
    for elements in (2 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10, 512 << 10):
        x = rng.standard_normal(elements, np.float32)
        t = rounds_of(lambda: per_call_us(lambda: arrays.gelu_erf_forward(x), repeats), [VARIANTS[0], VARIANTS[2]],
                      rounds)
        print(f"  {elements:7d} elements ({x.nbytes >> 10:4d} KiB): {t['1 thread']:7.1f} | {t['C threads 2']:7.1f}"
              f"   C/1: {t['C threads 2'] / t['1 thread']:.2f}")
    print("\nsoftmax forward over rows of 16 | SiLU forward, float32 (us, median): 1 thread | C threads 2")
    for kib in (32, 64, 128, 256):
        x = rng.standard_normal((kib * 1024 // 64, 16), np.float32)
        line = []
        for fn in (arrays.softmax_forward, arrays.silu_forward):
            t = rounds_of(lambda: per_call_us(lambda: fn(x), repeats), [VARIANTS[0], VARIANTS[2]], rounds)
            line.append(f"{t['1 thread']:6.1f} | {t['C threads 2']:6.1f} ({t['C threads 2'] / t['1 thread']:.2f})")
        print(f"  {kib:4d} KiB: softmax {line[0]}   SiLU {line[1]}")


def attention(rounds: int, repeats: int, rng) -> None:
    from tinygrad_like import Tensor
    B, heads, T, hs = 12, 4, 64, 32
    qkv = rng.standard_normal((B, T, 3 * heads * hs), np.float32)

    def step():
        x = Tensor(qkv, requires_grad=True)
        q, k, v = (x[:, :, i * heads * hs:(i + 1) * heads * hs].reshape(B, T, heads, hs).transpose(1, 2)
                   for i in range(3))                                                    # (B, nh, T, hs) views
        q.scaled_dot_product_attention(k, v, is_causal=True, dropout_p=0.2).sum().backward()
    print("\nattention forward + backward at nanoGPT's shapes (us, median; with the slicing, dropout's draw and "
          "the sum): 1 thread | Python pool 2 | C threads 2")
    t = rounds_of(lambda: per_call_us(step, repeats), VARIANTS, rounds)
    print("  " + " | ".join(f"{t[v.name]:7.1f}" for v in VARIANTS) + f"   C/1: {t['C threads 2'] / t['1 thread']:.2f}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=200)
    ap.add_argument("--only", choices=["handover", "products", "threshold", "kernels", "attention"],
                    help="one part only")
    args = ap.parse_args(argv)
    print(machine_line())
    if spin_pool.library() is None:
        print(f"no C threads here: {spin_pool.reason()}")
        return
    rng = np.random.default_rng(0)
    try:
        parts = {"handover": lambda: handover(args.rounds, args.repeats),
                 "products": lambda: products(args.rounds, args.repeats, rng),
                 "threshold": lambda: threshold(args.rounds, args.repeats, rng),
                 "kernels": lambda: kernels(args.rounds, args.repeats, rng),
                 "attention": lambda: attention(args.rounds, args.repeats, rng)}
        for name, part in parts.items():
            if args.only in (None, name):
                part()
    finally:
        pool.set_num_threads(1)


if __name__ == "__main__":
    main()
