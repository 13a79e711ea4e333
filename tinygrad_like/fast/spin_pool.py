"""Products on the pool's threads handed over in C: kernels/spin_pool.c, built at first use, and numpy's own BLAS.

The Python pool (pool.py) hands work to a thread asleep on a lock: the hand-over wakes a thread (and, on a
machine whose idle cores halt, a core) and passes the GIL to it and back, which costs more than a
second core gives on a product of a few million flops. This pool's workers are C threads that call
numpy's OpenBLAS gemm directly, with no Python and no GIL, and after each product spin for SPIN_NS
before they sleep (spin_pool.c says what that trades); the caller is one ctypes call, which lets go of
the GIL, posts the workers' rows, computes its own and waits for theirs. So a product of a training step
can be shared out from MIN_FLOPS on, far below pool.MIN_FLOPS.

`matmul(a, b, add)` (rows of a shared out), `matmul_pair(a1, b1, a2, b2)` (two products at once) and
`matmul_stacked(a, b)` (the entries of stacks shared out) give numpy's `a @ b`, or None when they cannot
take the product (the caller then takes the Python pool's path): the pool is unavailable (`reason()` says
why), the matrices are not of one dtype, float32 or float64, laid out for BLAS (unit steps along rows or
columns), or the product is one numpy computes another way (one row or one column: gemv; a @ aᵀ of one
buffer: syrk). Stacks get numpy's bits (the same gemm calls, entry by entry); a block of rows can get
other kernels from OpenBLAS than the whole product, so `matmul` is within the gemm bound of numpy's,
often not bit for bit in float64 (tests/test_spin_pool.py). Available means: a C compiler, numpy's BLAS is an ILP64
OpenBLAS exporting cblas sgemm and dgemm (numpy's wheels: scipy-openblas64), and numpy's array layout
is the one spin_pool.c reads. TINYGRAD_LIKE_SPIN_POOL=off turns it off.

The same threads run compiled kernels of the form kernel(arguments..., lo, hi) (rows.c's and attention.c's:
GELU, softmax, cross-entropy, ...): `run_kernel` hands spin_pool.c a kernel's address and its arguments,
and the caller and the workers take runs of rows lo..hi in turn, in one ctypes call (kernels/arrays.py's
`share` routes them here).
"""
from __future__ import annotations

import ctypes
import functools
import os
from pathlib import Path

import numpy as np
from threadpoolctl import ThreadpoolController

from tinygrad_like.fast.kernels import c_build

SOURCE = Path(__file__).with_name("kernels") / "spin_pool.c"
FLAGS = ["-O2", "-pthread", "-shared", "-fPIC"]
# How long a worker spins for the next product before it sleeps (TINYGRAD_LIKE_SPIN_US overrides it):
# long enough to span the small ops between a training step's products, so that a product rarely finds
# its worker asleep (a thread and, on a VM, a halted core to wake), short enough that a process gone
# idle gives its core back at once. It trades a second core kept busy between products, as PyTorch's
# OpenMP threads keep theirs, for that wake-up. The Python pool's threads (attention's chunks, GELU's
# runs) want that core too: the Python pool puts spinning workers to sleep before it starts (park()).
SPIN_NS = 2_000_000
MIN_FLOPS = 2 << 20  # products from here on are shared out by this pool (benchmarks/bench_threads.py)
GEMM_NAMES = ("scipy_cblas_{}gemm64_", "cblas_{}gemm64_", "cblas_{}gemm_64")   # ILP64 OpenBLAS spellings
_failure: str | None = None
_workers = -1  # the worker count spin_pool.c was configured with (-1: not yet)


def _blas_gemms() -> tuple[int, int]:
    """The addresses of sgemm and dgemm in the OpenBLAS numpy calls (found through threadpoolctl among the
    libraries this process has loaded, numpy's own first); OSError when there is none with 64-bit integers."""
    try:
        config = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    except (TypeError, KeyError) as error:                               # an older numpy: no such config
        raise OSError(f"numpy does not say which BLAS it uses ({type(error).__name__}: {error})") from error
    name, built = str(config.get("name", "")), str(config.get("openblas configuration", "no OpenBLAS configuration"))
    if "openblas" not in name.lower() or "USE64BITINT" not in built:
        raise OSError(f"numpy's BLAS is {name!r} ({built}), not an OpenBLAS with 64-bit integers")
    numpy_dir = str(Path(np.__file__).parent.parent)
    paths = sorted((c.filepath for c in ThreadpoolController().select(internal_api="openblas").lib_controllers),
                   key=lambda path: not path.startswith(numpy_dir))
    for path in paths:
        lib = ctypes.CDLL(path)
        for name in GEMM_NAMES:
            if hasattr(lib, name.format("s")) and hasattr(lib, name.format("d")):
                address = lambda fn: ctypes.cast(fn, ctypes.c_void_p).value
                return address(getattr(lib, name.format("s"))), address(getattr(lib, name.format("d")))
    raise OSError(f"no ILP64 cblas sgemm/dgemm ({', '.join(n.format('s') for n in GEMM_NAMES)}) in the OpenBLAS "
                  f"libraries loaded: {paths or 'none found'}")


