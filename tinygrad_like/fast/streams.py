"""PyTorch's bernoulli draw (dropout's mask on tinygrad_like.torch) in compiled passes, for
pytorch_streams/generator.py's `keep_below`, registered with dispatch as "keep_below".

The plain draw asks numpy's MT19937 for 2n words (one call through a function pointer per word), pairs
them into 53-bit integers k and compares k with the threshold, in five numpy passes. Here numba runs the
twister itself on numpy's own state (its 624 words and the position of the next one), writing the words
into a buffer, then pairs and compares them in a second pass (each draw by itself: a large draw's pairs in
pieces on the thread pool, fast/elementwise.py): the same words, so the same mask, bit for bit, and the
stream left where the plain draw leaves it (tests/test_torch_generator.py).

numpy's state is read and written in place, through the address numpy gives (`bits.ctypes.state_address`,
a C struct of the 624 uint32 words, then the position as a C int), under the bit generator's lock. That
layout is numpy's, not a promise: `_layout_holds` checks it once against `bits.state` (numpy's public
copy); where it does not hold, the words and position go through `bits.state` instead, a copy each way.

Runs when the fast kernels do (numba imports, TINYGRAD_LIKE_KERNELS is not off: `kernels.ready`, which
compiles or loads every kernel at first use, these two with them, and says so) and the draw is large
enough to pay for a compiled call; otherwise the plain draw runs.
"""
from __future__ import annotations

import ctypes
import functools
import sys

import numpy as np

from tinygrad_like.fast import elementwise
from tinygrad_like.fast.kernels import ready
from tinygrad_like.pytorch_streams.generator import keep_below as plain_keep_below

MIN_DRAWS = 512         # below this many draws, the plain one costs less than a compiled call
WORDS = 624


def keep_below(bits: np.random.MT19937, threshold: int, n: int) -> np.ndarray:
    """generator.keep_below(bits, threshold, n), compiled when the kernels run, else the plain one."""
    if n < MIN_DRAWS or not 0 <= threshold <= 2 ** 53 or sys.byteorder != "little" or not ready(np.float32):
        return plain_keep_below(bits, threshold, n)
    from tinygrad_like.fast.kernels.numba_twister import pairs_below, words_into  # loads numba: only now
    words = np.empty(2 * n, dtype=np.uint32)
    with bits.lock:
        if _layout_holds():
            key, position = _state_in_place(bits)
            position[0] = words_into(key, int(position[0]), words)
        else:
            state = bits.state["state"]
            key = np.array(state["key"], dtype=np.uint32)
            at = words_into(key, int(state["pos"]), words)
            bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": at}}
    def below(outs, ins):                                # a little-endian machine's pairs: see pairs_below
        pairs_below(ins[0], threshold, outs[0])
    return elementwise.share(below, (n,), bool, words.view(np.uint64))   # large draws in pieces on the pool


def _state_in_place(bits: np.random.MT19937) -> tuple:
    """numpy arrays over the MT19937's own C state: its 624 words (uint32) and the position (one C int)."""
    address = bits.ctypes.state_address
    key = np.ctypeslib.as_array((ctypes.c_uint32 * WORDS).from_address(address))
    position = np.ctypeslib.as_array((ctypes.c_int * 1).from_address(address + WORDS * 4))
    return key, position


@functools.lru_cache(maxsize=1)
def _layout_holds() -> bool:
    """Whether _state_in_place reads what bits.state says, on a bit generator put in a known state."""
    bits = np.random.MT19937()
    key = np.arange(1, WORDS + 1, dtype=np.uint32) * np.uint32(2654435761)
    bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": 311}}
    seen_key, seen_position = _state_in_place(bits)
    return bool((seen_key == key).all() and seen_position[0] == 311)
