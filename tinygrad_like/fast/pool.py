"""The engine's one pool of threads, for numpy work that lets go of the GIL (BLAS products, attention tiles).

`run(task, items)` calls `task(item)` for every item, on `get_num_threads()` threads; each task writes only its
own part of the output. `matmul(a, b)` is `a @ b` with the rows of `a` shared out that way (Linear, Matmul);
attention shares out chunks of batch entries (flash.py), GELU runs of its cache-sized pieces
(`run_in_runs`), large elementwise ops pieces of their result (elementwise.py); `each(jobs, flops)` runs
independent jobs side by side (Linear's dx and dW products).
The pool's threads sleep on a lock each between runs (`_Worker`). Products have a second pool
beside this one (spin_pool.py): C threads that take rows of a product without Python and the GIL,
and spin a while between products before they sleep, so that handing work over costs little enough to
share out products far smaller than MIN_FLOPS; this pool is the plain path and the fallback.

While the pool has more than one thread, numpy's BLAS is held to one thread (threadpoolctl), so the pool is
the only source of threads: BLAS's own threads would otherwise stay awake between products, spinning on the
cores the pool wants (benchmarks/bench_threads.py measures both).

The thread count, as PyTorch picks its own: `tinygrad_like.set_num_threads(n)` when called, else the
environment variable TINYGRAD_LIKE_NUM_THREADS, else every core this process may run on (its CPU affinity).
Importing changes nothing: the count is fixed, and BLAS held to one thread, by the first op that can share
out work (a product, attention, GELU: `chosen()`). With 1 thread, everything runs inline on the calling
thread and BLAS keeps the threads it has. A job smaller than MIN_BYTES of attention scores, or MIN_FLOPS of a
product, gets one thread whatever the count (`threads_for`): handing items to a thread and back, and the GIL
passing between the two, then costs more than the second core gives.
"""
from __future__ import annotations

import math
import os
import threading

import numpy as np
from threadpoolctl import threadpool_limits

from tinygrad_like.fast import spin_pool
from tinygrad_like.fast.memory import tune_malloc_by_default


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, where the OS tells), else the machine's."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _default_threads() -> int:
    """TINYGRAD_LIKE_NUM_THREADS when set, else every usable core."""
    value = os.environ.get("TINYGRAD_LIKE_NUM_THREADS")
    if value is None:
        return usable_cores()
    if not value.strip().isdigit() or int(value) < 1:
        raise ValueError(f"TINYGRAD_LIKE_NUM_THREADS must be a whole number >= 1, got {value!r}")
    return int(value)


_threads: int | None = None  # None until set_num_threads, or the first op that can share out work (chosen())
MIN_BYTES = 512 << 10   # attention scores below this run on one thread (benchmarks/bench_threads.py)
MIN_FLOPS = 34 << 20    # products below this run on one thread: waking a second thread costs more than it gives
CALL_FLOPS = 1 << 15     # a stack's product costs about this many flops more per entry (a gemm call each)
_workers: list = []  # the pool's threads beyond the caller's (_Worker), made on first use
_busy = threading.Lock()  # held while run() has the workers: a second caller (or a job) runs inline
_blas_hold = None  # threadpoolctl's limit holding BLAS to one thread while the pool has more
_sharing = False  # True while run() has handed items to the pool's threads (`sharing`)


def set_num_threads(n: int, allocator: bool = False) -> None:
    """Run shared-out numpy work (products, attention, GELU) on n threads; 1 runs it inline and leaves numpy's
    BLAS its own threads. Overrides TINYGRAD_LIKE_NUM_THREADS and the default (every usable core).
    allocator=True takes the default allocator setting too (memory.tune_malloc_by_default), which the first
    op that shares out work takes only when no count was set before it (chosen())."""
    global _threads, _blas_hold
    if int(n) < 1:
        raise ValueError(f"set_num_threads: need n >= 1, got {n}")
    if allocator:
        tune_malloc_by_default()
    if _workers and int(n) != _threads:               # a pool of the new size on next use
        with _busy:
            for worker in _workers:
                worker.stop()
            _workers.clear()
    if spin_pool.configured() not in (-1, int(n) - 1):  # the C threads too (none at 1)
        spin_pool.configure(int(n) - 1)
    if int(n) == 1 and _blas_hold is not None:        # BLAS back to the threads it had
        _blas_hold.restore_original_limits()
        _blas_hold = None
    _threads = int(n)
    if _threads > 1:
        _hold_blas()


def get_num_threads() -> int:
    """The pool's thread count: set_num_threads's, else the one the first op that shares out work takes."""
    return _default_threads() if _threads is None else _threads


def chosen() -> int:
    """The thread count, for an op that can share out work: the first such op fixes it (and holds BLAS to
    one thread if it is more than one) and takes the default allocator setting
    (memory.tune_malloc_by_default), unless set_num_threads did already."""
    if _threads is None:
        set_num_threads(_default_threads())
        tune_malloc_by_default()
    return _threads


