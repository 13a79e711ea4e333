"""One line that says what machine a benchmark ran on, printed first by every benchmark and kept in its
results file (benchmarks/record.py), so that figures from two machines can be compared (the same code
runs at different speeds on machines of the same kind: memory bandwidth per core, the BLAS build).

    python benchmarks/machine.py

    machine: CPU model, cores, L2 size | numpy version, BLAS name, version, kernels and threads
             | matmul f32 1024² in GFLOP/s | copy 64 MB in GB/s | tiny numpy call in us | load
    (one line; wrapped here. A machine busy with other jobs shows it in every figure and the load.)

The three measured figures bound most of what the benchmarks see: the float32 matmul peak of
numpy's BLAS (what Linear and attention can reach), memory bandwidth, as the bytes read plus written
per second by a copy of a 64 MB float32 array (what every elementwise pass over an array larger than
the cache can reach), and the median time of `a + b` on two 2x2 float32 arrays (the floor under the
per-op overhead of a Python autograd engine). The L2 size sets attention's tiles (tinygrad_like/fast/flash.py);
the load average says whether other processes shared the cores. OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE, which change
the kernels OpenBLAS picks, are shown when set.
"""
from __future__ import annotations

import contextlib
import functools
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ENV_SHOWN = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
             "TINYGRAD_LIKE_NUM_THREADS")


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def blas() -> str:
    """numpy's BLAS: name, version, kernel architecture and thread count (threadpoolctl when installed,
    else what numpy.show_config says about its build)."""
    try:
        from threadpoolctl import threadpool_info
        libs = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    except ImportError:
        libs = []
    if libs:
        return ", ".join(f"{i['internal_api']} {i['version']} "
                         f"({i.get('architecture') or '?'}, {i['num_threads']} threads)" for i in libs)
    try:
        info = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{info.get('name', '?')} {info.get('version', '?')} (threads unknown: no threadpoolctl)"
    except Exception:  # older numpy without mode="dicts"
        return "unknown (no threadpoolctl)"


def median_seconds(fn, repeats: int, warmup: int = 2, clock=time.perf_counter) -> float:
    """The median time of `repeats` calls of fn, after `warmup` untimed ones (clock: any seconds counter)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return statistics.median(times)


def matmul_gflops(n: int = 1024, repeats: int = 10, threads: int | None = None) -> float:
    """numpy's float32 (n, n) @ (n, n) in GFLOP/s (2n³ flops), median of `repeats`; on `threads` BLAS
    threads when given (threadpoolctl), whatever this process holds BLAS to (tinygrad_like's pool holds
    it to one thread while the pool has more)."""
    a = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
    out = np.empty_like(a)
    with blas_limit(threads):
        return 2 * n**3 / median_seconds(lambda: np.matmul(a, a, out=out), repeats) / 1e9


def blas_limit(threads: int | None):
    """A context holding numpy's BLAS to `threads` threads; no change for None or without threadpoolctl."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        threads = None
    return contextlib.nullcontext() if threads is None else threadpool_limits(threads, user_api="blas")


def copy_gbs(megabytes: int = 64, repeats: int = 7) -> float:
    """Bytes read plus bytes written per second, in GB/s, by np.copyto of a `megabytes` float32 array."""
    src = np.ones(megabytes * 2**20 // 4, np.float32)
    dst = np.zeros_like(src)
    return 2 * src.nbytes / median_seconds(lambda: np.copyto(dst, src), repeats) / 1e9


def tiny_call_us(repeats: int = 2000) -> float:
    """Median time of `a + b` on two 2x2 float32 arrays, in microseconds."""
    a = b = np.ones((2, 2), np.float32)
    return median_seconds(lambda: a + b, repeats, warmup=100) * 1e6


def blas_threads() -> int | None:
    """The thread count of numpy's BLAS in this process (None without threadpoolctl)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    return max((i["num_threads"] for i in threadpool_info() if i.get("user_api") == "blas"), default=None)


def thread_env(threads: int) -> dict:
    """The environment for a benchmark's worker process with `threads` threads for numpy's BLAS and
    tinygrad_like's own pool: read when numpy and tinygrad_like load, so set before the process starts."""
    env = dict(os.environ)
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "TINYGRAD_LIKE_NUM_THREADS"):
        env[name] = str(threads)
    return env


def worker_result(cmd: list, kind: str, threads: int) -> dict:
    """Run a benchmark's worker process (`cmd`, from the repository root, with `threads` threads) and
    return the JSON it printed on its "RESULT " line; its stderr in the error if it has none."""
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=root, env=thread_env(threads))
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("RESULT ")]
    if out.returncode or not line:
        raise RuntimeError(f"{kind} worker failed:\n{out.stderr[-3000:]}")
    return json.loads(line[0][len("RESULT "):])


def torch_available() -> bool:
    """Whether PyTorch imports, asked of a child process (importing it here would load its threads)."""
    return subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode == 0


def load_average() -> str:
    """The 1-minute load average before the benchmark starts: above ~0.5 per core, other processes
    share the cores and every figure after it is suspect (BLAS threads slow down most)."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:  # not on every platform
        return "unknown"


@functools.cache
def machine_line() -> str:
    """Measured once per process, at the first call (a benchmark's start), so the line a command prints
    first is the one its results file holds (benchmarks/record.py)."""
    from tinygrad_like.fast.flash import l2_bytes
    env = " | ".join(f"{k}={os.environ[k]}" for k in ENV_SHOWN if k in os.environ)
    load = load_average()
    return (f"machine: {cpu_model()}, {os.cpu_count()} cores, L2 {l2_bytes() >> 10} KiB | numpy {np.__version__}, "
            f"BLAS {blas()} | matmul f32 1024² {matmul_gflops():.0f} GFLOP/s | copy 64 MB {copy_gbs():.1f} GB/s "
            f"| tiny numpy call {tiny_call_us():.2f} us | load {load}" + (f" | {env}" if env else ""))


if __name__ == "__main__":
    print(machine_line())
