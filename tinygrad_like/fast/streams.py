"""PyTorch's bernoulli draw (dropout's mask on tinygrad_like.torch) in one compiled pass, for
pytorch_streams/generator.py's `keep_below`, registered with dispatch as "keep_below".

The plain draw asks numpy's MT19937 for 2n words (one call through a function pointer per word), pairs
them into 53-bit integers k and compares k with the threshold, in five numpy passes. Here numba runs the
twister itself on a copy of numpy's state (its 624 words and position), writing the words into a buffer,
then pairs and compares them in a second pass, and hands the state back: the same words, so the same mask,
bit for bit (tests/test_torch_generator.py).

The Mersenne Twister MT19937 (Matsumoto and Nishimura, ACM TOMACS 8, 1998): every 624 words the state
is regenerated ("twisted"), word i from words i, i + 1 and i + 397 (mod 624); each word handed out is
"tempered" by four shift-and-mask steps. numpy's MT19937 keeps the position of the next word in its
state and twists when that position reaches 624, as below.

Runs when the fast kernels do (numba imports, TINYGRAD_LIKE_KERNELS is not off) and the draw is large
enough to pay for the state's round trip; otherwise the plain draw runs.
"""
from __future__ import annotations

import sys

import numpy as np

from tinygrad_like.fast.kernels.switch import choice, numba_importable
from tinygrad_like.pytorch_streams.generator import keep_below as plain_keep_below

MIN_DRAWS = 4096        # below this, the state's round trip (two dicts, a 624-word copy) costs what it saves


def keep_below(bits: np.random.MT19937, threshold: int, n: int) -> np.ndarray:
    """generator.keep_below(bits, threshold, n), compiled when the kernels run, else the plain one."""
    if (n < MIN_DRAWS or not 0 <= threshold <= 2 ** 53 or sys.byteorder != "little" or choice() == "off"
            or not numba_importable()):
        return plain_keep_below(bits, threshold, n)
    from tinygrad_like.fast.kernels.numba_twister import pairs_below, words_into  # loads numba: only now
    state = bits.state["state"]
    key = np.array(state["key"], dtype=np.uint32)
    words = np.empty(2 * n, dtype=np.uint32)
    position = words_into(key, int(state["pos"]), words)
    bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": position}}
    out = np.empty(n, dtype=bool)
    pairs_below(words.view(np.uint64), threshold, out)   # needs a little-endian machine: see pairs_below
    return out
