"""PyTorch's bernoulli draw (dropout's mask on tinygrad_like.torch) compiled, for pytorch_streams/generator.py's
`keep_below` (the mask) and `keep_below_scaled` (dropout's noise: the scale where kept, else 0), registered with
dispatch under those names.

The plain draw asks numpy's MT19937 for 2n words (one call through a function pointer per word), pairs
them into 53-bit integers k and compares k with the threshold, in five numpy passes; dropout then makes
the noise from the mask in one more. Two compiled versions run the twister themselves on numpy's own state
(its 624 words and the position of the next one), so they hand out the same words, hence the same mask,
bit for bit, and leave the stream where the plain draw leaves it (tests/test_twister.py):
- kernels/twister.c (kept where it builds): one loop per block of 624 words that tempers, pairs, compares
  and writes the result (the mask, or the noise in float32 or float64), so the words never go to memory;
  built with the system's C compiler at first use, as rows.c is (kernels/c_build.py), into its own library;
- kernels/numba_twister.py (where there is no compiler, the build fails, or TINYGRAD_LIKE_KERNELS=numba):
  the words into a buffer, then the pairs compared in a second pass (a large draw's pairs in pieces on the
  thread pool, fast/elementwise.py), and the noise made from the mask in a third.

numpy's state is read and written in place, through the address numpy gives (`bits.ctypes.state_address`,
a C struct of the 624 uint32 words, then the position as a C int: the compiled draws take that address),
under the bit generator's lock. That
layout is numpy's, not a promise: `_layout_holds` checks it once against `bits.state` (numpy's public
copy); where it does not hold, the words and position go through `bits.state` instead, a copy each way.

Runs when the fast kernels do (numba imports, TINYGRAD_LIKE_KERNELS is not off) and the draw is large enough
to pay for a compiled call; otherwise the plain draw runs.
"""
from __future__ import annotations

import ctypes
import functools
import platform
import sys
from pathlib import Path

import numpy as np

from tinygrad_like.fast import elementwise
from tinygrad_like.fast.kernels import c_build, ready
from tinygrad_like.fast.kernels.switch import choice, numba_importable
from tinygrad_like.pytorch_streams.generator import keep_below as plain_keep_below
from tinygrad_like.pytorch_streams.generator import keep_below_scaled as plain_keep_below_scaled

MIN_DRAWS = 512         # below this many draws, the plain one costs less than a compiled call
WORDS = 624
SOURCE = Path(__file__).with_name("kernels") / "twister.c"
# -mprefer-vector-width=512 (an x86 option): where the CPU has 512-bit vectors, the compiler uses them (it
# prefers 256 bits by default); twister.c's loops are plain integer work that gains from the width
WIDE = ["-mprefer-vector-width=512"] if platform.machine().lower() in ("x86_64", "amd64") else []
FLAGS = ["-O3", "-march=native", *WIDE, "-shared", "-fPIC"]
NOISE = {np.dtype(np.float32): ("twister_noise_f32", ctypes.c_float),
         np.dtype(np.float64): ("twister_noise_f64", ctypes.c_double)}
_failure: str | None = None


def keep_below(bits: np.random.MT19937, threshold: int, n: int) -> np.ndarray:
    """generator.keep_below(bits, threshold, n): the mask (bool, n), compiled when the kernels run."""
    way = variant(threshold, n)
    if way == "plain":
        return plain_keep_below(bits, threshold, n)
    if way == "c":
        out = np.empty(n, dtype=bool)
        fn = twister_library().twister_keep_below
        _advance(bits, lambda state: fn(state, threshold, out.ctypes.data, n))
        return out
    from tinygrad_like.fast.kernels.numba_twister import pairs_below, words_into  # loads numba: only now
    words = np.empty(2 * n, dtype=np.uint32)
    def draw(state):
        key, position = _state_arrays(state)
        position[0] = words_into(key, int(position[0]), words)
    _advance(bits, draw)
    def below(outs, ins):                                # a little-endian machine's pairs: see pairs_below
        pairs_below(ins[0], threshold, outs[0])
    return elementwise.share(below, (n,), bool, words.view(np.uint64))   # large draws in pieces on the pool


