"""Dropout's draw from PyTorch's stream (fast/streams.py): the plain draw, the numba twister and twister.c.

    python benchmarks/bench_streams.py [--rounds 5] [--repeats 30]

What random.dropout_noise asks of a TorchGenerator (`bernoulli_scaled`: the mask of 1 − p and the scale, in
float32) at the shapes of nanoGPT's shakespeare_char run in benchmarks/real_programs.py (batch 12, block 64,
128 wide, 4 heads, 2 layers): a (12, 64, 128) activation, dropped 5 times an iteration (the embeddings, and
per layer the attention's output and the MLP's), and the attention weights (12, 4, 64, 64), dropped once per
layer. Three variants, alternated round by round in this process, each one's time the median over rounds of
its median over `--repeats` calls (TINYGRAD_LIKE_KERNELS is set for each variant, whatever it was):

    plain   numpy's MT19937 words, paired and compared in numpy, then scaled (the fast path off)
    numba   numba_twister.py: the words into a buffer, the pairs compared, then scaled (TINYGRAD_LIKE_KERNELS=numba)
    c       twister.c: the mask and the scale in one pass, the words never in memory

with words per second (two 32-bit words a draw) and the sum over one nanoGPT iteration's draws. Each
variant draws on the calling thread (numba's pairs go to the pool from 4 MB of words, above these shapes).
Run as a command it writes benchmarks/results/bench_streams.json (benchmarks/record.py).
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import record  # noqa: E402
from machine import machine_line  # noqa: E402
from tinygrad_like import fast  # noqa: E402
from tinygrad_like.fast import streams  # noqa: E402
from tinygrad_like.pytorch_streams.generator import TorchGenerator  # noqa: E402

P = 0.2
SHAPES = {"activation (12, 64, 128)": ((12, 64, 128), 5), "attention weights (12, 4, 64, 64)": ((12, 4, 64, 64), 2)}
VARIANTS = ("plain", "numba", "c")


def draw(variant: str, g: TorchGenerator, shape: tuple):
    scale = np.float32(1) / np.float32(1 - P)
    if variant == "plain":
        with fast.enabled(False):
            return g.bernoulli_scaled(1 - P, shape, scale)
    before = os.environ.get("TINYGRAD_LIKE_KERNELS")
    os.environ["TINYGRAD_LIKE_KERNELS"] = variant
    try:
        return g.bernoulli_scaled(1 - P, shape, scale)
    finally:
        if before is None:
            del os.environ["TINYGRAD_LIKE_KERNELS"]
        else:
            os.environ["TINYGRAD_LIKE_KERNELS"] = before


def median_us(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=30)
    args = ap.parse_args(argv)
    print(machine_line())
    if streams.twister_library() is None:
        raise SystemExit(f"twister.c does not build here: {streams.reason()}")
    g = TorchGenerator(1)
    times = {(name, v): [] for name in SHAPES for v in VARIANTS}
    for _ in range(args.rounds):
        for name, (shape, _) in SHAPES.items():
            for v in VARIANTS:
                times[name, v].append(median_us(lambda: draw(v, g, shape), args.repeats))
    rows, per_iteration = {}, dict.fromkeys(VARIANTS, 0.0)
    for name, (shape, count) in SHAPES.items():
        words = 2 * math.prod(shape)
        for v in VARIANTS:
            us = statistics.median(times[name, v])
            rows[f"{v} {name}"] = dict(us=us, gwords_per_s=words / us / 1e3)
            per_iteration[v] += count * us
            print(f"{v:6s} {name:36s} {us:8.1f} us  {words / us / 1e3:5.2f} G words/s")
    for v in VARIANTS:
        rows[f"{v} per nanoGPT iteration"] = dict(us=per_iteration[v])
        print(f"{v:6s} one nanoGPT iteration's draws: {per_iteration[v] / 1e3:.3f} ms")
    return rows


if __name__ == "__main__":
    record.save("bench_streams", {"1 thread": main()})
