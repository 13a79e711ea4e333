"""The Mersenne Twister MT19937 in numba, for fast/streams.py: bernoulli's draw from PyTorch's stream in two
compiled passes (the words into a buffer, block by block; then each pair of words as a 53-bit integer
compared with the threshold).

Words are uint32 and so are the constants (numpy's scalars: a plain int would widen every step to
int64, which the compiler does not turn into vector instructions). Compiled at first use and cached on
disk (cache=True).
"""
from __future__ import annotations

import numpy as np
from numba import njit

WORDS, SHIFT = 624, 397
_U = np.uint32
UPPER, LOWER, MATRIX = _U(0x80000000), _U(0x7FFFFFFF), _U(0x9908B0DF)
TEMPER_B, TEMPER_C = _U(0x9D2C5680), _U(0xEFC60000)
ZERO, ONE = _U(0), _U(1)
LOW21, SHIFT32 = np.uint64((1 << 21) - 1), np.uint64(32)


@njit(nogil=True, cache=True)
def twist(key):
    """The next 624 words of the state, in place: word i from words i, i + 1 and i + 397 (mod 624), in
    three loops so that no index needs the modulo (the last word wraps to word 0)."""
    for i in range(WORDS - SHIFT):
        key[i] = mix(key[i], key[i + 1], key[i + SHIFT])
    for i in range(WORDS - SHIFT, WORDS - 1):
        key[i] = mix(key[i], key[i + 1], key[i + SHIFT - WORDS])
    key[WORDS - 1] = mix(key[WORDS - 1], key[0], key[SHIFT - 1])


@njit(nogil=True, cache=True)
def mix(word, following, far):
    """One word of the twist: the top bit of `word` and the low 31 of `following`, shifted right once,
    XORed with `far` and, when the bit shifted out is 1, with the matrix constant."""
    y = (word & UPPER) | (following & LOWER)
    return far ^ (y >> ONE) ^ ((ZERO - (y & ONE)) & MATRIX)


@njit(nogil=True, cache=True)
def temper(y):
    """A state word as the twister hands it out."""
    y ^= y >> _U(11)
    y ^= (y << _U(7)) & TEMPER_B
    y ^= (y << _U(15)) & TEMPER_C
    return y ^ (y >> _U(18))


@njit(nogil=True, cache=True)
def words_into(key, position, out):
    """The next out.size words of the stream (tempered) into `out` (uint32), from the state `key` (uint32,
    624 words, changed in place) at `position` (of the next word; 624: twist first); returns the new
    position. The rest of the current block, then whole blocks, then the start of one more."""
    n = out.size
    first = min(WORDS - position, n)
    for j in range(first):
        out[j] = temper(key[position + j])
    done = first
    while n - done >= WORDS:
        twist(key)
        for j in range(WORDS):                      # a fixed count: the compiler makes it vector instructions
            out[done + j] = temper(key[j])
        done += WORDS
    if done == n:
        return position + first if first == n else WORDS
    twist(key)
    for j in range(n - done):
        out[done + j] = temper(key[j])
    return n - done


@njit(nogil=True, cache=True)
def pairs_below(pairs, threshold, out):
    """out[i] = k_i < threshold, k_i the 53-bit integer of draw i: its two words (uint32, the first one
    high) read as one little-endian uint64 `pairs[i]` hold the first word in the low half, so k_i is
    the low half's low 21 bits shifted up 32, above the high half."""
    for i in range(out.size):
        u = pairs[i]
        out[i] = np.int64(((u & LOW21) << SHIFT32) | (u >> SHIFT32)) < threshold