def threads_for(nbytes: int) -> int:
    """The threads worth using on a job over `nbytes` bytes: all of them from MIN_BYTES on, else one."""
    n = chosen()
    return n if nbytes >= MIN_BYTES else 1


def run(task, items) -> None:
    """task(item) for each item, on the calling thread and the pool's: each takes the next item when it
    is done with one, so a thread slowed down (by another process on its core) takes fewer. While one
    run has the pool, another (from a second thread of the caller's, or from inside a task) runs its
    items inline."""
    items = list(items)
    n = min(chosen(), len(items))
    if n < 2 or not _busy.acquire(blocking=False):
        for item in items:
            task(item)
        return
    try:
        queue = iter(items)
        lock = threading.Lock()

        def work():
            while True:
                with lock:
                    item = next(queue, _DONE)
                if item is _DONE:
                    return
                task(item)

        global _sharing
        helpers = _start()[:n - 1]
        spin_pool.park()                                                        # the C threads' cores
        _sharing = True
        for worker in helpers:
            worker.begin(work)
        try:
            work()
        finally:
            errors = [worker.wait() for worker in helpers]                      # every helper done first
            _sharing = False
        for error in errors:
            if error is not None:
                raise error                                                     # a task's error, in the caller
    finally:
        _busy.release()


def sharing() -> bool:
    """Whether run() has the pool's threads at work now: a task of a run that shares out work itself
    (attention's products and kernels on the C threads) then does it on its own thread, the cores being
    taken."""
    return _sharing


class _Worker:
    """One thread of the pool, asleep on its `go` lock until run() hands it work (`begin`); it releases
    `done` when the work is over (`wait`). Two plain locks: a hand-over costs a lock release and a
    wake-up, without a future, a queue and a condition per task (concurrent.futures)."""

    def __init__(self, name: str):
        self.go, self.done = threading.Lock(), threading.Lock()
        self.go.acquire()
        self.done.acquire()
        self.work, self.error = None, None
        threading.Thread(target=self._loop, name=name, daemon=True).start()

    def _loop(self):
        while True:
            self.go.acquire()
            if self.work is None:                                               # stop()
                return
            try:
                self.work()
            except BaseException as error:                                      # handed to the caller by wait()
                self.error = error
            self.done.release()

    def begin(self, work) -> None:
        self.work = work
        self.go.release()

    def wait(self):
        """Until the work handed over is done; the error it raised, if any (else None)."""
        self.done.acquire()
        error, self.error = self.error, None
        return error

    def stop(self) -> None:
        self.work = None
        self.go.release()


_DONE = object()


def run_in_runs(task, items, nbytes: int) -> None:
    """task(run) for `items` cut into one run of neighbours per thread (threads_for(nbytes) of them): for
    many small items of equal cost, such as cache-sized pieces of one array, where handing them out one
    by one would cost more than it gives."""
    items = list(items)
    cuts = _cuts(len(items), min(threads_for(nbytes), len(items)))
    run(lambda i: task(items[cuts[i]:cuts[i + 1]]), range(len(cuts) - 1))


def _cuts(length: int, parts: int) -> list:
    """Where to cut `length` items into max(parts, 1) runs of neighbours, as even as can be: [0, ..., length]."""
    parts = max(parts, 1)
    return [length * i // parts for i in range(parts + 1)]


def _start() -> list:
    """The pool's threads beyond the caller's, made on first use."""
    _hold_blas()
    if not _workers:
        _workers.extend(_Worker(f"tinygrad_like_{i}") for i in range(_threads - 1))
    return _workers


def _forget_workers() -> None:
    """In a forked child: the parent's threads do not exist there; the pool makes its own on first use."""
    global _busy, _sharing
    _workers.clear()
    _busy = threading.Lock()
    _sharing = False


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_workers)


def _hold_blas() -> None:
    """Hold numpy's BLAS to one thread (once), the pool having more."""
    global _blas_hold
    if _blas_hold is None:
        _blas_hold = threadpool_limits(limits=1, user_api="blas")


