"""The compiled kernels (the `fast` extra, tinygrad_like/fast/kernels/) against numpy and PyTorch, op by op.

Forward+backward of each elementwise op at the small config's shapes (B=16, T=128, 128 wide, MLP 512,
vocabulary 1024; bench_ops.py), of causal multi-head attention (4 heads) on the packed projection
(B, T, 3·128), and one AdamW step over the small GPT's parameter count, in five kinds of worker process,
alternated round by round (`--rounds`), each op's time the median of `--op-repeats` runs, then the
median over rounds:

    numpy   through Tensor ops, the kernels off (TINYGRAD_LIKE_KERNELS=off): what runs without the extra
    fast    through Tensor ops, the kernels on: what runs with the extra (each op's kept variant)
    numba   the op's kernel from numba_rows.py, as an array function (kernels/arrays.py); for attention,
            whose kernels work inside the op (the tile's softmax, the transposing copies), the Tensor op
            with that variant forced (TINYGRAD_LIKE_KERNELS=numba)
    c       the same from rows.c and attention.c (where there is one)
    torch   PyTorch's own op (attention: F.scaled_dot_product_attention)

SwiGLU's input holds the gate and the up projection, (B, T, 4C) each, side by side, as nn.MLP's c_fc makes them:
the op and its kernels read the halves where they lie and write the gradient packed. masked_softmax is softmax
on scores whose keys above the diagonal are −inf, as attention written by hand masks them (masked_fill, then
softmax).
The array functions skip the graph bookkeeping of a Tensor op (a few tens of microseconds). The machine line
and the load average come first: on a busy machine, only ratios within one run of this script mean
something.

    python benchmarks/bench_kernels.py [--rounds 3] [--op-repeats 20] [--threads 2]
    python benchmarks/bench_kernels.py --threads 1 --clock cpu     # CPU time: steadier on a shared machine

Run as a command, it writes benchmarks/results/bench_kernels.json (benchmarks/record.py); without --threads
and --clock it runs twice, every core in wall time, then 1 thread in CPU time.
"""
from __future__ import annotations

import argparse
import json
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
from machine import machine_line, median_seconds, torch_available, worker_result  # noqa: E402

B, T, C, VOCAB = 16, 128, 128, 1024
N_HEAD = 4
PARAMS = 4 * 12 * C * C + VOCAB * C + T * C  # the small GPT's weights: 4 blocks of 12·C², embeddings
SHAPES = {  # op: the shape of its input (swiglu: of each half of its input, the gate and the up projection)
    "gelu": (B, T, 4 * C), "gelu_erf": (B, T, 4 * C), "silu": (B, T, 4 * C), "swiglu": (B, T, 4 * C),
    "layernorm": (B, T, C), "rmsnorm": (B, T, C),
    "softmax": (B, N_HEAD, T, T), "masked_softmax": (B, N_HEAD, T, T), "log_softmax": (B * T, VOCAB),
    "cross_entropy": (B * T, VOCAB), "attention": (B, T, 3 * C), "adamw": (PARAMS,),
}
C_OPS = {"gelu", "gelu_erf", "silu", "swiglu", "softmax", "masked_softmax", "log_softmax", "cross_entropy", "attention"}
KINDS = ("numpy", "fast", "numba", "c", "torch")


def inputs(rng):
    shapes = {**SHAPES, "swiglu": (B, T, 2 * 4 * C)}                                  # swiglu: [gate | up]
    data = {op: rng.standard_normal(shape).astype(np.float32) for op, shape in shapes.items()}
    data["masked_softmax"][..., np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]] = -np.inf   # causal, by hand
    extra = {"w": rng.standard_normal(C).astype(np.float32), "b": rng.standard_normal(C).astype(np.float32),
             "targets": rng.integers(0, VOCAB, B * T)}
    return data, extra


