"""Experiment: do threads over cache-sized pieces speed up the fused elementwise ops? numpy's ufuncs
release the GIL, so two threads can each run the chain of in-place steps on their own pieces.

    python benchmarks/bench_threads.py [--threads 2] [--rounds 30]

Times GELU forward and backward (B=16, T=128, 512 wide) and softmax forward and backward over
attention scores (16, 4, 128, 128), the per-piece steps of tinygrad_like/fused.py, run once piece
after piece and once on a private ThreadPoolExecutor, alternated round by round in this process,
with numpy's BLAS held to one thread (threadpoolctl, when installed; the row sums are products with
ones). Prints the medians and serial / threaded. The library keeps threads only where this is
measured faster on a quiet machine: on a busy one (other processes holding the cores) threads lose.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from machine import machine_line  # noqa: E402
from tinygrad_like.fused import PIECE, _gelu_grad, _tanh_u, array_max, array_sum  # noqa: E402
from tinygrad_like.memory import pieces, row_pieces  # noqa: E402


def gelu_forward(piece):
    y, x = piece
    _tanh_u(x, out=y)
    y += 1
    y *= x
    y *= 0.5


def gelu_backward(piece):
    dx, g, x = piece
    _gelu_grad(g, x, dx, np.empty_like(x), np.empty_like(x))


def softmax_forward(piece):
    x, y = piece
    np.subtract(x, array_max(x, -1), out=y)
    np.exp(y, out=y)
    y /= array_sum(y, -1)


def softmax_backward(piece):
    g, y, dx = piece
    np.multiply(g, y, out=dx)
    np.subtract(g, array_sum(dx, -1), out=dx)
    dx *= y


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=30)
    args = ap.parse_args(argv)
    print(machine_line())
    rng = np.random.default_rng(0)
    x, g = (rng.standard_normal((16, 128, 512)).astype(np.float32) for _ in range(2))
    s, gs = (rng.standard_normal((16, 4, 128, 128)).astype(np.float32) for _ in range(2))
    out = {k: np.empty_like(a) for k, a in (("y", x), ("dx", x), ("p", s), ("ds", s))}
    jobs = {
        "gelu forward+backward": [(gelu_forward, lambda: pieces(out["y"], x, size=PIECE)),
                                  (gelu_backward, lambda: pieces(out["dx"], g, x, size=PIECE))],
        "softmax forward+backward": [(softmax_forward, lambda: row_pieces(s, out["p"], size=PIECE)),
                                     (softmax_backward, lambda: row_pieces(gs, out["p"], out["ds"], size=PIECE))],
    }
    pool = ThreadPoolExecutor(args.threads)
    serial = lambda fn, parts: [fn(p) for p in parts]
    threaded = lambda fn, parts: list(pool.map(fn, parts))
    try:
        from threadpoolctl import threadpool_limits
        one_blas_thread = threadpool_limits(1, user_api="blas")
    except ImportError:
        one_blas_thread = nullcontext()
    results = {}
    with one_blas_thread:
        for name, steps in jobs.items():
            times = {"serial": [], "threaded": []}
            for _ in range(args.rounds):
                for kind, run in (("serial", serial), ("threaded", threaded)):
                    t0 = time.perf_counter()
                    for fn, parts in steps:
                        run(fn, parts())
                    times[kind].append((time.perf_counter() - t0) * 1e3)
            ms = {k: statistics.median(v) for k, v in times.items()}
            results[name] = ms
            print(f"{name:26s} serial {ms['serial']:7.3f} ms | {args.threads} threads {ms['threaded']:7.3f} ms "
                  f"| serial / threaded {ms['serial'] / ms['threaded']:5.2f}")
    pool.shutdown()
    return results


if __name__ == "__main__":
    main()