@functools.lru_cache(maxsize=1)
def library():
    """spin_pool.c's loaded library with numpy's gemms, or None (then reason() says why)."""
    global _failure
    if os.environ.get("TINYGRAD_LIKE_SPIN_POOL", "").strip().lower() in ("0", "off", "no", "false"):
        _failure = "turned off by TINYGRAD_LIKE_SPIN_POOL"
        return None
    lib, _failure = c_build.built("spin_pool", [SOURCE], FLAGS)
    if lib is None:
        return None
    try:
        gemms = _blas_gemms()
    except OSError as error:
        _failure = str(error)
        return None
    obj, i64 = ctypes.py_object, ctypes.c_int64
    lib.spin_configure.argtypes = [i64, i64, ctypes.c_void_p, ctypes.c_void_p]
    lib.spin_configure.restype = None
    lib.spin_park.argtypes, lib.spin_park.restype = [], None
    lib.spin_layout_ok.argtypes = [obj, i64, i64, i64, i64]
    lib.spin_matmul.argtypes = [obj, obj, obj, ctypes.c_void_p, i64]   # the bias: id() or None
    lib.spin_matmul_pair.argtypes = [obj] * 6 + [i64]
    lib.spin_matmul_stacked.argtypes = [obj, obj, obj, i64]
    lib.spin_signature.argtypes = [ctypes.c_char_p]
    lib.spin_kernel.argtypes = [ctypes.c_void_p, i64, i64, ctypes.c_void_p, ctypes.c_void_p, i64, i64, i64, i64]
    for fn in (lib.spin_layout_ok, lib.spin_matmul, lib.spin_matmul_pair, lib.spin_matmul_stacked, lib.spin_sleeping,
               lib.spin_alive, lib.spin_signature, lib.spin_kernel):
        fn.restype = i64
    probe = np.empty((3, 5))[::2]                                       # 2 rows 80 bytes apart
    if not lib.spin_layout_ok(probe, probe.ctypes.data, 2, 2, 80):
        _failure = "numpy's array layout (PyArrayObject_fields) is not the one spin_pool.c reads"
        return None
    lib.gemms = gemms
    return lib


def reason() -> str | None:
    """Why library() is None, once it has been asked; None when it loaded."""
    return _failure


def configured() -> int:
    """The worker count spin_pool.c was last configured with; -1 before the first product it took."""
    return _workers


def spin_ns() -> int:
    """SPIN_NS, or the environment variable TINYGRAD_LIKE_SPIN_US (microseconds) when set."""
    value = os.environ.get("TINYGRAD_LIKE_SPIN_US")
    return SPIN_NS if value is None else int(float(value) * 1000)


def configure(workers: int) -> None:
    """Run products on `workers` C threads beside the caller (0: inline, no thread), made at the next product."""
    global _workers
    lib = library()
    if lib is not None:
        lib.spin_configure(workers, spin_ns(), *lib.gemms)
        _workers = workers


FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _fits(a, b) -> bool:
    """Both 2-D of one float dtype, a with at least 2 rows, b with at least 2 columns, nothing empty."""
    return (a.ndim == 2 and b.ndim == 2 and a.dtype == b.dtype and a.dtype in FLOATS and a.shape[1] == b.shape[0]
            and a.shape[0] >= 2 and b.shape[1] >= 2 and a.shape[1] >= 1)


def matmul(a: np.ndarray, b: np.ndarray, add: np.ndarray | None = None, workers: int = 1):
    """a @ b (+ add, a row of b's columns in a's dtype) for a (m, k) and b (k, n), the rows of a shared out
    among the caller and `workers` C threads; None when this pool cannot take it (module docstring)."""
    lib = library()
    if lib is None or not _fits(a, b):
        return None
    if add is not None and (add.shape != (b.shape[1],) or add.dtype != a.dtype or add.strides[0] != a.itemsize):
        return None
    if workers != _workers:
        configure(workers)
    out = np.empty((a.shape[0], b.shape[1]), a.dtype)
    return out if lib.spin_matmul(a, b, out, None if add is None else id(add), a.itemsize) >= 0 else None