def matmul(a: np.ndarray, b: np.ndarray, add: np.ndarray | None = None) -> np.ndarray:
    """a @ b (+ add) for a (..., n, k) and b (k, m), or stacks a (s, ..., n, k) and b (s, ..., k, m) of the same
    leading shape (attention's heads): numpy's product, with the rows of a (or, for two stacks, the stacks
    along their first axis) shared out among the pool's threads; each thread writes its own rows of the
    result, and adds `add` (a bias, broadcast over rows) to them while they are still in its cache,
    instead of one more pass over the whole output after. Rows of a product of at least
    spin_pool.MIN_FLOPS (a stack's entries, each counted CALL_FLOPS more) go to the C threads
    (spin_pool.py) when they can take it; else a product of at least MIN_FLOPS goes to this pool's
    threads. Other shapes: np.matmul, then the add."""
    n = chosen()
    flops = 2 * a.size * b.shape[-1] if a.ndim >= 2 and b.ndim >= 2 else 0   # 0: empty, np.matmul's
    if n > 1 and flops and flops >= spin_pool.MIN_FLOPS and b.ndim == 2 and (a.ndim == 2 or a.flags.c_contiguous):
        out = spin_pool.matmul(a.reshape(-1, a.shape[-1]), b, add, n - 1)       # C threads: None if it can't
        if out is not None:
            return out.reshape(*a.shape[:-1], b.shape[-1])
    if n > 1 and flops and a.ndim > 2 and (b.ndim == 2 or a.shape[:-2] == b.shape[:-2]) and \
            flops + CALL_FLOPS * math.prod(a.shape[:-2]) >= spin_pool.MIN_FLOPS:
        out = spin_pool.matmul_stacked(a, b, n - 1)                              # C threads: None if they can't
        if out is not None:
            if add is not None:
                np.add(out, add, out=out)
            return out
    if n > 1 and flops and flops >= MIN_FLOPS:
        if b.ndim == 2 and (a.ndim == 2 or a.flags.c_contiguous):         # rows of a (a view: no copy)
            rows = a.reshape(-1, a.shape[-1])
            out = np.empty((rows.shape[0], b.shape[-1]), np.result_type(a, b))
            _share_rows(rows, b, out, n, add)
            return out.reshape(*a.shape[:-1], b.shape[-1])
        if a.ndim == b.ndim >= 3 and a.shape[:-2] == b.shape[:-2] and a.shape[0] >= n:   # stacks of one shape
            out = np.empty(a.shape[:-1] + b.shape[-1:], np.result_type(a, b))
            _share_rows(a, b, out, n, add)
            return out
    out = np.matmul(a, b)
    if add is not None:
        np.add(out, add, out=out)
    return out


def stacked(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """np.matmul(a, b, out=out) for stacks of matrices (attention's heads, a (..., m, k)), with the entries
    shared out on the C threads (spin_pool.matmul_stacked: numpy's gemm calls, so numpy's bits) when the
    pool has more than one thread, run() is not sharing work out already (`sharing`) and the product has
    spin_pool.MIN_FLOPS, each entry counted CALL_FLOPS more; else numpy's."""
    n = chosen()
    if n > 1 and not _sharing and a.ndim >= 3 and b.ndim >= 2 and \
            2 * a.size * b.shape[-1] + CALL_FLOPS * math.prod(a.shape[:-2]) >= spin_pool.MIN_FLOPS:
        done = spin_pool.matmul_stacked(a, b, n - 1, out)
        if done is not None:
            return done
    return np.matmul(a, b, out=out)


def _share_rows(a, b, out, n: int, add=None) -> None:
    """out = a @ b (+ add), cut along the first axis of a (and of b and out when b is a stack) into n parts."""
    cuts, stacked = _cuts(len(a), n), b.ndim >= 3

    def part(i):
        lo, hi = cuts[i], cuts[i + 1]
        np.matmul(a[lo:hi], b[lo:hi] if stacked else b, out=out[lo:hi])
        if add is not None:
            np.add(out[lo:hi], add, out=out[lo:hi])
    run(part, range(n))


def products(pairs, flops: int):
    """[a @ b for a, b in pairs] for two independent products (a backward pass's dx and dW) at once, the
    first on the calling thread and the second on a C thread (spin_pool.matmul_pair), when the pool has
    more than one thread, together they do at least spin_pool.MIN_FLOPS and the C threads can take them;
    else None (then each() runs them on this pool's threads)."""
    n = chosen()
    if n < 2 or len(pairs) != 2 or flops < spin_pool.MIN_FLOPS:
        return None
    (a1, b1), (a2, b2) = pairs
    both = spin_pool.matmul_pair(a1, b1, a2, b2, n - 1)
    return None if both is None else list(both)


def each(jobs, flops: int) -> list:
    """[job() for job in jobs], the jobs shared out among the pool's threads, one job to a thread at a
    time, when together they do at least MIN_FLOPS (else in turn on the calling thread). For independent
    products (a backward pass's dx and dW): one hand-over for all of them, each product whole on one
    thread, where sharing out each one's rows would hand over once per product. A job that shares out
    work itself (matmul, run) does it inline, the pool being busy; BLAS is held to one thread already."""
    results = [None] * len(jobs)

    def task(i):
        results[i] = jobs[i]()
    if flops < MIN_FLOPS:
        for i in range(len(jobs)):
            task(i)
    else:
        run(task, range(len(jobs)))
    return results