def keep_below_scaled(bits: np.random.MT19937, threshold: int, n: int, scale) -> np.ndarray:
    """generator.keep_below_scaled(bits, threshold, n, scale): dropout's noise (n, in scale's dtype), in
    twister.c's one pass for float32 and float64, else the mask (keep_below) scaled in one more pass."""
    dtype, way = np.asarray(scale).dtype, variant(threshold, n)
    if way == "plain":
        return plain_keep_below_scaled(bits, threshold, n, scale)
    if way != "c" or dtype not in NOISE:
        return elementwise.scaled(keep_below(bits, threshold, n), scale)
    name, c_scale = NOISE[dtype]
    out = np.empty(n, dtype=dtype)
    fn = getattr(twister_library(), name)
    _advance(bits, lambda state: fn(state, threshold, c_scale(scale), out.ctypes.data, n))
    return out


def variant(threshold: int, n: int) -> str:
    """Which draw runs: "c" (twister.c), "numba" (numba_twister.py) or "plain" (numpy's own twister)."""
    if n < MIN_DRAWS or not 0 <= threshold <= 2 ** 53 or sys.byteorder != "little":
        return "plain"
    forced = choice()
    if forced == "off" or not numba_importable():        # the fast extra's switch, as for every kernel
        return "plain"
    if forced != "numba" and twister_library() is not None:
        return "c"
    return "numba" if ready(np.float32) else "plain"


@functools.lru_cache(maxsize=1)
def twister_library() -> ctypes.CDLL | None:
    """twister.c's library (built now if it is not in the cache), or None: then reason() says why."""
    global _failure
    lib, _failure = c_build.built("twister", [SOURCE], FLAGS)
    if lib is None:
        return None
    pointer, count, word64 = ctypes.c_void_p, ctypes.c_long, ctypes.c_uint64
    lib.twister_keep_below.argtypes = [pointer, word64, pointer, count]
    for name, scale in NOISE.values():
        getattr(lib, name).argtypes = [pointer, word64, scale, pointer, count]
    lib.twister_words.argtypes = [pointer, pointer, count]
    for name in ("twister_keep_below", "twister_words", *(name for name, _ in NOISE.values())):
        getattr(lib, name).restype = None
    return lib


def reason() -> str | None:
    """Why twister_library() is None, once it has been asked; None when it loaded."""
    return _failure


def _advance(bits: np.random.MT19937, run) -> None:
    """run(address): a compiled draw on the bit generator's state at `address` (its 624 words as uint32, then
    the position as a C int, changed in place), under its lock: numpy's own where its layout is that one
    (_layout_holds), else a copy of numpy's public state laid out so, written back after."""
    with bits.lock:
        if _layout_holds():
            run(bits.ctypes.state_address)
            return
        state = bits.state["state"]
        copy = np.empty(WORDS + 1, dtype=np.uint32)                    # the words, then the position
        copy[:WORDS], copy[WORDS] = state["key"], state["pos"]
        run(copy.ctypes.data)
        bits.state = {"bit_generator": "MT19937", "state": {"key": copy[:WORDS], "pos": int(copy[WORDS])}}


def _state_arrays(address: int) -> tuple:
    """numpy arrays over the state at `address`: its 624 words (uint32) and the position (one C int)."""
    key = np.ctypeslib.as_array((ctypes.c_uint32 * WORDS).from_address(address))
    position = np.ctypeslib.as_array((ctypes.c_int * 1).from_address(address + WORDS * 4))
    return key, position


@functools.lru_cache(maxsize=1)
def _layout_holds() -> bool:
    """Whether numpy's state at bits.ctypes.state_address is laid out as _state_arrays reads it (the words,
    then the position), on a bit generator put in a known state (numpy's layout, not a promise)."""
    bits = np.random.MT19937()
    key = np.arange(1, WORDS + 1, dtype=np.uint32) * np.uint32(2654435761)
    bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": 311}}
    seen_key, seen_position = _state_arrays(bits.ctypes.state_address)
    return bool((seen_key == key).all() and seen_position[0] == 311)