def matmul_stacked(a: np.ndarray, b: np.ndarray, workers: int = 1, out: np.ndarray | None = None):
    """a @ b for stacks a (..., m, k) of one or two batch axes and b (..., k, n) of the same batch axes, or
    b (k, n), the entries shared out among the caller and `workers` C threads, one gemm per entry as
    numpy's matmul makes them; written into `out` when given (of the result's shape and dtype, unit steps
    along its rows: it may be a view), else into a new array; None (nothing written) when this pool
    cannot take it (module docstring)."""
    lib = library()
    same_stacks = b.ndim == 2 or a.shape[:-2] == b.shape[:-2]
    if (lib is None or a.ndim not in (3, 4) or b.ndim not in (2, a.ndim) or not same_stacks or a.size == 0
            or not _fits(a[(0,) * (a.ndim - 2)], b[(0,) * (b.ndim - 2)])):                 # the first entries
        return None
    shape = a.shape[:-1] + b.shape[-1:]
    if out is not None and (out.shape != shape or out.dtype != a.dtype or np.may_share_memory(out, a)
                            or np.may_share_memory(out, b)):                  # numpy buffers an overlap; not here
        return None
    if workers != _workers:
        configure(workers)
    out = np.empty(shape, a.dtype) if out is None else out
    return out if lib.spin_matmul_stacked(a, b, out, a.itemsize) >= 0 else None


def matmul_pair(a1, b1, a2, b2, workers: int = 1):
    """(a1 @ b1, a2 @ b2), the first on the caller and the second on a C thread at the same time; None when
    this pool cannot take both (module docstring)."""
    lib = library()
    if lib is None or not (_fits(a1, b1) and _fits(a2, b2) and a1.dtype == a2.dtype):
        return None
    if workers != _workers:
        configure(workers)
    out1, out2 = np.empty((a1.shape[0], b1.shape[1]), a1.dtype), np.empty((a2.shape[0], b2.shape[1]), a2.dtype)
    return (out1, out2) if lib.spin_matmul_pair(a1, b1, out1, a2, b2, out2, a1.itemsize) >= 0 else None


MAX_WORDS, MAX_SCALARS = 8, 3   # spin_pool.c's room for a kernel's arguments


@functools.lru_cache(maxsize=None)
def signature(kinds: str) -> int:
    """The number spin_pool.c knows a kernel's parameter list by, before (lo, hi): `kinds` one letter each,
    'p' a pointer, 'l' a long, 's' a scalar of the arrays' dtype; -1 when it does not know the list (or
    there is no library)."""
    lib = library()
    return -1 if lib is None else lib.spin_signature(kinds.encode())


def run_kernel(address: int, kinds: str, itemsize: int, args, lo: int, hi: int, unit: int, runs: int,
               workers: int = 1) -> int | None:
    """The compiled kernel at `address`, fn(*args, lo, hi), over rows (or elements) lo..hi cut into `runs`
    runs at multiples of `unit` (counted from 0), on the caller and `workers` C threads, each taking the
    next run as it is free; all inside one ctypes call, without the GIL. `args` are as `kinds` says
    (`signature`): addresses (None for NULL) and integers, and scalars of the arrays' float type (float32
    for itemsize 4, float64 for 8). Returns how many C threads took part (0: the caller ran every run),
    or None (nothing done) when this pool cannot call it."""
    lib = library()
    sig = signature(kinds)
    words = [a or 0 for k, a in zip(kinds, args) if k != "s"]
    scalars = [float(a) for k, a in zip(kinds, args) if k == "s"]
    if lib is None or sig < 0 or len(words) > MAX_WORDS or len(scalars) > MAX_SCALARS:
        return None
    if workers != _workers:
        configure(workers)
    word_block = (ctypes.c_int64 * MAX_WORDS)(*words)
    scalar_block = (ctypes.c_double * MAX_SCALARS)(*scalars)
    helped = lib.spin_kernel(address, sig, itemsize, word_block, scalar_block, lo, hi, unit, runs)
    return None if helped < 0 else helped


def park() -> None:
    """Put spinning C threads to sleep until the next product: the Python pool's threads are about to
    want the cores they spin on."""
    lib = library()
    if _workers > 0 and lib is not None:          # None: turned off since it was configured (tests do)
        lib.spin_park()


def sleeping() -> int:
    """How many of the C threads are asleep now (0 without the library)."""
    lib = library()
    return 0 if lib is None else lib.spin_sleeping()


def alive() -> int:
    """How many C threads there are now (0 without the library)."""
    lib = library()
    return 0 if lib is None else lib.spin_alive()
