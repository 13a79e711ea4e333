"""Where sharing elementwise work out among threads starts to pay: fast/elementwise.py's SHARE_FROM.

    python benchmarks/bench_elementwise.py [--rounds 5] [--repeats 30] [--threads 2]
    chrt -f 10 python benchmarks/bench_elementwise.py     # on a shared machine: ahead of the others

For results of 0.75 to 12 MB (float32, minGPT's chargpt shapes among them: (64, 128, 48/96/192) and its
attention scores (64, 3, 128, 128)), three kinds of work: a product of two arrays, tanh, and masked_fill
(a copy with -inf written under a broadcast causal mask), each timed as numpy's one call on one thread and
in pieces on the pool's threads (fast/elementwise.py with SHARE_FROM at 0), the two alternated round by
round in this process; the median over rounds of each one's median over `--repeats` calls. The ratio
shared / one call below 1 is where sharing pays. Run as a command it writes
benchmarks/results/bench_elementwise.json (benchmarks/record.py).
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

import record  # noqa: E402
import tinygrad_like  # noqa: E402
from machine import machine_line  # noqa: E402
from tinygrad_like.fast import arrays, elementwise  # noqa: E402

SHAPES = [(64, 128, 24), (64, 128, 48), (64, 128, 96), (64, 128, 192), (64, 3, 128, 128)]


def median_ms(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def cases(shape, rng) -> dict:
    """{kind: (numpy's one call, the same through fast/elementwise.py)}."""
    x, y = rng.standard_normal(shape, dtype=np.float32), rng.standard_normal(shape, dtype=np.float32)
    mask = (np.tril(np.ones(shape[-2:], bool)) == 0).reshape((1,) * (len(shape) - 2) + shape[-2:])
    fill = np.float32(-np.inf)
    return {"multiply": (lambda: x * y, lambda: elementwise.mul(x, y)),
            "tanh": (lambda: np.tanh(x), lambda: elementwise.ufunc(np.tanh, x)),
            "masked_fill": (lambda: np.where(mask, fill, x), lambda: arrays.where(mask, fill, x))}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)
    tinygrad_like.set_num_threads(args.threads, allocator=True)     # as the engine's first shared op does
    print(machine_line())
    thresholds = elementwise.SHARE_FROM, arrays.FILL_FROM
    elementwise.SHARE_FROM, arrays.FILL_FROM = 0, 0                  # every size shared, every fill a fill
    try:
        return rows_for(args)
    finally:
        elementwise.SHARE_FROM, arrays.FILL_FROM = thresholds


def rows_for(args) -> dict:
    rng, rows = np.random.default_rng(0), {}
    for shape in SHAPES:
        times = {kind: ([], []) for kind in ("multiply", "tanh", "masked_fill")}
        for _ in range(args.rounds):
            for kind, (one, shared) in cases(shape, rng).items():
                times[kind][0].append(median_ms(one, args.repeats))
                times[kind][1].append(median_ms(shared, args.repeats))
        mb = 4 * int(np.prod(shape)) / 2 ** 20
        for kind, (one, shared) in times.items():
            row = dict(mb=mb, one_call_ms=statistics.median(one), shared_ms=statistics.median(shared))
            row["ratio"] = row["shared_ms"] / row["one_call_ms"]
            rows[f"{kind} {shape}"] = row
            print(f"{kind:12s} {str(shape):18s} {mb:6.2f} MB  one call {row['one_call_ms']:7.3f} ms  "
                  f"shared on {args.threads} threads {row['shared_ms']:7.3f} ms  ratio {row['ratio']:.2f}")
    return rows

if __name__ == "__main__":
    record.save("bench_elementwise", {"shared vs one call": main()})
