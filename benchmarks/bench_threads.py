"""What a second thread buys, part by part, and what eight would buy, on paper.

    python benchmarks/bench_threads.py [--rounds 7] [--cores 8]     # writes benchmarks/results/bench_threads.json

1. Each kind of work in a training step of the small config (B=16, T=128, 4 heads of 32, 128 wide),
   forward and backward, on 1 thread and on 2, alternated round by round in this process (medians):
   - matmuls: the four Linear products of a block (c_attn, c_proj, c_fc, mlp c_proj), their rows shared
     out on the engine's pool (`tinygrad_like.set_num_threads`, `pool.matmul`, which hands them to the C
     threads of fast/spin_pool.py; BLAS held to 1 thread; benchmarks/bench_handover.py compares those
     with the Python pool's threads, product by product, and measures the hand-over itself);
     and, for comparison, the same products on numpy's BLAS with 2 threads of its own (threadpoolctl);
   - attention: `MultiHeadAttention`, whose chunks of batch entries run on the pool;
   - elementwise: GELU over (16, 128, 512), LayerNorm over (16, 128, 128) and cross-entropy over
     (2048, 128) logits. With the `fast` extra's kernels each is a one-pass kernel run on the pool's
     threads (runs of rows or elements, tinygrad_like/fast/kernels/arrays.py); without them GELU's
     cache-sized pieces run on the pool (`pool.run_in_runs`) and LayerNorm and cross-entropy on one thread;
   - optimizer: one AdamW step over the small config's parameters (the kernel shares each parameter's
     elements out on the pool; numpy's update runs on one thread).
2. One step of the small config on 1 thread, split by what each op is (time inside every Function's
   forward and backward, and the optimizer's step; the rest, Python between ops and the embedding, is
   "other").
3. On paper, for `--cores` threads (Amdahl): each kind's time divided by its speedup there, the
   speedup at N threads taken as N times the efficiency measured at 2 (speedup at 2 / 2): generous to
   threads, since efficiency falls as threads are added. "other" stays at 1x. Two estimates: the
   elementwise ops and the optimizer threaded at their measured efficiency (what the kernels do), and
   on one thread (numpy's bodies, most of which run on one thread).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import record  # noqa: E402
from machine import blas_limit, machine_line  # noqa: E402
from tinygrad_like import Tensor  # noqa: E402
from tinygrad_like.fast import kernels, pool  # noqa: E402
from tinygrad_like.fast.memory import tune_malloc  # noqa: E402
from tinygrad_like.function import Function  # noqa: E402

B, T, N_HEAD, C = 16, 128, 4, 128
KINDS = {"Linear": "matmul", "MultiHeadAttention": "attention", "Gelu": "elementwise",
         "LayerNorm": "elementwise", "CrossEntropy": "elementwise", "Add": "elementwise"}


def matmul_work(rng, product=np.matmul):
    """The Linear products of one block, forward and backward: y = x Wᵀ, dx = g W, dW = gᵀ x."""
    shapes = [(C, 3 * C), (C, C), (C, 4 * C), (4 * C, C)]                    # (in, out)
    arrays = [(rng.standard_normal((B * T, i), np.float32), rng.standard_normal((o, i), np.float32),
               rng.standard_normal((B * T, o), np.float32)) for i, o in shapes]

    def run():
        for x, w, g in arrays:
            product(x, w.T), product(g, w), product(g.T, x)
    return run


def attention_work(rng):
    qkv = Tensor(rng.standard_normal((B, T, 3 * C), np.float32), requires_grad=True)
    g = np.ones((B, T, C), np.float32)

    def run():
        qkv.grad = None
        qkv.multihead_attention(N_HEAD, is_causal=True).backward(g)
    return run


def elementwise_work(rng):
    """GELU, LayerNorm and cross-entropy of the small config's shapes, forward and backward."""
    h = Tensor(rng.standard_normal((B, T, 4 * C), np.float32), requires_grad=True)
    x = Tensor(rng.standard_normal((B, T, C), np.float32), requires_grad=True)
    w, b = (Tensor(rng.standard_normal(C, np.float32), requires_grad=True) for _ in range(2))
    logits = Tensor(rng.standard_normal((B * T, 128), np.float32), requires_grad=True)
    targets = rng.integers(0, 128, B * T)
    g_h, g_x = np.ones(h.shape, np.float32), np.ones(x.shape, np.float32)

    def run():
        for t in (h, x, w, b, logits):
            t.grad = None
        h.gelu().backward(g_h)
        x.layernorm(-1, 1e-5, w, b).backward(g_x)
        logits.sparse_categorical_crossentropy(targets).backward()
    return run


def small_model():
    from models.gpt import GPT, GPTConfig
    Tensor.manual_seed(0)
    return GPT(GPTConfig(vocab_size=128, block_size=T, n_layer=4, n_head=N_HEAD, n_embd=C))


def optimizer_work(rng):
    """One AdamW step over the small config's parameters, with gradients of their shapes."""
    from nn.optim import AdamW
    params = small_model().parameters()
    for p in params:
        p.grad = Tensor(rng.standard_normal(p.shape).astype(np.float32) * 1e-3)
    opt = AdamW(params, lr=3e-4)
    return opt.step