def numpy_ops(data, extra) -> dict:
    """op -> forward+backward through tinygrad_like's Tensor ops (the fused ops where there is one)."""
    from nn.optim import AdamW
    from tinygrad_like import Tensor
    x = {op: Tensor(a, requires_grad=True) for op, a in data.items() if op != "adamw"}
    w, b = (Tensor(extra[k], requires_grad=True) for k in "wb")
    forward = {
        "gelu": lambda: x["gelu"].gelu(), "gelu_erf": lambda: x["gelu_erf"].gelu(approximate="none"),
        "silu": lambda: x["silu"].silu(), "swiglu": lambda: x["swiglu"].swiglu(),
        "layernorm": lambda: x["layernorm"].layernorm(-1, 1e-5, w, b),
        "rmsnorm": lambda: x["rmsnorm"].rmsnorm(-1, 1e-6, w),
        "softmax": lambda: x["softmax"].softmax(-1), "masked_softmax": lambda: x["masked_softmax"].softmax(-1),
        "log_softmax": lambda: x["log_softmax"].log_softmax(-1),
        "cross_entropy": lambda: x["cross_entropy"].sparse_categorical_crossentropy(extra["targets"]),
        "attention": lambda: x["attention"].multihead_attention(N_HEAD, is_causal=True),
    }
    params = [w, b, *x.values()]

    def run(op):
        for p in params:
            p.grad = None
        y = forward[op]()
        y.backward(None if y.ndim == 0 else np.ones(y.shape, np.float32))
    ops = {op: (lambda op=op: run(op)) for op in forward}
    p = Tensor(data["adamw"].copy(), requires_grad=True)
    p.grad = Tensor(data["adamw"] * 0.01)
    ops["adamw"] = AdamW([p], lr=1e-3).step
    return ops


