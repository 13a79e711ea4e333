"""A small pool of threads for numpy work that lets go of the GIL (BLAS matmuls, ufuncs over arrays).

`run(task, items)` calls `task(item)` for every item, on `get_num_threads()` threads. While the pool works,
BLAS is held to one thread (threadpoolctl), so that two levels of threads do not fight over the cores.
Each task must write only its own part of the output: here, one chunk of batch entries of attention.

The thread count: `tinygrad_like.set_num_threads(n)`, or the environment variable TINYGRAD_LIKE_NUM_THREADS
read at import; 1 by default (inline, no pool, BLAS left as it is). A job smaller than MIN_BYTES gets one
thread whatever the count (`threads_for`): handing items to a thread and back, and the GIL passing between
the two, then costs more than the second core gives.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor


def _threads_from_env() -> int:
    value = os.environ.get("TINYGRAD_LIKE_NUM_THREADS", "1")
    if not value.strip().isdigit() or int(value) < 1:
        raise ValueError(f"TINYGRAD_LIKE_NUM_THREADS must be a whole number >= 1, got {value!r}")
    return int(value)


_threads = _threads_from_env()
# Attention forward+backward, one thread vs two (2 cores, OpenBLAS 2 threads): scores of 64 KB (the tiny
# benchmark config) 0.34 vs 1.17 ms, 256 KB 0.74 vs 1.41 ms, 1 MB 4.5 vs 3.8 ms, 4 MB 11.6 vs 9.6 ms.
MIN_BYTES = 512 << 10
_executor: ThreadPoolExecutor | None = None
_blas = None  # threadpoolctl's controller, made on first use


def set_num_threads(n: int) -> None:
    """Run chunked numpy work (attention) on n threads; 1 runs it inline."""
    global _threads, _executor
    if int(n) < 1:
        raise ValueError(f"set_num_threads: need n >= 1, got {n}")
    if _executor is not None and int(n) != _threads:  # a pool of the new size on next use
        _executor.shutdown()
        _executor = None
    _threads = int(n)


def get_num_threads() -> int:
    return _threads


def threads_for(nbytes: int) -> int:
    """The threads worth using on a job over `nbytes` bytes: all of them from MIN_BYTES on, else one."""
    return _threads if nbytes >= MIN_BYTES else 1


def run(task, items) -> None:
    """task(item) for each item, on the calling thread and the pool's: each takes the next item when it
    is done with one, so a thread slowed down (by another process on its core) takes fewer."""
    global _executor, _blas
    items = list(items)
    n = min(_threads, len(items))
    if n < 2:
        for item in items:
            task(item)
        return
    if _executor is None:
        from threadpoolctl import ThreadpoolController
        _executor = ThreadPoolExecutor(_threads - 1, thread_name_prefix="tinygrad_like")
        _blas = _blas or ThreadpoolController()
    queue = iter(items)
    lock = threading.Lock()

    def work():
        while True:
            with lock:
                item = next(queue, _DONE)
            if item is _DONE:
                return
            task(item)

    with _blas.limit(limits=1, user_api="blas"):
        futures = [_executor.submit(work) for _ in range(n - 1)]
        try:
            work()
        finally:
            for future in futures:
                future.result()                                                 # re-raises a task's error


_DONE = object()