def speedups(rounds: int, rng) -> dict:
    """kind -> (ms on 1 thread, ms on 2 threads), medians over alternated rounds."""
    matmul, attention = matmul_work(rng, pool.matmul), attention_work(rng)
    elementwise, optimizer = elementwise_work(rng), optimizer_work(rng)
    blas_matmul = matmul_work(rng)
    times = defaultdict(list)
    for _ in range(rounds):
        for threads in (1, 2):
            with blas_limit(1):
                pool.set_num_threads(threads)
                times["matmul", threads].append(timed(matmul))
                times["attention", threads].append(timed(attention))
                times["elementwise", threads].append(timed(elementwise))
                times["optimizer", threads].append(timed(optimizer))
                pool.set_num_threads(1)
            with blas_limit(threads):
                times["matmul on BLAS threads", threads].append(timed(blas_matmul))
    return {kind: (statistics.median(times[kind, 1]), statistics.median(times[kind, 2]))
            for kind in ("matmul", "matmul on BLAS threads", "attention", "elementwise", "optimizer")}


def timed(fn, repeats: int = 5) -> float:
    fn()
    t0 = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - t0) / repeats * 1e3


def step_split(steps: int) -> dict:
    """kind -> ms per step of the small config on 1 thread ("other": the step minus every op's and the
    optimizer's time)."""
    from nn.optim import AdamW
    model = small_model()
    opt = AdamW(model.parameters(), lr=3e-4)
    rng = np.random.default_rng(0)
    x, y = (rng.integers(0, 128, (B, T)) for _ in range(2))
    spent = defaultdict(float)
    originals = {}

    def timing(cls, name, method):
        def wrapper(self, *args, **kwargs):
            t0 = time.perf_counter()
            try:
                return method(self, *args, **kwargs)
            finally:
                spent[KINDS.get(cls.__name__, "elementwise")] += time.perf_counter() - t0
        return wrapper

    for cls in every_subclass(Function):
        for name in ("forward", "backward"):
            if name in cls.__dict__:
                originals[cls, name] = cls.__dict__[name]
                setattr(cls, name, timing(cls, name, cls.__dict__[name]))

    def step():
        opt.zero_grad()
        model(x, y)[1].backward()
        t0 = time.perf_counter()
        opt.step()
        spent["optimizer"] += time.perf_counter() - t0
    try:
        with blas_limit(1):
            step()
            spent.clear()
            t0 = time.perf_counter()
            for _ in range(steps):
                step()
            total = time.perf_counter() - t0
    finally:
        for (cls, name), method in originals.items():
            setattr(cls, name, method)
    split = {kind: s / steps * 1e3 for kind, s in spent.items()}
    split["other"] = total / steps * 1e3 - sum(split.values())
    return split


def every_subclass(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from every_subclass(sub)


def on_paper(split: dict, gains: dict, cores: int) -> float:
    """The step's speedup on `cores` threads by Amdahl, each kind's speedup there being cores times
    its efficiency measured at 2 threads (kinds without a measurement stay at 1x)."""
    serial = sum(split.values())
    parallel = sum(ms / max(1.0, cores * (gains[kind][0] / gains[kind][1]) / 2) if kind in gains else ms
                   for kind, ms in split.items())
    return serial / parallel


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--steps", type=int, default=5, help="steps of the small config for the split")
    ap.add_argument("--cores", type=int, default=8, help="threads for the estimate on paper")
    args = ap.parse_args(argv)
    tune_malloc()                                                            # as bench_train and train_gpt do
    print(machine_line())
    rng = np.random.default_rng(0)
    gains = speedups(args.rounds, rng)
    print(f"\nforward+backward at the small config's shapes, median of {args.rounds} alternated rounds:")
    for kind, (one, two) in gains.items():
        print(f"  {kind:22s} 1 thread {one:7.3f} ms | 2 threads {two:7.3f} ms | speedup {one / two:4.2f}")
    split = step_split(args.steps)
    total = sum(split.values())
    parts = sorted(split.items(), key=lambda kv: -kv[1])
    print(f"\nthe small config's step on 1 thread: {total:.1f} ms = "
          + ", ".join(f"{kind} {ms:.1f} ({ms / total:.0%})" for kind, ms in parts))
    threaded = {kind: gains[kind] for kind in ("matmul", "attention", "elementwise", "optimizer")}
    serial = {kind: gains[kind] for kind in ("matmul", "attention")}
    estimate = {n: on_paper(split, threaded, n) for n in (2, args.cores)}
    estimate_serial = {n: on_paper(split, serial, n) for n in (2, args.cores)}
    print(f"on paper (Amdahl; each kind at the efficiency measured at 2 threads, \"other\" on one thread): step "
          f"speedup {estimate[2]:.2f}x on 2 threads, {estimate[args.cores]:.2f}x on {args.cores}; with the "
          f"elementwise ops and the optimizer on one thread: {estimate_serial[2]:.2f}x and "
          f"{estimate_serial[args.cores]:.2f}x")
    return dict(speedups=gains, split=split, on_paper=estimate, on_paper_serial_elementwise=estimate_serial,
                kernels=kernels.ready(np.float32))


if __name__ == "__main__":
    record.save("bench_threads", {"": main()})