def kernel_ops(data, extra, variant: str) -> dict:
    """op -> forward+backward through the array kernels of one variant (attention: the fused op, that variant
    forced in this worker process)."""
    from tinygrad_like.fast.kernels import arrays as K
    os.environ["TINYGRAD_LIKE_KERNELS"] = variant
    attention = numpy_ops({"attention": data["attention"], "adamw": data["adamw"]}, extra)["attention"]
    g = {op: np.ones_like(a) for op, a in data.items()}
    w, b, targets = extra["w"], extra["b"], extra["targets"]
    g["swiglu"] = np.ones(data["swiglu"].shape[:-1] + (data["swiglu"].shape[-1] // 2,), data["swiglu"].dtype)
    scale = np.float32(1 / len(targets))

    def layernorm():
        y, xhat, rstd = K.layernorm_forward(data["layernorm"], w, b, 1e-5, variant)
        K.layernorm_backward(g["layernorm"], xhat, rstd, w, (True, True, True), variant)

    def rmsnorm():
        y, rstd = K.rmsnorm_forward(data["rmsnorm"], w, 1e-6, variant)
        K.rmsnorm_backward(g["rmsnorm"], data["rmsnorm"], rstd, w, variant)

    def cross_entropy():
        probs, losses = K.cross_entropy_forward(data["cross_entropy"], targets, 0.0, variant)
        losses.sum()
        K.cross_entropy_backward(probs, targets, 0.0, scale, variant)

    p, m, v = data["adamw"].copy(), np.zeros_like(data["adamw"]), np.zeros_like(data["adamw"])
    grad = data["adamw"] * 0.01
    ops = {
        "gelu": lambda: K.gelu_backward(g["gelu"], data["gelu"], variant) + K.gelu_forward(data["gelu"], variant)[:1],
        "gelu_erf": lambda: (K.gelu_erf_forward(data["gelu_erf"], variant),
                             K.gelu_erf_backward(g["gelu_erf"], data["gelu_erf"], variant)),
        "silu": lambda: (K.silu_forward(data["silu"], variant), K.silu_backward(g["silu"], data["silu"], variant)),
        "swiglu": lambda: (K.swiglu_forward(data["swiglu"], variant),
                           K.swiglu_backward(g["swiglu"], data["swiglu"], variant)),
        "layernorm": layernorm, "rmsnorm": rmsnorm,
        "softmax": lambda: K.softmax_backward(g["softmax"], K.softmax_forward(data["softmax"], variant), variant),
        "masked_softmax": lambda: K.softmax_backward(g["masked_softmax"], K.softmax_forward(data["masked_softmax"],
                                                                                          variant), variant),
        "log_softmax": lambda: K.log_softmax_backward(g["log_softmax"], K.log_softmax_forward(data["log_softmax"],
                                                                                                variant), variant),
        "cross_entropy": cross_entropy, "attention": attention,
        "adamw": lambda: K.adam_update(p, grad, m, v, 1e-3, 0.9, 0.999, 1e-8, 0.01, True, 10, variant),
    }
    return {op: fn for op, fn in ops.items() if variant != "c" or op in C_OPS}


def torch_ops(data, extra, threads: int) -> dict:
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(threads)
    x = {op: torch.tensor(a, requires_grad=True) for op, a in data.items() if op != "adamw"}
    w, b = (torch.tensor(extra[k], requires_grad=True) for k in "wb")
    targets = torch.tensor(extra["targets"])

    def swiglu():
        gate, up = x["swiglu"].chunk(2, -1)
        return F.silu(gate) * up
    forward = {
        "gelu": lambda: F.gelu(x["gelu"], approximate="tanh"), "gelu_erf": lambda: F.gelu(x["gelu_erf"]),
        "silu": lambda: F.silu(x["silu"]), "swiglu": swiglu,
        "layernorm": lambda: F.layer_norm(x["layernorm"], (C,), w, b),
        "rmsnorm": lambda: F.rms_norm(x["rmsnorm"], (C,), w, 1e-6),
        "softmax": lambda: torch.softmax(x["softmax"], -1),
        "masked_softmax": lambda: torch.softmax(x["masked_softmax"], -1),
        "log_softmax": lambda: torch.log_softmax(x["log_softmax"], -1),
        "cross_entropy": lambda: F.cross_entropy(x["cross_entropy"], targets),
        "attention": lambda: attention(x["attention"]),
    }
    params = [w, b, *x.values()]

    def attention(qkv):
        q, k, v = (t.view(B, T, N_HEAD, C // N_HEAD).transpose(1, 2) for t in qkv.split(C, dim=2))
        return F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, C)

    def run(op):
        for p in params:
            p.grad = None
        y = forward[op]()
        y.backward(None if y.ndim == 0 else torch.ones_like(y))
    ops = {op: (lambda op=op: run(op)) for op in forward}
    p = torch.tensor(data["adamw"].copy(), requires_grad=True)
    p.grad = torch.tensor(data["adamw"] * 0.01)
    ops["adamw"] = torch.optim.AdamW([p], lr=1e-3).step
    return ops


def c_available() -> bool:
    """Whether the C kernels build here (a C compiler and glibc's vector math); says why not when they do not."""
    from tinygrad_like.fast.kernels import c_build
    if c_build.library() is None:
        print(f"no C kernels here: {c_build.reason()}")
    return c_build.library() is not None


def run_worker(args) -> None:
    rng = np.random.default_rng(0)
    data, extra = inputs(rng)
    if args.worker == "torch":
        ops = torch_ops(data, extra, args.threads)
    elif args.worker in ("numpy", "fast"):
        if args.worker == "numpy":
            os.environ["TINYGRAD_LIKE_KERNELS"] = "off"
        ops = numpy_ops(data, extra)
    else:
        ops = kernel_ops(data, extra, args.worker)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    result = {op: median_seconds(fn, args.op_repeats, warmup=3, clock=clock) * 1e6 for op, fn in ops.items()}
    print("RESULT " + json.dumps(result))


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--op-repeats", type=int, default=20)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="wall time, or the worker's CPU time (steadier on a busy machine; with --threads 1 only)")
    ap.add_argument("--kinds", default=",".join(KINDS), help="comma-separated subset of " + ", ".join(KINDS))
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.clock == "cpu" and args.threads != 1:
        ap.error("--clock cpu counts the CPU time of every thread: use it with --threads 1")
    if args.worker:
        return run_worker(args)
    print(machine_line())
    print("uptime:", os.popen("uptime").read().strip())
    kinds = [k for k in args.kinds.split(",") if (k != "torch" or torch_available()) and (k != "c" or c_available())]
    runs = {k: [] for k in kinds}
    for _ in range(args.rounds):
        for kind in kinds:
            cmd = [sys.executable, __file__, "--worker", kind, "--threads", str(args.threads),
                   "--op-repeats", str(args.op_repeats), "--clock", args.clock]
            runs[kind].append(worker_result(cmd, kind, args.threads))
    med = {k: {op: statistics.median(r[op] for r in rs) for op in rs[0]} for k, rs in runs.items()}
    print(f"\nforward+backward (adamw: one step), {args.threads} threads, ms, median of {args.rounds} alternated "
          f"processes x {args.op_repeats} runs ({args.clock} clock); ratio: the fastest of ours / PyTorch")
    print(f"  {'op':14s} {'shape':16s} " + " ".join(f"{k:>8s}" for k in kinds) + f" {'ratio':>6s}")
    rows = {}
    for op, shape in SHAPES.items():
        times = {k: med[k].get(op) for k in kinds}
        ours = [t for k, t in times.items() if k != "torch" and t is not None]
        ratio = min(ours) / times["torch"] if times.get("torch") else math.nan
        rows[op] = {k: (None if t is None else t / 1e3) for k, t in times.items()}
        cells = " ".join(f"{t / 1e3:8.3f}" if t is not None else f"{'-':>8s}" for t in times.values())
        print(f"  {op:14s} {str(shape):16s} {cells} {ratio:6.2f}")
    print("uptime:", os.popen("uptime").read().strip())
    return rows


if __name__ == "__main__":
    record.run_both_clocks("bench_kernels", main, sys.argv[1:])
