"""Generation speed: GPT.generate's milliseconds per new token with and without the KV cache.

    python benchmarks/bench_generate.py [--contexts 32 128 256] [--tokens 16] [--repeats 5]

Run as a command, it writes benchmarks/results/bench_generate.json (benchmarks/record.py).

A random GPT (4 layers, 128 wide, 4 heads, block 512; timing does not depend on the weights), one
sequence, greedy decoding. With the cache, the per-token time is the time of generating tokens+1
minus that of generating 1 (which is the prefill of the context plus one step), divided by tokens;
without it, every step re-reads the whole context. Medians over repeats, in this one process.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

import record  # noqa: E402
from bench_ops import median_us  # noqa: E402
from models.gpt import GPT, GPTConfig  # noqa: E402
from tinygrad_like import Tensor  # noqa: E402


def median_seconds(fn, repeats: int) -> float:
    return median_us(fn, repeats, warmup=1) / 1e6


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--contexts", type=int, nargs="+", default=[32, 128, 256])
    ap.add_argument("--tokens", type=int, default=16, help="new tokens per timed call")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    Tensor.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=128, block_size=512, n_layer=4, n_head=4, n_embd=128))
    rows = []
    print("context | no cache ms/token | KV cache ms/token | speed-up")
    for context in args.contexts:
        prompt = np.random.default_rng(context).integers(0, 128, (1, context))
        def generate(n, use_cache):
            return lambda: model.generate(prompt, n, temperature=0, use_cache=use_cache)
        uncached = median_seconds(generate(args.tokens, False), args.repeats) / args.tokens
        cached = (median_seconds(generate(args.tokens + 1, True), args.repeats)
                  - median_seconds(generate(1, True), args.repeats)) / args.tokens
        rows.append(dict(context=context, no_cache_ms=uncached * 1e3, cache_ms=cached * 1e3))
        print(f"{context:7d} | {uncached * 1e3:17.2f} | {cached * 1e3:17.2f} | {uncached / cached:7.1f}x")
    return rows


if __name__ == "__main__":
    record.save("bench_generate", {"": main()})
