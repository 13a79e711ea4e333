"""rows.c and attention.c (with exp.h) built with the system's C compiler at first use into one library, cached on disk,
and loaded through ctypes (`load` builds and loads other libraries the same way: spin_pool.c).

The library goes to a cache directory (TINYGRAD_LIKE_CACHE_DIR, else $XDG_CACHE_HOME/tinygrad_like or
~/.cache/tinygrad_like), named by a hash of everything that shapes it: the sources, the compiler's
version and flags, and this CPU (-march=native makes code for this CPU only, so a home directory shared
by two machines keeps one library per CPU). It is compiled to a temporary file in that directory and
renamed into place, so two processes starting at once never load a half-written library.

`library()` is the loaded library, or None where there is no compiler, the build fails or the C
library lacks the vector math functions (glibc's libmvec, 2.35 or later for tanh); then `reason()`
says why, and the kernels of numba_rows.py or numpy's bodies run instead.
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

SOURCES = [Path(__file__).with_name(name) for name in ("rows.c", "attention.c")]
HEADERS = [Path(__file__).with_name("exp.h")]   # included by both: part of what shapes the library
FLAGS = ["-O3", "-march=native", "-fno-math-errno", "-fopenmp-simd", "-shared", "-fPIC"]
LIBS = ["-lmvec", "-lm"]
_failure: str | None = None


def cache_dir() -> Path:
    if os.environ.get("TINYGRAD_LIKE_CACHE_DIR"):
        return Path(os.environ["TINYGRAD_LIKE_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "tinygrad_like"


def compiler() -> str | None:
    """The C compiler: $CC, else cc, gcc or clang on PATH; None when there is none."""
    names = [os.environ["CC"]] if os.environ.get("CC") else ["cc", "gcc", "clang"]
    return next((shutil.which(n) for n in names if shutil.which(n)), None)


def _cpu() -> str:
    """What -march=native depends on: the CPU's model and feature flags (/proc/cpuinfo's first CPU)."""
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read().split("\n\n")[0]
    except OSError:
        return os.uname().machine
    return "\n".join(ln for ln in text.splitlines() if ln.startswith(("model name", "flags", "Features")))


def library_path(cc: str, stem="kernels", sources=SOURCES, headers=HEADERS, flags=FLAGS, libs=LIBS) -> Path:
    """Where the library `stem` built from these sources with these flags lives in the cache."""
    version = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout
    shaped_by = [*(f.read_text() for f in sources + headers), version, " ".join(flags + libs), _cpu()]
    return cache_dir() / f"{stem}-{hashlib.sha256(chr(0).join(shaped_by).encode()).hexdigest()[:16]}.so"


def build(cc: str, target: Path, sources=SOURCES, flags=FLAGS, libs=LIBS) -> None:
    """Compile the sources into `target`, atomically (a temporary file in the same directory, renamed)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=target.parent)
    os.close(fd)
    try:
        done = subprocess.run([cc, *flags, *map(str, sources), "-o", tmp, *libs], capture_output=True, text=True)
        if done.returncode:
            raise OSError(f"{cc} failed on {' and '.join(f.name for f in sources)}: {done.stderr.strip()[-500:]}")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def library_built() -> bool:
    """Whether the C kernels' library for this machine is in the cache already (False without a compiler)."""
    cc = compiler()
    return cc is not None and library_path(cc).exists()


@functools.lru_cache(maxsize=1)
def library() -> ctypes.CDLL | None:
    """The C kernels' compiled library (built now if it is not in the cache yet), or None; see reason()."""
    global _failure
    cc = compiler()
    if cc is None:
        _failure = "no C compiler found (set CC, or install gcc)"
        return None
    try:
        return load(cc)
    except OSError as error:
        _failure = str(error)
        return None


def load(cc: str, stem="kernels", sources=SOURCES, headers=HEADERS, flags=FLAGS, libs=LIBS) -> ctypes.CDLL:
    """The library `stem` from the cache, built first if it is not there; OSError when that fails."""
    path = library_path(cc, stem, sources, headers, flags, libs)
    if not path.exists():
        build(cc, path, sources, flags, libs)
    return ctypes.CDLL(str(path))


def built(stem: str, sources: list, flags: list) -> tuple[ctypes.CDLL | None, str | None]:
    """(the library `stem` built from `sources` with `flags`, loaded from the cache when it is there, None),
    or (None, why it could not be built): the first step of each C file's own loader."""
    cc = compiler()
    if cc is None:
        return None, "no C compiler found (set CC, or install gcc)"
    try:
        return load(cc, stem, sources, [], flags, []), None
    except OSError as error:
        return None, str(error)


def reason() -> str | None:
    """Why library() is None, once it has been asked; None when the library loaded."""
    return _failure
